// SPDX-License-Identifier: GPL-2.0
/* hotstack record's command line, event spellings, CPU lists, profiles. */
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
#include <linux/perf_event.h>

#include "commands.h"
#include "events.h"
#include "profile.h"
#include "output.h"
#include "record.h"
#include "tool.h"

/* Parse a NULL-terminated argument list, stderr silenced. */
static int parse(struct hs_record_opts *o, ...)
{
	static char *argv[32];	/* o->cmd points into it after the call */
	int argc = 0, ret, saved = dup(2);
	va_list ap;

	argv[argc++] = "record";
	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	freopen("/dev/null", "w", stderr);
	ret = hs_record_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return ret;
}

static void defaults_like_perf(void **state)
{
	struct hs_record_opts o;

	(void)state;
	assert_int_equal(parse(&o, NULL), 0);
	assert_string_equal(o.s.event, "cycles");
	assert_int_equal(o.s.ev.type, PERF_TYPE_HARDWARE);
	assert_true((o.s.abi.flags & HOTSTACK_CFG_FREQ));
	assert_int_equal(o.s.abi.sample, 4000);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_KERNEL);
	/* One store of stacks for every CPU, and each CPU's counts of them. */
	assert_int_equal(o.s.abi.table_entries, 16384);
	assert_int_equal(o.s.abi.arena_frames, 262144);
	assert_int_equal(o.s.abi.cpu_entries, 4096);
	assert_string_equal(o.output, "hotstack.folded");
	assert_int_equal(o.format, HS_FMT_FOLDED);
	assert_null(o.cmd);
}

static void options(void **state)
{
	struct hs_record_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-e", "cpu-clock", "-c", "100000", "-C", "0,2-3", "-g",
			       "--stacks", "both", "--max-depth", "64", "--keys",
			       "comm,pid,cgroup,context", "--collapse", "-o", "out.json", "--", "ls",
			       "-l", NULL), 0);
	assert_int_equal(o.s.ev.type, PERF_TYPE_SOFTWARE);
	assert_false((o.s.abi.flags & HOTSTACK_CFG_FREQ));
	assert_int_equal(o.s.abi.sample, 100000);
	assert_int_equal(o.s.abi.cpus_words, 1);
	assert_int_equal(o.s.cpus[0], 0xd);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER);
	assert_int_equal(o.s.abi.max_depth, 64);
	assert_int_equal(o.s.abi.keys, HOTSTACK_KEY_ALL);
	assert_true((o.s.abi.flags & HOTSTACK_CFG_COLLAPSE));
	assert_int_equal(o.format, HS_FMT_JSON);
	assert_string_equal(o.cmd[0], "ls");
	assert_string_equal(o.cmd[1], "-l");
	assert_int_equal(parse(&o, "-o", "x.txt", "-d", "2.5", NULL), 0);
	assert_int_equal(o.format, HS_FMT_REPORT);
	assert_true(o.duration > 2.4 && o.duration < 2.6);
	assert_int_equal(parse(&o, "-e", "cycles:u", NULL), 0);
	assert_int_equal(o.s.abi.stacks, HOTSTACK_STACK_USER);
	assert_int_equal(parse(&o, "--format", "report", "-o", "-", NULL), 0);
	assert_int_equal(o.format, HS_FMT_REPORT);
	assert_int_equal(parse(&o, "-o", "flame.svg", NULL), 0);
	assert_int_equal(o.format, HS_FMT_SVG);
	/* --budget: a percentage, to parts per million. */
	assert_int_equal(parse(&o, "--budget", "1%", NULL), 0);
	assert_int_equal(o.s.abi.budget_ppm, 10000);
	assert_int_equal(parse(&o, "--budget", "0.25", NULL), 0);
	assert_int_equal(o.s.abi.budget_ppm, 2500);
	assert_int_equal(parse(&o, "--budget", "100%", NULL), 0);
	assert_int_equal(o.s.abi.budget_ppm, 1000000);
	assert_int_equal(parse(&o, "--table-entries", "65536", "--arena-frames", "1048576",
			       "--cpu-entries", "16384", NULL), 0);
	assert_int_equal(o.s.abi.table_entries, 65536);
	assert_int_equal(o.s.abi.arena_frames, 1048576);
	assert_int_equal(o.s.abi.cpu_entries, 16384);
	assert_true(o.s.have_table && o.s.have_arena && o.s.have_cpu_entries);
	assert_int_equal(hs_format_of_name("x.folded"), HS_FMT_FOLDED);
	assert_int_equal(hs_format_of_name("x.bin"), -1);
}

