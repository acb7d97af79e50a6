/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: every difference between the kernels it builds on, in one
 * place, so that the other files read as if there were one kernel (the
 * newest). Nothing else tests LINUX_VERSION_CODE.
 *
 * Supported: Linux 6.1.70 or later (Debian 12), 6.12 (Debian 13) and the
 * newest Debian kernel (sid, 7.x). Where a feature can be seen in the
 * headers it is probed, which also finds distribution backports: a macro
 * here, a header file in compat.mk (HS_HAVE_*); a version is compared only
 * for a change that leaves nothing to probe.
 */
#ifndef _HOTSTACK_COMPAT_H
#define _HOTSTACK_COMPAT_H

#include <linux/version.h>

#if KERNEL_VERSION(6, 1, 0) > LINUX_VERSION_CODE
#error "hotstack needs Linux 6.1.70 or later (Debian 12's kernel is the oldest supported)"
#endif

/* 6.12 moved the unaligned accessors to linux/ (stacktab.h). */
#ifdef HS_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#include <linux/cgroup.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <net/genetlink.h>
#include <linux/hotstack.h>

/*
 * The events group is joined with CAP_SYS_ADMIN only (genl.c). 6.1 has the
 * flag from 6.1.70 on (a backport of 6.7's), 6.6 from 6.6.9: without it
 * anybody could watch every session's events.
 */
#ifndef GENL_MCAST_CAP_SYS_ADMIN
#error "hotstack needs GENL_MCAST_CAP_SYS_ADMIN: Linux 6.1.70, 6.6.9, 6.7 or later"
#endif

/*
 * Set and clear flags of a VMA being mapped (dev.c). 6.3 made vm_flags
 * read-only behind vm_flags_mod() and friends (for per-VMA locking).
 */
static inline void hs_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
				   vm_flags_t clear)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * Whether the current task is dumpable as its owner would see it (not
 * setuid, no PR_SET_DUMPABLE 0): ptrace's rule for a same-uid tracer.
 * 7.x moved dumpability from the mm (get_dumpable(), SUID_DUMP_USER) to
 * task->exec_state (an RCU pointer replaced at execve); neither of its
 * accessors is exported, the structure is in the header.
 * Called from NMI or hardirq context.
 */
#ifdef HS_HAVE_EXEC_STATE
#include <linux/sched/exec_state.h>

static __always_inline bool hs_current_dumpable(void)
{
	const struct task_exec_state *es;
	bool ret;

	rcu_read_lock();
	es = rcu_dereference(current->exec_state);
	ret = es && es->dumpable == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ret;
}

/* The same for @t, another task (process context, under rcu_read_lock()). */
static inline bool hs_task_dumpable(struct task_struct *t)
{
	const struct task_exec_state *es = rcu_dereference(t->exec_state);

	return es && es->dumpable == TASK_DUMPABLE_OWNER;
}
#else
static __always_inline bool hs_current_dumpable(void)
{
	return current->mm && get_dumpable(current->mm) == SUID_DUMP_USER;
}

static inline bool hs_task_dumpable(struct task_struct *t)
{
	bool ret;

	task_lock(t);
	ret = t->mm && get_dumpable(t->mm) == SUID_DUMP_USER;
	task_unlock(t);
	return ret;
}
#endif

#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>

/*
 * A return address without its pointer authentication code (unwind_arm64.h):
 * 6.4 split the one strip into a kernel and a user form.
 */
static __always_inline unsigned long hs_strip_pac(unsigned long lr, const bool user)
{
#ifdef ptrauth_strip_kernel_insn_pac
	return user ? ptrauth_strip_user_insn_pac(lr) : ptrauth_strip_kernel_insn_pac(lr);
#else
	return ptrauth_strip_insn_pac(lr);
#endif
}

/*
 * Up to 6.12 an exception taken in the kernel leaves a frame record
 * { x29, elr } in its pt_regs, which a walk goes through like any other;
 * from 6.13 it leaves a metadata record { 0, 0, FRAME_META_TYPE_PT_REGS },
 * which a walk must step over through the saved registers
 * (unwind_arm64.h: hs_regs_record()).
 */
#ifdef HS_HAVE_FRAME_META
#include <asm/stacktrace/frame.h>
#define HS_ARM64_FRAME_META 1
#else
#define HS_ARM64_FRAME_META 0
#endif
#endif /* CONFIG_ARM64 */

/*
 * A timer set up with its function (the test module hs_workload). 6.13
 * added hrtimer_setup(); later kernels (7.x) have no hrtimer_init().
 */
static inline void hs_hrtimer_setup(struct hrtimer *timer,
				    enum hrtimer_restart (*fn)(struct hrtimer *),
				    clockid_t clock, enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * The cgroup v2 directory open at @fd, referenced (-G), and its release.
 * A kernel without CONFIG_CGROUPS (the tests' own debug and arm64
 * kernels) has no cgroup v2 directory: EBADF, as for any other
 * directory, and the sampler's check is never reached.
 */
#ifdef CONFIG_CGROUPS
static inline struct cgroup *hs_cgroup_get_fd(int fd)
{
	return cgroup_get_from_fd(fd);
}

static inline void hs_cgroup_put(struct cgroup *cgrp)
{
	cgroup_put(cgrp);
}

/*
 * The cgroup v2 id of @task (HOTSTACK_KEY_CGROUP), as
 * bpf_get_current_cgroup_id() reads it; 0 without cgroups. Its css_set
 * is RCU's: read under rcu_read_lock(), which an NMI may take (lockdep's
 * RCU checks do not count an NMI or a hardirq as a reader).
 */
static __always_inline u64 hs_task_cgroup_id(struct task_struct *task)
{
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(task));
	rcu_read_unlock();
	return id;
}
#else
static inline struct cgroup *hs_cgroup_get_fd(int fd)
{
	return ERR_PTR(-EBADF);
}

