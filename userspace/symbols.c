// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: kernel symbols from /proc/kallsyms.
 *
 * The module's read() prints sprint_symbol_no_offset() of each frame:
 * "func" for the core kernel, "func [module]" for a module, the first of
 * several names at one address, and "[unknown]" where kallsyms knows
 * nothing. This file gives the same text from /proc/kallsyms: its text
 * symbols sorted by address (the first listed wins among aliases), and
 * "unknown" ranges after the end of the kernel's text (_etext,
 * _einittext), after each module (from /proc/modules) and over the
 * kernel's own trampolines ("[__builtin__*]", which sprint_symbol() does
 * not know either). BPF programs print without their "[bpf]", as in the
 * kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"
#include "util.h"

const char hs_kptr_restrict_hint[] =
	"kernel addresses are hidden (kernel.kptr_restrict): /proc/kallsyms shows only "
	"zeros. Run as root (or with CAP_SYSLOG), or allow them with 'sysctl "
	"kernel.kptr_restrict=0'; the module's read() text (symbolized in the kernel) "
	"works meanwhile";

/* One symbol (or unknown range) while loading. */
struct hs_ksym_tmp {
	uint64_t addr;
	uint32_t seq;		/* order in the file: the first alias wins */
	uint32_t marker;	/* 1: an unknown range (sorts after a symbol there) */
	uint32_t name;
	uint16_t len;
};

struct hs_ksym_build {
	struct hs_ksym_tmp *t;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
};

