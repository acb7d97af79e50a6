// SPDX-License-Identifier: GPL-2.0
/*
 * A user-space program whose call tree is known exactly: the user-stack
 * twin of tests/kmod/hs_workload.c, for the unwinding tests to assert
 * whole user stacks frame by frame. Built three ways (tests/vm/Makefile):
 * uw_tree_nofp (no frame pointers, .eh_frame only, as Debian builds its
 * packages), uw_tree_fp (frame pointers, leaves too) and uw_tree_stripped
 * (uw_tree_nofp stripped, its symbols in uw_tree_stripped.debug, named
 * by a .gnu_debuglink).
 *
 *   uw_tree [-t THREADS] [-c CALLS] [--expect] SECONDS DEPTH PATTERNS [LEAVES]
 *
 * Runs PATTERNS x LEAVES distinct stacks, over and over for SECONDS (a
 * decimal: 0.5 is half a second), a slice of 20 ms each in turn (less
 * when SECONDS is short for so many: every stack runs at least once).
 * Stack p is uw_rec_a or uw_rec_b chosen by bit L of p at level L (L = 0
 * .. DEPTH-1, outermost first; uw_rec_a past the 32nd level), then the
 * leaf. DEPTH at most 20000, PATTERNS at most 2^DEPTH (and 2^20). LEAVES
 * is a comma-separated list (default spin) of:
 *   spin    uw_leaf_spin: additions in registers, no stack frame of its own
 *   frame   uw_leaf_frame: the same over a 4 KiB array on its stack (a
 *           frame whose CFA is far from the stack pointer)
 *   sys     uw_leaf_sys: getppid system calls made by its own syscall/svc
 *           instruction: kernel samples with this user stack under them
 *   libc    uw_leaf_libc: getppid() through libc, whose stub makes the
 *           call: the user stack's innermost frame is in libc.so.6
 *   signal  uw_leaf_signal sends itself SIGUSR1 (its own tgkill system
 *           call); the handler uw_on_signal spins in uw_leaf_spin: the
 *           stack crosses a signal frame
 *   jit     uw_leaf_jit calls code it wrote into an anonymous executable
 *           mapping at the start (a loop, no stack frame: no binary, no
 *           unwind table covers it), which /tmp/perf-PID.map names
 *           uw_jit_spin, as a JIT compiler's perf map does (Node's
 *           --perf-basic-prof, Python 3.12's -X perf)
 *
 *   -t N      run the tree in N threads (uw_thread) instead of main
 *   -c CALLS  instead of SECONDS (give 0), one round: each stack runs
 *             CALLS calls of its leaf, whatever time that takes (the same
 *             work on every run, for benchmarks)
 *   --time    at the end, print "uw_tree ELAPSED_NS": the time the tree
 *             ran (for benchmarks: under QEMU's -icount, guest
 *             instructions)
 *   --expect  run nothing: print the stacks, one a line, folded (outermost
 *             first), in the order they run, e.g. for "1 3 2 spin":
 *               main;uw_run;uw_rec_a;uw_rec_a;uw_rec_a;uw_leaf_spin
 *               main;uw_run;uw_rec_b;uw_rec_a;uw_rec_a;uw_leaf_spin
 *
 * In an expected stack, frames above main (libc's start code, _start) or
 * above uw_thread (libc's start_thread, clone3) are left out; the libc leaf
 * ends in "getppid" (the stub's name in libc's .dynsym); "[sigreturn]"
 * stands for the signal trampoline's frame (libc's __restore_rt on x86_64,
 * which a stripped libc does not name; the vDSO's __kernel_rt_sigreturn on
 * arm64). A sample can also land in a frame above the leaf (a prefix of an
 * expected stack) or in uw_run's clock read (clock_gettime: the vDSO, or
 * a system call where the vDSO cannot read the clocksource, as with the
 * x86 guests' hpet: about 2% of the samples there); the leaves take
 * nearly all. One call of a leaf is about a millisecond of work under
 * QEMU's TCG; the clock is read between calls, in uw_run, never in a leaf.
 *
 * Nothing is printed while it runs; exit status 0 when done, 2 on a bad
 * command line, 1 on a failure (a thread or a signal handler that could
 * not be set up).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Every function of the tree: never inlined, cloned or merged with another,
 * and every call followed by work (a store, then an empty asm) so that none
 * is a tail call, even without -fno-optimize-sibling-calls.
 */
#define UW_FN		__attribute__((noinline, noclone, used))
#define UW_BARRIER()	__asm__ __volatile__("" ::: "memory")

