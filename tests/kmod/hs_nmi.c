// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module (x86_64): drives hotstack's sample path from real NMIs.
 *
 * Writing N to /proc/hs_nmi sends N rounds of NMIs to every online CPU
 * (apic->send_IPI_mask(NMI_VECTOR)); each CPU's NMI handler calls
 * hotstack_test_sample() with the interrupted registers (hotstack must be
 * loaded with test_hooks=1). Reading /proc/hs_nmi gives "sent handled
 * in_nmi" totals. Writing "unknown N" feeds N samples at an address no
 * kernel symbol covers; "fork N" N samples of a kernel thread that has
 * not made its first frame yet (frame-pointer kernels only); "switch N"
 * N precise samples from NMIs another CPU sends while this one spins with
 * rbp in another task's stack, as in the middle of a context switch
 * (frame-pointer kernels only); "precise N" N rounds whose samples have
 * the registers perf makes for an adaptive PEBS record (the interrupt's,
 * PERF_EFLAGS_EXACT, the record's IP: here hs_nmi_precise_ip()), of
 * interrupted kernel code only; "badbp N" N samples from NMIs a kprobe's
 * handler sends to its own CPU, in the int3 of code spinning with rbp 8,
 * on no stack (frame-pointer kernels only).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/objtool.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/linkage.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>
#include <asm/vsyscall.h>

void hotstack_test_sample(struct pt_regs *regs);

static DEFINE_PER_CPU(int, hs_pending);
static atomic64_t hs_sent, hs_handled, hs_in_nmi;
static bool hs_precise;

/* The precise IP of "precise" samples: a function of its own. */
static noinline void hs_nmi_precise_ip(void)
{
	barrier();
}

static int hs_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct pt_regs pebs;

	if (!this_cpu_read(hs_pending))
		return NMI_DONE;
	this_cpu_write(hs_pending, 0);
	if (in_nmi())
		atomic64_inc(&hs_in_nmi);
	if (!READ_ONCE(hs_precise)) {
		hotstack_test_sample(regs);
	} else if (!user_mode(regs)) {
		/* As setup_pebs_adaptive_sample_data(): *regs = *iregs, then the record's. */
		pebs = *regs;
		pebs.ip = (unsigned long)hs_nmi_precise_ip;
		pebs.flags = PERF_EFLAGS_EXACT;
		hotstack_test_sample(&pebs);
	}
	atomic64_inc(&hs_handled);
	return NMI_HANDLED;
}

/*
 * Send one NMI to every online CPU and wait until all ran: at most 10 s,
 * a hang detector (a virtual CPU the host does not run for a while gets
 * its NMI when it runs again).
 */
static int hs_nmi_round(void)
{
	u64 deadline = ktime_get_ns() + 10 * NSEC_PER_SEC;
	unsigned int cpu;
	bool pending;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		per_cpu(hs_pending, cpu) = 1;
	apic->send_IPI_mask(cpu_online_mask, NMI_VECTOR);
	atomic64_add(num_online_cpus(), &hs_sent);
	do {
		pending = false;
		for_each_online_cpu(cpu)
			pending |= READ_ONCE(per_cpu(hs_pending, cpu));
		cpu_relax();
	} while (pending && ktime_get_ns() < deadline);
	cpus_read_unlock();
	return pending ? -ETIMEDOUT : 0;
}

/* @n samples of @regs, each with interrupts off as in an interrupt. */
static void hs_nmi_feed(struct pt_regs *regs, unsigned long n)
{
	while (n--) {
		local_irq_disable();
		hotstack_test_sample(regs);
		local_irq_enable();
	}
}

/*
 * Samples at an address no kernel symbol covers (the vsyscall page): what
 * read() must print as [unknown]. Only for a session with max_depth 1,
 * which takes the IP alone and walks nothing from these registers.
 */
static void hs_nmi_unknown(unsigned long n)
{
	struct pt_regs regs = { 0 };

	regs.ip = VSYSCALL_ADDR;
	regs.cs = __KERNEL_CS;
	regs.flags = X86_EFLAGS_FIXED;
	hs_nmi_feed(&regs, n);
}

/*
 * Samples with the registers of a kernel thread before its first frame
 * (in ret_from_fork, or its function's first instructions): rbp still
 * holds copy_thread()'s encoded pointer to the zeroed pt_regs at the top
 * of the thread's stack. Taken in a kernel thread of our own, whose
 * pt_regs are those; the IP is this function's. Frame-pointer kernels
 * only: elsewhere rbp is an ordinary register.
 */
struct hs_nmi_fork {
	unsigned long n;
	struct completion done;
};

static int hs_nmi_fork_fn(void *arg)
{
	struct hs_nmi_fork *f = arg;
	struct pt_regs regs = { 0 };

	regs.ip = (unsigned long)hs_nmi_fork_fn;
	regs.sp = current_stack_pointer;
	regs.bp = (unsigned long)task_pt_regs(current) + 1;
	regs.cs = __KERNEL_CS;
	regs.flags = X86_EFLAGS_FIXED;
	hs_nmi_feed(&regs, f->n);
	complete(&f->done);
	return 0;
}

