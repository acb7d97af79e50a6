// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack - what delegated users may hold
 *
 * A delegated user (a member of the module's group without CAP_PERFMON)
 * is counted by the real uid that opened the session, as the kernel
 * counts a user's processes. Each has its own quota: group_max_sessions
 * sessions, group_max_memory_mb of tables, and group_max_freq samples a
 * second per CPU summed over its configured sessions. All of them
 * together hold at most three quarters of max_sessions and max_memory_mb:
 * the rest is kept for CAP_PERFMON holders, whom no member can lock out.
 * Past a quota: EDQUOT (open, CONFIGURE).
 */
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>

#include "hotstack.h"

struct hs_user {
	struct list_head node;	/* in hs_users */
	kuid_t uid;
	unsigned int sessions;	/* open */
	u64 memory;		/* bytes of tables */
	u64 rate;		/* samples a second per CPU, configured */
};

static LIST_HEAD(hs_users);
static DEFINE_SPINLOCK(hs_users_lock);
/* All delegated users' sessions and table bytes (hs_users_lock). */
static unsigned int hs_group_sessions;
static u64 hs_group_memory;

static unsigned int hs_group_pool_sessions(void)
{
	return hotstack_max_sessions - DIV_ROUND_UP(hotstack_max_sessions, 4);
}

static u64 hs_group_pool_memory(void)
{
	u64 max = (u64)hotstack_max_memory_mb << 20;

	return max - max / 4;
}

static struct hs_user *hs_user_find(kuid_t uid)
{
	struct hs_user *u;

	lockdep_assert_held(&hs_users_lock);
	list_for_each_entry(u, &hs_users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * hotstack_user_get - take a session of the caller's quota
 *
 * Returns NULL for a CAP_PERFMON holder (no quota), the caller's user, or
 * ERR_PTR(-EDQUOT) when its sessions or the group's are all taken.
 */
struct hs_user *hotstack_user_get(void)
{
	struct hs_user *u, *new;
	kuid_t uid = current_uid();
	int ret = 0;

	if (perfmon_capable())
		return NULL;
	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return ERR_PTR(-ENOMEM);
	spin_lock(&hs_users_lock);
	u = hs_user_find(uid);
	if ((u && u->sessions >= hotstack_group_max_sessions) ||
	    hs_group_sessions >= hs_group_pool_sessions()) {
		ret = -EDQUOT;
	} else {
		if (!u) {
			u = new;
			new = NULL;
			u->uid = uid;
			list_add(&u->node, &hs_users);
		}
		u->sessions++;
		hs_group_sessions++;
	}
	spin_unlock(&hs_users_lock);
	kfree(new);
	return ret ? ERR_PTR(ret) : u;
}

/* Give back a session of @u's (NULL: none), its tables and rate gone. */
void hotstack_user_put(struct hs_user *u)
{
	if (!u)
		return;
	spin_lock(&hs_users_lock);
	hs_group_sessions--;
	if (--u->sessions) {
		u = NULL;
	} else {
		WARN_ON_ONCE(u->memory || u->rate);
		list_del(&u->node);
	}
	spin_unlock(&hs_users_lock);
	kfree(u);
}

/* Take @size bytes of tables of @u's quota and the group's: 0 or -EDQUOT. */
int hotstack_user_reserve(struct hs_user *u, u64 size)
{
	int ret = 0;

	if (!u)
		return 0;
	spin_lock(&hs_users_lock);
	if (size > ((u64)hotstack_group_max_memory_mb << 20) - u->memory ||
	    size > hs_group_pool_memory() - hs_group_memory) {
		ret = -EDQUOT;
	} else {
		u->memory += size;
		hs_group_memory += size;
	}
	spin_unlock(&hs_users_lock);
	return ret;
}

void hotstack_user_unreserve(struct hs_user *u, u64 size)
{
	if (!u)
		return;
	spin_lock(&hs_users_lock);
	u->memory -= size;
	hs_group_memory -= size;
	spin_unlock(&hs_users_lock);
}

/*
 * A session of @u's configured at @new samples a second per CPU where it
 * was at @old: 0, or -EDQUOT when its user's sessions would pass
 * group_max_freq in all.
 */
int hotstack_user_rate(struct hs_user *u, u64 old, u64 new)
{
	int ret = 0;

	if (!u)
		return 0;
	spin_lock(&hs_users_lock);
	if (u->rate - old + new > hotstack_group_max_freq)
		ret = -EDQUOT;
	else
		u->rate = u->rate - old + new;
	spin_unlock(&hs_users_lock);
	return ret;
}

/* The caller's quota and what its user holds (all 0 with CAP_PERFMON). */
void hotstack_user_info(struct hotstack_info *info)
{
	struct hs_user *u;

	info->user_max_sessions = 0;
	info->user_sessions = 0;
	info->user_max_memory = 0;
	info->user_memory_used = 0;
	info->user_freq_used = 0;
	info->pad2 = 0;
	if (perfmon_capable())
		return;
	info->user_max_sessions = hotstack_group_max_sessions;
	info->user_max_memory = (u64)hotstack_group_max_memory_mb << 20;
	spin_lock(&hs_users_lock);
	u = hs_user_find(current_uid());
	if (u) {
		info->user_sessions = u->sessions;
		info->user_memory_used = u->memory;
		info->user_freq_used = u->rate;
	}
	spin_unlock(&hs_users_lock);
}
