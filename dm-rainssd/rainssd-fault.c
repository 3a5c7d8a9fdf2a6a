// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd fault injection (see rainssd-fault.h).
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fault-inject.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "rainssd-fault.h"

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct fault_attr rs_faults[RS_NR_FAULTS] = {
	[0 ... RS_NR_FAULTS - 1] = FAULT_ATTR_INITIALIZER,
};

static const char * const rs_fault_names[RS_NR_FAULTS] = {
	[RS_FAULT_NOWAIT_BIO] = "fail_nowait_bio",
	[RS_FAULT_BUFFERS] = "fail_buffers",
	[RS_FAULT_OP] = "fail_op",
	[RS_FAULT_DELAY_PREREAD] = "delay_preread",
	[RS_FAULT_DELAY_MAP] = "delay_map",
	[RS_FAULT_DELAY_LOG_LAP] = "delay_log_lap",
};

static struct dentry *rs_debugfs_dir;
static u32 rs_delay_ms = 100;
static bool rs_skip_resync;
static bool rs_hold_commits;
static bool rs_hold_meta;
static u32 rs_pass_meta;
static u32 rs_fail_meta_flush;
static u32 rs_fail_bitmap_flush;
static bool rs_hold_tier;
static bool rs_hold_tier_load;
static bool rs_poison;

void rs_fault_init(void)
{
	unsigned int i;

	rs_debugfs_dir = debugfs_create_dir("rainssd", NULL);
	for (i = 0; i < RS_NR_FAULTS; i++)
		fault_create_debugfs_attr(rs_fault_names[i], rs_debugfs_dir, &rs_faults[i]);
	debugfs_create_u32("delay_preread_ms", 0600, rs_debugfs_dir, &rs_delay_ms);
	debugfs_create_bool("skip_unclean_resync", 0600, rs_debugfs_dir, &rs_skip_resync);
	debugfs_create_bool("hold_sync_commits", 0600, rs_debugfs_dir, &rs_hold_commits);
	debugfs_create_bool("hold_meta_commits", 0600, rs_debugfs_dir, &rs_hold_meta);
	debugfs_create_u32("pass_meta_commits", 0600, rs_debugfs_dir, &rs_pass_meta);
	debugfs_create_x32("fail_meta_flush", 0600, rs_debugfs_dir, &rs_fail_meta_flush);
	debugfs_create_x32("fail_bitmap_flush", 0600, rs_debugfs_dir, &rs_fail_bitmap_flush);
	debugfs_create_bool("hold_tier_commits", 0600, rs_debugfs_dir, &rs_hold_tier);
	debugfs_create_bool("hold_tier_load", 0600, rs_debugfs_dir, &rs_hold_tier_load);
	debugfs_create_bool("poison_buffers", 0600, rs_debugfs_dir, &rs_poison);
}

void rs_fault_exit(void)
{
	debugfs_remove_recursive(rs_debugfs_dir);
}

bool rs_fault(enum rs_fault f)
{
	return should_fail(&rs_faults[f], 1);
}

void rs_fault_delay(enum rs_fault f)
{
	if (rs_fault(f))
		msleep(READ_ONCE(rs_delay_ms));
}

void rs_fault_spin(enum rs_fault f)
{
	if (rs_fault(f))
		mdelay(READ_ONCE(rs_delay_ms));
}

bool rs_fault_skip_resync(void)
{
	return READ_ONCE(rs_skip_resync);
}

bool rs_fault_hold_sync_commits(void)
{
	return READ_ONCE(rs_hold_commits);
}

bool rs_fault_hold_meta_commits(void)
{
	u32 pass;

	if (!READ_ONCE(rs_hold_meta))
		return false;
	/* Held, unless a pass is left: this commit takes one. */
	do {
		pass = READ_ONCE(rs_pass_meta);
		if (!pass)
			return true;
	} while (cmpxchg(&rs_pass_meta, pass, pass - 1) != pass);
	return false;
}

bool rs_fault_fail_meta_flush(unsigned int member)
{
	return member < 32 && (READ_ONCE(rs_fail_meta_flush) & BIT(member));
}

bool rs_fault_fail_bitmap_flush(unsigned int member)
{
	return member < 32 && (READ_ONCE(rs_fail_bitmap_flush) & BIT(member));
}

bool rs_fault_hold_tier_commits(void)
{
	return READ_ONCE(rs_hold_tier);
}

bool rs_fault_hold_tier_load(void)
{
	return READ_ONCE(rs_hold_tier_load);
}

void rs_fault_poison_pages(struct page **pages, unsigned int nr)
{
	unsigned int i;

	if (!READ_ONCE(rs_poison))
		return;
	for (i = 0; i < nr; i++)
		memset(page_address(pages[i]), RS_POISON_BYTE, PAGE_SIZE);
}
#else
void rs_fault_init(void)
{
}

void rs_fault_exit(void)
{
}

bool rs_fault(enum rs_fault f)
{
	return false;
}

void rs_fault_delay(enum rs_fault f)
{
}

bool rs_fault_skip_resync(void)
{
	return false;
}

bool rs_fault_hold_sync_commits(void)
{
	return false;
}

bool rs_fault_hold_meta_commits(void)
{
	return false;
}

bool rs_fault_fail_meta_flush(unsigned int member)
{
	return false;
}

bool rs_fault_fail_bitmap_flush(unsigned int member)
{
	return false;
}

bool rs_fault_hold_tier_commits(void)
{
	return false;
}

bool rs_fault_hold_tier_load(void)
{
	return false;
}

void rs_fault_poison_pages(struct page **pages, unsigned int nr)
{
}
#endif
