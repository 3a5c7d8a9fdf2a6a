// SPDX-License-Identifier: GPL-2.0
/*
 * rainssd-crashwriter: write self-describing blocks with fdatasync, log what
 * was issued and what was acknowledged, and after a crash tell which blocks
 * came back wrong.
 *
 * Every block written carries a header (magic, lba, job, generation, block
 * size, crc32 of the whole block) and a payload derived from (lba,
 * generation), so a block read back can be checked on its own, and the logs
 * say which generations may legitimately be there:
 *
 *   write   J jobs (threads) rewrite random blocks among N. Job j owns the
 *           blocks lba = j (mod J), so each block has one writer and its
 *           generations grow with time; a generation is (job << 48 | count),
 *           unique across jobs. Before each pwrite the job appends "lba gen"
 *           to the issued log, then it writes, then fdatasync()s the device,
 *           and only then appends "lba gen" to the acked log.
 *   verify  reads every block and sorts it: ok, never written (all zero and
 *           nothing acked), LOST (an acked write is gone: zero, or an older
 *           generation), TORN (its own header, but the rest does not match),
 *           MADE-UP (bytes no write put there: no header, another lba's
 *           block, a generation never issued for it), UNREADABLE (I/O error).
 *   block   print one block as write makes it (for tests).
 *
 * Exit status: write 0 ran to its limit, 1 a job stopped on an I/O error
 * (expected when the device is cut away), 2 usage or setup error; verify 0
 * every block fine, 1 a bad block, 2 usage or I/O error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CW_MAGIC 0x3142574843535352ULL	/* "RSSCHWB1" read as le64 */
#define CW_HDR_SIZE 40
#define CW_JOB_SHIFT 48
#define MAX_JOBS 1024
#define BATCH_BLOCKS 256

struct cw_hdr {
	uint64_t magic;
	uint64_t lba;
	uint64_t gen;
	uint32_t job;
	uint32_t bs;
	uint32_t crc;		/* crc32 of the whole block with this field 0 */
	uint32_t reserved;
};

_Static_assert(sizeof(struct cw_hdr) == CW_HDR_SIZE, "header size");

static const char *prog = "rainssd-crashwriter";

/* ---- checksum, payload ---- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? 0xedb88320U ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_buf(const unsigned char *p, size_t len)
{
	uint32_t c = 0xffffffffU;

	while (len--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffU;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t payload_seed(uint64_t lba, uint64_t gen)
{
	uint64_t s = lba * 0x9e3779b97f4a7c15ULL ^ gen;

	return splitmix64(&s);
}

/* Fill @buf (bs bytes) with the block for (lba, gen). */
static void make_block(unsigned char *buf, size_t bs, uint64_t lba, uint64_t gen)
{
	struct cw_hdr h = {
		.magic = CW_MAGIC, .lba = lba, .gen = gen,
		.job = (uint32_t)(gen >> CW_JOB_SHIFT), .bs = (uint32_t)bs,
	};
	uint64_t s = payload_seed(lba, gen), v;
	size_t off;

	for (off = CW_HDR_SIZE; off < bs; off += 8) {
		v = splitmix64(&s);
		memcpy(buf + off, &v, 8);
	}
	memcpy(buf, &h, sizeof(h));
	h.crc = crc32_buf(buf, bs);
	memcpy(buf, &h, sizeof(h));
}

/* ---- small helpers ---- */

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Open for I/O, O_DIRECT where the file system takes it. */
static int open_dev(const char *path, int flags, int *direct)
{
	int fd = open(path, flags | O_DIRECT);

	*direct = 1;
	if (fd < 0 && errno == EINVAL) {
		fd = open(path, flags);
		*direct = 0;
	}
	return fd;
}

/* Size in bytes of a block device or regular file, or -1. */
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

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t r = write(fd, s, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		s += r;
		len -= r;
	}
	return 0;
}

/* ---- write ---- */

