// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables (unwind.c) against binutils' own reading of the same
 * call-frame information (readelf --debug-dump=frames-interp): x86_64
 * and arm64 libc, the vDSO, this program, functions of known prologues
 * written in assembly for both machines, and a .debug_frame-only library.
 * The loader (uwload.c) on this process, a non-PIE child and made-up maps,
 * through a stand-in for the module's ioctls that keeps what it was sent:
 * for every row of a binary's table, the address it stands for in the
 * process must find, through the mapping's bias, the same rule.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unwind.h"
#include "util.h"
#include "uwload.h"

#define LIBC_X86	"/lib/x86_64-linux-gnu/libc.so.6"
#define LIBC_ARM64	"/usr/lib/aarch64-linux-gnu/libc.so.6"
#define LIBPYTHON	"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
#define PYTHON		"/usr/bin/python3.11"
#define LIBLZMA		"/lib/x86_64-linux-gnu/liblzma.so.5"

static char tmpdir[] = "/tmp/hs-unwind-XXXXXX";

static const char *tmp(const char *name)
{
	static char paths[4][128];
	static int next;
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static bool have(const char *path)
{
	return !access(path, R_OK);
}

/* This program's file. */
static const char *self_path(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_true(n > 0);
	path[n] = '\0';
	return path;
}

static void write_file_all(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* ---- building ------------------------------------------------------------ */

struct elf_file {
	int fd;
	Elf *elf;
};

static Elf *open_elf(struct elf_file *e, const char *path)
{
	elf_version(EV_CURRENT);
	e->fd = open(path, O_RDONLY);
	assert_true(e->fd >= 0);
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e->elf);
	return e->elf;
}

static void close_elf(struct elf_file *e)
{
	elf_end(e->elf);
	close(e->fd);
}

/* @path's table into *@t; the fastest of three builds in *@ms. */
static void build(const char *path, struct hs_uw_table *t, double *ms)
{
	struct elf_file e;
	double t0, best = 1e9;
	int i;

	open_elf(&e, path);
	for (i = 0; i < 3; i++) {
		if (i)
			hs_uw_table_free(t);
		t0 = hs_now();
		assert_int_equal(hs_uw_build(e.elf, t), 0);
		if ((hs_now() - t0) * 1e3 < best)
			best = (hs_now() - t0) * 1e3;
	}
	close_elf(&e);
	if (ms)
		*ms = best;
}

/* The value of symbol @name in @path (its .symtab or .dynsym), or 0. */
static uint64_t symbol(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	struct elf_file e;
	uint64_t value = 0;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i;

	open_elf(&e, path);
	while (!value && (scn = elf_nextscn(e.elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, i, &sym) &&
			    !strcmp(elf_strptr(e.elf, sh.sh_link, sym.st_name), name))
				value = sym.st_value;
	}
	close_elf(&e);
	return value;
}

/* ---- readelf, the oracle ------------------------------------------------- */

/* One row's rules as readelf prints them: "rsp+16", "exp"; "c-8", "u", "s". */
struct re_state {
	char cfa[32], ra[32], fp[32];
};

struct re_row {
	uint64_t loc;
	struct re_state s;
};

struct re_cie {
	unsigned long off;
	bool signal;
	struct re_state init;
};

/* A CIE or FDE that says DW_CFA_undefined of the frame pointer or the return address. */
struct re_undef {
	unsigned long off;
	bool fp, ra;
};

struct oracle {
	const struct hs_uw_table *t;
	bool x86;
	const char *sp, *fp;	/* readelf's names of the registers */
	const char *fp_raw, *ra_raw;	/* as its raw dump names them */
	unsigned long rows, checked, bad, gaps, ends, exprs, plts;
	struct { uint64_t start, end; } *fde;
	size_t nr_fde, fde_cap;
	struct re_undef *undef;
	size_t nr_undef;
	bool fp_undef, ra_undef;	/* the current FDE's (or its CIE's) */
};

static bool parse_saved(const char *s, int64_t *off)
{
	char *end;

	if (s[0] != 'c' || (s[1] != '+' && s[1] != '-'))
		return false;
	*off = strtoll(s + 1, &end, 10);
	return !*end;
}

/*
 * What the builder must say for readelf's @s: *@want, or EXPR (*@expr).
 * readelf prints "u" both for a register no instruction named (the
 * frame pointer unchanged, arm64's return address in the link register)
 * and for DW_CFA_undefined: where the FDE or its CIE says the latter,
 * END (*@may_end) or EXPR (*@may_expr) are right too.
 */
static void expected(const struct oracle *o, const struct re_state *s, bool signal,
		     struct hotstack_unwind_rule *want, bool *expr, bool *may_end, bool *may_expr)
{
	char reg[32], *end;
	const char *sign;
	int64_t off;

	memset(want, 0, sizeof(*want));
	*expr = false;
	*may_end = false;
	*may_expr = false;
	if (signal) {
		want->kind = HOTSTACK_UW_SIGNAL;
		return;
	}
	if (!strcmp(s->ra, "u")) {
		/* x86_64's CIE always says where it is: "u" is DW_CFA_undefined. */
		if (o->x86) {
			want->kind = HOTSTACK_UW_END;
			return;
		}
		*may_end = o->ra_undef;
	} else if (parse_saved(s->ra, &off)) {
		if ((o->x86 && off != -8) || off % 8 || off < INT16_MIN || off > INT16_MAX)
			goto expr;
		want->flags |= HOTSTACK_UWF_RA_SAVED;
		want->ra_off = off;
	} else if (o->x86 || strcmp(s->ra, "s")) {
		goto expr;
	}
	sign = strpbrk(s->cfa, "+-");
	if (!sign || (size_t)(sign - s->cfa) >= sizeof(reg))
		goto expr;
	memcpy(reg, s->cfa, sign - s->cfa);
	reg[sign - s->cfa] = '\0';
	off = strtoll(sign, &end, 10);
	if (*end)
		goto expr;
	if (!strcmp(reg, o->sp))
		want->kind = HOTSTACK_UW_CFA_SP;
	else if (!strcmp(reg, o->fp))
		want->kind = HOTSTACK_UW_CFA_FP;
	else
		goto expr;
	if (off < -(1 << 20) || off > 1 << 20)
		goto expr;
	want->cfa_off = off;
	if (parse_saved(s->fp, &off)) {
		if (off % 8 || off < INT16_MIN || off > INT16_MAX)
			goto expr;
		want->flags |= HOTSTACK_UWF_FP_SAVED;
		want->fp_off = off;
	} else if (strcmp(s->fp, "u") && strcmp(s->fp, "s")) {
		goto expr;
	}
	*may_expr = !strcmp(s->fp, "u") && o->fp_undef;
	return;
expr:
	memset(want, 0, sizeof(*want));
	want->kind = HOTSTACK_UW_EXPR;
	*expr = true;
}

static void print_rule(const char *what, const struct hotstack_unwind_rule *r)
{
	if (!r) {
		printf("%s: none", what);
		return;
	}
	printf("%s: kind %u flags %u cfa %d fp %d ra %d", what, r->kind, r->flags, r->cfa_off,
	       r->fp_off, r->ra_off);
}

static void oracle_check(struct oracle *o, uint64_t addr, const struct re_state *s, bool signal)
{
	const struct hotstack_unwind_rule *r = hs_uw_lookup(o->t, addr);
	struct hotstack_unwind_rule want;
	bool expr, may_end, may_expr, ok;

	expected(o, s, signal, &want, &expr, &may_end, &may_expr);
	o->checked++;
	if (!r)
		ok = false;
	else if (expr)
		/* readelf's "exp" CFA: the PLT's, or one no kind says. */
		ok = r->kind == HOTSTACK_UW_EXPR ||
		     (o->x86 && r->kind == HOTSTACK_UW_PLT && !strcmp(s->cfa, "exp"));
	else
		ok = !memcmp(r, &want, sizeof(want)) || (may_end && r->kind == HOTSTACK_UW_END) ||
		     (may_expr && r->kind == HOTSTACK_UW_EXPR);
	if (r) {
		o->ends += r->kind == HOTSTACK_UW_END;
		o->exprs += r->kind == HOTSTACK_UW_EXPR;
		o->plts += r->kind == HOTSTACK_UW_PLT;
	}
	if (!ok && o->bad++ < 10) {
		printf("# %#llx: readelf cfa %s ra %s fp %s%s; ", (unsigned long long)addr, s->cfa,
		       s->ra, s->fp, signal ? " signal" : "");
		print_rule("table", r);
		printf("\n");
	}
}

/* Rows [@rows, @rows + @nr) of an FDE [@start, @end): each checked at its first and last byte. */
static void oracle_fde(struct oracle *o, uint64_t start, uint64_t end, const struct re_row *rows,
		       size_t nr, bool signal)
{
	uint64_t next;
	size_t i;

	if (start == end)
		return;
	for (i = 0; i < nr; i++) {
		next = i + 1 < nr ? rows[i + 1].loc : end;
		if (next <= rows[i].loc)
			continue;
		o->rows++;
		oracle_check(o, rows[i].loc, &rows[i].s, signal);
		oracle_check(o, next - 1, &rows[i].s, signal);
	}
	if (o->nr_fde == o->fde_cap) {
		o->fde_cap = o->fde_cap ? o->fde_cap * 2 : 1024;
		o->fde = realloc(o->fde, o->fde_cap * sizeof(*o->fde));
		assert_non_null(o->fde);
	}
	o->fde[o->nr_fde].start = start;
	o->fde[o->nr_fde++].end = end;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Past each FDE, unless another starts there: no rule (frame pointers). */
static void oracle_gaps(struct oracle *o)
{
	uint64_t *starts = malloc((o->nr_fde + 1) * sizeof(*starts));
	const struct hotstack_unwind_rule *r;
	size_t i;

	assert_non_null(starts);
	for (i = 0; i < o->nr_fde; i++)
		starts[i] = o->fde[i].start;
	qsort(starts, o->nr_fde, sizeof(*starts), cmp_u64);
	for (i = 0; i < o->nr_fde; i++) {
		if (bsearch(&o->fde[i].end, starts, o->nr_fde, sizeof(*starts), cmp_u64))
			continue;
		o->gaps++;
		r = hs_uw_lookup(o->t, o->fde[i].end);
		if (r && r->kind != HOTSTACK_UW_NONE && o->bad++ < 10)
			printf("# %#llx: past an FDE, kind %u\n", (unsigned long long)o->fde[i].end,
			       r->kind);
	}
	free(starts);
}

/*
 * Split @line into at most @max blank-separated words; readelf's "r10
 * (r10)" (a register saved in another) is one.
 */
static int words(char *line, char **w, int max)
{
	int n = 0;
	char *s;

	for (s = strtok(line, " \t\n"); s && n < max; s = strtok(NULL, " \t\n")) {
		if (s[0] == '(' && n)
			w[n - 1][strlen(w[n - 1])] = ' ';
		else
			w[n++] = s;
	}
	return n;
}

/* The CIEs and FDEs of @path's section @want that say DW_CFA_undefined of FP or RA. */
static void oracle_undefined(struct oracle *o, const char *path, const char *want)
{
	char line[1024], fp[32], ra[32];
	unsigned long off = 0, len, id;
	struct re_undef *u;
	bool in = false;
	FILE *f;

	snprintf(fp, sizeof(fp), "DW_CFA_undefined: %s", o->fp_raw);
	snprintf(ra, sizeof(ra), "DW_CFA_undefined: %s", o->ra_raw);
	snprintf(line, sizeof(line), "readelf --debug-dump=frames '%s' 2>/dev/null", path);
	f = popen(line, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "Contents of the "))
			in = strstr(line, want) != NULL;
		else if (in && isxdigit((unsigned char)line[0]) &&
			 sscanf(line, "%lx %lx %lx", &off, &len, &id) == 3)
			continue;
		else if (in && (strstr(line, fp) || strstr(line, ra))) {
			o->undef = realloc(o->undef, (o->nr_undef + 1) * sizeof(*o->undef));
			assert_non_null(o->undef);
			u = &o->undef[o->nr_undef++];
			u->off = off;
			u->fp = strstr(line, fp) != NULL;
			u->ra = strstr(line, ra) != NULL;
		}
	}
	/* Its status is 1 for some of its warnings, even unprinted ones (libc). */
	pclose(f);
}

