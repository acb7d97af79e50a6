// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: pprof profiles (github.com/google/pprof proto/profile.proto,
 * gzipped), written and read with protobuf-c and zlib.
 *
 * Written: one Function and one Location (same id) per distinct frame text,
 * kernel frames in the mapping [kernel.kallsyms], hex user frames in [user]
 * (with their address), hotstack's markers ([dropped], [truncated], ...) in
 * none. When the profile knows the binaries (maps.h: record's), the kernel
 * mapping carries the kernel's build ID, module frames go in their
 * module's mapping and symbolized user frames in their binary's, each
 * with its build ID; read back, they are known again. One Sample per folded line, in the same order, locations innermost
 * first as pprof wants. The totals go in comments "hotstack KEY: VALUE".
 * Read: any profile.proto; stacks are rebuilt outermost first from the
 * locations' lines (inlined functions included), so folded -> pprof ->
 * folded gives the same text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <linux/hotstack.h>

#include "cgroup.h"
#include "maps.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "util.h"

/* The string table (util's, copying), and the function id of each frame among its strings. */
struct hs_pprof_strs {
	struct hs_strtab t;
	uint64_t *fn;		/* per string: its function id, 0 if not a frame */
	size_t fn_cap;
	char **ptrs;		/* the strings, for the protobuf */
};

/* The index of @s[0..len) in the table, added if new; -1 without memory. */
static int64_t hs_strs_index(struct hs_pprof_strs *t, const char *s, size_t len)
{
	size_t nr = t->t.nr;
	long i = hs_strtab_add(&t->t, s, len);

	if (i < 0)
		return -1;
	if ((size_t)i == nr) {
		if (nr == t->fn_cap) {
			size_t cap = t->fn_cap ? t->fn_cap * 2 : 1024;
			uint64_t *fn = realloc(t->fn, cap * sizeof(*fn));

			if (!fn)
				return -1;
			t->fn = fn;
			t->fn_cap = cap;
		}
		t->fn[i] = 0;
	}
	return i;
}

static int64_t hs_strs_add(struct hs_pprof_strs *t, const char *s)
{
	return hs_strs_index(t, s, strlen(s));
}

static void hs_strs_free(struct hs_pprof_strs *t)
{
	hs_strtab_free(&t->t);
	free(t->fn);
	free(t->ptrs);
}

/* A user frame is a hex address: "0x7f12...". */
static int hs_frame_address(const char *name, uint64_t *addr)
{
	char *end;

	if (strncmp(name, "0x", 2) || !name[2])
		return 0;
	*addr = strtoull(name + 2, &end, 16);
	return !*end;
}

/*
 * The mapping a frame belongs to: markers none, user frames their binary's
 * (@map_id: the id of each of @m's mappings), hex addresses user, module
 * frames their module's when known, else kernel.
 */
uint64_t hs_frame_mapping(const char *name, const struct hs_maps *m, const uint64_t *map_id,
			  uint64_t *addr)
{
	size_t len = strlen(name), flen;
	const char *mod;
	long i;

	*addr = 0;
	if (name[0] == '[')
		return 0;
	i = hs_maps_find_frame(m, name, len);
	if (i >= 0)
		return map_id[i];
	if (hs_frame_address(name, addr))
		return HS_MAP_USER;
	mod = hs_module_of_frame(name, len, &flen);
	i = mod ? hs_maps_find_file(m, mod, flen) : -1;
	return i >= 0 ? map_id[i] : HS_MAP_KERNEL;
}

/* All the protobuf-c structs of one written profile, freed together. */
struct hs_pprof_out {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[2], period_type;
	Perftools__Profiles__ValueType *type_ptrs[2];
	Perftools__Profiles__Mapping *maps, **map_ptrs;
	uint64_t *map_id;	/* the id of each of the profile's known mappings */
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Location *locs, **loc_ptrs;
	Perftools__Profiles__Function *fns, **fn_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	uint64_t *ids;		/* every sample's location ids, one array */
	int64_t *values;	/* every sample's values, one array */
	Perftools__Profiles__Label *labels, **label_ptrs;	/* every sample's labels */
	size_t nr_labels;
	int64_t *comments;	/* the header's eight and one a note */
	struct hs_pprof_strs strs;
};

static void hs_pprof_out_free(struct hs_pprof_out *o)
{
	free(o->samples);
	free(o->sample_ptrs);
	free(o->locs);
	free(o->loc_ptrs);
	free(o->fns);
	free(o->fn_ptrs);
	free(o->lines);
	free(o->line_ptrs);
	free(o->ids);
	free(o->values);
	free(o->labels);
	free(o->label_ptrs);
	free(o->maps);
	free(o->map_ptrs);
	free(o->map_id);
	free(o->comments);
	hs_strs_free(&o->strs);
}

static int hs_value_type(struct hs_pprof_strs *t, Perftools__Profiles__ValueType *vt,
			 const char *type, const char *unit)
{
	int64_t ty = hs_strs_add(t, type), un = hs_strs_add(t, unit);

	perftools__profiles__value_type__init(vt);
	vt->type = ty;
	vt->unit = un;
	return ty < 0 || un < 0 ? -ENOMEM : 0;
}

/*
 * Sample types from the event: cpu-clock and task-clock count nanoseconds
 * (period 10^9 / HZ at a frequency, or the period itself), other events at
 * a fixed period count events; at a frequency only the samples are known.
 * Returns the period (0: only samples/count).
 */
int64_t hs_pprof_period(const struct hs_profile *p, int *clock)
{
	unsigned long long v;
	char c;

	*clock = p->event && (!strcmp(p->event, "cpu-clock") || !strcmp(p->event, "task-clock"));
	if (!p->event)
		return 0;
	if (sscanf(p->rate, "%llu Hz%c", &v, &c) == 1 && v && *clock)
		return (int64_t)((1000000000ULL + v / 2) / v);
	if (sscanf(p->rate, "period %llu%c", &v, &c) == 1 && v && v <= INT64_MAX)
		return (int64_t)v;
	return 0;
}

/*
 * Each of @m's mappings a number for the locations (hs_pprof_frames()):
 * the kernel's HS_MAP_KERNEL, the others 3 and up in @m's order, made
 * the mappings' ids by hs_pprof_mappings() once the locations are known.
 */
static int hs_pprof_map_ids(struct hs_pprof_out *o, const struct hs_maps *m)
{
	size_t i, n = m ? m->nr : 0;

	o->map_id = calloc(n ? n : 1, sizeof(*o->map_id));
	if (!o->map_id)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		o->map_id[i] = strcmp(m->map[i].file, HS_KERNEL_MAPPING) ? i + 3 : HS_MAP_KERNEL;
	return 0;
}

/*
 * Mappings: [kernel.kallsyms] (id 1) and [user] (id 2, hex user frames),
 * then, ids from 3 in @m's order, those of @m's other binaries that a
 * location is in: a profile names its own binaries, not all an agent
 * knows (a node's hundreds of binaries and modules in each of its
 * containers' profiles). The kernel's known build ID goes to id 1.
 */
static int hs_pprof_mappings(struct hs_pprof_out *o, const struct hs_maps *m)
{
	size_t n = 2 + (m ? m->nr : 0), used = 2, i, k;
	struct hs_pprof_strs *t = &o->strs;
	uint64_t next = 2, *id = calloc(n, sizeof(*id));	/* each number's id, 0: unused */

	if (!id)
		return -ENOMEM;
	for (k = 0; k < o->prof.n_location; k++)
		if (o->locs[k].mapping_id > HS_MAP_USER && !id[o->locs[k].mapping_id - 1]) {
			id[o->locs[k].mapping_id - 1] = 1;
			used++;
		}
	o->maps = calloc(used, sizeof(*o->maps));
	o->map_ptrs = calloc(used, sizeof(*o->map_ptrs));
	if (!o->maps || !o->map_ptrs)
		goto nomem;
	for (i = 0; i < n; i++) {
		Perftools__Profiles__Mapping *mp = &o->maps[o->prof.n_mapping];
		const struct hs_mapping *b = i >= 2 ? &m->map[i - 2] : NULL;
		const char *file = i == 0 ? HS_KERNEL_MAPPING : i == 1 ? "[user]" : b->file;

		if (b && o->map_id[i - 2] == HS_MAP_KERNEL) {
			mp = &o->maps[0];	/* the kernel's: its build ID on mapping 1 */
		} else if (i < 2 || id[i]) {
			perftools__profiles__mapping__init(mp);
			mp->id = i < 2 ? i + 1 : ++next;
			id[i] = mp->id;
			mp->filename = hs_strs_add(t, file);
			mp->has_functions = 1;
			o->map_ptrs[o->prof.n_mapping++] = mp;
			if (mp->filename < 0)
				goto nomem;
		} else {
			continue;
		}
		if (b) {
			mp->memory_start = b->start;
			mp->memory_limit = b->limit;
			mp->file_offset = b->offset;
			if (b->build_id[0]) {
				mp->build_id = hs_strs_add(t, b->build_id);
				if (mp->build_id < 0)
					goto nomem;
			}
		}
	}
	for (k = 0; k < o->prof.n_location; k++)
		if (o->locs[k].mapping_id > HS_MAP_USER)
			o->locs[k].mapping_id = id[o->locs[k].mapping_id - 1];
	free(id);
	o->prof.mapping = o->map_ptrs;
	return 0;
nomem:
	free(id);
	return -ENOMEM;
}

/*
 * Comment "hotstack KEY VALUE" (@value, or @num in decimal when NULL),
 * made with hs_cat(): an agent writes hundreds of profiles an interval.
 */
static int hs_pprof_comment(struct hs_pprof_out *o, const char *key, const char *value,
			    uint64_t num)
{
	char buf[512];
	size_t n = hs_cats(buf, sizeof(buf), hs_cats(buf, sizeof(buf), 0, "hotstack "), key);
	int64_t i;

	if (value)
		hs_cats(buf, sizeof(buf), n, value);
	else
		hs_cat_u64(buf, sizeof(buf), n, num);
	i = hs_strs_add(&o->strs, buf);
	o->comments[o->prof.n_comment++] = i;
	return i < 0 ? -ENOMEM : 0;
}

static int hs_pprof_header(struct hs_pprof_out *o, const struct hs_profile *p, int64_t period,
			   int clock)
{
	Perftools__Profiles__Profile *prof = &o->prof;
	struct hs_pprof_strs *t = &o->strs;
	size_t nr_notes = 0, i;
	char sec[32];
	int ret, off;

	while (p->notes && p->notes[nr_notes])
		nr_notes++;
	o->comments = calloc(8 + nr_notes, sizeof(*o->comments));
	if (!o->comments)
		return -ENOMEM;
	/* Off-CPU and wall-clock time: nanoseconds, not samples, the only type. */
	off = hs_profile_ns(p);
	ret = hs_value_type(t, &o->types[0], off ? hs_profile_ns_type(p) : "samples",
			    off ? "nanoseconds" : "count");
	o->type_ptrs[0] = &o->types[0];
	o->type_ptrs[1] = &o->types[1];
	prof->sample_type = o->type_ptrs;
	prof->n_sample_type = 1;
	prof->default_sample_type = o->types[0].type;
	if (period) {
		ret = ret ?: hs_value_type(t, &o->types[1], clock ? "cpu" : p->event,
					   clock ? "nanoseconds" : "count");
		prof->n_sample_type = 2;
		o->period_type = o->types[1];
		prof->period = period;
	} else if (off) {
		ret = ret ?: hs_value_type(t, &o->period_type, hs_profile_ns_type(p),
					   "nanoseconds");
		prof->period = 1;
	} else {
		/*
		 * An event at a frequency: its period unknown, each sample one
		 * sample. Never 0 (Pyroscope names the metric by it).
		 */
		ret = ret ?: hs_value_type(t, &o->period_type, "samples", "count");
		prof->period = 1;
	}
	prof->period_type = &o->period_type;
	prof->duration_nanos = (int64_t)(p->seconds * 1e9);
	prof->time_nanos = p->time_ns;

	/* The lossy facts, and what recorded it; hs_read_pprof() reads them back. */
	prof->comment = o->comments;
	if (p->event) {
		snprintf(sec, sizeof(sec), "%.3f", p->seconds);
		ret = ret ?: hs_pprof_comment(o, "event: ", p->event, 0);
		ret = ret ?: hs_pprof_comment(o, "rate: ", p->rate, 0);
		ret = ret ?: hs_pprof_comment(o, "seconds: ", sec, 0);
	}
	ret = ret ?: hs_pprof_comment(o, "samples: ", NULL, p->total);
	ret = ret ?: hs_pprof_comment(o, "dropped: ", NULL, p->dropped);
	ret = ret ?: hs_pprof_comment(o, "filtered: ", NULL, p->filtered);
	ret = ret ?: hs_pprof_comment(o, "truncated: ", NULL, p->truncated);
	ret = ret ?: hs_pprof_comment(o, "collapsed: ", NULL, p->collapsed);
	for (i = 0; i < nr_notes; i++)
		ret = ret ?: hs_pprof_comment(o, "", p->notes[i], 0);
	return ret;
}

/* The frames of @l after its keys (@frames): ';' plus one; none for keys alone. */
size_t hs_frames_of(const struct hs_stack_line *l, const char *frames)
{
	const char *s = frames, *end = l->stack + l->len;
	size_t n = 1;

	if (s == end)
		return 0;
	while ((s = memchr(s, ';', end - s))) {
		n++;
		s++;
	}
	return n;
}

/*
 * Functions and locations: one each per distinct frame, ids from 1 in
 * order of appearance; and each line's location ids, innermost first as
 * pprof wants, in o->ids (line i's at o->ids + off[i]): one pass, one
 * lookup a frame. A line's keys (process name, [pid N], context) are not
 * frames: they become the sample's labels (hs_pprof_samples()).
 */
static int hs_pprof_frames(struct hs_pprof_out *o, const struct hs_profile *p, size_t *off)
{
	struct hs_pprof_strs *t = &o->strs;
	size_t i, n = 0, cap = 0, k, nr_ids = 0;
	struct hs_line_keys key;

	for (i = 0; i < p->nr; i++) {
		hs_line_keys(p, &p->lines[i], &key);
		off[i] = nr_ids;
		nr_ids += hs_frames_of(&p->lines[i], key.frames);
		/* A cgroup: its path, and what the path says (hs_pprof_cgroup()). */
		o->nr_labels += !!key.comm + !!key.pid + !!key.context + 4 * !!key.cgroup;
	}
	off[p->nr] = nr_ids;
	o->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(*o->ids));
	if (!o->ids)
		return -ENOMEM;
	for (i = 0; i < p->nr; i++) {
		const char *end = p->lines[i].stack + p->lines[i].len, *e, *s;
		uint64_t *id = o->ids + off[i + 1];

		hs_line_keys(p, &p->lines[i], &key);
		for (s = key.frames; off[i + 1] > off[i]; s = e + 1) {
			int64_t idx;

			e = memchr(s, ';', end - s) ?: end;
			idx = hs_strs_index(t, s, e - s);
			if (idx < 0)
				return -ENOMEM;
			if (!t->fn[idx])
				t->fn[idx] = ++n;
			*--id = t->fn[idx];
			if (e == end)
				break;
		}
	}
	cap = n ? n : 1;
	o->fns = calloc(cap, sizeof(*o->fns));
	o->fn_ptrs = calloc(cap, sizeof(*o->fn_ptrs));
	o->locs = calloc(cap, sizeof(*o->locs));
	o->loc_ptrs = calloc(cap, sizeof(*o->loc_ptrs));
	o->lines = calloc(cap, sizeof(*o->lines));
	o->line_ptrs = calloc(cap, sizeof(*o->line_ptrs));
	if (!o->fns || !o->fn_ptrs || !o->locs || !o->loc_ptrs || !o->lines || !o->line_ptrs)
		return -ENOMEM;
	for (k = 0; k < t->t.nr; k++) {
		Perftools__Profiles__Function *fn;
		Perftools__Profiles__Location *loc;
		uint64_t id = t->fn[k];

		if (!id)
			continue;
		fn = &o->fns[id - 1];
		perftools__profiles__function__init(fn);
		fn->id = id;
		fn->name = fn->system_name = k;
		o->fn_ptrs[id - 1] = fn;
		perftools__profiles__line__init(&o->lines[id - 1]);
		o->lines[id - 1].function_id = id;
		o->line_ptrs[id - 1] = &o->lines[id - 1];
		loc = &o->locs[id - 1];
		perftools__profiles__location__init(loc);
		loc->id = id;
		loc->mapping_id = hs_frame_mapping(t->t.str[k].s, p->maps, o->map_id, &loc->address);
		loc->line = &o->line_ptrs[id - 1];
		loc->n_line = 1;
		o->loc_ptrs[id - 1] = loc;
	}
	o->prof.function = o->fn_ptrs;
	o->prof.n_function = n;
	o->prof.location = o->loc_ptrs;
	o->prof.n_location = n;
	return 0;
}

