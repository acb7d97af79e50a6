/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hotstack: in-kernel aggregating stack sampler -- user ABI.
 *
 * This header is the manual of the ABI between the hotstack module and
 * its users. Everything here is stable once released; it only grows.
 *
 * Device
 * ------
 * /dev/hotstack is a misc device, root-only unless the module parameter
 * "group" names a group whose members may open it too. Each open file is
 * one session: its configuration, counters and tables live and die with
 * the file.
 *
 * ioctl conventions
 * -----------------
 * Every ioctl argument is a struct whose first field is "size": the
 * caller sets it to sizeof() the struct as the caller's header defines
 * it. The module accepts any size from the first published version of
 * the struct (HOTSTACK_*_SIZE_VER0) up to one page:
 *   - a caller struct larger than the module's is accepted only if the
 *     bytes the module does not know are zero (else E2BIG);
 *   - a caller struct smaller than the module's is zero-extended.
 * Output is written back up to min(caller size, module size) bytes.
 * The size encoded in the ioctl command number is ignored; "size" rules.
 *
 * Every "flags" bit not defined here and every "reserved" field must be
 * zero on input (else EINVAL), so that they can gain meaning later.
 * Unknown commands fail with ENOTTY.
 */
#ifndef _UAPI_LINUX_HOTSTACK_H
#define _UAPI_LINUX_HOTSTACK_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped when the ABI changes incompatibly; it never has. */
#define HOTSTACK_ABI_VERSION	1

/* Deepest stack, in frames, a session may ask for. */
#define HOTSTACK_MAX_DEPTH	1024

/**
 * struct hotstack_info - HOTSTACK_IOC_GET_INFO: what this module offers
 * @size:	in: sizeof(struct hotstack_info)
 * @flags:	in: must be 0
 * @abi_version: out: HOTSTACK_ABI_VERSION of the module
 * @max_sessions: out: how many sessions may be open at once
 *		(module parameter max_sessions)
 * @nr_sessions: out: how many sessions are open now, this one included
 * @max_depth:	out: deepest stack a session may ask for, in frames
 * @max_memory:	out: bytes all sessions' tables may take together
 *		(module parameter max_memory_mb)
 * @features:	out: HOTSTACK_FEAT_* bits; bits not defined are 0
 * @reserved:	in: must be 0; out: 0
 *
 * Works in any session state and never changes one.
 */
struct hotstack_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 max_sessions;
	__u32 nr_sessions;
	__u32 max_depth;
	__u64 max_memory;
	__u64 features;
	__u64 reserved[4];
};

#define HOTSTACK_INFO_SIZE_VER0	72	/* sizeof first published */

#define HOTSTACK_IOC_MAGIC	0xB2	/* unused in ioctl-number.rst */

#define HOTSTACK_IOC_GET_INFO	_IOWR(HOTSTACK_IOC_MAGIC, 0x00, struct hotstack_info)

#endif /* _UAPI_LINUX_HOTSTACK_H */
