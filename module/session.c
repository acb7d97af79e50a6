// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: session lifecycle -- configure (tables), start/stop (perf
 * events, CPU hotplug), snapshot/reset (generations), statistics.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "hotstack.h"

atomic64_t hotstack_memory = ATOMIC64_INIT(0);
enum cpuhp_state hotstack_cpuhp_state;

/* Sessions RUNNING, for the test hook (RCU list; writers hold the mutex). */
static LIST_HEAD(hotstack_running);
static DEFINE_MUTEX(hotstack_running_lock);

/* Bytes in front of a slot's entries: its counters, cache-line padded. */
#define HS_STATS_SIZE	ALIGN(sizeof(struct hotstack_cpu_stats), 64)
/* Slots start on their own cache lines (and the adjacent-line prefetch). */
#define HS_SLOT_ALIGN	128

struct hotstack_session *hotstack_session_new(u32 owner)
{
	struct hotstack_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	mutex_init(&s->lock);
	mutex_init(&s->read_lock);
	INIT_LIST_HEAD(&s->run_node);
	hotstack_events_init(s);
	s->state = HOTSTACK_STATE_NEW;
	hotstack_session_register(s, owner);
	return s;
}

/* Free the tables of @s (not running, not mapped), complete or half made. */
static void hs_free_tables(struct hotstack_session *s)
{
	unsigned int i;

	for (i = 0; s->slots && i < s->nr_slots; i++)
		kfree(s->slots[i].buf);
	kfree(s->slots);
	kfree(s->slot_of_cpu);
	vfree(s->buf);
	atomic64_sub(s->buf_size, &hotstack_memory);
	s->buf = NULL;
	s->hdr = NULL;
	s->slots = NULL;
	s->slot_of_cpu = NULL;
	s->nr_slots = 0;
	s->buf_size = 0;
}

