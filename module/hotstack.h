/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: definitions shared by the module's files.
 */
#ifndef _HOTSTACK_H
#define _HOTSTACK_H

#include <linux/atomic.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <asm/local.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/cred.h>
#include <linux/workqueue.h>
#include <linux/hotstack.h>
#ifdef CONFIG_X86_64
#include <asm/unwind.h>
#endif

#include "stacktab.h"
#include "uwtab.h"
#include "offtab.h"

/* Module parameters, fixed once the module is loaded (main.c). */
extern unsigned int hotstack_max_sessions;
extern unsigned int hotstack_max_memory_mb;
extern kgid_t hotstack_group;
extern unsigned int hotstack_group_max_freq;
extern unsigned int hotstack_group_max_sessions;
extern unsigned int hotstack_group_max_memory_mb;
extern unsigned int hotstack_sample_floor_ns;
extern unsigned int hotstack_max_unwind_mb;
extern bool hotstack_test_hooks;

/* Sessions open now, bounded by hotstack_max_sessions (dev.c). */
extern atomic_t hotstack_nr_sessions;

/* Whether the caller may use hotstack: CAP_PERFMON or the group (dev.c). */
bool hotstack_may_open(void);
/* The same of whoever opened @file (a netlink socket), by its credentials. */
bool hotstack_file_may_open(const struct file *file);

/*
 * Event bits of a session (genl.c): a CPU table reaching each fill level,
 * perf throttling the event, and the first drop of each reason, once per
 * generation.
 */
#define HS_FILL_STEPS	4
#define HS_EV_FILL	0
#define HS_EV_THROTTLE	4
#define HS_EV_DROP	8
#define HS_EV_BITS	(HS_EV_DROP + HOTSTACK_DROP_MAX)
extern const u8 hotstack_fill_pct[HS_FILL_STEPS];

/* Bytes of tables all sessions hold, bounded by max_memory_mb (session.c). */
extern atomic64_t hotstack_memory;
/* ... and of unwind tables and mappings, bounded by max_unwind_mb (unwind.c). */
extern atomic64_t hotstack_unwind_memory;

/* The quotas of delegated users (quota.c). */
struct hs_user;
struct hs_user *hotstack_user_get(void);
void hotstack_user_put(struct hs_user *u);
int hotstack_user_reserve(struct hs_user *u, u64 size);
void hotstack_user_unreserve(struct hs_user *u, u64 size);
int hotstack_user_rate(struct hs_user *u, u64 old, u64 new);
void hotstack_user_info(struct hotstack_info *info);

/* The cgroups a session counts (hotstack_config.cgroups_ptr), references held. */
struct hs_cgroups {
	unsigned int nr;
	struct cgroup *cg[HOTSTACK_MAX_CGROUPS];
};

void hs_cgroups_put(struct hs_cgroups *g);

/* The multi-instance CPU hotplug state sessions attach to while running. */
extern enum cpuhp_state hotstack_cpuhp_state;

/* A CPU's counters of user walks by unwind tables (hotstack_stats.uw_*). */
enum hs_uw_counter {
	HS_UWC_WALKS,
	HS_UWC_COMPLETE,
	HS_UWC_NO_MAPS,
	HS_UWC_TABLE,
	HS_UWC_FP,
	HS_UWC_STOP,		/* + enum hotstack_uw_stop */
	HS_UWC_NR = HS_UWC_STOP + HOTSTACK_UWS_MAX,
};

/*
 * struct hs_uproc - a process's mappings (HOTSTACK_IOC_SET_MAPS), as the
 * sampler finds them by the current task's mm (unwind.c)
 * @mm:		the address space they are of (mmgrab(): its struct is
 *		never another's while this holds it)
 * @pid:	its process, referenced
 * @nr:		mappings in @maps, sorted
 * @missed:	a sample missed them since they were set: reported once
 * @serial:	its number, never another's (hs_urc: the CPUs' rule caches)
 * @bytes:	what it takes
 * @dead:	on hs_unwind.dead once replaced or dropped, until @gp
 * @gp:		the grace period its readers are gone after
 */
