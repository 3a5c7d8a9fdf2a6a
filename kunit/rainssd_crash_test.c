// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the crash-safety units: the write-intent bitmap's region
 * arithmetic and its dirty/clean state machine (rainssd-bitmap.c), and the
 * degraded-write log's records, ring space and replay decisions
 * (rainssd-log.c). Both files are compiled into this test, so that their
 * static functions are tested as they are; the volume has no member
 * devices, so every bitmap write succeeds at once and nothing reaches a
 * disk. Replay itself (reading the rings and rewriting parity) is tested in
 * the VM by tests/cases/22-power-cut.sh and 23-log-writes.sh.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/crc32c.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "../dm-rainssd/rainssd-bitmap.c"
#include "../dm-rainssd/rainssd-log.c"

/*
 * rainssd-target.c is not in the KUnit module. Without member devices no
 * bitmap I/O can fail, so a member failed here is a test failure.
 */
static unsigned long t_failed_members;

void rs_member_failed(struct rainssd *rs, unsigned int m, const char *why)
{
	set_bit(m, &t_failed_members);
}

/*
 * Nor is rainssd-meta.c: the bitmap asks for a commit only while a member
 * is failed (rs->dead_mask), which no suite here does.
 */
bool rs_meta_committed(struct rs_meta *m)
{
	return true;
}

void rs_meta_commit_wait(struct rs_meta *m)
{
}

/* ---- the bitmap ---- */

#define T_N		4
#define T_CHUNK		16
#define T_STRIPES	1000ULL
#define T_REGION	16	/* stripes per region: 63 regions, the last of 8 */

struct t_bm {
	struct rainssd rs;
	struct rs_bitmap *b;
	struct completion resumed;
	struct rs_op op;
};

static void t_bm_destroy(void *p)
{
	struct t_bm *t = p;

	rs_bitmap_destroy(t->b);
	destroy_workqueue(t->rs.wq);
}

static void t_bm_resumed(struct rs_op *op)
{
	struct t_bm *t = container_of(op, struct t_bm, op);

	complete(&t->resumed);
}

static void t_bm_work(struct work_struct *w)
{
	struct rs_op *op = container_of(w, struct rs_op, work);

	op->resume(op);
}

static struct t_bm *t_bm_new(struct kunit *test)
{
	struct t_bm *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&t->rs.geom, T_N, T_CHUNK), 0);
	t->rs.stripes = T_STRIPES;
	t->rs.wq = alloc_workqueue("rainssd_kunit_bm", WQ_MEM_RECLAIM, 0);
	KUNIT_ASSERT_NOT_NULL(test, t->rs.wq);
	KUNIT_ASSERT_EQ(test, rs_bitmap_create(&t->rs, T_REGION, &t->b), 0);
	KUNIT_ASSERT_NOT_NULL(test, t->b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_bm_destroy, t), 0);
	init_completion(&t->resumed);
	t->op.rs = &t->rs;
	INIT_WORK(&t->op.work, t_bm_work);
	t_failed_members = 0;
	return t;
}

/*
 * Start a write of stripes [stripe, stripe + nr): whether it had to wait
 * for the bitmap (it must then be resumed once the bits are written).
 */
static bool t_bm_start(struct kunit *test, struct t_bm *t, u64 stripe, unsigned int nr)
{
	t->op.stripe = stripe;
	t->op.nr = nr;
	reinit_completion(&t->resumed);
	if (rs_bitmap_start(t->b, &t->op, t_bm_resumed))
		return false;
	KUNIT_EXPECT_NE_MSG(test, wait_for_completion_timeout(&t->resumed, 10 * HZ), 0UL,
			    "a write waiting for the bitmap was never resumed");
	return true;
}

static void t_bm_end(struct t_bm *t, u64 stripe, unsigned int nr)
{
	t->op.stripe = stripe;
	t->op.nr = nr;
	rs_bitmap_end(t->b, &t->op);
}

/* One pass of the daemon, and the flush it may have queued. */
static void t_bm_daemon(struct t_bm *t)
{
	rs_bm_daemon(&t->b->daemon.work);
	flush_workqueue(t->b->wq);
}

static bool t_bm_bit(struct t_bm *t, u64 r, const u8 *map)
{
	return test_bit_le(r, map);
}

static void rs_bitmap_test_region_size(struct kunit *test)
{
	struct rs_geom g;
	u64 max_regions = (u64)RS_BITMAP_MAX_BYTES * 8, huge;

	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 128), 0);
	/* 64 MiB of data over 3 data chunks of 64 KiB: 341 stripes (rounded down). */
	KUNIT_EXPECT_EQ(test, rs_bitmap_region_stripes(&g, 100000, 131072), 341U);
	/* Less than a stripe of data: one stripe per region. */
	KUNIT_EXPECT_EQ(test, rs_bitmap_region_stripes(&g, 100000, 8), 1U);
	/* A volume too large for the area at that size: regions grow to fit. */
	huge = max_regions * 3 + 1;
	KUNIT_EXPECT_EQ(test, rs_bitmap_region_stripes(&g, huge, 8), 4U);
	KUNIT_EXPECT_LE(test, div64_u64(huge + 3, 4), max_regions);
	KUNIT_EXPECT_EQ(test, rs_bitmap_region_stripes(&g, max_regions, 8), 1U);
}

