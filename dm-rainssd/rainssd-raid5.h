/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd RAID-5 on the operation layer (rainssd-op.h).
 *
 * A user write is cut into operations of up to rs_r5_max_stripes() adjacent
 * stripes; interior stripes are full (no pre-reads), the first and last may
 * be partial and are updated by the method the policy picks for each. A
 * read of a dead member, or of a live one that the read policy rebuilds, is
 * an operation of one stripe that reads the other members and XORs. Each
 * runs: plan (under its stripe locks: the live members, the methods),
 * pre-read, compute, write, finish. The plan is made again whenever a member
 * died or a read failed since it was made, so a buffer is used only when a
 * completed read or the user's data filled it.
 *
 * rs_r5_feed() runs in any process context and never sleeps; the steps run
 * in the target's workqueue.
 */
#ifndef RAINSSD_RAID5_H
#define RAINSSD_RAID5_H

#include <linux/bio.h>

#include "rainssd-geometry.h"

struct rainssd;

size_t rs_r5_op_size(void);
unsigned int rs_r5_max_stripes(const struct rs_geom *g);
bool rs_r5_feed(struct rainssd *rs, struct bio *bio);

#endif
