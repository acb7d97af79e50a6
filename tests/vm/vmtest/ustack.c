// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks, keys and filters; io_uring workers; exec.
 */
#include "vmtest.h"

static volatile int ustack_stop;
static volatile unsigned long ustack_sink;

static void ustack_signal(int sig)
{
	(void)sig;
	ustack_stop = 1;
}

__attribute__((noinline)) static void u_call(void)
{
	ustack_sink++;
}

/*
 * Not a leaf: it calls u_call, so it keeps a frame of its own (a leaf need
 * not, and a frame-pointer walk then misses its caller, as perf's does).
 */
__attribute__((noinline)) static void u_leaf(void)
{
	unsigned int i;

	while (!ustack_stop) {
		for (i = 0; i < 1000; i++)
			ustack_sink++;
		u_call();
	}
}

__attribute__((noinline)) static void u_mid(void)
{
	u_leaf();
	ustack_sink += 2;
}

__attribute__((noinline)) static void u_top(void)
{
	u_mid();
	ustack_sink += 3;
}

static void *uspin_timer(void *arg)
{
	msleep((unsigned long)arg);
	ustack_stop = 1;
	return NULL;
}

/* Spin in u_top <- u_mid <- u_leaf (user mode, frame pointers) for @ms. */
void uspin(unsigned int ms)
{
	pthread_t t;

	if (pthread_create(&t, NULL, uspin_timer, (void *)(unsigned long)ms))
		return;
	u_top();
	pthread_join(t, NULL);
}

/* Whether hex frame @f is an address in [fn, fn + 512). */
static bool frame_in(const char *f, void (*fn)(void))
{
	unsigned long a = strtoul(f, NULL, 16), base = (unsigned long)fn;

	return !strncmp(f, "0x", 2) && a >= base && a < base + 512;
}

/*
 * For @seconds, 64 KiB reads of /dev/zero through io_uring, each punted to
 * an io-wq worker (IOSQE_ASYNC); exits 2 without io_uring.
 */
static void io_uring_reads(double seconds)
{
	static char buf[1 << 16];
	struct io_uring_params p = { 0 };
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail;
	struct io_uring_sqe *sqe;
	double end = now_s() + seconds;
	int ring = syscall(__NR_io_uring_setup, 1, &p), zero = open("/dev/zero", O_RDONLY);
	char *sq, *cq;

	if (ring < 0 || zero < 0)
		_exit(2);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED)
		_exit(1);
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned int *)(sq + p.sq_off.array);
	cq_head = (unsigned int *)(cq + p.cq_off.head);
	cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	while (now_s() < end) {
		unsigned int tail = *sq_tail;

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_READ;
		sqe->flags = IOSQE_ASYNC;
		sqe->fd = zero;
		sqe->addr = (unsigned long)buf;
		sqe->len = sizeof(buf);
		sq_array[tail & *sq_mask] = 0;
		__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			_exit(1);
		__atomic_store_n(cq_head, __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
	}
	_exit(0);
}

/*
 * io_uring's workers have their process's mm but are no user task: their
 * user registers are a new thread's (ip 0). With user stacks they show
 * kernel frames only, never a user frame made of those. No checks where
 * the kernel has no io_uring (the debug and arm64 kernels, built
 * without it: their plans count two fewer).
 */
void test_io_worker(void)
{
	struct hotstack_config c;
	unsigned long long samples = 0;
	unsigned int stacks = 0, bad = 0;
	char *text, *line, *save;
	int fd = open_dev(), status = 0;
	pid_t child;

	default_config(&c);
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.keys = HOTSTACK_KEY_COMM;
	if (xioctl(fd, HOTSTACK_IOC_CONFIGURE, &c) || xioctl(fd, HOTSTACK_IOC_START, NULL)) {
		tap(false, "io_uring worker: CONFIGURE and START");
		close(fd);
		return;
	}
	child = fork();
	if (!child)
		io_uring_reads(1.5);
	waitpid(child, &status, 0);
	xioctl(fd, HOTSTACK_IOC_STOP, NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		printf("# no io_uring in this kernel: no io_uring worker to sample\n");
		close(fd);
		return;
	}
	text = read_all(fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		if (strncmp(line, "iou-wrk-", 8))
			continue;
		stacks++;
		samples += sp ? strtoull(sp + 1, NULL, 10) : 0;
		if (strstr(line, ";0x")) {
			if (bad++ < 3)
				printf("#   %.300s\n", line);
		}
	}
	tap(status == 0 && samples > 0, "io_uring worker: its reads sampled (%llu samples)", samples);
	tap(stacks > 0 && !bad, "io_uring worker: no user frames (%u of %u stacks had some)", bad,
	    stacks);
	free(text);
	close(fd);
}

