// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's pushes (push.c) against tests/vm/hs_listen on this host's
 * loopback: the ingest URL and its escaping, Pyroscope's label rules,
 * what each answer leads to (2xx pushed, 5xx and no connection retried
 * with the same profile, 4xx rejected once), the bounded queue dropping
 * the oldest, a profile too big for it, a server that never answers
 * (the request timeout), and the multipart body carrying the profile's
 * bytes exactly. The agent's options (hs_agent_parse) and its config file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent.h"
#include "profile.h"
#include "push.h"
#include "util.h"

static char dir[256];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[65536];
static size_t loglen;

static void test_log(void *data, const char *fmt, ...)
{
	va_list ap;

	(void)data;
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	if (loglen < sizeof(logbuf) - 2)
		loglen += vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen - 1, fmt, ap);
	va_end(ap);
	if (loglen > sizeof(logbuf) - 2)
		loglen = sizeof(logbuf) - 2;
	logbuf[loglen++] = '\n';
	logbuf[loglen] = '\0';
	pthread_mutex_unlock(&log_lock);
}

static int logged(const char *s)
{
	int r;

	pthread_mutex_lock(&log_lock);
	r = strstr(logbuf, s) != NULL;
	pthread_mutex_unlock(&log_lock);
	return r;
}

/*
 * hs_listen in @sub of the scratch directory, answering @status (with the
 * body of file @body, NULL: its own), on @port (0: any).
 */
static pid_t listener_body(const char *sub, int port, const char *status, const char *body,
			   int *out_port)
{
	char d[512], p[32], path[600];
	pid_t pid;
	FILE *f;
	int i;

	snprintf(d, sizeof(d), "%s/%s", dir, sub);
	snprintf(p, sizeof(p), "%d", port);
	snprintf(path, sizeof(path), "%s/port", d);
	unlink(path);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (body)
			execl("./hs_listen", "hs_listen", "-d", d, "-p", p, "-s", status, "-b", body,
			      (char *)NULL);
		else
			execl("./hs_listen", "hs_listen", "-d", d, "-p", p, "-s", status,
			      (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500; i++) {
		f = fopen(path, "r");
		if (f && fscanf(f, "%d", out_port) == 1) {
			fclose(f);
			return pid;
		}
		if (f)
			fclose(f);
		usleep(10000);
	}
	fail_msg("hs_listen did not start");
	return -1;
}

static pid_t listener(const char *sub, int port, const char *status, int *out_port)
{
	return listener_body(sub, port, status, NULL, out_port);
}

static void listener_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Lines of @sub's log. */
static int requests(const char *sub)
{
	char path[600], line[9000];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/log", dir, sub);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* Line @n (from 1) of @sub's log, into @buf. */
static void request_line(const char *sub, int n, char *buf, size_t len)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/log", dir, sub);
	f = fopen(path, "r");
	assert_non_null(f);
	buf[0] = '\0';
	while (n-- > 0 && fgets(buf, len, f))
		;
	fclose(f);
}

static void wait_for(int (*cond)(void *), void *arg, const char *what)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (cond(arg))
			return;
		usleep(10000);
	}
	fail_msg("waited 10 s for %s", what);
}

static struct hs_push_config config(int port, char *url, size_t len)
{
	snprintf(url, len, "http://127.0.0.1:%d/", port);
	return (struct hs_push_config) {
		.url = url, .max_queue = 8, .max_bytes = 1 << 20, .timeout = 5,
		.backoff_min = 0.2, .backoff_max = 0.4, .log = test_log,
	};
}

static void *blob(size_t len, int seed)
{
	unsigned char *b = malloc(len);
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 7 + seed);
	return b;
}

static struct hs_push *cur;

static int failed_once(void *arg)
{
	struct hs_push_stats st;

	(void)arg;
	hs_push_get_stats(cur, &st);
	return st.failures >= 1 && st.down;
}

/* More failed attempts than *@arg. */
static int failed_more(void *arg)
{
	struct hs_push_stats st;

	hs_push_get_stats(cur, &st);
	return st.failures > *(uint64_t *)arg && st.down;
}

static int has_requests(void *arg)
{
	const char **w = arg;

	return requests(w[0]) >= atoi(w[1]);
}

