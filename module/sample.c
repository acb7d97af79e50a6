// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: the sample path. Everything the overflow handler runs is here,
 * except the table's rare parts (stacktab.c); the stack walks are inline
 * (unwind_<arch>.h, and uwalk.h by unwind tables), so that one function
 * does a whole sample.
 *
 * It runs in NMI context (hardware events, test NMIs) or hardirq context
 * (hrtimer-based software events): no locks, no allocation, no printk, no
 * sleeping, bounded work. Every sample ends as exactly one count or one
 * drop in the active generation of this CPU's table.
 */
#include <linux/cgroup.h>
#include <linux/hardirq.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include <asm/local64.h>

#include "hotstack.h"
#if defined(CONFIG_X86_64)
#include "unwind_x86.h"
#elif defined(CONFIG_ARM64)
#include "unwind_arm64.h"
#else
#error "hotstack: x86_64 and arm64 only"
#endif
#include "uwalk.h"

/* The generation of @slot's table @tab. */
static __always_inline unsigned int hs_gen(const struct hs_slot *slot,
					   const struct hs_table *tab)
{
	return tab != &slot->tab[0];
}

/*
 * Count a drop (@w samples: the weight) in @slot's table @tab, and raise
 * the event of its reason's first one.
 */
static __always_inline void hs_drop(struct hotstack_session *s, struct hs_slot *slot,
				    struct hs_table *tab, int reason, u64 w)
{
	hs_add(&tab->stats->drops[reason], w);
	hotstack_raise(s, hs_gen(slot, tab), HS_EV_DROP + reason, smp_processor_id());
}

/*
 * How full @tab is, in percent: its CPU's count table or the store,
 * whichever is fuller (a new stack needs a place in both).
 */
static u32 hs_fill_pct(const struct hs_table *tab)
{
	const struct hs_store *st = tab->store;
	u64 mine = tab->stats->entries * 100 / tab->max_used;
	u64 all = (u64)READ_ONCE(st->stats->stacks) * 100 / st->max_used;

	return min_t(u64, max(mine, all), 100);
}

/*
 * A new entry took @slot's table @tab to where its next fill level may be
 * due: raise the events of the levels reached, and say where the next is
 * (the sample path compares two counts, not percentages).
 */
static void hs_fill(struct hotstack_session *s, struct hs_slot *slot, struct hs_table *tab)
{
	unsigned int gen = hs_gen(slot, tab);
	u32 pct = hs_fill_pct(tab), next;

	while (tab->fill_step < HS_FILL_STEPS && pct >= hotstack_fill_pct[tab->fill_step]) {
		hotstack_raise(s, gen, HS_EV_FILL + tab->fill_step, smp_processor_id());
		tab->fill_step++;
	}
	if (tab->fill_step == HS_FILL_STEPS) {
		tab->fill_entries = U32_MAX;
		tab->fill_stacks = U32_MAX;
		return;
	}
	/* hs_fill_pct()'s percentages reach @next from these counts on. */
	next = hotstack_fill_pct[tab->fill_step];
	tab->fill_entries = DIV_ROUND_UP((u64)next * tab->max_used, 100);
	tab->fill_stacks = DIV_ROUND_UP((u64)next * tab->store->max_used, 100);
}

/* Whether a new entry in @tab may have taken it to its next fill level. */
static __always_inline bool hs_fill_due(const struct hs_table *tab)
{
	return tab->stats->entries >= tab->fill_entries ||
	       READ_ONCE(tab->store->stats->stacks) >= tab->fill_stacks;
}

/*
 * A sample or a wait of weight @w is over, in @slot's table @tab: counted
 * (@drop HS_COUNTED or HS_COUNTED_NEW, @flags its key's) or dropped for
 * @drop. Returns @tab's counters.
 */
static __always_inline struct hotstack_cpu_stats *hs_count(struct hotstack_session *s,
							   struct hs_slot *slot,
							   struct hs_table *tab, int drop,
							   u8 flags, u64 w)
{
	struct hotstack_cpu_stats *stats = tab->stats;

	hs_add(&stats->samples, w);
	if (drop >= 0) {
		hs_drop(s, slot, tab, drop, w);
	} else {
		stats->counted += w;
		if (flags & HOTSTACK_ENTRY_TRUNCATED)
			stats->truncated += w;
		/* Only a new entry can take the tables to their next fill level. */
		if (drop == HS_COUNTED_NEW && hs_fill_due(tab))
			hs_fill(s, slot, tab);
	}
	return stats;
}

/*
 * What the sample interrupted. An overflow in an interrupt (hrtimer, NMI)
 * adds hardirq levels of its own (how many is the architecture's to say);
 * a synchronous software event (page fault, context switch) adds none.
 */
static u8 hs_context(const struct hotstack_session *s, struct pt_regs *regs)
{
	unsigned int own = s->sync_event ? 0 : hs_irq_levels(regs) * HARDIRQ_OFFSET;

	if (hardirq_count() > own)
		return HOTSTACK_CTX_HARDIRQ;
	if (in_serving_softirq())
		return HOTSTACK_CTX_SOFTIRQ;
	if (is_idle_task(current))
		return HOTSTACK_CTX_IDLE;
	return HOTSTACK_CTX_TASK;
}

/* @task's keys but the context: the sample's, or a wait's in progress at START. */
static __always_inline void hs_fill_task_key(const struct hotstack_session *s,
					     struct task_struct *task, struct hs_key *k)
{
	u32 keys = s->cfg.keys;

	/* As the opener's pid namespace numbers it (0: not in it). */
	if (keys & HOTSTACK_KEY_TGID)
		k->tgid = task_tgid_nr_ns(task, s->pid_ns);
	if (keys & HOTSTACK_KEY_COMM)
		memcpy(k->comm, task->comm, sizeof(k->comm));
	if (keys & HOTSTACK_KEY_CGROUP)
		k->cgroup = hs_task_cgroup_id(task);
}

