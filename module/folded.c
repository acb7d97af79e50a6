// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: read() text, folded stacks -- one line per distinct stack,
 * "frame;frame;...;frame count", outermost frame first, kernel frames
 * symbolized here (never a raw kernel address), user frames in hex.
 *
 * The first read() copies the active generation of every CPU (entries and
 * frames) and merges equal stacks across CPUs; later reads format from
 * that copy, so a long read is one consistent picture, and the copy is
 * freed when the reader reaches the end (or the session is configured or
 * RESET: the next read() starts from a new copy).
 */
#include <linux/hash.h>
#include <linux/kallsyms.h>
#include <linux/minmax.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "hotstack.h"

struct hs_reader {
	struct hotstack_entry *items;	/* .frames indexes @frames */
	size_t nr_items;
	size_t next;		/* next item to format */
	u64 *frames;
	char *line;		/* the line being copied out */
	struct hs_cg_key *cg;	/* cgroup keys formatted, HS_CG_CACHE of them */
	size_t line_len;
	size_t line_pos;
	int gen;		/* the session's reader_gen when copied */
};

/* The cgroup key's text at most: "[cgroup PATH];". */
#define HS_CG_KEY_MAX	(HOTSTACK_CGROUP_PATH_MAX + 16)

/* Cgroup keys formatted (by id, one a place): lines come in table order. */
#define HS_CG_CACHE_BITS	5
struct hs_cg_key {
	u64 id;
	char text[HS_CG_KEY_MAX];
};

/* Longest line: every frame a symbol, plus the leading markers. */
#define HS_LINE_MAX	((HOTSTACK_MAX_DEPTH + 8) * (KSYM_SYMBOL_LEN + 1) + HS_CG_KEY_MAX + 32)

/* Entries handled between two cond_resched(): a table can hold 2^24. */
#define HS_RESCHED_EVERY	4096

static int hs_cmp(u64 a, u64 b)
{
	return a < b ? -1 : a > b;
}

/* Whether two copied items hold the same stack: every field and frame. */
static bool hs_item_equal(const struct hs_reader *r, const struct hotstack_entry *a,
			  const struct hotstack_entry *b)
{
	const u64 *fa = r->frames + a->frames, *fb = r->frames + b->frames;
	unsigned int i;

	if (a->hash != b->hash || a->nr_kernel != b->nr_kernel || a->nr_user != b->nr_user ||
	    a->flags != b->flags || a->context != b->context || a->depth != b->depth ||
	    a->tgid != b->tgid || memcmp(a->comm, b->comm, sizeof(a->comm)) ||
	    a->cgroup != b->cgroup)
		return false;
	for (i = 0; i < a->nr_kernel + a->nr_user; i++)
		if (hs_cmp(fa[i], fb[i]))
			return false;
	return true;
}

/*
 * An array of @n elements of @size bytes; vmalloc() past INT_MAX bytes,
 * where kvmalloc() would warn (tables may hold more with a large
 * max_memory_mb). Charged to the reader's memory cgroup.
 */
static void *hs_alloc_array(size_t n, size_t size)
{
	size_t bytes;

	if (check_mul_overflow(max_t(size_t, n, 1), size, &bytes))
		return NULL;
	if (bytes > INT_MAX)
		return __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	return kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
}

static void hs_reader_free(struct hs_reader *r)
{
	if (!r)
		return;
	kvfree(r->items);
	kvfree(r->frames);
	kvfree(r->line);
	kvfree(r->cg);
	kfree(r);
}

/*
 * Copy the active generation of @s (locked). A table may be running: each
 * CPU's arena_used, read first, bounds what is taken from it. One writer
 * per table fills entries in arena order, and every entry takes at least
 * one arena word, so an entry whose frames end past that bound was made
 * during the copy and is left out; every other one published is taken.
 */
static struct hs_reader *hs_reader_copy(struct hotstack_session *s)
{
	const struct hs_tables *tabs = &s->tabs;
	unsigned int gen = s->active, i;
	size_t nr = 0, nr_frames = 0, k = 0, out = 0, j;
	u64 *limit;
	struct hs_reader *r;

