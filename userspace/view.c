// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: the view options, and the filters that apply to every output (view.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cgroup.h"
#include "maps.h"
#include "profile.h"
#include "view.h"

enum {
	O_COMM = HS_OPT_LONG + 100, O_PID, O_SYMBOL, O_MODULE, O_CGROUP, O_CONTAINER,
	O_SORT, O_ROWS = 'n', O_PERCENT = HS_OPT_LONG + 110, O_CHILDREN, O_NO_CHILDREN,
	O_GRAPH = 'g',
};

const struct hs_option hs_filter_options[] = {
	{ O_COMM, "comm", "NAMES", "only these processes' stacks (names, comma-separated)" },
	{ O_PID, "pid", "PIDS", "only these processes' stacks ([pid N] keys, comma-separated)" },
	{ O_SYMBOL, "symbol", "REGEX", "only stacks with a function matching REGEX (extended)" },
	{ O_MODULE, "module", "MODS", "only stacks with a frame of these modules (func [MOD])" },
	{ O_CONTAINER, "container", "IDS", "only these containers' stacks (ids or their "
	  "prefixes, comma-separated; record --keys cgroup)" },
	HS_OPTION_END,
};

const struct hs_option hs_cgroup_filter_options[] = {
	{ O_CGROUP, "cgroup", "PATHS", "only stacks of these cgroups and those below them "
	  "([cgroup PATH] keys, comma-separated; record --keys cgroup)" },
	HS_OPTION_END,
};

const struct hs_option hs_view_options[] = {
	{ O_SORT, "sort", "KEYS", "rows by sym (default), comm, pid, module, context, cgroup, "
	  "container, or a list of them: comm,sym" },
	{ O_ROWS, "rows", "N", "rows of each table and of the hottest stacks (default 20)" },
	{ O_PERCENT, "percent-limit", "PCT", "leave out rows under PCT percent" },
	{ O_CHILDREN, "children", NULL, "one table, by total (the function and its callees)" },
	{ O_NO_CHILDREN, "no-children", NULL, "one table, by self (the function itself)" },
	HS_OPTION_END,
};

const struct hs_option hs_graph_options[] = {
	{ O_GRAPH, "call-graph", "caller|callee", "under each function, what it calls (caller) "
	  "or who calls it (callee)" },
	HS_OPTION_END,
};

void hs_view_defaults(struct hs_view *v)
{
	memset(v, 0, sizeof(*v));
	v->sort[0] = HS_SORT_SYM;
	v->nr_sort = 1;
	v->rows = 20;
	v->children = HS_BOTH;
}

void hs_view_free(struct hs_view *v)
{
	free(v->filter.comm);
	free(v->filter.pid);
	free(v->filter.module);
	free(v->filter.cgroup);
	free(v->filter.container);
	if (v->filter.have_symbol)
		regfree(&v->filter.symbol);
	memset(&v->filter, 0, sizeof(v->filter));
}

int hs_filter_active(const struct hs_filter *f)
{
	return f->comm || f->pid || f->module || f->have_symbol || f->cgroup || f->container;
}

/* Whether @s[0..len) is one of the comma-separated @list. */
static int hs_in_list(const char *list, const char *s, size_t len)
{
	const char *e;

	for (;; list = e + 1) {
		e = strchrnul(list, ',');
		if ((size_t)(e - list) == len && !memcmp(list, s, len))
			return 1;
		if (!*e)
			return 0;
	}
}

/* Whether cgroup path @s[0..len) is one of @list's or below one of them. */
static int hs_under_list(const char *list, const char *s, size_t len)
{
	const char *e;
	size_t n;

	for (;; list = e + 1) {
		e = strchrnul(list, ',');
		n = e - list;
		/* "/" is every cgroup's; "/a" is "/a" and "/a/b", not "/ab". */
		while (n > 1 && list[n - 1] == '/')
			n--;
		if (n <= len && !memcmp(list, s, n) &&
		    (n == len || s[n] == '/' || (n == 1 && list[0] == '/')))
			return 1;
		if (!*e)
			return 0;
	}
}

/* Whether one of @list is a prefix of @id (docker's short ids). */
static int hs_prefix_in_list(const char *list, const char *id)
{
	const char *e;

	for (;; list = e + 1) {
		e = strchrnul(list, ',');
		if ((size_t)(e - list) <= strlen(id) && !strncasecmp(list, id, e - list))
			return 1;
		if (!*e)
			return 0;
	}
}

