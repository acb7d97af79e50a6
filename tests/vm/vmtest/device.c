// SPDX-License-Identifier: GPL-2.0
/*
 * Opening the device, GET_INFO, the sessions' limit, and every
 * CONFIGURE, state and mmap misuse.
 */
#include "vmtest.h"

void test_getinfo(void)
{
	struct hotstack_info info;
	/* A struct from a newer caller: one page, the tail beyond ours. */
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned char *big;
	unsigned char *two;
	int fd = open_dev();
	size_t i;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	tap(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info) == 0, "GET_INFO succeeds");
	tap(info.size == sizeof(info), "GET_INFO leaves size as given");
	tap(info.abi_version == HOTSTACK_ABI_VERSION, "GET_INFO abi_version is %u (got %u)",
	    HOTSTACK_ABI_VERSION, info.abi_version);
	tap(info.max_depth == HOTSTACK_MAX_DEPTH, "GET_INFO max_depth is %u (got %u)",
	    HOTSTACK_MAX_DEPTH, info.max_depth);
	tap(info.max_sessions == 16, "GET_INFO max_sessions is the default 16 (got %u)",
	    info.max_sessions);
	tap(info.nr_sessions == 1, "GET_INFO nr_sessions counts this one (got %u)",
	    info.nr_sessions);
	tap(info.max_memory == 256ULL << 20, "GET_INFO max_memory is 256 MiB (got %llu)",
	    (unsigned long long)info.max_memory);
	tap(info.max_freq == HOTSTACK_MAX_FREQ, "GET_INFO max_freq for root is %u (got %u)",
	    HOTSTACK_MAX_FREQ, info.max_freq);
	tap(info.memory_used == 0, "GET_INFO memory_used with no table is 0 (got %llu)",
	    (unsigned long long)info.memory_used);
	/* --wakers where the kernel has the sched_waking tracepoint. */
	tap(info.features == (HOTSTACK_FEAT_USER_TABLES | HOTSTACK_FEAT_CGROUP_PATH |
			      (kallsyms_has("__tracepoint_sched_waking\n") ?
			       HOTSTACK_FEAT_WAKERS : 0)) &&
	    !info.pad && !info.reserved[0] && !info.reserved[1],
	    "GET_INFO features are the unwind tables', cgroups' paths and wakers (with "
	    "sched_waking), pad and reserved 0");
	tap(!info.user_max_sessions && !info.user_sessions && !info.user_max_memory &&
	    !info.user_memory_used && !info.user_freq_used && !info.pad2,
	    "GET_INFO for root: no quota, the user_* fields and pad2 are 0");
	tap(sizeof(info) == HOTSTACK_INFO_SIZE_VER2, "struct hotstack_info is VER2 size");
	/* A caller of the first published size gets the fields up to reserved. */
	memset(&info, 0xa5, sizeof(info));
	memset(&info, 0, HOTSTACK_INFO_SIZE_VER0);
	info.size = HOTSTACK_INFO_SIZE_VER0;
	tap(!xioctl(fd, HOTSTACK_IOC_GET_INFO, &info) && info.max_depth == HOTSTACK_MAX_DEPTH &&
	    info.user_max_sessions == 0xa5a5a5a5 && info.pad2 == 0xa5a5a5a5,
	    "GET_INFO of VER0 size answers that size, nothing past it");

	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, NULL), EFAULT, "with a NULL pointer");
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, (void *)16), EFAULT,
		     "with a bad pointer");

	memset(&info, 0, sizeof(info));
	info.size = 0;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, "with size 0");
	info.size = HOTSTACK_INFO_SIZE_VER0 - 8;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL,
		     "with size below VER0");

	info.size = sizeof(info);
	info.flags = 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, "with flags 0x1");
	info.flags = 0x80000000u;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL,
		     "with flags 0x80000000");
	info.flags = 0;
	for (i = 0; i < 2; i++) {
		char what[64];

		memset(info.reserved, 0, sizeof(info.reserved));
		info.reserved[i] = 1ULL << (i * 16 + 40);
		snprintf(what, sizeof(what), "with reserved[%zu] nonzero", i);
		expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, what);
	}
	memset(info.reserved, 0, sizeof(info.reserved));
	/* Out fields are ignored on input: a struct passed again as it came back. */
	info.memory_used = ~0ULL;
	info.max_freq = ~0U;
	info.abi_version = 77;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), 0, "with out fields set on input");

	/* Two pages, the second one unmapped: a size that runs into it faults. */
	two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED) {
		tap(false, "mmap two pages");
		return;
	}
	munmap(two + page, page);
	big = two;
	memset(big, 0, page);
	*(__u32 *)big = page + 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), E2BIG, "with size above a page");
	*(__u32 *)big = page;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), 0,
		     "with a page-sized struct, zero tail");
	tap(((struct hotstack_info *)big)->abi_version == HOTSTACK_ABI_VERSION,
	    "GET_INFO with a larger struct fills the known part");
	for (i = sizeof(info); i < page && !big[i]; i++)
		;
	tap(i == page, "GET_INFO with a larger struct writes nothing past its own");
	big[page - 1] = 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), E2BIG,
		     "with a larger struct, nonzero tail");
	/* The struct runs off the end of the mapping. */
	memset(big, 0, page);
	*(__u32 *)(big + page - sizeof(__u32)) = sizeof(info);
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big + page - sizeof(__u32)), EFAULT,
		     "with a struct crossing into unmapped memory");
	munmap(two, page);

	info.size = sizeof(info);
	expect_errno(xioctl(fd, _IOWR(HOTSTACK_IOC_MAGIC, 0x7f, struct hotstack_info), &info),
		     ENOTTY, "unknown command number");
	expect_errno(xioctl(fd, _IOWR('x', 0x00, struct hotstack_info), &info), ENOTTY,
		     "wrong ioctl magic");
	expect_errno(xioctl(fd, _IOR(HOTSTACK_IOC_MAGIC, 0x00, struct hotstack_info), &info),
		     ENOTTY, "wrong direction (_IOR)");
	expect_errno(xioctl(fd, _IO(HOTSTACK_IOC_MAGIC, 0x00), &info), ENOTTY,
		     "wrong direction (_IO)");
	expect_errno(xioctl(fd, _IOWR(HOTSTACK_IOC_MAGIC, 0x00, __u64), &info), 0,
		     "with another size in the command number (size field rules)");
	close(fd);
}

