// SPDX-License-Identifier: GPL-2.0
/*
 * The table reader: a synthetic mapping, copied, merged across CPUs and
 * formatted with the tool's symbols must give read()'s lines exactly.
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
	struct hotstack_entry *e;
	struct hs_synth s;
	struct hs_ksyms k;
	char *text;

	(void)state;
	load_syms(&k);
	assert_int_equal(hs_synth_init(&s, 2, 64, 256), 0);
	/* The same keyed stack on both CPUs: one line, counts added. */
	e = hs_synth_add(&s, 1, 0, keyed, 2, 0, 5);
	memcpy(e->comm, "sh;x\n", 5);
	e->tgid = 42;
	e->context = HOTSTACK_CTX_TASK;
	e = hs_synth_add(&s, 1, 1, keyed, 2, 0, 3);
	memcpy(e->comm, "sh;x\n", 5);
	e->tgid = 42;
	e->context = HOTSTACK_CTX_TASK;
	/* Another process: a line of its own. */
	e = hs_synth_add(&s, 1, 1, keyed, 2, 0, 1);
	memcpy(e->comm, "sh;x\n", 5);
	e->tgid = 43;
	e->context = HOTSTACK_CTX_SOFTIRQ;
	/*
	 * Two call sites of one callee: two entries, the same text twice in
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
	/* The active generation holds something else. */
	hs_synth_add(&s, 0, 0, cut, 1, 0, 99);

	m.base = s.buf;
	m.size = s.size;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), 0);
	assert_int_equal(c.nr, 8);
	assert_int_equal(hs_table_profile(&c, &k, NULL, 0, &p, 0), 0);
	text = sorted_text(&p);
	assert_string_equal(text,
		"0x402005;0x401000;mod_fn [mod_a] 7\n"
		"[dropped];[nested] 13\n"
		"[dropped];[table full] 11\n"
		"[truncated];[collapsed 4];weak_fn 6\n"
		"[unknown];[unknown] 9\n"
		"[user] 8\n"
		"alias_first;local_fn 6\n"
		"sh:x ;[pid 42];[task];alias_first;local_fn 8\n"
		"sh:x ;[pid 43];[softirq];alias_first;local_fn 1\n");
	assert_int_equal(p.filtered, 12);
	assert_int_equal(p.dropped, 24);
	assert_int_equal(p.truncated, 6);
	assert_int_equal(p.collapsed, 6);
	free(text);
	hs_profile_free(&p);
	hs_table_copy_free(&c);

	assert_int_equal(hs_table_copy(&m, HS_GEN_ACTIVE, &c), 0);
	assert_int_equal(c.nr, 1);
	assert_int_equal(c.items[0].count, 99);
	hs_table_copy_free(&c);

	/* A header this reader does not know is refused. */
	s.h->version = 99;
	assert_int_equal(hs_table_copy(&m, HS_GEN_READABLE, &c), -EINVAL);
	free(s.buf);
	hs_ksyms_free(&k);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(like_read),
		cmocka_unit_test(cgroup_keys),
	};

	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
