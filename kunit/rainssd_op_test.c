// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for dm-rainssd's operation layer (rainssd-op.c, compiled into
 * this module by rainssd_units.c): buffer sizes, the stripe-cache cap, the
 * stripe-lock table (FIFO handoff, operations over several stripes locking
 * in ascending order, every operation running in the end), buffer pages and
 * the reserve, joining work to an operation that waits, and deferred bios
 * fed again when an operation ends.
 *
 * Each case builds a bare struct rainssd without devices (operations run,
 * no member I/O) with a workqueue of its own, and drains that workqueue
 * after every start, put and deferral, so that what has run is known without
 * timing. The callbacks, which run in the workqueue, only record; the case
 * checks in its own thread.
 */
#include <kunit/test.h>
#include <linux/bio.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "rainssd.h"
#include "rainssd_kunit.h"

#define T_MAX_OPS	32
#define T_MAX_FED	8

enum t_state {
	T_NONE,
	T_GOT,		/* from rs_op_get(), not started */
	T_STARTED,	/* rs_op_start() called, not run yet */
	T_RAN,		/* run: it holds its stripes */
	T_PUT,		/* rs_op_put(): gone */
};

struct t_env;

/* The operation object: struct rs_op first, as rs_op_module_init() wants. */
struct t_op {
	struct rs_op op;
	struct t_env *env;
	unsigned int id;
};

struct t_env {
	struct rainssd rs;		/* the feed callback finds us from it */
	spinlock_t lock;		/* protects what follows */
	struct t_op *ops[T_MAX_OPS];	/* by id, while not T_PUT */
	enum t_state state[T_MAX_OPS];
	unsigned int nr_ops;
	unsigned int order[T_MAX_OPS];	/* ids, in the order they ran */
	unsigned int nr_ran;
	unsigned int overlaps;		/* runs that found a stripe of theirs run by another */
	unsigned int errors;		/* anything else a callback found wrong */
	/* The feed callback. */
	unsigned int feed_units;	/* what it asks rs_op_get() for */
	unsigned int feed_calls;
	struct bio *fed[T_MAX_FED];	/* the bios it took, in order */
	unsigned int fed_id[T_MAX_FED];	/* and the operation each got */
	unsigned int nr_fed;
	int put_in_feed;		/* an id to put when a feed finds no room, or -1 */
	bool draining;			/* cleanup: take every bio without an operation */
};

/* ---- the environment ---- */

static void t_settle(struct t_env *env)
{
	/* Also waits for the work that work items queue (handoffs, kicks). */
	drain_workqueue(env->rs.wq);
}

/*
 * An operation with @units entries, registered, or NULL; a @background one
 * as resync, rebuild, scrub and migration take theirs. Any process context.
 */
static struct t_op *t_get_as(struct t_env *env, unsigned int units, bool background)
{
	struct rs_op *op = rs_op_get(&env->rs, units, background);
	struct t_op *t;

	if (!op)
		return NULL;
	t = container_of(op, struct t_op, op);
	t->env = env;
	spin_lock(&env->lock);
	if (env->nr_ops == T_MAX_OPS) {
		env->errors++;
		spin_unlock(&env->lock);
		rs_op_put(op);
		return NULL;
	}
	t->id = env->nr_ops++;
	env->ops[t->id] = t;
	env->state[t->id] = T_GOT;
	spin_unlock(&env->lock);
	return t;
}

static struct t_op *t_get(struct t_env *env, unsigned int units)
{
	return t_get_as(env, units, false);
}

/* Put operation @id without waiting for what that queues. Any process context. */
static void t_put_nowait(struct t_env *env, unsigned int id)
{
	struct t_op *t;

	spin_lock(&env->lock);
	t = env->ops[id];
	env->ops[id] = NULL;
	env->state[id] = T_PUT;
	spin_unlock(&env->lock);
	rs_op_put(&t->op);
}

/* op->run: record the order and that no other running operation has our stripes. */
static void t_run(struct rs_op *op)
{
	struct t_op *t = container_of(op, struct t_op, op);
	struct t_env *env = t->env;
	unsigned int i;

	spin_lock(&env->lock);
	for (i = 0; i < env->nr_ops; i++) {
		struct rs_op *o;

		if (env->state[i] != T_RAN)
			continue;
		o = &env->ops[i]->op;
		if (o->stripe < op->stripe + op->nr && op->stripe < o->stripe + o->nr)
			env->overlaps++;
	}
	if (op->nr_locked != op->nr || env->state[t->id] != T_STARTED)
		env->errors++;
	env->state[t->id] = T_RAN;
	if (env->nr_ran < T_MAX_OPS)
		env->order[env->nr_ran++] = t->id;
	spin_unlock(&env->lock);
}

/*
 * The target's feed: an operation of feed_units entries for @bio, false when
 * there is none. With put_in_feed set, a feed that finds no room first puts
 * that operation, as if it ended on another CPU just then.
 */
