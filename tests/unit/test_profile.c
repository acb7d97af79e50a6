// SPDX-License-Identifier: GPL-2.0
/*
 * The profile on any input: counts that are negative, not numbers or
 * overflowing; files that are not profiles; the same stack text twice;
 * lines in any order; names that are any bytes (invalid UTF-8, cut
 * characters), through every writer, checked by Python's json, xmllint
 * and Python's XML parser.
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
#include "tool.h"

/* Whether the shell command @fmt (with @path) exits 0. */
static int shell_ok(const char *fmt, const char *path)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, path);
	return system(cmd) == 0;
}

/* @text written as @name, then "hotstack report" of it: its status. */
static int report_of(const char *name, const char *text, size_t len)
{
	write_file(scratch(name), text, len);
	return run_tool("hotstack", "report", scratch(name), NULL);
}

static void counts_are_checked(void **state)
{
	static const struct {
		const char *name, *text, *error;
	} bad[] = {
		{ "neg.folded", "a;b 1\nbash;neg -5\n",
		  "neg.folded:2: the count '-5' is not a whole number of samples (it is negative)" },
		{ "nan.folded", "a;b 1\n# a comment\n\na;c x12\n",
		  "nan.folded:4: the count 'x12' is not a whole number of samples" },
		{ "frac.folded", "a;b 1.5\n", "frac.folded:1: the count '1.5' is not a whole" },
		{ "plus.folded", "a;b +1\n", "plus.folded:1: the count '+1' is not a whole" },
		{ "big.folded", "a 18446744073709551616\n",
		  "big.folded:1: the count 18446744073709551616 is more than 2^64 - 1" },
		{ "sum.folded", "a 18446744073709551615\nb 1\n",
		  "sum.folded:2: the counts add up to more than 2^64 - 1 samples" },
		{ "sum2.folded", "a 9223372036854775808\nb;c 3\nb 9223372036854775808\n",
		  "sum2.folded:3: the counts add up to more than 2^64 - 1 samples" },
		{ "nocount.folded", "a;b 1\na;b\n",
		  "nocount.folded:2: 'a;b' is not a folded stack" },
	};
	struct hs_profile p = { 0 };
	size_t i, line;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(report_of(bad[i].name, bad[i].text, strlen(bad[i].text)), 1);
		if (!strstr(tool_out, bad[i].error))
			fail_msg("%s: %s", bad[i].name, tool_out);
		assert_non_null(strstr(tool_out, "hotstack report: "));
		/* diff says the same of either profile. */
		assert_int_equal(run_tool("hotstack", "diff", scratch(bad[i].name),
					  scratch(bad[i].name), NULL), 1);
		assert_non_null(strstr(tool_out, bad[i].error));
	}
	/* The API gives the line. */
	assert_int_equal(hs_profile_parse(&p, "a 1\nb -1\n", &line), -EBADMSG);
	assert_int_equal(line, 2);
	hs_profile_free(&p);
	assert_int_equal(hs_profile_parse(&p, "a 18446744073709551615\nb 1\n", &line), -EOVERFLOW);
	assert_int_equal(line, 2);
	hs_profile_free(&p);
	/* The largest count there is, alone, is a profile. */
	assert_int_equal(report_of("max.folded", "a;b 18446744073709551615\n", 25), 0);
	assert_non_null(strstr(tool_out, "# samples: 18446744073709551615, counted: "
				  "18446744073709551615, dropped: 0\n"));
	assert_non_null(strstr(tool_out, "100.00% 100.00% 18446744073709551615  b\n"));
}

