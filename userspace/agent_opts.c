// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack agent's options: the command line, and --config FILE's lines
 * before it (apart from the agent's loop, for the unit tests).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "commands.h"
#include "options.h"
#include "push.h"
#include "session.h"
#include "util.h"

enum {
	O_INTERVAL = 'i', O_PERSISTENT = HS_SESSION_OPT_NEXT, O_PUSH, O_NAME, O_LABEL,
	O_OUTPUT_DIR, O_KEEP, O_QUEUE, O_QUEUE_MB, O_TIMEOUT, O_DRAIN, O_TENANT, O_LOG, O_CONFIG,
	O_GROUP_BY,
};

static const struct hs_option hs_agent_options[] = {
	{ O_PERSISTENT, "persistent", NULL, "profile the module's persistent session "
	  "(autostart=1) instead of one of its own; no session options then" },
	{ O_INTERVAL, "interval", "SECONDS", "one profile every SECONDS, 1-3600, ending on "
	  "multiples of it in UNIX time (default 10)" },
	{ O_PUSH, "push", "URL", "push each profile to this Pyroscope server (or Grafana Alloy's "
	  "pyroscope.receive_http): POST URL/ingest; otlp+http://HOST:4318: as OTLP to an "
	  "OpenTelemetry Collector (POST /v1development/profiles)" },
	{ O_NAME, "name", "APP", "the application's name in Pyroscope (default hotstack)" },
	{ O_LABEL, "label", "KEY=VALUE", "a label of every profile, besides hostname, "
	  "kernel_release and event (repeat it; the same key replaces one of those)" },
	{ O_GROUP_BY, "group-by", "KIND", "one profile an interval per container (labels "
	  "container.id and k8s.pod.uid; service_name its workload), cgroup (label cgroup) or "
	  "unit (label systemd.unit), and one for the samples of none; keys the session by "
	  "cgroup" },
	{ O_OUTPUT_DIR, "output-dir", "DIR", "write each profile as DIR/hotstack-START.pb.gz "
	  "(START: YYYYmmddTHHMMSSZ, UTC; with --group-by, a group's as "
	  "hotstack-START-GROUP.pb.gz)" },
	{ O_KEEP, "keep", "N", "with --output-dir: keep the newest N intervals' files (default 360)" },
	{ O_QUEUE, "queue", "N", "intervals waiting to be pushed at most; past it the oldest is "
	  "dropped (default 60)" },
	{ O_QUEUE_MB, "queue-mb", "MIB", "their size at most, in MiB (default 64)" },
	{ O_TIMEOUT, "timeout", "SECONDS", "how long one push may take, 1-600 (default 15)" },
	{ O_DRAIN, "drain", "SECONDS", "on SIGTERM, how long the last pushes may take, 0-600 "
	  "(default 10)" },
	{ O_TENANT, "tenant", "ID", "send the header X-Scope-OrgID: ID (multi-tenant Pyroscope)" },
	{ O_LOG, "log", "FILE", "log there, not on standard error (SIGHUP opens it again)" },
	{ O_CONFIG, "config", "FILE", "options from FILE first: one a line, NAME VALUE as on the "
	  "command line without the dashes; # comments" },
	HS_OPTION_END,
};

/* ---- options ------------------------------------------------------------ */

/* --config FILE (or --config=FILE) on @argv, or NULL. */
static const char *hs_agent_config_path(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}

/*
 * The command line with @path's options before the command line's own:
 * o->argv, o->config_text, o->config_names. 0, or HS_EXIT_USAGE after
 * saying why.
 */
static int hs_agent_expand(int argc, char **argv, const char *path, struct hs_agent_opts *o,
			   int *out_argc)
{
	size_t cap = argc + 2, n = 0, lineno = 0, text_len, used = 0;
	char *line, *next, *name, *value, *end;

	o->config_text = hs_read_file(path, &text_len);
	if (!o->config_text) {
		fprintf(stderr, "hotstack agent: cannot read the config file %s: %s\n", path,
			strerror(errno));
		return HS_EXIT_USAGE;
	}
	for (line = o->config_text; *line; line++)
		cap += *line == '\n' ? 2 : 0;
	cap += 2;
	o->argv = calloc(cap, sizeof(*o->argv));
	/* Each name with "--" before it and a NUL after: three bytes more than the text's. */
	o->config_names = malloc(text_len * 2 + 4);
	if (!o->argv || !o->config_names) {
		fprintf(stderr, "hotstack agent: %s\n", strerror(ENOMEM));
		return HS_EXIT_USAGE;
	}
	o->argv[n++] = argv[0];
	for (line = o->config_text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		name = line + strspn(line, " \t");
		if (!*name || *name == '#')
			continue;
		value = name + strcspn(name, " \t=");
		if (*value) {
			*value++ = '\0';
			value += strspn(value, " \t=");
		}
		for (end = value + strlen(value); end > value && (end[-1] == ' ' ||
							    end[-1] == '\t'); end--)
			;
		*end = '\0';
		if (!strcmp(name, "config")) {
			fprintf(stderr, "hotstack agent: %s:%zu: a config file cannot name another\n",
				path, lineno);
			return HS_EXIT_USAGE;
		}
		o->argv[n++] = o->config_names + used;
		used += sprintf(o->config_names + used, "--%s", name) + 1;
		if (*value)
			o->argv[n++] = value;
	}
	memcpy(o->argv + n, argv + 1, (argc - 1) * sizeof(*argv));
	n += argc - 1;
	o->argv[n] = NULL;
	*out_argc = n;
	return 0;
}

void hs_agent_opts_free(struct hs_agent_opts *o)
{
	free(o->config_text);
	free(o->config_names);
	free(o->argv);
	o->config_text = o->config_names = NULL;
	o->argv = NULL;
}

/* "KEY=VALUE" with a key and a value Pyroscope takes. */
static int hs_agent_label_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq && hs_label_key_ok(s, eq - s) && hs_label_value_ok(eq + 1, strlen(eq + 1));
}

