// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: the perf events that drive sampling -- one per CPU slot of a
 * running session, kept in step with CPU hotplug by a worker, and the
 * inherited events on a process's threads (HOTSTACK_CFG_TASK).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "attr.h"
#include "hotstack.h"

enum cpuhp_state hotstack_cpuhp_state;

/*
 * Make each slot's perf event what the hotplug callbacks asked for: one
 * on every CPU that is online while the session runs, none elsewhere, and
 * none from before its CPU last went offline (perf detached it then).
 * Process context without the hotplug lock (see struct hotstack_session).
 */
static void hs_sync_events(struct hotstack_session *s)
{
	struct hs_tables *t = &s->tabs;
	struct perf_event_attr attr;
	unsigned int i;
	int cpu;

	lockdep_assert_held(&s->ev_lock);
	hs_event_attr(&s->cfg, &attr);
	for (i = 0; i < t->nr_slots; i++) {
		struct hs_slot *sl = &t->slots[i];
		struct perf_event *event;
		bool want;
		u32 seq;

		spin_lock(&s->hp_lock);
		want = sl->want;
		seq = sl->hp_seq;
		spin_unlock(&s->hp_lock);
		if (sl->event && (!want || sl->event_seq != seq)) {
			perf_event_release_kernel(sl->event);
			WRITE_ONCE(sl->event, NULL);
		}
		if (!want || sl->event)
			continue;
		/* Made again after hotplug: at the rate the budget has set. */
		attr.freq = hs_freq_event(&s->cfg);
		attr.sample_period = hs_weighted_period(&s->cfg, sl->tab[0].weight);
		event = perf_event_create_kernel_counter(&attr, t->hdr->slot_cpu[i], NULL,
							 hotstack_overflow_handler(s), s);
		if (IS_ERR(event)) {
			/* -ENODEV: it went offline meanwhile; its callback queued us again. */
			if (PTR_ERR(event) != -ENODEV && sl->err != PTR_ERR(event))
				hotstack_event(s, HOTSTACK_EV_CPU_FAILED, -PTR_ERR(event),
					       t->hdr->slot_cpu[i]);
			sl->err = PTR_ERR(event);
			continue;
		}
		sl->err = 0;
		sl->event_seq = seq;
		hotstack_jitter_set(sl, event);
		WRITE_ONCE(sl->event, event);
	}
	/* CPUs of the mask that came online without a table: say so. */
	for_each_cpu(cpu, s->missed) {
		spin_lock(&s->hp_lock);
		cpumask_clear_cpu(cpu, s->missed);
		spin_unlock(&s->hp_lock);
		hotstack_event(s, HOTSTACK_EV_CPU_MISSED, 0, cpu);
	}
}

void hs_hp_work(struct work_struct *work)
{
	struct hotstack_session *s = container_of(work, struct hotstack_session, hp_work);

	mutex_lock(&s->ev_lock);
	hs_sync_events(s);
	mutex_unlock(&s->ev_lock);
}

/* Run hs_sync_events() in a kernel worker and wait for it. */
void hs_sync_events_now(struct hotstack_session *s)
{
	queue_work(system_unbound_wq, &s->hp_work);
	flush_work(&s->hp_work);
}

/*
 * A CPU hotplug callback's note: the CPU's slot should (@want) or should
 * not have an event; the worker acts on it. It runs with the hotplug lock
 * held, so it takes none of the session's sleeping locks.
 */
static void hs_cpu_note(struct hotstack_session *s, unsigned int cpu, bool want)
{
	struct hs_slot *sl = hs_slot_of(&s->tabs, cpu);

	spin_lock(&s->hp_lock);
	if (sl) {
		sl->want = want;
		sl->hp_seq++;
	} else if (want && cpumask_test_cpu(cpu, s->cpus)) {
		atomic_inc(&s->cpus_missed);
		cpumask_set_cpu(cpu, s->missed);
	}
	spin_unlock(&s->hp_lock);
	queue_work(system_unbound_wq, &s->hp_work);
}

/* CPU hotplug: a CPU of a running session came online (or START). */
static int hs_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	hs_cpu_note(hlist_entry(node, struct hotstack_session, cpuhp_node), cpu, true);
	return 0;
}

/* CPU hotplug: a CPU of a running session goes offline (or STOP). */
static int hs_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	hs_cpu_note(hlist_entry(node, struct hotstack_session, cpuhp_node), cpu, false);
	return 0;
}

