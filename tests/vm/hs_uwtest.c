// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest tests of the module's unwind tables (HOTSTACK_CFG_USER_TABLES:
 * HOTSTACK_IOC_ADD_TABLE, _SET_MAPS, _UNWIND_MISSES) through the ioctls
 * alone, without the tool: each subcommand prints TAP lines and exits
 * non-zero if any check failed.
 *
 *   hs_uwtest errors     every field of the three ioctls checked, the
 *                        limits, the accounting, the misses of a process
 *                        sampled with no mappings
 *   hs_uwtest hostile SECONDS
 *                        tables that lie (random rules over the code a
 *                        sampled child runs), a child whose stack pointer
 *                        is in unmapped memory, one that maps and unmaps
 *                        code and one that execs over and over, all
 *                        sampled with tables and mappings loaded meanwhile:
 *                        no crash (the console is checked by run.sh), and
 *                        every walk ends in one counted way
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/hotstack.h>

static int failures;

static void tap(bool cond, const char *fmt, ...)
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

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static void expect(int got, int want, const char *what)
{
	tap(got == want, "%s: %s (got %s)", what, want ? strerrorname_np(want) : "success",
	    got ? strerrorname_np(got) : "success");
}

static int open_dev(void)
{
	int fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok - open /dev/hotstack: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

static bool is_x86(void)
{
#ifdef __x86_64__
	return true;
#else
	return false;
#endif
}

/* A user-stack session of cpu-clock at @hz, of @pid's process (0: all). */
static void uw_config(struct hotstack_config *c, unsigned int hz, pid_t pid)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = HOTSTACK_CFG_FREQ | HOTSTACK_CFG_USER_TABLES | (pid ? HOTSTACK_CFG_PID : 0);
	c->event_type = PERF_TYPE_SOFTWARE;
	c->event_config = PERF_COUNT_SW_CPU_CLOCK;
	c->sample = hz;
	c->pid = pid;
	c->stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c->max_depth = 32;
	/* ABI 1's 4096 stacks and 65536 frames a CPU, for the guests' 2 CPUs. */
	c->table_entries = 8192;
	c->arena_frames = 1 << 17;
	c->cpu_entries = 4096;
}

static int get_stats(int fd, struct hotstack_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return xioctl(fd, HOTSTACK_IOC_GET_STATS, st);
}

static int get_info(int fd, struct hotstack_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return xioctl(fd, HOTSTACK_IOC_GET_INFO, info);
}

/* A rule of @kind whose CFA is the stack pointer + @cfa: as each arch has one. */
static struct hotstack_unwind_rule sp_rule(int cfa)
{
	struct hotstack_unwind_rule r = {
		.kind = HOTSTACK_UW_CFA_SP, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -8,
		.cfa_off = cfa,
	};

	return r;
}

static int add_table(int fd, const struct hotstack_unwind_row *rows, __u32 nr_rows,
		     const struct hotstack_unwind_rule *rules, __u32 nr_rules,
		     struct hotstack_unwind_table *out)
{
	struct hotstack_unwind_table t = {
		.size = sizeof(t), .rows_ptr = (uintptr_t)rows, .rules_ptr = (uintptr_t)rules,
		.nr_rows = nr_rows, .nr_rules = nr_rules,
	};
	int err = xioctl(fd, HOTSTACK_IOC_ADD_TABLE, &t);

	if (out)
		*out = t;
	return err;
}

static int set_maps(int fd, pid_t pid, const struct hotstack_unwind_map *maps, __u32 nr,
		    __u32 flags)
{
	struct hotstack_unwind_maps m = {
		.size = sizeof(m), .flags = flags, .pid = pid, .nr_maps = nr,
		.maps_ptr = nr ? (uintptr_t)maps : 0,
	};

	return xioctl(fd, HOTSTACK_IOC_SET_MAPS, &m);
}

static int misses(int fd, __u32 *pids, __u32 *nr, __u64 *lost)
{
	struct hotstack_unwind_misses m = {
		.size = sizeof(m), .pids_ptr = (uintptr_t)pids, .nr = *nr,
	};
	int err = xioctl(fd, HOTSTACK_IOC_UNWIND_MISSES, &m);

	*nr = m.nr;
	if (lost)
		*lost = m.lost;
	return err;
}

