// SPDX-License-Identifier: GPL-2.0
/* hotstack report: a perf-report-like view of a saved profile (folded or pprof). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "profile.h"
#include "output.h"

int cmd_report(int argc, char **argv)
{
	const char *path = "hotstack.folded", *out = NULL;
	struct hs_profile p = { 0 };
	size_t bad = 0;
	int ret, i, format = HS_FMT_REPORT;
	char err[512];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
			format = hs_format_of_name(out);
			if (format < 0) {
				fprintf(stderr, "hotstack report: cannot tell the format of '%s': "
					"use .txt, .folded, .json, .svg or .pb.gz\n", out);
				return HS_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "hotstack report: unexpected argument '%s'\n"
				"usage: hotstack report [FILE | -] "
				"[-o OUT.txt|.folded|.json|.svg|.pb.gz]\n", argv[i]);
			return HS_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	/* A folded file or a pprof one (gzipped or not): the content tells. */
	ret = hs_profile_load(&p, path, &bad, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "hotstack report: %s%s\n", err, argc > 1 || ret != -ENOENT ? "" :
			" (record one with 'hotstack record')");
		hs_profile_free(&p);
		return 1;
	}
	if (bad)
		fprintf(stderr, "hotstack report: %zu line(s) of %s are not folded stacks "
			"(\"frame;frame COUNT\"), left out\n", bad, path);
	ret = hs_write_profile("report", out, format, &p);
	hs_profile_free(&p);
	return ret ? 1 : 0;
}
