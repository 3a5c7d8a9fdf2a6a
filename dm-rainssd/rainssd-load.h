/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd member load signals.
 *
 * For every member the I/O engine records, at each request it issues and at
 * each completion, what the adaptive policies need (rainssd-policy.h):
 *
 *  - reads and writes in flight that the target issued (R_i, W_i);
 *  - the others' load on the member's device (F_i, another user of the same
 *    disk): every RS_DEVSTAT_PERIOD_NS at most, the I/O path asks the
 *    target (rs_load_set_devstat()'s kick) to run rs_load_devstat_read(),
 *    which reads each disk's I/O statistics once (a disk that holds
 *    several members, as partitions, is compared with all of theirs) and
 *    compares them with the target's own completions on it, data and
 *    metadata (rs_load_own_io()) (rs_foreign_estimate()): the others'
 *    requests on it on average, averaged again over about
 *    RS_FOREIGN_WEIGHT readings, and their completion rate. Below
 *    RS_FOREIGN_MIN requests it counts as none. Users that reach the
 *    device through another device (a dm or md device stacked on it,
 *    another namespace of the same SSD) are not in its statistics;
 *  - a per-request service time for reads and for writes (t_R, t_W): an
 *    exponentially weighted average over about ewma_weight completions of
 *    latency / (1 + requests in flight on the member when it was issued:
 *    the target's, and the others' F_i). Load the statistics do not show
 *    (a user they cannot see, a slower device) lengthens the latency without
 *    adding to the queue, so it shows up here. While the target reads
 *    nothing from a member that others keep busy, the device's own
 *    per-request time (rs_foreign_estimate()) stands in for its reads;
 *  - the arrival rate f_i over the last freq_window requests (and the
 *    others' completion rate, from their statistics);
 *  - stalls (the papers' T_GC, which the target cannot see directly): a
 *    member with requests in flight and no completion for stall_factor
 *    service times is stalled; its expected remaining stall is the average
 *    of the stalls seen before minus the time already stalled, or the time
 *    already stalled when that is longer;
 *  - for the whole target, what a read rebuilt by the read policy costs
 *    beyond its member reads (the papers' t_xor): the time from the map to
 *    the submission of its member reads (stripe lock, work item, buffers)
 *    plus the time from the last of them to its end (work item, XOR, copy),
 *    averaged like the service times. A measure older than ten probe_ms
 *    counts as none (the policy falls back to xor_ns), and the next sample
 *    starts the average again: one slow rebuild must not stop the policy
 *    from ever rebuilding, and so from ever measuring, again.
 *
 * Everything is lock-free: atomics only, updated without a lock. Two CPUs
 * updating an average at the same moment may lose one sample, which the
 * averages tolerate. The statistics are read by one caller at a time (the
 * stat_busy bit, taken in rs_load_issue() and let go at the end of
 * rs_load_devstat_read()).
 *
 * Contexts: rs_load_issue, rs_load_done, rs_load_own_io, rs_load_rebuilt,
 * rs_load_rebuild_measured and rs_load_snapshot never sleep and may run in
 * any context (all but the first in interrupt context too; rs_load_issue
 * wherever a bio may be submitted). rs_load_devstat_read runs in process
 * context (the target's work item) and does not sleep. rs_load_init/exit
 * and the setters are for the constructor and destructor.
 */
#ifndef RAINSSD_LOAD_H
#define RAINSSD_LOAD_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/time64.h>
#include <linux/types.h>

#include "rainssd-policy.h"

/*
 * Queue lengths handed to the policy are clamped so that its costs fit in
 * u64: 2^32 ns * 2^14 requests * 2^16 sectors of pre-reads < 2^64.
 */
#define RS_SNAP_MAX_QUEUE	16383U

/*
 * A measured rebuild cost older than this many probe_ms is not taken: long
 * enough that re-measuring a rebuild that really costs more than it saves
 * wastes at most one read's gain a second (at the default 100 ms), short
 * enough that one slow rebuild is forgotten within the second.
 */
#define RS_REBUILD_STALE_PROBES	10U

/* How often at most the members' device statistics are read. */
#define RS_DEVSTAT_PERIOD_NS	(4 * NSEC_PER_MSEC)
/* The others' load is averaged over about this many readings. */
#define RS_FOREIGN_WEIGHT	8
/* Less than a quarter of a request of others' load counts as none. */
#define RS_FOREIGN_MIN		(RS_OCC_ONE / 4)
/* Readings further apart than this start the averages again. */
#define RS_DEVSTAT_STALE_NS	NSEC_PER_SEC

/* The running totals of a device's I/O statistics (rs_devstat_fn). */
struct rs_devcount {
	u64 ios;		/* reads, writes and discards completed, everyone's */
	u64 sectors;		/* their sectors */
	u64 ns;			/* their summed latency */
};

/*
 * Reads the I/O statistics of the device of member @member into @c. False
 * when there are none to read. Called by rs_load_devstat_read() only.
 */
typedef bool (*rs_devstat_fn)(void *ctx, unsigned int member, struct rs_devcount *c);
/*
 * Asks for rs_load_devstat_read() to run soon, in process context; called
 * from rs_load_issue(), in whatever context that runs, never twice before
 * rs_load_devstat_read() has run.
 */
typedef void (*rs_devstat_kick_fn)(void *ctx);

/* What is remembered of one issued request until it completes. */
struct rs_load_tag {
	u64 start;		/* ns */
	u32 ahead;		/* requests in flight on the member at issue */
	u32 sectors;
	bool write;
};

struct rs_member_load {
	atomic_t inflight[2];		/* [0] reads, [1] writes, issued by the target */
	atomic_t samples[2];		/* completions seen (saturates) */
	atomic64_t svc[2];		/* service time estimates, ns */
	atomic64_t progress;		/* last completion, or issue onto an idle member */
	atomic64_t last_read;		/* last read issued */
	atomic64_t stall_avg;		/* average stall seen, ns */
	atomic64_t stall_end;		/* when the last stall ended */
	atomic_t arrivals;		/* requests issued */
	atomic64_t win_start;		/* when the current rate window began */
	atomic64_t win_len;		/* length of the last full window, ns */
	atomic64_t own_ios;		/* the target's completions on it, data and metadata */
	atomic64_t own_sectors;		/* ... their sectors */
	atomic64_t reads_done;		/* the target's read completions (never saturates) */
	atomic_t foreign;		/* the others' occupancy, << RS_OCC_SHIFT */
	atomic_t foreign_rate;		/* their completions per second */
	atomic64_t foreign_seen;	/* when a reading last showed their I/O */
	/* Only rs_load_devstat_read() (rs_load.stat_busy held) uses these. */
	unsigned int disk;		/* the first member on the same disk */
	struct rs_devstat stat_prev;
	s64 stat_base;			/* highest device-less-own sectors seen */
	bool stat_ok;			/* stat_prev holds a reading */
	u64 stat_reads;			/* reads_done at that reading */
} ____cacheline_aligned_in_smp;

struct rs_load {
	unsigned int n;
	const struct rs_tunables *tun;
	struct rs_member_load *m;
	atomic64_t rebuild_ns;		/* t_xor measured: a rebuilt read's own cost */
	atomic_t rebuild_samples;
	atomic64_t rebuild_last;	/* when the last sample was taken, ns */
	rs_devstat_fn devstat;		/* NULL: the others' load is not read */
	rs_devstat_kick_fn devstat_kick;
	void *devstat_ctx;
	/* Apart from the counters the I/O path writes at every request. */
	atomic64_t stat_next ____cacheline_aligned_in_smp;	/* when next read */
	unsigned long stat_busy;	/* bit 0: a reading is asked for or running */
};

/* Requests the target has in flight on @member, reads and writes. */
static inline unsigned int rs_load_queued(struct rs_load *l, unsigned int member)
{
	return atomic_read(&l->m[member].inflight[0]) + atomic_read(&l->m[member].inflight[1]);
}

int rs_load_init(struct rs_load *l, unsigned int n, const struct rs_tunables *tun);
void rs_load_exit(struct rs_load *l);
void rs_load_set_devstat(struct rs_load *l, rs_devstat_fn fn, rs_devstat_kick_fn kick,
			 void *ctx);
void rs_load_set_disk(struct rs_load *l, unsigned int member, unsigned int first);
void rs_load_devstat_read(struct rs_load *l);
void rs_load_own_io(struct rs_load *l, unsigned int member, unsigned int sectors);
void rs_load_issue(struct rs_load *l, unsigned int member, bool write, unsigned int sectors,
		   struct rs_load_tag *tag);
bool rs_load_done(struct rs_load *l, unsigned int member, const struct rs_load_tag *tag);
void rs_load_rebuilt(struct rs_load *l, u64 ns);
u32 rs_load_rebuild_measured(struct rs_load *l);
void rs_load_snapshot(struct rs_load *l, unsigned long dead_mask, struct rs_load_snap *snap);

#endif
