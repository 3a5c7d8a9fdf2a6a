// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd operation layer (see rainssd-op.h for the contract).
 */
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/mempool.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-fault.h"

#define RS_LOCK_BUCKETS_SHIFT	10
#define RS_JOIN_BUCKETS_SHIFT	6
/* Operation objects kept for when the slab has none: progress with nothing in flight. */
#define RS_OP_POOL_MIN		4

struct rs_lock_bucket {
	spinlock_t lock;		/* protects head */
	struct hlist_head head;		/* the owners' struct rs_stripe_lock */
};

struct rs_oplayer {
	struct rainssd *rs;
	bool (*feed)(struct rainssd *rs, struct bio *bio);
	unsigned int max_pages;		/* buffer pages one operation may use */

	struct rs_lock_bucket *locks;

	spinlock_t join_lock;		/* protects join and the joinable ops in it */
	struct hlist_head join[1U << RS_JOIN_BUCKETS_SHIFT];	/* by join_key */

	spinlock_t cache_lock;		/* protects used and peak */
	unsigned int used;		/* stripe-cache entries held by operations */
	unsigned int bg_used;		/* of which background operations hold */
	unsigned int peak;		/* most entries held since the last reset */
	mempool_t op_pool;

	spinlock_t pool_lock;		/* protects pool, pool_nr */
	struct list_head pool;		/* buffer pages to hand out again, by page->lru */
	unsigned int pool_nr;

	spinlock_t reserve_lock;	/* protects reserve_busy, reserve_waiters */
	bool reserve_busy;
	struct list_head reserve_waiters;
	struct page **reserve;		/* max_pages pages */

	struct bio_set bs;		/* member bios, taken without waiting */
	struct bio_set bs_emergency;	/* one step at a time, when bs has none */
	spinlock_t emergency_lock;	/* protects emergency_busy, emergency_waiters */
	bool emergency_busy;
	struct list_head emergency_waiters;
	unsigned int emergency_bios;	/* the bios any one step may need */

	spinlock_t defer_lock;		/* protects deferred; irq-safe */
	struct bio_list deferred;	/* bios waiting for an operation, FIFO */
	atomic_t nr_deferred;		/* deferred, including one being fed */
	struct work_struct feed_work;

	/* Counted writes (rs_batch_count_begin()): steps building, bios in flight. */
	atomic_t counting;
	atomic_t counted[RS_MAX_DEVS];
	wait_queue_head_t counted_wait;
};

/* A member bio. */
struct rs_mbio {
	struct rs_op *op;
	unsigned int member;
	bool counted;			/* in ol->counted[member] */
	sector_t sector;		/* where it starts on the member, for the log */
	struct rs_load_tag tag;
	struct bio bio;		/* last: the bioset's front pad ends here */
};

/* Operation objects of every target: one size, struct rs_op first (rs_op_module_init). */
static struct kmem_cache *rs_op_cache;

/* ---- sizes ---- */

static unsigned int rs_pages_per_chunk(const struct rs_geom *g)
{
	return DIV_ROUND_UP(g->chunk << SECTOR_SHIFT, PAGE_SIZE);
}

/*
 * Buffer pages one operation may use: a whole stripe, and at least
 * RS_OP_MIN_PAGES; with a @tier, also a migration's (rs_op_migrate_pages),
 * the largest operation there is. The reserve holds this many.
 */
unsigned int rs_op_max_pages(const struct rs_geom *g, bool tier)
{
	unsigned int p = max_t(unsigned int, g->n * rs_pages_per_chunk(g), RS_OP_MIN_PAGES);

	return tier ? max(p, rs_op_migrate_pages(g)) : p;
}

/* A tier migration: every member's chunk, and scratch for the copies of the n - 1 data chunks. */
unsigned int rs_op_migrate_pages(const struct rs_geom *g)
{
	return (2 * g->n - 1) * rs_pages_per_chunk(g);
}

/* The smallest stripe cache: room for the largest operation. */
unsigned int rs_stripe_cache_min(const struct rs_geom *g, bool tier)
{
	return DIV_ROUND_UP(rs_op_max_pages(g, tier), g->n);
}

/* ---- work ---- */

static void rs_op_work(struct work_struct *work)
{
	struct rs_op *op = container_of(work, struct rs_op, work);

	op->resume(op);
}

/* Run @fn for @op in the target's workqueue. Any context. */
void rs_op_queue(struct rs_op *op, rs_op_fn fn)
{
	op->resume = fn;
	queue_work(op->rs->wq, &op->work);
}

/* ---- deferred bios ---- */

void rs_feed_kick(struct rainssd *rs)
{
	queue_work(rs->wq, &rs->ol->feed_work);
}

/*
 * Whether bios wait for an operation. A bio the feed has taken off the list
 * still counts until it is wholly handed out, so that an operation ending
 * while the feed finds no room for it kicks the feed again.
 */
bool rs_defer_pending(struct rainssd *rs)
{
	return atomic_read(&rs->ol->nr_deferred) != 0;
}

