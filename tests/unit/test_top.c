// SPDX-License-Identifier: GPL-2.0
/* hotstack top: its command line, and the text of a refresh from a synthetic profile. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <curses.h>
#include <linux/hotstack.h>
#include <linux/perf_event.h>

#include "commands.h"
#include "profile.h"
#include "record.h"
#include "top.h"
#include "tool.h"

/* Parse a NULL-terminated argument list, stderr silenced. */
static int parse(struct hs_top_opts *o, ...)
{
	char *argv[32];
	int argc = 0, ret, saved = dup(2);
	va_list ap;

	argv[argc++] = "top";
	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	if (!freopen("/dev/null", "w", stderr))
		abort();
	ret = hs_top_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return ret;
}

static void defaults_like_record_and_top(void **state)
{
	struct hs_top_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL), 0);
	assert_string_equal(o.s.event, "cycles");
	assert_int_equal(o.s.ev.type, PERF_TYPE_HARDWARE);
	assert_true((o.s.abi.flags & HOTSTACK_CFG_FREQ));
	assert_int_equal(o.s.abi.sample, 4000);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_KERNEL);
	assert_int_equal(o.s.abi.table_entries, 16384);
	assert_int_equal(o.s.abi.arena_frames, 262144);
	assert_int_equal(o.s.abi.cpu_entries, 4096);
	assert_true(o.delay > 0.99 && o.delay < 1.01);
	assert_int_equal(o.iterations, 0);
	assert_false(o.batch);
	assert_false(o.by_total);
}

static void options(void **state)
{
	struct hs_top_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-b", "-n", "3", "-d", "0.5", "-e", "cpu-clock", "-F", "99",
			       "-C", "0,2-3", "--keys", "comm,pid", "--stacks", "both",
			       "--sort", "total", "--table-entries", "1024", "--arena-frames",
			       "4096", "--max-depth", "32", "--collapse", "-p", "42", "-g", NULL),
			 0);
	assert_true(o.batch);
	assert_int_equal(o.iterations, 3);
	assert_true(o.delay > 0.49 && o.delay < 0.51);
	assert_true(o.by_total);
	assert_string_equal(o.s.event, "cpu-clock");
	assert_int_equal(o.s.ev.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(o.s.abi.sample, 99);
	assert_int_equal(o.s.abi.cpus_words, 1);
	assert_int_equal(o.s.cpus[0], 0xd);
	assert_int_equal(o.s.abi.keys, HOTSTACK_KEY_COMM | HOTSTACK_KEY_TGID);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER);
	assert_int_equal(o.s.abi.table_entries, 1024);
	assert_int_equal(o.s.abi.arena_frames, 4096);
	/* A CPU counts no more stacks than the store holds, unless asked to. */
	assert_int_equal(o.s.abi.cpu_entries, 1024);
	assert_int_equal(o.s.abi.max_depth, 32);
	assert_true((o.s.abi.flags & HOTSTACK_CFG_COLLAPSE));
	assert_int_equal(o.s.abi.pid, 42);
	/* Long spellings, a period, :k, and the sort back to self. */
	assert_int_equal(parse(&o, "--batch", "--iterations", "2", "--delay", "2", "-c", "100000",
			       "-e", "cpu-clock:k", "--sort", "self", "-a", NULL), 0);
	assert_true(o.batch);
	assert_int_equal(o.iterations, 2);
	assert_false((o.s.abi.flags & HOTSTACK_CFG_FREQ));
	assert_int_equal(o.s.abi.sample, 100000);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_KERNEL);
	assert_false(o.by_total);
	assert_int_equal(parse(&o, "-b", "--cpu-entries", "256", NULL), 0);
	assert_int_equal(o.s.abi.cpu_entries, 256);
	assert_int_equal(o.s.abi.table_entries, 16384);
	assert_int_equal(parse(&o, "-b", "--cpu-entries", "65536", "--table-entries", "16", NULL),
			 0);
	assert_int_equal(o.s.abi.cpu_entries, 65536);
}

