// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: read() text, folded stacks -- one line per distinct stack,
 * "frame;frame;...;frame count", outermost frame first, kernel frames
 * symbolized here (never a raw kernel address), user frames in hex.
 *
 * The first read() copies the active generation (each stack of the store
 * that a CPU counted, with the counts of every CPU added up); later reads
 * format from that copy, so a long read is one consistent picture, and the copy is
 * freed when the reader reaches the end (or the session is configured or
 * RESET: the next read() starts from a new copy).
 */
#include <linux/hash.h>
#include <linux/kallsyms.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "hotstack.h"

/* A stack and its count, as read() formats it. */
struct hs_item {
	struct hotstack_stack st;	/* .frames indexes hs_reader.frames */
	u64 count;
};

struct hs_reader {
	struct hs_item *items;
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

/* Longest line: every frame a symbol, plus the markers (a waker's too). */
#define HS_LINE_MAX	((HOTSTACK_MAX_DEPTH + 16) * (KSYM_SYMBOL_LEN + 1) + HS_CG_KEY_MAX + 32)

/* Entries handled between two cond_resched(): a table can hold 2^24. */
#define HS_RESCHED_EVERY	4096

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
 * Copy the active generation of @s (locked). It may be running: a count
 * entry is published after the stack it names is complete, so each one
 * seen names a whole stack; the counts are added up per stack (the store
 * holds each stack once, whichever CPUs count it).
 */
static struct hs_reader *hs_reader_copy(struct hotstack_session *s)
{
	const struct hs_tables *tabs = &s->tabs;
	const struct hs_store *store = &tabs->store[s->active];
	size_t places = (size_t)store->mask + 1, k = 0, out = 0, nr = 0, nr_frames = 0, j;
	unsigned int i;
	struct hs_reader *r;
	u64 *sum;

