// SPDX-License-Identifier: GPL-2.0
/*
 * rainssd-check: verify the RAID-5 parity of a dm-rainssd volume by reading
 * its raw members, and the mirror copies of its RAID1 tier (1.7.0).
 *
 * The layout is md's left-symmetric RAID-5 with the data area starting at
 * --data-offset sectors on every member (32768, 16 MiB, by default: the
 * module's RS_DATA_OFFSET). Stripe s occupies member sectors
 * [offset + s * chunk, offset + (s + 1) * chunk) on every member, one of
 * which holds the parity, so a stripe is consistent exactly when the XOR of
 * its N chunks is zero; which member holds parity does not matter here.
 *
 * The members' superblocks (dm-rainssd/rainssd-sb.h), when they have them,
 * give the geometry and the volume's size; format 2 adds the RAID1 tier
 * (dm-rainssd/rainssd-tier.[ch], rainssd-tiermap.c): its mapping table is
 * read as the module reads it (the newest commit record any member holds
 * whole gives every block's generation; each block from a valid copy of that
 * generation in either table copy on any member), its records checked,
 * and the two copies of every row a record says is in the tier compared.
 * A stripe in the tier leaves its home as it was, so the homes' parity is
 * checked as without a tier.
 *
 * Exit status: 0 every stripe and copy checked is consistent, 1 some stripe
 * or copy is not, or the tier has a bad record, 2 usage or I/O error or an
 * unreadable tier table.
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

#define SECTOR 512ULL
#define MAX_DEVS 32
#define MIN_DEVS 3
#define MIN_CHUNK 8
#define MAX_CHUNK 2048
#define BATCH_BYTES (1ULL << 20)
#define MAX_LISTED 1000

/* The superblock (dm-rainssd/rainssd-sb.h). */
#define SB_MAGIC		0x3142535344534e52ULL	/* "RNSDSSB1" */
#define SB_VERSION		1
#define SB_VERSION_TIER		2
#define SB_SECTOR		2048ULL			/* copy 0; copy 1 is 8 sectors on */
#define SB_SIZE			4096
#define SB_CSUM			12			/* offset of the crc32c field */
#define SB_MEMBERS		136			/* offset of the member table */
#define BITMAP_MAX_BYTES	(2U << 20)		/* RS_BITMAP_MAX_BYTES: the bitmap area */
#define SBF_UNCOVERED		2U	/* 1.11.4: dirty regions no log record covers */
#define SBF_KNOWN		3U	/* clean, uncovered (1.11.4) */
enum { MS_NONE, MS_IN_SYNC, MS_FAILED, MS_REBUILDING, NR_MSTATES };

/* The RAID1 tier (dm-rainssd/rainssd-tier.h). */
#define TIER_ROW_SECTORS	8U
#define TIER_MAX_ROWS		(MAX_CHUNK / TIER_ROW_SECTORS)
#define TIER_BLOCK		4096U
#define TIER_BLOCK_SECTORS	(TIER_BLOCK / 512)
#define TIER_HDR		64U
#define TIER_CSUM		12
#define TIER_MAGIC		0x3152544453534e52ULL	/* "RNSSDTR1" */
#define TIER_FORMAT		1U
#define TIER_MAX_RECORDS	(1U << 24)
#define TIER_SEQ_LIMIT		(INT64_MAX - (1ULL << 32))	/* RS_TIER_SEQ_LIMIT */
#define TIER_VEC_PER_BLOCK	((TIER_BLOCK - TIER_HDR) / 8)	/* generations per commit record block */

struct sb {
	unsigned char uuid[16];
	uint64_t events, log_nonce;
	unsigned int version, chunk, n, role;
	uint64_t data_offset, stripes, tier_start, tier_sectors;
	unsigned char state[MAX_DEVS];
};

enum sb_kind { SB_BLANK, SB_VALID, SB_CORRUPT };

struct member {
	const char *path;
	int fd;
	uint64_t sectors;
	unsigned char *buf;
	enum sb_kind sb_kind;
	struct sb sb;		/* the newest valid copy */
};

struct tier_layout {
	uint64_t start, sectors;
	unsigned int n, chunk, rows, pbytes, ksize, rec_size, recs_per_block;
	uint32_t wb_blocks, rec_blocks, blocks, vec_blocks, slots, records;
	uint64_t slots_start;
};

enum rec_state { REC_EMPTY, REC_USED, REC_OLD, REC_BAD };

struct tier {
	struct tier_layout t;
	unsigned char uuid[16];
	uint64_t stripes;		/* the volume's */
	unsigned char *table;		/* blocks * TIER_BLOCK, the winning copies */
	unsigned char *state;		/* per record: enum rec_state */
	const char **why;		/* per bad record */
	uint32_t *other;		/* per record: the record it clashes with, or UINT32_MAX */
	uint32_t used, bad;
	uint64_t written;		/* stripes the written-stripe bitmap marks */
	uint64_t cseq;			/* the commit record's sequence number */
	unsigned int corrupt_copies;	/* block copies passed over */
	unsigned int torn_copies;	/* valid block copies newer than the commit record */
	unsigned int damaged_vecs;	/* commit record copies neither whole nor blank */
};

/* A chunk of a stripe in the tier whose two copies differ. */
struct tier_mismatch {
	uint64_t stripe;
	unsigned int k, m[2];
	uint64_t sector[2];
	uint64_t sectors;
	unsigned char rows[TIER_MAX_ROWS / 8];
};

struct tier_result {
	uint64_t stripes;		/* stripes in the tier compared */
	uint64_t chunks, sectors;	/* mismatching chunks, sectors */
	struct tier_mismatch *list;
	size_t nlisted;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rainssd-check [options] [<chunk_sectors>] <member>...\n"
"Check the parity of every stripe of a dm-rainssd (md RAID-5) volume by\n"
"reading its raw members, in table order, and, when the members'\n"
"superblocks give the volume a RAID1 tier (format 2), the tier's mapping\n"
"table and the two mirror copies of every row in it. Take the volume down\n"
"(or at least quiesce it) first: a stripe being written can look\n"
"inconsistent. chunk_sectors may be left out when the members have\n"
"superblocks; given, it must match them.\n"
"\n"
"Options:\n"
"  --data-offset S  sector where the data area starts on each member\n"
"                   (default: the superblocks', else 32768)\n"
"  --stripes N      check the first N stripes\n"
"  --length L       check the stripes of a volume of L sectors (the table's\n"
"                   length)\n"
"                   default: the volume's stripes (superblocks), else every\n"
"                   whole stripe the smallest member holds\n"
"  --tier           the volume must have a tier (exit 2 if it has none)\n"
"  --no-tier        do not check the tier\n"
"  --dump-tier      print the tier's mapping table (no parity check)\n"
"  --json           print the result as one JSON object\n"
"  --quiet          print only the summary lines\n"
"  --progress       show progress on stderr\n"
"  -h, --help       this text\n"
"\n"
"Exit status: 0 consistent, 1 bad stripes, differing mirror copies or bad\n"
"tier records found, 2 usage or I/O error or an unreadable tier table.\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int open_member(struct member *m)
{
	struct stat st;

	m->fd = open(m->path, O_RDONLY | O_DIRECT);
	if (m->fd < 0 && errno == EINVAL)
		m->fd = open(m->path, O_RDONLY);
	if (m->fd < 0) {
		fprintf(stderr, "rainssd-check: %s: %s\n", m->path, strerror(errno));
		return -1;
	}
	if (fstat(m->fd, &st) < 0) {
		fprintf(stderr, "rainssd-check: %s: %s\n", m->path, strerror(errno));
		return -1;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;

		if (ioctl(m->fd, BLKGETSIZE64, &bytes) < 0) {
			fprintf(stderr, "rainssd-check: %s: BLKGETSIZE64: %s\n",
				m->path, strerror(errno));
			return -1;
		}
		m->sectors = bytes / SECTOR;
	} else if (S_ISREG(st.st_mode)) {
		m->sectors = (uint64_t)st.st_size / SECTOR;
	} else {
		fprintf(stderr, "rainssd-check: %s: not a block device or file\n", m->path);
		return -1;
	}
	return 0;
}

/* Read exactly @len bytes at @off; buffered fallback if O_DIRECT refuses. */
static int read_full(struct member *m, unsigned char *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(m->fd, buf + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "rainssd-check: %s: read at byte %" PRIu64 ": %s\n",
				m->path, off + done, strerror(errno));
			return -1;
		}
		if (r == 0) {
			fprintf(stderr, "rainssd-check: %s: short read at byte %" PRIu64 "\n",
				m->path, off + done);
			return -1;
		}
		done += r;
	}
	return 0;
}

