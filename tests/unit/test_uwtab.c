// SPDX-License-Identifier: GPL-2.0
/* The module's unwind tables (module/uwtab.h) built on the host. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kshim.h"
#include "../../module/uwtab.h"

#define R(k, fl, fo, ro, co) { .kind = (k), .flags = (fl), .fp_off = (fo), .ra_off = (ro), \
			       .cfa_off = (co) }
#define RA HOTSTACK_UWF_RA_SAVED
#define FP HOTSTACK_UWF_FP_SAVED

static struct hs_utab *build(const struct hotstack_unwind_row *rows, u32 nr_rows,
			     const struct hotstack_unwind_rule *rules, u32 nr_rules)
{
	u32 shift, pages = hs_utab_pages(rows, nr_rows, nr_rules, &shift);
	void *mem;

	if (!pages)
		return NULL;
	mem = malloc(hs_utab_size(nr_rows, nr_rules, pages));
	return hs_utab_build(mem, rows, nr_rows, rules, nr_rules, pages, shift);
}

/* The index of the rule at @off, or -1 for none. */
static int rule_at(const struct hs_utab *t, u64 off)
{
	const struct hotstack_unwind_rule *r = hs_utab_find(t, off);

	return r ? (int)(r - t->rules) : -1;
}

/* Every offset gets the rule of the last row at or before it, across pages. */
static void lookup_against_model(void **state)
{
	static const struct hotstack_unwind_rule rules[] = {
		R(HOTSTACK_UW_NONE, 0, 0, 0, 0), R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 8),
		R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 16), R(HOTSTACK_UW_CFA_FP, RA | FP, -16, -8, 16),
	};
	struct hotstack_unwind_row rows[2000];
	struct hs_utab *t;
	u32 i, pc = 0x1234, r = 0;
	u64 off;

	(void)state;
	/* Gaps from 1 byte to 3 pages: pages with no row, pages with many. */
	for (i = 0; i < 2000; i++) {
		rows[i].pc = pc;
		rows[i].rule = r = (r * 7 + i) % 4;
		pc += i % 97 == 0 ? 0x30000 : 1 + (i * 13) % 211;
	}
	t = build(rows, 2000, rules, 4);
	assert_non_null(t);
	/* Pages as small as keep them fewer than the rows: 256 bytes to 64 KiB. */
	assert_true(t->shift >= 8 && t->shift <= 16);
	assert_true(t->nr_pages <= 2000 || t->shift == 16);
	assert_true(t->shift == 8 || (rows[1999].pc >> (t->shift - 1)) >= 2000);
	assert_int_equal(t->nr_pages, (rows[1999].pc >> t->shift) + 1);
	assert_int_equal(t->bytes, sizeof(*t) + 4 * sizeof(rules[0]) + (t->nr_pages + 1) * 4 +
					   2000 * 4);
	assert_int_equal(rule_at(t, 0), -1);
	assert_int_equal(rule_at(t, rows[0].pc - 1), -1);
	for (i = 0; i < 2000; i++) {
		assert_int_equal(rule_at(t, rows[i].pc), rows[i].rule);
		if (i < 1999)
			assert_int_equal(rule_at(t, rows[i + 1].pc - 1), rows[i].rule);
	}
	/* Between rows, every offset of a stretch (sampled), and past the end. */
	for (off = rows[0].pc; off < rows[1999].pc + 0x50000; off += 37) {
		for (i = 0; i + 1 < 2000 && rows[i + 1].pc <= off; i++)
			;
		assert_int_equal(rule_at(t, off), rows[i].rule);
	}
	assert_int_equal(rule_at(t, HOTSTACK_UW_MAX_PC - 1), rows[1999].rule);
	/* Past 4 GiB, or below the mapping's bias (wrapped): the last row's. */
	assert_int_equal(rule_at(t, HOTSTACK_UW_MAX_PC), rows[1999].rule);
	assert_int_equal(rule_at(t, (u64)-8), rows[1999].rule);
	free(t);
}

static void rows_checked(void **state)
{
	struct hotstack_unwind_row rows[3] = { { 16, 0 }, { 32, 0 }, { 48, 0 } };
	u32 shift;

	(void)state;
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 1);
	assert_int_equal(shift, 8);
	assert_int_equal(hs_utab_pages(rows, 0, 1, &shift), 0);
	rows[1].pc = 16;	/* not strictly increasing */
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 0);
	rows[1].pc = 8;
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 0);
	rows[1].pc = 32;
	rows[2].rule = 1;	/* no such rule */
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 0);
	rows[2].rule = 0;
	/* 4 GiB of code, three rows: pages of 64 KiB, no larger. */
	rows[2].pc = 0xffffffff;
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 0x10000);
	assert_int_equal(shift, 16);
	/* 3 rows in 768 bytes: 256-byte pages. */
	rows[2].pc = 767;
	assert_int_equal(hs_utab_pages(rows, 3, 1, &shift), 3);
	assert_int_equal(shift, 8);
}