static void not_a_profile_is_refused(void **state)
{
	static const char json[] = "{\n  \"event\": null,\n  \"stacks\": [\n"
		"    {\"count\": 3, \"frames\": [\"a\", \"b\"]}\n  ]\n}\n";
	static const char report[] = "# hotstack report\n# samples: 3, counted: 3, dropped: 0\n"
		"\n# by self (the function was running)\n#   %self  %total      samples  function\n"
		"  100.00% 100.00%            3  b\n";
	static const char junk[] = "\x7f" "ELF\x02\x01\x01\xff\xfe\x80 garbage 12 \x01\x02";
	static const char junk_nul[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

	(void)state;
	assert_int_equal(report_of("p.json", json, strlen(json)), 1);
	assert_non_null(strstr(tool_out, "p.json:1: '{' is not a folded stack"));
	assert_int_equal(report_of("r.txt", report, strlen(report)), 1);
	assert_non_null(strstr(tool_out, "r.txt:6: the count 'b' is not a whole number"));
	assert_int_equal(report_of("junk", junk, sizeof(junk) - 1), 1);
	assert_non_null(strstr(tool_out, "junk:1: "));
	/* Printed without its control bytes. */
	assert_null(strchr(tool_out, '\x01'));
	assert_int_equal(report_of("junk.png", junk_nul, sizeof(junk_nul) - 1), 1);
	assert_non_null(strstr(tool_out, "neither a pprof profile"));
	/* What is refused is not an empty profile. */
	assert_null(strstr(tool_out, "# samples: 0"));
	/* Comments, blank lines and CRLF line ends are fine. */
	assert_int_equal(report_of("ok.folded", "# hotstack\n\r\na;b 2\r\n\n#x 1\na;c 1", 31), 0);
	assert_non_null(strstr(tool_out, "# samples: 3, counted: 3"));
	assert_non_null(strstr(tool_out, "  66.67%  66.67%            2  b\n"));
	/* An empty file is an empty profile. */
	assert_int_equal(report_of("empty.folded", "", 0), 0);
	assert_non_null(strstr(tool_out, "# samples: 0, counted: 0, dropped: 0\n"));
}

static void same_text_is_one_stack(void **state)
{
	static const char text[] = "main;read 2\nmain;other 1\nmain;read 3\n[dropped];[nested] 1\n"
		"[dropped];[nested] 1\n";
	struct hs_profile p = { 0 };
	char *out;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, text, NULL), 0);
	assert_int_equal(p.nr, 3);
	assert_int_equal(p.total, 8);
	assert_int_equal(p.dropped, 2);
	hs_profile_free(&p);
	write_file(scratch("same.folded"), text, strlen(text));
	assert_int_equal(run_tool("hotstack", "report", scratch("same.folded"), NULL), 0);
	assert_non_null(strstr(tool_out, "# distinct stacks: 3\n"));
	assert_non_null(strstr(tool_out, "#   dropped, [nested]: 2\n"));
	assert_null(strstr(tool_out, "#   dropped, [nested]: 1\n"));
	assert_non_null(strstr(tool_out, "  83.33%  83.33%            5  read\n"));
	assert_int_equal(run_tool("hotstack", "report", scratch("same.folded"), "-o",
				  scratch("same.out.folded"), NULL), 0);
	out = read_file(scratch("same.out.folded"), NULL);
	assert_string_equal(out, "main;read 5\nmain;other 1\n[dropped];[nested] 2\n");
	free(out);
	assert_int_equal(run_tool("hotstack", "report", scratch("same.folded"), "-o",
				  scratch("same.json"), NULL), 0);
	out = read_file(scratch("same.json"), NULL);
	assert_non_null(strstr(out, "{\"count\": 5, \"frames\": [\"main\", \"read\"]}"));
	assert_null(strstr(out, "{\"count\": 3,"));
	free(out);
	assert_int_equal(run_tool("hotstack", "report", scratch("same.folded"), "-o",
				  scratch("same.svg"), NULL), 0);
	out = read_file(scratch("same.svg"), NULL);
	assert_non_null(strstr(out, "<title>read (5 samples, 62.50%)</title>"));
	free(out);
	/* pprof: one sample a stack, read back as one line. */
	assert_int_equal(run_tool("hotstack", "report", scratch("same.folded"), "-o",
				  scratch("same.pb.gz"), NULL), 0);
	assert_int_equal(run_tool("hotstack", "report", scratch("same.pb.gz"), "-o",
				  scratch("same.back.folded"), NULL), 0);
	out = read_file(scratch("same.back.folded"), NULL);
	assert_string_equal(out, "main;read 5\nmain;other 1\n[dropped];[nested] 2\n");
	free(out);
	assert_int_equal(run_tool("hotstack", "diff", "--format", "folded", scratch("same.folded"),
				  scratch("same.folded"), NULL), 0);
	assert_non_null(strstr(tool_out, "main;read 5 5\n"));
}

/* A profile's lines in a shuffled order, the same each run. */
static char *shuffled(const char *text, unsigned int seed)
{
	char *copy = strdup(text), *lines[512], *line, *save, *out = malloc(strlen(text) + 1);
	size_t n = 0, i, j;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		lines[n++] = line;
	srand(seed);
	for (i = n - 1; i > 0; i--) {
		j = rand() % (i + 1);
		line = lines[i];
		lines[i] = lines[j];
		lines[j] = line;
	}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	free(copy);
	return out;
}

