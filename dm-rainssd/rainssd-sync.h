/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd background synchronisation: the initial resync (parity made
 * from the data, stripe by stripe) and the rebuild of a replaced member
 * (its chunks made from the others), each an operation without a user bio
 * of up to rs_r5_max_stripes() stripes at a time, checkpointed in the
 * superblocks, between min_recovery_rate and max_recovery_rate (KiB/s per
 * member) and yielding to user I/O above the minimum.
 *
 * Handle: struct rs_sync (opaque). rs_sync_create and rs_sync_destroy are
 * for the constructor and destructor; rs_sync_start (resume, and
 * presuspend_undo) and rs_sync_stop (presuspend: waits for the operation
 * in flight) may sleep;
 * rs_sync_status and rs_sync_message never sleep. Online scrub (check,
 * repair) runs on the same machinery, after any resync or rebuild.
 */
#ifndef RAINSSD_SYNC_H
#define RAINSSD_SYNC_H

#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/types.h>

struct rainssd;
struct rs_sync;

/* A pause to let user I/O by, when the rate is above the minimum. */
#define RS_SYNC_YIELD_MS	2

/* A background job's rate window (rs_rate_delay). */
struct rs_rate {
	u64 win_start;			/* when the window began, ns */
	u64 win_sectors;		/* sectors per member moved in it */
	u64 user_ios;			/* user bios counted at the last step */
};

/*
 * How many jiffies a background job that moved @kib KiB per member in the
 * @elapsed_ns of its rate window waits before its next step: what keeps it
 * at @max KiB/s (0: no limit); else, while user I/O goes on (@busy), a
 * short pause when it is ahead of @min KiB/s (0: it never pauses); else 0.
 * Pure; any context.
 */
static inline unsigned long rs_rate_wait(u64 elapsed_ns, u64 kib, u64 min, u64 max, bool busy)
{
	u64 need_ns = max ? div64_u64(kib * NSEC_PER_SEC, max) : 0;

	if (need_ns > elapsed_ns)
		return nsecs_to_jiffies(need_ns - elapsed_ns) ?: 1;
	need_ns = min ? div64_u64(kib * NSEC_PER_SEC, min) : 0;
	if (busy && need_ns > elapsed_ns)
		return msecs_to_jiffies(RS_SYNC_YIELD_MS) ?: 1;
	return 0;
}

bool rs_user_busy(struct rainssd *rs, u64 *seen);
unsigned long rs_rate_delay(struct rainssd *rs, struct rs_rate *r, u64 min, u64 max);

int rs_sync_create(struct rainssd *rs, struct rs_sync **out);
void rs_sync_destroy(struct rs_sync *s);
void rs_sync_start(struct rs_sync *s, bool resume);
void rs_sync_stop(struct rs_sync *s);
void rs_sync_kick(struct rs_sync *s);
const char *rs_sync_status(struct rs_sync *s, u64 *done, u64 *total, u64 *mismatches);
int rs_sync_message(struct rs_sync *s, const char *action, char **error);

#endif
