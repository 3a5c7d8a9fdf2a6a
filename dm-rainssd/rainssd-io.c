// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd stripe I/O engine.
 *
 * Stripe operations (writes, and reads rebuilt from the other members) run as
 * a chain of work items on the target's workqueue:
 *
 *   rs_op_lock     take the stripe: one operation per stripe at a time, the
 *                  others wait in FIFO order behind the owner;
 *   rs_op_plan     look at the live members, ask the policy unit how to keep
 *                  the parity right, get the buffers, issue the pre-reads;
 *   rs_op_compute  when the pre-reads are in: rebuild, XOR, issue the writes;
 *   rs_op_finish   when the writes are in: release the stripe, end the bio.
 *
 * The stripe locks are hashed into buckets with a spinlock each, so there is
 * no global lock on the I/O path. Buffers hold the rows shape.rows of every
 * member: member m's rows start at page m * npages.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/hash.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-xor.h"

/*
 * Fault injection for the tests, in debugfs under rainssd/ (the kernel's
 * fault-injection attributes: probability, times, interval, ...):
 * fail_nowait_bio fails a step's non-blocking member bio allocation, so the
 * step is built again under alloc_lock; fail_buffers fails the buffer page
 * allocation, so the operation runs on the reserve.
 */
enum rs_fault {
	RS_FAULT_NOWAIT_BIO,
	RS_FAULT_BUFFERS,
	RS_FAULT_DELAY_PREREAD,
	RS_NR_FAULTS,
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct fault_attr rs_faults[RS_NR_FAULTS] = {
	[0 ... RS_NR_FAULTS - 1] = FAULT_ATTR_INITIALIZER,
};

static const char * const rs_fault_names[RS_NR_FAULTS] = {
	[RS_FAULT_NOWAIT_BIO] = "fail_nowait_bio",
	[RS_FAULT_BUFFERS] = "fail_buffers",
	[RS_FAULT_DELAY_PREREAD] = "delay_preread",
};

static struct dentry *rs_debugfs_dir;
static u32 rs_delay_preread_ms = 100;

void rs_fault_init(void)
{
	unsigned int i;

	rs_debugfs_dir = debugfs_create_dir("rainssd", NULL);
	for (i = 0; i < RS_NR_FAULTS; i++)
		fault_create_debugfs_attr(rs_fault_names[i], rs_debugfs_dir, &rs_faults[i]);
	debugfs_create_u32("delay_preread_ms", 0600, rs_debugfs_dir, &rs_delay_preread_ms);
}

void rs_fault_exit(void)
{
	debugfs_remove_recursive(rs_debugfs_dir);
}

static bool rs_fault(enum rs_fault f)
{
	return should_fail(&rs_faults[f], 1);
}
#else
void rs_fault_init(void)
{
}

void rs_fault_exit(void)
{
}

static bool rs_fault(enum rs_fault f)
{
	return false;
}
#endif

/* A member bio of a stripe operation. */
struct rs_mbio {
	struct rs_io *io;
	unsigned int member;
	struct rs_load_tag tag;
	struct bio bio;		/* last: the bioset's front pad ends here */
};

static void rs_op_plan(struct rs_io *io);
static void rs_op_compute(struct rs_io *io);
static void rs_op_finish(struct rs_io *io);

static void rs_op_work(struct work_struct *work)
{
	struct rs_io *io = container_of(work, struct rs_io, work);

	io->next(io);
}

static void rs_op_queue(struct rs_io *io, void (*next)(struct rs_io *io))
{
	io->next = next;
	queue_work(io->rs->wq, &io->work);
}

static void rs_event_work(struct work_struct *work)
{
	struct rainssd *rs = container_of(work, struct rainssd, event_work);

	dm_table_event(rs->ti->table);
}

/* Mark member @m dead (idempotent); raises a dm event the first time. */
void rs_member_failed(struct rainssd *rs, unsigned int m)
{
	if (test_and_set_bit(m, &rs->dead_mask))
		return;
	DMERR_LIMIT("member %u (%pg) failed; %u member(s) dead", m,
		    rs->dev[m]->bdev, rs_dead_count(rs));
	queue_work(rs->wq, &rs->event_work);
}

/* ---- stripe locks ---- */

static struct rs_lock_bucket *rs_bucket(struct rainssd *rs, u64 stripe)
{
	return &rs->locks[hash_64(stripe, RS_LOCK_BUCKETS_SHIFT)];
}

/* Take the stripe, or queue behind its owner and return false. */
static bool rs_stripe_trylock(struct rs_io *io)
{
	struct rs_lock_bucket *b = rs_bucket(io->rs, io->stripe);
	struct rs_io *owner;

	INIT_LIST_HEAD(&io->waiters);
	spin_lock(&b->lock);
	hlist_for_each_entry(owner, &b->head, hnode) {
		if (owner->stripe == io->stripe) {
			list_add_tail(&io->wait_entry, &owner->waiters);
			spin_unlock(&b->lock);
			return false;
		}
	}
	hlist_add_head(&io->hnode, &b->head);
	spin_unlock(&b->lock);
	return true;
}

/* Hand the stripe to the first waiter, which inherits the other waiters. */
static void rs_stripe_unlock(struct rs_io *io)
{
	struct rs_lock_bucket *b = rs_bucket(io->rs, io->stripe);
	struct rs_io *next = NULL;

	spin_lock(&b->lock);
	hlist_del(&io->hnode);
	if (!list_empty(&io->waiters)) {
		next = list_first_entry(&io->waiters, struct rs_io, wait_entry);
		list_del(&next->wait_entry);
		INIT_LIST_HEAD(&next->waiters);
		list_splice(&io->waiters, &next->waiters);
		hlist_add_head(&next->hnode, &b->head);
	}
	spin_unlock(&b->lock);
	if (next)
		rs_op_queue(next, rs_op_plan);
}

static void rs_op_lock(struct rs_io *io)
{
	if (rs_stripe_trylock(io))
		rs_op_plan(io);
}

/* Entry point: run the stripe operation @io (a write or a rebuilt read). */
void rs_submit_stripe_io(struct rs_io *io)
{
	if (io->kind == RS_IO_RECON_READ)
		io->t_map = ktime_get_ns();
	INIT_WORK(&io->work, rs_op_work);
	io->pages = NULL;
	io->from_reserve = false;
	io->status = BLK_STS_OK;
	rs_op_queue(io, rs_op_lock);
}

/* ---- buffers ---- */

static struct page *rs_buf_page(struct rs_io *io, unsigned int m, unsigned int off)
{
	return io->pages[m * io->npages + (off >> PAGE_SHIFT)];
}

/* dst ^= src over bytes [off, off + len) of two members' buffers. */
static void rs_buf_xor(struct rs_io *io, unsigned int dst, unsigned int src,
		       unsigned int off, unsigned int len)
{
	while (len) {
		unsigned int poff = offset_in_page(off);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - poff);

		rs_xor(page_address(rs_buf_page(io, dst, off)) + poff,
		       page_address(rs_buf_page(io, src, off)) + poff, n);
		off += n;
		len -= n;
	}
}

