// SPDX-License-Identifier: GPL-2.0
/*
 * In-guest test program for /dev/hotstack: each subcommand prints TAP lines
 * ("ok - ..." / "not ok - ...") and exits non-zero if any check failed.
 *
 *   hs_vmtest getinfo              every GET_INFO call, good and malformed
 *   hs_vmtest sessions MAX         MAX sessions open, the next one is EBUSY
 *   hs_vmtest open ok|ERRNO        opening the device succeeds / fails so
 *   hs_vmtest runas UID GID[,GID...] CMD ARGS...
 *                                  run CMD with those credentials, no caps
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/hotstack.h>

static int failures;

static void tap(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		failures++;
}

static int open_dev(void)
{
	int fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok - open /dev/hotstack: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/* ioctl returning 0 or the errno it failed with. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static void expect_errno(int got, int want, const char *what)
{
	tap(got == want, "GET_INFO %s: %s (got %s)", what, strerrorname_np(want),
	    got ? strerrorname_np(got) : "success");
}

static void test_getinfo(void)
{
	struct hotstack_info info;
	/* A struct from a newer caller: one page, the tail beyond ours. */
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned char *big;
	unsigned char *two;
	int fd = open_dev();
	size_t i;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	tap(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info) == 0, "GET_INFO succeeds");
	tap(info.size == sizeof(info), "GET_INFO leaves size as given");
	tap(info.abi_version == HOTSTACK_ABI_VERSION, "GET_INFO abi_version is %u (got %u)",
	    HOTSTACK_ABI_VERSION, info.abi_version);
	tap(info.max_depth == HOTSTACK_MAX_DEPTH, "GET_INFO max_depth is %u (got %u)",
	    HOTSTACK_MAX_DEPTH, info.max_depth);
	tap(info.max_sessions == 16, "GET_INFO max_sessions is the default 16 (got %u)",
	    info.max_sessions);
	tap(info.nr_sessions == 1, "GET_INFO nr_sessions counts this one (got %u)",
	    info.nr_sessions);
	tap(info.max_memory == 256ULL << 20, "GET_INFO max_memory is 256 MiB (got %llu)",
	    (unsigned long long)info.max_memory);
	tap(info.features == 0 && !info.reserved[0] && !info.reserved[1] &&
	    !info.reserved[2] && !info.reserved[3], "GET_INFO features and reserved are 0");
	tap(sizeof(info) == HOTSTACK_INFO_SIZE_VER0, "struct hotstack_info is VER0 size");

	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, NULL), EFAULT, "with a NULL pointer");
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, (void *)16), EFAULT,
		     "with a bad pointer");

	memset(&info, 0, sizeof(info));
	info.size = 0;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, "with size 0");
	info.size = HOTSTACK_INFO_SIZE_VER0 - 8;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL,
		     "with size below VER0");

	info.size = sizeof(info);
	info.flags = 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, "with flags 0x1");
	info.flags = 0x80000000u;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL,
		     "with flags 0x80000000");
	info.flags = 0;
	for (i = 0; i < 4; i++) {
		char what[64];

		memset(info.reserved, 0, sizeof(info.reserved));
		info.reserved[i] = 1ULL << (i * 16);
		snprintf(what, sizeof(what), "with reserved[%zu] nonzero", i);
		expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, &info), EINVAL, what);
	}
	memset(info.reserved, 0, sizeof(info.reserved));

	/* Two pages, the second one unmapped: a size that runs into it faults. */
	two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED) {
		tap(false, "mmap two pages");
		return;
	}
	munmap(two + page, page);
	big = two;
	memset(big, 0, page);
	*(__u32 *)big = page + 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), E2BIG, "with size above a page");
	*(__u32 *)big = page;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), 0,
		     "with a page-sized struct, zero tail");
	tap(((struct hotstack_info *)big)->abi_version == HOTSTACK_ABI_VERSION,
	    "GET_INFO with a larger struct fills the known part");
	for (i = sizeof(info); i < page && !big[i]; i++)
		;
	tap(i == page, "GET_INFO with a larger struct writes nothing past its own");
	big[page - 1] = 1;
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big), E2BIG,
		     "with a larger struct, nonzero tail");
	/* The struct runs off the end of the mapping. */
	memset(big, 0, page);
	*(__u32 *)(big + page - sizeof(__u32)) = sizeof(info);
	expect_errno(xioctl(fd, HOTSTACK_IOC_GET_INFO, big + page - sizeof(__u32)), EFAULT,
		     "with a struct crossing into unmapped memory");
	munmap(two, page);

	info.size = sizeof(info);
	expect_errno(xioctl(fd, _IOWR(HOTSTACK_IOC_MAGIC, 0x7f, struct hotstack_info), &info),
		     ENOTTY, "unknown command number");
	expect_errno(xioctl(fd, _IOWR('x', 0x00, struct hotstack_info), &info), ENOTTY,
		     "wrong ioctl magic");
	expect_errno(xioctl(fd, _IOR(HOTSTACK_IOC_MAGIC, 0x00, struct hotstack_info), &info),
		     ENOTTY, "wrong direction (_IOR)");
	expect_errno(xioctl(fd, _IO(HOTSTACK_IOC_MAGIC, 0x00), &info), ENOTTY,
		     "wrong direction (_IO)");
	expect_errno(xioctl(fd, _IOWR(HOTSTACK_IOC_MAGIC, 0x00, __u64), &info), 0,
		     "with another size in the command number (size field rules)");
	close(fd);
}

