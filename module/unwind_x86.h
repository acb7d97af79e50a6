/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: stack walks on x86_64. NMI-safe: the kernel's unwinder (ORC or
 * frame pointers, whichever this kernel has) for the kernel stack, frame
 * pointers read with page faults disabled for the user stack.
 *
 * Inline in the sample path (sample.c, its only user): the walk's state
 * stays in registers. Called from NMI or hardirq context.
 */
#ifndef _HOTSTACK_UNWIND_X86_H
#define _HOTSTACK_UNWIND_X86_H

#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/unwind.h>

#include "hotstack.h"

/*
 * Registers saved by an interrupt (as opposed to perf_fetch_caller_regs()
 * of a software event) have the always-one EFLAGS bit set; as perf does.
 */
static inline bool hs_hw_regs(struct pt_regs *regs)
{
	return regs->flags & X86_EFLAGS_FIXED;
}

/* An NMI or an interrupt: one level (nmi_enter() or irq_enter()). */
static inline unsigned int hs_irq_levels(struct pt_regs *regs)
{
	return 1;
}

/*
 * A kernel thread before its first frame (ret_from_fork, its function's
 * first instructions): rbp still holds copy_thread()'s encoded pointer to
 * the zeroed pt_regs at the top of its stack, and nothing but
 * ret_from_fork is above the IP. The frame-pointer unwinder, started
 * there, takes those pt_regs for an interrupt frame and warns (once a
 * boot) of their bp of 0. Only with frame pointers: elsewhere rbp is an
 * ordinary register, and can keep that value for a thread's whole life.
 */
static inline bool hs_before_first_frame(struct pt_regs *regs)
{
	return IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER) &&
	       regs->bp == (unsigned long)task_pt_regs(current) + 1;
}

/*
 * With frame pointers: registers of task context (no interrupt or softirq
 * under this one) whose bp is off the current task's stack. In
 * context_switch(), from __switch_to_asm()'s stack switch to the end of
 * __switch_to(), current is still the task leaving while its stack
 * pointers are already the next one's: the callers there are another
 * task's. The frame-pointer unwinder, walking up from this NMI's frame
 * through its registers, found bp on no stack of current's and warned
 * (once a boot: the debug guest, in rcu_preempt and swapper): the IP
 * alone, as for entry code. ORC needs no test (a dozen instructions a
 * sample): its first step finds sp on no stack of current's and ends the
 * walk there, the IP alone as well.
 */
static inline bool hs_off_task_stack(struct pt_regs *regs)
{
	unsigned long low = (unsigned long)task_stack_page(current);

	return IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER) &&
	       hardirq_count() <= hs_irq_levels(regs) * HARDIRQ_OFFSET &&
	       !in_serving_softirq() && regs->bp - low >= THREAD_SIZE;
}

/*
 * With frame pointers: one of @regs' bp and sp on the current task's stack,
 * the other not. A precise sample's walk starts at this handler's frame:
 * the frame-pointer unwinder steps up through the NMI's registers and
 * looks for their bp on their sp's stack, and where it is not, warns
 * (once a boot: "kernel stack regs ... has bad 'bp' value", the
 * trixie-debug guest, a test NMI's precise sample in swapper, which it
 * took in an interrupt's entry: sp already on the IRQ stack, bp still
 * the task's frame). The IP alone, as perf's callchain ends there too.
 */
static inline bool hs_bp_sp_apart(struct pt_regs *regs)
{
	unsigned long low = (unsigned long)task_stack_page(current);

	return IS_ENABLED(CONFIG_UNWINDER_FRAME_POINTER) &&
	       (regs->bp - low < THREAD_SIZE) != (regs->sp - low < THREAD_SIZE);
}

