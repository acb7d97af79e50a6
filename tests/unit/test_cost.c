// SPDX-License-Identifier: GPL-2.0
/* The module's overhead figure (module/cost.h) built on the host. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../module/cost.h"

#define SEC	1000000000ULL

/* 3 us a sample at 10 kHz on each CPU: 3% of every CPU, 30000 ppm. */
static u64 ppm(u64 seconds, u32 cpus)
{
	return hs_overhead_ppm(3000, 10000ULL * seconds * cpus, seconds * SEC, cpus);
}

static void short_session(void **state)
{
	(void)state;
	assert_int_equal(ppm(10, 2), 30000);
	/* 1 run of 1 ns in 1 s of 1 CPU: 0.001 ppm, rounded down. */
	assert_int_equal(hs_overhead_ppm(1, 1, SEC, 1), 0);
	assert_int_equal(hs_overhead_ppm(1000, 1, SEC, 1), 1);
}

/* Nothing run yet, or no CPU: 0, not a division by zero. */
static void empty_session(void **state)
{
	(void)state;
	assert_int_equal(hs_overhead_ppm(3000, 0, SEC, 2), 0);
	assert_int_equal(hs_overhead_ppm(3000, 5, 0, 2), 0);
	assert_int_equal(hs_overhead_ppm(3000, 5, SEC, 0), 0);
}

/*
 * An hour on 256 CPUs: 9.2 10^9 runs, cost x 10^6 x runs is 2.8 10^19,
 * past 64 bits (so are 83 hours on 2 CPUs).
 */
static void long_session_big_machine(void **state)
{
	(void)state;
	assert_int_equal(ppm(3600, 256), 30000);
	assert_int_equal(ppm(83 * 3600, 2), 30000);
}

/* 60 days on 4096 CPUs: elapsed x CPUs is 2.1 10^19, past 64 bits too. */
static void elapsed_times_cpus(void **state)
{
	(void)state;
	assert_int_equal(ppm(60 * 86400, 4096), 30000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_session),
		cmocka_unit_test(empty_session),
		cmocka_unit_test(long_session_big_machine),
		cmocka_unit_test(elapsed_times_cpus),
	};

	return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
