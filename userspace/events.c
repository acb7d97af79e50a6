// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: perf's names of the events hotstack counts. */
#include <linux/hotstack.h>
#include <linux/perf_event.h>

#include "events.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} hs_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
};

const char *hs_event_name(uint32_t type, uint64_t config)
{
	size_t i;

	for (i = 0; i < sizeof(hs_events) / sizeof(hs_events[0]); i++)
		if (hs_events[i].type == type && hs_events[i].config == config)
			return hs_events[i].name;
	return type == PERF_TYPE_RAW ? "raw" : "unknown";
}

const char *hs_rate_str(uint32_t cfg_flags, uint64_t sample, char *buf, size_t len)
{
	if (cfg_flags & HOTSTACK_CFG_FREQ)
		snprintf(buf, len, "%llu Hz", (unsigned long long)sample);
	else
		snprintf(buf, len, "period %llu", (unsigned long long)sample);
	return buf;
}

const char *hs_drop_name(unsigned int reason)
{
	static const char *const names[HOTSTACK_DROP_MAX] = {
		[HOTSTACK_DROP_TABLE_FULL] = "table full",
		[HOTSTACK_DROP_ARENA_FULL] = "arena full",
		[HOTSTACK_DROP_FILTERED] = "filtered",
		[HOTSTACK_DROP_NESTED] = "nested",
		[HOTSTACK_DROP_NO_STACK] = "no stack",
	};

	return reason < HOTSTACK_DROP_MAX && names[reason] ? names[reason] : "unknown";
}
