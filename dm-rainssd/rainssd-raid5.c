// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd RAID-5 state machine (see rainssd-raid5.h).
 *
 * Buffers: stripe i of the operation (0 <= i < nr) holds rows rows(i) of
 * every member, member m's at pages base(i) + m * np(i) on. The first and
 * last stripe hold the rows their write recomputes; stripes between them are
 * full and hold whole chunks.
 */
#include <linux/highmem.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-fault.h"
#include "rainssd-raid5.h"
#include "rainssd-xor.h"

/* The first or last stripe of an operation, which may be partial. */
struct rs_r5_end {
	struct rs_stripe_shape shape;
	enum rs_write_mode mode;
	enum rs_write_mode count_mode;	/* what count would have chosen */
	enum rs_why why;
};

struct rs_r5_op {
	struct rs_op op;		/* first: the op layer allocates us */
	bool read;			/* a user read rebuilt from the other members */
	unsigned long dead;		/* the dead members the plan was made for */
	sector_t lstart, lend;		/* the logical sectors it serves */
	struct rs_range rows[2];	/* rows buffered: first, last stripe */
	unsigned int np[2];		/* buffer pages per member: first, last stripe */
	struct rs_r5_end end[2];	/* first, last stripe (only [0] when nr == 1) */

	/* Reads. */
	unsigned int member;		/* the member holding the data */
	bool by_choice;			/* rebuilt by the read policy, not for a dead member */
	bool direct;			/* another member is dead: read it where it is */
	u64 t_map;			/* mapped, ns */
	u64 t_issue;			/* its member reads submitted, ns */
};

static struct rs_r5_op *to_r5(struct rs_op *op)
{
	return container_of(op, struct rs_r5_op, op);
}

size_t rs_r5_op_size(void)
{
	return sizeof(struct rs_r5_op);
}

static unsigned int rs_pages_for(unsigned int sectors)
{
	return DIV_ROUND_UP(sectors << SECTOR_SHIFT, PAGE_SIZE);
}

/* The most stripes of one write operation: RS_OP_MAX_STRIPES, in rs_op_max_pages(). */
unsigned int rs_r5_max_stripes(const struct rs_geom *g)
{
	unsigned int stripe_pages = g->n * rs_pages_for(g->chunk);

	return clamp_t(unsigned int, rs_op_max_pages(g) / stripe_pages, 1, RS_OP_MAX_STRIPES);
}

/* ---- buffer addressing ---- */

/* Which end stripe i is: 0 first, 1 last, -1 between (full). */
static int rs_r5_end_of(const struct rs_r5_op *r5, unsigned int i)
{
	if (i == 0)
		return 0;
	return i == r5->op.nr - 1 ? 1 : -1;
}

static struct rs_range rs_r5_rows(const struct rs_r5_op *r5, unsigned int i)
{
	int e = rs_r5_end_of(r5, i);
	struct rs_range full = { 0, r5->op.rs->geom.chunk };

	return e < 0 ? full : r5->rows[e];
}

static unsigned int rs_r5_np(const struct rs_r5_op *r5, unsigned int i)
{
	int e = rs_r5_end_of(r5, i);

	return e < 0 ? rs_pages_for(r5->op.rs->geom.chunk) : r5->np[e];
}

/* Index in op->pages of the page holding byte @boff of member @m's rows of stripe @i. */
static unsigned int rs_r5_pidx(const struct rs_r5_op *r5, unsigned int i, unsigned int m,
			       unsigned int boff)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int base = 0;

	if (i)
		base = g->n * (r5->np[0] + (i - 1) * rs_pages_for(g->chunk));
	return base + m * rs_r5_np(r5, i) + (boff >> PAGE_SHIFT);
}

static void *rs_r5_addr(const struct rs_r5_op *r5, unsigned int i, unsigned int m,
			unsigned int boff)
{
	return page_address(r5->op.pages[rs_r5_pidx(r5, i, m, boff)]) + offset_in_page(boff);
}

