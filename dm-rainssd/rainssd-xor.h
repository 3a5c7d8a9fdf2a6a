/* SPDX-License-Identifier: GPL-2.0 */
/* dm-rainssd XOR helper. */
#ifndef RAINSSD_XOR_H
#define RAINSSD_XOR_H

#include <linux/types.h>

void rs_xor(void *dst, const void *src, size_t len);

#endif
