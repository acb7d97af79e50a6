// SPDX-License-Identifier: GPL-2.0
/* hotstack report: a perf-report-like view of a folded profile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "profile.h"
#include "record.h"

int cmd_report(int argc, char **argv)
{
	const char *path = "hotstack.folded", *out = NULL;
	struct hs_profile p = { 0 };
	size_t bad = 0;
	int ret, i, format = HS_FMT_REPORT;
	char *text;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
			format = hs_format_of_name(out);
			if (format < 0) {
				fprintf(stderr, "hotstack report: cannot tell the format of '%s': "
					"use .txt, .folded, .json or .svg\n", out);
				return HS_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "hotstack report: unexpected argument '%s'\n"
				"usage: hotstack report [FILE | -] [-o OUT.txt|.folded|.json|.svg]\n",
				argv[i]);
			return HS_EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "hotstack report: cannot open %s: %s%s\n", path, strerror(errno),
			argc > 1 ? "" : " (record one with 'hotstack record')");
		return 1;
	}
	text = hs_read_folded(fileno(f));
	if (f != stdin)
		fclose(f);
	if (!text) {
		fprintf(stderr, "hotstack report: cannot read %s\n", path);
		return 1;
	}
	ret = hs_profile_parse(&p, text, &bad);
	free(text);
	if (!ret && bad)
		fprintf(stderr, "hotstack report: %zu line(s) of %s are not folded stacks "
			"(\"frame;frame COUNT\"), left out\n", bad, path);
	if (!ret)
		ret = hs_write_profile(out, format, &p);
	hs_profile_free(&p);
	return ret ? 1 : 0;
}
