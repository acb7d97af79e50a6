# SPDX-License-Identifier: GPL-2.0
# make check's overhead check, in the icount VM: the floors and hotstack
# on the same loop (tests/bench/check.sh): the large-read loop, whose
# iterations are jittered so that every sampler's samples spread over it
# (the small loop, exact, let the samples of each sampler land on a few
# places of its own: hotstack came out under the unwind floor there).
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
# As many iterations as take 0.3 s unprofiled (3000 samples at 10 kHz),
# whatever the kernel's read() of /dev/zero costs (6.1's four times 6.12's).
set -- $(HS_BENCH_WORK=large hs_bench none 10000 1000)
iters=$((300000000 * 1000 / $3))
for mode in none empty unwind hotstack-ip hotstack none; do
	echo "BENCH $(HS_BENCH_WORK=large hs_bench $mode 10000 $iters)"
done
# The table's worst case: user stacks that hash alike whatever the seed
# (hs_bench.c: collide), against the same spin unprofiled.
for mode in spin-collide collide; do
	echo "COLLIDE $(hs_bench $mode 1000 100000)"
done
# A budget of 1% at 10 kHz asked for: the loop for about 3 s after the
# budget's first window (hs_bench runs it once untimed first), timed in
# three parts of about a second.
for mode in none hotstack-budget; do
	echo "BUDGET $(HS_BENCH_WINDOWS=3 hs_bench $mode 10000 1800000)"
done
# The budget from the first sample, from outside, as users run it: the
# syscall loop for 0.2 s and for 2 s (in two parts) under record -a and
# record -- CMD, each against the same loop unprofiled. The 0.2 s runs
# three times over (tests/bench/check.sh takes the medians): a
# millisecond of anything else on the guest's one CPU is 0.5% of it.
set -- $(hs_bench none 10000 200000)
for ms in 200 200 200 2000; do
	iters=$((200000 * ms * 1000000 / $3))
	parts=$((ms >= 1000 ? ms / 1000 : 1))
	echo "FIRST none $ms $(HS_BENCH_WINDOWS=$parts hs_bench none 10000 $iters)"
	for how in a cmd; do
		opt=
		[ $how = a ] && opt=-a
		line=$(HS_BENCH_WINDOWS=$parts hotstack record -e cpu-clock -F 10000 --budget 1% $opt \
			-o /tmp/first.folded -- hs_bench none 10000 $iters 2>/tmp/first.err)
		echo "FIRST $how $ms $line"
		sed 's/^/# /' /tmp/first.err
	done
done
# Through hotstack record, without and with the budget, about 1 s of the
# syscall loop, exact (no jitter of its own: the sampler's periods are
# jittered, so that neither rate samples the same few places of it): the
# functions on top of the two profiles (their share of the samples as
# leaves, idle left out), with the samples each took (a budget's weight
# out of them).
set -- $(hs_bench none 10000 100000)
iters=$((1000000000 * 100000 / $3))
for name in full budget; do
	opt=
	[ $name = budget ] && opt="--budget 1%"
	hotstack record -e cpu-clock -F 10000 -a $opt -o /tmp/$name.folded -- \
		hs_bench none 10000 $iters >/tmp/$name.out 2>&1 || sed 's/^/# /' /tmp/$name.out
	w=$(sed -n 's/.*a sample counts \([0-9]*\).*/\1/p' /tmp/$name.out)
	# Not the idle task's (pv_native_safe_halt on 6.12): how long the CPU
	# idles around the command depends on the timers pending (icount skips
	# idle time to the next).
	awk -v name=$name -v w=${w:-1} '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";") }
		f[k] ~ /^(pv_native_safe_halt|native_safe_halt|default_idle|arch_cpu_idle)$/ { next }
		{ leaf[f[k]] += n; total += n }
		END { for (l in leaf) printf "TOP %s %s %.2f %d\n", name, l, 100 * leaf[l] / total, total / w }' \
		/tmp/$name.folded | sort -k4 -n -r | head -n $([ $name = full ] && echo 5 || echo 40)
done
# Off-CPU time: the pipe ping-pong (two context switches a round trip on
# the one CPU) for about 0.2 s, unprofiled and under record --off-cpu -a:
# the probe's cost a switch (tests/bench/check.sh).
set -- $(HS_BENCH_WORK=pingpong hs_bench none 10000 1000)
iters=$((200000000 * 1000 / $3))
echo "OFFCPU none $iters $(HS_BENCH_WORK=pingpong hs_bench none 10000 $iters)"
line=$(HS_BENCH_WORK=pingpong hotstack record --off-cpu -a -o /tmp/off.folded -- \
	hs_bench none 10000 $iters 2>/tmp/off.err)
echo "OFFCPU record $iters $line"
sed 's/^/# /' /tmp/off.err
# ... and with a budget, as users run it, from the first switch: 2 s of
# the ping-pong, each against the same unprofiled just before (a second
# apart: the work a run leaves the kernel, its memory freed, done first),
# and the share of the CPU its summary says (tests/bench/check.sh). 3%,
# and 1%: less than what the tracepoint's call alone costs this loop.
iters=$((iters * 10))
for b in 3 1; do
	sleep 1
	echo "OFFBUDGET none$b $iters $(HS_BENCH_WORK=pingpong hs_bench none 10000 $iters)"
	sleep 1
	line=$(HS_BENCH_WORK=pingpong hotstack record --off-cpu --budget $b% -a \
		-o /tmp/offb.folded -- hs_bench none 10000 $iters 2>/tmp/offb.err)
	share=$(sed -n 's/.* budget [0-9.]*%: \([0-9.]*\)% CPU.*/\1/p' /tmp/offb.err)
	echo "OFFBUDGET budget$b $iters $line ${share:-0}"
	sed 's/^/# /' /tmp/offb.err
done
# Off-CPU stacks on the path users get: this boot holds no probe of its
# own on sched_switch (tests/vm/guest/offcpu_path.sh).
. /tests/lib.sh
. /tests/offcpu_path.sh