static void *alloc_aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 4096)) {
		fprintf(stderr, "rainssd-check: out of memory\n");
		return NULL;
	}
	return p;
}

/* ---- little-endian fields, crc32c ---- */

static uint32_t get_le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const unsigned char *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static int all_zero(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return 0;
	return 1;
}

/* The kernel's crc32c(): CRC-32C (Castagnoli), reflected, no inversion. */
static uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t len)
{
	static uint32_t table[256];
	static int ready;
	unsigned int i, j;

	if (!ready) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;

			for (j = 0; j < 8; j++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
			table[i] = c;
		}
		ready = 1;
	}
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* ~crc32c(~0) of the @len bytes at @b with the le32 field at @field taken as zero. */
static uint32_t block_csum(const unsigned char *b, size_t len, size_t field)
{
	static const unsigned char zero[4];
	uint32_t c;

	c = crc32c(~0U, b, field);
	c = crc32c(c, zero, 4);
	c = crc32c(c, b + field + 4, len - field - 4);
	return ~c;
}

static void fmt_uuid(char *out, const unsigned char *u)
{
	unsigned int i;
	char *p = out;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		p += sprintf(p, "%02x", u[i]);
	}
}

/* ---- superblocks ---- */

/* One copy, as rs_sb_decode() takes it: blank, valid (in @sb), or corrupt (@why). */
static enum sb_kind sb_decode(const unsigned char *b, struct sb *sb, const char **why)
{
	unsigned int i, st;

	*why = NULL;
	if (get_le64(b) != SB_MAGIC)
		return SB_BLANK;
	if (get_le32(b + SB_CSUM) != block_csum(b, SB_SIZE, SB_CSUM)) {
		*why = "bad checksum";
		return SB_CORRUPT;
	}
	memset(sb, 0, sizeof(*sb));
	sb->version = get_le32(b + 8);
	if (sb->version != SB_VERSION && sb->version != SB_VERSION_TIER) {
		*why = "unknown format version";
		return SB_CORRUPT;
	}
	memcpy(sb->uuid, b + 16, 16);
	sb->events = get_le64(b + 32);
	sb->chunk = get_le32(b + 40);
	sb->n = get_le32(b + 44);
	sb->data_offset = get_le64(b + 48);
	sb->stripes = get_le64(b + 56);
	sb->role = get_le32(b + 72);
	sb->log_nonce = get_le64(b + 96);
	sb->tier_start = get_le64(b + 104);
	sb->tier_sectors = get_le64(b + 112);
	if (get_le32(b + 92) || !all_zero(b + 128, 8)) {
		*why = "reserved bytes not zero";
		return SB_CORRUPT;
	}
	/* 1.11.6: below which stripe dirty regions are uncovered, with its flag */
	if (get_le64(b + 120) && !(get_le32(b + 76) & SBF_UNCOVERED)) {
		*why = "an uncovered boundary without its flag";
		return SB_CORRUPT;
	}
	/* a tier of fewer than 2^32 sectors, what tier_size gives (1.11.23) */
	if ((sb->version == SB_VERSION) != !sb->tier_sectors || sb->tier_sectors > UINT32_MAX ||
	    (sb->tier_sectors &&
	     sb->tier_start < sb->data_offset + sb->stripes * sb->chunk)) {
		*why = "impossible tier fields";
		return SB_CORRUPT;
	}
	if (sb->n < MIN_DEVS || sb->n > MAX_DEVS || sb->role >= sb->n ||
	    sb->chunk < MIN_CHUNK || sb->chunk > MAX_CHUNK || (sb->chunk & (sb->chunk - 1)) ||
	    get_le64(b + 64) > sb->stripes || !sb->events || sb->events > INT64_MAX ||
	    (get_le32(b + 76) & ~SBF_KNOWN)) {
		*why = "impossible field values";
		return SB_CORRUPT;
	}
	/* The bitmap's regions fit its area (0: a volume of 1.4.0; 1.11.19). */
	if (get_le32(b + 88) && sb->stripes > (uint64_t)BITMAP_MAX_BYTES * 8 * get_le32(b + 88)) {
		*why = "more bitmap regions than its area holds";
		return SB_CORRUPT;
	}
	for (i = 0; i < MAX_DEVS; i++) {
		st = b[SB_MEMBERS + 16 * i];
		if ((i < sb->n && (st == MS_NONE || st >= NR_MSTATES)) ||
		    (i >= sb->n && st != MS_NONE)) {
			*why = "impossible member state";
			return SB_CORRUPT;
		}
		sb->state[i] = st;
	}
	return SB_VALID;
}

static const char *mstate_name(unsigned int st)
{
	static const char * const names[NR_MSTATES] = {
		"none", "in_sync", "failed", "rebuilding"
	};

	return st < NR_MSTATES ? names[st] : "unknown";
}

/*
 * Read the superblocks of the @n members: each member's newest valid copy,
 * and in @ref the volume's (of the volume most members belong to, the
 * newest, as rs_assemble() picks it), or NULL when no member has one.
 * Members of another volume, in another place than their role, or whose
 * geometry differs from the others' are refused (-1, exit 2).
 */
