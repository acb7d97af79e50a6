// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack record: configure a session, sample for a while or while a
 * command runs, and write the profile (folded, report, json, svg or pprof).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/perf_event.h>

#include "commands.h"
#include "device.h"
#include "events.h"
#include "netlink.h"
#include "profile.h"
#include "record.h"
#include "table.h"
#include "maps.h"
#include "usyms.h"

static const char hs_record_usage[] =
	"usage: hotstack record [-e EVENT[:p|:pp|:ppp|:k|:u]] [-F HZ | -c PERIOD]\n"
	"                       [-a | -C CPUS] [-p PID] [-g] [--stacks kernel|user|both]\n"
	"                       [--max-depth N] [--keys comm,pid,context] [--collapse]\n"
	"                       [--table-entries N] [--arena-frames N]\n"
	"                       [-d SECONDS | -- COMMAND ARGS...] [-o FILE]\n"
	"                       [--format folded|report|json|svg|pprof]\n";

int hs_cmd_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "hotstack %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return HS_EXIT_USAGE;
}

static int hs_usage_error(const char *fmt, const char *arg)
{
	return hs_cmd_usage_error("record", hs_record_usage, fmt, arg);
}

static int hs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end || *out < min || *out > max ? -1 : 0;
}

int hs_format_of_name(const char *name)
{
	size_t n = strlen(name);

	if (n > 7 && !strcmp(name + n - 7, ".folded"))
		return HS_FMT_FOLDED;
	if (n > 4 && !strcmp(name + n - 4, ".txt"))
		return HS_FMT_REPORT;
	if (n > 5 && !strcmp(name + n - 5, ".json"))
		return HS_FMT_JSON;
	if (n > 4 && !strcmp(name + n - 4, ".svg"))
		return HS_FMT_SVG;
	if (n > 6 && !strcmp(name + n - 6, ".pb.gz"))
		return HS_FMT_PPROF;
	return -1;
}

static int hs_format_of_str(const char *s)
{
	if (!strcmp(s, "folded"))
		return HS_FMT_FOLDED;
	if (!strcmp(s, "report"))
		return HS_FMT_REPORT;
	if (!strcmp(s, "json"))
		return HS_FMT_JSON;
	if (!strcmp(s, "svg"))
		return HS_FMT_SVG;
	if (!strcmp(s, "pprof"))
		return HS_FMT_PPROF;
	return -1;
}

void hs_session_defaults(struct hs_record_opts *o)
{
	char err[256];

	memset(o, 0, sizeof(*o));
	o->event = "cycles";
	hs_parse_event(o->event, &o->ev, err, sizeof(err));
	o->freq = 1;
	o->sample = 4000;
	o->stacks = HOTSTACK_STACK_KERNEL;
	o->max_depth = 127;
	o->table_entries = 8192;
	o->arena_frames = 131072;
}

static int hs_session_error(const struct hs_session_parse *sp, const char *fmt, const char *arg)
{
	return hs_cmd_usage_error(sp->cmd, sp->usage, fmt, arg);
}