void test_sessions(unsigned int max)
{
	struct hotstack_info info;
	int *fds = calloc(max, sizeof(int));
	unsigned int i, opened = 0;
	int fd;

	for (i = 0; i < max; i++) {
		fds[i] = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
		if (fds[i] >= 0)
			opened++;
	}
	tap(opened == max, "%u sessions open (opened %u)", max, opened);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	tap(xioctl(fds[0], HOTSTACK_IOC_GET_INFO, &info) == 0, "GET_INFO with %u sessions open",
	    max);
	tap(info.nr_sessions == max && info.max_sessions == max,
	    "GET_INFO counts %u of %u sessions (got %u of %u)", max, max, info.nr_sessions,
	    info.max_sessions);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	tap(fd < 0 && errno == EBUSY, "session %u is refused with EBUSY (got %s)", max + 1,
	    fd < 0 ? strerrorname_np(errno) : "success");
	if (fd >= 0)
		close(fd);
	close(fds[max - 1]);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	tap(fd >= 0, "a session opens again after one closes");
	if (fd >= 0)
		close(fd);
	for (i = 0; i + 1 < max; i++)
		close(fds[i]);
	free(fds);
}

static int errno_by_name(const char *name)
{
	int e;

	for (e = 1; e < 134; e++)
		if (strerrorname_np(e) && !strcmp(strerrorname_np(e), name))
			return e;
	fprintf(stderr, "unknown errno name %s\n", name);
	exit(2);
}

