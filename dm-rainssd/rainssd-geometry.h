/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd stripe geometry: Linux md's left-symmetric RAID-5 layout.
 *
 * Every member holds its data area from sector RS_DATA_OFFSET on. Stripe s
 * occupies member sectors [RS_DATA_OFFSET + s * C, RS_DATA_OFFSET + (s+1) * C)
 * of every member, where C is the chunk size in sectors. The parity of stripe
 * s lives on member (N - 1) - (s mod N) and data chunk k (0 <= k < N - 1) of
 * the stripe on member (parity + 1 + k) mod N, exactly as md's
 * ALGORITHM_LEFT_SYMMETRIC places them.
 */
#ifndef RAINSSD_GEOMETRY_H
#define RAINSSD_GEOMETRY_H

#include <linux/types.h>

/* Data area start on every member: 16 MiB, the same as mdadm --data-offset=16M. */
#define RS_DATA_OFFSET		32768ULL
#define RS_MIN_DEVS		3
#define RS_MAX_DEVS		32
#define RS_MIN_CHUNK		8	/* sectors: 4 KiB */
#define RS_MAX_CHUNK		2048	/* sectors: 1 MiB */

struct rs_geom {
	unsigned int n;			/* members */
	unsigned int chunk;		/* chunk size in sectors, power of two */
	unsigned int chunk_shift;	/* log2(chunk) */
	unsigned int stripe_data;	/* data sectors per stripe: (n - 1) * chunk */
	sector_t data_offset;		/* first data sector on every member */
};

/* Where one logical sector lives. */
struct rs_loc {
	u64 stripe;		/* stripe number */
	unsigned int k;		/* data chunk index within the stripe */
	unsigned int member;	/* member holding that chunk */
	unsigned int row;	/* sector offset inside the chunk */
	sector_t msector;	/* sector on the member */
};

int rs_geom_init(struct rs_geom *g, unsigned int n, unsigned int chunk);
unsigned int rs_parity_member(const struct rs_geom *g, u64 stripe);
unsigned int rs_data_member(const struct rs_geom *g, u64 stripe, unsigned int k);
int rs_member_to_k(const struct rs_geom *g, u64 stripe, unsigned int member);
void rs_map(const struct rs_geom *g, sector_t lsector, struct rs_loc *loc);
sector_t rs_unmap(const struct rs_geom *g, u64 stripe, unsigned int k, unsigned int row);
sector_t rs_member_sector(const struct rs_geom *g, u64 stripe, unsigned int row);
sector_t rs_usable_sectors(const struct rs_geom *g, sector_t member_sectors);

#endif
