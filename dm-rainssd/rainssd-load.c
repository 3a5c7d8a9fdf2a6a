// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd member load signals (see rainssd-load.h).
 */
#include <linux/bitops.h>
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
	}
	return 0;
}

void rs_load_exit(struct rs_load *l)
{
	kfree(l->m);
	l->m = NULL;
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

/* Record that the target issues a request to @member now. */
void rs_load_issue(struct rs_load *l, unsigned int member, bool write,
		   struct rs_load_tag *tag)
{
	struct rs_member_load *ml = &l->m[member];
	unsigned int window = READ_ONCE(l->tun->freq_window);
	u64 now = ktime_get_ns();

	tag->start = now;
	tag->write = write;
	tag->ahead = atomic_inc_return(&ml->inflight[write]) - 1 +
		     atomic_read(&ml->inflight[!write]);
	if (!tag->ahead)
		atomic64_set(&ml->progress, now);	/* an idle member is not stalled */
	if (!write)
		atomic64_set(&ml->last_read, now);
	if ((unsigned int)atomic_inc_return(&ml->arrivals) % window == 0) {
		atomic64_set(&ml->win_len, rs_since(now, atomic64_read(&ml->win_start)));
		atomic64_set(&ml->win_start, now);
	}
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
	thr = svc * factor;
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
	atomic_dec(&ml->inflight[tag->write]);
	return stall;
}

/* Record what one read rebuilt by the read policy cost beyond its member reads. */
void rs_load_rebuilt(struct rs_load *l, u64 ns)
{
	unsigned int weight = max(1U, READ_ONCE(l->tun->ewma_weight));
	int n = atomic_read(&l->rebuild_samples);

	rs_ewma(&l->rebuild_ns, ns, weight, !n);
	if (n < INT_MAX)
		atomic_inc(&l->rebuild_samples);
}

static u32 rs_clamp32(u64 v)
{
	return min_t(u64, v, U32_MAX);
}

/* The current signals of every member, for the policy unit. */
void rs_load_snapshot(struct rs_load *l, unsigned long dead_mask, struct rs_load_snap *snap)
{
	unsigned int weight = READ_ONCE(l->tun->ewma_weight);
	unsigned int window = max(1U, READ_ONCE(l->tun->freq_window));
	unsigned int factor = READ_ONCE(l->tun->stall_factor);
	u64 now = ktime_get_ns();
	unsigned int i;

	snap->n = l->n;
	snap->t_rebuild = atomic_read(&l->rebuild_samples) ?
			  rs_clamp32(atomic64_read(&l->rebuild_ns)) : 0;
	for (i = 0; i < l->n; i++) {
		struct rs_member_load *ml = &l->m[i];
		struct rs_member_snap *s = &snap->m[i];
		u64 t_r = atomic64_read(&ml->svc[0]);
		u64 t_w = atomic64_read(&ml->svc[1]);
		u64 len = atomic64_read(&ml->win_len);
		u64 cur = rs_since(now, atomic64_read(&ml->win_start));
		u64 busy = rs_since(now, atomic64_read(&ml->progress));
		u64 thr;

		s->reads = min_t(unsigned int, atomic_read(&ml->inflight[0]), RS_SNAP_MAX_QUEUE);
		s->writes = min_t(unsigned int, atomic_read(&ml->inflight[1]), RS_SNAP_MAX_QUEUE);
		s->warm = atomic_read(&ml->samples[0]) >= weight;
		/* Until writes have been seen, price them as reads. */
		if (!atomic_read(&ml->samples[1]))
			t_w = t_r;
		s->t_read = rs_clamp32(t_r);
		s->t_write = rs_clamp32(t_w);

		s->t_stall = 0;
		thr = max(t_r, t_w) * factor;
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
		s->read_age = rs_since(now, atomic64_read(&ml->last_read));
		s->dead = test_bit(i, &dead_mask);
	}
}
