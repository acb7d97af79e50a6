// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: a profile in memory (folded stacks). The profile owns
 * the text of its lines one way: all of it in its arena (p->text).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "profile.h"

int hs_profile_add_owned(struct hs_profile *p, const char *stack, size_t len, uint64_t count)
{
	struct hs_stack_line *l;
	long id;

	if (count > UINT64_MAX - p->total)
		return -EOVERFLOW;
	/* Room for a new line first: a stack in the table has its line. */
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;

		l = realloc(p->lines, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		p->lines = l;
		p->cap = cap;
	}
	id = hs_strtab_add(&p->stacks, stack, len);
	if (id < 0)
		return -ENOMEM;
	l = &p->lines[id];
	if ((size_t)id == p->nr) {
		l->stack = stack;
		l->len = len;
		l->count = 0;
		p->nr++;
	}
	l->count += count;
	p->total += count;
	if (hs_is_drop_stack(stack))
		p->dropped += count;
	if (memmem(stack, len, "[truncated]", 11))
		p->truncated += count;
	if (memmem(stack, len, "[collapsed ", 11))
		p->collapsed += count;
	return 0;
}

int hs_profile_add(struct hs_profile *p, const char *stack, size_t len, uint64_t count)
{
	long id = hs_strtab_find(&p->stacks, stack, len);
	char *s;

	if (id >= 0)	/* no copy of a text the profile has */
		return hs_profile_add_owned(p, p->lines[id].stack, len, count);
	s = hs_arena_strndup(&p->text, stack, len);
	return s ? hs_profile_add_owned(p, s, len, count) : -ENOMEM;
}

/* @s[0..len) for a message: at most 24 bytes, what is not printable as '?'. */
static void hs_quote(char *out, size_t size, const char *s, size_t len)
{
	size_t i, n = len < 24 ? len : 24;

	for (i = 0; i < n && i + 4 < size; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (n < len && i + 4 < size) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

/*
 * Parse @buf in place (see hs_profile_parse()): 0, or -errno with the
 * line's number in *@line and what is wrong with it in @why.
 */
static int hs_parse_folded(struct hs_profile *p, char *buf, size_t len, size_t *line,
			   char *why, size_t whylen)
{
	char *s = buf, *end = buf + len, *e, *sp, *c, q[32];
	uint64_t count;
	int ret;

	for (*line = 1; s < end; s = e + 1, (*line)++) {
		e = memchr(s, '\n', end - s);
		if (!e)
			e = end;
		*e = '\0';
		if (e > s && e[-1] == '\r')
			e[-1] = '\0';
		if (!*s || *s == '#')
			continue;
		sp = strrchr(s, ' ');
		if (!sp || sp == s) {
			hs_quote(q, sizeof(q), s, strlen(s));
			snprintf(why, whylen, "'%s' is not a folded stack (\"frame;...;frame COUNT\")",
				 q);
			return -EBADMSG;
		}
		*sp = '\0';
		count = 0;
		for (c = sp + 1; *c >= '0' && *c <= '9'; c++) {
			if (count > (UINT64_MAX - (*c - '0')) / 10)
				break;
			count = count * 10 + (*c - '0');
		}
		if (*c || c == sp + 1) {
			hs_quote(q, sizeof(q), sp + 1, strlen(sp + 1));
			if (*c >= '0' && *c <= '9')
				snprintf(why, whylen, "the count %s is more than 2^64 - 1", q);
			else
				snprintf(why, whylen, "the count '%s' is not a whole number of samples%s",
					 q, sp[1] == '-' ? " (it is negative)" : "");
			return -EBADMSG;
		}
		ret = hs_profile_add_owned(p, s, sp - s, count);
		if (ret == -EOVERFLOW)
			snprintf(why, whylen, "the counts add up to more than 2^64 - 1 samples");
		else if (ret)
			snprintf(why, whylen, "%s", strerror(-ret));
		if (ret)
			return ret;
	}
	return 0;
}

int hs_profile_parse_buf(struct hs_profile *p, char *buf, size_t len, const char *name,
			 char *err, size_t errlen)
{
	char why[128];
	size_t line;
	int ret;

	if (hs_arena_adopt(&p->text, buf)) {
		free(buf);
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = hs_parse_folded(p, buf, len, &line, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "%s:%zu: %s", name, line, why);
	return ret;
}

int hs_profile_parse(struct hs_profile *p, const char *text, size_t *bad_line)
{
	size_t len = strlen(text), line;
	char *buf = hs_arena_strndup(&p->text, text, len), why[128];
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = hs_parse_folded(p, buf, len, &line, why, sizeof(why));
	if (bad_line)
		*bad_line = ret ? line : 0;
	return ret;
}

void hs_profile_free(struct hs_profile *p)
{
	hs_arena_free(&p->text);
	hs_strtab_free(&p->stacks);
	free(p->lines);
	hs_maps_free(p->maps);
	memset(p, 0, sizeof(*p));
}

static int hs_fn_cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct hs_fn *)a)->name, ((const struct hs_fn *)b)->name);
}

