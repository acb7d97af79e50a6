// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack agent: continuous profiling for fleets. One session (its own,
 * as record configures it, or with --persistent the module's autostart
 * session) cut into intervals: every interval the agent SNAPSHOTs its
 * session (the persistent one, which only the module may snapshot, is
 * read whole and the last reading subtracted), and turns the interval
 * into one pprof profile with its start time, duration and labels,
 * symbolized as record does. Each profile goes to a Pyroscope ingest API
 * (push.c: a sender thread, a bounded queue, retries with backoff) and/or
 * to a directory that keeps the newest N. Its options are agent_opts.c's,
 * its --group-by split agent_group.c's.
 *
 * Intervals are contiguous: they end on whole multiples of the interval
 * in UNIX time, one interval's "until" is the next one's "from", and as
 * SNAPSHOT hands over a generation while sampling goes on, every sample
 * is in exactly one interval. Signals: SIGHUP reopens the log (--log) and
 * reloads the kernel's symbols; SIGTERM and SIGINT take the last interval,
 * leave its push --drain seconds, and exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "agent.h"
#include "cgroup.h"
#include "commands.h"
#include "device.h"
#include "events.h"
#include "k8s.h"
#include "maps.h"
#include "netlink.h"
#include "profile.h"
#include "push.h"
#include "session.h"
#include "symbols.h"
#include "table.h"
#include "usyms.h"
#include "uwload.h"
#include "util.h"

/* ---- the log ------------------------------------------------------------ */

/*
 * Standard error is the log: journald's (no time stamps then: it adds
 * its own), a terminal's, or the --log file, opened again on SIGHUP.
 * Every line is one write(), so the sender thread's lines never mix.
 */
static int hs_agent_stamps;

static void hs_agent_vlog(const char *fmt, va_list ap)
{
	char line[2048];
	size_t n = 0;
	struct tm tm;
	time_t t;

	if (hs_agent_stamps) {
		t = time(NULL);
		localtime_r(&t, &tm);
		n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S%z ", &tm);
	}
	n += snprintf(line + n, sizeof(line) - n, "hotstack agent: ");
	if (n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, n) < 0) {
		/* Nowhere to say it. */
	}
}

static void hs_agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void hs_agent_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_agent_vlog(fmt, ap);
	va_end(ap);
}

/* push.c's logger. */
static void hs_agent_push_log(void *data, const char *fmt, ...)
{
	va_list ap;

	(void)data;
	va_start(ap, fmt);
	hs_agent_vlog(fmt, ap);
	va_end(ap);
}

/* Standard error to @path (appended); 0 or -errno. */
static int hs_agent_open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	if (fd != 2) {
		dup2(fd, 2);
		close(fd);
	}
	return 0;
}

/*
 * systemd's notification socket (Type=notify): READY=1, STATUS=..., so
 * that "systemctl status" shows the agent's own status line.
 */
static void hs_agent_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[1024];
	socklen_t len;
	va_list ap;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(sa.sun_path, path, strlen(path));
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* ---- the agent ------------------------------------------------------------ */

static volatile sig_atomic_t hs_agent_stop, hs_agent_hup;

static void hs_agent_signal(int sig)
{
	if (sig == SIGHUP)
		hs_agent_hup = 1;
	else
		hs_agent_stop = 1;
}

/* Labels: hostname, kernel_release, event, --label's and a group's, in Pyroscope's name. */
#define HS_AGENT_NOTES	(HS_AGENT_MAX_LABELS + 10)


struct hs_agent {
	struct hs_agent_opts o;
	struct hs_afiles out;		/* --output-dir's files */
	int fd;				/* own session: /dev/hotstack; -1: none now */
	uint32_t session_id;
	struct hs_table_map m;
	struct hs_ksyms_live ks;	/* the kernel's symbols */
	struct hs_usyms *u;		/* this interval's user symbols (--stacks user|both) */
	struct hs_uwload *uw;		/* the session's unwind tables (--call-graph dwarf) */
	const char *event;		/* the event sampled (after a fallback) */
	char event_buf[32];
	char rate[32];
	unsigned int hz;		/* sampleRate: samples per second per CPU, 0: unknown */
	struct hs_push *push;
	int64_t from;			/* the open interval's start, UNIX seconds */
	double from_real;		/* the same, to the nanosecond */
	uint64_t intervals, lost, files;
	uint64_t samples, counted, dropped;	/* every interval's, added up */
	int waiting_said;		/* "waiting for the module" said once */
	/* --persistent: the last reading, subtracted from the next one. */
	struct hs_profile prev;
	int prev_gone;			/* that session is gone: the next one counts from 0 */
	uint32_t prev_id;
	__u64 prev_drops[HOTSTACK_DROP_MAX];
	uint64_t prev_samples;
	char hostname[256], release[128], comm[32];
	char name[4096];		/* APP{k=v,...} */
	char note_buf[HS_AGENT_NOTES][384];
	const char *notes[HS_AGENT_NOTES + 1];
	/* --push otlp+http: the same labels as the OTLP resource's attributes. */
	char res_buf[HS_AGENT_NOTES][384];
	const char *resource[HS_AGENT_NOTES + 1];
};

/* Seconds since the epoch, on the wall clock (Pyroscope's from and until). */
static double hs_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}


/*
 * The OTLP resource of labels @keys (@klen bytes each) = @vals: the
 * service (--name), the process's name with -p, and each label under
 * the name OpenTelemetry's semantic conventions give it (host.name,
 * os.version, container.id, k8s.pod.uid), the others as they are; the
 * event is the profile's (hotstack.event), not the resource's.
 */