/* Byte offset of member row @row in stripe @i's buffers. */
static unsigned int rs_r5_boff(const struct rs_r5_op *r5, unsigned int i, unsigned int row)
{
	return (row - rs_r5_rows(r5, i).start) << SECTOR_SHIFT;
}

/* Stripe @i's shape and mode; @tmp holds a full stripe's. */
static const struct rs_stripe_shape *rs_r5_stripe(const struct rs_r5_op *r5, unsigned int i,
						  struct rs_stripe_shape *tmp,
						  enum rs_write_mode *mode)
{
	int e = rs_r5_end_of(r5, i);
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int dead = r5->dead ? __ffs(r5->dead) : RS_NO_MEMBER;
	u64 stripe = r5->op.stripe + i;

	if (e >= 0) {
		*mode = r5->end[e].mode;
		return &r5->end[e].shape;
	}
	rs_shape_from_range(tmp, g, stripe, dead, stripe * g->stripe_data,
			    (stripe + 1) * g->stripe_data);
	*mode = dead == tmp->parity ? RS_WRITE_NOPARITY : RS_WRITE_FULL;
	return tmp;
}

/* Add member @m's rows [start, end) of stripe @i to the batch. */
static void rs_r5_add(struct rs_r5_op *r5, unsigned int i, unsigned int m, blk_opf_t opf,
		      unsigned int start, unsigned int end, unsigned int hint)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int boff = rs_r5_boff(r5, i, start);

	if (start >= end)
		return;
	rs_batch_add(&r5->op, m, opf, rs_member_sector(g, r5->op.stripe + i, start),
		     rs_r5_pidx(r5, i, m, boff), offset_in_page(boff),
		     (end - start) << SECTOR_SHIFT, hint);
}

/*
 * dst's rows [start, end) of stripe @i: (@keep ? dst : nothing) XOR every
 * member in @srcs. Without @keep the first source is copied, not XORed.
 */
static void rs_r5_xor(struct rs_r5_op *r5, unsigned int i, unsigned int dst,
		      unsigned long srcs, unsigned int start, unsigned int end, bool keep)
{
	unsigned int n = r5->op.rs->geom.n;
	unsigned int boff = rs_r5_boff(r5, i, start);
	unsigned int left = (end - start) << SECTOR_SHIFT;
	void *src[RS_MAX_DEVS];

	while (left) {
		unsigned int len = min_t(unsigned int, left, PAGE_SIZE - offset_in_page(boff));
		void *d = rs_r5_addr(r5, i, dst, boff);
		unsigned int m, k = 0;

		for_each_set_bit(m, &srcs, n)
			src[k++] = rs_r5_addr(r5, i, m, boff);
		if (keep) {
			rs_xor_blocks(d, src, k, len);
		} else if (k) {
			memcpy(d, src[0], len);
			rs_xor_blocks(d, src + 1, k - 1, len);
		}
		boff += len;
		left -= len;
	}
}

/* Copy between the user bio's piece (op->iter, logical) and the data buffers. */
static void rs_r5_copy(struct rs_r5_op *r5, bool to_bio)
{
	struct rs_op *op = &r5->op;
	const struct rs_geom *g = &op->rs->geom;
	struct bvec_iter it;
	struct bio_vec bv;

	__bio_for_each_segment(bv, op->bio, it, op->iter) {
		sector_t pos = it.bi_sector;
		unsigned int done = 0;
		void *ubuf = bvec_kmap_local(&bv);

		while (done < bv.bv_len) {
			struct rs_loc loc;
			unsigned int i, boff, len;
			void *buf;

			rs_map(g, pos, &loc);
			i = loc.stripe - op->stripe;
			boff = rs_r5_boff(r5, i, loc.row);
			len = min3(bv.bv_len - done, (g->chunk - loc.row) << SECTOR_SHIFT,
				   (unsigned int)(PAGE_SIZE - offset_in_page(boff)));
			buf = rs_r5_addr(r5, i, loc.member, boff);
			if (to_bio)
				memcpy(ubuf + done, buf, len);
			else
				memcpy(buf, ubuf + done, len);
			done += len;
			pos += len >> SECTOR_SHIFT;
		}
		kunmap_local(ubuf);
	}
}

