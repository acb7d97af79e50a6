// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: the session's tables through mmap, to a profile.
 *
 * The header is read under its sequence counter (see the uapi header);
 * the generation is copied slot by slot, and the copy is kept only if the
 * generation did not change meanwhile. Equal stacks of different CPUs are
 * merged as read() merges them (every field and frame compared, so two
 * call sites of one callee stay two lines), then formatted exactly as
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
	uint32_t seq, state, gen_index, nr_slots, table_entries, entry_size, cpu_stats_size;
	uint32_t keys, stacks;
	uint64_t generation, arena_frames, slot_size, gen_offset;
};

static int hs_read_header(const struct hs_table_map *m, enum hs_table_gen which,
			  struct hs_hdr_view *v)
{
	const struct hotstack_mmap_header *h = m->base;
	unsigned int tries;
	uint32_t seq;

	if (m->size < sizeof(*h) || h->version != HOTSTACK_MMAP_VERSION ||
	    h->entry_size != sizeof(struct hotstack_entry))
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
	v->entry_size = h->entry_size;
	v->cpu_stats_size = h->cpu_stats_size;
	v->arena_frames = h->arena_frames;
	v->slot_size = h->slot_size;
	v->keys = h->keys;
	v->stacks = h->stacks;
	if (v->gen_index > 1)
		return -EINVAL;
	v->gen_offset = h->gen_offset[v->gen_index];
	if (v->gen_offset + (uint64_t)v->nr_slots * v->slot_size > m->size ||
	    v->cpu_stats_size < sizeof(struct hotstack_cpu_stats) ||
	    v->cpu_stats_size + (uint64_t)v->table_entries * v->entry_size +
	    v->arena_frames * sizeof(uint64_t) > v->slot_size)
		return -EINVAL;
	return 0;
}

/* Whether the header still shows the generation copied. */
static int hs_header_same(const struct hs_table_map *m, const struct hs_hdr_view *v)
{
	const struct hotstack_mmap_header *h = m->base;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* the copy, then seq */
	return __atomic_load_n(&h->seq, __ATOMIC_RELAXED) == v->seq;
}

/* read()'s equality: every field but the count, then every frame. */
static int hs_item_equal(const struct hs_table_copy *c, const struct hotstack_entry *a,
			 const struct hotstack_entry *b)
{
	return a->hash == b->hash && a->nr_kernel == b->nr_kernel && a->nr_user == b->nr_user &&
	       a->flags == b->flags && a->context == b->context && a->depth == b->depth &&
	       a->tgid == b->tgid && !memcmp(a->comm, b->comm, sizeof(a->comm)) &&
	       a->cgroup == b->cgroup &&
	       !memcmp(c->frames + a->frames, c->frames + b->frames,
		       (a->nr_kernel + a->nr_user) * sizeof(uint64_t));
}

/* Merge equal stacks of different CPUs (an open-addressing set on the hash). */
static int hs_merge(struct hs_table_copy *c, unsigned int nr_slots)
{
	size_t size = 16, mask, i, out = 0, slot;
	struct { uint32_t idx, hash; } *set;
	unsigned int shift = 64 - 4;

	/* One CPU's table never holds a stack twice. */
	if (nr_slots < 2)
		return 0;
	while (size < c->nr * 2) {
		size *= 2;
		shift--;
	}
	mask = size - 1;
	set = hs_malloc_big(size * sizeof(*set));
	if (!set)
		return -ENOMEM;
	memset(set, 0xff, size * sizeof(*set));
	for (i = 0; i < c->nr; i++) {
		struct hotstack_entry *e = &c->items[i];
		uint32_t h = e->hash >> 32;

		/*
		 * In the tables' own order (their index is the hash's top
		 * bits, as here): each CPU's items sweep the set instead of
		 * jumping all over it. The hash's high half first: items are
		 * read only when it matches.
		 */
		for (slot = e->hash >> shift; set[slot].idx != UINT32_MAX;
		     slot = (slot + 1) & mask)
			if (set[slot].hash == h && hs_item_equal(c, &c->items[set[slot].idx], e))
				break;
		if (set[slot].idx != UINT32_MAX) {
			c->items[set[slot].idx].count += e->count;
			continue;
		}
		set[slot].idx = out;
		set[slot].hash = h;
		c->items[out++] = *e;
	}
	free(set);
	c->nr = out;
	return 0;
}

