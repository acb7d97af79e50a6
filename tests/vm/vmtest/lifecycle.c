// SPDX-License-Identifier: GPL-2.0
/*
 * A session's life: a refused CONFIGURE, read() across RESET, memory
 * cgroups, rmmod with a mapping left, sessions' churn.
 */
#include "vmtest.h"

/* A session that sampled hs_workload: configured with @c, stopped. */
static void sampled(int fd, const struct hotstack_config *c, const char *what)
{
	profile_workload(fd, c, what, 6, 4, 50);
}

/* Whether GET_STATS says @fd is READY with @c's tables and @size bytes. */
static bool kept(int fd, const struct hotstack_config *c, __u64 size, __u64 counted)
{
	struct hotstack_stats st;

	return !get_stats(fd, &st, 0) && st.state == HOTSTACK_STATE_READY &&
	       st.table_entries == c->table_entries && st.arena_frames == c->arena_frames &&
	       st.cpu_entries == (c->cpu_entries ? c->cpu_entries : c->table_entries) &&
	       st.mmap_size == size && st.total.counted == counted;
}

void test_lifecycle(void)
{
	struct hotstack_config c, big;
	struct hotstack_stats st;
	char buf[4096];
	ssize_t n;
	int fd = open_dev();

	default_config(&c);
	sampled(fd, &c, "lifecycle");
	get_stats(fd, &st, 0);
	tap(st.total.counted > 0 && st.table_entries == c.table_entries &&
	    st.arena_frames == c.arena_frames && st.cpu_entries == c.cpu_entries,
	    "lifecycle: GET_STATS gives the tables' sizes in use (a store of %u stacks and %llu "
	    "frames, %u count entries a CPU)", st.table_entries,
	    (unsigned long long)st.arena_frames, st.cpu_entries);

	/* Past max_memory_mb: E2BIG, and the session is as it was. */
	big = c;
	big.arena_frames = HOTSTACK_MAX_ARENA;
	expect_cfg(fd, &big, E2BIG, "lifecycle: a store past max_memory_mb");
	tap(kept(fd, &c, st.mmap_size, st.total.counted),
	    "lifecycle: after the refused CONFIGURE the previous tables and counts are kept");
	/* The CPUs' count tables count too: 2 x 256 MiB a CPU. */
	big = c;
	big.cpu_entries = HOTSTACK_MAX_ENTRIES;
	expect_cfg(fd, &big, E2BIG, "lifecycle: count tables past max_memory_mb");
	tap(kept(fd, &c, st.mmap_size, st.total.counted),
	    "lifecycle: and after that one too");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "lifecycle: START after the refused CONFIGURE");
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "lifecycle: STOP");

	/* A read() in progress starts over after RESET and after CONFIGURE. */
	n = read(fd, buf, 16);
	tap(n == 16, "lifecycle: read() the first 16 bytes (%zd)", n);
	expect_ioc(fd, HOTSTACK_IOC_RESET, NULL, 0, "lifecycle: RESET");
	n = read(fd, buf, sizeof(buf));
	tap(n == 0, "lifecycle: after RESET read() starts over: nothing left to read (%zd)", n);
	sampled(fd, &c, "lifecycle, again");
	n = read(fd, buf, 16);
	tap(n == 16, "lifecycle: read() the first 16 bytes again (%zd)", n);
	expect_cfg(fd, &c, 0, "lifecycle: CONFIGURE during a read");
	n = read(fd, buf, sizeof(buf));
	tap(n == 0, "lifecycle: after CONFIGURE read() starts over: empty tables (%zd)", n);

	/*
	 * max_depth 1: the interrupted IP alone, each line one frame, marked
	 * (or [user]: a sample in user mode, without user stacks).
	 */
	c.max_depth = 1;
	sampled(fd, &c, "lifecycle, max_depth 1");
	{
		char *text = read_all(fd), *line, *save, *frames[8];
		unsigned int lines = 0, bad = 0;

		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			int nf = split_frames(line, frames, 8);

			lines++;
			bad += !(nf == 2 && !strcmp(frames[0], "[truncated]")) &&
			       !(nf == 1 && !strcmp(frames[0], "[user]"));
		}
		tap(lines && !bad, "lifecycle: max_depth 1 reads as [truncated];FRAME lines (%u, %u not)",
		    lines, bad);
		free(text);
	}
	close(fd);
}

