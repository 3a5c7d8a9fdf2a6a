/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RAINSSD_KSHIM_CRC32C_H
#define RAINSSD_KSHIM_CRC32C_H
#include "../kshim.h"

/* The kernel's crc32c() (Castagnoli, reflected, no final XOR), bit by bit. */
static inline u32 crc32c(u32 crc, const void *p, size_t n)
{
	const u8 *b = p;
	unsigned int i;

	while (n--) {
		crc ^= *b++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0x82F63B78U & -(crc & 1));
	}
	return crc;
}

#endif
