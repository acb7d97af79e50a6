// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: the names of cgroups (HOTSTACK_KEY_CGROUP's ids) for the tool
 * and read()'s text. A cgroup that exists is named as the caller's cgroup
 * namespace sees it; one removed while a session keyed by cgroup runs is
 * named by a probe on the cgroup_rmdir tracepoint (attached from the
 * first such session's START to the last one's STOP), which keeps the
 * last HOTSTACK_CGROUPS_GONE paths: a container that lived less than the
 * tool's capture interval is named all the same.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "hotstack.h"

#include <linux/kernfs.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

/*
 * @path's text into @buf (HOTSTACK_CGROUP_PATH_MAX bytes): past its
 * room, "..." and its last directories that fit whole (or its last
 * bytes). The length written.
 */
static size_t hs_cg_put_path(char *buf, const char *path)
{
	size_t len = strlen(path), room = HOTSTACK_CGROUP_PATH_MAX - 1 - 3;
	const char *tail;

	if (len < HOTSTACK_CGROUP_PATH_MAX)
		return strscpy(buf, path, HOTSTACK_CGROUP_PATH_MAX);
	tail = strchr(path + len - room, '/') ?: path + len - room;
	memcpy(buf, "...", 3);
	return 3 + strscpy(buf + 3, tail, HOTSTACK_CGROUP_PATH_MAX - 3);
}

#if HS_HAVE_CGROUP_NAMES

/* The removed cgroups' paths (the hierarchy's own, not a namespace's). */
struct hs_cg_gone {
	u64 id;
	char path[HOTSTACK_CGROUP_PATH_MAX];
};

static struct tracepoint *hs_cgroup_rmdir_tp;
static struct hs_cg_gone *hs_cg_gone;	/* HOTSTACK_CGROUPS_GONE, once allocated */
static unsigned int hs_cg_next;		/* where the next one goes, mod the size */
/* Raw: the probe runs with preemption off (the tracepoint's), on RT too. */
static DEFINE_RAW_SPINLOCK(hs_cg_lock);
/* The sessions keyed by cgroup that run, and the probe's attachment. */
static DEFINE_MUTEX(hs_cg_users_lock);
static unsigned int hs_cg_users;

static void hs_find_rmdir_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "cgroup_rmdir"))
		hs_cgroup_rmdir_tp = tp;
}

/* Called by cgroup_rmdir() with the removed cgroup's path (cgroup_path()'s). */
static void hs_cgroup_rmdir(void *data, struct cgroup *cgrp, const char *path)
{
	struct hs_cg_gone *g;
	unsigned long flags;

	if (!path || path[0] != '/')
		return;
	raw_spin_lock_irqsave(&hs_cg_lock, flags);
	g = &hs_cg_gone[hs_cg_next++ % HOTSTACK_CGROUPS_GONE];
	g->id = cgroup_id(cgrp);
	hs_cg_put_path(g->path, path);
	raw_spin_unlock_irqrestore(&hs_cg_lock, flags);
}

void hotstack_cgnames_init(void)
{
	for_each_kernel_tracepoint(hs_find_rmdir_tp, NULL);
	if (!hs_cgroup_rmdir_tp)
		pr_info("no cgroup_rmdir tracepoint: cgroups removed are named by id\n");
}

void hotstack_cgnames_exit(void)
{
	kvfree(hs_cg_gone);
	hs_cg_gone = NULL;
}

bool hotstack_cgnames_get(void)
{
	int ret = 0;

	if (!hs_cgroup_rmdir_tp)
		return false;
	mutex_lock(&hs_cg_users_lock);
	/* The module's, not a session's (not in max_memory_mb): kept to its unload. */
	if (!hs_cg_gone)
		hs_cg_gone = kvcalloc(HOTSTACK_CGROUPS_GONE, sizeof(*hs_cg_gone), GFP_KERNEL);
	if (!hs_cg_gone)
		ret = -ENOMEM;
	else if (!hs_cg_users)
		ret = tracepoint_probe_register(hs_cgroup_rmdir_tp, hs_cgroup_rmdir, NULL);
	if (!ret)
		hs_cg_users++;
	mutex_unlock(&hs_cg_users_lock);
	return !ret;
}

void hotstack_cgnames_put(void)
{
	mutex_lock(&hs_cg_users_lock);
	if (!WARN_ON_ONCE(!hs_cg_users) && !--hs_cg_users) {
		WARN_ON_ONCE(tracepoint_probe_unregister(hs_cgroup_rmdir_tp, hs_cgroup_rmdir,
							 NULL));
		/* No probe is still writing when the module may go. */
		tracepoint_synchronize_unregister();
	}
	mutex_unlock(&hs_cg_users_lock);
}

/*
 * Removed cgroup @id's path into @buf, as the caller's cgroup namespace
 * sees it (@tmp: PATH_MAX bytes of room); its length, or -ENOENT.
 */
static int hs_cg_gone_path(u64 id, char *buf, char *tmp)
{
	struct cgroup_namespace *ns = current->nsproxy->cgroup_ns;
	unsigned long flags;
	unsigned int i;
	int ret = -ENOENT, len;

	if (!hs_cg_gone)
		return -ENOENT;
	raw_spin_lock_irqsave(&hs_cg_lock, flags);
	for (i = 1; i <= HOTSTACK_CGROUPS_GONE && i <= hs_cg_next; i++) {
		const struct hs_cg_gone *g = &hs_cg_gone[(hs_cg_next - i) % HOTSTACK_CGROUPS_GONE];

		if (g->id == id) {
			ret = strscpy(buf, g->path, HOTSTACK_CGROUP_PATH_MAX);
			break;
		}
	}
	raw_spin_unlock_irqrestore(&hs_cg_lock, flags);
	if (ret < 0)
		return ret;
	/* Below the namespace's root, as that namespace writes it. */
	len = kernfs_path_from_node(ns->root_cset->dfl_cgrp->kn, NULL, tmp, PATH_MAX);
	if (len < 0 || len >= PATH_MAX)
		return -ENOENT;
	if (!strcmp(tmp, "/"))
		return ret;
	if (strncmp(buf, tmp, len) || buf[len] != '/')
		return -ENOENT;
	memmove(buf, buf + len, ret - len + 1);
	return ret - len;
}

#else /* no cgroups or no tracepoints: no probe, and no name of a cgroup gone */

void hotstack_cgnames_init(void)
{
}

void hotstack_cgnames_exit(void)
{
}

bool hotstack_cgnames_get(void)
{
	return false;
}

void hotstack_cgnames_put(void)
{
}

static int hs_cg_gone_path(u64 id, char *buf, char *tmp)
{
	return -ENOENT;
}

#endif

int hotstack_cgroup_path(u64 id, char *buf, bool *gone)
{
	char *tmp = kmalloc(PATH_MAX, GFP_KERNEL);
	int ret;

	if (!tmp)
		return -ENOMEM;
	/* There now (and in the caller's namespace): its path there. */
	ret = hs_cgroup_path_ns(id, tmp, PATH_MAX);
	*gone = ret < 0;
	ret = *gone ? hs_cg_gone_path(id, buf, tmp) : hs_cg_put_path(buf, tmp);
	*gone = *gone && ret >= 0;
	kfree(tmp);
	return ret;
}