static void rs_buf_zero(struct rs_io *io, unsigned int m, unsigned int len)
{
	unsigned int off;

	for (off = 0; off < len; off += PAGE_SIZE)
		memset(page_address(rs_buf_page(io, m, off)), 0,
		       min_t(unsigned int, len - off, PAGE_SIZE));
}

/* Byte range of member rows [start, end) inside that member's buffer. */
static unsigned int rs_row_off(struct rs_io *io, unsigned int row)
{
	return (row - io->shape.rows.start) << SECTOR_SHIFT;
}

/* Give back the buffers; hand the reserve to a waiter if we had it. */
static void rs_buf_put(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	struct rs_io *next = NULL;
	unsigned int i;

	if (!io->pages)
		return;
	if (!io->from_reserve) {
		for (i = 0; i < rs->geom.n * io->npages; i++)
			__free_page(io->pages[i]);
		kfree(io->pages);
		io->pages = NULL;
		return;
	}
	io->pages = NULL;
	io->from_reserve = false;
	spin_lock(&rs->reserve.lock);
	if (list_empty(&rs->reserve.waiters)) {
		rs->reserve.busy = false;
	} else {
		next = list_first_entry(&rs->reserve.waiters, struct rs_io, wait_entry);
		list_del(&next->wait_entry);
	}
	spin_unlock(&rs->reserve.lock);
	if (next) {
		next->pages = rs->reserve.pages;
		next->from_reserve = true;
		rs_op_queue(next, rs_op_plan);
	}
}

