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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/hotstack.h>

#include "cgroup.h"
#include "profile.h"
#include "util.h"

/*
 * The names known: an open-addressing table on the id (0: free). Each
 * was asked for; @round: the last capture that named it or whose walk
 * saw its directory.
 */
static struct hs_cg_name {
	uint64_t id;
	char *path;
	unsigned int round;
} *hs_cg;
static size_t hs_cg_mask, hs_cg_nr;
static const char *hs_cg_root;
static size_t hs_cg_root_len;
static unsigned int hs_cg_walks, hs_cg_round;
/* The walk's: the ids it looks for, sorted. */
static const uint64_t *hs_cg_want;
static size_t hs_cg_nr_want;

/*
 * Ids a walk did not find (a cgroup removed before it was named): looked
 * for again after 1, 2, 4 ... 64 s, not at every capture.
 */
static struct hs_cg_fail {
	uint64_t id;
	double next, gap;
} *hs_cg_fails;
static size_t hs_cg_nr_fails, hs_cg_fails_cap;

static int hs_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct hs_cg_name *hs_cg_slot(uint64_t id)
{
	size_t i = (id * 0x9e3779b97f4a7c15ULL) >> 20;

	for (;; i++) {
		struct hs_cg_name *n = &hs_cg[i & hs_cg_mask];

		if (n->id == id || !n->id)
			return n;
	}
}

/* A table of @size places (a power of two) with the entries kept of the old one. */
static int hs_cg_rehash(size_t size, const uint64_t *keep, size_t nr_keep)
{
	struct hs_cg_name *old = hs_cg;
	size_t i, old_size = hs_cg ? hs_cg_mask + 1 : 0;

	hs_cg = calloc(size, sizeof(*hs_cg));
	if (!hs_cg) {
		hs_cg = old;
		return -ENOMEM;
	}
	hs_cg_mask = size - 1;
	hs_cg_nr = 0;
	for (i = 0; i < old_size; i++) {
		if (!old[i].id)
			continue;
		/* @keep: what the last capture did not see is kept only if asked for. */
		if (keep && old[i].round != hs_cg_round &&
		    !bsearch(&old[i].id, keep, nr_keep, sizeof(*keep), hs_u64_cmp)) {
			free(old[i].path);
			continue;
		}
		*hs_cg_slot(old[i].id) = old[i];
		hs_cg_nr++;
	}
	free(old);
	return 0;
}

static int hs_cg_add(uint64_t id, const char *path)
{
	struct hs_cg_name *n;

	/* At most half full: grown to twice its size. */
	if ((!hs_cg || (hs_cg_nr + 1) * 2 > hs_cg_mask + 1) &&
	    hs_cg_rehash(hs_cg ? 2 * (hs_cg_mask + 1) : 256, NULL, 0))
		return -ENOMEM;
	n = hs_cg_slot(id);
	n->round = hs_cg_round;
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

unsigned int hs_cgroups_walks(void)
{
	return hs_cg_walks;
}

static int hs_cg_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	uint64_t id = sb->st_ino;
	struct hs_cg_name *n;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	/* A name known: seen. One asked for: named. Any other: not kept. */
	n = hs_cg ? hs_cg_slot(id) : NULL;
	if (n && n->id) {
		n->round = hs_cg_round;
		return FTW_CONTINUE;
	}
	if (!bsearch(&id, hs_cg_want, hs_cg_nr_want, sizeof(id), hs_u64_cmp))
		return FTW_CONTINUE;
	return hs_cg_add(id, path + hs_cg_root_len) ? FTW_STOP : FTW_CONTINUE;
}

/* @id's entry among the failed, or NULL. */
static struct hs_cg_fail *hs_cg_failed(uint64_t id)
{
	size_t i;

	for (i = 0; i < hs_cg_nr_fails; i++)
		if (hs_cg_fails[i].id == id)
			return &hs_cg_fails[i];
	return NULL;
}

int hs_cgroup_path_from(int fd, uint64_t id, char *buf)
{
	struct hotstack_cgroup_path cp = { .size = sizeof(cp), .id = id };

	if (ioctl(fd, HOTSTACK_IOC_CGROUP_PATH, &cp))
		return -errno;
	memcpy(buf, cp.path, sizeof(cp.path));
	buf[sizeof(cp.path) - 1] = '\0';
	return 0;
}

