/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd internal header: the target's state and the index of its units.
 *
 * Units, one sentence each (every .h says which calls may block and which
 * run in interrupt context):
 *
 *   rainssd-target.c    dm glue: constructor and destructor, bio mapping,
 *                       end_io, suspend/resume, devices, I/O hints, module.
 *   rainssd-args.c      the table line's optional arguments and the
 *                       tunables, shared by the constructor, messages and
 *                       the table status (rs_parse_opt_args, rs_set_option,
 *                       rs_emit_table_opts).
 *   rainssd-status.c    counters, the status line and messages
 *                       (rs_stats_*, rs_status_info, rs_message).
 *   rainssd-geometry.c  md's left-symmetric layout (pure).
 *   rainssd-shape.c     which rows a write covers, and which rows each
 *                       parity method reads and writes (pure).
 *   rainssd-policy.c    the RMW/RCW and direct/rebuilt read decisions (pure).
 *   rainssd-load.c      per-member load signals (lock-free).
 *   rainssd-xor.c       xor_blocks() over any number of sources.
 *   rainssd-read.c      reads of several chunks served straight from the
 *                       members, one member bio per member range.
 *   rainssd-op.c        operations without a RAID level: the stripe cache,
 *                       buffers, the stripe-lock table, member-bio batches,
 *                       deferred bios (rainssd-op.h).
 *   rainssd-raid5.c     the RAID-5 state machine on top of it: writes
 *                       (plan, pre-read, compute, write, finish) and reads
 *                       rebuilt from the other members; with a tier, each
 *                       stripe's placement, the writes to mirror copies,
 *                       the offline migration's moves and the copies'
 *                       resync, rebuild and scrub (rainssd-raid5.h).
 *   rainssd-sb.c        the superblock's format and the activation
 *                       decisions (pure).
 *   rainssd-meta.c      member state and its superblocks: read at load,
 *                       committed at the first resume, on every change and
 *                       at suspend; the commit gate for writes.
 *   rainssd-sync.c      background resync and rebuild, throttled and
 *                       checkpointed.
 *   rainssd-bitmap.c    the write-intent bitmap: bits on disk before writes,
 *                       cleared lazily, dirty regions resynced after a crash.
 *   rainssd-log.c       the degraded-write log (partial parity), replayed
 *                       after a crash while a member is out.
 *   rainssd-fault.c     debugfs fault-injection points for the tests.
 *   rainssd-tier.c      the RAID1 tier's placement (HybRAID), layout,
 *                       record and table-block formats, mirror choice,
 *                       watermarks (pure).
 *   rainssd-tiermap.c   the tier's state: its mapping table in memory and on
 *                       disk, commits, the read epoch (rainssd-tiermap.h).
 *   rainssd-migrate.c   the tier's offline migration and flush_tier.
 *
 * Lock order (outermost first); none is held across a sleep or an I/O wait:
 *   stats_lock (mutex, status and messages only)
 *   the op layer's join lock (process context; a join grows the operation's
 *   buffers under it, taking the cache lock and the page pool's lock inside)
 *   a lock-table bucket lock, the op layer's cache lock and page pool lock,
 *   the reserve lock, the emergency-set lock, the sync lock, the
 *   migration's lock (spinlocks, process context, never nested in each
 *   other)
 *   the tier's lock (irq-safe; taken alone, or inside the stats_lock)
 *   defer_lock, the metadata lock (irq-safe spinlocks: end_io may defer a
 *   bio or fail a member)
 *
 * Contexts: the map function and end_io may run in any context that can
 * submit a bio (end_io also in interrupt context): they never sleep. Stripe
 * operations run in the target's workqueue (WQ_MEM_RECLAIM). Member bio
 * completions run in interrupt context and only count and queue work.
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
#include "rainssd-op.h"
#include "rainssd-policy.h"
#include "rainssd-shape.h"

#define DM_MSG_PREFIX "rainssd"
#define RS_VERSION_STR "1.11.23"

/* md's defaults: speed_limit_min and _max (KiB/s per member), max_corr_read_errors. */
#define RS_DEF_MIN_RECOVERY_RATE	1000
#define RS_DEF_MAX_RECOVERY_RATE	200000
#define RS_DEF_MAX_CORR_READ_ERRORS	20

/*
 * Counters shown by the status line, in status order; kept per CPU. The
 * first eight come before the policy name, those up to RS_STAT_PROBES after
 * the read policy; those up to RS_STAT_EMERGENCY (1.3.0) after the member
 * words; RS_STAT_JOINED (1.11.0) last of all.
 */
