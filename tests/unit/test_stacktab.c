// SPDX-License-Identifier: GPL-2.0
/*
 * The stack table (module/stacktab.[ch]) built on the host: a generation's
 * store of distinct stacks (struct hs_store) shared by every CPU, and each
 * CPU's count table (struct hs_table) on it. A "CPU" here is a count table;
 * the concurrent tests run one per thread on one store.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../module/stacktab.h"
#include "../../module/stacktab.c"

#define PLACES	64	/* the fixture's store */
#define COUNTS	64	/* each of its CPUs' count tables */
#define ARENA	256
#define MAXF	16
#define SEED	0x5eed5eed5eed5eedULL
#define MAX_CPUS 8

/* One CPU: its counters and count table. */
struct cpu {
	struct hotstack_cpu_stats stats;
	struct hotstack_count *counts;
	struct hs_table t;
};

/* A store and the count tables of @nr_cpus CPUs on it (never moves: heap). */
struct rig {
	struct hotstack_store_stats sstats;
	struct hotstack_store_stats *ss;	/* the store's: &sstats, or elsewhere */
	struct hotstack_stack *stacks;
	u64 *arena;
	struct hs_store s;
	unsigned int nr_cpus;
	struct cpu cpu[MAX_CPUS];
};

static struct rig *rig_new(u32 places, u64 arena, u32 counts, unsigned int nr_cpus)
{
	struct rig *r = calloc(1, sizeof(*r));
	unsigned int c;

	assert_non_null(r);
	assert_true(nr_cpus <= MAX_CPUS);
	r->stacks = calloc(places, sizeof(*r->stacks));
	r->arena = calloc(arena ? arena : 1, sizeof(u64));
	assert_non_null(r->stacks);
	assert_non_null(r->arena);
	r->ss = &r->sstats;
	hs_store_init(&r->s, r->ss, r->stacks, places, r->arena, arena);
	r->nr_cpus = nr_cpus;
	for (c = 0; c < nr_cpus; c++) {
		r->cpu[c].counts = calloc(counts, sizeof(*r->cpu[c].counts));
		assert_non_null(r->cpu[c].counts);
		hs_table_init(&r->cpu[c].t, &r->cpu[c].stats, r->cpu[c].counts, counts, &r->s,
			      SEED);
	}
	return r;
}

static void rig_free(struct rig *r)
{
	unsigned int c;

	for (c = 0; c < r->nr_cpus; c++)
		free(r->cpu[c].counts);
	free(r->stacks);
	free(r->arena);
	free(r);
}

static void rig_clear(struct rig *r)
{
	unsigned int c;

	hs_store_clear(&r->s);
	for (c = 0; c < r->nr_cpus; c++)
		hs_table_clear(&r->cpu[c].t);
}

static u64 state_of(const struct hotstack_stack *e)
{
	return e->hash & HOTSTACK_STACK_STATE;
}

/* Places of @r's store in state @state (0: free). */
static unsigned int places_in(const struct rig *r, u64 state)
{
	unsigned int i, n = 0;

	for (i = 0; i <= r->s.mask; i++)
		n += r->stacks[i].hash ? state_of(&r->stacks[i]) == state : !state;
	return n;
}

/*
 * What must hold of a quiet rig whatever happened: no place FILLING; the
 * places taken are the store's count, at most its limit; the frames of READY places tile
 * [0, arena_used) (each claim its own range, and only READY ones have
 * one); every count entry names a READY place, with its tag, never two
 * entries of a table the same place, and the table's count of entries.
 */
static void check_rig(const struct rig *r)
{
	unsigned char *word = calloc(r->s.arena_frames + 1, 1);
	u32 *seen = calloc(r->s.mask + 1, sizeof(u32));
	unsigned int i, c, taken = 0;
	u64 frames = 0, j;

	assert_non_null(word);
	assert_non_null(seen);
	assert_true(r->ss->arena_used <= r->s.arena_frames);
	for (i = 0; i <= r->s.mask; i++) {
		const struct hotstack_stack *e = &r->stacks[i];
		u64 nr = e->nr_kernel + e->nr_user;

		if (!e->hash)
			continue;
		taken++;
		assert_int_not_equal(state_of(e), HOTSTACK_STACK_FILLING);
		if (state_of(e) != HOTSTACK_STACK_READY)
			continue;
		assert_true(e->frames + nr <= r->ss->arena_used);
		for (j = e->frames; j < e->frames + nr; j++) {
			assert_int_equal(word[j], 0);
			word[j] = 1;
		}
		frames += nr;
	}
	assert_int_equal(taken, r->ss->stacks);
	/* Never past the 3/4 (a place is reserved before it is claimed). */
	assert_true(taken <= r->s.max_used);
	assert_int_equal(frames, r->ss->arena_used);
	for (c = 0; c < r->nr_cpus; c++) {
		const struct hs_table *t = &r->cpu[c].t;
		unsigned int used = 0;

		for (i = 0; i <= t->mask; i++) {
			const struct hotstack_count *n = &t->counts[i];
			const struct hotstack_stack *e;

			if (!n->stack)
				continue;
			used++;
			assert_true(n->stack - 1 <= r->s.mask);
			e = &r->stacks[n->stack - 1];
			assert_int_equal(state_of(e), HOTSTACK_STACK_READY);
			assert_int_equal(n->tag, (u32)e->hash);
			assert_int_not_equal(n->count, 0);
			assert_int_not_equal(seen[n->stack - 1], c + 1);
			seen[n->stack - 1] = c + 1;
		}
		assert_int_equal(used, t->stats->entries);
	}
	free(word);
	free(seen);
}

/* The READY place holding @st, or -1 (and never two of them). */
static long place_of(const struct rig *r, const struct hs_stack *st)
{
	long at = -1;
	unsigned int i;

	for (i = 0; i <= r->s.mask; i++)
		if (r->stacks[i].hash && state_of(&r->stacks[i]) == HOTSTACK_STACK_READY &&
		    hs_stack_equal(&r->stacks[i], r->arena, st, true)) {
			assert_true(at < 0);
			at = i;
		}
	return at;
}

/* @t's count of place @at (one entry at most). */
static u64 count_on(const struct hs_table *t, long at)
{
	unsigned int i, found = 0;
	u64 n = 0;

	for (i = 0; i <= t->mask; i++)
		if (at >= 0 && t->counts[i].stack == at + 1) {
			found++;
			n += t->counts[i].count;
		}
	assert_true(found <= 1);
	return n;
}

struct fixture {
	struct rig *r;
	struct hs_table *a, *b;		/* CPU A, CPU B */
	union {
		struct hs_stack st;
		u64 words[HS_KEY_WORDS + MAXF];
	} buf;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->r = rig_new(PLACES, ARENA, COUNTS, 2);
	f->a = &f->r->cpu[0].t;
	f->b = &f->r->cpu[1].t;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	check_rig(f->r);
	rig_free(f->r);
	free(f);
	return 0;
}

/* Make f->buf.st the kernel stack @frames[0..n) with key @tgid. */
static struct hs_stack *stack(struct fixture *f, const u64 *frames, unsigned int n, u32 tgid)
{
	memset(&f->buf, 0, sizeof(f->buf));
	f->buf.st.key.nr_kernel = n;
	f->buf.st.key.tgid = tgid;
	memcpy(f->buf.st.frames, frames, n * sizeof(u64));
	return &f->buf.st;
}

/* Add on CPU @t with @hash; the drop reason, or -1 when counted (hit or new). */
static int addh_on(struct hs_table *t, struct hs_stack *st, u64 hash)
{
	int r = hs_table_add(t, st, hash, 1, true);

	return r < 0 ? -1 : r;
}

static int addh(struct fixture *f, struct hs_stack *st, u64 hash)
{
	return addh_on(f->a, st, hash);
}

/* Add with the real hash, on CPU @t / on CPU A. */
static int add_on(struct hs_table *t, struct hs_stack *st)
{
	return addh_on(t, st, hs_stack_hash(st, t->seed));
}

static int add(struct fixture *f, struct hs_stack *st)
{
	return add_on(f->a, st);
}

/* hs_table_add() with the real hash, on CPU @t: its result as it is. */
static int add_raw(struct hs_table *t, struct hs_stack *st)
{
	return hs_table_add(t, st, hs_stack_hash(st, t->seed), 1, true);
}

