// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd write-intent bitmap (see rainssd-bitmap.h).
 *
 * Bits are kept little-endian in memory exactly as on disk (byte r / 8,
 * bit r % 8), so a 4 KiB block of the image is written as it is:
 *
 *   image    the bits that are to be on disk;
 *   durable  the bits every member's copy holds and that are still wanted
 *            (what a write may rely on without waiting);
 *   touched  regions written since the daemon last looked (not cleared yet);
 *   sync     regions an unclean shutdown left to resync.
 *
 * Setting a bit bumps set_gen; the flush work writes every changed block
 * and then publishes written_gen = set_gen, which wakes the operations
 * waiting for a generation up to it. Clearing one bumps clears: before the
 * flush work writes a block after that, every member flushes its cache.
 */
#include <linux/bitops.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/slab.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-fault.h"
#include "rainssd-meta.h"
#include "rainssd-sb.h"

#define RS_BM_BLOCK		4096U
#define RS_BM_BITS		(RS_BM_BLOCK * 8)
/* A region is cleared once it has had no write for between one and two periods. */
#define RS_BM_DAEMON_MS		2000

struct rs_bitmap;

struct rs_bm_wr {
	struct rs_bitmap *b;
	unsigned long error;
	bool read;		/* this member's copy was read (rs_bm_io()) */
};

struct rs_bitmap {
	struct rainssd *rs;
	u32 region_stripes;
	u64 nr_regions;
	unsigned int nr_blocks;

	spinlock_t lock;		/* protects everything to waiters */
	u8 *image;
	u8 *durable;
	unsigned long *touched;
	unsigned long *sync;
	unsigned long *dirty_blocks;
	u16 *pending;			/* writes in flight per region */
	u64 set_gen, written_gen;
	u64 clears;			/* bits cleared so far */
	u64 clears_flushed;		/* ... every member flushed after them (flush work) */
	struct list_head waiters;
	bool running;			/* the daemon may clear bits */

	struct workqueue_struct *wq;	/* ordered: one flush at a time */
	struct work_struct flush_work;
	struct delayed_work daemon;
	struct dm_io_client *io;
	void *bounce;			/* the block being written or read */
	atomic_t inflight;
	struct completion io_done;
	struct rs_bm_wr wr[RS_MAX_DEVS];
};

/* Stripes per region of @b (0: no bitmap). Any context. */
u32 rs_bitmap_regions(struct rs_bitmap *b)
{
	return b ? b->region_stripes : 0;
}

/* Stripes per region for a volume of @stripes stripes and @region_sectors of volume data. */
u32 rs_bitmap_region_stripes(const struct rs_geom *g, u64 stripes, u64 region_sectors)
{
	u64 rs = max_t(u64, 1, div_u64(region_sectors, g->stripe_data));
	u64 max_regions = (u64)RS_BITMAP_MAX_BYTES * 8;

	/* No more regions than the bitmap area holds. */
	if (div64_u64(stripes + rs - 1, rs) > max_regions)
		rs = div64_u64(stripes + max_regions - 1, max_regions);
	return min_t(u64, rs, U32_MAX);
}

/* ---- I/O of one block on every live member ---- */

enum rs_bm_what {
	RS_BM_READ,	/* a block, from each member in service but the one rebuilt */
	RS_BM_WRITE,	/* a block, to each member in service, FUA */
	RS_BM_FLUSH,	/* no block: each member in service flushes its cache */
};

static void rs_bm_io_done(unsigned long error, void *context)
{
	struct rs_bm_wr *wr = context;
	struct rs_bitmap *b = wr->b;

	wr->error = error;
	if (atomic_dec_and_test(&b->inflight))
		complete(&b->io_done);
}

/*
 * Write b->bounce as block @k to, or read it from, every member that is in
 * service, all at once, or flush them all (@what); a read ORs every copy
 * into @acc. A member being rebuilt is written and flushed, never read: a
 * new device's bitmap area holds its old bytes (up to 1.11.14 they were
 * taken for dirty regions, which then held its rebuild for good), and
 * every bit is on every member in sync too. Returns the members whose I/O
 * failed. Sleeps.
 */
