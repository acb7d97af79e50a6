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

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
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

static inline void atomic64_sub(s64 i, atomic64_t *v)
{
	__atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline bool atomic64_try_cmpxchg(atomic64_t *v, s64 *old, s64 new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
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

#define try_cmpxchg(p, oldp, new) \
	__atomic_compare_exchange_n(p, oldp, new, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)

/* The kernel's hash_long() of a 64-bit machine (linux/hash.h). */
static inline u32 hash_long(unsigned long val, unsigned int bits)
{
	return (u32)((u64)val * 0x61C8864680B583EBull >> (64 - bits));
}

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

#endif