/* @pid's executable mappings (at most @max), from /proc/PID/maps. */
static unsigned int exec_maps(pid_t pid, struct hotstack_unwind_map *maps, unsigned int max)
{
	char path[64], line[512], perms[8];
	unsigned long long start, end;
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[2] != 'x' ||
		    strstr(line, "[vsyscall]"))
			continue;
		memset(&maps[n], 0, sizeof(maps[n]));
		maps[n].start = start;
		maps[n].end = end;
		maps[n].bias = start;
		n++;
	}
	fclose(f);
	return n;
}

/* A child that spins in user mode until killed. */
static pid_t spinner(void)
{
	pid_t pid = fork();

	if (!pid) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Every rule an architecture refuses, with a name. */
static const struct {
	const char *what;
	struct hotstack_unwind_rule r;
	bool x86, arm64;	/* refused there */
} bad_rules[] = {
	{ "an unknown kind", { .kind = HOTSTACK_UW_KINDS }, true, true },
	{ "a nonzero pad", { .kind = HOTSTACK_UW_NONE, .pad = 1 }, true, true },
	{ "an unknown flag", { .kind = HOTSTACK_UW_CFA_SP, .flags = 4, .ra_off = -8,
			       .cfa_off = 8 }, true, true },
	{ "flags on an end rule", { .kind = HOTSTACK_UW_END, .flags = HOTSTACK_UWF_RA_SAVED },
	  true, true },
	{ "an offset on a stop rule", { .kind = HOTSTACK_UW_EXPR, .cfa_off = 8 }, true, true },
	{ "a frame pointer offset without its flag",
	  { .kind = HOTSTACK_UW_CFA_SP, .flags = HOTSTACK_UWF_RA_SAVED, .fp_off = -16,
	    .ra_off = -8, .cfa_off = 16 }, true, true },
	{ "a return address offset not a whole word",
	  { .kind = HOTSTACK_UW_CFA_SP, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -4,
	    .cfa_off = 16 }, true, true },
	{ "a CFA offset past 2^20",
	  { .kind = HOTSTACK_UW_CFA_SP, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -8,
	    .cfa_off = (1 << 20) + 8 }, true, true },
	{ "a return address not at CFA - 8 (x86_64's call)",
	  { .kind = HOTSTACK_UW_CFA_SP, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -16,
	    .cfa_off = 16 }, true, false },
	{ "a return address in the link register (x86_64 has none)",
	  { .kind = HOTSTACK_UW_CFA_SP, .cfa_off = 16 }, true, false },
	{ "a PLT rule with threshold 16",
	  { .kind = HOTSTACK_UW_PLT, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -8,
	    .cfa_off = 16 }, true, true },
	{ "a PLT rule (x86_64's only)",
	  { .kind = HOTSTACK_UW_PLT, .flags = HOTSTACK_UWF_RA_SAVED, .ra_off = -8,
	    .cfa_off = 11 }, false, true },
};

/* Every ADD_TABLE refusal; returns how many tables were added meanwhile. */
static unsigned int test_table_errors(int fd)
{
	struct hotstack_unwind_rule rules[2] = { sp_rule(8), sp_rule(16) };
	struct hotstack_unwind_row rows[3] = { { 0x100, 0 }, { 0x200, 1 }, { 0x10300, 0 } };
	struct hotstack_unwind_table t;
	unsigned char big[128];
	unsigned int added = 1;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.size = HOTSTACK_UNWIND_TABLE_SIZE_VER0 - 8;
	expect(xioctl(fd, HOTSTACK_IOC_ADD_TABLE, &t), EINVAL, "ADD_TABLE below VER0's size");
	memset(big, 0, sizeof(big));
	*(__u32 *)big = sizeof(big);
	big[sizeof(big) - 1] = 1;
	expect(xioctl(fd, HOTSTACK_IOC_ADD_TABLE, big), E2BIG,
	       "ADD_TABLE larger than ours with a nonzero tail");
#define T(field, value, err, what) do {						\
		memset(&t, 0, sizeof(t));					\
		t.size = sizeof(t);						\
		t.rows_ptr = (uintptr_t)rows;					\
		t.rules_ptr = (uintptr_t)rules;					\
		t.nr_rows = 3;							\
		t.nr_rules = 2;							\
		t.field = value;						\
		expect(xioctl(fd, HOTSTACK_IOC_ADD_TABLE, &t), err, what);	\
	} while (0)
	T(flags, 1, EINVAL, "ADD_TABLE with flags 1");
	T(pad, 1, EINVAL, "ADD_TABLE with pad nonzero");
	T(reserved[0], 1, EINVAL, "ADD_TABLE with reserved[0] nonzero");
	T(reserved[1], 1, EINVAL, "ADD_TABLE with reserved[1] nonzero");
	T(nr_rows, 0, EINVAL, "ADD_TABLE with no rows");
	T(nr_rules, 0, EINVAL, "ADD_TABLE with no rules");
	T(nr_rows, HOTSTACK_UW_MAX_ROWS + 1, EINVAL, "ADD_TABLE with 2^24 + 1 rows");
	T(nr_rules, HOTSTACK_UW_MAX_RULES + 1, EINVAL, "ADD_TABLE with 65537 rules");
	T(rows_ptr, 16, EFAULT, "ADD_TABLE with a bad rows pointer");
	T(rules_ptr, 16, EFAULT, "ADD_TABLE with a bad rules pointer");
	T(id, 5, 0, "ADD_TABLE with out fields set on input (ignored)");
	tap(t.id == 1 && t.bytes > 0, "the first table's id is 1 (got %u), its bytes said (%llu)",
	    t.id, (unsigned long long)t.bytes);
#undef T
	rows[1].pc = 0x100;
	expect(add_table(fd, rows, 3, rules, 2, NULL), EINVAL, "ADD_TABLE with two rows at one pc");
	rows[1].pc = 0x80;
	expect(add_table(fd, rows, 3, rules, 2, NULL), EINVAL, "ADD_TABLE with rows out of order");
	rows[1].pc = 0x200;
	rows[1].rule = 2;
	expect(add_table(fd, rows, 3, rules, 2, NULL), EINVAL,
	       "ADD_TABLE with a row's rule past the rules");
	rows[1].rule = 1;
	for (i = 0; i < sizeof(bad_rules) / sizeof(bad_rules[0]); i++) {
		char what[160];
		bool refused = is_x86() ? bad_rules[i].x86 : bad_rules[i].arm64;

		rules[1] = bad_rules[i].r;
		snprintf(what, sizeof(what), "ADD_TABLE with %s", bad_rules[i].what);
		expect(add_table(fd, rows, 3, rules, 2, NULL), refused ? EINVAL : 0, what);
		added += !refused;
	}
	rules[1] = sp_rule(16);
	expect(add_table(fd, rows, 3, rules, 2, &t), 0, "ADD_TABLE of a good table again");
	/* 4 bytes a row, 12 a rule, 4 a page of 64 KiB and one more: the header's. */
	tap(t.bytes >= 3 * 4 + 2 * 12 + 3 * 4 && t.bytes < 3 * 4 + 2 * 12 + 3 * 4 + 128,
	    "a table's bytes are 4 a row, 12 a rule, 4 a page, and a small header (%llu)",
	    (unsigned long long)t.bytes);
	return added + 1;
}