/* Whether entry @off said DW_CFA_undefined of the frame pointer (@ra: return address). */
static bool oracle_said_undefined(const struct oracle *o, unsigned long off, bool ra)
{
	size_t i;

	for (i = 0; i < o->nr_undef; i++)
		if (o->undef[i].off == off && (ra ? o->undef[i].ra : o->undef[i].fp))
			return true;
	return false;
}

/*
 * Compare @t, built from @path, with readelf's interpretation of the
 * same section, row by row. Returns the mismatches.
 */
static unsigned long oracle_run(struct oracle *o, const char *path, const struct hs_uw_table *t)
{
	const char *want = t->debug_frame ? ".debug_frame" : ".eh_frame";
	struct re_cie *cies = NULL, *cie = NULL;
	size_t nr_cie = 0, nr_rows = 0, rows_cap = 0, i;
	unsigned long off, cie_off, len, id;
	char line[8192], copy[8192], *w[64], *q;
	int col_ra = -1, col_fp = -1, nw, c;
	enum { NOTHING, IN_CIE, IN_FDE } cur = NOTHING;
	struct re_row *rows = NULL;
	unsigned long long lo = 0, hi = 0;
	bool in = false, signal = false;
	FILE *f;

	memset(o, 0, sizeof(*o));
	o->t = t;
	o->x86 = t->machine == EM_X86_64;
	o->sp = o->x86 ? "rsp" : "sp";
	o->fp = o->x86 ? "rbp" : "x29";
	o->fp_raw = o->x86 ? "r6 (rbp)" : "r29 (x29)";
	o->ra_raw = o->x86 ? "r16 (rip)" : "r30 (x30)";
	oracle_undefined(o, path, want);
	snprintf(line, sizeof(line), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	f = popen(line, "r");
	assert_non_null(f);
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);
		bool header = !eof && (strstr(line, " CIE ") || strstr(line, " FDE cie=") ||
				       strstr(line, "Contents of the "));

		/* An entry ends at a blank line, the next entry, or the end. */
		if (eof || header || line[0] == '\n') {
			if (cur == IN_CIE) {
				if (nr_rows)
					cie->init = rows[nr_rows - 1].s;
			} else if (cur == IN_FDE) {
				if (!nr_rows && cie) {
					rows[0].loc = lo;
					rows[0].s = cie->init;
					nr_rows = 1;
				}
				oracle_fde(o, lo, hi, rows, nr_rows, signal);
			}
			cur = NOTHING;
		}
		if (eof)
			break;
		if (strstr(line, "Contents of the ")) {
			in = strstr(line, want) != NULL;
			nr_cie = 0;
			continue;
		}
		if (!in)
			continue;
		memcpy(copy, line, sizeof(copy));
		q = strstr(line, " FDE cie=");
		if (strstr(line, " CIE ") && sscanf(line, "%lx %lx %lx", &off, &len, &id) == 3) {
			cies = realloc(cies, (nr_cie + 1) * sizeof(*cies));
			assert_non_null(cies);
			cie = &cies[nr_cie++];
			memset(cie, 0, sizeof(*cie));
			cie->off = off;
			q = strchr(line, '"');
			cie->signal = q && memchr(q + 1, 'S', strcspn(q + 1, "\""));
			strcpy(cie->init.cfa, "?");
			strcpy(cie->init.ra, "u");
			strcpy(cie->init.fp, "u");
			cur = IN_CIE;
			nr_rows = 0;
			col_ra = col_fp = -1;
		} else if (q) {
			assert_int_equal(sscanf(q, " FDE cie=%lx pc=%llx..%llx", &cie_off, &lo, &hi), 3);
			off = strtoul(line, NULL, 16);
			o->fp_undef = oracle_said_undefined(o, off, false) ||
				      oracle_said_undefined(o, cie_off, false);
			o->ra_undef = oracle_said_undefined(o, off, true) ||
				      oracle_said_undefined(o, cie_off, true);
			for (cie = NULL, i = 0; i < nr_cie; i++)
				if (cies[i].off == cie_off)
					cie = &cies[i];
			assert_non_null(cie);
			signal = cie->signal;
			cur = IN_FDE;
			nr_rows = 0;
			col_ra = col_fp = -1;
		} else if (!strncmp(line, "   LOC", 6)) {
			nw = words(copy, w, 64);
			for (c = 2; c < nw; c++) {
				if (!strcmp(w[c], "ra"))
					col_ra = c;
				if (!strcmp(w[c], o->fp))
					col_fp = c;
			}
		} else if (cur != NOTHING && isxdigit((unsigned char)line[0])) {
			nw = words(copy, w, 64);
			if (nw < 2)
				continue;
			if (nr_rows + 1 >= rows_cap) {
				rows_cap = rows_cap ? rows_cap * 2 : 256;
				rows = realloc(rows, rows_cap * sizeof(*rows));
				assert_non_null(rows);
			}
			rows[nr_rows].loc = strtoull(w[0], NULL, 16);
			snprintf(rows[nr_rows].s.cfa, sizeof(rows[0].s.cfa), "%s", w[1]);
			snprintf(rows[nr_rows].s.ra, sizeof(rows[0].s.ra), "%s",
				 col_ra >= 0 && col_ra < nw ? w[col_ra] : "u");
			snprintf(rows[nr_rows].s.fp, sizeof(rows[0].s.fp), "%s",
				 col_fp >= 0 && col_fp < nw ? w[col_fp] : "u");
			nr_rows++;
		}
		if (!rows) {
			rows_cap = 256;
			rows = malloc(rows_cap * sizeof(*rows));
			assert_non_null(rows);
		}
	}
	pclose(f);
	oracle_gaps(o);
	free(rows);
	free(cies);
	free(o->fde);
	o->fde = NULL;
	free(o->undef);
	o->undef = NULL;
	return o->bad;
}

