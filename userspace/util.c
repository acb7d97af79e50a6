// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: files, the clock, hashing, the arena, the string table, UTF-8 escaping. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---- files ---------------------------------------------------------- */

void *hs_malloc_big(size_t size)
{
	char *p = malloc(size);
	uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;

	if (p && size >= (4 << 20))
		madvise((void *)start, ((uintptr_t)p + size - start) & ~(uintptr_t)4095,
			MADV_HUGEPAGE);
	return p;
}

char *hs_read_fd(int fd, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0;
	struct stat st;
	char *buf, *grown;
	ssize_t n;
	int err;

	/* A regular file: room for all of it at once (and a byte to see its end). */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX - 4096)
		cap = st.st_size + 4096;
	buf = hs_malloc_big(cap);
	while (buf) {
		if (cap - len < 4096) {
			grown = realloc(buf, cap *= 2);
			if (!grown)
				break;
			buf = grown;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (!n) {
			buf[len] = '\0';
			if (lenp)
				*lenp = len;
			return buf;
		}
		len += n;
	}
	err = buf ? errno : ENOMEM;
	free(buf);
	errno = err ? err : ENOMEM;
	return NULL;
}

char *hs_read_file(const char *path, size_t *len)
{
	int fd, err;
	char *buf;

	if (!strcmp(path, "-"))
		return hs_read_fd(0, len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = hs_read_fd(fd, len);
	err = errno;
	close(fd);
	errno = err;
	return buf;
}

int hs_grow(void *arr, size_t *cap, size_t nr, size_t size, size_t first)
{
	void **p = arr, *grown;
	size_t n;

	if (nr < *cap)
		return 0;
	n = *cap ? *cap * 2 : first;
	grown = realloc(*p, n * size);
	if (!grown)
		return -ENOMEM;
	*p = grown;
	*cap = n;
	return 0;
}

/* ---- strings made in a buffer --------------------------------------- */

size_t hs_cat(char *buf, size_t size, size_t at, const char *s, size_t len)
{
	if (len > size - 1 - at)
		len = size - 1 - at;
	memcpy(buf + at, s, len);
	buf[at + len] = '\0';
	return at + len;
}

size_t hs_cat_u64(char *buf, size_t size, size_t at, uint64_t v)
{
	char digits[20], *d = digits + sizeof(digits);

	do
		*--d = '0' + v % 10;
	while (v /= 10);
	return hs_cat(buf, size, at, d, digits + sizeof(digits) - d);
}

/* ---- the clock ------------------------------------------------------ */

double hs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- hashing -------------------------------------------------------- */

/* murmur3's finalizer: every input bit reaches every output bit. */
static uint64_t hs_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t hs_hash(const void *data, size_t len)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	uint32_t x, y;

	/* Eight bytes a step: frames and stacks are long text ... */
	for (; end - p > 8; p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x87c37b91114253d5ULL;
		h ^= h >> 29;
	}
	/* ... and the last eight (or fewer) in one load or two, overlapping. */
	if (len >= 8) {
		memcpy(&w, end - 8, 8);
	} else if (len >= 4) {
		memcpy(&x, p, 4);
		memcpy(&y, end - 4, 4);
		w = (uint64_t)x << 32 | y;
	} else {
		w = len ? (uint64_t)p[0] << 16 | (uint64_t)p[len / 2] << 8 | p[len - 1] : 0;
	}
	return hs_mix(h ^ w);
}

/* ---- the arena ------------------------------------------------------ */

/* A block: room allocated after it (mem NULL), or a buffer adopted (mem). */
struct hs_arena_block {
	struct hs_arena_block *next;
	void *mem;
};

/*
 * The room of a block of small pieces: 16 KiB first, twice the last one
 * after, up to 1 MiB (a small profile, as each of the agent's 500
 * groups', takes little; a big one few blocks).
 */
