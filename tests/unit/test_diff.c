// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack diff: the deltas of two known profiles in the report and in
 * difffolded lines, the differential flame graph's colours, pprof inputs,
 * and every argument error.
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

#include "commands.h"
#include "output.h"
#include "profile.h"
#include "record.h"
#include "tool.h"

/* A: 10 counted samples and a drop; B: 20, "grow" and "new" gained, "shrink" lost. */
static const char prof_a[] =
	"main;work;grow 2\n"
	"main;work;shrink 6\n"
	"main;other 2\n"
	"[dropped];[table full] 1\n";
static const char prof_b[] =
	"main;work;grow 6\n"
	"main;work;shrink 2\n"
	"main;other 1\n"
	"main;other 1\n"
	"main;new 10\n";

static void setup_files(void)
{
	write_file(scratch("a.folded"), prof_a, strlen(prof_a));
	write_file(scratch("b.folded"), prof_b, strlen(prof_b));
}

/* Self: new +50 (0 -> 10 of 20), shrink -50 (6 of 10 -> 2 of 20), grow and other 10. */
static const char expected_self[] =
	"function\n"
	"       +50.00    0.00%   50.00%            0           10  new\n"
	"       -50.00   60.00%   10.00%            6            2  shrink\n"
	"       +10.00   20.00%   30.00%            2            6  grow\n"
	"       -10.00   20.00%   10.00%            2            2  other\n"
	"\n# by total";

/* Total: work 8 of 10 -> 8 of 20; main on every stack in both: no change. */
static const char expected_total[] =
	"function\n"
	"       +50.00    0.00%   50.00%            0           10  new\n"
	"       -50.00   60.00%   10.00%            6            2  shrink\n"
	"       -40.00   80.00%   40.00%            8            8  work\n"
	"       +10.00   20.00%   30.00%            2            6  grow\n"
	"       -10.00   20.00%   10.00%            2            2  other\n";

static void report_ranks_changes_of_share(void **state)
{
	const char *self, *total;

	(void)state;
	setup_files();
	assert_int_equal(run_tool("hotstack", "diff", scratch("a.folded"), scratch("b.folded"),
				  NULL), 0);
	/* Both profiles' facts first. */
	assert_non_null(strstr(tool_out, "a.folded\n"
				  "#   samples: 11, counted: 10, dropped: 1\n"
				  "#     dropped, [table full]: 1\n"
				  "#   filtered out: 0, truncated: 0 samples, collapsed: 0 samples, "
				  "distinct stacks: 4\n# B: "));
	assert_non_null(strstr(tool_out, "b.folded\n"
				  "#   samples: 20, counted: 20, dropped: 0\n"
				  "#   filtered out: 0, truncated: 0 samples, collapsed: 0 samples, "
				  "distinct stacks: 4\n"));
	self = strstr(tool_out, "# by self");
	total = strstr(tool_out, "# by total");
	assert_non_null(self);
	assert_non_null(total);
	assert_non_null(strstr(self, expected_self));
	assert_non_null(strstr(total, expected_total));
	assert_null(strstr(total, "  main\n"));
	/* The same profile twice: no change at all. */
	assert_int_equal(run_tool("hotstack", "diff", scratch("b.folded"), scratch("b.folded"),
				  NULL), 0);
	assert_non_null(strstr(tool_out, "function\n  (no change)\n\n# by total"));
}

static const char expected_folded[] =
	"[dropped];[table full] 1 0\n"
	"main;new 0 10\n"
	"main;other 2 2\n"
	"main;work;grow 2 6\n"
	"main;work;shrink 6 2\n";

static void folded_is_difffolded(void **state)
{
	struct hs_profile a = { 0 };
	char *text;

	(void)state;
	setup_files();
	assert_int_equal(run_tool("hotstack", "diff", scratch("a.folded"), scratch("b.folded"),
				  "-o", scratch("d.folded"), NULL), 0);
	text = read_file(scratch("d.folded"), NULL);
	assert_string_equal(text, expected_folded);
	free(text);
	assert_int_equal(run_tool("hotstack", "diff", "--format", "folded", scratch("a.folded"),
				  scratch("b.folded"), NULL), 0);
	assert_string_equal(tool_out, expected_folded);
	/* A as pprof: the same lines. */
	assert_int_equal(hs_profile_parse(&a, prof_a, NULL), 0);
	assert_int_equal(hs_write_profile("test", scratch("a.pb.gz"), HS_FMT_PPROF, &a, NULL), 0);
	hs_profile_free(&a);
	assert_int_equal(run_tool("hotstack", "diff", "--format", "folded", scratch("a.pb.gz"),
				  scratch("b.folded"), NULL), 0);
	assert_string_equal(tool_out, expected_folded);
}

/*
 * Whether python3 finds, in the SVG at argv[1], the grown frame red, the
 * shrunk one blue, and no frame drawn for what B does not have.
 */
static const char svg_check[] =
	"import sys, re, xml.dom.minidom as m\n"
	"d = m.parse(sys.argv[1])\n"
	"fill = {}\n"
	"for g in d.getElementsByTagName('g'):\n"
	"    t = g.getElementsByTagName('title')[0].firstChild.data\n"
	"    fill[t[:t.rindex(' (')]] = g.getElementsByTagName('rect')[0].getAttribute('fill')\n"
	"def rgb(n): return tuple(int(x) for x in re.match(r'rgb\\((\\d+),(\\d+),(\\d+)\\)$', "
	"fill[n]).groups())\n"
	"r, g, b = rgb('grow'); assert r == 255 and g == b and g < 255, ('grow', r, g, b)\n"
	"r, g, b = rgb('new'); assert r == 255 and g == b == 0, ('new', r, g, b)\n"
	"r, g, b = rgb('shrink'); assert b == 255 and r == g and r < 210, ('shrink', r, g, b)\n"
	"r, g, b = rgb('other'); assert b == 255 and r == g and r < 255, ('other', r, g, b)\n"
	"assert '[dropped]' not in fill and '[table full]' not in fill, fill\n"
	"assert sorted(fill) == ['all', 'grow', 'main', 'new', 'other', 'shrink', 'work'], fill\n";

