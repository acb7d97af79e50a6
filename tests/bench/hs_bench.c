// SPDX-License-Identifier: GPL-2.0
/*
 * Overhead benchmark workload, run in the deterministic (icount) VM, where
 * guest time counts guest instructions. Runs a syscall-heavy loop under one
 * sampler and prints "MODE HZ ELAPSED_NS SAMPLES HANDLER_NS":
 *
 *   none            no sampler
 *   empty, unwind   hs_bench.ko floors: empty handler, unwind-only handler
 *   empty-jitter, unwind-jitter
 *                   the same, their periods drawn as hotstack's are
 *   switch-empty, switch-unwind
 *                   hs_bench.ko's off-CPU floors: a sched_switch probe
 *                   that counts, or only walks the stack of the task
 *                   leaving (SAMPLES: the switches)
 *   hotstack-ip     hotstack, max_depth 1 (the interrupted IP only)
 *   hotstack        hotstack, kernel stacks (max_depth 127)
 *   spin            no sampler, the hostile user-mode spin below
 *   worst           hotstack's worst case on that spin: max_depth 1024
 *                   (worst127: the tool's default, 127),
 *                   kernel and user stacks, collapse, every key; the
 *                   spin's frame pointer heads a chain of 8192 user frames
 *                   with one return address (collapse walks them all)
 *   collide         hotstack (kernel and user stacks, every key, no
 *                   collapse, max_depth 127) on a spin whose user stack
 *                   is one of 256 of 127 frames that hash alike
 *                   whatever the seed: the table's worst case (the
 *                   line ends with the samples dropped as collisions;
 *                   spin-collide: that spin alone)
 *
 * For worst, HANDLER_NS is followed by the highest handler-time bucket
 * (ns, from hotstack's histogram): no timed sample took that long.
 *
 * HANDLER_NS is hotstack's own accounting of time in its handler, scaled
 * from the timed samples to all (0 for the others).
 *
 *   hotstack-budget hotstack with a budget of 1% of the CPU
 *
 * runs the loop untimed first, for at least 1.2 s (the budget's steady
 * state: its windows are a second long by then; record --budget checks
 * the start from outside), as any mode does with HS_BENCH_WARMUP set;
 * HS_BENCH_DEPTH sets the frames walked and kept (unwind, hotstack;
 * default 127). HS_BENCH_WINDOWS=N runs the timed loop in N equal parts
 * and adds " windows N NS..." to the line: each part's time (a budget
 * checked window by window from outside the module).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <linux/hotstack.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The work: syscalls that spend their time in the kernel, deterministic. */
static void small_loop(unsigned long iters)
{
	char buf[256];
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
	unsigned long i;

	for (i = 0; i < iters; i++) {
		syscall(SYS_getppid);
		if (read(zero, buf, sizeof(buf)) < 0 || write(null, buf, sizeof(buf)) < 0)
			exit(1);
	}
	close(zero);
	close(null);
}

/*
 * Context switches: a byte to a child and back through two pipes, @iters
 * times. On the icount VM's one CPU each round trip is two switches, one
 * to the child and one back: off-CPU time's work.
 */
