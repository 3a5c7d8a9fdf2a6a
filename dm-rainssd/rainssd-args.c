// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd optional arguments: the table line's <key> <value> pairs, the
 * messages of the same names, and the table status that prints them back.
 * Everything here runs in process context (constructor, message, status);
 * values are published with WRITE_ONCE and read by the I/O path with
 * READ_ONCE.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "rainssd.h"

/* The numeric tunables of the decisions: struct rs_tunables fields. */
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

/* Options, in the order the table status prints them. */
#define RS_OPT_POLICY		0
#define RS_OPT_READ_POLICY	1
#define RS_OPT_STRIPE_CACHE	2
#define RS_OPT_TUNABLES		3
#define RS_NR_OPTS		(RS_OPT_TUNABLES + ARRAY_SIZE(rs_tunable_descs))

/* The default stripe cache: md's 256 entries, and room for two of the largest operations. */
static unsigned int rs_stripe_cache_def(const struct rs_geom *g)
{
	return max_t(unsigned int, RS_DEF_STRIPE_CACHE, 2 * rs_stripe_cache_min(g));
}

void rs_args_default(struct rainssd *rs)
{
	rs->policy = RS_POLICY_COUNT;
	rs->read_policy = RS_READ_DIRECT;
	rs->stripe_cache = rs_stripe_cache_def(&rs->geom);
	rs_tunables_default(&rs->tun);
}

/* The option called @key, or -EINVAL. */
int rs_opt_index(const char *key)
{
	unsigned int i;

	if (!strcasecmp(key, "policy"))
		return RS_OPT_POLICY;
	if (!strcasecmp(key, "read_policy"))
		return RS_OPT_READ_POLICY;
	if (!strcasecmp(key, "stripe_cache"))
		return RS_OPT_STRIPE_CACHE;
	for (i = 0; i < ARRAY_SIZE(rs_tunable_descs); i++)
		if (!strcasecmp(key, rs_tunable_descs[i].name))
			return RS_OPT_TUNABLES + i;
	return -EINVAL;
}

static int rs_set_stripe_cache(struct rainssd *rs, const char *val, char **error)
{
	unsigned int v, min = rs_stripe_cache_min(&rs->geom);

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
 * Set option @opt (an rs_opt_index()) to @val; shared by the table line and
 * the messages. On a bad value returns -EINVAL with *@error set.
 */
int rs_set_option(struct rainssd *rs, int opt, const char *val, char **error)
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
	case RS_OPT_STRIPE_CACHE:
		return rs_set_stripe_cache(rs, val, error);
	}
	d = &rs_tunable_descs[opt - RS_OPT_TUNABLES];
	if (kstrtouint(val, 10, &v) || v < d->min || v > d->max) {
		*error = d->error;
		return -EINVAL;
	}
	WRITE_ONCE(*rs_tunable(&rs->tun, d), v);
	return 0;
}

/*
 * Optional arguments, <key> <value> pairs in any order, each key at most once
 * (docs/rainssd.rst):
 *   policy <count|rmw|rcw|adaptive>	parity-update decision (default count)
 *   read_policy <direct|adaptive|reconstruct>  read decision (default direct)
 *   stripe_cache <entries>		operations' buffers in flight, md's
 *					stripe_cache_size (default 256)
 *   ewma_weight <1..1024>		service-time average window (16)
 *   freq_window <1..65536>		arrival-rate window in requests (128)
 *   stall_factor <0..1000>		stall threshold in service times (8; 0 off)
 *   xor_ns <0..10000000>		least t_xor of a reconstruct read (20000)
 *   probe_ms <0..60000>		refresh a bypassed member's estimates (100; 0 off)
 *   recon_load_pct <0..1000>		weight of the read model's load terms (100)
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

/* Whether option @opt differs from its default (and so is printed). */
static bool rs_opt_set(struct rainssd *rs, unsigned int opt)
{
	const struct rs_tunable_desc *d;

	switch (opt) {
	case RS_OPT_POLICY:
		return READ_ONCE(rs->policy) != RS_POLICY_COUNT;
	case RS_OPT_READ_POLICY:
		return READ_ONCE(rs->read_policy) != RS_READ_DIRECT;
	case RS_OPT_STRIPE_CACHE:
		return READ_ONCE(rs->stripe_cache) != rs_stripe_cache_def(&rs->geom);
	}
	d = &rs_tunable_descs[opt - RS_OPT_TUNABLES];
	return READ_ONCE(*rs_tunable(&rs->tun, d)) != d->def;
}

/* The table status's optional arguments: those that differ from their defaults. */
void rs_emit_table_opts(struct rainssd *rs, char *result, unsigned int maxlen,
			unsigned int *sz_ptr)
{
	unsigned int sz = *sz_ptr, opt, words = 0;

	for (opt = 0; opt < RS_NR_OPTS; opt++)
		words += rs_opt_set(rs, opt) ? 2 : 0;
	if (!words)
		return;
	DMEMIT(" %u", words);
	for (opt = 0; opt < RS_NR_OPTS; opt++) {
		if (!rs_opt_set(rs, opt))
			continue;
		switch (opt) {
		case RS_OPT_POLICY:
			DMEMIT(" policy %s", rs_policy_name(READ_ONCE(rs->policy)));
			break;
		case RS_OPT_READ_POLICY:
			DMEMIT(" read_policy %s", rs_read_policy_name(READ_ONCE(rs->read_policy)));
			break;
		case RS_OPT_STRIPE_CACHE:
			DMEMIT(" stripe_cache %u", READ_ONCE(rs->stripe_cache));
			break;
		default: {
			const struct rs_tunable_desc *d = &rs_tunable_descs[opt - RS_OPT_TUNABLES];

			DMEMIT(" %s %u", d->name, READ_ONCE(*rs_tunable(&rs->tun, d)));
			break;
		}
		}
	}
	*sz_ptr = sz;
}
