// SPDX-License-Identifier: GPL-2.0
/*
 * What every area uses: TAP lines, the device, sessions and their
 * mappings, waiting for a condition, CPUs kept busy.
 */
#include "vmtest.h"

int failures;

void tap(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		failures++;
}

int open_dev(void)
{
	int fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok - open /dev/hotstack: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/* ioctl returning 0 or the errno it failed with. */
int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

void expect_errno(int got, int want, const char *what)
{
	tap(got == want, "GET_INFO %s: %s (got %s)", what, strerrorname_np(want),
	    got ? strerrorname_np(got) : "success");
}

/* ---- the engine ------------------------------------------------------ */

/* The event the sessions sample: $HS_EVENT, parsed as the tool does. */
struct hs_event_spec test_event = {
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
};

/*
 * Whether @text has a raw kernel address: 0xffff and 12 more hex digits
 * (x86_64 and arm64 kernels). A user address of a 48-bit address space
 * can begin 0xffff too (arm64 libraries), with fewer digits.
 */
bool kernel_address_in(const char *text)
{
	const char *p;
	size_t n;

	for (p = strstr(text, "0xffff"); p; p = strstr(p + 1, "0xffff")) {
		n = strspn(p + 2, "0123456789abcdef");
		if (n == 16)
			return true;
	}
	return false;
}

bool hw_event(void)
{
	return test_event.type != PERF_TYPE_SOFTWARE;
}

/* Whether the session on each descriptor samples a hardware event. */
bool fd_hw_event[1024];

void default_config(struct hotstack_config *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = HOTSTACK_CFG_FREQ;
	c->event_type = test_event.type;
	c->event_config = test_event.config;
	c->sample = 1000;
	/*
	 * A hardware event's frequency mode starts at period 1 and converges
	 * over tens of ticks (perf throttles it meanwhile): a fixed period
	 * keeps short tests exact. 10^6 cycles: 1 ms at QEMU's 1 GHz.
	 */
	if (hw_event()) {
		c->flags = 0;
		c->sample = 1000000;
	}
	c->stacks = HOTSTACK_STACK_KERNEL;
	c->max_depth = 64;
	/*
	 * Room as ABI 1's tables of 1024 stacks and 16384 frames per CPU gave
	 * the guests' 2 CPUs: one store of 2048 stacks and 32768 frames
	 * shared by all, and 1024 count entries per CPU (not the store's
	 * size: a mapping whose two tables differ).
	 */
	c->table_entries = 2048;
	c->arena_frames = 1 << 15;
	c->cpu_entries = 1024;
}

int get_stats(int fd, struct hotstack_stats *st, __u32 flags)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = flags;
	return xioctl(fd, HOTSTACK_IOC_GET_STATS, st);
}

