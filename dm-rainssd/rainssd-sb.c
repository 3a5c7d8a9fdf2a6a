// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd superblock encoding and activation decisions (see
 * rainssd-sb.h). Pure functions: KUnit checks every decision.
 */
#include <linux/crc32c.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include "rainssd-sb.h"

static const char * const rs_mstate_names[RS_NR_MSTATES] = {
	[RS_MS_NONE] = "none",
	[RS_MS_IN_SYNC] = "in_sync",
	[RS_MS_FAILED] = "failed",
	[RS_MS_REBUILDING] = "rebuilding",
};

const char *rs_mstate_name(unsigned int st)
{
	return st < RS_NR_MSTATES ? rs_mstate_names[st] : "unknown";
}

static u32 rs_sb_csum(const void *block)
{
	const struct rs_sb_disk *d = block;
	size_t off = offsetof(struct rs_sb_disk, csum);
	u32 zero = 0, c;

	c = crc32c(~0U, block, off);
	c = crc32c(c, &zero, sizeof(zero));
	off += sizeof(d->csum);
	c = crc32c(c, (const u8 *)block + off, RS_SB_SIZE - off);
	return ~c;
}

/* @sb into the RS_SB_SIZE bytes at @block, checksummed. */
void rs_sb_encode(const struct rs_sb *sb, void *block)
{
	struct rs_sb_disk *d = block;
	unsigned int i;

	BUILD_BUG_ON(sizeof(struct rs_sb_disk) > RS_SB_SIZE);
	memset(block, 0, RS_SB_SIZE);
	d->magic = cpu_to_le64(RS_SB_MAGIC);
	d->version = cpu_to_le32(sb->tier_sectors ? RS_SB_VERSION_TIER : RS_SB_VERSION);
	memcpy(d->uuid, sb->uuid, sizeof(d->uuid));
	d->events = cpu_to_le64(sb->events);
	d->chunk_sectors = cpu_to_le32(sb->chunk);
	d->nr_members = cpu_to_le32(sb->n);
	d->data_offset = cpu_to_le64(sb->data_offset);
	d->stripes = cpu_to_le64(sb->stripes);
	d->resync_checkpoint = cpu_to_le64(sb->resync_cp);
	d->role = cpu_to_le32(sb->role);
	d->flags = cpu_to_le32(sb->flags);
	d->ctime = cpu_to_le64(sb->ctime);
	d->region_stripes = cpu_to_le32(sb->region_stripes);
	d->log_nonce = cpu_to_le64(sb->log_nonce);
	d->tier_start = cpu_to_le64(sb->tier_sectors ? sb->tier_start : 0);
	d->tier_sectors = cpu_to_le64(sb->tier_sectors);
	if ((sb->flags & RS_SBF_UNCOVERED) && sb->uncovered_to != U64_MAX)
		d->uncovered_to = cpu_to_le64(sb->uncovered_to);
	for (i = 0; i < sb->n && i < RS_MAX_DEVS; i++) {
		d->members[i].state = sb->state[i];
		d->members[i].checkpoint = cpu_to_le64(sb->cp[i]);
	}
	d->csum = cpu_to_le32(rs_sb_csum(block));
}

/*
 * Decode one copy. BLANK when it has no magic (never written by us);
 * CORRUPT, with *@why set, when it has the magic but anything else is
 * wrong; VALID with @sb filled otherwise.
 */
enum rs_sb_read rs_sb_decode(const void *block, struct rs_sb *sb, const char **why)
{
	const struct rs_sb_disk *d = block;
	unsigned int i;
	u64 end, data;

