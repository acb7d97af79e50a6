// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: user unwind tables and process mappings (HOTSTACK_IOC_ADD_TABLE,
 * _SET_MAPS, _UNWIND_MISSES), which the sampler's user walk reads
 * (uwalk.h).
 *
 * A session's tables live until its file is closed. Its processes are an
 * open-addressing set of struct hs_uproc keyed by address space, published
 * with RCU: the sampler (NMI and hardirq included: RCU readers) finds the
 * current task's by its mm, without a lock; an entry replaced or dropped
 * waits on the session's dead list for a grace period (polled, so that no
 * ioctl waits for one), and is freed by a later call or at close. An entry
 * holds its mm (mmgrab: the struct, not the address space) so that a new
 * mm can never have its address. Writers hold the session's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "hotstack.h"

atomic64_t hotstack_unwind_memory = ATOMIC64_INIT(0);

/* The last process entry's serial (hs_uproc.serial), of every session. */
static atomic64_t hs_uproc_serial = ATOMIC64_INIT(0);

/* Slots of a new process set; it doubles when half full. */
#define HS_UPROCS_MIN_BITS	10
#define HS_UPROCS_MAX_BITS	20

/* Pids one UNWIND_MISSES call takes at most. */
#define HS_UW_MAX_MISSES	4096

static void hs_uw_wake(struct irq_work *work)
{
	wake_up_interruptible(&container_of(work, struct hs_unwind, wake)->wait);
}

int hotstack_unwind_init(struct hotstack_session *s)
{
	s->uw = kzalloc(sizeof(*s->uw), GFP_KERNEL_ACCOUNT);
	if (!s->uw)
		return -ENOMEM;
	INIT_LIST_HEAD(&s->uw->dead);
	init_waitqueue_head(&s->uw->wait);
	init_irq_work(&s->uw->wake, hs_uw_wake);
	return 0;
}

/* Whether UNWIND_MISSES has something to say. */
static bool hs_uw_pending(struct hs_unwind *u)
{
	unsigned int i;

	for (i = 0; i < HS_UW_MISSES; i++)
		if (READ_ONCE(u->misses[i]))
			return true;
	return atomic64_read(&u->misses_lost);
}

__poll_t hotstack_unwind_poll(struct hotstack_session *s, struct file *file, poll_table *pt)
{
	poll_wait(file, &s->uw->wait, pt);
	/* read() never blocks: always readable. */
	return EPOLLIN | EPOLLRDNORM | (hs_uw_pending(s->uw) ? EPOLLPRI : 0);
}

/* Whether @bytes more fit the session's cap (unwind_mb, else the module's): 0 or -ENOSPC. */
static int hs_uw_fits(struct hotstack_session *s, u64 bytes)
{
	u64 max = (u64)hotstack_max_unwind_mb << 20;
	u64 cap = s->cfg.unwind_mb ? min((u64)s->cfg.unwind_mb << 20, max) : max;

	lockdep_assert_held(&s->lock);
	return bytes > cap - min(cap, s->uw->bytes) ? -ENOSPC : 0;
}

/*
 * Hold @bytes of @s's unwind memory: the session's cap, the module's, and
 * a delegated user's quota. 0, -ENOSPC or -EDQUOT.
 */
static int hs_uw_reserve(struct hotstack_session *s, u64 bytes)
{
	u64 max = (u64)hotstack_max_unwind_mb << 20;
	int ret;

	ret = hs_uw_fits(s, bytes);
	if (ret)
		return ret;
	if (atomic64_add_return(bytes, &hotstack_unwind_memory) > max) {
		atomic64_sub(bytes, &hotstack_unwind_memory);
		return -ENOSPC;
	}
	ret = hotstack_user_reserve(s->user, bytes);
	if (ret) {
		atomic64_sub(bytes, &hotstack_unwind_memory);
		return ret;
	}
	s->uw->bytes += bytes;
	return 0;
}

