// SPDX-License-Identifier: GPL-2.0
/*
 * dm-rainssd background synchronisation (see rainssd-sync.h).
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include "rainssd.h"
#include "rainssd-bitmap.h"
#include "rainssd-fault.h"
#include "rainssd-meta.h"
#include "rainssd-raid5.h"
#include "rainssd-sync.h"

/* The checkpoint is committed this often while a sync runs. */
#define RS_SYNC_COMMIT_NS	(2ULL * NSEC_PER_SEC)
/* The rate is measured over windows of about this long. */
#define RS_SYNC_WINDOW_NS	(2ULL * NSEC_PER_SEC)

enum rs_sync_what {
	RS_SYNC_IDLE,
	RS_SYNC_REGION,		/* a region an unclean shutdown left dirty */
	RS_SYNC_RESYNC,		/* the initial resync */
	RS_SYNC_REBUILD,
	RS_SYNC_CHECK,		/* scrub: count parity mismatches */
	RS_SYNC_REPAIR,		/* scrub: and make that parity from the data */
};

struct rs_sync {
	struct rainssd *rs;
	struct delayed_work work;
	wait_queue_head_t idle_wait;

	spinlock_t lock;		/* protects running to scrub_pos */
	bool running;			/* resumed: steps may be issued */
	bool busy;			/* an operation is in flight */
	bool halted;			/* stopped by an error until the next resume */
	bool frozen;			/* held by the frozen message */
	bool stuck;			/* a dirty region cannot be resynced (said once) */
	enum rs_sync_what scrub;	/* RS_SYNC_CHECK, RS_SYNC_REPAIR, or IDLE */
	u64 scrub_pos;			/* next stripe the scrub reads */
	u64 mismatches;			/* sectors the last (or current) scrub found */

	/* The operation in flight (only the work item and its completion touch these). */
	enum rs_sync_what what;
	u64 pos;
	unsigned int nr;
	u64 region_first, region_end;	/* RS_SYNC_REGION: the region, and where it stops */
	u64 region_nr;			/* its stripes (region_end can stop before them) */
	u64 regions_done;		/* dirty regions resynced since the resume */

	struct rs_rate rate;
	u64 last_commit;		/* when the checkpoint was last committed, ns */
};

/* A dirty region needs the data of member @rb, which it does not hold. */
static void rs_sync_stuck(struct rs_sync *s, unsigned int rb, u64 cp)
{
	if (!s->stuck) {
		DMERR("dirty stripes %llu-%llu need member %u's data: rebuilt only up to %llu",
		      s->pos, s->region_end - 1, rb, cp);
		DMERR("member %u: its chunks there read as I/O errors; the rebuild is held", rb);
	}
	WRITE_ONCE(s->stuck, true);
}

/*
 * Dirty region [@first, @first + @nr) resynced (or made right by the
 * log's replay): its parity can be used again. Any context.
 */
static void rs_sync_region_done(struct rs_sync *s, u64 first, u64 nr)
{
	struct rainssd *rs = s->rs;

	rs_bitmap_synced(rs->bitmap, first, nr);
	s->regions_done++;
	/* Every region the log did not cover resynced: the flag goes. */
	if (!rs_bitmap_to_sync(rs->bitmap))
		rs_meta_set_uncovered(rs->meta, 0);
}

/*
 * The rebuild of member @rb has passed the last stripe (@cp): in service
 * once the superblocks say it got there (until then updates above the
 * checkpoint on disk wait, rs_meta_wait_rebuild_cp()). Put in service
 * first, a cut before the commit resumed the rebuild below the end and
 * replayed records over updates since (1.11.6). Returns false while the
 * end is not on disk. Sleeps.
 */
static bool rs_sync_end_rebuild(struct rs_sync *s, unsigned int rb, u64 cp)
{
	struct rainssd *rs = s->rs;

	rs_meta_request_commit(rs->meta);
	rs_meta_commit_wait(rs->meta);
	if (READ_ONCE(rs->rebuild_cp_durable) < rs->stripes)
		return false;
	rs_meta_set_rebuild_cp(rs->meta, cp, true);
	if (rs_meta_state(rs->meta, rb) == RS_MS_IN_SYNC)
		DMINFO("recover done");
	return true;
}

