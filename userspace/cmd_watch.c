// SPDX-License-Identifier: GPL-2.0
/* hotstack watch: print the module's events as they come. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "commands.h"
#include "events.h"
#include "netlink.h"
#include "options.h"

static volatile int hs_watch_stop;

static void hs_watch_signal(int sig)
{
	(void)sig;
	hs_watch_stop = 1;
}

static void hs_watch_cb(const struct hs_event *ev, void *data)
{
	char line[256], stamp[16];
	struct timeval tv;
	struct tm tm;

	(void)data;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	hs_format_event(ev, line, sizeof(line));
	printf("%s.%03ld session %u %s\n", stamp, (long)tv.tv_usec / 1000, ev->id, line);
	fflush(stdout);
}

int cmd_watch(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = hs_watch_signal };
	static const struct hs_option *const tables[] = { NULL };
	struct hs_args a;
	struct hs_genl g;
	char *value;
	int ret, id;

	if (hs_args_init(&a, "watch", "", "Print the module's events as they come, one line "
			 "each (Ctrl-C ends).", tables, 0, argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END && id != HS_ARGS_EXIT)
		;
	if (id == HS_ARGS_END)
		hs_args_no_operands(&a);
	hs_args_free(&a);
	if (id == HS_ARGS_EXIT || a.status)
		return a.status;
	if (hs_genl_open(&g))
		return 1;
	/* No SA_RESTART: Ctrl-C interrupts the receive and ends the loop. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = hs_genl_subscribe(&g);
	if (!ret) {
		fprintf(stderr, "hotstack: watching the module's events; Ctrl-C ends\n");
		ret = hs_genl_watch(&g, hs_watch_cb, NULL, &hs_watch_stop);
	}
	hs_genl_close(&g);
	if (ret == -EPERM) {
		fprintf(stderr, "hotstack watch: joining the module's events needs CAP_SYS_ADMIN "
			"(the only rule generic netlink offers for a group): run as root\n");
		return 1;
	}
	if (ret) {
		fprintf(stderr, "hotstack watch: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