static void hs_agent_resource(struct hs_agent *ag, const char **keys, const size_t *klen,
			      const char **vals, size_t nr)
{
	static const struct { const char *label, *attr; } names[] = {
		{ "hostname", "host.name" }, { "kernel_release", "os.version" },
		{ "container_id", "container.id" }, { "pod_uid", "k8s.pod.uid" },
		{ "unit", "systemd.unit" }, { "service_name", "service.name" },
	};
	const size_t size = sizeof(ag->res_buf[0]);
	size_t i, j, n = 0, at;

	/*
	 * The service: --name's, or the group's workload (service_name, first
	 * in res_buf). Made with hs_cat(), not snprintf(): for each group.
	 */
	at = hs_cats(ag->res_buf[n], size, 0, "service.name=");
	hs_cats(ag->res_buf[n], size, at, ag->o.name);
	hs_cats(ag->res_buf[++n], size, 0, "os.type=linux");
	if (ag->comm[0]) {
		at = hs_cats(ag->res_buf[++n], size, 0, "process.executable.name=");
		hs_cats(ag->res_buf[n], size, at, ag->comm);
	}
	n++;
	for (i = 0; i < nr && n < HS_AGENT_NOTES; i++) {
		const char *k = keys[i];
		int kl = klen[i];

		if (kl == 5 && !memcmp(k, "event", 5))
			continue;
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
			if (strlen(names[j].label) == klen[i] && !memcmp(names[j].label, k, klen[i])) {
				k = names[j].attr, kl = strlen(k);
				break;
			}
		}
		/* Its value for service.name, or "KEY=VALUE" next. */
		j = kl == 12 && !memcmp(k, "service.name", 12) ? 0 : n++;
		at = hs_cat(ag->res_buf[j], size, 0, k, kl);
		at = hs_cats(ag->res_buf[j], size, at, "=");
		hs_cats(ag->res_buf[j], size, at, vals[i]);
	}
	for (i = 0; i < n; i++)
		ag->resource[i] = ag->res_buf[i];
	ag->resource[n] = NULL;
}

/*
 * The labels (hostname, kernel_release, event, then --label's, a key
 * given twice taking the last value) as Pyroscope's name and as the
 * profile's notes.
 */
static void hs_agent_labels(struct hs_agent *ag, const struct hs_agent_group *g,
			    char *extra_notes[], size_t nr_extra)
{
	const char *keys[HS_AGENT_MAX_LABELS + HS_GROUP_LABELS + 3];
	const char *vals[HS_AGENT_MAX_LABELS + HS_GROUP_LABELS + 3];
	const char *given[HS_AGENT_MAX_LABELS + HS_GROUP_LABELS];
	size_t klen[HS_AGENT_MAX_LABELS + HS_GROUP_LABELS + 3], nr = 0, i, j, n, used, nr_given;

	keys[nr] = "hostname", klen[nr] = 8, vals[nr++] = ag->hostname;
	keys[nr] = "kernel_release", klen[nr] = 14, vals[nr++] = ag->release;
	keys[nr] = "event", klen[nr] = 5, vals[nr++] = ag->event;
	/* --label's, then the group's (KEY=VALUE each), the last of a key winning. */
	memcpy(given, ag->o.labels, ag->o.nr_labels * sizeof(given[0]));
	nr_given = ag->o.nr_labels;
	for (i = 0; g && i < HS_GROUP_LABELS; i++)
		if (g->label[i][0])
			given[nr_given++] = g->label[i];
	for (i = 0; i < nr_given; i++) {
		const char *eq = strchr(given[i], '=');

		for (j = 0; j < nr; j++)
			if (klen[j] == (size_t)(eq - given[i]) && !memcmp(keys[j], given[i], klen[j]))
				break;
		keys[j] = given[i], klen[j] = eq - given[i], vals[j] = eq + 1;
		if (j == nr)
			nr++;
	}
	/* Made with hs_cat(), not snprintf(): for each group of each interval. */
	used = hs_cats(ag->name, sizeof(ag->name), 0, ag->o.name);
	used = hs_cats(ag->name, sizeof(ag->name), used, "{");
	for (i = 0, n = 0; i < nr; i++) {
		char *note = ag->note_buf[n];
		size_t at = hs_cats(note, sizeof(ag->note_buf[n]), 0, "label: ");

		at = hs_cat(note, sizeof(ag->note_buf[n]), at, keys[i], klen[i]);
		at = hs_cats(note, sizeof(ag->note_buf[n]), at, "=");
		hs_cats(note, sizeof(ag->note_buf[n]), at, vals[i]);
		if (i)
			used = hs_cats(ag->name, sizeof(ag->name), used, ",");
		used = hs_cats(ag->name, sizeof(ag->name), used, note + 7);	/* KEY=VALUE */
		ag->notes[n] = note;
		n++;
	}
	hs_cats(ag->name, sizeof(ag->name), used, "}");
	for (i = 0; i < nr_extra && n < HS_AGENT_NOTES; i++, n++)
		ag->notes[n] = extra_notes[i];
	ag->notes[n] = NULL;
	hs_agent_resource(ag, keys, klen, vals, nr);
}

/* The kernel's symbols, loaded again after a module came or went (or @force). */
static int hs_agent_ksyms(struct hs_agent *ag, int force)
{
	char err[512];
	int ret = hs_ksyms_refresh(&ag->ks, force, err, sizeof(err));

	if (ret && !ag->ks.loaded)
		hs_agent_log("%s", err);
	return ag->ks.loaded ? 0 : ret;
}

