// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd member load signals (see rainssd-load.h).
 */
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd-load.h"

/* A sample may move an average by at most this factor of it at once. */
#define RS_SAMPLE_CAP	4

int rs_load_init(struct rs_load *l, unsigned int n, const struct rs_tunables *tun)
{
	u64 now = ktime_get_ns();
	unsigned int i;

	l->n = n;
	l->tun = tun;
	l->m = kcalloc(n, sizeof(*l->m), GFP_KERNEL);
	if (!l->m)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		atomic64_set(&l->m[i].progress, now);
		atomic64_set(&l->m[i].last_read, now);
		atomic64_set(&l->m[i].win_start, now);
		l->m[i].disk = i;
	}
	return 0;
}

void rs_load_exit(struct rs_load *l)
{
	kfree(l->m);
	l->m = NULL;
}

/*
 * Read the members' device statistics through @fn from now on, asking for
 * each reading through @kick (@ctx is their first argument); before the
 * target's first request.
 */
void rs_load_set_devstat(struct rs_load *l, rs_devstat_fn fn, rs_devstat_kick_fn kick,
			 void *ctx)
{
	l->devstat_ctx = ctx;
	l->devstat_kick = kick;
	l->devstat = fn;
}

/*
 * Member @member is on the same disk as member @first (the first such
 * member, @first <= @member): one reading of that disk's statistics stands
 * for both, compared with the target's I/O to both. Before the first request.
 */
void rs_load_set_disk(struct rs_load *l, unsigned int member, unsigned int first)
{
	l->m[member].disk = first;
}

/*
 * I/O the target sent to @member that the load signals do not time (its
 * metadata: superblocks, bitmap, log): counted as the target's own where
 * the device statistics are compared with what the target did.
 */
void rs_load_own_io(struct rs_load *l, unsigned int member, unsigned int sectors)
{
	struct rs_member_load *ml = &l->m[member];

	atomic64_inc(&ml->own_ios);
	atomic64_add(sectors, &ml->own_sectors);
}

