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
	struct hs_genl g;
	int ret;

	if (argc > 1) {
		fprintf(stderr, "hotstack watch: unexpected argument '%s'\n"
			"usage: hotstack watch\n", argv[1]);
		return HS_EXIT_USAGE;
	}
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
