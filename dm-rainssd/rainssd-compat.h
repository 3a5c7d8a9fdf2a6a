/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd: every difference between the kernels it builds against
 * (Debian 12's 6.1 and the 6.12 LTS test kernel) is handled here.
 */
#ifndef RAINSSD_COMPAT_H
#define RAINSSD_COMPAT_H

#include <linux/blkdev.h>
#include <linux/version.h>

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

#endif
