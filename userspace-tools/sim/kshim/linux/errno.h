/* SPDX-License-Identifier: GPL-2.0 */
/* glibc's <errno.h> includes <linux/errno.h> too: hand it the system's. */
#include_next <linux/errno.h>
#include "../kshim.h"