static void test_url(void **state)
{
	char *u;

	(void)state;
	u = hs_push_url("http://h:4040//", "app{hostname=a.b,event=cpu-clock}", 100, 110, 99);
	assert_string_equal(u, "http://h:4040/ingest?name=app%7Bhostname%3Da.b%2Cevent%3Dcpu-clock"
			    "%7D&from=100&until=110&format=pprof&sampleRate=99&spyName=hotstack");
	free(u);
	u = hs_push_url("https://x/prefix", "a", 1, 2, 0);
	assert_string_equal(u, "https://x/prefix/ingest?name=a&from=1&until=2&format=pprof"
			    "&spyName=hotstack");
	free(u);
}

static void test_verdicts_and_labels(void **state)
{
	(void)state;
	assert_int_equal(hs_push_verdict(200), HS_PUSH_OK);
	assert_int_equal(hs_push_verdict(204), HS_PUSH_OK);
	/* OTLP/HTTP's retryable answers, and none; every other one refuses. */
	assert_int_equal(hs_push_verdict(0), HS_PUSH_RETRY);
	assert_int_equal(hs_push_verdict(429), HS_PUSH_RETRY);
	assert_int_equal(hs_push_verdict(502), HS_PUSH_RETRY);
	assert_int_equal(hs_push_verdict(503), HS_PUSH_RETRY);
	assert_int_equal(hs_push_verdict(504), HS_PUSH_RETRY);
	assert_int_equal(hs_push_verdict(500), HS_PUSH_REJECT);
	assert_int_equal(hs_push_verdict(501), HS_PUSH_REJECT);
	assert_int_equal(hs_push_verdict(408), HS_PUSH_REJECT);
	assert_int_equal(hs_push_verdict(400), HS_PUSH_REJECT);
	assert_int_equal(hs_push_verdict(404), HS_PUSH_REJECT);
	assert_int_equal(hs_push_verdict(301), HS_PUSH_REJECT);
	/* Retry-After: seconds or an HTTP date, any case, as curl hands the line. */
	assert_true(hs_retry_after("Retry-After: 120\r\n", 17, 0) == 120);
	assert_true(hs_retry_after("retry-after:7\r\n", 15, 0) == 7);
	assert_true(hs_retry_after("Retry-After: Thu, 01 Jan 1970 00:01:40 GMT\r\n", 44, 40) == 60);
	assert_true(hs_retry_after("Retry-After: Thu, 01 Jan 1970 00:01:40 GMT\r\n", 44, 500) == 0);
	assert_true(hs_retry_after("Retry-After: soon\r\n", 19, 0) == 0);
	assert_true(hs_retry_after("Content-Length: 5\r\n", 19, 0) == 0);
	assert_true(hs_label_key_ok("env", 3));
	assert_true(hs_label_key_ok("_x9", 3));
	assert_false(hs_label_key_ok("9x", 2));
	assert_false(hs_label_key_ok("__name__", 8));
	assert_false(hs_label_key_ok("a-b", 3));
	assert_false(hs_label_key_ok("", 0));
	assert_true(hs_label_value_ok("6.1.0-57-amd64", 14));
	assert_false(hs_label_value_ok("a,b", 3));
	assert_false(hs_label_value_ok("a}", 2));
	assert_false(hs_label_value_ok("a b", 3));
	assert_false(hs_label_value_ok("", 0));
	assert_true(hs_app_name_ok("hotstack.kernel/x-y_z"));
	assert_false(hs_app_name_ok("a{b}"));
	assert_false(hs_app_name_ok(""));
}