/* A write waits until its regions' bits are on disk; later writes there do not. */
static void rs_bitmap_test_write_waits(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);

	KUNIT_EXPECT_EQ(test, t->b->nr_regions, 63ULL);
	KUNIT_EXPECT_TRUE(test, t_bm_start(test, t, 40, 1));
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 2, t->b->durable));
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 1, t->b->durable));
	KUNIT_EXPECT_EQ(test, t->b->pending[2], 1);
	t_bm_end(t, 40, 1);
	KUNIT_EXPECT_EQ(test, t->b->pending[2], 0);
	/* The bit is durable: no wait. */
	KUNIT_EXPECT_FALSE(test, t_bm_start(test, t, 47, 1));
	t_bm_end(t, 47, 1);
	/* Two stripes across regions 0 and 1: both bits before the write. */
	KUNIT_EXPECT_TRUE(test, t_bm_start(test, t, 15, 2));
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 0, t->b->durable));
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 1, t->b->durable));
	t_bm_end(t, 15, 2);
	/* The last, partial region. */
	KUNIT_EXPECT_TRUE(test, t_bm_start(test, t, T_STRIPES - 1, 1));
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 62, t->b->durable));
	t_bm_end(t, T_STRIPES - 1, 1);
	KUNIT_EXPECT_EQ(test, t_failed_members, 0UL);
}

/*
 * The daemon clears a region's bit only once it has had no write for a
 * whole period and none is in flight; a write after that waits again.
 */
static void rs_bitmap_test_daemon_clears(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);

	KUNIT_EXPECT_TRUE(test, t_bm_start(test, t, 40, 1));
	t_bm_end(t, 40, 1);
	t_bm_daemon(t);		/* written since the last pass: kept */
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 2, t->b->image));
	t_bm_daemon(t);		/* idle for a whole period: cleared */
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 2, t->b->image));
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 2, t->b->durable));
	KUNIT_EXPECT_TRUE(test, t_bm_start(test, t, 41, 1));
	/* In flight: never cleared, however long. */
	t_bm_daemon(t);
	t_bm_daemon(t);
	t_bm_daemon(t);
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 2, t->b->durable));
	t_bm_end(t, 41, 1);
	t_bm_daemon(t);		/* written since: kept one more period */
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 2, t->b->image));
	t_bm_daemon(t);
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 2, t->b->image));
}

/*
 * After an unclean shutdown the set bits are the regions to resync: their
 * parity is not used until each is resynced to its end, and the daemon
 * keeps their bits; bits past the last region are ignored.
 */
static void rs_bitmap_test_unclean_resync(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);
	struct rs_bitmap *b = t->b;
	u64 first = 0, nr = 0;

	__set_bit_le(3, b->image);
	__set_bit_le(62, b->image);
	__set_bit_le(63, b->image);	/* past the last region: noise */
	KUNIT_ASSERT_EQ(test, rs_bitmap_load(b, true, U64_MAX, false), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(b), 2ULL);
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 63, b->image));
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(b, 48));
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(b, 63));
	KUNIT_EXPECT_FALSE(test, rs_bitmap_needs_sync(b, 64));
	KUNIT_EXPECT_FALSE(test, rs_bitmap_needs_sync(b, 0));
	KUNIT_ASSERT_TRUE(test, rs_bitmap_next_sync(b, &first, &nr));
	KUNIT_EXPECT_EQ(test, first, 48ULL);
	KUNIT_EXPECT_EQ(test, nr, 16ULL);
	t_bm_daemon(t);
	t_bm_daemon(t);
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 3, b->image));
	/* Half the region: still to resync. */
	rs_bitmap_synced(b, 48, 8);
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(b, 50));
	rs_bitmap_synced(b, 56, 8);
	KUNIT_EXPECT_FALSE(test, rs_bitmap_needs_sync(b, 50));
	KUNIT_ASSERT_TRUE(test, rs_bitmap_next_sync(b, &first, &nr));
	KUNIT_EXPECT_EQ(test, first, 992ULL);
	KUNIT_EXPECT_EQ(test, nr, 8ULL);
	/* A clean shutdown is impossible while a region is left to resync. */
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(b), 0);
	rs_bitmap_synced(b, 992, 8);
	KUNIT_EXPECT_FALSE(test, rs_bitmap_next_sync(b, &first, &nr));
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(b), 0ULL);
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(b), 1);
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 3, b->image));
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 62, b->image));
	KUNIT_EXPECT_EQ(test, t_failed_members, 0UL);
}

/*
 * After an unclean shutdown with a member out (1.11.4): the regions that
 * start at or past the stripe the degraded-write log covers from are not
 * resynced (the replay made them right); those below it are, and keep
 * their bits until then; the covered ones' bits go with the daemon.
 */