/* now - then, or 0 when another CPU stored a later time than our now. */
static u64 rs_since(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

static unsigned int rs_inflight(struct rs_member_load *ml)
{
	return atomic_read(&ml->inflight[0]) + atomic_read(&ml->inflight[1]);
}

/* avg += (sample - avg) / weight, with the sample capped at RS_SAMPLE_CAP * avg. */
static void rs_ewma(atomic64_t *avg, u64 sample, unsigned int weight, bool first)
{
	s64 old = atomic64_read(avg);

	if (first || !old) {
		atomic64_set(avg, sample);
		return;
	}
	sample = min_t(u64, sample, (u64)old * RS_SAMPLE_CAP);
	atomic64_set(avg, old + div_s64((s64)sample - old, weight));
}

/*
 * avg += (sample - avg) / weight, or avg = sample for the @first; a step
 * of at least 1 toward the sample, so that the average reaches it.
 */
static void rs_avg32(atomic_t *avg, u32 sample, unsigned int weight, bool first)
{
	s64 old = (u32)atomic_read(avg), d = (s64)sample - old, step;

	if (first) {
		atomic_set(avg, sample);
		return;
	}
	step = div_s64(d, weight);
	if (!step && d)
		step = d > 0 ? 1 : -1;
	atomic_set(avg, old + step);
}

/* The others' requests on member @ml's device now, below RS_FOREIGN_MIN none. */
static u32 rs_foreign_now(struct rs_member_load *ml)
{
	u32 occ = (u32)atomic_read(&ml->foreign);

	return occ >= RS_FOREIGN_MIN ? min(occ, RS_OCC_MAX) : 0;
}

/*
 * Compare a new reading of the statistics of the disk that member @r (the
 * first on it) is on with the last one: the others' occupancy and
 * completion rate, for every member on that disk, and, for each of them
 * the target completed no read on since, the device's time per completion
 * as a read service-time sample.
 */
static void rs_devstat_disk(struct rs_load *l, unsigned int r)
{
	unsigned int weight = max(1U, READ_ONCE(l->tun->ewma_weight));
	struct rs_member_load *head = &l->m[r];
	struct rs_devcount c;
	struct rs_devstat cur = {};
	struct rs_foreign f;
	unsigned int i;
	u32 rate = 0;
	bool ok, first = false;

	/* The target's first: a completion it counts later is never the others'. */
	for (i = r; i < l->n; i++) {
		if (l->m[i].disk != r)
			continue;
		cur.own_ios += atomic64_read(&l->m[i].own_ios);
		cur.own_sectors += atomic64_read(&l->m[i].own_sectors);
	}
	ok = l->devstat(l->devstat_ctx, r, &c);
	cur.t = ktime_get_ns();
	cur.ios = c.ios;
	cur.sectors = c.sectors;
	cur.ns = c.ns;
	memset(&f, 0, sizeof(f));
	if (!ok) {
		head->stat_ok = false;
	} else if (!head->stat_ok) {
		head->stat_base = (s64)(cur.sectors - cur.own_sectors);
		head->stat_ok = true;
		ok = false;
	} else {
		ok = rs_foreign_estimate(&head->stat_prev, &cur, &head->stat_base, &f);
		first = cur.t - head->stat_prev.t > RS_DEVSTAT_STALE_NS;
		if (f.ios)
			rate = min_t(u64, div64_u64((u64)f.ios * NSEC_PER_SEC,
						    cur.t - head->stat_prev.t), INT_MAX);
	}
	head->stat_prev = cur;
	for (i = r; i < l->n; i++) {
		struct rs_member_load *ml = &l->m[i];
		u64 reads = atomic64_read(&ml->reads_done);

		if (ml->disk != r)
			continue;
		if (!head->stat_ok) {
			atomic_set(&ml->foreign, 0);
			atomic_set(&ml->foreign_rate, 0);
		} else if (ok) {
			rs_avg32(&ml->foreign, f.occ, RS_FOREIGN_WEIGHT, first);
			rs_avg32(&ml->foreign_rate, rate, RS_FOREIGN_WEIGHT, first);
			/*
			 * Only once the others' load is more than a passing
			 * reading (their average is over RS_FOREIGN_MIN) does
			 * the device's time stand in for the target's reads.
			 */
			if (f.ios) {
				atomic64_set(&ml->foreign_seen, cur.t);
				if (rs_foreign_now(ml) && reads == ml->stat_reads && reads && f.svc)
					rs_ewma(&ml->svc[0], f.svc, weight, false);
			}
		}
		ml->stat_reads = reads;
	}
}

/*
 * Read the statistics of every disk the members are on, once each, and let
 * the next reading be asked for. Process context (the target's work item);
 * never sleeps.
 */
void rs_load_devstat_read(struct rs_load *l)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->m[i].disk == i)
			rs_devstat_disk(l, i);
	clear_bit_unlock(0, &l->stat_busy);
}

/*
 * Ask for a reading of the statistics if RS_DEVSTAT_PERIOD_NS has passed
 * since the last one was asked for and none is pending.
 */
static void rs_devstat_poll(struct rs_load *l, u64 now)
{
	if (!l->devstat || now < (u64)atomic64_read(&l->stat_next))
		return;
	if (test_and_set_bit_lock(0, &l->stat_busy))
		return;
	atomic64_set(&l->stat_next, now + RS_DEVSTAT_PERIOD_NS);
	l->devstat_kick(l->devstat_ctx);
}

/*
 * How long a member with requests in flight may go without a completion of
 * the target's before it is stalled: stall_factor service times, and as
 * many more times that as the others have requests on it (each completion
 * of the target's then waits for theirs too).
 */
