// SPDX-License-Identifier: GPL-2.0
/*
 * rainssd-logreplay: list and replay dm-log-writes logs.
 *
 * The format (drivers/md/dm-log-writes.c, little-endian): a super block at
 * byte 0 (magic 0x6a736677736872, version 1, nr_entries, sectorsize), then
 * from byte sectorsize on, nr_entries entries, each a header in a sector of
 * its own (sector, nr_sectors, flags, data_len; for a mark the name follows
 * the header in that sector) followed, for a write, by its nr_sectors
 * sectors of data. Sectors and sizes are in units of sectorsize (the logical
 * block size of the logged device). A discard has no data in the log.
 *
 * dm-log-writes logs a write only once a flush that followed it completed
 * (or at once for FUA), so replaying up to an entry gives the device as a
 * power cut at that point could have left it with its volatile cache lost.
 *
 * Exit status: 0 success, 1 the log is bad or the mark/entry is not in it,
 * 2 usage or I/O error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MAGIC 0x6a736677736872ULL
#define LOG_VERSION 1ULL
#define F_FLUSH 1ULL
#define F_FUA 2ULL
#define F_DISCARD 4ULL
#define F_MARK 8ULL
#define F_METADATA 16ULL
#define WIN (1u << 20)		/* read window, bytes */
#define ALIGN 4096u

static const char *prog = "rainssd-logreplay";

struct lsuper {
	uint64_t magic, version, nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct lentry {
	uint64_t sector, nr_sectors, flags, data_len;
};

/* A sequential reader over the log with an aligned window (O_DIRECT). */
struct reader {
	const char *path;
	int fd, direct;
	uint64_t size;
	unsigned char *win;
	uint64_t win_off, win_len;
};

static int64_t dev_size(int fd)
{
	struct stat st;
	uint64_t bytes;

	if (fstat(fd, &st) < 0)
		return -1;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			return -1;
		return (int64_t)bytes;
	}
	if (S_ISREG(st.st_mode))
		return st.st_size;
	errno = ENODEV;
	return -1;
}

static int open_direct(const char *path, int flags, int *direct)
{
	int fd = open(path, flags | O_DIRECT | O_CLOEXEC);

	*direct = 1;
	if (fd < 0 && errno == EINVAL) {
		fd = open(path, flags | O_CLOEXEC);
		*direct = 0;
	}
	return fd;
}

