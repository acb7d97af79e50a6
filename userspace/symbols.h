/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: kernel symbols from /proc/kallsyms, looked up the way the
 * module's read() text does (sprint_symbol_no_offset()), so that a profile
 * symbolized here and one symbolized in the kernel are the same text.
 */
#ifndef HOTSTACK_SYMBOLS_H
#define HOTSTACK_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* What an address no text symbol covers prints as (as in read()). */
#define HS_UNKNOWN_FRAME "[unknown]"

/* One address range: a symbol's, or an unknown one. */
struct hs_ksym {
	uint64_t addr;		/* start of the range */
	uint32_t name;		/* offset of its text in names; HS_KSYM_NONE: unknown */
	uint32_t len;		/* length of that text */
};

/* The kernel symbol table, sorted by address. */
struct hs_ksyms {
	struct hs_ksym *sym;	/* increasing addresses */
	size_t nr;
	char *names;		/* "func" or "func [module]", NUL-terminated; */
				/* then HS_KSYM_NAMES_PAD zero bytes */
	size_t names_len;
	/*
	 * Lookup index: page[i] is the last range starting at or below
	 * base + (i << HS_KSYM_PAGE_SHIFT), so a lookup searches only the
	 * few ranges of one page (NULL when the addresses span too much).
	 */
	uint32_t *page;
	uint64_t base;
	size_t nr_pages;
	/*
	 * With the index: each range's start - base, the few a lookup
	 * compares in one cache line (sym[] takes several).
	 */
	uint32_t *off;
};

#define HS_KSYM_PAGE_SHIFT 12

#define HS_KSYM_NONE UINT32_MAX

/* Bytes of k->names that may be read from a name's start, past its end. */
#define HS_KSYM_NAMES_PAD 32

/*
 * Load @kallsyms (NULL: /proc/kallsyms) and, when @modules is not NULL and
 * readable, the modules' extents from it (/proc/modules), so that an
 * address past a module's end is unknown. Returns 0, or -errno with a
 * sentence in @err: -EPERM when kptr_restrict hides the addresses (all
 * zero), -ENOENT when there is no text symbol at all.
 */
int hs_ksyms_load(struct hs_ksyms *k, const char *kallsyms, const char *modules, char *err,
		  size_t errlen);
void hs_ksyms_free(struct hs_ksyms *k);

/* The kernel's symbols for a command that runs for long (top, agent). */
struct hs_ksyms_live {
	struct hs_ksyms k;
	int loaded;
	uint64_t modules_sig;	/* a hash of /proc/modules when k was loaded */
};

/*
 * Load the kernel's symbols, or load them again when a module came or
 * went (or @force). Returns 0, or the load's -errno and sentence in @err;
 * after a failure the last symbols loaded, if any, stay in use.
 */
int hs_ksyms_refresh(struct hs_ksyms_live *l, int force, char *err, size_t errlen);
void hs_ksyms_live_free(struct hs_ksyms_live *l);
/* The modules of @path (/proc/modules) as a number, their use counts left out. */
uint64_t hs_modules_sig(const char *path);

/*
 * The text of @addr: "func", "func [module]" or "[unknown]"; its length in
 * *len (may be NULL). Exact address: use addr - 1 for a return address.
 */
const char *hs_ksyms_lookup(const struct hs_ksyms *k, uint64_t addr, size_t *len);

/* The range of @addr: an index into k->sym, or k->nr when below them all. */
size_t hs_ksyms_find(const struct hs_ksyms *k, uint64_t addr);

/* Prefetch what hs_ksyms_find(@addr) reads first (many lookups at once). */
static inline void hs_ksyms_prefetch(const struct hs_ksyms *k, uint64_t addr)
{
	if (k->page && addr - k->base < (uint64_t)k->nr_pages << HS_KSYM_PAGE_SHIFT)
		__builtin_prefetch(&k->page[(addr - k->base) >> HS_KSYM_PAGE_SHIFT]);
}

/* The sentence printed when kptr_restrict hides kernel addresses. */
extern const char hs_kptr_restrict_hint[];

#endif