/* Samples of @st counted, on every CPU. */
static u64 count_of(struct fixture *f, struct hs_stack *st)
{
	long at = place_of(f->r, st);
	unsigned int c;
	u64 n = 0;

	for (c = 0; c < f->r->nr_cpus; c++)
		n += count_on(&f->r->cpu[c].t, at);
	return n;
}

/* Samples of @st counted on CPU @t. */
static u64 count_on_cpu(struct fixture *f, struct hs_table *t, const struct hs_stack *st)
{
	return count_on(t, place_of(f->r, st));
}

static u64 entries(const struct hs_table *t)
{
	return t->stats->entries;
}

static void counts_hits(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0x1000, 0x2000, 0x3000 };
	const u64 h = hs_hash_ready(42);

	assert_int_equal(hs_table_add(f->a, stack(f, a, 3, 0), h, 1, true), HS_COUNTED_NEW);
	assert_int_equal(hs_table_add(f->a, stack(f, a, 3, 0), h, 1, true), HS_COUNTED);
	rig_clear(f->r);

	assert_int_equal(add(f, stack(f, a, 3, 0)), -1);
	assert_int_equal(add(f, stack(f, a, 3, 0)), -1);
	assert_int_equal(add(f, stack(f, a, 3, 0)), -1);
	assert_int_equal(entries(f->a), 1);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(f->r->ss->arena_used, 3);
	assert_int_equal(count_of(f, stack(f, a, 3, 0)), 3);

	/* A sample counts the weight its caller read (3, then 5), not the table's. */
	rig_clear(f->r);
	f->a->weight = 7;
	assert_int_equal(hs_table_add(f->a, stack(f, a, 3, 0), h, 3, true), HS_COUNTED_NEW);
	assert_int_equal(hs_table_add(f->a, stack(f, a, 3, 0), h, 5, true), HS_COUNTED);
	assert_int_equal(count_of(f, stack(f, a, 3, 0)), 8);
}

static void never_merges_different_stacks(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0x1000, 0x2000, 0x3000 }, b[] = { 0x1000, 0x2000, 0x3001 };

	add(f, stack(f, a, 3, 0));
	add(f, stack(f, b, 3, 0));
	add(f, stack(f, a, 2, 0));	/* a prefix is another stack */
	add(f, stack(f, a, 3, 7));	/* same frames, other key */
	add_on(f->b, stack(f, b, 3, 9));	/* and on another CPU */
	assert_int_equal(entries(f->a), 4);
	assert_int_equal(entries(f->b), 1);
	assert_int_equal(f->r->ss->stacks, 5);
	assert_int_equal(count_of(f, stack(f, a, 3, 0)), 1);
	assert_int_equal(count_of(f, stack(f, b, 3, 0)), 1);
	assert_int_equal(count_of(f, stack(f, a, 2, 0)), 1);
	assert_int_equal(count_of(f, stack(f, a, 3, 7)), 1);
	assert_int_equal(count_of(f, stack(f, b, 3, 9)), 1);
}

/*
 * The compare looks at every frame, whatever the count (odd, even) and
 * wherever the one that differs is.
 */
static void compare_every_frame(void **state)
{
	struct fixture *f = *state;
	u64 a[9], b[9], ha;
	unsigned int n, j, i;

	for (n = 1; n <= 9; n++) {
		for (i = 0; i < n; i++)
			a[i] = 0xffffffff81000000ULL + 0x40 * i;
		rig_clear(f->r);
		ha = hs_stack_hash(stack(f, a, n, 0), SEED);
		assert_int_equal(add(f, stack(f, a, n, 0)), -1);
		assert_true(hs_stack_equal(&f->r->stacks[hs_index(f->r->s.shift, ha)], f->r->arena,
					   stack(f, a, n, 0), true));
		for (j = 0; j < n; j++) {
			memcpy(b, a, sizeof(a));
			b[j] ^= 1ULL << (j * 7 % 64);
			for (i = 0; i < PLACES; i++)
				if (f->r->stacks[i].hash)
					assert_false(hs_stack_equal(&f->r->stacks[i], f->r->arena,
								    stack(f, b, n, 0), true));
			/* Of the same hash (forced): a stack of its own, on either CPU. */
			assert_int_equal(addh_on(j % 2 ? f->b : f->a, stack(f, b, n, 0), ha), -1);
			assert_int_equal(count_of(f, stack(f, b, n, 0)), 1);
			assert_int_equal(count_of(f, stack(f, a, n, 0)), 1);
			rig_clear(f->r);
			assert_int_equal(add(f, stack(f, a, n, 0)), -1);
		}
	}
}

static void hash_collision_is_not_a_merge(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 1 }, b[] = { 2 };
	const u64 same = hs_hash_ready(0x1234);	/* forced: both stacks get one hash */

	assert_int_equal(addh(f, stack(f, a, 1, 0), same), -1);
	assert_int_equal(addh(f, stack(f, b, 1, 0), same), -1);
	assert_int_equal(addh(f, stack(f, b, 1, 0), same), -1);
	assert_int_equal(entries(f->a), 2);
	assert_int_equal(f->r->ss->stacks, 2);
	assert_int_equal(count_of(f, stack(f, a, 1, 0)), 1);
	assert_int_equal(count_of(f, stack(f, b, 1, 0)), 2);
	/* Another CPU finds each in the store by its frames, not the hash. */
	assert_int_equal(addh_on(f->b, stack(f, b, 1, 0), same), -1);
	assert_int_equal(f->r->ss->stacks, 2);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, b, 1, 0)), 1);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, a, 1, 0)), 0);
	assert_int_equal(count_of(f, stack(f, b, 1, 0)), 3);
}

/*
 * The store full: new stacks are dropped as table full on any CPU; the
 * stacks it holds are still counted, on a CPU that never counted them too.
 */
static void store_full(void **state)
{
	struct fixture *f = *state;
	u64 fr[1], first[] = { 1000 };
	unsigned int i, full = 0;
	struct rig *r = rig_new(16, ARENA, COUNTS, 2);

	assert_int_equal(r->s.max_used, 12);
	add_on(&r->cpu[0].t, stack(f, first, 1, 0));
	for (i = 0; i < 16; i++) {
		fr[0] = 5000 + i;
		full += add_on(&r->cpu[0].t, stack(f, fr, 1, 0)) == HOTSTACK_DROP_TABLE_FULL;
	}
	assert_int_equal(r->ss->stacks, r->s.max_used);
	assert_int_equal(r->cpu[0].stats.entries, r->s.max_used);
	assert_int_equal(full, 16 + 1 - r->s.max_used);
	/* Known stacks are still counted, on CPU A and on B. */
	assert_int_equal(add_on(&r->cpu[0].t, stack(f, first, 1, 0)), -1);
	assert_int_equal(add_on(&r->cpu[1].t, stack(f, first, 1, 0)), -1);
	assert_int_equal(count_on(&r->cpu[0].t, place_of(r, stack(f, first, 1, 0))), 2);
	assert_int_equal(count_on(&r->cpu[1].t, place_of(r, stack(f, first, 1, 0))), 1);
	/* A new one is not, on B either. */
	fr[0] = 4999;
	assert_int_equal(add_on(&r->cpu[1].t, stack(f, fr, 1, 0)), HOTSTACK_DROP_TABLE_FULL);
	assert_int_equal(r->ss->stacks, r->s.max_used);
	assert_int_equal(r->cpu[1].stats.entries, 1);
	check_rig(r);
	rig_free(r);
}

/*
 * A CPU's count table full: its new stacks are dropped as table full (and
 * take no place in the store); another CPU still counts them.
 */
static void cpu_table_full(void **state)
{
	struct fixture *f = *state;
	u64 fr[1], first[] = { 1000 };
	unsigned int i, full = 0;
	struct rig *r = rig_new(PLACES, ARENA, 16, 2);
	struct hs_table *a = &r->cpu[0].t, *b = &r->cpu[1].t;

	assert_int_equal(a->max_used, 12);
	add_on(a, stack(f, first, 1, 0));
	for (i = 0; i < 16; i++) {
		fr[0] = 5000 + i;
		full += add_on(a, stack(f, fr, 1, 0)) == HOTSTACK_DROP_TABLE_FULL;
	}
	assert_int_equal(r->cpu[0].stats.entries, a->max_used);
	assert_int_equal(full, 16 + 1 - a->max_used);
	assert_int_equal(r->ss->stacks, a->max_used);
	/* Known stacks are still counted. */
	assert_int_equal(add_on(a, stack(f, first, 1, 0)), -1);
	assert_int_equal(count_on(a, place_of(r, stack(f, first, 1, 0))), 2);
	/* CPU B counts the ones A dropped: stored now, once. */
	for (i = 16 - full; i < 16; i++) {
		fr[0] = 5000 + i;
		assert_int_equal(add_on(b, stack(f, fr, 1, 0)), -1);
		assert_int_equal(add_on(a, stack(f, fr, 1, 0)), HOTSTACK_DROP_TABLE_FULL);
	}
	assert_int_equal(r->ss->stacks, 16 + 1);
	assert_int_equal(r->cpu[1].stats.entries, full);
	check_rig(r);
	rig_free(r);
}

