// SPDX-License-Identifier: GPL-2.0
/*
 * hotstack: file operations of /dev/hotstack -- open, release, ioctl,
 * read (folded.c does the text) and mmap.
 */
#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/hotstack.h>

#include "hotstack.h"

atomic_t hotstack_nr_sessions = ATOMIC_INIT(0);

/* The command with its size bits cleared: the struct's own size field rules. */
#define HOTSTACK_IOC_NOSIZE(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

bool hotstack_may_open(void)
{
	if (perfmon_capable())
		return true;
	return gid_valid(hotstack_group) && in_group_p(hotstack_group);
}

/* in_group_p() of credentials other than the caller's. */
static bool hs_cred_in_group(const struct cred *cred, kgid_t gid)
{
	const struct group_info *gi = cred->group_info;
	int i;

	if (gid_eq(cred->fsgid, gid))
		return true;
	for (i = 0; gi && i < gi->ngroups; i++)
		if (gid_eq(gi->gid[i], gid))
			return true;
	return false;
}

bool hotstack_file_may_open(const struct file *file)
{
	if (file_ns_capable(file, &init_user_ns, CAP_PERFMON) ||
	    file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN))
		return true;
	return gid_valid(hotstack_group) && hs_cred_in_group(file->f_cred, hotstack_group);
}

static int hotstack_open(struct inode *inode, struct file *file)
{
	struct hotstack_session *s;
	struct hs_user *user;
	int ret = -ENOMEM;

	if (!hotstack_may_open())
		return -EPERM;
	if (atomic_inc_return(&hotstack_nr_sessions) > hotstack_max_sessions) {
		atomic_dec(&hotstack_nr_sessions);
		return -EBUSY;
	}
	user = hotstack_user_get();
	if (IS_ERR(user)) {
		ret = PTR_ERR(user);
		goto out;
	}
	s = hotstack_session_new(task_tgid(current));
	if (!s) {
		hotstack_user_put(user);
		goto out;
	}
	s->user = user;
	file->private_data = s;
	return nonseekable_open(inode, file);
out:
	atomic_dec(&hotstack_nr_sessions);
	return ret;
}

static int hotstack_release(struct inode *inode, struct file *file)
{
	struct hotstack_session *s = file->private_data;
	struct hs_user *user = s->user;

	hotstack_session_free(s);
	hotstack_user_put(user);
	atomic_dec(&hotstack_nr_sessions);
	return 0;
}

/*
 * Read a size-first ioctl struct of @ksize bytes whose first published
 * version had @ver0 bytes. Returns the caller's size or -errno.
 */
int hotstack_copy_in(void *dst, size_t ksize, size_t ver0, const void __user *uarg)
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

int hotstack_copy_out(void __user *uarg, const void *src, size_t ksize, size_t usize)
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
	info.memory_used = atomic64_read(&hotstack_memory);
	info.max_freq = perfmon_capable() ? HOTSTACK_MAX_FREQ : hotstack_group_max_freq;
	info.pad = 0;
	info.features = HOTSTACK_FEAT_USER_TABLES | HOTSTACK_FEAT_CGROUP_PATH |
			(hotstack_off_cpu_supported(false, true) ? HOTSTACK_FEAT_WAKERS : 0);
	info.max_unwind = (u64)hotstack_max_unwind_mb << 20;
	info.unwind_used = atomic64_read(&hotstack_unwind_memory);
	hotstack_user_info(&info);
	return hotstack_copy_out(uarg, &info, sizeof(info), usize);
}