/* A string label @key = @s[0..len) (or a number label, @s NULL) of sample @smp. */
static int hs_pprof_label(struct hs_pprof_out *o, Perftools__Profiles__Sample *smp,
			  Perftools__Profiles__Label *l, const char *key, const char *s,
			  size_t len, int64_t num)
{
	int64_t k = hs_strs_add(&o->strs, key), v = s ? hs_strs_index(&o->strs, s, len) : 0;

	if (k < 0 || v < 0)
		return -ENOMEM;
	perftools__profiles__label__init(l);
	l->key = k;
	l->str = v;
	l->num = s ? 0 : num;
	smp->label[smp->n_label++] = l;
	return 0;
}

/*
 * The labels of a cgroup key: "cgroup" its path, and those of the
 * OpenTelemetry resource that the path names, where it names them:
 * "container.id", "k8s.pod.uid", "systemd.unit".
 */
static int hs_pprof_cgroup(struct hs_pprof_out *o, Perftools__Profiles__Sample *smp,
			   Perftools__Profiles__Label **l, const struct hs_line_keys *k)
{
	struct hs_cgroup_info info;
	int ret;

	hs_cgroup_parse(k->cgroup, k->cgroup_len, &info);
	ret = hs_pprof_label(o, smp, (*l)++, "cgroup", k->cgroup, k->cgroup_len, 0);
	if (!ret && info.container_id[0])
		ret = hs_pprof_label(o, smp, (*l)++, "container.id", info.container_id,
				     strlen(info.container_id), 0);
	if (!ret && info.pod_uid[0])
		ret = hs_pprof_label(o, smp, (*l)++, "k8s.pod.uid", info.pod_uid,
				     strlen(info.pod_uid), 0);
	if (!ret && info.unit[0])
		ret = hs_pprof_label(o, smp, (*l)++, "systemd.unit", info.unit,
				     strlen(info.unit), 0);
	return ret;
}

