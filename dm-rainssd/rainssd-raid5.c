// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd RAID-5 state machine (see rainssd-raid5.h).
 *
 * Buffers: stripe i of the operation (0 <= i < nr) holds rows rows(i) of
 * every member, member m's at pages base(i) + m * np(i) on. The first and
 * last stripe hold the rows their write recomputes; stripes between them are
 * full and hold whole chunks (as do every stripe of a sync operation).
 *
 * Which members an operation may not read in stripe s: the failed ones,
 * the rebuilding one when s is at or above its checkpoint, and those whose
 * read failed in this operation (op-local: a bad sector is not a dead
 * member). It may not write the first two. More than one member it may not
 * read in a stripe it has to rebuild or update: an I/O error, never a
 * made-up byte. Parity of stripes at or above the initial resync's
 * checkpoint was never made: nothing is rebuilt from it there.
 */
#include <linux/highmem.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-fault.h"
#include "rainssd-log.h"
#include "rainssd-meta.h"
#include "rainssd-raid5.h"
#include "rainssd-xor.h"

/* The first or last stripe of an operation, which may be partial. */
struct rs_r5_end {
	struct rs_stripe_shape shape;
	enum rs_write_mode mode;
	enum rs_write_mode count_mode;	/* what count would have chosen */
	enum rs_why why;
};

enum rs_r5_kind {
	RS_R5_WRITE,		/* a user write */
	RS_R5_READ,		/* a user read rebuilt from the other members (or repaired) */
	RS_R5_RESYNC,		/* parity made from the data (no user bio) */
	RS_R5_REBUILD,		/* the rebuilding member's chunks made from the others */
	RS_R5_CHECK,		/* scrub: count the sectors whose parity disagrees */
	RS_R5_REPAIR,		/* scrub: ... and make their parity from the data */
};

struct rs_r5_op {
	struct rs_op op;		/* first: the op layer allocates us */
	enum rs_r5_kind kind;
	/* What the plan was made for. */
	unsigned long dead;		/* failed members */
	unsigned int rb;		/* the rebuilding member, or RS_NO_MEMBER */
	u64 rb_cp;			/* its checkpoint */
	u64 resync_cp;			/* the initial resync's checkpoint */
	unsigned long bad;		/* members whose read failed in this operation */
	unsigned long skip;		/* members dead when its writes were built */
	u8 gate;			/* how far between compute and write (rs_r5_gate) */
	bool bm_started;		/* its writes are counted in the bitmap */
	bool logged;			/* it holds degraded-log records */
	sector_t lstart, lend;		/* the logical sectors it serves */
	struct rs_range rows[2];	/* rows buffered: first, last stripe */
	unsigned int np[2];		/* buffer pages per member: first, last stripe */
	struct rs_r5_end end[2];	/* first, last stripe (only [0] when nr == 1) */

	/* Reads. */
	unsigned int member;		/* the member holding the data */
	bool by_choice;			/* rebuilt by the read policy, not for a dead member */
	bool repair;			/* the member's read failed: write the rebuilt data back */
	bool direct;			/* read it where it is */
	u64 t_map;			/* mapped, ns */
	u64 t_issue;			/* its member reads submitted, ns */