static void print_table(const char *name, const struct hs_uw_table *t, double ms)
{
	printf("# %s: %u FDEs (%u skipped), %u rows, %u rules, %llu bytes (%.2f a row), "
	       "built in %.1f ms%s\n", name, t->n.fdes, t->n.fdes_skipped, t->n.rows, t->n.rules,
	       (unsigned long long)hs_uw_kernel_bytes(t),
	       (double)hs_uw_kernel_bytes(t) / t->n.rows, ms, t->debug_frame ? " (.debug_frame)" : "");
	printf("#   kinds none %u sp %u fp %u plt %u end %u expr %u signal %u; "
	       "expr why cfa %u ra %u fp %u range %u\n", t->n.kinds[HOTSTACK_UW_NONE],
	       t->n.kinds[HOTSTACK_UW_CFA_SP], t->n.kinds[HOTSTACK_UW_CFA_FP],
	       t->n.kinds[HOTSTACK_UW_PLT], t->n.kinds[HOTSTACK_UW_END],
	       t->n.kinds[HOTSTACK_UW_EXPR], t->n.kinds[HOTSTACK_UW_SIGNAL],
	       t->n.expr[HS_UW_EXPR_CFA], t->n.expr[HS_UW_EXPR_RA], t->n.expr[HS_UW_EXPR_FP],
	       t->n.expr[HS_UW_EXPR_RANGE]);
}

/* Build @path's table, print its figures, compare it with readelf's. */
static void against_readelf(const char *name, const char *path, double max_ms)
{
	struct hs_uw_table t;
	struct oracle o;
	double ms;

	if (!have(path)) {
		printf("# %s not run: no %s\n", name, path);
		skip();
	}
	build(path, &t, &ms);
	print_table(name, &t, ms);
	oracle_run(&o, path, &t);
	printf("#   readelf: %lu rows, %lu addresses checked, %lu gaps, %lu END, %lu EXPR, "
	       "%lu PLT, %lu differ\n", o.rows, o.checked, o.gaps, o.ends, o.exprs, o.plts, o.bad);
	assert_int_equal(o.bad, 0);
	assert_true(o.rows > 0);
	assert_true(ms < max_ms);
	hs_uw_table_free(&t);
}

/* ---- the builder ----------------------------------------------------------- */

static void pointer_encodings(void **state)
{
	static const uint8_t b[] = {
		0x10, 0x00, 0x00, 0x00,			/* udata4 16 */
		0xf0, 0xff, 0xff, 0xff,			/* sdata4 -16 */
		0xe5, 0x8e, 0x26,			/* uleb128 624485 */
		0xc0, 0xbb, 0x78,			/* sleb128 -123456 */
		0x34, 0x12,				/* udata2 0x1234 */
		0xfe, 0xff,				/* sdata2 -2 */
		1, 2, 3, 4, 5, 6, 7, 8,			/* absptr (8) / udata8 */
	};
	const uint8_t *p = b, *end = b + sizeof(b);
	uint64_t v;

	(void)state;
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_UDATA4, 8, 0, 0, &v), 0);
	assert_int_equal(v, 16);
	/* pcrel: from the field's own address. */
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_SDATA4 | HS_EH_PE_PCREL, 8, 0, 0x1000,
					&v), 0);
	assert_int_equal(v, 0x1000 - 16);
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_ULEB128, 8, 0, 0, &v), 0);
	assert_int_equal(v, 624485);
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_SLEB128, 8, 0, 0, &v), 0);
	assert_int_equal((int64_t)v, -123456);
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_UDATA2, 8, 0, 0, &v), 0);
	assert_int_equal(v, 0x1234);
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_SDATA2, 8, 0, 0, &v), 0);
	assert_int_equal((int64_t)v, -2);
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_ABSPTR, 8, 0, 0, &v), 0);
	assert_int_equal(v, 0x0807060504030201ULL);
	assert_ptr_equal(p, end);
	/* Big endian; 4-byte addresses wrap; cut short; not for FDEs. */
	p = b + sizeof(b) - 8;
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_UDATA8, 8, 1, 0, &v), 0);
	assert_int_equal(v, 0x0102030405060708ULL);
	p = b + 4;
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_SDATA4 | HS_EH_PE_PCREL, 4, 0, 8, &v), 0);
	assert_int_equal(v, 0xfffffff8ULL);
	p = b + sizeof(b) - 2;
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_UDATA4, 8, 0, 0, &v), -EINVAL);
	p = b + 8;
	assert_int_equal(hs_uw_read_ptr(&p, b + 10, HS_EH_PE_ULEB128, 8, 0, 0, &v), -EINVAL);
	p = b;
	assert_int_equal(hs_uw_read_ptr(&p, end, HS_EH_PE_OMIT, 8, 0, 0, &v), -EINVAL);
	assert_int_equal(hs_uw_read_ptr(&p, end, 0x80 | HS_EH_PE_UDATA4, 8, 0, 0, &v), -EINVAL);
	assert_int_equal(hs_uw_read_ptr(&p, end, 0x30 | HS_EH_PE_UDATA4, 8, 0, 0, &v), -EINVAL);
	assert_int_equal(hs_uw_read_ptr(&p, end, 0x05, 8, 0, 0, &v), -EINVAL);
	assert_ptr_equal(p, b);
}