/* A cgroup's path by its id: the module's name for it (cgnames.c). */
static long hotstack_ioc_cgroup_path(void __user *uarg)
{
	struct hotstack_cgroup_path *cp;
	bool gone;
	int usize, ret;

	cp = kmalloc(sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return -ENOMEM;
	usize = hotstack_copy_in(cp, sizeof(*cp), HOTSTACK_CGROUP_PATH_SIZE_VER0, uarg);
	ret = usize < 0 ? usize : 0;
	if (!ret && (cp->flags || memchr_inv(cp->reserved, 0, sizeof(cp->reserved))))
		ret = -EINVAL;
	if (!ret)
		ret = hotstack_cgroup_path(cp->id, cp->path, &gone);
	if (ret >= 0) {
		cp->flags = gone ? HOTSTACK_CGROUP_GONE : 0;
		ret = hotstack_copy_out(uarg, cp, sizeof(*cp), usize);
	}
	kfree(cp);
	return ret;
}

/* Largest CPU bitmap accepted, in words: more than any kernel's NR_CPUS. */
#define HS_MAX_CPU_WORDS	1024

/* The CPU mask of a CONFIGURE: every bit a possible CPU, at least one. */
static int hotstack_read_cpus(const struct hotstack_config *c, struct cpumask *mask)
{
	unsigned int words = c->cpus_words, bits = words * 64, cpu;
	unsigned long *bitmap;
	u64 *arr;
	int ret = 0;

	if (!c->cpus_ptr && !words) {
		cpumask_copy(mask, cpu_possible_mask);
		return 0;
	}
	if (!c->cpus_ptr || !words || words > HS_MAX_CPU_WORDS)
		return -EINVAL;
	arr = memdup_user(u64_to_user_ptr(c->cpus_ptr), words * sizeof(u64));
	if (IS_ERR(arr))
		return PTR_ERR(arr);
	bitmap = bitmap_zalloc(bits, GFP_KERNEL);
	if (!bitmap) {
		kfree(arr);
		return -ENOMEM;
	}
	bitmap_from_arr64(bitmap, arr, bits);
	kfree(arr);
	cpumask_clear(mask);
	for_each_set_bit(cpu, bitmap, bits) {
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
			ret = -EINVAL;
			goto out;
		}
		cpumask_set_cpu(cpu, mask);
	}
	if (cpumask_empty(mask))
		ret = -EINVAL;
out:
	bitmap_free(bitmap);
	return ret;
}

/* The cgroups of a CONFIGURE: a reference to each, none on failure. */
static int hotstack_read_cgroups(const struct hotstack_config *c, struct hs_cgroups *g)
{
	s32 fds[HOTSTACK_MAX_CGROUPS];
	unsigned int i;

	g->nr = 0;
	if (!c->cgroups_ptr && !c->nr_cgroups)
		return 0;
	if (!c->cgroups_ptr || !c->nr_cgroups || c->nr_cgroups > HOTSTACK_MAX_CGROUPS)
		return -EINVAL;
	if (copy_from_user(fds, u64_to_user_ptr(c->cgroups_ptr), c->nr_cgroups * sizeof(fds[0])))
		return -EFAULT;
	for (i = 0; i < c->nr_cgroups; i++) {
		/* EBADF: not a cgroup v2 directory. */
		struct cgroup *cg = hs_cgroup_get_fd(fds[i]);

		if (IS_ERR(cg)) {
			hs_cgroups_put(g);
			return PTR_ERR(cg);
		}
		g->cg[g->nr++] = cg;
	}
	return 0;
}

static long hotstack_ioc_configure(struct hotstack_session *s, void __user *uarg)
{
	struct hotstack_config cfg;
	struct hs_cgroups *cgroups;
	cpumask_var_t mask;
	int ret;

	ret = hotstack_copy_in(&cfg, sizeof(cfg), HOTSTACK_CONFIG_SIZE_VER0, uarg);
	if (ret < 0)
		return ret;
	/* Not given (0, or a struct from before it): as many as the store. */
	if (!cfg.cpu_entries)
		cfg.cpu_entries = cfg.table_entries;
	cgroups = kzalloc(sizeof(*cgroups), GFP_KERNEL);
	if (!cgroups)
		return -ENOMEM;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL)) {
		kfree(cgroups);
		return -ENOMEM;
	}
	ret = hotstack_read_cpus(&cfg, mask) ?: hotstack_read_cgroups(&cfg, cgroups);
	if (!ret) {
		mutex_lock(&s->lock);
		ret = hotstack_configure(s, &cfg, mask, cgroups);
		mutex_unlock(&s->lock);
	}
	/* Refused: the new ones; configured: those it had before. */
	hs_cgroups_put(cgroups);
	kfree(cgroups);
	free_cpumask_var(mask);
	return ret;
}

static long hotstack_ioc_get_stats(struct hotstack_session *s, void __user *uarg)
{
	struct hotstack_stats st;
	int usize;

	usize = hotstack_copy_in(&st, sizeof(st), HOTSTACK_STATS_SIZE_VER0, uarg);
	if (usize < 0)
		return usize;
	if (st.flags & ~HOTSTACK_STATS_READABLE)
		return -EINVAL;
	mutex_lock(&s->lock);
	hotstack_get_stats(s, &st, st.flags & HOTSTACK_STATS_READABLE ? !s->active : s->active);
	mutex_unlock(&s->lock);
	return hotstack_copy_out(uarg, &st, sizeof(st), usize);
}