static int reader_open(struct reader *r, const char *path)
{
	int64_t sz;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->fd = open_direct(path, O_RDONLY, &r->direct);
	if (r->fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	sz = dev_size(r->fd);
	if (sz < 0) {
		fprintf(stderr, "%s: %s: size: %s\n", prog, path, strerror(errno));
		return -1;
	}
	r->size = (uint64_t)sz;
	/* Buffered: what the page cache holds may predate the log (udev's probe). */
	if (!r->direct)
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_DONTNEED);
	if (posix_memalign((void **)&r->win, ALIGN, WIN)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	return 0;
}

/* Copy @len bytes at @off into @dst. 0, or -1 (message printed). */
static int reader_get(struct reader *r, uint64_t off, void *dst, uint64_t len)
{
	unsigned char *d = dst;

	if (off + len > r->size || off + len < off) {
		fprintf(stderr, "%s: %s: the log runs past its end (byte %" PRIu64 ")\n",
			prog, r->path, off + len);
		return -1;
	}
	while (len) {
		uint64_t n;

		if (off < r->win_off || off >= r->win_off + r->win_len) {
			uint64_t start = off / ALIGN * ALIGN, want = WIN, got = 0;

			if (start + want > r->size)
				want = (r->size - start + ALIGN - 1) / ALIGN * ALIGN;
			while (got < want) {
				ssize_t k = pread(r->fd, r->win + got, want - got, (off_t)(start + got));

				if (k < 0 && errno == EINTR)
					continue;
				if (k < 0) {
					fprintf(stderr, "%s: %s: read at byte %" PRIu64 ": %s\n", prog,
						r->path, start + got, strerror(errno));
					return -1;
				}
				if (k == 0)
					break;
				got += (uint64_t)k;
			}
			r->win_off = start;
			r->win_len = got;
			if (off >= start + got) {
				fprintf(stderr, "%s: %s: short read at byte %" PRIu64 "\n", prog,
					r->path, off);
				return -1;
			}
		}
		n = r->win_off + r->win_len - off;
		if (n > len)
			n = len;
		memcpy(d, r->win + (off - r->win_off), n);
		d += n;
		off += n;
		len -= n;
	}
	return 0;
}

struct log {
	struct reader r;
	struct lsuper sb;
	uint64_t ss;
};

static int log_open(struct log *l, const char *path)
{
	if (reader_open(&l->r, path))
		return 2;
	if (l->r.size < 512 || reader_get(&l->r, 0, &l->sb, sizeof(l->sb)))
		return 2;
	if (l->sb.magic != LOG_MAGIC) {
		fprintf(stderr, "%s: %s: not a dm-log-writes log (magic %#" PRIx64 ")\n", prog,
			path, l->sb.magic);
		return 1;
	}
	if (l->sb.version != LOG_VERSION) {
		fprintf(stderr, "%s: %s: log version %" PRIu64 ", only %llu is known\n", prog, path,
			l->sb.version, LOG_VERSION);
		return 1;
	}
	l->ss = l->sb.sectorsize;
	if (l->ss < 512 || l->ss > 65536 || (l->ss & (l->ss - 1))) {
		fprintf(stderr, "%s: %s: bad sector size %" PRIu64 "\n", prog, path, l->ss);
		return 1;
	}
	return 0;
}

/*
 * Walk the entries in log order. @fn gets each entry, its index, its log
 * byte offset (of the header) and the mark name ("" unless a mark); returns
 * 1 to stop, 0 to go on, <0 on error.
 */
typedef int (*entry_fn)(struct log *l, uint64_t idx, const struct lentry *e, uint64_t off,
			const char *mark, void *arg);

static int log_walk(struct log *l, entry_fn fn, void *arg)
{
	uint64_t off = l->ss, idx;
	unsigned char *hdr = malloc(l->ss);
	char mark[65536];
	int rc = 0;

	if (!hdr)
		return 2;
	for (idx = 0; idx < l->sb.nr_entries; idx++) {
		struct lentry e;

		if (reader_get(&l->r, off, hdr, l->ss)) {
			rc = 1;
			break;
		}
		memcpy(&e, hdr, sizeof(e));
		mark[0] = 0;
		if (e.flags & F_MARK) {
			uint64_t n = e.data_len;

			if (n > l->ss - sizeof(e)) {
				fprintf(stderr, "%s: entry %" PRIu64 ": mark of %" PRIu64
					" bytes does not fit its sector\n", prog, idx, n);
				rc = 1;
				break;
			}
			memcpy(mark, hdr + sizeof(e), n);
			mark[n] = 0;
		}
		if (e.nr_sectors > (l->r.size / l->ss)) {
			fprintf(stderr, "%s: entry %" PRIu64 ": %" PRIu64 " sectors: a corrupt entry\n",
				prog, idx, e.nr_sectors);
			rc = 1;
			break;
		}
		int k = fn(l, idx, &e, off, mark, arg);

		if (k < 0) {
			rc = -k;
			break;
		}
		if (k > 0)
			break;
		off += l->ss;
		if (!(e.flags & F_DISCARD) && !(e.flags & F_MARK))
			off += e.nr_sectors * l->ss;
	}
	free(hdr);
	return rc;
}

/* ---- list ---- */

struct list_arg {
	int json, nmarks;
	uint64_t writes, flushes, fua, discards, marks, metadata, sectors;
};

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int list_fn(struct log *l, uint64_t idx, const struct lentry *e, uint64_t off,
		   const char *mark, void *arg)
{
	struct list_arg *a = arg;

	(void)l;
	(void)off;
	if (e->flags & F_MARK) {
		a->marks++;
		if (a->json) {
			printf("%s{\"entry\": %" PRIu64 ", \"name\": ", a->nmarks++ ? ", " : "", idx);
			json_str(mark);
			putchar('}');
		} else {
			printf("mark %" PRIu64 " %s\n", idx, mark);
		}
		return 0;
	}
	if (e->flags & F_DISCARD)
		a->discards++;
	else if (e->nr_sectors)
		a->writes++, a->sectors += e->nr_sectors;
	if (e->flags & F_FLUSH)
		a->flushes++;
	if (e->flags & F_FUA)
		a->fua++;
	if (e->flags & F_METADATA)
		a->metadata++;
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct list_arg a = { 0 };
	struct log l;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': a.json = 1; break;
		case 'h':
			printf("Usage: %s list [--json] LOGDEV\n"
			       "Print the log's entries count and sector size, counts of writes,\n"
			       "flushes, FUA writes, discards and marks, and every mark as\n"
			       "\"mark <entry index> <name>\".\n", prog);
			return 0;
		default:
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s list: one log device or file\n", prog);
		return 2;
	}
	rc = log_open(&l, argv[optind]);
	if (rc)
		return rc;
	if (a.json)
		printf("{\"entries\": %" PRIu64 ", \"sectorsize\": %" PRIu64 ", \"marks\": [",
		       l.sb.nr_entries, l.ss);
	rc = log_walk(&l, list_fn, &a);
	if (a.json)
		printf("], \"writes\": %" PRIu64 ", \"written_sectors\": %" PRIu64
		       ", \"flushes\": %" PRIu64 ", \"fua\": %" PRIu64 ", \"discards\": %" PRIu64
		       ", \"metadata\": %" PRIu64 ", \"ok\": %s}\n", a.writes, a.sectors, a.flushes,
		       a.fua, a.discards, a.metadata, rc ? "false" : "true");
	else
		printf("entries %" PRIu64 " sectorsize %" PRIu64 ": %" PRIu64 " writes (%" PRIu64
		       " sectors), %" PRIu64 " flushes, %" PRIu64 " fua, %" PRIu64 " discards, %"
		       PRIu64 " marks\n", l.sb.nr_entries, l.ss, a.writes, a.sectors, a.flushes,
		       a.fua, a.discards, a.marks);
	return rc;
}

