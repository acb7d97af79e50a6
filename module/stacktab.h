/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack stack tables: a generation's store of distinct stacks, one for
 * every CPU (open addressing, plus the arena holding their frames), and
 * each CPU's count table naming the stacks it counted.
 *
 * The store has any number of writers at once (the samplers of every CPU,
 * in NMI or hardirq context: lock-free, see hs_store_add()); a count table
 * has one (the sampler on its CPU, never nested: sample.c makes sure). Any
 * number of readers (read(), mmap users): a stack is filled in, then
 * published by a release store of its hash; a count entry names only a
 * published stack. A hit is counted only after comparing every field and
 * frame, so two stacks are never merged.
 * Built into the module and, with a small shim, into host unit tests.
 */
#ifndef _HOTSTACK_STACKTAB_H
#define _HOTSTACK_STACKTAB_H

#ifdef __KERNEL__
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/barrier.h>
#include <asm/local64.h>
#include <asm/processor.h>
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
 * first word like hotstack_stack's nr_kernel..depth.
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

/*
 * A generation's store of distinct stacks, shared by every CPU: places
 * claimed by cmpxchg of their hash (HOTSTACK_STACK_FILLING), frames taken
 * from the arena by cmpxchg of its use, published by a release store of
 * the hash with HOTSTACK_STACK_READY. Never a lock, never a wait but a
 * bounded one for a place another CPU is filling with the same hash.
 */
struct hs_store {
	struct hotstack_store_stats *stats;
	struct hotstack_stack *stacks;
	u64 *arena;
	u32 mask;		/* places - 1 */
	u32 shift;		/* 64 - log2(places) */
	u32 max_used;		/* places that may be taken */
	u64 arena_frames;	/* frames the arena holds */
};

/*
 * One CPU's count table in one generation (one writer: the CPU's sampler);
 * the memory is in the mmap buffer, as the store's.
 */
