/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel definitions module/stacktab.h, cost.h and offtab.h need, for
 * building them into host unit tests.
 */
#ifndef HOTSTACK_KSHIM_H
#define HOTSTACK_KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif

#ifndef notrace
#define notrace
#endif
#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif
#ifndef BIT
#define BIT(n)		(1UL << (n))
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

typedef struct {
	s64 counter;
} atomic64_t;

static inline s64 atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

/* The kernel's atomic64_inc(): a read-modify-write that orders nothing. */
static inline void atomic64_inc(atomic64_t *v)
{
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline void atomic64_dec(atomic64_t *v)
{
	__atomic_sub_fetch(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline void atomic64_sub(s64 i, atomic64_t *v)
{
	__atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline bool atomic64_try_cmpxchg(atomic64_t *v, s64 *old, s64 new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

/* Adds @a unless @v is @u: whether it did (fully ordered then; else nothing). */
static inline bool atomic64_add_unless(atomic64_t *v, s64 a, s64 u)
{
	s64 c = atomic64_read(v);

	do {
		if (c == u)
			return false;
	} while (!atomic64_try_cmpxchg(v, &c, c + a));
	return true;
}

static inline u64 rol64(u64 w, unsigned int s)
{
	return (w << (s & 63)) | (w >> ((-s) & 63));
}

static inline unsigned int ilog2(u64 v)
{
	return 63 - __builtin_clzll(v);
}

static inline u64 get_unaligned(const u64 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	return (unsigned __int128)a * b / c;
}

typedef struct {
	int counter;
} atomic_t;

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_inc(atomic_t *v)
{
	__atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST);
}

static inline void atomic_dec(atomic_t *v)
{
	__atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST);
}

/* A counter one CPU writes, its interrupts too (the kernel's asm/local64.h). */
typedef struct {
	u64 counter;
} local64_t;

static inline void local64_add(u64 i, local64_t *l)
{
	__atomic_add_fetch(&l->counter, i, __ATOMIC_RELAXED);
}

/* @oldp as the kernel's (its u64 is __u64, ours uint64_t: one size, two types). */
#define try_cmpxchg(p, oldp, new) \
	__atomic_compare_exchange_n(p, (__typeof__(*(p)) *)(oldp), new, false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_RELAXED)

/* The kernel's hash_long() of a 64-bit machine (linux/hash.h). */
static inline u32 hash_long(unsigned long val, unsigned int bits)
{
	return (u32)((u64)val * 0x61C8864680B583EBull >> (64 - bits));
}

#if defined(__SANITIZE_THREAD__)
#define HS_KSHIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HS_KSHIM_TSAN 1
#endif
#endif

#ifdef HS_KSHIM_TSAN
/*
 * Under ThreadSanitizer: what the kernel's memory model makes of them,
 * marked accesses (relaxed atomics), not plain ones racing (scalars only).
 */
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#else
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#endif
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)

/* The kernel's local_clock(): nanoseconds, this CPU's (here: monotonic). */
static inline u64 local_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A spinning CPU's pause (a compiler barrier too, as the kernel's). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif
