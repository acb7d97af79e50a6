// SPDX-License-Identifier: GPL-2.0
/* The tool's command line: dispatch, usage errors, device error messages. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "commands.h"
#include "device.h"
#include "events.h"
#include "netlink.h"
#include "tool.h"

static void no_arguments_is_usage_error(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "usage: hotstack COMMAND"));
}

static void unknown_command_is_usage_error(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", "frobnicate", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "'frobnicate' is not a hotstack command"));
}

static void help_and_version(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", "--help", NULL), 0);
	assert_non_null(strstr(tool_out, "info"));
	assert_int_equal(run_tool("hotstack", "--version", NULL), 0);
	assert_non_null(strstr(tool_out, "hotstack 0.1 (ABI 2)"));
}

/* Every command's --help (and -h, and "hotstack help CMD"): status 0, its options one a line. */
static void every_command_has_help(void **state)
{
	static const struct {
		const char *cmd, *options[16];
	} cmds[] = {
		{ "record", { "-e, --event EVENT", "--keys comm,pid,cgroup,context", "-d, --duration",
			      "-o, --output FILE", "--format FORMAT", "-h, --help" } },
		{ "top", { "-F, --freq HZ", "--table-entries N", "--cpu-entries N", "-b, --batch",
			   "-n, --iterations N", "--sort ORDER,KEYS", "--comm NAMES",
			   "--symbol REGEX", "-h, --help" } },
		{ "report", { "-o, --output FILE", "--format FORMAT", "--comm NAMES", "--pid PIDS",
			      "--symbol REGEX", "--module MODS", "--sort KEYS", "-n, --rows N",
			      "--percent-limit PCT", "--children", "--no-children",
			      "-g, --call-graph caller|callee", "-h, --help" } },
		{ "dump", { "-o, --output FILE", "--format FORMAT", "-h, --help" } },
		{ "diff", { "-o, --output FILE", "--format FORMAT", "--comm NAMES", "--sort KEYS",
			    "-n, --rows N", "--percent-limit PCT", "-h, --help" } },
		{ "info", { "-h, --help" } },
		{ "status", { "--json", "-h, --help" } },
		{ "watch", { "-h, --help" } },
	};
	char usage[64], *line;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(usage, sizeof(usage), "usage: hotstack %s", cmds[i].cmd);
		assert_int_equal(run_tool("hotstack", cmds[i].cmd, "--help", NULL), 0);
		assert_ptr_equal(strstr(tool_out, usage), tool_out);
		for (j = 0; cmds[i].options[j]; j++) {
			line = strstr(tool_out, cmds[i].options[j]);
			if (!line)
				fail_msg("%s --help lacks %s", cmds[i].cmd, cmds[i].options[j]);
			/* One line each: the option, then its help, on the line it starts. */
			assert_true(strchr(line, '\n') - line > (long)strlen(cmds[i].options[j]) + 4);
		}
		assert_int_equal(run_tool("hotstack", cmds[i].cmd, "-h", NULL), 0);
		assert_ptr_equal(strstr(tool_out, usage), tool_out);
		assert_int_equal(run_tool("hotstack", "help", cmds[i].cmd, NULL), 0);
		assert_ptr_equal(strstr(tool_out, usage), tool_out);
		/* A bad option: the usage and where the help is, status 2. */
		assert_int_equal(run_tool("hotstack", cmds[i].cmd, "--no-such-option", NULL),
				 HS_EXIT_USAGE);
		assert_non_null(strstr(tool_out, "unknown option '--no-such-option'"));
		assert_non_null(strstr(tool_out, usage));
	}
}

static void find_command(void **state)
{
	(void)state;
	assert_non_null(hs_find_command("info"));
	assert_null(hs_find_command("inf"));
	assert_null(hs_find_command(""));
}

static void info_rejects_arguments(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", "info", "extra", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unexpected argument 'extra'"));
}

static void info_without_module_explains(void **state)
{
	(void)state;
	setenv("HOTSTACK_DEVICE", "/nonexistent/hotstack", 1);
	assert_string_equal(hs_device_path(), "/nonexistent/hotstack");
	assert_int_equal(run_tool("hotstack", "info", NULL), 1);
	assert_non_null(strstr(tool_out, "cannot open /nonexistent/hotstack"));
	assert_non_null(strstr(tool_out, "module is not loaded"));
	unsetenv("HOTSTACK_DEVICE");
	assert_string_equal(hs_device_path(), "/dev/hotstack");
}

