/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd operation layer: stripe operations that know no RAID level.
 *
 * An operation (struct rs_op, embedded first in its user's object) covers the
 * adjacent stripes [stripe, stripe + nr) and may carry a piece of a user bio
 * (op->bio, op->iter: the logical sectors it serves) or none (rebuild,
 * resync, scrub, migration). The layer gives it, in this order:
 *
 *  1. the operation object and its stripe-cache entries (rs_op_get): the
 *     cap on what is in flight, md's stripe_cache_size; one entry is one
 *     page per member. Never blocks: NULL when there is no room, and the
 *     caller defers its bio (rs_defer_bio), to be fed again in order when an
 *     operation ends. A background operation (resync, rebuild, scrub,
 *     migration) takes its entries beyond the cap and user operations keep
 *     the whole cap, so neither starves the other;
 *  2. its buffer pages (rs_op_start): from the volume's pool of pages that
 *     operations gave back (at most stripe_cache x n), then the page
 *     allocator without waiting, else the target's reserve, which one
 *     operation owns at a time and which is large enough for any operation;
 *  3. its stripes, locked in ascending order (so two operations never wait
 *     for each other); a waiter is queued FIFO behind the owner of the
 *     stripe it needs, and the lock is handed to it on release;
 *  4. then it runs op->resume in the target's workqueue.
 *
 * Resources are taken only in that order and an operation that waits holds
 * only what comes before, so nothing waits in a cycle; nothing sleeps in an
 * allocator while it holds a stripe (pages are taken before the stripes).
 *
 * Joining (rs_op_join): an operation its user marked joinable with a key
 * (rs_op_set_joinable: for a RAID-5 write, the logical sector where it ends)
 * can be found by that key, from when it is started until it has its
 * stripes (except while it takes its buffers), and given more work: more
 * stripes after its last, more buffer pages and entries (rs_op_grow, without
 * waiting). This is how writes queued behind a busy stripe are served
 * together, as md's stripe cache does. It leaves the table when it has its
 * stripes, so one that runs never changes.
 *
 * Member I/O goes in batches (rs_batch_run): the step's bios are built by a
 * callback that calls rs_batch_add() for each member range (adjacent ranges
 * of one member merge into one bio), submitted least busy member first, and
 * @next runs in the workqueue when all have completed, with op->failed
 * naming the members whose bio failed. The bios come from the target's
 * bioset without waiting; when that fails, the step gives them back and
 * waits (FIFO, no thread blocked) for the emergency bioset, which one step
 * at a time owns until its bios are back and whose reserve covers any step.
 *
 * A step may count its member writes (rs_batch_count_begin/end around its
 * build): rs_batch_wait_counted() waits until no step is building counted
 * writes and those to the given members are back (a superblock commit that
 * says a member failed waits so for the writes of updates planned before).
 * The member of a counted write that fails is failed (rs_member_failed())
 * before the write's count drops, so that such a commit sees the failure
 * once it has waited.
 *
 * Context: rs_op_get, rs_op_join, rs_defer_bio and rs_feed_kick may be called
 * in any process context without sleeping (rs_defer_bio also in interrupt
 * context); rs_op_grow only from rs_op_join's callback;
 * everything else runs in process context (the workqueue or the map
 * function) and never sleeps, except rs_op_exit and rs_batch_wait_counted.
 * Member bio completion runs in interrupt context and only queues work,
 * fails the member of a failed counted write, and wakes
 * rs_batch_wait_counted().
 */
#ifndef RAINSSD_OP_H
#define RAINSSD_OP_H

#include <linux/bio.h>
#include <linux/blk_types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "rainssd-geometry.h"
#include "rainssd-load.h"

struct rainssd;
struct rs_op;

/* The most stripes one operation covers. */
#define RS_OP_MAX_STRIPES	16
/* The most pieces of user bios joined to one operation's own (rs_op_join). */
#define RS_OP_MAX_MORE		15
/* Operations may use at least this many buffer pages (1 MiB), and a full stripe. */
#define RS_OP_MIN_PAGES		256
/* md's default stripe_cache_size; ours is at least twice what one operation takes. */
#define RS_DEF_STRIPE_CACHE	256
#define RS_MAX_STRIPE_CACHE	32768

typedef void (*rs_op_fn)(struct rs_op *op);

/* A piece of a user bio: the logical sectors of it an operation serves. */
struct rs_piece {
	struct bio *bio;
	struct bvec_iter iter;
};

/* One stripe of an operation in the lock table. */
struct rs_stripe_lock {
	struct hlist_node node;		/* in its bucket while its op owns the stripe */
	struct list_head waiters;	/* owner: the locks waiting for the stripe, FIFO */
	struct list_head wait;		/* waiter: in the owner's waiters */
	struct rs_op *op;
	u64 stripe;
};

struct rs_op {
	struct rainssd *rs;
	struct work_struct work;
	rs_op_fn resume;		/* what the work item runs next */
	rs_op_fn run;			/* what runs once the stripes are ours */
	rs_op_fn build;			/* builds the current step's member bios */
	rs_op_fn next;			/* runs when the current step's bios are done */
	/* In the reserve's, the emergency set's or a metadata commit's waiters. */
	struct list_head wait;
	u64 token;			/* what a metadata commit waiter waits for */

	/* The stripes [stripe, stripe + nr); the first nr_locked are ours. */
	u64 stripe;
	unsigned int nr;
	unsigned int nr_locked;
	struct rs_stripe_lock lk[RS_OP_MAX_STRIPES];

	/* The user bio and the logical sectors of it this operation serves, or NULL. */
	struct bio *bio;
	struct bvec_iter iter;
	/* Pieces of other bios joined to it, each following the one before. */
	unsigned int nr_more;
	struct rs_piece more[RS_OP_MAX_MORE];

	/* Joining: in the join table by join_key while it waits for a stripe. */
	struct hlist_node join_node;
	u64 join_key;
	bool joinable;
	bool acquired;			/* rs_op_acquire() ran: its pages are counted out */

	/* Buffers. */
	unsigned int units;		/* stripe-cache entries held */
	bool background;		/* its entries are beyond the cap (rs_op_get) */
	unsigned int nr_pages;
	struct page **pages;
	bool on_reserve;

	/* The member bios of the current step. */
	atomic_t pending;
	struct bio_list batch;
	struct bio *last[RS_MAX_DEVS];	/* each member's last bio in the batch */
	u64 t_done;			/* when the step's last bio completed, ns */
	bool emergency;			/* this step owns the emergency bioset */
	bool alloc_failed;
	bool count_writes;		/* its member writes are counted (rs_batch_count_begin) */
	unsigned long failed;		/* members whose bio of this step failed */
};

/* rainssd-op.c */
int rs_op_module_init(size_t op_size);
void rs_op_module_exit(void);
int rs_op_init(struct rainssd *rs, bool (*feed)(struct rainssd *rs, struct bio *bio));
void rs_op_exit(struct rainssd *rs);
unsigned int rs_op_max_pages(const struct rs_geom *g, bool tier);
unsigned int rs_op_migrate_pages(const struct rs_geom *g);
unsigned int rs_stripe_cache_min(const struct rs_geom *g, bool tier);
struct rs_op *rs_op_get(struct rainssd *rs, unsigned int units, bool background);
void rs_op_start(struct rs_op *op, unsigned int nr_pages, rs_op_fn resume);
void rs_op_queue(struct rs_op *op, rs_op_fn fn);
void rs_op_put(struct rs_op *op);
void rs_op_set_joinable(struct rs_op *op, u64 key);
bool rs_op_join(struct rainssd *rs, u64 key, bool (*fn)(struct rs_op *op, void *data),
		void *data);
bool rs_op_grow(struct rs_op *op, unsigned int nr, unsigned int nr_pages, unsigned int units);
void rs_defer_bio(struct rainssd *rs, struct bio *bio);
bool rs_defer_pending(struct rainssd *rs);
void rs_feed_kick(struct rainssd *rs);

/*
 * The flags of the member writes made for user write @bio (NULL: none, as
 * for rebuild, resync and migration): its FUA, and the hints the block
 * layer acts on. REQ_SYNC | REQ_IDLE marks an O_DIRECT write, which
 * writeback throttling (blk-wbt) lets through; without REQ_IDLE, wbt on a
 * member whose latency passes its target (2 ms on non-rotational devices)
 * held the writes of every operation to one or two in flight, and the
 * workers submitting them slept. PREFLUSH is served apart.
 */
static inline blk_opf_t rs_user_write_opf(const struct bio *bio)
{
	const blk_opf_t keep = REQ_FUA | REQ_SYNC | REQ_IDLE | REQ_META | REQ_PRIO;

	return REQ_OP_WRITE | (bio ? bio->bi_opf & keep : 0);
}

void rs_batch_run(struct rs_op *op, rs_op_fn build, rs_op_fn next);
void rs_batch_count_begin(struct rs_op *op);
void rs_batch_count_end(struct rs_op *op);
void rs_batch_wait_counted(struct rainssd *rs, unsigned long members);
void rs_batch_add(struct rs_op *op, unsigned int m, blk_opf_t opf, sector_t msector,
		  unsigned int pidx, unsigned int off, unsigned int len, unsigned int hint);

#endif
