// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: pushing profiles to a Pyroscope ingest API (push.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>

#include "profile.h"
#include "push.h"
#include "util.h"

/*
 * libcurl, loaded by hs_push_init() when the agent is to push: every other
 * command starts without its thirty libraries (TLS, Kerberos, LDAP...),
 * which cost more than the command itself on a slow machine. The types
 * are <curl/curl.h>'s; the library is the one it was built against.
 */
#define HS_CURL_SONAME "libcurl.so.4"
#define HS_CURL_FUNCS(F)							\
	F(global_init) F(global_cleanup) F(easy_init) F(easy_cleanup)		\
	F(easy_reset) F(easy_setopt) F(easy_perform) F(easy_getinfo)		\
	F(easy_strerror) F(slist_append) F(slist_free_all) F(mime_init)		\
	F(mime_free) F(mime_addpart) F(mime_name) F(mime_filename)		\
	F(mime_type) F(mime_data_cb)
#define HS_CURL_FIELD(name) typeof(curl_##name) *name;
static struct {
	HS_CURL_FUNCS(HS_CURL_FIELD)
} hs_curl;

int hs_push_init(char *err, size_t errlen)
{
#define HS_CURL_SYM(name) { "curl_" #name, (void **)&hs_curl.name },
	static const struct {
		const char *name;
		void **fn;
	} syms[] = { HS_CURL_FUNCS(HS_CURL_SYM) };
	void *lib = dlopen(HS_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!lib) {
		snprintf(err, errlen, "cannot load libcurl: %s (Debian's package libcurl4)",
			 dlerror());
		return -ENOENT;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].fn = dlsym(lib, syms[i].name);
		if (!*syms[i].fn) {
			snprintf(err, errlen, "%s has no %s: libcurl 7.56 or later is needed",
				 HS_CURL_SONAME, syms[i].name);
			dlclose(lib);
			return -ENOENT;
		}
	}
	if (hs_curl.global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "cannot initialize libcurl");
		dlclose(lib);
		return -ENOMEM;
	}
	return 0;
}

void hs_push_exit(void)
{
	hs_curl.global_cleanup();
}

/*
 * One interval waiting: its requests @part[@sent..@nr) still to send
 * (those before are sent), @len bytes of them.
 */
struct hs_push_item {
	struct hs_push_item *next;
	struct hs_push_part *part;
	size_t nr, sent;
	size_t len;
	unsigned int rate;
	int64_t from, until;
	uint64_t id;
};

/*
 * The queue is the caller's and the sender's: @lock protects every field
 * below it; @wake tells the sender that something was queued or that it
 * must stop. The item being sent stays at the head, marked @inflight, so
 * that dropping for room takes the next one instead of freeing it.
 */
struct hs_push {
	struct hs_push_config cfg;
	pthread_t thread;
	CURL *curl;			/* the sender's alone */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct hs_push_item *head, *tail;
	int inflight;
	int stopping;			/* drain until empty or @deadline, then end */
	double deadline;
	struct hs_push_stats st;
};

int hs_push_verdict(long status)
{
	if (status >= 200 && status < 300)
		return HS_PUSH_OK;
	/*
	 * No answer, or what OTLP/HTTP calls retryable: "later" (429), a
	 * gateway's failure or an unavailable server (502, 503, 504). Any
	 * other answer says the profile itself is refused.
	 */
	if (!status || status == 429 || status == 502 || status == 503 || status == 504)
		return HS_PUSH_RETRY;
	return HS_PUSH_REJECT;
}

double hs_retry_after(const char *line, size_t len, time_t now)
{
	static const char name[] = "retry-after:";
	char v[64], *end;
	struct tm tm;
	size_t i, n;
	double s;

	if (len < sizeof(name) - 1 || strncasecmp(line, name, sizeof(name) - 1))
		return 0;
	for (i = sizeof(name) - 1; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	for (n = 0; i < len && n < sizeof(v) - 1 && line[i] != '\r' && line[i] != '\n'; i++)
		v[n++] = line[i];
	v[n] = '\0';
	/* Seconds, or an HTTP date (RFC 9110): how long from @now. */
	s = strtod(v, &end);
	if (end != v && !*end && s >= 0)
		return s;
	memset(&tm, 0, sizeof(tm));
	end = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end || *end)
		return 0;
	s = difftime(timegm(&tm), now);
	return s > 0 ? s : 0;
}

