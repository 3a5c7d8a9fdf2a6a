// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd offline migration (see rainssd-migrate.h).
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-migrate.h"
#include "rainssd-raid5.h"
#include "rainssd-sync.h"
#include "rainssd-tiermap.h"

/* With nothing to do, look again this often (the tier may have filled). */
#define RS_MIG_IDLE_MS		1000

struct rs_migrate {
	struct rainssd *rs;
	struct delayed_work work;
	wait_queue_head_t idle_wait;

	spinlock_t lock;		/* protects running to flushing */
	bool running;			/* resumed: steps may be issued */
	bool busy;			/* an operation is in flight */
	bool active;			/* between the watermarks: going on */
	bool flushing;			/* flush_tier: until the tier is empty */

	struct rs_rate rate;
	u64 stripe;			/* the operation in flight's */
	u64 moved;			/* stripes moved back since the resume */
	u64 failed;			/* stripes that could not be moved */
};

/* Whether a stripe's rows outside the tier can be read from their homes. */
static bool rs_mig_possible(struct rainssd *rs)
{
	/* The rebuild before the failed members: see rs_member_holds(). */
	if (READ_ONCE(rs->rebuild_member) != RS_NO_MEMBER)
		return false;
	smp_rmb();	/* pairs with smp_mb__after_atomic() in rs_meta_publish() */
	return !READ_ONCE(rs->dead_mask) && READ_ONCE(rs->resync_cp) >= rs->stripes &&
	       !rs_bitmap_to_sync(rs->bitmap);
}

static void rs_mig_done(void *ctx, blk_status_t status, u64 unused);

static void rs_mig_work(struct work_struct *work)
{
	struct rs_migrate *mg = container_of(to_delayed_work(work), struct rs_migrate, work);
	struct rainssd *rs = mg->rs;
	struct rs_tier *tr = rs->tier;
	unsigned long delay = msecs_to_jiffies(RS_MIG_IDLE_MS);
	bool go;
	u64 stripe, rate;

	spin_lock_irq(&mg->lock);
	if (!mg->running || mg->busy) {
		spin_unlock_irq(&mg->lock);
		return;
	}
	mg->busy = true;
	if (mg->flushing && !rs_tier_used(tr)) {
		mg->flushing = false;
		DMINFO("flush_tier done: the tier is empty");
	}
	mg->active = rs_tier_should_migrate(rs_tier_used(tr), rs_tier_layout_of(tr)->records,
					    mg->flushing ? 0 : READ_ONCE(rs->tier_low_pct),
					    mg->flushing ? 0 : READ_ONCE(rs->tier_high_pct),
					    mg->active);
	go = mg->active && rs_mig_possible(rs) && rs_tier_mode(tr) == RS_TIER_RW;
	spin_unlock_irq(&mg->lock);
	if (!go)
		goto later;
	rate = READ_ONCE(rs->migration_rate);
	delay = rs_rate_delay(rs, &mg->rate, rs_mig_min_rate(rate), rate);
	if (delay)
		goto later;
	if (!rs_tier_pick_cold(tr, &stripe)) {
		delay = 1;	/* only stripes given up and not yet free: after a commit */
		goto later;
	}
	mg->stripe = stripe;
	if (rs_r5_migrate(rs, stripe, rs_mig_done, mg))
		return;
	delay = 1;	/* no operation object now (memory) */
later:
	spin_lock_irq(&mg->lock);
	mg->busy = false;
	if (mg->running)
		queue_delayed_work(rs->wq, &mg->work, delay);
	spin_unlock_irq(&mg->lock);
	wake_up(&mg->idle_wait);
}

static void rs_mig_done(void *ctx, blk_status_t status, u64 moved)
{
	struct rs_migrate *mg = ctx;
	struct rainssd *rs = mg->rs;

	spin_lock_irq(&mg->lock);
	if (status) {
		mg->failed++;
		DMERR_LIMIT("offline migration: stripe %llu could not be moved back", mg->stripe);
	} else {
		mg->moved++;
	}
	/* Whole chunks of every member, at most: what the rate counts. */
	mg->rate.win_sectors += moved;
	mg->busy = false;
	if (mg->running)
		queue_delayed_work(rs->wq, &mg->work,
				   status ? msecs_to_jiffies(RS_MIG_IDLE_MS) : 0);
	spin_unlock_irq(&mg->lock);
	wake_up(&mg->idle_wait);
}

