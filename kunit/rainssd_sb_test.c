// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's superblock unit (rainssd-sb.c, compiled into
 * this module by rainssd_units.c): the on-disk format (layout, checksum,
 * encode/decode round trips of random superblocks, every single-byte change
 * of an encoded block caught, each impossible field value refused), the
 * choice of a member's newest copy, and every activation decision of
 * rs_assemble().
 *
 * The superblock copies a case hands to rs_assemble() are made the way the
 * target gets them: a struct rs_sb filled in, rs_sb_encode() into a 4 KiB
 * block, rs_sb_decode() of that block into the slot. A commit of generation
 * g writes copy g % 2, so a member at generation g holds g in that copy and
 * g - 1 in the other (blank when g is 1).
 */
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/crc32c.h>
#include <linux/math64.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rainssd-sb.h"

#define T_N		4
#define T_CHUNK		16
#define T_STRIPES	1000ULL
#define T_E		10ULL		/* the volume's generation in most cases */

static const u8 t_uuid[16] = "rainssd-sb-test";
static const u8 t_other_uuid[16] = "another-volume!";

/* ---- the on-disk format ---- */

/*
 * The checksum as rainssd-sb.h states it, computed here independently:
 * crc32c of the whole 4 KiB with the csum field zero.
 */
static u32 t_csum(u8 *block)
{
	struct rs_sb_disk *d = (struct rs_sb_disk *)block;
	__le32 saved = d->csum;
	u32 c;

	d->csum = 0;
	c = ~crc32c(~0U, block, RS_SB_SIZE);
	d->csum = saved;
	return c;
}

/* After editing @block by hand: checksum it again, as an encoder would. */
static void t_resum(u8 *block)
{
	struct rs_sb_disk *d = (struct rs_sb_disk *)block;

	d->csum = cpu_to_le32(t_csum(block));
}

/* A valid superblock of a @n-member volume at generation T_E, role 1. */
static void t_sb_init(struct rs_sb *sb, unsigned int n)
{
	unsigned int i;

	memset(sb, 0, sizeof(*sb));
	memcpy(sb->uuid, t_uuid, sizeof(sb->uuid));
	sb->events = T_E;
	sb->chunk = T_CHUNK;
	sb->n = n;
	sb->data_offset = RS_DATA_OFFSET;
	sb->stripes = T_STRIPES;
	sb->resync_cp = T_STRIPES;
	sb->role = 1;
	sb->ctime = 1700000000ULL;
	sb->region_stripes = 16;	/* a bitmap, as every module since 1.5.0 writes */
	for (i = 0; i < n; i++)
		sb->state[i] = RS_MS_IN_SYNC;
}

static u64 t_u64(struct rnd_state *r)
{
	return ((u64)prandom_u32_state(r) << 32) | prandom_u32_state(r);
}

/* A random value in [0, @max]. */
static u64 t_upto(struct rnd_state *r, u64 max)
{
	u64 rem;

	if (max == U64_MAX)
		return t_u64(r);
	div64_u64_rem(t_u64(r), max + 1, &rem);
	return rem;
}

/*
 * Random field values that decode must accept, @n members (0: 3..32 at
 * random); in the unused entries beyond n, garbage that encode must drop.
 */
static void t_sb_random(struct rnd_state *r, struct rs_sb *sb, unsigned int n)
{
	static const u8 states[] = { RS_MS_IN_SYNC, RS_MS_FAILED, RS_MS_REBUILDING };
	unsigned int i;

	memset(sb, 0, sizeof(*sb));
	prandom_bytes_state(r, sb->uuid, sizeof(sb->uuid));
	sb->n = n ?: RS_MIN_DEVS + prandom_u32_state(r) % (RS_MAX_DEVS - RS_MIN_DEVS + 1);
	sb->events = t_u64(r) >> 1 >> (prandom_u32_state(r) % 63) ?: 1;
	sb->chunk = RS_MIN_CHUNK <<
		    (prandom_u32_state(r) % (ilog2(RS_MAX_CHUNK / RS_MIN_CHUNK) + 1));
	sb->data_offset = t_u64(r) >> (prandom_u32_state(r) % 64);
	sb->stripes = t_u64(r) >> (prandom_u32_state(r) % 64);
	sb->resync_cp = prandom_u32_state(r) % 2 ? sb->stripes : t_upto(r, sb->stripes);
	sb->role = prandom_u32_state(r) % sb->n;
	sb->flags = prandom_u32_state(r) & RS_SBF_KNOWN;
	if (sb->flags & RS_SBF_UNCOVERED)
		sb->uncovered_to = prandom_u32_state(r) % 2 ? U64_MAX : t_u64(r) | 1;
	sb->ctime = t_u64(r);
	for (i = 0; i < RS_MAX_DEVS; i++) {
		if (i >= sb->n) {
			sb->state[i] = states[prandom_u32_state(r) % ARRAY_SIZE(states)];
			sb->cp[i] = t_u64(r);
			continue;
		}
		sb->state[i] = states[prandom_u32_state(r) % ARRAY_SIZE(states)];
		sb->cp[i] = sb->state[i] == RS_MS_REBUILDING ? t_upto(r, sb->stripes) : t_u64(r);
	}
}

/* Whether @got is what decoding the encoding of @want must give. */
static bool t_same(const struct rs_sb *want, const struct rs_sb *got)
{
	unsigned int i;

	if (memcmp(got->uuid, want->uuid, sizeof(want->uuid)) || got->events != want->events ||
	    got->chunk != want->chunk || got->n != want->n ||
	    got->data_offset != want->data_offset || got->stripes != want->stripes ||
	    got->resync_cp != want->resync_cp || got->role != want->role ||
	    got->flags != want->flags || got->ctime != want->ctime ||
	    got->uncovered_to != want->uncovered_to)
		return false;
	for (i = 0; i < RS_MAX_DEVS; i++)
		if (got->state[i] != (i < want->n ? want->state[i] : RS_MS_NONE) ||
		    got->cp[i] != (i < want->n ? want->cp[i] : 0))
			return false;
	return true;
}

/* The same, field by field, for the log. */
static void t_expect_same(struct kunit *test, const struct rs_sb *want, const struct rs_sb *got)
{
	unsigned int i;

	KUNIT_EXPECT_MEMEQ(test, got->uuid, want->uuid, sizeof(want->uuid));
	KUNIT_EXPECT_EQ(test, got->events, want->events);
	KUNIT_EXPECT_EQ(test, got->chunk, want->chunk);
	KUNIT_EXPECT_EQ(test, got->n, want->n);
	KUNIT_EXPECT_EQ(test, got->data_offset, want->data_offset);
	KUNIT_EXPECT_EQ(test, got->stripes, want->stripes);
	KUNIT_EXPECT_EQ(test, got->resync_cp, want->resync_cp);
	KUNIT_EXPECT_EQ(test, got->role, want->role);
	KUNIT_EXPECT_EQ(test, got->flags, want->flags);
	KUNIT_EXPECT_EQ(test, got->ctime, want->ctime);
	KUNIT_EXPECT_EQ(test, got->uncovered_to, want->uncovered_to);
	for (i = 0; i < RS_MAX_DEVS; i++) {
		if (i < want->n) {
			KUNIT_EXPECT_EQ_MSG(test, got->state[i], want->state[i], "member %u", i);
			KUNIT_EXPECT_EQ_MSG(test, got->cp[i], want->cp[i], "member %u", i);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, got->state[i], RS_MS_NONE, "member %u", i);
			KUNIT_EXPECT_EQ_MSG(test, got->cp[i], 0ULL, "member %u", i);
		}
	}
}

static u8 *t_block(struct kunit *test)
{
	u8 *block = kunit_kzalloc(test, RS_SB_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, block);
	return block;
}