static bool t_feed(struct rainssd *rs, struct bio *bio)
{
	struct t_env *env = container_of(rs, struct t_env, rs);
	struct t_op *t;
	int put;

	spin_lock(&env->lock);
	env->feed_calls++;
	spin_unlock(&env->lock);
	if (READ_ONCE(env->draining))
		return true;
	t = t_get(env, env->feed_units);
	if (!t) {
		spin_lock(&env->lock);
		put = env->put_in_feed;
		env->put_in_feed = -1;
		spin_unlock(&env->lock);
		if (put >= 0)
			t_put_nowait(env, put);
		return false;
	}
	spin_lock(&env->lock);
	if (env->nr_fed < T_MAX_FED) {
		env->fed[env->nr_fed] = bio;
		env->fed_id[env->nr_fed++] = t->id;
	} else {
		env->errors++;
	}
	spin_unlock(&env->lock);
	return true;
}

static void t_free_stats(void *data)
{
	free_percpu((void __percpu __force *)data);
}

static void t_load_exit(void *data)
{
	rs_load_exit(data);
}

static void t_destroy_wq(void *data)
{
	destroy_workqueue(data);
}

/*
 * The end of a case: put what a failed case left (holders first, which lets
 * waiters run), take any deferred bio back, then the layer goes.
 */
static void t_env_exit(void *data)
{
	struct t_env *env = data;
	unsigned int round, i;
	bool more = true;

	WRITE_ONCE(env->draining, true);
	for (round = 0; more && round < 2 * T_MAX_OPS; round++) {
		more = false;
		t_settle(env);
		for (i = 0; i < env->nr_ops; i++) {
			if (env->state[i] == T_GOT || env->state[i] == T_RAN) {
				t_put_nowait(env, i);
				more = true;
			}
		}
		if (rs_defer_pending(&env->rs)) {
			rs_feed_kick(&env->rs);
			more = true;
		}
	}
	t_settle(env);
	rs_op_exit(&env->rs);
}

/* A target of @n members of @chunk sectors, with @cache stripe-cache entries. */
static struct t_env *t_env_new(struct kunit *test, unsigned int n, unsigned int chunk,
			       unsigned int cache)
{
	struct t_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	struct rainssd *rs;

	KUNIT_ASSERT_NOT_NULL(test, env);
	rs = &env->rs;
	spin_lock_init(&env->lock);
	env->put_in_feed = -1;
	KUNIT_ASSERT_EQ(test, rs_geom_init(&rs->geom, n, chunk), 0);
	rs_tunables_default(&rs->tun);
	rs->stripe_cache = cache;

	rs->stats = alloc_percpu(struct rs_stats);
	KUNIT_ASSERT_FALSE(test, !rs->stats);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_free_stats,
							(void __force *)rs->stats), 0);
	KUNIT_ASSERT_EQ(test, rs_load_init(&rs->load, n, &rs->tun), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_load_exit, &rs->load), 0);
	rs->wq = alloc_workqueue("rainssd_kunit", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	KUNIT_ASSERT_NOT_NULL(test, rs->wq);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_destroy_wq, rs->wq), 0);
	KUNIT_ASSERT_EQ(test, rs_op_init(rs, t_feed), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_env_exit, env), 0);
	return env;
}

/*
 * The id of a new operation (@background or not) with @units entries,
 * which must be had and be @want.
 */
static unsigned int t_new_as(struct kunit *test, struct t_env *env, unsigned int units,
			     unsigned int want, bool background)
{
	struct t_op *t = t_get_as(env, units, background);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, t->id, want);
	return t->id;
}

static unsigned int t_new(struct kunit *test, struct t_env *env, unsigned int units,
			  unsigned int want)
{
	return t_new_as(test, env, units, want, false);
}

/* Start operation @id over stripes [stripe, stripe + nr) with @pages buffer pages. */
static void t_start(struct t_env *env, unsigned int id, u64 stripe, unsigned int nr,
		    unsigned int pages)
{
	struct t_op *t = env->ops[id];

	t->op.stripe = stripe;
	t->op.nr = nr;
	spin_lock(&env->lock);
	env->state[id] = T_STARTED;
	spin_unlock(&env->lock);
	rs_op_start(&t->op, pages, t_run);
	t_settle(env);
}

/* Put operation @id, which must hold nothing or have run (not wait in the layer). */
static void t_put(struct kunit *test, struct t_env *env, unsigned int id)
{
	KUNIT_ASSERT_TRUE_MSG(test, env->state[id] == T_GOT || env->state[id] == T_RAN,
			      "operation %u is waiting or gone (state %d)", id, env->state[id]);
	t_put_nowait(env, id);
	t_settle(env);
}

static bool t_ran(struct t_env *env, unsigned int id)
{
	return env->state[id] == T_RAN;
}

/* The operations that ran, in order, are @ids[0..nr), and nothing went wrong. */
static void t_expect_order(struct kunit *test, struct t_env *env, const unsigned int *ids,
			   unsigned int nr)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, env->nr_ran, nr);
	for (i = 0; i < min(nr, env->nr_ran); i++)
		KUNIT_EXPECT_EQ_MSG(test, env->order[i], ids[i], "run %u", i);
	KUNIT_EXPECT_EQ(test, env->overlaps, 0U);
	KUNIT_EXPECT_EQ(test, env->errors, 0U);
}

static u64 t_stat(struct t_env *env, enum rs_stat st)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(env->rs.stats, cpu)->c[st];
	return sum;
}