	lockdep_assert_held(&s->lock);
	sum = hs_alloc_array(places, sizeof(*sum));
	if (!sum)
		return NULL;
	memset(sum, 0, places * sizeof(*sum));
	for (i = 0; i < tabs->nr_slots; i++) {
		const struct hs_table *t = &tabs->slots[i].tab[s->active];

		for (j = 0; j <= t->mask; j++) {
			const struct hotstack_count *c = &t->counts[j];
			/* Pairs with the release in hs_count_new(). */
			u32 id = smp_load_acquire(&c->stack);

			if (!(j % HS_RESCHED_EVERY))
				cond_resched();
			if (!id || id > places)
				continue;
			/* sum - 1 is the count: 0, a stack no CPU counted. */
			if (!sum[id - 1]) {
				const struct hotstack_stack *e = &store->stacks[id - 1];

				nr++;
				nr_frames += e->nr_kernel + e->nr_user;
				sum[id - 1] = 1;
			}
			sum[id - 1] += READ_ONCE(c->count);
		}
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto out_sum;
	r->items = hs_alloc_array(nr, sizeof(*r->items));
	r->frames = hs_alloc_array(nr_frames, sizeof(u64));
	r->line = kvmalloc(HS_LINE_MAX, GFP_KERNEL);
	r->cg = kvcalloc(1 << HS_CG_CACHE_BITS, sizeof(*r->cg), GFP_KERNEL);
	if (!r->items || !r->frames || !r->line || !r->cg)
		goto out_free;
	for (j = 0; j < places && k < nr; j++) {
		const struct hotstack_stack *e = &store->stacks[j];
		unsigned int n = e->nr_kernel + e->nr_user;

		if (!(j % HS_RESCHED_EVERY))
			cond_resched();
		if (!sum[j])
			continue;
		r->items[k].st = *e;
		r->items[k].st.frames = out;
		r->items[k].count = sum[j] - 1;
		memcpy(r->frames + out, store->arena + e->frames, n * sizeof(u64));
		out += n;
		k++;
	}
	r->nr_items = k;
	kvfree(sum);
	return r;

out_free:
	hs_reader_free(r);
out_sum:
	kvfree(sum);
	return NULL;
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

/* A task name @name (TASK_COMM_LEN bytes, ';' made ':', a newline a space) and ';'. */
static char *hs_put_comm(char *p, const char *name)
{
	char comm[TASK_COMM_LEN + 1];

	strscpy(comm, name, sizeof(comm));
	strreplace(comm, ';', ':');
	strreplace(comm, '\n', ' ');
	return p + sprintf(p, "%s;", comm);
}

/*
 * The waker a stack ends with (HOTSTACK_ENTRY_WAKER), or NULL; *@nr_user:
 * the sleeper's own user frames.
 */
static const struct hotstack_waker *hs_waker_of(const struct hotstack_stack *e, const u64 *f,
						int *nr_user)
{
	const struct hotstack_waker *wk;

	*nr_user = e->nr_user;
	if (!(e->flags & HOTSTACK_ENTRY_WAKER) || e->nr_user < HOTSTACK_WAKER_WORDS)
		return NULL;
	wk = (const void *)(f + e->nr_kernel + e->nr_user - HOTSTACK_WAKER_WORDS);
	if (wk->magic != HOTSTACK_WAKER_MAGIC ||
	    wk->nr_kernel + wk->nr_user > e->nr_user - HOTSTACK_WAKER_WORDS)
		return NULL;
	*nr_user = e->nr_user - HOTSTACK_WAKER_WORDS - wk->nr_kernel - wk->nr_user;
	return wk;
}

/*
 * "--;", then waker @wk's frames at @f, innermost first (the chain graph's
 * way, as bcc's offwaketime folds them), its markers, then its name.
 */
static char *hs_put_waker(char *p, const struct hotstack_waker *wk, const u64 *f)
{
	int i;

	p += sprintf(p, "--;");
	for (i = 0; i < wk->nr_kernel; i++)
		p += hs_put_ksym(p, f[i], true);
	for (; i < wk->nr_kernel + wk->nr_user; i++)
		p += sprintf(p, "0x%llx;", f[i]);
	if (wk->flags & HOTSTACK_ENTRY_TRUNCATED)
		p += sprintf(p, "[truncated];");
	if (wk->flags & HOTSTACK_ENTRY_USER_HIDDEN)
		p += sprintf(p, "[user hidden];");
	if (wk->context != HOTSTACK_CTX_TASK && wk->context < ARRAY_SIZE(hs_context_names) &&
	    hs_context_names[wk->context])
		p += sprintf(p, "%s;", hs_context_names[wk->context]);
	if (wk->comm[0])
		p = hs_put_comm(p, wk->comm);
	return p;
}

static void hs_format_line(struct hs_reader *r, const struct hs_item *item)
{
	const struct hotstack_stack *e = &item->st;
	const u64 *f = r->frames + e->frames;
	const struct hotstack_waker *wk;
	char *p = r->line;
	int i, nr_user;

	if (e->comm[0])
		p = hs_put_comm(p, e->comm);
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
	wk = hs_waker_of(e, f, &nr_user);
	/* User frames, outermost first, then kernel frames. */
	for (i = e->nr_kernel + nr_user - 1; i >= e->nr_kernel; i--)
		p += sprintf(p, "0x%llx;", f[i]);
	if (e->flags & HOTSTACK_ENTRY_USER_HIDDEN)
		p += sprintf(p, "[user hidden];");
	else if ((e->flags & HOTSTACK_ENTRY_USER_MODE) && !e->nr_user)
		p += sprintf(p, "[user];");
	for (i = e->nr_kernel - 1; i >= 0; i--)
		p += hs_put_ksym(p, f[i], i > 0 || (e->flags & HOTSTACK_ENTRY_CALLER));
	if (wk)
		p = hs_put_waker(p, wk, f + e->nr_kernel + nr_user);
	p[-1] = ' ';
	p += sprintf(p, "%llu\n", item->count);
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
