// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd degraded-write log (see rainssd-log.h).
 *
 * On disk, each member's ring (RS_LOG_BYTES at RS_LOG_SECTOR) holds records
 * of 4 KiB blocks: a header block, then the partial parity, rows * 512
 * bytes, padded to a block. A record never wraps; the space at the end of
 * the ring that a record does not fit in is skipped, and the next record,
 * at block 0, starts the ring's next lap.
 *
 * Each ring has one write in flight at a time: the records that come
 * meanwhile wait in its queue and go together, those contiguous in the ring
 * in one FUA bio (md's PPL gathers partial parity into I/O units likewise,
 * with several in flight), so that at queue depth a member takes one log
 * write for the updates of several stripes instead of one each. A torn
 * group leaves whole records (each has its checksums), and none of their
 * updates has begun.
 *
 * Records take ring space in sequence order, lap after lap, and reach the
 * disk in that order too: a record waits in its ring's queue until every
 * record that took space before it has been given to a write (up to
 * 1.11.13 a record queued while an earlier one was still being checksummed
 * went first, past a new lap's zeros). So a record is overwritten only
 * after every record written before it was, except in a skipped tail:
 * there a record two laps old can outlive newer records of its stripe, and
 * replaying it would compute a wrong parity. Hence every header carries its lap, and
 * replay trusts only the records of the newest record's lap up to it and
 * those of the lap before after it. That alone is not enough when the
 * first write of a new lap is torn: it can destroy the lap's first records
 * and leave no whole record of the new lap, so that the records two laps
 * old in the tail the last lap skipped count as of the lap before and may
 * be the newest left of their stripe. So a new lap begins only once no
 * record in that tail is in use, and its first write waits for a FUA write
 * of zeros over the tail (up to 1.11.10 the tail was left as it was).
 *
 * Neither rule holds when a torn write lands some of its blocks and not
 * others, as a device may: over the lap before, it can destroy a stripe's
 * newest record and leave an older one of that stripe whole, which replay
 * then took for the newest (a review of 1.11.17 found it). Since 1.11.18
 * every header lists the sequence numbers of its ring's records in use
 * when it took its space (format 1), and replay trusts only the newest
 * whole record and the records it lists. A record whose update may have
 * begun at the cut is whole (no space in use is written over) and was in
 * use when the newest whole record took its space, unless it is that
 * record: one done by then has its data and parity on stable media (FUA)
 * and needs no replay. A listed record is the newest of its stripe that
 * may need it: a later update of the stripe began after that record was
 * done, so after the newest whole record took its space; its record is
 * newer, so it was never written whole, and the update never began. That
 * needs the newest record written before the torn write to be whole still,
 * which holds when one write covers less than half the ring: a write at
 * the head does not reach back over it, and when the write starts a lap
 * that record lies in the ring's last two records of the largest size
 * (257 blocks each). The lap rule stays for format 0 records (1.11.17 and
 * older, which read the new headers by that rule; the zeros keep it sound).
 *
 * The argument rests on three things outside this file: an update's
 * rs_log_done() comes before its stripes are unlocked (rs_r5_finish()), so
 * a stripe has one record in use at a time; a stripe's records all go to
 * its parity member's ring; and a logged update's data and parity writes
 * carry FUA.
 */
#include <linux/bio.h>
#include <linux/crc32c.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "rainssd.h"
#include "rainssd-fault.h"
#include "rainssd-log.h"
#include "rainssd-sb.h"
#include "rainssd-xor.h"

#define RS_LOG_MAGIC		0x52474f4c44535352ULL	/* "RSSDLOGR" */
#define RS_LOG_BLOCK		4096U
#define RS_LOG_BLOCKS		(RS_LOG_BYTES / RS_LOG_BLOCK)
/* Records in flight per member: what its ring may be asked to hold at once. */
#define RS_LOG_SLOTS		32

struct rs_log_rec_disk {
	__le64 magic;
	__le64 nonce;
	__le64 seq;
	__le64 stripe;
	__le32 lap;			/* the ring's lap it was written in */
	__le32 block;			/* where in the ring (block) */
	__le32 rows_start;
	__le32 rows_end;
	__le32 data_crc;		/* crc32c of the partial parity */
	__le32 hdr_crc;			/* crc32c of this block with this field 0 */
	__le32 w_start[RS_MAX_DEVS];	/* rows each member wrote (empty: none) */
	__le32 w_end[RS_MAX_DEVS];
	/* Format 1 (1.11.18): the ring's records in use when it took its space. */
	__le32 format;
	__le32 nr_busy;
	__le64 busy[RS_LOG_SLOTS];	/* their sequence numbers, nr_busy of them */
} __packed;

#define RS_LOG_FORMAT		1U
/* What one write of a ring may cover at most: less than half the ring. */
#define RS_LOG_MAX_WRITE	(RS_LOG_BLOCKS / 2 - 1)

struct rs_log_slot {
	bool busy;
	unsigned int start, len;	/* blocks of the ring */
	unsigned int member;
	u64 seq;
	u32 lap;
	/* The first record of a lap: the skipped tail from here is zeroed first. */
	unsigned int wipe;
	struct page *hdr;
	struct rs_op *op;
	unsigned int pp_pidx, bytes;	/* the partial parity: op->pages from pp_pidx */
	struct list_head queue;		/* in its ring's queue until written */
};

struct rs_log_ring {
	unsigned int head;		/* next free block */
	u32 lap;			/* wraps to block 0 so far */
	u64 seq;
	struct rs_log_slot slot[RS_LOG_SLOTS];
	struct list_head waiters;	/* operations waiting for space, FIFO */
	struct rs_log *log;
	unsigned int member;
	struct list_head queue;		/* records to write, in sequence order */
	u64 handed;			/* the last record given to a write */
	bool writing;			/* a write of records (or of zeros) is in flight */
	bool wipe_failed;		/* the zeros before its first record failed */
	/* The records of that write (owned by it until its end queues the work). */
	unsigned int nr_batch;
	struct rs_log_slot *batch[RS_LOG_SLOTS];
};

struct rs_log {
	struct rainssd *rs;
	struct bio_set bs;
	spinlock_t lock;		/* protects every ring (the log serves degraded volumes) */
	struct rs_log_ring ring[RS_MAX_DEVS];
	/* Starts the next write of the rings whose write ended. */
	struct work_struct work;
	DECLARE_BITMAP(ended, RS_MAX_DEVS);	/* rings whose write ended (atomic bits) */
};

static bool rs_log_overlaps(struct rs_log_ring *r, unsigned int start, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < RS_LOG_SLOTS; i++) {
		struct rs_log_slot *s = &r->slot[i];

		if (s->busy && start < s->start + s->len && s->start < start + len)
			return true;
	}
	return false;
}

