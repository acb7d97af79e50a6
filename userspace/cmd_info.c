// SPDX-License-Identifier: GPL-2.0
/* hotstack info: what the loaded module offers (HOTSTACK_IOC_GET_INFO). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "device.h"
#include "options.h"

int cmd_info(int argc, char **argv)
{
	static const struct hs_option *const tables[] = { NULL };
	struct hotstack_info info;
	struct hs_args a;
	char *value;
	int fd, err, id;

	if (hs_args_init(&a, "info", "", "What the loaded module offers: its ABI version, "
			 "sessions, limits and features.", tables, 0, argc, argv))
		return 1;
	while ((id = hs_args_next(&a, &value)) != HS_ARGS_END && id != HS_ARGS_EXIT)
		;
	if (id == HS_ARGS_END)
		hs_args_no_operands(&a);
	hs_args_free(&a);
	if (id == HS_ARGS_EXIT || a.status)
		return a.status;
	fd = hs_device_open();
	if (fd < 0)
		return 1;
	err = hs_get_info(fd, &info);
	close(fd);
	if (err) {
		fprintf(stderr, "hotstack info: GET_INFO failed: %s\n", strerror(-err));
		return 1;
	}
	printf("abi version:  %u (this tool: %u)\n", info.abi_version, HOTSTACK_ABI_VERSION);
	printf("sessions:     %u open, at most %u\n", info.nr_sessions, info.max_sessions);
	printf("max depth:    %u frames\n", info.max_depth);
	printf("tables:       %.1f of %llu MiB\n", info.memory_used / 1048576.0,
	       (unsigned long long)(info.max_memory >> 20));
	printf("unwind:       %.1f of %llu MiB\n", info.unwind_used / 1048576.0,
	       (unsigned long long)(info.max_unwind >> 20));
	printf("features:    %s%s%s%s\n",
	       info.features & HOTSTACK_FEAT_USER_TABLES ? " user-tables" : "",
	       info.features & HOTSTACK_FEAT_CGROUP_PATH ? " cgroup-paths" : "",
	       info.features & HOTSTACK_FEAT_WAKERS ? " wakers" : "",
	       info.features & (HOTSTACK_FEAT_USER_TABLES | HOTSTACK_FEAT_CGROUP_PATH |
				HOTSTACK_FEAT_WAKERS) ? "" : " none");
	if (info.user_max_sessions)
		printf("user quota:   %u of %u sessions, %llu of %llu MiB, %u of %u Hz\n",
		       info.user_sessions, info.user_max_sessions,
		       (unsigned long long)(info.user_memory_used >> 20),
		       (unsigned long long)(info.user_max_memory >> 20), info.user_freq_used,
		       info.max_freq);
	else
		printf("user quota:   none (CAP_PERFMON)\n");
	return 0;
}