static void libc_x86_64(void **state)
{
	(void)state;
	/* "Well under 100 ms" measured; the bound is for a loaded machine. */
	against_readelf("x86_64 libc", LIBC_X86, 1000);
}

static void libc_arm64(void **state)
{
	(void)state;
	against_readelf("arm64 libc", LIBC_ARM64, 1000);
}

static void other_binaries(void **state)
{
	(void)state;
	if (have(LIBLZMA))
		against_readelf("liblzma", LIBLZMA, 1000);
	if (have(LIBPYTHON))
		against_readelf("libpython3.11", LIBPYTHON, 2000);
	else if (have(PYTHON))
		against_readelf("python3.11", PYTHON, 2000);
	/* Not /proc/self/exe: readelf would read itself. */
	against_readelf("this program", self_path(), 1000);
}

/* The vDSO's image as a file, for readelf. */
static const char *vdso_file(size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	const char *path = tmp("vdso.so");
	size_t n, i;
	FILE *f;

	if (!eh)
		return NULL;
	n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > n)
			n = ph[i].p_offset + ph[i].p_filesz;
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(eh, 1, n, f), n);
	fclose(f);
	if (size)
		*size = n;
	return path;
}

static void vdso(void **state)
{
	const char *path = vdso_file(NULL);

	(void)state;
	if (!path)
		skip();
	against_readelf("vDSO", path, 100);
}

/* Functions whose CFI says each kind of rule, for both machines. */
static const char asm_x86_64[] =
	"	.text\n"
	"	.macro fn name\n"
	"	.p2align 4\n"
	"	.globl \\name\n"
	"	.type \\name, @function\n"
	"\\name:\n"
	"	.endm\n"
	"	fn hs_fp\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	fn hs_fp_pushed\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	fn hs_fp_body\n"
	"	nop\n"
	"	popq %rbp\n"
	"	.cfi_restore %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	fn hs_fp_ret\n"
	"	ret\n"
	"	.cfi_endproc\n"
	/* After its FDE, code without one. */
	"	.globl hs_nocfi\n"
	"hs_nocfi:\n"
	"	nop\n"
	"	ret\n"
	"	fn hs_end\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined %rip\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_sig\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_plt11\n"
	"	.cfi_startproc\n"
	"	.cfi_escape 0x0f,0x0b,0x77,0x08,0x80,0x00,0x3f,0x1a,0x3b,0x2a,0x33,0x24,0x22\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_plt10\n"
	"	.cfi_startproc\n"
	"	.cfi_escape 0x0f,0x0b,0x77,0x08,0x80,0x00,0x3f,0x1a,0x3a,0x2a,0x33,0x24,0x22\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_notplt\n"
	"	.cfi_startproc\n"
	"	.cfi_escape 0x0f,0x0b,0x77,0x08,0x80,0x00,0x3f,0x1a,0x3b,0x2a,0x32,0x24,0x22\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_deref\n"
	"	.cfi_startproc\n"
	"	.cfi_escape 0x0f,0x03,0x77,0x08,0x06\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_fp_far\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa_offset 65536\n"
	"	.cfi_offset %rbp, -40000\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_fp_reg\n"
	"	.cfi_startproc\n"
	"	.cfi_register %rbp, %rbx\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_fp_undef\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined %rbp\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_fp_same\n"
	"	.cfi_startproc\n"
	"	.cfi_offset %rbp, -16\n"
	"	nop\n"
	"	.cfi_same_value %rbp\n"
	"	fn hs_fp_same2\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_cfa_edge\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa_offset 1048576\n"
	"	nop\n"
	"	.cfi_def_cfa_offset 1048584\n"
	"	fn hs_cfa_big\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_cfa_r10\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa %r10, 0\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_ra_odd\n"
	"	.cfi_startproc\n"
	"	.cfi_offset %rip, -16\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_state\n"
	"	.cfi_startproc\n"
	"	pushq %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_remember_state\n"
	"	popq %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	fn hs_state_early\n"
	"	ret\n"
	"	.cfi_restore_state\n"
	"	fn hs_state_late\n"
	"	nop\n"
	"	.cfi_endproc\n";

static const char asm_arm64[] =
	"	.text\n"
	"	.macro fn name\n"
	"	.p2align 4\n"
	"	.globl \\name\n"
	"	.type \\name, %function\n"
	"\\name:\n"
	"	.endm\n"
	"	fn hs_leaf\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	fn hs_frame\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, -32]!\n"
	"	.cfi_def_cfa_offset 32\n"
	"	.cfi_offset 29, -32\n"
	"	.cfi_offset 30, -24\n"
	"	fn hs_frame_saved\n"
	"	mov x29, sp\n"
	"	.cfi_def_cfa_register 29\n"
	"	fn hs_frame_fp\n"
	"	ldp x29, x30, [sp], 32\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa 31, 0\n"
	"	fn hs_frame_ret\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.globl hs_nocfi\n"
	"hs_nocfi:\n"
	"	ret\n"
	"	fn hs_end\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined 30\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_sig\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	.cfi_endproc\n"
	/* Pointer authentication, with the B key ("zRB"): ignored. */
	"	fn hs_pac\n"
	"	.cfi_startproc\n"
	"	.cfi_b_key_frame\n"
	"	hint 27\n"
	"	.cfi_negate_ra_state\n"
	"	fn hs_pac_signed\n"
	"	stp x29, x30, [sp, -16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	fn hs_pac_saved\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_ra_reg\n"
	"	.cfi_startproc\n"
	"	.cfi_register 30, 9\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_ra_far\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa_offset 65536\n"
	"	.cfi_offset 30, -40000\n"
	"	nop\n"
	"	.cfi_endproc\n"
	"	fn hs_cfa_x9\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa 9, 16\n"
	"	nop\n"
	"	.cfi_endproc\n";

#define RULE(k, f, c, fp, ra) { .kind = HOTSTACK_UW_##k, .flags = (f), .cfa_off = (c), \
				.fp_off = (fp), .ra_off = (ra) }
#define RA HOTSTACK_UWF_RA_SAVED
#define FP HOTSTACK_UWF_FP_SAVED

struct known {
	const char *sym;
	struct hotstack_unwind_rule rule;
};

