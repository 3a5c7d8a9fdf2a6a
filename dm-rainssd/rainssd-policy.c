// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd policy unit (see rainssd-policy.h). Everything here is a pure
 * function of its arguments.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/string.h>

#include "rainssd-policy.h"

static const char * const rs_policy_names[RS_NR_POLICIES] = {
	[RS_POLICY_COUNT] = "count",
	[RS_POLICY_RMW] = "rmw",
	[RS_POLICY_RCW] = "rcw",
	[RS_POLICY_ADAPTIVE] = "adaptive",
};

static const char * const rs_read_policy_names[RS_NR_READ_POLICIES] = {
	[RS_READ_DIRECT] = "direct",
	[RS_READ_ADAPTIVE] = "adaptive",
	[RS_READ_RECONSTRUCT] = "reconstruct",
};

const char *rs_policy_name(enum rs_policy p)
{
	return p < RS_NR_POLICIES ? rs_policy_names[p] : "unknown";
}

int rs_policy_parse(const char *name, enum rs_policy *p)
{
	int i = match_string(rs_policy_names, RS_NR_POLICIES, name);

	if (i >= 0)
		*p = i;
	return min(i, 0);
}

const char *rs_read_policy_name(enum rs_read_policy p)
{
	return p < RS_NR_READ_POLICIES ? rs_read_policy_names[p] : "unknown";
}

int rs_read_policy_parse(const char *name, enum rs_read_policy *p)
{
	int i = match_string(rs_read_policy_names, RS_NR_READ_POLICIES, name);

	if (i >= 0)
		*p = i;
	return min(i, 0);
}

void rs_tunables_default(struct rs_tunables *t)
{
	t->ewma_weight = RS_DEF_EWMA_WEIGHT;
	t->freq_window = RS_DEF_FREQ_WINDOW;
	t->stall_factor = RS_DEF_STALL_FACTOR;
	t->xor_ns = RS_DEF_XOR_NS;
	t->probe_ms = RS_DEF_PROBE_MS;
	t->recon_load_pct = RS_DEF_RECON_LOAD_PCT;
}

/* The others' queue on @m priced as reads: t_R * F. At most 2^32 * 2^14. */
static u64 rs_foreign_wait(const struct rs_member_snap *m)
{
	return ((u64)m->t_read * m->foreign) >> RS_OCC_SHIFT;
}

/*
 * Time until a request queued now on @m could start: Eq. 1 of TODAES'22,
 * with the others' requests on the member's device queued before it as the
 * target's own are. At most 3 * 2^46 + 2^32 < 2^48.
 */
static u64 rs_member_wait(const struct rs_member_snap *m)
{
	return (u64)m->t_read * m->reads + (u64)m->t_write * m->writes + rs_foreign_wait(m) +
	       m->t_stall;
}

/*
 * The time cost of a set of pre-reads, MSST'24 Eq. 8/9: the member set
 * Theta is every member with @sectors[i] > 0,
 *
 *   T = max_{i in Theta} { t_R,i * (R_i + 1) + T_GC,i }
 *       + sum_{i in Theta} t_R,i * W_i * pages_i
 *
 * The first term is when the slowest pre-read completes, the second the
 * delay the pre-reads add to the writes queued behind them. Two changes for
 * a host-side target: t_R and t_W are per member (calibrated from its
 * completions), and since Linux block devices do not let reads overtake
 * queued writes (the paper's SSD does), a pre-read also waits for the
 * member's queued writes, t_W,i * W_i. A pre-read is counted in 4 KiB pages
 * (the paper's page-sized sub-requests), so that under equal load on every
 * member the cheaper method is the one with fewer pre-read sectors, exactly
 * what count picks.
 */
u64 rs_cost_prereads(const struct rs_load_snap *ls, const unsigned int *sectors)
{
	u64 slowest = 0, delay = 0;
	unsigned int i;

	for (i = 0; i < ls->n; i++) {
		const struct rs_member_snap *m = &ls->m[i];

		if (!sectors[i])
			continue;
		slowest = max(slowest, rs_member_wait(m) + m->t_read);
		delay += (u64)m->t_read * m->writes * sectors[i];
	}
	return slowest + delay / RS_PAGE_SECTORS;
}