int map_session(int fd, struct map *m)
{
	struct hotstack_stats st;
	void *p;

	m->base = NULL;
	if (get_stats(fd, &st, 0) || !st.mmap_size)
		return -1;
	/* Only the exact length is accepted. */
	p = mmap(NULL, st.mmap_size - 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED || errno != EINVAL) {
		printf("#   mmap of a short length did not fail with EINVAL\n");
		return -1;
	}
	p = mmap(NULL, st.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	m->base = p;
	m->size = st.mmap_size;
	m->h = p;
	return m->h->mmap_size == m->size ? 0 : -1;
}

#define ALIGN_TO(x, a)	(((x) + (a) - 1) / (a) * (a))

/*
 * Whether the mapping @m of a session configured with @c on @nr_cpus CPUs
 * is laid out as uapi "mmap" and "Memory" say: the header padded to whole
 * pages, then each generation's store (a page of its counters, then
 * table_entries stacks and arena_frames frames, padded to a page) and
 * nr_cpus slots (the CPU's counters, then cpu_entries count entries,
 * padded to 128 bytes); cpu_entries 0 (or a struct too old to have it)
 * is table_entries. Says what is not (@what).
 */
bool map_layout_ok(const struct map *m, const struct hotstack_config *c, unsigned int nr_cpus,
		   const char *what)
{
	const struct hotstack_mmap_header *h = m->h;
	__u64 page = sysconf(_SC_PAGESIZE);
	__u32 cpu_entries = c->size > HOTSTACK_CONFIG_SIZE_VER1 && c->cpu_entries ?
			    c->cpu_entries : c->table_entries;
	__u64 hdr = ALIGN_TO(sizeof(*h) + nr_cpus * sizeof(__u32), page);
	__u64 store = ALIGN_TO(page + c->table_entries * sizeof(struct hotstack_stack) +
			       c->arena_frames * 8, page);
	__u64 slot = ALIGN_TO(h->cpu_stats_size + cpu_entries * sizeof(struct hotstack_count), 128);
	__u64 gen = store + nr_cpus * slot;
	bool ok = h->version == HOTSTACK_MMAP_VERSION && h->header_size == sizeof(*h) &&
		  h->nr_slots == nr_cpus && h->table_entries == c->table_entries &&
		  h->arena_frames == c->arena_frames && h->cpu_entries == cpu_entries &&
		  h->entry_size == sizeof(struct hotstack_stack) &&
		  h->count_size == sizeof(struct hotstack_count) && h->store_stats_size == page &&
		  h->cpu_stats_size >= sizeof(struct hotstack_cpu_stats) &&
		  !(h->cpu_stats_size % 8) && h->store_size == store && h->slot_size == slot &&
		  h->gen_offset[0] == hdr && h->gen_offset[1] == hdr + gen &&
		  h->mmap_size == ALIGN_TO(hdr + 2 * gen, page) && h->mmap_size == m->size &&
		  !h->pad && !h->reserved[0] && !h->reserved[1];

	if (!ok)
		printf("#   %s: version %u header_size %u nr_slots %u table_entries %u "
		       "arena_frames %llu cpu_entries %u entry_size %u count_size %u "
		       "store_stats_size %u cpu_stats_size %u store_size %llu slot_size %llu "
		       "gen_offset %llu %llu mmap_size %llu pad %u; want store_size %llu "
		       "slot_size %llu gen_offset %llu %llu\n", what, h->version, h->header_size,
		       h->nr_slots, h->table_entries, (unsigned long long)h->arena_frames,
		       h->cpu_entries, h->entry_size, h->count_size, h->store_stats_size,
		       h->cpu_stats_size,
		       (unsigned long long)h->store_size, (unsigned long long)h->slot_size,
		       (unsigned long long)h->gen_offset[0], (unsigned long long)h->gen_offset[1],
		       (unsigned long long)h->mmap_size, h->pad, (unsigned long long)store,
		       (unsigned long long)slot, (unsigned long long)hdr,
		       (unsigned long long)(hdr + gen));
	return ok;
}

/*
 * The mapping of generation @gen (uapi "mmap"): its store of distinct
 * stacks at gen_offset[gen] (the store's counters, its places, its
 * arena), then each CPU slot's counters and count table.
 */
const struct hotstack_store_stats *gen_store(const struct map *m, unsigned int gen)
{
	return (const void *)((const char *)m->base + m->h->gen_offset[gen]);
}

const struct hotstack_stack *gen_stacks(const struct map *m, unsigned int gen)
{
	return (const void *)((const char *)gen_store(m, gen) + m->h->store_stats_size);
}

const __u64 *gen_arena(const struct map *m, unsigned int gen)
{
	return (const void *)((const char *)gen_stacks(m, gen) +
			      (size_t)m->h->table_entries * m->h->entry_size);
}

/* The counters of @slot in generation @gen, in the mapping. */
const struct hotstack_cpu_stats *slot_stats(const struct map *m, unsigned int gen,
					    unsigned int slot)
{
	const struct hotstack_mmap_header *h = m->h;

	return (const void *)((const char *)m->base + h->gen_offset[gen] + h->store_size +
			      slot * h->slot_size);
}

/* The count table of @slot in generation @gen: h->cpu_entries entries. */
const struct hotstack_count *cpu_counts(const struct map *m, unsigned int gen,
					unsigned int slot)
{
	return (const void *)((const char *)slot_stats(m, gen, slot) + m->h->cpu_stats_size);
}

/*
 * The stack a count entry's @id (index + 1) names in generation @gen, or
 * NULL when it is 0 or names no READY place (a read the header's seq did
 * not cover, or a fault).
 */
static const struct hotstack_stack *stack_of(const struct map *m, unsigned int gen, __u32 id)
{
	const struct hotstack_stack *s;

	if (!id || id > m->h->table_entries)
		return NULL;
	s = gen_stacks(m, gen) + id - 1;
	if ((__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE) & HOTSTACK_STACK_STATE) !=
	    HOTSTACK_STACK_READY)
		return NULL;
	return s;
}