static unsigned long rs_bm_io(struct rs_bitmap *b, unsigned int k, enum rs_bm_what what,
			      u8 *acc, void *bufs[])
{
	struct rainssd *rs = b->rs;
	bool write = what != RS_BM_READ;
	blk_opf_t opf = REQ_OP_READ | REQ_SYNC | REQ_META;
	unsigned long failed = 0;
	unsigned int m, i;

	if (what == RS_BM_WRITE)
		opf = REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA | REQ_SYNC | REQ_META;
	else if (what == RS_BM_FLUSH)
		opf = REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC;

	atomic_set(&b->inflight, 1);
	reinit_completion(&b->io_done);
	for (m = 0; m < rs->geom.n; m++) {
		struct dm_io_region where = {
			.sector = RS_BITMAP_SECTOR + (sector_t)k * (RS_BM_BLOCK >> SECTOR_SHIFT),
			.count = what == RS_BM_FLUSH ? 0 : RS_BM_BLOCK >> SECTOR_SHIFT,
		};
		struct dm_io_request req = {
			.bi_opf = opf,
			.mem.type = DM_IO_KMEM,
			.mem.ptr.addr = write ? b->bounce : bufs[m],
			.notify.fn = rs_bm_io_done,
			.notify.context = &b->wr[m],
			.client = b->io,
		};

		b->wr[m].b = b;
		b->wr[m].error = 0;
		b->wr[m].read = false;
		if (!rs->dev[m] || rs_member_dead(rs, m) ||
		    (!write && m == READ_ONCE(rs->rebuild_member)))
			continue;
		b->wr[m].read = !write;
		where.bdev = rs->dev[m]->bdev;
		if (what == RS_BM_FLUSH && rs_fault_fail_bitmap_flush(m)) {
			b->wr[m].error = 1;
			continue;
		}
		if (where.count)
			rs_load_own_io(&rs->load, m, where.count);
		atomic_inc(&b->inflight);
		if (WARN_ON_ONCE(dm_io(&req, 1, &where, NULL, IOPRIO_DEFAULT))) {
			b->wr[m].error = 1;
			atomic_dec(&b->inflight);
		}
	}
	if (!atomic_dec_and_test(&b->inflight))
		wait_for_completion(&b->io_done);
	for (m = 0; m < rs->geom.n; m++) {
		if (b->wr[m].error) {
			__set_bit(m, &failed);
			continue;
		}
		if (b->wr[m].read && !rs_member_dead(rs, m))
			for (i = 0; i < RS_BM_BLOCK; i++)
				acc[i] |= ((u8 *)bufs[m])[i];
	}
	return failed;
}

static void rs_bm_fail(struct rs_bitmap *b, unsigned long failed, const char *why)
{
	unsigned int m;

	for_each_set_bit(m, &failed, b->rs->geom.n)
		rs_member_failed(b->rs, m, why);
}

/* ---- the flush ---- */

static void rs_bm_wake(struct rs_bitmap *b, struct list_head *ready)
{
	struct rs_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, &b->waiters, wait)
		if (op->token <= b->written_gen)
			list_move_tail(&op->wait, ready);
}

/*
 * Before a block that clears bits is written (the clears so far, @clears,
 * are in it): every member in service flushes its cache, so that the
 * writes of a cleared region are on stable media on every member before
 * any copy says the region is clean. A block's own PREFLUSH covers only
 * its member: the activation after a power cut takes the union of the
 * copies but the rebuilding member's, and that member's flush could trail
 * the others' clears, its share of a stripe's last update (a parity below
 * its checkpoint) lost in its cache with no copy read saying so (up to
 * 1.11.20: a torn stripe never resynced, case 33 part 3). For the same
 * reason a member out of service here got no flush, so its failure is on
 * disk before any clear is written (a rebuilding member failed only in
 * memory would be back as rebuilding after a cut, its copy unread: case
 * 33 part 4); a member whose flush fails is failed the same way. Flush
 * work; sleeps.
 */
static void rs_bm_flush_members(struct rs_bitmap *b, u64 clears)
{
	unsigned long failed;

	if (clears == b->clears_flushed)
		return;
	failed = rs_bm_io(b, 0, RS_BM_FLUSH, NULL, NULL);
	rs_bm_fail(b, failed, "flush error before a bitmap clear");
	if (READ_ONCE(b->rs->dead_mask) && !rs_meta_committed(b->rs->meta))
		rs_meta_commit_wait(b->rs->meta);
	b->clears_flushed = clears;
}

