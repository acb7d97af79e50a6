// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: user-space symbols with elfutils' libdwfl.
 *
 * Each process gets one Dwfl session built from its /proc/PID/maps text
 * (dwfl_linux_proc_maps_report) at capture time; every module's ELF is
 * opened then (dwfl_module_getelf), so the symbols stay after the process
 * has exited, and a binary replaced on disk meanwhile is not read by
 * mistake. Lookups are cached per (pid, address). Each name found keeps
 * the binary it came from (path, build ID, where it was mapped), for the
 * pprof writer's mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>

#include "maps.h"
#include "usyms.h"
#include "util.h"

struct hs_uproc {
	uint32_t pid;
	unsigned int captures;
	unsigned int builds;	/* of @dwfl: the executable mappings changed */
	char *maps;		/* the /proc/PID/maps text this Dwfl was built from */
	Dwfl *dwfl;
	struct hs_jit_sym *jit;	/* its /tmp/perf-PID.map, by start */
	size_t nr_jit;
	off_t jit_size;		/* that file's size when read */
};

/* A JIT compiler's function, as its perf map names it. */
struct hs_jit_sym {
	uint64_t start, end;
	char *name;
};

struct hs_ucache {
	uint64_t addr;
	uint32_t pid;		/* 0: empty slot */
	uint32_t len;
	char *name;		/* NULL: unknown */
};

struct hs_usyms {
	struct hs_uproc *procs;
	size_t nr, cap;
	struct hs_ucache *cache;
	size_t cache_nr, cache_mask;
	struct hs_uproc *last;	/* the last one looked up: stacks come by process */
	struct hs_maps *maps;	/* the binaries of the names found, NULL: none yet */
};

static char *hs_debuginfo_path;

static const Dwfl_Callbacks hs_dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &hs_debuginfo_path,
};

struct hs_usyms *hs_usyms_new(void)
{
	struct hs_usyms *u = calloc(1, sizeof(*u));

	/*
	 * Debug files from the debuginfod servers DEBUGINFOD_URLS names
	 * (elfutils' client, in its cache ~/.cache/debuginfod_client): none
	 * without the variable, and a server is not waited for long.
	 */
	if (getenv("DEBUGINFOD_URLS"))
		setenv("DEBUGINFOD_TIMEOUT", "10", 0);

	if (!u)
		return NULL;
	u->cache_mask = 4095;
	u->cache = calloc(u->cache_mask + 1, sizeof(*u->cache));
	if (!u->cache) {
		free(u);
		return NULL;
	}
	return u;
}

static void hs_cache_clear(struct hs_usyms *u, uint32_t pid)
{
	size_t i;

	/* Rare (a process's mappings changed): rebuild without its entries. */
	for (i = 0; i <= u->cache_mask; i++)
		if (u->cache[i].pid == pid) {
			free(u->cache[i].name);
			u->cache[i].name = NULL;
			u->cache[i].len = 0;
			/* Left as a tombstone: unknown, until looked up again. */
			u->cache[i].addr = ~0ULL;
		}
}

static void hs_jit_free(struct hs_uproc *p)
{
	while (p->nr_jit)
		free(p->jit[--p->nr_jit].name);
	free(p->jit);
	p->jit = NULL;
}

void hs_usyms_free(struct hs_usyms *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr; i++) {
		free(u->procs[i].maps);
		if (u->procs[i].dwfl)
			dwfl_end(u->procs[i].dwfl);
		hs_jit_free(&u->procs[i]);
	}
	for (i = 0; i <= u->cache_mask; i++)
		free(u->cache[i].name);
	free(u->cache);
	free(u->procs);
	hs_maps_free(u->maps);
	free(u);
}

