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
#include "options.h"
#include "output.h"
#include "profile.h"
#include "view.h"

enum { O_OUTPUT = 'o', O_FORMAT = HS_OPT_LONG };

static const struct hs_option hs_diff_options[] = {
	{ O_OUTPUT, "output", "FILE", "write there instead of standard output (- is standard "
	  "output), in the format FILE's name asks for: .txt, .folded or .svg" },
	{ O_FORMAT, "format", "FORMAT", "report (default: changes of share), folded "
	  "(difffolded: stack countA countB) or svg (a differential flame graph)" },
	HS_OPTION_END,
};

/* The formats diff writes. */
#define HS_DIFF_FORMATS	((1U << HS_FMT_REPORT) | (1U << HS_FMT_FOLDED) | (1U << HS_FMT_SVG))

static int hs_diff_write(const char *out, int format, const char *names[2],
			 const struct hs_profile p[2], const struct hs_view *v)
{
	struct hs_output o;
	int ret;

	if (hs_output_open(&o, "diff", out))
		return -1;
	if (format == HS_FMT_FOLDED)
		ret = hs_write_diff_folded(o.f, &p[0], &p[1]);
	else if (format == HS_FMT_SVG)
		ret = hs_write_svg_diff(o.f, &p[0], &p[1]);
	else
		ret = hs_write_diff_report(o.f, names[0], &p[0], names[1], &p[1], v);
	return hs_output_close(&o, ret);
}

int cmd_diff(int argc, char **argv)
{
	static const struct hs_option *const tables[] = {
		hs_diff_options, hs_filter_options, hs_cgroup_filter_options, hs_view_options,
		NULL,
	};
	const char *out = NULL, *format = NULL, *names[2];
	struct hs_profile p[2] = { 0 };
	struct hs_view v;
	struct hs_args a;
	char err[512], *value, **paths;
	int id, i, n, fmt, ret = 1;

	hs_view_defaults(&v);
	if (hs_args_init(&a, "diff", "[OPTIONS] A B",
			 "Profile B against profile A (each folded or pprof, - for standard "
			 "input): how each function's share changed.", tables, 0, argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END) {
		if (id == HS_ARGS_EXIT)
			goto out_args;
		if (id == O_OUTPUT)
			out = value;
		else if (id == O_FORMAT)
			format = value;
		else if (hs_view_option(&a, &v, id, value) > 1)
			goto out_args;
	}
	n = hs_args_rest(&a, &paths);
	if (n < 2) {
		hs_args_error(&a, "wants two profiles, A and B");
		goto out_args;
	}
	if (n > 2) {
		hs_args_error(&a, "takes two profiles, A and B; what is '%s'?", paths[2]);
		goto out_args;
	}
	if (!strcmp(paths[0], "-") && !strcmp(paths[1], "-")) {
		hs_args_error(&a, "only one of A and B can be standard input");
		goto out_args;
	}
	if (hs_output_format(&a, out, format, HS_FMT_REPORT, HS_DIFF_FORMATS, &fmt))
		goto out_args;
	hs_args_free(&a);
	for (i = 0; i < 2; i++) {
		names[i] = strcmp(paths[i], "-") ? paths[i] : "standard input";
		if (hs_profile_load(&p[i], paths[i], err, sizeof(err))) {
			fprintf(stderr, "hotstack diff: %s\n", err);
			goto out_free;
		}
		/* The filters, on both. */
		n = hs_profile_filter(&p[i], &v.filter);
		if (n) {
			fprintf(stderr, "hotstack diff: %s\n", strerror(-n));
			goto out_free;
		}
	}
	ret = hs_diff_write(out, fmt, names, p, &v) ? 1 : 0;
out_free:
	hs_profile_free(&p[0]);
	hs_profile_free(&p[1]);
	hs_view_free(&v);
	return ret;

out_args:
	hs_args_free(&a);
	hs_view_free(&v);
	return a.status;
}
