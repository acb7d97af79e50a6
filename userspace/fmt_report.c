// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the report, as perf report's text: the profile's facts
 * (samples, drops by reason, filtered out, truncated, collapsed, distinct
 * stacks), then the top functions by self and by total.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static int hs_fn_cmp_self(const void *a, const void *b)
{
	const struct hs_fn *x = a, *y = b;

	if (x->self[0] != y->self[0])
		return x->self[0] < y->self[0] ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int hs_fn_cmp_total(const void *a, const void *b)
{
	const struct hs_fn *x = a, *y = b;

	if (x->total[0] != y->total[0])
		return x->total[0] < y->total[0] ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void hs_print_top(FILE *f, struct hs_fn *fns, size_t nr, uint64_t total,
			 unsigned int top, int by_self)
{
	size_t i, shown = 0;

	qsort(fns, nr, sizeof(*fns), by_self ? hs_fn_cmp_self : hs_fn_cmp_total);
	fprintf(f, "\n# %s\n#   %%self  %%total      samples  function\n",
		by_self ? "by self (the function was running)" :
			  "by total (the function was on the stack)");
	for (i = 0; i < nr && shown < top; i++) {
		uint64_t n = by_self ? fns[i].self[0] : fns[i].total[0];

		if (!n)
			continue;
		fprintf(f, "  %6.2f%% %6.2f%% %12llu  %s\n", 100.0 * fns[i].self[0] / total,
			100.0 * fns[i].total[0] / total, (unsigned long long)n, fns[i].name);
		shown++;
	}
}

int hs_write_report(FILE *f, const struct hs_profile *p, unsigned int top)
{
	uint64_t counted = p->total - p->dropped;
	struct hs_fns fns;
	size_t i;
	int ret;

	fprintf(f, "# hotstack report\n");
	if (p->event)
		fprintf(f, "# event: %s, %s, %.1f s\n", p->event, p->rate, p->seconds);
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
	hs_fns_init(&fns);
	ret = hs_fns_add(&fns, p, 0);
	if (!ret) {
		hs_print_top(f, fns.fn, fns.nr, counted, top, 1);
		hs_print_top(f, fns.fn, fns.nr, counted, top, 0);
	}
	hs_fns_free(&fns);
	return ret ?: ferror(f) ? -EIO : 0;
}
