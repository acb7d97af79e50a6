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
	for mode in none empty unwind hotstack-ip hotstack none; do
		run $work $mode $iters
	done
	tool $work record $iters rec
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