/* Queue @bio (its per-bio data says what is left of it) for an operation. Any context. */
void rs_defer_bio(struct rainssd *rs, struct bio *bio)
{
	struct rs_oplayer *ol = rs->ol;
	unsigned long flags;

	atomic_inc(&ol->nr_deferred);
	spin_lock_irqsave(&ol->defer_lock, flags);
	bio_list_add(&ol->deferred, bio);
	spin_unlock_irqrestore(&ol->defer_lock, flags);
	rs_stat_inc(rs, RS_STAT_DEFERRED);
	/* An operation may have ended since the caller found no room. */
	rs_feed_kick(rs);
}

/*
 * Feed the deferred bios to the target in order, until one finds no room;
 * that one goes back to the head, and the end of an operation kicks this
 * again. A kick while this runs queues it once more, so none is lost.
 */
static void rs_feed_work(struct work_struct *work)
{
	struct rs_oplayer *ol = container_of(work, struct rs_oplayer, feed_work);
	struct bio *bio;

	for (;;) {
		spin_lock_irq(&ol->defer_lock);
		bio = bio_list_pop(&ol->deferred);
		spin_unlock_irq(&ol->defer_lock);
		if (!bio)
			return;
		if (!ol->feed(ol->rs, bio)) {
			spin_lock_irq(&ol->defer_lock);
			bio_list_add_head(&ol->deferred, bio);
			spin_unlock_irq(&ol->defer_lock);
			return;
		}
		atomic_dec(&ol->nr_deferred);
	}
}

/* ---- operations and the stripe cache ---- */

/*
 * An operation object with @units stripe-cache entries, or NULL when the
 * cache is full or no object can be had without waiting. Never sleeps.
 *
 * A @background operation (resync, rebuild, scrub, migration: each engine
 * starts its next one when the last ends) takes its entries beyond the cap,
 * and user operations still have the whole cap: under a load that keeps
 * the cache full and bios deferred, one that had to find room would rarely
 * or never start (the feed takes every entry an operation gives back), and
 * it may need as many entries as the whole cache; one that took user room
 * would hold the deferred bios back for as long as its engine runs. It is
 * paced by its engine's rate (rs_rate_wait()). Its entries count in used
 * (status) too.
 */
struct rs_op *rs_op_get(struct rainssd *rs, unsigned int units, bool background)
{
	struct rs_oplayer *ol = rs->ol;
	unsigned int others;
	struct rs_op *op;

	spin_lock(&ol->cache_lock);
	if (!background && ol->used - ol->bg_used + units > READ_ONCE(rs->stripe_cache)) {
		spin_unlock(&ol->cache_lock);
		return NULL;
	}
	others = ol->used;
	ol->used += units;
	if (background)
		ol->bg_used += units;
	ol->peak = max(ol->peak, ol->used);
	spin_unlock(&ol->cache_lock);

	/*
	 * The fault stands for an empty mempool: its reserve is whole while
	 * nothing is in flight, and an operation in flight feeds the deferred
	 * bios as it ends. So it fires only while other operations hold
	 * entries (1.11.4 fired with none too: nothing fed the bio again).
	 */
	op = others && rs_fault(RS_FAULT_OP) ? NULL :
	     mempool_alloc(&ol->op_pool, GFP_NOWAIT | __GFP_NOWARN);
	if (!op) {
		spin_lock(&ol->cache_lock);
		ol->used -= units;
		if (background)
			ol->bg_used -= units;
		spin_unlock(&ol->cache_lock);
		return NULL;
	}
	memset(op, 0, kmem_cache_size(rs_op_cache));
	op->rs = rs;
	op->units = units;
	op->background = background;
	INIT_WORK(&op->work, rs_op_work);
	return op;
}

void rs_op_cache_usage(struct rainssd *rs, unsigned int *used, unsigned int *peak)
{
	struct rs_oplayer *ol = rs->ol;

	spin_lock(&ol->cache_lock);
	*used = ol->used;
	*peak = ol->peak;
	spin_unlock(&ol->cache_lock);
}

void rs_op_cache_reset_peak(struct rainssd *rs)
{
	struct rs_oplayer *ol = rs->ol;

	spin_lock(&ol->cache_lock);
	ol->peak = ol->used;
	spin_unlock(&ol->cache_lock);
}

/* ---- the stripe-lock table ---- */

static struct rs_lock_bucket *rs_bucket(struct rs_oplayer *ol, u64 stripe)
{
	return &ol->locks[hash_64(stripe, RS_LOCK_BUCKETS_SHIFT)];
}

/* Own @lk's stripe, or queue @lk behind its owner and return false. */
static bool rs_stripe_trylock(struct rs_oplayer *ol, struct rs_stripe_lock *lk)
{
	struct rs_lock_bucket *b = rs_bucket(ol, lk->stripe);
	struct rs_stripe_lock *owner;

	INIT_LIST_HEAD(&lk->waiters);
	spin_lock(&b->lock);
	hlist_for_each_entry(owner, &b->head, node) {
		if (owner->stripe == lk->stripe) {
			list_add_tail(&lk->wait, &owner->waiters);
			spin_unlock(&b->lock);
			return false;
		}
	}
	hlist_add_head(&lk->node, &b->head);
	spin_unlock(&b->lock);
	return true;
}

