// SPDX-License-Identifier: GPL-2.0
/*
 * hs_fuzz: hostile input for the hotstack module, in the VM (make fuzz;
 * tests/vm/guest/t_80_fuzz.sh in every suite).
 *
 *   hs_fuzz CALLS SEED [THREADS]
 *
 * THREADS threads (default 4) make CALLS calls between them, each choosing
 * at random among: open and close of /dev/hotstack (close also while a
 * mapping of the session lives), dup() of descriptors from one thread to
 * another (so that sessions are used by several threads at once), fork();
 * every ioctl, with argument structs of random sizes, placements (a
 * read-only page, one that runs into an unmapped page, bad pointers),
 * flags, reserved and out fields, in whatever state the session is in;
 * CONFIGURE with a valid configuration mutated at random; unwind tables
 * (ADD_TABLE: rows and rules valid, mutated or random), mappings of this
 * process, of init and of no process (SET_MAPS), mutated, and the misses'
 * set drained (UNWIND_MISSES), while sessions sample them; unknown ioctl
 * numbers; mmap() with random lengths, offsets, protections and flags,
 * then mremap(), mprotect(), a read of every page, munmap(); read() with
 * random sizes and buffers; write(), pread(), lseek(); generic netlink
 * requests with random commands, flags, versions and attributes. One more
 * thread takes every CPU but 0 offline and online again until they are
 * done.
 *
 * Every result must be success or an errno that uapi/linux/hotstack.h
 * documents for that call and those arguments (perf's own for an event
 * the machine cannot count, mm's for mmap, mremap and mprotect); where
 * the ABI says a call must fail (an unknown flag, a nonzero reserved
 * field, a field out of range, a writable or growing mapping) success is
 * an error too, and so is a wrong value in what a call returns. Each
 * error is printed at once as a TAP comment with the thread, the
 * operation, the call and its arguments, and the command line that
 * replays the run. A thread's operations and their arguments depend only
 * on SEED, the thread and the operation's number; what a call finds
 * (other threads' doing, CPU hotplug) can differ from run to run.
 *
 * At the end, every descriptor and mapping closed, the module must hold
 * no session and no table memory. Prints one TAP line, then
 * "fuzz: N calls, N errors, seed S"; exits 1 on any error. Stops early
 * after 15 minutes, and fails: it did fewer calls than asked for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/hotstack.h>

#include "netlink.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))

#define MAX_THREADS	16
#define NR_FDS		4	/* descriptors each thread holds */
#define NR_POOL		4	/* descriptors the threads hand each other */
#define NR_MAPS		4	/* mappings each thread holds */
#define NR_IDS		8	/* session IDs a thread remembers, for netlink */
#define DEADLINE_S	900	/* the whole run */
#define STUCK_S		300	/* one operation */
#define MAX_PRINTED	50	/* errors printed in full */
#define READ_MAX	65536	/* largest read() */
#define VEC_MAX		65536	/* pages mincore() looks at */
#define HS_FUZZ_MISSES	64	/* processes the module keeps as misses at once */

/* The calls, as counted and reported. */
enum call {
	C_OPEN, C_CLOSE, C_DUP, C_CONFIGURE, C_START, C_STOP, C_RESET, C_SNAPSHOT,
	C_GET_INFO, C_GET_STATS, C_IOCTL, C_MMAP, C_MREMAP, C_MPROTECT, C_MUNMAP,
	C_TOUCH, C_READ, C_WRITE, C_PREAD, C_LSEEK, C_GENL, C_FORK, C_ADD_TABLE, C_SET_MAPS,
	C_MISSES, C_CGPATH, C_NR
};

static const char *const call_name[C_NR] = {
	"open", "close", "dup", "CONFIGURE", "START", "STOP", "RESET", "SNAPSHOT",
	"GET_INFO", "GET_STATS", "ioctl (other numbers)", "mmap", "mremap", "mprotect",
	"munmap", "page reads", "read", "write", "pread", "lseek", "netlink", "fork",
	"ADD_TABLE", "SET_MAPS", "UNWIND_MISSES", "CGROUP_PATH",
};

/* A set of results: bit 0 success, bit e errno e. */
struct allow {
	uint64_t w[2];
};

struct slot {
	int fd;			/* -1: free */
	int acc;		/* O_RDONLY, O_WRONLY or O_RDWR */
};

struct map {
	unsigned char *addr;	/* NULL: free */
	size_t len;		/* bytes mapped now */
	size_t size;		/* the length it was mapped with */
	int prot;
};

struct thr {
	int id;			/* 0 .. nr_threads - 1; nr_threads: hotplug */
	pthread_t tid;
	uint64_t rng;		/* the current operation's generator */
	unsigned long op;	/* operations started */
	unsigned long calls;	/* calls made */
	unsigned long quota;	/* calls to make */
	uint64_t mark;		/* marks this thread's reserved address ranges */
	struct slot fd[NR_FDS];
	struct map map[NR_MAPS];
	struct hs_genl g;
	bool genl;		/* g is open */
	uint32_t ids[NR_IDS];	/* session IDs seen in GET_STATS */
	unsigned char *arg;	/* ioctl structs: two pages, a guard page, a read-only one */
	unsigned char *rbuf;	/* read() buffer: READ_MAX bytes, then a guard page */
	unsigned char *cpus;	/* CPU bitmaps: two pages, then a guard page */
	unsigned char *vec;	/* mincore() vector */
	char desc[1024];	/* the call being made, for reports */
	sigjmp_buf jb;
	volatile int in_touch;
	volatile int fault_sig;
	void *volatile fault_addr;
	uint64_t busy_ms;	/* when the current operation started; 0: none */
	unsigned long stuck_op;	/* operation reported as stuck, plus 1 */
};

static unsigned long nr_calls_arg;
static unsigned long long seed;
static unsigned int nr_threads = 4;
static size_t page;
static unsigned int nr_possible;	/* CPUs 0 .. nr_possible - 1 may exist */
static uint64_t online0;		/* CPUs online at the start (the first 64) */
static unsigned int max_sessions;
static unsigned int base_sessions;	/* open at the start, its own included */
static unsigned long long base_memory;	/* bytes of tables at the start */
static unsigned long long base_unwind;	/* ... of unwind tables */
/* An address no user pointer can have. */
static const uintptr_t kernel_ptr = 0xffff800000000000UL;

static struct thr thr[MAX_THREADS + 1];
static __thread struct thr *self;
static volatile int stop;		/* the deadline passed */
static volatile int fuzz_done;		/* the fuzz threads are done */
static unsigned int running;		/* fuzz threads still running */
static unsigned long total_calls, nr_errors, hp_cycles, hp_failures, notes;
static unsigned long hist[C_NR][129];	/* results: 0 success, errno, 128 other */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Held by the fuzz threads wherever a mapping is placed (mmap, mremap), so
 * that none lands in the hole a refused move leaves (see unreserve()).
 */
static pthread_mutex_t vm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot pool[NR_POOL];

/* ---- results ----------------------------------------------------------- */

static void allow_add(struct allow *a, int e)
{
	if (e >= 0 && e < 128)
		a->w[e / 64] |= 1ULL << (e % 64);
}

static struct allow allow_list(const int *e)
{
	struct allow a = { { 0, 0 } };

	for (; *e >= 0; e++)
		allow_add(&a, *e);
	return a;
}

/* The results a call may have: 0 for success, then errnos. */
#define ALLOW(...) allow_list((const int[]){ __VA_ARGS__, -1 })

static bool allowed(const struct allow *a, int e)
{
	return e >= 0 && e < 128 && ((a->w[e / 64] >> (e % 64)) & 1);
}

static const char *ename(int e)
{
	const char *n;

	if (!e)
		return "success";
	n = strerrorname_np(e);
	return n ? n : "an unknown errno";
}

static void allow_str(const struct allow *a, char *buf, size_t size)
{
	size_t len = 0;
	int e;

	buf[0] = '\0';
	for (e = 0; e < 128; e++)
		if (allowed(a, e) && len < size)
			len += snprintf(buf + len, size - len, "%s%s", len ? " " : "", ename(e));
	if (!len)
		snprintf(buf, size, "nothing");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_lock);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

/* An error of @t (NULL: of the run as a whole): counted, printed at once. */
static void report(struct thr *t, const char *fmt, ...)
{
	unsigned long n = __atomic_add_fetch(&nr_errors, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (n > MAX_PRINTED) {
		if (n == MAX_PRINTED + 1)
			say("# more errors are counted, not printed\n");
		return;
	}
	pthread_mutex_lock(&print_lock);
	if (!t)
		printf("# error: ");
	else if (t->id < (int)nr_threads)
		printf("# error: thread %d op %lu call %lu: ", t->id, t->op, t->calls);
	else
		printf("# error: hotplug thread: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n# replay: hs_fuzz %lu %llu %u\n", nr_calls_arg, seed, nr_threads);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

/* What is worth saying once, not an error. */
static void note_once(unsigned int bit, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_or(&notes, 1UL << bit, __ATOMIC_RELAXED) & (1UL << bit))
		return;
	pthread_mutex_lock(&print_lock);
	printf("# note: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

enum { NOTE_SESSIONS };

#define DESC(t, ...) snprintf((t)->desc, sizeof((t)->desc), __VA_ARGS__)

/*
 * Count call @c of @t, described in t->desc, which returned @ret (< 0:
 * failed with @err); its result must be one of @a. Returns 0 or the errno.
 */
static int check_err(struct thr *t, enum call c, long ret, int err, struct allow a)
{
	int e = ret < 0 ? err : 0;
	char list[512];

	t->calls++;
	__atomic_add_fetch(&total_calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hist[c][e >= 0 && e < 128 ? e : 128], 1, __ATOMIC_RELAXED);
	if (!allowed(&a, e)) {
		allow_str(&a, list, sizeof(list));
		report(t, "%s = %s; allowed: %s", t->desc, ename(e), list);
	}
	return e;
}

/* check_err() of the system call @call, with the errno it set. */
#define check(t, c, call, a) ({						\
	long ret_ = (call);						\
	int err_ = errno;						\
									\
	check_err(t, c, ret_, err_, a);					\
})

/* ---- randomness --------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64 */
static uint64_t rnd(struct thr *t)
{
	return mix64(t->rng += 0x9e3779b97f4a7c15ULL);
}

static uint32_t below(struct thr *t, uint32_t n)
{
	return n ? rnd(t) % n : 0;
}

static bool chance(struct thr *t, unsigned int pct)
{
	return below(t, 100) < pct;
}

/* The generator of the thread's next operation: SEED, thread, number. */
static void op_seed(struct thr *t)
{
	t->rng = mix64(seed ^ mix64((t->id + 1ULL) * 0xd1b54a32d192ed03ULL) ^
		       mix64(t->op * 0x8cb92ba72f3d8dd7ULL + 1));
}

static const uint64_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 255, 256, 1000,
	1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 100000, 100001, 1U << 24,
	(1U << 24) + 1, 1U << 28, (1U << 28) + 1, 4194304, 4194305, 0x7fffffff,
	0x80000000, 0xffffffff, 1ULL << 32, (1ULL << 63) - 1, 1ULL << 63, ~0ULL,
};

static uint64_t pick_value(struct thr *t)
{
	switch (below(t, 4)) {
	case 0:
		return rnd(t);
	case 1:
		return rnd(t) >> below(t, 64);
	default:
		return interesting[below(t, ARRAY_SIZE(interesting))];
	}
}

/* ---- guarded reads ------------------------------------------------------ */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct thr *t = self;

	(void)uc;
	if (t && t->in_touch) {
		t->in_touch = 0;
		t->fault_sig = sig;
		t->fault_addr = si->si_addr;
		siglongjmp(t->jb, 1);
	}
	/* Not ours to catch: die of it. */
	signal(sig, SIG_DFL);
}

/*
 * Read every page of [@p, @p + @len) and, with @out, copy the range there.
 * False if that faulted (t->fault_sig, t->fault_addr say how).
 */
static bool guarded_read(struct thr *t, const void *p, size_t len, void *out)
{
	volatile const unsigned char *c = p;
	volatile unsigned long sum = 0;
	size_t off;

	if (sigsetjmp(t->jb, 1))
		return false;
	t->in_touch = 1;
	if (out)
		memcpy(out, p, len);
	else
		for (off = 0; off < len; off += page)
			sum += c[off];
	t->in_touch = 0;
	(void)sum;
	return true;
}

/* ---- descriptors ---------------------------------------------------------- */

static const char *acc_name(int acc)
{
	return acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : "O_RDWR";
}

/* A random descriptor of the thread, or NULL if it holds none. */
static struct slot *pick_fd(struct thr *t)
{
	unsigned int i, k = below(t, NR_FDS);

	for (i = 0; i < NR_FDS; i++) {
		struct slot *s = &t->fd[(k + i) % NR_FDS];

		if (s->fd >= 0)
			return s;
	}
	return NULL;
}

static struct slot *free_fd(struct thr *t)
{
	unsigned int i;

	for (i = 0; i < NR_FDS; i++)
		if (t->fd[i].fd < 0)
			return &t->fd[i];
	return NULL;
}

static void close_slot(struct thr *t, struct slot *s, const char *why)
{
	DESC(t, "close(%d) (%s)", s->fd, why);
	check(t, C_CLOSE, close(s->fd), ALLOW(0));
	s->fd = -1;
}