static void rs_bitmap_test_log_cover(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);
	struct rs_bitmap *b = t->b;
	u64 first = 0, nr = 0;

	__set_bit_le(1, b->image);	/* stripes 16-31 */
	__set_bit_le(2, b->image);	/* 32-47: starts below 40 */
	__set_bit_le(3, b->image);	/* 48-63: covered */
	__set_bit_le(9, b->image);	/* covered */
	KUNIT_ASSERT_EQ(test, rs_bitmap_load(b, true, 40, false), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(b), 2ULL);
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(b, 16));
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(b, 47));
	KUNIT_EXPECT_FALSE(test, rs_bitmap_needs_sync(b, 48));
	KUNIT_EXPECT_FALSE(test, rs_bitmap_needs_sync(b, 150));
	KUNIT_ASSERT_TRUE(test, rs_bitmap_next_sync(b, &first, &nr));
	KUNIT_EXPECT_EQ(test, first, 16ULL);
	t_bm_daemon(t);
	t_bm_daemon(t);
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 1, b->image));
	KUNIT_EXPECT_TRUE(test, t_bm_bit(t, 2, b->image));
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 3, b->image));
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 9, b->image));
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(b), 0);

	/* Covered from stripe 0 (a member failed before the cut): nothing to resync. */
	t = t_bm_new(test);
	__set_bit_le(5, t->b->image);
	KUNIT_ASSERT_EQ(test, rs_bitmap_load(t->b, true, 0, false), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(t->b), 0ULL);
}

/* After a clean shutdown whatever the bitmap held is dropped. */
static void rs_bitmap_test_clean_load(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);

	__set_bit_le(5, t->b->image);
	KUNIT_ASSERT_EQ(test, rs_bitmap_load(t->b, false, U64_MAX, false), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(t->b), 0ULL);
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 5, t->b->image));
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(t->b), 1);
}

/*
 * A volume made by 1.4.0 (1.11.7): its bitmap area was never written, so
 * after an unclean shutdown every region is to resync, and none after a
 * clean one.
 */
static void rs_bitmap_test_no_image(struct kunit *test)
{
	struct t_bm *t = t_bm_new(test);
	u64 first = 1, nr = 0;

	KUNIT_ASSERT_EQ(test, rs_bitmap_load(t->b, true, U64_MAX, true), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(t->b), t->b->nr_regions);
	KUNIT_EXPECT_EQ(test, t->b->nr_regions, 63ULL);
	KUNIT_EXPECT_FALSE(test, t_bm_bit(t, 63, t->b->image));
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(t->b, 0));
	KUNIT_EXPECT_TRUE(test, rs_bitmap_needs_sync(t->b, T_STRIPES - 1));
	KUNIT_ASSERT_TRUE(test, rs_bitmap_next_sync(t->b, &first, &nr));
	KUNIT_EXPECT_EQ(test, first, 0ULL);
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(t->b), 0);

	t = t_bm_new(test);
	KUNIT_ASSERT_EQ(test, rs_bitmap_load(t->b, false, U64_MAX, true), 0);
	KUNIT_EXPECT_EQ(test, rs_bitmap_to_sync(t->b), 0ULL);
	KUNIT_EXPECT_EQ(test, rs_bitmap_quiesce(t->b), 1);
}

static struct kunit_case rs_bitmap_cases[] = {
	KUNIT_CASE(rs_bitmap_test_region_size),
	KUNIT_CASE(rs_bitmap_test_write_waits),
	KUNIT_CASE(rs_bitmap_test_daemon_clears),
	KUNIT_CASE(rs_bitmap_test_unclean_resync),
	KUNIT_CASE(rs_bitmap_test_log_cover),
	KUNIT_CASE(rs_bitmap_test_clean_load),
	KUNIT_CASE(rs_bitmap_test_no_image),
	{}
};

static struct kunit_suite rs_bitmap_suite = {
	.name = "rainssd-bitmap",
	.test_cases = rs_bitmap_cases,
};

/* ---- the log ---- */

#define T_NONCE		0x1234abcd5678ef90ULL

static void t_vfree(void *p)
{
	vfree(p);
}

static void t_xa_destroy(void *p)
{
	xa_destroy(p);
}

static u8 *t_ring(struct kunit *test)
{
	u8 *ring = vzalloc(RS_LOG_BYTES);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_vfree, ring), 0);
	return ring;
}

/*
 * A record at block @b: stripe @stripe, rows [@start, @end), member 1
 * writing them all, its partial parity filled with @fill; its length in
 * blocks.
 */
static unsigned int t_rec(u8 *ring, unsigned int b, u64 nonce, u64 seq, u32 lap, u64 stripe,
			  unsigned int start, unsigned int end, u8 fill)
{
	struct rs_log_update u = {
		.stripe = stripe,
		.rows = { .start = start, .end = end },
	};
	unsigned int bytes = (end - start) << SECTOR_SHIFT;
	u8 *pp = ring + (size_t)(b + 1) * RS_LOG_BLOCK;

	u.w[1] = u.rows;
	memset(pp, fill, bytes);
	rs_log_encode((void *)(ring + (size_t)b * RS_LOG_BLOCK), T_N, nonce, seq, lap, b, &u,
		      ~crc32c(~0U, pp, bytes));
	return 1 + DIV_ROUND_UP(bytes, RS_LOG_BLOCK);
}