int hs_session_option(struct hs_session_parse *sp, int c, char *arg, struct hs_record_opts *o)
{
	char err[256], *tok, *save, *copy;
	uint64_t v;

	switch (c) {
	case 'e':
		if (hs_parse_event(arg, &o->ev, err, sizeof(err)))
			return hs_session_error(sp, "%s", err);
		o->event = arg;
		break;
	case 'F':
		if (hs_parse_u64(arg, 1, HOTSTACK_MAX_FREQ, &o->sample))
			return hs_session_error(sp, "-F wants a frequency from 1 to 100000 Hz, "
						"not '%s'", arg);
		o->freq = 1;
		sp->have_F = 1;
		break;
	case 'c':
		if (hs_parse_u64(arg, 1, INT64_MAX, &o->sample))
			return hs_session_error(sp, "-c wants a positive period, not '%s'", arg);
		o->freq = 0;
		sp->have_c = 1;
		break;
	case 'a':
		sp->have_a = 1;
		break;
	case 'C':
		if (hs_parse_cpus(arg, o->cpus, HS_MAX_CPU_WORDS, &o->cpus_words, err, sizeof(err)))
			return hs_session_error(sp, "%s", err);
		break;
	case 'p':
		if (hs_parse_u64(arg, 1, 4194304, &v))
			return hs_session_error(sp, "-p wants a process ID, not '%s'", arg);
		o->pid = v;
		break;
	case 'g':
		break;	/* perf habit: stacks are always recorded */
	case HS_OPT_STACKS:
		if (!strcmp(arg, "kernel"))
			o->stacks = HOTSTACK_STACK_KERNEL;
		else if (!strcmp(arg, "user"))
			o->stacks = HOTSTACK_STACK_USER;
		else if (!strcmp(arg, "both"))
			o->stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
		else
			return hs_session_error(sp, "--stacks wants kernel, user or both, not '%s'",
						arg);
		break;
	case HS_OPT_DEPTH:
		if (hs_parse_u64(arg, 1, HOTSTACK_MAX_DEPTH, &v))
			return hs_session_error(sp, "--max-depth wants 1 to 1024, not '%s'", arg);
		o->max_depth = v;
		break;
	case HS_OPT_KEYS:
		copy = strdup(arg);
		o->keys = 0;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "comm"))
				o->keys |= HOTSTACK_KEY_COMM;
			else if (!strcmp(tok, "pid"))
				o->keys |= HOTSTACK_KEY_TGID;
			else if (!strcmp(tok, "context"))
				o->keys |= HOTSTACK_KEY_CONTEXT;
			else {
				free(copy);
				return hs_session_error(sp, "--keys takes comm, pid and context, "
							"not '%s'", arg);
			}
		}
		free(copy);
		break;
	case HS_OPT_COLLAPSE:
		o->collapse = 1;
		break;
	case HS_OPT_TABLE:
		if (hs_parse_u64(arg, HOTSTACK_MIN_ENTRIES, HOTSTACK_MAX_ENTRIES, &v) ||
		    (v & (v - 1)))
			return hs_session_error(sp, "--table-entries wants a power of two from 16 "
						"to 16777216, not '%s'", arg);
		o->table_entries = v;
		break;
	case HS_OPT_ARENA:
		if (hs_parse_u64(arg, HOTSTACK_MIN_ARENA, HOTSTACK_MAX_ARENA, &v))
			return hs_session_error(sp, "--arena-frames wants 64 to 268435456, not '%s'",
						arg);
		o->arena_frames = v;
		break;
	default:
		return 1;
	}
	return 0;
}

int hs_session_check(struct hs_session_parse *sp, struct hs_record_opts *o)
{
	if (sp->have_F && sp->have_c)
		return hs_session_error(sp, "%s",
					"-F and -c do not go together: a frequency or a period");
	if (sp->have_a && o->cpus_words)
		return hs_session_error(sp, "%s", "-a and -C do not go together");
	if (o->ev.stacks)
		o->stacks = o->ev.stacks;	/* :k / :u */
	return 0;
}

