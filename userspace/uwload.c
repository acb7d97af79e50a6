// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: unwind tables and mappings into a session (uwload.h).
 *
 * Binaries are cached by key (build ID, else device, inode, size and
 * mtime; unwind.h): a table is built and loaded once and every process
 * that maps the binary gets its id. A mapping's file is found without
 * opening it first: stat() of /proc/PID/map_files/START-END (or of
 * /proc/PID/root/PATH when that is not ours to read) gives its file key,
 * which is an alias of the binary's once it has been opened. The vDSO's
 * table is made from this process's own image: every 64-bit process
 * maps the same one.
 *
 * Locks: @work serializes every load (the caller's and the thread's
 * calls), and protects everything but the counters and the thread's
 * state; @stats_lock the counters; @thr_lock the thread's state (its
 * stop is a byte in a pipe it polls with the session's file).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <gelf.h>

#include "maps.h"
#include "unwind.h"
#include "util.h"
#include "uwload.h"

/* The machine whose tables the module can use: the tool's own. */
#if defined(__x86_64__)
#define HS_UW_HOST_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define HS_UW_HOST_MACHINE	EM_AARCH64
#else
#define HS_UW_HOST_MACHINE	EM_NONE
#endif

/* Reads of a process's maps after the first, when SET_MAPS says ESTALE. */
#define HS_UW_STALE_RETRIES	3
/* Pids taken from the module a call: it keeps 64. */
#define HS_UW_MISSES		256

/* A binary, and its table in the module. */
struct hs_uw_bin {
	struct hs_uw_table tab;	/* rows and rules freed once sent: base and segments kept */
	uint32_t id;		/* the module's id; 0: none, for @why */
	uint8_t why;		/* enum hs_uw_why */
	bool elf32;		/* its process is a 32-bit one */
};

/* Not a binary's: a mapping with no table (anonymous, [uprobes], unreadable). */
#define HS_UW_NO_BIN	(-1L)

/* The maps texts kept, of the processes loaded last (hs_uw_maps_text()). */
#define HS_UW_TEXTS	256

struct hs_uwload {
	int fd;
	struct hs_uw_ops ops;
	pthread_mutex_t work;
	struct hs_strtab keys;		/* build ID and file keys, each numbered */
	uint32_t *key_bin;		/* by key number: its binary */
	size_t key_cap;
	struct hs_uw_bin *bin;
	size_t nr_bin, bin_cap;
	long vdso;			/* the vDSO's binary; -2: not made yet */
	struct hotstack_unwind_map *maps;	/* the process being loaded */
	size_t maps_cap;
	uint32_t *pids;			/* hs_uw_set_pids(); nr_pids 0: all */
	size_t nr_pids;

	pthread_mutex_t stats_lock;
	struct hs_uw_stats stats;

	/* The maps each process was last loaded from: a ring, under text_lock. */
	pthread_mutex_t text_lock;
	struct {
		uint32_t pid;
		char *maps;
	} text[HS_UW_TEXTS];
	unsigned int next_text;

	pthread_mutex_t thr_lock;
	pthread_t thread;
	bool running;
	int stop[2];			/* a pipe: a byte written stops the thread */
	unsigned int interval_ms;
};

#define HS_UW_COUNT(l, field, n) do {				\
	pthread_mutex_lock(&(l)->stats_lock);			\
	(l)->stats.field += (n);				\
	pthread_mutex_unlock(&(l)->stats_lock);			\
} while (0)

static void hs_uw_error(struct hs_uwload *l, int err)
{
	pthread_mutex_lock(&l->stats_lock);
	l->stats.errors++;
	l->stats.last_error = err;
	pthread_mutex_unlock(&l->stats_lock);
}

/* ---- the module's ioctls ----------------------------------------------- */

static int hs_uw_ioctl_add(void *ctx, int fd, struct hotstack_unwind_table *t)
{
	(void)ctx;
	return ioctl(fd, HOTSTACK_IOC_ADD_TABLE, t) ? -errno : 0;
}

