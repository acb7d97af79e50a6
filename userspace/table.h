/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: a session's stack table read through its mmap, turned
 * into a profile symbolized by the tool (kallsyms, and user symbols when
 * they were captured): the same folded lines as the module's read() text.
 */
#ifndef HOTSTACK_TABLE_H
#define HOTSTACK_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/hotstack.h>

struct hs_ksyms;
struct hs_usyms;
struct hs_profile;

/* The leading frame of each hotstack_stack.context ("[task]", "[sleep]" ...; [0] NULL). */
#define HS_NR_CONTEXTS	(HOTSTACK_CTX_RUNQUEUE + 1)
extern const char *const hs_context_names[HS_NR_CONTEXTS];

/* A mapping of a session's tables (or a buffer laid out the same way). */
struct hs_table_map {
	void *base;
	size_t size;
	int mapped;		/* 1: munmap() it */
	int fd;			/* the session's, when mapped */
};

/* mmap() the session @fd (configured); 0 or -errno (EPERM: no CAP_PERFMON/SYSLOG). */
int hs_table_map(int fd, struct hs_table_map *m);
void hs_table_unmap(struct hs_table_map *m);

/* Which generation to copy. */
enum hs_table_gen {
	HS_GEN_READABLE,	/* the last SNAPSHOT's: complete and quiet */
	HS_GEN_ACTIVE,		/* the one being written: quiet once the session is stopped */
};

/* One distinct stack of a copy, and its samples on every CPU. */
struct hs_table_item {
	struct hotstack_stack stack;	/* .frames indexes hs_table_copy.frames */
	uint64_t count;
};

/* The fullest CPU count table of a generation. */
struct hs_table_fill {
	uint64_t most;		/* its count entries in use */
	uint32_t cpu;		/* its CPU */
	uint32_t cpu_entries;	/* count entries per CPU (0: not known) */
};

/* The fullest count table of the active generation now (a live view). 0 or -errno. */
int hs_table_fullest(const struct hs_table_map *m, struct hs_table_fill *f);

/* A private copy of one generation: each stored stack once, every CPU's counts added. */
struct hs_table_copy {
	struct hs_table_item *items;	/* in the store's order */
	size_t nr;
	uint64_t *frames;
	size_t nr_frames;
	/*
	 * That generation's counters, all CPUs, as GET_STATS totals them:
	 * entries and arena_used are the store's.
	 */
	struct hotstack_cpu_stats total;
	struct hs_table_fill fill;	/* its fullest CPU count table */
	uint64_t generation;
	uint32_t state, keys, stacks;
};

/*
 * Copy generation @which of @m under the header's sequence counter: the
 * copy is retried when a SNAPSHOT or RESET happened meanwhile. Returns 0,
 * -ENOMEM, -EINVAL (not a table this tool knows) or -EAGAIN (it kept
 * changing).
 */
int hs_table_copy(const struct hs_table_map *m, enum hs_table_gen which,
		  struct hs_table_copy *c);
void hs_table_copy_free(struct hs_table_copy *c);

/*
 * The folded lines of @c into @p: keys, markers and frames as read()
 * prints them, kernel frames symbolized with @k, user frames with @u
 * when not NULL (else in hex, as read() prints them). @pid: the process
 * of every sample when the session filtered one (user frames without a
 * tgid key), else 0. @flags: HS_PROFILE_*. Then the drop lines. The
 * lines' text is one block, which p->text takes. 0 or -ENOMEM (then @p
 * holds what was added: free it).
 */
int hs_table_profile(const struct hs_table_copy *c, const struct hs_ksyms *k,
		     struct hs_usyms *u, uint32_t pid, struct hs_profile *p, unsigned int flags);

/* hs_table_profile() and hs_session_profile() flags. */
#define HS_PROFILE_QUIET	1	/* nothing said of the kernel symbols */
/* No "[pid N]" key: the tool asked for it only to name user frames (hs_symbol_keys()). */
#define HS_PROFILE_NO_PID	2

/*
 * The distinct processes (tgid key) in the active generation now, at
 * most @max of them (a live view: no consistency needed). Returns how many.
 */
size_t hs_table_pids(const struct hs_table_map *m, uint32_t *pids, size_t max);
/* The same of the cgroups (cgroup key). */
size_t hs_table_cgroups(const struct hs_table_map *m, uint64_t *ids, size_t max);

/*
 * The samples lost, as "[dropped];[REASON] COUNT" stacks, and the
 * filtered-out ones in p->filtered (they were not asked for). 0 or -errno.
 */
int hs_profile_add_drops(struct hs_profile *p, const __u64 *drops);

/*
 * The profile of the session @fd from its mmap, symbolized by the tool:
 * generation @which; @u and @pid as for hs_table_profile(). Returns 0, or
 * -errno when the caller should use read() instead: -EPERM after printing
 * why (kptr_restrict) unless HS_PROFILE_QUIET is in @flags, -EPERM/-EINVAL
 * silently when the session cannot be mapped (no CAP_PERFMON/CAP_SYSLOG,
 * not configured).
 */
int hs_session_profile(int fd, const struct hs_table_map *m, enum hs_table_gen which,
		       struct hs_usyms *u, uint32_t pid, struct hs_profile *p, unsigned int flags);

#endif
