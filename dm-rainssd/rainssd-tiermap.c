// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd RAID1 tier: state and mapping table (see rainssd-tiermap.h).
 *
 * In memory:
 *
 *   table     the table's blocks as on disk (payload; headers are sealed
 *             in the commit's copy), block 0 the layout, then the
 *             written-stripe bitmap, then the records;
 *   smap      one word per stripe: record + 1 (0: none), its write history,
 *             whether it was ever written, and a referenced bit (CLOCK);
 *   slot_map  per member, the chunk slots in use; pend/rel the ones given
 *             up and not yet free (pend: since the running commit began;
 *             rel: in it); rec_map, rec_pend, rec_rel the same for records.
 *
 * Generations: gen[b] is the generation of block b's newest copy on disk,
 * active[b] which of its two copies holds it; a commit writes gen[b] + 1
 * to the other copy.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "rainssd.h"
#include "rainssd-fault.h"
#include "rainssd-meta.h"
#include "rainssd-tiermap.h"

/* The per-stripe word. */
#define RS_TSM_REC		GENMASK(23, 0)	/* record + 1, 0: none */
#define RS_TSM_HIST_SHIFT	24
#define RS_TSM_HIST		GENMASK(29, 24)
#define RS_TSM_HIST_MAX		63U
#define RS_TSM_REF		BIT(30)		/* written since the clock hand passed */
#define RS_TSM_WRITTEN		BIT(31)

/* Hints (written-stripe bits) are committed at least this often when dirty. */
#define RS_TIER_PERIOD_MS	5000

struct rs_tier_wr {
	struct rs_tier *tr;
};

struct rs_tier {
	struct rainssd *rs;
	struct rs_tier_layout t;
	u8 uuid[16];
	u64 stripes;

	spinlock_t lock;		/* everything to the I/O state */
	u8 *table;
	u64 *gen;
	u8 *active;
	unsigned long *dirty;		/* blocks changed since their last write began */
	u32 *smap;
	unsigned long *slot_map[RS_MAX_DEVS], *pend[RS_MAX_DEVS], *rel[RS_MAX_DEVS];
	u32 free[RS_MAX_DEVS];		/* slots neither used nor pending */
	u32 hint[RS_MAX_DEVS];
	unsigned long *rec_map, *rec_pend, *rec_rel;
	u32 recs_used;			/* records holding a stripe */
	u32 recs_free;			/* records neither used nor pending */
	u32 rec_hint;
	u32 clock;			/* the offline migration's hand */
	u64 seq;			/* the next record's */
	u64 cseq;			/* the last completed commit's sequence number */
	u64 change, committed;		/* mapping changes made, and committed */
	u64 left;			/* the change of the last stripe to leave */
	bool pending_any;		/* something waits in pend/rec_pend */
	struct list_head waiters;	/* operations waiting for a commit */
	struct bio_list flushes;	/* flush bios waiting for a commit */
	enum rs_tier_mode mode;
	bool needs_check;

	/* The read epoch: see rainssd-tiermap.h. */
	unsigned int epoch;
	atomic_t readers[2];
	wait_queue_head_t drain;

	struct workqueue_struct *wq;	/* ordered: one commit at a time */
	struct work_struct commit_work;
	struct delayed_work periodic;
	bool running;
	struct dm_io_client *io;
	u8 *bounce;			/* the blocks of the commit in progress */
	u8 *vec;			/* its commit record */
	unsigned long *writing;
	atomic_t inflight;
	unsigned long io_failed;	/* members whose I/O of the round failed */
	struct completion io_done;
	struct rs_tier_wr wr[RS_MAX_DEVS];

	atomic64_t to_r1, to_r5, offline, r1_writes, r1_reads, commits;
};

const struct rs_tier_layout *rs_tier_layout_of(struct rs_tier *tr)
{
	return &tr->t;
}

static u8 *rs_tier_rec_bytes(struct rs_tier *tr, u32 rec)
{
	return tr->table + (size_t)rs_tier_rec_block(&tr->t, rec) * RS_TIER_BLOCK +
	       rs_tier_rec_offset(&tr->t, rec);
}

static u32 rs_tier_rec_blk(struct rs_tier *tr, u32 rec)
{
	return rs_tier_rec_block(&tr->t, rec);
}

/* The written-stripe bitmap: bit s of the payloads of blocks 1 .. wb_blocks. */
static u8 *rs_tier_wb_byte(struct rs_tier *tr, u64 stripe, u32 *blk)
{
	u64 per = (RS_TIER_BLOCK - RS_TIER_HDR) * 8;
	u32 b = 1 + div64_u64(stripe, per);
	u64 bit = stripe - (b - 1) * per;

	*blk = b;
	return tr->table + (size_t)b * RS_TIER_BLOCK + RS_TIER_HDR + bit / 8;
}

static void rs_tier_dirty(struct rs_tier *tr, u32 blk)
{
	__set_bit(blk, tr->dirty);
}

/* ---- lookups ---- */

void rs_tier_view(struct rs_tier *tr, u64 stripe, struct rs_tier_view *v)
{
	u32 w = READ_ONCE(tr->smap[stripe]);
	u32 rec = w & RS_TSM_REC;

	v->hist = (w & RS_TSM_HIST) >> RS_TSM_HIST_SHIFT;
	v->written = w & RS_TSM_WRITTEN;
	if (!rec) {
		v->rec = U32_MAX;
		v->r = NULL;
		return;
	}
	/* The record's bytes were filled before the word was published (rs_tier_enter). */
	smp_rmb();
	v->rec = rec - 1;
	v->r = rs_tier_rec_bytes(tr, rec - 1);
}

/* Whether a stripe could enter the tier now: a free record and room for its copies. */
bool rs_tier_room(struct rs_tier *tr)
{
	return READ_ONCE(tr->recs_free) && READ_ONCE(tr->mode) == RS_TIER_RW;
}

/*
 * A read that may go to a mirror copy: call before looking the record up,
 * and rs_tier_read_end() with the value returned when its bio completed.
 */
unsigned int rs_tier_read_begin(struct rs_tier *tr)
{
	unsigned int e;

	for (;;) {
		e = READ_ONCE(tr->epoch) & 1;
		atomic_inc(&tr->readers[e]);
		/* Counted before the record is looked up: pairs with rs_tier_commit()'s flip. */
		smp_mb__after_atomic();
		/*
		 * Counted in the epoch now current: a commit that flipped
		 * before the count may have drained that counter already,
		 * and the next one would drain the other.
		 */
		if ((READ_ONCE(tr->epoch) & 1) == e)
			return e;
		rs_tier_read_end(tr, e);
	}
}

