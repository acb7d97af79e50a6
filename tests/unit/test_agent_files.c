// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's --output-dir (agent_files.c): the newest --keep intervals'
 * files kept, the intervals an earlier run left found by a scan, the
 * agent's own removed by their names.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep),
	};

	return cmocka_run_group_tests_name("agent_files", tests, NULL, NULL);
}
