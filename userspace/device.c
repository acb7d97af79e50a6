// SPDX-License-Identifier: GPL-2.0
/* hotstack tool: access to /dev/hotstack (open, ioctl). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "device.h"

const char *hs_device_path(void)
{
	const char *p = getenv("HOTSTACK_DEVICE");

	return p && *p ? p : "/dev/hotstack";
}

const char *hs_open_error_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return "the hotstack module is not loaded: load it with "
		       "'modprobe hotstack' (DKMS) or 'insmod hotstack.ko'";
	case EACCES:
	case EPERM:
		return "permission denied: run as root (or with CAP_PERFMON), or "
		       "load the module with group=GID and join that group";
	case EBUSY:
		return "too many hotstack sessions are open: close one, or "
		       "reload the module with a larger max_sessions";
	case EDQUOT:
		return "this user holds all the hotstack sessions it may (module "
		       "parameter group_max_sessions; the group as a whole, three "
		       "quarters of max_sessions): close one, or run as root";
	case ENOMEM:
		return "the kernel is out of memory";
	default:
		return NULL;
	}
}

const char *hs_abi_mismatch(unsigned int module_abi)
{
	if (module_abi > HOTSTACK_ABI_VERSION)
		return "the hotstack module is newer than this tool: install the tool "
		       "of the module's release";
	if (module_abi < HOTSTACK_ABI_VERSION)
		return "the hotstack module is older than this tool: install the module "
		       "of the tool's release (dkms, or insmod its hotstack.ko)";
	return NULL;
}

/*
 * The device, once it has said which ABI it speaks: one tool works with
 * the module of its release on every kernel, and says so when it meets
 * another release's.
 */
int hs_device_open(void)
{
	const char *path = hs_device_path();
	struct hotstack_info info;
	const char *hint;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, "hotstack: cannot open %s: %s\n", path, strerror(err));
		hint = hs_open_error_hint(err);
		if (hint)
			fprintf(stderr, "hotstack: %s\n", hint);
		return -1;
	}
	err = -hs_get_info(fd, &info);
	if (err == ENOTTY || err == EINVAL) {
		fprintf(stderr, "hotstack: %s is not a hotstack device (%s)\n", path,
			strerror(err));
	} else if (!err && (hint = hs_abi_mismatch(info.abi_version))) {
		fprintf(stderr, "hotstack: %s speaks ABI %u, this tool ABI %u: %s\n", path,
			info.abi_version, HOTSTACK_ABI_VERSION, hint);
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

int hs_get_info(int fd, struct hotstack_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, HOTSTACK_IOC_GET_INFO, info) ? -errno : 0;
}