static void hs_fill_key(const struct hotstack_session *s, struct pt_regs *regs,
			struct hs_key *k)
{
	hs_fill_task_key(s, current, k);
	if (s->cfg.keys & HOTSTACK_KEY_CONTEXT)
		k->context = hs_context(s, regs);
}

/*
 * Whether @pid (a process's) is in @t's set of the processes an off-CPU
 * session of a process and what it starts times (hs_tables.off_procs):
 * pointers compared, never followed.
 */
static __always_inline bool hs_off_proc(const struct hs_tables *t, const struct pid *pid)
{
	u32 i = hash_ptr(pid, t->off.bits), n;

	for (n = 0; n < HS_OFF_PROBES; n++, i = (i + 1) & t->off.mask) {
		const struct pid *p = READ_ONCE(t->off_procs[i]);

		if (p == pid)
			return true;
		if (!p)
			return false;
	}
	return false;
}

/*
 * Whether @task (the one interrupted, or switching) is one @s leaves out
 * (s->filter): not of its process (per-task events sample only their
 * tasks and their children: no filter; an off-CPU session of them, its
 * set), the idle task, or in none of its cgroups nor below them.
 * The task's css_set is RCU's: read under rcu_read_lock() (hs_task_cgroup_id()).
 */
static __always_inline bool hs_task_filtered(const struct hotstack_session *s,
					     struct task_struct *task)
{
	unsigned int i;

	if ((s->cfg.flags & HOTSTACK_CFG_PID) && !s->task_mode && task_tgid(task) != s->pid)
		return true;
	if (s->tabs.off_procs && !hs_off_proc(&s->tabs, task_tgid(task)))
		return true;
	if ((s->cfg.flags & HOTSTACK_CFG_EXCLUDE_IDLE) && is_idle_task(task))
		return true;
	if (!s->cgroups.nr)
		return false;
	rcu_read_lock();
	for (i = 0; i < s->cgroups.nr; i++)
		if (task_under_cgroup_hierarchy(task, s->cgroups.cg[i]))
			break;
	rcu_read_unlock();
	return i == s->cgroups.nr;
}

static __always_inline bool hs_filtered(const struct hotstack_session *s)
{
	return hs_task_filtered(s, current);
}

/* Whether off-CPU session @s times @task's waits (START: hotstack_off_cpu_start()). */
bool hotstack_off_watched(const struct hotstack_session *s, struct task_struct *task)
{
	return !is_idle_task(task) && !(s->filter && hs_task_filtered(s, task));
}

/*
 * Whether the session may see this task's user stack: always when a
 * CAP_PERFMON holder configured it; for a delegated user (the module's
 * group), only a task that ptrace's read rule would let them look into
 * (hs_creds_readable(), and dumpable: not setuid, no PR_SET_DUMPABLE 0).
 */
static __always_inline bool hs_user_visible(const struct hotstack_session *s)
{
	if (s->privileged)
		return true;
	return current->mm && hs_creds_readable(s->cred, current_cred()) &&
	       hs_current_dumpable();
}

/*
 * Walk the stacks of @regs into @st; returns the drop reason or HS_COUNTED,
 * and in *@hash the stack's hash (hs_stack_hash() with @seed, whose
 * hs_hash_start() of a key without tgid and comm is @hash0); @slot: this
 * CPU's. @path: not HS_PATH_IP. @probe: the off-CPU probes' (hs_in_tp_iter();
 * @regs a caller's, as a context switch's event's: frame 0 a return
 * address, HOTSTACK_ENTRY_CALLER). @user: the user stack too, if the
 * session has them (a waker in an interrupt: not its own).
 */
static __always_inline int hs_walk(const struct hotstack_session *s, struct pt_regs *regs,
				   struct hs_slot *slot, struct hs_stack *st, u64 seed, u64 hash0,
				   u64 *hash, const enum hs_path path, const bool probe, bool user)
{
	struct hs_walk w = {
		.frames = st->frames,
		.next = st->frames,
		.end = st->frames + s->cfg.max_depth,
		.hash = path == HS_PATH_KERNEL ? hash0 : hs_hash_start(&st->key, seed),
		.collapse = path == HS_PATH_ANY && (s->cfg.flags & HOTSTACK_CFG_COLLAPSE),
	};
	unsigned int nr_kernel;
	u8 flags = 0;

	/*
	 * @st and its frames are read again from @slot after the walk: the
	 * fewer values kept across the unwinder's calls, the fewer go to the
	 * stack and back.
	 */
	if (user_mode(regs)) {
		flags |= HOTSTACK_ENTRY_USER_MODE;
	} else if (path == HS_PATH_KERNEL || (s->cfg.stacks & HOTSTACK_STACK_KERNEL)) {
		/* IP only (max_depth 1): no walk at all, the stack is cut. */
		if (path == HS_PATH_ANY && s->cfg.max_depth == 1) {
			hs_walk_push(&w, instruction_pointer(regs), false);
			w.truncated = true;
		} else if (path == HS_PATH_ANY && hs_precise_regs(regs, s->cfg.precise)) {
			hs_walk_kernel(&w, regs, slot, w.collapse, true, false);
		} else if (w.collapse) {
			hs_walk_kernel(&w, regs, slot, true, false, probe);
		} else {
			hs_walk_kernel(&w, regs, slot, false, false, probe);
		}
		/* Read after the walk: one value less kept across its calls. */
		if (probe || s->caller_regs)
			flags |= HOTSTACK_ENTRY_CALLER;
	}
	st = slot->buf;
	nr_kernel = w.next - st->frames;
	if (path == HS_PATH_ANY && (s->cfg.stacks & HOTSTACK_STACK_USER) && !w.truncated && user) {
		if (!hs_user_visible(s))
			flags |= HOTSTACK_ENTRY_USER_HIDDEN;
		else if ((s->cfg.flags & HOTSTACK_CFG_USER_TABLES) && w.collapse)
			hs_walk_user_tables(s, slot, &w, regs, true);
		else if (s->cfg.flags & HOTSTACK_CFG_USER_TABLES)
			hs_walk_user_tables(s, slot, &w, regs, false);
		else if (w.collapse)
			hs_walk_user(&w, regs, true);
		else
			hs_walk_user(&w, regs, false);
	}

	st = slot->buf;
	if (w.truncated)
		flags |= HOTSTACK_ENTRY_TRUNCATED;
	if (w.fault)
		flags |= HOTSTACK_ENTRY_USER_FAULT;
	if (w.collapsed) {
		flags |= HOTSTACK_ENTRY_COLLAPSED;
		st->key.depth = min_t(unsigned int, w.collapsed, U16_MAX);
	}
	st->key.nr_kernel = nr_kernel;
	/* HS_PATH_KERNEL: no user walk, and nr_user stays 0 (kzalloc). */
	if (path != HS_PATH_KERNEL)
		st->key.nr_user = w.next - st->frames - nr_kernel;
	st->key.flags = flags;
	*hash = hs_hash_end(w.hash, &st->key);
	/* A user-mode sample with no user walk still counts, as "[user]". */
	if (w.next == st->frames &&
	    !(flags & (HOTSTACK_ENTRY_USER_MODE | HOTSTACK_ENTRY_USER_HIDDEN)))
		return HOTSTACK_DROP_NO_STACK;
	return HS_COUNTED;
}