static void t_expect_usage(struct kunit *test, struct t_env *env, unsigned int used,
			   unsigned int peak)
{
	unsigned int u, p;

	rs_op_cache_usage(&env->rs, &u, &p);
	KUNIT_EXPECT_EQ(test, u, used);
	KUNIT_EXPECT_EQ(test, p, peak);
}

/* ---- the cases ---- */

/*
 * Buffer pages one operation may use: a whole stripe and at least
 * RS_OP_MIN_PAGES; the smallest stripe cache holds that. With 4 KiB pages:
 *   4 x 4 KiB chunks: 4 pages, so 256; 256 / 4 = 64 entries;
 *   5 x 512 KiB: 5 * 128 = 640 pages, 128 entries;
 *   8 x 1 MiB: 8 * 256 = 2048 pages, 256 entries;
 *   3 x 8 KiB: 6 pages, so 256; 256 / 3 rounded up = 86 entries.
 */
/*
 * What blk-wbt lets through unthrottled (wbt_should_throttle(): a write with
 * both REQ_SYNC and REQ_IDLE, as an O_DIRECT write has).
 */
static bool t_wbt_passes(blk_opf_t opf)
{
	return (opf & (REQ_SYNC | REQ_IDLE)) == (REQ_SYNC | REQ_IDLE);
}

/* Flags as a number, for KUnit's comparisons (blk_opf_t is __bitwise). */
static u32 t_opf(blk_opf_t opf)
{
	return (__force u32)opf;
}

/*
 * The member writes of a user write keep its FUA and its hints; an O_DIRECT
 * write's stay unthrottled by wbt (1.11.1 dropped REQ_IDLE, so wbt held
 * them to one or two in flight per member); a write from writeback and the
 * target's own writes stay throttled; PREFLUSH and other flags are not
 * passed on.
 */
static void rs_op_write_flags(struct kunit *test)
{
	struct bio bio = {};
	blk_opf_t opf;

	bio.bi_opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE;	/* O_DIRECT */
	opf = rs_user_write_opf(&bio);
	KUNIT_EXPECT_EQ(test, t_opf(opf & REQ_OP_MASK), t_opf(REQ_OP_WRITE));
	KUNIT_EXPECT_TRUE(test, t_wbt_passes(opf));
	KUNIT_EXPECT_FALSE(test, opf & REQ_FUA);

	bio.bi_opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE | REQ_FUA | REQ_PREFLUSH | REQ_META |
		     REQ_PRIO | REQ_NOMERGE;
	opf = rs_user_write_opf(&bio);
	KUNIT_EXPECT_EQ(test, t_opf(opf), t_opf(REQ_OP_WRITE | REQ_SYNC | REQ_IDLE | REQ_FUA |
						 REQ_META | REQ_PRIO));

	bio.bi_opf = REQ_OP_WRITE | REQ_BACKGROUND;		/* writeback */
	opf = rs_user_write_opf(&bio);
	KUNIT_EXPECT_EQ(test, t_opf(opf), t_opf(REQ_OP_WRITE));
	KUNIT_EXPECT_FALSE(test, t_wbt_passes(opf));

	bio.bi_opf = REQ_OP_WRITE | REQ_SYNC;			/* fsync'ed writeback */
	KUNIT_EXPECT_FALSE(test, t_wbt_passes(rs_user_write_opf(&bio)));

	KUNIT_EXPECT_EQ(test, t_opf(rs_user_write_opf(NULL)), t_opf(REQ_OP_WRITE));
}

static void rs_op_sizes(struct kunit *test)
{
	struct rs_geom g;

	if (PAGE_SIZE != SZ_4K)
		kunit_skip(test, "worked for 4 KiB pages");
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 8), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 256U);
	KUNIT_EXPECT_EQ(test, rs_stripe_cache_min(&g, false), 64U);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 5, 1024), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 640U);
	KUNIT_EXPECT_EQ(test, rs_stripe_cache_min(&g, false), 128U);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 8, 2048), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 2048U);
	KUNIT_EXPECT_EQ(test, rs_stripe_cache_min(&g, false), 256U);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 3, 16), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 256U);
	KUNIT_EXPECT_EQ(test, rs_stripe_cache_min(&g, false), 86U);
	/* With a tier: a migration's 2n - 1 chunks where they are more. */
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, true), 256U);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 4, 512), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 256U);
	KUNIT_EXPECT_EQ(test, rs_op_migrate_pages(&g), 448U);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, true), 448U);
	KUNIT_EXPECT_EQ(test, rs_stripe_cache_min(&g, true), 112U);
	KUNIT_ASSERT_EQ(test, rs_geom_init(&g, 16, 128), 0);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, false), 256U);
	KUNIT_EXPECT_EQ(test, rs_op_max_pages(&g, true), 496U);
}

