// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: command dispatch. */
#include <stdio.h>
#include <string.h>

#include <linux/hotstack.h>

#include "commands.h"
#include "util.h"

static const struct hs_command hs_commands[] = {
	{ "record", "sample kernel (and user) stacks into a profile", cmd_record },
	{ "report", "top functions of a saved profile (folded or pprof; - for stdin), or convert it",
	  cmd_report },
	{ "dump", "the persistent session's profile, while it samples", cmd_dump },
	{ "diff", "profile B against profile A: changes of share, or a differential flame graph",
	  cmd_diff },
	{ "info", "show what the loaded module offers", cmd_info },
	{ "status", "one line per session: state, counters, cost [--json]", cmd_status },
	{ "watch", "print the module's events as they come (Ctrl-C ends)", cmd_watch },
	{ "top", "live view of the hottest kernel functions and stacks (-b: text)", cmd_top },
	{ "agent", "continuous profiling: a pprof every interval, pushed to Pyroscope or kept",
	  cmd_agent },
};

const struct hs_command *hs_find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(hs_commands) / sizeof(hs_commands[0]); i++)
		if (!strcmp(hs_commands[i].name, name))
			return &hs_commands[i];
	return NULL;
}

static void hs_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: hotstack COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(hs_commands) / sizeof(hs_commands[0]); i++)
		fprintf(out, "  %-10s %s\n", hs_commands[i].name, hs_commands[i].summary);
	fprintf(out, "\n  hotstack CMD --help  that command's options, one a line\n"
		"  hotstack --version   print the tool's version\n");
}

int hs_main(int argc, char **argv)
{
	const struct hs_command *cmd;

	if (argc < 2) {
		hs_usage(stderr);
		return HS_EXIT_USAGE;
	}
	/* "hotstack help CMD" is "hotstack CMD --help". */
	if (!strcmp(argv[1], "help") && argc > 2 && hs_find_command(argv[2])) {
		char *args[] = { argv[2], "--help", NULL };

		return hs_find_command(argv[2])->run(2, args);
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		hs_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("hotstack %s (ABI %u)\n", HS_VERSION, HOTSTACK_ABI_VERSION);
		return 0;
	}
	cmd = hs_find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "hotstack: '%s' is not a hotstack command; "
			"see 'hotstack --help'\n", argv[1]);
		return HS_EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
