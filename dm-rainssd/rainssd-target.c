// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd: a channel-RAID-5 device-mapper target.
 *
 * This file is the dm glue: the constructor and destructor, bio mapping and
 * end_io, suspend, devices and I/O hints. rainssd.h indexes the other units;
 * docs/rainssd.rst documents the table line, status and messages.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-fault.h"
#include "rainssd-log.h"
#include "rainssd-meta.h"
#include "rainssd-raid5.h"
#include "rainssd-sb.h"
#include "rainssd-sync.h"
#include "rainssd-migrate.h"
#include "rainssd-tiermap.h"

static void rs_event_work(struct work_struct *work)
{
	struct rainssd *rs = container_of(work, struct rainssd, event_work);

	dm_table_event(rs->ti->table);
}

/*
 * Member @m was just recorded failed (rs_meta: here, or in a superblock
 * commit it refused): say why, raise a dm event, let the sync look again.
 * Any context.
 */
void rs_member_failed_report(struct rainssd *rs, unsigned int m, const char *why)
{
	if (rs->dev[m])
		DMERR_LIMIT("member %u (%pg) failed: %s; %u member(s) failed", m,
			    rs->dev[m]->bdev, why, rs_dead_count(rs));
	queue_work(rs->wq, &rs->event_work);
	rs_sync_kick(rs->sync);
}

/*
 * Member @m failed (idempotent): it serves no data from now on, the
 * superblocks are to say so, a dm event is raised. Any context.
 */
void rs_member_failed(struct rainssd *rs, unsigned int m, const char *why)
{
	if (rs_meta_member_failed(rs->meta, m))
		rs_member_failed_report(rs, m, why);
}

/*
 * Whether member @m holds its data of @stripe: not failed, and not at or
 * above a rebuild's checkpoint (U64_MAX: anywhere). The rebuild's member
 * is read before the failed members, and rs_meta_publish() sets a failed
 * member's bit before it ends a rebuild: a rebuilding member that fails
 * is seen as one or the other, never as neither (up to 1.11.7 a read
 * mapped in between went to it above the checkpoint: bytes never rebuilt).
 * While I/O is served the rebuild's member only ever goes from a member
 * to none (a rebuild starts at an activation), and its checkpoint only
 * grows after the rebuilt data is on the member: a stale checkpoint is a
 * lower one. Any context.
 */
bool rs_member_holds(struct rainssd *rs, unsigned int m, u64 stripe)
{
	unsigned int rb = READ_ONCE(rs->rebuild_member);
	u64 cp = READ_ONCE(rs->rebuild_cp);

	rs_fault_spin(RS_FAULT_DELAY_MAP);
	smp_rmb();	/* pairs with smp_mb__after_atomic() in rs_meta_publish() */
	return !(m == rb && stripe >= cp) && !rs_member_dead(rs, m);
}

/*
 * A read of member @m failed and its data was (or is being) rebuilt from
 * the others: a corrected read error, md's fix_read_error. Past
 * max_corr_read_errors the member is failed; returns whether it is.
 */
bool rs_read_error(struct rainssd *rs, unsigned int m)
{
	unsigned int n = atomic_inc_return(&rs->read_errors[m]);

	if (n <= READ_ONCE(rs->max_corr_read_errors))
		return false;
	rs_member_failed(rs, m, "too many read errors");
	return true;
}

/*
 * One piece of a stripe bio is done (or, with BLK_STS_OK, its cutting is);
 * the bio ends with the first error of any piece when the last one is.
 */
void rs_bio_endio_piece(struct rainssd *rs, struct bio *bio, blk_status_t status)
{
	struct rs_bio *rb = rs_bio(bio);

	if (status)
		cmpxchg(&rb->status, BLK_STS_OK, status);
	if (!atomic_dec_and_test(&rb->pending))
		return;
	bio->bi_status = READ_ONCE(rb->status);
	bio_endio(bio);
}

/*
 * Serve read @bio (rb->iter: what it reads) again by stripe operations, a
 * chunk at a time: each chunk of a member in @bad rebuilt from the others and
 * written back, every other chunk read from its member. Any context.
 */
void rs_read_again(struct rainssd *rs, struct bio *bio, unsigned long bad)
{
	struct rs_bio *rb = rs_bio(bio);

	rb->bad = bad;
	rb->by_choice = false;
	rb->t_map = ktime_get_ns();
	rb->kind = RS_BIO_STRIPE;
	rb->status = BLK_STS_OK;
	atomic_set(&rb->pending, 1);
	rs_defer_bio(rs, bio);
}

/* Hand a stripe bio to operations, after any bio already waiting for one. */
static void rs_submit_stripe(struct rainssd *rs, struct bio *bio)
{
	if (rs_defer_pending(rs) || !rs_r5_feed(rs, bio))
		rs_defer_bio(rs, bio);
}