/**
 * hotstack_walk_blocked - the keys and kernel stack of a task off the CPU
 * @s: its off-CPU session
 * @task: the task, not exiting, under rcu_read_lock()
 * @st: its key (all but the context, cleared first), and its frames
 *	(max_depth of them) with their count and flags
 *
 * For a wait in progress at START (offcpu.c): frame 0 is a return address
 * (into __schedule() on x86_64), as the probe's; process context.
 */
void hotstack_walk_blocked(const struct hotstack_session *s, struct task_struct *task,
			   struct hs_stack *st)
{
	struct hs_walk w = {
		.frames = st->frames,
		.next = st->frames,
		.end = st->frames + s->cfg.max_depth,
	};

	memset(&st->key, 0, sizeof(st->key));
	hs_fill_task_key(s, task, &st->key);
	if (s->cfg.stacks & HOTSTACK_STACK_KERNEL)
		hs_walk_blocked(&w, task);
	st->key.nr_kernel = w.next - st->frames;
	st->key.nr_user = 0;
	st->key.flags = HOTSTACK_ENTRY_CALLER | (w.truncated ? HOTSTACK_ENTRY_TRUNCATED : 0);
}

/*
 * The IP-only path (HS_PATH_IP): the interrupted IP alone, as hs_walk()
 * would take it (marked truncated; a sample in user mode is "[user]"),
 * looked up without a walk buffer (a new stack is made in @slot's); its
 * key, flags and the hash of its key are the session's, made at
 * CONFIGURE. Returns what hs_table_add() does; @flags: the entry's flags.
 */
static __always_inline int hs_sample_ip(const struct hotstack_session *s,
					struct hs_slot *slot, struct hs_table *tab,
					struct pt_regs *regs, u64 w, u8 *flags)
{
	unsigned int user = !!user_mode(regs), nr = !user;
	u64 ip = user ? 0 : instruction_pointer(regs);

	*flags = s->ip_flags[user];
	return hs_table_add_ip(tab, slot->buf, s->ip_key[user], nr, ip,
			       hs_ip_hash(s->ip_hkey[user], nr, ip), w);
}

/* A timed handler run that began at @start (local_clock()) ends. */
static __always_inline void hs_timed(struct hs_slot *slot, struct hotstack_cpu_stats *stats,
				     u64 start)
{
	u64 ns = local_clock() - start;

	stats->timed++;
	stats->handler_ns += ns;
	stats->hist[min_t(unsigned int, ns ? ilog2(ns) : 0, HOTSTACK_HIST_BUCKETS - 1)]++;
	/*
	 * For the budget: never cleared (a nested sample is not timed). A run
	 * is weighed at most HS_COST_OUTLIER times the cost known (and 20 us):
	 * a vCPU the host stopped mid-run, ms of it, is not this code's cost
	 * (the stats above keep it), and one such run in a first short window
	 * would raise W to its limit.
	 */
	slot->timed++;
	slot->timed_ns += min_t(u64, ns, HS_COST_OUTLIER * READ_ONCE(slot->b_cost) + 20000);
}

/*
 * One sample, by @path: a constant in each caller, so that each path is a
 * function of its own (enum hs_path). @slot: this CPU's (NULL: none).
 * @wall: wall-clock time's weight, the ns since the last sample or switch
 * on this CPU; 0: the table's. @filter: s->filter, a constant in the IP
 * and kernel paths' handlers (one for each filter).
 */
