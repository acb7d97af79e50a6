// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup key in the tool: a path's container, pod and unit in the
 * runtimes' layouts; ids named from a cgroup tree (kept once it is gone);
 * the "[cgroup PATH]" key among a line's keys; its pprof labels, and back.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent.h"
#include "cgroup.h"
#include "k8s.h"
#include "profile.h"
#include "pprof_decode.h"

#define ID1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID "1234abcd-5678-90ab-cdef-1234567890ab"
#define UID_ "1234abcd_5678_90ab_cdef_1234567890ab"

static void expect(const char *path, const char *container, const char *pod, const char *unit)
{
	struct hs_cgroup_info i;

	hs_cgroup_parse(path, strlen(path), &i);
	if (strcmp(i.container_id, container) || strcmp(i.pod_uid, pod) || strcmp(i.unit, unit))
		fail_msg("%s: container '%s' pod '%s' unit '%s', not '%s' '%s' '%s'", path,
			 i.container_id, i.pod_uid, i.unit, container, pod, unit);
}

/* @dir/@rel with @text in it (directories made). */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* hs_cgroup_root() of the fake procfs @proc: @want (NULL: HS_CGROUP_ROOT). */
static void expect_root(const char *proc, const char *want)
{
	char *root = hs_cgroup_root(proc);

	assert_non_null(root);
	if (strcmp(root, want))
		fail_msg("%s: the cgroup root is '%s', not '%s'", proc, root, want);
	free(root);
}

#define MI_ROOT	"30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n"

