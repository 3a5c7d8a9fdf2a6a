// SPDX-License-Identifier: GPL-2.0
/*
 * The pure units of dm-rainssd, compiled into the KUnit module so that the
 * suites test exactly the code the target runs, without exporting symbols.
 */
#include "../dm-rainssd/rainssd-geometry.c"
#include "../dm-rainssd/rainssd-policy.c"
#include "../dm-rainssd/rainssd-xor.c"
#include "../dm-rainssd/rainssd-load.c"
