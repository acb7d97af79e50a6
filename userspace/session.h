/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: a session of the tool's own, as record and top run one.
 * The session options they share (-e -F -c -a -C -p -g --stacks
 * --max-depth --keys --collapse --table-entries --arena-frames
 * --cpu-entries --budget), parsed
 * into struct hs_config; CONFIGURE (with perf's cycles -> cpu-clock
 * fallback), START and STOP; the counters and what the status lines show
 * of them; the user mappings captured while it runs.
 *
 * A new session option: a line in hs_session_options[] (session.c), its
 * case in hs_config_option(), and its field of struct hotstack_config.
 */
#ifndef HOTSTACK_SESSION_H
#define HOTSTACK_SESSION_H

#include <stdint.h>
#include <linux/hotstack.h>

#include "events.h"
#include "options.h"

#define HS_MAX_CPU_WORDS	16	/* -C: CPUs 0-1023 */

/* The session options: what CONFIGURE takes, and what the tool needs besides. */
struct hs_config {
	/*
	 * CONFIGURE's argument as the options set it: flags (FREQ,
	 * COLLAPSE), sample, cpus_words, pid, stacks, max_depth, keys,
	 * table_entries, arena_frames, cpu_entries. hs_session_configure() fills in the
	 * event (from @ev), cpus_ptr and the PID flag.
	 */
	struct hotstack_config abi;
	const char *event;		/* its name, as given (or the fallback) */
	struct hs_event_spec ev;
	uint64_t cpus[HS_MAX_CPU_WORDS];	/* -C; abi.cpus_words 0: every CPU */
	int all_cpus;			/* -a was given */
	int have_e, have_F, have_c;	/* while parsing: -e, -F, -c seen */
	/* --table-entries, --arena-frames, --cpu-entries given */
	int have_table, have_arena, have_cpu_entries;
	int have_stacks, have_call_graph;	/* --stacks, --call-graph given */
	const char *cgroups[HOTSTACK_MAX_CGROUPS];	/* -G, as given */
	unsigned int nr_cgroups;
	int off_cpu;			/* --off-cpu: time off the CPU, not samples */
	int wall;			/* --wall: and on it, sampled: wall-clock time */
	int wakers;			/* --wakers: each sleep with who woke it */
	int call_graph;			/* --call-graph: HS_CALL_GRAPH_* */
	int include_idle;		/* --include-idle */
	/*
	 * HS_PROFILE_* (table.h) for the session's profiles: set by
	 * hs_session_configure() (NO_PID: it keys user stacks by process to
	 * name their frames, without --keys pid).
	 */
	unsigned int profile_flags;
};

/* --call-graph: how user stacks are walked. */
enum {
	HS_CALL_GRAPH_DEFAULT,		/* unwind tables where there are, else frame pointers */
	HS_CALL_GRAPH_FP,		/* frame pointers only */
	HS_CALL_GRAPH_DWARF,		/* as the default, asked for */
};

/* The options' ids without a letter; HS_SESSION_OPT_NEXT: the first free for a command. */
enum {
	HS_SESSION_OPT_STACKS = HS_OPT_LONG, HS_SESSION_OPT_DEPTH, HS_SESSION_OPT_KEYS,
	HS_SESSION_OPT_COLLAPSE, HS_SESSION_OPT_TABLE, HS_SESSION_OPT_ARENA, HS_SESSION_OPT_BUDGET,
	HS_SESSION_OPT_OFF_CPU, HS_SESSION_OPT_MIN_BLOCK, HS_SESSION_OPT_OFF_TASKS,
	HS_SESSION_OPT_WALL, HS_SESSION_OPT_CALL_GRAPH, HS_SESSION_OPT_INCLUDE_IDLE,
	HS_SESSION_OPT_CPU_ENTRIES, HS_SESSION_OPT_WAKERS,
	HS_SESSION_OPT_NEXT = HS_OPT_LONG + 64,
};

/*
 * The session options' table, for hs_args_init(); --off-cpu's (record's,
 * top's, the agent's); --wall (record's).
 */
extern const struct hs_option hs_session_options[];
extern const struct hs_option hs_off_cpu_options[];
extern const struct hs_option hs_wall_options[];

/* record's and top's counts a CPU: more on a machine of few CPUs (session.c). */
#define HS_CPU_ENTRIES	4096

/* record's defaults (cycles at 4000 Hz, kernel stacks, depth 127, ...). */
void hs_config_defaults(struct hs_config *c);

/*
 * Option @id with its @value: 0 when it was a session option, 1 when it is
 * not one (the command's own), HS_EXIT_USAGE after saying what is wrong.
 */
int hs_config_option(struct hs_args *a, struct hs_config *c, int id, const char *value);

/* After the options: the ones that do not go together. 0 or HS_EXIT_USAGE. */
int hs_config_check(struct hs_args *a, struct hs_config *c);

/*
 * Bytes the module's tables take for a session of @nr_cpus CPUs, laid
 * out as the module lays them out: a header, and in each of the two
 * generations the store of @table_entries stacks and @arena_frames
 * frames, and each CPU's count table of @cpu_entries (0: @table_entries).
 */
uint64_t hs_tables_bytes(uint32_t table_entries, uint64_t arena_frames, uint32_t cpu_entries,
			 unsigned int nr_cpus);

