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

	ret = misc_register(&hotstack_misc);
	if (ret) {
		pr_err("cannot register /dev/hotstack: %d\n", ret);
		return ret;
	}
	return 0;
}

static void __exit hotstack_exit(void)
{
	misc_deregister(&hotstack_misc);
}

module_init(hotstack_init);
module_exit(hotstack_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-kernel aggregating stack sampler");
MODULE_AUTHOR("The hotstack developers");
MODULE_VERSION("0.1");
