// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: the session record and top run (session.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "cgroup.h"
#include "device.h"
#include "session.h"
#include "table.h"
#include "usyms.h"
#include "uwload.h"

const struct hs_option hs_session_options[] = {
	{ 'e', "event", "EVENT[:MODS]", "cycles (default), instructions, cache-misses, "
	  "branch-misses, cpu-clock, task-clock, page-faults, context-switches, rHEX; "
	  "MODS: p/pp/ppp precise, k or u stacks only, I not the idle task" },
	{ 'F', "freq", "HZ", "samples per second per CPU, 1-100000 (default 4000)" },
	{ 'c', "count", "PERIOD", "events between samples, instead of -F" },
	{ 'a', "all-cpus", NULL, "every CPU (the default; with a command: the whole system)" },
	{ 'C', "cpu", "CPUS", "only these CPUs, a list like 0,2-3" },
	{ 'p', "pid", "PID", "only this process, its threads and what they start (with -a or -C: "
	  "every CPU sampled, the others' samples filtered out)" },
	{ 'G', "cgroup", "PATH", "only tasks in this cgroup v2 or below it (PATH under "
	  "/sys/fs/cgroup, or absolute); several -G: any of them" },
	{ 'g', NULL, NULL, "accepted, as perf takes it: stacks are always recorded" },
	{ HS_SESSION_OPT_CALL_GRAPH, "call-graph", "fp|dwarf", "how user stacks are walked: "
	  "dwarf (the default) by unwind tables made from each binary's .eh_frame, frame "
	  "pointers where a binary has none; fp by frame pointers only (without --stacks: both)" },
	{ HS_SESSION_OPT_STACKS, "stacks", "kernel|user|both", "the stacks to walk "
	  "(default kernel)" },
	{ HS_SESSION_OPT_DEPTH, "max-depth", "N", "frames kept per stack, 1-1024 (default 127)" },
	{ HS_SESSION_OPT_KEYS, "keys", "comm,pid,cgroup,context", "count stacks apart by these "
	  "too (leading frames; cgroup: the task's cgroup v2, [cgroup PATH])" },
	{ HS_SESSION_OPT_COLLAPSE, "collapse", NULL, "collapse direct recursion "
	  "(marked [collapsed N])" },
	{ HS_SESSION_OPT_TABLE, "table-entries", "N", "distinct stacks the session's store "
	  "holds, one store for every CPU: a power of two 16-16777216 (default 16384)" },
	{ HS_SESSION_OPT_ARENA, "arena-frames", "N", "frames the store holds for all its stacks, "
	  "64-268435456 (default 262144)" },
	{ HS_SESSION_OPT_CPU_ENTRIES, "cpu-entries", "N", "distinct stacks each CPU counts, a "
	  "power of two 16-16777216 (default 4096, more on 8 CPUs or fewer; at most --table-entries)" },
	{ HS_SESSION_OPT_BUDGET, "budget", "PCT%", "CPU time sampling may take on each CPU, "
	  "0.0001-100%: the module lowers the rate to fit and weights each sample by its "
	  "period (with -p or a command: every CPU's event, the others filtered out)" },
	{ HS_SESSION_OPT_INCLUDE_IDLE, "include-idle", NULL, "the whole system's samples of "
	  "the idle task too (left out by default, as bcc's profile does; else -e EVENT:I)" },
	HS_OPTION_END,
};

/* Off-CPU time: record's only, for now (hs_config_option() parses them). */
const struct hs_option hs_off_cpu_options[] = {
	{ HS_SESSION_OPT_OFF_CPU, "off-cpu", NULL, "time off the CPU instead of samples: where "
	  "threads wait (sleep, uninterruptible, run queue), in nanoseconds" },
	{ HS_SESSION_OPT_MIN_BLOCK, "min-block", "USEC", "with --off-cpu: leave out waits "
	  "shorter than this (counted as dropped; default 0)" },
	{ HS_SESSION_OPT_OFF_TASKS, "off-cpu-tasks", "N", "with --off-cpu: threads timed off "
	  "the CPU at once, a power of two 16-1048576 (default 16384)" },
	{ HS_SESSION_OPT_WAKERS, "wakers", NULL, "with --off-cpu: each sleep keyed by who woke "
	  "it too: its stacks after a '--' frame, then its name (bcc's offwaketime)" },
	HS_OPTION_END,
};

/* Wall-clock time: record's. */
const struct hs_option hs_wall_options[] = {
	{ HS_SESSION_OPT_WALL, "wall", NULL, "wall-clock time: --off-cpu's waits and the time "
	  "on the CPU sampled by cpu-clock (-F, -c, -e task-clock), each sample the time since "
	  "the last on its CPU, in nanoseconds; keyed by context" },
	HS_OPTION_END,
};

/*
 * record's and top's tables: a store of 16384 distinct stacks and 16
 * frames a stack, and 4096 stacks each CPU counts (3072 used: a CPU sees
 * far fewer distinct stacks than the whole machine). What they take, both
 * generations, on a 384-CPU machine (hs_tables_bytes()):
 *   store:  4096 + 16384 * 48 + 262144 * 8 = 2887680 bytes (whole pages)
 *   a CPU:  320 + 4096 * 16 = 65856, to 128 bytes: 65920 bytes
 *   2 * (2887680 + 384 * 65920) + a header page = 56406016 bytes, 53.8 MiB:
 * record -a stays under 64 MiB there (ABI 1's tables of 8192 stacks and
 * 131072 frames per CPU took 1.1 GiB).
 */
