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

# A kernel older than the minimum stops the build at once, with one line
# that names what it needs: the host's Debian headers made to look like an
# older kernel's (a copy of the arch tree, the common tree linked), version
# CODE and without the generic netlink flag 6.1.70 brought.
# older DIR NAME CODE WANT
older() {
	local t=$out/$1 name=$2 code=$3 want=$4 common log errors
	common=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$kdir/Makefile")
	if [ ! -d "$common" ]; then
		echo "not ok - $name: a build tree of Debian's layout to make it from ($kdir)"
		rc=1
		return
	fi
	mkdir -p "$t/m"
	cp -as "$common" "$t/common"
	cp -a "$kdir" "$t/arch"
	for l in scripts tools; do
		ln -sfn "$(readlink -f "$kdir/$l")" "$t/arch/$l"
	done
	echo "include $t/common/Makefile" >"$t/arch/Makefile"
	sed -i "s/^#define LINUX_VERSION_CODE .*/#define LINUX_VERSION_CODE $code/" \
		"$t/arch/include/generated/uapi/linux/version.h"
	rm "$t/common/include/net/genetlink.h"
	grep -v GENL_MCAST_CAP_SYS_ADMIN "$common/include/net/genetlink.h" \
		>"$t/common/include/net/genetlink.h"
	cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$t/m/"
	log=$t/build.log
	make -s -C "$t/arch" M="$t/m" modules >"$log" 2>&1
	errors=$(grep -c 'error:' "$log")
	if [ "$errors" = 1 ] && grep -q "error: #error \"hotstack needs $want" "$log"; then
		echo "ok - $name: the build stops at one line, \"hotstack needs $want...\""
	else
		echo "not ok - $name: the build stops at one line, \"hotstack needs $want...\" ($errors errors)"
		sed 's/^/# /' "$log" | head -20
		rc=1
	fi
	rm -rf "$t"
}
older 6.0 "a 6.0 kernel" $(((6 << 16) + (0 << 8))) "Linux 6.1.70 or later"
older 6.1.69 "6.1.69 (before the generic netlink flag)" $(((6 << 16) + (1 << 8) + 69)) \
	"GENL_MCAST_CAP_SYS_ADMIN"

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