/*
 * One sample per folded line: its locations (hs_pprof_frames()'), its
 * count (and count x period), its keys as labels: "comm" and "context"
 * strings, "pid" a number (go tool pprof -tags, -tagfocus=comm=bash),
 * the cgroup's (hs_pprof_cgroup()).
 */
static int hs_pprof_samples(struct hs_pprof_out *o, const struct hs_profile *p,
			    const size_t *off, int64_t period)
{
	size_t i, nv = period ? 2 : 1, nl = o->nr_labels ? o->nr_labels : 1;
	Perftools__Profiles__Label *l;
	struct hs_line_keys key;
	int ret = 0;

	o->samples = calloc(p->nr ? p->nr : 1, sizeof(*o->samples));
	o->sample_ptrs = calloc(p->nr ? p->nr : 1, sizeof(*o->sample_ptrs));
	o->values = calloc(p->nr ? p->nr * nv : 1, sizeof(*o->values));
	o->labels = calloc(nl, sizeof(*o->labels));
	o->label_ptrs = calloc(nl, sizeof(*o->label_ptrs));
	if (!o->samples || !o->sample_ptrs || !o->values || !o->labels || !o->label_ptrs)
		return -ENOMEM;
	l = o->labels;
	for (i = 0; i < p->nr && !ret; i++) {
		Perftools__Profiles__Sample *s = &o->samples[i];
		const struct hs_line_keys *k = &key;

		hs_line_keys(p, &p->lines[i], &key);
		perftools__profiles__sample__init(s);
		s->label = o->label_ptrs + (l - o->labels);
		if (k->comm)
			ret = hs_pprof_label(o, s, l++, "comm", k->comm, k->comm_len, 0);
		if (!ret && k->pid)
			ret = hs_pprof_label(o, s, l++, "pid", NULL, 0, k->pid);
		if (!ret && k->cgroup)
			ret = hs_pprof_cgroup(o, s, &l, k);
		/* "[task]" as "task": -tagfocus=context=task. */
		if (!ret && k->context)
			ret = hs_pprof_label(o, s, l++, "context", k->context + 1,
					     k->context_len - 2, 0);
		s->location_id = o->ids + off[i];
		s->n_location_id = off[i + 1] - off[i];
		s->value = o->values + i * nv;
		s->n_value = nv;
		s->value[0] = (int64_t)p->lines[i].count;
		if (period)
			s->value[1] = (int64_t)(p->lines[i].count * (uint64_t)period);
		o->sample_ptrs[i] = s;
	}
	o->prof.sample = o->sample_ptrs;
	o->prof.n_sample = p->nr;
	return ret;
}

