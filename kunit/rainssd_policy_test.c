// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for dm-rainssd's decisions (rainssd-policy.c): the parity
 * update by count (rainssd-policy), the adaptive parity update of MSST'24
 * (rainssd-adaptive) and the direct or rebuilt read of TODAES'22
 * (rainssd-read), on the papers' worked examples, symmetric loads and edges.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/string.h>

#include "rainssd-geometry.h"
#include "rainssd-load.h"
#include "rainssd-policy.h"
#include "rainssd-shape.h"
#include "rainssd_kunit.h"

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
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW, NULL, NULL), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW, NULL, NULL), RS_WRITE_RMW);
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
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW, NULL, NULL), RS_WRITE_RMW);
}

static void rs_policy_count_tie_is_rmw(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* 4 members (3 data), one chunk written whole: RMW 16+16, RCW 2*16. */
	shape0(&s, 4, RS_NO_MEMBER);
	rs_shape_add_write(&s, 1, 0, 16);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), rs_rcw_prereads(&s));
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RMW);
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
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_FULL);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW, NULL, NULL), RS_WRITE_FULL);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW, NULL, NULL), RS_WRITE_FULL);
	/* Missing one row of one chunk: no longer full. */
	rs_shape_add_write(&s, 2, 0, 15);
	KUNIT_EXPECT_NE(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_FULL);
}

static void rs_policy_degraded(struct kunit *test)
{
	struct rs_stripe_shape s;

	/* Dead parity: data only, whatever the policy. */
	shape0(&s, 4, 3);
	rs_shape_add_write(&s, 0, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW, NULL, NULL), RS_WRITE_NOPARITY);

	/* Dead data member not written: RMW even when RCW is asked for. */
	shape0(&s, 4, 2);
	rs_shape_add_write(&s, 0, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RCW, NULL, NULL), RS_WRITE_RMW);

	/* Dead data member written: rebuild first. */
	shape0(&s, 4, 1);
	rs_shape_add_write(&s, 1, 0, 4);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_RMW, NULL, NULL), RS_WRITE_RECONSTRUCT);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RECONSTRUCT);
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

/* ---- the adaptive parity-update decision (MSST'24) ---- */

/* A snapshot of @n idle, warm members with service times @t_r and @t_w. */
static void snap_idle(struct rs_load_snap *ls, unsigned int n, u32 t_r, u32 t_w)
{
	unsigned int i;

	memset(ls, 0, sizeof(*ls));
	ls->n = n;
	for (i = 0; i < n; i++) {
		ls->m[i].t_read = t_r;
		ls->m[i].t_write = t_w;
		ls->m[i].warm = true;
	}
}

static void snap_q(struct rs_load_snap *ls, unsigned int i, u32 r, u32 w, u32 t_stall)
{
	ls->m[i].reads = r;
	ls->m[i].writes = w;
	ls->m[i].t_stall = t_stall;
}

/*
 * Paper 000 Fig. 5's queues on 6 members, t_R = 45 us, t_W = @t_w: member 5
 * (the parity) has 3 reads and 2 writes queued and 3.5 ms of stall to come.
 */
static void snap_fig5(struct rs_load_snap *ls, u32 t_w)
{
	snap_idle(ls, 6, 45 * US, t_w);
	snap_q(ls, 0, 1, 1, 0);
	snap_q(ls, 1, 1, 1, 0);
	snap_q(ls, 2, 0, 1, 0);
	snap_q(ls, 3, 2, 0, 0);
	snap_q(ls, 4, 1, 1, 0);
	snap_q(ls, 5, 3, 2, 3500 * US);
}

/*
 * MSST'24 Fig. 5: six channels, a one-page write to D0 on CH0 whose parity is
 * on CH5. RMW pre-reads CH0 and CH5, RCW the four others. CH5 is congested
 * (three reads queued and a garbage collection of t_E = 3.5 ms under way), CH3
 * has the most reads of the RCW set. Count picks RMW (2 pre-reads, not 4);
 * the model picks RCW. With t_W = 0 the cost is the paper's Eq. 8/9 exactly:
 *   T_RMW = max(45*2, 45*4 + 3500) + 45*(1 + 2)         = 3815 us
 *   T_RCW = max(45*2, 45*1, 45*3, 45*2) + 45*(1+1+0+1)  =  270 us
 * With t_W = 700 us the queued writes also delay the pre-reads (Linux does
 * not let reads overtake writes): 5215 us and 925 us, still RCW.
 */
