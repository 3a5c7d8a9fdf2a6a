/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd: the target's state, shared by the dm glue (rainssd-target.c)
 * and the stripe I/O engine (rainssd-io.c).
 */
#ifndef RAINSSD_H
#define RAINSSD_H

#include <linux/bio.h>
#include <linux/blk_types.h>
#include <linux/device-mapper.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "rainssd-compat.h"
#include "rainssd-geometry.h"
#include "rainssd-load.h"
#include "rainssd-policy.h"

#define DM_MSG_PREFIX "rainssd"

#define RS_LOCK_BUCKETS_SHIFT	10

/*
 * Counters shown by the status line, in status order; kept per CPU. The
 * first eight come before the policy name, the rest after the read policy.
 */
enum rs_stat {
	RS_STAT_READS,		/* user read bios (after splitting at chunks) */
	RS_STAT_WRITES,		/* user write bios (after splitting at stripes) */
	RS_STAT_FULL,		/* full-stripe writes: parity from new data only */
	RS_STAT_RMW,		/* read-modify-write parity updates */
	RS_STAT_RCW,		/* reconstruct-write parity updates */
	RS_STAT_DEGRADED,	/* writes to a stripe with a dead member */
	RS_STAT_PREREADS,	/* member reads issued for parity updates */
	RS_STAT_RECON_READS,	/* user reads served by XOR of the other members */
	RS_STAT_RMW_ADJUSTED,	/* adaptive chose RMW where count would do RCW */
	RS_STAT_RCW_ADJUSTED,	/* adaptive chose RCW where count would do RMW */
	RS_STAT_COLD,		/* adaptive decisions left to count: no estimates yet */
	RS_STAT_CHOSEN_RECON,	/* reads of live members rebuilt by the read policy */
	RS_STAT_PROBES,		/* reads sent direct to refresh a bypassed member */
	RS_NR_STATS,
};

#define RS_NR_BASIC_STATS	(RS_STAT_RECON_READS + 1)

/* Per-member counters, shown in each member's status word. */
enum rs_mstat {
	RS_MSTAT_PREREADS,	/* parity-update pre-reads it served */
	RS_MSTAT_RECON_READS,	/* reads it served to rebuild another member's data */
	RS_MSTAT_BYPASSED,	/* reads of its data rebuilt around it by the read policy */
	RS_MSTAT_STALLS,	/* stalls seen on it */
	RS_NR_MSTATS,
};

struct rs_stats {
	u64 c[RS_NR_STATS];
	u64 m[RS_MAX_DEVS][RS_NR_MSTATS];
};

struct rs_lock_bucket {
	spinlock_t lock;		/* protects head */
	struct hlist_head head;
};

/* A stripe-sized buffer set used by the stripe operations when memory is short. */
struct rs_reserve {
	spinlock_t lock;		/* protects busy and waiters */
	bool busy;
	struct list_head waiters;
	struct page **pages;
};

struct rainssd {
	struct dm_target *ti;
	struct rs_geom geom;
	struct dm_dev *dev[RS_MAX_DEVS];
	sector_t member_sectors;

	enum rs_policy policy;
	enum rs_read_policy read_policy;
	struct rs_tunables tun;
	struct rs_load load;
	struct rs_load_snap __percpu *snap;	/* scratch for the decisions */

	unsigned long dead_mask;	/* bit m: member m is dead */

	struct rs_stats __percpu *stats;
	struct rs_stats *stats_base;	/* the sums at the last stats_reset */
	struct rs_stats *stats_sum;	/* scratch for the status line */
	struct mutex stats_lock;	/* protects stats_base and stats_sum */
	struct rs_lock_bucket *locks;
	struct rs_reserve reserve;
	unsigned int pages_per_member;	/* pages per member in a full-chunk buffer */

	struct bio_set bs;
	struct mutex alloc_lock;	/* one step at a time may block for member bios */
	struct workqueue_struct *wq;
	struct work_struct event_work;
};

/* What a user bio is doing; kept in its per-bio data. */
enum rs_io_kind {
	RS_IO_DIRECT_READ,	/* remapped to one member */
	RS_IO_RECON_READ,	/* rebuilt from the other members of the stripe */
	RS_IO_WRITE,		/* a stripe write */
	RS_IO_FLUSH,		/* one of the empty flushes, one per member */
};

/* Per-bio data: one user bio and, for stripe operations, their state. */
struct rs_io {
	struct rainssd *rs;
	struct bio *bio;
	enum rs_io_kind kind;
	unsigned int member;		/* direct read / flush: the member */
	struct bvec_iter iter;		/* the bio's logical iterator, as mapped */
	struct rs_load_tag tag;		/* direct read: for the member's load signals */
	bool by_choice;			/* a live member's read rebuilt by the read policy */
	u64 t_map;			/* rebuilt read: mapped, ns */
	u64 t_issue;			/* rebuilt read: its member reads submitted */
	u64 t_done;			/* rebuilt read: the last of them completed */

	/* Stripe operations only. */
	u64 stripe;
	struct hlist_node hnode;	/* in the lock bucket while owning the stripe */
	struct list_head waiters;	/* operations queued behind this owner */
	struct list_head wait_entry;	/* in the owner's or the reserve's waiters */
	struct work_struct work;
	void (*next)(struct rs_io *io);	/* what the work item runs */
	atomic_t pending;
	struct bio_list batch;		/* member bios built, not yet submitted */
	gfp_t gfp;			/* how the batch's bios are allocated */
	bool alloc_failed;		/* a non-blocking allocation failed: build again */
	bool reread;			/* a pre-read failed: plan again */
	bool recon_direct;		/* rebuilt read served from its own member */
	enum rs_why why;		/* why io->mode (adaptive statistics) */
	enum rs_write_mode count_mode;	/* what count would have chosen */
	bool from_reserve;
	blk_status_t status;
	enum rs_write_mode mode;
	struct rs_stripe_shape shape;
	struct page **pages;		/* n * npages buffer pages */
	unsigned int npages;		/* pages per member for shape.rows */
};

static inline void rs_stat_inc(struct rainssd *rs, enum rs_stat st)
{
	this_cpu_inc(rs->stats->c[st]);
}

static inline void rs_mstat_inc(struct rainssd *rs, unsigned int m, enum rs_mstat st)
{
	this_cpu_inc(rs->stats->m[m][st]);
}

static inline unsigned int rs_dead_count(struct rainssd *rs)
{
	return hweight_long(READ_ONCE(rs->dead_mask));
}

static inline bool rs_member_dead(struct rainssd *rs, unsigned int m)
{
	return test_bit(m, &rs->dead_mask);
}

/* rainssd-io.c */
int rs_io_init(struct rainssd *rs);
void rs_io_exit(struct rainssd *rs);
void rs_member_failed(struct rainssd *rs, unsigned int m);
void rs_submit_stripe_io(struct rs_io *io);
void rs_fault_init(void);
void rs_fault_exit(void);

#endif