enum rs_stat {
	RS_STAT_READS,		/* user read bios (after splitting at chunks) */
	RS_STAT_WRITES,		/* user write bios */
	RS_STAT_FULL,		/* full-stripe writes: parity from new data only */
	RS_STAT_RMW,		/* read-modify-write parity updates */
	RS_STAT_RCW,		/* reconstruct-write parity updates */
	RS_STAT_DEGRADED,	/* stripe writes with a dead member */
	RS_STAT_PREREADS,	/* member reads issued for parity updates */
	RS_STAT_RECON_READS,	/* user reads served by XOR of the other members */
	RS_STAT_RMW_ADJUSTED,	/* adaptive chose RMW where count would do RCW */
	RS_STAT_RCW_ADJUSTED,	/* adaptive chose RCW where count would do RMW */
	RS_STAT_COLD,		/* adaptive decisions left to count: no estimates yet */
	RS_STAT_CHOSEN_RECON,	/* reads of live members rebuilt by the read policy */
	RS_STAT_PROBES,		/* reads sent direct to refresh a bypassed member */
	RS_STAT_OPS,		/* stripe operations run */
	RS_STAT_REPLANS,	/* operations planned again: members changed under them */
	RS_STAT_DEFERRED,	/* bios that waited for a free operation */
	RS_STAT_RESERVE,	/* operations that ran on the buffer reserve */
	RS_STAT_EMERGENCY,	/* steps whose bios came from the emergency bioset */
	RS_STAT_JOINED,		/* write pieces joined to a queued write (1.11.0: last) */
	RS_NR_STATS,
};

#define RS_NR_BASIC_STATS	(RS_STAT_RECON_READS + 1)
#define RS_NR_POLICY_STATS	(RS_STAT_PROBES + 1)
#define RS_NR_OP_STATS		(RS_STAT_EMERGENCY + 1)

/* Per-member counters, shown in each member's status word. */
enum rs_mstat {
	RS_MSTAT_PREREADS,	/* parity-update pre-reads it served */
	RS_MSTAT_RECON_READS,	/* reads it served to rebuild another member's data */
	RS_MSTAT_BYPASSED,	/* reads of its data rebuilt around it by the read policy */
	RS_MSTAT_STALLS,	/* stalls seen on it */
	RS_MSTAT_REPAIRED,	/* blocks that failed a read, rebuilt and written back */
	RS_NR_MSTATS,
};

struct rs_stats {
	u64 c[RS_NR_STATS];
	u64 m[RS_MAX_DEVS][RS_NR_MSTATS];
};

struct rs_oplayer;
struct rs_meta;
struct rs_sync;
struct rs_bitmap;
struct rs_log;
struct rs_tier;
struct rs_migrate;
struct rs_activation;

struct rainssd {
	struct dm_target *ti;
	struct rs_geom geom;
	struct dm_dev *dev[RS_MAX_DEVS];	/* NULL: missing ("-" in the table) */
	sector_t member_sectors;
	u64 stripes;			/* the volume's, from the superblocks */

	/* Decisions and tunables (rainssd-args.c). */
	enum rs_policy policy;
	enum rs_read_policy read_policy;
	struct rs_tunables tun;
	unsigned int stripe_cache;	/* entries: one page per member each */
	unsigned int rebuild_arg;	/* "rebuild <idx>", or RS_NO_MEMBER */
	bool nosync;			/* "nosync" */
	unsigned int min_recovery_rate;	/* KiB/s per member */
	unsigned int max_recovery_rate;
	unsigned int max_corr_read_errors;

	struct rs_load load;
	struct rs_load_snap __percpu *snap;	/* scratch for the decisions */

	/* Member state for the I/O path (rainssd-meta.c keeps it). */
	unsigned long dead_mask;	/* bit m: member m is failed or missing */
	unsigned int rebuild_member;	/* being rebuilt, or RS_NO_MEMBER */
	u64 rebuild_cp;			/* its stripes below this are good */
	u64 rebuild_cp_durable;		/* ... as the superblocks on disk say */
	u64 resync_cp;			/* stripes below this have parity made from data */
	/*
	 * The regions an unclean shutdown left dirty are covered by the
	 * degraded-write log from this stripe on (set at the first resume,
	 * U64_MAX: nowhere): below it they need every member's data to
	 * resync, and until then no chunk there is rebuilt from parity.
	 */
	u64 log_cover;
	atomic_t read_errors[RS_MAX_DEVS];	/* corrected read errors, per member */
	struct rs_meta *meta;
	struct rs_activation *act;	/* the table's view, until the first resume */
	struct rs_sync *sync;
	struct rs_bitmap *bitmap;
	struct rs_log *log;
	unsigned int region_size;	/* "region_size": a new volume's bitmap regions */
	bool region_size_given;		/* in the table, even at its default */
	struct rs_tier *tier;		/* the RAID1 tier, NULL when off */
	struct rs_migrate *tier_mig;	/* its offline migration */
	unsigned int tier_size;		/* "tier_size": a new volume's tier, per member */
	bool tier_size_given;
	unsigned int migration_threshold, home_threshold;
	unsigned int tier_high_pct, tier_low_pct;
	unsigned int migration_rate;	/* KiB/s per member */
	/* Serialises the messages that set a pair (min_/max_recovery_rate, tier_*_pct). */
	struct mutex opt_lock;

