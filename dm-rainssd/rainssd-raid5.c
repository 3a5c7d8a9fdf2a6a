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
#include "rainssd-tiermap.h"
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
	RS_R5_MIGRATE,		/* a stripe's tier rows written into its home (no user bio) */
	RS_R5_TREAD,		/* a read of tier rows whose copy failed: the other, repaired */
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
	bool stale;			/* a member failed since the plan: no writes built */
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
	bool direct;			/* read it where it is */
	u64 t_map;			/* mapped, ns */
	u64 t_issue;			/* its member reads submitted, ns */

	/* Sync operations. */
	rs_r5_done_fn done;
	void *done_ctx;
	unsigned long mismatched;	/* scrub: stripes i whose parity disagreed */
	u64 mismatch_sectors;		/* (migration: the sectors per member it moved) */

	/* The tier (rainssd-tiermap.h): where each stripe's write goes. */
	bool tier_planned;
	unsigned long tbad;		/* copies' members not to read from (a failed copy) */
	bool tier_changed;		/* moved rows or stripes: a FUA write waits for a commit */
	u8 place[RS_OP_MAX_STRIPES];	/* enum rs_place */
	u32 rec[RS_OP_MAX_STRIPES];	/* the record of a stripe placed in the tier */
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

/* The most stripes of one write: RS_OP_MAX_STRIPES, in rs_op_max_pages() without a tier. */
unsigned int rs_r5_max_stripes(const struct rs_geom *g)
{
	unsigned int stripe_pages = g->n * rs_pages_for(g->chunk);

	return clamp_t(unsigned int, rs_op_max_pages(g, false) / stripe_pages, 1,
		       RS_OP_MAX_STRIPES);
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
 * unclean shutdown left to resync, below where the degraded-write log
 * covers the updates (the resync stops there too, rs_sync_next()). Up to
 * 1.11.16 a whole region counted: after a power cut during a rebuild, the
 * rebuilding member's chunks above its checkpoint in the checkpoint's
 * region (with the default region size, the whole volume) read as I/O
 * errors until the resync below the checkpoint had ended.
 */
static bool rs_r5_synced(const struct rs_r5_op *r5, unsigned int i)
{
	struct rainssd *rs = r5->op.rs;
	u64 stripe = r5->op.stripe + i;

	return stripe < r5->resync_cp && (stripe >= READ_ONCE(rs->log_cover) ||
					   !rs_bitmap_needs_sync(rs->bitmap, stripe));
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

/* ---- the tier ---- */

/* Whether stripe @i's write goes to its mirror copies in the tier. */
static bool rs_r5_tiered(const struct rs_r5_op *r5, unsigned int i)
{
	return r5->tier_planned &&
	       (r5->place[i] == RS_PLACE_R1 || r5->place[i] == RS_PLACE_TO_R1);
}

/*
 * The rows of home member @m's chunk stripe @i writes (an end stripe's by
 * its shape, a whole chunk in between), with @round out to whole 4 KiB
 * rows; none for the parity member.
 */
static struct rs_range rs_r5_tier_rows(const struct rs_r5_op *r5, unsigned int i, unsigned int m,
				       bool round)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	int e = rs_r5_end_of(r5, i);
	struct rs_range w = { 0, 0 };

	if (m == rs_parity_member(g, r5->op.stripe + i))
		return w;
	w = e >= 0 ? r5->end[e].shape.w[m] : rs_r5_rows(r5, i);
	if (round && rs_range_len(&w)) {
		w.start = round_down(w.start, RS_TIER_ROW_SECTORS);
		w.end = min_t(unsigned int, round_up(w.end, RS_TIER_ROW_SECTORS), g->chunk);
	}
	return w;
}

/*
 * A readable copy of chunk @k of stripe @i (none of @avoid), the less busy
 * of the two (copy 0 in a region an unclean shutdown left to resync): its
 * member and the member sector of its slot. False when neither can be read.
 */
static bool rs_r5_tier_src(const struct rs_r5_op *r5, unsigned int i, unsigned int k,
			   unsigned long avoid, unsigned int *cm, sector_t *sector)
{
	struct rainssd *rs = r5->op.rs;
	const struct rs_tier_layout *t = rs_tier_layout_of(rs->tier);
	unsigned int c, m[2], best = 2;
	struct rs_tier_view v;
	u32 slot[2];
	bool resync = rs_bitmap_needs_sync(rs->bitmap, r5->op.stripe + i);

	rs_tier_view(rs->tier, r5->op.stripe + i, &v);
	if (v.rec == U32_MAX)
		return false;
	for (c = 0; c < 2; c++) {
		rs_tier_r_copy(t, v.r, k, c, &m[c], &slot[c]);
		if (avoid & BIT(m[c]))
			continue;
		/* Copy 0 in a region left to resync, as the map does (rs_map_tier_read). */
		if (best == 2 || (!resync && rs_load_queued(&rs->load, m[c]) <
					     rs_load_queued(&rs->load, m[best])))
			best = c;
	}
	if (best == 2)
		return false;
	*cm = m[best];
	*sector = rs_tier_slot_sector(t, slot[best]);
	return true;
}

/* Whether row @row (in 4 KiB rows) of chunk @k of stripe @i is in the tier now. */
static bool rs_r5_tier_has(const struct rs_r5_op *r5, unsigned int i, unsigned int k,
			   unsigned int row)
{
	struct rainssd *rs = r5->op.rs;
	struct rs_tier_view v;

	rs_tier_view(rs->tier, r5->op.stripe + i, &v);
	return v.rec != U32_MAX && rs_tier_r_row(rs_tier_layout_of(rs->tier), v.r, k, row);
}

/*
 * Read home member @m's rows [start, end) of stripe @i, all of one kind
 * (in the tier or not), into its buffer from where they are: a copy, or
 * the home. Without @add only say whether it can be done.
 */
static bool rs_r5_tier_read(struct rs_r5_op *r5, unsigned int i, unsigned int m,
			    unsigned int start, unsigned int end, bool add)
{
	struct rs_op *op = &r5->op;
	const struct rs_geom *g = &op->rs->geom;
	unsigned long unread = rs_r5_unread_of(r5, i);
	int k = rs_member_to_k(g, op->stripe + i, m);
	unsigned int boff = rs_r5_boff(r5, i, start), cm;
	sector_t sector;

	if (k < 0 || start >= end)
		return true;
	if (!rs_r5_tier_has(r5, i, k, start / RS_TIER_ROW_SECTORS)) {
		if (unread & BIT(m))
			return false;
		if (add)
			rs_r5_add(r5, i, m, REQ_OP_READ, start, end, 0);
		return true;
	}
	if (!rs_r5_tier_src(r5, i, k, unread | r5->tbad, &cm, &sector))
		return false;
	if (add)
		rs_batch_add(op, cm, REQ_OP_READ, sector + start, rs_r5_pidx(r5, i, m, boff),
			     offset_in_page(boff), (end - start) << SECTOR_SHIFT, 0);
	return true;
}

/*
 * Rows [start, end) of home member @m's chunk in stripe @i, into its
 * buffer, whatever mix of rows in the tier and not they are: the range from
 * the home when any row is not in the tier, and from a copy into the
 * scratch buffer of member slot @scratch when any row is (one bio each),
 * merged by rs_r5_tier_merge() once read. Without @add only say whether it
 * can be done.
 */
static bool rs_r5_tier_read_mixed(struct rs_r5_op *r5, unsigned int i, unsigned int m,
				  unsigned int start, unsigned int end, unsigned int scratch,
				  bool add)
{
	struct rs_op *op = &r5->op;
	const struct rs_geom *g = &op->rs->geom;
	unsigned long unread = rs_r5_unread_of(r5, i);
	int k = rs_member_to_k(g, op->stripe + i, m);
	unsigned int row, in = 0, out = 0, cm, boff = rs_r5_boff(r5, i, start);
	sector_t sector;

	if (k < 0)
		return true;
	for (row = start / RS_TIER_ROW_SECTORS; row * RS_TIER_ROW_SECTORS < end; row++) {
		if (rs_r5_tier_has(r5, i, k, row))
			in++;
		else
			out++;
	}
	if (out) {
		if (unread & BIT(m))
			return false;
		if (add)
			rs_r5_add(r5, i, m, REQ_OP_READ, start, end, 0);
	}
	if (in) {
		if (!rs_r5_tier_src(r5, i, k, unread | r5->tbad, &cm, &sector))
			return false;
		if (add)
			rs_batch_add(op, cm, REQ_OP_READ, sector + start,
				     rs_r5_pidx(r5, i, out ? scratch : m, boff),
				     offset_in_page(boff), (end - start) << SECTOR_SHIFT, 0);
	}
	return true;
}

/* After rs_r5_tier_read_mixed(): the rows in the tier over the home's in @m's buffer. */
static void rs_r5_tier_merge(struct rs_r5_op *r5, unsigned int i, unsigned int m,
			     unsigned int start, unsigned int end, unsigned int scratch)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	int k = rs_member_to_k(g, r5->op.stripe + i, m);
	unsigned int row, s, e, boff, in = 0, out = 0;

	if (k < 0)
		return;
	for (row = start / RS_TIER_ROW_SECTORS; row * RS_TIER_ROW_SECTORS < end; row++) {
		if (rs_r5_tier_has(r5, i, k, row))
			in++;
		else
			out++;
	}
	if (!in || !out)
		return;		/* all in the buffer already */
	for (row = start / RS_TIER_ROW_SECTORS; row * RS_TIER_ROW_SECTORS < end; row++) {
		if (!rs_r5_tier_has(r5, i, k, row))
			continue;
		s = max(start, row * RS_TIER_ROW_SECTORS);
		e = min(end, (row + 1) * RS_TIER_ROW_SECTORS);
		boff = rs_r5_boff(r5, i, s);
		/* Rows are 4 KiB and page aligned in the buffers: one page each. */
		memcpy(rs_r5_addr(r5, i, m, boff), rs_r5_addr(r5, i, scratch, boff),
		       (e - s) << SECTOR_SHIFT);
	}
}

