// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's stripe shape (rainssd-shape.c): the rows each
 * parity-update method pre-reads and writes on hand-worked stripes, the
 * invariants of the pre-reads over every small write, the recomputed rows
 * without a shape (rs_shape_span_rows) against rs_shape_from_range, and what
 * the operation layer's emergency bioset relies on for a write over several
 * stripes: each member writes one contiguous range, and only the first and
 * last stripe pre-read.
 */
#include <kunit/test.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rainssd-geometry.h"
#include "rainssd-policy.h"
#include "rainssd-shape.h"

static const enum rs_write_mode all_modes[] = {
	RS_WRITE_FULL, RS_WRITE_RMW, RS_WRITE_RCW, RS_WRITE_NOPARITY, RS_WRITE_RECONSTRUCT,
};

/* Member @m reads exactly the @nr ranges @want for @mode. */
static void expect_reads(struct kunit *test, const struct rs_stripe_shape *s,
			 enum rs_write_mode mode, unsigned int m, unsigned int nr,
			 const struct rs_range *want)
{
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	unsigned int got, i;

	got = rs_shape_reads(s, mode, m, r);
	KUNIT_EXPECT_EQ_MSG(test, got, nr, "mode %d member %u", mode, m);
	for (i = 0; i < min(got, nr); i++) {
		KUNIT_EXPECT_EQ_MSG(test, r[i].start, want[i].start, "mode %d member %u range %u",
				    mode, m, i);
		KUNIT_EXPECT_EQ_MSG(test, r[i].end, want[i].end, "mode %d member %u range %u",
				    mode, m, i);
	}
}

static void reads0(struct kunit *test, const struct rs_stripe_shape *s,
		   enum rs_write_mode mode, unsigned int m)
{
	expect_reads(test, s, mode, m, 0, NULL);
}

static void reads1(struct kunit *test, const struct rs_stripe_shape *s,
		   enum rs_write_mode mode, unsigned int m, unsigned int start, unsigned int end)
{
	const struct rs_range want[] = { { start, end } };

	expect_reads(test, s, mode, m, 1, want);
}

static void reads2(struct kunit *test, const struct rs_stripe_shape *s,
		   enum rs_write_mode mode, unsigned int m, unsigned int s0, unsigned int e0,
		   unsigned int s1, unsigned int e1)
{
	const struct rs_range want[] = { { s0, e0 }, { s1, e1 } };

	expect_reads(test, s, mode, m, 2, want);
}

static void expect_range(struct kunit *test, struct rs_range r, unsigned int start,
			 unsigned int end)
{
	KUNIT_EXPECT_EQ(test, r.start, start);
	KUNIT_EXPECT_EQ(test, r.end, end);
}

/*
 * The stripes of the hand-worked cases: 5 members, chunk 16 (64 data
 * sectors a stripe). Stripe 0 has its parity on member 4 and data chunk k on
 * member k; stripe 2 has its parity on member 2 and chunks 0..3 on members
 * 3, 4, 0, 1.
 */
static void geom5(struct kunit *test, struct rs_geom *g)
{
	KUNIT_ASSERT_EQ(test, rs_geom_init(g, 5, 16), 0);
	KUNIT_ASSERT_EQ(test, rs_parity_member(g, 0), 4U);
	KUNIT_ASSERT_EQ(test, rs_parity_member(g, 2), 2U);
	KUNIT_ASSERT_EQ(test, rs_data_member(g, 2, 2), 0U);
}