/* Markers and keys are not functions: "[...]" frames, comm and pid keys aside. */
static int hs_is_function(const char *frame)
{
	return frame[0] != '[';
}

/*
 * Every function of the profile with its self and total counts. Frames are
 * split on ';'; a function recurring in one stack counts once in total.
 */
struct hs_fn *hs_functions(const struct hs_profile *p, size_t *nr)
{
	struct hs_fn *all = NULL, *fns;
	size_t n = 0, cap = 0, i, out;

	for (i = 0; i < p->nr; i++) {
		const char *last = strrchr(p->lines[i].stack, ';');
		char *copy = strdup(p->lines[i].stack), *save, *frame;
		size_t first = n;

		if (!copy)
			goto out_nomem;
		for (frame = strtok_r(copy, ";", &save); frame; frame = strtok_r(NULL, ";", &save)) {
			if (!hs_is_function(frame))
				continue;
			if (n == cap) {
				struct hs_fn *grown;

				cap = cap ? cap * 2 : 1024;
				grown = realloc(all, cap * sizeof(*all));
				if (!grown) {
					free(copy);
					goto out_nomem;
				}
				all = grown;
			}
			all[n].name = strdup(frame);
			if (!all[n].name) {
				free(copy);
				goto out_nomem;
			}
			all[n].self = 0;
			all[n].total = p->lines[i].count;
			n++;
		}
		/* The leaf has the self count, if it is a function (not "[user]"). */
		last = last ? last + 1 : p->lines[i].stack;
		if (n > first && hs_is_function(last))
			all[n - 1].self = p->lines[i].count;
		/* A function twice in one stack (recursion) counts once in total. */
		for (size_t a = first; a < n; a++)
			for (size_t b = first; b < a; b++)
				if (all[b].total && !strcmp(all[a].name, all[b].name)) {
					all[b].self += all[a].self;
					all[a].total = 0;
					all[a].self = 0;
					break;
				}
		free(copy);
	}
	if (!n) {
		*nr = 0;
		return calloc(1, sizeof(*all));	/* none: not NULL, which means no memory */
	}
	qsort(all, n, sizeof(*all), hs_fn_cmp_name);
	fns = all;
	for (i = 0, out = 0; i < n; i++) {
		if (out && !strcmp(fns[out - 1].name, all[i].name)) {
			fns[out - 1].self += all[i].self;
			fns[out - 1].total += all[i].total;
			free(all[i].name);
		} else {
			fns[out++] = all[i];
		}
	}
	*nr = out;
	return fns;

out_nomem:
	for (i = 0; i < n; i++)
		free(all[i].name);
	free(all);
	return NULL;
}

void hs_fns_free(struct hs_fn *fns, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(fns[i].name);
	free(fns);
}