/*
 * A tier stripe's pre-reads: the rest of the first and last 4 KiB row of
 * each chunk it writes in part (the copies hold whole rows). Returns how
 * many, or -1 when one has nowhere to be read from. Without @add only
 * counts.
 */
static int rs_r5_tier_prereads(struct rs_r5_op *r5, unsigned int i, bool add)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	struct rs_range w, rw;
	unsigned int m, rows[2], nr, j;
	int count = 0;

	for (m = 0; m < g->n; m++) {
		w = rs_r5_tier_rows(r5, i, m, false);
		rw = rs_r5_tier_rows(r5, i, m, true);
		if (!rs_range_len(&w))
			continue;
		nr = 0;
		if (rw.start < w.start)
			rows[nr++] = rw.start;
		if (rw.end > w.end && (!nr || rw.end - RS_TIER_ROW_SECTORS != rows[0]))
			rows[nr++] = rw.end - RS_TIER_ROW_SECTORS;
		for (j = 0; j < nr; j++) {
			if (!rs_r5_tier_read(r5, i, m, rows[j], rows[j] + RS_TIER_ROW_SECTORS, add))
				return -1;
			count++;
		}
	}
	return count;
}

/* A tier stripe's writes: each chunk's whole rows to both of its copies that can be written. */
static void rs_r5_tier_writes(struct rs_r5_op *r5, unsigned int i, blk_opf_t opf)
{
	struct rs_op *op = &r5->op;
	struct rainssd *rs = op->rs;
	const struct rs_tier_layout *t = rs_tier_layout_of(rs->tier);
	unsigned long dead = rs_r5_dead_of(r5, i);
	unsigned int m, c, cm, boff, len;
	struct rs_tier_view v;
	struct rs_range rw;
	u32 slot;
	int k;

	rs_tier_view(rs->tier, op->stripe + i, &v);
	if (WARN_ON_ONCE(v.rec == U32_MAX))
		return;
	for (m = 0; m < rs->geom.n; m++) {
		rw = rs_r5_tier_rows(r5, i, m, true);
		k = rs_member_to_k(&rs->geom, op->stripe + i, m);
		if (!rs_range_len(&rw) || k < 0)
			continue;
		boff = rs_r5_boff(r5, i, rw.start);
		len = rs_range_len(&rw) << SECTOR_SHIFT;
		for (c = 0; c < 2; c++) {
			rs_tier_r_copy(t, v.r, k, c, &cm, &slot);
			if (dead & BIT(cm))
				continue;
			rs_batch_add(op, cm, opf, rs_tier_slot_sector(t, slot) + rw.start,
				     rs_r5_pidx(r5, i, m, boff), offset_in_page(boff), len, len);
		}
	}
}

/*
 * Whether stripe @i's home could not hold what this operation writes
 * there: the one member @out in it is a data member whose chunk the
 * operation covers, and the stripe's parity is not known good (so that
 * chunk could not be rebuilt from it).
 */
static bool rs_r5_home_short(const struct rs_r5_op *r5, unsigned int i, unsigned long out)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	u64 stripe = r5->op.stripe + i;
	sector_t first = stripe * g->stripe_data;
	unsigned int k, m;

	if (!out || rs_r5_synced(r5, i))
		return false;
	m = __ffs(out);
	for (k = 0; k < g->n - 1; k++)
		if (rs_data_member(g, stripe, k) == m &&
		    r5->lstart < first + (k + 1) * g->chunk &&
		    r5->lend > first + k * g->chunk)
			return true;
	return false;
}

/*
 * Whether stripe @i, entering the tier now, could merge the partly written
 * 4 KiB rows of this write: their rest comes from the home, which must be
 * readable there.
 */