static void rs_op_lock_all(struct rs_op *op);

/* Give up @lk's stripe: the first waiter owns it and inherits the other waiters. */
static void rs_stripe_unlock(struct rs_oplayer *ol, struct rs_stripe_lock *lk)
{
	struct rs_lock_bucket *b = rs_bucket(ol, lk->stripe);
	struct rs_stripe_lock *next = NULL;

	spin_lock(&b->lock);
	hlist_del(&lk->node);
	if (!list_empty(&lk->waiters)) {
		next = list_first_entry(&lk->waiters, struct rs_stripe_lock, wait);
		list_del(&next->wait);
		list_splice_init(&lk->waiters, &next->waiters);
		hlist_add_head(&next->node, &b->head);
	}
	spin_unlock(&b->lock);
	if (next) {
		next->op->nr_locked++;
		rs_op_queue(next->op, rs_op_lock_all);
	}
}

/* ---- page arrays and the buffer-page pool ---- */

/*
 * Buffer pages go back to a pool of the volume's when an operation ends
 * and are handed out again before the page allocator is asked: a page from
 * the allocator is zeroed on kernels booted with init_on_alloc (Debian's
 * default), which was the largest share of rainssd's CPU time on streaming
 * writes. The pool keeps at most stripe_cache x n pages, what the stripe
 * cache lets operations hold at once (md's stripe cache keeps as many), and
 * fills only as far as operations used that many together. A page handed
 * out holds what an earlier operation left in it: operations read or copy
 * into every byte they use (poison_buffers in rainssd-fault.h checks it).
 */
static void rs_free_pages(struct page **pages, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (pages[i])
			__free_page(pages[i]);
}

/*
 * The pages of @pages (NULL slots skipped) back to the pool, the rest freed;
 * so is what the pool holds beyond its cap once stripe_cache was lowered.
 */
static void rs_pool_put(struct rs_oplayer *ol, struct page **pages, unsigned int nr)
{
	unsigned int cap = READ_ONCE(ol->rs->stripe_cache) * ol->rs->geom.n;
	struct page *page, *tmp;
	unsigned int room = cap - min(cap, READ_ONCE(ol->pool_nr));
	LIST_HEAD(back);
	unsigned int i, nr_back = 0;

	/*
	 * Linked (or freed, past the room there seems to be) outside the lock;
	 * inside it only the splice, and a trim when another put raced or
	 * stripe_cache was lowered.
	 */
	for (i = 0; i < nr; i++) {
		if (!pages[i])
			continue;
		if (nr_back < room) {
			list_add_tail(&pages[i]->lru, &back);
			nr_back++;
		} else {
			__free_page(pages[i]);
		}
		pages[i] = NULL;
	}
	spin_lock(&ol->pool_lock);
	list_splice(&back, &ol->pool);
	ol->pool_nr += nr_back;
	INIT_LIST_HEAD(&back);
	while (ol->pool_nr > cap) {
		list_move(ol->pool.prev, &back);
		ol->pool_nr--;
	}
	spin_unlock(&ol->pool_lock);
	list_for_each_entry_safe(page, tmp, &back, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/* Fill the empty slots of pages [from, nr) from the pool; how many are still empty. */
static unsigned int rs_pool_take(struct rs_oplayer *ol, struct page **pages, unsigned int from,
				 unsigned int nr)
{
	unsigned int i;

	spin_lock(&ol->pool_lock);
	for (i = from; i < nr && ol->pool_nr; i++) {
		pages[i] = list_first_entry(&ol->pool, struct page, lru);
		list_del(&pages[i]->lru);
		ol->pool_nr--;
	}
	spin_unlock(&ol->pool_lock);
	return nr - i;
}

static void rs_pool_exit(struct rs_oplayer *ol)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &ol->pool, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
	ol->pool_nr = 0;
}

/*
 * Pages [from, nr) of @pages (empty slots) from the pool, then from the page
 * allocator without waiting; all or none.
 */
static bool rs_fill_pages(struct rs_oplayer *ol, struct page **pages, unsigned int from,
			  unsigned int nr)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	unsigned long got, now;
	unsigned int left;

	if (rs_fault(RS_FAULT_BUFFERS))
		return false;
	left = rs_pool_take(ol, pages, from, nr);
	if (!left)
		goto filled;
	got = nr - left;
	/* The bulk allocator may stop short of @nr with pages to spare: go on while it gives. */
	while ((now = alloc_pages_bulk_array(gfp, nr, pages)) > got) {
		got = now;
		if (got == nr)
			goto filled;
	}
	rs_pool_put(ol, pages + from, nr - from);
	memset(pages + from, 0, (nr - from) * sizeof(*pages));
	return false;
filled:
	rs_fault_poison_pages(pages + from, nr - from);
	return true;
}

