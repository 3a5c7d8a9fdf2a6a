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

#define RS_VERSION_STR "1.2.0"

/* The numeric tunables: table arguments and messages of the same name. */
struct rs_tunable_desc {
	const char *name;
	size_t offset;			/* in struct rs_tunables */
	unsigned int min, max, def;
	char *error;			/* for ti->error */
};

#define RS_TUNABLE(f, lo, hi, d) {						\
	.name = #f, .offset = offsetof(struct rs_tunables, f), .min = lo,	\
	.max = hi, .def = d, .error = "Invalid " #f ": need " #lo " to " #hi	\
}

static const struct rs_tunable_desc rs_tunable_descs[] = {
	RS_TUNABLE(ewma_weight, 1, 1024, RS_DEF_EWMA_WEIGHT),
	RS_TUNABLE(freq_window, 1, 65536, RS_DEF_FREQ_WINDOW),
	RS_TUNABLE(stall_factor, 0, 1000, RS_DEF_STALL_FACTOR),
	RS_TUNABLE(xor_ns, 0, 10000000, RS_DEF_XOR_NS),
	RS_TUNABLE(probe_ms, 0, 60000, RS_DEF_PROBE_MS),
	RS_TUNABLE(recon_load_pct, 0, 1000, RS_DEF_RECON_LOAD_PCT),
};

static unsigned int *rs_tunable(struct rs_tunables *t, const struct rs_tunable_desc *d)
{
	return (unsigned int *)((char *)t + d->offset);
}

/* Optional arguments that take a word: the policies, then the tunables. */
#define RS_OPT_POLICY		0
#define RS_OPT_READ_POLICY	1
#define RS_OPT_TUNABLES		2
#define RS_NR_OPTS		(RS_OPT_TUNABLES + ARRAY_SIZE(rs_tunable_descs))

static int rs_opt_index(const char *key)
{
	unsigned int i;

	if (!strcasecmp(key, "policy"))
		return RS_OPT_POLICY;
	if (!strcasecmp(key, "read_policy"))
		return RS_OPT_READ_POLICY;
	for (i = 0; i < ARRAY_SIZE(rs_tunable_descs); i++)
		if (!strcasecmp(key, rs_tunable_descs[i].name))
			return RS_OPT_TUNABLES + i;
	return -EINVAL;
}

/*
 * Set option @opt (an rs_opt_index()) to @val; shared by the table line and
 * the messages. On a bad value returns -EINVAL with *@error set.
 */
static int rs_set_option(struct rainssd *rs, int opt, const char *val, char **error)
{
	const struct rs_tunable_desc *d;
	enum rs_read_policy rp;
	enum rs_policy p;
	unsigned int v;

	switch (opt) {
	case RS_OPT_POLICY:
		if (rs_policy_parse(val, &p)) {
			*error = "Unknown policy: use count, rmw, rcw or adaptive";
			return -EINVAL;
		}
		WRITE_ONCE(rs->policy, p);
		return 0;
	case RS_OPT_READ_POLICY:
		if (rs_read_policy_parse(val, &rp)) {
			*error = "Unknown read_policy: use direct, adaptive or reconstruct";
			return -EINVAL;
		}
		WRITE_ONCE(rs->read_policy, rp);
		return 0;
	}
	d = &rs_tunable_descs[opt - RS_OPT_TUNABLES];
	if (kstrtouint(val, 10, &v) || v < d->min || v > d->max) {
		*error = d->error;
		return -EINVAL;
	}
	WRITE_ONCE(*rs_tunable(&rs->tun, d), v);
	return 0;
}

/* How many words of optional arguments the table line shows (non-defaults). */
static unsigned int rs_opt_words(struct rainssd *rs)
{
	unsigned int i, words = 0;

	if (READ_ONCE(rs->policy) != RS_POLICY_COUNT)
		words += 2;
	if (READ_ONCE(rs->read_policy) != RS_READ_DIRECT)
		words += 2;
	for (i = 0; i < ARRAY_SIZE(rs_tunable_descs); i++)
		if (READ_ONCE(*rs_tunable(&rs->tun, &rs_tunable_descs[i])) !=
		    rs_tunable_descs[i].def)
			words += 2;
	return words;
}

