// SPDX-License-Identifier: GPL-2.0
/* hotstack report: a perf-report-like view of a saved profile (folded or pprof), or a copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "output.h"
#include "profile.h"
#include "view.h"

enum { O_OUTPUT = 'o', O_FORMAT = HS_OPT_LONG };

static const struct hs_option hs_report_options[] = {
	{ O_OUTPUT, "output", "FILE", "write there instead of standard output (- is standard "
	  "output), in the format FILE's name asks for" },
	{ O_FORMAT, "format", "FORMAT", "report (default), folded, json, svg, pprof or otlp" },
	HS_OPTION_END,
};

int cmd_report(int argc, char **argv)
{
	static const struct hs_option *const tables[] = {
		hs_report_options, hs_filter_options, hs_cgroup_filter_options, hs_view_options,
		hs_graph_options, NULL,
	};
	const char *path = "hotstack.folded", *out = NULL, *format = NULL;
	struct hs_profile p = { 0 };
	struct hs_view v;
	struct hs_args a;
	char err[512], *value, **rest;
	int id, n, ret, fmt;

	hs_view_defaults(&v);
	if (hs_args_init(&a, "report", "[OPTIONS] [FILE | -]",
			 "The top functions of a saved profile (folded or pprof, gzipped or not; "
			 "default hotstack.folded, - standard input), or the profile in another "
			 "format; the filters apply to every format.", tables, 0, argc, argv))
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
	n = hs_args_rest(&a, &rest);
	if (n > 1) {
		hs_args_error(&a, "takes one profile, not '%s' too", rest[1]);
		goto out_args;
	}
	if (n)
		path = rest[0];
	if (hs_output_format(&a, out, format, HS_FMT_REPORT, HS_FMT_ALL, &fmt))
		goto out_args;
	hs_args_free(&a);
	/* A folded file or a pprof one (gzipped or not): the content tells. */
	ret = hs_profile_load(&p, path, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "hotstack report: %s%s\n", err, n || ret != -ENOENT ? "" :
			" (record one with 'hotstack record')");
		goto out;
	}
	ret = hs_profile_filter(&p, &v.filter);
	if (ret)
		fprintf(stderr, "hotstack report: %s\n", strerror(-ret));
	else
		ret = hs_write_profile("report", out, fmt, &p, &v);
out:
	hs_profile_free(&p);
	hs_view_free(&v);
	return ret ? 1 : 0;

out_args:
	hs_args_free(&a);
	hs_view_free(&v);
	return a.status;
}