int hs_gzip_write(FILE *f, const void *data, size_t len)
{
	const uint8_t *buf = data;
	unsigned char out[65536];
	z_stream z = { 0 };
	int zret, ret = 0, bits = 9;

	/*
	 * A window no larger than the data (the same output), and the hash
	 * and buffers sized to it: zlib's largest (256 KiB, cleared at each
	 * init) for each of an agent's many small profiles cost more than
	 * their compression (page faults, the heap grown and trimmed).
	 */
	while (bits < 15 && ((size_t)1 << bits) < len)
		bits++;
	/*
	 * Go's runtime/pprof writes its profiles with gzip.BestSpeed too. Data
	 * under a page is stored, not compressed: its file takes a page either
	 * way (a filesystem block, tmpfs's page), and deflate's cost for each
	 * stream (its Huffman trees: about 170,000 instructions for a 1 kB
	 * profile) was half the agent's CPU with 500 containers' profiles.
	 */
	if (deflateInit2(&z, len < HS_GZIP_STORED ? Z_NO_COMPRESSION : Z_BEST_SPEED, Z_DEFLATED,
			 bits + 16, bits - 7, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	do {
		size_t chunk = len > (1U << 30) ? 1U << 30 : len;

		if (!z.avail_in) {
			z.avail_in = chunk;
			len -= chunk;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		zret = deflate(&z, len || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zret == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			ret = -EIO;
			break;
		}
	} while (zret != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
}

int hs_write_pprof(FILE *f, const struct hs_profile *p)
{
	struct hs_pprof_out o = { 0 };
	size_t *off = malloc((p->nr + 1) * sizeof(*off)), len, i;
	int64_t period;
	uint8_t *buf = NULL;
	int clock, ret;

	perftools__profiles__profile__init(&o.prof);
	hs_strtab_init(&o.strs.t, 1);
	/* String 0 is "", as the format wants. */
	ret = hs_strs_add(&o.strs, "") ? -ENOMEM : 0;
	period = hs_pprof_period(p, &clock);
	ret = ret ?: hs_pprof_header(&o, p, period, clock);
	ret = ret ?: off ? 0 : -ENOMEM;
	ret = ret ?: hs_pprof_map_ids(&o, p->maps);
	ret = ret ?: hs_pprof_frames(&o, p, off);
	ret = ret ?: hs_pprof_mappings(&o, p->maps);
	ret = ret ?: hs_pprof_samples(&o, p, off, period);
	if (!ret) {
		o.strs.ptrs = malloc(o.strs.t.nr * sizeof(*o.strs.ptrs));
		if (!o.strs.ptrs)
			ret = -ENOMEM;
	}
	if (!ret) {
		for (i = 0; i < o.strs.t.nr; i++)
			o.strs.ptrs[i] = (char *)o.strs.t.str[i].s;
		o.prof.string_table = o.strs.ptrs;
		o.prof.n_string_table = o.strs.t.nr;
		len = perftools__profiles__profile__get_packed_size(&o.prof);
		buf = malloc(len ? len : 1);
		if (!buf)
			ret = -ENOMEM;
	}
	if (!ret) {
		perftools__profiles__profile__pack(&o.prof, buf);
		ret = hs_gzip_write(f, buf, len);
	}
	free(buf);
	free(off);
	hs_pprof_out_free(&o);
	if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}

/* String @i of @prof, or "" when out of range (a malformed profile). */
static const char *hs_pprof_str(const Perftools__Profiles__Profile *prof, int64_t i)
{
	return i >= 0 && (uint64_t)i < prof->n_string_table ? prof->string_table[i] : "";
}

/* Restore what hs_pprof_header() wrote in comments; unknown comments are left alone. */
static void hs_pprof_comments(struct hs_profile *p, const Perftools__Profiles__Profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_comment; i++) {
		const char *c = hs_pprof_str(prof, prof->comment[i]);
		unsigned long long v;

		if (!strncmp(c, "hotstack event: ", 16)) {
			snprintf(p->event_buf, sizeof(p->event_buf), "%s", c + 16);
			p->event = p->event_buf;
		} else if (!strncmp(c, "hotstack rate: ", 15)) {
			snprintf(p->rate, sizeof(p->rate), "%s", c + 15);
		} else if (sscanf(c, "hotstack seconds: %lf", &p->seconds) == 1) {
			continue;
		} else if (sscanf(c, "hotstack filtered: %llu", &v) == 1) {
			p->filtered = v;
		}
	}
}

/* Find by id: ids are usually 1..n in order (direct), else a search. */
#define HS_PPROF_FIND(arr, n, want) ({						\
	size_t __i = (want) - 1, __n = (n);					\
	if ((want) == 0 || __i >= __n || (arr)[__i]->id != (want))		\
		for (__i = 0; __i < __n && (arr)[__i]->id != (want); __i++)	\
			;							\
	__i < __n ? (arr)[__i] : NULL;						\
})

/* Append @s and a ';' (not before the first frame) to the growing buffer. */
static int hs_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;

	if (*len + n + 1 > *cap) {
		size_t c = (*len + n + 1) * 2;
		char *b = realloc(*buf, c);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = c;
	}
	if (*len)
		(*buf)[(*len)++] = ';';
	memcpy(*buf + *len, s, n);
	*len += n - 1;
	return 0;
}