/*
 * The walk is at an interrupt's registers (kernel mode) on the task or IRQ
 * stack whose bp does not lead up that stack: the interrupted code's rbp
 * was no frame pointer there. The frame-pointer unwinder would end the
 * walk at the next step too, but for current it first says so on the
 * console, once a boot ("kernel stack regs at ... has bad 'bp' value"),
 * as it does under perf (once in a debug guest, in rcu_preempt: the
 * off-CPU probe walks a task preempted at an interrupt's end through its
 * registers; lockdep's and KASAN's stack saves walk the same). Its own
 * test (update_stack_state()): the next frame on this stack, above the
 * registers. An encoded bp (another interrupt's registers) is the
 * unwinder's; registers on an exception stack lead to another stack.
 */
static __always_inline bool hs_regs_bp_bad(struct unwind_state *state)
{
#ifdef CONFIG_UNWINDER_FRAME_POINTER
	struct pt_regs *regs = state->regs;
	unsigned long bp;

	if (likely(!regs) || state->next_bp || user_mode(regs))
		return false;
	bp = regs->bp;
	if ((bp & 1) || (state->stack_info.type != STACK_TYPE_TASK &&
			 state->stack_info.type != STACK_TYPE_IRQ))
		return false;
	return bp < (unsigned long)(regs + 1) ||
	       !on_stack(&state->stack_info, (void *)bp, 2 * sizeof(long));
#else
	return false;
#endif
}

/*
 * A precise (PEBS) sample's registers, as Intel's ds.c makes them (6.1 to
 * 7.x): the interrupt's, with the IP of the record; their flags are the
 * record's (legacy PEBS) or PERF_EFLAGS_EXACT alone (adaptive PEBS, Ice
 * Lake on), which no interrupt saves (EFLAGS bit 3 is reserved, 0).
 */
static inline bool hs_precise_regs(struct pt_regs *regs, unsigned int precise)
{
	return precise || (regs->flags & PERF_EFLAGS_EXACT);
}

/*
 * Registers for a walk of the current stack from the caller of the
 * function this is expanded in (the off-CPU probe): the caller's at the
 * instruction the call returns to, as an interrupt there would save them
 * (the always-one EFLAGS bit set), so that the unwinder starts in the
 * caller's frame rather than in its own and steps up through the probe's
 * (perf_fetch_caller_regs()' way: on 6.1 those two steps were about 770
 * of the 3780 instructions a context switch cost an off-CPU session).
 * __builtin_frame_address(0) keeps a frame pointer in the probe: the
 * caller's rbp saved at it, the return address above, the caller's sp
 * above that. Frame 0 is a return address.
 */
#define hs_probe_regs(out) do {							\
	struct pt_regs *__r = (out);						\
	unsigned long *__fp = __builtin_frame_address(0);			\
										\
	memset(__r, 0, sizeof(*__r));						\
	__r->ip = _RET_IP_;							\
	__r->sp = (unsigned long)(__fp + 2);					\
	__r->bp = __fp[0];							\
	__r->cs = __KERNEL_CS;							\
	__r->flags = X86_EFLAGS_FIXED;						\
} while (0)