/*
 * Hashes of one start in the store (@store) or in the count table: past
 * HS_MAX_PROBES places (entries) they cannot be placed. The other table
 * is large enough to give each its own index.
 */
static void probe_limit_in(bool store)
{
	union {
		struct hs_stack st;
		u64 words[HS_KEY_WORDS + 1];
	} b;
	struct rig *r = store ? rig_new(256, 1024, 1 << 16, 1) : rig_new(1 << 16, 1024, 256, 1);
	struct hs_table *t = &r->cpu[0].t;
	unsigned int i;

	r->s.max_used = r->s.mask + 1;
	t->max_used = t->mask + 1;
	for (i = 0; i < 100; i++) {
		/* Index 7 in the table of 256, 7 << 8 | i in that of 65536. */
		u64 h = hs_hash_ready(7ULL << 56 | (u64)i << 48 | (u64)(i + 1) << 2);

		memset(&b, 0, sizeof(b));
		b.st.key.nr_kernel = 1;
		b.st.frames[0] = i;
		assert_int_equal(addh_on(t, &b.st, h), i < HS_MAX_PROBES ? -1 : HOTSTACK_DROP_TABLE_FULL);
	}
	assert_int_equal(r->ss->stacks, HS_MAX_PROBES);
	assert_int_equal(t->stats->entries, HS_MAX_PROBES);
	check_rig(r);
	rig_free(r);
}

static void probe_limit(void **state)
{
	(void)state;
	probe_limit_in(true);
	probe_limit_in(false);
}

/*
 * Stacks of one hash: HS_MAX_COLLISIONS of them have entries (and are
 * counted again), the next is a collision, whatever room is left: in a
 * CPU's count table, and in the store for a CPU that counted none.
 */
static void collisions_bounded(void **state)
{
	struct fixture *f = *state;
	const u64 h = hs_hash_ready(0x4242), h2 = hs_hash_ready(0x4246);
	u64 fr[1];
	unsigned int i;

	for (i = 0; i <= HS_MAX_COLLISIONS; i++) {
		fr[0] = 100 + i;
		assert_int_equal(addh(f, stack(f, fr, 1, 0), h),
				 i < HS_MAX_COLLISIONS ? -1 : HOTSTACK_DROP_COLLISION);
	}
	assert_int_equal(entries(f->a), HS_MAX_COLLISIONS);
	assert_int_equal(f->r->ss->stacks, HS_MAX_COLLISIONS);
	fr[0] = 100 + HS_MAX_COLLISIONS - 1;
	assert_int_equal(addh(f, stack(f, fr, 1, 0), h), -1);
	assert_int_equal(count_of(f, stack(f, fr, 1, 0)), 2);
	/* Another hash on the same probe sequence still finds room. */
	assert_int_equal(hs_index(f->a->shift, h2), hs_index(f->a->shift, h));
	fr[0] = 999;
	assert_int_equal(addh(f, stack(f, fr, 1, 0), h2), -1);
	/* CPU B: the store's compares are bounded as well. */
	fr[0] = 100 + HS_MAX_COLLISIONS;
	assert_int_equal(addh_on(f->b, stack(f, fr, 1, 0), h), HOTSTACK_DROP_COLLISION);
	assert_int_equal(entries(f->b), 0);
	fr[0] = 100 + HS_MAX_COLLISIONS - 1;
	assert_int_equal(addh_on(f->b, stack(f, fr, 1, 0), h), -1);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, fr, 1, 0)), 1);
	assert_int_equal(count_of(f, stack(f, fr, 1, 0)), 3);
	assert_int_equal(f->r->ss->stacks, HS_MAX_COLLISIONS + 1);
}

/*
 * The arena full: a new stack whose frames do not fit is dropped and
 * takes no place (a CPU alone checks before it claims one); the stacks
 * stored are still counted, on any CPU; a smaller one still fits.
 */
static void arena_full(void **state)
{
	struct fixture *f = *state;
	u64 fr[MAXF];
	unsigned int i, n = 0;

	for (i = 0; i < MAXF; i++)
		fr[i] = 0x100 + i;
	for (i = 0; i < ARENA / MAXF; i++) {
		fr[0] = i;
		assert_int_equal(add(f, stack(f, fr, MAXF, 0)), -1);
		n += MAXF;
	}
	fr[0] = 9999;
	assert_int_equal(add(f, stack(f, fr, MAXF, 0)), HOTSTACK_DROP_ARENA_FULL);
	assert_int_equal(add_on(f->b, stack(f, fr, MAXF, 0)), HOTSTACK_DROP_ARENA_FULL);
	assert_int_equal(f->r->ss->arena_used, n);
	assert_int_equal(f->r->ss->stacks, ARENA / MAXF);
	assert_int_equal(places_in(f->r, HOTSTACK_STACK_DEAD), 0);
	fr[0] = 0;
	assert_int_equal(add(f, stack(f, fr, MAXF, 0)), -1);
	assert_int_equal(add_on(f->b, stack(f, fr, MAXF, 0)), -1);
	assert_int_equal(count_of(f, stack(f, fr, MAXF, 0)), 3);
	/* No frames: fits in a full arena. */
	assert_int_equal(add(f, stack(f, fr, 0, 0)), -1);
	assert_int_equal(f->r->ss->stacks, ARENA / MAXF + 1);
}

/*
 * Claim a place for a stack of hash @hash as hs_store_add() does once its
 * frames fit: one of the places that may be taken reserved, the first
 * free place of its probe sequence made FILLING.
 */
static struct hotstack_stack *claim(struct rig *r, u64 hash)
{
	u32 i = hs_index(r->s.shift, hash);
	u64 zero = 0;

	while (r->stacks[i].hash)
		i = (i + 1) & r->s.mask;
	assert_true(atomic64_add_unless((atomic64_t *)&r->ss->stacks, 1, r->s.max_used));
	assert_true(try_cmpxchg(&r->stacks[i].hash, &zero,
				hash ^ HOTSTACK_STACK_READY ^ HOTSTACK_STACK_FILLING));
	return &r->stacks[i];
}

/*
 * CPU A finds room for a stack's frames and claims a place; CPU B's new
 * stack takes that room before A claims its frames: A's sample is dropped
 * (arena full), its place is left DEAD, passed over (never a collision),
 * and later stacks of its probe sequence and hash still store fine, the
 * stack itself too once there is room (once: one READY place).
 */
