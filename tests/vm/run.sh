#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU (TCG) with hotstack and run the in-guest suite.
#
#   tests/vm/run.sh [generic|rt|debug] [--icount] [--script FILE]
#
# Builds hotstack.ko (and the test modules) against that kernel, packs a
# busybox initramfs with the module, the tool, the test programs and their
# shared libraries, boots it and brings back:
#   out/vm-KERNEL/console.log   the serial console (kernel messages)
#   out/vm-KERNEL/guest.log     what the tests printed (TAP lines)
# Prints TAP lines ("ok - ..." / "not ok - ...") for every guest test, plus
# the harness's own checks: the guest finished in time, no panic, and no
# BUG:, WARNING:, Call Trace, lockdep or KASAN line on the console.
#
# --icount: deterministic mode for benchmarks (-icount shift=0,sleep=off
#           -smp 1): guest time counts guest instructions.
# --script: run FILE in the guest instead of the test suite (make run).
# HOTSTACK_VM_BINS: more host programs to put in the guest's /bin, with
#           their shared libraries.
# HOTSTACK_VM_EXTRA: "SRC:NAME ..." more files for the guest's /tests.
set -euo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

repo=$(cd "$(dirname "$0")/../.." && pwd)
kind=generic
icount=0
script=
while [ $# -gt 0 ]; do
	case $1 in
	generic | rt | debug) kind=$1 ;;
	--icount) icount=1 ;;
	--script) script=$2; shift ;;
	*) echo "usage: $0 [generic|rt|debug] [--icount] [--script FILE]" >&2; exit 2 ;;
	esac
	shift
done

out=${HOTSTACK_OUT:-$repo/out}/vm-$kind
timeout_s=${HOTSTACK_VM_TIMEOUT:-600}
smp=${HOTSTACK_VM_SMP:-2}
rm -rf "$out" && mkdir -p "$out"
tag="[$kind]"

# Any failure before the guest runs is one failed test, not silence.
fail_setup() {
	echo "not ok - $tag VM setup: $*"
	exit 1
}
trap 'fail_setup "command failed at line $LINENO (see output above)"' ERR

eval "$("$repo/tests/vm/kernel.sh" "$kind")"
[ -r "$KIMAGE" ] || fail_setup "no kernel image $KIMAGE"

# --- build the module and the test modules against this kernel ---------
src=$out/src
mkdir -p "$src"
cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$src/"
make -s -C "$KDIR" M="$src" W=1 KCFLAGS=-Werror modules >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "hotstack.ko does not build against $KDIR"; }
if [ -e "$repo/tests/kmod/Kbuild" ]; then
	cp -r "$repo/tests/kmod" "$src/kmod"
	make -s -C "$KDIR" M="$src/kmod" W=1 KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS="$src/Module.symvers" modules >>"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; fail_setup "test modules do not build against $KDIR"; }
fi

# --- userspace: the tool and the in-guest test programs -----------------
make -s -C "$repo/userspace" >>"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "the hotstack tool does not build"; }
make -s -C "$repo/tests/vm" OUT="$out/bin" >>"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "the guest test programs do not build"; }