static void test_maps_errors(int fd, __u32 table)
{
	struct hotstack_unwind_map maps[64], good[64];
	struct hotstack_unwind_maps m;
	unsigned int n = exec_maps(getpid(), good, 64);
	unsigned char big[128];

	tap(n >= 2, "this process has executable mappings (%u)", n);
	memcpy(maps, good, sizeof(maps));
	memset(&m, 0, sizeof(m));
	m.size = HOTSTACK_UNWIND_MAPS_SIZE_VER0 - 8;
	expect(xioctl(fd, HOTSTACK_IOC_SET_MAPS, &m), EINVAL, "SET_MAPS below VER0's size");
	memset(big, 0, sizeof(big));
	*(__u32 *)big = sizeof(big);
	big[sizeof(big) - 1] = 1;
	expect(xioctl(fd, HOTSTACK_IOC_SET_MAPS, big), E2BIG,
	       "SET_MAPS larger than ours with a nonzero tail");
#define M(field, value, err, what) do {						\
		memset(&m, 0, sizeof(m));					\
		m.size = sizeof(m);						\
		m.pid = getpid();						\
		m.nr_maps = n;							\
		m.maps_ptr = (uintptr_t)maps;					\
		m.field = value;						\
		expect(xioctl(fd, HOTSTACK_IOC_SET_MAPS, &m), err, what);	\
	} while (0)
	M(flags, 2, EINVAL, "SET_MAPS with an unknown flag");
	M(reserved, 1, EINVAL, "SET_MAPS with reserved nonzero");
	M(pid, 0, EINVAL, "SET_MAPS of pid 0");
	M(nr_maps, HOTSTACK_UW_MAX_MAPS + 1, EINVAL, "SET_MAPS of 4097 mappings");
	M(maps_ptr, 0, EINVAL, "SET_MAPS with mappings and no pointer");
	M(maps_ptr, 16, EFAULT, "SET_MAPS with a bad pointer");
	M(flags, HOTSTACK_MAPS_REMOVE, EINVAL, "SET_MAPS REMOVE with mappings");
	/* Below every kernel's PID_MAX_LIMIT (32768 with CONFIG_BASE_SMALL). */
	M(pid, 32000, ESRCH, "SET_MAPS of no such process");
	/* kthreadd: a process without an address space. */
	M(pid, 2, ESRCH, "SET_MAPS of a kernel thread");
