// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: a profile in memory (folded stacks) and its writers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "profile.h"

int hs_profile_add(struct hs_profile *p, const char *stack, size_t len, uint64_t count)
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
	l = &p->lines[p->nr];
	l->stack = strndup(stack, len);
	if (!l->stack)
		return -ENOMEM;
	l->count = count;
	p->nr++;
	p->total += count;
	if (!strncmp(stack, HS_DROPPED_FRAME ";", strlen(HS_DROPPED_FRAME) + 1))
		p->dropped += count;
	if (memmem(stack, len, "[truncated]", 11))
		p->truncated += count;
	if (memmem(stack, len, "[collapsed ", 11))
		p->collapsed += count;
	return 0;
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
	uintptr_t text = (uintptr_t)p->text;
	size_t i;

	for (i = 0; i < p->nr; i++)
		if ((uintptr_t)p->lines[i].stack - text >= p->text_size)
			free(p->lines[i].stack);
	free(p->text);
	free(p->lines);
	hs_maps_free(p->maps);
	memset(p, 0, sizeof(*p));
}

int hs_write_folded(FILE *f, const struct hs_profile *p)
{
	char num[24], *d;
	uint64_t n;
	size_t i;

	/* Not fprintf(): with 10^6 lines its parsing took longer than the copying. */
	flockfile(f);
	for (i = 0; i < p->nr; i++) {
		d = num + sizeof(num);
		*--d = '\n';
		n = p->lines[i].count;
		do
			*--d = '0' + n % 10;
		while (n /= 10);
		*--d = ' ';
		fputs_unlocked(p->lines[i].stack, f);
		fwrite_unlocked(d, 1, num + sizeof(num) - d, f);
	}
	funlockfile(f);
	return ferror(f) ? -EIO : 0;
}

static int hs_fn_cmp_self(const void *a, const void *b)
{
	const struct hs_fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int hs_fn_cmp_total(const void *a, const void *b)
{
	const struct hs_fn *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
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

static void hs_print_top(FILE *f, struct hs_fn *fns, size_t nr, uint64_t total,
			 unsigned int top, int by_self)
{
	size_t i, shown = 0;

	qsort(fns, nr, sizeof(*fns), by_self ? hs_fn_cmp_self : hs_fn_cmp_total);
	fprintf(f, "\n# %s\n#   %%self  %%total      samples  function\n",
		by_self ? "by self (the function was running)" :
			  "by total (the function was on the stack)");
	for (i = 0; i < nr && shown < top; i++) {
		uint64_t n = by_self ? fns[i].self : fns[i].total;

		if (!n)
			continue;
		fprintf(f, "  %6.2f%% %6.2f%% %12llu  %s\n", 100.0 * fns[i].self / total,
			100.0 * fns[i].total / total, (unsigned long long)n, fns[i].name);
		shown++;
	}
}

int hs_write_report(FILE *f, const struct hs_profile *p, unsigned int top)
{
	uint64_t counted = p->total - p->dropped;
	struct hs_fn *fns;
	size_t nr = 0, i;

	fprintf(f, "# hotstack report\n");
	if (p->event)
		fprintf(f, "# event: %s, %s, %.1f s\n", p->event, p->rate, p->seconds);
	fprintf(f, "# samples: %llu, counted: %llu, dropped: %llu\n",
		(unsigned long long)p->total, (unsigned long long)counted,
		(unsigned long long)p->dropped);
	for (i = 0; i < p->nr; i++)
		if (!strncmp(p->lines[i].stack, HS_DROPPED_FRAME ";", strlen(HS_DROPPED_FRAME) + 1))
			fprintf(f, "#   dropped, %s: %llu\n",
				p->lines[i].stack + strlen(HS_DROPPED_FRAME) + 1,
				(unsigned long long)p->lines[i].count);
	if (p->filtered)
		fprintf(f, "# filtered out (other processes, idle; not in the samples): %llu\n",
			(unsigned long long)p->filtered);
	fprintf(f, "# truncated stacks (deeper than --max-depth): %llu samples\n",
		(unsigned long long)p->truncated);
	fprintf(f, "# collapsed recursion: %llu samples\n", (unsigned long long)p->collapsed);
	fprintf(f, "# distinct stacks: %zu\n", p->nr);
	if (!counted)
		return ferror(f) ? -EIO : 0;
	fns = hs_functions(p, &nr);
	if (!fns)
		return -ENOMEM;
	hs_print_top(f, fns, nr, counted, top, 1);
	hs_print_top(f, fns, nr, counted, top, 0);
	hs_fns_free(fns, nr);
	return ferror(f) ? -EIO : 0;
}

static void hs_json_str(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int hs_write_json(FILE *f, const struct hs_profile *p)
{
	size_t i;

	fprintf(f, "{\n  \"event\": ");
	if (p->event)
		hs_json_str(f, p->event, strlen(p->event));
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"rate\": ");
	hs_json_str(f, p->rate, strlen(p->rate));
	fprintf(f, ",\n  \"seconds\": %.3f,\n  \"samples\": %llu,\n  \"dropped\": %llu,\n"
		"  \"filtered\": %llu,\n  \"truncated\": %llu,\n  \"collapsed\": %llu,\n"
		"  \"stacks\": [",
		p->seconds, (unsigned long long)p->total, (unsigned long long)p->dropped,
		(unsigned long long)p->filtered, (unsigned long long)p->truncated,
		(unsigned long long)p->collapsed);
	for (i = 0; i < p->nr; i++) {
		const char *s = p->lines[i].stack, *e;

		fprintf(f, "%s\n    {\"count\": %llu, \"frames\": [", i ? "," : "",
			(unsigned long long)p->lines[i].count);
		for (; ; s = e + 1) {
			e = strchrnul(s, ';');
			hs_json_str(f, s, e - s);
			if (!*e)
				break;
			fputc(',', f);
			fputc(' ', f);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
	return ferror(f) ? -EIO : 0;
}
