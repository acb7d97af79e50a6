// SPDX-License-Identifier: GPL-2.0
/*
 * The 32-bit compat path of /dev/hotstack: a static i386 program (built
 * with the i686 cross compiler) on an x86_64 kernel with IA32 emulation.
 * Every ioctl goes through compat_ptr_ioctl(), pointers inside structs
 * (cpus_ptr) are 32-bit, and the structs must have the same layout.
 * Prints TAP lines; exits non-zero if any check failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/hotstack.h>

/* The structs' layout is the 64-bit kernel's: the sizes it checks. */
_Static_assert(sizeof(struct hotstack_config) == HOTSTACK_CONFIG_SIZE_VER2, "config");
_Static_assert(sizeof(struct hotstack_stats) == HOTSTACK_STATS_SIZE_VER6, "stats");
_Static_assert(sizeof(struct hotstack_stack) == 48, "stack");
_Static_assert(sizeof(struct hotstack_count) == 16, "count");
_Static_assert(sizeof(struct hotstack_store_stats) == 64, "store stats");

static int failures;

static void tap(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - compat32: ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures += !cond;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

int main(void)
{
	struct hotstack_info info = { .size = sizeof(info) };
	struct hotstack_stats st = { .size = sizeof(st) };
	struct hotstack_config c;
	unsigned long long cpus = 1, drops = 0;
	const struct hotstack_mmap_header *h;
	unsigned long long sum, counts = 0, entries = 0, bad = 0;
	unsigned int i, lines = 0;
	static char text[1 << 16];
	char *line, *nl;
	size_t len;
	ssize_t n;
	void *p;
	int fd = open("/dev/hotstack", O_RDWR);

	tap(sizeof(void *) == 4 && fd >= 0, "a 32-bit process opens /dev/hotstack");
	if (fd < 0)
		return 1;
	i = xioctl(fd, HOTSTACK_IOC_GET_INFO, &info);
	tap(!i && info.abi_version == HOTSTACK_ABI_VERSION && info.max_depth == HOTSTACK_MAX_DEPTH,
	    "GET_INFO: ABI %u, max depth %u", info.abi_version, info.max_depth);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = HOTSTACK_CFG_FREQ;
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_CPU_CLOCK;
	c.sample = 1000;
	c.cpus_ptr = (unsigned long)&cpus;	/* a 32-bit pointer in a __u64 */
	c.cpus_words = 1;
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.max_depth = 64;
	c.table_entries = 256;
	c.arena_frames = 4096;
	c.cpu_entries = 64;
	tap(!xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), "CONFIGURE CPU 0, its mask at a 32-bit pointer");
	i = xioctl(fd, HOTSTACK_IOC_GET_STATS, &st);
	tap(!i && st.nr_cpus == 1 && st.state == HOTSTACK_STATE_READY && st.table_entries == 256 &&
	    st.cpu_entries == 64,
	    "GET_STATS: READY, 1 CPU (%u), a store of 256 stacks, 64 count entries (%u, %u)",
	    st.nr_cpus, st.table_entries, st.cpu_entries);
	c.cpus_ptr = 16;
	tap(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) == EFAULT, "a bad 32-bit mask pointer: EFAULT");
	tap(xioctl(fd, HOTSTACK_IOC_GET_STATS, (void *)16) == EFAULT,
	    "GET_STATS at a bad pointer: EFAULT");
	tap(!xioctl(fd, HOTSTACK_IOC_START, NULL), "START");
	/* Until CPU 0 has sampled (at most 20 s), spinning there in user mode. */
	for (i = 0; i < 200; i++) {
		double end = now_s() + 0.1;

		while (now_s() < end)
			;
		if (!xioctl(fd, HOTSTACK_IOC_GET_STATS, &st) && st.total.counted >= 10)
			break;
	}
	tap(!xioctl(fd, HOTSTACK_IOC_STOP, NULL), "STOP");
	xioctl(fd, HOTSTACK_IOC_GET_STATS, &st);
	for (i = 0; i < HOTSTACK_DROP_MAX; i++)
		drops += st.total.drops[i];
	tap(st.total.counted >= 10 && st.total.samples == st.total.counted + drops,
	    "the counters add up: samples %llu = counted %llu + drops %llu",
	    (unsigned long long)st.total.samples, (unsigned long long)st.total.counted, drops);
	p = mmap(NULL, st.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	h = p;
	tap(p != MAP_FAILED && h->version == HOTSTACK_MMAP_VERSION && h->nr_slots == 1 &&
	    h->mmap_size == st.mmap_size && h->slot_cpu[0] == 0 && h->table_entries == 256 &&
	    h->cpu_entries == 64 && h->entry_size == sizeof(struct hotstack_stack) &&
	    h->count_size == sizeof(struct hotstack_count),
	    "mmap of the tables in a 32-bit address space (%llu bytes)",
	    (unsigned long long)st.mmap_size);
	if (p != MAP_FAILED) {
		/* CPU 0's count entries, each naming a stored stack, through 32-bit pointers. */
		const char *gen = (const char *)p + h->gen_offset[h->active];
		const struct hotstack_store_stats *ss = (const void *)gen;
		const struct hotstack_stack *stacks = (const void *)(gen + h->store_stats_size);
		const struct hotstack_cpu_stats *cs = (const void *)(gen + h->store_size);
		const struct hotstack_count *ct = (const void *)((const char *)cs +
								 h->cpu_stats_size);

		for (i = 0; i < h->cpu_entries; i++) {
			if (!ct[i].stack)
				continue;
			entries++;
			counts += ct[i].count;
			bad += ct[i].stack > h->table_entries ||
			       (stacks[ct[i].stack - 1].hash & HOTSTACK_STACK_STATE) !=
			       HOTSTACK_STACK_READY;
		}
		tap(counts == st.total.counted && entries == cs->entries && !bad &&
		    ss->stacks == st.total.entries && ss->arena_used == st.total.arena_used,
		    "the mapping's count entries add up to counted (%llu, %llu) and name stored "
		    "stacks (%llu do not); the store's %llu stacks are GET_STATS' entries (%llu)",
		    counts, (unsigned long long)st.total.counted, bad,
		    (unsigned long long)ss->stacks, (unsigned long long)st.total.entries);
		munmap(p, st.mmap_size);
	}
	/*
	 * Folded lines whose counts add up to counted: a sample of this
	 * process in user mode is "[user] N" alone (no walk of a 32-bit
	 * task's stack), and it may have had CPU 0 to itself throughout.
	 */
	for (len = 0; (n = read(fd, text + len, sizeof(text) - 1 - len)) > 0; len += n)
		;
	text[len] = '\0';
	for (line = text, sum = 0; (nl = strchr(line, '\n')); line = nl + 1) {
		const char *sp = memrchr(line, ' ', nl - line);

		sum += sp ? strtoull(sp + 1, NULL, 10) : 0;
		lines++;
	}
	tap(n == 0 && lines > 0 && !*line && sum == st.total.counted,
	    "read() gives folded stacks: %u lines, their counts add up to %llu (counted %llu)",
	    lines, sum, (unsigned long long)st.total.counted);
	close(fd);
	return failures ? 1 : 0;
}