static int hs_uw_ioctl_maps(void *ctx, int fd, struct hotstack_unwind_maps *m)
{
	(void)ctx;
	return ioctl(fd, HOTSTACK_IOC_SET_MAPS, m) ? -errno : 0;
}

static int hs_uw_ioctl_misses(void *ctx, int fd, struct hotstack_unwind_misses *m)
{
	(void)ctx;
	return ioctl(fd, HOTSTACK_IOC_UNWIND_MISSES, m) ? -errno : 0;
}

static const struct hs_uw_ops hs_uw_ioctls = {
	.add_table = hs_uw_ioctl_add,
	.set_maps = hs_uw_ioctl_maps,
	.misses = hs_uw_ioctl_misses,
};

/* ---- the loader --------------------------------------------------------- */

struct hs_uwload *hs_uw_new(int fd, const struct hs_uw_ops *ops)
{
	struct hs_uwload *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	elf_version(EV_CURRENT);
	l->fd = fd;
	l->ops = ops ? *ops : hs_uw_ioctls;
	l->vdso = -2;
	hs_strtab_init(&l->keys, 1);
	pthread_mutex_init(&l->work, NULL);
	pthread_mutex_init(&l->stats_lock, NULL);
	pthread_mutex_init(&l->text_lock, NULL);
	pthread_mutex_init(&l->thr_lock, NULL);
	return l;
}

void hs_uw_free(struct hs_uwload *l)
{
	size_t i;

	if (!l)
		return;
	hs_uw_stop(l);
	for (i = 0; i < l->nr_bin; i++)
		hs_uw_table_free(&l->bin[i].tab);
	free(l->bin);
	free(l->key_bin);
	hs_strtab_free(&l->keys);
	free(l->maps);
	free(l->pids);
	for (i = 0; i < HS_UW_TEXTS; i++)
		free(l->text[i].maps);
	pthread_mutex_destroy(&l->text_lock);
	pthread_mutex_destroy(&l->thr_lock);
	pthread_mutex_destroy(&l->stats_lock);
	pthread_mutex_destroy(&l->work);
	free(l);
}