static const struct known known_x86_64[] = {
	{ "hs_fp", RULE(CFA_SP, RA, 8, 0, -8) },
	{ "hs_fp_pushed", RULE(CFA_SP, RA | FP, 16, -16, -8) },
	{ "hs_fp_body", RULE(CFA_FP, RA | FP, 16, -16, -8) },
	{ "hs_fp_ret", RULE(CFA_SP, RA, 8, 0, -8) },
	{ "hs_nocfi", RULE(NONE, 0, 0, 0, 0) },
	{ "hs_end", RULE(END, 0, 0, 0, 0) },
	{ "hs_sig", RULE(SIGNAL, 0, 0, 0, 0) },
	{ "hs_plt11", RULE(PLT, RA, 11, 0, -8) },
	{ "hs_plt10", RULE(PLT, RA, 10, 0, -8) },
	{ "hs_notplt", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_deref", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_fp_far", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_fp_reg", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_fp_undef", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_fp_same", RULE(CFA_SP, RA | FP, 8, -16, -8) },
	{ "hs_fp_same2", RULE(CFA_SP, RA, 8, 0, -8) },
	{ "hs_cfa_edge", RULE(CFA_SP, RA, 1 << 20, 0, -8) },
	{ "hs_cfa_big", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_cfa_r10", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_ra_odd", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_state", RULE(CFA_SP, RA, 8, 0, -8) },
	{ "hs_state_early", RULE(CFA_SP, RA, 8, 0, -8) },
	{ "hs_state_late", RULE(CFA_SP, RA, 16, 0, -8) },
	{ NULL },
};

static const struct known known_arm64[] = {
	{ "hs_leaf", RULE(CFA_SP, 0, 0, 0, 0) },
	{ "hs_frame", RULE(CFA_SP, 0, 0, 0, 0) },
	{ "hs_frame_saved", RULE(CFA_SP, RA | FP, 32, -32, -24) },
	{ "hs_frame_fp", RULE(CFA_FP, RA | FP, 32, -32, -24) },
	{ "hs_frame_ret", RULE(CFA_SP, 0, 0, 0, 0) },
	{ "hs_nocfi", RULE(NONE, 0, 0, 0, 0) },
	{ "hs_end", RULE(END, 0, 0, 0, 0) },
	{ "hs_sig", RULE(SIGNAL, 0, 0, 0, 0) },
	{ "hs_pac", RULE(CFA_SP, 0, 0, 0, 0) },
	{ "hs_pac_signed", RULE(CFA_SP, 0, 0, 0, 0) },
	{ "hs_pac_saved", RULE(CFA_SP, RA | FP, 16, -16, -8) },
	{ "hs_ra_reg", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_ra_far", RULE(EXPR, 0, 0, 0, 0) },
	{ "hs_cfa_x9", RULE(EXPR, 0, 0, 0, 0) },
	{ NULL },
};

/* Assemble @src with @cc into a library; check each symbol's rule, and readelf's. */
static void known_rules(const char *cc, const char *src, const char *name,
			const struct known *k)
{
	const char *s = tmp("known.S"), *so = tmp("known.so");
	const struct hotstack_unwind_rule *r;
	struct hs_uw_table t;
	struct oracle o;
	unsigned int bad = 0;
	uint64_t a;

	write_file_all(s, src);
	if (run("%s -nostdlib -shared -o %s %s", cc, so, s)) {
		printf("# %s not run: %s failed\n", name, cc);
		skip();
	}
	build(so, &t, NULL);
	for (; k->sym; k++) {
		a = symbol(so, k->sym);
		assert_true(a != 0);
		r = hs_uw_lookup(&t, a);
		if (!r || memcmp(r, &k->rule, sizeof(*r))) {
			printf("# %s %s: ", name, k->sym);
			print_rule("table", r);
			print_rule("; want", &k->rule);
			printf("\n");
			bad++;
		}
	}
	/* After the last FDE: no rule. */
	r = hs_uw_lookup(&t, t.base + t.rows[t.nr_rows - 1].pc);
	assert_int_equal(r->kind, HOTSTACK_UW_NONE);
	oracle_run(&o, so, &t);
	printf("# %s: %u rows, %u rules; readelf: %lu rows, %lu differ\n", name, t.nr_rows,
	       t.nr_rules, o.rows, o.bad);
	assert_int_equal(bad, 0);
	assert_int_equal(o.bad, 0);
	hs_uw_table_free(&t);
}

static void known_x86(void **state)
{
	(void)state;
	known_rules("cc", asm_x86_64, "x86_64 prologues", known_x86_64);
}

static void known_arm(void **state)
{
	(void)state;
	if (run("command -v aarch64-linux-gnu-gcc >/dev/null")) {
		printf("# arm64 prologues not run: no aarch64-linux-gnu-gcc\n");
		skip();
	}
	known_rules("aarch64-linux-gnu-gcc", asm_arm64, "arm64 prologues", known_arm64);
}

/*
 * A library whose CFI is in .debug_frame only (its .eh_frame, made by the
 * linker, holds no FDE): gcc -O0 keeps frame pointers.
 */
static void debug_frame(void **state)
{
	const char *src = tmp("df.c"), *so = tmp("df.so");
	struct hs_uw_table t;
	struct oracle o;

	(void)state;
	write_file_all(src, "int hs_df_leaf(int x) { return x + 1; }\n"
			    "int hs_df_call(int x) { return hs_df_leaf(x) * 2; }\n");
	assert_int_equal(run("cc -O0 -g -fno-asynchronous-unwind-tables -fno-unwind-tables "
			     "-nostdlib -shared -fPIC -o %s %s", so, src), 0);
	build(so, &t, NULL);
	assert_true(t.debug_frame);
	oracle_run(&o, so, &t);
	printf("# .debug_frame only: %u rows, %u rules; readelf: %lu rows, %lu differ\n",
	       t.nr_rows, t.nr_rules, o.rows, o.bad);
	assert_int_equal(o.bad, 0);
	assert_true(t.n.kinds[HOTSTACK_UW_CFA_FP] > 0);
	hs_uw_table_free(&t);
}

/* A 32-bit x86 program with CFI at @path; false where binutils cannot make one. */
static bool make_elf32(const char *path)
{
	const char *s = tmp("t32.s");

	write_file_all(s, "	.text\n	.globl _start\n_start:\n	.cfi_startproc\n	ret\n"
			  "	.cfi_endproc\n");
	return !run("as --32 -o %s.o %s 2>/dev/null && ld -m elf_i386 -o %s %s.o 2>/dev/null",
		    path, s, path, path);
}

static void no_cfi(void **state)
{
	const char *s = tmp("nocfi.S"), *so = tmp("nocfi.so"), *bin32 = tmp("t32");
	struct hs_uw_table t;
	struct elf_file e;

	(void)state;
	write_file_all(s, "	.text\n	.globl f\nf:\n	ret\n");
	assert_int_equal(run("cc -nostdlib -shared -o %s %s", so, s), 0);
	open_elf(&e, so);
	assert_int_equal(hs_uw_build(e.elf, &t), -ENOENT);
	close_elf(&e);
	if (!make_elf32(bin32))
		return;
	open_elf(&e, bin32);
	assert_int_equal(hs_uw_build(e.elf, &t), -EOPNOTSUPP);
	close_elf(&e);
}

/* Sizes and build times of the binaries the brief names, for the record. */
static void sizes(void **state)
{
	static const char *const paths[] = { LIBC_X86, LIBPYTHON, PYTHON, LIBLZMA, LIBC_ARM64 };
	struct hs_uw_table t;
	size_t i;
	double ms;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!have(paths[i]))
			continue;
		build(paths[i], &t, &ms);
		printf("# %s: %u rows, %u rules, %llu bytes in the module, %.1f ms\n", paths[i],
		       t.nr_rows, t.nr_rules, (unsigned long long)hs_uw_kernel_bytes(&t), ms);
		hs_uw_table_free(&t);
	}
}

/* ---- the loader, through a stand-in module -------------------------------- */

#define FAKE_TABLES	1024

struct fake_table {
	struct hotstack_unwind_row *rows;
	struct hotstack_unwind_rule *rules;
	uint32_t nr_rows, nr_rules;
};

/* What the module was sent, and how it answers. */
struct fake {
	int add_errno;			/* ADD_TABLE fails with it */
	int maps_errno;			/* SET_MAPS fails with it ... */
	unsigned int maps_fails;	/* ... this many times */
	unsigned int adds, sets, polls;
	struct fake_table tab[FAKE_TABLES];	/* by id - 1 */
	uint32_t nr_tab;
	uint32_t pid;			/* the last SET_MAPS */
	struct hotstack_unwind_map *maps;
	uint32_t nr_maps;
	uint32_t miss[8];		/* UNWIND_MISSES returns these once */
	uint32_t nr_miss;
	uint64_t lost;
};

static struct fake fake;

/* The module's checks of a rule (uapi: struct hotstack_unwind_rule). */
static bool rule_valid(const struct hotstack_unwind_rule *r)
{
	bool cfa = r->kind == HOTSTACK_UW_CFA_SP || r->kind == HOTSTACK_UW_CFA_FP ||
		   r->kind == HOTSTACK_UW_PLT;

	if (r->kind >= HOTSTACK_UW_KINDS || r->pad || (r->flags & ~HOTSTACK_UWF_ALL))
		return false;
	if (!cfa)
		return !r->flags && !r->fp_off && !r->ra_off && !r->cfa_off;
	if (r->kind == HOTSTACK_UW_PLT ? r->cfa_off < 1 || r->cfa_off > 15 :
					 r->cfa_off < -(1 << 20) || r->cfa_off > 1 << 20)
		return false;
	if ((r->flags & HOTSTACK_UWF_FP_SAVED) ? r->fp_off % 8 : r->fp_off != 0)
		return false;
	if ((r->flags & HOTSTACK_UWF_RA_SAVED) ? r->ra_off % 8 : r->ra_off != 0)
		return false;
#ifdef __x86_64__
	return (r->flags & HOTSTACK_UWF_RA_SAVED) && r->ra_off == -8;
#else
	return true;
#endif
}

static int fake_add(void *ctx, int fd, struct hotstack_unwind_table *ut)
{
	const struct hotstack_unwind_row *rows = (const void *)(uintptr_t)ut->rows_ptr;
	const struct hotstack_unwind_rule *rules = (const void *)(uintptr_t)ut->rules_ptr;
	struct fake_table *t;
	uint32_t i;

	(void)ctx;
	(void)fd;
	fake.adds++;
	if (fake.add_errno)
		return -fake.add_errno;
	assert_int_equal(ut->size, sizeof(*ut));
	assert_int_equal(ut->flags | ut->pad | ut->reserved[0] | ut->reserved[1], 0);
	assert_true(ut->nr_rows >= 1 && ut->nr_rows <= HOTSTACK_UW_MAX_ROWS);
	assert_true(ut->nr_rules >= 1 && ut->nr_rules <= HOTSTACK_UW_MAX_RULES);
	for (i = 0; i < ut->nr_rows; i++) {
		assert_true(rows[i].rule < ut->nr_rules);
		assert_true(!i || rows[i].pc > rows[i - 1].pc);
	}
	for (i = 0; i < ut->nr_rules; i++)
		assert_true(rule_valid(&rules[i]));
	assert_true(fake.nr_tab < FAKE_TABLES);
	t = &fake.tab[fake.nr_tab++];
	t->nr_rows = ut->nr_rows;
	t->nr_rules = ut->nr_rules;
	t->rows = malloc(t->nr_rows * sizeof(*rows));
	t->rules = malloc(t->nr_rules * sizeof(*rules));
	assert_non_null(t->rows);
	assert_non_null(t->rules);
	memcpy(t->rows, rows, t->nr_rows * sizeof(*rows));
	memcpy(t->rules, rules, t->nr_rules * sizeof(*rules));
	ut->id = fake.nr_tab;
	ut->bytes = 4ULL * ut->nr_rows + 12ULL * ut->nr_rules;
	return 0;
}

static int fake_set_maps(void *ctx, int fd, struct hotstack_unwind_maps *um)
{
	const struct hotstack_unwind_map *m = (const void *)(uintptr_t)um->maps_ptr;
	uint32_t i;

	(void)ctx;
	(void)fd;
	fake.sets++;
	if (fake.maps_fails) {
		fake.maps_fails--;
		return -fake.maps_errno;
	}
	assert_int_equal(um->size, sizeof(*um));
	assert_int_equal(um->flags | um->reserved, 0);
	assert_true(um->nr_maps >= 1 && um->nr_maps <= HOTSTACK_UW_MAX_MAPS);
	for (i = 0; i < um->nr_maps; i++) {
		assert_true(m[i].start < m[i].end);
		assert_true(!i || m[i].start >= m[i - 1].end);
		assert_true(m[i].table <= fake.nr_tab);
		assert_int_equal(m[i].pad, 0);
		if (!m[i].table)
			assert_int_equal(m[i].bias, 0);
	}
	free(fake.maps);
	fake.maps = malloc(um->nr_maps * sizeof(*m));
	assert_non_null(fake.maps);
	memcpy(fake.maps, m, um->nr_maps * sizeof(*m));
	fake.nr_maps = um->nr_maps;
	fake.pid = um->pid;
	return 0;
}

static int fake_misses(void *ctx, int fd, struct hotstack_unwind_misses *um)
{
	uint32_t *pids = (void *)(uintptr_t)um->pids_ptr;

	(void)ctx;
	(void)fd;
	fake.polls++;
	assert_int_equal(um->size, sizeof(*um));
	assert_true(um->nr >= 1 && um->nr <= 4096);
	assert_true(um->nr >= fake.nr_miss);
	memcpy(pids, fake.miss, fake.nr_miss * sizeof(*pids));
	um->nr = fake.nr_miss;
	um->lost = fake.lost;
	fake.nr_miss = 0;
	fake.lost = 0;
	return 0;
}

static const struct hs_uw_ops fake_ops = {
	.add_table = fake_add,
	.set_maps = fake_set_maps,
	.misses = fake_misses,
};

static void fake_reset(void)
{
	uint32_t i;

	for (i = 0; i < fake.nr_tab; i++) {
		free(fake.tab[i].rows);
		free(fake.tab[i].rules);
	}
	free(fake.maps);
	memset(&fake, 0, sizeof(fake));
}

/* The mapping of the last SET_MAPS that holds @addr, or NULL. */
static const struct hotstack_unwind_map *fake_map(uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < fake.nr_maps; i++)
		if (fake.maps[i].start <= addr && addr < fake.maps[i].end)
			return &fake.maps[i];
	return NULL;
}

