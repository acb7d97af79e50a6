# SPDX-License-Identifier: GPL-2.0
# In the icount VM, booted from a Debian root (tests/bench/run.sh): off-CPU
# time as each profiler gives it, on the pipe ping-pong (two context
# switches a round trip on the one CPU), one line each:
#   OFFCPU NAME ITERS none HZ ELAPSED_NS ...
# the loop's own time under the profiler, against the same loop
# unprofiled before and after. Each profiler runs as its users run it:
# hotstack record --off-cpu -a -- the loop (and with --wakers); bcc's
# offcputime and offwaketime -K (Debian's
# bpfcc-tools: a kprobe on finish_task_switch, the stack walked when the
# thread comes back, the time summed in BPF maps) started, attached, then
# the loop, then Ctrl-C; and a bpftrace script of the same method on
# sched_switch.
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
scale=${BENCH_SCALE:-1}
iters=$((20000 * scale))
# By its path: bpftrace -c refuses a name two directories of PATH have
# (/bin and /usr/bin are one in a Debian root).
loop="$(command -v hs_bench) none 10000 $iters"

# offcpu NAME CMD...: the loop's line under CMD (hs_bench's: MODE HZ
# ELAPSED_NS SWITCHES 0).
offcpu() {
	name=$1
	shift
	line=$(HS_BENCH_WORK=pingpong "$@" 2>/tmp/off.err | grep -E '^(none|switch-[a-z]+) ')
	if [ -n "$line" ]; then
		echo "OFFCPU $name $iters $line"
	else
		echo "# offcpu $name failed:" && sed 's/^/#   /' /tmp/off.err | tail -5
	fi
}

# bcc TOOL ARGS...: the loop while TOOL-bpfcc ARGS runs (offcputime, or
# offwaketime: the same, and the waker's stack from sched_waking, joined
# at the switch-in); its stacks must show the loop's (its comm, and
# pipe_read, where it waits).
# In a script its Ctrl-C would be ignored (sh ignores SIGINT for what it
# starts in the background): env gives it back.
bcc() {
	tool=$1
	shift
	# Not the last run's header: its output file is made by the child.
	rm -f /tmp/bcc.out
	env --default-signal=INT PYTHONUNBUFFERED=1 "$tool-bpfcc" "$@" \
		>/tmp/bcc.out 2>/tmp/bcc.err &
	pid=$!
	# Attached once it says so (it compiles its program first: seconds).
	i=0
	while ! grep -q '^Tracing' /tmp/bcc.out && kill -0 $pid 2>/dev/null && [ $i -lt 6000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if grep -q '^Tracing' /tmp/bcc.out; then
		HS_BENCH_WORK=pingpong $loop
	fi
	kill -INT $pid 2>/dev/null
	wait $pid
	if ! grep -q 'hs_bench' /tmp/bcc.out || ! grep -q 'pipe_read' /tmp/bcc.out; then
		echo "$tool-bpfcc $* gave no stack of the loop:" >&2
		tail -n 5 /tmp/bcc.err /tmp/bcc.out >&2
		return 1
	fi
}

bt_off='tracepoint:sched:sched_switch {
	@t[args->prev_pid] = nsecs; @s[args->prev_pid] = kstack;
	$t = @t[args->next_pid];
	if ($t) {
		@[@s[args->next_pid]] = sum(nsecs - $t);
		delete(@t[args->next_pid]); delete(@s[args->next_pid]);
	}
}'
offcpu none $loop
# The floors: the probe alone, and the walk of the stack each switch-out.
offcpu switch-empty hs_bench switch-empty 1 $iters
offcpu switch-unwind hs_bench switch-unwind 1 $iters
offcpu record hotstack record --off-cpu -a -o /tmp/off.folded -- $loop
offcpu record-both hotstack record --off-cpu --stacks both -a -o /tmp/off.folded -- $loop
offcpu bcc-k bcc offcputime -K
offcpu bcc bcc offcputime
# Who woke each wait: every switch-in of the ping-pong ends a wait the
# other thread's write woke.
offcpu record-wakers hotstack record --off-cpu --wakers -a -o /tmp/off.folded -- $loop
offcpu bcc-wakers-k bcc offwaketime -K
offcpu bpftrace bpftrace -e "$bt_off" -c "$loop"
offcpu none $loop
