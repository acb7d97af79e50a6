// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's --output-dir (agent_files.c): the newest --keep intervals'
 * files kept, the intervals an earlier run left found by a scan, the
 * agent's own removed by their names; each file written whole before it
 * has its name.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent.h"

static char dir[] = "/tmp/hs-afiles-XXXXXX";

static void touch(const char *name)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static bool there(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

/* The entries of @path but . and .., the hidden ones too with @hidden. */
static int entries_of(const char *path, bool hidden)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += hidden ? strcmp(e->d_name, ".") && strcmp(e->d_name, "..") :
			      e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int files(void)
{
	return entries_of(dir, false);
}

static int logged;

static void log_fn(const char *fmt, ...)
{
	(void)fmt;
	logged++;
}

/* The agent writes a file of its own: there, and told. */
static void wrote(struct hs_afiles *f, const char *name)
{
	touch(name);
	hs_afiles_add(f, name);
}

static void keep(void **state)
{
	struct hs_afiles f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* An earlier run's: three intervals, one with two groups; and a file not ours. */
	touch("hotstack-20261206T000010Z.pb.gz");
	touch("hotstack-20261206T000020Z-a.pb.gz");
	touch("hotstack-20261206T000020Z-b.pb.gz");
	touch("hotstack-20261206T000000Z-a.pb.gz");
	touch("notes.txt");
	hs_afiles_init(&f, dir, 2);
	assert_int_equal(hs_afiles_scan(&f), 0);
	assert_int_equal(f.nr, 3);
	assert_memory_equal(f.iv[0].start, "hotstack-20261206T000000Z", HS_AFILE_START_LEN);
	assert_memory_equal(f.iv[2].start, "hotstack-20261206T000020Z", HS_AFILE_START_LEN);
	hs_afiles_prune(&f, log_fn);
	assert_int_equal(f.nr, 2);
	assert_false(there("hotstack-20261206T000000Z-a.pb.gz"));
	assert_true(there("hotstack-20261206T000010Z.pb.gz"));
	assert_int_equal(files(), 4);
	/* This run's intervals: a group file each, the oldest going by the scan. */
	wrote(&f, "hotstack-20261206T000030Z-a.pb.gz");
	wrote(&f, "hotstack-20261206T000030Z-b.pb.gz");
	hs_afiles_prune(&f, log_fn);
	assert_false(there("hotstack-20261206T000010Z.pb.gz"));
	assert_true(there("hotstack-20261206T000020Z-b.pb.gz"));
	wrote(&f, "hotstack-20261206T000040Z-a.pb.gz");
	hs_afiles_prune(&f, log_fn);
	assert_false(there("hotstack-20261206T000020Z-a.pb.gz"));
	assert_false(there("hotstack-20261206T000020Z-b.pb.gz"));
	assert_int_equal(files(), 4);
	/*
	 * Its own by their names: a file of its START that it did not write
	 * stays (no scan), those it wrote go.
	 */
	touch("hotstack-20261206T000030Z-c.pb.gz");
	wrote(&f, "hotstack-20261206T000050Z.pb.gz");
	hs_afiles_prune(&f, log_fn);
	assert_false(there("hotstack-20261206T000030Z-a.pb.gz"));
	assert_false(there("hotstack-20261206T000030Z-b.pb.gz"));
	assert_true(there("hotstack-20261206T000030Z-c.pb.gz"));
	assert_true(there("hotstack-20261206T000040Z-a.pb.gz"));
	assert_true(there("hotstack-20261206T000050Z.pb.gz"));
	assert_true(there("notes.txt"));
	assert_int_equal(logged, 0);
	/* Many intervals of many groups: the names stay those of the kept. */
	for (int i = 0; i < 300; i++) {
		char name[64];

		for (int g = 0; g < 40; g++) {
			snprintf(name, sizeof(name), "hotstack-20261206T%06dZ-%d-%d.pb.gz", 100 + i,
				 i, g);
			wrote(&f, name);
		}
		hs_afiles_prune(&f, log_fn);
	}
	assert_int_equal(f.nr, 2);
	assert_true(f.names.nr <= 2 * 80 + 4096);
	assert_int_equal(files(), 80 + 2);
	hs_afiles_free(&f);
	assert_int_equal(system("rm -rf /tmp/hs-afiles-*"), 0);
}


static void content(const char *path, const char *want)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) <= strlen(want));
	fclose(f);
	assert_string_equal(buf, want);
}

