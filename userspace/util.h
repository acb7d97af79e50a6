/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: what every room needs, written once. Reading a whole
 * file; growing an array; the clock; one hash of bytes and one string table on it (strings
 * numbered in order of arrival, found by hashing); an arena that owns a
 * profile's text; UTF-8-safe JSON and XML escaping, and cutting a label
 * on a character boundary.
 */
#ifndef HOTSTACK_UTIL_H
#define HOTSTACK_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The tool's version (hotstack --version, the OTLP scope's). */
#define HS_VERSION "0.1"

/* ---- files ---------------------------------------------------------- */

/*
 * All of @fd until end of file, NUL-terminated (the NUL not counted in
 * *len, which may be NULL). /proc files (size 0 until read) too. NULL
 * with errno set on error.
 */
char *hs_read_fd(int fd, size_t *len);

/*
 * malloc() for big buffers (a profile's text, a dump's table, a big hash
 * table's slots): from 4 MB, in 2 MB pages where transparent huge pages
 * are "madvise", as fresh memory faults a page at a time and random
 * probes miss the TLB.
 */
void *hs_malloc_big(size_t size);

/* hs_read_fd() of the file @path; "-" is standard input. NULL, errno set. */
char *hs_read_file(const char *path, size_t *len);

/* ---- arrays --------------------------------------------------------- */

/*
 * Room in the array *@arr (of *@cap elements of @size bytes, @nr used) for
 * one more: doubled when full, @first elements at first. 0, or -ENOMEM
 * with the array as it was.
 */
int hs_grow(void *arr, size_t *cap, size_t nr, size_t size, size_t first);

/* ---- strings made in a buffer --------------------------------------- */

/*
 * @s[0..len) appended at @at of the string in @buf (@size bytes, @at <
 * @size), cut to fit, always terminated: the new length. snprintf() without
 * its format's parsing (about 900 instructions a call; the agent makes some
 * 30 strings a group, 500 groups an interval).
 */
size_t hs_cat(char *buf, size_t size, size_t at, const char *s, size_t len);

static inline size_t hs_cats(char *buf, size_t size, size_t at, const char *s)
{
	return hs_cat(buf, size, at, s, strlen(s));
}

/* @v in decimal appended, as hs_cat(). */
size_t hs_cat_u64(char *buf, size_t size, size_t at, uint64_t v);

/* ---- the clock ------------------------------------------------------ */

/* Seconds on the monotonic clock. */
double hs_now(void);

/* ---- hashing -------------------------------------------------------- */

/* A 64-bit hash of @len bytes at @data (not for security: for tables). */
uint64_t hs_hash(const void *data, size_t len);

/* The first ';' in [@s, @end), or @end: frames are short, so no call of memchr(). */
static inline const char *hs_next_frame_end(const char *s, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w, t;

	/* Eight bytes a step: the lowest byte that is ';' (SWAR). */
	for (; end - s >= 8; s += 8) {
		__builtin_memcpy(&w, s, 8);
		w ^= 0x3b3b3b3b3b3b3b3bULL;
		t = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL;
		if (t)
			return s + (__builtin_ctzll(t) >> 3);
	}
#endif
	while (s < end && *s != ';')
		s++;
	return s;
}

/* ---- the arena ------------------------------------------------------ */

struct hs_arena_block;

/*
 * Memory freed all at once: what a profile's lines point into. Pointers
 * into it stay valid until hs_arena_free().
 */
struct hs_arena {
	struct hs_arena_block *blocks;
	char *next;		/* free room in the newest small block */
	size_t left;
	size_t block;		/* the room of the last small block (0: none yet) */
};

/* @size bytes (not aligned: for text), or NULL. */
void *hs_arena_alloc(struct hs_arena *a, size_t size);

/* A NUL-terminated copy of @s[0..len), or NULL. */
char *hs_arena_strndup(struct hs_arena *a, const char *s, size_t len);

/* Take @mem (malloc'd) to be freed with the arena. 0, or -ENOMEM (@mem is still the caller's). */
int hs_arena_adopt(struct hs_arena *a, void *mem);

void hs_arena_free(struct hs_arena *a);

/* ---- the string table ----------------------------------------------- */

/* A string of the table: its bytes (NUL-terminated when the table copies them). */
struct hs_str {
	const char *s;
	uint32_t len;
	uint32_t hash;		/* the high half of hs_hash() */
};

/*
 * Byte strings, each once, numbered from 0 in order of arrival: an
 * open-addressing table on hs_hash() over an array of them. With @copy
 * the table keeps NUL-terminated copies (in its own arena); without, it
 * points at the caller's bytes, which must outlive it.
 */
struct hs_strtab_slot {
	uint32_t id;		/* number + 1; 0: empty */
	uint32_t hash;		/* compared before the string is */
};

struct hs_strtab {
	struct hs_str *str;	/* by number */
	size_t nr, cap;
	struct hs_strtab_slot *slot;
	size_t mask;		/* slots - 1, a power of two minus one; 0: none yet */
	int copy;
	struct hs_arena arena;	/* the copies */
};

void hs_strtab_init(struct hs_strtab *t, int copy);

/* The number of @s[0..len), added when new; -ENOMEM. */
long hs_strtab_add(struct hs_strtab *t, const char *s, size_t len);

/* Room for @nr strings, to add them without growing. 0 or -ENOMEM. */
int hs_strtab_reserve(struct hs_strtab *t, size_t nr);

/* The number of @s[0..len), or -1. */
long hs_strtab_find(const struct hs_strtab *t, const char *s, size_t len);

void hs_strtab_free(struct hs_strtab *t);

/* ---- UTF-8, JSON and XML -------------------------------------------- */

/*
 * The length of the valid UTF-8 character at @s (at most @n bytes: 1 to
 * 4), or 0 when the bytes there are not one (a stray continuation byte,
 * an overlong form, a surrogate, past U+10FFFF, or cut short).
 */
size_t hs_utf8_char(const char *s, size_t n);

/*
 * @s[0..len) as a JSON string, quotes included: valid UTF-8 as it is,
 * control characters as \u00XX, and each byte that is not UTF-8 as the
 * six characters \\xNN (a backslash, then "xNN"): the text stays valid
 * JSON and the byte stays visible.
 */
void hs_json_str(FILE *f, const char *s, size_t len);

/*
 * @s[0..len) as XML character data or an attribute value: & < > " '
 * as entities, valid UTF-8 as it is, and each byte XML cannot carry
 * (not UTF-8, or a control character) as the text \xNN.
 */
void hs_xml_str(FILE *f, const char *s, size_t len);

/*
 * How many bytes of @s[0..len) make at most @max characters as
 * hs_xml_str() shows them (a byte shown as \xNN counts four), cut only
 * between characters. *chars (may be NULL): the characters they make.
 */
size_t hs_utf8_prefix(const char *s, size_t len, size_t max, size_t *chars);

#endif
