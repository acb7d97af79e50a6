#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Provide a guest kernel for the VM tests, cached outside the repository.
#
#   tests/vm/kernel.sh generic|rt|debug|arm64|arm64-debug
#   tests/vm/kernel.sh trixie-generic|trixie-rt|trixie-debug|trixie-arm64|sid-generic|sid-rt
#
# Prints shell assignments on stdout:
#   KIMAGE=<kernel image to boot>   KDIR=<tree to build modules against>
#   KARCH=x86_64|arm64              CROSS_COMPILE=<prefix, empty if native>
#   BUSYBOX=<busybox for the guest> (arm64 kinds only)
#   DEBIAN_ROOT=<Debian's arm64 xz, liblzma and coreutils unpacked> (arm64
#                kinds only; run.sh's HOTSTACK_VM_DEBIAN)
#   KROOT=<the release's chroot modules are built in, where KDIR is>
#   KRELEASE=<its name>             (another release's kernels only)
#
# generic:     Debian's linux-image-6.1.0-N-amd64 matching the installed
#              linux-headers-amd64 (apt-get download + dpkg-deb -x).
# rt:          the same for Debian's PREEMPT_RT flavour (linux-image-rt-amd64).
# debug:       built from Debian's linux-source-6.1: tinyconfig plus
#              base.config, x86_64.config and debug.config (lockdep, KASAN,
#              kmemleak, frame pointers).
# arm64:       cross-built the same way with base.config and arm64.config
#              (GICv3 pseudo-NMIs, PMUv3); busybox from busybox-static:arm64.
# arm64-debug: arm64 plus debug.config.
# trixie-*, sid-*: the same kinds of Debian 13 and sid (tests/release.sh):
#              their Debian kernel images, or built from their
#              linux-source with their compilers in their chroot.
# Built kernels are cached by the hash of their fragments and the source.
set -euo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

here=$(cd "$(dirname "$0")" && pwd)
cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
mkdir -p "$cache"
kind=${1:?usage: kernel.sh generic|rt|debug}

log() { echo "kernel.sh: $*" >&2; }

# lock NAME: hold $cache/.lock-NAME until this script exits, so that two
# runs (make check builds kernels ahead, in the background) never fill one
# directory at once; the second waits, then finds it done. The builder
# ahead runs at a lower priority (nice): once a step waits for what it
# builds, it gets the step's (a cold make check's debug suite waited 50
# minutes for a build starved by the other steps).
lock() {
	local fd holder
	exec {fd}>"$cache/.lock-$1"
	if ! flock -n "$fd"; then
		holder=$(cat "$cache/.lock-$1.pid" 2>/dev/null) && unnice "$holder"
		flock "$fd"
	fi
	echo $$ >"$cache/.lock-$1.pid"
}

# unnice PID: PID and what it started at this script's priority (for a
# non-root user, whom renice does not let raise a priority: unchanged).
unnice() {
	local p
	renice -n "$(nice)" -p "$1" >/dev/null 2>&1 || return 0
	for p in $(ps -o pid= --ppid "$1"); do
		unnice "$p"
	done
}

# The ABI name (6.1.0-N) of the newest installed Debian headers of a flavour.
headers_abi() {
	local flavour=$1
	dpkg-query -W -f='${Status} ${Package}\n' "linux-headers-6.1.0-*-$flavour" 2>/dev/null |
		awk '$3 == "installed" { print $4 }' |
		sed -n "s/^linux-headers-\(6\.1\.0-[0-9]*\)-$flavour\$/\1/p" | sort -V | tail -n 1
}

