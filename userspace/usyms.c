// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: user-space symbols with elfutils' libdwfl.
 *
 * Each binary (by the device and inode a maps text gives it) is opened
 * once, while a process that maps it is there, into a Dwfl of its own at
 * its own addresses: its symbols are read once for every process that
 * maps it, and stay after they have exited; a binary replaced on disk
 * meanwhile is not read by mistake (it is opened through the process's
 * mapping). A process keeps its executable mappings from its
 * /proc/PID/maps text at capture time, each with its binary: an address
 * is looked up as the binary's own (file offset, then its segment's
 * address). Lookups are cached per (pid, address), and per binary and
 * address: a name is read once for every process. Each name found keeps
 * the binary it came from (path, build ID, where it was mapped), for the
 * pprof writer's mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>

#include "maps.h"
#include "usyms.h"
#include "util.h"

/* PT_LOAD segments of a binary kept to turn a file offset into its address. */
#define HS_UBIN_LOADS	8

/*
 * A binary some captured process maps (or the vDSO's image), its symbols
 * read once for all of them: one module at its own addresses (the
 * module's address of ELF address A: A + @bias).
 */
struct hs_ubin {
	unsigned long long dev, ino;	/* as maps texts say them; the vDSO: 0 and 0 */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	GElf_Phdr load[HS_UBIN_LOADS];
	unsigned int nr_load;
	unsigned int refs;		/* captured processes' mappings of it */
};

/* A mapping of a binary (a segment of it) by a process. */
struct hs_umapping {
	uint64_t start, end, pgoff;
	struct hs_ubin *bin;
};

struct hs_uproc {
	uint32_t pid;
	unsigned int captures;
	unsigned int builds;	/* of @map: the executable mappings changed */
	bool seen;		/* captured since the last hs_usyms_forget() */
	double next, gap;	/* hs_usyms_refresh(): not before @next, the gap before it */
	char *maps;		/* the /proc/PID/maps text @map was made from */
	struct hs_umapping *map;	/* by start */
	size_t nr_map;
	struct hs_jit_sym *jit;	/* its /tmp/perf-PID.map, by start */
	size_t nr_jit;
	off_t jit_size;		/* that file's size when read */
};

/* A JIT compiler's function, as its perf map names it. */
struct hs_jit_sym {
	uint64_t start, end;
	char *name;
};

/*
 * A name looked up: of a process's address (@owner its pid), or of a
 * binary's own address (@owner HS_BIN_OWNER(the binary)): every process
 * that maps a binary reads its symbols for an address once.
 */
struct hs_ucache {
	uint64_t addr;
	uint64_t owner;		/* 0: empty slot */
	uint32_t len;
	char *name;		/* NULL: unknown */
};

#define HS_BIN_OWNER(b)	((uint64_t)(uintptr_t)(b) | 1ULL << 63)

