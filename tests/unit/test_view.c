// SPDX-License-Identifier: GPL-2.0
/*
 * The views perf users reach for: report's filters (on every output),
 * sort keys, rows and percent limit, self/total tables, call graphs,
 * hottest stacks; diff's and top's filters and keys; process names and
 * pids as keys, not functions.
 */
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
#include <linux/hotstack.h>

#include "commands.h"
#include "profile.h"
#include "top.h"
#include "view.h"
#include "tool.h"

static const char views[] =
	"bash;[pid 7];[task];main;read;vfs_read;ext4_read [ext4] 5\n"
	"bash;[pid 7];[task];main;write;vfs_write 3\n"
	"cp;[pid 9];main;read;vfs_read;xfs_read [xfs] 4\n"
	"cp;[pid 9];main;rec;rec;leaf 2\n"
	"[dropped];[table full] 1\n";

static const char *views_file(void)
{
	write_file(scratch("v.folded"), views, strlen(views));
	return scratch("v.folded");
}

static void report_default_has_hottest_stacks(void **state)
{
	(void)state;
	assert_int_equal(run_tool("hotstack", "report", views_file(), NULL), 0);
	/* Process names and pids are keys, not functions. */
	assert_null(strstr(tool_out, "  bash\n"));
	assert_null(strstr(tool_out, "  cp\n"));
	assert_non_null(strstr(tool_out, "# by self (the function was running)\n"
				  "#   %self  %total      samples  function\n"
				  "   35.71%  35.71%            5  ext4_read [ext4]\n"));
	assert_non_null(strstr(tool_out, "    0.00% 100.00%           14  main\n"));
	assert_non_null(strstr(tool_out, "\n  %STACK    SAMPLES  STACK (innermost first)\n"
				  "  35.71%          5  ext4_read [ext4] <- vfs_read <- read <- main "
				  "<- [task] <- [pid 7] <- bash\n"));
}

static void filters_apply_to_every_output(void **state)
{
	const char *v = views_file();
	char *out;

	(void)state;
	assert_int_equal(run_tool("hotstack", "report", v, "--comm", "cp", NULL), 0);
	assert_non_null(strstr(tool_out, "# filter: --comm cp (the samples below are those it "
				  "keeps)\n# samples: 6, counted: 6, dropped: 0\n"));
	assert_null(strstr(tool_out, "ext4_read"));
	assert_int_equal(run_tool("hotstack", "report", v, "--pid", "3,7", "-o",
				  scratch("f.folded"), NULL), 0);
	out = read_file(scratch("f.folded"), NULL);
	assert_string_equal(out, "bash;[pid 7];[task];main;read;vfs_read;ext4_read [ext4] 5\n"
			    "bash;[pid 7];[task];main;write;vfs_write 3\n");
	free(out);
	assert_int_equal(run_tool("hotstack", "report", v, "--symbol", "^(vfs|xfs)_read", "-o",
				  scratch("f.svg"), NULL), 0);
	out = read_file(scratch("f.svg"), NULL);
	assert_non_null(strstr(out, "<title>xfs_read [xfs] (4 samples"));
	assert_null(strstr(out, "vfs_write"));
	assert_null(strstr(out, "[dropped]"));
	free(out);
	assert_int_equal(run_tool("hotstack", "report", v, "--module", "xfs,nfs", "--format",
				  "json", NULL), 0);
	assert_non_null(strstr(tool_out, "\"samples\": 4,"));
	/* Every filter at once: all must pass. */
	assert_int_equal(run_tool("hotstack", "report", v, "--comm", "bash", "--module", "xfs",
				  NULL), 0);
	assert_non_null(strstr(tool_out, "# samples: 0, counted: 0"));
	/* Bad ones are usage errors. */
	assert_int_equal(run_tool("hotstack", "report", v, "--symbol", "(", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "--symbol '(' is not a regular expression"));
	assert_int_equal(run_tool("hotstack", "report", v, "--pid", "7,x", NULL), HS_EXIT_USAGE);
	assert_int_equal(run_tool("hotstack", "report", v, "--comm", "a,,b", NULL), HS_EXIT_USAGE);
}

