// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd counters, status line and messages (docs/rainssd.rst has every
 * field and message). Process context; takes stats_lock, may sleep.
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "rainssd.h"
#include "rainssd-meta.h"
#include "rainssd-migrate.h"
#include "rainssd-sync.h"
#include "rainssd-tiermap.h"

int rs_stats_init(struct rainssd *rs)
{
	mutex_init(&rs->stats_lock);
	rs->stats = alloc_percpu(struct rs_stats);
	rs->stats_base = kzalloc(sizeof(*rs->stats_base), GFP_KERNEL);
	rs->stats_sum = kzalloc(sizeof(*rs->stats_sum), GFP_KERNEL);
	if (!rs->stats || !rs->stats_base || !rs->stats_sum)
		return -ENOMEM;
	return 0;
}

/* Safe on a partly set-up target. */
void rs_stats_exit(struct rainssd *rs)
{
	free_percpu(rs->stats);
	kfree(rs->stats_base);
	kfree(rs->stats_sum);
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
	unsigned int i, m;

	mutex_lock(&rs->stats_lock);
	rs_sum_stats(rs);
	for (i = 0; i < RS_NR_STATS; i++)
		rs->stats_base->c[i] += rs->stats_sum->c[i];
	for (m = 0; m < rs->geom.n; m++)
		for (i = 0; i < RS_NR_MSTATS; i++)
			rs->stats_base->m[m][i] += rs->stats_sum->m[m][i];
	rs_op_cache_reset_peak(rs);
	mutex_unlock(&rs->stats_lock);
}

static unsigned int rs_us(u64 ns)
{
	return min_t(u64, div_u64(ns + NSEC_PER_USEC / 2, NSEC_PER_USEC), UINT_MAX);
}

/*
 * The tier's fields (1.7.0): <used>/<capacity> stripes, online migrations
 * in and out, offline migrations, writes and reads it served, what the
 * offline migration does, the mapping table's mode and needs_check (or -).
 * A volume without a tier prints 0/0 and zeros, idle, rw, -.
 */
static void rs_status_tier(struct rainssd *rs, char *result, unsigned int maxlen,
			   unsigned int *sz_ptr)
{
	struct rs_tier_stats ts = { .mode = RS_TIER_RW };
	unsigned int sz = *sz_ptr;
	const char *action;
	u64 moved, left;

	if (rs->tier)
		rs_tier_stats(rs->tier, &ts);
	action = rs_migrate_status(rs->tier_mig, &moved, &left);
	DMEMIT(" %u/%u %llu %llu %llu %llu %llu %s %s %s", ts.used, ts.records, ts.to_r1,
	       ts.to_r5, ts.offline, ts.r1_writes, ts.r1_reads, action,
	       rs_tier_mode_name(ts.mode), ts.needs_check ? "needs_check" : "-");
	*sz_ptr = sz;
}

/*
 * Status (INFO), docs/rainssd.rst has every field:
 *   <version> <#devs> <health> <reads> <writes> <full_stripe_writes> <rmw>
 *   <rcw> <degraded_writes> <prereads> <reconstruct_reads> <policy>
 *   <read_policy> <rmw_adjusted> <rcw_adjusted> <cold_fallbacks>
 *   <policy_reconstructs> <probes> <rebuild_us> <member_0> ... <member_N-1>
 *   <stripe_cache_used> <stripe_cache> <stripe_cache_peak> <ops> <replans>
 *   <deferred_bios> <reserve_ops> <emergency_steps> <sync_ratio>
 *   <sync_action> <read_errors> <repaired> <mismatch_cnt> <tier_stripes>
 *   <tier_to_r1> <tier_to_r5> <tier_offline> <tier_writes> <tier_reads>
 *   <migration_action> <metadata_mode> <needs_check> <joined_writes>
 * health has one character per member: A in sync, a being rebuilt, D failed
 * or missing (dm-raid's letters). sync_ratio is <done>/<total> sectors per
 * member of the resync or rebuild, sync_action idle, resync, recover or
 * frozen; read_errors and repaired have one number per member, joined by
 * colons: corrected read errors, and blocks rewritten. Each member word is
 *   <reads_in_flight>:<writes_in_flight>:<t_read_us>:<t_write_us>:
 *   <arrivals_per_s>:<stall_ms>:<prereads>:<reconstruct_reads>:<bypassed>:<stalls>:
 *   <foreign_x100>:<foreign_per_s>
 */
