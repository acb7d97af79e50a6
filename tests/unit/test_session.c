// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's session defaults scaled to the machine, and what it says when
 * the module refuses a session (session.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "session.h"
#include "tool.h"

/* Bytes the module's tables take for @entries stacks of 16 frames, both generations. */
static uint64_t tables(uint32_t entries, unsigned int cpus)
{
	uint64_t slot = 384 + (uint64_t)entries * sizeof(struct hotstack_entry) +
			16ull * entries * sizeof(uint64_t);

	return 4096 + 4ull * cpus + 2 * ((slot + 127) / 128 * 128) * cpus;
}

static void defaults_where_they_fit(void **state)
{
	(void)state;
	assert_int_equal(hs_fit_table_entries(256ull << 20, 0, 2), 8192);
	assert_int_equal(hs_fit_table_entries(256ull << 20, 0, 32), 8192);
}

/*
 * A 256-CPU server with the module's defaults: max_memory_mb=256 and an
 * autostart session (512 stacks a CPU there: a quarter of the memory).
 * The tool's session fits in half of what is left, and another one too.
 */
static void a_256_cpu_server(void **state)
{
	uint64_t max = 256ull << 20, used = tables(512, 256);
	uint32_t e;

	(void)state;
	assert_true(used <= max / 4);
	e = hs_fit_table_entries(max, used, 256);
	assert_true(e >= 1024);
	assert_true((e & (e - 1)) == 0);
	assert_true(used + tables(e, 256) <= max);
	used += tables(e, 256);
	e = hs_fit_table_entries(max, used, 256);
	assert_true(e >= 16 && used + tables(e, 256) <= max);
}

static void nothing_fits(void **state)
{
	(void)state;
	assert_int_equal(hs_fit_table_entries(1 << 20, 0, 4096), 0);
	assert_int_equal(hs_fit_table_entries(256ull << 20, 256ull << 20, 2), 0);
	assert_int_equal(hs_fit_table_entries(256ull << 20, 300ull << 20, 2), 0);
}

/*
 * The module, as hs_session_configure() sees it: CONFIGURE fails with
 * configure_errno, every other request (GET_INFO) with ENOTTY.
 */
static int configure_errno;

int ioctl(int fd, unsigned long req, ...)
{
	(void)fd;
	errno = req == HOTSTACK_IOC_CONFIGURE ? configure_errno : ENOTTY;
	return -1;
}

static int configure_record(void *c)
{
	return hs_session_configure(-1, c, "record");
}

/* What hs_session_configure() of @c prints when CONFIGURE fails with @err. */
static const char *refusal(struct hs_config *c, int err)
{
	configure_errno = err;
	assert_int_equal(run_captured(configure_record, c), -1);
	return tool_out;
}

/*
 * A kernel without tracepoints (none of the test VMs' kernels since the
 * arm64 ones have them): off-CPU and wall-clock sessions say what they need.
 */
static void off_cpu_without_tracepoints(void **state)
{
	struct hs_config c = { .event = "off-cpu", .off_cpu = 1 };

	(void)state;
	assert_string_equal(refusal(&c, EOPNOTSUPP),
			    "hotstack record: --off-cpu needs the kernel's sched_switch tracepoint, "
			    "which this kernel lacks (built without CONFIG_TRACEPOINTS)\n");
	c.wall = 1;
	assert_string_equal(refusal(&c, EOPNOTSUPP),
			    "hotstack record: --wall needs the kernel's sched_switch tracepoint, "
			    "which this kernel lacks (built without CONFIG_TRACEPOINTS)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_where_they_fit),
		cmocka_unit_test(a_256_cpu_server),
		cmocka_unit_test(nothing_fits),
		cmocka_unit_test(off_cpu_without_tracepoints),
	};

	return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