static void rs_free(struct rainssd *rs)
{
	unsigned int i;

	rs_migrate_destroy(rs->tier_mig);
	/* Its commits may fail members (kicking the sync) and queue operations. */
	rs_tier_destroy(rs->tier);
	/* A superblock commit that fails a member kicks the sync too. */
	rs_meta_flush(rs->meta);
	rs_sync_destroy(rs->sync);
	rs_bitmap_destroy(rs->bitmap);
	rs_log_destroy(rs->log);
	rs_wide_exit(rs);
	rs_op_exit(rs);
	if (rs->wq)
		destroy_workqueue(rs->wq);
	rs_meta_destroy(rs->meta);
	kfree(rs->act);
	rs_load_exit(&rs->load);
	free_percpu(rs->snap);
	rs_stats_exit(rs);
	for (i = 0; i < rs->geom.n; i++)
		if (rs->dev[i])
			dm_put_device(rs->ti, rs->dev[i]);
	mutex_destroy(&rs->opt_lock);
	kfree(rs);
}

static int rs_get_members(struct rainssd *rs, struct dm_arg_set *as)
{
	struct dm_target *ti = rs->ti;
	unsigned int i, j;
	const char *path;
	sector_t size;
	int r;

	for (i = 0; i < rs->geom.n; i++) {
		path = dm_shift_arg(as);
		if (!strcmp(path, "-"))
			continue;	/* missing: the volume runs degraded */
		r = dm_get_device(ti, path, dm_table_get_mode(ti->table), &rs->dev[i]);
		if (r) {
			ti->error = "Cannot open member device";
			return r;
		}
		for (j = 0; j < i; j++) {
			if (rs->dev[j] && rs->dev[j]->bdev->bd_dev == rs->dev[i]->bdev->bd_dev) {
				ti->error = "The same device is given twice as a member";
				return -EINVAL;
			}
		}
		size = bdev_nr_sectors(rs->dev[i]->bdev);
		if (rs->member_sectors && size != rs->member_sectors) {
			ti->error = "Member devices differ in size";
			return -EINVAL;
		}
		rs->member_sectors = size;
	}
	if (!rs->member_sectors) {
		ti->error = "No member device given: at most one may be -";
		return -EINVAL;
	}
	if (rs->member_sectors < rs->geom.data_offset + rs->geom.chunk) {
		ti->error = "Member devices too small: need the 16 MiB data offset plus one chunk";
		return -EINVAL;
	}
	if (ti->len > rs_usable_sectors(&rs->geom, rs->member_sectors)) {
		ti->error = "Target length exceeds the usable size of the members";
		return -EINVAL;
	}
	return 0;
}

/*
 * The volume's RAID1 tier, when its superblocks (or, for a new volume, the
 * table) give it one: laid out, and for an existing volume its mapping
 * table read and checked now, so that a corrupt one is refused here with
 * ti->error (it is read again at the first resume).
 */
static int rs_tier_setup(struct rainssd *rs, const struct rs_assembly *as)
{
	struct dm_target *ti = rs->ti;
	struct rs_tier_layout t;
	const char *why;
	u8 uuid[16];
	int r;

	if (!as->sb.tier_sectors)
		return 0;
	/* 32 bits: rs_sb_decode() refuses more, which no table could give. */
	rs->tier_size = as->sb.tier_sectors;
	r = rs_tier_layout(&t, &rs->geom, as->sb.stripes, as->sb.tier_start, as->sb.tier_sectors);
	if (r) {
		ti->error = r == -EOVERFLOW ?
			    "Too many stripes for a tier: at most 536870911 (use a larger chunk)" :
			    r == -E2BIG ?
			    "tier_size too large: more than 2^24 stripes in the tier" :
			    "tier_size too small to hold its table and one stripe";
		return r == -EOVERFLOW ? -EINVAL : r;
	}
	rs_meta_uuid(rs->meta, uuid);
	r = rs_tier_create(rs, &t, uuid, &rs->tier);
	if (r) {
		ti->error = "Cannot allocate the tier's state";
		return r;
	}
	if (as->fresh)
		return 0;
	r = rs_tier_load(rs->tier, false, false, &why);
	if (r) {
		DMERR("tier mapping table: %s", why ?: "cannot be read");
		ti->error = r == -ENOMEM ? "Cannot allocate the tier's table" :
			    "Tier mapping table is corrupt or unreadable (see the kernel log)";
	}
	return r;
}

/*
 * Read the members' superblocks and decide, with the table, what the volume
 * is: new, whole, degraded, rebuilding; or refuse it with ti->error.
 * Nothing is written until the first resume (rainssd-meta.c).
 */