/* 200: each profile once, in order, its bytes the "profile" part's exactly. */
static void test_push_ok(void **state)
{
	struct hs_push_stats st;
	struct hs_push_config c;
	char url[64], line[9000], req[600], out[600], *got;
	void *b[3];
	size_t len;
	int port, i;
	pid_t l;

	(void)state;
	l = listener("ok", 0, "200", &port);
	c = config(port, url, sizeof(url));
	assert_int_equal(hs_push_start(&cur, &c), 0);
	for (i = 0; i < 3; i++) {
		b[i] = blob(1000 + i * 5000, i);
		hs_push_queue(cur, b[i], 1000 + i * 5000, "app{event=cpu-clock}", 99, 100 + i * 10,
			      110 + i * 10, i + 1);
	}
	hs_push_stop(cur, hs_now() + 10, &st);
	listener_stop(l);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.pushed, 3);
	assert_int_equal(st.dropped + st.rejected + st.failures + st.abandoned, 0);
	assert_int_equal(requests("ok"), 3);
	for (i = 0; i < 3; i++) {
		char want[256];

		request_line("ok", i + 1, line, sizeof(line));
		snprintf(want, sizeof(want), " POST /ingest?name=app%%7Bevent%%3Dcpu-clock%%7D&from=%d"
			 "&until=%d&format=pprof&sampleRate=99&spyName=hotstack 200\n", 100 + i * 10,
			 110 + i * 10);
		assert_non_null(strstr(line, want));
		snprintf(req, sizeof(req), "%s/ok/%04d.req", dir, i + 1);
		snprintf(out, sizeof(out), "%s/ok/%d.pb", dir, i + 1);
		snprintf(line, sizeof(line), "./hs_listen -x %s %s", req, out);
		assert_int_equal(system(line), 0);
		got = hs_read_file(out, &len);
		assert_non_null(got);
		assert_int_equal(len, 1000 + i * 5000);
		b[i] = blob(len, i);
		assert_memory_equal(got, b[i], len);
		free(b[i]);
		free(got);
	}
}

/*
 * OTLP/HTTP: POST /v1development/profiles with the body as it was queued
 * (application/x-protobuf), gzipped; a 503 answered sends the same body
 * again.
 */
static void test_push_otlp(void **state)
{
	const char *w[2] = { "otlp", "2" };
	struct hs_push_stats st;
	struct hs_push_config c;
	char url[64], line[9000], req[600], out[600], *got, *head;
	void *b;
	size_t len;
	int port, i;
	pid_t l;

	(void)state;
	l = listener("otlp", 0, "503", &port);
	c = config(port, url, sizeof(url));
	c.otlp = 1;
	assert_int_equal(hs_push_start(&cur, &c), 0);
	hs_push_queue(cur, blob(6000, 9), 6000, "app{event=cpu-clock}", 99, 100, 110, 1);
	wait_for(has_requests, w, "two attempts answered 503");
	listener_stop(l);
	l = listener("otlp", port, "200", &port);
	hs_push_stop(cur, hs_now() + 10, &st);
	listener_stop(l);
	assert_int_equal(st.pushed, 1);
	assert_true(st.failures >= 2);
	assert_int_equal(st.dropped + st.rejected + st.abandoned, 0);
	for (i = 1; i <= requests("otlp"); i++) {
		request_line("otlp", i, line, sizeof(line));
		assert_non_null(strstr(line, " POST /v1development/profiles "));
		snprintf(req, sizeof(req), "%s/otlp/%04d.req", dir, i);
		head = hs_read_file(req, &len);
		assert_non_null(head);
		assert_non_null(strcasestr(head, "\r\nContent-Type: application/x-protobuf\r\n"));
		/*
		 * Gzipped (hs_listen -x inflates it): the request smaller than the
		 * body queued, which is past a page (hs_gzip_write() stores less).
		 */
		assert_non_null(strcasestr(head, "\r\nContent-Encoding: gzip\r\n"));
		assert_true(len < 6000);
		free(head);
		snprintf(out, sizeof(out), "%s/otlp/%d.pb", dir, i);
		snprintf(line, sizeof(line), "./hs_listen -x %s %s", req, out);
		assert_int_equal(system(line), 0);
		got = hs_read_file(out, &len);
		assert_non_null(got);
		assert_int_equal(len, 6000);
		b = blob(len, 9);
		assert_memory_equal(got, b, len);
		free(b);
		free(got);
	}
	request_line("otlp", requests("otlp"), line, sizeof(line));
	assert_non_null(strstr(line, " 200\n"));
}

/*
 * An OTLP export taken (200) but its answer a partial success: one
 * profile rejected (refused, logged with the message, not sent again);
 * none rejected but a message (pushed, the warning logged). The answers
 * encoded here by hand: ExportProfilesServiceResponse { partial_success
 * (1) { rejected_profiles (1), error_message (2) } }.
 */