	*why = NULL;
	if (le64_to_cpu(d->magic) != RS_SB_MAGIC)
		return RS_SBR_BLANK;
	if (le32_to_cpu(d->csum) != rs_sb_csum(block)) {
		*why = "bad checksum";
		return RS_SBR_CORRUPT;
	}
	if (le32_to_cpu(d->version) != RS_SB_VERSION &&
	    le32_to_cpu(d->version) != RS_SB_VERSION_TIER) {
		*why = "unknown format version";
		return RS_SBR_CORRUPT;
	}
	memset(sb, 0, sizeof(*sb));
	memcpy(sb->uuid, d->uuid, sizeof(sb->uuid));
	sb->events = le64_to_cpu(d->events);
	sb->chunk = le32_to_cpu(d->chunk_sectors);
	sb->n = le32_to_cpu(d->nr_members);
	sb->data_offset = le64_to_cpu(d->data_offset);
	sb->stripes = le64_to_cpu(d->stripes);
	sb->resync_cp = le64_to_cpu(d->resync_checkpoint);
	sb->role = le32_to_cpu(d->role);
	sb->flags = le32_to_cpu(d->flags);
	sb->ctime = le64_to_cpu(d->ctime);
	sb->region_stripes = le32_to_cpu(d->region_stripes);
	sb->log_nonce = le64_to_cpu(d->log_nonce);
	sb->tier_start = le64_to_cpu(d->tier_start);
	sb->tier_sectors = le64_to_cpu(d->tier_sectors);
	sb->uncovered_to = le64_to_cpu(d->uncovered_to);
	if (d->pad0 || memchr_inv(d->reserved, 0, sizeof(d->reserved))) {
		*why = "reserved bytes not zero";
		return RS_SBR_CORRUPT;
	}
	if (sb->uncovered_to && !(sb->flags & RS_SBF_UNCOVERED)) {
		*why = "an uncovered boundary without its flag";
		return RS_SBR_CORRUPT;
	}
	if ((sb->flags & RS_SBF_UNCOVERED) && !sb->uncovered_to)
		sb->uncovered_to = U64_MAX;
	/*
	 * Format 1 has no tier; format 2 has one, after the data area and
	 * ending within a member (up to 1.11.16 an end past 2^64 sectors
	 * passed every size check, and sized the tier's bitmaps from it), of
	 * no more sectors than the table's tier_size can give (up to 1.11.22
	 * more was taken, and the status printed it cut to 32 bits: a table
	 * that reload refused).
	 */
	if ((le32_to_cpu(d->version) == RS_SB_VERSION) != !sb->tier_sectors ||
	    sb->tier_sectors > U32_MAX ||
	    (sb->tier_sectors &&
	     (check_add_overflow(sb->tier_start, sb->tier_sectors, &end) ||
	      check_mul_overflow(sb->stripes, (u64)sb->chunk, &data) ||
	      check_add_overflow(data, sb->data_offset, &data) ||
	      sb->tier_start < data))) {
		*why = "impossible tier fields";
		return RS_SBR_CORRUPT;
	}
	if (sb->n < RS_MIN_DEVS || sb->n > RS_MAX_DEVS || sb->role >= sb->n ||
	    sb->chunk < RS_MIN_CHUNK || sb->chunk > RS_MAX_CHUNK ||
	    (sb->chunk & (sb->chunk - 1)) || sb->resync_cp > sb->stripes ||
	    !sb->events || sb->events > RS_SB_MAX_EVENTS || (sb->flags & ~RS_SBF_KNOWN)) {
		*why = "impossible field values";
		return RS_SBR_CORRUPT;
	}
	/* Its regions must fit the bitmap's area (0: a volume of 1.4.0, none). */
	if (sb->region_stripes &&
	    sb->stripes > (u64)RS_BITMAP_MAX_BYTES * 8 * sb->region_stripes) {
		*why = "more bitmap regions than its area holds";
		return RS_SBR_CORRUPT;
	}
	for (i = 0; i < RS_MAX_DEVS; i++) {
		u8 st = d->members[i].state;

		if ((i < sb->n && (st == RS_MS_NONE || st >= RS_NR_MSTATES)) ||
		    (i >= sb->n && st != RS_MS_NONE)) {
			*why = "impossible member state";
			return RS_SBR_CORRUPT;
		}
		sb->state[i] = st;
		sb->cp[i] = le64_to_cpu(d->members[i].checkpoint);
		if (st == RS_MS_REBUILDING && sb->cp[i] > sb->stripes) {
			*why = "rebuild checkpoint beyond the volume";
			return RS_SBR_CORRUPT;
		}
	}
	return RS_SBR_VALID;
}

