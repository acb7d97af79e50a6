/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hotstack: in-kernel aggregating stack sampler -- user ABI.
 *
 * This header is the manual of the ABI between the hotstack module and
 * its users. Within an ABI version it only grows; HOTSTACK_ABI_VERSION
 * says when it changed incompatibly (2: one store of stacks for all CPUs,
 * in place of a table per CPU).
 *
 * Device
 * ------
 * /dev/hotstack is a misc device, root-only unless the module parameter
 * "group" names a group whose members may open it too. Each open file is
 * one session: its configuration, counters and tables live and die with
 * the file.
 *
 * Privilege
 * ---------
 * CAP_PERFMON (or CAP_SYS_ADMIN) holders may use everything. Members of
 * the module's group without it (delegated users) may sample kernel
 * stacks of the whole system and read them as symbolized text (read()),
 * with these limits, checked at CONFIGURE (EPERM) or while sampling:
 *   - no raw PMU events (PERF_TYPE_RAW);
 *   - at most group_max_freq samples a second per CPU (module parameter,
 *     default 1000; hotstack_info.max_freq says the caller's limit): as a
 *     frequency, or as a cpu-clock / task-clock period of at least
 *     10^9 / group_max_freq ns; other events only by frequency;
 *   - user stacks only of processes whose real, effective and saved user
 *     IDs are the configurer's and which are not setuid (not dumpable):
 *     ptrace's basic rule. Other processes' samples keep their kernel
 *     stack and are marked HOTSTACK_ENTRY_USER_HIDDEN;
 *   - no mmap (the tables hold raw kernel addresses: CAP_PERFMON or
 *     CAP_SYSLOG);
 *   - generic netlink GET, but not the events group (CAP_SYS_ADMIN);
 *   - quotas per user (the real uid that opened the session): at most
 *     group_max_sessions sessions open (default 4), group_max_memory_mb
 *     of tables (default 64) and group_max_freq samples a second per CPU
 *     summed over its configured sessions; and all delegated users
 *     together at most three quarters of max_sessions and max_memory_mb,
 *     the rest kept for CAP_PERFMON holders. Past one: EDQUOT (open,
 *     CONFIGURE); hotstack_info's user_* fields say the caller's.
 * The perf events are created by kernel workers, so perf's own paranoia
 * (kernel.perf_event_paranoid) is not applied: the rules above replace it
 * for delegated users, whom an administrator chose by naming the group.
 *
 * Memory
 * ------
 * CONFIGURE makes tables for the CPUs of its mask that are online then
 * (a CPU that comes online later is counted in hotstack_stats.cpus_missed
 * and reported, not sampled): per generation, a store of distinct stacks
 * (a page of counters, 48 bytes a stack and 8 a frame, rounded up to a
 * page) and per CPU a count table (its counters, 16 bytes an entry,
 * rounded up to 128 bytes), plus a header; with HOTSTACK_CFG_USER_TABLES
 * each such CPU also caches the unwind rules its walks found (256 of 24
 * bytes, not mapped). All sessions together stay under max_memory_mb
 * (E2BIG), and the memory is charged to the memory cgroup of the process
 * that configures (ENOMEM past its limit; no OOM kill).
 *
 * ioctl conventions
 * -----------------
 * Every ioctl argument is a struct whose first field is "size": the
 * caller sets it to sizeof() the struct as the caller's header defines
 * it. The module accepts any size from the first published version of
 * the struct (HOTSTACK_*_SIZE_VER0) up to one page:
 *   - a caller struct larger than the module's is accepted only if the
 *     bytes the module does not know are zero (else E2BIG);
 *   - a caller struct smaller than the module's is zero-extended.
 * Output is written back up to min(caller size, module size) bytes.
 * The size encoded in the ioctl command number is ignored; "size" rules.
 *
 * Every "flags" bit not defined here and every "reserved" field must be
 * zero on input (else EINVAL), so that they can gain meaning later.
 * Unknown commands fail with ENOTTY.
 */
#ifndef _UAPI_LINUX_HOTSTACK_H
#define _UAPI_LINUX_HOTSTACK_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped when the ABI changes incompatibly: 2, the store (see "mmap"). */
#define HOTSTACK_ABI_VERSION	2

/* Deepest stack, in frames, a session may ask for. */
#define HOTSTACK_MAX_DEPTH	1024

/**
 * struct hotstack_info - HOTSTACK_IOC_GET_INFO: what this module offers
 * @size:	in: sizeof(struct hotstack_info)
 * @flags:	in: must be 0
 * @abi_version: out: HOTSTACK_ABI_VERSION of the module
 * @max_sessions: out: how many sessions may be open at once
 *		(module parameter max_sessions)
 * @nr_sessions: out: how many sessions are open now, this one included
 * @max_depth:	out: deepest stack a session may ask for, in frames
 * @max_memory:	out: bytes all sessions' tables may take together
 *		(module parameter max_memory_mb)
 * @features:	out: HOTSTACK_FEAT_* bits; bits not defined are 0
 * @memory_used: out: bytes all sessions' tables take now (of @max_memory)
 * @max_freq:	out: highest frequency (samples per second per CPU) the
 *		caller may ask for: HOTSTACK_MAX_FREQ with CAP_PERFMON, else
 *		the module parameter group_max_freq (see Privilege)
 * @pad:	out: 0
 * @reserved:	in: must be 0; out: 0
 * @user_max_sessions: out: sessions the caller's user may hold open
 *		(module parameter group_max_sessions); 0 for a caller with
 *		CAP_PERFMON, who has no quota (this and the fields below)
 * @user_sessions: out: sessions the caller's user holds open
 * @user_max_memory: out: bytes of tables the caller's user may hold
 *		(module parameter group_max_memory_mb)
 * @user_memory_used: out: bytes of tables the caller's user holds
 * @user_freq_used: out: samples a second per CPU of the caller's user's
 *		configured sessions, summed: at most @max_freq
 * @pad2:	out: 0
 * @max_unwind:	out: bytes all sessions' unwind tables may take together
 *		(module parameter max_unwind_mb)
 * @unwind_used: out: bytes they take now
 *
 * On input only @size, @flags and @reserved are read; the out fields
 * are ignored (a struct can be passed again as it came back). Works in
 * any session state and never changes one. A caller that passes the
 * first published size (HOTSTACK_INFO_SIZE_VER0) gets the fields up to
 * @reserved.
 */
struct hotstack_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 max_sessions;
	__u32 nr_sessions;
	__u32 max_depth;
	__u64 max_memory;
	__u64 features;
	__u64 memory_used;
	__u32 max_freq;
	__u32 pad;
	__u64 reserved[2];
	__u32 user_max_sessions;
	__u32 user_sessions;
	__u64 user_max_memory;
	__u64 user_memory_used;
	__u32 user_freq_used;
	__u32 pad2;
	__u64 max_unwind;
	__u64 unwind_used;
};

#define HOTSTACK_INFO_SIZE_VER0	72	/* sizeof first published */
#define HOTSTACK_INFO_SIZE_VER1	104	/* + the caller's quota */
#define HOTSTACK_INFO_SIZE_VER2	120	/* + unwind tables' memory */

/* hotstack_info.features */
#define HOTSTACK_FEAT_USER_TABLES	_BITUL(0) /* HOTSTACK_CFG_USER_TABLES and its ioctls */
#define HOTSTACK_FEAT_CGROUP_PATH	_BITUL(1) /* HOTSTACK_IOC_CGROUP_PATH, read()'s paths */
#define HOTSTACK_FEAT_WAKERS		_BITUL(2) /* HOTSTACK_CFG_WAKERS */

/*
 * Sessions
 * --------
 * A session moves through these states (reported in hotstack_stats.state
 * and in the mmap header):
 *
 *   open() -> NEW --CONFIGURE--> READY --START--> RUNNING --STOP--> READY
 *
 * CONFIGURE is allowed in NEW and READY (it replaces the configuration and
 * the tables), START only in READY, STOP only in RUNNING; anything else is
 * EBUSY (running) or EINVAL (not configured). RESET and SNAPSHOT work in
 * READY and RUNNING. close() stops and frees everything.
 */