/*
 * The agent's count tables: a generation lasts an interval, in which a CPU
 * sees at most -F's rate times the interval distinct stacks, and a table
 * holds 3/4 of its entries: the power of two from 4/3 of that, 64 to 1024
 * (99 Hz for 10 s: 990 samples, 1024). Off-CPU time (a wait at every
 * switch) and a period (-c: no rate known) take 1024.
 */
static uint32_t hs_agent_cpu_entries(const struct hs_config *c, unsigned int interval)
{
	uint64_t want, n = 64;

	if (c->off_cpu || !(c->abi.flags & HOTSTACK_CFG_FREQ))
		return 1024;
	want = (c->abi.sample * interval * 4 + 2) / 3;
	while (n < want && n < 1024)
		n *= 2;
	return n;
}

int hs_agent_parse(int argc, char **argv, struct hs_agent_opts *o)
{
	static const struct hs_option *const tables[] = {
		hs_session_options, hs_off_cpu_options, hs_agent_options, NULL,
	};
	unsigned long long v;
	const char *config;
	struct hs_args a;
	char *value;
	int id, ret;

	memset(o, 0, sizeof(*o));
	hs_config_defaults(&o->s);
	/*
	 * Always on: a small rate and small tables (they never fill at 99 Hz
	 * in 10 s), the CPUs' count tables sized from the rate and interval
	 * once the options are read. What they take, both generations, on a
	 * 384-CPU machine with the most count entries (hs_tables_bytes()):
	 *   store:  4096 + 4096 * 48 + 65536 * 8 = 724992 bytes (whole pages)
	 *   a CPU:  320 + 1024 * 16 = 16704, to 128 bytes: 16768 bytes
	 *   2 * (724992 + 384 * 16768) + a header page = 14331904 bytes, 13.7 MiB:
	 * under 16 MiB.
	 */
	o->s.event = "cpu-clock";
	hs_parse_event(o->s.event, &o->s.ev, NULL, 0);
	o->s.abi.sample = 99;
	o->s.abi.table_entries = 4096;
	o->s.abi.arena_frames = 65536;
	o->interval = 10;
	o->name = "hotstack";
	o->keep = 360;
	o->queue = 60;
	o->queue_mb = 64;
	o->timeout = 15;
	o->drain = 10;
	config = hs_agent_config_path(argc, argv);
	if (config) {
		ret = hs_agent_expand(argc, argv, config, o, &argc);
		if (ret)
			return ret;
		argv = o->argv;
	}
	if (hs_args_init(&a, "agent", "[OPTIONS]",
			 "Continuous profiling: a profile every interval, pushed to Pyroscope "
			 "and/or written to a directory, until SIGTERM. The session options are "
			 "record's, with the agent's defaults: -e cpu-clock -F 99 --table-entries "
			 "4096 --arena-frames 65536, and --cpu-entries 4/3 of the samples a CPU "
			 "takes in an interval (-F times --interval), 64 to 1024.", tables, 0, argc,
			 argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END) {
		if (id == HS_ARGS_EXIT) {
			ret = a.status ? a.status : -1;
			goto out;
		}
		ret = hs_config_option(&a, &o->s, id, value);
		if (ret == 0) {
			o->session_opts = 1;
			continue;
		}
		if (ret != 1)
			goto out;
		ret = 0;
		switch (id) {
		case O_PERSISTENT:
			o->persistent = 1;
			break;
		case O_INTERVAL:
			if (hs_parse_u64(value, 1, 3600, &v))
				ret = hs_args_error(&a, "--interval wants whole seconds from 1 to "
						    "3600, not '%s'", value);
			o->interval = v;
			break;
		case O_PUSH:
			o->otlp = !strncmp(value, "otlp+", 5);
			o->push = value + (o->otlp ? 5 : 0);
			if (strncmp(o->push, "http://", 7) && strncmp(o->push, "https://", 8))
				ret = hs_args_error(&a, "--push wants an http:// or https:// URL "
						    "(Pyroscope), or otlp+http:// or otlp+https:// "
						    "(OTLP), not '%s'", value);
			else if (o->otlp && !hs_otlp_built())
				ret = hs_args_error(&a, "this hotstack was built without OTLP: build "
						    "it where opentelemetry-proto 1.11 or newer is "
						    "installed (Debian's opentelemetry-proto package)");
			break;
		case O_NAME:
			if (!hs_app_name_ok(value))
				ret = hs_args_error(&a, "--name wants 1-128 letters, digits and "
						    "'_.-/', not '%s'", value);
			o->name = value;
			break;
		case O_LABEL:
			if (!hs_agent_label_ok(value))
				ret = hs_args_error(&a, "--label wants KEY=VALUE, KEY of letters, "
						    "digits and '_' (not starting with a digit or "
						    "__), VALUE of 1-256 printable characters without "
						    "space , { } = \" \\, not '%s'", value);
			else if (o->nr_labels == HS_AGENT_MAX_LABELS)
				ret = hs_args_error(&a, "at most %d --label", HS_AGENT_MAX_LABELS);
			else
				o->labels[o->nr_labels++] = value;
			break;
		case O_OUTPUT_DIR:
			o->output_dir = value;
			break;
		case O_KEEP:
			if (hs_parse_u64(value, 1, 1000000, &v))
				ret = hs_args_error(&a, "--keep wants 1 to 1000000 intervals, not '%s'",
						    value);
			o->keep = v;
			break;
		case O_QUEUE:
			if (hs_parse_u64(value, 2, 100000, &v))
				ret = hs_args_error(&a, "--queue wants 2 to 100000 intervals, not '%s'",
						    value);
			o->queue = v;
			break;
		case O_QUEUE_MB:
			if (hs_parse_u64(value, 1, 4096, &v))
				ret = hs_args_error(&a, "--queue-mb wants 1 to 4096 MiB, not '%s'",
						    value);
			o->queue_mb = v;
			break;
		case O_TIMEOUT:
			if (hs_parse_seconds(value, 1, 600, &o->timeout))
				ret = hs_args_error(&a, "--timeout wants 1 to 600 seconds, not '%s'",
						    value);
			break;
		case O_DRAIN:
			if (hs_parse_seconds(value, 0, 600, &o->drain))
				ret = hs_args_error(&a, "--drain wants 0 to 600 seconds, not '%s'",
						    value);
			break;
		case O_TENANT:
			if (!hs_label_value_ok(value, strlen(value)))
				ret = hs_args_error(&a, "--tenant wants 1-256 printable characters, "
						    "not '%s'", value);
			o->tenant = value;
			break;
		case O_LOG:
			o->log = value;
			break;
		case O_CONFIG:
			break;	/* read before the options */
		case O_GROUP_BY:
			o->group_by = !strcmp(value, "container") ? HS_GROUP_CONTAINER :
				      !strcmp(value, "cgroup") ? HS_GROUP_CGROUP :
				      !strcmp(value, "unit") ? HS_GROUP_UNIT : HS_GROUP_NONE;
			if (!o->group_by)
				ret = hs_args_error(&a, "--group-by wants container, cgroup or unit, "
						    "not '%s'", value);
			break;
		}
		if (ret)
			goto out;
	}
	if (!o->s.have_cpu_entries)
		o->s.abi.cpu_entries = hs_agent_cpu_entries(&o->s, o->interval);
	ret = hs_config_check(&a, &o->s);
	if (ret || (ret = hs_args_no_operands(&a)))
		goto out;
	if (!o->push && !o->output_dir)
		ret = hs_args_error(&a, "nowhere to send the profiles: --push URL and/or "
				    "--output-dir DIR");
	else if (o->persistent && o->session_opts)
		ret = hs_args_error(&a, "--persistent samples as the module's autostart_event and "
				    "autostart_freq say: no session options with it");
	else if (o->persistent && o->s.abi.pid)
		ret = hs_args_error(&a, "--persistent and -p do not go together");
	else if (o->persistent && o->group_by)
		ret = hs_args_error(&a, "--group-by needs the cgroup key, which the persistent "
				    "session has not: drop --persistent");
	/* The groups are read from the cgroup key. */
	if (o->group_by)
		o->s.abi.keys |= HOTSTACK_KEY_CGROUP;
out:
	hs_args_free(&a);
	return ret;
}