void test_open(const char *expect)
{
	int fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	int want = strcmp(expect, "ok") ? errno_by_name(expect) : 0;

	tap(err == want, "open as uid %u gid %u: %s (got %s)", getuid(), getgid(),
	    want ? expect : "success", err ? strerrorname_np(err) : "success");
	if (fd >= 0)
		close(fd);
}

int runas(int argc, char **argv)
{
	gid_t groups[16];
	int ngroups = 0;
	char *gids = argv[1], *tok;
	uid_t uid;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID GID[,GID...] CMD ARGS...\n");
		return 2;
	}
	uid = strtoul(argv[0], NULL, 10);
	for (tok = strtok(gids, ","); tok && ngroups < 16; tok = strtok(NULL, ","))
		groups[ngroups++] = strtoul(tok, NULL, 10);
	if (setgroups(ngroups, groups) || setgid(groups[0]) || setuid(uid)) {
		perror("runas");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

/*
 * CONFIGURE @c on session @fd (CPU 0 alone, READY) and check what
 * GET_STATS and the mapping say of its tables: @cpu_entries count
 * entries a CPU.
 */
static void expect_tables(int fd, const struct hotstack_config *c, __u32 cpu_entries,
			  const char *what)
{
	struct hotstack_stats st;
	struct map m;

	expect_cfg(fd, c, 0, what);
	tap(!get_stats(fd, &st, 0) && st.table_entries == c->table_entries &&
	    st.arena_frames == c->arena_frames && st.cpu_entries == cpu_entries && !st.pad4,
	    "%s: GET_STATS says a store of %u stacks and %llu frames, %u count entries a CPU "
	    "(%u, %llu, %u)", what, c->table_entries, (unsigned long long)c->arena_frames,
	    cpu_entries, st.table_entries, (unsigned long long)st.arena_frames, st.cpu_entries);
	if (map_session(fd, &m)) {
		tap(false, "%s: mmap", what);
		return;
	}
	tap(map_layout_ok(&m, c, 1, what) && m.h->cpu_entries == cpu_entries,
	    "%s: the mapping's header and layout say so", what);
	munmap(m.base, m.size);
}

/*
 * hotstack_config.cpu_entries: its own size, or 0 for table_entries'; a
 * caller of ABI 1 (a HOTSTACK_CONFIG_SIZE_VER1 struct) has no such field,
 * whatever its memory holds past the struct. GET_STATS of
 * HOTSTACK_STATS_SIZE_VER4 has no cpu_entries either: left as it was.
 */
static void test_cpu_entries(int fd)
{
	__u64 cpu0 = 1;
	struct hotstack_config c;
	struct hotstack_stats st;

	default_config(&c);
	c.cpus_ptr = (unsigned long)&cpu0;
	c.cpus_words = 1;
	c.cpu_entries = 64;
	expect_tables(fd, &c, 64, "cpu_entries 64, a store of 2048");
	c.cpu_entries = 0;
	expect_tables(fd, &c, c.table_entries, "cpu_entries 0: table_entries'");
	c.table_entries = 256;
	c.cpu_entries = 4096;
	c.size = HOTSTACK_CONFIG_SIZE_VER1;
	expect_tables(fd, &c, 256, "an ABI 1 struct (VER1 size): table_entries' count entries");
	c.size = sizeof(c);
	c.cpu_entries = 4096;
	expect_tables(fd, &c, 4096, "cpu_entries 4096 with a store of 256");

	memset(&st, 0xa5, sizeof(st));
	st.size = HOTSTACK_STATS_SIZE_VER4;
	st.flags = 0;
	tap(!xioctl(fd, HOTSTACK_IOC_GET_STATS, &st) && st.table_entries == 256 &&
	    st.cpu_entries == 0xa5a5a5a5 && st.pad4 == 0xa5a5a5a5,
	    "GET_STATS of VER4 size: table_entries %u, cpu_entries past its size left alone",
	    st.table_entries);
}

void test_config_errors(void)
{
	struct hs_event_spec event = test_event;
	struct hotstack_config c;
	struct hotstack_stats st;
	__u64 cpus[2];
	int fd = open_dev();
	void *p;

	/* The field checks on cpu-clock: a PMU has rules of its own. */
	test_event.type = PERF_TYPE_SOFTWARE;
	test_event.config = PERF_COUNT_SW_CPU_CLOCK;

	expect_ioc(fd, HOTSTACK_IOC_START, NULL, EINVAL, "START before CONFIGURE");
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, EINVAL, "STOP before CONFIGURE");
	expect_ioc(fd, HOTSTACK_IOC_SNAPSHOT, NULL, EINVAL, "SNAPSHOT before CONFIGURE");
	expect_ioc(fd, HOTSTACK_IOC_RESET, NULL, EINVAL, "RESET before CONFIGURE");
	tap(get_stats(fd, &st, 0) == 0 && st.state == HOTSTACK_STATE_NEW && !st.total.samples &&
	    !st.table_entries && !st.cpu_entries && !st.pad4,
	    "GET_STATS before CONFIGURE: state NEW, no samples, no tables");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	tap(p == MAP_FAILED && errno == EINVAL, "mmap before CONFIGURE: EINVAL");

#define BAD(field, value, err) do {					\
		default_config(&c);					\
		c.field = value;					\
		expect_cfg(fd, &c, err, #field " = " #value);		\
	} while (0)
	BAD(flags, 1U << 4, EINVAL);
	BAD(flags, 1U << 31, EINVAL);
	BAD(event_type, PERF_TYPE_TRACEPOINT, EINVAL);
	BAD(event_type, 99, EINVAL);
	BAD(event_config, PERF_COUNT_SW_DUMMY, EINVAL);
	BAD(precise, 1, EINVAL);
	BAD(sample, 0, EINVAL);
	BAD(sample, HOTSTACK_MAX_FREQ + 1, EINVAL);
	BAD(pid, 1, EINVAL);
	BAD(stacks, 0, EINVAL);
	BAD(stacks, 4, EINVAL);
	BAD(max_depth, 0, EINVAL);
	BAD(max_depth, HOTSTACK_MAX_DEPTH + 1, EINVAL);
	BAD(keys, 16, EINVAL);
	BAD(table_entries, 1000, EINVAL);
	BAD(table_entries, 8, EINVAL);
	BAD(table_entries, 1U << 25, EINVAL);
	BAD(arena_frames, 63, EINVAL);
	BAD(arena_frames, (1ULL << 28) + 1, EINVAL);
	BAD(cpu_entries, 1000, EINVAL);
	BAD(cpu_entries, 8, EINVAL);
	BAD(cpu_entries, 1U << 25, EINVAL);
	BAD(pad2, 1, EINVAL);
	BAD(cpus_words, 1, EINVAL);
	BAD(cpus_ptr, 16, EINVAL);
	BAD(size, 8, EINVAL);
	BAD(table_entries, 1U << 24, E2BIG);
	/* 256 MiB of count entries a CPU and generation: past max_memory_mb's 256. */
	BAD(cpu_entries, 1U << 24, E2BIG);
	BAD(budget_ppm, 1000001, EINVAL);
	BAD(nr_cgroups, 1, EINVAL);
	BAD(cgroups_ptr, 16, EINVAL);
	default_config(&c);
	c.nr_cgroups = HOTSTACK_MAX_CGROUPS + 1;
	c.cgroups_ptr = (unsigned long)cpus;
	expect_cfg(fd, &c, EINVAL, "nr_cgroups past HOTSTACK_MAX_CGROUPS");
	c.nr_cgroups = 1;
	c.cgroups_ptr = 16;
	expect_cfg(fd, &c, EFAULT, "cgroups_ptr at an unmapped address");
	{
		__s32 fds[1] = { open("/tmp", O_RDONLY | O_DIRECTORY) };

		c.cgroups_ptr = (unsigned long)fds;
		expect_cfg(fd, &c, EBADF, "a cgroup descriptor of a directory that is no cgroup");
		close(fds[0]);
		fds[0] = -1;
		expect_cfg(fd, &c, EBADF, "a cgroup descriptor that is not open");
	}
	default_config(&c);
	c.flags |= HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK;
	c.pid = getpid();
	c.budget_ppm = 10000;
	expect_cfg(fd, &c, EINVAL, "a budget for per-task events");
	default_config(&c);
	c.reserved = 1;
	expect_cfg(fd, &c, EINVAL, "reserved = 1");
	default_config(&c);
	c.flags = HOTSTACK_CFG_PID;
	c.sample = 1000000;
	expect_cfg(fd, &c, EINVAL, "PID flag with pid 0");
	c.flags = HOTSTACK_CFG_TASK;
	c.pid = 0;
	expect_cfg(fd, &c, EINVAL, "TASK flag without a pid");
	c.flags = HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK;
	c.pid = getpid();
	c.cpus_ptr = (unsigned long)cpus;
	c.cpus_words = 1;
	cpus[0] = 1;
	expect_cfg(fd, &c, EINVAL, "TASK flag with a CPU mask");
	c.cpus_ptr = 0;
	c.cpus_words = 0;
	c.flags = HOTSTACK_CFG_PID;
	c.pid = 5000000;
	expect_cfg(fd, &c, EINVAL, "PID flag with a pid past PID_MAX_LIMIT");
	/* The last pid: no process of this young guest has it. */
	c.pid = cg_read("/proc/sys/kernel", "pid_max") - 1;
	expect_cfg(fd, &c, ESRCH, "PID flag with a pid no process has");
	/* The argument itself: pointers, sizes, a tail the module does not know. */
	expect_ioc(fd, HOTSTACK_IOC_CONFIGURE, NULL, EFAULT, "CONFIGURE with a NULL pointer");
	expect_ioc(fd, HOTSTACK_IOC_CONFIGURE, (void *)16, EFAULT, "CONFIGURE with a bad pointer");
	{
		size_t page = sysconf(_SC_PAGESIZE);
		unsigned char *big = calloc(1, page + 8);

		default_config(&c);
		memcpy(big, &c, sizeof(c));
		*(__u32 *)big = 0;
		expect_ioc(fd, HOTSTACK_IOC_CONFIGURE, big, EINVAL, "CONFIGURE with size 0");
		*(__u32 *)big = page + 1;
		expect_ioc(fd, HOTSTACK_IOC_CONFIGURE, big, E2BIG,
			   "CONFIGURE with a size above a page");
		*(__u32 *)big = sizeof(c) + 8;
		big[sizeof(c) + 3] = 1;
		expect_ioc(fd, HOTSTACK_IOC_CONFIGURE, big, E2BIG,
			   "CONFIGURE from a larger struct with a nonzero tail");
		expect_ioc(fd, HOTSTACK_IOC_GET_STATS, NULL, EFAULT, "GET_STATS with a NULL pointer");
		free(big);
	}
	default_config(&c);
	c.cpus_ptr = (unsigned long)cpus;
	c.cpus_words = 1025;
	expect_cfg(fd, &c, EINVAL, "cpus_words 1025, above the limit");
	default_config(&c);
	c.sample = 1ULL << 63;
	c.flags = 0;
	expect_cfg(fd, &c, EINVAL, "period 2^63");
	default_config(&c);
	c.cpus_ptr = (unsigned long)cpus;
	c.cpus_words = 2;
	cpus[0] = 0;
	cpus[1] = 0;
	expect_cfg(fd, &c, EINVAL, "empty CPU mask");
	cpus[1] = 1;
	expect_cfg(fd, &c, EINVAL, "CPU 64 (not possible here)");
	c.cpus_ptr = 8;
	expect_cfg(fd, &c, EFAULT, "CPU mask at a bad address");
	test_event = event;
	if (!hw_event()) {
		default_config(&c);
		c.event_type = PERF_TYPE_HARDWARE;
		c.event_config = PERF_COUNT_HW_CPU_CYCLES;
		expect_cfg(fd, &c, ENOENT, "cycles on a machine without a PMU");
		default_config(&c);
		c.event_type = PERF_TYPE_RAW;
		c.event_config = 0x3c;
		c.precise = 2;
		expect_cfg(fd, &c, ENOENT, "raw event 0x3c:pp on a machine without a PMU");
	} else {
		/* A PMU: cycles configures (on another session). */
		int hw = open_dev();

		default_config(&c);
		c.event_type = PERF_TYPE_HARDWARE;
		c.event_config = PERF_COUNT_HW_CPU_CYCLES;
		expect_cfg(hw, &c, 0, "cycles on a machine with a PMU");
		close(hw);
	}
	tap(get_stats(fd, &st, 0) == 0 && st.state == HOTSTACK_STATE_NEW,
	    "a refused CONFIGURE leaves the session NEW");

	default_config(&c);
	cpus[0] = 1;
	c.cpus_ptr = (unsigned long)cpus;
	c.cpus_words = 1;
	expect_cfg(fd, &c, 0, "CPU 0 only");
	tap(get_stats(fd, &st, 0) == 0 && st.state == HOTSTACK_STATE_READY && st.nr_cpus == 1,
	    "after CONFIGURE: state READY, 1 CPU (got %u, %u)", st.state, st.nr_cpus);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, EINVAL, "STOP when not running");
	expect_ioc(fd, HOTSTACK_IOC_START, (void *)1, EINVAL, "START with a nonzero argument");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "START");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, EBUSY, "START while running");
	expect_cfg(fd, &c, EBUSY, "while running");
	expect_ioc(fd, HOTSTACK_IOC_SNAPSHOT, (void *)1, EINVAL,
		   "SNAPSHOT with a nonzero argument");
	expect_ioc(fd, HOTSTACK_IOC_RESET, (void *)1, EINVAL, "RESET with a nonzero argument");
	expect_ioc(fd, HOTSTACK_IOC_STOP, (void *)1, EINVAL, "STOP with a nonzero argument");
	st.flags = 2;
	expect_ioc(fd, HOTSTACK_IOC_GET_STATS, &st, EINVAL, "GET_STATS with flags 0x2");
	/* Out fields are ignored on input: the struct as it came back. */
	get_stats(fd, &st, 0);
	expect_ioc(fd, HOTSTACK_IOC_GET_STATS, &st, 0, "GET_STATS with its own output as input");

	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "STOP");

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	tap(p == MAP_FAILED && errno == EPERM, "mmap writable: EPERM");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	tap(p == MAP_FAILED && errno == EINVAL, "mmap at an offset: EINVAL");
	{
		struct map m;

		tap(map_session(fd, &m) == 0, "mmap with the exact length");
		if (m.base) {
			tap(map_layout_ok(&m, &c, 1, "mmap header") && !(m.h->seq & 1) &&
			    m.h->slot_cpu[0] == 0,
			    "mmap header: version 2, one slot (CPU 0), a store of %u stacks and "
			    "%llu frames, %u count entries, the ABI's sizes and offsets, even seq",
			    c.table_entries, (unsigned long long)c.arena_frames, c.cpu_entries);
			tap(mprotect(m.base, m.size, PROT_READ | PROT_WRITE) != 0,
			    "the mapping cannot be made writable");
			/* Moved onto a place of our own: it would skip open/close. */
			p = mmap(NULL, m.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			p = mremap(m.base, m.size, m.size, MREMAP_MAYMOVE | MREMAP_FIXED, p);
			tap(p == MAP_FAILED && errno == EINVAL, "mremap of the mapping: EINVAL");
			p = mremap(m.base, m.size, 2 * m.size, 0);
			tap(p == MAP_FAILED, "the mapping cannot grow");
			p = mmap(NULL, m.size + 4096, PROT_READ, MAP_SHARED, fd, 0);
			tap(p == MAP_FAILED && errno == EINVAL, "mmap longer than the tables: EINVAL");
			expect_cfg(fd, &c, EBUSY, "while the tables are mapped");
			munmap(m.base, m.size);
		}
	}
	expect_cfg(fd, &c, 0, "again once unmapped");
	test_cpu_entries(fd);
	close(fd);
}
