// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack stack table: hash, insert, compare, clear. See stacktab.h.
 */
#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/string.h>
#include <linux/xxhash.h>
#include <asm/barrier.h>
#endif
#include "stacktab.h"

u64 hs_stack_hash(const struct hs_stack *st)
{
	size_t nr = st->key.nr_kernel + st->key.nr_user;
	u64 h = xxh64(st, sizeof(st->key) + nr * sizeof(u64), 0);

	return h ? h : 1;
}

static bool hs_key_equal(const struct hotstack_entry *e, const struct hs_key *k)
{
	return e->nr_kernel == k->nr_kernel && e->nr_user == k->nr_user &&
	       e->flags == k->flags && e->context == k->context &&
	       e->depth == k->depth && e->tgid == k->tgid &&
	       !memcmp(e->comm, k->comm, sizeof(e->comm));
}

bool hs_entry_equal(const struct hotstack_entry *e, const u64 *arena,
		    const struct hs_stack *st)
{
	size_t nr = st->key.nr_kernel + st->key.nr_user;

	return hs_key_equal(e, &st->key) &&
	       !memcmp(arena + e->frames, st->frames, nr * sizeof(u64));
}

/* Fill free entry @e with @st and publish it. */
static int hs_entry_fill(struct hs_table *t, struct hotstack_entry *e,
			 const struct hs_stack *st, u64 hash)
{
	struct hotstack_cpu_stats *stats = t->stats;
	u64 nr = st->key.nr_kernel + st->key.nr_user;
	u64 used = stats->arena_used;

	if (stats->entries >= t->max_used)
		return HOTSTACK_DROP_TABLE_FULL;
	if (nr > t->arena_frames - used)
		return HOTSTACK_DROP_ARENA_FULL;

	memcpy(t->arena + used, st->frames, nr * sizeof(u64));
	e->count = 1;
	e->frames = used;
	e->nr_kernel = st->key.nr_kernel;
	e->nr_user = st->key.nr_user;
	e->flags = st->key.flags;
	e->context = st->key.context;
	e->depth = st->key.depth;
	e->tgid = st->key.tgid;
	memcpy(e->comm, st->key.comm, sizeof(e->comm));
	WRITE_ONCE(stats->arena_used, used + nr);
	WRITE_ONCE(stats->entries, stats->entries + 1);
	/* Publish: frames and fields before the hash (pairs with readers' acquire). */
	smp_store_release(&e->hash, hash);
	return -1;
}

int hs_table_add(struct hs_table *t, const struct hs_stack *st, u64 hash)
{
	u32 i = hash & t->mask;
	unsigned int probe;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		struct hotstack_entry *e = &t->entries[i];
		/* Single writer: plain loads see our own stores. */
		u64 h = e->hash;

		if (!h)
			return hs_entry_fill(t, e, st, hash);
		if (h == hash && hs_entry_equal(e, t->arena, st)) {
			WRITE_ONCE(e->count, e->count + 1);
			return -1;
		}
	}
	return HOTSTACK_DROP_TABLE_FULL;
}

void hs_table_clear(struct hs_table *t)
{
	memset(t->stats, 0, sizeof(*t->stats));
	memset(t->entries, 0, (size_t)(t->mask + 1) * sizeof(*t->entries));
	/* The arena is only read through entries: no need to clear it. */
}