/*
 * Where a record of @len blocks would go after @head: a free slot and its
 * start (0 when it does not fit before the end: a new lap), or false.
 */
static bool rs_log_fits(struct rs_log_ring *r, unsigned int head, unsigned int len,
			unsigned int *slot, unsigned int *start)
{
	unsigned int i;

	*start = head + len > RS_LOG_BLOCKS ? 0 : head;
	if (rs_log_overlaps(r, *start, len))
		return false;
	/* A new lap: its first write zeroes the tail, so no record may be in use there. */
	if (head + len > RS_LOG_BLOCKS && head < RS_LOG_BLOCKS &&
	    rs_log_overlaps(r, head, RS_LOG_BLOCKS - head))
		return false;
	for (i = 0; i < RS_LOG_SLOTS; i++) {
		if (!r->slot[i].busy) {
			*slot = i;
			return true;
		}
	}
	return false;
}

/*
 * A ring's write ended: each record's operation hears of it (its slot may
 * be reused once the operation is done, so nothing is read from a slot
 * after that), then the work starts the ring's next write. Interrupt
 * context.
 */
static void rs_log_endio(struct bio *bio)
{
	struct rs_log_ring *r = bio->bi_private;
	struct rs_log *log = r->log;
	unsigned int k, m = r->member, nr = r->nr_batch;
	struct rs_op *ops[RS_LOG_SLOTS];
	bool failed = bio->bi_status != BLK_STS_OK || r->wipe_failed;

	r->wipe_failed = false;
	/*
	 * The log may go once the last operation is told (it ends, then the
	 * target may be suspended and freed): nothing of it is touched after.
	 */
	for (k = 0; k < nr; k++)
		ops[k] = r->batch[k]->op;
	bio_put(bio);
	set_bit(m, log->ended);
	queue_work(log->rs->wq, &log->work);
	for (k = 0; k < nr; k++) {
		if (failed)
			set_bit(m, &ops[k]->failed);
		if (atomic_dec_and_test(&ops[k]->pending))
			rs_op_queue(ops[k], ops[k]->next);
	}
}

/*
 * Add @len bytes of @page to @*bio, which goes on in a new bio chained to it
 * when it is full (@left: at most how many pages are still to come).
 */
