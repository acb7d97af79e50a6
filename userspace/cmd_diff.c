// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack diff: profile B against profile A, each a saved profile (folded
 * or pprof, gzipped or not): a report of the functions whose share changed
 * most, difffolded lines, or a differential flame graph.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "profile.h"

enum { HS_DIFF_REPORT, HS_DIFF_FOLDED, HS_DIFF_SVG };

static const char hs_diff_usage[] =
	"usage: hotstack diff A B [-o OUT.txt|.folded|.svg] [--format report|folded|svg]\n"
	"  A, B: saved profiles (.folded or .pb.gz, - for standard input)\n";

static int hs_diff_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "hotstack diff: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", hs_diff_usage);
	return HS_EXIT_USAGE;
}

static int hs_diff_format_of_str(const char *s)
{
	if (!strcmp(s, "report"))
		return HS_DIFF_REPORT;
	if (!strcmp(s, "folded"))
		return HS_DIFF_FOLDED;
	if (!strcmp(s, "svg"))
		return HS_DIFF_SVG;
	return -1;
}

static int hs_diff_format_of_name(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "-"))
		return HS_DIFF_REPORT;
	if (n > 4 && !strcmp(name + n - 4, ".txt"))
		return HS_DIFF_REPORT;
	if (n > 7 && !strcmp(name + n - 7, ".folded"))
		return HS_DIFF_FOLDED;
	if (n > 4 && !strcmp(name + n - 4, ".svg"))
		return HS_DIFF_SVG;
	return -1;
}

static int hs_diff_write(const char *out, int format, const char *paths[2],
			 const struct hs_profile p[2])
{
	FILE *f = out && strcmp(out, "-") ? fopen(out, "w") : stdout;
	int ret;

	if (!f) {
		fprintf(stderr, "hotstack diff: cannot write %s: %s\n", out, strerror(errno));
		return -1;
	}
	if (format == HS_DIFF_FOLDED)
		ret = hs_write_diff_folded(f, &p[0], &p[1]);
	else if (format == HS_DIFF_SVG)
		ret = hs_write_svg_diff(f, &p[0], &p[1]);
	else
		ret = hs_write_diff_report(f, paths[0], &p[0], paths[1], &p[1], 20);
	if (f == stdout) {
		if (fflush(f) && !ret)
			ret = -errno;
		out = "standard output";
	} else if (fclose(f) && !ret) {
		ret = -errno;
	}
	if (ret)
		fprintf(stderr, "hotstack diff: cannot write %s: %s\n", out, strerror(-ret));
	return ret ? -1 : 0;
}

int cmd_diff(int argc, char **argv)
{
	const char *paths[2] = { NULL, NULL }, *out = NULL, *names[2];
	struct hs_profile p[2] = { 0 };
	int i, n = 0, format = -1, ret = 1;
	char err[512];
	size_t bad;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("%s", hs_diff_usage);
			return 0;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--format")) {
			if (i + 1 == argc)
				return hs_diff_error("option '%s' needs a value", argv[i]);
			if (argv[i][1] == 'o') {
				out = argv[++i];
				continue;
			}
			format = hs_diff_format_of_str(argv[++i]);
			if (format < 0)
				return hs_diff_error("--format wants report, folded or svg, "
						     "not '%s'", argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return hs_diff_error("unexpected argument '%s'", argv[i]);
		} else if (n == 2) {
			return hs_diff_error("takes two profiles, A and B; what is '%s'?", argv[i]);
		} else {
			paths[n++] = argv[i];
		}
	}
	if (n < 2)
		return hs_diff_error("%s", "wants two profiles, A and B");
	if (!strcmp(paths[0], "-") && !strcmp(paths[1], "-"))
		return hs_diff_error("%s", "only one of A and B can be standard input");
	if (format < 0 && out) {
		format = hs_diff_format_of_name(out);
		if (format < 0)
			return hs_diff_error("cannot tell the format of '%s': use .txt, .folded or "
					     ".svg, or --format", out);
	}
	for (i = 0; i < 2; i++) {
		names[i] = strcmp(paths[i], "-") ? paths[i] : "standard input";
		bad = 0;
		if (hs_profile_load(&p[i], paths[i], &bad, err, sizeof(err))) {
			fprintf(stderr, "hotstack diff: %s\n", err);
			goto out_free;
		}
		if (bad)
			fprintf(stderr, "hotstack diff: %zu line(s) of %s are not stacks, "
				"left out\n", bad, names[i]);
	}
	ret = hs_diff_write(out, format < 0 ? HS_DIFF_REPORT : format, names, p) ? 1 : 0;
out_free:
	hs_profile_free(&p[0]);
	hs_profile_free(&p[1]);
	return ret;
}