struct hs_uproc {
	struct mm_struct *mm;
	struct pid *pid;
	u32 nr;
	u32 missed;
	u64 serial;
	u64 bytes;
	struct list_head dead;
	unsigned long gp;
	struct hs_umap maps[];
};

/* A lookup of an address space goes this many slots from its hash at most. */
#define HS_UPROC_PROBES	32
/* A slot whose process was dropped: lookups go past it. */
#define HS_UPROC_GONE	((struct hs_uproc *)1UL)

/* The processes of a session: an open-addressing set of them by mm. */
struct hs_uprocs {
	u32 bits;
	u32 mask;
	u32 used;		/* slots not free: live and gone */
	u32 live;
	u64 bytes;
	struct hs_uproc __rcu *slot[];	/* NULL, HS_UPROC_GONE or a process */
};

/* Processes the sampler can report at once as wanting mappings. */
#define HS_UW_MISSES	64

/*
 * struct hs_unwind - a session's unwind tables and processes (unwind.c);
 * the sampler reads @procs (RCU) and writes @misses, the rest is under
 * the session's lock
 * @procs:	the processes with mappings, or NULL
 * @tabs:	the tables, by id - 1: [@nr_tabs] of @cap_tabs
 * @bytes:	what the tables, the processes and the set take
 * @dead:	processes replaced or dropped, oldest first
 * @misses:	processes that wanted mappings (tgids; 0: free)
 * @misses_total, @misses_lost: reported, and not kept for lack of room
 * @wait:	pollers of the session's file, woken when a miss is kept
 * @wake:	from the sampler to @wait (not a hard one: on PREEMPT_RT the
 *		wait queue's lock sleeps)
 */
struct hs_unwind {
	struct hs_uprocs __rcu *procs;
	struct hs_utab **tabs;
	u32 nr_tabs;
	u32 cap_tabs;
	u64 bytes;
	struct list_head dead;
	u32 misses[HS_UW_MISSES];
	atomic64_t misses_total;
	atomic64_t misses_lost;
	wait_queue_head_t wait;
	struct irq_work wake;
};

/*
 * struct hs_slot - one CPU of a session's tables
 * @tab:	its table in each generation
 * @busy:	nonzero while the sampler runs here (nesting guard)
 * @buf:	scratch stack for the walk: struct hs_stack + max_depth frames
 *		(with HOTSTACK_CFG_WAKERS HOTSTACK_MAX_DEPTH +
 *		HOTSTACK_WAKER_WORDS: a sleep's stack and its waker's joined)
 * @want:	the CPU is online and the session running: it should have an
 *		event (set by the hotplug callbacks, under hp_lock)
 * @hp_seq:	hotplug callbacks seen for this CPU (under hp_lock)
 * @event:	its perf event, or NULL (under ev_lock)
 * @event_seq:	@hp_seq when @event was created: an event from before the
 *		CPU last went offline is dead, and replaced (under ev_lock)
 * @err:	why the last creation failed, or 0 (under ev_lock)
 * @taken:	handler runs, never cleared (local64; for the budget)
 * @timed:	timed handler runs, never cleared (for the budget)
 * @timed_ns:	their handler time
 * @b_taken, @b_timed, @b_ns: the budget worker's last look at them
 * @b_cost:	the budget worker's handler time per sample (ns)
 * @off_gap:	off-CPU with a budget's W > 1: switch-outs until the next
 *		one timed (the probe of this CPU alone writes it)
 * @wakes:	the waker probe's runs here (hotstack_sched_waking()): one
 *		in HOTSTACK_TIMED_EVERY is timed, its time added to @timed_ns
 *		as the switch that its sleeper's wait will end with
 * @rnd:	the LCG state those gaps and the periods' jitter are
 *		drawn from (hs_lcg(): this CPU's sampler and probe)
 * @jit_base, @jit_span: the periods of this CPU's events are drawn from
 *		@jit_base + [0, @jit_span) (hotstack_jitter_set(); @jit_span
 *		0: left as perf has them)
 * @wall_ns:	wall-clock time: when the last sample or switch here was
 *		(ktime_get_mono_fast_ns()): the next sample counts from it
 * @uw:		user walks by unwind tables, by enum hs_uw_counter (this
 *		CPU's sampler and off-CPU probe write them, one at a time)
 * @urc:	[HS_URC_SIZE] with unwind tables: the rules those walks found
 *		(uwtab.h), written as @uw is
 * @unwind:	the x86 kernel walk's unwinder state: here, not on the stack,
 *		where the kernel's CONFIG_INIT_STACK_ALL_ZERO would clear it
 *		on every sample before __unwind_start() clears it again
 * @regs:	the off-CPU probe's, where its walk starts (hs_probe_regs()):
 *		here for the same reason (168 bytes cleared at every context
 *		switch, the many a budget leaves out included)
 *
 * Cache-line aligned: the sampler of each CPU writes its own slot.
 */
