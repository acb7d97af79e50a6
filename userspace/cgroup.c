// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: cgroup v2 ids named by their paths, and what a path says
 * of its container (cgroup.h).
 *
 * A cgroup's id (cgroup_id() in the kernel, what HOTSTACK_KEY_CGROUP
 * counts) is, on 64-bit kernels, the inode number of its directory in
 * the cgroup2 filesystem: a walk of the tree with stat() names them all.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"

/* The names known: an open-addressing table on the id (0: free). */
static struct hs_cg_name {
	uint64_t id;
	char *path;
} *hs_cg;
static size_t hs_cg_mask, hs_cg_nr;
static const char *hs_cg_root;
static size_t hs_cg_root_len;

static struct hs_cg_name *hs_cg_slot(uint64_t id)
{
	size_t i = (id * 0x9e3779b97f4a7c15ULL) >> 20;

	for (;; i++) {
		struct hs_cg_name *n = &hs_cg[i & hs_cg_mask];

		if (n->id == id || !n->id)
			return n;
	}
}

static int hs_cg_add(uint64_t id, const char *path)
{
	struct hs_cg_name *n;

	if (!id)
		return 0;
	/* At most half full: grown to twice its size. */
	if (!hs_cg || (hs_cg_nr + 1) * 2 > hs_cg_mask + 1) {
		struct hs_cg_name *old = hs_cg;
		size_t i, size = hs_cg ? 2 * (hs_cg_mask + 1) : 256;

		hs_cg = calloc(size, sizeof(*hs_cg));
		if (!hs_cg) {
			hs_cg = old;
			return -ENOMEM;
		}
		hs_cg_mask = size - 1;
		for (i = 0; old && i < size / 2; i++)
			if (old[i].id)
				*hs_cg_slot(old[i].id) = old[i];
		free(old);
	}
	n = hs_cg_slot(id);
	if (n->id)
		return 0;	/* named already: an id is never another cgroup's */
	n->path = strdup(path[0] ? path : "/");
	if (!n->path)
		return -ENOMEM;
	n->id = id;
	hs_cg_nr++;
	return 0;
}

const char *hs_cgroup_name(uint64_t id)
{
	const struct hs_cg_name *n;

	if (!hs_cg || !id)
		return NULL;
	n = hs_cg_slot(id);
	return n->id ? n->path : NULL;
}

static int hs_cg_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D)
		return 0;
	return hs_cg_add(sb->st_ino, path + hs_cg_root_len) ? FTW_STOP : FTW_CONTINUE;
}

size_t hs_cgroups_capture(const char *root, const uint64_t *ids, size_t n)
{
	size_t i, named = 0;

	for (i = 0; i < n; i++)
		named += hs_cgroup_name(ids[i]) != NULL;
	if (named == n)
		return named;
	/* One walk names them all (directories only, not across mounts). */
	hs_cg_root = root;
	hs_cg_root_len = strlen(root);
	nftw(root, hs_cg_visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	for (i = 0, named = 0; i < n; i++)
		named += hs_cgroup_name(ids[i]) != NULL;
	return named;
}

/* Whether @s[0..len) is @n hex digits. */
static int hs_hex(const char *s, size_t len, size_t n)
{
	size_t i;

	if (len != n)
		return 0;
	for (i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* @s[0..*len) without @prefix when it starts with it: 1, else 0. */
static int hs_strip(const char **s, size_t *len, const char *prefix)
{
	size_t n = strlen(prefix);

	if (*len < n || memcmp(*s, prefix, n))
		return 0;
	*s += n;
	*len -= n;
	return 1;
}

/* @s[0..*len) without @suffix when it ends with it: 1, else 0. */
static int hs_strip_end(const char *s, size_t *len, const char *suffix)
{
	size_t n = strlen(suffix);

	if (*len < n || memcmp(s + *len - n, suffix, n))
		return 0;
	*len -= n;
	return 1;
}

/* A container's id in directory name @s[0..len): 1 and @id set, else 0. */
static int hs_container_of(const char *s, size_t len, char *id)
{
	static const char *const prefix[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };
	size_t i;

	/* systemd's scopes: RUNTIME-ID.scope (not CRI-O's conmon-ID). */
	if (hs_strip_end(s, &len, ".scope")) {
		for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
			if (hs_strip(&s, &len, prefix[i]))
				break;
		if (i == sizeof(prefix) / sizeof(prefix[0]))
			return 0;
	}
	/* cgroupfs's: the id alone (/docker/ID, /kubepods/.../podUID/ID). */
	if (!hs_hex(s, len, 64))
		return 0;
	memcpy(id, s, 64);
	id[64] = '\0';
	return 1;
}

/* A pod's uid in directory name @s[0..len) (kubepods...pod<uid>[.slice]). */
static int hs_pod_of(const char *s, size_t len, char *uid)
{
	const char *p;
	size_t i, n;

	hs_strip_end(s, &len, ".slice");
	if (len < 39)
		return 0;
	p = s + len - 39;
	if (memcmp(p, "pod", 3) || (p > s && p[-1] != '-' && p[-1] != '/'))
		return 0;
	for (p += 3, n = 0, i = 0; i < 36; i++) {
		char c = p[i] == '_' ? '-' : p[i];	/* systemd escapes '-' as '_' */

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return 0;
		} else if (!isxdigit((unsigned char)c)) {
			return 0;
		}
		uid[n++] = tolower((unsigned char)c);
	}
	uid[n] = '\0';
	return 1;
}

void hs_cgroup_parse(const char *path, size_t len, struct hs_cgroup_info *info)
{
	const char *end = path + len, *s, *e;

	memset(info, 0, sizeof(*info));
	/* Each directory, outermost first: the innermost of each kind stays. */
	for (s = path; s < end; s = e + 1) {
		size_t n;

		e = memchr(s, '/', end - s) ?: end;
		n = e - s;
		if (!n)
			continue;
		hs_container_of(s, n, info->container_id);
		hs_pod_of(s, n, info->pod_uid);
		if (n < sizeof(info->unit) &&
		    ((n > 8 && !memcmp(e - 8, ".service", 8)) || (n > 6 && !memcmp(e - 6, ".scope", 6)))) {
			memcpy(info->unit, s, n);
			info->unit[n] = '\0';
		}
	}
}
