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

/* A group whose members may open /dev/hotstack besides CAP_PERFMON holders. */
static int group = -1;
module_param(group, int, 0444);
MODULE_PARM_DESC(group, "Group ID allowed to open /dev/hotstack (default -1: root only)");

kgid_t hotstack_group = INVALID_GID;

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

static int hotstack_autostart(void)
{
	struct hotstack_config c = {
		.size = sizeof(c),
		.flags = HOTSTACK_CFG_FREQ,
		.sample = autostart_freq,
		.stacks = HOTSTACK_STACK_KERNEL,
		.max_depth = 127,
		.table_entries = 4096,
		.arena_frames = 1 << 16,
	};
	struct hotstack_session *s;
	unsigned int i;
	int ret;

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
	s = hotstack_session_new(0);
	if (!s)
		return -ENOMEM;
	mutex_lock(&s->lock);
	ret = hotstack_configure(s, &c, cpu_possible_mask);
	if (!ret)
		ret = hotstack_start(s);
	mutex_unlock(&s->lock);
	if (ret) {
		pr_err("cannot start the autostart session (%s at %u Hz): %d\n",
		       autostart_event, autostart_freq, ret);
		hotstack_session_free(s);
		return ret;
	}
	hotstack_persistent = s;
	return 0;
}

static struct miscdevice hotstack_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "hotstack",
	.fops = &hotstack_fops,
	.mode = 0600,
};

static int __init hotstack_init(void)
{
	int ret;

	if (hotstack_max_sessions < 1 || hotstack_max_sessions > 1024) {
		pr_err("max_sessions=%u is out of range 1-1024\n", hotstack_max_sessions);
		return -EINVAL;
	}
	if (hotstack_max_memory_mb < 1 || hotstack_max_memory_mb > (1U << 20)) {
		pr_err("max_memory_mb=%u is out of range 1-1048576\n", hotstack_max_memory_mb);
		return -EINVAL;
	}
	if (group >= 0) {
		hotstack_group = make_kgid(&init_user_ns, group);
		if (!gid_valid(hotstack_group)) {
			pr_err("group=%d is not a valid group ID\n", group);
			return -EINVAL;
		}
		/* Members of the group pass the check in open(). */
		hotstack_misc.mode = 0666;
	} else if (group != -1) {
		pr_err("group=%d: use a group ID, or -1 for root only\n", group);
		return -EINVAL;
	}

	if (event_rate < 1 || event_rate > 100000) {
		pr_err("event_rate=%u is out of range 1-100000\n", event_rate);
		return -EINVAL;
	}
	ret = hotstack_genl_init(event_rate);
	if (ret) {
		pr_err("cannot register the generic netlink family: %d\n", ret);
		return ret;
	}
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
}

module_init(hotstack_init);
module_exit(hotstack_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-kernel aggregating stack sampler");
MODULE_AUTHOR("The hotstack developers");
MODULE_VERSION("0.1");
