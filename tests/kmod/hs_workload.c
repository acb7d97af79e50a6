// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: burns CPU in kernel stacks the tests know exactly.
 *
 * Writing "DEPTH PATTERNS MS" to /proc/hs_workload runs, in the writer's
 * context, PATTERNS distinct stacks for MS milliseconds each: stack p is
 * hs_rec_a/hs_rec_b chosen by bit L of p at level L (L = 0 .. DEPTH-1,
 * outermost first), then hs_leaf, which spins. PATTERNS at most 2^DEPTH.
 * "DEPTH PATTERNS 0 SPINS" spins SPINS x 1000 additions in each instead
 * of a time (for benchmarks: the same work however long it takes).
 * "hard MS" spends half of MS milliseconds in hardirq context instead.
 * "lock MS" (PREEMPT_RT only) takes hs_lock, a spinlock_t, and holds it
 * until a second writer wants it, then MS milliseconds more: that one
 * waits for it asleep, as PREEMPT_RT's spinlock_t waits (TASK_RTLOCK_WAIT).
 * "sigsleep N" sends the writer SIGUSR1 (it must handle it), then N times
 * spins a millisecond and calls schedule() in TASK_INTERRUPTIBLE from
 * hs_sigsleep: with the signal pending the writer is not put to sleep
 * but stays runnable.
 * "wkwait N" sleeps N times in hs_wk_wait (TASK_INTERRUPTIBLE) until a
 * "wkwake N" writer, which naps 2 ms before each, wakes it from
 * hs_wk_wake with wake_up_process(): a waker whose stack the tests know.
 * A signal ends the write early (-EINTR), so a test can run it in a loop
 * and stop it when it is done. Reading it gives the number of writes in
 * progress, so a test can wait until the workload runs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "compat.h"

/* Stores after each call keep the calls out of tail position. */
static unsigned long hs_sink;
static atomic_t hs_writers = ATOMIC_INIT(0);

/*
 * The clock is read once per 100000 register-only additions: on the debug
 * kernels ktime_get() runs lockdep's checks, and read often it would be the
 * hot function instead of hs_leaf.
 */
/* An "until" that is a number of 1000-addition spins, not a time. */
#define HS_SPINS	BIT_ULL(63)

static noinline void hs_leaf(u64 until)
{
	unsigned long acc = 0;
	unsigned int i;

	if (until & HS_SPINS) {
		for (i = 0; i < (u32)until * 1000; i++) {
			acc += i;
			OPTIMIZER_HIDE_VAR(acc);
		}
		WRITE_ONCE(hs_sink, acc);
		return;
	}
	while (ktime_get_ns() < until && !signal_pending(current)) {
		for (i = 0; i < 100000; i++) {
			acc += i;
			OPTIMIZER_HIDE_VAR(acc);
		}
	}
	WRITE_ONCE(hs_sink, acc);
}

static noinline void hs_rec_b(unsigned int level, unsigned int depth, u32 pattern, u64 until);

/* Level @bit's choice: bit @bit of the pattern, hs_rec_a past the 32nd. */
static bool hs_pattern_bit(u32 pattern, unsigned int bit)
{
	return bit < 32 && (pattern & BIT(bit));
}

static noinline void hs_rec_a(unsigned int level, unsigned int depth, u32 pattern, u64 until)
{
	if (level + 1 == depth)
		hs_leaf(until);
	else if (hs_pattern_bit(pattern, level + 1))
		hs_rec_b(level + 1, depth, pattern, until);
	else
		hs_rec_a(level + 1, depth, pattern, until);
	WRITE_ONCE(hs_sink, hs_sink + 1);
}

static noinline void hs_rec_b(unsigned int level, unsigned int depth, u32 pattern, u64 until)
{
	if (level + 1 == depth)
		hs_leaf(until);
	else if (hs_pattern_bit(pattern, level + 1))
		hs_rec_b(level + 1, depth, pattern, until);
	else
		hs_rec_a(level + 1, depth, pattern, until);
	/* Unlike hs_rec_a's, so the compiler cannot fold the two. */
	WRITE_ONCE(hs_sink, hs_sink + 2);
}

/*
 * "hard MS": for MS milliseconds, a hard hrtimer every 2 ms whose callback
 * spins 1 ms in hs_hard_spin(): half the time in hardirq context, for
 * NMI samplers to see as [hardirq].
 */
static struct hrtimer hs_hard_timer;
static u64 hs_hard_until;
static struct completion hs_hard_done;

static noinline void hs_hard_spin(void)
{
	u64 end = ktime_get_ns() + NSEC_PER_MSEC;
	unsigned long acc = 0;

	while (ktime_get_ns() < end) {
		acc++;
		OPTIMIZER_HIDE_VAR(acc);
	}
	WRITE_ONCE(hs_sink, acc);
}

static enum hrtimer_restart hs_hard_fn(struct hrtimer *t)
{
	hs_hard_spin();
	if (ktime_get_ns() >= hs_hard_until) {
		complete(&hs_hard_done);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ms_to_ktime(2));
	return HRTIMER_RESTART;
}

static int hs_hard(unsigned int ms)
{
	init_completion(&hs_hard_done);
	hs_hard_until = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	hrtimer_start(&hs_hard_timer, ms_to_ktime(2), HRTIMER_MODE_REL_PINNED_HARD);
	if (wait_for_completion_killable(&hs_hard_done)) {
		hrtimer_cancel(&hs_hard_timer);
		return -EINTR;
	}
	return 0;
}

static DEFINE_SPINLOCK(hs_lock);
static atomic_t hs_lockers = ATOMIC_INIT(0);