/* ---- joining ---- */

static struct hlist_head *rs_join_head(struct rs_oplayer *ol, u64 key)
{
	return &ol->join[hash_64(key, RS_JOIN_BUCKETS_SHIFT)];
}

/*
 * A joinable @op goes into the join table when it is started and when it
 * waits for a stripe. Its next step (taking buffers, a stripe handed over)
 * may already be queued; that runs after us (one work item never runs twice
 * at once) and takes it out first.
 */
static void rs_join_add(struct rs_oplayer *ol, struct rs_op *op)
{
	if (!op->joinable)
		return;
	spin_lock(&ol->join_lock);
	hlist_add_head(&op->join_node, rs_join_head(ol, op->join_key));
	spin_unlock(&ol->join_lock);
}

/*
 * Out of the join table: from here on nothing changes @op's stripes or
 * buffers. Only @op's own steps add and delete its node; rs_op_join() moves
 * it between buckets under the lock, and its pprev is never NULL meanwhile,
 * so a node seen unhashed here without the lock is out, and the lock is
 * spared (as at rs_op_lock_all()'s first step after rs_op_acquire()).
 */
static void rs_join_del(struct rs_oplayer *ol, struct rs_op *op)
{
	if (!op->joinable || hlist_unhashed_lockless(&op->join_node))
		return;
	spin_lock(&ol->join_lock);
	hlist_del_init(&op->join_node);
	spin_unlock(&ol->join_lock);
}

/* Before rs_op_start(): @op may be joined while it waits, found by @key. */
void rs_op_set_joinable(struct rs_op *op, u64 key)
{
	op->joinable = true;
	op->join_key = key;
	INIT_HLIST_NODE(&op->join_node);
}

/*
 * Find a joinable operation of @rs with join key @key that does not hold
 * its stripes yet, and call @fn(op, @data) while it cannot go on: @fn may
 * grow it (rs_op_grow), add pieces and change op->join_key, and returns
 * whether it did. False when there is no such operation or @fn said no to
 * each. Any process context, never sleeps; @fn must not sleep either.
 */
bool rs_op_join(struct rainssd *rs, u64 key, bool (*fn)(struct rs_op *op, void *data),
		void *data)
{
	struct rs_oplayer *ol = rs->ol;
	struct hlist_head *head = rs_join_head(ol, key);
	struct rs_op *op;
	bool joined = false;

	/* Most writes find an empty bucket: no lock for them (a miss only costs a join). */
	if (hlist_empty(head))
		return false;
	spin_lock(&ol->join_lock);
	hlist_for_each_entry(op, head, join_node) {
		if (op->join_key != key || !fn(op, data))
			continue;
		joined = true;
		if (op->join_key != key) {
			hlist_del(&op->join_node);
			hlist_add_head(&op->join_node, rs_join_head(ol, op->join_key));
		}
		break;
	}
	spin_unlock(&ol->join_lock);
	return joined;
}

/*
 * From rs_op_join()'s callback: let @op cover @nr stripes from op->stripe
 * (at least as many as now), with @nr_pages buffer pages and @units
 * stripe-cache entries (if more than it has), without waiting. False, and
 * it holds what it held (its page array may have moved), when that cannot
 * be had now.
 */
bool rs_op_grow(struct rs_op *op, unsigned int nr, unsigned int nr_pages, unsigned int units)
{
	struct rainssd *rs = op->rs;
	struct rs_oplayer *ol = rs->ol;
	unsigned int more = units > op->units ? units - op->units : 0;
	struct page **pages;

	lockdep_assert_held(&ol->join_lock);
	if (nr < op->nr || nr > RS_OP_MAX_STRIPES || nr_pages > ol->max_pages)
		return false;
	if (more) {
		spin_lock(&ol->cache_lock);
		if (ol->used - ol->bg_used + more > READ_ONCE(rs->stripe_cache)) {
			spin_unlock(&ol->cache_lock);
			return false;
		}
		ol->used += more;
		spin_unlock(&ol->cache_lock);
	}
	/*
	 * Before rs_op_acquire() the count is all there is; the reserve has
	 * max_pages: nothing to add to either.
	 */
	if (nr_pages > op->nr_pages && op->acquired && !op->on_reserve) {
		pages = krealloc_array(op->pages, nr_pages, sizeof(*pages),
				       GFP_NOWAIT | __GFP_NOWARN);
		if (pages) {
			op->pages = pages;
			memset(pages + op->nr_pages, 0,
			       (nr_pages - op->nr_pages) * sizeof(*pages));
		}
		if (!pages || !rs_fill_pages(ol, pages, op->nr_pages, nr_pages)) {
			spin_lock(&ol->cache_lock);
			ol->used -= more;
			spin_unlock(&ol->cache_lock);
			return false;
		}
	}
	if (more) {
		spin_lock(&ol->cache_lock);
		ol->peak = max(ol->peak, ol->used);
		spin_unlock(&ol->cache_lock);
	}
	op->units += more;
	op->nr_pages = max(op->nr_pages, nr_pages);
	op->nr = nr;
	return true;
}