/* ---- the end ---- */

static void rs_r5_finish(struct rs_r5_op *r5, blk_status_t status)
{
	struct rainssd *rs = r5->op.rs;
	struct bio *bio = r5->op.bio;

	rs_op_put(&r5->op);
	rs_bio_endio_piece(rs, bio, status);
}

/* Members whose bio of the last step failed are failed (1.3.0: any error). */
static void rs_r5_fail_members(struct rs_r5_op *r5)
{
	struct rainssd *rs = r5->op.rs;
	unsigned int m;

	for_each_set_bit(m, &r5->op.failed, rs->geom.n)
		rs_member_failed(rs, m);
}

/*
 * Whether the pre-reads can be used: every one completed, and no member
 * died since the plan (a dying member fails what it has in flight, and the
 * plan may have read around it or relied on it).
 */
static bool rs_r5_reads_valid(struct rs_r5_op *r5)
{
	struct rainssd *rs = r5->op.rs;

	if (!r5->op.failed && READ_ONCE(rs->dead_mask) == r5->dead)
		return true;
	rs_r5_fail_members(r5);
	rs_stat_inc(rs, RS_STAT_REPLANS);
	return false;
}

/* ---- writes ---- */

static void rs_r5_plan(struct rs_op *op);

static void rs_r5_count(struct rainssd *rs, const struct rs_r5_end *e)
{
	if (e->why == RS_WHY_COLD)
		rs_stat_inc(rs, RS_STAT_COLD);
	else if (e->why == RS_WHY_COST && e->mode != e->count_mode)
		rs_stat_inc(rs, e->mode == RS_WRITE_RMW ? RS_STAT_RMW_ADJUSTED :
							  RS_STAT_RCW_ADJUSTED);
	if (e->shape.dead != RS_NO_MEMBER)
		rs_stat_inc(rs, RS_STAT_DEGRADED);
	else if (e->mode == RS_WRITE_FULL)
		rs_stat_inc(rs, RS_STAT_FULL);
	else
		rs_stat_inc(rs, e->mode == RS_WRITE_RMW ? RS_STAT_RMW : RS_STAT_RCW);
}

/* The pre-reads of the end stripes. */
static void rs_r5_build_prereads(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	unsigned int e, m, k, nr;

	for (e = 0; e < (op->nr > 1 ? 2 : 1); e++) {
		const struct rs_r5_end *end = &r5->end[e];
		unsigned int i = e ? op->nr - 1 : 0;

		for (m = 0; m < rs->geom.n; m++) {
			if (test_bit(m, &r5->dead))
				continue;
			nr = rs_shape_reads(&end->shape, end->mode, m, r);
			for (k = 0; k < nr; k++) {
				rs_r5_add(r5, i, m, REQ_OP_READ, r[k].start, r[k].end, 0);
				rs_stat_inc(rs, RS_STAT_PREREADS);
				rs_mstat_inc(rs, m, RS_MSTAT_PREREADS);
			}
		}
	}
}

/*
 * The rows member @m writes in stripe @i: an end stripe's by its method, a
 * whole chunk in the stripes between (a dead member writes nothing).
 */
static struct rs_range rs_r5_write_rows(const struct rs_r5_op *r5, unsigned int i,
					unsigned int m)
{
	int e = rs_r5_end_of(r5, i);

	if (e >= 0)
		return rs_shape_writes(&r5->end[e].shape, r5->end[e].mode, m);
	return rs_r5_rows(r5, i);
}

