/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: hotstack top's options and the text of one refresh,
 * apart from the terminal (for unit tests).
 */
#ifndef HOTSTACK_TOP_H
#define HOTSTACK_TOP_H

#include <stdint.h>
#include <stdio.h>
#include <linux/hotstack.h>

#include "session.h"
#include "table.h"
#include "view.h"

struct hs_profile;

struct hs_top_opts {
	struct hs_config s;		/* the session, as record takes it */
	double delay;			/* -d: seconds between refreshes */
	unsigned long iterations;	/* -n: refreshes, then exit; 0: until q or Ctrl-C */
	int batch;			/* -b: plain text on standard output */
	int by_total;			/* --sort total (key t), else by self (key s) */
	struct hs_view view;		/* --sort's keys, the filters */
};

/*
 * Parse hotstack top's arguments. Returns 0, HS_EXIT_USAGE after
 * printing what is wrong, or -1 after printing the help (exit 0).
 */
int hs_top_parse(int argc, char **argv, struct hs_top_opts *o);

/* One refresh: the header's facts and the profile of the last interval. */
struct hs_top_frame {
	const char *event;		/* as configured (after a fallback) */
	char rate[32];			/* "1000 Hz" or "period N" */
	double elapsed;			/* seconds since the session started */
	double interval;		/* seconds the shown generation sampled */
	struct hotstack_stats st;	/* that generation's counters */
	uint32_t table_entries;		/* the store's stacks, as configured */
	struct hs_table_fill fill;	/* its fullest CPU count table (cpu_entries 0: not known) */
	const char *source;		/* how its stacks were read and named */
	int by_total;
	const struct hs_view *view;	/* the rows' keys (NULL: functions) */
	const struct hs_profile *p;	/* NULL: no refresh yet */
};

/*
 * Write @fr as text: the header, then at most @nr_fns functions (sorted
 * by self or total) and @nr_stacks stacks (by samples, innermost frame
 * first). Percentages are of the counted samples. 0 or -errno.
 */
int hs_top_render(FILE *f, const struct hs_top_frame *fr, unsigned int nr_fns,
		  unsigned int nr_stacks);

/*
 * Draw @fr on the ncurses screen (set up by the caller): what fits of it,
 * lines cut at the width, the column titles reversed, and the keys on the
 * last line (@delay: the seconds between refreshes).
 */
void hs_top_draw(const struct hs_top_frame *fr, double delay);

#endif