static void bad_options_exit_2(void **state)
{
	struct hs_top_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-d", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "0.05", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "x", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "3601", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-n", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-n", "-1", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-n", "2x", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--sort", "name", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-e", "bogus", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "10", "-c", "5", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-a", "-C", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-p", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--stacks", "all", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "tid", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--table-entries", "1000", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--cpu-entries", "1000", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--cpu-entries", "8", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--cpu-entries", "33554432", NULL), HS_EXIT_USAGE);
	/* record's own options are not top's; top runs no command. */
	assert_int_equal(parse(&o, "-o", "x.folded", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--format", "svg", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "ls", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--", "ls", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--bogus", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-x", NULL), HS_EXIT_USAGE);
}

static void command_line_errors(void **state)
{
	(void)state;
	/* run_tool's standard output is a file: full screen is refused. */
	assert_int_equal(run_tool("hotstack", "top", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack top: standard output is not a terminal: "
				"use -b"));
	assert_int_equal(run_tool("hotstack", "top", "--bogus", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack top: unknown option '--bogus'"));
	assert_non_null(strstr(tool_out, "usage: hotstack top"));
	assert_int_equal(run_tool("hotstack", "top", "-b", "-d", "0", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "-d wants the seconds between refreshes"));
	assert_int_equal(run_tool("hotstack", "top", "-h", NULL), 0);
	assert_non_null(strstr(tool_out, "usage: hotstack top"));
	assert_int_equal(run_tool("hotstack", "--help", NULL), 0);
	assert_non_null(strstr(tool_out, "  top "));
	/* No module: record's message. */
	setenv("HOTSTACK_DEVICE", "/nonexistent/hotstack", 1);
	assert_int_equal(run_tool("hotstack", "top", "-b", "-n", "1", NULL), 1);
	assert_non_null(strstr(tool_out, "the hotstack module is not loaded"));
	unsetenv("HOTSTACK_DEVICE");
}

/* 100 counted samples in four stacks, 5 dropped. */
static const char synth_profile[] =
	"entry;sys_read;vfs_read;copy_user 50\n"
	"entry;sys_write;vfs_write;copy_user 30\n"
	"entry;sys_write;memcpy 10\n"
	"entry;sys_read;vfs_read 10\n"
	"[dropped];[table full] 5\n";

static char *render(const struct hs_top_frame *fr, unsigned int fns, unsigned int stacks)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(hs_top_render(f, fr, fns, stacks), 0);
	fclose(f);
	return buf;
}

static void synth_frame(struct hs_top_frame *fr, const struct hs_profile *p)
{
	memset(fr, 0, sizeof(*fr));
	fr->event = "cpu-clock";
	strcpy(fr->rate, "1000 Hz");
	fr->elapsed = 3;
	fr->interval = 1;
	fr->table_entries = 16;		/* a store of 12 stacks, every CPU's */
	fr->source = "synthetic";
	fr->st.nr_cpus = 2;
	fr->st.elapsed_ns = 1000000000;
	fr->st.total.samples = 112;
	fr->st.interrupts = 112;
	fr->st.total.counted = 100;
	fr->st.total.drops[HOTSTACK_DROP_TABLE_FULL] = 5;
	fr->st.total.drops[HOTSTACK_DROP_FILTERED] = 7;
	fr->st.total.entries = 4;
	fr->st.total.timed = 7;
	fr->st.total.handler_ns = 7000;
	fr->p = p;
}

/* Each of the NULL-terminated strings is in @text, in that order. */
static void assert_in_order(const char *text, ...)
{
	const char *at = text, *s, *found;
	va_list ap;

	va_start(ap, text);
	while ((s = va_arg(ap, const char *))) {
		found = strstr(at, s);
		if (!found)
			fail_msg("'%s' missing (or out of order) in:\n%s", s, text);
		at = found + strlen(s);
	}
	va_end(ap);
}

static void frame_header(void **state)
{
	struct hs_profile p = { 0 };
	struct hs_top_frame fr;
	char *text;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, synth_profile, NULL), 0);
	synth_frame(&fr, &p);
	text = render(&fr, 20, 10);
	assert_in_order(text,
			"hotstack top - cpu-clock, 1000 Hz, 2 CPUs, up 3.0 s, sorted by self\n",
			"samples: 112 samples/s (112 in 1.00 s), counted 100, dropped 5 "
			"(table full 5), filtered out 7, 0 in NMI\n",
			"stacks: 4 distinct, store 33% full (4 of 12)\n",
			/* 1000 ns x 112 samples in 2 CPU-seconds */
			"cost: 1000 ns/sample, overhead 0.006% CPU\n",
			"stacks from: synthetic\n", NULL);
	free(text);
	/* With the mapping: the fullest CPU's count table too (6 of 3/4 of 16). */
	fr.fill = (struct hs_table_fill){ .most = 6, .cpu = 1, .cpu_entries = 16 };
	text = render(&fr, 20, 10);
	assert_in_order(text, "stacks: 4 distinct, store 33% full (4 of 12), CPU 1's counts 50% "
			"full\n", NULL);
	free(text);
	/* Before the first refresh: the header says it waits. */
	fr.p = NULL;
	text = render(&fr, 20, 10);
	assert_non_null(strstr(text, "waiting for the first interval"));
	assert_null(strstr(text, "FUNCTION"));
	free(text);
	hs_profile_free(&p);
}