struct hs_slot {
	struct hs_table tab[2];
	struct hs_table *cur;	/* tab[the active generation]: the sampler's */
	local_t busy;
	struct hs_stack *buf;
	bool want;
	u32 hp_seq;
	struct perf_event *event;
	u32 event_seq;
	int err;
	local64_t taken;
	u64 timed;
	u64 timed_ns;
	u64 b_taken, b_timed, b_ns, b_cost;
	u32 off_gap, rnd;
	u32 wakes;
	u64 jit_base, jit_span;
	u64 wall_ns;
	u64 uw[HS_UWC_NR];
	struct hs_urc *urc;
#ifdef CONFIG_X86_64
	struct unwind_state unwind;
#endif
	struct pt_regs regs;
} ____cacheline_aligned;

/* A budget's window counts the cost it knew before as this many timed runs. */
#define HS_COST_PRIOR	4

/* ... and weighs a timed run at most this many times that cost (hs_timed()). */
#define HS_COST_OUTLIER	16

/*
 * What the sched_switch tracepoint's call of the off-CPU probe costs
 * around it (ns): the probe's timing starts inside. make check's icount
 * boot of Debian 12's kernel: hs_bench's switch-empty, a probe that only
 * counts, adds 63 ns of guest instructions to a switch.
 */
#define HS_SWITCH_FLOOR_NS	60

/* The largest weight a budget gives a sample: its period times this. */
#define HS_MAX_WEIGHT	BIT(20)

/* ... and an off-CPU wait: one switch-out in this many timed, at most. */
#define HS_MAX_OFF_WEIGHT	1024

/*
 * struct hs_off_task - what an off-CPU session keeps of a task that left
 * a CPU until it runs again (offcpu.c): when it left, and its stack
 * (@st and max_depth frames), walked and hashed then.
 */
struct hs_off_task {
	u64 t0;			/* when it left: ktime_get_mono_fast_ns() */
	u64 hash;		/* of @st, as hs_table_add() takes it */
	s16 drop;		/* HS_COUNTED, or why its stack cannot count */
	u16 cpu;		/* the CPU it left (CONFIG_NR_CPUS is 8192 at most) */
	u32 w;			/* the budget's W then: the wait counts W times */
	/*
	 * A wait in progress at START (hotstack_off_cpu_start()): its
	 * task's context switches then, plus one; it counts only while they
	 * are as many (the task ran since: its wait ended before its record
	 * was made). 0: a wait the probe began.
	 */
	u64 start_sw;
	struct hs_stack st;
};

/*
 * struct hs_waker - who woke a sleeper an off-CPU session times
 * (HOTSTACK_CFG_WAKERS): what its stack will end with, and max_depth
 * frames (hotstack_sched_waking()).
 */
struct hs_waker {
	struct hotstack_waker tr;
	u64 frames[];
};