# --- initramfs ------------------------------------------------------------
root=$out/initramfs
mkdir -p "$root"/{bin,sbin,lib,lib64,proc,sys,dev,tmp,root,tests,etc}
cp /bin/busybox "$root/bin/busybox"
cp "$repo/tests/vm/guest/init" "$root/init"
cp "$repo"/tests/vm/guest/*.sh "$root/tests/"
cp "$src/hotstack.ko" "$root/tests/"
[ -d "$src/kmod" ] && find "$src/kmod" -name '*.ko' -exec cp {} "$root/tests/" \;
cp "$repo/userspace/hotstack" "$root/bin/"
cp "$out"/bin/* "$root/bin/"
# Host programs the tests want (genl from iproute2) or the script does
# (make bench: perf, bpftrace).
for bin in $(command -v genl || true) ${HOTSTACK_VM_BINS:-}; do
	cp -L "$bin" "$root/bin/"
done
if [ -n "$script" ]; then
	cp "$script" "$root/tests/script.sh"
fi
# HOTSTACK_VM_EXTRA="SRC:NAME ...": more files for the guest's /tests.
for pair in ${HOTSTACK_VM_EXTRA:-}; do
	cp "${pair%%:*}" "$root/tests/${pair#*:}"
done
{
	echo "HOTSTACK_KERNEL=$kind"
	echo "HOTSTACK_MODE=$([ -n "$script" ] && echo script || echo test)"
} >"$root/tests/env"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

# Shared libraries of every dynamic executable, at the same paths.
for bin in "$root"/bin/*; do
	[ "$bin" = "$root/bin/busybox" ] && continue
	ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.gz"

# --- boot -------------------------------------------------------------------
append="console=ttyS0 panic=-1 oops=panic loglevel=7"
qemu=(qemu-system-x86_64 -nodefaults -machine q35 -cpu max -m 2048
	-kernel "$KIMAGE" -initrd "$out/initramfs.gz" -append "$append"
	-display none -no-reboot -monitor none
	-serial "file:$out/console.log" -serial "file:$out/guest.log")
if [ $icount = 1 ]; then
	qemu+=(-smp 1 -icount shift=0,sleep=off)
else
	qemu+=(-smp "$smp")
fi
trap - ERR
start=$(date +%s)
set +e
timeout "$timeout_s" "${qemu[@]}" </dev/null >"$out/qemu.log" 2>&1
qemu_rc=$?
set -e
elapsed=$(($(date +%s) - start))

# --- verdict ------------------------------------------------------------------
{
	# The guest's own TAP lines, tagged with the kernel.
	sed -n -e 's/\r$//' -e "s/^\(not ok\|ok\) - /\1 - $tag /p" "$out/guest.log"
	# Anything the guest printed that is not a TAP line is context for a reader.
	if [ -n "$script" ]; then
		sed -e 's/\r$//' "$out/guest.log" | grep -v -e '^ok - ' -e '^not ok - ' || true
	fi

	if [ $qemu_rc -eq 124 ]; then
		echo "not ok - $tag guest finished within ${timeout_s}s (timed out; see $out/console.log)"
	elif ! grep -q '^HOTSTACK-VM-DONE' "$out/guest.log"; then
		echo "not ok - $tag guest finished (qemu exit $qemu_rc, no completion mark; see $out/console.log)"
		tail -n 30 "$out/console.log" | sed 's/^/# /'
	else
		echo "ok - $tag guest booted, ran and powered off in ${elapsed}s"
	fi

	# Kernel reports: BUG/WARNING (lockdep, KASAN, atomic sleep and
	# kmemleak all print one of these), oopses, panics, stalls. Not
	# "INFO: NMI handler ... took too long": a timing note any NMI handler
	# gets under emulation on a busy host, not a defect.
	bad='BUG:|WARNING:|INFO: |Call Trace|Kernel panic|Oops|KASAN:|UBSAN:|DEBUG_LOCKS_WARN_ON|turning off the locking correctness validator|kmemleak: [0-9]+ new suspected'
	benign='INFO: NMI handler \(.*\) took too long to run'
	grep -E "$bad" "$out/console.log" | grep -v -E "$benign" >"$out/reports.log" || true
	if [ -s "$out/reports.log" ]; then
		echo "not ok - $tag console clean of BUG/WARNING/lockdep/KASAN (see $out/console.log)"
		head -n 20 "$out/reports.log" | sed 's/^/# /'
	else
		echo "ok - $tag console clean of BUG/WARNING/lockdep/KASAN"
	fi
} | tee "$out/verdict.tap"
! grep -q '^not ok' "$out/verdict.tap"
exit
}
