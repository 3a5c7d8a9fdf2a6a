// SPDX-License-Identifier: GPL-2.0
/*
 * The units of dm-rainssd that the suites test, compiled into the KUnit
 * module so that the suites test exactly the code the target runs, without
 * exporting symbols: the pure units, the operation layer and its fault
 * points (this module's own copies: its stripe cache, lock table and fault
 * attributes are not the target's). rainssd-raid5.c and rainssd-target.c
 * need a device-mapper target and are not here.
 */
#include <linux/module.h>

#include "../dm-rainssd/rainssd-geometry.c"
#include "../dm-rainssd/rainssd-shape.c"
#include "../dm-rainssd/rainssd-policy.c"
#include "../dm-rainssd/rainssd-xor.c"
#include "../dm-rainssd/rainssd-load.c"
#include "../dm-rainssd/rainssd-op.c"
#include "../dm-rainssd/rainssd-fault.c"
#include "../dm-rainssd/rainssd-sb.c"
#include "../dm-rainssd/rainssd-tier.c"

#include "rainssd_kunit.h"

/*
 * Make fault point @f of this module's copy of rainssd-fault.c fire every
 * time (@on) or never, silently; false when the kernel has no fault
 * injection (rs_fault() then never fires).
 */
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool rs_kunit_fault_set(enum rs_fault f, bool on)
{
	struct fault_attr *a = &rs_faults[f];

	a->verbose = 0;
	a->probability = on ? 100 : 0;
	atomic_set(&a->times, on ? -1 : 1);
	return true;
}
#else
bool rs_kunit_fault_set(enum rs_fault f, bool on)
{
	return false;
}
#endif

/* poison_buffers of this module's copy on or off; false without fault injection. */
bool rs_kunit_poison_set(bool on)
{
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	WRITE_ONCE(rs_poison, on);
	return true;
#else
	return false;
#endif
}

/* The pages in the buffer-page pool of @rs's operation layer. */
unsigned int rs_kunit_pooled(struct rainssd *rs)
{
	struct rs_oplayer *ol = rs->ol;
	unsigned int nr;

	spin_lock(&ol->pool_lock);
	nr = ol->pool_nr;
	spin_unlock(&ol->pool_lock);
	return nr;
}

MODULE_DESCRIPTION("KUnit tests for dm-rainssd");
MODULE_LICENSE("GPL");
