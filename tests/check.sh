#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: install what is missing, build, lint, host unit tests (with
# the man pages and the flame graph in headless chromium), the flame graph
# of a 50 MB profile in chromium, the VM suite on Debian's generic and
# PREEMPT_RT kernels, on the x86_64 debug kernel and on arm64 (plain and
# debug, with the PMU's NMIs), the DKMS build loaded in the VM, and the
# Debian packages (tests/deb.sh: make install, make deb, their contents,
# lintian, DKMS of the packaged source) and the agent's unit from them under
# systemd (tests/vm/systemd.sh). Every step prints TAP lines; the last line of
# output is "N passed, N failed" and the exit status is non-zero on any
# failure.
#
# HOTSTACK_KERNELS overrides the list of VM kernels (default: generic rt
# debug arm64 arm64-debug).
set -uo pipefail
# Parsed whole before it runs: editing this file mid-run cannot derail it.
{

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out=${HOTSTACK_OUT:-$repo/out}
mkdir -p "$out"
log=$out/check.log
: >"$log"
kernels=${HOTSTACK_KERNELS:-generic rt debug arm64 arm64-debug}

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

build() {
	make -s -C "$repo/userspace" && echo "ok - build the hotstack tool (-Wall -Wextra -Werror)" &&
		make -s module KCFLAGS=-Werror >"$out/build.log" 2>&1 &&
		! grep -q -i 'warning' "$out/build.log" &&
		echo "ok - build hotstack.ko (W=1 -Werror) against $(tests/kdir.sh)" ||
		{ cat "$out/build.log"; return 1; }
}

start=$(date +%s)
if step deps tests/deps.sh; then
	# The kernels this run builds (arm64 for lint, and the debug kinds),
	# built ahead in the background while the first steps leave CPU time
	# free; kernel.sh's locks make a step that needs one wait for it. Its
	# own step reports a build that failed.
	ahead=arm64
	for k in debug arm64-debug; do
		case " $kernels " in *" $k "*) ahead="$ahead $k" ;; esac
	done
	(for k in $ahead; do
		nice -n 10 tests/vm/kernel.sh "$k" >/dev/null 2>>"$out/kernels-ahead.log" || true
	done) &
	ahead_pid=$!
	step build build
	step lint tests/lint.sh
	step unit make -s -C tests/unit run
	# The flame graph of a 50 MB profile in headless chromium (the small
	# ones are in the unit step).
	step "svg in chromium, 50 MB profile" tests/unit/svg_browser.py big
	for k in $kernels; do
		step "vm $k" tests/vm/run.sh "$k"
	done
	# 200 possible CPUs, 2 online: tables are for the online ones.
	case " $kernels " in *" generic "*)
		step "vm generic, 200 possible CPUs" env HOTSTACK_OUT="$out/big" \
			HOTSTACK_VM_SMP=2,maxcpus=200 tests/vm/run.sh generic \
			--script tests/vm/guest/bigmachine.sh ;;
	esac
	# QEMU's arm64 PMU counts instructions only under -icount.
	case " $kernels " in *" arm64 "*)
		step "vm arm64 icount" env HOTSTACK_OUT="$out/icount" tests/vm/run.sh arm64 \
			--icount --script tests/vm/guest/pmu_icount.sh ;;
	esac
	# The cost per sample against the README's goals (icount: deterministic).
	step overhead tests/bench/check.sh
	step dkms tests/dkms.sh
	step deb tests/deb.sh
	# The packages make deb built, installed in a Debian root that boots
	# systemd, and the agent's unit run there.
	case " $kernels " in *" generic "*)
		step "vm generic, systemd" tests/vm/systemd.sh ;;
	esac
	wait "$ahead_pid"
fi

passed=$(grep -c '^ok' "$log")
failed=$(grep -c '^not ok' "$log")
echo "# make check took $(($(date +%s) - start))s; log in $log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
exit
}