static void rs_adaptive_msst_fig5(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_write_choice c;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_geom g;
	unsigned int sec[RS_MAX_DEVS];

	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 6, 8), 0);
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	KUNIT_ASSERT_EQ(test, s.parity, 5U);
	KUNIT_ASSERT_EQ(test, rs_data_member(&g, 0, 0), 0U);
	rs_shape_add_write(&s, 0, 0, 8);

	rs_prereads_per_member(&s, RS_WRITE_RMW, sec);
	KUNIT_EXPECT_EQ(test, sec[0], 8U);
	KUNIT_EXPECT_EQ(test, sec[1] + sec[2] + sec[3] + sec[4], 0U);
	KUNIT_EXPECT_EQ(test, sec[5], 8U);
	rs_prereads_per_member(&s, RS_WRITE_RCW, sec);
	KUNIT_EXPECT_EQ(test, sec[0] + sec[5], 0U);
	KUNIT_EXPECT_EQ(test, sec[1] + sec[2] + sec[3] + sec[4], 32U);

	snap_fig5(ls, 0);

	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, ls, NULL), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
	KUNIT_EXPECT_EQ(test, c.count_mode, RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.cost_rmw, 3815ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_rcw, 270ULL * US);

	snap_fig5(ls, 700 * US);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, c.cost_rmw, 5215ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_rcw, 925ULL * US);

	/* The other way round: the RCW members congested, RMW stays. */
	snap_idle(ls, 6, 45 * US, 0);
	snap_q(ls, 3, 6, 4, 0);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
	KUNIT_EXPECT_LT(test, c.cost_rmw, c.cost_rcw);

	/* A large write where count takes RCW; a stalled RCW member flips it. */
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	rs_shape_add_write(&s, 0, 0, 8);
	rs_shape_add_write(&s, 1, 0, 8);
	rs_shape_add_write(&s, 2, 0, 8);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RCW);
	snap_idle(ls, 6, 45 * US, 0);
	snap_q(ls, 4, 1, 0, 2000 * US);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.count_mode, RS_WRITE_RCW);
}

/* A random partial-stripe write on @g's stripe @stripe. */
static void random_shape(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe)
{
	unsigned int k, chunks, first, start, end;

	rs_shape_init(s, g, stripe, RS_NO_MEMBER);
	chunks = 1 + get_random_u32_below(g->n - 1);
	first = get_random_u32_below(g->n - chunks);
	for (k = first; k < first + chunks; k++) {
		start = k == first ? get_random_u32_below(g->chunk) : 0;
		end = k == first + chunks - 1 ?
		      start + 1 + get_random_u32_below(g->chunk - start) : g->chunk;
		rs_shape_add_write(s, rs_data_member(g, stripe, k), start, end);
	}
}

/*
 * With the same load on every member the model must choose exactly what
 * count chooses, for every write shape and any load.
 */
static void rs_adaptive_symmetric_is_count(struct kunit *test)
{
	static const unsigned int chunks[] = { 8, 16, 128 };
	struct rs_stripe_shape s;
	struct rs_write_choice c;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	unsigned int n, ci, iter, i, differ = 0, costed = 0;

	for (n = RS_MIN_DEVS; n <= 12; n++) {
		for (ci = 0; ci < ARRAY_SIZE(chunks); ci++) {
			struct rs_geom g;

			KUNIT_ASSERT_EQ(test, rs_geom_init(&g, n, chunks[ci]), 0);
			for (iter = 0; iter < 200; iter++) {
				u32 t_r = 1 + get_random_u32_below(5000 * US);
				u32 r = get_random_u32_below(8), w = get_random_u32_below(8);
				u32 st = iter % 3 ? 0 : get_random_u32_below(10000 * US);
				/* others' load too, the same on every member */
				u32 fo = iter % 2 ? 0 : get_random_u32_below(64 * RS_OCC_ONE);
				enum rs_write_mode count;

				random_shape(&s, &g, get_random_u32_below(1000));
				snap_idle(ls, n, t_r, 1 + get_random_u32_below(5000 * US));
				for (i = 0; i < n; i++) {
					snap_q(ls, i, r, w, st);
					ls->m[i].foreign = fo;
				}
				count = rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL);
				if (rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c) != count)
					differ++;
				costed += c.why == RS_WHY_COST;
			}
		}
	}
	KUNIT_EXPECT_EQ(test, differ, 0U);
	/* Not all ties: the costs did decide, and agreed with count. */
	KUNIT_EXPECT_GT(test, costed, 1000U);
}