/* The data and parity writes, member by member so that each is one range. */
static void rs_r5_build_writes(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	blk_opf_t opf = REQ_OP_WRITE |
			(op->bio->bi_opf & (REQ_FUA | REQ_SYNC | REQ_META | REQ_PRIO));
	struct rs_range w;
	unsigned int m, i, left;

	for (m = 0; m < rs->geom.n; m++) {
		/* Dead at the plan, or since: its rows are in the others' parity. */
		if (test_bit(m, &r5->dead) || rs_member_dead(rs, m))
			continue;
		left = 0;
		for (i = 0; i < op->nr; i++) {
			w = rs_r5_write_rows(r5, i, m);
			left += rs_range_len(&w) << SECTOR_SHIFT;
		}
		for (i = 0; i < op->nr; i++) {
			w = rs_r5_write_rows(r5, i, m);
			rs_r5_add(r5, i, m, opf, w.start, w.end, left);
			left -= rs_range_len(&w) << SECTOR_SHIFT;
		}
	}
}

static void rs_r5_written(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	/* A failed member write is held by the parity (or data) that landed. */
	rs_r5_fail_members(r5);
	rs_r5_finish(r5, rs_dead_count(op->rs) > 1 ? BLK_STS_IOERR : BLK_STS_OK);
}

/* Before the user's data lands in the buffers: what needs the old contents. */
static void rs_r5_compute_old(struct rs_r5_op *r5, unsigned int i,
			      const struct rs_stripe_shape *s, enum rs_write_mode mode)
{
	unsigned int n = s->n, m;
	unsigned long others;

	switch (mode) {
	case RS_WRITE_RMW:
		for (m = 0; m < n; m++)
			if (m != s->parity && rs_range_len(&s->w[m]))
				rs_r5_xor(r5, i, s->parity, BIT(m), s->w[m].start, s->w[m].end,
					  true);
		return;
	case RS_WRITE_RECONSTRUCT:
		/* The dead member's old rows, from every other member's. */
		others = GENMASK(n - 1, 0) & ~BIT(s->dead);
		rs_r5_xor(r5, i, s->dead, others, s->rows.start, s->rows.end, false);
		return;
	default:
		return;
	}
}

/* After: the new parity. */
static void rs_r5_compute_new(struct rs_r5_op *r5, unsigned int i,
			      const struct rs_stripe_shape *s, enum rs_write_mode mode)
{
	unsigned int n = s->n, m;

	switch (mode) {
	case RS_WRITE_RMW:
		for (m = 0; m < n; m++)
			if (m != s->parity && rs_range_len(&s->w[m]))
				rs_r5_xor(r5, i, s->parity, BIT(m), s->w[m].start, s->w[m].end,
					  true);
		return;
	case RS_WRITE_RCW:
	case RS_WRITE_FULL:
	case RS_WRITE_RECONSTRUCT:
		rs_r5_xor(r5, i, s->parity, GENMASK(n - 1, 0) & ~BIT(s->parity),
			  s->rows.start, s->rows.end, false);
		return;
	default:
		return;
	}
}

static void rs_r5_compute(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rs_stripe_shape tmp;
	enum rs_write_mode mode;
	const struct rs_stripe_shape *s;
	unsigned int i;

	if (!rs_r5_reads_valid(r5))
		return rs_r5_plan(op);

	for (i = 0; i < op->nr; i++) {
		s = rs_r5_stripe(r5, i, &tmp, &mode);
		rs_r5_compute_old(r5, i, s, mode);
	}
	rs_r5_copy(r5, false);
	for (i = 0; i < op->nr; i++) {
		s = rs_r5_stripe(r5, i, &tmp, &mode);
		rs_r5_compute_new(r5, i, s, mode);
		if (rs_r5_end_of(r5, i) >= 0)
			rs_r5_count(op->rs, &r5->end[rs_r5_end_of(r5, i)]);
		else
			rs_stat_inc(op->rs, s->dead != RS_NO_MEMBER ? RS_STAT_DEGRADED :
								     RS_STAT_FULL);
	}
	rs_batch_run(op, rs_r5_build_writes, rs_r5_written);
}

