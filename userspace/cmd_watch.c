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

/* What happened, as watch prints it after "HH:MM:SS.mmm session ID ". */
void hs_format_event(const struct hs_event *ev, char *buf, size_t len)
{
	size_t n = 0;

	switch (ev->event) {
	case HOTSTACK_EV_STARTED:
		n += snprintf(buf + n, len - n, "started");
		break;
	case HOTSTACK_EV_STOPPED:
		n += snprintf(buf + n, len - n, "stopped");
		break;
	case HOTSTACK_EV_CLOSED:
		n += snprintf(buf + n, len - n, "closed");
		break;
	case HOTSTACK_EV_TABLE_FILL:
		n += snprintf(buf + n, len - n, "table %llu%% full on CPU %d",
			      (unsigned long long)ev->value, ev->cpu);
		break;
	case HOTSTACK_EV_THROTTLED:
		n += snprintf(buf + n, len - n, "throttled by perf on CPU %d "
			      "(kernel.perf_event_max_sample_rate)", ev->cpu);
		break;
	case HOTSTACK_EV_DROP:
		n += snprintf(buf + n, len - n, "first drop: %s on CPU %d",
			      hs_drop_name(ev->value), ev->cpu);
		break;
	case HOTSTACK_EV_CPU_MISSED:
		n += snprintf(buf + n, len - n, "CPU %d came online without a table: not sampled "
			      "(configure again to include it)", ev->cpu);
		break;
	case HOTSTACK_EV_CPU_FAILED:
		n += snprintf(buf + n, len - n, "CPU %d not sampled: its event failed (%s)",
			      ev->cpu, strerror((int)ev->value));
		break;
	default:
		n += snprintf(buf + n, len - n, "event %u value %llu", ev->event,
			      (unsigned long long)ev->value);
	}
	if (ev->suppressed && n < len)
		snprintf(buf + n, len - n, " (%llu earlier events suppressed by the rate limit)",
			 (unsigned long long)ev->suppressed);
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
