// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd member state and its superblocks (see rainssd-meta.h).
 */
#include <linux/delay.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-fault.h"
#include "rainssd-meta.h"

struct rs_meta {
	struct rainssd *rs;
	struct dm_io_client *io;
	struct workqueue_struct *wq;	/* ordered: one commit at a time */
	struct work_struct commit_work;
	void *block[RS_MAX_DEVS];	/* one encoded superblock per member */
	struct rs_meta_wr {
		struct rs_meta *m;
		unsigned long error;	/* dm-io's error bits of this member's write */
	} wr[RS_MAX_DEVS];
	atomic_t pending;		/* a commit's writes in flight, plus one */
	struct completion written;

	spinlock_t lock;		/* protects everything below; irq-safe */
	struct rs_sb sb;		/* the state; events = the last one written */
	u64 state_gen;			/* every change adds one */
	u64 committed_gen;		/* the state_gen the last finished commit wrote */
	struct list_head waiters;	/* operations waiting for a commit */
	struct bio_list flushes;	/* flushes that saw a member fail, waiting too */
	bool activated;			/* the first resume wrote the superblocks */
	bool in_use;			/* rs_meta_activate() committed (resume only) */
	bool broken;			/* no member took a commit: the volume is dead */
	bool suspended;			/* from a postsuspend's commit to the next preresume */
	u8 fresh_uuid[16];		/* a new volume's, chosen once */
	u64 fresh_ctime;
};

/* ---- superblock I/O ---- */

static int rs_meta_io(struct rainssd *rs, struct dm_io_client *io, unsigned int m,
		      blk_opf_t opf, sector_t sector, void *buf, unsigned int sectors,
		      io_notify_fn fn, void *context)
{
	struct dm_io_region where = {
		.bdev = rs->dev[m]->bdev,
		.sector = sector,
		.count = sectors,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_KMEM,
		.mem.ptr.addr = buf,
		.notify.fn = fn,
		.notify.context = context,
		.client = io,
	};
	unsigned long error = 0;
	int r;

	rs_load_own_io(&rs->load, m, sectors);
	r = dm_io(&req, 1, &where, fn ? NULL : &error, IOPRIO_DEFAULT);
	return r ? r : (error ? -EIO : 0);
}

/*
 * Read both superblock copies of every present member into @a. Returns an
 * error only when a member cannot be read at all (which fails the load).
 */
int rs_meta_read(struct rainssd *rs, struct rs_activation *a)
{
	struct dm_io_client *io;
	unsigned int i, c;
	const char *why;
	void *buf;
	int r = 0;

	io = dm_io_client_create();
	if (IS_ERR(io))
		return PTR_ERR(io);
	buf = kmalloc(RS_SB_COPIES * RS_SB_SIZE, GFP_KERNEL);
	if (!buf) {
		dm_io_client_destroy(io);
		return -ENOMEM;
	}
	for (i = 0; i < a->n && !r; i++) {
		if (a->slot[i].missing)
			continue;
		r = rs_meta_io(rs, io, i, REQ_OP_READ | REQ_SYNC | REQ_META, RS_SB_SECTOR, buf,
			       RS_SB_COPIES * RS_SB_SIZE >> SECTOR_SHIFT, NULL, NULL);
		for (c = 0; c < RS_SB_COPIES && !r; c++) {
			a->slot[i].copy[c] = rs_sb_decode(buf + c * RS_SB_SIZE, &a->slot[i].sb[c],
							  &why);
			if (why)
				DMWARN("member %u (%pg): superblock copy %u: %s", i,
				       rs->dev[i]->bdev, c, why);
		}
	}
	kfree(buf);
	dm_io_client_destroy(io);
	return r;
}

/* A superblock write ended (dm-io's callback; interrupt context allowed). */
static void rs_meta_write_done(unsigned long error, void *context)
{
	struct rs_meta_wr *wr = context;
	struct rs_meta *m = wr->m;

	wr->error = error;
	if (atomic_dec_and_test(&m->pending))
		complete(&m->written);
}

/*
 * One I/O to every member @sb does not call failed and not in @skip, all at
 * once, each with @opf: a superblock write of @sb (generation sb->events, to copy events % 2),
 * or with @flush an empty cache flush. Returns the members whose I/O failed.
 * Sleeps.
 */
