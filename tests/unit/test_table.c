// SPDX-License-Identifier: GPL-2.0
/*
 * The table reader: a synthetic mapping (a store of stacks shared by the
 * CPUs, each CPU's counts of them), copied, counts added by stack and
 * formatted with the tool's symbols must give read()'s lines exactly; a
 * mapping that does not add up is refused, a count that names no stack
 * of the store left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cgroup.h"
#include "hs_synth.h"
#include "profile.h"
#include "symbols.h"
#include "table.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000200 T alias_first\n"
	"ffffffff81000200 T alias_second\n"
	"ffffffff81000300 W weak_fn\n"
	"ffffffff81000400 T _etext\n"
	"ffffffffc0000000 t mod_fn\t[mod_a]\n";

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile's lines as "STACK COUNT", sorted, joined by newlines. */
static char *sorted_text(const struct hs_profile *p)
{
	char **l = calloc(p->nr, sizeof(*l)), *out;
	size_t i, len = 1;

	for (i = 0; i < p->nr; i++) {
		assert_true(asprintf(&l[i], "%s %llu", p->lines[i].stack,
				     (unsigned long long)p->lines[i].count) > 0);
		len += strlen(l[i]) + 1;
	}
	qsort(l, p->nr, sizeof(*l), line_cmp);
	out = calloc(1, len);
	for (i = 0; i < p->nr; i++) {
		strcat(out, l[i]);
		strcat(out, "\n");
		free(l[i]);
	}
	free(l);
	return out;
}

static void load_syms(struct hs_ksyms *k)
{
	char name[] = "/tmp/hs-test-XXXXXX", err[512];
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, kallsyms, strlen(kallsyms)), (ssize_t)strlen(kallsyms));
	close(fd);
	assert_int_equal(hs_ksyms_load(k, name, NULL, err, sizeof(err)), 0);
	unlink(name);
}