/* Whether every member a method would pre-read from has trusted estimates. */
static bool rs_set_warm(const struct rs_load_snap *ls, const unsigned int *sectors)
{
	unsigned int i;

	for (i = 0; i < ls->n; i++)
		if (sectors[i] && !ls->m[i].warm)
			return false;
	return true;
}

/*
 * The parity update for one write to one stripe; @ls is needed only by
 * RS_POLICY_ADAPTIVE and @c (optional) receives the reasons.
 *
 * A degraded stripe leaves no choice: with the parity member dead the data is
 * simply written; with a dead data member that is not written RMW is the only
 * method that does not read it; with a dead data member that is written, its
 * old rows are rebuilt from all the others first. Otherwise the policy picks.
 * The adaptive policy takes the method with the lower rs_cost_prereads();
 * on equal costs, or while a member it would read has no estimates yet, it
 * does what count does.
 */
enum rs_write_mode rs_plan_write(const struct rs_stripe_shape *s, enum rs_policy p,
				 const struct rs_load_snap *ls, struct rs_write_choice *c)
{
	unsigned int rmw[RS_MAX_DEVS], rcw[RS_MAX_DEVS], sum_rmw = 0, sum_rcw = 0, m;
	struct rs_write_choice tmp;
	enum rs_write_mode count;

	if (!c)
		c = &tmp;
	c->why = RS_WHY_FIXED;
	c->cost_rmw = 0;
	c->cost_rcw = 0;
	if (s->dead != RS_NO_MEMBER) {
		if (s->dead == s->parity)
			c->mode = RS_WRITE_NOPARITY;
		else if (rs_shape_is_full(s))
			c->mode = RS_WRITE_FULL;
		else if (!rs_range_len(&s->w[s->dead]))
			c->mode = RS_WRITE_RMW;
		else
			c->mode = RS_WRITE_RECONSTRUCT;
		c->count_mode = c->mode;
		return c->mode;
	}
	if (rs_shape_is_full(s)) {
		c->mode = RS_WRITE_FULL;
		c->count_mode = c->mode;
		return c->mode;
	}
	rs_prereads_per_member(s, RS_WRITE_RMW, rmw);
	rs_prereads_per_member(s, RS_WRITE_RCW, rcw);
	for (m = 0; m < s->n; m++) {
		sum_rmw += rmw[m];
		sum_rcw += rcw[m];
	}
	count = sum_rmw <= sum_rcw ? RS_WRITE_RMW : RS_WRITE_RCW;
	c->count_mode = count;
	switch (p) {
	case RS_POLICY_RMW:
		c->mode = RS_WRITE_RMW;
		break;
	case RS_POLICY_RCW:
		c->mode = RS_WRITE_RCW;
		break;
	case RS_POLICY_ADAPTIVE:
		c->mode = count;
		if (!ls || !rs_set_warm(ls, rmw) || !rs_set_warm(ls, rcw)) {
			c->why = RS_WHY_COLD;
			break;
		}
		c->cost_rmw = rs_cost_prereads(ls, rmw);
		c->cost_rcw = rs_cost_prereads(ls, rcw);
		if (c->cost_rmw == c->cost_rcw) {
			c->why = RS_WHY_TIE;
			break;
		}
		c->why = RS_WHY_COST;
		c->mode = c->cost_rmw < c->cost_rcw ? RS_WRITE_RMW : RS_WRITE_RCW;
		break;
	default:
		c->why = RS_WHY_COUNT;
		c->mode = count;
		break;
	}
	return c->mode;
}

/* t_R * f as a fraction of 1024, capped at 16 (a member far beyond saturation). */
#define RS_UTIL_SHIFT	10
#define RS_UTIL_MAX	(16ULL << RS_UTIL_SHIFT)

/*
 * t_rd * f * T_wait: the delay a read queued on @m adds to the requests that
 * arrive while it waits (TODAES'22 Eq. 2 and the second half of Eq. 3),
 * the others' as well as the target's.
 * At most 2^48 * 2^14 >> 10 = 2^52, so 32 of them still fit in u64.
 */
static u64 rs_arrival_delay(const struct rs_member_snap *m)
{
	u32 interval = rs_interval_merge(m->interval, m->foreign_interval);
	u64 util;

	if (!interval)
		return 0;
	util = min_t(u64, ((u64)m->t_read << RS_UTIL_SHIFT) / interval, RS_UTIL_MAX);
	return (rs_member_wait(m) * util) >> RS_UTIL_SHIFT;
}