void rs_migrate_start(struct rs_migrate *mg)
{
	if (!mg)
		return;
	spin_lock_irq(&mg->lock);
	mg->running = true;
	mg->rate.win_start = ktime_get_ns();
	mg->rate.win_sectors = 0;
	queue_delayed_work(mg->rs->wq, &mg->work, 0);
	spin_unlock_irq(&mg->lock);
}

/* Something changed (a tunable, the tier filled): look again. */
void rs_migrate_kick(struct rs_migrate *mg)
{
	unsigned long flags;

	if (!mg)
		return;
	spin_lock_irqsave(&mg->lock, flags);
	if (mg->running)
		mod_delayed_work(mg->rs->wq, &mg->work, 0);
	spin_unlock_irqrestore(&mg->lock, flags);
}

static bool rs_mig_quiet(struct rs_migrate *mg)
{
	bool quiet;

	spin_lock_irq(&mg->lock);
	quiet = !mg->busy;
	spin_unlock_irq(&mg->lock);
	return quiet;
}

/* Stop issuing and wait for the operation in flight (suspend). Sleeps. */
void rs_migrate_stop(struct rs_migrate *mg)
{
	if (!mg)
		return;
	spin_lock_irq(&mg->lock);
	mg->running = false;
	spin_unlock_irq(&mg->lock);
	cancel_delayed_work_sync(&mg->work);
	wait_event(mg->idle_wait, rs_mig_quiet(mg));
}

/*
 * What it does (idle, migrate, flush, or frozen when it cannot run now),
 * the stripes it moved since the resume and those still in the tier.
 * Never sleeps.
 */
const char *rs_migrate_status(struct rs_migrate *mg, u64 *moved, u64 *left)
{
	struct rainssd *rs;
	bool active, flushing;

	if (!mg) {
		*moved = 0;
		*left = 0;
		return "idle";
	}
	rs = mg->rs;
	spin_lock_irq(&mg->lock);
	active = mg->active;
	flushing = mg->flushing;
	*moved = mg->moved;
	spin_unlock_irq(&mg->lock);
	*left = rs_tier_used(rs->tier);
	if (!active && !flushing)
		return "idle";
	if (!rs_mig_possible(rs) || rs_tier_mode(rs->tier) != RS_TIER_RW)
		return "frozen";
	return flushing ? "flush" : "migrate";
}

/*
 * flush_tier: move every stripe back (idle: stop; the watermarks apply
 * again). Never sleeps.
 */
int rs_migrate_message(struct rs_migrate *mg, unsigned int argc, char **argv, char **error)
{
	bool stop = argc == 2 && !strcasecmp(argv[1], "idle");

	if (!mg) {
		*error = "flush_tier: this volume has no tier";
		return -EINVAL;
	}
	if (argc > 2 || (argc == 2 && !stop)) {
		*error = "Usage: flush_tier [idle]";
		return -EINVAL;
	}
	/*
	 * Up to 1.11.22 taken, and nothing moved: the status said frozen for
	 * good. (A lost commit leaves two members out, so the check below
	 * refuses it too, with a reason that does not say why.)
	 */
	if (!stop && rs_tier_mode(mg->rs->tier) == RS_TIER_FAIL) {
		*error = "the tier's table cannot be committed (metadata_mode fail)";
		return -EBUSY;
	}
	if (!stop && !rs_mig_possible(mg->rs)) {
		*error = "flush_tier needs every member in sync and no resync pending";
		return -EBUSY;
	}
	spin_lock_irq(&mg->lock);
	mg->flushing = !stop;
	if (stop)
		mg->active = false;
	if (mg->running)
		mod_delayed_work(mg->rs->wq, &mg->work, 0);
	spin_unlock_irq(&mg->lock);
	return 0;
}

int rs_migrate_create(struct rainssd *rs, struct rs_migrate **out)
{
	struct rs_migrate *mg;

	*out = NULL;
	if (!rs->tier)
		return 0;
	mg = kzalloc(sizeof(*mg), GFP_KERNEL);
	if (!mg)
		return -ENOMEM;
	mg->rs = rs;
	spin_lock_init(&mg->lock);
	init_waitqueue_head(&mg->idle_wait);
	INIT_DELAYED_WORK(&mg->work, rs_mig_work);
	*out = mg;
	return 0;
}

void rs_migrate_destroy(struct rs_migrate *mg)
{
	if (!mg)
		return;
	rs_migrate_stop(mg);
	kfree(mg);
}