static __always_inline void hs_walk_kernel(struct hs_walk *w, struct pt_regs *regs,
					   struct hs_slot *slot, const bool collapse,
					   const bool precise, const bool probe)
{
	struct unwind_state *state = &slot->unwind;
	unsigned int steps = collapse ? hs_walk_steps(w) : 0;
	unsigned long addr;

	/* One value across the walk, never made again from @slot. */
	OPTIMIZER_HIDE_VAR(state);
	/*
	 * __unwind_start(), not unwind_start(), whose first frame when none
	 * is given (regs->sp with registers: the same as given here) is the
	 * caller's __builtin_frame_address(0): code that makes GCC keep a
	 * frame pointer in the handler, a register the walk's loop lacks.
	 *
	 * A precise sample: its IP, then the callers of the interrupted
	 * function from the interrupt's sp, as perf's callchain of a PEBS
	 * sample is the interrupt's. The record's sp and bp (legacy PEBS)
	 * belong to another instruction than its IP ("can point into thin
	 * air", ds.c): never unwound from. Drained outside the interrupt,
	 * the sp is 0 and the IP stands alone.
	 */
	if (precise) {
		if (!hs_walk_push(w, regs->ip, collapse) || !regs->sp || hs_off_task_stack(regs) ||
		    hs_bp_sp_apart(regs))
			return;
		__unwind_start(state, current, NULL, (unsigned long *)regs->sp);
	} else if (hs_hw_regs(regs)) {
		/*
		 * As perf_callchain_kernel(): the interrupted IP, then its
		 * callers. The off-CPU probe's caller: not the tracepoint's
		 * iterator (hs_in_tp_iter()).
		 */
		if ((!probe || !hs_in_tp_iter(regs->ip)) && !hs_walk_push(w, regs->ip, collapse))
			return;
		/* A probe's caller is on its own stack (task, or IRQ: a waker). */
		if (hs_before_first_frame(regs) || (!probe && hs_off_task_stack(regs)))
			return;
		__unwind_start(state, current, regs, (unsigned long *)regs->sp);
	} else {
		__unwind_start(state, current, NULL, (unsigned long *)regs->sp);
	}
	for (; !unwind_done(state); unwind_next_frame(state)) {
		if (collapse && !steps--) {
			w->truncated = true;
			return;
		}
		addr = unwind_get_return_address(state);
		if (!addr || !hs_walk_push(w, addr, collapse) || hs_regs_bp_bad(state))
			return;
	}
}

/*
 * The kernel stack of @task, off the CPU (its switch to another saved its
 * frame), into @w: the kernel's unwinder from that frame, which stops at
 * once for a task running on another CPU and keeps to @task's stack when
 * it changes under it. Process context, under rcu_read_lock() (the stack
 * of a task that exits meanwhile is freed after a grace period).
 */
static inline void hs_walk_blocked(struct hs_walk *w, struct task_struct *task)
{
	struct unwind_state state;
	unsigned long addr;

	for (unwind_start(&state, task, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr || !hs_walk_push(w, addr, false))
			return;
	}
}

/* A frame record of code built with frame pointers. */
struct hs_user_frame {
	unsigned long next_fp;
	unsigned long ret;
};

/*
 * The frame record at @fp: the caller's frame pointer into *@next, the
 * return address into *@ra, in one user access window of their own (a
 * range check and two loads); false when it cannot be read. Page faults
 * disabled, and past the walk's first read in an NMI (hs_walk_user(),
 * hs_uw_begin()).
 */
