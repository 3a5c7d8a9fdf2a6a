/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd policy unit: pure decision code, no I/O and no locking.
 *
 * The I/O engine describes one partial-stripe write as a struct
 * rs_stripe_shape (rainssd-shape.h: which rows of which member it writes,
 * which member is the parity and which one is dead) and asks rs_plan_write()
 * how to keep the parity right. With the adaptive policies it also hands
 * over a snapshot of every member's load (struct rs_load_snap, filled by rainssd-load.c), and
 * rs_plan_write() / rs_plan_read() weigh the methods by the queueing models
 * of the MSST'24 paper (RMW vs RCW, Eq. 4-9) and the TODAES'22 paper
 * (direct vs reconstruct read, Eq. 1-4). KUnit calls the same functions on
 * hand-made shapes and snapshots.
 */
#ifndef RAINSSD_POLICY_H
#define RAINSSD_POLICY_H

#include <linux/bits.h>
#include <linux/types.h>

#include "rainssd-shape.h"

/* The cost models count pre-reads in 4 KiB pages, as SSDsim's sub-requests. */
#define RS_PAGE_SECTORS	8

/* The parity-update decision a target uses for healthy stripes. */
enum rs_policy {
	RS_POLICY_COUNT,	/* fewest pre-read sectors, ties to RMW (md's behaviour) */
	RS_POLICY_RMW,		/* always read-modify-write */
	RS_POLICY_RCW,		/* always reconstruct-write */
	RS_POLICY_ADAPTIVE,	/* lower queueing cost (MSST'24 Eq. 8/9), else count */
	RS_NR_POLICIES,
};

/* The decision for a read of one chunk on a live member. */
enum rs_read_policy {
	RS_READ_DIRECT,		/* always read the member that holds the data */
	RS_READ_ADAPTIVE,	/* reconstruct when cheaper (TODAES'22 Eq. 3/4) */
	RS_READ_RECONSTRUCT,	/* always rebuild from the other members (tests) */
	RS_NR_READ_POLICIES,
};

/* Foreign occupancy is counted in 1/1024 of a request. */
#define RS_OCC_SHIFT		10
#define RS_OCC_ONE		BIT(RS_OCC_SHIFT)
/* At most 16383 requests, as the queues of struct rs_member_snap. */
#define RS_OCC_MAX		((16384U << RS_OCC_SHIFT) - 1)

/*
 * One member's load as the policy sees it. Times are in nanoseconds; t_read
 * and t_write are the member's per-request service time estimates (the
 * papers' t_R and t_W, calibrated from completions); reads and writes are
 * the requests the target has in flight on it (R_i and W_i), at most 16383
 * each so that the costs cannot overflow. foreign is the load others keep on
 * the member's device, as a queue of requests (in 1/1024, at most 16383),
 * from its I/O statistics; requests queued there wait for it as for the
 * target's own. Where the statistics cannot see the other users (they reach
 * the device through another one) it is 0, and their load shows up only in
 * the service times.
 */
struct rs_member_snap {
	u32 reads;
	u32 writes;
	u32 t_read;
	u32 t_write;
	u32 t_stall;		/* expected remaining stall (T_GC), 0 when none */
	u32 interval;		/* mean time between arrivals (1 / f_i), 0 unknown */
	u32 foreign;		/* foreign occupancy, requests << RS_OCC_SHIFT */
	u32 foreign_interval;	/* mean time between their completions, 0 none */
	u64 read_age;		/* time since the target last read from it */
	bool warm;		/* enough completions seen to trust the estimates */
	bool watched;		/* its statistics show others' I/O now: no probe needed */
	bool dead;
};

/*
 * A reading of a member device's I/O statistics: the reads, writes and
 * discards that completed on it, everyone's, their sectors and their
 * summed latency; with the target's own share of them (its completions on
 * the member, data and metadata, and their sectors), running totals all.
 */
