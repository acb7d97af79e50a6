#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: install what is missing, build, lint, host unit tests (with
# the man pages and the flame graph in headless chromium), the flame graph
# of a 50 MB profile in chromium, the VM suite on every kernel of the
# support matrix (README: Debian 12's 6.1, Debian 13's 6.12 and sid's 7.x:
# Debian's generic and PREEMPT_RT kernels, debug kernels, arm64 with the
# PMU's NMIs), the overhead gate on each release's generic kernel, the
# build of every release as its users build it (tests/dkms.sh: each
# release's chroot, its compiler, dkms.conf's make line, dkms build,
# sparse for x86_64 and arm64; loaded in the VM), and the Debian packages
# (tests/deb.sh: make install, make deb, their contents, lintian, DKMS of
# the packaged source) and the agent's unit from them under systemd
# (tests/vm/systemd.sh).
# Every step prints TAP lines; the last line of output is "N passed, N
# failed" and the exit status is non-zero on any failure.
#
# The VM steps run HOTSTACK_JOBS (default 2) at a time: a guest waits on
# its conditions as much as it computes. Each step's lines are printed
# whole, in the order the steps are listed, as they finish.
#
# HOTSTACK_KERNELS overrides the list of VM kernels (default: generic rt
# debug arm64 trixie-generic trixie-rt trixie-debug trixie-arm64
# sid-generic; arm64-debug, the arm64 6.1 kernel with lockdep and KASAN,
# is left out to keep a run with an empty cache within CI's 90 minutes:
# its step took 20 of them in such a run).
set -uo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out=${HOTSTACK_OUT:-$repo/out}
mkdir -p "$out"
log=$out/check.log
: >"$log"
kernels=${HOTSTACK_KERNELS:-generic rt debug arm64 trixie-generic trixie-rt trixie-debug trixie-arm64 sid-generic}
jobs=${HOTSTACK_JOBS:-2}

# step NAME CMD...: run CMD, show and log its output; a non-zero exit with
# no failed TAP line of its own is recorded as one failure.
step() {
	local name=$1 rc before after
	shift
	echo "# === $name (at $(($(date +%s) - start)) s)" | tee -a "$log"
	before=$(grep -c '^not ok' "$log")
	"$@" 2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	after=$(grep -c '^not ok' "$log")
	if [ "$rc" -ne 0 ] && [ "$after" -eq "$before" ]; then
		echo "not ok - $name (exit status $rc)" | tee -a "$log"
	fi
	return "$rc"
}