static void rs_log_add(struct rs_log_ring *r, struct bio **bio, struct page *page,
		       unsigned int len, unsigned int left)
{
	struct bio *more;

	if (bio_add_page(*bio, page, len, 0))
		return;
	more = bio_alloc_bioset((*bio)->bi_bdev, min_t(unsigned int, left, BIO_MAX_VECS),
				(*bio)->bi_opf, GFP_NOIO, &r->log->bs);
	more->bi_iter.bi_sector = bio_end_sector(*bio);
	bio_chain(*bio, more);
	rs_load_own_io(&r->log->rs->load, r->member, bio_sectors(*bio));
	submit_bio_noacct(*bio);
	*bio = more;
	__bio_add_page(more, page, len, 0);
}

/* The zeros over a skipped tail ended: the ring's first record of the lap goes next. */
static void rs_log_wipe_endio(struct bio *bio)
{
	struct rs_log_ring *r = bio->bi_private;
	struct rs_log *log = r->log;

	if (bio->bi_status != BLK_STS_OK)
		r->wipe_failed = true;
	bio_put(bio);
	set_bit(r->member, log->ended);
	queue_work(log->rs->wq, &log->work);
}

/*
 * Zero blocks [@from, the end) of @r with FUA, before the first record of a
 * new lap is written: no record left there from earlier laps can outlive
 * the records of its stripe that the new lap overwrites. Process context,
 * never sleeps.
 */
static void rs_log_wipe(struct rs_log *log, struct rs_log_ring *r, unsigned int from)
{
	unsigned int k, left = RS_LOG_BLOCKS - from;
	struct bio *bio;

	bio = bio_alloc_bioset(log->rs->dev[r->member]->bdev,
			       min_t(unsigned int, left, BIO_MAX_VECS),
			       REQ_OP_WRITE | REQ_FUA | REQ_SYNC, GFP_NOIO, &log->bs);
	bio->bi_iter.bi_sector = RS_LOG_SECTOR + (sector_t)from * (RS_LOG_BLOCK >> SECTOR_SHIFT);
	for (k = 0; k < RS_LOG_BLOCKS - from; k++)
		rs_log_add(r, &bio, ZERO_PAGE(0), RS_LOG_BLOCK, left--);
	bio->bi_private = r;
	bio->bi_end_io = rs_log_wipe_endio;
	rs_load_own_io(&log->rs->load, r->member, bio_sectors(bio));
	submit_bio_noacct(bio);
}

/*
 * Whether the write being put together in @r, which ends at block @next,
 * takes the queued record @s too: the record after its last one in the
 * ring and in sequence, and the write still less than half the ring. Log
 * lock held.
 */
static bool rs_log_batch_takes(const struct rs_log_ring *r, const struct rs_log_slot *s,
			       unsigned int next)
{
	return s->start == next && s->seq == r->handed + 1 &&
	       s->start + s->len - r->batch[0]->start <= RS_LOG_MAX_WRITE;
}

/*
 * Write what waits in @r's queue unless a write of it is in flight: the
 * records contiguous in the ring and in sequence from the first on, less
 * than half the ring, in one FUA bio (a chain of them past BIO_MAX_VECS
 * pages), once the first is the record after the last one written (one
 * that took its space earlier but is not queued yet goes first: its
 * rs_log_write() kicks the ring again). Each record's partial parity is
 * padded to its last block from the page that holds its end. Process
 * context, never sleeps (the bio set holds more than the rings can have in
 * flight).
 */
static void rs_log_kick(struct rs_log *log, struct rs_log_ring *r)
{
	unsigned int k, i, pad, npages, next = 0, vecs = 0;
	struct rs_log_slot *s, *tmp;
	struct bio *bio;

	spin_lock(&log->lock);
	if (r->writing || list_empty(&r->queue)) {
		spin_unlock(&log->lock);
		return;
	}
	s = list_first_entry(&r->queue, struct rs_log_slot, queue);
	if (s->seq != r->handed + 1) {
		spin_unlock(&log->lock);
		return;
	}
	if (s->wipe < RS_LOG_BLOCKS) {
		r->writing = true;
		k = s->wipe;
		s->wipe = RS_LOG_BLOCKS;
		spin_unlock(&log->lock);
		rs_log_wipe(log, r, k);
		return;
	}
	r->nr_batch = 0;
	list_for_each_entry_safe(s, tmp, &r->queue, queue) {
		if (r->nr_batch && !rs_log_batch_takes(r, s, next))
			break;
		list_del_init(&s->queue);
		r->handed = s->seq;
		r->batch[r->nr_batch++] = s;
		vecs += 1 + DIV_ROUND_UP(s->bytes, PAGE_SIZE);
		next = s->start + s->len;
	}
	r->writing = true;
	spin_unlock(&log->lock);

	bio = bio_alloc_bioset(log->rs->dev[r->member]->bdev,
			       min_t(unsigned int, vecs, BIO_MAX_VECS),
			       REQ_OP_WRITE | REQ_FUA | REQ_SYNC, GFP_NOIO, &log->bs);
	bio->bi_iter.bi_sector = RS_LOG_SECTOR +
				 (sector_t)r->batch[0]->start * (RS_LOG_BLOCK >> SECTOR_SHIFT);
	for (k = 0; k < r->nr_batch; k++) {
		s = r->batch[k];
		pad = round_up(s->bytes, RS_LOG_BLOCK);
		npages = DIV_ROUND_UP(s->bytes, PAGE_SIZE);
		rs_log_add(r, &bio, s->hdr, RS_LOG_BLOCK, vecs--);
		for (i = 0; i < npages; i++)
			rs_log_add(r, &bio, s->op->pages[s->pp_pidx + i],
				   min_t(unsigned int, pad - i * PAGE_SIZE, PAGE_SIZE), vecs--);
	}
	bio->bi_private = r;
	bio->bi_end_io = rs_log_endio;
	rs_load_own_io(&log->rs->load, r->member, bio_sectors(bio));
	submit_bio_noacct(bio);
}