static __always_inline void hs_sample(struct hotstack_session *s, struct hs_slot *slot,
				      struct pt_regs *regs, const enum hs_path path, u64 wall,
				      const enum hs_filter filter)
{
	struct hotstack_cpu_stats *stats;
	struct hs_table *tab;
	struct hs_stack *st;
	u64 start = 0, hash, w;
	int drop;
	u8 flags = 0;

	if (unlikely(!slot)) {
		/* A per-task event on a CPU that came online after CONFIGURE. */
		if (s->task_mode)
			atomic64_inc(&s->lost);
		return;		/* else: not a CPU of this session */
	}
	/* RCU reader: SNAPSHOT waits for us before reading the other table. */
	tab = READ_ONCE(slot->cur);
	local64_inc(&slot->taken);
	local64_inc((local64_t *)&tab->interrupts);
	if (unlikely(local_inc_return(&slot->busy) != 1)) {
		drop = HOTSTACK_DROP_NESTED;
		goto out_count;
	}
	/* Clock reads cost as much as the rest of an IP sample: time 1 in N. */
	if (!(local64_read((local64_t *)&tab->interrupts) & (HOTSTACK_TIMED_EVERY - 1)))
		start = local_clock();

	/* record -a's default filter, the idle task alone: one test. */
	if (filter == HS_FILTER_IDLE ? unlikely(is_idle_task(current)) :
	    unlikely(filter != HS_FILTER_NONE) && hs_filtered(s)) {
		drop = HOTSTACK_DROP_FILTERED;
	} else if (unlikely(!regs)) {
		drop = HOTSTACK_DROP_NO_STACK;
	} else if (path == HS_PATH_IP) {
		w = wall ?: READ_ONCE(tab->weight);
		drop = hs_sample_ip(s, slot, tab, regs, w, &flags);
		goto out_count_w;
	} else {
		st = slot->buf;
		/*
		 * Kernel stacks: the key's words past the first are zero
		 * (kzalloc) and stay so, the first is made by the walk.
		 */
		if (path == HS_PATH_ANY) {
			memset(&st->key, 0, sizeof(st->key));
			if (s->cfg.keys)
				hs_fill_key(s, regs, &st->key);
		}
		drop = hs_walk(s, regs, slot, st, tab->seed, tab->hash0, &hash, path, false, true);
		/*
		 * The weight, read once after the walk (the fewer values kept
		 * across it the better): what this sample counts everywhere.
		 */
		w = wall ?: READ_ONCE(tab->weight);
		st = slot->buf;	/* again, as hs_walk() does */
		if (drop < 0)
			drop = hs_table_add(tab, st, hash, w, path == HS_PATH_ANY);
		flags = st->key.flags;
		goto out_count_w;
	}
out_count:
	/* A sample stands for @w at the rate asked for (a budget's W, else 1). */
	w = wall ?: READ_ONCE(tab->weight);
out_count_w:
	if (in_nmi())
		hs_add(&tab->stats->nmi_samples, w);
	stats = hs_count(s, slot, tab, drop, flags, w);
	if (start)		/* never in a nested sample */
		hs_timed(slot, stats, start);
	local_dec(&slot->busy);
}

/**
 * hotstack_sample - take one sample for session @s on this CPU
 * @s: a RUNNING session
 * @regs: the interrupted registers
 *
 * For test NMIs (hotstack_test_sample()); events call their overflow
 * handler. Called from NMI or hardirq context.
 */
void hotstack_sample(struct hotstack_session *s, struct pt_regs *regs)
{
	struct hs_slot *slot = hs_this_slot(&s->tabs);

	switch (s->path) {
	case HS_PATH_IP:
		hs_sample(s, slot, regs, HS_PATH_IP, 0, s->filter);
		break;
	case HS_PATH_KERNEL:
		hs_sample(s, slot, regs, HS_PATH_KERNEL, 0, s->filter);
		break;
	default:
		hs_sample(s, slot, regs, HS_PATH_ANY, 0, s->filter);
	}
}

/*
 * A fixed period's next but one (the PMU's next is set before the handler
 * runs; a clock's hrtimer reads it after), drawn from its mean +- 1/16:
 * the samples of a periodic loop do not all land at one phase of it, with
 * or without a budget's longer period. Its range is made where the period
 * is set (hotstack_jitter_set()), not at each sample: a draw and a scale.
 */
static __always_inline void hs_jitter(struct perf_event *event, struct hs_slot *slot)
{
	u64 span = slot ? READ_ONCE(slot->jit_span) : 0;

	if (likely(span))
		WRITE_ONCE(event->hw.sample_period,
			   hs_jitter_draw(READ_ONCE(slot->jit_base), span, hs_lcg(&slot->rnd)));
}

/**
 * hotstack_jitter_set - the range hs_jitter() draws @slot's periods from
 * @slot: a CPU's slot, whose events have @event's period
 * @event: one of them, just made (perf_event_create_kernel_counter()) or
 *	given a new period (perf_event_period(): its mean, attr.sample_period)
 *
 * Its period +- 1/16 (+- 2^32 - 1 past 2^36). A frequency's period is
 * perf's to adjust: none (a clock's frequency is a period by now, perf
 * having cleared attr.freq). A sample that reads the range while it
 * changes draws one period between the two.
 */
void hotstack_jitter_set(struct hs_slot *slot, const struct perf_event *event)
{
	u64 p = READ_ONCE(event->attr.sample_period), j = min_t(u64, p >> 4, U32_MAX);

	WRITE_ONCE(slot->jit_base, p - j);
	WRITE_ONCE(slot->jit_span, event->attr.freq ? 0 : 2 * j + 1);
}

/*
 * perf marks an event it has just throttled with this many interrupts
 * (MAX_INTERRUPTS, private to kernel/events/core.c) before it calls the
 * overflow handler one last time.
 */
#define HS_PERF_THROTTLED	(~0ULL)

/*
 * perf overflow handler of a session's events, one for each path, and on
 * the IP and kernel paths one for each filter (none: no test; record -a's,
 * the idle task: one), each with the sample inline: no call in between.
 * Called from NMI or hardirq; notrace, as the probes: the function
 * tracer's hook is an instruction a sample.
 */