/* rs_op_get() holds entries up to the cap and not one more; rs_op_put() gives them back. */
static void rs_op_cache_cap(struct kunit *test)
{
	enum { A, B, C, D, E };
	struct t_env *env = t_env_new(test, 4, 8, 10);

	t_new(test, env, 4, A);
	t_new(test, env, 4, B);
	KUNIT_EXPECT_NULL(test, t_get(env, 3));		/* 8 + 3 > 10 */
	t_new(test, env, 2, C);
	KUNIT_EXPECT_NULL(test, t_get(env, 1));
	t_expect_usage(test, env, 10, 10);
	KUNIT_EXPECT_EQ(test, env->ops[A]->op.units, 4U);
	KUNIT_EXPECT_PTR_EQ(test, env->ops[A]->op.rs, &env->rs);

	t_put(test, env, A);
	t_expect_usage(test, env, 6, 10);
	KUNIT_EXPECT_NULL(test, t_get(env, 5));
	t_new(test, env, 4, D);
	t_expect_usage(test, env, 10, 10);
	t_put(test, env, B);
	t_put(test, env, C);
	t_put(test, env, D);
	t_expect_usage(test, env, 0, 10);
	rs_op_cache_reset_peak(&env->rs);
	t_expect_usage(test, env, 0, 0);

	/* More than the whole cache: never, even empty. All of it: yes. */
	KUNIT_EXPECT_NULL(test, t_get(env, 11));
	t_new(test, env, 10, E);
	t_put(test, env, E);
	/* A smaller cache (the stripe_cache message) counts from then on. */
	WRITE_ONCE(env->rs.stripe_cache, 4);
	KUNIT_EXPECT_NULL(test, t_get(env, 5));
	t_put(test, env, t_new(test, env, 4, E + 1));
	t_expect_usage(test, env, 0, 10);
	KUNIT_EXPECT_EQ(test, env->errors, 0U);
}

/*
 * A background operation gets its entries while user operations fill the
 * cache, as many as the whole cache, and user operations keep the whole
 * cap meanwhile (up to 1.11.14 it needed room like a user's, so a load
 * that kept the cache full starved resync, rebuild, scrub and the
 * migration; a first 1.11.15 took the room from the user's cap, which
 * held deferred bios back while an engine ran step after step).
 */
static void rs_op_cache_background(struct kunit *test)
{
	enum { A, B, C, D, E };
	struct t_env *env = t_env_new(test, 4, 8, 10);

	t_new(test, env, 10, A);
	KUNIT_EXPECT_NULL(test, t_get(env, 1));
	t_new_as(test, env, 10, B, true);
	t_expect_usage(test, env, 20, 20);
	KUNIT_EXPECT_NULL(test, t_get(env, 1));
	t_put(test, env, A);
	/* B holds the cap's worth beyond it: user operations have all of it. */
	t_expect_usage(test, env, 10, 20);
	t_new(test, env, 10, C);
	KUNIT_EXPECT_NULL(test, t_get(env, 1));
	/* A second background one too, the cache full of both kinds. */
	t_new_as(test, env, 1, D, true);
	t_expect_usage(test, env, 21, 21);
	t_put(test, env, B);
	t_put(test, env, D);
	KUNIT_EXPECT_NULL(test, t_get(env, 1));
	t_put(test, env, C);
	t_new(test, env, 10, E);
	t_put(test, env, E);
	t_expect_usage(test, env, 0, 21);
	KUNIT_EXPECT_EQ(test, env->errors, 0U);
}

/* Four operations on one stripe run one at a time, in the order they came. */
static void rs_op_lock_fifo(struct kunit *test)
{
	enum { A, B, C, D };
	static const unsigned int order[] = { A, B, C, D };
	struct t_env *env = t_env_new(test, 4, 8, 64);
	unsigned int id;

	for (id = A; id <= D; id++) {
		t_new(test, env, 1, id);
		t_start(env, id, 7, 1, 0);
		KUNIT_EXPECT_EQ(test, t_ran(env, id), id == A);
	}
	t_expect_order(test, env, order, 1);
	for (id = A; id < D; id++) {
		t_put(test, env, id);
		/* The stripe went to the next one, and only to it. */
		t_expect_order(test, env, order, id + 2);
	}
	t_put(test, env, D);
	KUNIT_EXPECT_EQ(test, t_stat(env, RS_STAT_OPS), 4ULL);
}

/*
 * Operations over several stripes lock them in ascending order and wait
 * only for the stripe they are at. A holds stripes 5-6. B wants 4-6: it
 * takes 4 and waits for 5. C wants 4: it queues behind B. D wants 7: it
 * runs. E wants 6: it queues behind A on 6. When A is put, B gets 5 and E
 * gets 6 (first in line there), so B waits for E; then B runs, then C.
 */
static void rs_op_lock_multi_stripe(struct kunit *test)
{
	enum { A, B, C, D, E };
	static const unsigned int order[] = { A, D, E, B, C };
	struct t_env *env = t_env_new(test, 4, 8, 64);
	unsigned int id;

	for (id = A; id <= E; id++)
		t_new(test, env, 1, id);
	t_start(env, A, 5, 2, 0);
	t_start(env, B, 4, 3, 0);
	t_start(env, C, 4, 1, 0);
	t_start(env, D, 7, 1, 0);
	t_start(env, E, 6, 1, 0);
	t_expect_order(test, env, order, 2);
	KUNIT_EXPECT_EQ(test, env->state[B], T_STARTED);
	KUNIT_EXPECT_EQ(test, env->state[C], T_STARTED);
	KUNIT_EXPECT_EQ(test, env->state[E], T_STARTED);

	t_put(test, env, A);
	t_expect_order(test, env, order, 3);
	t_put(test, env, D);
	t_expect_order(test, env, order, 3);
	t_put(test, env, E);
	t_expect_order(test, env, order, 4);
	KUNIT_EXPECT_EQ(test, env->ops[B]->op.nr_locked, 3U);
	t_put(test, env, B);
	t_expect_order(test, env, order, 5);
	t_put(test, env, C);
	KUNIT_EXPECT_EQ(test, t_stat(env, RS_STAT_OPS), 5ULL);
}