void hs_config_defaults(struct hs_config *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	c->event = "cycles";
	hs_parse_event(c->event, &c->ev, err, sizeof(err));
	c->abi.flags = HOTSTACK_CFG_FREQ;
	c->abi.sample = 4000;
	c->abi.stacks = HOTSTACK_STACK_KERNEL;
	c->abi.max_depth = 127;
	c->abi.table_entries = 16384;
	c->abi.arena_frames = 262144;
	c->abi.cpu_entries = HS_CPU_ENTRIES;
}

/* --keys: a comma-separated list of comm, pid, context and cgroup, none empty. */
static int hs_parse_keys(const char *s, uint32_t *keys)
{
	static const struct { const char *name; uint32_t key; } names[] = {
		{ "comm", HOTSTACK_KEY_COMM },
		{ "pid", HOTSTACK_KEY_TGID },
		{ "context", HOTSTACK_KEY_CONTEXT },
		{ "cgroup", HOTSTACK_KEY_CGROUP },
	};
	const char *e;
	size_t i, n;

	*keys = 0;
	for (;; s = e + 1) {
		e = strchrnul(s, ',');
		n = e - s;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && !memcmp(names[i].name, s, n))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -1;
		*keys |= names[i].key;
		if (!*e)
			return 0;
	}
}

int hs_config_option(struct hs_args *a, struct hs_config *c, int id, const char *value)
{
	unsigned long long v;
	char err[256];

	switch (id) {
	case 'e':
		if (hs_parse_event(value, &c->ev, err, sizeof(err)))
			return hs_args_error(a, "%s", err);
		c->event = value;
		c->have_e = 1;
		break;
	case 'F':
		if (hs_parse_u64(value, 1, HOTSTACK_MAX_FREQ, &v))
			return hs_args_error(a, "-F wants a frequency from 1 to 100000 Hz, not '%s'",
					     value);
		c->abi.flags |= HOTSTACK_CFG_FREQ;
		c->abi.sample = v;
		c->have_F = 1;
		break;
	case 'c':
		if (hs_parse_u64(value, 1, INT64_MAX, &v))
			return hs_args_error(a, "-c wants a positive period, not '%s'", value);
		c->abi.flags &= ~HOTSTACK_CFG_FREQ;
		c->abi.sample = v;
		c->have_c = 1;
		break;
	case 'a':
		c->all_cpus = 1;
		break;
	case 'C':
		if (hs_parse_cpus(value, c->cpus, HS_MAX_CPU_WORDS, &c->abi.cpus_words, err,
				  sizeof(err)))
			return hs_args_error(a, "%s", err);
		break;
	case 'p':
		if (hs_parse_u64(value, 1, 4194304, &v))
			return hs_args_error(a, "-p wants a process ID, not '%s'", value);
		c->abi.pid = v;
		break;
	case 'G':
		if (c->nr_cgroups == HOTSTACK_MAX_CGROUPS)
			return hs_args_error(a, "-G: at most %d cgroups", HOTSTACK_MAX_CGROUPS);
		if (!*value)
			return hs_args_error(a, "-G wants a cgroup's path");
		c->cgroups[c->nr_cgroups++] = value;
		break;
	case 'g':
		break;	/* perf habit: stacks are always recorded */
	case HS_SESSION_OPT_CALL_GRAPH:
		if (!strcmp(value, "fp"))
			c->call_graph = HS_CALL_GRAPH_FP;
		else if (!strcmp(value, "dwarf"))
			c->call_graph = HS_CALL_GRAPH_DWARF;
		else
			return hs_args_error(a, "--call-graph wants fp or dwarf, not '%s'", value);
		c->have_call_graph = 1;
		break;
	case HS_SESSION_OPT_INCLUDE_IDLE:
		c->include_idle = 1;
		break;
	case HS_SESSION_OPT_STACKS:
		c->have_stacks = 1;
		if (!strcmp(value, "kernel"))
			c->abi.stacks = HOTSTACK_STACK_KERNEL;
		else if (!strcmp(value, "user"))
			c->abi.stacks = HOTSTACK_STACK_USER;
		else if (!strcmp(value, "both"))
			c->abi.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
		else
			return hs_args_error(a, "--stacks wants kernel, user or both, not '%s'",
					     value);
		break;
	case HS_SESSION_OPT_DEPTH:
		if (hs_parse_u64(value, 1, HOTSTACK_MAX_DEPTH, &v))
			return hs_args_error(a, "--max-depth wants 1 to 1024, not '%s'", value);
		c->abi.max_depth = v;
		break;
	case HS_SESSION_OPT_KEYS:
		if (hs_parse_keys(value, &c->abi.keys))
			return hs_args_error(a, "--keys takes a list of comm, pid, cgroup and "
					     "context, not '%s'", value);
		break;
	case HS_SESSION_OPT_COLLAPSE:
		c->abi.flags |= HOTSTACK_CFG_COLLAPSE;
		break;
	case HS_SESSION_OPT_TABLE:
		if (hs_parse_u64(value, HOTSTACK_MIN_ENTRIES, HOTSTACK_MAX_ENTRIES, &v) ||
		    (v & (v - 1)))
			return hs_args_error(a, "--table-entries wants a power of two from 16 "
					     "to 16777216, not '%s'", value);
		c->abi.table_entries = v;
		c->have_table = 1;
		break;
	case HS_SESSION_OPT_CPU_ENTRIES:
		if (hs_parse_u64(value, HOTSTACK_MIN_ENTRIES, HOTSTACK_MAX_ENTRIES, &v) ||
		    (v & (v - 1)))
			return hs_args_error(a, "--cpu-entries wants a power of two from 16 "
					     "to 16777216, not '%s'", value);
		c->abi.cpu_entries = v;
		c->have_cpu_entries = 1;
		break;
	case HS_SESSION_OPT_BUDGET: {
		char *end;
		double pct;

		errno = 0;
		pct = strtod(value, &end);
		if (*end == '%')
			end++;
		if (errno || end == value || *end || !(pct >= 0.0001 && pct <= 100))
			return hs_args_error(a, "--budget wants a share of each CPU from 0.0001%% "
					     "to 100%%, like 1%%, not '%s'", value);
		c->abi.budget_ppm = (uint32_t)(pct * 10000 + 0.5);
		break;
	}
	case HS_SESSION_OPT_OFF_CPU:
		c->off_cpu = 1;
		break;
	case HS_SESSION_OPT_WALL:
		c->off_cpu = 1;
		c->wall = 1;
		break;
	case HS_SESSION_OPT_WAKERS:
		c->wakers = 1;
		break;
	case HS_SESSION_OPT_MIN_BLOCK:
		if (hs_parse_u64(value, 0, UINT32_MAX, &v))
			return hs_args_error(a, "--min-block wants microseconds, not '%s'", value);
		c->abi.min_block_us = v;
		break;
	case HS_SESSION_OPT_OFF_TASKS:
		if (hs_parse_u64(value, HOTSTACK_MIN_OFF_CPU_TASKS, HOTSTACK_MAX_OFF_CPU_TASKS,
				 &v) || (v & (v - 1)))
			return hs_args_error(a, "--off-cpu-tasks wants a power of two from 16 to "
					     "1048576, not '%s'", value);
		c->abi.off_cpu_tasks = v;
		break;
	case HS_SESSION_OPT_ARENA:
		if (hs_parse_u64(value, HOTSTACK_MIN_ARENA, HOTSTACK_MAX_ARENA, &v))
			return hs_args_error(a, "--arena-frames wants 64 to 268435456, not '%s'",
					     value);
		c->abi.arena_frames = v;
		c->have_arena = 1;
		break;
	default:
		return 1;
	}
	return 0;
}

