/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: a binary's unwind table (uapi "Unwind tables") from its
 * call-frame information, .eh_frame or else .debug_frame, read with
 * elfutils' libdw: each FDE's rows as libdw computes them, each mapped to
 * one struct hotstack_unwind_rule, consecutive equal rules merged, gaps
 * between FDEs marked HOTSTACK_UW_NONE. x86_64 and arm64 ELF64 files,
 * whatever the host.
 */
#ifndef HOTSTACK_UNWIND_H
#define HOTSTACK_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <sys/stat.h>
#include <linux/hotstack.h>

/* Rows' offsets count from a multiple of this (the module's page index). */
#define HS_UW_BASE_ALIGN	0x10000ULL

/* Why a row's rule is HOTSTACK_UW_EXPR (struct hs_uw_counts.expr). */
enum hs_uw_expr_why {
	HS_UW_EXPR_CFA,		/* CFA not SP/FP + offset, nor the PLT expression */
	HS_UW_EXPR_RA,		/* return address not where a kind can say */
	HS_UW_EXPR_FP,		/* frame pointer: a register, expression, undefined... */
	HS_UW_EXPR_RANGE,	/* an offset past the ABI's ranges */
	HS_UW_EXPR_WHYS
};

/* What building a table found; rows and kinds are counted after merging. */
struct hs_uw_counts {
	uint32_t fdes;		/* FDEs in the table */
	uint32_t fdes_skipped;	/* past base + 4 GiB, outside code, or unreadable */
	uint32_t fdes_overlap;	/* cut short where the next one starts */
	uint32_t rows;
	uint32_t rules;
	uint32_t kinds[HOTSTACK_UW_KINDS];	/* rows of each kind */
	uint32_t expr[HS_UW_EXPR_WHYS];		/* libdw rows (before merging) made EXPR */
	uint32_t frames;	/* libdw rows read */
};

/* One PT_LOAD segment, for hs_uw_bias(). */
struct hs_uw_seg {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;		/* PF_* */
};

/* The most PT_LOAD segments kept for hs_uw_bias(); a binary has 2 to 5. */
#define HS_UW_MAX_SEGS	16

/*
 * A built table. @rows[i].pc is an offset from @base (an ELF virtual
 * address); the rules are deduplicated, @rules[0] is HOTSTACK_UW_NONE.
 */
struct hs_uw_table {
	struct hotstack_unwind_row *rows;
	struct hotstack_unwind_rule *rules;
	uint32_t nr_rows, nr_rules;
	uint64_t base;
	uint16_t machine;	/* EM_X86_64 or EM_AARCH64 */
	uint8_t debug_frame;	/* from .debug_frame (no .eh_frame) */
	struct hs_uw_counts n;
	uint32_t nr_segs;
	struct hs_uw_seg segs[HS_UW_MAX_SEGS];
};

/*
 * Build @elf's table into *@t (zeroed first). Returns 0; -ENOENT: no
 * call-frame information (or no FDE in code); -EOPNOTSUPP: not an ELF64
 * file of x86_64 or arm64; -E2BIG: more than HOTSTACK_UW_MAX_ROWS rows or
 * HOTSTACK_UW_MAX_RULES rules; -EINVAL: unreadable ELF; -ENOMEM.
 * On error *@t holds nothing to free.
 */
int hs_uw_build(Elf *elf, struct hs_uw_table *t);

void hs_uw_table_free(struct hs_uw_table *t);

/*
 * The rule at ELF virtual address @vaddr: the last row at or before it,
 * or NULL before the first row (no rule, as in the module).
 */
const struct hotstack_unwind_rule *hs_uw_lookup(const struct hs_uw_table *t, uint64_t vaddr);

/*
 * The rule at table offset @off of @rows[@nr_rows] (what the module does
 * with address - bias), or NULL. For tables as they were sent.
 */
const struct hotstack_unwind_rule *hs_uw_find(const struct hotstack_unwind_row *rows,
					      uint32_t nr_rows,
					      const struct hotstack_unwind_rule *rules, uint64_t off);

/*
 * What the module keeps for @t, about: 4 bytes a row, 12 a rule, 4 for
 * each page of its index, 256 bytes to 64 KiB of code, no more pages than
 * rows if it can (hotstack_unwind_table.bytes adds the table's header).
 */
uint64_t hs_uw_kernel_bytes(const struct hs_uw_table *t);

/*
 * The bias of a mapping of @t's binary at [@start, @end) from file offset
 * @pgoff (as /proc/PID/maps says): address - bias = offset in the table.
 * Returns 0, or -ENOENT when no PT_LOAD segment holds that file range.
 */
int hs_uw_bias(const struct hs_uw_table *t, uint64_t start, uint64_t end, uint64_t pgoff,
	       uint64_t *bias);

/* The longest key hs_uw_key() writes, with its NUL. */
#define HS_UW_KEY_MAX	160

/*
 * What a binary's table is cached by: "b:" and its GNU build ID in hex,
 * else (no build ID, @elf NULL or one over 64 bytes) "f:" and the
 * device, inode, size and modification time of *@st. Into @key
 * (HS_UW_KEY_MAX bytes).
 */
void hs_uw_key(Elf *elf, const struct stat *st, char *key);

/* DWARF pointer encodings (DW_EH_PE_*), for hs_uw_read_ptr(). */
#define HS_EH_PE_ABSPTR		0x00
#define HS_EH_PE_ULEB128	0x01
#define HS_EH_PE_UDATA2		0x02
#define HS_EH_PE_UDATA4		0x03
#define HS_EH_PE_UDATA8		0x04
#define HS_EH_PE_SLEB128	0x09
#define HS_EH_PE_SDATA2		0x0a
#define HS_EH_PE_SDATA4		0x0b
#define HS_EH_PE_SDATA8		0x0c
#define HS_EH_PE_PCREL		0x10
#define HS_EH_PE_OMIT		0xff

/*
 * Read one value of encoding @enc at *@p (advanced past it, not beyond
 * @end): its format (absptr: @addr_size bytes, 4 or 8), and with
 * DW_EH_PE_pcrel @field (the field's own address) added; @big: big
 * endian. Returns 0; -EINVAL when cut short or for an encoding FDEs do
 * not use (indirect, aligned, text/data/function-relative, omit).
 */
int hs_uw_read_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc, unsigned int addr_size,
		   int big, uint64_t field, uint64_t *val);

#endif
