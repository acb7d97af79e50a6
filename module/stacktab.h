/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack stack table: one CPU's open-addressing table of distinct stacks
 * plus the arena holding their frames.
 *
 * One writer (the sampler on its CPU, never nested: sample.c makes sure),
 * any number of readers (read(), mmap users). A new entry is filled in and
 * then published by a release store of its hash; a hit is counted only
 * after comparing every field and frame, so two stacks are never merged.
 * Built into the module and, with a small shim, into host unit tests.
 */
#ifndef _HOTSTACK_STACKTAB_H
#define _HOTSTACK_STACKTAB_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/barrier.h>
#include "compat.h"
#else
#include "kshim.h"
#endif
#include <linux/hotstack.h>

/* Entries in use stop growing at 3/4 of the table: probes stay short. */
#define HS_TABLE_LOAD_NUM	3
#define HS_TABLE_LOAD_DEN	4
/* Longest probe sequence before a new stack counts as table full. */
#define HS_MAX_PROBES		64
/*
 * Entries of a stack's hash but not its frames compared at most: past
 * them the sample is a collision (never seen by chance: 64 bits alike;
 * built by a process that writes its own frame records: see the hash,
 * above hs_hash_start()).
 */
#define HS_MAX_COLLISIONS	4

/* hs_table_add() results besides a drop reason (>= 0). */
#define HS_COUNTED	(-1)	/* a hit: an existing entry counted it */
#define HS_COUNTED_NEW	(-2)	/* a new entry was made for it */

/* Words of key in front of the frames in a walk buffer (struct hs_key). */
#define HS_KEY_WORDS		5

/*
 * struct hs_key - what identifies a stack besides its frames, laid out as
 * HS_KEY_WORDS words right before the frames (one hash covers both), its
 * first word like hotstack_entry's nr_kernel..depth.
 */
struct hs_key {
	u16 nr_kernel;
	u16 nr_user;
	u8 flags;
	u8 context;
	u16 depth;
	u32 tgid;
	u32 pad;	/* 0 */
	char comm[16];
	u64 cgroup;
};

/* A stack to count: its key, immediately followed by its frames. */
struct hs_stack {
	struct hs_key key;
	u64 frames[];
};

/* One CPU's table in one generation; the memory is in the mmap buffer. */
struct hs_table {
	struct hotstack_cpu_stats *stats;
	struct hotstack_entry *entries;
	u64 *arena;
	u32 mask;		/* table entries - 1 */
	u32 shift;		/* 64 - log2(table entries): a hash's top bits are its index */
	u32 max_used;		/* entries that may be in use */
	u64 arena_frames;	/* frames the arena holds */
	u32 fill_mark;		/* entries at which the next fill event is due */
	u32 fill_step;		/* fill events raised so far */
	u64 seed;		/* of the hash: random per configuration */
	u64 hash0;		/* hs_hash_start() of a key without tgid and comm */
	u32 weight;		/* what a sample counts: the budget's W, else 1 */
	u64 interrupts;		/* handler runs (each sample once): local64 */
};

/* A 64-bit load of 8 bytes of key: one instruction on 64-bit machines. */
static inline u64 hs_word(const void *p)
{
	return get_unaligned((const u64 *)p);
}

/* One round of the hash below: xxh64's round. */
static __always_inline u64 hs_mix(u64 h, u64 word)
{
	h ^= word * 0xc2b2ae3d27d4eb4fULL;
	return rol64(h, 31) * 0x9e3779b185ebca87ULL;
}

/*
 * The round of a frame: cheaper than hs_mix() (three instructions), as
 * good for a table index (it ends in a multiplication too); the key's
 * words, the stack's last round (hs_hash_end()) and the IP path keep
 * hs_mix().
 */
static __always_inline u64 hs_mix_frame(u64 h, u64 frame)
{
	return (rol64(h, 31) ^ frame) * 0x9e3779b185ebca87ULL;
}

