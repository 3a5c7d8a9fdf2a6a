// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd RAID1 tier, the pure part (see rainssd-tier.h).
 */
#include <linux/crc32c.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "rainssd-compat.h"
#include "rainssd-tier.h"

/* ---- placement ---- */

/*
 * HybRAID's placement of one write to one stripe (Algorithm 1, lines
 * 10-29; Table 2; Fig. 8):
 *
 *  - a first write goes to RAID-5 when it is an aligned full stripe, else to
 *    RAID1 (its history there starts at 1);
 *  - a small or partial write to a RAID-5 stripe whose history has reached
 *    the threshold moves it to RAID1 (online migration; history 1 there);
 *  - an aligned full-stripe write to a RAID1 stripe whose history has
 *    reached @home_threshold moves it to RAID-5 (no data moved; HybRAID
 *    uses the migration threshold here, the default 1 moves it at once);
 *  - any other write stays where the stripe is, and counts in its history.
 *
 * Where RAID1 is the answer but the tier has no room (or placement is
 * frozen), the write goes to RAID-5, or stays in RAID1 when the stripe is
 * there (frozen: no stripe leaves either).
 */
void rs_tier_place(const struct rs_place_in *in, struct rs_place_out *out)
{
	unsigned int hist = min(in->hist, RS_MAX_MIGRATION_THRESHOLD);
	bool can_enter = in->room && !in->frozen;

	out->hist = hist < RS_MAX_MIGRATION_THRESHOLD ? hist + 1 : hist;
	/*
	 * A write the home could not hold (@home_short: it covers the chunk
	 * of a member out, and the stripe's parity is not known good) enters
	 * the tier when it can: at home it would fail (rs_r5_readable()); in
	 * the tier it is read back from a copy on a live member.
	 */
	if (!in->in_tier && !in->written) {
		out->hist = 1;
		out->place = (!in->full || in->home_short) && can_enter ?
			     RS_PLACE_TO_R1 : RS_PLACE_R5;
		return;
	}
	if (!in->in_tier) {
		if ((in->home_short || (!in->full && hist >= in->threshold)) && can_enter) {
			out->place = RS_PLACE_TO_R1;
			out->hist = 1;
			return;
		}
		out->place = RS_PLACE_R5;
		return;
	}
	/* Nor home then: up to 1.11.15 it failed, its copies given up on the way. */
	if (in->full && hist >= in->home_threshold && !in->frozen && !in->home_short) {
		out->place = RS_PLACE_TO_R5;
		out->hist = 1;
		return;
	}
	out->place = RS_PLACE_R1;
}

const char *rs_place_name(enum rs_place p)
{
	static const char * const names[] = { "r5", "r1", "to_r1", "to_r5" };

	return p < ARRAY_SIZE(names) ? names[p] : "?";
}

/* ---- layout ---- */

static u32 rs_div_up32(u64 a, u64 b)
{
	return min_t(u64, div64_u64(a + b - 1, b), U32_MAX);
}

/*
 * Lay out a tier of @sectors per member starting at member sector @start
 * for a volume of @stripes stripes of geometry @g. -EINVAL when it cannot
 * hold one stripe, -E2BIG when its table would be too large (more than
 * 2^24 records), -EOVERFLOW when the volume has more stripes than a tier
 * can map (RS_TIER_MAX_STRIPES; up to 1.11.22 a volume of 2^29 stripes or
 * more made the stripe map's kvcalloc() pass INT_MAX bytes: a WARN, and
 * the table refused as if memory were short).
 */