/* The rings whose write ended write what came meanwhile. */
static void rs_log_work(struct work_struct *work)
{
	struct rs_log *log = container_of(work, struct rs_log, work);
	unsigned int m;

	for (m = 0; m < log->rs->geom.n; m++) {
		if (!test_and_clear_bit(m, log->ended))
			continue;
		spin_lock(&log->lock);
		log->ring[m].writing = false;
		spin_unlock(&log->lock);
		rs_log_kick(log, &log->ring[m]);
	}
}

static unsigned int rs_log_blocks(const struct rs_log_update *u)
{
	return 1 + DIV_ROUND_UP(rs_range_len(&u->rows) << SECTOR_SHIFT, RS_LOG_BLOCK);
}

/*
 * The list of @r's records in use, into header @d (format 1): written when
 * the record takes its space, under the log's lock, before rs_log_encode().
 */
static void rs_log_list_busy(struct rs_log_ring *r, struct rs_log_rec_disk *d)
{
	unsigned int i, k = 0;

	for (i = 0; i < RS_LOG_SLOTS; i++)
		if (r->slot[i].busy)
			d->busy[k++] = cpu_to_le64(r->slot[i].seq);
	memset(&d->busy[k], 0, (RS_LOG_SLOTS - k) * sizeof(d->busy[0]));
	d->nr_busy = cpu_to_le32(k);
	d->format = cpu_to_le32(RS_LOG_FORMAT);
}

/*
 * The header block of a record of @u for @n members whose partial parity
 * has crc32c @data_crc (inverted), with its own checksum; its list of
 * records in use is the one rs_log_list_busy() put there.
 */
static void rs_log_encode(struct rs_log_rec_disk *d, unsigned int n, u64 nonce, u64 seq,
			  u32 lap, unsigned int block, const struct rs_log_update *u, u32 data_crc)
{
	unsigned int m;

	memset(d, 0, offsetof(struct rs_log_rec_disk, format));
	memset((u8 *)d + sizeof(*d), 0, RS_LOG_BLOCK - sizeof(*d));
	d->magic = cpu_to_le64(RS_LOG_MAGIC);
	d->nonce = cpu_to_le64(nonce);
	d->seq = cpu_to_le64(seq);
	d->stripe = cpu_to_le64(u->stripe);
	d->lap = cpu_to_le32(lap);
	d->block = cpu_to_le32(block);
	d->rows_start = cpu_to_le32(u->rows.start);
	d->rows_end = cpu_to_le32(u->rows.end);
	for (m = 0; m < n; m++) {
		d->w_start[m] = cpu_to_le32(u->w[m].start);
		d->w_end[m] = cpu_to_le32(u->w[m].end);
	}
	d->data_crc = cpu_to_le32(data_crc);
	d->hdr_crc = cpu_to_le32(~crc32c(~0U, d, RS_LOG_BLOCK));
}

