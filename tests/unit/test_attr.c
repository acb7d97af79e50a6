// SPDX-License-Identifier: GPL-2.0
/*
 * The perf_event_attr the module builds (module/attr.h) for every event the
 * tool offers (hs_event_names(), each with every precise level it takes),
 * by frequency and by period.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../module/attr.h"
#include "events.h"

/* The attribute of @spec, configured as record does it (session.c). */
static void attr_of(const char *spec, uint32_t flags, struct perf_event_attr *attr,
		    struct hs_event_spec *ev)
{
	struct hotstack_config c = { .size = sizeof(c) };
	char err[128];

	assert_int_equal(hs_parse_event(spec, ev, err, sizeof(err)), 0);
	c.flags = flags;
	c.sample = flags & HOTSTACK_CFG_FREQ ? 1000 : 100003;
	c.event_type = ev->type;
	c.event_config = ev->config;
	c.precise = ev->precise;
	hs_event_attr(&c, attr);
}

static void every_event(void **state)
{
	static const char *const mods[] = { "", ":p", ":pp", ":ppp", ":k", ":ppk" };
	char names[256], *name, *save, spec[64];
	unsigned int checked = 0, m, f;

	(void)state;
	snprintf(names, sizeof(names), "%s", hs_event_names());
	for (name = strtok_r(names, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
		/* "rNNNN (raw, hex)": a raw event, and words about it. */
		if (!strcmp(name, "rNNNN"))
			name = "r00c0";
		else if (strpbrk(name, "()"))
			continue;
		for (m = 0; m < sizeof(mods) / sizeof(mods[0]); m++) {
			struct hs_event_spec ev;
			struct perf_event_attr attr;
			char err[128];

			snprintf(spec, sizeof(spec), "%s%s", name, mods[m]);
			/* Software events take no precise level: the tool refuses them. */
			if (hs_parse_event(spec, &ev, err, sizeof(err)))
				continue;
			for (f = 0; f < 2; f++) {
				attr_of(spec, f ? HOTSTACK_CFG_FREQ : 0, &attr, &ev);
				assert_int_equal(attr.size, sizeof(attr));
				assert_int_equal(attr.type, ev.type);
				assert_int_equal(attr.config, ev.config);
				assert_int_equal(attr.freq, f);
				assert_int_equal(attr.precise_ip, ev.precise);
				/*
				 * Large PEBS needs a fixed period, no wakeup_events (or a
				 * watermark) and sample_type bits only of its own.
				 */
				if (attr.precise_ip)
					assert_true(attr.wakeup_events && !attr.watermark);
				assert_int_equal(attr.exclude_guest, ev.type != PERF_TYPE_SOFTWARE);
				/* The module reads nothing of a sample but its registers. */
				assert_int_equal(attr.sample_type, 0);
				checked++;
			}
		}
	}
	/* 4 software events with 2 of the modifiers; 4 hardware and raw with all 6. */
	assert_int_equal(checked, 2 * (4 * 2 + 5 * 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_event),
	};

	return cmocka_run_group_tests_name("attr", tests, NULL, NULL);
}
