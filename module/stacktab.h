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
#include <linux/types.h>
#else
#include "kshim.h"
#endif
#include <linux/hotstack.h>

/* Entries in use stop growing at 3/4 of the table: probes stay short. */
#define HS_TABLE_LOAD_NUM	3
#define HS_TABLE_LOAD_DEN	4
/* Longest probe sequence before a new stack counts as table full. */
#define HS_MAX_PROBES		64

/* Words of key in front of the frames in a walk buffer (struct hs_key). */
#define HS_KEY_WORDS		4

/*
 * struct hs_key - what identifies a stack besides its frames; laid out as
 * HS_KEY_WORDS words right before the frames, so that one hash covers both.
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
	u32 max_used;		/* entries that may be in use */
	u64 arena_frames;	/* frames the arena holds */
};

/* Hash of a stack's key and frames; never 0 (0 marks a free entry). */
u64 hs_stack_hash(const struct hs_stack *st);

/*
 * Count one sample of @st (hash @hash) in @t. Returns -1 when counted,
 * else the HOTSTACK_DROP_* reason (the caller counts the drop).
 */
int hs_table_add(struct hs_table *t, const struct hs_stack *st, u64 hash);

/* Whether entry @e (published) holds exactly @st. */
bool hs_entry_equal(const struct hotstack_entry *e, const u64 *arena,
		    const struct hs_stack *st);

/* Empty the table and zero its counters (the table must be quiet). */
void hs_table_clear(struct hs_table *t);

#endif /* _HOTSTACK_STACKTAB_H */