static void hs_uw_unreserve(struct hotstack_session *s, u64 bytes)
{
	atomic64_sub(bytes, &hotstack_unwind_memory);
	hotstack_user_unreserve(s->user, bytes);
	s->uw->bytes -= bytes;
}

/* The set of @s's processes, to its writers (who hold the session's lock). */
static struct hs_uprocs *hs_uprocs(struct hotstack_session *s)
{
	return rcu_dereference_protected(s->uw->procs, lockdep_is_held(&s->lock));
}

/* Slot @i of @set, to its writers. */
static struct hs_uproc *hs_uproc_at(const struct hs_uprocs *set, u32 i)
{
	return rcu_dereference_protected(set->slot[i], true);
}

/* Tables and mappings: a session configured for them. */
static int hs_uw_ready(struct hotstack_session *s)
{
	lockdep_assert_held(&s->lock);
	if (s->state == HOTSTACK_STATE_NEW || !(s->cfg.flags & HOTSTACK_CFG_USER_TABLES))
		return -EINVAL;
	return 0;
}

/* Whether every rule of @rules[@nr] is one this architecture can walk by. */
static bool hs_urules_valid(const struct hotstack_unwind_rule *rules, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (!hs_urule_valid(&rules[i], IS_ENABLED(CONFIG_X86_64)))
			return false;
	return true;
}