/* ---- replay ---- */

struct replay_arg {
	const char *mark;	/* stop after this mark, or */
	uint64_t to_entry;	/* after this entry */
	int found, dfd, direct;
	uint64_t dsize, applied, zeroed;
	unsigned char *buf;
	size_t buflen;
	const char *dest;
};

static int dest_write(struct replay_arg *a, const void *p, uint64_t len, uint64_t off)
{
	const unsigned char *s = p;

	while (len) {
		ssize_t k = pwrite(a->dfd, s, len, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && a->direct) {
			/* O_DIRECT taken at open, refused for this size: buffered. */
			int fd = open(a->dest, O_WRONLY | O_CLOEXEC);

			if (fd < 0)
				return -1;
			close(a->dfd);
			a->dfd = fd;
			a->direct = 0;
			continue;
		}
		if (k <= 0) {
			fprintf(stderr, "%s: %s: write at byte %" PRIu64 ": %s\n", prog, a->dest, off,
				k < 0 ? strerror(errno) : "short write");
			return -1;
		}
		s += k;
		off += (uint64_t)k;
		len -= (uint64_t)k;
	}
	return 0;
}

static int replay_fn(struct log *l, uint64_t idx, const struct lentry *e, uint64_t off,
		     const char *mark, void *arg)
{
	struct replay_arg *a = arg;
	uint64_t len = e->nr_sectors * l->ss, pos = e->sector * l->ss, done;

	if (e->flags & F_MARK) {
		if (a->mark && !strcmp(mark, a->mark)) {
			a->found = 1;
			return 1;
		}
	} else if (len) {
		if (pos + len > a->dsize || pos + len < pos) {
			fprintf(stderr, "%s: entry %" PRIu64 " writes sectors %" PRIu64 "-%" PRIu64
				", beyond the end of %s\n", prog, idx, e->sector,
				e->sector + e->nr_sectors - 1, a->dest);
			return -2;
		}
		for (done = 0; done < len;) {
			uint64_t n = len - done < a->buflen ? len - done : a->buflen;

			if (e->flags & F_DISCARD)
				memset(a->buf, 0, n);
			else if (reader_get(&l->r, off + l->ss + done, a->buf, n))
				return -1;
			if (dest_write(a, a->buf, n, pos + done))
				return -2;
			done += n;
		}
		if (e->flags & F_DISCARD)
			a->zeroed++;
		else
			a->applied++;
	}
	if (!a->mark && idx == a->to_entry) {
		a->found = 1;
		return 1;
	}
	return 0;
}

