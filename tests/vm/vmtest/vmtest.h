/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hs_vmtest, the in-guest test program (main.c: its subcommands): what
 * its areas share. Each area is a file of its own; lib.c holds the
 * helpers they all use.
 */
#ifndef HS_VMTEST_H
#define HS_VMTEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/hotstack.h>

#include "cgroup.h"
#include "events.h"
#include "netlink.h"
#include "profile.h"
#include "table.h"

struct map {
	void *base;
	size_t size;
	const struct hotstack_mmap_header *h;
};

/* What gen_walk() found in one generation of a mapping. */
struct gen_view {
	__u64 stacks;		/* places taken in the store: READY, DEAD (FILLING) */
	__u64 ready;		/* READY stacks */
	__u64 dead;		/* DEAD places: taken, frames not stored */
	__u64 frames;		/* the READY stacks' frames */
	__u64 shared;		/* READY stacks two CPUs or more count */
	__u64 unnamed;		/* READY stacks no CPU counts */
	__u64 counts;		/* count entries in use, every CPU's */
	__u64 max_cpu_entries;	/* the most count entries one CPU has */
	__u64 counted;		/* the count entries' counts added up */
	struct hotstack_cpu_stats sum;	/* samples, counted, drops: the CPUs' added up */
	unsigned int bad;	/* what was unsound in it */
};

/* The outermost frames of a system call and of a secondary CPU's idle task. */
#ifdef __aarch64__
#define SYSCALL_ENTRY	"el0t_64_sync"
#define IDLE_ENTRY	"__secondary_switched"
#else
#define SYSCALL_ENTRY	"entry_SYSCALL_64"
#define IDLE_ENTRY	"secondary_startup_64"
#endif

extern int failures;
extern struct hs_event_spec test_event;
extern bool fd_hw_event[];

/* lib.c */
void tap(bool cond, const char *fmt, ...);
int open_dev(void);
int xioctl(int fd, unsigned long cmd, void *arg);
void expect_errno(int got, int want, const char *what);
bool kernel_address_in(const char *text);
bool hw_event(void);
void default_config(struct hotstack_config *c);
int get_stats(int fd, struct hotstack_stats *st, __u32 flags);
int map_session(int fd, struct map *m);
bool map_layout_ok(const struct map *m, const struct hotstack_config *c, unsigned int nr_cpus,
		   const char *what);
const struct hotstack_store_stats *gen_store(const struct map *m, unsigned int gen);
const struct hotstack_stack *gen_stacks(const struct map *m, unsigned int gen);
const __u64 *gen_arena(const struct map *m, unsigned int gen);
const struct hotstack_cpu_stats *slot_stats(const struct map *m, unsigned int gen,
					    unsigned int slot);
const struct hotstack_count *cpu_counts(const struct map *m, unsigned int gen,
					unsigned int slot);
const struct hotstack_stack *count_stack(const struct map *m, unsigned int gen,
					 const struct hotstack_count *c);
bool gen_walk(const struct map *m, unsigned int gen, struct gen_view *v, const char *what);
char *read_all(int fd);
void check_invariant(int fd, const char *what);
void expect_cfg(int fd, const struct hotstack_config *c, int want, const char *what);
void expect_ioc(int fd, unsigned long cmd, void *arg, int want, const char *what);
long long cg_read(const char *cg, const char *file);
double now_s(void);
void msleep(unsigned int ms);
int write_file(const char *path, const char *text);
int set_online(unsigned int cpu, int on);
__u64 slot_samples(const struct map *m, unsigned int slot);
bool wait_for(bool (*cond)(void *), void *arg);
void busy_start(void);
void busy_stop(void);

/* device.c */
void test_getinfo(void);
void test_sessions(unsigned int max);
void test_open(const char *expect);
int runas(int argc, char **argv);
void test_config_errors(void);

/* engine.c */
bool workload_write(unsigned int depth, unsigned int patterns, unsigned int ms);
void run_workload(unsigned int depth, unsigned int patterns, unsigned int ms);
void fill_table(int fd, const char *what);
void test_shared(void);
void profile_workload(int fd, const struct hotstack_config *c, const char *what,
		      unsigned int depth, unsigned int patterns, unsigned int ms);
int split_frames(char *line, char **frames, int max);
void test_workload(unsigned int depth, unsigned int patterns, unsigned int ms,
		   unsigned int max_depth, bool collapse);
void test_hotplug(const char *event);
bool budget_acted(void *arg);
bool budget_looked(void *arg);
void test_budget(const char *event);
void test_hotplug_missed(void);
void test_offline_event(void);
void test_tablefull(void);

/* store.c */
void test_store(unsigned int ms);
void test_store_memory(void);
void test_unknown(void);
void test_forkregs(void);
void test_switchregs(void);
void test_badbpregs(void);
void test_precise(void);
void test_hardirq(void);

/* stress.c */
void test_stress_pmu(unsigned int seconds);
void test_stress(unsigned long rounds);

/* ustack.c */
void uspin(unsigned int ms);
void test_io_worker(void);
void test_exec(void);
void test_userstack(void);

/* offcpu.c */
__u64 mono_ns(clockid_t clk);
bool kallsyms_has(const char *name);
void test_offcpu(void);
void test_context(void);

/* delegated.c */
void test_delegated(pid_t other, pid_t capsp);
void test_quota_sessions(void);
void test_quota_use(void);
int uspin_caps(uid_t uid, gid_t gid, unsigned int ms);

/* events.c */
void test_events(void);
void test_rate(void);

/* lifecycle.c */
void test_lifecycle(void);
void test_memcg(const char *cg);
void test_unload_mapped(void);
void test_churn(unsigned int n);

/* read.c */
void test_mmap_race(void);
void test_read_live(void);

/* genl.c */
void test_genl_status(void);
void test_genl_events(void);
void test_genl_errors(void);
void test_genl_perm(bool member);
void test_genl_cred(void);
int unload(void);
void test_genl_dump(void);

/* symbols.c */
void test_symbols(unsigned int max_depth, const char *out_read, const char *out_mmap);

/* pty.c */
int pty_run(double seconds, const char *keys, const char *raw, char **cmd);

/* procs.c */
int hold_keys(void);
int nap(int ms, const char *file);
int cgns(char **argv);
void naps(int ms);
int cgnaps(int ms, const char *dir, int first, int n);

#endif
