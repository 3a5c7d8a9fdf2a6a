// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for dm-rainssd's pure units: geometry, XOR and the parity
 * update decision.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "rainssd-geometry.h"
#include "rainssd-policy.h"
#include "rainssd-xor.h"

/* ---- geometry ---- */

/*
 * md's left-symmetric layout for 4 members, stripes 0..3, written out by hand:
 *	D0  D1  D2  P
 *	D4  D5  P   D3
 *	D8  P   D6  D7
 *	P   D9  D10 D11
 * -1 marks the parity.
 */
static const int ls4[4][4] = {
	{ 0, 1, 2, -1 },
	{ 4, 5, -1, 3 },
	{ 8, -1, 6, 7 },
	{ -1, 9, 10, 11 },
};

static void rs_geom_known_answer(struct kunit *test)
{
	struct rs_geom g;
	unsigned int s, m;

	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 16), 0);
	for (s = 0; s < 4; s++) {
		for (m = 0; m < 4; m++) {
			int want = ls4[s][m];
			struct rs_loc loc;

			if (want < 0) {
				KUNIT_EXPECT_EQ(test, rs_parity_member(&g, s), m);
				KUNIT_EXPECT_EQ(test, rs_member_to_k(&g, s, m), -1);
				continue;
			}
			rs_map(&g, (sector_t)want * 16 + 5, &loc);
			KUNIT_EXPECT_EQ(test, loc.stripe, (u64)s);
			KUNIT_EXPECT_EQ(test, loc.member, m);
			KUNIT_EXPECT_EQ(test, loc.row, 5U);
			KUNIT_EXPECT_EQ(test, loc.msector, RS_DATA_OFFSET + s * 16 + 5);
		}
	}
}

/*
 * For many N and chunk sizes: map then unmap is the identity, and each
 * stripe uses every member exactly once.
 */
static void rs_geom_roundtrip(struct kunit *test)
{
	static const unsigned int chunks[] = { 8, 16, 128, 1024, 2048 };
	unsigned int n, c, i;

	for (n = RS_MIN_DEVS; n <= 16; n++) {
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			unsigned int chunk = chunks[c];
			struct rs_geom g;
			u64 s;

			KUNIT_ASSERT_EQ(test, rs_geom_init(&g, n, chunk), 0);
			KUNIT_EXPECT_EQ(test, g.stripe_data, (n - 1) * chunk);
			for (s = 0; s < 3 * n; s++) {
				unsigned long seen = 0;
				unsigned int pd = rs_parity_member(&g, s);

				KUNIT_EXPECT_EQ(test, pd, n - 1 - (unsigned int)(s % n));
				seen |= BIT(pd);
				for (i = 0; i < n - 1; i++) {
					unsigned int m = rs_data_member(&g, s, i);
					struct rs_loc loc;
					sector_t l = rs_unmap(&g, s, i, chunk - 1);

					KUNIT_EXPECT_FALSE(test, seen & BIT(m));
					seen |= BIT(m);
					KUNIT_EXPECT_EQ(test, rs_member_to_k(&g, s, m), (int)i);
					rs_map(&g, l, &loc);
					KUNIT_EXPECT_EQ(test, loc.stripe, s);
					KUNIT_EXPECT_EQ(test, loc.k, i);
					KUNIT_EXPECT_EQ(test, loc.member, m);
					KUNIT_EXPECT_EQ(test, loc.row, chunk - 1);
					KUNIT_EXPECT_EQ(test, loc.msector,
							RS_DATA_OFFSET + s * chunk + chunk - 1);
				}
				KUNIT_EXPECT_EQ(test, seen, BIT(n) - 1);
			}
		}
	}
}

