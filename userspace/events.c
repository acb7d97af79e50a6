// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: perf's names of the events hotstack counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hotstack.h>
#include <linux/perf_event.h>

#include "events.h"
#include "netlink.h"

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

uint64_t hs_sum_drops(const __u64 *drops)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < HOTSTACK_DROP_MAX; i++)
		n += drops[i];
	return n;
}

const char *hs_drop_name(unsigned int reason)
{
	static const char *const names[HOTSTACK_DROP_MAX] = {
		[HOTSTACK_DROP_TABLE_FULL] = "table full",
		[HOTSTACK_DROP_ARENA_FULL] = "arena full",
		[HOTSTACK_DROP_FILTERED] = "filtered",
		[HOTSTACK_DROP_NESTED] = "nested",
		[HOTSTACK_DROP_NO_STACK] = "no stack",
		[HOTSTACK_DROP_COLLISION] = "collision",
		[HOTSTACK_DROP_SHORT_WAIT] = "short wait",
		[HOTSTACK_DROP_BUSY] = "busy",
	};

	return reason < HOTSTACK_DROP_MAX && names[reason] ? names[reason] : "unknown";
}

const char *hs_event_names(void)
{
	return "cycles, instructions, cache-misses, branch-misses, cpu-clock, task-clock, "
	       "page-faults, context-switches, rNNNN (raw, hex)";
}

int hs_parse_event(const char *spec, struct hs_event_spec *ev, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':'), *m;
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec), i;
	char *end;

	memset(ev, 0, sizeof(*ev));
	for (i = 0; i < sizeof(hs_events) / sizeof(hs_events[0]); i++) {
		if (strlen(hs_events[i].name) == len && !strncmp(spec, hs_events[i].name, len)) {
			ev->type = hs_events[i].type;
			ev->config = hs_events[i].config;
			break;
		}
	}
	if (i == sizeof(hs_events) / sizeof(hs_events[0])) {
		if (spec[0] != 'r' || len < 2) {
			snprintf(err, errlen, "unknown event '%.*s' (known: %s)", (int)len, spec,
				 hs_event_names());
			return -1;
		}
		errno = 0;
		ev->config = strtoull(spec + 1, &end, 16);
		if (errno || end != spec + len) {
			snprintf(err, errlen, "bad raw event '%.*s': want r and hex digits",
				 (int)len, spec);
			return -1;
		}
		ev->type = PERF_TYPE_RAW;
	}
	for (m = colon ? colon + 1 : ""; *m; m++) {
		switch (*m) {
		case 'p':
			ev->precise++;
			break;
		case 'k':
			ev->stacks |= HOTSTACK_STACK_KERNEL;
			break;
		case 'u':
			ev->stacks |= HOTSTACK_STACK_USER;
			break;
		case 'I':
			ev->exclude_idle = 1;
			break;
		default:
			snprintf(err, errlen, "unknown modifier '%c' in '%s' (known: p, pp, ppp, k, u, "
				 "I)", *m, spec);
			return -1;
		}
	}
	if (ev->precise > 3) {
		snprintf(err, errlen, "'%s': at most 3 p (precise levels 0-3)", spec);
		return -1;
	}
	if (ev->precise && ev->type == PERF_TYPE_SOFTWARE) {
		snprintf(err, errlen, "'%s': :p is for hardware events only", spec);
		return -1;
	}
	return 0;
}

int hs_parse_cpus(const char *list, uint64_t *words, unsigned int max_words,
		  unsigned int *nwords, char *err, size_t errlen)
{
	const char *s = list;
	unsigned long a, b, cpu;
	char *end;

	memset(words, 0, max_words * sizeof(*words));
	*nwords = 0;
	while (*s) {
		/* Digits only: strtoul() would take "-1" as ULONG_MAX. */
		if (*s < '0' || *s > '9')
			goto bad;
		errno = 0;
		a = strtoul(s, &end, 10);
		if (errno)
			goto bad;
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				goto bad;
			b = strtoul(s, &end, 10);
			if (errno || b < a)
				goto bad;
		}
		if (b >= (unsigned long)max_words * 64) {
			snprintf(err, errlen, "CPU %lu in '%s' is out of range", b, list);
			return -1;
		}
		for (cpu = a; cpu <= b; cpu++)
			words[cpu / 64] |= 1ULL << (cpu % 64);
		if (b / 64 + 1 > *nwords)
			*nwords = b / 64 + 1;
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		s = end;
	}
	if (*nwords)
		return 0;
bad:
	snprintf(err, errlen, "bad CPU list '%s': want e.g. 0,2-3", list);
	return -1;
}

/* What happened, as watch prints it after "HH:MM:SS.mmm session ID ". */
void hs_format_event(const struct hs_event *ev, char *buf, size_t len)
{
	size_t n = 0;

	switch (ev->event) {
	case HOTSTACK_EV_STARTED:
		n += snprintf(buf + n, len - n, "started");
		break;
	case HOTSTACK_EV_STOPPED:
		n += snprintf(buf + n, len - n, "stopped");
		break;
	case HOTSTACK_EV_CLOSED:
		n += snprintf(buf + n, len - n, "closed");
		break;
	case HOTSTACK_EV_TABLE_FILL:
		n += snprintf(buf + n, len - n, "table %llu%% full on CPU %d",
			      (unsigned long long)ev->value, ev->cpu);
		break;
	case HOTSTACK_EV_THROTTLED:
		n += snprintf(buf + n, len - n, "throttled by perf on CPU %d "
			      "(kernel.perf_event_max_sample_rate)", ev->cpu);
		break;
	case HOTSTACK_EV_DROP:
		n += snprintf(buf + n, len - n, "first drop: %s on CPU %d",
			      hs_drop_name(ev->value), ev->cpu);
		break;
	case HOTSTACK_EV_CPU_MISSED:
		n += snprintf(buf + n, len - n, "CPU %d came online without a table: not sampled "
			      "(configure again to include it)", ev->cpu);
		break;
	case HOTSTACK_EV_CPU_FAILED:
		n += snprintf(buf + n, len - n, "CPU %d not sampled: its event failed (%s)",
			      ev->cpu, strerror((int)ev->value));
		break;
	case HOTSTACK_EV_RATE:
		n += snprintf(buf + n, len - n, "budget: CPU %d's period is now %llu times the one "
			      "asked for (each sample counts %llu)", ev->cpu,
			      (unsigned long long)ev->value, (unsigned long long)ev->value);
		break;
	default:
		n += snprintf(buf + n, len - n, "event %u value %llu", ev->event,
			      (unsigned long long)ev->value);
	}
	if (ev->suppressed && n < len)
		snprintf(buf + n, len - n, " (%llu earlier events suppressed by the rate limit)",
			 (unsigned long long)ev->suppressed);
}