static void rs_shape_rmw_reads(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_geom g;

	geom5(test, &g);
	/* Rows 4..12 of chunk 1 (member 1): old data and old parity over them. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 16 + 4, 16 + 12);
	expect_range(test, s.rows, 4, 12);
	expect_range(test, s.w[1], 4, 12);
	reads1(test, &s, RS_WRITE_RMW, 1, 4, 12);
	reads1(test, &s, RS_WRITE_RMW, 4, 4, 12);
	reads0(test, &s, RS_WRITE_RMW, 0);
	reads0(test, &s, RS_WRITE_RMW, 2);
	reads0(test, &s, RS_WRITE_RMW, 3);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 16U);

	/* Row 10 of chunk 0 to row 6 of chunk 1: the parity over the whole chunk. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 10, 16 + 6);
	expect_range(test, s.rows, 0, 16);
	reads1(test, &s, RS_WRITE_RMW, 0, 10, 16);
	reads1(test, &s, RS_WRITE_RMW, 1, 0, 6);
	reads1(test, &s, RS_WRITE_RMW, 4, 0, 16);
	reads0(test, &s, RS_WRITE_RMW, 2);
	reads0(test, &s, RS_WRITE_RMW, 3);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 28U);

	/* Stripe 2, rows 3..9 of chunk 2 (member 0), parity on member 2. */
	rs_shape_from_range(&s, &g, 2, RS_NO_MEMBER, 2 * 64 + 32 + 3, 2 * 64 + 32 + 9);
	KUNIT_EXPECT_EQ(test, s.parity, 2U);
	reads1(test, &s, RS_WRITE_RMW, 0, 3, 9);
	reads1(test, &s, RS_WRITE_RMW, 2, 3, 9);
	reads0(test, &s, RS_WRITE_RMW, 1);
	reads0(test, &s, RS_WRITE_RMW, 3);
	reads0(test, &s, RS_WRITE_RMW, 4);
}

static void rs_shape_rcw_reads(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_geom g;

	geom5(test, &g);
	/* Rows 4..12 of member 1: the same rows of the three other data members. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 16 + 4, 16 + 12);
	reads1(test, &s, RS_WRITE_RCW, 0, 4, 12);
	reads0(test, &s, RS_WRITE_RCW, 1);
	reads1(test, &s, RS_WRITE_RCW, 2, 4, 12);
	reads1(test, &s, RS_WRITE_RCW, 3, 4, 12);
	reads0(test, &s, RS_WRITE_RCW, 4);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 24U);

	/* Row 10 of chunk 0 to row 6 of chunk 1: what each chunk misses of 0..16. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 10, 16 + 6);
	reads1(test, &s, RS_WRITE_RCW, 0, 0, 10);
	reads1(test, &s, RS_WRITE_RCW, 1, 6, 16);
	reads1(test, &s, RS_WRITE_RCW, 2, 0, 16);
	reads1(test, &s, RS_WRITE_RCW, 3, 0, 16);
	reads0(test, &s, RS_WRITE_RCW, 4);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 52U);

	/*
	 * A written range strictly inside the recomputed rows: member 0 whole,
	 * member 1 rows 4..8. Member 1 reads around its write, in two ranges.
	 */
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	rs_shape_add_write(&s, 0, 0, 16);
	rs_shape_add_write(&s, 1, 4, 8);
	expect_range(test, s.rows, 0, 16);
	reads0(test, &s, RS_WRITE_RCW, 0);
	reads2(test, &s, RS_WRITE_RCW, 1, 0, 4, 8, 16);
	reads1(test, &s, RS_WRITE_RCW, 2, 0, 16);
	reads1(test, &s, RS_WRITE_RCW, 3, 0, 16);
	reads0(test, &s, RS_WRITE_RCW, 4);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 44U);
	/* RMW of the same shape: the written rows and the parity. */
	reads1(test, &s, RS_WRITE_RMW, 0, 0, 16);
	reads1(test, &s, RS_WRITE_RMW, 1, 4, 8);
	reads1(test, &s, RS_WRITE_RMW, 4, 0, 16);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 36U);

	/* Three partial writes, rows 2..14 recomputed; member 2's is inside. */
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	rs_shape_add_write(&s, 0, 2, 10);
	rs_shape_add_write(&s, 1, 6, 14);
	rs_shape_add_write(&s, 2, 5, 9);
	expect_range(test, s.rows, 2, 14);
	reads1(test, &s, RS_WRITE_RCW, 0, 10, 14);
	reads1(test, &s, RS_WRITE_RCW, 1, 2, 6);
	reads2(test, &s, RS_WRITE_RCW, 2, 2, 5, 9, 14);
	reads1(test, &s, RS_WRITE_RCW, 3, 2, 14);
	reads0(test, &s, RS_WRITE_RCW, 4);
}

