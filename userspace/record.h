/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: hotstack record's options (parsed apart, for unit tests). */
#ifndef HOTSTACK_RECORD_H
#define HOTSTACK_RECORD_H

#include <stdint.h>

#include "events.h"

#define HS_MAX_CPU_WORDS	16	/* -C: CPUs 0-1023 */

enum hs_format { HS_FMT_FOLDED, HS_FMT_REPORT, HS_FMT_JSON, HS_FMT_SVG, HS_FMT_PPROF };

struct hs_record_opts {
	const char *event;		/* as given (or the fallback) */
	struct hs_event_spec ev;
	int freq;			/* sample is a frequency (-F), else a period (-c) */
	uint64_t sample;
	uint64_t cpus[HS_MAX_CPU_WORDS];	/* -C; cpus_words 0: every CPU */
	unsigned int cpus_words;
	uint32_t pid;			/* -p, or the command's */
	uint32_t stacks, max_depth, keys, table_entries;
	uint64_t arena_frames;
	int collapse;
	double duration;		/* -d, 0: until the command ends or Ctrl-C */
	char **cmd;			/* after the options, or NULL */
	int all_cpus_with_cmd;		/* -a: the whole system while the command runs */
	const char *output;		/* -o; "-" is standard output */
	enum hs_format format;
};

/*
 * Parse hotstack record's arguments. Returns 0, HS_EXIT_USAGE after
 * printing what is wrong, or -1 after printing the help (exit 0).
 */
int hs_record_parse(int argc, char **argv, struct hs_record_opts *o);

/* The format a file name asks for (.folded .txt .json .svg .pb.gz), or -1. */
int hs_format_of_name(const char *name);

struct hs_profile;
/* Write @p in @format to @path (NULL or "-": standard output); 0 or -1. */
int hs_write_profile(const char *path, int format, const struct hs_profile *p);

#endif
