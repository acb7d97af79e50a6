// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the overhead benchmark: the floors hotstack is
 * measured against, on the same perf event hotstack uses.
 *
 *   echo "empty HZ"  > /proc/hs_bench   cpu-clock at HZ, handler does nothing
 *   echo "unwind HZ [DEPTH]" > /proc/hs_bench
 *                                       handler only walks the kernel stack
 *                                       (the unwinder API, into a buffer),
 *                                       DEPTH frames at most (default 127)
 *   echo "empty-jitter HZ" > /proc/hs_bench
 *   echo "unwind-jitter HZ [DEPTH]" > /proc/hs_bench
 *                                       the same, each next period drawn
 *                                       from the mean +- 1/16 as hotstack's
 *                                       handler draws it (hs_jitter()): the
 *                                       walk's cost over every phase of an
 *                                       exact loop, not over the few an
 *                                       exact period meets (which depend on
 *                                       the boot); the draw's own cost is
 *                                       empty-jitter's over empty's
 *   echo "switch-empty"  > /proc/hs_bench
 *                                       a sched_switch probe that does nothing
 *   echo "switch-unwind HZ [DEPTH]" > /proc/hs_bench   (HZ not used)
 *                                       a sched_switch probe that only walks
 *                                       the kernel stack of the task leaving
 *                                       (not the idle task), from its caller
 *                                       as hotstack's off-CPU probe does
 *   echo stop        > /proc/hs_bench
 *   cat /proc/hs_bench                  samples (or switches) of the last run
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/unwind.h>
#include "compat.h"
#include "unwind_x86.h"

#define HS_BENCH_DEPTH	1024
static unsigned int hs_bench_depth = 127;

static DEFINE_MUTEX(hs_bench_lock);
static DEFINE_PER_CPU(struct perf_event *, hs_bench_event);
/* Each CPU's walk buffer: 8 KiB, past what a module's static per-CPU data may take. */
static unsigned long __percpu *hs_bench_buf;
static atomic64_t hs_bench_samples;
/* The periods drawn: base + [0, span) (hotstack_jitter_set()); an LCG's state per CPU. */
static u64 hs_bench_jit_base, hs_bench_jit_span;
static DEFINE_PER_CPU(u32, hs_bench_rnd);
static bool hs_bench_switching;
static unsigned long hs_bench_sink;

static void hs_bench_empty(struct perf_event *event, struct perf_sample_data *data,
			   struct pt_regs *regs)
{
	atomic64_inc(&hs_bench_samples);
}

/* hs_jitter(): the next but one period, drawn as hotstack draws it. */
static __always_inline void hs_bench_jitter(struct perf_event *event)
{
	WRITE_ONCE(event->hw.sample_period,
		   hs_jitter_draw(hs_bench_jit_base, hs_bench_jit_span,
				  hs_lcg(this_cpu_ptr(&hs_bench_rnd))));
}

static void hs_bench_empty_jitter(struct perf_event *event, struct perf_sample_data *data,
				  struct pt_regs *regs)
{
	atomic64_inc(&hs_bench_samples);
	hs_bench_jitter(event);
}

/* The kernel walk of hotstack_walk_kernel(), without the table. */
static void hs_bench_walk(struct pt_regs *regs)
{
	unsigned long *buf = this_cpu_ptr(hs_bench_buf);
	struct unwind_state state;
	unsigned int n = 0;
	unsigned long addr;

	buf[n++] = regs->ip;
	for (unwind_start(&state, current, regs, NULL);
	     !unwind_done(&state) && n < hs_bench_depth; unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		buf[n++] = addr;
	}
	WRITE_ONCE(hs_bench_sink, hs_bench_sink + n);
}

static void hs_bench_unwind(struct perf_event *event, struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	atomic64_inc(&hs_bench_samples);
	hs_bench_walk(regs);
}

static void hs_bench_unwind_jitter(struct perf_event *event, struct perf_sample_data *data,
				   struct pt_regs *regs)
{
	atomic64_inc(&hs_bench_samples);
	hs_bench_jitter(event);
	hs_bench_walk(regs);
}

#if HS_HAVE_SCHED_SWITCH
static struct tracepoint *hs_bench_tp;
static void *hs_bench_tp_data;

static void hs_bench_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		hs_bench_tp = tp;
}

/*
 * The off-CPU floors: a probe that counts (@data NULL), or that walks the
 * stack of the task leaving from the probe's caller, from the registers
 * hotstack's probe makes (hs_probe_regs()).
 */
static void hs_bench_switch(void *data, bool preempt, struct task_struct *prev,
			    struct task_struct *next, unsigned int prev_state)
{
	struct pt_regs regs;

	if (is_idle_task(prev))
		return;
	atomic64_inc(&hs_bench_samples);
	if (!data)
		return;
	hs_probe_regs(&regs);
	hs_bench_walk(&regs);
}