static unsigned long rs_meta_io_all(struct rs_meta *m, struct rs_sb *sb, blk_opf_t opf,
				    bool flush, unsigned long skip)
{
	struct rainssd *rs = m->rs;
	sector_t sector = RS_SB_SECTOR +
			  (sb->events % RS_SB_COPIES) * (RS_SB_SIZE >> SECTOR_SHIFT);
	unsigned long failed = 0;
	unsigned int i;

	atomic_set(&m->pending, 1);
	reinit_completion(&m->written);
	for (i = 0; i < sb->n; i++) {
		m->wr[i].m = m;
		m->wr[i].error = 0;
		if (sb->state[i] == RS_MS_FAILED || !rs->dev[i] || test_bit(i, &skip))
			continue;
		if (flush && rs_fault_fail_meta_flush(i)) {
			m->wr[i].error = 1;
			continue;
		}
		if (!flush) {
			sb->role = i;
			rs_sb_encode(sb, m->block[i]);
		}
		atomic_inc(&m->pending);
		/* A single-region async dm_io() only fails before it starts. */
		if (WARN_ON_ONCE(rs_meta_io(rs, m->io, i, opf, sector, m->block[i],
					    flush ? 0 : RS_SB_SIZE >> SECTOR_SHIFT,
					    rs_meta_write_done, &m->wr[i]))) {
			m->wr[i].error = 1;
			atomic_dec(&m->pending);
		}
	}
	if (!atomic_dec_and_test(&m->pending))
		wait_for_completion(&m->written);
	for (i = 0; i < sb->n; i++) {
		if (!m->wr[i].error)
			continue;
		DMERR_LIMIT("member %u (%pg): superblock %s failed", i, rs->dev[i]->bdev,
			    flush ? "flush" : "write");
		__set_bit(i, &failed);
	}
	return failed;
}

/* Mirror the state the I/O path reads into struct rainssd. Lock held. */
static void rs_meta_publish(struct rs_meta *m)
{
	struct rainssd *rs = m->rs;
	unsigned int i, rb = RS_NO_MEMBER;
	unsigned long dead = 0;

	for (i = 0; i < m->sb.n; i++) {
		if (m->sb.state[i] == RS_MS_FAILED)
			__set_bit(i, &dead);
		else if (m->sb.state[i] == RS_MS_REBUILDING)
			rb = i;
	}
	/*
	 * Bits are only ever added once the table serves I/O (see
	 * rs_meta_prepare()), and before a rebuild ends: a reader that sees
	 * the rebuild over sees its member failed, if it failed
	 * (rs_member_holds()).
	 */
	for (i = 0; i < m->sb.n; i++)
		if (test_bit(i, &dead))
			set_bit(i, &rs->dead_mask);
	smp_mb__after_atomic();	/* pairs with smp_rmb() in rs_member_holds() */
	WRITE_ONCE(rs->resync_cp, m->sb.resync_cp);
	if (rb != RS_NO_MEMBER)
		WRITE_ONCE(rs->rebuild_cp, m->sb.cp[rb]);
	WRITE_ONCE(rs->rebuild_member, rb);
}

/* Resume the operations waiting for what is now committed. Lock held. */
static void rs_meta_wake(struct rs_meta *m, struct list_head *ready)
{
	struct rs_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, &m->waiters, wait)
		if (op->token <= m->committed_gen)
			list_move_tail(&op->wait, ready);
}

/* The flushes waiting for what is now committed (all: @all). Lock held. */
static void rs_meta_flushes_done(struct rs_meta *m, struct bio_list *done, bool all)
{
	struct bio *bio;

	while ((bio = bio_list_peek(&m->flushes)) &&
	       (all || rs_bio(bio)->t_map <= m->committed_gen))
		bio_list_add(done, bio_list_pop(&m->flushes));
}

/*
 * End the flushes in @done; with @broken, failed (1.11.6): the state they
 * waited for is on no member, so what they vouch for is not either.
 */
static void rs_meta_end_flushes(struct bio_list *done, bool broken)
{
	struct bio *bio;

	while ((bio = bio_list_pop(done))) {
		if (broken)
			bio->bi_status = BLK_STS_IOERR;
		bio_endio(bio);
	}
}

static void rs_meta_run_ready(struct list_head *ready)
{
	struct rs_op *op, *tmp;

	list_for_each_entry_safe(op, tmp, ready, wait) {
		list_del(&op->wait);
		rs_op_queue(op, op->run);
	}
}

/*
 * Record member @idx failed. The degraded-log records of the state before
 * are superseded by the updates that now skip it, which are not logged:
 * a new nonce, so that no replay applies them over those updates. Every
 * member failure of a running table goes through here (the activation's
 * come before rs_meta_prepare() draws one). Returns true the first time.
 * Lock held.
 */
