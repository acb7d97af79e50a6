// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the report, as perf report's text: the profile's facts
 * (samples, drops by reason, filtered out, truncated, collapsed, distinct
 * stacks), the rows by self and by total (functions, or the sort keys
 * asked), each with its call graph when asked, then the hottest stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "view.h"

int hs_write_report(FILE *f, const struct hs_profile *p, unsigned int top)
{
	struct hs_view v;

	hs_view_defaults(&v);
	v.rows = top;
	return hs_write_report_view(f, p, &v);
}

/* How the report's tables sort their rows: by self or by total, then by name. */
static int hs_row_cmp(const struct hs_fn *x, const struct hs_fn *y, int by_total)
{
	uint64_t a = by_total ? x->total[0] : x->self[0], b = by_total ? y->total[0] : y->self[0];

	if (a != b)
		return a < b ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int hs_row_cmp_self(const void *a, const void *b)
{
	return hs_row_cmp(a, b, 0);
}

static int hs_row_cmp_total(const void *a, const void *b)
{
	return hs_row_cmp(a, b, 1);
}

/* Frames of a stack a call graph follows: the deepest there are, and keys. */
#define HS_GRAPH_MAX_DEPTH	2048

/* A node of a row's call graph: a frame under its parent. */
struct hs_graph_node {
	uint32_t parent;	/* index + 1; 0: the row itself */
	const char *name;
	size_t len;
	uint64_t count;
};

static int hs_graph_node_cmp(const void *a, const void *b)
{
	const struct hs_graph_node *x = *(struct hs_graph_node *const *)a;
	const struct hs_graph_node *y = *(struct hs_graph_node *const *)b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->len != y->len ? (x->len < y->len ? -1 : 1) : memcmp(x->name, y->name, x->len);
}

/* Print the children of @parent (index + 1), deepest first, over @min samples. */
static void hs_graph_print(FILE *f, struct hs_graph_node **sorted, size_t nr, size_t *first,
			   uint32_t parent, int depth, uint64_t min, uint64_t counted,
			   const struct hs_graph_node *base)
{
	size_t i;

	for (i = first[parent]; i < nr && sorted[i]->parent == parent; i++) {
		const struct hs_graph_node *n = sorted[i];

		if (n->count < min)
			break;		/* the rest are smaller */
		fprintf(f, "  %*s%6.2f%%  %.*s\n", 24 + 2 * depth, "", 100.0 * n->count / counted,
			(int)n->len, n->name);
		hs_graph_print(f, sorted, nr, first, n - base + 1, depth + 1, min, counted, base);
	}
}

/*
 * The call graph of function @name (@len bytes): what it calls (caller:
 * the frames after its outermost occurrence) or who calls it (callee: the
 * frames before its innermost one, innermost first), as a tree of frames
 * with their samples, those under @min left out.
 */
static int hs_write_graph(FILE *f, const struct hs_profile *p, const char *name, size_t len,
			  int mode, uint64_t min, uint64_t counted)
{
	struct hs_graph_node *nodes = NULL, **sorted = NULL;
	size_t nr = 0, cap = 0, i, *first = NULL, kl;
	struct hs_strtab index;
	struct hs_line_keys k;
	char key[4096];
	int ret = 0;

	hs_strtab_init(&index, 1);
	for (i = 0; i < p->nr && !ret; i++) {
		const char *s, *e, *end = p->lines[i].stack + p->lines[i].len;
		const char *fr[HS_GRAPH_MAX_DEPTH];
		size_t fl[HS_GRAPH_MAX_DEPTH], n = 0, at = SIZE_MAX, t;
		uint32_t parent = 0;

		hs_line_keys(p, &p->lines[i], &k);
		for (s = k.frames; s < end && n < HS_GRAPH_MAX_DEPTH; s = e + 1) {
			e = hs_next_frame_end(s, end);
			if (e > s && s[0] != '[') {
				if ((size_t)(e - s) == len && !memcmp(s, name, len) &&
				    (mode == HS_GRAPH_CALLEE || at == SIZE_MAX))
					at = n;
				fr[n] = s;
				fl[n++] = e - s;
			}
			if (e == end)
				break;
		}
		if (at == SIZE_MAX)
			continue;
		/* Caller: at + 1 .. n - 1, outermost first; callee: at - 1 .. 0. */
		for (t = 0; t < (mode == HS_GRAPH_CALLER ? n - at - 1 : at) && !ret; t++) {
			size_t j = mode == HS_GRAPH_CALLER ? at + 1 + t : at - 1 - t;
			long id;

			if (fl[j] + sizeof(parent) > sizeof(key))
				break;
			memcpy(key, &parent, sizeof(parent));
			memcpy(key + sizeof(parent), fr[j], fl[j]);
			kl = sizeof(parent) + fl[j];
			id = hs_strtab_add(&index, key, kl);
			if (id < 0) {
				ret = -ENOMEM;
				break;
			}
			if ((size_t)id == nr) {
				if (nr == cap) {
					struct hs_graph_node *g;

					cap = cap ? cap * 2 : 256;
					g = realloc(nodes, cap * sizeof(*g));
					if (!g) {
						ret = -ENOMEM;
						break;
					}
					nodes = g;
				}
				nodes[nr++] = (struct hs_graph_node){ parent, fr[j], fl[j], 0 };
			}
			nodes[id].count += p->lines[i].count;
			parent = id + 1;
		}
	}
	hs_strtab_free(&index);
	if (!ret && nr) {
		sorted = malloc(nr * sizeof(*sorted));
		first = calloc(nr + 1, sizeof(*first));
		if (!sorted || !first)
			ret = -ENOMEM;
	}
	if (!ret && nr) {
		for (i = 0; i < nr; i++)
			sorted[i] = &nodes[i];
		qsort(sorted, nr, sizeof(*sorted), hs_graph_node_cmp);
		for (i = nr; i-- > 0;)
			first[sorted[i]->parent] = i;
		fprintf(f, "  %24s%s\n", "", mode == HS_GRAPH_CALLER ? "calls:" : "called from:");
		hs_graph_print(f, sorted, nr, first, 0, 0, min, counted, nodes);
	}
	free(sorted);
	free(first);
	free(nodes);
	return ret;
}

void hs_sort_title(const struct hs_view *v, char *buf, size_t len)
{
	static const char *const names[] = {
		[HS_SORT_SYM] = "function", [HS_SORT_COMM] = "comm", [HS_SORT_PID] = "pid",
		[HS_SORT_MODULE] = "module", [HS_SORT_CONTEXT] = "context",
		[HS_SORT_CGROUP] = "cgroup", [HS_SORT_CONTAINER] = "container",
	};
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < v->nr_sort && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "  " : "", names[v->sort[i]]);
}