static void sort_keys_rows_and_limits(void **state)
{
	const char *v = views_file();

	(void)state;
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "comm,sym", "--no-children",
				  "-n", "2", NULL), 0);
	assert_non_null(strstr(tool_out, "#   %self  %total      samples  comm  function\n"
				  "   35.71%  35.71%            5  bash  ext4_read [ext4]\n"
				  "   28.57%  28.57%            4  cp  xfs_read [xfs]\n\n"));
	assert_null(strstr(tool_out, "# by total"));
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "comm", "--children", NULL), 0);
	assert_null(strstr(tool_out, "# by self"));
	assert_non_null(strstr(tool_out, "#   %self  %total      samples  comm\n"
				  "   57.14%  57.14%            8  bash\n"
				  "   42.86%  42.86%            6  cp\n"));
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "pid,context", "--children",
				  NULL), 0);
	assert_non_null(strstr(tool_out, "  [pid 7]  [task]\n"));
	assert_non_null(strstr(tool_out, "  [pid 9]  -\n"));
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "module", "--children", NULL),
			 0);
	assert_non_null(strstr(tool_out, "   35.71% 100.00%           14  [kernel.kallsyms]\n"
				  "   35.71%  35.71%            5  ext4\n"
				  "   28.57%  28.57%            4  xfs\n"));
	/* --percent-limit: rows (and stacks) under it left out. */
	assert_int_equal(run_tool("hotstack", "report", v, "--percent-limit", "25", NULL), 0);
	assert_non_null(strstr(tool_out, "  28.57%          4  xfs_read"));
	assert_null(strstr(tool_out, "vfs_write <-"));
	assert_null(strstr(tool_out, "  leaf\n"));
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "sym,sym", NULL),
			 HS_EXIT_USAGE);
	assert_int_equal(run_tool("hotstack", "report", v, "--sort", "dso", NULL), HS_EXIT_USAGE);
	assert_int_equal(run_tool("hotstack", "report", v, "--percent-limit", "101", NULL),
			 HS_EXIT_USAGE);
	assert_int_equal(run_tool("hotstack", "report", v, "-n", "0", NULL), HS_EXIT_USAGE);
}

static void call_graphs(void **state)
{
	const char *v = views_file();

	(void)state;
	/* Callee: who calls it, innermost first. */
	assert_int_equal(run_tool("hotstack", "report", v, "-g", "callee", "--no-children",
				  "-n", "1", NULL), 0);
	assert_non_null(strstr(tool_out, "   35.71%  35.71%            5  ext4_read [ext4]\n"
				  "                          called from:\n"
				  "                           35.71%  vfs_read\n"
				  "                             35.71%  read\n"
				  "                               35.71%  main\n"));
	/* Caller: what it calls, the larger first. */
	assert_int_equal(run_tool("hotstack", "report", v, "--call-graph", "caller", "--children",
				  "-n", "1", NULL), 0);
	assert_non_null(strstr(tool_out, "    0.00% 100.00%           14  main\n"
				  "                          calls:\n"
				  "                           64.29%  read\n"
				  "                             64.29%  vfs_read\n"
				  "                               35.71%  ext4_read [ext4]\n"
				  "                               28.57%  xfs_read [xfs]\n"
				  "                           21.43%  write\n"
				  "                             21.43%  vfs_write\n"
				  "                           14.29%  rec\n"
				  "                             14.29%  rec\n"
				  "                               14.29%  leaf\n"));
	assert_int_equal(run_tool("hotstack", "report", v, "-g", "fractal", NULL), HS_EXIT_USAGE);
}

static void diff_takes_filters_and_keys(void **state)
{
	const char *v = views_file();
	static const char b[] = "bash;[pid 7];[task];main;write;vfs_write 9\n"
				"cp;[pid 9];main;read;vfs_read;xfs_read [xfs] 1\n";

	(void)state;
	write_file(scratch("b.folded"), b, strlen(b));
	assert_int_equal(run_tool("hotstack", "diff", v, scratch("b.folded"), "--sort", "comm",
				  "--no-children", NULL), 0);
	assert_non_null(strstr(tool_out, "samples B  comm\n"));
	/* bash: 8 of 14 -> 9 of 10; cp: 6 of 14 -> 1 of 10. */
	assert_non_null(strstr(tool_out, "       +32.86   57.14%   90.00%            8            9"
				  "  bash\n"));
	assert_null(strstr(tool_out, "# by total"));
	assert_int_equal(run_tool("hotstack", "diff", v, scratch("b.folded"), "--comm", "cp",
				  NULL), 0);
	assert_non_null(strstr(tool_out, "# filter: --comm cp"));
	assert_null(strstr(tool_out, "vfs_write"));
}