void rs_tier_read_end(struct rs_tier *tr, unsigned int e)
{
	if (atomic_dec_and_test(&tr->readers[e]))
		wake_up(&tr->drain);
}

/* ---- changes ---- */

static void rs_tier_set_word(struct rs_tier *tr, u64 stripe, u32 w)
{
	WRITE_ONCE(tr->smap[stripe], w);
}

/* A write to @stripe (in either tier): its history is now @hist. */
void rs_tier_note_write(struct rs_tier *tr, u64 stripe, unsigned int hist)
{
	unsigned long flags;
	u32 w, blk;
	u8 *p;

	spin_lock_irqsave(&tr->lock, flags);
	w = tr->smap[stripe] & ~RS_TSM_HIST;
	w |= min(hist, RS_TSM_HIST_MAX) << RS_TSM_HIST_SHIFT;
	if (w & RS_TSM_REC)
		w |= RS_TSM_REF;
	if (!(w & RS_TSM_WRITTEN)) {
		w |= RS_TSM_WRITTEN;
		p = rs_tier_wb_byte(tr, stripe, &blk);
		*p |= BIT(stripe % 8);
		rs_tier_dirty(tr, blk);
	}
	rs_tier_set_word(tr, stripe, w);
	spin_unlock_irqrestore(&tr->lock, flags);
}

static u32 rs_tier_take_slot(struct rs_tier *tr, unsigned int m)
{
	u32 s = find_next_zero_bit(tr->slot_map[m], tr->t.slots, tr->hint[m]);

	if (s >= tr->t.slots)
		s = find_first_zero_bit(tr->slot_map[m], tr->t.slots);
	__set_bit(s, tr->slot_map[m]);
	tr->free[m]--;
	tr->hint[m] = s + 1 < tr->t.slots ? s + 1 : 0;
	return s;
}

/*
 * @stripe enters the tier: a record, and for each data chunk two slots on
 * the two members rs_tier_choose() picks from @queued (requests in flight
 * per member) and the free slots, none of them @dead. No row is written in
 * the tier yet: every row is still read from the home. Returns the record,
 * or U32_MAX when there is no room. Never sleeps.
 */
u32 rs_tier_enter(struct rs_tier *tr, u64 stripe, unsigned long dead, const u32 *queued,
		  unsigned int hist)
{
	unsigned int nk = tr->t.n - 1, k, c;
	u8 pair[RS_MAX_DEVS - 1][2];
	u32 free[RS_MAX_DEVS];
	unsigned long flags;
	u32 rec, w;
	u8 *r;

	spin_lock_irqsave(&tr->lock, flags);
	if (tr->mode != RS_TIER_RW || !tr->recs_free || (tr->smap[stripe] & RS_TSM_REC))
		goto none;
	memcpy(free, tr->free, sizeof(free));
	if (!rs_tier_choose(tr->t.n, dead, queued, free, nk, pair))
		goto none;
	rec = find_next_zero_bit(tr->rec_map, tr->t.records, tr->rec_hint);
	if (rec >= tr->t.records)
		rec = find_first_zero_bit(tr->rec_map, tr->t.records);
	if (WARN_ON_ONCE(rec >= tr->t.records))
		goto none;
	__set_bit(rec, tr->rec_map);
	tr->recs_free--;
	tr->recs_used++;
	tr->rec_hint = rec + 1 < tr->t.records ? rec + 1 : 0;
	r = rs_tier_rec_bytes(tr, rec);
	rs_tier_r_clear(&tr->t, r);
	rs_tier_r_set_head(r, stripe, tr->seq++);
	for (k = 0; k < nk; k++)
		for (c = 0; c < 2; c++)
			rs_tier_r_set_copy(&tr->t, r, k, c, pair[k][c],
					   rs_tier_take_slot(tr, pair[k][c]));
	rs_tier_dirty(tr, rs_tier_rec_blk(tr, rec));
	tr->change++;
	w = tr->smap[stripe] & (RS_TSM_WRITTEN);
	w |= (rec + 1) | RS_TSM_REF | (min(hist, RS_TSM_HIST_MAX) << RS_TSM_HIST_SHIFT);
	/* The record's bytes before the word that points to them. */
	smp_wmb();
	rs_tier_set_word(tr, stripe, w);
	spin_unlock_irqrestore(&tr->lock, flags);
	atomic64_inc(&tr->to_r1);
	return rec;
none:
	spin_unlock_irqrestore(&tr->lock, flags);
	return U32_MAX;
}

/* Rows [start, end) of chunk @k of record @rec are now written in its copies. */
void rs_tier_set_rows(struct rs_tier *tr, u32 rec, unsigned int k, unsigned int start,
		      unsigned int end)
{
	u8 *r = rs_tier_rec_bytes(tr, rec);
	unsigned long flags;
	unsigned int row;

	for (row = start; row < end; row++)
		if (!rs_tier_r_row(&tr->t, r, k, row))
			break;
	if (row >= end)
		return;		/* nothing new: nothing to commit */
	spin_lock_irqsave(&tr->lock, flags);
	rs_tier_r_set_rows(&tr->t, r, k, start, end);
	rs_tier_dirty(tr, rs_tier_rec_blk(tr, rec));
	tr->change++;
	spin_unlock_irqrestore(&tr->lock, flags);
}

/*
 * @stripe leaves the tier (its home holds all of its data now): its record
 * is cleared, and the record and slots are given up, free again once a
 * commit has recorded it and no read can still use them.
 */
void rs_tier_leave(struct rs_tier *tr, u64 stripe, bool offline)
{
	unsigned int k, c, m;
	unsigned long flags;
	u32 w, rec, slot;
	u8 *r;

	spin_lock_irqsave(&tr->lock, flags);
	w = tr->smap[stripe];
	if (WARN_ON_ONCE(!(w & RS_TSM_REC))) {
		spin_unlock_irqrestore(&tr->lock, flags);
		return;
	}
	rec = (w & RS_TSM_REC) - 1;
	r = rs_tier_rec_bytes(tr, rec);
	for (k = 0; k < tr->t.n - 1; k++) {
		for (c = 0; c < 2; c++) {
			rs_tier_r_copy(&tr->t, r, k, c, &m, &slot);
			__set_bit(slot, tr->pend[m]);
		}
	}
	__set_bit(rec, tr->rec_pend);
	tr->pending_any = true;
	tr->recs_used--;
	rs_tier_set_word(tr, stripe, (w & ~(RS_TSM_REC | RS_TSM_REF | RS_TSM_HIST)) |
				     (1U << RS_TSM_HIST_SHIFT));
	/*
	 * Empty from now on: the commit writes it as zeros; its copies and
	 * rows stay for the reads that found it before, until it is released.
	 */
	put_unaligned_le64(0, r);
	rs_tier_dirty(tr, rs_tier_rec_blk(tr, rec));
	tr->left = ++tr->change;
	spin_unlock_irqrestore(&tr->lock, flags);
	atomic64_inc(offline ? &tr->offline : &tr->to_r5);
}

