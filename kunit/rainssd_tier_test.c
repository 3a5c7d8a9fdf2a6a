// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's RAID1 tier, the pure part (rainssd-tier.c):
 * HybRAID's placement for every row of its Table 2 and every edge of its
 * Fig. 8, the tier's layout, the records and table blocks, the choice of
 * the members holding a stripe's copies, and the watermarks.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rainssd-migrate.h"
#include "rainssd-sync.h"
#include "rainssd-tier.h"
#include "rainssd_kunit.h"

static struct rs_place_out place_home(bool in_tier, bool written, bool full, unsigned int hist,
				      bool room, bool frozen, unsigned int home)
{
	struct rs_place_in in = {
		.in_tier = in_tier, .written = written, .full = full, .hist = hist,
		.threshold = RS_DEF_MIGRATION_THRESHOLD, .home_threshold = home,
		.room = room, .frozen = frozen,
	};
	struct rs_place_out out;

	rs_tier_place(&in, &out);
	return out;
}

/* HybRAID's own rule: the migration threshold both ways (home_threshold 4). */
static struct rs_place_out place(bool in_tier, bool written, bool full, unsigned int hist,
				 bool room, bool frozen)
{
	return place_home(in_tier, written, full, hist, room, frozen, RS_DEF_MIGRATION_THRESHOLD);
}

static void expect_place(struct kunit *test, struct rs_place_out o, enum rs_place p,
			 unsigned int h)
{
	KUNIT_EXPECT_EQ(test, o.place, p);
	KUNIT_EXPECT_EQ(test, o.hist, h);
}

#define EXPECT_PLACE(test, o, p, h)	expect_place(test, o, p, h)

/*
 * Table 2 (update writes by current tier and write size) and the first
 * writes of Algorithm 1, with the threshold of 4 both ways (the paper's).
 */
static void rs_tier_place_table2(struct kunit *test)
{
	/* New access: small/partial -> RAID1, aligned full stripe -> RAID5; history 1. */
	EXPECT_PLACE(test, place(false, false, false, 0, true, false), RS_PLACE_TO_R1, 1);
	EXPECT_PLACE(test, place(false, false, true, 0, true, false), RS_PLACE_R5, 1);
	/* RAID5, full stripe: stays (whatever the history), counted. */
	EXPECT_PLACE(test, place(false, true, true, 1, true, false), RS_PLACE_R5, 2);
	EXPECT_PLACE(test, place(false, true, true, 9, true, false), RS_PLACE_R5, 10);
	/* RAID5, small/partial, history below the threshold: stays, counted. */
	EXPECT_PLACE(test, place(false, true, false, 3, true, false), RS_PLACE_R5, 4);
	/* RAID5, small/partial, history at the threshold: online migration. */
	EXPECT_PLACE(test, place(false, true, false, 4, true, false), RS_PLACE_TO_R1, 1);
	EXPECT_PLACE(test, place(false, true, false, 7, true, false), RS_PLACE_TO_R1, 1);
	/* RAID1, small/partial: stays, counted. */
	EXPECT_PLACE(test, place(true, true, false, 1, true, false), RS_PLACE_R1, 2);
	EXPECT_PLACE(test, place(true, true, false, 8, false, false), RS_PLACE_R1, 9);
	/* RAID1, full stripe, history below the threshold: stays, counted. */
	EXPECT_PLACE(test, place(true, true, true, 3, true, false), RS_PLACE_R1, 4);
	/* RAID1, full stripe, history at the threshold: back to RAID5 (metadata only). */
	EXPECT_PLACE(test, place(true, true, true, 4, true, false), RS_PLACE_TO_R5, 1);
}

/*
 * The default home_threshold of 1: an aligned full-stripe write moves a
 * stripe in the tier home whatever its history (the rule); the
 * rest of Table 2 is unchanged, and frozen placement still keeps it.
 */
