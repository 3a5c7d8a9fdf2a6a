// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's member load signals (rainssd-load.c): in-flight
 * counts, service-time estimates, stalls, the arrival rate and the measured
 * cost of a rebuilt read.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd-load.h"
#include "rainssd-policy.h"
#include "rainssd_kunit.h"

static void load_free(void *l)
{
	rs_load_exit(l);
}

static struct rs_load *load_new(struct kunit *test, unsigned int n, struct rs_tunables *t)
{
	struct rs_load *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, l);
	rs_tunables_default(t);
	KUNIT_ASSERT_EQ(test, rs_load_init(l, n, t), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, load_free, l), 0);
	return l;
}

/* Complete a request issued @ago_ns ago with @ahead requests before it. */
static bool load_complete(struct rs_load *l, unsigned int m, bool write, u64 ago_ns)
{
	struct rs_load_tag tag;

	rs_load_issue(l, m, write, &tag);
	tag.start = ktime_get_ns() - ago_ns;
	return rs_load_done(l, m, &tag);
}

static void rs_load_counts_and_estimates(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_load_tag tags[5];
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 4, &t);
	unsigned int i;

	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->n, 4U);
	KUNIT_EXPECT_FALSE(test, ls->m[1].warm);
	KUNIT_EXPECT_EQ(test, ls->m[1].t_read, 0U);

	/* In-flight counts, and the requests ahead recorded at issue. */
	for (i = 0; i < 3; i++)
		rs_load_issue(l, 1, false, &tags[i]);
	rs_load_issue(l, 1, true, &tags[3]);
	rs_load_issue(l, 2, true, &tags[4]);
	KUNIT_EXPECT_EQ(test, tags[0].ahead, 0U);
	KUNIT_EXPECT_EQ(test, tags[2].ahead, 2U);
	KUNIT_EXPECT_EQ(test, tags[3].ahead, 3U);
	KUNIT_EXPECT_EQ(test, tags[4].ahead, 0U);
	rs_load_snapshot(l, BIT(3), ls);
	KUNIT_EXPECT_EQ(test, ls->m[1].reads, 3U);
	KUNIT_EXPECT_EQ(test, ls->m[1].writes, 1U);
	KUNIT_EXPECT_EQ(test, ls->m[2].writes, 1U);
	KUNIT_EXPECT_TRUE(test, ls->m[3].dead);
	KUNIT_EXPECT_FALSE(test, ls->m[1].dead);
	for (i = 0; i < 5; i++)
		rs_load_done(l, i < 4 ? 1 : 2, &tags[i]);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[1].reads + ls->m[1].writes + ls->m[2].writes, 0U);

	/*
	 * Reads of 2 ms each on member 0: warm after ewma_weight of them,
	 * with an estimate of at least 2 ms (the clock only adds).
	 */
	for (i = 0; i < t.ewma_weight; i++) {
		rs_load_snapshot(l, 0, ls);
		KUNIT_EXPECT_FALSE(test, ls->m[0].warm);
		load_complete(l, 0, false, 2 * NSEC_PER_MSEC);
	}
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_TRUE(test, ls->m[0].warm);
	KUNIT_EXPECT_GE(test, ls->m[0].t_read, 2U * NSEC_PER_MSEC);
	/* No write seen yet: writes are priced as reads. */
	KUNIT_EXPECT_EQ(test, ls->m[0].t_write, ls->m[0].t_read);
	/* One huge sample moves the average by at most 4x / weight. */
	load_complete(l, 0, false, 10ULL * NSEC_PER_SEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LT(test, ls->m[0].t_read, 3U * NSEC_PER_MSEC);
}