/* Write every changed block, then wake who waited for what is now on disk. Sleeps. */
static void rs_bm_flush(struct rs_bitmap *b)
{
	unsigned long failed;
	unsigned int k, i;
	LIST_HEAD(ready);
	struct rs_op *op, *tmp;
	u64 clears;

	for (;;) {
		spin_lock_irq(&b->lock);
		k = find_first_bit(b->dirty_blocks, b->nr_blocks);
		if (k >= b->nr_blocks) {
			b->written_gen = b->set_gen;
			rs_bm_wake(b, &ready);
			spin_unlock_irq(&b->lock);
			break;
		}
		__clear_bit(k, b->dirty_blocks);
		memcpy(b->bounce, b->image + (size_t)k * RS_BM_BLOCK, RS_BM_BLOCK);
		clears = b->clears;
		spin_unlock_irq(&b->lock);

		rs_bm_flush_members(b, clears);
		failed = rs_bm_io(b, k, RS_BM_WRITE, NULL, NULL);
		rs_bm_fail(b, failed, "bitmap write error");

		spin_lock_irq(&b->lock);
		/* On disk now, and still wanted: what a write may rely on. */
		for (i = 0; i < RS_BM_BLOCK; i++)
			b->durable[(size_t)k * RS_BM_BLOCK + i] =
				((u8 *)b->bounce)[i] & b->image[(size_t)k * RS_BM_BLOCK + i];
		spin_unlock_irq(&b->lock);
	}
	list_for_each_entry_safe(op, tmp, &ready, wait) {
		list_del(&op->wait);
		rs_op_queue(op, op->run);
	}
}

static void rs_bm_flush_work(struct work_struct *work)
{
	rs_bm_flush(container_of(work, struct rs_bitmap, flush_work));
}

/* ---- the write path ---- */

static void rs_bm_regions(const struct rs_bitmap *b, const struct rs_op *op, u64 *r0, u64 *r1)
{
	*r0 = div_u64(op->stripe, b->region_stripes);
	*r1 = div_u64(op->stripe + op->nr - 1, b->region_stripes);
}

/*
 * @op is about to write its stripes: count the write in their regions, and
 * unless every region's bit is on disk already, queue @op to run @fn once it
 * is and return false. Never sleeps.
 */
bool rs_bitmap_start(struct rs_bitmap *b, struct rs_op *op, rs_op_fn fn)
{
	bool wait = false;
	u64 r, r0, r1;

	if (!b)
		return true;
	rs_bm_regions(b, op, &r0, &r1);
	spin_lock_irq(&b->lock);
	for (r = r0; r <= r1; r++) {
		b->pending[r]++;
		__set_bit(r, b->touched);
		if (test_bit_le(r, b->durable))
			continue;
		wait = true;
		if (!__test_and_set_bit_le(r, b->image)) {
			__set_bit(div_u64(r, RS_BM_BITS), b->dirty_blocks);
			b->set_gen++;
		}
	}
	if (!wait) {
		spin_unlock_irq(&b->lock);
		return true;
	}
	op->token = b->set_gen;
	op->run = fn;
	list_add_tail(&op->wait, &b->waiters);
	spin_unlock_irq(&b->lock);
	queue_work(b->wq, &b->flush_work);
	return false;
}

/* @op's writes are done (rs_bitmap_start() was called for it). */
void rs_bitmap_end(struct rs_bitmap *b, struct rs_op *op)
{
	u64 r, r0, r1;

	if (!b)
		return;
	rs_bm_regions(b, op, &r0, &r1);
	spin_lock_irq(&b->lock);
	for (r = r0; r <= r1; r++)
		if (!WARN_ON_ONCE(!b->pending[r]))
			b->pending[r]--;
	spin_unlock_irq(&b->lock);
}

/* Clear the bits of regions that had no write for a whole period. */
static void rs_bm_daemon(struct work_struct *work)
{
	struct rs_bitmap *b = container_of(to_delayed_work(work), struct rs_bitmap, daemon);
	bool changed = false;
	u64 r;

	spin_lock_irq(&b->lock);
	for (r = find_next_bit_le(b->image, b->nr_regions, 0); r < b->nr_regions;
	     r = find_next_bit_le(b->image, b->nr_regions, r + 1)) {
		if (b->pending[r] || test_bit(r, b->sync) || __test_and_clear_bit(r, b->touched))
			continue;
		__clear_bit_le(r, b->image);
		__clear_bit_le(r, b->durable);
		__set_bit(div_u64(r, RS_BM_BITS), b->dirty_blocks);
		b->clears++;
		changed = true;
	}
	if (b->running)
		queue_delayed_work(b->wq, &b->daemon, msecs_to_jiffies(RS_BM_DAEMON_MS));
	spin_unlock_irq(&b->lock);
	if (changed)
		queue_work(b->wq, &b->flush_work);
}