/* Where the cgroup tree is: this namespace's mount, the first process's, or the default. */
static void roots(void **state)
{
	char proc[] = "/tmp/hs_test_cgroot.XXXXXX", path[600], want[600];

	(void)state;
	assert_non_null(mkdtemp(proc));
	/* No cgroup2 (a cgroup v1 host): the default. */
	put(proc, "self/mountinfo", "25 1 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
	expect_root(proc, HS_CGROUP_ROOT);
	/* The usual: /sys/fs/cgroup, pid 1 in the same cgroup namespace. */
	put(proc, "self/mountinfo", "22 1 0:5 / /proc rw - proc proc rw\n" MI_ROOT);
	put(proc, "1/mountinfo", "22 1 0:5 / /proc rw - proc proc rw\n" MI_ROOT);
	snprintf(path, sizeof(path), "%s/self/ns", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/1/ns", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/self/ns/cgroup", proc);
	assert_int_equal(symlink("cgroup:[4026531835]", path), 0);
	snprintf(path, sizeof(path), "%s/1/ns/cgroup", proc);
	assert_int_equal(symlink("cgroup:[4026531835]", path), 0);
	expect_root(proc, "/sys/fs/cgroup");
	/* A hybrid host: cgroup v1's controllers, cgroup2 at .../unified; escapes unescaped. */
	put(proc, "self/mountinfo",
	    "25 1 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	    "26 1 0:23 / /sys/fs/cgroup/uni\\040fied rw - cgroup2 cgroup2 rw\n");
	expect_root(proc, "/sys/fs/cgroup/uni fied");
	/*
	 * A cgroup namespace of its own: the first process's tree, through
	 * its root (its mount's root as this namespace sees it: "/..").
	 */
	put(proc, "1/mountinfo", "28 23 0:23 /.. /sys/fs/cgroup rw - cgroup2 none rw\n");
	put(proc, "self/mountinfo", "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	snprintf(path, sizeof(path), "%s/self/ns/cgroup", proc);
	unlink(path);
	assert_int_equal(symlink("cgroup:[4026532200]", path), 0);
	put(proc, "1/root/sys/fs/cgroup/cgroup.procs", "1\n");
	snprintf(want, sizeof(want), "%s/1/root/sys/fs/cgroup", proc);
	expect_root(proc, want);
	/* Pid 1's namespace unreadable: its tree all the same, when that can be read. */
	snprintf(path, sizeof(path), "%s/1/ns/cgroup", proc);
	unlink(path);
	expect_root(proc, want);
	assert_int_equal(symlink("cgroup:[4026531835]", path), 0);
	/* Its own namespace but pid 1's root out of reach: its own mount, however partial. */
	snprintf(path, sizeof(path), "%s/1/root/sys/fs/cgroup/cgroup.procs", proc);
	unlink(path);
	snprintf(path, sizeof(path), "%s/1/root/sys/fs/cgroup", proc);
	rmdir(path);
	expect_root(proc, "/sys/fs/cgroup");
	/* The same namespace, only a part of the tree mounted: pid 1's whole tree. */
	snprintf(path, sizeof(path), "%s/self/ns/cgroup", proc);
	unlink(path);
	assert_int_equal(symlink("cgroup:[4026531835]", path), 0);
	put(proc, "self/mountinfo", "30 1 0:26 /kubepods.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put(proc, "1/root/sys/fs/cgroup/cgroup.procs", "1\n");
	expect_root(proc, want);
	snprintf(path, sizeof(path), "rm -rf %s", proc);
	assert_int_equal(system(path), 0);
}

static void layouts(void **state)
{
	(void)state;
	/* systemd's driver: the runtimes' scopes. */
	expect("/system.slice/docker-" ID1 ".scope", ID1, "", "docker-" ID1 ".scope");
	expect("/system.slice/crio-" ID1 ".scope", ID1, "", "crio-" ID1 ".scope");
	expect("/machine.slice/libpod-" ID1 ".scope/container", ID1, "", "libpod-" ID1 ".scope");
	/* CRI-O's conmon is no container. */
	expect("/system.slice/crio-conmon-" ID1 ".scope", "", "",
	       "crio-conmon-" ID1 ".scope");
	/* Kubernetes with systemd: the pod's uid escaped ('-' as '_'). */
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	       ".slice/cri-containerd-" ID1 ".scope", ID1, UID, "cri-containerd-" ID1 ".scope");
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID2 ".scope", ID2, UID,
	       "crio-" ID2 ".scope");
	/* cgroupfs's driver. */
	expect("/docker/" ID1, ID1, "", "");
	expect("/kubepods/besteffort/pod" UID "/" ID2, ID2, UID, "");
	/* Nested: the innermost container (docker in docker). */
	expect("/docker/" ID1 "/docker/" ID2, ID2, "", "");
	expect("/system.slice/docker-" ID1 ".scope/docker/" ID2, ID2, "", "docker-" ID1 ".scope");
	/* A static pod's uid: 32 hex digits (systemd's and cgroupfs's). */
	expect("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	       "5c3d0f1e2a4b6c8d9e0f1a2b3c4d5e6f.slice/cri-containerd-" ID1 ".scope", ID1,
	       "5c3d0f1e2a4b6c8d9e0f1a2b3c4d5e6f", "cri-containerd-" ID1 ".scope");
	expect("/kubepods/burstable/pod5C3D0F1E2A4B6C8D9E0F1A2B3C4D5E6F/" ID2, ID2,
	       "5c3d0f1e2a4b6c8d9e0f1a2b3c4d5e6f", "");
	/* A pod's own cgroup (its pause process, CRI-O's conmon): the pod, no container. */
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice", "", UID, "");
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID1 ".scope", "", UID,
	       "crio-conmon-" ID1 ".scope");
	/* nerdctl's scope; ECS (Fargate's HEX32-DIGITS, EC2's docker id). */
	expect("/system.slice/nerdctl-" ID1 ".scope", ID1, "", "nerdctl-" ID1 ".scope");
	expect("/ecs/0123456789abcdef0123456789abcdef/0123456789abcdef0123456789abcdef-1234567890",
	       "0123456789abcdef0123456789abcdef-1234567890", "", "");
	expect("/ecs/0123456789abcdef0123456789abcdef/" ID2, ID2, "", "");
	/* A later near miss keeps the pod found before it. */
	expect("/kubepods/pod" UID "/podxyz/" ID1, ID1, UID, "");
	/* No container: the unit alone, or nothing. */
	expect("/system.slice/ssh.service", "", "", "ssh.service");
	expect("/user.slice/user-1000.slice/session-3.scope", "", "", "session-3.scope");
	expect("/", "", "", "");
	/* Near misses: 63 hex digits, a pod without its uid, another runtime's scope. */
	expect("/docker/" ID1 "0", "", "", "");
	expect("/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", "", "", "");
	expect("/kubepods/podxyz/" ID1, ID1, "", "");
	expect("/system.slice/rkt-" ID1 ".scope", "", "", "rkt-" ID1 ".scope");
	expect("/ecs/x/0123456789abcdef0123456789abcdef-", "", "", "");
	expect("/ecs/x/0123456789abcdef0123456789abcdef-12a", "", "", "");
	expect("/kubepods/pod0123456789abcdef0123456789abcde/" ID1, ID1, "", "");
}

/* A long path is cut before its innermost directories that fit whole. */
static void tails(void **state)
{
	static const char p[] = "/aaaa/bbbb/cccc";

	(void)state;
	assert_int_equal(hs_cgroup_tail(p, 15, 15), 0);
	assert_int_equal(hs_cgroup_tail(p, 15, 14), 5);
	assert_int_equal(hs_cgroup_tail(p, 15, 10), 5);
	assert_int_equal(hs_cgroup_tail(p, 15, 9), 10);
	/* One directory longer than @max: its last @max bytes. */
	assert_int_equal(hs_cgroup_tail(p, 15, 4), 11);
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/* Ids named by a walk of a tree; a directory removed keeps its name. */
static void names(void **state)
{
	char root[] = "/tmp/hs_cgroupXXXXXX", path[256];
	uint64_t ids[3];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/system.slice", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/system.slice/docker-%s.scope", root, ID1);
	assert_int_equal(mkdir(path, 0755), 0);
	ids[0] = ino_of(root);
	ids[1] = ino_of(path);
	ids[2] = 1;	/* no directory of the tree */
	assert_int_equal(hs_cgroups_capture(root, ids, 2, -1), 2);
	assert_string_equal(hs_cgroup_name(ids[0]), "/");
	assert_string_equal(hs_cgroup_name(ids[1]), "/system.slice/docker-" ID1 ".scope");
	assert_null(hs_cgroup_name(ids[2]));
	assert_null(hs_cgroup_name(0));
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/system.slice", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
	/* Gone, and looked for again (the unknown id): still named. */
	assert_int_equal(hs_cgroups_capture("/nonexistent", ids, 3, -1), 2);
	assert_string_equal(hs_cgroup_name(ids[1]), "/system.slice/docker-" ID1 ".scope");
}

/*
 * The names kept are those asked for: a walk names no other directory,
 * drops the names of cgroups gone that are not asked for any more, and
 * an id it did not find is not walked for again at once.
 */
static void names_bounded(void **state)
{
	char root[] = "/tmp/hs_cgroupXXXXXX", a[256], b[256];
	unsigned int walks;
	uint64_t ids[2];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(a, sizeof(a), "%s/a.scope", root);
	snprintf(b, sizeof(b), "%s/b.scope", root);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	ids[0] = ino_of(a);
	assert_int_equal(hs_cgroups_capture(root, ids, 1, -1), 1);
	assert_string_equal(hs_cgroup_name(ids[0]), "/a.scope");
	assert_null(hs_cgroup_name(ino_of(b)));
	/* a.scope gone and no longer asked for: dropped by the next walk (for b). */
	assert_int_equal(rmdir(a), 0);
	ids[1] = ino_of(b);
	walks = hs_cgroups_walks();
	assert_int_equal(hs_cgroups_capture(root, ids + 1, 1, -1), 1);
	assert_int_equal(hs_cgroups_walks(), walks + 1);
	assert_null(hs_cgroup_name(ids[0]));
	assert_string_equal(hs_cgroup_name(ids[1]), "/b.scope");
	/* An id no walk finds: walked for once, then not at the next capture. */
	ids[0] = 3;
	walks = hs_cgroups_walks();
	assert_int_equal(hs_cgroups_capture(root, ids, 2, -1), 1);
	assert_int_equal(hs_cgroups_capture(root, ids, 2, -1), 1);
	assert_int_equal(hs_cgroups_walks(), walks + 1);
	assert_string_equal(hs_cgroup_name(ids[1]), "/b.scope");
	/* b.scope gone, not asked for: no name left (tmpfs gives its inode again). */
	assert_int_equal(rmdir(b), 0);
	ids[0] = 5;
	assert_int_equal(hs_cgroups_capture(root, ids, 1, -1), 0);
	assert_null(hs_cgroup_name(ids[1]));
	/*
	 * Id 3, no longer asked for, was forgotten with its failures (a node's
	 * churn keeps none of them): asked again, it is walked for at once.
	 */
	ids[0] = 3;
	walks = hs_cgroups_walks();
	assert_int_equal(hs_cgroups_capture(root, ids, 1, -1), 0);
	assert_int_equal(hs_cgroups_walks(), walks + 1);
	assert_int_equal(rmdir(root), 0);
}

static const char folded[] =
	"bash;[pid 7];[cgroup /system.slice/docker-" ID1 ".scope];[task];main;f 3\n"
	"[cgroup /kubepods/besteffort/pod" UID "/" ID2 "];[task];main;g 2\n"
	"[pid 9];[cgroup /];h 1\n";

/* The key among a line's keys, with and without the others. */
static void line_keys(void **state)
{
	struct hs_profile p = { 0 };
	struct hs_line_keys k;
	size_t bad;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, folded, &bad), 0);
	assert_int_equal(p.nr, 3);
	hs_line_keys(&p, &p.lines[0], &k);
	assert_true(k.comm && k.comm_len == 4 && !memcmp(k.comm, "bash", 4));
	assert_int_equal(k.pid, 7);
	assert_true(k.cgroup && k.cgroup_len == strlen("/system.slice/docker-" ID1 ".scope"));
	assert_true(!memcmp(k.cgroup, "/system.slice/docker-" ID1 ".scope", k.cgroup_len));
	assert_true(k.context && !memcmp(k.context, "[task]", 6));
	assert_true(!strncmp(k.frames, "main;f", 6));
	hs_line_keys(&p, &p.lines[1], &k);
	assert_null(k.comm);
	assert_int_equal(k.pid, 0);
	assert_true(k.cgroup && !memcmp(k.cgroup, "/kubepods/", 10));
	assert_true(k.context && !strncmp(k.frames, "main;g", 6));
	hs_line_keys(&p, &p.lines[2], &k);
	assert_int_equal(k.pid, 9);
	assert_true(k.cgroup && k.cgroup_len == 1 && k.cgroup[0] == '/');
	assert_true(!strncmp(k.frames, "h", 1));
	hs_profile_free(&p);
}

