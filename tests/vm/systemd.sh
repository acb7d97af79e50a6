#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's fleet install under a real systemd: Debian's generic kernel
# boots a Debian root (debootstrap's minbase of the host's release, with
# systemd, kmod and what the hotstack package depends on, cached beside
# the kernels) as the initramfs, with systemd as PID 1; the guest script
# (tests/vm/guest/systemd.sh) installs the packages make deb built and
# runs the agent's unit. Prints TAP lines, as tests/vm/run.sh does.
#
#   tests/vm/systemd.sh    (after make deb: out/hotstack*_VERSION_*.deb)
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}
cache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotstack}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
tool=$(ls "$out"/hotstack_"$version"_*.deb 2>/dev/null | head -n 1)
dkmsdeb=$out/hotstack-dkms_${version}_all.deb
if [ -z "$tool" ] || [ ! -e "$dkmsdeb" ]; then
	echo "not ok - [systemd] VM setup: no packages in $out (make deb first)"
	exit 1
fi

# The root: the packages the tool's package depends on (the first of each
# alternative, without versions), and what a booted system needs.
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
	awk -v s="$suite" '$2 == s { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
pkgs=$(dpkg-deb -f "$tool" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g' |
	grep -v '^$' | sort -u | tr '\n' ',')
pkgs=${pkgs}systemd,systemd-sysv,udev,kmod
key=$(echo "$suite $pkgs $(dpkg-query -W -f='${Version}' debootstrap)" | sha256sum | cut -c1-16)
sysroot=$cache/sysroot-$suite-$key
mkdir -p "$cache"
exec {lockfd}>"$cache/.lock-sysroot"
flock "$lockfd"
if [ ! -e "$sysroot/.done" ]; then
	echo "# systemd.sh: debootstrap $suite from $mirror (minbase, $pkgs)" >&2
	# Twice: a mirror's hiccup is not a failure of hotstack's.
	for try in 1 2; do
		rm -rf "$sysroot"
		debootstrap --variant=minbase --include="$pkgs" "$suite" "$sysroot" "$mirror" \
			>"$cache/sysroot.log" 2>&1 && break
		if [ $try = 2 ]; then
			tail -n 20 "$cache/sysroot.log" | sed 's/^/# /'
			echo "not ok - [systemd] VM setup: debootstrap failed (see $cache/sysroot.log)"
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
	touch "$sysroot/.done"
fi
flock -u "$lockfd"

exec env HOTSTACK_OUT="$out/systemd" HOTSTACK_VM_SYSROOT="$sysroot" \
	HOTSTACK_VM_EXTRA="$tool:hotstack.deb $dkmsdeb:hotstack-dkms.deb" \
	"$repo/tests/vm/run.sh" generic --script "$repo/tests/vm/guest/systemd.sh"
