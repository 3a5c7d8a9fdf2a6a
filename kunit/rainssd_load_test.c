// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's member load signals (rainssd-load.c): in-flight
 * counts, service-time estimates, stalls, the arrival rate and the measured
 * cost of a rebuilt read.
 */
#include <kunit/test.h>
#include <linux/math.h>
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

	rs_load_issue(l, m, write, 8, &tag);
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
		rs_load_issue(l, 1, false, 8, &tags[i]);
	rs_load_issue(l, 1, true, 8, &tags[3]);
	rs_load_issue(l, 2, true, 8, &tags[4]);
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
	rs_load_issue(l, 0, false, 8, &tag);
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
	rs_load_issue(l, 0, true, 8, &tag);
	atomic64_set(&l->m[0].progress, ktime_get_ns() - 100 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].t_stall, 350U * NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, ls->m[0].t_stall, 450U * NSEC_PER_MSEC);
	rs_load_done(l, 0, &tag);

	/* stall_factor 0 turns detection off. */
	t.stall_factor = 0;
	rs_load_issue(l, 0, false, 8, &tag);
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
		rs_load_issue(l, 0, false, 8, &tag);
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
	rs_load_issue(l, 2, false, 8, &tag);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LT(test, ls->m[2].read_age, 300ULL * NSEC_PER_MSEC);
	rs_load_done(l, 2, &tag);
}

/*
 * The measured cost of a rebuilt read, averaged like the service times, and
 * not taken once it is older than probe_ms.
 */
static void rs_load_rebuild_cost(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	unsigned int i;
	u32 prev;

	/* Nothing here may go stale on a slow emulator. */
	t.probe_ms = 60000;
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

	/*
	 * No rebuilt read for ten probe_ms: the model gets no measure (xor_ns
	 * again), so one slow rebuild cannot stop it from ever rebuilding and
	 * measuring again; the status still shows the last measure. (Up to
	 * 1.10.0 a first sample of 34 ms kept a volume from rebuilding any
	 * read for the rest of a run.)
	 */
	prev = ls->t_rebuild;
	t.probe_ms = 1;		/* stale after 10 ms: the last sample was 20 ms ago */
	atomic64_set(&l->rebuild_last,
		     ktime_get_ns() - 2 * RS_REBUILD_STALE_PROBES * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->t_rebuild, 0U);
	KUNIT_EXPECT_EQ(test, rs_load_rebuild_measured(l), prev);
	/* The next sample starts the average again rather than moving the stale one. */
	rs_load_rebuilt(l, 50 * US);
	t.probe_ms = 60000;
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->t_rebuild, 50U * US);
	/* probe_ms 0: a measure never goes stale. */
	t.probe_ms = 0;
	atomic64_set(&l->rebuild_last, 0);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->t_rebuild, 50U * US);
}

/* Member devices' statistics as the test sets them. */
struct fake_devstat {
	struct rs_devcount c[4];
	bool none;
	unsigned int kicks;
};

static bool fake_devstat(void *ctx, unsigned int m, struct rs_devcount *c)
{
	struct fake_devstat *fd = ctx;

	*c = fd->c[m];
	return !fd->none;
}

/* The target's kick: counted; the test reads the statistics itself. */
static void fake_kick(void *ctx)
{
	struct fake_devstat *fd = ctx;

	fd->kicks++;
}

/*
 * Read the statistics now, as the target's work item would, as if the last
 * reading of every disk had been @ago_ns ago.
 */
static void devstat_read(struct rs_load *l, u64 ago_ns)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		l->m[i].stat_prev.t = ktime_get_ns() - ago_ns;
	set_bit(0, &l->stat_busy);
	rs_load_devstat_read(l);
}

/* Another user completes @ios requests of 8 sectors on member @m's device, @ns in all. */
static void devstat_others(struct fake_devstat *fd, unsigned int m, u64 ios, u64 ns)
{
	fd->c[m].ios += ios;
	fd->c[m].sectors += 8 * ios;
	fd->c[m].ns += ns;
}

/*
 * The others' load from the device statistics: another user keeps 16
 * requests on member 1's device, completing 8000 a second.
 */
