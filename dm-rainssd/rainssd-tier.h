/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd RAID1 tier, the pure part: where each write goes (HybRAID's
 * placement, Table 2 / Fig. 8 / Algorithm 1), the tier's layout on the
 * members, its mapping table's on-disk format, the choice of the members
 * that hold a stripe's mirror copies, and the offline migration's
 * watermarks. No I/O, no allocation, no locking: any context. The tier's
 * state and I/O are in rainssd-tiermap.c.
 *
 * Every logical stripe has its RAID-5 home (md's layout in the data area,
 * as with no tier). A stripe in the tier has, besides, a record: for each
 * of its N-1 data chunks two chunk slots on two different members (the
 * mirror copies), and a bitmap of the 4 KiB rows written there since it
 * entered the tier. A row whose bit is set is read from a copy; any other
 * row of the stripe is still valid in the home, which nothing writes while
 * the stripe is in the tier (so the home's parity stays valid for it too).
 * A stripe enters the tier with no data moved (its first partial write,
 * or HybRAID's online migration once its writes reach the threshold: the
 * untouched rows stay valid in the home), and leaves it by an aligned
 * full-stripe write to the home (no data moved either) or by an offline
 * migration, which writes the tier's rows into the home.
 */
#ifndef RAINSSD_TIER_H
#define RAINSSD_TIER_H

#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/types.h>

#include "rainssd-geometry.h"
#include "rainssd-policy.h"

/* A row of the tier's presence bitmaps: 4 KiB. */
#define RS_TIER_ROW_SECTORS	8U
#define RS_TIER_MAX_ROWS	(RS_MAX_CHUNK / RS_TIER_ROW_SECTORS)

/* HybRAID's online migration threshold (Sec. 3.3: 4). */
#define RS_DEF_MIGRATION_THRESHOLD	4U
#define RS_MAX_MIGRATION_THRESHOLD	255U
/*
 * Writes a stripe has had in the tier before an aligned full-stripe write
 * moves it home: 1, at once (the rule; such a write costs n member
 * writes at home, 2 (n - 1) in the tier); HybRAID's Table 2 uses the
 * migration threshold here too.
 */
#define RS_DEF_HOME_THRESHOLD		1U
/* The offline migration starts above the high watermark, stops at the low one (% of records). */
#define RS_DEF_TIER_HIGH_PCT		90U
#define RS_DEF_TIER_LOW_PCT		70U
/* Offline migration speed per member, KiB/s. */
#define RS_DEF_MIGRATION_RATE		20000U

/* ---- placement (HybRAID Table 2, Fig. 8, Algorithm 1) ---- */

enum rs_place {
	RS_PLACE_R5,		/* the RAID-5 home: full stripe, RMW or RCW */
	RS_PLACE_R1,		/* the stripe's mirror copies, the rows the write covers */
	RS_PLACE_TO_R1,		/* enters the tier (first write or online migration), then R1 */
	RS_PLACE_TO_R5,		/* an aligned full-stripe write to the home; leaves the tier */
};

struct rs_place_in {
	bool in_tier;		/* the stripe has a record now */
	bool written;		/* it was written before (in either tier) */
	bool full;		/* the write covers every data sector of the stripe */
	unsigned int hist;	/* writes to it in its current tier (Algorithm 1's history) */
	unsigned int threshold;	/* online migration threshold */
	unsigned int home_threshold;	/* history a full-stripe write moves home at */
	bool room;		/* a record and its slots could be had now */
	bool frozen;		/* no stripe may enter or leave the tier now */
	bool home_short;	/* the write covers a chunk its home could not rebuild */
};

struct rs_place_out {
	enum rs_place place;
	unsigned int hist;	/* its history after this write */
};

void rs_tier_place(const struct rs_place_in *in, struct rs_place_out *out);
const char *rs_place_name(enum rs_place p);

/* ---- layout ---- */

/*
 * The tier area is the last tier_sectors of every member's usable space:
 * two copies of the mapping table (blocks of RS_TIER_BLOCK bytes), then two
 * slots of its commit record, then chunk slots. Block 0 of a copy is the
 * table's header; then the blocks of the written-stripe bitmap; then the
 * record blocks. A commit record is vec_blocks blocks numbered from
 * blocks + slot * vec_blocks: the generation (le64) every table block has
 * after that commit, in block order, RS_TIER_VEC_PER_BLOCK per block; its
 * blocks' generation field is the commit's sequence number.
 */
#define RS_TIER_BLOCK		4096U
/*
 * The most stripes a volume with a tier may have (536870911, as
 * rs_tier_setup()'s error says): the tier keeps a u32 per stripe of the
 * volume in memory (rs_tier_create()'s stripe map), just under 2 GiB at
 * this limit, the most kvmalloc() takes (INT_MAX bytes; a larger request
 * WARNs and fails). Every volume 1.11.22 could activate is below it. The
 * tier's other allocations follow its records (at most 2^24) or its
 * table's blocks. A 4 KiB chunk reaches the limit at 2 TiB per member, a
 * 64 KiB one at 32 TiB.
 */
#define RS_TIER_MAX_STRIPES	((u64)INT_MAX / sizeof(u32))
#define RS_TIER_BLOCK_SECTORS	(RS_TIER_BLOCK >> 9)
/*
 * The highest commit sequence number, block generation and record sequence
 * number a table may be loaded with: the superblocks' generation limit and
 * spare (rainssd-sb.h), so that the numbers after them never wrap.
 */
#define RS_TIER_SEQ_LIMIT	(S64_MAX - BIT_ULL(32))
#define RS_TIER_HDR		64U	/* every block's header */
#define RS_TIER_MAGIC		0x3152544453534e52ULL	/* "RNSSDTR1" */
#define RS_TIER_VEC_PER_BLOCK	((RS_TIER_BLOCK - RS_TIER_HDR) / 8)
#define RS_TIER_FORMAT		1U

struct rs_tier_layout {
	u64 start;		/* member sector of the tier area */
	u64 sectors;		/* its length on every member */
	unsigned int n, chunk;	/* geometry */
	unsigned int rows;	/* 4 KiB rows per chunk */
	unsigned int pbytes;	/* bytes of a chunk's row bitmap in a record */
	unsigned int ksize;	/* bytes of one chunk's entry in a record */
	unsigned int rec_size;	/* bytes of one record */
	unsigned int recs_per_block;
	u32 wb_blocks;		/* blocks of the written-stripe bitmap */
	u32 rec_blocks;		/* blocks of records */
	u32 blocks;		/* blocks of one copy: 1 + wb_blocks + rec_blocks */
	u32 vec_blocks;		/* blocks of one commit record */
	u64 slots_start;	/* member sector of chunk slot 0 */
	u32 slots;		/* chunk slots per member */
	u32 records;		/* stripes the tier can hold */
};

int rs_tier_layout(struct rs_tier_layout *t, const struct rs_geom *g, u64 stripes,
		   u64 start, u64 sectors);
u64 rs_tier_copy_sector(const struct rs_tier_layout *t, unsigned int copy, u32 block);
u64 rs_tier_vec_sector(const struct rs_tier_layout *t, unsigned int slot);
u64 rs_tier_slot_sector(const struct rs_tier_layout *t, u32 slot);
u32 rs_tier_rec_block(const struct rs_tier_layout *t, u32 rec);
unsigned int rs_tier_rec_offset(const struct rs_tier_layout *t, u32 rec);

/* ---- records ----
 *
 * A record is kept, in memory as on disk, as bytes inside its table block
 * (little-endian): le64 stripe + 1 (0: an empty record), le64 seq (of a
 * stripe's records after a crash the highest wins), then for each data
 * chunk k: u8 member of copy 0, u8 member of copy 1, 2 bytes zero, le32
 * slot of copy 0, le32 slot of copy 1, and the bitmap of its rows written
 * in the tier (bit r of byte r / 8), rs_tier_layout.pbytes bytes. The
 * accessors below read and write them in place.
 */
/* One mirror copy of a chunk: the member and its chunk slot there. */
struct rs_tier_copy {
	unsigned int member;
	u32 slot;
};

u64 rs_tier_r_stripe(const u8 *r);		/* U64_MAX when empty */
u64 rs_tier_r_seq(const u8 *r);
void rs_tier_r_set_head(u8 *r, u64 stripe, u64 seq);
void rs_tier_r_copy(const struct rs_tier_layout *t, const u8 *r, unsigned int k,
		    unsigned int c, unsigned int *member, u32 *slot);
void rs_tier_r_set_copy(const struct rs_tier_layout *t, u8 *r, unsigned int k,
			unsigned int c, unsigned int member, u32 slot);
bool rs_tier_r_row(const struct rs_tier_layout *t, const u8 *r, unsigned int k,
		   unsigned int row);
void rs_tier_r_set_rows(const struct rs_tier_layout *t, u8 *r, unsigned int k,
			unsigned int start, unsigned int end);
void rs_tier_r_clear(const struct rs_tier_layout *t, u8 *r);
int rs_tier_r_check(const struct rs_tier_layout *t, const u8 *r, u64 stripes,
		    const char **why);

/* A block's header (the first RS_TIER_HDR bytes of every block). */
struct rs_tier_blk {
	u8 uuid[16];
	u32 block;
	u64 gen;
};

enum rs_tier_blk_kind {
	RS_TIER_BLK_BLANK,	/* never written */
	RS_TIER_BLK_VALID,
	RS_TIER_BLK_CORRUPT,
};

void rs_tier_blk_seal(void *block, const struct rs_tier_blk *h);
enum rs_tier_blk_kind rs_tier_blk_check(const void *block, const u8 *uuid, u32 want,
					u64 *gen);

/* The table's header block (block 0): the layout it was made for. */
void rs_tier_hdr_encode(const struct rs_tier_layout *t, void *block);
bool rs_tier_hdr_matches(const struct rs_tier_layout *t, const void *block);

/* ---- where a stripe's mirror copies go ---- */

/*
 * For each of @nk chunks, two different members for its copies: each time
 * the pair of live members with free slots that costs least, where a
 * member costs its requests in flight (@queued, the target's and the
 * others') and one more for each copy this stripe already put on it, and,
 * of equal cost, the member with more free slots (so the members fill
 * evenly). @free[m] is decremented for each copy placed (also when it
 * fails: scratch for the caller). False when fewer than two members have a
 * free slot.
 */
bool rs_tier_choose(unsigned int n, unsigned long dead, const u32 *queued, u32 *free,
		    unsigned int nk, u8 pair[][2]);

/* ---- offline migration ---- */

bool rs_tier_should_migrate(u32 used, u32 records, unsigned int low_pct, unsigned int high_pct,
			    bool running);

#endif