/*
 * Many operations over overlapping stripes, among them the longest
 * (RS_OP_MAX_STRIPES), stripes that share a lock-table bucket and stripes
 * beyond 2^32: started all at once, then the one that ran first put, again
 * and again. Every one runs, never two over the same stripe.
 */
static void rs_op_lock_progress(struct kunit *test)
{
	struct {
		u64 stripe;
		unsigned int nr;
	} ops[] = {
		{ 0, 4 }, { 2, 3 }, { 3, 1 }, { 1, RS_OP_MAX_STRIPES }, { 4, 2 }, { 5, 1 },
		{ 3, 2 }, { 0, 1 }, { 10, 4 }, { 12, 1 }, { 8, 8 }, { 3, 1 }, { 0, 0 },
		{ 0, 0 }, { 0, 0 }, { 1ULL << 40, 2 }, { (1ULL << 40) + 1, 1 }, { 15, 2 },
	};
	struct t_env *env = t_env_new(test, 4, 8, 256);
	unsigned int i, nr = ARRAY_SIZE(ops), put = 0;
	u64 x, twins[3];

	/* Three stripes in stripe 3's bucket of the table's 1 << 10 (rainssd-op.c). */
	for (x = 4, i = 0; i < ARRAY_SIZE(twins); x++)
		if (hash_64(x, 10) == hash_64(3, 10))
			twins[i++] = x;
	ops[12].stripe = twins[0];
	ops[12].nr = 1;
	ops[13].stripe = twins[1];
	ops[13].nr = 2;
	ops[14].stripe = twins[0];
	ops[14].nr = 1;

	for (i = 0; i < nr; i++) {
		t_new(test, env, 1, i);
		t_start(env, i, ops[i].stripe, ops[i].nr, 0);
	}
	KUNIT_EXPECT_TRUE(test, t_ran(env, 0));
	while (put < nr) {
		for (i = 0; i < env->nr_ran; i++)
			if (t_ran(env, env->order[i]))
				break;
		KUNIT_ASSERT_LT_MSG(test, i, env->nr_ran, "%u of %u ran, none holds", put, nr);
		t_put(test, env, env->order[i]);
		put++;
	}
	KUNIT_EXPECT_EQ(test, env->nr_ran, nr);
	KUNIT_EXPECT_EQ(test, env->overlaps, 0U);
	KUNIT_EXPECT_EQ(test, env->errors, 0U);
	KUNIT_EXPECT_EQ(test, t_stat(env, RS_STAT_OPS), (u64)nr);
}

static void t_fault_off(void *data)
{
	rs_kunit_fault_set(RS_FAULT_BUFFERS, false);
}

/*
 * Buffer pages come from the page allocator, else from the reserve, which
 * one operation at a time owns; one waiting for it holds no stripe. With
 * fail_buffers firing, A runs on the reserve, B waits for it and C (no
 * pages) runs; F, on B's stripe, runs too. Without the fault D gets pages of
 * its own. When A is put (after F), B runs on the same reserve.
 */
static void rs_op_pages_and_reserve(struct kunit *test)
{
	enum { A, B, C, D, F };
	static const unsigned int order[] = { A, C, F, D, B };
	struct t_env *env = t_env_new(test, 4, 8, 64);
	struct page **reserve;
	struct rs_op *op;
	unsigned int id, i;

	if (!rs_kunit_fault_set(RS_FAULT_BUFFERS, true))
		kunit_skip(test, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_fault_off, NULL), 0);
	for (id = A; id <= F; id++)
		t_new(test, env, 1, id);
	t_start(env, A, 1, 1, 3);
	t_start(env, B, 2, 1, 2);
	t_start(env, C, 3, 1, 0);
	t_start(env, F, 2, 1, 0);
	rs_kunit_fault_set(RS_FAULT_BUFFERS, false);
	t_start(env, D, 4, 1, 2);
	t_expect_order(test, env, order, 4);

	op = &env->ops[A]->op;
	KUNIT_EXPECT_TRUE(test, op->on_reserve);
	KUNIT_ASSERT_NOT_NULL(test, op->pages);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_NOT_NULL(test, op->pages[i]);
	reserve = op->pages;
	KUNIT_EXPECT_NULL(test, env->ops[C]->op.pages);
	op = &env->ops[D]->op;
	KUNIT_EXPECT_FALSE(test, op->on_reserve);
	KUNIT_ASSERT_NOT_NULL(test, op->pages);
	KUNIT_EXPECT_PTR_NE(test, op->pages, reserve);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_NOT_NULL(test, op->pages[i]);

	/* B's stripe is free again, but B still waits for the reserve. */
	t_put(test, env, F);
	t_expect_order(test, env, order, 4);
	t_put(test, env, A);
	t_expect_order(test, env, order, 5);
	op = &env->ops[B]->op;
	KUNIT_EXPECT_TRUE(test, op->on_reserve);
	KUNIT_EXPECT_PTR_EQ(test, op->pages, reserve);
	t_put(test, env, B);
	t_put(test, env, C);
	t_put(test, env, D);
	KUNIT_EXPECT_EQ(test, t_stat(env, RS_STAT_RESERVE), 2ULL);
}