static int rs_assemble_members(struct rainssd *rs)
{
	struct dm_target *ti = rs->ti;
	struct rs_activation *a;
	struct rs_assembly *as;
	unsigned int i;
	int r;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!a || !as) {
		kfree(a);
		kfree(as);
		ti->error = "Cannot allocate the activation state";
		return -ENOMEM;
	}
	a->geom = rs->geom;
	a->n = rs->geom.n;
	a->nosync = rs->nosync;
	a->stripes = DIV_ROUND_UP_SECTOR_T(ti->len, rs->geom.stripe_data);
	a->usable_stripes = (rs->member_sectors - rs->geom.data_offset) >> rs->geom.chunk_shift;
	a->region_stripes = rs_bitmap_region_stripes(&rs->geom, a->usable_stripes, rs->region_size);
	a->region_given = rs->region_size_given;
	a->member_sectors = rs->member_sectors;
	a->tier_sectors = round_down((u64)rs->tier_size, rs->geom.chunk);
	a->tier_given = rs->tier_size_given;
	for (i = 0; i < a->n; i++) {
		a->slot[i].missing = !rs->dev[i];
		a->slot[i].rebuild = rs->rebuild_arg == i;
	}
	rs->act = a;
	r = rs_meta_read(rs, a);
	if (r) {
		ti->error = "Cannot read the members' superblocks";
		goto out;
	}
	rs_assemble(a, as);
	if (as->error && as->stale) {
		/*
		 * Refused with members older than the newest: read them again.
		 * A newest generation that moved meanwhile is another table of
		 * the device committing (a reload beside a live table, a
		 * rebuild's checkpoint every 2 s), and a member read before two
		 * of its commits only looked stale: the first resume decides,
		 * on the superblocks that table left. Up to 1.11.22 the reload
		 * was refused when another member was out (case 65; found by a
		 * review). Superblocks that hold still are decided now.
		 */
		u64 newest = as->sb.events;

		r = rs_meta_read(rs, a);
		if (r) {
			ti->error = "Cannot read the members' superblocks";
			goto out;
		}
		rs_assemble(a, as);
		if (as->error && as->sb.events != newest) {
			a->defer_stale = true;
			rs_assemble(a, as);
			a->defer_stale = false;
		}
	}
	if (as->error) {
		if (as->bad_slot >= 0)
			DMERR("member %d: %s", as->bad_slot, as->error);
		ti->error = (char *)as->error;
		r = -EINVAL;
		goto out;
	}
	/*
	 * A new volume's tier_size under a chunk: up to 1.11.22 rounded down
	 * to no tier at all, while the status printed the tier_size given.
	 * An existing volume without a tier still takes it (as 1.11.22 did,
	 * so that the table line it printed reloads).
	 */
	if (as->fresh && rs->tier_size && rs->tier_size < rs->geom.chunk) {
		ti->error = "tier_size too small to hold its table and one stripe";
		r = -EINVAL;
		goto out;
	}
	rs->stripes = as->sb.stripes;
	r = rs_meta_create(rs, as, &rs->meta);
	if (r) {
		ti->error = "Cannot allocate the metadata state";
		goto out;
	}
	r = rs_tier_setup(rs, as);
out:
	kfree(as);
	return r;
}

/*
 * The load signals' reading of member @m's disk statistics (everyone's I/O
 * on its disk, rainssd-load.h); none for a missing member.
 */
static bool rs_member_devstat(void *ctx, unsigned int m, struct rs_devcount *c)
{
	struct rainssd *rs = ctx;

	if (!rs->dev[m])
		return false;
	rs_bdev_io_stat(rs->dev[m]->bdev, &c->ios, &c->sectors, &c->ns);
	return true;
}

static void rs_devstat_kick(void *ctx)
{
	struct rainssd *rs = ctx;

	queue_work(rs->wq, &rs->devstat_work);
}

static void rs_devstat_work(struct work_struct *work)
{
	struct rainssd *rs = container_of(work, struct rainssd, devstat_work);

	rs_load_devstat_read(&rs->load);
}

/* Read the members' disk statistics, once per disk (members may share one). */
static void rs_load_devstat_setup(struct rainssd *rs)
{
	unsigned int i, j;

	for (i = 0; i < rs->geom.n; i++) {
		for (j = 0; j < i; j++)
			if (rs->dev[i] && rs->dev[j] &&
			    rs->dev[j]->bdev->bd_disk == rs->dev[i]->bdev->bd_disk)
				break;
		rs_load_set_disk(&rs->load, i, j);
	}
	rs_load_set_devstat(&rs->load, rs_member_devstat, rs_devstat_kick, rs);
}

/*
 * Construct a rainssd target.
 *
 * <chunk_sectors> <#devs> <dev_0> ... <dev_N-1> [<#opt_args> <opt_args>...]
 *
 * chunk_sectors: a power of two from 8 (4 KiB) to 2048 (1 MiB).
 * #devs: from 3 to 32. Every member must have the same size; "-" stands
 * for a missing one.
 */