static void rs_load_foreign(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct fake_devstat *fd = kunit_kzalloc(test, sizeof(*fd), GFP_KERNEL);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	struct rs_load_tag tag;
	unsigned int i;
	u32 before;

	KUNIT_ASSERT_NOT_NULL(test, fd);
	rs_load_set_devstat(l, fake_devstat, fake_kick, fd);
	/* Member 1 read 16 times by the target: warm, 1 ms a read. */
	for (i = 0; i < t.ewma_weight; i++)
		load_complete(l, 1, false, NSEC_PER_MSEC);
	/* The first request asked for a reading, and no other until it ran. */
	KUNIT_EXPECT_EQ(test, fd->kicks, 1U);
	load_complete(l, 0, false, NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, fd->kicks, 1U);
	/* The first reading only remembers the counters: earlier I/O is nobody's. */
	devstat_others(fd, 1, 5000, 100ULL * NSEC_PER_SEC);
	devstat_read(l, 4 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[1].foreign, 0U);
	KUNIT_EXPECT_FALSE(test, ls->m[1].watched);
	/* The reading let the next one be asked for. */
	atomic64_set(&l->stat_next, 0);
	load_complete(l, 0, false, NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, fd->kicks, 2U);

	/*
	 * 2 s later (a stale reading: the new value is taken as it is): the
	 * others completed 16000 requests of 8 sectors on member 1, their
	 * latencies summing to 32 s. 16 requests on average, one every 125 us.
	 */
	rs_load_snapshot(l, 0, ls);
	before = ls->m[1].t_read;
	devstat_others(fd, 1, 16000, 32ULL * NSEC_PER_SEC);
	devstat_read(l, 2 * NSEC_PER_SEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[1].foreign, 16U * RS_OCC_ONE - RS_OCC_ONE / 16);
	KUNIT_EXPECT_LE(test, ls->m[1].foreign, 16U * RS_OCC_ONE);
	KUNIT_EXPECT_GE(test, ls->m[1].foreign_interval, 125U * US);
	KUNIT_EXPECT_LE(test, ls->m[1].foreign_interval, 126U * US);
	KUNIT_EXPECT_TRUE(test, ls->m[1].watched);
	KUNIT_EXPECT_EQ(test, ls->m[0].foreign + ls->m[2].foreign, 0U);
	/*
	 * Not read by the target since: the device's time per completion,
	 * 2 s / 16000 = 125 us, is a read sample; the estimate of about 1 ms
	 * (more when the emulator stalled between a request's start and its
	 * completion above) moves toward it: by 1/16 of the gap (at least 1/32).
	 */
	KUNIT_EXPECT_GE(test, before, (u32)NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, ls->m[1].t_read, before - (before - 125U * US) / 32);

	/* A request of the target's now has the others' 16 before it. */
	rs_load_issue(l, 1, false, 8, &tag);
	KUNIT_EXPECT_EQ(test, tag.ahead, 16U);
	before = ls->m[1].t_read;
	/* 17 requests' worth of latency: the sample is one request's. */
	tag.start = ktime_get_ns() - 17 * before;
	KUNIT_EXPECT_FALSE(test, rs_load_done(l, 1, &tag));
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_LT(test, ls->m[1].t_read, before + before / 8);

	/*
	 * The others stop: their queue and their rate decay to none (the
	 * averages step at least 1 toward the sample, so they get there).
	 */
	for (i = 0; i < 12 * RS_FOREIGN_WEIGHT; i++)
		devstat_read(l, 4 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[1].foreign, 0U);
	KUNIT_EXPECT_EQ(test, ls->m[1].foreign_interval, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&l->m[1].foreign_rate), 0);
	KUNIT_EXPECT_FALSE(test, ls->m[1].watched);

	/* Statistics that cannot be read: none. */
	fd->none = true;
	atomic_set(&l->m[1].foreign, 16 * RS_OCC_ONE);
	devstat_read(l, 4 * NSEC_PER_MSEC);
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[1].foreign, 0U);
}

/*
 * Two members on one disk (partitions): the disk is read once, for the
 * first, and the target's I/O to both is its own. Another user there is
 * seen on both.
 */
static void rs_load_foreign_shared_disk(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct fake_devstat *fd = kunit_kzalloc(test, sizeof(*fd), GFP_KERNEL);
	struct rs_tunables t;
	struct rs_load *l = load_new(test, 3, &t);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, fd);
	rs_load_set_disk(l, 2, 0);		/* members 0 and 2: one disk */
	rs_load_set_devstat(l, fake_devstat, fake_kick, fd);
	devstat_read(l, 4 * NSEC_PER_MSEC);
	for (i = 0; i < 20; i++) {
		load_complete(l, i % 2 ? 0 : 2, false, NSEC_PER_MSEC);
		/* disk 0 counts what went to both members */
		fd->c[0].ios = atomic64_read(&l->m[0].own_ios) + atomic64_read(&l->m[2].own_ios);
		fd->c[0].sectors = atomic64_read(&l->m[0].own_sectors) +
				   atomic64_read(&l->m[2].own_sectors);
		fd->c[0].ns += NSEC_PER_MSEC;
		/* the statistics of member 2's own entry would say nothing else */
		fd->c[2].ns += 50 * NSEC_PER_MSEC;
		devstat_read(l, 4 * NSEC_PER_MSEC);
	}
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_EQ(test, ls->m[0].foreign + ls->m[1].foreign + ls->m[2].foreign, 0U);
	/*
	 * Another user on that disk: 8 requests on average. Readings 400 ms
	 * apart, so that the time the test itself takes between setting the
	 * last reading's time and reading (more than a millisecond on a busy
	 * host) moves the estimate by under 1%.
	 */
	for (i = 0; i < 2 * RS_FOREIGN_WEIGHT; i++) {
		devstat_others(fd, 0, 10000, 3200 * NSEC_PER_MSEC);
		devstat_read(l, 400 * NSEC_PER_MSEC);
	}
	rs_load_snapshot(l, 0, ls);
	KUNIT_EXPECT_GE(test, ls->m[0].foreign, 7U * RS_OCC_ONE);
	KUNIT_EXPECT_EQ(test, ls->m[2].foreign, ls->m[0].foreign);
	KUNIT_EXPECT_EQ(test, ls->m[1].foreign, 0U);
}