/*
 * Samples taken while a process execs, kernel and user stacks: on x86
 * exec_mmap() sets the task's new mm before it loads it, with interrupts
 * on (module/unwind_x86.h says what a sample sees then). For 2 s, busybox
 * true run over and over; the samples in execve's kernel code are there,
 * and the invariant holds.
 */
void test_exec(void)
{
	struct hotstack_config c;
	unsigned int execs = 0;
	char *text;
	double end;
	int fd = open_dev();

	default_config(&c);
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	expect_cfg(fd, &c, 0, "exec: kernel and user stacks");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "exec: START");
	for (end = now_s() + 2; now_s() < end; execs++) {
		pid_t child = fork();

		if (!child) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (child < 0 || waitpid(child, NULL, 0) != child)
			break;
	}
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "exec: STOP");
	text = read_all(fd);
	tap(strstr(text, ";bprm_execve;") != NULL,
	    "exec: %u execs in 2 s, sampled in bprm_execve", execs);
	free(text);
	check_invariant(fd, "exec");
	close(fd);
}

void test_userstack(void)
{
	static char *frames[2048];
	struct hotstack_config c;
	struct hotstack_stats st;
	unsigned long long matched = 0, total = 0;
	int fd = open_dev(), go[2], bad_prefix = 0;
	char *text, *line, *save, prefix[64];
	pid_t child;

	if (pipe(go))
		return;
	child = fork();
	if (!child) {
		char b;

		signal(SIGUSR1, ustack_signal);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		u_top();
		_exit(0);
	}
	default_config(&c);
	c.flags |= HOTSTACK_CFG_PID;
	c.pid = child;
	c.stacks = HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER;
	c.keys = HOTSTACK_KEY_TGID | HOTSTACK_KEY_COMM;
	expect_cfg(fd, &c, 0, "user stacks of one process, by pid and comm");
	expect_ioc(fd, HOTSTACK_IOC_START, NULL, 0, "user stacks: START");
	if (write(go[1], "g", 1) != 1)
		tap(false, "user stacks: start the child");
	/* A signal, not alarm(): the debug kernel has no POSIX timers. */
	msleep(1000);
	kill(child, SIGUSR1);
	waitpid(child, NULL, 0);
	expect_ioc(fd, HOTSTACK_IOC_STOP, NULL, 0, "user stacks: STOP");
	check_invariant(fd, "user stacks");
	get_stats(fd, &st, 0);
	tap(st.total.drops[HOTSTACK_DROP_FILTERED] > 0,
	    "user stacks: other processes' samples dropped as FILTERED (%llu)",
	    (unsigned long long)st.total.drops[HOTSTACK_DROP_FILTERED]);

	snprintf(prefix, sizeof(prefix), "hs_vmtest;[pid %d];", child);
	if (getenv("HS_DEBUG"))
		printf("# u_leaf %p u_mid %p u_top %p\n", (void *)u_leaf, (void *)u_mid,
		       (void *)u_top);
	text = read_all(fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		unsigned long long count = sp ? strtoull(sp + 1, NULL, 10) : 0;
		int n;

		if (strncmp(line, prefix, strlen(prefix)))
			bad_prefix++;
		if (getenv("HS_DEBUG"))
			printf("# %s\n", line);
		n = split_frames(line, frames, 2048);
		total += count;
		if (n >= 5 && frame_in(frames[n - 1], u_leaf) && frame_in(frames[n - 2], u_mid) &&
		    frame_in(frames[n - 3], u_top))
			matched += count;
	}
	free(text);
	tap(bad_prefix == 0, "user stacks: every line starts with comm and pid (%d do not)",
	    bad_prefix);
	tap(matched * 2 > total,
	    "user stacks: most samples (%llu of %llu) walk u_leaf <- u_mid <- u_top", matched,
	    total);
	close(fd);
}