/* The function name of @line ("[unknown]" without one). */
static const char *hs_pprof_fn_name(const Perftools__Profiles__Profile *prof,
				    const Perftools__Profiles__Line *line)
{
	const Perftools__Profiles__Function *fn;
	const char *name;

	fn = HS_PPROF_FIND(prof->function, prof->n_function, line->function_id);
	if (!fn)
		return "[unknown]";
	name = hs_pprof_str(prof, fn->name);
	if (!name[0] && fn->system_name)
		name = hs_pprof_str(prof, fn->system_name);
	return name;
}

/* The frames of one location, outermost first (the last line is the caller). */
static int hs_pprof_location(const Perftools__Profiles__Profile *prof,
			     const Perftools__Profiles__Location *loc, char **buf, size_t *len,
			     size_t *cap)
{
	char addr[32];
	size_t j;
	int ret = 0;

	if (!loc->n_line) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, loc->address);
		return hs_append(buf, len, cap, addr);
	}
	for (j = loc->n_line; j > 0 && !ret; j--)
		ret = hs_append(buf, len, cap, hs_pprof_fn_name(prof, loc->line[j - 1]));
	return ret;
}

/*
 * The profile's mappings back into p->maps: all but hotstack's [user] (hex
 * frames) and a kernel mapping with nothing known. The frames of a mapping
 * other than the kernel's, or a module's ("func [MOD]" in "[MOD]"), are
 * user frames: each is noted with its mapping.
 */