static struct rs_sb *t_sb(struct kunit *test)
{
	struct rs_sb *sb = kunit_kzalloc(test, sizeof(*sb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sb);
	return sb;
}

/* Where the fields are: the format is what other tools and versions read. */
static void rs_sb_test_layout(struct kunit *test)
{
	struct rs_sb *sb = t_sb(test);
	u8 *block = t_block(test);
	const struct rs_sb_disk *d = (const struct rs_sb_disk *)block;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, magic), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, version), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, csum), 12);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, uuid), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, events), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, chunk_sectors), 40);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, nr_members), 44);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, data_offset), 48);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, stripes), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, resync_checkpoint), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, role), 72);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, flags), 76);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, ctime), 80);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, uncovered_to), 120);
	KUNIT_EXPECT_EQ(test, offsetof(struct rs_sb_disk, members), 136);
	KUNIT_EXPECT_EQ(test, sizeof(struct rs_sb_member_disk), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct rs_sb_disk), 136 + 16 * RS_MAX_DEVS);

	/* Encoded over garbage: every byte it does not set is zero. */
	t_sb_init(sb, T_N);
	sb->state[2] = RS_MS_REBUILDING;
	sb->cp[2] = 0x0102030405060708ULL;
	memset(block, 0xa5, RS_SB_SIZE);
	rs_sb_encode(sb, block);
	KUNIT_EXPECT_MEMEQ(test, block, "RNSDSSB1", 8);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->version), RS_SB_VERSION);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->csum), t_csum(block));
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->events), T_E);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->nr_members), T_N);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->role), 1);
	KUNIT_EXPECT_EQ(test, d->members[2].state, RS_MS_REBUILDING);
	/* Little-endian on disk whatever the CPU. */
	KUNIT_EXPECT_EQ(test, block[136 + 2 * 16 + 8], 0x08);
	KUNIT_EXPECT_EQ(test, block[136 + 2 * 16 + 15], 0x01);
	for (i = 0; i < RS_MAX_DEVS; i++)
		KUNIT_EXPECT_PTR_EQ_MSG(test, memchr_inv(d->members[i].pad, 0,
							 sizeof(d->members[i].pad)),
					NULL, "member %u", i);
	for (i = T_N; i < RS_MAX_DEVS; i++) {
		KUNIT_EXPECT_EQ_MSG(test, d->members[i].state, RS_MS_NONE, "member %u", i);
		KUNIT_EXPECT_EQ_MSG(test, le64_to_cpu(d->members[i].checkpoint), 0ULL,
				    "member %u", i);
	}
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(d->reserved, 0, sizeof(d->reserved)), NULL);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(block + sizeof(*d), 0, RS_SB_SIZE - sizeof(*d)),
			    NULL);
}

/* Random superblocks (n 3..32, every state, checkpoints, flags) decode to what was encoded. */
static void rs_sb_test_roundtrip(struct kunit *test)
{
	struct rs_sb *sb = t_sb(test), *got = t_sb(test);
	u8 *block = t_block(test);
	struct rnd_state r;
	unsigned int iter, ns = 0;
	const char *why;

	prandom_seed_state(&r, 0x5eed5b);
	for (iter = 0; iter < 300; iter++) {
		t_sb_random(&r, sb, iter == 0 ? RS_MIN_DEVS : iter == 1 ? RS_MAX_DEVS : 0);
		ns |= BIT(sb->n - RS_MIN_DEVS);
		prandom_bytes_state(&r, block, RS_SB_SIZE);
		rs_sb_encode(sb, block);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(((struct rs_sb_disk *)block)->csum),
				    t_csum(block), "iteration %u", iter);
		memset(got, 0xee, sizeof(*got));
		KUNIT_ASSERT_EQ_MSG(test, rs_sb_decode(block, got, &why), RS_SBR_VALID,
				    "iteration %u (n %u): %s", iter, sb->n, why);
		KUNIT_EXPECT_NULL(test, why);
		if (!t_same(sb, got)) {
			/* The first difference only: not a line per field of 300 superblocks. */
			t_expect_same(test, sb, got);
			KUNIT_FAIL(test, "iteration %u (n %u) decoded to something else",
				   iter, sb->n);
			break;
		}
	}
	/* The seed reaches every member count. */
	KUNIT_EXPECT_EQ(test, ns, (u32)GENMASK(RS_MAX_DEVS - RS_MIN_DEVS, 0));
}

/* No magic: never written, whatever else is there. */
static void rs_sb_test_blank(struct kunit *test)
{
	struct rs_sb *sb = t_sb(test);
	u8 *block = t_block(test);
	const char *why = "unset";
	struct rnd_state r;

	KUNIT_EXPECT_EQ(test, rs_sb_decode(block, sb, &why), RS_SBR_BLANK);
	KUNIT_EXPECT_NULL(test, why);
	memset(block, 0xff, RS_SB_SIZE);
	KUNIT_EXPECT_EQ(test, rs_sb_decode(block, sb, &why), RS_SBR_BLANK);
	prandom_seed_state(&r, 42);
	prandom_bytes_state(&r, block, RS_SB_SIZE);
	KUNIT_EXPECT_EQ(test, rs_sb_decode(block, sb, &why), RS_SBR_BLANK);
	/* The magic alone, nothing else: corrupt, not blank. */
	memset(block, 0, RS_SB_SIZE);
	memcpy(block, "RNSDSSB1", 8);
	KUNIT_EXPECT_EQ(test, rs_sb_decode(block, sb, &why), RS_SBR_CORRUPT);
	KUNIT_EXPECT_NOT_NULL(test, why);
}

/*
 * Every single-byte change anywhere in the 4 KiB block (the checksum field
 * and the unused bytes too) is caught: CORRUPT, or BLANK when it hits the
 * magic. The block decodes again once the byte is put back.
 */
static void rs_sb_test_every_byte(struct kunit *test)
{
	struct rs_sb *sb = t_sb(test), *got = t_sb(test);
	u8 *block = t_block(test);
	unsigned int iter, pos, bad, first_bad;
	struct rnd_state r;
	const char *why;

	prandom_seed_state(&r, 4096);
	for (iter = 0; iter < 3; iter++) {
		t_sb_random(&r, sb, iter == 0 ? RS_MIN_DEVS : iter == 1 ? RS_MAX_DEVS : 0);
		rs_sb_encode(sb, block);
		bad = 0;
		first_bad = RS_SB_SIZE;
		for (pos = 0; pos < RS_SB_SIZE; pos++) {
			u8 x = 1 + (pos * 37 + iter * 101) % 255;
			enum rs_sb_read want = pos < sizeof(__le64) ? RS_SBR_BLANK : RS_SBR_CORRUPT;
			enum rs_sb_read res;

			block[pos] ^= x;
			res = rs_sb_decode(block, got, &why);
			if (res != want || (want == RS_SBR_CORRUPT && !why)) {
				bad++;
				first_bad = min(first_bad, pos);
			}
			block[pos] ^= x;
		}
		KUNIT_EXPECT_EQ_MSG(test, bad, 0, "n %u: %u bytes not caught, the first at %u",
				    sb->n, bad, first_bad);
		KUNIT_EXPECT_EQ(test, rs_sb_decode(block, got, &why), RS_SBR_VALID);
	}
}

/* Hand edits of a valid block (4 members, role 1, member 2 rebuilding at 500 of 1000). */
enum t_edit {
	E_NONE, E_VERSION0, E_VERSION2, E_N0, E_N2, E_N32, E_N33, E_ROLE_N, E_ROLE_LAST,
	E_ROLE_HUGE, E_CHUNK0, E_CHUNK24, E_CHUNK_MAX, E_CHUNK_BELOW, E_CHUNK_ABOVE,
	E_RESYNC_OVER, E_RESYNC_0, E_EVENTS0, E_EVENTS1, E_EVENTS_TOP, E_EVENTS_MAX,
	E_FLAGS_CLEAN, E_FLAGS_UNCOVERED, E_UNCOVERED_TO, E_UNCOVERED_NO_FLAG, E_FLAGS2, E_FLAGS31,
	E_STATE_AT_N, E_STATE_AT_31, E_CP_AT_N, E_NONE_AT_LAST, E_NONE_AT_0, E_STATE_NR, E_STATE_FF,
	E_RB_CP_OVER, E_RB_CP_HUGE, E_RB_CP_END, E_FAILED_CP_HUGE,
	E_TIER, E_TIER_NO_VERSION, E_TIER_IN_DATA, E_TIER_END_TOP, E_TIER_WRAP, E_TIER_START_TOP,
	E_TIER_U32, E_TIER_OVER_U32,
	E_REGIONS_TOP, E_REGIONS_OVER, E_REGIONS_NONE,
};