struct hs_table {
	struct hotstack_cpu_stats *stats;
	struct hotstack_count *counts;
	struct hs_store *store;
	const struct hotstack_stack *stacks;	/* @store's, for a hit's one load */
	const u64 *arena;			/* ditto */
	u32 mask;		/* count entries - 1 */
	u32 shift;		/* 64 - log2(count entries): a hash's top bits are its index */
	u32 max_used;		/* count entries that may be in use */
	u32 fill_step;		/* fill events raised so far (hotstack_fill_pct[]) */
	/*
	 * The next fill level is due when this CPU's count entries or the
	 * store's stacks reach these (0: look at the next new entry).
	 */
	u32 fill_entries;
	u32 fill_stacks;
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

/*
 * A stack's hash as the store keeps it: its two low bits the place's
 * state, HOTSTACK_STACK_READY (never 0: 0 marks a free place).
 */
static inline u64 hs_hash_ready(u64 h)
{
	return (h & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_READY;
}

/* The hash of a stack, @h its start and frames. */
static inline u64 hs_hash_end(u64 h, const struct hs_key *k)
{
	return hs_hash_ready(hs_mix(h, hs_word(k)));
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

/* Where the probe sequence of @hash starts in a table of @shift. */
static inline u32 hs_index(u32 shift, u64 hash)
{
	return hash >> shift;
}

/* @keys false: no stack of the store has a tgid, comm or cgroup, nor has @k. */
static __always_inline bool hs_key_equal(const struct hotstack_stack *e,
					 const struct hs_key *k, const bool keys)
{
	return hs_word(&e->nr_kernel) == hs_word(&k->nr_kernel) &&
	       (!keys || (e->tgid == k->tgid && hs_word(e->comm) == hs_word(k->comm) &&
			  hs_word(e->comm + 8) == hs_word(k->comm + 8) && e->cgroup == k->cgroup));
}

/* Whether stack @e (READY) holds exactly @st (@keys: hs_key_equal()'s). */
static __always_inline bool hs_stack_equal(const struct hotstack_stack *e, const u64 *arena,
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
 * How long a lookup waits for a place another CPU is filling with its
 * hash (ns): storing takes a few microseconds at most (a 1024-frame
 * stack's 8 KiB copied) in NMI or hardirq context; only a hypervisor that
 * stops the storing vCPU makes it longer, and then the sample is dropped
 * (HOTSTACK_DROP_BUSY) rather than held: a long NMI makes perf lower the
 * machine's kernel.perf_event_max_sample_rate ("interrupt took too long").
 */
#define HS_FILL_WAIT_NS		(50 * 1000)
/* ... looking at the clock once in this many re-reads. */
#define HS_FILL_SPINS		32
/* Times an arena claim is tried again after another CPU's claim won. */
#define HS_ARENA_TRIES		64

/*
 * Take @nr frames of @s's arena, @old its frames in use as last read (a
 * stale value costs a try): their index, or -1 when they do not fit
 * (HOTSTACK_DROP_ARENA_FULL) or -2 when other CPUs kept winning the race
 * (HOTSTACK_DROP_BUSY). Lock-free: a failed cmpxchg means another claim
 * succeeded, and reads the arena's use again.
 */
static inline s64 hs_arena_claim(struct hs_store *s, u64 nr, s64 old)
{
	atomic64_t *used = (atomic64_t *)&s->stats->arena_used;
	unsigned int i;

	for (i = 0; i < HS_ARENA_TRIES; i++) {
		if (nr > s->arena_frames - (u64)old)
			return -1;
		if (atomic64_try_cmpxchg(used, &old, old + nr))
			return old;
	}
	return -2;
}

/*
 * Copy @nr frames, two words at a time from the end's negative index (as
 * hs_stack_equal() compares them): memcpy() is a call, and x86's goes
 * byte by byte (rep movsb) for the few frames most stacks have. The
 * stores are WRITE_ONCE() so that the compiler does not make the loop a
 * memcpy() call again.
 */
static __always_inline void hs_copy_frames(u64 *to, const u64 *from, u64 nr)
{
	long i = -(long)nr;

	to += nr;
	from += nr;
	if (nr & 1) {
		WRITE_ONCE(to[i], from[i]);
		i++;
	}
	for (; i; i += 2) {
		WRITE_ONCE(to[i], from[i]);
		WRITE_ONCE(to[i + 1], from[i + 1]);
	}
}

/*
 * Fill place @i, claimed (FILLING), with @st and publish it; @used: the
 * arena's frames in use as read before the claim. Returns @i, or a drop
 * reason as ~reason (the place is then DEAD: its hash stays for lookups
 * to pass over).
 */
static __always_inline s64 hs_store_fill(struct hs_store *s, u32 i,
					 const struct hs_stack *st, u64 hash, s64 used)
{
	struct hotstack_stack *e = &s->stacks[i];
	u64 nr = st->key.nr_kernel + st->key.nr_user;
	s64 at = nr ? hs_arena_claim(s, nr, used) : 0;

	if (at < 0) {
		/* Never filled: released only for symmetry with the READY store. */
		smp_store_release(&e->hash, hash | HOTSTACK_STACK_DEAD);
		return ~(s64)(at == -1 ? HOTSTACK_DROP_ARENA_FULL : HOTSTACK_DROP_BUSY);
	}
	hs_copy_frames(s->arena + at, st->frames, nr);
	e->frames = at;
	/* nr_kernel to depth: one word, laid out alike (as hs_key_equal() has it). */
	*(u64 *)&e->nr_kernel = hs_word(&st->key);
	e->tgid = st->key.tgid;
	memcpy(e->comm, st->key.comm, sizeof(e->comm));
	e->cgroup = st->key.cgroup;
	/* Publish: frames and fields before the hash (pairs with lookups' acquire). */
	smp_store_release(&e->hash, hash);
	return i;
}

/*
 * The index of @st (hash @hash, READY) in store @s, stored now if it was
 * not: from any CPU at once, in NMI or hardirq context. Returns the index,
 * or ~reason for HOTSTACK_DROP_TABLE_FULL, _ARENA_FULL, _COLLISION or
 * _BUSY. A stack is stored once: a place is claimed only where the probe
 * sequence of its hash has no place left to look at (a free one), and a
 * place being filled with its hash is waited for (HS_FILL_WAIT_NS at
 * most: then HOTSTACK_DROP_BUSY).
 */
static __always_inline s64 hs_store_add(struct hs_store *s, const struct hs_stack *st,
					u64 hash, const bool keys)
{
	const u64 filling = hash ^ HOTSTACK_STACK_READY ^ HOTSTACK_STACK_FILLING;
	atomic64_t *taken = (atomic64_t *)&s->stats->stacks;
	u32 i = hs_index(s->shift, hash);
	unsigned int probe, collisions = 0, spins = 0;
	u64 since = 0;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & s->mask) {
		struct hotstack_stack *e = &s->stacks[i];
		/* Pairs with the release in hs_store_fill(). */
		u64 h = smp_load_acquire(&e->hash);

		while (unlikely(h == filling)) {
			if (!(++spins % HS_FILL_SPINS)) {
				u64 now = local_clock();

				if (!since)
					since = now;
				else if (now - since > HS_FILL_WAIT_NS)
					return ~(s64)HOTSTACK_DROP_BUSY;
			}
			cpu_relax();
			/* As above: READY makes the fields visible. */
			h = smp_load_acquire(&e->hash);
		}
		if (!h) {
			s64 used = READ_ONCE(s->stats->arena_used);
			int full = -1;

			/*
			 * No place taken for frames that cannot fit (one would
			 * be lost); a place of the 3/4 that may be taken
			 * reserved before taking one.
			 */
			if (st->key.nr_kernel + st->key.nr_user > s->arena_frames - used) {
				full = HOTSTACK_DROP_ARENA_FULL;
			} else if (!atomic64_add_unless(taken, 1, s->max_used)) {
				full = HOTSTACK_DROP_TABLE_FULL;
			} else {
				if (try_cmpxchg(&e->hash, &h, filling))
					return hs_store_fill(s, i, st, hash, used);
				atomic64_dec(taken);
			}
			/*
			 * Full, or claimed: by another CPU that may be storing
			 * this very stack (with the room it found). Full only
			 * if the place is still free.
			 */
			if (full >= 0 && !smp_load_acquire(&e->hash))
				return ~(s64)full;
			/* Look at the place again. */
			probe--;
			i = (i - 1) & s->mask;
			continue;
		}
		if (h != hash)
			continue;
		if (hs_stack_equal(e, s->arena, st, keys))
			return i;
		if (++collisions == HS_MAX_COLLISIONS)
			return ~(s64)HOTSTACK_DROP_COLLISION;
	}
	return ~(s64)HOTSTACK_DROP_TABLE_FULL;
}

/*
 * The stack count entry @id names (its index + 1): the index widened
 * first, so that the - 1 is the address's displacement, not an
 * instruction of its own.
 */
static __always_inline const struct hotstack_stack *hs_count_stack(const struct hs_table *t,
								   u32 id)
{
	return &t->stacks[(u64)id - 1];
}

/*
 * A single-instruction addition where the CPU has one: for counters that
 * a nested sample may update while the interrupted one is between its
 * load and its store, and for a count entry (one writer, its CPU's
 * sampler: one instruction, not a load, an add and a store).
 */
static __always_inline void hs_add(__u64 *counter, u64 n)
{
	local64_add(n, (local64_t *)counter);
}

/* A count entry for stack @idx (hash @hash) in free entry @c of @t, @w samples. */
static inline int hs_count_new(struct hs_table *t, struct hotstack_count *c, u64 idx,
			       u64 hash, u64 w)
{
	c->count = w;
	c->tag = (u32)hash;
	/* The count before the index (pairs with readers' acquire). */
	smp_store_release(&c->stack, (u32)idx + 1);
	WRITE_ONCE(t->stats->entries, t->stats->entries + 1);
	return HS_COUNTED_NEW;
}

/*
 * hs_table_add()'s miss at free count entry @c: @st found or stored in the
 * store, then counted there (not inline: the lookup that hits keeps
 * nothing in registers for it).
 */
int hs_table_add_new(struct hs_table *t, struct hotstack_count *c, const struct hs_stack *st,
		     u64 hash, u64 w, bool keys);

/*
 * Count one sample of @st (hash @hash) in @t, @w times (the weight the
 * caller read once, for its counters too: the budget may change it). Returns
 * HS_COUNTED or HS_COUNTED_NEW when counted, else the HOTSTACK_DROP_*
 * reason (the caller counts the drop). @keys false: a session without keys
 * (no tgid, no comm in any of its stacks), whose keys need no compare.
 *
 * A hit is this CPU's count entry of the stack: a lookup by hash in the
 * CPU's table, the stack it names compared in full in the store. A miss
 * finds or stores the stack in the store, then takes a count entry.
 */
static __always_inline int hs_table_add(struct hs_table *t, const struct hs_stack *st,
					u64 hash, u64 w, const bool keys)
{
	u32 i = hs_index(t->shift, hash);
	unsigned int probe, compares = HS_MAX_COLLISIONS;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		struct hotstack_count *c = &t->counts[i];
		/* Single writer: plain loads see our own stores. */
		u32 id = c->stack;

		if (!id)
			return hs_table_add_new(t, c, st, hash, w, keys);
		if (c->tag != (u32)hash)
			continue;
		/* The stack it names, compared whole: a tag is no proof. */
		if (hs_stack_equal(hs_count_stack(t, id), t->arena, st, keys)) {
			hs_add(&c->count, w);
			return HS_COUNTED;
		}
		if (!--compares)
			return HOTSTACK_DROP_COLLISION;
	}
	return HOTSTACK_DROP_TABLE_FULL;
}

/*
 * The IP-only path (max_depth 1, no keys): a stack of at most one frame
 * whose key is its first word @key0 alone (no tgid, no comm: zero in every
 * stack of such a session), looked up without a walk buffer and compared
 * on its two words. Its hash is hs_stack_hash()'s rounds in another order,
 * the key first: hs_ip_hash_key() of the key (the same for every sample
 * of a session: computed once), then hs_ip_hash() of its frame. Such a
 * session counts every sample by this path, so that the hash of a stack
 * is the same in every sample and on every CPU, as the store needs.
 */
static inline u64 hs_ip_hash_key(u64 key0, u64 seed)
{
	return hs_mix(hs_hash_start(&(struct hs_key){ }, seed), key0);
}

static inline u64 hs_ip_hash(u64 hkey, unsigned int nr, u64 ip)
{
	return hs_hash_ready(nr ? hs_mix(hkey, ip) : hkey);
}

/*
 * A miss of such a stack: stored, then counted (not inline: rare for most
 * code, a sample in three where the kernel runs many paths, page faults'
 * say). @buf: a walk buffer of one frame or more to make it in (any
 * content: the whole key is written).
 */
int hs_table_add_ip_new(struct hs_table *t, struct hotstack_count *c, struct hs_stack *buf,
			u64 key0, u64 ip, u64 hash, u64 w);

/* hs_table_add() of such a stack: @nr (0 or 1) frames, @ip the one; @buf as above. */
static __always_inline int hs_table_add_ip(struct hs_table *t, struct hs_stack *buf, u64 key0,
					   unsigned int nr, u64 ip, u64 hash, u64 w)
{
	u32 i = hs_index(t->shift, hash);
	unsigned int probe;

	for (probe = 0; probe < HS_MAX_PROBES; probe++, i = (i + 1) & t->mask) {
		struct hotstack_count *c = &t->counts[i];
		u32 id = c->stack;
		const struct hotstack_stack *e;

		if (!id)
			return hs_table_add_ip_new(t, c, buf, key0, ip, hash, w);
		if (c->tag != (u32)hash)
			continue;
		e = hs_count_stack(t, id);
		if (hs_word(&e->nr_kernel) == key0 && (!nr || t->arena[e->frames] == ip)) {
			hs_add(&c->count, w);
			return HS_COUNTED;
		}
	}
	return HOTSTACK_DROP_TABLE_FULL;
}

void hs_store_init(struct hs_store *s, struct hotstack_store_stats *stats,
		   struct hotstack_stack *stacks, u32 nr_stacks, u64 *arena, u64 arena_frames);
/* Empty the store and zero its counters (it must be quiet). */
void hs_store_clear(struct hs_store *s);
void hs_table_init(struct hs_table *t, struct hotstack_cpu_stats *stats,
		   struct hotstack_count *counts, u32 nr_counts, struct hs_store *store,
		   u64 seed);
/* Empty the table and zero its counters (the table must be quiet). */
void hs_table_clear(struct hs_table *t);

#endif /* _HOTSTACK_STACKTAB_H */