static int rs_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	unsigned int chunk, n;
	struct rainssd *rs;
	int r;

	if (argc < 2) {
		ti->error = "Not enough arguments: <chunk_sectors> <#devs> <devs...>";
		return -EINVAL;
	}
	if (kstrtouint(dm_shift_arg(&as), 10, &chunk) || !is_power_of_2(chunk) ||
	    chunk < RS_MIN_CHUNK || chunk > RS_MAX_CHUNK) {
		ti->error = "Invalid chunk size: need a power of two from 8 to 2048 sectors";
		return -EINVAL;
	}
	if (kstrtouint(dm_shift_arg(&as), 10, &n) || n < RS_MIN_DEVS || n > RS_MAX_DEVS) {
		ti->error = "Invalid number of member devices: need 3 to 32";
		return -EINVAL;
	}
	if (as.argc < n) {
		ti->error = "Fewer member devices given than #devs";
		return -EINVAL;
	}

	rs = kzalloc(sizeof(*rs), GFP_KERNEL);
	if (!rs) {
		ti->error = "Cannot allocate the target context";
		return -ENOMEM;
	}
	rs->ti = ti;
	mutex_init(&rs->opt_lock);
	r = rs_geom_init(&rs->geom, n, chunk);
	if (r) {
		ti->error = "Invalid geometry";
		kfree(rs);
		return r;
	}
	rs_args_default(rs);

	r = rs_get_members(rs, &as);
	if (r)
		goto bad;
	r = rs_parse_opt_args(rs, &as);
	if (r)
		goto bad;
	if (rs->rebuild_arg != RS_NO_MEMBER && !rs->dev[rs->rebuild_arg]) {
		ti->error = "rebuild names a member given as -";
		r = -EINVAL;
		goto bad;
	}
	/* Before the superblocks are read: their I/O is counted as the target's own. */
	r = -ENOMEM;
	rs->snap = alloc_percpu(struct rs_load_snap);
	if (!rs->snap || rs_load_init(&rs->load, n, &rs->tun)) {
		ti->error = "Cannot allocate the load signals";
		goto bad;
	}
	r = rs_assemble_members(rs);
	if (r)
		goto bad;
	r = rs_args_tier(rs, &ti->error);
	if (r)
		goto bad;

	r = rs_stats_init(rs);
	if (r) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	r = -ENOMEM;
	/*
	 * Unbound (as dm-crypt's kcryptd): a per-CPU workqueue kept every
	 * step of the operations of one submitter, and their completions, on
	 * the submitter's CPU (4 KiB random writes at 0.5x md RAID-5 on
	 * 1 ms channels; docs/benchmarks.md, "make demo's mixed job").
	 */
	rs->wq = alloc_workqueue("rainssd", WQ_UNBOUND | WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!rs->wq) {
		ti->error = "Cannot allocate the workqueue";
		goto bad;
	}
	INIT_WORK(&rs->event_work, rs_event_work);
	INIT_WORK(&rs->devstat_work, rs_devstat_work);
	rs_load_devstat_setup(rs);
	r = rs_op_init(rs, rs_r5_feed);
	if (r) {
		ti->error = "Cannot allocate the operation layer (stripe locks, reserve, biosets)";
		goto bad;
	}
	r = rs_wide_init(rs);
	if (r) {
		ti->error = "Cannot allocate the bioset of wide reads";
		goto bad;
	}
	r = rs_sync_create(rs, &rs->sync);
	if (r) {
		ti->error = "Cannot allocate the resync and rebuild state";
		goto bad;
	}
	/*
	 * A volume made by 1.4.0 names no bitmap; the first resume writes the
	 * region size this table gives, and the bitmap runs from then on.
	 */
	r = rs_bitmap_create(rs, rs_meta_region_stripes(rs->meta) ?: rs->act->region_stripes,
			     &rs->bitmap);
	if (r) {
		ti->error = "Cannot allocate the write-intent bitmap";
		goto bad;
	}
	r = rs_log_create(rs, &rs->log);
	if (r) {
		ti->error = "Cannot allocate the degraded-write log";
		goto bad;
	}
	r = rs_migrate_create(rs, &rs->tier_mig);
	if (r) {
		ti->error = "Cannot allocate the tier's offline migration";
		goto bad;
	}
	r = dm_set_target_max_io_len(ti, rs_r5_max_stripes(&rs->geom) * rs->geom.stripe_data);
	if (r)
		goto bad;

	ti->num_flush_bios = n;
	/*
	 * With a tier, a flush must reach the target even over members with no
	 * volatile cache (the block layer drops flushes to a device that has
	 * none): it commits the mapping table. The same holds for FUA.
	 */
	ti->flush_supported = !!rs->tier;
	ti->num_discard_bios = 0;
	ti->num_write_zeroes_bios = 0;
	ti->per_io_data_size = sizeof(struct rs_bio);
	ti->private = rs;
	return 0;
bad:
	rs_free(rs);
	return r;
}

static void rs_dtr(struct dm_target *ti)
{
	rs_free(ti->private);
}

/*
 * Whether a read of live member @m's chunk is to be rebuilt from the other
 * members: always with read_policy reconstruct while no member is dead; with
 * adaptive when the policy unit finds it cheaper. A direct read that is a
 * probe is counted in the status, or with @probe given, reported there for
 * the caller to count once the read is really sent.
 */
bool rs_read_around(struct rainssd *rs, unsigned int m, bool *probe)
{
	enum rs_read_policy rp = READ_ONCE(rs->read_policy);
	struct rs_tunables tun = {
		.xor_ns = READ_ONCE(rs->tun.xor_ns),
		.probe_ms = READ_ONCE(rs->tun.probe_ms),
		.recon_load_pct = READ_ONCE(rs->tun.recon_load_pct),
	};
	struct rs_load_snap *snap;
	struct rs_read_choice c;

	if (rp == RS_READ_DIRECT)
		return false;
	if (rp == RS_READ_RECONSTRUCT)
		return !rs_dead_count(rs);
	snap = get_cpu_ptr(rs->snap);
	rs_load_snapshot(&rs->load, READ_ONCE(rs->dead_mask), snap);
	rs_plan_read(snap, m, &tun, &c);
	put_cpu_ptr(rs->snap);
	if (probe)
		*probe = c.why == RS_WHY_PROBE;
	else if (c.why == RS_WHY_PROBE)
		rs_stat_inc(rs, RS_STAT_PROBES);
	return c.reconstruct;
}

