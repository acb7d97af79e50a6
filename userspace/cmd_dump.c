// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack dump: the persistent session's profile (autostart=1), in any
 * format, while it keeps sampling: read() of an unconfigured session is a
 * consistent copy of the persistent one's table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "device.h"
#include "maps.h"
#include "profile.h"
#include "output.h"
#include "table.h"
#include "util.h"

int cmd_dump(int argc, char **argv)
{
	const char *out = NULL;
	struct hs_profile p = { 0 };
	int i, fd, ret, format = HS_FMT_FOLDED;
	char *text;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
			format = strcmp(out, "-") ? hs_format_of_name(out) : HS_FMT_FOLDED;
			if (format < 0) {
				fprintf(stderr, "hotstack dump: cannot tell the format of '%s': "
					"use .txt, .folded, .json, .svg or .pb.gz\n", out);
				return HS_EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "hotstack dump: unexpected argument '%s'\n"
				"usage: hotstack dump [-o OUT.folded|.txt|.json|.svg|.pb.gz]\n", argv[i]);
			return HS_EXIT_USAGE;
		}
	}
	fd = hs_device_open();
	if (fd < 0)
		return 1;
	/*
	 * Symbolized here from the mmap when the session can be mapped; the
	 * module maps only a configured session, not the persistent one that
	 * a fresh open reads, so this is read()'s text for now.
	 */
	if (!hs_session_profile(fd, NULL, HS_GEN_ACTIVE, NULL, 0, &p, 0)) {
		close(fd);
		/* The running kernel's and modules' build IDs (pprof's mappings). */
		ret = hs_maps_kernel(&p, "/sys") ?: hs_write_profile("dump", out, format, &p);
		hs_profile_free(&p);
		return ret ? 1 : 0;
	}
	hs_profile_free(&p);
	text = hs_read_fd(fd, NULL);
	close(fd);
	if (!text) {
		fprintf(stderr, "hotstack dump: cannot read the profile: %s\n", strerror(errno));
		return 1;
	}
	if (!text[0]) {
		fprintf(stderr, "hotstack dump: there is no persistent session: load the module "
			"with autostart=1 (or use hotstack record)\n");
		free(text);
		return 1;
	}
	ret = hs_profile_parse(&p, text, NULL);
	free(text);
	ret = ret ?: hs_maps_kernel(&p, "/sys");
	if (!ret)
		ret = hs_write_profile("dump", out, format, &p);
	hs_profile_free(&p);
	return ret ? 1 : 0;
}