void hotstack_session_free(struct hotstack_session *s)
{
	hotstack_session_unregister(s);
	mutex_lock(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		hotstack_stop(s);
	hs_free_tables(s);
	mutex_unlock(&s->lock);
	hotstack_events_flush(s);
	hotstack_event(s, HOTSTACK_EV_CLOSED, 0, -1);
	/* The file is gone: no read() can be running. */
	hotstack_reader_free(&s->reader);
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
	struct hotstack_mmap_header *h = s->hdr;

	WRITE_ONCE(h->state, s->state);
	WRITE_ONCE(h->generation, s->generation);
	WRITE_ONCE(h->active, s->active);
	WRITE_ONCE(h->readable, !s->active);
}

static void hs_hdr_update(struct hotstack_session *s)
{
	hs_hdr_begin(s->hdr);
	hs_hdr_fields(s);
	hs_hdr_end(s->hdr);
}

static void hs_event_attr(const struct hotstack_config *c, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = c->event_type;
	attr->size = sizeof(*attr);
	attr->config = c->event_config;
	attr->freq = !!(c->flags & HOTSTACK_CFG_FREQ);
	attr->sample_period = c->sample;	/* union with sample_freq */
	attr->precise_ip = c->precise;
}

/* Whether @c names an event hotstack knows; EINVAL otherwise. */
static int hs_check_event(const struct hotstack_config *c)
{
	switch (c->event_type) {
	case PERF_TYPE_HARDWARE:
		switch (c->event_config) {
		case PERF_COUNT_HW_CPU_CYCLES:
		case PERF_COUNT_HW_INSTRUCTIONS:
		case PERF_COUNT_HW_CACHE_MISSES:
		case PERF_COUNT_HW_BRANCH_MISSES:
			return 0;
		}
		return -EINVAL;
	case PERF_TYPE_SOFTWARE:
		if (c->precise)
			return -EINVAL;
		switch (c->event_config) {
		case PERF_COUNT_SW_CPU_CLOCK:
		case PERF_COUNT_SW_TASK_CLOCK:
		case PERF_COUNT_SW_PAGE_FAULTS:
		case PERF_COUNT_SW_CONTEXT_SWITCHES:
			return 0;
		}
		return -EINVAL;
	case PERF_TYPE_RAW:
		return 0;
	}
	return -EINVAL;
}

/* Every field of @c but the CPU mask (dev.c reads that from userspace). */
static int hs_check_config(const struct hotstack_config *c)
{
	if (c->flags & ~HOTSTACK_CFG_ALL)
		return -EINVAL;
	if (memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return -EINVAL;
	if (hs_check_event(c) || c->precise > 3)
		return -EINVAL;
	/* perf keeps the top bit of the period for itself. */
	if (!c->sample || c->sample > S64_MAX)
		return -EINVAL;
	if ((c->flags & HOTSTACK_CFG_FREQ) && c->sample > HOTSTACK_MAX_FREQ)
		return -EINVAL;
	if (!(c->flags & HOTSTACK_CFG_PID) != !c->pid || c->pid > PID_MAX_LIMIT)
		return -EINVAL;
	if (!c->stacks || (c->stacks & ~(HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER)))
		return -EINVAL;
	if (!c->max_depth || c->max_depth > HOTSTACK_MAX_DEPTH)
		return -EINVAL;
	if (c->keys & ~HOTSTACK_KEY_ALL)
		return -EINVAL;
	if (!is_power_of_2(c->table_entries) || c->table_entries < HOTSTACK_MIN_ENTRIES ||
	    c->table_entries > HOTSTACK_MAX_ENTRIES)
		return -EINVAL;
	if (c->arena_frames < HOTSTACK_MIN_ARENA || c->arena_frames > HOTSTACK_MAX_ARENA)
		return -EINVAL;
	return 0;
}

struct hs_try {
	const struct hotstack_config *cfg;
	int cpu;
};

static long hs_try_event_on(void *arg)
{
	const struct hs_try *t = arg;
	struct perf_event_attr attr;
	struct perf_event *event;

	hs_event_attr(t->cfg, &attr);
	attr.disabled = 1;
	event = perf_event_create_kernel_counter(&attr, t->cpu, NULL, NULL, NULL);
	if (IS_ERR(event))
		return PTR_ERR(event);
	perf_event_release_kernel(event);
	return 0;
}

/*
 * Create the event on one online CPU of @mask and release it: an event this
 * machine cannot count fails here, at CONFIGURE, with perf's errno. It is
 * created by a kernel worker, as START's are by the hotplug threads: the
 * caller may be a delegated user whom perf alone would refuse CPU events.
 */
static int hs_try_event(const struct hotstack_config *c, const struct cpumask *mask)
{
	struct hs_try t = { .cfg = c };
	int ret = 0;

	cpus_read_lock();
	t.cpu = cpumask_first_and(mask, cpu_online_mask);
	if (t.cpu < nr_cpu_ids)
		ret = work_on_cpu(t.cpu, hs_try_event_on, &t);
	cpus_read_unlock();
	return ret;
}

/* Lay out and allocate the tables of @c over the CPUs of @mask. */
static int hs_alloc_tables(struct hotstack_session *s, const struct hotstack_config *c,
			   const struct cpumask *mask)
{
	unsigned int nr_slots = cpumask_weight(mask), i, g;
	size_t hdr_size, slot_size, size;
	struct hotstack_mmap_header *h;
	int cpu;

	/* Bounded fields: none of this overflows, but say so. */
	hdr_size = PAGE_ALIGN(struct_size(h, slot_cpu, nr_slots));
	slot_size = ALIGN(HS_STATS_SIZE + (size_t)c->table_entries * sizeof(struct hotstack_entry) +
			  (size_t)c->arena_frames * sizeof(u64), HS_SLOT_ALIGN);
	if (check_mul_overflow(slot_size, (size_t)nr_slots * 2, &size) ||
	    check_add_overflow(size, hdr_size, &size))
		return -E2BIG;
	size = PAGE_ALIGN(size);
	if (atomic64_add_return(size, &hotstack_memory) > (s64)hotstack_max_memory_mb << 20) {
		atomic64_sub(size, &hotstack_memory);
		return -E2BIG;
	}

	s->buf = vmalloc_user(size);
	s->slot_of_cpu = kmalloc_array(nr_cpu_ids, sizeof(int), GFP_KERNEL);
	s->slots = kcalloc(nr_slots, sizeof(*s->slots), GFP_KERNEL);
	s->buf_size = size;
	s->nr_slots = nr_slots;
	if (!s->buf || !s->slot_of_cpu || !s->slots)
		goto out_nomem;

	h = s->buf;
	s->hdr = h;
	h->version = HOTSTACK_MMAP_VERSION;
	h->header_size = sizeof(*h);
	h->nr_slots = nr_slots;
	h->table_entries = c->table_entries;
	h->arena_frames = c->arena_frames;
	h->entry_size = sizeof(struct hotstack_entry);
	h->cpu_stats_size = HS_STATS_SIZE;
	h->slot_size = slot_size;
	h->gen_offset[0] = hdr_size;
	h->gen_offset[1] = hdr_size + slot_size * nr_slots;
	h->mmap_size = size;
	h->keys = c->keys;
	h->stacks = c->stacks;
	h->max_depth = c->max_depth;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		s->slot_of_cpu[cpu] = -1;
	i = 0;
	for_each_cpu(cpu, mask) {
		struct hs_slot *sl = &s->slots[i];

		s->slot_of_cpu[cpu] = i;
		h->slot_cpu[i] = cpu;
		for (g = 0; g < 2; g++) {
			void *base = s->buf + h->gen_offset[g] + (size_t)i * slot_size;
			struct hotstack_entry *entries = base + HS_STATS_SIZE;

			hs_table_init(&sl->tab[g], base, entries, c->table_entries,
				      (u64 *)(entries + c->table_entries), c->arena_frames);
		}
		sl->buf = kmalloc(struct_size(sl->buf, frames, c->max_depth), GFP_KERNEL);
		if (!sl->buf)
			goto out_nomem;
		i++;
	}
	return 0;

out_nomem:
	hs_free_tables(s);
	return -ENOMEM;
}

int hotstack_configure(struct hotstack_session *s, const struct hotstack_config *c,
		       const struct cpumask *mask)
{
	int ret;

	lockdep_assert_held(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		return -EBUSY;
	if (atomic_read(&s->mmaps))
		return -EBUSY;
	ret = hs_check_config(c);
	if (ret)
		return ret;
	if (cpumask_empty(mask))
		return -EINVAL;
	ret = hs_try_event(c, mask);
	if (ret)
		return ret;

	hs_free_tables(s);
	s->state = HOTSTACK_STATE_NEW;
	ret = hs_alloc_tables(s, c, mask);
	if (ret)
		return ret;
	s->cfg = *c;
	s->sync_event = c->event_type == PERF_TYPE_SOFTWARE &&
			(c->event_config == PERF_COUNT_SW_PAGE_FAULTS ||
			 c->event_config == PERF_COUNT_SW_CONTEXT_SWITCHES);
	s->active = 0;
	s->generation = 0;
	s->ev_raised = 0;
	s->elapsed_ns[0] = 0;
	s->elapsed_ns[1] = 0;
	s->state = HOTSTACK_STATE_READY;
	hs_hdr_update(s);
	return 0;
}

/* CPU hotplug: a CPU of a running session came online (or START). */
static int hs_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct hotstack_session *s = hlist_entry(node, struct hotstack_session, cpuhp_node);
	int idx = s->slot_of_cpu[cpu];
	struct perf_event_attr attr;
	struct perf_event *event;
	struct hs_slot *sl;

	if (idx < 0)
		return 0;
	sl = &s->slots[idx];
	hs_event_attr(&s->cfg, &attr);
	event = perf_event_create_kernel_counter(&attr, cpu, NULL, hotstack_overflow, s);
	if (IS_ERR(event)) {
		/* Never fail a CPU's onlining for a profiler: remember why. */
		sl->err = PTR_ERR(event);
		return 0;
	}
	sl->err = 0;
	sl->event = event;
	return 0;
}

/* CPU hotplug: a CPU of a running session goes offline (or STOP). */
static int hs_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct hotstack_session *s = hlist_entry(node, struct hotstack_session, cpuhp_node);
	int idx = s->slot_of_cpu[cpu];
	struct hs_slot *sl;

	if (idx < 0)
		return 0;
	sl = &s->slots[idx];
	if (sl->event) {
		perf_event_release_kernel(sl->event);
		sl->event = NULL;
	}
	return 0;
}

int hotstack_cpuhp_init(void)
{
	int ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "hotstack:online",
					  hs_cpu_online, hs_cpu_offline);

	if (ret < 0)
		return ret;
	hotstack_cpuhp_state = ret;
	return 0;
}