static void rules_checked(void **state)
{
	static const struct {
		struct hotstack_unwind_rule r;
		bool x86, arm64;
	} cases[] = {
		{ R(HOTSTACK_UW_NONE, 0, 0, 0, 0), true, true },
		{ R(HOTSTACK_UW_END, 0, 0, 0, 0), true, true },
		{ R(HOTSTACK_UW_EXPR, 0, 0, 0, 0), true, true },
		{ R(HOTSTACK_UW_SIGNAL, 0, 0, 0, 0), true, true },
		{ R(HOTSTACK_UW_END, RA, 0, 0, 0), false, false },
		{ R(HOTSTACK_UW_NONE, 0, 0, 0, 8), false, false },
		{ R(HOTSTACK_UW_KINDS, 0, 0, 0, 0), false, false },
		{ R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 8), true, true },
		{ R(HOTSTACK_UW_CFA_SP, RA | FP, -16, -8, 16), true, true },
		/* x86_64: the return address is always at CFA - 8. */
		{ R(HOTSTACK_UW_CFA_SP, 0, 0, 0, 16), false, true },
		{ R(HOTSTACK_UW_CFA_FP, RA, 0, -16, 16), false, true },
		{ R(HOTSTACK_UW_CFA_FP, RA | FP, -16, -8, 16), true, true },
		/* Offsets of saved words are whole words, and only with their flag. */
		{ R(HOTSTACK_UW_CFA_SP, RA | FP, -12, -8, 16), false, false },
		{ R(HOTSTACK_UW_CFA_SP, RA, -16, -8, 16), false, false },
		{ R(HOTSTACK_UW_CFA_SP, 0, 0, -8, 16), false, false },
		{ R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 1 << 20), true, true },
		{ R(HOTSTACK_UW_CFA_SP, RA, 0, -8, (1 << 20) + 1), false, false },
		{ R(HOTSTACK_UW_CFA_SP, RA, 0, -8, -(1 << 20) - 1), false, false },
		{ R(HOTSTACK_UW_CFA_SP, RA | 4, 0, -8, 8), false, false },
		/* The PLT's rule: x86_64 only, its threshold 1-15. */
		{ R(HOTSTACK_UW_PLT, RA, 0, -8, 11), true, false },
		{ R(HOTSTACK_UW_PLT, RA, 0, -8, 0), false, false },
		{ R(HOTSTACK_UW_PLT, RA, 0, -8, 16), false, false },
	};
	struct hotstack_unwind_rule pad = R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 8);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (hs_urule_valid(&cases[i].r, true) != cases[i].x86 ||
		    hs_urule_valid(&cases[i].r, false) != cases[i].arm64)
			fail_msg("case %zu: x86 %d arm64 %d", i, hs_urule_valid(&cases[i].r, true),
				 hs_urule_valid(&cases[i].r, false));
	}
	pad.pad = 1;
	assert_false(hs_urule_valid(&pad, true));
}

static void maps_found(void **state)
{
	static const struct hs_umap maps[] = {
		{ 0x1000, 0x3000, 0, NULL }, { 0x3000, 0x4000, 0, NULL }, { 0x8000, 0x9000, 0, NULL },
	};

	(void)state;
	assert_null(hs_umap_find(maps, 3, 0xfff));
	assert_ptr_equal(hs_umap_find(maps, 3, 0x1000), &maps[0]);
	assert_ptr_equal(hs_umap_find(maps, 3, 0x2fff), &maps[0]);
	assert_ptr_equal(hs_umap_find(maps, 3, 0x3000), &maps[1]);
	assert_null(hs_umap_find(maps, 3, 0x4000));
	assert_null(hs_umap_find(maps, 3, 0x7fff));
	assert_ptr_equal(hs_umap_find(maps, 3, 0x8fff), &maps[2]);
	assert_null(hs_umap_find(maps, 3, 0x9000));
	assert_null(hs_umap_find(maps, 0, 0x1000));
}

/*
 * The CPUs' rule cache: a rule is found again for its address and process
 * only; an entry taken by another address, or a process's maps replaced
 * (a new serial), finds nothing; an empty cache finds nothing.
 */