static void rs_free(struct rainssd *rs)
{
	unsigned int i;

	rs_io_exit(rs);
	rs_load_exit(&rs->load);
	free_percpu(rs->snap);
	free_percpu(rs->stats);
	kfree(rs->stats_base);
	kfree(rs->stats_sum);
	for (i = 0; i < rs->geom.n; i++)
		if (rs->dev[i])
			dm_put_device(rs->ti, rs->dev[i]);
	kfree(rs);
}

/*
 * Optional arguments, <key> <value> pairs in any order, each key at most once
 * (docs/rainssd.rst):
 *   policy <count|rmw|rcw|adaptive>	parity-update decision (default count)
 *   read_policy <direct|adaptive|reconstruct>  read decision (default direct)
 *   ewma_weight <1..1024>		service-time average window (16)
 *   freq_window <1..65536>		arrival-rate window in requests (128)
 *   stall_factor <0..1000>		stall threshold in service times (8; 0 off)
 *   xor_ns <0..10000000>		least t_xor of a reconstruct read (20000)
 *   probe_ms <0..60000>		refresh a bypassed member's estimates (100; 0 off)
 *   recon_load_pct <0..1000>		weight of the read model's load terms (100)
 */
static int rs_parse_opt_args(struct rainssd *rs, struct dm_arg_set *as)
{
	static const struct dm_arg opt_count = {
		0, 2 * RS_NR_OPTS, "Invalid number of optional arguments"
	};
	struct dm_target *ti = rs->ti;
	unsigned long seen = 0;
	unsigned int argc;
	const char *word;
	int r, opt;

	if (!as->argc)
		return 0;
	r = dm_read_arg_group(&opt_count, as, &argc, &ti->error);
	if (r)
		return r;
	if (argc % 2) {
		ti->error = "Optional arguments come in <key> <value> pairs";
		return -EINVAL;
	}
	for (; argc; argc -= 2) {
		word = dm_shift_arg(as);
		opt = rs_opt_index(word);
		if (opt < 0) {
			ti->error = "Unknown optional argument";
			return -EINVAL;
		}
		if (__test_and_set_bit(opt, &seen)) {
			ti->error = "Optional argument given twice";
			return -EINVAL;
		}
		r = rs_set_option(rs, opt, dm_shift_arg(as), &ti->error);
		if (r)
			return r;
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
	rs->read_policy = RS_READ_DIRECT;
	rs_tunables_default(&rs->tun);
	mutex_init(&rs->stats_lock);
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
	rs->stats_base = kzalloc(sizeof(*rs->stats_base), GFP_KERNEL);
	rs->stats_sum = kzalloc(sizeof(*rs->stats_sum), GFP_KERNEL);
	if (!rs->stats || !rs->stats_base || !rs->stats_sum) {
		ti->error = "Cannot allocate statistics";
		goto bad;
	}
	rs->snap = alloc_percpu(struct rs_load_snap);
	if (!rs->snap || rs_load_init(&rs->load, n, &rs->tun)) {
		ti->error = "Cannot allocate the load signals";
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

/*
 * Whether the read of io->member's chunk (a live member) is to be rebuilt
 * from the other members: always with read_policy reconstruct while no
 * member is dead; with adaptive when the policy unit finds it cheaper.
 */
static bool rs_read_around(struct rainssd *rs, struct rs_io *io)
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
	if (rp == RS_READ_RECONSTRUCT) {
		io->by_choice = !rs_dead_count(rs);
		return io->by_choice;
	}
	snap = get_cpu_ptr(rs->snap);
	rs_load_snapshot(&rs->load, READ_ONCE(rs->dead_mask), snap);
	rs_plan_read(snap, io->member, &tun, &c);
	put_cpu_ptr(rs->snap);
	if (c.why == RS_WHY_PROBE)
		rs_stat_inc(rs, RS_STAT_PROBES);
	io->by_choice = c.reconstruct;
	return c.reconstruct;
}

/*
 * A read inside one chunk goes straight to its member, unless the member is
 * dead or the read policy rebuilds it from the others.
 */
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
	io->by_choice = false;
	if (rs_member_dead(rs, loc.member) || rs_read_around(rs, io)) {
		io->kind = RS_IO_RECON_READ;
		rs_submit_stripe_io(io);
		return DM_MAPIO_SUBMITTED;
	}
	io->kind = RS_IO_DIRECT_READ;
	rs_load_issue(&rs->load, loc.member, false, &io->tag);
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

	if (io->kind == RS_IO_DIRECT_READ && rs_load_done(&rs->load, io->member, &io->tag))
		rs_mstat_inc(rs, io->member, RS_MSTAT_STALLS);
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

/* The counters since the last stats_reset into rs->stats_sum; stats_lock held. */
static void rs_sum_stats(struct rainssd *rs)
{
	struct rs_stats *sum = rs->stats_sum;
	unsigned int i, m;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct rs_stats *st = per_cpu_ptr(rs->stats, cpu);

		for (i = 0; i < RS_NR_STATS; i++)
			sum->c[i] += st->c[i];
		for (m = 0; m < rs->geom.n; m++)
			for (i = 0; i < RS_NR_MSTATS; i++)
				sum->m[m][i] += st->m[m][i];
	}
	for (i = 0; i < RS_NR_STATS; i++)
		sum->c[i] -= rs->stats_base->c[i];
	for (m = 0; m < rs->geom.n; m++)
		for (i = 0; i < RS_NR_MSTATS; i++)
			sum->m[m][i] -= rs->stats_base->m[m][i];
}

/* stats_reset: the counters start again from zero (the estimates are kept). */
static void rs_stats_reset(struct rainssd *rs)
{
	mutex_lock(&rs->stats_lock);
	rs_sum_stats(rs);
	for (unsigned int i = 0; i < RS_NR_STATS; i++)
		rs->stats_base->c[i] += rs->stats_sum->c[i];
	for (unsigned int m = 0; m < rs->geom.n; m++)
		for (unsigned int i = 0; i < RS_NR_MSTATS; i++)
			rs->stats_base->m[m][i] += rs->stats_sum->m[m][i];
	mutex_unlock(&rs->stats_lock);
}

static unsigned int rs_us(u64 ns)
{
	return min_t(u64, div_u64(ns + NSEC_PER_USEC / 2, NSEC_PER_USEC), UINT_MAX);
}

/*
 * Status (INFO), docs/rainssd.rst has every field:
 *   <version> <#devs> <health> <reads> <writes> <full_stripe_writes> <rmw>
 *   <rcw> <degraded_writes> <prereads> <reconstruct_reads> <policy>
 *   <read_policy> <rmw_adjusted> <rcw_adjusted> <cold_fallbacks>
 *   <policy_reconstructs> <probes> <rebuild_us> <member_0> ... <member_N-1>
 * health has one character per member: A alive, D dead. Each member word is
 *   <reads_in_flight>:<writes_in_flight>:<t_read_us>:<t_write_us>:
 *   <arrivals_per_s>:<stall_ms>:<prereads>:<reconstruct_reads>:<bypassed>:<stalls>
 */
static void rs_status_info(struct rainssd *rs, char *result, unsigned int maxlen)
{
	unsigned int sz = 0, i, n = rs->geom.n;
	struct rs_stats *st = rs->stats_sum;
	struct rs_load_snap *snap;

	mutex_lock(&rs->stats_lock);
	rs_sum_stats(rs);
	DMEMIT("%s %u ", RS_VERSION_STR, n);
	for (i = 0; i < n; i++)
		DMEMIT("%c", rs_member_dead(rs, i) ? 'D' : 'A');
	for (i = 0; i < RS_NR_BASIC_STATS; i++)
		DMEMIT(" %llu", st->c[i]);
	DMEMIT(" %s %s", rs_policy_name(READ_ONCE(rs->policy)),
	       rs_read_policy_name(READ_ONCE(rs->read_policy)));
	for (i = RS_NR_BASIC_STATS; i < RS_NR_STATS; i++)
		DMEMIT(" %llu", st->c[i]);
	snap = get_cpu_ptr(rs->snap);
	rs_load_snapshot(&rs->load, READ_ONCE(rs->dead_mask), snap);
	DMEMIT(" %u", rs_us(snap->t_rebuild));
	for (i = 0; i < n; i++) {
		const struct rs_member_snap *m = &snap->m[i];

		DMEMIT(" %u:%u:%u:%u:%llu:%u:%llu:%llu:%llu:%llu", m->reads, m->writes,
		       rs_us(m->t_read), rs_us(m->t_write),
		       m->interval ? div_u64(NSEC_PER_SEC, m->interval) : 0ULL,
		       rs_us(m->t_stall) / (unsigned int)USEC_PER_MSEC,
		       st->m[i][RS_MSTAT_PREREADS], st->m[i][RS_MSTAT_RECON_READS],
		       st->m[i][RS_MSTAT_BYPASSED], st->m[i][RS_MSTAT_STALLS]);
	}
	put_cpu_ptr(rs->snap);
	mutex_unlock(&rs->stats_lock);
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
			DMEMIT(" %s", rs->dev[i]->name);
		if (!rs_opt_words(rs))
			break;
		DMEMIT(" %u", rs_opt_words(rs));
		if (READ_ONCE(rs->policy) != RS_POLICY_COUNT)
			DMEMIT(" policy %s", rs_policy_name(READ_ONCE(rs->policy)));
		if (READ_ONCE(rs->read_policy) != RS_READ_DIRECT)
			DMEMIT(" read_policy %s", rs_read_policy_name(READ_ONCE(rs->read_policy)));
		for (i = 0; i < ARRAY_SIZE(rs_tunable_descs); i++) {
			const struct rs_tunable_desc *d = &rs_tunable_descs[i];
			unsigned int v = READ_ONCE(*rs_tunable(&rs->tun, d));

			if (v != d->def)
				DMEMIT(" %s %u", d->name, v);
		}
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",chunk_sectors=%u,devs=%u,policy=%s,read_policy=%s;", rs->geom.chunk,
		       rs->geom.n, rs_policy_name(READ_ONCE(rs->policy)),
		       rs_read_policy_name(READ_ONCE(rs->read_policy)));
		break;
	}
}

