/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RAINSSD_KSHIM_UNALIGNED_H
#define RAINSSD_KSHIM_UNALIGNED_H
#include "../kshim.h"

/* Little-endian accessors at any alignment. */
static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;

	return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}
static inline u64 get_unaligned_le64(const void *p)
{
	return get_unaligned_le32(p) | (u64)get_unaligned_le32((const u8 *)p + 4) << 32;
}
static inline void put_unaligned_le32(u32 v, void *p)
{
	u8 *b = p;

	b[0] = v;
	b[1] = v >> 8;
	b[2] = v >> 16;
	b[3] = v >> 24;
}
static inline void put_unaligned_le64(u64 v, void *p)
{
	put_unaligned_le32((u32)v, p);
	put_unaligned_le32((u32)(v >> 32), (u8 *)p + 4);
}

#endif