static void device_of_another_abi(void **state)
{
	(void)state;
	assert_null(hs_abi_mismatch(HOTSTACK_ABI_VERSION));
	assert_non_null(strstr(hs_abi_mismatch(HOTSTACK_ABI_VERSION + 1), "module is newer"));
	assert_non_null(strstr(hs_abi_mismatch(HOTSTACK_ABI_VERSION - 1), "module is older"));
	/* A file that is no hotstack device answers GET_INFO with ENOTTY. */
	setenv("HOTSTACK_DEVICE", "/dev/null", 1);
	assert_int_equal(run_tool("hotstack", "info", NULL), 1);
	assert_non_null(strstr(tool_out, "/dev/null is not a hotstack device"));
	unsetenv("HOTSTACK_DEVICE");
}

static void open_error_hints(void **state)
{
	(void)state;
	assert_non_null(strstr(hs_open_error_hint(ENOENT), "not loaded"));
	assert_non_null(strstr(hs_open_error_hint(ENODEV), "not loaded"));
	assert_non_null(strstr(hs_open_error_hint(EACCES), "permission denied"));
	assert_non_null(strstr(hs_open_error_hint(EPERM), "group="));
	assert_non_null(strstr(hs_open_error_hint(EBUSY), "max_sessions"));
	assert_non_null(strstr(hs_open_error_hint(EDQUOT), "group_max_sessions"));
	assert_null(hs_open_error_hint(EINVAL));
}

static void status_and_watch_usage(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", "status", "--yaml", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unknown option '--yaml'\nusage: hotstack status "
				  "[OPTIONS]\n"));
	assert_int_equal(run_tool("hotstack", "watch", "now", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unexpected argument 'now'\nusage: hotstack watch\n"));
	assert_int_equal(run_tool("hotstack", "dump", "-o", "x.bin", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack dump: cannot tell the format of 'x.bin'"));
	assert_int_equal(run_tool("hotstack", "dump", "now", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unexpected argument 'now'\nusage: hotstack dump"));
	assert_int_equal(run_tool("hotstack", "report", "--bogus", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unknown option '--bogus'\nusage: hotstack report"));
}

static void event_lines(void **state)
{
	struct hs_event ev = { .id = 7, .cpu = -1 };
	char line[256];

	(void)state;
	ev.event = HOTSTACK_EV_STARTED;
	hs_format_event(&ev, line, sizeof(line));
	assert_string_equal(line, "started");
	ev.event = HOTSTACK_EV_TABLE_FILL;
	ev.value = 75;
	ev.cpu = 1;
	hs_format_event(&ev, line, sizeof(line));
	assert_string_equal(line, "table 75% full on CPU 1");
	ev.event = HOTSTACK_EV_DROP;
	ev.value = HOTSTACK_DROP_ARENA_FULL;
	ev.suppressed = 3;
	hs_format_event(&ev, line, sizeof(line));
	assert_string_equal(line, "first drop: arena full on CPU 1 "
			    "(3 earlier events suppressed by the rate limit)");
	ev.event = HOTSTACK_EV_THROTTLED;
	ev.suppressed = 0;
	hs_format_event(&ev, line, sizeof(line));
	assert_string_equal(line, "throttled by perf on CPU 1 "
			    "(kernel.perf_event_max_sample_rate)");
	ev.event = 99;
	hs_format_event(&ev, line, sizeof(line));
	assert_string_equal(line, "event 99 value 1");
}

static void event_names(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(hs_event_name(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK),
			    "cpu-clock");
	assert_string_equal(hs_event_name(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
			    "cycles");
	assert_string_equal(hs_event_name(PERF_TYPE_RAW, 0x3c), "raw");
	assert_string_equal(hs_event_name(PERF_TYPE_TRACEPOINT, 1), "unknown");
	assert_string_equal(hs_rate_str(HOTSTACK_CFG_FREQ, 999, buf, sizeof(buf)), "999 Hz");
	assert_string_equal(hs_rate_str(0, 100000, buf, sizeof(buf)), "period 100000");
	assert_string_equal(hs_drop_name(HOTSTACK_DROP_TABLE_FULL), "table full");
	assert_string_equal(hs_drop_name(HOTSTACK_DROP_COLLISION), "collision");
	assert_string_equal(hs_drop_name(HOTSTACK_DROP_BUSY), "busy");
	assert_string_equal(hs_drop_name(HOTSTACK_DROP_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_arguments_is_usage_error),
		cmocka_unit_test(unknown_command_is_usage_error),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(every_command_has_help),
		cmocka_unit_test(find_command),
		cmocka_unit_test(info_rejects_arguments),
		cmocka_unit_test(info_without_module_explains),
		cmocka_unit_test(device_of_another_abi),
		cmocka_unit_test(open_error_hints),
		cmocka_unit_test(status_and_watch_usage),
		cmocka_unit_test(event_lines),
		cmocka_unit_test(event_names),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
