// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack top: a session of its own, like record's, shown live. Every
 * refresh SNAPSHOTs the session, so each screen is the last interval:
 * the readable generation copied from the mmap and symbolized here (or
 * read()'s text when this process may not map it or see the addresses).
 * Full screen with ncurses, or plain text (-b) for scripts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <curses.h>

#include "commands.h"
#include "device.h"
#include "events.h"
#include "profile.h"
#include "session.h"
#include "symbols.h"
#include "table.h"
#include "top.h"
#include "usyms.h"
#include "uwload.h"
#include "util.h"

/* Rows of the text frame in batch mode (a terminal gets what fits). */
#define HS_TOP_BATCH_FNS	20
#define HS_TOP_BATCH_STACKS	10

enum { O_DELAY = 'd', O_BATCH = 'b', O_ITER = 'n', O_SORT = HS_SESSION_OPT_NEXT };

static const struct hs_option hs_top_options[] = {
	{ O_DELAY, "delay", "SECONDS", "time between refreshes, 0.1-3600 (default 1)" },
	{ O_BATCH, "batch", NULL, "each refresh as plain text on standard output, no ncurses" },
	{ O_ITER, "iterations", "N", "exit after N refreshes (default: until q or Ctrl-C)" },
	{ O_SORT, "sort", "ORDER,KEYS", "self (default; key s) or total (key t), and/or the rows' "
	  "keys as report's --sort: sym, comm, pid, module, context" },
	HS_OPTION_END,
};

/* --sort: "self" or "total" first, if there, then the rows' keys. 0 or -1. */
static int hs_top_sort(struct hs_top_opts *o, const char *value)
{
	const char *keys = value;

	if (!strncmp(value, "self", 4) && (!value[4] || value[4] == ','))
		o->by_total = 0, keys = value + 4;
	else if (!strncmp(value, "total", 5) && (!value[5] || value[5] == ','))
		o->by_total = 1, keys = value + 5;
	if (keys != value && !*keys)
		return 0;
	return hs_sort_keys(&o->view, keys != value ? keys + 1 : keys);
}

int hs_top_parse(int argc, char **argv, struct hs_top_opts *o)
{
	static const struct hs_option *const tables[] = {
		hs_session_options, hs_off_cpu_options, hs_top_options, hs_filter_options, NULL,
	};
	unsigned long long n;
	struct hs_args a;
	char *value, **rest;
	int id, ret;

	memset(o, 0, sizeof(*o));
	hs_config_defaults(&o->s);
	hs_view_defaults(&o->view);
	o->delay = 1;
	if (hs_args_init(&a, "top", "[OPTIONS]",
			 "A live view of the hottest functions and stacks, refreshed every "
			 "interval (keys: q quit, s/t sort by self/total, space or r refresh).",
			 tables, 0, argc, argv))
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
		ret = 0;
		switch (id) {
		case O_DELAY:
			if (hs_parse_seconds(value, 0.1, 3600, &o->delay))
				ret = hs_args_error(&a, "-d wants the seconds between refreshes, "
						    "0.1 to 3600, not '%s'", value);
			break;
		case O_BATCH:
			o->batch = 1;
			break;
		case O_ITER:
			if (hs_parse_u64(value, 1, 1000000000, &n))
				ret = hs_args_error(&a, "-n wants a number of refreshes, 1 or more, "
						    "not '%s'", value);
			else
				o->iterations = n;
			break;
		case O_SORT:
			ret = hs_top_sort(o, value);
			if (ret)
				ret = hs_args_error(&a, "--sort wants self or total, and/or sort keys "
						    "(sym, comm, pid, module, context), not '%s'",
						    value);
			break;
		default:
			ret = hs_view_option(&a, &o->view, id, value);
		}
		if (ret)
			goto out;
	}
	ret = hs_config_check(&a, &o->s);
	if (!ret && hs_args_rest(&a, &rest))
		ret = hs_args_error(&a, "top takes no command ('%s'): it watches the whole system, "
				    "or -p PID", rest[0]);
out:
	hs_args_free(&a);
	return ret;
}

/* ---- the text of one refresh ------------------------------------------ */

