// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack agent's --group-by: an interval's profile split into one
 * profile per container, cgroup or unit (read from each stack's cgroup
 * key), each with its labels and its file name's part.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cgroup.h"
#include "k8s.h"
#include "profile.h"
#include "push.h"
#include "util.h"

/* @s with the characters a label value may not have made '_'. */
void hs_agent_sanitize(char *s)
{
	for (; *s; s++)
		if (!hs_label_value_ok(s, 1))
			*s = '_';
}

/* @g's next label @key=@v[0..len) (its value made a label value), and its index. */
static size_t hs_agent_group_label(struct hs_agent_group *g, size_t i, const char *key,
				   const char *v, size_t len)
{
	snprintf(g->label[i], sizeof(g->label[i]), "%s=%.*s", key, (int)len, v);
	hs_agent_sanitize(g->label[i] + strlen(key) + 1);
	return i + 1;
}

/* @g's labels joined by ',' in @buf ("" for none). */
void hs_agent_group_key(const struct hs_agent_group *g, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < HS_GROUP_LABELS && g->label[i][0] && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? "," : "", g->label[i]);
}

/*
 * Line @l's group by --group-by into @g (labels, file name part), all
 * empty when it has none: no cgroup key, or a cgroup of no container
 * or pod (no unit). The file's part: the container's id (else the
 * pod's uid), the cgroup's path, the unit's name and its container's id.
 */
static void hs_agent_group_of(int group_by, const struct hs_line_keys *k,
			      struct hs_agent_group *g)
{
	struct hs_cgroup_info info;
	struct hs_k8s_names kn;
	size_t n = 0, i, own = 1, len;
	char file[700];

	memset(g->label, 0, sizeof(g->label));
	g->file[0] = '\0';
	if (!k->cgroup)
		return;
	hs_cgroup_parse(k->cgroup, k->cgroup_len, &info);
	if (group_by == HS_GROUP_CONTAINER) {
		if (!info.container_id[0] && !info.pod_uid[0])
			return;
		if (info.container_id[0])
			n = hs_agent_group_label(g, n, "container.id", info.container_id,
						 strlen(info.container_id));
		if (info.pod_uid[0])
			n = hs_agent_group_label(g, n, "k8s.pod.uid", info.pod_uid,
						 strlen(info.pod_uid));
	} else if (group_by == HS_GROUP_CGROUP) {
		/* A value is 256 bytes at most: a longer path keeps its innermost part. */
		i = hs_cgroup_tail(k->cgroup, k->cgroup_len, 256);
		n = hs_agent_group_label(g, n, "cgroup", k->cgroup + i, k->cgroup_len - i);
	} else if (group_by == HS_GROUP_UNIT && info.unit[0]) {
		/* A container's nginx.service is not the host's. */
		n = hs_agent_group_label(g, n, "systemd.unit", info.unit, strlen(info.unit));
		if (info.container_id[0])
			n = hs_agent_group_label(g, n, "container.id", info.container_id,
						 strlen(info.container_id));
	} else {
		return;
	}
	if (group_by == HS_GROUP_UNIT)
		own = n;
	/* The workload: Kubernetes' namespace/container (or pod), else the unit. */
	if (hs_k8s_names(info.container_id, info.pod_uid, &kn)) {
		snprintf(file, sizeof(file), "%s/%s", kn.ns, kn.container[0] ? kn.container : kn.pod);
		n = hs_agent_group_label(g, n, "service_name", file, strlen(file));
		n = hs_agent_group_label(g, n, "k8s.namespace.name", kn.ns, strlen(kn.ns));
		n = hs_agent_group_label(g, n, "k8s.pod.name", kn.pod, strlen(kn.pod));
		if (kn.container[0])
			hs_agent_group_label(g, n, "k8s.container.name", kn.container,
					     strlen(kn.container));
	} else if (info.unit[0]) {
		hs_agent_group_label(g, n, "service_name", info.unit, strlen(info.unit));
	}
	/* The file's part: the values in [A-Za-z0-9._-]; past 100 bytes their end and a hash. */
	for (i = 0, len = 0; i < own; i++)
		len += snprintf(file + len, sizeof(file) - len, "%s%s", i ? "-" : "",
				strchr(g->label[i], '=') + 1);
	if (len <= 100) {
		snprintf(g->file, sizeof(g->file), "%s", file);
	} else {
		snprintf(g->file, sizeof(g->file), "%s-%08x", file + len - 91,
			 (unsigned int)hs_hash(file, len));
	}
	for (i = 0; g->file[i]; i++)
		if (!isalnum((unsigned char)g->file[i]) && !strchr("._-", g->file[i]))
			g->file[i] = '_';
}

/*
 * @p's lines by group (@group_by: HS_GROUP_*): *@out, *@nr of them, the first
 * those of no group (drops included). 0 or -ENOMEM; free each profile
 * and *@out. A cgroup's group is made once, for all its lines.
 */
int hs_agent_split(int group_by, const struct hs_profile *p, struct hs_agent_group **out,
		   size_t *nr)
{
	struct hs_agent_group *g = calloc(1, sizeof(*g)), one;
	struct hs_strtab names, cgroups;
	char key[sizeof(one.label)];
	size_t i, cap = 1, *group = NULL, nr_cg = 0, cap_cg = 0;
	struct hs_line_keys k;
	long id, cg;
	int ret = g ? 0 : -ENOMEM;

	*nr = g ? 1 : 0;
	hs_strtab_init(&names, 1);
	hs_strtab_init(&cgroups, 0);
	if (!ret && hs_strtab_add(&names, "", 0) < 0)
		ret = -ENOMEM;
	for (i = 0; i < p->nr && !ret; i++) {
		hs_line_keys(p, &p->lines[i], &k);
		id = 0;
		cg = k.cgroup ? hs_strtab_add(&cgroups, k.cgroup, k.cgroup_len) : -1;
		if (cg >= 0 && (size_t)cg < nr_cg) {
			id = group[cg];
		} else if (cg >= 0) {
			hs_agent_group_of(group_by, &k, &one);
			hs_agent_group_key(&one, key, sizeof(key));
			id = hs_strtab_add(&names, key, strlen(key));
			if (id >= 0 && (size_t)id == *nr) {
				/* Twice the room when full: 500 groups are not 500 copies of the array. */
				if (hs_grow(&g, &cap, *nr, sizeof(*g), 1)) {
					ret = -ENOMEM;
					break;
				}
				g[*nr] = one;
				memset(&g[*nr].p, 0, sizeof(g[*nr].p));
				++*nr;
			}
			if (id >= 0 && hs_grow(&group, &cap_cg, nr_cg, sizeof(*group), 64))
				id = -ENOMEM;
			if (id >= 0)
				group[nr_cg++] = id;
		} else if (k.cgroup) {
			id = -ENOMEM;
		}
		ret = id < 0 ? -ENOMEM : hs_profile_add(&g[id].p, p->lines[i].stack,
							p->lines[i].len, p->lines[i].count);
	}
	hs_strtab_free(&cgroups);
	hs_strtab_free(&names);
	free(group);
	*out = g;
	return ret;
}