/* The newest valid copy of a slot, or NULL. */
const struct rs_sb *rs_slot_newest(const struct rs_slot *s)
{
	const struct rs_sb *best = NULL;
	unsigned int c;

	for (c = 0; c < RS_SB_COPIES; c++)
		if (s->copy[c] == RS_SBR_VALID && (!best || s->sb[c].events > best->events))
			best = &s->sb[c];
	return best;
}

static bool rs_slot_blank(const struct rs_slot *s)
{
	unsigned int c;

	for (c = 0; c < RS_SB_COPIES; c++)
		if (s->copy[c] != RS_SBR_BLANK)
			return false;
	return true;
}

/* Corrupt: a copy with the magic but bad contents, and no valid copy besides. */
static bool rs_slot_corrupt(const struct rs_slot *s)
{
	return !rs_slot_blank(s) && !rs_slot_newest(s);
}

static void rs_refuse(struct rs_assembly *out, int slot, const char *error)
{
	out->error = error;
	out->bad_slot = slot;
}

/*
 * The superblock the volume's state comes from: among the members' newest
 * valid copies, those of the volume most members belong to (so that a
 * member of another volume is the one named, even when it is newer), the
 * newest. Members given with rebuild are candidates only when no other
 * member has a superblock: their data are rebuilt, and a copy of the
 * volume used apart must not bring its state along (1.11.6). NULL when
 * every present member is blank.
 */
static const struct rs_sb *rs_assemble_reference(const struct rs_activation *a)
{
	const struct rs_sb *best = NULL, *s, *t;
	unsigned int i, j, votes, best_votes = 0, pass;

	for (pass = 0; pass < 2 && !best; pass++) {
		for (i = 0; i < a->n; i++) {
			if (a->slot[i].missing || (!pass && a->slot[i].rebuild))
				continue;
			s = rs_slot_newest(&a->slot[i]);
			if (!s)
				continue;
			votes = 0;
			for (j = 0; j < a->n; j++) {
				t = a->slot[j].missing ? NULL : rs_slot_newest(&a->slot[j]);
				if (t)
					votes += !memcmp(s->uuid, t->uuid, sizeof(s->uuid));
			}
			if (votes > best_votes ||
			    (votes == best_votes && s->events > best->events)) {
				best = s;
				best_votes = votes;
			}
		}
	}
	return best;
}

/*
 * Whether members at the newest generation have different histories: every
 * commit writes one superblock, log nonce included, to every member in
 * service, and every activation and member failure draws a new nonce, so
 * equal generations with different nonces are copies of one volume
 * activated apart (a clone of the members, each side used). Their data
 * differ and neither parity covers the other's writes. A member given with
 * rebuild takes no part: its data are rebuilt, whoever it came from.
 * Returns 0 when they agree, 1 with *@slot a member outside the nonce most
 * of them share, -1 when no nonce has more members than every other.
 */
