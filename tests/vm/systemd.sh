#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's fleet install under a real systemd: Debian's generic kernel
# boots a Debian root (debootstrap's minbase of the host's release, with
# systemd, kmod and what the hotstack package depends on: tests/vm/sysroot.sh)
# as the initramfs, with systemd as PID 1; the guest script
# (tests/vm/guest/systemd.sh) installs the packages make deb built and
# runs the agent's unit. Prints TAP lines, as tests/vm/run.sh does.
#
#   tests/vm/systemd.sh    (after make deb: out/hotstack*_VERSION_*.deb)
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
tool=$(ls "$out"/hotstack_"$version"_*.deb 2>/dev/null | head -n 1)
dkmsdeb=$out/hotstack-dkms_${version}_all.deb
if [ -z "$tool" ] || [ ! -e "$dkmsdeb" ]; then
	echo "not ok - [systemd] VM setup: no packages in $out (make deb first)"
	exit 1
fi

# The root: the packages the tool's package depends on (the first of each
# alternative, without versions).
pkgs=$(dpkg-deb -f "$tool" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g' |
	grep -v '^$' | paste -sd,)
sysroot=$("$repo/tests/vm/sysroot.sh" "$pkgs") || {
	echo "not ok - [systemd] VM setup: no Debian root (tests/vm/sysroot.sh)"
	exit 1
}

exec env HOTSTACK_OUT="$out/systemd" HOTSTACK_VM_SYSROOT="$sysroot" \
	HOTSTACK_VM_EXTRA="$tool:hotstack.deb $dkmsdeb:hotstack-dkms.deb" \
	"$repo/tests/vm/run.sh" generic --script "$repo/tests/vm/guest/systemd.sh"