int hs_record_parse(int argc, char **argv, struct hs_record_opts *o)
{
	enum { O_FORMAT = HS_OPT_NEXT };
	static const struct option longopts[] = {
		HS_SESSION_LONGOPTS,
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hs_session_parse sp = { .cmd = "record", .usage = hs_record_usage };
	int c, ret, format = -1;
	char *end;

	hs_session_defaults(o);
	o->output = "hotstack.folded";
	optind = 1;
	opterr = 0;
	/* "+": options end at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+:" HS_SESSION_SHORTOPTS "d:o:h", longopts,
				NULL)) != -1) {
		ret = hs_session_option(&sp, c, optarg, o);
		if (ret != 1) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || o->duration <= 0)
				return hs_usage_error("-d wants a positive number of seconds, not '%s'",
						      optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case O_FORMAT:
			format = hs_format_of_str(optarg);
			if (format < 0)
				return hs_usage_error("--format wants folded, report, json, svg or "
						      "pprof, not '%s'", optarg);
			break;
		case 'h':
			printf("%s", hs_record_usage);
			return -1;
		case ':':
			return hs_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return hs_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	ret = hs_session_check(&sp, o);
	if (ret)
		return ret;
	if (optind < argc)
		o->cmd = argv + optind;
	o->all_cpus_with_cmd = sp.have_a;
	if (o->cmd && o->pid)
		return hs_usage_error("%s", "-p and a command do not go together");
	if (format < 0 && strcmp(o->output, "-"))
		format = hs_format_of_name(o->output);
	o->format = format < 0 ? HS_FMT_FOLDED : format;
	return 0;
}

static volatile int hs_record_stop;

static void hs_record_signal(int sig)
{
	(void)sig;
	hs_record_stop = 1;
}

double hs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int hs_stats(int fd, struct hotstack_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, HOTSTACK_IOC_GET_STATS, st) ? -errno : 0;
}

void hs_live_compute(const struct hotstack_stats *st, uint32_t table_entries, double seconds,
		     struct hs_live *l)
{
	const struct hotstack_cpu_stats *t = &st->total;

	memset(l, 0, sizeof(*l));
	/* A table takes stacks up to 3/4 of its entries (the module's probe limit). */
	l->capacity = (uint64_t)table_entries * 3 / 4 * st->nr_cpus;
	l->rate = seconds > 0 ? t->samples / seconds : 0;
	l->fill = l->capacity ? 100.0 * t->entries / l->capacity : 0;
	l->dropped = hs_sum_drops(t->drops);
	l->cost_ns = t->timed ? (double)t->handler_ns / t->timed : 0;
	l->overhead = st->elapsed_ns && st->nr_cpus ?
		      100.0 * l->cost_ns * t->samples / ((double)st->elapsed_ns * st->nr_cpus) : 0;
}

/* The one status line on a terminal: \r, then the line, then clear to EOL. */
static void hs_status_line(int fd, double elapsed, const struct hs_record_opts *o)
{
	struct hotstack_stats st;
	struct hs_live l;

	if (hs_stats(fd, &st) || !st.nr_cpus)
		return;
	hs_live_compute(&st, o->table_entries, elapsed, &l);
	fprintf(stderr, "\r[%6.1fs] %8.0f samples/s, %llu stacks (%.0f%% of %llu), %llu dropped, "
		"%.0f ns/sample, %.3f%% CPU\033[K", elapsed, l.rate,
		(unsigned long long)st.total.entries, l.fill, (unsigned long long)l.capacity,
		(unsigned long long)l.dropped, l.cost_ns, l.overhead);
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

int hs_session_configure(int fd, struct hs_record_opts *o, const char *cmd)
{
	struct hotstack_config c = { .size = sizeof(c) };
	int err;

	c.flags = (o->freq ? HOTSTACK_CFG_FREQ : 0) | (o->collapse ? HOTSTACK_CFG_COLLAPSE : 0) |
		  (o->pid ? HOTSTACK_CFG_PID : 0);
	c.event_type = o->ev.type;
	c.event_config = o->ev.config;
	c.precise = o->ev.precise;
	c.sample = o->sample;
	c.cpus_ptr = o->cpus_words ? (uintptr_t)o->cpus : 0;
	c.cpus_words = o->cpus_words;
	c.pid = o->pid;
	c.stacks = o->stacks;
	c.max_depth = o->max_depth;
	c.keys = o->keys;
	c.table_entries = o->table_entries;
	c.arena_frames = o->arena_frames;
	if (!ioctl(fd, HOTSTACK_IOC_CONFIGURE, &c))
		return 0;
	err = errno;
	if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) &&
	    o->ev.type == PERF_TYPE_HARDWARE && o->ev.config == PERF_COUNT_HW_CPU_CYCLES) {
		fprintf(stderr, "hotstack: warning: cycles is not supported on this machine "
			"(no PMU?), falling back to cpu-clock\n");
		o->event = "cpu-clock";
		o->ev.type = PERF_TYPE_SOFTWARE;
		o->ev.config = PERF_COUNT_SW_CPU_CLOCK;
		o->ev.precise = 0;
		return hs_session_configure(fd, o, cmd);
	}
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		fprintf(stderr, "hotstack %s: event %s is not supported on this machine (%s)\n",
			cmd, o->event, strerror(err));
		break;
	case E2BIG:
		fprintf(stderr, "hotstack %s: the tables would pass the module's memory limit "
			"(max_memory_mb): use smaller --table-entries / --arena-frames, fewer CPUs "
			"(-C), or reload the module with a larger max_memory_mb\n", cmd);
		break;
	default:
		fprintf(stderr, "hotstack %s: cannot configure the session: %s\n", cmd,
			strerror(err));
	}
	return -1;
}