#undef M
	maps[1].pad = 1;
	expect(set_maps(fd, getpid(), maps, n, 0), EINVAL, "SET_MAPS with a mapping's pad nonzero");
	maps[1] = good[1];
	maps[1].start = maps[0].start;
	expect(set_maps(fd, getpid(), maps, n, 0), EINVAL, "SET_MAPS with mappings overlapping");
	maps[1] = good[1];
	maps[0].end = maps[0].start;
	expect(set_maps(fd, getpid(), maps, n, 0), EINVAL, "SET_MAPS with an empty mapping");
	maps[0] = good[0];
	maps[0].table = table + 1000;
	expect(set_maps(fd, getpid(), maps, n, 0), EINVAL, "SET_MAPS naming no table");
	maps[0].table = table;
	maps[0].end -= 4096;
	expect(set_maps(fd, getpid(), maps, n, 0), ESTALE,
	       "SET_MAPS with a mapping that is part of one");
	maps[0] = good[0];
	maps[0].start = (uintptr_t)&n & ~4095UL;	/* the stack: not executable */
	maps[0].end = maps[0].start + 4096;
	expect(set_maps(fd, getpid(), maps, 1, 0), ESTALE,
	       "SET_MAPS with a mapping that is not executable");
	maps[0] = good[0];
	maps[0].table = table;
	expect(set_maps(fd, getpid(), maps, n, 0), 0, "SET_MAPS of this process's mappings");
	expect(set_maps(fd, getpid(), maps, n, 0), 0, "SET_MAPS of the same again (replaced)");
	expect(set_maps(fd, getpid(), NULL, 0, 0), 0, "SET_MAPS of no mappings");
	expect(set_maps(fd, getpid(), NULL, 0, HOTSTACK_MAPS_REMOVE), 0, "SET_MAPS REMOVE");
	expect(set_maps(fd, getpid(), maps, n, 0), 0, "SET_MAPS after REMOVE");
}

static void test_misses_errors(int fd)
{
	struct hotstack_unwind_misses m;
	__u32 pids[8];

#define X(field, value, err, what) do {						\
		memset(&m, 0, sizeof(m));					\
		m.size = sizeof(m);						\
		m.pids_ptr = (uintptr_t)pids;					\
		m.nr = 8;							\
		m.field = value;						\
		expect(xioctl(fd, HOTSTACK_IOC_UNWIND_MISSES, &m), err, what);	\
	} while (0)
	X(size, HOTSTACK_UNWIND_MISSES_SIZE_VER0 - 8, EINVAL, "UNWIND_MISSES below VER0's size");
	X(flags, 1, EINVAL, "UNWIND_MISSES with flags 1");
	X(pad, 1, EINVAL, "UNWIND_MISSES with pad nonzero");
	X(reserved, 1, EINVAL, "UNWIND_MISSES with reserved nonzero");
	X(nr, 0, EINVAL, "UNWIND_MISSES with no room");
	X(nr, 4097, EINVAL, "UNWIND_MISSES with room for 4097");
	X(pids_ptr, 0, EINVAL, "UNWIND_MISSES without a pointer");
	X(lost, 5, 0, "UNWIND_MISSES with out fields set on input (ignored)");