void rs_tier_count(struct rs_tier *tr, bool write)
{
	atomic64_inc(write ? &tr->r1_writes : &tr->r1_reads);
}

u32 rs_tier_used(struct rs_tier *tr)
{
	return READ_ONCE(tr->recs_used);
}

/*
 * The next stripe for the offline migration: the clock hand goes round the
 * records in use; one written since the hand last passed gets a second
 * chance (its referenced bit cleared), the first one that was not is
 * picked. False when the tier is empty.
 */
bool rs_tier_pick_cold(struct rs_tier *tr, u64 *stripe)
{
	unsigned long flags;
	unsigned int laps;
	u32 rec, w;
	u64 s;

	spin_lock_irqsave(&tr->lock, flags);
	for (laps = 0; laps < 3 && tr->recs_used; ) {
		rec = find_next_bit(tr->rec_map, tr->t.records, tr->clock);
		if (rec >= tr->t.records) {
			tr->clock = 0;
			laps++;
			continue;
		}
		tr->clock = rec + 1;
		if (test_bit(rec, tr->rec_pend) || test_bit(rec, tr->rec_rel))
			continue;
		s = rs_tier_r_stripe(rs_tier_rec_bytes(tr, rec));
		w = tr->smap[s];
		if (w & RS_TSM_REF) {
			rs_tier_set_word(tr, s, w & ~RS_TSM_REF);
			continue;
		}
		*stripe = s;
		spin_unlock_irqrestore(&tr->lock, flags);
		return true;
	}
	spin_unlock_irqrestore(&tr->lock, flags);
	return false;
}

/* ---- commit ---- */

/* One table I/O ended (dm-io's callback; interrupt context allowed). */
static void rs_tier_io_done(unsigned long error, void *context)
{
	struct rs_tier_wr *wr = context;

	if (error)
		set_bit(wr - wr->tr->wr, &wr->tr->io_failed);
	if (atomic_dec_and_test(&wr->tr->inflight))
		complete(&wr->tr->io_done);
}

/* Start a round of table I/O; rs_tier_io_wait() ends it. */
static void rs_tier_io_begin(struct rs_tier *tr)
{
	atomic_set(&tr->inflight, 1);
	tr->io_failed = 0;
	reinit_completion(&tr->io_done);
}

/*
 * Submit, in the current round, @opf (with no data and @count 0: an empty
 * flush) on member @m for @count blocks at @buf as blocks [@blk, @blk +
 * @count) of table copy @copy; nothing for a member out of service.
 */
static void rs_tier_io_add(struct rs_tier *tr, unsigned int m, blk_opf_t opf, unsigned int copy,
			   u32 blk, u32 count, void *buf)
{
	struct rainssd *rs = tr->rs;
	struct dm_io_region where = {
		.sector = count ? rs_tier_copy_sector(&tr->t, copy, blk) : 0,
		.count = count * RS_TIER_BLOCK_SECTORS,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.notify.fn = rs_tier_io_done,
		.notify.context = &tr->wr[m],
		.client = tr->io,
	};

	tr->wr[m].tr = tr;
	if (!rs->dev[m] || rs_member_dead(rs, m))
		return;
	where.bdev = rs->dev[m]->bdev;
	if (count)
		rs_load_own_io(&rs->load, m, where.count);
	atomic_inc(&tr->inflight);
	if (WARN_ON_ONCE(dm_io(&req, 1, &where, NULL, IOPRIO_DEFAULT))) {
		set_bit(m, &tr->io_failed);
		atomic_dec(&tr->inflight);
	}
}

/* Wait for the round; the members whose I/O failed. Sleeps. */
static unsigned long rs_tier_io_wait(struct rs_tier *tr)
{
	if (!atomic_dec_and_test(&tr->inflight))
		wait_for_completion(&tr->io_done);
	return READ_ONCE(tr->io_failed);
}

/* Read @count blocks from @blk of copy @copy on member @m into @buf. Sleeps. */
static bool rs_tier_read(struct rs_tier *tr, unsigned int m, unsigned int copy, u32 blk,
			 u32 count, void *buf)
{
	rs_tier_io_begin(tr);
	rs_tier_io_add(tr, m, REQ_OP_READ | REQ_SYNC | REQ_META, copy, blk, count, buf);
	return !rs_tier_io_wait(tr);
}

/*
 * Wake what waited for changes up to tr->committed (a flush bio's token is
 * kept in its rs_bio's t_map, unused by flushes); the caller holds the lock.
 */
static void rs_tier_wake(struct rs_tier *tr, struct list_head *ready, struct bio_list *flushes)
{
	bool fail = tr->mode == RS_TIER_FAIL;
	struct bio_list keep;
	struct rs_op *op, *tmp;
	struct bio *bio;

	list_for_each_entry_safe(op, tmp, &tr->waiters, wait)
		if (op->token <= tr->committed || fail)
			list_move_tail(&op->wait, ready);
	bio_list_init(&keep);
	while ((bio = bio_list_pop(&tr->flushes)))
		bio_list_add(rs_bio(bio)->t_map <= tr->committed || fail ? flushes : &keep, bio);
	bio_list_merge(&tr->flushes, &keep);
}

/* Send on (or fail) the flush bios that waited for the commit. */
static void rs_tier_release_flushes(struct rs_tier *tr, struct bio_list *flushes)
{
	struct rainssd *rs = tr->rs;
	struct bio *bio;

	while ((bio = bio_list_pop(flushes))) {
		struct rs_bio *rb = rs_bio(bio);

		if (tr->mode == RS_TIER_FAIL) {
			/*
			 * The table's failure, not the member's: held, so that
			 * rs_end_io() does not fail the member for it (up to
			 * 1.11.19 it failed members that were in service).
			 */
			rb->kind = RS_BIO_FLUSH_HELD;
			bio->bi_status = BLK_STS_IOERR;
			bio_endio(bio);
			continue;
		}
		bio_set_dev(bio, rs->dev[rb->member]->bdev);
		dm_submit_bio_remap(bio, NULL);
	}
}

/* The first block number (and, from the table's start, block) of commit record @cseq's slot. */
static u32 rs_tier_vec_block(struct rs_tier *tr, u64 cseq)
{
	return 2 * tr->t.blocks + (cseq % 2) * tr->t.vec_blocks;
}