static void bad_options_exit_2(void **state)
{
	struct hs_record_opts o;

	(void)state;
	assert_int_equal(parse(&o, "-e", "bogus", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "100001", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "10", "-c", "5", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-a", "-C", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-C", "x", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-p", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-p", "5", "--", "ls", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "-1", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--stacks", "all", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--max-depth", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--max-depth", "1025", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "tid", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--format", "yaml", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--table-entries", "1000", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--arena-frames", "10", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--cpu-entries", "1000", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--cpu-entries", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--budget", "0", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--budget", "101%", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--budget", "1%%", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--budget", "nan", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--budget", "", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--max-depth", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--bogus", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-x", NULL), HS_EXIT_USAGE);
}

/* The command line's small holes, each closed. */
static void small_checks(void **state)
{
	struct hs_record_opts o;
	char *text;

	(void)state;
	/* strtod() takes nan and inf: not seconds. */
	assert_int_equal(parse(&o, "-d", "nan", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "inf", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "1e999", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-d", "0.5", NULL), 0);
	assert_int_equal(run_tool("hotstack", "top", "-b", "-d", "nan", NULL), HS_EXIT_USAGE);
	/* strtoul() takes "-1" as ULONG_MAX. */
	assert_int_equal(run_tool("hotstack", "record", "-C", "-1", NULL), HS_EXIT_USAGE);
	assert_null(strstr(tool_out, "18446744073709551615"));
	assert_non_null(strstr(tool_out, "bad CPU list '-1'"));
	assert_int_equal(parse(&o, "-C", "0--1", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-C", " 1", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-p", "-5", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "-F", "+99", NULL), HS_EXIT_USAGE);
	/* --keys: no empty names. */
	assert_int_equal(parse(&o, "--keys", ",,", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "comm,", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "comm,,pid", NULL), HS_EXIT_USAGE);
	assert_int_equal(parse(&o, "--keys", "pid,context", NULL), 0);
	assert_int_equal(o.s.abi.keys, HOTSTACK_KEY_TGID | HOTSTACK_KEY_CONTEXT);
	/* One rule for output names: an unknown extension is a usage error. */
	assert_int_equal(run_tool("hotstack", "record", "-o", "x.unknown", NULL), HS_EXIT_USAGE);
	assert_non_null(strstr(tool_out, "hotstack record: cannot tell the format of 'x.unknown' "
				  "from its name: use .folded, .txt, .json, .svg, .pb.gz or .otlp.pb, "
				  "or --format"));
	assert_int_equal(parse(&o, "-o", "x.unknown", "--format", "json", NULL), 0);
	assert_int_equal(o.format, HS_FMT_JSON);
	assert_int_equal(parse(&o, "-o", "profile", NULL), 0);
	assert_int_equal(o.format, HS_FMT_FOLDED);
	assert_int_equal(parse(&o, "-o", "dir.d/profile", NULL), 0);
	assert_int_equal(o.format, HS_FMT_FOLDED);
	/* A full disk says so, and in the command's name. */
	write_file(scratch("p.folded"), "a;b 1\n", 6);
	assert_int_equal(run_tool("hotstack", "report", scratch("p.folded"), "-o", "/dev/full",
				  NULL), 1);
	assert_non_null(strstr(tool_out, "hotstack report: cannot write /dev/full: No space left "
				  "on device"));
	assert_int_equal(run_tool("hotstack", "report", scratch("p.folded"), "-o",
				  scratch("nodir/x.txt"), NULL), 1);
	assert_non_null(strstr(tool_out, "hotstack report: cannot write "));
	assert_non_null(strstr(tool_out, "nodir/x.txt: No such file or directory"));
	/* A file half written is not left behind. */
	assert_int_equal(run_tool("hotstack", "report", scratch("p.folded"), "-o",
				  scratch("ok.txt"), NULL), 0);
	text = read_file(scratch("ok.txt"), NULL);
	assert_non_null(strstr(text, "# samples: 1"));
	free(text);
	scratch_remove();
}

static void event_spellings(void **state)
{
	struct hs_event_spec ev;
	char err[256];

	(void)state;
	assert_int_equal(hs_parse_event("cache-misses", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_MISSES);
	assert_int_equal(hs_parse_event("cycles:pp", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.precise, 2);
	assert_int_equal(hs_parse_event("r003c:pk", &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_int_equal(ev.config, 0x3c);
	assert_int_equal(ev.precise, 1);
	assert_int_equal(ev.stacks, HOTSTACK_STACK_KERNEL);
	assert_int_equal(hs_parse_event("cycles:pppp", &ev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at most 3"));
	assert_int_equal(hs_parse_event("cpu-clock:p", &ev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "hardware events only"));
	assert_int_equal(hs_parse_event("cycles:x", &ev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown modifier 'x'"));
	assert_int_equal(hs_parse_event("rxyz", &ev, err, sizeof(err)), -1);
	assert_int_equal(hs_parse_event("cycle", &ev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "known: cycles"));
}

static void cpu_lists(void **state)
{
	uint64_t w[4];
	unsigned int n;
	char err[128];

	(void)state;
	assert_int_equal(hs_parse_cpus("0", w, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(w[0], 1);
	assert_int_equal(hs_parse_cpus("1,64-65", w, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(w[0], 2);
	assert_int_equal(w[1], 3);
	assert_int_equal(hs_parse_cpus("256", w, 4, &n, err, sizeof(err)), -1);
	assert_int_equal(hs_parse_cpus("", w, 4, &n, err, sizeof(err)), -1);
	assert_int_equal(hs_parse_cpus("3-1", w, 4, &n, err, sizeof(err)), -1);
	assert_int_equal(hs_parse_cpus("1,", w, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(hs_parse_cpus("1;2", w, 4, &n, err, sizeof(err)), -1);
}

static const char sample_profile[] =
	"entry;do_syscall;rec;rec;leaf 6\n"
	"entry;do_syscall;other 3\n"
	"comm;[user] 1\n"
	"[truncated];rec;leaf 2\n"
	"[dropped];[table full] 4\n";

static char *write_to_string(int (*fn)(FILE *, const struct hs_profile *), struct hs_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(fn(f, p), 0);
	fclose(f);
	return buf;
}

static int report20(FILE *f, const struct hs_profile *p)
{
	return hs_write_report(f, p, 20);
}

static void profile_report(void **state)
{
	struct hs_profile p = { 0 };
	size_t bad = 0;
	char *text;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, sample_profile, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(p.nr, 5);
	assert_int_equal(p.total, 16);
	assert_int_equal(p.dropped, 4);
	assert_int_equal(p.truncated, 2);
	text = write_to_string(report20, &p);
	assert_non_null(strstr(text, "# samples: 16, counted: 12, dropped: 4\n"));
	assert_non_null(strstr(text, "#   dropped, [table full]: 4\n"));
	/* leaf: self 8 of 12; rec: total 8 (once per stack, recursion or not). */
	assert_non_null(strstr(text, "  66.67%  66.67%            8  leaf\n"));
	assert_non_null(strstr(text, "   0.00%  66.67%            8  rec\n"));
	assert_non_null(strstr(text, "  25.00%  25.00%            3  other\n"));
	free(text);
	text = write_to_string(hs_write_folded, &p);
	assert_string_equal(text, "entry;do_syscall;rec;rec;leaf 6\nentry;do_syscall;other 3\n"
			    "comm;[user] 1\n[truncated];rec;leaf 2\n[dropped];[table full] 4\n");
	free(text);
	hs_profile_free(&p);
}

/* Whether python3 -c @prog accepts @text, given as a file name in argv[1]. */
static int python_accepts(const char *text, const char *prog)
{
	char path[] = "/tmp/hs_unit_XXXXXX", cmd[512];
	int fd = mkstemp(path), ret;
	FILE *f = fdopen(fd, "w");

	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s", prog, path);
	ret = system(cmd);
	unlink(path);
	return ret == 0;
}

static void profile_json_parses(void **state)
{
	struct hs_profile p = { 0 };
	char *text;

	(void)state;
	hs_profile_parse(&p, sample_profile, NULL);
	hs_profile_add(&p, "quote\"and\\back", 14, 1);
	p.event = "cpu-clock";
	text = write_to_string(hs_write_json, &p);
	assert_non_null(strstr(text, "\"frames\": [\"entry\", \"do_syscall\", \"rec\", \"rec\", "
				     "\"leaf\"]"));
	assert_non_null(strstr(text, "\"quote\\\"and\\\\back\""));
	assert_true(python_accepts(text, "import sys, json; json.load(open(sys.argv[1]))"));
	free(text);
	hs_profile_free(&p);
}

static void profile_svg_parses(void **state)
{
	struct hs_profile p = { 0 };
	char *text;

	(void)state;
	hs_profile_parse(&p, sample_profile, NULL);
	hs_profile_add(&p, "a<b;c&d", 7, 1);
	p.event = "cpu-clock";
	text = write_to_string(hs_write_svg, &p);
	assert_non_null(strstr(text, "<svg "));
	assert_non_null(strstr(text, "<title>leaf (6 samples, 35.29%)</title>"));
	assert_non_null(strstr(text, "<title>[dropped] (4 samples"));
	assert_non_null(strstr(text, "a&lt;b"));
	assert_non_null(strstr(text, "cpu-clock"));
	assert_non_null(strstr(text, "17 samples, 4 dropped, 2 in truncated stacks"));
	assert_true(python_accepts(text, "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])"));
	free(text);
	hs_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_like_perf),
		cmocka_unit_test(options),
		cmocka_unit_test(bad_options_exit_2),
		cmocka_unit_test(small_checks),
		cmocka_unit_test(event_spellings),
		cmocka_unit_test(cpu_lists),
		cmocka_unit_test(profile_report),
		cmocka_unit_test(profile_json_parses),
		cmocka_unit_test(profile_svg_parses),
	};

	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