static void rs_shape_reconstruct_reads(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_geom g;
	unsigned int m;

	geom5(test, &g);
	/* Member 1 dead and written: every live member over the recomputed rows. */
	rs_shape_from_range(&s, &g, 0, 1, 16 + 4, 16 + 12);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL),
			RS_WRITE_RECONSTRUCT);
	reads0(test, &s, RS_WRITE_RECONSTRUCT, 1);
	for (m = 0; m < 5; m++)
		if (m != 1)
			reads1(test, &s, RS_WRITE_RECONSTRUCT, m, 4, 12);

	/* Member 0 dead, row 10 of chunk 0 to row 6 of chunk 1: whole chunks. */
	rs_shape_from_range(&s, &g, 0, 0, 10, 16 + 6);
	reads0(test, &s, RS_WRITE_RECONSTRUCT, 0);
	for (m = 1; m < 5; m++)
		reads1(test, &s, RS_WRITE_RECONSTRUCT, m, 0, 16);
}

static void rs_shape_full_noparity_reads(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_geom g;
	unsigned int m;

	geom5(test, &g);
	/* A full stripe reads nothing. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 0, 64);
	KUNIT_EXPECT_TRUE(test, rs_shape_is_full(&s));
	expect_range(test, s.rows, 0, 16);
	for (m = 0; m < 5; m++)
		reads0(test, &s, RS_WRITE_FULL, m);

	/* The parity member dead: data only, nothing to read. */
	rs_shape_from_range(&s, &g, 0, 4, 16 + 4, 16 + 12);
	KUNIT_EXPECT_FALSE(test, rs_shape_is_full(&s));
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW, NULL, NULL), RS_WRITE_NOPARITY);
	for (m = 0; m < 5; m++)
		reads0(test, &s, RS_WRITE_NOPARITY, m);
}

/*
 * What is wrong with the pre-reads of @s for @mode, as a count: more than
 * RS_SHAPE_MAX_RANGES ranges for a member, an empty range or one outside the
 * recomputed rows, a read by the dead member, or per-member and total
 * sectors that are not the sums of the ranges.
 */
static unsigned int check_reads(const struct rs_stripe_shape *s, enum rs_write_mode mode)
{
	unsigned int sec[RS_MAX_DEVS], m, i, nr, sum, total = 0, bad = 0;
	struct rs_range r[RS_SHAPE_MAX_RANGES];

	rs_prereads_per_member(s, mode, sec);
	for (m = 0; m < s->n; m++) {
		nr = rs_shape_reads(s, mode, m, r);
		if (nr > RS_SHAPE_MAX_RANGES || (m == s->dead && nr))
			return bad + 1;
		for (i = 0, sum = 0; i < nr; i++) {
			bad += r[i].start >= r[i].end || r[i].start < s->rows.start ||
			       r[i].end > s->rows.end;
			sum += rs_range_len(&r[i]);
		}
		bad += sec[m] != sum;
		total += sum;
	}
	if (mode == RS_WRITE_RMW)
		bad += rs_rmw_prereads(s) != total;
	if (mode == RS_WRITE_RCW)
		bad += rs_rcw_prereads(s) != total;
	return bad;
}

/*
 * check_reads() for every write inside stripe @st of @g, with no or any dead
 * member and every mode; false (and the case failed) at the first problem.
 */
static bool reads_invariants_stripe(struct kunit *test, const struct rs_geom *g, u64 st,
				    struct rs_stripe_shape *s, unsigned int *shapes)
{
	sector_t base = st * g->stripe_data, a, b;
	unsigned int di, mi, dead, bad;

	for (a = 0; a < g->stripe_data; a++) {
		for (b = a + 1; b <= g->stripe_data; b++) {
			for (di = 0; di <= g->n; di++) {
				dead = di < g->n ? di : RS_NO_MEMBER;
				rs_shape_from_range(s, g, st, dead, base + a, base + b);
				(*shapes)++;
				for (mi = 0, bad = 0; mi < ARRAY_SIZE(all_modes); mi++)
					bad |= (check_reads(s, all_modes[mi]) != 0) << mi;
				if (!bad)
					continue;
				KUNIT_FAIL(test, "n %u stripe %llu %llu..%llu dead %u modes %#x",
					   g->n, st, (u64)a, (u64)b, dead, bad);
				return false;
			}
		}
	}
	return true;
}

