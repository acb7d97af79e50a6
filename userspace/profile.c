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

	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;

		l = realloc(p->lines, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		p->lines = l;
		p->cap = cap;
	}
	l = &p->lines[p->nr++];
	l->stack = stack;
	l->len = len;
	l->count = count;
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
	char *s = hs_arena_strndup(&p->text, stack, len);

	return s ? hs_profile_add_owned(p, s, len, count) : -ENOMEM;
}

int hs_profile_parse(struct hs_profile *p, const char *text, size_t *bad)
{
	const char *line = text, *end, *sp;
	char *num_end;
	uint64_t count;
	int ret;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		sp = end;
		while (sp > line && sp[-1] != ' ')
			sp--;
		if (sp == line || sp == end || sp - 1 == line) {
			if (bad && end > line)
				(*bad)++;
			continue;
		}
		errno = 0;
		count = strtoull(sp, &num_end, 10);
		if (errno || num_end != end) {
			if (bad)
				(*bad)++;
			continue;
		}
		ret = hs_profile_add(p, line, sp - 1 - line, count);
		if (ret)
			return ret;
	}
	return 0;
}

void hs_profile_free(struct hs_profile *p)
{
	hs_arena_free(&p->text);
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
