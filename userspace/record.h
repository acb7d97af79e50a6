/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: hotstack record's options (parsed apart, for unit tests). */
#ifndef HOTSTACK_RECORD_H
#define HOTSTACK_RECORD_H

#include "session.h"

struct hs_record_opts {
	struct hs_config s;		/* the session's options */
	double duration;		/* -d, 0: until the command ends or Ctrl-C */
	char **cmd;			/* after the options, or NULL */
	const char *output;		/* -o; "-" is standard output */
	int format;			/* enum hs_format */
};

/*
 * Parse hotstack record's arguments. Returns 0, HS_EXIT_USAGE after
 * printing what is wrong, or -1 after printing the help (exit 0).
 */
int hs_record_parse(int argc, char **argv, struct hs_record_opts *o);

#endif
