// SPDX-License-Identifier: GPL-2.0
/* hotstack info: what the loaded module offers (HOTSTACK_IOC_GET_INFO). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "device.h"

int cmd_info(int argc, char **argv)
{
	struct hotstack_info info;
	int fd, err;

	if (argc > 1) {
		fprintf(stderr, "hotstack info: unexpected argument '%s'\n"
			"usage: hotstack info\n", argv[1]);
		return HS_EXIT_USAGE;
	}
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
	printf("memory limit: %llu MiB\n", (unsigned long long)(info.max_memory >> 20));
	printf("features:     0x%llx\n", (unsigned long long)info.features);
	return 0;
}