static int hs_build_add(struct hs_ksym_build *b, uint64_t addr, int marker, const char *name,
			size_t name_len, const char *mod, size_t mod_len)
{
	size_t need = name_len + (mod ? mod_len + 3 : 0) + 1;
	struct hs_ksym_tmp *t;

	if (b->nr == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 65536;
		t = realloc(b->t, b->cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		b->t = t;
	}
	t = &b->t[b->nr];
	t->addr = addr;
	t->seq = b->nr;
	t->marker = marker;
	t->name = HS_KSYM_NONE;
	t->len = 0;
	b->nr++;
	if (marker)
		return 0;
	if (need > UINT16_MAX)
		need = UINT16_MAX;
	if (b->names_len + need > b->names_cap) {
		char *grown;

		b->names_cap = b->names_cap ? b->names_cap * 2 : 1 << 20;
		while (b->names_len + need > b->names_cap)
			b->names_cap *= 2;
		grown = realloc(b->names, b->names_cap);
		if (!grown)
			return -ENOMEM;
		b->names = grown;
	}
	t->name = b->names_len;
	if (mod)
		t->len = snprintf(b->names + b->names_len, need, "%.*s [%.*s]", (int)name_len, name,
				  (int)mod_len, mod);
	else
		t->len = snprintf(b->names + b->names_len, need, "%.*s", (int)name_len, name);
	if (t->len >= need)
		t->len = need - 1;
	b->names_len += t->len + 1;
	return 0;
}

static int hs_tmp_cmp(const void *pa, const void *pb)
{
	const struct hs_ksym_tmp *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->marker != b->marker)
		return a->marker < b->marker ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Parse /proc/kallsyms text; *nonzero counts addresses that are not 0. */
static int hs_parse_kallsyms(struct hs_ksym_build *b, char *text, size_t *nonzero)
{
	char *line, *end, *p, *name, *mod;
	size_t name_len, mod_len;
	uint64_t addr;
	char type;
	int ret;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		addr = strtoull(line, &p, 16);
		if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;
		type = p[1];
		if (addr)
			(*nonzero)++;
		name = p + 3;
		for (p = name; p < end && *p != '\t' && *p != ' '; p++)
			;
		name_len = p - name;
		mod = NULL;
		mod_len = 0;
		while (p < end && (*p == '\t' || *p == ' '))
			p++;
		if (p < end && *p == '[') {
			mod = p + 1;
			for (p = mod; p < end && *p != ']'; p++)
				;
			mod_len = p - mod;
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* Nor ARM mapping symbols ($x, $d...), as the kernel skips them. */
		if (name_len >= 2 && ((name[0] == '$' && strchr("axtd", name[1]) &&
				       (name_len == 2 || name[2] == '.')) ||
				      (name[0] == '.' && name[1] == 'L')))
			continue;
		if (!name_len || !addr)
			continue;
		/* sprint_symbol() knows neither the kernel's trampolines ... */
		if (mod && mod_len > 11 && !strncmp(mod, "__builtin__", 11)) {
			ret = hs_build_add(b, addr, 1, NULL, 0, NULL, 0);
		} else if (!mod && ((name_len == 6 && !strncmp(name, "_etext", 6)) ||
				    (name_len == 10 && !strncmp(name, "_einittext", 10)))) {
			/* ... nor what follows the end of the kernel's text. */
			ret = hs_build_add(b, addr, 1, NULL, 0, NULL, 0);
		} else {
			/* ... and names BPF programs without their "[bpf]". */
			if (mod && mod_len == 3 && !strncmp(mod, "bpf", 3))
				mod = NULL;
			ret = hs_build_add(b, addr, 0, name, name_len, mod, mod_len);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* /proc/modules: "name size refcount deps state address ..." -> end markers. */
static int hs_parse_modules(struct hs_ksym_build *b, char *text)
{
	char *line, *end, *p;
	uint64_t size, addr;
	int field, ret;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		p = line;
		size = addr = 0;
		for (field = 0; field < 6 && p < end; field++) {
			while (p < end && *p == ' ')
				p++;
			if (field == 1)
				size = strtoull(p, NULL, 10);
			else if (field == 5)
				addr = strtoull(p, NULL, 16);
			while (p < end && *p != ' ')
				p++;
		}
		if (!addr || !size)
			continue;
		ret = hs_build_add(b, addr + size, 1, NULL, 0, NULL, 0);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Pages of the address span, when it is at most this many (4 bytes each):
 * below 4 GB, so that offsets from the base are 32-bit.
 */
#define HS_KSYM_MAX_PAGES ((1UL << 32 >> HS_KSYM_PAGE_SHIFT) - 1)

static void hs_ksyms_index(struct hs_ksyms *k)
{
	size_t pg, sym = 0, i;
	uint64_t span;

	span = k->sym[k->nr - 1].addr - k->sym[0].addr;
	if ((span >> HS_KSYM_PAGE_SHIFT) + 2 > HS_KSYM_MAX_PAGES)
		return;
	k->base = k->sym[0].addr;
	k->page = malloc(((span >> HS_KSYM_PAGE_SHIFT) + 2) * sizeof(*k->page));
	k->off = malloc(k->nr * sizeof(*k->off));
	if (!k->page || !k->off) {
		free(k->page);
		free(k->off);
		k->page = NULL;
		k->off = NULL;
		return;
	}
	k->nr_pages = (span >> HS_KSYM_PAGE_SHIFT) + 2;
	for (i = 0; i < k->nr; i++)
		k->off[i] = k->sym[i].addr - k->base;
	for (pg = 0; pg < k->nr_pages; pg++) {
		uint64_t start = k->base + ((uint64_t)pg << HS_KSYM_PAGE_SHIFT);

		while (sym + 1 < k->nr && k->sym[sym + 1].addr <= start)
			sym++;
		k->page[pg] = sym;
	}
}

int hs_ksyms_load(struct hs_ksyms *k, const char *kallsyms, const char *modules, char *err,
		  size_t errlen)
{
	struct hs_ksym_build b = { 0 };
	size_t len, nonzero = 0, i, out;
	char *text;
	int ret;

	memset(k, 0, sizeof(*k));
	if (!kallsyms)
		kallsyms = "/proc/kallsyms";
	text = hs_read_file(kallsyms, &len);
	if (!text) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", kallsyms, strerror(-ret));
		return ret;
	}
	ret = hs_parse_kallsyms(&b, text, &nonzero);
	free(text);
	if (ret)
		goto out_nomem;
	if (!nonzero && len) {
		snprintf(err, errlen, "%s", hs_kptr_restrict_hint);
		ret = -EPERM;
		goto out_free;
	}
	if (!b.nr) {
		snprintf(err, errlen, "%s lists no kernel text symbol", kallsyms);
		ret = -ENOENT;
		goto out_free;
	}
	text = modules ? hs_read_file(modules, &len) : NULL;
	if (text) {
		ret = hs_parse_modules(&b, text);
		free(text);
		if (ret)
			goto out_nomem;
	}

	qsort(b.t, b.nr, sizeof(*b.t), hs_tmp_cmp);
	k->sym = malloc(b.nr * sizeof(*k->sym));
	if (!k->sym)
		goto out_nomem;
	/* One range per address: the first symbol listed there. */
	for (i = 0, out = 0; i < b.nr; i++) {
		if (out && k->sym[out - 1].addr == b.t[i].addr)
			continue;
		k->sym[out].addr = b.t[i].addr;
		k->sym[out].name = b.t[i].name;
		k->sym[out].len = b.t[i].len;
		out++;
	}
	k->nr = out;
	hs_ksyms_index(k);
	k->names = realloc(b.names, b.names_len + HS_KSYM_NAMES_PAD);
	if (!k->names)
		goto out_nomem;
	memset(k->names + b.names_len, 0, HS_KSYM_NAMES_PAD);
	k->names_len = b.names_len;
	free(b.t);
	return 0;

out_nomem:
	ret = -ENOMEM;
	snprintf(err, errlen, "out of memory loading %s", kallsyms);
out_free:
	free(b.t);
	free(b.names);
	hs_ksyms_free(k);
	return ret;
}

void hs_ksyms_free(struct hs_ksyms *k)
{
	free(k->sym);
	free(k->names);
	free(k->page);
	free(k->off);
	memset(k, 0, sizeof(*k));
}

size_t hs_ksyms_find(const struct hs_ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nr, n, half;

	/*
	 * Within one page's ranges, from the last one starting before the
	 * page (at or below @addr), to the last starting before the next.
	 */
	if (k->page && addr - k->base < (k->nr_pages - 1) << HS_KSYM_PAGE_SHIFT) {
		uint32_t off = addr - k->base;
		size_t pg = off >> HS_KSYM_PAGE_SHIFT;

		lo = k->page[pg];
		for (n = k->page[pg + 1] + 1 - lo; n > 1; n -= half) {
			half = n / 2;
			lo = k->off[lo + half] <= off ? lo + half : lo;
		}
		return lo;
	}
	/* The last range starting at or below @addr (branch-free: cmov). */
	for (n = hi - lo; n > 1; n -= half) {
		half = n / 2;
		lo = k->sym[lo + half].addr <= addr ? lo + half : lo;
	}
	if (lo < k->nr && k->sym[lo].addr <= addr)
		return lo;
	return lo ? lo - 1 : k->nr;
}

const char *hs_ksyms_lookup(const struct hs_ksyms *k, uint64_t addr, size_t *len)
{
	size_t i = hs_ksyms_find(k, addr);

	if (i == k->nr || k->sym[i].name == HS_KSYM_NONE) {
		if (len)
			*len = sizeof(HS_UNKNOWN_FRAME) - 1;
		return HS_UNKNOWN_FRAME;
	}
	if (len)
		*len = k->sym[i].len;
	return k->names + k->sym[i].name;
}

/*
 * Each line's name, size, state and address ("NAME SIZE REFS DEPS STATE
 * ADDR"), not its use counts, which change whenever a process opens a
 * module's device (this tool's /dev/hotstack: every hotstack status made
 * the agent load the kernel's symbols again at its next interval).
 */
uint64_t hs_modules_sig(const char *path)
{
	char *text = hs_read_file(path, NULL), *line, *save = NULL;
	char name[64], state[16], addr[24];
	unsigned long size;
	uint64_t sig = 0;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%63s %lu %*s %*s %15s %23s", name, &size, state, addr) == 4)
			sig = sig * 0x100000001b3ULL ^ hs_hash(name, strlen(name)) ^ size ^
			      hs_hash(state, strlen(state)) ^ hs_hash(addr, strlen(addr)) << 1;
	free(text);
	return sig;
}

int hs_ksyms_refresh(struct hs_ksyms_live *l, int force, char *err, size_t errlen)
{
	uint64_t sig = hs_modules_sig("/proc/modules");
	struct hs_ksyms k;
	int ret;

	if (l->loaded && sig == l->modules_sig && !force)
		return 0;
	ret = hs_ksyms_load(&k, NULL, "/proc/modules", err, errlen);
	if (ret)
		return ret;
	hs_ksyms_live_free(l);
	l->k = k;
	l->loaded = 1;
	l->modules_sig = sig;
	return 0;
}

void hs_ksyms_live_free(struct hs_ksyms_live *l)
{
	if (l->loaded)
		hs_ksyms_free(&l->k);
	l->loaded = 0;
}