static void hs_agent_close(struct hs_agent *ag)
{
	/* Its thread uses the session's file: gone first. */
	hs_uw_free(ag->uw);
	ag->uw = NULL;
	hs_table_unmap(&ag->m);
	hs_ksyms_live_free(&ag->ks);
	if (ag->fd >= 0)
		close(ag->fd);
	ag->fd = -1;
}

/* Whether @err from open() means the module is not there (yet). */
static int hs_agent_absent(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO;
}

/*
 * Open, configure and start the agent's own session. 0; -EAGAIN when the
 * module is not loaded (said once, tried again later); else -1 after
 * saying why (fatal: a configuration the module refuses).
 */
static int hs_agent_open(struct hs_agent *ag)
{
	struct hotstack_stats st;
	int fd, err;

	fd = open(hs_device_path(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (hs_agent_absent(err)) {
			if (!ag->waiting_said)
				hs_agent_log("%s: %s: waiting for the module (modprobe hotstack)",
					     hs_device_path(), strerror(err));
			ag->waiting_said = 1;
			return -EAGAIN;
		}
		/*
		 * A systemd service (INVOCATION_ID) whose device came after
		 * it started: its device policy is of the devices there then.
		 */
		if (err == EPERM && ag->waiting_said && getenv("INVOCATION_ID")) {
			hs_agent_log("cannot open %s: %s: the module came after this service "
				     "started, and the service's device policy (DeviceAllow=) "
				     "has only the devices there then: exiting, for systemd to "
				     "start it again (Restart=on-failure)", hs_device_path(),
				     strerror(err));
			return -1;
		}
		hs_agent_log("cannot open %s: %s%s%s", hs_device_path(), strerror(err),
			     hs_open_error_hint(err) ? ": " : "",
			     hs_open_error_hint(err) ? hs_open_error_hint(err) : "");
		return -1;
	}
	ag->fd = fd;
	if (hs_session_configure(fd, &ag->o.s, "agent"))
		goto fail;
	ag->uw = hs_session_unwind(fd, &ag->o.s, ag->o.s.abi.pid, "agent");
	ag->event = hs_config_event(&ag->o.s);
	hs_config_rate(&ag->o.s, ag->rate, sizeof(ag->rate));
	/* sampleRate: the frequency, or a clock event's period in Hz (none off the CPU). */
	if (ag->o.s.off_cpu)
		ag->hz = 0;
	else if (ag->o.s.abi.flags & HOTSTACK_CFG_FREQ)
		ag->hz = ag->o.s.abi.sample;
	else if (ag->o.s.ev.type == PERF_TYPE_SOFTWARE &&
		 (ag->o.s.ev.config == PERF_COUNT_SW_CPU_CLOCK ||
		  ag->o.s.ev.config == PERF_COUNT_SW_TASK_CLOCK))
		ag->hz = (unsigned int)(1e9 / ag->o.s.abi.sample + 0.5);
	else
		ag->hz = 0;
	/* Symbolized here when this process may map the table and see kernel addresses. */
	if (!hs_table_map(fd, &ag->m) && hs_agent_ksyms(ag, 1))
		hs_table_unmap(&ag->m);
	if (!ag->m.base)
		hs_agent_log("no mmap of the table or no kernel addresses: the stacks come from "
			     "read(), symbolized in the kernel (samples between a read and its "
			     "SNAPSHOT are counted but not in the profile)");
	if (hs_session_start(fd, "agent"))
		goto fail;
	if (!hs_session_stats(fd, 0, &st))
		ag->session_id = st.id;
	ag->waiting_said = 0;
	hs_agent_log("session %u: %s at %s, %s stacks, intervals of %u s", ag->session_id,
		     ag->event, ag->rate, ag->o.s.abi.stacks == HOTSTACK_STACK_KERNEL ? "kernel" :
		     ag->o.s.abi.stacks == HOTSTACK_STACK_USER ? "user" : "kernel and user",
		     ag->o.interval);
	return 0;
fail:
	hs_agent_close(ag);
	return -1;
}

/* The persistent session's status through netlink: 0, or -errno (none). */
struct hs_agent_find {
	struct hs_status st;
	int found;
};

static void hs_agent_find_persistent(const struct hs_status *s, void *data)
{
	struct hs_agent_find *f = data;

	if (s->owner == 0 && s->configured && !f->found) {
		f->st = *s;
		f->found = 1;
	}
}

static int hs_agent_persistent_status(struct hs_status *st)
{
	struct hs_agent_find f = { .found = 0 };
	struct hs_genl g;
	int ret;

	if (hs_genl_quiet_open(&g))
		return -ENOENT;
	ret = hs_genl_status(&g, 0, hs_agent_find_persistent, &f);
	hs_genl_close(&g);
	if (ret)
		return ret;
	if (!f.found)
		return -ENOENT;
	*st = f.st;
	return 0;
}

/* ---- one interval ---------------------------------------------------------- */

/* DIR/hotstack-START.pb.gz (or -START-GROUP.pb.gz): hs_afiles_write(). */
static void hs_agent_write_file(struct hs_agent *ag, const void *data, size_t len, int64_t from,
				const char *group)
{
	char name[192];
	struct tm tm;
	time_t t = from;

	gmtime_r(&t, &tm);
	strftime(name, sizeof(name), "hotstack-%Y%m%dT%H%M%SZ", &tm);
	snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%s.pb.gz", group ? "-" : "",
		 group ?: "");
	if (!hs_afiles_write(&ag->out, name, data, len, hs_agent_log))
		ag->files++;
}