/*
 * Commit record @cseq into tr->vec: the generation every table block will
 * have once this commit's blocks (tr->writing) are on disk, its blocks
 * numbered blocks + slot * vec_blocks + j, their generation @cseq.
 */
static void rs_tier_vec_seal(struct rs_tier *tr, u64 cseq)
{
	struct rs_tier_blk h = { .gen = cseq };
	u32 b, j;
	u8 *blk;

	memset(tr->vec, 0, (size_t)tr->t.vec_blocks * RS_TIER_BLOCK);
	for (b = 0; b < tr->t.blocks; b++) {
		blk = tr->vec + (size_t)(b / RS_TIER_VEC_PER_BLOCK) * RS_TIER_BLOCK;
		put_unaligned_le64(tr->gen[b] + test_bit(b, tr->writing),
				   blk + RS_TIER_HDR + (b % RS_TIER_VEC_PER_BLOCK) * 8);
	}
	memcpy(h.uuid, tr->uuid, sizeof(h.uuid));
	for (j = 0; j < tr->t.vec_blocks; j++) {
		h.block = tr->t.blocks + (cseq % 2) * tr->t.vec_blocks + j;
		rs_tier_blk_seal(tr->vec + (size_t)j * RS_TIER_BLOCK, &h);
	}
}

/*
 * In the commit's copy of block @b: records given up (their stripe field
 * cleared by rs_tier_leave(), the rest kept for reads still under way) are
 * zero on disk.
 */
static void rs_tier_seal(struct rs_tier *tr, u32 b)
{
	u8 *blk = tr->bounce + (size_t)b * RS_TIER_BLOCK;
	struct rs_tier_blk h = { .block = b, .gen = tr->gen[b] + 1 };
	unsigned int r;
	u8 *rec;

	if (b >= 1 + tr->t.wb_blocks) {
		for (r = 0; r < tr->t.recs_per_block; r++) {
			rec = blk + RS_TIER_HDR + r * tr->t.rec_size;
			if (!get_unaligned_le64(rec))
				memset(rec, 0, tr->t.rec_size);
		}
	}
	memcpy(h.uuid, tr->uuid, sizeof(h.uuid));
	rs_tier_blk_seal(blk, &h);
}

/*
 * One commit. Under the lock: the dirty blocks copied, what was given up so
 * far set to be released by this commit, the read epoch flipped. Then,
 * with no lock: every member's cache flushed (the data the new table points
 * to is on stable media on every member before any member holds the
 * table), the blocks written, each to its other copy on every live member
 * with FUA; the readers of the old epoch drained; and only then, under the
 * lock again, the new generations taken and the slots and records given up
 * before the commit released. Sleeps.
 */
static void rs_tier_commit(struct rs_tier *tr)
{
	struct rainssd *rs = tr->rs;
	unsigned long failed, live = 0, nofl = 0;
	struct bio_list flushes;
	unsigned int m, old;
	bool any, lost = false;
	LIST_HEAD(ready);
	u64 want;
	u32 b, rec;
	struct rs_op *op, *tmp;

	bio_list_init(&flushes);
	spin_lock_irq(&tr->lock);
	want = tr->change;
	any = !bitmap_empty(tr->dirty, tr->t.blocks);
	bitmap_copy(tr->writing, tr->dirty, tr->t.blocks);
	bitmap_zero(tr->dirty, tr->t.blocks);
	for_each_set_bit(b, tr->writing, tr->t.blocks)
		memcpy(tr->bounce + (size_t)b * RS_TIER_BLOCK,
		       tr->table + (size_t)b * RS_TIER_BLOCK, RS_TIER_BLOCK);
	/* What was given up so far is released by this commit. */
	for (m = 0; m < tr->t.n; m++) {
		bitmap_or(tr->rel[m], tr->rel[m], tr->pend[m], tr->t.slots);
		bitmap_zero(tr->pend[m], tr->t.slots);
	}
	bitmap_or(tr->rec_rel, tr->rec_rel, tr->rec_pend, tr->t.records);
	bitmap_zero(tr->rec_pend, tr->t.records);
	tr->pending_any = false;
	old = tr->epoch & 1;
	/* The frees above before the flip (pairs with rs_tier_read_begin()). */
	smp_mb();
	WRITE_ONCE(tr->epoch, tr->epoch + 1);
	/* The flip before the readers of the old epoch are counted. */
	smp_mb();
	spin_unlock_irq(&tr->lock);

	for_each_set_bit(b, tr->writing, tr->t.blocks)
		rs_tier_seal(tr, b);
	/*
	 * A member failed in memory is left out below: the superblocks say so
	 * first (1.11.4), or a cut would bring it back in sync with a table
	 * it never took.
	 */
	if (any && READ_ONCE(rs->dead_mask))
		rs_meta_commit_wait(rs->meta);
	for (m = 0; m < rs->geom.n; m++)
		if (rs->dev[m] && !rs_member_dead(rs, m))
			__set_bit(m, &live);
	if (any && tr->mode != RS_TIER_FAIL) {
		/* Every member's cache before any table block: an empty flush each. */
		for_each_set_bit(m, &live, rs->geom.n)
			if (rs_fault_fail_meta_flush(m))
				__set_bit(m, &nofl);
		rs_tier_io_begin(tr);
		for_each_set_bit(m, &live, rs->geom.n)
			if (!test_bit(m, &nofl))
				rs_tier_io_add(tr, m, REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC, 0, 0,
					       0, NULL);
		failed = rs_tier_io_wait(tr) | nofl;
		for_each_set_bit(m, &failed, rs->geom.n)
			rs_member_failed(rs, m, "tier table flush error");
		/*
		 * A member whose flush failed may have lost the rows the new
		 * table points to, and one failed in memory since @live was
		 * taken (a write error, a message) got no flush: the
		 * superblocks say they failed before any member holds that
		 * table (up to 1.11.12 only after, so that a cut in between
		 * left such a member in sync under the new table).
		 */
		failed |= live & READ_ONCE(rs->dead_mask);
		if (failed) {
			rs_meta_commit_wait(rs->meta);
			live &= ~failed;
			failed = 0;
		}
		/* Too few left to hold the volume: no member takes the table. */
		if (!live || rs_dead_count(rs) > 1)
			live = 0;
		rs_tier_io_begin(tr);
		for_each_set_bit(b, tr->writing, tr->t.blocks)
			for_each_set_bit(m, &live, rs->geom.n)
				rs_tier_io_add(tr, m, REQ_OP_WRITE | REQ_FUA | REQ_SYNC | REQ_META |
					       REQ_PRIO, !tr->active[b], b, 1,
					       tr->bounce + (size_t)b * RS_TIER_BLOCK);
		failed |= rs_tier_io_wait(tr);
		/*
		 * Then the commit record: every block's generation now. Until
		 * it is on disk a cut leaves the table as the last commit had
		 * it (the blocks of this one are passed over at load).
		 */
		rs_tier_vec_seal(tr, tr->cseq + 1);
		rs_tier_io_begin(tr);
		for_each_set_bit(m, &live, rs->geom.n)
			if (!test_bit(m, &failed))
				rs_tier_io_add(tr, m, REQ_OP_WRITE | REQ_FUA | REQ_SYNC | REQ_META |
					       REQ_PRIO, 0, rs_tier_vec_block(tr, tr->cseq + 1),
					       tr->t.vec_blocks, tr->vec);
		failed |= rs_tier_io_wait(tr);
		for_each_set_bit(m, &failed, rs->geom.n)
			rs_member_failed(rs, m, "tier table write error");
		/* Their failure on disk before what waits for this commit goes on. */
		if (failed)
			rs_meta_commit_wait(rs->meta);
		/* No live member took it, or too few are left to hold the volume. */
		if ((failed & live) == live || rs_dead_count(rs) > 1)
			lost = true;
		else
			atomic64_inc(&tr->commits);
	}
	wait_event(tr->drain, !atomic_read(&tr->readers[old]));

	spin_lock_irq(&tr->lock);
	if (lost) {
		tr->mode = RS_TIER_FAIL;
		DMERR_LIMIT("tier table: a commit reached no member; metadata_mode fail");
	} else if (tr->mode != RS_TIER_FAIL) {
		for_each_set_bit(b, tr->writing, tr->t.blocks) {
			tr->active[b] = !tr->active[b];
			tr->gen[b]++;
		}
		if (any)
			tr->cseq++;
		tr->committed = max(tr->committed, want);
		for (m = 0; m < tr->t.n; m++) {
			tr->free[m] += bitmap_weight(tr->rel[m], tr->t.slots);
			bitmap_andnot(tr->slot_map[m], tr->slot_map[m], tr->rel[m], tr->t.slots);
			bitmap_zero(tr->rel[m], tr->t.slots);
		}
		/* No read can be on them now: their bytes go too. */
		for_each_set_bit(rec, tr->rec_rel, tr->t.records)
			rs_tier_r_clear(&tr->t, rs_tier_rec_bytes(tr, rec));
		tr->recs_free += bitmap_weight(tr->rec_rel, tr->t.records);
		bitmap_andnot(tr->rec_map, tr->rec_map, tr->rec_rel, tr->t.records);
		bitmap_zero(tr->rec_rel, tr->t.records);
	}
	rs_tier_wake(tr, &ready, &flushes);
	spin_unlock_irq(&tr->lock);
	list_for_each_entry_safe(op, tmp, &ready, wait) {
		list_del(&op->wait);
		if (tr->mode == RS_TIER_FAIL)
			op->failed |= GENMASK(rs->geom.n - 1, 0);
		rs_op_queue(op, op->run);
	}
	rs_tier_release_flushes(tr, &flushes);
}