static int read_superblocks(struct member *m, int n, const struct sb **ref)
{
	const struct sb *best = NULL;
	unsigned char *buf;
	struct sb s[2];
	const char *why[2];
	enum sb_kind kind[2];
	int i, j, c, votes, best_votes = 0, best_i = 0;

	*ref = NULL;
	buf = alloc_aligned(2 * SB_SIZE);
	if (!buf)
		return -1;
	for (i = 0; i < n; i++) {
		m[i].sb_kind = SB_BLANK;
		if (m[i].sectors < SB_SECTOR + 2 * SB_SIZE / SECTOR)
			continue;
		if (read_full(&m[i], buf, 2 * SB_SIZE, SB_SECTOR * SECTOR)) {
			free(buf);
			return -1;
		}
		for (c = 0; c < 2; c++) {
			kind[c] = sb_decode(buf + c * SB_SIZE, &s[c], &why[c]);
			if (kind[c] == SB_VALID &&
			    (m[i].sb_kind != SB_VALID || s[c].events > m[i].sb.events)) {
				m[i].sb = s[c];
				m[i].sb_kind = SB_VALID;
			}
		}
		if (m[i].sb_kind == SB_VALID)
			continue;
		for (c = 0; c < 2; c++)
			if (kind[c] == SB_CORRUPT) {
				m[i].sb_kind = SB_CORRUPT;
				fprintf(stderr, "rainssd-check: %s: superblock corrupt (%s), passed over\n",
					m[i].path, why[c]);
				break;
			}
	}
	free(buf);

	for (i = 0; i < n; i++) {
		if (m[i].sb_kind != SB_VALID)
			continue;
		votes = 0;
		for (j = 0; j < n; j++)
			votes += m[j].sb_kind == SB_VALID &&
				 !memcmp(m[i].sb.uuid, m[j].sb.uuid, 16);
		if (votes > best_votes || (votes == best_votes && m[i].sb.events > best->events)) {
			best = &m[i].sb;
			best_i = i;
			best_votes = votes;
		}
	}
	if (!best)
		return 0;
	for (i = 0; i < n; i++) {
		const struct sb *x = &m[i].sb;

		if (m[i].sb_kind != SB_VALID) {
			fprintf(stderr, "rainssd-check: %s: no superblock (a member being rebuilt?)\n",
				m[i].path);
			continue;
		}
		if (memcmp(x->uuid, best->uuid, 16)) {
			fprintf(stderr, "rainssd-check: %s: belongs to another volume (superblock uuid differs)\n",
				m[i].path);
			return -1;
		}
		if (x->n != best->n || x->chunk != best->chunk ||
		    x->data_offset != best->data_offset || x->stripes != best->stripes ||
		    x->tier_start != best->tier_start || x->tier_sectors != best->tier_sectors) {
			fprintf(stderr, "rainssd-check: %s: superblock geometry, size or tier differs from the other members'\n",
				m[i].path);
			return -1;
		}
		if (x->role != (unsigned int)i) {
			fprintf(stderr, "rainssd-check: %s: given as member %d, its superblock says %u\n",
				m[i].path, i, x->role);
			return -1;
		}
		if (x->events < best->events)
			fprintf(stderr, "rainssd-check: %s: superblock older than the newest (events %"
				PRIu64 " < %" PRIu64 "): the member may be stale\n",
				m[i].path, x->events, best->events);
		if (x->events == best->events && x->log_nonce != best->log_nonce) {
			fprintf(stderr, "rainssd-check: %s: superblock at the newest generation with another history than %s's (copies of one volume used apart)\n",
				m[i].path, m[best_i].path);
			return -1;
		}
	}
	for (i = 0; i < (int)best->n; i++)
		if (best->state[i] != MS_IN_SYNC)
			fprintf(stderr, "rainssd-check: the superblocks say member %d is %s: expect differences there\n",
				i, mstate_name(best->state[i]));
	*ref = best;
	return 0;
}

/* ---- the tier's layout and table ---- */

static uint32_t div_up32(uint64_t a, uint64_t b)
{
	uint64_t q = (a + b - 1) / b;

	return q > UINT32_MAX ? UINT32_MAX : q;
}

/* rs_tier_layout(): 0, -1 when it cannot hold one stripe, -2 when too large. */
static int tier_layout(struct tier_layout *t, unsigned int n, unsigned int chunk,
		       uint64_t stripes, uint64_t start, uint64_t sectors)
{
	unsigned int k = n - 1;
	uint64_t slots, recs, table, r;

	memset(t, 0, sizeof(*t));
	t->start = start;
	t->sectors = sectors;
	t->n = n;
	t->chunk = chunk;
	t->rows = chunk / TIER_ROW_SECTORS ? chunk / TIER_ROW_SECTORS : 1;
	t->pbytes = ((t->rows + 7) / 8 + 3) & ~3U;
	t->ksize = 12 + t->pbytes;
	t->rec_size = (16 + k * t->ksize + 7) & ~7U;
	t->recs_per_block = (TIER_BLOCK - TIER_HDR) / t->rec_size;
	t->wb_blocks = div_up32(stripes, (uint64_t)(TIER_BLOCK - TIER_HDR) * 8);
	slots = sectors / chunk;
	recs = slots * n / (2 * k);
	if (recs > TIER_MAX_RECORDS)
		return -2;
	t->rec_blocks = div_up32(recs, t->recs_per_block);
	t->blocks = 1 + t->wb_blocks + t->rec_blocks;
	/* The table's two copies, then the two slots of its commit record. */
	t->vec_blocks = div_up32(t->blocks, TIER_VEC_PER_BLOCK);
	table = 2ULL * ((uint64_t)t->blocks + t->vec_blocks) * TIER_BLOCK_SECTORS;
	table = (table + chunk - 1) / chunk * chunk;
	if (table >= sectors)
		return -1;
	t->slots_start = start + table;
	t->slots = (sectors - table) / chunk;
	r = (uint64_t)t->slots * n / (2 * k);
	if (r > (uint64_t)t->rec_blocks * t->recs_per_block)
		r = (uint64_t)t->rec_blocks * t->recs_per_block;
	t->records = r;
	if (!t->records)
		return -1;
	return 0;
}

static uint64_t tier_copy_sector(const struct tier_layout *t, unsigned int copy, uint32_t block)
{
	return t->start + ((uint64_t)copy * t->blocks + block) * TIER_BLOCK_SECTORS;
}

/* rs_tier_vec_sector(): commit record slot @slot (0 or 1), after the table's two copies. */
static uint64_t tier_vec_sector(const struct tier_layout *t, unsigned int slot)
{
	return t->start + (2ULL * t->blocks + (uint64_t)slot * t->vec_blocks) * TIER_BLOCK_SECTORS;
}

static uint64_t tier_slot_sector(const struct tier_layout *t, uint32_t slot)
{
	return t->slots_start + (uint64_t)slot * t->chunk;
}

static uint32_t tier_rec_block(const struct tier_layout *t, uint32_t rec)
{
	return 1 + t->wb_blocks + rec / t->recs_per_block;
}

static unsigned char *tier_rec(const struct tier *tr, uint32_t rec)
{
	const struct tier_layout *t = &tr->t;

	return tr->table + (size_t)tier_rec_block(t, rec) * TIER_BLOCK +
	       TIER_HDR + (rec % t->recs_per_block) * t->rec_size;
}

static void rec_copy(const struct tier_layout *t, const unsigned char *r, unsigned int k,
		     unsigned int c, unsigned int *member, uint32_t *slot)
{
	const unsigned char *e = r + 16 + k * t->ksize;

	*member = e[c];
	*slot = get_le32(e + 4 + 4 * c);
}

static const unsigned char *rec_rows(const struct tier_layout *t, const unsigned char *r,
				     unsigned int k)
{
	return r + 16 + k * t->ksize + 12;
}

static int row_set(const unsigned char *bits, unsigned int row)
{
	return bits[row / 8] & (1U << (row % 8));
}