/*
 * Get buffers for rows shape.rows of every member. Pages come from the page
 * allocator; when it fails, from the target's reserve, which one operation
 * owns at a time and which needs no further allocation to complete. Returns
 * false when @io has been queued for the reserve.
 */
static bool rs_buf_get(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	unsigned int i, nr;

	io->npages = DIV_ROUND_UP(rs_range_len(&io->shape.rows) << SECTOR_SHIFT, PAGE_SIZE);
	if (io->pages)
		return true;	/* planned again after a failed pre-read */
	nr = rs->geom.n * io->npages;
	io->pages = rs_fault(RS_FAULT_BUFFERS) ? NULL :
		    kmalloc_array(nr, sizeof(*io->pages), GFP_NOIO | __GFP_NOWARN);
	if (io->pages) {
		for (i = 0; i < nr; i++) {
			io->pages[i] = alloc_page(GFP_NOIO | __GFP_NOWARN);
			if (!io->pages[i])
				break;
		}
		if (i == nr)
			return true;
		while (i--)
			__free_page(io->pages[i]);
		kfree(io->pages);
		io->pages = NULL;
	}
	/* The reserve is laid out for full chunks: use the same stride. */
	spin_lock(&rs->reserve.lock);
	if (rs->reserve.busy) {
		list_add_tail(&io->wait_entry, &rs->reserve.waiters);
		spin_unlock(&rs->reserve.lock);
		return false;
	}
	rs->reserve.busy = true;
	spin_unlock(&rs->reserve.lock);
	io->pages = rs->reserve.pages;
	io->from_reserve = true;
	return true;
}

/* ---- member I/O ---- */

/* The last member bio of a batch is done; a rebuilt read notes when. */
static void rs_batch_done(struct rs_io *io)
{
	if (io->kind == RS_IO_RECON_READ)
		io->t_done = ktime_get_ns();
}

static void rs_mbio_endio(struct bio *bio)
{
	struct rs_mbio *mb = container_of(bio, struct rs_mbio, bio);
	struct rs_io *io = mb->io;

	if (rs_load_done(&io->rs->load, mb->member, &mb->tag))
		rs_mstat_inc(io->rs, mb->member, RS_MSTAT_STALLS);
	if (bio->bi_status) {
		rs_member_failed(io->rs, mb->member);
		if (bio_op(bio) == REQ_OP_READ)
			io->reread = true;
	}
	bio_put(bio);
	if (atomic_dec_and_test(&io->pending)) {
		rs_batch_done(io);
		rs_op_queue(io, io->next);
	}
}

static void rs_mbio_submit(struct rs_io *io, struct rs_mbio *mb)
{
	struct rainssd *rs = io->rs;
	unsigned int m = mb->member;
	bool write = op_is_write(bio_op(&mb->bio));

	if (!write) {
		if (io->kind != RS_IO_RECON_READ) {
			rs_stat_inc(rs, RS_STAT_PREREADS);
			rs_mstat_inc(rs, m, RS_MSTAT_PREREADS);
		} else if (m != io->member) {
			rs_mstat_inc(rs, m, RS_MSTAT_RECON_READS);
		}
	}
	rs_load_issue(&rs->load, m, write, &mb->tag);
	submit_bio_noacct(&mb->bio);
}

/* Build a bio for rows [start, end) of member @m, from/to its buffer, into the batch. */
static void rs_member_io(struct rs_io *io, unsigned int m, blk_opf_t opf,
			 unsigned int start, unsigned int end)
{
	struct rainssd *rs = io->rs;
	unsigned int off = rs_row_off(io, start);
	unsigned int len = (end - start) << SECTOR_SHIFT;
	unsigned int nr = DIV_ROUND_UP(offset_in_page(off) + len, PAGE_SIZE);
	struct rs_mbio *mb;
	struct bio *bio;

	if (start >= end || io->alloc_failed)
		return;
	if (io->gfp != GFP_NOIO && rs_fault(RS_FAULT_NOWAIT_BIO))
		bio = NULL;
	else
		bio = bio_alloc_bioset(rs->dev[m]->bdev, nr, opf, io->gfp, &rs->bs);
	if (!bio) {
		io->alloc_failed = true;
		return;
	}
	mb = container_of(bio, struct rs_mbio, bio);
	mb->io = io;
	mb->member = m;
	bio->bi_iter.bi_sector = rs_member_sector(&rs->geom, io->stripe, start);
	bio->bi_end_io = rs_mbio_endio;
	while (len) {
		unsigned int poff = offset_in_page(off);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - poff);

		__bio_add_page(bio, rs_buf_page(io, m, off), n, poff);
		off += n;
		len -= n;
	}
	atomic_inc(&io->pending);
	bio_list_add(&io->batch, bio);
}