static void rs_tier_commit_work(struct work_struct *work)
{
	struct rs_tier *tr = container_of(work, struct rs_tier, commit_work);
	bool again;

	while (rs_fault_hold_tier_commits())
		msleep(20);
	do {
		rs_tier_commit(tr);
		spin_lock_irq(&tr->lock);
		/* Changes made while it ran, that somebody waits for. */
		again = tr->mode != RS_TIER_FAIL && tr->committed < tr->change &&
			(!list_empty(&tr->waiters) || !bio_list_empty(&tr->flushes));
		spin_unlock_irq(&tr->lock);
	} while (again);
}

static void rs_tier_periodic(struct work_struct *work)
{
	struct rs_tier *tr = container_of(to_delayed_work(work), struct rs_tier, periodic);
	bool kick;

	spin_lock_irq(&tr->lock);
	kick = !bitmap_empty(tr->dirty, tr->t.blocks) || tr->pending_any;
	if (tr->running)
		queue_delayed_work(tr->wq, &tr->periodic, msecs_to_jiffies(RS_TIER_PERIOD_MS));
	spin_unlock_irq(&tr->lock);
	if (kick)
		queue_work(tr->wq, &tr->commit_work);
}

/*
 * Queue @op to run @fn once the commits reach every change so far (@left
 * false) or every stripe's leaving the tier so far (@left true), and return
 * false; true when they do already, or when the table failed.
 */
static bool rs_tier_wait_for(struct rs_tier *tr, bool left, struct rs_op *op, rs_op_fn fn)
{
	unsigned long flags;
	u64 want;

	spin_lock_irqsave(&tr->lock, flags);
	want = left ? tr->left : tr->change;
	if (tr->committed >= want || tr->mode == RS_TIER_FAIL) {
		spin_unlock_irqrestore(&tr->lock, flags);
		return true;
	}
	op->token = want;
	op->run = fn;
	list_add_tail(&op->wait, &tr->waiters);
	spin_unlock_irqrestore(&tr->lock, flags);
	queue_work(tr->wq, &tr->commit_work);
	return false;
}

/*
 * @op changed the mapping (its write moved rows or stripes): queue it to
 * run @fn once every change made so far is committed, and return false;
 * true when they are already.
 */
bool rs_tier_wait_committed(struct rs_tier *tr, struct rs_op *op, rs_op_fn fn)
{
	return rs_tier_wait_for(tr, false, op, fn);
}

/*
 * A sync operation passed @op's stripes: queue it to run @fn once every
 * stripe that left the tier so far has left it on disk too, and return
 * false; true when they have. A stripe gone from the tier in memory only
 * still has its record on disk, whose copies the sync did not see. A
 * table that failed (RS_TIER_FAIL: no live member took a commit, or two
 * members are dead) is waited for by nothing: the volume is past syncing.
 */
bool rs_tier_wait_left(struct rs_tier *tr, struct rs_op *op, rs_op_fn fn)
{
	return rs_tier_wait_for(tr, true, op, fn);
}

/*
 * A flush (one of the target's per-member clones): when mapping changes
 * are not all committed, hold it until they are (it is then sent on to its
 * member, rs_bio(bio)->member) and return true.
 */
bool rs_tier_flush_wait(struct rs_tier *tr, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&tr->lock, flags);
	if (tr->committed == tr->change && tr->mode != RS_TIER_FAIL) {
		spin_unlock_irqrestore(&tr->lock, flags);
		return false;
	}
	rs_bio(bio)->t_map = tr->change;
	bio_list_add(&tr->flushes, bio);
	spin_unlock_irqrestore(&tr->lock, flags);
	queue_work(tr->wq, &tr->commit_work);
	return true;
}