static void like_read(void **state)
{
	/* Innermost first, as in the arena. */
	static const uint64_t keyed[] = { 0xffffffff81000110, 0xffffffff81000201 };
	static const uint64_t site2[] = { 0xffffffff81000110, 0xffffffff81000210 };
	static const uint64_t cut[] = { 0xffffffff81000301 };
	static const uint64_t user[] = { 0xffffffffc0000010, 0x401000, 0x402005 };
	static const uint64_t unknown[] = { 0xdead, 0xffffffff81000500 };
	struct hs_table_map m = { 0 };
	struct hs_table_copy c;
	struct hs_profile p = { 0 };
	struct hotstack_stack *e;
	struct hs_synth s;
	struct hs_ksyms k;
	char *text;
	size_t i;

	(void)state;
	load_syms(&k);
	assert_int_equal(hs_synth_init(&s, 2, 64, 256), 0);
	/* One keyed stack of the store, counted by both CPUs: one line, counts added. */
	e = hs_synth_add(&s, 1, 0, keyed, 2, 0, 5);
	memcpy(e->comm, "sh;x\n", 5);
	e->tgid = 42;
	e->context = HOTSTACK_CTX_TASK;
	assert_non_null(hs_synth_count(&s, 1, 1, e, 3));
	/* Another process: a stack, and a line, of its own. */
	e = hs_synth_add(&s, 1, 1, keyed, 2, 0, 1);
	memcpy(e->comm, "sh;x\n", 5);
	e->tgid = 43;
	e->context = HOTSTACK_CTX_SOFTIRQ;
	/*
	 * Two call sites of one callee: two stacks, the same text twice in
	 * read(); the profile has it once, with the counts added.
	 */
	hs_synth_add(&s, 1, 0, keyed, 2, 0, 2);
	hs_synth_add(&s, 1, 0, site2, 2, 0, 4);
	e = hs_synth_add(&s, 1, 1, cut, 1, 0, 6);
	e->flags = HOTSTACK_ENTRY_TRUNCATED | HOTSTACK_ENTRY_COLLAPSED;
	e->depth = 4;
	hs_synth_add(&s, 1, 0, user, 1, 2, 7);
	e = hs_synth_add(&s, 1, 0, NULL, 0, 0, 8);
	e->flags = HOTSTACK_ENTRY_USER_MODE;
	hs_synth_add(&s, 1, 1, unknown, 2, 0, 9);
	hs_synth_stats(&s, 1, 0)->drops[HOTSTACK_DROP_TABLE_FULL] = 10;
	hs_synth_stats(&s, 1, 1)->drops[HOTSTACK_DROP_TABLE_FULL] = 1;
	hs_synth_stats(&s, 1, 1)->drops[HOTSTACK_DROP_FILTERED] = 12;
	hs_synth_stats(&s, 1, 0)->drops[HOTSTACK_DROP_NESTED] = 13;
	hs_synth_stats(&s, 1, 1)->drops[HOTSTACK_DROP_BUSY] = 14;
	/* The active generation holds something else. */
	hs_synth_add(&s, 0, 0, cut, 1, 0, 99);

	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	/* Eight stacks in the store, nine count entries. */
	assert_int_equal(c.nr, 8);
	assert_int_equal(hs_synth_stats(&s, 1, 0)->entries + hs_synth_stats(&s, 1, 1)->entries, 9);
	/* The fullest count table: slot 0's 5 (CPU 0), of 64. */
	assert_int_equal(hs_synth_stats(&s, 1, 0)->entries, 5);
	assert_int_equal(c.fill.most, 5);
	assert_int_equal(c.fill.cpu, 0);
	assert_int_equal(c.fill.cpu_entries, 64);
	/* The counters as GET_STATS totals them: the store's stacks and frames. */
	assert_int_equal(c.total.entries, 8);
	assert_int_equal(c.total.arena_used, 2 + 2 + 2 + 2 + 1 + 3 + 0 + 2);
	assert_int_equal(c.total.counted, 5 + 3 + 1 + 2 + 4 + 6 + 7 + 8 + 9);
	for (i = 0; i < c.nr; i++)
		if (c.items[i].stack.tgid == 42)
			assert_int_equal(c.items[i].count, 8);
	assert_int_equal(hs_table_profile(&c, &k, NULL, 0, &p, 0), 0);
	text = sorted_text(&p);
	assert_string_equal(text,
		"0x402005;0x401000;mod_fn [mod_a] 7\n"
		"[dropped];[busy] 14\n"
		"[dropped];[nested] 13\n"
		"[dropped];[table full] 11\n"
		"[truncated];[collapsed 4];weak_fn 6\n"
		"[unknown];[unknown] 9\n"
		"[user] 8\n"
		"alias_first;local_fn 6\n"
		"sh:x ;[pid 42];[task];alias_first;local_fn 8\n"
		"sh:x ;[pid 43];[softirq];alias_first;local_fn 1\n");
	assert_int_equal(p.filtered, 12);
	assert_int_equal(p.dropped, 38);
	assert_int_equal(p.truncated, 6);
	assert_int_equal(p.collapsed, 6);
	free(text);
	hs_profile_free(&p);
	hs_table_copy_free(&c);

	assert_int_equal(hs_table_copy(&m, HS_GEN_ACTIVE, &c), 0);
	assert_int_equal(c.nr, 1);
	assert_int_equal(c.items[0].count, 99);
	hs_table_copy_free(&c);
	free(s.buf);
	hs_ksyms_free(&k);
}

/*
 * The fullest CPU count table, live (the active generation) and in a
 * copy: its entries and its CPU, by the slot's CPU number.
 */