static void arena_full_leaves_place_dead(void **state)
{
	struct fixture *f = *state;
	u64 fr[MAXF], s_hash, dead_hash;
	struct hotstack_stack *e;
	unsigned int i;
	long at;
	s64 used;

	/* Half the arena, for now: grown below (a test's shortcut to room). */
	f->r->s.arena_frames = ARENA / 2;
	for (i = 0; i < MAXF; i++)
		fr[i] = 0x100 + i;
	for (i = 0; i < ARENA / 2 / MAXF - 1; i++) {
		fr[0] = i;
		assert_int_equal(add(f, stack(f, fr, MAXF, 0)), -1);
	}
	/* MAXF frames free: A's checks pass, and it claims a place. */
	fr[0] = 5555;
	s_hash = hs_stack_hash(stack(f, fr, MAXF, 0), SEED);
	e = claim(f->r, s_hash);
	used = f->r->ss->arena_used;
	assert_int_equal(f->r->ss->stacks, ARENA / 2 / MAXF);
	/* B stores a stack of 8 frames meanwhile. */
	fr[0] = 6666;
	assert_int_equal(add_on(f->b, stack(f, fr, 8, 0)), -1);
	assert_int_equal(f->r->ss->arena_used, ARENA / 2 - MAXF + 8);
	/* A's frames find no room now (its claim fails on B's, then the room). */
	fr[0] = 5555;
	assert_int_equal(hs_store_fill(&f->r->s, e - f->r->stacks, stack(f, fr, MAXF, 0), s_hash,
				       used),
			 ~(s64)HOTSTACK_DROP_ARENA_FULL);
	dead_hash = (s_hash & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_DEAD;
	assert_int_equal(e->hash, dead_hash);
	assert_int_equal(places_in(f->r, HOTSTACK_STACK_DEAD), 1);
	assert_int_equal(f->r->ss->stacks, ARENA / 2 / MAXF + 1);
	assert_int_equal(f->r->ss->arena_used, ARENA / 2 - MAXF + 8);
	/* The stack again, on A or B: still no room, no other place taken. */
	assert_int_equal(add(f, stack(f, fr, MAXF, 0)), HOTSTACK_DROP_ARENA_FULL);
	assert_int_equal(add_on(f->b, stack(f, fr, MAXF, 0)), HOTSTACK_DROP_ARENA_FULL);
	assert_int_equal(f->r->ss->stacks, ARENA / 2 / MAXF + 1);
	/* Other stacks of its hash (forced) that fit: past the DEAD place. */
	for (i = 0; i < HS_MAX_COLLISIONS - 1; i++) {
		fr[0] = 7777 + i;
		assert_int_equal(addh_on(i % 2 ? f->b : f->a, stack(f, fr, 2, 0), s_hash), -1);
		at = place_of(f->r, stack(f, fr, 2, 0));
		assert_true(at >= 0);
		assert_int_not_equal(at, e - f->r->stacks);
	}
	assert_int_equal(f->r->ss->stacks, ARENA / 2 / MAXF + HS_MAX_COLLISIONS);
	/*
	 * With room, the stack is stored: HS_MAX_COLLISIONS - 1 stacks of its
	 * hash compared, the DEAD one not counted as one more. Then found.
	 */
	f->r->s.arena_frames = ARENA;
	fr[0] = 5555;
	assert_int_equal(add_on(f->b, stack(f, fr, MAXF, 0)), -1);
	assert_int_equal(add(f, stack(f, fr, MAXF, 0)), -1);
	at = place_of(f->r, stack(f, fr, MAXF, 0));
	assert_true(at >= 0);
	assert_int_not_equal(at, e - f->r->stacks);
	assert_int_equal(count_of(f, stack(f, fr, MAXF, 0)), 2);
	assert_int_equal(e->hash, dead_hash);
	assert_int_equal(places_in(f->r, HOTSTACK_STACK_DEAD), 1);
	assert_int_equal(f->r->ss->stacks, ARENA / 2 / MAXF + HS_MAX_COLLISIONS + 1);
}

/*
 * Another CPU filling a place with a stack's hash: a CPU that looks for
 * that stack waits for it, a bounded time (HS_FILL_WAIT_NS), and drops
 * the sample (busy) rather than pass it and store the stack a second
 * time; a stack of another hash passes over it. Once the place is READY,
 * it is found.
 */
static void busy_while_another_cpu_fills(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0x1000, 0x2000 }, b[] = { 0x3000 }, h, t0, waited;
	struct hotstack_stack *e;

	h = hs_stack_hash(stack(f, a, 2, 0), SEED);
	e = claim(f->r, h);
	t0 = local_clock();
	assert_int_equal(add_on(f->b, stack(f, a, 2, 0)), HOTSTACK_DROP_BUSY);
	waited = local_clock() - t0;
	assert_true(waited >= HS_FILL_WAIT_NS);
	/* Bounded: under a second, on a host as loaded as a cold make check's. */
	assert_true(waited < 1000 * 1000 * 1000);
	assert_int_equal(entries(f->b), 0);
	/* Another stack of that hash (forced) must wait as well. */
	assert_int_equal(addh_on(f->b, stack(f, b, 1, 0), h), HOTSTACK_DROP_BUSY);
	assert_int_equal(add_on(f->b, stack(f, b, 1, 0)), -1);
	assert_int_equal(f->r->ss->stacks, 2);
	/* CPU A completes it. */
	assert_int_equal(hs_store_fill(&f->r->s, e - f->r->stacks, stack(f, a, 2, 0), h,
				       f->r->ss->arena_used), e - f->r->stacks);
	assert_int_equal(e->hash, h);
	assert_int_equal(add_on(f->b, stack(f, a, 2, 0)), -1);
	assert_int_equal(place_of(f->r, stack(f, a, 2, 0)), e - f->r->stacks);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, a, 2, 0)), 1);
	assert_int_equal(f->r->ss->stacks, 2);
	assert_int_equal(f->r->ss->arena_used, 3);
}

static void clear_empties(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 1, 2 };

	add(f, stack(f, a, 2, 0));
	add_on(f->b, stack(f, a, 2, 0));
	f->r->cpu[0].stats.samples = 5;
	f->r->cpu[1].stats.samples = 5;
	f->a->interrupts = 3;
	rig_clear(f->r);
	assert_int_equal(entries(f->a), 0);
	assert_int_equal(entries(f->b), 0);
	assert_int_equal(f->r->cpu[0].stats.samples, 0);
	assert_int_equal(f->r->cpu[1].stats.samples, 0);
	assert_int_equal(f->a->interrupts, 0);
	assert_int_equal(f->r->ss->stacks, 0);
	assert_int_equal(f->r->ss->arena_used, 0);
	assert_int_equal(places_in(f->r, 0), PLACES);
	assert_int_equal(count_of(f, stack(f, a, 2, 0)), 0);
	assert_int_equal(add_raw(f->a, stack(f, a, 2, 0)), HS_COUNTED_NEW);
	assert_int_equal(add_raw(f->b, stack(f, a, 2, 0)), HS_COUNTED_NEW);
	assert_int_equal(count_of(f, stack(f, a, 2, 0)), 2);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(f->r->ss->arena_used, 2);
}

static void hash_properties(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 1, 2, 3 }, h1, h2, x;
	unsigned int i;

	h1 = hs_stack_hash(stack(f, a, 3, 0), SEED);
	h2 = hs_stack_hash(stack(f, a, 3, 0), SEED);
	assert_int_equal(h1, h2);
	assert_int_not_equal(h1, 0);
	assert_int_not_equal(h1, hs_stack_hash(stack(f, a, 2, 0), SEED));
	assert_int_not_equal(h1, hs_stack_hash(stack(f, a, 3, 1), SEED));
	/* Another configuration's seed: another hash for the same stack. */
	assert_int_not_equal(h1, hs_stack_hash(stack(f, a, 3, 0), SEED + 1));
	h1 = hs_stack_hash(stack(f, a, 3, 1), SEED);
	memcpy(f->buf.st.key.comm, "bash", 5);
	assert_int_not_equal(hs_stack_hash(&f->buf.st, SEED), h1);
	/* A hash is READY in its low bits (so never 0, FILLING or DEAD), the IP path's too. */
	for (i = 0; i < 1000; i++) {
		a[0] = i;
		h1 = hs_stack_hash(stack(f, a, i % 4, i % 3), SEED);
		assert_int_equal(h1 & HOTSTACK_STACK_STATE, HOTSTACK_STACK_READY);
		assert_int_equal(hs_hash_ready(h1), h1);
		h2 = hs_ip_hash(hs_ip_hash_key(i, SEED), i % 2, 0xffffffff81000000ULL + i);
		assert_int_equal(h2 & HOTSTACK_STACK_STATE, HOTSTACK_STACK_READY);
	}
	/* hs_hash_ready() keeps the other bits. */
	for (x = 0; x < 8; x++)
		assert_int_equal(hs_hash_ready(0xabcdef0000000000ULL | x),
				 0xabcdef0000000000ULL | (x & ~HOTSTACK_STACK_STATE) |
				 HOTSTACK_STACK_READY);
}

/*
 * What make bench's worst case (tests/bench/hs_bench.c: collide) builds
 * on: bit 63 of a frame and bit 30 of the next flipped together give the
 * same hash, whatever the seed. Change that bench with the hash.
 */
static void hash_alike_whatever_the_seed(void **state)
{
	struct fixture *f = *state;
	u64 a[4] = { 0x401000, 0x401010, 0x401020, 0x401030 }, b[4], seed;

	memcpy(b, a, sizeof(a));
	b[1] ^= 1ULL << 63;
	b[2] ^= 1ULL << 30;
	for (seed = 1; seed < 1000; seed += 37)
		assert_int_equal(hs_stack_hash(stack(f, a, 4, 0), seed),
				 hs_stack_hash(stack(f, b, 4, 0), seed));
}

