// SPDX-License-Identifier: GPL-2.0
/*
 * Everything at once while NMIs drive the sample path.
 */
#include "vmtest.h"

static volatile int stress_stop;
/*
 * hs_nmi's NMIs drive the sample path: the sessions' own event (cpu-clock)
 * then fires once in 1000 s, so every sample they count comes from an NMI.
 */
static bool stress_quiet_event;

static void stress_config(struct hotstack_config *c)
{
	default_config(c);
	if (stress_quiet_event) {
		c->flags = 0;
		c->sample = 1000000000000ULL;
	}
}

static unsigned long stress_bad, stress_snapshots, stress_sessions, stress_hotplugs;
static unsigned long long stress_nmi_samples, stress_samples;

static void *stress_churn(void *arg)
{
	struct hotstack_config c;

	(void)arg;
	while (!stress_stop) {
		int fd = open("/dev/hotstack", O_RDWR);

		if (fd < 0)
			continue;
		stress_config(&c);
		c.table_entries = 16;
		c.cpu_entries = 16;
		c.keys = HOTSTACK_KEY_ALL;
		if (!xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) && !xioctl(fd, HOTSTACK_IOC_START, NULL))
			__atomic_add_fetch(&stress_sessions, 1, __ATOMIC_RELAXED);
		msleep(5);
		if (stress_sessions & 1)
			xioctl(fd, HOTSTACK_IOC_STOP, NULL);
		close(fd);	/* sometimes still running */
	}
	return NULL;
}

static void *stress_snap(void *arg)
{
	struct hotstack_config c;
	struct hotstack_stats st;
	struct gen_view v;
	struct map m;
	bool sound;
	int fd = open_dev(), i = 0;

	(void)arg;
	stress_config(&c);
	c.table_entries = 64;
	c.cpu_entries = 64;
	c.keys = HOTSTACK_KEY_CONTEXT;
	if (xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) || map_session(fd, &m) ||
	    xioctl(fd, HOTSTACK_IOC_START, NULL)) {
		stress_bad++;
		return NULL;
	}
	while (!stress_stop) {
		msleep(10);
		if (xioctl(fd, HOTSTACK_IOC_SNAPSHOT, NULL)) {
			stress_bad++;
			continue;
		}
		stress_snapshots++;
		/* The readable generation is quiet: the invariant is exact. */
		get_stats(fd, &st, HOTSTACK_STATS_READABLE);
		stress_nmi_samples += st.total.nmi_samples;
		stress_samples += st.total.samples;
		/* The store and every CPU's counts sound, as GET_STATS says them. */
		sound = gen_walk(&m, m.h->readable, &v, stress_bad < 5 ? "stress snapshot" : NULL);
		if (!sound || st.total.samples != st.total.counted + hs_sum_drops(st.total.drops) ||
		    v.counted != st.total.counted || v.stacks != st.total.entries ||
		    v.sum.samples != st.total.samples) {
			if (stress_bad++ < 5)
				printf("#   snapshot %lu: samples %llu counted %llu drops %llu "
				       "entries %llu; mmap: counts %llu, samples %llu, "
				       "stacks %llu, %s\n", stress_snapshots,
				       (unsigned long long)st.total.samples,
				       (unsigned long long)st.total.counted,
				       (unsigned long long)hs_sum_drops(st.total.drops),
				       (unsigned long long)st.total.entries,
				       (unsigned long long)v.counted,
				       (unsigned long long)v.sum.samples,
				       (unsigned long long)v.stacks, sound ? "sound" : "unsound");
		}
		switch (++i % 16) {
		case 5:
			xioctl(fd, HOTSTACK_IOC_RESET, NULL);
			break;
		case 9:
			xioctl(fd, HOTSTACK_IOC_STOP, NULL);
			xioctl(fd, HOTSTACK_IOC_START, NULL);
			break;
		}
	}
	xioctl(fd, HOTSTACK_IOC_STOP, NULL);
	munmap(m.base, m.size);
	close(fd);
	return NULL;
}

static void *stress_hotplug(void *arg)
{
	(void)arg;
	while (!stress_stop) {
		msleep(50);
		if (set_online(1, 0) == 0) {
			msleep(50);
			set_online(1, 1);
			stress_hotplugs++;
		}
	}
	set_online(1, 1);
	return NULL;
}

/* The stress threads for @seconds, the PMU's overflow NMIs sampling. */
void test_stress_pmu(unsigned int seconds)
{
	pthread_t churn, snap, hotplug;
	time_t end = time(NULL) + seconds;
	volatile unsigned long spin = 0;

	pthread_create(&churn, NULL, stress_churn, NULL);
	pthread_create(&snap, NULL, stress_snap, NULL);
	pthread_create(&hotplug, NULL, stress_hotplug, NULL);
	while (time(NULL) < end)
		spin++;
	stress_stop = 1;
	pthread_join(churn, NULL);
	pthread_join(snap, NULL);
	pthread_join(hotplug, NULL);
	tap(stress_snapshots > 10 && stress_sessions > 10 && stress_hotplugs > 2,
	    "stress-pmu: %lu snapshots, %lu sessions, %lu hotplug cycles", stress_snapshots,
	    stress_sessions, stress_hotplugs);
	tap(stress_bad == 0, "stress-pmu: the invariant held in every snapshot (%lu failures)",
	    stress_bad);
	tap(stress_samples > 1000 && stress_nmi_samples == stress_samples,
	    "stress-pmu: the snapshots counted %llu samples, %llu of them in NMI context",
	    stress_samples, stress_nmi_samples);
}

void test_stress(unsigned long rounds)
{
	pthread_t churn, snap, hotplug;
	unsigned long long sent = 0, handled = 0, in_nmi = 0;
	unsigned long done;
	char buf[64];
	int fd;

	stress_quiet_event = true;
	pthread_create(&churn, NULL, stress_churn, NULL);
	pthread_create(&snap, NULL, stress_snap, NULL);
	pthread_create(&hotplug, NULL, stress_hotplug, NULL);
	fd = open("/proc/hs_nmi", O_RDWR);
	for (done = 0; fd >= 0 && done < rounds; done += 10000) {
		int n = snprintf(buf, sizeof(buf), "%lu", 10000UL);

		if (write(fd, buf, n) != n) {
			printf("#   /proc/hs_nmi: %s\n", strerror(errno));
			break;
		}
	}
	stress_stop = 1;
	pthread_join(churn, NULL);
	pthread_join(snap, NULL);
	pthread_join(hotplug, NULL);
	if (fd >= 0) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		sscanf(buf, "%llu %llu %llu", &sent, &handled, &in_nmi);
		close(fd);
	}
	tap(done >= rounds, "stress: %lu NMI rounds sent to every CPU", done);
	tap(sent >= rounds && handled == sent && in_nmi == handled,
	    "stress: %llu NMIs sent, %llu handled (hs_nmi's handler, %llu in NMI context)", sent,
	    handled, in_nmi);
	tap(stress_snapshots > 10 && stress_sessions > 10 && stress_hotplugs > 2,
	    "stress: %lu snapshots, %lu sessions, %lu hotplug cycles", stress_snapshots,
	    stress_sessions, stress_hotplugs);
	tap(stress_bad == 0, "stress: the invariant held in every snapshot (%lu failures)",
	    stress_bad);
	tap(stress_samples > 0 && stress_nmi_samples == stress_samples,
	    "stress: the module took all %llu samples the snapshots counted in NMI context (%llu)",
	    stress_samples, stress_nmi_samples);
}
