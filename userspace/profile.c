// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: a profile in memory (folded stacks). The profile owns
 * the text of its lines one way: all of it in its arena (p->text).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/hotstack.h>

#include "cgroup.h"
#include "maps.h"
#include "profile.h"
#include "table.h"

/* The pid of a "[pid N]" frame @s[0..len), or 0 when it is not one. */
static uint32_t hs_pid_key(const char *s, size_t len)
{
	uint32_t pid = 0;
	size_t i;

	if (len < 7 || memcmp(s, "[pid ", 5) || s[len - 1] != ']')
		return 0;
	for (i = 5; i < len - 1; i++) {
		if (s[i] < '0' || s[i] > '9' || pid > 429496729)
			return 0;
		pid = pid * 10 + (s[i] - '0');
	}
	return pid;
}

/* Whether @s[0..len) is a cgroup key, "[cgroup PATH]". */
static int hs_is_cgroup(const char *s, size_t len)
{
	size_t n = sizeof(HS_CGROUP_KEY) - 1;

	return len > n + 1 && !memcmp(s, HS_CGROUP_KEY, n) && s[len - 1] == ']';
}

/* Whether @s[0..len) is a context key. */
static int hs_is_context(const char *s, size_t len)
{
	size_t i;

	for (i = 1; i < HS_NR_CONTEXTS; i++)
		if (strlen(hs_context_names[i]) == len && !memcmp(hs_context_names[i], s, len))
			return 1;
	return 0;
}

void hs_line_keys(const struct hs_profile *p, const struct hs_stack_line *l,
		  struct hs_line_keys *k)
{
	const char *s = l->stack, *end = s + l->len, *e = hs_next_frame_end(s, end), *n;

	memset(k, 0, sizeof(*k));
	k->frames = s;
	/* Lost samples have no process: "[dropped];[REASON]" has no keys. */
	if (e == end || hs_is_drop_stack(s))
		return;
	n = hs_next_frame_end(e + 1, end);
	/* A process name: "[pid N]" or "[cgroup PATH]" after it, or the keys say so. */
	if (((p->keys & HOTSTACK_KEY_COMM) || hs_pid_key(e + 1, n - e - 1) ||
	     hs_is_cgroup(e + 1, n - e - 1)) && (s[0] != '[' || (p->keys & HOTSTACK_KEY_COMM))) {
		k->comm = s;
		k->comm_len = e - s;
		s = e + 1;
		e = n;
	}
	k->pid = hs_pid_key(s, e - s);
	if (k->pid) {
		if (e == end) {
			k->frames = end;
			return;
		}
		s = e + 1;
		e = hs_next_frame_end(s, end);
	}
	if (hs_is_cgroup(s, e - s)) {
		k->cgroup = s + sizeof(HS_CGROUP_KEY) - 1;
		k->cgroup_len = e - 1 - k->cgroup;
		if (e == end) {
			k->frames = end;
			return;
		}
		s = e + 1;
		e = hs_next_frame_end(s, end);
	}
	if (hs_is_context(s, e - s)) {
		k->context = s;
		k->context_len = e - s;
		s = e == end ? end : e + 1;
	}
	k->frames = s;
}

int hs_profile_reserve(struct hs_profile *p, size_t lines)
{
	struct hs_stack_line *l;

	if (p->nr + lines > p->cap) {
		l = realloc(p->lines, (p->nr + lines) * sizeof(*l));
		if (!l)
			return -ENOMEM;
		p->lines = l;
		p->cap = p->nr + lines;
	}
	return hs_strtab_reserve(&p->stacks, p->nr + lines);
}

/* The markers of a stack: [truncated] (cut at the depth cap), [collapsed N] (recursion). */
static unsigned int hs_markers_of(const char *s, size_t len)
{
	const char *end = s + len;
	unsigned int m = 0;

	/* One pass over the brackets (keys, modules, markers), not one a marker. */
	while ((s = memchr(s, '[', end - s))) {
		if (end - s >= 11 && !memcmp(s, "[truncated]", 11))
			m |= HS_MARK_TRUNCATED;
		else if (end - s >= 11 && !memcmp(s, "[collapsed ", 11))
			m |= HS_MARK_COLLAPSED;
		s++;
	}
	return m;
}

int hs_profile_add_marked(struct hs_profile *p, const char *stack, size_t len, uint64_t count,
			  unsigned int markers)
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
	if (markers & HS_MARK_TRUNCATED)
		p->truncated += count;
	if (markers & HS_MARK_COLLAPSED)
		p->collapsed += count;
	return 0;
}