/* The rule the module would find at @addr: mapping, bias, row. */
static const struct hotstack_unwind_rule *fake_rule(uint64_t addr)
{
	const struct hotstack_unwind_map *m = fake_map(addr);
	const struct fake_table *t;

	if (!m || !m->table)
		return NULL;
	t = &fake.tab[m->table - 1];
	return hs_uw_find(t->rows, t->nr_rows, t->rules, addr - m->bias);
}

/*
 * Every row of @t (the table of a binary loaded at @load, ELF address +
 * @load = address) finds the same rule through the mappings sent.
 * Returns the rows checked.
 */
static unsigned long same_rules(const char *name, const struct hs_uw_table *t, uint64_t load)
{
	const struct hotstack_unwind_rule *want, *got;
	unsigned long bad = 0;
	uint64_t addr;
	uint32_t i;

	for (i = 0; i < t->nr_rows; i++) {
		addr = load + t->base + t->rows[i].pc;
		want = &t->rules[t->rows[i].rule];
		got = fake_rule(addr);
		if (!got && want->kind == HOTSTACK_UW_NONE)
			continue;
		if ((!got || memcmp(got, want, sizeof(*got))) && bad++ < 5) {
			printf("# %s %#llx: ", name, (unsigned long long)addr);
			print_rule("sent", got);
			print_rule("; built", want);
			printf("\n");
		}
	}
	assert_int_equal(bad, 0);
	return t->nr_rows;
}

