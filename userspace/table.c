// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the session's tables through mmap, to a profile.
 *
 * The header is read under its sequence counter (see the uapi header);
 * the generation is copied, and the copy is kept only if the generation
 * did not change meanwhile. A generation keeps each distinct stack once,
 * in a store all CPUs share, and each CPU counts the stacks it saw by
 * their index in the store: a stack's samples are the counts of every
 * CPU added up, one item per stack (two call sites of one callee stay
 * two items, as they are two stacks), formatted exactly as
 * module/folded.c formats them, with the tool's symbols.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "cgroup.h"
#include "events.h"
#include "profile.h"
#include "symbols.h"
#include "table.h"
#include "usyms.h"
#include "util.h"

int hs_table_map(int fd, struct hs_table_map *m)
{
	struct hotstack_stats st = { .size = sizeof(st) };
	void *p;

	memset(m, 0, sizeof(*m));
	if (ioctl(fd, HOTSTACK_IOC_GET_STATS, &st))
		return -errno;
	if (!st.mmap_size)
		return -EINVAL;		/* not configured (or the persistent session's) */
	p = mmap(NULL, st.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->base = p;
	m->size = st.mmap_size;
	m->mapped = 1;
	m->fd = fd;
	return 0;
}

void hs_table_unmap(struct hs_table_map *m)
{
	if (m->mapped && m->base)
		munmap(m->base, m->size);
	memset(m, 0, sizeof(*m));
}

/* The header's fields this reader needs, read under the sequence counter. */
struct hs_hdr_view {
	uint32_t seq, state, gen_index, nr_slots, table_entries, cpu_entries;
	uint32_t entry_size, count_size, store_stats_size, cpu_stats_size;
	uint32_t keys, stacks;
	uint64_t generation, arena_frames, store_size, slot_size, gen_offset;
};

/*
 * Whether the layout @v describes lies in the mapping, each part holding
 * what it says it holds: the fields are the kernel's, and one that does
 * not add up is refused rather than followed out of the mapping. Every
 * product and sum is checked, and the 8-byte fields stay aligned.
 */
static int hs_layout_ok(const struct hs_table_map *m, const struct hs_hdr_view *v)
{
	uint64_t store, end;

	/* A count names its stack by index + 1, in 32 bits. */
	if (v->table_entries >= UINT32_MAX ||
	    v->gen_offset < sizeof(struct hotstack_mmap_header) + (uint64_t)v->nr_slots * 4 ||
	    v->store_stats_size < sizeof(struct hotstack_store_stats) ||
	    v->cpu_stats_size < sizeof(struct hotstack_cpu_stats) ||
	    (v->store_stats_size | v->cpu_stats_size | v->store_size | v->slot_size |
	     v->gen_offset) % sizeof(uint64_t))
		return 0;
	if (__builtin_mul_overflow(v->arena_frames, sizeof(uint64_t), &store) ||
	    __builtin_add_overflow(store, v->store_stats_size +
				   (uint64_t)v->table_entries * v->entry_size, &store) ||
	    store > v->store_size ||
	    v->cpu_stats_size + (uint64_t)v->cpu_entries * v->count_size > v->slot_size ||
	    __builtin_mul_overflow(v->slot_size, (uint64_t)v->nr_slots, &end) ||
	    __builtin_add_overflow(end, v->store_size, &end) ||
	    __builtin_add_overflow(end, v->gen_offset, &end) || end > m->size)
		return 0;
	return 1;
}

static int hs_read_header(const struct hs_table_map *m, enum hs_table_gen which,
			  struct hs_hdr_view *v)
{
	const struct hotstack_mmap_header *h = m->base;
	unsigned int tries;
	uint32_t seq;

	if (m->size < sizeof(*h) || h->version != HOTSTACK_MMAP_VERSION ||
	    h->entry_size != sizeof(struct hotstack_stack) ||
	    h->count_size != sizeof(struct hotstack_count))
		return -EINVAL;
	for (tries = 0; tries < 1000000; tries++) {
		seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* smp_rmb: seq, then the fields */
		v->seq = seq;
		v->state = __atomic_load_n(&h->state, __ATOMIC_RELAXED);
		v->generation = __atomic_load_n(&h->generation, __ATOMIC_RELAXED);
		v->gen_index = which == HS_GEN_ACTIVE ? __atomic_load_n(&h->active, __ATOMIC_RELAXED)
						      : __atomic_load_n(&h->readable, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* smp_rmb: the fields, then seq */
		if (seq == __atomic_load_n(&h->seq, __ATOMIC_RELAXED))
			break;
	}
	if (tries == 1000000)
		return -EAGAIN;
	/* The geometry is fixed while the mapping exists. */
	v->nr_slots = h->nr_slots;
	v->table_entries = h->table_entries;
	v->cpu_entries = h->cpu_entries;
	v->entry_size = h->entry_size;
	v->count_size = h->count_size;
	v->store_stats_size = h->store_stats_size;
	v->cpu_stats_size = h->cpu_stats_size;
	v->arena_frames = h->arena_frames;
	v->store_size = h->store_size;
	v->slot_size = h->slot_size;
	v->keys = h->keys;
	v->stacks = h->stacks;
	if (v->gen_index > 1)
		return -EINVAL;
	v->gen_offset = h->gen_offset[v->gen_index];
	return hs_layout_ok(m, v) ? 0 : -EINVAL;
}

/* Whether the header still shows the generation copied. */
static int hs_header_same(const struct hs_table_map *m, const struct hs_hdr_view *v)
{
	const struct hotstack_mmap_header *h = m->base;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* the copy, then seq */
	return __atomic_load_n(&h->seq, __ATOMIC_RELAXED) == v->seq;
}

/* Generation @v's store: its counters, its stacks, its arena. */
static const struct hotstack_store_stats *hs_store(const struct hs_table_map *m,
						   const struct hs_hdr_view *v)
{
	return (const void *)((const char *)m->base + v->gen_offset);
}

static const struct hotstack_stack *hs_store_stacks(const struct hs_table_map *m,
						    const struct hs_hdr_view *v)
{
	return (const void *)((const char *)hs_store(m, v) + v->store_stats_size);
}

/* Whether the store's stack @s is complete (acquire: then the rest of it may be read). */
static int hs_stack_ready(const struct hotstack_stack *s)
{
	/* Pairs with the release of the hash, READY last, in the kernel. */
	return (__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE) & HOTSTACK_STACK_STATE) ==
	       HOTSTACK_STACK_READY;
}

/*
 * The fullest count table of generation @v: its entries in use, its CPU
 * in *@cpu (each read as it is now).
 */
static uint64_t hs_fullest(const struct hs_table_map *m, const struct hs_hdr_view *v,
			   uint32_t *cpu)
{
	const struct hotstack_mmap_header *h = m->base;
	const char *slots = (const char *)hs_store(m, v) + v->store_size;
	uint64_t most = 0, n;
	uint32_t slot;

	*cpu = 0;
	for (slot = 0; slot < v->nr_slots; slot++) {
		const struct hotstack_cpu_stats *st = (const void *)(slots + slot * v->slot_size);

		n = __atomic_load_n(&st->entries, __ATOMIC_RELAXED);
		if (n > most) {
			most = n;
			*cpu = h->slot_cpu[slot];
		}
	}
	return most;
}

int hs_table_fullest(const struct hs_table_map *m, struct hs_table_fill *f)
{
	struct hs_hdr_view v;
	int ret = m->base ? hs_read_header(m, HS_GEN_ACTIVE, &v) : -EINVAL;

	if (ret)
		return ret;
	f->cpu_entries = v.cpu_entries;
	f->most = hs_fullest(m, &v, &f->cpu);
	return 0;
}

/*
 * One copy of generation @v: every CPU's counts added up by the stack
 * they name (@counts: one per stack of the store), then the stacks
 * counted, in the store's order, with their frames.
 */
static int hs_copy_once(const struct hs_table_map *m, const struct hs_hdr_view *v,
			struct hs_table_copy *c, uint64_t *counts)
{
	const struct hotstack_store_stats *store = hs_store(m, v);
	const struct hotstack_stack *stacks = hs_store_stacks(m, v);
	const uint64_t *arena = (const void *)(stacks + v->table_entries);
	size_t cap_items = 1, cap_frames;
	unsigned int slot, i;

	memset(&c->total, 0, sizeof(c->total));
	memset(counts, 0, (size_t)v->table_entries * sizeof(*counts));
	c->nr = 0;
	c->nr_frames = 0;
	for (slot = 0; slot < v->nr_slots; slot++) {
		const char *base = (const char *)store + v->store_size + slot * v->slot_size;
		const struct hotstack_count *e = (const void *)(base + v->cpu_stats_size);
		const uint64_t *src = (const uint64_t *)base;
		uint64_t *dst = (uint64_t *)&c->total;

		/* Every field of the counters is a __u64 that adds up. */
		for (i = 0; i < sizeof(c->total) / sizeof(uint64_t); i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
		for (i = 0; i < v->cpu_entries; i++) {
			/* Pairs with the release of @stack in the kernel (after its count). */
			uint32_t idx = __atomic_load_n(&e[i].stack, __ATOMIC_ACQUIRE);

			/* 0: free. Past the store: no stack of it, never followed. */
			if (!idx-- || idx >= v->table_entries)
				continue;
			/* Each stack counted at least once takes an item: room for them all. */
			cap_items += !counts[idx];
			counts[idx] += __atomic_load_n(&e[i].count, __ATOMIC_RELAXED);
		}
	}
	c->fill.cpu_entries = v->cpu_entries;
	c->fill.most = hs_fullest(m, v, &c->fill.cpu);
	/* As GET_STATS totals them: a CPU's count entries are not distinct stacks. */
	c->total.entries = __atomic_load_n(&store->stacks, __ATOMIC_RELAXED);
	c->total.arena_used = __atomic_load_n(&store->arena_used, __ATOMIC_RELAXED);

	/* Room for the frames the store says it holds; grown if more were published. */
	cap_frames = (c->total.arena_used < v->arena_frames ? c->total.arena_used :
		      v->arena_frames) + 1024;
	free(c->items);
	free(c->frames);
	c->items = hs_malloc_big(cap_items * sizeof(*c->items));
	c->frames = hs_malloc_big(cap_frames * sizeof(*c->frames));
	if (!c->items || !c->frames)
		return -ENOMEM;
	for (i = 0; i < v->table_entries; i++) {
		struct hs_table_item *out;
		unsigned int n;

		/*
		 * A count names a READY stack only: another one is torn (the
		 * generation check retries) or no kernel's, and is left out.
		 */
		if (!counts[i] || !hs_stack_ready(&stacks[i]))
			continue;
		out = &c->items[c->nr];
		out->stack = stacks[i];
		out->count = counts[i];
		n = out->stack.nr_kernel + out->stack.nr_user;
		if (out->stack.frames + (uint64_t)n > v->arena_frames)
			continue;
		while (c->nr_frames + n > cap_frames) {
			void *grown = realloc(c->frames, (cap_frames *= 2) * sizeof(*c->frames));

			if (!grown)
				return -ENOMEM;
			c->frames = grown;
		}
		memcpy(c->frames + c->nr_frames, arena + out->stack.frames, n * sizeof(uint64_t));
		out->stack.frames = c->nr_frames;
		c->nr_frames += n;
		c->nr++;
	}
	return 0;
}

int hs_table_copy(const struct hs_table_map *m, enum hs_table_gen which,
		  struct hs_table_copy *c)
{
	struct hs_hdr_view v = { 0 };
	uint64_t *counts = NULL;
	unsigned int tries;
	int ret;

	memset(c, 0, sizeof(*c));
	for (tries = 0; tries < 100; tries++) {
		ret = hs_read_header(m, which, &v);
		if (ret)
			goto out_free;
		/* The geometry is the mapping's: the first try's room serves them all. */
		if (!counts)
			counts = hs_malloc_big(((size_t)v.table_entries + 1) * sizeof(*counts));
		if (!counts) {
			ret = -ENOMEM;
			goto out_free;
		}
		ret = hs_copy_once(m, &v, c, counts);
		if (ret)
			goto out_free;
		if (hs_header_same(m, &v))
			break;
	}
	if (tries == 100) {
		ret = -EAGAIN;
		goto out_free;
	}
	free(counts);
	c->generation = v.generation;
	c->state = v.state;
	c->keys = v.keys;
	c->stacks = v.stacks;
	return 0;

out_free:
	free(counts);
	hs_table_copy_free(c);
	return ret;
}

void hs_table_copy_free(struct hs_table_copy *c)
{
	free(c->items);
	free(c->frames);
	memset(c, 0, sizeof(*c));
}

/*
 * The waker a stack ends with (HOTSTACK_ENTRY_WAKER), or NULL; *@nr_user:
 * the sleeper's own user frames (the module's read() splits it so too).
 */
static const struct hotstack_waker *hs_waker_of(const struct hotstack_stack *e,
						const uint64_t *f, int *nr_user)
{
	const struct hotstack_waker *wk;

	*nr_user = e->nr_user;
	if (!(e->flags & HOTSTACK_ENTRY_WAKER) || e->nr_user < HOTSTACK_WAKER_WORDS)
		return NULL;
	wk = (const void *)(f + e->nr_kernel + e->nr_user - HOTSTACK_WAKER_WORDS);
	if (wk->magic != HOTSTACK_WAKER_MAGIC ||
	    wk->nr_kernel + wk->nr_user > e->nr_user - (int)HOTSTACK_WAKER_WORDS)
		return NULL;
	*nr_user = e->nr_user - HOTSTACK_WAKER_WORDS - wk->nr_kernel - wk->nr_user;
	return wk;
}

/*
 * The distinct nonzero values @key gives of the active generation's
 * stacks, at most @max, when the session counts by @need (a
 * HOTSTACK_KEY_*): one pass over the store, a set on the side.
 */
static size_t hs_table_keys(const struct hs_table_map *m, uint32_t need,
			    uint64_t (*key)(const struct hotstack_stack *, const uint64_t *,
					    uint64_t),
			    uint64_t *out, size_t max)
{
	const struct hotstack_stack *s;
	size_t nr = 0, size = 1, k;
	struct hs_hdr_view v;
	uint64_t *set;
	uint32_t i;

	if (hs_read_header(m, HS_GEN_ACTIVE, &v) || (need && !(v.keys & need)) || !max)
		return 0;
	while (size < 2 * max)
		size *= 2;
	set = calloc(size, sizeof(*set));
	if (!set)
		return 0;
	s = hs_store_stacks(m, &v);
	for (i = 0; i < v.table_entries && nr < max; i++) {
		uint64_t x;

		if (!hs_stack_ready(&s[i]))
			continue;
		x = key(&s[i], (const void *)(s + v.table_entries), v.arena_frames);
		if (!x)
			continue;
		for (k = (x * 0x9e3779b97f4a7c15ULL) >> 40; set[k & (size - 1)] &&
		     set[k & (size - 1)] != x; k++)
			;
		if (!set[k & (size - 1)])
			out[nr++] = set[k & (size - 1)] = x;
	}
	free(set);
	return nr;
}

static uint64_t hs_stack_tgid(const struct hotstack_stack *s, const uint64_t *arena,
			      uint64_t arena_frames)
{
	(void)arena;
	(void)arena_frames;
	return s->tgid;
}

/* The process of the waker @s ends with (its frames in @arena), or 0. */
static uint64_t hs_stack_waker(const struct hotstack_stack *s, const uint64_t *arena,
			       uint64_t arena_frames)
{
	const struct hotstack_waker *wk;
	int nr_user;

	if (!(s->flags & HOTSTACK_ENTRY_WAKER) ||
	    s->frames + (uint64_t)s->nr_kernel + s->nr_user > arena_frames)
		return 0;
	wk = hs_waker_of(s, arena + s->frames, &nr_user);
	return wk && wk->nr_user ? wk->tgid : 0;
}

static uint64_t hs_stack_cgroup(const struct hotstack_stack *s, const uint64_t *arena,
				uint64_t arena_frames)
{
	(void)arena;
	(void)arena_frames;
	return s->cgroup;
}

size_t hs_table_pids(const struct hs_table_map *m, uint32_t *pids, size_t max)
{
	uint64_t ids[4096];
	size_t i, j, nr, more;

	max = max < 4096 ? max : 4096;
	nr = hs_table_keys(m, HOTSTACK_KEY_TGID, hs_stack_tgid, ids, max);
	for (i = 0; i < nr; i++)
		pids[i] = ids[i];
	/* The wakers' whose user frames are named too (each once). */
	more = hs_table_keys(m, 0, hs_stack_waker, ids, max - nr);
	for (i = 0; i < more; i++) {
		for (j = 0; j < nr && pids[j] != ids[i]; j++)
			;
		if (j == nr)
			pids[nr++] = ids[i];
	}
	return nr;
}

size_t hs_table_cgroups(const struct hs_table_map *m, uint64_t *ids, size_t max)
{
	return hs_table_keys(m, HOTSTACK_KEY_CGROUP, hs_stack_cgroup, ids, max);
}

int hs_profile_add_drops(struct hs_profile *p, const __u64 *drops)
{
	char name[64];
	int i, ret = 0;

	p->filtered = drops[HOTSTACK_DROP_FILTERED];
	for (i = 0; !ret && i < HOTSTACK_DROP_MAX; i++) {
		if (!drops[i] || i == HOTSTACK_DROP_FILTERED)
			continue;
		snprintf(name, sizeof(name), HS_DROPPED_FRAME ";[%s]", hs_drop_name(i));
		ret = hs_profile_add(p, name, strlen(name), drops[i]);
	}
	return ret;
}

const char *const hs_context_names[HS_NR_CONTEXTS] = {
	[HOTSTACK_CTX_TASK] = "[task]",
	[HOTSTACK_CTX_SOFTIRQ] = "[softirq]",
	[HOTSTACK_CTX_HARDIRQ] = "[hardirq]",
	[HOTSTACK_CTX_IDLE] = "[idle]",
	[HOTSTACK_CTX_SLEEP] = "[sleep]",
	[HOTSTACK_CTX_UNINTERRUPTIBLE] = "[uninterruptible]",
	[HOTSTACK_CTX_RUNQUEUE] = "[runqueue]",
};

/* Longest line: every frame a long symbol, plus the leading markers. */
#define HS_LINE_MAX ((HOTSTACK_MAX_DEPTH * 2 + 8) * 1024)

static char *hs_put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	p[len] = ';';
	return p + len + 1;
}

/* hs_put() of a name: one copy of a fixed size (inlined) for most. */
static char *hs_put_name(char *p, const char *s, size_t len)
{
	memcpy(p, s, HS_KSYM_NAMES_PAD);
	if (len > HS_KSYM_NAMES_PAD)
		memcpy(p + HS_KSYM_NAMES_PAD, s + HS_KSYM_NAMES_PAD, len - HS_KSYM_NAMES_PAD);
	p[len] = ';';
	return p + len + 1;
}

static const char hs_unknown[HS_KSYM_NAMES_PAD] = HS_UNKNOWN_FRAME;

/*
 * The cgroup key "[cgroup PATH];" at @q, by its captured path (its ';'
 * made ':'; past HS_CGROUP_FRAME_MAX bytes "..." and its end), else
 * "[cgroup ID];".
 */
static char *hs_put_cgroup(char *q, uint64_t id)
{
	const char *name = hs_cgroup_name(id);
	size_t i, len;

	if (!name)
		return q + sprintf(q, HS_CGROUP_KEY "%llu];", (unsigned long long)id);
	q += sprintf(q, HS_CGROUP_KEY);
	len = strlen(name);
	i = hs_cgroup_tail(name, len, HS_CGROUP_FRAME_MAX - 3);
	if (i) {
		memcpy(q, "...", 3);
		q += 3;
	}
	for (; i < len; i++)
		*q++ = name[i] == ';' ? ':' : name[i] == '\n' ? ' ' : name[i];
	return hs_put(q, "]", 1);
}

/* A task name (16 bytes, ';' made ':', a newline a space) and ';' at @q; none: nothing. */
static char *hs_put_comm(char *q, const char *comm)
{
	int i;

	for (i = 0; i < 16 && comm[i]; i++)
		*q++ = comm[i] == ';' ? ':' : comm[i] == '\n' ? ' ' : comm[i];
	if (i)
		*q++ = ';';
	return q;
}

/* A kernel frame @a (a return address) named at @q, up to @end. */
static char *hs_put_kframe(char *q, const char *end, const struct hs_ksyms *k, uint64_t a)
{
	size_t i = hs_ksyms_find(k, a - 1);

	if (i >= k->nr || k->sym[i].name == HS_KSYM_NONE)
		return hs_put(q, HS_UNKNOWN_FRAME, sizeof(HS_UNKNOWN_FRAME) - 1);
	if ((size_t)(end - q) <= k->sym[i].len)
		return q;
	return hs_put(q, k->names + k->sym[i].name, k->sym[i].len);
}

/*
 * "--;", then waker @wk's frames @f, innermost first (the chain graph's
 * way, as bcc's offwaketime folds them), its markers, then its name.
 */
static char *hs_put_waker(char *q, const char *end, const struct hotstack_waker *wk,
			  const uint64_t *f, const struct hs_ksyms *k, struct hs_usyms *u)
{
	const char *s;
	size_t len;
	int i;

	q = hs_put(q, "--", 2);
	for (i = 0; i < wk->nr_kernel && q < end; i++)
		q = hs_put_kframe(q, end, k, f[i]);
	for (; i < wk->nr_kernel + wk->nr_user && q < end; i++) {
		/* The first user frame is an instruction pointer; the others return. */
		uint64_t a = i == wk->nr_kernel ? f[i] : f[i] - 1;

		s = u && wk->tgid ? hs_usyms_lookup(u, wk->tgid, a, &len) : NULL;
		if (s && (size_t)(end - q) > len)
			q = hs_put(q, s, len);
		else if (u && wk->tgid)
			q = hs_put(q, HS_UNKNOWN_FRAME, sizeof(HS_UNKNOWN_FRAME) - 1);
		else
			q += sprintf(q, "0x%llx;", (unsigned long long)f[i]);
	}
	if (wk->flags & HOTSTACK_ENTRY_TRUNCATED)
		q = hs_put(q, "[truncated]", 11);
	if (wk->flags & HOTSTACK_ENTRY_USER_HIDDEN)
		q = hs_put(q, "[user hidden]", 13);
	if (wk->context != HOTSTACK_CTX_TASK && wk->context < HS_NR_CONTEXTS &&
	    hs_context_names[wk->context])
		q += sprintf(q, "%s;", hs_context_names[wk->context]);
	return hs_put_comm(q, wk->comm);
}

/*
 * Format stack @e (its frames @f, its kernel frames' ranges @sym) at @q,
 * as read() does, up to @end; returns the end of the line (not ended).
 */
static char *hs_format_line(char *q, const char *end, const struct hotstack_stack *e,
			    const uint64_t *f, const uint32_t *sym, int nk,
			    const struct hs_ksyms *k, struct hs_usyms *u, uint32_t pid,
			    unsigned int flags)
{
	int nr_user;
	const struct hotstack_waker *wk = hs_waker_of(e, f, &nr_user);
	char *line = q;
	const char *s;
	size_t len;
	int i;

	q = hs_put_comm(q, e->comm);
	if (e->tgid && !(flags & HS_PROFILE_NO_PID))
		q += sprintf(q, "[pid %u];", e->tgid);
	if (e->cgroup)
		q = hs_put_cgroup(q, e->cgroup);
	if (e->context && e->context < HS_NR_CONTEXTS &&
	    hs_context_names[e->context])
		q += sprintf(q, "%s;", hs_context_names[e->context]);
	if (e->flags & HOTSTACK_ENTRY_TRUNCATED)
		q = hs_put(q, "[truncated]", 11);
	if (e->flags & HOTSTACK_ENTRY_COLLAPSED)
		q += sprintf(q, "[collapsed %u];", e->depth);
	/* User frames, outermost first, then kernel frames. */
	for (i = e->nr_kernel + nr_user - 1; i >= e->nr_kernel && q < end; i--) {
		/* The first user frame is an instruction pointer; the others return. */
		uint64_t a = i == e->nr_kernel ? f[i] : f[i] - 1;

		s = u ? hs_usyms_lookup(u, e->tgid ? e->tgid : pid, a, &len) : NULL;
		if (s && (size_t)(end - q) > len)
			q = hs_put(q, s, len);
		else if (u && (e->tgid || pid))
			q = hs_put(q, HS_UNKNOWN_FRAME, sizeof(HS_UNKNOWN_FRAME) - 1);
		else
			q += sprintf(q, "0x%llx;", (unsigned long long)f[i]);
	}
	if (e->flags & HOTSTACK_ENTRY_USER_HIDDEN)
		q = hs_put(q, "[user hidden]", 13);
	else if ((e->flags & HOTSTACK_ENTRY_USER_MODE) && !e->nr_user)
		q = hs_put(q, "[user]", 6);
	for (i = nk - 1; i >= 0 && q < end; i--) {
		if (sym[i] == k->nr || k->sym[sym[i]].name == HS_KSYM_NONE) {
			s = hs_unknown;
			len = sizeof(HS_UNKNOWN_FRAME) - 1;
		} else {
			s = k->names + k->sym[sym[i]].name;
			len = k->sym[sym[i]].len;
		}
		if ((size_t)(end - q) <= len)
			break;
		q = hs_put_name(q, s, len);
	}
	if (wk && q < end)
		q = hs_put_waker(q, end, wk, f + e->nr_kernel + nr_user, k, u);
	return q > line ? q - 1 : q;
}

/* Kernel frames symbolized at once, over as many lines as they take. */
#define HS_BATCH_FRAMES 512

int hs_table_profile(const struct hs_table_copy *c, const struct hs_ksyms *k,
		     struct hs_usyms *u, uint32_t pid, struct hs_profile *p, unsigned int flags)
{
	size_t cap = c->nr_frames * 24 + 2 * HS_LINE_MAX, used = 0, n, b, nf;
	uint32_t sym[HS_BATCH_FRAMES + HOTSTACK_MAX_DEPTH];
	int i, nk, ret = -ENOMEM;
	size_t *off = NULL;
	char *text, *q;

	text = hs_malloc_big(cap);
	off = malloc((c->nr + 1) * sizeof(*off));
	if (!text || !off)
		goto out;
	for (n = 0; n < c->nr; n = b) {
		/*
		 * The ranges of a batch of lines' kernel frames first: the lookups
		 * miss the cache and are independent, so they overlap, and so do
		 * the loads of their names (prefetched) before they are copied.
		 * A return address is looked up as the call (address - 1),
		 * the innermost frame as it is (unless it returns too:
		 * HOTSTACK_ENTRY_CALLER).
		 */
		for (b = n, nf = 0; b < c->nr && nf < HS_BATCH_FRAMES; b++) {
			const struct hotstack_stack *e = &c->items[b].stack;
			const uint64_t *f = c->frames + e->frames;
			int ret0 = !!(e->flags & HOTSTACK_ENTRY_CALLER);

			nk = e->nr_kernel < HOTSTACK_MAX_DEPTH ? e->nr_kernel : HOTSTACK_MAX_DEPTH;
			for (i = 0; i < nk; i++)
				sym[nf++] = hs_ksyms_find(k, f[i] - (i > 0 || ret0));
		}
		for (i = 0; i < (int)nf; i++)
			__builtin_prefetch(&k->sym[sym[i] < k->nr ? sym[i] : 0]);
		for (i = 0; i < (int)nf; i++)
			if (sym[i] < k->nr && k->sym[sym[i]].name != HS_KSYM_NONE)
				__builtin_prefetch(k->names + k->sym[sym[i]].name);

		for (nf = 0; n < b; n++, nf += nk) {
			const struct hotstack_stack *e = &c->items[n].stack;

			nk = e->nr_kernel < HOTSTACK_MAX_DEPTH ? e->nr_kernel : HOTSTACK_MAX_DEPTH;
			/* Room for the longest line: the block grows (it may move). */
			if (cap - used < HS_LINE_MAX) {
				char *grown = realloc(text, cap *= 2);

				if (!grown)
					goto out;
				text = grown;
			}
			q = hs_format_line(text + used, text + used + HS_LINE_MAX - 64, e,
					   c->frames + e->frames, sym + nf, nk, k, u, pid, flags);
			*q = '\0';
			off[n] = used;
			used = q + 1 - text;
		}
	}
	/* The block stays where it is now: the profile owns it, its lines point into it. */
	if (hs_profile_reserve(p, c->nr + HOTSTACK_DROP_MAX) || hs_arena_adopt(&p->text, text))
		goto out;
	for (n = 0, ret = 0; n < c->nr && !ret; n++)
		ret = hs_profile_add_marked(p, text + off[n], (n + 1 < c->nr ? off[n + 1] : used) -
					    off[n] - 1, c->items[n].count,
					    (c->items[n].stack.flags & HOTSTACK_ENTRY_TRUNCATED ?
					     HS_MARK_TRUNCATED : 0) |
					    (c->items[n].stack.flags & HOTSTACK_ENTRY_COLLAPSED ?
					     HS_MARK_COLLAPSED : 0));
	text = NULL;
	ret = ret ?: hs_profile_add_drops(p, c->total.drops);
out:
	free(off);
	free(text);
	return ret;
}

int hs_session_profile(int fd, const struct hs_table_map *m, enum hs_table_gen which,
		       struct hs_usyms *u, uint32_t pid, struct hs_profile *p, unsigned int flags)
{
	struct hs_table_map own = { 0 };
	struct hs_table_copy c;
	struct hs_ksyms k;
	char err[512];
	int ret;

	if (!m || !m->base) {
		ret = hs_table_map(fd, &own);
		if (ret)
			return ret;
		m = &own;
	}
	ret = hs_ksyms_load(&k, NULL, "/proc/modules", err, sizeof(err));
	if (ret) {
		if (!(flags & HS_PROFILE_QUIET))
			fprintf(stderr, "hotstack: %s\n", err);
		goto out_unmap;
	}
	ret = hs_table_copy(m, which, &c);
	if (!ret) {
		ret = hs_table_profile(&c, &k, u, pid, p, flags);
		hs_table_copy_free(&c);
	}
	hs_ksyms_free(&k);
out_unmap:
	hs_table_unmap(&own);
	return ret;
}