int hs_config_check(struct hs_args *a, struct hs_config *c)
{
	if (c->have_F && c->have_c)
		return hs_args_error(a, "-F and -c do not go together: a frequency or a period");
	if (c->all_cpus && c->abi.cpus_words)
		return hs_args_error(a, "-a and -C do not go together");
	if (c->ev.stacks)
		c->abi.stacks = c->ev.stacks;	/* :k / :u */
	/* perf's --call-graph records both stacks. */
	else if (c->have_call_graph && !c->have_stacks)
		c->abi.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	if (c->ev.exclude_idle && c->include_idle)
		return hs_args_error(a, "--include-idle and :I do not go together");
	if (c->off_cpu && (c->ev.exclude_idle || c->include_idle))
		return hs_args_error(a, "--off-cpu and --wall time watched threads, never the idle "
				     "task: no :I or --include-idle");
	if ((c->abi.stacks & HOTSTACK_STACK_USER) && c->call_graph != HS_CALL_GRAPH_FP)
		c->abi.flags |= HOTSTACK_CFG_USER_TABLES;
	if (!c->off_cpu && (c->abi.min_block_us || c->abi.off_cpu_tasks || c->wakers))
		return hs_args_error(a, "--min-block, --off-cpu-tasks and --wakers go with "
				     "--off-cpu or --wall");
	if (c->wakers)
		c->abi.flags |= HOTSTACK_CFG_WAKERS;
	if (c->wall && c->abi.cpus_words)
		return hs_args_error(a, "--wall times switches on every CPU: no -C");
	if (c->off_cpu && !c->wall && (c->have_e || c->have_F || c->have_c || c->abi.cpus_words))
		return hs_args_error(a, "--off-cpu times switches on every CPU: no -e, -F, -c or -C");
	/* Wall-clock time: a clock samples the time on the CPU (cpu-clock by default). */
	if (c->wall && !c->have_e) {
		c->event = "cpu-clock";
		c->ev.type = PERF_TYPE_SOFTWARE;
		c->ev.config = PERF_COUNT_SW_CPU_CLOCK;
	}
	if (c->wall && (c->ev.type != PERF_TYPE_SOFTWARE || c->ev.precise ||
			(c->ev.config != PERF_COUNT_SW_CPU_CLOCK &&
			 c->ev.config != PERF_COUNT_SW_TASK_CLOCK)))
		return hs_args_error(a, "--wall samples the time on the CPU by a clock: -e "
				     "cpu-clock or task-clock, not %s", c->event);
	if (c->wall)
		c->abi.keys |= HOTSTACK_KEY_CONTEXT;
	if (c->off_cpu && !c->abi.off_cpu_tasks)
		c->abi.off_cpu_tasks = 16384;
	/* A CPU counts no more stacks than the store holds: the rest would be memory unused. */
	if (!c->have_cpu_entries && c->abi.cpu_entries > c->abi.table_entries)
		c->abi.cpu_entries = c->abi.table_entries;
	return 0;
}

