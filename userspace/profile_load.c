// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack tool: load a saved profile, whatever its format: folded text or
 * pprof, either gzipped (magic 1f 8b) or not. A pprof profile always holds
 * a NUL byte (its string table starts with the empty string, encoded as
 * 0x32 0x00); folded text never does, so that byte tells them apart.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.h"
#include "util.h"

/* Inflate gzip data, NUL-terminated; 0, -EBADMSG (corrupt or cut short) or -ENOMEM. */
static int hs_gunzip(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len)
{
	size_t cap = len * 4 + 4096;
	unsigned char *buf = malloc(cap), *grown;
	z_stream z = { 0 };
	int zret = Z_OK;

	if (!buf || len > UINT_MAX || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		return len > UINT_MAX ? -EFBIG : -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	while (zret != Z_STREAM_END) {
		if (cap - z.total_out < 2) {
			grown = realloc(buf, cap *= 2);
			if (!grown) {
				zret = Z_MEM_ERROR;
				break;
			}
			buf = grown;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = cap - z.total_out - 1 > UINT_MAX ? UINT_MAX : cap - z.total_out - 1;
		zret = inflate(&z, Z_NO_FLUSH);
		if (zret == Z_BUF_ERROR && z.avail_out)
			break;	/* needs input there is not: cut short */
		if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
			break;
	}
	inflateEnd(&z);
	if (zret != Z_STREAM_END) {
		free(buf);
		return zret == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
	}
	buf[z.total_out] = '\0';
	*out = buf;
	*out_len = z.total_out;
	return 0;
}

int hs_profile_load(struct hs_profile *p, const char *path, char *err, size_t errlen)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0, ret;
	unsigned char *data, *plain;
	size_t len, bad = 0;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s: %s", name, strerror(-ret));
		return ret;
	}
	data = (unsigned char *)hs_read_fd(fd, &len);
	ret = -errno;
	if (fd)
		close(fd);
	if (!data) {
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(-ret));
		return ret;
	}
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		ret = hs_gunzip(data, len, &plain, &len);
		free(data);
		if (ret) {
			snprintf(err, errlen, "cannot read %s: %s", name, ret == -EBADMSG ?
				 "corrupt or truncated gzip data" : strerror(-ret));
			return ret;
		}
		data = plain;
	}
	if (!memchr(data, '\0', len))	/* the profile takes data */
		return hs_profile_parse_buf(p, (char *)data, len, name, err, errlen);
	ret = hs_read_pprof(p, data, len, &bad);
	free(data);
	if (ret == -EBADMSG)
		snprintf(err, errlen, "cannot read %s: neither a pprof profile (protobuf-c "
			 "cannot decode it) nor folded text", name);
	else if (ret == -EDOM)
		snprintf(err, errlen, "cannot read %s: its sample %zu has a negative count, or "
			 "none", name, bad);
	else if (ret == -EOVERFLOW)
		snprintf(err, errlen, "cannot read %s: its sample counts add up to more than "
			 "2^64 - 1", name);
	else if (ret)
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(-ret));
	return ret;
}
