/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd: every difference between the kernels it builds against
 * (Debian 12's 6.1 and the 6.12 LTS test kernel) is handled here.
 */
#ifndef RAINSSD_COMPAT_H
#define RAINSSD_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dm-rainssd needs Linux 6.1 or later"
#endif

#endif