int hs_uw_set_pids(struct hs_uwload *l, const uint32_t *pids, size_t nr)
{
	uint32_t *p = NULL;

	if (nr) {
		p = malloc(nr * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memcpy(p, pids, nr * sizeof(*p));
	}
	pthread_mutex_lock(&l->work);
	free(l->pids);
	l->pids = p;
	l->nr_pids = nr;
	pthread_mutex_unlock(&l->work);
	return 0;
}

const char *hs_uw_why_name(enum hs_uw_why why)
{
	static const char *const names[HS_UWN_WHYS] = {
		[HS_UWN_NO_CFI] = "no-cfi",
		[HS_UWN_ELF32] = "32-bit",
		[HS_UWN_MACHINE] = "other-machine",
		[HS_UWN_TOO_BIG] = "too-big",
		[HS_UWN_NOSPC] = "no-space",
		[HS_UWN_REFUSED] = "refused",
		[HS_UWN_UNREADABLE] = "unreadable",
	};

	return (unsigned int)why < HS_UWN_WHYS ? names[why] : "?";
}

void hs_uw_get_stats(struct hs_uwload *l, struct hs_uw_stats *s)
{
	pthread_mutex_lock(&l->stats_lock);
	*s = l->stats;
	pthread_mutex_unlock(&l->stats_lock);
}

/* ---- binaries ------------------------------------------------------------ */

/* The binary of @key, or -1. */
static long hs_uw_find_key(struct hs_uwload *l, const char *key)
{
	long k = hs_strtab_find(&l->keys, key, strlen(key));

	return k < 0 ? -1 : (long)l->key_bin[k];
}

/* @key names binary @b from now on. 0 or -ENOMEM. */
static int hs_uw_add_key(struct hs_uwload *l, const char *key, long b)
{
	long k = hs_strtab_add(&l->keys, key, strlen(key));

	if (k < 0)
		return -ENOMEM;
	if ((size_t)k >= l->key_cap) {
		size_t cap = l->key_cap ? l->key_cap * 2 : 64;
		uint32_t *kb = realloc(l->key_bin, cap * sizeof(*kb));

		if (!kb)
			return -ENOMEM;
		l->key_bin = kb;
		l->key_cap = cap;
	}
	l->key_bin[k] = b;
	return 0;
}

/* Send @bin's table. 0, or -errno when the module failed in a way no table fixes. */
static int hs_uw_send_table(struct hs_uwload *l, struct hs_uw_bin *bin)
{
	struct hotstack_unwind_table ut = {
		.size = sizeof(ut),
		.rows_ptr = (uintptr_t)bin->tab.rows,
		.rules_ptr = (uintptr_t)bin->tab.rules,
		.nr_rows = bin->tab.nr_rows,
		.nr_rules = bin->tab.nr_rules,
	};
	int ret = l->ops.add_table(l->ops.ctx, l->fd, &ut);

	switch (ret) {
	case 0:
		bin->id = ut.id;
		pthread_mutex_lock(&l->stats_lock);
		l->stats.tables++;
		l->stats.rows += ut.nr_rows;
		l->stats.rules += ut.nr_rules;
		l->stats.bytes += ut.bytes;
		pthread_mutex_unlock(&l->stats_lock);
		return 0;
	case -ENOSPC:
	case -EDQUOT:
	case -ENOMEM:
		/* Tables are not freed before the session ends: never again. */
		bin->why = HS_UWN_NOSPC;
		return 0;
	case -EINVAL:
		bin->why = HS_UWN_REFUSED;
		hs_uw_error(l, ret);
		return 0;
	default:
		bin->why = HS_UWN_REFUSED;
		return ret;
	}
}

/*
 * A new binary for ELF @elf, called @key: its table built and sent.
 * Returns its index, or -errno (-ENOMEM, or the module's failure: then
 * it is not kept, and is tried again when it is met again).
 */
static long hs_uw_new_bin(struct hs_uwload *l, Elf *elf, const char *key)
{
	const char *ident = elf_getident(elf, NULL);
	struct hs_uw_bin *bin;
	GElf_Ehdr eh;
	double t0;
	int ret = 0;
	long b;

	if (l->nr_bin == l->bin_cap) {
		size_t cap = l->bin_cap ? l->bin_cap * 2 : 64;

		bin = realloc(l->bin, cap * sizeof(*bin));
		if (!bin)
			return -ENOMEM;
		l->bin = bin;
		l->bin_cap = cap;
	}
	bin = &l->bin[l->nr_bin];
	memset(bin, 0, sizeof(*bin));
	if (!ident || !gelf_getehdr(elf, &eh)) {
		bin->why = HS_UWN_UNREADABLE;
	} else if (ident[EI_CLASS] != ELFCLASS64) {
		bin->why = HS_UWN_ELF32;
		bin->elf32 = true;
	} else if (eh.e_machine != HS_UW_HOST_MACHINE) {
		bin->why = HS_UWN_MACHINE;
	} else {
		t0 = hs_now();
		ret = hs_uw_build(elf, &bin->tab);
		HS_UW_COUNT(l, build_ms, (hs_now() - t0) * 1e3);
		bin->why = ret == -E2BIG ? HS_UWN_TOO_BIG :
			   ret == -EOPNOTSUPP ? HS_UWN_MACHINE :
			   ret == -EINVAL ? HS_UWN_UNREADABLE : HS_UWN_NO_CFI;
		if (ret == -ENOMEM)
			return ret;
		ret = ret ? 0 : hs_uw_send_table(l, bin);
		/* The module has its copy; the base and segments make biases. */
		free(bin->tab.rows);
		free(bin->tab.rules);
		bin->tab.rows = NULL;
		bin->tab.rules = NULL;
		if (ret)
			return ret;
	}
	b = l->nr_bin++;
	if (!bin->id)
		HS_UW_COUNT(l, no_table[bin->why], 1);
	/* Without its key (no memory) it is built again when met again. */
	return hs_uw_add_key(l, key, b) ?: b;
}

/* The vDSO's binary, from this (64-bit) process's image; HS_UW_NO_BIN when none. */
static long hs_uw_vdso(struct hs_uwload *l)
{
	char key[HS_UW_KEY_MAX];
	struct stat st;
	size_t size;
	void *copy;
	Elf *elf;
	long b;

	if (l->vdso != -2)
		return l->vdso;
	l->vdso = HS_UW_NO_BIN;
	/* libelf gets a copy: the image is read-only, and small (8 KiB). */
	copy = hs_vdso_image(&size);
	if (!copy)
		return l->vdso;
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return l->vdso;
	}
	memset(&st, 0, sizeof(st));
	hs_uw_key(elf, &st, key);
	if (key[0] != 'b')
		strcpy(key, "v:vdso");
	b = hs_uw_find_key(l, key);
	if (b < 0)
		b = hs_uw_new_bin(l, elf, key);
	elf_end(elf);
	free(copy);
	if (b >= 0)
		l->vdso = b;
	return b;
}