/* Start a batch of member I/O allocated with @gfp; @next runs when all of it is done. */
static void rs_batch_begin(struct rs_io *io, void (*next)(struct rs_io *io), gfp_t gfp)
{
	io->next = next;
	io->gfp = gfp;
	io->alloc_failed = false;
	atomic_set(&io->pending, 1);
	bio_list_init(&io->batch);
}

/*
 * Submit the batch, the least busy member first. Submitting to a member
 * whose queue is full sleeps for a tag in this work item; in member order a
 * busy member would hold back the bios of the idle members behind it, which
 * turns the wait of a reconstruct read or reconstruct-write into the sum of
 * the members' waits instead of the longest one. A batch holds at most two
 * bios per member, so the selection is cheap.
 */
static void rs_batch_submit(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	struct bio *bio, *best, *prev, *best_prev;
	struct rs_mbio *mb;
	unsigned int q, best_q;

	while (!bio_list_empty(&io->batch)) {
		best = NULL;
		best_prev = NULL;
		best_q = UINT_MAX;
		prev = NULL;
		for (bio = io->batch.head; bio; prev = bio, bio = bio->bi_next) {
			mb = container_of(bio, struct rs_mbio, bio);
			q = rs_load_queued(&rs->load, mb->member);
			if (q < best_q) {
				best = bio;
				best_prev = prev;
				best_q = q;
			}
		}
		if (best_prev)
			best_prev->bi_next = best->bi_next;
		else
			io->batch.head = best->bi_next;
		if (io->batch.tail == best)
			io->batch.tail = best_prev;
		best->bi_next = NULL;
		rs_mbio_submit(io, container_of(best, struct rs_mbio, bio));
	}
}

/*
 * Build one step's member bios with @build (which only calls rs_member_io),
 * submit them, and run @next when they are all done.
 *
 * The bios come from the target's bioset, whose reserve (2 * RS_MAX_DEVS
 * bios) covers any one step. A step holds its bios until all are built, so
 * two steps blocking in the allocator at once could each hold part of the
 * reserve and wait for the other forever (under memory pressure: swap on the
 * volume). As dm-crypt does for its buffers, the step first allocates without
 * blocking; if that fails, it gives its bios back and builds them again
 * under alloc_lock, so only one step at a time blocks with bios in hand, and
 * the reserve is enough for it.
 */
static void rs_batch_run(struct rs_io *io, void (*build)(struct rs_io *io),
			 void (*next)(struct rs_io *io))
{
	struct rainssd *rs = io->rs;
	struct bio *bio;

	rs_batch_begin(io, next, GFP_NOWAIT);
	build(io);
	if (unlikely(io->alloc_failed)) {
		while ((bio = bio_list_pop(&io->batch)))
			bio_put(bio);
		mutex_lock(&rs->alloc_lock);
		rs_batch_begin(io, next, GFP_NOIO);
		build(io);
		mutex_unlock(&rs->alloc_lock);
	}
	if (io->kind == RS_IO_RECON_READ)
		io->t_issue = ktime_get_ns();
	rs_batch_submit(io);
	if (atomic_dec_and_test(&io->pending)) {
		rs_batch_done(io);
		io->next(io);
	}
}

/* ---- copying between the user bio and the buffers ---- */

/*
 * Copy between the user bio and the data members' buffers. The bio starts at
 * logical sector io->iter.bi_sector, inside stripe io->stripe.
 */
