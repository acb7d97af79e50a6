#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS path of the README: `dkms build` of this tree (its dkms.conf)
# against Debian's headers, into a scratch DKMS tree, then the module DKMS
# built is loaded and used in the VM. Prints TAP lines.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=${HOTSTACK_OUT:-$repo/out}/dkms
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
kdir=$("$repo/tests/kdir.sh")
case $kdir in
/lib/modules/*/build) kver=${kdir#/lib/modules/} && kver=${kver%/build} ;;
*) kver=${kdir##*/linux-headers-} ;;
esac
rm -rf "$out" && mkdir -p "$out/src/hotstack-$version" "$out/tree"
cp -r "$repo/Kbuild" "$repo/dkms.conf" "$repo/module" "$repo/uapi" "$out/src/hotstack-$version/"

if dkms build "hotstack/$version" -k "$kver" --dkmstree "$out/tree" \
	--sourcetree "$out/src" >"$out/build.log" 2>&1; then
	echo "ok - dkms build hotstack/$version for $kver"
else
	echo "not ok - dkms build hotstack/$version for $kver"
	sed 's/^/# /' "$out/build.log"
	exit 1
fi
ko=$(find "$out/tree" -name 'hotstack.ko*' -path '*/module/*' | head -n 1)
cat >"$out/script.sh" <<'SCRIPT'
. /tests/lib.sh
check "insmod the module DKMS built" insmod /tests/dkms-hotstack.ko
check_output "hotstack info talks to it" '^abi version: +1 ' hotstack info
check "hotstack record -d 1 with it" hotstack record -d 1 -o /tmp/dkms.folded
check "rmmod it" rmmod hotstack
SCRIPT
HOTSTACK_OUT=$out HOTSTACK_VM_EXTRA="$ko:dkms-hotstack.ko" \
	"$repo/tests/vm/run.sh" generic --script "$out/script.sh" |
	sed -e 's/^\(not ok\|ok\) - \[generic\] /\1 - [dkms] /' | grep -v '^HOTSTACK-VM-DONE'