/*
 * The sampler's hash in steps (hs_hash_start(), a round a frame as the
 * walk keeps it, hs_hash_end()) is hs_stack_hash(), with a comm or not.
 */
static void hash_in_steps(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL, 0x401000 }, h, whole;
	struct hs_stack *st = stack(f, a, 3, 42);
	unsigned int i, comm;

	for (comm = 0; comm < 2; comm++) {
		if (comm)
			memcpy(st->key.comm, "bash", 5);
		st->key.nr_kernel = 2;
		st->key.nr_user = 1;
		st->key.flags = HOTSTACK_ENTRY_TRUNCATED;
		h = hs_hash_start(&st->key, SEED);
		for (i = 0; i < 3; i++)
			h = hs_mix_frame(h, a[i]);
		whole = hs_stack_hash(st, SEED);
		assert_int_equal(hs_hash_end(h, &st->key), whole);
		/* The key's first word counts: another split, another hash. */
		st->key.nr_kernel = 1;
		st->key.nr_user = 2;
		assert_int_not_equal(hs_hash_end(h, &st->key), whole);
	}
	/* Without tgid and comm the start is the table's hash0 (made once). */
	st = stack(f, a, 3, 0);
	h = f->a->hash0;
	for (i = 0; i < 3; i++)
		h = hs_mix_frame(h, a[i]);
	assert_int_equal(hs_hash_end(h, &st->key), hs_stack_hash(st, SEED));
}

/* A session without keys compares a key's first word and the frames alone. */
static void keyless_table(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0x1000, 0x2000, 0x3000 };
	struct hs_stack *st = stack(f, a, 3, 0);
	u64 h = hs_stack_hash(st, SEED);

	assert_int_equal(hs_table_add(f->a, st, h, 1, false), HS_COUNTED_NEW);
	assert_int_equal(hs_table_add(f->a, st, h, 1, false), HS_COUNTED);
	assert_int_equal(hs_table_add(f->b, st, h, 1, false), HS_COUNTED_NEW);
	/* The same frames cut (another flag), on the same hash: another entry. */
	st->key.flags = HOTSTACK_ENTRY_TRUNCATED;
	assert_int_equal(hs_table_add(f->a, st, h, 1, false), HS_COUNTED_NEW);
	st = stack(f, a, 2, 0);
	assert_int_equal(hs_table_add(f->a, st, h, 1, false), HS_COUNTED_NEW);
	assert_int_equal(entries(f->a), 3);
	assert_int_equal(f->r->ss->stacks, 3);
	assert_int_equal(count_of(f, stack(f, a, 3, 0)), 3);
}

/*
 * The IP-only path (its own hash: such a session counts every sample by
 * it) makes the stack the general path would, and counts on it.
 */
static void ip_path_is_the_general_path(void **state)
{
	struct fixture *f = *state;
	u64 ip[] = { 0xffffffff81234567ULL }, key0, hk;
	struct hs_stack *st = stack(f, ip, 1, 0);
	/* The sampler's walk buffer, whatever an earlier stack left in it. */
	union {
		struct hs_stack st;
		u64 w[HS_KEY_WORDS + 1];
	} buf;
	struct hs_stack *b = &buf.st;
	long at;

	memset(&buf, 0xa5, sizeof(buf));
	st->key.flags = HOTSTACK_ENTRY_TRUNCATED;
	memcpy(&key0, &st->key, sizeof(key0));
	hk = hs_ip_hash_key(key0, SEED);
	assert_int_not_equal(hs_ip_hash(hk, 1, ip[0]), 0);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 1, ip[0], hs_ip_hash(hk, 1, ip[0]), 1),
			 HS_COUNTED_NEW);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 1, ip[0], hs_ip_hash(hk, 1, ip[0]), 1),
			 HS_COUNTED);
	assert_int_equal(entries(f->a), 1);
	/* Found by the general path's comparison: every field the same. */
	assert_int_equal(count_of(f, st), 2);
	at = place_of(f->r, st);
	assert_int_equal(f->r->stacks[at].hash, hs_ip_hash(hk, 1, ip[0]));
	assert_int_equal(f->r->arena[f->r->stacks[at].frames], ip[0]);
	/* On another CPU: found in the store, not stored again. */
	assert_int_equal(hs_table_add_ip(f->b, b, key0, 1, ip[0], hs_ip_hash(hk, 1, ip[0]), 1),
			 HS_COUNTED_NEW);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(count_on_cpu(f, f->b, st), 1);
	/* Another IP, and a frameless [user] sample: entries of their own. */
	assert_int_not_equal(hs_ip_hash(hk, 1, ip[0] + 1), hs_ip_hash(hk, 1, ip[0]));
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 1, ip[0] + 1,
					 hs_ip_hash(hk, 1, ip[0] + 1), 1), HS_COUNTED_NEW);
	st = stack(f, ip, 0, 0);
	st->key.flags = HOTSTACK_ENTRY_USER_MODE;
	memcpy(&key0, &st->key, sizeof(key0));
	hk = hs_ip_hash_key(key0, SEED);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 0, 0, hs_ip_hash(hk, 0, 0), 1),
			 HS_COUNTED_NEW);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 0, 0, hs_ip_hash(hk, 0, 0), 1),
			 HS_COUNTED);
	assert_int_equal(count_of(f, st), 2);
	assert_int_equal(entries(f->a), 3);
	assert_int_equal(f->r->ss->stacks, 3);
	assert_int_equal(f->r->ss->arena_used, 2);
	/* Weighted as the general path: the caller's weight, 4 then 6. */
	rig_clear(f->r);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 0, 0, hs_ip_hash(hk, 0, 0), 4),
			 HS_COUNTED_NEW);
	assert_int_equal(hs_table_add_ip(f->a, b, key0, 0, 0, hs_ip_hash(hk, 0, 0), 6),
			 HS_COUNTED);
	assert_int_equal(count_of(f, st), 10);
}

/*
 * A stack with no frames (0 of them) takes no arena word: it is stored
 * and counted, apart from another empty one of another key, even when
 * the arena is full.
 */
static void empty_stack_stored_and_counted(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 1, 2 };

	assert_int_equal(add_raw(f->a, stack(f, a, 0, 7)), HS_COUNTED_NEW);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(f->r->ss->arena_used, 0);
	assert_int_equal(add_raw(f->a, stack(f, a, 0, 7)), HS_COUNTED);
	assert_int_equal(add(f, stack(f, a, 2, 0)), -1);
	assert_int_equal(f->r->ss->arena_used, 2);
	assert_int_equal(add_on(f->b, stack(f, a, 0, 7)), -1);
	assert_int_equal(f->r->ss->stacks, 2);
	assert_int_equal(count_of(f, stack(f, a, 0, 7)), 3);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, a, 0, 7)), 1);
	/* The arena full: empty stacks still fit, not a frame more. */
	f->r->s.arena_frames = f->r->ss->arena_used;
	assert_int_equal(add(f, stack(f, a, 0, 8)), -1);
	assert_int_equal(add(f, stack(f, a, 0, 8)), -1);
	assert_int_equal(add(f, stack(f, a, 1, 9)), HOTSTACK_DROP_ARENA_FULL);
	assert_int_equal(count_of(f, stack(f, a, 0, 8)), 2);
	assert_int_equal(count_of(f, stack(f, a, 0, 7)), 3);
	assert_int_equal(f->r->ss->stacks, 3);
	assert_int_equal(f->r->ss->arena_used, 2);
}

/* Random stacks on random CPUs against a model: every count exact, nothing merged. */
static void random_against_model(void **state)
{
	struct fixture *f = *state;
	enum { POOL = 40 };
	u64 pool[POOL][4], fr[4], model[2][POOL] = { { 0 } };
	unsigned int i, k, n, c;

	srand(1);
	for (k = 0; k < POOL; k++)
		for (i = 0; i < 4; i++)
			pool[k][i] = (u64)(rand() % 3) << 12 | (i & k);
	/* 40 stacks of at most 4 frames fit (48 places, 256 frames): all counted. */
	for (i = 0; i < 5000; i++) {
		k = rand() % POOL;
		c = rand() % 2;
		n = 1 + k % 4;
		memcpy(fr, pool[k], sizeof(fr));
		assert_int_equal(add_on(c ? f->b : f->a, stack(f, fr, n, k % 3)), -1);
		model[c][k]++;
	}
	/* Pool members that are equal stacks share a count: compare by content. */
	for (k = 0; k < POOL; k++) {
		u64 want[2] = { 0, 0 };
		unsigned int j;

		for (j = 0; j < POOL; j++)
			if (j % 4 == k % 4 && j % 3 == k % 3 &&
			    !memcmp(pool[j], pool[k], (1 + k % 4) * sizeof(u64))) {
				want[0] += model[0][j];
				want[1] += model[1][j];
			}
		memcpy(fr, pool[k], sizeof(fr));
		assert_int_equal(count_on_cpu(f, f->a, stack(f, fr, 1 + k % 4, k % 3)), want[0]);
		assert_int_equal(count_on_cpu(f, f->b, stack(f, fr, 1 + k % 4, k % 3)), want[1]);
	}
}