static bool rs_meta_fail_locked(struct rs_meta *m, unsigned int idx)
{
	if (m->sb.state[idx] == RS_MS_FAILED)
		return false;
	m->sb.state[idx] = RS_MS_FAILED;
	m->sb.log_nonce = get_random_u64();
	m->state_gen++;
	rs_meta_publish(m);
	return true;
}

/*
 * The members in @failed that the last commit failed: the log says so, a
 * dm event, the sync looks again (rs_member_failed_report()). No lock held.
 */
static void rs_meta_report_failed(struct rs_meta *m, unsigned long failed)
{
	unsigned int i;

	for_each_set_bit(i, &failed, m->sb.n)
		rs_member_failed_report(m->rs, i, "superblock write error");
}

/*
 * An update planned with no member failed writes no degraded-log record:
 * once a commit says a member failed, the activation after a power cut
 * takes every stripe whose update is not logged as consistent (its dirty
 * regions are the log's to cover). So such a commit flushes the members in
 * @sb's service only once the writes such updates sent them are back
 * (rainssd-raid5.c counts them, rs_batch_count_begin()): on stable media
 * before a superblock says the member failed. Up to 1.11.11 the commit did
 * not wait: an update's write still in flight (or in a member's cache) at
 * its flush, then a power cut, left a torn stripe the activation neither
 * resynced nor found a record for, and the failed member's chunk of it was
 * rebuilt from that parity (found by review). Once a member has failed no
 * such update starts its writes, so the wait ends; it waits for nothing on
 * a failed member (one that hangs holds no commit up), and never for an
 * operation that waits for a commit. Sleeps.
 */
static void rs_meta_drain(struct rs_meta *m, const struct rs_sb *sb)
{
	unsigned long live = 0;
	unsigned int i;

	for (i = 0; i < sb->n; i++)
		if (sb->state[i] != RS_MS_FAILED)
			__set_bit(i, &live);
	rs_batch_wait_counted(m->rs, live);
}

static bool rs_sb_any_failed(const struct rs_sb *sb)
{
	unsigned int i;

	for (i = 0; i < sb->n; i++)
		if (sb->state[i] == RS_MS_FAILED)
			return true;
	return false;
}

/*
 * Take into @sb the members failed since it was copied, with the log nonce
 * of that state; whether there were any. Such a member failed while the
 * commit waited, a write counted for its drain among the causes (it fails
 * its member before its count drops, rs_mbio_endio()): a superblock that
 * said it in sync would vouch for a stripe its failed write left torn.
 * The commit still counts as the generation it copied (committed_gen in
 * rs_meta_commit()): what waits for these failures waits for the next
 * commit, which writes them again; the cost is one more commit, only when
 * a member fails during one.
 */
static bool rs_meta_take_failed(struct rs_meta *m, struct rs_sb *sb)
{
	unsigned long flags;
	bool more = false;
	unsigned int i;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < sb->n; i++) {
		if (m->sb.state[i] == RS_MS_FAILED && sb->state[i] != RS_MS_FAILED) {
			sb->state[i] = RS_MS_FAILED;
			more = true;
		}
	}
	if (more)
		sb->log_nonce = m->sb.log_nonce;
	spin_unlock_irqrestore(&m->lock, flags);
	return more;
}

/*
 * Drain for @sb (when it says a member failed) until no member failed
 * meanwhile that @sb does not say failed.
 */
static void rs_meta_drain_all(struct rs_meta *m, struct rs_sb *sb)
{
	do {
		if (rs_sb_any_failed(sb))
			rs_meta_drain(m, sb);
	} while (rs_meta_take_failed(m, sb));
}

/*
 * Write @sb to every member it does not call failed, with FUA, once every
 * one of them has flushed its cache: a state or checkpoint the superblock
 * records (a rebuilt member's chunks below its checkpoint, parity below the
 * resync's, a member failed before the writes that go on without it) is on
 * stable media before any member's copy says so, as md's superblock writes
 * (REQ_PREFLUSH) have it. The write hole of a single PREFLUSH per member is
 * that one member's new copy could be stable before another member's cache
 * is. @sb takes in every member failed since it was copied
 * (rs_meta_take_failed(): up to 1.11.21 one whose drained write failed was
 * written in sync), and with a member failed the flush waits for the
 * updates planned before (rs_meta_drain()). A member whose flush failed is failed at once (in
 * *@first the first time), and @sb says so with the new log nonce before it
 * is written to the others (1.11.12: up to 1.11.11 @sb still said in sync,
 * and a power cut before the next commit left that member one generation
 * behind with the others vouching for what its cache lost, which
 * rs_assemble() now takes in); the others are flushed again once the
 * updates planned before that failure are done. Returns the members whose
 * flush or write failed. Sleeps.
 */
