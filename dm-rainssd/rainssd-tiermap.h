/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd RAID1 tier: its state and its mapping table (the pure part,
 * formats and decisions, is rainssd-tier.h).
 *
 * Handle: struct rs_tier (opaque). It holds the mapping table in memory as
 * on disk (blocks of records), a per-stripe word for the I/O path (the
 * stripe's record, its write history, whether it was ever written), the
 * tier's free chunk slots and records, and the commit machinery.
 *
 * Who changes what: a stripe's record (entering, rows written, leaving) is
 * changed only by an operation that holds the stripe's lock, through this
 * unit (under its spinlock). The I/O path reads a stripe's word and record
 * without locks: reads that go to a mirror copy hold a read epoch
 * (rs_tier_read_begin/end) from before they look the record up until their
 * bio completes, so that no chunk slot they may read is handed to another
 * stripe before they are done.
 *
 * Commit: every mapping change is made in memory at once and marks its
 * table block dirty; a commit writes the dirty blocks, each to the copy
 * that does not hold its newest generation, on every live member, with
 * FUA. A stripe's record is in one block, and slots and records given up
 * are handed out again only after the commit that records it (and after
 * the reads that might still use them), so whatever subset of a commit's
 * blocks a crash leaves on disk, every stripe is either as before or as
 * after it, and no two stripes claim one slot. A flush waits for the
 * commit of every change made before it (rs_tier_flush_wait); a FUA write
 * that changed the mapping waits for its commit (rs_tier_wait_committed).
 *
 * Contexts: rs_tier_create/destroy: constructor and destructor;
 * rs_tier_load, rs_tier_commit_sync sleep (resume, suspend). The lookups
 * and rs_tier_read_begin/end run in any context (end in interrupt context
 * too). The changes and rs_tier_wait_committed run in process context and
 * never sleep. rs_tier_flush_wait runs in the map function.
 */
#ifndef RAINSSD_TIERMAP_H
#define RAINSSD_TIERMAP_H

#include <linux/bio.h>
#include <linux/types.h>

#include "rainssd-op.h"
#include "rainssd-tier.h"

struct rainssd;
struct rs_tier;
struct rs_load_snap;

/* The mapping table's state, dm-thin's words. */
enum rs_tier_mode {
	RS_TIER_RW,		/* mapping changes are made and committed */
	RS_TIER_RO,		/* a commit failed: no more changes (placement frozen) */
	RS_TIER_FAIL,		/* changes were lost: flushes and writes fail */
};

/* A stripe's record in the tier, as the I/O path sees it. */
struct rs_tier_view {
	u32 rec;		/* the record, or U32_MAX when the stripe is not in the tier */
	const u8 *r;		/* its bytes */
	unsigned int hist;	/* writes in its current tier */
	bool written;
};

/* Counters for the status line. */
struct rs_tier_stats {
	u32 records, used, pending;	/* records: all, holding a stripe, freed but not yet free */
	u32 slots, slots_used;		/* chunk slots, on all members */
	u64 to_r1, to_r5, offline;	/* online migrations in, out, offline migrations */
	u64 r1_writes, r1_reads;	/* writes and reads served by the tier */
	u64 commits;
	enum rs_tier_mode mode;
	bool needs_check;
};

int rs_tier_create(struct rainssd *rs, const struct rs_tier_layout *t, const u8 *uuid,
		   struct rs_tier **out);
void rs_tier_destroy(struct rs_tier *tr);
int rs_tier_load(struct rs_tier *tr, bool fresh, bool write, const char **why);
int rs_tier_commit_sync(struct rs_tier *tr);
const struct rs_tier_layout *rs_tier_layout_of(struct rs_tier *tr);

/* Lookups (lock-free). */
void rs_tier_view(struct rs_tier *tr, u64 stripe, struct rs_tier_view *v);
bool rs_tier_room(struct rs_tier *tr);
unsigned int rs_tier_read_begin(struct rs_tier *tr);
void rs_tier_read_end(struct rs_tier *tr, unsigned int epoch);

/* Changes (the stripe's lock held). */
void rs_tier_note_write(struct rs_tier *tr, u64 stripe, unsigned int hist);
u32 rs_tier_enter(struct rs_tier *tr, u64 stripe, unsigned long dead, const u32 *queued,
		  unsigned int hist);
void rs_tier_set_rows(struct rs_tier *tr, u32 rec, unsigned int k, unsigned int start,
		      unsigned int end);
void rs_tier_leave(struct rs_tier *tr, u64 stripe, bool offline);
void rs_tier_count(struct rs_tier *tr, bool write);

/* Commit. */
bool rs_tier_wait_committed(struct rs_tier *tr, struct rs_op *op, rs_op_fn fn);
bool rs_tier_wait_left(struct rs_tier *tr, struct rs_op *op, rs_op_fn fn);
bool rs_tier_flush_wait(struct rs_tier *tr, struct bio *bio);
void rs_tier_stats(struct rs_tier *tr, struct rs_tier_stats *st);
enum rs_tier_mode rs_tier_mode(struct rs_tier *tr);
const char *rs_tier_mode_name(enum rs_tier_mode m);

/* For the offline migration: the next stripe to move back, clock order, coldest first. */
bool rs_tier_pick_cold(struct rs_tier *tr, u64 *stripe);
u32 rs_tier_used(struct rs_tier *tr);

#endif