/* Note an option in the report's "# filter:" line. */
static void hs_filter_spell(struct hs_filter *f, const char *opt, const char *value)
{
	size_t n = strlen(f->spelled_buf);

	snprintf(f->spelled_buf + n, sizeof(f->spelled_buf) - n, "%s--%s %s", n ? " " : "", opt,
		 value);
	f->spelled = f->spelled_buf;
}

/* A comma-separated list, none of it empty. */
static int hs_list_ok(const char *s, int digits)
{
	const char *e;

	for (;; s = e + 1) {
		e = strchrnul(s, ',');
		if (e == s)
			return 0;
		for (const char *c = s; digits && c < e; c++)
			if (*c < '0' || *c > '9')
				return 0;
		if (!*e)
			return 1;
	}
}

int hs_sort_keys(struct hs_view *v, const char *s)
{
	static const char *const names[] = {
		[HS_SORT_SYM] = "sym", [HS_SORT_COMM] = "comm", [HS_SORT_PID] = "pid",
		[HS_SORT_MODULE] = "module", [HS_SORT_CONTEXT] = "context",
		[HS_SORT_CGROUP] = "cgroup", [HS_SORT_CONTAINER] = "container",
	};
	const char *e;
	int i, j;

	v->nr_sort = 0;
	for (;; s = e + 1) {
		e = strchrnul(s, ',');
		for (i = 0; i < HS_NR_SORT; i++)
			if (strlen(names[i]) == (size_t)(e - s) && !memcmp(names[i], s, e - s))
				break;
		if (i == HS_NR_SORT || v->nr_sort == HS_NR_SORT)
			return -1;
		for (j = 0; j < v->nr_sort; j++)
			if (v->sort[j] == i)
				return -1;	/* twice */
		v->sort[v->nr_sort++] = i;
		if (!*e)
			return 0;
	}
}

int hs_view_option(struct hs_args *a, struct hs_view *v, int id, const char *value)
{
	struct hs_filter *f = &v->filter;
	unsigned long long n;
	char err[256];
	int ret;

	switch (id) {
	case O_COMM:
	case O_PID:
	case O_MODULE:
	case O_CGROUP:
	case O_CONTAINER:
		{
			static const char *const opt[] = {
				[O_COMM - O_COMM] = "comm", [O_PID - O_COMM] = "pid",
				[O_MODULE - O_COMM] = "module", [O_CGROUP - O_COMM] = "cgroup",
				[O_CONTAINER - O_COMM] = "container",
			};
			char **slot = id == O_COMM ? &f->comm : id == O_PID ? &f->pid :
				      id == O_MODULE ? &f->module : id == O_CGROUP ? &f->cgroup :
				      &f->container;

			if (!hs_list_ok(value, id == O_PID))
				return hs_args_error(a, "--%s wants a comma-separated list%s, not '%s'",
						     opt[id - O_COMM],
						     id == O_PID ? " of process IDs" : "", value);
			free(*slot);
			*slot = strdup(value);
			if (!*slot)
				return hs_args_error(a, "%s", strerror(ENOMEM));
			hs_filter_spell(f, opt[id - O_COMM], value);
		}
		break;
	case O_SYMBOL:
		if (f->have_symbol)
			regfree(&f->symbol);
		f->have_symbol = 0;
		ret = regcomp(&f->symbol, value, REG_EXTENDED | REG_NOSUB);
		if (ret) {
			regerror(ret, &f->symbol, err, sizeof(err));
			return hs_args_error(a, "--symbol '%s' is not a regular expression: %s",
					     value, err);
		}
		f->have_symbol = 1;
		hs_filter_spell(f, "symbol", value);
		break;
	case O_SORT:
		if (hs_sort_keys(v, value))
			return hs_args_error(a, "--sort wants sym, comm, pid, module, context, cgroup "
					     "or container, or a list of them, each once, not '%s'",
					     value);
		break;
	case O_ROWS:
		if (hs_parse_u64(value, 1, 1000000, &n))
			return hs_args_error(a, "-n wants a number of rows, 1 or more, not '%s'",
					     value);
		v->rows = n;
		break;
	case O_PERCENT:
		if (hs_parse_seconds(value, 0, 100, &v->percent_limit))
			return hs_args_error(a, "--percent-limit wants a percentage, 0 to 100, "
					     "not '%s'", value);
		break;
	case O_CHILDREN:
		v->children = HS_CHILDREN;
		break;
	case O_NO_CHILDREN:
		v->children = HS_NO_CHILDREN;
		break;
	case O_GRAPH:
		if (!strcmp(value, "caller"))
			v->graph = HS_GRAPH_CALLER;
		else if (!strcmp(value, "callee"))
			v->graph = HS_GRAPH_CALLEE;
		else
			return hs_args_error(a, "-g wants caller or callee, not '%s'", value);
		break;
	default:
		return 1;
	}
	return 0;
}

