/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: perf's names of the events hotstack counts. */
#ifndef HOTSTACK_EVENTS_H
#define HOTSTACK_EVENTS_H

#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

/* perf's name of (type, config), or "raw" / "unknown". */
const char *hs_event_name(uint32_t type, uint64_t config);

/* "1000 Hz" or "period 100000" into @buf. */
const char *hs_rate_str(uint32_t cfg_flags, uint64_t sample, char *buf, size_t len);

/* An event as perf spells it on the command line. */
struct hs_event_spec {
	uint32_t type;
	uint64_t config;
	uint32_t precise;	/* :p, :pp, :ppp */
	uint32_t stacks;	/* HOTSTACK_STACK_* from :k / :u, 0 if neither */
	int exclude_idle;	/* :I, not the idle task's samples */
};

/*
 * Parse NAME[:MODS] or rHEX[:MODS] (MODS: p, pp, ppp, k, u, I, in any
 * combination). Returns 0, or -1 with the reason in @err.
 */
int hs_parse_event(const char *spec, struct hs_event_spec *ev, char *err, size_t errlen);

/* The events hotstack knows, comma-separated, for error messages. */
const char *hs_event_names(void);

/*
 * Parse a CPU list ("0,2-5") into a bitmap of @max_words words; sets
 * *nwords to the words used. Returns 0, or -1 with the reason in @err.
 */
int hs_parse_cpus(const char *list, uint64_t *words, unsigned int max_words,
		  unsigned int *nwords, char *err, size_t errlen);

/* The sum of HOTSTACK_DROP_MAX drop counters. */
uint64_t hs_sum_drops(const __u64 *drops);

/* Name of a drop reason (HOTSTACK_DROP_*), as the tool prints it. */
const char *hs_drop_name(unsigned int reason);

/* An event of the module's netlink group, as netlink.h decodes it. */
struct hs_event;

/* What hotstack watch prints for @ev after the time stamp and session ID (record too). */
void hs_format_event(const struct hs_event *ev, char *buf, size_t len);

#endif
