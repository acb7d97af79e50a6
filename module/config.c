// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: a configuration's checks (what CONFIGURE refuses, for anyone
 * and for a delegated user), its rate and periods, and a trial of its
 * event.
 */
#include <linux/cred.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>

#include "attr.h"
#include "hotstack.h"

static bool hs_clock_event(const struct hotstack_config *c)
{
	return c->event_type == PERF_TYPE_SOFTWARE &&
	       (c->event_config == PERF_COUNT_SW_CPU_CLOCK ||
		c->event_config == PERF_COUNT_SW_TASK_CLOCK);
}

/*
 * Whether @c's event is sampled by frequency: perf turns a frequency of
 * cpu-clock or task-clock into a period of nanoseconds (hrtimers), and so
 * does hotstack, so that a budget can multiply it.
 */
bool hs_freq_event(const struct hotstack_config *c)
{
	return (c->flags & HOTSTACK_CFG_FREQ) && !hs_clock_event(c);
}

/*
 * Samples a second per CPU @c asks for, at most (a budget only lowers the
 * rate): what a delegated user's quota counts. An event sampled by a
 * period of events has no rate; delegated users cannot ask for one.
 */
u64 hs_config_rate(const struct hotstack_config *c)
{
	if (c->flags & HOTSTACK_CFG_FREQ)
		return c->sample;
	return hs_clock_event(c) ? div64_u64(NSEC_PER_SEC + c->sample - 1, c->sample) : 0;
}

/* @c's period as a number of events (or ns); its frequency for hs_freq_event(). */
static u64 hs_base_period(const struct hotstack_config *c)
{
	if (c->flags & HOTSTACK_CFG_FREQ)
		return hs_freq_event(c) ? c->sample : div64_u64(NSEC_PER_SEC, c->sample);
	return c->sample;
}

/*
 * The largest weight @c's event can take: its period times it, or its
 * frequency over it; an off-CPU session's: one switch in HS_MAX_OFF_WEIGHT.
 */
u32 hs_max_weight(const struct hotstack_config *c)
{
	u64 base = hs_base_period(c);
	u64 w;

	if (c->flags & HOTSTACK_CFG_OFF_CPU)
		return HS_MAX_OFF_WEIGHT;
	w = hs_freq_event(c) ? base : div64_u64(S64_MAX, base);

	return min_t(u64, max_t(u64, w, 1), HS_MAX_WEIGHT);
}

/* perf's period (or frequency) of @c's event when each sample counts @w. */
u64 hs_weighted_period(const struct hotstack_config *c, u32 w)
{
	return hs_freq_event(c) ? div_u64(hs_base_period(c), w) : hs_base_period(c) * w;
}

/* Whether @c names an event hotstack knows; EINVAL otherwise. */
static int hs_check_event(const struct hotstack_config *c)
{
	switch (c->event_type) {
	case PERF_TYPE_HARDWARE:
		switch (c->event_config) {
		case PERF_COUNT_HW_CPU_CYCLES:
		case PERF_COUNT_HW_INSTRUCTIONS:
		case PERF_COUNT_HW_CACHE_MISSES:
		case PERF_COUNT_HW_BRANCH_MISSES:
			return 0;
		}
		return -EINVAL;
	case PERF_TYPE_SOFTWARE:
		if (c->precise)
			return -EINVAL;
		switch (c->event_config) {
		case PERF_COUNT_SW_CPU_CLOCK:
		case PERF_COUNT_SW_TASK_CLOCK:
		case PERF_COUNT_SW_PAGE_FAULTS:
		case PERF_COUNT_SW_CONTEXT_SWITCHES:
			return 0;
		}
		return -EINVAL;
	case PERF_TYPE_RAW:
		return 0;
	}
	return -EINVAL;
}

/*
 * An off-CPU session's own fields (uapi/linux/hotstack.h): no event
 * (sample 0), or for wall-clock time a clock's, keyed by context. Every
 * CPU: a wait moves between CPUs. TASK (with PID, checked with the
 * events'): the process and what it starts. OFF_NEW and WAKERS: only here.
 */
static int hs_check_off_cpu(const struct hotstack_config *c)
{
	if (!(c->flags & HOTSTACK_CFG_OFF_CPU))
		return c->off_cpu_tasks || c->min_block_us ||
		       (c->flags & (HOTSTACK_CFG_OFF_NEW | HOTSTACK_CFG_WAKERS)) ? -EINVAL : 0;
	if (c->budget_ppm > 1000000 || c->cpus_ptr || c->cpus_words)
		return -EINVAL;
	if (!c->sample) {
		if (c->event_type || c->event_config || c->precise ||
		    (c->flags & (HOTSTACK_CFG_FREQ | HOTSTACK_CFG_EXCLUDE_IDLE)))
			return -EINVAL;
	} else if (!hs_clock_event(c) || c->precise || !(c->keys & HOTSTACK_KEY_CONTEXT) ||
		   c->sample > S64_MAX ||
		   ((c->flags & HOTSTACK_CFG_FREQ) && c->sample > HOTSTACK_MAX_FREQ)) {
		return -EINVAL;
	}
	if (!is_power_of_2(c->off_cpu_tasks) || c->off_cpu_tasks < HOTSTACK_MIN_OFF_CPU_TASKS ||
	    c->off_cpu_tasks > HOTSTACK_MAX_OFF_CPU_TASKS)
		return -EINVAL;
	return 0;
}

