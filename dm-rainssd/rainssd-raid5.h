/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd RAID-5 on the operation layer (rainssd-op.h).
 *
 * A user write is cut into operations of up to rs_r5_max_stripes() adjacent
 * stripes; interior stripes are full (no pre-reads), the first and last may
 * be partial and are updated by the method the policy picks for each. A
 * read of a dead member, of a live one that the read policy rebuilds, or of
 * one whose read failed (repaired: the rebuilt data is written back) is an
 * operation of one stripe that reads the other members and XORs. Resync
 * (parity from the data) and rebuild (a member's chunks from the others)
 * are operations without a user bio. Each runs: plan (under its stripe
 * locks: the members' states, the methods), pre-read, compute, write,
 * finish. The plan is made again whenever a member died or a read failed
 * since it was made, so a buffer is used only when a completed read or the
 * user's data filled it; a write that skipped a failed member is
 * acknowledged once the superblocks say it failed.
 *
 * rs_r5_feed() and rs_r5_sync() run in any process context and never
 * sleep; the steps run in the target's workqueue.
 */
#ifndef RAINSSD_RAID5_H
#define RAINSSD_RAID5_H

#include <linux/bio.h>

#include "rainssd-geometry.h"

struct rainssd;

/* A sync operation has ended (in the workqueue): its status, and a scrub's mismatched sectors. */
typedef void (*rs_r5_done_fn)(void *ctx, blk_status_t status, u64 mismatches);

enum rs_r5_sync_kind {
	RS_R5_SYNC_RESYNC,
	RS_R5_SYNC_REBUILD,
	RS_R5_SYNC_CHECK,
	RS_R5_SYNC_REPAIR,
};

size_t rs_r5_op_size(void);
unsigned int rs_r5_max_stripes(const struct rs_geom *g);
bool rs_r5_feed(struct rainssd *rs, struct bio *bio);
bool rs_r5_sync(struct rainssd *rs, u64 stripe, unsigned int nr, enum rs_r5_sync_kind what,
		rs_r5_done_fn done, void *ctx);
bool rs_r5_migrate(struct rainssd *rs, u64 stripe, rs_r5_done_fn done, void *ctx);

#endif
