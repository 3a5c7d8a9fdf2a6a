// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd: a channel-RAID-5 device-mapper target.
 *
 * This file is the dm glue: table parsing, bio mapping, status and messages.
 * The layout lives in rainssd-geometry.c, the parity decision in
 * rainssd-policy.c and the stripe I/O engine in rainssd-io.c.
 * docs/rainssd.rst documents the table line, status and messages.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "rainssd.h"

#define RS_VERSION_STR "1.0.0"

static const char *rs_opt_policy = "policy";

static void rs_free(struct rainssd *rs)
{
	unsigned int i;

	rs_io_exit(rs);
	free_percpu(rs->stats);
	for (i = 0; i < rs->geom.n; i++)
		if (rs->dev[i])
			dm_put_device(rs->ti, rs->dev[i]);
	kfree(rs);
}

/*
 * Optional arguments, in any order:
 *   policy <count|rmw|rcw>	the parity-update decision (default count)
 */
static int rs_parse_opt_args(struct rainssd *rs, struct dm_arg_set *as)
{
	static const struct dm_arg opt_count = { 0, 2, "Invalid number of optional arguments" };
	struct dm_target *ti = rs->ti;
	unsigned int argc;
	const char *word;
	int r;

	if (!as->argc)
		return 0;
	r = dm_read_arg_group(&opt_count, as, &argc, &ti->error);
	if (r)
		return r;
	while (argc) {
		word = dm_shift_arg(as);
		argc--;
		if (!strcasecmp(word, rs_opt_policy)) {
			if (!argc) {
				ti->error = "Optional argument 'policy' needs a value";
				return -EINVAL;
			}
			if (rs_policy_parse(dm_shift_arg(as), &rs->policy)) {
				ti->error = "Unknown policy: use count, rmw or rcw";
				return -EINVAL;
			}
			argc--;
		} else {
			ti->error = "Unknown optional argument";
			return -EINVAL;
		}
	}
	if (as->argc) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}
	return 0;
}

