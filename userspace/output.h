/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: the output side of every command that writes a profile.
 * The format from --format or from the file's name, by one rule for every
 * command; the file (or standard output) opened so that a failed write
 * says why (a full disk is "No space left on device"); a profile written
 * in any format.
 */
#ifndef HOTSTACK_OUTPUT_H
#define HOTSTACK_OUTPUT_H

#include <stdio.h>

#include "options.h"

enum hs_format {
	HS_FMT_FOLDED, HS_FMT_REPORT, HS_FMT_JSON, HS_FMT_SVG, HS_FMT_PPROF, HS_FMT_OTLP, HS_FMT_NR
};

/* Every format, as a mask of (1 << format). */
#define HS_FMT_ALL	((1U << HS_FMT_NR) - 1)

/* The format --format @s names (folded, report, json, svg, pprof, otlp), or -1. */
int hs_format_of_str(const char *s);

/* The format a file name's extension asks for (.folded .txt .json .svg .pb.gz .otlp.pb), or -1. */
int hs_format_of_name(const char *name);

/*
 * The one rule, for every command: --format @format (NULL: not given)
 * wins; else the extension of @path's file name; a name without one (and
 * "-", standard output, and no -o at all: @path NULL) gets @dflt. An
 * extension that is not a format's, or a format not in @ok (a mask of
 * 1 << format), is a usage error: said, and HS_EXIT_USAGE returned.
 * 0 with the format in *@out.
 */
int hs_output_format(struct hs_args *a, const char *path, const char *format, int dflt,
		     unsigned int ok, int *out);

/* An output being written: its FILE, and the first error a write met. */
struct hs_output {
	FILE *f;
	const char *cmd;	/* for messages: "hotstack CMD: cannot write ..." */
	const char *name;	/* the path, or "standard output" */
	int fd;
	int err;		/* errno of the first failed write; 0: none */
	int created;		/* a regular file this output made: removed on failure */
	const char *path;
};

/* Open @path ("-" or NULL: standard output) for writing; 0, or -1 after saying why. */
int hs_output_open(struct hs_output *o, const char *cmd, const char *path);

/*
 * Flush and close; @ret is the writer's result (0 or -errno). Says what
 * went wrong, the errno of the write that failed rather than the writer's
 * -EIO, and removes a regular file left half written. 0 or -1.
 */
int hs_output_close(struct hs_output *o, int ret);

struct hs_profile;
struct hs_view;
/*
 * Write @p in @format to @path (NULL or "-": standard output), the report
 * as @v asks (NULL: the default one); 0, or -1 after saying why.
 */
int hs_write_profile(const char *cmd, const char *path, int format, const struct hs_profile *p,
		     const struct hs_view *v);

#endif