static int rs_assemble_split(const struct rs_activation *a, const struct rs_sb *newest,
			     int *slot)
{
	const struct rs_sb *nc[RS_MAX_DEVS] = { NULL };	/* the voters' copies */
	unsigned int i, j, n, most = 0, major = 0;
	bool tie = false;

	for (i = 0; i < a->n; i++) {
		const struct rs_slot *sl = &a->slot[i];

		if (sl->missing || sl->rebuild || rs_slot_blank(sl))
			continue;
		if (rs_slot_newest(sl)->events == newest->events)
			nc[i] = rs_slot_newest(sl);
	}
	for (i = 0; i < a->n; i++) {
		if (!nc[i])
			continue;
		for (j = 0, n = 0; j < a->n; j++)
			n += nc[j] && nc[j]->log_nonce == nc[i]->log_nonce;
		if (n > most) {
			most = n;
			major = i;
			tie = false;
		} else if (n == most && nc[i]->log_nonce != nc[major]->log_nonce) {
			tie = true;
		}
	}
	if (tie)
		return -1;
	for (i = 0; i < a->n; i++) {
		if (nc[i] && nc[i]->log_nonce != nc[major]->log_nonce) {
			*slot = i;
			return 1;
		}
	}
	return 0;
}

/* A new volume: every present member gets a superblock. */
static void rs_assemble_fresh(const struct rs_activation *a, struct rs_assembly *out)
{
	struct rs_sb *sb = &out->sb;
	unsigned int i;

	out->fresh = true;
	sb->events = 0;
	sb->chunk = a->geom.chunk;
	sb->n = a->n;
	sb->data_offset = a->geom.data_offset;
	sb->stripes = a->usable_stripes;
	sb->flags = 0;
	sb->region_stripes = a->region_stripes;
	/* The tier: right after the data area, out of what the members hold past it. */
	sb->tier_sectors = a->tier_sectors;
	if (a->tier_sectors) {
		if (a->member_sectors < a->geom.data_offset + a->tier_sectors + a->geom.chunk)
			return rs_refuse(out, -1,
				 "tier_size leaves no room for the data area on the members");
		sb->stripes = (a->member_sectors - a->geom.data_offset - a->tier_sectors) >>
			      a->geom.chunk_shift;
		if (a->stripes > sb->stripes)
			return rs_refuse(out, -1,
				 "Target length exceeds the usable size of the members with this tier_size");
	}
	sb->resync_cp = a->nosync ? sb->stripes : 0;
	sb->tier_start = a->tier_sectors ?
			 a->geom.data_offset + sb->stripes * (u64)a->geom.chunk : 0;
	for (i = 0; i < a->n; i++) {
		sb->state[i] = RS_MS_IN_SYNC;
		sb->cp[i] = 0;
	}
}

/* The same state, role aside (every member is written the same, but its role). */
static bool rs_sb_same_state(const struct rs_sb *a, const struct rs_sb *b)
{
	unsigned int i;

	if (memcmp(a->uuid, b->uuid, sizeof(a->uuid)) || a->events != b->events ||
	    a->chunk != b->chunk || a->n != b->n || a->data_offset != b->data_offset ||
	    a->stripes != b->stripes || a->resync_cp != b->resync_cp ||
	    a->flags != b->flags || a->ctime != b->ctime ||
	    a->region_stripes != b->region_stripes || a->log_nonce != b->log_nonce ||
	    a->tier_start != b->tier_start || a->tier_sectors != b->tier_sectors ||
	    a->uncovered_to != b->uncovered_to)
		return false;
	for (i = 0; i < a->n && i < RS_MAX_DEVS; i++)
		if (a->state[i] != b->state[i] || a->cp[i] != b->cp[i])
			return false;
	return true;
}

/* Whether a valid copy of @sl is @newest (the role aside). */
static bool rs_slot_holds(const struct rs_slot *sl, const struct rs_sb *newest)
{
	unsigned int c;

	for (c = 0; c < RS_SB_COPIES; c++)
		if (sl->copy[c] == RS_SBR_VALID && rs_sb_same_state(&sl->sb[c], newest))
			return true;
	return false;
}

/*
 * Whether @newest, one generation after @s, vouches for slot @i's own data
 * as @s did: the same state; or a rebuild that went on (any checkpoint
 * @newest gives: the commit that wrote it had flushed the member first, or
 * said it failed); or one that ended, from a checkpoint at the volume's end.
 * Up to 1.11.16 a changed checkpoint or the end of the rebuild made the
 * member stale: a cut inside that commit, missing the rebuilding member
 * only, left the dirty regions below the checkpoint to a resync that needed
 * the very member it had failed, so its chunks there read as I/O errors and
 * the rebuild, started again from 0, stopped at them for good.
 */
