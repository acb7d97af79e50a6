/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack tool: profiles pushed to a server that speaks Pyroscope's
 * HTTP ingest API (Pyroscope, Grafana Alloy's pyroscope.receive_http):
 *
 *   POST URL/ingest?name=APP{k=v,...}&from=UNIX&until=UNIX&format=pprof
 *        &sampleRate=HZ&spyName=hotstack
 *
 * with the gzipped pprof as the "profile" part of a multipart/form-data
 * body (libcurl); or OTLP/HTTP's (an OpenTelemetry Collector, Pyroscope's
 * OTLP receiver): POST URL/v1development/profiles, the protobuf
 * ExportProfilesServiceRequest as the body (Content-Type:
 * application/x-protobuf). A sender thread of its own does the pushing, so that
 * the caller (the agent's snapshot loop) never waits on the network: the
 * caller queues an interval's profiles (one request or several) and
 * goes on. The queue is bounded (intervals and bytes): when full, the
 * oldest interval waiting is dropped whole and its requests counted. A server that cannot be reached, times out or answers 5xx
 * (or 408, 429) gets the same profile again after a backoff that doubles
 * up to a limit; a 2xx is success; any other answer (4xx, 3xx) rejects
 * that profile, which is logged with the server's first words and not
 * sent again. Memory stays bounded whatever the server does: the queue's
 * bounds, a request timeout, and at most HS_PUSH_BODY_KEPT bytes of an
 * answer kept (the rest is read and thrown away).
 */
#ifndef HOTSTACK_PUSH_H
#define HOTSTACK_PUSH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Bytes of a server's answer kept for the log. */
#define HS_PUSH_BODY_KEPT	256

/* Where and how to push. */
struct hs_push_config {
	const char *url;		/* the server: http://host:4040, a path prefix allowed */
	int otlp;			/* OTLP/HTTP: POST URL/v1development/profiles, the body as is */
	const char *tenant;		/* X-Scope-OrgID header; NULL: none */
	size_t max_queue;		/* intervals waiting at most (2 or more) */
	size_t max_bytes;		/* their bytes at most */
	double timeout;			/* seconds one request may take, connecting included */
	double backoff_min, backoff_max;	/* seconds between attempts after a failure */
	/* Where the sender says what happened (one line, no newline); thread-safe. */
	void (*log)(void *data, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void *log_data;
};

/* What the sender did so far: requests, but @waiting. */
struct hs_push_stats {
	uint64_t queued;	/* requests queued by the caller */
	uint64_t pushed;	/* accepted by the server (2xx) */
	uint64_t dropped;	/* dropped for room while waiting (the oldest first) */
	uint64_t rejected;	/* refused by the server (4xx, 3xx): not sent again */
	uint64_t failures;	/* attempts that failed and were retried (5xx, no connection) */
	uint64_t abandoned;	/* still waiting when the sender stopped */
	size_t waiting;		/* intervals in the queue now (the one being sent included) */
	size_t bytes;		/* their requests' bytes not yet sent */
	int down;		/* the last attempt failed: the server is being retried */
};

struct hs_push;

/*
 * Load libcurl and initialize it, while there is one thread: 0, or -errno
 * with the reason in @err. hs_push_exit() when every sender has stopped.
 */
int hs_push_init(char *err, size_t errlen);
void hs_push_exit(void);

/*
 * Start a sender for @cfg (copied; its strings must outlive the sender).
 * Call hs_push_init() before. 0 or -errno.
 */
int hs_push_start(struct hs_push **out, const struct hs_push_config *cfg);

/*
 * Queue the profile @data[0..len) (malloc'd: the sender frees it) of the
 * interval [@from, @until) (UNIX seconds), for the series @name
 * (APP{k=v,...}, copied) sampled at @rate Hz (0: not said); @id names it
 * in the log. Never waits on the network. A profile larger than the byte
 * bound is dropped.
 */
void hs_push_queue(struct hs_push *p, void *data, size_t len, const char *name,
		   unsigned int rate, int64_t from, int64_t until, uint64_t id);

/* One request of an interval: its body, its series' name, how many profiles it holds. */
struct hs_push_part {
	void *data;		/* malloc'd: the sender frees it */
	size_t len;
	char *name;		/* APP{k=v,...}, copied */
	size_t profiles;	/* OTLP: the profiles in the request (its partial success's "all") */
};

/*
 * The same for the interval's @nr requests @part, sent in order: one
 * entry of the queue, dropped whole for room (its first requests may be
 * sent already).
 */
void hs_push_queue_parts(struct hs_push *p, struct hs_push_part *part, size_t nr,
			 unsigned int rate, int64_t from, int64_t until, uint64_t id);

void hs_push_get_stats(struct hs_push *p, struct hs_push_stats *st);

/*
 * Stop: send what is queued until the queue is empty or @deadline
 * (hs_now() seconds) passes (failed attempts are retried meanwhile, the
 * backoff cut short by the deadline), then end the sender and free it.
 * What was still waiting is counted in *@st's abandoned (may be NULL).
 */
void hs_push_stop(struct hs_push *p, double deadline, struct hs_push_stats *st);

/*
 * The ingest URL of one profile, malloc'd: @base without its trailing
 * slashes, "/ingest?name=" and @name percent-encoded, from, until,
 * format=pprof, sampleRate (when @rate), spyName=hotstack. NULL: no memory.
 */
char *hs_push_url(const char *base, const char *name, int64_t from, int64_t until,
		  unsigned int rate);

/* The OTLP profiles URL, malloc'd: @base without its trailing slashes, "/v1development/profiles". */
char *hs_push_otlp_url(const char *base);

/* What to do after an answer: HS_PUSH_OK, _RETRY or _REJECT. @status 0: no answer. */
enum { HS_PUSH_OK, HS_PUSH_RETRY, HS_PUSH_REJECT };
int hs_push_verdict(long status);

/*
 * The seconds a response header line (@len bytes, as curl gives it) asks
 * to wait when it is "Retry-After: SECONDS" or "Retry-After: HTTP-DATE"
 * (from @now); 0 for any other line.
 */
double hs_retry_after(const char *line, size_t len, time_t now);

/*
 * Pyroscope's label rules, the strictest of its versions: a key is
 * [A-Za-z_][A-Za-z0-9_]*, not starting with "__" (reserved), at most 64
 * bytes; a value is 1-256 printable ASCII bytes without ',', '{', '}',
 * '=', '"', space or backslash (the name's own syntax). An application
 * name: 1-128 of [A-Za-z0-9_.-/]. 1 if valid.
 */
int hs_label_key_ok(const char *k, size_t len);
int hs_label_value_ok(const char *v, size_t len);
int hs_app_name_ok(const char *s);

#endif
