// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: in-kernel aggregating stack sampler.
 *
 * Load and unload, module parameters and the misc device /dev/hotstack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <linux/hotstack.h>

#include "hotstack.h"

/* How many sessions (open files) may exist at once. */
unsigned int hotstack_max_sessions = 16;
module_param_named(max_sessions, hotstack_max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "Sessions open at once, 1-1024 (default 16)");

/* Memory all sessions' tables may take together, in MiB. */
unsigned int hotstack_max_memory_mb = 256;
module_param_named(max_memory_mb, hotstack_max_memory_mb, uint, 0444);
MODULE_PARM_DESC(max_memory_mb, "MiB all sessions may allocate, 1-1048576 (default 256)");

/* Memory all sessions' user unwind tables and mappings may take, in MiB. */
unsigned int hotstack_max_unwind_mb = 256;
module_param_named(max_unwind_mb, hotstack_max_unwind_mb, uint, 0444);
MODULE_PARM_DESC(max_unwind_mb,
		 "MiB all sessions' unwind tables may take, 1-1048576 (default 256)");

/* A group whose members may open /dev/hotstack besides CAP_PERFMON holders. */
kgid_t hotstack_group = INVALID_GID;

static int hs_group_set(const char *val, const struct kernel_param *kp)
{
	kgid_t gid;
	u32 id;

	if (sysfs_streq(val, "-1")) {
		hotstack_group = INVALID_GID;
		return 0;
	}
	if (kstrtou32(val, 10, &id)) {
		pr_err("group=%s: use a group ID, or -1 for root only\n", val);
		return -EINVAL;
	}
	gid = make_kgid(&init_user_ns, id);
	if (!gid_valid(gid)) {
		pr_err("group=%u is not a valid group ID\n", id);
		return -EINVAL;
	}
	hotstack_group = gid;
	return 0;
}

static int hs_group_get(char *buf, const struct kernel_param *kp)
{
	if (!gid_valid(hotstack_group))
		return sysfs_emit(buf, "-1\n");
	return sysfs_emit(buf, "%u\n", from_kgid(&init_user_ns, hotstack_group));
}

static const struct kernel_param_ops hs_group_ops = {
	.set = hs_group_set,
	.get = hs_group_get,
};
module_param_cb(group, &hs_group_ops, NULL, 0444);
MODULE_PARM_DESC(group, "Group ID allowed to open /dev/hotstack (default -1: root only)");

/* What the group may ask for: samples a second per CPU, at most. */
unsigned int hotstack_group_max_freq = 1000;
module_param_named(group_max_freq, hotstack_group_max_freq, uint, 0444);
MODULE_PARM_DESC(group_max_freq,
		 "Highest frequency the group may sample at, 1-100000 (default 1000)");

/* Each delegated user's quota (quota.c). */
unsigned int hotstack_group_max_sessions = 4;
module_param_named(group_max_sessions, hotstack_group_max_sessions, uint, 0444);
MODULE_PARM_DESC(group_max_sessions,
		 "Sessions each user of the group may hold open, 1-1024 (default 4)");

unsigned int hotstack_group_max_memory_mb = 64;
module_param_named(group_max_memory_mb, hotstack_group_max_memory_mb, uint, 0444);
MODULE_PARM_DESC(group_max_memory_mb,
		 "MiB of tables each user of the group may hold, 1-1048576 (default 64)");

/* Netlink events sent a second, at most; the others are counted. */
static unsigned int event_rate = 100;
module_param(event_rate, uint, 0444);
MODULE_PARM_DESC(event_rate, "Netlink events per second, 1-100000 (default 100)");

/* Let test modules drive the sample path (hotstack_test_sample()). */
bool hotstack_test_hooks;
module_param_named(test_hooks, hotstack_test_hooks, bool, 0444);
MODULE_PARM_DESC(test_hooks, "Accept samples from test modules (default 0)");

/* A persistent system-wide session, read by any unconfigured open file. */
static bool autostart;
module_param(autostart, bool, 0444);
MODULE_PARM_DESC(autostart, "Start a system-wide session at load (default 0)");

static char *autostart_event = "cpu-clock";
module_param(autostart_event, charp, 0444);
MODULE_PARM_DESC(autostart_event, "Event of the autostart session (default cpu-clock)");

static unsigned int autostart_freq = 99;
module_param(autostart_freq, uint, 0444);
MODULE_PARM_DESC(autostart_freq, "Samples per second per CPU of the autostart session (default 99)");

static unsigned int autostart_budget;
module_param(autostart_budget, uint, 0444);
MODULE_PARM_DESC(autostart_budget,
		 "CPU budget of the autostart session, parts per million of each CPU (default 0: none)");

/*
 * A sample's cost the handler cannot time: the interrupt's entry and exit
 * around it (perf's and the architecture's). The budget adds it to the
 * handler time it measures. The default is about what the empty-handler
 * sampler of make bench costs on the test VMs; write this machine's.
 */
unsigned int hotstack_sample_floor_ns = 1000;
module_param_named(sample_floor_ns, hotstack_sample_floor_ns, uint, 0644);
MODULE_PARM_DESC(sample_floor_ns,
		 "Cost per sample outside the handler, for budgets, 0-1000000 ns (default 1000)");

struct hotstack_session *hotstack_persistent;

/* perf's names of the events hotstack counts. */
static const struct {
	const char *name;
	u32 type;
	u64 config;
} hotstack_events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
};

/*
 * The persistent session's tables: a store of 4096 stacks of 16 frames on
 * average, and each CPU's counts of up to 4096 of them, fewer where that
 * would take more than a quarter of max_memory_mb on this machine's
 * online CPUs, so that other sessions keep room: the counts halved first,
 * while they take more than the store, else the store.
 */
