#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU (TCG) with hotstack and run the in-guest suite.
#
#   tests/vm/run.sh [generic|rt|debug|arm64|arm64-debug] [--icount] [--script FILE]
#
# Builds hotstack.ko (and the test modules) against that kernel (cross-built
# for the arm64 kinds, which boot qemu-system-aarch64 -M virt with a GICv3
# and pseudo-NMIs, so PMU overflows arrive as NMIs), packs a busybox initramfs with the module, the tool, the test programs and their
# shared libraries, boots it and brings back:
#   out/vm-KERNEL/console.log   the serial console (kernel messages)
#   out/vm-KERNEL/guest.log     what the tests printed (TAP lines)
# Prints TAP lines ("ok - ..." / "not ok - ...") for every guest test, plus
# the harness's own checks: the guest finished in time, no panic, no BUG:,
# WARNING:, Call Trace, lockdep or KASAN line on the console, and each
# guest script ran to its end with its plan's count of checks
# (tests/vm/plan.sh, tests/vm/plan.txt).
#
# --icount: deterministic mode for benchmarks (-icount shift=0,sleep=off
#           -smp 1): guest time counts guest instructions.
# --script: run FILE in the guest instead of the test suite (make run).
# HOTSTACK_VM_BINS: more host programs to put in the guest's /bin, with
#           their shared libraries.
# HOTSTACK_VM_DEBIAN: Debian's own programs (stripped, no frame pointers)
#           at their real paths, for the user-stack unwinding tests:
#           words of xz (/usr/bin/xz, liblzma), sha256sum (coreutils'),
#           python3 (python3.11 and the few stdlib files a script that
#           imports nothing needs; x86_64 only) and perf (linux-perf;
#           x86_64 only), debuginfod (the server, and the client libdw
#           loads; x86_64 only), or none. Default: xz sha256sum, and
#           python3, perf and debuginfod on the generic kernel (Debian
#           12's: the comparison with perf --call-graph dwarf, symbols
#           from a debuginfod server). The x86_64 guests get the
#           host's (Debian 12's), the arm64 ones Debian 12's arm64 builds
#           (tests/vm/kernel.sh). The guest's /tests/env names them
#           (HOTSTACK_DEBIAN). Debian's perf there: "perf record -N" (no
#           build-ID cache in $HOME, which is /) and "perf script
#           --no-inline" (inlined frames want binutils' addr2line, which
#           the guest lacks: perf script dies of SIGPIPE).
# HOTSTACK_VM_EXTRA: "SRC:NAME ..." more files for the guest's /tests.
# HOTSTACK_VM_QEMU: more options for QEMU.
# HOTSTACK_VM_MEM: the guest's memory in MiB (default 2048).
# HOTSTACK_VM_SYSROOT: a root to boot systemd from (tests/vm/sysroot.sh):
#           the initramfs is that root plus the above; systemd is PID 1 and
#           its unit hotstack-test.service runs the script.
set -euo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

repo=$(cd "$(dirname "$0")/../.." && pwd)
kind=generic
icount=0
script=
while [ $# -gt 0 ]; do
	case $1 in
	generic | rt | debug | arm64 | arm64-debug | trixie-* | sid-*) kind=$1 ;;
	--icount) icount=1 ;;
	--script) script=$2; shift ;;
	*) echo "usage: $0 [generic|rt|debug|arm64|arm64-debug] [--icount] [--script FILE]" >&2; exit 2 ;;
	esac
	shift
done

out=${HOTSTACK_OUT:-$repo/out}/vm-$kind
# The kind without its release (trixie-generic: generic).
case $kind in
trixie-* | sid-*) flavour=${kind#*-} ;;
*) flavour=$kind ;;
esac
# A hang detector, not a speed test: the debug kernels (KASAN, lockdep,
# kmemleak) run the suite in 8 minutes on a quiet host and 15-30 beside
# the other guests and a kernel build (a cold make check), the others in
# 3-10.
case $kind in
*debug) timeout_s=${HOTSTACK_VM_TIMEOUT:-2700} ;;
*) timeout_s=${HOTSTACK_VM_TIMEOUT:-1200} ;;
esac
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

