// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest test program for /dev/hotstack: each subcommand prints TAP lines
 * ("ok - ..." / "not ok - ...") and exits non-zero if any check failed
 * (but runas and pty, which run a command and exit with its status).
 *
 *   hs_vmtest getinfo              every GET_INFO call, good and malformed
 *   hs_vmtest sessions MAX         MAX sessions open, the next one is EBUSY
 *   hs_vmtest open ok|ERRNO        opening the device succeeds / fails so
 *   hs_vmtest runas UID GID[,GID...] CMD ARGS...
 *                                  run CMD with those credentials, no caps
 *   hs_vmtest config-errors        every CONFIGURE / state / mmap misuse
 *   hs_vmtest workload DEPTH PATTERNS MS MAXDEPTH [collapse]
 *                                  sample hs_workload's known stacks and
 *                                  check exactly those were counted
 *   hs_vmtest userstack            a child's user stack, pid filter, keys
 *   hs_vmtest io-worker            an io_uring worker has no user frames
 *   hs_vmtest exec                 samples while a process execs
 *   hs_vmtest events               task-clock, page-faults, context-switches
 *   hs_vmtest rate                 page-faults by frequency: no burst at START
 *   hs_vmtest context              context key, exclude idle
 *   hs_vmtest delegated PID CPID   the group's policy (PID: another user's
 *                                  process; CPID: the user's own, with
 *                                  capabilities it lacks: uspin-caps)
 *   hs_vmtest precise              hs_nmi's PEBS-made registers: the precise
 *                                  IP, then the interrupted code's callers
 *   hs_vmtest quota-sessions       the users' and the group's sessions
 *                                  (max_sessions=3 group_max_sessions=1)
 *   hs_vmtest quota-use            the users' and the group's memory and
 *                                  rates (max_memory_mb=4
 *                                  group_max_memory_mb=2)
 *   hs_vmtest uspin-caps UID GID MS
 *                                  as UID and GID with root's permitted
 *                                  capabilities, spin in user mode MS ms
 *   hs_vmtest churn N              N sessions started and closed, fast
 *   hs_vmtest lifecycle            a refused CONFIGURE, read() across RESET
 *   hs_vmtest mmap-race            the mmap protocol against SNAPSHOT/RESET
 *   hs_vmtest read-live            read() while every CPU samples
 *   hs_vmtest memcg CGROUP         tables charged to the cgroup we run in
 *   hs_vmtest genl-status          netlink GET equals GET_STATS
 *   hs_vmtest genl-events          fill a small table (events for watch)
 *   hs_vmtest genl-errors          malformed netlink requests
 *   hs_vmtest genl-perm member|outsider  netlink as the group's member or not
 *   hs_vmtest genl-cred            GET on a socket another user opened
 *   hs_vmtest genl-dump            a dump in parts: DUMP_INTR, rmmod meanwhile
 *   hs_vmtest unload-mapped        rmmod with a mapping that outlived close()
 *   hs_vmtest hotplug EVENT        every CPU but 0 offline and back mid-run
 *   hs_vmtest hotplug-missed       a CPU that comes online after CONFIGURE
 *   hs_vmtest offline-event        STOP and close with an event queued on a
 *                                  CPU that went offline (hs_inject.ko)
 *   hs_vmtest budget EVENT         a CPU budget lowers the rate, counts weighted
 *   hs_vmtest tablefull            a full store, a full CPU count table, a
 *                                  full arena: drops, recovery
 *   hs_vmtest shared               one store for every CPU: a stack counted
 *                                  on two CPUs is stored once
 *   hs_vmtest store MS             every online CPU runs hs_workload's stacks
 *                                  at once, MS ms each: stored once, exact
 *   hs_vmtest store-memory         the tables' memory on 2, 8, 16, 64 CPUs
 *                                  against the formula
 *   hs_vmtest unknown              read() of an address no symbol covers (hs_nmi)
 *   hs_vmtest switchregs           the middle of a context switch
 *                                  (hs_nmi; frame-pointer kernels)
 *   hs_vmtest forkregs             a kernel thread before its first frame
 *                                  (hs_nmi; frame-pointer kernels)
 *   hs_vmtest badbpregs            an interrupt of code whose rbp is no frame
 *                                  pointer (hs_nmi; frame-pointer kernels)
 *   hs_vmtest hardirq              hardirq code under [hardirq] (an NMI sampler)
 *   hs_vmtest hold-keys            keep perf's software event keys and the
 *                                  sched tracepoints' static calls patched
 *                                  (the guest's init, before the tests)
 *   hs_vmtest stress ROUNDS        ROUNDS of NMIs to every CPU (hs_nmi)
 *                                  while sessions come and go, snapshots,
 *                                  resets, mmap readers and CPU hotplug
 *   hs_vmtest stress-pmu SECONDS   the same for SECONDS, with the PMU's
 *                                  overflow NMIs driving the sample path
 *   hs_vmtest pty SECONDS KEYS RAW -- CMD ARGS...
 *                                  run CMD on a 100x40 vt100 pseudo-terminal,
 *                                  type KEYS ("^C": Ctrl-C) SECONDS after its
 *                                  first output, each once the screen the
 *                                  last one drew is still (0.3 s without
 *                                  output); print the screen then, after
 *                                  each key and at the exit, what CMD wrote
 *                                  to RAW; exit with
 *                                  CMD's status, 124 if it took 10 s more
 *                                  (no TAP lines)
 *
 * The sessions sample $HS_EVENT (perf's spelling; default cpu-clock). With
 * a hardware event every sample must have been taken in NMI context; with
 * a software one (an hrtimer interrupt) none.
 */
#include "vmtest.h"

int main(int argc, char **argv)
{
	const char *event = getenv("HS_EVENT");
	char err[128];

	if (event && hs_parse_event(event, &test_event, err, sizeof(err))) {
		fprintf(stderr, "hs_vmtest: HS_EVENT=%s: %s\n", event, err);
		return 2;
	}
	if (argc >= 2 && !strcmp(argv[1], "getinfo"))
		test_getinfo();
	else if (argc == 3 && !strcmp(argv[1], "sessions"))
		test_sessions(strtoul(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "open"))
		test_open(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "config-errors"))
		test_config_errors();
	else if (argc >= 6 && !strcmp(argv[1], "workload"))
		test_workload(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
			      argc > 6 && !strcmp(argv[6], "collapse"));
	else if (argc == 3 && !strcmp(argv[1], "hotplug"))
		test_hotplug(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "budget"))
		test_budget(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "hotplug-missed"))
		test_hotplug_missed();
	else if (argc == 2 && !strcmp(argv[1], "offline-event"))
		test_offline_event();
	else if (argc == 2 && !strcmp(argv[1], "hardirq"))
		test_hardirq();
	else if (argc == 2 && !strcmp(argv[1], "hold-keys"))
		return hold_keys();
	else if (argc == 2 && !strcmp(argv[1], "unknown"))
		test_unknown();
	else if (argc == 2 && !strcmp(argv[1], "precise"))
		test_precise();
	else if (argc == 2 && !strcmp(argv[1], "forkregs"))
		test_forkregs();
	else if (argc == 2 && !strcmp(argv[1], "switchregs"))
		test_switchregs();
	else if (argc == 2 && !strcmp(argv[1], "badbpregs"))
		test_badbpregs();
	else if (argc == 2 && !strcmp(argv[1], "tablefull"))
		test_tablefull();
	else if (argc == 2 && !strcmp(argv[1], "shared"))
		test_shared();
	else if (argc == 3 && !strcmp(argv[1], "store"))
		test_store(strtoul(argv[2], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "store-memory"))
		test_store_memory();
	else if (argc == 3 && !strcmp(argv[1], "stress"))
		test_stress(strtoul(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "stress-pmu"))
		test_stress_pmu(strtoul(argv[2], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "userstack"))
		test_userstack();
	else if (argc == 2 && !strcmp(argv[1], "events"))
		test_events();
	else if (argc == 2 && !strcmp(argv[1], "rate"))
		test_rate();
	else if (argc == 3 && !strcmp(argv[1], "churn"))
		test_churn(strtoul(argv[2], NULL, 10));
	else if (argc == 2 && !strcmp(argv[1], "mmap-race"))
		test_mmap_race();
	else if (argc == 2 && !strcmp(argv[1], "read-live"))
		test_read_live();
	else if (argc == 2 && !strcmp(argv[1], "lifecycle"))
		test_lifecycle();
	else if (argc == 3 && !strcmp(argv[1], "memcg"))
		test_memcg(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "genl-status"))
		test_genl_status();
	else if (argc == 2 && !strcmp(argv[1], "genl-events"))
		test_genl_events();
	else if (argc == 2 && !strcmp(argv[1], "genl-errors"))
		test_genl_errors();
	else if (argc == 3 && !strcmp(argv[1], "genl-perm"))
		test_genl_perm(!strcmp(argv[2], "member"));
	else if (argc == 2 && !strcmp(argv[1], "genl-dump"))
		test_genl_dump();
	else if (argc == 2 && !strcmp(argv[1], "unload-mapped"))
		test_unload_mapped();
	else if (argc == 2 && !strcmp(argv[1], "genl-cred"))
		test_genl_cred();
	else if (argc == 2 && !strcmp(argv[1], "offcpu"))
		test_offcpu();
	else if (argc == 2 && !strcmp(argv[1], "context"))
		test_context();
	else if (argc == 2 && !strcmp(argv[1], "io-worker"))
		test_io_worker();
	else if (argc == 2 && !strcmp(argv[1], "exec"))
		test_exec();
	else if (argc == 4 && !strcmp(argv[1], "delegated"))
		test_delegated(atoi(argv[2]), atoi(argv[3]));
	else if (argc == 2 && !strcmp(argv[1], "quota-sessions"))
		test_quota_sessions();
	else if (argc == 2 && !strcmp(argv[1], "quota-use"))
		test_quota_use();
	else if (argc == 5 && !strcmp(argv[1], "uspin-caps"))
		return uspin_caps(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	else if (argc == 3 && !strcmp(argv[1], "uspin"))
		uspin(atoi(argv[2]));
	else if (argc == 5 && !strcmp(argv[1], "symbols"))
		test_symbols(atoi(argv[2]), argv[3], argv[4]);
	else if (argc == 4 && !strcmp(argv[1], "nap"))
		return nap(atoi(argv[2]), argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "naps"))
		naps(atoi(argv[2]));
	else if (argc == 6 && !strcmp(argv[1], "cgnaps"))
		return cgnaps(atoi(argv[2]), argv[3], atoi(argv[4]), atoi(argv[5]));
	else if (argc >= 3 && !strcmp(argv[1], "cgns"))
		return cgns(argv + 2);
	else if (argc >= 2 && !strcmp(argv[1], "runas"))
		return runas(argc - 2, argv + 2);
	else if (argc >= 7 && !strcmp(argv[1], "pty") && !strcmp(argv[5], "--"))
		return pty_run(atof(argv[2]), argv[3], argv[4], argv + 6);
	else {
		fprintf(stderr, "usage: hs_vmtest getinfo|sessions N|open ok|ERRNO|runas ...\n");
		return 2;
	}
	return failures ? 1 : 0;
}