static const struct {
	enum t_edit e;
	const char *what;
	enum rs_sb_read want;
} t_edits[] = {
	{ E_NONE, "unchanged", RS_SBR_VALID },
	{ E_VERSION0, "version 0", RS_SBR_CORRUPT },
	{ E_VERSION2, "version 2", RS_SBR_CORRUPT },
	{ E_N0, "n 0", RS_SBR_CORRUPT },
	{ E_N2, "n 2", RS_SBR_CORRUPT },
	{ E_N32, "n 32", RS_SBR_VALID },
	{ E_N33, "n 33", RS_SBR_CORRUPT },
	{ E_ROLE_N, "role n", RS_SBR_CORRUPT },
	{ E_ROLE_LAST, "role n - 1", RS_SBR_VALID },
	{ E_ROLE_HUGE, "role U32_MAX", RS_SBR_CORRUPT },
	{ E_CHUNK0, "chunk 0", RS_SBR_CORRUPT },
	{ E_CHUNK24, "chunk 24", RS_SBR_CORRUPT },
	{ E_CHUNK_MAX, "chunk RS_MAX_CHUNK", RS_SBR_VALID },
	{ E_CHUNK_BELOW, "chunk RS_MIN_CHUNK / 2", RS_SBR_CORRUPT },
	{ E_CHUNK_ABOVE, "chunk RS_MAX_CHUNK * 2", RS_SBR_CORRUPT },
	{ E_RESYNC_OVER, "resync checkpoint stripes + 1", RS_SBR_CORRUPT },
	{ E_RESYNC_0, "resync checkpoint 0", RS_SBR_VALID },
	{ E_EVENTS0, "events 0", RS_SBR_CORRUPT },
	{ E_EVENTS1, "events 1", RS_SBR_VALID },
	{ E_EVENTS_TOP, "events RS_SB_MAX_EVENTS", RS_SBR_VALID },
	{ E_EVENTS_MAX, "events RS_SB_MAX_EVENTS + 1", RS_SBR_CORRUPT },
	{ E_FLAGS_CLEAN, "flags clean", RS_SBR_VALID },
	{ E_FLAGS_UNCOVERED, "flags clean and uncovered", RS_SBR_VALID },
	{ E_UNCOVERED_TO, "uncovered below stripe 7", RS_SBR_VALID },
	{ E_UNCOVERED_NO_FLAG, "uncovered_to without the flag", RS_SBR_CORRUPT },
	{ E_FLAGS2, "flags bit 2", RS_SBR_CORRUPT },
	{ E_FLAGS31, "flags bit 31", RS_SBR_CORRUPT },
	{ E_STATE_AT_N, "a member state at n", RS_SBR_CORRUPT },
	{ E_STATE_AT_31, "a member state at 31", RS_SBR_CORRUPT },
	{ E_CP_AT_N, "a checkpoint at n", RS_SBR_VALID },
	{ E_NONE_AT_LAST, "NONE at n - 1", RS_SBR_CORRUPT },
	{ E_NONE_AT_0, "NONE at 0", RS_SBR_CORRUPT },
	{ E_STATE_NR, "state RS_NR_MSTATES", RS_SBR_CORRUPT },
	{ E_STATE_FF, "state 0xff", RS_SBR_CORRUPT },
	{ E_RB_CP_OVER, "rebuild checkpoint stripes + 1", RS_SBR_CORRUPT },
	{ E_RB_CP_HUGE, "rebuild checkpoint U64_MAX", RS_SBR_CORRUPT },
	{ E_RB_CP_END, "rebuild checkpoint stripes", RS_SBR_VALID },
	{ E_FAILED_CP_HUGE, "checkpoint of a failed member", RS_SBR_VALID },
	{ E_TIER, "a tier after the data", RS_SBR_VALID },
	{ E_TIER_NO_VERSION, "a tier in format 1", RS_SBR_CORRUPT },
	{ E_TIER_IN_DATA, "a tier starting in the data", RS_SBR_CORRUPT },
	{ E_TIER_END_TOP, "a tier ending at sector 2^64 - 1", RS_SBR_VALID },
	/* Up to 1.11.16 these passed: the end wrapped past 2^64. */
	{ E_TIER_WRAP, "a tier ending past sector 2^64", RS_SBR_CORRUPT },
	{ E_TIER_START_TOP, "a tier starting at sector 2^64 - 1", RS_SBR_CORRUPT },
	{ E_TIER_U32, "a tier of 2^32 - 1 sectors", RS_SBR_VALID },
	/* Up to 1.11.22 this passed, and the status cut it to 32 bits. */
	{ E_TIER_OVER_U32, "a tier of 2^32 sectors (more than tier_size gives)", RS_SBR_CORRUPT },
	{ E_REGIONS_TOP, "as many bitmap regions as its area holds", RS_SBR_VALID },
	/* Up to 1.11.18 this passed, and the bitmap's allocation failed (ENOMEM). */
	{ E_REGIONS_OVER, "one bitmap region more than its area holds", RS_SBR_CORRUPT },
	{ E_REGIONS_NONE, "no region size (a volume made by 1.4.0)", RS_SBR_VALID },
};

static void t_edit(struct rs_sb_disk *d, enum t_edit e)
{
	unsigned int i;
	u64 end;

	switch (e) {
	case E_NONE:
		break;
	case E_VERSION0:
		d->version = 0;
		break;
	case E_VERSION2:
		d->version = cpu_to_le32(RS_SB_VERSION + 1);
		break;
	case E_N0:
	case E_N2:
		/* Nothing else wrong: no member states beyond the new n, role below it. */
		d->nr_members = cpu_to_le32(e == E_N0 ? 0 : 2);
		d->role = 0;
		for (i = e == E_N0 ? 0 : 2; i < T_N; i++)
			d->members[i].state = RS_MS_NONE;
		break;
	case E_N32:
	case E_N33:
		d->nr_members = cpu_to_le32(e == E_N32 ? RS_MAX_DEVS : RS_MAX_DEVS + 1);
		for (i = T_N; i < RS_MAX_DEVS; i++)
			d->members[i].state = RS_MS_FAILED;
		break;
	case E_ROLE_N:
		d->role = cpu_to_le32(T_N);
		break;
	case E_ROLE_LAST:
		d->role = cpu_to_le32(T_N - 1);
		break;
	case E_ROLE_HUGE:
		d->role = cpu_to_le32(U32_MAX);
		break;
	case E_CHUNK0:
		d->chunk_sectors = 0;
		break;
	case E_CHUNK24:
		d->chunk_sectors = cpu_to_le32(24);
		break;
	case E_CHUNK_MAX:
		d->chunk_sectors = cpu_to_le32(RS_MAX_CHUNK);
		break;
	case E_CHUNK_BELOW:
		d->chunk_sectors = cpu_to_le32(RS_MIN_CHUNK / 2);
		break;
	case E_CHUNK_ABOVE:
		d->chunk_sectors = cpu_to_le32(RS_MAX_CHUNK * 2);
		break;
	case E_RESYNC_OVER:
		d->resync_checkpoint = cpu_to_le64(T_STRIPES + 1);
		break;
	case E_RESYNC_0:
		d->resync_checkpoint = 0;
		break;
	case E_EVENTS0:
		d->events = 0;
		break;
	case E_EVENTS1:
		d->events = cpu_to_le64(1);
		break;
	case E_EVENTS_TOP:
		d->events = cpu_to_le64(RS_SB_MAX_EVENTS);
		break;
	case E_EVENTS_MAX:
		d->events = cpu_to_le64((u64)RS_SB_MAX_EVENTS + 1);
		break;
	case E_FLAGS_CLEAN:
		d->flags = cpu_to_le32(RS_SBF_CLEAN);
		break;
	case E_FLAGS_UNCOVERED:
		d->flags = cpu_to_le32(RS_SBF_CLEAN | RS_SBF_UNCOVERED);
		break;
	case E_UNCOVERED_TO:
		d->flags = cpu_to_le32(RS_SBF_UNCOVERED);
		d->uncovered_to = cpu_to_le64(7);
		break;
	case E_UNCOVERED_NO_FLAG:
		d->uncovered_to = cpu_to_le64(7);
		break;
	case E_FLAGS2:
		d->flags = cpu_to_le32(BIT(2));
		break;
	case E_FLAGS31:
		d->flags = cpu_to_le32(BIT(31) | RS_SBF_CLEAN);
		break;
	case E_STATE_AT_N:
		d->members[T_N].state = RS_MS_IN_SYNC;
		break;
	case E_STATE_AT_31:
		d->members[RS_MAX_DEVS - 1].state = RS_MS_FAILED;
		break;
	case E_CP_AT_N:
		d->members[T_N].checkpoint = cpu_to_le64(7);
		break;
	case E_NONE_AT_LAST:
		d->members[T_N - 1].state = RS_MS_NONE;
		break;
	case E_NONE_AT_0:
		d->members[0].state = RS_MS_NONE;
		break;
	case E_STATE_NR:
		d->members[1].state = RS_NR_MSTATES;
		break;
	case E_STATE_FF:
		d->members[0].state = 0xff;
		break;
	case E_RB_CP_OVER:
		d->members[2].checkpoint = cpu_to_le64(T_STRIPES + 1);
		break;
	case E_RB_CP_HUGE:
		d->members[2].checkpoint = cpu_to_le64(U64_MAX);
		break;
	case E_RB_CP_END:
		d->members[2].checkpoint = cpu_to_le64(T_STRIPES);
		break;
	case E_FAILED_CP_HUGE:
		d->members[1].state = RS_MS_FAILED;
		d->members[1].checkpoint = cpu_to_le64(U64_MAX);
		break;
	case E_TIER:
	case E_REGIONS_TOP:
	case E_REGIONS_OVER:
		d->stripes = cpu_to_le64(RS_BITMAP_MAX_BYTES * 8ULL * 3 + (e == E_REGIONS_OVER));
		d->region_stripes = cpu_to_le32(3);
		break;
	case E_REGIONS_NONE:
		d->region_stripes = 0;
		break;
	case E_TIER_NO_VERSION:
	case E_TIER_IN_DATA:
	case E_TIER_END_TOP:
	case E_TIER_WRAP:
	case E_TIER_START_TOP:
	case E_TIER_U32:
	case E_TIER_OVER_U32:
		end = RS_DATA_OFFSET + T_STRIPES * T_CHUNK;
		d->version = cpu_to_le32(e == E_TIER_NO_VERSION ? RS_SB_VERSION :
					 RS_SB_VERSION_TIER);
		/* The largest tier, U32_MAX sectors, ending at 2^64 - 1 or past it. */
		d->tier_start = cpu_to_le64(e == E_TIER_IN_DATA ? end - 1 :
					    e == E_TIER_START_TOP ? U64_MAX :
					    e == E_TIER_END_TOP ? U64_MAX - U32_MAX :
					    e == E_TIER_WRAP ? U64_MAX - U32_MAX + 1 : end);
		d->tier_sectors = cpu_to_le64(e == E_TIER_END_TOP || e == E_TIER_WRAP ||
					      e == E_TIER_U32 ? U32_MAX :
					      e == E_TIER_OVER_U32 ? BIT_ULL(32) : 1024);
		break;
	}
}