/*
 * The index is the hash's top bits, with no final avalanche: stacks that
 * differ only in the low bits of one frame (the usual case: return
 * addresses a few bytes apart) must still spread over the table. A 4096-
 * place store (and a 4096-entry count table) filled to its limit: nothing
 * dropped, and the mean probe distance near linear probing's with a
 * uniform hash (2.5 at 3/4 load), in both.
 */
static void index_spreads_near_frames(void **state)
{
	enum { N = 4096, USED = N / 4 * 3, DEPTH = 6 };
	struct rig *r = rig_new(N, USED * DEPTH, N, 1);
	struct hs_table *t = &r->cpu[0].t;
	u64 fr[DEPTH], dist = 0, cdist = 0;
	unsigned int k, i, used = 0, cused = 0;

	(void)state;
	for (k = 0; k < USED; k++) {
		union {
			struct hs_stack st;
			u64 words[HS_KEY_WORDS + DEPTH];
		} b = { };

		for (i = 0; i < DEPTH; i++)
			fr[i] = 0xffffffff81000000ULL + 0x1000 * i;
		/* Half differ in the leaf by 16 bytes, half in a middle frame by 8. */
		if (k % 2)
			fr[0] += 16 * (k / 2 + 1);
		else
			fr[3] += 8 * (k / 2);
		b.st.key.nr_kernel = DEPTH;
		memcpy(b.st.frames, fr, sizeof(fr));
		assert_true(hs_table_add(t, &b.st, hs_stack_hash(&b.st, SEED), 1, true) < 0);
	}
	for (i = 0; i < N; i++) {
		if (r->stacks[i].hash) {
			used++;
			dist += (i - hs_index(r->s.shift, r->stacks[i].hash)) & r->s.mask;
		}
		if (t->counts[i].stack) {
			cused++;
			cdist += (i - hs_index(t->shift,
					       r->stacks[t->counts[i].stack - 1].hash)) & t->mask;
		}
	}
	assert_int_equal(used, USED);
	assert_int_equal(cused, USED);
	print_message("mean probe distance %.2f in the store, %.2f in the count table, over %u\n",
		      (double)dist / used, (double)cdist / cused, used);
	assert_true(dist < 4ULL * used);
	assert_true(cdist < 4ULL * cused);
	check_rig(r);
	rig_free(r);
}

/*
 * Two CPUs count one stack: it is stored once (one READY place, the
 * store's count 1, its frames once in the arena), and each CPU has its
 * own count entry naming that place, with its own count.
 */
static void two_cpus_one_stack_stored_once(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL, 0x401000 }, h;
	long at;
	unsigned int i;

	h = hs_stack_hash(stack(f, a, 3, 42), SEED);
	assert_int_equal(hs_table_add(f->a, &f->buf.st, h, 1, true), HS_COUNTED_NEW);
	assert_int_equal(hs_table_add(f->b, &f->buf.st, h, 1, true), HS_COUNTED_NEW);
	assert_int_equal(hs_table_add(f->a, &f->buf.st, h, 1, true), HS_COUNTED);
	assert_int_equal(hs_table_add(f->b, &f->buf.st, h, 1, true), HS_COUNTED);
	assert_int_equal(hs_table_add(f->b, &f->buf.st, h, 1, true), HS_COUNTED);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(places_in(f->r, HOTSTACK_STACK_READY), 1);
	assert_int_equal(f->r->ss->arena_used, 3);
	assert_int_equal(entries(f->a), 1);
	assert_int_equal(entries(f->b), 1);
	at = place_of(f->r, &f->buf.st);
	assert_true(at >= 0);
	assert_int_equal(f->r->stacks[at].hash, h);
	assert_int_equal(count_on(f->a, at), 2);
	assert_int_equal(count_on(f->b, at), 3);
	for (i = 0; i < COUNTS; i++)
		if (f->a->counts[i].stack)
			assert_int_equal(f->a->counts[i].stack, at + 1);
}

/*
 * A stack CPU A stored is found by CPU B, not stored again: no place,
 * no frames taken, and found so even when the store or the arena is full.
 */
static void found_on_another_cpu(void **state)
{
	struct fixture *f = *state;
	u64 a[] = { 0x1000, 0x2000, 0x3000, 0x4000 }, fr[1];
	unsigned int i;

	assert_int_equal(add(f, stack(f, a, 4, 0)), -1);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(f->r->ss->arena_used, 4);
	assert_int_equal(add_on(f->b, stack(f, a, 4, 0)), -1);
	assert_int_equal(f->r->ss->stacks, 1);
	assert_int_equal(f->r->ss->arena_used, 4);
	assert_int_equal(count_on_cpu(f, f->a, stack(f, a, 4, 0)), 1);
	assert_int_equal(count_on_cpu(f, f->b, stack(f, a, 4, 0)), 1);
	/* The store full (by A): B still counts what A stored. */
	for (i = 0; f->r->ss->stacks < f->r->s.max_used; i++) {
		fr[0] = 0x9000 + i;
		assert_int_equal(add(f, stack(f, fr, 1, 0)), -1);
	}
	fr[0] = 0x8fff;
	assert_int_equal(add_on(f->b, stack(f, fr, 1, 0)), HOTSTACK_DROP_TABLE_FULL);
	fr[0] = 0x9000;
	assert_int_equal(add_on(f->b, stack(f, fr, 1, 0)), -1);
	/* The arena full too. */
	f->r->s.arena_frames = f->r->ss->arena_used;
	fr[0] = 0x9001;
	assert_int_equal(add_on(f->b, stack(f, fr, 1, 0)), -1);
	assert_int_equal(count_of(f, stack(f, fr, 1, 0)), 2);
	assert_int_equal(f->r->ss->stacks, f->r->s.max_used);
	assert_int_equal(entries(f->b), 3);
}

/*
 * A race, played exactly: CPU A looks for a new stack S and finds the
 * free place that ends its probe sequence; before A reads the store's
 * counters (its checks that S fits), CPU B stores S there, taking the
 * arena's last frames (or the store's last place). A must then find S in
 * that place (a count entry of its own), not drop the sample as arena
 * (table) full: S is stored. The store's counters are on a page of their
 * own, made inaccessible: A's first read of them faults, and the handler
 * is CPU B (then opens the page; A's read runs again).
 */
static struct {
	char *page;
	size_t size;
	struct hs_table *b;
	const struct hs_stack *st;
	u64 hash;
	int result;		/* B's */
	bool done;
} race;

static void race_segv(int sig, siginfo_t *si, void *uc)
{
	char *at = si->si_addr;

	(void)uc;
	if (race.done || at < race.page || at >= race.page + race.size) {
		/* Not ours: fault again, as without this handler. */
		signal(sig, SIG_DFL);
		return;
	}
	race.done = true;
	if (mprotect(race.page, race.size, PROT_READ | PROT_WRITE))
		abort();
	race.result = hs_table_add(race.b, race.st, race.hash, 1, true);
}