# Debian's own programs for the guest (HOTSTACK_VM_DEBIAN, above): from
# the host for x86_64, from Debian's arm64 packages kernel.sh unpacked
# (DEBIAN_ROOT) for arm64. Not in a Debian root (HOTSTACK_VM_SYSROOT),
# which has its own.
debian_root=${DEBIAN_ROOT:-}
python_kind=$([ "$kind" = generic ] && echo 1 || true)
case ${HOTSTACK_VM_DEBIAN-default} in
default) debian="xz sha256sum${python_kind:+ python3 perf debuginfod}" ;;
none | 0 | "") debian= ;;
*) debian=$HOTSTACK_VM_DEBIAN ;;
esac
[ -n "${HOTSTACK_VM_SYSROOT:-}" ] && debian=
for prog in $debian; do
	case $prog in
	xz | sha256sum) ;;
	python3 | perf | debuginfod)
		[ "$KARCH" = x86_64 ] || fail_setup "HOTSTACK_VM_DEBIAN: no $prog for $KARCH guests" ;;
	*) fail_setup "HOTSTACK_VM_DEBIAN: unknown program '$prog' (xz sha256sum python3 perf debuginfod)" ;;
	esac
done

# --- build the module and the test modules against this kernel ---------
# Everything is built from a copy of the sources in $src, for the guest's
# architecture, apart from the host's own build; for another release's
# kernel in that release's chroot (KROOT: its compiler and headers), where
# the copy is $ksrc.
src=$out/src
mkdir -p "$src/tests"
cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$repo/userspace" "$src/"
cp -r "$repo/tests/vm" "$repo/tests/bench" "$src/tests/"
[ -e "$repo/tests/kmod/Kbuild" ] && cp -r "$repo/tests/kmod" "$src/kmod"
kmake=(make -s -C "$KDIR" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" W=1 KCFLAGS=-Werror)
ksrc=$src
if [ -n "${KROOT:-}" ]; then
	ksrc=/tmp/hotstack-vm-$kind-$$
	rm -rf "${KROOT:?}$ksrc" && mkdir -p "$KROOT$ksrc"
	cp -r "$src/Kbuild" "$src/module" "$src/uapi" "$KROOT$ksrc/"
	[ -d "$src/kmod" ] && cp -r "$src/kmod" "$KROOT$ksrc/"
	kmake=("$repo/tests/release.sh" "$KRELEASE" run "${kmake[@]}")
fi
"${kmake[@]}" M="$ksrc" modules >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "hotstack.ko does not build against $KDIR"; }
if [ -d "$src/kmod" ]; then
	"${kmake[@]}" M="$ksrc/kmod" KBUILD_EXTRA_SYMBOLS="$ksrc/Module.symvers" \
		modules >>"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; fail_setup "test modules do not build against $KDIR"; }
