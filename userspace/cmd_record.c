// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack record: configure a session, sample for a while or while a
 * command runs, and write the profile (folded, report, json, svg, pprof or otlp).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libmnl/libmnl.h>

#include "cgroup.h"
#include "commands.h"
#include "device.h"
#include "events.h"
#include "maps.h"
#include "netlink.h"
#include "output.h"
#include "profile.h"
#include "record.h"
#include "session.h"
#include "table.h"
#include "usyms.h"
#include "util.h"
#include "uwload.h"

enum { O_DURATION = 'd', O_OUTPUT = 'o', O_FORMAT = HS_SESSION_OPT_NEXT };

static const struct hs_option hs_record_options[] = {
	{ O_DURATION, "duration", "SECONDS", "how long to sample (else while COMMAND runs, "
	  "or until Ctrl-C)" },
	{ O_OUTPUT, "output", "FILE", "where to write the profile (default hotstack.folded; "
	  "- is standard output)" },
	{ O_FORMAT, "format", "FORMAT", "folded, report, json, svg, pprof or otlp (else from FILE's "
	  "name: .folded .txt .json .svg .pb.gz)" },
	HS_OPTION_END,
};

int hs_record_parse(int argc, char **argv, struct hs_record_opts *o)
{
	static const struct hs_option *const tables[] = {
		hs_session_options, hs_off_cpu_options, hs_wall_options, hs_record_options, NULL,
	};
	const char *format = NULL;
	struct hs_args a;
	char *value;
	int id, ret, n;

	memset(o, 0, sizeof(*o));
	hs_config_defaults(&o->s);
	o->output = "hotstack.folded";
	/* In order: options end at the first operand, the command. */
	if (hs_args_init(&a, "record", "[OPTIONS] [-- COMMAND [ARGS...]]",
			 "Sample kernel (and user) stacks for a while, or while COMMAND runs, "
			 "and write the profile.", tables, 1, argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END) {
		if (id == HS_ARGS_EXIT) {
			ret = a.status ? a.status : -1;
			goto out;
		}
		ret = hs_config_option(&a, &o->s, id, value);
		if (ret == 0)
			continue;
		if (ret != 1)
			goto out;
		switch (id) {
		case O_DURATION:
			if (hs_parse_seconds(value, 0, 1e9, &o->duration) || !(o->duration > 0)) {
				ret = hs_args_error(&a, "-d wants a positive number of seconds, "
						    "not '%s'", value);
				goto out;
			}
			break;
		case O_OUTPUT:
			o->output = value;
			break;
		case O_FORMAT:
			format = value;
			break;
		}
	}
	ret = hs_config_check(&a, &o->s);
	if (ret)
		goto out;
	n = hs_args_rest(&a, &o->cmd);
	if (!n)
		o->cmd = NULL;
	if (o->cmd && o->s.abi.pid) {
		ret = hs_args_error(&a, "-p and a command do not go together");
		goto out;
	}
	ret = hs_output_format(&a, o->output, format, HS_FMT_FOLDED, HS_FMT_ALL, &o->format);
out:
	hs_args_free(&a);
	return ret;
}

static volatile int hs_record_stop;

static void hs_record_signal(int sig)
{
	(void)sig;
	hs_record_stop = 1;
}

/* SIGCHLD: only to end the wait (ppoll()) when the command exits. */
static void hs_record_child(int sig)
{
	(void)sig;
}

struct hs_record_events {
	uint32_t id;
	int tty;
};

static void hs_record_event(const struct hs_event *ev, void *data)
{
	struct hs_record_events *re = data;
	char line[256];

	if (ev->id != re->id || ev->event == HOTSTACK_EV_STARTED ||
	    ev->event == HOTSTACK_EV_STOPPED || ev->event == HOTSTACK_EV_CLOSED)
		return;
	hs_format_event(ev, line, sizeof(line));
	fprintf(stderr, "%shotstack: %s\n", re->tty ? "\r\033[K" : "", line);
}

/*
 * The stopped session's profile, with the samples lost (not those
 * filtered out: other processes were not asked for): from the mmap,
 * symbolized here, when this process may map the table and read
 * /proc/kallsyms; else the module's folded text (read()). 0 or -errno.
 */
static int hs_collect(int fd, const struct hotstack_stats *st, struct hs_profile *p,
		      const struct hs_table_map *m, struct hs_usyms *u, uint32_t pid,
		      unsigned int flags)
{
	char *text;
	int ret;

	if (!hs_session_profile(fd, m, HS_GEN_ACTIVE, u, pid, p, flags))
		return 0;
	hs_profile_free(p);
	text = hs_read_fd(fd, NULL);
	if (!text)
		return -errno;
	ret = hs_profile_parse(p, text, NULL);
	free(text);
	return ret ?: hs_profile_add_drops(p, st->total.drops);
}

/* Say the cgroups left unnamed (keyed by cgroup): their samples are under "[cgroup ID]". */
static void hs_record_unnamed(const struct hs_profile *p)
{
	uint64_t samples = 0;
	size_t n = p->keys & HOTSTACK_KEY_CGROUP ? hs_cgroups_unnamed(p, &samples) : 0;

	if (n)
		fprintf(stderr, "[ hotstack record: %zu cgroup%s left unnamed, %" PRIu64 " samples "
			"under [cgroup ID]: removed before a name was read (a module too old or "
			"a kernel without the cgroup_rmdir tracepoint, or more than %d removed "
			"between two reads) ]\n", n, n > 1 ? "s" : "", samples,
			HOTSTACK_CGROUPS_GONE);
}

/* The file execvp() runs for @name (a path, or looked for in $PATH) into @buf; 0 or -1. */
static int hs_which(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH") ?: "/usr/local/bin:/usr/bin:/bin", *e;

	if (strchr(name, '/'))
		return snprintf(buf, size, "%s", name) < (int)size ? 0 : -1;
	for (; *path; path = *e ? e + 1 : e) {
		e = strchrnul(path, ':');
		snprintf(buf, size, "%.*s/%s", (int)(e - path), e > path ? path : ".", name);
		if (!access(buf, X_OK))
			return 0;
	}
	return -1;
}

/* Fork @cmd stopped on a pipe; it execs when the session has started. */
static pid_t hs_spawn(char **cmd, int *go)
{
	int fds[2];
	pid_t pid;
	char b;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(fds[1]);
		if (read(fds[0], &b, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "hotstack record: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

/* ppoll() @pfd for @wait s (< 0: until an event or a signal) with @mask. */
static int hs_record_wait(struct pollfd *pfd, double wait, const sigset_t *mask)
{
	struct timespec ts = { .tv_sec = (time_t)wait,
			       .tv_nsec = (long)((wait - (time_t)wait) * 1e9) };

	return ppoll(pfd, 1, wait < 0 ? NULL : &ts, mask);
}

int cmd_record(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hs_record_signal };
	struct sigaction sc = { .sa_handler = hs_record_child }, sc_old;
	struct hs_record_events re = { 0 };
	struct hs_profile p = { 0 };
	struct hs_record_opts o;
	struct hotstack_stats st;
	struct hs_live l;
	struct hs_table_map m = { 0 };
	struct hs_usyms *u = NULL;
	struct hs_uwload *uw = NULL;
	struct hs_genl g;
	int fd, go = -1, status = 0, have_genl, tick, ret = 1;
	char uwtext[1024], path[4096], sizes[96];
	sigset_t sigs, mask, waitmask;
	double start, now, wait;
	pid_t child = 0;

	ret = hs_record_parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = 1;
	fd = hs_device_open();
	if (fd < 0)
		return 1;
	if (o.cmd) {
		child = hs_spawn(o.cmd, &go);
		if (child < 0) {
			perror("hotstack record: fork");
			goto out_close;
		}
		/*
		 * A command without -a is profiled alone: nothing of it is in
		 * progress at START but its wait for it, which is the tool's.
		 */
		if (!o.s.all_cpus)
			o.s.abi.pid = child;
		if (!o.s.all_cpus && o.s.off_cpu)
			o.s.abi.flags |= HOTSTACK_CFG_OFF_NEW;
	}
	if (hs_session_configure(fd, &o.s, "record"))
		goto out_child;
	/*
	 * User stacks by unwind tables: the command's are loaded now, while
	 * it waits to exec (its libraries are ours: their tables are ready
	 * when it runs), and every process's as the module reports it.
	 */
	uw = hs_session_unwind(fd, &o.s, o.s.abi.pid, "record");
	if (uw && o.cmd && !hs_which(o.cmd[0], path, sizeof(path)))
		hs_uw_preload(uw, path);
	/* The table, to symbolize it here (and see the processes in it). */
	hs_table_map(fd, &m);
	/* User frames are named in their process: the pid filter's, or each one's key. */
	if (o.s.abi.stacks & HOTSTACK_STACK_USER)
		u = hs_usyms_new();

	re.tty = isatty(2);
	hs_session_stats(fd, 0, &st);
	re.id = st.id;
	have_genl = !hs_genl_quiet_open(&g) && !hs_genl_subscribe(&g);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hs_session_start(fd, "record"))
		goto out_genl;
	/*
	 * SIGCHLD, SIGINT and SIGTERM taken only while waiting (ppoll()):
	 * the command's exit or Ctrl-C ends the wait, and cannot come
	 * between the loop's checks and the wait, which would then last.
	 */
	sigaction(SIGCHLD, &sc, &sc_old);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, &mask);
	waitmask = mask;
	sigdelset(&waitmask, SIGCHLD);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	/*
	 * Work between events: the live line, the processes' maps (user
	 * stacks) and the cgroups' names, every 250 ms. Else the wait ends
	 * only at an event, a signal or the end of -d: a loop that woke
	 * every 250 ms for nothing took two context switches from it.
	 */
	tick = re.tty || u || uw || (o.s.abi.keys & HOTSTACK_KEY_CGROUP);
	start = hs_now();
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			hs_record_stop = 1;
		close(go);
		go = -1;
	}
	while (!hs_record_stop) {
		struct pollfd pfd = { .fd = have_genl ? mnl_socket_get_fd(g.nl) : -1,
				      .events = POLLIN };

		now = hs_now();
		if (o.duration && now - start >= o.duration)
			break;
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			break;
		}
		if (re.tty)
			hs_live_status_line(fd, &m, now - start, o.s.abi.table_entries, o.s.off_cpu,
					    o.s.wall);
		hs_capture_maps(u, &m, o.s.abi.pid, child, uw, 0);
		wait = tick ? 0.25 : o.duration ? o.duration - (now - start) : -1;
		if (hs_record_wait(&pfd, wait, &waitmask) > 0 && have_genl)
			hs_genl_read_events(&g, hs_record_event, &re);
	}
	/* As before: no EINTR later on account of another child. */
	sigaction(SIGCHLD, &sc_old, NULL);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	now = hs_now();
	hs_session_stop(fd);
	if (uw)
		hs_uw_stop(uw);
	hs_capture_maps(u, &m, o.s.abi.pid, child, uw, 1);
	if (re.tty)
		fprintf(stderr, "\r\033[K");
	if (have_genl)
		while (hs_genl_read_events_nowait(&g, hs_record_event, &re) > 0)
			;
	hs_session_stats(fd, 0, &st);
	ret = hs_collect(fd, &st, &p, &m, u, o.s.abi.pid, o.s.profile_flags);
	if (ret) {
		fprintf(stderr, "hotstack record: cannot read the profile: %s\n", strerror(-ret));
		ret = 1;
		goto out_genl;
	}
	ret = 1;
	p.event = hs_config_event(&o.s);
	p.keys = o.s.abi.keys;
	hs_config_rate(&o.s, p.rate, sizeof(p.rate));
	p.seconds = now - start;
	/* The binaries the frames came from, with their build IDs (pprof's mappings). */
	if (hs_maps_kernel(&p, "/sys") || hs_maps_merge(&p.maps, hs_usyms_maps(u))) {
		fprintf(stderr, "hotstack record: cannot read the profile: %s\n", strerror(ENOMEM));
		goto out_genl;
	}
	if (hs_write_profile("record", o.output, o.format, &p, NULL))
		goto out_genl;
	hs_record_unnamed(&p);
	hs_live_compute(&st, st.table_entries, p.seconds, o.s.off_cpu, NULL, &l);
	hs_unwind_summary(&st, uw, uwtext, sizeof(uwtext));
	if (o.s.off_cpu) {
		char text[512];

		hs_live_off_cpu(&st, &l, o.s.wall, text, sizeof(text));
		fprintf(stderr, "[ hotstack record: %.1f s, %zu stacks, %s; wrote %s ]\n", p.seconds,
			p.nr, text, strcmp(o.output, "-") ? o.output : "standard output");
		if (uwtext[0])
			fprintf(stderr, "[ hotstack record: %s ]\n", uwtext);
		ret = 0;
		goto out_genl;
	}
	/* The tables' sizes as the module took them, and the memory they took (the mapping's). */
	fprintf(stderr, "[ hotstack record: %.1f s, %llu samples (%llu in NMI), %llu dropped, "
		"%llu filtered out, %zu stacks (%s on %u CPUs: %.1f MiB), %.0f ns/sample; "
		"%s%swrote %s ]\n", p.seconds, (unsigned long long)st.total.samples,
		(unsigned long long)st.total.nmi_samples,
		(unsigned long long)(hs_sum_drops(st.total.drops) - p.filtered),
		(unsigned long long)p.filtered, p.nr,
		hs_tables_text(st.table_entries, st.arena_frames, st.cpu_entries, sizes,
			       sizeof(sizes)), st.nr_cpus, st.mmap_size / 1048576.0,
		l.cost_ns, l.budget, l.budget[0] ? "; " : "", strcmp(o.output, "-") ? o.output : "standard output");
	if (uwtext[0])
		fprintf(stderr, "[ hotstack record: %s ]\n", uwtext);
	ret = 0;
out_genl:
	if (have_genl)
		hs_genl_close(&g);
	hs_profile_free(&p);
out_child:
	if (go >= 0)
		close(go);
	if (child > 0) {
		if (ret)
			kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
out_close:
	hs_uw_free(uw);
	hs_usyms_free(u);
	hs_table_unmap(&m);
	close(fd);
	if (!ret && o.cmd && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		ret = 1;
	return ret;
}
