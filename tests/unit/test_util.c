// SPDX-License-Identifier: GPL-2.0
/*
 * util.c: reading whole files, the hash and the string table, the arena,
 * and escaping for JSON and XML of any bytes (invalid UTF-8 included),
 * checked by Python's json and xml parsers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util.h"
#include "tool.h"

static void read_whole_files(void **state)
{
	char *big = malloc(300000), *got;
	size_t len, i;

	(void)state;
	for (i = 0; i < 300000; i++)
		big[i] = 'a' + i % 26;
	write_file(scratch("big"), big, 300000);
	got = hs_read_file(scratch("big"), &len);
	assert_non_null(got);
	assert_int_equal(len, 300000);
	assert_memory_equal(got, big, 300000);
	assert_int_equal(got[len], '\0');
	free(got);
	/* /proc files say size 0 until read. */
	got = hs_read_file("/proc/self/status", &len);
	assert_non_null(got);
	assert_true(len > 0);
	assert_non_null(strstr(got, "Name:"));
	free(got);
	errno = 0;
	assert_null(hs_read_file(scratch("missing"), &len));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(hs_read_file(scratch_dir, &len));
	assert_int_equal(errno, EISDIR);
	free(big);
}

static void string_table(void **state)
{
	struct hs_strtab t, c;
	char buf[32], *copy;
	long i, id;

	(void)state;
	hs_strtab_init(&t, 0);
	hs_strtab_init(&c, 1);
	assert_int_equal(hs_strtab_find(&t, "x", 1), -1);
	/* Enough to grow the slots several times; numbers in order of arrival. */
	for (i = 0; i < 100000; i++) {
		snprintf(buf, sizeof(buf), "frame_%ld", i);
		copy = strdup(buf);
		assert_int_equal(hs_strtab_add(&c, buf, strlen(buf)), i);
		/* Not copied: the table points at the caller's bytes. */
		assert_int_equal(hs_strtab_add(&t, copy, strlen(copy)), i);
	}
	for (i = 0; i < 100000; i += 997) {
		snprintf(buf, sizeof(buf), "frame_%ld", i);
		assert_int_equal(hs_strtab_find(&t, buf, strlen(buf)), i);
		assert_int_equal(hs_strtab_add(&c, buf, strlen(buf)), i);
		assert_string_equal(c.str[i].s, buf);
	}
	assert_int_equal(c.nr, 100000);
	/* Lengths count: "frame_1" is not a prefix match of "frame_12". */
	assert_int_equal(hs_strtab_find(&c, "frame_12", 7), 1);
	assert_int_equal(hs_strtab_find(&c, "frame_", 6), -1);
	/* Any bytes, NUL and invalid UTF-8 included. */
	id = hs_strtab_add(&c, "a\0b\xff", 4);
	assert_int_equal(id, 100000);
	assert_int_equal(hs_strtab_find(&c, "a\0b\xff", 4), id);
	assert_int_equal(hs_strtab_find(&c, "a", 1), -1);
	for (i = 0; i < (long)t.nr; i++)
		free((char *)t.str[i].s);
	hs_strtab_free(&t);
	hs_strtab_free(&c);
	assert_int_equal(hs_hash("abc", 3), hs_hash("abc", 3));
	assert_true(hs_hash("abc", 3) != hs_hash("abd", 3));
	assert_true(hs_hash("", 0) != hs_hash("\0", 1));
}

static void arena(void **state)
{
	struct hs_arena a = { 0 };
	char *p[1000], *big, *mine = malloc(10);
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		p[i] = hs_arena_strndup(&a, "0123456789abcdef", i % 17);
		assert_non_null(p[i]);
	}
	big = hs_arena_alloc(&a, 5 << 20);	/* a block of its own */
	assert_non_null(big);
	memset(big, 'x', 5 << 20);
	for (i = 0; i < 1000; i++)
		assert_int_equal(strlen(p[i]), i % 17);
	assert_int_equal(hs_arena_adopt(&a, mine), 0);
	hs_arena_free(&a);	/* frees mine too: valgrind or ASan would tell */
	assert_null(a.blocks);
}

/*
 * Whether python3 -c @prog accepts @text (bytes), given as a file name in
 * argv[1]. Python's complaint is shown as a TAP comment.
 */
static int python_accepts(const char *text, size_t len, const char *prog)
{
	char cmd[640];

	write_file(scratch("py.in"), text, len);
	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s 2>%s || { tail -n 1 %s | sed 's/^/# /'; false; }",
		 prog, scratch("py.in"), scratch("py.err"), scratch("py.err"));
	return system(cmd) == 0;
}

/* What @fn writes of @s[0..len), as a string. */
static char *escaped(void (*fn)(FILE *, const char *, size_t), const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	fn(f, s, len);
	fclose(f);
	return buf;
}

static void utf8_characters(void **state)
{
	(void)state;
	assert_int_equal(hs_utf8_char("a", 1), 1);
	assert_int_equal(hs_utf8_char("\xc3\xa9", 2), 2);		/* é */
	assert_int_equal(hs_utf8_char("\xe2\x82\xac", 3), 3);	/* € */
	assert_int_equal(hs_utf8_char("\xf0\x9f\x94\xa5", 4), 4);	/* U+1F525 */
	assert_int_equal(hs_utf8_char("\xc3", 1), 0);		/* cut short */
	assert_int_equal(hs_utf8_char("\xe2\x82", 2), 0);
	assert_int_equal(hs_utf8_char("\xa9", 1), 0);		/* stray continuation */
	assert_int_equal(hs_utf8_char("\xc0\xaf", 2), 0);	/* overlong '/' */
	assert_int_equal(hs_utf8_char("\xe0\x80\xaf", 3), 0);	/* overlong */
	assert_int_equal(hs_utf8_char("\xed\xa0\x80", 3), 0);	/* a surrogate */
	assert_int_equal(hs_utf8_char("\xf4\x90\x80\x80", 4), 0);	/* past U+10FFFF */
	assert_int_equal(hs_utf8_char("\xff", 1), 0);
}

