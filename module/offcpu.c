// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: off-CPU sessions (HOTSTACK_CFG_OFF_CPU). A probe on the
 * sched_switch tracepoint, attached from START to STOP only (no session,
 * no cost), and for a process and what it starts (HOTSTACK_CFG_TASK) one
 * on sched_process_fork: the probes themselves are in sample.c, with the
 * sampler they share their walks and counts with.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "hotstack.h"

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

/* The sched_switch and sched_waking tracepoints' iterators, their text (hs_in_tp_iter()). */
unsigned long hotstack_tp_iter[2], hotstack_tp_iter_size[2];

#if HS_HAVE_SCHED_SWITCH
static struct tracepoint *hs_sched_switch_tp, *hs_sched_fork_tp, *hs_sched_waking_tp;

static void hs_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		hs_sched_switch_tp = tp;
	else if (!strcmp(tp->name, "sched_process_fork"))
		hs_sched_fork_tp = tp;
	else if (!strcmp(tp->name, "sched_waking"))
		hs_sched_waking_tp = tp;
}

/*
 * The probe is called by __schedule() (a static call to it, the only
 * probe) or by the tracepoint's iterator (more than one: another session,
 * perf, ftrace, a BPF program; or a kernel without static calls): the
 * stacks it walks leave the iterator's frame out, so that they are the
 * same either way. Its text from its symbol ("name+0x0/0xSIZE"); a kernel
 * without kallsyms prints no size, and its stacks keep the frame.
 */
static void hs_find_tp_iter(const struct tracepoint *tp, unsigned int i)
{
	char buf[KSYM_SYMBOL_LEN];
	const char *size;
	unsigned long len;

	sprint_symbol(buf, (unsigned long)tp->iterator);
	size = strchr(buf, '/');
	if (!size || sscanf(size, "/%lx", &len) != 1 || !len)
		return;
	hotstack_tp_iter[i] = (unsigned long)tp->iterator;
	hotstack_tp_iter_size[i] = len;
}

int hotstack_off_cpu_init(void)
{
	for_each_kernel_tracepoint(hs_find_tp, NULL);
	if (!hs_sched_switch_tp)
		pr_info("no sched_switch tracepoint: off-CPU sessions unsupported\n");
	else
		hs_find_tp_iter(hs_sched_switch_tp, 0);
	if (hs_sched_waking_tp)
		hs_find_tp_iter(hs_sched_waking_tp, 1);
	return 0;
}

/*
 * @procs: a process and what it starts (HOTSTACK_CFG_TASK): forks too;
 * @wakers: HOTSTACK_CFG_WAKERS, wakeups too.
 */
bool hotstack_off_cpu_supported(bool procs, bool wakers)
{
	return hs_sched_switch_tp && (!procs || hs_sched_fork_tp) &&
	       (!wakers || hs_sched_waking_tp);
}

/*
 * The references of the set's processes given back (the probes are gone,
 * and the work that takes the exited out).
 */
static void hs_off_procs_put(struct hs_tables *t)
{
	u32 i;

	for (i = 0; i <= t->off.mask; i++) {
		if (t->off_procs[i] != HS_OFF_PROC_GONE)
			put_pid(t->off_procs[i]);
		t->off_procs[i] = NULL;
		if (!(i % 1024))
			cond_resched();
	}
}

/*
 * @task's wait in progress at START, timed from @t0 (when the probe began
 * to time switches): a record as the probe makes, on its kernel stack now
 * (hotstack_walk_blocked()), its key stored once it is written. Its task's
 * context switches, read while it is off the CPU before and after, say at
 * the wait's end whether it ran meanwhile (hs_off_task.start_sw). Process
 * context, @task held, under rcu_read_lock(): a task not exiting then
 * keeps its stack until the read side ends (freed after a grace period).
 */