/* reads_invariants_stripe() for 3 to 6 members (chunk 8), every parity position. */
static void rs_shape_reads_invariants(struct kunit *test)
{
	struct rs_stripe_shape *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	unsigned int n, shapes = 0;
	struct rs_geom g;
	u64 st;

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (n = RS_MIN_DEVS; n <= 6; n++) {
		KUNIT_ASSERT_EQ(test, rs_geom_init(&g, n, 8), 0);
		for (st = 0; st < n; st++)
			if (!reads_invariants_stripe(test, &g, st, s, &shapes))
				return;
	}
	/* n stripes of sd * (sd + 1) / 2 writes with n + 1 dead choices, n = 3..6 */
	KUNIT_EXPECT_EQ(test, shapes, 3U * 136 * 4 + 4 * 300 * 5 + 5 * 528 * 6 + 6 * 820 * 7);
}

/* check_reads() finds what it looks for: hand-made wrong shapes. */
static void rs_shape_reads_check_fails(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_geom g;

	geom5(test, &g);
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 16 + 4, 16 + 12);
	KUNIT_EXPECT_EQ(test, check_reads(&s, RS_WRITE_RMW), 0U);
	KUNIT_EXPECT_EQ(test, check_reads(&s, RS_WRITE_RCW), 0U);
	/* A member written beyond the recomputed rows reads outside them under RMW. */
	s.w[2].start = 0;
	s.w[2].end = 16;
	KUNIT_EXPECT_NE(test, check_reads(&s, RS_WRITE_RMW), 0U);
}

static void rs_shape_writes_rows(struct kunit *test)
{
	static const enum rs_write_mode parity_modes[] = {
		RS_WRITE_FULL, RS_WRITE_RMW, RS_WRITE_RCW, RS_WRITE_RECONSTRUCT,
	};
	struct rs_stripe_shape s;
	struct rs_geom g;
	unsigned int i;
	struct rs_range w;

	geom5(test, &g);
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 16 + 4, 16 + 12);
	for (i = 0; i < ARRAY_SIZE(parity_modes); i++) {
		expect_range(test, rs_shape_writes(&s, parity_modes[i], 1), 4, 12);
		expect_range(test, rs_shape_writes(&s, parity_modes[i], 4), 4, 12);
		w = rs_shape_writes(&s, parity_modes[i], 0);
		KUNIT_EXPECT_EQ(test, rs_range_len(&w), 0U);
	}
	/* The parity member dead: it gets no rows, the data still does. */
	rs_shape_from_range(&s, &g, 0, 4, 16 + 4, 16 + 12);
	w = rs_shape_writes(&s, RS_WRITE_NOPARITY, 4);
	KUNIT_EXPECT_EQ(test, rs_range_len(&w), 0U);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_NOPARITY, 1), 4, 12);

	/* Over two chunks: the parity gets the whole chunk, the data its rows. */
	rs_shape_from_range(&s, &g, 0, RS_NO_MEMBER, 10, 16 + 6);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_RCW, 0), 10, 16);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_RCW, 1), 0, 6);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_RCW, 4), 0, 16);
	w = rs_shape_writes(&s, RS_WRITE_RCW, 2);
	KUNIT_EXPECT_EQ(test, rs_range_len(&w), 0U);

	/* A dead data member's rows are returned too (the engine skips them). */
	rs_shape_from_range(&s, &g, 2, 0, 2 * 64 + 32 + 3, 2 * 64 + 32 + 9);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_RECONSTRUCT, 0), 3, 9);
	expect_range(test, rs_shape_writes(&s, RS_WRITE_RECONSTRUCT, 2), 3, 9);
}

/*
 * Whether rs_shape_span_rows() is the rows of rs_shape_from_range() for
 * every write within the first three stripes of @g, in every stripe it
 * touches; the case failed at the first that is not.
 */