#undef X
}

static void test_errors(void)
{
	struct hotstack_unwind_rule rules[1] = { sp_rule(8) };
	struct hotstack_unwind_row rows[1] = { { 0x100, 0 } };
	struct hotstack_stats st;
	struct hotstack_info info;
	struct hotstack_config c;
	__u32 pids[64], nr;
	int fd = open_dev(), fd2, err;
	unsigned int tables;
	bool seen;
	pid_t child;
	__u64 lost;

	err = get_info(fd, &info);
	tap(!err && (info.features & HOTSTACK_FEAT_USER_TABLES) &&
	    info.max_unwind == 256ULL << 20 && !info.unwind_used,
	    "GET_INFO: unwind tables offered, max_unwind_mb 256, none used (%llu)",
	    (unsigned long long)info.unwind_used);
	expect(add_table(fd, rows, 1, rules, 1, NULL), EINVAL, "ADD_TABLE before CONFIGURE");
	nr = 8;
	expect(misses(fd, pids, &nr, NULL), EINVAL, "UNWIND_MISSES before CONFIGURE");
	/* The flag's own rules at CONFIGURE. */
	uw_config(&c, 100, 0);
	c.stacks = HOTSTACK_STACK_KERNEL;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), EINVAL,
	       "CONFIGURE unwind tables without user stacks");
	uw_config(&c, 100, 0);
	c.flags &= ~HOTSTACK_CFG_USER_TABLES;
	c.unwind_mb = 4;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), EINVAL,
	       "CONFIGURE with unwind_mb but no unwind tables");
	uw_config(&c, 100, 0);
	c.pad = 1;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), EINVAL, "CONFIGURE with pad nonzero");
	uw_config(&c, 100, 0);
	c.unwind_mb = (1U << 20) + 1;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), EINVAL, "CONFIGURE with unwind_mb 2^20 + 1");
	uw_config(&c, 100, 0);
	c.flags &= ~HOTSTACK_CFG_USER_TABLES;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), 0, "CONFIGURE user stacks, frame pointers");
	expect(add_table(fd, rows, 1, rules, 1, NULL), EINVAL, "ADD_TABLE without unwind tables");
	expect(set_maps(fd, getpid(), NULL, 0, 0), EINVAL, "SET_MAPS without unwind tables");
	expect(misses(fd, pids, &nr, NULL), EINVAL, "UNWIND_MISSES without unwind tables");
	/* An old caller's CONFIGURE (VER0 size) has no unwind_mb: accepted as 0. */
	uw_config(&c, 100, 0);
	c.size = HOTSTACK_CONFIG_SIZE_VER0;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), 0, "CONFIGURE of VER0 size");
	uw_config(&c, 100, 0);
	c.unwind_mb = 1;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), 0,
	       "CONFIGURE unwind tables, 1 MiB of them");

	tables = test_table_errors(fd);
	test_maps_errors(fd, 1);
	test_misses_errors(fd);

	/* 1 MiB: 300000 rows do not fit; the limit is said before they are read. */
	expect(add_table(fd, (void *)16, 300000, rules, 1, NULL), ENOSPC,
	       "ADD_TABLE past the session's unwind_mb");
	err = get_stats(fd, &st);
	tap(!err && st.uw_tables == tables && st.uw_procs == 1 && st.uw_bytes > 0,
	    "GET_STATS: %u tables, 1 process, their bytes (%llu, %llu, %llu)", tables,
	    (unsigned long long)st.uw_tables, (unsigned long long)st.uw_procs,
	    (unsigned long long)st.uw_bytes);
	err = get_info(fd, &info);
	tap(!err && info.unwind_used == st.uw_bytes,
	    "GET_INFO: unwind memory used is the session's (%llu of %llu)",
	    (unsigned long long)info.unwind_used, (unsigned long long)st.uw_bytes);
	/* Tables outlive a CONFIGURE: they are the file's. */
	uw_config(&c, 100, 0);
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), 0, "CONFIGURE again");
	err = get_stats(fd, &st);
	tap(!err && st.uw_tables == tables && st.uw_procs == 1,
	    "the tables and mappings stay across CONFIGURE");

	/* A process sampled with no mappings is reported, once. */
	fd2 = open_dev();
	child = spinner();
	uw_config(&c, 1000, child);
	expect(xioctl(fd2, HOTSTACK_IOC_CONFIGURE, &c), 0, "CONFIGURE a spinner's user stacks");
	expect(xioctl(fd2, HOTSTACK_IOC_START, NULL), 0, "START");
	seen = false;
	nr = 0;
	lost = 0;
	for (int i = 0; i < 100 && !seen; i++) {
		sleep_ms(20);
		nr = 64;
		if (misses(fd2, pids, &nr, &lost))
			break;
		for (__u32 j = 0; j < nr; j++)
			seen |= pids[j] == (__u32)child;
	}
	tap(seen && nr == 1 && !lost, "UNWIND_MISSES names the spinner, alone (%u pids, %llu lost)",
	    nr, (unsigned long long)lost);
	err = get_stats(fd2, &st);
	tap(!err && st.uw_walks > 0 && st.uw_no_maps > 0 && st.uw_misses > 0,
	    "GET_STATS: walks of a process without mappings, reported (%llu walks, %llu)",
	    (unsigned long long)st.uw_walks, (unsigned long long)st.uw_no_maps);
	{
		struct hotstack_unwind_map maps[64];
		unsigned int n = exec_maps(child, maps, 64);

		expect(set_maps(fd2, child, maps, n, 0), 0, "SET_MAPS of the spinner, no tables");
	}
	sleep_ms(200);
	nr = 64;
	misses(fd2, pids, &nr, NULL);
	sleep_ms(200);
	nr = 64;
	err = misses(fd2, pids, &nr, NULL);
	tap(!err && nr == 0,
	    "with its mappings loaded it is not reported again (%u)", nr);
	err = get_stats(fd2, &st);
	tap(!err && st.uw_fp_frames > 0 && st.uw_procs == 1,
	    "its frames are walked by frame pointers where no table is (%llu)",
	    (unsigned long long)st.uw_fp_frames);
	/* The spinner exits: its mappings go at the next call. */
	reap(child);
	nr = 64;
	misses(fd2, pids, &nr, NULL);
	err = get_stats(fd2, &st);
	tap(!err && st.uw_procs == 0,
	    "an exited process's mappings are dropped (%llu left)",
	    (unsigned long long)st.uw_procs);
	expect(xioctl(fd2, HOTSTACK_IOC_STOP, NULL), 0, "STOP");
	close(fd2);
	close(fd);
	fd = open_dev();
	err = get_info(fd, &info);
	tap(!err && !info.unwind_used,
	    "closing the sessions gives their unwind memory back (%llu left)",
	    (unsigned long long)info.unwind_used);
	close(fd);

}