static void rs_tier_place_home_default(struct kunit *test)
{
	unsigned int h = RS_DEF_HOME_THRESHOLD;

	KUNIT_EXPECT_EQ(test, h, 1U);
	EXPECT_PLACE(test, place_home(true, true, true, 1, true, false, h), RS_PLACE_TO_R5, 1);
	EXPECT_PLACE(test, place_home(true, true, true, 3, false, false, h), RS_PLACE_TO_R5, 1);
	EXPECT_PLACE(test, place_home(true, true, true, 1, true, true, h), RS_PLACE_R1, 2);
	EXPECT_PLACE(test, place_home(true, true, false, 1, true, false, h), RS_PLACE_R1, 2);
	EXPECT_PLACE(test, place_home(false, true, false, 3, true, false, h), RS_PLACE_R5, 4);
	EXPECT_PLACE(test, place_home(false, true, false, 4, true, false, h), RS_PLACE_TO_R1, 1);
	EXPECT_PLACE(test, place_home(false, false, true, 0, true, false, h), RS_PLACE_R5, 1);
	/* Between the two: home at the second write in the tier. */
	EXPECT_PLACE(test, place_home(true, true, true, 1, true, false, 2), RS_PLACE_R1, 2);
	EXPECT_PLACE(test, place_home(true, true, true, 2, true, false, 2), RS_PLACE_TO_R5, 1);
}

/*
 * Fig. 8 as a walk: one stripe, its writes in order, each edge taken once
 * (the self-loops below the threshold, the migrations at it).
 */
static void rs_tier_place_fig8_walk(struct kunit *test)
{
	struct rs_place_in in = { .threshold = 3, .home_threshold = 3, .room = true };
	static const struct {
		bool full;
		enum rs_place want;
	} walk[] = {
		{ true, RS_PLACE_R5 },		/* new, full: RAID5 (hist 1) */
		{ false, RS_PLACE_R5 },		/* RAID5 self-loop (2) */
		{ true, RS_PLACE_R5 },		/* RAID5 self-loop, full (3) */
		{ false, RS_PLACE_TO_R1 },	/* RAID5 -> RAID1 (1) */
		{ true, RS_PLACE_R1 },		/* RAID1 self-loop, full (2) */
		{ false, RS_PLACE_R1 },		/* RAID1 self-loop (3) */
		{ false, RS_PLACE_R1 },		/* RAID1 self-loop (4) */
		{ true, RS_PLACE_TO_R5 },	/* RAID1 -> RAID5 (1) */
		{ false, RS_PLACE_R5 },		/* back in RAID5 (2) */
	};
	struct rs_place_out out;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(walk); i++) {
		in.full = walk[i].full;
		rs_tier_place(&in, &out);
		KUNIT_EXPECT_EQ_MSG(test, out.place, walk[i].want, "write %u", i);
		in.written = true;
		in.hist = out.hist;
		if (out.place == RS_PLACE_TO_R1)
			in.in_tier = true;
		else if (out.place == RS_PLACE_TO_R5)
			in.in_tier = false;
	}
	/* A new stripe's first small write goes straight to RAID1. */
	in = (struct rs_place_in){ .threshold = 3, .home_threshold = 3, .room = true };
	rs_tier_place(&in, &out);
	KUNIT_EXPECT_EQ(test, out.place, RS_PLACE_TO_R1);
}

/* No room, or placement frozen: nothing enters the tier; frozen: nothing leaves. */
static void rs_tier_place_no_room(struct kunit *test)
{
	EXPECT_PLACE(test, place(false, false, false, 0, false, false), RS_PLACE_R5, 1);
	EXPECT_PLACE(test, place(false, true, false, 4, false, false), RS_PLACE_R5, 5);
	EXPECT_PLACE(test, place(false, true, false, 4, true, true), RS_PLACE_R5, 5);
	EXPECT_PLACE(test, place(false, false, false, 0, true, true), RS_PLACE_R5, 1);
	EXPECT_PLACE(test, place(true, true, true, 4, false, false), RS_PLACE_TO_R5, 1);
	EXPECT_PLACE(test, place(true, true, true, 4, true, true), RS_PLACE_R1, 5);
	/* The history saturates instead of wrapping. */
	EXPECT_PLACE(test, place(false, true, true, RS_MAX_MIGRATION_THRESHOLD, true, false),
		     RS_PLACE_R5, RS_MAX_MIGRATION_THRESHOLD);
	KUNIT_EXPECT_STREQ(test, rs_place_name(RS_PLACE_TO_R5), "to_r5");
}