static void rs_adaptive_edges(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_write_choice c;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_geom g;

	/*
	 * N = 3: stripe 0 has parity on 2, data on 0 and 1. The last row of
	 * chunk 0 and the first of chunk 1: RMW reads 1 + 1 + 16 sectors on
	 * all three, RCW 15 + 15 on 0 and 1. Count says RMW.
	 */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 3, 16), 0);
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	rs_shape_add_write(&s, 0, 15, 16);
	rs_shape_add_write(&s, 1, 0, 1);
	KUNIT_EXPECT_EQ(test, rs_rmw_prereads(&s), 18U);
	KUNIT_EXPECT_EQ(test, rs_rcw_prereads(&s), 30U);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_COUNT, NULL, NULL), RS_WRITE_RMW);
	snap_idle(ls, 3, 100 * US, 100 * US);
	snap_q(ls, 2, 4, 0, 0);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, c.cost_rmw, 500ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_rcw, 100ULL * US);

	/* Zero latency estimates: every cost is 0, a tie, so count. */
	snap_idle(ls, 3, 0, 0);
	snap_q(ls, 2, 4, 3, 0);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_TIE);

	/* A member without estimates yet: count, and said so. */
	snap_idle(ls, 3, 100 * US, 100 * US);
	snap_q(ls, 2, 4, 0, 0);
	ls->m[1].warm = false;
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COLD);

	/* A dead member: the degraded method, whatever the load. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 16), 0);
	rs_shape_init(&s, &g, 0, 1);
	rs_shape_add_write(&s, 0, 0, 4);
	snap_idle(ls, 4, 100 * US, 100 * US);
	snap_q(ls, 3, 50, 50, 0);
	ls->m[1].dead = true;
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_FIXED);

	/* The largest queues and times the snapshot can hold do not overflow. */
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, RS_MAX_DEVS, RS_MAX_CHUNK), 0);
	rs_shape_init(&s, &g, 0, RS_NO_MEMBER);
	rs_shape_add_write(&s, rs_data_member(&g, 0, 0), 0, 1);
	snap_idle(ls, RS_MAX_DEVS, U32_MAX, U32_MAX);
	for (unsigned int i = 0; i < RS_MAX_DEVS; i++) {
		snap_q(ls, i, RS_SNAP_MAX_QUEUE, RS_SNAP_MAX_QUEUE, U32_MAX);
		ls->m[i].foreign = RS_OCC_MAX;
		ls->m[i].foreign_interval = 1;
	}
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_LT(test, c.cost_rmw, c.cost_rcw);
	KUNIT_EXPECT_GT(test, c.cost_rmw, (u64)U32_MAX * RS_SNAP_MAX_QUEUE);
}

/*
 * A write that count does by RMW: its pre-reads are priced with the others'
 * queue on their members. Stripe 0 of 4 members: data on 0, 1, 2, parity on
 * 3; a write to member 1 pre-reads 1 and 3 by RMW, 0 and 2 by RCW. Others
 * keep 16 requests on member 1 (250 us each): RMW costs 250 * 17 = 4250 us,
 * RCW 250 us, so RCW; the same load on member 2 leaves RMW.
 */
static void rs_adaptive_foreign_queue(struct kunit *test)
{
	struct rs_stripe_shape s;
	struct rs_write_choice c;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	shape0(&s, 4, RS_NO_MEMBER);
	rs_shape_add_write(&s, 1, 0, 8);
	snap_idle(ls, 4, 250 * US, 250 * US);
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_TIE);
	ls->m[1].foreign = 16 * RS_OCC_ONE;
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RCW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
	KUNIT_EXPECT_EQ(test, c.cost_rmw, 4250ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_rcw, 250ULL * US);
	ls->m[1].foreign = 0;
	ls->m[2].foreign = 16 * RS_OCC_ONE;
	KUNIT_EXPECT_EQ(test, rs_plan_write(&s, RS_POLICY_ADAPTIVE, ls, &c), RS_WRITE_RMW);
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
	KUNIT_EXPECT_EQ(test, c.cost_rcw, 4250ULL * US);
}

