/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: the one command-line parser of every command
 * (getopt_long underneath). A command lists its options in tables; the
 * parser builds getopt's strings from them, answers --help from them (one
 * line per option, so the help cannot disagree with the code), and says
 * what is wrong with a bad option, followed by the usage (exit status 2).
 */
#ifndef HOTSTACK_OPTIONS_H
#define HOTSTACK_OPTIONS_H

#include <stdio.h>

/* Exit status for a usage error, as perf and getopt users expect. */
#define HS_EXIT_USAGE 2

/* Ids of options without a short letter start here. */
#define HS_OPT_LONG 256

/* One option: getopt_long's facts and its line in --help. */
struct hs_option {
	int id;			/* the short option letter, or HS_OPT_LONG + n */
	const char *name;	/* the long name, or NULL */
	const char *arg;	/* the value's name in the help; NULL: takes none */
	const char *help;	/* what it does, one line */
};

/* The end of a table of options. */
#define HS_OPTION_END { 0, NULL, NULL, NULL }

/* What hs_args_next() returns besides an option's id. */
enum {
	HS_ARGS_END = -1,	/* no more options: the operands follow (hs_args_rest()) */
	HS_ARGS_EXIT = -2,	/* --help was printed (status 0), or an error (status 2) */
};

struct option;

/* A command's command line being parsed. */
struct hs_args {
	const char *cmd;		/* "record" */
	const char *synopsis;		/* after "usage: hotstack record " */
	const char *summary;		/* what the command does, one line */
	const struct hs_option *const *tables;	/* NULL-terminated */
	int argc;
	char **argv;
	int status;			/* after HS_ARGS_EXIT: the exit status */
	const struct hs_option **all;	/* every option, --help last; NULL-terminated */
	struct option *longopts;
	char shortopts[128];
};

/*
 * Start parsing @argc/@argv (argv[0] is the command's name) with the
 * options of @tables. @in_order: options end at the first operand (record's
 * command and its own options follow). 0, or -ENOMEM.
 */
int hs_args_init(struct hs_args *a, const char *cmd, const char *synopsis, const char *summary,
		 const struct hs_option *const *tables, int in_order, int argc, char **argv);

/*
 * The next option's id, its value in *@value (NULL without one), or
 * HS_ARGS_END, or HS_ARGS_EXIT (help printed, or an unknown option or a
 * missing value explained: a->status says which).
 */
int hs_args_next(struct hs_args *a, char **value);

/* The operands after the options: their number, and the first in *@rest. */
int hs_args_rest(const struct hs_args *a, char ***rest);

/* For a command that takes none: 0, or HS_EXIT_USAGE after naming the first operand. */
int hs_args_no_operands(struct hs_args *a);

/*
 * Print "hotstack CMD: " and @fmt, then the usage line and where the help
 * is, on standard error. Returns HS_EXIT_USAGE (and sets a->status).
 */
int hs_args_error(struct hs_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The command's help: usage, summary, one line per option. */
void hs_args_help(const struct hs_args *a, FILE *f);

void hs_args_free(struct hs_args *a);

/*
 * @s as a whole number in [@min, @max]: digits only (no sign, no space).
 * 0, or -1 when it is not one.
 */
int hs_parse_u64(const char *s, unsigned long long min, unsigned long long max,
		 unsigned long long *out);

/* @s as a finite number of seconds in [@min, @max]; 0 or -1. */
int hs_parse_seconds(const char *s, double min, double max, double *out);

#endif