/*
 * @abi's tables (table_entries, arena_frames, cpu_entries) for @nr_cpus
 * CPUs when the module allows @max_memory bytes and @used are taken: as
 * they are when they take at most half of what is left (so that others
 * keep room), else halved until they do: the CPUs' count tables first
 * (what grows with the CPUs), down to HS_FIT_CPU_ENTRIES, as long as
 * they take at least as much as the store; else the store (its stacks
 * and frames together, a CPU's count table never larger); the count
 * tables below HS_FIT_CPU_ENTRIES last. Returns 0 (as they were), 1
 * (made smaller) or -1 when not even the smallest fit (@abi unchanged).
 */
int hs_fit_tables(uint64_t max_memory, uint64_t used, unsigned int nr_cpus,
		  struct hotstack_config *abi);

/* What hs_fit_tables() shrinks the count tables to before it shrinks the store. */
#define HS_FIT_CPU_ENTRIES	64

/*
 * "store N stacks, N frames; N a CPU": the tables' sizes, as record and
 * the fitting say them, into @buf.
 */
const char *hs_tables_text(uint32_t table_entries, uint64_t arena_frames, uint32_t cpu_entries,
			   char *buf, size_t len);

/*
 * CONFIGURE the session @fd as @c asks, falling back from cycles to
 * cpu-clock (with a warning, and @c updated) without a PMU, as perf does.
 * On failure prints why ("hotstack @cmd: ...") and returns -1.
 */
int hs_session_configure(int fd, struct hs_config *c, const char *cmd);

/* START; on failure prints why ("hotstack @cmd: cannot start: ...") and returns -1. */
int hs_session_start(int fd, const char *cmd);

/* STOP: the events are released, the counts stay. */
void hs_session_stop(int fd);

/* GET_STATS of @fd (@flags: HOTSTACK_STATS_READABLE or 0); 0 or -errno. */
int hs_session_stats(int fd, uint32_t flags, struct hotstack_stats *st);

/* "1000 Hz", "period N" or (--off-cpu) "every switch": @c's rate, into @buf. */
const char *hs_config_rate(const struct hs_config *c, char *buf, size_t len);

/* The event @c samples, or "off-cpu", "wall" (their profiles count ns: hs_profile_ns()). */
const char *hs_config_event(const struct hs_config *c);

/* What record's status line (and top's header) shows of a generation. */
struct hs_live {
	uint64_t capacity;	/* distinct stacks the store takes */
	double rate;		/* samples per second */
	double fill;		/* entries in use, % of capacity */
	uint64_t dropped;	/* every drop, filtered out included */
	double cost_ns;		/* mean handler time of a sample */
	double overhead;	/* that time over the CPU time of the session's CPUs, % */
	char budget[128];	/* with a budget: what it did ("" without) */
	/* The fullest CPU count table: */
	double cpu_fill;	/* ... its entries in use, % of its capacity (< 0: not known) */
	uint32_t cpu;		/* ... its CPU */
};

struct hs_table_fill;
struct hs_table_map;

/*
 * @st's counters, over @seconds (for the rate), a store of @table_entries;
 * the fullest count table from @f (NULL: not known).
 */
void hs_live_compute(const struct hotstack_stats *st, uint32_t table_entries, double seconds,
		     int off_cpu, const struct hs_table_fill *f, struct hs_live *l);
/* ", CPU N's counts X% full" when @l knows it, else "": into @buf. */
const char *hs_live_cpu_fill(const struct hs_live *l, char *buf, size_t size);
/*
 * An off-CPU session's counters as record's summary and status line give
 * them (nanoseconds: time; handler runs: switches, and @wall's samples),
 * with its budget.
 */
void hs_live_off_cpu(const struct hotstack_stats *st, const struct hs_live *l, int wall,
		     char *buf, size_t size);

/*
 * record's status line on a terminal (stderr): \r, the line, clear to the
 * end: elapsed time, samples/s, stacks and fill, drops, cost, overhead.
 */
void hs_live_status_line(int fd, const struct hs_table_map *m, double elapsed,
			 uint32_t table_entries, int off_cpu, int wall);

struct hs_uwload;
/*
 * With HOTSTACK_CFG_USER_TABLES (--call-graph dwarf, the default for user
 * stacks): a loader of the session's unwind tables (uwload.h) whose thread
 * loads each process the module reports sampled without them; @pid's (a
 * pid filter, 0: none) loaded at once. NULL without the flag, or when it
 * cannot be made (said, on standard error: user stacks then stay by frame
 * pointers).
 */
struct hs_uwload *hs_session_unwind(int fd, const struct hs_config *c, uint32_t pid,
				    const char *cmd);

/*
 * What the user walks by unwind tables did, from @st and @uw's counters,
 * for record's summary ("" when the session had none).
 */
void hs_unwind_summary(const struct hotstack_stats *st, struct hs_uwload *uw, char *buf,
		       size_t size);

struct hs_usyms;
struct hs_table_map;
/*
 * Capture the mappings of the processes in the table, and of @pid (the
 * only one with a pid filter), for their user symbols: at each refresh
 * and once at the end, so that those that exit keep the last capture (or
 * the maps @uw last loaded them from, which its samples were walked by).
 * @child: record's command (0: none), whose maps are not its own before exec.
 * @all: every one read again (at the end); else only those not read for
 * a while (hs_usyms_refresh()).
 */
void hs_capture_maps(struct hs_usyms *u, const struct hs_table_map *m, uint32_t pid,
		     int child, struct hs_uwload *uw, int all);

#endif
