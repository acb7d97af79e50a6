# SPDX-License-Identifier: GPL-2.0
# In the icount VM: every sampler on the same work, one line each.
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
iters=${BENCH_ITERS:-1000000}
for mode in none empty unwind hotstack-ip hotstack none; do
	echo "BENCH $(hs_bench $mode 10000 $iters)"
done
# The worst case: a hostile user stack with collapse at max_depth 1024 and
# at the tool's default 127, at 1 kHz, against the same spin unprofiled.
for mode in spin worst worst127; do
	echo "BENCH $(hs_bench $mode 1000 $((iters / 10)))"
done

# The same loop under perf and bpftrace, last: they may lower the kernel's
# perf sample rate limits for whatever comes after them.
if command -v perf >/dev/null; then
	line=$(perf record -a -g -F 10000 -o /tmp/perf.data -- hs_bench none 10000 "$iters" \
		2>/tmp/perf.err)
	samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/perf.err)
	set -- $line
	echo "BENCH perf 10000 $3 ${samples:-0} 0"
	rm -f /tmp/perf.data
fi
if command -v bpftrace >/dev/null; then
	bpftrace -e 'profile:hz:10000 { @stacks[kstack] = count(); @samples = count(); }' \
		-c "hs_bench none 10000 $iters" >/tmp/bpftrace.out 2>&1
	line=$(grep '^none ' /tmp/bpftrace.out)
	samples=$(sed -n 's/^@samples: //p' /tmp/bpftrace.out)
	set -- $line
	echo "BENCH bpftrace 10000 $3 ${samples:-0} 0"
	[ -n "$line" ] || sed 's/^/# /' /tmp/bpftrace.out | head -20
fi