/* Impossible field values, checksummed as if written so: CORRUPT, with a reason. */
static void rs_sb_test_bad_fields(struct kunit *test)
{
	struct rs_sb *sb = t_sb(test), *got = t_sb(test);
	u8 *block = t_block(test);
	unsigned int i;
	const char *why;

	t_sb_init(sb, T_N);
	sb->state[2] = RS_MS_REBUILDING;
	sb->cp[2] = 500;
	for (i = 0; i < ARRAY_SIZE(t_edits); i++) {
		const typeof(t_edits[0]) *e = &t_edits[i];
		enum rs_sb_read res;

		rs_sb_encode(sb, block);
		t_edit((struct rs_sb_disk *)block, e->e);
		t_resum(block);
		res = rs_sb_decode(block, got, &why);
		KUNIT_EXPECT_EQ_MSG(test, res, e->want, "%s: decoded as %d (%s)", e->what, res,
				    why ?: "no reason");
		if (e->want == RS_SBR_CORRUPT)
			KUNIT_EXPECT_NOT_NULL_MSG(test, why, "%s: no reason", e->what);
		else
			KUNIT_EXPECT_NULL_MSG(test, why, "%s", e->what);
	}
	/* A valid copy still fails on its checksum alone. */
	rs_sb_encode(sb, block);
	((struct rs_sb_disk *)block)->csum ^= cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, rs_sb_decode(block, got, &why), RS_SBR_CORRUPT);
	KUNIT_EXPECT_NOT_NULL(test, why);
}

/* ---- activation ---- */

/* A volume as the table and its members' superblocks describe it. */
struct t_vol {
	struct rs_activation a;
	struct rs_assembly out;
	struct rs_sb sb;		/* what every member's superblock is made from */
	u8 block[RS_SB_SIZE];
};

/* @n members, chunk T_CHUNK, T_STRIPES stripes, resync done, all in sync. */
static struct t_vol *t_vol(struct kunit *test, unsigned int n)
{
	struct t_vol *v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, v);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&v->a.geom, n, T_CHUNK), 0);
	v->a.n = n;
	v->a.stripes = T_STRIPES;
	v->a.usable_stripes = T_STRIPES;
	t_sb_init(&v->sb, n);
	return v;
}

/* Copy @c of slot @slot as decoded from the encoding of @sb; what decode said. */
static enum rs_sb_read t_put(struct t_vol *v, unsigned int slot, unsigned int c,
			     const struct rs_sb *sb)
{
	struct rs_slot *s = &v->a.slot[slot];
	const char *why;

	rs_sb_encode(sb, v->block);
	s->copy[c] = rs_sb_decode(v->block, &s->sb[c], &why);
	return s->copy[c];
}

static void t_blank_copy(struct kunit *test, struct t_vol *v, unsigned int slot, unsigned int c)
{
	struct rs_slot *s = &v->a.slot[slot];
	const char *why;

	memset(v->block, 0, RS_SB_SIZE);
	s->copy[c] = rs_sb_decode(v->block, &s->sb[c], &why);
	KUNIT_ASSERT_EQ(test, s->copy[c], RS_SBR_BLANK);
}

/* A device never written. */
static void t_blank(struct kunit *test, struct t_vol *v, unsigned int slot)
{
	t_blank_copy(test, v, slot, 0);
	t_blank_copy(test, v, slot, 1);
}

/* The commit of v->sb at generation @events to slot @slot as role @role: copy events % 2. */
static void t_commit(struct kunit *test, struct t_vol *v, unsigned int slot, unsigned int role,
		     u64 events)
{
	struct rs_sb sb = v->sb;

	sb.role = role;
	sb.events = events;
	KUNIT_ASSERT_EQ(test, t_put(v, slot, events % 2, &sb), RS_SBR_VALID);
}

/* A device that took the commits up to @events, made as role @role. */
static void t_member_as(struct kunit *test, struct t_vol *v, unsigned int slot,
			unsigned int role, u64 events)
{
	if (events == 1)
		t_blank_copy(test, v, slot, 0);
	else
		t_commit(test, v, slot, role, events - 1);
	t_commit(test, v, slot, role, events);
}

/* Slot @slot's own member at generation @events: that copy, and events - 1 in the other. */
static void t_member(struct kunit *test, struct t_vol *v, unsigned int slot, u64 events)
{
	t_member_as(test, v, slot, slot, events);
}

/* Every member at generation @events. */
static void t_members(struct kunit *test, struct t_vol *v, u64 events)
{
	unsigned int i;

	for (i = 0; i < v->a.n; i++)
		t_member(test, v, i, events);
}

/* Copy @c of @slot: a write of generation @events torn (one byte off). */
static void t_torn(struct kunit *test, struct t_vol *v, unsigned int slot, unsigned int c,
		   u64 events)
{
	struct rs_slot *s = &v->a.slot[slot];
	struct rs_sb sb = v->sb;
	const char *why;

	sb.role = slot;
	sb.events = events;
	rs_sb_encode(&sb, v->block);
	v->block[100] ^= 0x5a;
	s->copy[c] = rs_sb_decode(v->block, &s->sb[c], &why);
	KUNIT_ASSERT_EQ(test, s->copy[c], RS_SBR_CORRUPT);
}

static void t_assemble(struct t_vol *v)
{
	memset(&v->out, 0xa5, sizeof(v->out));
	rs_assemble(&v->a, &v->out);
}

/* It activates. */
#define T_OK(test, v)	t_ok(test, v, __LINE__)
static void t_ok(struct kunit *test, struct t_vol *v, int line)
{
	KUNIT_ASSERT_TRUE_MSG(test, !v->out.error, "line %d: refused: %s (member %d)", line,
			      v->out.error, v->out.bad_slot);
	KUNIT_EXPECT_EQ_MSG(test, v->out.bad_slot, -1, "line %d", line);
}

/* Refused about @slot (-1: no slot) with an error that says @what. */
#define T_REFUSED(test, v, slot, what)	t_refused(test, v, slot, what, __LINE__)
static void t_refused(struct kunit *test, struct t_vol *v, int slot, const char *what, int line)
{
	KUNIT_ASSERT_NOT_NULL_MSG(test, v->out.error, "line %d: activated, want '%s'", line,
				  what);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(v->out.error, what),
				  "line %d: error '%s', want '%s'", line, v->out.error, what);
	KUNIT_EXPECT_EQ_MSG(test, v->out.bad_slot, slot, "line %d: %s", line, v->out.error);
}

/* The decided member states, one letter each: A in sync, F failed, R rebuilding. */
#define T_STATES(test, v, want)	t_states(test, v, want, __LINE__)
static void t_states(struct kunit *test, struct t_vol *v, const char *want, int line)
{
	static const char letter[RS_NR_MSTATES] = {
		[RS_MS_NONE] = '-', [RS_MS_IN_SYNC] = 'A',
		[RS_MS_FAILED] = 'F', [RS_MS_REBUILDING] = 'R',
	};
	char got[RS_MAX_DEVS + 1] = "";
	unsigned int i;

	KUNIT_ASSERT_EQ_MSG(test, strlen(want), v->a.n, "line %d", line);
	for (i = 0; i < v->a.n; i++)
		got[i] = v->out.sb.state[i] < RS_NR_MSTATES ? letter[v->out.sb.state[i]] : '?';
	KUNIT_EXPECT_STREQ_MSG(test, got, want, "line %d", line);
	KUNIT_EXPECT_EQ_MSG(test, v->out.sb.n, v->a.n, "line %d", line);
	for (i = v->a.n; i < RS_MAX_DEVS; i++)
		KUNIT_EXPECT_EQ_MSG(test, v->out.sb.state[i], RS_MS_NONE, "line %d: member %u",
				    line, i);
}