static bool rs_sb_vouched(const struct rs_sb *s, const struct rs_sb *newest, unsigned int i)
{
	if (s->state[i] != RS_MS_REBUILDING)
		return s->state[i] == newest->state[i];
	if (newest->state[i] == RS_MS_REBUILDING)
		return true;
	return newest->state[i] == RS_MS_IN_SYNC && s->cp[i] == s->stripes;
}

/*
 * Whether slot @i missed the last commit only, as a power cut in the middle
 * of that commit leaves a member (1.11.12; up to 1.11.11 it was stale, and a
 * cut that reached fewer than all but one member made the volume refused,
 * though every member's data were current): its newest copy is one
 * generation older than @newest, is the very state a member at @newest's
 * generation held just before it (that member's other copy), and what the
 * two generations say of slot @i's own data agree (rs_sb_vouched()). A
 * commit writes no member before every member has flushed, and one whose
 * flush failed is failed in the very generation written
 * (rs_meta_write_all()), so a member @newest says is in sync or rebuilding
 * completed that commit's flush: it holds what @newest vouches for.
 * Any write it missed while the volume ran was acknowledged only once a
 * committed generation said it failed (rs_meta_wait_committed()). Its other
 * copy must not be corrupt (its own write of the last commit torn): the
 * activation's commit overwrites the copy it is taken from, and a cut in
 * that write would leave it none (blank: never written, a volume that made
 * one commit only since it was created). md takes a member one event
 * behind the same way
 * (super_1_validate()). A copy of the device one commit old looks the
 * same, and is taken too, as md takes it.
 */
static bool rs_slot_one_behind(const struct rs_activation *a, unsigned int i,
			       const struct rs_sb *newest)
{
	const struct rs_sb *s = rs_slot_newest(&a->slot[i]);
	unsigned int j;

	if (!s || s->events + 1 != newest->events || !rs_sb_vouched(s, newest, i) ||
	    a->slot[i].copy[(s->events + 1) % RS_SB_COPIES] == RS_SBR_CORRUPT)
		return false;
	for (j = 0; j < a->n; j++) {
		const struct rs_slot *sl = &a->slot[j];

		if (j == i || sl->missing || sl->rebuild || rs_slot_blank(sl) ||
		    rs_slot_newest(sl)->events != newest->events)
			continue;
		if (rs_slot_holds(sl, s))
			return true;
	}
	return false;
}

/*
 * Decide what the table and the members' superblocks make of the volume.
 *
 *  - Every present member blank and none missing: a new volume (parity made
 *    by a resync from stripe 0, or taken as it is with nosync).
 *  - A member with a copy that has the magic but no valid copy: refused.
 *  - Members of another volume (uuid), in another slot (role), or whose
 *    geometry differs from the table or from each other: refused.
 *  - The newest generation among the members is the volume's state. A
 *    member that state marks failed stays failed; one whose own superblock
 *    is older than the newest is stale and is failed (it missed commits,
 *    so it may have missed data too), unless it missed the last commit
 *    only (rs_slot_one_behind(): a power cut inside that commit; 1.11.12,
 *    before stale too); "-" fails its slot. None of them serves data.
 *    Not with @a->defer_stale (read while another table committed).
 *  - "rebuild <i>" makes slot i rebuilding: from its checkpoint when the
 *    superblocks already say it is, else from stripe 0; a blank device is
 *    accepted only there. Not while the initial resync is unfinished: the
 *    parity could not rebuild it.
 *  - With two or more members failed, missing, stale or rebuilding: refused.
 */
