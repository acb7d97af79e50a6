/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: stack walks on arm64, by frame records (arm64 kernels always
 * keep frame pointers). Called from NMI (GICv3 pseudo-NMI for PMU
 * overflows) or hardirq context: every read is fault-safe and every walk
 * is bounded.
 *
 * The kernel's own unwinder is not exported, so the kernel walk is done
 * here with the same rules (arch/arm64/kernel/stacktrace.c): a frame
 * record is { fp, lr }, 8-byte aligned, inside a stack this CPU may be
 * using; addresses strictly increase within a stack; a walk may leave the
 * interrupt-time stack for the task stack but never come back; the record
 * in the task's pt_regs ends the chain.
 *
 * Inline in the sample path (sample.c, its only user): the walk's state
 * stays in registers.
 */
#ifndef _HOTSTACK_UNWIND_ARM64_H
#define _HOTSTACK_UNWIND_ARM64_H

#include <linux/hardirq.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/memory.h>
#include <asm/stack_pointer.h>

#include "hotstack.h"

/* AAPCS64 frame record. */
struct hs_frame_record {
	unsigned long fp;
	unsigned long lr;
};

struct hs_stack_range {
	unsigned long low, high;	/* [low, high) */
};

static inline bool hs_on_stack(const struct hs_stack_range *st, unsigned long fp)
{
	return fp >= st->low && fp < st->high &&
	       st->high - fp >= sizeof(struct hs_frame_record);
}

/*
 * Keep the return address of record @rec, just read (@err: the read
 * failed); false when the walk ends there. @user: a user stack's.
 */
static __always_inline bool hs_walk_record(struct hs_walk *w, long err,
					   struct hs_frame_record *rec, const bool user,
					   const bool collapse)
{
	if (err) {
		w->fault = true;
		return false;
	}
	rec->lr = hs_strip_pac(rec->lr, user);
	return rec->lr && hs_walk_push(w, rec->lr, collapse);
}

/*
 * @rec, read at @fp on stack @st, is the metadata record of an exception
 * taken in the kernel (kernels since 6.13: see compat.h): make it the
 * record the older kernels leave there, { interrupted x29, interrupted
 * pc }, from the pt_regs around it, as the kernel's unwinder does. False
 * (the walk ends) for a record of zeros that is anything else.
 */
static __always_inline bool hs_regs_record(const struct hs_stack_range *st, unsigned long fp,
					   struct hs_frame_record *rec)
{
#if HS_ARM64_FRAME_META
	struct pt_regs *regs = container_of((u64 *)fp, struct pt_regs, stackframe.record.fp);
	const struct frame_record_meta *meta = (void *)fp;
	u64 type;

	if ((unsigned long)regs < st->low || (unsigned long)(regs + 1) > st->high)
		return false;
	if (copy_from_kernel_nofault(&type, &meta->type, sizeof(type)) ||
	    type != FRAME_META_TYPE_PT_REGS)
		return false;
	return !copy_from_kernel_nofault(&rec->fp, &regs->regs[29], sizeof(rec->fp)) &&
	       !copy_from_kernel_nofault(&rec->lr, &regs->pc, sizeof(rec->lr));
#else
	return false;
#endif
}

/* No precise events on arm64 (perf refuses precise_ip there). */
static inline bool hs_precise_regs(struct pt_regs *regs, unsigned int precise)
{
	return false;
}

/*
 * Registers for a walk of the current stack from the caller of the
 * function this is expanded in (the off-CPU probe): its return address,
 * then the records from its caller's, the first word of the probe's own
 * record (perf_fetch_caller_regs() would give the probe's record, whose
 * lr is that return address again). Frame 0 is a return address.
 */
#define hs_probe_regs(out) do {							\
	struct pt_regs *__r = (out);						\
										\
	memset(__r, 0, sizeof(*__r));						\
	__r->pc = _RET_IP_;							\
	__r->regs[29] = *(unsigned long *)__builtin_frame_address(0);		\
	__r->sp = current_stack_pointer;					\
	__r->pstate = PSR_MODE_EL1h;						\
} while (0)