/* Encode @u's header into slot @s's page and queue the record on its ring. */
static void rs_log_queue(struct rs_log *log, struct rs_log_slot *s, struct rs_op *op,
			 const struct rs_log_update *u, u64 nonce)
{
	unsigned int bytes = rs_range_len(&u->rows) << SECTOR_SHIFT;
	unsigned int npages = DIV_ROUND_UP(bytes, PAGE_SIZE), i;
	struct list_head *pos;
	u32 crc = ~0U;

	for (i = 0; i < npages; i++)
		crc = crc32c(crc, page_address(op->pages[u->pp_pidx + i]),
			     min_t(unsigned int, bytes - i * PAGE_SIZE, PAGE_SIZE));
	rs_log_encode(page_address(s->hdr), log->rs->geom.n, nonce, s->seq, s->lap, s->start,
		      u, ~crc);
	s->pp_pidx = u->pp_pidx;
	s->bytes = bytes;
	/* In sequence order (another CPU may queue a later record first). */
	spin_lock(&log->lock);
	list_for_each_prev(pos, &log->ring[u->parity].queue)
		if (list_entry(pos, struct rs_log_slot, queue)->seq < s->seq)
			break;
	list_add(&s->queue, pos);
	spin_unlock(&log->lock);
}

/*
 * Record @nr updates of @op (@fill describes the k-th), each on its stripe's
 * parity member's ring, with the state's @nonce, and run @fn when all are on
 * disk (op->failed names the members whose record could not be written).
 * The space for all of them is taken at once, or none: when a ring has no
 * room now @op waits for it (FIFO per ring) and @retry runs when it may
 * have room, to call this again. Never sleeps.
 */
bool rs_log_write(struct rs_log *log, struct rs_op *op, unsigned int nr,
		  void (*fill)(struct rs_op *op, unsigned int k, struct rs_log_update *u),
		  u64 nonce, rs_op_fn fn, rs_op_fn retry)
{
	unsigned int i, slot, start, len, head[RS_MAX_DEVS];
	u32 lap[RS_MAX_DEVS];
	struct rs_log_slot *s[RS_OP_MAX_STRIPES];
	struct rs_log_update u;
	struct rs_log_ring *r;

	if (WARN_ON_ONCE(nr > RS_OP_MAX_STRIPES))
		nr = RS_OP_MAX_STRIPES;
	spin_lock(&log->lock);
	for (i = 0; i < log->rs->geom.n; i++) {
		head[i] = log->ring[i].head;
		lap[i] = log->ring[i].lap;
	}
	for (i = 0; i < nr; i++) {
		fill(op, i, &u);
		r = &log->ring[u.parity];
		len = rs_log_blocks(&u);
		if (!list_empty(&r->waiters) ||
		    !rs_log_fits(r, head[u.parity], len, &slot, &start)) {
			/* Park on this ring; what was taken goes back. */
			while (i--)
				s[i]->busy = false;
			op->run = retry;
			list_add_tail(&op->wait, &r->waiters);
			spin_unlock(&log->lock);
			return false;
		}
		s[i] = &r->slot[slot];
		s[i]->busy = true;	/* so that the next record of this op takes another */
		s[i]->start = start;
		s[i]->len = len;
		s[i]->member = u.parity;
		if (start < head[u.parity])
			lap[u.parity]++;
		s[i]->lap = lap[u.parity];
		head[u.parity] = start + len;
	}
	for (i = 0; i < nr; i++) {
		r = &log->ring[s[i]->member];
		s[i]->op = op;
		s[i]->seq = ++r->seq;
		/* The first record of a lap: the tail the last one skipped goes first. */
		s[i]->wipe = RS_LOG_BLOCKS;
		if (s[i]->lap != r->lap && r->head < RS_LOG_BLOCKS)
			s[i]->wipe = r->head;
		r->head = s[i]->start + s[i]->len;
		r->lap = s[i]->lap;
	}
	/* Every record in use has its sequence number now: the lists. */
	for (i = 0; i < nr; i++)
		rs_log_list_busy(&log->ring[s[i]->member], page_address(s[i]->hdr));
	spin_unlock(&log->lock);
	for (i = 0; i < nr; i++) {
		if (s[i]->wipe < RS_LOG_BLOCKS) {
			rs_fault_spin(RS_FAULT_DELAY_LOG_LAP);
			break;
		}
	}
	op->failed = 0;
	op->next = fn;
	atomic_set(&op->pending, nr + 1);
	for (i = 0; i < nr; i++) {
		fill(op, i, &u);
		rs_log_queue(log, s[i], op, &u, nonce);
	}
	for (i = 0; i < nr; i++)
		rs_log_kick(log, &log->ring[s[i]->member]);
	if (atomic_dec_and_test(&op->pending))
		rs_op_queue(op, op->next);
	return true;
}