/*
 * T_A, the cost of reading @target directly, TODAES'22 Eq. 3:
 *
 *   T_A = T_wait * (1 + t_rd * f_0) + t_rd,   T_wait = n_r t_rd + n_w t_wr + t_gc
 *
 * T_wait is the wait behind what is queued on the member (Eq. 1) and
 * t_rd * f_0 * T_wait the delay this read adds to the requests that arrive
 * meanwhile (Eq. 2). The paper leaves out the read's own service time; it
 * is added here (and to T_B) because a member slowed by load the target did
 * not cause shows up only in its service time, not in its queue. The load
 * term (the delay added to others) is weighted by recon_load_pct, as T_B's.
 */
u64 rs_cost_read_direct(const struct rs_load_snap *ls, unsigned int target,
			const struct rs_tunables *t)
{
	const struct rs_member_snap *m = &ls->m[target];

	return rs_member_wait(m) + m->t_read +
	       mul_u64_u32_div(rs_arrival_delay(m), t->recon_load_pct, 100);
}

/*
 * t_xor: what a rebuilt read costs beyond its member reads. The paper's is
 * its controller's XOR time; a host target pays a stripe lock, two work
 * item hops, buffers, the XOR and a copy, which the load signals measure
 * (t_rebuild). xor_ns is the least value taken, and the value until a
 * rebuilt read has been measured.
 */
static u64 rs_t_xor(const struct rs_load_snap *ls, const struct rs_tunables *t)
{
	return max_t(u64, t->xor_ns, ls->t_rebuild);
}

/*
 * T_B, the cost of rebuilding the read from the other members, after
 * TODAES'22 Eq. 4. The paper's SSD puts the k-1 inserted reads at the head
 * of each member's queue, so they wait for nothing and delay everything
 * queued there: T_B = t_xor + t_rd * sum_{i != 0} n_i. A Linux block device
 * queues them at the tail, behind what is there: they delay no request
 * already queued (1.9.0 dropped that term; up to 1.8.1 it was priced on
 * top of the others), and each waits as the direct read would. So each is
 * priced as Eq. 1-3 price the direct read: the slowest one's wait and
 * service time, and on every member the delay it adds to the requests that
 * arrive while it waits (the target's and others' arrivals). That load term
 * is weighted by recon_load_pct (100: as described; 0: compare response
 * times only). With equal load on every member T_B is never below T_A,
 * whatever the weight (the k-1 load terms are each T_A's, t_xor >= 0), so
 * the read stays direct.
 */
u64 rs_cost_read_recon(const struct rs_load_snap *ls, unsigned int target,
		       const struct rs_tunables *t)
{
	u64 delay = 0, slowest = 0;
	unsigned int i;

	for (i = 0; i < ls->n; i++) {
		const struct rs_member_snap *m = &ls->m[i];

		if (i == target)
			continue;
		delay += rs_arrival_delay(m);
		slowest = max(slowest, rs_member_wait(m) + m->t_read);
	}
	/* delay < 31 * 2^52 < 2^57: weighting it needs mul_u64_u32_div. */
	return rs_t_xor(ls, t) + slowest + mul_u64_u32_div(delay, t->recon_load_pct, 100);
}

/*
 * Whether a read of @target's chunk should be rebuilt from the other members
 * (true) or read directly. Direct when any member is dead (nothing to rebuild
 * from), when a member has no estimates yet, when @target has not been read
 * for probe_ms (so its estimates do not go stale while it is bypassed),
 * unless its device statistics show it busy with others' I/O now (they keep
 * its estimates current), and when T_A <= T_B.
 */
bool rs_plan_read(const struct rs_load_snap *ls, unsigned int target,
		  const struct rs_tunables *t, struct rs_read_choice *c)
{
	struct rs_read_choice tmp;
	unsigned int i;

	if (!c)
		c = &tmp;
	c->reconstruct = false;
	c->cost_direct = 0;
	c->cost_recon = 0;
	for (i = 0; i < ls->n; i++) {
		if (ls->m[i].dead) {
			c->why = RS_WHY_DEGRADED;
			return false;
		}
	}
	for (i = 0; i < ls->n; i++) {
		if (!ls->m[i].warm) {
			c->why = RS_WHY_COLD;
			return false;
		}
	}
	if (t->probe_ms && !ls->m[target].watched &&
	    ls->m[target].read_age >= (u64)t->probe_ms * NSEC_PER_MSEC) {
		c->why = RS_WHY_PROBE;
		return false;
	}
	c->why = RS_WHY_COST;
	c->cost_direct = rs_cost_read_direct(ls, target, t);
	c->cost_recon = rs_cost_read_recon(ls, target, t);
	c->reconstruct = c->cost_recon < c->cost_direct;
	return c->reconstruct;
}

