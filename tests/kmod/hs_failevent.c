// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: makes the creation of a session's perf event fail on
 * one CPU, for the tests of what hotstack does when a CPU comes online and
 * its event cannot be made (an allocation that fails, a PMU that this CPU
 * lacks on a heterogeneous machine).
 *
 * A kretprobe on perf_event_create_kernel_counter(): while armed for CPU N
 * (write "N" to /proc/hs_failevent, "-1" to disarm), a call for CPU N with
 * a context pointer (hotstack passes its session; the hard-lockup watchdog,
 * the other in-kernel user, passes none) has its attribute's type changed
 * to one no PMU has, so that perf itself refuses it (-ENOENT), and put
 * back when the call returns. Reading /proc/hs_failevent gives the number
 * of calls failed so. Nothing of hotstack is changed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

static atomic_t hs_fail_cpu = ATOMIC_INIT(-1);
static atomic64_t hs_failed;

struct hs_call {
	struct perf_event_attr *attr;
	u32 type;
};

static int hs_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
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

static int hs_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct hs_call *call = (struct hs_call *)ri->data;

	if (call->attr)
		call->attr->type = call->type;
	return 0;
}

static struct kretprobe hs_probe = {
	.kp.symbol_name = "perf_event_create_kernel_counter",
	.entry_handler = hs_entry,
	.handler = hs_return,
	.data_size = sizeof(struct hs_call),
	.maxactive = 64,
};

static int hs_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lld\n", (long long)atomic64_read(&hs_failed));
	return 0;
}

static int hs_open(struct inode *inode, struct file *file)
{
	return single_open(file, hs_show, NULL);
}

static ssize_t hs_write(struct file *file, const char __user *ubuf, size_t len, loff_t *pos)
{
	int cpu, ret;

	ret = kstrtoint_from_user(ubuf, len, 10, &cpu);
	if (ret)
		return ret;
	if (cpu < -1 || cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	atomic_set(&hs_fail_cpu, cpu);
	return len;
}

static const struct proc_ops hs_proc_ops = {
	.proc_open = hs_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = hs_write,
};

static int __init hs_failevent_init(void)
{
	int ret = register_kretprobe(&hs_probe);

	if (ret) {
		pr_err("cannot probe %s: %d\n", hs_probe.kp.symbol_name, ret);
		return ret;
	}
	if (!proc_create("hs_failevent", 0600, NULL, &hs_proc_ops)) {
		unregister_kretprobe(&hs_probe);
		return -ENOMEM;
	}
	return 0;
}

static void __exit hs_failevent_exit(void)
{
	remove_proc_entry("hs_failevent", NULL);
	unregister_kretprobe(&hs_probe);
}

module_init(hs_failevent_init);
module_exit(hs_failevent_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotstack test: make perf event creation fail on one CPU");