/* Start @bio (@rb->iter set) as a stripe bio: cut into operations. */
static void rs_start_stripe_bio(struct rainssd *rs, struct bio *bio, struct rs_bio *rb)
{
	rb->kind = RS_BIO_STRIPE;
	rb->status = BLK_STS_OK;
	atomic_set(&rb->pending, 1);
	rs_submit_stripe(rs, bio);
}

/* Serve only the first @len sectors of @bio now; dm core sends the rest again. */
static void rs_cut_bio(struct rainssd *rs, struct rs_bio *rb, struct bio *bio, unsigned int len)
{
	if (bio_sectors(bio) <= len)
		return;
	dm_accept_partial_bio(bio, len);
	rb->iter = bio->bi_iter;
	rb->iter.bi_sector = dm_target_offset(rs->ti, bio->bi_iter.bi_sector);
}

/*
 * A read of a stripe that has a record in the tier: the bio is cut where its
 * rows change from in the tier to not (4 KiB rows); rows in the tier go to
 * the copy on the less busy of the members that can read it, holding the
 * tier's read epoch until the bio completes (so that its slot is not given
 * to another stripe before). Returns the map's answer, or -1 when the rows
 * are not in the tier (their home holds them).
 */
static int rs_map_tier_read(struct rainssd *rs, struct rs_bio *rb, struct bio *bio,
			    const struct rs_loc *loc)
{
	struct rs_tier *tr = rs->tier;
	const struct rs_tier_layout *t = rs_tier_layout_of(tr);
	unsigned int e = rs_tier_read_begin(tr);
	unsigned int first = loc->row / RS_TIER_ROW_SECTORS, row, last, c, cm[2], best = 2;
	struct rs_tier_view v;
	u32 slot[2];
	bool in, resync;

	rs_tier_view(tr, loc->stripe, &v);
	if (v.rec == U32_MAX)
		goto home;
	in = rs_tier_r_row(t, v.r, loc->k, first);
	last = DIV_ROUND_UP(loc->row + bio_sectors(bio), RS_TIER_ROW_SECTORS);
	for (row = first + 1; row < last && rs_tier_r_row(t, v.r, loc->k, row) == in; row++)
		;
	rs_cut_bio(rs, rb, bio, row * RS_TIER_ROW_SECTORS - loc->row);
	if (!in)
		goto home;
	/*
	 * In a region an unclean shutdown left to resync, copy 0 while it can
	 * be read: the resync makes copy 1 its copy, so reads agree before
	 * and after it.
	 */
	resync = rs_bitmap_needs_sync(rs->bitmap, loc->stripe);
	for (c = 0; c < 2; c++) {
		rs_tier_r_copy(t, v.r, loc->k, c, &cm[c], &slot[c]);
		if (!rs_member_holds(rs, cm[c], loc->stripe))
			continue;
		if (best == 2 || (!resync && rs_load_queued(&rs->load, cm[c]) <
					     rs_load_queued(&rs->load, cm[best])))
			best = c;
	}
	if (best == 2) {
		rs_tier_read_end(tr, e);
		return DM_MAPIO_KILL;	/* neither copy: the volume has lost two members */
	}
	rb->kind = RS_BIO_DIRECT;
	rb->tier = true;
	rb->tier_epoch = e;
	rb->member = cm[best];
	rs_tier_count(tr, false);
	rs_load_issue(&rs->load, cm[best], false, bio_sectors(bio), &rb->tag);
	bio_set_dev(bio, rs->dev[cm[best]]->bdev);
	bio->bi_iter.bi_sector = rs_tier_slot_sector(t, slot[best]) + loc->row;
	return DM_MAPIO_REMAPPED;
home:
	rs_tier_read_end(tr, e);
	return -1;
}

/*
 * A read inside one chunk goes straight to its member (or, for rows in the
 * tier, to one of their copies), unless the member is dead or the read
 * policy rebuilds it from the others.
 */
static int rs_map_read(struct rainssd *rs, struct rs_bio *rb, struct bio *bio)
{
	struct rs_loc loc;
	bool unreadable;
	int r;

	rs_map(&rs->geom, rb->iter.bi_sector, &loc);
	if (bio_sectors(bio) > rs->geom.chunk - loc.row && rs_map_wide_read(rs, rb, bio))
		return DM_MAPIO_SUBMITTED;
	rs_cut_bio(rs, rb, bio, rs->geom.chunk - loc.row);
	rs_stat_inc(rs, RS_STAT_READS);
	if (rs->tier) {
		r = rs_map_tier_read(rs, rb, bio, &loc);
		if (r >= 0)
			return r;
	}
	rb->member = loc.member;
	rb->bad = 0;
	unreadable = !rs_member_holds(rs, loc.member, loc.stripe);
	rb->by_choice = !unreadable && rs_read_around(rs, loc.member, NULL);
	if (rb->by_choice || unreadable) {
		rb->t_map = ktime_get_ns();
		rs_start_stripe_bio(rs, bio, rb);
		return DM_MAPIO_SUBMITTED;
	}
	rb->kind = RS_BIO_DIRECT;
	rs_load_issue(&rs->load, loc.member, false, bio_sectors(bio), &rb->tag);
	bio_set_dev(bio, rs->dev[loc.member]->bdev);
	bio->bi_iter.bi_sector = loc.msector;
	return DM_MAPIO_REMAPPED;
}