/*
 * A write its home could not hold (it covers the chunk of a member out,
 * the parity not resynced): it enters the tier when it can or stays
 * there, aligned full stripes too; without room or with placement frozen,
 * as before.
 */
static void rs_tier_place_home_short(struct kunit *test)
{
	struct rs_place_in in = {
		.in_tier = true, .written = true, .full = true, .hist = 4,
		.threshold = RS_DEF_MIGRATION_THRESHOLD, .home_threshold = 1,
		.room = true, .home_short = true,
	};
	struct rs_place_out out;

	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_R1, 5);
	in.home_short = false;
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_TO_R5, 1);
	/* Not in the tier: below the threshold, full or first, it enters. */
	in = (struct rs_place_in){ .written = true, .full = true, .hist = 1, .threshold = 4,
				   .home_threshold = 1, .room = true, .home_short = true };
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_TO_R1, 1);
	in.full = false;
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_TO_R1, 1);
	in.written = false;
	in.full = true;
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_TO_R1, 1);
	/* No room, or frozen: home, as before. */
	in.room = false;
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_R5, 1);
	in = (struct rs_place_in){ .written = true, .hist = 1, .threshold = 4, .home_threshold = 1,
				   .room = true, .frozen = true, .home_short = true };
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_R5, 2);
	in.in_tier = true;
	in.full = true;
	rs_tier_place(&in, &out);
	EXPECT_PLACE(test, out, RS_PLACE_R1, 2);
}

static void rs_tier_layout_sizes(struct kunit *test)
{
	struct rs_geom g;
	struct rs_tier_layout t;
	u64 start = 1 << 20, size = 256 << 11;	/* 256 MiB per member */

	/* 4 members, 64 KiB chunks: 16 rows, 4 bitmap bytes, 16-byte entries, 64-byte records. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 128), 0);
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t, &g, 10000, start, size), 0);
	KUNIT_EXPECT_EQ(test, t.rows, 16U);
	KUNIT_EXPECT_EQ(test, t.pbytes, 4U);
	KUNIT_EXPECT_EQ(test, t.rec_size, 64U);
	KUNIT_EXPECT_EQ(test, t.recs_per_block, 63U);
	KUNIT_EXPECT_EQ(test, t.wb_blocks, 1U);
	/* 4096 slots of 64 KiB would hold 2730 stripes: 44 blocks, then block 0 and the bitmap. */
	KUNIT_EXPECT_EQ(test, t.rec_blocks, 44U);
	KUNIT_EXPECT_EQ(test, t.blocks, 46U);
	/* The commit record: 46 generations fit one block. */
	KUNIT_EXPECT_EQ(test, t.vec_blocks, 1U);
	KUNIT_EXPECT_EQ(test, rs_tier_vec_sector(&t, 1), start + (2 * 46 + 1) * 8);
	/* Two copies of 46 blocks and two records: 752 sectors, rounded to 768 (6 chunks). */
	KUNIT_EXPECT_EQ(test, t.slots_start, start + 768);
	KUNIT_EXPECT_EQ(test, t.slots, 4090U);
	KUNIT_EXPECT_EQ(test, t.records, 4090U * 4 / 6);
	KUNIT_EXPECT_EQ(test, rs_tier_copy_sector(&t, 1, 2), start + (46 + 2) * 8);
	KUNIT_EXPECT_EQ(test, rs_tier_slot_sector(&t, 3), start + 768 + 3 * 128);
	KUNIT_EXPECT_EQ(test, rs_tier_rec_block(&t, 0), 2U);
	KUNIT_EXPECT_EQ(test, rs_tier_rec_block(&t, 63), 3U);
	KUNIT_EXPECT_EQ(test, rs_tier_rec_offset(&t, 64), RS_TIER_HDR + 64);

	/* 32 members, 1 MiB chunks: 256 rows; a record still fits a block twice. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 32, 2048), 0);
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t, &g, 1000, start, 64ULL << 11), 0);
	KUNIT_EXPECT_EQ(test, t.pbytes, 32U);
	KUNIT_EXPECT_GE(test, t.recs_per_block, 2U);
	KUNIT_EXPECT_LE(test, t.rec_size * t.recs_per_block + RS_TIER_HDR, RS_TIER_BLOCK);

	/* 4 KiB chunks: one row, the bitmap byte padded to 4. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 3, 8), 0);
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t, &g, 1000, start, 8192), 0);
	KUNIT_EXPECT_EQ(test, t.rows, 1U);
	KUNIT_EXPECT_EQ(test, t.pbytes, 4U);

	/* Too small to hold its own table and one stripe. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 128), 0);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, 10000, start, 128), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, 10000, start, 0), -EINVAL);
	/* More records than the stripe map can index. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 32, 8), 0);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, 1000, start, 1ULL << 31), -E2BIG);
	/*
	 * A volume of more stripes than the tier's stripe map may have (up to
	 * 1.11.22 its kvcalloc() passed INT_MAX bytes from 2^29 on: a WARN).
	 */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 3, 8), 0);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, RS_TIER_MAX_STRIPES, start, 1ULL << 20), 0);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, RS_TIER_MAX_STRIPES + 1, start, 1ULL << 20),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, rs_tier_layout(&t, &g, 1ULL << 29, start, 1ULL << 20), -EOVERFLOW);
}

