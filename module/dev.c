// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: file operations of /dev/hotstack -- open, release, ioctl.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/hotstack.h>

#include "hotstack.h"

atomic_t hotstack_nr_sessions = ATOMIC_INIT(0);

/* The command with its size bits cleared: the struct's own size field rules. */
#define HOTSTACK_IOC_NOSIZE(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static bool hotstack_may_open(void)
{
	if (perfmon_capable())
		return true;
	return gid_valid(hotstack_group) && in_group_p(hotstack_group);
}

static int hotstack_open(struct inode *inode, struct file *file)
{
	struct hotstack_session *s;

	if (!hotstack_may_open())
		return -EPERM;
	if (atomic_inc_return(&hotstack_nr_sessions) > hotstack_max_sessions) {
		atomic_dec(&hotstack_nr_sessions);
		return -EBUSY;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		atomic_dec(&hotstack_nr_sessions);
		return -ENOMEM;
	}
	mutex_init(&s->lock);
	file->private_data = s;
	return nonseekable_open(inode, file);
}

static int hotstack_release(struct inode *inode, struct file *file)
{
	struct hotstack_session *s = file->private_data;

	mutex_destroy(&s->lock);
	kfree(s);
	atomic_dec(&hotstack_nr_sessions);
	return 0;
}

/*
 * Read a size-first ioctl struct of @ksize bytes whose first published
 * version had @ver0 bytes. Returns the caller's size or -errno.
 */
static int hotstack_copy_in(void *dst, size_t ksize, size_t ver0,
			    const void __user *uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ver0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(dst, ksize, uarg, usize);
	return ret ? ret : usize;
}

static int hotstack_copy_out(void __user *uarg, const void *src, size_t ksize,
			     size_t usize)
{
	return copy_to_user(uarg, src, min(ksize, usize)) ? -EFAULT : 0;
}

static long hotstack_get_info(void __user *uarg)
{
	struct hotstack_info info;
	int usize;

	usize = hotstack_copy_in(&info, sizeof(info), HOTSTACK_INFO_SIZE_VER0, uarg);
	if (usize < 0)
		return usize;
	if (info.flags || memchr_inv(info.reserved, 0, sizeof(info.reserved)))
		return -EINVAL;

	info.abi_version = HOTSTACK_ABI_VERSION;
	info.max_sessions = hotstack_max_sessions;
	info.nr_sessions = atomic_read(&hotstack_nr_sessions);
	info.max_depth = HOTSTACK_MAX_DEPTH;
	info.max_memory = (u64)hotstack_max_memory_mb << 20;
	info.features = 0;
	return hotstack_copy_out(uarg, &info, sizeof(info), usize);
}

static long hotstack_ioctl_locked(struct hotstack_session *s, unsigned int cmd,
				  void __user *uarg)
{
	lockdep_assert_held(&s->lock);

	switch (HOTSTACK_IOC_NOSIZE(cmd)) {
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_GET_INFO):
		return hotstack_get_info(uarg);
	default:
		return -ENOTTY;
	}
}

static long hotstack_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hotstack_session *s = file->private_data;
	long ret;

	mutex_lock(&s->lock);
	ret = hotstack_ioctl_locked(s, cmd, (void __user *)arg);
	mutex_unlock(&s->lock);
	return ret;
}

const struct file_operations hotstack_fops = {
	.owner = THIS_MODULE,
	.open = hotstack_open,
	.release = hotstack_release,
	.unlocked_ioctl = hotstack_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};
