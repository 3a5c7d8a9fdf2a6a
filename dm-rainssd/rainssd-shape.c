// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd stripe shape (see rainssd-shape.h). Pure functions: KUnit and
 * the simulator call exactly what the engine calls.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "rainssd-shape.h"

/* A shape for @stripe with nothing written yet; @dead is RS_NO_MEMBER if none. */
void rs_shape_init(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe,
		   unsigned int dead)
{
	memset(s, 0, sizeof(*s));
	s->n = g->n;
	s->chunk = g->chunk;
	s->parity = rs_parity_member(g, stripe);
	s->dead = dead;
	s->rows.start = g->chunk;
	s->rows.end = 0;
}

/*
 * Record that rows [start, end) of @member are written. The rows whose parity
 * is recomputed grow to the smallest range covering every written row.
 */
void rs_shape_add_write(struct rs_stripe_shape *s, unsigned int member,
			unsigned int start, unsigned int end)
{
	s->w[member].start = start;
	s->w[member].end = end;
	s->rows.start = min(s->rows.start, start);
	s->rows.end = max(s->rows.end, end);
}

/*
 * The shape of a write of logical sectors [lstart, lend) to @stripe; the
 * range may extend beyond the stripe on either side, only its part inside
 * the stripe counts.
 */
void rs_shape_from_range(struct rs_stripe_shape *s, const struct rs_geom *g, u64 stripe,
			 unsigned int dead, sector_t lstart, sector_t lend)
{
	sector_t first = stripe * g->stripe_data, pos, end;

	rs_shape_init(s, g, stripe, dead);
	pos = max(lstart, first);
	end = min(lend, first + g->stripe_data);
	while (pos < end) {
		struct rs_loc loc;
		unsigned int len;

		rs_map(g, pos, &loc);
		len = min_t(sector_t, end - pos, g->chunk - loc.row);
		rs_shape_add_write(s, loc.member, loc.row, loc.row + len);
		pos += len;
	}
}

/*
 * The rows of @stripe a write of logical sectors [ls, le) recomputes (the
 * rows of rs_shape_from_range()), without building the shape: the written
 * rows when it stays inside one chunk, else the whole chunk (a write over
 * two or more chunks runs to the last row of one and from the first row of
 * the next).
 */
struct rs_range rs_shape_span_rows(const struct rs_geom *g, u64 stripe, sector_t ls,
				   sector_t le)
{
	sector_t first = stripe * g->stripe_data;
	sector_t a = max(ls, first) - first;
	sector_t b = min_t(sector_t, le, first + g->stripe_data) - first;
	struct rs_range r = { 0, g->chunk };

	if ((a >> g->chunk_shift) == ((b - 1) >> g->chunk_shift)) {
		r.start = a & (g->chunk - 1);
		r.end = ((b - 1) & (g->chunk - 1)) + 1;
	}
	return r;
}

static bool rs_is_data(const struct rs_stripe_shape *s, unsigned int m)
{
	return m != s->parity;
}

/* Whether every data row of the stripe is written. */
bool rs_shape_is_full(const struct rs_stripe_shape *s)
{
	unsigned int m;

	for (m = 0; m < s->n; m++)
		if (rs_is_data(s, m) && (s->w[m].start != 0 || s->w[m].end != s->chunk))
			return false;
	return true;
}

static unsigned int rs_put_range(struct rs_range *r, unsigned int nr,
				 unsigned int start, unsigned int end)
{
	if (start < end) {
		r[nr].start = start;
		r[nr].end = end;
		nr++;
	}
	return nr;
}

/*
 * The rows member @m reads before @mode can compute the stripe's new parity,
 * into @r (at most RS_SHAPE_MAX_RANGES ranges); returns how many.
 *
 *  RMW          the old rows of every written data chunk, and the old parity
 *               over the recomputed rows;
 *  RCW          every data row of the recomputed rows that is not written;
 *  RECONSTRUCT  every live member over the recomputed rows (the dead member's
 *               old rows are rebuilt from them, then it goes as RCW);
 *  FULL, NOPARITY  nothing.
 *
 * A dead member never reads.
 */
unsigned int rs_shape_reads(const struct rs_stripe_shape *s, enum rs_write_mode mode,
			    unsigned int m, struct rs_range *r)
{
	const struct rs_range *w = &s->w[m];

	if (m == s->dead)
		return 0;
	switch (mode) {
	case RS_WRITE_RMW:
		if (!rs_is_data(s, m))
			return rs_put_range(r, 0, s->rows.start, s->rows.end);
		return rs_put_range(r, 0, w->start, w->end);
	case RS_WRITE_RCW:
		if (!rs_is_data(s, m))
			return 0;
		if (!rs_range_len(w))
			return rs_put_range(r, 0, s->rows.start, s->rows.end);
		return rs_put_range(r, rs_put_range(r, 0, s->rows.start, w->start),
				    w->end, s->rows.end);
	case RS_WRITE_RECONSTRUCT:
		return rs_put_range(r, 0, s->rows.start, s->rows.end);
	default:
		return 0;
	}
}

/*
 * The rows member @m writes for @mode: its written rows for a data member,
 * the recomputed rows for the parity member (none when the parity member is
 * dead). A dead member's range is returned too; the engine does not send it.
 */
struct rs_range rs_shape_writes(const struct rs_stripe_shape *s, enum rs_write_mode mode,
				unsigned int m)
{
	struct rs_range none = { 0, 0 };

	if (rs_is_data(s, m))
		return s->w[m];
	return mode == RS_WRITE_NOPARITY ? none : s->rows;
}

/* Sectors each member pre-reads for @mode into @sectors[0..n). */
void rs_prereads_per_member(const struct rs_stripe_shape *s, enum rs_write_mode mode,
			    unsigned int *sectors)
{
	struct rs_range r[RS_SHAPE_MAX_RANGES];
	unsigned int m, i, nr;

	for (m = 0; m < s->n; m++) {
		nr = rs_shape_reads(s, mode, m, r);
		sectors[m] = 0;
		for (i = 0; i < nr; i++)
			sectors[m] += rs_range_len(&r[i]);
	}
}

static unsigned int rs_sum_prereads(const struct rs_stripe_shape *s, enum rs_write_mode mode)
{
	unsigned int sectors[RS_MAX_DEVS], m, sum = 0;

	rs_prereads_per_member(s, mode, sectors);
	for (m = 0; m < s->n; m++)
		sum += sectors[m];
	return sum;
}

/* Sectors RMW pre-reads: the old rows of every written chunk, and the old parity. */
unsigned int rs_rmw_prereads(const struct rs_stripe_shape *s)
{
	return rs_sum_prereads(s, RS_WRITE_RMW);
}

/* Sectors RCW pre-reads: every data row of the range that is not being written. */
unsigned int rs_rcw_prereads(const struct rs_stripe_shape *s)
{
	return rs_sum_prereads(s, RS_WRITE_RCW);
}
