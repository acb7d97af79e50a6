// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: OpenTelemetry profiles (OTLP), written with protobuf-c
 * from opentelemetry-proto's profiles/v1development (1.11 or newer: the
 * signal's alpha, its dictionary with a stack table), compiled by protoc-c
 * at build time as profile.proto is. One ExportProfilesServiceRequest, as
 * OTLP/HTTP posts it to /v1development/profiles and as report -o
 * x.otlp.pb writes it.
 *
 * One ResourceProfiles (the caller's resource attributes: service.name,
 * host.name, container.id, ...), one ScopeProfiles (scope "hotstack"),
 * one Profile; or, for the agent's --group-by, one ResourceProfiles of
 * each group's resource and profile, as the spec lays out a host-wide
 * profiler's. Their tables in the request's one dictionary, shared, each
 * with the zero value first as the format wants. As in pprof (fmt_pprof.c): one
 * Function and one Location per distinct frame, mappings numbered alike
 * ([kernel.kallsyms] 1 with the kernel's build ID, [user] 2, the binaries
 * known), one Stack per distinct stack (its locations leaf first) and
 * one Sample per folded line, the line's keys as the sample's attributes
 * named by OpenTelemetry's semantic conventions (HS_OTLP_SCHEMA) where
 * they have a name: thread.name (the comm: the sampled thread's),
 * process.pid, process.linux.cgroup ("0::PATH", as /proc/PID/cgroup
 * says it; hotstack.cgroup.id when unnamed), container.id, k8s.pod.uid;
 * systemd.unit and hotstack.context of our own. Values: samples/count,
 * the period in cpu/nanoseconds for the clocks, the event's count else
 * (as pprof's second sample type); off-CPU time off_cpu/nanoseconds, and
 * wall-clock time wall/nanoseconds. The
 * totals are the profile's attributes (hotstack.samples, .dropped, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#ifndef HS_OTLP

int hs_otlp_built(void)
{
	return 0;
}

int hs_write_otlp(FILE *f, const struct hs_profile *p, const char *const *resource)
{
	(void)f;
	(void)p;
	(void)resource;
	return -EOPNOTSUPP;
}

int hs_write_otlp_many(FILE *f, const struct hs_profile *const *ps,
		       const char *const *const *resources, size_t nr)
{
	(void)f;
	(void)ps;
	(void)resources;
	(void)nr;
	return -EOPNOTSUPP;
}

int hs_otlp_answer(const void *buf, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	(void)buf;
	(void)len;
	(void)msg;
	(void)msglen;
	*rejected = 0;
	return -EOPNOTSUPP;
}

#else

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#include "cgroup.h"
#include "maps.h"
#include "util.h"

#define OT(x)	Opentelemetry__Proto__Profiles__V1development__##x
typedef Opentelemetry__Proto__Common__V1__AnyValue hs_any;
typedef Opentelemetry__Proto__Common__V1__KeyValue hs_kv;

/* The semantic conventions' version the attributes follow (the resource's, the scope's). */
#define HS_OTLP_SCHEMA	"https://opentelemetry.io/schemas/1.34.0"

/* A sample's attributes at most: comm, pid, the cgroup's four, context. */
#define HS_OTLP_SAMPLE_ATTRS	7
/* The profile's: event, rate, seconds and the five totals. */
#define HS_OTLP_PROFILE_ATTRS	8

/* One profile's structs: its resource, its scope's, its own. */
struct hs_otlp_prof {
	OT(ResourceProfiles) rp;
	Opentelemetry__Proto__Resource__V1__Resource res;
	hs_kv *res_kv, **res_kv_ptrs;
	hs_any *res_vals;
	OT(ScopeProfiles) sp, *sp_ptr;
	OT(Profile) prof, *prof_ptr;
	OT(ValueType) sample_type, period_type;
	int32_t prof_attrs[HS_OTLP_PROFILE_ATTRS];
};

/* All the protobuf-c structs of one request, freed together. */
struct hs_otlp_out {
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest req;
	OT(ProfilesDictionary) dict;
	struct hs_otlp_prof *pr;
	OT(ResourceProfiles) **rp_ptrs;
	size_t nr;
	Opentelemetry__Proto__Common__V1__InstrumentationScope scope;
	OT(Link) link0, *link_ptr;
	/* string_table ("" first), and each string's function index (0: not a frame). */
	struct hs_strtab strs;
	char **str_ptrs;
	int32_t *fn;
	size_t fn_cap;
	/* attribute_table: "KEY\nVALUE" ("KEY\n#N" for a number N) to its index. */
	struct hs_strtab attr_keys;
	OT(KeyValueAndUnit) *attrs, **attr_ptrs;
	hs_any *attr_vals;
	size_t attr_cap;
	OT(Mapping) *maps, **map_ptrs;
	int32_t *map_attrs;
	uint64_t *map_id;
	OT(Function) *fns, **fn_ptrs;
	OT(Location) *locs, **loc_ptrs;
	OT(Line) *lines, **line_ptrs;
	OT(Stack) *stacks, **stack_ptrs;
	struct hs_strtab stack_keys;	/* a stack's frames (a line's text) to its index - 1 */
	int32_t *loc_idx;
	OT(Sample) *samples, **sample_ptrs;
	int64_t *values;
	int32_t *sample_attrs;
};

static void hs_otlp_out_free(struct hs_otlp_out *o)
{
	size_t i;

	hs_strtab_free(&o->strs);
	hs_strtab_free(&o->attr_keys);
	hs_strtab_free(&o->stack_keys);
	for (i = 0; o->pr && i < o->nr; i++) {
		free(o->pr[i].res_kv);
		free(o->pr[i].res_kv_ptrs);
		free(o->pr[i].res_vals);
	}
	free(o->pr);
	free(o->rp_ptrs);
	free(o->str_ptrs);
	free(o->fn);
	free(o->attrs);
	free(o->attr_ptrs);
	free(o->attr_vals);
	free(o->maps);
	free(o->map_ptrs);
	free(o->map_attrs);
	free(o->map_id);
	free(o->fns);
	free(o->fn_ptrs);
	free(o->locs);
	free(o->loc_ptrs);
	free(o->lines);
	free(o->line_ptrs);
	free(o->stacks);
	free(o->stack_ptrs);
	free(o->loc_idx);
	free(o->samples);
	free(o->sample_ptrs);
	free(o->values);
	free(o->sample_attrs);
}

/* The string table's index of @s[0..len), added when new; -1 without memory. */
static int32_t hs_otlp_str(struct hs_otlp_out *o, const char *s, size_t len)
{
	size_t nr = o->strs.nr;
	long i = hs_strtab_add(&o->strs, s, len);

	if (i < 0 || i > INT32_MAX)
		return -1;
	if ((size_t)i == nr) {
		if (nr == o->fn_cap) {
			size_t cap = o->fn_cap ? o->fn_cap * 2 : 1024;
			int32_t *fn = realloc(o->fn, cap * sizeof(*fn));

			if (!fn)
				return -1;
			o->fn = fn;
			o->fn_cap = cap;
		}
		o->fn[i] = 0;
	}
	return i;
}

/*
 * The attribute table's index of @key = @s[0..len) (a string), or of
 * @key = @num (@s NULL); -1 without memory. The same pair is one entry.
 */
static int32_t hs_otlp_attr(struct hs_otlp_out *o, const char *key, const char *s, size_t len,
			    int64_t num)
{
	char buf[HS_CGROUP_FRAME_MAX + 128];
	size_t nr = o->attr_keys.nr;
	int n = s ? snprintf(buf, sizeof(buf), "%s\n%.*s", key, (int)len, s) :
		    snprintf(buf, sizeof(buf), "%s\n#%" PRId64, key, num);
	long i = hs_strtab_add(&o->attr_keys, buf, (size_t)n < sizeof(buf) ? (size_t)n :
			       sizeof(buf) - 1);
	OT(KeyValueAndUnit) *a;
	int32_t k, v = 0;

	if (i < 0 || i > INT32_MAX)
		return -1;
	if ((size_t)i < nr)
		return i;
	if (nr == o->attr_cap) {
		size_t cap = o->attr_cap ? o->attr_cap * 2 : 256, j;
		OT(KeyValueAndUnit) *attrs = realloc(o->attrs, cap * sizeof(*attrs));
		hs_any *vals;

		if (attrs)
			o->attrs = attrs;
		vals = attrs ? realloc(o->attr_vals, cap * sizeof(*vals)) : NULL;
		if (!vals)
			return -1;
		o->attr_vals = vals;
		o->attr_cap = cap;
		/* Moved: each entry's value again (not the zero entry's: none). */
		for (j = 1; j < nr; j++)
			o->attrs[j].value = &o->attr_vals[j];
	}
	k = hs_otlp_str(o, key, strlen(key));
	if (s)
		v = hs_otlp_str(o, s, len);
	if (k < 0 || v < 0)
		return -1;
	a = &o->attrs[i];
	*a = (OT(KeyValueAndUnit))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
	o->attr_vals[i] = (hs_any)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	a->key_strindex = k;
	a->value = &o->attr_vals[i];
	if (s) {
		/* The string table's copy: it stays where it is. */
		o->attr_vals[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_vals[i].string_value = (char *)o->strs.str[v].s;
	} else {
		o->attr_vals[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		o->attr_vals[i].int_value = num;
	}
	return i;
}

static int hs_otlp_value_type(struct hs_otlp_out *o, OT(ValueType) *vt, const char *type,
			      const char *unit)
{
	*vt = (OT(ValueType))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
	vt->type_strindex = hs_otlp_str(o, type, strlen(type));
	vt->unit_strindex = hs_otlp_str(o, unit, strlen(unit));
	return vt->type_strindex < 0 || vt->unit_strindex < 0 ? -ENOMEM : 0;
}

/* @pr's resource: @kv's "KEY=VALUE" attributes, or service.name=hotstack. */
static int hs_otlp_resource(struct hs_otlp_out *o, struct hs_otlp_prof *pr,
			    const char *const *kv)
{
	static const char *const dflt[] = { "service.name=hotstack", NULL };
	size_t n = 0, i;

	kv = kv ?: dflt;
	while (kv[n])
		n++;
	pr->res_kv = calloc(n ?: 1, sizeof(*pr->res_kv));
	pr->res_kv_ptrs = calloc(n ?: 1, sizeof(*pr->res_kv_ptrs));
	pr->res_vals = calloc(n ?: 1, sizeof(*pr->res_vals));
	if (!pr->res_kv || !pr->res_kv_ptrs || !pr->res_vals)
		return -ENOMEM;
	pr->res = (Opentelemetry__Proto__Resource__V1__Resource)
		OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		int32_t k = hs_otlp_str(o, kv[i], eq ? (size_t)(eq - kv[i]) : strlen(kv[i]));
		int32_t v = hs_otlp_str(o, eq ? eq + 1 : "", eq ? strlen(eq + 1) : 0);

		if (k < 0 || v < 0)
			return -ENOMEM;
		pr->res_kv[i] = (hs_kv)OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
		pr->res_vals[i] = (hs_any)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
		pr->res_kv[i].key = (char *)o->strs.str[k].s;
		pr->res_kv[i].value = &pr->res_vals[i];
		pr->res_vals[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		pr->res_vals[i].string_value = (char *)o->strs.str[v].s;
		pr->res_kv_ptrs[i] = &pr->res_kv[i];
	}
	pr->res.attributes = pr->res_kv_ptrs;
	pr->res.n_attributes = n;
	return 0;
}

/*
 * Mappings: the zero one, [kernel.kallsyms] (1), [user] (2), then each
 * other binary @m knows, numbered as fmt_pprof.c numbers them; a build
 * ID is the attribute process.executable.build_id.gnu.
 */
static int hs_otlp_mappings(struct hs_otlp_out *o, const struct hs_maps *m)
{
	size_t n = 3 + (m ? m->nr : 0), i, next = 3;

	o->maps = calloc(n, sizeof(*o->maps));
	o->map_ptrs = calloc(n, sizeof(*o->map_ptrs));
	o->map_attrs = calloc(n, sizeof(*o->map_attrs));
	o->map_id = calloc(m && m->nr ? m->nr : 1, sizeof(*o->map_id));
	if (!o->maps || !o->map_ptrs || !o->map_attrs || !o->map_id)
		return -ENOMEM;
	for (i = 0; i < 3; i++) {
		o->maps[i] = (OT(Mapping))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
		o->map_ptrs[i] = &o->maps[i];
	}
	o->maps[HS_MAP_KERNEL].filename_strindex = hs_otlp_str(o, HS_KERNEL_MAPPING,
							       strlen(HS_KERNEL_MAPPING));
	o->maps[HS_MAP_USER].filename_strindex = hs_otlp_str(o, "[user]", 6);
	for (i = 0; m && i < m->nr; i++) {
		const struct hs_mapping *k = &m->map[i];
		OT(Mapping) *mp;
		size_t id;

		if (!strcmp(k->file, HS_KERNEL_MAPPING)) {
			id = HS_MAP_KERNEL;
		} else {
			id = next++;
			o->maps[id] = (OT(Mapping))
				OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
			o->map_ptrs[id] = &o->maps[id];
			o->maps[id].filename_strindex = hs_otlp_str(o, k->file, strlen(k->file));
		}
		o->map_id[i] = id;
		mp = &o->maps[id];
		mp->memory_start = k->start;
		mp->memory_limit = k->limit;
		mp->file_offset = k->offset;
		if (k->build_id[0]) {
			o->map_attrs[id] = hs_otlp_attr(o, "process.executable.build_id.gnu",
							k->build_id, strlen(k->build_id), 0);
			if (o->map_attrs[id] < 0)
				return -ENOMEM;
			mp->attribute_indices = &o->map_attrs[id];
			mp->n_attribute_indices = 1;
		}
	}
	for (i = 0; i < next; i++)
		if (o->maps[i].filename_strindex < 0)
			return -ENOMEM;
	o->dict.mapping_table = o->map_ptrs;
	o->dict.n_mapping_table = next;
	return 0;
}

/* @p's sample type, period, times and totals, in @pr. */
static int hs_otlp_header(struct hs_otlp_out *o, struct hs_otlp_prof *pr,
			  const struct hs_profile *p)
{
	OT(Profile) *prof = &pr->prof;
	int clock, ret, off = hs_profile_ns(p);
	int64_t period = hs_pprof_period(p, &clock);
	char secs[32];
	size_t n = 0;

	ret = hs_otlp_value_type(o, &pr->sample_type, off ? hs_profile_ns_type(p) : "samples",
				 off ? "nanoseconds" : "count");
	if (off)
		ret = ret ?: hs_otlp_value_type(o, &pr->period_type, hs_profile_ns_type(p),
						"nanoseconds");
	else if (period)
		ret = ret ?: hs_otlp_value_type(o, &pr->period_type, clock ? "cpu" : p->event,
						clock ? "nanoseconds" : "count");
	else	/* unknown (an event at a frequency): a sample each, never 0 (pprof's) */
		ret = ret ?: hs_otlp_value_type(o, &pr->period_type, "samples", "count");
	prof->sample_type = &pr->sample_type;
	prof->period_type = &pr->period_type;
	prof->period = off || !period ? 1 : period;
	prof->time_unix_nano = p->time_ns > 0 ? (uint64_t)p->time_ns : 0;
	prof->duration_nano = p->seconds > 0 ? (uint64_t)(p->seconds * 1e9) : 0;
	if (ret)
		return ret;
#define HS_ATTR(key, s, len, num) do {						\
		pr->prof_attrs[n] = hs_otlp_attr(o, key, s, len, num);		\
		if (pr->prof_attrs[n++] < 0)					\
			return -ENOMEM;						\
	} while (0)
	if (p->event) {
		snprintf(secs, sizeof(secs), "%.3f", p->seconds);
		HS_ATTR("hotstack.event", p->event, strlen(p->event), 0);
		HS_ATTR("hotstack.rate", p->rate, strlen(p->rate), 0);
		HS_ATTR("hotstack.seconds", secs, strlen(secs), 0);
	}
	HS_ATTR("hotstack.samples", NULL, 0, (int64_t)p->total);
	HS_ATTR("hotstack.dropped", NULL, 0, (int64_t)p->dropped);
	HS_ATTR("hotstack.filtered", NULL, 0, (int64_t)p->filtered);
	HS_ATTR("hotstack.truncated", NULL, 0, (int64_t)p->truncated);
	HS_ATTR("hotstack.collapsed", NULL, 0, (int64_t)p->collapsed);
#undef HS_ATTR
	prof->attribute_indices = pr->prof_attrs;
	prof->n_attribute_indices = n;
	return 0;
}

/* A line's keys as its sample's attributes, in @idx; how many, or -ENOMEM. */
static int hs_otlp_keys(struct hs_otlp_out *o, const struct hs_line_keys *k, int32_t *idx)
{
	struct hs_cgroup_info info;
	char cg[HS_CGROUP_FRAME_MAX + 8];
	int n = 0;

#define HS_ATTR(key, s, len, num) do {						\
		if ((idx[n++] = hs_otlp_attr(o, key, s, len, num)) < 0)	\
			return -ENOMEM;						\
	} while (0)
	if (k->comm)
		HS_ATTR("thread.name", k->comm, k->comm_len, 0);
	if (k->pid)
		HS_ATTR("process.pid", NULL, 0, k->pid);
	if (k->cgroup && (k->cgroup[0] == '/' || k->cgroup[0] == '.')) {
		hs_cgroup_parse(k->cgroup, k->cgroup_len, &info);
		snprintf(cg, sizeof(cg), "0::%.*s", (int)k->cgroup_len, k->cgroup);
		HS_ATTR("process.linux.cgroup", cg, strlen(cg), 0);
		if (info.container_id[0])
			HS_ATTR("container.id", info.container_id, strlen(info.container_id), 0);
		if (info.pod_uid[0])
			HS_ATTR("k8s.pod.uid", info.pod_uid, strlen(info.pod_uid), 0);
		if (info.unit[0])
			HS_ATTR("systemd.unit", info.unit, strlen(info.unit), 0);
	} else if (k->cgroup) {
		HS_ATTR("hotstack.cgroup.id", NULL, 0, (int64_t)strtoull(k->cgroup, NULL, 10));
	}
	/* "[task]" as "task". */
	if (k->context)
		HS_ATTR("hotstack.context", k->context + 1, k->context_len - 2, 0);
#undef HS_ATTR
	return n;
}

/*
 * Functions and locations, one each per distinct frame (index 1 on, 0
 * the zero one); a stack per distinct stack of the @nr profiles @ps
 * (their mappings @ps[0]'s), its locations leaf first; a sample per
 * line.
 */
static int hs_otlp_samples(struct hs_otlp_out *o, const struct hs_profile *const *ps, size_t nr)
{
	size_t i, nr_loc = 0, nr_fn = 1, k, at = 0, all = 0, j, first, nr_st;
	const struct hs_maps *maps = ps[0]->maps;
	const struct hs_profile *p;
	struct hs_line_keys key;
	int ret;

	for (j = 0; j < nr; j++) {
		p = ps[j];
		for (i = 0; i < p->nr; i++) {
			hs_line_keys(p, &p->lines[i], &key);
			nr_loc += hs_frames_of(&p->lines[i], key.frames);
		}
		all += p->nr;
	}
	o->stacks = calloc(all + 1, sizeof(*o->stacks));
	o->stack_ptrs = calloc(all + 1, sizeof(*o->stack_ptrs));
	o->loc_idx = calloc(nr_loc ?: 1, sizeof(*o->loc_idx));
	o->samples = calloc(all ?: 1, sizeof(*o->samples));
	o->sample_ptrs = calloc(all ?: 1, sizeof(*o->sample_ptrs));
	o->values = calloc(all ?: 1, sizeof(*o->values));
	o->sample_attrs = calloc((all ?: 1) * HS_OTLP_SAMPLE_ATTRS, sizeof(*o->sample_attrs));
	if (!o->stacks || !o->stack_ptrs || !o->loc_idx || !o->samples || !o->sample_ptrs ||
	    !o->values || !o->sample_attrs)
		return -ENOMEM;
	o->stacks[0] = (OT(Stack))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
	o->stack_ptrs[0] = &o->stacks[0];
	for (j = 0, first = 0; j < nr; first += ps[j++]->nr) {
		p = ps[j];
		o->pr[j].prof.samples = o->sample_ptrs + first;
		o->pr[j].prof.n_samples = p->nr;
	}
	hs_strtab_init(&o->stack_keys, 0);
	for (i = 0, j = 0, first = 0; i < all; i++) {
		const struct hs_stack_line *l;
		const char *end, *s, *e;
		OT(Sample) *smp = &o->samples[i];
		OT(Stack) *st;
		size_t nf;
		long id;

		/* Sample i is line i - first of profile j. */
		while (i - first == ps[j]->nr)
			first += ps[j++]->nr;
		p = ps[j];
		l = &p->lines[i - first];
		end = l->stack + l->len;
		hs_line_keys(p, l, &key);
		ret = hs_otlp_keys(o, &key, o->sample_attrs + i * HS_OTLP_SAMPLE_ATTRS);
		if (ret < 0)
			return ret;
		*smp = (OT(Sample))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;
		smp->attribute_indices = o->sample_attrs + i * HS_OTLP_SAMPLE_ATTRS;
		smp->n_attribute_indices = ret;
		o->values[i] = (int64_t)l->count;
		smp->values = &o->values[i];
		smp->n_values = 1;
		o->sample_ptrs[i] = smp;
		/* Lines of the same stack (other keys, other groups): one stack. */
		nr_st = o->stack_keys.nr;
		id = hs_strtab_add(&o->stack_keys, key.frames, end - key.frames);
		if (id < 0)
			return -ENOMEM;
		smp->stack_index = id + 1;
		if ((size_t)id < nr_st)
			continue;
		st = &o->stacks[id + 1];
		nf = hs_frames_of(l, key.frames);
		*st = (OT(Stack))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
		st->location_indices = o->loc_idx + at;
		st->n_location_indices = nf;
		/* Outermost first in the line: the leaf goes first. */
		for (k = nf, s = key.frames; k > 0; s = e + 1) {
			int32_t idx;

			e = memchr(s, ';', end - s) ?: end;
			idx = hs_otlp_str(o, s, e - s);
			if (idx < 0)
				return -ENOMEM;
			if (!o->fn[idx])
				o->fn[idx] = nr_fn++;
			o->loc_idx[at + --k] = o->fn[idx];
		}
		at += nf;
		o->stack_ptrs[id + 1] = st;
	}
	o->dict.stack_table = o->stack_ptrs;
	o->dict.n_stack_table = o->stack_keys.nr + 1;

	o->fns = calloc(nr_fn, sizeof(*o->fns));
	o->fn_ptrs = calloc(nr_fn, sizeof(*o->fn_ptrs));
	o->locs = calloc(nr_fn, sizeof(*o->locs));
	o->loc_ptrs = calloc(nr_fn, sizeof(*o->loc_ptrs));
	o->lines = calloc(nr_fn, sizeof(*o->lines));
	o->line_ptrs = calloc(nr_fn, sizeof(*o->line_ptrs));
	if (!o->fns || !o->fn_ptrs || !o->locs || !o->loc_ptrs || !o->lines || !o->line_ptrs)
		return -ENOMEM;
	o->fns[0] = (OT(Function))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
	o->fn_ptrs[0] = &o->fns[0];
	o->locs[0] = (OT(Location))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
	o->loc_ptrs[0] = &o->locs[0];
	for (k = 0; k < o->strs.nr; k++) {
		int32_t id = o->fn[k];
		OT(Location) *loc;
		uint64_t map;

		if (!id)
			continue;
		o->fns[id] = (OT(Function))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
		o->fns[id].name_strindex = o->fns[id].system_name_strindex = k;
		o->fn_ptrs[id] = &o->fns[id];
		o->lines[id] = (OT(Line))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
		o->lines[id].function_index = id;
		o->line_ptrs[id] = &o->lines[id];
		loc = &o->locs[id];
		*loc = (OT(Location))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
		map = hs_frame_mapping(o->strs.str[k].s, maps, o->map_id, &loc->address);
		loc->mapping_index = map;
		loc->lines = &o->line_ptrs[id];
		loc->n_lines = 1;
		o->loc_ptrs[id] = loc;
	}
	o->dict.function_table = o->fn_ptrs;
	o->dict.n_function_table = nr_fn;
	o->dict.location_table = o->loc_ptrs;
	o->dict.n_location_table = nr_fn;
	return 0;
}

/* The request's envelope around the profiles, and the tables' last pointers. */
static int hs_otlp_finish(struct hs_otlp_out *o)
{
	struct hs_otlp_prof *pr;
	size_t i;

	o->str_ptrs = malloc(o->strs.nr * sizeof(*o->str_ptrs));
	o->attr_ptrs = malloc((o->attr_keys.nr ?: 1) * sizeof(*o->attr_ptrs));
	if (!o->str_ptrs || !o->attr_ptrs)
		return -ENOMEM;
	for (i = 0; i < o->strs.nr; i++)
		o->str_ptrs[i] = (char *)o->strs.str[i].s;
	for (i = 0; i < o->attr_keys.nr; i++)
		o->attr_ptrs[i] = &o->attrs[i];
	o->dict.string_table = o->str_ptrs;
	o->dict.n_string_table = o->strs.nr;
	o->dict.attribute_table = o->attr_ptrs;
	o->dict.n_attribute_table = o->attr_keys.nr;
	/* link_table[0]: the zero link, its ids of the lengths a span's have. */
	o->link0 = (OT(Link))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;
	o->link0.trace_id.data = (uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	o->link0.trace_id.len = 16;
	o->link0.span_id.data = (uint8_t *)"\0\0\0\0\0\0\0";
	o->link0.span_id.len = 8;
	o->link_ptr = &o->link0;
	o->dict.link_table = &o->link_ptr;
	o->dict.n_link_table = 1;

	o->scope = (Opentelemetry__Proto__Common__V1__InstrumentationScope)
		OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	o->scope.name = "hotstack";
	o->scope.version = HS_VERSION;
	for (i = 0; i < o->nr; i++) {
		pr = &o->pr[i];
		pr->prof_ptr = &pr->prof;
		pr->sp = (OT(ScopeProfiles))
			OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
		pr->sp.scope = &o->scope;
		pr->sp.schema_url = HS_OTLP_SCHEMA;
		pr->sp.profiles = &pr->prof_ptr;
		pr->sp.n_profiles = 1;
		pr->sp_ptr = &pr->sp;
		pr->rp = (OT(ResourceProfiles))
			OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
		pr->rp.resource = &pr->res;
		pr->rp.schema_url = HS_OTLP_SCHEMA;
		pr->rp.scope_profiles = &pr->sp_ptr;
		pr->rp.n_scope_profiles = 1;
		o->rp_ptrs[i] = &pr->rp;
	}
	o->req.resource_profiles = o->rp_ptrs;
	o->req.n_resource_profiles = o->nr;
	o->req.dictionary = &o->dict;
	return 0;
}

int hs_otlp_built(void)
{
	return 1;
}

int hs_otlp_answer(const void *buf, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r;
	const Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess
		*ps;

	*rejected = 0;
	msg[0] = '\0';
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
		NULL, len, buf);
	if (!r)
		return -EBADMSG;
	ps = r->partial_success;
	if (ps) {
		*rejected = ps->rejected_profiles;
		snprintf(msg, msglen, "%s", ps->error_message ?: "");
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
		r, NULL);
	return 0;
}

int hs_write_otlp_many(FILE *f, const struct hs_profile *const *ps,
		       const char *const *const *resources, size_t nr)
{
	struct hs_otlp_out o = {
		.req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT,
		.dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT,
		.nr = nr,
	};
	uint8_t *buf = NULL;
	size_t len = 0, i;
	int ret;

	if (!nr)
		return -EINVAL;
	o.pr = calloc(nr, sizeof(*o.pr));
	o.rp_ptrs = calloc(nr, sizeof(*o.rp_ptrs));
	if (!o.pr || !o.rp_ptrs) {
		free(o.pr);
		free(o.rp_ptrs);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++)
		o.pr[i].prof = (OT(Profile))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
	hs_strtab_init(&o.strs, 1);
	hs_strtab_init(&o.attr_keys, 1);
	/* String 0 is "", attribute 0 the zero one, as the format wants. */
	ret = hs_otlp_str(&o, "", 0) ? -ENOMEM : 0;
	ret = ret ?: hs_otlp_attr(&o, "", "", 0, 0) ? -ENOMEM : 0;
	if (!ret) {
		o.attrs[0].key_strindex = 0;
		o.attrs[0].value = NULL;
	}
	for (i = 0; i < nr && !ret; i++) {
		ret = hs_otlp_resource(&o, &o.pr[i], resources ? resources[i] : NULL);
		ret = ret ?: hs_otlp_header(&o, &o.pr[i], ps[i]);
	}
	ret = ret ?: hs_otlp_mappings(&o, ps[0]->maps);
	ret = ret ?: hs_otlp_samples(&o, ps, nr);
	ret = ret ?: hs_otlp_finish(&o);
	if (!ret) {
		len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(&o.req);
		buf = malloc(len ?: 1);
		ret = buf ? 0 : -ENOMEM;
	}
	if (!ret) {
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&o.req, buf);
		if (fwrite(buf, 1, len, f) != len)
			ret = -EIO;
	}
	free(buf);
	hs_otlp_out_free(&o);
	if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}

int hs_write_otlp(FILE *f, const struct hs_profile *p, const char *const *resource)
{
	return hs_write_otlp_many(f, &p, &resource, 1);
}

#endif /* HS_OTLP */