static void op_open(struct thr *t)
{
	struct slot *s = free_fd(t);
	unsigned int k = below(t, 100);
	int acc = k < 80 ? O_RDWR : k < 95 ? O_RDONLY : O_WRONLY;
	bool nonblock = chance(t, 20);
	int fd;

	if (!s) {
		s = &t->fd[below(t, NR_FDS)];
		close_slot(t, s, "to open another");
	}
	DESC(t, "open(/dev/hotstack, %s%s)", acc_name(acc), nonblock ? " | O_NONBLOCK" : "");
	fd = open("/dev/hotstack", acc | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
	/* EBUSY: max_sessions are open. */
	if (!check(t, C_OPEN, fd, ALLOW(0, EBUSY, ENOMEM))) {
		s->fd = fd;
		s->acc = acc;
	}
}

static void op_close(struct thr *t)
{
	struct slot *s = pick_fd(t);

	if (s)
		close_slot(t, s, "at random");
	else
		op_open(t);
}

/* Hand a descriptor to the pool, or take one (a dup: the same session). */
static void op_dup(struct thr *t)
{
	struct slot *s = pick_fd(t), *p = &pool[below(t, NR_POOL)], *f = free_fd(t);
	bool give = chance(t, 50);
	int fd;

	pthread_mutex_lock(&pool_lock);
	if (give && s) {
		if (p->fd >= 0) {
			DESC(t, "close(%d) (a shared descriptor)", p->fd);
			check(t, C_CLOSE, close(p->fd), ALLOW(0));
			p->fd = -1;
		}
		DESC(t, "dup(%d) (to share)", s->fd);
		fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
		if (!check(t, C_DUP, fd, ALLOW(0))) {
			p->fd = fd;
			p->acc = s->acc;
		}
	} else if (p->fd >= 0 && f) {
		DESC(t, "dup(%d) (a shared descriptor)", p->fd);
		fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		if (!check(t, C_DUP, fd, ALLOW(0))) {
			f->fd = fd;
			f->acc = p->acc;
		}
	}
	pthread_mutex_unlock(&pool_lock);
}

/* ---- size-first ioctl structs -------------------------------------------- */

enum where { W_BUF, W_TIGHT, W_RO, W_NULL, W_16, W_KERNEL, W_GUARD };

static const char *const where_name[] = {
	"buffer", "runs into an unmapped page", "read-only page", "NULL", "(void *)16",
	"kernel address", "unmapped page",
};

/* Where a struct argument is and what the kernel can read of it. */
struct arg {
	void *p;
	enum where where;
	uint32_t usize;		/* its size field */
	size_t access;		/* bytes readable at p */
	long tail;		/* offset of a nonzero byte past the module's struct, or -1 */
};

/* A size field: 0, 4, VER0 - 8, VER0, sizeof, sizeof + 8, a page, a page + 1, random. */
static uint32_t pick_size(struct thr *t, size_t ksize, size_t ver0)
{
	switch (below(t, 20)) {
	case 0:
		return 0;
	case 1:
		return 4;
	case 2:
		return ver0 - 8;
	case 3:
		return ver0;
	case 4:
	case 5:
		return ksize + 8;
	case 6:
		return page;
	case 7:
		return page + 1;
	case 8:
		return below(t, page + 16);
	default:
		return ksize;
	}
}

/*
 * Lay the struct @s (@ksize bytes, its size field set) out for the call:
 * in the thread's buffer (what follows it zero, or with a nonzero byte
 * where the kernel will look past its own struct), against an unmapped
 * page, in a read-only page, or at a bad address.
 */
static void place(struct thr *t, const void *s, size_t ksize, struct arg *a)
{
	unsigned char *guard = t->arg + 2 * page, *ro = guard + page, *dst;
	unsigned int k = below(t, 100);
	size_t want = ksize, n;

	memcpy(&a->usize, s, sizeof(a->usize));
	if (a->usize > want)
		want = MIN(a->usize, page);
	a->tail = -1;
	if (k < 80) {
		a->where = W_BUF;
		a->p = t->arg;
		a->access = 2 * page;
	} else if (k < 88) {
		a->where = W_TIGHT;
		a->access = 1 + below(t, want);
		a->p = guard - a->access;
	} else if (k < 92) {
		a->where = W_RO;
		a->p = ro;
		a->access = page;
	} else {
		static void *const bad[] = { NULL, (void *)16, (void *)kernel_ptr };

		a->where = W_NULL + below(t, 4);
		a->p = a->where == W_GUARD ? guard : bad[a->where - W_NULL];
		a->access = 0;
		return;
	}
	if (a->where == W_RO && mprotect(ro, page, PROT_READ | PROT_WRITE)) {
		perror("hs_fuzz: mprotect");
		exit(2);
	}
	dst = a->p;
	n = MIN(want, a->access);
	memset(dst, 0, n);
	memcpy(dst, s, MIN(ksize, n));
	if (MIN(a->usize, n) > ksize && chance(t, 30)) {
		a->tail = ksize + below(t, MIN(a->usize, n) - ksize);
		dst[a->tail] = 1 + below(t, 255);
	}
	if (a->where == W_RO && mprotect(ro, page, PROT_READ)) {
		perror("hs_fuzz: mprotect");
		exit(2);
	}
}

static int arg_str(const struct arg *a, char *buf, size_t size)
{
	if (!a->access)
		return snprintf(buf, size, "%s", where_name[a->where]);
	return snprintf(buf, size, "%s, size field %u, %zu bytes readable%s", where_name[a->where],
			a->usize, a->access, a->tail >= 0 ? ", a nonzero byte past the struct" : "");
}

/*
 * What copying the struct in ends with (the size-first conventions):
 * true if it gets past it, else false with its errno(s) in @al.
 */
static bool copy_in(const struct arg *a, size_t ver0, struct allow *al)
{
	if (a->access < sizeof(a->usize)) {
		allow_add(al, EFAULT);
		return false;
	}
	if (a->usize < ver0) {
		allow_add(al, EINVAL);
		return false;
	}
	if (a->usize > page) {
		allow_add(al, E2BIG);
		return false;
	}
	if (a->usize > a->access) {
		allow_add(al, EFAULT);
		/* A nonzero byte before the unreadable one: either. */
		if (a->tail >= 0)
			allow_add(al, E2BIG);
		return false;
	}
	if (a->tail >= 0) {
		allow_add(al, E2BIG);
		return false;
	}
	return true;
}

/* The struct as the module sees it: the caller's, cut or zero-extended. */
static void kview(const struct arg *a, const void *s, size_t ksize, void *out)
{
	memset(out, 0, ksize);
	memcpy(out, s, MIN(a->usize, ksize));
}

/* Nothing written past the module's struct, where the caller's is larger. */
static void check_tail(struct thr *t, const struct arg *a, size_t ksize, const char *what)
{
	const unsigned char *p = a->p;
	size_t i, end = MIN(a->usize, a->access);

	for (i = ksize; i < end; i++) {
		if (p[i]) {
			report(t, "%s: byte %zu, past the module's struct, became %#x", what, i,
			       p[i]);
			return;
		}
	}
}

static bool nonzero(const void *p, size_t from, size_t to)
{
	const unsigned char *c = p;

	for (; from < to; from++)
		if (c[from])
			return true;
	return false;
}

/* ---- CONFIGURE ---------------------------------------------------------- */

/* What is known of the CPU mask a configuration points to. */
struct cpus_info {
	bool fault;		/* reading it faults */
	bool unknown;		/* its fields were mutated: anything goes */
	bool past;		/* a bit past the last possible CPU */
	bool empty;		/* no CPU */
	bool big;		/* more words than any kernel has CPUs for */
};

static void pick_cpus(struct thr *t, struct hotstack_config *c, struct cpus_info *x)
{
	uint64_t *w = (uint64_t *)t->cpus;
	unsigned char *guard = t->cpus + 2 * page;
	unsigned int words = 1, i, b;

	memset(x, 0, sizeof(*x));
	switch (below(t, 24)) {
	case 0:
		w[0] = 1;			/* CPU 0 */
		break;
	case 1:
		w[0] = 2;			/* CPU 1: offline at times */
		break;
	case 2:
	case 3:
		w[0] = online0;
		break;
	case 4:
		w[0] = rnd(t);
		break;
	case 5:
		words = 2;
		w[0] = online0;
		w[1] = 0;
		break;
	case 6:
		words = 2;			/* CPU 64 */
		w[0] = 0;
		w[1] = 1;
		break;
	case 7:
		words = 1024;			/* a big, valid bitmap */
		memset(w, 0, 1024 * sizeof(*w));
		w[0] = 1;
		break;
	case 8:
		c->cpus_ptr = (uintptr_t)w;
		c->cpus_words = chance(t, 50) ? 1025 : 0xffffffff;
		x->big = true;
		return;
	case 9: {
		static const uintptr_t bad[] = { 16, kernel_ptr };

		c->cpus_ptr = chance(t, 50) ? (uintptr_t)guard : bad[below(t, 2)];
		c->cpus_words = 1 + below(t, 4);
		x->fault = true;
		return;
	}
	case 10:
		/* The second word is in the unmapped page. */
		c->cpus_ptr = (uintptr_t)(guard - 8);
		*(uint64_t *)(guard - 8) = 1;
		c->cpus_words = 2;
		x->fault = true;
		return;
	case 11:
		c->cpus_ptr = 0;
		c->cpus_words = 1 + below(t, 4);
		return;
	case 12:
		c->cpus_ptr = (uintptr_t)w;
		c->cpus_words = 0;
		return;
	default:
		c->cpus_ptr = 0;		/* every CPU */
		c->cpus_words = 0;
		return;
	}
	c->cpus_ptr = (uintptr_t)w;
	c->cpus_words = words;
	x->empty = true;
	for (i = 0; i < words; i++)
		for (b = 0; b < 64; b++)
			if (w[i] >> b & 1) {
				x->empty = false;
				if (i * 64 + b >= nr_possible)
					x->past = true;
			}
}

static bool hw_config_ok(uint64_t config)
{
	return config == PERF_COUNT_HW_CPU_CYCLES || config == PERF_COUNT_HW_INSTRUCTIONS ||
	       config == PERF_COUNT_HW_CACHE_MISSES || config == PERF_COUNT_HW_BRANCH_MISSES;
}

static bool sw_config_ok(uint64_t config)
{
	return config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK ||
	       config == PERF_COUNT_SW_PAGE_FAULTS || config == PERF_COUNT_SW_CONTEXT_SWITCHES;
}

/* A configuration that starts valid: small tables, a modest rate. */
static void valid_config(struct thr *t, struct hotstack_config *c)
{
	static const uint64_t sw[] = {
		PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
		PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	static const uint64_t hw[] = {
		PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
		PERF_COUNT_HW_CACHE_MISSES, PERF_COUNT_HW_BRANCH_MISSES,
	};
	static const uint64_t freqs[] = { 10, 50, 100, 250, 1000 };
	static const uint64_t ns[] = { 1000000, 4000000, 10000000, 100000000 };
	static const uint64_t cycles[] = { 1000000, 10000000 };
	unsigned int k = below(t, 100);
	bool clock;

	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	if (k < 82) {
		c->event_type = PERF_TYPE_SOFTWARE;
		c->event_config = sw[below(t, ARRAY_SIZE(sw))];
	} else if (k < 94) {
		c->event_type = PERF_TYPE_HARDWARE;
		c->event_config = k < 90 ? PERF_COUNT_HW_CPU_CYCLES : hw[below(t, ARRAY_SIZE(hw))];
		c->precise = chance(t, 20) ? below(t, 4) : 0;
	} else {
		c->event_type = PERF_TYPE_RAW;
		c->event_config = chance(t, 50) ? rnd(t) : below(t, 0x10000);
		c->precise = chance(t, 20) ? below(t, 4) : 0;
	}
	clock = c->event_type == PERF_TYPE_SOFTWARE &&
		(c->event_config == PERF_COUNT_SW_CPU_CLOCK ||
		 c->event_config == PERF_COUNT_SW_TASK_CLOCK);
	if (chance(t, 60)) {
		c->flags |= HOTSTACK_CFG_FREQ;
		c->sample = freqs[below(t, ARRAY_SIZE(freqs))];
	} else if (clock) {
		c->sample = ns[below(t, ARRAY_SIZE(ns))];
	} else if (c->event_type == PERF_TYPE_SOFTWARE) {
		c->sample = 1 + below(t, 1000);
	} else {
		c->sample = cycles[below(t, ARRAY_SIZE(cycles))];
	}
	if (chance(t, 10)) {
		static const uint32_t pids[] = { 1, 2, 4194304 };

		c->flags |= HOTSTACK_CFG_PID;
		c->pid = chance(t, 70) ? (uint32_t)getpid() : pids[below(t, ARRAY_SIZE(pids))];
	}
	if (chance(t, 20))
		c->flags |= HOTSTACK_CFG_EXCLUDE_IDLE;
	if (chance(t, 20))
		c->flags |= HOTSTACK_CFG_COLLAPSE;
	c->stacks = 1 + below(t, 3);
	/* User stacks by unwind tables (ADD_TABLE, SET_MAPS), often, with a cap now and then. */
	if ((c->stacks & HOTSTACK_STACK_USER) && chance(t, 60)) {
		c->flags |= HOTSTACK_CFG_USER_TABLES;
		c->unwind_mb = chance(t, 20) ? 1 + below(t, 4) : 0;
	}
	c->max_depth = chance(t, 80) ? 1 + below(t, 128) : 1 + below(t, HOTSTACK_MAX_DEPTH);
	c->keys = below(t, HOTSTACK_KEY_ALL + 1);
	c->table_entries = HOTSTACK_MIN_ENTRIES << below(t, 9);		/* 16 .. 4096 */
	c->arena_frames = HOTSTACK_MIN_ARENA + below(t, 65536 - HOTSTACK_MIN_ARENA + 1);
	/* Count tables of their own size, or (0) the store's. */
	c->cpu_entries = chance(t, 50) ? 0 : HOTSTACK_MIN_ENTRIES << below(t, 9);
}

struct field {
	const char *name;
	size_t off, size;
};

#define CFG_FIELD(m) { #m, offsetof(struct hotstack_config, m), \
		       sizeof(((struct hotstack_config *)0)->m) }

static const struct field cfg_fields[] = {
	CFG_FIELD(flags), CFG_FIELD(event_type), CFG_FIELD(precise),
	CFG_FIELD(event_config), CFG_FIELD(sample), CFG_FIELD(cpus_ptr),
	CFG_FIELD(cpus_words), CFG_FIELD(pid), CFG_FIELD(stacks), CFG_FIELD(max_depth),
	CFG_FIELD(keys), CFG_FIELD(table_entries), CFG_FIELD(arena_frames),
	CFG_FIELD(budget_ppm), CFG_FIELD(nr_cgroups), CFG_FIELD(cgroups_ptr),
	CFG_FIELD(off_cpu_tasks), CFG_FIELD(min_block_us), CFG_FIELD(reserved),
	CFG_FIELD(unwind_mb), CFG_FIELD(pad), CFG_FIELD(cpu_entries), CFG_FIELD(pad2),
};

static void set_field(void *s, const struct field *f, uint64_t v)
{
	unsigned char *p = (unsigned char *)s + f->off;

	if (f->size == 8) {
		memcpy(p, &v, 8);
	} else {
		uint32_t v32 = v;

		memcpy(p, &v32, 4);
	}
}

/* Whether the byte range of field @m was touched by [@off, @off + @n). */
#define HITS(m, off, n) ((off) < offsetof(struct hotstack_config, m) + \
			 sizeof(((struct hotstack_config *)0)->m) && \
			 (off) + (n) > offsetof(struct hotstack_config, m))