#define HS_ARENA_FIRST	(16 << 10)
#define HS_ARENA_BLOCK	(1 << 20)
#define HS_ARENA_BIG	(HS_ARENA_BLOCK / 8)	/* a piece this big gets its own */

void *hs_arena_alloc(struct hs_arena *a, size_t size)
{
	struct hs_arena_block *b;
	size_t small = a->block ? (a->block < HS_ARENA_BLOCK ? 2 * a->block : a->block) :
				  HS_ARENA_FIRST;
	size_t room = size >= HS_ARENA_BIG || size > small ? size : small;
	char *p;

	if (size < HS_ARENA_BIG && size <= a->left) {
		p = a->next;
		a->next += size;
		a->left -= size;
		return p;
	}
	if (room > SIZE_MAX - sizeof(*b))
		return NULL;
	b = malloc(sizeof(*b) + room);
	if (!b)
		return NULL;
	b->mem = NULL;
	b->next = a->blocks;
	a->blocks = b;
	p = (char *)(b + 1);
	if (room != size) {
		a->next = p + size;
		a->left = room - size;
		a->block = room;
	}
	return p;
}

char *hs_arena_strndup(struct hs_arena *a, const char *s, size_t len)
{
	char *p = hs_arena_alloc(a, len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

int hs_arena_adopt(struct hs_arena *a, void *mem)
{
	struct hs_arena_block *b = malloc(sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->mem = mem;
	b->next = a->blocks;
	a->blocks = b;
	return 0;
}

void hs_arena_free(struct hs_arena *a)
{
	struct hs_arena_block *b, *next;

	for (b = a->blocks; b; b = next) {
		next = b->next;
		free(b->mem);
		free(b);
	}
	memset(a, 0, sizeof(*a));
}

/* ---- the string table ----------------------------------------------- */

void hs_strtab_init(struct hs_strtab *t, int copy)
{
	memset(t, 0, sizeof(*t));
	t->copy = copy;
}

/* Whether @a and @b, @len bytes each, are equal: eight bytes a step, the last ones overlapping. */
static inline int hs_bytes_equal(const char *a, const char *b, size_t len)
{
	uint64_t x, y;
	uint32_t u, v;
	size_t i;

	if (len < 8) {
		if (len < 4)
			return !len || (a[0] == b[0] && a[len / 2] == b[len / 2] &&
					a[len - 1] == b[len - 1]);
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return 0;
		memcpy(&u, a + len - 4, 4);
		memcpy(&v, b + len - 4, 4);
		return u == v;
	}
	for (i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

/* The slot of @s (its own, or the empty one it would take). */
static inline size_t hs_strtab_slot(const struct hs_strtab *t, const char *s, size_t len,
				    uint32_t h)
{
	size_t j;

	for (j = h & t->mask; t->slot[j].id; j = (j + 1) & t->mask) {
		const struct hs_str *o;

		if (t->slot[j].hash != h)
			continue;
		o = &t->str[t->slot[j].id - 1];
		if (o->len == len && hs_bytes_equal(o->s, s, len))
			break;
	}
	return j;
}

/* Slots for @want strings at most half full, the strings' array too. */
static int hs_strtab_grow_to(struct hs_strtab *t, size_t want)
{
	size_t n = t->mask ? t->mask + 1 : 64, i, j;

	while (n < 2 * want)
		n *= 2;
	if (n == t->mask + 1)
		return 0;
	struct hs_strtab_slot *slot = hs_malloc_big(n * sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	/* Big tables in huge pages: their probes land anywhere, TLB misses cost. */
	memset(slot, 0, n * sizeof(*slot));
	for (i = 0; i < t->nr; i++) {
		for (j = t->str[i].hash & (n - 1); slot[j].id; j = (j + 1) & (n - 1))
			;
		slot[j].id = i + 1;
		slot[j].hash = t->str[i].hash;
	}
	free(t->slot);
	t->slot = slot;
	t->mask = n - 1;
	return 0;
}

int hs_strtab_reserve(struct hs_strtab *t, size_t nr)
{
	struct hs_str *str;

	if (nr > t->cap) {
		str = realloc(t->str, nr * sizeof(*str));
		if (!str)
			return -ENOMEM;
		t->str = str;
		t->cap = nr;
	}
	return hs_strtab_grow_to(t, nr);
}

long hs_strtab_find(const struct hs_strtab *t, const char *s, size_t len)
{
	size_t j;

	if (!t->nr || len > UINT32_MAX)
		return -1;
	j = hs_strtab_slot(t, s, len, hs_hash(s, len) >> 32);
	return t->slot[j].id ? (long)t->slot[j].id - 1 : -1;
}

long hs_strtab_add(struct hs_strtab *t, const char *s, size_t len)
{
	uint32_t h = hs_hash(s, len) >> 32;
	struct hs_str *str;
	size_t j;

	if (len > UINT32_MAX || t->nr >= UINT32_MAX - 1)
		return -ENOMEM;
	/* At most half full: probes stay short. */
	if ((t->nr + 1) * 2 > t->mask + 1 && hs_strtab_grow_to(t, t->nr + 1))
		return -ENOMEM;
	j = hs_strtab_slot(t, s, len, h);
	if (t->slot[j].id)
		return t->slot[j].id - 1;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;

		str = realloc(t->str, cap * sizeof(*str));
		if (!str)
			return -ENOMEM;
		t->str = str;
		t->cap = cap;
	}
	str = &t->str[t->nr];
	str->s = t->copy ? hs_arena_strndup(&t->arena, s, len) : s;
	if (!str->s)
		return -ENOMEM;
	str->len = len;
	str->hash = h;
	t->slot[j].id = ++t->nr;
	t->slot[j].hash = h;
	return t->nr - 1;
}

void hs_strtab_free(struct hs_strtab *t)
{
	free(t->str);
	free(t->slot);
	hs_arena_free(&t->arena);
	hs_strtab_init(t, t->copy);
}

/* ---- UTF-8, JSON and XML -------------------------------------------- */

size_t hs_utf8_char(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len, i;
	uint32_t c;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;	/* a continuation byte, or 0xc0, 0xc1, 0xf5-0xff */
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past Unicode. */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void hs_json_str(FILE *f, const char *s, size_t len)
{
	size_t i, n;

	fputc('"', f);
	for (i = 0; i < len; i += n) {
		unsigned char c = s[i];

		n = hs_utf8_char(s + i, len - i);
		if (!n) {
			fprintf(f, "\\\\x%02x", c);
			n = 1;
		} else if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else {
			fwrite(s + i, 1, n, f);
		}
	}
	fputc('"', f);
}

/* Whether XML 1.0 can carry the character at @s (@n bytes of valid UTF-8). */
static int hs_xml_char_ok(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r';
	/* U+FFFE and U+FFFF are not XML characters. */
	return !(n == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe);
}

void hs_xml_str(FILE *f, const char *s, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n) {
		unsigned char c = s[i];

		n = hs_utf8_char(s + i, len - i);
		if (!n || !hs_xml_char_ok((const unsigned char *)s + i, n)) {
			fprintf(f, "\\x%02x", c);
			n = 1;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fwrite(s + i, 1, n, f);
		}
	}
}

size_t hs_utf8_prefix(const char *s, size_t len, size_t max, size_t *chars)
{
	size_t i = 0, shown = 0, n, w;

	while (i < len) {
		n = hs_utf8_char(s + i, len - i);
		w = 1;
		if (!n || !hs_xml_char_ok((const unsigned char *)s + i, n)) {
			n = 1;
			w = 4;	/* \xNN */
		}
		if (shown + w > max)
			break;
		shown += w;
		i += n;
	}
	if (chars)
		*chars = shown;
	return i;
}
