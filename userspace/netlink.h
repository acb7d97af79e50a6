/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: the "hotstack" generic netlink family, through libmnl. */
#ifndef HOTSTACK_NETLINK_H
#define HOTSTACK_NETLINK_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/hotstack.h>

struct mnl_socket;
struct nlmsghdr;

struct hs_genl {
	struct mnl_socket *nl;
	uint16_t family;	/* resolved family ID */
	uint32_t mcgrp;		/* ID of the "events" group */
	uint32_t portid;
	uint32_t seq;
	char error[256];	/* the kernel's extended ACK message, if any */
};

/* One session, as HOTSTACK_CMD_GET reports it. */
struct hs_status {
	bool configured;	/* the configuration and counters below are set */
	uint32_t id, owner, state, event_type, flags, stacks, max_depth, keys, nr_cpus;
	uint32_t fill_pct;
	uint64_t event_config, sample, generation, elapsed_ns, samples, counted;
	__u64 drops[HOTSTACK_DROP_MAX];
	uint64_t nmi_samples, truncated, entries, capacity, cost_ns, overhead_ppm;
	uint32_t table_entries, cpu_entries, cpus_sampled, cpus_missed;
	uint64_t arena_frames;
	/* With a budget (budget_ppm != 0): the last window's figures. */
	uint32_t budget_ppm, weight;
	uint64_t sample_rate, window_ppm, rate_changes;
	/* With unwind tables (HOTSTACK_CFG_USER_TABLES): their memory, the walks. */
	uint64_t uw_bytes, uw_walks, uw_complete;
	uint64_t memory;		/* bytes of its tables and records (0: not said) */
};

/* One multicast event. */
struct hs_event {
	uint32_t id, event;
	uint64_t value;
	int32_t cpu;		/* -1: not about one CPU */
	uint64_t suppressed;
};

/*
 * Open a socket and resolve the family. On failure prints what went wrong
 * and how to fix it, and returns -1.
 */
int hs_genl_open(struct hs_genl *g);
void hs_genl_close(struct hs_genl *g);

/*
 * GET: every session (@id 0) or one. Calls @cb for each; returns 0 or
 * -errno (g->error holds the kernel's message, if it sent one).
 */
int hs_genl_status(struct hs_genl *g, uint32_t id,
		   void (*cb)(const struct hs_status *, void *), void *data);

/* hs_genl_open() that prints nothing when it fails. */
int hs_genl_quiet_open(struct hs_genl *g);

/* Join the events group. Returns 0 or -errno. */
int hs_genl_subscribe(struct hs_genl *g);

/*
 * Receive one batch of events (blocking, or not with _nowait) and call @cb
 * for each. Returns the bytes received, 0 when none waited (_nowait), or
 * -errno.
 */
int hs_genl_read_events(struct hs_genl *g, void (*cb)(const struct hs_event *, void *),
			void *data);
int hs_genl_read_events_nowait(struct hs_genl *g, void (*cb)(const struct hs_event *, void *),
			       void *data);

/*
 * Call @cb for each event (hs_genl_subscribe() first) until @stop becomes
 * true (a signal handler sets it) or an error. Returns 0 or -errno.
 */
int hs_genl_watch(struct hs_genl *g, void (*cb)(const struct hs_event *, void *), void *data,
		  volatile int *stop);

/* Start a request of family @type in @buf: netlink and genetlink headers. */
struct nlmsghdr *hs_genl_header(struct hs_genl *g, char *buf, uint16_t type, uint16_t flags,
				uint8_t cmd, uint8_t version);

/*
 * Send @nlh (a request the caller built, for tests of malformed input) and
 * return the kernel's answer: 0 or -errno, with its message in g->error.
 */
int hs_genl_request(struct hs_genl *g, struct nlmsghdr *nlh);

#endif