static void frame_functions_by_self_and_total(void **state)
{
	struct hs_profile p = { 0 };
	struct hs_top_frame fr;
	char *text;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, synth_profile, NULL), 0);
	synth_frame(&fr, &p);
	/* By self: copy_user 80, then the 10s (vfs_read first: more total). */
	text = render(&fr, 20, 10);
	assert_in_order(text, "   %SELF  %TOTAL       SELF      TOTAL  FUNCTION\n",
			"  80.00%  80.00%         80         80  copy_user\n",
			"  10.00%  60.00%         10         60  vfs_read\n",
			"  10.00%  10.00%         10         10  memcpy\n",
			"\n  %STACK", NULL);
	/* Functions never the leaf are not in the self table. */
	assert_null(strstr(text, "  entry\n"));
	assert_null(strstr(text, "[dropped]"));
	free(text);
	/* By total: entry 100%, copy_user 80%, vfs_read and sys_read 60%, ... */
	fr.by_total = 1;
	text = render(&fr, 20, 10);
	assert_in_order(text, "sorted by total\n",
			"   0.00% 100.00%          0        100  entry\n",
			"  80.00%  80.00%         80         80  copy_user\n",
			"  10.00%  60.00%         10         60  vfs_read\n",
			"   0.00%  60.00%          0         60  sys_read\n",
			"   0.00%  40.00%          0         40  sys_write\n",
			"   0.00%  30.00%          0         30  vfs_write\n",
			"  10.00%  10.00%         10         10  memcpy\n",
			"\n  %STACK", NULL);
	free(text);
	/* Two rows only. */
	text = render(&fr, 2, 10);
	assert_non_null(strstr(text, "  copy_user\n"));
	assert_null(strstr(text, "  vfs_read\n"));
	free(text);
	hs_profile_free(&p);
}

static void frame_stacks(void **state)
{
	struct hs_profile p = { 0 };
	struct hs_top_frame fr;
	char *text;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, synth_profile, NULL), 0);
	synth_frame(&fr, &p);
	text = render(&fr, 20, 10);
	assert_in_order(text, "  %STACK    SAMPLES  STACK (innermost first)\n",
			"  50.00%         50  copy_user <- vfs_read <- sys_read <- entry\n",
			"  30.00%         30  copy_user <- vfs_write <- sys_write <- entry\n",
			"  10.00%         10  vfs_read <- sys_read <- entry\n",
			"  10.00%         10  memcpy <- sys_write <- entry\n", NULL);
	free(text);
	text = render(&fr, 20, 1);
	assert_non_null(strstr(text, "  copy_user <- vfs_read <- sys_read <- entry\n"));
	assert_null(strstr(text, "vfs_write <-"));
	free(text);
	hs_profile_free(&p);
}