# bg NAME CMD...: step NAME in the background, at most $jobs at once; its
# output goes to a file of its own, which flush prints and logs.
steps=$out/steps
rm -rf "$steps" && mkdir -p "$steps"
queued=()
printed=0
bg() {
	local name=$1 n=${#queued[@]}
	shift
	while [ $((n - $(ls "$steps" | grep -c '\.rc$'))) -ge "$jobs" ]; do
		flush
		sleep 2
	done
	queued+=("$name")
	echo $(($(date +%s) - start)) >"$steps/$n.start"
	(
		"$@" >"$steps/$n.out" 2>&1
		echo $? >"$steps/$n.rc.tmp"
		echo $(($(date +%s) - start)) >"$steps/$n.end"
		mv "$steps/$n.rc.tmp" "$steps/$n.rc"
	) &
}

# flush: print and log the finished steps, in the order they were started,
# up to the first one still running.
flush() {
	local name rc before after
	while [ "$printed" -lt ${#queued[@]} ] && [ -e "$steps/$printed.rc" ]; do
		name=${queued[$printed]}
		echo "# === $name (at $(cat "$steps/$printed.start") s, took $(($(cat "$steps/$printed.end") - $(cat "$steps/$printed.start"))) s)" |
			tee -a "$log"
		before=$(grep -c '^not ok' "$log")
		tee -a "$log" <"$steps/$printed.out"
		rc=$(cat "$steps/$printed.rc")
		after=$(grep -c '^not ok' "$log")
		if [ "$rc" -ne 0 ] && [ "$after" -eq "$before" ]; then
			echo "not ok - $name (exit status $rc)" | tee -a "$log"
		fi
		printed=$((printed + 1))
	done
}

# has KERNEL: whether the run boots KERNEL.
has() {
	case " $kernels " in *" $1 "*) return 0 ;; esac
	return 1
}

build() {
	make -s -C "$repo/userspace" && echo "ok - build the hotstack tool (-Wall -Wextra -Werror)" &&
		make -s module KCFLAGS=-Werror >"$out/build.log" 2>&1 &&
		! grep -q -i 'warning' "$out/build.log" &&
		echo "ok - build hotstack.ko (W=1 -Werror) against $(tests/kdir.sh)" ||
		{ cat "$out/build.log"; return 1; }
}

start=$(date +%s)
if step deps tests/deps.sh; then
	# The kernels this run builds (arm64 for lint, and the debug and arm64
	# kinds) and the other releases' chroots (tests/release.sh), made
	# ahead in the background while the first steps leave CPU time free;
	# the locks of kernel.sh and release.sh make a step that needs one wait
	# for it. Its own step reports one that failed.
	ahead=arm64
	for k in debug trixie-debug trixie-arm64 arm64-debug; do
		has "$k" && ahead="$ahead $k"
	done
	(
		has sid-generic && nice -n 10 tests/release.sh sid >/dev/null 2>>"$out/kernels-ahead.log"
		for k in $ahead; do
			nice -n 10 tests/vm/kernel.sh "$k" >/dev/null 2>>"$out/kernels-ahead.log" || true
		done
	) &
	ahead_pid=$!
	step build build
	step lint tests/lint.sh
	step unit make -s -C tests/unit run
	# The flame graph of a 50 MB profile in headless chromium (the small
	# ones are in the unit step).
	step "svg in chromium, 50 MB profile" tests/unit/svg_browser.py big
	# The VM steps, the longest first, two at a time: the debug kernels'
	# suites take the longest (and wait for their kernels on a first run).
	for k in debug trixie-debug arm64-debug $kernels; do
		has "$k" || continue
		case " ${queued[*]} " in *" vm $k "*) continue ;; esac
		bg "vm $k" tests/vm/run.sh "$k"
	done
	# 200 possible CPUs, 2 online: tables are for the online ones.
	has generic && bg "vm generic, 200 possible CPUs" env HOTSTACK_OUT="$out/big" \
		HOTSTACK_VM_SMP=2,maxcpus=200 tests/vm/run.sh generic \
		--script tests/vm/guest/bigmachine.sh
	# 64 CPUs at once storing the same stacks in one store; its memory.
	has generic && bg "vm generic, 64 CPUs" env HOTSTACK_OUT="$out/cpus64" \
		HOTSTACK_VM_SMP=64 tests/vm/run.sh generic --script tests/vm/guest/store64.sh
	# QEMU's arm64 PMU counts instructions only under -icount.
	has arm64 && bg "vm arm64 icount" env HOTSTACK_OUT="$out/icount" tests/vm/run.sh arm64 \
		--icount --script tests/vm/guest/pmu_icount.sh
	# The cost per sample against the README's goals (icount: deterministic,
	# whatever else runs beside it), on each release's generic kernel.
	for k in generic trixie-generic sid-generic; do
		has "$k" && bg "overhead $k" tests/bench/check.sh "$k"
	done
	# Every release's build as its users make it, each loaded in the VM.
	bg dkms tests/dkms.sh
	# The packages; then the packages make deb built, installed in a
	# Debian root that boots systemd, and the agent's unit run there.
	if has generic; then
		bg "deb, and the agent's unit under systemd" sh -c 'tests/deb.sh && tests/vm/systemd.sh'
	else
		bg deb tests/deb.sh
	fi
	while [ "$printed" -lt ${#queued[@]} ]; do
		flush
		sleep 2
	done
	wait "$ahead_pid"
fi

passed=$(grep -c '^ok' "$log")
failed=$(grep -c '^not ok' "$log")
# The failures again, each with its first lines of diagnostics, where
# the last lines of the output (all a CI log may keep) show them.
if [ "$failed" -gt 0 ]; then
	echo "# the checks that failed (of $log):"
	awk '/^not ok/ { n++; d = 0; if (n <= 40) print; next }
		n && n <= 40 && /^#/ && d < 4 { d++; print "  " $0; next }
		{ d = 4 }' "$log"
	[ "$failed" -le 40 ] || echo "# ... and $((failed - 40)) more"
fi
echo "# make check took $(($(date +%s) - start))s; log in $log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
exit
}