static void usage_replay(FILE *f)
{
	fprintf(f,
"Usage: %s replay LOGDEV DEST (--to-mark NAME | --to-entry K)\n"
"Apply the log's writes to DEST in log order up to and including the first\n"
"mark named NAME, or entry K (0-based, as list numbers them). Discards write\n"
"zeros. DEST should start as the logged device started (zeroed, for a log\n"
"made from the start).\n"
"\n"
"Exit status: 0 replayed, 1 bad log or the mark/entry is not in it (DEST then\n"
"holds the whole log), 2 usage or I/O error.\n", prog);
}

static int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to-mark", required_argument, NULL, 'm' },
		{ "to-entry", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct replay_arg a = { .buflen = WIN };
	int opt, rc, have_entry = 0;
	struct log l;
	int64_t sz;
	char *end;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			a.mark = optarg;
			break;
		case 'e':
			errno = 0;
			a.to_entry = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-') {
				fprintf(stderr, "%s replay: bad entry %s\n", prog, optarg);
				return 2;
			}
			have_entry = 1;
			break;
		case 'h':
			usage_replay(stdout);
			return 0;
		default:
			usage_replay(stderr);
			return 2;
		}
	}
	if (argc - optind != 2 || !!a.mark == have_entry) {
		fprintf(stderr, "%s replay: a log, a destination and one of --to-mark, --to-entry\n",
			prog);
		usage_replay(stderr);
		return 2;
	}
	rc = log_open(&l, argv[optind]);
	if (rc)
		return rc;
	a.dest = argv[optind + 1];
	a.dfd = open_direct(a.dest, O_WRONLY, &a.direct);
	if (a.dfd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, a.dest, strerror(errno));
		return 2;
	}
	sz = dev_size(a.dfd);
	if (sz < 0) {
		fprintf(stderr, "%s: %s: size: %s\n", prog, a.dest, strerror(errno));
		return 2;
	}
	a.dsize = (uint64_t)sz;
	if (posix_memalign((void **)&a.buf, ALIGN, a.buflen)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 2;
	}
	rc = log_walk(&l, replay_fn, &a);
	if (fsync(a.dfd) && errno != EINVAL) {
		fprintf(stderr, "%s: %s: fsync: %s\n", prog, a.dest, strerror(errno));
		return 2;
	}
	if (rc)
		return rc;
	if (!a.found) {
		if (a.mark)
			fprintf(stderr, "%s: no mark \"%s\" in %s\n", prog, a.mark, argv[optind]);
		else
			fprintf(stderr, "%s: %s has %" PRIu64 " entries, no entry %" PRIu64 "\n", prog,
				argv[optind], l.sb.nr_entries, a.to_entry);
		return 1;
	}
	printf("replayed %" PRIu64 " writes and %" PRIu64 " discards onto %s\n", a.applied,
	       a.zeroed, a.dest);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s list|replay [options]   (%s COMMAND --help for each)\n"
"Read dm-log-writes logs:\n"
"  list LOGDEV                                  entries, counts and marks\n"
"  replay LOGDEV DEST --to-mark NAME|--to-entry K\n"
"                                               apply the writes up to there\n"
"\n"
"Exit status: 0 success, 1 bad log or mark/entry not found, 2 usage or I/O\n"
"error.\n", prog, prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay"))
		return cmd_replay(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command %s\n", prog, argv[1]);
	usage(stderr);
	return 2;
}