/* @proc/@who/ns/cgroup's link ("cgroup:[N]") in @buf, "" when it cannot be read. */
static void hs_cg_ns(const char *proc, const char *who, char *buf, size_t len)
{
	char path[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/ns/cgroup", proc, who);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* The module's name of @id added (@fd: /dev/hotstack, -1: none): 0 when it has one. */
static int hs_cg_ask(int fd, uint64_t id)
{
	char path[HOTSTACK_CGROUP_PATH_MAX];

	if (fd < 0 || hs_cgroup_path_from(fd, id, path))
		return -1;
	return hs_cg_add(id, strcmp(path, "/") ? path : "");
}

/*
 * Whether this process's cgroup namespace is the first process's: the
 * module's paths (in the caller's namespace) are then the walk's. Found
 * once; 0 when it cannot tell.
 */
static int hs_cg_init_ns(void)
{
	static int same = -1;
	char self[128], init[128];

	if (same < 0) {
		hs_cg_ns("/proc", "self", self, sizeof(self));
		hs_cg_ns("/proc", "1", init, sizeof(init));
		same = self[0] && !strcmp(self, init);
	}
	return same;
}

size_t hs_cgroups_capture(const char *root, const uint64_t *ids, size_t n, int fd)
{
	uint64_t *want = NULL, *asked = NULL;
	size_t i, named = 0, nr_want = 0, nr_left;
	double now = hs_now();
	struct hs_cg_fail *f;

	for (i = 0; i < n; i++) {
		if (hs_cgroup_name(ids[i])) {
			named++;
			continue;
		}
		f = hs_cg_failed(ids[i]);
		if (ids[i] && (!f || now >= f->next)) {
			if (!want && !(want = malloc(n * sizeof(*want))))
				return named;
			want[nr_want++] = ids[i];
		}
	}
	if (!nr_want)
		return named;
	hs_cg_round++;
	/*
	 * The module names each (one call, no walk of a node's thousands of
	 * directories for each new container) when its paths are the walk's.
	 */
	nr_left = nr_want;
	if (fd >= 0 && hs_cg_init_ns())
		for (i = 0; i < nr_want; i++)
			nr_left -= !hs_cg_ask(fd, want[i]);
	/* One walk names the others (directories only, not across mounts). */
	if (nr_left) {
		qsort(want, nr_want, sizeof(*want), hs_u64_cmp);
		hs_cg_want = want;
		hs_cg_nr_want = nr_want;
		hs_cg_root = root;
		hs_cg_root_len = strlen(root);
		hs_cg_walks++;
		nftw(root, hs_cg_visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	}
	/* Those not found: the module's name (a cgroup removed), else later, less and less often. */
	for (i = 0; i < nr_want; i++) {
		f = hs_cg_failed(want[i]);
		if (!hs_cgroup_name(want[i]))
			hs_cg_ask(fd, want[i]);
		if (hs_cgroup_name(want[i])) {
			if (f)
				*f = hs_cg_fails[--hs_cg_nr_fails];
			continue;
		}
		if (!f) {
			if (hs_grow(&hs_cg_fails, &hs_cg_fails_cap, hs_cg_nr_fails, sizeof(*f), 16))
				continue;
			f = &hs_cg_fails[hs_cg_nr_fails++];
			*f = (struct hs_cg_fail){ .id = want[i] };
		}
		f->gap = f->gap ? fmin(f->gap * 2, 64) : 1;
		f->next = now + f->gap;
	}
	free(want);
	/*
	 * The names of cgroups gone, unless asked for now: dropped; and the
	 * failed ids no longer asked for (a node's churn of containers).
	 */
	asked = malloc(n * sizeof(*asked));
	if (asked) {
		memcpy(asked, ids, n * sizeof(*asked));
		qsort(asked, n, sizeof(*asked), hs_u64_cmp);
		if (hs_cg)
			hs_cg_rehash(hs_cg_mask + 1, asked, n);
		for (i = 0; i < hs_cg_nr_fails;) {
			if (bsearch(&hs_cg_fails[i].id, asked, n, sizeof(*asked), hs_u64_cmp))
				i++;
			else
				hs_cg_fails[i] = hs_cg_fails[--hs_cg_nr_fails];
		}
		free(asked);
	}
	for (i = 0, named = 0; i < n; i++)
		named += hs_cgroup_name(ids[i]) != NULL;
	return named;
}

/*
 * Where mountinfo file @path has the cgroup2 filesystem mounted: the
 * first mount of its root ("/", or above the reader's cgroup namespace's:
 * *@whole 1), else of a part of it; malloc'd, NULL: none (or no memory).
 */
static char *hs_cg2_mount(const char *path, int *whole)
{
	char *line = NULL, *part = NULL, *found = NULL, *f[5], *sep, *save, *in, *out;
	size_t cap = 0;
	FILE *mi = fopen(path, "re");
	int i;

	*whole = 0;
	while (mi && !found && getline(&line, &cap, mi) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		*sep = '\0';
		for (i = 0, in = strtok_r(line, " ", &save); i < 5 && in;
		     in = strtok_r(NULL, " ", &save))
			f[i++] = in;
		if (i < 5)
			continue;
		/* The mount point's space, tab, newline and backslash are octal escapes. */
		for (in = out = f[4]; *in; out++) {
			if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' &&
			    in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
				*out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + in[3] - '0');
				in += 4;
			} else {
				*out = *in++;
			}
		}
		*out = '\0';
		/*
		 * The root is as the reader's cgroup namespace sees it: "/.."
		 * (once a level) for a mount of a tree above its own root.
		 */
		for (in = f[3]; !strncmp(in, "/..", 3) && (!in[3] || in[3] == '/'); in += 3)
			;
		if (!strcmp(in, "/") || (!*in && in != f[3])) {
			found = strdup(f[4]);
			*whole = 1;
		} else if (!part) {
			part = strdup(f[4]);
		}
	}
	free(line);
	if (mi)
		fclose(mi);
	if (found) {
		free(part);
		return found;
	}
	return part;
}

char *hs_cgroup_root(const char *proc)
{
	char self[128], init[128], path[4096], *own, *root;
	int own_whole, init_whole;

	hs_cg_ns(proc, "self", self, sizeof(self));
	hs_cg_ns(proc, "1", init, sizeof(init));
	snprintf(path, sizeof(path), "%s/self/mountinfo", proc);
	own = hs_cg2_mount(path, &own_whole);
	if (own && own_whole && self[0] && !strcmp(self, init))
		return own;
	/*
	 * A cgroup namespace of its own (Kubernetes' and docker's default on
	 * cgroup v2), one it cannot tell, or only a part of the tree mounted:
	 * the whole tree as the first process sees it, when this one may look
	 * there (the same tree when the namespace is the same).
	 */
	snprintf(path, sizeof(path), "%s/1/mountinfo", proc);
	root = hs_cg2_mount(path, &init_whole);
	if (root && init_whole) {
		snprintf(path, sizeof(path), "%s/1/root%s", proc, strcmp(root, "/") ? root : "");
		if (!access(path, R_OK | X_OK)) {
			free(root);
			free(own);
			return strdup(path);
		}
	}
	free(root);
	return own ?: strdup(HS_CGROUP_ROOT);
}

const char *hs_cgroup_root_here(void)
{
	static char *root;

	if (!root)
		root = hs_cgroup_root("/proc");
	return root ?: HS_CGROUP_ROOT;
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

/*
 * A container's id in directory name @s[0..len): 1 and @id set, else 0.
 * 64 hex digits (docker, containerd, CRI-O, podman, nerdctl), or ECS
 * Fargate's 32 and a number (/ecs/TASK/HEX32-DIGITS).
 */
static int hs_container_of(const char *s, size_t len, char *id)
{
	static const char *const prefix[] = {
		"docker-", "cri-containerd-", "crio-", "libpod-", "nerdctl-",
	};
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
	if (!hs_hex(s, len, 64)) {
		if (len < 34 || len > 64 || !hs_hex(s, 32, 32) || s[32] != '-' ||
		    strspn(s + 33, "0123456789") != len - 33)
			return 0;
	}
	memcpy(id, s, len);
	id[len] = '\0';
	return 1;
}

/*
 * A pod's uid in directory name @s[0..len) (kubepods...pod<uid>[.slice]):
 * a UUID (systemd escapes its '-' as '_'), or a static pod's 32 hex
 * digits (the kubelet's hash of its manifest).
 */
static int hs_pod_of(const char *s, size_t len, char *uid)
{
	char got[37];
	const char *p;
	size_t i, n, want;

	hs_strip_end(s, &len, ".slice");
	for (want = 36; want >= 32; want -= 4) {
		if (len < want + 3)
			continue;
		p = s + len - want - 3;
		if (memcmp(p, "pod", 3) || (p > s && p[-1] != '-' && p[-1] != '/'))
			continue;
		for (p += 3, n = 0, i = 0; i < want; i++) {
			char c = p[i] == '_' ? '-' : p[i];

			if (want == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
				if (c != '-')
					break;
			} else if (!isxdigit((unsigned char)c)) {
				break;
			}
			got[n++] = tolower((unsigned char)c);
		}
		if (i == want) {
			memcpy(uid, got, n);
			uid[n] = '\0';
			return 1;
		}
	}
	return 0;
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

size_t hs_cgroup_tail(const char *path, size_t len, size_t max)
{
	const char *slash;

	if (len <= max)
		return 0;
	slash = memchr(path + len - max, '/', max);
	return slash ? (size_t)(slash - path) : len - max;
}

size_t hs_cgroups_unnamed(const struct hs_profile *p, uint64_t *samples)
{
	struct hs_strtab ids;
	struct hs_line_keys k;
	size_t i, nr;

	*samples = 0;
	hs_strtab_init(&ids, 0);
	for (i = 0; i < p->nr; i++) {
		hs_line_keys(p, &p->lines[i], &k);
		if (!k.cgroup || k.cgroup[0] == '/' || k.cgroup[0] == '.')
			continue;
		hs_strtab_add(&ids, k.cgroup, k.cgroup_len);
		*samples += p->lines[i].count;
	}
	nr = ids.nr;
	hs_strtab_free(&ids);
	return nr;
}