/* Suspend, nothing in flight: commit everything, hints and frees included. Sleeps. */
int rs_tier_commit_sync(struct rs_tier *tr)
{
	if (!tr)
		return 0;
	queue_work(tr->wq, &tr->commit_work);
	flush_work(&tr->commit_work);
	/* Frees given up in that commit are released by the next one. */
	queue_work(tr->wq, &tr->commit_work);
	flush_work(&tr->commit_work);
	return tr->mode == RS_TIER_FAIL ? -EIO : 0;
}

enum rs_tier_mode rs_tier_mode(struct rs_tier *tr)
{
	return READ_ONCE(tr->mode);
}

const char *rs_tier_mode_name(enum rs_tier_mode m)
{
	static const char * const names[] = { "rw", "ro", "fail" };

	return m < ARRAY_SIZE(names) ? names[m] : "?";
}

void rs_tier_stats(struct rs_tier *tr, struct rs_tier_stats *st)
{
	unsigned long flags;
	unsigned int m;

	spin_lock_irqsave(&tr->lock, flags);
	st->records = tr->t.records;
	st->used = tr->recs_used;
	st->pending = tr->t.records - tr->recs_used - tr->recs_free;
	st->slots = tr->t.slots * tr->t.n;
	st->slots_used = 0;
	for (m = 0; m < tr->t.n; m++)
		st->slots_used += tr->t.slots - tr->free[m];
	st->mode = tr->mode;
	st->needs_check = tr->needs_check;
	spin_unlock_irqrestore(&tr->lock, flags);
	st->to_r1 = atomic64_read(&tr->to_r1);
	st->to_r5 = atomic64_read(&tr->to_r5);
	st->offline = atomic64_read(&tr->offline);
	st->r1_writes = atomic64_read(&tr->r1_writes);
	st->r1_reads = atomic64_read(&tr->r1_reads);
	st->commits = atomic64_read(&tr->commits);
}

/* ---- load ---- */

/*
 * Build the in-memory state from the table's records: every stripe's
 * newest record (by seq) holds it; an older record of the same stripe is
 * what a crash left before the newer one's commit and is dropped; records
 * that are impossible or claim one slot twice make the table corrupt.
 */
static int rs_tier_index(struct rs_tier *tr, const char **why)
{
	unsigned int nk = tr->t.n - 1, k, c, m;
	u32 rec, old, slot, blk;
	u64 s, maxseq = 0;
	u8 *r, *o;

	for (rec = 0; rec < tr->t.records; rec++) {
		r = rs_tier_rec_bytes(tr, rec);
		if (!get_unaligned_le64(r)) {
			if (memchr_inv(r, 0, tr->t.rec_size)) {
				*why = "an empty record that is not zero";
				return -EINVAL;
			}
			continue;
		}
		if (rs_tier_r_check(&tr->t, r, tr->stripes, why))
			return -EINVAL;
		s = rs_tier_r_stripe(r);
		maxseq = max(maxseq, rs_tier_r_seq(r));
		old = tr->smap[s] & RS_TSM_REC;
		if (old) {
			o = rs_tier_rec_bytes(tr, old - 1);
			if (rs_tier_r_seq(o) == rs_tier_r_seq(r)) {
				*why = "two records of one stripe with one sequence number";
				return -EINVAL;
			}
			/* The older one goes (and its block is to be rewritten). */
			if (rs_tier_r_seq(o) > rs_tier_r_seq(r)) {
				rs_tier_r_clear(&tr->t, r);
				rs_tier_dirty(tr, rs_tier_rec_blk(tr, rec));
				continue;
			}
			__clear_bit(old - 1, tr->rec_map);
			rs_tier_r_clear(&tr->t, o);
			rs_tier_dirty(tr, rs_tier_rec_blk(tr, old - 1));
		}
		__set_bit(rec, tr->rec_map);
		tr->smap[s] = (tr->smap[s] & ~RS_TSM_REC) | (rec + 1) | (1U << RS_TSM_HIST_SHIFT);
	}
	/* The written-stripe bits. */
	for (s = 0; s < tr->stripes; s++)
		if (*rs_tier_wb_byte(tr, s, &blk) & BIT(s % 8))
			tr->smap[s] |= RS_TSM_WRITTEN;
	/* The slots of the records kept, each claimed once. */
	for_each_set_bit(rec, tr->rec_map, tr->t.records) {
		r = rs_tier_rec_bytes(tr, rec);
		for (k = 0; k < nk; k++) {
			for (c = 0; c < 2; c++) {
				rs_tier_r_copy(&tr->t, r, k, c, &m, &slot);
				if (__test_and_set_bit(slot, tr->slot_map[m])) {
					*why = "two records claim one chunk slot";
					return -EINVAL;
				}
			}
		}
		tr->recs_used++;
	}
	tr->recs_free = tr->t.records - tr->recs_used;
	for (m = 0; m < tr->t.n; m++)
		tr->free[m] = tr->t.slots - bitmap_weight(tr->slot_map[m], tr->t.slots);
	tr->seq = maxseq + 1;
	return 0;
}

/* Whether member @m's copy of the table may be read (in service, not being rebuilt). */
static bool rs_tier_member_readable(struct rs_tier *tr, unsigned int m)
{
	struct rainssd *rs = tr->rs;

	return rs->dev[m] && rs_member_holds(rs, m, U64_MAX);
}

/*
 * The newest commit record any member holds whole (both slots of every
 * readable member; all its blocks valid, of one sequence number): its
 * generations in tr->gen, its sequence number in tr->cseq. -ENOENT when
 * there is none (*@seen_valid: a valid block of one was seen). Sleeps.
 */
static int rs_tier_load_vec(struct rs_tier *tr, bool write, bool *seen_valid)
{
	size_t bytes = (size_t)tr->t.vec_blocks * RS_TIER_BLOCK;
	unsigned int m, slot;
	bool found = false;
	u64 cseq, g;
	u32 j, b;
	u8 *buf;

	*seen_valid = false;
	buf = vmalloc(bytes);
	if (!buf)
		return -ENOMEM;
	for (m = 0; m < tr->t.n; m++) {
		if (!rs_tier_member_readable(tr, m))
			continue;
		for (slot = 0; slot < 2; slot++) {
			if (!rs_tier_read(tr, m, 0, 2 * tr->t.blocks + slot * tr->t.vec_blocks,
					  tr->t.vec_blocks, buf)) {
				if (write)
					rs_member_failed(tr->rs, m, "tier table read error");
				break;
			}
			cseq = 0;
			for (j = 0; j < tr->t.vec_blocks; j++) {
				if (rs_tier_blk_check(buf + (size_t)j * RS_TIER_BLOCK, tr->uuid,
						      tr->t.blocks + slot * tr->t.vec_blocks + j,
						      &g) != RS_TIER_BLK_VALID ||
				    (j && g != cseq) || g % 2 != slot) {
					cseq = 0;
					break;
				}
				*seen_valid = true;
				cseq = g;
			}
			if (!cseq || (found && cseq <= tr->cseq))
				continue;
			found = true;
			tr->cseq = cseq;
			for (b = 0; b < tr->t.blocks; b++)
				tr->gen[b] = get_unaligned_le64(buf +
					(size_t)(b / RS_TIER_VEC_PER_BLOCK) * RS_TIER_BLOCK +
					RS_TIER_HDR + (b % RS_TIER_VEC_PER_BLOCK) * 8);
		}
	}
	vfree(buf);
	return found ? 0 : -ENOENT;
}

