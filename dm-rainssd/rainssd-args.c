// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd optional arguments: the table line's words after the members
 * (<key> <value> pairs, and the flag nosync), the messages of the same
 * names, and the table status that prints them back. Everything here runs
 * in process context (constructor, message, status); values are published
 * with WRITE_ONCE and read by the I/O path with READ_ONCE.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-migrate.h"
#include "rainssd-tier.h"

/*
 * The numeric options: fields of struct rs_tunables (the decisions) or of
 * struct rainssd (the target), unsigned int each.
 */
struct rs_num_desc {
	const char *name;
	bool target;			/* a struct rainssd field, else struct rs_tunables */
	bool table_only;		/* no message: it shapes the volume when it is made */
	bool tier;			/* the tier's: no message on a volume with none */
	size_t offset;
	unsigned int min, max, def;
	char *error;			/* for ti->error */
};

#define RS_TUNABLE(f, lo, hi, d) {						\
	.name = #f, .offset = offsetof(struct rs_tunables, f), .min = lo,	\
	.max = hi, .def = d, .error = "Invalid " #f ": need " #lo " to " #hi	\
}

#define RS_TARGET_NUM(f, lo, hi, d) {						\
	.name = #f, .target = true, .offset = offsetof(struct rainssd, f),	\
	.min = lo, .max = hi, .def = d,						\
	.error = "Invalid " #f ": need " #lo " to " #hi				\
}

#define RS_TIER_NUM(f, lo, hi, d) {						\
	.name = #f, .target = true, .tier = true,				\
	.offset = offsetof(struct rainssd, f), .min = lo, .max = hi, .def = d,	\
	.error = "Invalid " #f ": need " #lo " to " #hi				\
}

static const struct rs_num_desc rs_num_descs[] = {
	RS_TUNABLE(ewma_weight, 1, 1024, RS_DEF_EWMA_WEIGHT),
	RS_TUNABLE(freq_window, 1, 65536, RS_DEF_FREQ_WINDOW),
	RS_TUNABLE(stall_factor, 0, 1000, RS_DEF_STALL_FACTOR),
	RS_TUNABLE(xor_ns, 0, 10000000, RS_DEF_XOR_NS),
	RS_TUNABLE(probe_ms, 0, 60000, RS_DEF_PROBE_MS),
	RS_TUNABLE(recon_load_pct, 0, 1000, RS_DEF_RECON_LOAD_PCT),
	RS_TARGET_NUM(min_recovery_rate, 0, 2000000000, RS_DEF_MIN_RECOVERY_RATE),
	RS_TARGET_NUM(max_recovery_rate, 0, 2000000000, RS_DEF_MAX_RECOVERY_RATE),
	RS_TARGET_NUM(max_corr_read_errors, 0, 1000000, RS_DEF_MAX_CORR_READ_ERRORS),
	{ .name = "region_size", .target = true, .table_only = true,
	  .offset = offsetof(struct rainssd, region_size), .min = 8, .max = 2147483647,
	  .def = RS_DEF_REGION_SIZE,
	  .error = "Invalid region_size: need 8 to 2147483647 sectors" },
	{ .name = "tier_size", .target = true, .table_only = true,
	  .offset = offsetof(struct rainssd, tier_size), .min = 0, .max = 4294967295U,
	  .def = 0, .error = "Invalid tier_size: need 0 to 4294967295 sectors" },
	RS_TIER_NUM(migration_threshold, 1, 63, RS_DEF_MIGRATION_THRESHOLD),
	RS_TIER_NUM(home_threshold, 1, 63, RS_DEF_HOME_THRESHOLD),
	RS_TIER_NUM(tier_high_pct, 0, 100, RS_DEF_TIER_HIGH_PCT),
	RS_TIER_NUM(tier_low_pct, 0, 100, RS_DEF_TIER_LOW_PCT),
	RS_TIER_NUM(migration_rate, 0, 2000000000, RS_DEF_MIGRATION_RATE),
};

static unsigned int *rs_num(struct rainssd *rs, const struct rs_num_desc *d)
{
	char *base = d->target ? (char *)rs : (char *)&rs->tun;

	return (unsigned int *)(base + d->offset);
}

/* Options, in the order the table status prints them. */
enum {
	RS_OPT_POLICY,
	RS_OPT_READ_POLICY,
	RS_OPT_STRIPE_CACHE,
	RS_OPT_REBUILD,
	RS_OPT_NOSYNC,
	RS_OPT_NUMS,
};

