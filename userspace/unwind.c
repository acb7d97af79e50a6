// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: a binary's unwind table from its call-frame information
 * (unwind.h).
 *
 * libdw interprets the CFI; nothing here runs DWARF CFA instructions.
 * The FDEs are listed with dwarf_next_cfi(), their code ranges decoded
 * by the CIE's 'R' pointer encoding, sorted and cut where they overlap.
 * Each FDE's rows come from dwarf_cfi_addrframe() one at a time: the
 * frame at an address says the range its rule holds for, and the next
 * row starts where that range ends. A row's CFA, return address and
 * frame pointer rules become one struct hotstack_unwind_rule (or
 * HOTSTACK_UW_EXPR where no kind says them), interned in a hash table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "unwind.h"
#include "util.h"

/* DWARF register numbers of a machine's stack pointer, frame pointer, return address. */
struct hs_uw_arch {
	int sp, fp, ra;
	bool x86;
};

static const struct hs_uw_arch hs_uw_x86_64 = { .sp = 7, .fp = 6, .ra = 16, .x86 = true };
static const struct hs_uw_arch hs_uw_arm64 = { .sp = 31, .fp = 29, .ra = 30 };

/* The CFA offsets a rule can hold (hotstack_unwind_rule.cfa_off). */
#define HS_UW_CFA_MAX	(1 << 20)

/* An FDE's code, [start, end) in ELF virtual addresses. */
struct hs_uw_fde {
	uint64_t start, end;
};

/* A CIE's FDE pointer encoding, by its section offset. */
struct hs_uw_cie {
	Dwarf_Off off;
	int enc;		/* -1: a CIE whose FDEs cannot be read */
};

struct hs_uw_builder {
	const struct hs_uw_arch *arch;
	struct hs_uw_table *t;
	size_t rows_cap, rules_cap;
	uint32_t *slot;		/* rules by hash: index + 1; 0: empty */
	size_t mask;
	struct hs_uw_fde *fde;
	size_t nr_fde, fde_cap;
	struct hs_uw_cie *cie;
	size_t nr_cie, cie_cap;
	struct hotstack_unwind_rule last;	/* the last row's rule, and its index */
	uint32_t last_idx;
};

/* ---- pointer encodings ------------------------------------------------ */

static int hs_uw_leb(const uint8_t **p, const uint8_t *end, int sign, uint64_t *val)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return -EINVAL;
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*val = v;
	return 0;
}

int hs_uw_read_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc, unsigned int addr_size,
		   int big, uint64_t field, uint64_t *val)
{
	unsigned int n, i;
	uint64_t v = 0;
	int sign = 0;

	if (enc == HS_EH_PE_OMIT || (enc & 0x70 & ~HS_EH_PE_PCREL) || (enc & 0x80))
		return -EINVAL;
	if (addr_size != 4 && addr_size != 8)
		return -EINVAL;
	switch (enc & 0x0f) {
	case HS_EH_PE_ABSPTR:
		n = addr_size;
		break;
	case HS_EH_PE_UDATA2:
	case HS_EH_PE_SDATA2:
		n = 2;
		break;
	case HS_EH_PE_UDATA4:
	case HS_EH_PE_SDATA4:
		n = 4;
		break;
	case HS_EH_PE_UDATA8:
	case HS_EH_PE_SDATA8:
		n = 8;
		break;
	case HS_EH_PE_ULEB128:
	case HS_EH_PE_SLEB128:
		n = 0;
		break;
	default:
		return -EINVAL;
	}
	sign = (enc & 0x08) != 0;
	if (!n) {
		if (hs_uw_leb(p, end, sign, &v))
			return -EINVAL;
	} else {
		if (end - *p < (long)n)
			return -EINVAL;
		for (i = 0; i < n; i++)
			v = v << 8 | (*p)[big ? i : n - 1 - i];
		if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
			v |= ~0ULL << (8 * n);
		*p += n;
	}
	if (enc & HS_EH_PE_PCREL)
		v += field;
	if (addr_size == 4)
		v &= 0xffffffffULL;
	*val = v;
	return 0;
}

/*
 * The FDE pointer encoding of @cie ("zR" augmentation data, past 'P''s
 * personality and 'L''s byte), or -1 for one whose FDEs we cannot read.
 */