/* A task's context switches so far (hs_off_task.start_sw). */
static __always_inline u64 hs_task_switches(const struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/* hs_tables.off_procs: a place whose process was taken out (the same). */
#define HS_OFF_PROC_GONE	((struct pid *)1UL)

/*
 * struct hs_tables - a configuration's tables: one buffer of pages charged
 * to the opener's memory cgroup, mapped by vmap() for the sampler and by
 * mmap() for readers, and its CPU slots (one per CPU online at CONFIGURE
 * in the session's mask).
 */
struct hs_tables {
	void *buf;
	size_t size;		/* bytes, a whole number of pages */
	struct hs_user *user;	/* whose quota holds @size, or NULL */
	struct page **pages;	/* [size / PAGE_SIZE] */
	struct hotstack_mmap_header *hdr;
	unsigned int nr_slots;
	struct hs_slot * __percpu *slot_of_cpu;	/* the CPU's slot or NULL: hs_slot_of() */
	struct hs_slot *slots;	/* [nr_slots] */
	struct hs_store *store;	/* [2]: each generation's stacks, for every slot */
	/*
	 * Off-CPU sessions: the tasks off the CPU now, an open-addressing
	 * table of task pointers (or HS_OFF_*), each the key of the record
	 * of the same index, @off_size bytes in all (held of the quotas
	 * with @size).
	 */
	struct hs_offtab off;
	void *off_recs;			/* [off.mask + 1] of @off_rec_size bytes */
	/*
	 * ... and with HOTSTACK_CFG_TASK the processes it times (the PID's
	 * and those forked in them since START): an open-addressing set of
	 * their struct pid, each referenced until STOP, or NULL when not.
	 */
	struct pid **off_procs;		/* [off.mask + 1] */
	/*
	 * ... and with HOTSTACK_CFG_WAKERS the wakers of the sleepers not
	 * yet back on a CPU: a table of the sleepers' task pointers, each
	 * the key of the waker of the same index (hs_wake_rec()).
	 */
	struct hs_offtab wake;
	void *wake_recs;		/* [wake.mask + 1] of @wake_rec_size bytes */
	size_t wake_rec_size;
	size_t off_rec_size;
	size_t off_size;
	/* With unwind tables: the slots' rule caches (hs_slot.urc), held so too. */
	size_t urc_size;
};

/*
 * The next number of the 32-bit LCG at @state (Numerical Recipes'
 * constants: period 2^32 from any state), two instructions. Its low bits
 * are weak: callers scale it by its high bits (a multiply and its top
 * half), never take it modulo.
 */
static __always_inline u32 hs_lcg(u32 *state)
{
	u32 x = *state * 1664525 + 1013904223;

	*state = x;
	return x;
}

/*
 * A period drawn from @base + [0, @span) by @x, an hs_lcg() number: @span
 * 2^33 at most (hotstack_jitter_set()), times its high 16 bits: no 128-bit
 * product. The bench's floor draws its periods by it too (tests/kmod).
 */
static __always_inline u64 hs_jitter_draw(u64 base, u64 span, u32 x)
{
	return base + ((span * (x >> 16)) >> 16);
}

/* CPU @cpu's slot in @t, or NULL (no table for it). */
static inline struct hs_slot *hs_slot_of(const struct hs_tables *t, unsigned int cpu)
{
	return *per_cpu_ptr(t->slot_of_cpu, cpu);
}

/* This CPU's, for the samplers and probes (preemption off): one load. */
static __always_inline struct hs_slot *hs_this_slot(const struct hs_tables *t)
{
	return __this_cpu_read(*t->slot_of_cpu);
}

/* What @t holds of the memory limits and quotas. */
static inline size_t hs_tables_bytes(const struct hs_tables *t)
{
	return t->size + t->off_size + t->urc_size;
}

/* The waker of index @i of @t (its sleeper: t->wake.keys[i]). */
static __always_inline struct hs_waker *hs_wake_rec(const struct hs_tables *t, u32 i)
{
	return t->wake_recs + (size_t)i * t->wake_rec_size;
}

/* The off-CPU record of index @i of @t (its key: t->off.keys[i]). */
static __always_inline struct hs_off_task *hs_off_rec(const struct hs_tables *t, u32 i)
{
	return t->off_recs + (size_t)i * t->off_rec_size;
}

/*
 * The sample paths (sample.c), each a function of its own, the checks of
 * the others compiled out: the fewer a path needs, the less a sample costs.
 */
enum hs_path {
	HS_PATH_IP,		/* max_depth 1, kernel stacks, no keys: the IP alone */
	HS_PATH_KERNEL,		/* kernel stacks, no keys, no collapse */
	HS_PATH_ANY,		/* any configuration */
};

/* What a session's samples are filtered by (hotstack_session.filter). */
enum hs_filter {
	HS_FILTER_NONE,
	HS_FILTER_IDLE,		/* the idle task alone (record -a's default): one test */
	HS_FILTER_TASK,		/* a pid filter (not task mode) or cgroups, idle too maybe */
	HS_FILTER_NR,		/* (to hs_overflow(): the session's, read at each sample) */
};

/*
 * ptrace's read rule (PTRACE_MODE_READ_REALCREDS; ptrace_may_access() is
 * not exported), dumpability aside, for a watcher with credentials @w (a
 * delegated user) and a task with @t: the watcher's real uid and gid are
 * the task's real, effective and saved ones, and the task's permitted
 * capabilities are a subset of the watcher's, in the same user namespace.
 */
static __always_inline bool hs_creds_readable(const struct cred *w, const struct cred *t)
{
	return uid_eq(w->uid, t->uid) && uid_eq(w->uid, t->euid) && uid_eq(w->uid, t->suid) &&
	       gid_eq(w->gid, t->gid) && gid_eq(w->gid, t->egid) && gid_eq(w->gid, t->sgid) &&
	       w->user_ns == t->user_ns && cap_issubset(t->cap_permitted, w->cap_permitted);
}

/*
 * struct hotstack_session - one open file of /dev/hotstack (or the
 * persistent session of the autostart parameter)
 *
 * Lifecycle (uapi/linux/hotstack.h): NEW -> READY <-> RUNNING, freed by
 * release(). Locks, in the order they nest:
 *   @read_lock  serialises read() on the file (held while copying out);
 *   @lock       serialises every ioctl and the state changes;
 *   @ev_lock    the slots' perf events (START/STOP and @hp_work);
 *   @hp_lock    a spinlock: what the CPU hotplug callbacks say (@want,
 *               @hp_seq, @missed), so that they never sleep on our locks.
 * Perf events are created and released by @hp_work only, a kernel worker
 * that holds no hotplug lock: software events take cpus_read_lock() when
 * created and released, which a hotplug callback must never do.
 * The sampler reads only @cfg, @active, the tables (its slot's @cur, the
 * active generation's) and @ev_gen, which do not change while RUNNING
 * except @active and the slots' @cur (SNAPSHOT, then synchronize_rcu():
 * samplers are RCU readers, NMI included).
 */
struct hotstack_session {
	struct mutex lock;	/* serialises ioctls and state changes */
	enum hotstack_state state;
	struct hotstack_config cfg;
	bool sync_event;	/* the event fires in task context, not an interrupt */
	bool caller_regs;	/* its registers are the caller's: frame 0 a return address */
	enum hs_path path;	/* the sample path CONFIGURE chose */
	bool privileged;	/* configured by a CAP_PERFMON holder */
	const struct cred *cred;	/* the configurer's, for user stacks */
	struct pid *pid;	/* with HOTSTACK_CFG_PID: the process to count */
	struct hs_cgroups cgroups;	/* the cgroups to count, if any */
	u8 filter;		/* what samples are filtered by: enum hs_filter */
	struct pid_namespace *pid_ns;	/* the opener's: pids are numbered in it */
	cpumask_var_t cpus;	/* CPUs asked for (tables: those online at CONFIGURE) */
	atomic_t cpus_missed;	/* of @cpus, came online later without a table */

	struct hs_tables tabs;
	atomic_t mmaps;		/* live mappings of tabs.buf */

	unsigned int active;	/* generation the sampler writes */
	u64 generation;		/* SNAPSHOTs + RESETs */
	u64 run_start_ns;	/* when RUNNING began */
	u64 elapsed_ns[2];	/* RUNNING time counted in each generation */
	u64 seed;		/* of the stack hash: random per configuration */
	/* HS_PATH_IP: a sample's key word, flags, its key's hash; kernel [0], user mode [1] */
	u64 ip_key[2];
	u64 ip_hkey[2];
	u8 ip_flags[2];

	struct hlist_node cpuhp_node;	/* in hotstack_cpuhp_state while RUNNING */
	struct list_head run_node;	/* in hotstack_running while RUNNING */
	struct mutex ev_lock;		/* the slots' perf events */
	spinlock_t hp_lock;		/* slots' want and hp_seq, @missed */
	struct work_struct hp_work;	/* creates and releases the events */
	cpumask_var_t missed;		/* CPUs to report as missed (hp_lock) */
	bool task_mode;			/* HOTSTACK_CFG_TASK: events on tasks, not CPUs */
	struct perf_event **task_events;	/* [nr_task_events] while RUNNING */
	unsigned int nr_task_events;
	atomic64_t lost;		/* task-mode samples on a CPU without a table */
	bool off_cpu;			/* HOTSTACK_CFG_OFF_CPU: sched_switch's probe */
	bool wall;			/* ... and a clock's events: wall-clock time */
	bool wakers;			/* ... and HOTSTACK_CFG_WAKERS: sched_waking's probe */
	bool off_probe;			/* the probe is attached */
	bool cgnames;			/* keyed by cgroup: removed ones named (cgnames.c) */
	/*
	 * Off-CPU: time is counted up to this (ktime_get_mono_fast_ns()):
	 * 0 until the probe is attached on every CPU (it times nothing),
	 * U64_MAX while running, STOP's time from before the probe goes.
	 */
	u64 off_until;
	atomic64_t untimed;		/* off-CPU waits not timed, since START */
	atomic64_t waits_at_start;	/* ... in progress at START, timed from it */
	atomic64_t wakers_unseen;	/* ... sleeps that ended without their waker */
	/* A process set's exited processes taken out (offcpu.c); its inserts since. */
	struct work_struct off_reap;
	atomic_t off_added;
	struct hs_unwind *uw;		/* unwind tables and processes (unwind.c) */

	/* The budget (cfg.budget_ppm): its worker, under ev_lock, and its results. */
	struct delayed_work budget_work;
	u64 budget_last;		/* when the worker last looked (ktime_get_ns) */
	unsigned int budget_ms;		/* its window now: 10 ms at START, doubling to 1 s */
	u64 rate_changes;
	u64 sample_rate;
	u64 cost_ns;
	u64 window_ppm;
	u32 max_weight;

	/* generic netlink (genl.c) */
	u32 id;			/* unique, from 1 */
	struct pid *owner;	/* the opener's process, NULL for the persistent one */
	struct hs_user *user;	/* the opener's quota, NULL for CAP_PERFMON */
	u64 user_rate;		/* samples a second per CPU held of @user's quota */
	struct list_head node;	/* in hotstack_sessions */
	unsigned long ev_raised[2];	/* event bits seen in each generation */
	unsigned long ev_pending;	/* event bits not yet sent */
	u32 ev_cpu[HS_EV_BITS];		/* the CPU each event happened on */
	struct irq_work ev_irq_work;	/* from the sampler to ev_work */
	struct work_struct ev_work;	/* sends the pending events */

	struct mutex read_lock;	/* serialises read() on this file */
	void *reader;		/* read() cursor: folded.c */
	atomic_t reader_gen;	/* CONFIGURE and RESET: a read starts over */
};

/* session.c */
struct hotstack_session *hotstack_session_new(struct pid *owner);
void hotstack_session_free(struct hotstack_session *s);
int hotstack_configure(struct hotstack_session *s, const struct hotstack_config *cfg,
		       const struct cpumask *mask, struct hs_cgroups *cgroups);
int hotstack_start(struct hotstack_session *s);
void hotstack_stop(struct hotstack_session *s);
void hotstack_swap(struct hotstack_session *s, bool reset);
void hotstack_get_stats(struct hotstack_session *s, struct hotstack_stats *st,
			unsigned int gen);
void hotstack_test_sample(struct pt_regs *regs);

/* perf.c */
int hotstack_cpuhp_init(void);
void hotstack_cpuhp_exit(void);
void hs_hp_work(struct work_struct *work);
void hs_sync_events_now(struct hotstack_session *s);
void hs_stop_events(struct hotstack_session *s);
int hs_task_events_start(struct hotstack_session *s);
void hs_task_events_release(struct hotstack_session *s);

/* config.c */
bool hs_freq_event(const struct hotstack_config *c);
u64 hs_config_rate(const struct hotstack_config *c);
u32 hs_max_weight(const struct hotstack_config *c);
u64 hs_weighted_period(const struct hotstack_config *c, u32 w);
int hs_check_config(const struct hotstack_config *c);
int hs_may_watch(struct pid *pid);
int hs_check_delegated(const struct hotstack_config *c);
int hs_try_event(const struct hotstack_config *c, const struct cpumask *mask);

/* budget.c */
u64 hs_floor_ns(const struct hotstack_session *s);
u32 hs_budget_start(struct hotstack_session *s, struct hs_slot *sl);
void hs_cost_note(struct hotstack_session *s);
void hs_budget_publish(struct hotstack_session *s);
void hs_budget_work(struct work_struct *work);
void hs_budget_begin(struct hotstack_session *s);

/* genl.c */
int hotstack_genl_init(unsigned int event_rate);
void hotstack_genl_exit(void);
void hotstack_session_register(struct hotstack_session *s);
void hotstack_session_unregister(struct hotstack_session *s);
void hotstack_raise(struct hotstack_session *s, unsigned int gen, unsigned int bit,
		    unsigned int cpu);
void hotstack_event(struct hotstack_session *s, u32 event, u64 value, int cpu);
void hotstack_events_init(struct hotstack_session *s);
void hotstack_events_flush(struct hotstack_session *s);

/* Persistent session from the autostart parameter, or NULL (main.c). */
extern struct hotstack_session *hotstack_persistent;

/* offcpu.c: off-CPU sessions (HOTSTACK_CFG_OFF_CPU) */
int hotstack_off_cpu_init(void);
extern unsigned long hotstack_tp_iter[2], hotstack_tp_iter_size[2];

/*
 * Whether @ip is in the sched_switch or sched_waking tracepoint's
 * iterator, which calls the probe when more than one is attached (and
 * always where the kernel has no static calls): not a frame of the stack
 * it walks. (Neither calls the other's probe: each probe's caller is
 * tested against both.)
 */
static __always_inline bool hs_in_tp_iter(unsigned long ip)
{
	return ip - hotstack_tp_iter[0] < hotstack_tp_iter_size[0] ||
	       ip - hotstack_tp_iter[1] < hotstack_tp_iter_size[1];
}

void hotstack_off_reap_work(struct work_struct *work);
bool hotstack_off_cpu_supported(bool procs, bool wakers);
int hotstack_off_cpu_start(struct hotstack_session *s);
bool hotstack_off_watched(const struct hotstack_session *s, struct task_struct *task);
void hotstack_walk_blocked(const struct hotstack_session *s, struct task_struct *task,
			   struct hs_stack *st);
void hotstack_off_cpu_stop(struct hotstack_session *s);

/* cgnames.c: cgroups' names (HOTSTACK_IOC_CGROUP_PATH, read()'s text) */
void hotstack_cgnames_init(void);
void hotstack_cgnames_exit(void);
bool hotstack_cgnames_get(void);
void hotstack_cgnames_put(void);
int hotstack_cgroup_path(u64 id, char *buf, bool *gone);

/* sample.c */
void hotstack_sample(struct hotstack_session *s, struct pt_regs *regs);
void hotstack_sched_switch(void *data, bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state);
void hotstack_sched_fork(void *data, struct task_struct *parent, struct task_struct *child);
void hotstack_sched_waking(void *data, struct task_struct *p);
bool hotstack_off_proc_add(struct hs_tables *t, struct pid *pid);
void hotstack_off_count(struct hotstack_session *s, struct hs_slot *slot,
			struct hs_table *tab, struct hs_off_task *rec, u64 now,
			const struct hs_waker *wk);
perf_overflow_handler_t hotstack_overflow_handler(const struct hotstack_session *s);
void hotstack_jitter_set(struct hs_slot *slot, const struct perf_event *event);

/*
 * A walk of the interrupted stacks (unwind_<arch>.h, inline in sample.c:
 * hs_walk_kernel() with its slot's scratch, hs_walk_user(); and
 * hs_irq_levels(), the hardirq levels the delivery of an overflow
 * interrupting @regs added).
 */
struct hs_walk {
	u64 *frames;		/* where frames go */
	u64 *next;		/* where the next one goes */
	u64 *end;		/* the end of the room at frames */
	u64 hash;		/* of the key's early words and the frames (stacktab.h) */
	unsigned int collapsed;	/* repeated frames skipped */
	bool collapse;		/* skip a frame equal to the one before */
	bool truncated;		/* frames were left out for lack of room */
	bool fault;		/* the walk stopped on an unreadable frame */
};

/*
 * Store one frame and hash it; false when the walk should stop (no room
 * left). Each walk is built twice: with collapse and without (a constant
 * @collapse: its checks compiled out).
 */
static __always_inline bool hs_walk_push(struct hs_walk *w, u64 addr, const bool collapse)
{
	if (collapse && w->next != w->frames && w->next[-1] == addr) {
		w->collapsed++;
		return true;
	}
	if (w->next == w->end) {
		w->truncated = true;
		return false;
	}
	*w->next++ = addr;
	w->hash = hs_mix_frame(w->hash, addr);
	return true;
}

/*
 * The user registers of the current task for a user walk from the
 * interrupted @regs (its own in user mode, else those its entry to the
 * kernel saved), or NULL: it has none to walk. io_uring's workers
 * (PF_IO_WORKER) have their process's mm but no user context: their user
 * registers are a new thread's, sp and ip 0 (6.1's clear the flag on
 * their way out, before PF_EXITING).
 */
static __always_inline struct pt_regs *hs_user_regs(struct pt_regs *regs)
{
	if (!current->mm || (current->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING)))
		return NULL;
	if (user_mode(regs))
		return regs;
	regs = task_pt_regs(current);
	return regs->sp ? regs : NULL;
}