/* Forget everything loaded before (the table is read at load and again at the first resume). */
static void rs_tier_reset(struct rs_tier *tr)
{
	unsigned int m;

	memset(tr->gen, 0, tr->t.blocks * sizeof(*tr->gen));
	memset(tr->active, 0, tr->t.blocks);
	memset(tr->table, 0, (size_t)tr->t.blocks * RS_TIER_BLOCK);
	memset(tr->smap, 0, tr->stripes * sizeof(*tr->smap));
	bitmap_zero(tr->dirty, tr->t.blocks);
	bitmap_zero(tr->rec_map, tr->t.records);
	bitmap_zero(tr->rec_pend, tr->t.records);
	bitmap_zero(tr->rec_rel, tr->t.records);
	for (m = 0; m < tr->t.n; m++) {
		bitmap_zero(tr->slot_map[m], tr->t.slots);
		bitmap_zero(tr->pend[m], tr->t.slots);
		bitmap_zero(tr->rel[m], tr->t.slots);
		tr->free[m] = tr->t.slots;
		tr->hint[m] = 0;
	}
	tr->recs_used = 0;
	tr->cseq = 0;
	tr->recs_free = tr->t.records;
	tr->rec_hint = 0;
	tr->clock = 0;
	tr->pending_any = false;
}

/*
 * Read the table (at load, and again at the first resume): each block from
 * every live member's two copies, the valid copy with the newest generation
 * wins. A fresh volume (@fresh) gets an empty table instead. With @write
 * (the first resume) the whole table is then written again with the next
 * generations, twice, to every live member (a replaced member gets it too,
 * and every copy and both commit record slots agree). -EINVAL with @why
 * when the table is corrupt: a block that no member holds whole, a header
 * for another layout, an impossible record, numbers near their limit.
 * Sleeps.
 */
static int rs_tier_load_once(struct rs_tier *tr, bool fresh, bool write, const char **why)
{
	struct rainssd *rs = tr->rs;
	size_t bytes = (size_t)tr->t.blocks * RS_TIER_BLOCK;
	unsigned int m, c;
	bool seen_valid = false, seen_corrupt = false;
	enum rs_tier_blk_kind kind;
	u8 *buf = NULL;
	u64 gen;
	u32 b;
	int r = 0;

	*why = NULL;
	rs_tier_reset(tr);
	if (!fresh) {
		unsigned long *have = bitmap_zalloc(tr->t.blocks, GFP_KERNEL);

		buf = vmalloc(bytes);
		if (!buf || !have) {
			bitmap_free(have);
			r = -ENOMEM;
			goto out;
		}
		r = rs_tier_load_vec(tr, write, &seen_valid);
		if (r) {
			bitmap_free(have);
			*why = r == -ENOMEM ? NULL : seen_valid ?
			       "tier table: no commit record any member holds whole (corrupt)" :
			       "tier table missing (the superblocks say the volume has one)";
			goto out;
		}
		/* Its commits would pass the limit (the superblocks' rule). */
		for (b = 0; b < tr->t.blocks && tr->gen[b] <= RS_TIER_SEQ_LIMIT; b++)
			;
		if (tr->cseq > RS_TIER_SEQ_LIMIT || b < tr->t.blocks) {
			bitmap_free(have);
			*why = "tier table: commit sequence too near its limit (corrupt)";
			r = -EINVAL;
			goto out;
		}
		if (!write && rs_fault_hold_tier_load()) {
			DMINFO("tier table load held (debugfs hold_tier_load)");
			while (rs_fault_hold_tier_load())
				msleep(20);
		}
		/* Each block as that record has it: a later copy is a commit cut short. */
		for (m = 0; m < rs->geom.n; m++) {
			if (!rs_tier_member_readable(tr, m))
				continue;
			for (c = 0; c < 2; c++) {
				if (!rs_tier_read(tr, m, c, 0, tr->t.blocks, buf)) {
					/* Passed over at load; failed at the first resume. */
					if (write)
						rs_member_failed(rs, m, "tier table read error");
					break;
				}
				for (b = 0; b < tr->t.blocks; b++) {
					kind = rs_tier_blk_check(buf + (size_t)b * RS_TIER_BLOCK,
								 tr->uuid, b, &gen);
					if (kind == RS_TIER_BLK_CORRUPT)
						seen_corrupt = true;
					if (kind != RS_TIER_BLK_VALID || gen != tr->gen[b] ||
					    test_bit(b, have))
						continue;
					__set_bit(b, have);
					tr->active[b] = c;
					memcpy(tr->table + (size_t)b * RS_TIER_BLOCK,
					       buf + (size_t)b * RS_TIER_BLOCK, RS_TIER_BLOCK);
				}
			}
		}
		b = find_first_zero_bit(have, tr->t.blocks);
		bitmap_free(have);
		if (b < tr->t.blocks) {
			DMERR("tier table: block %u, generation %llu (commit %llu), on no member",
			      b, tr->gen[b], tr->cseq);
			*why = "tier table: a block no member holds whole (corrupt)";
			r = -EINVAL;
			goto out;
		}
		if (!rs_tier_hdr_matches(&tr->t, tr->table)) {
			*why = "tier table made for another layout (tier_size or geometry)";
			r = -EINVAL;
			goto out;
		}
		if (seen_corrupt)
			DMWARN("tier table: a corrupt block copy passed over (another is whole)");
		/* Headers are sealed again at every write; the payloads stay. */
		for (b = 0; b < tr->t.blocks; b++)
			memset(tr->table + (size_t)b * RS_TIER_BLOCK, 0, RS_TIER_HDR);
		r = rs_tier_index(tr, why);
		if (r)
			goto out;
	} else {
		rs_tier_hdr_encode(&tr->t, tr->table);
		memset(tr->table, 0, RS_TIER_HDR);
		tr->seq = 1;
	}
	if (!write)
		goto out;
	/*
	 * Every block to every live member, at the next generation, twice:
	 * both copies of every block and both slots of the commit record then
	 * hold this table on every member. Up to 1.11.18 it was written once,
	 * and a member rebuilt onto a device of another copy of the volume
	 * kept that copy's newer commit record in its other slot (the tier
	 * commits only what changed): once that member was in sync, the load
	 * took its record, with the other copy's block generations.
	 */
	for (c = 0; c < 2 && !r; c++) {
		spin_lock_irq(&tr->lock);
		bitmap_fill(tr->dirty, tr->t.blocks);
		tr->change++;
		spin_unlock_irq(&tr->lock);
		r = rs_tier_commit_sync(tr);
	}
	if (!r) {
		spin_lock_irq(&tr->lock);
		tr->running = true;
		queue_delayed_work(tr->wq, &tr->periodic, msecs_to_jiffies(RS_TIER_PERIOD_MS));
		spin_unlock_irq(&tr->lock);
	}
out:
	vfree(buf);
	return r;
}