long hotstack_ioc_add_table(struct hotstack_session *s, void __user *uarg)
{
	struct hotstack_unwind_table a;
	struct hotstack_unwind_rule *rules = NULL;
	struct hotstack_unwind_row *rows = NULL;
	struct hs_utab *t = NULL, **tabs;
	u32 pages, shift;
	u64 size;
	int usize;
	long ret;

	usize = hotstack_copy_in(&a, sizeof(a), HOTSTACK_UNWIND_TABLE_SIZE_VER0, uarg);
	if (usize < 0)
		return usize;
	if (a.flags || a.pad || a.reserved[0] || a.reserved[1] || !a.nr_rows ||
	    a.nr_rows > HOTSTACK_UW_MAX_ROWS || !a.nr_rules || a.nr_rules > HOTSTACK_UW_MAX_RULES)
		return -EINVAL;
	/* Not for this session, or too large for it: refused before it is copied in. */
	mutex_lock(&s->lock);
	ret = hs_uw_ready(s) ?: hs_uw_fits(s, hs_utab_size(a.nr_rows, a.nr_rules, 0));
	mutex_unlock(&s->lock);
	if (ret)
		return ret;
	rules = vmemdup_user(u64_to_user_ptr(a.rules_ptr), (size_t)a.nr_rules * sizeof(*rules));
	if (IS_ERR(rules))
		return PTR_ERR(rules);
	rows = vmemdup_user(u64_to_user_ptr(a.rows_ptr), (size_t)a.nr_rows * sizeof(*rows));
	if (IS_ERR(rows)) {
		ret = PTR_ERR(rows);
		rows = NULL;
		goto out;
	}
	pages = hs_utab_pages(rows, a.nr_rows, a.nr_rules, &shift);
	ret = -EINVAL;
	if (!pages || !hs_urules_valid(rules, a.nr_rules))
		goto out;
	size = hs_utab_size(a.nr_rows, a.nr_rules, pages);
	ret = -ENOMEM;
	t = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!t)
		goto out;
	hs_utab_build(t, rows, a.nr_rows, rules, a.nr_rules, pages, shift);

	mutex_lock(&s->lock);
	ret = hs_uw_ready(s);
	if (!ret && s->uw->nr_tabs == s->uw->cap_tabs) {
		u32 cap = s->uw->cap_tabs ? 2 * s->uw->cap_tabs : 16;

		tabs = krealloc_array(s->uw->tabs, cap, sizeof(*tabs), GFP_KERNEL_ACCOUNT);
		if (tabs) {
			s->uw->tabs = tabs;
			s->uw->cap_tabs = cap;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ret = hs_uw_reserve(s, t->bytes);
	if (!ret) {
		s->uw->tabs[s->uw->nr_tabs++] = t;
		t->id = s->uw->nr_tabs;
		a.id = t->id;
		a.bytes = t->bytes;
		t = NULL;
	}
	mutex_unlock(&s->lock);
	if (!ret)
		ret = hotstack_copy_out(uarg, &a, sizeof(a), usize);
out:
	kvfree(t);
	kvfree(rows);
	kvfree(rules);
	return ret;
}

/* Free a process entry nothing can read any more. */
static void hs_uproc_free(struct hs_uproc *p)
{
	mmdrop(p->mm);
	put_pid(p->pid);
	kfree(p);
}

/* Free the dead entries whose grace period is over (all: @all, after one). */
static void hs_uw_reap(struct hotstack_session *s, bool all)
{
	struct hs_uproc *p, *n;

	list_for_each_entry_safe(p, n, &s->uw->dead, dead) {
		/* In the order they died: the first still waiting ends it. */
		if (!all && !poll_state_synchronize_rcu(p->gp))
			break;
		list_del(&p->dead);
		hs_uw_unreserve(s, p->bytes);
		hs_uproc_free(p);
	}
}

/*
 * Put @new (NULL: none, the slot's process dropped) in slot @i of the set
 * in place of its process, which readers may still see: it waits for
 * them on the dead list.
 */
static void hs_uproc_replace(struct hotstack_session *s, struct hs_uprocs *set, u32 i,
			     struct hs_uproc *new)
{
	struct hs_uproc *p = hs_uproc_at(set, i);

	if (new) {
		rcu_assign_pointer(set->slot[i], new);
	} else {
		rcu_assign_pointer(set->slot[i], HS_UPROC_GONE);
		set->live--;
	}
	p->gp = get_state_synchronize_rcu();
	list_add_tail(&p->dead, &s->uw->dead);
}

/* Drop the processes that have exited (their address space is gone). */
static void hs_uw_sweep(struct hotstack_session *s)
{
	struct hs_uprocs *set = hs_uprocs(s);
	u32 i;

	for (i = 0; set && i <= set->mask; i++) {
		struct hs_uproc *p = hs_uproc_at(set, i);

		if (p && p != HS_UPROC_GONE && !atomic_read(&p->mm->mm_users))
			hs_uproc_replace(s, set, i, NULL);
	}
}

/*
 * The set of @s's processes with room for one more (made, or made again
 * without its gone slots, twice as large when half of it is live), or
 * NULL: no memory, or the limits.
 */
static struct hs_uprocs *hs_uprocs_room(struct hotstack_session *s, int *err)
{
	struct hs_uprocs *old = hs_uprocs(s), *set;
	unsigned int bits = HS_UPROCS_MIN_BITS;
	u64 size;
	u32 i, j;

	if (old && (old->used + 1) * 2 <= old->mask + 1)
		return old;
	if (old)
		bits = old->bits + ((old->live + 1) * 2 > old->mask + 1);
	if (bits > HS_UPROCS_MAX_BITS) {
		*err = -ENOSPC;
		return NULL;
	}
	size = struct_size(set, slot, 1UL << bits);
	*err = hs_uw_reserve(s, size);
	if (*err)
		return NULL;
	set = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!set) {
		hs_uw_unreserve(s, size);
		*err = -ENOMEM;
		return NULL;
	}
	set->bits = bits;
	set->mask = (1U << bits) - 1;
	set->bytes = size;
	for (i = 0; old && i <= old->mask; i++) {
		struct hs_uproc *p = hs_uproc_at(old, i);

		if (!p || p == HS_UPROC_GONE)
			continue;
		for (j = hash_ptr(p->mm, bits); hs_uproc_at(set, j); j = (j + 1) & set->mask)
			;
		RCU_INIT_POINTER(set->slot[j], p);
		set->used++;
		set->live++;
	}
	rcu_assign_pointer(s->uw->procs, set);
	if (old) {
		/* Rare (the set doubles, or is cleaned): wait for its readers here. */
		synchronize_rcu();
		hs_uw_unreserve(s, old->bytes);
		kvfree(old);
	}
	return set;
}

