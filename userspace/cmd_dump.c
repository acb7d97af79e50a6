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
#include "options.h"
#include "output.h"
#include "profile.h"
#include "table.h"
#include "util.h"

enum { O_OUTPUT = 'o', O_FORMAT = HS_OPT_LONG };

static const struct hs_option hs_dump_options[] = {
	{ O_OUTPUT, "output", "FILE", "write there instead of standard output (- is standard "
	  "output), in the format FILE's name asks for" },
	{ O_FORMAT, "format", "FORMAT", "folded (default), report, json, svg, pprof or otlp" },
	HS_OPTION_END,
};

int cmd_dump(int argc, char **argv)
{
	static const struct hs_option *const tables[] = { hs_dump_options, NULL };
	const char *out = NULL, *format = NULL;
	struct hs_profile p = { 0 };
	struct hs_args a;
	char *value, *text;
	int id, fd, ret, fmt;

	if (hs_args_init(&a, "dump", "[OPTIONS]",
			 "The persistent session's profile (the module loaded with autostart=1), "
			 "while it samples.", tables, 0, argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END) {
		if (id == HS_ARGS_EXIT)
			goto out_args;
		if (id == O_OUTPUT)
			out = value;
		else if (id == O_FORMAT)
			format = value;
	}
	if (hs_args_no_operands(&a) ||
	    hs_output_format(&a, out, format, HS_FMT_FOLDED, HS_FMT_ALL, &fmt))
		goto out_args;
	hs_args_free(&a);
	fd = hs_device_open();
	if (fd < 0)
		return 1;
	/*
	 * Symbolized here from the mmap when the session can be mapped; the
	 * module maps only a configured session, not the persistent one that
	 * a fresh open reads, so this is read()'s text for now.
	 */
	if (hs_session_profile(fd, NULL, HS_GEN_ACTIVE, NULL, 0, &p, 0)) {
		hs_profile_free(&p);
		text = hs_read_fd(fd, NULL);
		if (!text) {
			fprintf(stderr, "hotstack dump: cannot read the profile: %s\n",
				strerror(errno));
			close(fd);
			return 1;
		}
		if (!text[0]) {
			fprintf(stderr, "hotstack dump: there is no persistent session: load the "
				"module with autostart=1 (or use hotstack record)\n");
			free(text);
			close(fd);
			return 1;
		}
		ret = hs_profile_parse(&p, text, NULL);
		free(text);
		if (ret) {
			fprintf(stderr, "hotstack dump: cannot read the profile: %s\n",
				strerror(-ret));
			hs_profile_free(&p);
			close(fd);
			return 1;
		}
	}
	close(fd);
	/* The running kernel's and modules' build IDs (pprof's mappings). */
	ret = hs_maps_kernel(&p, "/sys");
	if (ret)
		fprintf(stderr, "hotstack dump: %s\n", strerror(-ret));
	else
		ret = hs_write_profile("dump", out, fmt, &p, NULL);
	hs_profile_free(&p);
	return ret ? 1 : 0;

out_args:
	hs_args_free(&a);
	return a.status;
}