static void test_push_otlp_partial(void **state)
{
	static const unsigned char rejected[] = { 0x0a, 0x0f, 0x08, 0x01, 0x12, 0x0b,
		'b', 'a', 'd', ' ', 'p', 'r', 'o', 'f', 'i', 'l', 'e' };
	static const unsigned char warned[] = { 0x0a, 0x0b, 0x12, 0x09,
		's', 'l', 'o', 'w', ' ', 'd', 'o', 'w', 'n' };
	const unsigned char *body[2] = { rejected, warned };
	size_t body_len[2] = { sizeof(rejected), sizeof(warned) };
	struct hs_push_stats st;
	struct hs_push_config c;
	char url[64], path[600];
	int port, i;
	pid_t l;
	FILE *f;

	(void)state;
	/* make check builds with OTLP (tests/deps.sh fetches its protos). */
	assert_true(hs_otlp_built());
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/answer%d", dir, i);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(body[i], 1, body_len[i], f), body_len[i]);
		fclose(f);
		l = listener_body(i ? "otlp-warned" : "otlp-rejected", 0, "200", path, &port);
		c = config(port, url, sizeof(url));
		c.otlp = 1;
		assert_int_equal(hs_push_start(&cur, &c), 0);
		hs_push_queue(cur, blob(500, 3), 500, "app", 99, 100, 110, 7);
		hs_push_stop(cur, hs_now() + 10, &st);
		listener_stop(l);
		assert_int_equal(requests(i ? "otlp-warned" : "otlp-rejected"), 1);
		assert_int_equal(st.pushed, i);
		assert_int_equal(st.rejected, !i);
		assert_int_equal(st.failures + st.dropped + st.abandoned, 0);
	}
	assert_true(logged("push: the server took profile 7 [100, 110) and rejected it (OTLP "
			   "partial success: 1 of 1 rejected, bad profile): not sent again"));
	assert_true(logged("push: the server took profile 7 [100, 110) with a warning: slow down"));
}

/* 503, then no server at all, then 200: the same profile until it is taken. */
static void test_push_retry(void **state)
{
	const char *w[2] = { "retry", "2" };
	struct hs_push_stats st;
	uint64_t answered;
	struct hs_push_config c;
	char url[64], line[9000];
	int port, port2;
	pid_t l;

	(void)state;
	loglen = 0;
	l = listener("retry", 0, "503", &port);
	c = config(port, url, sizeof(url));
	assert_int_equal(hs_push_start(&cur, &c), 0);
	hs_push_queue(cur, blob(500, 1), 500, "app", 0, 10, 20, 7);
	wait_for(has_requests, w, "two attempts answered 503");
	listener_stop(l);
	assert_true(logged("push: cannot push profile 7 [10, 20)"));
	assert_true(logged("HTTP 503: Service Unavailable; retrying"));
	/* More failures than answered requests: attempts without a server. */
	answered = requests("retry");
	wait_for(failed_more, &answered, "an attempt without a server");
	l = listener("retry", port, "200", &port2);
	assert_int_equal(port2, port);
	hs_push_stop(cur, hs_now() + 10, &st);
	listener_stop(l);
	assert_int_equal(st.pushed, 1);
	assert_true(st.failures > answered);
	assert_int_equal(st.rejected + st.dropped + st.abandoned, 0);
	assert_true(logged("push: the server answers again (HTTP 200)"));
	/* Every attempt was the same profile's. */
	request_line("retry", requests("retry"), line, sizeof(line));
	assert_non_null(strstr(line, "&from=10&until=20&"));
	assert_non_null(strstr(line, " 200\n"));
	request_line("retry", 1, line, sizeof(line));
	assert_non_null(strstr(line, "&from=10&until=20&"));
	assert_non_null(strstr(line, " 503\n"));
}

/* 4xx: said, and each profile sent once only (to Pyroscope and by OTLP). */
static void test_push_rejected(void **state)
{
	const char *sub[2] = { "bad", "bad-otlp" };
	struct hs_push_stats st;
	struct hs_push_config c;
	char url[64];
	int port, k;
	pid_t l;

	(void)state;
	/* Pyroscope's ingest, then OTLP/HTTP: the same sender. */
	for (k = 0; k < 2; k++) {
		loglen = 0;
		l = listener(sub[k], 0, "400", &port);
		c = config(port, url, sizeof(url));
		c.otlp = k;
		assert_int_equal(hs_push_start(&cur, &c), 0);
		hs_push_queue(cur, blob(100, 1), 100, "app", 0, 10, 20, 1);
		hs_push_queue(cur, blob(100, 2), 100, "app", 0, 20, 30, 2);
		hs_push_stop(cur, hs_now() + 10, &st);
		listener_stop(l);
		assert_int_equal(st.rejected, 2);
		assert_int_equal(st.pushed + st.failures + st.abandoned, 0);
		assert_int_equal(requests(sub[k]), 2);
		assert_true(logged("push: the server refused profile 2 [20, 30) with HTTP 400: "
				   "Bad Request: not sent again"));
	}
}

