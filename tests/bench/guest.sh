# SPDX-License-Identifier: GPL-2.0
# In the icount VM: every sampler on the same work, one line each:
#   RUN WORK MODE HZ ELAPSED_NS SAMPLES HANDLER_NS
# for each workload (HS_BENCH_WORK, tests/bench/hs_bench.c), then the
# curves (cost against depth and against distinct stacks) and the worst
# case. The tool runs as users run it: hotstack record -a -- the loop.
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
insmod /tests/hs_workload.ko || exit 1
scale=${BENCH_SCALE:-1}

# run WORK MODE ITERS [HZ]: one bare run of hs_bench (floors, bare sessions).
run() {
	echo "RUN $1 $(HS_BENCH_WORK=$1 hs_bench $2 ${4:-10000} $3)"
}

# tool WORK NAME ITERS CMD...: the loop under a profiler's command line;
# its samples are those a 10 kHz clock gives during the loop (the
# profilers' own counts include their start and exit).
tool() {
	work=$1 name=$2 iters=$3
	shift 3
	line=$(HS_BENCH_WORK=$work "$@" -- hs_bench none 10000 "$iters" 2>/tmp/tool.err |
		grep '^none ')
	set -- $line
	if [ -n "$line" ]; then
		echo "RUN $work $name 10000 $3 $(($3 / 100000)) 0"
	else
		echo "# $work $name failed:" && sed 's/^/#   /' /tmp/tool.err | tail -5
	fi
}

rec() { hotstack record -e cpu-clock -F 10000 -a -o /tmp/bench.folded "$@"; }
perf_rec() { perf record -a -F 10000 -o /tmp/perf.data "$@"; }
# bpftrace -c takes the command as one string (without the --).
bt() {
	prog=$1 c=
	shift
	for a; do [ "$a" = -- ] || c="$c $a"; done
	bpftrace -e "$prog" -c "${c# }"
}
bt_k() { bt 'profile:hz:10000 { @[kstack] = count(); }' "$@"; }
bt_ip() { bt 'profile:hz:10000 { @ = count(); }' "$@"; }

