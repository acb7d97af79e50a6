# SPDX-License-Identifier: GPL-2.0
# Off-CPU stacks on the path users get. The suites' boots hold two probes
# on sched_switch for good (init: hs_vmtest hold-keys), so that a session's
# probe is always called by the tracepoint's iterator; the icount boots
# hold none, and run this: a session's probe alone (called by __schedule()
# through a static call, where the kernel has them: x86), then the same
# beside a second session's (the iterator calls both). The stacks are the
# same either way, from __schedule, and name no iterator. Sourced by
# tests/bench/quick.sh (x86) and pmu_icount.sh (arm64, whose kernels
# have no static calls: the iterator every time), hotstack.ko loaded.

if grep -q ' __tracepoint_sched_switch$' /proc/kallsyms; then
	# offstacks FILE: the sleep's stacks, without their times.
	offstacks() {
		awk '/^\[sleep\];.*hrtimer_nanosleep/ { sub(/ [0-9]+$/, ""); print }' "$1" | sort -u
	}
	hotstack record --off-cpu -o /tmp/path1.folded -- sleep 0.05 >/tmp/path.out 2>&1
	echo "# one probe: $(offstacks /tmp/path1.folded | head -1)"
	# A second session, on every CPU, until it is told to stop.
	hotstack record --off-cpu -a -o /tmp/path-a.folded >/tmp/path-a.out 2>&1 &
	bgrec=$!
	n=0
	while [ $n -lt 200 ] && ! hotstack status 2>/dev/null | grep -q ' running '; do
		sleep 0.05
		n=$((n + 1))
	done
	hotstack record --off-cpu -o /tmp/path2.folded -- sleep 0.05 >>/tmp/path.out 2>&1
	kill -INT $bgrec
	wait $bgrec
	echo "# two probes: $(offstacks /tmp/path2.folded | head -1)"
	offstacks /tmp/path1.folded >/tmp/path1.st
	offstacks /tmp/path2.folded >/tmp/path2.st
	check "off-CPU, one probe on sched_switch: the sleep's stacks end in __schedule" \
		sh -c '[ -s /tmp/path1.st ] && ! grep -v ";__schedule$" /tmp/path1.st'
	check "off-CPU beside a second session's probe: the same stacks" \
		sh -c '[ -s /tmp/path2.st ] && cmp /tmp/path1.st /tmp/path2.st'
	check "off-CPU: no stack names the tracepoint's iterator" \
		sh -c '! grep -h __traceiter_ /tmp/path1.folded /tmp/path2.folded /tmp/path-a.folded'
	[ -s /tmp/path2.st ] || sed 's/^/#   /' /tmp/path.out /tmp/path-a.out
else
	echo "# off-CPU path: this kernel has no sched_switch tracepoint"
fi