/* Row @y of the ncurses screen, trailing blanks cut. */
static const char *screen_row(int y)
{
	static char row[512];
	int n;

	n = mvinnstr(y, 0, row, COLS < 511 ? COLS : 511);
	row[n > 0 ? n : 0] = '\0';
	while (n > 0 && row[n - 1] == ' ')
		row[--n] = '\0';
	return row;
}

/* The full-screen view on a 60x24 vt100 (terminfo from ncurses-base), drawn into a file. */
static void screen_layout(void **state)
{
	struct hs_profile p = { 0 };
	struct hs_top_frame fr;
	FILE *out = tmpfile(), *in = fopen("/dev/null", "r");
	SCREEN *scr;
	int y;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	assert_int_equal(hs_profile_parse(&p, synth_profile, NULL), 0);
	synth_frame(&fr, &p);
	setenv("LINES", "24", 1);
	setenv("COLUMNS", "60", 1);
	scr = newterm("vt100", out, in);
	assert_non_null(scr);
	assert_int_equal(LINES, 24);
	assert_int_equal(COLS, 60);
	hs_top_draw(&fr, 1.0);
	assert_string_equal(screen_row(0),
			    "hotstack top - cpu-clock, 1000 Hz, 2 CPUs, up 3.0 s, sorted");
	assert_string_equal(screen_row(4), "stacks from: synthetic");
	assert_string_equal(screen_row(5), "");
	/* The column titles are reversed, to the right edge. */
	assert_string_equal(screen_row(6), "   %SELF  %TOTAL       SELF      TOTAL  FUNCTION");
	assert_true(mvinch(6, 0) & A_REVERSE);
	assert_true(mvinch(6, 59) & A_REVERSE);
	assert_false(mvinch(7, 0) & A_REVERSE);
	assert_string_equal(screen_row(7), "  80.00%  80.00%         80         80  copy_user");
	assert_string_equal(screen_row(8), "  10.00%  60.00%         10         60  vfs_read");
	assert_string_equal(screen_row(9), "  10.00%  10.00%         10         10  memcpy");
	assert_string_equal(screen_row(10), "");
	assert_string_equal(screen_row(11), "  %STACK    SAMPLES  STACK (innermost first)");
	assert_true(mvinch(11, 0) & A_REVERSE);
	/* Lines longer than the screen are cut at its width. */
	assert_string_equal(screen_row(12),
			    "  50.00%         50  copy_user <- vfs_read <- sys_read <- en");
	assert_string_equal(screen_row(15), "  10.00%         10  memcpy <- sys_write <- entry");
	for (y = 16; y < 23; y++)
		assert_string_equal(screen_row(y), "");
	/* The keys, reversed, on the last line. */
	assert_non_null(strstr(screen_row(23),
			       " q quit  s/t sort by self/total  r refresh  every 1.0 s"));
	assert_true(mvinch(23, 0) & A_REVERSE);
	/* By total, then on a screen too small for the tables: the header only. */
	fr.by_total = 1;
	hs_top_draw(&fr, 1.0);
	assert_string_equal(screen_row(7), "   0.00% 100.00%          0        100  entry");
	assert_int_equal(resizeterm(10, 60), OK);
	hs_top_draw(&fr, 0.5);
	assert_string_equal(screen_row(1),
			    "samples: 112 samples/s (112 in 1.00 s), counted 100, dropped");
	assert_string_equal(screen_row(6), "   %SELF  %TOTAL       SELF      TOTAL  FUNCTION");
	assert_string_equal(screen_row(7), "");
	assert_non_null(strstr(screen_row(9), "every 0.5 s"));
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	hs_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_like_record_and_top),
		cmocka_unit_test(options),
		cmocka_unit_test(bad_options_exit_2),
		cmocka_unit_test(command_line_errors),
		cmocka_unit_test(frame_header),
		cmocka_unit_test(frame_functions_by_self_and_total),
		cmocka_unit_test(frame_stacks),
		cmocka_unit_test(screen_layout),
	};
	int ret;

	/* tool.h's file helpers: no files here. */
	(void)scratch;
	(void)write_file;
	(void)read_file;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	scratch_remove();
	return ret;
}