fi
if [ "$ksrc" != "$src" ]; then
	cp "$KROOT$ksrc/hotstack.ko" "$src/"
	[ -d "$src/kmod" ] && cp "$KROOT$ksrc"/kmod/*.ko "$src/kmod/"
	rm -rf "${KROOT:?}$ksrc"
fi

# --- userspace: the tool and the in-guest test programs -----------------
# Cross builds find the guest architecture's libraries (Debian multiarch).
triplet=$(${CROSS_COMPILE}gcc -dumpmachine)
if [ -n "$CROSS_COMPILE" ]; then
	export PKG_CONFIG_LIBDIR=/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
fi
umake=(make -s CC="${CROSS_COMPILE}gcc" AR="${CROSS_COMPILE}ar")
"${umake[@]}" -C "$src/userspace" clean >>"$out/build.log" 2>&1
"${umake[@]}" -C "$src/userspace" >>"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "the hotstack tool does not build"; }
"${umake[@]}" -C "$src/tests/vm" OUT="$out/bin" >>"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail_setup "the guest test programs do not build"; }

# go tool pprof for the guest: the agent's test reads every profile it
# pushed with it. Debian's Go builds cmd/pprof statically (no cgo) for the
# guest's architecture; cached beside the kernels.
pprof_bin=
if command -v go >/dev/null 2>&1; then
	gocache=${HOTSTACK_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hotstack}
	goarch=$([ "$KARCH" = arm64 ] && echo arm64 || echo amd64)
	pprof_bin=$gocache/pprof-$(go env GOVERSION)-$goarch
	if [ ! -x "$pprof_bin" ]; then
		mkdir -p "$gocache"
		CGO_ENABLED=0 GOARCH=$goarch GOCACHE="$gocache/go-build" HOME=${HOME:-/tmp} \
			go build -ldflags=-s -o "$pprof_bin.tmp.$$" cmd/pprof >>"$out/build.log" 2>&1 &&
			mv "$pprof_bin.tmp.$$" "$pprof_bin" ||
			{ cat "$out/build.log"; fail_setup "go tool pprof does not build for $goarch"; }
	fi
fi

# --- initramfs ------------------------------------------------------------
root=$out/initramfs
sysroot=${HOTSTACK_VM_SYSROOT:-}
if [ -n "$sysroot" ]; then
	mkdir -p "$root"
	cp -a "$sysroot/." "$root/"
	cp "$repo/tests/vm/guest/hotstack-test.service" "$root/etc/systemd/system/"
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -s ../hotstack-test.service "$root/etc/systemd/system/multi-user.target.wants/"
fi
mkdir -p "$root"/{bin,sbin,usr/bin,usr/lib,usr/lib64,proc,sys,dev,tmp,root,tests,etc}
# Libraries where Debian 12 (merged /usr) has them: /lib and /lib64 are
# usr/lib and usr/lib64, so that a process's maps name
# /usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1 as on a Debian machine.
# /bin stays the busybox guest's own (busybox's applets; Debian's
# programs are in /usr/bin).
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
[ -e "$root/lib64" ] || ln -s usr/lib64 "$root/lib64"
cp "${BUSYBOX:-/bin/busybox}" "$root/bin/busybox"
cp "$repo/tests/vm/guest/init" "$root/init"
cp "$repo"/tests/vm/guest/*.sh "$root/tests/"
cp "$src/hotstack.ko" "$root/tests/"
[ -d "$src/kmod" ] && find "$src/kmod" -name '*.ko' -exec cp {} "$root/tests/" \;
cp "$src/userspace/hotstack" "$root/bin/"
# A separate debug file (uw_tree_stripped.debug) where nothing looks for
# one: a test puts it where it wants it (/usr/lib/debug, a debuginfod).
for f in "$out"/bin/*; do
	case $f in
	*.debug) cp "$f" "$root/tests/" ;;
	*) cp "$f" "$root/bin/" ;;
	esac
done
[ -n "$pprof_bin" ] && cp "$pprof_bin" "$root/bin/pprof"
# Host programs the tests want (genl from iproute2) or the script does
# (make bench: perf, bpftrace).
for bin in ${GENL:-$(command -v genl || true)} ${HOTSTACK_VM_BINS:-}; do
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
	# The kind of kernel (generic, rt, debug, arm64...), whatever its
	# release: the guest's scripts do the same on every release's.
	echo "HOTSTACK_KERNEL=$flavour"
	echo "HOTSTACK_RELEASE=${KRELEASE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}"
	echo "HOTSTACK_ARCH=$KARCH"
	# Where the tests write (see the QEMU command line below).
	echo "HOTSTACK_TAP=$([ "$KARCH" = arm64 ] && echo /dev/hvc0 || echo /dev/ttyS1)"
	echo "HOTSTACK_MODE=$([ -n "$script" ] && echo script || echo test)"
	echo "HOTSTACK_SCRIPT=${script##*/}"
	echo "HOTSTACK_HOLD_KEYS=$((!icount))"
	# Debian's own programs in /usr/bin (HOTSTACK_VM_DEBIAN).
	echo "HOTSTACK_DEBIAN=\"$debian\""
} >"$root/tests/env"
# The rest is the busybox guest's: a Debian root has its users, terminfo
# and libraries (of the same release as the host's), and is not written
# through (its absolute symlinks point into the host).
if [ -z "$sysroot" ]; then
	echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
	echo "root:x:0:" >"$root/etc/group"
	# vt100's terminfo entry (ncurses-base), for the full-screen top test's
	# pseudo-terminal, at the same path: one the guest's ncurses searches.
	for ti in /lib/terminfo/v/vt100 /usr/share/terminfo/v/vt100; do
		[ -e "$ti" ] || continue
		mkdir -p "$root${ti%/*}"
		cp -L "$ti" "$root$ti"
		break
	done

	# install_file ROOT PATH: ROOT's PATH (ROOT / for the host's own) at
	# PATH in the guest, as Debian has it: each symlink on the way a
	# symlink (liblzma.so.5 -> liblzma.so.5.4.1, /lib64/ld-linux-x86-64.so.2
	# -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2), the file it ends at
	# copied with its times (a .pyc stays valid for its .py).
	install_file() {
		local src=${1%/} path=$2 target hops=0
		while [ ! -e "$root$path" ] && [ ! -L "$root$path" ]; do
			[ -e "$src$path" ] || [ -L "$src$path" ] ||
				fail_setup "no $src$path for the guest's $path"
			mkdir -p "$root$(dirname "$path")"
			if [ ! -L "$src$path" ]; then
				cp -p "$src$path" "$root$path"
				return
			fi
			target=$(readlink "$src$path")
			ln -s "$target" "$root$path"
			case $target in
			/*) path=$target ;;
			*) path=$(dirname "$path")/$target ;;
			esac
			hops=$((hops + 1))
			[ $hops -lt 16 ] || fail_setup "too many symlinks from $src$2"
		done
	}

	# Shared libraries of every dynamic executable, at the same paths: ldd's
	# list, or for a foreign binary (which ldd cannot read) its interpreter and
	# what it needs, recursively, from the guest architecture's library
	# directories (and then Debian's packages kernel.sh unpacked).
	needed() {
		local lib dir
		if [ -z "$CROSS_COMPILE" ]; then
			ldd "$1" 2>/dev/null | grep -o '/[^ ]*' || true
			return
		fi
		readelf -l "$1" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)\]/\1/p'
		for lib in $(readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			for dir in /lib/$triplet /usr/lib/$triplet \
				${debian_root:+$debian_root/lib/$triplet $debian_root/usr/lib/$triplet}; do
				if [ -e "$dir/$lib" ]; then
					echo "$dir/$lib"
					needed "$dir/$lib"
					break
				fi
			done
		done
	}
	# And the library the tool loads itself when the agent pushes (libcurl).
	dlopened=
	for dir in /lib/$triplet /usr/lib/$triplet; do
		[ -e "$dir/libcurl.so.4" ] && dlopened=$dir/libcurl.so.4 && break
	done

	# Debian's own programs (HOTSTACK_VM_DEBIAN), each with the files it
	# reads at its real path. python3 (3.11 freezes its startup modules
	# into the binary): a script that imports nothing needs only the
	# encodings it starts with (.py, and their .pyc so that nothing is
	# compiled), and the landmarks its prefixes are found by (os.py,
	# lib-dynload/), without which it warns; about 100 KB.
	for prog in $debian; do
		case $prog in
		xz | sha256sum | perf) install_file "${debian_root:-/}" "/usr/bin/$prog" ;;
		debuginfod)
			# The server, and the client libdw loads (dlopen) when
			# DEBUGINFOD_URLS names a server.
			install_file / /usr/bin/debuginfod
			for dir in /lib/$triplet /usr/lib/$triplet; do
				[ -e "$dir/libdebuginfod.so.1" ] &&
					dlopened="$dlopened $dir/libdebuginfod.so.1" && break
			done
			;;
		python3)
			install_file / /usr/bin/python3
			# python3.11 on Debian 12: its stdlib in /usr/lib/python3.11.
			py=$(readlink /usr/bin/python3)
			pytag=cpython-$(echo "${py#python}" | tr -d .)
			py=/usr/lib/$py
			install_file / "$py/os.py"
			for f in __init__ aliases utf_8; do
				install_file / "$py/encodings/$f.py"
				install_file / "$py/encodings/__pycache__/$f.$pytag.pyc"
			done
			mkdir -p "$root$py/lib-dynload"
			;;
		esac
	done
	{
		for lib in $dlopened; do
			echo "$lib"
			needed "$lib"
		done
		for bin in "$root"/bin/* "$root"/usr/bin/*; do
			[ "$bin" = "$root/bin/busybox" ] && continue
			needed "$bin"
		done
	} | sort -u | while read -r lib; do
		if [ -n "$debian_root" ] && [ "${lib#"$debian_root"/}" != "$lib" ]; then
			install_file "$debian_root" "${lib#"$debian_root"}"
		else
			install_file / "$lib"
		fi
	done
	# Every library Debian's programs need found where the guest's
	# loader looks (no ld.so.cache there: its default directories).
	for bin in "$root"/usr/bin/*; do
		for lib in $(readelf -d "$bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -e "$root/usr/lib/$triplet/$lib" ] ||
				fail_setup "${bin#"$root"} needs $lib, which is not in the guest's /usr/lib/$triplet"
		done
	done
fi

# A whole Debian root unpacks faster in the guest without compression.
if [ -n "$sysroot" ]; then
	initrd=$out/initramfs.cpio compress=cat
else
	initrd=$out/initramfs.gz compress="gzip -1"
fi
(cd "$root" && find . | cpio -o -H newc --quiet | $compress) >"$initrd"

# --- boot -------------------------------------------------------------------
# Kernel messages on the first serial port, the tests' output apart on a
# second one (x86) or a virtio console (arm64 virt has one PL011).
append="panic=-1 oops=panic loglevel=7${sysroot:+ rdinit=/lib/systemd/systemd}"
common=(-nodefaults -m "${HOTSTACK_VM_MEM:-2048}" -kernel "$KIMAGE" -initrd "$initrd"
	-display none -no-reboot -monitor none -serial "file:$out/console.log")
if [ "$KARCH" = arm64 ]; then
	qemu=(qemu-system-aarch64 -machine virt,gic-version=3 -cpu max,pauth-impdef=on
		"${common[@]}" -append "earlycon console=ttyAMA0 irqchip.gicv3_pseudo_nmi=1 $append"
		-device virtio-serial-device -chardev "file,id=tap,path=$out/guest.log"
		-device virtconsole,chardev=tap)
else
	# No CMPXCHG16B (the kernels fall back to their emulation of it):
	# QEMU 7.2's TCG can leave garbage in RFLAGS after one, and an NMI or
	# interrupt taken right after it (6.12's SLUB fast path: cmpxchg16b
	# %gs:, then jne ends the block) pushes that garbage, TF and VM set;
	# its IRET then faults (seen in t_40_stress: RFLAGS e8576f42, the low
	# half of RAX, at kmem_cache_alloc_node_noprof after cmpxchg16b).
	# tsc=reliable (not in the deterministic mode: one vCPU, its figures
	# as they were): the TSC kept, as the vCPUs read it from the host's.
	# A loaded host stalls vCPUs, the clocksource watchdog then marks the
	# TSC unstable mid-run, and the kernel patches sched_clock's static
	# branch while it runs: QEMU 7.2's TCG ran the int3 of that patching
	# once it was done (trixie-rt in make check: "Oops: int3" at
	# sched_clock_cpu+0x9 right after "sched_clock: Marking unstable").
	x86_append="console=ttyS0 $append"
	[ $icount = 1 ] || x86_append="$x86_append tsc=reliable"
	qemu=(qemu-system-x86_64 -machine q35 -cpu max,-cx16 "${common[@]}"
		-append "$x86_append" -serial "file:$out/guest.log")
fi
if [ $icount = 1 ]; then
	qemu+=(-smp 1 -icount shift=0,sleep=off)
else
	qemu+=(-smp "$smp")
fi
# More QEMU options, word-split (for example a TCG plugin that counts
# the guest's instructions by address).
qemu+=(${HOTSTACK_VM_QEMU:-})
trap - ERR

# boot: run the guest; 125 if its init printed nothing in $boot_s seconds
# (the kernel hung before starting it) or the guest ended having printed
# nothing (the kernel died before it), else QEMU's exit status (124 when
# it timed out).
boot_s=${HOTSTACK_VM_BOOT_TIMEOUT:-300}
boot() {
	local pid waited=0
	timeout "$timeout_s" "${qemu[@]}" </dev/null >"$out/qemu.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if [ ! -s "$out/guest.log" ] && [ $waited -ge $boot_s ]; then
			kill $pid
			wait $pid
			return 125
		fi
		sleep 1
		waited=$((waited + 1))
	done
	wait $pid || return
	[ -s "$out/guest.log" ] || return 125
}

# Seen once here under TCG on arm64: the boot CPU idled for good
# early in boot, before the console or any module; once on sid's 7.2
# kernel, an oops on a breakpoint of the kernel's own text patching (int3
# in ktime_get_with_offset(), kthreadd forking) before init ran; and once
# on trixie's 6.12 after init began, before any check and before
# hotstack.ko was loaded (int3 in __schedule: init's hold-keys patches the
# sched tracepoints). That says nothing of hotstack, so it is reported and
# the guest booted once more; any other failure is the run's.
died_early() {
	! grep -q -e '^ok - ' -e '^not ok - ' -e '^HOTSTACK-VM-DONE' "$out/guest.log" &&
		grep -q -e 'Oops: ' -e 'Kernel panic' "$out/console.log" &&
		! grep -q '^\[ *[0-9.]*\] hotstack: ' "$out/console.log"
}
start=$(date +%s)
set +e
boot
qemu_rc=$?
boot_note=
if [ $qemu_rc -eq 125 ] || died_early; then
	mv "$out/console.log" "$out/console-hung.log"
	boot_note="# $tag the kernel hung or died before any check, hotstack.ko not loaded (see $out/console-hung.log): booted again"
	rm -f "$out/guest.log"
	start=$(date +%s)
	boot
	qemu_rc=$?
fi
set -e
elapsed=$(($(date +%s) - start))

# --- verdict ------------------------------------------------------------------
{
	if [ -n "$boot_note" ]; then
		echo "$boot_note"
		tail -n 5 "$out/console-hung.log" | sed 's/^/#   /'
	fi
	# The guest's own TAP lines, tagged with the kernel; a failure's first
	# lines of diagnostics with it (make check's summary, all a CI log may
	# keep, shows them).
	awk -v tag="$tag" '{ sub(/\r$/, "") }
		/^(ok|not ok) - / { d = /^not/; n = 0; sub(/ - /, " - " tag " "); print; next }
		d && /^#/ && n++ < 8' "$out/guest.log"
	# Anything the guest printed that is not a TAP line is context for a reader.
	if [ -n "$script" ]; then
		sed -e 's/\r$//' "$out/guest.log" | grep -v -e '^ok - ' -e '^not ok - ' || true
	fi

	if [ $qemu_rc -eq 125 ]; then
		echo "not ok - $tag the kernel reached init within ${boot_s}s (see $out/console.log)"
		tail -n 30 "$out/console.log" | sed 's/^/# /'
	elif [ $qemu_rc -eq 124 ]; then
		echo "not ok - $tag guest finished within ${timeout_s}s (timed out; see $out/console.log)"
	elif ! grep -q '^HOTSTACK-VM-DONE' "$out/guest.log"; then
		echo "not ok - $tag guest finished (qemu exit $qemu_rc, no completion mark; see $out/console.log)"
		tail -n 30 "$out/console.log" | sed 's/^/# /'
	else
		echo "ok - $tag guest booted, ran and powered off in ${elapsed}s"
	fi
	# Every script ran to its end, with its plan's count of checks (the
	# suite's on KERNEL, a script's on KERNEL/SCRIPT where one is planned).
	plan_key=$kind${script:+/${script##*/}}
	if [ -z "$script" ] || grep -q "^$plan_key " "$repo/tests/vm/plan.txt"; then
		"$repo/tests/vm/plan.sh" check "$plan_key" "$out/guest.log"
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