struct hs_usyms {
	struct hs_uproc *procs;
	size_t nr, cap;
	struct hs_ubin **bins;
	size_t nr_bins, cap_bins;
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
		if (u->cache[i].owner == pid) {
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

/* @p's mappings, their binaries let go. */
static void hs_uproc_unmap(struct hs_uproc *p)
{
	while (p->nr_map)
		p->map[--p->nr_map].bin->refs--;
	free(p->map);
	p->map = NULL;
}

static void hs_uproc_free(struct hs_uproc *p)
{
	hs_uproc_unmap(p);
	free(p->maps);
	hs_jit_free(p);
}

/* Forget the binaries no process maps (@all: every one). */
static void hs_ubins_drop(struct hs_usyms *u, bool all)
{
	size_t i, n = 0;

	for (i = 0; i < u->nr_bins; i++) {
		struct hs_ubin *b = u->bins[i];

		if (all || !b->refs) {
			if (b->dwfl)
				dwfl_end(b->dwfl);
			free(b);
		} else {
			u->bins[n++] = b;
		}
	}
	u->nr_bins = n;
}

/* Every name looked up (and the binaries they came from). */
static void hs_cache_drop(struct hs_usyms *u)
{
	size_t i;

	for (i = 0; i <= u->cache_mask; i++)
		free(u->cache[i].name);
	memset(u->cache, 0, (u->cache_mask + 1) * sizeof(*u->cache));
	u->cache_nr = 0;
	hs_maps_free(u->maps);
	u->maps = NULL;
}

void hs_usyms_free(struct hs_usyms *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr; i++)
		hs_uproc_free(&u->procs[i]);
	hs_ubins_drop(u, true);
	hs_cache_drop(u);
	free(u->bins);
	free(u->cache);
	free(u->procs);
	free(u);
}

void hs_usyms_forget(struct hs_usyms *u)
{
	size_t i, n = 0;

	for (i = 0; i < u->nr; i++) {
		if (!u->procs[i].seen) {
			hs_uproc_free(&u->procs[i]);
			continue;
		}
		u->procs[i].seen = false;
		u->procs[n++] = u->procs[i];
	}
	u->nr = n;
	u->last = NULL;
	hs_ubins_drop(u, false);
	hs_cache_drop(u);
}

size_t hs_usyms_binaries(const struct hs_usyms *u)
{
	return u->nr_bins;
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

/*
 * @path's ELF (mapped at @start..@end of process @pid, inode @ino),
 * opened through the mapping (root), else through the process's root or
 * the path, if the file there is the one mapped. -1: none.
 */
static int hs_ubin_fd(uint32_t pid, uint64_t start, uint64_t end, const char *path,
		      unsigned long long ino)
{
	char file[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(file, sizeof(file), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(file, sizeof(file), "/proc/%u/root%s", pid, path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The binary of device @dev and inode @ino (0 and 0: the vDSO's image), or NULL. */
static struct hs_ubin *hs_ubin_find(const struct hs_usyms *u, unsigned long long dev,
				    unsigned long long ino)
{
	size_t i;

	for (i = 0; i < u->nr_bins; i++)
		if (u->bins[i]->dev == dev && u->bins[i]->ino == ino)
			return u->bins[i];
	return NULL;
}

/*
 * The binary of device @dev and inode @ino, @path opened as @fd (taken),
 * its symbols to be read once for every process that maps it. NULL: it
 * cannot be read (an ELF libdwfl does not take: kept, without a module,
 * so as not to be tried again for every process that maps it).
 */
static struct hs_ubin *hs_ubin_open(struct hs_usyms *u, unsigned long long dev,
				    unsigned long long ino, const char *path, int fd)
{
	struct hs_ubin *b, **grown;
	GElf_Phdr ph;
	size_t i, nr;
	Elf *elf;

	if (u->nr_bins == u->cap_bins) {
		size_t cap = u->cap_bins ? 2 * u->cap_bins : 16;

		grown = realloc(u->bins, cap * sizeof(*grown));
		if (!grown) {
			close(fd);
			return NULL;
		}
		u->bins = grown;
		u->cap_bins = cap;
	}
	b = calloc(1, sizeof(*b));
	if (b)
		b->dwfl = dwfl_begin(&hs_dwfl_callbacks);
	if (!b || !b->dwfl) {
		free(b);
		close(fd);
		return NULL;
	}
	dwfl_report_begin(b->dwfl);
	b->mod = dwfl_report_elf(b->dwfl, path, path, fd, 0, false);
	if (!b->mod)
		close(fd);
	elf = b->mod && !dwfl_report_end(b->dwfl, NULL, NULL) ?
	      dwfl_module_getelf(b->mod, &b->bias) : NULL;
	if (!elf || elf_getphdrnum(elf, &nr)) {
		dwfl_end(b->dwfl);
		b->dwfl = NULL;
		b->mod = NULL;
	}
	for (i = 0; b->mod && i < nr && b->nr_load < HS_UBIN_LOADS; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			b->load[b->nr_load++] = ph;
	b->dev = dev;
	b->ino = ino;
	u->bins[u->nr_bins++] = b;
	return b->mod ? b : NULL;
}

/* A line of a maps text. */
struct hs_mline {
	unsigned long long start, end, pgoff, dev, ino;
	bool exec;
	char path[PATH_MAX];
};

/*
 * The line of maps text @s at *@at into @ml, *@at moved past it; false at
 * the end. @ml->path: "" for an anonymous mapping, without " (deleted)".
 */
static bool hs_mline_next(const char *s, size_t *at, struct hs_mline *ml)
{
	unsigned int major, minor;
	char perms[8];
	int n;

	while (s[*at]) {
		const char *l = s + *at, *e = strchrnul(l, '\n');

		*at = e - s + (*e == '\n');
		if (sscanf(l, "%llx-%llx %7s %llx %x:%x %llu %n", &ml->start, &ml->end, perms,
			   &ml->pgoff, &major, &minor, &ml->ino, &n) != 7 || l + n > e)
			continue;
		ml->exec = perms[2] == 'x';
		ml->dev = (unsigned long long)major << 32 | minor;
		snprintf(ml->path, sizeof(ml->path), "%.*s", (int)(e - l - n), l + n);
		n = strlen(ml->path);
		if (n > 10 && !strcmp(ml->path + n - 10, " (deleted)"))
			ml->path[n - 10] = '\0';
		return true;
	}
	return false;
}

/* @p's mapping @ml of binary @bin (a reference taken). 0 or -ENOMEM. */
static int hs_uproc_add(struct hs_uproc *p, size_t *cap, const struct hs_mline *ml,
			struct hs_ubin *bin)
{
	struct hs_umapping *m;

	if (p->nr_map == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		m = realloc(p->map, *cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		p->map = m;
	}
	bin->refs++;
	p->map[p->nr_map++] = (struct hs_umapping){ ml->start, ml->end, ml->pgoff, bin };
	return 0;
}

static int hs_umapping_cmp(const void *a, const void *b)
{
	const struct hs_umapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * @p's mappings of binaries from @maps, each with its binary: its
 * executable ones (the vDSO's: this tool's own image, which every 64-bit
 * process maps), then the other segments of those binaries (an address
 * there, from a walk gone astray, is named as the binary's). Mappings of
 * nothing readable (anonymous JIT code, [vsyscall]) are left out. 0 or
 * -ENOMEM.
 */
static int hs_uproc_map(struct hs_usyms *u, struct hs_uproc *p, const char *maps)
{
	struct hs_mline *ml = malloc(sizeof(*ml));
	size_t at = 0, cap = 0, nr_exec, i;
	struct hs_ubin *bin;
	int fd, ret = ml ? 0 : -ENOMEM;

	while (!ret && hs_mline_next(maps, &at, ml)) {
		if (!ml->exec)
			continue;
		if (!strcmp(ml->path, "[vdso]"))
			ml->dev = ml->ino = 0;
		else if (ml->path[0] != '/')
			continue;
		bin = hs_ubin_find(u, ml->dev, ml->ino);
		if (bin && !bin->mod)
			continue;
		if (!bin) {
			fd = ml->dev || ml->ino ?
			     hs_ubin_fd(p->pid, ml->start, ml->end, ml->path, ml->ino) :
			     hs_vdso_fd() >= 0 ? dup(hs_vdso_fd()) : -1;
			bin = fd >= 0 ? hs_ubin_open(u, ml->dev, ml->ino, ml->path, fd) : NULL;
			if (!bin)
				continue;
		}
		ret = hs_uproc_add(p, &cap, ml, bin);
	}
	nr_exec = p->nr_map;
	for (at = 0; !ret && nr_exec && hs_mline_next(maps, &at, ml); ) {
		if (ml->exec || ml->path[0] != '/')
			continue;
		for (i = 0; i < nr_exec; i++)
			if (p->map[i].bin->dev == ml->dev && p->map[i].bin->ino == ml->ino)
				break;
		if (i < nr_exec)
			ret = hs_uproc_add(p, &cap, ml, p->map[i].bin);
	}
	free(ml);
	qsort(p->map, p->nr_map, sizeof(*p->map), hs_umapping_cmp);
	return ret;
}

int hs_usyms_capture(struct hs_usyms *u, uint32_t pid)
{
	char *maps = hs_read_maps(pid);

	return maps ? hs_usyms_capture_text(u, pid, maps) : -errno;
}

int hs_usyms_refresh(struct hs_usyms *u, uint32_t pid)
{
	return hs_usyms_refresh_at(u, pid, hs_now());
}

int hs_usyms_refresh_at(struct hs_usyms *u, uint32_t pid, double now)
{
	struct hs_uproc *p = hs_uproc_find(u, pid);
	unsigned int builds = p ? p->builds : 0;
	int ret;

	if (p && p->maps && now < p->next) {
		p->seen = true;
		return 0;
	}
	ret = hs_usyms_capture(u, pid);
	p = hs_uproc_find(u, pid);
	if (p) {
		p->gap = p->builds != builds || !p->gap ? 0.25 : p->gap < 4 ? 2 * p->gap : 8;
		p->next = now + p->gap;
	}
	return ret;
}

int hs_usyms_capture_text(struct hs_usyms *u, uint32_t pid, char *maps)
{
	struct hs_uproc *p = hs_uproc_find(u, pid);
	int ret;

	if (p && p->maps && hs_same_exec_maps(p->maps, maps)) {
		free(maps);
		p->captures++;
		p->seen = true;
		hs_read_perf_map(p);
		return 0;
	}
	if (!p) {
		if (u->nr == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 64;
			struct hs_uproc *grown = realloc(u->procs, cap * sizeof(*grown));

			if (!grown) {
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
		hs_uproc_unmap(p);
		free(p->maps);
		p->maps = NULL;
		hs_cache_clear(u, pid);
	}
	u->last = NULL;
	ret = hs_uproc_map(u, p, maps);
	if (ret) {
		hs_uproc_unmap(p);
		free(maps);
		return ret;
	}
	p->maps = maps;
	p->captures++;
	p->builds++;
	p->seen = true;
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

		if (!e->owner)
			continue;
		for (j = (e->addr * 0x9e3779b97f4a7c15ULL ^ e->owner) & mask; c[j].owner;
		     j = (j + 1) & mask)
			;
		c[j] = *e;
	}
	free(u->cache);
	u->cache = c;
	u->cache_mask = mask;
}

/* The entry of (@owner, @addr), or the empty slot where it would go. */
static struct hs_ucache *hs_cache_at(struct hs_usyms *u, uint64_t owner, uint64_t addr)
{
	size_t i;

	for (i = (addr * 0x9e3779b97f4a7c15ULL ^ owner) & u->cache_mask; u->cache[i].owner;
	     i = (i + 1) & u->cache_mask)
		if (u->cache[i].owner == owner && u->cache[i].addr == addr)
			break;
	return &u->cache[i];
}

/* The new entry of (@owner, @addr), @name taken (it moves the others). */
static struct hs_ucache *hs_cache_put(struct hs_usyms *u, uint64_t owner, uint64_t addr,
				      char *name)
{
	struct hs_ucache *e;

	if ((u->cache_nr + 1) * 2 > u->cache_mask)
		hs_cache_grow(u);
	e = hs_cache_at(u, owner, addr);
	e->owner = owner;
	e->addr = addr;
	e->name = name;
	e->len = name ? strlen(name) : 0;
	u->cache_nr++;
	return e;
}

/*
 * Keep the binary @name came from (the first one, for a name several
 * have): @b, mapped at its ELF addresses + @bias in the process.
 */
static void hs_usyms_note(struct hs_usyms *u, const struct hs_ubin *b, uint64_t bias,
			  const char *name)
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
	file = dwfl_module_info(b->mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	n = dwfl_module_build_id(b->mod, &bits, &vaddr);
	for (i = 0; i < n && i < HS_BUILD_ID_MAX; i++)
		sprintf(hex + 2 * i, "%02x", bits[i]);
	idx = file ? hs_maps_add(&u->maps, file, hex, start - b->bias + bias,
				 end - b->bias + bias, 0) : -1;
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
 * @vaddr an address of the binary's own (what addr2line and objdump
 * take), malloc'd.
 */
static char *hs_module_offset(Dwfl_Module *mod, uint64_t vaddr)
{
	const char *file = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *base = file ? strrchr(file, '/') : NULL;
	char *name;

	if (asprintf(&name, "%s+0x%" PRIx64, base ? base + 1 : file ?: "[unknown]", vaddr) < 0)
		return NULL;
	/* A frame holds no ';' (the folded separator) nor a line end. */
	for (char *c = name; *c; c++)
		if (*c == ';' || *c == '\n')
			*c = *c == ';' ? ':' : ' ';
	return name;
}

/* The mapping of @p that holds @addr, or NULL. */
static const struct hs_umapping *hs_umapping_find(const struct hs_uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_map, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->map[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < p->map[lo - 1].end ? &p->map[lo - 1] : NULL;
}

/*
 * @addr of mapping @m as its binary's own address: its file offset, in
 * the segment that loads it (the last one that starts at or before it).
 */
static uint64_t hs_ubin_addr(const struct hs_umapping *m, uint64_t addr)
{
	uint64_t off = addr - m->start + m->pgoff;
	const GElf_Phdr *seg = NULL;
	unsigned int i;

	for (i = 0; i < m->bin->nr_load; i++)
		if (m->bin->load[i].p_offset <= off)
			seg = &m->bin->load[i];
	return seg ? off - seg->p_offset + seg->p_vaddr : off;
}

const struct hs_maps *hs_usyms_maps(const struct hs_usyms *u)
{
	return u ? u->maps : NULL;
}

/* The name of @b's own address @vaddr (or "binary+0xOFFSET"), malloc'd. */
static char *hs_ubin_name(const struct hs_ubin *b, uint64_t vaddr)
{
	const char *name = dwfl_module_addrname(b->mod, vaddr + b->bias);

	return name ? hs_demangle(name) ?: strdup(name) : hs_module_offset(b->mod, vaddr);
}

const char *hs_usyms_lookup(struct hs_usyms *u, uint32_t pid, uint64_t addr, size_t *len)
{
	const struct hs_umapping *m = NULL;
	struct hs_ucache *e, *b = NULL;
	struct hs_uproc *p;
	const char *jit;
	uint64_t vaddr = 0;
	char *name;

	if (!pid)
		return NULL;
	e = hs_cache_at(u, pid, addr);
	if (e->owner)
		goto out;
	p = hs_uproc_find(u, pid);
	if (!p)
		return NULL;
	jit = hs_jit_lookup(p, addr);
	m = jit ? NULL : hs_umapping_find(p, addr);
	if (m) {
		vaddr = hs_ubin_addr(m, addr);
		b = hs_cache_at(u, HS_BIN_OWNER(m->bin), vaddr);
		if (!b->owner)
			b = hs_cache_put(u, HS_BIN_OWNER(m->bin), vaddr,
					 hs_ubin_name(m->bin, vaddr));
	}
	name = jit ? hs_demangle(jit) ?: strdup(jit) : b && b->name ? strdup(b->name) : NULL;
	if (name && m)
		hs_usyms_note(u, m->bin, addr - vaddr, name);
	e = hs_cache_put(u, pid, addr, name);
out:
	*len = e->len;
	return e->name;
}