static int hs_uw_cie_enc(const Dwarf_CIE *cie, unsigned int addr_size, int big, bool eh)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	const char *aug = cie->augmentation;
	uint64_t skip;
	uint8_t e;

	/* .debug_frame: addresses are absolute, address-sized. */
	if (!eh || !aug[0])
		return HS_EH_PE_ABSPTR;
	if (aug[0] != 'z' || !p)
		return -1;
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			return p < end ? *p : -1;
		case 'L':
			if (p++ >= end)
				return -1;
			break;
		case 'P':
			if (p >= end)
				return -1;
			e = *p++;
			/* Only skipped: its format gives its size. */
			if (hs_uw_read_ptr(&p, end, e & 0x0f, addr_size, big, 0, &skip))
				return -1;
			break;
		case 'S':	/* signal frame */
		case 'B':	/* arm64: return addresses signed with the B key */
		case 'G':	/* arm64: MTE-tagged stack */
			break;
		default:
			return -1;
		}
	}
	return HS_EH_PE_ABSPTR;
}

/* ---- FDEs --------------------------------------------------------------- */

/* Whether @addr is in an executable PT_LOAD segment of @t. */
static bool hs_uw_in_code(const struct hs_uw_table *t, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < t->nr_segs; i++)
		if ((t->segs[i].flags & PF_X) && addr >= t->segs[i].vaddr &&
		    addr - t->segs[i].vaddr < t->segs[i].memsz)
			return true;
	return false;
}

static int hs_uw_cie_of(struct hs_uw_builder *b, const unsigned char *ident, Elf_Data *data,
			bool eh, Dwarf_Off off)
{
	unsigned int addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	int big = ident[EI_DATA] == ELFDATA2MSB;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	size_t i;
	int enc;

	for (i = b->nr_cie; i--;)
		if (b->cie[i].off == off)
			return b->cie[i].enc;
	if (dwarf_next_cfi(ident, data, eh, off, &next, &e) || !dwarf_cfi_cie_p(&e))
		enc = -1;
	else
		enc = hs_uw_cie_enc(&e.cie, addr_size, big, eh);
	if (hs_grow(&b->cie, &b->cie_cap, b->nr_cie, sizeof(*b->cie), 8))
		return -1;
	b->cie[b->nr_cie].off = off;
	b->cie[b->nr_cie++].enc = enc;
	return enc;
}

/* The FDEs of @data (the CFI section at @sh_addr) that start in an executable segment. */
static int hs_uw_list_fdes(struct hs_uw_builder *b, Elf *elf, Elf_Data *data, uint64_t sh_addr,
			   bool eh)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	unsigned int addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	int big = ident[EI_DATA] == ELFDATA2MSB;
	Dwarf_Off off = 0, next;
	uint64_t start, range;
	Dwarf_CFI_Entry e;
	const uint8_t *p;
	int ret, enc;

	for (;; off = next) {
		next = off;
		ret = dwarf_next_cfi(ident, data, eh, off, &next, &e);
		if (ret > 0)
			break;
		if (ret < 0) {
			/* Skippable when libdw moved on past it. */
			if (next == off || next == (Dwarf_Off)-1)
				break;
			b->t->n.fdes_skipped++;
			continue;
		}
		if (dwarf_cfi_cie_p(&e))
			continue;
		enc = hs_uw_cie_of(b, ident, data, eh, e.fde.CIE_pointer);
		p = e.fde.start;
		if (enc < 0 ||
		    hs_uw_read_ptr(&p, e.fde.end, enc, addr_size, big,
				   sh_addr + (p - (const uint8_t *)data->d_buf), &start) ||
		    hs_uw_read_ptr(&p, e.fde.end, enc & 0x0f, addr_size, big, 0, &range)) {
			b->t->n.fdes_skipped++;
			continue;
		}
		/* Empty: a function the linker dropped. */
		if (!range)
			continue;
		if (start + range < start || !hs_uw_in_code(b->t, start)) {
			b->t->n.fdes_skipped++;
			continue;
		}
		if (hs_grow(&b->fde, &b->fde_cap, b->nr_fde, sizeof(*b->fde), 1024))
			return -ENOMEM;
		b->fde[b->nr_fde].start = start;
		b->fde[b->nr_fde++].end = start + range;
	}
	return 0;
}