static struct kunit_case rs_adaptive_cases[] = {
	KUNIT_CASE(rs_adaptive_msst_fig5),
	KUNIT_CASE(rs_adaptive_symmetric_is_count),
	KUNIT_CASE(rs_adaptive_edges),
	KUNIT_CASE(rs_adaptive_foreign_queue),
	{}
};

static struct kunit_suite rs_adaptive_suite = {
	.name = "rainssd-adaptive",
	.test_cases = rs_adaptive_cases,
};

/* ---- the read decision (TODAES'22) ---- */

static void tun_default(struct rs_tunables *t)
{
	rs_tunables_default(t);
	t->xor_ns = 19 * US;	/* the paper's t_xor */
}

/*
 * TODAES'22 Fig. 4: a stripe of D0 (CH0), D1 (CH1) and P (CH2); R_D0 targets
 * CH0, which has 2 reads and 3 writes queued and sees a request every
 * 500 us; CH1 has a read queued, CH2 a write. t_rd = 45 us, t_wr = 700 us,
 * t_xor = 19 us:
 *   T_A = (2*45 + 3*700) * (1 + 45/500) + 45  = 2431.757 us (t_rd*f in 1/1024)
 *   T_B = 19 + max(45 + 45, 700 + 45) = 764 us
 * (the paper's T_B, 19 + 45 * 2 = 109 us, is for reads put at the head of
 * CH1's and CH2's queues; here they wait at the tail, so the slower one's
 * wait and service count instead), so the read is rebuilt from CH1 and CH2.
 */
static void rs_read_todaes_fig4(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	tun_default(&t);
	snap_idle(ls, 3, 45 * US, 700 * US);
	snap_q(ls, 0, 2, 3, 0);
	ls->m[0].interval = 500 * US;
	snap_q(ls, 1, 1, 0, 0);
	snap_q(ls, 2, 0, 1, 0);
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
	KUNIT_EXPECT_EQ(test, c.cost_direct, 2431757ULL);
	KUNIT_EXPECT_EQ(test, c.cost_recon, 764ULL * US);

	/* The same queues on the other two members: read CH0 directly. */
	snap_q(ls, 0, 0, 0, 0);
	snap_q(ls, 1, 2, 3, 0);
	snap_q(ls, 2, 2, 3, 0);
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 45ULL * US);
}

/*
 * Load the target did not cause: CH0 has nothing of ours queued but answers
 * 17 times slower (another user keeps 16 requests on it). Its service time
 * estimate carries that, and the read goes around it.
 */
static void rs_read_foreign_load(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	tun_default(&t);
	snap_idle(ls, 8, 1000 * US, 1000 * US);
	ls->m[0].t_read = 17000 * US;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, NULL));
	/*
	 * The others' queues (3 ms each) delay the rebuilt read, queued behind
	 * them, but no request already there: 17 ms direct against the
	 * slowest other (3 + 1 ms) plus t_xor, rebuilt.
	 */
	for (unsigned int i = 1; i < 8; i++)
		snap_q(ls, i, 2, 1, 0);
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 17000ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_recon, 4019ULL * US);
	/*
	 * Requests arriving on them every 1.5 ms (t_R f = 2/3): each inserted
	 * read delays the arrivals of its 3 ms wait by 2 ms, 7 * 2 ms in all
	 * (t_R f in 1/1024: 1998.05 us each), against rebuilding.
	 */
	for (unsigned int i = 1; i < 8; i++)
		ls->m[i].interval = 1500 * US;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 4019ULL * US + 7 * 1998046ULL);
	/* Without the load terms only response times count. */
	t.recon_load_pct = 0;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 4019ULL * US);
	t.recon_load_pct = 100;
	/* A stalled target member: rebuilt. */
	snap_idle(ls, 8, 1000 * US, 1000 * US);
	snap_q(ls, 0, 1, 0, 50000 * US);
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
}