static void svg_colours_by_change(void **state)
{
	char cmd[512], *svg;

	(void)state;
	setup_files();
	write_file(scratch("check.py"), svg_check, strlen(svg_check));
	assert_int_equal(run_tool("hotstack", "diff", scratch("a.folded"), scratch("b.folded"),
				  "-o", scratch("d.svg"), NULL), 0);
	svg = read_file(scratch("d.svg"), NULL);
	/* Shares of all samples (drops included, as the graph's width). */
	assert_non_null(strstr(svg, "<title>grow (B: 6 samples, 30.00%; A: 2 samples, 18.18%; "
			       "+11.82 pp)</title>"));
	assert_non_null(strstr(svg, "<title>shrink (B: 2 samples, 10.00%; A: 6 samples, 54.55%; "
			       "-44.55 pp)</title>"));
	assert_non_null(strstr(svg, "B: 20 samples, 0 dropped"));
	assert_non_null(strstr(svg, "A: 11 samples, 1 dropped"));
	assert_non_null(strstr(svg, "differential flame graph"));
	free(svg);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s'", scratch("check.py"), scratch("d.svg"));
	assert_int_equal(system(cmd), 0);
	/* --format svg to standard output: the same graph. */
	assert_int_equal(run_tool("hotstack", "diff", "--format", "svg", scratch("a.folded"),
				  scratch("b.folded"), NULL), 0);
	assert_non_null(strstr(tool_out, "<title>grow (B: 6 samples, 30.00%"));
	/* The ordinary flame graph is unchanged by the shared renderer. */
	assert_int_equal(run_tool("hotstack", "report", scratch("b.folded"), "-o",
				  scratch("b.svg"), NULL), 0);
	svg = read_file(scratch("b.svg"), NULL);
	assert_non_null(strstr(svg, "<title>grow (6 samples, 30.00%)</title>"));
	assert_null(strstr(svg, " pp)"));
	free(svg);
}

static void argument_errors(void **state)
{
	const char *a, *b;

	(void)state;
	setup_files();
	a = scratch("a.folded");
	b = scratch("b.folded");
	assert_int_equal(run_tool("hotstack", "diff", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack diff: wants two profiles, A and B\n"
				  "usage: hotstack diff [OPTIONS] A B"));
	assert_int_equal(run_tool("hotstack", "diff", a, NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "wants two profiles"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "c", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "takes two profiles, A and B; what is 'c'?"));
	assert_int_equal(run_tool("hotstack", "diff", "--format", "json", a, b, NULL),
			 HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "--format wants folded, report or svg, not 'json'"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "-o", "x.json", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack diff: does not write json ('x.json'): use "
				  ".folded, .txt or .svg, or --format"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "-o", "x.weird", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "cannot tell the format of 'x.weird' from its name"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "-o", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "option '-o' needs a value"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "--format", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "option '--format' needs a value"));
	assert_int_equal(run_tool("hotstack", "diff", "--bogus", a, b, NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "unknown option '--bogus'"));
	assert_int_equal(run_tool("hotstack", "diff", "-", "-", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "only one of A and B can be standard input"));
	assert_int_equal(run_tool("hotstack", "diff", "--help", NULL), 0);
	assert_non_null(strstr(tool_out, "usage: hotstack diff [OPTIONS] A B"));
	/* Files: which one and why, exit 1. */
	assert_int_equal(run_tool("hotstack", "diff", a, "/nonexistent/b.folded", NULL), 1);
	assert_non_null(strstr(tool_out, "hotstack diff: cannot open /nonexistent/b.folded: "
				  "No such file or directory"));
	assert_int_equal(run_tool("hotstack", "diff", scratch_dir, b, NULL), 1);
	assert_non_null(strstr(tool_out, "hotstack diff: cannot read "));
	assert_non_null(strstr(tool_out, ": Is a directory"));
	write_file(scratch("junk.pb.gz"), "\x1f\x8b\x08junk", 7);
	assert_int_equal(run_tool("hotstack", "diff", a, scratch("junk.pb.gz"), NULL), 1);
	assert_non_null(strstr(tool_out, "junk.pb.gz: corrupt or truncated gzip data"));
	assert_int_equal(run_tool("hotstack", "diff", a, b, "-o", "/nonexistent/d.txt", NULL), 1);
	assert_non_null(strstr(tool_out, "cannot write /nonexistent/d.txt: No such file"));
	/* And the command is in the table. */
	assert_non_null(hs_find_command("diff"));
	assert_int_equal(run_tool("hotstack", "--help", NULL), 0);
	assert_non_null(strstr(tool_out, "  diff "));
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
		cmocka_unit_test(report_ranks_changes_of_share),
		cmocka_unit_test(folded_is_difffolded),
		cmocka_unit_test(svg_colours_by_change),
		cmocka_unit_test(argument_errors),
	};

	return cmocka_run_group_tests_name("diff", tests, NULL, teardown);
}
