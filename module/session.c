// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: session lifecycle -- configure (tables), start/stop (the
 * events of perf.c, the off-CPU probe), snapshot/reset (generations),
 * statistics.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/cpu.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "cost.h"
#include "hotstack.h"

atomic64_t hotstack_memory = ATOMIC64_INIT(0);

/* Sessions RUNNING, for the test hook (RCU list; writers hold the mutex). */
static LIST_HEAD(hotstack_running);
static DEFINE_MUTEX(hotstack_running_lock);

/* Bytes in front of a slot's counts: its counters, cache-line padded. */
#define HS_STATS_SIZE	ALIGN(sizeof(struct hotstack_cpu_stats), 64)
/* ... and of a store's stacks: a page (every CPU writes its counters). */
#define HS_STORE_STATS_SIZE	PAGE_SIZE
/* Slots start on their own cache lines (and the adjacent-line prefetch). */
#define HS_SLOT_ALIGN	128

struct hotstack_session *hotstack_session_new(struct pid *owner)
{
	struct hotstack_session *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	if (!zalloc_cpumask_var(&s->cpus, GFP_KERNEL_ACCOUNT) ||
	    !zalloc_cpumask_var(&s->missed, GFP_KERNEL_ACCOUNT) || hotstack_unwind_init(s)) {
		free_cpumask_var(s->missed);
		free_cpumask_var(s->cpus);
		kfree(s);
		return NULL;
	}
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	mutex_init(&s->ev_lock);
	spin_lock_init(&s->hp_lock);
	INIT_WORK(&s->hp_work, hs_hp_work);
	INIT_DELAYED_WORK(&s->budget_work, hs_budget_work);
	INIT_WORK(&s->off_reap, hotstack_off_reap_work);
	INIT_LIST_HEAD(&s->run_node);
	hotstack_events_init(s);
	s->state = HOTSTACK_STATE_NEW;
	s->owner = get_pid(owner);
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	hotstack_session_register(s);
	return s;
}

/* Free tables @t (not in use by a sampler, not mapped), complete or half made. */
static void hs_free_tables(struct hs_tables *t)
{
	size_t i;

	for (i = 0; t->slots && i < t->nr_slots; i++) {
		kfree(t->slots[i].buf);
		kfree(t->slots[i].urc);
	}
	kfree(t->slots);
	kfree(t->store);
	free_percpu(t->slot_of_cpu);
	if (t->buf)
		vunmap(t->buf);
	for (i = 0; t->pages && i < t->size >> PAGE_SHIFT && t->pages[i]; i++)
		__free_page(t->pages[i]);
	kvfree(t->pages);
	kvfree(t->off.keys);
	kvfree(t->off.homes);
	kvfree(t->off_recs);
	kvfree(t->off_procs);
	kvfree(t->wake.keys);
	kvfree(t->wake.homes);
	kvfree(t->wake_recs);
	atomic64_sub(hs_tables_bytes(t), &hotstack_memory);
	hotstack_user_unreserve(t->user, hs_tables_bytes(t));
	memset(t, 0, sizeof(*t));
}

void hs_cgroups_put(struct hs_cgroups *g)
{
	while (g->nr)
		hs_cgroup_put(g->cg[--g->nr]);
}