static int hs_copy_once(const struct hs_table_map *m, const struct hs_hdr_view *v,
			struct hs_table_copy *c)
{
	size_t cap_items = 0, cap_frames = 0;
	unsigned int slot, i;

	memset(&c->total, 0, sizeof(c->total));
	c->nr = 0;
	c->nr_frames = 0;
	/* Room for what the counters say is there; grown if more was published. */
	for (slot = 0; slot < v->nr_slots; slot++) {
		const struct hotstack_cpu_stats *st = (const void *)((const char *)m->base +
			v->gen_offset + slot * v->slot_size);

		cap_items += __atomic_load_n(&st->entries, __ATOMIC_RELAXED);
		cap_frames += __atomic_load_n(&st->arena_used, __ATOMIC_RELAXED);
	}
	cap_items += 64;
	cap_frames += 1024;
	free(c->items);
	free(c->frames);
	c->items = hs_malloc_big(cap_items * sizeof(*c->items));
	c->frames = hs_malloc_big(cap_frames * sizeof(*c->frames));
	if (!c->items || !c->frames)
		return -ENOMEM;

	for (slot = 0; slot < v->nr_slots; slot++) {
		const char *base = (const char *)m->base + v->gen_offset + slot * v->slot_size;
		const struct hotstack_cpu_stats *st = (const void *)base;
		const struct hotstack_entry *e = (const void *)(base + v->cpu_stats_size);
		const uint64_t *arena = (const void *)(base + v->cpu_stats_size +
						       (size_t)v->table_entries * v->entry_size);
		const uint64_t *src = (const uint64_t *)st;
		uint64_t *dst = (uint64_t *)&c->total;

		/* Every field of the counters is a __u64 that adds up. */
		for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
		for (i = 0; i < v->table_entries; i++) {
			struct hotstack_entry *out;
			unsigned int n;

			/* Pairs with the release of the hash in the kernel. */
			if (!__atomic_load_n(&e[i].hash, __ATOMIC_ACQUIRE))
				continue;
			if (c->nr == cap_items) {
				void *grown = realloc(c->items, (cap_items *= 2) * sizeof(*c->items));

				if (!grown)
					return -ENOMEM;
				c->items = grown;
			}
			out = &c->items[c->nr];
			*out = e[i];
			n = out->nr_kernel + out->nr_user;
			if (out->frames + (uint64_t)n > v->arena_frames)
				continue;	/* torn: the generation check below retries */
			while (c->nr_frames + n > cap_frames) {
				void *grown = realloc(c->frames, (cap_frames *= 2) * sizeof(*c->frames));

				if (!grown)
					return -ENOMEM;
				c->frames = grown;
			}
			memcpy(c->frames + c->nr_frames, arena + out->frames, n * sizeof(uint64_t));
			out->frames = c->nr_frames;
			c->nr_frames += n;
			c->nr++;
		}
	}
	return 0;
}

int hs_table_copy(const struct hs_table_map *m, enum hs_table_gen which,
		  struct hs_table_copy *c)
{
	struct hs_hdr_view v = { 0 };
	unsigned int tries;
	int ret;

