#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make run: the one-command demo. Where this kernel can load modules (and we
# are root), build hotstack, load it and run the tool here; elsewhere (like
# a machine whose kernel has no module support), boot the VM with the demo
# script and print what it printed: on the current stable release's kernel
# (Debian 13's 6.12; HOTSTACK_RUN_KERNEL=generic for Debian 12's, or any
# kind tests/vm/run.sh boots), the module built in that release's chroot.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
"$repo/tests/deps.sh" --run

if [ -e /proc/modules ] && [ -d "/lib/modules/$(uname -r)/build" ] && [ "$(id -u)" -eq 0 ]; then
	make -s module tool
	mkdir -p "$repo/out"
	HOTSTACK=$repo/userspace/hotstack HOTSTACK_KO=$repo/hotstack.ko \
		HOTSTACK_DEMO_DIR=$repo/out sh "$repo/tests/demo.sh" || exit
	echo
	echo "make run: wrote $repo/out/hotstack.folded, hotstack-report.txt and hotstack.svg"
	exit
fi

mkdir -p "$repo/out"
kernel=${HOTSTACK_RUN_KERNEL:-trixie-generic}
echo "make run: this kernel cannot load modules here; running the demo in a QEMU VM ($kernel)" >&2
rc=0
printf 'HOTSTACK_DEMO_MARKERS=1 sh /tests/demo-inner.sh\n' >"$repo/out/demo-outer.sh"
HOTSTACK_VM_EXTRA="$repo/tests/demo.sh:demo-inner.sh" \
	"$repo/tests/vm/run.sh" "$kernel" --script "$repo/out/demo-outer.sh" >"$repo/out/run.log" || rc=$?
# The files the guest printed between markers become files here.
awk -v dir="$repo/out" '
	/^=== BEGIN FILE / { file = dir "/" $4; printf "" > file; next }
	/^=== END FILE / { close(file); file = ""; next }
	file != "" { print > file; next }
	!/^ok - / && !/^HOTSTACK-VM-DONE/ { print }' "$repo/out/run.log"
[ $rc -eq 0 ] && echo && echo "make run: wrote $repo/out/hotstack.folded, hotstack-report.txt and hotstack.svg"
exit $rc