/* rs_slot_newest: the valid copy with the higher generation, never a bad one. */
static void rs_sb_test_slot_newest(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);
	struct rs_slot *s = &v->a.slot[0];
	struct rs_sb sb = v->sb;

	t_member(test, v, 0, T_E);		/* T_E in copy 0, T_E - 1 in copy 1 */
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[0]);
	KUNIT_EXPECT_EQ(test, rs_slot_newest(s)->events, T_E);
	t_member(test, v, 0, T_E + 1);		/* T_E + 1 in copy 1 */
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[1]);
	KUNIT_EXPECT_EQ(test, rs_slot_newest(s)->events, T_E + 1);

	/* The newer copy torn: the older one is what the member holds. */
	t_torn(test, v, 0, 1, T_E + 1);
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[0]);
	t_member(test, v, 0, T_E);
	t_torn(test, v, 0, 0, T_E);
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[1]);

	/* A copy refused for a field value: its generation does not count. */
	t_member(test, v, 0, T_E);
	sb.role = 0;
	sb.events = T_E + 100;
	sb.resync_cp = T_STRIPES + 1;
	KUNIT_ASSERT_EQ(test, t_put(v, 0, 1, &sb), RS_SBR_CORRUPT);
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[0]);

	/* The first commit: one copy, the other blank. */
	t_member(test, v, 0, 1);
	KUNIT_EXPECT_EQ(test, s->copy[0], RS_SBR_BLANK);
	KUNIT_EXPECT_PTR_EQ(test, rs_slot_newest(s), &s->sb[1]);

	t_blank(test, v, 0);
	KUNIT_EXPECT_NULL(test, rs_slot_newest(s));
	t_torn(test, v, 0, 0, T_E);
	t_torn(test, v, 0, 1, T_E - 1);
	KUNIT_EXPECT_NULL(test, rs_slot_newest(s));
	t_blank_copy(test, v, 0, 1);
	KUNIT_EXPECT_NULL(test, rs_slot_newest(s));
}

/* A commit torn on one member before any other took it: the member's older copy serves. */
static void rs_sb_test_torn_write(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_torn(test, v, 2, (T_E + 1) % 2, T_E + 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	T_STATES(test, v, "AAAA");
}

/* Both copies bad (or one bad, one blank): refused, naming the member. */
static void rs_sb_test_both_corrupt(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_torn(test, v, 2, 0, T_E);
	t_torn(test, v, 2, 1, T_E - 1);
	t_assemble(v);
	T_REFUSED(test, v, 2, "corrupt");

	t_blank_copy(test, v, 2, 0);
	t_assemble(v);
	T_REFUSED(test, v, 2, "corrupt");

	/* Even when every other member is blank: not a new volume. */
	t_blank(test, v, 0);
	t_blank(test, v, 1);
	t_blank(test, v, 3);
	t_assemble(v);
	T_REFUSED(test, v, 2, "corrupt");
}

/* Every member blank: a new volume, resynced from 0, or taken as it is with nosync. */
static void rs_sb_test_fresh(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);
	unsigned int i;

	v->a.stripes = T_STRIPES - 3;		/* the table may be shorter */
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.n, T_N);
	KUNIT_EXPECT_EQ(test, v->out.sb.chunk, T_CHUNK);
	KUNIT_EXPECT_EQ(test, v->out.sb.data_offset, RS_DATA_OFFSET);
	KUNIT_EXPECT_EQ(test, v->out.sb.stripes, T_STRIPES);
	KUNIT_EXPECT_EQ(test, v->out.sb.resync_cp, 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.flags, 0U);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	T_STATES(test, v, "AAAA");
	for (i = 0; i < T_N; i++)
		KUNIT_EXPECT_EQ(test, v->out.sb.cp[i], 0ULL);

	v->a.nosync = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.sb.resync_cp, T_STRIPES);
	T_STATES(test, v, "AAAA");

	v = t_vol(test, RS_MAX_DEVS);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.fresh);
	T_STATES(test, v, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
}

/* A new volume with "-": refused. */
static void rs_sb_test_fresh_missing(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->a.slot[2].missing = true;
	t_assemble(v);
	T_REFUSED(test, v, 2, "missing member");

	v = t_vol(test, T_N);
	v->a.slot[0].missing = true;
	v->a.slot[1].missing = true;
	v->a.slot[2].missing = true;
	v->a.slot[3].missing = true;
	t_assemble(v);
	T_REFUSED(test, v, -1, "No member");

	/* A rebuild on blank members: nothing to rebuild from. */
	v = t_vol(test, T_N);
	v->a.slot[1].rebuild = true;
	t_assemble(v);
	T_REFUSED(test, v, 1, "new volume");
}

/* Every member at the same generation: the volume as it was. */
static void rs_sb_test_healthy(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->sb.resync_cp = 400;		/* a resync to carry on */
	v->sb.ctime = 1234;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E);
	KUNIT_EXPECT_MEMEQ(test, v->out.sb.uuid, t_uuid, sizeof(t_uuid));
	KUNIT_EXPECT_EQ(test, v->out.sb.stripes, T_STRIPES);
	KUNIT_EXPECT_EQ(test, v->out.sb.resync_cp, 400ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.ctime, 1234ULL);
	T_STATES(test, v, "AAAA");

	/* The first generation (copy 0 still blank), and the most members. */
	v = t_vol(test, RS_MAX_DEVS);
	t_members(test, v, 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	T_STATES(test, v, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
}

/*
 * A member the newest superblock marks failed stays failed: member 1 failed,
 * the others committed that (E + 1) without it, and it comes back at E.
 */
static void rs_sb_test_failed_stays_failed(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->sb.state[1] = RS_MS_FAILED;
	t_member(test, v, 0, T_E + 1);
	t_member(test, v, 2, T_E + 1);
	t_member(test, v, 3, T_E + 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E + 1);
	T_STATES(test, v, "AFAA");

	/* Also when it holds the newest generation itself. */
	t_member(test, v, 1, T_E + 1);
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AFAA");
	KUNIT_EXPECT_FALSE(test, test_bit(1, &v->out.stale));

	/* And long after: several commits since. */
	t_member(test, v, 1, T_E);
	t_member(test, v, 0, T_E + 7);
	t_member(test, v, 2, T_E + 7);
	t_member(test, v, 3, T_E + 7);
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AFAA");
}

/*
 * A commit cut short: v->sb at generation @events written to every slot not
 * in @skip (the others keep what they held). With the members at @events - 1
 * before, the volume the superblocks describe after a power cut inside it.
 */
static void t_torn_commit(struct kunit *test, struct t_vol *v, unsigned long skip, u64 events)
{
	unsigned int i;

	for (i = 0; i < v->a.n; i++)
		if (!test_bit(i, &skip))
			t_commit(test, v, i, i, events);
}

/*
 * Slot @i rebuilding at @cp at generation T_E - 1, then the commit that
 * says it is in sync (T_E) reached every member but it.
 */
static void t_rebuild_end_missed(struct kunit *test, struct t_vol *v, unsigned int i, u64 cp)
{
	v->sb.state[i] = RS_MS_REBUILDING;
	v->sb.cp[i] = cp;
	t_members(test, v, T_E - 1);
	v->sb.state[i] = RS_MS_IN_SYNC;
	v->sb.cp[i] = 0;
	t_torn_commit(test, v, BIT(i), T_E);
}

/*
 * Members one generation behind (1.11.12). A power cut inside a commit
 * leaves the members it had not reached at the generation before, with the
 * state the others held just before it: taken as the newest superblock
 * says, not stale (up to 1.11.11 stale: two of them refused the volume
 * though their data were current). Stale still when the member's copy is
 * not the others' previous state (another history), or when the commit
 * changed what vouches for that member's own data (its rebuild checkpoint,
 * the end of its rebuild), or when its own write of the commit was torn
 * (its other copy corrupt; blank, never written, is taken).
 */
static void rs_sb_test_one_behind(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);
	struct rs_sb before;

	/* The clean flag set at shutdown reached members 0 and 1 only. */
	t_members(test, v, T_E - 1);
	v->sb.flags = RS_SBF_CLEAN;
	t_torn_commit(test, v, BIT(2) | BIT(3), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E);
	KUNIT_EXPECT_EQ(test, v->out.sb.flags, (u32)RS_SBF_CLEAN);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(2) | BIT(3));
	T_STATES(test, v, "AAAA");

	/* Only member 0 took it. */
	t_members(test, v, T_E - 1);
	t_torn_commit(test, v, BIT(1) | BIT(2) | BIT(3), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(1) | BIT(2) | BIT(3));
	T_STATES(test, v, "AAAA");
	v->sb.flags = 0;

	/* A member failed by the commit stays failed; the one it missed is in. */
	t_members(test, v, T_E - 1);
	v->sb.state[3] = RS_MS_FAILED;
	v->sb.log_nonce = 0x3333;
	t_torn_commit(test, v, BIT(1) | BIT(3), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(1));
	KUNIT_EXPECT_EQ(test, v->out.sb.log_nonce, 0x3333ULL);
	T_STATES(test, v, "AAAF");

	/* Not the others' previous state: another history, stale. */
	v = t_vol(test, T_N);
	t_members(test, v, T_E);
	before = v->sb;
	v->sb.log_nonce = 0x4444;
	t_member(test, v, 2, T_E - 1);
	v->sb = before;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(2));
	KUNIT_EXPECT_EQ(test, v->out.behind, 0UL);
	T_STATES(test, v, "AAFA");

	/*
	 * Member 2 rebuilding; the commit of its next checkpoint missed it:
	 * in, at that checkpoint (the commit flushed it first; up to 1.11.16
	 * stale, and its chunks in the dirty regions below read as errors).
	 */
	v = t_vol(test, T_N);
	v->sb.state[2] = RS_MS_REBUILDING;
	v->sb.cp[2] = 100;
	t_members(test, v, T_E - 1);
	v->sb.cp[2] = 200;
	t_torn_commit(test, v, BIT(2), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(2));
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 200ULL);
	KUNIT_EXPECT_EQ(test, v->out.log_from, 200ULL);
	T_STATES(test, v, "AARA");
	/* ... and given with rebuild: the same checkpoint. */
	v->a.slot[2].rebuild = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 200ULL);
	T_STATES(test, v, "AARA");
	v->a.slot[2].rebuild = false;
	/* A rebuild started again from 0 in that commit: from 0. */
	t_members(test, v, T_E - 1);
	v->sb.cp[2] = 0;
	t_torn_commit(test, v, BIT(2), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(2));
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 0ULL);
	T_STATES(test, v, "AARA");
	v->sb.cp[2] = 200;
	/* ... and missed another member: that one is in, the checkpoint kept. */
	t_members(test, v, T_E - 1);
	v->sb.cp[2] = 300;
	t_torn_commit(test, v, BIT(0), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(0));
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 300ULL);
	T_STATES(test, v, "AARA");
	/*
	 * The end of its rebuild missed it: in sync, when its own copy has
	 * the whole volume rebuilt (up to 1.11.16 stale); stale from any
	 * other checkpoint, which no commit ends a rebuild at.
	 */
	t_rebuild_end_missed(test, v, 2, T_STRIPES);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(2));
	KUNIT_EXPECT_EQ(test, v->out.log_from, U64_MAX);
	T_STATES(test, v, "AAAA");
	t_rebuild_end_missed(test, v, 2, 300);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(2));
	T_STATES(test, v, "AAFA");
	/* An in-sync member the commit that failed it missed: stale, failed. */
	v->sb.state[2] = RS_MS_IN_SYNC;
	t_members(test, v, T_E - 1);
	v->sb.state[2] = RS_MS_FAILED;
	t_torn_commit(test, v, BIT(2), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, 0UL);
	T_STATES(test, v, "AAFA");

	/*
	 * The initial resync's checkpoint: the newest one (the member that
	 * missed its commit had flushed before any member was written).
	 */
	v = t_vol(test, T_N);
	v->sb.resync_cp = 400;
	t_members(test, v, T_E - 1);
	v->sb.resync_cp = 500;
	t_torn_commit(test, v, BIT(3), T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(3));
	KUNIT_EXPECT_EQ(test, v->out.sb.resync_cp, 500ULL);
	T_STATES(test, v, "AAAA");

	/*
	 * Its own write of the commit torn: the copy it would be taken from
	 * is its only good one, which the activation's commit overwrites.
	 * Stale.
	 */
	v->sb.resync_cp = T_STRIPES;
	t_members(test, v, T_E - 1);
	t_torn_commit(test, v, BIT(3), T_E);
	t_torn(test, v, 3, T_E % 2, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(3));
	KUNIT_EXPECT_EQ(test, v->out.behind, 0UL);
	T_STATES(test, v, "AAAF");

	/* A volume's first commit since it was created: the other copy blank. */
	t_members(test, v, 1);
	t_torn_commit(test, v, BIT(1) | BIT(3), 2);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.behind, BIT(1) | BIT(3));
	T_STATES(test, v, "AAAA");
}