void hotstack_session_free(struct hotstack_session *s)
{
	hotstack_session_unregister(s);
	mutex_lock(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		hotstack_stop(s);
	hotstack_unwind_free(s);
	hs_free_tables(&s->tabs);
	hotstack_user_rate(s->user, s->user_rate, 0);
	mutex_unlock(&s->lock);
	/* STOP released the events; nothing queues it once stopped. */
	cancel_work_sync(&s->hp_work);
	hotstack_events_flush(s);
	hotstack_event(s, HOTSTACK_EV_CLOSED, 0, -1);
	/* The file is gone: no read() can be running. */
	hotstack_reader_free(&s->reader);
	put_pid(s->pid);
	hs_cgroups_put(&s->cgroups);
	put_pid(s->owner);
	if (s->cred)
		put_cred(s->cred);
	put_pid_ns(s->pid_ns);
	free_cpumask_var(s->missed);
	free_cpumask_var(s->cpus);
	mutex_destroy(&s->ev_lock);
	mutex_destroy(&s->read_lock);
	mutex_destroy(&s->lock);
	kfree(s);
}

/* The mmap header's seqcount: odd while the fields below it change. */
static void hs_hdr_begin(struct hotstack_mmap_header *h)
{
	WRITE_ONCE(h->seq, h->seq + 1);
	smp_wmb();	/* seq odd before the fields; pairs with the reader's rmb */
}

static void hs_hdr_end(struct hotstack_mmap_header *h)
{
	smp_wmb();	/* the fields before seq even; pairs with the reader's rmb */
	WRITE_ONCE(h->seq, h->seq + 1);
}

/* The session's state into the header; between hs_hdr_begin() and _end(). */
static void hs_hdr_fields(struct hotstack_session *s)
{
	struct hotstack_mmap_header *h = s->tabs.hdr;

	WRITE_ONCE(h->state, s->state);
	WRITE_ONCE(h->generation, s->generation);
	WRITE_ONCE(h->active, s->active);
	WRITE_ONCE(h->readable, !s->active);
}

static void hs_hdr_update(struct hotstack_session *s)
{
	hs_hdr_begin(s->tabs.hdr);
	hs_hdr_fields(s);
	hs_hdr_end(s->tabs.hdr);
}

/*
 * The memory node of the CPU whose slot holds byte @off of the buffer
 * (none: the header and the stores, which every CPU reads).
 */
static int hs_page_node(const struct hs_tables *t, size_t hdr_size, size_t store_size,
			size_t slot_size, const unsigned int *slot_cpu, size_t off)
{
	size_t gen_size = store_size + slot_size * t->nr_slots, rel;

	if (off < hdr_size)
		return NUMA_NO_NODE;
	rel = (off - hdr_size) % gen_size;
	if (rel < store_size)
		return NUMA_NO_NODE;
	return cpu_to_node(slot_cpu[(rel - store_size) / slot_size]);
}

/*
 * Lay out and allocate the tables of @c over the CPUs of @mask into @t:
 * pages charged to the caller's memory cgroup, each slot's on its CPU's
 * node, vmap()ed for the sampler and marked for remap_vmalloc_range().
 */
/*
 * HOTSTACK_CFG_WAKERS: places for the wakers of sleepers not yet back on
 * a CPU (woken, on a run queue), one in 16 of the threads timed at once.
 */
static u32 hs_wakers(const struct hotstack_config *c)
{
	return max(c->off_cpu_tasks / 16, 16U);
}

static int hs_alloc_tables(struct hs_tables *t, const struct hotstack_config *c,
			   const struct cpumask *mask, u64 seed, struct hs_user *user)
{
	unsigned int nr_slots = cpumask_weight(mask), i, g;
	size_t hdr_size, store_size, slot_size, size, held, nr_pages, p;
	struct hotstack_mmap_header *h;
	unsigned int *slot_cpu;
	int cpu, ret;

	memset(t, 0, sizeof(*t));
	/* Bounded fields: none of this overflows, but say so. */
	hdr_size = PAGE_ALIGN(struct_size(h, slot_cpu, nr_slots));
	store_size = PAGE_ALIGN(HS_STORE_STATS_SIZE +
				(size_t)c->table_entries * sizeof(struct hotstack_stack) +
				(size_t)c->arena_frames * sizeof(u64));
	slot_size = ALIGN(HS_STATS_SIZE + (size_t)c->cpu_entries * sizeof(struct hotstack_count),
			  HS_SLOT_ALIGN);
	if (check_mul_overflow(slot_size, (size_t)nr_slots, &size) ||
	    check_add_overflow(size, store_size, &size) ||
	    check_mul_overflow(size, (size_t)2, &size) ||
	    check_add_overflow(size, hdr_size, &size))
		return -E2BIG;
	size = PAGE_ALIGN(size);
	/*
	 * An off-CPU session's task records: a key and a walk buffer each;
	 * of a process and what it starts, as many places for processes.
	 */
	if (c->flags & HOTSTACK_CFG_OFF_CPU) {
		t->off_rec_size = ALIGN(struct_size_t(struct hs_off_task, st.frames, c->max_depth),
					sizeof(u64));
		t->off_size = (sizeof(*t->off.keys) + sizeof(*t->off.homes) + t->off_rec_size) *
			      c->off_cpu_tasks;
		if (c->flags & HOTSTACK_CFG_TASK)
			t->off_size += sizeof(*t->off_procs) * c->off_cpu_tasks;
		if (c->flags & HOTSTACK_CFG_WAKERS) {
			t->wake_rec_size = ALIGN(struct_size_t(struct hs_waker, frames,
							       c->max_depth), sizeof(u64));
			t->off_size += (sizeof(*t->wake.keys) + sizeof(*t->wake.homes) +
					t->wake_rec_size) * hs_wakers(c);
		}
	}
	if (c->flags & HOTSTACK_CFG_USER_TABLES)
		t->urc_size = (size_t)nr_slots * HS_URC_SIZE * sizeof(struct hs_urc);
	held = size + t->off_size + t->urc_size;	/* hs_tables_bytes() once @t is made */
	ret = hotstack_user_reserve(user, held);
	if (ret)
		return ret;
	if (!hs_memory_reserve(&hotstack_memory, (s64)hotstack_max_memory_mb << 20, held)) {
		hotstack_user_unreserve(user, held);
		return -E2BIG;
	}
	t->size = size;
	t->user = user;
	t->nr_slots = nr_slots;

	nr_pages = size >> PAGE_SHIFT;
	t->pages = kvcalloc(nr_pages, sizeof(*t->pages), GFP_KERNEL_ACCOUNT);
	t->slot_of_cpu = alloc_percpu_gfp(struct hs_slot *, GFP_KERNEL_ACCOUNT);
	t->slots = kcalloc(nr_slots, sizeof(*t->slots), GFP_KERNEL_ACCOUNT);
	/* Not in @t: the tables point at it, and @t is copied. */
	t->store = kcalloc(2, sizeof(*t->store), GFP_KERNEL_ACCOUNT);
	slot_cpu = kmalloc_array(nr_slots, sizeof(*slot_cpu), GFP_KERNEL);
	if (!t->pages || !t->slot_of_cpu || !t->slots || !t->store || !slot_cpu)
		goto out_nomem;
	if (t->off_size) {
		t->off.mask = c->off_cpu_tasks - 1;
		t->off.bits = ilog2(c->off_cpu_tasks);
		t->off.keys = kvcalloc(c->off_cpu_tasks, sizeof(*t->off.keys), GFP_KERNEL_ACCOUNT);
		t->off_recs = kvcalloc(c->off_cpu_tasks, t->off_rec_size, GFP_KERNEL_ACCOUNT);
		t->off.homes = kvcalloc(c->off_cpu_tasks, sizeof(*t->off.homes),
					GFP_KERNEL_ACCOUNT);
		if (c->flags & HOTSTACK_CFG_TASK)
			t->off_procs = kvcalloc(c->off_cpu_tasks, sizeof(*t->off_procs),
						GFP_KERNEL_ACCOUNT);
		if (!t->off.keys || !t->off_recs || !t->off.homes ||
		    (!t->off_procs && (c->flags & HOTSTACK_CFG_TASK)))
			goto out_nomem;
	}
	if (t->wake_rec_size) {
		t->wake.mask = hs_wakers(c) - 1;
		t->wake.bits = ilog2(hs_wakers(c));
		t->wake.keys = kvcalloc(hs_wakers(c), sizeof(*t->wake.keys), GFP_KERNEL_ACCOUNT);
		t->wake.homes = kvcalloc(hs_wakers(c), sizeof(*t->wake.homes), GFP_KERNEL_ACCOUNT);
		t->wake_recs = kvcalloc(hs_wakers(c), t->wake_rec_size, GFP_KERNEL_ACCOUNT);
		if (!t->wake.keys || !t->wake.homes || !t->wake_recs)
			goto out_nomem;
	}
	i = 0;
	for_each_cpu(cpu, mask)
		slot_cpu[i++] = cpu;
	for (p = 0; p < nr_pages; p++) {
		int node = hs_page_node(t, hdr_size, store_size, slot_size, slot_cpu,
					p << PAGE_SHIFT);

		/* Past the cgroup's limit: fail, never wake its OOM killer. */
		t->pages[p] = alloc_pages_node(node, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					       __GFP_NOWARN | __GFP_RETRY_MAYFAIL, 0);
		if (!t->pages[p])
			goto out_nomem;
		if (!(p % 1024))
			cond_resched();
	}
	t->buf = vmap(t->pages, nr_pages, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!t->buf)
		goto out_nomem;

	h = t->buf;
	t->hdr = h;
	h->version = HOTSTACK_MMAP_VERSION;
	h->header_size = sizeof(*h);
	h->nr_slots = nr_slots;
	h->table_entries = c->table_entries;
	h->arena_frames = c->arena_frames;
	h->entry_size = sizeof(struct hotstack_stack);
	h->cpu_stats_size = HS_STATS_SIZE;
	h->slot_size = slot_size;
	h->gen_offset[0] = hdr_size;
	h->gen_offset[1] = hdr_size + store_size + slot_size * nr_slots;
	h->store_size = store_size;
	h->store_stats_size = HS_STORE_STATS_SIZE;
	h->cpu_entries = c->cpu_entries;
	h->count_size = sizeof(struct hotstack_count);
	h->mmap_size = size;
	h->keys = c->keys;
	h->stacks = c->stacks;
	h->max_depth = c->max_depth;
	h->budget_ppm = c->budget_ppm;

	for (g = 0; g < 2; g++) {
		void *base = t->buf + h->gen_offset[g];
		struct hotstack_stack *stacks = base + HS_STORE_STATS_SIZE;

		hs_store_init(&t->store[g], base, stacks, c->table_entries,
			      (u64 *)(stacks + c->table_entries), c->arena_frames);
	}
	for (i = 0; i < nr_slots; i++) {
		struct hs_slot *sl = &t->slots[i];

		*per_cpu_ptr(t->slot_of_cpu, slot_cpu[i]) = sl;
		h->slot_cpu[i] = slot_cpu[i];
		for (g = 0; g < 2; g++) {
			void *base = t->buf + h->gen_offset[g] + store_size + (size_t)i * slot_size;

			hs_table_init(&sl->tab[g], base, base + HS_STATS_SIZE, c->cpu_entries,
				      &t->store[g], seed);
		}
		sl->cur = &sl->tab[0];
		sl->buf = kzalloc_node(struct_size(sl->buf, frames, t->wake_rec_size ?
						   HOTSTACK_MAX_DEPTH + HOTSTACK_WAKER_WORDS :
						   c->max_depth),
				       GFP_KERNEL_ACCOUNT, cpu_to_node(slot_cpu[i]));
		if (!sl->buf)
			goto out_nomem;
		if (t->urc_size) {
			sl->urc = kcalloc_node(HS_URC_SIZE, sizeof(*sl->urc), GFP_KERNEL_ACCOUNT,
					       cpu_to_node(slot_cpu[i]));
			if (!sl->urc)
				goto out_nomem;
		}
	}
	kfree(slot_cpu);
	return 0;

out_nomem:
	kfree(slot_cpu);
	hs_free_tables(t);
	return -ENOMEM;
}

/*
 * What the IP-only path (sample.c) counts a sample with, by where it was
 * taken (the kernel [0], user mode [1]): its key's first word as
 * hs_walk() would fill it (one frame, cut; or none, in user mode), its
 * flags, and the first rounds of its hash.
 */
static void hs_ip_keys(struct hotstack_session *s)
{
	unsigned int user;

	for (user = 0; user < 2; user++) {
		struct hs_key k = {
			.nr_kernel = !user,
			.flags = user ? HOTSTACK_ENTRY_USER_MODE :
			       HOTSTACK_ENTRY_TRUNCATED |
			       (s->caller_regs ? HOTSTACK_ENTRY_CALLER : 0),
		};

		memcpy(&s->ip_key[user], &k, sizeof(s->ip_key[user]));
		s->ip_flags[user] = k.flags;
		s->ip_hkey[user] = hs_ip_hash_key(s->ip_key[user], s->seed);
	}
}

/**
 * hotstack_configure - CONFIGURE a session that is not running
 * @s: the session, locked
 * @c: the configuration (every field but the CPU mask and the cgroups unchecked)
 * @mask: the CPUs asked for, each a possible CPU
 * @cgroups: the cgroups to count (references), or NULL for none; once
 *	configured it holds those the session had before, for the caller to put
 *
 * Tables are made for the CPUs of @mask online now (an off-CPU session's:
 * present now); one that comes online later is reported
 * (HOTSTACK_EV_CPU_MISSED, stats.cpus_missed), not sampled: the mmap
 * layout is fixed here. On failure the previous
 * configuration, tables and counters are kept as they were.
 */
int hotstack_configure(struct hotstack_session *s, const struct hotstack_config *c,
		       const struct cpumask *mask, struct hs_cgroups *cgroups)
{
	struct hs_tables tabs;
	cpumask_var_t cpus;
	struct pid *pid = NULL;
	u64 seed, rate;
	int ret;

	lockdep_assert_held(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		return -EBUSY;
	if (atomic_read(&s->mmaps))
		return -EBUSY;
	ret = hs_check_config(c);
	if (ret)
		return ret;
	rate = hs_config_rate(c);
	if (cpumask_empty(mask))
		return -EINVAL;
	if (!perfmon_capable()) {
		ret = hs_check_delegated(c);
		if (ret)
			return ret;
	}
	if (c->flags & HOTSTACK_CFG_PID) {
		/* A process of the opener's pid namespace. */
		rcu_read_lock();
		pid = get_pid(find_pid_ns(c->pid, s->pid_ns));
		rcu_read_unlock();
		if (!pid)
			return -ESRCH;
		if ((c->flags & HOTSTACK_CFG_TASK) && !perfmon_capable()) {
			ret = hs_may_watch(pid);
			if (ret)
				goto out_pid;
		}
	}
	if (!zalloc_cpumask_var(&cpus, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto out_pid;
	}
	/* No lock: a CPU that changes meanwhile is the hotplug callbacks' to handle. */
	cpumask_and(cpus, mask, cpu_online_mask);
	if (cpumask_empty(cpus))
		ret = -ENODEV;
	else if ((c->flags & HOTSTACK_CFG_OFF_CPU) &&
		 !hotstack_off_cpu_supported(c->flags & HOTSTACK_CFG_TASK,
					     c->flags & HOTSTACK_CFG_WAKERS))
		ret = -EOPNOTSUPP;
	else
		ret = c->sample ? hs_try_event(c, cpus) : 0;
	/*
	 * The probe of off-CPU time runs on whichever CPU a task switches
	 * on: tables for the present ones offline now too, which can come
	 * online while it runs (wall-clock time's clock events follow them).
	 */
	if (c->flags & HOTSTACK_CFG_OFF_CPU)
		cpumask_and(cpus, mask, cpu_present_mask);
	seed = get_random_u64();
	if (!ret)
		ret = hs_alloc_tables(&tabs, c, cpus, seed, s->user);
	/* Last: the one step here that cannot fail is giving it back. */
	if (!ret) {
		ret = hotstack_user_rate(s->user, s->user_rate, rate);
		if (ret)
			hs_free_tables(&tabs);
	}
	free_cpumask_var(cpus);
	if (ret)
		goto out_pid;
	s->user_rate = rate;

	/* The previous tables go only now that the new ones exist. */
	mutex_lock(&s->ev_lock);
	hs_free_tables(&s->tabs);
	s->tabs = tabs;
	mutex_unlock(&s->ev_lock);
	swap(s->pid, pid);
	cpumask_copy(s->cpus, mask);
	atomic_set(&s->cpus_missed, 0);
	s->cfg = *c;
	s->seed = seed;
	s->privileged = perfmon_capable();
	s->task_mode = c->flags & HOTSTACK_CFG_TASK;
	s->off_cpu = c->flags & HOTSTACK_CFG_OFF_CPU;
	s->wall = s->off_cpu && c->sample;
	s->wakers = c->flags & HOTSTACK_CFG_WAKERS;
	/* The new cgroups in, the old ones to the caller to put. */
	if (cgroups)
		swap(s->cgroups, *cgroups);
	else
		hs_cgroups_put(&s->cgroups);
	/* An off-CPU session of a process and what it starts: its set. */
	if (((c->flags & HOTSTACK_CFG_PID) && (!s->task_mode || s->off_cpu)) || s->cgroups.nr)
		s->filter = HS_FILTER_TASK;
	else
		s->filter = c->flags & HOTSTACK_CFG_EXCLUDE_IDLE ? HS_FILTER_IDLE : HS_FILTER_NONE;
	if (c->keys || c->stacks != HOTSTACK_STACK_KERNEL || s->off_cpu)
		s->path = HS_PATH_ANY;
	else if (c->max_depth == 1)
		s->path = HS_PATH_IP;
	else
		s->path = (c->flags & HOTSTACK_CFG_COLLAPSE) || c->precise ? HS_PATH_ANY :
								       HS_PATH_KERNEL;
	atomic64_set(&s->lost, 0);
	if (s->cred)
		put_cred(s->cred);
	s->cred = get_current_cred();
	s->sync_event = c->event_type == PERF_TYPE_SOFTWARE &&
			(c->event_config == PERF_COUNT_SW_PAGE_FAULTS ||
			 c->event_config == PERF_COUNT_SW_CONTEXT_SWITCHES);
	/* perf_sw_event_sched() hands over perf_fetch_caller_regs()' registers. */
	s->caller_regs = c->event_type == PERF_TYPE_SOFTWARE &&
			 c->event_config == PERF_COUNT_SW_CONTEXT_SWITCHES;
	hs_ip_keys(s);
	s->active = 0;
	s->generation = 0;
	s->ev_raised[0] = 0;
	s->ev_raised[1] = 0;
	s->elapsed_ns[0] = 0;
	s->elapsed_ns[1] = 0;
	s->state = HOTSTACK_STATE_READY;
	atomic_inc(&s->reader_gen);
	hs_hdr_update(s);
out_pid:
	put_pid(pid);
	return ret;
}

/*
 * START of an off-CPU session: the probe, no events; not on the test
 * hook's list (its tables have one writer, the probe).
 */
static int hs_off_cpu_start(struct hotstack_session *s)
{
	int ret = hotstack_off_cpu_start(s);

	if (ret) {
		hotstack_event(s, HOTSTACK_EV_STOPPED, 0, -1);
		return ret;
	}
	s->run_start_ns = ktime_get_ns();
	s->state = HOTSTACK_STATE_RUNNING;
	hs_hdr_update(s);
	hs_budget_begin(s);
	return 0;
}

void hotstack_stop(struct hotstack_session *s)
{
	lockdep_assert_held(&s->lock);
	if (s->state != HOTSTACK_STATE_RUNNING)
		return;
	/* It takes ev_lock, never @lock: waited for here. */
	cancel_delayed_work_sync(&s->budget_work);
	/* A sampler's cost, for the next budgets to start from (not the probe's). */
	if (!s->off_cpu)
		hs_cost_note(s);
	if (s->off_cpu && !s->wall) {
		hotstack_off_cpu_stop(s);
	} else if (s->task_mode && !s->wall) {
		hs_task_events_release(s);
	} else {
		/* The callbacks of every online CPU say "no event"; then released. */
		cpuhp_state_remove_instance_nocalls(hotstack_cpuhp_state, &s->cpuhp_node);
		hs_stop_events(s);
	}
	if (!s->off_cpu) {
		mutex_lock(&hotstack_running_lock);
		list_del_rcu(&s->run_node);
		mutex_unlock(&hotstack_running_lock);
	}
	if (!s->off_cpu || s->wall)
		/* No sampler (perf handler or test hook) is still in our tables. */
		synchronize_rcu();
	/* Wall-clock time: its waits counted once its events are gone. */
	if (s->wall)
		hotstack_off_cpu_stop(s);
	s->elapsed_ns[s->active] += ktime_get_ns() - s->run_start_ns;
	s->state = HOTSTACK_STATE_READY;
	if (s->cgnames)
		hotstack_cgnames_put();
	s->cgnames = false;
	hs_hdr_update(s);
	/* The sampler is done: what it raised goes out before STOPPED. */
	hotstack_events_flush(s);
	hotstack_event(s, HOTSTACK_EV_STOPPED, 0, -1);
}

static int hs_start(struct hotstack_session *s)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		return -EBUSY;
	if (s->state != HOTSTACK_STATE_READY)
		return -EINVAL;
	/* Again: the process may have run a setuid program since CONFIGURE. */
	if (s->task_mode && !perfmon_capable()) {
		ret = hs_may_watch(s->pid);
		if (ret)
			return ret;
	}

	s->rate_changes = 0;
	s->max_weight = 1;
	for (i = 0; i < s->tabs.nr_slots; i++) {
		struct hs_slot *sl = &s->tabs.slots[i];
		u32 w = hs_budget_start(s, sl);

		sl->err = 0;
		/* A budget starts at the rate it allows at the cost known. */
		sl->tab[0].weight = w;
		sl->tab[1].weight = w;
		sl->b_taken = local64_read(&sl->taken);
		sl->b_timed = sl->timed;
		sl->b_ns = sl->timed_ns;
		sl->off_gap = 0;
		sl->rnd = get_random_u32();
		sl->wall_ns = ktime_get_mono_fast_ns();
		s->max_weight = max(s->max_weight, w);
		s->rate_changes += w > 1;
	}
	s->sample_rate = 0;
	s->cost_ns = 0;
	s->window_ppm = 0;
	hs_budget_publish(s);
	/* Before the first sample can raise an event of its own. */
	hotstack_event(s, HOTSTACK_EV_STARTED, 0, -1);
	if (s->off_cpu && !s->wall)
		return hs_off_cpu_start(s);
	for (i = 0; i < s->tabs.nr_slots; i++)
		if (s->tabs.slots[i].tab[0].weight > 1)
			hotstack_event(s, HOTSTACK_EV_RATE, s->tabs.slots[i].tab[0].weight,
				       s->tabs.hdr->slot_cpu[i]);
	/* Not wall-clock time's: its tables have the probe for a writer too. */
	if (!s->wall) {
		mutex_lock(&hotstack_running_lock);
		list_add_rcu(&s->run_node, &hotstack_running);
		mutex_unlock(&hotstack_running_lock);
	}
	s->run_start_ns = ktime_get_ns();

	/*
	 * Per-task events on the process's threads (all or none); or the
	 * callbacks of the online CPUs ask for their events, made below
	 * (wall-clock time's of a process too: its set filters them).
	 */
	if (s->task_mode && !s->wall)
		ret = hs_task_events_start(s);
	else
		ret = cpuhp_state_add_instance(hotstack_cpuhp_state, &s->cpuhp_node);
	if (ret) {
		/* Not added: nothing to remove from the hotplug state. */
		if (!s->task_mode || s->wall)
			hs_stop_events(s);
		if (!s->wall) {
			mutex_lock(&hotstack_running_lock);
			list_del_rcu(&s->run_node);
			mutex_unlock(&hotstack_running_lock);
		}
		synchronize_rcu();
		s->state = HOTSTACK_STATE_READY;
		hotstack_event(s, HOTSTACK_EV_STOPPED, 0, -1);
		return ret;
	}
	s->state = HOTSTACK_STATE_RUNNING;
	if (s->task_mode && !s->wall) {
		hs_hdr_update(s);
		return 0;
	}
	hs_sync_events_now(s);
	mutex_lock(&s->ev_lock);
	for (i = 0; !ret && i < s->tabs.nr_slots; i++)
		if (s->tabs.slots[i].err != -ENODEV)
			ret = s->tabs.slots[i].err;
	mutex_unlock(&s->ev_lock);
	/* Wall-clock time: its waits too, once its events run. */
	if (!ret && s->wall)
		ret = hotstack_off_cpu_start(s);
	if (ret) {
		/* Nothing half started: release what was created. */
		hotstack_stop(s);
		return ret;
	}
	hs_hdr_update(s);
	hs_budget_begin(s);
	return 0;
}

int hotstack_start(struct hotstack_session *s)
{
	int ret = hs_start(s);

	/* Keyed by cgroup: the cgroups removed while it runs are named (best effort). */
	if (!ret && (s->cfg.keys & HOTSTACK_KEY_CGROUP))
		s->cgnames = hotstack_cgnames_get();
	return ret;
}

/* Empty generation @gen (quiet: no sampler writes it). */
static void hs_clear_gen(struct hotstack_session *s, unsigned int gen)
{
	unsigned int i;

	if (s->tabs.nr_slots)
		hs_store_clear(&s->tabs.store[gen]);
	for (i = 0; i < s->tabs.nr_slots; i++) {
		hs_table_clear(&s->tabs.slots[i].tab[gen]);
		cond_resched();
	}
	s->elapsed_ns[gen] = 0;
	/* Events fire once per generation: arm them again. */
	WRITE_ONCE(s->ev_raised[gen], 0);
}

/*
 * SNAPSHOT (@reset false): the active generation becomes readable, the
 * other one (emptied) active. RESET (@reset true): both emptied.
 */
void hotstack_swap(struct hotstack_session *s, bool reset)
{
	unsigned int old = s->active, new = !old, i;
	u64 now = ktime_get_ns();

	lockdep_assert_held(&s->lock);
	hs_hdr_begin(s->tabs.hdr);
	hs_clear_gen(s, new);
	if (s->state == HOTSTACK_STATE_RUNNING) {
		s->elapsed_ns[old] += now - s->run_start_ns;
		s->run_start_ns = now;
	}
	WRITE_ONCE(s->active, new);
	for (i = 0; i < s->tabs.nr_slots; i++)
		WRITE_ONCE(s->tabs.slots[i].cur, &s->tabs.slots[i].tab[new]);
	/* Samplers are RCU readers (NMI too): after this, @old is quiet. */
	if (s->state == HOTSTACK_STATE_RUNNING)
		synchronize_rcu();
	if (reset) {
		hs_clear_gen(s, old);
		atomic_inc(&s->reader_gen);
	}
	s->generation++;
	hs_hdr_fields(s);
	hs_hdr_end(s->tabs.hdr);
}

static void hs_stats_add(struct hotstack_cpu_stats *sum, const struct hotstack_cpu_stats *st)
{
	const u64 *src = (const u64 *)st;
	u64 *dst = (u64 *)sum;
	size_t i;

	/* Every field is a __u64 that adds up. */
	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		dst[i] += READ_ONCE(src[i]);
}

void hotstack_get_stats(struct hotstack_session *s, struct hotstack_stats *st,
			unsigned int gen)
{
	unsigned int i;

	lockdep_assert_held(&s->lock);
	memset(&st->total, 0, sizeof(st->total));
	st->elapsed_ns = 0;
	st->mmap_size = s->tabs.size;
	st->id = s->id;
	st->pad = 0;
	st->state = s->state;
	st->nr_cpus = s->tabs.nr_slots;
	st->generation = s->generation;
	st->cpus_sampled = 0;
	st->cpus_missed = 0;
	st->table_entries = 0;
	st->pad2 = 0;
	st->arena_frames = 0;
	st->lost = 0;
	st->interrupts = 0;
	st->budget_ppm = 0;
	st->floor_ns = 0;
	st->rate_changes = 0;
	st->sample_rate = 0;
	st->cost_ns = 0;
	st->window_ppm = 0;
	st->max_weight = 0;
	st->pad3 = 0;
	st->untimed = 0;
	st->waits_at_start = 0;
	st->cpu_entries = 0;
	st->pad4 = 0;
	st->wakers_unseen = 0;
	hotstack_unwind_stats(s, st);
	if (s->state == HOTSTACK_STATE_NEW)
		return;
	st->budget_ppm = s->cfg.budget_ppm;
	if (st->budget_ppm) {
		st->floor_ns = hs_floor_ns(s);
		st->rate_changes = READ_ONCE(s->rate_changes);
		smp_rmb();	/* pairs with hs_budget_work()'s wmb */
		st->sample_rate = READ_ONCE(s->sample_rate);
		st->cost_ns = READ_ONCE(s->cost_ns);
		st->window_ppm = READ_ONCE(s->window_ppm);
		st->max_weight = READ_ONCE(s->max_weight);
	}
	st->cpus_missed = atomic_read(&s->cpus_missed);
	st->lost = atomic64_read(&s->lost);
	st->untimed = s->off_cpu ? atomic64_read(&s->untimed) : 0;
	st->waits_at_start = s->off_cpu ? atomic64_read(&s->waits_at_start) : 0;
	st->wakers_unseen = s->wakers ? atomic64_read(&s->wakers_unseen) : 0;
	st->table_entries = s->cfg.table_entries;
	st->arena_frames = s->cfg.arena_frames;
	st->cpu_entries = s->cfg.cpu_entries;
	st->elapsed_ns = s->elapsed_ns[gen];
	if (s->state == HOTSTACK_STATE_RUNNING && gen == s->active)
		st->elapsed_ns += ktime_get_ns() - s->run_start_ns;
	for (i = 0; i < s->tabs.nr_slots; i++) {
		hs_stats_add(&st->total, s->tabs.slots[i].tab[gen].stats);
		st->interrupts += local64_read((local64_t *)&s->tabs.slots[i].tab[gen].interrupts);
		st->cpus_sampled += !!READ_ONCE(s->tabs.slots[i].event);
	}
	/* The CPUs' entries are counts; the stacks and frames are the store's. */
	if (s->tabs.nr_slots) {
		st->total.entries = READ_ONCE(s->tabs.store[gen].stats->stacks);
		st->total.arena_used = READ_ONCE(s->tabs.store[gen].stats->arena_used);
	}
	/* An off-CPU session's probe runs on every online CPU that has a table. */
	if (s->off_cpu && !s->wall && s->state == HOTSTACK_STATE_RUNNING) {
		st->cpus_sampled = 0;
		for (i = 0; i < s->tabs.nr_slots; i++)
			st->cpus_sampled += cpu_online(s->tabs.hdr->slot_cpu[i]);
	}
}

/**
 * hotstack_test_sample - feed a sample to every running session
 * @regs: the interrupted registers
 *
 * For test modules that drive the sample path from their own NMIs; does
 * nothing unless the module was loaded with test_hooks=1.
 * Called from NMI or hardirq context.
 */
void hotstack_test_sample(struct pt_regs *regs)
{
	struct hotstack_session *s;

	if (!READ_ONCE(hotstack_test_hooks))
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &hotstack_running, run_node)
		hotstack_sample(s, regs);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(hotstack_test_sample);
