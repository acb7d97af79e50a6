/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf_event_attr of a session's events, from its configuration.
 * Built into the module and into a host unit test (tests/unit/test_attr.c),
 * which checks it for every event the tool offers.
 */
#ifndef _HOTSTACK_ATTR_H
#define _HOTSTACK_ATTR_H

#ifdef __KERNEL__
#include <linux/perf_event.h>
#include <linux/string.h>
#else
#include <string.h>
#include <linux/perf_event.h>
#endif
#include <linux/hotstack.h>

static inline void hs_event_attr(const struct hotstack_config *c, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = c->event_type;
	attr->size = sizeof(*attr);
	attr->config = c->event_config;
	attr->freq = !!(c->flags & HOTSTACK_CFG_FREQ);
	attr->sample_period = c->sample;	/* union with sample_freq */
	attr->precise_ip = c->precise;
	/*
	 * Every precise sample reaches the overflow handler. With a fixed
	 * period and neither wakeup_events nor sample_type bits, Intel's
	 * PEBS batches records (PERF_X86_EVENT_LARGE_PEBS, intel_pmu_hw_config()
	 * on 6.1 to 7.x): all but a drained buffer's last go to
	 * perf_event_output(), which drops them silently for a counter without
	 * a ring buffer, and those drained at a context switch never reach
	 * the handler. wakeup_events (no ring buffer: no wakeups) rules that out.
	 */
	attr->wakeup_events = c->precise ? 1 : 0;
	/*
	 * The host's kernel, not a guest's, as perf's own default: on 7.x
	 * (CONFIG_PERF_GUEST_MEDIATED_PMU) a hardware event that counts in
	 * guests is refused while a KVM guest owns the PMU, and keeps one
	 * from starting while it runs. Software events have no guest mode.
	 */
	attr->exclude_guest = c->event_type != PERF_TYPE_SOFTWARE;
}

#endif
