/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the dm-rainssd KUnit suites (kunit/rainssd_*_test.c),
 * and the test hooks that rainssd_units.c, which compiles the module's own
 * units into the KUnit module, gives into them.
 */
#ifndef RAINSSD_KUNIT_H
#define RAINSSD_KUNIT_H

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/types.h>

#include "rainssd-fault.h"
#include "rainssd-load.h"

#define US	1000U	/* ns */

/*
 * A zeroed load snapshot, from the heap: with RS_MAX_DEVS members it is over
 * a kilobyte, too much for a test's stack frame under KASAN.
 */
static inline struct rs_load_snap *rs_kunit_snap_new(struct kunit *test)
{
	struct rs_load_snap *ls = kunit_kzalloc(test, sizeof(*ls), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ls);
	return ls;
}

/* rainssd_units.c */
bool rs_kunit_fault_set(enum rs_fault f, bool on);
struct rainssd;
bool rs_kunit_poison_set(bool on);
unsigned int rs_kunit_pooled(struct rainssd *rs);

#endif
