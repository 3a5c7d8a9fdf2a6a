/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd member load signals.
 *
 * For every member the I/O engine records, at each request it issues and at
 * each completion, what the adaptive policies need (rainssd-policy.h):
 *
 *  - reads and writes in flight that the target issued (R_i, W_i);
 *  - a per-request service time for reads and for writes (t_R, t_W): an
 *    exponentially weighted average over about ewma_weight completions of
 *    latency / (1 + requests the target had in flight on the member when it
 *    was issued). Load the target did not cause (another user of the member,
 *    a slower device) lengthens the latency without adding to the target's
 *    queue, so it shows up here;
 *  - the arrival rate f_i over the last freq_window requests;
 *  - stalls (the papers' T_GC, which the target cannot see directly): a
 *    member with requests in flight and no completion for stall_factor
 *    service times is stalled; its expected remaining stall is the average
 *    of the stalls seen before minus the time already stalled, or the time
 *    already stalled when that is longer;
 *  - for the whole target, what a read rebuilt by the read policy costs
 *    beyond its member reads (the papers' t_xor): the time from the map to
 *    the submission of its member reads (stripe lock, work item, buffers)
 *    plus the time from the last of them to its end (work item, XOR, copy),
 *    averaged like the service times.
 *
 * Everything is lock-free: atomics only, updated without a lock. Two CPUs
 * updating an average at the same moment may lose one sample, which the
 * averages tolerate.
 */
#ifndef RAINSSD_LOAD_H
#define RAINSSD_LOAD_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/types.h>

#include "rainssd-policy.h"

/*
 * Queue lengths handed to the policy are clamped so that its costs fit in
 * u64: 2^32 ns * 2^14 requests * 2^16 sectors of pre-reads < 2^64.
 */
#define RS_SNAP_MAX_QUEUE	16383U

/* What is remembered of one issued request until it completes. */
struct rs_load_tag {
	u64 start;		/* ns */
	u32 ahead;		/* target requests in flight on the member at issue */
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
} ____cacheline_aligned_in_smp;

struct rs_load {
	unsigned int n;
	const struct rs_tunables *tun;
	struct rs_member_load *m;
	atomic64_t rebuild_ns;		/* t_xor measured: a rebuilt read's own cost */
	atomic_t rebuild_samples;
};

/* Requests the target has in flight on @member, reads and writes. */
static inline unsigned int rs_load_queued(struct rs_load *l, unsigned int member)
{
	return atomic_read(&l->m[member].inflight[0]) + atomic_read(&l->m[member].inflight[1]);
}

int rs_load_init(struct rs_load *l, unsigned int n, const struct rs_tunables *tun);
void rs_load_exit(struct rs_load *l);
void rs_load_issue(struct rs_load *l, unsigned int member, bool write,
		   struct rs_load_tag *tag);
bool rs_load_done(struct rs_load *l, unsigned int member, const struct rs_load_tag *tag);
void rs_load_rebuilt(struct rs_load *l, u64 ns);
void rs_load_snapshot(struct rs_load *l, unsigned long dead_mask, struct rs_load_snap *snap);

#endif