/* ---- hostile ---------------------------------------------------------- */

static unsigned long rnd_state = 88172645463325252UL;

static unsigned long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A rule of any valid kind with offsets anywhere they may be. */
static struct hotstack_unwind_rule lying_rule(void)
{
	static const __u8 kinds[] = { HOTSTACK_UW_CFA_SP, HOTSTACK_UW_CFA_FP, HOTSTACK_UW_NONE,
				      HOTSTACK_UW_CFA_SP, HOTSTACK_UW_END, HOTSTACK_UW_PLT };
	struct hotstack_unwind_rule r;

	memset(&r, 0, sizeof(r));
	r.kind = kinds[rnd() % (is_x86() ? 6 : 5)];
	if (r.kind == HOTSTACK_UW_NONE || r.kind == HOTSTACK_UW_END)
		return r;
	r.flags = HOTSTACK_UWF_RA_SAVED;
	r.ra_off = is_x86() ? -8 : (long)(rnd() % 64) * 8 - 256;
	if (rnd() & 1) {
		r.flags |= HOTSTACK_UWF_FP_SAVED;
		r.fp_off = (long)(rnd() % 64) * 8 - 256;
	}
	if (r.kind == HOTSTACK_UW_PLT)
		r.cfa_off = 1 + rnd() % 15;
	else
		r.cfa_off = (long)(rnd() % (1 << 12)) - (1 << 11);
	return r;
}

