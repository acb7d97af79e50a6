// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's --group-by OTLP request (hs_write_otlp_many()), for
 * otlp_check.py to read with its own decoder:
 *   otlp_many OUT RESOURCE PROFILE [RESOURCE PROFILE]...
 * RESOURCE: "KEY=VALUE,KEY=VALUE..."; PROFILE: a file as report takes
 * one (pprof or folded). The profiles' mappings are the first's, as the
 * agent's groups share their interval's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define MAX_PROFILES	8
#define MAX_ATTRS	8

int main(int argc, char **argv)
{
	static struct hs_profile p[MAX_PROFILES];
	static char *attrs[MAX_PROFILES][MAX_ATTRS + 1];
	const struct hs_profile *ps[MAX_PROFILES];
	const char *const *res[MAX_PROFILES];
	size_t n = 0, k;
	char err[512], *s;
	FILE *f;
	int i, ret;

	if (argc < 4 || argc % 2 || (argc - 2) / 2 > MAX_PROFILES) {
		fprintf(stderr, "usage: otlp_many OUT RESOURCE PROFILE [RESOURCE PROFILE]...\n");
		return 2;
	}
	for (i = 2; i < argc; i += 2, n++) {
		for (k = 0, s = strtok(argv[i], ","); s && k < MAX_ATTRS; s = strtok(NULL, ","))
			attrs[n][k++] = s;
		res[n] = (const char *const *)attrs[n];
		if (hs_profile_load(&p[n], argv[i + 1], err, sizeof(err))) {
			fprintf(stderr, "otlp_many: %s\n", err);
			return 1;
		}
		if (n)
			p[n].maps = p[0].maps;
		ps[n] = &p[n];
	}
	f = fopen(argv[1], "wb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	ret = hs_write_otlp_many(f, ps, res, n);
	if (fclose(f) || ret) {
		fprintf(stderr, "otlp_many: cannot write %s: %s\n", argv[1], strerror(ret ? -ret : 5));
		return 1;
	}
	return 0;
}