/* @op's updates are done: its records' space can be reused; waiters try again. */
void rs_log_done(struct rs_log *log, struct rs_op *op)
{
	struct rs_op *next, *tmp;
	LIST_HEAD(ready);
	unsigned int m, i;
	bool freed;

	spin_lock(&log->lock);
	for (m = 0; m < log->rs->geom.n; m++) {
		struct rs_log_ring *r = &log->ring[m];

		freed = false;
		for (i = 0; i < RS_LOG_SLOTS; i++) {
			if (r->slot[i].busy && r->slot[i].op == op) {
				r->slot[i].busy = false;
				r->slot[i].op = NULL;
				freed = true;
			}
		}
		if (freed)
			list_splice_tail_init(&r->waiters, &ready);
	}
	spin_unlock(&log->lock);
	list_for_each_entry_safe(next, tmp, &ready, wait) {
		list_del(&next->wait);
		rs_op_queue(next, next->run);
	}
}

/* ---- replay ---- */

static const struct rs_log_rec_disk *rs_log_at(const u8 *ring, unsigned int block)
{
	return (const void *)(ring + (size_t)block * RS_LOG_BLOCK);
}

static int rs_log_rw(struct rainssd *rs, struct dm_io_client *io, unsigned int m, blk_opf_t opf,
		     sector_t sector, void *buf, unsigned int bytes, bool vmem)
{
	struct dm_io_region where = {
		.bdev = rs->dev[m]->bdev,
		.sector = sector,
		.count = bytes >> SECTOR_SHIFT,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = vmem ? DM_IO_VMA : DM_IO_KMEM,
		.mem.ptr.addr = buf,
		.client = io,
	};
	unsigned long error = 0;
	int r;

	rs_load_own_io(&rs->load, m, where.count);
	r = dm_io(&req, 1, &where, &error, IOPRIO_DEFAULT);
	return r ? r : (error ? -EIO : 0);
}

/* Whether the format 1 record @top lists sequence number @seq. */
static bool rs_log_listed(const struct rs_log_rec_disk *top, u64 seq)
{
	unsigned int i;

	for (i = 0; i < le32_to_cpu(top->nr_busy); i++)
		if (le64_to_cpu(top->busy[i]) == seq)
			return true;
	return false;
}

/* Whether block @b of @ring holds a header of @nonce, whole, written there. */
static bool rs_log_hdr_whole(const u8 *ring, unsigned int b, u64 nonce)
{
	const struct rs_log_rec_disk *h = (const void *)(ring + (size_t)b * RS_LOG_BLOCK);
	struct rs_log_rec_disk tmp;
	u32 crc;

	if (le64_to_cpu(h->magic) != RS_LOG_MAGIC || le64_to_cpu(h->nonce) != nonce ||
	    le32_to_cpu(h->block) != b)
		return false;
	memcpy(&tmp, h, sizeof(tmp));
	tmp.hdr_crc = 0;
	crc = crc32c(~0U, &tmp, sizeof(tmp));
	crc = crc32c(crc, (const u8 *)h + sizeof(tmp), RS_LOG_BLOCK - sizeof(tmp));
	return ~crc == le32_to_cpu(h->hdr_crc);
}

/* Whether block @b of @ring holds a whole record of @nonce; its header in *@d. */
static bool rs_log_valid(const u8 *ring, unsigned int b, u64 nonce, unsigned int n,
			 unsigned int chunk, const struct rs_log_rec_disk **d, unsigned int *len)
{
	const struct rs_log_rec_disk *h = (const void *)(ring + (size_t)b * RS_LOG_BLOCK);
	unsigned int start, end, bytes;

	if (!rs_log_hdr_whole(ring, b, nonce))
		return false;
	start = le32_to_cpu(h->rows_start);
	end = le32_to_cpu(h->rows_end);
	if (start >= end || end > chunk)
		return false;
	/* Format 1 lists at least the record itself, which was in use. */
	if (le32_to_cpu(h->format) > RS_LOG_FORMAT || le32_to_cpu(h->nr_busy) > RS_LOG_SLOTS ||
	    (!h->format && h->nr_busy) ||
	    (h->format && !rs_log_listed(h, le64_to_cpu(h->seq))))
		return false;
	bytes = (end - start) << SECTOR_SHIFT;
	*len = 1 + DIV_ROUND_UP(bytes, RS_LOG_BLOCK);
	if (b + *len > RS_LOG_BLOCKS)
		return false;
	if (~crc32c(~0U, ring + (size_t)(b + 1) * RS_LOG_BLOCK, bytes) != le32_to_cpu(h->data_crc))
		return false;
	*d = h;
	return true;
}