static unsigned long rs_meta_write_all(struct rs_meta *m, struct rs_sb *sb,
				       unsigned long *first)
{
	unsigned long failed = 0, now, flags;
	unsigned int i;

	*first = 0;
	rs_meta_drain_all(m, sb);
	while ((now = rs_meta_io_all(m, sb, REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC, true,
				     failed))) {
		spin_lock_irqsave(&m->lock, flags);
		for_each_set_bit(i, &now, sb->n) {
			if (rs_meta_fail_locked(m, i))
				__set_bit(i, first);
			sb->state[i] = RS_MS_FAILED;
		}
		sb->log_nonce = m->sb.log_nonce;
		spin_unlock_irqrestore(&m->lock, flags);
		failed |= now;
		rs_meta_drain_all(m, sb);
	}
	return failed | rs_meta_io_all(m, sb, REQ_OP_WRITE | REQ_SYNC | REQ_FUA | REQ_META |
				       REQ_PRIO, false, failed);
}

/* Commit until what is written is the latest state. Process context; sleeps. */
static int rs_meta_commit(struct rs_meta *m)
{
	struct bio_list done = BIO_EMPTY_LIST;
	unsigned long failed, first, flags;
	unsigned int i, live;
	LIST_HEAD(ready);
	struct rs_sb sb;
	u64 gen;

	for (;;) {
		while (m->activated && rs_fault_hold_meta_commits())
			msleep(20);
		spin_lock_irqsave(&m->lock, flags);
		if (m->broken) {
			spin_unlock_irqrestore(&m->lock, flags);
			return -EIO;
		}
		/*
		 * A suspended table writes nothing: a new table of the device
		 * may have read the superblocks and committed since (up to
		 * 1.11.14 a fail message sent to the old table after its
		 * suspend wrote, over the new table's first commit, the old
		 * table's state: clean, while the new one was in use). What
		 * changed meanwhile is committed by the next preresume.
		 */
		if (m->suspended) {
			spin_unlock_irqrestore(&m->lock, flags);
			return 0;
		}
		if (m->committed_gen == m->state_gen && m->activated) {
			spin_unlock_irqrestore(&m->lock, flags);
			return 0;
		}
		gen = m->state_gen;
		sb = m->sb;
		sb.events++;
		m->sb.events = sb.events;
		spin_unlock_irqrestore(&m->lock, flags);

		failed = rs_meta_write_all(m, &sb, &first);
		live = 0;
		for (i = 0; i < sb.n; i++)
			if (sb.state[i] != RS_MS_FAILED && m->rs->dev[i] && !test_bit(i, &failed))
				live++;
		spin_lock_irqsave(&m->lock, flags);
		if (!live) {
			/*
			 * Every member refused it: none can be trusted with
			 * data any more. They are failed here (the volume is
			 * dead) and the waiting operations go on, to fail
			 * their I/O; none hangs on a commit that cannot be.
			 */
			for_each_set_bit(i, &failed, sb.n)
				if (!rs_meta_fail_locked(m, i))
					__clear_bit(i, &failed);
			m->broken = true;
			rs_meta_publish(m);
			m->committed_gen = m->state_gen;
			list_splice_tail_init(&m->waiters, &ready);
			rs_meta_flushes_done(m, &done, true);
			spin_unlock_irqrestore(&m->lock, flags);
			rs_meta_run_ready(&ready);
			rs_meta_end_flushes(&done, true);
			rs_meta_report_failed(m, failed | first);
			DMERR("no member took the superblock: the volume is failed");
			return -EIO;
		}
		/*
		 * A member that refused it fails as any other does (up to
		 * 1.11.10 without a new log nonce, dm event or sync kick: once
		 * the next commit said it failed, an unclean activation replayed
		 * records of the rebuild's state over updates not logged since).
		 */
		for_each_set_bit(i, &failed, sb.n)
			if (!rs_meta_fail_locked(m, i))
				__clear_bit(i, &failed);
		rs_meta_publish(m);
		/* What the superblocks now vouch for, below a rebuild's checkpoint. */
		for (i = 0; i < sb.n; i++)
			if (sb.state[i] == RS_MS_REBUILDING)
				WRITE_ONCE(m->rs->rebuild_cp_durable, sb.cp[i]);
		m->committed_gen = gen;
		m->activated = true;
		rs_meta_wake(m, &ready);
		rs_meta_flushes_done(m, &done, false);
		spin_unlock_irqrestore(&m->lock, flags);
		rs_meta_run_ready(&ready);
		rs_meta_end_flushes(&done, false);
		rs_meta_report_failed(m, failed | first);
	}
}