struct object {
	const char *want;	/* a part of its name */
	uint64_t load;		/* dlpi_addr */
	char path[PATH_MAX];
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object *o = arg;

	(void)size;
	if (o->want[0] ? !strstr(info->dlpi_name, o->want) : info->dlpi_name[0] != '\0')
		return 0;
	o->load = info->dlpi_addr;
	snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name[0] ? info->dlpi_name :
		 self_path());
	return 1;
}

/*
 * Where the dynamic linker loaded the object named like @want ("": the
 * program); false when there is none (no vDSO under valgrind).
 */
static bool object(const char *want, struct object *o)
{
	memset(o, 0, sizeof(*o));
	o->want = want;
	return dl_iterate_phdr(find_object, o) == 1;
}

__attribute__((noinline)) int unwind_probe_fn(int x)
{
	return x * 3 + 1;
}

/* This process: the program (PIE), libc, liblzma opened now, the vDSO. */
static void load_self(void **state)
{
	static const char *const names[] = { "", "libc.so.6", "liblzma.so.5", "linux-vdso" };
	struct hs_uwload *l = hs_uw_new(-1, &fake_ops);
	const struct hotstack_unwind_rule *r;
	struct hs_uw_stats st;
	struct hs_uw_table t;
	struct elf_file e;
	const char *vdso;
	struct object o;
	void *lzma;
	size_t i;
	double t0;

	(void)state;
	lzma = dlopen("liblzma.so.5", RTLD_NOW);
	fake_reset();
	assert_non_null(l);
	t0 = hs_now();
	assert_int_equal(hs_uw_load_pid(l, getpid()), 0);
	printf("# this process loaded in %.1f ms: %u tables, %u mappings\n",
	       (hs_now() - t0) * 1e3, fake.nr_tab, fake.nr_maps);
	assert_int_equal(fake.sets, 1);
	assert_int_equal(fake.pid, getpid());
	/* The module's view of this program's function: the function's entry. */
	r = fake_rule((uintptr_t)unwind_probe_fn);
	assert_non_null(r);
#ifdef __x86_64__
	assert_int_equal(r->kind, HOTSTACK_UW_CFA_SP);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->ra_off, -8);
#endif
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((i == 2 && !lzma) || !object(names[i], &o))
			continue;
		vdso = i == 3 ? vdso_file(NULL) : NULL;
		build(vdso ?: o.path, &t, NULL);
		/* Every row, mapped to this process's addresses. */
		printf("# %s: %lu rows the same through the mappings\n", vdso ? "vDSO" : o.path,
		       same_rules(o.path, &t, o.load));
		assert_non_null(fake_map(o.load + t.base + t.rows[0].pc));
		assert_true(fake_map(o.load + t.base + t.rows[0].pc)->table != 0);
		hs_uw_table_free(&t);
	}
	/* Again: every table is cached. */
	i = fake.nr_tab;
	assert_int_equal(hs_uw_load_pid(l, getpid()), 0);
	assert_int_equal(fake.nr_tab, i);
	assert_int_equal(fake.sets, 2);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.tables, i);
	assert_int_equal(st.processes, 2);
	assert_true(st.rows > 0 && st.bytes > 0);
	printf("# stats: %llu tables, %llu rows, %llu bytes, built in %.1f ms; without: "
	       "no-cfi %llu unreadable %llu\n", (unsigned long long)st.tables,
	       (unsigned long long)st.rows, (unsigned long long)st.bytes, st.build_ms,
	       (unsigned long long)st.no_table[HS_UWN_NO_CFI],
	       (unsigned long long)st.no_table[HS_UWN_UNREADABLE]);
	hs_uw_free(l);
	/* The readelf view of this program at the probe: the same rule. */
	assert_true(object("", &o));
	open_elf(&e, "/proc/self/exe");
	assert_int_equal(hs_uw_build(e.elf, &t), 0);
	close_elf(&e);
	assert_memory_equal(hs_uw_lookup(&t, (uintptr_t)unwind_probe_fn - o.load), r, sizeof(*r));
	hs_uw_table_free(&t);
	if (lzma)
		dlclose(lzma);
	fake_reset();
}

static const char nonpie_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int hs_target_fn(int x) { return x * 3 + 1; }\n"
	"int main(void) {\n"
	"	char b;\n"
	"	printf(\"%p\\n\", (void *)hs_target_fn);\n"
	"	fflush(stdout);\n"
	"	return read(0, &b, 1) + hs_target_fn(1) - 4;\n"
	"}\n";

/* A non-PIE program (linked at 0x400000), running. */
static void load_nonpie(void **state)
{
	const char *src = tmp("nonpie.c"), *bin = tmp("nonpie");
	int to_child[2], from_child[2], status;
	struct hs_uwload *l;
	struct hs_uw_table t;
	unsigned long long fn;
	char line[64];
	pid_t pid;
	FILE *f;

	(void)state;
	write_file_all(src, nonpie_src);
	assert_int_equal(run("cc -O1 -fno-pie -no-pie -o %s %s", bin, src), 0);
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		close(to_child[1]);
		close(from_child[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	f = fdopen(from_child[0], "r");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sscanf(line, "%llx", &fn), 1);
	assert_true(fn >= 0x400000 && fn < 0x10000000);

	fake_reset();
	l = hs_uw_new(-1, &fake_ops);
	assert_int_equal(hs_uw_load_pid(l, pid), 0);
	assert_int_equal(fake.pid, pid);
	build(bin, &t, NULL);
	/* Not relocated: ELF addresses are the process's. */
	printf("# non-PIE: %lu rows the same through the mappings\n", same_rules(bin, &t, 0));
	assert_non_null(fake_rule(fn));
	assert_memory_equal(fake_rule(fn), hs_uw_lookup(&t, fn), sizeof(struct hotstack_unwind_rule));
	hs_uw_table_free(&t);

	close(to_child[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	fclose(f);
	/* Gone, and reaped: not an error to shout about. */
	assert_int_equal(hs_uw_load_pid(l, pid), -ESRCH);
	hs_uw_free(l);
	fake_reset();
}

/* The r-xp line of /proc/self/maps holding @addr. */
static void maps_line(uint64_t addr, char *out, size_t size)
{
	char *maps = hs_read_file("/proc/self/maps", NULL), *line, *next;
	unsigned long long s, e;

	assert_non_null(maps);
	out[0] = '\0';
	for (line = maps; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s <= addr && addr < e)
			snprintf(out, size, "%s\n", line);
	}
	free(maps);
	assert_true(out[0] != '\0');
}

/* Made-up maps: what gets a table, and what does not. */
static void made_up_maps(void **state)
{
	const char *bin32 = tmp("t32");
	char libc[512], maps[2048];
	unsigned long long at;
	struct hs_uwload *l;
	struct hs_uw_stats st;
	struct stat sb;

	(void)state;
	maps_line((uintptr_t)getppid, libc, sizeof(libc));
	assert_int_equal(sscanf(libc, "%llx", &at), 1);
	fake_reset();
	l = hs_uw_new(-1, &fake_ops);
	/* Anonymous code, a file that is not there (below libc), [vsyscall] (left out). */
	snprintf(maps, sizeof(maps),
		 "%llx-%llx r-xp 00000000 00:00 0 \n"
		 "%llx-%llx r-xp 00000000 08:01 12345 /nonexistent/lib.so\n"
		 "%sffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
		 at - 0x20000, at - 0x10000, at - 0x10000, at, libc);
	assert_int_equal(hs_uw_load_maps(l, getpid(), maps), 0);
	assert_int_equal(fake.nr_maps, 3);
	assert_int_equal(fake.maps[0].table, 0);
	assert_int_equal(fake.maps[1].table, 0);
	assert_true(fake.maps[2].table != 0);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.no_table[HS_UWN_UNREADABLE], 1);

	/* A 32-bit program in the process: no mapping of it gets a table. */
	if (!make_elf32(bin32)) {
		hs_uw_free(l);
		return;
	}
	assert_int_equal(stat(bin32, &sb), 0);
	snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:00 %llu %s\n%s", at - 0x10000,
		 at, (unsigned long long)sb.st_ino, bin32, libc);
	assert_int_equal(hs_uw_load_maps(l, getpid(), maps), 0);
	assert_int_equal(fake.nr_maps, 2);
	assert_int_equal(fake.maps[0].table, 0);
	assert_int_equal(fake.maps[1].table, 0);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.no_table[HS_UWN_ELF32], 1);
	/* Nothing executable: nothing sent. */
	assert_int_equal(hs_uw_load_maps(l, getpid(), "10000-11000 rw-p 00000000 00:00 0\n"), 0);
	assert_int_equal(fake.sets, 2);
	hs_uw_free(l);
	fake_reset();
}