/*
 * The records of @nonce in @ring that replay may trust, each stripe's newest
 * of them into @newest (stripe -> block, as an xarray value). Trusted (see
 * the top of this file): the newest whole record and those it lists when
 * it is of format 1; else the newest record's lap up to it, and the lap
 * before it past it. 0, -ENOMEM, or -EPROTO for a whole header of a later
 * format, which this version cannot replay.
 */
static int rs_log_scan(const u8 *ring, u64 nonce, unsigned int n, unsigned int chunk,
		       struct xarray *newest)
{
	const struct rs_log_rec_disk *d, *old, *top;
	unsigned int b, len, top_b = 0;
	u64 top_seq = 0, stripe;
	bool any = false, trust;
	u32 lap, top_lap = 0;
	void *entry;
	int r;

	for (b = 0; b < RS_LOG_BLOCKS; b++) {
		if (!rs_log_valid(ring, b, nonce, n, chunk, &d, &len)) {
			if (rs_log_hdr_whole(ring, b, nonce) &&
			    le32_to_cpu(rs_log_at(ring, b)->format) > RS_LOG_FORMAT)
				return -EPROTO;
			continue;
		}
		if (!any || le64_to_cpu(d->seq) > top_seq) {
			any = true;
			top_seq = le64_to_cpu(d->seq);
			top_lap = le32_to_cpu(d->lap);
			top_b = b;
		}
		b += len - 1;
	}
	if (!any)
		return 0;
	top = rs_log_at(ring, top_b);
	for (b = 0; b < RS_LOG_BLOCKS; b++) {
		if (!rs_log_valid(ring, b, nonce, n, chunk, &d, &len))
			continue;
		lap = le32_to_cpu(d->lap);
		if (top->format)
			trust = b == top_b || rs_log_listed(top, le64_to_cpu(d->seq));
		else
			trust = (lap == top_lap && b <= top_b) || (lap + 1 == top_lap && b > top_b);
		if (trust) {
			stripe = le64_to_cpu(d->stripe);
			entry = xa_load(newest, stripe);
			old = entry ? rs_log_at(ring, xa_to_value(entry)) : NULL;
			if (!old || le64_to_cpu(old->seq) < le64_to_cpu(d->seq)) {
				r = xa_err(xa_store(newest, stripe, xa_mk_value(b), GFP_KERNEL));
				if (r)
					return r;
			}
		}
		b += len - 1;
	}
	return 0;
}

/* Parity = PP XOR each written member's rows as they are now; written with FUA. */
static int rs_log_apply(struct rs_log *log, struct dm_io_client *io, unsigned int pm,
			const struct rs_log_rec_disk *d, const u8 *pp, u8 *buf, u8 *cur)
{
	struct rainssd *rs = log->rs;
	u64 stripe = le64_to_cpu(d->stripe);
	unsigned int start = le32_to_cpu(d->rows_start), end = le32_to_cpu(d->rows_end);
	unsigned int bytes = (end - start) << SECTOR_SHIFT, m, ws, we;
	void *src[1];
	int r;

	memcpy(buf, pp, bytes);
	for (m = 0; m < rs->geom.n; m++) {
		ws = le32_to_cpu(d->w_start[m]);
		we = le32_to_cpu(d->w_end[m]);
		if (ws >= we)
			continue;
		if (ws < start || we > end || m == pm || !rs->dev[m] || rs_member_dead(rs, m))
			return -EINVAL;
		r = rs_log_rw(rs, io, m, REQ_OP_READ | REQ_SYNC,
			      rs_member_sector(&rs->geom, stripe, ws), cur,
			      (we - ws) << SECTOR_SHIFT, false);
		if (r)
			return r;
		src[0] = cur;
		rs_xor_blocks(buf + ((ws - start) << SECTOR_SHIFT), src, 1,
			      (we - ws) << SECTOR_SHIFT);
	}
	return rs_log_rw(rs, io, pm, REQ_OP_WRITE | REQ_FUA | REQ_SYNC,
			 rs_member_sector(&rs->geom, stripe, start), buf, bytes, false);
}

/*
 * After an unclean shutdown with a member failed: replay, from every live
 * member's ring, the newest record of each stripe from @from on that
 * carries @nonce. Below @from (a rebuild's checkpoint in the superblocks)
 * the rebuilt member's data is good and updates are not logged, so a
 * record there was written before the rebuild passed its stripe and may be
 * older than an update that came after (its bitmap region is resynced
 * instead). The ring of the member being rebuilt is not read, as the
 * bitmap's is not (rs_bm_io()): a new device's ring holds whatever it held
 * before, and no record of @nonce's spell can be there. A member given
 * with rebuild <idx> was failed for that spell; one rebuilding in it is
 * out above its checkpoint (its stripes' parity is not kept), and below it
 * records are written only while another member is failed too, which the
 * assembly refuses (two members out). Should that refusal ever be relaxed
 * for a rebuild that reached its end, this ring must be read again. Up to
 * 1.11.19 a read error or a foreign record there refused the activation
 * (case 60). Sleeps (first resume, nothing in flight).
 */
