/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd write-intent bitmap (md's internal bitmap): one bit per region
 * of region_stripes stripes, on every member at RS_BITMAP_SECTOR. A
 * region's bit is on disk before the first write to it reaches a member
 * (rs_bitmap_start, the gate between an operation's compute and its
 * writes), and is cleared lazily once its writes have been idle for a
 * while: every member in service flushes its cache first (the one being
 * rebuilt too, whose copy the union below leaves out), then each member's
 * copy is written with PREFLUSH and FUA. After an unclean shutdown the
 * union of the members' copies names the regions whose parity may disagree
 * with their data; they are resynced, and until then nothing is rebuilt
 * from their parity (rs_bitmap_needs_sync).
 *
 * Handle: struct rs_bitmap (opaque). rs_bitmap_create/destroy: constructor
 * and destructor; rs_bitmap_load, rs_bitmap_write_all and rs_bitmap_quiesce
 * sleep (resume, suspend); rs_bitmap_resume (a later resume) never sleeps;
 * rs_bitmap_start, rs_bitmap_end and the sync
 * helpers run in process context and never sleep; rs_bitmap_needs_sync in
 * any context.
 */
#ifndef RAINSSD_BITMAP_H
#define RAINSSD_BITMAP_H

#include <linux/types.h>

#include "rainssd-op.h"

struct rainssd;
struct rs_bitmap;

/* md's default bitmap chunk, in sectors of the volume: 64 MiB. */
#define RS_DEF_REGION_SIZE	131072U

int rs_bitmap_create(struct rainssd *rs, u32 region_stripes, struct rs_bitmap **out);
void rs_bitmap_destroy(struct rs_bitmap *b);
u32 rs_bitmap_region_stripes(const struct rs_geom *g, u64 stripes, u64 region_sectors);
u32 rs_bitmap_regions(struct rs_bitmap *b);

int rs_bitmap_load(struct rs_bitmap *b, bool resync, u64 cover, bool no_image);
void rs_bitmap_write_all(struct rs_bitmap *b);
int rs_bitmap_quiesce(struct rs_bitmap *b);
void rs_bitmap_resume(struct rs_bitmap *b);

bool rs_bitmap_start(struct rs_bitmap *b, struct rs_op *op, rs_op_fn fn);
void rs_bitmap_end(struct rs_bitmap *b, struct rs_op *op);

bool rs_bitmap_needs_sync(struct rs_bitmap *b, u64 stripe);
bool rs_bitmap_next_sync(struct rs_bitmap *b, u64 *first, u64 *nr);
void rs_bitmap_synced(struct rs_bitmap *b, u64 first, u64 nr);
u64 rs_bitmap_to_sync(struct rs_bitmap *b);

#endif
