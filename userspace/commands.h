/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: the commands; each returns the process exit status. */
#ifndef HOTSTACK_COMMANDS_H
#define HOTSTACK_COMMANDS_H

/* Exit status for a usage error, as perf and getopt users expect. */
#define HS_EXIT_USAGE 2

struct hs_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

/* The command named @name, or NULL. */
const struct hs_command *hs_find_command(const char *name);

/* Run the tool as main() would. */
int hs_main(int argc, char **argv);

int cmd_info(int argc, char **argv);

#endif