static int hs_nmi_fork(unsigned long n)
{
	struct hs_nmi_fork f = { .n = n };
	struct task_struct *t;

	if (!IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER))
		return -EOPNOTSUPP;
	init_completion(&f.done);
	t = kthread_run(hs_nmi_fork_fn, &f, "hs_nmi_fork");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion(&f.done);
	return 0;
}

/* The CPU that spins with a fake rbp ("switch N"), and whether it does. */
static unsigned int hs_switch_cpu;
static int hs_switch_spinning;

#ifdef CONFIG_UNWINDER_FRAME_POINTER
/*
 * Spin with rbp at @fake (having said so in hs_switch_spinning) until this
 * CPU's NMI has been handled (*@pending cleared), at most 10^8 rounds.
 * rbp is no frame pointer here: objtool is told so.
 */
static noinline void hs_nmi_spin_fake_bp(int *pending, unsigned long fake)
{
	asm volatile("push %%rbp\n\t"
		     "mov %[fake], %%rbp\n\t"
		     "movl $1, (%[spin])\n\t"
		     "mov $100000000, %%ecx\n"
		     "1:\tpause\n\t"
		     "cmpl $0, (%[p])\n\t"
		     "je 2f\n\t"
		     "dec %%ecx\n\t"
		     "jnz 1b\n"
		     "2:\tmovl $0, (%[spin])\n\t"
		     "pop %%rbp"
		     : : [p] "r" (pending), [fake] "r" (fake), [spin] "r" (&hs_switch_spinning)
		     : "ecx", "memory", "cc");
}

STACK_FRAME_NON_STANDARD(hs_nmi_spin_fake_bp);
#else
static void hs_nmi_spin_fake_bp(int *pending, unsigned long fake)
{
}
#endif

/* On another CPU: the NMI, once hs_switch_cpu spins (at most 1 s). */
static void hs_nmi_switch_send(void *unused)
{
	int i;

	for (i = 0; i < 1000000 && !READ_ONCE(hs_switch_spinning); i++)
		udelay(1);
	apic->send_IPI(hs_switch_cpu, NMI_VECTOR);
}

/*
 * @n NMIs taken with rbp in the init task's stack, as in context_switch()
 * from __switch_to_asm()'s stack switch to the end of __switch_to()
 * (current the task leaving, its frames the next one's), sent by another
 * CPU while this one spins; each a precise sample, whose walk starts
 * above the handler's frame and crosses the NMI's registers.
 * Frame-pointer kernels with two CPUs online only.
 */
static int hs_nmi_switch(unsigned long n)
{
	unsigned long fake = (unsigned long)task_stack_page(&init_task) + THREAD_SIZE / 2;
	unsigned int other;
	int ret = 0;

	if (!IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER))
		return -EOPNOTSUPP;
	WRITE_ONCE(hs_precise, true);
	while (n-- && !ret) {
		preempt_disable();
		hs_switch_cpu = smp_processor_id();
		other = cpumask_any_but(cpu_online_mask, hs_switch_cpu);
		if (other >= nr_cpu_ids) {
			preempt_enable();
			ret = -EOPNOTSUPP;
			break;
		}
		this_cpu_write(hs_pending, 1);
		atomic64_inc(&hs_sent);
		ret = smp_call_function_single(other, hs_nmi_switch_send, NULL, 0);
		local_irq_disable();
		if (!ret)
			hs_nmi_spin_fake_bp(this_cpu_ptr(&hs_pending), fake);
		if (this_cpu_read(hs_pending)) {
			this_cpu_write(hs_pending, 0);
			ret = ret ?: -ETIMEDOUT;
		}
		local_irq_enable();
		preempt_enable();
	}
	WRITE_ONCE(hs_precise, false);
	return ret;
}

#ifdef CONFIG_UNWINDER_FRAME_POINTER
/*
 * "badbp N": this CPU spins in hs_nmi_badbp_spin() with rbp 8 (on no
 * stack), interrupts off (no walk of the kernel's own, lockdep's or
 * KASAN's in an interrupt, meets that rbp), until *@wait (rdi) is 0; a
 * kprobe at hs_nmi_badbp_at takes an NMI of its own CPU in its handler
 * (int3's exception, whose registers are those of the spin): a sample
 * whose walk goes up through them, and their bp leads nowhere. objtool
 * is told that rbp is no frame pointer here.
 */
void hs_nmi_badbp_spin(int *wait);
asm(".pushsection .text, \"ax\"\n"
	".type hs_nmi_badbp_spin, @function\n"
	"hs_nmi_badbp_spin:\n\t"
	"push %rbp\n\t"
	"mov $8, %ebp\n\t"
	"mov $100000000, %ecx\n"
	"hs_nmi_badbp_at:\n\t"
	"pause\n\t"
	"cmpl $0, (%rdi)\n\t"
	"je 1f\n\t"
	"dec %ecx\n\t"
	"jnz hs_nmi_badbp_at\n"
	"1:\tpop %rbp\n\t"
	ASM_RET
	".size hs_nmi_badbp_spin, . - hs_nmi_badbp_spin\n"
	".popsection\n");