static int hs_uw_fde_cmp(const void *a, const void *b)
{
	const struct hs_uw_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* Sort the FDEs; one that starts inside the previous one cuts it there. */
static void hs_uw_sort_fdes(struct hs_uw_builder *b)
{
	size_t i, j = 0;

	qsort(b->fde, b->nr_fde, sizeof(*b->fde), hs_uw_fde_cmp);
	for (i = 0; i < b->nr_fde; i++) {
		if (j && b->fde[i].start < b->fde[j - 1].end) {
			b->t->n.fdes_overlap++;
			if (b->fde[i].start == b->fde[j - 1].start)
				continue;	/* the longer one is kept */
			b->fde[j - 1].end = b->fde[i].start;
		}
		b->fde[j++] = b->fde[i];
	}
	b->nr_fde = j;
}

/* ---- rules --------------------------------------------------------------- */

/* A register saved at CFA + *@off: [DW_OP_call_frame_cfa] and [DW_OP_plus_uconst N]. */
static bool hs_uw_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	/* libdw keeps a negative offset in the unsigned operand. */
	*off = (int64_t)ops[1].number;
	return true;
}

/* Register + offset: DW_OP_bregx, as libdw gives a DW_CFA_def_cfa, or DW_OP_bregN. */
static bool hs_uw_breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (int64_t)op->number2;
		return op->number < 128;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/*
 * x86_64's lazy PLT entries: CFA = rsp + 8 + ((rip & 15) >= N) << 3, as
 * binutils writes it (N 11 or 10 by the PLT's layout): *@lit = N.
 */
static bool hs_uw_plt(const Dwarf_Op *ops, size_t nops, int32_t *lit)
{
	static const uint8_t seq[] = {
		DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
		DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	};
	size_t i;

	if (nops != sizeof(seq))
		return false;
	for (i = 0; i < nops; i++)
		if (seq[i] ? ops[i].atom != seq[i] :
			     ops[i].atom < DW_OP_lit1 || ops[i].atom > DW_OP_lit15)
			return false;
	if (ops[0].number != 8 || ops[1].number != 0)
		return false;
	*lit = ops[4].atom - DW_OP_lit0;
	return true;
}

/* Whether a saved register's offset fits hotstack_unwind_rule's fp_off and ra_off. */
static bool hs_uw_off_ok(int64_t off)
{
	return off % 8 == 0 && off >= INT16_MIN && off <= INT16_MAX;
}

/*
 * The rule of frame @f, whose return address column is @ra and which is
 * a signal frame when @signal: HOTSTACK_UW_EXPR (counted by why) when the
 * CFA, the return address or the frame pointer is where no kind says.
 */
static void hs_uw_rule_of(const struct hs_uw_arch *a, Dwarf_Frame *f, int ra, bool signal,
			  struct hotstack_unwind_rule *r, struct hs_uw_counts *n)
{
	enum hs_uw_expr_why why = HS_UW_EXPR_RA;
	Dwarf_Op mem[3], *ops;
	int64_t off;
	size_t nops;
	int32_t lit;
	int reg;

	memset(r, 0, sizeof(*r));
	if (signal) {
		r->kind = HOTSTACK_UW_SIGNAL;
		return;
	}
	if (ra != a->ra || dwarf_frame_register(f, a->ra, mem, &ops, &nops))
		goto expr;
	/* Undefined: the outermost frame (_start, a thread's start). */
	if (!nops && ops == mem) {
		r->kind = HOTSTACK_UW_END;
		return;
	}
	if (hs_uw_at_cfa(ops, nops, &off)) {
		/* x86_64's call pushes it: anywhere else is not a frame we know. */
		if (a->x86 && off != -8)
			goto expr;
		if (!hs_uw_off_ok(off)) {
			why = HS_UW_EXPR_RANGE;
			goto expr;
		}
		r->flags |= HOTSTACK_UWF_RA_SAVED;
		r->ra_off = off;
	} else if (nops || ops || a->x86) {
		/* arm64's "same value": still in the link register (a leaf). */
		goto expr;
	}

	why = HS_UW_EXPR_CFA;
	if (dwarf_frame_cfa(f, &ops, &nops))
		goto expr;
	if (nops == 1 && hs_uw_breg(ops, &reg, &off)) {
		if (reg == a->sp)
			r->kind = HOTSTACK_UW_CFA_SP;
		else if (reg == a->fp)
			r->kind = HOTSTACK_UW_CFA_FP;
		else
			goto expr;
		if (off < -HS_UW_CFA_MAX || off > HS_UW_CFA_MAX) {
			why = HS_UW_EXPR_RANGE;
			goto expr;
		}
		r->cfa_off = off;
	} else if (a->x86 && hs_uw_plt(ops, nops, &lit)) {
		r->kind = HOTSTACK_UW_PLT;
		r->cfa_off = lit;
	} else {
		goto expr;
	}