static int hs_top_fn_cmp(const struct hs_fn *a, const struct hs_fn *b, int by_total)
{
	uint64_t ka = by_total ? a->total[0] : a->self[0], kb = by_total ? b->total[0] : b->self[0];
	uint64_t la = by_total ? a->self[0] : a->total[0], lb = by_total ? b->self[0] : b->total[0];

	if (ka != kb)
		return ka < kb ? 1 : -1;
	if (la != lb)
		return la < lb ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int hs_top_by_self(const void *a, const void *b)
{
	return hs_top_fn_cmp(a, b, 0);
}

static int hs_top_by_total(const void *a, const void *b)
{
	return hs_top_fn_cmp(a, b, 1);
}

static void hs_top_header(FILE *f, const struct hs_top_frame *fr)
{
	const struct hotstack_cpu_stats *t = &fr->st.total;
	uint64_t filtered = t->drops[HOTSTACK_DROP_FILTERED], lost;
	struct hs_live l;
	char fill[64];
	unsigned int i;
	int first = 1, ns;

	ns = fr->p && hs_profile_ns(fr->p);
	hs_live_compute(&fr->st, fr->table_entries, fr->interval, ns,
			fr->fill.cpu_entries ? &fr->fill : NULL, &l);
	lost = l.dropped - filtered;
	fprintf(f, "hotstack top - %s, %s, %u CPU%s, up %.1f s, sorted by %s\n", fr->event,
		fr->rate, fr->st.nr_cpus, fr->st.nr_cpus == 1 ? "" : "s", fr->elapsed,
		fr->by_total ? "total" : "self");
	if (!fr->p) {
		fprintf(f, "waiting for the first interval...\n");
		return;
	}
	if (ns)
		fprintf(f, "off-CPU: %.3f s of waits ended in %.2f s (%llu switches, %llu untimed), "
			"counted %.3f s, dropped %.3f s", t->samples / 1e9, fr->interval,
			(unsigned long long)fr->st.interrupts, (unsigned long long)fr->st.untimed,
			t->counted / 1e9, lost / 1e9);
	else
		fprintf(f, "samples: %.0f samples/s (%llu in %.2f s), counted %llu, dropped %llu",
			l.rate, (unsigned long long)t->samples, fr->interval,
			(unsigned long long)t->counted, (unsigned long long)lost);
	for (i = 0; i < HOTSTACK_DROP_MAX; i++) {
		if (!t->drops[i] || i == HOTSTACK_DROP_FILTERED)
			continue;
		fprintf(f, "%s%s %llu", first ? " (" : ", ", hs_drop_name(i),
			(unsigned long long)t->drops[i]);
		first = 0;
	}
	if (ns)
		fprintf(f, "%s\n", first ? "" : ")");
	else
		fprintf(f, "%s, filtered out %llu, %llu in NMI\n", first ? "" : ")",
			(unsigned long long)filtered, (unsigned long long)t->nmi_samples);
	fprintf(f, "stacks: %llu distinct, store %.0f%% full (%llu of %llu)%s\n",
		(unsigned long long)t->entries, l.fill, (unsigned long long)t->entries,
		(unsigned long long)l.capacity, hs_live_cpu_fill(&l, fill, sizeof(fill)));
	fprintf(f, "cost: %.0f ns/%s, overhead %.3f%% CPU\n", l.cost_ns,
		ns ? "switch" : "sample", l.overhead);
	if (l.budget[0])
		fprintf(f, "%s\n", l.budget);
	fprintf(f, "stacks from: %s\n", fr->source);
}

int hs_top_render(FILE *f, const struct hs_top_frame *fr, unsigned int nr_fns,
		  unsigned int nr_stacks)
{
	static const int by_sym[] = { HS_SORT_SYM };
	const struct hs_profile *p = fr->p;
	const struct hs_fn *fn;
	struct hs_fns fns;
	char title[64] = "FUNCTION";
	size_t i, shown;
	uint64_t counted;
	int ret, ns;

	hs_top_header(f, fr);
	if (!p)
		return ferror(f) ? -EIO : 0;
	ns = hs_profile_ns(p);
	counted = p->total - p->dropped;
	hs_fns_init(&fns);
	ret = fr->view ? hs_fns_add_keyed(&fns, p, 0, fr->view->sort, fr->view->nr_sort) :
			 hs_fns_add_keyed(&fns, p, 0, by_sym, 1);
	if (ret) {
		hs_fns_free(&fns);
		return ret;
	}
	if (fr->view && !(fr->view->nr_sort == 1 && fr->view->sort[0] == HS_SORT_SYM)) {
		hs_sort_title(fr->view, title, sizeof(title));
		for (i = 0; title[i]; i++)
			title[i] = title[i] >= 'a' && title[i] <= 'z' ? title[i] - 32 : title[i];
	}
	qsort(fns.fn, fns.nr, sizeof(*fns.fn), fr->by_total ? hs_top_by_total : hs_top_by_self);
	fprintf(f, "\n   %%SELF  %%TOTAL  %9s  %9s  %s\n", ns ? "SELF ms" : "SELF",
		ns ? "TOTAL ms" : "TOTAL", title);
	for (i = 0, shown = 0; i < fns.nr && shown < nr_fns; i++) {
		fn = &fns.fn[i];
		if (!(fr->by_total ? fn->total[0] : fn->self[0]))
			continue;
		fprintf(f, " %6.2f%% %6.2f%% ", counted ? 100.0 * fn->self[0] / counted : 0,
			counted ? 100.0 * fn->total[0] / counted : 0);
		if (ns)
			fprintf(f, "%10.3f %10.3f  %s\n", fn->self[0] / 1e6, fn->total[0] / 1e6,
				fn->name);
		else
			fprintf(f, "%10llu %10llu  %s\n", (unsigned long long)fn->self[0],
				(unsigned long long)fn->total[0], fn->name);
		shown++;
	}
	hs_fns_free(&fns);
	return hs_write_hot_stacks(f, p, nr_stacks, 0);
}

/* ---- the session ------------------------------------------------------ */

static volatile sig_atomic_t hs_top_stop;

static void hs_top_signal(int sig)
{
	(void)sig;
	hs_top_stop = 1;
}

struct hs_top {
	struct hs_top_opts o;
	int fd;
	struct hs_table_map m;		/* mapped: the stacks come from it */
	struct hs_ksyms_live ks;	/* the kernel's symbols */
	struct hs_usyms *u;
	struct hs_uwload *uw;	/* the session's unwind tables (--call-graph dwarf) */
	const char *source;
	double start;
	struct hs_profile p;
	struct hs_top_frame fr;
};

/* The kernel's symbols, loaded again after a module came or went. */
static int hs_top_ksyms(struct hs_top *t, int quiet)
{
	char err[512];
	int ret = hs_ksyms_refresh(&t->ks, 0, err, sizeof(err));

	if (ret && !quiet)
		fprintf(stderr, "hotstack: %s\n", err);
	return t->ks.loaded ? 0 : ret;
}

/* How the stacks will be read: the mmap with kallsyms when allowed, else read(). */
static void hs_top_source(struct hs_top *t)
{
	int ret = hs_table_map(t->fd, &t->m);

	if (ret) {
		t->source = "read() text, symbolized in the kernel (no CAP_PERFMON or "
			    "CAP_SYSLOG to map the table)";
		return;
	}
	ret = hs_top_ksyms(t, 0);
	if (ret) {
		hs_table_unmap(&t->m);
		t->source = ret == -EPERM ?
			    "read() text, symbolized in the kernel (kernel addresses hidden: "
			    "kernel.kptr_restrict)" :
			    "read() text, symbolized in the kernel (no kernel symbols)";
		return;
	}
	t->source = "the mmap, named from /proc/kallsyms";
	/* User frames are named in their process: the pid filter's, or each one's key. */
	if (t->o.s.abi.stacks & HOTSTACK_STACK_USER)
		t->u = hs_usyms_new();
}

/*
 * SNAPSHOT and take the generation it closed: its counters and its
 * profile. read() gives the active generation only, so there the text
 * and the counters are taken just before the SNAPSHOT. 0 or -errno.
 */
static int hs_top_refresh(struct hs_top *t)
{
	struct hs_top_frame *fr = &t->fr;
	struct hs_table_copy c;
	char *text;
	int ret;

	hs_profile_free(&t->p);
	fr->p = NULL;
	if (t->m.base) {
		hs_capture_maps(t->u, &t->m, t->o.s.abi.pid, 0, t->uw, 0);
		if (ioctl(t->fd, HOTSTACK_IOC_SNAPSHOT, 0))
			return -errno;
		ret = hs_session_stats(t->fd, HOTSTACK_STATS_READABLE, &fr->st);
		if (!ret)
			ret = hs_top_ksyms(t, 1);
		if (!ret)
			ret = hs_table_copy(&t->m, HS_GEN_READABLE, &c);
		if (ret)
			return ret;
		fr->st.total = c.total;		/* the counters of exactly that copy */
		fr->fill = c.fill;
		ret = hs_table_profile(&c, &t->ks.k, t->u, t->o.s.abi.pid, &t->p, t->o.s.profile_flags);
		hs_table_copy_free(&c);
	} else {
		text = hs_read_fd(t->fd, NULL);
		if (!text)
			return -errno;
		ret = hs_session_stats(t->fd, 0, &fr->st);
		if (!ret && ioctl(t->fd, HOTSTACK_IOC_SNAPSHOT, 0))
			ret = -errno;
		if (!ret)
			ret = hs_profile_parse(&t->p, text, NULL);
		free(text);
		if (!ret)
			ret = hs_profile_add_drops(&t->p, fr->st.total.drops);
	}
	if (ret)
		return ret;
	fr->elapsed = hs_now() - t->start;
	fr->interval = fr->st.elapsed_ns / 1e9;
	t->p.keys = t->o.s.abi.keys;
	t->p.event = fr->event;		/* off-CPU: counts in ns */
	ret = hs_profile_filter(&t->p, &t->o.view.filter);
	if (ret)
		return ret;
	fr->p = &t->p;
	return 0;
}

/* Wait until @until or a signal, in short steps. */
static void hs_top_sleep_until(double until)
{
	double left;

	while (!hs_top_stop && (left = until - hs_now()) > 0)
		poll(NULL, 0, left > 0.2 ? 200 : (int)(left * 1000) + 1);
}

static int hs_top_batch(struct hs_top *t)
{
	unsigned long i;
	double next = t->start;
	int ret;

	for (i = 0; !t->o.iterations || i < t->o.iterations; i++) {
		next += t->o.delay;
		hs_top_sleep_until(next);
		if (hs_top_stop)
			break;
		ret = hs_top_refresh(t);
		if (ret)
			return ret;
		if (i)
			putchar('\n');
		ret = hs_top_render(stdout, &t->fr, HS_TOP_BATCH_FNS, HS_TOP_BATCH_STACKS);
		if (!ret && fflush(stdout))
			ret = -errno;
		if (ret)
			return ret;
	}
	return 0;
}

void hs_top_draw(const struct hs_top_frame *fr, double delay)
{
	int rows = LINES, header = 7, avail, nr_fns, nr_stacks, y, x, n, title;
	char *buf = NULL, *line, *end, help[160];
	size_t len = 0;
	FILE *f;

	/* Header, blank, title, functions, blank, title, stacks, key help. */
	avail = rows - header - 4;
	nr_fns = avail > 0 ? (avail * 3 + 4) / 5 : 0;
	nr_stacks = avail > 0 ? avail - nr_fns : 0;
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	hs_top_render(f, fr, nr_fns, nr_stacks);
	fclose(f);
	erase();
	for (line = buf, y = 0; line && *line && y < rows - 1; line = end ? end + 1 : NULL, y++) {
		end = strchr(line, '\n');
		n = end ? end - line : (int)strlen(line);
		title = !strncmp(line, "   %SELF ", 9) || !strncmp(line, "  %STACK ", 9);
		if (title)
			attron(A_REVERSE);
		/* Cut at the width between characters, never inside one. */
		mvaddnstr(y, 0, line, hs_utf8_prefix(line, n, COLS, NULL));
		for (x = n; title && x < COLS; x++)
			addch(' ');
		if (title)
			attroff(A_REVERSE);
	}
	free(buf);
	snprintf(help, sizeof(help), " q quit  s/t sort by self/total  r refresh  "
		 "every %.1f s ", delay);
	attron(A_REVERSE);
	mvaddnstr(rows - 1, 0, help, COLS - 1);
	attroff(A_REVERSE);
	refresh();
}

static void hs_top_redraw(struct hs_top *t)
{
	t->fr.by_total = t->o.by_total;
	hs_top_draw(&t->fr, t->o.delay);
}

/* Full screen until q, Ctrl-C, SIGTERM or -n refreshes; ends the screen. */
static int hs_top_screen(struct hs_top *t)
{
	double next = t->start + t->o.delay, left;
	unsigned long done = 0;
	int ch, ret = 0, now;

	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	hs_top_redraw(t);
	while (!hs_top_stop) {
		left = next - hs_now();
		/* Short waits: a signal does not always end getch(). */
		timeout(left <= 0 ? 0 : left > 0.2 ? 200 : (int)(left * 1000) + 1);
		ch = getch();
		if (hs_top_stop)
			break;
		now = 0;
		switch (ch) {
		case 'q':
		case 'Q':
			hs_top_stop = 1;
			continue;
		case 's':
			t->o.by_total = 0;
			hs_top_redraw(t);
			break;
		case 't':
			t->o.by_total = 1;
			hs_top_redraw(t);
			break;
		case ' ':
		case 'r':
			now = 1;
			break;
		case KEY_RESIZE:
			hs_top_redraw(t);
			break;
		default:
			break;
		}
		if (!now && hs_now() < next)
			continue;
		ret = hs_top_refresh(t);
		if (ret)
			break;
		hs_top_redraw(t);
		next = hs_now() + t->o.delay;
		if (t->o.iterations && ++done >= t->o.iterations)
			break;
	}
	endwin();
	return ret;
}

int cmd_top(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hs_top_signal };
	struct hs_top t = { .fd = -1 };
	int ret;

	ret = hs_top_parse(argc, argv, &t.o);
	if (ret) {
		hs_view_free(&t.o.view);
		return ret < 0 ? 0 : ret;
	}
	if (!t.o.batch && !isatty(1)) {
		fprintf(stderr, "hotstack top: standard output is not a terminal: use -b for "
			"plain text (hotstack top -b -n 1)\n");
		return HS_EXIT_USAGE;
	}
	t.fd = hs_device_open();
	if (t.fd < 0)
		return 1;
	ret = 1;
	if (hs_session_configure(t.fd, &t.o.s, "top"))
		goto out_close;
	t.uw = hs_session_unwind(t.fd, &t.o.s, t.o.s.abi.pid, "top");
	hs_top_source(&t);
	t.fr.event = hs_config_event(&t.o.s);
	hs_config_rate(&t.o.s, t.fr.rate, sizeof(t.fr.rate));
	t.fr.table_entries = t.o.s.abi.table_entries;
	t.fr.source = t.source;
	t.fr.by_total = t.o.by_total;
	t.fr.view = &t.o.view;
	hs_session_stats(t.fd, 0, &t.fr.st);	/* nr_cpus, before the first refresh */

	/* Before initscr(): ncurses leaves handlers that are not the default. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hs_session_start(t.fd, "top"))
		goto out_unmap;
	t.start = hs_now();
	/* newterm(), not initscr(): that one exits on a terminal it does not know. */
	if (!t.o.batch && !newterm(NULL, stdout, stdin)) {
		fprintf(stderr, "hotstack top: cannot drive this terminal (TERM=%s): use -b\n",
			getenv("TERM") ? getenv("TERM") : "");
		ret = 1;
		goto out_stop;
	}
	ret = t.o.batch ? hs_top_batch(&t) : hs_top_screen(&t);
out_stop:
	hs_session_stop(t.fd);
	if (ret < 0) {
		fprintf(stderr, "hotstack top: cannot read the profile: %s\n", strerror(-ret));
		ret = 1;
	}
out_unmap:
	hs_uw_free(t.uw);
	hs_profile_free(&t.p);
	hs_usyms_free(t.u);
	hs_ksyms_live_free(&t.ks);
	hs_table_unmap(&t.m);
out_close:
	close(t.fd);
	hs_view_free(&t.o.view);
	return ret;
}