static bool t_valid(const u8 *ring, unsigned int b, u64 nonce, unsigned int *len)
{
	const struct rs_log_rec_disk *d;

	return rs_log_valid(ring, b, nonce, T_N, T_CHUNK, &d, len);
}

/* Re-checksum the header at @b after a field was changed. */
static void t_rehash(u8 *ring, unsigned int b)
{
	struct rs_log_rec_disk *d = (void *)(ring + (size_t)b * RS_LOG_BLOCK);

	d->hdr_crc = 0;
	d->hdr_crc = cpu_to_le32(~crc32c(~0U, d, RS_LOG_BLOCK));
}

static void rs_log_test_record_roundtrip(struct kunit *test)
{
	u8 *ring = t_ring(test);
	const struct rs_log_rec_disk *d;
	unsigned int len = 0;

	/* 12 rows: 6 KiB of partial parity, two blocks after the header. */
	KUNIT_EXPECT_EQ(test, t_rec(ring, 7, T_NONCE, 5, 0, 123, 2, 14, 0x5a), 3U);
	KUNIT_ASSERT_TRUE(test, rs_log_valid(ring, 7, T_NONCE, T_N, T_CHUNK, &d, &len));
	KUNIT_EXPECT_EQ(test, len, 3U);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->stripe), 123ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->seq), 5ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->rows_start), 2U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->rows_end), 14U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->w_start[1]), 2U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->w_end[1]), 14U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->w_end[0]), 0U);
	/* Another volume state's records are not this one's. */
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 7, T_NONCE + 1, &len));
	/* Nothing at the blocks around it. */
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 6, T_NONCE, &len));
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 8, T_NONCE, &len));
}

/* Any changed byte of a header or of its partial parity: not a record. */
static void rs_log_test_record_corrupt(struct kunit *test)
{
	u8 *ring = t_ring(test);
	unsigned int i, len, bad = 0, tried = 0;
	u8 *hdr = ring + 3 * RS_LOG_BLOCK;

	t_rec(ring, 3, T_NONCE, 1, 0, 9, 0, T_CHUNK, 0xc3);
	for (i = 0; i < 2 * RS_LOG_BLOCK; i += i < sizeof(struct rs_log_rec_disk) ? 1 : 61) {
		u8 *p = hdr + i;

		*p ^= 0x10;
		tried++;
		if (t_valid(ring, 3, T_NONCE, &len)) {
			bad++;
			kunit_err(test, "byte %u changed: still a record", i);
		}
		*p ^= 0x10;
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_GT(test, tried, 100U);
	KUNIT_EXPECT_TRUE(test, t_valid(ring, 3, T_NONCE, &len));
}

/* Fields that checksum right but make no sense: not a record. */
static void rs_log_test_record_bad_fields(struct kunit *test)
{
	u8 *ring = t_ring(test);
	struct rs_log_rec_disk *d = (void *)ring;
	unsigned int len;

	t_rec(ring, 0, T_NONCE, 1, 0, 9, 0, 8, 1);
	d->rows_end = cpu_to_le32(T_CHUNK + 1);
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	d->rows_end = cpu_to_le32(0);
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	/* A header that says it is somewhere else (a copy, or a stale block). */
	t_rec(ring, 0, T_NONCE, 1, 0, 9, 0, 8, 1);
	d->block = cpu_to_le32(1);
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	/* A record running past the end of the ring. */
	t_rec(ring, RS_LOG_BLOCKS - 2, T_NONCE, 1, 0, 9, 0, 8, 1);
	KUNIT_EXPECT_TRUE(test, t_valid(ring, RS_LOG_BLOCKS - 2, T_NONCE, &len));
	d = (void *)(ring + (size_t)(RS_LOG_BLOCKS - 2) * RS_LOG_BLOCK);
	d->rows_end = cpu_to_le32(T_CHUNK);
	t_rehash(ring, RS_LOG_BLOCKS - 2);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, RS_LOG_BLOCKS - 2, T_NONCE, &len));
}

static long t_newest(struct xarray *xa, u64 stripe)
{
	void *e = xa_load(xa, stripe);

	return e ? (long)xa_to_value(e) : -1;
}

static struct xarray *t_scan(struct kunit *test, const u8 *ring)
{
	struct xarray *xa = kunit_kzalloc(test, sizeof(*xa), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, xa);
	xa_init(xa);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_xa_destroy, xa), 0);
	KUNIT_ASSERT_EQ(test, rs_log_scan(ring, T_NONCE, T_N, T_CHUNK, xa), 0);
	return xa;
}

/*
 * Replay takes each stripe's newest whole record of the state's nonce; a
 * torn newer record (its update never began) leaves the older one.
 */
