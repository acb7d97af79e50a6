/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: hotstack agent's options and --group-by (apart, for unit tests). */
#ifndef HOTSTACK_AGENT_H
#define HOTSTACK_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"
#include "session.h"
#include "util.h"

/* --label options at most. */
#define HS_AGENT_MAX_LABELS	32

/* --group-by: one profile an interval for each of these (and one for the rest). */
enum { HS_GROUP_NONE, HS_GROUP_CONTAINER, HS_GROUP_CGROUP, HS_GROUP_UNIT };

struct hs_agent_opts {
	struct hs_config s;		/* the session's options, as record takes them */
	int session_opts;		/* one of them was given */
	int persistent;			/* --persistent: the module's autostart session */
	unsigned int interval;		/* -i: whole seconds, 1-3600 */
	const char *push;		/* --push URL (without "otlp+"), or NULL */
	int otlp;			/* --push otlp+http[s]://: OTLP/HTTP */
	const char *name;		/* --name: the application's name in Pyroscope */
	const char *labels[HS_AGENT_MAX_LABELS];	/* --label KEY=VALUE, in order */
	size_t nr_labels;
	int group_by;			/* --group-by: HS_GROUP_* */
	const char *output_dir;		/* --output-dir, or NULL */
	unsigned long keep;		/* --keep: files kept in it */
	unsigned long queue;		/* --queue: profiles waiting to be pushed at most */
	unsigned long queue_mb;		/* --queue-mb: their MiB at most */
	double timeout;			/* --timeout: seconds a push may take */
	double drain;			/* --drain: seconds SIGTERM leaves for the last pushes */
	const char *tenant;		/* --tenant: X-Scope-OrgID */
	const char *log;		/* --log FILE, or NULL: standard error */
	/* --config FILE's text and the command line made from it (freed by hs_agent_opts_free()). */
	char *config_text;
	char *config_names;		/* "--NAME" of each of its lines */
	char **argv;
};

/*
 * Parse hotstack agent's arguments: a --config FILE's lines first (one
 * option a line, "NAME VALUE" or "NAME", as on the command line without
 * the dashes; "#" comments), then the command line's, which win. Returns
 * 0, HS_EXIT_USAGE after printing what is wrong, or -1 after printing the
 * help (exit 0). Free with hs_agent_opts_free() in every case.
 */
int hs_agent_parse(int argc, char **argv, struct hs_agent_opts *o);
void hs_agent_opts_free(struct hs_agent_opts *o);

/* A --group-by group's labels at most: 2 its own, 4 its workload's names. */
#define HS_GROUP_LABELS	6

/*
 * A --group-by group: its labels, "KEY=VALUE" each, named as the
 * samples' labels are ("container.id=ID" and "k8s.pod.uid=UID" of a
 * container, the second alone of a pod's own cgroup; "cgroup=PATH";
 * "systemd.unit=NAME" and the container's id when in one), then its
 * workload's names (service_name, and Kubernetes' k8s.namespace.name,
 * k8s.pod.name, k8s.container.name where the node says them); none for
 * the samples of no group. Its file name's part, its interval's profile.
 */
struct hs_agent_group {
	char label[HS_GROUP_LABELS][320];
	char file[112];
	struct hs_profile p;
};

/* @p's lines by group, the first those of no group (agent_group.c). */
int hs_agent_split(int group_by, const struct hs_profile *p, struct hs_agent_group **out,
		   size_t *nr);
/* @g's labels joined by ',' in @buf ("" for none). */
void hs_agent_group_key(const struct hs_agent_group *g, char *buf, size_t size);
/* @s with the characters a label value may not have made '_'. */
void hs_agent_sanitize(char *s);

/* ---- --output-dir (agent_files.c) --------------------------------------- */

/* A file's "hotstack-YYYYmmddTHHMMSSZ": its interval's START. */
#define HS_AFILE_START_LEN	(sizeof("hotstack-YYYYmmddTHHMMSSZ") - 1)

/* An interval's files: their names past its START (numbers of hs_afiles.names). */
struct hs_afile_interval {
	char start[HS_AFILE_START_LEN];
	uint32_t *ids;
	size_t nr, cap;
	bool scan;		/* its files unknown (an earlier run's): found by a scan */
};

/* The intervals whose files are in the directory, the oldest first. */
struct hs_afiles {
	const char *dir;
	int dir_fd;		/* @dir open (O_PATH), -1 before hs_afiles_open() */
	bool no_tmpfile;	/* O_TMPFILE and its linkat() refused: hs_afiles_write() */
	unsigned long keep;	/* --keep */
	struct hs_afile_interval *iv;
	size_t nr, cap;
	struct hs_strtab names;
};

void hs_afiles_init(struct hs_afiles *f, const char *dir, unsigned long keep);
void hs_afiles_free(struct hs_afiles *f);
/* The intervals of the files an earlier run left in the directory (@f new). 0 or -errno. */
int hs_afiles_scan(struct hs_afiles *f);
/* The directory made if need be, and opened. 0 or -errno. */
int hs_afiles_open(struct hs_afiles *f);
/*
 * File @name ("hotstack-START[-GROUP].pb.gz") written whole with @data, then
 * hs_afiles_add(); a failure said by @log. 0 or -errno.
 */
int hs_afiles_write(struct hs_afiles *f, const char *name, const void *data, size_t len,
		    void (*log)(const char *fmt, ...));
/* File @name ("hotstack-START[-GROUP].pb.gz") was written: its interval's. */
void hs_afiles_add(struct hs_afiles *f, const char *name);
/* The intervals past the newest --keep removed, each file's failure said by @log. */
void hs_afiles_prune(struct hs_afiles *f, void (*log)(const char *fmt, ...));

#endif