static int rs_map_bio(struct dm_target *ti, struct bio *bio)
{
	struct rainssd *rs = ti->private;
	struct rs_bio *rb = rs_bio(bio);

	rb->tier = false;
	rb->tier_epoch = RS_NO_EPOCH;
	if (unlikely(bio->bi_opf & REQ_PREFLUSH)) {
		/* An empty flush, one clone per member. */
		rb->kind = RS_BIO_FLUSH;
		rb->member = dm_bio_get_target_bio_nr(bio);
		/*
		 * Not sent, and done once the superblocks say it failed: a cut
		 * before would bring it back in sync without what its cache
		 * held (1.11.4 ended it at once).
		 */
		if (rs_member_dead(rs, rb->member)) {
			rb->kind = RS_BIO_FLUSH_HELD;
			rs_meta_end_after_commit(rs->meta, bio);
			return DM_MAPIO_SUBMITTED;
		}
		/* After the tier's mapping changes made before it are committed. */
		if (rs->tier && rs_tier_flush_wait(rs->tier, bio))
			return DM_MAPIO_SUBMITTED;
		bio_set_dev(bio, rs->dev[rb->member]->bdev);
		return DM_MAPIO_REMAPPED;
	}
	if (rs_dead_count(rs) > 1)
		return DM_MAPIO_KILL;

	rb->iter = bio->bi_iter;
	rb->iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return rs_map_read(rs, rb, bio);
	case REQ_OP_WRITE:
		rs_stat_inc(rs, RS_STAT_WRITES);
		rb->by_choice = false;
		rb->bad = 0;
		rs_start_stripe_bio(rs, bio, rb);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}
}

/*
 * A direct read that failed is served again by rebuilding it from the other
 * members, and the rebuilt data is written back to the member (a corrected
 * read error; past max_corr_read_errors the member is failed instead). A
 * failed flush fails its member, and completes once that is committed. May
 * run in interrupt context: the rebuilt read is deferred to the workqueue.
 */
static int rs_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct rainssd *rs = ti->private;
	struct rs_bio *rb = rs_bio(bio);
	unsigned long bad;

	if (rb->kind == RS_BIO_DIRECT && rs_load_done(&rs->load, rb->member, &rb->tag))
		rs_mstat_inc(rs, rb->member, RS_MSTAT_STALLS);
	if (rb->tier_epoch != RS_NO_EPOCH) {
		rs_tier_read_end(rs->tier, rb->tier_epoch);
		rb->tier_epoch = RS_NO_EPOCH;
	}
	/*
	 * Stripe and wide reads dealt with their members' errors already; a
	 * flush's share held for a commit fails only when no member took it,
	 * or the tier's table could not be committed (its member may be "-":
	 * no device to name).
	 */
	if (!*error || rb->kind == RS_BIO_STRIPE || rb->kind == RS_BIO_WIDE ||
	    rb->kind == RS_BIO_FLUSH_HELD)
		return DM_ENDIO_DONE;
	/*
	 * Not the member's fault: a nowait bio that would block, or readahead,
	 * which a suspended dm member (LVM, multipath) fails at once instead of
	 * queueing it. The caller reads again for real when it needs the data.
	 */
	if (*error == BLK_STS_AGAIN || (bio->bi_opf & REQ_RAHEAD))
		return DM_ENDIO_DONE;

	DMERR_LIMIT("member %u (%pg): %s failed: error %d", rb->member, rs->dev[rb->member]->bdev,
		    rb->kind == RS_BIO_FLUSH ? "flush" : "read", blk_status_to_errno(*error));
	if (rb->kind == RS_BIO_FLUSH) {
		rs_member_failed(rs, rb->member, "flush error");
		if (rs_dead_count(rs) > 1)
			return DM_ENDIO_DONE;
		/* Done once the superblocks say the member failed (1.11.4). */
		bio->bi_status = BLK_STS_OK;
		rb->kind = RS_BIO_FLUSH_HELD;
		rs_meta_end_after_commit(rs->meta, bio);
		return DM_ENDIO_INCOMPLETE;
	}
	bad = rs_read_error(rs, rb->member) ? 0 : BIT(rb->member);
	if (rs_dead_count(rs) > 1)
		return DM_ENDIO_DONE;
	bio->bi_status = BLK_STS_OK;
	bio->bi_iter = rb->iter;
	rs_read_again(rs, bio, bad);
	return DM_ENDIO_INCOMPLETE;
}