struct wctx {
	int fd, issued, acked, quiet, sequential;
	uint64_t blocks, offset_blocks, bs, count, seed;
	unsigned int jobs;
	double deadline;	/* 0: none */
};

struct job {
	struct wctx *c;
	unsigned int id;
	pthread_t thread;
	uint64_t acked, issued;
	int err;		/* errno of the failure that stopped it */
	const char *what;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct wctx *c = j->c;
	uint64_t owned = (c->blocks - j->id + c->jobs - 1) / c->jobs;
	uint64_t rng = c->seed ^ ((uint64_t)(j->id + 1) * 0xd1b54a32d192ed03ULL);
	uint64_t n = 0, lba, gen;
	unsigned char *buf;
	char line[64];
	int len;

	if (posix_memalign((void **)&buf, 4096, c->bs)) {
		j->err = ENOMEM;
		j->what = "allocation";
		return NULL;
	}
	while (!c->count || n < c->count) {
		if (c->deadline && now_s() >= c->deadline)
			break;
		if (c->sequential)	/* its blocks in order: the jobs write neighbours together */
			lba = j->id + (n % owned) * c->jobs;
		else
			lba = j->id + (splitmix64(&rng) % owned) * c->jobs;
		gen = ((uint64_t)j->id << CW_JOB_SHIFT) | ++n;
		make_block(buf, c->bs, lba, gen);
		len = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 "\n", lba, gen);
		if (write_all(c->issued, line, len)) {
			j->err = errno;
			j->what = "issued log";
			break;
		}
		j->issued++;
		ssize_t r = pwrite(c->fd, buf, c->bs, (off_t)((c->offset_blocks + lba) * c->bs));

		if (r != (ssize_t)c->bs) {
			j->err = r < 0 ? errno : EIO;
			j->what = "pwrite";
			break;
		}
		if (fdatasync(c->fd)) {
			j->err = errno;
			j->what = "fdatasync";
			break;
		}
		if (write_all(c->acked, line, len)) {
			j->err = errno;
			j->what = "acked log";
			break;
		}
		j->acked++;
	}
	if (j->err && !c->quiet)
		fprintf(stderr, "%s: job %u stopped after %" PRIu64 " acked writes: %s: %s\n",
			prog, j->id, j->acked, j->what, strerror(j->err));
	free(buf);
	return NULL;
}

static void usage_write(FILE *f)
{
	fprintf(f,
"Usage: %s write --dev DEV --blocks N --issued FILE --acked FILE [options]\n"
"Rewrite random blocks among the first N of DEV from J jobs, each write\n"
"followed by fdatasync; log \"lba gen\" to the issued log before each write and\n"
"to the acked log after its fdatasync returned. Job j owns the blocks\n"
"lba = j (mod J). Runs until killed, --seconds or --count is reached, or every\n"
"job stopped on an I/O error (a job stops quietly at its first one).\n"
"With --sequential each job writes its blocks in order, again and again, so\n"
"that the jobs write neighbouring blocks at about the same time.\n"
"The logs are truncated first: keep them on a file system the test does not\n"
"cut away (tmpfs).\n"
"\n"
"Options:\n"
"  --dev DEV            block device (O_DIRECT) or file (buffered if O_DIRECT\n"
"                       is refused)\n"
"  --blocks N           blocks to write among\n"
"  --jobs J             writer threads (default 8, at most N and %d)\n"
"  --issued FILE        log of writes about to be issued\n"
"  --acked FILE         log of writes acknowledged by fdatasync\n"
"  --bs BYTES           block size, a multiple of 512 (default 4096)\n"
"  --seed S             random seed (default: time and pid)\n"
"  --offset-blocks O    block 0 is at byte O * bs of DEV (default 0)\n"
"  --seconds S          stop after S seconds (default: never)\n"
"  --count C            stop each job after C writes (default: never)\n"
"  --sequential         each job's blocks in order, not at random\n"
"  --quiet              no message when a job stops on an error\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 ran to its limit, 1 a job stopped on an I/O error, 2 usage or\n"
"setup error.\n", prog, MAX_JOBS);
}