static void rs_geom_bad_and_sizes(struct kunit *test)
{
	struct rs_geom g;

	KUNIT_EXPECT_EQ(test, rs_geom_init(&g, 2, 128), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_geom_init(&g, RS_MAX_DEVS + 1, 128), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_geom_init(&g, 4, 96), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_geom_init(&g, 4, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_geom_init(&g, 4, 4096), -EINVAL);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 5, 128), 0);
	KUNIT_EXPECT_EQ(test, rs_usable_sectors(&g, RS_DATA_OFFSET - 1), 0ULL);
	KUNIT_EXPECT_EQ(test, rs_usable_sectors(&g, RS_DATA_OFFSET + 127), 0ULL);
	KUNIT_EXPECT_EQ(test, rs_usable_sectors(&g, RS_DATA_OFFSET + 1000), 7ULL * 4 * 128);
}

static struct kunit_case rs_geom_cases[] = {
	KUNIT_CASE(rs_geom_known_answer),
	KUNIT_CASE(rs_geom_roundtrip),
	KUNIT_CASE(rs_geom_bad_and_sizes),
	{}
};

static struct kunit_suite rs_geom_suite = {
	.name = "rainssd-geometry",
	.test_cases = rs_geom_cases,
};

/* ---- XOR ---- */

static void rs_xor_matches_bytewise(struct kunit *test)
{
	const size_t size = 300;
	u8 *a = kunit_kmalloc(test, size + 16, GFP_KERNEL);
	u8 *b = kunit_kmalloc(test, size + 16, GFP_KERNEL);
	u8 *ref = kunit_kmalloc(test, size + 16, GFP_KERNEL);
	unsigned int da, sa, len, i;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	/* Every alignment of both buffers and many lengths, against byte XOR. */
	for (da = 0; da < 8; da++) {
		for (sa = 0; sa < 8; sa++) {
			for (len = 0; len < 270; len += 13) {
				get_random_bytes(a, size + 16);
				get_random_bytes(b, size + 16);
				memcpy(ref, a, size + 16);
				for (i = 0; i < len; i++)
					ref[da + i] ^= b[sa + i];
				rs_xor(a + da, b + sa, len);
				KUNIT_ASSERT_EQ(test, memcmp(a, ref, size + 16), 0);
			}
		}
	}
}

static void rs_xor_parity_rebuilds(struct kunit *test)
{
	enum { N = 5, LEN = 4096 };
	u8 *d[N], *p, *rebuilt;
	unsigned int i, lost;

	for (i = 0; i < N; i++) {
		d[i] = kunit_kmalloc(test, LEN, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, d[i]);
		get_random_bytes(d[i], LEN);
	}
	p = kunit_kzalloc(test, LEN, GFP_KERNEL);
	rebuilt = kunit_kmalloc(test, LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, rebuilt);
	for (i = 0; i < N; i++)
		rs_xor(p, d[i], LEN);
	for (lost = 0; lost < N; lost++) {
		memcpy(rebuilt, p, LEN);
		for (i = 0; i < N; i++)
			if (i != lost)
				rs_xor(rebuilt, d[i], LEN);
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

/* ---- the parity-update decision ---- */

/* A shape for stripe 0 of @n members with chunk 16: parity is member n-1. */
static void shape0(struct rs_stripe_shape *s, unsigned int n, unsigned int dead)
{
	struct rs_geom g;

	rs_geom_init(&g, n, 16);
	rs_shape_init(s, &g, 0, dead);
}

static void rs_policy_count_small_write(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* 8 members, one half-chunk written: RMW reads 8+8, RCW reads 6*8. */
	shape0(&s, 8, RS_NO_MEMBER);
	rs_shape_add_write(&s, 2, 0, 8);
	KUNIT_EXPECT_EQ(test, s.rows.start, 0U);
	KUNIT_EXPECT_EQ(test, s.rows.end, 8U);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 16U);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 48U);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW), RS_WRITE_RMW);
}