const char *hs_config_rate(const struct hs_config *c, char *buf, size_t len)
{
	if (c->off_cpu && !c->wall) {
		snprintf(buf, len, "every switch");
		return buf;
	}
	return hs_rate_str(c->abi.flags, c->abi.sample, buf, len);
}

const char *hs_config_event(const struct hs_config *c)
{
	return c->wall ? "wall" : c->off_cpu ? "off-cpu" : c->event;
}

/* x rounded up to a multiple of @align (a power of two). */
static uint64_t hs_round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) & ~(align - 1);
}

/*
 * The module's layout (module/session.c): a header of whole pages; a
 * store of whole pages, its counters a page of their own (every CPU
 * writes them); a CPU's slot, its counters to 64 bytes, the whole to 128.
 */
static uint64_t hs_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? page : 4096;
}

static uint64_t hs_store_bytes(uint32_t table_entries, uint64_t arena_frames)
{
	uint64_t pg = hs_page_size();

	return hs_round_up(pg + (uint64_t)table_entries * sizeof(struct hotstack_stack) +
			   arena_frames * sizeof(uint64_t), pg);
}

static uint64_t hs_slot_bytes(uint32_t cpu_entries)
{
	return hs_round_up(hs_round_up(sizeof(struct hotstack_cpu_stats), 64) +
			   (uint64_t)cpu_entries * sizeof(struct hotstack_count), 128);
}

uint64_t hs_tables_bytes(uint32_t table_entries, uint64_t arena_frames, uint32_t cpu_entries,
			 unsigned int nr_cpus)
{
	uint64_t pg = hs_page_size();
	uint64_t hdr = hs_round_up(sizeof(struct hotstack_mmap_header) + 4ull * nr_cpus, pg);

	if (!cpu_entries)
		cpu_entries = table_entries;
	return hs_round_up(hdr + 2 * (hs_store_bytes(table_entries, arena_frames) +
				      nr_cpus * hs_slot_bytes(cpu_entries)), pg);
}

int hs_fit_tables(uint64_t max_memory, uint64_t used, unsigned int nr_cpus,
		  struct hotstack_config *abi)
{
	uint64_t budget = used < max_memory ? (max_memory - used) / 2 : 0;
	uint64_t frames = abi->arena_frames;
	uint32_t stacks = abi->table_entries, cpu = abi->cpu_entries ? abi->cpu_entries : stacks;

	while (hs_tables_bytes(stacks, frames, cpu, nr_cpus) > budget) {
		/* What grows with the CPUs first, while it is the larger part. */
		int cpus_more = nr_cpus * hs_slot_bytes(cpu) >= hs_store_bytes(stacks, frames);

		if (cpu > HS_FIT_CPU_ENTRIES && (cpus_more || stacks <= HOTSTACK_MIN_ENTRIES)) {
			cpu /= 2;
		} else if (stacks > HOTSTACK_MIN_ENTRIES) {
			stacks /= 2;
			frames = frames / 2 > HOTSTACK_MIN_ARENA ? frames / 2 : HOTSTACK_MIN_ARENA;
			cpu = cpu < stacks ? cpu : stacks;
		} else if (cpu > HOTSTACK_MIN_ENTRIES) {
			cpu /= 2;
		} else {
			return -1;
		}
	}
	if (stacks == abi->table_entries && frames == abi->arena_frames &&
	    cpu == (abi->cpu_entries ? abi->cpu_entries : stacks))
		return 0;
	abi->table_entries = stacks;
	abi->arena_frames = frames;
	abi->cpu_entries = cpu;
	return 1;
}

const char *hs_tables_text(uint32_t table_entries, uint64_t arena_frames, uint32_t cpu_entries,
			   char *buf, size_t len)
{
	snprintf(buf, len, "store %u stacks, %llu frames; %u a CPU", table_entries,
		 (unsigned long long)arena_frames, cpu_entries ? cpu_entries : table_entries);
	return buf;
}

/*
 * CPUs the session's tables will be for: those of -C (or all) online now;
 * off-CPU time's (never -C), every present one.
 */
static unsigned int hs_config_cpus(const struct hs_config *c)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN), n = 0;
	uint64_t present[HS_MAX_CPU_WORDS];
	unsigned int w, b;
	char path[64], list[4096], err[128];
	FILE *f;

	if (c->off_cpu) {
		f = fopen("/sys/devices/system/cpu/present", "r");
		if (f && fgets(list, sizeof(list), f)) {
			list[strcspn(list, "\n")] = 0;
			if (!hs_parse_cpus(list, present, HS_MAX_CPU_WORDS, &w, err, sizeof(err)))
				while (w--)
					n += __builtin_popcountll(present[w]);
		}
		if (f)
			fclose(f);
	}
	if (n)
		return n;
	if (!c->abi.cpus_words)
		return online > 0 ? online : 1;
	for (w = 0; w < c->abi.cpus_words; w++)
		for (b = 0; b < 64; b++) {
			int fd;
			char on = '1';

			if (!(c->cpus[w] >> b & 1))
				continue;
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online",
				 w * 64 + b);
			fd = open(path, O_RDONLY);
			if (fd >= 0) {
				if (read(fd, &on, 1) != 1)
					on = '1';
				close(fd);
			}
			n += on == '1';
		}
	return n ? n : 1;
}