static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return fd;
}

static int cmd_write(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "blocks", required_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "issued", required_argument, NULL, 'i' },
		{ "acked", required_argument, NULL, 'a' },
		{ "bs", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "offset-blocks", required_argument, NULL, 'o' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "sequential", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dev = NULL, *issued = NULL, *acked = NULL;
	struct wctx c = { .bs = 4096, .jobs = 8 };
	uint64_t v, seconds = 0, total = 0;
	int have_seed = 0, direct, opt, stopped = 0;
	struct job *jobs;
	unsigned int i;
	int64_t size;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'i': issued = optarg; break;
		case 'a': acked = optarg; break;
		case 'q': c.quiet = 1; break;
		case 'Q': c.sequential = 1; break;
		case 'h': usage_write(stdout); return 0;
		case 'n': if (parse_u64(optarg, &c.blocks)) goto bad; break;
		case 'b': if (parse_u64(optarg, &c.bs)) goto bad; break;
		case 'o': if (parse_u64(optarg, &c.offset_blocks)) goto bad; break;
		case 'S': if (parse_u64(optarg, &seconds)) goto bad; break;
		case 'c': if (parse_u64(optarg, &c.count)) goto bad; break;
		case 's': if (parse_u64(optarg, &c.seed)) goto bad; have_seed = 1; break;
		case 'j':
			if (parse_u64(optarg, &v) || v < 1 || v > MAX_JOBS)
				goto bad;
			c.jobs = (unsigned int)v;
			break;
		default:
			usage_write(stderr);
			return 2;
		}
	}
	if (optind != argc || !dev || !issued || !acked || !c.blocks) {
		fprintf(stderr, "%s write: --dev, --blocks, --issued and --acked are needed\n", prog);
		usage_write(stderr);
		return 2;
	}
	if (c.bs < 512 || c.bs % 512 || c.bs > (1 << 20)) {
		fprintf(stderr, "%s: --bs must be a multiple of 512 up to 1 MiB\n", prog);
		return 2;
	}
	if (c.jobs > c.blocks) {
		fprintf(stderr, "%s: more jobs (%u) than blocks (%" PRIu64 ")\n", prog, c.jobs, c.blocks);
		return 2;
	}
	if (!have_seed)
		c.seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid();
	c.fd = open_dev(dev, O_RDWR | O_CLOEXEC, &direct);
	if (c.fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dev, strerror(errno));
		return 2;
	}
	size = dev_size(c.fd);
	if (size < 0) {
		fprintf(stderr, "%s: %s: size: %s\n", prog, dev, strerror(errno));
		return 2;
	}
	if ((uint64_t)size < (c.offset_blocks + c.blocks) * c.bs) {
		fprintf(stderr, "%s: %s holds %" PRId64 " bytes, %" PRIu64 " needed\n", prog, dev,
			size, (c.offset_blocks + c.blocks) * c.bs);
		return 2;
	}
	c.issued = open_log(issued);
	c.acked = open_log(acked);
	if (c.issued < 0 || c.acked < 0)
		return 2;
	if (seconds)
		c.deadline = now_s() + (double)seconds;
	jobs = calloc(c.jobs, sizeof(*jobs));
	if (!jobs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 2;
	}
	for (i = 0; i < c.jobs; i++) {
		jobs[i].c = &c;
		jobs[i].id = i;
		if (pthread_create(&jobs[i].thread, NULL, job_main, &jobs[i])) {
			fprintf(stderr, "%s: cannot start job %u\n", prog, i);
			return 2;
		}
	}
	for (i = 0; i < c.jobs; i++) {
		pthread_join(jobs[i].thread, NULL);
		total += jobs[i].acked;
		stopped += jobs[i].err != 0;
	}
	if (!c.quiet)
		printf("%s: %" PRIu64 " writes acked by %u jobs (%s I/O), %d stopped on an error\n",
		       prog, total, c.jobs, direct ? "direct" : "buffered", stopped);
	free(jobs);
	return stopped ? 1 : 0;
