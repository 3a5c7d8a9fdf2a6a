// SPDX-License-Identifier: GPL-2.0
/*
 * rainssd-check: verify the RAID-5 parity of a dm-rainssd volume by reading
 * its raw members.
 *
 * The layout is md's left-symmetric RAID-5 with the data area starting at
 * --data-offset sectors on every member (32768, 16 MiB, by default: the
 * module's RS_DATA_OFFSET). Stripe s occupies member sectors
 * [offset + s * chunk, offset + (s + 1) * chunk) on every member, one of
 * which holds the parity, so a stripe is consistent exactly when the XOR of
 * its N chunks is zero; which member holds parity does not matter here.
 *
 * Exit status: 0 every stripe checked is consistent, 1 some stripe is not,
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

#define SECTOR 512ULL
#define MAX_DEVS 32
#define BATCH_BYTES (1ULL << 20)
#define MAX_LISTED 1000

struct member {
	const char *path;
	int fd;
	uint64_t sectors;
	unsigned char *buf;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rainssd-check [options] <chunk_sectors> <member>...\n"
"Check the parity of every stripe of a dm-rainssd (md RAID-5) volume by\n"
"reading its raw members, in table order. Take the volume down (or at least\n"
"quiesce it) first: a stripe being written can look inconsistent.\n"
"\n"
"Options:\n"
"  --data-offset S  sector where the data area starts on each member\n"
"                   (default 32768)\n"
"  --stripes N      check the first N stripes\n"
"  --length L       check the stripes of a volume of L sectors (the table's\n"
"                   length)\n"
"                   default: every whole stripe the smallest member holds\n"
"  --json           print the result as one JSON object\n"
"  --quiet          print only the summary line\n"
"  --progress       show progress on stderr\n"
"  -h, --help       this text\n"
"\n"
"Exit status: 0 consistent, 1 bad stripes found, 2 usage or I/O error.\n");
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "data-offset", required_argument, NULL, 'o' },
		{ "stripes", required_argument, NULL, 's' },
		{ "length", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "progress", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t offset = 32768, stripes = 0, length = 0, chunk, bad = 0, s, avail;
	int have_stripes = 0, have_length = 0, json = 0, quiet = 0, progress = 0;
	uint64_t *listed = NULL;
	size_t nlisted = 0, chunk_bytes, batch, i;
	struct member m[MAX_DEVS];
	unsigned char *acc;
	int c, n, last_pct = -1;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (parse_u64(optarg, &offset))
				goto bad_arg;
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
	if (argc - optind < 4) {
		fprintf(stderr, "rainssd-check: need a chunk size and at least 3 members\n");
		usage(stderr);
		return 2;
	}
	if (parse_u64(argv[optind], &chunk) || chunk < 8 || chunk > 2048 ||
	    (chunk & (chunk - 1))) {
		fprintf(stderr, "rainssd-check: chunk must be a power of two from 8 to 2048 sectors\n");
		return 2;
	}
	n = argc - optind - 1;
	if (n > MAX_DEVS) {
		fprintf(stderr, "rainssd-check: at most %d members\n", MAX_DEVS);
		return 2;
	}
	if (have_stripes && have_length) {
		fprintf(stderr, "rainssd-check: give --stripes or --length, not both\n");
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
		m[i].path = argv[optind + 1 + i];
		m[i].buf = NULL;
		if (open_member(&m[i]))
			return 2;
		if (m[i].sectors < offset) {
			fprintf(stderr, "rainssd-check: %s: smaller than the data offset\n",
				m[i].path);
			return 2;
		}
		if ((m[i].sectors - offset) / chunk < avail)
			avail = (m[i].sectors - offset) / chunk;
		if (posix_memalign((void **)&m[i].buf, 4096, batch * chunk_bytes)) {
			fprintf(stderr, "rainssd-check: out of memory\n");
			return 2;
		}
	}
	if (!have_stripes && !have_length)
		stripes = avail;
	if (stripes > avail) {
		fprintf(stderr, "rainssd-check: %" PRIu64 " stripes asked, members hold %" PRIu64 "\n",
			stripes, avail);
		return 2;
	}
	if (posix_memalign((void **)&acc, 4096, chunk_bytes)) {
		fprintf(stderr, "rainssd-check: out of memory\n");
		return 2;
	}

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

	if (json) {
		printf("{\"members\": %d, \"chunk_sectors\": %" PRIu64 ", \"data_offset\": %" PRIu64
		       ", \"stripes_checked\": %" PRIu64 ", \"bad_stripes\": %" PRIu64
		       ", \"bad_list\": [", n, chunk, offset, stripes, bad);
		for (i = 0; i < nlisted; i++)
			printf("%s%" PRIu64, i ? ", " : "", listed[i]);
		printf("], \"bad_list_truncated\": %s}\n", bad > nlisted ? "true" : "false");
	} else {
		printf("checked %" PRIu64 " stripes, %" PRIu64 " bad\n", stripes, bad);
	}
	return bad ? 1 : 0;

bad_arg:
	fprintf(stderr, "rainssd-check: bad number '%s'\n", optarg);
	return 2;
}
