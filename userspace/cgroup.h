/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: cgroup v2 ids (HOTSTACK_KEY_CGROUP) named by their paths,
 * captured while a session runs (a cgroup removed before the profile is
 * written keeps its name), and what a path says of its container.
 */
#ifndef HOTSTACK_CGROUP_H
#define HOTSTACK_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* The cgroup key's frame: "[cgroup PATH]" (or "[cgroup ID]": no name captured). */
#define HS_CGROUP_KEY		"[cgroup "
/* A path longer is cut to its end (hs_cgroup_tail) in the frame. */
#define HS_CGROUP_FRAME_MAX	512

/*
 * Where path @path (@len bytes) is cut to keep at most @max bytes of it
 * (@max >= 64): 0 when it fits; else the start of its last directories
 * that fit whole (the innermost, which name the container), or of its
 * last @max bytes when one alone is longer.
 */
size_t hs_cgroup_tail(const char *path, size_t len, size_t max);

/* Where the cgroup2 filesystem is looked for when nothing says where. */
#define HS_CGROUP_ROOT	"/sys/fs/cgroup"

/*
 * The directory to walk for the names of cgroups, as procfs @proc tells:
 * the cgroup2 mount of this mount namespace (from @proc/self/mountinfo:
 * /sys/fs/cgroup, /sys/fs/cgroup/unified on a hybrid host); in a cgroup
 * namespace other than the first process's (a container's, where its
 * own mount shows its own subtree alone), or when only a part of the
 * tree is mounted, the first process's whole tree through
 * @proc/1/root when that can be read; else that mount however partial,
 * else HS_CGROUP_ROOT. Malloc'd (NULL: no memory).
 * hs_cgroup_root_here(): this process's, found once.
 */
char *hs_cgroup_root(const char *proc);
const char *hs_cgroup_root_here(void);

/*
 * The path of cgroup @id below the cgroup2 root ("/" for the root,
 * "/system.slice/ssh.service"), as last captured; NULL when unknown.
 */
const char *hs_cgroup_name(uint64_t id);

/*
 * Name the ids of @ids that have no name yet: the module names each
 * (/dev/hotstack's @fd, HOTSTACK_IOC_CGROUP_PATH; -1: not asked) when
 * this process's cgroup namespace is the first process's; the cgroup2
 * tree under @root (HS_CGROUP_ROOT; another for tests) is walked once for
 * those left, and names those alone; those it did not find (removed
 * before) the module names as they were when removed while a session
 * keyed by cgroup ran. An id neither named is looked for again after 1,
 * 2, 4 ... 64 s, not at every capture. A name neither asked for nor seen
 * by this capture's walk is dropped: the names kept are those asked for,
 * of cgroups still there or asked for now. Returns how many of @ids have
 * a name.
 */
size_t hs_cgroups_capture(const char *root, const uint64_t *ids, size_t n, int fd);

/*
 * Cgroup @id's path as the module names it (@fd: /dev/hotstack) into
 * @buf (HOTSTACK_CGROUP_PATH_MAX bytes): 0; -errno (ENOENT: it cannot,
 * ENOTTY: a module without the call).
 */
int hs_cgroup_path_from(int fd, uint64_t id, char *buf);

struct hs_profile;

/*
 * The cgroup keys of @p that have no name ("[cgroup ID]": removed before
 * anything named them), how many distinct; their samples in *@samples.
 */
size_t hs_cgroups_unnamed(const struct hs_profile *p, uint64_t *samples);

/* The walks of the tree so far (for the tests). */
unsigned int hs_cgroups_walks(void);

/* What a cgroup path says of the container and unit it is (empty strings: nothing). */
struct hs_cgroup_info {
	char container_id[65];	/* 64 hex digits; ECS Fargate's HEX32-DIGITS */
	char pod_uid[37];	/* Kubernetes: kubepods...pod<uid> (a static pod's: 32 hex) */
	char unit[128];		/* the innermost systemd unit (*.service, *.scope) */
};

/*
 * Parse @path (@len bytes): the runtimes' usual layouts, systemd's
 * (docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope,
 * libpod-ID.scope, nerdctl-ID.scope, kubepods-...-podUID.slice) and
 * cgroupfs's (/docker/ID, /kubepods/.../podUID/ID, /ecs/TASK/ID), nested
 * ones by their innermost. A pod's own cgroup (the pod's slice, CRI-O's
 * conmon) gives its pod uid and no container.
 */
void hs_cgroup_parse(const char *path, size_t len, struct hs_cgroup_info *info);

#endif