bad:
	fprintf(stderr, "%s write: bad value for an option: %s\n", prog, optarg);
	return 2;
}

/* ---- verify ---- */

struct pair {
	uint64_t lba, gen;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->lba != y->lba)
		return x->lba < y->lba ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return 0;
}

/*
 * Read "lba gen" lines. A last line without its newline is left out (a
 * writer killed in the middle of it). Returns the number of pairs, -1 on
 * error (message printed).
 */
static long read_log(const char *path, uint64_t blocks, struct pair **out)
{
	FILE *f = fopen(path, "r");
	struct pair *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &lcap, f)) > 0) {
		unsigned long long lba, gen;
		char extra;

		lineno++;
		if (line[len - 1] != '\n')
			break;
		if (sscanf(line, "%llu %llu %c", &lba, &gen, &extra) != 2) {
			fprintf(stderr, "%s: %s:%zu: not \"lba gen\"\n", prog, path, lineno);
			goto err;
		}
		if (lba >= blocks) {
			fprintf(stderr, "%s: %s:%zu: lba %llu beyond --blocks %" PRIu64 "\n",
				prog, path, lineno, lba, blocks);
			goto err;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			struct pair *nv = realloc(v, cap * sizeof(*v));

			if (!nv) {
				fprintf(stderr, "%s: out of memory\n", prog);
				goto err;
			}
			v = nv;
		}
		v[n].lba = lba;
		v[n].gen = gen;
		n++;
	}
	free(line);
	fclose(f);
	*out = v;
	return (long)n;
err:
	free(line);
	free(v);
	fclose(f);
	return -1;
}

enum kind { K_OK, K_ZERO, K_TORN, K_MADEUP, K_LOST, K_UNREADABLE, K_NR };
static const char *const kind_name[K_NR] = {
	"ok", "never written", "TORN", "MADE-UP", "LOST", "UNREADABLE"
};
static const char *const kind_json[K_NR] = {
	"ok", "zero", "torn", "made_up", "lost", "unreadable"
};

struct vctx {
	uint64_t blocks, bs;
	struct pair *issued;
	size_t nissued;
	uint64_t *acked_max;	/* 0: nothing acked */
	uint64_t *acked_cnt;
	unsigned char *expect;
};

static int was_issued(const struct vctx *c, uint64_t lba, uint64_t gen)
{
	struct pair key = { lba, gen };

	return bsearch(&key, c->issued, c->nissued, sizeof(key), cmp_pair) != NULL;
}