static inline void hs_cgroup_put(struct cgroup *cgrp)
{
}

static __always_inline u64 hs_task_cgroup_id(struct task_struct *task)
{
	return 0;
}
#endif

/*
 * The scheduler's sched_switch tracepoint, for off-CPU sessions
 * (offcpu.c): found by name with for_each_kernel_tracepoint() (its
 * struct tracepoint is not exported) and attached with
 * tracepoint_probe_register(). Its prototype is the same from 6.1 to 7.x
 * (bool preempt, prev, next, unsigned int prev_state, since 5.18); a
 * kernel without CONFIG_TRACEPOINTS has none: off-CPU sessions are
 * EOPNOTSUPP there.
 */
#ifdef CONFIG_TRACEPOINTS
#include <linux/tracepoint.h>
#define HS_HAVE_SCHED_SWITCH 1
#else
#define HS_HAVE_SCHED_SWITCH 0
#endif

/*
 * Whether @p, being woken (sched_waking: under its pi_lock), is off its
 * run queue, so that the wakeup ends a wait of its. From 6.12 a fair
 * task's dequeue at sleep may be delayed (struct sched_entity's
 * sched_delayed): it stays queued, not runnable, until it is picked
 * (then dequeued) or woken.
 */
static __always_inline bool hs_task_dequeued(const struct task_struct *p)
{
#ifdef HS_HAVE_SCHED_DELAYED
	if (READ_ONCE(p->se.sched_delayed))
		return true;
#endif
	return !READ_ONCE(p->on_rq);
}

/*
 * Cgroups' names (cgnames.c). A live cgroup's path by its id:
 * cgroup_get_from_id() (exported from 6.1 to 7.x; it refuses a cgroup
 * outside the caller's namespace) and cgroup_path_ns() (declared in
 * linux/cgroup_namespace.h on 7.x, which linux/cgroup.h includes). A
 * path too long for the buffer is -E2BIG from 6.x's strscpy() kernfs, the
 * length it wanted on 6.1 (strlcpy()): both "not named" here. A removed
 * one's from the cgroup_rmdir tracepoint (struct cgroup *, const char
 * *path: the same prototype from 4.13 to 7.x), found and attached as
 * sched_switch is; it needs CONFIG_TRACEPOINTS.
 */
#ifdef CONFIG_CGROUPS
static inline int hs_cgroup_path_ns(u64 id, char *buf, size_t len)
{
	struct cgroup *cgrp = cgroup_get_from_id(id);
	int ret;

	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	ret = cgroup_path_ns(cgrp, buf, len, current->nsproxy->cgroup_ns);
	cgroup_put(cgrp);
	return ret >= 0 && (size_t)ret < len ? ret : -ENOENT;
}

#define HS_HAVE_CGROUP_NAMES HS_HAVE_SCHED_SWITCH
#else
static inline int hs_cgroup_path_ns(u64 id, char *buf, size_t len)
{
	return -ENOENT;
}

#define HS_HAVE_CGROUP_NAMES 0
#endif

/*
 * Why a task left the CPU, as __schedule() tells the tracepoint:
 * @preempt, or the task's state when it called schedule(). A task that
 * called it in a sleeping state with a signal pending is not put to
 * sleep but stays runnable, its state set back to TASK_RUNNING
 * (@running: read in the probe): it waits on the run queue. @prev_state
 * says TASK_RUNNING then from 6.12.y's try_to_block_task() on (upstream
 * 8feb053d5319: 6.12.117 and 7.x have it), and the state it asked for
 * before (6.1): @running tells both the same. TASK_IDLE (uninterruptible
 * without load: idle kernel threads) is a sleep. A PREEMPT_RT spinlock_t
 * or rwlock_t waited for (TASK_RTLOCK_WAIT, no TASK_UNINTERRUPTIBLE bit
 * in it) and a frozen task (TASK_FROZEN) are uninterruptible, as the
 * kernel reports them (D); both states are the same bits from 6.1 to 7.x.
 */
static __always_inline u8 hs_wait_reason(bool preempt, unsigned int prev_state, bool running)
{
	if (preempt || running || prev_state == TASK_RUNNING)
		return HOTSTACK_CTX_RUNQUEUE;
	if (((prev_state & TASK_UNINTERRUPTIBLE) && !(prev_state & TASK_NOLOAD)) ||
	    (prev_state & (TASK_RTLOCK_WAIT | TASK_FROZEN)))
		return HOTSTACK_CTX_UNINTERRUPTIBLE;
	return HOTSTACK_CTX_SLEEP;
}

#endif /* _HOTSTACK_COMPAT_H */
