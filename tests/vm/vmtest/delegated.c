// SPDX-License-Identifier: GPL-2.0
/*
 * The delegated group's policy, and the users' and the group's quotas.
 */
#include "vmtest.h"

/* CONFIGURE @c as a delegated user: @want, and a TAP line saying @what. */
static void expect_delegated(int fd, struct hotstack_config *c, int want, const char *what)
{
	char line[128];

	snprintf(line, sizeof(line), "delegated: %s", what);
	expect_cfg(fd, c, want, line);
}

/*
 * A child that spins in user mode, then reads /dev/zero (vfs_read) for a
 * second; @undumpable: after prctl(PR_SET_DUMPABLE, 0), and returns once
 * the child has made that call.
 */
static pid_t fork_user_then_read(bool undumpable)
{
	static char zero[1 << 16];
	int ready[2], z;
	pid_t child;
	double end;
	char c;

	if (pipe(ready))
		return -1;
	child = fork();
	if (child) {
		close(ready[1]);
		if (child > 0 && undumpable && read(ready[0], &c, 1) != 1)
			printf("# the child %d did not become undumpable\n", child);
		close(ready[0]);
		return child;
	}
	if (undumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(1);
	if (write(ready[1], "", 1) != 1)
		_exit(1);
	z = open("/dev/zero", O_RDONLY);
	uspin(1000);
	for (end = now_s() + 1; now_s() < end;)
		if (read(z, zero, sizeof(zero)) < 0)
			break;
	_exit(0);
}

/*
 * A child that waits; made not dumpable when the test writes to *@ctl,
 * which returns once it is. Killed by the test.
 */
static pid_t fork_waiter(int *ctl)
{
	int go[2], ready[2];
	pid_t child;
	char c;

	ctl[0] = ctl[1] = -1;
	if (pipe(go) || pipe(ready))
		return -1;
	child = fork();
	if (!child) {
		if (read(go[0], &c, 1) != 1 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
		    write(ready[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(go[0]);
	close(ready[1]);
	ctl[0] = go[1];
	ctl[1] = ready[0];
	return child;
}

/* Make fork_waiter()'s child (@ctl) not dumpable; whether it is done. */
static bool waiter_undumpable(const int *ctl)
{
	char c;

	return write(ctl[0], "", 1) == 1 && read(ctl[1], &c, 1) == 1;
}

/*
 * Task mode as a delegated user: ptrace's read rule decides, at CONFIGURE
 * and again at START. @other: root's process; @capsp: one of the user's
 * own, with capabilities the user does not have.
 */
static void test_delegated_task(int fd, pid_t other, pid_t capsp)
{
	struct hotstack_config c;
	int ctl[2];
	pid_t child;

	default_config(&c);
	c.flags = HOTSTACK_CFG_FREQ | HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK;
	c.sample = 1000;
	c.pid = other;
	expect_delegated(fd, &c, EPERM, "task mode on another user's process");
	c.pid = capsp;
	expect_delegated(fd, &c, EPERM,
			 "task mode on its own process with capabilities it lacks");
	child = fork_waiter(ctl);
	c.pid = child;
	expect_delegated(fd, &c, 0, "task mode on its own process");
	tap(waiter_undumpable(ctl) && xioctl(fd, HOTSTACK_IOC_START, NULL) == EPERM,
	    "delegated: START in task mode: EPERM once the process is not dumpable");
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	close(ctl[0]);
	close(ctl[1]);
}

/*
 * As a member of the module's group without CAP_PERFMON (runas): the
 * policy of README's Privilege section (read() yes, mmap no). @other is a
 * process of another user, @capsp one of the user's own with capabilities
 * the user lacks, both spinning in user mode.
 */
void test_delegated(pid_t other, pid_t capsp)
{
	struct hotstack_info info = { .size = sizeof(info) };
	struct hotstack_config c;
	struct hotstack_stats st;
	char own[32], hidden[48], shown[32], *text;
	pid_t child, undumpable;
	void *p;
	int fd = open_dev(), ret;
	bool ok;

	ret = xioctl(fd, HOTSTACK_IOC_GET_INFO, &info);
	tap(!ret && info.max_freq == 1000,
	    "delegated: GET_INFO's max_freq is group_max_freq, 1000 (got %u)", info.max_freq);
	default_config(&c);
	c.flags = HOTSTACK_CFG_FREQ;
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_CPU_CLOCK;
	c.sample = 1001;
	expect_delegated(fd, &c, EPERM, "cpu-clock at 1001 Hz, above group_max_freq");
	c.flags = 0;
	c.sample = 999999;
	expect_delegated(fd, &c, EPERM, "cpu-clock every 999999 ns, more often than 1000 Hz");
	c.sample = 1000000;
	expect_delegated(fd, &c, 0, "cpu-clock every 1000000 ns");
	c.event_config = PERF_COUNT_SW_PAGE_FAULTS;
	c.sample = 1;
	expect_delegated(fd, &c, EPERM, "page-faults by a period (counts are not time)");
	c.flags = HOTSTACK_CFG_FREQ;
	c.sample = 100;
	expect_delegated(fd, &c, 0, "page-faults at 100 Hz");
	c.event_type = PERF_TYPE_RAW;
	c.event_config = 0xc0;
	expect_delegated(fd, &c, EPERM, "a raw PMU event");
	/* Wall-clock time's clock: the same limit (its waits have none). */
	c.flags = HOTSTACK_CFG_FREQ | HOTSTACK_CFG_OFF_CPU;
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_CPU_CLOCK;
	c.sample = 1001;
	c.keys |= HOTSTACK_KEY_CONTEXT;
	c.off_cpu_tasks = 1024;
	expect_delegated(fd, &c, EPERM, "wall-clock time's cpu-clock at 1001 Hz");

	/* Kernel and user stacks, by process: another user's user stack stays hidden. */
	default_config(&c);
	c.flags = HOTSTACK_CFG_FREQ;
	c.sample = 1000;
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.keys = HOTSTACK_KEY_TGID;
	expect_delegated(fd, &c, 0, "kernel and user stacks at 1000 Hz");
	/* Its own, but not dumpable: ptrace would refuse, so does hotstack. */
	undumpable = fork_user_then_read(true);
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "delegated: START");
	child = fork_user_then_read(false);
	waitpid(child, NULL, 0);
	waitpid(undumpable, NULL, 0);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "delegated: STOP");
	get_stats(fd, &st, 0);
	p = mmap(NULL, st.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	tap(p == MAP_FAILED && errno == EPERM, "delegated: mmap (raw addresses) is EPERM");
	text = read_all(fd);
	snprintf(own, sizeof(own), "[pid %d];0x", child);
	/* Followed by ';' and kernel frames, or by ' ' and the count (user mode). */
	snprintf(hidden, sizeof(hidden), "[pid %d];[user hidden]", other);
	snprintf(shown, sizeof(shown), "[pid %d];0x", other);
	tap(strstr(text, own) != NULL, "delegated: its own process's user frames are there (%s)",
	    own);
	tap(strstr(text, hidden) && !strstr(text, shown),
	    "delegated: another user's process has no user frames, marked (%s)", hidden);
	snprintf(hidden, sizeof(hidden), "[pid %d];[user hidden]", undumpable);
	snprintf(shown, sizeof(shown), "[pid %d];0x", undumpable);
	ok = strstr(text, hidden) && !strstr(text, shown);
	tap(ok, "delegated: its own process made not dumpable has no user frames, marked (%s)",
	    hidden);
	snprintf(hidden, sizeof(hidden), "[pid %d];[user hidden]", capsp);
	snprintf(shown, sizeof(shown), "[pid %d];0x", capsp);
	ok = ok && strstr(text, hidden) && !strstr(text, shown);
	tap(strstr(text, hidden) && !strstr(text, shown),
	    "delegated: its own process with capabilities it lacks has no user frames, marked (%s)",
	    hidden);
	ok = ok && strstr(text, ";vfs_read;") && !kernel_address_in(text);
	tap(strstr(text, ";vfs_read;") && !kernel_address_in(text),
	    "delegated: read() names kernel frames (vfs_read), never a kernel address");
	if (!ok)
		printf("#   %.4000s\n", text);
	free(text);
	test_delegated_task(fd, other, capsp);
	close(fd);
}

/* ---- delegated users' quotas (module loaded with group=1234) ---------- */

/* Be @uid, real and effective, a member of group 1234; root again with 0. */
static void quota_be(uid_t uid)
{
	static const gid_t group = 1234;

	if ((!uid && setresuid(0, 0, 0)) || setgroups(1, &group) ||
	    (uid && setresuid(uid, uid, 0))) {
		printf("not ok - quota: cannot become uid %u: %s\n", uid, strerror(errno));
		exit(1);
	}
}

/* open() as @uid: the descriptor, or -errno. */
static int quota_open(uid_t uid)
{
	int fd, err;

	quota_be(uid);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	err = errno;
	quota_be(0);
	return fd < 0 ? -err : fd;
}

static void quota_expect_open(uid_t uid, int want, int *fd, const char *what)
{
	int got = quota_open(uid);

	tap(want ? got == -want : got >= 0, "quota: open as uid %u, %s: %s (got %s)", uid, what,
	    want ? strerrorname_np(want) : "success", got < 0 ? strerrorname_np(-got) : "success");
	*fd = got;
}

/*
 * max_sessions=3 group_max_sessions=1: one session a user, two for the
 * group (three quarters of 3, rounded down), and root keeps the third.
 */
void test_quota_sessions(void)
{
	int a, b, c, d, e;

	quota_expect_open(1000, 0, &a, "its first session");
	quota_expect_open(1000, EDQUOT, &b, "past group_max_sessions=1");
	quota_expect_open(1001, 0, &b, "another user's first");
	quota_expect_open(1002, EDQUOT, &c, "past the group's 2 of max_sessions=3");
	quota_expect_open(0, 0, &d, "root, with the group's sessions all taken");
	quota_expect_open(0, EBUSY, &e, "root, past max_sessions=3");
	close(a);
	quota_expect_open(1002, 0, &c, "once uid 1000's is closed");
	close(b);
	close(c);
	close(d);
}

/* CONFIGURE as @uid: CPU 0, @entries stacks (16 frames each), @hz. */
static void quota_cfg(int fd, uid_t uid, __u32 entries, __u64 hz, int want, const char *what)
{
	static __u64 cpu0 = 1;
	struct hotstack_config c;
	char line[160];

	default_config(&c);
	c.flags = HOTSTACK_CFG_FREQ;
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_CPU_CLOCK;
	c.sample = hz;
	c.table_entries = entries;
	c.arena_frames = 16 * entries;
	c.cpu_entries = entries;
	c.cpus_words = 1;
	c.cpus_ptr = (uintptr_t)&cpu0;
	snprintf(line, sizeof(line), "quota: uid %u, %u stacks at %llu Hz, %s", uid, entries,
		 (unsigned long long)hz, what);
	quota_be(uid);
	expect_cfg(fd, &c, want, line);
	quota_be(0);
}

/* GET_INFO as @uid. */
static void quota_info(int fd, uid_t uid, struct hotstack_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	quota_be(uid);
	if (xioctl(fd, HOTSTACK_IOC_GET_INFO, info))
		printf("# quota: GET_INFO as uid %u failed\n", uid);
	quota_be(0);
}

static __u64 quota_size(int fd)
{
	struct hotstack_stats st;

	return get_stats(fd, &st, 0) ? 0 : st.mmap_size;
}

/*
 * max_memory_mb=4 group_max_memory_mb=2 group_max_freq=1000: tables of
 * 4096 stacks on one CPU (a store of 4096, 4096 count entries) take 1.52
 * MiB, of 1024 0.39 MiB, of 512 0.2 MiB; the group may hold 3 MiB in
 * all, root the fourth.
 */
void test_quota_use(void)
{
	struct hotstack_info info;
	int a, b, c, d, e;
	__u64 size_a;

	quota_expect_open(1000, 0, &a, "session A");
	quota_expect_open(1000, 0, &b, "session B");
	quota_cfg(a, 1000, 4096, 600, 0, "A");
	size_a = quota_size(a);
	quota_info(a, 1000, &info);
	tap(info.user_max_sessions == 4 && info.user_sessions == 2 &&
	    info.user_max_memory == 2 << 20 && info.user_memory_used == size_a &&
	    info.user_freq_used == 600 && info.max_freq == 1000 && !info.pad2,
	    "quota: GET_INFO as uid 1000: %u of %u sessions, %llu of %llu bytes (A's %llu), "
	    "%u Hz used of %u", info.user_sessions, info.user_max_sessions,
	    (unsigned long long)info.user_memory_used, (unsigned long long)info.user_max_memory,
	    (unsigned long long)size_a, info.user_freq_used, info.max_freq);
	quota_cfg(b, 1000, 4096, 100, EDQUOT, "B past its user's 2 MiB");
	/* Small: a CONFIGURE needs room for the old tables and the new for a moment. */
	quota_cfg(b, 1000, 512, 600, EDQUOT, "B: 600 + 600 Hz past group_max_freq");
	quota_cfg(b, 1000, 512, 400, 0, "B: 600 + 400 Hz");
	quota_cfg(b, 1000, 512, 300, 0, "B again, its 400 Hz replaced");
	quota_info(a, 1000, &info);
	tap(info.user_freq_used == 900 && info.user_memory_used == size_a + quota_size(b),
	    "quota: uid 1000 holds 900 Hz (got %u) and A's and B's tables (%llu bytes)",
	    info.user_freq_used, (unsigned long long)info.user_memory_used);
	quota_expect_open(1001, 0, &c, "session C");
	quota_cfg(c, 1001, 1024, 1000, 0, "C: another user's own 1000 Hz");
	quota_expect_open(1002, 0, &d, "session D");
	quota_cfg(d, 1002, 4096, 100, EDQUOT, "D: the group's 3 MiB of max_memory_mb=4 taken");
	quota_expect_open(0, 0, &e, "session E");
	quota_cfg(e, 0, 4096, 100, 0, "E: root, in the quarter kept");
	quota_info(e, 0, &info);
	tap(!info.user_max_sessions && !info.user_sessions && !info.user_max_memory &&
	    !info.user_memory_used && !info.user_freq_used,
	    "quota: GET_INFO as root: no quota, all user_* fields 0");
	close(a);
	quota_cfg(b, 1000, 512, 700, 0, "B: A closed, its 600 Hz given back");
	quota_cfg(d, 1002, 4096, 100, 0, "D: A closed, its tables given back");
	close(b);
	close(c);
	close(d);
	close(e);
	quota_expect_open(1000, 0, &a, "all closed");
	quota_info(a, 1000, &info);
	tap(info.user_sessions == 1 && !info.user_memory_used && !info.user_freq_used,
	    "quota: all closed, uid 1000 holds this session only, no memory, no rate "
	    "(%u, %llu, %u)", info.user_sessions, (unsigned long long)info.user_memory_used,
	    info.user_freq_used);
	close(a);
}

/*
 * As root: become @uid and @gid keeping the permitted capabilities (not the
 * effective ones), dumpable again, and spin in user mode for @ms.
 */
int uspin_caps(uid_t uid, gid_t gid, unsigned int ms)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) || setgid(gid) ||
	    setuid(uid) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
		perror("uspin-caps");
		return 1;
	}
	uspin(ms);
	return 0;
}