/* A's result for S of @nr frames, the store at its limit (@table) or the arena. */
static int race_play(struct fixture *f, bool table, unsigned int nr)
{
	struct hotstack_store_stats *ss;
	struct sigaction sa = { }, old;
	u64 fr[MAXF];
	unsigned int i;
	int r;

	race.size = sysconf(_SC_PAGESIZE);
	race.page = mmap(NULL, race.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	assert_true(race.page != MAP_FAILED);
	ss = (struct hotstack_store_stats *)race.page;
	f->r->ss = ss;
	f->r->s.stats = ss;
	/* On B: the store one place short of its limit, or the arena nr frames short. */
	for (i = 0; i < MAXF; i++)
		fr[i] = 0x100 + i;
	for (i = 0; table ? ss->stacks < f->r->s.max_used - 1 :
		    ss->arena_used + MAXF <= ARENA - nr; i++) {
		fr[0] = i;
		assert_int_equal(add_on(f->b, stack(f, fr, table ? 1 : MAXF, 0)), -1);
	}
	if (!table && ss->arena_used < ARENA - nr) {
		fr[0] = 999;
		assert_int_equal(add_on(f->b, stack(f, fr, ARENA - nr - ss->arena_used, 0)), -1);
	}
	assert_int_equal(table ? ss->stacks : ss->arena_used,
			 table ? f->r->s.max_used - 1 : ARENA - nr);
	fr[0] = 0x5555;
	race.st = stack(f, fr, nr, 0);
	race.hash = hs_stack_hash(race.st, SEED);
	race.b = f->b;
	race.done = false;
	sa.sa_sigaction = race_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(race.page, race.size, PROT_NONE), 0);
	r = hs_table_add(f->a, race.st, race.hash, 1, true);
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	/* B stored S, once, in the place A had found free. */
	assert_true(race.done);
	assert_int_equal(race.result, HS_COUNTED_NEW);
	assert_true(place_of(f->r, race.st) >= 0);
	assert_int_equal(count_on_cpu(f, f->b, race.st), 1);
	f->r->sstats = *ss;
	f->r->ss = &f->r->sstats;
	f->r->s.stats = f->r->ss;
	munmap(race.page, race.size);
	return r;
}

static void store_full_race(void **state)
{
	struct fixture *f = *state;
	int r = race_play(f, true, 1);

	assert_int_equal(r, HS_COUNTED_NEW);
	assert_int_equal(count_on_cpu(f, f->a, &f->buf.st), 1);
	assert_int_equal(f->r->ss->stacks, f->r->s.max_used);
}

static void arena_full_race(void **state)
{
	struct fixture *f = *state;
	int r = race_play(f, false, 4);

	assert_int_equal(r, HS_COUNTED_NEW);
	assert_int_equal(count_on_cpu(f, f->a, &f->buf.st), 1);
	assert_int_equal(f->r->ss->arena_used, ARENA);
}

/*
 * Concurrency: threads, each its own count table (a CPU), on one store,
 * add one set of distinct stacks (some of one hash: forced), in orders of
 * their own (some threads alike: racing for the same stack at once),
 * started together, in many generations (the store cleared between).
 * Then, whatever the interleaving: every stack stored at most once (once
 * when nothing stopped it), each count exact: the samples added less the
 * ones dropped, every drop accounted for.
 */
#define CONC_THREADS	8
#define CONC_STACKS	2000
#define CONC_DEPTH	8
#define CONC_PASSES	2	/* times each thread adds each stack in a generation */
#ifndef CONC_GENS
#define CONC_GENS	40
#endif

struct conc {
	struct rig *r;
	u64 (*st)[HS_KEY_WORDS + CONC_DEPTH];	/* the stacks */
	u64 *hash;
	pthread_barrier_t start;
	unsigned int gen;
};

struct worker {
	pthread_t thread;
	struct conc *c;
	unsigned int id;
	u32 order[CONC_STACKS];
	u64 added, news, hits;
	u64 drops[HOTSTACK_DROP_MAX];
	u32 dropped[CONC_STACKS];	/* per stack, any reason */
	u32 newk[CONC_STACKS];		/* per stack, HS_COUNTED_NEW */
	int odd;			/* a result that is none of those */
};

static struct hs_stack *conc_stack(const struct conc *c, unsigned int k)
{
	return (struct hs_stack *)c->st[k];
}

/* Stack @k: distinct from every other (its first frame, or its tgid when empty). */
static void conc_make(struct conc *c)
{
	unsigned int k, j;

	for (k = 0; k < CONC_STACKS; k++) {
		struct hs_stack *st = conc_stack(c, k);
		unsigned int nr = k % 97 == 1 ? 0 : 1 + k % CONC_DEPTH;

		memset(st, 0, sizeof(c->st[k]));
		st->key.nr_kernel = nr > 2 ? 2 : nr;
		st->key.nr_user = nr - st->key.nr_kernel;
		st->key.tgid = k % 97 == 1 ? 100000 + k : k / 4;
		if (k % 5 == 0)
			memcpy(st->key.comm, "worker", 7);
		for (j = 0; j < nr; j++)
			st->frames[j] = 0xffffffff81000000ULL + 0x10 * k + 0x100000 * j;
		/* Groups of 3 of one hash (HS_MAX_COLLISIONS is 4: never a collision). */
		if (k % 50 == 1 || k % 50 == 2)
			c->hash[k] = c->hash[k - k % 50];
		else
			c->hash[k] = hs_stack_hash(st, SEED);
	}
}