static void write_whole(void **state)
{
	char out[64], path[128], ev[4096] __attribute__((aligned(8)));
	const struct inotify_event *e;
	struct hs_afiles f;
	int fd, ino;
	bool tmpfile;
	ssize_t n;

	(void)state;
	strcpy(dir, "/tmp/hs-afiles-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	logged = 0;
	hs_afiles_init(&f, out, 2);
	/* Made when missing. */
	assert_int_equal(hs_afiles_open(&f), 0);
	/* What this filesystem can: O_TMPFILE or not. */
	fd = openat(f.dir_fd, ".", O_WRONLY | O_TMPFILE, 0644);
	tmpfile = fd >= 0;
	if (fd >= 0)
		close(fd);
	ino = inotify_init1(IN_NONBLOCK);
	assert_true(ino >= 0);
	assert_true(inotify_add_watch(ino, out, IN_CREATE | IN_MOVED_TO) >= 0);
	snprintf(path, sizeof(path), "%s/hotstack-20261206T000000Z-a.pb.gz", out);
	assert_int_equal(hs_afiles_write(&f, "hotstack-20261206T000000Z-a.pb.gz", "first", 5,
					 log_fn), 0);
	content(path, "first");
	assert_int_equal(f.nr, 1);
	/*
	 * With O_TMPFILE, the name is made once, complete: no other name made
	 * and renamed. Without: said once, written under a name.
	 */
	assert_int_equal(f.no_tmpfile, !tmpfile);
	assert_int_equal(logged, !tmpfile);
	n = read(ino, ev, sizeof(ev));
	assert_true(n > 0);
	e = (const struct inotify_event *)ev;
	assert_string_equal(e->name, tmpfile ? "hotstack-20261206T000000Z-a.pb.gz" :
			    ".hotstack-20261206T000000Z-a.pb.gz.tmp");
	assert_int_equal(e->mask, IN_CREATE);
	assert_int_equal((size_t)n == sizeof(*e) + e->len, tmpfile);
	close(ino);
	assert_int_equal(entries_of(out, true), 1);
	/* A name there already: replaced, whole, nothing left behind, nothing said. */
	assert_int_equal(hs_afiles_write(&f, "hotstack-20261206T000000Z-a.pb.gz", "second", 6,
					 log_fn), 0);
	content(path, "second");
	assert_int_equal(f.no_tmpfile, !tmpfile);
	assert_int_equal(logged, !tmpfile);
	assert_int_equal(entries_of(out, true), 1);
	/* Under a temporary name, renamed: the same. */
	f.no_tmpfile = true;
	assert_int_equal(hs_afiles_write(&f, "hotstack-20261206T000010Z-a.pb.gz", "third", 5,
					 log_fn), 0);
	snprintf(path, sizeof(path), "%s/hotstack-20261206T000010Z-a.pb.gz", out);
	content(path, "third");
	assert_int_equal(entries_of(out, true), 2);
	/* Both remembered as the agent's: the older interval goes past --keep 1. */
	assert_int_equal(f.nr, 2);
	f.keep = 1;
	hs_afiles_prune(&f, log_fn);
	assert_int_equal(entries_of(out, true), 1);
	/* A directory that cannot be made: its error. */
	hs_afiles_free(&f);
	snprintf(out, sizeof(out), "%s/no/such", dir);
	hs_afiles_init(&f, out, 2);
	assert_int_equal(hs_afiles_open(&f), -ENOENT);
	hs_afiles_free(&f);
	assert_int_equal(system("rm -rf /tmp/hs-afiles-*"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep),
		cmocka_unit_test(write_whole),
	};

	return cmocka_run_group_tests_name("agent_files", tests, NULL, NULL);
}
