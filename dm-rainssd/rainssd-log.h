/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd degraded-write log: the write hole closed while a member is
 * failed (md's partial parity log, PPL).
 *
 * While a stripe's parity cannot be remade from its data (a member is
 * failed, or being rebuilt above its checkpoint), every update of that
 * stripe first writes a record to a ring on the stripe's parity member:
 * the rows it updates, each written member's rows, and the partial parity
 * PP = new parity XOR the new data of the members written, i.e. the XOR of
 * every data chunk as it will be, except those being written (the failed
 * member's included). After an unclean shutdown the newest record of each
 * stripe carrying the state's nonce is replayed: parity = PP XOR whatever
 * the written members now hold, old or new, so that the data of the chunks
 * not being written, the failed member's above all, can be rebuilt again.
 * A record is written with FUA before any of its update's writes; its ring
 * space is reused only once that update is done. The nonce changes with
 * every change of the failed members (rainssd-meta.c), so records of an
 * earlier degraded spell, superseded by updates that were not logged, are
 * never replayed.
 *
 * Handle: struct rs_log (opaque). rs_log_create/destroy: constructor and
 * destructor; rs_log_replay sleeps (first resume); rs_log_write and
 * rs_log_done run in process context and never sleep.
 */
#ifndef RAINSSD_LOG_H
#define RAINSSD_LOG_H

#include <linux/types.h>

#include "rainssd-op.h"
#include "rainssd-shape.h"

struct rainssd;
struct rs_log;

/* One stripe update to record (the caller's view of it). */
struct rs_log_update {
	u64 stripe;
	unsigned int parity;		/* the member whose ring takes it */
	struct rs_range rows;		/* the rows the update recomputes */
	struct rs_range w[RS_MAX_DEVS];	/* rows of the live members it writes */
	unsigned int pp_pidx;		/* PP: op->pages from here, rows bytes long */
};

int rs_log_create(struct rainssd *rs, struct rs_log **out);
void rs_log_destroy(struct rs_log *log);
int rs_log_replay(struct rs_log *log, u64 nonce, u64 from, unsigned int *replayed);

bool rs_log_write(struct rs_log *log, struct rs_op *op, unsigned int nr,
		  void (*fill)(struct rs_op *op, unsigned int k, struct rs_log_update *u),
		  u64 nonce, rs_op_fn fn, rs_op_fn retry);
void rs_log_done(struct rs_log *log, struct rs_op *op);

#endif
