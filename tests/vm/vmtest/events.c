// SPDX-License-Identifier: GPL-2.0
/*
 * Other events (task-clock, page-faults, context-switches), and
 * sampling by frequency.
 */
#include "vmtest.h"

/* The software events besides cpu-clock count where they happen. */
void test_events(void)
{
	static const struct {
		const char *name;
		__u64 config, period;
		const char *frame;	/* a frame their stacks go through */
	} ev[] = {
		{ "task-clock", PERF_COUNT_SW_TASK_CLOCK, 100000, "hs_leaf" },
		/* The stack of the faulting code: the child's memset, in user mode. */
		{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS, 1, "[task];[user] " },
		{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1, "schedule" },
	};
	struct hotstack_config c;
	struct hotstack_stats st;
	unsigned int i;
	char *text;
	int fd = open_dev();

	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		char what[64];
		pid_t child;

		snprintf(what, sizeof(what), "event %s", ev[i].name);
		default_config(&c);
		c.flags = 0;
		c.event_type = PERF_TYPE_SOFTWARE;
		c.event_config = ev[i].config;
		c.sample = ev[i].period;
		c.keys = HOTSTACK_KEY_CONTEXT;
		expect_cfg(fd, &c, 0, what);
		expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "START");
		run_workload(3, 1, 100);
		/* Faults and switches: a child that touches memory and exits. */
		child = fork();
		if (!child) {
			char *p = malloc(1 << 20);

			memset(p, 1, 1 << 20);
			_exit(p[4096] == 1 ? 0 : 1);
		}
		waitpid(child, NULL, 0);
		expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "STOP");
		get_stats(fd, &st, 0);
		text = read_all(fd);
		tap(st.total.counted > 0 && strstr(text, ev[i].frame),
		    "%s: %llu samples counted, stacks through %s", what,
		    (unsigned long long)st.total.counted, ev[i].frame);
		free(text);
		check_invariant(fd, what);
	}
	close(fd);
}

/*
 * page-faults by frequency: perf starts the event at a period of 1 and
 * moves the period an eighth of the way to the frequency's at every
 * overflow (__perf_event_account_interrupt(): perf_adjust_period()), so
 * that a child faulting 16384 pages right after START is sampled a few
 * dozen times more than the frequency asks, not at each fault: each CPU
 * at most twice the frequency and a burst of 64 (the most
 * 8 ln(period) overflows take to settle, for periods up to 3000).
 * A delegated user's rate quota counts on it.
 */
void test_rate(void)
{
	const unsigned int freq = 100;
	struct hotstack_config c;
	struct hotstack_stats st;
	double t0, t;
	unsigned long long bound;
	struct rusage ru;
	int fd = open_dev(), status = -1;
	pid_t child;

	default_config(&c);
	c.flags = HOTSTACK_CFG_FREQ;
	c.event_type = PERF_TYPE_SOFTWARE;
	c.event_config = PERF_COUNT_SW_PAGE_FAULTS;
	c.sample = freq;
	expect_cfg(fd, &c, 0, "rate: page-faults at 100 Hz");
	t0 = now_s();
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "rate: START");
	child = fork();
	if (!child) {
		char *p = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		/* Small pages: a fault each 4 KiB (EINVAL: no THP, small pages anyway). */
		madvise(p, 64 << 20, MADV_NOHUGEPAGE);
		memset(p, 1, 64 << 20);
		_exit(0);
	}
	memset(&ru, 0, sizeof(ru));
	wait4(child, &status, 0, &ru);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "rate: STOP");
	t = now_s() - t0;
	get_stats(fd, &st, 0);
	bound = (unsigned long long)st.nr_cpus * (64 + 2 * freq * t);
	tap(status == 0 && ru.ru_minflt >= 16384 && st.total.samples > 0 &&
	    st.total.samples <= bound,
	    "rate: %ld faults (the child exited %d) sampled %llu times in %.3f s on %u CPUs at 100 Hz (at most %llu)",
	    ru.ru_minflt, status, (unsigned long long)st.total.samples, t, st.nr_cpus, bound);
	check_invariant(fd, "rate");
	close(fd);
}