static void rs_meta_commit_work(struct work_struct *work)
{
	struct rs_meta *m = container_of(work, struct rs_meta, commit_work);

	rs_meta_commit(m);
}

/* ---- the state ---- */

void rs_meta_request_commit(struct rs_meta *m)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	m->state_gen++;
	spin_unlock_irqrestore(&m->lock, flags);
	queue_work(m->wq, &m->commit_work);
}

/*
 * Member @idx failed: record it and commit. Returns true the first time.
 * Any context.
 */
bool rs_meta_member_failed(struct rs_meta *m, unsigned int idx)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&m->lock, flags);
	first = rs_meta_fail_locked(m, idx);
	spin_unlock_irqrestore(&m->lock, flags);
	if (first && m->activated)
		queue_work(m->wq, &m->commit_work);
	return first;
}

/* Queue @op to run @fn after the commit of the state now; drops the lock. */
static void rs_meta_queue_op(struct rs_meta *m, struct rs_op *op, rs_op_fn fn,
			     unsigned long flags)
	__releases(&m->lock)
{
	op->token = m->state_gen;
	op->run = fn;
	list_add_tail(&op->wait, &m->waiters);
	spin_unlock_irqrestore(&m->lock, flags);
	queue_work(m->wq, &m->commit_work);
}

/*
 * End @bio, a member's flush (its clone) that failed that member, once the
 * failure is on disk: until then a power cut would bring the member back in
 * sync with the writes its cache lost, though the flush had completed. Any
 * context.
 */
void rs_meta_end_after_commit(struct rs_meta *m, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	if (m->committed_gen == m->state_gen || m->broken) {
		if (m->broken)
			bio->bi_status = BLK_STS_IOERR;	/* see rs_meta_end_flushes() */
		spin_unlock_irqrestore(&m->lock, flags);
		bio_endio(bio);
		return;
	}
	rs_bio(bio)->t_map = m->state_gen;
	bio_list_add(&m->flushes, bio);
	spin_unlock_irqrestore(&m->lock, flags);
	queue_work(m->wq, &m->commit_work);
}

/* Commit every state change so far, if any, and wait for it. Sleeps. */
void rs_meta_commit_wait(struct rs_meta *m)
{
	queue_work(m->wq, &m->commit_work);
	flush_work(&m->commit_work);
}

/*
 * Commit the state now and wait for it, on the commit work: never beside a
 * commit queued before (up to 1.11.9 the suspend's and resume's commits ran
 * here directly after a flush_work(), so that a commit queued in between
 * could write its older copy of the superblock after theirs). -EIO once the
 * volume is broken. Sleeps.
 */
static int rs_meta_commit_now(struct rs_meta *m)
{
	rs_meta_commit_wait(m);
	return rs_meta_failed(m) ? -EIO : 0;
}

/* Whether every state change so far is durable, or never will be. Any context. */
bool rs_meta_committed(struct rs_meta *m)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&m->lock, flags);
	done = m->committed_gen == m->state_gen || m->broken;
	spin_unlock_irqrestore(&m->lock, flags);
	return done;
}

/*
 * Whether every state change so far is durable. If not, @op is queued to
 * run @fn once it is, and false is returned. Never sleeps.
 */
bool rs_meta_wait_committed(struct rs_meta *m, struct rs_op *op, rs_op_fn fn)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	if (m->committed_gen == m->state_gen || m->broken) {
		spin_unlock_irqrestore(&m->lock, flags);
		return true;
	}
	rs_meta_queue_op(m, op, fn, flags);
	return false;
}

/*
 * Whether the superblocks on disk say the rebuilding member's chunks of
 * stripes [@first, @last] are good where the rebuild has passed them in
 * memory; otherwise queue @op to run @fn once a commit of the checkpoint now
 * in memory is done, and return false. An update of a stripe the rebuild passed since the last
 * commit writes the rebuilt member and is not logged; a power cut before
 * the commit would resume the rebuild below it and rebuild that chunk from
 * a parity no log record makes right (a torn update), or replay a record
 * written before the rebuild passed over an update that came after. Never
 * sleeps.
 */
