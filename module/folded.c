// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: read() text, folded stacks -- one line per distinct stack,
 * "frame;frame;...;frame count", outermost frame first, kernel frames
 * symbolized here (never a raw kernel address), user frames in hex.
 *
 * The first read() copies the active generation of every CPU (entries and
 * frames) and merges equal stacks across CPUs; later reads format from
 * that copy, so a long read is one consistent picture, and the copy is
 * freed when the reader reaches the end.
 */
#include <linux/kallsyms.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "hotstack.h"

struct hs_reader {
	struct hotstack_entry *items;	/* .frames indexes @frames */
	size_t nr_items;
	size_t next;		/* next item to format */
	u64 *frames;
	char *line;		/* the line being copied out */
	size_t line_len;
	size_t line_pos;
};

/* Longest line: every frame a symbol, plus the leading markers. */
#define HS_LINE_MAX	((HOTSTACK_MAX_DEPTH + 8) * (KSYM_SYMBOL_LEN + 1) + 32)

static int hs_cmp(u64 a, u64 b)
{
	return a < b ? -1 : a > b;
}

/* Total order on stack content: hash first, then every field and frame. */
static int hs_item_cmp(const void *pa, const void *pb, const void *priv)
{
	const struct hotstack_entry *a = pa, *b = pb;
	const struct hs_reader *r = priv;
	const u64 *fa = r->frames + a->frames, *fb = r->frames + b->frames;
	unsigned int i;
	int c;

	c = hs_cmp(a->hash, b->hash) ?: hs_cmp(a->nr_kernel, b->nr_kernel) ?:
	    hs_cmp(a->nr_user, b->nr_user) ?: hs_cmp(a->flags, b->flags) ?:
	    hs_cmp(a->context, b->context) ?: hs_cmp(a->depth, b->depth) ?:
	    hs_cmp(a->tgid, b->tgid) ?: memcmp(a->comm, b->comm, sizeof(a->comm));
	for (i = 0; !c && i < a->nr_kernel + a->nr_user; i++)
		c = hs_cmp(fa[i], fb[i]);
	return c;
}

static void hs_reader_free(struct hs_reader *r)
{
	if (!r)
		return;
	kvfree(r->items);
	kvfree(r->frames);
	kvfree(r->line);
	kfree(r);
}

/* A CPU's table at the start of a copy. */
struct hs_counts {
	u64 entries;
	u64 arena_used;
};

/* Copy the active generation of @s (locked) and merge equal stacks. */
static struct hs_reader *hs_reader_build(struct hotstack_session *s)
{
	unsigned int gen = s->active, i, j;
	size_t nr = 0, nr_frames = 0, k, out;
	struct hs_counts *snap;
	struct hs_reader *r;

	lockdep_assert_held(&s->lock);
	/* Each CPU's counts now: what it adds during the copy is left out. */
	snap = kvmalloc_array(s->nr_slots, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return NULL;
	for (i = 0; i < s->nr_slots; i++) {
		const struct hotstack_cpu_stats *st = s->slots[i].tab[gen].stats;

		snap[i].entries = READ_ONCE(st->entries);
		snap[i].arena_used = READ_ONCE(st->arena_used);
		nr += snap[i].entries;
		nr_frames += snap[i].arena_used;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto out_snap;
	r->items = kvmalloc_array(max_t(size_t, nr, 1), sizeof(*r->items), GFP_KERNEL);
	r->frames = kvmalloc_array(max_t(size_t, nr_frames, 1), sizeof(u64), GFP_KERNEL);
	r->line = kvmalloc(HS_LINE_MAX, GFP_KERNEL);
	if (!r->items || !r->frames || !r->line)
		goto out_free;

	/*
	 * Per CPU, so a CPU that adds stacks during the copy cannot take
	 * another's place: an entry published since its CPU's counts has its
	 * frames past that CPU's arena_used (one writer per table), and at
	 * most that CPU's count of entries is taken.
	 */
	k = 0;
	out = 0;
	for (i = 0; i < s->nr_slots; i++) {
		const struct hs_table *t = &s->slots[i].tab[gen];
		u64 taken = 0;

		for (j = 0; j <= t->mask && taken < snap[i].entries; j++) {
			const struct hotstack_entry *e = &t->entries[j];
			unsigned int n;

			/* Pairs with the release in hs_entry_fill(). */
			if (!smp_load_acquire(&e->hash))
				continue;
			n = e->nr_kernel + e->nr_user;
			if (e->frames + n > snap[i].arena_used)
				continue;
			r->items[k] = *e;
			r->items[k].count = READ_ONCE(e->count);
			r->items[k].frames = out;
			memcpy(r->frames + out, t->arena + e->frames, n * sizeof(u64));
			out += n;
			k++;
			taken++;
		}
	}
	kvfree(snap);

	sort_r(r->items, k, sizeof(*r->items), hs_item_cmp, NULL, r);

	/* Merge runs of equal stacks (from different CPUs) into their first. */
	r->nr_items = 0;
	for (i = 0; i < k; i++) {
		struct hotstack_entry *last = r->nr_items ? &r->items[r->nr_items - 1] : NULL;

		if (last && !hs_item_cmp(last, &r->items[i], r))
			last->count += r->items[i].count;
		else
			r->items[r->nr_items++] = r->items[i];
	}
	return r;

out_free:
	hs_reader_free(r);
out_snap:
	kvfree(snap);
	return NULL;
}

static const char *const hs_context_names[] = {
	[HOTSTACK_CTX_TASK] = "[task]",
	[HOTSTACK_CTX_SOFTIRQ] = "[softirq]",
	[HOTSTACK_CTX_HARDIRQ] = "[hardirq]",
	[HOTSTACK_CTX_IDLE] = "[idle]",
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
	if ((e->flags & HOTSTACK_ENTRY_USER_MODE) && !e->nr_user)
		p += sprintf(p, "[user];");
	for (i = e->nr_kernel - 1; i >= 0; i--)
		p += hs_put_ksym(p, f[i], i > 0);
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

	if (!r) {
		struct hotstack_session *src = s;
		bool configured;

		mutex_lock(&s->lock);
		if (s->state == HOTSTACK_STATE_NEW && hotstack_persistent) {
			src = hotstack_persistent;
			mutex_lock_nested(&src->lock, SINGLE_DEPTH_NESTING);
		}
		configured = src->state != HOTSTACK_STATE_NEW;
		if (configured)
			r = hs_reader_build(src);
		if (src != s)
			mutex_unlock(&src->lock);
		mutex_unlock(&s->lock);
		if (!configured)
			return 0;
		if (!r)
			return -ENOMEM;
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