static void rs_tier_record_roundtrip(struct kunit *test)
{
	struct rs_geom g;
	struct rs_tier_layout t;
	const char *why = NULL;
	unsigned int m, k;
	u32 slot;
	u8 *r;

	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 128), 0);
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t, &g, 10000, 0, 256 << 11), 0);
	r = kunit_kzalloc(test, t.rec_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);

	KUNIT_EXPECT_EQ(test, rs_tier_r_stripe(r), U64_MAX);	/* empty */
	rs_tier_r_set_head(r, 9999, 77);
	for (k = 0; k < 3; k++) {
		rs_tier_r_set_copy(&t, r, k, 0, k, 100 + k);
		rs_tier_r_set_copy(&t, r, k, 1, 3, 4000 + k);
	}
	rs_tier_r_set_rows(&t, r, 1, 3, 9);
	rs_tier_r_set_rows(&t, r, 2, 15, 40);	/* clipped at the chunk's 16 rows */
	KUNIT_EXPECT_EQ(test, rs_tier_r_stripe(r), 9999ULL);
	KUNIT_EXPECT_EQ(test, rs_tier_r_seq(r), 77ULL);
	rs_tier_r_copy(&t, r, 2, 1, &m, &slot);
	KUNIT_EXPECT_EQ(test, m, 3U);
	KUNIT_EXPECT_EQ(test, slot, 4002U);
	KUNIT_EXPECT_FALSE(test, rs_tier_r_row(&t, r, 1, 2));
	KUNIT_EXPECT_TRUE(test, rs_tier_r_row(&t, r, 1, 3));
	KUNIT_EXPECT_TRUE(test, rs_tier_r_row(&t, r, 1, 8));
	KUNIT_EXPECT_FALSE(test, rs_tier_r_row(&t, r, 1, 9));
	KUNIT_EXPECT_TRUE(test, rs_tier_r_row(&t, r, 2, 15));
	KUNIT_EXPECT_FALSE(test, rs_tier_r_row(&t, r, 0, 0));
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), 0);

	/* What the check refuses. */
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 9999, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "record of a stripe beyond the volume");
	rs_tier_r_set_head(r, 9999, RS_TIER_SEQ_LIMIT + 1);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "record with a sequence number near its limit");
	rs_tier_r_set_head(r, 9999, RS_TIER_SEQ_LIMIT);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), 0);
	rs_tier_r_set_head(r, 9999, 77);
	rs_tier_r_set_copy(&t, r, 0, 1, 0, 7);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "record with both copies on one member");
	rs_tier_r_set_copy(&t, r, 0, 1, 4, 7);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "record with a member or slot out of range");
	rs_tier_r_set_copy(&t, r, 0, 1, 3, t.slots);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	rs_tier_r_set_copy(&t, r, 0, 1, 3, 7);
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), 0);
	r[16 + 2] = 1;				/* chunk 0's padding */
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	r[16 + 2] = 0;
	r[16 + 12 + 2] = 1;			/* row 16 of chunk 0: beyond the chunk */
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	KUNIT_EXPECT_STREQ(test, why, "record with rows beyond the chunk");
	r[16 + 12 + 2] = 0;
	r[t.rec_size - 1] = 1;			/* the record's tail padding */
	KUNIT_EXPECT_EQ(test, rs_tier_r_check(&t, r, 10000, &why), -EINVAL);
	rs_tier_r_clear(&t, r);
	KUNIT_EXPECT_EQ(test, rs_tier_r_stripe(r), U64_MAX);
}