static u64 rs_stall_thr(u64 svc, unsigned int factor, u32 foreign)
{
	/* < 2^32 * 2^10 * 2^24 / 2^10: the quotient fits (a divide would trap). */
	return mul_u64_u32_div(min_t(u64, svc, U32_MAX) * min(factor, 1024U),
			       RS_OCC_ONE + min(foreign, RS_OCC_MAX), RS_OCC_ONE);
}

/* Record that the target issues a request of @sectors to @member now. */
void rs_load_issue(struct rs_load *l, unsigned int member, bool write, unsigned int sectors,
		   struct rs_load_tag *tag)
{
	struct rs_member_load *ml = &l->m[member];
	unsigned int window = READ_ONCE(l->tun->freq_window);
	u64 now = ktime_get_ns();
	unsigned int own;

	rs_devstat_poll(l, now);
	tag->start = now;
	tag->write = write;
	tag->sectors = sectors;
	own = atomic_inc_return(&ml->inflight[write]) - 1 + atomic_read(&ml->inflight[!write]);
	tag->ahead = own + (u32)((rs_foreign_now(ml) + RS_OCC_ONE / 2) >> RS_OCC_SHIFT);
	if (!own)
		atomic64_set(&ml->progress, now);	/* an idle member is not stalled */
	if (!write)
		atomic64_set(&ml->last_read, now);
	if ((unsigned int)atomic_inc_return(&ml->arrivals) % window == 0) {
		atomic64_set(&ml->win_len, rs_since(now, atomic64_read(&ml->win_start)));
		atomic64_set(&ml->win_start, now);
	}
}

/*
 * Record the completion of the request @tag on @member. Returns true when
 * the completion ends a stall, for the caller's statistics.
 */
bool rs_load_done(struct rs_load *l, unsigned int member, const struct rs_load_tag *tag)
{
	struct rs_member_load *ml = &l->m[member];
	unsigned int weight = max(1U, READ_ONCE(l->tun->ewma_weight));
	unsigned int factor = READ_ONCE(l->tun->stall_factor);
	u64 now = ktime_get_ns();
	u64 lat = rs_since(now, tag->start);
	int n = atomic_read(&ml->samples[tag->write]);
	u64 svc, gap, thr;
	bool stall = false;

	svc = max(atomic64_read(&ml->svc[0]), atomic64_read(&ml->svc[1]));
	gap = rs_since(now, atomic64_xchg(&ml->progress, now));
	thr = rs_stall_thr(svc, factor, rs_foreign_now(ml));
	if (svc && factor && gap > thr && n >= weight) {
		rs_ewma(&ml->stall_avg, gap, 4, false);
		atomic64_set(&ml->stall_end, now);
		stall = true;
	} else if (tag->start >= atomic64_read(&ml->stall_end)) {
		/* Requests caught in a stall say nothing about the service time. */
		rs_ewma(&ml->svc[tag->write], div_u64(lat, tag->ahead + 1), weight, !n);
	}
	if (n < INT_MAX)
		atomic_inc(&ml->samples[tag->write]);
	if (!tag->write)
		atomic64_inc(&ml->reads_done);
	atomic64_inc(&ml->own_ios);
	atomic64_add(tag->sectors, &ml->own_sectors);
	atomic_dec(&ml->inflight[tag->write]);
	return stall;
}

/*
 * Whether the measured cost of a rebuilt read is older than
 * RS_REBUILD_STALE_PROBES * probe_ms (never with probe_ms 0) and so no
 * longer taken.
 */
static bool rs_rebuild_stale(struct rs_load *l, u64 now)
{
	u64 probe = (u64)READ_ONCE(l->tun->probe_ms) * RS_REBUILD_STALE_PROBES * NSEC_PER_MSEC;

	return probe && rs_since(now, atomic64_read(&l->rebuild_last)) >= probe;
}

