// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: off-CPU sessions (HOTSTACK_CFG_OFF_CPU). A probe on the
 * sched_switch tracepoint, attached from START to STOP only (no session,
 * no cost): the probe itself is in sample.c, with the sampler it shares
 * its walks and counts with.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "hotstack.h"

#include <linux/string.h>
#include <linux/timekeeping.h>

#if HS_HAVE_SCHED_SWITCH
static struct tracepoint *hs_sched_switch_tp;

static void hs_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		hs_sched_switch_tp = tp;
}

int hotstack_off_cpu_init(void)
{
	for_each_kernel_tracepoint(hs_find_tp, NULL);
	if (!hs_sched_switch_tp)
		pr_info("no sched_switch tracepoint: off-CPU sessions unsupported\n");
	return 0;
}

bool hotstack_off_cpu_supported(void)
{
	return hs_sched_switch_tp;
}

/* No waits yet: every record free; then the probe. */
int hotstack_off_cpu_start(struct hotstack_session *s)
{
	struct hs_tables *t = &s->tabs;

	memset(t->off_keys, 0, (t->off_mask + 1UL) * sizeof(*t->off_keys));
	atomic64_set(&s->untimed, 0);
	return tracepoint_probe_register(hs_sched_switch_tp, hotstack_sched_switch, s);
}

/*
 * The probe off, and gone from every CPU; then the waits still going on
 * are counted up to now, each in the table of the CPU it began on (all
 * quiet now), so that every wait of the session is counted once.
 */
void hotstack_off_cpu_stop(struct hotstack_session *s)
{
	struct hs_tables *t = &s->tabs;
	u64 now;
	u32 i;

	WARN_ON_ONCE(tracepoint_probe_unregister(hs_sched_switch_tp, hotstack_sched_switch, s));
	tracepoint_synchronize_unregister();
	now = ktime_get_mono_fast_ns();
	for (i = 0; i <= t->off_mask; i++) {
		struct hs_off_task *rec = hs_off_rec(t, i);
		struct hs_slot *slot;

		if (t->off_keys[i] <= HS_OFF_GONE)
			continue;
		t->off_keys[i] = HS_OFF_FREE;
		slot = t->slot_of_cpu[rec->cpu];
		/* hs_drop() and hs_fill() name the CPU they run on. */
		preempt_disable();
		hotstack_off_count(s, slot, &slot->tab[s->active], rec, now - rec->t0);
		preempt_enable();
		if (!(i % 1024))
			cond_resched();
	}
}
#else
int hotstack_off_cpu_init(void)
{
	return 0;
}

bool hotstack_off_cpu_supported(void)
{
	return false;
}

int hotstack_off_cpu_start(struct hotstack_session *s)
{
	return -EOPNOTSUPP;
}

void hotstack_off_cpu_stop(struct hotstack_session *s)
{
}
#endif
