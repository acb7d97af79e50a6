/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: the user walk by unwind tables (HOTSTACK_CFG_USER_TABLES), for
 * both architectures: each frame's rule from the table of the mapping its
 * address is in (uwtab.h), frame pointers where none covers it. The
 * architecture gives the registers a walk starts from, the reads of user
 * memory and the return addresses' fix-up (unwind_<arch>.h).
 *
 * Inline in the sample path (sample.c, its only user). Called from NMI or
 * hardirq context: every read is fault-safe, every loop bounded.
 */
#ifndef _HOTSTACK_UWALK_H
#define _HOTSTACK_UWALK_H

#include <linux/hash.h>
#include <linux/mm_types.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "hotstack.h"

/*
 * The process entry of address space @mm in @u, or NULL. The set and its
 * entries are RCU's, and the sampler an RCU reader (NMI included) that
 * lockdep cannot see as one: raw dereferences.
 */
static __always_inline const struct hs_uproc *hs_uproc_find(const struct hs_unwind *u,
							    const struct mm_struct *mm)
{
	const struct hs_uprocs *set = rcu_dereference_raw(u->procs);
	u32 i, n;

	if (!set)
		return NULL;
	for (i = hash_ptr(mm, set->bits), n = 0; n < HS_UPROC_PROBES;
	     n++, i = (i + 1) & set->mask) {
		const struct hs_uproc *p = rcu_dereference_raw(set->slot[i]);

		if (!p)
			return NULL;
		if (p != HS_UPROC_GONE && p->mm == mm)
			return p;
	}
	return NULL;
}

/* The current process wants mappings: tell the tool (UNWIND_MISSES). */
static __always_inline void hs_uw_want(const struct hotstack_session *s)
{
	hotstack_unwind_miss(s->uw, task_tgid_nr_ns(current, s->pid_ns));
}

/* What a walk uses where no rule holds: the frame record at the frame pointer. */
static const struct hotstack_unwind_rule hs_urule_none = { .kind = HOTSTACK_UW_NONE };

/*
 * The rule of address @next in process @proc: this CPU's cached one, else
 * looked up in the table of the mapping it is in (*@map: the last mapping
 * found, kept across a walk) and cached; &hs_urule_none where none holds.
 */
static __always_inline const struct hotstack_unwind_rule *
hs_urule(const struct hotstack_session *s, struct hs_slot *slot, const struct hs_uproc *proc,
	 const struct hs_umap **map, unsigned long next)
{
	struct hs_urc *e = hs_urc_slot(slot->urc, next);
	const struct hotstack_unwind_rule *r;
	const struct hs_umap *m = *map;

	/* A cached rule is never NULL. */
	if (hs_urc_hit(e, proc->serial, next))
		return e->rule;
	if (!m || next < m->start || next >= m->end)
		*map = m = hs_umap_find(proc->maps, proc->nr, next);
	if (m && m->tab) {
		r = hs_utab_find(m->tab, next - m->bias);
		if (r) {
			hs_urc_put(e, proc->serial, next, r);
			return r;
		}
	} else if (!m && !READ_ONCE(proc->missed) && !xchg((u32 *)&proc->missed, 1)) {
		hs_uw_want(s);
	}
	return &hs_urule_none;
}

/*
 * A user walk's registers, as each step leaves them.
 * @pc:		the frame's address (pushed)
 * @next:	the address its rule is looked up at: @pc for the interrupted
 *		instruction (the first frame, a signal's), else a return
 *		address's call, the address before
 * @sp, @fp, @lr: the frame's stack pointer, frame pointer, link register
 * @steps:	steps taken (collapsed sessions: bounded by hs_walk_steps())
 * @ntab, @nfp:	frames walked by tables and by frame pointers
 */
struct hs_uregs {
	unsigned long pc, next, sp, fp, lr;
	unsigned int steps, ntab, nfp;
};

/* A step of the walk ended: on to the next frame (else a uw[] counter, HS_UWC_NR: none). */
#define HS_UW_ON	(HS_UWC_NR + 1)