static void test_sessions(unsigned int max)
{
	struct hotstack_info info;
	int *fds = calloc(max, sizeof(int));
	unsigned int i, opened = 0;
	int fd;

	for (i = 0; i < max; i++) {
		fds[i] = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
		if (fds[i] >= 0)
			opened++;
	}
	tap(opened == max, "%u sessions open (opened %u)", max, opened);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	tap(xioctl(fds[0], HOTSTACK_IOC_GET_INFO, &info) == 0, "GET_INFO with %u sessions open",
	    max);
	tap(info.nr_sessions == max && info.max_sessions == max,
	    "GET_INFO counts %u of %u sessions (got %u of %u)", max, max, info.nr_sessions,
	    info.max_sessions);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	tap(fd < 0 && errno == EBUSY, "session %u is refused with EBUSY (got %s)", max + 1,
	    fd < 0 ? strerrorname_np(errno) : "success");
	if (fd >= 0)
		close(fd);
	close(fds[max - 1]);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	tap(fd >= 0, "a session opens again after one closes");
	if (fd >= 0)
		close(fd);
	for (i = 0; i + 1 < max; i++)
		close(fds[i]);
	free(fds);
}

static int errno_by_name(const char *name)
{
	int e;

	for (e = 1; e < 134; e++)
		if (strerrorname_np(e) && !strcmp(strerrorname_np(e), name))
			return e;
	fprintf(stderr, "unknown errno name %s\n", name);
	exit(2);
}

static void test_open(const char *expect)
{
	int fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;
	int want = strcmp(expect, "ok") ? errno_by_name(expect) : 0;

	tap(err == want, "open as uid %u gid %u: %s (got %s)", getuid(), getgid(),
	    want ? expect : "success", err ? strerrorname_np(err) : "success");
	if (fd >= 0)
		close(fd);
}

static int runas(int argc, char **argv)
{
	gid_t groups[16];
	int ngroups = 0;
	char *gids = argv[1], *tok;
	uid_t uid;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID GID[,GID...] CMD ARGS...\n");
		return 2;
	}
	uid = strtoul(argv[0], NULL, 10);
	for (tok = strtok(gids, ","); tok && ngroups < 16; tok = strtok(NULL, ","))
		groups[ngroups++] = strtoul(tok, NULL, 10);
	if (setgroups(ngroups, groups) || setgid(groups[0]) || setuid(uid)) {
		perror("runas");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "getinfo"))
		test_getinfo();
	else if (argc == 3 && !strcmp(argv[1], "sessions"))
		test_sessions(strtoul(argv[2], NULL, 10));
	else if (argc == 3 && !strcmp(argv[1], "open"))
		test_open(argv[2]);
	else if (argc >= 2 && !strcmp(argv[1], "runas"))
		return runas(argc - 2, argv + 2);
	else {
		fprintf(stderr, "usage: hs_vmtest getinfo|sessions N|open ok|ERRNO|runas ...\n");
		return 2;
	}
	return failures ? 1 : 0;
}
