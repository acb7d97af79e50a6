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
	c->table_entries = 1024;
	c->arena_frames = 1 << 14;
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

/* The counters of @slot in generation @gen, in the mapping. */
const struct hotstack_cpu_stats *slot_stats(const struct map *m, unsigned int gen,
						  unsigned int slot)
{
	const struct hotstack_mmap_header *h = m->h;

	return (const void *)((const char *)m->base + h->gen_offset[gen] + slot * h->slot_size);
}

/* Sum of entry counts of generation @gen, and the slots' samples. */
void map_sums(const struct map *m, unsigned int gen, __u64 *counts, __u64 *entries)
{
	const struct hotstack_mmap_header *h = m->h;
	unsigned int slot, i;

	*counts = 0;
	*entries = 0;
	for (slot = 0; slot < h->nr_slots; slot++) {
		const char *base = (const char *)m->base + h->gen_offset[gen] +
				   slot * h->slot_size;
		const struct hotstack_entry *e = (const void *)(base + h->cpu_stats_size);

		for (i = 0; i < h->table_entries; i++) {
			if (!__atomic_load_n(&e[i].hash, __ATOMIC_ACQUIRE))
				continue;
			*counts += e[i].count;
			(*entries)++;
		}
	}
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

/* Check the sum invariant of a quiet session, through ioctl, mmap and read. */
void check_invariant(int fd, const char *what)
{
	struct hotstack_stats st;
	struct map m;
	__u64 counts, entries, text_sum = 0;
	char *text, *line, *save;

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
	map_sums(&m, m.h->active, &counts, &entries);
	tap(counts == st.total.counted && entries == st.total.entries,
	    "%s: mmap entry counts %llu == counted %llu, entries %llu == %llu", what,
	    (unsigned long long)counts, (unsigned long long)st.total.counted,
	    (unsigned long long)entries, (unsigned long long)st.total.entries);
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