/*
 * uw_tree_fp (-DUW_FP): GCC 12's x86 back end sets up no frame in a leaf
 * that needs no stack, -mno-omit-leaf-frame-pointer or not; asking for
 * the frame's address makes it (arm64's keeps it anyway).
 */
#ifdef UW_FP
#define UW_LEAF_FRAME()	__asm__ __volatile__("" :: "r"(__builtin_frame_address(0)))
#else
#define UW_LEAF_FRAME()	do { } while (0)
#endif

#define UW_MAX_DEPTH	20000
#define UW_SLICE_NS	20000000ULL
/* One call of a leaf: about a millisecond under TCG. */
#define UW_SPINS	200000UL
#define UW_SYSCALLS	100UL

enum uw_leaf { UW_SPIN, UW_FRAME, UW_SYS, UW_LIBC, UW_SIGNAL, UW_JIT, UW_NLEAVES };

static const char *const uw_leaf_names[UW_NLEAVES] = {
	[UW_SPIN] = "spin", [UW_FRAME] = "frame", [UW_SYS] = "sys",
	[UW_LIBC] = "libc", [UW_SIGNAL] = "signal", [UW_JIT] = "jit",
};

/* What each leaf's stack ends with, after uw_rec_*. */
static const char *const uw_leaf_frames[UW_NLEAVES] = {
	[UW_SPIN] = "uw_leaf_spin",
	[UW_FRAME] = "uw_leaf_frame",
	[UW_SYS] = "uw_leaf_sys",
	[UW_LIBC] = "uw_leaf_libc;getppid",
	[UW_SIGNAL] = "uw_leaf_signal;[sigreturn];uw_on_signal;uw_leaf_spin",
	[UW_JIT] = "uw_leaf_jit;uw_jit_spin",
};

/* The workload, as the command line gave it. */
static struct {
	double seconds;
	unsigned long calls;
	unsigned int depth, patterns, threads;
	enum uw_leaf leaves[UW_NLEAVES * 4];
	unsigned int nleaves;
} uw;

/* Stores after each call keep the calls out of tail position. */
volatile unsigned long uw_sink;

/* The leaf a call of the tree ends in, and how much it does. */
struct uw_call {
	enum uw_leaf leaf;
	unsigned long n;
};

/* The signal leaf's handler spins this much (the thread's own). */
static __thread unsigned long uw_signal_spins;

UW_FN void uw_leaf_spin(unsigned long n)
{
	unsigned long acc = 0, i;

	UW_LEAF_FRAME();

	for (i = 0; i < n; i++) {
		acc += i ^ (acc >> 3);
		__asm__ __volatile__("" : "+r"(acc));
	}
	uw_sink = acc;
}

UW_FN void uw_leaf_frame(unsigned long n)
{
	volatile unsigned long buf[512];
	unsigned long i;

	UW_LEAF_FRAME();

	for (i = 0; i < 512; i++)
		buf[i] = i;
	for (i = 0; i < n / 2; i++)
		buf[i & 511] += buf[(i * 7) & 511];
	uw_sink = buf[n & 511];
}