/*
 * A multiply-rotate hash over whole words (xxh64's round, without its
 * tail handling): frames are words, and a table slot needs no more. Each
 * round ends in a multiplication, whose top bits depend on every bit
 * before: they are the table index (hs_index()), with no final avalanche.
 * A collision costs a probe, never a merge: entries are compared in full.
 * The seed is random per configuration, but the hash is not a keyed one:
 * a process that writes its own frame records can build stacks that hash
 * alike whatever the seed (a difference in bit 63 of a frame comes out of
 * the round's multiplication alone, and a difference in bit 30 of the
 * next frame cancels it). What that costs a sample is bounded: past
 * HS_MAX_COLLISIONS entries of its hash compared in vain it is dropped
 * as a collision (README: Worst case, measured by make bench).
 *
 * The order is the sampler's, which hashes each frame as the walk keeps
 * it: first the key's words known before the walk (tgid and pad; the
 * comm, when not empty: no HOTSTACK_KEY_COMM; the cgroup, when not 0),
 * hs_hash_start(); then the
 * frames, one hs_mix_frame() each; last the key's first word (frame counts,
 * flags, depth: known after the walk), hs_hash_end().
 */
static inline u64 hs_hash_start(const struct hs_key *k, u64 seed)
{
	const u64 *key = (const u64 *)k;
	u64 h = hs_mix(seed ^ 0x27d4eb2f165667c5ULL, key[1]);

	if (k->comm[0])
		h = hs_mix(hs_mix(h, key[2]), key[3]);
	if (k->cgroup)
		h = hs_mix(h, k->cgroup);
	return h;
}

/* The hash of a stack, @h its start and frames. Never 0: 0 marks a free entry. */
static inline u64 hs_hash_end(u64 h, const struct hs_key *k)
{
	h = hs_mix(h, hs_word(k));
	return h ? h : 1;
}

/* The whole hash of @st at once (for tests: the sampler's is in steps). */
static inline u64 hs_stack_hash(const struct hs_stack *st, u64 seed)
{
	unsigned int i, nr = st->key.nr_kernel + st->key.nr_user;
	u64 h = hs_hash_start(&st->key, seed);

	for (i = 0; i < nr; i++)
		h = hs_mix_frame(h, st->frames[i]);
	return hs_hash_end(h, &st->key);
}

/* Where the probe sequence of @hash starts in @t. */
static inline u32 hs_index(const struct hs_table *t, u64 hash)
{
	return hash >> t->shift;
}

/* @keys false: no entry of the table has a tgid, comm or cgroup, nor has @k. */
static __always_inline bool hs_key_equal(const struct hotstack_entry *e,
					 const struct hs_key *k, const bool keys)
{
	return hs_word(&e->nr_kernel) == hs_word(&k->nr_kernel) &&
	       (!keys || (e->tgid == k->tgid && hs_word(e->comm) == hs_word(k->comm) &&
			  hs_word(e->comm + 8) == hs_word(k->comm + 8) && e->cgroup == k->cgroup));
}

/* Whether entry @e (published) holds exactly @st (@keys: hs_key_equal()'s). */
static __always_inline bool hs_entry_equal(const struct hotstack_entry *e, const u64 *arena,
					   const struct hs_stack *st, const bool keys)
{
	size_t nr = st->key.nr_kernel + st->key.nr_user;
	const u64 *a = arena + e->frames + nr, *f = st->frames + nr;
	long i = -(long)nr;

	if (!hs_key_equal(e, &st->key, keys))
		return false;
	/*
	 * Word by word (the kernel's memcmp() goes byte by byte), two at a
	 * time from the end's negative index (its count is the loop's test).
	 */
	if (nr & 1) {
		if (a[i] != f[i])
			return false;
		i++;
	}
	for (; i; i += 2)
		if ((a[i] ^ f[i]) | (a[i + 1] ^ f[i + 1]))
			return false;
	return true;
}

/*
 * Arena words an entry of @nr frames takes: at least one, so that every
 * entry's place in the arena says when it was made (a reader of a running
 * table leaves out entries past the arena_used it started with).
 */
static inline u64 hs_arena_words(u64 nr)
{
	return nr ? nr : 1;
}