/* The stack count entry @c of generation @gen names, or NULL (free, or see stack_of()). */
const struct hotstack_stack *count_stack(const struct map *m, unsigned int gen,
					 const struct hotstack_count *c)
{
	/* The index first, then the rest (pairs with the kernel's release). */
	return stack_of(m, gen, __atomic_load_n(&c->stack, __ATOMIC_ACQUIRE));
}

/* Whether READY stacks @a and @b of one store are the same stack: every key and frame. */
static bool same_stack(const struct hotstack_stack *a, const struct hotstack_stack *b,
		       const __u64 *arena)
{
	return a->hash == b->hash && a->nr_kernel == b->nr_kernel && a->nr_user == b->nr_user &&
	       a->flags == b->flags && a->context == b->context && a->depth == b->depth &&
	       a->tgid == b->tgid && !memcmp(a->comm, b->comm, sizeof(a->comm)) &&
	       a->cgroup == b->cgroup &&
	       !memcmp(arena + a->frames, arena + b->frames,
		       (a->nr_kernel + a->nr_user) * sizeof(*arena));
}

/* A READY place of the store, for the walk's sorts: its index, its frames. */
struct walk_place {
	__u32 i;
	__u64 hash, start, end;
};

static int place_by_hash(const void *a, const void *b)
{
	const struct walk_place *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static int place_by_frames(const void *a, const void *b)
{
	const struct walk_place *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* One unsound thing a walk found: counted, and the first few said (@what). */
#define WALK_BAD(v, what, ...) do {					\
		if ((v)->bad++ < 3 && (what)) {				\
			printf("#   %s: ", (what));				\
			printf(__VA_ARGS__);				\
			putchar('\n');					\
		}							\
	} while (0)

/*
 * Walk generation @gen of a quiet session (stopped, or the readable one)
 * as the uapi header describes it, into @v: the store (every place taken
 * counted in its counters, 3/4 of them at most, no FILLING place, each
 * READY stack's frames its own within the arena's use, and those add up
 * to it; no stack stored twice) and each CPU's count table (3/4 used at
 * most; each entry names a READY stack, by the low bits of its hash, at
 * most once a CPU, with a count; they add up to the CPU's counted and
 * entries; its arena_used 0; samples == counted + drops). Unsound: v->bad, the first few printed under @what (NULL:
 * quietly, for reads the header's seq may overtake). Whether all was sound.
 */
bool gen_walk(const struct map *m, unsigned int gen, struct gen_view *v, const char *what)
{
	const struct hotstack_mmap_header *h = m->h;
	const struct hotstack_store_stats *ss = gen_store(m, gen);
	const struct hotstack_stack *stacks = gen_stacks(m, gen);
	const __u64 *arena = gen_arena(m, gen);
	__u32 n = h->table_entries, i, k, nr_places = 0;
	__u16 *cpus = calloc(n, sizeof(*cpus));		/* CPUs that count each place */
	__u32 *last = calloc(n, sizeof(*last));		/* the last slot (+1) that did */
	struct walk_place *p = malloc(n * sizeof(*p));
	__u64 arena_used = __atomic_load_n(&ss->arena_used, __ATOMIC_RELAXED);
	unsigned int slot, r;

	memset(v, 0, sizeof(*v));
	if (!cpus || !last || !p) {
		WALK_BAD(v, what, "out of memory");
		goto out;
	}
	for (r = 0; r < 6; r++)
		if (ss->reserved[r])
			WALK_BAD(v, what, "the store's reserved[%u] is %#llx", r,
				 (unsigned long long)ss->reserved[r]);

	/* The store: places taken, their state, their frames. */
	for (i = 0; i < n; i++) {
		const struct hotstack_stack *s = &stacks[i];
		__u64 hash = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE), nr;

		if (!hash)
			continue;
		v->stacks++;
		switch (hash & HOTSTACK_STACK_STATE) {
		case HOTSTACK_STACK_READY:
			break;
		case HOTSTACK_STACK_DEAD:
			v->dead++;
			continue;
		case HOTSTACK_STACK_FILLING:
			WALK_BAD(v, what, "place %u is still FILLING in a quiet generation", i);
			continue;
		default:
			WALK_BAD(v, what, "place %u has hash %#llx: no state", i,
				 (unsigned long long)hash);
			continue;
		}
		v->ready++;
		nr = s->nr_kernel + s->nr_user;
		if (nr && (s->frames + nr > arena_used || s->frames + nr > h->arena_frames)) {
			WALK_BAD(v, what, "stack %u's frames %u + %llu are past the %llu in use", i,
				 s->frames, (unsigned long long)nr,
				 (unsigned long long)arena_used);
			continue;
		}
		v->frames += nr;
		p[nr_places].i = i;
		p[nr_places].hash = hash;
		p[nr_places].start = s->frames;
		p[nr_places++].end = s->frames + nr;
	}
	if (v->stacks != ss->stacks)
		WALK_BAD(v, what, "%llu places taken, the store's counter says %llu",
			 (unsigned long long)v->stacks, (unsigned long long)ss->stacks);
	/* 3/4 of the places at most, as of every open-addressing table (uapi). */
	if (v->stacks > n / 4 * 3)
		WALK_BAD(v, what, "%llu places taken of %u: past 3/4", (unsigned long long)v->stacks,
			 n);
	/* Each stack's frames its own: the stored ones take the arena's use exactly. */
	if (v->frames != arena_used)
		WALK_BAD(v, what, "the stored stacks have %llu frames, the arena %llu in use",
			 (unsigned long long)v->frames, (unsigned long long)arena_used);
	qsort(p, nr_places, sizeof(*p), place_by_frames);
	for (k = 1; k < nr_places; k++)
		if (p[k].start < p[k - 1].end && p[k].start != p[k].end)
			WALK_BAD(v, what, "stacks %u and %u share arena frames from %llu",
				 p[k - 1].i, p[k].i, (unsigned long long)p[k].start);
	/* Stored once: READY stacks of one hash, compared whole. */
	qsort(p, nr_places, sizeof(*p), place_by_hash);
	for (k = 0; k < nr_places; k++) {
		__u32 j;

		for (j = k + 1; j < nr_places && p[j].hash == p[k].hash; j++)
			if (same_stack(&stacks[p[k].i], &stacks[p[j].i], arena))
				WALK_BAD(v, what, "places %u and %u hold the same stack", p[k].i,
					 p[j].i);
	}

	/* Each CPU's count table. */
	for (slot = 0; slot < h->nr_slots; slot++) {
		const struct hotstack_cpu_stats *cs = slot_stats(m, gen, slot);
		const struct hotstack_count *c = cpu_counts(m, gen, slot);
		__u64 counted = 0, entries = 0;

		for (i = 0; i < h->cpu_entries; i++) {
			__u32 id = __atomic_load_n(&c[i].stack, __ATOMIC_ACQUIRE);
			const struct hotstack_stack *s;

			if (!id)
				continue;
			entries++;
			counted += c[i].count;
			s = stack_of(m, gen, id);
			if (!s) {
				WALK_BAD(v, what, "CPU %u's count %u names place %u: not READY",
					 h->slot_cpu[slot], i, id - 1);
				continue;
			}
			if (c[i].tag != (__u32)s->hash || !c[i].count)
				WALK_BAD(v, what, "CPU %u's count %u: tag %#x, hash %#llx, "
					 "count %llu",
					 h->slot_cpu[slot], i, c[i].tag,
					 (unsigned long long)s->hash,
					 (unsigned long long)c[i].count);
			if (last[id - 1] == slot + 1) {
				WALK_BAD(v, what, "CPU %u counts stack %u twice", h->slot_cpu[slot],
					 id - 1);
				continue;
			}
			last[id - 1] = slot + 1;
			cpus[id - 1]++;
		}
		if (entries > h->cpu_entries / 4 * 3)
			WALK_BAD(v, what, "CPU %u: %llu count entries of %u: past 3/4",
				 h->slot_cpu[slot], (unsigned long long)entries, h->cpu_entries);
		if (counted != cs->counted || entries != cs->entries || cs->arena_used ||
		    cs->samples != cs->counted + hs_sum_drops(cs->drops))
			WALK_BAD(v, what, "CPU %u: counts %llu of %llu entries; its counters: "
				 "counted %llu, entries %llu, arena_used %llu, samples %llu, "
				 "drops %llu", h->slot_cpu[slot], (unsigned long long)counted,
				 (unsigned long long)entries, (unsigned long long)cs->counted,
				 (unsigned long long)cs->entries,
				 (unsigned long long)cs->arena_used,
				 (unsigned long long)cs->samples,
				 (unsigned long long)hs_sum_drops(cs->drops));
		v->counted += counted;
		v->counts += entries;
		if (entries > v->max_cpu_entries)
			v->max_cpu_entries = entries;
		v->sum.samples += cs->samples;
		v->sum.counted += cs->counted;
		for (r = 0; r < HOTSTACK_DROP_MAX; r++)
			v->sum.drops[r] += cs->drops[r];
	}
	for (k = 0; k < nr_places; k++) {
		v->shared += cpus[p[k].i] >= 2;
		v->unnamed += !cpus[p[k].i];
	}
	/*
	 * A stack is stored by a CPU that then counts it: one no CPU counts
	 * is a sample lost, unless a CPU's count table was full.
	 */
	if (v->unnamed && !v->sum.drops[HOTSTACK_DROP_TABLE_FULL])
		WALK_BAD(v, what, "%llu stored stacks no CPU counts, and no TABLE_FULL drop",
			 (unsigned long long)v->unnamed);
	/* A DEAD place is a new stack whose frames found no room: a drop each. */
	if (v->dead > v->sum.drops[HOTSTACK_DROP_ARENA_FULL] + v->sum.drops[HOTSTACK_DROP_BUSY])
		WALK_BAD(v, what, "%llu DEAD places, more than the ARENA_FULL and BUSY drops",
			 (unsigned long long)v->dead);
out:
	free(cpus);
	free(last);
	free(p);
	return !v->bad;
}