enum hotstack_state {
	HOTSTACK_STATE_NEW = 0,
	HOTSTACK_STATE_READY = 1,
	HOTSTACK_STATE_RUNNING = 2,
};

/* hotstack_config.flags */
#define HOTSTACK_CFG_FREQ		_BITUL(0) /* sample is a frequency in Hz */
#define HOTSTACK_CFG_PID		_BITUL(1) /* count only tgid == pid */
#define HOTSTACK_CFG_EXCLUDE_IDLE	_BITUL(2) /* no samples of the idle task */
#define HOTSTACK_CFG_COLLAPSE		_BITUL(3) /* collapse direct recursion */
#define HOTSTACK_CFG_TASK		_BITUL(4) /* events on @pid's tasks, inherited */
#define HOTSTACK_CFG_OFF_CPU		_BITUL(5) /* time off the CPU, not samples */
#define HOTSTACK_CFG_USER_TABLES	_BITUL(6) /* user stacks by unwind tables */
#define HOTSTACK_CFG_OFF_NEW		_BITUL(7) /* off-CPU: no waits in progress at START */
#define HOTSTACK_CFG_WAKERS		_BITUL(8) /* off-CPU: each sleep keyed by its waker too */
#define HOTSTACK_CFG_ALL		0x1ffU

/* hotstack_config.stacks */
#define HOTSTACK_STACK_KERNEL		_BITUL(0)
#define HOTSTACK_STACK_USER		_BITUL(1)

/* hotstack_config.keys: dimensions counted apart besides the stack */
#define HOTSTACK_KEY_TGID		_BITUL(0)
#define HOTSTACK_KEY_COMM		_BITUL(1)
#define HOTSTACK_KEY_CONTEXT		_BITUL(2)
#define HOTSTACK_KEY_CGROUP		_BITUL(3)
#define HOTSTACK_KEY_ALL		0xfU

/* cgroups a CONFIGURE may name (hotstack_config.cgroups_ptr). */
#define HOTSTACK_MAX_CGROUPS		32

/* Bounds of hotstack_config.off_cpu_tasks (HOTSTACK_CFG_OFF_CPU). */
#define HOTSTACK_MIN_OFF_CPU_TASKS	16
#define HOTSTACK_MAX_OFF_CPU_TASKS	_BITUL(20)

/* Threads of a process HOTSTACK_CFG_TASK may attach to at START. */
#define HOTSTACK_MAX_TASKS		65536

/* Highest sampling frequency, per CPU, with HOTSTACK_CFG_FREQ. */
#define HOTSTACK_MAX_FREQ		100000

/* Bounds of hotstack_config.table_entries, cpu_entries and arena_frames. */
#define HOTSTACK_MIN_ENTRIES		16
#define HOTSTACK_MAX_ENTRIES		_BITUL(24)
#define HOTSTACK_MIN_ARENA		64
#define HOTSTACK_MAX_ARENA		_BITUL(28)