/*
 * What to do next, and from which stripe: first the regions an unclean
 * shutdown left dirty (below rs->log_cover only: from there on the degraded
 * log made them right), then the initial resync, then a rebuild. Making
 * parity from data needs every member it covers: a region below a
 * rebuilding member's checkpoint can wait for nothing (that member holds
 * no data there), so everything stops there, with a message, and its
 * chunks stay unreadable rather than rebuilt from that parity.
 */
static enum rs_sync_what rs_sync_next(struct rs_sync *s, u64 *pos)
{
	struct rainssd *rs = s->rs;
	unsigned int rb = READ_ONCE(rs->rebuild_member);
	enum rs_sync_what scrub;
	u64 mismatches;
	u64 resync = READ_ONCE(rs->resync_cp), cp = READ_ONCE(rs->rebuild_cp);
	u64 first, nr;

	if (READ_ONCE(rs->dead_mask) || s->frozen) {
		/*
		 * A rebuild whose last stretch ended as the engine was frozen
		 * or a member failed is over all the same. Up to 1.11.19 it
		 * stayed rebuilding for good, and with another member failed
		 * the next activation refused the volume as two members out
		 * (case 59).
		 */
		if (rb != RS_NO_MEMBER && cp >= rs->stripes)
			rs_sync_end_rebuild(s, rb, cp);
		return RS_SYNC_IDLE;
	}
	while (rs_bitmap_next_sync(rs->bitmap, &first, &nr)) {
		if (first != s->region_first || s->region_end <= first) {
			s->region_first = first;
			s->region_end = first + nr;
			s->region_nr = nr;
			s->pos = first;
		}
		s->region_end = min(s->region_end, max(READ_ONCE(rs->log_cover), first));
		if (s->pos < s->region_end) {
			if (rb != RS_NO_MEMBER && s->region_end > cp) {
				rs_sync_stuck(s, rb, cp);
				return RS_SYNC_IDLE;
			}
			*pos = s->pos;
			return RS_SYNC_REGION;
		}
		/* Nothing of it below the log's cover: the replay made it right. */
		rs_sync_region_done(s, first, nr);
	}
	if (resync < rs->stripes) {
		if (rb != RS_NO_MEMBER)
			return RS_SYNC_IDLE;
		*pos = resync;
		return RS_SYNC_RESYNC;
	}
	if (rb != RS_NO_MEMBER && cp < rs->stripes) {
		*pos = cp;
		return RS_SYNC_REBUILD;
	}
	if (rb != RS_NO_MEMBER && !rs_sync_end_rebuild(s, rb, cp))
		return RS_SYNC_IDLE;
	/*
	 * Under the lock: a check or repair message may start a scrub
	 * meanwhile (up to 1.11.15 one taken as a scrub ended was lost).
	 */
	spin_lock_irq(&s->lock);
	scrub = s->scrub;
	if (scrub != RS_SYNC_IDLE && s->scrub_pos < rs->stripes) {
		*pos = s->scrub_pos;
		spin_unlock_irq(&s->lock);
		return scrub;
	}
	mismatches = s->mismatches;
	s->scrub = RS_SYNC_IDLE;
	s->scrub_pos = 0;
	spin_unlock_irq(&s->lock);
	if (scrub != RS_SYNC_IDLE)
		DMINFO("%s done: %llu sector(s) whose parity disagreed%s",
		       scrub == RS_SYNC_CHECK ? "check" : "repair", mismatches,
		       scrub == RS_SYNC_REPAIR && mismatches ? ", rewritten" : "");
	return RS_SYNC_IDLE;
}

/*
 * Whether user I/O went on since the last call with @seen (its count
 * then), or waits in the deferred queue now (1.11.15: a load whose bios
 * all wait there maps none and may have no member I/O in flight).
 */
bool rs_user_busy(struct rainssd *rs, u64 *seen)
{
	u64 ios = 0;
	unsigned int m;
	int cpu;

	if (rs_defer_pending(rs))
		return true;

	for_each_possible_cpu(cpu) {
		struct rs_stats *st = per_cpu_ptr(rs->stats, cpu);

		ios += st->c[RS_STAT_READS] + st->c[RS_STAT_WRITES];
	}
	for (m = 0; m < rs->geom.n; m++)
		if (rs_load_queued(&rs->load, m))
			ios++;
	if (ios == *seen)
		return false;
	*seen = ios;
	return true;
}