static void rs_copy_bio(struct rs_io *io, bool to_bio)
{
	struct rs_geom *g = &io->rs->geom;
	unsigned int chunk_bytes = g->chunk << SECTOR_SHIFT;
	u64 spos;
	struct bvec_iter it;
	struct bio_vec bv;
	u32 pos;

	div_u64_rem(io->iter.bi_sector, g->stripe_data, &pos);
	spos = (u64)pos << SECTOR_SHIFT;
	__bio_for_each_segment(bv, io->bio, it, io->iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			u32 in_chunk;
			unsigned int k = div_u64_rem(spos, chunk_bytes, &in_chunk);
			unsigned int m = rs_data_member(g, io->stripe, k);
			unsigned int boff = in_chunk - (io->shape.rows.start << SECTOR_SHIFT);
			unsigned int poff = offset_in_page(boff);
			unsigned int n = min3(bv.bv_len - done, chunk_bytes - in_chunk,
					      (unsigned int)PAGE_SIZE - poff);
			void *buf = page_address(rs_buf_page(io, m, boff)) + poff;
			void *ubuf = bvec_kmap_local(&bv);

			if (to_bio)
				memcpy(ubuf + done, buf, n);
			else
				memcpy(buf, ubuf + done, n);
			kunmap_local(ubuf);
			done += n;
			spos += n;
		}
	}
}

/* ---- the operation ---- */

static unsigned int rs_first_dead(struct rainssd *rs)
{
	unsigned long mask = READ_ONCE(rs->dead_mask);

	return mask ? __ffs(mask) : RS_NO_MEMBER;
}

/* Fill io->shape from the user bio: which rows of which member it covers. */
static void rs_build_shape(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	struct rs_geom *g = &rs->geom;
	sector_t start = io->iter.bi_sector;
	sector_t end = start + (io->iter.bi_size >> SECTOR_SHIFT);

	rs_shape_init(&io->shape, g, io->stripe, rs_first_dead(rs));
	while (start < end) {
		struct rs_loc loc;
		unsigned int n;

		rs_map(g, start, &loc);
		n = min_t(sector_t, end - start, g->chunk - loc.row);
		rs_shape_add_write(&io->shape, loc.member, loc.row, loc.row + n);
		start += n;
	}
}

static void rs_fail_io(struct rs_io *io, blk_status_t status)
{
	io->status = status;
	rs_op_finish(io);
}

static void rs_issue_prereads(struct rs_io *io)
{
	struct rs_stripe_shape *s = &io->shape;
	unsigned int m;

	for (m = 0; m < s->n; m++) {
		if (rs_member_dead(io->rs, m))
			continue;
		if (io->kind == RS_IO_RECON_READ) {
			/*
			 * Rebuilt: every other member. With another member
			 * dead, the chunk can only be read where it is.
			 */
			bool want = io->recon_direct ? m == io->member : m != io->member;

			if (want)
				rs_member_io(io, m, REQ_OP_READ, s->rows.start, s->rows.end);
			continue;
		}
		switch (io->mode) {
		case RS_WRITE_RMW:
			if (m == s->parity)
				rs_member_io(io, m, REQ_OP_READ, s->rows.start, s->rows.end);
			else
				rs_member_io(io, m, REQ_OP_READ, s->w[m].start, s->w[m].end);
			break;
		case RS_WRITE_RCW:
			if (m == s->parity)
				break;
			if (!rs_range_len(&s->w[m])) {
				rs_member_io(io, m, REQ_OP_READ, s->rows.start, s->rows.end);
			} else {
				rs_member_io(io, m, REQ_OP_READ, s->rows.start, s->w[m].start);
				rs_member_io(io, m, REQ_OP_READ, s->w[m].end, s->rows.end);
			}
			break;
		case RS_WRITE_RECONSTRUCT:
			rs_member_io(io, m, REQ_OP_READ, s->rows.start, s->rows.end);
			break;
		default:
			break;
		}
	}
}

/* Ask the policy unit how to update the parity of this stripe write. */
static void rs_plan_stripe_write(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	enum rs_policy p = READ_ONCE(rs->policy);
	struct rs_load_snap *snap = NULL;
	struct rs_write_choice c;

	if (p == RS_POLICY_ADAPTIVE && io->shape.dead == RS_NO_MEMBER) {
		snap = get_cpu_ptr(rs->snap);
		rs_load_snapshot(&rs->load, READ_ONCE(rs->dead_mask), snap);
	}
	io->mode = rs_plan_write(&io->shape, p, snap, &c);
	if (snap)
		put_cpu_ptr(rs->snap);
	io->why = c.why;
	io->count_mode = c.count_mode;
}