/*
 * The binary of the file mapped at [@start, @end) of @pid, @path (inode
 * @ino) in its maps; HS_UW_NO_BIN when it cannot be read; -errno.
 */
/*
 * The binary of @file (@st its stat), known by its device, inode, size and
 * time, else built and loaded once; HS_UW_NO_BIN when it cannot be read.
 */
static long hs_uw_stat_file(struct hs_uwload *l, const char *file, const struct stat *st)
{
	char fkey[HS_UW_KEY_MAX], key[HS_UW_KEY_MAX];
	Elf *elf;
	long b;
	int fd;

	hs_uw_key(NULL, st, fkey);
	b = hs_uw_find_key(l, fkey);
	if (b >= 0)
		return b;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HS_UW_NO_BIN;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return HS_UW_NO_BIN;
	}
	hs_uw_key(elf, st, key);
	b = hs_uw_find_key(l, key);
	if (b < 0)
		b = hs_uw_new_bin(l, elf, key);
	elf_end(elf);
	close(fd);
	if (b >= 0 && strcmp(key, fkey) && hs_uw_add_key(l, fkey, b))
		return -ENOMEM;
	return b;
}

static long hs_uw_file(struct hs_uwload *l, uint32_t pid, uint64_t start, uint64_t end,
		       uint64_t ino, const char *path)
{
	char mf[64], root[PATH_MAX + 32];
	const char *file = mf;
	size_t len = strlen(path);
	struct stat st;
	long b;

	/* The very file mapped; root's only (CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE). */
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	if (stat(mf, &st)) {
		/* Through its path: only if it is still the file mapped. */
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			goto unreadable;
		snprintf(root, sizeof(root), "/proc/%u/root%s", pid, path);
		if (stat(root, &st) || st.st_ino != ino)
			goto unreadable;
		file = root;
	}
	b = hs_uw_stat_file(l, file, &st);
	if (b != HS_UW_NO_BIN)
		return b;
unreadable:
	HS_UW_COUNT(l, no_table[HS_UWN_UNREADABLE], 1);
	return HS_UW_NO_BIN;
}

int hs_uw_preload(struct hs_uwload *l, const char *path)
{
	struct stat st;
	long b;

	if (stat(path, &st))
		return -errno;
	pthread_mutex_lock(&l->work);
	b = hs_uw_stat_file(l, path, &st);
	pthread_mutex_unlock(&l->work);
	return b == HS_UW_NO_BIN ? -ENOEXEC : b < 0 ? (int)b : 0;
}