/* The parity method for end stripe @e, from the policy. */
static void rs_r5_plan_end(struct rs_r5_op *r5, unsigned int e, unsigned int dead)
{
	struct rainssd *rs = r5->op.rs;
	struct rs_r5_end *end = &r5->end[e];
	u64 stripe = r5->op.stripe + (e ? r5->op.nr - 1 : 0);
	enum rs_policy p = READ_ONCE(rs->policy);
	struct rs_load_snap *snap = NULL;
	struct rs_write_choice c;

	rs_shape_from_range(&end->shape, &rs->geom, stripe, dead, r5->lstart, r5->lend);
	if (p == RS_POLICY_ADAPTIVE && dead == RS_NO_MEMBER) {
		snap = get_cpu_ptr(rs->snap);
		rs_load_snapshot(&rs->load, r5->dead, snap);
	}
	end->mode = rs_plan_write(&end->shape, p, snap, &c);
	if (snap)
		put_cpu_ptr(rs->snap);
	end->why = c.why;
	end->count_mode = c.count_mode;
}

static void rs_r5_plan_write(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	unsigned int dead = r5->dead ? __ffs(r5->dead) : RS_NO_MEMBER;
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	bool reads = false;
	unsigned int e, m;

	for (e = 0; e < (op->nr > 1 ? 2 : 1); e++) {
		rs_r5_plan_end(r5, e, dead);
		for (m = 0; m < r5->end[e].shape.n && !reads; m++)
			reads = rs_shape_reads(&r5->end[e].shape, r5->end[e].mode, m, r);
	}
	if (!reads)
		return rs_r5_compute(op);
	rs_fault_delay(RS_FAULT_DELAY_PREREAD);
	rs_batch_run(op, rs_r5_build_prereads, rs_r5_compute);
}

/* ---- reads rebuilt from the other members ---- */

static void rs_r5_build_read(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	const struct rs_range *rows = &r5->rows[0];
	unsigned int m;

	for (m = 0; m < rs->geom.n; m++) {
		bool own = m == r5->member;

		/* Direct: only the member itself; rebuilt: every other live member. */
		if (test_bit(m, &r5->dead) || own != r5->direct)
			continue;
		rs_r5_add(r5, 0, m, REQ_OP_READ, rows->start, rows->end, 0);
		if (m != r5->member)
			rs_mstat_inc(rs, m, RS_MSTAT_RECON_READS);
	}
}

static void rs_r5_read_done(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	const struct rs_range *rows = &r5->rows[0];
	unsigned long others = GENMASK(rs->geom.n - 1, 0) & ~BIT(r5->member);

	if (!rs_r5_reads_valid(r5))
		return rs_r5_plan(op);
	if (!r5->direct) {
		rs_r5_xor(r5, 0, r5->member, others, rows->start, rows->end, false);
		rs_stat_inc(rs, RS_STAT_RECON_READS);
		if (r5->by_choice) {
			rs_stat_inc(rs, RS_STAT_CHOSEN_RECON);
			rs_mstat_inc(rs, r5->member, RS_MSTAT_BYPASSED);
		}
	}
	rs_r5_copy(r5, true);
	/* What the rebuild cost beyond its reads, for the read policy's t_xor. */
	if (r5->by_choice && !r5->direct && !r5->dead)
		rs_load_rebuilt(&rs->load, r5->t_issue - r5->t_map +
				ktime_get_ns() - op->t_done);
	rs_r5_finish(r5, BLK_STS_OK);
}

static void rs_r5_plan_read(struct rs_r5_op *r5)
{
	unsigned int dead = r5->dead ? __ffs(r5->dead) : RS_NO_MEMBER;

	/* With another member dead there is nothing to rebuild from: read it. */
	r5->direct = dead != RS_NO_MEMBER && dead != r5->member;
	rs_fault_delay(RS_FAULT_DELAY_PREREAD);
	r5->t_issue = ktime_get_ns();
	rs_batch_run(&r5->op, rs_r5_build_read, rs_r5_read_done);
}

