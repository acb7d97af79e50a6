// SPDX-License-Identifier: GPL-2.0
/* hotstack status: every session, from the generic netlink family. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "events.h"
#include "netlink.h"
#include "options.h"
#include "session.h"
#include "util.h"

static const char *hs_state_name(uint32_t state)
{
	switch (state) {
	case HOTSTACK_STATE_NEW: return "new";
	case HOTSTACK_STATE_READY: return "ready";
	case HOTSTACK_STATE_RUNNING: return "running";
	default: return "unknown";
	}
}

struct hs_status_out {
	int json;
	int count;
};

static void hs_print_text(const struct hs_status *st, struct hs_status_out *out)
{
	char rate[32], sizes[96];

	if (!out->count++)
		printf("%-4s %-7s %-8s %-16s %-13s %4s %10s %10s %8s %8s %5s %8s %9s %8s\n", "ID",
		       "OWNER", "STATE", "EVENT", "RATE", "CPUS", "SAMPLES", "COUNTED", "DROPS",
		       "STACKS", "FILL", "COST", "OVERHEAD", "MEMORY");
	printf("%-4u %-7u %-8s", st->id, st->owner, hs_state_name(st->state));
	if (!st->configured) {
		printf(" (not configured)\n");
		return;
	}
	printf(" %-16s %-13s %4u %10llu %10llu %8llu %8llu %4u%% %6lluns %8.3f%% %5.1fMiB\n",
	       hs_event_name(st->event_type, st->event_config),
	       hs_rate_str(st->flags, st->sample, rate, sizeof(rate)), st->nr_cpus,
	       (unsigned long long)st->samples, (unsigned long long)st->counted,
	       (unsigned long long)hs_sum_drops(st->drops), (unsigned long long)st->entries,
	       st->fill_pct, (unsigned long long)st->cost_ns, st->overhead_ppm / 1e4,
	       st->memory / 1048576.0);
	/* The sizes the drops for lack of room (table full, arena full) are of. */
	printf("     tables: %s\n", hs_tables_text(st->table_entries, st->arena_frames,
						   st->cpu_entries, sizes, sizeof(sizes)));
	if (st->budget_ppm)
		printf("     budget %.4g%%: %llu samples/s in the last window, %.3f%% of the CPUs, "
		       "a sample counts %u, %llu rate changes\n", st->budget_ppm / 1e4,
		       (unsigned long long)st->sample_rate, st->window_ppm / 1e4, st->weight,
		       (unsigned long long)st->rate_changes);
	if (st->flags & HOTSTACK_CFG_USER_TABLES)
		printf("     unwind tables: %.1f MiB, %llu user stacks walked, %.1f%% to their "
		       "outermost frame\n", st->uw_bytes / 1048576.0,
		       (unsigned long long)st->uw_walks,
		       st->uw_walks ? 100.0 * st->uw_complete / st->uw_walks : 0.0);
}

static void hs_print_json(const struct hs_status *st, struct hs_status_out *out)
{
	const char *state = hs_state_name(st->state), *event;
	int i;

	printf("%s\n  {\"id\": %u, \"owner\": %u, \"state\": ", out->count++ ? "," : "[",
	       st->id, st->owner);
	hs_json_str(stdout, state, strlen(state));
	if (st->configured) {
		event = hs_event_name(st->event_type, st->event_config);
		printf(", \"event\": ");
		hs_json_str(stdout, event, strlen(event));
		printf(", \"event_type\": %u, \"event_config\": %llu, "
		       "\"sample\": %llu, \"flags\": %u, \"stacks\": %u, \"max_depth\": %u, "
		       "\"keys\": %u, \"cpus\": %u, \"generation\": %llu, \"elapsed_ns\": %llu, "
		       "\"samples\": %llu, \"counted\": %llu, \"nmi_samples\": %llu, "
		       "\"truncated\": %llu, \"stacks_held\": %llu, \"capacity\": %llu, "
		       "\"fill_pct\": %u, \"cost_ns\": %llu, \"overhead_ppm\": %llu, "
		       "\"table_entries\": %u, \"arena_frames\": %llu, \"cpu_entries\": %u, "
		       "\"cpus_sampled\": %u, \"cpus_missed\": %u, \"budget_ppm\": %u, "
		       "\"sample_rate\": %llu, "
		       "\"window_ppm\": %llu, \"weight\": %u, \"rate_changes\": %llu, "
		       "\"uw_bytes\": %llu, \"uw_walks\": %llu, \"uw_complete\": %llu, "
		       "\"memory\": %llu, \"drops\": {",
		       st->event_type,
		       (unsigned long long)st->event_config, (unsigned long long)st->sample,
		       st->flags, st->stacks, st->max_depth, st->keys, st->nr_cpus,
		       (unsigned long long)st->generation, (unsigned long long)st->elapsed_ns,
		       (unsigned long long)st->samples, (unsigned long long)st->counted,
		       (unsigned long long)st->nmi_samples, (unsigned long long)st->truncated,
		       (unsigned long long)st->entries, (unsigned long long)st->capacity,
		       st->fill_pct, (unsigned long long)st->cost_ns,
		       (unsigned long long)st->overhead_ppm, st->table_entries,
		       (unsigned long long)st->arena_frames, st->cpu_entries, st->cpus_sampled,
		       st->cpus_missed, st->budget_ppm, (unsigned long long)st->sample_rate,
		       (unsigned long long)st->window_ppm, st->weight,
		       (unsigned long long)st->rate_changes, (unsigned long long)st->uw_bytes,
		       (unsigned long long)st->uw_walks, (unsigned long long)st->uw_complete,
		       (unsigned long long)st->memory);
		for (i = 0; i < HOTSTACK_DROP_MAX; i++) {
			const char *name = hs_drop_name(i);

			if (!strcmp(name, "unknown"))
				continue;
			printf("%s", i ? ", " : "");
			hs_json_str(stdout, name, strlen(name));
			printf(": %llu", (unsigned long long)st->drops[i]);
		}
		printf("}");
	}
	printf("}");
}

static void hs_status_cb(const struct hs_status *st, void *data)
{
	struct hs_status_out *out = data;

	if (out->json)
		hs_print_json(st, out);
	else
		hs_print_text(st, out);
}

int cmd_status(int argc, char **argv)
{
	static const struct hs_option options[] = {
		{ HS_OPT_LONG, "json", NULL, "a JSON array of objects with every counter, drops "
		  "by reason included" },
		HS_OPTION_END,
	};
	static const struct hs_option *const tables[] = { options, NULL };
	struct hs_status_out out = { 0 };
	struct hs_args a;
	struct hs_genl g;
	char *value;
	int ret, id;

	if (hs_args_init(&a, "status", "[OPTIONS]", "Every session of the module, one line "
			 "each: state, counters, cost (from its netlink family).", tables, 0,
			 argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END && id != HS_ARGS_EXIT)
		out.json = 1;
	if (id == HS_ARGS_END)
		hs_args_no_operands(&a);
	hs_args_free(&a);
	if (id == HS_ARGS_EXIT || a.status)
		return a.status;
	if (hs_genl_open(&g))
		return 1;
	ret = hs_genl_status(&g, 0, hs_status_cb, &out);
	hs_genl_close(&g);
	if (ret) {
		fprintf(stderr, "hotstack status: %s%s%s\n", strerror(-ret),
			g.error[0] ? ": " : "", g.error);
		return 1;
	}
	if (out.json)
		printf("%s\n", out.count ? "\n]" : "[]");
	else if (!out.count)
		printf("no hotstack sessions\n");
	return 0;
}
