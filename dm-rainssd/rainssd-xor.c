// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd XOR helper: dst ^= src for any length and alignment, a word at a
 * time where both buffers allow it.
 */
#include <linux/kernel.h>

#include "rainssd-xor.h"

void rs_xor(void *dst, const void *src, size_t len)
{
	u8 *d = dst;
	const u8 *s = src;

	if (IS_ALIGNED((unsigned long)d | (unsigned long)s, sizeof(unsigned long))) {
		unsigned long *dw = (unsigned long *)d;
		const unsigned long *sw = (const unsigned long *)s;

		for (; len >= 4 * sizeof(unsigned long); len -= 4 * sizeof(unsigned long)) {
			dw[0] ^= sw[0];
			dw[1] ^= sw[1];
			dw[2] ^= sw[2];
			dw[3] ^= sw[3];
			dw += 4;
			sw += 4;
		}
		for (; len >= sizeof(unsigned long); len -= sizeof(unsigned long))
			*dw++ ^= *sw++;
		d = (u8 *)dw;
		s = (const u8 *)sw;
	}
	while (len--)
		*d++ ^= *s++;
}