static int hs_write_table(FILE *f, const struct hs_profile *p, const struct hs_view *v,
			  struct hs_fns *rows, uint64_t counted, int by_total)
{
	char title[64];
	size_t i, shown = 0;
	int ret = 0, sym = v->nr_sort == 1 && v->sort[0] == HS_SORT_SYM;
	const char *ns = hs_profile_ns_type(p);

	hs_sort_title(v, title, sizeof(title));
	qsort(rows->fn, rows->nr, sizeof(*rows->fn), by_total ? hs_row_cmp_total : hs_row_cmp_self);
	fprintf(f, "\n# %s\n#   %%self  %%total %12s  %s\n",
		by_total ? "by total (the function was on the stack)" :
		!ns ? "by self (the function was running)" :
		ns[0] == 'w' ? "by self (the function was running, or the thread's last off the CPU)" :
		"by self (the function was the thread's last, off the CPU)", ns ? "ms" : "samples",
		title);
	for (i = 0; i < rows->nr && shown < v->rows && !ret; i++) {
		const struct hs_fn *r = &rows->fn[i];
		uint64_t n = by_total ? r->total[0] : r->self[0];

		if (!n || 100.0 * n / counted < v->percent_limit)
			continue;
		if (hs_profile_ns(p))
			fprintf(f, "  %6.2f%% %6.2f%% %12.3f  %s\n", 100.0 * r->self[0] / counted,
				100.0 * r->total[0] / counted, n / 1e6, r->name);
		else
			fprintf(f, "  %6.2f%% %6.2f%% %12llu  %s\n", 100.0 * r->self[0] / counted,
				100.0 * r->total[0] / counted, (unsigned long long)n, r->name);
		shown++;
		/* The call graph of a function: over 0.5% of the samples, or the limit. */
		if (v->graph && sym)
			ret = hs_write_graph(f, p, r->name, strlen(r->name), v->graph,
					     (uint64_t)((v->percent_limit > 0.5 ? v->percent_limit :
							 0.5) * counted / 100), counted);
	}
	return ret;
}