#define RS_NR_OPTS		(RS_OPT_NUMS + ARRAY_SIZE(rs_num_descs))

static const char * const rs_opt_names[RS_OPT_NUMS] = {
	[RS_OPT_POLICY] = "policy",
	[RS_OPT_READ_POLICY] = "read_policy",
	[RS_OPT_STRIPE_CACHE] = "stripe_cache",
	[RS_OPT_REBUILD] = "rebuild",
	[RS_OPT_NOSYNC] = "nosync",
};

/*
 * The default stripe cache: md's 256 entries, and room for two of the
 * largest operations (a volume's tier is known once its superblocks are
 * read: rs_args_tier).
 */
static unsigned int rs_stripe_cache_def(const struct rs_geom *g, bool tier)
{
	return max_t(unsigned int, RS_DEF_STRIPE_CACHE, 2 * rs_stripe_cache_min(g, tier));
}

/*
 * Once the superblocks say the volume has a tier: its migrations are the
 * largest operations (rs_op_max_pages), so a default stripe cache grows to
 * hold them and one the table gave too small is refused (1.11.4 let a
 * migration on the reserve index past it).
 */
int rs_args_tier(struct rainssd *rs, char **error)
{
	unsigned int min = rs_stripe_cache_min(&rs->geom, true);

	if (!rs->tier)
		return 0;
	if (rs->stripe_cache == rs_stripe_cache_def(&rs->geom, false)) {
		rs->stripe_cache = rs_stripe_cache_def(&rs->geom, true);
	} else if (rs->stripe_cache < min) {
		DMWARN("stripe_cache %u: with a tier this geometry needs %u to %u entries",
		       rs->stripe_cache, min, RS_MAX_STRIPE_CACHE);
		*error = "Invalid stripe_cache: too small for the tier's migrations (see the log)";
		return -EINVAL;
	}
	return 0;
}

void rs_args_default(struct rainssd *rs)
{
	unsigned int i;

	rs->policy = RS_POLICY_COUNT;
	rs->read_policy = RS_READ_DIRECT;
	rs->stripe_cache = rs_stripe_cache_def(&rs->geom, false);
	rs->rebuild_arg = RS_NO_MEMBER;
	rs->nosync = false;
	rs_tunables_default(&rs->tun);
	for (i = 0; i < ARRAY_SIZE(rs_num_descs); i++)
		if (rs_num_descs[i].target)
			*rs_num(rs, &rs_num_descs[i]) = rs_num_descs[i].def;
}

/* The option called @key, or -EINVAL. */
int rs_opt_index(const char *key)
{
	unsigned int i;

	for (i = 0; i < RS_OPT_NUMS; i++)
		if (!strcasecmp(key, rs_opt_names[i]))
			return i;
	for (i = 0; i < ARRAY_SIZE(rs_num_descs); i++)
		if (!strcasecmp(key, rs_num_descs[i].name))
			return RS_OPT_NUMS + i;
	return -EINVAL;
}

static int rs_set_stripe_cache(struct rainssd *rs, const char *val, char **error)
{
	unsigned int v, min = rs_stripe_cache_min(&rs->geom, rs->tier);

	if (kstrtouint(val, 10, &v) || v < min || v > RS_MAX_STRIPE_CACHE) {
		/* The lower bound depends on the geometry: the log says it. */
		DMWARN_LIMIT("stripe_cache '%s': this geometry needs %u to %u entries",
			     val, min, RS_MAX_STRIPE_CACHE);
		*error = "Invalid stripe_cache: too small here (see the kernel log) or over 32768";
		return -EINVAL;
	}
	WRITE_ONCE(rs->stripe_cache, v);
	/* Bios waiting for room may fit now. */
	if (rs->ol)
		rs_feed_kick(rs);
	return 0;
}

/*
 * A numeric option by message: the check of a pair (min and max) and the
 * store under opt_lock, as messages are not serialised by device-mapper
 * (up to 1.11.22 two at once could each pass against the other's old value
 * and leave min above max).
 */
static int rs_set_message_num(struct rainssd *rs, const struct rs_num_desc *d,
			      unsigned int v, char **error)
{
	int r = 0;

	mutex_lock(&rs->opt_lock);
	if ((!strcmp(d->name, "min_recovery_rate") && v > rs->max_recovery_rate) ||
	    (!strcmp(d->name, "max_recovery_rate") && v < rs->min_recovery_rate)) {
		*error = "min_recovery_rate must not exceed max_recovery_rate";
		r = -EINVAL;
	} else if ((!strcmp(d->name, "tier_low_pct") && v > rs->tier_high_pct) ||
		   (!strcmp(d->name, "tier_high_pct") && v < rs->tier_low_pct)) {
		*error = "tier_low_pct must not exceed tier_high_pct";
		r = -EINVAL;
	} else {
		WRITE_ONCE(*rs_num(rs, d), v);
	}
	mutex_unlock(&rs->opt_lock);
	if (!r && rs->tier_mig && strstr(d->name, "tier_") == d->name)
		rs_migrate_kick(rs->tier_mig);
	return r;
}