static __always_inline void hs_overflow(struct perf_event *event, struct pt_regs *regs,
					const enum hs_path path, u64 wall,
					const enum hs_filter filter)
{
	struct hotstack_session *s = event->overflow_handler_context;
	struct hs_slot *slot = hs_this_slot(&s->tabs);

	if (unlikely(event->hw.interrupts == HS_PERF_THROTTLED))
		hotstack_raise(s, READ_ONCE(s->active), HS_EV_THROTTLE, smp_processor_id());
	hs_jitter(event, slot);
	hs_sample(s, slot, regs, path, wall, filter == HS_FILTER_NR ? s->filter : filter);
}

/* The handler of @path (IP or kernel) and @filter. */
#define HS_OVERFLOW(name, path, filter)							\
static notrace void name(struct perf_event *event, struct perf_sample_data *data,		\
			 struct pt_regs *regs)							\
{												\
	hs_overflow(event, regs, path, 0, filter);						\
}

HS_OVERFLOW(hs_overflow_ip, HS_PATH_IP, HS_FILTER_NONE)
HS_OVERFLOW(hs_overflow_ip_idle, HS_PATH_IP, HS_FILTER_IDLE)
HS_OVERFLOW(hs_overflow_ip_task, HS_PATH_IP, HS_FILTER_TASK)
HS_OVERFLOW(hs_overflow_kernel, HS_PATH_KERNEL, HS_FILTER_NONE)
HS_OVERFLOW(hs_overflow_kernel_idle, HS_PATH_KERNEL, HS_FILTER_IDLE)
HS_OVERFLOW(hs_overflow_kernel_task, HS_PATH_KERNEL, HS_FILTER_TASK)

/* Any configuration: the session's filter read at each sample. */
static notrace void hs_overflow_any(struct perf_event *event, struct perf_sample_data *data,
				    struct pt_regs *regs)
{
	hs_overflow(event, regs, HS_PATH_ANY, 0, HS_FILTER_NR);
}

/*
 * Wall-clock time's handler (a clock's hrtimer, interrupts off): a sample
 * weighs the time since the last sample or switch on this CPU, so that a
 * late or throttled timer's time is not lost, and a budget's longer
 * period is in it already; every key.
 */
static notrace void hs_overflow_wall(struct perf_event *event, struct perf_sample_data *data,
				     struct pt_regs *regs)
{
	struct hotstack_session *s = event->overflow_handler_context;
	struct hs_slot *slot = hs_this_slot(&s->tabs);
	u64 now = ktime_get_mono_fast_ns(), ns = 1;

	if (slot) {
		ns = now > slot->wall_ns ? now - slot->wall_ns : 1;
		slot->wall_ns = now;
	}
	hs_overflow(event, regs, HS_PATH_ANY, ns, HS_FILTER_NR);
}

/* The overflow handler of @s's events (its path is set by CONFIGURE). */
perf_overflow_handler_t hotstack_overflow_handler(const struct hotstack_session *s)
{
	static const perf_overflow_handler_t handler[][HS_FILTER_NR] = {
		[HS_PATH_IP] = { hs_overflow_ip, hs_overflow_ip_idle, hs_overflow_ip_task },
		[HS_PATH_KERNEL] = { hs_overflow_kernel, hs_overflow_kernel_idle,
				     hs_overflow_kernel_task },
	};

	if (s->wall)
		return hs_overflow_wall;
	return s->path == HS_PATH_ANY ? hs_overflow_any : handler[s->path][s->filter];
}

/*
 * Off-CPU sessions (HOTSTACK_CFG_OFF_CPU): the sched_switch probe. It runs
 * in __schedule(), interrupts off and the runqueue locked, with @prev the
 * current task: the same rules as the sampler (no locks, no allocation,
 * bounded work). Each CPU's table has one writer still: the probe of that
 * CPU, which no sample of the session can interrupt (it has no events,
 * and is not on the test hook's list). A task's record is written by the
 * probe of the CPU it leaves and read by that of the CPU it runs on next,
 * after the scheduler's own ordering of the two (p->on_cpu).
 */

/* The key of @task's record, or NULL: it has none (hs_offtab_find()). */
static __always_inline unsigned long *hs_off_find(struct hs_tables *t, unsigned long task)
{
	return hs_offtab_find(&t->off, task);
}

/* @task's record, at @key, freed: after what was read of it. */
static __always_inline void hs_off_free(struct hs_tables *t, unsigned long *key,
					unsigned long task)
{
	hs_offtab_free(&t->off, key, task);
}

/*
 * @task exits: a record of its still (its switch-in was not seen) is not
 * counted at STOP as a wait to then, nor taken for the next task at its
 * address. Counted as untimed.
 */
static __always_inline void hs_off_dead(struct hotstack_session *s, struct hs_tables *t,
					unsigned long task)
{
	unsigned long *key = hs_off_find(t, task);

	if (key) {
		atomic64_inc(&s->untimed);
		hs_off_free(t, key, task);
	}
}

/*
 * A record for @task (current, leaving its CPU), or NULL: none free
 * within HS_OFF_PROBES. Its own if it has one still (its switch-in was
 * not seen), which it replaces: a task has one record at most, its
 * latest wait's, and the one replaced is counted as untimed.
 */
static __always_inline struct hs_off_task *hs_off_take(struct hotstack_session *s,
						       struct hs_tables *t, unsigned long task)
{
	bool replaced;
	u32 i = hs_offtab_take(&t->off, task, task, &replaced);

	if (replaced)
		atomic64_inc(&s->untimed);
	return i == HS_OFF_NONE ? NULL : hs_off_rec(t, i);
}

/**
 * hotstack_off_proc_add - a process into an off-CPU session's set
 * @t: the session's tables (off_procs not NULL)
 * @pid: the process's (task_tgid()), referenced until it is taken out
 *	 (hotstack_off_reap_work()) or STOP
 *
 * Return: whether it is in the set; false when no place within
 * HS_OFF_PROBES is free (or taken out). In any context: a fork's probe,
 * or START. One caller at a time adds a given process (its fork's).
 */