static void fullest_count_table(void **state)
{
	static const uint64_t a[] = { 0xffffffff81000110 }, b[] = { 0xffffffff81000210 };
	struct hs_table_map m = { 0 };
	struct hs_table_fill f;
	struct hs_table_copy c;
	struct hs_synth s;

	(void)state;
	assert_int_equal(hs_synth_init_store(&s, 3, 64, 16, 256), 0);
	s.h->slot_cpu[2] = 7;
	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_fullest(&m, &f), 0);
	assert_int_equal(f.most, 0);
	assert_int_equal(f.cpu_entries, 16);
	/* Active generation: slot 2 (CPU 7) counts two stacks, slot 0 one. */
	assert_non_null(hs_synth_add(&s, 0, 0, a, 1, 0, 1));
	assert_non_null(hs_synth_add(&s, 0, 2, a, 1, 0, 1));
	assert_non_null(hs_synth_add(&s, 0, 2, b, 1, 0, 1));
	assert_int_equal(hs_table_fullest(&m, &f), 0);
	assert_int_equal(f.most, 2);
	assert_int_equal(f.cpu, 7);
	assert_int_equal(hs_table_copy(&m, HS_GEN_ACTIVE, &c), 0);
	assert_int_equal(c.fill.most, 2);
	assert_int_equal(c.fill.cpu, 7);
	hs_table_copy_free(&c);
	/* Not a table: refused. */
	s.h->version = 1;
	assert_int_equal(hs_table_fullest(&m, &f), -EINVAL);
	free(s.buf);
}

/*
 * Every CPU's count of one stack adds into one item, whichever slots and
 * places of their tables the counts sit at; a stack counted by no CPU
 * (stored, then the CPU's count table was full) is not an item.
 */
static void counts_merge_by_stack(void **state)
{
	struct hs_table_map m = { 0 };
	struct hotstack_stack *e[40];
	struct hs_table_copy c;
	struct hs_synth s;
	uint64_t f[2], want[40] = { 0 }, sum = 0;
	unsigned int i, cpu;
	size_t n;

	(void)state;
	/* 16 CPUs counting up to 32 stacks each, of a store of 64. */
	assert_int_equal(hs_synth_init_store(&s, 16, 64, 32, 1024), 0);
	for (i = 0; i < 40; i++) {
		f[0] = 0xffffffff81000000 + i;
		f[1] = 0xffffffff81000100;
		e[i] = hs_synth_stack(&s, 1, f, 2, 0);
		assert_non_null(e[i]);
	}
	/* Stack i on every CPU c where (i + c) % 3 == 0, c + 1 times; stack 39 never counted. */
	for (cpu = 0; cpu < 16; cpu++)
		for (i = 0; i < 39; i++)
			if ((i + cpu) % 3 == 0) {
				assert_non_null(hs_synth_count(&s, 1, cpu, e[i], cpu + 1));
				want[i] += cpu + 1;
				sum += cpu + 1;
			}
	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	assert_int_equal(c.nr, 39);
	assert_int_equal(c.nr_frames, 2 * 39);
	for (n = 0; n < c.nr; n++) {
		const uint64_t *fr = c.frames + c.items[n].stack.frames;

		i = fr[0] - 0xffffffff81000000;
		assert_true(i < 39);
		assert_int_equal(fr[1], 0xffffffff81000100);
		assert_int_equal(c.items[n].count, want[i]);
		want[i] = 0;	/* once each */
		sum -= c.items[n].count;
	}
	assert_int_equal(sum, 0);
	assert_int_equal(c.total.entries, 40);
	hs_table_copy_free(&c);
	free(s.buf);
}

/*
 * Counts the reader cannot trust are left out, never followed: one naming
 * no stack of the store (past its end), one naming a free place, or a
 * stack not READY (FILLING, DEAD: a count only ever names a READY one).
 */