/* rs_tier_r_check(): NULL, or why a used record is impossible. */
static const char *rec_check(const struct tier_layout *t, const unsigned char *r, uint64_t stripes)
{
	unsigned int k, c, m[2], row, b;
	uint32_t slot[2];
	const unsigned char *e;

	if (get_le64(r) - 1 >= stripes)
		return "record of a stripe beyond the volume";
	if (get_le64(r + 8) > TIER_SEQ_LIMIT)
		return "record with a sequence number near its limit";
	for (k = 0; k < t->n - 1; k++) {
		e = r + 16 + k * t->ksize;
		if (e[2] || e[3])
			return "record with non-zero padding";
		for (c = 0; c < 2; c++) {
			rec_copy(t, r, k, c, &m[c], &slot[c]);
			if (m[c] >= t->n || slot[c] >= t->slots)
				return "record with a member or slot out of range";
		}
		if (m[0] == m[1])
			return "record with both copies on one member";
		for (row = t->rows; row < t->pbytes * 8; row++)
			if (row_set(e + 12, row))
				return "record with rows beyond the chunk";
	}
	for (b = 16 + (t->n - 1) * t->ksize; b < t->rec_size; b++)
		if (r[b])
			return "record with non-zero padding";
	return NULL;
}

/* rs_tier_blk_check(): blank, valid (its generation in @gen), or corrupt. */
static enum sb_kind tier_blk_check(const unsigned char *b, const unsigned char *uuid,
				   uint32_t want, uint64_t *gen)
{
	*gen = 0;
	if (get_le64(b) != TIER_MAGIC)
		return all_zero(b, TIER_BLOCK) ? SB_BLANK : SB_CORRUPT;
	if (get_le32(b + TIER_CSUM) != block_csum(b, TIER_BLOCK, TIER_CSUM) ||
	    get_le32(b + 8) != TIER_FORMAT || memcmp(b + 16, uuid, 16) ||
	    get_le32(b + 32) != want || get_le32(b + 36) || !all_zero(b + 48, TIER_HDR - 48))
		return SB_CORRUPT;
	*gen = get_le64(b + 40);
	return SB_VALID;
}

/* rs_tier_hdr_matches(): block 0 is for layout @t (its last field vec_blocks, zeros after). */
static int tier_hdr_matches(const struct tier_layout *t, const unsigned char *block)
{
	const unsigned char *p = block + TIER_HDR;

	return get_le64(p) == t->start && get_le64(p + 8) == t->sectors &&
	       get_le32(p + 16) == t->chunk && get_le32(p + 20) == t->n &&
	       get_le32(p + 24) == t->rows && get_le32(p + 28) == t->rec_size &&
	       get_le32(p + 32) == t->wb_blocks && get_le32(p + 36) == t->rec_blocks &&
	       get_le32(p + 40) == t->slots && get_le32(p + 44) == t->records &&
	       get_le32(p + 48) == t->vec_blocks &&
	       all_zero(p + 52, TIER_BLOCK - TIER_HDR - 52);
}

static void tier_bad(struct tier *tr, uint32_t rec, const char *why, uint32_t other)
{
	tr->state[rec] = REC_BAD;
	tr->why[rec] = why;
	tr->other[rec] = other;
	tr->bad++;
}

/*
 * rs_tier_index(), but going on past a bad record: every stripe's newest
 * record (by seq) holds it, an older one of the same stripe is superseded;
 * an impossible record, one with the seq of another record of its stripe,
 * one that claims a slot an earlier record holds, and an empty record that
 * is not zero are bad (the module refuses such a table). Only the records
 * left in use (REC_USED) are compared.
 */
static int tier_index(struct tier *tr, int n)
{
	const struct tier_layout *t = &tr->t;
	uint32_t *owner[MAX_DEVS] = { NULL }, *smap, rec, old, other, sl[2 * (MAX_DEVS - 1)];
	unsigned int k, c, j, jj, nk = t->n - 1, mm[2 * (MAX_DEVS - 1)];
	uint64_t s, per = (TIER_BLOCK - TIER_HDR) * 8;
	const unsigned char *r, *o;
	const char *why;
	int i, ret = -1;

	smap = calloc(tr->stripes ? tr->stripes : 1, sizeof(*smap));
	if (!smap)
		goto oom;
	for (i = 0; i < n; i++) {
		owner[i] = calloc(t->slots, sizeof(*owner[i]));
		if (!owner[i])
			goto oom;
	}
	for (rec = 0; rec < t->records; rec++) {
		r = tier_rec(tr, rec);
		tr->other[rec] = UINT32_MAX;
		if (!get_le64(r)) {
			if (!all_zero(r, t->rec_size))
				tier_bad(tr, rec, "an empty record that is not zero", UINT32_MAX);
			continue;
		}
		s = get_le64(r) - 1;
		why = rec_check(t, r, tr->stripes);
		if (why) {
			tier_bad(tr, rec, why, UINT32_MAX);
			if (s >= tr->stripes)
				continue;
		} else {
			tr->state[rec] = REC_USED;
		}
		/*
		 * Of a stripe's records the newest holds it, the older ones are
		 * what a crash left: superseded. A bad record still supersedes
		 * (its stripe is then not compared: its newest record is bad).
		 */
		old = smap[s];
		if (old) {
			o = tier_rec(tr, old - 1);
			if (get_le64(o + 8) == get_le64(r + 8)) {
				if (tr->state[rec] != REC_BAD)
					tier_bad(tr, rec, "two records of one stripe with one sequence number",
						 old - 1);
				continue;
			}
			if (get_le64(o + 8) > get_le64(r + 8)) {
				if (tr->state[rec] == REC_USED) {
					tr->state[rec] = REC_OLD;
					tr->other[rec] = old - 1;
				}
				continue;
			}
			if (tr->state[old - 1] == REC_USED) {
				tr->state[old - 1] = REC_OLD;
				tr->other[old - 1] = rec;
			}
		}
		smap[s] = rec + 1;
	}
	/* The slots of the records kept, each claimed once. */
	for (rec = 0; rec < t->records; rec++) {
		if (tr->state[rec] != REC_USED)
			continue;
		r = tier_rec(tr, rec);
		for (k = 0; k < nk; k++)
			for (c = 0; c < 2; c++)
				rec_copy(t, r, k, c, &mm[2 * k + c], &sl[2 * k + c]);
		why = NULL;
		other = UINT32_MAX;
		for (j = 0; j < 2 * nk && !why; j++) {
			if (owner[mm[j]][sl[j]]) {
				why = "two records claim one chunk slot";
				other = owner[mm[j]][sl[j]] - 1;
			}
			for (jj = 0; jj < j && !why; jj++)
				if (mm[jj] == mm[j] && sl[jj] == sl[j])
					why = "a record that claims one chunk slot twice";
		}
		if (why) {
			tier_bad(tr, rec, why, other);
			continue;
		}
		for (j = 0; j < 2 * nk; j++)
			owner[mm[j]][sl[j]] = rec + 1;
		tr->used++;
	}
	for (s = 0; s < tr->stripes; s++)
		if (tr->table[(size_t)(1 + s / per) * TIER_BLOCK + TIER_HDR + (s % per) / 8] &
		    (1U << (s % 8)))
			tr->written++;
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "rainssd-check: out of memory\n");
out:
	for (i = 0; i < n; i++)
		free(owner[i]);
	free(smap);
	return ret;
}