void hotstack_cpuhp_exit(void)
{
	cpuhp_remove_multi_state(hotstack_cpuhp_state);
}

void hotstack_stop(struct hotstack_session *s)
{
	lockdep_assert_held(&s->lock);
	if (s->state != HOTSTACK_STATE_RUNNING)
		return;
	cpuhp_state_remove_instance(hotstack_cpuhp_state, &s->cpuhp_node);
	mutex_lock(&hotstack_running_lock);
	list_del_rcu(&s->run_node);
	mutex_unlock(&hotstack_running_lock);
	/* No sampler (perf handler or test hook) is still in our tables. */
	synchronize_rcu();
	s->elapsed_ns[s->active] += ktime_get_ns() - s->run_start_ns;
	s->state = HOTSTACK_STATE_READY;
	hs_hdr_update(s);
	/* The sampler is done: what it raised goes out before STOPPED. */
	hotstack_events_flush(s);
	hotstack_event(s, HOTSTACK_EV_STOPPED, 0, -1);
}

int hotstack_start(struct hotstack_session *s)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&s->lock);
	if (s->state == HOTSTACK_STATE_RUNNING)
		return -EBUSY;
	if (s->state != HOTSTACK_STATE_READY)
		return -EINVAL;

	for (i = 0; i < s->nr_slots; i++)
		s->slots[i].err = 0;
	/* Before the first sample can raise an event of its own. */
	hotstack_event(s, HOTSTACK_EV_STARTED, 0, -1);
	mutex_lock(&hotstack_running_lock);
	list_add_rcu(&s->run_node, &hotstack_running);
	mutex_unlock(&hotstack_running_lock);

	/* Creates the events on every online CPU of the session. */
	ret = cpuhp_state_add_instance(hotstack_cpuhp_state, &s->cpuhp_node);
	if (ret) {
		/* Not added: nothing to remove from the hotplug state. */
		mutex_lock(&hotstack_running_lock);
		list_del_rcu(&s->run_node);
		mutex_unlock(&hotstack_running_lock);
		synchronize_rcu();
		hotstack_event(s, HOTSTACK_EV_STOPPED, 0, -1);
		return ret;
	}
	for (i = 0; !ret && i < s->nr_slots; i++)
		ret = s->slots[i].err;
	s->run_start_ns = ktime_get_ns();
	s->state = HOTSTACK_STATE_RUNNING;
	if (ret) {
		/* Nothing half started: release what was created. */
		hotstack_stop(s);
		return ret;
	}
	hs_hdr_update(s);
	return 0;
}

