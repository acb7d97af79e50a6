/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: Kubernetes' names of a node's containers and pods, as
 * the kubelet lays out their logs (what log collectors read):
 * /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log for each container
 * and /var/log/pods/NAMESPACE_POD_UID/ for each pod (names of
 * Kubernetes have no '_').
 */
#ifndef HOTSTACK_K8S_H
#define HOTSTACK_K8S_H

/* Where the kubelet's log directories are (the node's /var/log). */
#define HS_K8S_LOGS	"/var/log"

/* A container's or a pod's names ("" when not known). */
struct hs_k8s_names {
	char ns[64];		/* k8s.namespace.name: a DNS label, 63 at most */
	char pod[254];		/* k8s.pod.name: a DNS subdomain, 253 at most */
	char container[64];	/* k8s.container.name: a DNS label */
};

/*
 * Read @logs/containers and @logs/pods again (NULL: HS_K8S_LOGS, or the
 * first process's through /proc/1/root where this one has no
 * containers directory: an agent in a container of its own), at most
 * once a second; what they no longer have is forgotten. How many
 * containers are known.
 */
size_t hs_k8s_scan(const char *logs);

/*
 * The names of container @id (64 hex digits), else of pod @uid: 1 and
 * @out set, 0 when the last scan did not see it (@out all "").
 */
int hs_k8s_names(const char *id, const char *uid, struct hs_k8s_names *out);

/* Everything forgotten (for the tests, and at exit). */
void hs_k8s_free(void);

#endif