/* Member 2 missed two commits (E - 2 against E): stale, failed, the volume degraded. */
static void rs_sb_test_stale(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_member(test, v, 2, T_E - 2);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(2));
	KUNIT_EXPECT_EQ(test, v->out.failed, BIT(2));
	T_STATES(test, v, "AAFA");

	/* Generations behind, at the last slot of the widest volume. */
	v = t_vol(test, RS_MAX_DEVS);
	t_members(test, v, T_E);
	t_member(test, v, RS_MAX_DEVS - 1, 3);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(RS_MAX_DEVS - 1));
	KUNIT_EXPECT_EQ(test, v->out.failed, BIT(RS_MAX_DEVS - 1));
	T_STATES(test, v, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAF");
}

/* Two members stale, or one stale and one missing: refused. */
static void rs_sb_test_two_stale(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_member(test, v, 1, T_E - 2);
	t_member(test, v, 3, T_E - 5);
	t_assemble(v);
	T_REFUSED(test, v, -1, "Two or more");
	/*
	 * Read while another table committed (a reload beside a live table):
	 * members read early only look stale; the resume decides (1.11.23).
	 */
	v->a.defer_stale = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	T_STATES(test, v, "AAAA");
	v->a.defer_stale = false;

	t_member(test, v, 1, T_E);
	v->a.slot[1].missing = true;
	t_assemble(v);
	T_REFUSED(test, v, -1, "Two or more");
}

/* A member of another volume: refused, naming it. */
static void rs_sb_test_uuid(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);
	struct rs_sb sb;

	t_members(test, v, T_E);
	sb = v->sb;
	memcpy(v->sb.uuid, t_other_uuid, sizeof(t_other_uuid));
	t_member(test, v, 2, T_E);
	t_assemble(v);
	T_REFUSED(test, v, 2, "another volume");

	t_member(test, v, 2, T_E - 3);
	t_assemble(v);
	T_REFUSED(test, v, 2, "another volume");

	/* One uuid byte. */
	v->sb = sb;
	v->sb.uuid[15] ^= 1;
	t_member(test, v, 3, T_E);
	v->sb = sb;
	t_member(test, v, 2, T_E);
	t_assemble(v);
	T_REFUSED(test, v, 3, "another volume");
}

/*
 * The member of another volume has seen more commits than this volume's
 * members: still it is the one named, not the members that agree.
 */
static void rs_sb_test_uuid_newer(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	memcpy(v->sb.uuid, t_other_uuid, sizeof(t_other_uuid));
	t_member(test, v, 2, T_E + 5);
	t_assemble(v);
	T_REFUSED(test, v, 2, "another volume");
}

/*
 * Two copies of one volume, each activated: a member of one among the
 * other's at the same generation, its log nonce another. Refused, naming
 * it, wherever it sits (1.11.6; before, taken as in sync); as many on each
 * side: refused, naming none. Given with rebuild, it is rebuilt, and the
 * state (nonce, flags) comes from the others even from a lower slot. A
 * generation behind, it is stale as any other.
 */
static void rs_sb_test_split(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->sb.log_nonce = 0x1111;
	t_members(test, v, T_E);
	v->sb.log_nonce = 0x2222;
	t_member(test, v, 2, T_E);
	t_assemble(v);
	T_REFUSED(test, v, 2, "another history");

	/* The odd one in the first slot, and cleanly shut down there. */
	t_members(test, v, T_E);
	v->sb.log_nonce = 0x1111;
	v->sb.flags = RS_SBF_CLEAN;
	t_member(test, v, 0, T_E);
	v->sb.flags = 0;
	t_assemble(v);
	T_REFUSED(test, v, 0, "another history");

	v->a.slot[0].rebuild = true;
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "RAAA");
	KUNIT_EXPECT_EQ(test, v->out.sb.log_nonce, 0x2222ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.flags, 0U);
	v->a.slot[0].rebuild = false;

	t_member(test, v, 0, T_E - 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.stale, BIT(0));
	T_STATES(test, v, "FAAA");

	/* Two and two. */
	t_member(test, v, 0, T_E);
	t_member(test, v, 1, T_E);
	t_assemble(v);
	T_REFUSED(test, v, -1, "as many on each side");

	/* One nonce everywhere: in sync. */
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AAAA");
}

/*
 * A generation its commits would take past RS_SB_MAX_EVENTS (a copy there
 * is refused as corrupt): not activated, with its own error (1.11.6).
 */
static void rs_sb_test_events_limit(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, RS_SB_MAX_EVENTS - RS_SB_EVENTS_SPARE);
	t_assemble(v);
	T_OK(test, v);
	t_members(test, v, RS_SB_MAX_EVENTS - RS_SB_EVENTS_SPARE + 1);
	t_assemble(v);
	T_REFUSED(test, v, -1, "too near its limit");
	t_members(test, v, RS_SB_MAX_EVENTS);
	t_assemble(v);
	T_REFUSED(test, v, -1, "too near its limit");
}

/* Members swapped in the table: refused. */
static void rs_sb_test_role(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_member_as(test, v, 1, 2, T_E);
	t_member_as(test, v, 2, 1, T_E);
	t_assemble(v);
	T_REFUSED(test, v, 1, "wrong place");

	/* The last member at the first slot: the others in place. */
	t_members(test, v, T_E);
	t_member_as(test, v, 0, 3, T_E);
	v->a.slot[3].missing = true;
	t_assemble(v);
	T_REFUSED(test, v, 0, "wrong place");
}