/*
 * How long to wait before the next step of a background job, in jiffies:
 * not above @max KiB/s per member, and while user I/O goes on, a short
 * pause whenever the rate is above @min. @r holds its window.
 */
unsigned long rs_rate_delay(struct rainssd *rs, struct rs_rate *r, u64 min, u64 max)
{
	u64 now = ktime_get_ns(), elapsed = now - r->win_start;
	u64 kib = r->win_sectors / 2;
	unsigned long d;

	if (elapsed > RS_SYNC_WINDOW_NS) {
		r->win_start = now;
		r->win_sectors = 0;
		return 0;
	}
	d = rs_rate_wait(elapsed, kib, 0, max, false);
	if (d)
		return d;
	/* Whether user I/O came is asked only when the limit lets the job go. */
	return rs_rate_wait(elapsed, kib, min, 0, rs_user_busy(rs, &r->user_ios));
}

static unsigned long rs_sync_throttle(struct rs_sync *s)
{
	struct rainssd *rs = s->rs;

	return rs_rate_delay(rs, &s->rate, READ_ONCE(rs->min_recovery_rate),
			     READ_ONCE(rs->max_recovery_rate));
}

static void rs_sync_done(void *ctx, blk_status_t status, u64 mismatches);

static const char *rs_sync_name(enum rs_sync_what what)
{
	static const char * const names[] = {
		[RS_SYNC_IDLE] = "idle", [RS_SYNC_REGION] = "resync", [RS_SYNC_RESYNC] = "resync",
		[RS_SYNC_REBUILD] = "recover", [RS_SYNC_CHECK] = "check",
		[RS_SYNC_REPAIR] = "repair",
	};

	return names[what];
}

static enum rs_r5_sync_kind rs_sync_kind(enum rs_sync_what what)
{
	switch (what) {
	case RS_SYNC_REBUILD:
		return RS_R5_SYNC_REBUILD;
	case RS_SYNC_CHECK:
		return RS_R5_SYNC_CHECK;
	case RS_SYNC_REPAIR:
		return RS_R5_SYNC_REPAIR;
	default:
		return RS_R5_SYNC_RESYNC;
	}
}

static void rs_sync_work(struct work_struct *work)
{
	struct rs_sync *s = container_of(to_delayed_work(work), struct rs_sync, work);
	struct rainssd *rs = s->rs;
	unsigned int maxs = rs_r5_max_stripes(&rs->geom);
	enum rs_sync_what what;
	unsigned long delay;
	u64 pos;

	spin_lock_irq(&s->lock);
	if (!s->running || s->busy || s->halted) {
		spin_unlock_irq(&s->lock);
		return;
	}
	s->busy = true;
	spin_unlock_irq(&s->lock);

	what = rs_sync_next(s, &pos);
	if (what == RS_SYNC_IDLE)
		goto idle;
	delay = rs_sync_throttle(s);
	if (delay)
		goto later;
	s->what = what;
	s->pos = pos;
	s->nr = min_t(u64, maxs, (what == RS_SYNC_REGION ? s->region_end : rs->stripes) - pos);
	if (rs_r5_sync(rs, pos, s->nr, rs_sync_kind(what), rs_sync_done, s))
		return;
	delay = 1;	/* no operation object now (memory) */
later:
	spin_lock_irq(&s->lock);
	s->busy = false;
	if (s->running)
		queue_delayed_work(rs->wq, &s->work, delay);
	spin_unlock_irq(&s->lock);
	wake_up(&s->idle_wait);
	return;
idle:
	spin_lock_irq(&s->lock);
	s->busy = false;
	spin_unlock_irq(&s->lock);
	wake_up(&s->idle_wait);
}

/*
 * An operation ended, its stripes still held: move the checkpoint before
 * they are let go, so that a user write that gets them next sees the
 * rebuilt member in service there.
 */
