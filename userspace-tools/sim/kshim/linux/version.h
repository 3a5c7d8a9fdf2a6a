/* SPDX-License-Identifier: GPL-2.0 */
/* rainssd-compat.h picks its headers by version: the 6.12 ones (linux/unaligned.h). */
#ifndef RAINSSD_KSHIM_VERSION_H
#define RAINSSD_KSHIM_VERSION_H
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE	KERNEL_VERSION(6, 12, 0)
#endif