/* Sort one block; @detail gets a short explanation of a bad one. */
static enum kind classify(struct vctx *c, uint64_t lba, const unsigned char *b,
			  char *detail, size_t dlen, int *unacked_landed)
{
	uint64_t amax = c->acked_max[lba];
	struct cw_hdr h;
	unsigned char *e = c->expect;
	size_t i, bad_sectors = 0, sectors = c->bs / 512;
	uint32_t crc;

	*unacked_landed = 0;
	for (i = 0; i < c->bs && !b[i]; i++)
		;
	if (i == c->bs) {
		if (!amax)
			return K_ZERO;
		snprintf(detail, dlen, "all zero, but gen %" PRIu64 " was acked", amax);
		return K_LOST;
	}
	memcpy(&h, b, sizeof(h));
	if (h.magic != CW_MAGIC) {
		size_t nz = 0;

		for (i = 0; i < c->bs; i++)
			nz += b[i] != 0;
		snprintf(detail, dlen,
			 "no header (first bytes %02x%02x%02x%02x%02x%02x%02x%02x, %zu of %" PRIu64
			 " bytes non-zero); highest acked gen %" PRIu64,
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], nz, c->bs, amax);
		return K_MADEUP;
	}
	if (h.lba != lba) {
		snprintf(detail, dlen, "the block of lba %" PRIu64 " (gen %" PRIu64 ")",
			 h.lba, h.gen);
		return K_MADEUP;
	}
	if (h.bs != c->bs) {
		snprintf(detail, dlen, "header says block size %u", h.bs);
		return K_TORN;
	}
	/* Compare with what the header's generation wrote, sector by sector. */
	make_block(e, c->bs, lba, h.gen);
	for (i = 0; i < sectors; i++)
		bad_sectors += memcmp(e + i * 512, b + i * 512, 512) != 0;
	crc = h.crc;
	h.crc = 0;
	memcpy(e, &h, sizeof(h));
	memcpy(e + sizeof(h), b + sizeof(h), c->bs - sizeof(h));
	if (crc32_buf(e, c->bs) != crc || bad_sectors) {
		snprintf(detail, dlen, "gen %" PRIu64 " header, %zu of %zu sectors differ from it%s",
			 h.gen, bad_sectors, sectors,
			 was_issued(c, lba, h.gen) ? "" : " (and that gen was never issued)");
		return K_TORN;
	}
	if (!was_issued(c, lba, h.gen)) {
		snprintf(detail, dlen, "gen %" PRIu64 " (job %u) was never issued for it",
			 h.gen, h.job);
		return K_MADEUP;
	}
	if (h.gen < amax) {
		snprintf(detail, dlen, "gen %" PRIu64 ", older than acked gen %" PRIu64, h.gen, amax);
		return K_LOST;
	}
	*unacked_landed = h.gen > amax;
	return K_OK;
}

static void usage_verify(FILE *f)
{
	fprintf(f,
"Usage: %s verify --dev DEV --blocks N --issued FILE --acked FILE [options]\n"
"Read the first N blocks of DEV and check each against the logs of write:\n"
"  ok             the block of the newest acked generation, or of a later one\n"
"                 that was issued\n"
"  never written  all zero, and no write of it was acked\n"
"  LOST           an acked write is gone: all zero, or an older generation\n"
"  TORN           its own header, but the checksum or the payload is wrong\n"
"  MADE-UP        bytes no write put there: no header, another block's\n"
"                 header, or a generation never issued for it\n"
"  UNREADABLE     the read failed\n"
"\n"
"Options:\n"
"  --dev DEV            block device or file\n"
"  --blocks N           blocks to check\n"
"  --issued FILE        the issued log (or the part of it up to a point)\n"
"  --acked FILE         the acked log (or the part of it up to a point)\n"
"  --bs BYTES           block size (default 4096)\n"
"  --offset-blocks O    block 0 is at byte O * bs of DEV (default 0)\n"
"  --list K             name the first K bad blocks (default 10)\n"
"  --json               print the result as one JSON object\n"
"  -h, --help           this text\n"
"\n"
"Exit status: 0 every block fine, 1 a bad block, 2 usage or I/O error.\n", prog);
}