static void rs_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct rainssd *rs = ti->private;
	unsigned int sz = 0, i;

	switch (type) {
	case STATUSTYPE_INFO:
		rs_status_info(rs, result, maxlen);
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%u %u", rs->geom.chunk, rs->geom.n);
		for (i = 0; i < rs->geom.n; i++)
			DMEMIT(" %s", rs->dev[i] ? rs->dev[i]->name : "-");
		rs_emit_table_opts(rs, result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",chunk_sectors=%u,devs=%u,policy=%s,read_policy=%s;", rs->geom.chunk,
		       rs->geom.n, rs_policy_name(READ_ONCE(rs->policy)),
		       rs_read_policy_name(READ_ONCE(rs->read_policy)));
		break;
	}
}

static int rs_iterate_devices(struct dm_target *ti, iterate_devices_callout_fn fn,
			      void *data)
{
	struct rainssd *rs = ti->private;
	sector_t len = rs->member_sectors - rs->geom.data_offset;
	unsigned int i;
	int r = 0;

	for (i = 0; i < rs->geom.n && !r; i++)
		if (rs->dev[i])
			r = fn(ti, rs->dev[i], rs->geom.data_offset, len, data);
	return r;
}

static void rs_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct rainssd *rs = ti->private;

	limits->io_min = rs->geom.chunk << SECTOR_SHIFT;
	limits->io_opt = rs->geom.stripe_data << SECTOR_SHIFT;
	/* Whole operations, not the members' max_sectors (often below a stripe). */
	rs_limits_set_max_io(limits, rs->ti->max_io_len);
}

/* Dirty regions a member that is out is needed for: what the log says. */
static void rs_dirty_unreadable(struct rainssd *rs)
{
	unsigned int m = __ffs(READ_ONCE(rs->dead_mask));
	u64 n = rs_bitmap_to_sync(rs->bitmap);

	DMERR("member %u out after an unclean shutdown: %llu dirty region(s) not resynced",
	      m, (unsigned long long)n);
	DMERR("member %u: its chunks in them read as I/O errors, not rebuilt from that parity", m);
}

/*
 * The first resume: decide again from the superblocks, and after an
 * unclean shutdown make the parity right before any I/O: replay the
 * degraded-write log when a member is out (its parity could not be remade
 * from the data), or name the bitmap's dirty regions for the resync. Then
 * the state is written, in use and with a new log nonce. A later resume
 * marks a clean volume in use again. A refusal fails the resume.
 */
static int rs_first_resume(struct rainssd *rs)
{
	struct rs_meta_boot boot;
	unsigned int replayed;
	bool unclean;
	int r;

	r = rs_meta_prepare(rs->meta, rs->act, &boot);
	if (r)
		return r;
	/*
	 * The bitmap was made at the constructor from the superblocks then;
	 * another table's activation since may have given the volume other
	 * regions (a 1.4.0 volume gets its first ones so). Bits on one grid
	 * read on another would miss dirty stripes.
	 */
	if (rs_bitmap_regions(rs->bitmap) != rs_meta_region_stripes(rs->meta)) {
		DMERR("resume refused: the superblocks' bitmap regions changed since the load");
		return -EINVAL;
	}
	unclean = !boot.clean;
	if (unclean && rs_fault_skip_resync()) {
		DMWARN("unclean shutdown, but skip_unclean_resync is set: parity taken as it is");
		unclean = false;
	}
	if (unclean && boot.no_bitmap) {
		DMWARN("unclean shutdown, no bitmap or log (made by 1.4.0): every region is dirty");
	} else if (unclean && boot.degraded && boot.log_from != U64_MAX) {
		/*
		 * Only when the superblocks said a member was out before the
		 * cut: otherwise no record is of this nonce, and up to 1.11.19
		 * a read error in a ring refused the activation all the same
		 * (case 60).
		 */
		r = rs_log_replay(rs->log, boot.nonce, boot.log_from, &replayed);
		if (r) {
			DMERR("unclean shutdown while degraded: log replay failed (%d)", r);
			return r;
		}
		DMINFO("unclean shutdown while degraded: %u logged stripe update(s) replayed",
		       replayed);
	} else if (unclean) {
		DMINFO("unclean shutdown: the bitmap's dirty regions will be resynced");
	}
	/*
	 * The bitmap's dirty regions are resynced where the log does not
	 * cover them. Where no member was out before the cut, below a
	 * rebuilding member's checkpoint, or below where an earlier cut left
	 * regions uncovered (RS_SBF_UNCOVERED), nothing covers them, so that
	 * a member missing, stale or rebuilt now leaves its chunks there
	 * unreadable (never rebuilt from parity the cut may have torn) until
	 * every member's data can resync them. That boundary is committed
	 * with the new state, before anything can be written: the member
	 * states the activation writes would otherwise make the next one
	 * take those regions as covered (1.11.6), and before the tier's
	 * table load, which commits the member states when a member is out
	 * (1.11.9: up to 1.11.8 a cut right after that commit left them
	 * without the boundary).
	 */
	rs->log_cover = unclean ? boot.log_cover : U64_MAX;
	if (unclean && boot.log_cover)
		rs_meta_set_uncovered(rs->meta, boot.log_cover);
	/*
	 * The tier's table first: a new volume's superblocks must never name
	 * a tier whose table is not on the members yet (a cut in between
	 * would leave it refused for good).
	 */
	if (rs->tier) {
		const char *why;

		r = rs_tier_load(rs->tier, boot.fresh, true, &why);
		if (r) {
			DMERR("resume refused: tier mapping table: %s", why ?: "cannot be written");
			return r;
		}
	}
	/*
	 * A volume made by 1.4.0: its bitmap goes on the members before the
	 * superblocks name it, so that a cut or a failure in between finds a
	 * 1.4.0 volume again (resynced whole if unclean), never the device's
	 * old bytes taken for its bitmap.
	 */
	if (boot.no_bitmap) {
		r = rs_bitmap_load(rs->bitmap, unclean, rs->log_cover, true);
		if (r)
			return r;
	}
	r = rs_meta_activate(rs->meta);
	if (r)
		return r;
	if (!boot.no_bitmap)
		r = rs_bitmap_load(rs->bitmap, unclean, rs->log_cover, false);
	if (!r && unclean && READ_ONCE(rs->dead_mask) && rs_bitmap_to_sync(rs->bitmap))
		rs_dirty_unreadable(rs);
	if (!r && !rs_bitmap_to_sync(rs->bitmap))
		rs_meta_set_uncovered(rs->meta, 0);	/* no region was left */
	return r;
}