/* Fill free entry @e with @st, @w samples, and publish it. */
static inline int hs_entry_fill(struct hs_table *t, struct hotstack_entry *e,
				const struct hs_stack *st, u64 hash, u64 w)
{
	struct hotstack_cpu_stats *stats = t->stats;
	u64 nr = st->key.nr_kernel + st->key.nr_user;
	u64 used = stats->arena_used;

	if (stats->entries >= t->max_used)
		return HOTSTACK_DROP_TABLE_FULL;
	if (hs_arena_words(nr) > t->arena_frames - used)
		return HOTSTACK_DROP_ARENA_FULL;

	memcpy(t->arena + used, st->frames, nr * sizeof(u64));
	e->count = w;
	e->frames = used;
	e->nr_kernel = st->key.nr_kernel;
	e->nr_user = st->key.nr_user;
	e->flags = st->key.flags;
	e->context = st->key.context;
	e->depth = st->key.depth;
	e->tgid = st->key.tgid;
	memcpy(e->comm, st->key.comm, sizeof(e->comm));
	e->cgroup = st->key.cgroup;
	WRITE_ONCE(stats->arena_used, used + hs_arena_words(nr));
	WRITE_ONCE(stats->entries, stats->entries + 1);
	/* Publish: frames and fields before the hash (pairs with readers' acquire). */
	smp_store_release(&e->hash, hash);
	return HS_COUNTED_NEW;
}

/*
 * Count one sample of @st (hash @hash) in @t, @w times (the weight the
 * caller read once, for its counters too: the budget may change it). Returns
 * HS_COUNTED or HS_COUNTED_NEW when counted, else the HOTSTACK_DROP_*
 * reason (the caller counts the drop). @keys false: a session without keys
 * (no tgid, no comm in any of its stacks), whose keys need no compare.
 */
static __always_inline int hs_table_add(struct hs_table *t, const struct hs_stack *st,
					u64 hash, u64 w, const bool keys)
{
	u32 i = hs_index(t, hash);
	unsigned int probe, collisions = 0;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		struct hotstack_entry *e = &t->entries[i];
		/* Single writer: plain loads see our own stores. */
		u64 h = e->hash;

		if (!h)
			return hs_entry_fill(t, e, st, hash, w);
		if (h != hash)
			continue;
		if (hs_entry_equal(e, t->arena, st, keys)) {
			WRITE_ONCE(e->count, e->count + w);
			return HS_COUNTED;
		}
		if (++collisions == HS_MAX_COLLISIONS)
			return HOTSTACK_DROP_COLLISION;
	}
	return HOTSTACK_DROP_TABLE_FULL;
}

/*
 * The IP-only path (max_depth 1, no keys): a stack of at most one frame
 * whose key is its first word @key0 alone (no tgid, no comm: zero in every
 * entry of such a session), counted without a walk buffer and compared on
 * its two words. Its hash is hs_stack_hash()'s rounds in another order,
 * the key first: hs_ip_hash_key() of the key (the same for every sample
 * of a session: computed once), then hs_ip_hash() of its frame. Such a
 * session counts every sample by this path, so that the hash of a stack
 * is the same in every sample and on every CPU, as read() needs.
 */
static inline u64 hs_ip_hash_key(u64 key0, u64 seed)
{
	return hs_mix(hs_hash_start(&(struct hs_key){ }, seed), key0);
}

static inline u64 hs_ip_hash(u64 hkey, unsigned int nr, u64 ip)
{
	u64 h = nr ? hs_mix(hkey, ip) : hkey;

	return h ? h : 1;
}

/* Fill free entry @e with such a stack (rare: not inline). */
int hs_entry_fill_ip(struct hs_table *t, struct hotstack_entry *e, u64 key0, u64 ip,
		     u64 hash, u64 w);

/* hs_table_add() of such a stack: @nr (0 or 1) frames, @ip the one. */
static __always_inline int hs_table_add_ip(struct hs_table *t, u64 key0, unsigned int nr,
					   u64 ip, u64 hash, u64 w)
{
	u32 i = hs_index(t, hash);
	unsigned int probe;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		struct hotstack_entry *e = &t->entries[i];
		u64 h = e->hash;

		if (!h)
			return hs_entry_fill_ip(t, e, key0, ip, hash, w);
		if (h == hash && hs_word(&e->nr_kernel) == key0 &&
		    (!nr || t->arena[e->frames] == ip)) {
			WRITE_ONCE(e->count, e->count + w);
			return HS_COUNTED;
		}
	}
	return HOTSTACK_DROP_TABLE_FULL;
}

void hs_table_init(struct hs_table *t, struct hotstack_cpu_stats *stats,
		   struct hotstack_entry *entries, u32 nr_entries,
		   u64 *arena, u64 arena_frames, u64 seed);
/* Empty the table and zero its counters (the table must be quiet). */
void hs_table_clear(struct hs_table *t);

#endif /* _HOTSTACK_STACKTAB_H */