int rs_tier_layout(struct rs_tier_layout *t, const struct rs_geom *g, u64 stripes,
		   u64 start, u64 sectors)
{
	unsigned int k = g->n - 1;
	u64 slots, recs, table;

	memset(t, 0, sizeof(*t));
	if (stripes > RS_TIER_MAX_STRIPES)
		return -EOVERFLOW;
	t->start = start;
	t->sectors = sectors;
	t->n = g->n;
	t->chunk = g->chunk;
	t->rows = max(1U, g->chunk / RS_TIER_ROW_SECTORS);
	t->pbytes = ALIGN(DIV_ROUND_UP(t->rows, 8), 4);
	t->ksize = 12 + t->pbytes;
	t->rec_size = ALIGN(16 + k * t->ksize, 8);
	t->recs_per_block = (RS_TIER_BLOCK - RS_TIER_HDR) / t->rec_size;
	t->wb_blocks = rs_div_up32(stripes, (u64)(RS_TIER_BLOCK - RS_TIER_HDR) * 8);
	/*
	 * The records the slots would allow if the table took no room, then
	 * the table for that many and the slots what is left leaves.
	 */
	slots = div_u64(sectors, g->chunk);
	recs = div_u64(slots * g->n, 2 * k);
	if (recs > (1U << 24))
		return -E2BIG;
	t->rec_blocks = rs_div_up32(recs, t->recs_per_block);
	t->blocks = 1 + t->wb_blocks + t->rec_blocks;
	t->vec_blocks = DIV_ROUND_UP(t->blocks, RS_TIER_VEC_PER_BLOCK);
	table = 2ULL * (t->blocks + t->vec_blocks) * RS_TIER_BLOCK_SECTORS;
	table = round_up(table, g->chunk);
	if (table >= sectors)
		return -EINVAL;
	t->slots_start = start + table;
	t->slots = div_u64(sectors - table, g->chunk);
	t->records = min_t(u64, div_u64((u64)t->slots * g->n, 2 * k),
			   (u64)t->rec_blocks * t->recs_per_block);
	if (!t->records)
		return -EINVAL;
	return 0;
}

/* Member sector of block @block of table copy @copy (0 or 1). */
u64 rs_tier_copy_sector(const struct rs_tier_layout *t, unsigned int copy, u32 block)
{
	return t->start + ((u64)copy * t->blocks + block) * RS_TIER_BLOCK_SECTORS;
}

/* Member sector of commit record slot @slot (0 or 1), after the table's two copies. */
u64 rs_tier_vec_sector(const struct rs_tier_layout *t, unsigned int slot)
{
	return t->start + (2ULL * t->blocks + (u64)slot * t->vec_blocks) * RS_TIER_BLOCK_SECTORS;
}

u64 rs_tier_slot_sector(const struct rs_tier_layout *t, u32 slot)
{
	return t->slots_start + (u64)slot * t->chunk;
}

/* The table block record @rec is in, and its byte offset there. */
u32 rs_tier_rec_block(const struct rs_tier_layout *t, u32 rec)
{
	return 1 + t->wb_blocks + rec / t->recs_per_block;
}

unsigned int rs_tier_rec_offset(const struct rs_tier_layout *t, u32 rec)
{
	return RS_TIER_HDR + (rec % t->recs_per_block) * t->rec_size;
}

/* ---- records ---- */

u64 rs_tier_r_stripe(const u8 *r)
{
	return get_unaligned_le64(r) - 1;
}

u64 rs_tier_r_seq(const u8 *r)
{
	return get_unaligned_le64(r + 8);
}

void rs_tier_r_set_head(u8 *r, u64 stripe, u64 seq)
{
	put_unaligned_le64(stripe + 1, r);
	put_unaligned_le64(seq, r + 8);
}

static const u8 *rs_tier_r_k(const struct rs_tier_layout *t, const u8 *r, unsigned int k)
{
	return r + 16 + k * t->ksize;
}

void rs_tier_r_copy(const struct rs_tier_layout *t, const u8 *r, unsigned int k,
		    unsigned int c, unsigned int *member, u32 *slot)
{
	const u8 *e = rs_tier_r_k(t, r, k);

	*member = e[c];
	*slot = get_unaligned_le32(e + 4 + 4 * c);
}

void rs_tier_r_set_copy(const struct rs_tier_layout *t, u8 *r, unsigned int k,
			unsigned int c, unsigned int member, u32 slot)
{
	u8 *e = (u8 *)rs_tier_r_k(t, r, k);

	e[c] = member;
	put_unaligned_le32(slot, e + 4 + 4 * c);
}

bool rs_tier_r_row(const struct rs_tier_layout *t, const u8 *r, unsigned int k,
		   unsigned int row)
{
	const u8 *b = rs_tier_r_k(t, r, k) + 12;

	return b[row / 8] & BIT(row % 8);
}