# Debian's kernel of another release (trixie, sid): the one whose headers
# that release's chroot (tests/release.sh) has, the image fetched there
# (sid ships it in linux-binary-KVER, under usr/lib/modules/KVER/).
# KROOT: the chroot modules for it are built in; KDIR is inside it.
release_kernel() {
	local release=$1 flavour=$2 ROOT KVER KREL CC_VERSION kver dir pkg image
	eval "$("$here/../release.sh" "$release")"
	kver=${KVER%-amd64}-$flavour
	dir="$cache/linux-image-$kver-$KREL"
	if [ ! -e "$dir/.done" ]; then
		log "fetching Debian $release's kernel $kver ($KREL)"
		rm -rf "$dir" && mkdir -p "$dir/deb" "$ROOT/tmp/kernel-deb"
		for pkg in "linux-binary-$kver" "linux-image-$kver"; do
			"$here/../release.sh" "$release" run sh -c \
				"cd /tmp/kernel-deb && apt-get download -q $pkg" >"$dir/fetch.log" 2>&1 &&
				break
		done
		mv "$ROOT"/tmp/kernel-deb/*.deb "$dir/deb/" ||
			{ cat "$dir/fetch.log" >&2; log "no package of $kver in $release"; exit 1; }
		dpkg-deb -x "$dir"/deb/*.deb "$dir/root"
		image=$(find "$dir/root" -name "vmlinuz*" | head -n 1)
		[ -n "$image" ] || { log "no vmlinuz in $pkg"; exit 1; }
		mv "$image" "$dir/vmlinuz"
		rm -rf "$dir/deb" "$dir/root"
		touch "$dir/.done"
	fi
	echo "KIMAGE=$dir/vmlinuz"
	echo "KDIR=/usr/src/linux-headers-$kver"
	echo "KROOT=$ROOT"
	echo "KRELEASE=$release"
	echo "KARCH=x86_64"
	echo "CROSS_COMPILE="
}

debian_kernel() {
	local flavour=$1 abi pkgver dir
	abi=$(headers_abi "$flavour")
	if [ -z "$abi" ]; then
		log "no linux-headers-6.1.0-*-$flavour installed (run tests/deps.sh)"
		exit 1
	fi
	pkgver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi-$flavour")
	dir="$cache/linux-image-$abi-$flavour-$pkgver"
	if [ ! -e "$dir/.done" ]; then
		log "fetching linux-image-$abi-$flavour $pkgver"
		rm -rf "$dir" && mkdir -p "$dir/deb"
		(cd "$dir/deb" && apt-get download -q "linux-image-$abi-$flavour=$pkgver" >&2)
		dpkg-deb -x "$dir"/deb/*.deb "$dir/root"
		# Only the kernel image boots: modules are not needed in the guest.
		find "$dir/root" -mindepth 1 -maxdepth 1 ! -name boot -exec rm -rf {} +
		rm -rf "$dir/deb"
		touch "$dir/.done"
	fi
	echo "KIMAGE=$dir/root/boot/vmlinuz-$abi-$flavour"
	echo "KDIR=/usr/src/linux-headers-$abi-$flavour"
	echo "KARCH=x86_64"
	echo "CROSS_COMPILE="
}

# Extract Debian's linux-source-6.1 once; prints the tree's path.
kernel_source() {
	local tarball=/usr/src/linux-source-6.1.tar.xz ver dir
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	dir="$cache/linux-source-$ver"
	[ -e "$dir/.done" ] || lock source
	if [ ! -e "$dir/.done" ]; then
		log "extracting linux-source-6.1 $ver"
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf "$tarball"
		touch "$dir/.done"
	fi
	echo "$dir"
}

# Another release's Debian linux-source, extracted in its chroot
# (tests/release.sh) under /build; sets ROOT (the chroot), RUN (the
# command prefix that runs there) and SRC (the tree, as seen in there).
release_source() {
	local release=$1 KVER KVER_ARM64 KREL CC_VERSION tarball ver
	eval "$("$here/../release.sh" "$release")"
	RUN=("$here/../release.sh" "$release" run)
	tarball=$(cd "$ROOT" && ls usr/src/linux-source-*.tar.xz | sort -V | tail -n 1)
	ver=$("${RUN[@]}" dpkg-query -S "/$tarball" | cut -d: -f1)
	ver=$("${RUN[@]}" dpkg-query -W -f='${Version}' "$ver")
	SRC=/build/linux-source-$ver
	[ -e "$ROOT$SRC/.done" ] || lock "source-$release"
	if [ ! -e "$ROOT$SRC/.done" ]; then
		log "extracting $release's ${tarball##*/} $ver"
		rm -rf "${ROOT:?}$SRC" && mkdir -p "$ROOT$SRC"
		tar -C "$ROOT$SRC" --strip-components=1 -xf "$ROOT/$tarball"
		touch "$ROOT$SRC/.done"
	fi
}