/*
 * The sender (cur) with a queue of @max_queue, to a port nobody listens
 * on: the one @sub's listener had, after it ended. Returns the port.
 */
static int dead_sender(const char *sub, size_t max_queue, char *url, size_t len)
{
	struct hs_push_config c;
	int port;

	listener_stop(listener(sub, 0, "200", &port));
	c = config(port, url, len);
	c.max_queue = max_queue;
	c.backoff_min = c.backoff_max = 0.5;
	assert_int_equal(hs_push_start(&cur, &c), 0);
	return port;
}

/* Full: the oldest waiting goes, counted and said; the newest are pushed in order. */
static void test_push_queue_bound(void **state)
{
	struct hs_push_stats st;
	char url[64], line[9000], want[64];
	int port, i;
	pid_t l;

	(void)state;
	loglen = 0;
	port = dead_sender("full", 3, url, sizeof(url));
	hs_push_queue(cur, blob(100, 1), 100, "app", 0, 10, 20, 1);
	wait_for(failed_once, NULL, "an attempt without a server");
	for (i = 2; i <= 5; i++)
		hs_push_queue(cur, blob(100, i), 100, "app", 0, i * 10, i * 10 + 10, i);
	hs_push_get_stats(cur, &st);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.waiting, 3);
	assert_int_equal(st.bytes, 300);
	assert_true(logged("queue full (3 intervals, 1048576 bytes at most): dropped the oldest, "
			   "profile 1 [10, 20)"));
	assert_true(logged("dropped the oldest, profile 2 [20, 30)"));
	/* Bigger than the bytes it may hold: dropped at once. */
	hs_push_queue(cur, blob(2 << 20, 9), 2 << 20, "app", 0, 60, 70, 6);
	assert_true(logged("profile 6 is 2097152 bytes, more than the queue holds: dropped"));
	l = listener("full", port, "200", &i);
	hs_push_stop(cur, hs_now() + 10, &st);
	listener_stop(l);
	assert_int_equal(st.queued, 6);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.pushed, 3);
	assert_int_equal(requests("full"), 3);
	for (i = 0; i < 3; i++) {
		request_line("full", i + 1, line, sizeof(line));
		snprintf(want, sizeof(want), "&from=%d&until=%d&", (i + 3) * 10, (i + 3) * 10 + 10);
		assert_non_null(strstr(line, want));
	}
}

/*
 * An interval of several requests (--group-by to Pyroscope) is one entry
 * of the queue: the bound counts intervals, the oldest goes whole, the
 * others' requests are sent in order.
 */
static void test_push_queue_intervals(void **state)
{
	static const char *const names[] = { "app{g=a}", "app{g=b}", "app{g=c}" };
	struct hs_push_part part[3];
	struct hs_push_stats st;
	char url[64], line[9000], want[64];
	int port, i, k;
	pid_t l;

	(void)state;
	loglen = 0;
	port = dead_sender("intervals", 2, url, sizeof(url));
	/* Intervals 1, 2 and 3 of 3, 2 and 2 requests; the queue holds two. */
	for (i = 1; i <= 3; i++) {
		for (k = 0; k < (i == 1 ? 3 : 2); k++) {
			part[k].data = blob(100 + k, i);
			part[k].len = 100 + k;
			part[k].name = (char *)names[k];
			part[k].profiles = 1;
		}
		hs_push_queue_parts(cur, part, k, 0, i * 10, i * 10 + 10, i);
		if (i == 1)
			wait_for(failed_once, NULL, "an attempt without a server");
	}
	hs_push_get_stats(cur, &st);
	assert_int_equal(st.queued, 7);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.waiting, 2);
	assert_int_equal(st.bytes, 2 * (100 + 101));
	assert_true(logged("queue full (2 intervals, 1048576 bytes at most): dropped the oldest, "
			   "profile 1 [10, 20) (all its requests left)"));
	l = listener("intervals", port, "200", &i);
	hs_push_stop(cur, hs_now() + 10, &st);
	listener_stop(l);
	assert_int_equal(st.pushed, 4);
	assert_int_equal(st.dropped + st.abandoned + st.rejected, 3);
	assert_int_equal(requests("intervals"), 4);
	for (i = 0; i < 4; i++) {
		request_line("intervals", i + 1, line, sizeof(line));
		snprintf(want, sizeof(want), "&from=%d&until=%d&", (i / 2 + 2) * 10,
			 (i / 2 + 2) * 10 + 10);
		assert_non_null(strstr(line, want));
		/* app{g=a}, then app{g=b}, percent-encoded. */
		assert_non_null(strstr(line, i % 2 ? "g%3Db" : "g%3Da"));
	}
}