static int cg_write(const char *cg, const char *file, long long v)
{
	char path[256], buf[32];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = v < 0 ? snprintf(buf, sizeof(buf), "max") : snprintf(buf, sizeof(buf), "%lld", v);
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Run in the memory cgroup @cg: the tables are charged to it, and its
 * limit refuses tables that do not fit (ENOMEM, nothing changed).
 */
void test_memcg(const char *cg)
{
	struct hotstack_config c, big;
	struct hotstack_stats st;
	long long before, after, closed;
	int fd = open_dev();

	default_config(&c);
	c.table_entries = 1 << 16;
	c.arena_frames = 1 << 20;
	before = cg_read(cg, "memory.current");
	expect_cfg(fd, &c, 0, "memcg: an 11 MiB store a generation");
	get_stats(fd, &st, 0);
	after = cg_read(cg, "memory.current");
	/* memory.current moves by per-CPU batches of 64 pages: within 1 MiB. */
	tap(before >= 0 && after - before >= (long long)st.mmap_size - (1 << 20),
	    "memcg: the cgroup is charged the tables (%lld bytes more, tables %llu)",
	    after - before, (unsigned long long)st.mmap_size);
	tap(cg_write(cg, "memory.max", after + (8 << 20)) == 0, "memcg: memory.max 8 MiB above");
	big = c;
	big.arena_frames = 1 << 21;
	expect_cfg(fd, &big, ENOMEM, "memcg: tables past the cgroup's limit");
	tap(kept(fd, &c, st.mmap_size, 0), "memcg: the previous tables are kept");
	cg_write(cg, "memory.max", -1);
	close(fd);
	closed = cg_read(cg, "memory.current");
	tap(after - closed >= (long long)st.mmap_size - (1 << 20),
	    "memcg: closing the session uncharges them (%lld bytes less)", after - closed);
}

/* A mapping that outlives close() keeps the module; munmap lets it go. */
void test_unload_mapped(void)
{
	struct hotstack_config c;
	struct map m;
	int fd = open_dev(), busy;

	default_config(&c);
	expect_cfg(fd, &c, 0, "unload");
	if (map_session(fd, &m)) {
		tap(false, "unload: mmap");
		return;
	}
	close(fd);
	busy = unload();
	tap(busy == EAGAIN || busy == EBUSY,
	    "unload: rmmod with a mapping alive after close() is refused (%s)",
	    busy ? strerror(busy) : "it unloaded");
	tap(m.h->version == HOTSTACK_MMAP_VERSION, "unload: the mapping still reads");
	munmap(m.base, m.size);
	busy = unload();
	tap(!busy, "unload: after munmap rmmod works (%s)", busy ? strerror(busy) : "ok");
}

/* N sessions started, stopped and closed quickly: a storm of events. */
void test_churn(unsigned int n)
{
	struct hotstack_config c;
	unsigned int i, ok = 0;

	for (i = 0; i < n; i++) {
		int fd = open_dev();

		default_config(&c);
		c.table_entries = 16;	/* small: fast to set up */
		c.cpu_entries = 16;
		c.flags = HOTSTACK_CFG_FREQ;
		c.event_type = PERF_TYPE_SOFTWARE;
		c.event_config = PERF_COUNT_SW_CPU_CLOCK;
		c.sample = 1;		/* 1 Hz: no sample, no event but the session's */
		ok += !xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) &&
		      !xioctl(fd, HOTSTACK_IOC_START, NULL) && !xioctl(fd, HOTSTACK_IOC_STOP, NULL);
		close(fd);
	}
	tap(ok == n, "%u sessions started, stopped and closed (%u ok)", n, ok);
}