/* What the caller's user holds of its quota, said in a CONFIGURE's EDQUOT. */
static const char *hs_quota_text(int fd)
{
	struct hotstack_info info;
	static char text[160];

	if (hs_get_info(fd, &info) || !info.user_max_sessions)
		return "its use unknown";
	snprintf(text, sizeof(text), "it has %u of %u Hz and %llu of %llu MiB in %u sessions",
		 info.user_freq_used, info.max_freq,
		 (unsigned long long)(info.user_memory_used >> 20),
		 (unsigned long long)(info.user_max_memory >> 20), info.user_sessions);
	return text;
}

/*
 * What the defaults become on this machine and for this caller: tables
 * that fit the module's memory on these CPUs, and at most the frequency
 * the module lets the caller ask for (the group's limit). Said on stderr.
 */
static void hs_config_fit(int fd, struct hs_config *c, const char *cmd)
{
	struct hotstack_info info;
	unsigned int cpus = hs_config_cpus(c);
	uint64_t max_memory, used;
	const char *where = "the module's memory";
	char sizes[96];
	uint32_t freq;

	if (hs_get_info(fd, &info))
		return;
	/* A user of the group: its sessions' rates are summed in its quota. */
	freq = info.max_freq;
	if (info.user_max_sessions && info.user_freq_used < freq)
		freq -= info.user_freq_used;
	if (!c->have_F && !c->have_c && info.max_freq && c->abi.sample > freq) {
		fprintf(stderr, "hotstack %s: sampling at %u Hz, the most the module allows "
			"this user now (group_max_freq %u, %u used by its other sessions)\n", cmd,
			freq, info.max_freq, info.max_freq - freq);
		c->abi.sample = freq;
	}
	if (c->have_table || c->have_arena || c->have_cpu_entries)
		return;
	max_memory = info.max_memory;
	used = info.memory_used;
	if (info.user_max_sessions && used <= max_memory && info.user_memory_used <= info.user_max_memory &&
	    info.user_max_memory - info.user_memory_used < max_memory - used) {
		max_memory = info.user_max_memory;
		used = info.user_memory_used;
		where = "this user's quota";
	}
	/*
	 * Few CPUs: record's and top's default counts made larger, as far as
	 * 1 MiB of count tables a generation (a CPU of 2 or 4 counts as many
	 * stacks as the store holds, of 8 half of that; 16 CPUs and more keep
	 * 4096): a CPU sees as many distinct stacks on a small machine as on
	 * a big one, and 16 CPUs still take at most 1.2 times 2 CPUs' memory.
	 */
	while (c->abi.cpu_entries >= HS_CPU_ENTRIES && c->abi.cpu_entries < c->abi.table_entries &&
	       (uint64_t)cpus * c->abi.cpu_entries * 2 * sizeof(struct hotstack_count) <= 1 << 20)
		c->abi.cpu_entries *= 2;
	/* Lowered to fit, never raised: a command's own smaller default stays. */
	if (hs_fit_tables(max_memory, used, cpus, &c->abi) != 1)
		return;
	fprintf(stderr, "hotstack %s: %s: %.1f MiB, to fit %u CPU%s in %s (%llu of %llu MiB free; "
		"--table-entries, --arena-frames and --cpu-entries choose)\n", cmd,
		hs_tables_text(c->abi.table_entries, c->abi.arena_frames, c->abi.cpu_entries, sizes,
			       sizeof(sizes)),
		hs_tables_bytes(c->abi.table_entries, c->abi.arena_frames, c->abi.cpu_entries,
				cpus) / 1048576.0, cpus, cpus == 1 ? "" : "s", where,
		(unsigned long long)((max_memory - used) >> 20), (unsigned long long)(max_memory >> 20));
}

/* -G's path @p as opened: under /sys/fs/cgroup unless absolute. */
static void hs_cgroup_path(const char *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", *p == '/' ? "" : "/sys/fs/cgroup/", p);
}

static void hs_close_cgroups(int32_t *fds, unsigned int nr)
{
	while (nr)
		close(fds[--nr]);
}

/* -G's cgroups opened into @fds, or -1 after saying which could not be. */
static int hs_open_cgroups(const struct hs_config *c, int32_t *fds, const char *cmd)
{
	char path[4096];
	unsigned int i;

	for (i = 0; i < c->nr_cgroups; i++) {
		hs_cgroup_path(c->cgroups[i], path, sizeof(path));
		fds[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "hotstack %s: -G %s: cannot open %s: %s\n", cmd,
				c->cgroups[i], path, strerror(errno));
			hs_close_cgroups(fds, i);
			return -1;
		}
	}
	return 0;
}

/* -G's paths as opened, for a message. */
static const char *hs_cgroups_text(const struct hs_config *c)
{
	static char text[1024];
	char path[4096];
	size_t n = 0;
	unsigned int i;

	text[0] = '\0';
	for (i = 0; i < c->nr_cgroups && n < sizeof(text); i++) {
		hs_cgroup_path(c->cgroups[i], path, sizeof(path));
		n += snprintf(text + n, sizeof(text) - n, "%s%s", i ? ", " : "", path);
	}
	return text;
}

