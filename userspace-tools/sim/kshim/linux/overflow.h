/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's checked arithmetic, as the compiler provides it. */
#ifndef RS_KSHIM_OVERFLOW_H
#define RS_KSHIM_OVERFLOW_H
#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)
#define check_mul_overflow(a, b, d) __builtin_mul_overflow(a, b, d)
#endif
