/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hotstack: definitions shared by the module's files.
 */
#ifndef _HOTSTACK_H
#define _HOTSTACK_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/uidgid.h>

/* Module parameters, fixed once the module is loaded (main.c). */
extern unsigned int hotstack_max_sessions;
extern unsigned int hotstack_max_memory_mb;
extern kgid_t hotstack_group;

/* Sessions open now, bounded by hotstack_max_sessions (dev.c). */
extern atomic_t hotstack_nr_sessions;

/*
 * struct hotstack_session - one open file of /dev/hotstack
 *
 * Lifecycle: created by open(), freed by release(); nothing outlives the
 * file. The engine adds the configure/start/stop states.
 */
struct hotstack_session {
	struct mutex lock;	/* serialises this session's ioctls */
};

extern const struct file_operations hotstack_fops;

#endif /* _HOTSTACK_H */