	lockdep_assert_held(&s->lock);
	limit = kvmalloc_array(max_t(size_t, tabs->nr_slots, 1), sizeof(*limit), GFP_KERNEL);
	if (!limit)
		return NULL;
	for (i = 0; i < tabs->nr_slots; i++) {
		const struct hs_table *t = &tabs->slots[i].tab[gen];

		limit[i] = READ_ONCE(t->stats->arena_used);
		nr += min_t(u64, t->max_used, limit[i]);
		nr_frames += limit[i];
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto out_limit;
	r->items = hs_alloc_array(nr, sizeof(*r->items));
	r->frames = hs_alloc_array(nr_frames, sizeof(u64));
	r->line = kvmalloc(HS_LINE_MAX, GFP_KERNEL);
	r->cg = kvcalloc(1 << HS_CG_CACHE_BITS, sizeof(*r->cg), GFP_KERNEL);
	if (!r->items || !r->frames || !r->line || !r->cg)
		goto out_free;

	for (i = 0; i < tabs->nr_slots; i++) {
		const struct hs_table *t = &tabs->slots[i].tab[gen];

		for (j = 0; j <= t->mask; j++) {
			const struct hotstack_entry *e = &t->entries[j];
			unsigned int n;

			if (!(j % HS_RESCHED_EVERY))
				cond_resched();
			/* Pairs with the release in hs_entry_fill(). */
			if (!smp_load_acquire(&e->hash))
				continue;
			n = e->nr_kernel + e->nr_user;
			if (e->frames + hs_arena_words(n) > limit[i] || k == nr)
				continue;
			r->items[k] = *e;
			r->items[k].count = READ_ONCE(e->count);
			r->items[k].frames = out;
			memcpy(r->frames + out, t->arena + e->frames, n * sizeof(u64));
			out += n;
			k++;
		}
	}
	r->nr_items = k;
	kvfree(limit);
	return r;

out_free:
	hs_reader_free(r);
out_limit:
	kvfree(limit);
	return NULL;
}

/*
 * Merge equal stacks from different CPUs into one item, in linear time:
 * an index of the items by their hash (the same seed on every CPU).
 */
static int hs_reader_merge(struct hs_reader *r)
{
	size_t size = roundup_pow_of_two(max_t(size_t, 2 * r->nr_items, 2)), i, n = 0;
	u32 *index = hs_alloc_array(size, sizeof(u32));

	if (!index)
		return -ENOMEM;
	memset(index, 0xff, size * sizeof(u32));
	for (i = 0; i < r->nr_items; i++) {
		struct hotstack_entry *e = &r->items[i];
		size_t h = e->hash & (size - 1);

		if (!(i % HS_RESCHED_EVERY))
			cond_resched();
		for (; index[h] != U32_MAX; h = (h + 1) & (size - 1))
			if (hs_item_equal(r, &r->items[index[h]], e))
				break;
		if (index[h] != U32_MAX) {
			r->items[index[h]].count += e->count;
			continue;
		}
		/* Kept: moved down to the next free place (items before it are final). */
		r->items[n] = *e;
		index[h] = n++;
	}
	r->nr_items = n;
	kvfree(index);
	return 0;
}

static const char *const hs_context_names[] = {
	[HOTSTACK_CTX_TASK] = "[task]",
	[HOTSTACK_CTX_SOFTIRQ] = "[softirq]",
	[HOTSTACK_CTX_HARDIRQ] = "[hardirq]",
	[HOTSTACK_CTX_IDLE] = "[idle]",
	[HOTSTACK_CTX_SLEEP] = "[sleep]",
	[HOTSTACK_CTX_UNINTERRUPTIBLE] = "[uninterruptible]",
	[HOTSTACK_CTX_RUNQUEUE] = "[runqueue]",
};

/* Append a kernel symbol; @ret: a return address (look up the call). */
static size_t hs_put_ksym(char *p, u64 addr, bool ret)
{
	char sym[KSYM_SYMBOL_LEN];

	sprint_symbol_no_offset(sym, ret ? addr - 1 : addr);
	/* An address kallsyms does not know comes back in hex: hide it. */
	if (!strncmp(sym, "0x", 2))
		return sprintf(p, "[unknown];");
	return sprintf(p, "%s;", sym);
}

/*
 * The cgroup key at @p: "[cgroup PATH];" as the reader's cgroup namespace
 * names it (";" made ":", a newline a space), else "[cgroup ID];". Kept
 * by id: a table's lines of one cgroup are named once, or nearly.
 */
static char *hs_put_cgroup(struct hs_reader *r, char *p, u64 id)
{
	struct hs_cg_key *k = &r->cg[hash_64(id, HS_CG_CACHE_BITS)];
	char *path = k->text + 8;
	bool gone;

	if (id != k->id) {
		k->id = id;
		if (hotstack_cgroup_path(id, path, &gone) > 0) {
			memcpy(k->text, "[cgroup ", 8);
			strreplace(path, ';', ':');
			strreplace(path, '\n', ' ');
			strcat(path, "];");
		} else {
			sprintf(k->text, "[cgroup %llu];", id);
		}
	}
	return p + sprintf(p, "%s", k->text);
}

static void hs_format_line(struct hs_reader *r, const struct hotstack_entry *e)
{
	const u64 *f = r->frames + e->frames;
	char *p = r->line;
	int i;

	if (e->comm[0]) {
		char comm[sizeof(e->comm) + 1];

		strscpy(comm, e->comm, sizeof(comm));
		strreplace(comm, ';', ':');
		strreplace(comm, '\n', ' ');
		p += sprintf(p, "%s;", comm);
	}
	if (e->tgid)
		p += sprintf(p, "[pid %u];", e->tgid);
	if (e->cgroup)
		p = hs_put_cgroup(r, p, e->cgroup);
	if (e->context && e->context < ARRAY_SIZE(hs_context_names) &&
	    hs_context_names[e->context])
		p += sprintf(p, "%s;", hs_context_names[e->context]);
	if (e->flags & HOTSTACK_ENTRY_TRUNCATED)
		p += sprintf(p, "[truncated];");
	if (e->flags & HOTSTACK_ENTRY_COLLAPSED)
		p += sprintf(p, "[collapsed %u];", e->depth);
	/* User frames, outermost first, then kernel frames. */
	for (i = e->nr_kernel + e->nr_user - 1; i >= e->nr_kernel; i--)
		p += sprintf(p, "0x%llx;", f[i]);
	if (e->flags & HOTSTACK_ENTRY_USER_HIDDEN)
		p += sprintf(p, "[user hidden];");
	else if ((e->flags & HOTSTACK_ENTRY_USER_MODE) && !e->nr_user)
		p += sprintf(p, "[user];");
	for (i = e->nr_kernel - 1; i >= 0; i--)
		p += hs_put_ksym(p, f[i], i > 0 || (e->flags & HOTSTACK_ENTRY_CALLER));
	p[-1] = ' ';
	p += sprintf(p, "%llu\n", e->count);
	r->line_len = p - r->line;
	r->line_pos = 0;
}

/**
 * hotstack_read - read() of folded stacks
 * @reader: the reading session's cursor (NULL before the first read)
 * @s: the reading session; an unconfigured one reads the persistent session
 * @buf: user buffer
 * @count: its size
 *
 * Called with the reader's read_lock held (not its lock: copy_to_user()
 * may fault). Returns bytes copied, 0 at the end (and frees the cursor),
 * or -errno.
 */
ssize_t hotstack_read(void **reader, struct hotstack_session *s,
		      char __user *buf, size_t count)
{
	struct hs_reader *r = *reader;
	size_t done = 0, n;

	/* CONFIGURE or RESET since the copy: start over. */
	if (r && r->gen != atomic_read(&s->reader_gen)) {
		hs_reader_free(r);
		r = NULL;
		*reader = NULL;
	}
	if (!r) {
		struct hotstack_session *src = s;
		bool configured;
		int gen;

		mutex_lock(&s->lock);
		gen = atomic_read(&s->reader_gen);
		if (s->state == HOTSTACK_STATE_NEW && hotstack_persistent) {
			src = hotstack_persistent;
			mutex_lock_nested(&src->lock, SINGLE_DEPTH_NESTING);
		}
		configured = src->state != HOTSTACK_STATE_NEW;
		if (configured)
			r = hs_reader_copy(src);
		if (src != s)
			mutex_unlock(&src->lock);
		mutex_unlock(&s->lock);
		if (!configured)
			return 0;
		/* The copy is ours: merged without the session's lock. */
		if (r && hs_reader_merge(r)) {
			hs_reader_free(r);
			r = NULL;
		}
		if (!r)
			return -ENOMEM;
		r->gen = gen;
		*reader = r;
	}
	while (done < count) {
		if (r->line_pos == r->line_len) {
			if (r->next == r->nr_items)
				break;
			hs_format_line(r, &r->items[r->next++]);
		}
		n = min(count - done, r->line_len - r->line_pos);
		if (copy_to_user(buf + done, r->line + r->line_pos, n))
			return done ? done : -EFAULT;
		r->line_pos += n;
		done += n;
	}
	if (!done) {
		hs_reader_free(r);
		*reader = NULL;
	}
	return done;
}

void hotstack_reader_free(void **reader)
{
	hs_reader_free(*reader);
	*reader = NULL;
}