/*
 * rs_tier_load_once(), and for a read that writes nothing (the
 * constructor's) read again while the table changed under it: another
 * table of the device may be live and commit meanwhile (a `dmsetup
 * reload`), and two commits between reading the commit record and the
 * blocks leave the generation it names on no member. Up to 1.11.12 such a
 * reload was refused as a corrupt table; now a table found corrupt is
 * refused only when the newest commit record is still the one it was read
 * with (at most RS_TIER_LOAD_TRIES reads). Sleeps.
 */
#define RS_TIER_LOAD_TRIES	8

int rs_tier_load(struct rs_tier *tr, bool fresh, bool write, const char **why)
{
	unsigned int tries = 0;
	bool seen;
	u64 cseq;
	int r;

	for (;;) {
		r = rs_tier_load_once(tr, fresh, write, why);
		if (!r || r == -ENOMEM || write || fresh || ++tries == RS_TIER_LOAD_TRIES)
			return r;
		cseq = tr->cseq;
		if (rs_tier_load_vec(tr, false, &seen) || tr->cseq == cseq)
			return r;
		DMINFO("tier table: commit %llu while it was read at commit %llu: read again",
		       tr->cseq, cseq);
	}
}

/* ---- life cycle ---- */

int rs_tier_create(struct rainssd *rs, const struct rs_tier_layout *t, const u8 *uuid,
		   struct rs_tier **out)
{
	size_t bytes = (size_t)t->blocks * RS_TIER_BLOCK;
	struct rs_tier *tr;
	unsigned int m;

	/* rs_tier_layout() caps the stripes: the stripe map stays in kvmalloc()'s range. */
	BUILD_BUG_ON(RS_TIER_MAX_STRIPES * sizeof(*tr->smap) > INT_MAX);
	*out = NULL;
	tr = kzalloc(sizeof(*tr), GFP_KERNEL);
	if (!tr)
		return -ENOMEM;
	tr->rs = rs;
	tr->t = *t;
	memcpy(tr->uuid, uuid, sizeof(tr->uuid));
	tr->stripes = rs->stripes;
	spin_lock_init(&tr->lock);
	INIT_LIST_HEAD(&tr->waiters);
	bio_list_init(&tr->flushes);
	init_waitqueue_head(&tr->drain);
	init_completion(&tr->io_done);
	INIT_WORK(&tr->commit_work, rs_tier_commit_work);
	INIT_DELAYED_WORK(&tr->periodic, rs_tier_periodic);
	tr->table = vzalloc(bytes);
	tr->bounce = vzalloc(bytes);
	tr->vec = vzalloc((size_t)t->vec_blocks * RS_TIER_BLOCK);
	tr->gen = kvcalloc(t->blocks, sizeof(*tr->gen), GFP_KERNEL);
	tr->active = kvzalloc(t->blocks, GFP_KERNEL);
	tr->dirty = bitmap_zalloc(t->blocks, GFP_KERNEL);
	tr->writing = bitmap_zalloc(t->blocks, GFP_KERNEL);
	tr->smap = kvcalloc(rs->stripes, sizeof(*tr->smap), GFP_KERNEL);
	tr->rec_map = bitmap_zalloc(t->records, GFP_KERNEL);
	tr->rec_pend = bitmap_zalloc(t->records, GFP_KERNEL);
	tr->rec_rel = bitmap_zalloc(t->records, GFP_KERNEL);
	if (!tr->table || !tr->bounce || !tr->vec || !tr->gen || !tr->active || !tr->dirty ||
	    !tr->writing || !tr->smap || !tr->rec_map || !tr->rec_pend || !tr->rec_rel)
		goto bad;
	for (m = 0; m < t->n; m++) {
		tr->slot_map[m] = bitmap_zalloc(t->slots, GFP_KERNEL);
		tr->pend[m] = bitmap_zalloc(t->slots, GFP_KERNEL);
		tr->rel[m] = bitmap_zalloc(t->slots, GFP_KERNEL);
		if (!tr->slot_map[m] || !tr->pend[m] || !tr->rel[m])
			goto bad;
	}
	tr->io = dm_io_client_create();
	if (IS_ERR(tr->io)) {
		tr->io = NULL;
		goto bad;
	}
	tr->wq = alloc_ordered_workqueue("rainssd-tier", WQ_MEM_RECLAIM);
	if (!tr->wq)
		goto bad;
	*out = tr;
	return 0;
bad:
	rs_tier_destroy(tr);
	return -ENOMEM;
}

void rs_tier_destroy(struct rs_tier *tr)
{
	unsigned int m;

	if (!tr)
		return;
	if (tr->wq) {
		spin_lock_irq(&tr->lock);
		tr->running = false;
		spin_unlock_irq(&tr->lock);
		cancel_delayed_work_sync(&tr->periodic);
		destroy_workqueue(tr->wq);
	}
	WARN_ON_ONCE(!list_empty(&tr->waiters) || !bio_list_empty(&tr->flushes));
	if (tr->io)
		dm_io_client_destroy(tr->io);
	for (m = 0; m < RS_MAX_DEVS; m++) {
		bitmap_free(tr->slot_map[m]);
		bitmap_free(tr->pend[m]);
		bitmap_free(tr->rel[m]);
	}
	bitmap_free(tr->rec_rel);
	bitmap_free(tr->rec_pend);
	bitmap_free(tr->rec_map);
	kvfree(tr->smap);
	bitmap_free(tr->writing);
	bitmap_free(tr->dirty);
	kvfree(tr->active);
	kvfree(tr->gen);
	vfree(tr->vec);
	vfree(tr->bounce);
	vfree(tr->table);
	kfree(tr);
}
