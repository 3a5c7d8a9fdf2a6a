/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd stripe shape: which rows of which member one write to one
 * stripe covers, and, written once for every user (the engine, the cost
 * model, the simulator and KUnit), which rows each parity-update method
 * reads before it can compute and which rows it writes.
 *
 * Pure functions of their arguments: no I/O, no allocation, no locking; any
 * context.
 */
#ifndef RAINSSD_SHAPE_H
#define RAINSSD_SHAPE_H

#include <linux/types.h>

#include "rainssd-geometry.h"

#define RS_NO_MEMBER	UINT_MAX

/* Rows [start, end) inside a chunk, in sectors; empty when start == end. */
struct rs_range {
	unsigned int start;
	unsigned int end;
};

static inline unsigned int rs_range_len(const struct rs_range *r)
{
	return r->end > r->start ? r->end - r->start : 0;
}

struct rs_stripe_shape {
	unsigned int n;			/* members */
	unsigned int chunk;		/* chunk size in sectors */
	unsigned int parity;		/* parity member */
	unsigned int dead;		/* the dead member, or RS_NO_MEMBER */
	struct rs_range rows;		/* rows whose parity this write recomputes */
	struct rs_range w[RS_MAX_DEVS];	/* rows written on each member (inside rows) */
};

/* How one write keeps the stripe's parity right. */
enum rs_write_mode {
	RS_WRITE_FULL,		/* every data row of the stripe is written: no pre-reads */
	RS_WRITE_RMW,		/* pre-read old data being written and old parity */
	RS_WRITE_RCW,		/* pre-read the data not being written */
	RS_WRITE_NOPARITY,	/* the parity member is dead: write data only */
	RS_WRITE_RECONSTRUCT,	/* a written data member is dead: read all, rebuild, write */
};

/* At most this many row ranges per member for one stripe and method. */
#define RS_SHAPE_MAX_RANGES	2

void rs_shape_init(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe,
		   unsigned int dead);
void rs_shape_add_write(struct rs_stripe_shape *s, unsigned int member,
			unsigned int start, unsigned int end);
void rs_shape_from_range(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe,
			 unsigned int dead, sector_t lstart, sector_t lend);
bool rs_shape_is_full(const struct rs_stripe_shape *s);
struct rs_range rs_shape_span_rows(const struct rs_geom *g, u64 stripe, sector_t ls,
				   sector_t le);

unsigned int rs_shape_reads(const struct rs_stripe_shape *s, enum rs_write_mode mode,
			    unsigned int m, struct rs_range *r);
struct rs_range rs_shape_writes(const struct rs_stripe_shape *s, enum rs_write_mode mode,
				unsigned int m);

void rs_prereads_per_member(const struct rs_stripe_shape *s, enum rs_write_mode mode,
			    unsigned int *sectors);
unsigned int rs_rmw_prereads(const struct rs_stripe_shape *s);
unsigned int rs_rcw_prereads(const struct rs_stripe_shape *s);

#endif