bool hotstack_off_proc_add(struct hs_tables *t, struct pid *pid)
{
	u32 i = hash_ptr(pid, t->off.bits), n, at = HS_OFF_PROBES;

	for (n = 0; n < HS_OFF_PROBES; n++) {
		struct pid *p = READ_ONCE(t->off_procs[(i + n) & t->off.mask]);

		if (p == pid)
			return true;
		if ((!p || p == HS_OFF_PROC_GONE) && at == HS_OFF_PROBES)
			at = n;
		if (!p)
			break;
	}
	for (n = at; n < HS_OFF_PROBES; n++) {
		struct pid **slot = &t->off_procs[(i + n) & t->off.mask], *p = READ_ONCE(*slot);

		/* The lookups compare only: the reference can follow. */
		if ((!p || p == HS_OFF_PROC_GONE) && try_cmpxchg(slot, &p, pid)) {
			get_pid(pid);
			return true;
		}
	}
	return false;
}

/**
 * hotstack_sched_fork - the sched_process_fork probe of an off-CPU session
 * of a process and what it starts (HOTSTACK_CFG_TASK)
 * @data: the session
 * @parent: the task that forked (current)
 * @child: the new task, not yet woken
 *
 * A process forked in one of the set joins it before it can first run
 * (a thread is of its parent's process already); one the full set cannot
 * take counts once in the session's untimed.
 */
void hotstack_sched_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct hotstack_session *s = data;
	struct pid *pid = task_tgid(child);

	if (pid == task_tgid(parent) || !hs_off_proc(&s->tabs, task_tgid(parent)))
		return;
	if (!hotstack_off_proc_add(&s->tabs, pid))
		atomic64_inc(&s->untimed);
	/* Every eighth of the set's size of new processes, the exited ones out. */
	if (atomic_inc_return(&s->off_added) >= (s->tabs.off.mask + 1) / 8) {
		atomic_set(&s->off_added, 0);
		schedule_work(&s->off_reap);
	}
}

/*
 * @st, a sleep's stack, and its waker's @wk joined at @out (room for
 * HOTSTACK_MAX_DEPTH + HOTSTACK_WAKER_WORDS frames): the waker's frames,
 * its outermost cut to fit (marked TRUNCATED in its flags), then its
 * struct hotstack_waker, after the sleeper's user frames.
 */
static struct hs_stack *hs_wake_join(struct hs_stack *out, const struct hs_stack *st,
				     const struct hs_waker *wk)
{
	unsigned int n = st->key.nr_kernel + st->key.nr_user;
	unsigned int room = HOTSTACK_MAX_DEPTH - n;
	struct hotstack_waker tr = wk->tr;

	memcpy(out, st, sizeof(*st) + n * sizeof(u64));
	if (tr.nr_kernel > room) {
		tr.nr_kernel = room;
		tr.flags |= HOTSTACK_ENTRY_TRUNCATED;
	}
	memcpy(out->frames + n, wk->frames, tr.nr_kernel * sizeof(u64));
	n += tr.nr_kernel;
	room -= tr.nr_kernel;
	if (tr.nr_user > room) {
		tr.nr_user = room;
		tr.flags |= HOTSTACK_ENTRY_TRUNCATED;
	}
	memcpy(out->frames + n, wk->frames + wk->tr.nr_kernel, tr.nr_user * sizeof(u64));
	n += tr.nr_user;
	memcpy(out->frames + n, &tr, sizeof(tr));
	out->key.nr_user += tr.nr_kernel + tr.nr_user + HOTSTACK_WAKER_WORDS;
	out->key.flags |= HOTSTACK_ENTRY_WAKER;
	return out;
}

/**
 * hotstack_off_count - count a wait that ended
 * @s: its session
 * @slot: the slot of this CPU (or, at STOP, of any: the tables are quiet)
 * @tab: @slot's active table
 * @rec: the record of the wait
 * @now: when it ended
 * @wk: who woke its task (HOTSTACK_CFG_WAKERS), or NULL: a sleep is
 *	counted on its stack and @wk's joined (in @slot's walk buffer)
 *
 * As a sample of weight its length (times the budget's W it was taken
 * at): one count or one drop, in nanoseconds. A wait that ended before
 * it began (ktime_get_mono_fast_ns() read on two CPUs can step back) is
 * not timed: counted as untimed. Called with preemption off.
 */
void hotstack_off_count(struct hotstack_session *s, struct hs_slot *slot,
			struct hs_table *tab, struct hs_off_task *rec, u64 now,
			const struct hs_waker *wk)
{
	struct hs_stack *st = &rec->st;
	int drop = rec->drop;
	u64 ns, w, hash = rec->hash;

	if (unlikely(now < rec->t0)) {
		atomic64_inc(&s->untimed);
		return;
	}
	ns = now - rec->t0;
	w = ns * rec->w;

	if (drop < 0 && ns < (u64)s->cfg.min_block_us * NSEC_PER_USEC)
		drop = HOTSTACK_DROP_SHORT_WAIT;
	if (drop < 0 && wk && st->key.context != HOTSTACK_CTX_RUNQUEUE) {
		st = hs_wake_join(slot->buf, st, wk);
		hash = hs_stack_hash(st, tab->seed);
	}
	if (drop < 0)
		drop = hs_table_add(tab, st, hash, w, true);
	hs_count(s, slot, tab, drop, st->key.flags, w);
}

/*
 * With a budget's W > 1: whether this switch-out is one of those left
 * out. The gaps between the timed ones are drawn from [1, 2W - 1] (mean
 * W, so that each counts W), not W each: no task's switches can fall in
 * step with them (two tasks taking turns on a CPU, W even).
 */