/*
 * Others' load that the member's device statistics show (issue 20's case):
 * 4 members whose per-request time is 250 us (1 ms, 4 at a time); another
 * user keeps 16 requests on member 2's device. The target has nothing
 * queued there, but a read of it waits for those 16:
 *   T_A = 250 * 16 + 250 = 4250 us,  T_B = 19 + 250 = 269 us.
 * Without the statistics (foreign 0) the member looks idle: direct.
 */
static void rs_read_foreign_queue(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	tun_default(&t);
	snap_idle(ls, 4, 250 * US, 250 * US);
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 250ULL * US);
	ls->m[2].foreign = 16 * RS_OCC_ONE;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 4250ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_recon, 269ULL * US);
	/* A quarter of a request is 62.5 us. */
	ls->m[2].foreign = RS_OCC_ONE / 4;
	rs_plan_read(ls, 2, &t, &c);
	KUNIT_EXPECT_EQ(test, c.cost_direct, 312500ULL);

	/*
	 * Their arrivals count in the load term: one every 500 us on member 2
	 * (t_R f = 1/2) makes T_A = 4000 * (1 + 1/2) + 250 = 6250 us.
	 */
	ls->m[2].foreign = 16 * RS_OCC_ONE;
	ls->m[2].foreign_interval = 500 * US;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 6250ULL * US);
	/* ... with the target's own, one every 500 us too: 1/(1/500 + 1/500). */
	ls->m[2].interval = 500 * US;
	rs_plan_read(ls, 2, &t, &c);
	KUNIT_EXPECT_EQ(test, c.cost_direct, 8250ULL * US);

	/*
	 * On the other members others' load delays the rebuilt read: 8
	 * requests of theirs on each of 0, 1 and 3 and the target's 3 reads
	 * there, T_B = 19 + 2000 + 750 + 250 = 3019 us < T_A = 4250 us. Their
	 * arrivals, one every 500 us on each (t_R f = 1/2), count against it:
	 * each inserted read delays those of its 2750 us wait by 1375 us,
	 * T_B = 3019 + 3 * 1375 = 7144 us > T_A.
	 */
	snap_idle(ls, 4, 250 * US, 250 * US);
	ls->m[2].foreign = 16 * RS_OCC_ONE;
	for (unsigned int i = 0; i < 4; i++) {
		if (i == 2)
			continue;
		snap_q(ls, i, 3, 0, 0);
		ls->m[i].foreign = 8 * RS_OCC_ONE;
	}
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 4250ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_recon, 3019ULL * US);
	for (unsigned int i = 0; i < 4; i++)
		if (i != 2)
			ls->m[i].foreign_interval = 500 * US;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 7144ULL * US);

	/*
	 * Not read for probe_ms: probed, unless its statistics show the
	 * others' I/O on it now (watched), which keeps its estimates current.
	 */
	snap_idle(ls, 4, 250 * US, 250 * US);
	ls->m[2].foreign = 16 * RS_OCC_ONE;
	ls->m[2].read_age = 10ULL * NSEC_PER_SEC;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_PROBE);
	ls->m[2].watched = true;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COST);
}

/* Equal load everywhere, below saturation: always the direct read. */
static void rs_read_symmetric_is_direct(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	unsigned int n, iter, i, recon = 0;

	tun_default(&t);
	for (n = RS_MIN_DEVS; n <= 16; n++) {
		for (iter = 0; iter < 200; iter++) {
			u32 t_r = 1 + get_random_u32_below(5000 * US);
			u32 r = get_random_u32_below(16), w = get_random_u32_below(16);
			u32 st = iter % 4 ? 0 : get_random_u32_below(10000 * US);
			/* utilisation t_R * f below 1, or unknown */
			u32 gap = iter % 5 ? t_r + 1 + get_random_u32_below(10 * t_r) : 0;

			/* others' load too, the same on every member */
			u32 fo = iter % 2 ? 0 : get_random_u32_below(64 * RS_OCC_ONE);
			u32 fgap = iter % 3 ? 0 : t_r + 1 + get_random_u32_below(10 * t_r);

			snap_idle(ls, n, t_r, 1 + get_random_u32_below(5000 * US));
			for (i = 0; i < n; i++) {
				snap_q(ls, i, r, w, st);
				ls->m[i].interval = gap;
				ls->m[i].foreign = fo;
				ls->m[i].foreign_interval = fgap;
			}
			/* whatever weight the load terms have */
			t.recon_load_pct = get_random_u32_below(1001);
			recon += rs_plan_read(ls, get_random_u32_below(n), &t, &c);
		}
	}
	KUNIT_EXPECT_EQ(test, recon, 0U);
}

