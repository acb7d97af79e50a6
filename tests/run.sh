#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make run: the one-command demo. Where this kernel can load modules (and we
# are root), build hotstack, load it and run the tool here; elsewhere (like
# a machine whose kernel has no module support), boot the VM with the demo
# script and print what it printed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
"$repo/tests/deps.sh"

if [ -e /proc/modules ] && [ -d "/lib/modules/$(uname -r)/build" ] && [ "$(id -u)" -eq 0 ]; then
	make -s module tool
	HOTSTACK=$repo/userspace/hotstack HOTSTACK_KO=$repo/hotstack.ko sh "$repo/tests/demo.sh"
	exit
fi

mkdir -p "$repo/out"
echo "make run: this kernel cannot load modules here; running the demo in a QEMU VM" >&2
rc=0
"$repo/tests/vm/run.sh" generic --script "$repo/tests/demo.sh" >"$repo/out/run.log" || rc=$?
grep -v -e '^ok - ' -e '^HOTSTACK-VM-DONE' "$repo/out/run.log" || true
exit $rc