/* A server that takes the request and never answers: the timeout, then given up at stop. */
static void test_push_hang(void **state)
{
	const char *w[2] = { "hang", "1" };
	struct hs_push_stats st;
	struct hs_push_config c;
	char url[64];
	double t0;
	int port;
	pid_t l;

	(void)state;
	loglen = 0;
	l = listener("hang", 0, "hang", &port);
	c = config(port, url, sizeof(url));
	c.timeout = 1;
	c.backoff_min = c.backoff_max = 30;
	assert_int_equal(hs_push_start(&cur, &c), 0);
	t0 = hs_now();
	hs_push_queue(cur, blob(100, 1), 100, "app", 0, 10, 20, 1);
	wait_for(has_requests, w, "the request kept");
	wait_for(failed_once, NULL, "the request timed out");
	assert_true(hs_now() - t0 < 5);
	assert_true(logged("Timeout was reached") || logged("timed out"));
	t0 = hs_now();
	hs_push_stop(cur, hs_now() + 0.5, &st);
	assert_true(hs_now() - t0 < 3);
	listener_stop(l);
	assert_int_equal(st.abandoned, 1);
	assert_int_equal(st.pushed, 0);
}

/* hotstack agent's options, and a config file's lines before the command line's. */
static void test_agent_options(void **state)
{
	struct hs_agent_opts o;
	char path[600];
	FILE *f;
	char *argv1[] = { "agent", "--push", "http://127.0.0.1:4040", "--label", "env=prod",
			  "-i", "5", "-F", "49", NULL };
	char *argv2[] = { "agent", "--config", path, "--interval", "30", NULL };
	char *argv3[] = { "agent", "--persistent", "-F", "49", "--output-dir", "/tmp/x", NULL };
	char *argv4[] = { "agent", "-i", "5", NULL };
	char *argv5[] = { "agent", "--push", "ftp://x", NULL };
	char *argv6[] = { "agent", "--output-dir", "/tmp/x", "--group-by", "container", NULL };
	char *argv7[] = { "agent", "--output-dir", "/tmp/x", "--group-by", "pod", NULL };
	char *argv8[] = { "agent", "--persistent", "--output-dir", "/tmp/x", "--group-by", "unit",
			  NULL };
	char *argv9[] = { "agent", "--push", "otlp+http://127.0.0.1:4318", NULL };
	char *argv10[] = { "agent", "--push", "otlp+ftp://x", NULL };

	(void)state;
	assert_int_equal(hs_agent_parse(9, argv1, &o), 0);
	assert_string_equal(o.push, "http://127.0.0.1:4040");
	assert_int_equal(o.nr_labels, 1);
	assert_string_equal(o.labels[0], "env=prod");
	assert_int_equal(o.interval, 5);
	assert_int_equal(o.s.abi.sample, 49);
	assert_string_equal(o.s.event, "cpu-clock");
	assert_int_equal(o.s.abi.table_entries, 4096);
	assert_int_equal(o.s.abi.arena_frames, 65536);
	/* 49 Hz for 5 s: 245 samples a CPU an interval, 327 entries to hold them. */
	assert_int_equal(o.s.abi.cpu_entries, 512);
	hs_agent_opts_free(&o);

	snprintf(path, sizeof(path), "%s/agent.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# the fleet's\n\npush http://127.0.0.1:4040\nlabel = env=prod\n"
		"  label dc=par1  \ninterval 10\nevent cpu-clock\nfreq 19\nkeep 5\n"
		"output-dir /tmp/hs\r\n");
	fclose(f);
	assert_int_equal(hs_agent_parse(5, argv2, &o), 0);
	assert_string_equal(o.push, "http://127.0.0.1:4040");
	assert_int_equal(o.nr_labels, 2);
	assert_string_equal(o.labels[0], "env=prod");
	assert_string_equal(o.labels[1], "dc=par1");
	assert_int_equal(o.interval, 30);	/* the command line wins */
	assert_int_equal(o.s.abi.sample, 19);
	assert_int_equal(o.s.abi.cpu_entries, 1024);	/* 570 samples, 760 entries */
	assert_int_equal(o.keep, 5);
	assert_string_equal(o.output_dir, "/tmp/hs");
	hs_agent_opts_free(&o);

	assert_int_equal(hs_agent_parse(6, argv3, &o), 2);
	hs_agent_opts_free(&o);
	assert_int_equal(hs_agent_parse(3, argv4, &o), 2);
	hs_agent_opts_free(&o);
	assert_int_equal(hs_agent_parse(3, argv5, &o), 2);
	hs_agent_opts_free(&o);
	/* --group-by: the session keyed by cgroup; a kind it has not; not the persistent one's. */
	assert_int_equal(hs_agent_parse(5, argv6, &o), 0);
	assert_int_equal(o.group_by, HS_GROUP_CONTAINER);
	assert_int_equal(o.s.abi.keys, HOTSTACK_KEY_CGROUP);
	hs_agent_opts_free(&o);
	assert_int_equal(hs_agent_parse(5, argv7, &o), 2);
	hs_agent_opts_free(&o);
	assert_int_equal(hs_agent_parse(6, argv8, &o), 2);
	hs_agent_opts_free(&o);
	/* OTLP: the URL without "otlp+". */
	assert_int_equal(hs_agent_parse(3, argv9, &o), 0);
	assert_int_equal(o.otlp, 1);
	assert_string_equal(o.push, "http://127.0.0.1:4318");
	hs_agent_opts_free(&o);
	assert_int_equal(hs_agent_parse(3, argv10, &o), 2);
	hs_agent_opts_free(&o);
	f = fopen(path, "w");
	fprintf(f, "config /etc/other\n");
	fclose(f);
	assert_int_equal(hs_agent_parse(5, argv2, &o), 2);
	hs_agent_opts_free(&o);
}

