// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's XOR (rainssd-xor.c): rs_xor_blocks() over 1
 * to 9 sources and many lengths against a bytewise XOR, and the parity of a
 * stripe rebuilding any one lost block.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rainssd-xor.h"

/*
 * rs_xor_blocks() against a byte-at-a-time XOR: 1 to 9 sources (so
 * xor_blocks() runs in groups of up to four and a remainder), whole-sector
 * lengths as the engine uses and odd lengths whose tail goes bytewise.
 */
static void rs_xor_matches_bytewise(struct kunit *test)
{
	enum { SIZE = 8192, NSRC = 9 };
	static const unsigned int lens[] = { 512, 1024, 4096, 8192, 300, 1000, 4097 };
	u8 *dst = kunit_kmalloc(test, SIZE, GFP_KERNEL);
	u8 *ref = kunit_kmalloc(test, SIZE, GFP_KERNEL);
	void *src[NSRC];
	unsigned int nr, l, i, b;

	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	for (i = 0; i < NSRC; i++) {
		src[i] = kunit_kmalloc(test, SIZE, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, src[i]);
	}
	for (nr = 1; nr <= NSRC; nr++) {
		for (l = 0; l < ARRAY_SIZE(lens); l++) {
			get_random_bytes(dst, SIZE);
			for (i = 0; i < nr; i++)
				get_random_bytes(src[i], SIZE);
			memcpy(ref, dst, SIZE);
			for (i = 0; i < nr; i++)
				for (b = 0; b < lens[l]; b++)
					ref[b] ^= ((u8 *)src[i])[b];
			rs_xor_blocks(dst, src, nr, lens[l]);
			KUNIT_ASSERT_EQ_MSG(test, memcmp(dst, ref, SIZE), 0,
					    "%u sources, %u bytes", nr, lens[l]);
		}
	}
}

static void rs_xor_parity_rebuilds(struct kunit *test)
{
	enum { N = 5, LEN = 4096 };
	void *d[N], *others[N];
	u8 *p, *rebuilt;
	unsigned int i, k, lost;

	for (i = 0; i < N; i++) {
		d[i] = kunit_kmalloc(test, LEN, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, d[i]);
		get_random_bytes(d[i], LEN);
	}
	p = kunit_kzalloc(test, LEN, GFP_KERNEL);
	rebuilt = kunit_kmalloc(test, LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, rebuilt);
	rs_xor_blocks(p, d, N, LEN);
	for (lost = 0; lost < N; lost++) {
		memcpy(rebuilt, p, LEN);
		for (i = 0, k = 0; i < N; i++)
			if (i != lost)
				others[k++] = d[i];
		rs_xor_blocks(rebuilt, others, k, LEN);
		KUNIT_EXPECT_EQ(test, memcmp(rebuilt, d[lost], LEN), 0);
	}
}

static struct kunit_case rs_xor_cases[] = {
	KUNIT_CASE(rs_xor_matches_bytewise),
	KUNIT_CASE(rs_xor_parity_rebuilds),
	{}
};

static struct kunit_suite rs_xor_suite = {
	.name = "rainssd-xor",
	.test_cases = rs_xor_cases,
};

kunit_test_suites(&rs_xor_suite);