static __always_inline bool hs_off_skip(struct hs_slot *slot, u32 w)
{
	if (slot->off_gap > 1) {
		slot->off_gap--;
		return true;
	}
	slot->off_gap = 1 + reciprocal_scale(hs_lcg(&slot->rnd), 2 * w - 1);
	return false;
}

/*
 * The current task leaves the CPU (@preempt, @prev_state: why) at @now:
 * its stacks walked from @regs (its caller's: hs_probe_regs()) into a
 * record of weight @w, or counted as untimed when there is no free one.
 * Returns the record (its stack is in @slot's walk buffer too), or NULL.
 */
static __always_inline struct hs_off_task *hs_off_begin(struct hotstack_session *s,
							struct hs_slot *slot,
							struct hs_table *tab,
							struct pt_regs *regs, bool preempt,
							unsigned int prev_state, u64 now, u32 w)
{
	struct hs_off_task *rec = hs_off_take(s, &s->tabs, (unsigned long)current);
	struct hs_stack *st = slot->buf;
	u64 hash;
	int drop;

	if (!rec) {
		atomic64_inc(&s->untimed);
		return NULL;
	}
	memset(&st->key, 0, sizeof(st->key));
	if (s->cfg.keys)
		hs_fill_key(s, regs, &st->key);
	st->key.context = hs_wait_reason(preempt, prev_state, task_is_running(current));
	drop = hs_walk(s, regs, slot, st, tab->seed, tab->hash0, &hash, HS_PATH_ANY, true, true);
	st = slot->buf;
	rec->t0 = now;
	rec->hash = hash;
	rec->drop = drop;
	rec->cpu = smp_processor_id();
	rec->w = w;
	rec->start_sw = 0;
	rec->st.key = st->key;
	memcpy(rec->st.frames, st->frames, (st->key.nr_kernel + st->key.nr_user) * sizeof(u64));
	return rec;
}

/*
 * Wall-clock time: the current task's last stretch on the CPU, @ns from
 * the last sample or switch here to now, counted @w times (a budget's W:
 * the switch-outs it leaves out count none) on the stack it leaves from
 * (@rec's, in @slot's walk buffer, under HOTSTACK_CTX_TASK instead of the
 * wait's reason), or as a drop: no record was free, no stack.
 */
static __always_inline void hs_wall_tail(struct hotstack_session *s, struct hs_slot *slot,
					 struct hs_table *tab, struct hs_off_task *rec, u64 ns,
					 u32 w)
{
	struct hs_stack *st = slot->buf;
	int drop = rec ? rec->drop : HOTSTACK_DROP_NO_STACK;

	ns *= w;
	st->key.context = HOTSTACK_CTX_TASK;
	if (drop < 0)
		drop = hs_table_add(tab, st, hs_stack_hash(st, tab->seed), ns, true);
	hs_count(s, slot, tab, drop, rec ? st->key.flags : 0, ns);
}

/**
 * hotstack_sched_switch - the sched_switch probe of an off-CPU session
 * @data: the session
 * @preempt: @prev was preempted (it is still runnable)
 * @prev: the task leaving the CPU (current)
 * @next: the task to run
 * @prev_state: @prev's state when it called schedule()
 *
 * @next's wait, if it left a record, ends and is counted here; then
 * @prev's begins, if the session watches it (with a budget's W > 1, one
 * switch-out in W on average), and for wall-clock time its stretch on the
 * CPU since the last sample or switch ends. The work is timed as one
 * handler run, one in HOTSTACK_TIMED_EVERY.
 */
notrace void hotstack_sched_switch(void *data, bool preempt, struct task_struct *prev,
				   struct task_struct *next, unsigned int prev_state)
{
	struct hotstack_session *s = data;
	struct hs_tables *t = &s->tabs;
	struct hs_slot *slot = hs_this_slot(t);
	u64 until = READ_ONCE(s->off_until), now = 0, start = 0;
	unsigned long *key, *wkey;
	struct hs_off_task *rec;
	struct hs_table *tab = NULL;
	bool watch;
	u32 w;