static void rs_op_plan(struct rs_io *io)
{
	struct rainssd *rs = io->rs;

	io->reread = false;
	if (rs_dead_count(rs) > 1)
		return rs_fail_io(io, BLK_STS_IOERR);

	if (io->kind == RS_IO_RECON_READ) {
		struct rs_loc loc;
		unsigned int len = io->iter.bi_size >> SECTOR_SHIFT;

		rs_map(&rs->geom, io->iter.bi_sector, &loc);
		rs_shape_init(&io->shape, &rs->geom, io->stripe, rs_first_dead(rs));
		rs_shape_add_write(&io->shape, loc.member, loc.row, loc.row + len);
		io->member = loc.member;
		/*
		 * A read rebuilt by choice whose stripe has lost another member
		 * since (at most one is dead here): read the chunk itself.
		 */
		io->recon_direct = io->shape.dead != RS_NO_MEMBER && io->shape.dead != loc.member;
	} else {
		rs_build_shape(io);
		rs_plan_stripe_write(io);
	}

	if (!rs_buf_get(io))
		return;		/* queued for the reserve; planned again then */
	if (io->from_reserve)
		io->npages = rs->pages_per_member;

	if (rs_fault(RS_FAULT_DELAY_PREREAD))
		msleep(rs_delay_preread_ms);
	rs_batch_run(io, rs_issue_prereads, rs_op_compute);
}

static void rs_compute_write(struct rs_io *io)
{
	struct rs_stripe_shape *s = &io->shape;
	unsigned int len = rs_range_len(&s->rows) << SECTOR_SHIFT;
	unsigned int m, p = s->parity;

	switch (io->mode) {
	case RS_WRITE_RMW:
		for (m = 0; m < s->n; m++)
			if (m != p && rs_range_len(&s->w[m]))
				rs_buf_xor(io, p, m, rs_row_off(io, s->w[m].start),
					   rs_range_len(&s->w[m]) << SECTOR_SHIFT);
		rs_copy_bio(io, false);
		for (m = 0; m < s->n; m++)
			if (m != p && rs_range_len(&s->w[m]))
				rs_buf_xor(io, p, m, rs_row_off(io, s->w[m].start),
					   rs_range_len(&s->w[m]) << SECTOR_SHIFT);
		return;
	case RS_WRITE_RECONSTRUCT:
		/* Rebuild the dead member's old rows, then proceed as RCW. */
		rs_buf_zero(io, s->dead, len);
		for (m = 0; m < s->n; m++)
			if (m != s->dead)
				rs_buf_xor(io, s->dead, m, 0, len);
		fallthrough;
	case RS_WRITE_RCW:
	case RS_WRITE_FULL:
		rs_copy_bio(io, false);
		rs_buf_zero(io, p, len);
		for (m = 0; m < s->n; m++)
			if (m != p)
				rs_buf_xor(io, p, m, 0, len);
		return;
	case RS_WRITE_NOPARITY:
		rs_copy_bio(io, false);
		return;
	}
}

static void rs_count_write(struct rs_io *io)
{
	struct rainssd *rs = io->rs;

	if (io->why == RS_WHY_COLD)
		rs_stat_inc(rs, RS_STAT_COLD);
	else if (io->why == RS_WHY_COST && io->mode != io->count_mode)
		rs_stat_inc(rs, io->mode == RS_WRITE_RMW ? RS_STAT_RMW_ADJUSTED :
						      RS_STAT_RCW_ADJUSTED);
	switch (io->mode) {
	case RS_WRITE_FULL:
		rs_stat_inc(rs, RS_STAT_FULL);
		break;
	case RS_WRITE_RMW:
		rs_stat_inc(rs, RS_STAT_RMW);
		break;
	case RS_WRITE_RCW:
		rs_stat_inc(rs, RS_STAT_RCW);
		break;
	default:
		rs_stat_inc(rs, RS_STAT_DEGRADED);
		break;
	}
}

/* The data and parity writes of a stripe write, into the batch. */
static void rs_issue_writes(struct rs_io *io)
{
	struct rs_stripe_shape *s = &io->shape;
	blk_opf_t wopf = REQ_OP_WRITE | (io->bio->bi_opf & (REQ_FUA | REQ_SYNC));
	unsigned int m;

	for (m = 0; m < s->n; m++) {
		if (rs_member_dead(io->rs, m))
			continue;
		if (m == s->parity) {
			if (io->mode != RS_WRITE_NOPARITY)
				rs_member_io(io, m, wopf, s->rows.start, s->rows.end);
		} else {
			rs_member_io(io, m, wopf, s->w[m].start, s->w[m].end);
		}
	}
}

