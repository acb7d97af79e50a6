// SPDX-License-Identifier: GPL-2.0
/*
 * A small HTTP listener for the agent's tests, on the loopback only. It
 * keeps each request as it arrives and answers what the test asks for,
 * nothing more: it knows nothing of Pyroscope.
 *
 *   hs_listen -d DIR [-p PORT] [-s STATUS|hang] [-b FILE] [-w MS]
 *       Listen on 127.0.0.1:PORT (default 4040; 0: one the kernel picks),
 *       written to DIR/port once listening. Each request is kept
 *       whole as DIR/NNNN.req (NNNN counts on from the requests already
 *       in DIR, so a listener started again goes on numbering), and a line
 *       "NNNN UNIXTIME METHOD TARGET STATUS" is appended to DIR/log once
 *       it is written. The answer: STATUS (default 200) with a one-line
 *       body; "hang": no answer at all, the connection held open until the
 *       listener ends. With -b, the body is FILE's bytes, as
 *       application/x-protobuf (an OTLP export's answer). With -w, each
 *       answer waits MS milliseconds first (a slow server). One connection
 *       at a time, closed after the answer.
 *       Ends on SIGTERM or SIGINT.
 *   hs_listen -x REQ OUT
 *       Write the body of the part named "profile" of the multipart/form-
 *       data request kept in REQ to OUT; of another request (OTLP's
 *       application/x-protobuf), its whole body, inflated when its
 *       Content-Encoding is gzip.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Request head and body at most: more is refused (413) and not kept. */
#define HEAD_MAX	(64 << 10)
#define BODY_MAX	(64 << 20)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The value of header @name in @head (NUL-terminated, CRLF lines), or NULL. */
static const char *header(const char *head, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);
	const char *p = head, *e;

	while ((p = strstr(p, "\r\n"))) {
		p += 2;
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			p += n + 1;
			p += strspn(p, " \t");
			e = strstr(p, "\r\n");
			if (!e)
				return NULL;
			snprintf(buf, len, "%.*s", (int)(e - p), p);
			return buf;
		}
	}
	return NULL;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Requests already kept in @dir: the next number follows them. */
static unsigned int count_requests(const char *dir)
{
	unsigned int n = 0, v;
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return 0;
	while ((d = readdir(dp)))
		if (sscanf(d->d_name, "%u.req", &v) == 1 && v > n)
			n = v;
	closedir(dp);
	return n;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 413: return "Payload Too Large";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

/* -w: milliseconds before each answer. */
static unsigned int delay_ms;

/* -b: the answer's body, or NULL (the reason, as text). */
static char body[4096];
static ssize_t body_len = -1;

static void answer(int c, int status)
{
	char buf[256];
	int n;

	if (body_len >= 0) {
		n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Type: "
			     "application/x-protobuf\r\nContent-Length: %zd\r\n"
			     "Connection: close\r\n\r\n", status, reason(status), body_len);
		write_all(c, buf, n);
		write_all(c, body, body_len);
		return;
	}
	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n", status,
		     reason(status), strlen(reason(status)) + 1, reason(status));
	write_all(c, buf, n);
}