/* getppid() by the leaf's own system call instruction. */
static inline long uw_raw_getppid(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_getppid;
	register long x0 __asm__("x0");

	__asm__ __volatile__("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
#else
	return syscall(SYS_getppid);
#endif
}

/* tgkill(pid, tid, sig) the same way: the signal arrives at its return. */
static inline long uw_raw_tgkill(long pid, long tid, long sig)
{
#if defined(__x86_64__)
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "0"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"(sig)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_tgkill;
	register long x0 __asm__("x0") = pid;
	register long x1 __asm__("x1") = tid;
	register long x2 __asm__("x2") = sig;

	__asm__ __volatile__("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return syscall(SYS_tgkill, pid, tid, sig);
#endif
}

UW_FN void uw_leaf_sys(unsigned long n)
{
	unsigned long acc = 0, i;

	UW_LEAF_FRAME();

	for (i = 0; i < n; i++)
		acc += uw_raw_getppid();
	uw_sink = acc;
}

UW_FN void uw_leaf_libc(unsigned long n)
{
	unsigned long acc = 0, i;

	for (i = 0; i < n; i++) {
		acc += getppid();
		UW_BARRIER();
	}
	uw_sink = acc;
}

UW_FN void uw_on_signal(int sig)
{
	uw_leaf_spin(uw_signal_spins);
	uw_sink += sig;
	UW_BARRIER();
}

UW_FN void uw_leaf_signal(unsigned long n)
{
	uw_signal_spins = n;
	uw_sink += uw_raw_tgkill(getpid(), gettid(), SIGUSR1);
	UW_BARRIER();
}

/* The jit leaf's code: count its argument down to 0, return (no frame). */
static void (*uw_jit_spin)(unsigned long n);

static const unsigned char uw_jit_code[] = {
#if defined(__x86_64__)
	0x48, 0x89, 0xf9,	/* mov %rdi, %rcx */
	0x48, 0xff, 0xc9,	/* 1: dec %rcx */
	0x75, 0xfb,		/* jnz 1b */
	0xc3,			/* ret */
#elif defined(__aarch64__)
	0x00, 0x04, 0x00, 0xf1,	/* 1: subs x0, x0, #1 */
	0xe1, 0xff, 0xff, 0x54,	/* b.ne 1b */
	0xc0, 0x03, 0x5f, 0xd6,	/* ret */
#endif
};

/* Write the jit leaf's code, and its line of /tmp/perf-PID.map. 0 or -1. */
static int uw_jit_init(void)
{
	char path[64];
	void *code;
	FILE *f;

	if (!sizeof(uw_jit_code))
		return -1;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memcpy(code, uw_jit_code, sizeof(uw_jit_code));
	__builtin___clear_cache(code, (char *)code + sizeof(uw_jit_code));
	uw_jit_spin = (void (*)(unsigned long))code;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %zx uw_jit_spin\n", (unsigned long)code, sizeof(uw_jit_code));
	return fclose(f) ? -1 : 0;
}

UW_FN void uw_leaf_jit(unsigned long n)
{
	uw_jit_spin(n ? n : 1);
	uw_sink += n;
	UW_BARRIER();
}

/* In uw_rec_a and uw_rec_b: the leaf's caller is the last of them. */
static inline __attribute__((always_inline)) void uw_leaf(const struct uw_call *c)
{
	switch (c->leaf) {
	case UW_SPIN:
		uw_leaf_spin(c->n);
		break;
	case UW_FRAME:
		uw_leaf_frame(c->n);
		break;
	case UW_SYS:
		uw_leaf_sys(c->n);
		break;
	case UW_LIBC:
		uw_leaf_libc(c->n);
		break;
	case UW_SIGNAL:
		uw_leaf_signal(c->n);
		break;
	case UW_JIT:
		uw_leaf_jit(c->n);
		break;
	case UW_NLEAVES:
		break;
	}
}

UW_FN void uw_rec_b(unsigned int level, unsigned int pattern, const struct uw_call *c);

/* Level @bit's choice: bit @bit of the pattern, uw_rec_a past the 32nd. */
static int uw_bit(unsigned int pattern, unsigned int bit)
{
	return bit < 32 && (pattern >> bit & 1);
}

UW_FN void uw_rec_a(unsigned int level, unsigned int pattern, const struct uw_call *c)
{
	if (level + 1 == uw.depth)
		uw_leaf(c);
	else if (uw_bit(pattern, level + 1))
		uw_rec_b(level + 1, pattern, c);
	else
		uw_rec_a(level + 1, pattern, c);
	uw_sink += 1;
	UW_BARRIER();
}

UW_FN void uw_rec_b(unsigned int level, unsigned int pattern, const struct uw_call *c)
{
	if (level + 1 == uw.depth)
		uw_leaf(c);
	else if (uw_bit(pattern, level + 1))
		uw_rec_b(level + 1, pattern, c);
	else
		uw_rec_a(level + 1, pattern, c);
	/* Unlike uw_rec_a's, so the compiler cannot fold the two. */
	uw_sink += 2;
	UW_BARRIER();
}

static unsigned long long uw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* One call of the tree: pattern @p's chain, then the leaf (in uw_run). */
static inline __attribute__((always_inline)) void uw_one(unsigned int p, const struct uw_call *c)
{
	if (uw_bit(p, 0))
		uw_rec_b(0, p, c);
	else
		uw_rec_a(0, p, c);
}

/*
 * The whole workload, in the calling thread: every stack in turn, a slice
 * each, until the time is up; every stack at least once (the slices are
 * shorter when SECONDS is short for so many stacks).
 */
UW_FN void uw_run(void)
{
	unsigned long long total = uw.seconds * 1e9, start = uw_now_ns(), slice_ns, slice;
	unsigned int p, l, round;
	unsigned long k;

	slice_ns = total / ((unsigned long long)uw.patterns * uw.nleaves);
	if (slice_ns > UW_SLICE_NS)
		slice_ns = UW_SLICE_NS;
	for (round = 0; ; round++) {
		for (p = 0; p < uw.patterns; p++) {
			for (l = 0; l < uw.nleaves; l++) {
				struct uw_call c = { .leaf = uw.leaves[l] };

				c.n = c.leaf == UW_SYS || c.leaf == UW_LIBC ? UW_SYSCALLS : UW_SPINS;
				if (uw.calls) {
					for (k = 0; k < uw.calls; k++)
						uw_one(p, &c);
					continue;
				}
				if (round && uw_now_ns() - start >= total)
					goto done;
				slice = uw_now_ns() + slice_ns;
				do
					uw_one(p, &c);
				while (uw_now_ns() < slice);
			}
		}
		if (uw.calls || uw_now_ns() - start >= total)
			break;
	}
done:
	uw_sink += 3;
	UW_BARRIER();
}

UW_FN void *uw_thread(void *arg)
{
	uw_run();
	UW_BARRIER();
	return arg;
}

static void uw_expect(void)
{
	unsigned int p, l, level;

	for (p = 0; p < uw.patterns; p++) {
		for (l = 0; l < uw.nleaves; l++) {
			fputs(uw.threads ? "uw_thread;uw_run" : "main;uw_run", stdout);
			for (level = 0; level < uw.depth; level++)
				fputs(uw_bit(p, level) ? ";uw_rec_b" : ";uw_rec_a", stdout);
			printf(";%s\n", uw_leaf_frames[uw.leaves[l]]);
		}
	}
}

static int uw_usage(void)
{
	fputs("usage: uw_tree [-t THREADS] [-c CALLS] [--time] [--expect] SECONDS DEPTH PATTERNS "
	      "[spin,frame,sys,libc,signal,jit]\n", stderr);
	return 2;
}

/* An unsigned number, whole and within [@min, @max]. */
static int uw_number(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *s != '-' && *v >= min && *v <= max;
}

static int uw_parse_leaves(char *list)
{
	char *name, *save = NULL;
	unsigned int i;

	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < UW_NLEAVES && strcmp(name, uw_leaf_names[i]); i++)
			;
		if (i == UW_NLEAVES || uw.nleaves == sizeof(uw.leaves) / sizeof(uw.leaves[0]))
			return 0;
		uw.leaves[uw.nleaves++] = i;
	}
	return uw.nleaves > 0;
}