struct rs_devstat {
	u64 t;			/* when read, ns */
	u64 ios;
	u64 sectors;
	u64 ns;
	u64 own_ios;
	u64 own_sectors;
};

/* What two readings say of the others' load on the member between them. */
struct rs_foreign {
	u32 occ;		/* their requests on it on average, << RS_OCC_SHIFT */
	u32 interval;		/* mean time between their completions, 0 none */
	u32 svc;		/* the device's time per completion, 0 none */
	u32 ios;		/* their completions */
};

struct rs_load_snap {
	unsigned int n;
	u32 t_rebuild;		/* measured cost of a rebuilt read beyond its reads, 0 none */
	struct rs_member_snap m[RS_MAX_DEVS];
};

/*
 * Tunables of the adaptive decisions and of the load signals; the table line
 * and messages set them (docs/rainssd.rst).
 */
struct rs_tunables {
	unsigned int ewma_weight;	/* service times average ~this many completions */
	unsigned int freq_window;	/* arrivals per rate window (TODAES'22: 128) */
	unsigned int stall_factor;	/* busy, no completion for this many service times */
	unsigned int xor_ns;		/* least extra cost of a reconstruct read (t_xor) */
	unsigned int probe_ms;		/* read a bypassed member directly this often */
	unsigned int recon_load_pct;	/* weight of the load terms of T_A and T_B, % */
};

#define RS_DEF_EWMA_WEIGHT	16
#define RS_DEF_FREQ_WINDOW	128
#define RS_DEF_STALL_FACTOR	8
#define RS_DEF_XOR_NS		20000
#define RS_DEF_PROBE_MS		100
#define RS_DEF_RECON_LOAD_PCT	100

/* Why a write or a read was done the way it was; for the status counters. */
enum rs_why {
	RS_WHY_FIXED,		/* no choice: full stripe, degraded, or a fixed policy */
	RS_WHY_COUNT,		/* the count rule decided (policy count) */
	RS_WHY_COLD,		/* adaptive, but a member had no estimates yet: count */
	RS_WHY_TIE,		/* adaptive, equal costs: count */
	RS_WHY_COST,		/* adaptive, the cheaper method by the model */
	RS_WHY_PROBE,		/* adaptive read sent direct to refresh a bypassed member */
	RS_WHY_DEGRADED,	/* adaptive read sent direct: the stripe has a dead member */
};

struct rs_write_choice {
	enum rs_write_mode mode;
	enum rs_write_mode count_mode;	/* what count would have done */
	enum rs_why why;
	u64 cost_rmw;			/* model costs, ns (adaptive only) */
	u64 cost_rcw;
};

struct rs_read_choice {
	bool reconstruct;
	enum rs_why why;
	u64 cost_direct;		/* T_A, ns */
	u64 cost_recon;			/* T_B, ns */
};

const char *rs_policy_name(enum rs_policy p);
int rs_policy_parse(const char *name, enum rs_policy *p);
const char *rs_read_policy_name(enum rs_read_policy p);
int rs_read_policy_parse(const char *name, enum rs_read_policy *p);
void rs_tunables_default(struct rs_tunables *t);

u64 rs_cost_prereads(const struct rs_load_snap *ls, const unsigned int *sectors);
enum rs_write_mode rs_plan_write(const struct rs_stripe_shape *s, enum rs_policy p,
				 const struct rs_load_snap *ls, struct rs_write_choice *c);

u64 rs_cost_read_direct(const struct rs_load_snap *ls, unsigned int target,
			const struct rs_tunables *t);
u64 rs_cost_read_recon(const struct rs_load_snap *ls, unsigned int target,
		       const struct rs_tunables *t);
bool rs_plan_read(const struct rs_load_snap *ls, unsigned int target,
		  const struct rs_tunables *t, struct rs_read_choice *c);

bool rs_foreign_estimate(const struct rs_devstat *prev, const struct rs_devstat *cur,
			 s64 *base, struct rs_foreign *f);
u32 rs_interval_merge(u32 a, u32 b);

#endif