/*
 * Set option @opt (an rs_opt_index()) to @val; shared by the table line and
 * the messages (@in_table: the table line). On a bad value returns -EINVAL
 * with *@error set.
 */
int rs_set_option(struct rainssd *rs, int opt, const char *val, bool in_table, char **error)
{
	const struct rs_num_desc *d;
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
	case RS_OPT_STRIPE_CACHE:
		return rs_set_stripe_cache(rs, val, error);
	case RS_OPT_REBUILD:
		if (!in_table) {
			*error = "rebuild is a table argument: reload the table with rebuild <idx>";
			return -EINVAL;
		}
		if (kstrtouint(val, 10, &v) || v >= rs->geom.n) {
			*error = "Invalid rebuild: need a member index 0 to #devs - 1";
			return -EINVAL;
		}
		rs->rebuild_arg = v;
		return 0;
	case RS_OPT_NOSYNC:
		*error = "nosync is a table argument";
		return -EINVAL;
	}
	d = &rs_num_descs[opt - RS_OPT_NUMS];
	if (d->table_only && !in_table) {
		*error = !strcmp(d->name, "tier_size") ?
			 "tier_size is a table argument: it shapes a new volume's tier" :
			 "region_size is a table argument: it shapes a new volume's bitmap";
		return -EINVAL;
	}
	/*
	 * The table takes them on any volume (its status prints them back
	 * when they differ from their defaults, so that a reload keeps them).
	 */
	if (d->tier && !in_table && !rs->tier) {
		*error = "this volume has no tier";
		return -EINVAL;
	}
	if (kstrtouint(val, 10, &v) || v < d->min || v > d->max) {
		*error = d->error;
		return -EINVAL;
	}
	if (in_table) {
		/* The pairs are checked once both are read (rs_parse_opt_args). */
		if (!strcmp(d->name, "tier_size"))
			rs->tier_size_given = true;
		else if (!strcmp(d->name, "region_size"))
			rs->region_size_given = true;
		*rs_num(rs, d) = v;
		return 0;
	}
	return rs_set_message_num(rs, d, v, error);
}

/*
 * Optional arguments, in any order, each at most once (docs/rainssd.rst):
 *   policy <count|rmw|rcw|adaptive>	parity-update decision (default count)
 *   read_policy <direct|adaptive|reconstruct>  read decision (default direct)
 *   stripe_cache <entries>		operations' buffers in flight, md's
 *					stripe_cache_size (default 256)
 *   rebuild <idx>			rebuild member idx (a replacement)
 *   nosync				a new volume's parity is taken as it is
 *   ewma_weight <1..1024>		service-time average window (16)
 *   freq_window <1..65536>		arrival-rate window in requests (128)
 *   stall_factor <0..1000>		stall threshold in service times (8; 0 off)
 *   xor_ns <0..10000000>		least t_xor of a reconstruct read (20000)
 *   probe_ms <0..60000>		refresh a bypassed member's estimates (100; 0 off)
 *   recon_load_pct <0..1000>		weight of the read model's load terms (100)
 *   min_recovery_rate <KiB/s>		resync and rebuild speed floor per member (1000)
 *   max_recovery_rate <KiB/s>		... and ceiling (200000)
 *   max_corr_read_errors <n>		read errors a member may have (20)
 *   region_size <sectors>		a new volume's bitmap regions (131072: 64 MiB)
 *   tier_size <sectors>		a new volume's RAID1 tier, per member (0: none)
 *   migration_threshold <1..63>	HybRAID's online migration threshold (4)
 *   home_threshold <1..63>		writes in the tier before a full-stripe write moves home (1)
 *   tier_high_pct, tier_low_pct <0..100>  the offline migration's watermarks (90, 70)
 *   migration_rate <KiB/s>		the offline migration's speed per member (20000)
 */