struct bad {
	uint64_t lba;
	enum kind kind;
	char detail[160];
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

static int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "blocks", required_argument, NULL, 'n' },
		{ "issued", required_argument, NULL, 'i' },
		{ "acked", required_argument, NULL, 'a' },
		{ "bs", required_argument, NULL, 'b' },
		{ "offset-blocks", required_argument, NULL, 'o' },
		{ "list", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dev = NULL, *issued = NULL, *acked = NULL;
	struct vctx c = { .bs = 4096 };
	uint64_t offset = 0, list = 10, count[K_NR] = { 0 }, landed = 0, lba, bad_total;
	struct pair *ap = NULL;
	struct bad *bads;
	size_t nbads = 0;
	unsigned char *buf;
	int direct, fd, opt, json = 0;
	long na, ni;
	int64_t size;
	size_t k;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'i': issued = optarg; break;
		case 'a': acked = optarg; break;
		case 'J': json = 1; break;
		case 'h': usage_verify(stdout); return 0;
		case 'n': if (parse_u64(optarg, &c.blocks)) goto bad; break;
		case 'b': if (parse_u64(optarg, &c.bs)) goto bad; break;
		case 'o': if (parse_u64(optarg, &offset)) goto bad; break;
		case 'l': if (parse_u64(optarg, &list) || list > 100000) goto bad; break;
		default:
			usage_verify(stderr);
			return 2;
		}
	}
	if (optind != argc || !dev || !issued || !acked || !c.blocks) {
		fprintf(stderr, "%s verify: --dev, --blocks, --issued and --acked are needed\n", prog);
		usage_verify(stderr);
		return 2;
	}
	if (c.bs < 512 || c.bs % 512 || c.bs > (1 << 20)) {
		fprintf(stderr, "%s: --bs must be a multiple of 512 up to 1 MiB\n", prog);
		return 2;
	}
	ni = read_log(issued, c.blocks, &c.issued);
	if (ni < 0)
		return 2;
	na = read_log(acked, c.blocks, &ap);
	if (na < 0)
		return 2;
	c.nissued = (size_t)ni;
	qsort(c.issued, c.nissued, sizeof(*c.issued), cmp_pair);
	c.acked_max = calloc(c.blocks, sizeof(uint64_t));
	bads = calloc(list ? list : 1, sizeof(*bads));
	if (!c.acked_max || !bads || posix_memalign((void **)&buf, 4096, BATCH_BLOCKS * c.bs) ||
	    posix_memalign((void **)&c.expect, 4096, c.bs)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 2;
	}
	for (k = 0; k < (size_t)na; k++) {
		if (ap[k].gen > c.acked_max[ap[k].lba])
			c.acked_max[ap[k].lba] = ap[k].gen;
		if (!was_issued(&c, ap[k].lba, ap[k].gen)) {
			fprintf(stderr, "%s: acked write lba %" PRIu64 " gen %" PRIu64
				" is not in the issued log: the logs do not belong together\n",
				prog, ap[k].lba, ap[k].gen);
			return 2;
		}
	}
	fd = open_dev(dev, O_RDONLY | O_CLOEXEC, &direct);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dev, strerror(errno));
		return 2;
	}
	size = dev_size(fd);
	if (size < 0 || (uint64_t)size < (offset + c.blocks) * c.bs) {
		fprintf(stderr, "%s: %s is smaller than %" PRIu64 " blocks\n", prog, dev,
			offset + c.blocks);
		return 2;
	}
	for (lba = 0; lba < c.blocks; lba += BATCH_BLOCKS) {
		uint64_t n = c.blocks - lba < BATCH_BLOCKS ? c.blocks - lba : BATCH_BLOCKS, i;
		ssize_t r = pread(fd, buf, n * c.bs, (off_t)((offset + lba) * c.bs));
		int batch_ok = r == (ssize_t)(n * c.bs);

		for (i = 0; i < n; i++) {
			unsigned char *b = buf + i * c.bs;
			char detail[160] = "";
			enum kind kd;
			int ul = 0;

			/* A failed batch is read again block by block. */
			if (!batch_ok && pread(fd, b, c.bs, (off_t)((offset + lba + i) * c.bs)) !=
			    (ssize_t)c.bs) {
				snprintf(detail, sizeof(detail), "read failed: %s", strerror(errno));
				kd = K_UNREADABLE;
			} else {
				kd = classify(&c, lba + i, b, detail, sizeof(detail), &ul);
			}
			count[kd]++;
			landed += ul;
			if (kd != K_OK && kd != K_ZERO && nbads < list) {
				bads[nbads].lba = lba + i;
				bads[nbads].kind = kd;
				snprintf(bads[nbads].detail, sizeof(bads[nbads].detail), "%s", detail);
				nbads++;
			}
		}
	}
	bad_total = count[K_TORN] + count[K_MADEUP] + count[K_LOST] + count[K_UNREADABLE];
	if (json) {
		printf("{\"blocks\": %" PRIu64 ", \"issued\": %ld, \"acked\": %ld", c.blocks, ni, na);
		for (k = 0; k < K_NR; k++)
			printf(", \"%s\": %" PRIu64, kind_json[k], count[k]);
		printf(", \"unacked_landed\": %" PRIu64 ", \"bad\": %" PRIu64 ", \"bad_list\": [",
		       landed, bad_total);
		for (k = 0; k < nbads; k++) {
			printf("%s{\"lba\": %" PRIu64 ", \"kind\": \"%s\", \"detail\": ", k ? ", " : "",
			       bads[k].lba, kind_json[bads[k].kind]);
			json_str(bads[k].detail);
			putchar('}');
		}
		printf("]}\n");
	} else {
		for (k = 0; k < nbads; k++)
			printf("bad lba %" PRIu64 ": %s: %s\n", bads[k].lba, kind_name[bads[k].kind],
			       bads[k].detail);
		if (bad_total > nbads)
			printf("... %" PRIu64 " more bad blocks\n", bad_total - nbads);
		printf("verified %" PRIu64 " blocks (%ld issued, %ld acked writes): %" PRIu64
		       " ok (%" PRIu64 " hold a write not yet acked), %" PRIu64 " never written, %"
		       PRIu64 " torn, %" PRIu64 " made-up, %" PRIu64 " lost, %" PRIu64 " unreadable\n",
		       c.blocks, ni, na, count[K_OK], landed, count[K_ZERO], count[K_TORN],
		       count[K_MADEUP], count[K_LOST], count[K_UNREADABLE]);
	}
	return bad_total ? 1 : 0;