static bool rs_r5_tier_can_enter(const struct rs_r5_op *r5, unsigned int i)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned long unread = rs_r5_unread_of(r5, i);
	struct rs_stripe_shape sh;
	struct rs_range w;
	unsigned int m;

	if (!unread)
		return true;
	rs_shape_from_range(&sh, g, r5->op.stripe + i, RS_NO_MEMBER, r5->lstart, r5->lend);
	for (m = 0; m < g->n; m++) {
		w = sh.w[m];
		if (!rs_range_len(&w) || !(unread & BIT(m)) ||
		    m == rs_parity_member(g, r5->op.stripe + i))
			continue;
		if (w.start % RS_TIER_ROW_SECTORS ||
		    (w.end % RS_TIER_ROW_SECTORS && w.end < g->chunk))
			return false;
	}
	return true;
}

/*
 * Where each stripe's write goes (HybRAID's placement, rs_tier_place()),
 * decided once per operation with its stripes held (a plan made again
 * keeps it): a stripe that enters the tier gets its record and slots now.
 */
static void rs_r5_tier_plan(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	struct rainssd *rs = op->rs;
	const struct rs_geom *g = &rs->geom;
	struct rs_tier *tr = rs->tier;
	unsigned long avoid = r5->dead;
	u32 queued[RS_MAX_DEVS];
	struct rs_place_out out;
	struct rs_tier_view v;
	unsigned int i, m;
	u64 stripe;

	r5->tier_planned = true;
	if (r5->rb != RS_NO_MEMBER)
		avoid |= BIT(r5->rb);
	for (m = 0; m < g->n; m++)
		queued[m] = rs_load_queued(&rs->load, m);
	for (i = 0; i < op->nr; i++) {
		struct rs_place_in in = {
			.threshold = READ_ONCE(rs->migration_threshold),
			.home_threshold = READ_ONCE(rs->home_threshold),
			.room = rs_tier_room(tr),
			.frozen = rs_tier_mode(tr) != RS_TIER_RW,
		};

		stripe = op->stripe + i;
		rs_tier_view(tr, stripe, &v);
		in.in_tier = v.rec != U32_MAX;
		in.written = v.written;
		in.hist = v.hist;
		in.full = r5->lstart <= stripe * g->stripe_data &&
			  r5->lend >= (stripe + 1) * g->stripe_data;
		in.room = in.room && rs_r5_tier_can_enter(r5, i);
		in.home_short = rs_r5_home_short(r5, i,
						 READ_ONCE(rs->dead_mask) | rs_r5_dead_of(r5, i));
		rs_tier_place(&in, &out);
		r5->rec[i] = v.rec;
		if (out.place == RS_PLACE_TO_R1) {
			r5->rec[i] = rs_tier_enter(tr, stripe, avoid, queued, out.hist);
			if (r5->rec[i] == U32_MAX)
				out.place = RS_PLACE_R5;
			else
				r5->tier_changed = true;
		}
		if (out.place == RS_PLACE_TO_R5)
			r5->tier_changed = true;
		r5->place[i] = out.place;
		rs_tier_note_write(tr, stripe, out.hist);
	}
}

/*
 * The writes are in: the rows written in the tier are now read from it; a
 * stripe written whole into its home (by an aligned full-stripe write or
 * the offline migration) leaves the tier.
 */