/* Up to 3 mutations: fields set to odd values, bits flipped, reserved set. */
static void mutate_config(struct thr *t, struct hotstack_config *c, struct cpus_info *x)
{
	unsigned int n = chance(t, 50) ? 0 : 1 + below(t, 3), i;

	for (i = 0; i < n; i++) {
		const struct field *f = &cfg_fields[below(t, ARRAY_SIZE(cfg_fields))];
		size_t off = f->off, len = f->size;

		switch (below(t, 8)) {
		case 0:
		case 1:
			set_field(c, f, pick_value(t));
			break;
		case 2:
			off = 4 + below(t, sizeof(*c) - 4);
			len = 1;
			((unsigned char *)c)[off] ^= 1 << below(t, 8);
			break;
		case 3:
			off = offsetof(struct hotstack_config, reserved);
			len = sizeof(c->reserved);
			c->reserved = pick_value(t) | 1;
			break;
		case 4:
			off = len = 0;
			c->flags |= 1U << below(t, 32);
			break;
		case 5:
			off = len = 0;
			if (chance(t, 50))
				c->stacks |= 1U << below(t, 32);
			else
				c->keys |= 1U << below(t, 32);
			break;
		case 6:
			off = len = 0;
			if (chance(t, 50))
				c->table_entries = 1U << below(t, 26);
			else
				c->cpu_entries = chance(t, 10) ? 0 : 1U << below(t, 26);
			break;
		default:
			off = len = 0;
			if (chance(t, 50))
				c->max_depth = pick_value(t);
			else
				c->arena_frames = pick_value(t);
			break;
		}
		if (HITS(cpus_ptr, off, len) || HITS(cpus_words, off, len))
			x->unknown = true;
	}
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Whether the ABI says @c must be refused (EINVAL), whatever else happens. */
static bool config_bad(const struct hotstack_config *c, const struct cpus_info *x)
{
	if (c->flags & ~HOTSTACK_CFG_ALL)
		return true;
	if (c->reserved)
		return true;
	if (c->nr_cgroups > HOTSTACK_MAX_CGROUPS || !c->cgroups_ptr != !c->nr_cgroups)
		return true;
	/*
	 * Off-CPU: every CPU, a power of two of task records, a budget of
	 * any kind; TASK (a process and what it starts) as for events, below;
	 * no event, or (wall-clock time) a clock's, keyed by context.
	 */
	if (c->flags & HOTSTACK_CFG_OFF_CPU) {
		if (c->budget_ppm > 1000000 || c->cpus_ptr || c->cpus_words)
			return true;
		if (!is_pow2(c->off_cpu_tasks) || c->off_cpu_tasks < HOTSTACK_MIN_OFF_CPU_TASKS ||
		    c->off_cpu_tasks > HOTSTACK_MAX_OFF_CPU_TASKS)
			return true;
		if (!c->sample) {
			if (c->event_type || c->event_config || c->precise ||
			    (c->flags & (HOTSTACK_CFG_FREQ | HOTSTACK_CFG_EXCLUDE_IDLE)))
				return true;
			goto common;
		}
		if (c->event_type != PERF_TYPE_SOFTWARE || c->precise ||
		    (c->event_config != PERF_COUNT_SW_CPU_CLOCK &&
		     c->event_config != PERF_COUNT_SW_TASK_CLOCK) ||
		    !(c->keys & HOTSTACK_KEY_CONTEXT) || c->sample >> 63 ||
		    ((c->flags & HOTSTACK_CFG_FREQ) && c->sample > HOTSTACK_MAX_FREQ))
			return true;
		goto common;
	}
	if (c->off_cpu_tasks || c->min_block_us ||
	    (c->flags & (HOTSTACK_CFG_OFF_NEW | HOTSTACK_CFG_WAKERS)))
		return true;
	/* A budget: a share of each CPU, not for per-task events. */
	if (c->budget_ppm > 1000000 || (c->budget_ppm && (c->flags & HOTSTACK_CFG_TASK)))
		return true;
	switch (c->event_type) {
	case PERF_TYPE_HARDWARE:
		if (!hw_config_ok(c->event_config))
			return true;
		break;
	case PERF_TYPE_SOFTWARE:
		if (!sw_config_ok(c->event_config) || c->precise)
			return true;
		break;
	case PERF_TYPE_RAW:
		break;
	default:
		return true;
	}
	if (c->precise > 3)
		return true;
	if (!c->sample || c->sample >> 63)
		return true;
	if ((c->flags & HOTSTACK_CFG_FREQ) && c->sample > HOTSTACK_MAX_FREQ)
		return true;
common:
	if (!(c->flags & HOTSTACK_CFG_PID) != !c->pid)
		return true;
	/* Unwind tables walk user stacks; their cap goes with them. */
	if (c->pad || c->unwind_mb > (1U << 20) ||
	    ((c->flags & HOTSTACK_CFG_USER_TABLES) ? !(c->stacks & HOTSTACK_STACK_USER) :
						      c->unwind_mb))
		return true;
	/* Per-task events: a process's, on every CPU. */
	if ((c->flags & HOTSTACK_CFG_TASK) &&
	    (!(c->flags & HOTSTACK_CFG_PID) || c->cpus_ptr || c->cpus_words))
		return true;
	if (!c->stacks || (c->stacks & ~(HOTSTACK_STACK_KERNEL | HOTSTACK_STACK_USER)))
		return true;
	if (!c->max_depth || c->max_depth > HOTSTACK_MAX_DEPTH)
		return true;
	if (c->keys & ~HOTSTACK_KEY_ALL)
		return true;
	if (!is_pow2(c->table_entries) || c->table_entries < HOTSTACK_MIN_ENTRIES ||
	    c->table_entries > HOTSTACK_MAX_ENTRIES)
		return true;
	if (c->arena_frames < HOTSTACK_MIN_ARENA || c->arena_frames > HOTSTACK_MAX_ARENA)
		return true;
	/* Count tables: 0 (the store's size), or a size of their own. */
	if (c->pad2 || (c->cpu_entries && (!is_pow2(c->cpu_entries) ||
					   c->cpu_entries < HOTSTACK_MIN_ENTRIES ||
					   c->cpu_entries > HOTSTACK_MAX_ENTRIES)))
		return true;
	if (!c->cpus_ptr != !c->cpus_words)
		return true;
	return !x->unknown && (x->past || x->empty);
}

static void op_configure(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_config c, k;
	struct allow al = { { 0, 0 } };
	struct cpus_info x;
	struct arg a;
	char where[128];
	long ret;
	int err;

	if (!s) {
		op_open(t);
		return;
	}
	valid_config(t, &c);
	pick_cpus(t, &c, &x);
	if (chance(t, 8)) {
		/* Events on this process's threads, inherited by the fork()s. */
		c.flags |= HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK;
		c.pid = getpid();
		c.cpus_ptr = 0;
		c.cpus_words = 0;
		memset(&x, 0, sizeof(x));
	} else if (chance(t, 8)) {
		/* Off-CPU time: the sched_switch probe on every CPU. */
		c.flags = HOTSTACK_CFG_OFF_CPU |
			  (c.flags & (HOTSTACK_CFG_COLLAPSE | HOTSTACK_CFG_USER_TABLES));
		c.event_type = 0;
		c.event_config = 0;
		c.precise = 0;
		c.sample = 0;
		/* A budget's worker re-weighing the probe, now and then. */
		c.budget_ppm = chance(t, 25) ? 1 + below(t, 1000000) : 0;
		c.cpus_ptr = 0;
		c.cpus_words = 0;
		c.off_cpu_tasks = 1U << (4 + below(t, 8));
		c.min_block_us = chance(t, 20) ? below(t, 1000) : 0;
		/* Wall-clock time: cpu-clock samples as well, each its time. */
		if (chance(t, 50)) {
			c.event_type = PERF_TYPE_SOFTWARE;
			c.event_config = PERF_COUNT_SW_CPU_CLOCK;
			c.sample = 1000000;
			c.keys |= HOTSTACK_KEY_CONTEXT;
		}
		/* This process and what it forks: the fork probe too. */
		if (chance(t, 25)) {
			c.flags |= HOTSTACK_CFG_PID | HOTSTACK_CFG_TASK;
			c.pid = getpid();
		}
		memset(&x, 0, sizeof(x));
	}
	mutate_config(t, &c, &x);
	c.size = pick_size(t, sizeof(c), HOTSTACK_CONFIG_SIZE_VER0);
	place(t, &c, sizeof(c), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, CONFIGURE, {flags %#x type %u precise %u config %#llx sample %llu "
	     "cpus_ptr %#llx cpus_words %u pid %u stacks %#x max_depth %u keys %#x "
	     "table_entries %u arena_frames %llu budget_ppm %u nr_cgroups %u cgroups_ptr %#llx "
	     "off_cpu_tasks %u min_block_us %u reserved %#llx unwind_mb %u pad %u cpu_entries %u "
	     "pad2 %u} in %s)",
	     s->fd, c.flags, c.event_type, c.precise, (unsigned long long)c.event_config,
	     (unsigned long long)c.sample, (unsigned long long)c.cpus_ptr, c.cpus_words, c.pid,
	     c.stacks, c.max_depth, c.keys, c.table_entries,
	     (unsigned long long)c.arena_frames, c.budget_ppm, c.nr_cgroups,
	     (unsigned long long)c.cgroups_ptr, c.off_cpu_tasks, c.min_block_us,
	     (unsigned long long)c.reserved, c.unwind_mb, c.pad, c.cpu_entries, c.pad2, where);
	ret = ioctl(s->fd, HOTSTACK_IOC_CONFIGURE, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_CONFIG_SIZE_VER0, &al)) {
		bool bad, hw, pid;

		kview(&a, &c, sizeof(k), &k);
		bad = config_bad(&k, &x);
		hw = k.event_type == PERF_TYPE_HARDWARE || k.event_type == PERF_TYPE_RAW;
		pid = k.flags & HOTSTACK_CFG_PID;
		allow_add(&al, ENOMEM);
		if (x.fault && !x.unknown && k.cpus_ptr && k.cpus_words) {
			/* The CPU mask is read before anything else is looked at. */
			allow_add(&al, EFAULT);
		} else {
			/* Running or mapped: refused before the fields are looked at. */
			allow_add(&al, EBUSY);
			if (x.unknown)
				allow_add(&al, EFAULT);
			/* Descriptors read from wherever cgroups_ptr points: none a cgroup's. */
			if (k.nr_cgroups && k.cgroups_ptr && k.nr_cgroups <= HOTSTACK_MAX_CGROUPS) {
				allow_add(&al, EFAULT);
				allow_add(&al, EBADF);
			}
			if (pid)
				allow_add(&al, ESRCH);
			if (bad || hw || x.empty || x.big || x.unknown || pid)
				allow_add(&al, EINVAL);
			if (x.empty && !x.unknown)
				allow_add(&al, ENODEV);		/* no CPU of the mask */
			if (!bad) {
				/* Memory limit; no CPU of the mask online; perf's. */
				allow_add(&al, 0);
				allow_add(&al, E2BIG);
				allow_add(&al, ENODEV);
				if (hw) {
					allow_add(&al, ENOENT);
					allow_add(&al, EOPNOTSUPP);
				}
				/* A kernel without the sched_switch tracepoint. */
				if (k.flags & HOTSTACK_CFG_OFF_CPU)
					allow_add(&al, EOPNOTSUPP);
			}
		}
	}
	check_err(t, C_CONFIGURE, ret, err, al);
}

/* ---- the other ioctls --------------------------------------------------- */

static void op_state(struct thr *t, enum call c, unsigned long cmd)
{
	struct slot *s = pick_fd(t);
	unsigned long arg = 0;
	struct allow al;

	if (!s) {
		op_open(t);
		return;
	}
	if (chance(t, 15))
		arg = chance(t, 30) ? (uintptr_t)t->arg : pick_value(t) | 1;
	DESC(t, "ioctl(%d, %s, %#lx)", s->fd, call_name[c], arg);
	if (arg)
		al = ALLOW(EINVAL);	/* they take no argument: 0 */
	else if (c == C_START)
		/*
		 * EINVAL not configured, EBUSY running; perf's errnos; with
		 * HOTSTACK_CFG_TASK, ESRCH and E2BIG for the process's threads.
		 */
		al = ALLOW(0, EINVAL, EBUSY, ENOMEM, ENOENT, EOPNOTSUPP, ENODEV, ESRCH, E2BIG);
	else
		al = ALLOW(0, EINVAL);	/* EINVAL: not in the state for it */
	check(t, c, ioctl(s->fd, cmd, arg), al);
}

static void op_start(struct thr *t)
{
	op_state(t, C_START, HOTSTACK_IOC_START);
}

static void op_stop(struct thr *t)
{
	op_state(t, C_STOP, HOTSTACK_IOC_STOP);
}

static void op_reset(struct thr *t)
{
	op_state(t, C_RESET, HOTSTACK_IOC_RESET);
}

static void op_snapshot(struct thr *t)
{
	op_state(t, C_SNAPSHOT, HOTSTACK_IOC_SNAPSHOT);
}

static void op_get_info(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_info in, k;
	struct allow al = { { 0, 0 } };
	struct arg a;
	char where[128];
	long ret;
	int off = -1, e, err;

	if (!s) {
		op_open(t);
		return;
	}
	memset(&in, 0, sizeof(in));
	if (chance(t, 10))
		in.flags = pick_value(t) | 1;
	if (chance(t, 25)) {
		off = 4 + below(t, sizeof(in) - 4);
		((unsigned char *)&in)[off] = 1 + below(t, 255);
	}
	in.size = pick_size(t, sizeof(in), HOTSTACK_INFO_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, GET_INFO, {flags %#x, byte %d nonzero} in %s)", s->fd, in.flags, off,
	     where);
	ret = ioctl(s->fd, HOTSTACK_IOC_GET_INFO, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_INFO_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		/* Only size, flags and reserved are read: out fields are ignored. */
		if (k.flags || nonzero(k.reserved, 0, sizeof(k.reserved)))
			allow_add(&al, EINVAL);
		else	/* a read-only page cannot take the answer */
			allow_add(&al, a.where == W_RO ? EFAULT : 0);
	}
	e = check_err(t, C_GET_INFO, ret, err, al);
	if (e || a.where == W_RO || !a.access)
		return;
	memcpy(&k, a.p, MIN(a.usize, sizeof(k)));
	if (k.size != a.usize || k.abi_version != HOTSTACK_ABI_VERSION ||
	    k.max_depth != HOTSTACK_MAX_DEPTH || k.max_sessions != max_sessions ||
	    (k.features & ~HOTSTACK_FEAT_WAKERS) !=
	    (HOTSTACK_FEAT_USER_TABLES | HOTSTACK_FEAT_CGROUP_PATH) ||
	    k.pad || k.reserved[0] || k.reserved[1] || k.max_freq != HOTSTACK_MAX_FREQ ||
	    k.memory_used > k.max_memory || !k.nr_sessions)
		report(t, "%s: answered size %u abi_version %u max_sessions %u nr_sessions %u "
		       "max_depth %u max_memory %llu features %#llx memory_used %llu max_freq %u "
		       "pad %u reserved %#llx %#llx", t->desc, k.size, k.abi_version,
		       k.max_sessions, k.nr_sessions, k.max_depth,
		       (unsigned long long)k.max_memory, (unsigned long long)k.features,
		       (unsigned long long)k.memory_used, k.max_freq, k.pad,
		       (unsigned long long)k.reserved[0], (unsigned long long)k.reserved[1]);
	else if (a.usize >= HOTSTACK_INFO_SIZE_VER1 &&
		 (k.user_max_sessions || k.user_sessions || k.user_max_memory ||
		  k.user_memory_used || k.user_freq_used || k.pad2))
		report(t, "%s: root has no quota, but GET_INFO said user_max_sessions %u "
		       "user_sessions %u user_max_memory %llu user_memory_used %llu "
		       "user_freq_used %u pad2 %u", t->desc, k.user_max_sessions,
		       k.user_sessions, (unsigned long long)k.user_max_memory,
		       (unsigned long long)k.user_memory_used, k.user_freq_used, k.pad2);
	else if (a.usize >= HOTSTACK_INFO_SIZE_VER2 && k.unwind_used > k.max_unwind)
		report(t, "%s: unwind_used %llu past max_unwind %llu", t->desc,
		       (unsigned long long)k.unwind_used, (unsigned long long)k.max_unwind);
	else if (k.nr_sessions > max_sessions)
		note_once(NOTE_SESSIONS, "GET_INFO said %u sessions of %u (an open() being "
			  "refused counts for a moment)", k.nr_sessions, max_sessions);
	check_tail(t, &a, sizeof(k), "GET_INFO");
}

static void remember_id(struct thr *t, uint32_t id)
{
	memmove(t->ids + 1, t->ids, sizeof(t->ids) - sizeof(t->ids[0]));
	t->ids[0] = id;
}

/*
 * A GET_STATS answer as the ABI describes it; @n bytes of it written (the
 * caller's size): cpu_entries only from HOTSTACK_STATS_SIZE_VER5 on.
 */
static void check_stats(struct thr *t, const struct hotstack_stats *st, size_t n)
{
	bool ok = st->state <= HOTSTACK_STATE_RUNNING && !st->pad && !st->pad2 &&
		  st->id && st->cpus_sampled <= st->nr_cpus;
	bool v5 = n >= HOTSTACK_STATS_SIZE_VER5;

	if (st->state == HOTSTACK_STATE_NEW)
		ok = ok && !st->nr_cpus && !st->mmap_size && !st->table_entries &&
		     !st->arena_frames && !st->total.samples && (!v5 || !st->cpu_entries);
	else
		ok = ok && st->nr_cpus && st->mmap_size && !(st->mmap_size % page) &&
		     is_pow2(st->table_entries) && st->table_entries >= HOTSTACK_MIN_ENTRIES &&
		     st->table_entries <= HOTSTACK_MAX_ENTRIES &&
		     st->arena_frames >= HOTSTACK_MIN_ARENA &&
		     st->arena_frames <= HOTSTACK_MAX_ARENA &&
		     (!v5 || (is_pow2(st->cpu_entries) &&
			      st->cpu_entries >= HOTSTACK_MIN_ENTRIES &&
			      st->cpu_entries <= HOTSTACK_MAX_ENTRIES));
	ok = ok && (!v5 || !st->pad4);
	if (!ok)
		report(t, "%s: answered state %u nr_cpus %u id %u mmap_size %llu "
		       "table_entries %u arena_frames %llu cpus_sampled %u samples %llu pad %u "
		       "pad2 %u; size %zu: cpu_entries %u pad4 %u", t->desc, st->state,
		       st->nr_cpus, st->id, (unsigned long long)st->mmap_size, st->table_entries,
		       (unsigned long long)st->arena_frames, st->cpus_sampled,
		       (unsigned long long)st->total.samples, st->pad, st->pad2, n,
		       v5 ? st->cpu_entries : 0, v5 ? st->pad4 : 0);
	else
		remember_id(t, st->id);
}

static void op_get_stats(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_stats in, k;
	struct allow al = { { 0, 0 } };
	struct arg a;
	char where[128];
	long ret;
	int off = -1, e, err;

	if (!s) {
		op_open(t);
		return;
	}
	memset(&in, 0, sizeof(in));
	if (chance(t, 20))
		in.flags = HOTSTACK_STATS_READABLE;
	else if (chance(t, 10))
		in.flags = pick_value(t);
	if (chance(t, 25)) {
		off = 4 + below(t, sizeof(in) - 4);
		((unsigned char *)&in)[off] = 1 + below(t, 255);
	}
	in.size = pick_size(t, sizeof(in), HOTSTACK_STATS_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, GET_STATS, {flags %#x, byte %d nonzero} in %s)", s->fd, in.flags,
	     off, where);
	ret = ioctl(s->fd, HOTSTACK_IOC_GET_STATS, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_STATS_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		/* Only size and flags are read: out fields are ignored. */
		if (k.flags & ~HOTSTACK_STATS_READABLE)
			allow_add(&al, EINVAL);
		else
			allow_add(&al, a.where == W_RO ? EFAULT : 0);
	}
	e = check_err(t, C_GET_STATS, ret, err, al);
	if (e || a.where == W_RO || !a.access)
		return;
	memcpy(&k, a.p, MIN(a.usize, sizeof(k)));
	if (k.size != a.usize)
		report(t, "%s: the size field became %u", t->desc, k.size);
	check_stats(t, &k, a.usize);
	check_tail(t, &a, sizeof(k), "GET_STATS");
}

/* What the module makes of ioctl number @cmd: which call, or C_IOCTL (none). */
static enum call classify(unsigned int cmd)
{
	unsigned int nosize = cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);

	/* The size bits of the number are ignored: the struct's size field rules. */
	if (nosize == (HOTSTACK_IOC_GET_INFO & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_GET_INFO;
	if (nosize == (HOTSTACK_IOC_CONFIGURE & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_CONFIGURE;
	if (nosize == (HOTSTACK_IOC_GET_STATS & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_GET_STATS;
	if (nosize == (HOTSTACK_IOC_ADD_TABLE & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_ADD_TABLE;
	if (nosize == (HOTSTACK_IOC_SET_MAPS & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_SET_MAPS;
	if (nosize == (HOTSTACK_IOC_UNWIND_MISSES & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_MISSES;
	if (nosize == (HOTSTACK_IOC_CGROUP_PATH & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
		return C_CGPATH;
	switch (cmd) {
	case HOTSTACK_IOC_START:
		return C_START;
	case HOTSTACK_IOC_STOP:
		return C_STOP;
	case HOTSTACK_IOC_RESET:
		return C_RESET;
	case HOTSTACK_IOC_SNAPSHOT:
		return C_SNAPSHOT;
	}
	return C_IOCTL;
}

/* Magic numbers the VFS answers itself (fs/ioctl.c), before the driver. */
static bool vfs_magic(unsigned int magic)
{
	return magic == 0 || magic == 'T' || magic == 'X' || magic == 'f' || magic == 0x94;
}

/* Unknown ioctl numbers, and known ones with other size or direction bits. */
static void op_ioctl(struct thr *t)
{
	static const unsigned int known[] = {
		HOTSTACK_IOC_GET_INFO, HOTSTACK_IOC_CONFIGURE, HOTSTACK_IOC_START,
		HOTSTACK_IOC_STOP, HOTSTACK_IOC_RESET, HOTSTACK_IOC_SNAPSHOT,
		HOTSTACK_IOC_GET_STATS, HOTSTACK_IOC_ADD_TABLE, HOTSTACK_IOC_SET_MAPS,
		HOTSTACK_IOC_UNWIND_MISSES, HOTSTACK_IOC_CGROUP_PATH,
	};
	struct slot *s = pick_fd(t);
	unsigned int cmd, dir = below(t, 4), magic = HOTSTACK_IOC_MAGIC, k = below(t, 10);
	uint32_t size = below(t, 1U << 14);
	unsigned long arg;
	struct allow al;
	enum call c;
	int kind;

	if (!s) {
		op_open(t);
		return;
	}
	if (k < 4) {
		cmd = _IOC(dir, magic, below(t, 2) ? below(t, 16) : below(t, 256), size);
	} else if (k < 7) {
		cmd = known[below(t, ARRAY_SIZE(known))];
		cmd = (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) | size << _IOC_SIZESHIFT;
		if (chance(t, 30))
			cmd = (cmd & ~(_IOC_DIRMASK << _IOC_DIRSHIFT)) | dir << _IOC_DIRSHIFT;
	} else {
		do
			magic = below(t, 256);
		while (vfs_magic(magic));
		cmd = _IOC(dir, magic, below(t, 256), size);
	}
	c = classify(cmd);
	/* 0: a zeroed struct of the right size; 1: NULL; 2: a random value. */
	kind = below(t, 5) < 3 ? 0 : below(t, 2) + 1;
	memset(t->arg, 0, 2 * page);
	if (kind == 0) {
		uint32_t sz = c == C_GET_INFO ? sizeof(struct hotstack_info) :
			      c == C_GET_STATS ? sizeof(struct hotstack_stats) :
			      c == C_ADD_TABLE ? sizeof(struct hotstack_unwind_table) :
			      c == C_SET_MAPS ? sizeof(struct hotstack_unwind_maps) :
			      c == C_MISSES ? sizeof(struct hotstack_unwind_misses) :
			      c == C_CGPATH ? sizeof(struct hotstack_cgroup_path) :
			      sizeof(struct hotstack_config);

		memcpy(t->arg, &sz, sizeof(sz));
		arg = (uintptr_t)t->arg;
	} else {
		arg = kind == 1 ? 0 : pick_value(t);
	}
	switch (c) {
	case C_IOCTL:
		al = ALLOW(ENOTTY);
		break;
	case C_GET_INFO:
	case C_GET_STATS:
		al = kind == 0 ? ALLOW(0) : kind == 1 ? ALLOW(EFAULT) :
		     ALLOW(0, EFAULT, EINVAL, E2BIG);
		break;
	case C_ADD_TABLE:
	case C_SET_MAPS:
	case C_MISSES:
		/* All zero: no rows, no pid, no room: refused. */
		al = kind == 0 ? ALLOW(EINVAL) : kind == 1 ? ALLOW(EFAULT) :
		     ALLOW(0, EFAULT, EINVAL, E2BIG, ENOSPC, ENOMEM, ESRCH, ESTALE);
		break;
	case C_CGPATH:
		/* All zero: no cgroup has id 0. */
		al = kind == 0 ? ALLOW(ENOENT) : kind == 1 ? ALLOW(EFAULT) :
		     ALLOW(0, EFAULT, EINVAL, E2BIG, ENOENT);
		break;
	case C_CONFIGURE:
		/* All zero: sample 0 is refused (EBUSY first when running or mapped). */
		al = kind == 0 ? ALLOW(EINVAL, EBUSY, ENOMEM) : kind == 1 ? ALLOW(EFAULT) :
		     ALLOW(0, EFAULT, EINVAL, E2BIG, EBUSY, ENOMEM, ENODEV, ENOENT, EOPNOTSUPP,
			   ESRCH);
		break;
	default:
		al = arg ? ALLOW(EINVAL) : c == C_START ?
		     ALLOW(0, EINVAL, EBUSY, ENOMEM, ENOENT, EOPNOTSUPP, ENODEV, ESRCH, E2BIG) :
		     ALLOW(0, EINVAL);
		break;
	}
	DESC(t, "ioctl(%d, %#x (dir %u magic %#x nr %#x size %u: %s), %#lx)", s->fd, cmd,
	     _IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd),
	     c == C_IOCTL ? "unknown" : call_name[c], arg);
	check(t, C_IOCTL, ioctl(s->fd, cmd, arg), al);
}


/* ---- unwind tables ------------------------------------------------------- */

/* A rule, valid for this architecture or (now and then) not. */
static struct hotstack_unwind_rule fuzz_rule(struct thr *t)
{
	struct hotstack_unwind_rule r;

	memset(&r, 0, sizeof(r));
	r.kind = below(t, HOTSTACK_UW_KINDS);
	if (r.kind == HOTSTACK_UW_CFA_SP || r.kind == HOTSTACK_UW_CFA_FP ||
	    r.kind == HOTSTACK_UW_PLT) {
		r.flags = HOTSTACK_UWF_RA_SAVED | (chance(t, 50) ? HOTSTACK_UWF_FP_SAVED : 0);
		r.ra_off = -8;
		r.fp_off = r.flags & HOTSTACK_UWF_FP_SAVED ? -8 * (int)(1 + below(t, 8)) : 0;
		r.cfa_off = r.kind == HOTSTACK_UW_PLT ? 1 + below(t, 15) : 8 * below(t, 64);
	}
	if (chance(t, 5)) {
		/* Anything: the module must say EINVAL where the ABI does. */
		uint64_t v = rnd(t);

		memcpy(&r, &v, 8);
		r.cfa_off = pick_value(t);
	}
	return r;
}

/* Whether the ABI refuses rule @r on this machine (uapi: hotstack_unwind_rule). */
static bool rule_bad(const struct hotstack_unwind_rule *r)
{
	bool cfa = r->kind == HOTSTACK_UW_CFA_SP || r->kind == HOTSTACK_UW_CFA_FP ||
		   r->kind == HOTSTACK_UW_PLT;
#ifdef __x86_64__
	bool x86 = true;
#else
	bool x86 = false;
#endif

	if (r->kind >= HOTSTACK_UW_KINDS || r->pad || (r->flags & ~HOTSTACK_UWF_ALL))
		return true;
	if (!cfa)
		return r->flags || r->fp_off || r->ra_off || r->cfa_off;
	if (r->kind == HOTSTACK_UW_PLT ? !x86 || r->cfa_off < 1 || r->cfa_off > 15 :
					 r->cfa_off < -(1 << 20) || r->cfa_off > (1 << 20))
		return true;
	if (!(r->flags & HOTSTACK_UWF_FP_SAVED) ? r->fp_off != 0 : r->fp_off % 8 != 0)
		return true;
	if (!(r->flags & HOTSTACK_UWF_RA_SAVED) ? r->ra_off != 0 : r->ra_off % 8 != 0)
		return true;
	return x86 && (!(r->flags & HOTSTACK_UWF_RA_SAVED) || r->ra_off != -8);
}

static void op_add_table(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_unwind_table in, k;
	struct hotstack_unwind_row *rows = (void *)t->rbuf;
	struct hotstack_unwind_rule rules[64];
	struct allow al = { { 0, 0 } };
	uint32_t nr_rows = 1 + below(t, READ_MAX / sizeof(*rows)), nr_rules = 1 + below(t, 64), i;
	bool bad_rows = false, bad_rules = false;
	struct arg a;
	char where[128];
	long ret;
	int e, err;

	if (!s) {
		op_open(t);
		return;
	}
	for (i = 0; i < nr_rules; i++) {
		rules[i] = fuzz_rule(t);
		bad_rules |= rule_bad(&rules[i]);
	}
	for (i = 0; i < nr_rows; i++) {
		rows[i].pc = i * (1 + below(t, 64)) + (i ? rows[i - 1].pc + 1 : below(t, 1U << 20));
		rows[i].rule = below(t, nr_rules);
		if (chance(t, 1)) {
			rows[i].pc = pick_value(t);
			rows[i].rule = chance(t, 50) ? pick_value(t) : rows[i].rule;
		}
		bad_rows |= rows[i].rule >= nr_rules || (i && rows[i].pc <= rows[i - 1].pc);
	}
	memset(&in, 0, sizeof(in));
	in.rows_ptr = (uintptr_t)rows;
	in.rules_ptr = (uintptr_t)rules;
	in.nr_rows = nr_rows;
	in.nr_rules = nr_rules;
	if (chance(t, 10))
		in.nr_rows = pick_value(t);
	if (chance(t, 5))
		in.nr_rules = pick_value(t);
	if (chance(t, 5))
		in.rows_ptr = chance(t, 50) ? kernel_ptr : pick_value(t);
	if (chance(t, 5))
		in.rules_ptr = chance(t, 50) ? 0 : pick_value(t);
	if (chance(t, 5))
		in.flags = pick_value(t) | 1;
	if (chance(t, 5))
		in.reserved[below(t, 2)] = pick_value(t) | 1;
	if (chance(t, 5))
		in.pad = 1;
	in.size = pick_size(t, sizeof(in), HOTSTACK_UNWIND_TABLE_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, ADD_TABLE, {flags %#x rows %u at %#llx rules %u at %#llx pad %u "
	     "reserved %#llx %#llx}%s%s in %s)", s->fd, in.flags, in.nr_rows,
	     (unsigned long long)in.rows_ptr, in.nr_rules, (unsigned long long)in.rules_ptr,
	     in.pad, (unsigned long long)in.reserved[0], (unsigned long long)in.reserved[1],
	     bad_rows ? ", rows out of order or of no rule" : "",
	     bad_rules ? ", a rule refused" : "", where);
	ret = ioctl(s->fd, HOTSTACK_IOC_ADD_TABLE, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_UNWIND_TABLE_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		if (k.flags || k.pad || k.reserved[0] || k.reserved[1] || !k.nr_rows ||
		    k.nr_rows > HOTSTACK_UW_MAX_ROWS || !k.nr_rules ||
		    k.nr_rules > HOTSTACK_UW_MAX_RULES) {
			allow_add(&al, EINVAL);
		} else {
			/* Too large; pointers elsewhere; the content; the state; memory. */
			al = ALLOW(ENOSPC, ENOMEM, EINVAL);
			if (k.rows_ptr != (uintptr_t)rows || k.rules_ptr != (uintptr_t)rules ||
			    k.nr_rows > nr_rows || k.nr_rules > nr_rules)
				allow_add(&al, EFAULT);
			if (k.rows_ptr != (uintptr_t)rows || k.rules_ptr != (uintptr_t)rules ||
			    k.nr_rows != nr_rows || k.nr_rules != nr_rules ||
			    (!bad_rows && !bad_rules)) {
				allow_add(&al, 0);
				/* Added, and then the answer cannot be written. */
				if (a.where == W_RO)
					allow_add(&al, EFAULT);
			}
		}
	}
	e = check_err(t, C_ADD_TABLE, ret, err, al);
	if (e || a.where == W_RO || !a.access)
		return;
	memcpy(&k, a.p, MIN(a.usize, sizeof(k)));
	if (!k.id || k.bytes < 4ULL * k.nr_rows + 12ULL * k.nr_rules)
		report(t, "%s: answered id %u bytes %llu", t->desc, k.id,
		       (unsigned long long)k.bytes);
	check_tail(t, &a, sizeof(k), "ADD_TABLE");
}

/* Up to @max executable mappings of process @pid. */
static uint32_t fuzz_maps(pid_t pid, struct hotstack_unwind_map *maps, uint32_t max)
{
	unsigned long long start, end;
	char path[64], line[512], perms[8];
	uint32_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[2] != 'x' ||
		    strstr(line, "[vsyscall]"))
			continue;
		memset(&maps[n], 0, sizeof(maps[n]));
		maps[n].start = start;
		maps[n].end = end;
		maps[n].bias = start;
		n++;
	}
	fclose(f);
	return n;
}

static void op_set_maps(struct thr *t)
{
	static const uint32_t pids[] = { 1, 2, 4194304, 0 };
	struct slot *s = pick_fd(t);
	struct hotstack_unwind_maps in, k;
	struct hotstack_unwind_map *maps = (void *)t->rbuf;
	struct allow al = { { 0, 0 } };
	uint32_t pid = chance(t, 80) ? (uint32_t)getpid() : pids[below(t, ARRAY_SIZE(pids))];
	uint32_t n = fuzz_maps(pid ? pid : 1, maps, 64), i;
	struct arg a;
	char where[128];
	long ret;

	if (!s) {
		op_open(t);
		return;
	}
	for (i = 0; i < n; i++) {
		maps[i].table = chance(t, 70) ? below(t, 16) : 0;
		if (chance(t, 3))
			set_field(&maps[i], &(const struct field){ "any", 8 * below(t, 4), 8 },
				  pick_value(t));
	}
	memset(&in, 0, sizeof(in));
	in.pid = pid;
	in.nr_maps = chance(t, 10) ? below(t, n + 1) : n;
	in.maps_ptr = in.nr_maps ? (uintptr_t)maps : 0;
	if (chance(t, 5))
		in.flags = HOTSTACK_MAPS_REMOVE;
	if (chance(t, 5))
		in.nr_maps = pick_value(t);
	if (chance(t, 5))
		in.maps_ptr = chance(t, 50) ? kernel_ptr : pick_value(t);
	if (chance(t, 3))
		in.flags = pick_value(t);
	if (chance(t, 3))
		in.reserved = pick_value(t) | 1;
	in.size = pick_size(t, sizeof(in), HOTSTACK_UNWIND_MAPS_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, SET_MAPS, {flags %#x pid %u maps %u at %#llx reserved %#llx} in %s)",
	     s->fd, in.flags, in.pid, in.nr_maps, (unsigned long long)in.maps_ptr,
	     (unsigned long long)in.reserved, where);
	ret = ioctl(s->fd, HOTSTACK_IOC_SET_MAPS, a.p);
	if (copy_in(&a, HOTSTACK_UNWIND_MAPS_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		if ((k.flags & ~HOTSTACK_MAPS_ALL) || k.reserved || !k.pid || k.pid > 4194304 ||
		    k.nr_maps > HOTSTACK_UW_MAX_MAPS || !k.nr_maps != !k.maps_ptr ||
		    ((k.flags & HOTSTACK_MAPS_REMOVE) && k.nr_maps))
			allow_add(&al, EINVAL);
		else
			/* Pointers, the mappings' order, the process, its VMAs, the state. */
			al = ALLOW(0, EFAULT, EINVAL, ESRCH, ESTALE, ENOSPC, ENOMEM);
	}
	check(t, C_SET_MAPS, ret, al);
}

static void op_misses(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_unwind_misses in, k;
	uint32_t *pids = (void *)t->rbuf;
	struct allow al = { { 0, 0 } };
	struct arg a;
	char where[128];
	long ret;
	int e, err;

	if (!s) {
		op_open(t);
		return;
	}
	memset(&in, 0, sizeof(in));
	in.pids_ptr = (uintptr_t)pids;
	in.nr = 1 + below(t, 4096);
	if (chance(t, 5))
		in.nr = pick_value(t);
	if (chance(t, 5))
		in.pids_ptr = chance(t, 30) ? 0 : chance(t, 50) ? kernel_ptr : pick_value(t);
	if (chance(t, 5))
		in.flags = pick_value(t) | 1;
	if (chance(t, 3))
		in.pad = 1;
	if (chance(t, 3))
		in.reserved = pick_value(t) | 1;
	in.size = pick_size(t, sizeof(in), HOTSTACK_UNWIND_MISSES_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, UNWIND_MISSES, {flags %#x pids %u at %#llx pad %u reserved %#llx} in "
	     "%s)", s->fd, in.flags, in.nr, (unsigned long long)in.pids_ptr, in.pad,
	     (unsigned long long)in.reserved, where);
	ret = ioctl(s->fd, HOTSTACK_IOC_UNWIND_MISSES, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_UNWIND_MISSES_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		if (k.flags || k.pad || k.reserved || !k.nr || k.nr > 4096 || !k.pids_ptr)
			allow_add(&al, EINVAL);
		else
			/* The state; the pids' room elsewhere; the answer to a read-only page. */
			al = ALLOW(0, EINVAL, ENOMEM, EFAULT);
	}
	e = check_err(t, C_MISSES, ret, err, al);
	if (e || a.where == W_RO || !a.access)
		return;
	memcpy(&k, a.p, MIN(a.usize, sizeof(k)));
	if (k.nr > in.nr || k.nr > HS_FUZZ_MISSES)
		report(t, "%s: answered %u pids", t->desc, k.nr);
	check_tail(t, &a, sizeof(k), "UNWIND_MISSES");
}

/*
 * CGROUP_PATH: a cgroup's name by its id (the root's, 1, now and then),
 * with flags and reserved words garbage at times; any opener may ask.
 */
static void op_cgroup_path(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_cgroup_path in, k;
	struct allow al = { { 0, 0 } };
	struct arg a;
	char where[128];
	long ret;
	int e, err;

	if (!s) {
		op_open(t);
		return;
	}
	memset(&in, 0, sizeof(in));
	in.id = chance(t, 30) ? 1 : chance(t, 50) ? below(t, 10000) : pick_value(t);
	if (chance(t, 5))
		in.flags = pick_value(t) | 1;
	if (chance(t, 5))
		in.reserved[below(t, 2)] = pick_value(t) | 1;
	/* The path is out only: what the caller has there is ignored. */
	if (chance(t, 20))
		memset(in.path, 'x', sizeof(in.path));
	in.size = pick_size(t, sizeof(in), HOTSTACK_CGROUP_PATH_SIZE_VER0);
	place(t, &in, sizeof(in), &a);
	arg_str(&a, where, sizeof(where));
	DESC(t, "ioctl(%d, CGROUP_PATH, {flags %#x id %llu reserved %#llx %#llx} in %s)", s->fd,
	     in.flags, (unsigned long long)in.id, (unsigned long long)in.reserved[0],
	     (unsigned long long)in.reserved[1], where);
	ret = ioctl(s->fd, HOTSTACK_IOC_CGROUP_PATH, a.p);
	err = errno;
	if (copy_in(&a, HOTSTACK_CGROUP_PATH_SIZE_VER0, &al)) {
		kview(&a, &in, sizeof(k), &k);
		if (k.flags || k.reserved[0] || k.reserved[1])
			allow_add(&al, EINVAL);
		else
			al = ALLOW(0, ENOENT, EFAULT);
	}
	e = check_err(t, C_CGPATH, ret, err, al);
	if (e || a.where == W_RO || !a.access)
		return;
	memcpy(&k, a.p, MIN(a.usize, sizeof(k)));
	if (k.path[0] != '/' || !memchr(k.path, '\0', sizeof(k.path)) ||
	    k.flags & ~HOTSTACK_CGROUP_GONE)
		report(t, "%s: answered flags %#x path '%.40s'", t->desc, k.flags, k.path);
	check_tail(t, &a, sizeof(k), "CGROUP_PATH");
}

/* ---- mmap and what follows ------------------------------------------------ */

static struct map *pick_map(struct thr *t)
{
	unsigned int i, k = below(t, NR_MAPS);

	for (i = 0; i < NR_MAPS; i++) {
		struct map *m = &t->map[(k + i) % NR_MAPS];

		if (m->addr)
			return m;
	}
	return NULL;
}

static struct map *free_map(struct thr *t)
{
	unsigned int i;

	for (i = 0; i < NR_MAPS; i++)
		if (!t->map[i].addr)
			return &t->map[i];
	return NULL;
}

static const char *prot_str(int prot)
{
	static const char *const names[] = {
		"PROT_NONE", "PROT_READ", "PROT_WRITE", "PROT_READ|PROT_WRITE", "PROT_EXEC",
		"PROT_READ|PROT_EXEC", "PROT_WRITE|PROT_EXEC", "PROT_READ|PROT_WRITE|PROT_EXEC",
	};

	return names[prot & 7];
}

static int pick_prot(struct thr *t)
{
	static const int prots[] = {
		PROT_READ, PROT_READ, PROT_READ, PROT_READ, PROT_READ | PROT_EXEC, PROT_NONE,
		PROT_READ | PROT_WRITE, PROT_WRITE, PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};

	return prots[below(t, ARRAY_SIZE(prots))];
}

#define ALIGN_TO(x, a)	(((x) + (a) - 1) / (a) * (a))

/*
 * The mapping's header, as the ABI says it is (@size: the length mapped):
 * the header padded to pages, then each generation's store (a page of its
 * counters, the stacks, the frames, padded to a page) and its CPU slots
 * (counters, then count entries, padded to 128 bytes).
 */
static void check_header(struct thr *t, const unsigned char *p, size_t size)
{
	struct hotstack_mmap_header h;
	uint64_t store, slot, gen;

	if (!guarded_read(t, p, sizeof(h), &h)) {
		report(t, "%s: reading the header: signal %d at %p", t->desc, t->fault_sig,
		       t->fault_addr);
		return;
	}
	store = ALIGN_TO(page + (uint64_t)h.table_entries * sizeof(struct hotstack_stack) +
			 h.arena_frames * 8, page);
	slot = ALIGN_TO(h.cpu_stats_size + (uint64_t)h.cpu_entries * sizeof(struct hotstack_count),
			128);
	gen = store + slot * h.nr_slots;
	if (h.version != HOTSTACK_MMAP_VERSION || h.header_size != sizeof(h) ||
	    h.mmap_size != size || h.entry_size != sizeof(struct hotstack_stack) ||
	    h.count_size != sizeof(struct hotstack_count) || h.store_stats_size != page ||
	    h.cpu_stats_size < sizeof(struct hotstack_cpu_stats) || h.cpu_stats_size % 8 ||
	    !is_pow2(h.table_entries) || h.table_entries < HOTSTACK_MIN_ENTRIES ||
	    h.table_entries > HOTSTACK_MAX_ENTRIES || !is_pow2(h.cpu_entries) ||
	    h.cpu_entries < HOTSTACK_MIN_ENTRIES || h.cpu_entries > HOTSTACK_MAX_ENTRIES ||
	    h.arena_frames < HOTSTACK_MIN_ARENA || h.arena_frames > HOTSTACK_MAX_ARENA ||
	    h.store_size != store || h.slot_size != slot ||
	    !h.nr_slots || h.gen_offset[0] != ALIGN_TO(sizeof(h) + 4ULL * h.nr_slots, page) ||
	    h.gen_offset[1] != h.gen_offset[0] + gen ||
	    h.mmap_size != ALIGN_TO(h.gen_offset[1] + gen, page) || h.pad ||
	    h.reserved[0] || h.reserved[1] ||
	    h.state > HOTSTACK_STATE_RUNNING || h.active > 1 || h.readable > 1)
		report(t, "%s: header version %u header_size %u mmap_size %llu (mapped %zu) "
		       "entry_size %u count_size %u nr_slots %u table_entries %u arena_frames %llu "
		       "cpu_entries %u store_stats_size %u cpu_stats_size %u store_size %llu "
		       "slot_size %llu gen_offset %llu %llu pad %u state %u active %u readable %u",
		       t->desc, h.version, h.header_size, (unsigned long long)h.mmap_size, size,
		       h.entry_size, h.count_size, h.nr_slots, h.table_entries,
		       (unsigned long long)h.arena_frames, h.cpu_entries, h.store_stats_size,
		       h.cpu_stats_size, (unsigned long long)h.store_size,
		       (unsigned long long)h.slot_size, (unsigned long long)h.gen_offset[0],
		       (unsigned long long)h.gen_offset[1], h.pad, h.state, h.active, h.readable);
}

static void op_mmap(struct thr *t)
{
	struct slot *s = pick_fd(t);
	struct hotstack_stats st;
	unsigned int k = below(t, 100);
	size_t size = 0, len;
	off_t off = 0;
	int prot = pick_prot(t), flags, e, err;
	struct allow al;
	struct map *m;
	void *p;

	if (!s) {
		op_open(t);
		return;
	}
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	DESC(t, "ioctl(%d, GET_STATS, {size %zu}) for mmap_size", s->fd, sizeof(st));
	if (!check(t, C_GET_STATS, ioctl(s->fd, HOTSTACK_IOC_GET_STATS, &st), ALLOW(0))) {
		check_stats(t, &st, sizeof(st));
		size = st.mmap_size;
	}
	if (k < 55 && size)
		len = size;
	else if (k < 62 && size)
		len = size - page;
	else if (k < 68 && size)
		len = size + page;
	else if (k < 72 && size)
		len = size - 100;		/* rounded up: the exact length */
	else if (k < 85)
		len = page * (1 + below(t, 64));
	else if (k < 90)
		len = 0;
	else if (k < 95)
		len = 1ULL << (40 + below(t, 8));
	else
		len = below(t, 1U << 24);
	k = below(t, 100);
	if (k < 8)
		off = page * (1 + below(t, 16));
	else if (k < 11)
		off = 1 + below(t, page - 1);
	else if (k < 14)
		off = (off_t)((1ULL << 62) - page);
	k = below(t, 100);
	flags = k < 70 ? MAP_SHARED : k < 90 ? MAP_PRIVATE : k < 95 ? MAP_SHARED_VALIDATE :
		MAP_SHARED_VALIDATE | MAP_SYNC;
	if (chance(t, 10))
		flags |= MAP_POPULATE;
	if (chance(t, 5))
		flags |= MAP_LOCKED;
	if (chance(t, 5))
		flags |= MAP_NORESERVE;

	/* The documented refusals, and mm's. */
	al = ALLOW(0, EINVAL, ENOMEM);
	if (prot & PROT_WRITE) {
		allow_add(&al, EPERM);
		allow_add(&al, EACCES);
	}
	if (prot & PROT_EXEC)
		allow_add(&al, EPERM);		/* a noexec /dev */
	if (s->acc == O_WRONLY)
		allow_add(&al, EACCES);
	if (off >= 1LL << 40)
		allow_add(&al, EOVERFLOW);
	if ((flags & MAP_SYNC) == MAP_SYNC)
		allow_add(&al, EOPNOTSUPP);
	if (flags & MAP_LOCKED)
		allow_add(&al, EAGAIN);
	pthread_mutex_lock(&vm_lock);
	DESC(t, "mmap(NULL, %zu, %s, %#x, %d (%s), %#llx) (mmap_size %zu)", len, prot_str(prot),
	     flags, s->fd, acc_name(s->acc), (unsigned long long)off, size);
	p = mmap(NULL, len, prot, flags, s->fd, off);
	err = errno;
	e = check_err(t, C_MMAP, p == MAP_FAILED ? -1 : 0, err, al);
	if (!e) {
		len = (len + page - 1) & ~(page - 1);
		if (prot & PROT_WRITE)
			report(t, "%s: a writable mapping (the ABI: read-only)", t->desc);
		if (off)
			report(t, "%s: a mapping at an offset (the ABI: offset 0)", t->desc);
		if (prot & PROT_READ)
			check_header(t, p, len);
		m = free_map(t);
		if (m) {
			m->addr = p;
			m->len = len;
			m->size = len;
			m->prot = prot;
		} else {
			DESC(t, "munmap(%p, %zu) (no room to keep it)", p, len);
			check(t, C_MUNMAP, munmap(p, len), ALLOW(0));
		}
	}
	pthread_mutex_unlock(&vm_lock);
}

/* An address range to move a mapping to: marked at both ends as ours. */
static void *reserve(struct thr *t, size_t len)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, &t->mark, sizeof(t->mark));
	memcpy(p + len - sizeof(t->mark), &t->mark, sizeof(t->mark));
	return p;
}

/*
 * Give back the range of reserve() after a refused move, which may have
 * unmapped it (mremap unmaps the target first): never what another
 * mapping may have taken meanwhile.
 */
static void unreserve(struct thr *t, unsigned char *p, size_t len)
{
	uint64_t a, b;
	void *q;

	if (len / page > VEC_MAX)
		return;
	if (!mincore(p, len, t->vec)) {
		/* All mapped: ours if both marks are there. */
		if (guarded_read(t, p, sizeof(a), &a) &&
		    guarded_read(t, p + len - sizeof(b), sizeof(b), &b) &&
		    a == t->mark && b == t->mark)
			munmap(p, len);
		return;
	}
	/* Unmapped, in part or whole: take it back only if all of it is free. */
	q = mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != MAP_FAILED)
		munmap(q, len);
}

static void op_mremap(struct thr *t)
{
	struct map *m = pick_map(t);
	unsigned int k = below(t, 100);
	size_t pages, newlen, oldlen;
	unsigned char *target = NULL, *p;
	const char *what;
	struct allow al;
	int flags = 0, e, err;

	if (!m) {
		op_mmap(t);
		return;
	}
	pages = m->len / page;
	oldlen = m->len;
	pthread_mutex_lock(&vm_lock);
	if (k < 20 && pages > 1) {
		what = "shrink";
		newlen = page * (1 + below(t, pages - 1));
		flags = chance(t, 50) ? MREMAP_MAYMOVE : 0;
		al = ALLOW(0, ENOMEM);
	} else if (k < 30) {
		what = "same length";
		newlen = m->len;
		al = ALLOW(0);
	} else if (k < 50) {
		/* "The mapping ... cannot grow." */
		what = "grow";
		newlen = m->len + page * (1 + below(t, 16));
		flags = chance(t, 50) ? MREMAP_MAYMOVE : 0;
		al = ALLOW(EFAULT, ENOMEM, EINVAL, EAGAIN);
	} else if (k < 85) {
		/* The same length: a shrinking move cuts the tail even when refused. */
		what = "move";
		newlen = m->len;
		target = reserve(t, newlen);
		if (!target)
			goto out;
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		al = ALLOW(0, EINVAL, EFAULT, ENOMEM);
	} else if (k < 93) {
		what = "move, keep the old range";
		newlen = m->len;
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		al = ALLOW(0, EINVAL, EFAULT, ENOMEM);
	} else {
		/* A second mapping of the same pages, which could not grow either. */
		what = "duplicate (old length 0)";
		oldlen = 0;
		newlen = m->len;
		flags = MREMAP_MAYMOVE;
		al = ALLOW(0, EINVAL, EFAULT, ENOMEM);
	}
	DESC(t, "mremap(%p, %zu, %zu, %#x, %p) (%s; mapped %s, %zu bytes)", m->addr, oldlen,
	     newlen, flags, target, what, prot_str(m->prot), m->size);
	p = mremap(m->addr, oldlen, newlen, flags, target);
	err = errno;
	e = check_err(t, C_MREMAP, p == MAP_FAILED ? -1 : 0, err, al);
	if (e) {
		if (target)
			unreserve(t, target, newlen);
		goto out;
	}
	if (newlen > oldlen && oldlen)
		report(t, "%s: the mapping grew", t->desc);
	if (target && p != target)
		report(t, "%s: moved to %p, not to the address asked", t->desc, p);
	if (!oldlen) {
		/* A new mapping: keep it apart, or let it go. */
		struct map *n = free_map(t);

		if (n) {
			*n = *m;
			n->addr = p;
			n->len = newlen;
		} else {
			DESC(t, "munmap(%p, %zu) (a duplicate)", p, newlen);
			check(t, C_MUNMAP, munmap(p, newlen), ALLOW(0));
		}
		goto out;
	}
	if ((flags & MREMAP_DONTUNMAP) && p != m->addr) {
		/* The old range stays mapped, empty: let it go. */
		DESC(t, "munmap(%p, %zu) (left by MREMAP_DONTUNMAP)", m->addr, m->len);
		check(t, C_MUNMAP, munmap(m->addr, m->len), ALLOW(0));
	}
	m->addr = p;
	m->len = newlen;
out:
	pthread_mutex_unlock(&vm_lock);
}

static void op_mprotect(struct thr *t)
{
	struct map *m = pick_map(t);
	int prot = pick_prot(t), e;
	struct allow al;

	if (!m) {
		op_mmap(t);
		return;
	}
	/* "The mapping is read-only": it can never become writable. */
	al = prot & PROT_WRITE ? ALLOW(EACCES) : ALLOW(0, ENOMEM);
	if (prot & PROT_EXEC)
		allow_add(&al, EACCES);		/* a noexec /dev */
	DESC(t, "mprotect(%p, %zu, %s) (mapped %s)", m->addr, m->len, prot_str(prot),
	     prot_str(m->prot));
	e = check(t, C_MPROTECT, mprotect(m->addr, m->len, prot), al);
	if (!e)
		m->prot = prot;
}

static void op_munmap(struct thr *t)
{
	struct map *m = pick_map(t);

	if (!m) {
		op_mmap(t);
		return;
	}
	DESC(t, "munmap(%p, %zu)", m->addr, m->len);
	check(t, C_MUNMAP, munmap(m->addr, m->len), ALLOW(0));
	m->addr = NULL;
}

/* Read every page of a mapping, and its header. */
static void op_touch(struct thr *t)
{
	struct map *m = pick_map(t);
	bool ok;

	if (!m || !(m->prot & PROT_READ)) {
		op_mmap(t);
		return;
	}
	DESC(t, "read every page of the mapping at %p, %zu bytes (%zu mapped)", m->addr, m->len,
	     m->size);
	ok = guarded_read(t, m->addr, m->len, NULL);
	if (!ok)
		snprintf(t->desc + strlen(t->desc), sizeof(t->desc) - strlen(t->desc),
			 ": signal %d at %p", t->fault_sig, t->fault_addr);
	if (!check_err(t, C_TOUCH, ok ? 0 : -1, EFAULT, ALLOW(0)))
		check_header(t, m->addr, m->size);
}

/* ---- read(), write(), pread(), lseek() ------------------------------------ */

static void op_read(struct thr *t)
{
	static const size_t sizes[] = { 0, 1, 7, 4096, 65536 };
	struct slot *s = pick_fd(t);
	size_t count = chance(t, 85) ? sizes[below(t, ARRAY_SIZE(sizes))] : below(t, READ_MAX + 1);
	unsigned int k = below(t, 100);
	size_t writable;
	bool bad = false;
	const char *where;
	struct allow al;
	unsigned char *buf;
	ssize_t n;
	int e;

	if (!s) {
		op_open(t);
		return;
	}
	if (k < 80) {
		where = "buffer";
		buf = t->rbuf;
		writable = READ_MAX;
	} else if (k < 86) {
		where = "runs into an unmapped page";
		writable = below(t, count + 1);
		buf = t->rbuf + READ_MAX - writable;
	} else if (k < 90) {
		where = "read-only page";
		buf = t->arg + 3 * page;
		writable = 0;
	} else {
		static unsigned char *const bad_ptr[] = {
			NULL, (unsigned char *)16, (unsigned char *)kernel_ptr,
		};

		where = "bad address";
		buf = k < 97 ? bad_ptr[below(t, ARRAY_SIZE(bad_ptr))] : t->arg + 2 * page;
		writable = 0;
		bad = true;
	}
	if (s->acc == O_WRONLY)
		al = ALLOW(EBADF);
	else if (writable >= count && !bad)
		al = ALLOW(0, ENOMEM);
	else
		al = ALLOW(0, EFAULT, ENOMEM);
	DESC(t, "read(%d (%s), %p (%s, %zu bytes writable), %zu)", s->fd, acc_name(s->acc), buf,
	     where, writable, count);
	n = read(s->fd, buf, count);
	e = check(t, C_READ, n, al);
	if (e || n <= 0)
		return;
	if ((size_t)n > count || (size_t)n > writable)
		report(t, "%s = %zd: more than asked or writable", t->desc, n);
	else if (memchr(buf, 0, n))
		report(t, "%s = %zd: a NUL byte in the folded text", t->desc, n);
}

static void op_misc(struct thr *t)
{
	struct slot *s = pick_fd(t);
	off_t pos = below(t, 1000);

	if (!s) {
		op_open(t);
		return;
	}
	switch (below(t, 3)) {
	case 0: {
		size_t n = below(t, 16);

		/* No write(): EINVAL; EBADF before it on a read-only descriptor. */
		DESC(t, "write(%d (%s), buffer, %zu)", s->fd, acc_name(s->acc), n);
		check(t, C_WRITE, write(s->fd, t->rbuf, n),
		      s->acc == O_RDONLY ? ALLOW(EBADF) : ALLOW(EINVAL));
		break;
	}
	case 1:
		/* A stream: no positioned reads, no seeking. */
		DESC(t, "pread(%d, buffer, 16, %lld)", s->fd, (long long)pos);
		check(t, C_PREAD, pread(s->fd, t->rbuf, 16, pos), ALLOW(ESPIPE));
		break;
	default:
		DESC(t, "lseek(%d, %lld, SEEK_SET)", s->fd, (long long)pos);
		check(t, C_LSEEK, lseek(s->fd, pos, SEEK_SET), ALLOW(ESPIPE));
		break;
	}
}

/* ---- generic netlink ------------------------------------------------------ */

static bool genl_open(struct thr *t)
{
	struct timeval tv = { 60, 0 };

	if (t->genl)
		hs_genl_close(&t->g);
	t->genl = !hs_genl_quiet_open(&t->g);
	if (!t->genl) {
		report(t, "cannot open a generic netlink socket and resolve the \"%s\" family",
		       HOTSTACK_GENL_NAME);
		return false;
	}
	/* A request the kernel never answers is an error, not a hang. */
	setsockopt(mnl_socket_get_fd(t->g.nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return true;
}

#define ADD_DESC(buf, len, ...) \
	((len) += snprintf((buf) + (len), (len) < sizeof(buf) ? sizeof(buf) - (len) : 0, \
			   __VA_ARGS__), (len) = MIN((len), sizeof(buf) - 1))

static void op_genl(struct thr *t)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], attrs[256];
	bool bad = false, has_id = false, fuzzy = false, trunc = false, hdr_bad = false, dump;
	unsigned int i, n = below(t, 5), cmd, version;
	unsigned char payload[16];
	struct nlmsghdr *nlh;
	uint16_t flags = 0;
	size_t alen = 0;
	struct allow al;
	int e;

	if (!t->genl && !genl_open(t))
		return;
	cmd = chance(t, 75) ? HOTSTACK_CMD_GET : below(t, 256);
	if (chance(t, 50))
		flags |= NLM_F_DUMP;
	if (chance(t, 15))
		flags |= below(t, 16) << 8 | (chance(t, 30) ? NLM_F_ECHO : 0);
	dump = (flags & NLM_F_DUMP) == NLM_F_DUMP;
	version = chance(t, 90) ? HOTSTACK_GENL_VERSION : below(t, 256);
	nlh = hs_genl_header(&t->g, buf, t->g.family, flags, cmd, version);
	attrs[0] = '\0';
	if (chance(t, 5)) {
		struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);

		gh->reserved = 1 + below(t, 0xffff);
		hdr_bad = true;
		ADD_DESC(attrs, alen, " (genlmsghdr.reserved %u)", gh->reserved);
	}
	/* Only the flags the core gives a meaning: REQUEST, ACK, ECHO, DUMP. */
	if ((flags & NLM_F_DUMP) == NLM_F_DUMP)
		flags &= ~NLM_F_DUMP;
	if (flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO))
		hdr_bad = true;
	for (i = 0; i < n; i++) {
		unsigned int k = below(t, 100), type, len, j;

		for (j = 0; j < sizeof(payload); j++)
			payload[j] = rnd(t);
		if (k < 35) {
			uint32_t id = chance(t, 70) ? t->ids[below(t, NR_IDS)] : (uint32_t)pick_value(t);

			mnl_attr_put_u32(nlh, HOTSTACK_A_ID, id);
			has_id = true;
			ADD_DESC(attrs, alen, " ID=%u", id);
		} else if (k < 45) {
			do
				len = below(t, 17);
			while (len == 4);
			mnl_attr_put(nlh, HOTSTACK_A_ID, len, payload);
			bad = true;
			ADD_DESC(attrs, alen, " ID/%u bytes", len);
		} else if (k < 85) {
			type = below(t, 41);
			len = below(t, 17);
			if (chance(t, 10))
				type |= NLA_F_NESTED;
			else if (chance(t, 10))
				type |= NLA_F_NET_BYTEORDER;
			mnl_attr_put(nlh, type, len, payload);
			if ((type & NLA_TYPE_MASK) == HOTSTACK_A_ID && len == 4 &&
			    !(type & NLA_F_NESTED)) {
				has_id = true;
				fuzzy |= type & NLA_F_NET_BYTEORDER;
			} else {
				bad = true;
			}
			ADD_DESC(attrs, alen, " %#x/%u bytes", type, len);
		} else if (k < 95) {
			/* A header whose length does not fit: the last thing. */
			struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

			a->nla_type = below(t, 41);
			a->nla_len = chance(t, 50) ? below(t, NLA_HDRLEN) : 200 + below(t, 1000);
			len = below(t, 9);
			memcpy(a + 1, payload, len);
			nlh->nlmsg_len += NLA_HDRLEN + len;
			bad = true;
			ADD_DESC(attrs, alen, " broken header (type %u nla_len %u, %u bytes after)",
				 a->nla_type, a->nla_len, len);
			break;
		} else {
			len = 1 + below(t, 3);
			memcpy(mnl_nlmsg_get_payload_tail(nlh), payload, len);
			nlh->nlmsg_len += len;
			bad = true;
			ADD_DESC(attrs, alen, " %u bytes of garbage", len);
			break;
		}
	}
	if (chance(t, 3)) {
		nlh->nlmsg_len = NLMSG_HDRLEN + below(t, GENL_HDRLEN);
		trunc = true;
		ADD_DESC(attrs, alen, " (cut to %u bytes)", nlh->nlmsg_len);
	}
	if (trunc || hdr_bad)
		al = ALLOW(EINVAL);		/* no genetlink header, or a bad one */
	else if (cmd != HOTSTACK_CMD_GET)
		al = ALLOW(EOPNOTSUPP);
	else if (bad)
		al = ALLOW(EINVAL);		/* validated strictly */
	else if (dump)
		al = ALLOW(0, EINTR);		/* libmnl: NLM_F_DUMP_INTR */
	else if (has_id)
		al = ALLOW(0, ENOENT);
	else
		al = ALLOW(EINVAL);		/* GET without a dump needs an ID */
	if (fuzzy)
		allow_add(&al, EINVAL);
	allow_add(&al, ENOMEM);
	allow_add(&al, ENOBUFS);
	DESC(t, "netlink(cmd %u, flags %#x, version %u, %u bytes, attributes:%s)", cmd,
	     nlh->nlmsg_flags | NLM_F_ACK, version, nlh->nlmsg_len, attrs[0] ? attrs : " none");
	e = -hs_genl_request(&t->g, nlh);
	if (t->g.error[0])
		snprintf(t->desc + strlen(t->desc), sizeof(t->desc) - strlen(t->desc),
			 " (ack: %s)", t->g.error);
	e = check_err(t, C_GENL, e ? -1 : 0, e, al);
	/* After a cut dump or an unexpected answer the socket may hold more: a new one. */
	if (e && e != EINVAL && e != ENOENT && e != EOPNOTSUPP)
		genl_open(t);
}

/* ---- fork ------------------------------------------------------------------ */

/*
 * A child inherits the thread's mappings and descriptors: it reads every
 * page of the readable mappings and asks GET_INFO, then exits (only
 * system calls: another thread may hold a libc lock). Exit status: bit 0
 * a page faulted, bit 1 GET_INFO failed.
 */
static void op_fork(struct thr *t)
{
	struct slot *s = pick_fd(t);
	int status = 0, i;
	pid_t pid;

	DESC(t, "fork() (the child reads its mappings, GET_INFO on %d)", s ? s->fd : -1);
	pid = fork();
	if (!pid) {
		int code = 0;

		for (i = 0; i < NR_MAPS; i++)
			if (t->map[i].addr && (t->map[i].prot & PROT_READ) &&
			    !guarded_read(t, t->map[i].addr, t->map[i].len, NULL))
				code |= 1;
		if (s) {
			struct hotstack_info info;

			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			if (ioctl(s->fd, HOTSTACK_IOC_GET_INFO, &info))
				code |= 2;
		}
		_exit(code);
	}
	if (check(t, C_FORK, pid, ALLOW(0, EAGAIN, ENOMEM)))
		return;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		report(t, "%s: the child %s %d%s%s", t->desc,
		       WIFEXITED(status) ? "exited with status" : "was killed by signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		       WIFEXITED(status) && (WEXITSTATUS(status) & 1) ?
		       " (a page of a mapping faulted)" : "",
		       WIFEXITED(status) && (WEXITSTATUS(status) & 2) ? " (GET_INFO failed)" : "");
}

/* ---- threads --------------------------------------------------------------- */

#define OP(name, weight) { op_##name, #name, weight }

static const struct {
	void (*fn)(struct thr *t);
	const char *name;
	unsigned int weight;
} ops[] = {
	/*
	 * Per 1000, for 10^5 calls in a few minutes on the debug kernel: the
	 * cheap calls (GET_*, other numbers, read, misc: 1-8 ms there) often,
	 * the dear ones (CONFIGURE, mmap, netlink: 40-80 ms; fork 2-3 s
	 * under KASAN) thousands of times all the same (fork: a hundred).
	 */
	OP(open, 30), OP(close, 20), OP(dup, 15), OP(configure, 60),
	OP(start, 25), OP(stop, 15), OP(reset, 15), OP(snapshot, 15),
	OP(get_info, 120), OP(get_stats, 150), OP(ioctl, 150), OP(mmap, 30),
	OP(mremap, 8), OP(mprotect, 10), OP(munmap, 8), OP(touch, 12),
	OP(read, 100), OP(misc, 170), OP(genl, 30), OP(fork, 1),
	OP(add_table, 25), OP(set_maps, 40), OP(misses, 30), OP(cgroup_path, 30),
};

/* Operations run, and the milliseconds they took, all threads together. */
static unsigned long op_count[ARRAY_SIZE(ops)], op_ms[ARRAY_SIZE(ops)];

/* One operation, chosen by weight; returns its index in ops[]. */
static unsigned int run_op(struct thr *t)
{
	unsigned int total = 0, i, w;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += ops[i].weight;
	w = below(t, total);
	for (i = 0; w >= ops[i].weight; i++)
		w -= ops[i].weight;
	ops[i].fn(t);
	return i;
}

static void *fuzz_main(void *arg)
{
	struct thr *t = arg;
	unsigned int i;

	self = t;
	while (t->calls < t->quota && !stop) {
		uint64_t begin = now_ms();

		op_seed(t);
		__atomic_store_n(&t->busy_ms, begin, __ATOMIC_RELAXED);
		i = run_op(t);
		__atomic_store_n(&t->busy_ms, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&op_count[i], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&op_ms[i], now_ms() - begin, __ATOMIC_RELAXED);
		t->op++;
	}
	/* Everything closed, so that the end can check nothing is left. */
	for (i = 0; i < NR_MAPS; i++) {
		if (!t->map[i].addr)
			continue;
		DESC(t, "munmap(%p, %zu) (at the end)", t->map[i].addr, t->map[i].len);
		check(t, C_MUNMAP, munmap(t->map[i].addr, t->map[i].len), ALLOW(0));
		t->map[i].addr = NULL;
	}
	for (i = 0; i < NR_FDS; i++)
		if (t->fd[i].fd >= 0)
			close_slot(t, &t->fd[i], "at the end");
	if (t->genl)
		hs_genl_close(&t->g);
	__atomic_sub_fetch(&running, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int set_online(unsigned int cpu, int on)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online", cpu);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = errno;
	close(fd);
	return ret;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Every CPU but 0 offline and online again, until the fuzz threads are done. */
static void *hotplug_main(void *arg)
{
	struct thr *t = arg;
	unsigned int cpu, ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int e;

	self = t;
	t->rng = mix64(seed ^ 0x686f74706c7567ULL);
	while (!fuzz_done) {
		for (cpu = 1; cpu < ncpus && !fuzz_done; cpu++) {
			uint64_t begin = now_ms();

			__atomic_store_n(&t->busy_ms, begin, __ATOMIC_RELAXED);
			e = set_online(cpu, 0);
			if (e == ENOENT) {
				__atomic_store_n(&t->busy_ms, 0, __ATOMIC_RELAXED);
				continue;	/* not hotpluggable */
			}
			msleep(below(t, 30));
			if (!e)
				e = set_online(cpu, 1);
			__atomic_store_n(&t->busy_ms, 0, __ATOMIC_RELAXED);
			if (e && __atomic_add_fetch(&hp_failures, 1, __ATOMIC_RELAXED) <= 3)
				say("# note: CPU %u offline or online again: %s\n", cpu, ename(e));
			if (!e)
				__atomic_add_fetch(&hp_cycles, 1, __ATOMIC_RELAXED);
			/*
			 * Online four fifths of the time: a cycle takes the CPU
			 * away for 2-3 s on the debug kernel (the fuzz threads
			 * share the other CPU meanwhile, or stop_machine() stops
			 * them all), for milliseconds on the others.
			 */
			msleep(4 * (now_ms() - begin) + below(t, 500));
		}
		if (ncpus < 2)
			msleep(100);
	}
	/* Every CPU back, whatever happened. */
	for (cpu = 1; cpu < ncpus; cpu++) {
		unsigned int tries;

		for (tries = 0; tries < 10; tries++) {
			e = set_online(cpu, 1);
			if (!e || e == ENOENT)
				break;
			msleep(100);
		}
		if (e && e != ENOENT)
			report(t, "CPU %u does not come online again: %s", cpu, ename(e));
	}
	return NULL;
}

/* ---- setup ------------------------------------------------------------------ */

static unsigned char *map_pages(size_t pages, size_t guard_at)
{
	unsigned char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED || (guard_at < pages && mprotect(p + guard_at * page, page, PROT_NONE))) {
		perror("hs_fuzz: mmap");
		exit(2);
	}
	return p;
}

static void setup_thread(struct thr *t, int id, unsigned long quota)
{
	unsigned int i;

	t->id = id;
	t->quota = quota;
	t->mark = mix64(seed + id) | 1;
	for (i = 0; i < NR_FDS; i++)
		t->fd[i].fd = -1;
	t->arg = map_pages(4, 2);
	if (mprotect(t->arg + 3 * page, page, PROT_READ)) {
		perror("hs_fuzz: mprotect");
		exit(2);
	}
	t->rbuf = map_pages(READ_MAX / page + 1, READ_MAX / page);
	t->cpus = map_pages(3, 2);
	t->vec = malloc(VEC_MAX);
	if (!t->vec) {
		perror("hs_fuzz: malloc");
		exit(2);
	}
	if (id < (int)nr_threads)
		genl_open(t);
}

/* The last number of a CPU list file ("0-1", "0,2-3"), or -1. */
static int cpu_list_last(const char *path, uint64_t *mask)
{
	char buf[256], *p;
	FILE *f = fopen(path, "r");
	int last = -1;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (mask)
		*mask = 0;
	for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
		int a, b;

		if (sscanf(p, "%d-%d", &a, &b) != 2)
			b = a = atoi(p);
		for (last = b; mask && a <= b && a < 64; a++)
			*mask |= 1ULL << a;
	}
	return last;
}

static void summary(double secs, unsigned long expected)
{
	unsigned int c, e;
	char line[1024];
	size_t len;

	printf("# calls and their results:\n");
	for (c = 0; c < C_NR; c++) {
		unsigned long n = 0;

		for (e = 0; e <= 128; e++)
			n += hist[c][e];
		if (!n)
			continue;
		len = snprintf(line, sizeof(line), "#   %-22s %8lu:", call_name[c], n);
		for (e = 0; e <= 128 && len < sizeof(line); e++)
			if (hist[c][e])
				len += snprintf(line + len, sizeof(line) - len, " %s %lu",
						e == 128 ? "other" : ename(e), hist[c][e]);
		puts(line);
	}
	len = snprintf(line, sizeof(line), "# time in each operation, all threads:");
	for (c = 0; c < ARRAY_SIZE(ops) && len < sizeof(line); c++)
		len += snprintf(line + len, sizeof(line) - len, " %s %lu/%.1fs", ops[c].name,
				op_count[c], op_ms[c] / 1000.0);
	puts(line);
	if (stop)
		printf("# note: stopped at the %d-minute limit after %lu of %lu calls\n",
		       DEADLINE_S / 60, total_calls, expected);
	/* Fewer calls than asked for is a failure: the run did not do its work. */
	printf("%s - fuzz: %lu calls in %.0f s (%.0f calls/s), %u threads, %lu hotplug cycles, "
	       "%lu errors, seed %llu", nr_errors || stop ? "not ok" : "ok", total_calls, secs,
	       secs > 0 ? total_calls / secs : 0.0, nr_threads, hp_cycles, nr_errors, seed);
	if (nr_errors)
		printf(" (replay: hs_fuzz %lu %llu %u)", nr_calls_arg, seed, nr_threads);
	putchar('\n');
	printf("fuzz: %lu calls, %lu errors, seed %llu\n", total_calls, nr_errors, seed);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct hotstack_info info;
	uint64_t start;
	unsigned int i;
	bool sysrq = false;
	int fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: hs_fuzz CALLS SEED [THREADS]\n");
		return 2;
	}
	nr_calls_arg = strtoul(argv[1], NULL, 0);
	seed = strtoull(argv[2], NULL, 0);
	if (argc == 4)
		nr_threads = strtoul(argv[3], NULL, 0);
	if (!nr_calls_arg || !nr_threads || nr_threads > MAX_THREADS) {
		fprintf(stderr, "hs_fuzz: CALLS must be positive, THREADS 1-%d\n", MAX_THREADS);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	/*
	 * malloc never maps memory, so that nothing but the fuzz threads
	 * (under vm_lock) places a mapping: a refused move leaves a hole
	 * nobody else fills.
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	nr_possible = cpu_list_last("/sys/devices/system/cpu/possible", NULL) + 1;
	cpu_list_last("/sys/devices/system/cpu/online", &online0);
	if (!nr_possible || !online0) {
		fprintf(stderr, "hs_fuzz: cannot read the CPU lists in /sys\n");
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, HOTSTACK_IOC_GET_INFO, &info)) {
		printf("not ok - fuzz: /dev/hotstack: %s\n", strerror(errno));
		printf("fuzz: 0 calls, 1 errors, seed %llu\n", seed);
		return 1;
	}
	close(fd);
	max_sessions = info.max_sessions;
	/* Sessions of others (t_80's held off-CPU ones): there at the end too. */
	base_sessions = info.nr_sessions;
	base_memory = info.memory_used;
	base_unwind = info.unwind_used;
	printf("# hs_fuzz %lu %llu %u: %u possible CPUs, online %#llx, max_sessions %u, "
	       "max_memory %llu MiB\n", nr_calls_arg, seed, nr_threads, nr_possible,
	       (unsigned long long)online0, max_sessions,
	       (unsigned long long)info.max_memory >> 20);

	for (i = 0; i < NR_POOL; i++)
		pool[i].fd = -1;
	for (i = 0; i <= nr_threads; i++)
		setup_thread(&thr[i], i, nr_calls_arg / nr_threads +
			     (i < nr_calls_arg % nr_threads));
	running = nr_threads;
	start = now_ms();
	for (i = 0; i < nr_threads; i++)
		if (pthread_create(&thr[i].tid, NULL, fuzz_main, &thr[i])) {
			perror("hs_fuzz: pthread_create");
			return 2;
		}
	if (pthread_create(&thr[nr_threads].tid, NULL, hotplug_main, &thr[nr_threads])) {
		perror("hs_fuzz: pthread_create");
		return 2;
	}

	/* The watchdog: the deadline, progress, and operations that never end. */
	for (i = 1; __atomic_load_n(&running, __ATOMIC_RELAXED); i++) {
		uint64_t now;
		unsigned int j;

		msleep(200);
		now = now_ms();
		if (!stop && now - start > DEADLINE_S * 1000ULL)
			stop = 1;
		if (!(i % 300))
			say("# %lu calls after %llu s\n", total_calls,
			    (unsigned long long)(now - start) / 1000);
		for (j = 0; j <= nr_threads; j++) {
			struct thr *t = &thr[j];
			uint64_t busy = __atomic_load_n(&t->busy_ms, __ATOMIC_RELAXED);

			/* busy may be newer than now: the thread started an operation since. */
			if (!busy || busy > now || now - busy < STUCK_S * 1000ULL)
				continue;
			if (t->stuck_op != t->op + 1) {
				t->stuck_op = t->op + 1;
				report(t, "stuck for %d s in: %s", STUCK_S,
				       j < nr_threads ? t->desc : "CPU hotplug");
				/* The blocked tasks' stacks on the console. */
				if (!sysrq) {
					int s = open("/proc/sysrq-trigger", O_WRONLY);

					sysrq = true;
					if (s >= 0) {
						if (write(s, "w", 1) != 1)
							perror("hs_fuzz: sysrq");
						close(s);
					}
				}
			} else if (now - busy > 2 * STUCK_S * 1000ULL) {
				/* It will not come back: say so and end. */
				summary((now - start) / 1000.0, nr_calls_arg);
				_exit(1);
			}
		}
	}
	for (i = 0; i < nr_threads; i++)
		pthread_join(thr[i].tid, NULL);
	fuzz_done = 1;
	pthread_join(thr[nr_threads].tid, NULL);
	for (i = 0; i < NR_POOL; i++)
		if (pool[i].fd >= 0)
			close(pool[i].fd);

	/* Nothing left behind: the sessions and table memory found at the start. */
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	fd = open("/dev/hotstack", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, HOTSTACK_IOC_GET_INFO, &info))
		report(NULL, "at the end: open and GET_INFO: %s", strerror(errno));
	else if (info.nr_sessions != base_sessions || info.memory_used != base_memory ||
		 info.unwind_used != base_unwind)
		report(NULL, "at the end, every descriptor and mapping closed: %u sessions open, "
		       "%llu bytes of tables, %llu of unwind tables (want %u, %llu and %llu, as at "
		       "the start)", info.nr_sessions, (unsigned long long)info.memory_used,
		       (unsigned long long)info.unwind_used, base_sessions,
		       (unsigned long long)base_memory, (unsigned long long)base_unwind);
	if (fd >= 0)
		close(fd);
	summary((now_ms() - start) / 1000.0, nr_calls_arg);
	return nr_errors || stop ? 1 : 0;
}