static void pingpong(unsigned long iters)
{
	int ab[2], ba[2];
	unsigned long i;
	char c = 0;
	pid_t pid;

	if (pipe(ab) || pipe(ba))
		exit(1);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (!pid) {
		/* Its copies of the parent's ends closed: EOF when the parent is done. */
		close(ab[1]);
		close(ba[0]);
		while (read(ab[0], &c, 1) == 1)
			if (write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	for (i = 0; i < iters; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			exit(1);
	close(ab[1]);
	waitpid(pid, NULL, 0);
	close(ba[0]);
}

/*
 * The work, deterministic, chosen by HS_BENCH_WORK:
 *   small (default)  the loop above (make check's overhead step)
 *   large            64 KiB reads of /dev/zero (the kernel's time in copies)
 *   faults           64 KiB mapped (always at one place), 1 to 16 of its
 *                    pages faulted in (from the same sequence), unmapped
 *   deep:D:P         the test workload module's recursion, depth D, P
 *                    distinct stacks, 10^5 additions in the leaf each
 *   pingpong         a byte through pipes to a child and back (above)
 * The samplers' costs depend on where in the loop the samples land, and in
 * the icount VM both the loop and the sampling period are exact: these
 * loops add 0-255 user-mode steps from a fixed random sequence to each
 * iteration, so that the samples spread over the whole loop whatever each
 * sampler's own length. An iteration of faults is as long as about 10^4
 * of those steps per page: there the number of pages varies instead (at
 * 16 pages, a period of 600 us was 4 iterations: every sample landed at
 * about the same place of one).
 */
static void workload(unsigned long iters)
{
	static char buf[1 << 16];
	const char *work = getenv("HS_BENCH_WORK");
	int zero, null, proc = -1;
	unsigned int depth = 0, patterns = 0;
	unsigned long long jitter = 1;
	unsigned long i, j;
	char cmd[64], *area = NULL;

	if (!work || !strcmp(work, "small")) {
		small_loop(iters);
		return;
	}
	if (!strcmp(work, "pingpong")) {
		pingpong(iters);
		return;
	}
	if (sscanf(work, "deep:%u:%u", &depth, &patterns) == 2) {
		proc = open("/proc/hs_workload", O_WRONLY);
		snprintf(cmd, sizeof(cmd), "%u %u 0 100", depth, patterns);
	} else if (strcmp(work, "faults") && strcmp(work, "large")) {
		fprintf(stderr, "hs_bench: unknown HS_BENCH_WORK %s\n", work);
		exit(2);
	}
	/*
	 * faults maps its 64 KiB at one place, 1 MiB into a reserved 2 MiB
	 * range: its page table is made once. Where mmap() put it decided
	 * whether every iteration made and freed one, and so the loop's
	 * cost moved from process to process (by up to 3.5% here).
	 */
	if (!strcmp(work, "faults")) {
		char *r = mmap(NULL, 4 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			       MAP_NORESERVE, -1, 0);

		if (r == MAP_FAILED) {
			perror("hs_bench: mmap");
			exit(1);
		}
		area = (char *)(((unsigned long)r + (2 << 20) - 1) & ~((2UL << 20) - 1)) +
		       (1 << 20);
	}
	zero = open("/dev/zero", O_RDONLY);
	null = open("/dev/null", O_WRONLY);
	if (zero < 0 || null < 0 || (depth && proc < 0)) {
		perror("hs_bench: open");
		exit(1);
	}
	for (i = 0; i < iters; i++) {
		jitter = jitter * 6364136223846793005ULL + 1442695040888963407ULL;
		for (j = jitter >> 56; j; j--)
			__asm__ volatile("" ::: "memory");
		if (depth) {
			if (write(proc, cmd, strlen(cmd)) < 0)
				exit(1);
		} else if (!strcmp(work, "faults")) {
			char *p = mmap(area, 1 << 16, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			unsigned int pg;

			if (p == MAP_FAILED)
				exit(1);
			for (pg = 0; pg <= ((jitter >> 52) & 15); pg++)
				p[pg << 12] = 1;
			munmap(p, 1 << 16);
		} else if (read(zero, buf, sizeof(buf)) < 0 || write(null, buf, sizeof(buf)) < 0) {
			exit(1);
		}
	}
	close(zero);
	close(null);
	if (proc >= 0)
		close(proc);
}

/* A frame record of code built with frame pointers. */
struct frame {
	struct frame *next;
	unsigned long ret;
};

/* Spin @iters times in user mode, the frame pointer at @chain. */
static void hostile_spin(unsigned long iters, struct frame *chain)
{
#if defined(__x86_64__)
	__asm__ volatile("push %%rbp\n\t"
			 "mov %1, %%rbp\n\t"
			 "1: dec %0\n\t"
			 "jnz 1b\n\t"
			 "pop %%rbp"
			 : "+r"(iters) : "r"(chain) : "memory", "cc");
#elif defined(__aarch64__)
	__asm__ volatile("stp x29, x30, [sp, #-16]!\n\t"
			 "mov x29, %1\n\t"
			 "1: subs %0, %0, #1\n\t"
			 "b.ne 1b\n\t"
			 "ldp x29, x30, [sp], #16"
			 : "+r"(iters) : "r"(chain) : "memory", "cc");
#else
	(void)chain;
	while (iters--)
		__asm__ volatile("" ::: "memory");
#endif
}

#define CHAIN	8192

static void hostile(unsigned long iters)
{
	static struct frame chain[CHAIN];
	unsigned int i;

	/* Strictly increasing, aligned, one return address: nothing stops the walk. */
	for (i = 0; i < CHAIN; i++) {
		chain[i].next = i + 1 < CHAIN ? &chain[i + 1] : NULL;
		chain[i].ret = (unsigned long)hostile_spin + 4;
	}
	hostile_spin(iters, chain);
}

/*
 * Stacks that collide in the table's hash whatever its seed: a frame
 * round (stacktab.h, hs_mix_frame()) maps a difference in bit 63 of its
 * frame to bit 63 of the state alone (a multiplication by an odd number),
 * which the next round rotates to bit 30, where a difference in the next
 * frame's bit 30 cancels it. Eight such pairs near the end of a chain of
 * 126 frames give 256 stacks of 127 (with the IP) that compare equal up
 * to frame 110: another one each 1000 spins.
 */
#define COLLIDE_FRAMES	126
#define COLLIDE_PAIRS	8

static void hostile_collide(unsigned long iters)
{
	static struct frame chain[COLLIDE_FRAMES];
	unsigned long base = (unsigned long)hostile_spin, v, b;
	unsigned long long x = 1;
	unsigned int i, p, j;

	/* Frame i returns to base + 16 (i + 1), flipped where a pair says. */
	for (i = 0; i < COLLIDE_FRAMES; i++) {
		chain[i].next = i + 1 < COLLIDE_FRAMES ? &chain[i + 1] : NULL;
		chain[i].ret = base + 16 * (i + 1);
	}
	for (v = 0; v < iters; v++) {
		/*
		 * One of the 256 at random (an exact period would see a few):
		 * pair p's bits set where bit p of the top byte of x is.
		 */
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		for (p = 0; p < COLLIDE_PAIRS; p++) {
			j = COLLIDE_FRAMES - 2 * (p + 1);
			b = x >> (56 + p) & 1;
			chain[j].ret = (base + 16 * (j + 1)) ^ b << 63;
			chain[j + 1].ret = (base + 16 * (j + 2)) ^ b << 30;
		}
		hostile_spin(1000, chain);
	}
}

static int proc_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

static unsigned long long proc_read_u64(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(fd);
	}
	return strtoull(buf, NULL, 10);
}

#define MAX_WINDOWS 16

int main(int argc, char **argv)
{
	unsigned long long start, elapsed, samples = 0, handler_ns = 0, before = 0;
	struct hotstack_config c = { .size = sizeof(c) };
	struct hotstack_stats st = { .size = sizeof(st) };
	const char *mode;
	unsigned long iters;
	unsigned long long part[MAX_WINDOWS];
	unsigned int hz, depth;
	int fd = -1, windows, i;
	char cmd[64];

	if (argc != 4) {
		fprintf(stderr, "usage: hs_bench MODE HZ ITERATIONS\n");
		return 2;
	}
	mode = argv[1];
	hz = atoi(argv[2]);
	iters = strtoul(argv[3], NULL, 10);

	/* HS_BENCH_DEPTH: frames walked (unwind) and kept (hotstack), default 127. */
	depth = getenv("HS_BENCH_DEPTH") ? atoi(getenv("HS_BENCH_DEPTH")) : 127;
	if (!strncmp(mode, "empty", 5) || !strncmp(mode, "unwind", 6) ||
	    !strncmp(mode, "switch-", 7)) {
		snprintf(cmd, sizeof(cmd), "%s %u %u", mode, hz, depth);
		if (proc_write("/proc/hs_bench", cmd))
			return 1;
	} else if (!strncmp(mode, "hotstack", 8) || !strncmp(mode, "worst", 5) ||
		   !strcmp(mode, "collide")) {
		c.flags = HOTSTACK_CFG_FREQ;
		c.event_type = PERF_TYPE_SOFTWARE;
		c.event_config = PERF_COUNT_SW_CPU_CLOCK;
		c.sample = hz;
		c.stacks = HOTSTACK_STACK_KERNEL;
		c.max_depth = strcmp(mode, "hotstack-ip") ? depth : 1;
		/*
		 * The icount VM has one CPU: the store is its table, and its
		 * count table as large (cpu_entries 0), as under ABI 1.
		 */
		c.table_entries = 4096;
		c.arena_frames = 1 << 16;
		/* 1% of the CPU: 10^4 parts per million. */
		if (!strcmp(mode, "hotstack-budget"))
			c.budget_ppm = 10000;
		/* The hostile spins: kernel and user stacks, every key. */
		if (!strncmp(mode, "worst", 5) || !strcmp(mode, "collide")) {
			c.stacks |= HOTSTACK_STACK_USER;
			c.keys = HOTSTACK_KEY_ALL;
			/* worst: the deepest allowed; the others the tool's default depth */
			c.max_depth = strcmp(mode, "worst") ? 127 : HOTSTACK_MAX_DEPTH;
		}
		if (!strncmp(mode, "worst", 5)) {
			c.flags |= HOTSTACK_CFG_COLLAPSE;
			c.arena_frames = 1 << 20;
		}
		fd = open("/dev/hotstack", O_RDWR);
		if (fd < 0 || ioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) ||
		    ioctl(fd, HOTSTACK_IOC_START, 0)) {
			perror("hotstack");
			return 1;
		}
	} else if (strcmp(mode, "none") && strcmp(mode, "spin") && strcmp(mode, "spin-collide")) {
		fprintf(stderr, "hs_bench: unknown mode %s\n", mode);
		return 2;
	}

	/*
	 * The budget's steady state: a run past its short first windows,
	 * untimed; its samples are not counted below.
	 */
	if (!strcmp(mode, "hotstack-budget") || getenv("HS_BENCH_WARMUP")) {
		/* At least 1.2 s: past the short windows, whatever the loop's length. */
		start = now_ns();
		do
			workload(iters);
		while (now_ns() - start < 1200000000ULL);
		if (fd >= 0 && ioctl(fd, HOTSTACK_IOC_GET_STATS, &st))
			return 1;
		before = st.total.samples;
	}
	windows = getenv("HS_BENCH_WINDOWS") ? atoi(getenv("HS_BENCH_WINDOWS")) : 1;
	if (windows < 1 || windows > MAX_WINDOWS) {
		fprintf(stderr, "hs_bench: HS_BENCH_WINDOWS is 1 to %d\n", MAX_WINDOWS);
		return 2;
	}
	start = now_ns();
	if (!strcmp(mode, "spin") || !strncmp(mode, "worst", 5)) {
		hostile(iters * 1000);
	} else if (!strcmp(mode, "collide") || !strcmp(mode, "spin-collide")) {
		hostile_collide(iters);
	} else {
		for (i = 0; i < windows; i++) {
			workload(iters / windows);
			part[i] = now_ns();
		}
	}
	elapsed = now_ns() - start;

	if (fd >= 0) {
		ioctl(fd, HOTSTACK_IOC_STOP, 0);
		ioctl(fd, HOTSTACK_IOC_GET_STATS, &st);
		samples = st.total.samples - before;
		handler_ns = st.total.timed ? st.total.handler_ns * samples / st.total.timed : 0;
		close(fd);
	} else if (strcmp(mode, "none")) {
		proc_write("/proc/hs_bench", "stop");
		samples = proc_read_u64("/proc/hs_bench");
	}
	printf("%s %u %llu %llu %llu", mode, hz, elapsed, samples, handler_ns);
	if (!strncmp(mode, "worst", 5) || !strcmp(mode, "collide")) {
		int b = HOTSTACK_HIST_BUCKETS - 1;

		while (b > 0 && !st.total.hist[b])
			b--;
		printf(" %llu", 2ULL << b);
		/* collide: the samples dropped as collisions */
		if (!strcmp(mode, "collide"))
			printf(" %llu",
			       (unsigned long long)st.total.drops[HOTSTACK_DROP_COLLISION]);
	}
	if (windows > 1) {
		printf(" windows %d", windows);
		for (i = 0; i < windows; i++)
			printf(" %llu", part[i] - (i ? part[i - 1] : start));
	}
	printf("\n");
	return 0;
}
