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
 * The options of a session, which record and top share: the short ones
 * for getopt's string, the long ones for its table (HS_OPT_NEXT is the
 * first value free for the command's own).
 */
#define HS_SESSION_SHORTOPTS "e:F:c:aC:p:g"
enum { HS_OPT_STACKS = 256, HS_OPT_DEPTH, HS_OPT_KEYS, HS_OPT_COLLAPSE, HS_OPT_TABLE,
       HS_OPT_ARENA, HS_OPT_NEXT };
#define HS_SESSION_LONGOPTS \
	{ "event", required_argument, NULL, 'e' }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "count", required_argument, NULL, 'c' }, \
	{ "all-cpus", no_argument, NULL, 'a' }, \
	{ "cpu", required_argument, NULL, 'C' }, \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "call-graph", no_argument, NULL, 'g' }, \
	{ "stacks", required_argument, NULL, HS_OPT_STACKS }, \
	{ "max-depth", required_argument, NULL, HS_OPT_DEPTH }, \
	{ "keys", required_argument, NULL, HS_OPT_KEYS }, \
	{ "collapse", no_argument, NULL, HS_OPT_COLLAPSE }, \
	{ "table-entries", required_argument, NULL, HS_OPT_TABLE }, \
	{ "arena-frames", required_argument, NULL, HS_OPT_ARENA }

/* The command being parsed (for its messages) and what it has seen. */
struct hs_session_parse {
	const char *cmd;	/* "record" */
	const char *usage;	/* printed after a bad option */
	int have_F, have_c, have_a;
};

/* Print "hotstack CMD: " @fmt (with @arg), then @usage; returns HS_EXIT_USAGE. */
int hs_cmd_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);

/* record's defaults for a session (cycles at 4000 Hz, kernel stacks, ...). */
void hs_session_defaults(struct hs_record_opts *o);

/*
 * Option @c (getopt's value) with its argument @arg: 0 when it was a
 * session option, HS_EXIT_USAGE after printing what is wrong with it, or
 * 1 when it is not a session option (the command's own, or an error).
 */
int hs_session_option(struct hs_session_parse *sp, int c, char *arg, struct hs_record_opts *o);

/* After the options: the ones that do not go together. 0 or HS_EXIT_USAGE. */
int hs_session_check(struct hs_session_parse *sp, struct hs_record_opts *o);

/*
 * CONFIGURE the session @fd as @o asks, falling back from cycles to
 * cpu-clock (with a warning, and @o updated) without a PMU, as perf does.
 * On failure prints why ("hotstack @cmd: ...") and returns -1.
 */
int hs_session_configure(int fd, struct hs_record_opts *o, const char *cmd);

/* What record's status line (and top's header) shows of a generation. */
struct hs_live {
	uint64_t capacity;	/* stacks the tables of every CPU take */
	double rate;		/* samples per second */
	double fill;		/* entries in use, % of capacity */
	uint64_t dropped;	/* every drop, filtered out included */
	double cost_ns;		/* mean handler time of a sample */
	double overhead;	/* that time over the CPU time of the session's CPUs, % */
};

struct hotstack_stats;
/* @st's counters, over @seconds (for the rate), tables of @table_entries. */
void hs_live_compute(const struct hotstack_stats *st, uint32_t table_entries, double seconds,
		     struct hs_live *l);

struct hs_usyms;
struct hs_table_map;
/*
 * Capture the mappings of the processes in the table, and of @pid (the
 * only one with a pid filter), for their user symbols: at each refresh
 * and once at the end, so that those that exit keep the last capture.
 * @child: record's command (0: none), whose maps are not its own before exec.
 */
void hs_capture_maps(struct hs_usyms *u, const struct hs_table_map *m, uint32_t pid,
		     int child);

/*
 * Parse hotstack record's arguments. Returns 0, HS_EXIT_USAGE after
 * printing what is wrong, or -1 after printing the help (exit 0).
 */
int hs_record_parse(int argc, char **argv, struct hs_record_opts *o);

/* The format a file name asks for (.folded .txt .json .svg .pb.gz), or -1. */
int hs_format_of_name(const char *name);

/* Seconds on the monotonic clock. */
double hs_now(void);

struct hs_profile;
/* Write @p in @format to @path (NULL or "-": standard output); 0 or -1. */
int hs_write_profile(const char *path, int format, const struct hs_profile *p);

#endif
