/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-rainssd fault injection for the tests: the kernel's fault-injection
 * attributes (probability, times, interval, ...) in debugfs under rainssd/,
 * on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS; otherwise nothing fires.
 *
 *   fail_nowait_bio  a step's bio allocation from the target's bioset fails:
 *                    the step waits for and uses the emergency bioset;
 *   fail_buffers     an operation's buffer allocation fails: it runs on the
 *                    reserve;
 *   fail_op          an operation cannot be had: the bio is deferred;
 *   delay_preread    an operation sleeps delay_preread_ms (debugfs file)
 *                    between its plan and its pre-reads, with its stripes
 *                    held: the window in which a member may die;
 *   delay_map        a read's map function spins delay_preread_ms between
 *                    reading the rebuild's member and the failed members
 *                    (rs_member_holds(), also called by the tier's reads
 *                    with a read epoch held and by its table's loads):
 *                    the window in which the member being rebuilt may fail;
 *   delay_log_lap    an update whose degraded-write log records include the
 *                    first record of a ring's new lap spins
 *                    delay_preread_ms after taking their space and before
 *                    queueing them: the window in which later records of
 *                    that ring are queued first (they must still reach the
 *                    disk after it and after the zeros of the lap's tail);
 *   skip_unclean_resync (a debugfs bool, not an attribute): activation after
 *                    an unclean shutdown neither resyncs nor replays, so a
 *                    test can show the damage the protection prevents;
 *   poison_buffers (a debugfs bool): every buffer page an operation is
 *                    handed (from the pool, the page allocator or the
 *                    reserve) is filled with RS_POISON_BYTE first, so that
 *                    a byte an operation uses without reading or copying
 *                    it in shows up as made-up data, not as the zero or
 *                    the earlier operation's byte that happens to be
 *                    right. tests/run-in-vm.sh turns it on for every case;
 *   hold_sync_commits (a debugfs bool): a rebuild or resync does not
 *                    commit its checkpoint every 2 s (only at its end, or
 *                    when something else commits), so that a test can cut
 *                    power with the checkpoint in memory far ahead of the
 *                    one on disk;
 *   hold_meta_commits (a debugfs bool): the superblock commits of a
 *                    resumed volume wait while it is set, so that a test
 *                    can see what waits for one (the first resume's
 *                    too, once the tier's table load has committed: a
 *                    tier volume with a member out);
 *   pass_meta_commits (a debugfs u32): while hold_meta_commits is set, that
 *                    many commits still run (each takes one), so that a
 *                    test can let one commit through and hold the next;
 *   fail_meta_flush (a debugfs mask of member indices): the cache flush a
 *                    superblock commit or a tier table commit sends those
 *                    members fails, as a member's failed flush would
 *                    (nothing is sent);
 *   fail_bitmap_flush (a debugfs mask of member indices): the same for the
 *                    cache flush every member gets before a write-intent
 *                    bitmap block that clears bits;
 *   hold_tier_commits (a debugfs bool): every commit of the tier's
 *                    mapping table (periodic, asked for by a flush or an
 *                    operation, a suspend's, a load's) waits while it is
 *                    set: a test clears it before it suspends or removes
 *                    the volume;
 *   hold_tier_load (a debugfs bool): a read of the tier's mapping table
 *                    that writes nothing (a constructor's, or the first
 *                    resume's check) waits while it is set between reading
 *                    the commit record and reading the table's blocks (it
 *                    logs "tier table load held" first), so that a test
 *                    can let commits run in that window.
 *
 * rs_fault(), rs_fault_spin() and rs_fault_poison_pages() never sleep and
 * may be called in any context (rs_fault_spin() busy-waits); rs_fault_delay()
 * sleeps (process context, test kernels only).
 */
#ifndef RAINSSD_FAULT_H
#define RAINSSD_FAULT_H

#include <linux/types.h>

struct page;

/* What poison_buffers fills buffer pages with: 0x5a, not a zero, not all ones. */
#define RS_POISON_BYTE	0x5a

enum rs_fault {
	RS_FAULT_NOWAIT_BIO,
	RS_FAULT_BUFFERS,
	RS_FAULT_OP,
	RS_FAULT_DELAY_PREREAD,
	RS_FAULT_DELAY_MAP,
	RS_FAULT_DELAY_LOG_LAP,
	RS_NR_FAULTS,
};

void rs_fault_init(void);
void rs_fault_exit(void);
bool rs_fault(enum rs_fault f);
void rs_fault_delay(enum rs_fault f);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void rs_fault_spin(enum rs_fault f);
#else
static inline void rs_fault_spin(enum rs_fault f)
{
}
#endif
bool rs_fault_skip_resync(void);
bool rs_fault_hold_sync_commits(void);
bool rs_fault_hold_meta_commits(void);
bool rs_fault_fail_meta_flush(unsigned int member);
bool rs_fault_fail_bitmap_flush(unsigned int member);
bool rs_fault_hold_tier_commits(void);
bool rs_fault_hold_tier_load(void);
void rs_fault_poison_pages(struct page **pages, unsigned int nr);

#endif