int rs_log_replay(struct rs_log *log, u64 nonce, u64 from, unsigned int *replayed)
{
	struct rainssd *rs = log->rs;
	unsigned int chunk_bytes = rs->geom.chunk << SECTOR_SHIFT;
	const struct rs_log_rec_disk *d;
	struct dm_io_client *io;
	u8 *ring, *buf, *cur;
	unsigned int m, b;
	struct xarray newest;
	unsigned long idx;
	void *entry;
	int r = 0;

	*replayed = 0;
	io = dm_io_client_create();
	if (IS_ERR(io))
		return PTR_ERR(io);
	ring = vmalloc(RS_LOG_BYTES);
	buf = kmalloc(chunk_bytes, GFP_KERNEL);
	cur = kmalloc(chunk_bytes, GFP_KERNEL);
	if (!ring || !buf || !cur) {
		r = -ENOMEM;
		goto out;
	}
	for (m = 0; m < rs->geom.n && !r; m++) {
		if (!rs->dev[m] || rs_member_dead(rs, m) || m == READ_ONCE(rs->rebuild_member))
			continue;
		r = rs_log_rw(rs, io, m, REQ_OP_READ | REQ_SYNC, RS_LOG_SECTOR, ring, RS_LOG_BYTES,
			      true);
		if (r)
			break;
		/* Each stripe's newest record on this ring (its parity is on this member). */
		xa_init(&newest);
		r = rs_log_scan(ring, nonce, rs->geom.n, rs->geom.chunk, &newest);
		if (r == -EPROTO)
			DMERR("member %u: log records of a later format: cannot replay", m);
		if (r) {
			xa_destroy(&newest);
			break;
		}
		xa_for_each(&newest, idx, entry) {
			b = xa_to_value(entry);
			d = rs_log_at(ring, b);
			if (rs_parity_member(&rs->geom, le64_to_cpu(d->stripe)) != m ||
			    le64_to_cpu(d->stripe) >= rs->stripes) {
				r = -EINVAL;
				break;
			}
			if (le64_to_cpu(d->stripe) < from)
				continue;
			r = rs_log_apply(log, io, m, d, (const u8 *)rs_log_at(ring, b + 1), buf,
					 cur);
			if (r)
				break;
			(*replayed)++;
		}
		xa_destroy(&newest);
	}
out:
	kfree(cur);
	kfree(buf);
	vfree(ring);
	dm_io_client_destroy(io);
	return r;
}

/* ---- life cycle ---- */

int rs_log_create(struct rainssd *rs, struct rs_log **out)
{
	struct rs_log *log;
	unsigned int m, i;
	int r;

	log = kzalloc(sizeof(*log), GFP_KERNEL);
	if (!log)
		return -ENOMEM;
	log->rs = rs;
	spin_lock_init(&log->lock);
	INIT_WORK(&log->work, rs_log_work);
	for (m = 0; m < rs->geom.n; m++) {
		struct rs_log_ring *ring = &log->ring[m];

		ring->log = log;
		ring->member = m;
		INIT_LIST_HEAD(&ring->waiters);
		INIT_LIST_HEAD(&ring->queue);
		for (i = 0; i < RS_LOG_SLOTS; i++) {
			ring->slot[i].hdr = alloc_page(GFP_KERNEL);
			if (!ring->slot[i].hdr)
				goto nomem;
		}
	}
	/*
	 * One write per ring at a time, a chain of at most a bio per
	 * BIO_MAX_VECS pages of RS_LOG_SLOTS records: far below this.
	 */
	r = bioset_init(&log->bs, RS_LOG_SLOTS * rs->geom.n, 0, BIOSET_NEED_BVECS);
	if (r)
		goto bad;
	*out = log;
	return 0;
nomem:
	r = -ENOMEM;
bad:
	rs_log_destroy(log);
	return r;
}

void rs_log_destroy(struct rs_log *log)
{
	unsigned int m, i;

	if (!log)
		return;
	cancel_work_sync(&log->work);
	bioset_exit(&log->bs);
	for (m = 0; m < RS_MAX_DEVS; m++)
		for (i = 0; i < RS_LOG_SLOTS; i++)
			if (log->ring[m].slot[i].hdr)
				__free_page(log->ring[m].slot[i].hdr);
	kfree(log);
}
