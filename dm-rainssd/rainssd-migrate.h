/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd offline migration: moves the RAID1 tier's coldest stripes
 * back to their RAID-5 homes in the background (HybRAID's offline
 * migration), one stripe per operation, once the tier is fuller than
 * tier_high_pct and until it is down to tier_low_pct; or every stripe
 * (flush_tier, for decommissioning: the members are then a plain md-layout
 * RAID-5 again). At most migration_rate KiB/s per member, and while user
 * I/O goes on it pauses briefly between stripes whenever it is ahead of a
 * quarter of that (rs_mig_min_rate; up to 1.11.13 it never paused), so it
 * keeps at least that pace (its stripe-cache room is beyond the cap the
 * user's operations share: rs_op_get(); up to 1.11.14 a saturating load
 * could keep it from any).
 * Not while a member is out or a resync or rebuild is pending: a stripe's
 * rows that are not in the tier may then not be readable from its home.
 *
 * Handle: struct rs_migrate (opaque). rs_migrate_create and
 * rs_migrate_destroy are for the constructor and destructor;
 * rs_migrate_start (resume) and rs_migrate_stop (presuspend: waits for the
 * operation in flight) may sleep; rs_migrate_kick, rs_migrate_status and
 * rs_migrate_message never sleep.
 */
#ifndef RAINSSD_MIGRATE_H
#define RAINSSD_MIGRATE_H

#include <linux/types.h>

struct rainssd;
struct rs_migrate;

/* The pace the migration keeps while user I/O goes on, at @rate KiB/s (0: no limit, no pause). */
static inline u64 rs_mig_min_rate(u64 rate)
{
	return rate / 4;
}

int rs_migrate_create(struct rainssd *rs, struct rs_migrate **out);
void rs_migrate_destroy(struct rs_migrate *mg);
void rs_migrate_start(struct rs_migrate *mg);
void rs_migrate_stop(struct rs_migrate *mg);
void rs_migrate_kick(struct rs_migrate *mg);
const char *rs_migrate_status(struct rs_migrate *mg, u64 *moved, u64 *left);
int rs_migrate_message(struct rs_migrate *mg, unsigned int argc, char **argv, char **error);

#endif