/* Record what one read rebuilt by the read policy cost beyond its member reads. */
void rs_load_rebuilt(struct rs_load *l, u64 ns)
{
	unsigned int weight = max(1U, READ_ONCE(l->tun->ewma_weight));
	int n = atomic_read(&l->rebuild_samples);
	u64 now = ktime_get_ns();

	/* A stale average is not averaged with: the sample starts it again. */
	rs_ewma(&l->rebuild_ns, ns, weight, !n || rs_rebuild_stale(l, now));
	atomic64_set(&l->rebuild_last, now);
	if (n < INT_MAX)
		atomic_inc(&l->rebuild_samples);
}

static u32 rs_clamp32(u64 v)
{
	return min_t(u64, v, U32_MAX);
}

/* The last measured cost of a rebuilt read, stale or not, ns; 0 none yet. */
u32 rs_load_rebuild_measured(struct rs_load *l)
{
	return atomic_read(&l->rebuild_samples) ? rs_clamp32(atomic64_read(&l->rebuild_ns)) : 0;
}

/* The current signals of every member, for the policy unit. */
void rs_load_snapshot(struct rs_load *l, unsigned long dead_mask, struct rs_load_snap *snap)
{
	unsigned int weight = READ_ONCE(l->tun->ewma_weight);
	unsigned int window = max(1U, READ_ONCE(l->tun->freq_window));
	unsigned int factor = READ_ONCE(l->tun->stall_factor);
	u64 probe = (u64)READ_ONCE(l->tun->probe_ms) * NSEC_PER_MSEC;
	u64 now = ktime_get_ns();
	unsigned int i;

	snap->n = l->n;
	snap->t_rebuild = rs_rebuild_stale(l, now) ? 0 : rs_load_rebuild_measured(l);
	for (i = 0; i < l->n; i++) {
		struct rs_member_load *ml = &l->m[i];
		struct rs_member_snap *s = &snap->m[i];
		u64 t_r = atomic64_read(&ml->svc[0]);
		u64 t_w = atomic64_read(&ml->svc[1]);
		u64 len = atomic64_read(&ml->win_len);
		u64 cur = rs_since(now, atomic64_read(&ml->win_start));
		u64 busy = rs_since(now, atomic64_read(&ml->progress));
		u64 thr;
		int rate;

		s->reads = min_t(unsigned int, atomic_read(&ml->inflight[0]), RS_SNAP_MAX_QUEUE);
		s->writes = min_t(unsigned int, atomic_read(&ml->inflight[1]), RS_SNAP_MAX_QUEUE);
		s->warm = atomic_read(&ml->samples[0]) >= weight;
		/* Until writes have been seen, price them as reads. */
		if (!atomic_read(&ml->samples[1]))
			t_w = t_r;
		s->t_read = rs_clamp32(t_r);
		s->t_write = rs_clamp32(t_w);

		s->foreign = rs_foreign_now(ml);
		s->t_stall = 0;
		thr = rs_stall_thr(max(t_r, t_w), factor, s->foreign);
		if (factor && thr && rs_inflight(ml) && busy > thr) {
			u64 avg = atomic64_read(&ml->stall_avg);

			s->t_stall = rs_clamp32(avg > busy ? avg - busy : busy);
		}

		/* 1/f: the last full window, or the current one once it is longer. */
		s->interval = 0;
		if (len) {
			unsigned int in_cur = (unsigned int)atomic_read(&ml->arrivals) % window;

			s->interval = rs_clamp32(div_u64(len, window));
			if (cur > len)
				s->interval = rs_clamp32(div_u64(cur, max(1U, in_cur)));
		}
		rate = atomic_read(&ml->foreign_rate);
		s->foreign_interval = s->foreign && rate > 0 ? NSEC_PER_SEC / rate : 0;
		s->watched = s->foreign &&
			     rs_since(now, atomic64_read(&ml->foreign_seen)) < probe;
		s->read_age = rs_since(now, atomic64_read(&ml->last_read));
		s->dead = test_bit(i, &dead_mask);
	}
}