/* ---- resync after an unclean shutdown ---- */

bool rs_bitmap_needs_sync(struct rs_bitmap *b, u64 stripe)
{
	return b && test_bit(div_u64(stripe, b->region_stripes), b->sync);
}

/* The next region to resync: its stripes [*first, *first + *nr). */
bool rs_bitmap_next_sync(struct rs_bitmap *b, u64 *first, u64 *nr)
{
	u64 r;

	if (!b)
		return false;
	r = find_first_bit(b->sync, b->nr_regions);
	if (r >= b->nr_regions)
		return false;
	*first = r * b->region_stripes;
	*nr = min_t(u64, b->region_stripes, b->rs->stripes - *first);
	return true;
}

/* Stripes [first, first + nr) of a region are resynced: its parity can be used again. */
void rs_bitmap_synced(struct rs_bitmap *b, u64 first, u64 nr)
{
	u64 r = div_u64(first, b->region_stripes);

	if (first + nr == min_t(u64, (r + 1) * b->region_stripes, b->rs->stripes))
		clear_bit(r, b->sync);
}

/* Regions an unclean shutdown left that are still to resync. */
u64 rs_bitmap_to_sync(struct rs_bitmap *b)
{
	return b ? bitmap_weight(b->sync, b->nr_regions) : 0;
}

/* ---- life cycle ---- */

/*
 * Read every live member's copy (the union: a bit any copy has counts) at
 * the first resume. With @resync (an unclean shutdown) its regions that
 * start below @cover are to be resynced (from @cover on, the degraded-write
 * log's replay made the stripes right) and keep their bits; otherwise the
 * bits are dropped. With @no_image (a volume made by 1.4.0, whose bitmap
 * area was never written) nothing is read: with @resync every region is
 * dirty. Then the image is written to every member, so that a new or
 * rebuilt member holds it too, and the daemon starts. Sleeps.
 */
