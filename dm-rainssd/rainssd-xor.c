// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd XOR (see rainssd-xor.h).
 */
#include <linux/kernel.h>
#include <linux/raid/xor.h>

#include "rainssd-xor.h"

/*
 * dst ^= srcs[0] ^ ... ^ srcs[nr - 1] over @len bytes. The engine's lengths
 * are whole sectors, which xor_blocks() takes as they are; a tail shorter
 * than RS_XOR_UNIT (KUnit's odd lengths) is done a byte at a time, because
 * the SIMD routines leave what does not fill their last line untouched.
 */
void rs_xor_blocks(void *dst, void **srcs, unsigned int nr, unsigned int len)
{
	unsigned int bulk = round_down(len, RS_XOR_UNIT), i, k, b;
	u8 *d = dst;

	for (i = 0; bulk && i < nr; i += k) {
		k = min_t(unsigned int, nr - i, MAX_XOR_BLOCKS);
		xor_blocks(k, bulk, dst, srcs + i);
	}
	for (i = 0; i < nr; i++)
		for (b = bulk; b < len; b++)
			d[b] ^= ((const u8 *)srcs[i])[b];
}