static void bad_counts_skipped(void **state)
{
	static const uint64_t f[] = { 0xffffffff81000110 }, g[] = { 0xffffffff81000210 };
	struct hs_table_map m = { 0 };
	struct hotstack_stack *ok, *filling, *dead, *far;
	struct hotstack_count *cnt;
	struct hs_table_copy c;
	struct hs_synth s;

	(void)state;
	assert_int_equal(hs_synth_init_store(&s, 2, 16, 16, 64), 0);
	ok = hs_synth_add(&s, 1, 0, f, 1, 0, 5);
	filling = hs_synth_add(&s, 1, 1, g, 1, 0, 100);
	dead = hs_synth_add(&s, 1, 0, g, 1, 0, 1000);
	assert_non_null(ok);
	assert_non_null(filling);
	assert_non_null(dead);
	filling->hash = (filling->hash & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_FILLING;
	dead->hash = (dead->hash & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_DEAD;
	/* A frame index past the arena, on a READY stack: left out too. */
	far = hs_synth_add(&s, 1, 1, g, 1, 0, 7);
	assert_non_null(far);
	far->frames = 64;
	/* Counts naming the store's end, past it, and a free place. */
	cnt = hs_synth_counts(&s, 1, 1);
	while (cnt->stack)
		cnt++;
	cnt[0].stack = 17;
	cnt[0].count = 10000;
	cnt[1].stack = UINT32_MAX;
	cnt[1].count = 20000;
	cnt = hs_synth_counts(&s, 1, 0);
	while (cnt->stack)
		cnt++;
	for (cnt->stack = 1; hs_synth_stacks(&s, 1)[cnt->stack - 1].hash; cnt->stack++)
		;
	cnt->count = 40000;

	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	assert_int_equal(c.nr, 1);
	assert_int_equal(c.items[0].count, 5);
	assert_int_equal(c.frames[c.items[0].stack.frames], f[0]);
	hs_table_copy_free(&c);
	free(s.buf);
}

/* Every header field the layout hangs on is checked against the mapping. */
static void header_checked(void **state)
{
	static const uint64_t f[] = { 0xffffffff81000110 };
	struct hs_table_map m = { 0 };
	struct hotstack_mmap_header good;
	struct hs_table_copy c;
	struct hs_synth s;
	struct hotstack_mmap_header *h;
	unsigned int i;

	(void)state;
	assert_int_equal(hs_synth_init_store(&s, 2, 64, 32, 256), 0);
	hs_synth_add(&s, 1, 0, f, 1, 0, 3);
	h = s.h;
	h->keys = HOTSTACK_KEY_TGID;
	hs_synth_stacks(&s, 0)[0].tgid = 42;	/* free: not a pid of the live view */
	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	hs_table_copy_free(&c);
	good = *h;
	for (i = 0;; i++) {
		uint32_t pids[4];

		*h = good;
		m.size = s.size;
		switch (i) {
		case 0: h->version = 1; break;		/* ABI 1's layout */
		case 1: h->version = 99; break;
		case 2: h->entry_size = 56; break;	/* ABI 1's hotstack_entry */
		case 3: h->count_size = 8; break;
		case 4: h->readable = 2; break;
		case 5: h->table_entries *= 4; break;	/* past the store */
		case 6: h->arena_frames = 1ull << 61; break;	/* its bytes overflow */
		case 7: h->arena_frames += 512; break;
		case 8: h->store_stats_size = 8; break;	/* smaller than its counters */
		case 9: h->store_stats_size += 4; break;	/* stacks misaligned */
		case 10: h->cpu_entries *= 2; break;	/* past the slot */
		case 11: h->cpu_stats_size = 64; break;
		case 12: h->cpu_stats_size += 4; break;
		case 13: h->nr_slots++; break;		/* past the mapping */
		case 14: h->slot_size = 1ull << 63; break;	/* times the slots, overflows */
		case 15: h->store_size = UINT64_MAX - 4095; break;
		case 16: h->gen_offset[1] = s.size - 8; break;
		case 17: h->gen_offset[1] = UINT64_MAX - 7; break;
		case 18: h->gen_offset[1] = 0; break;	/* over the header */
		case 19: h->table_entries = UINT32_MAX; break;
		case 20: m.size = s.size - 4096; break;	/* a mapping shorter than said */
		case 21: m.size = sizeof(*h) - 1; break;
		default: goto done;
		}
		if (hs_table_copy(&m, HS_GEN_READABLE, &c) != -EINVAL)
			fail_msg("header change %u was not refused", i);
		/* The live view of the other generation refuses it too (or finds nothing). */
		if (i != 4 && i < 16 && hs_table_pids(&m, pids, 4) != 0)
			fail_msg("header change %u: pids read", i);
	}
done:
	*h = good;
	m.size = s.size;
	/* A header the kernel never leaves even (seq odd): not read forever. */
	h->seq = 1;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), -EAGAIN);
	free(s.buf);
}