/**
 * struct hotstack_config - HOTSTACK_IOC_CONFIGURE: what and how to sample
 * @size:	sizeof(struct hotstack_config)
 * @flags:	HOTSTACK_CFG_*
 * @event_type:	PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE or PERF_TYPE_RAW
 * @precise:	perf's precise_ip, 0-3 (hardware and raw events only); a
 *		precise sample's kernel stack is its precise IP, then the
 *		callers of the code the overflow interrupted (x86 PEBS)
 * @event_config: PERF_TYPE_HARDWARE: PERF_COUNT_HW_CPU_CYCLES,
 *		_INSTRUCTIONS, _CACHE_MISSES or _BRANCH_MISSES;
 *		PERF_TYPE_SOFTWARE: PERF_COUNT_SW_CPU_CLOCK, _TASK_CLOCK,
 *		_PAGE_FAULTS or _CONTEXT_SWITCHES; PERF_TYPE_RAW: the raw
 *		PMU encoding
 * @sample:	events between samples (below 2^63), or samples per second
 *		per CPU with HOTSTACK_CFG_FREQ (at most HOTSTACK_MAX_FREQ)
 * @cpus_ptr:	user pointer to a CPU bitmap of @cpus_words __u64 words
 *		(bit n of word w is CPU 64 * w + n); 0 for every CPU
 * @cpus_words:	words at @cpus_ptr; 0 with @cpus_ptr 0. Bits past the
 *		last possible CPU must be 0.
 * @pid:	with HOTSTACK_CFG_PID, the process (tgid) whose samples count,
 *		as the opener's pid namespace numbers it; the others are
 *		counted as HOTSTACK_DROP_FILTERED. Else 0.
 *		With HOTSTACK_CFG_TASK too (and every CPU: @cpus_ptr 0), START
 *		makes one perf event for each thread of @pid instead of one
 *		per CPU, inherited by the threads and processes they start
 *		(perf's inherit): only they are sampled, other processes pay
 *		nothing and nothing is filtered out, and the process's children
 *		count too. At most HOTSTACK_MAX_TASKS threads (E2BIG).
 *		(HOTSTACK_CFG_EXCLUDE_IDLE likewise counts the idle task's
 *		samples as HOTSTACK_DROP_FILTERED.)
 * @stacks:	HOTSTACK_STACK_* to walk, at least one
 * @max_depth:	frames kept per stack, 1-HOTSTACK_MAX_DEPTH; a deeper stack
 *		keeps its innermost frames and is marked truncated. 1 samples
 *		the interrupted IP alone, without a walk (marked truncated).
 * @keys:	HOTSTACK_KEY_*: also tell samples apart by these
 * @table_entries: distinct stacks the session's store holds (one store
 *		for all CPUs, in each generation: see "mmap"): a power of two
 *		in [HOTSTACK_MIN_ENTRIES, HOTSTACK_MAX_ENTRIES]; 3/4 of them
 *		are used, as in every open-addressing table here
 * @arena_frames: frames the store keeps for all its stacks, in
 *		[HOTSTACK_MIN_ARENA, HOTSTACK_MAX_ARENA]
 * @budget_ppm:	0, or the CPU time sampling may take, in parts per million
 *		of each CPU (1-1000000): a cap on the rate @sample asks for,
 *		from the first sample. START derives each CPU's rate from the
 *		cost of a sample the module knows (handler time last measured
 *		plus the module's sample_floor_ns for the interrupt's entry
 *		and exit, which the handler cannot time); then a kernel worker
 *		does again from the samples each CPU took and their measured
 *		cost, after 10 ms and at doubling intervals up to a second: it
 *		makes the period (or divides the frequency by) a whole factor
 *		W >= 1, and each sample then counts W (entry counts, samples,
 *		counted, drops, nmi_samples, truncated): counts stay in units
 *		of the rate asked for (cpu-clock: W * period nanoseconds).
 *		Not with HOTSTACK_CFG_TASK (per-task events follow children,
 *		whose periods the module cannot change): EINVAL. Off-CPU
 *		sessions (any kind): the cost is the probe's, timed per
 *		switch (no floor), and W > 1 times one switch-out in W on
 *		average (the gaps between them drawn at random from
 *		[1, 2W - 1], at most 1 in 1024), each such wait counting
 *		W times its nanoseconds.
 * @nr_cgroups:	file descriptors at @cgroups_ptr, 0-HOTSTACK_MAX_CGROUPS
 * @cgroups_ptr: user pointer to @nr_cgroups __s32 file descriptors, each
 *		of a cgroup v2 directory (open(2) it O_RDONLY): only tasks in
 *		one of those cgroups or below count; the others' samples are
 *		counted as HOTSTACK_DROP_FILTERED, before any walk (perf's -G,
 *		its descendants included). 0 with @nr_cgroups 0. EBADF for a
 *		descriptor that is not of a cgroup v2 directory.
 * @off_cpu_tasks: with HOTSTACK_CFG_OFF_CPU, how many threads may be
 *		off the CPU and timed at once: a power of two in
 *		[HOTSTACK_MIN_OFF_CPU_TASKS, HOTSTACK_MAX_OFF_CPU_TASKS]
 *		(max_depth * 8 + 84 bytes each, counted as tables; with
 *		HOTSTACK_CFG_WAKERS one in 16 of them, at least 16, for the
 *		wakers seen and not yet consumed, max_depth * 8 + 48 bytes
 *		each, counted so too). Else 0.
 * @min_block_us: with HOTSTACK_CFG_OFF_CPU, waits shorter than this many
 *		microseconds are counted as HOTSTACK_DROP_SHORT_WAIT. Else 0.
 * @reserved:	must be 0
 * @unwind_mb:	with HOTSTACK_CFG_USER_TABLES, the MiB of unwind tables and
 *		mappings this session may load (ENOSPC past it; see "Unwind
 *		tables"); 0: up to the module's max_unwind_mb. Else 0.
 * @pad:	must be 0
 * @cpu_entries: distinct stacks each CPU counts (its count table: a
 *		stack's index in the store and its count, 16 bytes): a
 *		power of two in [HOTSTACK_MIN_ENTRIES, HOTSTACK_MAX_ENTRIES],
 *		or 0 (and with a struct of HOTSTACK_CONFIG_SIZE_VER1 or less)
 *		for @table_entries
 * @pad2:	must be 0
 *
 * Memory: each of the two generations holds the store, @table_entries *
 * 48 + @arena_frames * 8 bytes after a page of counters, and each
 * configured CPU's count table, @cpu_entries * 16 bytes after 320 of
 * counters (rounded up to 128), so that a stack seen on every CPU is kept
 * once (ABI 1 kept a table of stacks per CPU).
 *
 * Off-CPU sessions (HOTSTACK_CFG_OFF_CPU): instead of perf events, a
 * probe on the scheduler's sched_switch tracepoint, attached only while
 * the session runs. When a task the session watches leaves a CPU, its
 * stacks (as @stacks, @max_depth and @keys ask) are walked and kept with
 * the time; when it runs again, the time it was away is counted, in
 * nanoseconds, in the stack's entry of the table of the CPU it runs on,
 * with the entry's context the reason it left (HOTSTACK_CTX_SLEEP,
 * _UNINTERRUPTIBLE, _RUNQUEUE: always, whatever @keys says). The counters
 * are nanoseconds too: samples (time off the CPU that ended), counted,
 * drops, truncated; hotstack_stats.interrupts counts the switches the
 * probe handled, hotstack_stats.untimed the waits it could not time. A
 * wait is counted in the generation it ends in; STOP counts the waits
 * still going on, up to the STOP. Watched: every task but the idle
 * tasks, or those of HOTSTACK_CFG_PID's process (its threads), or with
 * HOTSTACK_CFG_TASK too those of the process and of every process forked
 * in one of them since START (a probe on sched_process_fork adds each
 * before it first runs; off_cpu_tasks processes at most, a process past
 * them counts once in untimed), or of the cgroups; waits that began
 * after START (with a budget, one in W of them: @budget_ppm), and those in
 * progress at START, from START (hotstack_stats.waits_at_start; not with
 * HOTSTACK_CFG_OFF_NEW: a command started for the session, whose wait
 * for its start is the tool's). Filtered
 * tasks cost the probe a check and are not timed at all
 * (HOTSTACK_DROP_FILTERED stays 0). @cpus_ptr must be 0 (every CPU:
 * waits move between CPUs). With @sample 0, no event: @event_type,
 * @event_config, @precise and the flags FREQ and EXCLUDE_IDLE must be 0
 * too. With @sample, wall-clock time: a PERF_COUNT_SW_CPU_CLOCK or
 * _TASK_CLOCK event on every CPU as well (@precise 0, @keys with
 * HOTSTACK_KEY_CONTEXT), filtered as the waits are, whose samples each
 * count, in nanoseconds, the time since the last sample or switch on
 * their CPU (the period, when the timer is on time; a late one's time is
 * not lost), and a watched task leaving the CPU counts the rest of its
 * stretch on its stack, under HOTSTACK_CTX_TASK (with a budget's W, the
 * switches timed count W times theirs): in the same tables as the waits,
 * a thread's time on the CPU and off it add up to its lifetime.
 * HOTSTACK_CFG_WAKERS (off-CPU only): a probe on sched_waking too, which
 * walks the stacks of the task waking a timed sleeper (its kernel stack,
 * and its user stack when it wakes from its own context); each sleep
 * (HOTSTACK_CTX_SLEEP, _UNINTERRUPTIBLE) is counted on its stack and its
 * waker's together (HOTSTACK_ENTRY_WAKER, struct hotstack_waker), so
 * that two wakers of one stack are two entries. A sleep whose waker was
 * not seen (its wakeup raced the session's START, the wakers' places
 * were full, or it ran first on a CPU without a table) counts on its own
 * stack alone, as do runqueue waits (no one wakes them). The walks are
 * one per sleep timed (a budget's W thins them with the waits) and
 * weighed by the budget with the probe. EOPNOTSUPP where the kernel has
 * no sched_waking tracepoint.
 * EOPNOTSUPP on a kernel without tracepoints.
 *
 * Errors: EINVAL for a bad field, unknown flag or nonzero reserved; E2BIG
 * when the tables would take more than the module's memory limit allows;
 * ENOMEM when the caller's memory cgroup cannot hold them; ENOENT /
 * EOPNOTSUPP when this machine cannot count the event (e.g. no PMU in a
 * VM); ENODEV when no CPU of the mask is online; EPERM for what a
 * delegated user may not ask, EDQUOT past its user's quota of memory or
 * of samples a second (see Privilege); ESRCH when @pid names no
 * process of the caller's pid namespace; EBUSY while running or mapped.
 * Nothing is left half done: a refused CONFIGURE keeps the previous
 * configuration, tables and counts.
 */
struct hotstack_config {
	__u32 size;
	__u32 flags;
	__u32 event_type;
	__u32 precise;
	__u64 event_config;
	__u64 sample;
	__u64 cpus_ptr;
	__u32 cpus_words;
	__u32 pid;
	__u32 stacks;
	__u32 max_depth;
	__u32 keys;
	__u32 table_entries;
	__u64 arena_frames;
	__u32 budget_ppm;
	__u32 nr_cgroups;
	__u64 cgroups_ptr;
	__u32 off_cpu_tasks;
	__u32 min_block_us;
	__u64 reserved;
	__u32 unwind_mb;
	__u32 pad;
	__u32 cpu_entries;
	__u32 pad2;
};

#define HOTSTACK_CONFIG_SIZE_VER0	104
#define HOTSTACK_CONFIG_SIZE_VER1	112	/* + unwind_mb */
#define HOTSTACK_CONFIG_SIZE_VER2	120	/* + cpu_entries */

/*
 * Drop reasons. Every sample is either counted in exactly one table entry
 * or counted in exactly one of these, so that in every generation
 *   samples == sum of entry counts + sum of drops.
 */
enum hotstack_drop {
	HOTSTACK_DROP_TABLE_FULL = 0,	/* new stack, no free entry (store or CPU) */
	HOTSTACK_DROP_ARENA_FULL = 1,	/* new stack, no room for its frames */
	HOTSTACK_DROP_FILTERED = 2,	/* not the pid, cgroups asked for; idle */
	HOTSTACK_DROP_NESTED = 3,	/* a sample arrived inside a sample */
	HOTSTACK_DROP_NO_STACK = 4,	/* nothing could be walked */
	HOTSTACK_DROP_COLLISION = 5,	/* as many stacks of its hash compared */
	HOTSTACK_DROP_SHORT_WAIT = 6,	/* off-CPU: a wait under min_block_us */
	HOTSTACK_DROP_BUSY = 7,		/* new stack, other CPUs storing stacks still */
	HOTSTACK_DROP_MAX = 8		/* room in the ABI */
};

/*
 * Why a user walk by unwind tables ended before the outermost frame
 * (hotstack_stats.uw_stops). The frames walked until then are kept.
 */
enum hotstack_uw_stop {
	HOTSTACK_UWS_EXPR = 0,		/* a rule the table could not express (HOTSTACK_UW_EXPR) */
	HOTSTACK_UWS_SIGNAL = 1,	/* a signal frame's saved registers unreadable */
	HOTSTACK_UWS_FAULT = 2,		/* a read of the stack failed */
	HOTSTACK_UWS_STACK = 3,		/* the caller's frame was not above this one on the stack */
	HOTSTACK_UWS_LINK = 4,		/* arm64: a caller's return address in the link register */
	HOTSTACK_UWS_FP = 5,		/* no table, and no frame record at the frame pointer */
	HOTSTACK_UWS_MAX = 8		/* room in the ABI */
};

