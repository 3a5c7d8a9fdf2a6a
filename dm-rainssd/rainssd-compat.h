/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd: every difference between the kernels it builds against
 * (Debian 12's 6.1 and the 6.12 LTS test kernel) is handled here.
 */
#ifndef RAINSSD_COMPAT_H
#define RAINSSD_COMPAT_H

#include <linux/blkdev.h>
#include <linux/part_stat.h>
#include <linux/version.h>

/* get_unaligned_le*() and put_unaligned_le*(): moved in 6.12. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dm-rainssd needs Linux 6.1 or later"
#endif

/*
 * Let dm hand the target bios of up to @sectors whatever the members'
 * transfer limits: the target builds its own member bios, and the block
 * layer splits those where a member needs it. From 6.10 the block layer
 * computes max_sectors itself, from max_hw_sectors and max_user_sectors.
 */
static inline void rs_limits_set_max_io(struct queue_limits *lim, unsigned int sectors)
{
	lim->max_hw_sectors = sectors;
	lim->max_dev_sectors = 0;
	lim->max_sectors = sectors;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	lim->max_user_sectors = sectors;
#endif
}

/*
 * The I/O statistics of the disk @bdev is on (all its partitions'): reads,
 * writes and discards completed, their sectors and their summed latency in
 * ns, as /proc/diskstats counts them; each CPU's counters read once,
 * without a lock (as part_stat_read() does). bdev_whole() and bd_stats are
 * the same on 6.1 and 6.12; the latency is in ns on both (nsecs[]).
 */
static inline void rs_bdev_io_stat(struct block_device *bdev, u64 *ios, u64 *sectors, u64 *ns)
{
	struct block_device *whole = bdev_whole(bdev);
	int cpu, g;

	*ios = 0;
	*sectors = 0;
	*ns = 0;
	for_each_possible_cpu(cpu) {
		struct disk_stats *ds = per_cpu_ptr(whole->bd_stats, cpu);

		for (g = STAT_READ; g <= STAT_DISCARD; g++) {
			*ios += READ_ONCE(ds->ios[g]);
			*sectors += READ_ONCE(ds->sectors[g]);
			*ns += READ_ONCE(ds->nsecs[g]);
		}
	}
}

#endif
