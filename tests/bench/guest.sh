# SPDX-License-Identifier: GPL-2.0
# In the icount VM: every sampler on the same work, one line each.
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
iters=${BENCH_ITERS:-1000000}
for mode in none empty unwind hotstack-ip hotstack none; do
	echo "BENCH $(hs_bench $mode 10000 $iters)"
done
