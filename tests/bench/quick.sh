# SPDX-License-Identifier: GPL-2.0
# make check's overhead check, in the icount VM: the floors and hotstack
# on the same syscall loop, 2 x 10^5 iterations (tests/bench/check.sh).
insmod /tests/hotstack.ko || exit 1
insmod /tests/hs_bench.ko || exit 1
for mode in none empty unwind hotstack-ip hotstack none; do
	echo "BENCH $(hs_bench $mode 10000 200000)"
done
# A budget of 1% at 10 kHz asked for: the loop for about 2 s after the
# budget's first window (hs_bench runs it once untimed first).
for mode in none hotstack-budget; do
	echo "BUDGET $(hs_bench $mode 10000 1200000)"
done