	memset(c, 0, sizeof(*c));
	for (tries = 0; tries < 100; tries++) {
		ret = hs_read_header(m, which, &v);
		if (ret)
			return ret;
		ret = hs_copy_once(m, &v, c);
		if (ret)
			goto out_free;
		if (hs_header_same(m, &v))
			break;
	}
	if (tries == 100) {
		ret = -EAGAIN;
		goto out_free;
	}
	c->generation = v.generation;
	c->state = v.state;
	c->keys = v.keys;
	c->stacks = v.stacks;
	ret = hs_merge(c, v.nr_slots);
	if (ret)
		goto out_free;
	return 0;

out_free:
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
 * The distinct nonzero values @key gives of the active generation's
 * entries, at most @max, when the session counts by @need (a
 * HOTSTACK_KEY_*): one pass over the tables, a set on the side.
 */
static size_t hs_table_keys(const struct hs_table_map *m, uint32_t need,
			    uint64_t (*key)(const struct hotstack_entry *), uint64_t *out, size_t max)
{
	size_t nr = 0, size = 1, k;
	struct hs_hdr_view v;
	unsigned int slot, i;
	uint64_t *set;

	if (hs_read_header(m, HS_GEN_ACTIVE, &v) || !(v.keys & need) || !max)
		return 0;
	while (size < 2 * max)
		size *= 2;
	set = calloc(size, sizeof(*set));
	if (!set)
		return 0;
	for (slot = 0; slot < v.nr_slots && nr < max; slot++) {
		const struct hotstack_entry *e = (const void *)((const char *)m->base + v.gen_offset +
			slot * v.slot_size + v.cpu_stats_size);

		for (i = 0; i < v.table_entries && nr < max; i++) {
			uint64_t x;

			if (!__atomic_load_n(&e[i].hash, __ATOMIC_ACQUIRE))
				continue;
			x = key(&e[i]);
			if (!x)
				continue;
			for (k = (x * 0x9e3779b97f4a7c15ULL) >> 40; set[k & (size - 1)] &&
			     set[k & (size - 1)] != x; k++)
				;
			if (!set[k & (size - 1)])
				out[nr++] = set[k & (size - 1)] = x;
		}
	}
	free(set);
	return nr;
}

static uint64_t hs_entry_tgid(const struct hotstack_entry *e)
{
	return e->tgid;
}

static uint64_t hs_entry_cgroup(const struct hotstack_entry *e)
{
	return e->cgroup;
}

size_t hs_table_pids(const struct hs_table_map *m, uint32_t *pids, size_t max)
{
	uint64_t ids[4096];
	size_t i, nr = hs_table_keys(m, HOTSTACK_KEY_TGID, hs_entry_tgid, ids,
				     max < 4096 ? max : 4096);

	for (i = 0; i < nr; i++)
		pids[i] = ids[i];
	return nr;
}

size_t hs_table_cgroups(const struct hs_table_map *m, uint64_t *ids, size_t max)
{
	return hs_table_keys(m, HOTSTACK_KEY_CGROUP, hs_entry_cgroup, ids, max);
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

/*
 * Format entry @e (its frames @f, its kernel frames' ranges @sym) at @q,
 * as read() does, up to @end; returns the end of the line (not ended).
 */
static char *hs_format_line(char *q, const char *end, const struct hotstack_entry *e,
			    const uint64_t *f, const uint32_t *sym, int nk,
			    const struct hs_ksyms *k, struct hs_usyms *u, uint32_t pid,
			    unsigned int flags)
{
	char *line = q;
	const char *s;
	size_t len;
	int i;

	if (e->comm[0]) {
		for (i = 0; i < (int)sizeof(e->comm) && e->comm[i]; i++)
			*q++ = e->comm[i] == ';' ? ':' : e->comm[i] == '\n' ? ' ' : e->comm[i];
		*q++ = ';';
	}
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
	for (i = e->nr_kernel + e->nr_user - 1; i >= e->nr_kernel && q < end; i--) {
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
			const uint64_t *f = c->frames + c->items[b].frames;
			int ret0 = !!(c->items[b].flags & HOTSTACK_ENTRY_CALLER);

			nk = c->items[b].nr_kernel < HOTSTACK_MAX_DEPTH ? c->items[b].nr_kernel :
									  HOTSTACK_MAX_DEPTH;
			for (i = 0; i < nk; i++)
				sym[nf++] = hs_ksyms_find(k, f[i] - (i > 0 || ret0));
		}
		for (i = 0; i < (int)nf; i++)
			__builtin_prefetch(&k->sym[sym[i] < k->nr ? sym[i] : 0]);
		for (i = 0; i < (int)nf; i++)
			if (sym[i] < k->nr && k->sym[sym[i]].name != HS_KSYM_NONE)
				__builtin_prefetch(k->names + k->sym[sym[i]].name);

		for (nf = 0; n < b; n++, nf += nk) {
			const struct hotstack_entry *e = &c->items[n];

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
					    (c->items[n].flags & HOTSTACK_ENTRY_TRUNCATED ?
					     HS_MARK_TRUNCATED : 0) |
					    (c->items[n].flags & HOTSTACK_ENTRY_COLLAPSED ?
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