static void rs_log_test_scan_newest(struct kunit *test)
{
	u8 *ring = t_ring(test);
	struct xarray *xa;

	KUNIT_EXPECT_EQ(test, xa_empty(t_scan(test, ring)), true);
	t_rec(ring, 0, T_NONCE, 1, 0, 5, 0, 8, 1);
	t_rec(ring, 5, T_NONCE, 2, 0, 6, 0, 8, 2);
	t_rec(ring, 10, T_NONCE, 3, 0, 5, 4, 12, 3);
	t_rec(ring, 20, T_NONCE, 4, 0, 5, 0, 16, 4);
	ring[21 * RS_LOG_BLOCK + 100] ^= 1;	/* seq 4 torn */
	t_rec(ring, 30, T_NONCE - 1, 5, 0, 7, 0, 8, 5);	/* an earlier state's */
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 5), 10L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 6), 5L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 7), -1L);
}

/*
 * Laps: the newest record is seq 51 in lap 2 at block 4. Lap 1's records
 * past it are trusted; a lap-0 record left in a skipped tail at the end of
 * the ring (lap 1 wrapped early) is not, though it is whole and newest of
 * its stripe on the ring; neither is a lap-1 record before block 4.
 */
static void rs_log_test_scan_laps(struct kunit *test)
{
	u8 *ring = t_ring(test);
	struct xarray *xa;

	t_rec(ring, 0, T_NONCE, 50, 2, 1, 0, 8, 1);
	t_rec(ring, 2, T_NONCE, 45, 1, 5, 0, 8, 1);	/* stale: lap 1 before the top */
	t_rec(ring, 4, T_NONCE, 51, 2, 2, 0, 8, 1);
	t_rec(ring, 100, T_NONCE, 40, 1, 3, 0, 8, 1);
	t_rec(ring, 200, T_NONCE, 41, 1, 1, 0, 8, 1);	/* older than seq 50: not chosen */
	t_rec(ring, RS_LOG_BLOCKS - 4, T_NONCE, 10, 0, 4, 0, 8, 1);
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 1), 0L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 2), 4L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 3), 100L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 4), -1L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 5), -1L);
}

/*
 * A format 1 record (1.11.18) at block @b, lap @lap, stripe @stripe, rows
 * [0, 8), listing the @nr sequence numbers @busy, and @seq itself when they
 * do not, as in use when it took its space (by rs_log_list_busy() over a
 * ring whose slots hold them).
 */
static void t_rec1(struct kunit *test, u8 *ring, unsigned int b, u64 seq, u32 lap, u64 stripe,
		   u8 fill, const u64 *busy, unsigned int nr)
{
	struct rs_log_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i, k;
	bool self = false;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_LE(test, nr, (unsigned int)RS_LOG_SLOTS);
	/* every other slot, so that the list does not follow the slots' order */
	for (i = 0; i <= nr; i++) {
		if (i == nr && self)
			break;
		KUNIT_ASSERT_LT(test, i, (unsigned int)RS_LOG_SLOTS);
		k = (2 * i) % RS_LOG_SLOTS + (2 * i >= RS_LOG_SLOTS);
		r->slot[k].busy = true;
		r->slot[k].seq = i < nr ? busy[i] : seq;
		self |= r->slot[k].seq == seq;
	}
	rs_log_list_busy(r, (void *)(ring + (size_t)b * RS_LOG_BLOCK));
	t_rec(ring, b, T_NONCE, seq, lap, stripe, 0, 8, fill);
}

/* The list a header carries: each slot in use, its sequence number. */
static void rs_log_test_list_busy(struct kunit *test)
{
	u8 *ring = t_ring(test);
	const struct rs_log_rec_disk *d = (const void *)ring;
	static const u64 busy[] = { 20, 7, 21 };
	u64 all[RS_LOG_SLOTS];
	unsigned int len, i;

	t_rec1(test, ring, 0, 21, 0, 5, 1, busy, ARRAY_SIZE(busy));
	KUNIT_ASSERT_TRUE(test, t_valid(ring, 0, T_NONCE, &len));
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->format), RS_LOG_FORMAT);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->nr_busy), 3U);
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 20));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 7));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 21));
	KUNIT_EXPECT_FALSE(test, rs_log_listed(d, 0));
	KUNIT_EXPECT_FALSE(test, rs_log_listed(d, 22));
	/* A full list, then a shorter one over it: nothing of the first left. */
	for (i = 0; i < RS_LOG_SLOTS; i++)
		all[i] = 100 + i;
	t_rec1(test, ring, 0, 131, 0, 5, 1, all, RS_LOG_SLOTS);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->nr_busy), (u32)RS_LOG_SLOTS);
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 131));
	t_rec1(test, ring, 0, 21, 0, 5, 1, busy, 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->nr_busy), 2U);
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 20));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(d, 21));
	KUNIT_EXPECT_FALSE(test, rs_log_listed(d, 131));
	for (i = 2; i < RS_LOG_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, le64_to_cpu(d->busy[i]), 0ULL);
	/* A list without the record itself, or empty: not a record. */
	((struct rs_log_rec_disk *)ring)->nr_busy = cpu_to_le32(1);
	t_rehash(ring, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->busy[0]), 20ULL);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	((struct rs_log_rec_disk *)ring)->nr_busy = 0;
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	/* A list that cannot be: not a record. */
	((struct rs_log_rec_disk *)ring)->nr_busy = cpu_to_le32(RS_LOG_SLOTS + 1);
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	((struct rs_log_rec_disk *)ring)->nr_busy = cpu_to_le32(2);
	t_rehash(ring, 0);
	KUNIT_EXPECT_TRUE(test, t_valid(ring, 0, T_NONCE, &len));
	/* A later format: not a record, and a scan that meets it refuses. */
	((struct rs_log_rec_disk *)ring)->format = cpu_to_le32(RS_LOG_FORMAT + 1);
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	{
		struct xarray xa;

		xa_init(&xa);
		KUNIT_EXPECT_EQ(test, rs_log_scan(ring, T_NONCE, T_N, T_CHUNK, &xa), -EPROTO);
		xa_destroy(&xa);
	}
	((struct rs_log_rec_disk *)ring)->format = 0;
	t_rehash(ring, 0);
	KUNIT_EXPECT_FALSE(test, t_valid(ring, 0, T_NONCE, &len));
	((struct rs_log_rec_disk *)ring)->nr_busy = 0;
	t_rehash(ring, 0);
	KUNIT_EXPECT_TRUE(test, t_valid(ring, 0, T_NONCE, &len));
}