static void rs_read_edges(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	tun_default(&t);
	snap_idle(ls, 4, 1000 * US, 1000 * US);
	snap_q(ls, 2, 10, 10, 0);
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));

	/* A dead member anywhere: nothing to rebuild from, read directly. */
	ls->m[0].dead = true;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_DEGRADED);
	ls->m[0].dead = false;

	/* No estimates yet anywhere in the stripe: direct. */
	ls->m[3].warm = false;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_COLD);
	ls->m[3].warm = true;

	/* Not read for probe_ms: read it directly to refresh its estimates. */
	ls->m[2].read_age = 100ULL * NSEC_PER_MSEC;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.why, RS_WHY_PROBE);
	t.probe_ms = 0;		/* probing off */
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));

	/* Zero latency estimates and no t_xor: equal costs, direct. */
	snap_idle(ls, 4, 0, 0);
	snap_q(ls, 2, 10, 10, 0);
	t.xor_ns = 0;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, c.cost_recon);

	/* N = 3 and a saturated member (t_R * f capped at 16). */
	tun_default(&t);
	snap_idle(ls, 3, U32_MAX, U32_MAX);
	snap_q(ls, 0, RS_SNAP_MAX_QUEUE, RS_SNAP_MAX_QUEUE, U32_MAX);
	ls->m[0].interval = 1;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_GT(test, c.cost_direct, 16ULL * U32_MAX * RS_SNAP_MAX_QUEUE);
	/* Every member that full, with the largest weight: no overflow. */
	snap_idle(ls, RS_MAX_DEVS, U32_MAX, U32_MAX);
	for (unsigned int i = 0; i < RS_MAX_DEVS; i++) {
		snap_q(ls, i, RS_SNAP_MAX_QUEUE, RS_SNAP_MAX_QUEUE, U32_MAX);
		ls->m[i].interval = 1;
		ls->m[i].foreign = RS_OCC_MAX;
		ls->m[i].foreign_interval = 1;
	}
	t.recon_load_pct = 1000;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 0, &t, &c));
	KUNIT_EXPECT_GT(test, c.cost_recon, 10 * c.cost_direct);
}

/*
 * t_xor as measured: a rebuilt read that costs more beyond its member reads
 * than the direct read would save is not worth it. Member 2 answers in
 * 3 ms, the others in 1 ms, all idle: T_A = 3 ms, T_B = t_xor + 1 ms.
 */
static void rs_read_measured_xor(struct kunit *test)
{
	struct rs_read_choice c;
	struct rs_tunables t;
	struct rs_load_snap *ls = rs_kunit_snap_new(test);

	tun_default(&t);
	snap_idle(ls, 4, 1000 * US, 1000 * US);
	ls->m[2].t_read = 3000 * US;
	/* Nothing measured yet: xor_ns (19 us). */
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_direct, 3000ULL * US);
	KUNIT_EXPECT_EQ(test, c.cost_recon, 1019ULL * US);
	/* Measured below xor_ns: xor_ns is the floor. */
	ls->t_rebuild = 5 * US;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 1019ULL * US);
	/* Measured 1.5 ms: still worth 0.5 ms. */
	ls->t_rebuild = 1500 * US;
	KUNIT_EXPECT_TRUE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 2500ULL * US);
	/* Measured 2.5 ms: the rebuild would cost more than it saves. */
	ls->t_rebuild = 2500 * US;
	KUNIT_EXPECT_FALSE(test, rs_plan_read(ls, 2, &t, &c));
	KUNIT_EXPECT_EQ(test, c.cost_recon, 3500ULL * US);
}

