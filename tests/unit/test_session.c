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

static void defaults(struct hotstack_config *abi, uint32_t stacks, uint64_t frames, uint32_t cpu)
{
	memset(abi, 0, sizeof(*abi));
	abi->table_entries = stacks;
	abi->arena_frames = frames;
	abi->cpu_entries = cpu;
}

/*
 * The layout's arithmetic, as the module's (4 KiB pages): record's and the
 * agent's defaults on a 384-CPU machine, the figures of their comments.
 */
static void tables_bytes(void **state)
{
	(void)state;
	if (sysconf(_SC_PAGESIZE) == 4096) {
		/* A header page; a store of 2887680 bytes and 384 slots of 65920, twice. */
		assert_int_equal(hs_tables_bytes(16384, 262144, 4096, 384), 56406016);
		assert_int_equal(hs_tables_bytes(4096, 65536, 1024, 384), 14331904);
		/* The smallest: stores of two pages, slots of 640 bytes; the whole to pages. */
		assert_int_equal(hs_tables_bytes(16, 64, 16, 1), 24576);
		/* 1024 slot numbers take a second header page. */
		assert_int_equal(hs_tables_bytes(16, 64, 16, 1024), 8192 + 2 * (8192 + 1024 * 640));
	}
	assert_true(hs_tables_bytes(16384, 262144, 4096, 384) < 64ull << 20);
	assert_true(hs_tables_bytes(4096, 65536, 1024, 384) < 16ull << 20);
	/* 0 count entries: as many as the store's. */
	assert_int_equal(hs_tables_bytes(1024, 16384, 0, 8), hs_tables_bytes(1024, 16384, 1024, 8));
}

/* The sizes as record, status and the fitting say them. */
static void tables_text(void **state)
{
	char buf[96];

	(void)state;
	assert_string_equal(hs_tables_text(16384, 262144, 4096, buf, sizeof(buf)),
			    "store 16384 stacks, 262144 frames; 4096 a CPU");
	assert_string_equal(hs_tables_text(1024, 16384, 0, buf, sizeof(buf)),
			    "store 1024 stacks, 16384 frames; 1024 a CPU");
}

static void defaults_where_they_fit(void **state)
{
	struct hotstack_config abi;

	(void)state;
	defaults(&abi, 16384, 262144, 4096);
	assert_int_equal(hs_fit_tables(256ull << 20, 0, 2, &abi), 0);
	assert_int_equal(hs_fit_tables(256ull << 20, 0, 32, &abi), 0);
	/* The module's default max_memory_mb on a 384-CPU machine: 54 MiB of 128. */
	assert_int_equal(hs_fit_tables(256ull << 20, 0, 384, &abi), 0);
	assert_int_equal(abi.table_entries, 16384);
	assert_int_equal(abi.arena_frames, 262144);
	assert_int_equal(abi.cpu_entries, 4096);
}

/*
 * Where they do not fit, the CPUs' count tables are halved first while
 * they are the larger part (many CPUs), and the store is left whole.
 */
static void many_cpus_shrink_their_counts(void **state)
{
	struct hotstack_config abi;

	(void)state;
	defaults(&abi, 16384, 262144, 4096);
	assert_int_equal(hs_fit_tables(64ull << 20, 0, 384, &abi), 1);
	assert_int_equal(abi.table_entries, 16384);
	assert_int_equal(abi.arena_frames, 262144);
	assert_int_equal(abi.cpu_entries, 2048);
	assert_true(hs_tables_bytes(16384, 262144, 2048, 384) <= 32ull << 20);
	/* The largest that fits: twice as many do not. */
	assert_true(hs_tables_bytes(16384, 262144, 4096, 384) > 32ull << 20);
}

/*
 * Then the store, its stacks and frames halved together, once the count
 * tables take less than it; a count table never larger than the store.
 */
static void then_the_store(void **state)
{
	struct hotstack_config abi;

	(void)state;
	defaults(&abi, 16384, 262144, 4096);
	assert_int_equal(hs_fit_tables(8ull << 20, 0, 384, &abi), 1);
	assert_true(abi.cpu_entries >= HS_FIT_CPU_ENTRIES && abi.cpu_entries < 4096);
	assert_true(abi.table_entries < 16384 && abi.table_entries >= abi.cpu_entries);
	assert_int_equal(abi.arena_frames, 16ull * abi.table_entries);
	assert_true(hs_tables_bytes(abi.table_entries, abi.arena_frames, abi.cpu_entries, 384) <=
		    4ull << 20);
	/* One CPU: its count table is small beside the store, which gives way first. */
	defaults(&abi, 16384, 262144, 4096);
	assert_int_equal(hs_fit_tables(8ull << 20, 0, 1, &abi), 1);
	assert_int_equal(abi.table_entries, 8192);
	assert_int_equal(abi.arena_frames, 131072);
	assert_int_equal(abi.cpu_entries, 4096);
	/* Little room: the smallest store, then count tables below HS_FIT_CPU_ENTRIES. */
	if (sysconf(_SC_PAGESIZE) == 4096) {
		defaults(&abi, 16384, 262144, 4096);
		assert_int_equal(hs_fit_tables(1ull << 20, 0, 384, &abi), 1);
		assert_int_equal(abi.table_entries, 16);
		assert_int_equal(abi.arena_frames, 256);
		assert_int_equal(abi.cpu_entries, 16);
	}
}