/*
 * A torn write that lands some of its blocks and not others (a review of
 * 1.11.17). Lap 0 left records x (block 100, seq 10) and y (block 102,
 * seq 11) of stripe 7, both done. Lap 1 wrote seq 48-50 at blocks 0-5
 * (seq 50 the last whole one, taken while 49 and 50 were in use), then a
 * write over blocks 100-103 tore: y's header changed, x's not, and no
 * record of that write is whole. y's update was done: the stripe's
 * parity on disk is right, and replaying x, which the lap rule trusts (lap
 * 0, past the newest record), would make it the partial parity of x's
 * time XOR what x's members hold now: member 2's chunk (failed) read back
 * as y overwrote it. Format 1: only seq 50 and the ones it lists.
 */
static void rs_log_test_scan_torn_lap(struct kunit *test)
{
	static const u64 l48[] = { 48 }, l49[] = { 48, 49 }, l50[] = { 49, 50 };
	static const u64 lx[] = { 10 }, ly[] = { 11, 9 };
	u8 *ring = t_ring(test);
	struct xarray *xa;

	t_rec1(test, ring, 100, 10, 0, 7, 1, lx, ARRAY_SIZE(lx));
	t_rec1(test, ring, 102, 11, 0, 7, 2, ly, ARRAY_SIZE(ly));
	t_rec1(test, ring, 0, 48, 1, 3, 3, l48, ARRAY_SIZE(l48));
	t_rec1(test, ring, 2, 49, 1, 4, 4, l49, ARRAY_SIZE(l49));
	t_rec1(test, ring, 4, 50, 1, 1, 5, l50, ARRAY_SIZE(l50));
	t_rec1(test, ring, 200, 12, 0, 9, 6, lx, ARRAY_SIZE(lx));	/* done long ago */
	ring[102 * RS_LOG_BLOCK + 40] ^= 1;	/* y torn */
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 7), -1L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 1), 4L);	/* the newest whole */
	KUNIT_EXPECT_EQ(test, t_newest(xa, 4), 2L);	/* listed by it */
	KUNIT_EXPECT_EQ(test, t_newest(xa, 3), -1L);	/* done before it */
	KUNIT_EXPECT_EQ(test, t_newest(xa, 9), -1L);
	/* 1.11.17's records (format 0), the same tear: x trusted by the lap rule. */
	memset(ring, 0, RS_LOG_BYTES);
	t_rec(ring, 100, T_NONCE, 10, 0, 7, 0, 8, 1);
	t_rec(ring, 102, T_NONCE, 11, 0, 7, 0, 8, 2);
	t_rec(ring, 0, T_NONCE, 48, 1, 3, 0, 8, 3);
	t_rec(ring, 2, T_NONCE, 49, 1, 4, 0, 8, 4);
	t_rec(ring, 4, T_NONCE, 50, 1, 1, 0, 8, 5);
	ring[102 * RS_LOG_BLOCK + 40] ^= 1;
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 7), 100L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 3), 0L);
}

/*
 * Format 1: of the trusted records, each stripe's newest; a listed record
 * is trusted wherever it lies (a lap before, or skipped past), an unlisted
 * one nowhere, and the newest whole record's own stripe keeps it.
 */