int hs_session_configure(int fd, struct hs_config *c, const char *cmd)
{
	int32_t cgroup_fds[HOTSTACK_MAX_CGROUPS];
	struct hotstack_config cfg;
	struct hotstack_info info;
	int err;

	hs_config_fit(fd, c, cmd);
	cfg = c->abi;

	cfg.size = sizeof(cfg);
	cfg.flags |= cfg.pid ? HOTSTACK_CFG_PID : 0;
	/*
	 * A process on every CPU: events on its own tasks, inherited by what
	 * they start, so nothing else is sampled. With -a or -C, or a budget
	 * (the module cannot change inherited events' periods): every CPU's
	 * event, and the others' samples filtered out. Off-CPU time has no
	 * events: a budget changes nothing there.
	 */
	if (cfg.pid && !c->all_cpus && !cfg.cpus_words && (!cfg.budget_ppm || c->off_cpu))
		cfg.flags |= HOTSTACK_CFG_TASK;
	cfg.event_type = c->ev.type;
	cfg.event_config = c->ev.config;
	cfg.precise = c->ev.precise;
	/*
	 * User frames are named in their process: the whole system's are
	 * counted by process (its key), shown only as --keys pid asks.
	 */
	c->profile_flags &= ~HS_PROFILE_NO_PID;
	if ((cfg.stacks & HOTSTACK_STACK_USER) && !cfg.pid && !(cfg.keys & HOTSTACK_KEY_TGID)) {
		cfg.keys |= HOTSTACK_KEY_TGID;
		c->profile_flags |= HS_PROFILE_NO_PID;
	}
	/* The whole system's samples leave the idle task out, as bcc's profile does. */
	if (c->ev.exclude_idle || (!c->include_idle && !cfg.pid && !c->nr_cgroups))
		cfg.flags |= HOTSTACK_CFG_EXCLUDE_IDLE;
	if (c->off_cpu) {
		/*
		 * The process and what it starts (TASK), or with -a its
		 * threads alone, by the PID filter; no event but --wall's clock.
		 */
		cfg.flags = HOTSTACK_CFG_OFF_CPU |
			    (cfg.flags & (HOTSTACK_CFG_COLLAPSE | HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK |
					  HOTSTACK_CFG_USER_TABLES | HOTSTACK_CFG_OFF_NEW |
					  HOTSTACK_CFG_WAKERS |
					  (c->wall ? HOTSTACK_CFG_FREQ : 0)));
		if (!c->wall) {
			cfg.event_type = 0;
			cfg.event_config = 0;
			cfg.precise = 0;
			cfg.sample = 0;
		}
	}
	cfg.cpus_ptr = cfg.cpus_words ? (uintptr_t)c->cpus : 0;
	if (hs_open_cgroups(c, cgroup_fds, cmd))
		return -1;
	cfg.nr_cgroups = c->nr_cgroups;
	cfg.cgroups_ptr = c->nr_cgroups ? (uintptr_t)cgroup_fds : 0;
	err = ioctl(fd, HOTSTACK_IOC_CONFIGURE, &cfg) ? errno : 0;
	hs_close_cgroups(cgroup_fds, c->nr_cgroups);
	if (!err) {
		/* Once, when configured (not again for the cycles fallback's try). */
		if (cfg.pid && cfg.budget_ppm && !c->all_cpus && !cfg.cpus_words && !c->off_cpu)
			fprintf(stderr, "hotstack %s: with --budget every CPU is sampled and other "
				"processes' samples filtered out: the budget is of each CPU, theirs "
				"included\n", cmd);
		return 0;
	}
	if (err == EOPNOTSUPP && c->off_cpu) {
		fprintf(stderr, "hotstack %s: %s needs the kernel's sched_switch%s "
			"tracepoint%s, which this kernel lacks (built without CONFIG_TRACEPOINTS)\n",
			cmd, c->wall ? "--wall" : "--off-cpu", c->wakers ? " and sched_waking" : "",
			c->wakers ? "s" : "");
		return -1;
	}
	/* A module before --wakers refuses the flag it does not know. */
	if (err == EINVAL && c->wakers && !hs_get_info(fd, &info) &&
	    !(info.features & HOTSTACK_FEAT_WAKERS)) {
		fprintf(stderr, "hotstack %s: the loaded hotstack module has no --wakers: load "
			"this release's (make module; rmmod hotstack; insmod hotstack.ko)\n", cmd);
		return -1;
	}
	if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) && !c->off_cpu &&
	    c->ev.type == PERF_TYPE_HARDWARE && c->ev.config == PERF_COUNT_HW_CPU_CYCLES) {
		fprintf(stderr, "hotstack: warning: cycles is not supported on this machine "
			"(no PMU?), falling back to cpu-clock\n");
		c->event = "cpu-clock";
		c->ev.type = PERF_TYPE_SOFTWARE;
		c->ev.config = PERF_COUNT_SW_CPU_CLOCK;
		c->ev.precise = 0;
		return hs_session_configure(fd, c, cmd);
	}
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		fprintf(stderr, "hotstack %s: event %s is not supported on this machine (%s)\n",
			cmd, c->event, strerror(err));
		break;
	case EBADF:
		fprintf(stderr, "hotstack %s: -G: not a cgroup v2 directory (the unified hierarchy, "
			"mounted at /sys/fs/cgroup on systemd's machines): %s\n", cmd,
			hs_cgroups_text(c));
		break;
	case E2BIG:
		fprintf(stderr, "hotstack %s: the tables would pass the module's memory limit "
			"(max_memory_mb): use smaller --cpu-entries / --table-entries / "
			"--arena-frames, fewer CPUs (-C), or reload the module with a larger "
			"max_memory_mb\n", cmd);
		break;
	case EDQUOT:
		fprintf(stderr, "hotstack %s: past this user's quota: at most group_max_freq "
			"samples a second per CPU in all its sessions, group_max_memory_mb of "
			"tables, and the group as a whole three quarters of max_memory_mb (%s); "
			"close other sessions, ask for less (-F, --cpu-entries, --table-entries, "
			"-C), or run as root\n", cmd, hs_quota_text(fd));
		break;
	default:
		fprintf(stderr, "hotstack %s: cannot configure the session: %s\n", cmd,
			strerror(err));
	}
	return -1;
}