static int hs_pprof_read_maps(struct hs_profile *p, const Perftools__Profiles__Profile *prof)
{
	long *idx = calloc(prof->n_mapping ? prof->n_mapping : 1, sizeof(*idx));
	size_t i, j, mi, flen;
	int ret = 0;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < prof->n_mapping && !ret; i++) {
		const Perftools__Profiles__Mapping *m = prof->mapping[i];
		const char *file = hs_pprof_str(prof, m->filename);
		const char *bid = hs_pprof_str(prof, m->build_id);

		idx[i] = -1;
		if (!bid[0] && (!strcmp(file, "[user]") || (!strcmp(file, HS_KERNEL_MAPPING) &&
							    !m->memory_start && !m->memory_limit)))
			continue;
		idx[i] = hs_maps_add(&p->maps, file, bid, m->memory_start, m->memory_limit,
				     m->file_offset);
		if (idx[i] < 0)
			ret = -ENOMEM;
	}
	for (i = 0; i < prof->n_location && !ret && p->maps; i++) {
		const Perftools__Profiles__Location *loc = prof->location[i];
		const char *file, *name, *mod;

		for (mi = 0; mi < prof->n_mapping && prof->mapping[mi]->id != loc->mapping_id; mi++)
			;
		if (!loc->mapping_id || mi == prof->n_mapping || idx[mi] < 0)
			continue;
		file = p->maps->map[idx[mi]].file;
		if (!strcmp(file, HS_KERNEL_MAPPING))
			continue;
		for (j = 0; j < loc->n_line && !ret; j++) {
			name = hs_pprof_fn_name(prof, loc->line[j]);
			mod = hs_module_of_frame(name, strlen(name), &flen);
			if (!mod || strcmp(mod, file))
				ret = hs_maps_frame(p->maps, name, strlen(name), idx[mi]);
		}
	}
	free(idx);
	return ret;
}