static void rs_log_test_scan_listed(struct kunit *test)
{
	static const u64 top[] = { 30, 41, 44 }, none[] = { 0 };
	u8 *ring = t_ring(test);
	struct xarray *xa;

	t_rec1(test, ring, 10, 44, 3, 2, 1, top, ARRAY_SIZE(top));
	t_rec1(test, ring, 0, 43, 3, 2, 2, none, 0);		/* the top's stripe, older */
	t_rec1(test, ring, 5, 41, 3, 6, 3, none, 0);
	t_rec1(test, ring, 1500, 30, 2, 8, 4, none, 0);		/* a lap before, in use */
	t_rec1(test, ring, 1600, 31, 2, 10, 5, none, 0);		/* done: not listed */
	t_rec1(test, ring, 1700, 32, 1, 6, 6, none, 0);		/* an older lap, not listed */
	t_rec1(test, ring, 20, 45, 3, 6, 7, top, ARRAY_SIZE(top));
	ring[21 * RS_LOG_BLOCK] ^= 0x80;			/* seq 45 torn: never began */
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 2), 10L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 6), 5L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 8), 1500L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 10), -1L);
	/* Another state's newest record counts for nothing. */
	t_rec1(test, ring, 30, 99, 3, 11, 8, none, 0);
	((struct rs_log_rec_disk *)(ring + 30 * RS_LOG_BLOCK))->nonce = cpu_to_le64(T_NONCE + 1);
	t_rehash(ring, 30);
	xa = t_scan(test, ring);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 2), 10L);
	KUNIT_EXPECT_EQ(test, t_newest(xa, 11), -1L);
}

/*
 * rs_log_write() itself: each header lists the ring's records in use when
 * it took its space, its own and those of its operation included, never a
 * record done before. Ring 3 is kept "writing", so nothing is submitted.
 */
struct t_lw {
	struct rainssd rs;
	struct rs_log *log;
	struct rs_op op[3];
	struct page *pp[2];
};

static void t_lw_destroy(void *p)
{
	struct t_lw *t = p;
	unsigned int i;

	rs_log_destroy(t->log);
	for (i = 0; i < ARRAY_SIZE(t->pp); i++)
		if (t->pp[i])
			__free_page(t->pp[i]);
}

/* The k-th update of @op: stripe op->stripe + 4k (parity on member 3), 8 rows. */
static void t_lw_fill(struct rs_op *op, unsigned int k, struct rs_log_update *u)
{
	memset(u, 0, sizeof(*u));
	u->stripe = op->stripe + 4 * k;
	u->parity = rs_parity_member(&op->rs->geom, u->stripe);
	u->rows.start = 0;
	u->rows.end = 8;
	u->w[0] = u->rows;
	u->pp_pidx = k;
}

static void t_lw_never(struct rs_op *op)
{
}

/* The header of @op's record of stripe @stripe: its sequence number in *@seq. */
static const struct rs_log_rec_disk *t_lw_hdr(struct kunit *test, struct t_lw *t,
					      struct rs_op *op, u64 stripe)
{
	struct rs_log_ring *r = &t->log->ring[3];
	const struct rs_log_rec_disk *d;
	unsigned int i;

	for (i = 0; i < RS_LOG_SLOTS; i++) {
		if (!r->slot[i].busy || r->slot[i].op != op)
			continue;
		d = page_address(r->slot[i].hdr);
		if (le64_to_cpu(d->stripe) == stripe)
			return d;
	}
	KUNIT_FAIL(test, "no record of stripe %llu in use", stripe);
	return NULL;
}

static void rs_log_test_write_lists(struct kunit *test)
{
	struct t_lw *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	const struct rs_log_rec_disk *a, *b, *c, *e;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&t->rs.geom, T_N, T_CHUNK), 0);
	KUNIT_ASSERT_EQ(test, rs_log_create(&t->rs, &t->log), 0);
	for (i = 0; i < ARRAY_SIZE(t->pp); i++)
		t->pp[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_lw_destroy, t), 0);
	KUNIT_ASSERT_TRUE(test, t->pp[0] && t->pp[1]);
	KUNIT_ASSERT_EQ(test, rs_parity_member(&t->rs.geom, 0), 3U);
	t->log->ring[3].writing = true;
	for (i = 0; i < ARRAY_SIZE(t->op); i++) {
		t->op[i].rs = &t->rs;
		t->op[i].pages = t->pp;
		t->op[i].nr_pages = ARRAY_SIZE(t->pp);
		t->op[i].stripe = 8 * i;
	}
	/* One record, then an operation of two: 1; 1, 2, 3 in each of its. */
	KUNIT_ASSERT_TRUE(test, rs_log_write(t->log, &t->op[0], 1, t_lw_fill, T_NONCE,
					     t_lw_never, t_lw_never));
	KUNIT_ASSERT_TRUE(test, rs_log_write(t->log, &t->op[1], 2, t_lw_fill, T_NONCE,
					     t_lw_never, t_lw_never));
	a = t_lw_hdr(test, t, &t->op[0], 0);
	b = t_lw_hdr(test, t, &t->op[1], 8);
	c = t_lw_hdr(test, t, &t->op[1], 12);
	KUNIT_ASSERT_TRUE(test, a && b && c);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(a->seq), 1ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(a->format), RS_LOG_FORMAT);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(a->nr_busy), 1U);
	KUNIT_EXPECT_TRUE(test, rs_log_listed(a, 1));
	KUNIT_EXPECT_EQ(test, le32_to_cpu(a->block), 0U);
	for (i = 0; i < 2; i++) {
		e = i ? c : b;
		KUNIT_EXPECT_EQ(test, le64_to_cpu(e->seq), 2ULL + i);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(e->nr_busy), 3U);
		KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 1));
		KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 2));
		KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 3));
	}
	/* The first done: the next record lists 2, 3 and 4, never 1. */
	rs_log_done(t->log, &t->op[0]);
	KUNIT_ASSERT_TRUE(test, rs_log_write(t->log, &t->op[2], 1, t_lw_fill, T_NONCE,
					     t_lw_never, t_lw_never));
	e = t_lw_hdr(test, t, &t->op[2], 16);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(e->seq), 4ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e->nr_busy), 3U);
	KUNIT_EXPECT_FALSE(test, rs_log_listed(e, 1));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 2));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 3));
	KUNIT_EXPECT_TRUE(test, rs_log_listed(e, 4));
	/* The lap 0 records at blocks 0, 2, 4, then 6. */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(e->block), 6U);
}