/* Chunk, member count or data offset other than the table's: refused. */
static void rs_sb_test_geometry(struct kunit *test)
{
	struct t_vol *v;
	unsigned int what, i;

	for (what = 0; what < 3; what++) {
		/* Every member made with other geometry, then only member 3. */
		for (i = 0; i < 2; i++) {
			v = t_vol(test, T_N);
			if (i)
				t_members(test, v, T_E);
			if (what == 0)
				v->sb.chunk = T_CHUNK * 2;
			else if (what == 1)
				v->sb.n = T_N + 1;
			else
				v->sb.data_offset = RS_DATA_OFFSET + T_CHUNK;
			v->sb.state[T_N] = what == 1 ? RS_MS_IN_SYNC : RS_MS_NONE;
			if (i)
				t_member(test, v, 3, T_E);
			else
				t_members(test, v, T_E);
			t_assemble(v);
			T_REFUSED(test, v, i ? 3 : 0, "geometry");
		}
	}
}

/*
 * A table whose region_size gives other bitmap regions than the volume's:
 * refused; without region_size the volume's own regions are kept.
 */
static void rs_sb_test_region(struct kunit *test)
{
	struct t_vol *v;
	unsigned int given;

	for (given = 0; given < 2; given++) {
		v = t_vol(test, T_N);
		v->sb.region_stripes = 64;
		t_members(test, v, T_E);
		v->a.region_stripes = 128;
		v->a.region_given = given;
		t_assemble(v);
		if (given) {
			T_REFUSED(test, v, 0, "region");
		} else {
			KUNIT_EXPECT_NULL(test, v->out.error);
			KUNIT_EXPECT_EQ(test, v->out.sb.region_stripes, 64U);
		}
	}
}

/* Members that disagree on the volume's size: refused. */
static void rs_sb_test_stripes(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->sb.stripes = T_STRIPES * 2;
	v->sb.resync_cp = T_STRIPES * 2;
	t_member(test, v, 2, T_E);
	t_assemble(v);
	T_REFUSED(test, v, 2, "volume size");

	t_member(test, v, 2, T_E - 1);
	t_assemble(v);
	T_REFUSED(test, v, 2, "volume size");
}

/* A table longer than the volume the superblocks describe: refused; shorter or equal: taken. */
static void rs_sb_test_length(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->a.stripes = T_STRIPES + 1;
	t_assemble(v);
	T_REFUSED(test, v, -1, "exceeds");

	v->a.stripes = T_STRIPES;
	t_assemble(v);
	T_OK(test, v);
	v->a.stripes = 1;
	v->a.usable_stripes = T_STRIPES * 4;	/* a grown device: the superblocks say */
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.stripes, T_STRIPES);
}

/*
 * Members smaller than the volume the superblocks describe (all of them
 * copied to smaller devices, say): the resync and rebuild would run past
 * their end. Refused, whatever the table's length.
 */
static void rs_sb_test_members_too_small(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->a.stripes = T_STRIPES / 2;
	v->a.usable_stripes = T_STRIPES - 1;
	t_assemble(v);
	T_REFUSED(test, v, -1, "");
	v->a.usable_stripes = T_STRIPES;
	t_assemble(v);
	T_OK(test, v);
}

/* "-" for an in-sync member: failed at activation, the volume degraded. */
static void rs_sb_test_missing(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->a.slot[1].missing = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.failed, BIT(1));
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	T_STATES(test, v, "AFAA");

	/* Whatever its slot holds: the table says it is not there. */
	t_blank(test, v, 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.failed, BIT(1));
	T_STATES(test, v, "AFAA");

	/* Missing while rebuilding: failed. */
	v->sb.state[1] = RS_MS_REBUILDING;
	v->sb.cp[1] = 300;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.failed, BIT(1));
	T_STATES(test, v, "AFAA");
}

/* A blank device with "rebuild": rebuilt from stripe 0. */
static void rs_sb_test_rebuild_blank(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->sb.state[3] = RS_MS_FAILED;
	t_members(test, v, T_E);
	t_blank(test, v, 3);
	v->a.slot[3].rebuild = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.fresh);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[3], 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	T_STATES(test, v, "AAAR");

	/* Replaced again in the middle of its rebuild: from 0 again. */
	v->sb.state[3] = RS_MS_REBUILDING;
	v->sb.cp[3] = 600;
	t_members(test, v, T_E);
	t_blank(test, v, 3);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[3], 0ULL);
	T_STATES(test, v, "AAAR");

	/* A failed member given back with "rebuild": from 0. */
	v->sb.state[3] = RS_MS_FAILED;
	v->sb.cp[3] = 600;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[3], 0ULL);
	T_STATES(test, v, "AAAR");
}

/* A blank device among initialized members, without "rebuild": refused. */
static void rs_sb_test_blank_member(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_blank(test, v, 3);
	t_assemble(v);
	T_REFUSED(test, v, 3, "no superblock");

	/* "rebuild" for another member does not make it right. */
	v->sb.state[0] = RS_MS_FAILED;
	t_members(test, v, T_E);
	t_blank(test, v, 3);
	v->a.slot[0].rebuild = true;
	t_assemble(v);
	T_REFUSED(test, v, 3, "no superblock");
}

/*
 * rebuild <idx> for a member in sync that holds the newest state, or the
 * one before it that the newest vouches for, after an unclean shutdown:
 * refused, since the dirty regions need its data to be resynced (up to
 * 1.11.17 rebuilt from 0, its chunks there unreadable for good; a table
 * saved during a rebuild carries rebuild <idx>). After a clean shutdown,
 * and for a device that missed more (stale), rebuilt from 0 as asked.
 */
static void rs_sb_test_rebuild_in_sync(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	v->a.slot[2].rebuild = true;
	/*
	 * A constructor beside the live table (a reload, as LVM does it):
	 * the superblocks are in use, not clean; decided at the resume.
	 */
	t_assemble(v);
	T_OK(test, v);
	v->a.at_resume = true;
	t_assemble(v);
	T_REFUSED(test, v, 2, "last shutdown was unclean");
	/* The commit that ended its rebuild reached every member but it. */
	t_rebuild_end_missed(test, v, 2, T_STRIPES);
	t_assemble(v);
	T_REFUSED(test, v, 2, "last shutdown was unclean");
	v->a.slot[2].rebuild = false;
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AAAA");
	/* After a clean shutdown: rebuilt from 0. */
	v->a.slot[2].rebuild = true;
	v->sb.flags = RS_SBF_CLEAN;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 0ULL);
	T_STATES(test, v, "AARA");
	v->sb.flags = 0;
	/* Two generations behind: stale, rebuilt from 0. */
	t_members(test, v, T_E);
	t_member(test, v, 2, T_E - 2);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[2], 0ULL);
	T_STATES(test, v, "AARA");
}

/* "rebuild" of a member the superblocks say is rebuilding: from its checkpoint. */
static void rs_sb_test_rebuild_resume(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);
	unsigned int i;

	v->sb.state[1] = RS_MS_REBUILDING;
	v->sb.cp[1] = 600;
	t_members(test, v, T_E);
	v->a.slot[1].rebuild = true;
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], 600ULL);
	KUNIT_EXPECT_EQ(test, v->out.failed, 0UL);
	KUNIT_EXPECT_EQ(test, v->out.stale, 0UL);
	T_STATES(test, v, "ARAA");

	/* The checkpoint of the newest copy, wherever it is: E + 1 in copy 1. */
	v->sb.cp[1] = 400;
	t_members(test, v, T_E);
	v->sb.cp[1] = 700;
	for (i = 0; i < T_N; i++)
		t_commit(test, v, i, i, T_E + 1);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], 700ULL);
	T_STATES(test, v, "ARAA");

	/* Its whole rebuild done but not yet in sync: resumes at the end. */
	v->sb.cp[1] = T_STRIPES;
	t_members(test, v, T_E + 2);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], T_STRIPES);
	T_STATES(test, v, "ARAA");

	/*
	 * A device of another copy of the volume, newer (or as new, with
	 * another nonce), in a slot the others say is rebuilding: rebuilt
	 * from 0 (up to 1.11.16 from their checkpoint, its own bytes below
	 * it read as rebuilt).
	 */
	v->sb.cp[1] = 600;
	t_members(test, v, T_E + 3);
	v->sb.state[1] = RS_MS_IN_SYNC;
	v->sb.cp[1] = 0;
	v->sb.log_nonce = 0x5555;
	t_member(test, v, 1, T_E + 9);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.events, T_E + 3);
	T_STATES(test, v, "ARAA");
	t_member(test, v, 1, T_E + 3);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], 0ULL);
	T_STATES(test, v, "ARAA");
	/* One generation ahead of the others: its previous copy is theirs. */
	v->sb.state[1] = RS_MS_REBUILDING;
	v->sb.cp[1] = 600;
	v->sb.log_nonce = 0;
	t_members(test, v, T_E + 3);
	v->sb.cp[1] = 650;
	t_commit(test, v, 1, 1, T_E + 4);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.sb.cp[1], 600ULL);
	T_STATES(test, v, "ARAA");
}