/* The caller's frame at return address @ra: pushed, or the walk's end. */
static __always_inline unsigned int hs_uw_caller(struct hs_walk *w, struct hs_uregs *u,
						 unsigned long ra, const bool collapse)
{
	u->pc = hs_uw_ret(ra);
	u->next = u->pc - 1;
	if (!u->pc)
		return HS_UWC_COMPLETE;
	return hs_walk_push(w, u->pc, collapse) ? HS_UW_ON : HS_UWC_NR;
}

/* A frame walked by its rule: @cfa is the caller's stack pointer, @ra its return address. */
static __always_inline unsigned int hs_uw_by_rule(struct hs_walk *w, struct hs_uregs *u,
						  unsigned long cfa, unsigned long ra,
						  const bool collapse)
{
	u->sp = cfa;
	u->ntab++;
	return hs_uw_caller(w, u, ra, collapse);
}

/*
 * One step of the walk in @u, from its frame to its caller's: HS_UW_ON, or
 * how the walk ended.
 */
static __always_inline unsigned int hs_uw_step(const struct hotstack_session *s,
					       struct hs_slot *slot, struct hs_walk *w,
					       const struct hs_uproc *proc,
					       const struct hs_umap **map, struct hs_uregs *u,
					       const bool collapse)
{
	const struct hotstack_unwind_rule *r;
	unsigned long cfa, ra, next, fp, lr;
	bool ok;

	/* Every step keeps a frame or ends the walk, but for collapse. */
	if (collapse && ++u->steps > hs_walk_steps(w)) {
		w->truncated = true;
		return HS_UWC_NR;
	}
	r = proc ? hs_urule(s, slot, proc, map, u->next) : &hs_urule_none;
	/* The commonest kind tested first (x86_64's without frame pointers). */
	switch (__builtin_expect(r->kind, HS_UW_SP_RA)) {
	case HOTSTACK_UW_CFA_SP:
		cfa = u->sp + r->cfa_off;
		break;
	case HOTSTACK_UW_CFA_FP:
		cfa = u->fp + r->cfa_off;
		break;
	case HOTSTACK_UW_PLT:
		cfa = u->sp + 8 + ((u->pc & 15) >= r->cfa_off ? 8 : 0);
		break;
	case HS_UW_SP_RA:
		/* The CFA_SP case below, in short: RA_SAVED, cfa_off > 0. */
		cfa = u->sp + r->cfa_off;
		if (cfa <= u->sp || (cfa & (sizeof(long) - 1)))
			return HS_UWC_STOP + HOTSTACK_UWS_STACK;
		if (!hs_uw_get(cfa + r->ra_off, &ra))
			return HS_UWC_STOP + HOTSTACK_UWS_FAULT;
		return hs_uw_by_rule(w, u, cfa, ra, collapse);
	case HS_UW_RECORD:
		/* A frame record's rule: the CFA_FP case below, in short. */
		cfa = u->fp + 16;
		if (cfa <= u->sp || (cfa & (sizeof(long) - 1)))
			return HS_UWC_STOP + HOTSTACK_UWS_STACK;
		if (!hs_uw_record(u->fp, &next, &ra))
			return HS_UWC_STOP + HOTSTACK_UWS_FAULT;
		u->fp = next;
		return hs_uw_by_rule(w, u, cfa, ra, collapse);
	case HOTSTACK_UW_NONE:
		/* No rule: the frame record at the frame pointer. */
		if (!u->fp)
			return HS_UWC_COMPLETE;
		if (u->fp < u->sp || (u->fp & (sizeof(long) - 1)))
			return HS_UWC_STOP + HOTSTACK_UWS_FP;
		if (!hs_uw_record(u->fp, &next, &ra))
			return HS_UWC_STOP + HOTSTACK_UWS_FAULT;
		u->sp = u->fp + 16;
		u->fp = next;
		u->nfp++;
		return hs_uw_caller(w, u, ra, collapse);
	case HOTSTACK_UW_END:
		return HS_UWC_COMPLETE;
	case HOTSTACK_UW_SIGNAL:
		/*
		 * The code the signal interrupted: its registers as the kernel
		 * saved them. No order between its stack and the handler's (an
		 * alternate signal stack): a frame kept each, or the walk ends.
		 */
		if (!hs_uw_get(u->sp + HS_UW_SIG_PC, &ra) ||
		    !hs_uw_get(u->sp + HS_UW_SIG_FP, &fp) ||
		    (HS_UW_SIG_LR && !hs_uw_get(u->sp + HS_UW_SIG_LR, &lr)) ||
		    !hs_uw_get(u->sp + HS_UW_SIG_SP, &next))
			return HS_UWC_STOP + HOTSTACK_UWS_SIGNAL;
		if (HS_UW_SIG_LR)
			u->lr = lr;
		u->sp = next;
		u->fp = fp;
		u->ntab++;
		/* An interrupted instruction, not a return address. */
		u->pc = ra;
		u->next = ra;
		if (!ra)
			return HS_UWC_COMPLETE;
		return hs_walk_push(w, ra, collapse) ? HS_UW_ON : HS_UWC_NR;
	default:
		return HS_UWC_STOP + HOTSTACK_UWS_EXPR;
	}
	/*
	 * Each caller's frame above the one before: no loop. An arm64 leaf
	 * that made no frame has its CFA at the stack pointer, its return
	 * address in the link register: the first frame's alone (a later one
	 * stops, below).
	 */
	if (cfa < u->sp || (cfa == u->sp && (r->flags & HOTSTACK_UWF_RA_SAVED)) ||
	    (cfa & (sizeof(long) - 1)))
		return HS_UWC_STOP + HOTSTACK_UWS_STACK;
	/*
	 * The frame's saved words, both in one access where two (the
	 * commonest, x86_64's return address alone, first).
	 */
	switch (__builtin_expect(r->flags & (HOTSTACK_UWF_RA_SAVED | HOTSTACK_UWF_FP_SAVED),
				 HOTSTACK_UWF_RA_SAVED)) {
	case HOTSTACK_UWF_RA_SAVED:
		ok = hs_uw_get(cfa + r->ra_off, &ra);
		break;
	case HOTSTACK_UWF_RA_SAVED | HOTSTACK_UWF_FP_SAVED:
		ok = hs_uw_get2(cfa + r->ra_off, &ra, cfa + r->fp_off, &fp);
		if (ok)
			u->fp = fp;
		break;
	default:
		/* arm64: a leaf's return address is in the link register. */
		if (u->next != u->pc)
			return HS_UWC_STOP + HOTSTACK_UWS_LINK;
		ra = u->lr;
		ok = true;
		if (!(r->flags & HOTSTACK_UWF_FP_SAVED))
			break;
		ok = hs_uw_get(cfa + r->fp_off, &fp);
		if (ok)
			u->fp = fp;
	}
	if (!ok)
		return HS_UWC_STOP + HOTSTACK_UWS_FAULT;
	return hs_uw_by_rule(w, u, cfa, ra, collapse);
}