/* Mark rows [start, end) of chunk @k written in the tier. */
void rs_tier_r_set_rows(const struct rs_tier_layout *t, u8 *r, unsigned int k,
			unsigned int start, unsigned int end)
{
	u8 *b = (u8 *)rs_tier_r_k(t, r, k) + 12;
	unsigned int row;

	for (row = start; row < end && row < t->rows; row++)
		b[row / 8] |= BIT(row % 8);
}

void rs_tier_r_clear(const struct rs_tier_layout *t, u8 *r)
{
	memset(r, 0, t->rec_size);
}

/*
 * Whether a used record makes sense for this layout and a volume of
 * @stripes stripes: 0, or -EINVAL with the reason in @why. Whether two
 * records claim one slot is the loader's to check.
 */
int rs_tier_r_check(const struct rs_tier_layout *t, const u8 *r, u64 stripes,
		    const char **why)
{
	unsigned int k, c, m[2], row, b;
	u32 slot[2];
	const u8 *e;

	if (rs_tier_r_stripe(r) >= stripes) {
		*why = "record of a stripe beyond the volume";
		return -EINVAL;
	}
	if (rs_tier_r_seq(r) > RS_TIER_SEQ_LIMIT) {
		*why = "record with a sequence number near its limit";
		return -EINVAL;
	}
	for (k = 0; k < t->n - 1; k++) {
		e = rs_tier_r_k(t, r, k);
		if (e[2] || e[3]) {
			*why = "record with non-zero padding";
			return -EINVAL;
		}
		for (c = 0; c < 2; c++) {
			rs_tier_r_copy(t, r, k, c, &m[c], &slot[c]);
			if (m[c] >= t->n || slot[c] >= t->slots) {
				*why = "record with a member or slot out of range";
				return -EINVAL;
			}
		}
		if (m[0] == m[1]) {
			*why = "record with both copies on one member";
			return -EINVAL;
		}
		for (row = t->rows; row < t->pbytes * 8; row++) {
			b = row / 8;
			if (e[12 + b] & BIT(row % 8)) {
				*why = "record with rows beyond the chunk";
				return -EINVAL;
			}
		}
	}
	for (b = 16 + (t->n - 1) * t->ksize; b < t->rec_size; b++) {
		if (r[b]) {
			*why = "record with non-zero padding";
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- blocks ---- */

/*
 * Every block starts with RS_TIER_HDR bytes: le64 magic, le32 format,
 * le32 crc32c (of the whole block with this field zero), 16 bytes volume
 * UUID, le32 block number, le32 zero, le64 generation, then zeros.
 */
void rs_tier_blk_seal(void *block, const struct rs_tier_blk *h)
{
	u8 *b = block;
	u32 crc;

	memset(b, 0, RS_TIER_HDR);
	put_unaligned_le64(RS_TIER_MAGIC, b);
	put_unaligned_le32(RS_TIER_FORMAT, b + 8);
	memcpy(b + 16, h->uuid, 16);
	put_unaligned_le32(h->block, b + 32);
	put_unaligned_le64(h->gen, b + 40);
	crc = ~crc32c(~0U, b, RS_TIER_BLOCK);
	put_unaligned_le32(crc, b + 12);
}

/*
 * Check block copy @block, expected to be block @want of the volume @uuid:
 * blank (all zero), valid (its generation in @gen), or corrupt.
 */
enum rs_tier_blk_kind rs_tier_blk_check(const void *block, const u8 *uuid, u32 want,
					u64 *gen)
{
	const u8 *b = block;
	u32 crc = get_unaligned_le32(b + 12);
	u8 hdr[RS_TIER_HDR];
	u32 got;
	unsigned int i;

	*gen = 0;
	if (get_unaligned_le64(b) != RS_TIER_MAGIC) {
		for (i = 0; i < RS_TIER_BLOCK; i++)
			if (b[i])
				return RS_TIER_BLK_CORRUPT;
		return RS_TIER_BLK_BLANK;
	}
	memcpy(hdr, b, RS_TIER_HDR);
	put_unaligned_le32(0, hdr + 12);
	got = crc32c(~0U, hdr, RS_TIER_HDR);
	got = ~crc32c(got, b + RS_TIER_HDR, RS_TIER_BLOCK - RS_TIER_HDR);
	if (got != crc || get_unaligned_le32(b + 8) != RS_TIER_FORMAT ||
	    memcmp(b + 16, uuid, 16) || get_unaligned_le32(b + 32) != want ||
	    get_unaligned_le32(b + 36) || memchr_inv(b + 48, 0, RS_TIER_HDR - 48))
		return RS_TIER_BLK_CORRUPT;
	*gen = get_unaligned_le64(b + 40);
	return RS_TIER_BLK_VALID;
}

/*
 * Block 0's payload: the layout (le64 start, le64 sectors, le32 chunk, le32
 * members, le32 rows, le32 record size, le32 written-bitmap blocks, le32
 * record blocks, le32 slots, le32 records, le32 commit-record blocks),
 * zeros after.
 */
void rs_tier_hdr_encode(const struct rs_tier_layout *t, void *block)
{
	u8 *p = (u8 *)block + RS_TIER_HDR;

	memset(p, 0, RS_TIER_BLOCK - RS_TIER_HDR);
	put_unaligned_le64(t->start, p);
	put_unaligned_le64(t->sectors, p + 8);
	put_unaligned_le32(t->chunk, p + 16);
	put_unaligned_le32(t->n, p + 20);
	put_unaligned_le32(t->rows, p + 24);
	put_unaligned_le32(t->rec_size, p + 28);
	put_unaligned_le32(t->wb_blocks, p + 32);
	put_unaligned_le32(t->rec_blocks, p + 36);
	put_unaligned_le32(t->slots, p + 40);
	put_unaligned_le32(t->records, p + 44);
	put_unaligned_le32(t->vec_blocks, p + 48);
}

bool rs_tier_hdr_matches(const struct rs_tier_layout *t, const void *block)
{
	const u8 *p = (const u8 *)block + RS_TIER_HDR;

	return get_unaligned_le64(p) == t->start && get_unaligned_le64(p + 8) == t->sectors &&
	       get_unaligned_le32(p + 16) == t->chunk && get_unaligned_le32(p + 20) == t->n &&
	       get_unaligned_le32(p + 24) == t->rows && get_unaligned_le32(p + 28) == t->rec_size &&
	       get_unaligned_le32(p + 32) == t->wb_blocks &&
	       get_unaligned_le32(p + 36) == t->rec_blocks &&
	       get_unaligned_le32(p + 40) == t->slots && get_unaligned_le32(p + 44) == t->records &&
	       get_unaligned_le32(p + 48) == t->vec_blocks &&
	       !memchr_inv(p + 52, 0, RS_TIER_BLOCK - RS_TIER_HDR - 52);
}

/* ---- mirror placement ---- */

bool rs_tier_choose(unsigned int n, unsigned long dead, const u32 *queued, u32 *free,
		    unsigned int nk, u8 pair[][2])
{
	u32 extra[RS_MAX_DEVS] = {};
	unsigned int k, c, m, best;
	u64 cost, bcost;

	for (k = 0; k < nk; k++) {
		for (c = 0; c < 2; c++) {
			best = n;
			bcost = U64_MAX;
			for (m = 0; m < n; m++) {
				if ((dead & BIT(m)) || !free[m] || (c && m == pair[k][0]))
					continue;
				cost = (u64)queued[m] + extra[m];
				if (best == n || cost < bcost ||
				    (cost == bcost && free[m] > free[best])) {
					best = m;
					bcost = cost;
				}
			}
			if (best == n)
				return false;
			pair[k][c] = best;
			free[best]--;
			extra[best]++;
		}
	}
	return true;
}

/* ---- offline migration ---- */

/*
 * Whether the offline migration should run: it starts when the records in
 * use pass @high_pct of the tier and, once @running, goes on until they
 * are at or below @low_pct.
 */
bool rs_tier_should_migrate(u32 used, u32 records, unsigned int low_pct, unsigned int high_pct,
			    bool running)
{
	u64 u = (u64)used * 100;

	if (!records)
		return false;
	if (running)
		return u > (u64)records * low_pct;
	return u > (u64)records * high_pct;
}