/*
 * A 256-CPU server with the module's defaults: max_memory_mb=256 and an
 * autostart session (a store of 4096 stacks, 4096 counts a CPU). The
 * tool's session fits in half of what is left, and another one too.
 */
static void a_256_cpu_server(void **state)
{
	uint64_t max = 256ull << 20, used = hs_tables_bytes(4096, 65536, 4096, 256);
	struct hotstack_config abi;
	int i;

	(void)state;
	assert_true(used <= max / 4);
	for (i = 0; i < 3; i++) {
		defaults(&abi, 16384, 262144, 4096);
		assert_true(hs_fit_tables(max, used, 256, &abi) >= 0);
		assert_true((abi.cpu_entries & (abi.cpu_entries - 1)) == 0);
		assert_true((abi.table_entries & (abi.table_entries - 1)) == 0);
		assert_true(abi.cpu_entries >= HS_FIT_CPU_ENTRIES);
		assert_true(used + hs_tables_bytes(abi.table_entries, abi.arena_frames,
						   abi.cpu_entries, 256) <= max);
		used += hs_tables_bytes(abi.table_entries, abi.arena_frames, abi.cpu_entries, 256);
	}
}

static void nothing_fits(void **state)
{
	struct hotstack_config abi;

	(void)state;
	defaults(&abi, 16384, 262144, 4096);
	assert_int_equal(hs_fit_tables(1 << 20, 0, 4096, &abi), -1);
	assert_int_equal(hs_fit_tables(256ull << 20, 256ull << 20, 2, &abi), -1);
	assert_int_equal(hs_fit_tables(256ull << 20, 300ull << 20, 2, &abi), -1);
	/* Left as they were. */
	assert_int_equal(abi.table_entries, 16384);
	assert_int_equal(abi.arena_frames, 262144);
	assert_int_equal(abi.cpu_entries, 4096);
}

/*
 * The module, as hs_session_configure() sees it: CONFIGURE fails with
 * configure_errno; GET_INFO gives module_info when set, and every other
 * request fails with ENOTTY.
 */
static int configure_errno;
static const struct hotstack_info *module_info;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;

	(void)fd;
	if (req == HOTSTACK_IOC_GET_INFO && module_info) {
		va_start(ap, req);
		memcpy(va_arg(ap, struct hotstack_info *), module_info, sizeof(*module_info));
		va_end(ap);
		return 0;
	}
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

/*
 * Tables lowered to fit the module's memory are said, with their sizes
 * and memory, once; sizes the user chose are left to the module.
 */
static void says_what_it_fitted(void **state)
{
	struct hotstack_info info = { .max_memory = 8 << 20, .max_freq = HOTSTACK_MAX_FREQ };
	struct hs_config c;

	(void)state;
	hs_config_defaults(&c);
	/* CPU 0 alone: the machine's CPUs do not change the figures. */
	c.abi.cpus_words = 1;
	c.cpus[0] = 1;
	module_info = &info;
	refusal(&c, EINVAL);
	module_info = NULL;
	/* One CPU counts as many stacks as the store holds: grown, then fitted. */
	assert_int_equal(c.abi.table_entries, 8192);
	assert_int_equal(c.abi.arena_frames, 131072);
	assert_int_equal(c.abi.cpu_entries, 8192);
	if (sysconf(_SC_PAGESIZE) == 4096)
		assert_string_equal(tool_out,
			"hotstack record: store 8192 stacks, 131072 frames; 8192 a CPU: 3.0 MiB, "
			"to fit 1 CPU in the module's memory (8 of 8 MiB free; --table-entries, "
			"--arena-frames and --cpu-entries choose)\n"
			"hotstack record: cannot configure the session: Invalid argument\n");
	else
		assert_ptr_equal(strstr(tool_out, "hotstack record: store 8192 stacks"), tool_out);

	hs_config_defaults(&c);
	c.abi.cpus_words = 1;
	c.cpus[0] = 1;
	c.abi.cpu_entries = 8192;
	c.have_cpu_entries = 1;
	module_info = &info;
	refusal(&c, EINVAL);
	module_info = NULL;
	assert_int_equal(c.abi.table_entries, 16384);
	assert_int_equal(c.abi.cpu_entries, 8192);
	assert_string_equal(tool_out, "hotstack record: cannot configure the session: "
			    "Invalid argument\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_bytes),
		cmocka_unit_test(tables_text),
		cmocka_unit_test(defaults_where_they_fit),
		cmocka_unit_test(many_cpus_shrink_their_counts),
		cmocka_unit_test(then_the_store),
		cmocka_unit_test(a_256_cpu_server),
		cmocka_unit_test(nothing_fits),
		cmocka_unit_test(off_cpu_without_tracepoints),
		cmocka_unit_test(says_what_it_fitted),
	};

	return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