int rs_bitmap_load(struct rs_bitmap *b, bool resync, u64 cover, bool no_image)
{
	void *bufs[RS_MAX_DEVS] = { NULL };
	unsigned long failed = 0;
	unsigned int k, m;
	u64 r;
	int ret = 0;

	if (!b)
		return 0;
	for (m = 0; m < b->rs->geom.n; m++) {
		bufs[m] = kmalloc(RS_BM_BLOCK, GFP_KERNEL);
		if (!bufs[m]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (resync && no_image)
		memset(b->image, 0xff, (size_t)b->nr_blocks * RS_BM_BLOCK);
	for (k = 0; k < b->nr_blocks && resync && !no_image; k++)
		failed |= rs_bm_io(b, k, RS_BM_READ, b->image + (size_t)k * RS_BM_BLOCK, bufs);
	rs_bm_fail(b, failed, "bitmap read error");
	/* Bits past the last region are noise (a device's old contents). */
	for (r = b->nr_regions; r < (u64)b->nr_blocks * RS_BM_BITS; r++)
		__clear_bit_le(r, b->image);
	if (resync) {
		/* Not the regions the degraded-write log covers whole. */
		for (r = 0; r < b->nr_regions; r++)
			if (test_bit_le(r, b->image) && r * b->region_stripes < cover)
				__set_bit(r, b->sync);
	} else {
		memset(b->image, 0, (size_t)b->nr_blocks * RS_BM_BLOCK);
	}
	rs_bitmap_write_all(b);
	rs_bitmap_resume(b);
out:
	for (m = 0; m < RS_MAX_DEVS; m++)
		kfree(bufs[m]);
	return ret;
}

/*
 * Write the whole image to every live member; a member whose write fails
 * is failed (rs_bm_flush()). Sleeps.
 */
void rs_bitmap_write_all(struct rs_bitmap *b)
{
	if (!b)
		return;
	spin_lock_irq(&b->lock);
	bitmap_fill(b->dirty_blocks, b->nr_blocks);
	b->set_gen++;
	spin_unlock_irq(&b->lock);
	/* Through the ordered workqueue: one flush at a time. */
	queue_work(b->wq, &b->flush_work);
	flush_work(&b->flush_work);
}

/*
 * (Re)start the daemon that clears the bits of idle regions: at the first
 * resume once the bitmap is loaded, and at every later resume of the same
 * table, since rs_bitmap_quiesce() stopped it (up to 1.11.10 it was never
 * restarted, and no bit was cleared after a suspend and resume). Never
 * sleeps.
 */
void rs_bitmap_resume(struct rs_bitmap *b)
{
	if (!b)
		return;
	spin_lock_irq(&b->lock);
	if (!b->running) {
		b->running = true;
		queue_delayed_work(b->wq, &b->daemon, msecs_to_jiffies(RS_BM_DAEMON_MS));
	}
	spin_unlock_irq(&b->lock);
}

/*
 * Suspend, nothing in flight: clear every bit but those of regions still to
 * resync and write the bitmap (every member's earlier writes on stable
 * media first, rs_bm_flush_members()). Returns whether the bitmap is now
 * all clear (a clean shutdown). Sleeps.
 */
int rs_bitmap_quiesce(struct rs_bitmap *b)
{
	u64 r;
	int clear;

	if (!b)
		return 1;
	spin_lock_irq(&b->lock);
	b->running = false;
	spin_unlock_irq(&b->lock);
	cancel_delayed_work_sync(&b->daemon);
	spin_lock_irq(&b->lock);
	for (r = 0; r < b->nr_regions; r++) {
		WARN_ON_ONCE(b->pending[r]);
		if (!test_bit(r, b->sync) && test_bit_le(r, b->image)) {
			__clear_bit_le(r, b->image);
			__clear_bit_le(r, b->durable);
			__set_bit(div_u64(r, RS_BM_BITS), b->dirty_blocks);
			b->clears++;
		}
	}
	clear = bitmap_empty(b->sync, b->nr_regions);
	spin_unlock_irq(&b->lock);
	/* A member whose write fails is failed (rs_bm_flush()). */
	queue_work(b->wq, &b->flush_work);
	flush_work(&b->flush_work);
	return clear;
}

int rs_bitmap_create(struct rainssd *rs, u32 region_stripes, struct rs_bitmap **out)
{
	struct rs_bitmap *b;

	*out = NULL;
	if (!region_stripes)
		return 0;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->rs = rs;
	b->region_stripes = region_stripes;
	b->nr_regions = div64_u64(rs->stripes + region_stripes - 1, region_stripes);
	b->nr_blocks = DIV_ROUND_UP_ULL(b->nr_regions, RS_BM_BITS);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->waiters);
	INIT_WORK(&b->flush_work, rs_bm_flush_work);
	INIT_DELAYED_WORK(&b->daemon, rs_bm_daemon);
	init_completion(&b->io_done);
	if (b->nr_regions > (u64)RS_BITMAP_MAX_BYTES * 8)
		goto bad;
	b->image = kvzalloc((size_t)b->nr_blocks * RS_BM_BLOCK, GFP_KERNEL);
	b->durable = kvzalloc((size_t)b->nr_blocks * RS_BM_BLOCK, GFP_KERNEL);
	b->touched = bitmap_zalloc(b->nr_regions, GFP_KERNEL);
	b->sync = bitmap_zalloc(b->nr_regions, GFP_KERNEL);
	b->dirty_blocks = bitmap_zalloc(b->nr_blocks, GFP_KERNEL);
	b->pending = kvcalloc(b->nr_regions, sizeof(*b->pending), GFP_KERNEL);
	b->bounce = kmalloc(RS_BM_BLOCK, GFP_KERNEL);
	b->io = dm_io_client_create();
	if (IS_ERR(b->io))
		b->io = NULL;
	b->wq = alloc_ordered_workqueue("rainssd-bitmap", WQ_MEM_RECLAIM);
	if (!b->image || !b->durable || !b->touched || !b->sync || !b->dirty_blocks ||
	    !b->pending || !b->bounce || !b->io || !b->wq)
		goto bad;
	*out = b;
	return 0;
bad:
	rs_bitmap_destroy(b);
	return -ENOMEM;
}

void rs_bitmap_destroy(struct rs_bitmap *b)
{
	if (!b)
		return;
	if (b->wq) {
		spin_lock_irq(&b->lock);
		b->running = false;
		spin_unlock_irq(&b->lock);
		cancel_delayed_work_sync(&b->daemon);
		destroy_workqueue(b->wq);
	}
	WARN_ON_ONCE(!list_empty(&b->waiters));
	if (b->io)
		dm_io_client_destroy(b->io);
	kfree(b->bounce);
	kvfree(b->pending);
	bitmap_free(b->dirty_blocks);
	bitmap_free(b->sync);
	bitmap_free(b->touched);
	kvfree(b->durable);
	kvfree(b->image);
	kfree(b);
}
