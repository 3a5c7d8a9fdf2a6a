// SPDX-License-Identifier: GPL-2.0
/*
 * rainssd-sim: a discrete-event simulator of a rainssd volume on emulated
 * channels, driving the module's own decision code.
 *
 * The policy unit (rainssd-policy.c), the stripe shape (rainssd-shape.c:
 * which rows each parity method pre-reads and writes), the load signals
 * (rainssd-load.c) and the geometry (rainssd-geometry.c) are compiled in
 * unchanged, over a small kernel shim (kshim/). Around them this file models
 * what scripts/bench builds in the VM and what the engine (rainssd-raid5.c)
 * does with it:
 *
 *  - each member is a channel serving at most `qd` requests at a time, each
 *    for a fixed service time (null_blk irqmode=2 completion_nsec), with a
 *    first-come first-served queue in front (the host-side queue);
 *  - disturbances: a slower member (service time x factor), background load
 *    on a member (Poisson, half reads, half writes, not the target's: it does
 *    not count in the target's in-flight numbers), a foreign closed-loop
 *    tenant on a member (another user of the channel keeping a fixed number
 *    of requests outstanding, also outside the target's numbers), and stalls
 *    (a dm suspend of the member: requests already queued drain, new ones are
 *    held, then the member serves nothing for the stall time);
 *  - user reads and writes arrive as Poisson processes at random aligned
 *    offsets (fio rate_process=poisson); reads are split at chunks and
 *    writes at stripes, as dm splits them;
 *  - a write takes its stripe (FIFO per stripe), asks rs_plan_write() for
 *    the method, issues the pre-reads rs_shape_reads() names for it, then
 *    the data and parity writes of rs_shape_writes(); a
 *    read is direct or, as rs_plan_read() or the read policy says, rebuilt
 *    from the other members under the stripe lock;
 *  - with --tier-mb, the RAID1 tier (rainssd-tier.c, compiled in too): its
 *    capacity from rs_tier_layout(), each stripe of a write placed by
 *    rs_tier_place() (HybRAID's Algorithm 1), a stripe entering the tier gets
 *    its copies' members from rs_tier_choose(), its records kept in the
 *    module's format (rs_tier_r_*()); a stripe in the tier writes the rows it
 *    covers to both copies (no parity; the rest of a 4 KiB row it writes in
 *    part is read first), a read of a row in the tier goes to the less busy
 *    copy, and above tier_high_pct the offline migration moves the coldest
 *    stripes (CLOCK) home, one at a time, until tier_low_pct.
 *
 * Everything is deterministic for a given --seed. Latencies are reported
 * from every request after the warm-up, so tail percentiles rest on far more
 * samples than a VM run gives. The model leaves out the CPU cost of an I/O
 * (large under QEMU/TCG), XOR time beyond xor_ns, and request merging.
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "kshim.h"
#include "rainssd-geometry.h"
#include "rainssd-load.h"
#include "rainssd-policy.h"
#include "rainssd-shape.h"
#include "rainssd-tier.h"

u64 kshim_now_ns;

#define NS_PER_MS	1e6

/* ---- random numbers (xorshift64*) ---- */

static u64 rng_state = 88172645463325252ULL;