/*
 * The commit record, as rs_tier_load_vec() finds it: of both slots of every
 * member, the newest (highest sequence number) copy that is whole (all its
 * vec_blocks blocks valid, numbered blocks + slot * vec_blocks + j, of one
 * sequence number whose parity is the slot's); the first member's on a tie.
 * Its generation of every table block in @gen, its sequence number in
 * tr->cseq. 1 found, 0 none (*@seen: a block of one that is not blank was
 * seen), -1 on an I/O error.
 */
static int tier_load_vec(struct tier *tr, struct member *m, int n, uint64_t *gen, int *seen)
{
	const struct tier_layout *t = &tr->t;
	size_t bytes = (size_t)t->vec_blocks * TIER_BLOCK;
	unsigned char *buf;
	unsigned int slot, nvalid, nblank;
	uint64_t cseq, g;
	enum sb_kind kind;
	int i, found = 0, r = -1, same;
	uint32_t j, b;

	*seen = 0;
	buf = alloc_aligned(bytes);
	if (!buf)
		return -1;
	for (i = 0; i < n; i++) {
		for (slot = 0; slot < 2; slot++) {
			if (read_full(&m[i], buf, bytes, tier_vec_sector(t, slot) * SECTOR))
				goto out;
			cseq = 0;
			nvalid = nblank = 0;
			same = 1;
			for (j = 0; j < t->vec_blocks; j++) {
				kind = tier_blk_check(buf + (size_t)j * TIER_BLOCK, tr->uuid,
						      t->blocks + slot * t->vec_blocks + j, &g);
				if (kind == SB_BLANK) {
					nblank++;
					continue;
				}
				*seen = 1;
				if (kind != SB_VALID)
					continue;
				if (nvalid++ && g != cseq)
					same = 0;
				cseq = g;
			}
			if (nblank == t->vec_blocks)
				continue;
			if (nvalid != t->vec_blocks || !same || !cseq || cseq % 2 != slot) {
				tr->damaged_vecs++;
				continue;
			}
			if (found && cseq <= tr->cseq)
				continue;
			found = 1;
			tr->cseq = cseq;
			for (b = 0; b < t->blocks; b++)
				gen[b] = get_le64(buf + (size_t)(b / TIER_VEC_PER_BLOCK) * TIER_BLOCK +
						  TIER_HDR + (b % TIER_VEC_PER_BLOCK) * 8);
		}
	}
	r = found;
out:
	free(buf);
	return r;
}

/*
 * Read the tier's mapping table as rs_tier_load() does: the newest commit
 * record any member holds whole gives every block's generation; each block
 * is then taken from the first valid copy of that generation (both table
 * copies on every member). A copy with a newer generation is a commit cut
 * short (its record never written) and is passed over, as is an older one.
 * -1 (exit 2, with a message) when the superblocks' tier cannot be laid out,
 * a member is too small, no commit record is whole, a block has no valid
 * copy of the record's generation or block 0 is for another layout. Bad
 * records are marked, not refused.
 */