static void rs_tier_block_seal_check(struct kunit *test)
{
	struct rs_tier_blk h = { .block = 5, .gen = 42 };
	u8 other[16];
	struct rs_geom g;
	struct rs_tier_layout t, t2;
	unsigned int i;
	u64 gen;
	u8 *b;

	memcpy(h.uuid, "0123456789abcdef", 16);
	memcpy(other, "0123456789abcdeX", 16);
	b = kunit_kzalloc(test, RS_TIER_BLOCK, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, h.uuid, 5, &gen), RS_TIER_BLK_BLANK);
	b[100] = 1;
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, h.uuid, 5, &gen), RS_TIER_BLK_CORRUPT);
	b[3000] = 7;
	rs_tier_blk_seal(b, &h);
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, h.uuid, 5, &gen), RS_TIER_BLK_VALID);
	KUNIT_EXPECT_EQ(test, gen, 42ULL);
	/* Another volume's, another block's: not this one. */
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, other, 5, &gen), RS_TIER_BLK_CORRUPT);
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, h.uuid, 6, &gen), RS_TIER_BLK_CORRUPT);
	/* Any flipped bit anywhere: corrupt. */
	for (i = 0; i < RS_TIER_BLOCK; i += 97) {
		b[i] ^= 0x10;
		KUNIT_EXPECT_EQ_MSG(test, rs_tier_blk_check(b, h.uuid, 5, &gen),
				    RS_TIER_BLK_CORRUPT, "byte %u", i);
		b[i] ^= 0x10;
	}
	KUNIT_EXPECT_EQ(test, rs_tier_blk_check(b, h.uuid, 5, &gen), RS_TIER_BLK_VALID);

	/* The header block records the layout; another layout does not match it. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 128), 0);
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t, &g, 10000, 1 << 20, 256 << 11), 0);
	rs_tier_hdr_encode(&t, b);
	KUNIT_EXPECT_TRUE(test, rs_tier_hdr_matches(&t, b));
	KUNIT_ASSERT_EQ(test, rs_tier_layout(&t2, &g, 10000, 1 << 20, 128 << 11), 0);
	KUNIT_EXPECT_FALSE(test, rs_tier_hdr_matches(&t2, b));
	b[RS_TIER_BLOCK - 1] = 1;
	KUNIT_EXPECT_FALSE(test, rs_tier_hdr_matches(&t, b));
}

static void rs_tier_choose_members(struct kunit *test)
{
	u32 queued[5] = { 0, 0, 0, 0, 0 };
	u32 free[5] = { 10, 10, 10, 10, 10 };
	u8 pair[4][2];
	unsigned int k, per[5] = {};

	/* Idle members: the copies of 4 chunks spread over all five, two each at most. */
	KUNIT_ASSERT_TRUE(test, rs_tier_choose(5, 0, queued, free, 4, pair));
	for (k = 0; k < 4; k++) {
		KUNIT_EXPECT_NE(test, pair[k][0], pair[k][1]);
		per[pair[k][0]]++;
		per[pair[k][1]]++;
	}
	for (k = 0; k < 5; k++)
		KUNIT_EXPECT_LE(test, per[k], 2U);
	KUNIT_EXPECT_EQ(test, free[0] + free[1] + free[2] + free[3] + free[4], 50U - 8);

	/* A busy member gets nothing; a dead one neither. */
	queued[1] = 100;
	for (k = 0; k < 5; k++)
		free[k] = 10;
	KUNIT_ASSERT_TRUE(test, rs_tier_choose(5, BIT(3), queued, free, 3, pair));
	for (k = 0; k < 3; k++) {
		KUNIT_EXPECT_NE(test, pair[k][0], 1);
		KUNIT_EXPECT_NE(test, pair[k][1], 1);
		KUNIT_EXPECT_NE(test, pair[k][0], 3);
		KUNIT_EXPECT_NE(test, pair[k][1], 3);
		KUNIT_EXPECT_NE(test, pair[k][0], pair[k][1]);
	}
	/* Of equal load, the member with more free slots. */
	queued[1] = 0;
	free[0] = 1;
	free[1] = 9;
	free[2] = 3;
	free[3] = 0;
	free[4] = 2;
	KUNIT_ASSERT_TRUE(test, rs_tier_choose(5, 0, queued, free, 1, pair));
	KUNIT_EXPECT_EQ(test, pair[0][0], 1);
	KUNIT_EXPECT_EQ(test, pair[0][1], 2);
	/* Only one member with room: no pair. */
	free[0] = 0;
	free[1] = 5;
	free[2] = 0;
	free[4] = 0;
	KUNIT_EXPECT_FALSE(test, rs_tier_choose(5, 0, queued, free, 1, pair));
}

