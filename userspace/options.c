// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: the command-line parser of every command (options.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* The help option every command has. */
static const struct hs_option hs_help_option = { 'h', "help", NULL, "print this help and exit" };

int hs_args_init(struct hs_args *a, const char *cmd, const char *synopsis, const char *summary,
		 const struct hs_option *const *tables, int in_order, int argc, char **argv)
{
	const struct hs_option *o;
	size_t n = 0, s = 0, i;
	int t;

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->synopsis = synopsis;
	a->summary = summary;
	a->tables = tables;
	a->argc = argc;
	a->argv = argv;
	/* Every option of the tables, then --help. */
	for (t = 0; tables[t]; t++)
		for (o = tables[t]; o->id; o++)
			n++;
	a->all = calloc(n + 2, sizeof(*a->all));
	a->longopts = calloc(n + 2, sizeof(*a->longopts));
	if (!a->all || !a->longopts) {
		hs_args_free(a);
		return -ENOMEM;
	}
	for (t = 0, n = 0; tables[t]; t++)
		for (o = tables[t]; o->id; o++)
			a->all[n++] = o;
	a->all[n] = &hs_help_option;
	/* "+": stop at the first operand; ":": report a missing value as ':'. */
	if (in_order)
		a->shortopts[s++] = '+';
	a->shortopts[s++] = ':';
	for (i = 0, n = 0; a->all[i]; i++) {
		o = a->all[i];
		if (o->name) {
			a->longopts[n].name = o->name;
			a->longopts[n].has_arg = o->arg ? required_argument : no_argument;
			a->longopts[n].val = o->id;
			n++;
		}
		if (o->id < HS_OPT_LONG && s + 3 < sizeof(a->shortopts)) {
			a->shortopts[s++] = o->id;
			if (o->arg)
				a->shortopts[s++] = ':';
		}
	}
	/* 0, not 1: glibc starts over (a unit test parses many command lines). */
	optind = 0;
	opterr = 0;
	return 0;
}

void hs_args_free(struct hs_args *a)
{
	free(a->all);
	free(a->longopts);
	a->all = NULL;
	a->longopts = NULL;
}

static void hs_args_usage(const struct hs_args *a, FILE *f)
{
	fprintf(f, "usage: hotstack %s%s%s\n", a->cmd, a->synopsis[0] ? " " : "", a->synopsis);
}

int hs_args_error(struct hs_args *a, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hotstack %s: ", a->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	hs_args_usage(a, stderr);
	fprintf(stderr, "(hotstack %s --help lists the options)\n", a->cmd);
	a->status = HS_EXIT_USAGE;
	return HS_EXIT_USAGE;
}

/* An option's left column: "-e, --event EVENT". */
static void hs_option_left(const struct hs_option *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->id < HS_OPT_LONG)
		n += snprintf(buf + n, len - n, "-%c%s", o->id, o->name ? ", " : "");
	else
		n += snprintf(buf + n, len - n, "    ");
	if (o->name && n < len)
		n += snprintf(buf + n, len - n, "--%s", o->name);
	if (o->arg && n < len)
		snprintf(buf + n, len - n, " %s", o->arg);
}

void hs_args_help(const struct hs_args *a, FILE *f)
{
	char left[64];
	size_t i;
	int w = 0;

	hs_args_usage(a, f);
	fprintf(f, "%s\n\n", a->summary);
	for (i = 0; a->all[i]; i++) {
		hs_option_left(a->all[i], left, sizeof(left));
		if ((int)strlen(left) > w)
			w = strlen(left);
	}
	for (i = 0; a->all[i]; i++) {
		hs_option_left(a->all[i], left, sizeof(left));
		fprintf(f, "  %-*s  %s\n", w, left, a->all[i]->help);
	}
}

/* The option as the user spelled it, for a message. */
static const char *hs_args_spelled(const struct hs_args *a)
{
	static char buf[8];
	const char *s = optind > 0 && optind <= a->argc ? a->argv[optind - 1] : "";

	/* A short option in a cluster ("-bx"): name the letter. */
	if (s[0] == '-' && s[1] != '-' && optopt && optopt < HS_OPT_LONG && s[1] != optopt) {
		snprintf(buf, sizeof(buf), "-%c", optopt);
		return buf;
	}
	return s;
}

int hs_args_next(struct hs_args *a, char **value)
{
	int c;

	optopt = 0;
	c = getopt_long(a->argc, a->argv, a->shortopts, a->longopts, NULL);
	*value = optarg;
	switch (c) {
	case -1:
		return HS_ARGS_END;
	case 'h':
		hs_args_help(a, stdout);
		a->status = 0;
		return HS_ARGS_EXIT;
	case ':':
		hs_args_error(a, "option '%s' needs a value", hs_args_spelled(a));
		return HS_ARGS_EXIT;
	case '?':
		hs_args_error(a, "unknown option '%s'", hs_args_spelled(a));
		return HS_ARGS_EXIT;
	default:
		return c;
	}
}

int hs_args_rest(const struct hs_args *a, char ***rest)
{
	*rest = a->argv + optind;
	return a->argc - optind;
}

int hs_args_no_operands(struct hs_args *a)
{
	char **rest;

	if (!hs_args_rest(a, &rest))
		return 0;
	return hs_args_error(a, "unexpected argument '%s'", rest[0]);
}

int hs_parse_u64(const char *s, unsigned long long min, unsigned long long max,
		 unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;	/* strtoull() takes a sign and spaces */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int hs_parse_seconds(const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
