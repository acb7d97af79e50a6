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
	case ENOMEM:
		return "the kernel is out of memory";
	default:
		return NULL;
	}
}

int hs_device_open(void)
{
	const char *path = hs_device_path();
	const char *hint;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	err = errno;
	fprintf(stderr, "hotstack: cannot open %s: %s\n", path, strerror(err));
	hint = hs_open_error_hint(err);
	if (hint)
		fprintf(stderr, "hotstack: %s\n", hint);
	return -1;
}

int hs_get_info(int fd, struct hotstack_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, HOTSTACK_IOC_GET_INFO, info) ? -errno : 0;
}
