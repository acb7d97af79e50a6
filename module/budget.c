// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: the CPU budget (--budget): what a sample costs, the weight W
 * each CPU's rate is divided by to fit, and the worker that re-derives it
 * about once a second.
 */
#include <linux/cpumask.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/workqueue.h>

#include "cost.h"
#include "hotstack.h"

/*
 * The cost of a sample of @s outside the handler (the interrupt's entry
 * and exit), for its budget: for the off-CPU probe, the tracepoint's call
 * of it; with wall-clock time's clock, every run's (its switches' too:
 * more, not less).
 */
u64 hs_floor_ns(const struct hotstack_session *s)
{
	return s->off_cpu && !s->wall ? HS_SWITCH_FLOOR_NS :
	       min(READ_ONCE(hotstack_sample_floor_ns), 1000000U);
}

/*
 * What a handler run of each path cost on average, in the session that
 * last stopped with timed runs (ns; 0: none yet): where a budget starts.
 */
static u64 hs_cost_seen[HS_PATH_ANY + 1];

/* A handler run's cost (ns) for @s's budget before @sl has timed one. */
static u64 hs_cost_guess(const struct hotstack_session *s, const struct hs_slot *sl)
{
	u64 seen = READ_ONCE(hs_cost_seen[s->path]);

	if (sl->b_cost)
		return sl->b_cost;	/* this configuration's own, from its last run */
	if (seen)
		return seen;
	/* Nothing timed yet: a microsecond, and 30 ns for each frame it may walk. */
	return s->path == HS_PATH_IP ? 1000 :
	       1000 + 30ULL * s->cfg.max_depth * hweight32(s->cfg.stacks);
}

/*
 * The weight W a budget starts @sl at: the rate asked for at the cost
 * known (hs_cost_guess() and the floor) within 95% of the budget, as
 * hs_budget_slot() would make it. An event sampled by a period of events
 * has no known rate: W 1, until the first window (10 ms) has measured it.
 */
u32 hs_budget_start(struct hotstack_session *s, struct hs_slot *sl)
{
	u64 rate = hs_config_rate(&s->cfg);
	u64 floor = hs_floor_ns(s);
	u64 budget = 19ULL * s->cfg.budget_ppm * 1000;	/* 20 x 95% of a second's */

	sl->b_cost = min_t(u64, hs_cost_guess(s, sl), NSEC_PER_MSEC);
	if (!s->cfg.budget_ppm || !rate)
		return 1;
	return clamp_t(u64, div64_u64(min_t(u64, rate, NSEC_PER_SEC) * (sl->b_cost + floor) * 20 +
				      budget - 1, budget),
		       1, hs_max_weight(&s->cfg));
}

/* A session's average handler run, for the budgets of the next (hs_cost_seen). */
void hs_cost_note(struct hotstack_session *s)
{
	u64 timed = 0, ns = 0;
	unsigned int i;

	for (i = 0; i < s->tabs.nr_slots; i++) {
		timed += s->tabs.slots[i].timed;
		ns += s->tabs.slots[i].timed_ns;
	}
	if (timed)
		WRITE_ONCE(hs_cost_seen[s->path], div64_u64(ns, timed));
}

/*
 * The budget's look at slot @sl over the last @dt ns: its samples and their
 * cost (handler time plus @floor); and, when the next window at this rate
 * would spend more (or much less) than 95% of @budget_ns, a new weight W:
 * the period times W, so that a sample stands for W. Returns the time spent.
 */
