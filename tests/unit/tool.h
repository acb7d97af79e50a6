/* SPDX-License-Identifier: GPL-2.0 */
/* Unit test helpers: run the tool in-process, files in a scratch directory. */
#ifndef HS_UNIT_TOOL_H
#define HS_UNIT_TOOL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* Output of the last run_tool(): stdout and stderr together. */
static char tool_out[65536];

/* Run @fn(@arg) with its stdout and stderr captured in tool_out. */
static __attribute__((unused)) int run_captured(int (*fn)(void *), void *arg)
{
	int rc, saved_out, saved_err;
	FILE *tmp = tmpfile();
	size_t n;

	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(tmp), 1);
	dup2(fileno(tmp), 2);
	rc = fn(arg);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	rewind(tmp);
	n = fread(tool_out, 1, sizeof(tool_out) - 1, tmp);
	tool_out[n] = '\0';
	fclose(tmp);
	return rc;
}

static __attribute__((unused)) int run_main(void *argv)
{
	int argc = 0;

	while (((char **)argv)[argc])
		argc++;
	return hs_main(argc, argv);
}

/* Run hs_main() on a NULL-terminated argument list, capturing its output. */
static __attribute__((unused)) int run_tool(const char *arg0, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, arg0);
	for (argv[argc] = (char *)arg0; argv[argc] && argc < 15;)
		argv[++argc] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	return run_captured(run_main, argv);
}

/* A scratch directory for the test's files, and paths in it. */
static char scratch_dir[64];

static __attribute__((unused)) const char *scratch(const char *name)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];

	if (!scratch_dir[0]) {
		strcpy(scratch_dir, "/tmp/hs_unit_XXXXXX");
		if (!mkdtemp(scratch_dir))
			abort();
	}
	snprintf(p, sizeof(paths[0]), "%s/%s", scratch_dir, name);
	return p;
}

static __attribute__((unused)) void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

/* The whole file, NUL-terminated; *len (may be NULL) its length. */
static __attribute__((unused)) char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n)
		abort();
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static __attribute__((unused)) void scratch_remove(void)
{
	char cmd[128];

	if (scratch_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", scratch_dir);
	}
}

#endif
