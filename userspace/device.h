/* SPDX-License-Identifier: GPL-2.0 */
/* hotstack tool: access to /dev/hotstack (open, ioctl). */
#ifndef HOTSTACK_DEVICE_H
#define HOTSTACK_DEVICE_H

#include <linux/hotstack.h>

/* The device node; the environment variable HOTSTACK_DEVICE overrides it. */
const char *hs_device_path(void);

/*
 * Open the device. On failure prints what went wrong and how to fix it
 * and returns -1.
 */
int hs_device_open(void);
/* What to tell a user whose module speaks @module_abi; NULL: this tool's. */
const char *hs_abi_mismatch(unsigned int module_abi);

/* One sentence saying why opening the device failed with @err, and the fix. */
const char *hs_open_error_hint(int err);

/* HOTSTACK_IOC_GET_INFO; returns 0 or -errno. */
int hs_get_info(int fd, struct hotstack_info *info);

#endif