/* The push's status, for the interval's line. */
static void hs_agent_push_status(struct hs_agent *ag, char *buf, size_t len)
{
	struct hs_push_stats ps;

	buf[0] = '\0';
	if (!ag->push)
		return;
	hs_push_get_stats(ag->push, &ps);
	snprintf(buf, len, "; push: %" PRIu64 " pushed, %zu waiting, %" PRIu64 " dropped (queue "
		 "full), %" PRIu64 " rejected, %" PRIu64 " failed attempts%s", ps.pushed,
		 ps.waiting, ps.dropped, ps.rejected, ps.failures,
		 ps.down ? ", server not answering" : "");
}

/*
 * @nr profiles @ps as pprof (@res NULL: @ps[0] alone) or OTLP with their
 * resources @res (one request), in a malloc'd *@buf. 0 or -errno.
 */
static int hs_agent_serialize(const struct hs_profile *const *ps, const char *const *const *res,
			      size_t nr, char **buf, size_t *len)
{
	FILE *f;
	int ret;

	*buf = NULL;
	f = open_memstream(buf, len);
	if (!f)
		return -ENOMEM;
	ret = res ? hs_write_otlp_many(f, ps, res, nr) : hs_write_pprof(f, ps[0]);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

/*
 * An interval's requests, queued together (one entry of the push queue);
 * with --group-by and OTLP, the groups' profiles and resources, made one
 * request at the end.
 */
struct hs_agent_batch {
	struct hs_push_part *part;
	size_t nr, cap;
	const struct hs_profile **prof;
	char ***res;
	size_t nr_prof;
};

static void hs_agent_batch_free(struct hs_agent_batch *b)
{
	size_t i, k;

	for (i = 0; i < b->nr; i++) {
		free(b->part[i].data);
		free(b->part[i].name);
	}
	for (i = 0; i < b->nr_prof; i++) {
		for (k = 0; b->res[i] && b->res[i][k]; k++)
			free(b->res[i][k]);
		free(b->res[i]);
	}
	free(b->part);
	free(b->prof);
	free(b->res);
	memset(b, 0, sizeof(*b));
}

/* Request @data[0..len) (taken) of @profiles profiles, for the series @name (copied). */
static int hs_agent_batch_add(struct hs_agent_batch *b, void *data, size_t len, const char *name,
			      size_t profiles)
{
	struct hs_push_part *more;
	char *n = strdup(name);

	if (n && b->nr == b->cap) {
		more = realloc(b->part, (b->cap * 2 + 4) * sizeof(*more));
		if (more) {
			b->part = more;
			b->cap = b->cap * 2 + 4;
		}
	}
	if (!n || b->nr == b->cap) {
		free(n);
		free(data);
		return -ENOMEM;
	}
	b->part[b->nr++] = (struct hs_push_part){ .data = data, .len = len, .name = n,
						  .profiles = profiles };
	return 0;
}

/*
 * Serialize @p, labeled as group @g's (NULL: no --group-by), with the
 * notes @extra, for the directory and the interval's requests @b (with
 * @b->prof, for its OTLP request: @p and its resource kept until then);
 * its bytes added to *@bytes. 0 or -errno.
 */
static int hs_agent_send(struct hs_agent *ag, struct hs_profile *p, const struct hs_agent_group *g,
			 char *extra[], size_t nr_extra, struct hs_agent_batch *b, size_t *bytes)
{
	const struct hs_profile *one = p;
	const char *const *res1 = ag->resource;
	char *buf = NULL, *obuf = NULL, **res;
	size_t len = 0, olen = 0, n;
	int ret = 0;

	hs_agent_labels(ag, g, extra, nr_extra);
	p->notes = ag->notes;
	if (ag->o.output_dir || !ag->o.otlp)
		ret = hs_agent_serialize(&one, NULL, 1, &buf, &len);
	if (!ret && ag->push && ag->o.otlp && !b->prof)
		ret = hs_agent_serialize(&one, &res1, 1, &obuf, &olen);
	p->notes = NULL;
	if (ret) {
		free(buf);
		return ret;
	}
	*bytes += ag->o.otlp ? olen : len;
	if (ag->o.output_dir)
		hs_agent_write_file(ag, buf, len, ag->from, g && g->file[0] ? g->file : NULL);
	if (ag->push && ag->o.otlp && b->prof) {
		free(buf);
		for (n = 0; ag->resource[n]; n++)
			;
		res = calloc(n + 1, sizeof(*res));
		b->prof[b->nr_prof] = p;
		b->res[b->nr_prof++] = res;
		for (n = 0; res && ag->resource[n]; n++)
			if (!(res[n] = strdup(ag->resource[n])))
				return -ENOMEM;
		return res ? 0 : -ENOMEM;
	}
	if (ag->push && ag->o.otlp) {
		free(buf);
		return hs_agent_batch_add(b, obuf, olen, ag->name, 1);
	}
	if (ag->push)
		return hs_agent_batch_add(b, buf, len, ag->name, 1);
	free(buf);
	return 0;
}

/*
 * --group-by: one profile for each group of @p's lines (and one for the
 * lines of none, when there are some or nothing else), each with the
 * notes @extra and a note of its own. Their count in *@nr_sent.
 */
static int hs_agent_send_groups(struct hs_agent *ag, struct hs_profile *p, char *extra[2],
				struct hs_agent_batch *b, size_t *bytes, size_t *nr_sent)
{
	struct hs_agent_group *g;
	char group[sizeof(g->label) + 128], key[sizeof(g->label)];
	char *notes[3] = { extra[0], extra[1], group };
	char *obuf = NULL;
	size_t n, i, olen = 0;
	int ret;

	/* The node's Kubernetes names, as they are now. */
	hs_k8s_scan(NULL);
	ret = hs_agent_split(ag->o.group_by, p, &g, &n);
	/* OTLP: one request of every group's profile, each with its resource. */
	if (!ret && ag->push && ag->o.otlp) {
		b->prof = calloc(n, sizeof(*b->prof));
		b->res = calloc(n, sizeof(*b->res));
		if (!b->prof || !b->res)
			ret = -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		if (!i && !g[i].p.nr && n > 1)
			continue;
		g[i].p.event = p->event;
		memcpy(g[i].p.rate, p->rate, sizeof(p->rate));
		g[i].p.seconds = p->seconds;
		g[i].p.time_ns = p->time_ns;
		g[i].p.keys = p->keys;
		g[i].p.maps = p->maps;
		hs_agent_group_key(&g[i], key, sizeof(key));
		snprintf(group, sizeof(group), "group: %s, %" PRIu64 " of the interval's %"
			 PRIu64 " samples", i ? key : "none", g[i].p.total, p->total);
		ret = hs_agent_send(ag, &g[i].p, &g[i], notes, 3, b, bytes);
		++*nr_sent;
	}
	if (!ret && b->nr_prof) {
		ret = hs_agent_serialize(b->prof, (const char *const *const *)b->res, b->nr_prof,
					 &obuf, &olen);
		if (!ret) {
			*bytes += olen;
			ret = hs_agent_batch_add(b, obuf, olen, ag->name, b->nr_prof);
		}
	}
	for (i = 0; i < n; i++) {
		g[i].p.maps = NULL;
		hs_profile_free(&g[i].p);
	}
	free(g);
	return ret;
}

/*
 * The interval [ag->from, @until) is in @p (its counters @total): stamp,
 * serialize, hand to the sender and the directory (a profile for each
 * group with --group-by), say so.
 */
static void hs_agent_emit(struct hs_agent *ag, struct hs_profile *p,
			  const struct hotstack_cpu_stats *total, uint64_t generation,
			  int64_t until, double until_real)
{
	char counters[160], interval[96], status[256], groups[64], *extra[2] = { counters, interval };
	uint64_t drops = hs_sum_drops(total->drops);
	uint64_t filtered = total->drops[HOTSTACK_DROP_FILTERED];
	struct hs_agent_batch b = { 0 };
	struct mallinfo2 mi;
	size_t len = 0, sent = 0, i, unnamed;
	uint64_t unnamed_samples;
	int ret;

	ag->intervals++;
	/* The kernel's counters of exactly these samples: the tests check them against the stacks. */
	snprintf(counters, sizeof(counters), "session: samples %" PRIu64 ", counted %" PRIu64
		 ", dropped %" PRIu64 ", filtered %" PRIu64, (uint64_t)total->samples,
		 (uint64_t)total->counted, drops - filtered, filtered);
	snprintf(interval, sizeof(interval), "interval: %" PRIu64 " of session %u, generation %"
		 PRIu64, ag->intervals, ag->session_id, generation);
	p->event = ag->event;
	snprintf(p->rate, sizeof(p->rate), "%s", ag->rate);
	p->time_ns = (int64_t)(ag->from_real * 1e9);
	if (!p->seconds)
		p->seconds = until_real - ag->from_real;
	ret = hs_maps_kernel(p, "/sys");
	if (!ret && ag->o.group_by)
		ret = hs_agent_send_groups(ag, p, extra, &b, &len, &sent);
	else if (!ret)
		ret = hs_agent_send(ag, p, NULL, extra, 2, &b, &len);
	/* The interval's requests, one entry of the queue (the sender frees their bodies). */
	if (!ret && b.nr) {
		hs_push_queue_parts(ag->push, b.part, b.nr, ag->hz, ag->from, until, ag->intervals);
		for (i = 0; i < b.nr; i++)
			b.part[i].data = NULL;
	}
	hs_agent_batch_free(&b);
	if (ag->o.output_dir)
		hs_afiles_prune(&ag->out, hs_agent_log);
	if (ret) {
		hs_agent_log("interval %" PRIu64 ": cannot make its profile%s: %s; none pushed",
			     ag->intervals, ag->o.group_by ? "s" : "", strerror(-ret));
		ag->lost++;
		return;
	}
	ag->samples += total->samples;
	ag->counted += total->counted;
	ag->dropped += drops - filtered;
	groups[0] = '\0';
	if (ag->o.group_by)
		snprintf(groups, sizeof(groups), " in %zu profiles", sent);
	hs_agent_push_status(ag, status, sizeof(status));
	/* Its own memory in use (glibc's count: what it holds, not what the heap kept). */
	mi = mallinfo2();
	hs_agent_log("interval %" PRIu64 " [%" PRId64 ", %" PRId64 ") %.1f s: %" PRIu64
		     " samples, %" PRIu64 " counted, %" PRIu64 " dropped, %" PRIu64 " filtered, "
		     "%zu stacks, %zu bytes%s, %zu kB in use%s", ag->intervals, ag->from, until,
		     p->seconds, (uint64_t)total->samples, (uint64_t)total->counted,
		     drops - filtered, filtered, p->nr, len, groups,
		     (mi.uordblks + mi.hblkhd) >> 10, status);
	hs_agent_notify("STATUS=%" PRIu64 " intervals, %" PRIu64 " samples%s", ag->intervals,
			ag->samples, status);
	/* Only a profile keyed by cgroup can hold one (not looked for at each interval else). */
	unnamed = ag->o.s.abi.keys & HOTSTACK_KEY_CGROUP ?
		  hs_cgroups_unnamed(p, &unnamed_samples) : 0;
	if (unnamed)
		hs_agent_log("interval %" PRIu64 ": %zu cgroup%s left unnamed, %" PRIu64 " samples "
			     "under [cgroup ID] (removed before a name was read)", ag->intervals,
			     unnamed, unnamed > 1 ? "s" : "", unnamed_samples);
}

/* The own session's interval ending now: SNAPSHOT, copy, symbolize. 0 or -errno. */
static int hs_agent_own_interval(struct hs_agent *ag, int64_t until, double until_real)
{
	struct hotstack_cpu_stats total;
	struct hotstack_stats st;
	struct hs_profile p = { 0 };
	struct hs_table_copy c;
	uint64_t generation;
	char *text = NULL;
	int ret;

	if (!ag->m.base) {
		/* read() gives the active generation: read, count, then SNAPSHOT. */
		text = hs_read_fd(ag->fd, NULL);
		if (!text)
			return -errno;
		ret = hs_session_stats(ag->fd, 0, &st);
		if (!ret && ioctl(ag->fd, HOTSTACK_IOC_SNAPSHOT, 0))
			ret = -errno;
		ret = ret ?: hs_profile_parse(&p, text, NULL);
		ret = ret ?: hs_profile_add_drops(&p, st.total.drops);
		total = st.total;
		generation = st.generation + 1;
	} else {
		hs_capture_maps(ag->u, &ag->m, ag->o.s.abi.pid, 0, ag->uw, 1);
		if (ioctl(ag->fd, HOTSTACK_IOC_SNAPSHOT, 0))
			return -errno;
		ret = hs_session_stats(ag->fd, HOTSTACK_STATS_READABLE, &st);
		ret = ret ?: hs_agent_ksyms(ag, 0);
		ret = ret ?: hs_table_copy(&ag->m, HS_GEN_READABLE, &c);
		if (ret)
			goto out;
		ret = hs_table_profile(&c, &ag->ks.k, ag->u, ag->o.s.abi.pid, &p, ag->o.s.profile_flags);
		/* The counters of exactly that copy (the copy's memory goes now). */
		total = c.total;
		generation = c.generation;
		hs_table_copy_free(&c);
	}
	if (ret)
		goto out;
	p.keys = ag->o.s.abi.keys;
	/* The interval's length on the wall clock, as from and until say (not the running time). */
	p.seconds = until_real - ag->from_real;
	if (ag->u && hs_maps_merge(&p.maps, hs_usyms_maps(ag->u))) {
		ret = -ENOMEM;
		goto out;
	}
	hs_agent_emit(ag, &p, &total, generation, until, until_real);
out:
	free(text);
	hs_profile_free(&p);
	return ret;
}

/* The module's parameter @name (/sys/module/hotstack/parameters/), into @buf. */
static int hs_agent_param(const char *name, char *buf, size_t len)
{
	char path[128];
	char *text;

	snprintf(path, sizeof(path), "/sys/module/hotstack/parameters/%s", name);
	text = hs_read_file(path, NULL);
	if (!text)
		return -errno;
	text[strcspn(text, "\n")] = '\0';
	snprintf(buf, len, "%s", text);
	free(text);
	return 0;
}

/*
 * Read the persistent session whole; with @emit, the interval ending now
 * is this reading less the last one (all of it when the session is a new
 * one: the module loaded again); without, the reading only starts the
 * count. 0 or -errno (no module, no persistent session: the session is
 * then taken as gone).
 */
static int hs_agent_persistent_read(struct hs_agent *ag, int emit, int64_t until,
				    double until_real)
{
	struct hotstack_cpu_stats total = { 0 };
	struct hs_profile cur = { 0 }, p = { 0 };
	struct hs_status ns = { 0 };
	int fd, ret, fresh, have_ns, i;
	uint64_t gen = 0;
	char freq[32];
	char *text;
	size_t k;

	fd = open(hs_device_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (!ag->waiting_said)
			hs_agent_log("%s: %s: waiting for the module (modprobe hotstack "
				     "autostart=1)", hs_device_path(), strerror(-ret));
		goto gone;
	}
	text = hs_read_fd(fd, NULL);
	ret = text ? 0 : -errno;
	close(fd);
	if (ret)
		goto gone;
	have_ns = !hs_agent_persistent_status(&ns);
	if (!text[0] && !have_ns) {
		free(text);
		ret = -ENOENT;
		if (!ag->waiting_said)
			hs_agent_log("there is no persistent session: load the module with "
				     "autostart=1 (waiting for it)");
		goto gone;
	}
	if (ag->waiting_said)
		hs_agent_log("the persistent session is there");
	ag->waiting_said = 0;
	ret = hs_profile_parse(&cur, text, NULL);
	free(text);
	if (ret)
		goto out;
	if (have_ns) {
		snprintf(ag->event_buf, sizeof(ag->event_buf), "%s",
			 hs_event_name(ns.event_type, ns.event_config));
		hs_rate_str(ns.flags, ns.sample, ag->rate, sizeof(ag->rate));
		ag->hz = ns.flags & HOTSTACK_CFG_FREQ ? ns.sample : 0;
		ag->session_id = ns.id;
		gen = ns.generation;
	} else if (!hs_agent_param("autostart_event", ag->event_buf, sizeof(ag->event_buf)) &&
		   !hs_agent_param("autostart_freq", freq, sizeof(freq))) {
		ag->hz = strtoul(freq, NULL, 10);
		snprintf(ag->rate, sizeof(ag->rate), "%u Hz", ag->hz);
	}
	ag->event = ag->event_buf;
	/* A new session (the module loaded again), or counts that went down: from 0. */
	fresh = ag->prev_gone || (have_ns && ns.id != ag->prev_id) || cur.total < ag->prev.total;
	for (k = 0; !fresh && k < cur.nr; k++) {
		long j = hs_strtab_find(&ag->prev.stacks, cur.lines[k].stack, cur.lines[k].len);

		if (j >= 0 && ag->prev.lines[j].count > cur.lines[k].count)
			fresh = 1;
	}
	if (emit && fresh)
		hs_agent_log("the persistent session is a new one (the module was loaded again?): "
			     "its samples since it began are this interval's");
	if (emit) {
		for (k = 0; k < cur.nr && !ret; k++) {
			long j = fresh ? -1 : hs_strtab_find(&ag->prev.stacks, cur.lines[k].stack,
							     cur.lines[k].len);
			uint64_t d = cur.lines[k].count - (j >= 0 ? ag->prev.lines[j].count : 0);

			if (d)
				ret = hs_profile_add(&p, cur.lines[k].stack, cur.lines[k].len, d);
		}
		total.counted = p.total;
		if (have_ns) {
			for (i = 0; i < HOTSTACK_DROP_MAX; i++)
				total.drops[i] = ns.drops[i] - (fresh || ns.drops[i] < ag->prev_drops[i] ?
								0 : ag->prev_drops[i]);
			total.samples = ns.samples - (fresh || ns.samples < ag->prev_samples ? 0 :
						      ag->prev_samples);
		} else {
			total.samples = total.counted;
		}
		ret = ret ?: hs_profile_add_drops(&p, total.drops);
		if (ret)
			goto out;
		p.seconds = until_real - ag->from_real;
		hs_agent_emit(ag, &p, &total, gen, until, until_real);
	}
	hs_profile_free(&ag->prev);
	ag->prev = cur;
	memset(&cur, 0, sizeof(cur));
	ag->prev_gone = 0;
	ag->prev_id = have_ns ? ns.id : 0;
	memset(ag->prev_drops, 0, sizeof(ag->prev_drops));
	ag->prev_samples = 0;
	if (have_ns) {
		memcpy(ag->prev_drops, ns.drops, sizeof(ag->prev_drops));
		ag->prev_samples = ns.samples;
	}
out:
	hs_profile_free(&cur);
	hs_profile_free(&p);
	return ret;
gone:
	ag->waiting_said = 1;
	ag->prev_gone = 1;
	return ret;
}

/*
 * End the open interval at @until: take its profile. When there was no
 * session to take it from, the interval is lost (counted).
 */
static void hs_agent_interval(struct hs_agent *ag, int64_t until, double until_real)
{
	int ret;

	if (until <= ag->from)
		until = ag->from + 1;
	if (ag->o.persistent) {
		ret = hs_agent_persistent_read(ag, 1, until, until_real);
	} else {
		ret = hs_agent_own_interval(ag, until, until_real);
		if (ret < 0) {
			hs_agent_log("interval [%" PRId64 ", %" PRId64 "): cannot take it: %s; "
				     "opening the session again", ag->from, until, strerror(-ret));
			hs_agent_close(ag);
		}
	}
	if (ret < 0)
		ag->lost++;
	ag->from = until;
	ag->from_real = until_real;
	/* User symbols: the next interval's processes (their binaries' read once). */
	if (ag->u)
		hs_usyms_forget(ag->u);
}

/* Sleep until @when (wall clock) or a signal, in short steps. */
static void hs_agent_sleep_until(double when)
{
	double left;

	while (!hs_agent_stop && !hs_agent_hup && (left = when - hs_wall()) > 0)
		poll(NULL, 0, left > 0.25 ? 250 : (int)(left * 1000) + 1);
}

static void hs_agent_hostname(struct hs_agent *ag)
{
	struct utsname un;

	if (gethostname(ag->hostname, sizeof(ag->hostname) - 1) || !ag->hostname[0])
		snprintf(ag->hostname, sizeof(ag->hostname), "unknown");
	ag->hostname[sizeof(ag->hostname) - 1] = '\0';
	hs_agent_sanitize(ag->hostname);
	if (uname(&un))
		snprintf(ag->release, sizeof(ag->release), "unknown");
	else
		snprintf(ag->release, sizeof(ag->release), "%s", un.release);
	hs_agent_sanitize(ag->release);
	/* -p: the process's name, for the OTLP resource (process.executable.name). */
	if (ag->o.s.abi.pid) {
		char path[64], *comm;

		snprintf(path, sizeof(path), "/proc/%u/comm", ag->o.s.abi.pid);
		comm = hs_read_file(path, NULL);
		if (comm) {
			comm[strcspn(comm, "\n")] = '\0';
			snprintf(ag->comm, sizeof(ag->comm), "%s", comm);
			free(comm);
		}
	}
}

/* The first boundary (a multiple of the interval) at least a second after @now. */
static double hs_agent_first_boundary(double now, unsigned int interval)
{
	return (floor((now + 1) / interval) + 1) * interval;
}

/* Until SIGTERM: open the session when there is one, an interval at each boundary. */
static int hs_agent_run(struct hs_agent *ag)
{
	double now = hs_wall(), next, tick;
	int ret;

	if (ag->o.persistent) {
		/* The first reading starts the count; without one, the next session counts whole. */
		hs_agent_persistent_read(ag, 0, 0, now);
		ag->from = (int64_t)floor(now);
		ag->from_real = now;
	}
	next = hs_agent_first_boundary(now, ag->o.interval);
	while (!hs_agent_stop) {
		if (hs_agent_hup) {
			hs_agent_hup = 0;
			if (ag->o.log && (ret = hs_agent_open_log(ag->o.log)))
				hs_agent_log("SIGHUP: cannot open the log %s again: %s", ag->o.log,
					     strerror(-ret));
			if (ag->m.base)
				hs_agent_ksyms(ag, 1);
			hs_agent_log("SIGHUP: log and kernel symbols opened again");
		}
		now = hs_wall();
		if (!ag->o.persistent && ag->fd < 0) {
			ret = hs_agent_open(ag);
			if (ret == -1)
				return 1;
			if (ret) {
				/* Not loaded: look again in a second. */
				hs_agent_sleep_until(now + 1);
				continue;
			}
			/*
			 * The session began now (opening it took its time: the
			 * symbols, CONFIGURE, START), and so does its first
			 * interval: none before it, with no samples.
			 */
			now = hs_wall();
			ag->from = (int64_t)floor(now);
			ag->from_real = now;
			next = hs_agent_first_boundary(now, ag->o.interval);
		}
		/*
		 * User stacks: the processes' mappings each second, for their
		 * symbols; the cgroup key: the new cgroups' names, while they are.
		 */
		tick = ag->u || (ag->o.s.abi.keys & HOTSTACK_KEY_CGROUP) ? fmin(next, now + 1) : next;
		hs_agent_sleep_until(tick);
		if (hs_agent_stop || hs_agent_hup)
			continue;
		now = hs_wall();
		if (now < next) {
			hs_capture_maps(ag->u, &ag->m, ag->o.s.abi.pid, 0, ag->uw, 0);
			continue;
		}
		/* Boundaries passed meanwhile (a suspended machine): this interval spans them. */
		next = floor(now / ag->o.interval) * ag->o.interval;
		hs_agent_interval(ag, (int64_t)next, now);
		next += ag->o.interval;
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hs_agent_signal };
	struct hs_agent ag = { .fd = -1 };
	struct hs_push_stats ps = { 0 };
	struct hs_push_config pc;
	double now;
	int ret;

	ret = hs_agent_parse(argc, argv, &ag.o);
	if (ret) {
		hs_agent_opts_free(&ag.o);
		return ret < 0 ? 0 : ret;
	}
	if (ag.o.log && (ret = hs_agent_open_log(ag.o.log))) {
		fprintf(stderr, "hotstack agent: cannot open the log %s: %s\n", ag.o.log,
			strerror(-ret));
		hs_agent_opts_free(&ag.o);
		return 1;
	}
	hs_agent_stamps = !getenv("JOURNAL_STREAM");
	ret = 1;
	hs_afiles_init(&ag.out, ag.o.output_dir, ag.o.keep);
	if (ag.o.output_dir && (ret = hs_afiles_open(&ag.out))) {
		hs_agent_log("cannot make or open the directory %s: %s", ag.o.output_dir,
			     strerror(-ret));
		ret = 1;
		goto out;
	}
	if (ag.o.output_dir && (ret = hs_afiles_scan(&ag.out))) {
		hs_agent_log("cannot read the directory %s: %s", ag.o.output_dir, strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 1;
	hs_agent_hostname(&ag);
	ag.event = hs_config_event(&ag.o.s);
	hs_config_rate(&ag.o.s, ag.rate, sizeof(ag.rate));
	/* User frames are named in their process: the pid filter's, or each one's key. */
	if (ag.o.s.abi.stacks & HOTSTACK_STACK_USER)
		ag.u = hs_usyms_new();
	if (ag.o.push) {
		char err[256];

		if (hs_push_init(err, sizeof(err))) {
			hs_agent_log("%s", err);
			goto out;
		}
		pc = (struct hs_push_config) {
			.url = ag.o.push, .otlp = ag.o.otlp, .tenant = ag.o.tenant,
			.max_queue = ag.o.queue, .max_bytes = ag.o.queue_mb << 20,
			.timeout = ag.o.timeout, .backoff_min = 1, .backoff_max = 60,
			.log = hs_agent_push_log,
		};
		if (hs_push_start(&ag.push, &pc)) {
			hs_agent_log("cannot start the sender thread");
			goto out_curl;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	hs_agent_notify("READY=1\nSTATUS=starting");
	hs_agent_log("started: %s%s%s%s%s; intervals of %u s",
		     ag.o.push ? ag.o.otlp ? "pushing OTLP to " : "pushing to " : "",
		     ag.o.push ? ag.o.push : "", ag.o.push && ag.o.output_dir ? " and " : "",
		     ag.o.output_dir ? "writing to " : "", ag.o.output_dir ? ag.o.output_dir : "",
		     ag.o.interval);

	ret = hs_agent_run(&ag);
	if (!ret) {
		/* SIGTERM: the last interval, to now. */
		now = hs_wall();
		hs_agent_notify("STOPPING=1\nSTATUS=stopping: the last interval");
		if (ag.fd >= 0 || ag.o.persistent)
			hs_agent_interval(&ag, (int64_t)ceil(now), now);
		if (ag.fd >= 0)
			hs_session_stop(ag.fd);
	}
	if (ag.push)
		hs_push_stop(ag.push, hs_now() + ag.o.drain, &ps);
	hs_agent_log("stopped: %" PRIu64 " intervals (%" PRIu64 " lost), %" PRIu64 " samples, "
		     "%" PRIu64 " counted, %" PRIu64 " dropped; %" PRIu64 " files written; pushed %"
		     PRIu64 ", rejected %" PRIu64 ", dropped %" PRIu64 " (queue full), abandoned %"
		     PRIu64 " (not pushed within --drain)", ag.intervals, ag.lost, ag.samples,
		     ag.counted, ag.dropped, ag.files, ps.pushed, ps.rejected, ps.dropped,
		     ps.abandoned);
out_curl:
	if (ag.o.push)
		hs_push_exit();
out:
	hs_agent_close(&ag);
	hs_usyms_free(ag.u);
	hs_afiles_free(&ag.out);
	hs_profile_free(&ag.prev);
	hs_k8s_free();
	hs_agent_opts_free(&ag.o);
	return ret;
}
