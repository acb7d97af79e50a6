/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The keys of an off-CPU session's records of the tasks off the CPU now:
 * an open-addressing table of task pointers, lock-free, written by the
 * sched_switch probes of every CPU (sample.c). Built into the module and
 * into a host unit test (tests/unit/test_offtab.c), which counts the
 * places each lookup reads (HS_OFFTAB_READ()).
 */
#ifndef _HOTSTACK_OFFTAB_H
#define _HOTSTACK_OFFTAB_H

#ifdef __KERNEL__
#include <linux/atomic.h>
#include <linux/hash.h>
#include <asm/barrier.h>
#else
#include "kshim.h"
#endif

/*
 * hs_offtab.keys: a free place, one freed (probes go past it), and one
 * taken whose record is being written (hs_offtab_take()'s @as).
 */
#define HS_OFF_FREE	0UL
#define HS_OFF_GONE	1UL
#define HS_OFF_BUSY	2UL

/* Places a record's key (or a process: hs_tables.off_procs) is looked for at most. */
#define HS_OFF_PROBES	32

/* hs_offtab_take(): no place free within HS_OFF_PROBES. */
#define HS_OFF_NONE	(~0U)

#ifndef HS_OFFTAB_READ
#define HS_OFFTAB_READ()	do { } while (0)
#endif

/*
 * struct hs_offtab - the keys: each place a task pointer (or HS_OFF_*),
 * the key of the record of the same index
 * @keys:	[mask + 1]
 * @homes:	[mask + 1]: the records whose key's hash (its home) is
 *		each index. A lookup or take for a task whose home has none
 *		reads no further than the home: the task has no record, and
 *		the places freed before (HS_OFF_GONE, which stay until the
 *		next START) are never scanned for it.
 * @mask:	places - 1 (a power of two)
 * @bits:	log2 of the places
 */
struct hs_offtab {
	unsigned long *keys;
	atomic_t *homes;
	u32 mask;
	u32 bits;
};

/*
 * The key of @task's record, or NULL: it has none. A home's count is raised
 * before the switch-out that takes a record ends, so that the task's
 * switch-in, after it, sees it.
 */
static __always_inline unsigned long *hs_offtab_find(struct hs_offtab *o, unsigned long task)
{
	u32 i = hash_long(task, o->bits), n;

	if (!atomic_read(&o->homes[i]))
		return NULL;
	for (n = 0; n < HS_OFF_PROBES; n++, i = (i + 1) & o->mask) {
		unsigned long k = READ_ONCE(o->keys[i]);

		HS_OFFTAB_READ();
		if (k == task)
			return &o->keys[i];
		if (k == HS_OFF_FREE)
			return NULL;
	}
	return NULL;
}

/* @task's record, at @key, freed: after what was read of it. */
static __always_inline void hs_offtab_free(struct hs_offtab *o, unsigned long *key,
					   unsigned long task)
{
	/* Pairs with a taker's cmpxchg. */
	smp_store_release(key, HS_OFF_GONE);
	atomic_dec(&o->homes[hash_long(task, o->bits)]);
}

/*
 * A place for @task's record (@task leaving its CPU), or HS_OFF_NONE: none
 * free within HS_OFF_PROBES. Its own if it has one still (its switch-in was
 * not seen: *@replaced), so that a task has one record at most; else the
 * first free or freed place from its home, keyed @as: @task, or
 * HS_OFF_BUSY for a task that is not current, whose switch-in may come
 * first: its key stored (smp_store_release()) once its record is written.
 */
static __always_inline u32 hs_offtab_take(struct hs_offtab *o, unsigned long task,
					  unsigned long as, bool *replaced)
{
	u32 i = hash_long(task, o->bits), n, at = HS_OFF_PROBES;
	bool own = atomic_read(&o->homes[i]);
	unsigned long k;

	*replaced = false;
	for (n = 0; n < HS_OFF_PROBES; n++) {
		k = READ_ONCE(o->keys[(i + n) & o->mask]);
		HS_OFFTAB_READ();
		if (k == task) {
			*replaced = true;
			return (i + n) & o->mask;
		}
		if (k <= HS_OFF_GONE && at == HS_OFF_PROBES) {
			at = n;
			if (!own)
				break;	/* no record has this home: not one of the task's */
		}
		if (k == HS_OFF_FREE)
			break;
	}
	/* Another CPU's task may take it first: then the next free one. */
	for (n = at; n < HS_OFF_PROBES; n++) {
		unsigned long *key = &o->keys[(i + n) & o->mask];

		k = READ_ONCE(*key);
		HS_OFFTAB_READ();
		if (k <= HS_OFF_GONE && try_cmpxchg(key, &k, as)) {
			atomic_inc(&o->homes[i]);
			return (i + n) & o->mask;
		}
	}
	return HS_OFF_NONE;
}

#endif