static void any_line_order_gives_the_same_svg(void **state)
{
	/* Siblings whose names sort differently by bytes and by frames: "a", "a!", "ab". */
	static const char *const frames[] = { "a", "a!", "ab", "zeta", "b c [mod]", "0x7f00",
					      "\xc3\xa9t\xc3\xa9", "[user]", "x;" };
	char *text = malloc(1 << 16), *shuf, *svg1, *svg2;
	size_t n = 0, i;

	(void)state;
	text[0] = '\0';
	for (i = 0; i < 300; i++) {
		n += sprintf(text + n, "%s;%s", frames[i % 8], frames[(i / 8) % 8]);
		if (i % 3)
			n += sprintf(text + n, ";%s", frames[(i / 64) % 8]);
		n += sprintf(text + n, " %zu\n", i % 7 + 1);
	}
	write_file(scratch("order1.folded"), text, n);
	shuf = shuffled(text, 7);
	write_file(scratch("order2.folded"), shuf, n);
	assert_string_not_equal(shuf, text);
	assert_int_equal(run_tool("hotstack", "report", scratch("order1.folded"), "-o",
				  scratch("order1.svg"), NULL), 0);
	assert_int_equal(run_tool("hotstack", "report", scratch("order2.folded"), "-o",
				  scratch("order2.svg"), NULL), 0);
	svg1 = read_file(scratch("order1.svg"), NULL);
	svg2 = read_file(scratch("order2.svg"), NULL);
	assert_string_equal(svg1, svg2);
	assert_true(shell_ok("xmllint --noout %s", scratch("order1.svg")));
	/* Siblings by name: "a" left of "a!", left of "ab", left of "zeta". */
	assert_true(strstr(svg1, "<title>a (") < strstr(svg1, "<title>zeta ("));
	free(svg1);
	free(svg2);
	/* The differential graph too, A and B each in another order. */
	free(shuf);
	shuf = shuffled(text, 11);
	write_file(scratch("order3.folded"), shuf, n);
	assert_int_equal(run_tool("hotstack", "diff", scratch("order1.folded"),
				  scratch("order3.folded"), "-o", scratch("d1.svg"), NULL), 0);
	assert_int_equal(run_tool("hotstack", "diff", scratch("order2.folded"),
				  scratch("order1.folded"), "-o", scratch("d2.svg"), NULL), 0);
	svg1 = read_file(scratch("d1.svg"), NULL);
	svg2 = read_file(scratch("d2.svg"), NULL);
	assert_string_equal(svg1, svg2);
	free(svg1);
	free(svg2);
	free(shuf);
	free(text);
}