static int rs_get_members(struct rainssd *rs, struct dm_arg_set *as)
{
	struct dm_target *ti = rs->ti;
	unsigned int i, j;
	sector_t size;
	int r;

	for (i = 0; i < rs->geom.n; i++) {
		r = dm_get_device(ti, dm_shift_arg(as), dm_table_get_mode(ti->table),
				  &rs->dev[i]);
		if (r) {
			ti->error = "Cannot open member device";
			return r;
		}
		for (j = 0; j < i; j++) {
			if (rs->dev[j]->bdev->bd_dev == rs->dev[i]->bdev->bd_dev) {
				ti->error = "The same device is given twice as a member";
				return -EINVAL;
			}
		}
		size = bdev_nr_sectors(rs->dev[i]->bdev);
		if (i && size != rs->member_sectors) {
			ti->error = "Member devices differ in size";
			return -EINVAL;
		}
		rs->member_sectors = size;
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
 * Construct a rainssd target.
 *
 * <chunk_sectors> <#devs> <dev_0> ... <dev_N-1> [<#opt_args> <opt_args>...]
 *
 * chunk_sectors: a power of two from 8 (4 KiB) to 2048 (1 MiB).
 * #devs: from 3 to 32. Every member must have the same size.
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
	rs->policy = RS_POLICY_COUNT;
	r = rs_geom_init(&rs->geom, n, chunk);
	if (r) {
		ti->error = "Invalid geometry";
		kfree(rs);
		return r;
	}

	r = rs_get_members(rs, &as);
	if (r)
		goto bad;
	r = rs_parse_opt_args(rs, &as);
	if (r)
		goto bad;

	r = -ENOMEM;
	rs->stats = alloc_percpu(struct rs_stats);
	if (!rs->stats) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	r = rs_io_init(rs);
	if (r) {
		ti->error = "Cannot allocate the I/O engine";
		goto bad;
	}
	r = dm_set_target_max_io_len(ti, rs->geom.stripe_data);
	if (r)
		goto bad;

	ti->num_flush_bios = n;
	ti->num_discard_bios = 0;
	ti->num_write_zeroes_bios = 0;
	ti->per_io_data_size = sizeof(struct rs_io);
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

/* A read inside one chunk of a live member goes straight to that member. */
static int rs_map_read(struct rainssd *rs, struct rs_io *io, struct bio *bio)
{
	struct rs_loc loc;
	unsigned int len;

	rs_map(&rs->geom, io->iter.bi_sector, &loc);
	len = rs->geom.chunk - loc.row;
	if (bio_sectors(bio) > len) {
		dm_accept_partial_bio(bio, len);
		io->iter = bio->bi_iter;
		io->iter.bi_sector = dm_target_offset(rs->ti, bio->bi_iter.bi_sector);
	}
	rs_stat_inc(rs, RS_STAT_READS);
	io->member = loc.member;
	io->stripe = loc.stripe;
	if (rs_member_dead(rs, loc.member)) {
		io->kind = RS_IO_RECON_READ;
		rs_submit_stripe_io(io);
		return DM_MAPIO_SUBMITTED;
	}
	io->kind = RS_IO_DIRECT_READ;
	bio_set_dev(bio, rs->dev[loc.member]->bdev);
	bio->bi_iter.bi_sector = loc.msector;
	return DM_MAPIO_REMAPPED;
}

static int rs_map_bio(struct dm_target *ti, struct bio *bio)
{
	struct rainssd *rs = ti->private;
	struct rs_io *io = dm_per_bio_data(bio, sizeof(struct rs_io));

	io->rs = rs;
	io->bio = bio;

	if (unlikely(bio->bi_opf & REQ_PREFLUSH)) {
		/* An empty flush, one clone per member. */
		io->kind = RS_IO_FLUSH;
		io->member = dm_bio_get_target_bio_nr(bio);
		if (rs_member_dead(rs, io->member)) {
			bio_endio(bio);
			return DM_MAPIO_SUBMITTED;
		}
		bio_set_dev(bio, rs->dev[io->member]->bdev);
		return DM_MAPIO_REMAPPED;
	}
	if (rs_dead_count(rs) > 1)
		return DM_MAPIO_KILL;

	io->iter = bio->bi_iter;
	io->iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return rs_map_read(rs, io, bio);
	case REQ_OP_WRITE:
		rs_stat_inc(rs, RS_STAT_WRITES);
		io->kind = RS_IO_WRITE;
		io->stripe = div_u64(io->iter.bi_sector, rs->geom.stripe_data);
		rs_submit_stripe_io(io);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}
}

/*
 * A direct read that failed marks its member dead and is served again by
 * rebuilding it from the other members; a failed flush marks its member dead.
 */
static int rs_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct rainssd *rs = ti->private;
	struct rs_io *io = dm_per_bio_data(bio, sizeof(struct rs_io));

	if (!*error || (io->kind != RS_IO_DIRECT_READ && io->kind != RS_IO_FLUSH))
		return DM_ENDIO_DONE;
	if (*error == BLK_STS_AGAIN)
		return DM_ENDIO_DONE;

	rs_member_failed(rs, io->member);
	if (rs_dead_count(rs) > 1)
		return DM_ENDIO_DONE;
	if (io->kind == RS_IO_FLUSH) {
		*error = BLK_STS_OK;
		return DM_ENDIO_DONE;
	}
	bio->bi_status = BLK_STS_OK;
	bio->bi_iter = io->iter;
	io->kind = RS_IO_RECON_READ;
	rs_submit_stripe_io(io);
	return DM_ENDIO_INCOMPLETE;
}

static void rs_sum_stats(struct rainssd *rs, u64 *sum)
{
	int cpu, i;

	memset(sum, 0, RS_NR_STATS * sizeof(*sum));
	for_each_possible_cpu(cpu)
		for (i = 0; i < RS_NR_STATS; i++)
			sum[i] += per_cpu_ptr(rs->stats, cpu)->c[i];
}

/*
 * Status (INFO):
 *   <version> <#devs> <health> <reads> <writes> <full_stripe_writes> <rmw>
 *   <rcw> <degraded_writes> <prereads> <reconstruct_reads> <policy>
 * health has one character per member: A alive, D dead.
 */