/* ---- filters ------------------------------------------------------------ */

/* Each distinct function's --symbol match, found once. */
struct hs_symbol_cache {
	struct hs_strtab names;
	signed char *match;	/* 1 matches, 0 not */
	size_t cap;
	char *buf;		/* the name, NUL-terminated for regexec() */
	size_t buf_len;
};

static int hs_symbol_matches(struct hs_symbol_cache *c, const regex_t *re, const char *s,
			     size_t len)
{
	size_t nr = c->names.nr;
	long id = hs_strtab_add(&c->names, s, len);

	if (id < 0)
		return -ENOMEM;
	if ((size_t)id == nr) {
		if (nr == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 1024;
			signed char *m = realloc(c->match, cap);

			if (!m)
				return -ENOMEM;
			c->match = m;
			c->cap = cap;
		}
		c->match[id] = !regexec(re, c->names.str[id].s, 0, NULL, 0);
	}
	return c->match[id];
}

/* Whether line @l passes @f: 1, 0, or -ENOMEM. */
static int hs_line_passes(const struct hs_profile *p, const struct hs_stack_line *l,
			  const struct hs_filter *f, struct hs_symbol_cache *c)
{
	const char *end = l->stack + l->len, *s, *e, *mod;
	int sym = !f->have_symbol, module = !f->module, m;
	struct hs_line_keys k;
	char pid[16];
	size_t flen;

	if (hs_is_drop_stack(l->stack))
		return 0;	/* lost samples have no process, no stack */
	hs_line_keys(p, l, &k);
	if (f->comm && (!k.comm || !hs_in_list(f->comm, k.comm, k.comm_len)))
		return 0;
	if (f->pid) {
		if (!k.pid)
			return 0;
		snprintf(pid, sizeof(pid), "%u", k.pid);
		if (!hs_in_list(f->pid, pid, strlen(pid)))
			return 0;
	}
	if (f->cgroup && (!k.cgroup || !hs_under_list(f->cgroup, k.cgroup, k.cgroup_len)))
		return 0;
	if (f->container) {
		struct hs_cgroup_info info;

		if (!k.cgroup)
			return 0;
		hs_cgroup_parse(k.cgroup, k.cgroup_len, &info);
		if (!info.container_id[0] ||
		    !hs_prefix_in_list(f->container, info.container_id))
			return 0;
	}
	for (s = k.frames; s < end && !(sym && module); s = e + 1) {
		e = hs_next_frame_end(s, end);
		if (e == s || s[0] == '[')
			continue;
		if (!module) {
			mod = hs_module_of_frame(s, e - s, &flen);
			module = mod && hs_in_list(f->module, mod + 1, flen - 2);
		}
		if (!sym) {
			m = hs_symbol_matches(c, &f->symbol, s, e - s);
			if (m < 0)
				return m;
			sym = m;
		}
	}
	return sym && module;
}

int hs_profile_filter(struct hs_profile *p, const struct hs_filter *f)
{
	struct hs_symbol_cache c = { 0 };
	size_t i, out = 0;
	int ret = 0, keep;

	if (!hs_filter_active(f))
		return 0;
	hs_strtab_init(&c.names, 1);
	for (i = 0; i < p->nr; i++) {
		keep = hs_line_passes(p, &p->lines[i], f, &c);
		if (keep < 0) {
			ret = keep;
			break;
		}
		if (keep)
			p->lines[out++] = p->lines[i];
	}
	hs_strtab_free(&c.names);
	free(c.match);
	if (ret)
		return ret;
	/* The kept lines again, with their totals and their table. */
	hs_strtab_free(&p->stacks);
	p->total = p->dropped = p->truncated = p->collapsed = 0;
	i = out;
	p->nr = 0;
	for (out = 0; out < i && !ret; out++)
		ret = hs_profile_add_owned(p, p->lines[out].stack, p->lines[out].len,
					   p->lines[out].count);
	return ret;
}