/* ---- processes --------------------------------------------------------- */

/* Room for mapping @nr of the process being loaded. 0 or -ENOMEM. */
static int hs_uw_grow_maps(struct hs_uwload *l, size_t nr)
{
	struct hotstack_unwind_map *m;
	size_t cap;

	if (nr < l->maps_cap)
		return 0;
	cap = l->maps_cap ? l->maps_cap * 2 : 64;
	m = realloc(l->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	l->maps = m;
	l->maps_cap = cap;
	return 0;
}

/*
 * Load @pid's executable mappings from @maps (its text, cut in lines
 * here). 0; -ESTALE: read them again; -errno.
 */
static int hs_uw_load_text(struct hs_uwload *l, uint32_t pid, char *maps)
{
	struct hotstack_unwind_maps um = { .size = sizeof(um), .pid = pid };
	unsigned long long start, end, pgoff, ino;
	unsigned int dev_major, dev_minor;
	struct hotstack_unwind_map *m;
	char *line, *next, perms[5];
	bool elf32 = false;
	size_t nr = 0, cut = 0, i;
	const char *path;
	int n, ret;
	long b;

	for (line = maps; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		n = 0;
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &dev_major, &dev_minor, &ino, &n) < 7 || !n)
			continue;
		path = line + n;
		if (strlen(perms) < 3 || perms[2] != 'x' || !strcmp(path, "[vsyscall]"))
			continue;
		if (!strcmp(path, "[vdso]"))
			b = hs_uw_vdso(l);
		else if (path[0] == '/')
			b = hs_uw_file(l, pid, start, end, ino, path);
		else
			b = HS_UW_NO_BIN;	/* anonymous: JIT code, [uprobes] */
		if (b < HS_UW_NO_BIN)
			return b;
		if (nr == HOTSTACK_UW_MAX_MAPS) {
			cut++;
			continue;
		}
		if (hs_uw_grow_maps(l, nr))
			return -ENOMEM;
		m = &l->maps[nr++];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		if (b >= 0) {
			struct hs_uw_bin *bin = &l->bin[b];
			uint64_t bias;

			elf32 |= bin->elf32;
			if (bin->id && !hs_uw_bias(&bin->tab, start, end, pgoff, &bias)) {
				m->bias = bias;
				m->table = bin->id;
			}
		}
	}
	/* Nothing executable: a kernel thread, a zombie. */
	if (!nr)
		return 0;
	/* A 32-bit process: the module walks none of its stacks by tables. */
	for (i = 0; elf32 && i < nr; i++) {
		l->maps[i].bias = 0;
		l->maps[i].table = 0;
	}
	um.nr_maps = nr;
	um.maps_ptr = (uintptr_t)l->maps;
	ret = l->ops.set_maps(l->ops.ctx, l->fd, &um);
	if (!ret) {
		pthread_mutex_lock(&l->stats_lock);
		l->stats.processes++;
		l->stats.maps += nr;
		l->stats.maps_cut += cut;
		pthread_mutex_unlock(&l->stats_lock);
	}
	return ret;
}

/* Count what loading a process ended with. */
static int hs_uw_loaded(struct hs_uwload *l, int ret)
{
	switch (ret) {
	case 0:
		break;
	case -ESRCH:
		HS_UW_COUNT(l, gone, 1);
		break;
	case -EPERM:
		HS_UW_COUNT(l, denied, 1);
		break;
	default:
		hs_uw_error(l, ret);
	}
	return ret;
}

/* Keep @maps (taken), the text @pid was loaded from, in place of its last. */
static void hs_uw_keep_text(struct hs_uwload *l, uint32_t pid, char *maps)
{
	unsigned int i;

	pthread_mutex_lock(&l->text_lock);
	for (i = 0; i < HS_UW_TEXTS && l->text[i].pid != pid; i++)
		;
	if (i == HS_UW_TEXTS)
		i = l->next_text++ % HS_UW_TEXTS;
	free(l->text[i].maps);
	l->text[i].pid = pid;
	l->text[i].maps = maps;
	pthread_mutex_unlock(&l->text_lock);
}