static void rule_cache(void **state)
{
	static const struct hotstack_unwind_rule rules[2];
	static struct hs_urc cache[HS_URC_SIZE];
	u64 pc, other = 0, serial;
	struct hs_urc *e;
	unsigned int used = 0, i;

	(void)state;
	for (i = 0; i < HS_URC_SIZE; i++)
		for (serial = 1; serial < 4; serial++)
			assert_false(hs_urc_hit(&cache[i], serial, 0));
	e = hs_urc_slot(cache, 0x401234);
	hs_urc_put(e, 7, 0x401234, &rules[1]);
	assert_true(hs_urc_hit(hs_urc_slot(cache, 0x401234), 7, 0x401234));
	assert_ptr_equal(e->rule, &rules[1]);
	assert_false(hs_urc_hit(e, 8, 0x401234));
	assert_false(hs_urc_hit(e, 7, 0x401235));
	/* Another address of the same entry takes it. */
	for (pc = 0x401235; !other; pc++)
		if (hs_urc_slot(cache, pc) == e)
			other = pc;
	hs_urc_put(e, 7, other, &rules[0]);
	assert_false(hs_urc_hit(e, 7, 0x401234));
	assert_true(hs_urc_hit(e, 7, other));
	assert_ptr_equal(e->rule, &rules[0]);
	/* Neighbouring return addresses spread over the cache. */
	for (i = 0; i < HS_URC_SIZE; i++)
		cache[i].proc = 0;
	for (pc = 0x401000; pc < 0x401000 + 4 * HS_URC_SIZE; pc += 4) {
		e = hs_urc_slot(cache, pc);
		assert_true(e >= cache && e < cache + HS_URC_SIZE);
		used += !e->proc;
		e->proc = 1;
	}
	assert_true(used > HS_URC_SIZE / 2);
}

/*
 * The commonest rules get the module's own kinds (hs_urule_kind()): a
 * frame record's (CFA at the frame pointer + 16, the return address and
 * the caller's frame pointer below it) HS_UW_RECORD, a CFA above the stack
 * pointer with the return address saved alone HS_UW_SP_RA; a rule that
 * differs in any field keeps its kind.
 */
static void module_kinds(void **state)
{
	static const struct hotstack_unwind_rule rules[] = {
		R(HOTSTACK_UW_CFA_FP, RA | FP, -16, -8, 16), R(HOTSTACK_UW_CFA_FP, RA | FP, -16, -8, 24),
		R(HOTSTACK_UW_CFA_FP, RA | FP, -24, -8, 16), R(HOTSTACK_UW_CFA_FP, RA | FP, -8, -16, 16),
		R(HOTSTACK_UW_CFA_FP, RA, 0, -8, 16), R(HOTSTACK_UW_CFA_SP, RA | FP, -16, -8, 16),
		R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 8), R(HOTSTACK_UW_CFA_SP, RA, 0, -16, 32),
		R(HOTSTACK_UW_CFA_SP, RA, 0, -8, 0), R(HOTSTACK_UW_CFA_SP, RA, 0, -8, -8),
		R(HOTSTACK_UW_CFA_SP, 0, 0, 0, 0), R(HOTSTACK_UW_NONE, 0, 0, 0, 0),
	};
	static const u8 kinds[] = {
		HS_UW_RECORD, HOTSTACK_UW_CFA_FP, HOTSTACK_UW_CFA_FP, HOTSTACK_UW_CFA_FP,
		HOTSTACK_UW_CFA_FP, HOTSTACK_UW_CFA_SP, HS_UW_SP_RA, HS_UW_SP_RA,
		HOTSTACK_UW_CFA_SP, HOTSTACK_UW_CFA_SP, HOTSTACK_UW_CFA_SP, HOTSTACK_UW_NONE,
	};
	struct hotstack_unwind_row rows[12];
	struct hs_utab *t;
	u32 i;

	(void)state;
	for (i = 0; i < 12; i++)
		rows[i] = (struct hotstack_unwind_row){ .pc = 16 * i, .rule = i };
	t = build(rows, 12, rules, 12);
	assert_non_null(t);
	for (i = 0; i < 12; i++)
		assert_int_equal(t->rules[i].kind, kinds[i]);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookup_against_model),
		cmocka_unit_test(rows_checked),
		cmocka_unit_test(rules_checked),
		cmocka_unit_test(maps_found),
		cmocka_unit_test(rule_cache),
		cmocka_unit_test(module_kinds),
	};

	return cmocka_run_group_tests_name("uwtab", tests, NULL, NULL);
}