static void rs_load_stalls(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	struct rs_load_tag tag;
	unsigned int i;
	u64 before;

	for (i = 0; i < 2 * t.ewma_weight; i++)
		KUNIT_EXPECT_FALSE(test, load_complete(l, 0, false, 1 * NSEC_PER_MSEC));
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[0].t_stall, 0U);
	before = ls->m[0].t_read;

	/* A request in flight and nothing completed for 500 ms: stalled. */
	rs_load_issue(l, 0, false, &tag);
	atomic64_set(&l->m[0].progress, ktime_get_ns() - 500 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].t_stall, 500U * NSEC_PER_MSEC);
	/* Member 1 idle: never stalled, however long since it last worked. */
	atomic64_set(&l->m[1].progress, ktime_get_ns() - 500 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, ls->m[1].t_stall, 0U);

	/* Its completion ends the stall; the stalled latency is not a service time. */
	tag.start = ktime_get_ns() - 500 * NSEC_PER_MSEC;
	KUNIT_EXPECT_TRUE(test, rs_load_done(l, 0, &tag));
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[0].t_stall, 0U);
	KUNIT_EXPECT_LT(test, ls->m[0].t_read, before + before / 2);

	/*
	 * The next stall is expected to last about as long as the last one:
	 * 100 ms into it, about 400 ms remain (the clock adds a little to both).
	 */
	rs_load_issue(l, 0, true, &tag);
	atomic64_set(&l->m[0].progress, ktime_get_ns() - 100 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].t_stall, 350U * NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, ls->m[0].t_stall, 450U * NSEC_PER_MSEC);
	rs_load_done(l, 0, &tag);

	/* stall_factor 0 turns detection off. */
	t.stall_factor = 0;
	rs_load_issue(l, 0, false, &tag);
	atomic64_set(&l->m[0].progress, ktime_get_ns() - 500 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[0].t_stall, 0U);
	rs_load_done(l, 0, &tag);
}

static void rs_load_arrival_rate(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	struct rs_load_tag tag;
	unsigned int i;

	t.freq_window = 4;
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[0].interval, 0U);	/* unknown yet */
	/* Pretend the window began 40 ms ago: 4 arrivals in 40 ms, 10 ms apart. */
	atomic64_set(&l->m[0].win_start, ktime_get_ns() - 40 * NSEC_PER_MSEC);
	for (i = 0; i < 4; i++) {
		rs_load_issue(l, 0, false, &tag);
		rs_load_done(l, 0, &tag);
	}
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].interval, 10U * NSEC_PER_MSEC);
	KUNIT_EXPECT_LT(test, ls->m[0].interval, 20U * NSEC_PER_MSEC);
	/* No arrival since, for longer than a window: the rate decays. */
	atomic64_set(&l->m[0].win_start, ktime_get_ns() - 200 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].interval, 200U * NSEC_PER_MSEC);
	/* Time since the last read, for probing. */
	atomic64_set(&l->m[2].last_read, ktime_get_ns() - 300 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[2].read_age, 300ULL * NSEC_PER_MSEC);
	rs_load_issue(l, 2, false, &tag);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LT(test, ls->m[2].read_age, 300ULL * NSEC_PER_MSEC);
	rs_load_done(l, 2, &tag);
}

/* The measured cost of a rebuilt read, averaged like the service times. */
static void rs_load_rebuild_cost(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	unsigned int i;
	u32 prev;

	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->t_rebuild, 0U);	/* none measured yet */
	rs_load_rebuilt(l, 500 * US);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->t_rebuild, 500U * US);	/* the first sample */
	for (i = 0; i < t.ewma_weight; i++)
		rs_load_rebuilt(l, 100 * US);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LT(test, ls->t_rebuild, 300U * US);	/* moved toward 100 us */
	KUNIT_EXPECT_GT(test, ls->t_rebuild, 100U * US);
	/* One huge sample (a rebuild stuck behind a long write) moves it little. */
	prev = ls->t_rebuild;
	rs_load_rebuilt(l, 10ULL * NSEC_PER_SEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LE(test, ls->t_rebuild, prev + 3 * prev / t.ewma_weight);
}

static struct kunit_case rs_load_cases[] = {
	KUNIT_CASE(rs_load_counts_and_estimates),
	KUNIT_CASE(rs_load_stalls),
	KUNIT_CASE(rs_load_arrival_rate),
	KUNIT_CASE(rs_load_rebuild_cost),
	{}
};

static struct kunit_suite rs_load_suite = {
	.name = "rainssd-load",
	.test_cases = rs_load_cases,
};

kunit_test_suites(&rs_load_suite);