int hotstack_cpuhp_init(void)
{
	int ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "hotstack:online",
					  hs_cpu_online, hs_cpu_offline);

	if (ret < 0)
		return ret;
	hotstack_cpuhp_state = ret;
	return 0;
}

void hotstack_cpuhp_exit(void)
{
	cpuhp_remove_multi_state(hotstack_cpuhp_state);
}

/* No event on any CPU: released by the worker before this returns. */
void hs_stop_events(struct hotstack_session *s)
{
	unsigned int i;

	spin_lock(&s->hp_lock);
	for (i = 0; i < s->tabs.nr_slots; i++)
		s->tabs.slots[i].want = false;
	spin_unlock(&s->hp_lock);
	hs_sync_events_now(s);
}

/*
 * HOTSTACK_CFG_TASK: a perf event on each thread of the session's process,
 * inherited by what they start. Made by a kernel worker, like the CPUs'
 * events (perf applies its paranoia to the current task).
 */
struct hs_task_start {
	struct work_struct work;
	struct hotstack_session *s;
	struct task_struct **tasks;	/* room for @cap threads */
	unsigned int cap;
	int ret;
};

static void hs_task_events_work(struct work_struct *work)
{
	struct hs_task_start *ts = container_of(work, struct hs_task_start, work);
	struct hotstack_session *s = ts->s;
	struct task_struct *leader, *t, **tasks = ts->tasks;
	struct perf_event_attr attr;
	unsigned int n = 0, i, j;
	int ret = 0;

	rcu_read_lock();
	leader = pid_task(s->pid, PIDTYPE_TGID);
	if (leader) {
		for_each_thread(leader, t) {
			/* Threads started since the count: too many now. */
			if (n == ts->cap) {
				ret = -E2BIG;
				break;
			}
			get_task_struct(t);
			tasks[n++] = t;
		}
	}
	rcu_read_unlock();

	hs_event_attr(&s->cfg, &attr);
	attr.inherit = 1;
	for (i = 0; i < n; i++) {
		struct perf_event *event;

		if (!ret) {
			event = perf_event_create_kernel_counter(&attr, -1, tasks[i],
								 hotstack_overflow_handler(s), s);
			if (!IS_ERR(event))
				s->task_events[s->nr_task_events++] = event;
			/* A thread that exited meanwhile has no events to follow. */
			else if (PTR_ERR(event) != -ESRCH)
				ret = PTR_ERR(event);
			/* One period for all: every CPU's slot draws from the first's. */
			if (!IS_ERR(event) && s->nr_task_events == 1)
				for (j = 0; j < s->tabs.nr_slots; j++)
					hotstack_jitter_set(&s->tabs.slots[j], event);
		}
		put_task_struct(tasks[i]);
	}
	ts->ret = ret ? ret : s->nr_task_events ? 0 : -ESRCH;
}

/* Release the task events (and the children's, inherited from them). */
void hs_task_events_release(struct hotstack_session *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_task_events; i++)
		perf_event_release_kernel(s->task_events[i]);
	kvfree(s->task_events);
	s->task_events = NULL;
	s->nr_task_events = 0;
}

int hs_task_events_start(struct hotstack_session *s)
{
	struct hs_task_start ts = { .s = s };
	struct task_struct *leader;

	rcu_read_lock();
	leader = pid_task(s->pid, PIDTYPE_TGID);
	ts.cap = leader ? get_nr_threads(leader) + 16 : 0;
	rcu_read_unlock();
	if (!ts.cap)
		return -ESRCH;
	if (ts.cap > HOTSTACK_MAX_TASKS + 16)
		return -E2BIG;
	/* Here, not in the worker: charged to the caller's memory cgroup. */
	ts.tasks = kvmalloc_array(ts.cap, sizeof(*ts.tasks), GFP_KERNEL_ACCOUNT);
	s->task_events = kvcalloc(ts.cap, sizeof(*s->task_events), GFP_KERNEL_ACCOUNT);
	if (!ts.tasks || !s->task_events) {
		kvfree(ts.tasks);
		kvfree(s->task_events);
		s->task_events = NULL;
		return -ENOMEM;
	}

	INIT_WORK_ONSTACK(&ts.work, hs_task_events_work);
	queue_work(system_unbound_wq, &ts.work);
	flush_work(&ts.work);
	destroy_work_on_stack(&ts.work);
	kvfree(ts.tasks);
	if (ts.ret)
		hs_task_events_release(s);
	return ts.ret;
}
