// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack agent's --output-dir: the files each interval wrote, and the
 * newest --keep intervals' kept. The files are remembered as they are
 * written (each name once, a number an interval's file), so that an
 * interval past --keep is removed by its names: a scan of the directory
 * (180,500 files for 500 containers and the default --keep: 0.1 s on the
 * host each interval) only for what an earlier run left there, or when
 * memory ran out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

/* A file of the agent's: "hotstack-" and at least a START, ".pb.gz" last. */
static bool hs_afile_name(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "hotstack-", 9) && n >= HS_AFILE_START_LEN + 6 &&
	       !strcmp(name + n - 6, ".pb.gz");
}

void hs_afiles_init(struct hs_afiles *f, const char *dir, unsigned long keep)
{
	memset(f, 0, sizeof(*f));
	f->dir = dir;
	f->dir_fd = -1;
	f->keep = keep;
	hs_strtab_init(&f->names, 1);
}

int hs_afiles_open(struct hs_afiles *f)
{
	if (mkdir(f->dir, 0755) && errno != EEXIST)
		return -errno;
	f->dir_fd = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return f->dir_fd < 0 ? -errno : 0;
}

/* @len bytes of @data into @fd, closed: 0, or -errno (-ENOSPC for a short write). */
static int hs_afile_fill(int fd, const void *data, size_t len, bool keep_open)
{
	ssize_t w = write(fd, data, len);
	int ret = w < 0 ? -errno : (size_t)w != len ? -ENOSPC : 0;

	if (!keep_open && close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* @f's file @name could not be written (@err: -errno, -ENOSPC for a short write): said. */
static int hs_afile_failed(struct hs_afiles *f, const char *name, int err,
			   void (*log)(const char *fmt, ...))
{
	log("cannot write %s/%s: %s", f->dir, name, err == -ENOSPC ? "short write (disk full?)" :
	    strerror(-err));
	return err;
}

/*
 * Written whole before it has its name: a file with none (O_TMPFILE),
 * linked in by linkat(AT_EMPTY_PATH) once complete: no temporary name
 * made and renamed for each of an agent's hundreds of files an interval
 * (4% of its CPU with 500 containers). Where the filesystem has no
 * O_TMPFILE or linkat() refuses (before Linux 6.10 it wants
 * CAP_DAC_READ_SEARCH), from then on a hidden name, renamed; likewise for
 * a name that exists already (rename() replaces it).
 */
int hs_afiles_write(struct hs_afiles *f, const char *name, const void *data, size_t len,
		    void (*log)(const char *fmt, ...))
{
	char tmp[256];
	int fd, ret;

	if (!f->no_tmpfile) {
		fd = openat(f->dir_fd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
		if (fd >= 0) {
			ret = hs_afile_fill(fd, data, len, true);
			if (ret) {
				close(fd);
				return hs_afile_failed(f, name, ret, log);
			}
			ret = linkat(fd, "", f->dir_fd, name, AT_EMPTY_PATH) ? -errno : 0;
			if (close(fd) && !ret) {
				ret = -errno;
				unlinkat(f->dir_fd, name, 0);
				return hs_afile_failed(f, name, ret, log);
			}
			if (!ret) {
				hs_afiles_add(f, name);
				return 0;
			}
		} else {
			ret = -errno;
		}
		if (ret != -EEXIST) {
			log("files written under a temporary name, then renamed: no file "
			    "without a name (O_TMPFILE) linked in %s (%s)", f->dir, strerror(-ret));
			f->no_tmpfile = true;
		}
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(f->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ret = fd < 0 ? -errno : hs_afile_fill(fd, data, len, false);
	if (!ret && renameat(f->dir_fd, tmp, f->dir_fd, name))
		ret = -errno;
	if (ret) {
		if (fd >= 0)
			unlinkat(f->dir_fd, tmp, 0);
		return hs_afile_failed(f, name, ret, log);
	}
	hs_afiles_add(f, name);
	return 0;
}

static void hs_afile_interval_free(struct hs_afile_interval *iv)
{
	free(iv->ids);
	iv->ids = NULL;
	iv->nr = iv->cap = 0;
}

void hs_afiles_free(struct hs_afiles *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++)
		hs_afile_interval_free(&f->iv[i]);
	free(f->iv);
	hs_strtab_free(&f->names);
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	memset(f, 0, sizeof(*f));
	f->dir_fd = -1;
}

/* A new interval of START @start (HS_AFILE_START_LEN bytes), the newest. 0 or -ENOMEM. */
static int hs_afiles_push(struct hs_afiles *f, const char *start, bool scan)
{
	struct hs_afile_interval *iv;

	if (hs_grow(&f->iv, &f->cap, f->nr, sizeof(*f->iv), 16))
		return -ENOMEM;
	iv = &f->iv[f->nr++];
	memset(iv, 0, sizeof(*iv));
	memcpy(iv->start, start, HS_AFILE_START_LEN);
	iv->scan = scan;
	return 0;
}

static int hs_start_cmp(const void *a, const void *b)
{
	return memcmp(((const struct hs_afile_interval *)a)->start,
		      ((const struct hs_afile_interval *)b)->start, HS_AFILE_START_LEN);
}

int hs_afiles_scan(struct hs_afiles *f)
{
	struct hs_strtab starts;
	struct dirent *d;
	DIR *dir = opendir(f->dir);
	int ret = 0;
	long id;

	if (!dir)
		return -errno;
	hs_strtab_init(&starts, 1);
	while (!ret && (d = readdir(dir))) {
		if (!hs_afile_name(d->d_name))
			continue;
		/* Each START once (a directory of 500 groups' files has 500 a START). */
		id = hs_strtab_add(&starts, d->d_name, HS_AFILE_START_LEN);
		if (id < 0)
			ret = -ENOMEM;
		else if ((size_t)id == f->nr)	/* new: each one is pushed */
			ret = hs_afiles_push(f, d->d_name, true);
	}
	hs_strtab_free(&starts);
	closedir(dir);
	qsort(f->iv, f->nr, sizeof(*f->iv), hs_start_cmp);
	return ret;
}

/* The names again, only those of the intervals kept, when most are not. */
static void hs_afiles_compact(struct hs_afiles *f)
{
	struct hs_strtab names;
	size_t i, j, live = 0;
	long id;

	for (i = 0; i < f->nr; i++)
		live += f->iv[i].nr;
	if (f->names.nr <= 2 * live + 4096)
		return;
	hs_strtab_init(&names, 1);
	for (i = 0; i < f->nr; i++)
		for (j = 0; j < f->iv[i].nr; j++) {
			id = hs_strtab_add(&names, f->names.str[f->iv[i].ids[j]].s,
					   f->names.str[f->iv[i].ids[j]].len);
			if (id < 0) {
				hs_strtab_free(&names);
				return;
			}
			f->iv[i].ids[j] = id;
		}
	hs_strtab_free(&f->names);
	f->names = names;
}

void hs_afiles_add(struct hs_afiles *f, const char *name)
{
	struct hs_afile_interval *iv = f->nr ? &f->iv[f->nr - 1] : NULL;
	long id;

	if (!hs_afile_name(name))
		return;
	if (!iv || memcmp(iv->start, name, HS_AFILE_START_LEN)) {
		if (hs_afiles_push(f, name, false))
			return;		/* the next scan finds it */
		iv = &f->iv[f->nr - 1];
	}
	if (iv->scan)
		return;
	id = hs_strtab_add(&f->names, name + HS_AFILE_START_LEN,
			   strlen(name + HS_AFILE_START_LEN));
	if (id < 0 || hs_grow(&iv->ids, &iv->cap, iv->nr, sizeof(*iv->ids), 64)) {
		/* Out of memory: its files by a scan of the directory. */
		hs_afile_interval_free(iv);
		iv->scan = true;
		return;
	}
	iv->ids[iv->nr++] = id;
}

/* Remove @path, said through @log unless it is gone already. */
static void hs_afiles_unlink(const char *path, void (*log)(const char *fmt, ...))
{
	if (unlink(path) && errno != ENOENT)
		log("cannot remove %s: %s", path, strerror(errno));
}

/* The files of interval @iv removed: by their names, else by a scan. */
static void hs_afiles_remove(struct hs_afiles *f, struct hs_afile_interval *iv,
			     void (*log)(const char *fmt, ...))
{
	char path[4096];
	struct dirent *d;
	size_t i;
	DIR *dir;

	for (i = 0; i < iv->nr; i++) {
		snprintf(path, sizeof(path), "%s/%.*s%s", f->dir, (int)HS_AFILE_START_LEN,
			 iv->start, f->names.str[iv->ids[i]].s);
		hs_afiles_unlink(path, log);
	}
	if (!iv->scan)
		return;
	dir = opendir(f->dir);
	while (dir && (d = readdir(dir))) {
		if (!hs_afile_name(d->d_name) || memcmp(d->d_name, iv->start, HS_AFILE_START_LEN))
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, d->d_name);
		hs_afiles_unlink(path, log);
	}
	if (dir)
		closedir(dir);
}

void hs_afiles_prune(struct hs_afiles *f, void (*log)(const char *fmt, ...))
{
	size_t i, n;

	if (f->nr <= f->keep)
		return;
	n = f->nr - f->keep;
	for (i = 0; i < n; i++) {
		hs_afiles_remove(f, &f->iv[i], log);
		hs_afile_interval_free(&f->iv[i]);
	}
	memmove(f->iv, f->iv + n, f->keep * sizeof(*f->iv));
	f->nr = f->keep;
	hs_afiles_compact(f);
}