static int tier_load(struct tier *tr, struct member *m, int n, const struct sb *ref)
{
	struct tier_layout *t = &tr->t;
	unsigned char *buf = NULL, *have = NULL;
	uint64_t *gen = NULL, *older = NULL, *newer = NULL, g;
	int i, c, found, seen = 0, r = -1;
	size_t bytes;
	enum sb_kind kind;
	uint32_t b;

	memset(tr, 0, sizeof(*tr));
	memcpy(tr->uuid, ref->uuid, 16);
	tr->stripes = ref->stripes;
	switch (tier_layout(t, ref->n, ref->chunk, ref->stripes, ref->tier_start,
			    ref->tier_sectors)) {
	case -1:
		fprintf(stderr, "rainssd-check: the superblocks' tier (%" PRIu64
			" sectors) cannot hold its table and one stripe\n", ref->tier_sectors);
		return -1;
	case -2:
		fprintf(stderr, "rainssd-check: the superblocks' tier (%" PRIu64
			" sectors) would hold more than 2^24 stripes\n", ref->tier_sectors);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (m[i].sectors < t->start + t->sectors) {
			fprintf(stderr, "rainssd-check: %s: smaller than the volume's tier (ends at sector %"
				PRIu64 ")\n", m[i].path, t->start + t->sectors);
			return -1;
		}
	bytes = (size_t)t->blocks * TIER_BLOCK;
	buf = alloc_aligned(bytes);
	tr->table = calloc(t->blocks, TIER_BLOCK);
	gen = calloc(t->blocks, sizeof(*gen));
	older = calloc(t->blocks, sizeof(*older));
	newer = calloc(t->blocks, sizeof(*newer));
	have = calloc(t->blocks, 1);
	tr->state = calloc(t->records, 1);
	tr->why = calloc(t->records, sizeof(*tr->why));
	tr->other = calloc(t->records, sizeof(*tr->other));
	if (!buf || !tr->table || !gen || !older || !newer || !have || !tr->state || !tr->why ||
	    !tr->other) {
		fprintf(stderr, "rainssd-check: out of memory\n");
		goto out;
	}
	found = tier_load_vec(tr, m, n, gen, &seen);
	if (found < 0)
		goto out;
	for (i = 0; i < n; i++) {
		for (c = 0; c < 2; c++) {
			if (read_full(&m[i], buf, bytes, tier_copy_sector(t, c, 0) * SECTOR))
				goto out;
			for (b = 0; b < t->blocks; b++) {
				kind = tier_blk_check(buf + (size_t)b * TIER_BLOCK, tr->uuid, b,
						      &g);
				if (kind != SB_BLANK)
					seen = 1;
				if (kind == SB_CORRUPT)
					tr->corrupt_copies++;
				if (kind != SB_VALID || !found)
					continue;
				if (g > gen[b]) {
					/* Written by a commit whose record is not on disk. */
					tr->torn_copies++;
					if (!newer[b] || g < newer[b])
						newer[b] = g;
					continue;
				}
				if (g < gen[b]) {
					if (g > older[b])
						older[b] = g;
					continue;
				}
				if (have[b])
					continue;
				have[b] = 1;
				memcpy(tr->table + (size_t)b * TIER_BLOCK,
				       buf + (size_t)b * TIER_BLOCK, TIER_BLOCK);
			}
		}
	}
	if (!found) {
		if (seen)
			fprintf(stderr, "rainssd-check: tier table: no commit record any member holds whole (corrupt)\n");
		else
			fprintf(stderr, "rainssd-check: tier table missing (the superblocks say the volume has one)\n");
		goto out;
	}
	/* The module's limit (rainssd-tiermap.c, RS_TIER_SEQ_LIMIT): its commits must not wrap. */
	for (b = 0; b < t->blocks && gen[b] <= TIER_SEQ_LIMIT; b++)
		;
	if (tr->cseq > TIER_SEQ_LIMIT || b < t->blocks) {
		fprintf(stderr, "rainssd-check: tier table: commit sequence too near its limit (corrupt)\n");
		goto out;
	}
	for (b = 0; b < t->blocks; b++)
		if (!have[b]) {
			fprintf(stderr, "rainssd-check: tier table: no member holds block %u whole at generation %"
				PRIu64 " (commit %" PRIu64 "): corrupt", b, gen[b], tr->cseq);
			if (older[b])
				fprintf(stderr, "; the newest older copy has generation %" PRIu64,
					older[b]);
			if (newer[b])
				fprintf(stderr, "; a copy of generation %" PRIu64
					" is of a commit cut short", newer[b]);
			fprintf(stderr, "\n");
			goto out;
		}
	if (!tier_hdr_matches(t, tr->table)) {
		fprintf(stderr, "rainssd-check: tier table made for another layout (tier size or geometry)\n");
		goto out;
	}
	r = tier_index(tr, n);
out:
	free(buf);
	free(gen);
	free(older);
	free(newer);
	free(have);
	return r;
}

/* "0-3,7": the rows set in @bits (of @rows), "none" when there are none. */
static void fmt_rows(char *out, const unsigned char *bits, unsigned int rows)
{
	unsigned int row, end;
	char *p = out;

	*p = 0;
	for (row = 0; row < rows; row = end) {
		if (!row_set(bits, row)) {
			end = row + 1;
			continue;
		}
		for (end = row + 1; end < rows && row_set(bits, end); end++)
			;
		p += sprintf(p, "%s%u", p == out ? "" : ",", row);
		if (end - row > 1)
			p += sprintf(p, "-%u", end - 1);
	}
	if (p == out)
		sprintf(out, "none");
}

#define ROWS_TEXT (TIER_MAX_ROWS * 4 + 8)

static const char *rec_state_name(unsigned int st)
{
	static const char * const names[] = { "empty", "in_tier", "superseded", "bad" };

	return st < 4 ? names[st] : "?";
}

static void print_bad_record(const struct tier *tr, uint32_t rec)
{
	const unsigned char *r = tier_rec(tr, rec);

	printf("bad tier record %u (table block %u", rec, tier_rec_block(&tr->t, rec));
	if (get_le64(r))
		printf(", stripe %" PRIu64, get_le64(r) - 1);
	printf("): %s", tr->why[rec]);
	if (tr->other[rec] != UINT32_MAX)
		printf(" (record %u)", tr->other[rec]);
	printf("\n");
}

/* --dump-tier: the layout and every record that is not empty. */
static void tier_dump(const struct tier *tr, int json)
{
	const struct tier_layout *t = &tr->t;
	unsigned int k, c, mb;
	uint32_t rec, slot;
	const unsigned char *r;
	char rows[ROWS_TEXT];
	int first = 1;

	if (json)
		printf("{\"tier\": {\"start\": %" PRIu64 ", \"sectors\": %" PRIu64
		       ", \"chunk_sectors\": %u, \"members\": %u, \"rows\": %u, \"blocks\": %u"
		       ", \"vec_blocks\": %u, \"commit\": %" PRIu64
		       ", \"slots_start\": %" PRIu64 ", \"slots\": %u, \"capacity\": %u"
		       ", \"stripes\": %u, \"written_stripes\": %" PRIu64 ", \"bad_records\": %u}"
		       ", \"records\": [",
		       t->start, t->sectors, t->chunk, t->n, t->rows, t->blocks, t->vec_blocks,
		       tr->cseq, t->slots_start, t->slots, t->records, tr->used, tr->written,
		       tr->bad);
	else
		printf("tier: member sectors %" PRIu64 "-%" PRIu64 ", table %u blocks (2 copies)"
		       ", commit record %u blocks (2 slots), %u chunk slots per member from sector %"
		       PRIu64 ", %u rows per chunk\n"
		       "tier: commit %" PRIu64 ": %u of %u stripes in it, %" PRIu64
		       " stripes written, %u bad records\n",
		       t->start, t->start + t->sectors - 1, t->blocks, t->vec_blocks, t->slots,
		       t->slots_start, t->rows, tr->cseq, tr->used, t->records, tr->written,
		       tr->bad);
	for (rec = 0; rec < t->records; rec++) {
		r = tier_rec(tr, rec);
		if (tr->state[rec] == REC_EMPTY)
			continue;
		if (json) {
			printf("%s{\"record\": %u, \"block\": %u, \"stripe\": ", first ? "" : ", ",
			       rec, tier_rec_block(t, rec));
			if (get_le64(r))
				printf("%" PRIu64, get_le64(r) - 1);
			else
				printf("null");
			printf(", \"seq\": %" PRIu64 ", \"state\": \"%s\"", get_le64(r + 8),
			       rec_state_name(tr->state[rec]));
			if (tr->state[rec] == REC_BAD)
				printf(", \"why\": \"%s\"", tr->why[rec]);
			if (tr->other[rec] != UINT32_MAX)
				printf(", \"other_record\": %u", tr->other[rec]);
			printf(", \"chunks\": [");
		} else {
			printf("record %u (block %u): ", rec, tier_rec_block(t, rec));
			if (get_le64(r))
				printf("stripe %" PRIu64, get_le64(r) - 1);
			else
				printf("empty");
			printf(" seq %" PRIu64, get_le64(r + 8));
			if (tr->state[rec] == REC_OLD)
				printf(", superseded by record %u", tr->other[rec]);
			if (tr->state[rec] == REC_BAD) {
				printf(", bad: %s", tr->why[rec]);
				if (tr->other[rec] != UINT32_MAX)
					printf(" (record %u)", tr->other[rec]);
			}
			printf("\n");
		}
		first = 0;
		for (k = 0; k < t->n - 1; k++) {
			/* A bad record's rows beyond the chunk are shown too. */
			fmt_rows(rows, rec_rows(t, r, k),
				 tr->state[rec] == REC_BAD ? t->pbytes * 8 : t->rows);
			if (json)
				printf("%s{\"copies\": [", k ? ", " : "");
			else
				printf("  chunk %u:", k);
			for (c = 0; c < 2; c++) {
				rec_copy(t, r, k, c, &mb, &slot);
				if (json)
					printf("%s{\"member\": %u, \"slot\": %u, \"sector\": %"
					       PRIu64 "}", c ? ", " : "", mb, slot,
					       tier_slot_sector(t, slot));
				else
					printf(" %u:%" PRIu64, mb, tier_slot_sector(t, slot));
			}
			if (json)
				printf("], \"rows\": \"%s\"}", rows);
			else
				printf(" rows %s\n", rows);
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("]}\n");
}

/*
 * Compare the two copies of every row in the tier of every stripe in it
 * below @stripes: one chunk of each copy read at a time. -1 on an I/O
 * error.
 */
static int tier_check(const struct tier *tr, struct member *m, uint64_t stripes, int quiet,
		      int json, struct tier_result *res)
{
	const struct tier_layout *t = &tr->t;
	size_t chunk_bytes = (size_t)t->chunk * SECTOR, row_bytes = TIER_ROW_SECTORS * SECTOR;
	unsigned char *buf[2], rows[TIER_MAX_ROWS / 8];
	unsigned int k, c, row, sec, mb[2];
	uint64_t s, sectors, sector[2];
	const unsigned char *r, *bits;
	char text[ROWS_TEXT];
	uint32_t rec, slot;
	int ret = -1, any;

	memset(res, 0, sizeof(*res));
	buf[0] = alloc_aligned(chunk_bytes);
	buf[1] = alloc_aligned(chunk_bytes);
	if (!buf[0] || !buf[1])
		goto out;
	for (rec = 0; rec < t->records; rec++) {
		if (tr->state[rec] != REC_USED)
			continue;
		r = tier_rec(tr, rec);
		s = get_le64(r) - 1;
		if (s >= stripes)
			continue;
		res->stripes++;
		for (k = 0; k < t->n - 1; k++) {
			bits = rec_rows(t, r, k);
			if (all_zero(bits, t->pbytes))
				continue;
			for (c = 0; c < 2; c++) {
				rec_copy(t, r, k, c, &mb[c], &slot);
				sector[c] = tier_slot_sector(t, slot);
				if (read_full(&m[mb[c]], buf[c], chunk_bytes, sector[c] * SECTOR))
					goto out;
			}
			memset(rows, 0, sizeof(rows));
			sectors = 0;
			any = 0;
			for (row = 0; row < t->rows; row++) {
				if (!row_set(bits, row))
					continue;
				for (sec = 0; sec < TIER_ROW_SECTORS; sec++) {
					size_t off = row * row_bytes + sec * SECTOR;

					if (!memcmp(buf[0] + off, buf[1] + off, SECTOR))
						continue;
					sectors++;
					rows[row / 8] |= 1U << (row % 8);
					any = 1;
				}
			}
			if (!any)
				continue;
			res->chunks++;
			res->sectors += sectors;
			if (!quiet && !json) {
				fmt_rows(text, rows, t->rows);
				printf("tier stripe %" PRIu64 " chunk %u: copies %u:%" PRIu64 " and %u:%"
				       PRIu64 " differ in %" PRIu64 " sectors, rows %s\n",
				       s, k, mb[0], sector[0], mb[1], sector[1], sectors, text);
			}
			if (json && res->nlisted < MAX_LISTED) {
				struct tier_mismatch *nl = realloc(res->list, (res->nlisted + 1) *
								   sizeof(*nl));

				if (!nl) {
					fprintf(stderr, "rainssd-check: out of memory\n");
					goto out;
				}
				res->list = nl;
				nl += res->nlisted++;
				nl->stripe = s;
				nl->k = k;
				nl->sectors = sectors;
				for (c = 0; c < 2; c++) {
					nl->m[c] = mb[c];
					nl->sector[c] = sector[c];
				}
				memcpy(nl->rows, rows, sizeof(rows));
			}
		}
	}
	ret = 0;
out:
	free(buf[0]);
	free(buf[1]);
	return ret;
}

static void tier_json(const struct tier *tr, const struct tier_result *res)
{
	const struct tier_mismatch *x;
	char text[ROWS_TEXT];
	uint32_t rec;
	size_t i;
	int first = 1;

	printf("{\"commit\": %" PRIu64 ", \"stripes\": %u, \"capacity\": %u, \"stripes_checked\": %"
	       PRIu64 ", \"written_stripes\": %" PRIu64 ", \"mismatched_sectors\": %" PRIu64
	       ", \"mismatched_chunks\": %" PRIu64 ", \"bad_records\": %u, \"mismatch_list\": [",
	       tr->cseq, tr->used, tr->t.records, res->stripes, tr->written, res->sectors,
	       res->chunks, tr->bad);
	for (i = 0; i < res->nlisted; i++) {
		x = &res->list[i];
		fmt_rows(text, x->rows, tr->t.rows);
		printf("%s{\"stripe\": %" PRIu64 ", \"chunk\": %u, \"copies\": [\"%u:%" PRIu64
		       "\", \"%u:%" PRIu64 "\"], \"sectors\": %" PRIu64 ", \"rows\": \"%s\"}",
		       i ? ", " : "", x->stripe, x->k, x->m[0], x->sector[0], x->m[1], x->sector[1],
		       x->sectors, text);
	}
	printf("], \"mismatch_list_truncated\": %s, \"bad_record_list\": [",
	       res->chunks > res->nlisted ? "true" : "false");
	for (rec = 0; rec < tr->t.records; rec++) {
		if (tr->state[rec] != REC_BAD)
			continue;
		printf("%s{\"record\": %u, \"why\": \"%s\"}", first ? "" : ", ", rec, tr->why[rec]);
		first = 0;
	}
	printf("]}");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data-offset", required_argument, NULL, 'o' },
		{ "stripes", required_argument, NULL, 's' },
		{ "length", required_argument, NULL, 'l' },
		{ "tier", no_argument, NULL, 't' },
		{ "no-tier", no_argument, NULL, 'T' },
		{ "dump-tier", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "progress", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t offset = 32768, stripes = 0, length = 0, chunk = 0, bad = 0, s, avail;
	int have_stripes = 0, have_length = 0, have_offset = 0, json = 0, quiet = 0;
	int progress = 0, want_tier = 0, no_tier = 0, dump = 0, check_tier = 0;
	uint64_t *listed = NULL;
	size_t nlisted = 0, chunk_bytes, batch, i;
	struct member m[MAX_DEVS];
	struct tier tr;
	struct tier_result tres;
	const struct sb *ref;
	unsigned char *acc;
	int c, n, opnd, last_pct = -1, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (parse_u64(optarg, &offset))
				goto bad_arg;
			have_offset = 1;
			break;
		case 's':
			if (parse_u64(optarg, &stripes))
				goto bad_arg;
			have_stripes = 1;
			break;
		case 'l':
			if (parse_u64(optarg, &length))
				goto bad_arg;
			have_length = 1;
			break;
		case 't':
			want_tier = 1;
			break;
		case 'T':
			no_tier = 1;
			break;
		case 'd':
			dump = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'p':
			progress = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* A first operand that is a number is the chunk size; else it is a member. */
	opnd = optind;
	if (optind < argc && !parse_u64(argv[optind], &chunk)) {
		if (chunk < MIN_CHUNK || chunk > MAX_CHUNK || (chunk & (chunk - 1))) {
			fprintf(stderr, "rainssd-check: chunk must be a power of two from 8 to 2048 sectors\n");
			return 2;
		}
		opnd++;
	}
	if (argc - opnd < MIN_DEVS) {
		fprintf(stderr, "rainssd-check: need a chunk size and at least 3 members\n");
		usage(stderr);
		return 2;
	}
	n = argc - opnd;
	if (n > MAX_DEVS) {
		fprintf(stderr, "rainssd-check: at most %d members\n", MAX_DEVS);
		return 2;
	}
	if (have_stripes && have_length) {
		fprintf(stderr, "rainssd-check: give --stripes or --length, not both\n");
		return 2;
	}
	if (want_tier && no_tier) {
		fprintf(stderr, "rainssd-check: give --tier or --no-tier, not both\n");
		return 2;
	}
	if (dump && no_tier) {
		fprintf(stderr, "rainssd-check: --dump-tier with --no-tier\n");
		return 2;
	}

	for (i = 0; i < (size_t)n; i++) {
		m[i].path = argv[opnd + i];
		m[i].buf = NULL;
		if (open_member(&m[i]))
			return 2;
	}
	if (read_superblocks(m, n, &ref))
		return 2;
	if (ref) {
		if (chunk && chunk != ref->chunk) {
			fprintf(stderr, "rainssd-check: chunk %" PRIu64 " given, the superblocks say %u\n",
				chunk, ref->chunk);
			return 2;
		}
		if ((unsigned int)n != ref->n) {
			fprintf(stderr, "rainssd-check: %d members given, the superblocks say %u\n",
				n, ref->n);
			return 2;
		}
		if (have_offset && offset != ref->data_offset) {
			fprintf(stderr, "rainssd-check: data offset %" PRIu64
				" given, the superblocks say %" PRIu64 "\n",
				offset, ref->data_offset);
			return 2;
		}
		chunk = ref->chunk;
		offset = ref->data_offset;
		check_tier = ref->tier_sectors && !no_tier;
	} else if (!chunk) {
		fprintf(stderr, "rainssd-check: no chunk size given and the members have no superblock\n");
		return 2;
	}
	if ((want_tier || dump) && !check_tier) {
		fprintf(stderr, "rainssd-check: the volume has no RAID1 tier (%s)\n",
			ref ? "superblock format 1" : "no superblock");
		return 2;
	}
	if (have_length) {
		uint64_t sd = chunk * (n - 1);

		if (length % sd) {
			fprintf(stderr, "rainssd-check: length %" PRIu64
				" is not a whole number of %" PRIu64 "-sector stripes\n",
				length, sd);
			return 2;
		}
		stripes = length / sd;
	}

	chunk_bytes = chunk * SECTOR;
	batch = BATCH_BYTES > chunk_bytes ? BATCH_BYTES / chunk_bytes : 1;
	avail = UINT64_MAX;
	for (i = 0; i < (size_t)n; i++) {
		if (m[i].sectors < offset) {
			fprintf(stderr, "rainssd-check: %s: smaller than the data offset\n",
				m[i].path);
			return 2;
		}
		if ((m[i].sectors - offset) / chunk < avail)
			avail = (m[i].sectors - offset) / chunk;
	}
	if (ref) {
		/* The volume ends where its superblocks say (a tier follows it). */
		if (avail < ref->stripes) {
			fprintf(stderr, "rainssd-check: the members hold %" PRIu64
				" stripes, the superblocks say the volume has %" PRIu64 "\n",
				avail, ref->stripes);
			return 2;
		}
		avail = ref->stripes;
	}
	if (!have_stripes && !have_length)
		stripes = avail;
	if (stripes > avail) {
		fprintf(stderr, "rainssd-check: %" PRIu64 " stripes asked, %s %" PRIu64 "\n",
			stripes, ref ? "the volume has" : "members hold", avail);
		return 2;
	}

	if (check_tier) {
		if (tier_load(&tr, m, n, ref))
			return 2;
		if (tr.corrupt_copies)
			fprintf(stderr, "rainssd-check: tier table: %u corrupt block copies passed over (another is whole)\n",
				tr.corrupt_copies);
		if (tr.torn_copies)
			fprintf(stderr, "rainssd-check: tier table: %u block copies newer than commit %"
				PRIu64 " passed over (a commit cut short)\n", tr.torn_copies, tr.cseq);
		if (tr.damaged_vecs)
			fprintf(stderr, "rainssd-check: tier table: %u commit record copies neither whole nor blank passed over\n",
				tr.damaged_vecs);
		if (dump) {
			tier_dump(&tr, json);
			return tr.bad ? 1 : 0;
		}
		if (!quiet && !json) {
			char u[40];

			fmt_uuid(u, ref->uuid);
			printf("volume %s: a RAID1 tier of %" PRIu64 " sectors at member sector %"
			       PRIu64 " (superblock format 2): checking its mirror copies too\n",
			       u, ref->tier_sectors, ref->tier_start);
			for (s = 0; s < tr.t.records; s++)
				if (tr.state[s] == REC_BAD)
					print_bad_record(&tr, s);
		}
	}

	for (i = 0; i < (size_t)n; i++) {
		m[i].buf = alloc_aligned(batch * chunk_bytes);
		if (!m[i].buf)
			return 2;
	}
	acc = alloc_aligned(chunk_bytes);
	if (!acc)
		return 2;

	for (s = 0; s < stripes; s += batch) {
		uint64_t cnt = stripes - s < batch ? stripes - s : batch, b;
		uint64_t off = (offset + s * chunk) * SECTOR;

		for (i = 0; i < (size_t)n; i++)
			if (read_full(&m[i], m[i].buf, cnt * chunk_bytes, off))
				return 2;
		for (b = 0; b < cnt; b++) {
			uint64_t *a = (uint64_t *)acc;
			size_t w, words = chunk_bytes / 8, first = SIZE_MAX;

			memcpy(acc, m[0].buf + b * chunk_bytes, chunk_bytes);
			for (i = 1; i < (size_t)n; i++) {
				const uint64_t *x = (const uint64_t *)(m[i].buf + b * chunk_bytes);

				for (w = 0; w < words; w++)
					a[w] ^= x[w];
			}
			for (w = 0; w < words; w++)
				if (a[w]) {
					first = w;
					break;
				}
			if (first == SIZE_MAX)
				continue;
			bad++;
			if (!quiet && !json)
				printf("bad stripe %" PRIu64 ": member sectors %" PRIu64
				       "-%" PRIu64 ", first difference at byte %zu of the chunk\n",
				       s + b, offset + (s + b) * chunk,
				       offset + (s + b + 1) * chunk - 1, first * 8);
			if (json && nlisted < MAX_LISTED) {
				uint64_t *nl = realloc(listed, (nlisted + 1) * sizeof(*nl));

				if (!nl) {
					fprintf(stderr, "rainssd-check: out of memory\n");
					return 2;
				}
				listed = nl;
				listed[nlisted++] = s + b;
			}
		}
		if (progress && stripes) {
			int pct = (int)((s + cnt) * 100 / stripes);

			if (pct != last_pct) {
				fprintf(stderr, "\rchecking: %3d%% (%" PRIu64 "/%" PRIu64 " stripes)",
					pct, s + cnt, stripes);
				last_pct = pct;
			}
		}
	}
	if (progress)
		fprintf(stderr, "\n");
	if (check_tier && tier_check(&tr, m, stripes, quiet, json, &tres))
		return 2;

	if (json) {
		printf("{\"members\": %d, \"chunk_sectors\": %" PRIu64 ", \"data_offset\": %" PRIu64
		       ", \"stripes_checked\": %" PRIu64 ", \"bad_stripes\": %" PRIu64
		       ", \"bad_list\": [", n, chunk, offset, stripes, bad);
		for (i = 0; i < nlisted; i++)
			printf("%s%" PRIu64, i ? ", " : "", listed[i]);
		printf("], \"bad_list_truncated\": %s, \"tier\": ", bad > nlisted ? "true" : "false");
		if (check_tier)
			tier_json(&tr, &tres);
		else
			printf("null");
		printf("}\n");
	} else {
		if (check_tier)
			printf("checked the tier: %" PRIu64 " stripes (capacity %u), %" PRIu64
			       " mismatched sectors, %u bad records (table at commit %" PRIu64 ")\n",
			       tres.stripes, tr.t.records, tres.sectors, tr.bad, tr.cseq);
		printf("checked %" PRIu64 " stripes, %" PRIu64 " bad\n", stripes, bad);
	}
	ret = bad ? 1 : 0;
	if (check_tier && (tres.chunks || tr.bad))
		ret = 1;
	return ret;

bad_arg:
	fprintf(stderr, "rainssd-check: bad number '%s'\n", optarg);
	return 2;
}