	struct rs_stats __percpu *stats;
	struct rs_stats *stats_base;	/* the sums at the last stats_reset */
	struct rs_stats *stats_sum;	/* scratch for the status line */
	struct mutex stats_lock;	/* protects stats_base and stats_sum */

	struct rs_oplayer *ol;		/* the operation layer's state (rainssd-op.c) */
	struct workqueue_struct *wq;	/* stripe operations, deferred bios, events */
	struct work_struct event_work;
	struct work_struct devstat_work;	/* reads the members' disk statistics */
	struct bio_set wide_bs;		/* member bios of wide reads (rainssd-read.c) */
};

/*
 * Per-bio data: one user bio. A stripe bio (a write, or a read rebuilt from
 * the other members) is cut into operations; @iter is what is left to hand
 * out and @pending counts the operations holding a piece of it, plus one
 * while it is being cut.
 */
enum rs_bio_kind {
	RS_BIO_DIRECT,		/* a read remapped to one member */
	RS_BIO_STRIPE,		/* served by stripe operations */
	RS_BIO_FLUSH,		/* one of the empty flushes, one per member */
	RS_BIO_WIDE,		/* a read of several chunks, straight from the members */
	RS_BIO_FLUSH_HELD,	/* a flush's share for a failed member, ended after a commit */
};

struct rs_bio {
	struct bvec_iter iter;		/* logical sectors (direct: as mapped) */
	atomic_t pending;
	blk_status_t status;		/* the first error of any piece */
	u8 kind;			/* enum rs_bio_kind */
	bool by_choice;			/* a live member's read rebuilt by the read policy */
	unsigned long bad;		/* members that failed its read: rebuild, write back */
	bool tier;			/* a read of rows in the tier: member is the copy's */
	u8 tier_epoch;			/* the tier read epoch it holds, or RS_NO_EPOCH */
	unsigned int member;		/* direct read, flush: the member */
	/* wide read: the member bios out (@pending), @bad those that failed */
	struct rs_load_tag tag;		/* direct read: for the load signals */
	/* a rebuilt read: when it was mapped, ns; a flush that failed its member: its commit */
	u64 t_map;
};

#define RS_NO_EPOCH	0xff

static inline struct rs_bio *rs_bio(struct bio *bio)
{
	return dm_per_bio_data(bio, sizeof(struct rs_bio));
}

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

/* rainssd-target.c */
bool rs_member_holds(struct rainssd *rs, unsigned int m, u64 stripe);
void rs_member_failed(struct rainssd *rs, unsigned int m, const char *why);
void rs_member_failed_report(struct rainssd *rs, unsigned int m, const char *why);
bool rs_read_error(struct rainssd *rs, unsigned int m);
bool rs_read_around(struct rainssd *rs, unsigned int m, bool *probe);
void rs_read_again(struct rainssd *rs, struct bio *bio, unsigned long bad);
void rs_bio_endio_piece(struct rainssd *rs, struct bio *bio, blk_status_t status);

/* rainssd-read.c: reads of several chunks (see there for the contexts) */
int rs_wide_init(struct rainssd *rs);
void rs_wide_exit(struct rainssd *rs);
bool rs_map_wide_read(struct rainssd *rs, struct rs_bio *rb, struct bio *bio);

/* rainssd-args.c */
int rs_parse_opt_args(struct rainssd *rs, struct dm_arg_set *as);
int rs_opt_index(const char *key);
int rs_set_option(struct rainssd *rs, int opt, const char *val, bool in_table, char **error);
void rs_emit_table_opts(struct rainssd *rs, char *result, unsigned int maxlen,
			unsigned int *sz);
void rs_args_default(struct rainssd *rs);
int rs_args_tier(struct rainssd *rs, char **error);

/* rainssd-status.c */
int rs_stats_init(struct rainssd *rs);
void rs_stats_exit(struct rainssd *rs);
void rs_status_info(struct rainssd *rs, char *result, unsigned int maxlen);
int rs_message(struct dm_target *ti, unsigned int argc, char **argv,
	       char *result, unsigned int maxlen);

/* rainssd-op.c: the stripe cache's use, for the status line */
void rs_op_cache_usage(struct rainssd *rs, unsigned int *used, unsigned int *peak);
void rs_op_cache_reset_peak(struct rainssd *rs);

#endif