/*
 * The agent's --group-by split: each line in its container's group (a
 * cgroup's group made once, whatever its lines), the lines of no
 * container in the first; by cgroup, a group each path.
 */
static const char grouped[] =
	"[cgroup /system.slice/docker-" ID1 ".scope];main;f 3\n"
	"[cgroup /kubepods/besteffort/pod" UID "/" ID2 "];main;g 2\n"
	"[cgroup /system.slice/docker-" ID1 ".scope];main;h 4\n"
	"[cgroup /user.slice];x 1\n"
	"[cgroup /kubepods/besteffort/pod" UID "/" ID2 "];main;i 5\n"
	"[dropped];[table full] 7\n";

static void agent_split(void **state)
{
	struct hs_agent_group *g;
	struct hs_profile p = { 0 };
	char key[sizeof(g->label)];
	size_t bad, n, i;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, grouped, &bad), 0);
	p.keys = HOTSTACK_KEY_CGROUP;
	assert_int_equal(hs_agent_split(HS_GROUP_CONTAINER, &p, &g, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(g[0].p.nr, 2);
	assert_int_equal(g[0].p.total, 8);
	hs_agent_group_key(&g[1], key, sizeof(key));
	assert_string_equal(key, "container.id=" ID1 ",service_name=docker-" ID1 ".scope");
	assert_int_equal(g[1].p.nr, 2);
	assert_int_equal(g[1].p.total, 7);
	assert_string_equal(g[1].file, ID1);
	hs_agent_group_key(&g[2], key, sizeof(key));
	assert_string_equal(key, "container.id=" ID2 ",k8s.pod.uid=" UID);
	assert_int_equal(g[2].p.total, 7);
	for (i = 0; i < n; i++)
		hs_profile_free(&g[i].p);
	free(g);
	assert_int_equal(hs_agent_split(HS_GROUP_CGROUP, &p, &g, &n), 0);
	assert_int_equal(n, 4);
	hs_agent_group_key(&g[3], key, sizeof(key));
	assert_string_equal(key, "cgroup=/user.slice");
	assert_int_equal(g[3].p.total, 1);
	assert_int_equal(g[0].p.total, 7);
	for (i = 0; i < n; i++)
		hs_profile_free(&g[i].p);
	free(g);
	hs_profile_free(&p);
}

/* The label of @key of sample @s, "" when it has none. */
static const char *label(const Perftools__Profiles__Profile *prof,
			 const Perftools__Profiles__Sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(prof, s->label[i]->key), key))
			return str(prof, s->label[i]->str);
	return "";
}