static __always_inline void hs_walk_kernel(struct hs_walk *w, struct pt_regs *regs,
					   struct hs_slot *slot, const bool collapse,
					   const bool precise, const bool probe)
{
	unsigned long task_low = (unsigned long)task_stack_page(current);
	struct hs_stack_range task = { task_low, task_low + THREAD_SIZE };
	unsigned long final = (unsigned long)&task_pt_regs(current)->stackframe;
	unsigned long sp = current_stack_pointer;
	unsigned long fp = regs->regs[29], prev = 0;
	struct hs_stack_range irq = { 0, 0 };
	struct hs_frame_record rec;
	unsigned int steps = collapse ? hs_walk_steps(w) : 0;
	bool on_task = false;
	long err;

	/*
	 * Off the task stack, this handler runs on the stack the interrupt
	 * entry chose: the IRQ stack (or, interrupting code that was already
	 * on the IRQ, overflow or SDEI stack, that one), above which lie the
	 * interrupted frames. No stack is larger than IRQ_STACK_SIZE; the
	 * exact bounds are not exported, so the window is [sp, sp + size).
	 */
	if (!hs_on_stack(&task, sp)) {
		irq.low = sp;
		irq.high = sp + IRQ_STACK_SIZE;
	}

	/* The off-CPU probe's caller: not the tracepoint's iterator. */
	if ((!probe || !hs_in_tp_iter(regs->pc)) && !hs_walk_push(w, regs->pc, collapse))
		return;
	for (; fp != final; fp = rec.fp) {
		if (collapse && !steps--) {
			w->truncated = true;
			break;
		}
		if (!fp || (fp & (sizeof(long) - 1)))
			break;
		if (hs_on_stack(&task, fp)) {
			if (on_task && fp <= prev)
				break;
			on_task = true;
		} else if (on_task || !hs_on_stack(&irq, fp) || fp <= prev) {
			break;
		}
		err = copy_from_kernel_nofault(&rec, (void *)fp, sizeof(rec));
		if (!err && !rec.fp && !rec.lr &&
		    !hs_regs_record(on_task ? &task : &irq, fp, &rec))
			break;
		if (!hs_walk_record(w, err, &rec, false, collapse))
			break;
		prev = fp;
	}
}

/*
 * The kernel stack of @task, off the CPU (cpu_switch_to() saved its fp and
 * pc), into @w: its frame records, each above the last on its stack, up to
 * the final one. Process context, under rcu_read_lock() (the stack of a
 * task that exits meanwhile is freed after a grace period); the records
 * read without faulting, as they may change under the walk.
 */
static inline void hs_walk_blocked(struct hs_walk *w, struct task_struct *task)
{
	unsigned long low = (unsigned long)task_stack_page(task);
	struct hs_stack_range st = { low, low + THREAD_SIZE };
	unsigned long final = (unsigned long)&task_pt_regs(task)->stackframe;
	unsigned long fp = thread_saved_fp(task), prev = 0;
	struct hs_frame_record rec;

	if (!hs_walk_push(w, hs_strip_pac(thread_saved_pc(task), false), false))
		return;
	for (; fp != final; fp = rec.fp) {
		if (!fp || (fp & (sizeof(long) - 1)) || !hs_on_stack(&st, fp) || fp <= prev)
			break;
		if (!hs_walk_record(w, copy_from_kernel_nofault(&rec, (void *)fp, sizeof(rec)),
				    &rec, false, false))
			break;
		prev = fp;
	}
}

/*
 * A GICv3 pseudo-NMI that interrupted code with IRQs masked enters through
 * arm64_enter_nmi() alone: one level. With IRQs unmasked (user code, most
 * kernel code) the exception is taken as an IRQ, irq_enter_rcu(), and the
 * GIC driver then sees the NMI priority and adds nmi_enter(): two.
 */