static void hs_off_waiting(struct hotstack_session *s, struct task_struct *task, u64 t0)
{
	struct hs_tables *t = &s->tabs;
	struct hs_off_task *rec;
	unsigned int state;
	bool replaced;
	int cpu;
	u64 sw;
	u32 i;

	if (READ_ONCE(task->on_cpu))
		return;
	/* Its switches read after it was seen off a CPU ... */
	smp_rmb();
	sw = hs_task_switches(task);
	state = READ_ONCE(task->__state);
	/* ... and it is seen off a CPU again after: no switch-out between. */
	smp_rmb();
	if (READ_ONCE(task->on_cpu) || (task->flags & PF_EXITING))
		return;
	i = hs_offtab_take(&t->off, (unsigned long)task, HS_OFF_BUSY, &replaced);
	if (replaced)
		return;		/* it left a CPU since: the probe's record */
	if (i == HS_OFF_NONE) {
		atomic64_inc(&s->untimed);
		return;
	}
	rec = hs_off_rec(t, i);
	hotstack_walk_blocked(s, task, &rec->st);
	rec->st.key.context = hs_wait_reason(false, state, state == TASK_RUNNING);
	rec->hash = hs_stack_hash(&rec->st, s->seed);
	rec->drop = rec->st.key.nr_kernel ? HS_COUNTED : HOTSTACK_DROP_NO_STACK;
	cpu = task_cpu(task);
	rec->cpu = hs_slot_of(t, cpu) ? cpu : t->hdr->slot_cpu[0];
	rec->w = 1;
	rec->t0 = t0;
	rec->start_sw = sw + 1;
	/* Pairs with the finder's dependency on the key (its switch-in). */
	smp_store_release(&t->off.keys[i], (unsigned long)task);
	atomic64_inc(&s->waits_at_start);
}

/*
 * The waits in progress at START (@t0): each watched thread off the CPU
 * then, held while its record is made. As many as there are records; one
 * past them counts as untimed.
 */
static void hs_off_in_progress(struct hotstack_session *s, u64 t0)
{
	u32 max = s->tabs.off.mask + 1, nr = 0, i;
	struct task_struct *g, *task, **tasks;

	tasks = kvmalloc_array(max, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return;
	rcu_read_lock();
	for_each_process_thread(g, task) {
		if (READ_ONCE(task->on_cpu) || !hotstack_off_watched(s, task))
			continue;
		if (nr == max) {
			atomic64_inc(&s->untimed);
			continue;
		}
		get_task_struct(task);
		tasks[nr++] = task;
	}
	rcu_read_unlock();
	for (i = 0; i < nr; i++) {
		rcu_read_lock();
		hs_off_waiting(s, tasks[i], t0);
		rcu_read_unlock();
		put_task_struct(tasks[i]);
		cond_resched();
	}
	kvfree(tasks);
}

/*
 * At STOP, the probe still on (it frees a dying task's record, and a task
 * whose key is read here is not freed before the RCU read side ends): the
 * waits in progress at START whose tasks ran since (the wait ended before
 * the record was made) marked, start_sw U64_MAX, not to be counted.
 */
static void hs_off_start_check(struct hs_tables *t)
{
	u32 i;

	rcu_read_lock();
	for (i = 0; i <= t->off.mask; i++) {
		struct hs_off_task *rec = hs_off_rec(t, i);
		unsigned long k = READ_ONCE(t->off.keys[i]);
		struct task_struct *task = (struct task_struct *)k;
		u64 sw;

		if (k <= HS_OFF_BUSY)
			continue;
		sw = READ_ONCE(rec->start_sw);
		if (sw && sw != U64_MAX &&
		    (READ_ONCE(task->on_cpu) || sw != hs_task_switches(task) + 1))
			cmpxchg(&rec->start_sw, sw, U64_MAX);	/* not a record the probe remade */
	}
	rcu_read_unlock();
}

/*
 * No waits yet: every record free; a process and what it starts: the
 * process alone in the set, and the fork probe before the switch probe.
 */
int hotstack_off_cpu_start(struct hotstack_session *s)
{
	struct hs_tables *t = &s->tabs;
	int ret;

	memset(t->off.keys, 0, (t->off.mask + 1UL) * sizeof(*t->off.keys));
	memset(t->off.homes, 0, (t->off.mask + 1UL) * sizeof(*t->off.homes));
	if (s->wakers) {
		memset(t->wake.keys, 0, (t->wake.mask + 1UL) * sizeof(*t->wake.keys));
		memset(t->wake.homes, 0, (t->wake.mask + 1UL) * sizeof(*t->wake.homes));
	}
	atomic64_set(&s->untimed, 0);
	atomic64_set(&s->waits_at_start, 0);
	atomic64_set(&s->wakers_unseen, 0);
	atomic_set(&s->off_added, 0);
	if (t->off_procs) {
		hotstack_off_proc_add(t, s->pid);
		ret = tracepoint_probe_register(hs_sched_fork_tp, hotstack_sched_fork, s);
		if (ret)
			goto out_procs;
	}
	/*
	 * The probe times from when every CPU calls it: a switch-out timed on
	 * one CPU is not switched in on another unseen. Registered, a CPU may
	 * still be in the tracepoint's call with the probes before it (an RCU
	 * read side, preemption off): a grace period later, none is.
	 */
	WRITE_ONCE(s->off_until, 0);
	ret = tracepoint_probe_register(hs_sched_switch_tp, hotstack_sched_switch, s);
	if (!ret && s->wakers) {
		ret = tracepoint_probe_register(hs_sched_waking_tp, hotstack_sched_waking, s);
		if (ret) {
			WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_switch_tp,
								 hotstack_sched_switch, s));
			tracepoint_synchronize_unregister();
		}
	}
	s->off_probe = !ret;
	if (!ret) {
		u64 t0;

		synchronize_rcu();
		t0 = ktime_get_mono_fast_ns();
		WRITE_ONCE(s->off_until, U64_MAX);
		/* Every switch-out from here is the probe's: the waits begun before. */
		if (!(s->cfg.flags & HOTSTACK_CFG_OFF_NEW))
			hs_off_in_progress(s, t0);
	}
	if (!ret || !t->off_procs)
		return ret;
	WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_fork_tp, hotstack_sched_fork, s));
	tracepoint_synchronize_unregister();
	cancel_work_sync(&s->off_reap);
