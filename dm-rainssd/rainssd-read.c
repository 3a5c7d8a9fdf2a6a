// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd wide reads: a read that spans several chunks, served directly
 * from the members with one member bio per contiguous member range.
 *
 * A read inside one chunk is remapped to its member (rainssd-target.c). A
 * read of several chunks would be cut by dm core at every chunk, each piece
 * a clone and a remap of its own; here it stays whole. Its chunks that lie
 * next to each other on a member (the same member's chunk in consecutive
 * stripes, up to the stripe where that member holds the parity) become one
 * member bio, built from the user bio's own pages (no copy), so that a
 * sequential 1 MiB read over 3+1 members with 64 KiB chunks takes about one
 * member bio per member instead of sixteen remaps.
 *
 * Only a healthy volume reads wide: no member dead or being rebuilt, no
 * tier, and every member it reads is one the read policy reads directly.
 * Otherwise, and when a member bio cannot be had without waiting, the read
 * takes the per-chunk path as before. A member bio that fails (other than a
 * readahead or a nowait bio that would block, which end the read with their
 * error as a direct read does) has the whole read served again by stripe
 * operations, chunk by chunk: each chunk is read from its member again, and
 * one that fails is counted as a read error, rebuilt from the others and
 * written back (as a direct read's failure is, see rs_end_io()).
 *
 * Context: rs_map_wide_read() runs in the map function and never sleeps;
 * member bio completions run in interrupt context and only count, end the
 * user bio or defer it to the workqueue (rs_defer_bio()).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>

#include "rainssd.h"
#include "rainssd-fault.h"

/* A member bio of a wide read. */
struct rs_wbio {
	struct rainssd *rs;
	struct bio *parent;
	unsigned int member;
	sector_t sector;		/* where it starts, for the log */
	struct rs_load_tag tag;
	struct bio bio;			/* last: the bioset's front pad ends here */
};

int rs_wide_init(struct rainssd *rs)
{
	/* A reserve per member: any one read can always get going. */
	return bioset_init(&rs->wide_bs, rs->geom.n, offsetof(struct rs_wbio, bio),
			   BIOSET_NEED_BVECS);
}

void rs_wide_exit(struct rainssd *rs)
{
	bioset_exit(&rs->wide_bs);
}

/*
 * The last member bio of @bio is done: end it, or serve it again chunk by
 * chunk. Which chunks of a failed member bio were unreadable is not known,
 * so none is counted or rebuilt yet: each is read again on its own, and one
 * that fails that read is counted as a read error, rebuilt and written back
 * (a read of a stripe whose parity is not known good fails instead, as any
 * read of an unreadable chunk does).
 */
static void rs_wide_done(struct rainssd *rs, struct bio *bio)
{
	struct rs_bio *rb = rs_bio(bio);

	if (!READ_ONCE(rb->bad)) {
		bio->bi_status = READ_ONCE(rb->status);
		bio_endio(bio);
		return;
	}
	if (rs_dead_count(rs) > 1) {
		bio->bi_status = BLK_STS_IOERR;
		bio_endio(bio);
		return;
	}
	rs_read_again(rs, bio, 0);
}

static void rs_wide_endio(struct bio *b)
{
	struct rs_wbio *wb = container_of(b, struct rs_wbio, bio);
	struct rainssd *rs = wb->rs;
	struct bio *bio = wb->parent;
	struct rs_bio *rb = rs_bio(bio);
	blk_status_t st = b->bi_status;

	if (rs_load_done(&rs->load, wb->member, &wb->tag))
		rs_mstat_inc(rs, wb->member, RS_MSTAT_STALLS);
	if (st) {
		/* Not the member's fault (see rs_end_io()): the read ends with it. */
		if (st == BLK_STS_AGAIN || (bio->bi_opf & REQ_RAHEAD)) {
			cmpxchg(&rb->status, BLK_STS_OK, st);
		} else {
			DMERR_LIMIT("member %u (%pg): read at sector %llu failed: error %d",
				    wb->member, rs->dev[wb->member]->bdev,
				    (unsigned long long)wb->sector, blk_status_to_errno(st));
			set_bit(wb->member, &rb->bad);
		}
	}
	bio_put(b);
	if (atomic_dec_and_test(&rb->pending))
		rs_wide_done(rs, bio);
}

/*
 * Whether every data member of @rb->iter's chunks is read directly, and in
 * @probes how many of those reads are probes: the caller counts them once
 * the read is sent whole (chunk by chunk, the policy is asked again).
 */
static bool rs_wide_direct(struct rainssd *rs, struct rs_bio *rb, unsigned int *probes)
{
	const struct rs_geom *g = &rs->geom;
	u64 first = rb->iter.bi_sector >> g->chunk_shift;
	u64 last = (rb->iter.bi_sector + (rb->iter.bi_size >> SECTOR_SHIFT) - 1) >> g->chunk_shift;
	unsigned long seen = 0;
	struct rs_loc loc;
	bool probe;
	u64 c;

	*probes = 0;
	if (READ_ONCE(rs->read_policy) == RS_READ_DIRECT)
		return true;
	for (c = first; c <= last && hweight_long(seen) < g->n; c++) {
		rs_map(g, c << g->chunk_shift, &loc);
		if (seen & BIT(loc.member))
			continue;
		seen |= BIT(loc.member);
		if (rs_read_around(rs, loc.member, &probe))
			return false;
		*probes += probe;
	}
	return true;
}

/* A member bio for member @m from @msector on, sized for about @bytes. */
static struct rs_wbio *rs_wide_alloc(struct rainssd *rs, struct bio *bio, unsigned int m,
				     sector_t msector, unsigned int bytes)
{
	unsigned int nr = min_t(unsigned int, BIO_MAX_VECS, DIV_ROUND_UP(bytes, PAGE_SIZE) + 2);
	blk_opf_t opf = REQ_OP_READ | (bio->bi_opf & (REQ_SYNC | REQ_META | REQ_PRIO |
						      REQ_RAHEAD | REQ_NOWAIT));
	struct rs_wbio *wb;
	struct bio *b;

	if (rs_fault(RS_FAULT_NOWAIT_BIO))
		return NULL;
	b = bio_alloc_bioset(rs->dev[m]->bdev, nr, opf, GFP_NOWAIT | __GFP_NOWARN, &rs->wide_bs);
	if (!b)
		return NULL;
	wb = container_of(b, struct rs_wbio, bio);
	wb->rs = rs;
	wb->parent = bio;
	wb->member = m;
	wb->sector = msector;
	b->bi_iter.bi_sector = msector;
	b->bi_end_io = rs_wide_endio;
	/* The user's cgroup and priority, so io.max and iocost apply. */
	bio_clone_blkg_association(b, bio);
	b->bi_ioprio = bio->bi_ioprio;
	return wb;
}

/* The member bios of a wide read being built. */
struct rs_wide_build {
	struct rs_wbio *cur[RS_MAX_DEVS];	/* each member's last bio */
	struct bio_list list;
	unsigned int nbios;
};

/*
 * Add segment @bv, for member @m at @msector, to the member's last bio, or
 * to a new one (sized for about @hint bytes) where the member's range
 * breaks or its bio is full. False when no bio can be had without waiting.
 */
static bool rs_wide_add(struct rainssd *rs, struct rs_wide_build *wb, struct bio *bio,
			unsigned int m, sector_t msector, const struct bio_vec *bv,
			unsigned int hint)
{
	struct rs_wbio *w = wb->cur[m];

	if (w && bio_end_sector(&w->bio) == msector &&
	    bio_add_page(&w->bio, bv->bv_page, bv->bv_len, bv->bv_offset) == bv->bv_len)
		return true;
	w = rs_wide_alloc(rs, bio, m, msector, hint);
	if (!w)
		return false;
	wb->cur[m] = w;
	bio_list_add(&wb->list, &w->bio);
	wb->nbios++;
	/* An empty bio takes a page's segment. */
	__bio_add_page(&w->bio, bv->bv_page, bv->bv_len, bv->bv_offset);
	return true;
}

/*
 * Serve @bio (rb->iter set, more than one chunk) as a wide read. False when
 * it is not to be read wide, or a member bio cannot be had without waiting:
 * nothing was sent, and the caller takes the per-chunk path.
 */
bool rs_map_wide_read(struct rainssd *rs, struct rs_bio *rb, struct bio *bio)
{
	const struct rs_geom *g = &rs->geom;
	struct rs_wide_build wb = { .list = BIO_EMPTY_LIST };
	struct bvec_iter it = rb->iter, data = bio->bi_iter;
	unsigned int pieces = 0, probes;
	struct bio *b;

	/* The rebuild before the failed members: see rs_member_holds(). */
	if (rs->tier || READ_ONCE(rs->rebuild_member) != RS_NO_MEMBER)
		return false;
	smp_rmb();	/* pairs with smp_mb__after_atomic() in rs_meta_publish() */
	if (READ_ONCE(rs->dead_mask) ||
	    READ_ONCE(rs->read_policy) == RS_READ_RECONSTRUCT || !rs_wide_direct(rs, rb, &probes))
		return false;

	while (it.bi_size) {
		unsigned int len, hint, done = 0;
		struct bvec_iter sub, si;
		struct bio_vec bv;
		struct rs_loc loc;

		rs_map(g, it.bi_sector, &loc);
		len = min_t(unsigned int, it.bi_size, (g->chunk - loc.row) << SECTOR_SHIFT);
		/* About the member's share of the rest, for a new bio's size. */
		hint = it.bi_size / (g->n - 1) + (g->chunk << SECTOR_SHIFT);
		sub = data;
		sub.bi_size = len;
		__bio_for_each_segment(bv, bio, si, sub) {
			/* Segments of whole sectors only, so a member bio can start at any. */
			if ((bv.bv_len & (SECTOR_SIZE - 1)) ||
			    !rs_wide_add(rs, &wb, bio, loc.member,
					 loc.msector + (done >> SECTOR_SHIFT), &bv, hint))
				goto no_bio;
			done += bv.bv_len;
		}
		bio_advance_iter(bio, &data, len);
		it.bi_sector += len >> SECTOR_SHIFT;
		it.bi_size -= len;
		pieces++;
	}

	rb->kind = RS_BIO_WIDE;
	rb->status = BLK_STS_OK;
	rb->bad = 0;
	atomic_set(&rb->pending, wb.nbios);
	/* Counted as the per-chunk path would: a read per chunk. */
	this_cpu_add(rs->stats->c[RS_STAT_READS], pieces);
	if (probes)
		this_cpu_add(rs->stats->c[RS_STAT_PROBES], probes);
	while ((b = bio_list_pop(&wb.list))) {
		struct rs_wbio *w = container_of(b, struct rs_wbio, bio);

		rs_load_issue(&rs->load, w->member, false, bio_sectors(b), &w->tag);
		submit_bio_noacct(b);
	}
	return true;

no_bio:
	while ((b = bio_list_pop(&wb.list)))
		bio_put(b);
	return false;
}