static void rs_r5_tier_written(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	struct rainssd *rs = op->rs;
	struct rs_range rw;
	unsigned int i, m;
	int k;

	for (i = 0; i < op->nr; i++) {
		if (r5->place[i] == RS_PLACE_TO_R5) {
			rs_tier_leave(rs->tier, op->stripe + i, r5->kind == RS_R5_MIGRATE);
			continue;
		}
		if (!rs_r5_tiered(r5, i))
			continue;
		rs_tier_count(rs->tier, true);
		for (m = 0; m < rs->geom.n; m++) {
			rw = rs_r5_tier_rows(r5, i, m, true);
			k = rs_member_to_k(&rs->geom, op->stripe + i, m);
			if (!rs_range_len(&rw) || k < 0)
				continue;
			rs_tier_set_rows(rs->tier, r5->rec[i], k, rw.start / RS_TIER_ROW_SECTORS,
					 rw.end / RS_TIER_ROW_SECTORS);
		}
		r5->tier_changed = true;
	}
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

/* Copy between a piece of a user bio (@iter, logical) and the data buffers. */
static void rs_r5_copy_piece(struct rs_r5_op *r5, struct bio *bio, struct bvec_iter iter,
			     bool to_bio)
{
	struct rs_op *op = &r5->op;
	const struct rs_geom *g = &op->rs->geom;
	struct bvec_iter it;
	struct bio_vec bv;

	__bio_for_each_segment(bv, bio, it, iter) {
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

/* ... of every piece the operation serves (a read has one). */
static void rs_r5_copy(struct rs_r5_op *r5, bool to_bio)
{
	struct rs_op *op = &r5->op;
	unsigned int i;

	rs_r5_copy_piece(r5, op->bio, op->iter, to_bio);
	for (i = 0; i < op->nr_more; i++)
		rs_r5_copy_piece(r5, op->more[i].bio, op->more[i].iter, to_bio);
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
	struct bio *more[RS_OP_MAX_MORE];
	unsigned int i, nr_more = r5->op.nr_more;

	if (r5->bm_started)
		rs_bitmap_end(rs->bitmap, &r5->op);
	if (r5->logged)
		rs_log_done(rs->log, &r5->op);
	if (!bio)
		r5->done(r5->done_ctx, status, r5->mismatch_sectors);
	for (i = 0; i < nr_more; i++)
		more[i] = r5->op.more[i].bio;
	rs_op_put(&r5->op);
	if (bio)
		rs_bio_endio_piece(rs, bio, status);
	for (i = 0; i < nr_more; i++)
		rs_bio_endio_piece(rs, more[i], status);
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

/*
 * Whether a member failed since @r5's plan. The plan decided which stripes
 * are logged, and which members are written, from the failed members then:
 * an update that left out a member failed since, with no record, would
 * leave its stripe's parity the only copy of that member's chunk and
 * unprotected against a torn write (up to 1.11.10: case 41).
 */
static bool rs_r5_dead_changed(const struct rs_r5_op *r5)
{
	return READ_ONCE(r5->op.rs->dead_mask) != r5->dead;
}

/*
 * Plan @r5 again after its compute: its records (if any) go back, its
 * bitmap count and stripes stay (rs_r5_gate() does not count it twice).
 */
static void rs_r5_replan(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;

	if (r5->logged) {
		rs_log_done(op->rs->log, op);
		r5->logged = false;
	}
	rs_stat_inc(op->rs, RS_STAT_REPLANS);
	rs_r5_plan(op);
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

		if (rs_r5_tiered(r5, i)) {
			rs_r5_tier_prereads(r5, i, true);
			continue;
		}
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

	if ((rs_r5_dead_of(r5, i) & BIT(m)) || rs_r5_tiered(r5, i))
		return none;
	if (e >= 0)
		return rs_shape_writes(&r5->end[e].shape, r5->end[e].mode, m);
	return rs_r5_rows(r5, i);
}

/* The data and parity writes of rs_r5_build_writes(). */
static void rs_r5_add_writes(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	struct rainssd *rs = op->rs;
	blk_opf_t opf = rs_user_write_opf(op->bio) | (r5->logged ? REQ_FUA : 0);
	struct rs_range w;
	unsigned int m, i, left;

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
	for (i = 0; i < op->nr; i++)
		if (rs_r5_tiered(r5, i))
			rs_r5_tier_writes(r5, i, opf);
}

/*
 * The data and parity writes, member by member so that each is one range.
 * Those of an update with degraded-log records go to stable media before
 * it completes (FUA): a later update of the stripe logs a partial parity
 * made from these bytes, which after a power cut must be the ones the
 * members hold (md's PPL flushes the members for the same reason). None
 * when a member failed since the plan (rs_r5_dead_changed()): it is
 * planned again once this empty step ends (rs_r5_written()).
 */
static void rs_r5_build_writes(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	bool count = !r5->dead;

	/*
	 * Planned with no member failed (not logged): a commit that says a
	 * member failed waits for these writes to the members in service
	 * (rs_meta_drain()). Counting begins before the check, so that a
	 * failure after it waits for them.
	 */
	if (count)
		rs_batch_count_begin(op);
	r5->stale = rs_r5_dead_changed(r5);
	if (!r5->stale)
		rs_r5_add_writes(r5);
	if (count)
		rs_batch_count_end(op);
}

/*
 * Whether every sector the write served can be read back now: in each of
 * its stripes at most one member is out (failed, or being rebuilt above
 * its checkpoint), and a data chunk it wrote on that member can be rebuilt
 * from the stripe's parity (the stripe is synced; a stripe in the tier
 * keeps it in its other copy). Up to 1.11.14 only the failed members of
 * the whole volume were counted, so a write whose member failed in a
 * stripe above the rebuild's checkpoint, or in a stripe whose parity was
 * not yet resynced, was acknowledged, and its data read back as EIO. The
 * rebuild's checkpoint cannot pass these stripes while they are held.
 */
static bool rs_r5_readable(const struct rs_r5_op *r5)
{
	unsigned long dead = READ_ONCE(r5->op.rs->dead_mask);
	unsigned int i;

	for (i = 0; i < r5->op.nr; i++) {
		unsigned long out = dead | rs_r5_dead_of(r5, i);

		if (hweight_long(out) > 1)
			return false;
		if (!rs_r5_tiered(r5, i) && rs_r5_home_short(r5, i, out))
			return false;
	}
	return true;
}

/*
 * The writes are in. A write that skipped a failed member is acknowledged
 * only once that member's failure is in the superblocks, so that no reload
 * or reboot brings it back with the old data; and only if what it wrote
 * can be read back (rs_r5_readable()).
 */
static void rs_r5_ack(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_finish(r5, rs_r5_readable(r5) ? BLK_STS_OK : BLK_STS_IOERR);
}

/* Then: a write that skipped a failed member waits for the superblocks to say so. */
static void rs_r5_meta_acked(struct rs_op *op)
{
	struct rainssd *rs = op->rs;

	if (READ_ONCE(rs->dead_mask) && !rs_meta_wait_committed(rs->meta, op, rs_r5_ack))
		return;
	rs_r5_ack(op);
}

static void rs_r5_written(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;

	if (r5->stale)
		return rs_r5_replan(r5);
	/* A failed member write is held by the parity (or data, or a copy) that landed. */
	rs_r5_note_failures(r5, false);
	if (r5->tier_planned)
		rs_r5_tier_written(r5);
	/*
	 * A FUA write on a volume with a tier: durable once every mapping
	 * change made so far is (one that moved this stripe out of the tier
	 * before it, not yet committed, would hide it after a cut).
	 */
	if (rs->tier && op->bio && (op->bio->bi_opf & REQ_FUA) &&
	    !rs_tier_wait_committed(rs->tier, op, rs_r5_meta_acked))
		return;
	rs_r5_meta_acked(op);
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

	if (rs_r5_tiered(r5, i))
		return false;	/* no parity in the tier */
	return dead && !(dead & BIT(rs_parity_member(g, r5->op.stripe + i)));
}

/*
 * The rows of stripe @i whose parity the update changes, which its log
 * record covers: an end stripe's shape's rows. On a volume with a tier the
 * buffers of an end stripe are rounded out to whole 4 KiB rows, and the
 * parity of the rows the update does not touch is neither read nor
 * computed: up to 1.11.2 the record took the rounded rows, so a replay
 * wrote whatever the buffer held there as their parity.
 */
static struct rs_range rs_r5_log_rows(const struct rs_r5_op *r5, unsigned int i)
{
	int e = rs_r5_end_of(r5, i);

	return e < 0 ? rs_r5_rows(r5, i) : r5->end[e].shape.rows;
}

/*
 * Move bytes [from, from + len) of member @m's buffer of stripe @i down to
 * its start (from < PAGE_SIZE), page piece by page piece in ascending order,
 * so that nothing is overwritten before it was moved.
 */
static void rs_r5_buf_shift(struct rs_r5_op *r5, unsigned int i, unsigned int m,
			    unsigned int from, unsigned int len)
{
	unsigned int done = 0;

	while (done < len) {
		unsigned int s = from + done, d = done;
		unsigned int n = min3(len - done, (unsigned int)(PAGE_SIZE - offset_in_page(s)),
				      (unsigned int)(PAGE_SIZE - offset_in_page(d)));

		memmove(rs_r5_addr(r5, i, m, d), rs_r5_addr(r5, i, m, s), n);
		done += n;
	}
}

/*
 * Partial parity of stripe @i into the lost member's buffer, which the
 * writes do not use: the new parity XOR the new data of every member that
 * is written there, i.e. every data chunk as it will be except those; over
 * rs_r5_log_rows(), from the buffer's start (where rs_r5_log_fill() points
 * the record).
 */
static void rs_r5_partial_parity(struct rs_r5_op *r5, unsigned int i, unsigned int lost)
{
	const struct rs_geom *g = &r5->op.rs->geom;
	unsigned int p = rs_parity_member(g, r5->op.stripe + i), m;
	struct rs_range rows = rs_r5_log_rows(r5, i), w;
	unsigned int boff = rs_r5_boff(r5, i, rows.start);

	rs_r5_xor(r5, i, lost, BIT(p), rows.start, rows.end, false);
	for (m = 0; m < g->n; m++) {
		if (m == p || m == lost)
			continue;
		w = rs_r5_write_rows(r5, i, m);
		if (rs_range_len(&w))
			rs_r5_xor(r5, i, lost, BIT(m), w.start, w.end, true);
	}
	if (boff)
		rs_r5_buf_shift(r5, i, lost, boff, rs_range_len(&rows) << SECTOR_SHIFT);
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
	u->rows = rs_r5_log_rows(r5, i);
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
		rs_r5_note_failures(r5, false);
		return rs_r5_replan(r5);
	}
	r5->gate = RS_R5_GATE_WRITE;
	rs_r5_gate(op);
}

/*
 * Between compute and write, each step at most once (an operation that
 * waits comes back here): the failed members' state on disk before an
 * update that leaves one out, and a rebuild's checkpoint on disk past the
 * stripes it has passed in memory (1.11.4: rs_meta_wait_rebuild_cp()); the
 * bitmap's bits of its regions on disk;
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
		if (!rs_meta_wait_rebuild_cp(rs->meta, op, rs_r5_gate, op->stripe,
					     op->stripe + op->nr - 1))
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
		/* A member failed since the plan (it waited): the stripes to log changed. */
		if (rs_r5_dead_changed(r5))
			return rs_r5_replan(r5);
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
		if (rs_r5_tiered(r5, i))
			continue;
		s = rs_r5_stripe(r5, i, &tmp, &mode);
		rs_r5_compute_old(r5, i, s, mode);
	}
	rs_r5_copy(r5, false);
	for (i = 0; i < op->nr; i++) {
		if (rs_r5_tiered(r5, i))
			continue;
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
	if (op->rs->tier && !r5->tier_planned)
		rs_r5_tier_plan(r5);
	for (e = 0; e < (op->nr > 1 ? 2 : 1); e++) {
		i = e ? op->nr - 1 : 0;
		unread = rs_r5_unread_of(r5, i);
		if (hweight_long(unread) > 1)
			return rs_r5_finish(r5, BLK_STS_IOERR);
		if (rs_r5_tiered(r5, i)) {
			/* Mirror copies: no parity; the rest of partly written rows is read. */
			rs_shape_from_range(&r5->end[e].shape, &op->rs->geom, op->stripe + i,
					    RS_NO_MEMBER, r5->lstart, r5->lend);
			r5->end[e].mode = RS_WRITE_FULL;
			if (rs_r5_tier_prereads(r5, i, false) < 0)
				return rs_r5_finish(r5, BLK_STS_IOERR);
			reads |= rs_r5_tier_prereads(r5, i, false) > 0;
			continue;
		}
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
		/*
		 * Rebuilt by choice; where the parity was never made, read it.
		 * Not by choice (a wide read served again after another
		 * member's chunk failed it, or a member rebuilt since the
		 * map found it unreadable): read it.
		 */
		r5->direct = !r5->by_choice || !rs_r5_synced(r5, 0);
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

/* ---- resync, rebuild and scrub of the tier's copies ---- */

/*
 * After a sync operation's stripes are done in their homes, the copies of
 * those in the tier: a resync (after a crash) and a repair write copy 0's
 * rows over copy 1's (md's RAID1 does the same), a rebuild writes the rows
 * of every copy on the rebuilt member from the other copy; a check and a
 * repair first compare the rows in the tier, one chunk of every stripe per
 * step (copy 0 into the chunk's buffer, copy 1 into the parity's),
 * counting the sectors that differ. r5->member is the chunk of the step.
 */
static void rs_r5_tier_sync_step(struct rs_op *op);

/* The copies of chunk @k of stripe @i: src (read) and dst (written); false to skip it. */
static bool rs_r5_tier_pair(struct rs_r5_op *r5, unsigned int i, unsigned int k,
			    struct rs_tier_copy *src, struct rs_tier_copy *dst)
{
	struct rainssd *rs = r5->op.rs;
	const struct rs_tier_layout *t = rs_tier_layout_of(rs->tier);
	unsigned long dead = r5->dead | r5->bad;
	unsigned int m[2], c;
	struct rs_tier_view v;
	u32 slot[2];

	rs_tier_view(rs->tier, r5->op.stripe + i, &v);
	if (v.rec == U32_MAX)
		return false;
	for (c = 0; c < 2; c++)
		rs_tier_r_copy(t, v.r, k, c, &m[c], &slot[c]);
	c = 0;
	if (r5->kind == RS_R5_REBUILD) {
		if (m[0] != r5->rb && m[1] != r5->rb)
			return false;
		c = m[0] == r5->rb;
	}
	if ((dead & BIT(m[c])) || (dead & BIT(m[!c])))
		return false;
	src->member = m[c];
	src->slot = slot[c];
	dst->member = m[!c];
	dst->slot = slot[!c];
	return true;
}

/*
 * Chunk @k of stripe @i, from (or to) copy @cp, in @bm's buffer at its
 * offsets in the chunk: from its first row in the tier to its last, one
 * bio (the rows between that are not in the tier come along: nothing reads
 * them there; one bio per copy keeps a step within the emergency bioset).
 * Up to 1.11.12 the whole slot, so that a read error in its unused end
 * stopped a rebuild or resync of that member for good.
 */
static void rs_r5_tier_chunk_io(struct rs_r5_op *r5, unsigned int i, unsigned int k,
				const struct rs_tier_copy *cp, unsigned int bm, blk_opf_t opf)
{
	struct rs_op *op = &r5->op;
	const struct rs_tier_layout *t = rs_tier_layout_of(op->rs->tier);
	unsigned int first, last, boff, len, chunk = op->rs->geom.chunk;

	for (first = 0; first < t->rows && !rs_r5_tier_has(r5, i, k, first); first++)
		;
	if (first == t->rows)
		return;
	for (last = t->rows - 1; !rs_r5_tier_has(r5, i, k, last); last--)
		;
	boff = (first * RS_TIER_ROW_SECTORS) << SECTOR_SHIFT;
	len = (min((last + 1) * RS_TIER_ROW_SECTORS, chunk) << SECTOR_SHIFT) - boff;
	rs_batch_add(op, cp->member, opf,
		     rs_tier_slot_sector(t, cp->slot) + first * RS_TIER_ROW_SECTORS,
		     rs_r5_pidx(r5, i, bm, boff), offset_in_page(boff), len, len);
}

static bool rs_r5_tier_checks(const struct rs_r5_op *r5)
{
	return r5->kind == RS_R5_CHECK || r5->kind == RS_R5_REPAIR;
}

/* The step's reads: every chunk (copy src), or for a check chunk r5->member of both copies. */
static void rs_r5_build_tier_sync_reads(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	struct rs_tier_copy src, dst;
	unsigned int i, k, p;

	for (i = 0; i < op->nr; i++) {
		p = rs_parity_member(g, op->stripe + i);
		for (k = 0; k < g->n - 1; k++) {
			if (rs_r5_tier_checks(r5) && k != r5->member)
				continue;
			if (!rs_r5_tier_pair(r5, i, k, &src, &dst))
				continue;
			rs_r5_tier_chunk_io(r5, i, k, &src, rs_data_member(g, op->stripe + i, k),
					    REQ_OP_READ);
			if (rs_r5_tier_checks(r5))
				rs_r5_tier_chunk_io(r5, i, k, &dst, p, REQ_OP_READ);
		}
	}
}

/* The step's writes: copy src's rows over dst (a check only counts). */
static void rs_r5_build_tier_sync_writes(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	struct rs_tier_copy src, dst;
	unsigned int i, k;

	for (i = 0; i < op->nr; i++) {
		for (k = 0; k < g->n - 1; k++) {
			if (rs_r5_tier_checks(r5) &&
			    (k != r5->member || !test_bit(i, &r5->mismatched)))
				continue;
			if (!rs_r5_tier_pair(r5, i, k, &src, &dst))
				continue;
			rs_r5_tier_chunk_io(r5, i, k, &dst, rs_data_member(g, op->stripe + i, k),
					    REQ_OP_WRITE);
		}
	}
}

static void rs_r5_sync_ok_run(struct rs_op *op)
{
	/* The tier's table failed: the volume's metadata with it. */
	rs_r5_finish(to_r5(op), op->failed ? BLK_STS_IOERR : BLK_STS_OK);
}

/*
 * A sync operation's stretch is done. A rebuild's or resync's ends once
 * every stripe that left the tier so far has left it on disk (1.11.9): a
 * stripe gone from the tier in memory only (an aligned full-stripe write
 * took it home) keeps its record on disk until the tier's next commit, and
 * the stretch saw no copies of it. Were a rebuild's checkpoint committed
 * past it first, a cut would bring the record back with its copy on the
 * rebuilt member never written and taken as good; were a resync's region
 * marked clean first, with copies a cut left unequal. A check or repair
 * keeps no checkpoint on disk: it does not wait.
 */
static void rs_r5_sync_ok(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;

	if (op->rs->tier && r5->kind != RS_R5_CHECK && r5->kind != RS_R5_REPAIR &&
	    !rs_tier_wait_left(op->rs->tier, op, rs_r5_sync_ok_run))
		return;
	rs_r5_finish(r5, BLK_STS_OK);
}

static void rs_r5_tier_sync_next(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	if (op->failed) {
		rs_r5_note_failures(r5, false);
		return rs_r5_finish(r5, BLK_STS_IOERR);
	}
	if (rs_r5_tier_checks(r5) && ++r5->member < op->rs->geom.n - 1)
		return rs_r5_tier_sync_step(op);
	rs_r5_sync_ok(r5);
}

/* The reads are in: a check compares the rows in the tier; then the writes. */
static void rs_r5_tier_sync_read(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	const struct rs_tier_layout *t = rs_tier_layout_of(op->rs->tier);
	struct rs_tier_copy src, dst;
	unsigned int i, row, sec, p, dm, boff, k = r5->member;
	bool differs;

	if (op->failed) {
		/* A copy could not be read: counted, and this stretch ends in an error. */
		rs_r5_note_failures(r5, true);
		return rs_r5_finish(r5, BLK_STS_IOERR);
	}
	r5->mismatched = 0;
	for (i = 0; rs_r5_tier_checks(r5) && i < op->nr; i++) {
		if (!rs_r5_tier_pair(r5, i, k, &src, &dst))
			continue;
		p = rs_parity_member(g, op->stripe + i);
		dm = rs_data_member(g, op->stripe + i, k);
		differs = false;
		for (row = 0; row < t->rows; row++) {
			if (!rs_r5_tier_has(r5, i, k, row))
				continue;
			for (sec = 0; sec < min(RS_TIER_ROW_SECTORS, g->chunk); sec++) {
				boff = (row * RS_TIER_ROW_SECTORS + sec) << SECTOR_SHIFT;
				if (memcmp(rs_r5_addr(r5, i, dm, boff), rs_r5_addr(r5, i, p, boff),
					   SECTOR_SIZE)) {
					r5->mismatch_sectors++;
					differs = true;
				}
			}
		}
		if (differs)
			__set_bit(i, &r5->mismatched);
	}
	if (r5->kind == RS_R5_CHECK)
		return rs_r5_tier_sync_next(op);
	rs_batch_run(op, rs_r5_build_tier_sync_writes, rs_r5_tier_sync_next);
}

static void rs_r5_tier_sync_step(struct rs_op *op)
{
	rs_batch_run(op, rs_r5_build_tier_sync_reads, rs_r5_tier_sync_read);
}

/* The homes are done: the copies of the stripes in the tier, if any. */
static void rs_r5_tier_sync(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	struct rs_tier_view v;
	unsigned int i;

	for (i = 0; op->rs->tier && i < op->nr; i++) {
		rs_tier_view(op->rs->tier, op->stripe + i, &v);
		if (v.rec != U32_MAX)
			break;
	}
	if (!op->rs->tier || i == op->nr)
		return rs_r5_sync_ok(r5);
	r5->member = 0;
	rs_r5_tier_sync_step(op);
}

static void rs_r5_sync_written(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_note_failures(r5, false);
	if (op->failed)
		return rs_r5_finish(r5, BLK_STS_IOERR);
	rs_r5_tier_sync(r5);
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
		return rs_r5_tier_sync(r5);
	rs_batch_run(op, rs_r5_build_sync_writes, rs_r5_sync_written);
}

static void rs_r5_plan_sync(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	unsigned long lost = r5->dead;
	unsigned int i;

	/* Every source must be there (and, to rebuild, the parity made). */
	if (r5->kind == RS_R5_REBUILD) {
		/* A rebuilding member failed is lost too: nothing is written to it. */
		if (r5->rb == RS_NO_MEMBER)
			lost = 1;
		/*
		 * Every stripe's parity (a stretch can end past a region;
		 * rs_sync_next() resyncs them all before any rebuild today).
		 */
		for (i = 0; i < op->nr && !lost; i++)
			if (!rs_r5_synced(r5, i))
				lost = 1;
	} else if (r5->rb != RS_NO_MEMBER && op->stripe + op->nr > r5->rb_cp) {
		/* The rebuilding member does not hold its data above the checkpoint. */
		lost |= BIT(r5->rb);
	}
	if (lost)
		return rs_r5_finish(r5, BLK_STS_IOERR);
	rs_batch_run(op, rs_r5_build_sync_reads, rs_r5_sync_compute);
}

/* ---- the offline migration: a stripe's tier rows into its home ---- */

/*
 * Every data chunk into its buffer: whole from the home, and from a copy
 * into a scratch buffer (member slots n + k) when rows of it are in the
 * tier; merged when read (one bio per source and chunk).
 */
static void rs_r5_build_migrate_reads(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	unsigned int m;
	int k;

	for (m = 0; m < g->n; m++) {
		k = rs_member_to_k(g, op->stripe, m);
		if (k >= 0)
			rs_r5_tier_read_mixed(r5, 0, m, 0, g->chunk, g->n + k, true);
	}
}

/* The stripe's data is in the buffers: its parity, then the writes of a full stripe. */
static void rs_r5_migrate_compute(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_geom *g = &op->rs->geom;
	struct rs_r5_end *end = &r5->end[0];

	unsigned int m;
	int k;

	if (!rs_r5_reads_valid(r5))
		return rs_r5_plan(op);
	for (m = 0; m < g->n; m++) {
		k = rs_member_to_k(g, op->stripe, m);
		if (k >= 0)
			rs_r5_tier_merge(r5, 0, m, 0, g->chunk, g->n + k);
	}
	rs_shape_from_range(&end->shape, g, op->stripe, RS_NO_MEMBER, r5->lstart, r5->lend);
	end->mode = RS_WRITE_FULL;
	rs_r5_compute_new(r5, 0, &end->shape, RS_WRITE_FULL);
	r5->mismatch_sectors = g->chunk;	/* what it moved, per member */
	r5->gate = RS_R5_GATE_META;
	rs_r5_gate(op);
}

static void rs_r5_plan_migrate(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;
	const struct rs_geom *g = &op->rs->geom;
	struct rs_tier_view v;
	unsigned int m;
	int k;

	rs_tier_view(op->rs->tier, op->stripe, &v);
	if (v.rec == U32_MAX)
		return rs_r5_finish(r5, BLK_STS_OK);	/* left the tier meanwhile */
	r5->tier_planned = true;
	r5->place[0] = RS_PLACE_TO_R5;
	r5->rec[0] = v.rec;
	/* Every member is written: none may be out (the migration waits for that). */
	if (rs_r5_dead_of(r5, 0))
		return rs_r5_finish(r5, BLK_STS_IOERR);
	for (m = 0; m < g->n; m++) {
		k = rs_member_to_k(g, op->stripe, m);
		if (k >= 0 && !rs_r5_tier_read_mixed(r5, 0, m, 0, g->chunk, g->n + k, false))
			return rs_r5_finish(r5, BLK_STS_IOERR);
	}
	rs_batch_run(op, rs_r5_build_migrate_reads, rs_r5_migrate_compute);
}

/* ---- a read of tier rows whose copy failed: the other copy, and the failed one repaired ---- */

static void rs_r5_build_tread(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_tier_read_mixed(r5, 0, r5->member, r5->rows[0].start, r5->rows[0].end,
			      op->rs->geom.n, true);
}

/* The failed copy gets the data back (a corrected read error, as for the home). */
static void rs_r5_build_trepair(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);
	const struct rs_tier_layout *t = rs_tier_layout_of(op->rs->tier);
	int k = rs_member_to_k(&op->rs->geom, op->stripe, r5->member);
	unsigned int c, cm, boff = rs_r5_boff(r5, 0, r5->rows[0].start);
	struct rs_tier_view v;
	u32 slot;

	rs_tier_view(op->rs->tier, op->stripe, &v);
	for (c = 0; c < 2 && v.rec != U32_MAX && k >= 0; c++) {
		rs_tier_r_copy(t, v.r, k, c, &cm, &slot);
		if (!(r5->tbad & BIT(cm)) || rs_member_dead(op->rs, cm))
			continue;
		rs_batch_add(op, cm, REQ_OP_WRITE, rs_tier_slot_sector(t, slot) + r5->rows[0].start,
			     rs_r5_pidx(r5, 0, r5->member, boff), offset_in_page(boff),
			     rs_range_len(&r5->rows[0]) << SECTOR_SHIFT, 0);
	}
}

static void rs_r5_trepaired(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	rs_r5_note_failures(r5, false);
	rs_r5_finish(r5, BLK_STS_OK);
}

static void rs_r5_tread_done(struct rs_op *op)
{
	struct rs_r5_op *r5 = to_r5(op);

	if (!rs_r5_reads_valid(r5))
		return rs_r5_plan(op);
	rs_r5_tier_merge(r5, 0, r5->member, r5->rows[0].start, r5->rows[0].end, op->rs->geom.n);
	rs_r5_copy(r5, true);
	rs_tier_count(op->rs->tier, false);
	if (r5->tbad)
		return rs_batch_run(op, rs_r5_build_trepair, rs_r5_trepaired);
	rs_r5_finish(r5, BLK_STS_OK);
}

/*
 * The rows are read again from where they are now (a copy other than the
 * one that failed, or the home when the stripe left the tier meanwhile).
 */
static void rs_r5_plan_tread(struct rs_r5_op *r5)
{
	struct rs_op *op = &r5->op;

	if (!rs_r5_tier_read_mixed(r5, 0, r5->member, r5->rows[0].start, r5->rows[0].end,
				   op->rs->geom.n, false))
		return rs_r5_finish(r5, BLK_STS_IOERR);
	rs_batch_run(op, rs_r5_build_tread, rs_r5_tread_done);
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
	/* The rebuild before the failed members: see rs_member_holds(). */
	r5->rb = READ_ONCE(rs->rebuild_member);
	r5->rb_cp = READ_ONCE(rs->rebuild_cp);
	r5->resync_cp = READ_ONCE(rs->resync_cp);
	smp_rmb();	/* pairs with smp_mb__after_atomic() in rs_meta_publish() */
	r5->dead = READ_ONCE(rs->dead_mask);
	switch (r5->kind) {
	case RS_R5_WRITE:
		return rs_r5_plan_write(r5);
	case RS_R5_READ:
		return rs_r5_plan_read(r5);
	case RS_R5_MIGRATE:
		return rs_r5_plan_migrate(r5);
	case RS_R5_TREAD:
		return rs_r5_plan_tread(r5);
	default:
		return rs_r5_plan_sync(r5);
	}
}

/* ---- making operations ---- */

/*
 * Lay @r5 out for logical sectors [ls, le) and return the buffer pages it
 * needs; with @r5 NULL only count them.
 */
static unsigned int rs_r5_layout(struct rainssd *rs, struct rs_r5_op *r5, sector_t ls,
				 sector_t le)
{
	const struct rs_geom *g = &rs->geom;
	u64 first = div_u64(ls, g->stripe_data);
	unsigned int nr = div_u64(le - 1, g->stripe_data) - first + 1;
	struct rs_range rows[2];
	unsigned int np[2], e, pages;

	for (e = 0; e < (nr > 1 ? 2 : 1); e++) {
		rows[e] = rs_shape_span_rows(g, first + (e ? nr - 1 : 0), ls, le);
		/* The tier's copies take whole 4 KiB rows: room to merge a partial one. */
		if (rs->tier) {
			rows[e].start = round_down(rows[e].start, RS_TIER_ROW_SECTORS);
			rows[e].end = min_t(unsigned int, g->chunk,
					    round_up(rows[e].end, RS_TIER_ROW_SECTORS));
		}
		np[e] = rs_pages_for(rs_range_len(&rows[e]));
	}
	pages = np[0];
	if (nr > 1)
		pages += np[1] + (nr - 2) * rs_pages_for(g->chunk);
	if (r5) {
		r5->op.stripe = first;
		r5->op.nr = nr;
		r5->lstart = ls;
		r5->lend = le;
		memcpy(r5->rows, rows, sizeof(rows));
		memcpy(r5->np, np, sizeof(np));
	}
	return g->n * pages;
}

/* Set @r5 up for logical sectors [ls, le) of @rb's bio (rs_r5_layout, and what a read needs). */
static void rs_r5_setup(struct rainssd *rs, struct rs_r5_op *r5, struct rs_bio *rb,
			sector_t ls, sector_t le)
{
	struct rs_loc loc;

	rs_r5_layout(rs, r5, ls, le);
	rs_map(&rs->geom, ls, &loc);
	r5->member = loc.member;
	r5->by_choice = rb->by_choice;
	r5->t_map = rb->t_map;
	/* Its member failed the read: rebuilt, then written back. */
	r5->bad = rb->bad & BIT(loc.member);
}

static bool rs_bio_same_blkg(const struct bio *a, const struct bio *b)
{
#ifdef CONFIG_BLK_CGROUP
	return a->bi_blkg == b->bi_blkg;
#else
	return true;
#endif
}

/*
 * Whether pieces of user writes @a and @b may be served by one operation:
 * the same flags, priority and cgroup (its member bios carry those of its
 * first bio), and neither needs to be durable on its own (FUA, PREFLUSH).
 */
static bool rs_r5_can_join(const struct bio *a, const struct bio *b)
{
	blk_opf_t same = REQ_OP_MASK | REQ_SYNC | REQ_IDLE | REQ_META | REQ_PRIO | REQ_FUA |
			 REQ_PREFLUSH;

	if (bio_op(a) != REQ_OP_WRITE || ((a->bi_opf | b->bi_opf) & (REQ_FUA | REQ_PREFLUSH)) ||
	    ((a->bi_opf ^ b->bi_opf) & same) || a->bi_ioprio != b->bi_ioprio)
		return false;
	return rs_bio_same_blkg(a, b);
}

struct rs_r5_join {
	struct bio *bio;
	unsigned int maxs;
};

/*
 * rs_op_join()'s callback: give the next piece of a user write, which
 * begins where @op's write ends, to @op, which waits for a stripe; as much
 * of it as fits in maxs stripes from op's first.
 */
static bool rs_r5_join_one(struct rs_op *op, void *data)
{
	const struct rs_r5_join *j = data;
	struct rs_r5_op *r5 = to_r5(op);
	struct rainssd *rs = op->rs;
	const struct rs_geom *g = &rs->geom;
	struct rs_bio *rb = rs_bio(j->bio);
	sector_t ls = rb->iter.bi_sector;
	sector_t le = ls + (rb->iter.bi_size >> SECTOR_SHIFT);
	unsigned int pages, nr;
	struct rs_piece *p;

	if (r5->kind != RS_R5_WRITE || !op->bio || op->nr_more == RS_OP_MAX_MORE ||
	    r5->lend != ls || !rs_r5_can_join(op->bio, j->bio))
		return false;
	le = min_t(sector_t, le, (op->stripe + j->maxs) * g->stripe_data);
	if (le <= ls)
		return false;
	pages = rs_r5_layout(rs, NULL, r5->lstart, le);
	nr = div_u64(le - 1, g->stripe_data) - op->stripe + 1;
	if (!rs_op_grow(op, nr, pages, DIV_ROUND_UP(pages, g->n)))
		return false;
	rs_r5_layout(rs, r5, r5->lstart, le);
	p = &op->more[op->nr_more++];
	p->bio = j->bio;
	p->iter = rb->iter;
	p->iter.bi_size = (le - ls) << SECTOR_SHIFT;
	atomic_inc(&rb->pending);
	bio_advance_iter(j->bio, &rb->iter, p->iter.bi_size);
	op->join_key = le;
	rs_stat_inc(rs, RS_STAT_JOINED);
	return true;
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
	struct rs_r5_join j = { .bio = bio, .maxs = maxs };

	while (rb->iter.bi_size) {
		sector_t ls = rb->iter.bi_sector;
		sector_t le = ls + (rb->iter.bi_size >> SECTOR_SHIFT);
		u64 stripe = div_u64(ls, g->stripe_data);
		unsigned int pages;
		struct rs_r5_op *r5;
		struct rs_op *op;

		/*
		 * A read is served a chunk at a time (the map cuts most; a wide
		 * read that failed comes whole), a write by up to maxs stripes.
		 */
		if (read) {
			le = min_t(sector_t, le, round_down(ls, g->chunk) + g->chunk);
		} else {
			/* After a write that waits for its stripe: served with it. */
			if (!(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH)) &&
			    rs_op_join(rs, ls, rs_r5_join_one, &j))
				continue;
			le = min_t(sector_t, le, (stripe + maxs) * g->stripe_data);
		}
		pages = rs_r5_layout(rs, NULL, ls, le);
		/* A tier read again: scratch for the copy's rows (member slot n). */
		if (read && rb->tier)
			pages += pages / g->n;
		op = rs_op_get(rs, DIV_ROUND_UP(pages, g->n), false);
		if (!op)
			return false;
		r5 = to_r5(op);
		r5->kind = !read ? RS_R5_WRITE : rb->tier ? RS_R5_TREAD : RS_R5_READ;
		rs_r5_setup(rs, r5, rb, ls, le);
		/* A tier read that failed: rb->member is the copy that failed it. */
		if (rb->tier) {
			r5->bad = 0;
			r5->tbad = BIT(rb->member);
		}
		op->bio = bio;
		op->iter = rb->iter;
		op->iter.bi_size = (le - ls) << SECTOR_SHIFT;
		atomic_inc(&rb->pending);
		bio_advance_iter(bio, &rb->iter, op->iter.bi_size);
		/* The next write may join it while it waits (rs_r5_join_one). */
		if (!read && !(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH)))
			rs_op_set_joinable(op, le);
		rs_op_start(op, pages, rs_r5_plan);
	}
	/* Every piece is out: drop the cutting reference. */
	rs_bio_endio_piece(rs, bio, BLK_STS_OK);
	return true;
}

/*
 * Move @stripe out of the tier into its home (the offline migration); @done
 * runs in the workqueue when it has ended, with the sectors it moved per
 * member. False when no operation can be had now.
 */
bool rs_r5_migrate(struct rainssd *rs, u64 stripe, rs_r5_done_fn done, void *ctx)
{
	const struct rs_geom *g = &rs->geom;
	unsigned int pages = rs_op_migrate_pages(g);
	struct rs_r5_op *r5;
	struct rs_op *op;

	op = rs_op_get(rs, DIV_ROUND_UP(pages, g->n), true);
	if (!op)
		return false;
	r5 = to_r5(op);
	r5->kind = RS_R5_MIGRATE;
	op->stripe = stripe;
	op->nr = 1;
	r5->lstart = stripe * g->stripe_data;
	r5->lend = r5->lstart + g->stripe_data;
	r5->rows[0].end = g->chunk;
	r5->rows[1].end = g->chunk;
	r5->np[0] = rs_pages_for(g->chunk);
	r5->np[1] = r5->np[0];
	r5->done = done;
	r5->done_ctx = ctx;
	rs_op_start(op, pages, rs_r5_plan);
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

	op = rs_op_get(rs, DIV_ROUND_UP(pages, g->n), true);
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