/*
 * Put @p in the set, in place of the entry of its address space if there
 * is one (a lookup sees one or the other); a lookup of a key goes at
 * most HS_UPROC_PROBES slots from its hash, so it is placed within them.
 */
static int hs_uproc_insert(struct hotstack_session *s, struct hs_uproc *p)
{
	struct hs_uprocs *set;
	u32 i, n, free = U32_MAX;
	int err = 0;

	set = hs_uprocs_room(s, &err);
	if (!set)
		return err;
	for (i = hash_ptr(p->mm, set->bits), n = 0; n < HS_UPROC_PROBES;
	     n++, i = (i + 1) & set->mask) {
		struct hs_uproc *q = hs_uproc_at(set, i);

		if (q && q != HS_UPROC_GONE && q->mm == p->mm) {
			hs_uproc_replace(s, set, i, p);
			return 0;
		}
		if (q == HS_UPROC_GONE && free == U32_MAX)
			free = i;
		if (!q) {
			if (free == U32_MAX) {
				free = i;
				set->used++;
			}
			break;
		}
	}
	if (free == U32_MAX)
		return -ENOSPC;
	set->live++;
	rcu_assign_pointer(set->slot[free], p);
	return 0;
}

/*
 * Check @maps[@nr] against @mm as it is now: each one whole executable
 * mapping of it. 0, -ESTALE or -EINTR.
 */
static int hs_umaps_check(struct mm_struct *mm, const struct hotstack_unwind_map *maps, u32 nr)
{
	struct vm_area_struct *vma;
	int ret = 0;
	u32 i;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	for (i = 0; i < nr && !ret; i++) {
		vma = vma_lookup(mm, maps[i].start);
		if (!vma || vma->vm_start != maps[i].start || vma->vm_end != maps[i].end ||
		    !(vma->vm_flags & VM_EXEC))
			ret = -ESTALE;
	}
	mmap_read_unlock(mm);
	return ret;
}

/* The fields of @maps[@nr] alone: in order, not overlapping, pads 0. */
static bool hs_umaps_valid(const struct hotstack_unwind_map *maps, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (maps[i].pad || maps[i].start >= maps[i].end ||
		    (i && maps[i].start < maps[i - 1].end))
			return false;
	}
	return true;
}

/* Drop every entry of process @pid (its address spaces). */
static void hs_uproc_remove(struct hotstack_session *s, struct pid *pid)
{
	struct hs_uprocs *set = hs_uprocs(s);
	u32 i;

	for (i = 0; set && i <= set->mask; i++) {
		struct hs_uproc *p = hs_uproc_at(set, i);

		if (p && p != HS_UPROC_GONE && p->pid == pid)
			hs_uproc_replace(s, set, i, NULL);
	}
}