static u64 hs_budget_slot(struct hotstack_session *s, struct hs_slot *sl, u64 budget_ns,
			  u64 floor, u64 *n, u64 *changes)
{
	u64 taken = local64_read(&sl->taken);
	u64 timed = READ_ONCE(sl->timed), ns = READ_ONCE(sl->timed_ns);
	u32 w = sl->tab[0].weight, nw;
	u64 spent;

	/*
	 * The window's timed runs, with the cost known before them counted
	 * as HS_COST_PRIOR runs: a short first window times one or two.
	 */
	if (timed != sl->b_timed)
		sl->b_cost = div64_u64(ns - sl->b_ns + sl->b_cost * HS_COST_PRIOR,
				       timed - sl->b_timed + HS_COST_PRIOR);
	*n = taken - sl->b_taken;
	sl->b_taken = taken;
	sl->b_timed = timed;
	sl->b_ns = ns;
	spent = *n * (sl->b_cost + floor);
	if ((!sl->event && !s->off_cpu) || !budget_ns)
		return spent;
	/* W' = W * spent / (0.95 budget), rounded up; the same W when it holds. */
	nw = clamp_t(u64, div64_u64(min_t(u64, spent, 10ULL * NSEC_PER_SEC) * w * 20 +
				    budget_ns * 19 - 1, budget_ns * 19),
		     1, hs_max_weight(&s->cfg));
	/*
	 * The short windows of the first second lower W a step, or a
	 * quarter of it, at a time: their few samples (some filtered out,
	 * cheap) may say too little; a W a stall raised comes down in them.
	 */
	if (nw < w && s->budget_ms < 1000)
		nw = max(nw, w - max(1U, w / 4));
	if (nw == w)
		return spent;
	/*
	 * perf refuses a frequency past kernel.perf_event_max_sample_rate,
	 * which it lowers itself when its interrupts take long: then the
	 * next larger W it takes, doubling (the rate lower than the budget
	 * needs). A lower W it refuses stays as it was. The off-CPU probe
	 * reads its W from the table at each switch-out.
	 */
	while (sl->event && perf_event_period(sl->event, hs_weighted_period(&s->cfg, nw))) {
		if (!hs_freq_event(&s->cfg) || nw < w || nw == hs_max_weight(&s->cfg))
			return spent;
		nw = min_t(u64, 2ULL * nw, hs_max_weight(&s->cfg));
	}
	if (sl->event)
		hotstack_jitter_set(sl, sl->event);
	WRITE_ONCE(sl->tab[0].weight, nw);
	WRITE_ONCE(sl->tab[1].weight, nw);
	(*changes)++;
	hotstack_event(s, HOTSTACK_EV_RATE, nw, s->tabs.hdr->slot_cpu[sl - s->tabs.slots]);
	return spent;
}

/* The budget's figures into the mmap header (each word on its own). */
void hs_budget_publish(struct hotstack_session *s)
{
	struct hotstack_mmap_header *h = s->tabs.hdr;

	WRITE_ONCE(h->rate_changes, s->rate_changes);
	WRITE_ONCE(h->sample_rate, s->sample_rate);
	WRITE_ONCE(h->cost_ns, s->cost_ns);
	WRITE_ONCE(h->window_ppm, s->window_ppm);
}

/*
 * The budget's worker, about once a second while RUNNING: each CPU's
 * rate re-derived from what its samples cost (hs_budget_slot()), and the
 * window's figures for the stats and the mmap header.
 */
void hs_budget_work(struct work_struct *work)
{
	struct hotstack_session *s = container_of(to_delayed_work(work),
						  struct hotstack_session, budget_work);
	u64 now = ktime_get_ns(), dt = now - s->budget_last;
	u64 floor = hs_floor_ns(s);
	u64 budget_ns = div_u64(dt * s->cfg.budget_ppm, 1000000);
	u64 n, n_all = 0, spent = 0, changes = s->rate_changes;
	unsigned int i, sampled = 0;
	u32 wmax = 1;

	s->budget_last = now;
	mutex_lock(&s->ev_lock);
	for (i = 0; i < s->tabs.nr_slots; i++) {
		struct hs_slot *sl = &s->tabs.slots[i];

		spent += hs_budget_slot(s, sl, budget_ns, floor, &n, &changes);
		n_all += n;
		/* The off-CPU probe runs on every online CPU that has a table. */
		if (sl->event || (s->off_cpu && cpu_online(s->tabs.hdr->slot_cpu[i]))) {
			sampled++;
			wmax = max(wmax, sl->tab[0].weight);
		}
	}
	mutex_unlock(&s->ev_lock);
	WRITE_ONCE(s->sample_rate, dt ? mul_u64_u64_div_u64(n_all, NSEC_PER_SEC, dt) : 0);
	WRITE_ONCE(s->cost_ns, n_all ? div64_u64(spent, n_all) : 0);
	WRITE_ONCE(s->window_ppm, dt && sampled ?
		   mul_u64_u64_div_u64(spent, 1000000, dt * sampled) : 0);
	WRITE_ONCE(s->max_weight, wmax);
	/* The window's figures before the change count that tells of them. */
	smp_wmb();
	WRITE_ONCE(s->rate_changes, changes);
	hs_budget_publish(s);
	/* Short windows first: 10 ms, doubling up to a second. */
	s->budget_ms = min(2 * s->budget_ms, 1000U);
	queue_delayed_work(system_unbound_wq, &s->budget_work, msecs_to_jiffies(s->budget_ms));
}

/* A budget's worker, first after 10 ms, once the session runs. */
void hs_budget_begin(struct hotstack_session *s)
{
	if (!s->cfg.budget_ppm)
		return;
	s->budget_last = ktime_get_ns();
	s->budget_ms = 10;
	queue_delayed_work(system_unbound_wq, &s->budget_work, msecs_to_jiffies(10));
}