out_procs:
	hs_off_procs_put(t);
	return ret;
}

/*
 * STOP's time read, the probes off, and gone from every CPU; then the
 * waits still going on are counted up to that time, each in the table of
 * the CPU it began on (all quiet now), so that every wait of the session
 * is counted once and none past STOP (the probe counts up to it too, and
 * begins no wait after it).
 */
void hotstack_off_cpu_stop(struct hotstack_session *s)
{
	struct hs_tables *t = &s->tabs;
	u64 now;
	u32 i;

	if (!s->off_probe)
		return;		/* wall-clock time's START failed before it */
	s->off_probe = false;
	now = ktime_get_mono_fast_ns();
	WRITE_ONCE(s->off_until, now);
	hs_off_start_check(t);
	WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_switch_tp, hotstack_sched_switch, s));
	if (s->wakers)
		WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_waking_tp,
							 hotstack_sched_waking, s));
	if (t->off_procs)
		WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_fork_tp, hotstack_sched_fork, s));
	tracepoint_synchronize_unregister();
	for (i = 0; i <= t->off.mask; i++) {
		struct hs_off_task *rec = hs_off_rec(t, i);
		unsigned long task = t->off.keys[i], *wkey = NULL;
		struct hs_slot *slot;

		if (task <= HS_OFF_GONE)
			continue;
		t->off.keys[i] = HS_OFF_FREE;
		/* Begun after STOP's time, its probe there still: not the session's. */
		if (rec->t0 >= now || rec->start_sw == U64_MAX)
			continue;
		slot = hs_slot_of(t, rec->cpu);
		/* Woken already, not yet back on a CPU: with its waker. */
		if (s->wakers && task != HS_OFF_BUSY)
			wkey = hs_offtab_find(&t->wake, task);
		/* hs_drop() and hs_fill() name the CPU they run on. */
		preempt_disable();
		hotstack_off_count(s, slot, &slot->tab[s->active], rec, now,
				   wkey ? hs_wake_rec(t, wkey - t->wake.keys) : NULL);
		preempt_enable();
		if (!(i % 1024))
			cond_resched();
	}
	if (t->off_procs) {
		cancel_work_sync(&s->off_reap);
		hs_off_procs_put(t);
	}
}

/*
 * A process set's processes that have exited taken out, so that a long
 * session's new ones find places: each whose process is gone (its
 * struct pid has no task: the whole thread group released), which no
 * task can be switching in or out as, nor fork from. Queued by the fork
 * probe; in process context, where the reference can go.
 */
void hotstack_off_reap_work(struct work_struct *work)
{
	struct hotstack_session *s = container_of(work, struct hotstack_session, off_reap);
	struct hs_tables *t = &s->tabs;
	u32 i;

	for (i = 0; i <= t->off.mask; i++) {
		struct pid *p = READ_ONCE(t->off_procs[i]);

		if (p && p != HS_OFF_PROC_GONE && !pid_has_task(p, PIDTYPE_TGID) &&
		    try_cmpxchg(&t->off_procs[i], &p, HS_OFF_PROC_GONE))
			put_pid(p);
		if (!(i % 1024))
			cond_resched();
	}
}
#else
int hotstack_off_cpu_init(void)
{
	return 0;
}

bool hotstack_off_cpu_supported(bool procs, bool wakers)
{
	return false;
}

int hotstack_off_cpu_start(struct hotstack_session *s)
{
	return -EOPNOTSUPP;
}

void hotstack_off_cpu_stop(struct hotstack_session *s)
{
}

void hotstack_off_reap_work(struct work_struct *work)
{
}
#endif