for spec in small:$((250000 * scale)) large:$((25000 * scale)) faults:$((12000 * scale)); do
	work=${spec%%:*} iters=${spec#*:}
	for mode in none empty empty-jitter unwind unwind-jitter hotstack-ip hotstack none; do
		run $work $mode $iters
	done
	tool $work record $iters rec
	# Each ratio to the unwind floor from medians of three runs: a run's
	# figure moves from one run to the next (record on the small loop: by
	# up to 1.5%).
	for i in 2 3; do
		run $work unwind-jitter $iters
		run $work hotstack $iters
		tool $work record $iters rec
	done
	tool $work record-both $iters rec --stacks both
	tool $work record-ip $iters rec --max-depth 1
	# From the first sample: the budget starts at the rate it allows.
	tool $work record-budget $iters rec --budget 1%
	if command -v perf >/dev/null; then
		tool $work perf-k $iters perf_rec -g --kernel-callchains
		tool $work perf-ku $iters perf_rec -g
		tool $work perf-ip $iters perf_rec
		rm -f /tmp/perf.data
	fi
	if command -v bpftrace >/dev/null; then
		# bpftrace -c takes one string: the loop through env(1).
		tool $work bpftrace-k $iters bt_k env HS_BENCH_WORK=$work
		tool $work bpftrace-ip $iters bt_ip env HS_BENCH_WORK=$work
	fi
done

# User stacks: uw_tree (tests/vm/uw_tree.c) built with frame pointers
# and without, the same calls every run, its stacks 10 and 20 frames deep
# (depth 4 and 14 below _start, __libc_start_main, its start code, main
# and uw_run), recorded as users record them: frame pointers (--call-graph
# fp) on the frame-pointer build, unwind tables (the default) on both, and
# perf --call-graph dwarf (8 KiB of stack copied a sample) on the one
# without. One line each:
#   USER BUILD DEPTH MODE ELAPSED_NS SAMPLES [BYTES_PER_SAMPLE]
# Addresses the same every run (ASLR off): where a CPU's rule cache
# (direct-mapped by address, module/uwtab.h) has two frames collide
# depends on them, and moved a run's figure by 4 ns a frame.
echo 0 >/proc/sys/kernel/randomize_va_space
ucalls=$((1000 * scale))
urun() {
	build=$1 depth=$2 mode=$3
	shift 3
	line=$("$@" -- uw_tree_$build --time -c $ucalls 0 $depth 1 spin 2>/tmp/u.err |
		grep '^uw_tree ')
	set -- $line
	if [ -n "$line" ]; then
		# perf's own count of samples, and the bytes it wrote.
		bytes=$(sed -n 's/.*wrote \([0-9.]*\) MB .* (\([0-9]*\) samples).*/\1 \2/p' /tmp/u.err |
			awk '$2 { printf " %.0f", $1 * 1048576 / $2 }')
		echo "USER $build $depth $mode $2 $(($2 / 100000))$bytes"
	else
		echo "# user $build $depth $mode failed:" && sed 's/^/#   /' /tmp/u.err | tail -5
	fi
}
rec_u() { hotstack record -e cpu-clock -F 10000 --stacks user -o /tmp/u.folded "$@"; }
perf_u() { perf record -e cpu-clock -F 10000 --call-graph dwarf -N -o /tmp/perf.data "$@"; }
for depth in 4 14; do
	urun fp $depth none env
	urun nofp $depth none env
	urun fp $depth fp rec_u --call-graph fp
	urun fp $depth tables rec_u
	urun nofp $depth tables rec_u
	command -v perf >/dev/null && urun nofp $depth perf-dwarf perf_u
	rm -f /tmp/perf.data
done
# The whole system's unwind tables: record -a while a dozen distinct
# binaries run (the tool's summary says the tables' size).
hotstack record -a -e cpu-clock -F 1000 --stacks user -d 6 -o /tmp/all.folded 2>/tmp/all.err &
rec=$!
sleep 1
seq 1 200000 >/tmp/in.txt
for p in uw_tree_fp uw_tree_nofp uw_tree_stripped; do $p 0.3 4 2 spin,libc; done
/usr/bin/xz -T1 -1 -c /tmp/in.txt >/dev/null
/usr/bin/sha256sum /tmp/in.txt >/dev/null
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'sum(range(300000))'
[ -x /usr/bin/perf ] && /usr/bin/perf --version >/dev/null
[ -x /usr/bin/debuginfod ] && /usr/bin/debuginfod --version >/dev/null
hs_bench none 1000 20000 >/dev/null
wait $rec
echo "UWALL $(sed -n 's/.*; \([0-9]*\) tables (\([0-9.]*\) MiB) of \([0-9]*\) processes.*/\1 \2 \3/p' /tmp/all.err)"

# Curves, at 1 kHz (a sample of 1024 frames takes about half a
# millisecond here): depth (the test module's recursion, one stack, every
# frame walked and kept), and distinct stacks up to a 4096-entry table's
# capacity (3072), at depth 16.
for depth in 8 64 256 1024; do
	for mode in none unwind hotstack; do
		HS_BENCH_DEPTH=1024 run deep:$depth:1 $mode $((2000 * scale)) 1000
	done
done
for patterns in 1 64 1024 3072; do
	for mode in none hotstack; do
		run deep:16:$patterns $mode $((2000 * scale / patterns + 1)) 1000
	done
done

# The worst case: a hostile user stack with collapse at max_depth 1024 and
# at the tool's default 127, at 1 kHz, against the same spin unprofiled.
for mode in spin worst worst127; do
	echo "RUN worst $(hs_bench $mode 1000 $((100000 * scale)))"
done
# The table's worst case: stacks that hash alike whatever the seed, more
# than the 64 entries a probe sequence compares (hs_bench.c: collide).
for mode in spin-collide collide; do
	echo "RUN worst $(hs_bench $mode 1000 $((200000 * scale)))"
done

# The agent's own cost with a node's worth of containers: 500 containers'
# processes (hs_vmtest cgnaps: each in its docker-ID.scope, napping 1 s at
# a time) and a busy dd, the agent as a node runs it (intervals of 10 s,
# one profile per container, written to a directory): its CPU time
# (every thread's schedstat) over intervals 2 to 6 against the guest's
# time, and its peak memory (VmHWM). Once sampling the CPU (-F 99, kernel
# and user stacks: few groups have samples), once timing off-CPU waits
# (every group has its naps' stacks each interval).
#   AGENT NAME CPU_NS ELAPSED_NS VMHWM_KB GROUPS
. /tests/lib.sh
cg=/sys/fs/cgroup
grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg
mkdir -p $cg/system.slice
# until_log FILE ERE: wait (at most 600 s of guest time) for a line.
until_log() {
	wait_for 600 grep -s -q -E "$2" "$1"
}
# (%.0f: busybox awk's %d stops at 2^31.)
cpu_ns() {
	cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}
uptime_ns() {
	awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime
}
agent_cost() {
	name=$1
	shift
	rm -rf /tmp/ag /tmp/ag.log
	hotstack agent "$@" --group-by container --output-dir /tmp/ag --keep 3 --log /tmp/ag.log &
	a=$!
	if until_log /tmp/ag.log 'interval 1 \[' && c1=$(cpu_ns $a) && t1=$(uptime_ns) &&
		until_log /tmp/ag.log 'interval 6 \['; then
		c2=$(cpu_ns $a) t2=$(uptime_ns)
		hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$a/status)
		groups=$(sed -n 's/.*interval 6 \[.* in \([0-9]*\) profiles.*/\1/p' /tmp/ag.log)
		echo "AGENT $name $((c2 - c1)) $((t2 - t1)) $hwm ${groups:-0}"
	else
		echo "# agent $name: no sixth interval" && tail -n 5 /tmp/ag.log | sed 's/^/#   /'
	fi
	kill -TERM $a
	wait $a
}
hs_vmtest cgnaps 1000 $cg/system.slice 1 500 >/tmp/cgnaps.out &
naps=$!
until_log /tmp/cgnaps.out ready
dd if=/dev/zero of=/dev/null bs=4k 2>/dev/null &
busy=$!
agent_cost cpu -F 99 --stacks both
agent_cost off-cpu --off-cpu
kill $busy $naps
wait $busy $naps
