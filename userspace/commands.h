/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: the commands; each returns the process exit status. */
#ifndef HOTSTACK_COMMANDS_H
#define HOTSTACK_COMMANDS_H

#include <stddef.h>

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
int cmd_status(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* The folded text read() gives on @fd, until EOF; NULL (errno) on error. */
char *hs_read_folded(int fd);
int cmd_watch(int argc, char **argv);

struct hs_event;
/* What hotstack watch prints for @ev after the time stamp and session ID. */
void hs_format_event(const struct hs_event *ev, char *buf, size_t len);

#endif
