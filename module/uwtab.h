/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: user unwind tables in the module's layout, and their lookups.
 *
 * A table (one binary's, from HOTSTACK_IOC_ADD_TABLE) keeps each row in 4
 * bytes: the low 16 bits of its offset and its rule's index; a page index
 * gives, for each page of offsets, the first row at or past its start, so
 * that a lookup is one index read and a binary search of the rows of one
 * page. A page is 256 bytes (a few rows: two or three steps of search) to
 * 64 KiB, as small as keeps the index to one entry a row at most. A
 * process's mappings (HOTSTACK_IOC_SET_MAPS) are a sorted array searched
 * the same way. Built from the ABI's rows by hs_utab_build(), which checks
 * every row and rule.
 *
 * Plain C over the ABI's types: also built into host unit tests
 * (tests/unit/test_uwtab.c, with tests/unit/kshim.h). The lookups are
 * called from NMI or hardirq context: bounded, no locks.
 */
#ifndef _HOTSTACK_UWTAB_H
#define _HOTSTACK_UWTAB_H

#include <linux/hotstack.h>

/* Offsets a page of the index spans, as a shift: at least, and at most (a row's 16 bits). */
#define HS_UTAB_MIN_SHIFT	8
#define HS_UTAB_MAX_SHIFT	16

/*
 * struct hs_utab - a binary's unwind table
 * @id:		its id in the session (hotstack_unwind_table.id)
 * @nr_rows:	rows (at least one)
 * @nr_pages:	pages of 2^@shift the rows span: the last row's page + 1
 * @shift:	a page's size, as a shift (HS_UTAB_MIN_SHIFT..HS_UTAB_MAX_SHIFT)
 * @bytes:	what it takes, this header included
 * @rules:	[nr_rules], checked copies of the ABI's (their kinds the
 *		module's: hs_urule_kind())
 * @page:	[nr_pages + 1]: the first row at or past each page's start
 *		(@page[nr_pages] == @nr_rows)
 * @pc_lo:	[nr_rows]: the low bits of each row's offset (its page: @page)
 * @rule:	[nr_rows]: the index of each row's rule
 */
struct hs_utab {
	u32 id;
	u32 nr_rows;
	u32 nr_rules;
	u32 nr_pages;
	u32 shift;
	u64 bytes;
	const struct hotstack_unwind_rule *rules;
	const u32 *page;
	const u16 *pc_lo;
	const u16 *rule;
};

/* What a rule @r's kind must be, in a table of @arch_x86 (else arm64). */
static inline bool hs_urule_valid(const struct hotstack_unwind_rule *r, bool arch_x86)
{
	bool cfa = r->kind == HOTSTACK_UW_CFA_SP || r->kind == HOTSTACK_UW_CFA_FP ||
		   r->kind == HOTSTACK_UW_PLT;

	if (r->kind >= HOTSTACK_UW_KINDS || r->pad || (r->flags & ~HOTSTACK_UWF_ALL))
		return false;
	if (!cfa)
		return !r->flags && !r->fp_off && !r->ra_off && !r->cfa_off;
	if (r->kind == HOTSTACK_UW_PLT) {
		if (!arch_x86 || r->cfa_off < 1 || r->cfa_off > 15)
			return false;
	} else if (r->cfa_off < -(1 << 20) || r->cfa_off > (1 << 20)) {
		return false;
	}
	if (!(r->flags & HOTSTACK_UWF_FP_SAVED) ? r->fp_off : r->fp_off % 8)
		return false;
	if (!(r->flags & HOTSTACK_UWF_RA_SAVED) ? r->ra_off : r->ra_off % 8)
		return false;
	/* x86_64's call pushes the return address: it is always at CFA - 8. */
	return !arch_x86 || ((r->flags & HOTSTACK_UWF_RA_SAVED) && r->ra_off == -8);
}

/*
 * The module's own kinds for the commonest rules, so that the walk tells
 * them apart by their kind alone and takes them in short:
 * HS_UW_SP_RA:	HOTSTACK_UW_CFA_SP, above the stack pointer, with the
 *		return address saved alone (x86_64 without frame pointers)
 * HS_UW_RECORD: a frame record's: HOTSTACK_UW_CFA_FP at the frame pointer
 *		+ 16, the return address at CFA - 8 and the caller's frame
 *		pointer at CFA - 16 (code built with frame pointers, on both
 *		architectures)
 * hs_utab_build() gives them to the table's copy of each such rule.
 */
enum {
	HS_UW_SP_RA = HOTSTACK_UW_KINDS,
	HS_UW_RECORD,
};

/* The kind the module keeps checked rule @r as. */
static inline u8 hs_urule_kind(const struct hotstack_unwind_rule *r)
{
	if (r->kind == HOTSTACK_UW_CFA_SP && r->cfa_off > 0 && r->flags == HOTSTACK_UWF_RA_SAVED)
		return HS_UW_SP_RA;
	if (r->kind == HOTSTACK_UW_CFA_FP && r->cfa_off == 16 && r->ra_off == -8 &&
	    r->fp_off == -16 && r->flags == (HOTSTACK_UWF_RA_SAVED | HOTSTACK_UWF_FP_SAVED))
		return HS_UW_RECORD;
	return r->kind;
}

/* Bytes a table of @nr_rows rows, @nr_rules rules and @nr_pages pages takes. */
static inline u64 hs_utab_size(u32 nr_rows, u32 nr_rules, u32 nr_pages)
{
	u64 size = sizeof(struct hs_utab);

	size += (u64)nr_rules * sizeof(struct hotstack_unwind_rule);
	size += ((u64)nr_pages + 1) * sizeof(u32);
	return size + (u64)nr_rows * 2 * sizeof(u16);
}

/*
 * Pages the rows @rows[@nr] span, their size in *@shift (no more pages
 * than rows, if it can), or 0 when the rows are not valid: not strictly
 * increasing, an offset or a rule index out of range.
 */
static inline u32 hs_utab_pages(const struct hotstack_unwind_row *rows, u32 nr, u32 nr_rules,
				u32 *shift)
{
	u32 i, last;

	if (!nr || nr > HOTSTACK_UW_MAX_ROWS)
		return 0;
	for (i = 0; i < nr; i++)
		if (rows[i].rule >= nr_rules || (i && rows[i].pc <= rows[i - 1].pc))
			return 0;
	last = rows[nr - 1].pc;
	for (*shift = HS_UTAB_MIN_SHIFT; *shift < HS_UTAB_MAX_SHIFT && (last >> *shift) >= nr;)
		++*shift;
	return (last >> *shift) + 1;
}

/*
 * Lay the table out in @mem (hs_utab_size() bytes) from @rows[@nr_rows]
 * (hs_utab_pages() said @nr_pages of @shift) and @rules[@nr_rules], already
 * checked.
 */
static inline struct hs_utab *hs_utab_build(void *mem, const struct hotstack_unwind_row *rows,
					    u32 nr_rows, const struct hotstack_unwind_rule *rules,
					    u32 nr_rules, u32 nr_pages, u32 shift)
{
	struct hs_utab *t = mem;
	struct hotstack_unwind_rule *rl = (void *)(t + 1);
	u32 *page = (void *)(rl + nr_rules);
	u16 *pc_lo = (void *)(page + nr_pages + 1);
	u16 *rule = pc_lo + nr_rows;
	u32 i, p = 0;

	t->nr_rows = nr_rows;
	t->nr_rules = nr_rules;
	t->nr_pages = nr_pages;
	t->shift = shift;
	t->bytes = hs_utab_size(nr_rows, nr_rules, nr_pages);
	memcpy(rl, rules, (size_t)nr_rules * sizeof(*rules));
	for (i = 0; i < nr_rules; i++)
		rl[i].kind = hs_urule_kind(&rl[i]);
	for (i = 0; i < nr_rows; i++) {
		while (p <= rows[i].pc >> shift)
			page[p++] = i;
		/* A page's rows have the same bits above these (shift <= 16). */
		pc_lo[i] = rows[i].pc & 0xffff;
		rule[i] = rows[i].rule;
	}
	while (p <= nr_pages)
		page[p++] = nr_rows;
	t->rules = rl;
	t->page = page;
	t->pc_lo = pc_lo;
	t->rule = rule;
	return t;
}

/*
 * The rule that holds at offset @off of table @t: the last row at or
 * before it; NULL before the first row (no rule: frame pointers).
 * Called from NMI or hardirq context.
 */
static __always_inline const struct hotstack_unwind_rule *
hs_utab_find(const struct hs_utab *t, u64 off)
{
	u32 lo, hi, mid, p;
	u16 key;

	/*
	 * Past the last page (or 4 GiB, or below the mapping's bias: the
	 * offset wrapped), the last row: a table ends with HOTSTACK_UW_NONE.
	 */
	if ((off >> t->shift) < t->nr_pages) {
		p = off >> t->shift;
		lo = t->page[p];
		hi = t->page[p + 1];
	} else {
		lo = t->nr_rows;
		hi = lo;
	}
	key = off & 0xffff;
	/* The first row of the page past @key: a few steps (at most 16). */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->pc_lo[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rules[t->rule[lo - 1]] : NULL;
}

/* One mapping of a process, as the sampler reads it. */
struct hs_umap {
	u64 start;
	u64 end;
	u64 bias;
	const struct hs_utab *tab;	/* NULL: frame pointers */
};

/*
 * The mapping of @maps[@nr] (sorted, not overlapping) that holds @addr,
 * or NULL. Called from NMI or hardirq context.
 */
static __always_inline const struct hs_umap *hs_umap_find(const struct hs_umap *maps, u32 nr,
							  u64 addr)
{
	u32 lo = 0, hi = nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < maps[lo - 1].end ? &maps[lo - 1] : NULL;
}

/*
 * struct hs_urc - a rule a CPU found for an address: one entry of that
 * CPU's cache of them (HS_URC_SIZE, direct-mapped by address), so that a
 * walk through code it walked before looks up neither the mapping nor the
 * table. A process is named by its serial (struct hs_uproc.serial, never
 * reused): an entry of a process whose maps were replaced or dropped is
 * never found again, and the tables a rule is in live as long as the
 * session. One writer, the CPU's walk; never read by another CPU.
 * @pc:		the address looked up
 * @proc:	the serial of the process whose maps and tables gave it (0: none)
 * @rule:	the rule
 */
struct hs_urc {
	u64 pc;
	u64 proc;
	const struct hotstack_unwind_rule *rule;
};

#define HS_URC_BITS	8
#define HS_URC_SIZE	BIT(HS_URC_BITS)

/* The entry of cache @c[HS_URC_SIZE] that @pc may be in. */
static __always_inline struct hs_urc *hs_urc_slot(struct hs_urc *c, u64 pc)
{
	return &c[(pc * 0x61c8864680b583ebULL) >> (64 - HS_URC_BITS)];
}

/* Whether @e holds the rule of @pc of process @proc (a serial: never 0). */
static __always_inline bool hs_urc_hit(const struct hs_urc *e, u64 proc, u64 pc)
{
	return e->pc == pc && e->proc == proc;
}

/* Cache in @e rule @r (not NULL) of process @proc (a serial) for @pc. */
static __always_inline void hs_urc_put(struct hs_urc *e, u64 proc, u64 pc,
				       const struct hotstack_unwind_rule *r)
{
	e->pc = pc;
	e->proc = proc;
	e->rule = r;
}

#endif