static void rs_read_policy_names(struct kunit *test)
{
	enum rs_read_policy p;
	enum rs_policy wp;

	KUNIT_EXPECT_EQ(test, rs_read_policy_parse("adaptive", &p), 0);
	KUNIT_EXPECT_EQ(test, p, RS_READ_ADAPTIVE);
	KUNIT_EXPECT_EQ(test, rs_read_policy_parse("direct", &p), 0);
	KUNIT_EXPECT_EQ(test, p, RS_READ_DIRECT);
	KUNIT_EXPECT_EQ(test, rs_read_policy_parse("reconstruct", &p), 0);
	KUNIT_EXPECT_EQ(test, p, RS_READ_RECONSTRUCT);
	KUNIT_EXPECT_STREQ(test, rs_read_policy_name(RS_READ_ADAPTIVE), "adaptive");
	KUNIT_EXPECT_EQ(test, rs_read_policy_parse("count", &p), -EINVAL);
	KUNIT_EXPECT_EQ(test, rs_policy_parse("adaptive", &wp), 0);
	KUNIT_EXPECT_EQ(test, wp, RS_POLICY_ADAPTIVE);
}

static struct kunit_case rs_read_cases[] = {
	KUNIT_CASE(rs_read_todaes_fig4),
	KUNIT_CASE(rs_read_foreign_load),
	KUNIT_CASE(rs_read_foreign_queue),
	KUNIT_CASE(rs_read_symmetric_is_direct),
	KUNIT_CASE(rs_read_edges),
	KUNIT_CASE(rs_read_measured_xor),
	KUNIT_CASE(rs_read_policy_names),
	{}
};

static struct kunit_suite rs_read_suite = {
	.name = "rainssd-read",
	.test_cases = rs_read_cases,
};

/* ---- the others' load, from a member device's I/O statistics ---- */

/*
 * The others' load between two readings of a device's statistics, by
 * Little's law, with the sectors deciding whether anyone else was there
 * (only new highs of the device's sectors less the target's count).
 */