long hotstack_ioc_set_maps(struct hotstack_session *s, void __user *uarg)
{
	struct hotstack_unwind_map *maps = NULL;
	struct hotstack_unwind_maps a;
	struct task_struct *task = NULL;
	struct mm_struct *mm = NULL;
	struct hs_uproc *p = NULL;
	struct pid *pid;
	int usize;
	long ret;
	u32 i;

	usize = hotstack_copy_in(&a, sizeof(a), HOTSTACK_UNWIND_MAPS_SIZE_VER0, uarg);
	if (usize < 0)
		return usize;
	if ((a.flags & ~HOTSTACK_MAPS_ALL) || a.reserved || !a.pid || a.pid > PID_MAX_LIMIT ||
	    a.nr_maps > HOTSTACK_UW_MAX_MAPS || !a.nr_maps != !a.maps_ptr ||
	    ((a.flags & HOTSTACK_MAPS_REMOVE) && a.nr_maps))
		return -EINVAL;
	if (a.nr_maps) {
		maps = memdup_user(u64_to_user_ptr(a.maps_ptr), a.nr_maps * sizeof(*maps));
		if (IS_ERR(maps))
			return PTR_ERR(maps);
		ret = -EINVAL;
		if (!hs_umaps_valid(maps, a.nr_maps))
			goto out;
	}
	rcu_read_lock();
	pid = get_pid(find_pid_ns(a.pid, s->pid_ns));
	rcu_read_unlock();
	ret = -ESRCH;
	if (!pid)
		goto out;
	if (a.flags & HOTSTACK_MAPS_REMOVE)
		goto locked;
	task = get_pid_task(pid, PIDTYPE_TGID);
	mm = task ? get_task_mm(task) : NULL;
	if (!mm)
		goto out_pid;
	/* A delegated user: only processes whose stacks it may read. */
	if (!perfmon_capable()) {
		bool ok;

		rcu_read_lock();
		ok = hs_creds_readable(current_cred(), __task_cred(task)) &&
		     hs_task_dumpable(task);
		rcu_read_unlock();
		ret = -EPERM;
		if (!ok)
			goto out_pid;
	}
	/* Before the session's lock, which mmap() takes under mmap_lock. */
	ret = hs_umaps_check(mm, maps, a.nr_maps);
	if (ret)
		goto out_pid;
	ret = -ENOMEM;
	p = kzalloc(struct_size(p, maps, a.nr_maps), GFP_KERNEL_ACCOUNT);
	if (!p)
		goto out_pid;
	p->bytes = struct_size(p, maps, a.nr_maps);
	p->nr = a.nr_maps;
	p->serial = atomic64_inc_return(&hs_uproc_serial);
	p->pid = get_pid(pid);
	mmgrab(mm);
	p->mm = mm;
	for (i = 0; i < a.nr_maps; i++) {
		p->maps[i].start = maps[i].start;
		p->maps[i].end = maps[i].end;
		p->maps[i].bias = maps[i].bias;
	}
locked:
	mutex_lock(&s->lock);
	ret = hs_uw_ready(s);
	if (ret)
		goto unlock;
	hs_uw_reap(s, false);
	if (!p) {
		hs_uproc_remove(s, pid);
		goto unlock;
	}
	for (i = 0; i < p->nr; i++) {
		u32 id = maps[i].table;

		if (id > s->uw->nr_tabs) {
			ret = -EINVAL;
			goto unlock;
		}
		p->maps[i].tab = id ? s->uw->tabs[id - 1] : NULL;
	}
	ret = hs_uw_reserve(s, p->bytes);
	if (ret)
		goto unlock;
	ret = hs_uproc_insert(s, p);
	if (ret)
		hs_uw_unreserve(s, p->bytes);
	else
		p = NULL;
unlock:
	mutex_unlock(&s->lock);
	if (p)
		hs_uproc_free(p);
out_pid:
	if (mm)
		mmput(mm);
	if (task)
		put_task_struct(task);
	put_pid(pid);
out:
	kfree(maps);
	return ret;
}

