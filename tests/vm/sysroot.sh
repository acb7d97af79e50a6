#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian root for a VM that boots systemd (tests/vm/run.sh with
# HOTSTACK_VM_SYSROOT): debootstrap's minbase of the host's release with
# systemd, kmod and the packages named, plus host paths copied in at the
# same place (make bench: the guest kernel's headers, which bcc compiles
# against). Cached beside the kernels by what it holds; prints its path.
#
#   tests/vm/sysroot.sh PKG,PKG,... [HOST_PATH ...]
set -euo pipefail

pkgs=${1:?usage: sysroot.sh PKG,PKG,... [HOST_PATH ...]},systemd,systemd-sysv,udev,kmod
shift
cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk -v s="$suite" '$2 == s { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
pkgs=$(echo "$pkgs" | tr ',' '\n' | grep -v '^$' | sort -u | paste -sd,)
key=$(echo "$suite $pkgs $* $(dpkg-query -W -f='${Version}' debootstrap)" | sha256sum | cut -c1-16)
sysroot=$cache/sysroot-$suite-$key
mkdir -p "$cache"
exec {lockfd}>"$cache/.lock-sysroot"
flock "$lockfd"
if [ ! -e "$sysroot/.done" ]; then
	echo "# sysroot.sh: debootstrap $suite from $mirror (minbase, $pkgs)" >&2
	# Twice: a mirror's hiccup is not a failure of hotstack's.
	for try in 1 2; do
		rm -rf "$sysroot"
		debootstrap --variant=minbase --include="$pkgs" "$suite" "$sysroot" "$mirror" \
			>"$cache/sysroot.log" 2>&1 && break
		if [ $try = 2 ]; then
			tail -n 20 "$cache/sysroot.log" | sed 's/^/# /' >&2
			echo "sysroot.sh: debootstrap failed (see $cache/sysroot.log)" >&2
			exit 1
		fi
	done
	# What the guest never reads: downloaded packages, documentation.
	rm -rf "$sysroot"/var/cache/apt/archives/*.deb "$sysroot"/usr/share/{doc,man,info,locale}
	# A machine ID made at first boot; no getty on the consoles.
	: >"$sysroot/etc/machine-id"
	ln -sf /dev/null "$sysroot/etc/systemd/system/serial-getty@.service"
	ln -sf /dev/null "$sysroot/etc/systemd/system/getty@.service"
	echo hotstack-vm >"$sysroot/etc/hostname"
	# From /: coreutils 9.1's cp --parents sets the modes of the parents
	# it makes by their path from the working directory (an absolute
	# source elsewhere fails on its first missing parent).
	for path; do
		path=$(readlink -f "$path")
		(cd / && cp -a --parents "${path#/}" "$sysroot/")
	done
	touch "$sysroot/.done"
fi
echo "$sysroot"