/*
 * The live view of the active generation: the store's READY stacks' keys,
 * each once, whichever CPUs count them (a stack being stored not yet).
 */
static void live_keys(void **state)
{
	static const uint64_t f[] = { 0xffffffff81000110 };
	struct hs_table_map m = { 0 };
	struct hotstack_stack *e;
	struct hs_synth s;
	uint32_t pids[8];
	uint64_t ids[8];
	size_t n;

	(void)state;
	assert_int_equal(hs_synth_init_store(&s, 2, 64, 32, 256), 0);
	s.h->keys = HOTSTACK_KEY_TGID | HOTSTACK_KEY_CGROUP;
	e = hs_synth_add(&s, 0, 0, f, 1, 0, 1);
	e->tgid = 42;
	e->cgroup = 7;
	hs_synth_count(&s, 0, 1, e, 1);
	e = hs_synth_add(&s, 0, 1, f, 1, 0, 1);
	e->tgid = 43;
	e->cgroup = 7;
	e = hs_synth_stack(&s, 0, f, 1, 0);
	e->tgid = 44;
	e->hash = (e->hash & ~HOTSTACK_STACK_STATE) | HOTSTACK_STACK_FILLING;
	/* The readable generation's are not live. */
	hs_synth_add(&s, 1, 0, f, 1, 0, 1)->tgid = 45;
	m.base = s.buf;
	m.size = s.size;
	n = hs_table_pids(&m, pids, 8);
	assert_int_equal(n, 2);
	assert_true((pids[0] == 42 && pids[1] == 43) || (pids[0] == 43 && pids[1] == 42));
	assert_int_equal(hs_table_pids(&m, pids, 1), 1);
	assert_int_equal(hs_table_cgroups(&m, ids, 8), 1);
	assert_int_equal(ids[0], 7);
	/* Not keyed by process: none. */
	s.h->keys = 0;
	assert_int_equal(hs_table_pids(&m, pids, 8), 0);
	free(s.buf);
}

/*
 * A cgroup's key: its path; a path past HS_CGROUP_FRAME_MAX keeps its
 * innermost directories whole (the container's), after "...".
 */