static void rs_foreign_known_answer(struct kunit *test)
{
	const struct rs_devstat a = {
		.t = 1000 * NSEC_PER_MSEC, .ios = 5000, .sectors = 40000, .ns = 7ULL * NSEC_PER_SEC,
		.own_ios = 3000, .own_sectors = 24000,
	};
	const s64 base0 = 16000;	/* a's sectors less the target's */
	struct rs_devstat b = a, c;
	struct rs_foreign f;
	s64 base = base0;

	/*
	 * 4 ms: 20 completions, 4 of them the target's; 68 ms of latency in
	 * all, so 17 requests on average, 16/20 of them the others': 13.6.
	 */
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 20;
	b.sectors += 160;
	b.ns += 68 * NSEC_PER_MSEC;
	b.own_ios += 4;
	b.own_sectors += 32;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ, 17U * RS_OCC_ONE * 16 / 20);
	KUNIT_EXPECT_EQ(test, f.ios, 16U);
	KUNIT_EXPECT_EQ(test, f.interval, 250U * US);
	KUNIT_EXPECT_EQ(test, f.svc, 200U * US);	/* busy all along: 4 ms / 20 */
	KUNIT_EXPECT_EQ(test, base, base0 + 128);

	/* A device idle half the time: its time per completion is the mean latency. */
	base = base0;
	b = a;
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 2;
	b.sectors += 16;
	b.ns += 2 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.svc, 1000U * US);
	KUNIT_EXPECT_EQ(test, f.occ, RS_OCC_ONE / 2);
	KUNIT_EXPECT_EQ(test, f.interval, 2000U * US);

	/* Only the target's I/O: nothing of the others, whatever the latency. */
	base = base0;
	b = a;
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 4;
	b.own_ios += 4;
	b.sectors += 32;
	b.own_sectors += 32;
	b.ns += 5 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios + f.interval, 0U);
	KUNIT_EXPECT_EQ(test, f.svc, 1000U * US);	/* busy all along: 4 ms / 4 */
	/* ... split by the device in twice as many requests: the same sectors, none either. */
	b.ios += 4;
	b.ns += 5 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios + f.interval, 0U);
	/* ... merged in fewer requests than the target sent: none. */
	b = a;
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 2;
	b.own_ios += 4;
	b.sectors += 32;
	b.own_sectors += 32;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios + f.interval, 0U);
	KUNIT_EXPECT_EQ(test, base, base0);

	/*
	 * The wobble: the device counts 4 of the target's requests before the
	 * target does (taken for the others' once, as a new high; the
	 * averages of rainssd-load.c weigh one reading by 1/8), then the
	 * target catches up (none), then again the same (not a new high: none).
	 */
	b = a;
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 4;
	b.sectors += 32;
	b.ns += 4 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.ios, 4U);
	KUNIT_EXPECT_EQ(test, base, base0 + 32);
	c = b;
	c.t += 4 * NSEC_PER_MSEC;
	c.own_ios += 4;
	c.own_sectors += 32;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&b, &c, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios, 0U);
	b = c;
	c.t += 4 * NSEC_PER_MSEC;
	c.ios += 4;
	c.sectors += 32;
	c.ns += 4 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&b, &c, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios, 0U);
	/* A metadata write counted by the target first: below the high, none. */
	b = c;
	c.t += 4 * NSEC_PER_MSEC;
	c.own_ios += 1;
	c.own_sectors += 8;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&b, &c, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios, 0U);
	KUNIT_EXPECT_EQ(test, base, base0 + 32);

	/* Others' sectors in fewer requests than the target's: at least one is theirs. */
	base = base0;
	b = a;
	b.t += 4 * NSEC_PER_MSEC;
	b.ios += 3;
	b.sectors += 40;
	b.ns += 6 * NSEC_PER_MSEC;
	b.own_ios += 4;
	b.own_sectors += 32;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.ios, 1U);
	KUNIT_EXPECT_EQ(test, f.occ, 3U * RS_OCC_ONE / 2 / 3);

	/* Far more than the snapshot holds: capped. */
	base = base0;
	b = a;
	b.t += 1 * NSEC_PER_MSEC;
	b.ios += 1;
	b.sectors += 8;
	b.ns += 20 * NSEC_PER_SEC;
	KUNIT_EXPECT_TRUE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ, RS_OCC_MAX);

	/* Readings that cannot be compared; the high stays. */
	base = base0;
	b = a;
	KUNIT_EXPECT_FALSE(test, rs_foreign_estimate(&a, &b, &base, &f));	/* same time */
	b.t += NSEC_PER_MSEC;
	b.ios -= 1;							/* went back */
	KUNIT_EXPECT_FALSE(test, rs_foreign_estimate(&a, &b, &base, &f));
	b = a;
	b.t += NSEC_PER_MSEC;
	b.own_sectors -= 1;
	KUNIT_EXPECT_FALSE(test, rs_foreign_estimate(&a, &b, &base, &f));
	b = a;
	b.t += 1ULL << 41;						/* 37 minutes */
	b.sectors += 8;
	KUNIT_EXPECT_FALSE(test, rs_foreign_estimate(&a, &b, &base, &f));
	KUNIT_EXPECT_EQ(test, f.occ + f.ios + f.interval + f.svc, 0U);
	KUNIT_EXPECT_EQ(test, base, base0);
}

static void rs_foreign_interval_merge(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rs_interval_merge(0, 0), 0U);
	KUNIT_EXPECT_EQ(test, rs_interval_merge(0, 700), 700U);
	KUNIT_EXPECT_EQ(test, rs_interval_merge(700, 0), 700U);
	KUNIT_EXPECT_EQ(test, rs_interval_merge(300, 600), 200U);
	KUNIT_EXPECT_EQ(test, rs_interval_merge(1, 1), 1U);
	KUNIT_EXPECT_EQ(test, rs_interval_merge(U32_MAX, U32_MAX), U32_MAX / 2);
}

static struct kunit_case rs_foreign_cases[] = {
	KUNIT_CASE(rs_foreign_known_answer),
	KUNIT_CASE(rs_foreign_interval_merge),
	{}
};

static struct kunit_suite rs_foreign_suite = {
	.name = "rainssd-foreign",
	.test_cases = rs_foreign_cases,
};

kunit_test_suites(&rs_policy_suite, &rs_adaptive_suite, &rs_read_suite, &rs_foreign_suite);
