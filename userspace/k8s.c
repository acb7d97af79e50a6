// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: Kubernetes' names of containers and pods from the
 * kubelet's log directories (k8s.h). One readdir of each a second at
 * most; lookups by binary search.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "k8s.h"
#include "util.h"

/* A container's (@key its id) or a pod's (@key its uid) names. */
struct hs_k8s_entry {
	char key[65];
	struct hs_k8s_names n;
};

static struct hs_k8s_set {
	struct hs_k8s_entry *e;
	size_t nr, cap;
} hs_k8s_containers, hs_k8s_pods;
static double hs_k8s_when;

static int hs_k8s_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hs_k8s_entry *)a)->key,
		      ((const struct hs_k8s_entry *)b)->key);
}

/* @s[0..len) into @dst (of @size), 0; -1 when too long or empty. */
static int hs_k8s_copy(char *dst, size_t size, const char *s, size_t len)
{
	if (!len || len >= size)
		return -1;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

/* Whether @s[0..len) is a Kubernetes name: [a-z0-9.-] (no '_', no '/'). */
static int hs_k8s_name_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '.'))
			return 0;
	return len > 0;
}

/*
 * Directory entry @name as A_B_C@tail: its three parts (@a, @b, @c; the
 * last up to the end less @tail), 0; -1 when it is not so.
 */
static int hs_k8s_split(const char *name, const char *tail, const char **part, size_t *len)
{
	size_t n = strlen(name), t = strlen(tail);
	const char *u1, *u2;

	if (n <= t || strcmp(name + n - t, tail))
		return -1;
	n -= t;
	u1 = memchr(name, '_', n);
	u2 = u1 ? memchr(u1 + 1, '_', name + n - u1 - 1) : NULL;
	if (!u2 || memchr(u2 + 1, '_', name + n - u2 - 1))
		return -1;
	part[0] = name, len[0] = u1 - name;
	part[1] = u1 + 1, len[1] = u2 - u1 - 1;
	part[2] = u2 + 1, len[2] = name + n - u2 - 1;
	return 0;
}

static struct hs_k8s_entry *hs_k8s_more(struct hs_k8s_set *s)
{
	if (hs_grow(&s->e, &s->cap, s->nr, sizeof(*s->e), 64))
		return NULL;
	memset(&s->e[s->nr], 0, sizeof(s->e[0]));
	return &s->e[s->nr];
}

/* containers/POD_NAMESPACE_CONTAINER-ID.log */
static void hs_k8s_container(struct hs_k8s_set *s, const char *name)
{
	struct hs_k8s_entry *e = hs_k8s_more(s);
	const char *part[3];
	size_t len[3];

	if (!e || hs_k8s_split(name, ".log", part, len) || len[2] < 66 ||
	    part[2][len[2] - 65] != '-')
		return;
	len[2] -= 65;
	if (!hs_k8s_name_ok(part[0], len[0]) || !hs_k8s_name_ok(part[1], len[1]) ||
	    !hs_k8s_name_ok(part[2], len[2]) ||
	    hs_k8s_copy(e->key, sizeof(e->key), part[2] + len[2] + 1, 64) ||
	    strspn(e->key, "0123456789abcdef") != 64 ||
	    hs_k8s_copy(e->n.pod, sizeof(e->n.pod), part[0], len[0]) ||
	    hs_k8s_copy(e->n.ns, sizeof(e->n.ns), part[1], len[1]) ||
	    hs_k8s_copy(e->n.container, sizeof(e->n.container), part[2], len[2]))
		return;
	s->nr++;
}

/* pods/NAMESPACE_POD_UID */
static void hs_k8s_pod(struct hs_k8s_set *s, const char *name)
{
	struct hs_k8s_entry *e = hs_k8s_more(s);
	const char *part[3];
	size_t len[3];

	if (!e || hs_k8s_split(name, "", part, len) || (len[2] != 36 && len[2] != 32) ||
	    strspn(part[2], "0123456789abcdef-") < len[2] ||
	    !hs_k8s_name_ok(part[0], len[0]) || !hs_k8s_name_ok(part[1], len[1]) ||
	    hs_k8s_copy(e->key, sizeof(e->key), part[2], len[2]) ||
	    hs_k8s_copy(e->n.ns, sizeof(e->n.ns), part[0], len[0]) ||
	    hs_k8s_copy(e->n.pod, sizeof(e->n.pod), part[1], len[1]))
		return;
	s->nr++;
}

/* @s anew from directory @dir, each entry by @one. */
static void hs_k8s_read(struct hs_k8s_set *s, const char *dir,
			void (*one)(struct hs_k8s_set *, const char *))
{
	DIR *d = opendir(dir);
	struct dirent *de;

	s->nr = 0;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			one(s, de->d_name);
	if (d)
		closedir(d);
	qsort(s->e, s->nr, sizeof(*s->e), hs_k8s_cmp);
}

size_t hs_k8s_scan(const char *logs)
{
	char dir[4096];
	struct stat st;
	double now = hs_now();

	if (hs_k8s_when && now - hs_k8s_when < 1)
		return hs_k8s_containers.nr;
	hs_k8s_when = now;
	if (!logs) {
		logs = HS_K8S_LOGS;
		if (stat(HS_K8S_LOGS "/containers", &st) &&
		    !stat("/proc/1/root" HS_K8S_LOGS "/containers", &st))
			logs = "/proc/1/root" HS_K8S_LOGS;
	}
	snprintf(dir, sizeof(dir), "%s/containers", logs);
	hs_k8s_read(&hs_k8s_containers, dir, hs_k8s_container);
	snprintf(dir, sizeof(dir), "%s/pods", logs);
	hs_k8s_read(&hs_k8s_pods, dir, hs_k8s_pod);
	return hs_k8s_containers.nr;
}

static const struct hs_k8s_entry *hs_k8s_find(const struct hs_k8s_set *s, const char *key)
{
	struct hs_k8s_entry k;

	if (!key || !key[0] || !s->nr || hs_k8s_copy(k.key, sizeof(k.key), key, strlen(key)))
		return NULL;
	return bsearch(&k, s->e, s->nr, sizeof(*s->e), hs_k8s_cmp);
}

int hs_k8s_names(const char *id, const char *uid, struct hs_k8s_names *out)
{
	const struct hs_k8s_entry *e = hs_k8s_find(&hs_k8s_containers, id);

	e = e ?: hs_k8s_find(&hs_k8s_pods, uid);
	if (!e) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	*out = e->n;
	return 1;
}

void hs_k8s_free(void)
{
	free(hs_k8s_containers.e);
	free(hs_k8s_pods.e);
	memset(&hs_k8s_containers, 0, sizeof(hs_k8s_containers));
	memset(&hs_k8s_pods, 0, sizeof(hs_k8s_pods));
	hs_k8s_when = 0;
}
