/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: perf's names of the events hotstack counts. */
#ifndef HOTSTACK_EVENTS_H
#define HOTSTACK_EVENTS_H

#include <stdint.h>
#include <stdio.h>

/* perf's name of (type, config), or "raw" / "unknown". */
const char *hs_event_name(uint32_t type, uint64_t config);

/* "1000 Hz" or "period 100000" into @buf. */
const char *hs_rate_str(uint32_t cfg_flags, uint64_t sample, char *buf, size_t len);

/* Name of a drop reason (HOTSTACK_DROP_*), as the tool prints it. */
const char *hs_drop_name(unsigned int reason);

#endif
