/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel interfaces that dm-rainssd's pure units (geometry, policy,
 * load signals, the tier) use, for building them into the userspace
 * simulator. The simulator is single-threaded, so the atomics are plain
 * variables, and the clock is the simulator's.
 */
#ifndef RAINSSD_KSHIM_H
#define RAINSSD_KSHIM_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
typedef u64 sector_t;

#define U32_MAX		UINT32_MAX
#define U64_MAX		UINT64_MAX
#define S64_MAX		INT64_MAX

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL
#define USEC_PER_MSEC	1000ULL

#define __min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define __max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define min_t(t, a, b)		__min_t(t, a, b)
#define max_t(t, a, b)		__max_t(t, a, b)
#define min(a, b)		((a) < (b) ? (a) : (b))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define min3(a, b, c)		min(min(a, b), c)
#define BIT(n)			(1UL << (n))
#define BIT_ULL(n)		(1ULL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(a, b)	(((a) + (b) - 1) / (b))
/* @a a power of two, as the kernel's */
#define ALIGN(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define round_up(x, y)		((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define round_down(x, y)	((x) & ~((__typeof__(x))((y) - 1)))
#define READ_ONCE(x)		(x)
#define WRITE_ONCE(x, v)	((x) = (v))
#define fallthrough		__attribute__((__fallthrough__))
#define ____cacheline_aligned_in_smp

static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline s64 div_s64(s64 a, s32 b) { return a / b; }
static inline u64 div_u64_rem(u64 a, u32 b, u32 *rem) { *rem = a % b; return a / b; }
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline u64 mul_u64_u32_div(u64 a, u32 mul, u32 div)
{
	return (u64)(((unsigned __int128)a * mul) / div);
}

static inline bool is_power_of_2(unsigned long n) { return n && !(n & (n - 1)); }
static inline unsigned int ilog2(unsigned long n) { return 63 - __builtin_clzl(n); }
static inline unsigned int hweight_long(unsigned long w) { return __builtin_popcountl(w); }
static inline bool test_bit(unsigned int nr, const unsigned long *addr)
{
	return (*addr >> nr) & 1;
}
static inline bool test_and_set_bit_lock(unsigned int nr, unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	*addr |= 1UL << nr;
	return old;
}
static inline void clear_bit_unlock(unsigned int nr, unsigned long *addr)
{
	*addr &= ~(1UL << nr);
}

static inline int match_string(const char * const *array, size_t n, const char *string)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (array[i] && !strcmp(array[i], string))
			return (int)i;
	return -EINVAL;
}

#define GFP_KERNEL	0
static inline void *kcalloc(size_t n, size_t size, int gfp) { (void)gfp; return calloc(n, size); }
static inline void kfree(const void *p) { free((void *)p); }

typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;
static inline int atomic_read(const atomic_t *v) { return v->counter; }
static inline void atomic_set(atomic_t *v, int i) { v->counter = i; }
static inline void atomic_inc(atomic_t *v) { v->counter++; }
static inline void atomic_dec(atomic_t *v) { v->counter--; }
static inline int atomic_inc_return(atomic_t *v) { return ++v->counter; }
static inline s64 atomic64_read(const atomic64_t *v) { return v->counter; }
static inline void atomic64_set(atomic64_t *v, s64 i) { v->counter = i; }
static inline s64 atomic64_xchg(atomic64_t *v, s64 i) { s64 o = v->counter; v->counter = i; return o; }
static inline void atomic64_inc(atomic64_t *v) { v->counter++; }
static inline void atomic64_add(s64 i, atomic64_t *v) { v->counter += i; }

/* The simulator's clock. */
extern u64 kshim_now_ns;
static inline u64 ktime_get_ns(void) { return kshim_now_ns; }

/* The kernel's memchr_inv(): the first byte of @p that is not @c, or NULL. */
static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const unsigned char *b = p;

	for (; n; n--, b++)
		if (*b != (unsigned char)c)
			return (void *)b;
	return NULL;
}

#endif