/* Buckets of the handler-time histogram: bucket b counts [2^b, 2^(b+1)) ns. */
#define HOTSTACK_HIST_BUCKETS	24

/**
 * struct hotstack_cpu_stats - one CPU's counters in one generation
 * @samples:	overflow handler invocations that reached the table
 * @counted:	samples counted in a table entry
 * @drops:	samples dropped, by enum hotstack_drop
 * @nmi_samples: samples taken in NMI context
 * @truncated:	counted samples whose stack was cut at max_depth
 * @entries:	count table entries in use (the distinct stacks this CPU
 *		counted); GET_STATS' total: the store's places taken instead
 *		(hotstack_store_stats.stacks: its stacks, and the rare places
 *		left DEAD)
 * @arena_used:	0; GET_STATS' total: the store's frames in use
 * @timed:	samples whose handler time was measured: one in
 *		HOTSTACK_TIMED_EVERY (reading the clock costs as much as the
 *		rest of a short sample)
 * @handler_ns:	time in the handler of the timed samples, from local_clock();
 *		handler_ns / timed is the mean cost of a sample
 * @hist:	handler time histogram of the timed samples, log2 nanoseconds
 */
struct hotstack_cpu_stats {
	__u64 samples;
	__u64 counted;
	__u64 drops[HOTSTACK_DROP_MAX];
	__u64 nmi_samples;
	__u64 truncated;
	__u64 entries;
	__u64 arena_used;
	__u64 timed;
	__u64 handler_ns;
	__u64 hist[HOTSTACK_HIST_BUCKETS];
};

/* Handler time is measured on one sample in this many (per CPU). */
#define HOTSTACK_TIMED_EVERY	16

/**
 * struct hotstack_stats - HOTSTACK_IOC_GET_STATS: the session's counters
 * @size:	in: sizeof(struct hotstack_stats)
 * @flags:	in: 0, or HOTSTACK_STATS_READABLE for the readable generation
 *		instead of the active one
 * @state:	out: enum hotstack_state
 * @nr_cpus:	out: CPUs with a table (the configured mask)
 * @generation:	out: how many SNAPSHOTs and RESETs happened
 * @elapsed_ns:	out: time spent RUNNING since the last RESET/SNAPSHOT
 * @mmap_size:	out: the exact length mmap() wants (0 before CONFIGURE)
 * @id:		out: the session's ID, as generic netlink reports it
 * @pad:	out: 0
 * @total:	out: the counters of every CPU added up
 * @cpus_sampled: out: CPUs whose perf event is live now (RUNNING: the
 *		online CPUs of @nr_cpus; fewer if creating one failed, which
 *		HOTSTACK_EV_CPU_FAILED reports)
 * @cpus_missed: out: CPUs of the configured mask that came online after
 *		CONFIGURE, so have no table and are not sampled (tables are
 *		made for the CPUs online at CONFIGURE, an off-CPU session's
 *		for those present then; CONFIGURE again to include them)
 * @table_entries: out: hotstack_config.table_entries in use (the store)
 * @pad2:	out: 0
 * @arena_frames: out: hotstack_config.arena_frames in use (the store)
 * @lost:	out: samples of HOTSTACK_CFG_TASK events on a CPU without a
 *		table (one that came online after CONFIGURE): counted here only
 * @interrupts:	out: overflow handler runs of this generation, each counted
 *		once (@total counts a sample W times with a budget)
 * @budget_ppm:	out: hotstack_config.budget_ppm
 * @floor_ns:	out: with a budget, the cost per sample the handler cannot
 *		time (the module's sample_floor_ns; an off-CPU session's
 *		probe, 60 ns for the tracepoint's call), added to its own
 * @rate_changes: out: with a budget, periods re-derived, all CPUs, since
 *		START (each sends HOTSTACK_EV_RATE)
 * @sample_rate: out: with a budget, samples a second, all CPUs, in the
 *		last window (about 1 s) the module looked at
 * @cost_ns:	out: with a budget, the whole cost of a sample in that
 *		window: mean handler time plus @floor_ns
 * @window_ppm:	out: with a budget, CPU time spent sampling in that window,
 *		parts per million of the sampled CPUs' time (@sample_rate *
 *		@cost_ns / CPUs): what the budget holds within @budget_ppm
 * @max_weight:	out: with a budget, the largest W of a CPU now (1: the
 *		rate asked for)
 * @uw_walks:	out: with HOTSTACK_CFG_USER_TABLES, user stacks walked since
 *		CONFIGURE (this and the fields below count walks, not weights)
 * @uw_complete: out: ... that reached the outermost frame (a table's
 *		HOTSTACK_UW_END, or a return address or frame pointer of 0)
 * @uw_no_maps:	out: ... of a process whose mappings were not loaded: by
 *		frame pointers alone (the process was reported as a miss)
 * @uw_table_frames: out: user frames unwound by a table's rule
 * @uw_fp_frames: out: user frames unwound by frame pointers (no table
 *		covered the address: no mapping, a mapping without a table, or
 *		a HOTSTACK_UW_NONE rule)
 * @uw_stops:	out: walks that ended before the outermost frame, by enum
 *		hotstack_uw_stop (a stack cut at max_depth is counted in
 *		total.truncated instead)
 * @uw_tables:	out: tables the session holds
 * @uw_procs:	out: processes with mappings
 * @uw_bytes:	out: kernel memory the tables and mappings take
 * @uw_misses:	out: processes reported for HOTSTACK_IOC_UNWIND_MISSES
 * @uw_misses_lost: out: ... not kept: the set was full
 * @untimed:	out: off-CPU sessions: waits of watched tasks not timed,
 *		because off_cpu_tasks threads were off the CPU already (or
 *		the task left a CPU that has no table: not present at
 *		CONFIGURE), the clock read at its end was behind the one at
 *		its start (another CPU's), or its end was not seen (the
 *		task's next wait or its exit came first); and processes
 *		forked in a HOTSTACK_CFG_TASK session's that its full set
 *		could not take; since START
 * @waits_at_start: out: off-CPU sessions: waits in progress at START
 *		(watched threads off the CPU then), timed from START on
 *		the thread's kernel stack then (no user stack), and counted
 *		as they end (each is in the other counters too)
 * @cpu_entries: out: hotstack_config.cpu_entries in use (each CPU's)
 * @pad4:	out: 0
 * @wakers_unseen: out: off-CPU sessions with HOTSTACK_CFG_WAKERS: sleeps
 *		that ended without their waker seen (counted on their own
 *		stack alone), since START
 *
 * On input only @size and @flags are read; the out fields are ignored (a
 * struct can be passed again as it came back). The struct grows at its
 * end, as "size" allows.
 */
struct hotstack_stats {
	__u32 size;
	__u32 flags;
	__u32 state;
	__u32 nr_cpus;
	__u64 generation;
	__u64 elapsed_ns;
	__u64 mmap_size;
	__u32 id;
	__u32 pad;
	struct hotstack_cpu_stats total;
	__u32 cpus_sampled;
	__u32 cpus_missed;
	__u32 table_entries;
	__u32 pad2;
	__u64 arena_frames;
	__u64 lost;
	__u64 interrupts;
	__u32 budget_ppm;
	__u32 floor_ns;
	__u64 rate_changes;
	__u64 sample_rate;
	__u64 cost_ns;
	__u64 window_ppm;
	__u32 max_weight;
	__u32 pad3;
	__u64 untimed;
	__u64 uw_walks;
	__u64 uw_complete;
	__u64 uw_no_maps;
	__u64 uw_table_frames;
	__u64 uw_fp_frames;
	__u64 uw_stops[HOTSTACK_UWS_MAX];
	__u64 uw_tables;
	__u64 uw_procs;
	__u64 uw_bytes;
	__u64 uw_misses;
	__u64 uw_misses_lost;
	__u64 waits_at_start;
	__u32 cpu_entries;
	__u32 pad4;
	__u64 wakers_unseen;
};