static void rs_policy_count_large_write(struct kunit *test)
{
	struct rs_stripe_shape s;
	unsigned int m;

	/* 5 members, 3 of 4 data chunks written whole: RMW 4*16, RCW 16. */
	shape0(&s, 5, RS_NO_MEMBER);
	for (m = 0; m < 3; m++)
		rs_shape_add_write(&s, m, 0, 16);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 64U);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 16U);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW), RS_WRITE_RMW);
}

static void rs_policy_count_tie_is_rmw(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* 4 members (3 data), one chunk written whole: RMW 16+16, RCW 2*16. */
	shape0(&s, 4, RS_NO_MEMBER);
	rs_shape_add_write(&s, 1, 0, 16);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), rs_rcw_prereads(&s));
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_RMW);
}

static void rs_policy_rows_span(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* A write from row 12 of chunk 0 to row 4 of chunk 1 recomputes rows 0..16. */
	shape0(&s, 4, RS_NO_MEMBER);
	rs_shape_add_write(&s, 0, 12, 16);
	rs_shape_add_write(&s, 1, 0, 4);
	KUNIT_EXPECT_EQ(test, s.rows.start, 0U);
	KUNIT_EXPECT_EQ(test, s.rows.end, 16U);
	/* RMW: 4 + 4 + 16; RCW: (16-4) + (16-4) + 16 */
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 24U);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 40U);
}

static void rs_policy_full_stripe(struct kunit *test)
{
	struct rs_stripe_shape s;
	unsigned int m;

	shape0(&s, 4, RS_NO_MEMBER);
	for (m = 0; m < 3; m++)
		rs_shape_add_write(&s, m, 0, 16);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_FULL);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW), RS_WRITE_FULL);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW), RS_WRITE_FULL);
	/* Missing one row of one chunk: no longer full. */
	rs_shape_add_write(&s, 2, 0, 15);
	KUNIT_EXPECT_NE(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_FULL);
}

static void rs_policy_degraded(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* Dead parity: data only, whatever the policy. */
	shape0(&s, 4, 3);
	rs_shape_add_write(&s, 0, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW), RS_WRITE_NOPARITY);

	/* Dead data member not written: RMW even when RCW is asked for. */
	shape0(&s, 4, 2);
	rs_shape_add_write(&s, 0, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW), RS_WRITE_RMW);

	/* Dead data member written: rebuild first. */
	shape0(&s, 4, 1);
	rs_shape_add_write(&s, 1, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW), RS_WRITE_RECONSTRUCT);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT), RS_WRITE_RECONSTRUCT);
}

static void rs_policy_names(struct kunit *test)
{
	enum rs_policy p;

	KUNIT_EXPECT_EQ(test, rs_policy_parse("count", &p), 0);
	KUNIT_EXPECT_EQ(test, p, RS_POLICY_COUNT);
	KUNIT_EXPECT_EQ(test, rs_policy_parse("rcw", &p), 0);
	KUNIT_EXPECT_EQ(test, p, RS_POLICY_RCW);
	KUNIT_EXPECT_EQ(test, rs_policy_parse("fastest", &p), -EINVAL);
	KUNIT_EXPECT_STREQ(test, rs_policy_name(RS_POLICY_RMW), "rmw");
}

static struct kunit_case rs_policy_cases[] = {
	KUNIT_CASE(rs_policy_count_small_write),
	KUNIT_CASE(rs_policy_count_large_write),
	KUNIT_CASE(rs_policy_count_tie_is_rmw),
	KUNIT_CASE(rs_policy_rows_span),
	KUNIT_CASE(rs_policy_full_stripe),
	KUNIT_CASE(rs_policy_degraded),
	KUNIT_CASE(rs_policy_names),
	{}
};

static struct kunit_suite rs_policy_suite = {
	.name = "rainssd-policy",
	.test_cases = rs_policy_cases,
};

kunit_test_suites(&rs_geom_suite, &rs_xor_suite, &rs_policy_suite);

MODULE_DESCRIPTION("KUnit tests for dm-rainssd");
MODULE_LICENSE("GPL");
