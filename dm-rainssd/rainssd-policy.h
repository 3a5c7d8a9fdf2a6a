/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd policy unit: pure decision code, no I/O and no locking.
 *
 * The I/O engine describes one partial-stripe operation as a struct
 * rs_stripe_shape (which rows of which member it writes, which member is the
 * parity and which one is dead) and asks rs_plan_write() how to keep the
 * parity right. KUnit calls the same functions on hand-made shapes.
 */
#ifndef RAINSSD_POLICY_H
#define RAINSSD_POLICY_H

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
	return r->end - r->start;
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

/* The parity-update decision a target uses for healthy stripes. */
enum rs_policy {
	RS_POLICY_COUNT,	/* fewest pre-read sectors, ties to RMW (md's behaviour) */
	RS_POLICY_RMW,		/* always read-modify-write */
	RS_POLICY_RCW,		/* always reconstruct-write */
	RS_NR_POLICIES,
};

const char *rs_policy_name(enum rs_policy p);
int rs_policy_parse(const char *name, enum rs_policy *p);

void rs_shape_init(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe,
		   unsigned int dead);
void rs_shape_add_write(struct rs_stripe_shape *s, unsigned int member,
			unsigned int start, unsigned int end);

unsigned int rs_rmw_prereads(const struct rs_stripe_shape *s);
unsigned int rs_rcw_prereads(const struct rs_stripe_shape *s);
enum rs_write_mode rs_plan_write(const struct rs_stripe_shape *s, enum rs_policy p);

#endif