static bool span_rows_geom(struct kunit *test, const struct rs_geom *g,
			   struct rs_stripe_shape *s, unsigned int *checked)
{
	sector_t ls, le, end = 3 * g->stripe_data;
	struct rs_range r;
	u64 st;

	for (ls = 0; ls < end; ls++) {
		for (le = ls + 1; le <= end; le++) {
			for (st = div_u64(ls, g->stripe_data);
			     st <= div_u64(le - 1, g->stripe_data); st++) {
				rs_shape_from_range(s, g, st, RS_NO_MEMBER, ls, le);
				r = rs_shape_span_rows(g, st, ls, le);
				(*checked)++;
				if (r.start == s->rows.start && r.end == s->rows.end)
					continue;
				KUNIT_FAIL(test, "n %u chunk %u stripe %llu [%llu, %llu): %u..%u",
					   g->n, g->chunk, st, (u64)ls, (u64)le, r.start, r.end);
				return false;
			}
		}
	}
	return true;
}

/* span_rows_geom() for 3 to 6 members, chunks of 8 and 16 sectors. */
static void rs_shape_span_rows_matches(struct kunit *test)
{
	static const unsigned int chunks[] = { 8, 16 };
	struct rs_stripe_shape *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	unsigned int n, ci, checked = 0;
	struct rs_geom g;

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (n = RS_MIN_DEVS; n <= 6; n++) {
		for (ci = 0; ci < ARRAY_SIZE(chunks); ci++) {
			KUNIT_ASSERT_EQ(test, rs_geom_init(&g, n, chunks[ci]), 0);
			if (!span_rows_geom(test, &g, s, &checked))
				return;
		}
	}
	/* every stripe each write touches, n = 3..6, chunks 8 and 16 */
	KUNIT_EXPECT_EQ(test, checked, 147384U);
}

/* One member's write ranges over consecutive stripes, in stripe order. */
struct member_run {
	unsigned int ranges;	/* contiguous ranges on the member so far */
	sector_t next;		/* where the last one ends */
};

static void run_add(struct member_run *mr, const struct rs_geom *g, u64 stripe,
		    struct rs_range w)
{
	if (!rs_range_len(&w))
		return;
	if (!mr->ranges || rs_member_sector(g, stripe, w.start) != mr->next)
		mr->ranges++;
	mr->next = rs_member_sector(g, stripe, w.end);
}

/*
 * One write operation over stripes first..last, as the RAID-5 engine plans
 * it: the end stripes by the policy (count), the stripes between full, or
 * without parity when the dead member holds theirs. Returns how many members
 * write more than one contiguous range over the operation, plus how many
 * stripes between the ends are not full or would pre-read.
 */
static unsigned int check_op_span(const struct rs_geom *g, struct rs_stripe_shape *s,
				  sector_t ls, sector_t le, unsigned int dead)
{
	u64 first = div_u64(ls, g->stripe_data), last = div_u64(le - 1, g->stripe_data), st;
	struct member_run mr[RS_MAX_DEVS] = { 0 };
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	enum rs_write_mode mode, between;
	unsigned int m, bad = 0;

	for (st = first; st <= last; st++) {
		rs_shape_from_range(s, g, st, dead, ls, le);
		mode = rs_plan_write(s, RS_POLICY_COUNT, NULL, NULL);
		if (st != first && st != last) {
			/* The engine's rule for the stripes between (rs_r5_stripe). */
			between = dead != RS_NO_MEMBER && dead == s->parity ?
				  RS_WRITE_NOPARITY : RS_WRITE_FULL;
			bad += !rs_shape_is_full(s) || mode != between;
			for (m = 0; m < g->n; m++)
				bad += rs_shape_reads(s, between, m, r) != 0;
			mode = between;
		}
		for (m = 0; m < g->n; m++)
			if (m != dead)
				run_add(&mr[m], g, st, rs_shape_writes(s, mode, m));
	}
	for (m = 0; m < g->n; m++)
		bad += mr[m].ranges > 1;
	return bad;
}

/*
 * check_op_span() for writes over two and three stripes from stripe @first
 * of @g, every start in the first stripe and every end in the last, with no
 * dead member or (@deads) also each one; the case failed at the first bad.
 */