/*
 * log_cover (1.11.4): from which stripe the degraded-write log holds every
 * update since the newest superblock, taken from its member states before
 * the activation changes them; nowhere with RS_SBF_UNCOVERED.
 */
static void rs_sb_test_log_cover(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	/* Healthy at the cut: nothing covered, whatever is out now. */
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);
	v->a.slot[1].missing = true;
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AFAA");
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);
	v->a.slot[1].missing = false;
	v->a.slot[1].rebuild = true;
	t_blank(test, v, 1);
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "ARAA");
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);
	v->a.slot[1].rebuild = false;

	/* A member failed in it: every update was logged. */
	v->sb.state[2] = RS_MS_FAILED;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 0ULL);

	/* Rebuilding in it: the updates above its checkpoint. */
	v->sb.state[2] = RS_MS_REBUILDING;
	v->sb.cp[2] = 300;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 300ULL);
	v->a.slot[2].missing = true;
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AAFA");
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 300ULL);
	v->a.slot[2].missing = false;

	KUNIT_EXPECT_EQ(test, v->out.log_from, 300ULL);

	/*
	 * Regions an earlier cut left uncovered stay so, whatever the states;
	 * the records are replayed as the states say.
	 */
	v->sb.state[2] = RS_MS_FAILED;
	v->sb.flags = RS_SBF_UNCOVERED;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);
	KUNIT_EXPECT_EQ(test, v->out.log_from, 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.flags, (u32)RS_SBF_UNCOVERED);
	KUNIT_EXPECT_EQ(test, v->out.sb.uncovered_to, U64_MAX);

	/*
	 * 1.11.6: regions below a rebuilding member's checkpoint that a cut
	 * left, the member failed since: still uncovered below that
	 * checkpoint, covered above it (the log holds every update there).
	 */
	v->sb.uncovered_to = 300;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 300ULL);
	KUNIT_EXPECT_EQ(test, v->out.log_from, 0ULL);
	KUNIT_EXPECT_EQ(test, v->out.sb.uncovered_to, 300ULL);
	/* Rebuilding again, its checkpoint higher now: from there. */
	v->sb.state[2] = RS_MS_REBUILDING;
	v->sb.cp[2] = 400;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 400ULL);
	/* ... and lower: the boundary. */
	v->sb.cp[2] = 100;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, 300ULL);
	KUNIT_EXPECT_EQ(test, v->out.log_from, 100ULL);
}

/*
 * A volume made by 1.4.0 (no bitmap region in its superblocks): 1.4.0 kept
 * no degraded-write log, so no record covers a stripe, whatever the member
 * states say (1.11.7). Up to 1.11.6 a member failed in it made the whole
 * volume count as covered by a log that was never written.
 */
static void rs_sb_test_no_bitmap(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.no_bitmap);

	v->sb.region_stripes = 0;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.no_bitmap);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);

	v->sb.state[2] = RS_MS_FAILED;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.no_bitmap);
	KUNIT_EXPECT_EQ(test, v->out.log_from, U64_MAX);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);

	v->sb.state[2] = RS_MS_REBUILDING;
	v->sb.cp[2] = 300;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_EQ(test, v->out.log_from, U64_MAX);
	KUNIT_EXPECT_EQ(test, v->out.log_cover, U64_MAX);

	/* A table's region_size is taken, not refused: the volume has none. */
	v->sb.state[2] = RS_MS_IN_SYNC;
	v->a.region_stripes = 128;
	v->a.region_given = true;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_TRUE(test, v->out.no_bitmap);
	KUNIT_EXPECT_EQ(test, v->out.sb.region_stripes, 0U);
	v->a.region_given = false;

	/* With a bitmap, the same states: the log's. */
	v->sb.state[2] = RS_MS_REBUILDING;
	v->sb.region_stripes = 16;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	KUNIT_EXPECT_FALSE(test, v->out.no_bitmap);
	KUNIT_EXPECT_EQ(test, v->out.log_from, 300ULL);
}

/* No rebuild while the initial resync has not made the parity. */
static void rs_sb_test_rebuild_during_resync(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->sb.resync_cp = T_STRIPES - 1;
	v->sb.state[2] = RS_MS_FAILED;
	t_members(test, v, T_E);
	v->a.slot[2].rebuild = true;
	t_assemble(v);
	T_REFUSED(test, v, 2, "initial resync");

	t_blank(test, v, 2);
	t_assemble(v);
	T_REFUSED(test, v, 2, "initial resync");

	v->sb.resync_cp = 0;
	t_members(test, v, T_E);
	v->a.slot[2].rebuild = true;
	t_assemble(v);
	T_REFUSED(test, v, 2, "initial resync");

	/* Resync done: taken. */
	v->sb.resync_cp = T_STRIPES;
	t_members(test, v, T_E);
	t_assemble(v);
	T_OK(test, v);
	T_STATES(test, v, "AARA");
}

/* A failed member and a rebuilding one: refused. */
static void rs_sb_test_failed_and_rebuilding(struct kunit *test)
{
	struct t_vol *v = t_vol(test, T_N);

	v->sb.state[0] = RS_MS_FAILED;
	t_members(test, v, T_E);
	t_blank(test, v, 3);
	v->a.slot[3].rebuild = true;
	t_assemble(v);
	T_REFUSED(test, v, -1, "Two or more");

	/* Already both in the superblocks, without "rebuild". */
	v->sb.state[3] = RS_MS_REBUILDING;
	v->sb.cp[3] = 10;
	t_members(test, v, T_E);
	v->a.slot[3].rebuild = false;
	t_assemble(v);
	T_REFUSED(test, v, -1, "Two or more");

	/* Missing, and another rebuilding. */
	v->sb.state[0] = RS_MS_IN_SYNC;
	t_members(test, v, T_E);
	v->a.slot[0].missing = true;
	t_assemble(v);
	T_REFUSED(test, v, -1, "Two or more");
}

static void rs_sb_test_names(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, rs_mstate_name(RS_MS_IN_SYNC), "in_sync");
	KUNIT_EXPECT_STREQ(test, rs_mstate_name(RS_MS_FAILED), "failed");
	KUNIT_EXPECT_STREQ(test, rs_mstate_name(RS_MS_REBUILDING), "rebuilding");
	KUNIT_EXPECT_STREQ(test, rs_mstate_name(RS_NR_MSTATES), "unknown");
	KUNIT_EXPECT_STREQ(test, rs_mstate_name(~0U), "unknown");
}

static struct kunit_case rs_sb_cases[] = {
	KUNIT_CASE(rs_sb_test_layout),
	KUNIT_CASE(rs_sb_test_roundtrip),
	KUNIT_CASE(rs_sb_test_blank),
	KUNIT_CASE(rs_sb_test_every_byte),
	KUNIT_CASE(rs_sb_test_bad_fields),
	KUNIT_CASE(rs_sb_test_slot_newest),
	KUNIT_CASE(rs_sb_test_torn_write),
	KUNIT_CASE(rs_sb_test_both_corrupt),
	KUNIT_CASE(rs_sb_test_fresh),
	KUNIT_CASE(rs_sb_test_fresh_missing),
	KUNIT_CASE(rs_sb_test_healthy),
	KUNIT_CASE(rs_sb_test_failed_stays_failed),
	KUNIT_CASE(rs_sb_test_one_behind),
	KUNIT_CASE(rs_sb_test_stale),
	KUNIT_CASE(rs_sb_test_two_stale),
	KUNIT_CASE(rs_sb_test_uuid),
	KUNIT_CASE(rs_sb_test_uuid_newer),
	KUNIT_CASE(rs_sb_test_split),
	KUNIT_CASE(rs_sb_test_events_limit),
	KUNIT_CASE(rs_sb_test_role),
	KUNIT_CASE(rs_sb_test_geometry),
	KUNIT_CASE(rs_sb_test_region),
	KUNIT_CASE(rs_sb_test_stripes),
	KUNIT_CASE(rs_sb_test_length),
	KUNIT_CASE(rs_sb_test_members_too_small),
	KUNIT_CASE(rs_sb_test_missing),
	KUNIT_CASE(rs_sb_test_rebuild_blank),
	KUNIT_CASE(rs_sb_test_blank_member),
	KUNIT_CASE(rs_sb_test_rebuild_resume),
	KUNIT_CASE(rs_sb_test_rebuild_in_sync),
	KUNIT_CASE(rs_sb_test_log_cover),
	KUNIT_CASE(rs_sb_test_no_bitmap),
	KUNIT_CASE(rs_sb_test_rebuild_during_resync),
	KUNIT_CASE(rs_sb_test_failed_and_rebuilding),
	KUNIT_CASE(rs_sb_test_names),
	{}
};

static struct kunit_suite rs_sb_suite = {
	.name = "rainssd-sb",
	.test_cases = rs_sb_cases,
};

kunit_test_suites(&rs_sb_suite);