/*
 * A sample's labels "comm", "pid", "cgroup" and "context" back into its
 * keys, the leading frames "comm;[pid N];[cgroup PATH];[task]" (and the
 * profile's keys noted; the labels a cgroup's path gives follow it).
 */
static int hs_pprof_keys(struct hs_profile *p, const Perftools__Profiles__Profile *prof,
			 const Perftools__Profiles__Sample *s, char **buf, size_t *n, size_t *cap)
{
	static const char *const order[] = { "comm", "pid", "cgroup", "context" };
	char pid[32], ctx[64], cg[HS_CGROUP_FRAME_MAX + 16];
	size_t i, j;
	int ret = 0;

	for (j = 0; j < 4 && !ret; j++) {
		for (i = 0; i < s->n_label; i++) {
			const Perftools__Profiles__Label *l = s->label[i];

			if (strcmp(hs_pprof_str(prof, l->key), order[j]))
				continue;
			if (j == 1 && l->num > 0) {
				snprintf(pid, sizeof(pid), "[pid %lld]", (long long)l->num);
				ret = hs_append(buf, n, cap, pid);
				p->keys |= HOTSTACK_KEY_TGID;
			} else if (j == 0 && hs_pprof_str(prof, l->str)[0]) {
				ret = hs_append(buf, n, cap, hs_pprof_str(prof, l->str));
				p->keys |= HOTSTACK_KEY_COMM;
			} else if (j == 2 && hs_pprof_str(prof, l->str)[0]) {
				const char *v = hs_pprof_str(prof, l->str);
				size_t cut = hs_cgroup_tail(v, strlen(v), HS_CGROUP_FRAME_MAX - 3);

				snprintf(cg, sizeof(cg), HS_CGROUP_KEY "%s%s]", cut ? "..." : "",
					 v + cut);
				ret = hs_append(buf, n, cap, cg);
				p->keys |= HOTSTACK_KEY_CGROUP;
			} else if (j == 3 && hs_pprof_str(prof, l->str)[0]) {
				snprintf(ctx, sizeof(ctx), "[%s]", hs_pprof_str(prof, l->str));
				ret = hs_append(buf, n, cap, ctx);
				p->keys |= HOTSTACK_KEY_CONTEXT;
			}
			break;
		}
	}
	return ret;
}

