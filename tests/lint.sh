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
	# module/compat.h is where kernel versions are compared (and only there:
	# below), for what no header lets it probe.
	ignore=
	[ "$f" = module/compat.h ] && ignore=--ignore=LINUX_VERSION_CODE
	if (cd "$repo" && "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types $ignore -f "$f") \
		>"$out/checkpatch.log" 2>&1; then
		echo "ok - checkpatch --strict $f"
	else
		echo "not ok - checkpatch --strict $f"
		sed 's/^/# /' "$out/checkpatch.log"
		rc=1
	fi
done

# Every difference between kernels in one place: no version test elsewhere.
others=$(cd "$repo" && grep -l -E 'LINUX_VERSION_CODE|KERNEL_VERSION' $files | grep -v -x module/compat.h)
if [ -z "$others" ]; then
	echo "ok - kernel versions compared in module/compat.h only"
else
	echo "not ok - kernel versions compared in module/compat.h only (also in: $others)"
	rc=1
fi

# Sparse and W=1 on a copy, so the tree's own build is left alone; for
# x86_64 against the host's headers and for arm64 against the arm64 guest
# kernel (cross-built; tests/vm/kernel.sh), so both unwind_<arch>.h are seen
# (sample.c includes the one of its architecture).
# sparse ARCH KDIR CROSS_COMPILE
sparse() {
	local arch=$1 kdir=$2 cross=$3 dir=$out/$1 m mdir name log extra
	mkdir -p "$dir"
	cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$dir/"
	[ -e "$repo/tests/kmod/Kbuild" ] && cp -r "$repo/tests/kmod" "$dir/kmod"
	for m in module kmod; do
		[ -d "$dir/$m" ] || continue
		mdir=$dir name=module extra=
		if [ $m = kmod ]; then
			mdir=$dir/kmod name=tests/kmod
			extra=KBUILD_EXTRA_SYMBOLS=$dir/Module.symvers
		fi
		log=$dir/sparse-$m.log
		if make -s -C "$kdir" ARCH="$arch" CROSS_COMPILE="$cross" W=1 C=2 \
			KCFLAGS=-Werror M="$mdir" $extra modules >"$log" 2>&1 &&
			! grep -E -q 'warning|error' "$log"; then
			echo "ok - sparse (C=2) and W=1 -Werror on $name/ ($arch)"
		else
			echo "not ok - sparse (C=2) and W=1 -Werror on $name/ ($arch)"
			sed 's/^/# /' "$log"
			rc=1
		fi
	done
}
sparse x86_64 "$kdir" ""
if arm64=$("$repo/tests/vm/kernel.sh" arm64); then
	eval "$arm64"
	sparse arm64 "$KDIR" "$CROSS_COMPILE"
else
	echo "not ok - lint: the arm64 kernel tree (tests/vm/kernel.sh arm64)"
	rc=1
fi
exit $rc