/* One write of a ring: contiguous records in sequence, less than half the ring. */
static void rs_log_test_batch(struct kunit *test)
{
	struct rs_log_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct rs_log_slot first = { .start = 100, .len = 257, .seq = 5 };
	struct rs_log_slot s = { .start = 357, .len = 257, .seq = 6 };

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->batch[0] = &first;
	r->nr_batch = 1;
	r->handed = 5;
	KUNIT_EXPECT_TRUE(test, rs_log_batch_takes(r, &s, 357));
	KUNIT_EXPECT_FALSE(test, rs_log_batch_takes(r, &s, 358));	/* not contiguous */
	s.seq = 7;
	KUNIT_EXPECT_FALSE(test, rs_log_batch_takes(r, &s, 357));	/* not the next */
	s.seq = 6;
	/* Up to block 100 + 1023: taken; one block more: not. */
	s.len = RS_LOG_BLOCKS / 2 - 1 - 257;
	KUNIT_EXPECT_TRUE(test, rs_log_batch_takes(r, &s, 357));
	s.len++;
	KUNIT_EXPECT_FALSE(test, rs_log_batch_takes(r, &s, 357));
}

/* Ring space: a record goes at the head, or at 0 when it does not fit; never over a busy one. */
static void rs_log_test_ring_space(struct kunit *test)
{
	struct rs_log_ring *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int slot = ~0U, start = ~0U, i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_TRUE(test, rs_log_fits(r, 0, 5, &slot, &start));
	KUNIT_EXPECT_EQ(test, start, 0U);
	KUNIT_EXPECT_EQ(test, slot, 0U);
	KUNIT_EXPECT_TRUE(test, rs_log_fits(r, RS_LOG_BLOCKS - 5, 5, &slot, &start));
	KUNIT_EXPECT_EQ(test, start, RS_LOG_BLOCKS - 5);
	KUNIT_EXPECT_TRUE(test, rs_log_fits(r, RS_LOG_BLOCKS - 4, 5, &slot, &start));
	KUNIT_EXPECT_EQ(test, start, 0U);
	/* A record in flight at [2, 7): nothing may go over it. */
	r->slot[0].busy = true;
	r->slot[0].start = 2;
	r->slot[0].len = 5;
	KUNIT_EXPECT_FALSE(test, rs_log_fits(r, RS_LOG_BLOCKS - 4, 5, &slot, &start));
	KUNIT_EXPECT_FALSE(test, rs_log_fits(r, 6, 5, &slot, &start));
	KUNIT_EXPECT_TRUE(test, rs_log_fits(r, 7, 5, &slot, &start));
	KUNIT_EXPECT_EQ(test, slot, 1U);
	KUNIT_EXPECT_TRUE(test, rs_log_fits(r, 0, 2, &slot, &start));
	/* Every slot busy: no room whatever the space. */
	for (i = 0; i < RS_LOG_SLOTS; i++) {
		r->slot[i].busy = true;
		r->slot[i].start = 2;
		r->slot[i].len = 5;
	}
	KUNIT_EXPECT_FALSE(test, rs_log_fits(r, 100, 5, &slot, &start));
}

static struct kunit_case rs_log_cases[] = {
	KUNIT_CASE(rs_log_test_record_roundtrip),
	KUNIT_CASE(rs_log_test_record_corrupt),
	KUNIT_CASE(rs_log_test_record_bad_fields),
	KUNIT_CASE(rs_log_test_scan_newest),
	KUNIT_CASE(rs_log_test_scan_laps),
	KUNIT_CASE(rs_log_test_list_busy),
	KUNIT_CASE(rs_log_test_scan_torn_lap),
	KUNIT_CASE(rs_log_test_scan_listed),
	KUNIT_CASE(rs_log_test_batch),
	KUNIT_CASE(rs_log_test_write_lists),
	KUNIT_CASE(rs_log_test_ring_space),
	{}
};

static struct kunit_suite rs_log_suite = {
	.name = "rainssd-log",
	.test_cases = rs_log_cases,
};

kunit_test_suites(&rs_bitmap_suite, &rs_log_suite);
