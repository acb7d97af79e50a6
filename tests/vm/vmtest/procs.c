// SPDX-License-Identifier: GPL-2.0
/*
 * Processes the guest's scripts start: the held keys, nappers, cgroups'
 * nappers, a cgroup namespace.
 */
#include "vmtest.h"

#define TRACEFS "/sys/kernel/tracing"

/* A disabled perf event of this process: @type, @config; whether it opened. */
static bool hold_event(__u32 type, __u64 config, const char *what)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	if (syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0) >= 0)
		return true;
	printf("# hold-keys: perf_event_open %s: %s\n", what, strerror(errno));
	return false;
}

/*
 * Two probes on the scheduler tracepoint @name: a disabled perf tracepoint
 * event and ftrace's own, enabled with the trace buffer off. Whether both
 * are on.
 */
static bool hold_tracepoint(const char *name)
{
	char dir[128], enable[160];
	long long id;

	snprintf(dir, sizeof(dir), TRACEFS "/events/sched/%s", name);
	snprintf(enable, sizeof(enable), "%s/enable", dir);
	id = cg_read(dir, "id");
	if (id < 0) {
		printf("# hold-keys: %s/id: %s\n", dir, strerror(errno));
		return false;
	}
	if (!hold_event(PERF_TYPE_TRACEPOINT, id, name))
		return false;
	if (write_file(enable, "1")) {
		printf("# hold-keys: %s: %s\n", enable, strerror(errno));
		return false;
	}
	return true;
}

/*
 * Keep kernel text that hotstack's sessions would patch patched for as
 * long as the guest runs, in a child that stays asleep; back when it is
 * in place. QEMU's multi-threaded TCG now and then runs a stale copy of
 * text just patched through int3 (text_poke_bp()) on another vCPU: an
 * unhandled "int3" and a panic on the 6.1 debug kernel, or a CPU that
 * loops on the breakpoint with interrupts off while the patcher waits
 * for it in text_poke_sync() (a soft lockup in an off-CPU session's STOP
 * on the debug kernel). A program using perf_event_open alone does it; it
 * says nothing of hotstack. So the guest holds:
 * - perf's page-fault and context-switch software-event keys (disabled
 *   events of this process; a per-task event also holds perf_sched_events),
 *   which every CONFIGURE/START/STOP of such an event would flip;
 * - two probes on sched_switch and sched_process_fork where the kernel has
 *   them (perf's and ftrace's): an off-CPU session's probe joining or
 *   leaving then changes neither the static key nor the static call (on
 *   the iterator from two probes on).
 * Not in the deterministic icount runs, which measure costs as they are.
 */
int hold_keys(void)
{
	static const char *const tracepoints[] = { "sched_switch", "sched_process_fork" };
	int ready[2];
	bool ok = true;
	char c = 0;
	unsigned int i;

	if (pipe(ready))
		return 1;
	if (fork()) {
		close(ready[1]);
		return read(ready[0], &c, 1) == 1 && c == 1 ? 0 : 1;
	}
	close(ready[0]);
	ok &= hold_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults");
	ok &= hold_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches");
	if (kallsyms_has("__tracepoint_sched_switch\n")) {
		if (access(TRACEFS "/events", F_OK))
			mount("tracefs", TRACEFS, "tracefs", 0, NULL);
		write_file(TRACEFS "/tracing_on", "0");
		for (i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++)
			ok &= hold_tracepoint(tracepoints[i]);
	}
	c = ok;
	if (write(ready[1], &c, 1) != 1)
		return 1;
	close(ready[1]);
	for (;;)
		pause();
}

/*
 * One sleep of @ms, as a command to record: into @file its length and the
 * thread's CPU time meanwhile, in ns ("WALL CPU"). Under a loaded host
 * the guest's clock runs on while its vCPU does not, and the scheduler
 * counts that time to the thread it stopped: time on the CPU, inside the
 * sleep's call (4.2 ms of a 0.3 s sleep once on rt).
 */
int nap(int ms, const char *file)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	__u64 t0, c0, t, c;
	FILE *f;

	c0 = mono_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = mono_ns(CLOCK_MONOTONIC);
	if (nanosleep(&ts, NULL))
		return 1;
	t = mono_ns(CLOCK_MONOTONIC) - t0;
	c = mono_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	f = fopen(file, "w");
	if (!f || fprintf(f, "%llu %llu\n", (unsigned long long)t, (unsigned long long)c) < 0 ||
	    fclose(f))
		return 1;
	return 0;
}

/*
 * @argv run in a cgroup namespace of its own (rooted at this process's
 * cgroup) and a mount namespace where /sys/fs/cgroup is a cgroup2 mount
 * made in it: what a container on cgroup v2 sees (its own subtree alone).
 */
int cgns(char **argv)
{
	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("cgns: unshare");
		return 1;
	}
	umount2("/sys/fs/cgroup", MNT_DETACH);
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL)) {
		perror("cgns: mount cgroup2");
		return 1;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

/* Sleeps of @ms, one after the other, until killed: a wait an interval or more. */
void naps(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	for (;;)
		nanosleep(&ts, NULL);
}

static volatile sig_atomic_t cgnaps_stop;

static void cgnaps_term(int sig)
{
	(void)sig;
	cgnaps_stop = 1;
}

/*
 * @n containers: the cgroups @dir/docker-ID.scope, ID the 64 hex digits
 * of @first, @first + 1, ... (made), a child in each napping @ms at a time
 * (naps()). Says "ready" on stdout once all are in; on SIGTERM, ends
 * them, removes the cgroups and exits 0.
 */
int cgnaps(int ms, const char *dir, int first, int n)
{
	struct sigaction sa = { .sa_handler = cgnaps_term };
	char path[512];
	pid_t *pid = calloc(n, sizeof(*pid));
	int i, fd, len;

	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; pid && i < n; i++) {
		snprintf(path, sizeof(path), "%s/docker-%064x.scope", dir, first + i);
		if (mkdir(path, 0755) && errno != EEXIST)
			break;
		pid[i] = fork();
		if (pid[i] < 0)
			break;
		if (!pid[i]) {
			char me[32];

			strcat(path, "/cgroup.procs");
			fd = open(path, O_WRONLY);
			len = snprintf(me, sizeof(me), "%d\n", getpid());
			if (fd < 0 || write(fd, me, len) != len)
				_exit(1);
			close(fd);
			naps(ms);
		}
	}
	if (i == n) {
		printf("ready\n");
		fflush(stdout);
		while (!cgnaps_stop)
			pause();
	} else {
		perror("cgnaps");
	}
	for (n = i, i = 0; i < n; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
		snprintf(path, sizeof(path), "%s/docker-%064x.scope", dir, first + i);
		rmdir(path);
	}
	return cgnaps_stop ? 0 : 1;
}