static void rs_sync_done(void *ctx, blk_status_t status, u64 mismatches)
{
	struct rs_sync *s = ctx;
	struct rainssd *rs = s->rs;
	u64 cp = s->pos + s->nr, now = ktime_get_ns();
	bool end = cp >= rs->stripes;

	if (status) {
		DMERR_LIMIT("%s stopped at stripe %llu: a member could not be read or written",
			    rs_sync_name(s->what), s->pos);
		spin_lock_irq(&s->lock);
		s->halted = true;
		s->busy = false;
		spin_unlock_irq(&s->lock);
		rs_meta_request_commit(rs->meta);
		wake_up(&s->idle_wait);
		return;
	}
	if (s->what == RS_SYNC_REGION) {
		/*
		 * The region's last stretch: its bit goes now, its stripes
		 * still held. Up to 1.11.18 it went at the next look for work,
		 * which a member failing, frozen or a suspend meanwhile never
		 * made: a resynced region stayed dirty, its failed member's
		 * chunks read as I/O errors and a rebuild of it was held.
		 */
		s->pos = cp;
		if (cp >= s->region_end)
			rs_sync_region_done(s, s->region_first, s->region_nr);
		end = false;
	} else if (s->what == RS_SYNC_CHECK || s->what == RS_SYNC_REPAIR) {
		spin_lock_irq(&s->lock);
		if (s->scrub == s->what && s->scrub_pos == s->pos) {
			s->scrub_pos = cp;
			s->mismatches += mismatches;
		}
		spin_unlock_irq(&s->lock);
		end = false;
	} else if (s->what == RS_SYNC_REBUILD) {
		/* Done once that is committed: rs_sync_next(). */
		rs_meta_set_rebuild_cp(rs->meta, cp, false);
		end = false;
	} else {
		rs_meta_set_resync_cp(rs->meta, cp);
	}
	s->rate.win_sectors += (u64)s->nr * rs->geom.chunk;
	/*
	 * Only a rebuild's and a resync's checkpoints are in the superblocks: a
	 * scrub or a dirty region's resync has nothing to commit (up to 1.11.10
	 * they committed every 2 s too, and a power cut inside such a commit
	 * left the members it had not reached a generation behind: stale).
	 */
	if (end || ((s->what == RS_SYNC_REBUILD || s->what == RS_SYNC_RESYNC) &&
		    now - s->last_commit > RS_SYNC_COMMIT_NS && !rs_fault_hold_sync_commits())) {
		s->last_commit = now;
		rs_meta_request_commit(rs->meta);
		if (end)
			DMINFO("%s done", rs_sync_name(s->what));
	}
	spin_lock_irq(&s->lock);
	s->busy = false;
	if (s->running)
		queue_delayed_work(rs->wq, &s->work, 0);
	spin_unlock_irq(&s->lock);
	wake_up(&s->idle_wait);
}

/*
 * Start, or go on with, what the state needs. @resume: a resume, which also
 * lifts an error's halt; not a suspend undone (presuspend_undo), which
 * leaves it (up to 1.11.22 it lifted it too: an interrupted suspend retried
 * the stretch that had failed, and counted its read errors again; case 67).
 */
void rs_sync_start(struct rs_sync *s, bool resume)
{
	spin_lock_irq(&s->lock);
	s->running = true;
	if (resume) {
		s->halted = false;
		s->stuck = false;
	}
	s->rate.win_start = ktime_get_ns();
	s->rate.win_sectors = 0;
	s->last_commit = s->rate.win_start;
	queue_delayed_work(s->rs->wq, &s->work, 0);
	spin_unlock_irq(&s->lock);
}

/* Something changed (a member failed): look again. */
void rs_sync_kick(struct rs_sync *s)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	if (s->running)
		mod_delayed_work(s->rs->wq, &s->work, 0);
	spin_unlock_irqrestore(&s->lock, flags);
}

static bool rs_sync_quiet(struct rs_sync *s)
{
	bool quiet;

	spin_lock_irq(&s->lock);
	quiet = !s->busy;
	spin_unlock_irq(&s->lock);
	return quiet;
}

/* Stop issuing and wait for the operation in flight (suspend). Sleeps. */
void rs_sync_stop(struct rs_sync *s)
{
	spin_lock_irq(&s->lock);
	s->running = false;
	spin_unlock_irq(&s->lock);
	cancel_delayed_work_sync(&s->work);
	wait_event(s->idle_wait, rs_sync_quiet(s));
}

/*
 * dm-raid's sync_action and sync_ratio (done/total sectors per member), and
 * the last scrub's mismatch count. Never sleeps.
 */