	why = HS_UW_EXPR_FP;
	if (dwarf_frame_register(f, a->fp, mem, &ops, &nops))
		goto expr;
	if (hs_uw_at_cfa(ops, nops, &off)) {
		if (!hs_uw_off_ok(off)) {
			why = HS_UW_EXPR_RANGE;
			goto expr;
		}
		r->flags |= HOTSTACK_UWF_FP_SAVED;
		r->fp_off = off;
	} else if (nops || ops) {
		/* Not "same value": a register, an expression, undefined. */
		goto expr;
	}
	return;
expr:
	memset(r, 0, sizeof(*r));
	r->kind = HOTSTACK_UW_EXPR;
	n->expr[why]++;
}

static int hs_uw_rehash(struct hs_uw_builder *b, size_t slots)
{
	uint32_t *slot = calloc(slots, sizeof(*slot)), i;
	size_t j, mask = slots - 1;

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < b->t->nr_rules; i++) {
		for (j = hs_hash(&b->t->rules[i], sizeof(b->t->rules[i])) & mask; slot[j];
		     j = (j + 1) & mask)
			;
		slot[j] = i + 1;
	}
	free(b->slot);
	b->slot = slot;
	b->mask = mask;
	return 0;
}

/* The index of rule @r, added when new. -E2BIG past HOTSTACK_UW_MAX_RULES; -ENOMEM. */
static long hs_uw_intern(struct hs_uw_builder *b, const struct hotstack_unwind_rule *r)
{
	struct hs_uw_table *t = b->t;
	size_t i;

	/* Consecutive rows mostly share their rule. */
	if (t->nr_rules && !memcmp(r, &b->last, sizeof(*r)))
		return b->last_idx;
	for (i = hs_hash(r, sizeof(*r)) & b->mask; b->slot[i]; i = (i + 1) & b->mask)
		if (!memcmp(&t->rules[b->slot[i] - 1], r, sizeof(*r)))
			goto found;
	if (t->nr_rules >= HOTSTACK_UW_MAX_RULES)
		return -E2BIG;
	if (hs_grow(&t->rules, &b->rules_cap, t->nr_rules, sizeof(*r), 64))
		return -ENOMEM;
	t->rules[t->nr_rules] = *r;
	b->slot[i] = ++t->nr_rules;
	b->last = *r;
	b->last_idx = t->nr_rules - 1;
	if (t->nr_rules * 2 > b->mask && hs_uw_rehash(b, (b->mask + 1) * 2))
		return -ENOMEM;
	return b->last_idx;
found:
	b->last = *r;
	b->last_idx = b->slot[i] - 1;
	return b->last_idx;
}

/* Rule @rule from @addr on: merged with the row before when it says the same. */
static int hs_uw_row(struct hs_uw_builder *b, uint64_t addr, uint32_t rule)
{
	struct hs_uw_table *t = b->t;
	uint32_t pc = addr - t->base;

	if (t->nr_rows && t->rows[t->nr_rows - 1].pc == pc) {
		/* An empty row (an FDE's end where the next one starts): replaced. */
		t->nr_rows--;
	}
	if (t->nr_rows ? t->rows[t->nr_rows - 1].rule == rule : !rule)
		return 0;
	if (t->nr_rows >= HOTSTACK_UW_MAX_ROWS)
		return -E2BIG;
	if (hs_grow(&t->rows, &b->rows_cap, t->nr_rows, sizeof(*t->rows), 4096))
		return -ENOMEM;
	t->rows[t->nr_rows].pc = pc;
	t->rows[t->nr_rows++].rule = rule;
	return 0;
}