int hs_write_report_view(FILE *f, const struct hs_profile *p, const struct hs_view *v)
{
	uint64_t counted = p->total - p->dropped;
	struct hs_fns rows;
	size_t i;
	int ret;

	fprintf(f, "# hotstack report\n");
	if (p->event)
		fprintf(f, "# event: %s, %s, %.1f s\n", p->event, p->rate, p->seconds);
	if (v->filter.spelled)
		fprintf(f, "# filter: %s (the samples below are those it keeps)\n",
			v->filter.spelled);
	if (hs_profile_ns(p))
		fprintf(f, "# %s time, ns: %llu, counted: %llu, dropped: %llu (%.3f s, %.3f s, "
			"%.3f s)\n", strcmp(p->event, "wall") ? "off-CPU" : "wall-clock",
			(unsigned long long)p->total, (unsigned long long)counted,
			(unsigned long long)p->dropped, p->total / 1e9, counted / 1e9,
			p->dropped / 1e9);
	else
		fprintf(f, "# samples: %llu, counted: %llu, dropped: %llu\n",
			(unsigned long long)p->total, (unsigned long long)counted,
			(unsigned long long)p->dropped);
	for (i = 0; i < p->nr; i++)
		if (hs_is_drop_stack(p->lines[i].stack))
			fprintf(f, "#   dropped, %s: %llu\n", p->lines[i].stack + HS_DROP_REASON,
				(unsigned long long)p->lines[i].count);
	if (p->filtered)
		fprintf(f, "# filtered out (other processes, idle; not in the samples): %llu\n",
			(unsigned long long)p->filtered);
	fprintf(f, "# truncated stacks (deeper than --max-depth): %llu samples\n",
		(unsigned long long)p->truncated);
	fprintf(f, "# collapsed recursion: %llu samples\n", (unsigned long long)p->collapsed);
	fprintf(f, "# distinct stacks: %zu\n", p->nr);
	if (!counted)
		return ferror(f) ? -EIO : 0;
	hs_fns_init(&rows);
	ret = hs_fns_add_keyed(&rows, p, 0, v->sort, v->nr_sort);
	if (!ret && v->children != HS_CHILDREN)
		ret = hs_write_table(f, p, v, &rows, counted, 0);
	if (!ret && v->children != HS_NO_CHILDREN)
		ret = hs_write_table(f, p, v, &rows, counted, 1);
	hs_fns_free(&rows);
	if (!ret)
		ret = hs_write_hot_stacks(f, p, v->rows, v->percent_limit);
	return ret ?: ferror(f) ? -EIO : 0;
}

/* ---- the hottest stacks ------------------------------------------------- */

/* Stacks by samples, most first (then by text, so a refresh is stable). */
static int hs_line_cmp(const void *a, const void *b)
{
	const struct hs_stack_line *x = *(struct hs_stack_line *const *)a;
	const struct hs_stack_line *y = *(struct hs_stack_line *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

/* "frame;...;leaf" as "leaf <- ... <- frame": what ran first, on a narrow screen too. */
static void hs_put_stack_innermost_first(FILE *f, const struct hs_stack_line *l)
{
	const char *stack = l->stack, *end = stack + l->len, *s;

	for (;;) {
		for (s = end; s > stack && s[-1] != ';'; s--)
			;
		fwrite(s, 1, end - s, f);
		if (s == stack)
			break;
		fputs(" <- ", f);
		end = s - 1;
	}
}

int hs_write_hot_stacks(FILE *f, const struct hs_profile *p, unsigned int rows,
			double percent_limit)
{
	uint64_t counted = p->total - p->dropped;
	const struct hs_stack_line **top, *l;
	int ns = hs_profile_ns(p);
	size_t i, n = 0, k;

	/* The @rows hottest, kept sorted while the lines go by: no sort of them all. */
	top = malloc((rows + 1) * sizeof(*top));
	if (!top)
		return -ENOMEM;
	for (i = 0; i < p->nr && rows; i++) {
		l = &p->lines[i];
		if (hs_is_drop_stack(l->stack) || (n == rows && hs_line_cmp(&l, &top[n - 1]) >= 0))
			continue;
		for (k = n < rows ? n++ : n - 1; k > 0 && hs_line_cmp(&l, &top[k - 1]) < 0; k--)
			top[k] = top[k - 1];
		top[k] = l;
	}
	fprintf(f, "\n  %%STACK %10s  STACK (innermost first)\n", ns ? "ms" : "SAMPLES");
	for (i = 0; i < n; i++) {
		double pct = counted ? 100.0 * top[i]->count / counted : 0;

		if (pct < percent_limit)
			break;
		if (ns)
			fprintf(f, " %6.2f%% %10.3f  ", pct, top[i]->count / 1e6);
		else
			fprintf(f, " %6.2f%% %10llu  ", pct, (unsigned long long)top[i]->count);
		hs_put_stack_innermost_first(f, top[i]);
		fputc('\n', f);
	}
	free(top);
	return ferror(f) ? -EIO : 0;
}