const char *rs_sync_status(struct rs_sync *s, u64 *done, u64 *total, u64 *mismatches)
{
	struct rainssd *rs = s->rs;
	u64 chunk = rs->geom.chunk, to_sync, scrub_pos;
	enum rs_sync_what scrub;
	bool halted, frozen;

	spin_lock_irq(&s->lock);
	halted = s->halted;
	frozen = s->frozen;
	scrub = s->scrub;
	scrub_pos = s->scrub_pos;
	*mismatches = s->mismatches;
	spin_unlock_irq(&s->lock);
	*total = rs->stripes * chunk;
	*done = *total;
	halted |= frozen;
	to_sync = rs_bitmap_to_sync(rs->bitmap);
	if (to_sync) {
		/*
		 * Dirty regions: how many of those the shutdown left are done;
		 * held while a member is out or one that cannot be resynced
		 * stopped everything (see rs_sync_next()).
		 */
		*total = (s->regions_done + to_sync) * chunk;
		*done = s->regions_done * chunk;
		halted |= READ_ONCE(s->stuck) || READ_ONCE(rs->dead_mask);
		return halted ? "frozen" : "resync";
	}
	if (READ_ONCE(rs->resync_cp) < rs->stripes) {
		*done = READ_ONCE(rs->resync_cp) * chunk;
		if (halted)
			return "frozen";
		return READ_ONCE(rs->rebuild_member) == RS_NO_MEMBER && !READ_ONCE(rs->dead_mask) ?
		       "resync" : "idle";
	}
	if (READ_ONCE(rs->rebuild_member) != RS_NO_MEMBER) {
		*done = READ_ONCE(rs->rebuild_cp) * chunk;
		return halted || READ_ONCE(rs->dead_mask) ? "frozen" : "recover";
	}
	if (scrub != RS_SYNC_IDLE) {
		/* Held while a member is out, as a rebuild is (up to 1.11.19: "check"). */
		*done = scrub_pos * chunk;
		return halted || READ_ONCE(rs->dead_mask) ? "frozen" : rs_sync_name(scrub);
	}
	return frozen ? "frozen" : "idle";
}

/*
 * The sync_action messages (dm-raid's words): check, repair (a scrub from
 * the start, or on from where frozen left the same one), idle (stop a
 * scrub, thaw), frozen (hold every resync, rebuild and scrub). Process
 * context; never sleeps. -EBUSY while the parity cannot be checked.
 */
int rs_sync_message(struct rs_sync *s, const char *action, char **error)
{
	struct rainssd *rs = s->rs;
	enum rs_sync_what what;
	int r = 0;

	spin_lock_irq(&s->lock);
	if (!strcasecmp(action, "frozen")) {
		s->frozen = true;
	} else if (!strcasecmp(action, "idle")) {
		s->frozen = false;
		s->scrub = RS_SYNC_IDLE;
		s->scrub_pos = 0;
	} else {
		what = !strcasecmp(action, "check") ? RS_SYNC_CHECK : RS_SYNC_REPAIR;
		if (READ_ONCE(rs->dead_mask) || READ_ONCE(rs->rebuild_member) != RS_NO_MEMBER ||
		    READ_ONCE(rs->resync_cp) < rs->stripes || rs_bitmap_to_sync(rs->bitmap)) {
			*error = "check and repair need every member in sync and no resync pending";
			r = -EBUSY;
		} else if (!(s->frozen && s->scrub == what)) {
			s->scrub = what;
			s->scrub_pos = 0;
			s->mismatches = 0;
		}
		if (!r)
			s->frozen = false;
	}
	if (s->running && !r)
		mod_delayed_work(rs->wq, &s->work, 0);
	spin_unlock_irq(&s->lock);
	return r;
}

int rs_sync_create(struct rainssd *rs, struct rs_sync **out)
{
	struct rs_sync *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return -ENOMEM;
	s->rs = rs;
	spin_lock_init(&s->lock);
	init_waitqueue_head(&s->idle_wait);
	INIT_DELAYED_WORK(&s->work, rs_sync_work);
	*out = s;
	return 0;
}

void rs_sync_destroy(struct rs_sync *s)
{
	if (!s)
		return;
	rs_sync_stop(s);
	kfree(s);
}