/* The rows of FDE [@start, @end), frame by frame. */
static int hs_uw_walk_fde(struct hs_uw_builder *b, Dwarf_CFI *cfi, uint64_t start, uint64_t end)
{
	struct hotstack_unwind_rule r;
	Dwarf_Addr s, e, addr;
	Dwarf_Frame *f;
	bool signal;
	long idx;
	int ra;

	for (addr = start; addr < end; addr = e) {
		if (dwarf_cfi_addrframe(cfi, addr, &f)) {
			/* libdw found no FDE here after all: frame pointers. */
			b->t->n.fdes_skipped++;
			return hs_uw_row(b, addr, 0);
		}
		ra = dwarf_frame_info(f, &s, &e, &signal);
		hs_uw_rule_of(b->arch, f, ra, signal, &r, &b->t->n);
		free(f);
		b->t->n.frames++;
		idx = hs_uw_intern(b, &r);
		if (idx < 0)
			return idx;
		idx = hs_uw_row(b, addr, idx);
		if (idx < 0)
			return idx;
		if (ra < 0 || e <= addr || e > end)
			e = end;
	}
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

/* @elf's PT_LOAD segments, for hs_uw_in_code() and hs_uw_bias(). */
static int hs_uw_read_segs(Elf *elf, struct hs_uw_table *t)
{
	size_t i, nr;
	GElf_Phdr ph;

	t->nr_segs = 0;
	if (elf_getphdrnum(elf, &nr))
		return -EINVAL;
	for (i = 0; i < nr && t->nr_segs < HS_UW_MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD)
			continue;
		t->segs[t->nr_segs].offset = ph.p_offset;
		t->segs[t->nr_segs].vaddr = ph.p_vaddr;
		t->segs[t->nr_segs].filesz = ph.p_filesz;
		t->segs[t->nr_segs].memsz = ph.p_memsz;
		t->segs[t->nr_segs++].flags = ph.p_flags;
	}
	return 0;
}