void rs_assemble(const struct rs_activation *a, struct rs_assembly *out)
{
	const struct rs_sb *newest = NULL, *s;
	unsigned int i, present = 0, blank = 0, failed;
	int split;
	struct rs_sb *sb = &out->sb;

	memset(out, 0, sizeof(*out));
	out->bad_slot = -1;

	for (i = 0; i < a->n; i++) {
		const struct rs_slot *sl = &a->slot[i];

		if (sl->missing)
			continue;
		present++;
		if (rs_slot_blank(sl)) {
			blank++;
			continue;
		}
		if (rs_slot_corrupt(sl))
			return rs_refuse(out, i,
				 "Member superblock is corrupt (both copies): refusing to trust it");
	}
	if (!present)
		return rs_refuse(out, -1, "No member device given");
	newest = rs_assemble_reference(a);
	if (!newest) {
		for (i = 0; i < a->n; i++) {
			if (a->slot[i].missing)
				return rs_refuse(out, i,
				 "A new volume cannot have a missing member");
			if (a->slot[i].rebuild)
				return rs_refuse(out, i,
				 "rebuild given for a new volume: there is nothing to rebuild from");
		}
		return rs_assemble_fresh(a, out);
	}

	/* Its commits would pass the limit, and a copy past it is refused. */
	if (newest->events > RS_SB_MAX_EVENTS - RS_SB_EVENTS_SPARE)
		return rs_refuse(out, -1,
				 "Superblock generation too near its limit (not written by dm-rainssd?)");

	/* Every member with a superblock must belong here. */
	for (i = 0; i < a->n; i++) {
		const struct rs_slot *sl = &a->slot[i];

		if (sl->missing || rs_slot_blank(sl))
			continue;
		s = rs_slot_newest(sl);
		if (memcmp(s->uuid, newest->uuid, sizeof(s->uuid)))
			return rs_refuse(out, i,
				 "Member belongs to another volume (superblock uuid differs)");
		if (s->n != a->n || s->chunk != a->geom.chunk ||
		    s->data_offset != a->geom.data_offset)
			return rs_refuse(out, i,
				 "Member superblock geometry (chunk, #devs, data offset) differs from the table");
		/* 0: made by 1.4.0, which gets the table's regions now. */
		if (a->region_given && s->region_stripes && s->region_stripes != a->region_stripes)
			return rs_refuse(out, i,
				 "Member superblock bitmap region differs from the table's region_size");
		if (a->tier_given && s->tier_sectors != a->tier_sectors)
			return rs_refuse(out, i,
				 "Member superblock tier differs from the table's tier_size");
		if (s->tier_sectors != newest->tier_sectors || s->tier_start != newest->tier_start)
			return rs_refuse(out, i,
				 "Member superblock tier differs from the other members'");
		if (s->stripes != newest->stripes)
			return rs_refuse(out, i,
				 "Member superblock volume size differs from the other members'");
		if (s->role != i)
			return rs_refuse(out, i,
				 "Member is in the wrong place: its superblock gives another role");
	}
	switch (rs_assemble_split(a, newest, &split)) {
	case 1:
		return rs_refuse(out, split,
				 "Member has the newest generation but another history than most members (a copy of the volume used apart): give rebuild <idx> for it");
	case -1:
		return rs_refuse(out, -1,
				 "Members at the newest generation have different histories, as many on each side (copies of one volume used apart): no majority to follow");
	}
	if (a->stripes > newest->stripes)
		return rs_refuse(out, -1,
				 "Target length exceeds the volume size in the superblocks");
	if (a->usable_stripes < newest->stripes ||
	    (newest->tier_sectors &&
	     a->member_sectors < newest->tier_start + newest->tier_sectors))
		return rs_refuse(out, -1,
				 "Member devices are smaller than the volume in the superblocks");

	*sb = *newest;
	/* Before the activation's own changes: what the log was kept for. */
	out->log_from = U64_MAX;
	for (i = 0; i < newest->n; i++) {
		if (newest->state[i] == RS_MS_FAILED)
			out->log_from = 0;
		else if (newest->state[i] == RS_MS_REBUILDING)
			out->log_from = min(out->log_from, newest->cp[i]);
	}
	out->log_cover = out->log_from;
	if (newest->flags & RS_SBF_UNCOVERED)
		out->log_cover = max(out->log_cover, newest->uncovered_to);
	out->no_bitmap = !newest->region_stripes;
	if (out->no_bitmap) {
		out->log_from = U64_MAX;
		out->log_cover = U64_MAX;
	}
	for (i = 0; i < a->n; i++) {
		const struct rs_slot *sl = &a->slot[i];
		bool stale = false;

		if (sl->missing) {
			if (sb->state[i] != RS_MS_FAILED)
				__set_bit(i, &out->failed);
			sb->state[i] = RS_MS_FAILED;
			continue;
		}
		if (rs_slot_blank(sl)) {
			if (!sl->rebuild)
				return rs_refuse(out, i,
				 "Member has no superblock but the others do: give rebuild <idx> to add it");
		} else {
			/*
			 * Older than the newest generation: it missed commits,
			 * so it may have missed writes too, unless it missed
			 * the last one only. Up to 1.11.11 one behind was stale
			 * too: a power cut inside a commit made every member it
			 * had not reached stale, and with two the volume was
			 * refused though their data were current.
			 */
			stale = rs_slot_newest(sl)->events < newest->events;
			if (stale && rs_slot_one_behind(a, i, newest)) {
				stale = false;
				__set_bit(i, &out->behind);
			}
		}
		if (sl->rebuild) {
			/*
			 * A member in sync, holding the newest state or the one
			 * before it that the newest vouches for, after an
			 * unclean shutdown: the dirty regions need its data to
			 * be resynced, which a rebuild from 0 throws away, and
			 * its chunks there would read as I/O errors for good.
			 * Up to 1.11.17 taken so (a table saved during a
			 * rebuild carries rebuild <idx>; found by a review).
			 * Decided at the first resume: a constructor beside a
			 * live table (a reload) sees superblocks in use.
			 */
			if (a->at_resume && sb->state[i] == RS_MS_IN_SYNC &&
			    !(newest->flags & RS_SBF_CLEAN) && !rs_slot_blank(sl) &&
			    (test_bit(i, &out->behind) || rs_slot_holds(sl, newest)))
				return rs_refuse(out, i,
				 "Member is in sync and the last shutdown was unclean: its data is needed to resync the dirty regions; activate without rebuild <idx> and let the resync end first");
			/*
			 * Its checkpoint counts only for the member that
			 * rebuilt up to it: one holding @newest itself, or the
			 * generation before it. Up to 1.11.16 any member not
			 * older kept it, so a device of another copy of the
			 * volume, newer, was read below it as rebuilt.
			 */
			if (sb->state[i] != RS_MS_REBUILDING || rs_slot_blank(sl) ||
			    (!test_bit(i, &out->behind) && !rs_slot_holds(sl, newest)))
				sb->cp[i] = 0;
			sb->state[i] = RS_MS_REBUILDING;
			continue;
		}
		if (stale && sb->state[i] != RS_MS_FAILED && !a->defer_stale) {
			__set_bit(i, &out->stale);
			__set_bit(i, &out->failed);
			sb->state[i] = RS_MS_FAILED;
		}
	}
	failed = 0;
	for (i = 0; i < a->n; i++) {
		failed += sb->state[i] != RS_MS_IN_SYNC;
		if (sb->state[i] == RS_MS_REBUILDING && sb->resync_cp < sb->stripes)
			return rs_refuse(out, i,
				 "Cannot rebuild: the initial resync did not finish, the parity cannot rebuild a member");
	}
	if (failed > 1)
		return rs_refuse(out, -1,
				 "Two or more members failed, missing, stale or rebuilding: the data cannot be served");
}
