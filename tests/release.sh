#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian release as its users have it, for building hotstack against
# that release's kernel with that release's compiler: a minimal chroot
# (debootstrap minbase) with gcc, make, dkms and the release's
# linux-headers-amd64, cached beside the guest kernels. The headers of
# another release cannot be used with this machine's compiler (trixie's
# need gcc-14, sid's gcc-16, their objtool a newer glibc).
#
#   tests/release.sh RELEASE            make or refresh it; prints shell
#                                       assignments (see below)
#   tests/release.sh RELEASE run CMD... run CMD in it (as root, cwd /)
#
# RELEASE: trixie, sid, or the host's own release (bookworm): that one is
# the host itself (tests/deps.sh installs its headers), no chroot.
# Prints:
#   ROOT=<the chroot, empty for the host>  KVER=<its linux-headers-amd64's
#   kernel release>  KVER_ARM64=<the same of linux-headers-arm64:arm64, in a
#   chroot>  KREL=<the package version>  CC_VERSION=<gcc -dumpversion>
#
# The newest kernel of the release is picked up by itself: at most once a
# day (HOTSTACK_RELEASE_REFRESH=0 skips it, =1 forces it) the chroot's
# package lists are updated and its linux-headers-amd64 (and -rt-amd64)
# upgraded, so a new point release, or sid's next series, is what the
# next run builds against.
set -euo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
release=${1:?usage: release.sh RELEASE [run CMD...]}
shift
log() { echo "release.sh: $*" >&2; }

host=$(. /etc/os-release && echo "$VERSION_CODENAME")
case $release in
"$host") root= ;;
trixie | sid) root=$cache/release-$release ;;
*) log "unknown release '$release' (the host's $host, trixie, sid)"; exit 2 ;;
esac

# What a user of the release installs to build an out-of-tree module with
# DKMS (the README's steps), plus the PREEMPT_RT headers of the release
# and sparse (the module is sparse clean on every release's kernel).
pkgs=gcc,make,libc6-dev,libelf-dev,bc,kmod,dkms,linux-headers-amd64,linux-headers-rt-amd64,sparse
# The release's kernel source and what building it takes (the debug and
# arm64 guest kernels: tests/vm/kernel.sh).
pkgs=$pkgs,linux-source,bison,flex,libssl-dev,xz-utils,gcc-aarch64-linux-gnu

mkdir -p "$cache"
exec {lockfd}>"$cache/.lock-release-$release"
flock "$lockfd"

# inroot CMD...: CMD in the release, with /proc (objtool reads it) mounted
# in a mount namespace of its own, so nothing is left mounted.
inroot() {
	if [ -z "$root" ]; then
		"$@"
	else
		unshare --mount --propagation private -- /bin/sh -c \
			'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" \
			/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	fi
}

if [ -n "$root" ] && [ ! -e "$root/.done" ]; then
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 2>/dev/null | grep -m1 '/debian/$' || true)
	mirror=${mirror:-http://deb.debian.org/debian/}
	log "debootstrap $release from $mirror (minbase, $pkgs): about 5 minutes"
	for try in 1 2; do
		rm -rf "$root"
		# sid's and trixie's keys are in the host's debian-archive-keyring.
		debootstrap --variant=minbase --include="$pkgs" "$release" "$root" "$mirror" \
			>"$cache/release-$release.log" 2>&1 && break
		if [ $try = 2 ]; then
			tail -n 20 "$cache/release-$release.log" >&2
			log "debootstrap $release failed (see $cache/release-$release.log)"
			exit 1
		fi
	done
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/{doc,man,info,locale}
	cp /etc/resolv.conf "$root/etc/" 2>/dev/null || true
	touch "$root/.done"
fi

# kver: the kernel release of the installed linux-headers-amd64
# (6.12.117+deb13), from its dependency on linux-headers-KVER-amd64.
kver() {
	inroot dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		tr ',' '\n' | sed -n 's/^ *linux-headers-\([^ ]*\)-amd64 .*/\1/p' | head -n 1
}

# Debian's arm64 headers of the same kernel, unpacked beside the amd64
# ones: they share its linux-headers-KVER-common and linux-kbuild-KVER
# (installed), and cross-build with the release's gcc-aarch64-linux-gnu.
# Installing them as packages would replace the native gcc with the arm64
# one on some releases (trixie's depend on gcc-14:arm64).
arm64_headers() {
	local pkg
	pkg=linux-headers-$(kver)-arm64
	[ -e "$root/usr/src/$pkg/.config" ] && return 0
	rm -rf "$root/tmp/arm64-headers" && mkdir -p "$root/tmp/arm64-headers"
	inroot sh -c "cd /tmp/arm64-headers && apt-get download $pkg:arm64" &&
		dpkg-deb -x "$root"/tmp/arm64-headers/*.deb "$root/" &&
		rm -rf "$root/tmp/arm64-headers"
}

# The newest kernel of the release, at most once a day.
if [ -n "$root" ]; then
	# The host's apt settings (a proxy, a mirror's date checks) reach the
	# registry from here; the release's own files are kept.
	for conf in /etc/apt/apt.conf.d/*; do
		[ -e "$root$conf" ] || cp "$conf" "$root$conf"
	done
	last=$(cat "$root/.refreshed" 2>/dev/null || echo 0)
	refresh=${HOTSTACK_RELEASE_REFRESH:-}
	[ -z "$refresh" ] && [ $(($(date +%s) - last)) -gt 86400 ] && refresh=1
	if [ "$refresh" = 1 ]; then
		log "$release: newest linux-headers-amd64 and -arm64"
		if inroot dpkg --add-architecture arm64 &&
			inroot apt-get update -q >"$cache/release-$release-update.log" 2>&1 &&
			inroot apt-get install -y -q --no-install-recommends ${pkgs//,/ } \
				>>"$cache/release-$release-update.log" 2>&1 &&
			arm64_headers >>"$cache/release-$release-update.log" 2>&1; then
			inroot apt-get clean
			date +%s >"$root/.refreshed"
		elif [ -e "$root/.refreshed" ]; then
			# The cached kernel still builds: say so, and go on with it.
			log "$release: refreshing failed (see $cache/release-$release-update.log); using the cached headers"
		else
			tail -n 20 "$cache/release-$release-update.log" >&2
			log "$release: installing its packages failed (see $cache/release-$release-update.log)"
			exit 1
		fi
	fi
fi

if [ "${1:-}" = run ]; then
	shift
	flock -u "$lockfd"
	inroot "$@"
	exit
fi

krel=$(inroot dpkg-query -W -f='${Version}' linux-headers-amd64)
kver=$(kver)
echo "ROOT=$root"
echo "KVER=$kver-amd64"
[ -z "$root" ] || echo "KVER_ARM64=$kver-arm64"
echo "KREL=$krel"
echo "CC_VERSION=$(inroot gcc -dumpversion)"
exit
}