#define HOTSTACK_STATS_READABLE	_BITUL(0)
#define HOTSTACK_STATS_SIZE_VER0	400
#define HOTSTACK_STATS_SIZE_VER1	456
#define HOTSTACK_STATS_SIZE_VER2	464	/* + untimed */
#define HOTSTACK_STATS_SIZE_VER3	608	/* + unwind tables' counters */
#define HOTSTACK_STATS_SIZE_VER4	616	/* + waits_at_start */
#define HOTSTACK_STATS_SIZE_VER5	624	/* + cpu_entries */
#define HOTSTACK_STATS_SIZE_VER6	632	/* + wakers_unseen */

/* hotstack_stack.flags */
#define HOTSTACK_ENTRY_TRUNCATED	_BITUL(0) /* cut at max_depth */
#define HOTSTACK_ENTRY_COLLAPSED	_BITUL(1) /* recursion was collapsed */
#define HOTSTACK_ENTRY_USER_MODE	_BITUL(2) /* interrupted in user mode */
#define HOTSTACK_ENTRY_USER_FAULT	_BITUL(3) /* user walk stopped on a fault */
/*
 * The user stack is not walked: a delegated session's user may not read
 * this process (ptrace's read rule: another user's, not dumpable, or with
 * capabilities the user lacks).
 */
#define HOTSTACK_ENTRY_USER_HIDDEN	_BITUL(4)
/*
 * Kernel frame 0 is a return address like the others, not an interrupted
 * instruction: the event handed over its caller's registers (context
 * switches). Symbolize it as a call site (address - 1).
 */
#define HOTSTACK_ENTRY_CALLER		_BITUL(5)
/*
 * Off-CPU with HOTSTACK_CFG_WAKERS: the stack ends with its waker's (a
 * struct hotstack_waker in the last HOTSTACK_WAKER_WORDS frames of
 * nr_user, the waker's frames before it).
 */
#define HOTSTACK_ENTRY_WAKER		_BITUL(6)

/**
 * struct hotstack_waker - who ended a sleep (HOTSTACK_ENTRY_WAKER)
 *
 * A stack of a waker is laid out as its sleeper's frames (nr_kernel
 * kernel, then user), the waker's @nr_kernel kernel frames (innermost
 * first, frame 0 a return address: in try_to_wake_up()), its @nr_user
 * user frames (innermost first), then this, HOTSTACK_WAKER_WORDS frames
 * long; hotstack_stack.nr_user counts the sleeper's user frames and all
 * of that. The sleeper's and waker's frames are HOTSTACK_MAX_DEPTH at
 * most together: the waker's cut to fit are marked TRUNCATED in @flags.
 * @comm:	the waker's task name (zeros: hidden, HOTSTACK_ENTRY_USER_HIDDEN)
 * @tgid:	its process, as the opener's pid namespace numbers it (0:
 *		hidden, or outside it)
 * @nr_kernel:	its kernel frames
 * @nr_user:	its user frames: walked only where it wakes from its own
 *		context (@context HOTSTACK_CTX_TASK) and the session has user
 *		stacks
 * @flags:	HOTSTACK_ENTRY_* of its walk (TRUNCATED, COLLAPSED,
 *		USER_FAULT, USER_HIDDEN)
 * @context:	HOTSTACK_CTX_TASK, _SOFTIRQ, _HARDIRQ or _IDLE: what it was
 *		running (an interrupt wakes in the name of whatever task it
 *		interrupted)
 * @depth:	its frames of recursion collapsed away
 * @magic:	HOTSTACK_WAKER_MAGIC
 */
struct hotstack_waker {
	char comm[16];
	__u32 tgid;
	__u16 nr_kernel;
	__u16 nr_user;
	__u8 flags;
	__u8 context;
	__u16 depth;
	__u32 magic;
};

#define HOTSTACK_WAKER_WORDS	(sizeof(struct hotstack_waker) / 8)
#define HOTSTACK_WAKER_MAGIC	0x6b617721U	/* "!wak" */

/*
 * hotstack_stack.context (with HOTSTACK_KEY_CONTEXT; else 0): what the
 * sample interrupted. NMI code cannot be interrupted by a sampling NMI, so
 * there is no NMI context to report.
 */
enum hotstack_context {
	HOTSTACK_CTX_NONE = 0,
	HOTSTACK_CTX_TASK = 1,		/* a task (process or kernel thread) */
	HOTSTACK_CTX_SOFTIRQ = 2,	/* a softirq handler */
	HOTSTACK_CTX_HARDIRQ = 3,	/* a hardirq handler (NMI samplers) */
	HOTSTACK_CTX_IDLE = 4,		/* the idle task */
	/* Off-CPU sessions: why the task left the CPU. */
	HOTSTACK_CTX_SLEEP = 5,		/* it slept, interruptibly (S) */
	HOTSTACK_CTX_UNINTERRUPTIBLE = 6, /* it slept uninterruptibly (D) */
	HOTSTACK_CTX_RUNQUEUE = 7,	/* preempted or yielded: runnable, waiting */
};

/**
 * struct hotstack_stack - one distinct stack in a generation's store
 * @hash:	0: the place is free. Else a hash of everything below, its
 *		two low bits the place's state (HOTSTACK_STACK_*): written
 *		last (release) with HOTSTACK_STACK_READY, so a reader that
 *		sees that (acquire) sees the rest.
 * @nr_kernel:	kernel frames, innermost first
 * @nr_user:	user frames after them, innermost first
 * @flags:	HOTSTACK_ENTRY_*
 * @context:	enum hotstack_context
 * @depth:	frames of the recursion collapsed away (HOTSTACK_ENTRY_COLLAPSED)
 * @tgid:	process (with HOTSTACK_KEY_TGID; else 0), as the opener's pid
 *		namespace numbers it (0 for a process outside it)
 * @frames:	index of the first frame in the store's arena
 * @comm:	task name (with HOTSTACK_KEY_COMM; else zeros)
 * @cgroup:	the task's cgroup v2 id (with HOTSTACK_KEY_CGROUP; else 0),
 *		as bpf_get_current_cgroup_id() gives it: on 64-bit kernels the
 *		inode number of its directory in the cgroup2 filesystem (1:
 *		the root; a kernel without cgroups: 0)
 */
struct hotstack_stack {
	__u64 hash;
	__u16 nr_kernel;
	__u16 nr_user;
	__u8 flags;
	__u8 context;
	__u16 depth;
	__u32 tgid;
	__u32 frames;
	char comm[16];
	__u64 cgroup;
};

/* hotstack_stack.hash & HOTSTACK_STACK_STATE */
#define HOTSTACK_STACK_STATE	3ULL
#define HOTSTACK_STACK_READY	1ULL	/* complete: every field and frame */
#define HOTSTACK_STACK_FILLING	2ULL	/* being written by a CPU */
#define HOTSTACK_STACK_DEAD	3ULL	/* taken, its frames not stored (full, busy) */

/**
 * struct hotstack_count - one distinct stack a CPU counted
 * @stack:	0: the entry is free. Else the stack's index in the store,
 *		plus one; written last (release), after @count's first value,
 *		and the stack was READY before.
 * @tag:	the low 32 bits of the stack's hash (a lookup's first test)
 * @count:	samples of this stack on this CPU (only ever grows until
 *		RESET/SNAPSHOT)
 */
struct hotstack_count {
	__u32 stack;
	__u32 tag;
	__u64 count;
};