static __always_inline bool hs_uw_record(unsigned long fp, unsigned long *next,
					 unsigned long *ra)
{
	const struct hs_user_frame __user *f = (const struct hs_user_frame __user *)fp;

	if (!user_access_begin(f, sizeof(*f)))
		return false;
	unsafe_get_user(*next, &f->next_fp, fault);
	unsafe_get_user(*ra, &f->ret, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

static __always_inline void hs_walk_user(struct hs_walk *w, struct pt_regs *regs,
					 const bool collapse)
{
	const struct hs_user_frame __user *fp;
	struct hs_user_frame frame;
	unsigned long prev = 0;
	unsigned int steps = collapse ? hs_walk_steps(w) : 0;

	regs = hs_user_regs(regs);
	if (!regs)
		return;
	if (!hs_walk_push(w, regs->ip, collapse) || !user_64bit_mode(regs))
		return;

	/*
	 * Strictly increasing, aligned frame pointers: the walk ends, and
	 * cannot loop, on anything else. In an NMI the first frame is read
	 * with copy_from_user_nofault(), which also checks
	 * nmi_uaccess_okay() (not exported: an NMI that interrupted a
	 * switch of mm, or code on a temporary mm, must not read user
	 * memory); what it says holds until the NMI returns. A context
	 * switch changes mm with interrupts off; exec_mmap() does not: it
	 * sets the task's new mm, then loads it with interrupts on. An NMI
	 * between the two is refused by nmi_uaccess_okay(); an hrtimer
	 * interrupt reads through the mm still loaded, the old image's,
	 * which the registers and credentials it sees still describe
	 * (t_30: hs_vmtest exec). Every other frame is read in a user
	 * access window of its own, a range check and two loads, page
	 * faults disabled (a fault fails the read and never sleeps): no
	 * call, no string copy.
	 */
	pagefault_disable();
	for (fp = (const void __user *)regs->bp;
	     (unsigned long)fp > prev && !((unsigned long)fp & (sizeof(long) - 1));
	     fp = (const void __user *)frame.next_fp) {
		if (collapse && !steps--) {
			w->truncated = true;
			break;
		}
		if (!prev && in_nmi()) {
			if (copy_from_user_nofault(&frame, fp, sizeof(frame)))
				goto fault;
		} else if (!hs_uw_record((unsigned long)fp, &frame.next_fp, &frame.ret)) {
			goto fault;
		}
		if (!frame.ret || !hs_walk_push(w, frame.ret, collapse))
			break;
		prev = (unsigned long)fp;
	}
	pagefault_enable();
	return;

fault:
	w->fault = true;
	pagefault_enable();
}

/* Where a user walk by unwind tables starts (uwalk.h): no link register. */
static __always_inline void hs_uw_start(struct pt_regs *regs, unsigned long *pc,
					unsigned long *sp, unsigned long *fp, unsigned long *lr)
{
	*pc = regs->ip;
	*sp = regs->sp;
	*fp = regs->bp;
	*lr = 0;
}

#define hs_uw_64bit(regs)	user_64bit_mode(regs)

/*
 * Where the registers a signal interrupted are, from the stack pointer at
 * the signal trampoline (__restore_rt: the handler has returned to it,
 * popping struct rt_sigframe's pretcode): the ucontext's uc_mcontext, a
 * struct sigcontext, 40 bytes on; its rbp, rsp and rip. No link register.
 */
#define HS_UW_SIG_FP	(40 + 80)
#define HS_UW_SIG_SP	(40 + 120)
#define HS_UW_SIG_PC	(40 + 128)
#define HS_UW_SIG_LR	0
#define hs_uw_ret(addr)		(addr)

/*
 * Whether a walk from stack pointer @sp may read user memory: in an NMI,
 * its first read goes through copy_from_user_nofault(), which checks
 * nmi_uaccess_okay() (see hs_walk_user()): the word at the stack pointer.
 * What it says holds until the NMI returns.
 */
static __always_inline bool hs_uw_begin(unsigned long sp)
{
	unsigned long word;

	return !in_nmi() || !copy_from_user_nofault(&word, (const void __user *)sp, sizeof(word));
}

/*
 * One word of the user stack at @addr into *@val; false when it cannot be
 * read. Page faults are disabled (uwalk.h) and hs_uw_begin() said the walk
 * may read: a range check and a load in a user access window of its own.
 */
static __always_inline bool hs_uw_get(unsigned long addr, unsigned long *val)
{
	const unsigned long __user *p = (const unsigned long __user *)addr;

	if (!user_access_begin(p, sizeof(*val)))
		return false;
	unsafe_get_user(*val, p, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * Two words of the user stack, at @a and @b (within 64 KiB of each
 * other: a frame's saved words) into *@va and *@vb, in one user access
 * window; false when either cannot be read. As hs_uw_get().
 */
static __always_inline bool hs_uw_get2(unsigned long a, unsigned long *va, unsigned long b,
				       unsigned long *vb)
{
	unsigned long lo = min(a, b);
	const unsigned long __user *pa = (const unsigned long __user *)a;
	const unsigned long __user *pb = (const unsigned long __user *)b;

	if (!user_access_begin((const void __user *)lo, max(a, b) - lo + sizeof(*vb)))
		return false;
	unsafe_get_user(*va, pa, fault);
	unsafe_get_user(*vb, pb, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

#endif