bool rs_meta_wait_rebuild_cp(struct rs_meta *m, struct rs_op *op, rs_op_fn fn, u64 first,
			     u64 last)
{
	struct rainssd *rs = m->rs;
	u64 cp = READ_ONCE(rs->rebuild_cp), durable = READ_ONCE(rs->rebuild_cp_durable);
	unsigned long flags;

	/*
	 * [first, last] against [durable, cp): an operation that holds a
	 * stripe the rebuild has not passed keeps it where it is, so once the
	 * commit has caught up (durable == cp) it goes on.
	 */
	if (READ_ONCE(rs->rebuild_member) == RS_NO_MEMBER ||
	    max(first, durable) >= min(last + 1, cp))
		return true;
	spin_lock_irqsave(&m->lock, flags);
	if (m->broken) {
		spin_unlock_irqrestore(&m->lock, flags);
		return true;
	}
	m->state_gen++;		/* the next commit writes the checkpoint */
	rs_meta_queue_op(m, op, fn, flags);
	return false;
}

/*
 * The rebuild has reached @cp (stripes below are good); @done: it is over.
 * At its end a new log nonce retires the rebuild's records, but not while
 * another member is failed: the records then are those of the updates
 * that skip that member, and a commit does not wait for such updates in
 * flight (rs_meta_drain() waits only for those planned with no member
 * failed). Up to 1.11.19 a member that failed as the rebuild ended had
 * those records retired too: after a power cut the replay ignored them,
 * and the failed member's chunk of a torn stripe was rebuilt from a parity
 * that did not match (case 59).
 */
void rs_meta_set_rebuild_cp(struct rs_meta *m, u64 cp, bool done)
{
	struct rainssd *rs = m->rs;
	unsigned int rb = READ_ONCE(rs->rebuild_member);
	unsigned long flags;

	if (rb == RS_NO_MEMBER)
		return;
	spin_lock_irqsave(&m->lock, flags);
	if (m->sb.state[rb] == RS_MS_REBUILDING) {
		m->sb.cp[rb] = cp;
		if (done) {
			m->sb.state[rb] = RS_MS_IN_SYNC;
			m->sb.cp[rb] = 0;
			if (!rs_sb_any_failed(&m->sb))
				m->sb.log_nonce = get_random_u64();
			m->state_gen++;
		}
		rs_meta_publish(m);
	}
	spin_unlock_irqrestore(&m->lock, flags);
	if (done)
		queue_work(m->wq, &m->commit_work);
}

void rs_meta_set_resync_cp(struct rs_meta *m, u64 cp)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	m->sb.resync_cp = cp;
	rs_meta_publish(m);
	spin_unlock_irqrestore(&m->lock, flags);
}

unsigned int rs_meta_state(struct rs_meta *m, unsigned int idx)
{
	unsigned long flags;
	unsigned int st;

	spin_lock_irqsave(&m->lock, flags);
	st = m->sb.state[idx];
	spin_unlock_irqrestore(&m->lock, flags);
	return st;
}

u64 rs_meta_events(struct rs_meta *m)
{
	unsigned long flags;
	u64 ev;

	spin_lock_irqsave(&m->lock, flags);
	ev = m->sb.events;
	spin_unlock_irqrestore(&m->lock, flags);
	return ev;
}

/* ---- life cycle ---- */

/*
 * A handle holding the state @as decided (nothing written yet: the first
 * resume writes it, when no older table of the device can still write).
 */
int rs_meta_create(struct rainssd *rs, const struct rs_assembly *as, struct rs_meta **out)
{
	struct rs_meta *m;
	unsigned int i;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->rs = rs;
	spin_lock_init(&m->lock);
	INIT_LIST_HEAD(&m->waiters);
	bio_list_init(&m->flushes);
	INIT_WORK(&m->commit_work, rs_meta_commit_work);
	init_completion(&m->written);
	generate_random_uuid(m->fresh_uuid);
	m->fresh_ctime = ktime_get_real_seconds();
	m->sb = as->sb;
	if (as->fresh) {
		memcpy(m->sb.uuid, m->fresh_uuid, sizeof(m->sb.uuid));
		m->sb.ctime = m->fresh_ctime;
	}
	m->io = dm_io_client_create();
	if (IS_ERR(m->io)) {
		m->io = NULL;
		goto bad;
	}
	m->wq = alloc_ordered_workqueue("rainssd-meta", WQ_MEM_RECLAIM);
	if (!m->wq)
		goto bad;
	for (i = 0; i < m->sb.n; i++) {
		m->block[i] = kmalloc(RS_SB_SIZE, GFP_KERNEL);
		if (!m->block[i])
			goto bad;
	}
	m->state_gen = 1;	/* the first resume writes */
	rs_meta_publish(m);
	*out = m;
	return 0;
bad:
	rs_meta_destroy(m);
	return -ENOMEM;
}

/*
 * Wait for a queued commit to end, at teardown: a commit that fails a
 * member reports it to the sync and the target's workqueue, which go
 * before the metadata. Sleeps.
 */
void rs_meta_flush(struct rs_meta *m)
{
	if (m && m->wq)
		flush_workqueue(m->wq);
}