/* Lock the stripes not yet ours, in ascending order; run op->run when all are. */
static void rs_op_lock_all(struct rs_op *op)
{
	struct rs_oplayer *ol = op->rs->ol;

	rs_join_del(ol, op);
	while (op->nr_locked < op->nr) {
		struct rs_stripe_lock *lk = &op->lk[op->nr_locked];

		lk->op = op;
		lk->stripe = op->stripe + op->nr_locked;
		if (!rs_stripe_trylock(ol, lk)) {
			rs_join_add(ol, op);
			return;		/* handed over later by rs_stripe_unlock */
		}
		op->nr_locked++;
	}
	rs_stat_inc(op->rs, RS_STAT_OPS);
	op->run(op);
}

/* ---- buffers ---- */

/* op->nr_pages pages from the page allocator, without waiting or reclaim. */
static bool rs_op_alloc_pages(struct rs_op *op)
{
	op->pages = kcalloc(op->nr_pages, sizeof(*op->pages), GFP_NOWAIT | __GFP_NOWARN);
	if (!op->pages)
		return false;
	if (rs_fill_pages(op->rs->ol, op->pages, 0, op->nr_pages))
		return true;
	kfree(op->pages);
	op->pages = NULL;
	return false;
}

/* The reserve is op's now (the caller took it): lock the stripes. */
static void rs_op_on_reserve(struct rs_op *op)
{
	op->pages = op->rs->ol->reserve;
	op->on_reserve = true;
	/* all of it: a join may grow the operation into more of the reserve */
	rs_fault_poison_pages(op->pages, op->rs->ol->max_pages);
	rs_stat_inc(op->rs, RS_STAT_RESERVE);
	rs_op_lock_all(op);
}

static void rs_reserve_put(struct rs_oplayer *ol)
{
	struct rs_op *next = NULL;

	spin_lock(&ol->reserve_lock);
	if (list_empty(&ol->reserve_waiters)) {
		ol->reserve_busy = false;
	} else {
		next = list_first_entry(&ol->reserve_waiters, struct rs_op, wait);
		list_del(&next->wait);
	}
	spin_unlock(&ol->reserve_lock);
	if (next)
		rs_op_queue(next, rs_op_on_reserve);
}

static void rs_op_acquire(struct rs_op *op)
{
	struct rs_oplayer *ol = op->rs->ol;

	/* From here on its page count is what it gets. */
	rs_join_del(ol, op);
	op->acquired = true;
	if (!op->nr_pages || rs_op_alloc_pages(op))
		return rs_op_lock_all(op);
	spin_lock(&ol->reserve_lock);
	if (ol->reserve_busy) {
		list_add_tail(&op->wait, &ol->reserve_waiters);
		spin_unlock(&ol->reserve_lock);
		return;		/* handed over by rs_reserve_put */
	}
	ol->reserve_busy = true;
	spin_unlock(&ol->reserve_lock);
	rs_op_on_reserve(op);
}

/*
 * Give @op @nr_pages buffer pages, then its stripes op->lk[] for
 * [op->stripe, op->stripe + op->nr), then run @run; all in the workqueue.
 */
void rs_op_start(struct rs_op *op, unsigned int nr_pages, rs_op_fn run)
{
	/* More than the reserve holds: a user sized it wrong (1.11.4's migrations). */
	WARN_ON_ONCE(nr_pages > op->rs->ol->max_pages);
	op->nr_pages = nr_pages;
	op->run = run;
	rs_join_add(op->rs->ol, op);
	rs_op_queue(op, rs_op_acquire);
}

/* The end of @op: its stripes, buffers, entries and object go back. */
void rs_op_put(struct rs_op *op)
{
	struct rainssd *rs = op->rs;
	struct rs_oplayer *ol = rs->ol;
	unsigned int i;

	for (i = 0; i < op->nr_locked; i++)
		rs_stripe_unlock(ol, &op->lk[i]);
	if (op->on_reserve) {
		rs_reserve_put(ol);
	} else if (op->pages) {
		rs_pool_put(ol, op->pages, op->nr_pages);
		kfree(op->pages);
	}
	spin_lock(&ol->cache_lock);
	ol->used -= op->units;
	if (op->background)
		ol->bg_used -= op->units;
	spin_unlock(&ol->cache_lock);
	mempool_free(op, &ol->op_pool);
	if (rs_defer_pending(rs))
		rs_feed_kick(rs);
}

/* ---- member-bio batches ---- */

static void rs_batch_done(struct rs_op *op);

/* A counted write is back, or was never sent. Any context. */
static void rs_mbio_uncount(struct rs_oplayer *ol, struct rs_mbio *mb)
{
	if (!mb->counted || !atomic_dec_and_test(&ol->counted[mb->member]))
		return;
	/* waitqueue_active() is safe: the atomic above was a full barrier. */
	if (waitqueue_active(&ol->counted_wait))
		wake_up_all(&ol->counted_wait);
}

