/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic session mapping, laid out as the uapi header describes it,
 * for the table reader's unit test and the dump benchmark.
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
	uint64_t arena_used[2][64];	/* per generation and slot */
};

static inline int hs_synth_init(struct hs_synth *s, unsigned int nr_slots, uint32_t entries,
				uint64_t arena)
{
	size_t hdr = (sizeof(*s->h) + nr_slots * sizeof(uint32_t) + 4095) & ~(size_t)4095;
	size_t stats = (sizeof(struct hotstack_cpu_stats) + 63) & ~(size_t)63;
	size_t slot = (stats + entries * sizeof(struct hotstack_entry) + arena * 8 + 4095) &
		      ~(size_t)4095;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	if (nr_slots > 64)
		return -1;
	s->size = hdr + 2 * nr_slots * slot;
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
	s->h->entry_size = sizeof(struct hotstack_entry);
	s->h->cpu_stats_size = stats;
	s->h->slot_size = slot;
	s->h->gen_offset[0] = hdr;
	s->h->gen_offset[1] = hdr + nr_slots * slot;
	s->h->mmap_size = s->size;
	for (i = 0; i < nr_slots; i++)
		s->h->slot_cpu[i] = i;
	return 0;
}

static inline struct hotstack_cpu_stats *hs_synth_stats(struct hs_synth *s, unsigned int gen,
							unsigned int slot)
{
	return (void *)(s->buf + s->h->gen_offset[gen] + slot * s->h->slot_size);
}

/*
 * Add a stack (@frames: nk kernel frames then nu user frames, innermost
 * first) counted @count times to a slot; its hash is one of the frames'
 * (any nonzero value works for the reader). Returns the entry or NULL.
 */
static inline struct hotstack_entry *hs_synth_add(struct hs_synth *s, unsigned int gen,
						  unsigned int slot, const uint64_t *frames,
						  unsigned int nk, unsigned int nu, uint64_t count)
{
	char *base = s->buf + s->h->gen_offset[gen] + slot * s->h->slot_size;
	struct hotstack_cpu_stats *st = (void *)base;
	struct hotstack_entry *e = (void *)(base + s->h->cpu_stats_size);
	uint64_t *arena = (void *)(base + s->h->cpu_stats_size +
				   (size_t)s->h->table_entries * sizeof(*e));
	uint64_t hash = 14695981039346656037ULL, mask = s->h->table_entries - 1, i;

	for (i = 0; i < nk + nu; i++)
		hash = (hash ^ frames[i]) * 1099511628211ULL;
	hash = (hash ^ nk ^ (uint64_t)nu << 16) | 1;
	if (st->entries == s->h->table_entries || st->arena_used + nk + nu > s->h->arena_frames)
		return NULL;
	/* At its top bits, as the module places an entry (hs_index()). */
	for (i = hash >> (64 - __builtin_ctzll(s->h->table_entries)); e[i].hash;
	     i = (i + 1) & mask)
		;
	e += i;
	e->count = count;
	e->nr_kernel = nk;
	e->nr_user = nu;
	e->frames = st->arena_used;
	memcpy(arena + st->arena_used, frames, (nk + nu) * sizeof(uint64_t));
	st->arena_used += nk + nu;
	st->entries++;
	st->samples += count;
	st->counted += count;
	e->hash = hash;
	return e;
}

#endif
