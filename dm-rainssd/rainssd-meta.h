/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd member state and its superblocks (format: rainssd-sb.h).
 *
 * The volume's state (every member's: in sync, failed, rebuilding with its
 * checkpoint; the initial resync's checkpoint) lives in an opaque handle,
 * struct rs_meta, and is committed to the superblock of every member that
 * is not failed. The I/O path reads the parts it needs from struct rainssd
 * (dead_mask, rebuild_member, rebuild_cp, resync_cp), which this unit keeps
 * in step.
 *
 * A state change (a member failing) is recorded at once and committed by a
 * work item; rs_meta_wait_committed() holds an operation (never a thread)
 * until everything changed so far is durable, so a write that skipped a
 * failed member is acknowledged only once no reload or reboot can bring
 * that member back in service.
 *
 * Contexts: rs_meta_read, rs_meta_create, rs_meta_activate,
 * rs_meta_set_clean, rs_meta_set_suspended, rs_meta_commit_wait, rs_meta_flush and
 * rs_meta_destroy sleep
 * (constructor, resume, suspend, destructor); every commit runs on the
 * commit work, one at a time; a member whose flush or superblock write
 * fails there is failed as rs_meta_member_failed() fails one (a new log
 * nonce) and reported with rs_member_failed_report(). rs_meta_member_failed
 * may be called in any context, interrupt included. A commit that records
 * a member failed flushes only once the writes of updates planned with no
 * member failed are back from the members in service (rs_batch_count_begin
 * in rainssd-op.h). rs_meta_wait_committed and rs_meta_set_rebuild_cp run
 * in process context and never sleep; rs_meta_clean, rs_meta_failed and
 * rs_meta_committed in any context. rs_meta_commit_wait is also called
 * from the resync's, the tier's and the bitmap's work items; a commit
 * never waits for any of them.
 */
#ifndef RAINSSD_META_H
#define RAINSSD_META_H

#include <linux/types.h>

#include "rainssd-op.h"
#include "rainssd-sb.h"

struct rainssd;
struct rs_meta;

int rs_meta_read(struct rainssd *rs, struct rs_activation *a);
int rs_meta_create(struct rainssd *rs, const struct rs_assembly *as, struct rs_meta **out);
void rs_meta_destroy(struct rs_meta *m);
void rs_meta_flush(struct rs_meta *m);
/* What the last shutdown left, for the first resume. */
struct rs_meta_boot {
	bool fresh;		/* a new volume */
	bool clean;		/* shut down cleanly (or new) */
	bool degraded;		/* a member failed, missing or being rebuilt */
	u64 nonce;		/* the log nonce of that state */
	u64 log_from;		/* the log holds every update from this stripe on */
	u64 log_cover;		/* ... and the dirty regions from there on are its */
	bool no_bitmap;		/* made by 1.4.0: no bitmap or log on the members */
};

int rs_meta_prepare(struct rs_meta *m, struct rs_activation *a, struct rs_meta_boot *boot);
int rs_meta_activate(struct rs_meta *m);
int rs_meta_set_clean(struct rs_meta *m, bool clean);
void rs_meta_set_suspended(struct rs_meta *m, bool suspended);
bool rs_meta_suspended(struct rs_meta *m);
bool rs_meta_clean(struct rs_meta *m);
bool rs_meta_failed(struct rs_meta *m);
void rs_meta_set_uncovered(struct rs_meta *m, u64 to);
u64 rs_meta_log_nonce(struct rs_meta *m);
u32 rs_meta_region_stripes(struct rs_meta *m);

bool rs_meta_member_failed(struct rs_meta *m, unsigned int idx);
bool rs_meta_committed(struct rs_meta *m);
bool rs_meta_wait_committed(struct rs_meta *m, struct rs_op *op, rs_op_fn fn);
void rs_meta_end_after_commit(struct rs_meta *m, struct bio *bio);
void rs_meta_commit_wait(struct rs_meta *m);
bool rs_meta_wait_rebuild_cp(struct rs_meta *m, struct rs_op *op, rs_op_fn fn, u64 first,
			     u64 last);
void rs_meta_set_rebuild_cp(struct rs_meta *m, u64 cp, bool done);
void rs_meta_set_resync_cp(struct rs_meta *m, u64 cp);
void rs_meta_request_commit(struct rs_meta *m);
unsigned int rs_meta_state(struct rs_meta *m, unsigned int idx);
u64 rs_meta_events(struct rs_meta *m);
void rs_meta_uuid(struct rs_meta *m, u8 *uuid);

#endif