int hs_label_key_ok(const char *k, size_t len)
{
	size_t i;

	if (!len || len > 64 || (k[0] >= '0' && k[0] <= '9') || (len > 1 && !strncmp(k, "__", 2)))
		return 0;
	for (i = 0; i < len; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
		      (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return 0;
	return 1;
}

int hs_label_value_ok(const char *v, size_t len)
{
	size_t i;

	if (!len || len > 256)
		return 0;
	for (i = 0; i < len; i++)
		if (v[i] <= ' ' || v[i] >= 127 || strchr(",{}=\"\\", v[i]))
			return 0;
	return 1;
}

int hs_app_name_ok(const char *s)
{
	size_t i, len = strlen(s);

	if (!len || len > 128)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.-/", s[i])))
			return 0;
	return 1;
}

/* @s percent-encoded (RFC 3986: unreserved characters as they are) onto @f. */
static void hs_url_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

char *hs_push_url(const char *base, const char *name, int64_t from, int64_t until,
		  unsigned int rate)
{
	size_t n = strlen(base), len;
	char *buf = NULL;
	FILE *f;

	while (n && base[n - 1] == '/')
		n--;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "%.*s/ingest?name=", (int)n, base);
	hs_url_escape(f, name);
	fprintf(f, "&from=%" PRId64 "&until=%" PRId64 "&format=pprof", from, until);
	if (rate)
		fprintf(f, "&sampleRate=%u", rate);
	fprintf(f, "&spyName=hotstack");
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *hs_push_otlp_url(const char *base)
{
	size_t n = strlen(base);
	char *buf;

	while (n && base[n - 1] == '/')
		n--;
	return asprintf(&buf, "%.*s/v1development/profiles", (int)n, base) < 0 ? NULL : buf;
}

static void hs_item_free(struct hs_push_item *it)
{
	size_t i;

	for (i = 0; i < it->nr; i++) {
		free(it->part[i].data);
		free(it->part[i].name);
	}
	free(it->part);
	free(it);
}

/* Unlink the item after @prev (NULL: the head). Under the lock. */
static struct hs_push_item *hs_push_unlink(struct hs_push *p, struct hs_push_item *prev)
{
	struct hs_push_item *it = prev ? prev->next : p->head;

	if (prev)
		prev->next = it->next;
	else
		p->head = it->next;
	if (p->tail == it)
		p->tail = prev;
	p->st.waiting--;
	p->st.bytes -= it->len;
	return it;
}

void hs_push_queue_parts(struct hs_push *p, struct hs_push_part *part, size_t nr,
			unsigned int rate, int64_t from, int64_t until, uint64_t id)
{
	struct hs_push_item *it = calloc(1, sizeof(*it)), *old;
	struct hs_push_item *dropped[8];
	size_t nr_dropped = 0, i, len = 0, ok = !!it;

	if (it)
		it->part = calloc(nr ?: 1, sizeof(*it->part));
	for (i = 0; i < nr; i++) {
		len += part[i].len;
		if (it && it->part) {
			it->part[i] = part[i];
			it->part[i].name = strdup(part[i].name);
			ok = ok && it->part[i].name;
		} else {
			free(part[i].data);
		}
	}
	if (!ok || !it->part) {
		if (it && it->part) {
			it->nr = nr;
			hs_item_free(it);
		} else {
			free(it);
		}
		p->cfg.log(p->cfg.log_data, "push: no memory to queue profile %" PRIu64
			   " [%" PRId64 ", %" PRId64 "): dropped", id, from, until);
		pthread_mutex_lock(&p->lock);
		p->st.queued += nr;
		p->st.dropped += nr;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	it->nr = nr;
	it->len = len;
	it->rate = rate;
	it->from = from;
	it->until = until;
	it->id = id;
	pthread_mutex_lock(&p->lock);
	p->st.queued += nr;
	if (!nr || len > p->cfg.max_bytes) {
		p->st.dropped += nr;
		pthread_mutex_unlock(&p->lock);
		if (nr)
			p->cfg.log(p->cfg.log_data, "push: profile %" PRIu64 " is %zu bytes, more "
				   "than the queue holds: dropped", id, len);
		hs_item_free(it);
		return;
	}
	/* Room: drop the oldest interval waiting (not the one on the wire). */
	while (p->head && (p->st.waiting + 1 > p->cfg.max_queue ||
			   p->st.bytes + len > p->cfg.max_bytes)) {
		if (p->inflight && !p->head->next)
			break;	/* only the one being sent: it ends soon, let it */
		old = hs_push_unlink(p, p->inflight ? p->head : NULL);
		p->st.dropped += old->nr - old->sent;
		if (nr_dropped < sizeof(dropped) / sizeof(dropped[0]))
			dropped[nr_dropped++] = old;
		else
			hs_item_free(old);
	}
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->st.waiting++;
	p->st.bytes += len;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < nr_dropped; i++) {
		p->cfg.log(p->cfg.log_data, "push: queue full (%zu intervals, %zu bytes at most): "
			   "dropped the oldest, profile %" PRIu64 " [%" PRId64 ", %" PRId64 ")%s",
			   p->cfg.max_queue, p->cfg.max_bytes, dropped[i]->id, dropped[i]->from,
			   dropped[i]->until, dropped[i]->nr > 1 ? " (all its requests left)" : "");
		hs_item_free(dropped[i]);
	}
}

void hs_push_queue(struct hs_push *p, void *data, size_t len, const char *name,
		   unsigned int rate, int64_t from, int64_t until, uint64_t id)
{
	struct hs_push_part part = { .data = data, .len = len, .name = (char *)name, .profiles = 1 };

	hs_push_queue_parts(p, &part, 1, rate, from, until, id);
}

void hs_push_get_stats(struct hs_push *p, struct hs_push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

/* The profile's bytes, for curl's multipart part (no copy of them). */
struct hs_push_reader {
	const char *data;
	size_t len, pos;
};

static size_t hs_push_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct hs_push_reader *r = arg;
	size_t n = size * nitems;

	if (n > r->len - r->pos)
		n = r->len - r->pos;
	memcpy(buf, r->data + r->pos, n);
	r->pos += n;
	return n;
}

static int hs_push_seek(void *arg, curl_off_t offset, int origin)
{
	struct hs_push_reader *r = arg;

	if (origin != SEEK_SET || offset < 0 || (size_t)offset > r->len)
		return CURL_SEEKFUNC_CANTSEEK;
	r->pos = offset;
	return CURL_SEEKFUNC_OK;
}

/*
 * The server's answer: its first HS_PUSH_RAW_KEPT bytes as they came (an
 * OTLP export's answer is a protobuf), the rest thrown away; the first
 * HS_PUSH_BODY_KEPT of them as one printable line, for the log.
 */
#define HS_PUSH_RAW_KEPT	4096
struct hs_push_answer {
	unsigned char raw[HS_PUSH_RAW_KEPT];
	size_t raw_len;
	char text[HS_PUSH_BODY_KEPT + 1];
	size_t len;
	double retry_after;	/* seconds its Retry-After header asks, or 0 */
};

static size_t hs_push_header(char *buf, size_t size, size_t nitems, void *arg)
{
	struct hs_push_answer *a = arg;
	double s = hs_retry_after(buf, size * nitems, time(NULL));

	if (s > 0)
		a->retry_after = s;
	return size * nitems;
}

static size_t hs_push_write(char *buf, size_t size, size_t nitems, void *arg)
{
	struct hs_push_answer *a = arg;
	size_t n = size * nitems, k = n;

	if (k > HS_PUSH_RAW_KEPT - a->raw_len)
		k = HS_PUSH_RAW_KEPT - a->raw_len;
	memcpy(a->raw + a->raw_len, buf, k);
	a->raw_len += k;
	return n;
}

/* The answer as one printable line. */
static void hs_push_answer_line(struct hs_push_answer *a)
{
	size_t i;

	a->len = a->raw_len < HS_PUSH_BODY_KEPT ? a->raw_len : HS_PUSH_BODY_KEPT;
	memcpy(a->text, a->raw, a->len);
	a->text[a->len] = '\0';
	for (i = 0; i < a->len; i++)
		if ((unsigned char)a->text[i] < ' ' || (unsigned char)a->text[i] >= 127)
			a->text[i] = ' ';
	while (a->len && a->text[a->len - 1] == ' ')
		a->text[--a->len] = '\0';
}

/*
 * One attempt at @it (the lock not held). Returns the HTTP status, or 0
 * with curl's reason in @err when there was no answer.
 */
static long hs_push_send(struct hs_push *p, const struct hs_push_item *it,
			 struct hs_push_answer *a, char *err, size_t errlen)
{
	const struct hs_push_part *pt = &it->part[it->sent];
	struct hs_push_reader r = { .data = pt->data, .len = pt->len };
	char errbuf[CURL_ERROR_SIZE] = "", hdr[300], *gz = NULL;
	struct curl_slist *headers = NULL, *h;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	long status = 0, timeout_ms;
	size_t gz_len = 0;
	char *url;
	CURLcode rc;
	FILE *m;

	a->len = a->raw_len = 0;
	a->retry_after = 0;
	if (p->cfg.otlp) {
		/* OTLP/HTTP's receivers all take a gzipped body (Content-Encoding). */
		url = hs_push_otlp_url(p->cfg.url);
		part = NULL;
		m = open_memstream(&gz, &gz_len);
		if (!m || hs_gzip_write(m, pt->data, pt->len)) {
			if (m)
				fclose(m);
			free(gz);
			gz = NULL;
		} else if (fclose(m)) {
			free(gz);
			gz = NULL;
		}
	} else {
		url = hs_push_url(p->cfg.url, pt->name, it->from, it->until, it->rate);
		mime = hs_curl.mime_init(p->curl);
		part = mime ? hs_curl.mime_addpart(mime) : NULL;
	}
	/* curl sends "Expect: 100-continue" for big bodies: not to a server that never answers it. */
	h = hs_curl.slist_append(NULL, "Expect:");
	if (h) {
		headers = h;
		if (p->cfg.otlp) {
			h = hs_curl.slist_append(headers, "Content-Type: application/x-protobuf");
			headers = h ?: headers;
			h = h ? hs_curl.slist_append(headers, "Content-Encoding: gzip") : NULL;
			headers = h ?: headers;
		}
		if (h && p->cfg.tenant) {
			snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", p->cfg.tenant);
			h = hs_curl.slist_append(headers, hdr);
			headers = h ?: headers;
		}
	}
	if (!url || !h || (p->cfg.otlp && !gz) ||
	    (!p->cfg.otlp && (!part || hs_curl.mime_name(part, "profile") ||
	    hs_curl.mime_filename(part, "profile.pprof") ||
	    hs_curl.mime_type(part, "application/octet-stream") ||
	    hs_curl.mime_data_cb(part, pt->len, hs_push_read, hs_push_seek, NULL, &r)))) {
		snprintf(err, errlen, "no memory for the request");
		goto out;
	}
	timeout_ms = (long)(p->cfg.timeout * 1000);
	hs_curl.easy_reset(p->curl);
	hs_curl.easy_setopt(p->curl, CURLOPT_URL, url);
	if (p->cfg.otlp) {
		/* Gzipped, freed once the attempt is over. */
		hs_curl.easy_setopt(p->curl, CURLOPT_POSTFIELDS, gz);
		hs_curl.easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)gz_len);
	} else {
		hs_curl.easy_setopt(p->curl, CURLOPT_MIMEPOST, mime);
	}
	hs_curl.easy_setopt(p->curl, CURLOPT_HTTPHEADER, headers);
	hs_curl.easy_setopt(p->curl, CURLOPT_USERAGENT, "hotstack-agent");
	hs_curl.easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	hs_curl.easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	hs_curl.easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	hs_curl.easy_setopt(p->curl, CURLOPT_ERRORBUFFER, errbuf);
	hs_curl.easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, hs_push_write);
	hs_curl.easy_setopt(p->curl, CURLOPT_WRITEDATA, a);
	hs_curl.easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, hs_push_header);
	hs_curl.easy_setopt(p->curl, CURLOPT_HEADERDATA, a);
	hs_curl.easy_setopt(p->curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	hs_curl.easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	hs_curl.easy_setopt(p->curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	rc = hs_curl.easy_perform(p->curl);
	if (rc == CURLE_OK)
		hs_curl.easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(err, errlen, "%s", errbuf[0] ? errbuf : hs_curl.easy_strerror(rc));
	hs_push_answer_line(a);
out:
	hs_curl.mime_free(mime);
	hs_curl.slist_free_all(headers);
	free(url);
	free(gz);
	return status;
}

/* Wait on @wake until @until (hs_now() seconds), a queued profile or a stop. Under the lock. */
static void hs_push_wait(struct hs_push *p, double until)
{
	struct timespec ts;
	double left = until - hs_now(), whole;

	if (left <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	left = modf(left, &whole);
	ts.tv_sec += (time_t)whole;
	ts.tv_nsec += (long)(left * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->wake, &p->lock, &ts);
}

/*
 * An OTLP export taken (2xx): what its answer says. A partial success
 * that rejected each of its profiles is a refusal, logged with the
 * server's message, not sent again; one that rejected some, or a message
 * alone, is logged.
 */
static int hs_push_otlp_answer(struct hs_push *p, const struct hs_push_item *it,
			       const struct hs_push_answer *a)
{
	char msg[HS_PUSH_BODY_KEPT + 1];
	int64_t rejected;
	size_t i;

	if (!a->raw_len || hs_otlp_answer(a->raw, a->raw_len, &rejected, msg, sizeof(msg)))
		return HS_PUSH_OK;
	for (i = 0; msg[i]; i++)
		if ((unsigned char)msg[i] < ' ' || (unsigned char)msg[i] >= 127)
			msg[i] = ' ';
	if (rejected > 0) {
		size_t of = it->part[it->sent].profiles ?: 1;

		p->cfg.log(p->cfg.log_data, "push: the server took profile %" PRIu64 " [%" PRId64
			   ", %" PRId64 ") and rejected %s (OTLP partial success: %" PRId64
			   " of %zu rejected%s%s): not sent again", it->id, it->from, it->until,
			   (uint64_t)rejected >= of ? "it" : "a part", rejected, of,
			   msg[0] ? ", " : "", msg);
		return (uint64_t)rejected >= of ? HS_PUSH_REJECT : HS_PUSH_OK;
	}
	if (msg[0])
		p->cfg.log(p->cfg.log_data, "push: the server took profile %" PRIu64 " [%" PRId64
			   ", %" PRId64 ") with a warning: %s", it->id, it->from, it->until, msg);
	return HS_PUSH_OK;
}

static void *hs_push_thread(void *arg)
{
	struct hs_push *p = arg;
	double backoff = 0, retry_at = 0, down_since = 0;
	struct hs_push_answer a;
	struct hs_push_item *it;
	uint64_t failed_attempts = 0;
	char err[CURL_ERROR_SIZE + 64];
	long status;
	int verdict;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		double now = hs_now();

		if (p->stopping && (!p->head || now >= p->deadline))
			break;
		if (!p->head) {
			pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		if (now < retry_at) {
			hs_push_wait(p, p->stopping && p->deadline < retry_at ? p->deadline :
					retry_at);
			continue;
		}
		it = p->head;
		p->inflight = 1;
		pthread_mutex_unlock(&p->lock);

		err[0] = '\0';
		status = hs_push_send(p, it, &a, err, sizeof(err));
		verdict = hs_push_verdict(status);
		if (verdict == HS_PUSH_OK && p->cfg.otlp)
			verdict = hs_push_otlp_answer(p, it, &a);
		if (verdict == HS_PUSH_RETRY && status)
			snprintf(err, sizeof(err), "HTTP %ld%s%s", status, a.len ? ": " : "", a.text);
		if (verdict == HS_PUSH_REJECT)
			p->cfg.log(p->cfg.log_data, "push: the server refused profile %" PRIu64
				   " [%" PRId64 ", %" PRId64 ") with HTTP %ld%s%s: not sent again",
				   it->id, it->from, it->until, status, a.len ? ": " : "", a.text);
		if (verdict == HS_PUSH_RETRY && !failed_attempts)
			p->cfg.log(p->cfg.log_data, "push: cannot push profile %" PRIu64 " [%" PRId64
				   ", %" PRId64 ") to %s: %s; retrying (backoff %.0f-%.0f s), "
				   "profiles queue meanwhile", it->id, it->from, it->until,
				   p->cfg.url, err, p->cfg.backoff_min, p->cfg.backoff_max);
		if (verdict != HS_PUSH_RETRY && failed_attempts)
			p->cfg.log(p->cfg.log_data, "push: the server answers again (HTTP %ld) after "
				   "%" PRIu64 " failed attempts in %.0f s", status, failed_attempts,
				   hs_now() - down_since);

		pthread_mutex_lock(&p->lock);
		p->inflight = 0;
		if (verdict == HS_PUSH_RETRY) {
			if (!failed_attempts++)
				down_since = hs_now();
			p->st.failures++;
			p->st.down = 1;
			backoff = backoff ? fmin(backoff * 2, p->cfg.backoff_max) : p->cfg.backoff_min;
			/* Not sooner than the server's Retry-After (an hour at most). */
			retry_at = hs_now() + fmax(backoff, fmin(a.retry_after, 3600));
			continue;
		}
		failed_attempts = 0;
		backoff = 0;
		retry_at = 0;
		p->st.down = 0;
		if (verdict == HS_PUSH_OK)
			p->st.pushed++;
		else
			p->st.rejected++;
		/* It is still the head: dropping for room never takes the one in flight. */
		p->st.bytes -= it->part[it->sent].len;
		it->len -= it->part[it->sent].len;
		free(it->part[it->sent].data);
		it->part[it->sent++].data = NULL;
		if (it->sent == it->nr)
			hs_item_free(hs_push_unlink(p, NULL));
	}
	while (p->head) {
		p->st.abandoned += p->head->nr - p->head->sent;
		hs_item_free(hs_push_unlink(p, NULL));
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int hs_push_start(struct hs_push **out, const struct hs_push_config *cfg)
{
	struct hs_push *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int ret;

	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	if (p->cfg.max_queue < 2)
		p->cfg.max_queue = 2;
	p->curl = hs_curl.easy_init();
	if (!p->curl) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&p->thread, NULL, hs_push_thread, p);
	if (ret) {
		hs_curl.easy_cleanup(p->curl);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -ret;
	}
	*out = p;
	return 0;
}

void hs_push_stop(struct hs_push *p, double deadline, struct hs_push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	p->deadline = deadline;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	/*
	 * A request on the wire ends by its own timeout at the latest; curl
	 * is not interrupted mid-request (the server may have taken it).
	 */
	pthread_join(p->thread, NULL);
	if (st)
		*st = p->st;
	hs_curl.easy_cleanup(p->curl);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