/* Every field of @c but the CPU mask and the cgroups (dev.c reads those from userspace). */
int hs_check_config(const struct hotstack_config *c)
{
	if (c->flags & ~HOTSTACK_CFG_ALL)
		return -EINVAL;
	if (c->reserved)
		return -EINVAL;
	if (c->flags & HOTSTACK_CFG_OFF_CPU)
		goto common;
	/* Per-task events' children inherit a period the module cannot change. */
	if (c->budget_ppm > 1000000 || (c->budget_ppm && (c->flags & HOTSTACK_CFG_TASK)))
		return -EINVAL;
	if (hs_check_event(c) || c->precise > 3)
		return -EINVAL;
	/* perf keeps the top bit of the period for itself. */
	if (!c->sample || c->sample > S64_MAX)
		return -EINVAL;
	if ((c->flags & HOTSTACK_CFG_FREQ) && c->sample > HOTSTACK_MAX_FREQ)
		return -EINVAL;
common:
	if (hs_check_off_cpu(c))
		return -EINVAL;
	if (!(c->flags & HOTSTACK_CFG_PID) != !c->pid || c->pid > PID_MAX_LIMIT)
		return -EINVAL;
	/* Per-task events follow the process everywhere: every CPU has a table. */
	if ((c->flags & HOTSTACK_CFG_TASK) &&
	    (!(c->flags & HOTSTACK_CFG_PID) || c->cpus_ptr || c->cpus_words))
		return -EINVAL;
	if (!c->stacks || (c->stacks & ~(HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER)))
		return -EINVAL;
	if (!c->max_depth || c->max_depth > HOTSTACK_MAX_DEPTH)
		return -EINVAL;
	if (c->keys & ~HOTSTACK_KEY_ALL)
		return -EINVAL;
	/* Unwind tables walk user stacks; their cap goes with them. */
	if (c->pad || c->unwind_mb > (1U << 20) ||
	    ((c->flags & HOTSTACK_CFG_USER_TABLES) ? !(c->stacks & HOTSTACK_STACK_USER) :
						      c->unwind_mb))
		return -EINVAL;
	if (!is_power_of_2(c->table_entries) || c->table_entries < HOTSTACK_MIN_ENTRIES ||
	    c->table_entries > HOTSTACK_MAX_ENTRIES)
		return -EINVAL;
	if (c->arena_frames < HOTSTACK_MIN_ARENA || c->arena_frames > HOTSTACK_MAX_ARENA)
		return -EINVAL;
	if (c->pad2 || !is_power_of_2(c->cpu_entries) || c->cpu_entries < HOTSTACK_MIN_ENTRIES ||
	    c->cpu_entries > HOTSTACK_MAX_ENTRIES)
		return -EINVAL;
	return 0;
}

/*
 * Whether the caller, a delegated user, may watch @pid's process in task
 * mode: ptrace's read rule, as perf_event_open() applies it
 * (hs_creds_readable(), and the process dumpable).
 */
int hs_may_watch(struct pid *pid)
{
	struct task_struct *t;
	bool ok;

	rcu_read_lock();
	t = pid_task(pid, PIDTYPE_TGID);
	if (!t) {
		rcu_read_unlock();
		return -ESRCH;
	}
	ok = hs_creds_readable(current_cred(), __task_cred(t)) && hs_task_dumpable(t);
	rcu_read_unlock();
	return ok ? 0 : -EPERM;
}

/*
 * What a delegated user (the module's group, without CAP_PERFMON) may not
 * ask for: raw PMU events, and more than group_max_freq samples a second
 * per CPU (as a frequency, or as a cpu-clock / task-clock period; other
 * events count things, not time, so they are sampled by frequency).
 */
int hs_check_delegated(const struct hotstack_config *c)
{
	if ((c->flags & HOTSTACK_CFG_OFF_CPU) && !c->sample)
		return 0;	/* no rate: the probe runs at every switch */
	if (c->event_type == PERF_TYPE_RAW)
		return -EPERM;
	if (c->flags & HOTSTACK_CFG_FREQ)
		return c->sample > hotstack_group_max_freq ? -EPERM : 0;
	if (!hs_clock_event(c))
		return -EPERM;
	return c->sample < NSEC_PER_SEC / hotstack_group_max_freq ? -EPERM : 0;
}

/*
 * Perf events are created by kernel workers, never by the caller: perf
 * applies its paranoia to the current task, and the module has its own
 * policy (hs_check_delegated()); and never under the CPU hotplug lock.
 */
struct hs_try {
	struct work_struct work;
	const struct hotstack_config *cfg;
	const struct cpumask *mask;
	int ret;
};

/* An event on one online CPU of the mask, created and released. */
static void hs_try_work(struct work_struct *work)
{
	struct hs_try *t = container_of(work, struct hs_try, work);
	struct perf_event_attr attr;
	struct perf_event *event;
	unsigned int tries;
	int cpu;

	hs_event_attr(t->cfg, &attr);
	attr.disabled = 1;
	/* A CPU going offline meanwhile says nothing of the event: another. */
	for (tries = 0; tries < 8; tries++) {
		cpu = cpumask_first_and(t->mask, cpu_online_mask);
		if (cpu >= nr_cpu_ids) {
			t->ret = -ENODEV;
			return;
		}
		event = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
		t->ret = PTR_ERR_OR_ZERO(event);
		if (!IS_ERR(event))
			perf_event_release_kernel(event);
		if (t->ret != -ENODEV)
			return;
	}
}

/*
 * Create the event on an online CPU of @mask and release it: an event this
 * machine cannot count fails here, at CONFIGURE, with perf's errno.
 */
int hs_try_event(const struct hotstack_config *c, const struct cpumask *mask)
{
	struct hs_try t = { .cfg = c, .mask = mask };

	INIT_WORK_ONSTACK(&t.work, hs_try_work);
	queue_work(system_unbound_wq, &t.work);
	flush_work(&t.work);
	destroy_work_on_stack(&t.work);
	return t.ret;
}