# Build a kernel from Debian's linux-source (6.1 here; another release's
# in its chroot, with its compiler): tinyconfig plus the fragments, cached
# by their hash and the source version. Incremental: a build cut short
# resumes where it stopped.
#   built_kernel NAME ARCH RELEASE|- FRAGMENT...
built_kernel() {
	local name=$1 arch=$2 release=$3 key dir cross= image ROOT= SRC RUN=()
	shift 3
	if [ "$release" = - ]; then
		SRC=$(kernel_source)
	else
		release_source "$release"
	fi
	key=$(cat "$@" <(basename "$SRC") | sha256sum | cut -c1-16)
	# As seen where it is built; the host sees it under $ROOT.
	dir=$cache/linux-$name-$key
	[ -z "$ROOT" ] || dir=/build/linux-$name-$key
	case $arch in
	x86_64) image=arch/x86/boot/bzImage ;;
	arm64) image=arch/arm64/boot/Image cross=aarch64-linux-gnu- ;;
	esac
	local kmake=("${RUN[@]}" make -s ARCH="$arch" CROSS_COMPILE="$cross")
	[ -e "$ROOT$dir/.done" ] || lock "$name"
	if [ ! -e "$ROOT$dir/.done" ]; then
		log "building the $name kernel in $ROOT$dir (about 4-8 minutes)"
		# The fragments where the build sees them, in their order.
		local f frags=() i=0
		mkdir -p "$ROOT$dir/fragments"
		for f; do
			i=$((i + 1))
			cp "$f" "$ROOT$dir/fragments/$i-${f##*/}"
			frags+=("$dir/fragments/$i-${f##*/}")
		done
		"${kmake[@]}" -C "$SRC" O="$dir" tinyconfig >&2
		"${RUN[@]}" env ARCH="$arch" "$SRC/scripts/kconfig/merge_config.sh" -m -O "$dir" \
			"$dir/.config" "${frags[@]}" >/dev/null 2>&1
		"${kmake[@]}" -C "$SRC" O="$dir" olddefconfig >&2
		# Every option the fragments ask for must have survived.
		local opt want got
		while IFS='=' read -r opt want; do
			case $opt in CONFIG_*) ;; *) continue ;; esac
			got=$(sed -n "s/^$opt=//p" "$ROOT$dir/.config")
			[ "$want" = n ] && [ -z "$got" ] && continue
			if [ "$want" != "$got" ]; then
				log "$name config: $opt=$want did not stick (got '$got')"
				exit 1
			fi
		done < <(cat "$@")
		"${kmake[@]}" -C "$dir" -j"$(nproc)" "$(basename "$image")" modules >&2
		touch "$ROOT$dir/.done"
		# Builds of older fragments only take disk space now.
		find "$ROOT${dir%/*}" -maxdepth 1 -name "linux-$name-*" ! -name "linux-$name-$key" \
			-exec rm -rf {} +
	fi
	echo "KIMAGE=$ROOT$dir/$image"
	echo "KDIR=$dir"
	echo "KARCH=$arch"
	echo "CROSS_COMPILE=$cross"
	if [ -n "$ROOT" ]; then
		echo "KROOT=$ROOT"
		echo "KRELEASE=$release"
	fi
}

# The guest's programs for arm64 (the host's are x86_64): busybox from
# busybox-static:arm64, genl from iproute2:arm64 (its libraries are
# installed as arm64 multiarch packages by tests/deps.sh), and Debian's
# own arm64 builds of xz (xz-utils, liblzma5) and sha256sum (coreutils)
# for the user-stack unwinding tests, at their paths in DEBIAN_ROOT.
userland_arm64() {
	local pkg dir key= pkgs="busybox-static iproute2 xz-utils liblzma5 coreutils"
	for pkg in $pkgs; do
		key="$key-$(apt-cache policy "$pkg:arm64" | sed -n 's/^ *Candidate: //p')"
	done
	dir="$cache/userland-arm64${key//:/_}"
	[ -e "$dir/.done" ] || lock userland-arm64
	if [ ! -e "$dir/.done" ]; then
		log "fetching $pkgs (arm64)"
		rm -rf "$dir" && mkdir -p "$dir/deb"
		(cd "$dir/deb" && apt-get download -q ${pkgs// /:arm64 }:arm64 >&2)
		for pkg in "$dir"/deb/*.deb; do
			dpkg-deb -x "$pkg" "$dir/root"
		done
		rm -rf "$dir/deb"
		touch "$dir/.done"
	fi
	echo "BUSYBOX=$dir/root/bin/busybox"
	echo "GENL=$dir/root/usr/sbin/genl"
	echo "DEBIAN_ROOT=$dir/root"
}

case $kind in
generic) debian_kernel amd64 ;;
rt) debian_kernel rt-amd64 ;;
trixie-generic | sid-generic) release_kernel "${kind%%-*}" amd64 ;;
trixie-rt | sid-rt) release_kernel "${kind%%-*}" rt-amd64 ;;
debug) built_kernel debug x86_64 - "$here"/{base,x86_64,debug}.config ;;
arm64) built_kernel arm64 arm64 - "$here"/{base,arm64}.config && userland_arm64 ;;
arm64-debug) built_kernel arm64-debug arm64 - "$here"/{base,arm64,debug}.config && userland_arm64 ;;
trixie-debug | sid-debug)
	built_kernel "$kind" x86_64 "${kind%%-*}" "$here"/{base,post-6.1,x86_64,debug}.config ;;
trixie-arm64 | sid-arm64)
	built_kernel "$kind" arm64 "${kind%%-*}" "$here"/{base,post-6.1,arm64}.config &&
		userland_arm64 ;;
source) kernel_source ;;
*) log "unknown kernel '$kind' (generic, rt, debug, arm64, arm64-debug, trixie-generic, trixie-rt, sid-generic, sid-rt, source)"; exit 2 ;;
esac
exit
}
