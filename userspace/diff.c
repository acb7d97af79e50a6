// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: profile B against profile A. The report ranks functions by
 * how much their share of the samples changed (percentage points of each
 * profile's counted samples, drops left out, as in the report), self and
 * total; folded is Brendan Gregg's difffolded format, "stack countA countB".
 * The differential flame graph is in fmt_svg.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "view.h"

/* Changes smaller than this (percentage points) are rounding, not change. */
#define HS_DIFF_EPSILON	1e-9

static double hs_abs(double x)
{
	return x < 0 ? -x : x;
}

/* The lossy facts of one profile, so a change is not read without them. */
static void hs_diff_facts(FILE *f, const char *tag, const char *name, const struct hs_profile *p)
{
	size_t i;

	fprintf(f, "# %s: %s\n", tag, name);
	if (p->event)
		fprintf(f, "#   event: %s, %s, %.1f s\n", p->event, p->rate, p->seconds);
	fprintf(f, "#   samples: %llu, counted: %llu, dropped: %llu\n",
		(unsigned long long)p->total, (unsigned long long)(p->total - p->dropped),
		(unsigned long long)p->dropped);
	for (i = 0; i < p->nr; i++)
		if (hs_is_drop_stack(p->lines[i].stack))
			fprintf(f, "#     dropped, %s: %llu\n", p->lines[i].stack + HS_DROP_REASON,
				(unsigned long long)p->lines[i].count);
	fprintf(f, "#   filtered out: %llu, truncated: %llu samples, collapsed: %llu samples, "
		"distinct stacks: %zu\n", (unsigned long long)p->filtered,
		(unsigned long long)p->truncated, (unsigned long long)p->collapsed, p->nr);
}

struct hs_delta {
	const char *name;
	uint64_t a, b;
	double pa, pb;		/* shares, % */
};

static int hs_delta_cmp(const void *x, const void *y)
{
	const struct hs_delta *a = x, *b = y;
	double da = hs_abs(a->pb - a->pa), db = hs_abs(b->pb - b->pa);

	if (hs_abs(da - db) > HS_DIFF_EPSILON)
		return da < db ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The largest changes of share: @fns counts A in column 0, B in 1; @v's rows and limit. */
static int hs_diff_top(FILE *f, const struct hs_fns *fns, uint64_t ta, uint64_t tb,
		       const struct hs_view *v, const char *title, int by_self)
{
	struct hs_delta *d = calloc(fns->nr + 1, sizeof(*d));
	size_t n, k, shown = 0;

	if (!d)
		return -ENOMEM;
	for (n = 0; n < fns->nr; n++) {
		const struct hs_fn *fn = &fns->fn[n];

		d[n].name = fn->name;
		d[n].a = by_self ? fn->self[0] : fn->total[0];
		d[n].b = by_self ? fn->self[1] : fn->total[1];
		d[n].pa = ta ? 100.0 * d[n].a / ta : 0;
		d[n].pb = tb ? 100.0 * d[n].b / tb : 0;
	}
	qsort(d, n, sizeof(*d), hs_delta_cmp);
	fprintf(f, "\n# %s: largest changes of share first\n"
		"#   change(pp)  share A  share B    samples A    samples B  %s\n",
		by_self ? "by self (the function was running)" :
			  "by total (the function was on the stack)", title);
	for (k = 0; k < n && shown < v->rows; k++) {
		if (hs_abs(d[k].pb - d[k].pa) <= HS_DIFF_EPSILON)
			continue;
		if (d[k].pa < v->percent_limit && d[k].pb < v->percent_limit)
			continue;	/* small in both */
		fprintf(f, "  %+11.2f %7.2f%% %7.2f%% %12llu %12llu  %s\n", d[k].pb - d[k].pa,
			d[k].pa, d[k].pb, (unsigned long long)d[k].a, (unsigned long long)d[k].b,
			d[k].name);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (no change)\n");
	free(d);
	return 0;
}

int hs_write_diff_report(FILE *f, const char *name_a, const struct hs_profile *a,
			 const char *name_b, const struct hs_profile *b, const struct hs_view *view)
{
	uint64_t ta = a->total - a->dropped, tb = b->total - b->dropped;
	struct hs_fns fns;
	struct hs_view dflt;
	const struct hs_view *v = view;
	char title[64];
	int ret;

	if (!v) {
		hs_view_defaults(&dflt);
		v = &dflt;
	}
	hs_sort_title(v, title, sizeof(title));
	fprintf(f, "# hotstack diff: B against A; change = B's share - A's share, in percentage "
		"points of each profile's counted samples\n");
	if (v->filter.spelled)
		fprintf(f, "# filter: %s (the samples below are those it keeps)\n",
			v->filter.spelled);
	hs_diff_facts(f, "A", name_a, a);
	hs_diff_facts(f, "B", name_b, b);
	hs_fns_init(&fns);
	ret = hs_fns_add_keyed(&fns, a, 0, v->sort, v->nr_sort) ?:
	      hs_fns_add_keyed(&fns, b, 1, v->sort, v->nr_sort);
	if (!ret && v->children != HS_CHILDREN)
		ret = hs_diff_top(f, &fns, ta, tb, v, title, 1);
	if (!ret && v->children != HS_NO_CHILDREN)
		ret = hs_diff_top(f, &fns, ta, tb, v, title, 0);
	hs_fns_free(&fns);
	return ret ?: ferror(f) ? -EIO : 0;
}

struct hs_diff_line {
	const char *stack;
	uint64_t a, b;
};

static int hs_diff_line_cmp(const void *x, const void *y)
{
	return strcmp(((const struct hs_diff_line *)x)->stack,
		      ((const struct hs_diff_line *)y)->stack);
}

int hs_write_diff_folded(FILE *f, const struct hs_profile *a, const struct hs_profile *b)
{
	struct hs_diff_line *l = calloc(a->nr + b->nr + 1, sizeof(*l));
	size_t i, n = 0;

	if (!l)
		return -ENOMEM;
	for (i = 0; i < a->nr; i++)
		l[n++] = (struct hs_diff_line){ a->lines[i].stack, a->lines[i].count, 0 };
	for (i = 0; i < b->nr; i++)
		l[n++] = (struct hs_diff_line){ b->lines[i].stack, 0, b->lines[i].count };
	qsort(l, n, sizeof(*l), hs_diff_line_cmp);
	/* One line per stack: the same text twice (two call sites) is added up. */
	for (i = 0; i < n; i++) {
		uint64_t ca = l[i].a, cb = l[i].b;

		while (i + 1 < n && !strcmp(l[i].stack, l[i + 1].stack)) {
			i++;
			ca += l[i].a;
			cb += l[i].b;
		}
		fprintf(f, "%s %llu %llu\n", l[i].stack, (unsigned long long)ca,
			(unsigned long long)cb);
	}
	free(l);
	return ferror(f) ? -EIO : 0;
}