static void rs_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct rainssd *rs = ti->private;
	unsigned int sz = 0, i;
	u64 st[RS_NR_STATS];

	switch (type) {
	case STATUSTYPE_INFO:
		rs_sum_stats(rs, st);
		DMEMIT("%s %u ", RS_VERSION_STR, rs->geom.n);
		for (i = 0; i < rs->geom.n; i++)
			DMEMIT("%c", rs_member_dead(rs, i) ? 'D' : 'A');
		for (i = 0; i < RS_NR_STATS; i++)
			DMEMIT(" %llu", st[i]);
		DMEMIT(" %s", rs_policy_name(READ_ONCE(rs->policy)));
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%u %u", rs->geom.chunk, rs->geom.n);
		for (i = 0; i < rs->geom.n; i++)
			DMEMIT(" %s", rs->dev[i]->name);
		if (READ_ONCE(rs->policy) != RS_POLICY_COUNT)
			DMEMIT(" 2 %s %s", rs_opt_policy, rs_policy_name(READ_ONCE(rs->policy)));
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",chunk_sectors=%u,devs=%u,policy=%s;", rs->geom.chunk, rs->geom.n,
		       rs_policy_name(READ_ONCE(rs->policy)));
		break;
	}
}

/*
 * Messages:
 *   fail <idx>		mark member idx dead (its data is then rebuilt on reads)
 *   policy <name>	switch the parity-update decision: count, rmw or rcw
 */
static int rs_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct rainssd *rs = ti->private;
	enum rs_policy p;
	unsigned int idx;

	if (argc == 2 && !strcasecmp(argv[0], "fail")) {
		if (kstrtouint(argv[1], 10, &idx) || idx >= rs->geom.n) {
			DMWARN_LIMIT("fail: member index must be 0..%u, not '%s'",
				     rs->geom.n - 1, argv[1]);
			return -EINVAL;
		}
		rs_member_failed(rs, idx);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "policy")) {
		if (rs_policy_parse(argv[1], &p)) {
			DMWARN_LIMIT("policy: unknown policy '%s' (count, rmw, rcw)", argv[1]);
			return -EINVAL;
		}
		WRITE_ONCE(rs->policy, p);
		return 0;
	}
	DMWARN_LIMIT("unknown message '%s' with %u argument(s); see docs/rainssd.rst",
		     argc ? argv[0] : "", argc ? argc - 1 : 0);
	return -EINVAL;
}

static int rs_iterate_devices(struct dm_target *ti, iterate_devices_callout_fn fn,
			      void *data)
{
	struct rainssd *rs = ti->private;
	sector_t len = rs->member_sectors - rs->geom.data_offset;
	unsigned int i;
	int r = 0;

	for (i = 0; i < rs->geom.n && !r; i++)
		r = fn(ti, rs->dev[i], rs->geom.data_offset, len, data);
	return r;
}

static void rs_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct rainssd *rs = ti->private;

	limits->io_min = rs->geom.chunk << SECTOR_SHIFT;
	limits->io_opt = rs->geom.stripe_data << SECTOR_SHIFT;
}

static void rs_postsuspend(struct dm_target *ti)
{
	struct rainssd *rs = ti->private;

	flush_workqueue(rs->wq);
}

static struct target_type rainssd_target = {
	.name = "rainssd",
	.version = {1, 0, 0},
	.module = THIS_MODULE,
	.ctr = rs_ctr,
	.dtr = rs_dtr,
	.map = rs_map_bio,
	.end_io = rs_end_io,
	.postsuspend = rs_postsuspend,
	.status = rs_status,
	.message = rs_message,
	.iterate_devices = rs_iterate_devices,
	.io_hints = rs_io_hints,
};

static int __init dm_rainssd_init(void)
{
	return dm_register_target(&rainssd_target);
}

static void __exit dm_rainssd_exit(void)
{
	dm_unregister_target(&rainssd_target);
}

module_init(dm_rainssd_init);
module_exit(dm_rainssd_exit);

MODULE_DESCRIPTION(DM_NAME " channel RAID-5 target for SSD arrays");
MODULE_AUTHOR("dm-rainssd developers");
MODULE_LICENSE("GPL");