/*
 * Only the target on the members, with what real statistics do to its
 * counts: the device counts a completion before the target does, merges
 * the target's requests, and times them in whole jiffies; the target's
 * metadata writes are counted when sent. No others are seen, and every
 * estimate is that of a twin without the statistics.
 */
static void rs_load_foreign_none(struct kunit *test)
{
	struct rs_load_snap *ls = rs_kunit_snap_new(test);
	struct rs_load_snap *tw = rs_kunit_snap_new(test);
	struct fake_devstat *fd = kunit_kzalloc(test, sizeof(*fd), GFP_KERNEL);
	struct rs_tunables t, t2;
	struct rs_load *l = load_new(test, 3, &t);
	struct rs_load *twin = load_new(test, 3, &t2);
	unsigned int i, m;
	u64 gap = 0;

	KUNIT_ASSERT_NOT_NULL(test, fd);
	rs_load_set_devstat(l, fake_devstat, fake_kick, fd);
	devstat_read(l, 4 * NSEC_PER_MSEC);
	for (i = 0; i < 400; i++) {
		struct rs_load_tag a, b;
		u64 ago = (1 + i % 5) * NSEC_PER_MSEC, t0;

		m = i % 3;
		/* the same request on both, completed with the same latency */
		rs_load_issue(l, m, i % 4 == 0, 8 << (i % 3), &a);
		rs_load_issue(twin, m, i % 4 == 0, 8 << (i % 3), &b);
		a.start = ktime_get_ns() - ago;
		b.start = a.start;
		if (i % 7 == 3) {
			/* the device counted the completion (merged); the target has not yet */
			fd->c[m].sectors += a.sectors;
			devstat_read(l, 4 * NSEC_PER_MSEC);
		}
		t0 = ktime_get_ns();
		rs_load_done(l, m, &a);
		rs_load_done(twin, m, &b);
		/* the most the two latencies of one request can differ by */
		gap = max(gap, ktime_get_ns() - t0);
		if (i % 11 == 5)	/* a metadata write, counted when sent */
			rs_load_own_io(l, m, 8);
		if (i % 7 != 3 || i % 14 == 3) {
			/* the device catches up; every other request merged in pairs */
			u64 own_ios = atomic64_read(&l->m[m].own_ios);

			fd->c[m].sectors = atomic64_read(&l->m[m].own_sectors);
			fd->c[m].ios = own_ios - own_ios / 3;
		}
		fd->c[m].ns += (i % 2) * 4 * NSEC_PER_MSEC;	/* whole jiffies */
		devstat_read(l, 4 * NSEC_PER_MSEC);
	}
	rs_load_snapshot(l, 0, ls);
	rs_load_snapshot(twin, 0, tw);
	for (m = 0; m < 3; m++) {
		KUNIT_EXPECT_EQ(test, ls->m[m].foreign, 0U);
		KUNIT_EXPECT_EQ(test, ls->m[m].foreign_interval, 0U);
		KUNIT_EXPECT_FALSE(test, ls->m[m].watched);
		/*
		 * The twin's requests complete a little later (the clock moves
		 * between the two rs_load_done() calls, by @gap at most, more
		 * when the host is busy; the averages differ by no more than
		 * their samples do): within 1% plus that. A device-time sample
		 * standing in for a read (a 4 ms reading over some
		 * completions, weight 1/16) would move it by several percent.
		 */
		KUNIT_EXPECT_LE(test, abs((s64)ls->m[m].t_read - tw->m[m].t_read),
				(s64)(tw->m[m].t_read / 100 + gap));
		KUNIT_EXPECT_LE(test, abs((s64)ls->m[m].t_write - tw->m[m].t_write),
				(s64)(tw->m[m].t_write / 100 + gap));
		KUNIT_EXPECT_EQ(test, ls->m[m].t_stall, tw->m[m].t_stall);
		KUNIT_EXPECT_EQ(test, ls->m[m].warm, tw->m[m].warm);
	}
}

static struct kunit_case rs_load_cases[] = {
	KUNIT_CASE(rs_load_counts_and_estimates),
	KUNIT_CASE(rs_load_stalls),
	KUNIT_CASE(rs_load_arrival_rate),
	KUNIT_CASE(rs_load_rebuild_cost),
	KUNIT_CASE(rs_load_foreign),
	KUNIT_CASE(rs_load_foreign_shared_disk),
	KUNIT_CASE(rs_load_foreign_none),
	{}
};

static struct kunit_suite rs_load_suite = {
	.name = "rainssd-load",
	.test_cases = rs_load_cases,
};

kunit_test_suites(&rs_load_suite);