STACK_FRAME_NON_STANDARD(hs_nmi_badbp_spin);

static int hs_badbp_wait;

static int hs_nmi_badbp_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned int i;

	if (!READ_ONCE(hs_badbp_wait))
		return 0;
	this_cpu_write(hs_pending, 1);
	atomic64_inc(&hs_sent);
	apic->send_IPI(smp_processor_id(), NMI_VECTOR);
	for (i = 0; i < 100000000 && this_cpu_read(hs_pending); i++)
		cpu_relax();
	WRITE_ONCE(hs_badbp_wait, 0);
	return 0;
}

static int hs_nmi_badbp(unsigned long n)
{
	struct kprobe kp = {
		.symbol_name = "hs_nmi_badbp_at",	/* the label in the spin */
		.pre_handler = hs_nmi_badbp_pre,
	};
	int err = register_kprobe(&kp), ret = err;

	while (!ret && n--) {
		local_irq_disable();
		WRITE_ONCE(hs_badbp_wait, 1);
		hs_nmi_badbp_spin(&hs_badbp_wait);
		if (READ_ONCE(hs_badbp_wait) || this_cpu_read(hs_pending))
			ret = -ETIMEDOUT;
		this_cpu_write(hs_pending, 0);
		local_irq_enable();
	}
	if (!err)
		unregister_kprobe(&kp);
	return ret;
}
#else
static int hs_nmi_badbp(unsigned long n)
{
	return -EOPNOTSUPP;
}
#endif

static ssize_t hs_nmi_write(struct file *file, const char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	unsigned long rounds, i;
	char buf[32];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (!strncmp(buf, "unknown ", 8)) {
		ret = kstrtoul(buf + 8, 10, &rounds);
		if (ret)
			return ret;
		hs_nmi_unknown(rounds);
		return len;
	}
	if (!strncmp(buf, "precise ", 8)) {
		ret = kstrtoul(buf + 8, 10, &rounds);
		if (ret)
			return ret;
		WRITE_ONCE(hs_precise, true);
		for (i = 0; i < rounds && !ret; i++)
			ret = hs_nmi_round();
		WRITE_ONCE(hs_precise, false);
		return ret ? ret : len;
	}
	if (!strncmp(buf, "switch ", 7)) {
		ret = kstrtoul(buf + 7, 10, &rounds);
		if (!ret)
			ret = hs_nmi_switch(rounds);
		return ret ? ret : len;
	}
	if (!strncmp(buf, "badbp ", 6)) {
		ret = kstrtoul(buf + 6, 10, &rounds);
		if (!ret)
			ret = hs_nmi_badbp(rounds);
		return ret ? ret : len;
	}
	if (!strncmp(buf, "fork ", 5)) {
		ret = kstrtoul(buf + 5, 10, &rounds);
		if (!ret)
			ret = hs_nmi_fork(rounds);
		return ret ? ret : len;
	}
	ret = kstrtoul(buf, 10, &rounds);
	if (ret)
		return ret;
	for (i = 0; i < rounds; i++) {
		ret = hs_nmi_round();
		if (ret)
			return ret;
		if (!(i & 255))
			cond_resched();
		if (signal_pending(current))
			return -EINTR;
	}
	return len;
}

static int hs_nmi_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lld %lld %lld\n", (long long)atomic64_read(&hs_sent),
		   (long long)atomic64_read(&hs_handled), (long long)atomic64_read(&hs_in_nmi));
	return 0;
}

static int hs_nmi_open(struct inode *inode, struct file *file)
{
	return single_open(file, hs_nmi_show, NULL);
}

static const struct proc_ops hs_nmi_ops = {
	.proc_open = hs_nmi_open,
	.proc_read = seq_read,
	.proc_write = hs_nmi_write,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static struct proc_dir_entry *hs_nmi_entry;

static int __init hs_nmi_init(void)
{
	int ret = register_nmi_handler(NMI_LOCAL, hs_nmi_handler, 0, "hs_nmi");

	if (ret)
		return ret;
	hs_nmi_entry = proc_create("hs_nmi", 0600, NULL, &hs_nmi_ops);
	if (!hs_nmi_entry) {
		unregister_nmi_handler(NMI_LOCAL, "hs_nmi");
		return -ENOMEM;
	}
	return 0;
}

static void __exit hs_nmi_exit(void)
{
	proc_remove(hs_nmi_entry);
	unregister_nmi_handler(NMI_LOCAL, "hs_nmi");
}

module_init(hs_nmi_init);
module_exit(hs_nmi_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hotstack test: sample path driven by real NMIs");