/* The value that counts samples: the first "count" sample type, else the first. */
static size_t hs_pprof_count_index(const Perftools__Profiles__Profile *prof)
{
	size_t i;

	for (i = 0; i < prof->n_sample_type; i++)
		if (!strcmp(hs_pprof_str(prof, prof->sample_type[i]->unit), "count"))
			return i;
	return 0;
}

int hs_read_pprof(struct hs_profile *p, const void *data, size_t len, size_t *bad_sample)
{
	Perftools__Profiles__Profile *prof;
	size_t i, k, vi, cap = 0, n;
	char *buf = NULL;
	int ret = 0;

	prof = perftools__profiles__profile__unpack(NULL, len, data);
	if (!prof)
		return -EBADMSG;
	if (!prof->n_string_table || prof->string_table[0][0]) {
		perftools__profiles__profile__free_unpacked(prof, NULL);
		return -EBADMSG;
	}
	vi = hs_pprof_count_index(prof);
	p->seconds = prof->duration_nanos / 1e9;
	p->time_ns = prof->time_nanos;
	hs_pprof_comments(p, prof);
	for (i = 0; i < prof->n_sample && !ret; i++) {
		const Perftools__Profiles__Sample *s = prof->sample[i];

		if (vi >= s->n_value || s->value[vi] < 0) {
			if (bad_sample)
				*bad_sample = i + 1;
			ret = -EDOM;
			break;
		}
		n = 0;
		ret = hs_pprof_keys(p, prof, s, &buf, &n, &cap);
		for (k = s->n_location_id; k > 0 && !ret; k--) {
			const Perftools__Profiles__Location *loc;
			uint64_t id = s->location_id[k - 1];

			loc = HS_PPROF_FIND(prof->location, prof->n_location, id);
			if (loc)
				ret = hs_pprof_location(prof, loc, &buf, &n, &cap);
			else
				ret = hs_append(&buf, &n, &cap, "[unknown]");
		}
		if (!ret && !n)
			ret = hs_append(&buf, &n, &cap, "[unknown]");
		if (!ret)
			ret = hs_profile_add(p, buf, n, s->value[vi]);
	}
	free(buf);
	if (!ret)
		ret = hs_pprof_read_maps(p, prof);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	return ret;
}