	/* Sync operations. */
	rs_r5_done_fn done;
	void *done_ctx;
	unsigned long mismatched;	/* scrub: stripes i whose parity disagreed */
	u64 mismatch_sectors;
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

/* ---- which members a stripe can use ---- */

/* Members that may not be read or written in stripe @i: failed, or being rebuilt there. */
static unsigned long rs_r5_dead_of(const struct rs_r5_op *r5, unsigned int i)
{
	unsigned long d = r5->dead;

	if (r5->rb != RS_NO_MEMBER && r5->op.stripe + i >= r5->rb_cp)
		d |= BIT(r5->rb);
	return d;
}

/* Members that may not be read in stripe @i. */
static unsigned long rs_r5_unread_of(const struct rs_r5_op *r5, unsigned int i)
{
	return rs_r5_dead_of(r5, i) | r5->bad;
}

static unsigned int rs_one(unsigned long mask)
{
	return mask ? __ffs(mask) : RS_NO_MEMBER;
}

/*
 * Whether stripe @i's parity is known to match its data (so that data can
 * be rebuilt from it): made by the initial resync, and not in a region an
 * unclean shutdown left to resync.
 */
static bool rs_r5_synced(const struct rs_r5_op *r5, unsigned int i)
{
	u64 stripe = r5->op.stripe + i;

	return stripe < r5->resync_cp && !rs_bitmap_needs_sync(r5->op.rs->bitmap, stripe);
}

/* Stripe @i's shape and mode; @tmp holds a full stripe's. */
static const struct rs_stripe_shape *rs_r5_stripe(const struct rs_r5_op *r5, unsigned int i,
						  struct rs_stripe_shape *tmp,
						  enum rs_write_mode *mode)
{
	int e = rs_r5_end_of(r5, i);
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int dead = rs_one(rs_r5_dead_of(r5, i));
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

static void rs_r5_plan(struct rs_op *op);

/*
 * The end: a user bio's piece completes once the stripes are let go; a
 * sync operation's owner hears of it before, so that its checkpoint moves
 * while the stripes are still held.
 */
static void rs_r5_finish(struct rs_r5_op *r5, blk_status_t status)
{
	struct rainssd *rs = r5->op.rs;
	struct bio *bio = r5->op.bio;

	if (r5->bm_started)
		rs_bitmap_end(rs->bitmap, &r5->op);
	if (r5->logged)
		rs_log_done(rs->log, &r5->op);
	if (!bio)
		r5->done(r5->done_ctx, status, r5->mismatch_sectors);
	rs_op_put(&r5->op);
	if (bio)
		rs_bio_endio_piece(rs, bio, status);
}

/*
 * The last step's failed bios: a failed write fails its member; a failed
 * read is a read error (rs_read_error: the member is failed once it has had
 * too many) and the member is not read again in this operation.
 */
static void rs_r5_note_failures(struct rs_r5_op *r5, bool reads)
{
	struct rainssd *rs = r5->op.rs;
	unsigned int m;

	for_each_set_bit(m, &r5->op.failed, rs->geom.n) {
		if (!reads)
			rs_member_failed(rs, m, "write error");
		else if (!rs_read_error(rs, m))
			__set_bit(m, &r5->bad);
	}
}

/*
 * Whether the pre-reads can be used: every one completed, and no member
 * died since the plan (a dying member fails what it has in flight, and the
 * plan may have read around it or relied on it). Otherwise the plan is
 * made again, without the members that failed a read.
 */
static bool rs_r5_reads_valid(struct rs_r5_op *r5)
{
	struct rainssd *rs = r5->op.rs;

	if (!r5->op.failed && READ_ONCE(rs->dead_mask) == r5->dead)
		return true;
	rs_r5_note_failures(r5, true);
	rs_stat_inc(rs, RS_STAT_REPLANS);
	return false;
}

/* ---- writes ---- */

/* Where rs_r5_gate() is. */
enum {
	RS_R5_GATE_META,
	RS_R5_GATE_BITMAP,
	RS_R5_GATE_LOG,
	RS_R5_GATE_WRITE,
};

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
		unsigned long unread = rs_r5_unread_of(r5, i);