static noinline int hs_lock_hold(unsigned int ms)
{
	u64 until = ktime_get_ns() + 10 * NSEC_PER_SEC;
	bool first;

	/* Elsewhere the lock's waiter would spin, preemption off. */
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		return -EOPNOTSUPP;
	first = atomic_inc_return(&hs_lockers) == 1;
	spin_lock(&hs_lock);
	/* The first: until the other writer wants it (10 s at most); then @ms. */
	while (first && atomic_read(&hs_lockers) < 2 && ktime_get_ns() < until &&
	       !signal_pending(current))
		cpu_relax();
	until = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	while (ktime_get_ns() < until)
		cpu_relax();
	spin_unlock(&hs_lock);
	atomic_dec(&hs_lockers);
	return 0;
}

static noinline void hs_sigsleep(unsigned int n)
{
	u64 t;

	send_sig(SIGUSR1, current, 1);
	while (n--) {
		/* A millisecond on the CPU first: another task's turn next. */
		t = ktime_get_ns() + NSEC_PER_MSEC;
		while (ktime_get_ns() < t)
			cpu_relax();
		set_current_state(TASK_INTERRUPTIBLE);
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/* The "wkwait" writer, and the wakeups it may still take. */
static struct task_struct *hs_wk_task;
static DEFINE_SPINLOCK(hs_wk_lock);
static atomic_t hs_wk_tokens = ATOMIC_INIT(0);

static noinline int hs_wk_wait(unsigned int n)
{
	int ret = 0;

	spin_lock(&hs_wk_lock);
	if (hs_wk_task)
		ret = -EBUSY;
	else
		hs_wk_task = current;
	spin_unlock(&hs_wk_lock);
	while (!ret && n) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (atomic_add_unless(&hs_wk_tokens, -1, 0))
			n--;
		else if (signal_pending(current))
			ret = -EINTR;
		else
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	spin_lock(&hs_wk_lock);
	if (hs_wk_task == current)
		hs_wk_task = NULL;
	spin_unlock(&hs_wk_lock);
	atomic_set(&hs_wk_tokens, 0);
	return ret;
}

static noinline void hs_wk_wake(struct task_struct *task)
{
	wake_up_process(task);
	WRITE_ONCE(hs_sink, hs_sink + 1);	/* no tail call: a frame of its own */
}

static noinline int hs_wk_wakes(unsigned int n)
{
	while (n--) {
		usleep_range(2000, 2500);
		if (signal_pending(current))
			return -EINTR;
		atomic_inc(&hs_wk_tokens);
		spin_lock(&hs_wk_lock);
		if (hs_wk_task)
			hs_wk_wake(hs_wk_task);
		spin_unlock(&hs_wk_lock);
	}
	return 0;
}

static ssize_t hs_workload_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	unsigned int depth, patterns, ms, p, spins = 0;
	char buf[64];
	int n;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "hard %u", &ms) == 1) {
		int ret = ms && ms <= 60000 ? hs_hard(ms) : -EINVAL;

		return ret ? ret : len;
	}
	if (sscanf(buf, "sigsleep %u", &ms) == 1) {
		if (!ms || ms > 100000)
			return -EINVAL;
		hs_sigsleep(ms);
		return len;
	}
	if (sscanf(buf, "wkwait %u", &ms) == 1) {
		int ret = ms && ms <= 100000 ? hs_wk_wait(ms) : -EINVAL;

		return ret ? ret : len;
	}
	if (sscanf(buf, "wkwake %u", &ms) == 1) {
		int ret = ms && ms <= 100000 ? hs_wk_wakes(ms) : -EINVAL;

		return ret ? ret : len;
	}
	if (sscanf(buf, "lock %u", &ms) == 1) {
		int ret = ms && ms <= 10000 ? hs_lock_hold(ms) : -EINVAL;

		return ret ? ret : len;
	}
	n = sscanf(buf, "%u %u %u %u", &depth, &patterns, &ms, &spins);
	if (n < 3 || (n == 4 && (ms || !spins || spins > 4000000)))
		return -EINVAL;
	if (!depth || depth > 2000 || !patterns || ms > 60000 ||
	    (depth < 32 && patterns > (1U << depth)) || patterns > (1U << 20))
		return -EINVAL;
	atomic_inc(&hs_writers);
	for (p = 0; p < patterns; p++) {
		u64 until = spins ? HS_SPINS | spins : ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;

		if (p & 1)
			hs_rec_b(0, depth, p, until);
		else
			hs_rec_a(0, depth, p, until);
		cond_resched();
		if (signal_pending(current))
			break;
	}
	atomic_dec(&hs_writers);
	return p < patterns ? -EINTR : len;
}

static ssize_t hs_workload_read(struct file *file, char __user *ubuf,
				size_t len, loff_t *ppos)
{
	char buf[16];
	int n = scnprintf(buf, sizeof(buf), "%d\n", atomic_read(&hs_writers));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct proc_ops hs_workload_ops = {
	.proc_read = hs_workload_read,
	.proc_write = hs_workload_write,
	.proc_lseek = noop_llseek,
};

static struct proc_dir_entry *hs_workload_entry;

static int __init hs_workload_init(void)
{
	hs_hrtimer_setup(&hs_hard_timer, hs_hard_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	hs_workload_entry = proc_create("hs_workload", 0600, NULL, &hs_workload_ops);
	return hs_workload_entry ? 0 : -ENOMEM;
}

static void __exit hs_workload_exit(void)
{
	proc_remove(hs_workload_entry);
	hrtimer_cancel(&hs_hard_timer);
}

module_init(hs_workload_init);
module_exit(hs_workload_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotstack test workload: known kernel stacks");