/*
 * Messages (docs/rainssd.rst):
 *   fail <idx>			mark member idx dead (its data is then rebuilt)
 *   policy <name>		count, rmw, rcw or adaptive
 *   read_policy <name>		direct, adaptive or reconstruct
 *   <tunable> <value>		ewma_weight, freq_window, stall_factor, xor_ns,
 *				probe_ms, recon_load_pct (the table's ranges)
 *   stats_reset		the status counters start again from zero
 */
static int rs_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct rainssd *rs = ti->private;
	unsigned int idx;
	char *error;
	int opt;

	if (argc == 1 && !strcasecmp(argv[0], "stats_reset")) {
		rs_stats_reset(rs);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "fail")) {
		if (kstrtouint(argv[1], 10, &idx) || idx >= rs->geom.n) {
			DMWARN_LIMIT("fail: member index must be 0..%u, not '%s'",
				     rs->geom.n - 1, argv[1]);
			return -EINVAL;
		}
		rs_member_failed(rs, idx);
		return 0;
	}
	opt = argc == 2 ? rs_opt_index(argv[0]) : -EINVAL;
	if (opt >= 0) {
		if (rs_set_option(rs, opt, argv[1], &error)) {
			DMWARN_LIMIT("%s %s: %s", argv[0], argv[1], error);
			return -EINVAL;
		}
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
	.version = {1, 2, 0},
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
	int r = dm_register_target(&rainssd_target);

	if (!r)
		rs_fault_init();
	return r;
}

static void __exit dm_rainssd_exit(void)
{
	rs_fault_exit();
	dm_unregister_target(&rainssd_target);
}

module_init(dm_rainssd_init);
module_exit(dm_rainssd_exit);

MODULE_DESCRIPTION(DM_NAME " channel RAID-5 target for SSD arrays");
MODULE_AUTHOR("dm-rainssd developers");
MODULE_LICENSE("GPL");