/*
 * Frames a walk follows at most, collapsed ones included: two for each
 * frame it may keep, so that the work of one sample is bounded by the
 * session's max_depth (a stack of repeated frames, which collapse would
 * keep walking, costs at most twice a full one). README: Worst case.
 * Without collapse every step keeps a frame or ends the walk: no count.
 */
static __always_inline unsigned int hs_walk_steps(const struct hs_walk *w)
{
	return 2 * (w->end - w->frames);
}

/* unwind.c: user unwind tables (HOTSTACK_CFG_USER_TABLES) */
int hotstack_unwind_init(struct hotstack_session *s);
void hotstack_unwind_free(struct hotstack_session *s);
long hotstack_ioc_add_table(struct hotstack_session *s, void __user *uarg);
long hotstack_ioc_set_maps(struct hotstack_session *s, void __user *uarg);
long hotstack_ioc_unwind_misses(struct hotstack_session *s, void __user *uarg);
void hotstack_unwind_miss(struct hs_unwind *u, u32 tgid);
void hotstack_unwind_stats(struct hotstack_session *s, struct hotstack_stats *st);
__poll_t hotstack_unwind_poll(struct hotstack_session *s, struct file *file, poll_table *pt);

/* dev.c: size-first ioctl structs in and out (uapi/linux/hotstack.h). */
int hotstack_copy_in(void *dst, size_t ksize, size_t ver0, const void __user *uarg);
int hotstack_copy_out(void __user *uarg, const void *src, size_t ksize, size_t usize);

/* folded.c: read() text */
ssize_t hotstack_read(void **reader, struct hotstack_session *s,
		      char __user *buf, size_t count);
void hotstack_reader_free(void **reader);

extern const struct file_operations hotstack_fops;

#endif /* _HOTSTACK_H */
