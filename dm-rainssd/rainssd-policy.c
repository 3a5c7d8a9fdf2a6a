// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd policy unit (see rainssd-policy.h). Everything here is a pure
 * function of its arguments.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "rainssd-policy.h"

static const char * const rs_policy_names[RS_NR_POLICIES] = {
	[RS_POLICY_COUNT] = "count",
	[RS_POLICY_RMW] = "rmw",
	[RS_POLICY_RCW] = "rcw",
};

const char *rs_policy_name(enum rs_policy p)
{
	return p < RS_NR_POLICIES ? rs_policy_names[p] : "unknown";
}

int rs_policy_parse(const char *name, enum rs_policy *p)
{
	int i = match_string(rs_policy_names, RS_NR_POLICIES, name);

	if (i < 0)
		return -EINVAL;
	*p = i;
	return 0;
}

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

static bool rs_is_data(const struct rs_stripe_shape *s, unsigned int m)
{
	return m != s->parity;
}

/* Sectors RMW pre-reads: the old rows of every written chunk, and the old parity. */
unsigned int rs_rmw_prereads(const struct rs_stripe_shape *s)
{
	unsigned int m, sum = rs_range_len(&s->rows);

	for (m = 0; m < s->n; m++)
		if (rs_is_data(s, m))
			sum += rs_range_len(&s->w[m]);
	return sum;
}

/* Sectors RCW pre-reads: every data row of the range that is not being written. */
unsigned int rs_rcw_prereads(const struct rs_stripe_shape *s)
{
	unsigned int m, sum = 0;

	for (m = 0; m < s->n; m++)
		if (rs_is_data(s, m))
			sum += rs_range_len(&s->rows) - rs_range_len(&s->w[m]);
	return sum;
}

static bool rs_is_full_stripe(const struct rs_stripe_shape *s)
{
	unsigned int m;

	for (m = 0; m < s->n; m++)
		if (rs_is_data(s, m) && (s->w[m].start != 0 || s->w[m].end != s->chunk))
			return false;
	return true;
}

/*
 * The parity update for one write to one stripe.
 *
 * A degraded stripe leaves no choice: with the parity member dead the data is
 * simply written; with a dead data member that is not written RMW is the only
 * method that does not read it; with a dead data member that is written, its
 * old rows are rebuilt from all the others first. Otherwise the policy picks.
 */
enum rs_write_mode rs_plan_write(const struct rs_stripe_shape *s, enum rs_policy p)
{
	if (s->dead != RS_NO_MEMBER) {
		if (s->dead == s->parity)
			return RS_WRITE_NOPARITY;
		if (rs_is_full_stripe(s))
			return RS_WRITE_FULL;
		if (!rs_range_len(&s->w[s->dead]))
			return RS_WRITE_RMW;
		return RS_WRITE_RECONSTRUCT;
	}
	if (rs_is_full_stripe(s))
		return RS_WRITE_FULL;
	switch (p) {
	case RS_POLICY_RMW:
		return RS_WRITE_RMW;
	case RS_POLICY_RCW:
		return RS_WRITE_RCW;
	default:
		return rs_rmw_prereads(s) <= rs_rcw_prereads(s) ? RS_WRITE_RMW : RS_WRITE_RCW;
	}
}