int hs_profile_add_owned(struct hs_profile *p, const char *stack, size_t len, uint64_t count)
{
	return hs_profile_add_marked(p, stack, len, count, hs_markers_of(stack, len));
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

/* HOTSTACK_KEY_* of a list "comm,pid,cgroup,context" (what is not a key is left out). */
static uint32_t hs_keys_of(const char *s)
{
	uint32_t keys = 0;

	keys |= strstr(s, "comm") ? HOTSTACK_KEY_COMM : 0;
	keys |= strstr(s, "pid") ? HOTSTACK_KEY_TGID : 0;
	keys |= strstr(s, "context") ? HOTSTACK_KEY_CONTEXT : 0;
	keys |= strstr(s, "cgroup") ? HOTSTACK_KEY_CGROUP : 0;
	return keys;
}

/*
 * Parse @buf in place (see hs_profile_parse()): 0, or -errno with the
 * line's number in *@line and what is wrong with it in @why.
 */
static int hs_parse_folded(struct hs_profile *p, char *buf, size_t len, size_t *line,
			   char *why, size_t whylen)
{
	char *s = buf, *end = buf + len, *e, *le, *sp, *c, q[32];
	uint64_t count;
	int ret;

	for (*line = 1; s < end; s = e + 1, (*line)++) {
		e = memchr(s, '\n', end - s);
		if (!e)
			e = end;
		*e = '\0';
		le = e > s && e[-1] == '\r' ? e - 1 : e;
		*le = '\0';
		if (*s == '#' && !strncmp(s, HS_KEYS_COMMENT, sizeof(HS_KEYS_COMMENT) - 1))
			p->keys |= hs_keys_of(s + sizeof(HS_KEYS_COMMENT) - 1);
		if (!*s || *s == '#')
			continue;
		/* The count is at the end: look for its space from there. */
		for (sp = le; sp > s && sp[-1] != ' '; sp--)
			;
		sp = sp > s ? sp - 1 : NULL;
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

/* The lines of @buf: a count to make room for them at once. */
static size_t hs_count_lines(const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len;
	size_t n = 1;

	while ((s = memchr(s, '\n', end - s))) {
		n++;
		s++;
	}
	return n;
}

int hs_profile_parse_buf(struct hs_profile *p, char *buf, size_t len, const char *name,
			 char *err, size_t errlen)
{
	char why[128];
	size_t line;
	int ret;

	if (hs_profile_reserve(p, hs_count_lines(buf, len))) {
		free(buf);
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
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

void hs_fns_init(struct hs_fns *f)
{
	memset(f, 0, sizeof(*f));
	hs_strtab_init(&f->names, 1);
}

void hs_fns_free(struct hs_fns *f)
{
	free(f->fn);
	free(f->seen);
	hs_strtab_free(&f->names);
	memset(f, 0, sizeof(*f));
}

/* The function named @s[0..len), added when new; NULL without memory. */
static struct hs_fn *hs_fn_of(struct hs_fns *f, const char *s, size_t len)
{
	long id = hs_strtab_add(&f->names, s, len);

	if (id < 0)
		return NULL;
	if ((size_t)id == f->nr) {
		if (f->nr == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 1024;
			struct hs_fn *fn = realloc(f->fn, cap * sizeof(*fn));
			uint64_t *seen = realloc(f->seen, cap * sizeof(*seen));

			if (fn)
				f->fn = fn;
			if (seen)
				f->seen = seen;
			if (!fn || !seen)
				return NULL;
			f->cap = cap;
		}
		memset(&f->fn[id], 0, sizeof(f->fn[id]));
		f->fn[id].name = f->names.str[id].s;
		f->seen[id] = 0;
		f->nr++;
	}
	return &f->fn[id];
}


int hs_fns_add(struct hs_fns *f, const struct hs_profile *p, int col)
{
	struct hs_line_keys k;
	struct hs_fn *fn = NULL;
	uint64_t stamp;
	size_t i;

	for (i = 0; i < p->nr; i++) {
		const char *end = p->lines[i].stack + p->lines[i].len, *s, *e;
		uint64_t count = p->lines[i].count;

		/* The keys are not functions, nor are markers ("[...]"). */
		hs_line_keys(p, &p->lines[i], &k);
		/* A stamp no earlier stack of any call has: recursion counts once. */
		stamp = ((uint64_t)col << 62 | i) + 1;
		fn = NULL;
		for (s = k.frames; s < end; s = e + 1) {
			e = hs_next_frame_end(s, end);
			fn = NULL;
			if (e > s && s[0] != '[') {
				fn = hs_fn_of(f, s, e - s);
				if (!fn)
					return -ENOMEM;
				if (f->seen[fn - f->fn] != stamp) {
					f->seen[fn - f->fn] = stamp;
					fn->total[col] += count;
				}
			}
			if (e == end)
				break;
		}
		/* The leaf has the self count, if it is a function (not "[user]"). */
		if (fn)
			fn->self[col] += count;
	}
	return 0;
}

const char *hs_frame_module(const struct hs_profile *p, const char *frame, size_t len,
			    size_t *mod_len)
{
	const char *mod, *base;
	size_t flen;
	long m;

	mod = hs_module_of_frame(frame, len, &flen);
	if (mod) {
		*mod_len = flen - 2;
		return mod + 1;		/* "[ext4]" -> "ext4" */
	}
	m = hs_maps_find_frame(p->maps, frame, len);
	if (m >= 0) {
		base = strrchr(p->maps->map[m].file, '/');
		base = base ? base + 1 : p->maps->map[m].file;
		*mod_len = strlen(base);
		return base;
	}
	if (len > 2 && !memcmp(frame, "0x", 2)) {
		*mod_len = 6;
		return "[user]";
	}
	*mod_len = sizeof(HS_KERNEL_MAPPING) - 1;
	return HS_KERNEL_MAPPING;
}

/* Append @s[0..len) (and two spaces before it, but at the start) to @buf. */
static int hs_name_put(char **buf, size_t *n, size_t *cap, const char *s, size_t len)
{
	size_t need = *n + len + 3;
	char *b;

	if (need > *cap) {
		b = realloc(*buf, need * 2);
		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = need * 2;
	}
	if (*n) {
		memcpy(*buf + *n, "  ", 2);
		*n += 2;
	}
	memcpy(*buf + *n, s, len);
	*n += len;
	return 0;
}

/* A row's name: the line's keys, and @frame's (NULL: no frame key) value of the frame keys. */
static int hs_row_name(const struct hs_profile *p, const struct hs_line_keys *k, const int *sort,
		       int nr, const char *frame, size_t flen, char **buf, size_t *n, size_t *cap)
{
	struct hs_cgroup_info info;
	const char *s;
	char pid[24];
	size_t len;
	int i, ret = 0;

	*n = 0;
	for (i = 0; i < nr && !ret; i++) {
		switch (sort[i]) {
		case HS_SORT_SYM:
			s = frame;
			len = flen;
			break;
		case HS_SORT_MODULE:
			s = hs_frame_module(p, frame, flen, &len);
			break;
		case HS_SORT_COMM:
			s = k->comm ?: "-";
			len = k->comm ? k->comm_len : 1;
			break;
		case HS_SORT_PID:
			len = k->pid ? (size_t)snprintf(pid, sizeof(pid), "[pid %u]", k->pid) : 1;
			s = k->pid ? pid : "-";
			break;
		case HS_SORT_CGROUP:
			s = k->cgroup ?: "-";
			len = k->cgroup ? k->cgroup_len : 1;
			break;
		case HS_SORT_CONTAINER:
			/* Its id as docker ps shows it: 12 digits. */
			if (k->cgroup)
				hs_cgroup_parse(k->cgroup, k->cgroup_len, &info);
			s = k->cgroup && info.container_id[0] ? info.container_id : "-";
			len = s[0] == '-' ? 1 : 12;
			break;
		default:
			s = k->context ?: "-";
			len = k->context ? k->context_len : 1;
		}
		ret = hs_name_put(buf, n, cap, s, len);
	}
	return ret;
}

int hs_fns_add_keyed(struct hs_fns *f, const struct hs_profile *p, int col, const int *sort,
		     int nr)
{
	size_t i, n = 0, cap = 0;
	struct hs_line_keys k;
	struct hs_fn *fn;
	char *buf = NULL;
	uint64_t stamp;
	int j, frames = 0, ret = 0;

	if (nr == 1 && sort[0] == HS_SORT_SYM)
		return hs_fns_add(f, p, col);
	for (j = 0; j < nr; j++)
		frames |= sort[j] == HS_SORT_SYM || sort[j] == HS_SORT_MODULE;
	for (i = 0; i < p->nr && !ret; i++) {
		const char *end = p->lines[i].stack + p->lines[i].len, *s, *e;
		uint64_t count = p->lines[i].count;

		hs_line_keys(p, &p->lines[i], &k);
		if (hs_is_drop_stack(p->lines[i].stack))
			continue;	/* lost samples: no process, no frame */
		if (!frames) {
			ret = hs_row_name(p, &k, sort, nr, NULL, 0, &buf, &n, &cap);
			fn = ret ? NULL : hs_fn_of(f, buf, n);
			if (!fn)
				ret = -ENOMEM;
			else {
				fn->self[col] += count;
				fn->total[col] += count;
			}
			continue;
		}
		stamp = ((uint64_t)col << 62 | i) + 1;
		fn = NULL;
		for (s = k.frames; s < end && !ret; s = e + 1) {
			e = hs_next_frame_end(s, end);
			fn = NULL;
			if (e > s && s[0] != '[') {
				ret = hs_row_name(p, &k, sort, nr, s, e - s, &buf, &n, &cap);
				fn = ret ? NULL : hs_fn_of(f, buf, n);
				if (!fn) {
					ret = -ENOMEM;
					break;
				}
				if (f->seen[fn - f->fn] != stamp) {
					f->seen[fn - f->fn] = stamp;
					fn->total[col] += count;
				}
			}
			if (e == end)
				break;
		}
		if (fn && !ret)
			fn->self[col] += count;
	}
	free(buf);
	return ret;
}

const char *hs_profile_ns_type(const struct hs_profile *p)
{
	if (p->event && !strcmp(p->event, "off-cpu"))
		return "off_cpu";
	return p->event && !strcmp(p->event, "wall") ? "wall" : NULL;
}

int hs_profile_ns(const struct hs_profile *p)
{
	return !!hs_profile_ns_type(p);
}
