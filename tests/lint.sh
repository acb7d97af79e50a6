#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel style checks on module/, uapi/ and tests/kmod/: checkpatch.pl
# --strict (from Debian's linux-source-6.1) and sparse (C=2), plus a W=1
# -Werror build. Prints one TAP line per check.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
src=$("$repo/tests/vm/kernel.sh" source) || { echo "not ok - lint: no kernel source"; exit 1; }
kdir=${KDIR:-$("$repo/tests/kdir.sh")}
out=${HOTSTACK_OUT:-$repo/out}/lint
rm -rf "$out" && mkdir -p "$out"
rc=0

files=$(cd "$repo" && ls module/*.[ch] uapi/linux/*.h tests/kmod/*.[ch] 2>/dev/null)
for f in $files; do
	if (cd "$repo" && "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f "$f") \
		>"$out/checkpatch.log" 2>&1; then
		echo "ok - checkpatch --strict $f"
	else
		echo "not ok - checkpatch --strict $f"
		sed 's/^/# /' "$out/checkpatch.log"
		rc=1
	fi
done

# Sparse and W=1 on a copy, so the tree's own build is left alone.
cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$out/"
if make -s -C "$kdir" M="$out" W=1 C=2 KCFLAGS=-Werror modules >"$out/sparse.log" 2>&1 &&
	! grep -E -q 'warning|error' "$out/sparse.log"; then
	echo "ok - sparse (C=2) and W=1 -Werror on module/"
else
	echo "not ok - sparse (C=2) and W=1 -Werror on module/"
	sed 's/^/# /' "$out/sparse.log"
	rc=1
fi
if [ -e "$repo/tests/kmod/Kbuild" ]; then
	cp -r "$repo/tests/kmod" "$out/kmod"
	if make -s -C "$kdir" M="$out/kmod" W=1 C=2 KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS="$out/Module.symvers" modules \
		>"$out/sparse-kmod.log" 2>&1 && ! grep -E -q 'warning|error' "$out/sparse-kmod.log"; then
		echo "ok - sparse (C=2) and W=1 -Werror on tests/kmod/"
	else
		echo "not ok - sparse (C=2) and W=1 -Werror on tests/kmod/"
		sed 's/^/# /' "$out/sparse-kmod.log"
		rc=1
	fi
fi
exit $rc