/*
 * mmap
 * ----
 * mmap(NULL, header.mmap_size, PROT_READ, MAP_SHARED, fd, 0) once the
 * session is configured; only for CAP_PERFMON or CAP_SYSLOG holders (it
 * shows kernel addresses). The length must be exact and the offset 0; the
 * mapping is read-only and cannot grow. Reconfiguring needs a new mapping
 * (EBUSY while one exists).
 *
 * Layout: the header (struct hotstack_mmap_header and its slot_cpu[],
 * padded to whole pages: gen_offset[0] bytes), then for each generation g
 * (0, 1) its store of distinct stacks at gen_offset[g] (store_size bytes):
 *
 *   struct hotstack_store_stats (store_stats_size bytes, padded)
 *   struct hotstack_stack       [table_entries]
 *   __u64 frames                [arena_frames]
 *
 * and after it each CPU slot c (0 .. nr_slots - 1) at offset
 * gen_offset[g] + store_size + c * slot_size:
 *
 *   struct hotstack_cpu_stats   (cpu_stats_size bytes, padded)
 *   struct hotstack_count       [cpu_entries]
 *
 * Slot c holds CPU slot_cpu[c]: the configured CPUs in increasing order.
 * A stack's samples are the counts of every CPU that counted it: one
 * count entry per CPU at most, each naming the stack by its index.
 * The sampler writes the "active" generation; SNAPSHOT swaps them and
 * waits until no sampler can still write the old one, which becomes
 * "readable": complete and quiet until the next SNAPSHOT or RESET.
 *
 * Reading the header (seqcount; the kernel makes seq odd while it writes):
 *
 *   do {
 *       seq = READ_ONCE(h->seq);   // retry while odd
 *       smp_rmb();
 *       readable = h->readable; generation = h->generation; ...
 *       smp_rmb();
 *   } while (seq & 1 || seq != READ_ONCE(h->seq));
 *
 * then walk generation "readable": for each CPU's count entry with
 * stack != 0 (read stack, then smp_rmb(), then the rest), the stack is
 * store entry stack - 1, its frames arena[frames .. frames + nr_kernel +
 * nr_user - 1]. Then read seq again
 * (smp_rmb() first): if it changed, a SNAPSHOT or RESET ran meanwhile and
 * may have cleared what was read (the kernel makes seq odd before it
 * clears anything, and even once "readable" is complete again): retry.
 * "generation" alone does not tell: it changes only at the end.
 *
 * The active generation can be read while sampling goes on (a live view):
 * a count entry is published only after its stack is complete.
 */
struct hotstack_store_stats {
	__u64 stacks;		/* places taken (READY, FILLING, DEAD) or reserved */
	__u64 arena_used;	/* frames in use */
	__u64 reserved[6];	/* 0 */
};

struct hotstack_mmap_header {
	__u32 version;		/* HOTSTACK_MMAP_VERSION */
	__u32 header_size;	/* sizeof(struct hotstack_mmap_header) */
	__u32 seq;		/* odd while the kernel updates this header */
	__u32 state;		/* enum hotstack_state */
	__u64 generation;	/* SNAPSHOTs + RESETs so far */
	__u32 active;		/* generation index (0/1) being written */
	__u32 readable;		/* generation index (0/1) complete and quiet */
	__u32 nr_slots;		/* CPU slots per generation */
	__u32 table_entries;	/* places in the store of stacks */
	__u64 arena_frames;	/* frames in the store */
	__u32 entry_size;	/* sizeof(struct hotstack_stack) */
	__u32 cpu_stats_size;	/* bytes before the counts, in a slot */
	__u64 slot_size;	/* bytes per CPU slot */
	__u64 gen_offset[2];	/* byte offset of each generation */
	__u64 mmap_size;	/* the exact length to map */
	__u32 keys;		/* hotstack_config.keys */
	__u32 stacks;		/* hotstack_config.stacks */
	__u32 max_depth;	/* hotstack_config.max_depth */
	__u32 budget_ppm;	/* hotstack_config.budget_ppm */
	/*
	 * With a budget: hotstack_stats' fields of the same names, written
	 * once a window, each on its own (not under seq).
	 */
	__u64 rate_changes;
	__u64 sample_rate;
	__u64 cost_ns;
	__u64 window_ppm;
	__u64 store_size;	/* bytes of a store, before the first slot */
	__u32 store_stats_size;	/* bytes before the stacks, in a store */
	__u32 cpu_entries;	/* count entries per CPU slot */
	__u32 count_size;	/* sizeof(struct hotstack_count) */
	__u32 pad;		/* 0 */
	__u64 reserved[2];	/* 0 */
	__u32 slot_cpu[];	/* CPU number of each slot [nr_slots] */
};

#define HOTSTACK_MMAP_VERSION	2

/*
 * Unwind tables
 * -------------
 * Code built without frame pointers (most distributions' packages) is
 * walked by tables the tool makes from each binary's call-frame
 * information (.eh_frame, .debug_frame) and loads into the session: the
 * module reads no DWARF. With HOTSTACK_CFG_USER_TABLES a user walk, at
 * each frame, looks the address up in the mappings loaded for the
 * process (HOTSTACK_IOC_SET_MAPS), and in the table of that mapping
 * (HOTSTACK_IOC_ADD_TABLE) the rule that holds there: where the frame's
 * CFA (canonical frame address: the stack pointer before the call that
 * made the frame) is, and where the return address and the caller's frame
 * pointer were saved. Where no table covers an address (a process whose
 * mappings are not loaded yet, a mapping without a table: JIT code, a
 * binary without call-frame information; or a HOTSTACK_UW_NONE rule) the
 * step is taken by frame pointers, as without the flag. Only 64-bit tasks.
 *
 * A table is a binary's, shared by every process that maps it; the
 * mappings are a process's (keyed by its address space: an exec needs
 * them again). A sample of a process with no mappings loaded, or at an
 * address none of its mappings covers, adds the process to a small set
 * the tool drains with HOTSTACK_IOC_UNWIND_MISSES, so that it can load
 * what is missing; the walk goes on by frame pointers meanwhile. poll()
 * on the session's file says POLLPRI while the set holds a process (and
 * POLLIN always: read() does not block), so that a loader sleeps until
 * there is work.
 *
 * Tables and mappings live until the session's file is closed (the
 * mappings of a process that has exited are dropped by the next
 * SET_MAPS or UNWIND_MISSES). Their memory is charged to the memory
 * cgroup of the process that loads them and, for a delegated user, held
 * of its quota of memory; all sessions' together stay under the module's
 * max_unwind_mb, each session's under hotstack_config.unwind_mb (ENOSPC).
 * They work in READY and RUNNING (EINVAL before CONFIGURE, and without
 * HOTSTACK_CFG_USER_TABLES).
 */

/* Rows of a table, at most; rules of a table, at most. */
#define HOTSTACK_UW_MAX_ROWS		_BITUL(24)
#define HOTSTACK_UW_MAX_RULES		65536
/* Offsets of a table's rows are below this (4 GiB of code). */
#define HOTSTACK_UW_MAX_PC		_BITULL(32)
/* Mappings of a process, at most. */
#define HOTSTACK_UW_MAX_MAPS		4096

/* hotstack_unwind_rule.kind: how the caller's frame is found. */
enum hotstack_uw_kind {
	HOTSTACK_UW_NONE = 0,	/* no rule here: by frame pointers */
	HOTSTACK_UW_CFA_SP = 1,	/* CFA = stack pointer + cfa_off */
	HOTSTACK_UW_CFA_FP = 2,	/* CFA = frame pointer + cfa_off */
	/*
	 * x86_64's lazy-binding PLT entries: CFA = stack pointer + 8, and 8
	 * more where (address & 15) >= cfa_off (past the entry's push)
	 */
	HOTSTACK_UW_PLT = 3,
	HOTSTACK_UW_END = 4,	/* the outermost frame (return address undefined) */
	HOTSTACK_UW_EXPR = 5,	/* a rule no kind expresses: the walk stops */
	/*
	 * A signal return trampoline: the caller is the code the signal
	 * interrupted, its registers where the kernel saved them in the
	 * signal frame at the stack pointer (x86_64's struct rt_sigframe
	 * past its return address, arm64's)
	 */
	HOTSTACK_UW_SIGNAL = 6,
	HOTSTACK_UW_KINDS
};

/* hotstack_unwind_rule.flags */
#define HOTSTACK_UWF_RA_SAVED	_BITUL(0) /* return address at CFA + ra_off */
#define HOTSTACK_UWF_FP_SAVED	_BITUL(1) /* caller's frame pointer at CFA + fp_off */
#define HOTSTACK_UWF_ALL	0x3U