static void rs_mbio_endio(struct bio *bio)
{
	struct rs_mbio *mb = container_of(bio, struct rs_mbio, bio);
	struct rs_op *op = mb->op;
	struct rainssd *rs = op->rs;

	if (rs_load_done(&rs->load, mb->member, &mb->tag))
		rs_mstat_inc(rs, mb->member, RS_MSTAT_STALLS);
	if (bio->bi_status) {
		DMERR_LIMIT("member %u (%pg): %s at sector %llu failed: error %d", mb->member,
			    rs->dev[mb->member]->bdev, op_is_write(bio_op(bio)) ? "write" : "read",
			    (unsigned long long)mb->sector, blk_status_to_errno(bio->bi_status));
		set_bit(mb->member, &op->failed);
		/*
		 * A counted write fails its member before its count drops: the
		 * superblock commit waiting for it then records that member
		 * failed too (rs_meta_write_all()). Up to 1.11.21 the member was
		 * failed later, in the operation's next step, and the commit
		 * wrote it in sync over a stripe that write had left torn.
		 */
		if (mb->counted)
			rs_member_failed(rs, mb->member, "write error");
	}
	rs_mbio_uncount(rs->ol, mb);
	bio_put(bio);
	if (atomic_dec_and_test(&op->pending)) {
		op->t_done = ktime_get_ns();
		rs_op_queue(op, rs_batch_done);
	}
}

static struct bio *rs_mbio_alloc(struct rs_op *op, unsigned int m, blk_opf_t opf,
				 sector_t sector, unsigned int nr_vecs)
{
	struct rainssd *rs = op->rs;
	struct rs_oplayer *ol = rs->ol;
	struct rs_mbio *mb;
	struct bio *bio;

	nr_vecs = min_t(unsigned int, nr_vecs, BIO_MAX_VECS);
	if (op->emergency)
		/* Cannot fail or wait: the reserve holds a whole step and is ours. */
		bio = bio_alloc_bioset(rs->dev[m]->bdev, nr_vecs, opf, GFP_NOIO,
				       &ol->bs_emergency);
	else if (rs_fault(RS_FAULT_NOWAIT_BIO))
		bio = NULL;
	else
		bio = bio_alloc_bioset(rs->dev[m]->bdev, nr_vecs, opf,
				       GFP_NOWAIT | __GFP_NOWARN, &ol->bs);
	if (!bio)
		return NULL;
	mb = container_of(bio, struct rs_mbio, bio);
	mb->op = op;
	mb->member = m;
	mb->sector = sector;
	mb->counted = op->count_writes && op_is_write(opf);
	if (mb->counted)
		atomic_inc(&ol->counted[m]);
	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = rs_mbio_endio;
	if (op->bio) {
		/* The user's cgroup and priority, so io.max and iocost apply. */
		bio_clone_blkg_association(bio, op->bio);
		bio->bi_ioprio = op->bio->bi_ioprio;
	}
	atomic_inc(&op->pending);
	bio_list_add(&op->batch, bio);
	return bio;
}

/*
 * Add @len bytes of member @m at @msector to the batch, from op->pages[pidx]
 * at offset @off onwards (through the following pages). It goes into the
 * member's last bio when that one ends at @msector with the same flags;
 * @hint is how many bytes the caller will add contiguously to this member
 * in all (at least @len), to size a new bio.
 */
void rs_batch_add(struct rs_op *op, unsigned int m, blk_opf_t opf, sector_t msector,
		  unsigned int pidx, unsigned int off, unsigned int len, unsigned int hint)
{
	struct bio *bio = op->last[m];

	hint = max(hint, len);
	while (len && !op->alloc_failed) {
		struct page *page = op->pages[pidx];
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - off);

		if (!bio || bio->bi_opf != opf || bio_end_sector(bio) != msector ||
		    bio_add_page(bio, page, n, off) != n) {
			bio = rs_mbio_alloc(op, m, opf, msector,
					    DIV_ROUND_UP(off + hint, PAGE_SIZE));
			if (!bio) {
				op->alloc_failed = true;
				return;
			}
			__bio_add_page(bio, page, n, off);
		}
		msector += n >> SECTOR_SHIFT;
		len -= n;
		hint -= n;
		off += n;
		if (off == PAGE_SIZE) {
			off = 0;
			pidx++;
		}
	}
	op->last[m] = bio;
}

static void rs_batch_build(struct rs_op *op)
{
	op->alloc_failed = false;
	op->failed = 0;
	atomic_set(&op->pending, 1);
	bio_list_init(&op->batch);
	memset(op->last, 0, sizeof(op->last));
	op->build(op);
}

/*
 * Submit the batch, the least busy member first. Submitting to a member
 * whose queue is full sleeps for a tag in this work item; in member order a
 * busy member would hold back the bios of the idle members behind it, which
 * turns the wait of a rebuilt read or reconstruct-write into the sum of the
 * members' waits instead of the longest one.
 */