static u32 xorshift(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void *conc_worker(void *arg)
{
	struct worker *w = arg;
	struct conc *c = w->c;
	struct hs_table *t = &c->r->cpu[w->id].t;
	u32 seed = 0x9e3779b9u * (c->gen * 3 + w->id % 3 + 1), i, j, p;

	/* Threads id % 3 alike share an order; 0, 3, 6 go in increasing order. */
	for (i = 0; i < CONC_STACKS; i++)
		w->order[i] = i;
	if (w->id % 3)
		for (i = CONC_STACKS - 1; i > 0; i--) {
			u32 tmp;

			j = xorshift(&seed) % (i + 1);
			tmp = w->order[i];
			w->order[i] = w->order[j];
			w->order[j] = tmp;
		}
	pthread_barrier_wait(&c->start);
	for (p = 0; p < CONC_PASSES; p++)
		for (i = 0; i < CONC_STACKS; i++) {
			u32 k = w->order[(i + p * 7) % CONC_STACKS];
			int r = hs_table_add(t, conc_stack(c, k), c->hash[k], w->id + 1, true);

			w->added++;
			if (r == HS_COUNTED) {
				w->hits++;
			} else if (r == HS_COUNTED_NEW) {
				w->news++;
				w->newk[k]++;
			} else if (r >= 0 && r < HOTSTACK_DROP_MAX) {
				w->drops[r]++;
				w->dropped[k]++;
			} else {
				w->odd++;
			}
		}
	return NULL;
}

struct conc_totals {
	u64 busy, arena_full, table_full, dead, stored, collision;
};

static int cmp_hash(const void *x, const void *y)
{
	const u64 *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* One generation: clear, run the threads, check. @big: room for every stack. */
static void conc_generation(struct conc *c, struct worker *w, bool big, struct conc_totals *tot)
{
	struct rig *r = c->r;
	u64 (*by_hash)[2] = malloc(CONC_STACKS * sizeof(*by_hash));
	u32 *found = calloc(CONC_STACKS, sizeof(u32));
	long *place = malloc(CONC_STACKS * sizeof(long));
	u64 *counted = calloc(CONC_STACKS, sizeof(u64));
	unsigned int i, k, n, ready = 0, dead = 0;
	u64 busy = 0;

	assert_non_null(by_hash);
	assert_non_null(found);
	assert_non_null(place);
	assert_non_null(counted);
	rig_clear(r);
	for (n = 0; n < CONC_THREADS; n++) {
		memset(&w[n], 0, sizeof(w[n]));
		w[n].c = c;
		w[n].id = n;
	}
	assert_int_equal(pthread_barrier_init(&c->start, NULL, CONC_THREADS), 0);
	for (n = 0; n < CONC_THREADS; n++)
		assert_int_equal(pthread_create(&w[n].thread, NULL, conc_worker, &w[n]), 0);
	for (n = 0; n < CONC_THREADS; n++)
		assert_int_equal(pthread_join(w[n].thread, NULL), 0);
	pthread_barrier_destroy(&c->start);

	check_rig(r);
	/* Which stack each READY place holds (by hash, then frames): one at most. */
	for (k = 0; k < CONC_STACKS; k++) {
		by_hash[k][0] = c->hash[k];
		by_hash[k][1] = k;
		place[k] = -1;
	}
	qsort(by_hash, CONC_STACKS, sizeof(*by_hash), cmp_hash);
	for (i = 0; i <= r->s.mask; i++) {
		const struct hotstack_stack *e = &r->stacks[i];
		u64 key[2] = { e->hash, 0 };
		u64 (*m)[2];
		unsigned int holds = 0;

		if (!e->hash)
			continue;
		if (state_of(e) == HOTSTACK_STACK_DEAD) {
			/* Left by a stack of the set: its hash, DEAD. */
			key[0] = hs_hash_ready(e->hash);
			assert_non_null(bsearch(key, by_hash, CONC_STACKS, sizeof(*by_hash),
						cmp_hash));
			dead++;
			continue;
		}
		ready++;
		m = bsearch(key, by_hash, CONC_STACKS, sizeof(*by_hash), cmp_hash);
		assert_non_null(m);
		while (m > by_hash && m[-1][0] == e->hash)
			m--;
		for (; m < by_hash + CONC_STACKS && m[0][0] == e->hash; m++)
			if (hs_stack_equal(e, r->arena, conc_stack(c, m[0][1]), true)) {
				holds++;
				found[m[0][1]]++;
				place[m[0][1]] = i;
			}
		assert_int_equal(holds, 1);
	}
	for (k = 0; k < CONC_STACKS; k++)
		if (found[k] > 1) {
			print_message("gen %u: stack %u (%u frames, hash %#llx) stored %u times:",
				      c->gen, k, conc_stack(c, k)->key.nr_kernel +
				      conc_stack(c, k)->key.nr_user,
				      (unsigned long long)c->hash[k], found[k]);
			for (i = 0; i <= r->s.mask; i++)
				if (r->stacks[i].hash == c->hash[k] &&
				    hs_stack_equal(&r->stacks[i], r->arena, conc_stack(c, k), true))
					print_message(" place %u (index %u)", i,
						      hs_index(r->s.shift, c->hash[k]));
			print_message("\n");
		}
	assert_int_equal(ready + dead, r->ss->stacks);
	/* Each thread: every sample counted or dropped; its table's counts. */
	for (n = 0; n < CONC_THREADS; n++) {
		const struct hs_table *t = &r->cpu[n].t;
		u64 sum = 0, drops = 0;

		assert_int_equal(w[n].odd, 0);
		assert_int_equal(w[n].added, (u64)CONC_PASSES * CONC_STACKS);
		for (i = 0; i < HOTSTACK_DROP_MAX; i++)
			drops += w[n].drops[i];
		assert_int_equal(w[n].news + w[n].hits + drops, w[n].added);
		assert_int_equal(w[n].news, t->stats->entries);
		for (k = 0; k < CONC_STACKS; k++) {
			u64 cnt = count_on(t, place[k]);

			assert_true(w[n].newk[k] <= 1);
			/* This CPU's samples of k, each of its weight. */
			assert_int_equal(cnt, (u64)(CONC_PASSES - w[n].dropped[k]) * (n + 1));
			assert_int_equal(w[n].newk[k], cnt != 0);
			counted[k] += cnt / (n + 1);
			sum += cnt;
		}
		/* No count entry for anything else. */
		assert_int_equal(sum, (w[n].news + w[n].hits) * (n + 1));
		busy += w[n].drops[HOTSTACK_DROP_BUSY];
		tot->arena_full += w[n].drops[HOTSTACK_DROP_ARENA_FULL];
		tot->table_full += w[n].drops[HOTSTACK_DROP_TABLE_FULL];
		tot->collision += w[n].drops[HOTSTACK_DROP_COLLISION];
		if (big)
			assert_int_equal(drops, w[n].drops[HOTSTACK_DROP_BUSY]);
	}
	/* Each stack: stored at most once; counted iff stored; its samples. */
	for (k = 0; k < CONC_STACKS; k++) {
		u64 dropped = 0;

		for (n = 0; n < CONC_THREADS; n++)
			dropped += w[n].dropped[k];
		assert_true(found[k] <= 1);
		assert_int_equal(found[k] == 1, counted[k] != 0);
		assert_int_equal(counted[k] + dropped, (u64)CONC_THREADS * CONC_PASSES);
		if (big)
			assert_int_equal(found[k], 1);
		tot->stored += found[k];
	}
	/* At most 3 stacks of a hash: never HS_MAX_COLLISIONS compared. */
	assert_int_equal(tot->collision, 0);
	if (big) {
		assert_int_equal(ready, CONC_STACKS);
		/* A DEAD place in a large arena: only from claims lost again and again (busy). */
		assert_true(dead <= busy);
		assert_int_equal(r->ss->stacks, CONC_STACKS + dead);
	}
	tot->dead += dead;
	tot->busy += busy;
	free(by_hash);
	free(found);
	free(place);
	free(counted);
}

/*
 * A store of @places, an arena of @pct % of the stacks' frames plus
 * @slack, a count table of 4096 per thread; @big: room for all of them.
 */
static void concurrent(u32 places, unsigned int pct, u64 slack, bool big)
{
	struct conc c = { };
	struct worker *w = calloc(CONC_THREADS, sizeof(*w));
	struct conc_totals tot = { };
	u64 frames = 0, arena;
	unsigned int k;

	assert_non_null(w);
	c.st = calloc(CONC_STACKS, sizeof(*c.st));
	c.hash = calloc(CONC_STACKS, sizeof(*c.hash));
	assert_non_null(c.st);
	assert_non_null(c.hash);
	conc_make(&c);
	for (k = 0; k < CONC_STACKS; k++)
		frames += conc_stack(&c, k)->key.nr_kernel + conc_stack(&c, k)->key.nr_user;
	arena = frames * pct / 100 + slack;
	c.r = rig_new(places, arena, 4096, CONC_THREADS);
	if (big) {
		assert_true(c.r->s.max_used >= CONC_STACKS);
		assert_true(arena >= frames);
	}
	for (c.gen = 0; c.gen < CONC_GENS; c.gen++)
		conc_generation(&c, w, big, &tot);
	print_message("%u generations, %u threads, %u stacks (%llu frames) in %u places, arena "
		      "%llu: %llu stored, drops: %llu busy, %llu arena full, %llu table full; "
		      "%llu dead places\n", CONC_GENS, CONC_THREADS, CONC_STACKS,
		      (unsigned long long)frames, places, (unsigned long long)arena,
		      (unsigned long long)tot.stored, (unsigned long long)tot.busy,
		      (unsigned long long)tot.arena_full, (unsigned long long)tot.table_full,
		      (unsigned long long)tot.dead);
	rig_free(c.r);
	free(c.st);
	free(c.hash);
	free(w);
}

/*
 * Room for every stack: each stored exactly once, no place DEAD, no drop
 * but busy ones. The arena has CONC_DEPTH frames more than the stacks
 * need: exactly their frames, arena_full_race (a known race) could drop
 * samples of the last stacks as arena full.
 */
static void concurrent_stored_once(void **state)
{
	(void)state;
	concurrent(4096, 100, CONC_DEPTH, true);
}

/*
 * The arena holds half the frames: drops (arena full), DEAD places (a
 * claim that lost the arena's last frames to another CPU's after its
 * check), each stack stored at most once, every sample accounted for.
 */
static void concurrent_arena_small(void **state)
{
	(void)state;
	concurrent(4096, 50, 0, false);
}

/* The store holds 768 of the 2000 stacks: drops (table full), as above. */
static void concurrent_store_small(void **state)
{
	(void)state;
	concurrent(1024, 100, 0, false);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(counts_hits, setup, teardown),
		cmocka_unit_test_setup_teardown(never_merges_different_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(compare_every_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_collision_is_not_a_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(store_full, setup, teardown),
		cmocka_unit_test_setup_teardown(cpu_table_full, setup, teardown),
		cmocka_unit_test(probe_limit),
		cmocka_unit_test_setup_teardown(collisions_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(arena_full, setup, teardown),
		cmocka_unit_test_setup_teardown(arena_full_leaves_place_dead, setup, teardown),
		cmocka_unit_test_setup_teardown(busy_while_another_cpu_fills, setup, teardown),
		cmocka_unit_test_setup_teardown(clear_empties, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_properties, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_stack_stored_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_in_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(hash_alike_whatever_the_seed, setup, teardown),
		cmocka_unit_test_setup_teardown(keyless_table, setup, teardown),
		cmocka_unit_test_setup_teardown(ip_path_is_the_general_path, setup, teardown),
		cmocka_unit_test_setup_teardown(random_against_model, setup, teardown),
		cmocka_unit_test(index_spreads_near_frames),
		cmocka_unit_test_setup_teardown(two_cpus_one_stack_stored_once, setup, teardown),
		cmocka_unit_test_setup_teardown(found_on_another_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(store_full_race, setup, teardown),
		cmocka_unit_test_setup_teardown(arena_full_race, setup, teardown),
		cmocka_unit_test(concurrent_stored_once),
		cmocka_unit_test(concurrent_arena_small),
		cmocka_unit_test(concurrent_store_small),
	};

	/* A test's name (or a pattern: "concurrent*") runs that alone. */
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("stacktab", tests, NULL, NULL);
}
