/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd superblock: the on-disk format, its encoding, and the
 * activation decisions (pure: no I/O, no allocation, no locking; any
 * context). rainssd-meta.c reads and writes it.
 *
 * Every member holds two copies, 4 KiB each, at RS_SB_SECTOR and
 * RS_SB_SECTOR + 8 (1 MiB into the reserved area, clear of md's own
 * superblock at 4 KiB), then the write-intent bitmap at RS_BITMAP_SECTOR
 * (2 MiB) and the degraded-write log at RS_LOG_SECTOR (4 MiB). A commit
 * writes generation (events) g to copy g % 2 of every live member, so a
 * torn write leaves the other copy whole.
 * All fields little-endian; crc32c over the 4 KiB with the csum field zero.
 */
#ifndef RAINSSD_SB_H
#define RAINSSD_SB_H

#include <linux/bits.h>
#include <linux/types.h>

#include "rainssd-geometry.h"

#define RS_SB_MAGIC		0x3142535344534e52ULL	/* "RNSDSSB1" as little-endian bytes */
#define RS_SB_VERSION		1
/* A volume with a RAID1 tier (1.7.0): older modules refuse it by its version. */
#define RS_SB_VERSION_TIER	2
#define RS_SB_SECTOR		2048ULL			/* copy 0; copy 1 is 8 sectors on */
#define RS_SB_SIZE		4096
#define RS_SB_COPIES		2
#define RS_BITMAP_SECTOR	4096ULL			/* up to 2 MiB of bits */
#define RS_BITMAP_MAX_BYTES	(2U << 20)
#define RS_LOG_SECTOR		8192ULL			/* 8 MiB ring per member */
#define RS_LOG_BYTES		(8U << 20)

/* A member's state, in every superblock's table. */
enum rs_mstate {
	RS_MS_NONE,		/* no member in this slot (never written) */
	RS_MS_IN_SYNC,		/* holds its data and parity */
	RS_MS_FAILED,		/* failed: never serves data until rebuilt */
	RS_MS_REBUILDING,	/* being rebuilt: stripes below its checkpoint are good */
	RS_NR_MSTATES,
};

/*
 * The highest generation a superblock may hold (1.11.6): one commit a
 * microsecond takes 292,000 years to get there, and a copy beyond it
 * would wrap to 0 at the next commit, which no activation takes.
 */
#define RS_SB_MAX_EVENTS	S64_MAX
/* A volume whose newest generation is within this of it is not activated. */
#define RS_SB_EVENTS_SPARE	BIT_ULL(32)

/* Superblock flags. */
#define RS_SBF_CLEAN		BIT(0)	/* shut down cleanly (suspend + dtr) */
/*
 * (1.11.4) The bitmap's dirty regions below stripe uncovered_to were left
 * by an unclean shutdown when no degraded-log record covered their writes
 * (no member was out, or they were below a rebuilding member's
 * checkpoint): they can only be resynced with every member's data,
 * whatever the member states say later. Set from the activation that finds
 * them until none is left. On disk, 0 in uncovered_to with the flag is the
 * whole volume (1.11.4 and 1.11.5 wrote only that); 1.11.6 writes a
 * boundary, which older modules take as a corrupt copy (reserved bytes not
 * zero) and fall back to the other, older one: downgrade only after a
 * clean shutdown, which clears both.
 */
#define RS_SBF_UNCOVERED	BIT(1)
#define RS_SBF_KNOWN		(RS_SBF_CLEAN | RS_SBF_UNCOVERED)

struct rs_sb_member_disk {
	__u8 state;			/* enum rs_mstate */
	__u8 pad[7];
	__le64 checkpoint;		/* rebuilding: stripes [0, checkpoint) are done */
} __packed;

struct rs_sb_disk {
	__le64 magic;
	__le32 version;
	__le32 csum;			/* crc32c of the block with this field 0 */
	__u8 uuid[16];			/* the volume's */
	__le64 events;			/* generation: every commit adds one */
	__le32 chunk_sectors;
	__le32 nr_members;
	__le64 data_offset;		/* sectors */
	__le64 stripes;			/* stripes of the volume (data area / chunk) */
	__le64 resync_checkpoint;	/* stripes [0, this) have parity made from their data */
	__le32 role;			/* this member's slot in the table */
	__le32 flags;			/* RS_SBF_* */
	__le64 ctime;			/* creation, seconds since the epoch */
	__le32 region_stripes;		/* write-intent bitmap: stripes per region, 0 none */
	__le32 pad0;
	__le64 log_nonce;		/* degraded-write log records of this state carry it */
	__le64 tier_start;		/* format 2: the RAID1 tier's first member sector */
	__le64 tier_sectors;		/* format 2: its length on every member */
	__le64 uncovered_to;		/* with RS_SBF_UNCOVERED; 0 then: every stripe */
	__u8 reserved[8];
	struct rs_sb_member_disk members[RS_MAX_DEVS];
} __packed;