/* Every frame of the SVG drawn once: the x of a frame is its parent's, plus its left siblings'. */
static void svg_layout_is_a_flame_graph(void **state)
{
	struct hs_profile p = { 0 };
	char *buf = NULL, *s;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* A stack that is a prefix of another, a deeper one before it in the text. */
	assert_int_equal(hs_profile_parse(&p, "m;b;c 2\nm;a 4\nm;b 2\nm 2\n", NULL), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(hs_write_svg(f, &p), 0);
	fclose(f);
	/*
	 * all 10 = 1200 px. As flamegraph.pl lays it out, a frame's own
	 * samples (its stack's line sorts before its callees') come first:
	 * m 10 at 0, its own 2, then a 4 at 240, b 4 at 720: its own 2, then
	 * c 2 at 960.
	 */
	assert_non_null(strstr(buf, "data-x=\"0.0000\" data-w=\"1200.0000\" data-l=\"0\"><title>all"));
	assert_non_null(strstr(buf, "data-x=\"0.0000\" data-w=\"1200.0000\" data-l=\"1\"><title>m (10"));
	assert_non_null(strstr(buf, "data-x=\"240.0000\" data-w=\"480.0000\" data-l=\"2\"><title>a (4"));
	assert_non_null(strstr(buf, "data-x=\"720.0000\" data-w=\"480.0000\" data-l=\"2\"><title>b (4"));
	assert_non_null(strstr(buf, "data-x=\"960.0000\" data-w=\"240.0000\" data-l=\"3\"><title>c (2"));
	/* Each once. */
	s = strstr(buf, "<title>b (");
	assert_null(strstr(s + 1, "<title>b ("));
	free(buf);
	hs_profile_free(&p);
}

static void names_are_bytes(void **state)
{
	char text[4096], *t = text, *out;
	int i;

	(void)state;
	/* --keys comm: a process name cut inside a character, invalid bytes, controls. */
	t += sprintf(t, "caf\xc3;[pid 1];\xff\xfe\x01;read 5\n");
	t += sprintf(t, "\xe2\x82;[pid 2];f\"<&> 3\n");
	/* A frame of 60 "é" in a frame 30 characters wide: its label is cut. */
	t += sprintf(t, "wide;");
	for (i = 0; i < 60; i++)
		t += sprintf(t, "\xc3\xa9");
	t += sprintf(t, " 2\n");
	t += sprintf(t, "other 40\n");
	write_file(scratch("bytes.folded"), text, t - text);

	assert_int_equal(run_tool("hotstack", "report", scratch("bytes.folded"), "-o",
				  scratch("bytes.json"), NULL), 0);
	assert_true(shell_ok("python3 -c 'import sys, json; d = json.load(open(sys.argv[1], "
			     "encoding=\"utf-8\")); f = d[\"stacks\"][0][\"frames\"]; "
			     "assert f[0] == \"caf\\\\xc3\" and f[2] == \"\\\\xff\\\\xfe\\x01\", f' %s",
			     scratch("bytes.json")));
	assert_int_equal(run_tool("hotstack", "report", scratch("bytes.folded"), "-o",
				  scratch("bytes.svg"), NULL), 0);
	assert_true(shell_ok("xmllint --noout %s", scratch("bytes.svg")));
	assert_true(shell_ok("python3 -c 'import sys, xml.dom.minidom as m; "
			     "m.parse(sys.argv[1])' %s", scratch("bytes.svg")));
	out = read_file(scratch("bytes.svg"), NULL);
	assert_non_null(strstr(out, "<title>caf\\xc3 ("));
	assert_non_null(strstr(out, "f&quot;&lt;&amp;&gt; ("));
	/* The cut label ends in whole characters, then "..". */
	assert_non_null(strstr(out, "\xc3\xa9\xc3\xa9..</text>"));
	free(out);
	/* The differential graph of them, and the diff report. */
	assert_int_equal(run_tool("hotstack", "diff", scratch("bytes.folded"),
				  scratch("bytes.folded"), "-o", scratch("bytes-diff.svg"), NULL), 0);
	assert_true(shell_ok("xmllint --noout %s", scratch("bytes-diff.svg")));
}

/* report's functions: a process name is not one; recursion counts once a stack. */
static void functions_of_a_profile(void **state)
{
	static const char text[] =
		"bash;[pid 7];[task];main;rec;rec;rec;leaf 4\n"
		"cp;[pid 8];main;copy 2\n"
		"main;bash 1\n"			/* no [pid N]: bash is a function here */
		"[user] 3\n";
	struct hs_profile p = { 0 }, q = { 0 };
	struct hs_fns f;
	size_t i;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, text, NULL), 0);
	assert_int_equal(hs_profile_parse(&q, "main;rec;leaf 1\n", NULL), 0);
	hs_fns_init(&f);
	assert_int_equal(hs_fns_add(&f, &p, 0), 0);
	assert_int_equal(hs_fns_add(&f, &q, 1), 0);
	assert_int_equal(f.nr, 5);
	for (i = 0; i < f.nr; i++) {
		const struct hs_fn *fn = &f.fn[i];

		assert_string_not_equal(fn->name, "cp");
		if (!strcmp(fn->name, "main")) {
			assert_int_equal(fn->total[0], 7);
			assert_int_equal(fn->self[0], 0);
			assert_int_equal(fn->total[1], 1);
		} else if (!strcmp(fn->name, "rec")) {
			assert_int_equal(fn->total[0], 4);	/* three times in one stack */
			assert_int_equal(fn->total[1], 1);
		} else if (!strcmp(fn->name, "leaf")) {
			assert_int_equal(fn->self[0], 4);
			assert_int_equal(fn->self[1], 1);
		} else if (!strcmp(fn->name, "bash")) {
			assert_int_equal(fn->self[0], 1);
			assert_int_equal(fn->total[0], 1);
		} else {
			assert_string_equal(fn->name, "copy");
			assert_int_equal(fn->self[0], 2);
		}
	}
	hs_fns_free(&f);
	hs_profile_free(&p);
	hs_profile_free(&q);
	write_file(scratch("fns.folded"), text, strlen(text));
	assert_int_equal(run_tool("hotstack", "report", scratch("fns.folded"), NULL), 0);
	assert_null(strstr(tool_out, "  cp\n"));
	assert_non_null(strstr(tool_out, "  40.00%  40.00%            4  leaf\n"));
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
		cmocka_unit_test(counts_are_checked),
		cmocka_unit_test(not_a_profile_is_refused),
		cmocka_unit_test(same_text_is_one_stack),
		cmocka_unit_test(any_line_order_gives_the_same_svg),
		cmocka_unit_test(svg_layout_is_a_flame_graph),
		cmocka_unit_test(names_are_bytes),
		cmocka_unit_test(functions_of_a_profile),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, teardown);
}
