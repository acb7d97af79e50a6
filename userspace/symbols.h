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

/* The kernel symbol table, sorted by address. */
struct hs_ksyms {
	uint64_t *addr;		/* start of each range, increasing */
	uint32_t *name;		/* offset of its text in @names; HS_KSYM_NONE: unknown */
	uint16_t *len;		/* length of that text */
	size_t nr;
	char *names;		/* "func" or "func [module]", NUL-terminated */
	size_t names_len;
};

#define HS_KSYM_NONE UINT32_MAX

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

/*
 * The text of @addr: "func", "func [module]" or "[unknown]"; its length in
 * *len (may be NULL). Exact address: use addr - 1 for a return address.
 */
const char *hs_ksyms_lookup(const struct hs_ksyms *k, uint64_t addr, size_t *len);

/* The sentence printed when kptr_restrict hides kernel addresses. */
extern const char hs_kptr_restrict_hint[];

#endif