static void rs_batch_submit(struct rs_op *op)
{
	struct rainssd *rs = op->rs;
	struct bio *bio, *best, *prev, *best_prev;
	struct rs_mbio *mb;
	unsigned int q, best_q;

	while (!bio_list_empty(&op->batch)) {
		best = NULL;
		best_prev = NULL;
		best_q = UINT_MAX;
		prev = NULL;
		for (bio = op->batch.head; bio; prev = bio, bio = bio->bi_next) {
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
			op->batch.head = best->bi_next;
		if (op->batch.tail == best)
			op->batch.tail = best_prev;
		best->bi_next = NULL;
		mb = container_of(best, struct rs_mbio, bio);
		rs_load_issue(&rs->load, mb->member, op_is_write(bio_op(best)), bio_sectors(best),
			      &mb->tag);
		submit_bio_noacct(best);
	}
	if (atomic_dec_and_test(&op->pending)) {
		op->t_done = ktime_get_ns();
		rs_batch_done(op);
	}
}

/* The emergency bioset is op's now: build the step from it and submit. */
static void rs_batch_emergency(struct rs_op *op)
{
	op->emergency = true;
	rs_stat_inc(op->rs, RS_STAT_EMERGENCY);
	rs_batch_build(op);
	rs_batch_submit(op);
}

static void rs_emergency_put(struct rs_oplayer *ol)
{
	struct rs_op *next = NULL;

	spin_lock(&ol->emergency_lock);
	if (list_empty(&ol->emergency_waiters)) {
		ol->emergency_busy = false;
	} else {
		next = list_first_entry(&ol->emergency_waiters, struct rs_op, wait);
		list_del(&next->wait);
	}
	spin_unlock(&ol->emergency_lock);
	if (next)
		rs_op_queue(next, rs_batch_emergency);
}

/* Every bio of the step is back (so the emergency set is whole again). */
static void rs_batch_done(struct rs_op *op)
{
	if (op->emergency) {
		op->emergency = false;
		rs_emergency_put(op->rs->ol);
	}
	op->next(op);
}

/*
 * Build one step's member bios with @build (which calls rs_batch_add()),
 * submit them and run @next in the workqueue when all have completed
 * (op->failed: the members whose bio failed). Process context, never sleeps
 * in an allocator.
 */
void rs_batch_run(struct rs_op *op, rs_op_fn build, rs_op_fn next)
{
	struct rs_oplayer *ol = op->rs->ol;
	struct bio *bio;

	op->build = build;
	op->next = next;
	rs_batch_build(op);
	if (likely(!op->alloc_failed))
		return rs_batch_submit(op);

	while ((bio = bio_list_pop(&op->batch))) {
		rs_mbio_uncount(ol, container_of(bio, struct rs_mbio, bio));
		bio_put(bio);
	}
	spin_lock(&ol->emergency_lock);
	if (ol->emergency_busy) {
		list_add_tail(&op->wait, &ol->emergency_waiters);
		spin_unlock(&ol->emergency_lock);
		return;		/* handed over by rs_emergency_put */
	}
	ol->emergency_busy = true;
	spin_unlock(&ol->emergency_lock);
	rs_batch_emergency(op);
}

/*
 * Count @op's member writes from here on: each is in the member's count
 * until it completes, and rs_batch_wait_counted() waits for them. The
 * caller checks, after this (a full barrier here), whatever makes a later
 * waiter want these writes (for raid5: the failed members), and ends the
 * window with rs_batch_count_end() once its step is built. A counted
 * write that fails takes its member down before its count drops
 * (rs_mbio_endio()).
 */
void rs_batch_count_begin(struct rs_op *op)
{
	atomic_inc(&op->rs->ol->counting);
	smp_mb__after_atomic();	/* count, then check: see rs_batch_wait_counted() */
	op->count_writes = true;
}

void rs_batch_count_end(struct rs_op *op)
{
	struct rs_oplayer *ol = op->rs->ol;

	op->count_writes = false;
	/* Fully ordered: its bios' counts before (see rs_batch_none_counted()). */
	if (!atomic_dec_and_test(&ol->counting))
		return;
	/* waitqueue_active() is safe: the atomic above was a full barrier. */
	if (waitqueue_active(&ol->counted_wait))
		wake_up_all(&ol->counted_wait);
}

static bool rs_batch_none_counted(struct rs_oplayer *ol, unsigned int n, unsigned long members)
{
	unsigned int m;

	/* Acquire: a window seen closed has its bios' counts seen below. */
	if (atomic_read_acquire(&ol->counting))
		return false;
	for_each_set_bit(m, &members, n)
		if (atomic_read(&ol->counted[m]))
			return false;
	return true;
}

/*
 * Wait until no step is building counted writes and none of the counted
 * writes to @members is in flight. Whatever the caller changed before
 * (a member failed) is seen by every step that begins counting after.
 * Sleeps; waits only for member I/O to complete.
 */
void rs_batch_wait_counted(struct rainssd *rs, unsigned long members)
{
	struct rs_oplayer *ol = rs->ol;

	smp_mb();	/* change, then read the counts: see rs_batch_count_begin() */
	wait_event(ol->counted_wait, rs_batch_none_counted(ol, rs->geom.n, members));
}

/* ---- setup ---- */

/* Module load: operation objects are @op_size bytes, struct rs_op first. May sleep. */
int rs_op_module_init(size_t op_size)
{
	rs_op_cache = kmem_cache_create("dm_rainssd_op", op_size, 0, 0, NULL);
	return rs_op_cache ? 0 : -ENOMEM;
}

void rs_op_module_exit(void)
{
	kmem_cache_destroy(rs_op_cache);
}

/*
 * Set up the layer for @rs; @feed hands a deferred bio to the target again,
 * false when it found no room. May sleep.
 */
int rs_op_init(struct rainssd *rs, bool (*feed)(struct rainssd *rs, struct bio *bio))
{
	struct rs_geom *g = &rs->geom;
	struct rs_oplayer *ol;
	unsigned int i;
	int r;

	ol = kzalloc(sizeof(*ol), GFP_KERNEL);
	if (!ol)
		return -ENOMEM;
	rs->ol = ol;
	ol->rs = rs;
	ol->feed = feed;
	ol->max_pages = rs_op_max_pages(g, rs->tier);
	spin_lock_init(&ol->cache_lock);
	spin_lock_init(&ol->join_lock);
	for (i = 0; i < ARRAY_SIZE(ol->join); i++)
		INIT_HLIST_HEAD(&ol->join[i]);
	spin_lock_init(&ol->pool_lock);
	INIT_LIST_HEAD(&ol->pool);
	spin_lock_init(&ol->reserve_lock);
	INIT_LIST_HEAD(&ol->reserve_waiters);
	spin_lock_init(&ol->emergency_lock);
	INIT_LIST_HEAD(&ol->emergency_waiters);
	init_waitqueue_head(&ol->counted_wait);
	spin_lock_init(&ol->defer_lock);
	bio_list_init(&ol->deferred);
	atomic_set(&ol->nr_deferred, 0);
	INIT_WORK(&ol->feed_work, rs_feed_work);

	ol->locks = kvcalloc(1U << RS_LOCK_BUCKETS_SHIFT, sizeof(*ol->locks), GFP_KERNEL);
	if (!ol->locks)
		goto nomem;
	for (i = 0; i < (1U << RS_LOCK_BUCKETS_SHIFT); i++) {
		spin_lock_init(&ol->locks[i].lock);
		INIT_HLIST_HEAD(&ol->locks[i].head);
	}

	r = mempool_init_slab_pool(&ol->op_pool, RS_OP_POOL_MIN, rs_op_cache);
	if (r)
		goto bad;

	ol->reserve = kvcalloc(ol->max_pages, sizeof(*ol->reserve), GFP_KERNEL);
	if (!ol->reserve)
		goto nomem;
	for (i = 0; i < ol->max_pages; i++) {
		ol->reserve[i] = alloc_page(GFP_KERNEL);
		if (!ol->reserve[i])
			goto nomem;
	}

	/*
	 * A step has, per member, at most two ranges at each end stripe and
	 * one contiguous range over the rest (a user write), or one range per
	 * stripe in all (a resync writing parity), each split every
	 * BIO_MAX_VECS pages.
	 */
	ol->emergency_bios = 5 * g->n + RS_OP_MAX_STRIPES +
			     DIV_ROUND_UP(ol->max_pages, BIO_MAX_VECS);
	/* With a tier: each stripe's chunks to (or from) their two copies, one range each. */
	if (rs->tier)
		ol->emergency_bios += 2 * (g->n - 1) * RS_OP_MAX_STRIPES;
	r = bioset_init(&ol->bs, g->n, offsetof(struct rs_mbio, bio), BIOSET_NEED_BVECS);
	if (r)
		goto bad;
	r = bioset_init(&ol->bs_emergency, ol->emergency_bios, offsetof(struct rs_mbio, bio),
			BIOSET_NEED_BVECS);
	if (r)
		goto bad;
	return 0;
nomem:
	r = -ENOMEM;
bad:
	rs_op_exit(rs);
	return r;
}

/* Safe on a partly set-up layer; no operation may be in flight. */
void rs_op_exit(struct rainssd *rs)
{
	struct rs_oplayer *ol = rs->ol;

	if (!ol)
		return;
	cancel_work_sync(&ol->feed_work);
	WARN_ON_ONCE(!bio_list_empty(&ol->deferred));
	bioset_exit(&ol->bs_emergency);
	bioset_exit(&ol->bs);
	if (ol->reserve) {
		rs_free_pages(ol->reserve, ol->max_pages);
		kvfree(ol->reserve);
	}
	rs_pool_exit(ol);
	mempool_exit(&ol->op_pool);
	kvfree(ol->locks);
	kfree(ol);
	rs->ol = NULL;
}
