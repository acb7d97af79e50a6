// SPDX-License-Identifier: GPL-2.0
/*
 * The shared store of stacks on a machine of many CPUs: every CPU runs the
 * same new stacks at once, each is stored once, counted exactly, and the
 * memory is the formula's (uapi: "Memory").
 */
#include "vmtest.h"

#define PAGE		4096UL
#define ALIGN_UP(x, a)	(((x) + (a) - 1) / (a) * (a))

/* The bytes a session of @c takes on @cpus CPUs, by the formula. */
static __u64 formula(const struct hotstack_config *c, unsigned int cpus)
{
	__u64 hdr = ALIGN_UP(sizeof(struct hotstack_mmap_header) + 4UL * cpus, PAGE);
	__u64 store = ALIGN_UP(PAGE + c->table_entries * 48ULL + c->arena_frames * 8, PAGE);
	__u64 slot = ALIGN_UP(ALIGN_UP(sizeof(struct hotstack_cpu_stats), 64) +
			      c->cpu_entries * 16ULL, 128);

	return ALIGN_UP(hdr + 2 * (store + cpus * slot), PAGE);
}

static __u64 memory_used(void)
{
	struct hotstack_info info = { .size = sizeof(info) };
	int fd = open_dev();

	if (fd < 0 || ioctl(fd, HOTSTACK_IOC_GET_INFO, &info))
		info.memory_used = 0;
	if (fd >= 0)
		close(fd);
	return info.memory_used;
}

/*
 * One hs_workload writer pinned on each online CPU, all let go at once by
 * closing a pipe: the same 32 stacks, new to the store, on every CPU.
 */
static unsigned int run_everywhere(unsigned int ms)
{
	int go[2], ready[2];
	unsigned int n = 0, ok = 0, cpu;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char c;
	int status;

	if (pipe(go) || pipe(ready))
		return 0;
	for (cpu = 0; cpu < (unsigned int)cpus; cpu++) {
		pid_t pid = fork();

		if (pid == 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			close(go[1]);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(2);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 0)
				_exit(3);
			_exit(workload_write(6, 32, ms) ? 0 : 1);
		}
		n += pid > 0;
	}
	close(go[0]);
	close(ready[1]);
	for (cpu = 0; cpu < n; cpu++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(go[1]);		/* every writer's read() returns 0 at once */
	close(ready[0]);
	while (n--)
		if (wait(&status) > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
			ok++;
	return ok;
}

void test_store(unsigned int ms)
{
	unsigned int cpus = sysconf(_SC_NPROCESSORS_ONLN), ran;
	struct hotstack_config c;
	struct hotstack_stats st;
	struct gen_view v;
	int fd = open_dev();
	struct map m;
	bool sound;
	__u64 used;

	default_config(&c);
	c.table_entries = 4096;
	c.arena_frames = 1 << 16;
	c.cpu_entries = 256;
	expect_cfg(fd, &c, 0, "store: every CPU, a store of 4096 stacks, 256 counts a CPU");
	used = memory_used();
	tap(used == formula(&c, cpus),
	    "store: GET_INFO's memory_used is the formula's on %u CPUs (%llu, %llu bytes)", cpus,
	    (unsigned long long)used, (unsigned long long)formula(&c, cpus));
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "store: START");
	ran = run_everywhere(ms);
	tap(ran == cpus, "store: hs_workload ran on each of the %u CPUs at once (%u did)", cpus,
	    ran);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "store: STOP");
	/* Every count exact, no stack stored twice (gen_walk()), as GET_STATS says. */
	check_invariant(fd, "store");
	get_stats(fd, &st, 0);
	printf("#   %llu samples, %llu stacks stored, %llu frames; %llu busy drops\n",
	       (unsigned long long)st.total.samples, (unsigned long long)st.total.entries,
	       (unsigned long long)st.total.arena_used,
	       (unsigned long long)st.total.drops[HOTSTACK_DROP_BUSY]);
	if (map_session(fd, &m)) {
		tap(false, "store: mmap");
		close(fd);
		return;
	}
	sound = gen_walk(&m, m.h->active, &v, "store");
	tap(sound && !v.dead && !v.unnamed,
	    "store: %llu stacks, each stored once and counted (%llu places left without frames, "
	    "%llu uncounted)", (unsigned long long)v.ready, (unsigned long long)v.dead,
	    (unsigned long long)v.unnamed);
	/* hs_workload's 32 stacks at least, each on many CPUs. */
	tap(v.shared >= 32 && v.counts > v.ready,
	    "store: %llu stacks counted on several CPUs, kept once (%llu counts of %llu stacks)",
	    (unsigned long long)v.shared, (unsigned long long)v.counts,
	    (unsigned long long)v.ready);
	munmap(m.base, m.size);
	close(fd);
}

/* GET_INFO's memory_used of a default record's tables on the first @n CPUs. */
static __u64 memory_on(unsigned int n, const struct hotstack_config *def)
{
	struct hotstack_config c = *def;
	__u64 mask[4] = { 0 }, used;
	unsigned int i;
	int fd = open_dev();

	for (i = 0; i < n; i++)
		mask[i / 64] |= 1ULL << (i % 64);
	c.cpus_ptr = (unsigned long)mask;
	c.cpus_words = 4;
	if (xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c))
		used = 0;
	else
		used = memory_used();
	close(fd);
	return used;
}

/*
 * The memory of the tool's default record (a store of 16384 stacks and
 * 262144 frames, 4096 counts a CPU) on 2, 8, 16 and every CPU, against
 * the formula, and 384 CPUs by the formula alone.
 */
void test_store_memory(void)
{
	unsigned int cpus = sysconf(_SC_NPROCESSORS_ONLN), n[] = { 2, 8, 16, 64 }, k;
	struct hotstack_config c;
	__u64 two = 0, sixteen = 0;

	default_config(&c);
	c.table_entries = 16384;
	c.arena_frames = 262144;
	c.cpu_entries = 4096;
	for (k = 0; k < sizeof(n) / sizeof(n[0]) && n[k] <= cpus; k++) {
		__u64 used = memory_on(n[k], &c);

		tap(used && used == formula(&c, n[k]),
		    "memory: record's default tables on %u CPUs: %.2f MiB, the formula's (%.2f)",
		    n[k], used / 1048576.0, formula(&c, n[k]) / 1048576.0);
		if (n[k] == 2)
			two = used;
		if (n[k] == 16)
			sixteen = used;
	}
	if (sixteen)
		tap(sixteen <= 2 * two && sixteen < (8ULL << 20),
		    "memory: 16 CPUs take at most twice 2 CPUs' and under 8 MiB (%.2f, %.2f MiB)",
		    sixteen / 1048576.0, two / 1048576.0);
	printf("#   384 CPUs by the formula: %.1f MiB (record's defaults)\n",
	       formula(&c, 384) / 1048576.0);
}