int hs_session_start(int fd, const char *cmd)
{
	if (!ioctl(fd, HOTSTACK_IOC_START, 0))
		return 0;
	fprintf(stderr, "hotstack %s: cannot start: %s\n", cmd, strerror(errno));
	return -1;
}

void hs_session_stop(int fd)
{
	ioctl(fd, HOTSTACK_IOC_STOP, 0);
}

int hs_session_stats(int fd, uint32_t flags, struct hotstack_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = flags;
	return ioctl(fd, HOTSTACK_IOC_GET_STATS, st) ? -errno : 0;
}

void hs_live_compute(const struct hotstack_stats *st, uint32_t table_entries, double seconds,
		     int off_cpu, const struct hs_table_fill *f, struct hs_live *l)
{
	const struct hotstack_cpu_stats *t = &st->total;
	/* A count table too takes entries up to 3/4 of its places. */
	uint64_t per_cpu = f ? (uint64_t)f->cpu_entries * 3 / 4 : 0;

	memset(l, 0, sizeof(*l));
	l->cpu_fill = per_cpu ? 100.0 * f->most / per_cpu : -1;
	l->cpu = f ? f->cpu : 0;
	/*
	 * The store takes stacks up to 3/4 of its entries (the module's probe
	 * limit), every CPU's together: each stack is kept once.
	 */
	l->capacity = (uint64_t)table_entries * 3 / 4;
	/* Handler runs: with a budget, samples count more than once. */
	l->rate = seconds > 0 ? st->interrupts / seconds : 0;
	l->fill = l->capacity ? 100.0 * t->entries / l->capacity : 0;
	l->dropped = hs_sum_drops(t->drops);
	l->cost_ns = t->timed ? (double)t->handler_ns / t->timed : 0;
	l->overhead = st->elapsed_ns && st->nr_cpus ?
		      100.0 * l->cost_ns * st->interrupts / ((double)st->elapsed_ns * st->nr_cpus) : 0;
	if (st->budget_ppm && off_cpu)
		snprintf(l->budget, sizeof(l->budget), "budget %.4g%%: %.3f%% CPU, one switch "
			 "in %u timed and counted %u times, %llu rate changes",
			 st->budget_ppm / 1e4, st->window_ppm / 1e4, st->max_weight,
			 st->max_weight, (unsigned long long)st->rate_changes);
	else if (st->budget_ppm)
		snprintf(l->budget, sizeof(l->budget), "budget %.4g%%: %.3f%% CPU with %u ns "
			 "a sample for the interrupt, a sample counts %u, %llu rate changes",
			 st->budget_ppm / 1e4, st->window_ppm / 1e4, st->floor_ns, st->max_weight,
			 (unsigned long long)st->rate_changes);
}

const char *hs_live_cpu_fill(const struct hs_live *l, char *buf, size_t size)
{
	if (l->cpu_fill < 0)
		snprintf(buf, size, "%s", "");
	else
		snprintf(buf, size, ", CPU %u's counts %.0f%% full", l->cpu, l->cpu_fill);
	return buf;
}

void hs_live_off_cpu(const struct hotstack_stats *st, const struct hs_live *l, int wall,
		     char *buf, size_t size)
{
	char start[160] = "";
	int n = 0;

	if (st->waits_at_start)
		n = snprintf(start, sizeof(start), ", %llu waits in progress at the start timed "
			     "from it", (unsigned long long)st->waits_at_start);
	if (st->wakers_unseen)
		snprintf(start + n, sizeof(start) - n, ", %llu sleeps without their waker seen",
			 (unsigned long long)st->wakers_unseen);
	snprintf(buf, size, "%.6f s %s timed in %llu switches%s, %.6f s dropped, %llu "
		 "untimed%s%s, %.0f ns/switch%s%s", st->total.samples / 1e9,
		 wall ? "of wall-clock time" : "off the CPU", (unsigned long long)st->interrupts,
		 wall ? " and samples" : "", l->dropped / 1e9,
		 (unsigned long long)st->untimed, st->untimed ? " (--off-cpu-tasks)" : "", start,
		 l->cost_ns, l->budget[0] ? "; " : "", l->budget);
}

void hs_live_status_line(int fd, const struct hs_table_map *m, double elapsed,
			 uint32_t table_entries, int off_cpu, int wall)
{
	struct hotstack_stats st;
	struct hs_table_fill f;
	struct hs_live l;
	char fill[64];

	if (hs_session_stats(fd, 0, &st) || !st.nr_cpus)
		return;
	hs_live_compute(&st, table_entries, elapsed, off_cpu,
			m && !hs_table_fullest(m, &f) ? &f : NULL, &l);
	hs_live_cpu_fill(&l, fill, sizeof(fill));
	if (off_cpu) {
		char text[512];

		hs_live_off_cpu(&st, &l, wall, text, sizeof(text));
		fprintf(stderr, "\r[%6.1fs] %llu stacks (%.0f%% of %llu%s), %s\033[K", elapsed,
			(unsigned long long)st.total.entries, l.fill,
			(unsigned long long)l.capacity, fill, text);
		return;
	}
	fprintf(stderr, "\r[%6.1fs] %8.0f samples/s, %llu stacks (%.0f%% of %llu%s), %llu dropped, "
		"%.0f ns/sample, %.3f%% CPU%s%s\033[K", elapsed, l.rate,
		(unsigned long long)st.total.entries, l.fill, (unsigned long long)l.capacity, fill,
		(unsigned long long)l.dropped, l.cost_ns, l.overhead, l.budget[0] ? "; " : "",
		l.budget);
}