void rs_status_info(struct rainssd *rs, char *result, unsigned int maxlen)
{
	unsigned int sz = 0, i, n = rs->geom.n, used, peak, rb;
	struct rs_stats *st = rs->stats_sum;
	struct rs_load_snap *snap;
	const char *action;
	u64 done, total, mismatches;

	mutex_lock(&rs->stats_lock);
	rs_sum_stats(rs);
	DMEMIT("%s %u ", RS_VERSION_STR, n);
	/* The rebuild before the failed members: see rs_member_holds(). */
	rb = READ_ONCE(rs->rebuild_member);
	smp_rmb();	/* pairs with smp_mb__after_atomic() in rs_meta_publish() */
	for (i = 0; i < n; i++)
		DMEMIT("%c", rs_member_dead(rs, i) ? 'D' : i == rb ? 'a' : 'A');
	for (i = 0; i < RS_NR_BASIC_STATS; i++)
		DMEMIT(" %llu", st->c[i]);
	DMEMIT(" %s %s", rs_policy_name(READ_ONCE(rs->policy)),
	       rs_read_policy_name(READ_ONCE(rs->read_policy)));
	for (i = RS_NR_BASIC_STATS; i < RS_NR_POLICY_STATS; i++)
		DMEMIT(" %llu", st->c[i]);
	snap = get_cpu_ptr(rs->snap);
	rs_load_snapshot(&rs->load, READ_ONCE(rs->dead_mask), snap);
	DMEMIT(" %u", rs_us(rs_load_rebuild_measured(&rs->load)));
	for (i = 0; i < n; i++) {
		const struct rs_member_snap *m = &snap->m[i];

		DMEMIT(" %u:%u:%u:%u:%llu:%u:%llu:%llu:%llu:%llu:%u:%u", m->reads, m->writes,
		       rs_us(m->t_read), rs_us(m->t_write),
		       m->interval ? div_u64(NSEC_PER_SEC, m->interval) : 0ULL,
		       rs_us(m->t_stall) / (unsigned int)USEC_PER_MSEC,
		       st->m[i][RS_MSTAT_PREREADS], st->m[i][RS_MSTAT_RECON_READS],
		       st->m[i][RS_MSTAT_BYPASSED], st->m[i][RS_MSTAT_STALLS],
		       (u32)((m->foreign * 100ULL + RS_OCC_ONE / 2) >> RS_OCC_SHIFT),
		       m->foreign_interval ? (u32)(NSEC_PER_SEC / m->foreign_interval) : 0U);
	}
	put_cpu_ptr(rs->snap);
	rs_op_cache_usage(rs, &used, &peak);
	DMEMIT(" %u %u %u", used, READ_ONCE(rs->stripe_cache), peak);
	for (i = RS_NR_POLICY_STATS; i < RS_NR_OP_STATS; i++)
		DMEMIT(" %llu", st->c[i]);
	action = rs_sync_status(rs->sync, &done, &total, &mismatches);
	DMEMIT(" %llu/%llu %s ", done, total, action);
	for (i = 0; i < n; i++)
		DMEMIT("%s%u", i ? ":" : "", atomic_read(&rs->read_errors[i]));
	DMEMIT(" ");
	for (i = 0; i < n; i++)
		DMEMIT("%s%llu", i ? ":" : "", st->m[i][RS_MSTAT_REPAIRED]);
	DMEMIT(" %llu", mismatches);
	rs_status_tier(rs, result, maxlen, &sz);
	DMEMIT(" %llu", st->c[RS_STAT_JOINED]);
	mutex_unlock(&rs->stats_lock);
}

/*
 * Messages (docs/rainssd.rst):
 *   fail <idx>			mark member idx dead (its data is then rebuilt)
 *   policy <name>		count, rmw, rcw or adaptive
 *   read_policy <name>		direct, adaptive or reconstruct
 *   stripe_cache <entries>	the cap on operations' buffers in flight
 *   min_recovery_rate, max_recovery_rate <KiB/s>, max_corr_read_errors <n>
 *   <tunable> <value>		ewma_weight, freq_window, stall_factor, xor_ns,
 *				probe_ms, recon_load_pct (the table's ranges)
 *   stats_reset		the status counters start again from zero
 *   check, repair, idle, frozen  scrub and sync control (dm-raid's words)
 *   flush_tier [idle]		move every stripe out of the tier (idle: stop)
 *   migration_threshold, home_threshold, tier_high_pct, tier_low_pct,
 *   migration_rate <n>
 */
int rs_message(struct dm_target *ti, unsigned int argc, char **argv,
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
	if (argc == 1 && (!strcasecmp(argv[0], "check") || !strcasecmp(argv[0], "repair") ||
			  !strcasecmp(argv[0], "idle") || !strcasecmp(argv[0], "frozen"))) {
		int r = rs_sync_message(rs->sync, argv[0], &error);

		if (r)
			DMWARN_LIMIT("%s: %s", argv[0], error);
		return r;
	}
	if (argc >= 1 && !strcasecmp(argv[0], "flush_tier")) {
		int r = rs_migrate_message(rs->tier_mig, argc, argv, &error);

		if (r)
			DMWARN_LIMIT("flush_tier: %s", error);
		return r;
	}
	if (argc == 2 && !strcasecmp(argv[0], "fail")) {
		if (kstrtouint(argv[1], 10, &idx) || idx >= rs->geom.n) {
			DMWARN_LIMIT("fail: member index must be 0..%u, not '%s'",
				     rs->geom.n - 1, argv[1]);
			return -EINVAL;
		}
		/*
		 * A table whose first resume failed: that resume decides the
		 * member states again from the superblocks, so a failure now
		 * would be forgotten there (1.11.6).
		 */
		if (READ_ONCE(rs->act)) {
			DMWARN_LIMIT("fail: this table never resumed; give the member as -");
			return -EBUSY;
		}
		/*
		 * A suspended table commits nothing until it resumes, and a new
		 * table may take the device instead (1.11.15). The device's state
		 * too: of a table of several segments, one may have resumed
		 * while another's preresume failed.
		 */
		if (rs_meta_suspended(rs->meta) || dm_suspended(rs->ti)) {
			DMWARN_LIMIT("fail: the volume is suspended; resume it first");
			return -EBUSY;
		}
		rs_member_failed(rs, idx, "failed by message");
		return 0;
	}
	opt = argc == 2 ? rs_opt_index(argv[0]) : -EINVAL;
	if (opt >= 0) {
		if (rs_set_option(rs, opt, argv[1], false, &error)) {
			DMWARN_LIMIT("%s %s: %s", argv[0], argv[1], error);
			return -EINVAL;
		}
		return 0;
	}
	DMWARN_LIMIT("unknown message '%s' with %u argument(s); see docs/rainssd.rst",
		     argc ? argv[0] : "", argc ? argc - 1 : 0);
	return -EINVAL;
}