/*
 * The user stack of the current task from @regs by the session's tables
 * into @w, counted in @slot's uw[] (each walk ends as complete, truncated,
 * or one stop). @regs: the interrupted ones (user mode or not).
 */
static __always_inline void hs_walk_user_tables(const struct hotstack_session *s,
						struct hs_slot *slot, struct hs_walk *w,
						struct pt_regs *regs, const bool collapse)
{
	const struct hs_umap *map = NULL;
	const struct hs_uproc *proc;
	struct hs_uregs u = {};
	unsigned int end;

	regs = hs_user_regs(regs);
	if (!regs)
		return;
	hs_uw_start(regs, &u.pc, &u.sp, &u.fp, &u.lr);
	u.next = u.pc;
	if (!hs_walk_push(w, u.pc, collapse) || !hs_uw_64bit(regs))
		return;
	slot->uw[HS_UWC_WALKS]++;
	proc = hs_uproc_find(s->uw, current->mm);
	if (!proc) {
		slot->uw[HS_UWC_NO_MAPS]++;
		hs_uw_want(s);
	}
	pagefault_disable();
	if (hs_uw_begin(u.sp))
		do
			end = hs_uw_step(s, slot, w, proc, &map, &u, collapse);
		while (end == HS_UW_ON);
	else
		end = HS_UWC_STOP + HOTSTACK_UWS_FAULT;
	pagefault_enable();
	slot->uw[HS_UWC_TABLE] += u.ntab;
	slot->uw[HS_UWC_FP] += u.nfp;
	if (end < HS_UWC_NR)
		slot->uw[end]++;
	if (end == HS_UWC_STOP + HOTSTACK_UWS_FAULT)
		w->fault = true;
}

#endif