/**
 * struct hotstack_unwind_rule - where a frame's caller is
 * @kind:	enum hotstack_uw_kind
 * @flags:	HOTSTACK_UWF_*. HOTSTACK_UW_CFA_SP, _CFA_FP and _PLT: on
 *		x86_64 the return address is always saved at CFA - 8
 *		(HOTSTACK_UWF_RA_SAVED with @ra_off -8); on arm64 without
 *		HOTSTACK_UWF_RA_SAVED it is in the link register, which only
 *		the interrupted frame has (HOTSTACK_UWS_LINK elsewhere).
 *		Without HOTSTACK_UWF_FP_SAVED the frame pointer is the
 *		caller's still. Other kinds: 0.
 * @fp_off:	with HOTSTACK_UWF_FP_SAVED, else 0; a multiple of 8
 * @ra_off:	with HOTSTACK_UWF_RA_SAVED, else 0; a multiple of 8
 * @pad:	0
 * @cfa_off:	HOTSTACK_UW_CFA_SP, _CFA_FP: added to the register
 *		(-2^20 .. 2^20); HOTSTACK_UW_PLT: the entry's offset, 1-15,
 *		from which the CFA is 8 bytes further; other kinds 0
 */
struct hotstack_unwind_rule {
	__u8 kind;
	__u8 flags;
	__s16 fp_off;
	__s16 ra_off;
	__u16 pad;
	__s32 cfa_off;
};

/**
 * struct hotstack_unwind_row - where a rule starts to hold
 * @pc:		offset in the table's address space (see hotstack_unwind_map.bias),
 *		below HOTSTACK_UW_MAX_PC; rows strictly increasing
 * @rule:	index of its rule in the table's rules
 *
 * A row's rule holds from its @pc to the next row's (the last row's to
 * the end of the mapping); before the first row, HOTSTACK_UW_NONE.
 */
struct hotstack_unwind_row {
	__u32 pc;
	__u32 rule;
};

/**
 * struct hotstack_unwind_table - HOTSTACK_IOC_ADD_TABLE: load a binary's table
 * @size:	sizeof(struct hotstack_unwind_table)
 * @flags:	0
 * @rows_ptr:	user pointer to @nr_rows struct hotstack_unwind_row
 * @rules_ptr:	user pointer to @nr_rules struct hotstack_unwind_rule
 * @nr_rows:	1-HOTSTACK_UW_MAX_ROWS
 * @nr_rules:	1-HOTSTACK_UW_MAX_RULES
 * @id:		out: the table's id, from 1, for hotstack_unwind_map.table
 * @pad:	0
 * @bytes:	out: kernel memory the table takes (rows are 4 bytes each,
 *		rules 12, and an index of its code: 4 bytes for each 256 bytes
 *		to 64 KiB, as small as keeps it to 4 bytes a row at most)
 * @reserved:	0
 *
 * Every field and every row and rule is checked (EINVAL), the memory
 * limits too (ENOSPC; ENOMEM from the memory cgroup).
 */
struct hotstack_unwind_table {
	__u32 size;
	__u32 flags;
	__u64 rows_ptr;
	__u64 rules_ptr;
	__u32 nr_rows;
	__u32 nr_rules;
	__u32 id;
	__u32 pad;
	__u64 bytes;
	__u64 reserved[2];
};

#define HOTSTACK_UNWIND_TABLE_SIZE_VER0	64

/**
 * struct hotstack_unwind_map - one executable mapping of a process
 * @start:	its first address
 * @end:	the address after its last
 * @bias:	subtracted from an address in it: the offset a table's rows
 *		speak of
 * @table:	a table's id (HOTSTACK_IOC_ADD_TABLE), or 0: no table (frame
 *		pointers, without a miss reported)
 * @pad:	0
 */
struct hotstack_unwind_map {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 table;
	__u32 pad;
};

/* hotstack_unwind_maps.flags */
#define HOTSTACK_MAPS_REMOVE	_BITUL(0) /* forget the process's mappings */
#define HOTSTACK_MAPS_ALL	0x1U

/**
 * struct hotstack_unwind_maps - HOTSTACK_IOC_SET_MAPS: a process's mappings
 * @size:	sizeof(struct hotstack_unwind_maps)
 * @flags:	HOTSTACK_MAPS_*
 * @pid:	the process (tgid), as the opener's pid namespace numbers it
 * @nr_maps:	0-HOTSTACK_UW_MAX_MAPS (0 with HOTSTACK_MAPS_REMOVE)
 * @maps_ptr:	user pointer to @nr_maps struct hotstack_unwind_map, in
 *		increasing order, not overlapping (0 with @nr_maps 0)
 * @reserved:	0
 *
 * Replaces what the process had, as one: a sample sees the old set or the
 * new. Each mapping must lie in an executable mapping of the process's
 * address space as it is now (ESTALE otherwise: it has exec'd or
 * unmapped it since its maps were read; read them again); ESRCH: no such
 * process, or it has no address space; EPERM: a delegated user may not
 * read its stacks (see Privilege).
 */
struct hotstack_unwind_maps {
	__u32 size;
	__u32 flags;
	__u32 pid;
	__u32 nr_maps;
	__u64 maps_ptr;
	__u64 reserved;
};

#define HOTSTACK_UNWIND_MAPS_SIZE_VER0	32

/**
 * struct hotstack_unwind_misses - HOTSTACK_IOC_UNWIND_MISSES: processes
 * whose samples wanted mappings
 * @size:	sizeof(struct hotstack_unwind_misses)
 * @flags:	0
 * @pids_ptr:	user pointer to room for @nr __u32 process IDs
 * @nr:		in: room at @pids_ptr (1-4096); out: IDs written there
 * @pad:	0
 * @lost:	out: misses not kept since the last call (the set was full):
 *		the tool should read every process's mappings again
 * @reserved:	0
 *
 * Takes the processes (as the opener's pid namespace numbers them; each
 * once) that were sampled with no mappings loaded, or at an address none
 * of their mappings covered, since the last call; the set keeps 64 of
 * them. The same call drops the mappings of processes that have exited.
 */
struct hotstack_unwind_misses {
	__u32 size;
	__u32 flags;
	__u64 pids_ptr;
	__u32 nr;
	__u32 pad;
	__u64 lost;
	__u64 reserved;
};

#define HOTSTACK_UNWIND_MISSES_SIZE_VER0	40

/*
 * Cgroups' names
 * --------------
 * The cgroup key (HOTSTACK_KEY_CGROUP) counts a cgroup v2 id; the module
 * names it for the tool, and read()'s text writes "[cgroup PATH]" where
 * it can ("[cgroup ID]" where not). A cgroup that exists is named as the
 * caller's cgroup namespace sees it (as /proc/self/cgroup would say it);
 * one removed while a session keyed by cgroup ran is named as it was
 * when removed (the module keeps the last HOTSTACK_CGROUPS_GONE of
 * them), so that a short-lived container is named though no tool saw its
 * directory. A path longer than HOTSTACK_CGROUP_PATH_MAX - 1 bytes keeps
 * its end (the innermost directories, which name a container) after
 * "...".
 */
#define HOTSTACK_CGROUP_PATH_MAX	512
#define HOTSTACK_CGROUPS_GONE		256

/**
 * struct hotstack_cgroup_path - HOTSTACK_IOC_CGROUP_PATH: a cgroup's path
 * @size:	sizeof(struct hotstack_cgroup_path)
 * @flags:	in: 0; out: HOTSTACK_CGROUP_GONE when named as it was when
 *		removed
 * @id:		the cgroup's id (hotstack_stack.cgroup)
 * @reserved:	0
 * @path:	out: its path, NUL-terminated (in: ignored)
 *
 * ENOENT: no cgroup of that id now, none removed while a session keyed by
 * cgroup ran (or removed long enough ago to be forgotten), or one outside
 * the caller's cgroup namespace. Any opener of /dev/hotstack may ask.
 */
struct hotstack_cgroup_path {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 reserved[2];
	char path[HOTSTACK_CGROUP_PATH_MAX];
};

#define HOTSTACK_CGROUP_PATH_SIZE_VER0	544

/* hotstack_cgroup_path.flags (out) */
#define HOTSTACK_CGROUP_GONE		_BITUL(0)