/* START, STOP, RESET, SNAPSHOT: the state changes, under the session lock. */
static long hotstack_ioctl_locked(struct hotstack_session *s, unsigned int cmd)
{
	lockdep_assert_held(&s->lock);

	if (s->state == HOTSTACK_STATE_NEW)
		return -EINVAL;
	switch (cmd) {
	case HOTSTACK_IOC_START:
		return hotstack_start(s);
	case HOTSTACK_IOC_STOP:
		if (s->state != HOTSTACK_STATE_RUNNING)
			return -EINVAL;
		hotstack_stop(s);
		return 0;
	case HOTSTACK_IOC_RESET:
		hotstack_swap(s, true);
		return 0;
	default: /* HOTSTACK_IOC_SNAPSHOT */
		hotstack_swap(s, false);
		return 0;
	}
}

/*
 * No user memory is touched under the session lock: mmap() takes it under
 * mmap_lock, and a fault under it would take mmap_lock.
 */
static long hotstack_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hotstack_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	switch (HOTSTACK_IOC_NOSIZE(cmd)) {
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_GET_INFO):
		return hotstack_get_info(uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_CONFIGURE):
		return hotstack_ioc_configure(s, uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_GET_STATS):
		return hotstack_ioc_get_stats(s, uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_ADD_TABLE):
		return hotstack_ioc_add_table(s, uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_SET_MAPS):
		return hotstack_ioc_set_maps(s, uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_UNWIND_MISSES):
		return hotstack_ioc_unwind_misses(s, uarg);
	case HOTSTACK_IOC_NOSIZE(HOTSTACK_IOC_CGROUP_PATH):
		return hotstack_ioc_cgroup_path(uarg);
	}

	/* The commands without an argument want it 0, so it can gain one. */
	switch (cmd) {
	case HOTSTACK_IOC_START:
	case HOTSTACK_IOC_STOP:
	case HOTSTACK_IOC_RESET:
	case HOTSTACK_IOC_SNAPSHOT:
		if (arg)
			return -EINVAL;
		break;
	default:
		return -ENOTTY;
	}
	mutex_lock(&s->lock);
	ret = hotstack_ioctl_locked(s, cmd);
	mutex_unlock(&s->lock);
	return ret;
}

static ssize_t hotstack_fread(struct file *file, char __user *buf, size_t count,
			      loff_t *ppos)
{
	struct hotstack_session *s = file->private_data;
	ssize_t ret;

	/* read_lock, not lock: copying out may fault (see hotstack_ioctl). */
	mutex_lock(&s->read_lock);
	ret = hotstack_read(&s->reader, s, buf, count);
	mutex_unlock(&s->read_lock);
	return ret;
}

static void hotstack_vm_open(struct vm_area_struct *vma)
{
	struct hotstack_session *s = vma->vm_private_data;

	atomic_inc(&s->mmaps);
}

static void hotstack_vm_close(struct vm_area_struct *vma)
{
	struct hotstack_session *s = vma->vm_private_data;

	atomic_dec(&s->mmaps);
}

/* Moving the mapping would skip open/close: refuse it. */
static int hotstack_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct hotstack_vm_ops = {
	.open = hotstack_vm_open,
	.close = hotstack_vm_close,
	.mremap = hotstack_vm_mremap,
};

static int hotstack_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hotstack_session *s = file->private_data;
	int ret;

	/* The tables hold raw kernel addresses (KASLR). */
	if (!perfmon_capable() && !capable(CAP_SYSLOG))
		return -EPERM;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	mutex_lock(&s->lock);
	if (!s->tabs.buf)
		ret = -EINVAL;
	else if (vma->vm_pgoff || vma->vm_end - vma->vm_start != s->tabs.size)
		ret = -EINVAL;
	else
		ret = remap_vmalloc_range(vma, s->tabs.buf, 0);
	if (!ret) {
		hs_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
		vma->vm_ops = &hotstack_vm_ops;
		vma->vm_private_data = s;
		atomic_inc(&s->mmaps);
	}
	mutex_unlock(&s->lock);
	return ret;
}

/* POLLPRI: processes wait for their unwind tables (HOTSTACK_IOC_UNWIND_MISSES). */
static __poll_t hotstack_poll(struct file *file, poll_table *pt)
{
	return hotstack_unwind_poll(file->private_data, file, pt);
}

const struct file_operations hotstack_fops = {
	.owner = THIS_MODULE,
	.open = hotstack_open,
	.release = hotstack_release,
	.read = hotstack_fread,
	.poll = hotstack_poll,
	.mmap = hotstack_mmap,
	.unlocked_ioctl = hotstack_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