static int rs_preresume(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;
	int r;

	if (!rs->act) {
		rs_meta_set_suspended(rs->meta, false);
		/*
		 * A failed volume writes nothing and resumes, its I/O failing
		 * (up to 1.11.18 the commit here failed the resume: the device
		 * stayed suspended and held its I/O).
		 */
		if (rs_meta_failed(rs->meta))
			return 0;
		r = rs_meta_clean(rs->meta) ? rs_meta_set_clean(rs->meta, false) : 0;
		/*
		 * Nor does one whose commit here reached no member: it is
		 * failed now (up to 1.11.22 that resume failed, and only a
		 * second one went through; case 66).
		 */
		return r && rs_meta_failed(rs->meta) ? 0 : r;
	}
	r = rs_first_resume(rs);
	if (!r) {
		kfree(rs->act);
		rs->act = NULL;
	}
	return r;
}

static void rs_resume(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;

	/* The postsuspend's rs_bitmap_quiesce() stopped the bits' clearing. */
	rs_bitmap_resume(rs->bitmap);
	rs_sync_start(rs->sync, true);
	rs_migrate_start(rs->tier_mig);
}

/* No resync, rebuild or migration step goes out once suspend has begun. */
static void rs_presuspend(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;

	rs_sync_stop(rs->sync);
	rs_migrate_stop(rs->tier_mig);
}

static void rs_presuspend_undo(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;

	rs_sync_start(rs->sync, false);
	rs_migrate_start(rs->tier_mig);
}

/*
 * Nothing in flight: flush every member, clear the bitmap and, when nothing
 * is left to resync, mark the volume clean; the checkpoints and states are
 * written with it.
 */
static void rs_postsuspend(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;
	unsigned int m;
	bool clean;

	flush_workqueue(rs->wq);
	if (rs->act)
		return;		/* never resumed: nothing was written */
	for (m = 0; m < rs->geom.n; m++)
		if (rs->dev[m] && !rs_member_dead(rs, m) && blkdev_issue_flush(rs->dev[m]->bdev))
			rs_member_failed(rs, m, "flush error at suspend");
	/* The tier's mapping before the bitmap says its copies agree. */
	if (rs_tier_commit_sync(rs->tier))
		DMERR("the tier's mapping table could not be written at suspend");
	clean = rs_bitmap_quiesce(rs->bitmap) > 0;
	if (rs_meta_set_clean(rs->meta, clean))
		DMERR("the state could not be written at suspend");
	rs_meta_set_suspended(rs->meta, true);
}

static struct target_type rainssd_target = {
	.name = "rainssd",
	.version = {1, 11, 23},
	.module = THIS_MODULE,
	.ctr = rs_ctr,
	.dtr = rs_dtr,
	.map = rs_map_bio,
	.end_io = rs_end_io,
	.presuspend = rs_presuspend,
	.presuspend_undo = rs_presuspend_undo,
	.postsuspend = rs_postsuspend,
	.preresume = rs_preresume,
	.resume = rs_resume,
	.status = rs_status,
	.message = rs_message,
	.iterate_devices = rs_iterate_devices,
	.io_hints = rs_io_hints,
};

static int __init dm_rainssd_init(void)
{
	int r = rs_op_module_init(rs_r5_op_size());

	if (r)
		return r;
	r = dm_register_target(&rainssd_target);
	if (r) {
		rs_op_module_exit();
		return r;
	}
	rs_fault_init();
	return 0;
}

static void __exit dm_rainssd_exit(void)
{
	rs_fault_exit();
	dm_unregister_target(&rainssd_target);
	rs_op_module_exit();
}

module_init(dm_rainssd_init);
module_exit(dm_rainssd_exit);

MODULE_DESCRIPTION(DM_NAME " channel RAID-5 target for SSD arrays");
MODULE_VERSION(RS_VERSION_STR);
MODULE_AUTHOR("dm-rainssd developers");
MODULE_LICENSE("GPL");