/*
 * Generic netlink
 * ---------------
 * Family HOTSTACK_GENL_NAME, version HOTSTACK_GENL_VERSION. Requests are
 * validated strictly: an attribute a command does not take, or one of the
 * wrong length, is refused with an extended ACK message.
 *
 * HOTSTACK_CMD_GET: dump: one message per session (doit with
 *	HOTSTACK_A_ID: that session). Needs CAP_PERFMON or the module's
 *	group, like /dev/hotstack. A dump that raced with a session opening
 *	or closing is flagged NLM_F_DUMP_INTR.
 * HOTSTACK_CMD_EVENT: sent to the multicast group HOTSTACK_GENL_MCGRP
 *	("events"), never requested: HOTSTACK_A_ID, HOTSTACK_A_EVENT and, by
 *	event, HOTSTACK_A_EVENT_VALUE / HOTSTACK_A_CPU; HOTSTACK_A_SUPPRESSED
 *	when events were dropped by the rate limit since the last one sent.
 */
#define HOTSTACK_GENL_NAME	"hotstack"
#define HOTSTACK_GENL_VERSION	1
#define HOTSTACK_GENL_MCGRP	"events"

enum hotstack_genl_cmd {
	HOTSTACK_CMD_UNSPEC,
	HOTSTACK_CMD_GET,
	HOTSTACK_CMD_EVENT,
	__HOTSTACK_CMD_MAX,
};

#define HOTSTACK_CMD_MAX	(__HOTSTACK_CMD_MAX - 1)

/* Attributes of GET replies and EVENT messages; all numbers host order. */
enum hotstack_genl_attr {
	HOTSTACK_A_UNSPEC,
	HOTSTACK_A_PAD,			/* alignment of u64 attributes */
	HOTSTACK_A_ID,			/* u32: session ID (GET request: filter) */
	HOTSTACK_A_OWNER,		/* u32: tgid of the opener; 0: the persistent one */
	HOTSTACK_A_STATE,		/* u32: enum hotstack_state */
	HOTSTACK_A_EVENT_TYPE,		/* u32: hotstack_config.event_type */
	HOTSTACK_A_EVENT_CONFIG,	/* u64: hotstack_config.event_config */
	HOTSTACK_A_SAMPLE,		/* u64: hotstack_config.sample */
	HOTSTACK_A_FLAGS,		/* u32: hotstack_config.flags */
	HOTSTACK_A_STACKS,		/* u32: hotstack_config.stacks */
	HOTSTACK_A_MAX_DEPTH,		/* u32: hotstack_config.max_depth */
	HOTSTACK_A_KEYS,		/* u32: hotstack_config.keys */
	HOTSTACK_A_NR_CPUS,		/* u32: CPUs with a table */
	HOTSTACK_A_GENERATION,		/* u64: SNAPSHOTs + RESETs */
	HOTSTACK_A_ELAPSED_NS,		/* u64: running time of the active generation */
	HOTSTACK_A_SAMPLES,		/* u64: the active generation's counters ... */
	HOTSTACK_A_COUNTED,		/* u64 */
	HOTSTACK_A_DROPS,		/* nested: u64 per drop reason, attribute = reason + 1 */
	HOTSTACK_A_NMI_SAMPLES,		/* u64 */
	HOTSTACK_A_TRUNCATED,		/* u64 */
	HOTSTACK_A_ENTRIES,		/* u64: places the store has taken (total.entries) */
	HOTSTACK_A_CAPACITY,		/* u64: distinct stacks the store may hold */
	HOTSTACK_A_FILL_PCT,		/* u32: the store or the fullest CPU count table, % */
	HOTSTACK_A_COST_NS,		/* u64: mean handler time per sample */
	HOTSTACK_A_OVERHEAD_PPM,	/* u64: handler time / CPU time, parts per million */
	HOTSTACK_A_EVENT,		/* u32: enum hotstack_event (EVENT messages) */
	HOTSTACK_A_EVENT_VALUE,		/* u64: per event, see enum hotstack_event */
	HOTSTACK_A_CPU,			/* u32: the CPU an event is about */
	HOTSTACK_A_SUPPRESSED,		/* u64: events not sent since the last one (rate limit) */
	HOTSTACK_A_TABLE_ENTRIES,	/* u32: hotstack_config.table_entries */
	HOTSTACK_A_ARENA_FRAMES,	/* u64: hotstack_config.arena_frames */
	HOTSTACK_A_CPUS_SAMPLED,	/* u32: hotstack_stats.cpus_sampled */
	HOTSTACK_A_CPUS_MISSED,		/* u32: hotstack_stats.cpus_missed */
	HOTSTACK_A_BUDGET_PPM,		/* u32: hotstack_config.budget_ppm (0: none) */
	HOTSTACK_A_SAMPLE_RATE,		/* u64: hotstack_stats.sample_rate (budget) */
	HOTSTACK_A_WINDOW_PPM,		/* u64: hotstack_stats.window_ppm (budget) */
	HOTSTACK_A_RATE_CHANGES,	/* u64: hotstack_stats.rate_changes (budget) */
	HOTSTACK_A_WEIGHT,		/* u32: hotstack_stats.max_weight (budget) */
	HOTSTACK_A_UW_BYTES,		/* u64: hotstack_stats.uw_bytes (unwind tables) */
	HOTSTACK_A_UW_WALKS,		/* u64: hotstack_stats.uw_walks (unwind tables) */
	HOTSTACK_A_UW_COMPLETE,		/* u64: hotstack_stats.uw_complete (unwind tables) */
	HOTSTACK_A_MEMORY,		/* u64: bytes its tables and off-CPU records take */
	HOTSTACK_A_CPU_ENTRIES,		/* u32: hotstack_stats.cpu_entries */
	__HOTSTACK_A_MAX,
};

#define HOTSTACK_A_MAX		(__HOTSTACK_A_MAX - 1)

/* HOTSTACK_A_EVENT */
enum hotstack_event {
	HOTSTACK_EV_STARTED = 1,	/* START */
	HOTSTACK_EV_STOPPED = 2,	/* STOP (or close while running) */
	HOTSTACK_EV_CLOSED = 3,		/* the session's file was closed */
	/*
	 * The store or a CPU's count table reached VALUE % (50, 75, 90, 100)
	 * of its capacity: once per generation each.
	 */
	HOTSTACK_EV_TABLE_FILL = 4,
	HOTSTACK_EV_DROP = 5,		/* first drop for reason VALUE in this generation */
	/* perf throttled the event (too many samples a tick): once per generation. */
	HOTSTACK_EV_THROTTLED = 6,
	/* CPU came online with no table (see hotstack_stats.cpus_missed). */
	HOTSTACK_EV_CPU_MISSED = 7,
	/* The event could not be created on CPU: VALUE is the errno. */
	HOTSTACK_EV_CPU_FAILED = 8,
	/* The budget re-derived CPU's rate: VALUE is its new weight W. */
	HOTSTACK_EV_RATE = 9,
};

#define HOTSTACK_IOC_MAGIC	0xB2	/* unused in ioctl-number.rst */

#define HOTSTACK_IOC_GET_INFO	_IOWR(HOTSTACK_IOC_MAGIC, 0x00, struct hotstack_info)
#define HOTSTACK_IOC_CONFIGURE	_IOW(HOTSTACK_IOC_MAGIC, 0x01, struct hotstack_config)
#define HOTSTACK_IOC_START	_IO(HOTSTACK_IOC_MAGIC, 0x02)
#define HOTSTACK_IOC_STOP	_IO(HOTSTACK_IOC_MAGIC, 0x03)
#define HOTSTACK_IOC_RESET	_IO(HOTSTACK_IOC_MAGIC, 0x04)
#define HOTSTACK_IOC_SNAPSHOT	_IO(HOTSTACK_IOC_MAGIC, 0x05)
#define HOTSTACK_IOC_GET_STATS	_IOWR(HOTSTACK_IOC_MAGIC, 0x06, struct hotstack_stats)
#define HOTSTACK_IOC_ADD_TABLE	_IOWR(HOTSTACK_IOC_MAGIC, 0x07, struct hotstack_unwind_table)
#define HOTSTACK_IOC_SET_MAPS	_IOW(HOTSTACK_IOC_MAGIC, 0x08, struct hotstack_unwind_maps)
#define HOTSTACK_IOC_UNWIND_MISSES _IOWR(HOTSTACK_IOC_MAGIC, 0x09, struct hotstack_unwind_misses)
#define HOTSTACK_IOC_CGROUP_PATH _IOWR(HOTSTACK_IOC_MAGIC, 0x0a, struct hotstack_cgroup_path)

#endif /* _UAPI_LINUX_HOTSTACK_H */