/* A table of @nr rows of @nr_rules lying rules over offsets [0, @span). */
static int lying_table(int fd, unsigned int nr, unsigned int nr_rules, unsigned long span)
{
	struct hotstack_unwind_row *rows = calloc(nr, sizeof(*rows));
	struct hotstack_unwind_rule *rules = calloc(nr_rules, sizeof(*rules));
	struct hotstack_unwind_table t;
	unsigned int i;
	int err;

	for (i = 0; i < nr_rules; i++)
		rules[i] = lying_rule();
	for (i = 0; i < nr; i++) {
		rows[i].pc = (unsigned long)i * (span / nr);
		rows[i].rule = rnd() % nr_rules;
	}
	err = add_table(fd, rows, nr, rules, nr_rules, &t);
	free(rows);
	free(rules);
	return err ? -err : (int)t.id;
}

/* A child whose stack pointer is in memory that is not mapped. */
static pid_t wild_sp(void)
{
	pid_t pid = fork();

	if (!pid) {
		void *p = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		munmap(p, 1 << 20);
#ifdef __x86_64__
		asm volatile("mov %0, %%rsp; mov %0, %%rbp; 1: jmp 1b" : : "r"((char *)p + 4096));
#else
		asm volatile("mov sp, %0; mov x29, %0; 1: b 1b" : : "r"((char *)p + 4096));
#endif
		_exit(0);
	}
	return pid;
}

