// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: formats from names, outputs that say why they failed, writing a profile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps.h"
#include "output.h"
#include "profile.h"
#include "view.h"

static const struct {
	const char *name;	/* --format */
	const char *ext;	/* the file name's end */
} hs_formats[HS_FMT_NR] = {
	[HS_FMT_FOLDED] = { "folded", ".folded" },
	[HS_FMT_REPORT] = { "report", ".txt" },
	[HS_FMT_JSON] = { "json", ".json" },
	[HS_FMT_SVG] = { "svg", ".svg" },
	[HS_FMT_PPROF] = { "pprof", ".pb.gz" },
	[HS_FMT_OTLP] = { "otlp", ".otlp.pb" },
};

int hs_format_of_str(const char *s)
{
	int i;

	for (i = 0; i < HS_FMT_NR; i++)
		if (!strcmp(s, hs_formats[i].name))
			return i;
	return -1;
}

int hs_format_of_name(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t n, e;
	int i;

	base = base ? base + 1 : name;
	n = strlen(base);
	for (i = 0; i < HS_FMT_NR; i++) {
		e = strlen(hs_formats[i].ext);
		/* Something before the extension: ".svg" alone is a hidden file. */
		if (n > e && !strcmp(base + n - e, hs_formats[i].ext))
			return i;
	}
	return -1;
}

/* Whether the file name of @path has an extension (a dot after its first character). */
static int hs_has_extension(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return base[0] && strchr(base + 1, '.') != NULL;
}

/* "report, folded or svg": the formats of @ok, as --format spells them, or their extensions. */
static void hs_format_list(unsigned int ok, int ext, char *buf, size_t len)
{
	int i, n = 0, k = 0;
	size_t used = 0;

	for (i = 0; i < HS_FMT_NR; i++)
		n += !!(ok & (1U << i));
	buf[0] = '\0';
	for (i = 0; i < HS_FMT_NR && used < len; i++) {
		if (!(ok & (1U << i)))
			continue;
		k++;
		used += snprintf(buf + used, len - used, "%s%s", k == 1 ? "" : k == n ? " or " : ", ",
				 ext ? hs_formats[i].ext : hs_formats[i].name);
	}
}

int hs_output_format(struct hs_args *a, const char *path, const char *format, int dflt,
		     unsigned int ok, int *out)
{
	char list[128];
	int f = -1;

	if (format) {
		f = hs_format_of_str(format);
		if (f < 0 || !(ok & (1U << f))) {
			hs_format_list(ok, 0, list, sizeof(list));
			return hs_args_error(a, "--format wants %s, not '%s'", list, format);
		}
	} else if (path && strcmp(path, "-") && hs_has_extension(path)) {
		f = hs_format_of_name(path);
		hs_format_list(ok, 1, list, sizeof(list));
		if (f < 0)
			return hs_args_error(a, "cannot tell the format of '%s' from its name: use "
					     "%s, or --format", path, list);
		if (!(ok & (1U << f)))
			return hs_args_error(a, "does not write %s ('%s'): use %s, or --format",
					     hs_formats[f].name, path, list);
	} else {
		f = dflt;
	}
	if (f == HS_FMT_OTLP && !hs_otlp_built())
		return hs_args_error(a, "this hotstack was built without OTLP: build it where "
				     "opentelemetry-proto 1.11 or newer is installed (Debian's "
				     "opentelemetry-proto package)");
	*out = f;
	return 0;
}

/* stdio's writes through here: the first failure's errno is kept. */
static ssize_t hs_output_write(void *cookie, const char *buf, size_t size)
{
	struct hs_output *o = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = write(o->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->err)
				o->err = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	return done;
}

int hs_output_open(struct hs_output *o, const char *cmd, const char *path)
{
	cookie_io_functions_t io = { .write = hs_output_write };
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->fd = 1;
	o->name = "standard output";
	if (path && strcmp(path, "-")) {
		o->name = o->path = path;
		o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (o->fd < 0) {
			fprintf(stderr, "hotstack %s: cannot write %s: %s\n", cmd, path,
				strerror(errno));
			return -1;
		}
		o->created = !fstat(o->fd, &st) && S_ISREG(st.st_mode);
	}
	fflush(stdout);
	o->f = fopencookie(o, "w", io);
	if (!o->f) {
		fprintf(stderr, "hotstack %s: cannot write %s: %s\n", cmd, o->name,
			strerror(errno));
		if (o->fd != 1)
			close(o->fd);
		return -1;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

int hs_output_close(struct hs_output *o, int ret)
{
	if (fclose(o->f) && !ret)
		ret = -EIO;
	if (o->fd != 1 && close(o->fd) && !ret)
		ret = -errno;
	if (!ret && o->err)
		ret = -o->err;
	if (!ret)
		return 0;
	/* The write that failed says why better than a writer's -EIO. */
	fprintf(stderr, "hotstack %s: cannot write %s: %s\n", o->cmd, o->name,
		strerror(o->err ? o->err : -ret));
	if (o->created)
		unlink(o->path);
	return -1;
}

int hs_write_profile(const char *cmd, const char *path, int format, const struct hs_profile *p,
		     const struct hs_view *v)
{
	struct hs_output o;
	int ret;

	if (hs_output_open(&o, cmd, path))
		return -1;
	switch (format) {
	case HS_FMT_REPORT:
		ret = v ? hs_write_report_view(o.f, p, v) : hs_write_report(o.f, p, 20);
		if (!ret)
			hs_maps_print(o.f, p->maps);
		break;
	case HS_FMT_JSON:
		ret = hs_write_json(o.f, p);
		break;
	case HS_FMT_SVG:
		ret = hs_write_svg(o.f, p);
		break;
	case HS_FMT_PPROF:
		ret = hs_write_pprof(o.f, p);
		break;
	case HS_FMT_OTLP:
		ret = hs_write_otlp(o.f, p, NULL);
		break;
	default:
		ret = hs_write_folded(o.f, p);
	}
	return hs_output_close(&o, ret);
}
