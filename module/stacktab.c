// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack stack table: what is not on the sample path. The sample path's
 * part (hash, lookup, insert) is inline in stacktab.h.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#endif
#include "stacktab.h"

void hs_table_clear(struct hs_table *t)
{
	memset(t->stats, 0, sizeof(*t->stats));
	memset(t->entries, 0, (size_t)(t->mask + 1) * sizeof(*t->entries));
	/* The arena is only read through entries: no need to clear it. */
	t->fill_step = 0;
	t->fill_mark = t->max_used / 2;	/* the first fill event, at 50% */
}