/* The section named @name with contents, or NULL; its header in *@sh. */
static Elf_Scn *hs_uw_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *s;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS || !sh->sh_size)
			continue;
		s = elf_strptr(elf, shstrndx, sh->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

void hs_uw_table_free(struct hs_uw_table *t)
{
	free(t->rows);
	free(t->rules);
	t->rows = NULL;
	t->rules = NULL;
	t->nr_rows = 0;
	t->nr_rules = 0;
}

static void hs_uw_builder_reset(struct hs_uw_builder *b)
{
	hs_uw_table_free(b->t);
	b->rows_cap = 0;
	b->rules_cap = 0;
	b->nr_fde = 0;
	b->nr_cie = 0;
	memset(&b->t->n, 0, sizeof(b->t->n));
}

/* The table from one CFI section: .eh_frame (@eh) or .debug_frame. */
static int hs_uw_build_from(struct hs_uw_builder *b, Elf *elf, bool eh)
{
	struct hotstack_unwind_rule none = { .kind = HOTSTACK_UW_NONE };
	struct hs_uw_table *t = b->t;
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t i;
	int ret;

	if (eh) {
		scn = hs_uw_section(elf, ".eh_frame", &sh);
		if (!scn)
			return -ENOENT;
		cfi = dwarf_getcfi_elf(elf);
	} else {
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (dw)
			cfi = dwarf_getcfi(dw);
		/* libdw decompressed it in place (SHF_COMPRESSED) if it had to. */
		scn = hs_uw_section(elf, ".debug_frame", &sh);
		if (scn && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			scn = NULL;
	}
	ret = -ENOENT;
	if (!cfi || !scn)
		goto out_cfi;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		goto out_cfi;
	ret = hs_uw_list_fdes(b, elf, data, sh.sh_addr, eh);
	if (ret)
		goto out_cfi;
	hs_uw_sort_fdes(b);
	ret = -ENOENT;
	if (!b->nr_fde)
		goto out_cfi;

	t->base = b->fde[0].start & ~(HS_UW_BASE_ALIGN - 1);
	ret = hs_uw_rehash(b, 256);
	if (ret)
		goto out_cfi;
	/* Rule 0: HOTSTACK_UW_NONE, for the gaps. */
	ret = hs_uw_intern(b, &none);
	if (ret < 0)
		goto out_cfi;
	/* Sorted and cut, ends increase too: those past 4 GiB of the base are last. */
	while (b->nr_fde && b->fde[b->nr_fde - 1].end - t->base >= HOTSTACK_UW_MAX_PC) {
		b->nr_fde--;
		t->n.fdes_skipped++;
	}
	for (i = 0; i < b->nr_fde; i++) {
		const struct hs_uw_fde *fde = &b->fde[i];

		t->n.fdes++;
		ret = hs_uw_walk_fde(b, cfi, fde->start, fde->end);
		if (ret)
			goto out_cfi;
		/* The gap to the next FDE, or past the last: frame pointers. */
		if (i + 1 == b->nr_fde || b->fde[i + 1].start != fde->end) {
			ret = hs_uw_row(b, fde->end, 0);
			if (ret)
				goto out_cfi;
		}
	}
	ret = -ENOENT;
	if (!t->nr_rows)
		goto out_cfi;
	t->n.rows = t->nr_rows;
	t->n.rules = t->nr_rules;
	for (i = 0; i < t->nr_rows; i++)
		t->n.kinds[t->rules[t->rows[i].rule].kind]++;
	t->debug_frame = !eh;
	ret = 0;
out_cfi:
	if (dw)
		dwarf_end(dw);
	else if (cfi)
		dwarf_cfi_end(cfi);
	return ret;
}

int hs_uw_build(Elf *elf, struct hs_uw_table *t)
{
	struct hs_uw_builder b = { .t = t };
	const char *ident;
	GElf_Ehdr eh;
	int ret;

	memset(t, 0, sizeof(*t));
	ident = elf_getident(elf, NULL);
	if (!ident || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (ident[EI_CLASS] != ELFCLASS64)
		return -EOPNOTSUPP;
	if (eh.e_machine == EM_X86_64)
		b.arch = &hs_uw_x86_64;
	else if (eh.e_machine == EM_AARCH64)
		b.arch = &hs_uw_arm64;
	else
		return -EOPNOTSUPP;
	t->machine = eh.e_machine;
	ret = hs_uw_read_segs(elf, t);
	if (ret)
		return ret;
	ret = hs_uw_build_from(&b, elf, true);
	if (ret == -ENOENT) {
		hs_uw_builder_reset(&b);
		ret = hs_uw_build_from(&b, elf, false);
	}
	free(b.slot);
	free(b.fde);
	free(b.cie);
	if (ret) {
		hs_uw_table_free(t);
		return ret;
	}
	/* Grown by doubling: give the slack back, the table may be kept. */
	t->rows = realloc(t->rows, t->nr_rows * sizeof(*t->rows)) ?: t->rows;
	t->rules = realloc(t->rules, t->nr_rules * sizeof(*t->rules)) ?: t->rules;
	return 0;
}

const struct hotstack_unwind_rule *hs_uw_find(const struct hotstack_unwind_row *rows,
					      uint32_t nr_rows,
					      const struct hotstack_unwind_rule *rules, uint64_t off)
{
	uint32_t lo = 0, hi = nr_rows, mid;

	if (off >= HOTSTACK_UW_MAX_PC)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rows[mid].pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rules[rows[lo - 1].rule] : NULL;
}

const struct hotstack_unwind_rule *hs_uw_lookup(const struct hs_uw_table *t, uint64_t vaddr)
{
	if (vaddr < t->base)
		return NULL;
	return hs_uw_find(t->rows, t->nr_rows, t->rules, vaddr - t->base);
}

uint64_t hs_uw_kernel_bytes(const struct hs_uw_table *t)
{
	uint32_t last = t->nr_rows ? t->rows[t->nr_rows - 1].pc : 0, shift = 8;
	uint64_t pages;

	/* The module's page index: pages of 256 bytes to 64 KiB, no more than rows if it can. */
	while (shift < 16 && (last >> shift) >= t->nr_rows)
		shift++;
	pages = t->nr_rows ? (last >> shift) + 1 : 0;

	return 4ULL * t->nr_rows + sizeof(struct hotstack_unwind_rule) * t->nr_rules + 4 * pages;
}

int hs_uw_bias(const struct hs_uw_table *t, uint64_t start, uint64_t end, uint64_t pgoff,
	       uint64_t *bias)
{
	const struct hs_uw_seg *s, *seg = NULL;
	uint32_t i;

	/* The segment whose file bytes the mapping shows; code first. */
	for (i = 0; i < t->nr_segs; i++) {
		s = &t->segs[i];
		if (s->offset < pgoff + (end - start) && pgoff < s->offset + s->filesz &&
		    (!seg || ((s->flags & PF_X) && !(seg->flags & PF_X))))
			seg = s;
	}
	if (!seg)
		return -ENOENT;
	/* address - start + pgoff: file offset; - offset + vaddr: ELF address; - base. */
	*bias = start - pgoff + (seg->offset - seg->vaddr) + t->base;
	return 0;
}

void hs_uw_key(Elf *elf, const struct stat *st, char *key)
{
	const unsigned char *id;
	const void *idp;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &idp) : -1;
	int i;

	if (n > 0 && n <= (HS_UW_KEY_MAX - 3) / 2) {
		id = idp;
		key[0] = 'b';
		key[1] = ':';
		for (i = 0; i < n; i++)
			sprintf(key + 2 + 2 * i, "%02x", id[i]);
		return;
	}
	snprintf(key, HS_UW_KEY_MAX, "f:%llx:%llu:%lld:%lld.%09ld", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (long long)st->st_size,
		 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
}
