/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the block layer for rainssd-compat.h's inline helpers to
 * compile (rainssd-tier.c includes it for the unaligned accessors); the
 * simulator never calls them.
 */
#ifndef RAINSSD_KSHIM_BLKDEV_H
#define RAINSSD_KSHIM_BLKDEV_H
#include "../kshim.h"

enum stat_group { STAT_READ, STAT_WRITE, STAT_DISCARD, STAT_FLUSH, NR_STAT_GROUPS };

struct disk_stats {
	u64 nsecs[NR_STAT_GROUPS];
	unsigned long sectors[NR_STAT_GROUPS];
	unsigned long ios[NR_STAT_GROUPS];
};

struct block_device {
	struct disk_stats *bd_stats;
};

struct queue_limits {
	unsigned int max_hw_sectors, max_dev_sectors, max_sectors, max_user_sectors;
};

static inline struct block_device *bdev_whole(struct block_device *bdev) { return bdev; }
#define for_each_possible_cpu(cpu)	for ((cpu) = 0; (cpu) < 1; (cpu)++)
#define per_cpu_ptr(ptr, cpu)		((void)(cpu), (ptr))

#endif
