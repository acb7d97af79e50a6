// SPDX-License-Identifier: GPL-2.0
/*
 * The keys of the off-CPU records (module/offtab.h) built on the host:
 * against a model of which task holds which place, and the places a
 * lookup reads after a long session's churn of tasks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

static unsigned long reads;
#define HS_OFFTAB_READ()	(reads++)
#include "../../module/offtab.h"

struct fixture {
	struct hs_offtab o;
	unsigned int places;
};

static struct fixture *fixture(unsigned int bits)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->places = 1U << bits;
	f->o.keys = calloc(f->places, sizeof(*f->o.keys));
	f->o.homes = calloc(f->places, sizeof(*f->o.homes));
	f->o.mask = f->places - 1;
	f->o.bits = bits;
	return f;
}

static void fixture_free(struct fixture *f)
{
	free(f->o.keys);
	free(f->o.homes);
	free(f);
}

/* The n-th task's address: a task_struct is a few KiB, cache-line aligned. */
static unsigned long task(unsigned long n)
{
	return 0xffff888100000000UL + n * 0x2c40;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * Random takes (switch-outs, some of a task that has a record still: a
 * missed switch-in; some as START takes them, the key stored once the
 * record is written), finds and frees (switch-ins) of 3000 tasks, at most
 * 60 with a record at once, in 256 places: every answer as the model's.
 */
static void model(void **state)
{
	struct fixture *f = fixture(8);
	enum { TASKS = 3000, LIVE = 60 };
	static unsigned int where[TASKS];	/* the task's place + 1, or 0 */
	unsigned int live = 0, i, op;

	(void)state;
	for (op = 0; op < 200000; op++) {
		unsigned int t = rnd() % TASKS, r = rnd() % 3;
		unsigned long *key;
		bool replaced, busy;
		u32 at;

		if (r == 0 && (live < LIVE || where[t])) {
			/* One in four as START takes them: busy until written. */
			busy = !(t % 4);
			at = hs_offtab_take(&f->o, task(t), busy ? HS_OFF_BUSY : task(t), &replaced);
			if (busy && !replaced && at != HS_OFF_NONE) {
				assert_null(hs_offtab_find(&f->o, task(t)));
				smp_store_release(&f->o.keys[at], task(t));
			}
			assert_int_equal(replaced, where[t] != 0);
			if (where[t]) {
				assert_int_equal(at, where[t] - 1);
				continue;
			}
			if (at == HS_OFF_NONE) {
				/* Only when every place of its 32 holds another's record. */
				for (i = 0; i < HS_OFF_PROBES; i++)
					assert_true(f->o.keys[(hash_long(task(t), 8) + i) & f->o.mask] >
						    HS_OFF_GONE);
				continue;
			}
			assert_true(f->o.keys[at] == task(t));
			where[t] = at + 1;
			live++;
		} else {
			key = hs_offtab_find(&f->o, task(t));
			if (!where[t]) {
				assert_null(key);
				continue;
			}
			assert_ptr_equal(key, &f->o.keys[where[t] - 1]);
			if (r == 1) {
				hs_offtab_free(&f->o, key, task(t));
				where[t] = 0;
				live--;
			}
		}
	}
	fixture_free(f);
}

/*
 * A long session: 100,000 distinct tasks each take a record and free it,
 * 30 with one at a time, in 1024 places (the freed places stay until the
 * next START). Then a switch of a task with no record (the common case:
 * unwatched, idle, left out by a budget) reads one place to take one (its
 * home's first free or freed) and none to find none; before the homes'
 * counts told takes too, a take read all 32 once no place was left free.
 */
static void churn(void **state)
{
	struct fixture *f = fixture(10);
	enum { TASKS = 100000, LIVE = 30, TRIES = 10000 };
	unsigned long *key, n, free_left = 0;
	unsigned int i;
	bool replaced;
	u32 at;

	(void)state;
	for (n = 0; n < TASKS + LIVE; n++) {
		if (n < TASKS)
			assert_int_not_equal(hs_offtab_take(&f->o, task(n), task(n), &replaced),
					     HS_OFF_NONE);
		if (n >= LIVE) {
			key = hs_offtab_find(&f->o, task(n - LIVE));
			assert_non_null(key);
			hs_offtab_free(&f->o, key, task(n - LIVE));
		}
	}
	for (i = 0; i < f->places; i++)
		free_left += f->o.keys[i] == HS_OFF_FREE;
	reads = 0;
	for (n = 0; n < TRIES; n++) {
		at = hs_offtab_take(&f->o, task(TASKS + LIVE + n), task(TASKS + LIVE + n),
				    &replaced);
		assert_int_not_equal(at, HS_OFF_NONE);
		hs_offtab_free(&f->o, &f->o.keys[at], task(TASKS + LIVE + n));
	}
	print_message("# takes of a task without a record after the churn: %.2f places read "
		      "(%lu of %u places never taken)\n", (double)reads / TRIES, free_left,
		      f->places);
	assert_true(reads <= 2 * TRIES);
	reads = 0;
	for (n = 0; n < TRIES; n++)
		assert_null(hs_offtab_find(&f->o, task(2 * TASKS + n)));
	print_message("# finds of a task without a record: %.2f places read\n",
		      (double)reads / TRIES);
	assert_true(reads <= TRIES / 10);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model),
		cmocka_unit_test(churn),
	};

	return cmocka_run_group_tests_name("offtab", tests, NULL, NULL);
}