/* What the module may answer. */
static void module_errors(void **state)
{
	struct hs_uwload *l;
	struct hs_uw_stats st;
	unsigned int adds, i;

	(void)state;
	/* Over the memory cap: those binaries never get a table, and are not tried again. */
	fake_reset();
	fake.add_errno = ENOSPC;
	l = hs_uw_new(-1, &fake_ops);
	assert_int_equal(hs_uw_load_pid(l, getpid()), 0);
	adds = fake.adds;
	assert_true(adds >= 2);
	for (i = 0; i < fake.nr_maps; i++)
		assert_int_equal(fake.maps[i].table, 0);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.no_table[HS_UWN_NOSPC], adds);
	assert_int_equal(st.tables, 0);
	fake.add_errno = 0;
	assert_int_equal(hs_uw_load_pid(l, getpid()), 0);
	assert_int_equal(fake.adds, adds);
	hs_uw_free(l);

	/* ESTALE: the maps are read again, three times at most. */
	fake_reset();
	l = hs_uw_new(-1, &fake_ops);
	fake.maps_errno = ESTALE;
	fake.maps_fails = 2;
	assert_int_equal(hs_uw_load_pid(l, getpid()), 0);
	assert_int_equal(fake.sets, 3);
	fake.maps_fails = 100;
	assert_int_equal(hs_uw_load_pid(l, getpid()), -ESTALE);
	assert_int_equal(fake.sets, 3 + 4);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.estale, 2 + 3);
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.errors, 1);

	/* Not ours; gone. */
	fake.maps_errno = EPERM;
	fake.maps_fails = 1;
	assert_int_equal(hs_uw_load_pid(l, getpid()), -EPERM);
	fake.maps_errno = ESRCH;
	fake.maps_fails = 1;
	assert_int_equal(hs_uw_load_pid(l, getpid()), -ESRCH);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.denied, 1);
	assert_int_equal(st.gone, 1);
	assert_int_equal(st.errors, 1);
	/* A session that takes no tables: said once, to the caller. */
	fake.maps_errno = EINVAL;
	fake.maps_fails = 1;
	assert_int_equal(hs_uw_load_all(l), -EINVAL);
	hs_uw_free(l);
	fake_reset();
}

/* Misses: the processes the module names; all of them when some were lost. */
static void misses(void **state)
{
	uint32_t self = getpid();
	struct hs_uwload *l;
	struct hs_uw_stats st;

	(void)state;
	fake_reset();
	l = hs_uw_new(-1, &fake_ops);
	assert_int_equal(hs_uw_poll(l), 0);
	assert_int_equal(fake.sets, 0);
	fake.miss[0] = self;
	fake.miss[1] = 0x7ffffff0;	/* no such process */
	fake.nr_miss = 2;
	assert_int_equal(hs_uw_poll(l), 2);
	assert_int_equal(fake.sets, 1);
	assert_int_equal(fake.pid, self);
	/* Lost ones: the session's processes again. */
	assert_int_equal(hs_uw_set_pids(l, &self, 1), 0);
	fake.lost = 3;
	assert_int_equal(hs_uw_poll(l), 0);
	assert_int_equal(fake.sets, 2);
	assert_int_equal(hs_uw_load_all(l), 1);
	assert_int_equal(fake.sets, 3);
	hs_uw_get_stats(l, &st);
	assert_int_equal(st.polls, 3);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.lost, 3);
	assert_int_equal(st.gone, 1);
	hs_uw_free(l);
	fake_reset();
}

/* The loader's own thread polls until stopped. */
static void thread(void **state)
{
	struct hs_uwload *l;
	struct hs_uw_stats st;
	double t0;

	(void)state;
	fake_reset();
	fake.miss[0] = getpid();
	fake.nr_miss = 1;
	l = hs_uw_new(-1, &fake_ops);
	assert_int_equal(hs_uw_start(l, 5), 0);
	assert_int_equal(hs_uw_start(l, 5), -EBUSY);
	t0 = hs_now();
	do {
		usleep(1000);
		hs_uw_get_stats(l, &st);
	} while (st.polls < 3 && hs_now() - t0 < 10);
	hs_uw_stop(l);
	assert_true(st.polls >= 3);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.processes, 1);
	/* Stopped: no more polls. */
	hs_uw_get_stats(l, &st);
	usleep(20000);
	assert_int_equal(fake.polls, st.polls);
	/* Started again, and freed while it runs. */
	assert_int_equal(hs_uw_start(l, 1000), 0);
	hs_uw_free(l);
	fake_reset();
}

/* Every process here (record -a), for the figures: time and sizes. */
static void load_all(void **state)
{
	struct hs_uwload *l;
	struct hs_uw_stats st;
	double t0;
	int n;

	(void)state;
	fake_reset();
	l = hs_uw_new(-1, &fake_ops);
	t0 = hs_now();
	n = hs_uw_load_all(l);
	hs_uw_get_stats(l, &st);
	printf("# all processes: %d loaded in %.0f ms (%.0f building %llu tables), %llu rows, "
	       "%llu bytes; %llu gone, %llu denied; without a table: no-cfi %llu, 32-bit %llu, "
	       "unreadable %llu\n", n, (hs_now() - t0) * 1e3, st.build_ms,
	       (unsigned long long)st.tables, (unsigned long long)st.rows,
	       (unsigned long long)st.bytes, (unsigned long long)st.gone,
	       (unsigned long long)st.denied, (unsigned long long)st.no_table[HS_UWN_NO_CFI],
	       (unsigned long long)st.no_table[HS_UWN_ELF32],
	       (unsigned long long)st.no_table[HS_UWN_UNREADABLE]);
	assert_true(n >= 1);
	assert_int_equal(st.errors, 0);
	hs_uw_free(l);
	fake_reset();
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return run("rm -rf '%s'", tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pointer_encodings),
		cmocka_unit_test(known_x86),
		cmocka_unit_test(known_arm),
		cmocka_unit_test(debug_frame),
		cmocka_unit_test(no_cfi),
		cmocka_unit_test(libc_x86_64),
		cmocka_unit_test(libc_arm64),
		cmocka_unit_test(vdso),
		cmocka_unit_test(other_binaries),
		cmocka_unit_test(sizes),
		cmocka_unit_test(load_self),
		cmocka_unit_test(load_nonpie),
		cmocka_unit_test(made_up_maps),
		cmocka_unit_test(module_errors),
		cmocka_unit_test(misses),
		cmocka_unit_test(thread),
		cmocka_unit_test(load_all),
	};

	return cmocka_run_group_tests_name("unwind", tests, setup, teardown);
}
