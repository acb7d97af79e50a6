/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: the commands; each returns the process exit status. */
#ifndef HOTSTACK_COMMANDS_H
#define HOTSTACK_COMMANDS_H

#include <stddef.h>

#include "options.h"	/* HS_EXIT_USAGE */

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
int cmd_status(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_agent(int argc, char **argv);

#endif