/* The decoded superblock. */
struct rs_sb {
	u8 uuid[16];
	u64 events;
	unsigned int chunk;
	unsigned int n;
	u64 data_offset;
	u64 stripes;
	u64 resync_cp;
	unsigned int role;
	u32 flags;
	u64 ctime;
	u32 region_stripes;
	u64 log_nonce;
	u64 tier_start, tier_sectors;	/* the RAID1 tier; 0 sectors: none */
	u64 uncovered_to;		/* RS_SBF_UNCOVERED: U64_MAX or a stripe; else 0 */
	u8 state[RS_MAX_DEVS];		/* enum rs_mstate */
	u64 cp[RS_MAX_DEVS];		/* rebuild checkpoints */
};

/* What one copy held. */
enum rs_sb_read {
	RS_SBR_BLANK,		/* no magic: never written */
	RS_SBR_VALID,
	RS_SBR_CORRUPT,		/* magic, but a bad checksum, version or field */
};

void rs_sb_encode(const struct rs_sb *sb, void *block);
enum rs_sb_read rs_sb_decode(const void *block, struct rs_sb *sb, const char **why);

/* ---- activation ---- */

/* What the table says of slot i. */
struct rs_slot {
	bool missing;			/* "-" in the table */
	bool rebuild;			/* "rebuild <i>" */
	enum rs_sb_read copy[RS_SB_COPIES];
	struct rs_sb sb[RS_SB_COPIES];	/* the copies that decoded */
};

struct rs_activation {
	struct rs_geom geom;		/* the table's */
	u64 stripes;			/* the table's length in stripes (rounded up) */
	u64 usable_stripes;		/* what the members hold */
	bool nosync;
	/*
	 * The table's first resume (rs_meta_prepare()), not its constructor:
	 * the superblocks' clean flag then says how the last table ended.
	 * While another table of the device is live it is not clean.
	 */
	bool at_resume;
	/*
	 * Members older than the newest are not taken as stale: a
	 * constructor that read the superblocks while another table of the
	 * device committed them (rs_assemble_members()); the first resume
	 * decides.
	 */
	bool defer_stale;
	u32 region_stripes;		/* a new volume's bitmap regions */
	bool region_given;		/* the table names region_size: must match */
	u64 member_sectors;		/* the members' size */
	u64 tier_sectors;		/* a new volume's tier per member (a chunk multiple) */
	bool tier_given;		/* the table names tier_size: must match */
	unsigned int n;
	struct rs_slot slot[RS_MAX_DEVS];
};

/* The outcome: either an error, or the volume's state. */
struct rs_assembly {
	const char *error;		/* for ti->error; NULL when it activates */
	int bad_slot;			/* the slot the error is about, or -1 */
	bool fresh;			/* a new volume: every superblock written anew */
	struct rs_sb sb;		/* the state to commit (events is the last seen) */
	unsigned long failed;		/* slots failed at activation (for the log) */
	unsigned long stale;		/* of those, present but out of date */
	unsigned long behind;		/* taken, though they missed the last commit */
	/*
	 * From which stripe on the degraded-write log holds every update
	 * since the newest superblock was written (if it was not written
	 * clean): 0 with a member failed in it, a rebuilding member's
	 * checkpoint, U64_MAX when no member was out; log_cover the same,
	 * but not below uncovered_to with RS_SBF_UNCOVERED (older dirty
	 * regions no record covers).
	 */
	u64 log_from, log_cover;
	/*
	 * The superblocks name no write-intent bitmap: a volume made by 1.4.0,
	 * which kept neither a bitmap nor a log. Its bitmap area holds what
	 * the device held before, so none of it is read; after an unclean
	 * shutdown every region is dirty and no record covers any (log_from
	 * and log_cover U64_MAX).
	 */
	bool no_bitmap;
};

void rs_assemble(const struct rs_activation *a, struct rs_assembly *out);
const struct rs_sb *rs_slot_newest(const struct rs_slot *s);
const char *rs_mstate_name(unsigned int st);

#endif