static void t_poison_off(void *unused)
{
	rs_kunit_poison_set(false);
}

/*
 * The pages of an operation that ended go to the volume's pool and are handed
 * out again before the allocator is asked; the pool keeps at most
 * stripe_cache x n pages (here 2 x 4), and gives back what is over that when
 * stripe_cache is lowered. With poison_buffers every page handed out, from
 * the pool or the allocator, holds RS_POISON_BYTE.
 */
static void rs_op_page_pool(struct kunit *test)
{
	enum { A, B, C, D };
	struct t_env *env = t_env_new(test, 4, 8, 2);
	struct page *a[3];
	struct rs_op *op;
	unsigned int i, j, found = 0;
	bool poison;

	t_new(test, env, 1, A);
	t_start(env, A, 1, 1, 3);
	KUNIT_ASSERT_TRUE(test, t_ran(env, A));
	op = &env->ops[A]->op;
	KUNIT_EXPECT_FALSE(test, op->on_reserve);
	for (i = 0; i < 3; i++)
		a[i] = op->pages[i];
	t_put(test, env, A);
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 3U);

	/* B takes A's three pages and two new ones; C, beside it, six new ones. */
	t_new(test, env, 1, B);
	t_start(env, B, 2, 1, 5);
	KUNIT_ASSERT_TRUE(test, t_ran(env, B));
	op = &env->ops[B]->op;
	KUNIT_ASSERT_FALSE(test, op->on_reserve);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 5; j++)
			found += op->pages[j] == a[i];
	KUNIT_EXPECT_EQ(test, found, 3U);
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 0U);
	t_new(test, env, 1, C);
	t_start(env, C, 3, 1, 6);
	KUNIT_ASSERT_TRUE(test, t_ran(env, C));
	t_put(test, env, B);
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 5U);
	t_put(test, env, C);
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 8U);

	/* Nine pages: the pool's eight and one from the allocator, all poisoned. */
	poison = rs_kunit_poison_set(true);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_poison_off, NULL), 0);
	t_new(test, env, 1, D);
	t_start(env, D, 4, 1, 9);
	KUNIT_ASSERT_TRUE(test, t_ran(env, D));
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 0U);
	op = &env->ops[D]->op;
	KUNIT_ASSERT_FALSE(test, op->on_reserve);
	for (i = 0; poison && i < 9; i++)
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(page_address(op->pages[i]), RS_POISON_BYTE,
						       PAGE_SIZE), "page %u not poisoned", i);
	rs_kunit_poison_set(false);

	/* stripe_cache lowered to 1: the pool keeps four of D's nine pages. */
	env->rs.stripe_cache = 1;
	t_put(test, env, D);
	KUNIT_EXPECT_EQ(test, rs_kunit_pooled(&env->rs), 4U);
	t_expect_order(test, env, (const unsigned int[]){ A, B, C, D }, 4);
}

/* What t_join_fn() grows an operation to, and how often it was called. */
struct t_join {
	unsigned int nr, pages, units, calls;
	u64 new_key;
};

static bool t_join_fn(struct rs_op *op, void *data)
{
	struct t_join *j = data;

	j->calls++;
	if (!rs_op_grow(op, j->nr, j->pages, j->units))
		return false;
	op->join_key = j->new_key;
	return true;
}

static bool t_join(struct t_env *env, u64 key, struct t_join *j, unsigned int nr,
		   unsigned int pages, unsigned int units, u64 new_key)
{
	j->nr = nr;
	j->pages = pages;
	j->units = units;
	j->new_key = new_key;
	return rs_op_join(&env->rs, key, t_join_fn, j);
}

/* A key other than @key that rs_op_join() looks up in the same bucket as @key. */
static u64 t_same_bucket(u64 key)
{
	u64 k = key + 1;

	while (hash_64(k, 6) != hash_64(key, 6))
		k++;
	return k;
}

/*
 * Joining (rs_op_join, rs_op_grow). A holds stripe 5. B, joinable with key
 * 100, waits for it with 1 page and 1 entry: another key, even one in the
 * same bucket, does not find it; a grow beyond the stripe cache, to fewer
 * or too many stripes or (fail_buffers) without pages changes nothing; a
 * grow to stripes 5-6, 3 pages and 2 entries, re-keyed to 200, does. Then
 * key 200 finds it (3 entries, 4 pages, key 300) and 100 does not. When A
 * is put, B locks both stripes and runs: C, on stripe 6, waits for B; a
 * running B is found by no key. Everything goes back to the cache.
 */
