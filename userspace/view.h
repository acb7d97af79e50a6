/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: what a command shows of a profile, as perf report's
 * options ask. Filters that apply to every output (--comm, --pid,
 * --symbol, --module, --cgroup, --container); the rows of the report by
 * sort keys (--sort sym, comm, pid, module, context, cgroup, container,
 * and lists of them); how many (-n,
 * --percent-limit); self, total or both (--no-children, --children); the
 * hottest stacks; and each row's call graph (-g caller|callee).
 */
#ifndef HOTSTACK_VIEW_H
#define HOTSTACK_VIEW_H

#include <regex.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"
#include "profile.h"

struct hs_profile;

/* Which lines to keep: each list empty (NULL) for any; a line must match every one given. */
struct hs_filter {
	char *comm;		/* --comm: process names, comma-separated */
	char *pid;		/* --pid: pids, comma-separated */
	regex_t symbol;		/* --symbol: a function on the stack matches */
	int have_symbol;
	char *module;		/* --module: a frame "func [MOD]" of one of them */
	char *cgroup;		/* --cgroup: cgroup paths (those below them too) */
	char *container;	/* --container: container ids or their prefixes */
	const char *spelled;	/* the options as given, for the report's header */
	char spelled_buf[256];
};

/* Which tables the report shows. */
enum hs_children { HS_BOTH = -1, HS_NO_CHILDREN = 0, HS_CHILDREN = 1 };

/* A call graph under each row. */
enum hs_graph { HS_GRAPH_NONE, HS_GRAPH_CALLER, HS_GRAPH_CALLEE };

struct hs_view {
	struct hs_filter filter;
	int sort[HS_NR_SORT];	/* enum hs_sort_key (profile.h), in the order asked */
	int nr_sort;
	unsigned int rows;	/* -n: rows a table (and hottest stacks) */
	double percent_limit;	/* --percent-limit: rows under it are not shown */
	int children;		/* enum hs_children */
	int graph;		/* enum hs_graph */
};

/* The report's defaults: by sym, 20 rows, both tables, no graph, no filter. */
void hs_view_defaults(struct hs_view *v);

/* The view's options, for a command's option tables (report, diff, top). */
extern const struct hs_option hs_filter_options[];	/* --comm --pid --symbol --module --container */
extern const struct hs_option hs_cgroup_filter_options[];	/* --cgroup (not top's: its -G) */
extern const struct hs_option hs_view_options[];	/* --sort -n --percent-limit --children */
extern const struct hs_option hs_graph_options[];	/* -g caller|callee (report) */

/* --sort's keys "comm,sym" into @v; 0, or -1 when it is not a list of them, each once. */
int hs_sort_keys(struct hs_view *v, const char *s);

/*
 * Option @id with @value: 0 when it was a view option, 1 when it is not,
 * HS_EXIT_USAGE after saying what is wrong.
 */
int hs_view_option(struct hs_args *a, struct hs_view *v, int id, const char *value);

void hs_view_free(struct hs_view *v);

/*
 * Keep only @p's lines that pass @f (with a filter, the [dropped] lines
 * go too: they have no process); the totals follow. 0 or -ENOMEM.
 */
int hs_profile_filter(struct hs_profile *p, const struct hs_filter *f);

/* Whether @f filters anything. */
int hs_filter_active(const struct hs_filter *f);

/*
 * The hottest stacks, as top -b shows them: a title line, then at most
 * @rows stacks by samples, innermost frame first, none under
 * @percent_limit % of the counted samples. 0 or -errno.
 */
int hs_write_hot_stacks(FILE *f, const struct hs_profile *p, unsigned int rows,
			double percent_limit);

/* The keys @v's rows are named by, for a table's title: "function", "comm  function". */
void hs_sort_title(const struct hs_view *v, char *buf, size_t len);

/* The report of @p as @v asks. 0 or -errno. */
int hs_write_report_view(FILE *f, const struct hs_profile *p, const struct hs_view *v);

#endif
