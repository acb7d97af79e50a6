// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack stack table: what is not on the sample path. The sample path's
 * part (hash, lookup, insert) is inline in stacktab.h.
 */
#ifdef __KERNEL__
#include <linux/log2.h>
#include <linux/string.h>
#endif
#include "stacktab.h"

/* Fill events start again from the first, at 50%. */
static void hs_table_rearm(struct hs_table *t)
{
	t->fill_step = 0;
	t->fill_mark = t->max_used / 2;
}

/* Set @t up on zeroed memory: @nr_entries (a power of two) and the arena. */
void hs_table_init(struct hs_table *t, struct hotstack_cpu_stats *stats,
		   struct hotstack_entry *entries, u32 nr_entries,
		   u64 *arena, u64 arena_frames, u64 seed)
{
	t->stats = stats;
	t->entries = entries;
	t->arena = arena;
	t->mask = nr_entries - 1;
	t->shift = 64 - ilog2(nr_entries);
	t->max_used = nr_entries / HS_TABLE_LOAD_DEN * HS_TABLE_LOAD_NUM;
	t->arena_frames = arena_frames;
	t->seed = seed;
	t->hash0 = hs_hash_start(&(struct hs_key){ }, seed);
	t->weight = 1;
	hs_table_rearm(t);
}

int hs_entry_fill_ip(struct hs_table *t, struct hotstack_entry *e, u64 key0, u64 ip,
		     u64 hash, u64 w)
{
	union {
		struct hs_stack st;
		u64 w[HS_KEY_WORDS + 1];
	} one = { };

	one.w[0] = key0;
	one.w[HS_KEY_WORDS] = ip;
	return hs_entry_fill(t, e, &one.st, hash, w);
}

void hs_table_clear(struct hs_table *t)
{
	memset(t->stats, 0, sizeof(*t->stats));
	t->interrupts = 0;
	memset(t->entries, 0, (size_t)(t->mask + 1) * sizeof(*t->entries));
	/* The arena is only read through entries: no need to clear it. */
	hs_table_rearm(t);
}