/* Free the lines of @q only (its other fields belong to the recording). */
static void hs_drop_lines(struct hs_profile *q)
{
	size_t i;

	for (i = 0; i < q->nr; i++)
		free(q->lines[i].stack);
	free(q->lines);
}

/*
 * The stopped session's profile, with the samples lost (not those
 * filtered out: other processes were not asked for): from the mmap,
 * symbolized here, when this process may map the table and read
 * /proc/kallsyms; else the module's folded text (read()).
 */
static int hs_collect(int fd, const struct hotstack_stats *st, struct hs_profile *p,
		      const struct hs_table_map *m, struct hs_usyms *u, uint32_t pid)
{
	struct hs_profile q = *p;	/* the recording's facts, no lines yet */
	size_t bad = 0;
	char *text;
	int ret;

	if (!hs_session_profile(fd, m, HS_GEN_ACTIVE, u, pid, &q, 0)) {
		*p = q;
		return 0;
	}
	hs_drop_lines(&q);
	text = hs_read_folded(fd);
	if (!text)
		return -errno;
	ret = hs_profile_parse(p, text, &bad);
	free(text);
	if (!ret)
		ret = hs_profile_add_drops(p, st->total.drops);
	return ret;
}

int hs_write_profile(const char *path, int format, const struct hs_profile *p)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "w") : stdout;
	int ret;

	if (!f) {
		fprintf(stderr, "hotstack: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	switch (format) {
	case HS_FMT_REPORT:
		ret = hs_write_report(f, p, 20);
		hs_maps_print(f, p->maps);
		break;
	case HS_FMT_JSON:
		ret = hs_write_json(f, p);
		break;
	case HS_FMT_SVG:
		ret = hs_write_svg(f, p);
		break;
	case HS_FMT_PPROF:
		ret = hs_write_pprof(f, p);
		break;
	default:
		ret = hs_write_folded(f, p);
	}
	if (f != stdout && fclose(f))
		ret = -errno;
	else if (f == stdout && fflush(f))
		ret = -errno;
	if (ret)
		fprintf(stderr, "hotstack: cannot write %s: %s\n",
			f == stdout ? "standard output" : path, strerror(-ret));
	return ret ? -1 : 0;
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

/* Whether @pid still runs this program (forked, not yet exec'd its command). */
static int hs_not_execd(pid_t pid)
{
	char path[64], exe[4096], self[4096];
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	a = readlink(path, exe, sizeof(exe));
	b = readlink("/proc/self/exe", self, sizeof(self));
	return a > 0 && a == b && !memcmp(exe, self, a);
}

void hs_capture_maps(struct hs_usyms *u, const struct hs_table_map *m, uint32_t pid, int child)
{
	static uint32_t pids[4096];
	size_t n, i;

	if (!u)
		return;
	if (pid && !(child && hs_not_execd(child)))
		hs_usyms_capture(u, pid);
	n = m->base ? hs_table_pids(m, pids, sizeof(pids) / sizeof(pids[0])) : 0;
	for (i = 0; i < n; i++)
		if (pids[i] != pid && pids[i] != (uint32_t)getpid())
			hs_usyms_capture(u, pids[i]);
}

int cmd_record(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hs_record_signal };
	struct hs_record_events re = { 0 };
	struct hs_profile p = { 0 };
	struct hs_record_opts o;
	struct hotstack_stats st;
	struct hs_table_map m = { 0 };
	struct hs_usyms *u = NULL;
	struct hs_genl g;
	int fd, go = -1, status = 0, have_genl, ret = 1;
	double start, now;
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
		/* A command without -a is profiled alone. */
		if (!o.all_cpus_with_cmd)
			o.pid = child;
	}
	if (hs_session_configure(fd, &o, "record"))
		goto out_child;
	/* The table, to symbolize it here (and see the processes in it). */
	hs_table_map(fd, &m);
	if (o.stacks & HOTSTACK_STACK_USER) {
		if ((o.keys & HOTSTACK_KEY_TGID) || o.pid)
			u = hs_usyms_new();
		else
			fprintf(stderr, "hotstack record: note: user frames stay addresses without "
				"a process to look them up in: add --keys pid, -p PID or a command\n");
	}

	re.tty = isatty(2);
	hs_stats(fd, &st);
	re.id = st.id;
	have_genl = !hs_genl_quiet_open(&g) && !hs_genl_subscribe(&g);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ioctl(fd, HOTSTACK_IOC_START, 0)) {
		fprintf(stderr, "hotstack record: cannot start: %s\n", strerror(errno));
		goto out_genl;
	}
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
			hs_status_line(fd, now - start, &o);
		hs_capture_maps(u, &m, o.pid, child);
		if (poll(&pfd, 1, 250) > 0 && have_genl)
			hs_genl_read_events(&g, hs_record_event, &re);
	}
	now = hs_now();
	ioctl(fd, HOTSTACK_IOC_STOP, 0);
	hs_capture_maps(u, &m, o.pid, child);
	if (re.tty)
		fprintf(stderr, "\r\033[K");
	if (have_genl)
		while (hs_genl_read_events_nowait(&g, hs_record_event, &re) > 0)
			;
	hs_stats(fd, &st);
	p.event = o.event;
	hs_rate_str(o.freq ? HOTSTACK_CFG_FREQ : 0, o.sample, p.rate, sizeof(p.rate));
	p.seconds = now - start;
	if (hs_collect(fd, &st, &p, &m, u, o.pid)) {
		fprintf(stderr, "hotstack record: cannot read the profile: %s\n", strerror(errno));
		goto out_genl;
	}
	/* The binaries the frames came from, with their build IDs (pprof's mappings). */
	if (hs_maps_kernel(&p, "/sys") || hs_maps_merge(&p.maps, hs_usyms_maps(u))) {
		fprintf(stderr, "hotstack record: cannot read the profile: %s\n", strerror(ENOMEM));
		goto out_genl;
	}
	if (hs_write_profile(o.output, o.format, &p))
		goto out_genl;
	fprintf(stderr, "[ hotstack record: %.1f s, %llu samples, %llu dropped, %llu filtered "
		"out, %zu stacks, %.0f ns/sample; wrote %s ]\n", p.seconds,
		(unsigned long long)st.total.samples,
		(unsigned long long)(hs_sum_drops(st.total.drops) - p.filtered),
		(unsigned long long)p.filtered, p.nr,
		st.total.timed ? (double)st.total.handler_ns / st.total.timed : 0.0,
		strcmp(o.output, "-") ? o.output : "standard output");
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
	hs_usyms_free(u);
	hs_table_unmap(&m);
	close(fd);
	if (!ret && o.cmd && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		ret = 1;
	return ret;
}