static void hs_clear_gen(struct hotstack_session *s, unsigned int gen)
{
	unsigned int i;

	for (i = 0; i < s->nr_slots; i++)
		hs_table_clear(&s->slots[i].tab[gen]);
	s->elapsed_ns[gen] = 0;
}

/*
 * SNAPSHOT (@reset false): the active generation becomes readable, the
 * other one (emptied) active. RESET (@reset true): both emptied.
 */
void hotstack_swap(struct hotstack_session *s, bool reset)
{
	unsigned int old = s->active, new = !old;
	u64 now = ktime_get_ns();

	lockdep_assert_held(&s->lock);
	hs_hdr_begin(s->hdr);
	hs_clear_gen(s, new);
	if (s->state == HOTSTACK_STATE_RUNNING) {
		s->elapsed_ns[old] += now - s->run_start_ns;
		s->run_start_ns = now;
	}
	WRITE_ONCE(s->active, new);
	/* Samplers are RCU readers (NMI too): after this, @old is quiet. */
	if (s->state == HOTSTACK_STATE_RUNNING)
		synchronize_rcu();
	if (reset)
		hs_clear_gen(s, old);
	/* Events fire once per generation: arm them again. */
	WRITE_ONCE(s->ev_raised, 0);
	s->generation++;
	hs_hdr_fields(s);
	hs_hdr_end(s->hdr);
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
	st->mmap_size = s->buf_size;
	st->id = s->id;
	st->pad = 0;
	st->state = s->state;
	st->nr_cpus = s->nr_slots;
	st->generation = s->generation;
	if (s->state == HOTSTACK_STATE_NEW)
		return;
	st->elapsed_ns = s->elapsed_ns[gen];
	if (s->state == HOTSTACK_STATE_RUNNING && gen == s->active)
		st->elapsed_ns += ktime_get_ns() - s->run_start_ns;
	for (i = 0; i < s->nr_slots; i++)
		hs_stats_add(&st->total, s->slots[i].tab[gen].stats);
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