static u64 rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static double rng_unit(void)	/* (0, 1] */
{
	return ((rng_next() >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static u64 rng_exp_ns(double mean_ns)
{
	return (u64)(-log(rng_unit()) * mean_ns);
}

static u64 rng_below(u64 n)
{
	return rng_next() % n;
}

/* ---- configuration ---- */

#define MAX_DISTURB	RS_MAX_DEVS

struct config {
	unsigned int n, chunk_kb, qd, bs_kb, ba_kb, region_mb;
	double lat_us[RS_MAX_DEVS];
	double slow[RS_MAX_DEVS];	/* service time factor, 1 = none */
	double bg[RS_MAX_DEVS];		/* background load, fraction of nominal capacity */
	unsigned int foreign_qd[RS_MAX_DEVS];	/* foreign closed-loop tenant: outstanding */
	unsigned int foreign_rpct[RS_MAX_DEVS];	/* ... and its % of reads */
	double stall_ms[RS_MAX_DEVS], stall_period_ms[RS_MAX_DEVS];
	double write_iops, read_iops, duration_s, warmup_s, jitter_us, write_delay_ms;
	bool jitter_after;		/* the jitter delays completions, not the member */
	bool foreign_hidden;		/* the foreign tenant is not in the member's statistics */
	bool no_devstat;		/* the load signals do not read the statistics */
	double rebuild_us;		/* a rebuilt read's own cost after its reads */
	unsigned int iodepth, rwmix;	/* closed loop: requests outstanding, % reads */
	enum rs_policy policy;
	enum rs_read_policy read_policy;
	struct rs_tunables tun;
	/* the RAID1 tier: MiB of every member (0: none), placement, offline migration */
	unsigned int tier_mb, mig_threshold, home_threshold, tier_high_pct, tier_low_pct;
	double mig_rate;		/* KiB/s per member, 0: unlimited */
	u64 seed;
	bool json;
};

static struct config cfg;

/* An empirical distribution of extra service time (--jitter-file): a CDF. */
static struct {
	double *us, *cum;
	size_t n;
} jit;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rainssd-sim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* ---- events ---- */

enum ev_type {
	EV_USER_WRITE, EV_USER_READ, EV_BG, EV_DONE, EV_STALL_BEGIN, EV_STALL_END, EV_SUBMIT,
	EV_FREE, EV_REBUILT, EV_MIGRATE,
};

struct event {
	u64 t, seq;
	enum ev_type type;
	unsigned int m;
	void *p;
};

static struct event *heap;
static size_t heap_len, heap_cap;
static u64 ev_seq;

static bool ev_before(const struct event *a, const struct event *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void ev_push(u64 t, enum ev_type type, unsigned int m, void *p)
{
	size_t i;

	if (heap_len == heap_cap) {
		heap_cap = heap_cap ? 2 * heap_cap : 1024;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (!heap)
			die("out of memory");
	}
	i = heap_len++;
	heap[i] = (struct event){ .t = t, .seq = ev_seq++, .type = type, .m = m, .p = p };
	while (i && ev_before(&heap[i], &heap[(i - 1) / 2])) {
		struct event tmp = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct event ev_pop(void)
{
	struct event top = heap[0];
	size_t i = 0;

	heap[0] = heap[--heap_len];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;

		if (l < heap_len && ev_before(&heap[l], &heap[s]))
			s = l;
		if (r < heap_len && ev_before(&heap[r], &heap[s]))
			s = r;
		if (s == i)
			break;
		struct event tmp = heap[i];

		heap[i] = heap[s];
		heap[s] = tmp;
		i = s;
	}
	return top;
}

/* ---- members ---- */

struct op;

struct req {
	struct req *next;
	u64 extra;		/* jitter_after: the completion is seen this much later */
	u64 t_dev;		/* when the member's device statistics start timing it */
	struct op *op;		/* NULL: background load or the foreign tenant */
	unsigned int member;
	bool write;
	bool foreign;		/* the foreign closed-loop tenant's: resubmitted at completion */
	struct rs_load_tag tag;
};

struct member {
	u64 svc_ns;
	unsigned int busy;
	struct req *qhead, *qtail;	/* waiting for the channel */
	struct req *hhead, *htail;	/* held by a stall (dm suspend) */
	unsigned int queued;		/* qhead list length + busy */
	bool holding, timer;
	/* time-weighted load, for the balance figures */
	u64 last_t;
	double area_queued, area_busy;
	u64 served, served_fg, served_foreign;
	/* the member device's I/O statistics (everyone's that go through it) */
	u64 dev_ios, dev_sectors, dev_ns;
	/* reads of this member's data: the read policy's decisions */
	u64 rd_direct, rd_rebuilt, rd_probe;
	double sum_cost_direct, sum_cost_recon;	/* over the decisions by cost, ns */
	/* the load signals of this member, sampled at each adaptive decision */
	u64 sig_n;
	double sig_t_read, sig_queued, sig_interval, sig_foreign;
};

static struct member mem[RS_MAX_DEVS];
static struct rs_geom geom;
static struct rs_load load;
static bool measuring;
static u64 t_measure, t_end;

static void mem_account(struct member *mb)
{
	u64 dt = kshim_now_ns - mb->last_t;

	if (measuring) {
		mb->area_queued += (double)dt * mb->queued;
		mb->area_busy += (double)dt * mb->busy;
	}
	mb->last_t = kshim_now_ns;
}

static u64 jitter_sample_ns(void)
{
	double u = rng_unit() * jit.cum[jit.n - 1];
	size_t lo = 0, hi = jit.n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (jit.cum[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (u64)(jit.us[lo] * 1000.0);
}

/*
 * Read "<extra_us> <weight>" lines (a histogram; '#' starts a comment) of
 * the extra time a request spends beyond its member's service time.
 */
static void jitter_load(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned int lineno = 0;
	double total = 0;

	if (!f)
		die("--jitter-file %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		double us, w;
		char *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = 0;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (sscanf(line, "%lf %lf", &us, &w) != 2 || us < 0 || w < 0)
			die("--jitter-file %s:%u: want '<extra_us> <weight>'", path, lineno);
		jit.us = realloc(jit.us, (jit.n + 1) * sizeof(*jit.us));
		jit.cum = realloc(jit.cum, (jit.n + 1) * sizeof(*jit.cum));
		if (!jit.us || !jit.cum)
			die("out of memory");
		total += w;
		jit.us[jit.n] = us;
		jit.cum[jit.n++] = total;
	}
	fclose(f);
	if (!jit.n || total <= 0)
		die("--jitter-file %s: no weight in it", path);
}

static void mem_dispatch(unsigned int m)
{
	struct member *mb = &mem[m];

	while (mb->busy < cfg.qd && mb->qhead) {
		struct req *r = mb->qhead;
		u64 svc = mb->svc_ns, extra = 0;

		mb->qhead = r->next;
		if (!mb->qhead)
			mb->qtail = NULL;
		mb->busy++;
		if (cfg.jitter_us > 0)
			extra += rng_exp_ns(cfg.jitter_us * 1000.0);
		if (jit.n)
			extra += jitter_sample_ns();
		if (cfg.jitter_after) {
			/* the member is free at the end of the service time */
			r->extra = extra;
			ev_push(kshim_now_ns + svc, EV_FREE, m, r);
		} else {
			ev_push(kshim_now_ns + svc + extra, EV_DONE, m, r);
		}
	}
	if (mb->holding && !mb->timer && !mb->busy && !mb->qhead) {
		/* drained: the suspend is complete, the stall time starts */
		mb->timer = true;
		ev_push(kshim_now_ns + (u64)(cfg.stall_ms[m] * NS_PER_MS), EV_STALL_END, m, NULL);
	}
}

static void list_add(struct req **head, struct req **tail, struct req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

static void mem_submit(struct req *r)
{
	struct member *mb = &mem[r->member];

	mem_account(mb);
	mb->queued++;
	if (mb->holding)
		list_add(&mb->hhead, &mb->htail, r);
	else
		list_add(&mb->qhead, &mb->qtail, r);
	mem_dispatch(r->member);
}

/* ---- statistics ---- */

struct lat_set {
	u64 *v;
	size_t n, cap;
	double sum;
};

static struct lat_set lat_read, lat_write;

/* Requests that arrived inside the measured window count, however late they end. */
static void lat_add(struct lat_set *s, u64 t_arrive)
{
	u64 ns = kshim_now_ns - t_arrive;

	if (t_arrive < t_measure || t_arrive >= t_end)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 65536;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	s->v[s->n++] = ns;
	s->sum += ns;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (fio's rule: the smallest sample with at least p% at or below it). */
static double lat_pct(const struct lat_set *s, double p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (size_t)ceil(p / 100.0 * s->n);
	if (i)
		i--;
	return s->v[min(i, s->n - 1)] / NS_PER_MS;
}

enum sim_stat {
	ST_FULL, ST_RMW, ST_RCW, ST_RMW_ADJ, ST_RCW_ADJ, ST_COLD, ST_PREREADS,
	ST_RECON, ST_PROBES, ST_STALLS, ST_NR
};

static const char * const st_names[ST_NR] = {
	"full_stripe_writes", "rmw", "rcw", "rmw_adjusted", "rcw_adjusted",
	"cold_fallbacks", "prereads", "reconstruct_reads", "probes", "stalls_seen",
};

static u64 stats[ST_NR];

static void stat_inc(enum sim_stat s)
{
	if (measuring)
		stats[s]++;
}

/* ---- the target ---- */

/* A user request, split into operations (at chunks for reads, stripes for writes). */
struct ureq {
	u64 t_arrive;
	unsigned int pending;
	bool write;
};

/* OP_MIGRATE: the offline migration's move of a stripe home (no user request) */
enum op_kind { OP_DIRECT, OP_RECON, OP_WRITE, OP_MIGRATE };

struct op {
	struct ureq *u;
	enum op_kind kind;
	u64 stripe;
	unsigned int member;		/* reads: the member holding the data */
	unsigned int row, len;		/* reads: rows inside the chunk */
	unsigned int pending;
	bool writing;			/* write: the pre-reads are in */
	enum rs_write_mode mode;
	enum rs_place place;		/* write: where the tier put it (R5 without a tier) */
	struct rs_stripe_shape shape;
	struct op *lock_next;		/* in its lock bucket while owning the stripe */
	struct op *wait_head, *wait_tail, *wait_next;
};

#define LOCK_BUCKETS	4096
static struct op *lock_bucket[LOCK_BUCKETS];

/* Member sectors the target wrote and user sectors written, the whole run. */
static u64 member_write_sectors, user_write_sectors;

/* ---- the RAID1 tier ---- */

/* A stripe's history is kept in 6 bits, as rainssd-tiermap.c keeps it. */
#define TIER_HIST_MAX	63U
/* With nothing to do, the offline migration looks again this often (rainssd-migrate.c). */
#define MIG_IDLE_NS	(1000 * NSEC_PER_MSEC)

/* What rainssd-tiermap.c keeps of every stripe (its word in smap). */
struct tstripe {
	u32 rec;		/* its record, U32_MAX when not in the tier */
	u8 hist;		/* writes in its current tier (Algorithm 1's history) */
	bool written;		/* ever written */
	bool ref;		/* written since the clock hand last passed (CLOCK) */
};

static struct {
	bool on;
	struct rs_tier_layout t;
	u64 stripes;		/* of the region: the volume the simulator knows */
	struct tstripe *s;
	u8 *recs;		/* t.records records in the module's format; slots not modelled */
	u32 used, peak, hint, clock;
	u32 free[RS_MAX_DEVS];	/* free chunk slots per member */
	u64 seq;
	/* the offline migration */
	bool active, busy, timer;
	u64 next_ns;		/* the rate limit: no step starts before */
	/* counters, the whole run */
	u64 to_r1, to_r5, offline, writes, reads, row_reads, placed, placed_tier;
} tier;

static void op_plan(struct op *op);

/* Take the stripe, or queue behind its owner (FIFO) and return false. */
static bool stripe_trylock(struct op *op)
{
	struct op **b = &lock_bucket[op->stripe % LOCK_BUCKETS], *o;

	for (o = *b; o; o = o->lock_next) {
		if (o->stripe == op->stripe) {
			op->wait_next = NULL;
			if (o->wait_tail)
				o->wait_tail->wait_next = op;
			else
				o->wait_head = op;
			o->wait_tail = op;
			return false;
		}
	}
	op->wait_head = op->wait_tail = NULL;
	op->lock_next = *b;
	*b = op;
	return true;
}

static void stripe_unlock(struct op *op)
{
	struct op **b = &lock_bucket[op->stripe % LOCK_BUCKETS], *next = op->wait_head;

	while (*b != op)
		b = &(*b)->lock_next;
	*b = op->lock_next;
	if (!next)
		return;
	next->wait_head = next->wait_next;
	next->wait_tail = next->wait_head ? op->wait_tail : NULL;
	next->lock_next = lock_bucket[next->stripe % LOCK_BUCKETS];
	lock_bucket[next->stripe % LOCK_BUCKETS] = next;
	op_plan(next);
}

/* Whether the write goes to the stripe's mirror copies in the tier. */
static bool op_tiered(const struct op *op)
{
	return op->place == RS_PLACE_R1 || op->place == RS_PLACE_TO_R1;
}

static void member_io(struct op *op, unsigned int m, bool write, unsigned int start,
		      unsigned int end)
{
	struct req *r;

	if (start >= end)
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		die("out of memory");
	r->op = op;
	r->member = m;
	r->write = write;
	r->t_dev = kshim_now_ns;
	rs_load_issue(&load, m, write, end - start, &r->tag);
	if (write)
		member_write_sectors += end - start;
	else if (op->kind == OP_WRITE && op_tiered(op))
		tier.row_reads++;	/* the rest of a 4 KiB row, not a parity pre-read */
	else if (op->kind == OP_WRITE)
		stat_inc(ST_PREREADS);
	op->pending++;
	if (write && cfg.write_delay_ms > 0)	/* dm-delay in front of the member */
		ev_push(kshim_now_ns + (u64)(cfg.write_delay_ms * NS_PER_MS), EV_SUBMIT, m, r);
	else
		mem_submit(r);
}

static u8 *tier_rec(u32 rec)
{
	return tier.recs + (size_t)rec * tier.t.rec_size;
}

/* The member of the less busy copy of chunk @k of record @rec (copy 0 of equals). */
static unsigned int tier_copy(u32 rec, unsigned int k)
{
	unsigned int c, m[2];
	u32 slot;

	for (c = 0; c < 2; c++)
		rs_tier_r_copy(&tier.t, tier_rec(rec), k, c, &m[c], &slot);
	return rs_load_queued(&load, m[1]) < rs_load_queued(&load, m[0]) ? m[1] : m[0];
}

/* Whether 4 KiB row @row of data chunk @k of @stripe is in the tier. */
static bool tier_has(u64 stripe, unsigned int k, unsigned int row)
{
	u32 rec = tier.s[stripe].rec;

	return rec != U32_MAX && rs_tier_r_row(&tier.t, tier_rec(rec), k, row);
}

/*
 * @stripe enters the tier (rs_tier_enter()): a record, and for each data
 * chunk two members from rs_tier_choose() by the target's requests in
 * flight on each member and their free slots. False when there is no room.
 */
static bool tier_enter(u64 stripe)
{
	unsigned int nk = geom.n - 1, m, k, c;
	u32 queued[RS_MAX_DEVS], free[RS_MAX_DEVS], rec;
	u8 pair[RS_MAX_DEVS - 1][2];
	u8 *r;

	if (tier.used >= tier.t.records)
		return false;
	for (m = 0; m < geom.n; m++)
		queued[m] = rs_load_queued(&load, m);
	memcpy(free, tier.free, sizeof(free));
	if (!rs_tier_choose(geom.n, 0, queued, free, nk, pair))
		return false;
	memcpy(tier.free, free, sizeof(free));
	for (rec = tier.hint; rs_tier_r_stripe(tier_rec(rec)) != U64_MAX; )
		rec = rec + 1 < tier.t.records ? rec + 1 : 0;
	tier.hint = rec + 1 < tier.t.records ? rec + 1 : 0;
	r = tier_rec(rec);
	rs_tier_r_clear(&tier.t, r);
	rs_tier_r_set_head(r, stripe, tier.seq++);
	for (k = 0; k < nk; k++)
		for (c = 0; c < 2; c++)
			rs_tier_r_set_copy(&tier.t, r, k, c, pair[k][c], 0);
	tier.s[stripe].rec = rec;
	tier.s[stripe].ref = true;
	tier.used++;
	tier.peak = max(tier.peak, tier.used);
	tier.to_r1++;
	return true;
}

/* @stripe leaves the tier: its home holds all of its data now. */
static void tier_leave(u64 stripe, bool offline)
{
	struct tstripe *ts = &tier.s[stripe];
	unsigned int k, c, m;
	u32 slot;
	u8 *r = tier_rec(ts->rec);

	for (k = 0; k < geom.n - 1; k++) {
		for (c = 0; c < 2; c++) {
			rs_tier_r_copy(&tier.t, r, k, c, &m, &slot);
			tier.free[m]++;
		}
	}
	rs_tier_r_clear(&tier.t, r);
	ts->rec = U32_MAX;
	ts->ref = false;
	ts->hist = 1;
	tier.used--;
	if (offline)
		tier.offline++;
	else
		tier.to_r5++;
}

/* Where the write's stripe goes (rs_r5_tier_plan()): the stripe is ours. */
static void tier_plan(struct op *op)
{
	struct tstripe *ts = &tier.s[op->stripe];
	struct rs_place_in in = {
		.in_tier = ts->rec != U32_MAX,
		.written = ts->written,
		.full = rs_shape_is_full(&op->shape),
		.hist = ts->hist,
		.threshold = cfg.mig_threshold,
		.home_threshold = cfg.home_threshold,
		.room = tier.used < tier.t.records,
	};
	struct rs_place_out out;

	rs_tier_place(&in, &out);
	if (out.place == RS_PLACE_TO_R1 && !tier_enter(op->stripe))
		out.place = RS_PLACE_R5;
	op->place = out.place;
	ts->hist = min(out.hist, TIER_HIST_MAX);
	ts->written = true;
	if (ts->rec != U32_MAX)
		ts->ref = true;
	tier.placed++;
	if (op_tiered(op))
		tier.placed_tier++;
}

/*
 * The rows of home member @m's chunk the write covers (none for the parity
 * member), with @round out to whole 4 KiB rows.
 */
static struct rs_range tier_rows(const struct op *op, unsigned int m, bool round)
{
	struct rs_range w = { 0, 0 };

	if (m == op->shape.parity)
		return w;
	w = op->shape.w[m];
	if (round && rs_range_len(&w)) {
		w.start = round_down(w.start, RS_TIER_ROW_SECTORS);
		w.end = min_t(unsigned int, round_up(w.end, RS_TIER_ROW_SECTORS), geom.chunk);
	}
	return w;
}

/* Home member @m's rows [start, end), all in the tier or none: from a copy, or the home. */
static void tier_read(struct op *op, unsigned int m, unsigned int start, unsigned int end)
{
	int k = rs_member_to_k(&geom, op->stripe, m);

	if (k < 0 || start >= end)
		return;
	if (tier_has(op->stripe, k, start / RS_TIER_ROW_SECTORS))
		member_io(op, tier_copy(tier.s[op->stripe].rec, k), false, start, end);
	else
		member_io(op, m, false, start, end);
}

/* A tier stripe's pre-reads: the rest of the first and last 4 KiB row it writes in part. */
static void tier_prereads(struct op *op)
{
	struct rs_range w, rw;
	unsigned int m, rows[2], nr, j;

	for (m = 0; m < geom.n; m++) {
		w = tier_rows(op, m, false);
		rw = tier_rows(op, m, true);
		if (!rs_range_len(&w))
			continue;
		nr = 0;
		if (rw.start < w.start)
			rows[nr++] = rw.start;
		if (rw.end > w.end && (!nr || rw.end - RS_TIER_ROW_SECTORS != rows[0]))
			rows[nr++] = rw.end - RS_TIER_ROW_SECTORS;
		for (j = 0; j < nr; j++)
			tier_read(op, m, rows[j], rows[j] + RS_TIER_ROW_SECTORS);
	}
}

/* A tier stripe's writes: each chunk's whole rows to both of its copies. */
static void tier_writes(struct op *op)
{
	const u8 *r = tier_rec(tier.s[op->stripe].rec);
	struct rs_range rw;
	unsigned int m, c, cm;
	u32 slot;
	int k;

	for (m = 0; m < geom.n; m++) {
		rw = tier_rows(op, m, true);
		k = rs_member_to_k(&geom, op->stripe, m);
		if (!rs_range_len(&rw) || k < 0)
			continue;
		for (c = 0; c < 2; c++) {
			rs_tier_r_copy(&tier.t, r, k, c, &cm, &slot);
			member_io(op, cm, true, rw.start, rw.end);
		}
	}
}

/*
 * The writes are in (rs_r5_tier_written()): the rows written in the tier
 * are read from it from now on; a stripe written whole into its home
 * leaves the tier.
 */
static void tier_written(struct op *op)
{
	struct rs_range rw;
	unsigned int m;
	int k;

	if (op->place == RS_PLACE_TO_R5) {
		tier_leave(op->stripe, op->kind == OP_MIGRATE);
		return;
	}
	if (!op_tiered(op))
		return;
	tier.writes++;
	for (m = 0; m < geom.n; m++) {
		rw = tier_rows(op, m, true);
		k = rs_member_to_k(&geom, op->stripe, m);
		if (rs_range_len(&rw) && k >= 0)
			rs_tier_r_set_rows(&tier.t, tier_rec(tier.s[op->stripe].rec), k,
					   rw.start / RS_TIER_ROW_SECTORS,
					   rw.end / RS_TIER_ROW_SECTORS);
	}
}

/*
 * The offline migration's move of a stripe (rs_r5_plan_migrate()): its
 * rows in the tier from a copy, the others from the home, then the whole
 * stripe home with its parity.
 */
static void op_plan_migrate(struct op *op)
{
	unsigned int m, row, start, rows = tier.t.rows;
	int k;
	bool in;

	op->pending = 1;
	if (tier.s[op->stripe].rec == U32_MAX) {
		op->writing = true;	/* it left the tier meanwhile: nothing to do */
		return;
	}
	op->place = RS_PLACE_TO_R5;
	for (m = 0; m < geom.n; m++) {
		k = rs_member_to_k(&geom, op->stripe, m);
		if (k < 0)
			continue;
		for (start = 0; start < rows; start = row) {
			in = tier_has(op->stripe, k, start);
			row = start + 1;
			while (row < rows && tier_has(op->stripe, k, row) == in)
				row++;
			tier_read(op, m, start * RS_TIER_ROW_SECTORS,
				  min(row * RS_TIER_ROW_SECTORS, geom.chunk));
		}
	}
}

static void mig_later(u64 ns)
{
	if (tier.timer || kshim_now_ns + ns >= t_end)
		return;
	tier.timer = true;
	ev_push(kshim_now_ns + ns, EV_MIGRATE, 0, NULL);
}

/*
 * The clock hand goes round the records in use; a stripe written since it
 * last passed gets a second chance (rs_tier_pick_cold()).
 */
static bool tier_pick_cold(u64 *stripe)
{
	unsigned int laps;
	u64 s;

	for (laps = 0; laps < 3 && tier.used; ) {
		if (tier.clock >= tier.t.records) {
			tier.clock = 0;
			laps++;
			continue;
		}
		s = rs_tier_r_stripe(tier_rec(tier.clock++));
		if (s == U64_MAX)
			continue;
		if (tier.s[s].ref) {
			tier.s[s].ref = false;
			continue;
		}
		*stripe = s;
		return true;
	}
	return false;
}

/* The offline migration's work item (rs_mig_work()): one stripe at a time. */
static void mig_work(void)
{
	struct op *op;
	u64 stripe;

	if (tier.busy || kshim_now_ns >= t_end)
		return;
	tier.active = rs_tier_should_migrate(tier.used, tier.t.records, cfg.tier_low_pct,
					     cfg.tier_high_pct, tier.active);
	if (!tier.active) {
		mig_later(MIG_IDLE_NS);
		return;
	}
	if (kshim_now_ns < tier.next_ns) {
		mig_later(tier.next_ns - kshim_now_ns);
		return;
	}
	if (!tier_pick_cold(&stripe)) {
		mig_later(NSEC_PER_MSEC);
		return;
	}
	if (cfg.mig_rate > 0)	/* a chunk of every member per stripe */
		tier.next_ns = kshim_now_ns + (u64)(geom.chunk / 2 * 1e9 / cfg.mig_rate);
	op = calloc(1, sizeof(*op));
	if (!op)
		die("out of memory");
	op->kind = OP_MIGRATE;
	op->stripe = stripe;
	tier.busy = true;
	if (stripe_trylock(op))
		op_plan(op);
}

/* A move is done: the next at once (the rate limit permitting). */
static void mig_done(void)
{
	tier.busy = false;
	mig_later(0);
}

static void user_next(void);

static void ureq_done(struct ureq *u)
{
	if (--u->pending)
		return;
	lat_add(u->write ? &lat_write : &lat_read, u->t_arrive);
	free(u);
	if (cfg.iodepth && kshim_now_ns < t_end)
		user_next();
}

static void op_done(struct op *op)
{
	struct ureq *u = op->u;

	if (tier.on && (op->kind == OP_WRITE || op->kind == OP_MIGRATE))
		tier_written(op);
	if (op->kind != OP_DIRECT)
		stripe_unlock(op);
	free(op);
	if (u)
		ureq_done(u);
	else
		mig_done();
}

static struct rs_load_snap snap;

/* What the load signals said of every member at an adaptive decision. */
static void sig_sample(const struct rs_load_snap *ls)
{
	unsigned int m;

	if (!measuring)
		return;
	for (m = 0; m < ls->n; m++) {
		const struct rs_member_snap *s = &ls->m[m];
		struct member *mb = &mem[m];

		mb->sig_n++;
		mb->sig_t_read += s->t_read;
		mb->sig_queued += s->reads + s->writes;
		mb->sig_interval += s->interval;
		mb->sig_foreign += (double)s->foreign / RS_OCC_ONE;
	}
}

static void op_plan_write(struct op *op)
{
	struct rs_stripe_shape *s = &op->shape;
	struct rs_write_choice c;
	struct rs_load_snap *ls = NULL;
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	unsigned int m, i, nr;

	if (tier.on)
		tier_plan(op);
	if (op_tiered(op)) {
		/* mirror copies: no parity; the rest of rows written in part is read */
		op->pending = 1;
		tier_prereads(op);
		return;
	}
	if (cfg.policy == RS_POLICY_ADAPTIVE) {
		rs_load_snapshot(&load, 0, &snap);
		sig_sample(&snap);
		ls = &snap;
	}
	op->mode = rs_plan_write(s, cfg.policy, ls, &c);
	if (c.why == RS_WHY_COLD)
		stat_inc(ST_COLD);
	else if (c.why == RS_WHY_COST && c.mode != c.count_mode)
		stat_inc(c.mode == RS_WRITE_RMW ? ST_RMW_ADJ : ST_RCW_ADJ);
	stat_inc(op->mode == RS_WRITE_FULL ? ST_FULL : op->mode == RS_WRITE_RMW ? ST_RMW : ST_RCW);

	/* the pre-reads of the chosen method, as rainssd-shape.c defines them */
	op->pending = 1;	/* held while issuing */
	for (m = 0; m < s->n; m++) {
		nr = rs_shape_reads(s, op->mode, m, r);
		for (i = 0; i < nr; i++)
			member_io(op, m, false, r[i].start, r[i].end);
	}
}

static void op_issue_writes(struct op *op)
{
	struct rs_stripe_shape *s = &op->shape;
	unsigned int m;

	op->writing = true;
	op->pending = 1;
	if (op->kind == OP_MIGRATE) {
		/* the whole stripe home, data and parity */
		for (m = 0; op->place == RS_PLACE_TO_R5 && m < geom.n; m++)
			member_io(op, m, true, 0, geom.chunk);
		return;
	}
	if (op_tiered(op)) {
		tier_writes(op);
		return;
	}
	for (m = 0; m < s->n; m++) {
		struct rs_range w = rs_shape_writes(s, op->mode, m);

		member_io(op, m, true, w.start, w.end);
	}
}

static void op_put(struct op *op);

/* The stripe is ours: plan and issue the first step. */
static void op_plan(struct op *op)
{
	unsigned int m;

	if (op->kind == OP_RECON) {
		op->pending = 1;
		for (m = 0; m < geom.n; m++)
			if (m != op->member)
				member_io(op, m, false, op->row, op->row + op->len);
	} else if (op->kind == OP_MIGRATE) {
		op_plan_migrate(op);
	} else {
		op_plan_write(op);
	}
	op_put(op);
}

/* One step of @op is done (or its issuing ended). */
static void op_put(struct op *op)
{
	if (--op->pending)
		return;
	if ((op->kind == OP_WRITE || op->kind == OP_MIGRATE) && !op->writing) {
		op_issue_writes(op);
		op_put(op);
		return;
	}
	if (op->kind == OP_RECON) {
		u64 cost = (u64)(cfg.rebuild_us * 1000.0);

		stat_inc(ST_RECON);
		/* as rainssd-raid5.c: what the rebuild cost beyond its reads */
		rs_load_rebuilt(&load, cost);
		if (cost) {
			ev_push(kshim_now_ns + cost, EV_REBUILT, 0, op);
			return;
		}
	}
	op_done(op);
}

/* jitter_after: the member has served @r; its completion is seen later. */
static void req_free(struct req *r)
{
	struct member *mb = &mem[r->member];

	mem_account(mb);
	mb->busy--;
	mb->queued--;
	mem_dispatch(r->member);
	ev_push(kshim_now_ns + r->extra, EV_DONE, r->member, r);
}

static void req_done(struct req *r)
{
	struct member *mb = &mem[r->member];

	if (!cfg.jitter_after) {
		mem_account(mb);
		mb->busy--;
		mb->queued--;
	}
	if (measuring) {
		mb->served++;
		if (r->op)
			mb->served_fg++;
		else if (r->foreign)
			mb->served_foreign++;
	}
	/*
	 * The member's device statistics: the target's requests and the
	 * foreign tenant's (it uses the member's device) unless hidden; the
	 * background load runs on another device of the channel.
	 */
	if (r->op || (r->foreign && !cfg.foreign_hidden)) {
		mb->dev_ios++;
		mb->dev_sectors += r->op ? r->tag.sectors : 8;
		mb->dev_ns += kshim_now_ns - r->t_dev;
	}
	if (r->op && rs_load_done(&load, r->member, &r->tag))
		stat_inc(ST_STALLS);
	if (!cfg.jitter_after)
		mem_dispatch(r->member);
	if (r->op) {
		struct op *op = r->op;

		if (op->kind == OP_DIRECT) {
			op->pending--;
			op_done(op);
		} else {
			op_put(op);
		}
	}
	if (r->foreign && kshim_now_ns < t_end) {
		/* closed loop: the tenant's next request at once */
		r->write = rng_below(100) >= cfg.foreign_rpct[r->member];
		r->t_dev = kshim_now_ns;
		mem_submit(r);
		return;
	}
	free(r);
}

static struct op *op_new(struct ureq *u, enum op_kind kind, u64 stripe)
{
	struct op *op = calloc(1, sizeof(*op));

	if (!op)
		die("out of memory");
	op->u = u;
	op->kind = kind;
	op->stripe = stripe;
	u->pending++;
	return op;
}

static void op_start(struct op *op)
{
	if (stripe_trylock(op))
		op_plan(op);
}

static sector_t random_offset(void)
{
	u64 region = (u64)cfg.region_mb << 11, ba = (u64)cfg.ba_kb << 1, bs = (u64)cfg.bs_kb << 1;

	return rng_below((region - bs) / ba + 1) * ba;
}

static void user_write(void)
{
	struct ureq *u = calloc(1, sizeof(*u));
	sector_t start = random_offset(), end = start + ((sector_t)cfg.bs_kb << 1);

	if (!u)
		die("out of memory");
	u->t_arrive = kshim_now_ns;
	u->write = true;
	u->pending = 1;
	user_write_sectors += end - start;
	while (start < end) {
		struct rs_loc loc;
		u64 stripe_end;
		struct op *op;

		rs_map(&geom, start, &loc);
		op = op_new(u, OP_WRITE, loc.stripe);
		/* this stripe's part of the write, as the engine shapes it */
		rs_shape_from_range(&op->shape, &geom, loc.stripe, RS_NO_MEMBER, start, end);
		stripe_end = (loc.stripe + 1) * geom.stripe_data;
		start = min_t(sector_t, end, stripe_end);
		op_start(op);
	}
	ureq_done(u);
}

static bool read_around(unsigned int member)
{
	struct rs_read_choice c;

	if (cfg.read_policy == RS_READ_DIRECT)
		return false;
	if (cfg.read_policy == RS_READ_RECONSTRUCT)
		return true;
	rs_load_snapshot(&load, 0, &snap);
	rs_plan_read(&snap, member, &cfg.tun, &c);
	if (c.why == RS_WHY_PROBE)
		stat_inc(ST_PROBES);
	if (measuring) {
		struct member *mb = &mem[member];

		if (c.why == RS_WHY_PROBE)
			mb->rd_probe++;
		else if (c.reconstruct)
			mb->rd_rebuilt++;
		else
			mb->rd_direct++;
		if (c.why == RS_WHY_COST) {
			mb->sum_cost_direct += c.cost_direct;
			mb->sum_cost_recon += c.cost_recon;
		}
	}
	sig_sample(&snap);
	return c.reconstruct;
}

static void user_read(void)
{
	struct ureq *u = calloc(1, sizeof(*u));
	sector_t start = random_offset(), end = start + ((sector_t)cfg.bs_kb << 1);

	if (!u)
		die("out of memory");
	u->t_arrive = kshim_now_ns;
	u->pending = 1;
	while (start < end) {
		struct rs_loc loc;
		struct op *op;
		unsigned int n;

		rs_map(&geom, start, &loc);
		n = min_t(sector_t, end - start, geom.chunk - loc.row);
		op = op_new(u, OP_DIRECT, loc.stripe);
		op->member = loc.member;
		op->row = loc.row;
		if (tier.on && tier.s[loc.stripe].rec != U32_MAX) {
			/* cut where its rows change from in the tier to not (rs_map_tier_read()) */
			unsigned int row = loc.row / RS_TIER_ROW_SECTORS;
			unsigned int last = DIV_ROUND_UP(loc.row + n, RS_TIER_ROW_SECTORS);
			bool in = tier_has(loc.stripe, loc.k, row);

			while (++row < last && tier_has(loc.stripe, loc.k, row) == in)
				;
			n = min_t(unsigned int, n, row * RS_TIER_ROW_SECTORS - loc.row);
			if (in) {
				/* the less busy copy, never rebuilt */
				op->len = n;
				op->pending = 0;
				tier.reads++;
				member_io(op, tier_copy(tier.s[loc.stripe].rec, loc.k), false,
					  loc.row, loc.row + n);
				start += n;
				continue;
			}
		}
		op->len = n;
		if (read_around(loc.member)) {
			op->kind = OP_RECON;
			op_start(op);
		} else {
			op->pending = 0;
			member_io(op, loc.member, false, loc.row, loc.row + n);
		}
		start += n;
	}
	ureq_done(u);
}

/* Closed loop: the next user request, a read with probability rwmix %. */
static void user_next(void)
{
	if (rng_below(100) < cfg.rwmix)
		user_read();
	else
		user_write();
}

static void background(unsigned int m)
{
	struct req *r = calloc(1, sizeof(*r));

	if (!r)
		die("out of memory");
	r->member = m;
	r->write = rng_next() & 1;
	mem_submit(r);
}

static void foreign_start(unsigned int m)
{
	unsigned int i;

	for (i = 0; i < cfg.foreign_qd[m]; i++) {
		struct req *r = calloc(1, sizeof(*r));

		if (!r)
			die("out of memory");
		r->member = m;
		r->foreign = true;
		r->write = rng_below(100) >= cfg.foreign_rpct[m];
		r->t_dev = kshim_now_ns;
		mem_submit(r);
	}
}

static void stall_begin(unsigned int m)
{
	struct member *mb = &mem[m];

	mb->holding = true;
	mem_dispatch(m);
	ev_push(kshim_now_ns + (u64)(cfg.stall_period_ms[m] * NS_PER_MS), EV_STALL_BEGIN, m, NULL);
}

static void stall_end(unsigned int m)
{
	struct member *mb = &mem[m];

	mb->holding = false;
	mb->timer = false;
	while (mb->hhead) {
		struct req *r = mb->hhead;

		mb->hhead = r->next;
		list_add(&mb->qhead, &mb->qtail, r);
	}
	mb->htail = NULL;
	mem_dispatch(m);
}

/* ---- the run ---- */

static double bg_rate(unsigned int m)
{
	return cfg.bg[m] * cfg.qd * 1e6 / cfg.lat_us[m];
}

static void run(void)
{
	unsigned int m;

	t_measure = (u64)(cfg.warmup_s * 1e9);
	t_end = t_measure + (u64)(cfg.duration_s * 1e9);
	if (cfg.iodepth) {
		unsigned int i;

		for (i = 0; i < cfg.iodepth; i++)
			user_next();
	} else {
		if (cfg.write_iops > 0)
			ev_push(rng_exp_ns(1e9 / cfg.write_iops), EV_USER_WRITE, 0, NULL);
		if (cfg.read_iops > 0)
			ev_push(rng_exp_ns(1e9 / cfg.read_iops), EV_USER_READ, 0, NULL);
	}
	if (tier.on)
		mig_later(0);
	for (m = 0; m < cfg.n; m++) {
		foreign_start(m);
		if (cfg.bg[m] > 0)
			ev_push(rng_exp_ns(1e9 / bg_rate(m)), EV_BG, m, NULL);
		if (cfg.stall_ms[m] > 0)
			ev_push((u64)((cfg.stall_period_ms[m] - cfg.stall_ms[m]) * NS_PER_MS),
				EV_STALL_BEGIN, m, NULL);
	}
	while (heap_len) {
		struct event ev = ev_pop();
		bool arrivals = ev.t < t_end;

		kshim_now_ns = ev.t;
		if (!measuring && ev.t >= t_measure) {
			for (m = 0; m < cfg.n; m++)
				mem_account(&mem[m]);
			measuring = true;
		}
		switch (ev.type) {
		case EV_USER_WRITE:
		case EV_USER_READ:
			if (!arrivals)
				break;
			if (ev.type == EV_USER_WRITE)
				user_write();
			else
				user_read();
			ev_push(ev.t + rng_exp_ns(1e9 / (ev.type == EV_USER_WRITE ? cfg.write_iops :
								 cfg.read_iops)), ev.type, 0, NULL);
			break;
		case EV_BG:
			if (!arrivals)
				break;
			background(ev.m);
			ev_push(ev.t + rng_exp_ns(1e9 / bg_rate(ev.m)), EV_BG, ev.m, NULL);
			break;
		case EV_DONE:
			req_done(ev.p);
			break;
		case EV_STALL_BEGIN:
			if (arrivals)
				stall_begin(ev.m);
			break;
		case EV_STALL_END:
			stall_end(ev.m);
			break;
		case EV_SUBMIT:
			mem_submit(ev.p);
			break;
		case EV_FREE:
			req_free(ev.p);
			break;
		case EV_REBUILT:
			op_done(ev.p);
			break;
		case EV_MIGRATE:
			tier.timer = false;
			mig_work();
			break;
		}
		if (!arrivals && measuring) {
			for (m = 0; m < cfg.n; m++)
				mem_account(&mem[m]);
			measuring = false;
		}
	}
}

/* ---- output ---- */

static void print_lat(const char *name, struct lat_set *s, double secs, bool json, bool last)
{
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	if (json) {
		printf("  \"%s\": {\"ios\": %zu, \"iops\": %.2f, \"mean_ms\": %.3f, \"p50_ms\": %.3f, "
		       "\"p99_ms\": %.3f, \"p99.9_ms\": %.3f, \"p99.99_ms\": %.3f, \"max_ms\": %.3f}%s\n",
		       name, s->n, s->n / secs, s->n ? s->sum / s->n / NS_PER_MS : 0,
		       lat_pct(s, 50), lat_pct(s, 99), lat_pct(s, 99.9), lat_pct(s, 99.99),
		       s->n ? s->v[s->n - 1] / NS_PER_MS : 0, last ? "" : ",");
		return;
	}
	if (!s->n)
		return;
	printf("%-6s %9zu %9.1f %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f\n", name, s->n, s->n / secs,
	       s->sum / s->n / NS_PER_MS, lat_pct(s, 50), lat_pct(s, 99), lat_pct(s, 99.9),
	       lat_pct(s, 99.99), s->v[s->n - 1] / NS_PER_MS);
}

static double cv(const double *v, unsigned int n)
{
	double mean = 0, var = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		mean += v[i] / n;
	if (mean <= 0)
		return 0;
	for (i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean) / n;
	return sqrt(var) / mean;
}

static double ratio(u64 a, u64 b)
{
	return b ? (double)a / b : 0;
}

/* The tier's figures, the whole run. */
static void report_tier(bool json)
{
	const char *fmt = json ?
		"  \"tier\": {\"records\": %u, \"slots\": %u, \"used\": %u, \"used_peak\": %u, "
		"\"to_r1\": %llu, \"to_r5\": %llu, \"offline\": %llu, \"writes\": %llu, "
		"\"reads\": %llu, \"row_prereads\": %llu, \"hit_ratio\": %.4f, "
		"\"write_amplification\": %.4f},\n" :
		"tier: records %u, slots %u per member, used %u (peak %u), to_r1 %llu, to_r5 %llu, "
		"offline %llu, writes %llu, reads %llu, row_prereads %llu, hit ratio %.3f, "
		"write amplification %.3f\n";

	printf(fmt, tier.t.records, tier.t.slots, tier.used, tier.peak,
	       (unsigned long long)tier.to_r1, (unsigned long long)tier.to_r5,
	       (unsigned long long)tier.offline, (unsigned long long)tier.writes,
	       (unsigned long long)tier.reads, (unsigned long long)tier.row_reads,
	       ratio(tier.placed_tier, tier.placed),
	       ratio(member_write_sectors, user_write_sectors));
}

static void report(void)
{
	double secs = cfg.duration_s, load_q[RS_MAX_DEVS], dur = cfg.duration_s * 1e9;
	unsigned int m, i;

	for (m = 0; m < cfg.n; m++)
		load_q[m] = mem[m].area_queued / dur;
	if (cfg.json) {
		printf("{\n  \"policy\": \"%s\", \"read_policy\": \"%s\", \"seed\": %llu,\n",
		       rs_policy_name(cfg.policy), rs_read_policy_name(cfg.read_policy),
		       (unsigned long long)cfg.seed);
		printf("  \"member_load_cv\": %.4f,\n", cv(load_q, cfg.n));
		printf("  \"user_write_sectors\": %llu, \"member_write_sectors\": %llu,\n",
		       (unsigned long long)user_write_sectors,
		       (unsigned long long)member_write_sectors);
		if (tier.on)
			report_tier(true);
		printf("  \"counters\": {");
		for (i = 0; i < ST_NR; i++)
			printf("%s\"%s\": %llu", i ? ", " : "", st_names[i],
			       (unsigned long long)stats[i]);
		printf("},\n  \"members\": [");
		for (m = 0; m < cfg.n; m++) {
			const struct member *mb = &mem[m];
			double nd = mb->rd_direct + mb->rd_rebuilt, ns = mb->sig_n;

			printf("%s{\"util\": %.4f, \"mean_queued\": %.4f, \"ios_per_s\": %.1f, "
			       "\"foreign_ios_per_s\": %.1f, \"reads_direct\": %llu, "
			       "\"reads_rebuilt\": %llu, \"reads_probed\": %llu, "
			       "\"cost_direct_us\": %.1f, \"cost_recon_us\": %.1f, "
			       "\"t_read_us\": %.1f, \"own_queued\": %.3f, \"arrivals_per_s\": %.1f, "
			       "\"foreign_queued\": %.3f}",
			       m ? ", " : "", mb->area_busy / dur / cfg.qd, load_q[m],
			       mb->served_fg / secs, mb->served_foreign / secs,
			       (unsigned long long)mb->rd_direct, (unsigned long long)mb->rd_rebuilt,
			       (unsigned long long)mb->rd_probe,
			       nd ? mb->sum_cost_direct / nd / 1e3 : 0,
			       nd ? mb->sum_cost_recon / nd / 1e3 : 0,
			       ns ? mb->sig_t_read / ns / 1e3 : 0, ns ? mb->sig_queued / ns : 0,
			       mb->sig_interval > 0 ? ns / (mb->sig_interval / 1e9) : 0,
			       ns ? mb->sig_foreign / ns : 0);
		}
		printf("],\n");
		print_lat("read", &lat_read, secs, true, false);
		print_lat("write", &lat_write, secs, true, true);
		printf("}\n");
		return;
	}
	printf("policy %s, read_policy %s, %u members, seed %llu, %.0f s measured\n",
	       rs_policy_name(cfg.policy), rs_read_policy_name(cfg.read_policy), cfg.n,
	       (unsigned long long)cfg.seed, secs);
	printf("%-6s %9s %9s %8s %8s %8s %8s %9s %9s   (ms)\n", "", "ios", "iops", "mean",
	       "p50", "p99", "p99.9", "p99.99", "max");
	print_lat("read", &lat_read, secs, false, false);
	print_lat("write", &lat_write, secs, false, true);
	for (i = 0; i < ST_NR; i++)
		printf("%s%s %llu", i ? ", " : "", st_names[i], (unsigned long long)stats[i]);
	printf("\nmember load CV %.3f; per member util/mean queued:", cv(load_q, cfg.n));
	for (m = 0; m < cfg.n; m++)
		printf(" %.2f/%.2f", mem[m].area_busy / dur / cfg.qd, load_q[m]);
	printf("\n");
	if (tier.on)
		report_tier(false);
}

/* ---- options ---- */

static const struct {
	const char *name;
	size_t off;
} tunables[] = {
	{ "ewma_weight", offsetof(struct rs_tunables, ewma_weight) },
	{ "freq_window", offsetof(struct rs_tunables, freq_window) },
	{ "stall_factor", offsetof(struct rs_tunables, stall_factor) },
	{ "xor_ns", offsetof(struct rs_tunables, xor_ns) },
	{ "probe_ms", offsetof(struct rs_tunables, probe_ms) },
	{ "recon_load_pct", offsetof(struct rs_tunables, recon_load_pct) },
};

static void set_tunable(const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned int i;

	if (!eq)
		die("--tun needs NAME=VALUE, not '%s'", arg);
	for (i = 0; i < ARRAY_SIZE(tunables); i++) {
		if (strlen(tunables[i].name) == (size_t)(eq - arg) &&
		    !strncmp(arg, tunables[i].name, eq - arg)) {
			*(unsigned int *)((char *)&cfg.tun + tunables[i].off) =
				(unsigned int)strtoul(eq + 1, NULL, 10);
			return;
		}
	}
	die("unknown tunable in '%s'", arg);
}

/* A whole number @min..@max, or die. */
static unsigned int parse_uint(const char *arg, unsigned long min, unsigned long max,
			       const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (end == arg || *end || errno || v < min || v > max || strchr(arg, '-'))
		die("%s: expected a whole number %lu..%lu, not '%s'", what, min, max, arg);
	return (unsigned int)v;
}

/* "m:x[:y]" for the disturbances */
static unsigned int parse_member_arg(const char *arg, double *x, double *y, const char *what)
{
	char *end;
	unsigned long m = strtoul(arg, &end, 10);

	if (*end != ':' || m >= RS_MAX_DEVS)
		die("%s: expected MEMBER:VALUE, not '%s'", what, arg);
	*x = strtod(end + 1, &end);
	if (y) {
		if (*end != ':')
			die("%s: expected MEMBER:MS:PERIOD_MS, not '%s'", what, arg);
		*y = strtod(end + 1, &end);
	}
	if (*end)
		die("%s: trailing characters in '%s'", what, arg);
	return (unsigned int)m;
}

/* "m:qd[:readpct]" for --foreign */
static unsigned int parse_foreign_arg(const char *arg)
{
	char *end;
	unsigned long m = strtoul(arg, &end, 10), qd, pct = 100;

	if (*end != ':' || m >= RS_MAX_DEVS)
		die("--foreign: expected MEMBER:QD[:READ_PCT], not '%s'", arg);
	qd = strtoul(end + 1, &end, 10);
	if (*end == ':')
		pct = strtoul(end + 1, &end, 10);
	if (*end || !qd || qd > 4096 || pct > 100)
		die("--foreign: expected MEMBER:QD[:READ_PCT], QD 1..4096, not '%s'", arg);
	cfg.foreign_qd[m] = (unsigned int)qd;
	cfg.foreign_rpct[m] = (unsigned int)pct;
	return (unsigned int)m;
}

static void usage(FILE *f)
{
	fputs("usage: rainssd-sim [options]\n"
	      "Simulate a rainssd volume on emulated channels with the module's own policy\n"
	      "and load-signal code; print read and write latency percentiles.\n"
	      "  --members N         members (default 5)\n"
	      "  --chunk-kb K        chunk size (default 16)\n"
	      "  --lat-us US         service time of every member (default 4000)\n"
	      "  --lat-list a,b,...  per-member service times\n"
	      "  --qd Q              requests a member serves at once (default 1)\n"
	      "  --write-iops R      user write rate, Poisson (default 80)\n"
	      "  --read-iops R       user read rate, Poisson (default 0)\n"
	      "  --iodepth D         closed loop instead: D requests outstanding, each\n"
	      "                      completion starts the next (fio without a rate)\n"
	      "  --rwmix P           closed loop: P% of the requests are reads (default 0)\n"
	      "  --write-delay-ms D  member writes wait D ms before reaching the member\n"
	      "                      (dm-delay on writes, the scenarios' write_extra_ms)\n"
	      "  --bs-kb K           I/O size (default 4); --ba-kb K alignment (default bs)\n"
	      "  --region-mb M       region the offsets fall in (default 128)\n"
	      "  --duration S        simulated seconds measured (default 600)\n"
	      "  --warmup S          simulated seconds before measuring (default 5)\n"
	      "  --policy P          count, rmw, rcw or adaptive (default count)\n"
	      "  --read-policy P     direct, adaptive or reconstruct (default direct)\n"
	      "  --tun NAME=V        a tunable (ewma_weight, freq_window, stall_factor,\n"
	      "                      xor_ns, probe_ms, recon_load_pct), as the table line\n"
	      "  --slow M:F          member M serves F times slower\n"
	      "  --bg M:F            background load on member M, F of its capacity\n"
	      "  --foreign M:Q[:R]   a foreign closed-loop tenant on member M keeping Q\n"
	      "                      requests outstanding, R% of them reads (default 100),\n"
	      "                      on the member's own device: in its I/O statistics\n"
	      "  --foreign-hidden    the tenant uses another device of the channel: its\n"
	      "                      I/O is not in the member's statistics\n"
	      "  --no-devstat        the load signals do not read the members' statistics\n"
	      "                      (the module before it could)\n"
	      "  --stall M:MS:PER    member M stalls MS ms every PER ms\n"
	      "  --jitter-us J       add an exponential delay of mean J to each service\n"
	      "  --jitter-file F     add a delay drawn from F, lines '<extra_us> <weight>'\n"
	      "                      (a histogram, e.g. an emulator's measured overhead)\n"
	      "  --rebuild-us R      a rebuilt read ends R us after its last member read\n"
	      "                      (work items, XOR, copy), and the load signals\n"
	      "                      measure that as the module does (default 0)\n"
	      "  --jitter-after      the jitter delays each completion without keeping\n"
	      "                      the member busy (default: it lengthens the service)\n"
	      "  --tier-mb M         a RAID1 tier of M MiB of every member (default 0: none)\n"
	      "  --migration-threshold T\n"
	      "                      HybRAID's online migration threshold, 1..63 (default 4)\n"
	      "  --home-threshold H  writes in the tier before an aligned full-stripe write\n"
	      "                      moves a stripe home, 1..63 (default 1; HybRAID: 4)\n"
	      "  --tier-high-pct H   the offline migration starts above H% of the stripes\n"
	      "                      the tier holds (default 90) ...\n"
	      "  --tier-low-pct L    ... and stops at L% (default 70)\n"
	      "  --migration-rate R  the offline migration's limit, KiB/s per member\n"
	      "                      (default 0: unlimited)\n"
	      "  --seed S            random seed (default 1)\n"
	      "  --json              JSON output\n"
	      "Exit status: 0 ok, 2 usage error.\n", f);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "members", 1, NULL, 'n' }, { "chunk-kb", 1, NULL, 'c' },
		{ "lat-us", 1, NULL, 'l' }, { "lat-list", 1, NULL, 'L' },
		{ "qd", 1, NULL, 'q' }, { "write-iops", 1, NULL, 'w' },
		{ "read-iops", 1, NULL, 'r' }, { "bs-kb", 1, NULL, 'b' },
		{ "ba-kb", 1, NULL, 'a' }, { "region-mb", 1, NULL, 'R' },
		{ "duration", 1, NULL, 'd' }, { "warmup", 1, NULL, 'W' },
		{ "policy", 1, NULL, 'p' }, { "read-policy", 1, NULL, 'P' },
		{ "tun", 1, NULL, 't' }, { "slow", 1, NULL, 's' }, { "bg", 1, NULL, 'g' },
		{ "foreign", 1, NULL, 'f' }, { "foreign-hidden", 0, NULL, 'H' },
		{ "no-devstat", 0, NULL, 'N' },
		{ "stall", 1, NULL, 'S' }, { "jitter-us", 1, NULL, 'j' },
		{ "jitter-file", 1, NULL, 'F' }, { "jitter-after", 0, NULL, 'A' },
		{ "rebuild-us", 1, NULL, 'B' },
		{ "iodepth", 1, NULL, 'i' }, { "rwmix", 1, NULL, 'x' },
		{ "write-delay-ms", 1, NULL, 'D' }, { "seed", 1, NULL, 'e' }, { "json", 0, NULL, 'J' }, { "help", 0, NULL, 'h' },
		{ "tier-mb", 1, NULL, 'T' }, { "migration-threshold", 1, NULL, 'M' },
		{ "tier-high-pct", 1, NULL, 'X' }, { "tier-low-pct", 1, NULL, 'Y' },
		{ "migration-rate", 1, NULL, 'Z' }, { "home-threshold", 1, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	double lat = 4000, x, y;
	char *list = NULL;
	unsigned int m;
	int c;

	cfg.n = 5;
	cfg.chunk_kb = 16;
	cfg.qd = 1;
	cfg.bs_kb = 4;
	cfg.region_mb = 128;
	cfg.write_iops = 80;
	cfg.duration_s = 600;
	cfg.warmup_s = 5;
	cfg.seed = 1;
	cfg.policy = RS_POLICY_COUNT;
	cfg.read_policy = RS_READ_DIRECT;
	cfg.mig_threshold = RS_DEF_MIGRATION_THRESHOLD;
	cfg.home_threshold = RS_DEF_HOME_THRESHOLD;
	cfg.tier_high_pct = RS_DEF_TIER_HIGH_PCT;
	cfg.tier_low_pct = RS_DEF_TIER_LOW_PCT;
	rs_tunables_default(&cfg.tun);
	for (m = 0; m < RS_MAX_DEVS; m++)
		cfg.slow[m] = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': cfg.n = atoi(optarg); break;
		case 'c': cfg.chunk_kb = atoi(optarg); break;
		case 'l': lat = atof(optarg); break;
		case 'L': list = optarg; break;
		case 'q': cfg.qd = atoi(optarg); break;
		case 'w': cfg.write_iops = atof(optarg); break;
		case 'r': cfg.read_iops = atof(optarg); break;
		case 'b': cfg.bs_kb = atoi(optarg); break;
		case 'a': cfg.ba_kb = atoi(optarg); break;
		case 'R': cfg.region_mb = atoi(optarg); break;
		case 'd': cfg.duration_s = atof(optarg); break;
		case 'W': cfg.warmup_s = atof(optarg); break;
		case 'p':
			if (rs_policy_parse(optarg, &cfg.policy))
				die("unknown policy '%s'", optarg);
			break;
		case 'P':
			if (rs_read_policy_parse(optarg, &cfg.read_policy))
				die("unknown read policy '%s'", optarg);
			break;
		case 't': set_tunable(optarg); break;
		case 's':
			m = parse_member_arg(optarg, &x, NULL, "--slow");
			cfg.slow[m] = x;
			break;
		case 'g':
			m = parse_member_arg(optarg, &x, NULL, "--bg");
			cfg.bg[m] = x;
			break;
		case 'f':
			m = parse_foreign_arg(optarg);
			break;
		case 'H': cfg.foreign_hidden = true; break;
		case 'N': cfg.no_devstat = true; break;
		case 'S':
			m = parse_member_arg(optarg, &x, &y, "--stall");
			cfg.stall_ms[m] = x;
			cfg.stall_period_ms[m] = y;
			break;
		case 'j': cfg.jitter_us = atof(optarg); break;
		case 'F': jitter_load(optarg); break;
		case 'A': cfg.jitter_after = true; break;
		case 'B': cfg.rebuild_us = atof(optarg); break;
		case 'i': cfg.iodepth = atoi(optarg); break;
		case 'x': cfg.rwmix = atoi(optarg); break;
		case 'D': cfg.write_delay_ms = atof(optarg); break;
		case 'e': cfg.seed = strtoull(optarg, NULL, 10); break;
		case 'J': cfg.json = true; break;
		case 'T': cfg.tier_mb = parse_uint(optarg, 0, 1U << 20, "--tier-mb"); break;
		case 'M':
			cfg.mig_threshold = parse_uint(optarg, 1, TIER_HIST_MAX,
						       "--migration-threshold");
			break;
		case 'O':
			cfg.home_threshold = parse_uint(optarg, 1, TIER_HIST_MAX, "--home-threshold");
			break;
		case 'X': cfg.tier_high_pct = parse_uint(optarg, 0, 100, "--tier-high-pct"); break;
		case 'Y': cfg.tier_low_pct = parse_uint(optarg, 0, 100, "--tier-low-pct"); break;
		case 'Z':
			cfg.mig_rate = parse_uint(optarg, 0, 2000000000, "--migration-rate");
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (rs_geom_init(&geom, cfg.n, cfg.chunk_kb * 2))
		die("bad geometry: members 3..32, chunk a power of two from 4 to 1024 KiB");
	if (!cfg.ba_kb)
		cfg.ba_kb = cfg.bs_kb;
	if (cfg.rwmix > 100)
		die("--rwmix is a percentage");
	if (cfg.tier_low_pct > cfg.tier_high_pct)
		die("--tier-low-pct must not exceed --tier-high-pct");
	if (!cfg.bs_kb || !cfg.qd || cfg.duration_s <= 0 || cfg.warmup_s < 0 ||
	    (u64)cfg.region_mb * 1024 < cfg.bs_kb)
		die("bad --bs-kb, --qd, --duration, --warmup or --region-mb");
	for (m = 0; m < cfg.n; m++)
		cfg.lat_us[m] = lat;
	for (m = 0; list && m < cfg.n; m++) {
		char *end;

		cfg.lat_us[m] = strtod(list, &end);
		if (end == list)
			die("--lat-list: bad number at '%s'", list);
		list = *end == ',' ? end + 1 : NULL;
	}
	for (m = cfg.n; m < RS_MAX_DEVS; m++)
		if (cfg.foreign_qd[m])
			die("--foreign: member %u out of range", m);
	for (m = 0; m < cfg.n; m++) {
		if (cfg.lat_us[m] <= 0)
			die("member %u: the service time must be positive", m);
		if (cfg.stall_ms[m] > 0 && cfg.stall_period_ms[m] <= cfg.stall_ms[m])
			die("member %u: the stall period must be longer than the stall", m);
		mem[m].svc_ns = (u64)(cfg.lat_us[m] * cfg.slow[m] * 1000.0);
	}
	rng_state ^= cfg.seed * 0x9E3779B97F4A7C15ULL;
	if (!rng_state)
		rng_state = 1;
}

/* The tier's layout and state (rs_tier_setup()), for the region's stripes. */
static void tier_init(void)
{
	u64 sectors = round_down((u64)cfg.tier_mb << 11, (u64)geom.chunk), i;
	unsigned int m;
	int r;

	if (!cfg.tier_mb)
		return;
	tier.stripes = DIV_ROUND_UP((u64)cfg.region_mb << 11, geom.stripe_data);
	r = rs_tier_layout(&tier.t, &geom, tier.stripes, 0, sectors);
	if (r)
		die(r == -E2BIG ? "--tier-mb too large: more than 2^24 stripes in the tier" :
				  "--tier-mb too small to hold its table and one stripe");
	tier.s = calloc(tier.stripes, sizeof(*tier.s));
	tier.recs = calloc(tier.t.records, tier.t.rec_size);
	if (!tier.s || !tier.recs)
		die("out of memory");
	for (i = 0; i < tier.stripes; i++)
		tier.s[i].rec = U32_MAX;
	for (m = 0; m < geom.n; m++)
		tier.free[m] = tier.t.slots;
	tier.on = true;
}

/* The load signals' view of member @m's device statistics. */
static bool devstat(void *ctx, unsigned int m, struct rs_devcount *c)
{
	(void)ctx;
	c->ios = mem[m].dev_ios;
	c->sectors = mem[m].dev_sectors;
	c->ns = mem[m].dev_ns;
	return true;
}

/* The module reads them in a work item soon after; here at once. */
static void devstat_kick(void *ctx)
{
	(void)ctx;
	rs_load_devstat_read(&load);
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	tier_init();
	if (rs_load_init(&load, cfg.n, &cfg.tun))
		die("out of memory");
	if (!cfg.no_devstat)
		rs_load_set_devstat(&load, devstat, devstat_kick, NULL);
	run();
	report();
	rs_load_exit(&load);
	return 0;
}