static void json_of_any_bytes(void **state)
{
	/* A process name cut inside a character, invalid bytes, quotes, controls. */
	static const char name[] = "caf\xc3\xa9\xe2\x82 \"q\"\\\x01\xff\xfe\xed\xa0\x80 \xf0\x9f\x94\xa5";
	char *s, doc[512];

	(void)state;
	s = escaped(hs_json_str, name, sizeof(name) - 1);
	assert_string_equal(s, "\"caf\xc3\xa9\\\\xe2\\\\x82 \\\"q\\\"\\\\\\u0001\\\\xff\\\\xfe"
			    "\\\\xed\\\\xa0\\\\x80 \xf0\x9f\x94\xa5\"");
	snprintf(doc, sizeof(doc), "{\"name\": %s}", s);
	/* The check can fail: raw invalid bytes are not JSON Python reads as UTF-8. */
	assert_false(python_accepts("{\"name\": \"\xff\"}", 12,
		"import sys, json; json.load(open(sys.argv[1], encoding=\"utf-8\"))"));
	/* Python reads it strictly as UTF-8 and finds the name, bytes as \xNN. */
	assert_true(python_accepts(doc, strlen(doc),
		"import sys, json; d = json.load(open(sys.argv[1], encoding=\"utf-8\")); "
		"assert d[\"name\"] == \"caf\\u00e9\\\\xe2\\\\x82 \\\"q\\\"\\\\\\x01\\\\xff\\\\xfe"
		"\\\\xed\\\\xa0\\\\x80 \\U0001f525\", repr(d)"));
	free(s);
}

static void xml_of_any_bytes(void **state)
{
	static const char name[] = "a<b>&'\"\x01\xc3\xa9\xc3 \xef\xbf\xbe\xf0\x9f\x94\xa5";
	char *s, doc[512];

	(void)state;
	s = escaped(hs_xml_str, name, sizeof(name) - 1);
	assert_string_equal(s, "a&lt;b&gt;&amp;&apos;&quot;\\x01\xc3\xa9\\xc3 \\xef\\xbf\\xbe"
			    "\xf0\x9f\x94\xa5");
	snprintf(doc, sizeof(doc), "<?xml version=\"1.0\"?><t a=\"%s\">%s</t>", s, s);
	assert_true(python_accepts(doc, strlen(doc),
		"import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); "
		"t = d.documentElement; assert t.getAttribute(\"a\") == t.firstChild.data"));
	free(s);
}

static void labels_cut_between_characters(void **state)
{
	static const char s[] = "\xc3\xa9\xc3\xa9\xe2\x82\xac\xff" "ab";
	size_t chars;

	(void)state;
	/* é é € \xff(4) a b: 9 shown characters in 10 bytes. */
	assert_int_equal(hs_utf8_prefix(s, 10, 100, &chars), 10);
	assert_int_equal(chars, 9);
	assert_int_equal(hs_utf8_prefix(s, 10, 1, &chars), 2);
	assert_int_equal(chars, 1);
	assert_int_equal(hs_utf8_prefix(s, 10, 2, &chars), 4);
	assert_int_equal(hs_utf8_prefix(s, 10, 3, &chars), 7);
	/* The invalid byte shows as four: it does not fit in 4 or 5 or 6. */
	assert_int_equal(hs_utf8_prefix(s, 10, 6, &chars), 7);
	assert_int_equal(chars, 3);
	assert_int_equal(hs_utf8_prefix(s, 10, 7, &chars), 8);
	assert_int_equal(hs_utf8_prefix(s, 10, 0, &chars), 0);
}

static int teardown(void **state)
{
	(void)state;
	scratch_remove();
	return 0;
}

/* hs_cat(): appended, cut to fit, always terminated; numbers in decimal. */
static void cat_into_a_buffer(void **state)
{
	char buf[8];
	size_t n;

	(void)state;
	n = hs_cats(buf, sizeof(buf), 0, "ab");
	n = hs_cat(buf, sizeof(buf), n, "cdXY", 2);
	assert_int_equal(n, 4);
	assert_string_equal(buf, "abcd");
	n = hs_cats(buf, sizeof(buf), n, "efghij");
	assert_int_equal(n, 7);
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(hs_cats(buf, sizeof(buf), n, "more"), 7);
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(hs_cat_u64(buf, sizeof(buf), 0, 0), 1);
	assert_string_equal(buf, "0");
	assert_int_equal(hs_cat_u64(buf, sizeof(buf), 1, 1234567), 7);
	assert_string_equal(buf, "0123456");
	{
		char big[32];

		hs_cat_u64(big, sizeof(big), hs_cats(big, sizeof(big), 0, "n="), UINT64_MAX);
		assert_string_equal(big, "n=18446744073709551615");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_whole_files),
		cmocka_unit_test(string_table),
		cmocka_unit_test(arena),
		cmocka_unit_test(utf8_characters),
		cmocka_unit_test(json_of_any_bytes),
		cmocka_unit_test(xml_of_any_bytes),
		cmocka_unit_test(labels_cut_between_characters),
		cmocka_unit_test(cat_into_a_buffer),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, teardown);
}