/* Whether @pid still runs this program (forked, not yet exec'd its command). */
static int hs_not_execd(pid_t pid)
{
	char path[64], exe[4096], self[4096];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	a = readlink(path, exe, sizeof(exe));
	b = readlink("/proc/self/exe", self, sizeof(self));
	return a > 0 && a == b && !memcmp(exe, self, a);
}

/*
 * How often the loader looks at the module's misses when the module has
 * not woken it (it does, poll()'s POLLPRI, as soon as a process waits).
 */
#define HS_UNWIND_POLL_MS	100

struct hs_uwload *hs_session_unwind(int fd, const struct hs_config *c, uint32_t pid,
				    const char *cmd)
{
	struct hs_uwload *uw;
	int ret;

	if (!(c->abi.flags & HOTSTACK_CFG_USER_TABLES))
		return NULL;
	uw = hs_uw_new(fd, NULL);
	if (!uw) {
		fprintf(stderr, "hotstack %s: no memory for unwind tables: user stacks by frame "
			"pointers only\n", cmd);
		return NULL;
	}
	if (pid) {
		hs_uw_set_pids(uw, &pid, 1);
		hs_uw_load_pid(uw, pid);
	}
	ret = hs_uw_start(uw, HS_UNWIND_POLL_MS);
	if (ret) {
		fprintf(stderr, "hotstack %s: cannot start the unwind tables' thread (%s): user "
			"stacks by frame pointers only\n", cmd, strerror(-ret));
		hs_uw_free(uw);
		return NULL;
	}
	return uw;
}

void hs_unwind_summary(const struct hotstack_stats *st, struct hs_uwload *uw, char *buf,
		       size_t size)
{
	static const char *const stop[] = {
		[HOTSTACK_UWS_EXPR] = "expression", [HOTSTACK_UWS_SIGNAL] = "signal frame",
		[HOTSTACK_UWS_FAULT] = "unreadable", [HOTSTACK_UWS_STACK] = "bad frame",
		[HOTSTACK_UWS_LINK] = "link register", [HOTSTACK_UWS_FP] = "no frame record",
	};
	struct hs_uw_stats us;
	size_t len;
	unsigned int i;

	buf[0] = '\0';
	if (!uw || !st->uw_walks)
		return;
	hs_uw_get_stats(uw, &us);
	len = snprintf(buf, size, "user stacks: %llu walked, %.1f%% to their outermost frame; "
		       "frames by unwind tables %llu, by frame pointers %llu; %llu walks before "
		       "their process's tables", (unsigned long long)st->uw_walks,
		       100.0 * st->uw_complete / st->uw_walks,
		       (unsigned long long)st->uw_table_frames,
		       (unsigned long long)st->uw_fp_frames, (unsigned long long)st->uw_no_maps);
	for (i = 0; i < sizeof(stop) / sizeof(stop[0]) && len < size; i++)
		if (st->uw_stops[i])
			len += snprintf(buf + len, size - len, "; %llu stopped: %s",
					(unsigned long long)st->uw_stops[i], stop[i]);
	if (len < size)
		len += snprintf(buf + len, size - len, "; %llu tables (%.1f MiB) of %llu processes, "
				"built in %.0f ms", (unsigned long long)us.tables,
				us.bytes / 1048576.0, (unsigned long long)us.processes,
				us.build_ms);
	if (us.errors && len < size)
		snprintf(buf + len, size - len, "; %llu loads failed (the last: %s)",
			 (unsigned long long)us.errors, strerror(-us.last_error));
}

/* Capture @pid's maps for its symbols; once it has gone, those @uw loaded it from. */
static void hs_capture_pid(struct hs_usyms *u, uint32_t pid, struct hs_uwload *uw, int all)
{
	char *maps;

	if ((all ? hs_usyms_capture(u, pid) : hs_usyms_refresh(u, pid)) != -ENOENT)
		return;
	maps = hs_uw_maps_text(uw, pid);
	if (maps)
		hs_usyms_capture_text(u, pid, maps);
}

void hs_capture_maps(struct hs_usyms *u, const struct hs_table_map *m, uint32_t pid, int child,
		     struct hs_uwload *uw, int all)
{
	static uint32_t pids[4096];
	static uint64_t ids[4096];
	size_t n, i;

	/* The cgroups' names, while they are there to read. */
	n = m->base ? hs_table_cgroups(m, ids, sizeof(ids) / sizeof(ids[0])) : 0;
	if (n)
		hs_cgroups_capture(hs_cgroup_root_here(), ids, n, m->fd);
	if (!u)
		return;
	if (pid && !(child && hs_not_execd(child)))
		hs_capture_pid(u, pid, uw, all);
	n = m->base ? hs_table_pids(m, pids, sizeof(pids) / sizeof(pids[0])) : 0;
	for (i = 0; i < n; i++)
		if (pids[i] != pid)
			hs_capture_pid(u, pids[i], uw, all);
}
