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

/*
 * The rule of address @next in process @proc: this CPU's cached one, else
 * looked up in the table of the mapping it is in (*@map: the last mapping
 * found, kept across a walk) and cached. NULL: no rule (frame pointers).
 */
static __always_inline const struct hotstack_unwind_rule *
hs_urule(const struct hotstack_session *s, struct hs_slot *slot, const struct hs_uproc *proc,
	 const struct hs_umap **map, unsigned long next)
{
	struct hs_urc *e = hs_urc_slot(slot->urc, next);
	const struct hotstack_unwind_rule *r = hs_urc_get(e, proc->serial, next);
	const struct hs_umap *m = *map;

	if (r)
		return r;
	if (!m || next < m->start || next >= m->end)
		*map = m = hs_umap_find(proc->maps, proc->nr, next);
	if (m && m->tab) {
		r = hs_utab_find(m->tab, next - m->bias);
		if (r)
			hs_urc_put(e, proc->serial, next, r);
	} else if (!m && !READ_ONCE(proc->missed) && !xchg((u32 *)&proc->missed, 1)) {
		hs_uw_want(s);
	}
	return r;
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
	unsigned long pc, sp, fp, lr, cfa, ra = 0, next;
	const struct hotstack_unwind_rule *r;
	const struct hs_umap *map = NULL;
	const struct hs_uproc *proc;
	/* How the walk ended: HS_UWC_NR, cut at max_depth (counted as truncated). */
	unsigned int steps = 0, counter = HS_UWC_COMPLETE, ntab = 0, nfp = 0;
	bool first = true, read = false, ok;

	regs = hs_user_regs(regs);
	if (!regs)
		return;
	hs_uw_start(regs, &pc, &sp, &fp, &lr);
	if (!hs_walk_push(w, pc, collapse) || !hs_uw_64bit(regs))
		return;
	slot->uw[HS_UWC_WALKS]++;
	proc = hs_uproc_find(s->uw, current->mm);
	if (!proc) {
		slot->uw[HS_UWC_NO_MAPS]++;
		hs_uw_want(s);
	}
	pagefault_disable();
	for (;;) {
		/* Every step keeps a frame or ends the walk, but for collapse. */
		if (collapse && ++steps > hs_walk_steps(w)) {
			w->truncated = true;
			counter = HS_UWC_NR;
			break;
		}
		/* A return address is looked up as its call: the address before. */
		next = first ? pc : pc - 1;
		r = proc ? hs_urule(s, slot, proc, &map, next) : NULL;
		if (!r || r->kind == HOTSTACK_UW_NONE) {
			/* No rule: the frame record at the frame pointer. */
			if (!fp)
				break;
			if (fp < sp || (fp & (sizeof(long) - 1))) {
				counter = HS_UWC_STOP + HOTSTACK_UWS_FP;
				break;
			}
			if (!hs_uw_get2(fp, &next, fp + 8, &ra, !read)) {
				counter = HS_UWC_STOP + HOTSTACK_UWS_FAULT;
				break;
			}
			read = true;
			sp = fp + 16;
			fp = next;
			nfp++;
		} else {
			/* The commonest kind tested first. */
			switch (__builtin_expect(r->kind, HOTSTACK_UW_CFA_SP)) {
			case HOTSTACK_UW_CFA_SP:
				cfa = sp + r->cfa_off;
				break;
			case HOTSTACK_UW_CFA_FP:
				cfa = fp + r->cfa_off;
				break;
			case HOTSTACK_UW_PLT:
				cfa = sp + 8 + ((pc & 15) >= r->cfa_off ? 8 : 0);
				break;
			case HOTSTACK_UW_END:
				goto out;
			case HOTSTACK_UW_SIGNAL:
				/*
				 * The code the signal interrupted: its registers as
				 * the kernel saved them. No order between its stack
				 * and the handler's (an alternate signal stack): a
				 * frame kept each, or the walk ends.
				 */
				if (!hs_uw_get(sp + HS_UW_SIG_PC, &ra, !read) ||
				    !hs_uw_get(sp + HS_UW_SIG_FP, &fp, false) ||
				    (HS_UW_SIG_LR && !hs_uw_get(sp + HS_UW_SIG_LR, &lr, false)) ||
				    !hs_uw_get(sp + HS_UW_SIG_SP, &sp, false)) {
					counter = HS_UWC_STOP + HOTSTACK_UWS_SIGNAL;
					goto out;
				}
				read = true;
				ntab++;
				pc = ra;
				/* An interrupted instruction, not a return address. */
				first = true;
				if (!pc || !hs_walk_push(w, pc, collapse)) {
					counter = pc ? HS_UWC_NR : HS_UWC_COMPLETE;
					goto out;
				}
				continue;
			default:
				counter = HS_UWC_STOP + HOTSTACK_UWS_EXPR;
				goto out;
			}
			/*
			 * Each caller's frame above the one before: no loop. An
			 * arm64 leaf that made no frame has its CFA at the stack
			 * pointer, its return address in the link register: the
			 * first frame's alone (a later one stops, below).
			 */
			if (cfa < sp || (cfa == sp && (r->flags & HOTSTACK_UWF_RA_SAVED)) ||
			    (cfa & (sizeof(long) - 1))) {
				counter = HS_UWC_STOP + HOTSTACK_UWS_STACK;
				break;
			}
			/*
			 * The frame's saved words, both in one access where two
			 * (the commonest, x86_64's return address alone, first).
			 */
			switch (__builtin_expect(r->flags & (HOTSTACK_UWF_RA_SAVED |
							     HOTSTACK_UWF_FP_SAVED),
						 HOTSTACK_UWF_RA_SAVED)) {
			case HOTSTACK_UWF_RA_SAVED:
				ok = hs_uw_get(cfa + r->ra_off, &ra, !read);
				break;
			case HOTSTACK_UWF_RA_SAVED | HOTSTACK_UWF_FP_SAVED:
				ok = hs_uw_get2(cfa + r->ra_off, &ra, cfa + r->fp_off, &fp, !read);
				break;
			default:
				/* arm64: a leaf's return address is in the link register. */
				if (!first) {
					counter = HS_UWC_STOP + HOTSTACK_UWS_LINK;
					goto out;
				}
				ra = lr;
				ok = !(r->flags & HOTSTACK_UWF_FP_SAVED) ||
				     hs_uw_get(cfa + r->fp_off, &fp, !read);
			}
			if (!ok) {
				counter = HS_UWC_STOP + HOTSTACK_UWS_FAULT;
				break;
			}
			read = true;
			sp = cfa;
			ntab++;
		}
		pc = hs_uw_ret(ra);
		first = false;
		if (!pc)
			break;
		if (!hs_walk_push(w, pc, collapse)) {
			counter = HS_UWC_NR;
			break;
		}
	}
out:
	pagefault_enable();
	slot->uw[HS_UWC_TABLE] += ntab;
	slot->uw[HS_UWC_FP] += nfp;
	if (counter < HS_UWC_NR)
		slot->uw[counter]++;
	if (counter == HS_UWC_STOP + HOTSTACK_UWS_FAULT)
		w->fault = true;
}

#endif