static void rs_op_join_grow(struct kunit *test)
{
	enum { A, B, C };
	static const unsigned int order[] = { A, B, C };
	struct t_env *env = t_env_new(test, 4, 8, 64);
	struct t_join j = { 0 };
	struct rs_op *b;
	unsigned int id, i;
	bool faults;

	for (id = A; id <= C; id++)
		t_new(test, env, 1, id);
	b = &env->ops[B]->op;
	t_start(env, A, 5, 1, 0);
	rs_op_set_joinable(b, 100);
	t_start(env, B, 5, 1, 1);
	KUNIT_EXPECT_FALSE(test, t_ran(env, B));
	KUNIT_EXPECT_FALSE(test, t_join(env, 99, &j, 2, 3, 2, 200));
	KUNIT_EXPECT_FALSE(test, t_join(env, t_same_bucket(100), &j, 2, 3, 2, 200));
	KUNIT_EXPECT_EQ(test, j.calls, 0U);

	/* 64 entries, 3 held: 63 more for B do not fit. Nor does a shrink. */
	KUNIT_EXPECT_FALSE(test, t_join(env, 100, &j, 2, 3, 64, 200));
	KUNIT_EXPECT_FALSE(test, t_join(env, 100, &j, 0, 3, 2, 200));
	KUNIT_EXPECT_FALSE(test, t_join(env, 100, &j, RS_OP_MAX_STRIPES + 1, 3, 2, 200));
	faults = rs_kunit_fault_set(RS_FAULT_BUFFERS, true);
	if (faults) {
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_fault_off, NULL), 0);
		KUNIT_EXPECT_FALSE(test, t_join(env, 100, &j, 2, 3, 2, 200));
		rs_kunit_fault_set(RS_FAULT_BUFFERS, false);
	}
	KUNIT_EXPECT_EQ(test, j.calls, faults ? 4U : 3U);
	KUNIT_EXPECT_EQ(test, b->nr, 1U);
	KUNIT_EXPECT_EQ(test, b->nr_pages, 1U);
	KUNIT_EXPECT_EQ(test, b->units, 1U);
	t_expect_usage(test, env, 3, 3);

	KUNIT_EXPECT_TRUE(test, t_join(env, 100, &j, 2, 3, 2, 200));
	KUNIT_EXPECT_EQ(test, b->nr, 2U);
	KUNIT_EXPECT_EQ(test, b->nr_pages, 3U);
	KUNIT_EXPECT_EQ(test, b->units, 2U);
	t_expect_usage(test, env, 4, 4);
	/* Found by its new key only (it moved to that key's bucket). */
	j.calls = 0;
	KUNIT_EXPECT_FALSE(test, t_join(env, 100, &j, 2, 4, 3, 300));
	KUNIT_EXPECT_EQ(test, j.calls, 0U);
	KUNIT_EXPECT_TRUE(test, t_join(env, 200, &j, 2, 4, 3, 300));
	KUNIT_EXPECT_EQ(test, b->join_key, 300ULL);
	KUNIT_EXPECT_EQ(test, b->nr_pages, 4U);
	KUNIT_EXPECT_EQ(test, b->units, 3U);
	KUNIT_ASSERT_NOT_NULL(test, b->pages);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_NOT_NULL(test, b->pages[i]);
	t_expect_usage(test, env, 5, 5);

	t_put(test, env, A);
	t_expect_order(test, env, order, 2);
	KUNIT_EXPECT_EQ(test, b->nr_locked, 2U);
	t_start(env, C, 6, 1, 0);
	KUNIT_EXPECT_FALSE(test, t_ran(env, C));
	j.calls = 0;
	KUNIT_EXPECT_FALSE(test, t_join(env, 300, &j, 3, 4, 3, 400));
	KUNIT_EXPECT_EQ(test, j.calls, 0U);
	t_put(test, env, B);
	t_expect_order(test, env, order, 3);
	t_put(test, env, C);
	t_expect_usage(test, env, 0, 5);
}

/*
 * An operation on the reserve (fail_buffers) grows without a page more: D
 * waits behind C for stripe 6 and grows to stripes 6-7 and 40 pages on the
 * same reserve. E, on stripe 7, runs (D holds nothing yet); D runs after C
 * and E, holding both stripes.
 */
static void rs_op_join_reserve(struct kunit *test)
{
	enum { C, D, E };
	static const unsigned int order[] = { C, E, D };
	struct t_env *env = t_env_new(test, 4, 8, 64);
	struct t_join j = { 0 };
	struct page **reserve;
	struct rs_op *d;
	unsigned int id;

	for (id = C; id <= E; id++)
		t_new(test, env, 1, id);
	d = &env->ops[D]->op;
	t_start(env, C, 6, 1, 0);
	if (!rs_kunit_fault_set(RS_FAULT_BUFFERS, true))
		kunit_skip(test, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, t_fault_off, NULL), 0);
	rs_op_set_joinable(d, 7);
	t_start(env, D, 6, 1, 2);
	rs_kunit_fault_set(RS_FAULT_BUFFERS, false);
	KUNIT_ASSERT_TRUE(test, d->on_reserve);
	reserve = d->pages;
	KUNIT_EXPECT_TRUE(test, t_join(env, 7, &j, 2, 40, 10, 8));
	KUNIT_EXPECT_EQ(test, d->nr, 2U);
	KUNIT_EXPECT_EQ(test, d->nr_pages, 40U);
	KUNIT_EXPECT_TRUE(test, d->on_reserve);
	KUNIT_EXPECT_PTR_EQ(test, d->pages, reserve);
	t_start(env, E, 7, 1, 0);
	KUNIT_EXPECT_TRUE(test, t_ran(env, E));
	t_put(test, env, C);
	KUNIT_EXPECT_FALSE(test, t_ran(env, D));
	t_put(test, env, E);
	t_expect_order(test, env, order, 3);
	KUNIT_EXPECT_EQ(test, d->nr_locked, 2U);
	t_put(test, env, D);
	t_expect_usage(test, env, 0, 12);
}