static int hs_jit_cmp(const void *a, const void *b)
{
	const struct hs_jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * JIT code's names from /tmp/perf-PID.map, in the format perf reads
 * ("START SIZE NAME" a line, hex; Node's --perf-basic-prof, Java's
 * perf-map-agent, Python 3.12's -X perf write it), read again when it
 * has grown, while the process is there: only a map its own user owns,
 * as perf takes it. A name has no ';' (the folded separator).
 */
static void hs_read_perf_map(struct hs_uproc *p)
{
	struct hs_jit_sym *jit = NULL, *grown;
	size_t nr = 0, cap = 0;
	char path[64], *line = NULL, *c;
	unsigned long long start, size;
	struct stat st, proc;
	size_t len = 0;
	int name;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u", p->pid);
	if (stat(path, &proc))
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	if (stat(path, &st) || st.st_size == p->jit_size || st.st_uid != proc.st_uid)
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {
		if (sscanf(line, "%llx %llx %n", &start, &size, &name) != 2 || !size)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(jit, cap * sizeof(*jit));
			if (!grown)
				break;
			jit = grown;
		}
		jit[nr].name = strdup(line + name);
		if (!jit[nr].name)
			break;
		for (c = jit[nr].name; *c; c++)
			if (*c == ';')
				*c = ':';
		jit[nr].start = start;
		jit[nr].end = start + size;
		nr++;
	}
	free(line);
	fclose(f);
	qsort(jit, nr, sizeof(*jit), hs_jit_cmp);
	hs_jit_free(p);
	p->jit = jit;
	p->nr_jit = nr;
	p->jit_size = st.st_size;
}

/* The JIT function of @p containing @addr, or NULL. */
static const char *hs_jit_lookup(const struct hs_uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_jit, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->jit[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < p->jit[lo - 1].end ? p->jit[lo - 1].name : NULL;
}

static struct hs_uproc *hs_uproc_find(struct hs_usyms *u, uint32_t pid)
{
	size_t i;

	if (u->last && u->last->pid == pid)
		return u->last;
	for (i = 0; i < u->nr; i++)
		if (u->procs[i].pid == pid)
			return u->last = &u->procs[i];
	return NULL;
}

unsigned int hs_usyms_captured(const struct hs_usyms *u, uint32_t pid, unsigned int *builds)
{
	size_t i;

	for (i = 0; i < u->nr; i++)
		if (u->procs[i].pid == pid) {
			if (builds)
				*builds = u->procs[i].builds;
			return u->procs[i].captures;
		}
	return 0;
}

/* /proc/PID/maps, or NULL (errno; ENOENT for a zombie, whose memory is gone). */
static char *hs_read_maps(uint32_t pid)
{
	char path[64], *buf;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	buf = hs_read_file(path, &len);
	if (buf && !len) {
		free(buf);
		errno = ENOENT;
		return NULL;
	}
	return buf;
}

/* Open every module's ELF now, while the process (and its vDSO) is there. */
static int hs_open_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	GElf_Addr bias;

	(void)userdata;
	(void)name;
	(void)start;
	(void)arg;
	dwfl_module_getelf(mod, &bias);
	return DWARF_CB_OK;
}

/*
 * A descriptor of a file holding this process's vDSO image, made once:
 * libdwfl reads a process's vDSO from its memory, which a maps text does
 * not give; every 64-bit process has this kernel's same image. -1: none.
 */
static int hs_vdso_fd(void)
{
	static int fd = -2;
	size_t size;
	void *img;

	if (fd != -2)
		return fd;
	fd = -1;
	img = hs_vdso_image(&size);
	if (!img)
		return fd;
	fd = memfd_create("hotstack-vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, img, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	free(img);
	return fd;
}

/* Report the vDSO of a maps text's "[vdso]" line to @dwfl, its first PT_LOAD at 0. */
static void hs_report_vdso(Dwfl *dwfl, const char *maps)
{
	const char *line = strstr(maps, " [vdso]\n");
	unsigned long long start;
	int fd = hs_vdso_fd();

	if (!line || fd < 0)
		return;
	while (line > maps && line[-1] != '\n')
		line--;
	if (sscanf(line, "%llx-", &start) != 1)
		return;
	fd = dup(fd);
	if (fd >= 0 && !dwfl_report_elf(dwfl, "[vdso]", "[vdso]", fd, start, false))
		close(fd);
}

static Dwfl *hs_dwfl_build(const char *maps, uint32_t pid)
{
	Dwfl *dwfl = dwfl_begin(&hs_dwfl_callbacks);
	FILE *f;
	int ret;

	if (!dwfl)
		return NULL;
	f = fmemopen((void *)maps, strlen(maps), "r");
	if (!f) {
		dwfl_end(dwfl);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	ret = dwfl_linux_proc_maps_report(dwfl, f);
	fclose(f);
	if (!ret)
		hs_report_vdso(dwfl, maps);
	if (ret || dwfl_report_end(dwfl, NULL, NULL)) {
		dwfl_end(dwfl);
		return NULL;
	}
	(void)pid;
	dwfl_getmodules(dwfl, hs_open_module, NULL, 0);
	return dwfl;
}

int hs_usyms_capture(struct hs_usyms *u, uint32_t pid)
{
	char *maps = hs_read_maps(pid);

	return maps ? hs_usyms_capture_text(u, pid, maps) : -errno;
}

/*
 * The next executable mapping's line of maps text @s from *@at on (its
 * length in *@len; NULL at the end), *@at moved past it.
 */
static const char *hs_next_exec_line(const char *s, size_t *at, size_t *len)
{
	while (s[*at]) {
		const char *l = s + *at, *e = strchrnul(l, '\n'), *perms = memchr(l, ' ', e - l);

		*at = e - s + (*e == '\n');
		if (perms && e - perms > 4 && perms[3] == 'x') {
			*len = e - l;
			return l;
		}
	}
	return NULL;
}

/*
 * Whether maps texts @a and @b have the same executable mappings: the
 * symbols of one are the other's. (The rest changes all the time: a
 * heap, a file mapped to be read, as this tool's own maps do while it
 * builds tables.)
 */
static bool hs_same_exec_maps(const char *a, const char *b)
{
	size_t i = 0, j = 0, m, n;
	const char *x, *y;

	for (;;) {
		x = hs_next_exec_line(a, &i, &m);
		y = hs_next_exec_line(b, &j, &n);
		if (!x || !y)
			return !x && !y;
		if (m != n || memcmp(x, y, m))
			return false;
	}
}

int hs_usyms_capture_text(struct hs_usyms *u, uint32_t pid, char *maps)
{
	struct hs_uproc *p = hs_uproc_find(u, pid);
	Dwfl *dwfl;

	if (p && p->maps && hs_same_exec_maps(p->maps, maps)) {
		free(maps);
		p->captures++;
		hs_read_perf_map(p);
		return 0;
	}
	dwfl = hs_dwfl_build(maps, pid);
	if (!dwfl) {
		free(maps);
		return -EINVAL;
	}
	if (!p) {
		if (u->nr == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;
			struct hs_uproc *grown = realloc(u->procs, cap * sizeof(*grown));

			if (!grown) {
				dwfl_end(dwfl);
				free(maps);
				return -ENOMEM;
			}
			u->procs = grown;
			u->cap = cap;
		}
		p = &u->procs[u->nr++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	} else {
		dwfl_end(p->dwfl);
		free(p->maps);
		hs_cache_clear(u, pid);
	}
	u->last = NULL;
	p->maps = maps;
	p->dwfl = dwfl;
	p->captures++;
	p->builds++;
	hs_read_perf_map(p);
	return 0;
}

static void hs_cache_grow(struct hs_usyms *u)
{
	size_t mask = u->cache_mask * 2 + 1, i, j;
	struct hs_ucache *c = calloc(mask + 1, sizeof(*c));

	if (!c)
		return;
	for (i = 0; i <= u->cache_mask; i++) {
		struct hs_ucache *e = &u->cache[i];

		if (!e->pid)
			continue;
		for (j = (e->addr * 0x9e3779b97f4a7c15ULL ^ e->pid) & mask; c[j].pid; j = (j + 1) & mask)
			;
		c[j] = *e;
	}
	free(u->cache);
	u->cache = c;
	u->cache_mask = mask;
}

/* Keep the binary @name came from (the first one, for a name several have). */
static void hs_usyms_note(struct hs_usyms *u, Dwfl_Module *mod, const char *name)
{
	char hex[2 * HS_BUILD_ID_MAX + 1] = "";
	const unsigned char *bits;
	Dwarf_Addr start, end;
	const char *file;
	GElf_Addr vaddr;
	long idx;
	int i, n;

	if (hs_maps_find_frame(u->maps, name, strlen(name)) >= 0)
		return;
	file = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	for (i = 0; i < n && i < HS_BUILD_ID_MAX; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	idx = file ? hs_maps_add(&u->maps, file, hex, start, end, 0) : -1;
	if (idx >= 0)
		hs_maps_frame(u->maps, name, strlen(name), idx);
}

char *hs_demangle(const char *name)
{
	/* C++ (Itanium ABI) and Rust (legacy and v0): libiberty tells which. */
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO), *c;

	/* A frame holds no ';' (the folded separator) nor a line end. */
	for (c = d; c && *c; c++)
		if (*c == ';' || *c == '\n')
			*c = *c == ';' ? ':' : ' ';
	return d;
}

/*
 * Code no symbol covers, as perf names its binary: "liblzma.so.5+0xa96d",
 * the offset an address of the binary's own (what addr2line and objdump
 * take), malloc'd.
 */
static char *hs_module_offset(Dwfl_Module *mod, uint64_t addr)
{
	const char *file = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *base = file ? strrchr(file, '/') : NULL;
	Dwarf_Addr bias = 0;
	char *name;

	dwfl_module_getelf(mod, &bias);
	if (asprintf(&name, "%s+0x%" PRIx64, base ? base + 1 : file ?: "[unknown]",
		     (uint64_t)(addr - bias)) < 0)
		return NULL;
	/* A frame holds no ';' (the folded separator) nor a line end. */
	for (char *c = name; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = *c == ';' ? ':' : ' ';
	return name;
}

const struct hs_maps *hs_usyms_maps(const struct hs_usyms *u)
{
	return u ? u->maps : NULL;
}

const char *hs_usyms_lookup(struct hs_usyms *u, uint32_t pid, uint64_t addr, size_t *len)
{
	struct hs_uproc *p;
	struct hs_ucache *e;
	Dwfl_Module *mod;
	const char *name = NULL;
	size_t i;

	if (!pid)
		return NULL;
	for (i = (addr * 0x9e3779b97f4a7c15ULL ^ pid) & u->cache_mask; u->cache[i].pid;
	     i = (i + 1) & u->cache_mask)
		if (u->cache[i].pid == pid && u->cache[i].addr == addr)
			goto out;
	p = hs_uproc_find(u, pid);
	if (!p)
		return NULL;
	/*
	 * JIT code first: its anonymous mapping may lie where libdwfl
	 * stretches a binary's module (up to its next segment's address).
	 */
	name = hs_jit_lookup(p, addr);
	mod = name ? NULL : dwfl_addrmodule(p->dwfl, addr);
	if (mod)
		name = dwfl_module_addrname(mod, addr);
	e = &u->cache[i];
	e->pid = pid;
	e->addr = addr;
	e->name = name ? hs_demangle(name) ?: strdup(name) : mod ? hs_module_offset(mod, addr) : NULL;
	e->len = e->name ? strlen(e->name) : 0;
	if (e->name && mod)
		hs_usyms_note(u, mod, e->name);
	if (++u->cache_nr * 2 > u->cache_mask) {
		hs_cache_grow(u);
		return hs_usyms_lookup(u, pid, addr, len);
	}
out:
	e = &u->cache[i];
	*len = e->len;
	return e->name;
}