static void cgroup_keys(void **state)
{
	static const uint64_t frames[] = { 0xffffffff81000110 };
	static const char scope[] = "/cri-containerd-0123456789abcdef0123456789abcdef"
				    "0123456789abcdef0123456789abcdef.scope";
	char root[] = "/tmp/hs_table_cgXXXXXX", path[2048], want[1024], dir[101];
	struct hs_table_map m = { 0 };
	struct hs_table_copy c;
	struct hs_profile p = { 0 };
	struct hs_synth s;
	struct hs_ksyms k;
	struct stat st;
	size_t len;
	uint64_t id;
	int i;

	(void)state;
	load_syms(&k);
	assert_non_null(mkdtemp(root));
	memset(dir, 'd', 100);
	dir[100] = '\0';
	len = snprintf(path, sizeof(path), "%s", root);
	for (i = 0; i < 6; i++) {
		dir[0] = 'a' + i;
		len += snprintf(path + len, sizeof(path) - len, "/%s", dir);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	snprintf(path + len, sizeof(path) - len, "%s", scope);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(stat(path, &st), 0);
	id = st.st_ino;
	assert_int_equal(hs_cgroups_capture(root, &id, 1, -1), 1);
	assert_int_equal(hs_synth_init(&s, 1, 64, 256), 0);
	hs_synth_add(&s, 1, 0, frames, 1, 0, 3)->cgroup = id;
	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	assert_int_equal(hs_table_profile(&c, &k, NULL, 0, &p, 0), 0);
	assert_int_equal(p.nr, 1);
	/* 6 directories of 101 bytes and the scope's 85: the last four and the scope. */
	len = snprintf(want, sizeof(want), "[cgroup ...");
	for (i = 2; i < 6; i++) {
		dir[0] = 'a' + i;
		len += snprintf(want + len, sizeof(want) - len, "/%s", dir);
	}
	snprintf(want + len, sizeof(want) - len, "%s];local_fn", scope);
	assert_string_equal(p.lines[0].stack, want);
	assert_true(strlen(want) - strlen("[cgroup ];local_fn") <= HS_CGROUP_FRAME_MAX);
	hs_profile_free(&p);
	hs_table_copy_free(&c);
	free(s.buf);
	hs_ksyms_free(&k);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
}

/* A sleep's stack with its waker's (HOTSTACK_ENTRY_WAKER), @tr at its end. */
static struct hotstack_stack *add_waker(struct hs_synth *s, const struct hotstack_waker *tr,
					uint64_t count)
{
	/* Sleeper: 2 kernel frames, 1 user; waker: 2 kernel, 1 user; then @tr. */
	uint64_t f[6 + HOTSTACK_WAKER_WORDS] = {
		0xffffffff81000110, 0xffffffff81000201, 0x401000,
		0xffffffff81000301, 0xffffffff81000201, 0x402005,
	};
	struct hotstack_stack *e;

	memcpy(f + 6, tr, sizeof(*tr));
	e = hs_synth_add(s, 1, 0, f, 2, 4 + HOTSTACK_WAKER_WORDS, count);
	e->flags = HOTSTACK_ENTRY_CALLER | HOTSTACK_ENTRY_WAKER;
	e->context = HOTSTACK_CTX_SLEEP;
	return e;
}

/*
 * --wakers: a sleep's stack, "--", its waker's frames innermost first
 * (kernel ones named as return addresses), its context and its name, as
 * bcc's offwaketime folds them and the module's read() does. A trailer
 * that does not add up is no waker: its words are user frames.
 */
static void waker_joined(void **state)
{
	struct hotstack_waker tr = {
		.comm = "kworker/0:1", .tgid = 0, .nr_kernel = 2, .nr_user = 1,
		.flags = HOTSTACK_ENTRY_TRUNCATED, .context = HOTSTACK_CTX_SOFTIRQ,
		.magic = HOTSTACK_WAKER_MAGIC,
	};
	struct hs_table_map m = { 0 };
	struct hs_table_copy c;
	struct hs_profile p = { 0 };
	struct hs_synth s;
	struct hs_ksyms k;
	char *text;

	(void)state;
	load_syms(&k);
	assert_int_equal(hs_synth_init(&s, 1, 64, 256), 0);
	add_waker(&s, &tr, 5);
	tr.context = HOTSTACK_CTX_TASK;
	tr.flags = 0;
	memset(tr.comm, 0, sizeof(tr.comm));
	memcpy(tr.comm, "dd", 2);
	add_waker(&s, &tr, 7);
	tr.nr_kernel = 4;	/* more than the stack holds past its sleeper's */
	add_waker(&s, &tr, 1);
	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	assert_int_equal(hs_table_profile(&c, &k, NULL, 0, &p, 0), 0);
	text = sorted_text(&p);
	assert_string_equal(text,
		"[sleep];0x401000;alias_first;local_fn;--;weak_fn;alias_first;0x402005;"
		"[truncated];[softirq];kworker/0:1 5\n"
		"[sleep];0x401000;alias_first;local_fn;--;weak_fn;alias_first;0x402005;dd 7\n"
		"[sleep];0x6b61772100000100;0x1000400000000;0x0;0x6464;0x402005;"
		"0xffffffff81000201;0xffffffff81000301;0x401000;alias_first;local_fn 1\n");
	free(text);
	hs_profile_free(&p);
	hs_table_copy_free(&c);
	free(s.buf);
	hs_ksyms_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(like_read),
		cmocka_unit_test(fullest_count_table),
		cmocka_unit_test(counts_merge_by_stack),
		cmocka_unit_test(bad_counts_skipped),
		cmocka_unit_test(header_checked),
		cmocka_unit_test(live_keys),
		cmocka_unit_test(cgroup_keys),
		cmocka_unit_test(waker_joined),
	};

	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