/* A child mapping and unmapping executable pages of a file, over and over. */
static pid_t remapper(const char *file)
{
	pid_t pid = fork();

	if (!pid) {
		int fd = open(file, O_RDONLY);
		volatile unsigned long x = 0;

		for (;;) {
			void *p = mmap(NULL, 65536, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

			for (int i = 0; i < 1000; i++)
				x++;
			if (p != MAP_FAILED)
				munmap(p, 65536);
		}
	}
	return pid;
}

/* A child that execs itself over and over (hs_uwtest execloop). */
static pid_t execer(void)
{
	pid_t pid = fork();

	if (!pid) {
		execl("/proc/self/exe", "hs_uwtest", "execloop", "100000", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int execloop(unsigned long n)
{
	volatile unsigned long x = 0;
	char arg[32];

	for (int i = 0; i < 20000; i++)
		x++;
	if (!n)
		return 0;
	snprintf(arg, sizeof(arg), "%lu", n - 1);
	execl("/proc/self/exe", "hs_uwtest", "execloop", arg, (char *)NULL);
	return 127;
}

/* Load @pid's mappings, each with a table from @ids (@nr of them) or none. */
static int load_lying(int fd, pid_t pid, const int *ids, unsigned int nr)
{
	struct hotstack_unwind_map maps[64];
	unsigned int n = exec_maps(pid, maps, 64), i;

	for (i = 0; i < n; i++) {
		maps[i].table = rnd() % 4 ? ids[rnd() % nr] : 0;
		/* Some biases off: offsets out of the table's range. */
		if (!(rnd() % 8))
			maps[i].bias += rnd() % (1UL << 33);
	}
	return set_maps(fd, pid, maps, n, 0);
}

static void test_hostile(unsigned int seconds)
{
	struct hotstack_config c;
	struct hotstack_stats st;
	int fd = open_dev(), ids[8], nr_ids = 0, i, err;
	pid_t kids[4];
	__u32 pids[64], nr;
	unsigned long long stops = 0;
	unsigned int rounds = 0, estale = 0, ok = 0;
	time_t end;

	uw_config(&c, 4000, 0);
	c.max_depth = 128;
	expect(xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c), 0, "CONFIGURE every process's user stacks");
	for (i = 0; i < 8; i++) {
		int id = lying_table(fd, 1 + rnd() % 5000, 1 + rnd() % 64, 1UL << (12 + rnd() % 20));

		if (id > 0)
			ids[nr_ids++] = id;
	}
	tap(nr_ids == 8, "8 lying tables loaded (%d)", nr_ids);
	kids[0] = spinner();
	kids[1] = wild_sp();
	kids[2] = remapper("/bin/busybox");
	kids[3] = execer();
	expect(xioctl(fd, HOTSTACK_IOC_START, NULL), 0, "START");
	/*
	 * @seconds, and until a table's rule has walked a frame (a loaded
	 * debug kernel took over 3 s for one round): 60 s more at most.
	 */
	end = time(NULL) + seconds;
	while (time(NULL) < end ||
	       (time(NULL) < end + 60 && !get_stats(fd, &st) && !st.uw_table_frames)) {
		for (i = 0; i < 4; i++) {
			err = load_lying(fd, kids[i], ids, nr_ids);
			ok += !err;
			estale += err == ESTALE;
		}
		/* Now and then the truth: a process's maps, no tables. */
		nr = 64;
		misses(fd, pids, &nr, NULL);
		for (__u32 j = 0; j < nr; j++)
			load_lying(fd, pids[j], ids, nr_ids);
		rounds++;
		sleep_ms(10);
	}
	expect(xioctl(fd, HOTSTACK_IOC_STOP, NULL), 0, "STOP");
	for (i = 0; i < 4; i++)
		reap(kids[i]);
	tap(ok > 0, "mappings loaded under the lying tables (%u times in %u rounds; %u ESTALE "
	    "from the exec loop and the remapper)", ok, rounds, estale);
	get_stats(fd, &st);
	for (i = 0; i < HOTSTACK_UWS_MAX; i++)
		stops += st.uw_stops[i];
	printf("# %llu walks: %llu complete, %llu by tables' rules, %llu by frame pointers; "
	       "stops: expr %llu signal %llu fault %llu stack %llu link %llu fp %llu\n",
	       (unsigned long long)st.uw_walks, (unsigned long long)st.uw_complete,
	       (unsigned long long)st.uw_table_frames, (unsigned long long)st.uw_fp_frames,
	       (unsigned long long)st.uw_stops[0], (unsigned long long)st.uw_stops[1],
	       (unsigned long long)st.uw_stops[2], (unsigned long long)st.uw_stops[3],
	       (unsigned long long)st.uw_stops[4], (unsigned long long)st.uw_stops[5]);
	tap(st.uw_walks > 100 && st.uw_table_frames > 0,
	    "the children were walked by the lying tables (%llu walks)",
	    (unsigned long long)st.uw_walks);
	tap(st.uw_stops[HOTSTACK_UWS_FAULT] > 0 && st.uw_stops[HOTSTACK_UWS_STACK] > 0,
	    "and walks stopped on faults and on frames that did not go up the stack");
	/* Each walk ends complete, cut at max_depth (truncated), or at one stop. */
	tap(st.uw_complete + stops <= st.uw_walks &&
	    st.uw_walks - st.uw_complete - stops <= st.total.truncated,
	    "every walk ended one counted way (%llu complete + %llu stopped of %llu; %llu cut)",
	    (unsigned long long)st.uw_complete, stops, (unsigned long long)st.uw_walks,
	    (unsigned long long)st.total.truncated);
	tap(st.total.samples == st.total.counted + st.total.drops[0] + st.total.drops[1] +
	    st.total.drops[2] + st.total.drops[3] + st.total.drops[4] + st.total.drops[5] +
	    st.total.drops[6] + st.total.drops[7],
	    "samples = counted + drops (%llu)", (unsigned long long)st.total.samples);
	close(fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "errors"))
		test_errors();
	else if (argc >= 3 && !strcmp(argv[1], "hostile"))
		test_hostile(atoi(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "execloop"))
		return execloop(strtoul(argv[2], NULL, 10));
	else {
		fprintf(stderr, "usage: hs_uwtest errors | hostile SECONDS\n");
		return 2;
	}
	return failures ? 1 : 0;
}