static int hs_bench_switch_start(bool unwind)
{
	int ret;

	if (!hs_bench_tp)
		for_each_kernel_tracepoint(hs_bench_find_tp, NULL);
	if (!hs_bench_tp)
		return -EOPNOTSUPP;
	atomic64_set(&hs_bench_samples, 0);
	hs_bench_tp_data = unwind ? &hs_bench_depth : NULL;
	ret = tracepoint_probe_register(hs_bench_tp, hs_bench_switch, hs_bench_tp_data);
	if (!ret)
		hs_bench_switching = true;
	return ret;
}
#else
static int hs_bench_switch_start(bool unwind)
{
	return -EOPNOTSUPP;
}
#endif

static void hs_bench_stop(void)
{
	unsigned int cpu;

#if HS_HAVE_SCHED_SWITCH
	if (hs_bench_switching) {
		tracepoint_probe_unregister(hs_bench_tp, hs_bench_switch, hs_bench_tp_data);
		tracepoint_synchronize_unregister();
		hs_bench_switching = false;
	}
#endif

	for_each_possible_cpu(cpu) {
		struct perf_event *event = per_cpu(hs_bench_event, cpu);

		if (event)
			perf_event_release_kernel(event);
		per_cpu(hs_bench_event, cpu) = NULL;
	}
}

static int hs_bench_start(perf_overflow_handler_t handler, unsigned int hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = hz,
	};
	/* The period perf makes of a clock's frequency (perf_swevent_init_hrtimer()). */
	u64 p = NSEC_PER_SEC / hz, j = min_t(u64, p >> 4, U32_MAX);
	unsigned int cpu;

	hs_bench_jit_base = p - j;
	hs_bench_jit_span = 2 * j + 1;
	atomic64_set(&hs_bench_samples, 0);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct perf_event *event;

		per_cpu(hs_bench_rnd, cpu) = cpu + 1;
		event = perf_event_create_kernel_counter(&attr, cpu, NULL, handler, NULL);
		if (IS_ERR(event)) {
			cpus_read_unlock();
			hs_bench_stop();
			return PTR_ERR(event);
		}
		per_cpu(hs_bench_event, cpu) = event;
	}
	cpus_read_unlock();
	return 0;
}

static ssize_t hs_bench_write(struct file *file, const char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	char buf[32], mode[16];
	unsigned int hz = 0, depth = 127;
	int ret = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%15s %u %u", mode, &hz, &depth) < 1 || !depth ||
	    depth > HS_BENCH_DEPTH)
		return -EINVAL;
	mutex_lock(&hs_bench_lock);
	hs_bench_stop();
	hs_bench_depth = depth;
	if (!strcmp(mode, "empty") && hz)
		ret = hs_bench_start(hs_bench_empty, hz);
	else if (!strcmp(mode, "unwind") && hz)
		ret = hs_bench_start(hs_bench_unwind, hz);
	else if (!strcmp(mode, "empty-jitter") && hz)
		ret = hs_bench_start(hs_bench_empty_jitter, hz);
	else if (!strcmp(mode, "unwind-jitter") && hz)
		ret = hs_bench_start(hs_bench_unwind_jitter, hz);
	else if (!strcmp(mode, "switch-empty") || !strcmp(mode, "switch-unwind"))
		ret = hs_bench_switch_start(!strcmp(mode, "switch-unwind"));
	else if (strcmp(mode, "stop"))
		ret = -EINVAL;
	mutex_unlock(&hs_bench_lock);
	return ret ? ret : len;
}

static int hs_bench_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lld\n", (long long)atomic64_read(&hs_bench_samples));
	return 0;
}

static int hs_bench_open(struct inode *inode, struct file *file)
{
	return single_open(file, hs_bench_show, NULL);
}

static const struct proc_ops hs_bench_ops = {
	.proc_open = hs_bench_open,
	.proc_read = seq_read,
	.proc_write = hs_bench_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static struct proc_dir_entry *hs_bench_entry;

static int __init hs_bench_init(void)
{
	hs_bench_buf = __alloc_percpu(sizeof(unsigned long) * (HS_BENCH_DEPTH + 1),
				      sizeof(unsigned long));
	if (!hs_bench_buf)
		return -ENOMEM;
	hs_bench_entry = proc_create("hs_bench", 0600, NULL, &hs_bench_ops);
	if (!hs_bench_entry) {
		free_percpu(hs_bench_buf);
		return -ENOMEM;
	}
	return 0;
}

static void __exit hs_bench_exit(void)
{
	proc_remove(hs_bench_entry);
	mutex_lock(&hs_bench_lock);
	hs_bench_stop();
	mutex_unlock(&hs_bench_lock);
	free_percpu(hs_bench_buf);
}

module_init(hs_bench_init);
module_exit(hs_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotstack benchmark floors: empty and unwind-only handlers and probes");
