// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: puts the kernel, on one CPU, in states that are real
 * but rare or short, for the tests of what hotstack does in them. Nothing
 * of hotstack is changed; two kretprobes do it.
 *
 * /proc/hs_fail_event: while it holds CPU N (write "N"; "-1" ends it),
 *	perf_event_create_kernel_counter() for CPU N with a context pointer
 *	(hotstack passes its session; the hard-lockup watchdog, the other
 *	in-kernel user, passes none) fails as perf fails an event no PMU
 *	takes (-ENOENT): its attribute's type is made one no PMU has for the
 *	call. As an allocation fails, or a PMU this CPU lacks on a
 *	heterogeneous machine. Reading it gives how many calls failed so.
 * /proc/hs_hold_irq_work: while it holds CPU N, that CPU's irq_work
 *	thread (PREEMPT_RT: irq_work not marked HARD runs there) finds no
 *	work to run, as when it has not been scheduled yet: a work queued
 *	there stays queued, and the thread parks with it when the CPU goes
 *	offline. Reading it gives "absent" on kernels without that thread.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/proc_fs.h>
#include <linux/ptrace.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

static atomic_t hs_fail_cpu = ATOMIC_INIT(-1);
static atomic64_t hs_failed;
static atomic_t hs_hold_cpu = ATOMIC_INIT(-1);
static bool hs_hold_probed;

struct hs_call {
	struct perf_event_attr *attr;
	u32 type;
};

static int hs_create_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct hs_call *call = (struct hs_call *)ri->data;
	struct perf_event_attr *attr = (void *)regs_get_kernel_argument(regs, 0);
	int cpu = regs_get_kernel_argument(regs, 1);

	call->attr = NULL;
	if (cpu != atomic_read(&hs_fail_cpu) || !regs_get_kernel_argument(regs, 4))
		return 0;
	call->attr = attr;
	call->type = attr->type;
	attr->type = PERF_TYPE_MAX + 0x1000;
	atomic64_inc(&hs_failed);
	return 0;
}

static int hs_create_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct hs_call *call = (struct hs_call *)ri->data;

	if (call->attr)
		call->attr->type = call->type;
	return 0;
}

static struct kretprobe hs_create_probe = {
	.kp.symbol_name = "perf_event_create_kernel_counter",
	.entry_handler = hs_create_entry,
	.handler = hs_create_return,
	.data_size = sizeof(struct hs_call),
	.maxactive = 64,
};

/* irq_workd_should_run(cpu) of the held CPU answers 0. */
static int hs_hold_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(bool *)ri->data = regs_get_kernel_argument(regs, 0) == atomic_read(&hs_hold_cpu);
	return 0;
}

static int hs_hold_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (*(bool *)ri->data)
		regs_set_return_value(regs, 0);
	return 0;
}

static struct kretprobe hs_hold_probe = {
	.kp.symbol_name = "irq_workd_should_run",
	.entry_handler = hs_hold_entry,
	.handler = hs_hold_return,
	.data_size = sizeof(bool),
	.maxactive = 64,
};

static int hs_fail_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lld\n", (long long)atomic64_read(&hs_failed));
	return 0;
}

static int hs_hold_show(struct seq_file *m, void *v)
{
	if (hs_hold_probed)
		seq_printf(m, "%d\n", atomic_read(&hs_hold_cpu));
	else
		seq_puts(m, "absent\n");
	return 0;
}

/* A file's reading and the CPU its writes set. */
struct hs_file {
	int (*show)(struct seq_file *m, void *v);
	atomic_t *cpu;
};

static const struct hs_file hs_fail_file = { hs_fail_show, &hs_fail_cpu };
static const struct hs_file hs_hold_file = { hs_hold_show, &hs_hold_cpu };

static int hs_open(struct inode *inode, struct file *file)
{
	const struct hs_file *f = pde_data(inode);

	return single_open(file, f->show, (void *)f);
}

/* A CPU number, or -1 for none. */
static ssize_t hs_write(struct file *file, const char __user *ubuf, size_t len, loff_t *pos)
{
	const struct hs_file *f = ((struct seq_file *)file->private_data)->private;
	int cpu, ret;

	ret = kstrtoint_from_user(ubuf, len, 10, &cpu);
	if (ret)
		return ret;
	if (cpu < -1 || cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	atomic_set(f->cpu, cpu);
	return len;
}

static const struct proc_ops hs_proc_ops = {
	.proc_open = hs_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = hs_write,
};

static void hs_inject_cleanup(void)
{
	remove_proc_entry("hs_fail_event", NULL);
	remove_proc_entry("hs_hold_irq_work", NULL);
	if (hs_hold_probed)
		unregister_kretprobe(&hs_hold_probe);
	unregister_kretprobe(&hs_create_probe);
}

static int __init hs_inject_init(void)
{
	int ret = register_kretprobe(&hs_create_probe);

	if (ret) {
		pr_err("cannot probe %s: %d\n", hs_create_probe.kp.symbol_name, ret);
		return ret;
	}
	/* Only PREEMPT_RT kernels have irq_work threads. */
	hs_hold_probed = !register_kretprobe(&hs_hold_probe);
	if (!proc_create_data("hs_fail_event", 0600, NULL, &hs_proc_ops, (void *)&hs_fail_file) ||
	    !proc_create_data("hs_hold_irq_work", 0600, NULL, &hs_proc_ops,
			      (void *)&hs_hold_file)) {
		hs_inject_cleanup();
		return -ENOMEM;
	}
	return 0;
}

static void __exit hs_inject_exit(void)
{
	hs_inject_cleanup();
}

module_init(hs_inject_init);
module_exit(hs_inject_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotstack test: perf event creation failing, irq_work held, on one CPU");
