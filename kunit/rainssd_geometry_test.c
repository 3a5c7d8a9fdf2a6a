// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's stripe geometry (rainssd-geometry.c): md's
 * left-symmetric RAID-5 layout against a hand-written table, map/unmap round
 * trips for many member counts and chunk sizes, bad geometries and the
 * usable size.
 */
#include <kunit/test.h>

#include "rainssd-geometry.h"

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

kunit_test_suites(&rs_geom_suite);
