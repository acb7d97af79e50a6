// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the profile as JSON: its facts, then every stack with
 * its count and its frames, outermost first. Strings through
 * hs_json_str(): valid JSON whatever bytes a frame or a process name has.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "profile.h"
#include "util.h"

int hs_write_json(FILE *f, const struct hs_profile *p)
{
	size_t i;

	fprintf(f, "{\n  \"event\": ");
	if (p->event)
		hs_json_str(f, p->event, strlen(p->event));
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"rate\": ");
	hs_json_str(f, p->rate, strlen(p->rate));
	fprintf(f, ",\n  \"seconds\": %.3f,\n  \"samples\": %llu,\n  \"dropped\": %llu,\n"
		"  \"filtered\": %llu,\n  \"truncated\": %llu,\n  \"collapsed\": %llu,\n"
		"  \"stacks\": [",
		p->seconds, (unsigned long long)p->total, (unsigned long long)p->dropped,
		(unsigned long long)p->filtered, (unsigned long long)p->truncated,
		(unsigned long long)p->collapsed);
	for (i = 0; i < p->nr; i++) {
		const char *s = p->lines[i].stack, *e;

		fprintf(f, "%s\n    {\"count\": %llu, \"frames\": [", i ? "," : "",
			(unsigned long long)p->lines[i].count);
		for (; ; s = e + 1) {
			e = strchrnul(s, ';');
			hs_json_str(f, s, e - s);
			if (!*e)
				break;
			fputc(',', f);
			fputc(' ', f);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
	return ferror(f) ? -EIO : 0;
}