int main(int argc, char **argv)
{
	unsigned long depth, patterns, v;
	int expect = 0, timed = 0, i = 1;
	unsigned long long t0;
	char *end;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--expect")) {
			expect = 1;
		} else if (!strcmp(argv[i], "--time")) {
			timed = 1;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			if (!uw_number(argv[++i], 1, 64, &v))
				return uw_usage();
			uw.threads = v;
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			if (!uw_number(argv[++i], 1, 1000000, &v))
				return uw_usage();
			uw.calls = v;
		} else {
			return uw_usage();
		}
	}
	if (argc - i < 3 || argc - i > 4)
		return uw_usage();
	errno = 0;
	uw.seconds = strtod(argv[i], &end);
	if (errno || end == argv[i] || *end || !(uw.seconds >= 0 && uw.seconds <= 86400))
		return uw_usage();
	if (!uw_number(argv[i + 1], 1, UW_MAX_DEPTH, &depth) ||
	    !uw_number(argv[i + 2], 1, 1UL << 20, &patterns) ||
	    (depth < 32 && patterns > 1UL << depth))
		return uw_usage();
	uw.depth = depth;
	uw.patterns = patterns;
	if (!uw_parse_leaves(argc - i == 4 ? argv[i + 3] : (char[]){ "spin" }))
		return uw_usage();
	if (expect) {
		uw_expect();
		return fflush(stdout) ? 1 : 0;
	}

	for (unsigned int l = 0; l < uw.nleaves; l++) {
		if (uw.leaves[l] == UW_SIGNAL) {
			struct sigaction sa = { .sa_handler = uw_on_signal, .sa_flags = SA_RESTART };

			sigemptyset(&sa.sa_mask);
			if (sigaction(SIGUSR1, &sa, NULL)) {
				perror("uw_tree: sigaction");
				return 1;
			}
		}
		if (uw.leaves[l] == UW_JIT && !uw_jit_spin && uw_jit_init()) {
			perror("uw_tree: the jit leaf's code");
			return 1;
		}
	}
	t0 = uw_now_ns();
	if (uw.threads) {
		pthread_t t[64];
		unsigned int n;

		for (n = 0; n < uw.threads; n++) {
			errno = pthread_create(&t[n], NULL, uw_thread, NULL);
			if (errno) {
				perror("uw_tree: pthread_create");
				return 1;
			}
		}
		while (n--)
			pthread_join(t[n], NULL);
	} else {
		uw_run();
	}
	uw_sink += 4;
	UW_BARRIER();
	if (timed)
		printf("uw_tree %llu\n", uw_now_ns() - t0);
	return 0;
}