char *hs_uw_maps_text(struct hs_uwload *l, uint32_t pid)
{
	char *maps = NULL;
	unsigned int i;

	if (!l || !pid)
		return NULL;
	pthread_mutex_lock(&l->text_lock);
	for (i = 0; i < HS_UW_TEXTS; i++)
		if (l->text[i].pid == pid && l->text[i].maps) {
			maps = strdup(l->text[i].maps);
			break;
		}
	pthread_mutex_unlock(&l->text_lock);
	return maps;
}

static int hs_uw_load_pid_locked(struct hs_uwload *l, uint32_t pid)
{
	char path[32], *maps, *copy;
	int ret, tries;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	for (tries = 0;; tries++) {
		maps = hs_read_file(path, NULL);
		if (!maps) {
			ret = errno == ENOENT || errno == ESRCH ? -ESRCH :
			      errno == EACCES || errno == EPERM ? -EPERM : -errno;
			break;
		}
		/* A zombie's maps are empty: its address space has gone. */
		if (!maps[0]) {
			free(maps);
			ret = -ESRCH;
			break;
		}
		/* Parsed in place: a copy is kept. */
		copy = strdup(maps);
		ret = hs_uw_load_text(l, pid, maps);
		free(maps);
		if (!ret && copy)
			hs_uw_keep_text(l, pid, copy);
		else
			free(copy);
		if (ret != -ESTALE || tries == HS_UW_STALE_RETRIES)
			break;
		HS_UW_COUNT(l, estale, 1);
	}
	return hs_uw_loaded(l, ret);
}

int hs_uw_load_pid(struct hs_uwload *l, uint32_t pid)
{
	int ret;

	pthread_mutex_lock(&l->work);
	ret = hs_uw_load_pid_locked(l, pid);
	pthread_mutex_unlock(&l->work);
	return ret;
}

int hs_uw_load_maps(struct hs_uwload *l, uint32_t pid, const char *maps)
{
	char *text = strdup(maps);
	int ret;

	if (!text)
		return -ENOMEM;
	pthread_mutex_lock(&l->work);
	ret = hs_uw_loaded(l, hs_uw_load_text(l, pid, text));
	pthread_mutex_unlock(&l->work);
	free(text);
	return ret;
}

/* Whether loading the next process may still work after one failed with @err. */
static bool hs_uw_go_on(int err)
{
	return err == -ESRCH || err == -EPERM || err == -ESTALE;
}

static int hs_uw_load_all_locked(struct hs_uwload *l)
{
	struct dirent *d;
	int ret, n = 0;
	size_t i;
	char *end;
	DIR *dir;
	long pid;

	for (i = 0; i < l->nr_pids; i++) {
		ret = hs_uw_load_pid_locked(l, l->pids[i]);
		if (ret && !hs_uw_go_on(ret))
			return ret;
		n += !ret;
	}
	if (l->nr_pids)
		return n;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid = strtol(d->d_name, &end, 10);
		if (*end || pid <= 0 || pid > UINT32_MAX)
			continue;
		ret = hs_uw_load_pid_locked(l, pid);
		if (ret && !hs_uw_go_on(ret)) {
			closedir(dir);
			return ret;
		}
		n += !ret;
	}
	closedir(dir);
	return n;
}

int hs_uw_load_all(struct hs_uwload *l)
{
	int ret;

	pthread_mutex_lock(&l->work);
	ret = hs_uw_load_all_locked(l);
	pthread_mutex_unlock(&l->work);
	return ret;
}