/* One connection: its request kept, then the answer. */
static void serve(int c, const char *dir, unsigned int *seq, int status)
{
	char *buf = malloc(HEAD_MAX + 1), *end = NULL, value[64], method[16], target[8192];
	char path[4096], tmp[4096], line[9000];
	size_t len = 0, body = 0, want;
	ssize_t n;
	FILE *log;
	int fd;

	if (!buf)
		return;
	/* The head. */
	while (!end && len < HEAD_MAX) {
		n = read(c, buf + len, HEAD_MAX - len);
		if (n <= 0)
			goto out;
		len += n;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (!end || sscanf(buf, "%15s %8191s", method, target) != 2)
		goto out;
	if (header(buf, "Content-Length", value, sizeof(value)))
		body = strtoul(value, NULL, 10);
	if (body > BODY_MAX) {
		answer(c, 413);
		goto out;
	}
	if (header(buf, "Expect", value, sizeof(value)) && !strcasecmp(value, "100-continue"))
		write_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	want = (end + 4 - buf) + body;
	if (want > HEAD_MAX) {
		char *b = realloc(buf, want + 1);

		if (!b)
			goto out;
		buf = b;
	}
	while (len < want) {
		n = read(c, buf + len, want - len);
		if (n <= 0)
			goto out;
		len += n;
	}
	/* Kept whole, then announced: a reader of the log finds the file complete. */
	++*seq;
	snprintf(path, sizeof(path), "%s/%04u.req", dir, *seq);
	snprintf(tmp, sizeof(tmp), "%s/.%04u.tmp", dir, *seq);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write_all(fd, buf, want) || close(fd) || rename(tmp, path)) {
		perror("hs_listen: keeping the request");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/log", dir);
	log = fopen(path, "a");
	if (log) {
		if (status)
			snprintf(line, sizeof(line), "%04u %ld %s %s %d\n", *seq, (long)time(NULL),
				 method, target, status);
		else
			snprintf(line, sizeof(line), "%04u %ld %s %s hang\n", *seq,
				 (long)time(NULL), method, target);
		fputs(line, log);
		fclose(log);
	}
	if (!status) {
		/* Hold it: no answer, until the listener ends. */
		while (!stop)
			pause();
		goto out;
	}
	if (delay_ms)
		usleep(delay_ms * 1000);
	answer(c, status);
out:
	free(buf);
}

/* A gzipped body inflated to @out (created). 0, or 1 said on stderr. */
static int gunzip_to(const char *in, size_t len, const char *out)
{
	unsigned char chunk[65536];
	z_stream z = { 0 };
	int fd, ret = Z_OK;

	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || inflateInit2(&z, 15 + 16) != Z_OK) {
		perror(out);
		return 1;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = len;
	while (ret == Z_OK) {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = inflate(&z, Z_NO_FLUSH);
		if ((ret == Z_OK || ret == Z_STREAM_END) &&
		    write_all(fd, (char *)chunk, sizeof(chunk) - z.avail_out))
			ret = Z_ERRNO;
	}
	inflateEnd(&z);
	if (close(fd) || ret != Z_STREAM_END) {
		fprintf(stderr, "%s: the gzipped body does not inflate (%d)\n", out, ret);
		return 1;
	}
	return 0;
}

/* -x: the "profile" part of a kept multipart request. */
static int extract(const char *req, const char *out)
{
	char *buf, value[512], *b, *delim, *part, *start, *stop_at;
	size_t len = 0, cap = 1 << 20, dlen;
	FILE *f = fopen(req, "rb");
	ssize_t n;
	int fd;

	if (!f) {
		perror(req);
		return 1;
	}
	buf = malloc(cap + 1);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	fclose(f);
	if (!buf)
		return 1;
	buf[len] = '\0';
	if (!header(buf, "Content-Type", value, sizeof(value))) {
		fprintf(stderr, "%s: no Content-Type\n", req);
		return 1;
	}
	if (strncasecmp(value, "multipart/form-data", 19)) {
		/* The body whole: after the head's empty line. */
		start = memmem(buf, len, "\r\n\r\n", 4);
		if (start && header(buf, "Content-Encoding", value, sizeof(value)) &&
		    !strcasecmp(value, "gzip"))
			return gunzip_to(start + 4, len - (start + 4 - buf), out);
		fd = start ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
		if (fd < 0 || write_all(fd, start + 4, len - (start + 4 - buf)) || close(fd)) {
			perror(out);
			return 1;
		}
		return 0;
	}
	if (!(b = strstr(value, "boundary="))) {
		fprintf(stderr, "%s: multipart/form-data without a boundary\n", req);
		return 1;
	}
	b += 9;
	if (*b == '"') {
		b++;
		b[strcspn(b, "\"")] = '\0';
	}
	if (asprintf(&delim, "\r\n--%s", b) < 0)
		return 1;
	dlen = strlen(delim);
	/* Each part: "--B\r\nheaders\r\n\r\nbody\r\n--B". The first has no CRLF before it. */
	part = memmem(buf, len, delim + 2, dlen - 2);
	while (part) {
		part += dlen - 2;
		start = memmem(part, len - (part - buf), "\r\n\r\n", 4);
		if (!start)
			break;
		stop_at = memmem(start + 4, len - (start + 4 - buf), delim, dlen);
		if (!stop_at)
			break;
		if (memmem(part, start - part, "name=\"profile\"", 14)) {
			fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write_all(fd, start + 4, stop_at - (start + 4)) || close(fd)) {
				perror(out);
				return 1;
			}
			return 0;
		}
		part = stop_at + 2;
	}
	fprintf(stderr, "%s: no part named profile\n", req);
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sigaction act = { .sa_handler = on_signal };
	const char *dir = NULL;
	int port = 4040, status = 200, s, c, opt, one = 1;
	unsigned int seq;

	while ((opt = getopt(argc, argv, "b:d:p:s:w:x:")) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			status = strcmp(optarg, "hang") ? atoi(optarg) : 0;
			break;
		case 'b': {
			int fd = open(optarg, O_RDONLY);

			body_len = fd < 0 ? -1 : read(fd, body, sizeof(body));
			if (fd >= 0)
				close(fd);
			if (body_len < 0) {
				perror(optarg);
				return 1;
			}
			break;
		}
		case 'w':
			delay_ms = atoi(optarg);
			break;
		case 'x':
			if (optind >= argc)
				goto usage;
			return extract(optarg, argv[optind]);
		default:
			goto usage;
		}
	}
	if (!dir || port < 0 || port > 65535 || (status && (status < 100 || status > 599)))
		goto usage;
	mkdir(dir, 0755);
	seq = count_requests(dir);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	signal(SIGPIPE, SIG_IGN);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* The loopback only. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 16)) {
		perror("hs_listen");
		return 1;
	}
	{
		socklen_t sl = sizeof(sa);
		char path[4096];
		FILE *pf;

		getsockname(s, (struct sockaddr *)&sa, &sl);
		port = ntohs(sa.sin_port);
		snprintf(path, sizeof(path), "%s/port", dir);
		pf = fopen(path, "w");
		if (!pf || fprintf(pf, "%d\n", port) < 0 || fclose(pf)) {
			perror(path);
			return 1;
		}
	}
	fprintf(stderr, "hs_listen: listening on 127.0.0.1:%d\n", port);
	while (!stop) {
		c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		serve(c, dir, &seq, status);
		close(c);
	}
	close(s);
	return 0;
usage:
	fprintf(stderr, "usage: hs_listen -d DIR [-p PORT] [-s STATUS|hang] [-b FILE] [-w MS] | "
		"hs_listen -x REQ OUT\n");
	return 2;
}
