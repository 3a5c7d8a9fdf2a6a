/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd XOR: the kernel's xor_blocks() (<linux/raid/xor.h>, the fastest
 * SIMD routine the CPU has, several sources per pass) for any number of
 * sources. Process context only (the SIMD routines take the FPU); never in
 * interrupt context. Does not block.
 */
#ifndef RAINSSD_XOR_H
#define RAINSSD_XOR_H

#include <linux/types.h>

/* The length unit xor_blocks() needs: every length is a multiple of it. */
#define RS_XOR_UNIT	512

void rs_xor_blocks(void *dst, void **srcs, unsigned int nr, unsigned int len);

#endif