static void top_takes_filters_and_keys(void **state)
{
	struct hs_top_opts o;
	struct hs_top_frame fr = { .event = "cpu-clock", .rate = "99 Hz", .source = "test" };
	struct hs_profile p = { 0 };
	char *argv[] = { "top", "-b", "--sort", "total,comm", "--comm", "bash", NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(hs_top_parse(6, argv, &o), 0);
	assert_true(o.by_total);
	assert_int_equal(o.view.nr_sort, 1);
	assert_int_equal(o.view.sort[0], HS_SORT_COMM);
	assert_non_null(o.view.filter.comm);
	assert_int_equal(hs_profile_parse(&p, views, NULL), 0);
	assert_int_equal(hs_profile_filter(&p, &o.view.filter), 0);
	fr.p = &p;
	fr.by_total = o.by_total;
	fr.view = &o.view;
	f = open_memstream(&buf, &len);
	assert_int_equal(hs_top_render(f, &fr, 5, 5), 0);
	fclose(f);
	assert_non_null(strstr(buf, "   %SELF  %TOTAL       SELF      TOTAL  COMM\n"
			       " 100.00% 100.00%          8          8  bash\n\n"));
	assert_null(strstr(buf, "  cp\n"));
	assert_null(strstr(buf, "<- cp\n"));
	free(buf);
	hs_profile_free(&p);
	hs_view_free(&o.view);
}

static void comm_alone_is_a_key_too(void **state)
{
	struct hs_profile p = { 0 }, q = { 0 };
	struct hs_line_keys k;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f;

	(void)state;
	/* --keys comm without pid: a process name alone leads each line. */
	assert_int_equal(hs_profile_parse(&p, "bash;[task];main;read 3\nsh;main 1\n"
					  "[dropped];[nested] 2\n", NULL), 0);
	p.keys = HOTSTACK_KEY_COMM | HOTSTACK_KEY_CONTEXT;
	/* Lost samples have no process. */
	hs_line_keys(&p, &p.lines[2], &k);
	assert_null(k.comm);
	assert_ptr_equal(k.frames, p.lines[2].stack);
	f = open_memstream(&buf, &len);
	assert_int_equal(hs_write_folded(f, &p), 0);
	fclose(f);
	assert_string_equal(buf, "# hotstack keys: comm,context\nbash;[task];main;read 3\n"
			    "sh;main 1\n[dropped];[nested] 2\n");
	write_file(scratch("k.folded"), buf, len);
	free(buf);
	assert_int_equal(hs_profile_load(&q, scratch("k.folded"), err, sizeof(err)), 0);
	assert_int_equal(q.keys, HOTSTACK_KEY_COMM | HOTSTACK_KEY_CONTEXT);
	hs_profile_free(&q);
	hs_profile_free(&p);
	assert_int_equal(run_tool("hotstack", "report", scratch("k.folded"), NULL), 0);
	assert_null(strstr(tool_out, "  bash\n"));
	assert_null(strstr(tool_out, "  sh\n"));
	assert_non_null(strstr(tool_out, "  75.00%  75.00%            3  read\n"));
	assert_null(strstr(tool_out, "[dropped]\n"));
	assert_int_equal(run_tool("hotstack", "report", scratch("k.folded"), "--comm", "sh", NULL),
			 0);
	assert_non_null(strstr(tool_out, "# samples: 1, counted: 1"));
}

static int teardown(void **state)
{
	(void)state;
	scratch_remove();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_default_has_hottest_stacks),
		cmocka_unit_test(filters_apply_to_every_output),
		cmocka_unit_test(sort_keys_rows_and_limits),
		cmocka_unit_test(call_graphs),
		cmocka_unit_test(diff_takes_filters_and_keys),
		cmocka_unit_test(top_takes_filters_and_keys),
		cmocka_unit_test(comm_alone_is_a_key_too),
	};

	return cmocka_run_group_tests_name("view", tests, NULL, teardown);
}