static inline unsigned int hs_irq_levels(struct pt_regs *regs)
{
	return in_nmi() && interrupts_enabled(regs) ? 2 : 1;
}

static __always_inline void hs_walk_user(struct hs_walk *w, struct pt_regs *regs,
					 const bool collapse)
{
	struct hs_frame_record rec;
	unsigned long fp, prev = 0;
	unsigned int steps = collapse ? hs_walk_steps(w) : 0;

	regs = hs_user_regs(regs);
	if (!regs)
		return;
	if (!hs_walk_push(w, regs->pc, collapse) || compat_user_mode(regs))
		return;

	/*
	 * Strictly increasing, aligned frame records: the walk ends, and
	 * cannot loop, on anything else. copy_from_user_nofault() checks
	 * the range and never sleeps.
	 */
	for (fp = regs->regs[29]; fp > prev && !(fp & (sizeof(long) - 1)); fp = rec.fp) {
		if (collapse && !steps--) {
			w->truncated = true;
			break;
		}
		if (!hs_walk_record(w, copy_from_user_nofault(&rec, (const void __user *)fp,
							      sizeof(rec)),
				    &rec, true, collapse))
			break;
		prev = fp;
	}
}

/* Where a user walk by unwind tables starts (uwalk.h). */
static __always_inline void hs_uw_start(struct pt_regs *regs, unsigned long *pc,
					unsigned long *sp, unsigned long *fp, unsigned long *lr)
{
	*pc = regs->pc;
	*sp = regs->sp;
	*fp = regs->regs[29];
	*lr = regs->regs[30];
}

#define hs_uw_64bit(regs)	(!compat_user_mode(regs))

/*
 * Where the registers a signal interrupted are, from the stack pointer at
 * the signal trampoline (the vDSO's __kernel_rt_sigreturn): struct
 * rt_sigframe there, its ucontext after the 128 bytes of siginfo, whose
 * uc_mcontext (a struct sigcontext, 16-byte aligned) is 176 bytes on; in
 * it, after fault_address, regs[31] (x29, x30), then sp and pc.
 */
#define HS_UW_SIG_FP	(128 + 176 + 8 + 29 * 8)
#define HS_UW_SIG_LR	(128 + 176 + 8 + 30 * 8)
#define HS_UW_SIG_SP	(128 + 176 + 8 + 31 * 8)
#define HS_UW_SIG_PC	(128 + 176 + 8 + 32 * 8)
#define hs_uw_ret(addr)		hs_strip_pac(addr, true)

/* Every read goes through copy_from_user_nofault(): a walk may start at once. */
#define hs_uw_begin(sp)		true

/*
 * One word of the user stack at @addr into *@val; false when it cannot be
 * read. copy_from_user_nofault() checks the range and never sleeps.
 */
static __always_inline bool hs_uw_get(unsigned long addr, unsigned long *val)
{
	return !copy_from_user_nofault(val, (const void __user *)addr, sizeof(*val));
}

/*
 * Two words of the user stack, at @a and @b, into *@va and *@vb: one read
 * where they are a frame record's (side by side); false when either
 * cannot be read.
 */
static __always_inline bool hs_uw_get2(unsigned long a, unsigned long *va, unsigned long b,
				       unsigned long *vb)
{
	unsigned long rec[2];

	if (b == a + sizeof(long) || a == b + sizeof(long)) {
		if (copy_from_user_nofault(rec, (const void __user *)min(a, b), sizeof(rec)))
			return false;
		*va = rec[a > b];
		*vb = rec[b > a];
		return true;
	}
	return hs_uw_get(a, va) && hs_uw_get(b, vb);
}

/* The frame record at @fp: the caller's frame pointer, the return address. */
static __always_inline bool hs_uw_record(unsigned long fp, unsigned long *next,
					 unsigned long *ra)
{
	return hs_uw_get2(fp, next, fp + 8, ra);
}

#endif