/* ---- planning ---- */

/* The stripes are ours: look at the live members and plan (again). */
static void rs_r5_plan(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	r5->dead = READ_ONCE(op->rs->dead_mask);
	if (hweight_long(r5->dead) > 1)
		return rs_r5_finish(r5, BLK_STS_IOERR);
	if (r5->read)
		rs_r5_plan_read(r5);
	else
		rs_r5_plan_write(r5);
}

/* ---- cutting user bios into operations ---- */

/*
 * Set @r5 up for logical sectors [ls, le) of @rb's bio and return the
 * buffer pages it needs; with @r5 NULL only count them.
 */
static unsigned int rs_r5_setup(struct rainssd *rs, struct rs_r5_op *r5, struct rs_bio *rb,
				sector_t ls, sector_t le)
{
	const struct rs_geom *g = &rs->geom;
	u64 first = div_u64(ls, g->stripe_data);
	unsigned int nr = div_u64(le - 1, g->stripe_data) - first + 1;
	struct rs_range rows[2];
	unsigned int np[2], e, pages;

	for (e = 0; e < (nr > 1 ? 2 : 1); e++) {
		rows[e] = rs_shape_span_rows(g, first + (e ? nr - 1 : 0), ls, le);
		np[e] = rs_pages_for(rs_range_len(&rows[e]));
	}
	pages = np[0];
	if (nr > 1)
		pages += np[1] + (nr - 2) * rs_pages_for(g->chunk);
	if (r5) {
		struct rs_loc loc;

		r5->op.stripe = first;
		r5->op.nr = nr;
		r5->lstart = ls;
		r5->lend = le;
		memcpy(r5->rows, rows, sizeof(rows));
		memcpy(r5->np, np, sizeof(np));
		rs_map(g, ls, &loc);
		r5->member = loc.member;
		r5->by_choice = rb->by_choice;
		r5->t_map = rb->t_map;
	}
	return g->n * pages;
}

/*
 * Hand what is left of @bio (its per-bio iter) to operations; false when one
 * could not be had, with the rest left in the iter for the next call.
 */
bool rs_r5_feed(struct rainssd *rs, struct bio *bio)
{
	const struct rs_geom *g = &rs->geom;
	unsigned int maxs = rs_r5_max_stripes(g);
	struct rs_bio *rb = rs_bio(bio);
	bool read = bio_op(bio) == REQ_OP_READ;

	while (rb->iter.bi_size) {
		sector_t ls = rb->iter.bi_sector;
		sector_t le = ls + (rb->iter.bi_size >> SECTOR_SHIFT);
		u64 stripe = div_u64(ls, g->stripe_data);
		unsigned int pages;
		struct rs_r5_op *r5;
		struct rs_op *op;

		/* Reads come one chunk at a time (the map cuts them). */
		if (!read)
			le = min_t(sector_t, le, (stripe + maxs) * g->stripe_data);
		pages = rs_r5_setup(rs, NULL, rb, ls, le);
		op = rs_op_get(rs, DIV_ROUND_UP(pages, g->n));
		if (!op)
			return false;
		r5 = to_r5(op);
		r5->read = read;
		rs_r5_setup(rs, r5, rb, ls, le);
		op->bio = bio;
		op->iter = rb->iter;
		op->iter.bi_size = (le - ls) << SECTOR_SHIFT;
		atomic_inc(&rb->pending);
		bio_advance_iter(bio, &rb->iter, op->iter.bi_size);
		rs_op_start(op, pages, rs_r5_plan);
	}
	/* Every piece is out: drop the cutting reference. */
	rs_bio_endio_piece(rs, bio, BLK_STS_OK);
	return true;
}