int rs_parse_opt_args(struct rainssd *rs, struct dm_arg_set *as)
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
	while (argc) {
		word = dm_shift_arg(as);
		argc--;
		opt = rs_opt_index(word);
		if (opt < 0) {
			ti->error = "Unknown optional argument";
			return -EINVAL;
		}
		if (__test_and_set_bit(opt, &seen)) {
			ti->error = "Optional argument given twice";
			return -EINVAL;
		}
		if (opt == RS_OPT_NOSYNC) {
			rs->nosync = true;
			continue;
		}
		if (!argc) {
			ti->error = "Optional argument without its value";
			return -EINVAL;
		}
		argc--;
		r = rs_set_option(rs, opt, dm_shift_arg(as), true, &ti->error);
		if (r)
			return r;
	}
	if (as->argc) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}
	if (rs->min_recovery_rate > rs->max_recovery_rate) {
		ti->error = "min_recovery_rate must not exceed max_recovery_rate";
		return -EINVAL;
	}
	if (rs->tier_low_pct > rs->tier_high_pct) {
		ti->error = "tier_low_pct must not exceed tier_high_pct";
		return -EINVAL;
	}
	return 0;
}

/* Option @opt's value now (nosync: 1 or 0). */
static unsigned int rs_opt_value(struct rainssd *rs, unsigned int opt)
{
	switch (opt) {
	case RS_OPT_POLICY:
		return READ_ONCE(rs->policy);
	case RS_OPT_READ_POLICY:
		return READ_ONCE(rs->read_policy);
	case RS_OPT_STRIPE_CACHE:
		return READ_ONCE(rs->stripe_cache);
	case RS_OPT_REBUILD:
		return READ_ONCE(rs->rebuild_member);
	case RS_OPT_NOSYNC:
		return rs->nosync;
	}
	return READ_ONCE(*rs_num(rs, &rs_num_descs[opt - RS_OPT_NUMS]));
}

/* Whether option @opt with value @v is printed: it differs from its default, or is in force. */
static bool rs_opt_set(struct rainssd *rs, unsigned int opt, unsigned int v)
{
	switch (opt) {
	case RS_OPT_POLICY:
		return v != RS_POLICY_COUNT;
	case RS_OPT_READ_POLICY:
		return v != RS_READ_DIRECT;
	case RS_OPT_STRIPE_CACHE:
		return v != rs_stripe_cache_def(&rs->geom, rs->tier);
	case RS_OPT_REBUILD:
		/* While a member is being rebuilt: a reload goes on from its checkpoint. */
		return v != RS_NO_MEMBER;
	case RS_OPT_NOSYNC:
		return v;
	}
	return v != rs_num_descs[opt - RS_OPT_NUMS].def;
}

/*
 * The table status's optional arguments: those that differ from their
 * defaults, each read once (up to 1.11.14 the word count and the words
 * read them apart, so a rebuild that ended in between printed a count
 * with no "rebuild" behind it, or "rebuild 4294967295").
 */
void rs_emit_table_opts(struct rainssd *rs, char *result, unsigned int maxlen,
			unsigned int *sz_ptr)
{
	unsigned int sz = *sz_ptr, opt, words = 0;
	unsigned int v[RS_NR_OPTS];

	/* Both values of a pair as one message left them (process context). */
	mutex_lock(&rs->opt_lock);
	for (opt = 0; opt < RS_NR_OPTS; opt++)
		v[opt] = rs_opt_value(rs, opt);
	mutex_unlock(&rs->opt_lock);
	for (opt = 0; opt < RS_NR_OPTS; opt++)
		if (rs_opt_set(rs, opt, v[opt]))
			words += opt == RS_OPT_NOSYNC ? 1 : 2;
	if (!words)
		return;
	DMEMIT(" %u", words);
	for (opt = 0; opt < RS_NR_OPTS; opt++) {
		if (!rs_opt_set(rs, opt, v[opt]))
			continue;
		switch (opt) {
		case RS_OPT_POLICY:
			DMEMIT(" policy %s", rs_policy_name(v[opt]));
			break;
		case RS_OPT_READ_POLICY:
			DMEMIT(" read_policy %s", rs_read_policy_name(v[opt]));
			break;
		case RS_OPT_STRIPE_CACHE:
			DMEMIT(" stripe_cache %u", v[opt]);
			break;
		case RS_OPT_REBUILD:
			DMEMIT(" rebuild %u", v[opt]);
			break;
		case RS_OPT_NOSYNC:
			DMEMIT(" nosync");
			break;
		default:
			DMEMIT(" %s %u", rs_num_descs[opt - RS_OPT_NUMS].name, v[opt]);
			break;
		}
	}
	*sz_ptr = sz;
}
