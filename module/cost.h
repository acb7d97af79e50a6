/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack's figures that host unit tests check too: the overhead (the
 * share of the CPUs' time its samples took) and the memory limit's
 * reservations. Built into the module and, with a small shim, into host
 * unit tests.
 */
#ifndef _HOTSTACK_COST_H
#define _HOTSTACK_COST_H

#ifdef __KERNEL__
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/types.h>
#else
#include "kshim.h"
#endif

/*
 * hs_overhead_ppm - parts per million of @nr_cpus CPUs' time over
 * @elapsed_ns that @runs handler runs of @cost_ns each took.
 *
 * Both products pass 64 bits in sessions people run: @cost_ns x 10^6 x
 * @runs at about 5 h of handler time in all (under an hour on a 256-CPU
 * machine at 10 kHz), @elapsed_ns x @nr_cpus after 60 days on 4096 CPUs.
 * So a 128-bit product, and the CPUs divided apart: floor(floor(a / b) / c)
 * is floor(a / (b c)).
 */
static inline u64 hs_overhead_ppm(u64 cost_ns, u64 runs, u64 elapsed_ns, u32 nr_cpus)
{
	if (!elapsed_ns || !nr_cpus)
		return 0;
	return div_u64(mul_u64_u64_div_u64(cost_ns * 1000000, runs, elapsed_ns), nr_cpus);
}

/*
 * hs_memory_reserve - take @size bytes of @max for tables in @used
 *
 * Never past @max, not even for a moment: a reservation added and then
 * taken back would refuse another one that fits, and GET_INFO would show
 * more than the limit in use (the fuzzer saw 1.5 GiB of 256 MiB).
 */
static inline bool hs_memory_reserve(atomic64_t *used, s64 max, u64 size)
{
	s64 old = atomic64_read(used);

	do {
		if (size > (u64)(max - old))
			return false;
	} while (!atomic64_try_cmpxchg(used, &old, old + size));
	return true;
}

#endif