/* pprof: the path and what it says as labels; read back, the same lines. */
static void pprof_labels(void **state)
{
	struct hs_profile p = { 0 }, q = { 0 };
	Perftools__Profiles__Profile *prof;
	char path[] = "/tmp/hs_cgroup_pprofXXXXXX", err[256], *text = NULL;
	size_t bad, len = 0, i, seen = 0;
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(hs_profile_parse(&p, folded, &bad), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(hs_write_pprof(f, &p), 0);
	fclose(f);
	prof = decode(path);
	assert_non_null(prof);
	for (i = 0; i < prof->n_sample; i++) {
		const Perftools__Profiles__Sample *s = prof->sample[i];
		const char *cg = label(prof, s, "cgroup");

		if (!strcmp(cg, "/system.slice/docker-" ID1 ".scope")) {
			assert_string_equal(label(prof, s, "container.id"), ID1);
			assert_string_equal(label(prof, s, "systemd.unit"), "docker-" ID1 ".scope");
			assert_string_equal(label(prof, s, "k8s.pod.uid"), "");
			seen++;
		} else if (!strncmp(cg, "/kubepods/", 10)) {
			assert_string_equal(label(prof, s, "container.id"), ID2);
			assert_string_equal(label(prof, s, "k8s.pod.uid"), UID);
			seen++;
		} else if (!strcmp(cg, "/")) {
			assert_string_equal(label(prof, s, "container.id"), "");
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	assert_int_equal(hs_profile_load(&q, path, err, sizeof(err)), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(hs_write_folded(f, &q), 0);
	fclose(f);
	assert_non_null(strstr(text, "bash;[pid 7];[cgroup /system.slice/docker-" ID1
				     ".scope];[task];main;f 3\n"));
	assert_non_null(strstr(text, "[cgroup /kubepods/besteffort/pod" UID "/" ID2
				     "];[task];main;g 2\n"));
	assert_non_null(strstr(text, "[pid 9];[cgroup /];h 1\n"));
	free(text);
	unlink(path);
	hs_profile_free(&p);
	hs_profile_free(&q);
}

/* @argv of the tool's report on the folded text above; its standard output. */
static char *report(const char *args)
{
	char path[] = "/tmp/hs_cgroup_foldedXXXXXX", cmd[512], *out = NULL;
	size_t len = 0, n;
	char buf[4096];
	FILE *f, *o;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, folded, strlen(folded)), (ssize_t)strlen(folded));
	close(fd);
	snprintf(cmd, sizeof(cmd), "../../userspace/hotstack report %s %s", path, args);
	f = popen(cmd, "r");
	assert_non_null(f);
	o = open_memstream(&out, &len);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, o);
	assert_int_equal(pclose(f), 0);
	fclose(o);
	unlink(path);
	return out;
}

/* report's --cgroup (and below), --container (a prefix), --sort cgroup/container. */
static void filters_and_sorts(void **state)
{
	char *out;

	(void)state;
	out = report("--format folded --cgroup /kubepods");
	assert_string_equal(out, "[cgroup /kubepods/besteffort/pod" UID "/" ID2
			    "];[task];main;g 2\n");
	free(out);
	/* "/kube" is no cgroup of them: a path's components, not its letters. */
	out = report("--format folded --cgroup /kube,/system.slice/");
	assert_string_equal(out, "bash;[pid 7];[cgroup /system.slice/docker-" ID1
			    ".scope];[task];main;f 3\n");
	free(out);
	out = report("--format folded --cgroup /");
	assert_non_null(strstr(out, "[pid 9];[cgroup /];h 1\n"));
	assert_int_equal(strlen(out), strlen(folded));
	free(out);
	/* docker ps's short id. */
	out = report("--format folded --container 0123456789AB");
	assert_string_equal(out, "bash;[pid 7];[cgroup /system.slice/docker-" ID1
			    ".scope];[task];main;f 3\n");
	free(out);
	out = report("--sort container --no-children");
	assert_non_null(strstr(out, "0123456789ab"));
	assert_non_null(strstr(out, "fedcba987654"));
	assert_non_null(strstr(out, "container"));
	free(out);
	out = report("--sort cgroup --no-children");
	assert_non_null(strstr(out, "/kubepods/besteffort/pod" UID "/" ID2));
	free(out);
}

/* Kubernetes' names, from the kubelet's log directories. */
static void k8s_names(void **state)
{
	char logs[] = "/tmp/hs_k8s_logsXXXXXX", cmd[1024];
	struct hs_k8s_names n;

	(void)state;
	assert_non_null(mkdtemp(logs));
	put(logs, "containers/web-7d4b9c-x2x4z_shop_nginx-" ID1 ".log", "");
	put(logs, "containers/etcd-node1_kube-system_etcd-" ID2 ".log", "");
	/* Near misses: a short id, an '_' too many, no .log, upper case. */
	put(logs, "containers/a_b_c-0123.log", "");
	put(logs, "containers/a_b_c_d-" ID2 ".log", "");
	put(logs, "containers/a_b_c-" ID2, "");
	put(logs, "containers/A_b_c-" ID2 ".log", "");
	put(logs, "pods/shop_web-7d4b9c-x2x4z_" UID "/nginx/0.log", "");
	put(logs, "pods/kube-system_etcd-node1_5c3d0f1e2a4b6c8d9e0f1a2b3c4d5e6f/etcd/0.log", "");
	assert_int_equal(hs_k8s_scan(logs), 2);
	assert_int_equal(hs_k8s_names(ID1, UID, &n), 1);
	assert_string_equal(n.ns, "shop");
	assert_string_equal(n.pod, "web-7d4b9c-x2x4z");
	assert_string_equal(n.container, "nginx");
	/* A pod's own cgroup (no container): the pod's names. */
	assert_int_equal(hs_k8s_names("", UID, &n), 1);
	assert_string_equal(n.ns, "shop");
	assert_string_equal(n.pod, "web-7d4b9c-x2x4z");
	assert_string_equal(n.container, "");
	assert_int_equal(hs_k8s_names(NULL, "5c3d0f1e2a4b6c8d9e0f1a2b3c4d5e6f", &n), 1);
	assert_string_equal(n.pod, "etcd-node1");
	assert_int_equal(hs_k8s_names(ID2, "", &n), 1);
	assert_string_equal(n.ns, "kube-system");
	assert_string_equal(n.container, "etcd");
	/* Unknown: nothing. */
	assert_int_equal(hs_k8s_names("", "", &n), 0);
	assert_int_equal(hs_k8s_names("fedcba98", NULL, &n), 0);
	assert_string_equal(n.pod, "");
	/* Read again a second later: a container gone is forgotten. */
	snprintf(cmd, sizeof(cmd), "%s/containers/web-7d4b9c-x2x4z_shop_nginx-" ID1 ".log", logs);
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(hs_k8s_scan(logs), 2);
	sleep(1);
	assert_int_equal(hs_k8s_scan(logs), 1);
	assert_int_equal(hs_k8s_names(ID1, "", &n), 0);
	hs_k8s_free();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", logs);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layouts),
		cmocka_unit_test(tails),
		cmocka_unit_test(k8s_names),
		cmocka_unit_test(roots),
		cmocka_unit_test(names_bounded),
		cmocka_unit_test(names),
		cmocka_unit_test(line_keys),
		cmocka_unit_test(agent_split),
		cmocka_unit_test(pprof_labels),
		cmocka_unit_test(filters_and_sorts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
