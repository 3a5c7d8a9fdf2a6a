// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd stripe geometry (see rainssd-geometry.h for the layout).
 * Pure arithmetic: no I/O, no allocation, so KUnit tests it directly.
 */
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/math64.h>

#include "rainssd-geometry.h"

int rs_geom_init(struct rs_geom *g, unsigned int n, unsigned int chunk)
{
	if (n < RS_MIN_DEVS || n > RS_MAX_DEVS)
		return -EINVAL;
	if (!is_power_of_2(chunk) || chunk < RS_MIN_CHUNK || chunk > RS_MAX_CHUNK)
		return -EINVAL;
	g->n = n;
	g->chunk = chunk;
	g->chunk_shift = ilog2(chunk);
	g->stripe_data = (n - 1) * chunk;
	g->data_offset = RS_DATA_OFFSET;
	return 0;
}

unsigned int rs_parity_member(const struct rs_geom *g, u64 stripe)
{
	u32 rem;

	div_u64_rem(stripe, g->n, &rem);
	return g->n - 1 - rem;
}

unsigned int rs_data_member(const struct rs_geom *g, u64 stripe, unsigned int k)
{
	return (rs_parity_member(g, stripe) + 1 + k) % g->n;
}

/* The data chunk index held by @member in @stripe, or -1 for the parity member. */
int rs_member_to_k(const struct rs_geom *g, u64 stripe, unsigned int member)
{
	unsigned int pd = rs_parity_member(g, stripe);

	if (member == pd)
		return -1;
	return (member + g->n - pd - 1) % g->n;
}

void rs_map(const struct rs_geom *g, sector_t lsector, struct rs_loc *loc)
{
	u64 chunkno = lsector >> g->chunk_shift;
	u32 k;

	loc->row = lsector & (g->chunk - 1);
	loc->stripe = div_u64_rem(chunkno, g->n - 1, &k);
	loc->k = k;
	loc->member = rs_data_member(g, loc->stripe, k);
	loc->msector = rs_member_sector(g, loc->stripe, loc->row);
}

sector_t rs_unmap(const struct rs_geom *g, u64 stripe, unsigned int k, unsigned int row)
{
	return ((stripe * (g->n - 1) + k) << g->chunk_shift) + row;
}

sector_t rs_member_sector(const struct rs_geom *g, u64 stripe, unsigned int row)
{
	return g->data_offset + (stripe << g->chunk_shift) + row;
}

/* Largest volume length for members of @member_sectors: whole stripes only. */
sector_t rs_usable_sectors(const struct rs_geom *g, sector_t member_sectors)
{
	if (member_sectors < g->data_offset)
		return 0;
	return ((member_sectors - g->data_offset) >> g->chunk_shift) *
	       (sector_t)g->stripe_data;
}