	/* Attached here, not yet on every CPU: a switch-in could be missed. */
	if (unlikely(!until))
		return;
	if (likely(slot)) {
		tab = READ_ONCE(slot->cur);
		local64_inc(&slot->taken);
		local64_inc((local64_t *)&tab->interrupts);
		/* Timed from here, the lookups and filters in it, as a budget weighs it. */
		if (!(local64_read((local64_t *)&tab->interrupts) & (HOTSTACK_TIMED_EVERY - 1)))
			start = local_clock();
	}
	watch = !is_idle_task(prev) && prev_state != TASK_DEAD && !(s->filter && hs_filtered(s));
	/*
	 * The idle task waits for nothing: it has no record to look for. (A
	 * task's process is no test: an exiting task's own can be released,
	 * its tgid gone, between a wait of its own and its switch-in.)
	 */
	key = is_idle_task(next) ? NULL : hs_off_find(t, (unsigned long)next);
	/* Who woke it: read with its wait, freed whether it counts or not. */
	wkey = s->wakers && !is_idle_task(next) ? hs_offtab_find(&t->wake, (unsigned long)next) :
		NULL;
	if (unlikely(prev_state == TASK_DEAD))
		hs_off_dead(s, t, (unsigned long)prev);
	if (unlikely(!slot)) {
		/* A CPU that came online after CONFIGURE: no table, no walk. */
		if (key) {
			atomic64_inc(&s->untimed);
			hs_off_free(t, key, (unsigned long)next);
		}
		if (wkey)
			hs_offtab_free(&t->wake, wkey, (unsigned long)next);
		if (watch)
			atomic64_inc(&s->untimed);
		return;
	}
	/* A switch-out a budget leaves out reads no clock. */
	w = READ_ONCE(tab->weight);
	watch = watch && (w == 1 || !hs_off_skip(slot, w));
	if (key || watch || s->wall) {
		now = ktime_get_mono_fast_ns();
		/* STOP's time passed: counted up to it, no wait begun. */
		if (unlikely(now >= until)) {
			now = until;
			watch = false;
		}
	}
	if (key) {
		rec = hs_off_rec(t, key - t->off.keys);
		/* Not a wait in progress at START whose task has run since. */
		if (likely(!rec->start_sw) || rec->start_sw == hs_task_switches(next) + 1) {
			hotstack_off_count(s, slot, tab, rec, now,
					   wkey ? hs_wake_rec(t, wkey - t->wake.keys) : NULL);
			/* A sleep (not a preemption: no one wakes those), its wakeup missed. */
			if (s->wakers && !wkey && rec->st.key.context != HOTSTACK_CTX_RUNQUEUE)
				atomic64_inc(&s->wakers_unseen);
		}
		/* Read before the record can be taken again. */
		hs_off_free(t, key, (unsigned long)next);
	}
	if (wkey)
		hs_offtab_free(&t->wake, wkey, (unsigned long)next);
	if (watch) {
		hs_probe_regs(&slot->regs);
		rec = hs_off_begin(s, slot, tab, &slot->regs, preempt, prev_state, now, w);
		if (s->wall && now > slot->wall_ns)
			hs_wall_tail(s, slot, tab, rec, now - slot->wall_ns, w);
	}
	/* Wall-clock time: the next sample here counts from this switch. */
	if (s->wall)
		slot->wall_ns = now;
	if (start)
		hs_timed(slot, tab->stats, start);
}

/**
 * hotstack_sched_waking - the sched_waking probe of an off-CPU session
 * with HOTSTACK_CFG_WAKERS
 * @data: the session
 * @p: the task being woken (by current: a task, or an interrupt's handler)
 *
 * try_to_wake_up() calls it under @p's pi_lock, interrupts off, once per
 * wakeup that changes @p's state (never for one already awake): when @p
 * is off its run queue, this wakeup ends its wait, and no other can come
 * before it runs again. Its waker's stacks are walked then, for a wait
 * the switch probe recorded (or one whose switch-out is still under way:
 * @p on its CPU still), into a place of the wakers' table keyed by @p,
 * which @p's switch-in reads and frees. A wakeup that races @p's
 * dequeue (read here on the queue, taken off before try_to_wake_up()
 * looks) leaves its wait without a waker, as does a full table.
 */
notrace void hotstack_sched_waking(void *data, struct task_struct *p)
{
	struct hotstack_session *s = data;
	struct hs_tables *t = &s->tabs;
	struct hs_slot *slot;
	struct hs_waker *wk;
	struct hs_stack *st;
	struct hs_table *tab;
	u64 start = 0, hash;
	bool replaced, seen;
	u32 i;

	/* A task waking itself before it slept: not a wait's end. */
	if (p == current || !READ_ONCE(s->off_until) || !hs_task_dequeued(p))
		return;
	/* Pairs with the release of on_cpu at the end of its switch-out. */
	if (!smp_load_acquire(&p->on_cpu) && !hs_off_find(t, (unsigned long)p))
		return;
	slot = hs_this_slot(t);
	if (unlikely(!slot))
		return;
	if (!(++slot->wakes & (HOTSTACK_TIMED_EVERY - 1)))
		start = local_clock();
	i = hs_offtab_take(&t->wake, (unsigned long)p, HS_OFF_BUSY, &replaced);
	if (i == HS_OFF_NONE)
		goto out;
	wk = hs_wake_rec(t, i);
	tab = READ_ONCE(slot->cur);
	st = slot->buf;
	memset(&st->key, 0, sizeof(st->key));
	hs_probe_regs(&slot->regs);
	hs_walk(s, &slot->regs, slot, st, tab->seed, tab->hash0, &hash, HS_PATH_ANY, true,
		in_task());
	st = slot->buf;
	/* A kernel thread is named to anyone; a process as its user stack is shown. */
	seen = !current->mm || hs_user_visible(s);
	memset(&wk->tr, 0, sizeof(wk->tr));
	if (seen) {
		memcpy(wk->tr.comm, current->comm, sizeof(wk->tr.comm));
		wk->tr.tgid = task_tgid_nr_ns(current, s->pid_ns);
	}
	wk->tr.nr_kernel = st->key.nr_kernel;
	wk->tr.nr_user = st->key.nr_user;
	wk->tr.flags = (st->key.flags & ~(HOTSTACK_ENTRY_USER_MODE | HOTSTACK_ENTRY_CALLER)) |
		       (seen ? 0 : HOTSTACK_ENTRY_USER_HIDDEN);
	wk->tr.context = in_hardirq() ? HOTSTACK_CTX_HARDIRQ :
			 in_serving_softirq() ? HOTSTACK_CTX_SOFTIRQ :
			 is_idle_task(current) ? HOTSTACK_CTX_IDLE : HOTSTACK_CTX_TASK;
	wk->tr.depth = st->key.depth;
	wk->tr.magic = HOTSTACK_WAKER_MAGIC;
	memcpy(wk->frames, st->frames, (st->key.nr_kernel + st->key.nr_user) * sizeof(u64));
	/*
	 * Published once written (its own place still, @replaced: the same
	 * key again): pairs with the switch-in's lookup (its dependency on
	 * the key), after @p is queued.
	 */
	smp_store_release(&t->wake.keys[i], (unsigned long)p);
out:
	/* Weighed as part of the switch that ends the wait (the budget's cost per switch). */
	if (start)
		slot->timed_ns += local_clock() - start;
}