int hs_uw_poll(struct hs_uwload *l)
{
	uint32_t pids[HS_UW_MISSES];
	struct hotstack_unwind_misses um = {
		.size = sizeof(um),
		.pids_ptr = (uintptr_t)pids,
		.nr = HS_UW_MISSES,
	};
	uint32_t i, self;
	int ret;

	pthread_mutex_lock(&l->work);
	ret = l->ops.misses(l->ops.ctx, l->fd, &um);
	if (ret) {
		hs_uw_error(l, ret);
		goto out;
	}
	if (um.nr > HS_UW_MISSES)
		um.nr = HS_UW_MISSES;
	pthread_mutex_lock(&l->stats_lock);
	l->stats.polls++;
	l->stats.misses += um.nr;
	l->stats.lost += um.lost;
	pthread_mutex_unlock(&l->stats_lock);
	/*
	 * This tool's own process last: its libraries' tables are large, and
	 * the programs it records are what it is for.
	 */
	for (i = 0, self = getpid(); i < um.nr; i++) {
		if (pids[i] == self && i + 1 < um.nr) {
			pids[i] = pids[um.nr - 1];
			pids[um.nr - 1] = self;
		}
		ret = hs_uw_load_pid_locked(l, pids[i]);
		if (ret && !hs_uw_go_on(ret))
			goto out;
	}
	/* Some were not kept: nobody knows which, so all of them. */
	if (um.lost) {
		ret = hs_uw_load_all_locked(l);
		if (ret < 0)
			goto out;
	}
	ret = um.nr;
out:
	pthread_mutex_unlock(&l->work);
	return ret;
}

/* ---- the thread ---------------------------------------------------------- */

/* The loader's thread polls at most this often, whatever wakes it. */
#define HS_UW_MIN_GAP_NS	1000000L

static void *hs_uw_thread(void *arg)
{
	struct hs_uwload *l = arg;
	const struct timespec gap = { 0, HS_UW_MIN_GAP_NS };
	struct pollfd p[2] = {
		/* The module says POLLPRI when a process waits for its tables. */
		{ .fd = l->fd, .events = POLLPRI },
		{ .fd = l->stop[0], .events = POLLIN },
	};

	for (;;) {
		/* Its failures are counted; the next poll may do better. */
		hs_uw_poll(l);
		if (poll(p, 2, l->interval_ms) > 0 && p[1].revents)
			break;
		/*
		 * Not at every sample of a process it cannot load (not ours,
		 * gone meanwhile): the module reports it again at once.
		 */
		nanosleep(&gap, NULL);
	}
	return NULL;
}

int hs_uw_start(struct hs_uwload *l, unsigned int interval_ms)
{
	sigset_t all, old;
	int ret;

	if (!interval_ms)
		return -EINVAL;
	pthread_mutex_lock(&l->thr_lock);
	if (l->running) {
		pthread_mutex_unlock(&l->thr_lock);
		return -EBUSY;
	}
	if (pipe2(l->stop, O_CLOEXEC)) {
		pthread_mutex_unlock(&l->thr_lock);
		return -errno;
	}
	l->interval_ms = interval_ms;
	/* Signals (SIGINT ending a recording) stay the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&l->thread, NULL, hs_uw_thread, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	l->running = !ret;
	if (ret) {
		close(l->stop[0]);
		close(l->stop[1]);
	}
	pthread_mutex_unlock(&l->thr_lock);
	if (!ret)
		pthread_setname_np(l->thread, "hotstack-unwind");
	return ret;
}

void hs_uw_stop(struct hs_uwload *l)
{
	pthread_mutex_lock(&l->thr_lock);
	if (!l->running) {
		pthread_mutex_unlock(&l->thr_lock);
		return;
	}
	if (write(l->stop[1], "", 1) != 1)
		perror("hotstack: the unwind tables' thread");
	pthread_join(l->thread, NULL);
	close(l->stop[0]);
	close(l->stop[1]);
	l->running = false;
	pthread_mutex_unlock(&l->thr_lock);
}