bad:
	fprintf(stderr, "%s verify: bad value for an option: %s\n", prog, optarg);
	return 2;
}

/* ---- block ---- */

static int cmd_block(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lba", required_argument, NULL, 'l' },
		{ "gen", required_argument, NULL, 'g' },
		{ "bs", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t lba = 0, gen = 0, bs = 4096;
	int have = 0, opt;
	unsigned char *buf;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'l': if (parse_u64(optarg, &lba)) goto bad; have |= 1; break;
		case 'g': if (parse_u64(optarg, &gen)) goto bad; have |= 2; break;
		case 'b': if (parse_u64(optarg, &bs)) goto bad; break;
		case 'h':
			printf("Usage: %s block --lba L --gen G [--bs BYTES]\n"
			       "Print the block that write makes for (L, G) on stdout.\n", prog);
			return 0;
		default:
			return 2;
		}
	}
	if (have != 3 || optind != argc || bs < 512 || bs % 512 || bs > (1 << 20)) {
		fprintf(stderr, "%s block: --lba and --gen are needed, --bs a multiple of 512\n", prog);
		return 2;
	}
	buf = malloc(bs);
	if (!buf)
		return 2;
	make_block(buf, bs, lba, gen);
	if (write_all(1, (const char *)buf, bs)) {
		fprintf(stderr, "%s: stdout: %s\n", prog, strerror(errno));
		return 2;
	}
	free(buf);
	return 0;
bad:
	fprintf(stderr, "%s block: bad value: %s\n", prog, optarg);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s write|verify|block [options]   (%s COMMAND --help for each)\n"
"Crash-consistency writer and checker for block devices:\n"
"  write    rewrite random blocks with fdatasync, logging every write issued\n"
"           and every write acknowledged\n"
"  verify   after a crash: check every block against those logs (LOST, TORN,\n"
"           MADE-UP blocks fail)\n"
"  block    print the block that write makes for an lba and a generation\n"
"\n"
"Exit status: 0 success, 1 a job stopped on an error (write) or a bad block\n"
"(verify), 2 usage or I/O error.\n", prog, prog);
}

int main(int argc, char **argv)
{
	crc_init();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 1, argv + 1);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "block"))
		return cmd_block(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command %s\n", prog, argv[1]);
	usage(stderr);
	return 2;
}