long hotstack_ioc_unwind_misses(struct hotstack_session *s, void __user *uarg)
{
	struct hotstack_unwind_misses a;
	u32 *pids, nr = 0, i, j;
	int usize;
	long ret;

	usize = hotstack_copy_in(&a, sizeof(a), HOTSTACK_UNWIND_MISSES_SIZE_VER0, uarg);
	if (usize < 0)
		return usize;
	if (a.flags || a.pad || a.reserved || !a.nr || a.nr > HS_UW_MAX_MISSES || !a.pids_ptr)
		return -EINVAL;
	pids = kcalloc(HS_UW_MISSES, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return -ENOMEM;
	mutex_lock(&s->lock);
	ret = hs_uw_ready(s);
	if (!ret) {
		/* Each once: two CPUs may have put one in two places. */
		for (i = 0; i < HS_UW_MISSES && nr < a.nr; i++) {
			u32 pid = READ_ONCE(s->uw->misses[i]);

			if (!pid)
				continue;
			xchg(&s->uw->misses[i], 0);
			for (j = 0; j < nr && pids[j] != pid; j++)
				;
			if (j == nr)
				pids[nr++] = pid;
		}
		a.lost = atomic64_xchg(&s->uw->misses_lost, 0);
		hs_uw_sweep(s);
		hs_uw_reap(s, false);
	}
	mutex_unlock(&s->lock);
	a.nr = nr;
	if (!ret && copy_to_user(u64_to_user_ptr(a.pids_ptr), pids, nr * sizeof(*pids)))
		ret = -EFAULT;
	kfree(pids);
	return ret ?: hotstack_copy_out(uarg, &a, sizeof(a), usize);
}

/**
 * hotstack_unwind_miss - a process the sampler found no mapping for
 * @u: the session's unwind state
 * @tgid: the process, as the opener's pid namespace numbers it (0: none)
 *
 * Into the set UNWIND_MISSES drains, unless there already; counted lost
 * when the set is full. Called from NMI or hardirq context.
 */
void hotstack_unwind_miss(struct hs_unwind *u, u32 tgid)
{
	unsigned int i;

	if (!tgid)
		return;
	atomic64_inc(&u->misses_total);
	for (i = 0; i < HS_UW_MISSES; i++) {
		u32 v = READ_ONCE(u->misses[i]);

		/* A failed cmpxchg leaves in @v what another CPU put there. */
		if (!v && try_cmpxchg(&u->misses[i], &v, tgid)) {
			irq_work_queue(&u->wake);
			return;
		}
		if (v == tgid)
			return;
	}
	atomic64_inc(&u->misses_lost);
}

void hotstack_unwind_stats(struct hotstack_session *s, struct hotstack_stats *st)
{
	struct hs_uprocs *set = hs_uprocs(s);
	unsigned int i, j;

	lockdep_assert_held(&s->lock);
	st->uw_walks = 0;
	st->uw_complete = 0;
	st->uw_no_maps = 0;
	st->uw_table_frames = 0;
	st->uw_fp_frames = 0;
	memset(st->uw_stops, 0, sizeof(st->uw_stops));
	for (i = 0; i < s->tabs.nr_slots && s->state != HOTSTACK_STATE_NEW; i++) {
		const u64 *c = s->tabs.slots[i].uw;

		st->uw_walks += c[HS_UWC_WALKS];
		st->uw_complete += c[HS_UWC_COMPLETE];
		st->uw_no_maps += c[HS_UWC_NO_MAPS];
		st->uw_table_frames += c[HS_UWC_TABLE];
		st->uw_fp_frames += c[HS_UWC_FP];
		for (j = 0; j < HOTSTACK_UWS_MAX; j++)
			st->uw_stops[j] += c[HS_UWC_STOP + j];
	}
	st->uw_tables = s->uw->nr_tabs;
	st->uw_procs = set ? set->live : 0;
	st->uw_bytes = s->uw->bytes;
	st->uw_misses = atomic64_read(&s->uw->misses_total);
	st->uw_misses_lost = atomic64_read(&s->uw->misses_lost);
}

/* Free everything: no sampler can run any more (the session is stopped). */
void hotstack_unwind_free(struct hotstack_session *s)
{
	struct hs_unwind *u = s->uw;
	struct hs_uprocs *set;
	u32 i;

	if (!u)
		return;
	irq_work_sync(&u->wake);
	set = hs_uprocs(s);
	if (set || u->nr_tabs)
		synchronize_rcu();
	for (i = 0; set && i <= set->mask; i++) {
		struct hs_uproc *p = hs_uproc_at(set, i);

		if (p && p != HS_UPROC_GONE) {
			hs_uw_unreserve(s, p->bytes);
			hs_uproc_free(p);
		}
	}
	hs_uw_reap(s, true);
	if (set) {
		hs_uw_unreserve(s, set->bytes);
		kvfree(set);
	}
	for (i = 0; i < u->nr_tabs; i++) {
		hs_uw_unreserve(s, u->tabs[i]->bytes);
		kvfree(u->tabs[i]);
	}
	kfree(u->tabs);
	WARN_ON_ONCE(u->bytes);
	kfree(u);
	s->uw = NULL;
}