void rs_meta_destroy(struct rs_meta *m)
{
	unsigned int i;

	if (!m)
		return;
	if (m->wq)
		destroy_workqueue(m->wq);
	WARN_ON_ONCE(!list_empty(&m->waiters));
	if (m->io)
		dm_io_client_destroy(m->io);
	for (i = 0; i < RS_MAX_DEVS; i++)
		kfree(m->block[i]);
	kfree(m);
}

static void rs_meta_log(struct rainssd *rs, const struct rs_assembly *as)
{
	unsigned int i;

	if (as->fresh)
		DMINFO("%s: a new volume: superblocks written%s",
		       dm_device_name(dm_table_get_md(rs->ti->table)),
		       as->sb.resync_cp < as->sb.stripes ? ", parity resync started" : " (nosync)");
	for_each_set_bit(i, &as->behind, as->sb.n)
		DMWARN("member %u missed the last superblock commit only: taken as the newest says",
		       i);
	for_each_set_bit(i, &as->failed, as->sb.n)
		DMERR("member %u: %s: it is failed and serves no data", i,
		      test_bit(i, &as->stale) ? "stale (its superblock is older than the others')" :
						 "missing from the table");
}

/*
 * The table's first resume, before anything is written: read the
 * superblocks again (an older table of the device may have committed since
 * this one was loaded; it is suspended now) and decide again with the
 * table's @a. *@boot says what the last shutdown left: a new volume,
 * whether it was clean, its log nonce, whether a member is out. An error
 * refuses the resume. Sleeps.
 */
int rs_meta_prepare(struct rs_meta *m, struct rs_activation *a, struct rs_meta_boot *boot)
{
	struct rs_assembly *as;
	unsigned long flags;
	unsigned int i;
	int r;

	memset(boot, 0, sizeof(*boot));
	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return -ENOMEM;
	r = rs_meta_read(m->rs, a);
	if (!r) {
		a->at_resume = true;
		rs_assemble(a, as);
		if (as->error) {
			DMERR("resume refused: %s (member %d)", as->error, as->bad_slot);
			r = -EINVAL;
		}
	}
	if (!r) {
		boot->fresh = as->fresh;
		boot->clean = as->fresh || (as->sb.flags & RS_SBF_CLEAN);
		boot->nonce = as->sb.log_nonce;
		boot->log_from = as->log_from;
		boot->log_cover = as->log_cover;
		boot->no_bitmap = as->no_bitmap;
		for (i = 0; i < as->sb.n; i++)
			boot->degraded |= as->sb.state[i] != RS_MS_IN_SYNC;
		spin_lock_irqsave(&m->lock, flags);
		m->sb = as->sb;
		if (as->fresh) {
			memcpy(m->sb.uuid, m->fresh_uuid, sizeof(m->sb.uuid));
			m->sb.ctime = m->fresh_ctime;
		}
		if (!m->sb.region_stripes)
			m->sb.region_stripes = a->region_stripes;
		/*
		 * A new log nonce now, not at rs_meta_activate(): the tier's
		 * table load commits these member states before it when a
		 * member is out, and a member the assembly failed makes the
		 * next activation replay the log from stripe 0. Under the old
		 * nonce, a cut after that commit replayed records below a
		 * rebuild's checkpoint over updates not logged since (up to
		 * 1.11.15; the replay by @boot's nonce comes first, and a
		 * commit flushes the members before it writes). A resume tried
		 * again after rs_meta_activate() committed keeps the nonce it
		 * committed: that one returns at once then.
		 */
		if (!m->in_use) {
			m->sb.log_nonce = get_random_u64();
			m->state_gen++;
		}
		/*
		 * This table has served nothing yet: the members out are the
		 * ones these superblocks say, not the ones the load's read
		 * found out. One found stale then (an older table's commit
		 * in flight) is current now; left dead in memory while the
		 * superblocks say in_sync, it would miss every write and be
		 * trusted at the next activation (1.11.6).
		 */
		WRITE_ONCE(m->rs->dead_mask, 0);
		rs_meta_publish(m);
		for (i = 0; i < m->sb.n; i++)
			if (m->sb.state[i] == RS_MS_REBUILDING)
				WRITE_ONCE(m->rs->rebuild_cp_durable, m->sb.cp[i]);
		spin_unlock_irqrestore(&m->lock, flags);
		rs_meta_log(m->rs, as);
	}
	kfree(as);
	return r;
}