static bool op_span_first(struct kunit *test, const struct rs_geom *g, u64 first,
			  bool deads, struct rs_stripe_shape *s, unsigned int *checked)
{
	unsigned int nr, di, dead;
	sector_t a, b, ls, le;

	for (nr = 2; nr <= 3; nr++) {
		for (a = 0; a < g->stripe_data; a++) {
			for (b = 1; b <= g->stripe_data; b++) {
				ls = first * g->stripe_data + a;
				le = (first + nr - 1) * g->stripe_data + b;
				for (di = 0; di <= (deads ? g->n : 0); di++) {
					dead = deads && di < g->n ? di : RS_NO_MEMBER;
					(*checked)++;
					if (!check_op_span(g, s, ls, le, dead))
						continue;
					KUNIT_FAIL(test, "n %u chunk %u [%llu, %llu) dead %u",
						   g->n, g->chunk, (u64)ls, (u64)le, dead);
					return false;
				}
			}
		}
	}
	return true;
}

/*
 * op_span_first() from every stripe of a parity rotation: 3 to 6 members,
 * chunk 8 with no or any dead member, chunk 16 with none. Each live member's
 * writes are one contiguous range on the member (stripe s's row C is stripe
 * s + 1's row 0), and the stripes between the ends are full and pre-read
 * nothing: what bounds the bios of one step (rs_op_init()).
 */
static void rs_shape_multi_stripe_contiguous(struct kunit *test)
{
	static const unsigned int chunks[] = { 8, 16 };
	struct rs_stripe_shape *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	unsigned int n, ci, checked = 0;
	struct rs_geom g;
	u64 first;

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (n = RS_MIN_DEVS; n <= 6; n++) {
		for (ci = 0; ci < ARRAY_SIZE(chunks); ci++) {
			KUNIT_ASSERT_EQ(test, rs_geom_init(&g, n, chunks[ci]), 0);
			for (first = 0; first < n; first++)
				if (!op_span_first(test, &g, first, ci == 0, s, &checked))
					return;
		}
	}
	/* chunk 8: n * 2 * sd^2 * (n + 1), chunk 16: n * 2 * sd^2, n = 3..6 */
	KUNIT_EXPECT_EQ(test, checked, 225024U + 142336U);
}

/* run_add() counts a gap or a short range before the next stripe as a second range. */
static void rs_shape_contiguity_check_fails(struct kunit *test)
{
	const struct rs_range tail = { 4, 8 }, short_tail = { 4, 7 }, head = { 0, 3 };
	struct member_run mr;
	struct rs_geom g;

	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 3, 8), 0);
	memset(&mr, 0, sizeof(mr));
	run_add(&mr, &g, 0, tail);
	run_add(&mr, &g, 1, head);
	KUNIT_EXPECT_EQ(test, mr.ranges, 1U);
	memset(&mr, 0, sizeof(mr));
	run_add(&mr, &g, 0, tail);
	run_add(&mr, &g, 2, head);
	KUNIT_EXPECT_EQ(test, mr.ranges, 2U);
	memset(&mr, 0, sizeof(mr));
	run_add(&mr, &g, 0, short_tail);
	run_add(&mr, &g, 1, head);
	KUNIT_EXPECT_EQ(test, mr.ranges, 2U);
}

static struct kunit_case rs_shape_cases[] = {
	KUNIT_CASE(rs_shape_rmw_reads),
	KUNIT_CASE(rs_shape_rcw_reads),
	KUNIT_CASE(rs_shape_reconstruct_reads),
	KUNIT_CASE(rs_shape_full_noparity_reads),
	KUNIT_CASE(rs_shape_reads_invariants),
	KUNIT_CASE(rs_shape_reads_check_fails),
	KUNIT_CASE(rs_shape_writes_rows),
	KUNIT_CASE(rs_shape_span_rows_matches),
	KUNIT_CASE(rs_shape_multi_stripe_contiguous),
	KUNIT_CASE(rs_shape_contiguity_check_fails),
	{}
};

static struct kunit_suite rs_shape_suite = {
	.name = "rainssd-shape",
	.test_cases = rs_shape_cases,
};

kunit_test_suites(&rs_shape_suite);
