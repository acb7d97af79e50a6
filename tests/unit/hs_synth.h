/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic session mapping, laid out as the uapi header describes it
 * (mmap version 2: a store of stacks per generation, shared by the CPU
 * slots, then each slot's counts), for the table reader's unit test and
 * the dump benchmark.
 */
#ifndef HS_SYNTH_H
#define HS_SYNTH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hotstack.h>

struct hs_synth {
	char *buf;
	size_t size;
	struct hotstack_mmap_header *h;
};

/*
 * Two generations of a store of @entries stacks (a power of two) and
 * @arena frames, and @nr_slots CPU slots of @cpu_entries counts (a power
 * of two) each, as the module lays them out. 0 or -1.
 */
static inline int hs_synth_init_store(struct hs_synth *s, unsigned int nr_slots, uint32_t entries,
				      uint32_t cpu_entries, uint64_t arena)
{
	size_t hdr = (sizeof(*s->h) + nr_slots * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	size_t store_stats = 4096;
	size_t store = (store_stats + entries * sizeof(struct hotstack_stack) + arena * 8 + 4095) &
		       ~(size_t)4095;
	size_t stats = (sizeof(struct hotstack_cpu_stats) + 63) & ~(size_t)63;
	size_t slot = (stats + cpu_entries * sizeof(struct hotstack_count) + 127) & ~(size_t)127;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->size = hdr + 2 * (store + nr_slots * slot);
	s->buf = calloc(1, s->size);
	if (!s->buf)
		return -1;
	s->h = (void *)s->buf;
	s->h->version = HOTSTACK_MMAP_VERSION;
	s->h->header_size = sizeof(*s->h);
	s->h->state = HOTSTACK_STATE_READY;
	s->h->active = 0;
	s->h->readable = 1;
	s->h->nr_slots = nr_slots;
	s->h->table_entries = entries;
	s->h->arena_frames = arena;
	s->h->entry_size = sizeof(struct hotstack_stack);
	s->h->cpu_stats_size = stats;
	s->h->slot_size = slot;
	s->h->store_size = store;
	s->h->store_stats_size = store_stats;
	s->h->cpu_entries = cpu_entries;
	s->h->count_size = sizeof(struct hotstack_count);
	s->h->gen_offset[0] = hdr;
	s->h->gen_offset[1] = hdr + store + nr_slots * slot;
	s->h->mmap_size = s->size;
	for (i = 0; i < nr_slots; i++)
		s->h->slot_cpu[i] = i;
	return 0;
}

/* A store of @entries stacks and @arena frames, each slot counting as many stacks. */
static inline int hs_synth_init(struct hs_synth *s, unsigned int nr_slots, uint32_t entries,
				uint64_t arena)
{
	return hs_synth_init_store(s, nr_slots, entries, entries, arena);
}

static inline struct hotstack_store_stats *hs_synth_store(struct hs_synth *s, unsigned int gen)
{
	return (void *)(s->buf + s->h->gen_offset[gen]);
}

static inline struct hotstack_stack *hs_synth_stacks(struct hs_synth *s, unsigned int gen)
{
	return (void *)(s->buf + s->h->gen_offset[gen] + s->h->store_stats_size);
}

static inline struct hotstack_cpu_stats *hs_synth_stats(struct hs_synth *s, unsigned int gen,
							unsigned int slot)
{
	return (void *)(s->buf + s->h->gen_offset[gen] + s->h->store_size +
			slot * s->h->slot_size);
}

static inline struct hotstack_count *hs_synth_counts(struct hs_synth *s, unsigned int gen,
						     unsigned int slot)
{
	return (void *)((char *)hs_synth_stats(s, gen, slot) + s->h->cpu_stats_size);
}

/*
 * A new stack in generation @gen's store (@frames: nk kernel frames then
 * nu user frames, innermost first), READY, counted by no CPU yet; its
 * hash is one of the frames' and of a serial number (any value works for
 * the reader: the store may hold equal frames twice, told apart by keys
 * set afterwards). Returns it, or NULL when the store is full.
 */
static inline struct hotstack_stack *hs_synth_stack(struct hs_synth *s, unsigned int gen,
						    const uint64_t *frames, unsigned int nk,
						    unsigned int nu)
{
	struct hotstack_store_stats *st = hs_synth_store(s, gen);
	struct hotstack_stack *e = hs_synth_stacks(s, gen);
	uint64_t *arena = (void *)(e + s->h->table_entries);
	uint64_t hash = 14695981039346656037ULL, mask = s->h->table_entries - 1, i;

	for (i = 0; i < nk + nu; i++)
		hash = (hash ^ frames[i]) * 1099511628211ULL;
	hash = (hash ^ nk ^ (uint64_t)nu << 16 ^ st->stacks) * 1099511628211ULL;
	hash = (hash & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_READY;
	if (st->stacks == s->h->table_entries || st->arena_used + nk + nu > s->h->arena_frames)
		return NULL;
	/* At its top bits, as the module places a stack. */
	for (i = hash >> (64 - __builtin_ctzll(s->h->table_entries)); e[i].hash;
	     i = (i + 1) & mask)
		;
	e += i;
	e->nr_kernel = nk;
	e->nr_user = nu;
	e->frames = st->arena_used;
	if (nk + nu)
		memcpy(arena + st->arena_used, frames, (nk + nu) * sizeof(uint64_t));
	st->arena_used += nk + nu;
	st->stacks++;
	e->hash = hash;
	return e;
}

/*
 * Slot @slot of generation @gen counts stack @e (of that store) @count
 * more times: its entry for it, made at the top bits of the stack's hash
 * when the slot had none. Returns the entry, or NULL when the slot is full.
 */
static inline struct hotstack_count *hs_synth_count(struct hs_synth *s, unsigned int gen,
						    unsigned int slot,
						    const struct hotstack_stack *e, uint64_t count)
{
	struct hotstack_cpu_stats *st = hs_synth_stats(s, gen, slot);
	struct hotstack_count *c = hs_synth_counts(s, gen, slot);
	uint32_t idx = e - hs_synth_stacks(s, gen) + 1, mask = s->h->cpu_entries - 1, i, n;

	for (i = e->hash >> (64 - __builtin_ctzll(s->h->cpu_entries)), n = 0;
	     n < s->h->cpu_entries && c[i].stack && c[i].stack != idx; i = (i + 1) & mask, n++)
		;
	if (n == s->h->cpu_entries)
		return NULL;
	if (!c[i].stack) {
		st->entries++;
		c[i].tag = (uint32_t)e->hash;
		c[i].stack = idx;
	}
	c[i].count += count;
	st->samples += count;
	st->counted += count;
	return &c[i];
}

/*
 * A new stack (as hs_synth_stack()) counted @count times by slot @slot.
 * Returns it, or NULL when the store or the slot is full.
 */
static inline struct hotstack_stack *hs_synth_add(struct hs_synth *s, unsigned int gen,
						  unsigned int slot, const uint64_t *frames,
						  unsigned int nk, unsigned int nu, uint64_t count)
{
	struct hotstack_stack *e = hs_synth_stack(s, gen, frames, nk, nu);

	return e && hs_synth_count(s, gen, slot, e, count) ? e : NULL;
}

#endif