/*
 * The first resume, once any log is replayed: write the state decided by
 * rs_meta_prepare() with the next generation, marked in use (not clean)
 * and with the new log nonce drawn there, so that no record written
 * before is replayed again. Once only, and not skipped because a commit
 * came before it: the tier's table load commits the state as it is when a
 * member is out (1.11.9; up to 1.11.8 that commit counted as this one,
 * and a volume activated again with a member failed stayed clean on disk
 * while in use, so that the next power cut was taken as a clean
 * shutdown). The commit runs on the commit work, as one queued before
 * may. Sleeps.
 */
int rs_meta_activate(struct rs_meta *m)
{
	unsigned long flags;

	if (m->in_use)
		return 0;
	spin_lock_irqsave(&m->lock, flags);
	m->sb.flags &= ~RS_SBF_CLEAN;
	m->state_gen++;
	spin_unlock_irqrestore(&m->lock, flags);
	if (rs_meta_commit_now(m))
		return -EIO;
	m->in_use = true;
	return 0;
}

/*
 * Mark the volume clean (a suspend that left every write on stable media
 * and the bitmap clear) or in use again (a resume), and commit. Sleeps.
 */
int rs_meta_set_clean(struct rs_meta *m, bool clean)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	if (clean) {
		m->sb.flags = (m->sb.flags | RS_SBF_CLEAN) & ~RS_SBF_UNCOVERED;
		m->sb.uncovered_to = 0;
	} else {
		m->sb.flags &= ~RS_SBF_CLEAN;
	}
	m->state_gen++;
	spin_unlock_irqrestore(&m->lock, flags);
	return rs_meta_commit_now(m);
}

/*
 * Below which stripe the bitmap's dirty regions are ones no degraded-log
 * record covers (RS_SBF_UNCOVERED; U64_MAX every one, 0 none); a change is
 * committed (by the first resume's commit, before it). Any context.
 */
void rs_meta_set_uncovered(struct rs_meta *m, u64 to)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&m->lock, flags);
	changed = (m->sb.flags & RS_SBF_UNCOVERED ? m->sb.uncovered_to : 0) != to;
	if (changed) {
		if (to)
			m->sb.flags |= RS_SBF_UNCOVERED;
		else
			m->sb.flags &= ~RS_SBF_UNCOVERED;
		m->sb.uncovered_to = to;
		m->state_gen++;
	}
	spin_unlock_irqrestore(&m->lock, flags);
	if (changed && m->activated)
		queue_work(m->wq, &m->commit_work);
}

/*
 * The table's postsuspend has made its last commit (@suspended true): from
 * now on commits write nothing until the preresume (false), which commits
 * what changed meanwhile, if anything. Sleeps: a commit running now ends
 * first.
 */
void rs_meta_set_suspended(struct rs_meta *m, bool suspended)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	m->suspended = suspended;
	spin_unlock_irqrestore(&m->lock, flags);
	if (suspended)
		flush_work(&m->commit_work);
	else
		rs_meta_commit_wait(m);
}

/* Whether the table is suspended (rs_meta_set_suspended()). Any context. */
bool rs_meta_suspended(struct rs_meta *m)
{
	unsigned long flags;
	bool suspended;

	spin_lock_irqsave(&m->lock, flags);
	suspended = m->suspended;
	spin_unlock_irqrestore(&m->lock, flags);
	return suspended;
}

/* Whether no member took a commit: the volume is failed, every I/O an error. Any context. */
bool rs_meta_failed(struct rs_meta *m)
{
	unsigned long flags;
	bool broken;

	spin_lock_irqsave(&m->lock, flags);
	broken = m->broken;
	spin_unlock_irqrestore(&m->lock, flags);
	return broken;
}

bool rs_meta_clean(struct rs_meta *m)
{
	unsigned long flags;
	bool clean;

	spin_lock_irqsave(&m->lock, flags);
	clean = m->sb.flags & RS_SBF_CLEAN;
	spin_unlock_irqrestore(&m->lock, flags);
	return clean;
}

/* The nonce the degraded-log records of the current state carry. */
u64 rs_meta_log_nonce(struct rs_meta *m)
{
	unsigned long flags;
	u64 nonce;

	spin_lock_irqsave(&m->lock, flags);
	nonce = m->sb.log_nonce;
	spin_unlock_irqrestore(&m->lock, flags);
	return nonce;
}

u32 rs_meta_region_stripes(struct rs_meta *m)
{
	return m->sb.region_stripes;
}

/* The volume's UUID (a new volume's, chosen at load). */
void rs_meta_uuid(struct rs_meta *m, u8 *uuid)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	memcpy(uuid, m->sb.uuid, sizeof(m->sb.uuid));
	spin_unlock_irqrestore(&m->lock, flags);
}
