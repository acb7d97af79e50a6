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

/* Set @s up on zeroed memory: @nr_stacks places (a power of two), the arena. */
void hs_store_init(struct hs_store *s, struct hotstack_store_stats *stats,
		   struct hotstack_stack *stacks, u32 nr_stacks, u64 *arena, u64 arena_frames)
{
	s->stats = stats;
	s->stacks = stacks;
	s->arena = arena;
	s->mask = nr_stacks - 1;
	s->shift = 64 - ilog2(nr_stacks);
	s->max_used = nr_stacks / HS_TABLE_LOAD_DEN * HS_TABLE_LOAD_NUM;
	s->arena_frames = arena_frames;
}

void hs_store_clear(struct hs_store *s)
{
	memset(s->stats, 0, sizeof(*s->stats));
	memset(s->stacks, 0, (size_t)(s->mask + 1) * sizeof(*s->stacks));
	/* The arena is only read through stacks: no need to clear it. */
}

/* Set @t up on zeroed memory: @nr_counts (a power of two) entries of @store. */
void hs_table_init(struct hs_table *t, struct hotstack_cpu_stats *stats,
		   struct hotstack_count *counts, u32 nr_counts, struct hs_store *store,
		   u64 seed)
{
	t->stats = stats;
	t->counts = counts;
	t->store = store;
	t->stacks = store->stacks;
	t->arena = store->arena;
	t->mask = nr_counts - 1;
	t->shift = 64 - ilog2(nr_counts);
	t->max_used = nr_counts / HS_TABLE_LOAD_DEN * HS_TABLE_LOAD_NUM;
	t->seed = seed;
	t->hash0 = hs_hash_start(&(struct hs_key){ }, seed);
	t->weight = 1;
	t->fill_step = 0;
	t->fill_entries = 0;
	t->fill_stacks = 0;
}

/* hs_table_add_new(), @keys a constant: its own copy of the store's lookup in each caller. */
static __always_inline int hs_table_miss(struct hs_table *t, struct hotstack_count *c,
					 const struct hs_stack *st, u64 hash, u64 w,
					 const bool keys)
{
	s64 idx;

	if (t->stats->entries >= t->max_used)
		return HOTSTACK_DROP_TABLE_FULL;
	idx = hs_store_add(t->store, st, hash, keys);
	if (idx < 0)
		return ~idx;
	return hs_count_new(t, c, idx, hash, w);
}

notrace int hs_table_add_new(struct hs_table *t, struct hotstack_count *c,
			     const struct hs_stack *st, u64 hash, u64 w, bool keys)
{
	if (keys)
		return hs_table_miss(t, c, st, hash, w, true);
	return hs_table_miss(t, c, st, hash, w, false);
}

notrace int hs_table_add_ip_new(struct hs_table *t, struct hotstack_count *c,
				struct hs_stack *buf, u64 key0, u64 ip, u64 hash, u64 w)
{
	u64 *word = (u64 *)&buf->key;

	/* The key's first word, then the others (tgid, comm, cgroup) zero. */
	word[0] = key0;
	word[1] = 0;
	word[2] = 0;
	word[3] = 0;
	word[4] = 0;
	buf->frames[0] = ip;
	return hs_table_miss(t, c, buf, hash, w, false);
}

void hs_table_clear(struct hs_table *t)
{
	memset(t->stats, 0, sizeof(*t->stats));
	t->interrupts = 0;
	memset(t->counts, 0, (size_t)(t->mask + 1) * sizeof(*t->counts));
	t->fill_step = 0;
	t->fill_entries = 0;
	t->fill_stacks = 0;
}