/* Readings further apart than this (about 18 minutes) are not compared. */
#define RS_DEVSTAT_MAX_GAP	BIT_ULL(40)

/*
 * What the others did on a member between two readings of its device's I/O
 * statistics (@prev, @cur).
 *
 * Whether anyone else was there at all is decided by the sectors, which
 * merging or splitting the target's requests does not change: the device's
 * sectors less the target's own, a running difference, must pass its
 * highest value so far, @base (kept by the caller, set from the first
 * reading). The target counts a completion a little after the device does
 * and its metadata writes when it sends them, so the difference wobbles
 * both ways around the others' share; only new highs count, so the wobble
 * adds up to at most one in-flight window over any length of time instead
 * of its positive half at every reading.
 *
 * When it passes, the others' completions are the device's less the
 * target's (at least one, at most all), and by Little's law the device held
 * ns / dt requests on average, theirs by their share of the completions:
 *
 *   F = (ios_dev - ios_own) / ios_dev * ns_dev / dt,  interval = dt / their ios
 *
 * F is their queue as the device accounts it, in service or waiting (a
 * request waiting for a tag is not yet on the device). svc is the device's
 * time per completion: min(ns, dt) / ios, its busy time per completion
 * while it was busy, the mean latency while it was not.
 *
 * False (and @f zero) when the readings cannot be compared: out of order,
 * too far apart, or a counter that went back. @f is zero but svc when
 * nobody else was seen.
 */
bool rs_foreign_estimate(const struct rs_devstat *prev, const struct rs_devstat *cur,
			 s64 *base, struct rs_foreign *f)
{
	u64 dt, ios, ns, own, fios, q, occ;
	s64 diff;

	memset(f, 0, sizeof(*f));
	if (cur->t <= prev->t || cur->t - prev->t > RS_DEVSTAT_MAX_GAP ||
	    cur->ios < prev->ios || cur->sectors < prev->sectors || cur->ns < prev->ns ||
	    cur->own_ios < prev->own_ios || cur->own_sectors < prev->own_sectors)
		return false;
	dt = cur->t - prev->t;
	ios = cur->ios - prev->ios;
	ns = cur->ns - prev->ns;
	if (ios)
		f->svc = min_t(u64, div64_u64(min(ns, dt), ios), U32_MAX);
	diff = (s64)(cur->sectors - cur->own_sectors);
	if (diff <= *base || !ios)
		return true;
	*base = diff;
	own = cur->own_ios - prev->own_ios;
	fios = ios > own ? ios - own : 1;
	f->ios = min_t(u64, fios, U32_MAX);
	f->interval = max_t(u64, min_t(u64, div64_u64(dt, fios), U32_MAX), 1);
	/* The device's occupancy ns / dt in 1/1024, without overflow (dt < 2^40). */
	q = div64_u64(ns, dt);
	if (q > RS_OCC_MAX >> RS_OCC_SHIFT)
		occ = RS_OCC_MAX;
	else
		occ = (q << RS_OCC_SHIFT) + div64_u64((ns - q * dt) << RS_OCC_SHIFT, dt);
	/* Their share: occ < 2^24, fios <= ios < 2^40 keeps the product in u64. */
	if (fios < BIT_ULL(40))
		occ = div64_u64(min_t(u64, occ, RS_OCC_MAX) * fios, ios);
	f->occ = min_t(u64, occ, RS_OCC_MAX);
	return true;
}

/*
 * The mean time between arrivals of two streams with mean times between
 * arrivals @a and @b (0: no arrivals known): 1 / (1/a + 1/b).
 */
u32 rs_interval_merge(u32 a, u32 b)
{
	if (!a || !b)
		return a ? a : b;
	return max_t(u64, div64_u64((u64)a * b, (u64)a + b), 1);
}