static void rs_op_compute(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	struct rs_stripe_shape *s = &io->shape;
	unsigned int m;

	if (io->reread)
		return rs_op_plan(io);	/* a member died under the pre-reads */

	if (io->kind == RS_IO_RECON_READ) {
		unsigned int len = rs_range_len(&s->rows) << SECTOR_SHIFT;

		if (!io->recon_direct) {
			rs_buf_zero(io, io->member, len);
			for (m = 0; m < s->n; m++)
				if (m != io->member)
					rs_buf_xor(io, io->member, m, 0, len);
			rs_stat_inc(rs, RS_STAT_RECON_READS);
			if (io->by_choice) {
				rs_stat_inc(rs, RS_STAT_CHOSEN_RECON);
				rs_mstat_inc(rs, io->member, RS_MSTAT_BYPASSED);
			}
		}
		rs_copy_bio(io, true);
		/* What the rebuild cost beyond its reads, for the read policy's t_xor. */
		if (io->by_choice && !io->recon_direct && !rs_dead_count(rs))
			rs_load_rebuilt(&rs->load, io->t_issue - io->t_map +
					ktime_get_ns() - io->t_done);
		return rs_op_finish(io);
	}

	rs_compute_write(io);
	rs_count_write(io);
	rs_batch_run(io, rs_issue_writes, rs_op_finish);
}

/*
 * The end: a write whose member writes failed is still good while at most one
 * member is dead, because the parity (or the data) that did land holds it.
 */
static void rs_op_finish(struct rs_io *io)
{
	struct rainssd *rs = io->rs;
	struct bio *bio = io->bio;

	if (!io->status && rs_dead_count(rs) > 1)
		io->status = BLK_STS_IOERR;
	rs_buf_put(io);
	rs_stripe_unlock(io);
	bio->bi_status = io->status;
	bio_endio(bio);
}

int rs_io_init(struct rainssd *rs)
{
	unsigned int i, nr;
	int r;

	rs->locks = kvcalloc(1U << RS_LOCK_BUCKETS_SHIFT, sizeof(*rs->locks), GFP_KERNEL);
	if (!rs->locks)
		return -ENOMEM;
	for (i = 0; i < (1U << RS_LOCK_BUCKETS_SHIFT); i++) {
		spin_lock_init(&rs->locks[i].lock);
		INIT_HLIST_HEAD(&rs->locks[i].head);
	}

	rs->pages_per_member = DIV_ROUND_UP(rs->geom.chunk << SECTOR_SHIFT, PAGE_SIZE);
	nr = rs->geom.n * rs->pages_per_member;
	spin_lock_init(&rs->reserve.lock);
	INIT_LIST_HEAD(&rs->reserve.waiters);
	rs->reserve.pages = kvcalloc(nr, sizeof(struct page *), GFP_KERNEL);
	if (!rs->reserve.pages)
		goto bad;
	for (i = 0; i < nr; i++) {
		rs->reserve.pages[i] = alloc_page(GFP_KERNEL);
		if (!rs->reserve.pages[i])
			goto bad;
	}

	r = bioset_init(&rs->bs, 2 * RS_MAX_DEVS, offsetof(struct rs_mbio, bio),
			BIOSET_NEED_BVECS);
	if (r)
		goto bad;
	rs->wq = alloc_workqueue("rainssd", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!rs->wq)
		goto bad;
	INIT_WORK(&rs->event_work, rs_event_work);
	mutex_init(&rs->alloc_lock);
	return 0;
bad:
	rs_io_exit(rs);
	return -ENOMEM;
}

/* Safe on a partly initialised target. */
void rs_io_exit(struct rainssd *rs)
{
	unsigned int i;

	if (rs->wq) {
		destroy_workqueue(rs->wq);
		rs->wq = NULL;
	}
	bioset_exit(&rs->bs);
	if (rs->reserve.pages) {
		for (i = 0; i < rs->geom.n * rs->pages_per_member; i++)
			if (rs->reserve.pages[i])
				__free_page(rs->reserve.pages[i]);
		kvfree(rs->reserve.pages);
		rs->reserve.pages = NULL;
	}
	kvfree(rs->locks);
	rs->locks = NULL;
}