static void hotstack_autostart_size(struct hotstack_config *c)
{
	u64 budget = ((u64)hotstack_max_memory_mb << 20) / 4 / 2, store, counts;
	u32 stacks = 4096, entries = 4096;

	for (;;) {
		store = stacks * (sizeof(struct hotstack_stack) + 16 * sizeof(u64)) + 2 * PAGE_SIZE;
		counts = (u64)num_online_cpus() * (entries * sizeof(struct hotstack_count) + 1024);
		if (store + counts <= budget)
			break;
		if (counts >= store && entries > HOTSTACK_MIN_ENTRIES)
			entries /= 2;
		else if (stacks > HOTSTACK_MIN_ENTRIES * 4)
			stacks /= 2;
		else if (entries > HOTSTACK_MIN_ENTRIES)
			entries /= 2;
		else
			break;
		entries = min(entries, stacks);
	}
	c->table_entries = stacks;
	c->arena_frames = 16 * stacks;
	c->cpu_entries = entries;
}

static int hotstack_autostart(void)
{
	struct hotstack_config c = {
		.size = sizeof(c),
		.flags = HOTSTACK_CFG_FREQ,
		.sample = autostart_freq,
		.stacks = HOTSTACK_STACK_KERNEL,
		.max_depth = 127,
		.budget_ppm = autostart_budget,
	};
	struct hotstack_session *s;
	unsigned int i;
	int ret;

	hotstack_autostart_size(&c);

	for (i = 0; i < ARRAY_SIZE(hotstack_events); i++) {
		if (!strcmp(autostart_event, hotstack_events[i].name)) {
			c.event_type = hotstack_events[i].type;
			c.event_config = hotstack_events[i].config;
			break;
		}
	}
	if (i == ARRAY_SIZE(hotstack_events)) {
		pr_err("autostart_event=%s is not an event hotstack knows\n", autostart_event);
		return -EINVAL;
	}
	s = hotstack_session_new(NULL);
	if (!s)
		return -ENOMEM;
	mutex_lock(&s->lock);
	ret = hotstack_configure(s, &c, cpu_possible_mask, NULL);
	if (!ret)
		ret = hotstack_start(s);
	mutex_unlock(&s->lock);
	if (ret) {
		pr_err("cannot start the autostart session (%s at %u Hz): %d\n",
		       autostart_event, autostart_freq, ret);
		hotstack_session_free(s);
		return ret;
	}
	pr_info("autostart: %s at %u Hz, a store of %u stacks and %llu frames, %u counts per CPU on %u CPUs\n",
		autostart_event, autostart_freq, c.table_entries, c.arena_frames, c.cpu_entries,
		num_online_cpus());
	if (autostart_budget)
		pr_info("autostart: a budget of %u ppm of each CPU\n", autostart_budget);
	hotstack_persistent = s;
	return 0;
}

static struct miscdevice hotstack_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "hotstack",
	.fops = &hotstack_fops,
	.mode = 0600,
};

/* A parameter out of its range fails the load, saying which and why. */
static int __init hs_param_range(const char *name, unsigned int v, unsigned int lo,
				 unsigned int hi)
{
	if (v >= lo && v <= hi)
		return 0;
	pr_err("%s=%u is out of range %u-%u\n", name, v, lo, hi);
	return -EINVAL;
}

static int __init hotstack_init(void)
{
	int ret;

	ret = hs_param_range("max_sessions", hotstack_max_sessions, 1, 1024) ?:
	      hs_param_range("autostart_budget", autostart_budget, 0, 1000000) ?:
	      hs_param_range("max_memory_mb", hotstack_max_memory_mb, 1, 1U << 20) ?:
	      hs_param_range("max_unwind_mb", hotstack_max_unwind_mb, 1, 1U << 20) ?:
	      hs_param_range("group_max_freq", hotstack_group_max_freq, 1, HOTSTACK_MAX_FREQ) ?:
	      hs_param_range("group_max_sessions", hotstack_group_max_sessions, 1, 1024) ?:
	      hs_param_range("group_max_memory_mb", hotstack_group_max_memory_mb, 1, 1U << 20) ?:
	      hs_param_range("event_rate", event_rate, 1, 100000);
	if (ret)
		return ret;
	/* Members of the group pass the check in open(). */
	if (gid_valid(hotstack_group))
		hotstack_misc.mode = 0666;

	ret = hotstack_genl_init(event_rate);
	if (ret) {
		pr_err("cannot register the generic netlink family: %d\n", ret);
		return ret;
	}
	hotstack_off_cpu_init();
	hotstack_cgnames_init();
	ret = hotstack_cpuhp_init();
	if (ret) {
		pr_err("cannot register for CPU hotplug: %d\n", ret);
		goto out_genl;
	}
	if (autostart) {
		ret = hotstack_autostart();
		if (ret)
			goto out_cpuhp;
	}
	ret = misc_register(&hotstack_misc);
	if (ret) {
		pr_err("cannot register /dev/hotstack: %d\n", ret);
		goto out_persistent;
	}
	return 0;

out_persistent:
	if (hotstack_persistent)
		hotstack_session_free(hotstack_persistent);
out_cpuhp:
	hotstack_cpuhp_exit();
out_genl:
	hotstack_genl_exit();
	return ret;
}

static void __exit hotstack_exit(void)
{
	misc_deregister(&hotstack_misc);
	if (hotstack_persistent)
		hotstack_session_free(hotstack_persistent);
	hotstack_cpuhp_exit();
	hotstack_genl_exit();
	hotstack_cgnames_exit();
}

module_init(hotstack_init);
module_exit(hotstack_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-kernel aggregating stack sampler");
MODULE_AUTHOR("The hotstack developers");
MODULE_VERSION("0.1");