/* The agent's count tables hold a CPU's samples of an interval: 64 to 1024 entries. */
static void test_agent_cpu_entries(void **state)
{
	static const struct {
		const char *args[8];
		uint32_t cpu_entries;
	} sizes[] = {
		{ { NULL }, 1024 },				/* 99 Hz for 10 s */
		{ { "-i", "1", NULL }, 256 },			/* 99 samples: 132 entries */
		{ { "-i", "1", "-F", "10", NULL }, 64 },
		{ { "-i", "60", "-F", "1000", NULL }, 1024 },
		{ { "-c", "1000000", NULL }, 1024 },		/* no rate known */
		{ { "--off-cpu", NULL }, 1024 },
		{ { "--cpu-entries", "128", NULL }, 128 },
		{ { "--cpu-entries", "8192", NULL }, 8192 },
		{ { "--table-entries", "256", NULL }, 256 },	/* no more than the store */
	};
	struct hs_agent_opts o;
	char *argv[16];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		argv[0] = "agent";
		argv[1] = "--output-dir";
		argv[2] = "/tmp/x";
		for (n = 0; sizes[i].args[n]; n++)
			argv[3 + n] = (char *)sizes[i].args[n];
		argv[3 + n] = NULL;
		assert_int_equal(hs_agent_parse(3 + n, argv, &o), 0);
		if (o.s.abi.cpu_entries != sizes[i].cpu_entries)
			fail_msg("agent %s ...: %u count entries, not %u", argv[3] ? argv[3] : "",
				 o.s.abi.cpu_entries, sizes[i].cpu_entries);
		hs_agent_opts_free(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_verdicts_and_labels),
		cmocka_unit_test(test_push_ok),
		cmocka_unit_test(test_push_otlp),
		cmocka_unit_test(test_push_otlp_partial),
		cmocka_unit_test(test_push_retry),
		cmocka_unit_test(test_push_rejected),
		cmocka_unit_test(test_push_queue_bound),
		cmocka_unit_test(test_push_queue_intervals),
		cmocka_unit_test(test_push_hang),
		cmocka_unit_test(test_agent_options),
		cmocka_unit_test(test_agent_cpu_entries),
	};
	char err[256];
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/hs_test_push.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	if (hs_push_init(err, sizeof(err))) {
		printf("not ok - hs_push_init: %s\n", err);
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	hs_push_exit();
	if (!ret) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			ret = 1;
	}
	return ret;
}