/* Read the folded text of @fd until EOF; returns a malloc'd string. */
char *read_all(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	for (;;) {
		if (len + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	return buf;
}

/*
 * Check the sum invariant of a quiet session, through ioctl, mmap and
 * read(); and that the mapping's store and count tables are sound and
 * say what GET_STATS does (gen_walk()).
 */
void check_invariant(int fd, const char *what)
{
	const struct hotstack_store_stats *ss;
	struct hotstack_stats st;
	struct gen_view v;
	struct map m;
	__u64 text_sum = 0;
	char *text, *line, *save;
	bool drops_same = true, sound;
	unsigned int r;

	tap(get_stats(fd, &st, 0) == 0, "%s: GET_STATS", what);
	tap(st.total.samples == st.total.counted + hs_sum_drops(st.total.drops),
	    "%s: samples %llu == counted %llu + drops %llu", what,
	    (unsigned long long)st.total.samples, (unsigned long long)st.total.counted,
	    (unsigned long long)hs_sum_drops(st.total.drops));
	tap(st.total.nmi_samples == (fd_hw_event[fd] ? st.total.samples : 0),
	    "%s: %llu of %llu samples taken in NMI context (%s event)", what,
	    (unsigned long long)st.total.nmi_samples, (unsigned long long)st.total.samples,
	    fd_hw_event[fd] ? "hardware: all" : "software: none");
	if (map_session(fd, &m)) {
		tap(false, "%s: mmap the tables", what);
		return;
	}
	sound = gen_walk(&m, m.h->active, &v, what);
	tap(sound, "%s: the mmap's store and count tables are sound: %llu stacks stored, %llu "
	    "counted on two CPUs or more, %llu count entries", what, (unsigned long long)v.stacks,
	    (unsigned long long)v.shared, (unsigned long long)v.counts);
	for (r = 0; r < HOTSTACK_DROP_MAX; r++)
		drops_same &= v.sum.drops[r] == st.total.drops[r];
	tap(v.counted == st.total.counted && v.sum.samples == st.total.samples && drops_same,
	    "%s: mmap counts %llu == counted %llu, the CPUs' samples %llu == %llu, their drops "
	    "GET_STATS'", what, (unsigned long long)v.counted,
	    (unsigned long long)st.total.counted, (unsigned long long)v.sum.samples,
	    (unsigned long long)st.total.samples);
	/* GET_STATS' entries and arena_used are the store's, not the CPUs' sum. */
	ss = gen_store(&m, m.h->active);
	tap(v.stacks == st.total.entries && ss->stacks == st.total.entries &&
	    ss->arena_used == st.total.arena_used,
	    "%s: the store's stacks %llu == entries %llu, its frames %llu == arena_used %llu", what,
	    (unsigned long long)v.stacks, (unsigned long long)st.total.entries,
	    (unsigned long long)ss->arena_used, (unsigned long long)st.total.arena_used);
	munmap(m.base, m.size);

	text = read_all(fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		if (sp)
			text_sum += strtoull(sp + 1, NULL, 10);
	}
	free(text);
	tap(text_sum == st.total.counted, "%s: read() counts add up to counted (%llu == %llu)",
	    what, (unsigned long long)text_sum, (unsigned long long)st.total.counted);
}

void expect_cfg(int fd, const struct hotstack_config *c, int want, const char *what)
{
	int got = xioctl(fd, HOTSTACK_IOC_CONFIGURE, (void *)c);

	if (!got && fd >= 0 && fd < 1024)
		fd_hw_event[fd] = c->event_type != PERF_TYPE_SOFTWARE;

	tap(got == want, "CONFIGURE %s: %s (got %s)", what,
	    want ? strerrorname_np(want) : "success", got ? strerrorname_np(got) : "success");
}

void expect_ioc(int fd, unsigned long cmd, void *arg, int want, const char *what)
{
	int got = xioctl(fd, cmd, arg);

	tap(got == want, "%s: %s (got %s)", what, want ? strerrorname_np(want) : "success",
	    got ? strerrorname_np(got) : "success");
}

/* A number from a file (a cgroup's memory.current, a sysctl, a tracepoint's id), or -1. */
long long cg_read(const char *cg, const char *file)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/* Seconds on the monotonic clock. */
double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Write @text to the file at @path; 0 or -1. */
int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

int set_online(unsigned int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online", cpu);
	return write_file(path, on ? "1" : "0");
}

/* Live samples of @slot in the active generation, from the mapping. */
__u64 slot_samples(const struct map *m, unsigned int slot)
{
	return __atomic_load_n(&slot_stats(m, m->h->active, slot)->samples, __ATOMIC_RELAXED);
}

/* Whether @cond(@arg) became true within 20 s (checked every 10 ms). */
bool wait_for(bool (*cond)(void *), void *arg)
{
	unsigned int i;

	for (i = 0; i < 2000; i++) {
		if (cond(arg))
			return true;
		msleep(10);
	}
	return cond(arg);
}

/*
 * Busy children, one pinned to each online CPU: each faults fresh pages in,
 * sleeps (a context switch) and spins, so that every software event fires
 * on every CPU.
 */
static pid_t busy_pids[64];
static unsigned int busy_nr;

void busy_start(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF), cpu;

	busy_nr = 0;
	for (cpu = 0; cpu < n && busy_nr < 64; cpu++) {
		cpu_set_t set;
		pid_t pid;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pid = fork();
		if (!pid) {
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(0);	/* offline CPU */
			for (;;) {
				char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				volatile unsigned long spin;

				if (p != MAP_FAILED) {
					memset(p, 1, 1 << 16);
					munmap(p, 1 << 16);
				}
				usleep(200);
				for (spin = 0; spin < 200000; spin++)
					;
			}
		}
		if (pid > 0)
			busy_pids[busy_nr++] = pid;
	}
}

void busy_stop(void)
{
	unsigned int i;

	for (i = 0; i < busy_nr; i++) {
		kill(busy_pids[i], SIGKILL);
		waitpid(busy_pids[i], NULL, 0);
	}
	busy_nr = 0;
}
