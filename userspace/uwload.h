/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: loading unwind tables into a session (uapi "Unwind
 * tables"). For a process: its executable mappings from /proc/PID/maps,
 * each binary's table built once (unwind.h) and loaded with
 * HOTSTACK_IOC_ADD_TABLE, then all its mappings with HOTSTACK_IOC_SET_MAPS.
 * Processes come one by one, all of /proc, or from the module's misses
 * (HOTSTACK_IOC_UNWIND_MISSES), polled by a thread of the loader's own.
 *
 * The loader is bound to one session's file, configured with
 * HOTSTACK_CFG_USER_TABLES. Its calls may come from any thread: they are
 * serialized. Its thread uses the file and the loader only.
 */
#ifndef HOTSTACK_UWLOAD_H
#define HOTSTACK_UWLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <linux/hotstack.h>

/*
 * The module's ioctls, each returning 0 or -errno: the session's by
 * default, stand-ins in unit tests.
 */
struct hs_uw_ops {
	int (*add_table)(void *ctx, int fd, struct hotstack_unwind_table *t);
	int (*set_maps)(void *ctx, int fd, struct hotstack_unwind_maps *m);
	int (*misses)(void *ctx, int fd, struct hotstack_unwind_misses *m);
	void *ctx;
};

/* Why a binary (or a mapping, for HS_UWN_UNREADABLE) has no table. */
enum hs_uw_why {
	HS_UWN_NO_CFI,		/* no .eh_frame, no .debug_frame (or no FDE in its code) */
	HS_UWN_ELF32,		/* a 32-bit ELF: its process is walked by frame pointers */
	HS_UWN_MACHINE,		/* not this machine's code */
	HS_UWN_TOO_BIG,		/* past HOTSTACK_UW_MAX_ROWS or _MAX_RULES */
	HS_UWN_NOSPC,		/* the module's memory limits (ENOSPC, EDQUOT, ENOMEM) */
	HS_UWN_REFUSED,		/* the module refused it (EINVAL) */
	HS_UWN_UNREADABLE,	/* a mapping whose file could not be opened or read */
	HS_UWN_WHYS
};

/* What the loader did since hs_uw_new(). */
struct hs_uw_stats {
	uint64_t tables;	/* tables built and loaded */
	uint64_t rows, rules;	/* in them */
	uint64_t bytes;		/* kernel memory they take (ADD_TABLE's bytes) */
	uint64_t no_table[HS_UWN_WHYS];	/* binaries without one, by why */
	uint64_t processes;	/* SET_MAPS done */
	uint64_t maps;		/* mappings sent by them */
	uint64_t maps_cut;	/* mappings past HOTSTACK_UW_MAX_MAPS left out */
	uint64_t gone;		/* processes that exited before they were loaded */
	uint64_t denied;	/* processes whose maps or stacks we may not read */
	uint64_t estale;	/* maps read again: a process exec'd or unmapped meanwhile */
	uint64_t misses;	/* processes UNWIND_MISSES returned */
	uint64_t lost;		/* misses the module could not keep (all reloaded) */
	uint64_t polls;		/* UNWIND_MISSES calls */
	uint64_t errors;	/* other failures; the last one: */
	int last_error;		/* -errno */
	double build_ms;	/* time spent building tables */
};

struct hs_uwload;

/*
 * A loader for session file @fd; @ops NULL: the module's ioctls (ops are
 * copied). NULL when out of memory.
 */
struct hs_uwload *hs_uw_new(int fd, const struct hs_uw_ops *ops);

/* Stops its thread, frees it. The tables stay in the session. */
void hs_uw_free(struct hs_uwload *l);

/*
 * The session's processes (record -p): what a lost miss and
 * hs_uw_load_all() reload, instead of all of /proc. @nr 0: all. 0 or -ENOMEM.
 */
int hs_uw_set_pids(struct hs_uwload *l, const uint32_t *pids, size_t nr);

/*
 * Load process @pid: the tables of its binaries not loaded yet, and its
 * executable mappings. Returns 0; -ESRCH: it has gone (nothing to
 * report); -EPERM: not ours to read; -ESTALE: its mappings kept changing;
 * other -errno from the module (EINVAL: the session does not take tables).
 */
int hs_uw_load_pid(struct hs_uwload *l, uint32_t pid);

/*
 * The table of the binary at @path, built and loaded now (once: a process
 * that maps it later finds it ready; record's command before it runs).
 * 0; -ENOEXEC: no table to make (not ELF, no call-frame information, the
 * limits); -errno.
 */
int hs_uw_preload(struct hs_uwload *l, const char *path);

/* hs_uw_load_pid() with @maps as /proc/@pid/maps (read once: no ESTALE retry). */
int hs_uw_load_maps(struct hs_uwload *l, uint32_t pid, const char *maps);

/*
 * Every process of /proc (or of hs_uw_set_pids()). Returns how many were
 * loaded, or -errno when the module refused (the processes that had gone
 * or were not ours are skipped).
 */
int hs_uw_load_all(struct hs_uwload *l);

/*
 * Take the module's misses and load those processes (all of them again
 * when some were lost). Returns the processes taken, or -errno.
 */
int hs_uw_poll(struct hs_uwload *l);

/*
 * A thread of its own runs hs_uw_poll() every @interval_ms until
 * hs_uw_stop(). 0, -EBUSY (running), -EINVAL, or -errno of creating it.
 */
int hs_uw_start(struct hs_uwload *l, unsigned int interval_ms);
void hs_uw_stop(struct hs_uwload *l);

/*
 * A copy (malloc'd) of the maps text @pid was last loaded from, of the
 * last HS_UW_TEXTS processes loaded; NULL: none kept. What the module
 * walked a process's stacks by, when it has exited since.
 */
char *hs_uw_maps_text(struct hs_uwload *l, uint32_t pid);

/* A copy of the loader's counters. */
void hs_uw_get_stats(struct hs_uwload *l, struct hs_uw_stats *s);

/* A short name of @why, for messages ("no-cfi", ...). */
const char *hs_uw_why_name(enum hs_uw_why why);

#endif