static void rs_tier_watermarks(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, rs_tier_should_migrate(90, 100, 70, 90, false));
	KUNIT_EXPECT_TRUE(test, rs_tier_should_migrate(91, 100, 70, 90, false));
	KUNIT_EXPECT_TRUE(test, rs_tier_should_migrate(71, 100, 70, 90, true));
	KUNIT_EXPECT_FALSE(test, rs_tier_should_migrate(70, 100, 70, 90, true));
	/* 0% low: it runs until the tier is empty (flush_tier). */
	KUNIT_EXPECT_TRUE(test, rs_tier_should_migrate(1, 100, 0, 0, false));
	KUNIT_EXPECT_FALSE(test, rs_tier_should_migrate(0, 100, 0, 0, true));
	KUNIT_EXPECT_FALSE(test, rs_tier_should_migrate(5, 0, 0, 0, true));
	/* No overflow near the top. */
	KUNIT_EXPECT_TRUE(test, rs_tier_should_migrate(U32_MAX, U32_MAX, 70, 90, false));
}

/*
 * The offline migration's pace (rs_rate_wait() with rs_mig_min_rate()): at
 * most migration_rate; while user I/O goes on, a pause whenever it is ahead
 * of a quarter of it (up to 1.11.13 it never paused); no limit and no pause
 * at 0.
 */
static void rs_tier_migration_pace(struct kunit *test)
{
	const u64 s = NSEC_PER_SEC, rate = 20000;
	unsigned long yield = msecs_to_jiffies(RS_SYNC_YIELD_MS) ?: 1;

	/* 30000 KiB in 1 s at 20000 KiB/s: half a second more. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 30000, rs_mig_min_rate(rate), rate, false),
			nsecs_to_jiffies(s / 2));
	/* 10000 KiB in 1 s, no user I/O: on at once. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 10000, rs_mig_min_rate(rate), rate, false), 0UL);
	/* The same with user I/O: ahead of 5000 KiB/s, it pauses. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 10000, rs_mig_min_rate(rate), rate, true), yield);
	/* Behind 5000 KiB/s (4000 KiB in 1 s): on, user I/O or not. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 4000, rs_mig_min_rate(rate), rate, true), 0UL);
	/* migration_rate 0: no limit and no pause. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 1000000, rs_mig_min_rate(0), 0, true), 0UL);
	/* A rebuild's window as before: min_recovery_rate 1000, max 0. */
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 2000, 1000, 0, true), yield);
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 500, 1000, 0, true), 0UL);
	KUNIT_EXPECT_EQ(test, rs_rate_wait(s, 2000, 1000, 0, false), 0UL);
}

static struct kunit_case rs_tier_cases[] = {
	KUNIT_CASE(rs_tier_place_table2),
	KUNIT_CASE(rs_tier_place_home_default),
	KUNIT_CASE(rs_tier_place_fig8_walk),
	KUNIT_CASE(rs_tier_place_no_room),
	KUNIT_CASE(rs_tier_place_home_short),
	KUNIT_CASE(rs_tier_layout_sizes),
	KUNIT_CASE(rs_tier_record_roundtrip),
	KUNIT_CASE(rs_tier_block_seal_check),
	KUNIT_CASE(rs_tier_choose_members),
	KUNIT_CASE(rs_tier_watermarks),
	KUNIT_CASE(rs_tier_migration_pace),
	{}
};

static struct kunit_suite rs_tier_suite = {
	.name = "rainssd-tier",
	.test_cases = rs_tier_cases,
};

kunit_test_suites(&rs_tier_suite);