/*
 * Deferred bios wait, in order, until an operation ends: with the cache full
 * a deferred bio is fed once (no room, it goes back first in line), a second
 * one behind it; the end of the holder feeds the first, which fills the
 * cache again; the end of that one feeds the second.
 */
static void rs_op_defer_feed(struct kunit *test)
{
	enum { A, B, C };
	struct t_env *env = t_env_new(test, 4, 8, 4);
	struct bio *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct bio *y = kunit_kzalloc(test, sizeof(*y), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_NOT_NULL(test, y);
	env->feed_units = 4;
	t_new(test, env, 4, A);
	KUNIT_EXPECT_FALSE(test, rs_defer_pending(&env->rs));

	rs_defer_bio(&env->rs, x);
	t_settle(env);
	KUNIT_EXPECT_EQ(test, env->feed_calls, 1U);
	KUNIT_EXPECT_EQ(test, env->nr_fed, 0U);
	KUNIT_EXPECT_TRUE(test, rs_defer_pending(&env->rs));
	rs_defer_bio(&env->rs, y);
	t_settle(env);
	KUNIT_EXPECT_EQ(test, env->feed_calls, 2U);	/* x again, not y */
	KUNIT_EXPECT_EQ(test, env->nr_fed, 0U);

	t_put(test, env, A);
	KUNIT_EXPECT_EQ(test, env->feed_calls, 4U);	/* x fed, y no room */
	KUNIT_ASSERT_EQ(test, env->nr_fed, 1U);
	KUNIT_EXPECT_PTR_EQ(test, env->fed[0], x);
	KUNIT_EXPECT_EQ(test, env->fed_id[0], (unsigned int)B);
	KUNIT_EXPECT_TRUE(test, rs_defer_pending(&env->rs));

	t_put(test, env, B);
	KUNIT_EXPECT_EQ(test, env->feed_calls, 5U);
	KUNIT_ASSERT_EQ(test, env->nr_fed, 2U);
	KUNIT_EXPECT_PTR_EQ(test, env->fed[1], y);
	KUNIT_EXPECT_EQ(test, env->fed_id[1], (unsigned int)C);
	KUNIT_EXPECT_FALSE(test, rs_defer_pending(&env->rs));

	t_put(test, env, C);
	KUNIT_EXPECT_EQ(test, env->feed_calls, 5U);	/* nothing waits: no feed */
	KUNIT_EXPECT_EQ(test, t_stat(env, RS_STAT_DEFERRED), 2ULL);
	KUNIT_EXPECT_EQ(test, env->errors, 0U);
}

/*
 * The last operation in flight ends while the feed holds the only deferred
 * bio (taken off the list, found no room, not back yet): it must still be
 * fed, or it waits for an operation that never comes. The feed puts the
 * holder itself at that moment, which is what another CPU may do.
 */
static void rs_op_feed_end_during_feed(struct kunit *test)
{
	enum { A, B };
	struct t_env *env = t_env_new(test, 4, 8, 4);
	struct bio *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	env->feed_units = 4;
	t_new(test, env, 4, A);
	env->put_in_feed = A;
	rs_defer_bio(&env->rs, x);
	t_settle(env);
	KUNIT_EXPECT_EQ(test, env->state[A], T_PUT);
	t_expect_usage(test, env, env->nr_fed ? 4 : 0, 4);
	KUNIT_EXPECT_EQ_MSG(test, env->nr_fed, 1U, "the deferred bio was not fed again");
	KUNIT_EXPECT_FALSE(test, rs_defer_pending(&env->rs));
	if (env->nr_fed)
		t_put(test, env, B);
}

static int rs_op_suite_init(struct kunit_suite *suite)
{
	return rs_op_module_init(sizeof(struct t_op));
}

static void rs_op_suite_exit(struct kunit_suite *suite)
{
	rs_op_module_exit();
}

static struct kunit_case rs_op_cases[] = {
	KUNIT_CASE(rs_op_sizes),
	KUNIT_CASE(rs_op_write_flags),
	KUNIT_CASE(rs_op_cache_cap),
	KUNIT_CASE(rs_op_cache_background),
	KUNIT_CASE(rs_op_lock_fifo),
	KUNIT_CASE(rs_op_lock_multi_stripe),
	KUNIT_CASE(rs_op_lock_progress),
	KUNIT_CASE(rs_op_pages_and_reserve),
	KUNIT_CASE(rs_op_page_pool),
	KUNIT_CASE(rs_op_join_grow),
	KUNIT_CASE(rs_op_join_reserve),
	KUNIT_CASE(rs_op_defer_feed),
	KUNIT_CASE(rs_op_feed_end_during_feed),
	{}
};

static struct kunit_suite rs_op_suite = {
	.name = "rainssd-op",
	.suite_init = rs_op_suite_init,
	.suite_exit = rs_op_suite_exit,
	.test_cases = rs_op_cases,
};

kunit_test_suites(&rs_op_suite);