		for (m = 0; m < rs->geom.n; m++) {
			if (test_bit(m, &unread))
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
 * whole chunk in the stripes between; nothing where it is dead.
 */
static struct rs_range rs_r5_write_rows(const struct rs_r5_op *r5, unsigned int i,
					unsigned int m)
{
	int e = rs_r5_end_of(r5, i);
	struct rs_range none = { 0, 0 };

	if (test_bit(m, &r5->skip) || (rs_r5_dead_of(r5, i) & BIT(m)))
		return none;
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

	/* Members that died since the plan: their rows are in the others' parity. */
	r5->skip = READ_ONCE(rs->dead_mask);
	for (m = 0; m < rs->geom.n; m++) {
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

/*
 * The writes are in. A write that skipped a failed member is acknowledged
 * only once that member's failure is in the superblocks, so that no reload
 * or reboot brings it back with the old data.
 */
static void rs_r5_ack(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_finish(r5, rs_dead_count(op->rs) > 1 ? BLK_STS_IOERR : BLK_STS_OK);
}

static void rs_r5_written(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;

	/* A failed member write is held by the parity (or data) that landed. */
	rs_r5_note_failures(r5, false);
	if (READ_ONCE(rs->dead_mask) && !rs_meta_wait_committed(rs->meta, op, rs_r5_ack))
		return;
	rs_r5_ack(op);
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
		/* The unreadable member's old rows, from every other member's. */
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

/* ---- between compute and write ---- */

/*
 * Whether stripe @i's update is logged: a member cannot be written there
 * (failed, or rebuilt above its checkpoint), so its parity could not be
 * remade from the data after a crash; not when the parity member is that
 * one (there is no parity to keep then).
 */
static bool rs_r5_needs_log(const struct rs_r5_op *r5, unsigned int i)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned long dead = rs_r5_dead_of(r5, i);

	return dead && !(dead & BIT(rs_parity_member(g, r5->op.stripe + i)));
}

/*
 * Partial parity of stripe @i into the lost member's buffer, which the
 * writes do not use: the new parity XOR the new data of every member that
 * is written there, i.e. every data chunk as it will be except those.
 */
static void rs_r5_partial_parity(struct rs_r5_op *r5, unsigned int i, unsigned int lost)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int p = rs_parity_member(g, r5->op.stripe + i), m;
	struct rs_range rows = rs_r5_rows(r5, i), w;

	rs_r5_xor(r5, i, lost, BIT(p), rows.start, rows.end, false);
	for (m = 0; m < g->n; m++) {
		if (m == p || m == lost)
			continue;
		w = rs_r5_write_rows(r5, i, m);
		if (rs_range_len(&w))
			rs_r5_xor(r5, i, lost, BIT(m), w.start, w.end, true);
	}
}

/* The @k-th logged stripe of @r5, described for rs_log_write(). */
static void rs_r5_log_fill(struct rs_op *op, unsigned int k, struct rs_log_update *u)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	unsigned int i, m, lost;

	for (i = 0; i < op->nr; i++)
		if (rs_r5_needs_log(r5, i) && !k--)
			break;
	lost = rs_one(rs_r5_dead_of(r5, i));
	memset(u, 0, sizeof(*u));
	u->stripe = op->stripe + i;
	u->parity = rs_parity_member(g, u->stripe);
	u->rows = rs_r5_rows(r5, i);
	for (m = 0; m < g->n; m++)
		if (m != u->parity)
			u->w[m] = rs_r5_write_rows(r5, i, m);
	u->pp_pidx = rs_r5_pidx(r5, i, lost, 0);
}

static void rs_r5_gate(struct rs_op *op);

/* The degraded-log records are on disk (or one could not be written). */
static void rs_r5_logged(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	if (op->failed) {
		/* A parity member failed its record: plan again without it. */
		rs_log_done(op->rs->log, op);
		r5->logged = false;
		rs_r5_note_failures(r5, false);
		rs_stat_inc(op->rs, RS_STAT_REPLANS);
		return rs_r5_plan(op);
	}
	r5->gate = RS_R5_GATE_WRITE;
	rs_r5_gate(op);
}

/*
 * Between compute and write, each step at most once (an operation that
 * waits comes back here): the failed members' state on disk before an
 * update that leaves one out; the bitmap's bits of its regions on disk;
 * the degraded-log records of its stripes whose parity could not be remade
 * from the data after a crash; then the writes.
 */
static void rs_r5_gate(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	unsigned int i, nr_log = 0;

	switch (r5->gate) {
	case RS_R5_GATE_META:
		for (i = 0; i < op->nr; i++)
			if (rs_r5_dead_of(r5, i))
				break;
		if (i < op->nr && !rs_meta_wait_committed(rs->meta, op, rs_r5_gate))
			return;
		r5->gate = RS_R5_GATE_BITMAP;
		fallthrough;
	case RS_R5_GATE_BITMAP:
		r5->gate = RS_R5_GATE_LOG;
		if (!r5->bm_started) {
			r5->bm_started = true;
			if (!rs_bitmap_start(rs->bitmap, op, rs_r5_gate))
				return;
		}
		fallthrough;
	case RS_R5_GATE_LOG:
		for (i = 0; i < op->nr; i++) {
			if (!rs_r5_needs_log(r5, i))
				continue;
			rs_r5_partial_parity(r5, i, rs_one(rs_r5_dead_of(r5, i)));
			nr_log++;
		}
		if (nr_log) {
			r5->logged = true;
			rs_log_write(rs->log, op, nr_log, rs_r5_log_fill,
				     rs_meta_log_nonce(rs->meta), rs_r5_logged, rs_r5_gate);
			return;
		}
		fallthrough;
	default:
		rs_batch_run(op, rs_r5_build_writes, rs_r5_written);
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
	r5->gate = RS_R5_GATE_META;
	rs_r5_gate(op);
}

/*
 * The parity method for end stripe @e, from the policy, with @unread the
 * one member it may not read there (or none). A member that is only
 * unreadable, not dead, is still written: with it as the parity member the
 * stripe goes by reconstruct-write, not by skipping the parity.
 */
static void rs_r5_plan_end(struct rs_r5_op *r5, unsigned int e, unsigned int unread)
{
	struct rainssd *rs = r5->op.rs;
	struct rs_r5_end *end = &r5->end[e];
	unsigned int i = e ? r5->op.nr - 1 : 0;
	u64 stripe = r5->op.stripe + i;
	enum rs_policy p = READ_ONCE(rs->policy);
	struct rs_load_snap *snap = NULL;
	struct rs_write_choice c;

	rs_shape_from_range(&end->shape, &rs->geom, stripe, unread, r5->lstart, r5->lend);
	if (p == RS_POLICY_ADAPTIVE && unread == RS_NO_MEMBER) {
		snap = get_cpu_ptr(rs->snap);
		rs_load_snapshot(&rs->load, r5->dead, snap);
	}
	end->mode = rs_plan_write(&end->shape, p, snap, &c);
	if (snap)
		put_cpu_ptr(rs->snap);
	end->why = c.why;
	end->count_mode = c.count_mode;
	if (end->mode == RS_WRITE_NOPARITY && unread != RS_NO_MEMBER &&
	    !(rs_r5_dead_of(r5, i) & BIT(unread)))
		end->mode = rs_shape_is_full(&end->shape) ? RS_WRITE_FULL : RS_WRITE_RCW;
}

static void rs_r5_plan_write(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	unsigned long unread;
	bool reads = false;
	unsigned int e, m, i;

	/* Two members lost in a stripe it updates: its data cannot be kept. */
	for (i = 0; i < op->nr; i++)
		if (hweight_long(rs_r5_dead_of(r5, i)) > 1)
			return rs_r5_finish(r5, BLK_STS_IOERR);
	for (e = 0; e < (op->nr > 1 ? 2 : 1); e++) {
		i = e ? op->nr - 1 : 0;
		unread = rs_r5_unread_of(r5, i);
		if (hweight_long(unread) > 1)
			return rs_r5_finish(r5, BLK_STS_IOERR);
		rs_r5_plan_end(r5, e, rs_one(unread));
		for (m = 0; m < r5->end[e].shape.n && !reads; m++)
			reads = rs_shape_reads(&r5->end[e].shape, r5->end[e].mode, m, r);
	}
	if (!reads)
		return rs_r5_compute(op);
	rs_fault_delay(RS_FAULT_DELAY_PREREAD);
	rs_batch_run(op, rs_r5_build_prereads, rs_r5_compute);
}

/* ---- reads rebuilt from the other members (and repaired) ---- */

static void rs_r5_build_read(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	const struct rs_range *rows = &r5->rows[0];
	unsigned long unread = rs_r5_unread_of(r5, 0);
	unsigned int m;

	for (m = 0; m < rs->geom.n; m++) {
		bool own = m == r5->member;

		/* Direct: only the member itself; rebuilt: every other member. */
		if (test_bit(m, &unread) || own != r5->direct)
			continue;
		rs_r5_add(r5, 0, m, REQ_OP_READ, rows->start, rows->end, 0);
		if (m != r5->member)
			rs_mstat_inc(rs, m, RS_MSTAT_RECON_READS);
	}
}

/* The rebuilt data is back on the member that could not read it. */
static void rs_r5_repaired(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;

	if (op->failed)
		rs_member_failed(rs, r5->member, "write error while repairing a read error");
	else
		rs_mstat_inc(rs, r5->member, RS_MSTAT_REPAIRED);
	rs_r5_finish(r5, BLK_STS_OK);
}

static void rs_r5_build_repair(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_add(r5, 0, r5->member, REQ_OP_WRITE, r5->rows[0].start, r5->rows[0].end, 0);
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
	if (r5->by_choice && !r5->direct && !rs_r5_unread_of(r5, 0))
		rs_load_rebuilt(&rs->load, r5->t_issue - r5->t_map +
				ktime_get_ns() - op->t_done);
	/* A member that failed the read and may be written: the data goes back (fix_read_error). */
	if (!r5->direct && (r5->bad & BIT(r5->member)) &&
	    !(rs_r5_dead_of(r5, 0) & BIT(r5->member)) && !rs_member_dead(rs, r5->member))
		return rs_batch_run(op, rs_r5_build_repair, rs_r5_repaired);
	rs_r5_finish(r5, BLK_STS_OK);
}

static void rs_r5_plan_read(struct rs_r5_op *r5)
{
	unsigned long unread = rs_r5_unread_of(r5, 0);
	unsigned long others = unread & ~BIT(r5->member);

	if (others) {
		/* Another member cannot be read: the data only where it is. */
		if (unread & BIT(r5->member))
			return rs_r5_finish(r5, BLK_STS_IOERR);
		r5->direct = true;
	} else if (unread & BIT(r5->member)) {
		/* The member cannot be read: rebuild, if the parity was ever made. */
		if (!rs_r5_synced(r5, 0))
			return rs_r5_finish(r5, BLK_STS_IOERR);
		r5->direct = false;
	} else {
		/* Rebuilt by choice; where the parity was never made, read it. */
		r5->direct = !rs_r5_synced(r5, 0);
	}
	rs_fault_delay(RS_FAULT_DELAY_PREREAD);
	r5->t_issue = ktime_get_ns();
	rs_batch_run(&r5->op, rs_r5_build_read, rs_r5_read_done);
}

/* ---- resync and rebuild ---- */

/*
 * Every stripe's chunks of every member but the one being rebuilt: one
 * range per member. A resync reads the old parity too, which it overwrites.
 */
static void rs_r5_build_sync_reads(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	unsigned int m, i;

	for (m = 0; m < g->n; m++) {
		if (r5->kind == RS_R5_REBUILD && m == r5->rb)
			continue;
		for (i = 0; i < op->nr; i++)
			rs_r5_add(r5, i, m, REQ_OP_READ, 0, g->chunk,
				  (op->nr - i) * (g->chunk << SECTOR_SHIFT));
	}
}

/* The parity (resync, repair) or the rebuilt member's chunks (rebuild), one range. */
static void rs_r5_build_sync_writes(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	unsigned int i, m;

	for (i = 0; i < op->nr; i++) {
		if (r5->kind == RS_R5_REPAIR && !test_bit(i, &r5->mismatched))
			continue;
		m = r5->kind == RS_R5_REBUILD ? r5->rb : rs_parity_member(g, op->stripe + i);
		rs_r5_add(r5, i, m, REQ_OP_WRITE, 0, g->chunk,
			  (op->nr - i) * (g->chunk << SECTOR_SHIFT));
	}
}

/*
 * Scrub stripe @i: XOR every member's chunk into the parity's buffer; what
 * is not zero is where the parity disagrees with the data (counted in
 * sectors, as md's mismatch_cnt). A repair then makes that stripe's parity
 * from the data.
 */
static void rs_r5_scrub(struct rs_r5_op *r5, unsigned int i)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int p = rs_parity_member(g, r5->op.stripe + i), row, sectors = 0;
	unsigned long data = GENMASK(g->n - 1, 0) & ~BIT(p);

	rs_r5_xor(r5, i, p, data, 0, g->chunk, true);
	for (row = 0; row < g->chunk; row++)
		if (memchr_inv(rs_r5_addr(r5, i, p, row << SECTOR_SHIFT), 0, SECTOR_SIZE))
			sectors++;
	if (!sectors)
		return;
	r5->mismatch_sectors += sectors;
	__set_bit(i, &r5->mismatched);
	if (r5->kind == RS_R5_REPAIR)
		rs_r5_xor(r5, i, p, data, 0, g->chunk, false);
}

static void rs_r5_sync_written(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_note_failures(r5, false);
	rs_r5_finish(r5, op->failed ? BLK_STS_IOERR : BLK_STS_OK);
}

static void rs_r5_sync_compute(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	unsigned long all = GENMASK(g->n - 1, 0);
	unsigned int i, dst;

	if (op->failed) {
		/* A source cannot be read: this stretch cannot be made now. */
		rs_r5_note_failures(r5, true);
		return rs_r5_finish(r5, BLK_STS_IOERR);
	}
	for (i = 0; i < op->nr; i++) {
		if (r5->kind == RS_R5_CHECK || r5->kind == RS_R5_REPAIR) {
			rs_r5_scrub(r5, i);
			continue;
		}
		dst = r5->kind == RS_R5_REBUILD ? r5->rb : rs_parity_member(g, op->stripe + i);
		rs_r5_xor(r5, i, dst, all & ~BIT(dst), 0, g->chunk, false);
	}
	if (r5->kind == RS_R5_CHECK || (r5->kind == RS_R5_REPAIR && !r5->mismatched))
		return rs_r5_finish(r5, BLK_STS_OK);
	rs_batch_run(op, rs_r5_build_sync_writes, rs_r5_sync_written);
}

static void rs_r5_plan_sync(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	unsigned long lost = r5->dead;

	/* Every source must be there (and, to rebuild, the parity made). */
	if (r5->kind == RS_R5_REBUILD) {
		lost &= ~BIT(r5->rb);
		if (r5->rb == RS_NO_MEMBER || !rs_r5_synced(r5, op->nr - 1))
			lost = 1;
	} else if (r5->rb != RS_NO_MEMBER && op->stripe + op->nr > r5->rb_cp) {
		/* The rebuilding member does not hold its data above the checkpoint. */
		lost |= BIT(r5->rb);
	}
	if (lost)
		return rs_r5_finish(r5, BLK_STS_IOERR);
	rs_batch_run(op, rs_r5_build_sync_reads, rs_r5_sync_compute);
}

/* ---- planning ---- */

/* The stripes are ours: look at the members' states and plan (again). */
static void rs_r5_plan(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;

	/*
	 * The last step's failures are noted (a plan made again follows
	 * rs_r5_note_failures()); a plan that needs no pre-read goes straight
	 * to compute, which must not take them for new ones (it would plan
	 * again, for ever: a stack overflow when a member died).
	 */
	op->failed = 0;
	r5->dead = READ_ONCE(rs->dead_mask);
	r5->rb = READ_ONCE(rs->rebuild_member);
	r5->rb_cp = READ_ONCE(rs->rebuild_cp);
	r5->resync_cp = READ_ONCE(rs->resync_cp);
	switch (r5->kind) {
	case RS_R5_WRITE:
		return rs_r5_plan_write(r5);
	case RS_R5_READ:
		return rs_r5_plan_read(r5);
	default:
		return rs_r5_plan_sync(r5);
	}
}

/* ---- making operations ---- */

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
		r5->repair = rb->repair;
		r5->t_map = rb->t_map;
		if (rb->repair)
			r5->bad = BIT(loc.member);
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
		r5->kind = read ? RS_R5_READ : RS_R5_WRITE;
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

/*
 * Start a resync (parity from the data), a rebuild of the rebuilding
 * member, or a scrub (check: count the sectors whose parity disagrees;
 * repair: and make it from the data) of stripes [stripe, stripe + nr);
 * @done runs in the workqueue when it has ended. False when no operation
 * can be had now.
 */
bool rs_r5_sync(struct rainssd *rs, u64 stripe, unsigned int nr, enum rs_r5_sync_kind what,
		rs_r5_done_fn done, void *ctx)
{
	const struct rs_geom *g = &rs->geom;
	unsigned int pages = nr * g->n * rs_pages_for(g->chunk);
	struct rs_r5_op *r5;
	struct rs_op *op;

	op = rs_op_get(rs, DIV_ROUND_UP(pages, g->n));
	if (!op)
		return false;
	r5 = to_r5(op);
	r5->kind = what == RS_R5_SYNC_REBUILD ? RS_R5_REBUILD :
		   what == RS_R5_SYNC_CHECK ? RS_R5_CHECK :
		   what == RS_R5_SYNC_REPAIR ? RS_R5_REPAIR : RS_R5_RESYNC;
	op->stripe = stripe;
	op->nr = nr;
	r5->rows[0].end = g->chunk;
	r5->rows[1].end = g->chunk;
	r5->np[0] = rs_pages_for(g->chunk);
	r5->np[1] = r5->np[0];
	r5->done = done;
	r5->done_ctx = ctx;
	rs_op_start(op, pages, rs_r5_plan);
	return true;
}
