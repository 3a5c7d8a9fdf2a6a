"""Unit tests of userspace-tools/rainssd-fuzz: the same seed gives the same
table lines and messages, the messages never hold a valid `fail <member>`
(as the kernel splits and parses it), and `corrupt` changes bytes only
inside the area it names (an image file stands for the member). For the
RAID1 tier: the valid line with tier_size parses and its mutations are
there, the tier's messages are there, the tier's layout is the module's
(rs_tier_layout, and rainssd-check's when it is built), `corrupt --area
tier|tier-both` stays inside one table block of one copy (or both copies),
and a forge carries a correct crc32c and what the module's loader (and
rainssd-check's copy of it) refuses, or takes when it is meant to."""
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import unittest
import importlib.util
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "rainssd-fuzz")
# rainssd-check (built by `make tools`, or given by RAINSSD_CHECK) reads the
# tier's table as the module does: when it is there and not older than its
# source, the tier's tests ask it too.
CHECK = os.environ.get("RAINSSD_CHECK") or os.path.join(HERE, "..", "rainssd-check")
CHECK_SRC = os.path.join(HERE, "..", "rainssd-check.c")
HAVE_CHECK = os.access(CHECK, os.X_OK) and (
    "RAINSSD_CHECK" in os.environ or not os.path.exists(CHECK_SRC) or
    os.path.getmtime(CHECK) >= os.path.getmtime(CHECK_SRC))
NO_CHECK = "rainssd-check is not built or older than rainssd-check.c (make tools)"


def load(path, name):
    loader = SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


fz = load(TOOL, "rainssd_fuzz")
DEVS = ["/dev/rsch0", "/dev/rsch1", "/dev/rsch2", "/dev/rsch3"]
MiB = 1 << 20


def run(*args):
    return subprocess.run([sys.executable, TOOL] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def good_sb(role=0, events=5):
    """A valid superblock copy (the layout of dm-rainssd/rainssd-sb.h)."""
    b = bytearray(fz.SB_SIZE)
    struct.pack_into("<QII16sQIIQQQIIQIIQ", b, 0, fz.SB_MAGIC, 1, 0, bytes(range(16)), events,
                     128, 4, 32768, 256, 256, role, fz.SBF_CLEAN, 1700000000, 512, 0,
                     0x1234567890abcdef)
    for m in range(4):
        struct.pack_into("<B7xQ", b, fz.SB_MEMBER_OFFSET + m * fz.SB_MEMBER_SIZE, 1, 0)
    fz.sb_fix_csum(b)
    return b


class Determinism(unittest.TestCase):
    def test_tables(self):
        a = run("tables", "--seed", 7, "--count", 200, "--len", 196608, "--chunk", 128,
                "--nosync", *DEVS)
        b = run("tables", "--seed", 7, "--count", 200, "--len", 196608, "--chunk", 128,
                "--nosync", *DEVS)
        c = run("tables", "--seed", 8, "--count", 200, "--len", 196608, "--chunk", 128,
                "--nosync", *DEVS)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)
        lines = a.stdout.decode("utf-8").split("\n")[:-1]
        self.assertEqual(len(lines), 200)
        self.assertTrue(all(l.strip() for l in lines))
        # Mutations, not noise: most lines still name the target.
        self.assertGreater(sum("rainssd" in l for l in lines), 150)

    def test_messages(self):
        a = run("messages", "--seed", "x", "--count", 300, "--members", 4)
        b = run("messages", "--seed", "x", "--count", 300, "--members", 4)
        c = run("messages", "--seed", "y", "--count", 300, "--members", 4)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)
        self.assertEqual(len(a.stdout.decode("utf-8").split("\n")[:-1]), 300)

    def test_corrupt(self):
        outs = []
        for _ in range(2):
            with tempfile.NamedTemporaryFile() as f:
                f.truncate(16 * MiB)
                f.seek(fz.SB_SECTOR * 512)
                f.write(good_sb())
                f.flush()
                r = run("corrupt", "--seed", 3, "--dev", f.name, "--area", "sb-both")
                self.assertEqual(r.returncode, 0, r.stderr)
                f.seek(0)
                outs.append((r.stdout.replace(f.name.encode(), b"DEV"), f.read()))
        self.assertEqual(outs[0], outs[1])


class NoValidFail(unittest.TestCase):
    def test_kernel_view(self):
        self.assertTrue(fz.is_valid_fail(["fail", "3"], 4))
        self.assertTrue(fz.is_valid_fail(["FaIl", "+03"], 4))
        self.assertTrue(fz.is_valid_fail(["fa\\il", "1"], 4))       # '\' escapes 'i'
        self.assertTrue(fz.is_valid_fail(["fail\u00a0", "1"], 4) is False)  # "fail\xc2", "1"
        self.assertTrue(fz.is_valid_fail(["\u00a0fail", "2"], 4) is False)
        self.assertFalse(fz.is_valid_fail(["fail", "4"], 4))
        self.assertFalse(fz.is_valid_fail(["fail", "1", "2"], 4))
        self.assertFalse(fz.is_valid_fail(["fail", "0x1"], 4))
        self.assertFalse(fz.is_valid_fail(["fail", "4294967296"], 4))
        self.assertEqual(fz.kernel_split("a\\ b  c\x0bd"), [b"a b", b"c", b"d"])

    def test_generator(self):
        for seed in range(20):
            msgs = fz.gen_messages(seed, 300, 4)
            self.assertEqual(len(msgs), 300)
            for m in msgs:
                words = m.split(" ")
                self.assertFalse(fz.is_valid_fail(words, 4), m)
                kw = fz.kernel_split(m)
                if len(kw) == 2 and kw[0].lower() == b"fail":
                    v = fz.kstrtouint_ok(kw[1])
                    self.assertTrue(v is None or v >= 4, m)
            # It does try fail, with bad arguments.
            self.assertTrue(any(m.lower().startswith("fail") for m in msgs))

    def test_fewer_members(self):
        for m in fz.gen_messages("three", 2000, 3):
            self.assertFalse(fz.is_valid_fail(m.split(" "), 3), m)


class CorruptStaysInArea(unittest.TestCase):
    def check(self, area, mode, seeds=range(5)):
        start, size = fz.AREAS[area]
        total = 13 * MiB                          # past the log's end (12 MiB)
        rnd = random.Random(area + mode)
        before = bytearray(rnd.getrandbits(8) for _ in range(64 * 1024)) * (total // (64 * 1024))
        for c in range(2):
            before[(fz.SB_SECTOR + 8 * c) * 512:(fz.SB_SECTOR + 8 * c) * 512 + fz.SB_SIZE] = \
                good_sb(events=5 + c)
        changed_any = False
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "member.img")
            for seed in seeds:
                with open(path, "wb") as f:
                    f.write(before)
                lines = fz.corrupt(seed, path, area, mode)     # in-process: quicker
                self.assertTrue(lines, "nothing printed")
                with open(path, "rb") as f:
                    after = f.read()
                self.assertEqual(len(after), total)
                self.assertEqual(after[:start], before[:start], "%s seed %s" % (area, seed))
                self.assertEqual(after[start + size:], before[start + size:],
                                 "%s seed %s" % (area, seed))
                changed_any |= after != before
        self.assertTrue(changed_any)

    def test_sb(self):
        for mode in ("flip", "overwrite", "forge"):
            self.check("sb", mode)

    def test_sb_both(self):
        for mode in ("flip", "overwrite", "forge", "mixed"):
            self.check("sb-both", mode)

    def test_bitmap(self):
        for mode in ("flip", "overwrite", "mixed"):
            self.check("bitmap", mode)

    def test_log(self):
        for mode in ("flip", "overwrite", "forge", "mixed"):
            self.check("log", mode)

    def test_one_sb_copy(self):
        """`sb` touches one copy only, and a forge leaves it with a right checksum."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.img")
            for seed in range(10):
                img = bytearray(16 * MiB)
                for c in range(2):
                    o = (fz.SB_SECTOR + 8 * c) * 512
                    img[o:o + fz.SB_SIZE] = good_sb(events=5 + c)
                with open(path, "wb") as f:
                    f.write(img)
                r = run("corrupt", "--seed", seed, "--dev", path, "--area", "sb", "--mode", "forge")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(path, "rb") as f:
                    after = f.read()
                diff = [c for c in range(2) if after[(fz.SB_SECTOR + 8 * c) * 512:][:fz.SB_SIZE]
                        != img[(fz.SB_SECTOR + 8 * c) * 512:][:fz.SB_SIZE]]
                self.assertEqual(len(diff), 1, r.stdout)
                o = (fz.SB_SECTOR + 8 * diff[0]) * 512
                self.assertTrue(fz.sb_copy_valid(bytearray(after[o:o + fz.SB_SIZE])) or
                                b"magic" in r.stdout, r.stdout)

    def test_unclean(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.img")
            img = bytearray(16 * MiB)
            o = fz.SB_SECTOR * 512
            img[o:o + fz.SB_SIZE] = good_sb()
            with open(path, "wb") as f:
                f.write(img)
            r = run("unclean", "--dev", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, "rb") as f:
                after = bytearray(f.read())
            b = after[o:o + fz.SB_SIZE]
            self.assertTrue(fz.sb_copy_valid(b))
            self.assertEqual(struct.unpack_from("<I", b, 76)[0] & fz.SBF_CLEAN, 0)
            self.assertEqual(after[:o], img[:o])
            self.assertEqual(after[o + fz.SB_SIZE:], img[o + fz.SB_SIZE:])
            r = run("unclean", "--dev", os.path.join(d, "none"))
            self.assertEqual(r.returncode, 1)

    def test_legacy(self):
        """What 1.4.0 wrote: bytes 88-135 zero, only the clean flag, the bitmap area zero."""
        for unclean in (False, True):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "m.img")
                img = bytearray(16 * MiB)
                o = fz.SB_SECTOR * 512
                sb = good_sb()
                struct.pack_into("<I", sb, 76, fz.SBF_CLEAN | 2)      # and UNCOVERED
                struct.pack_into("<Q", sb, 120, 77)
                fz.sb_fix_csum(sb)
                img[o:o + fz.SB_SIZE] = sb
                bm = fz.BITMAP_SECTOR * 512
                img[bm:bm + fz.BITMAP_BYTES] = b"\xa5" * fz.BITMAP_BYTES
                with open(path, "wb") as f:
                    f.write(img)
                r = run("legacy", "--dev", path, *(["--unclean"] if unclean else []))
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(path, "rb") as f:
                    after = bytearray(f.read())
                b = after[o:o + fz.SB_SIZE]
                self.assertTrue(fz.sb_copy_valid(b))
                self.assertEqual(struct.unpack_from("<I", b, 76)[0], 0 if unclean else fz.SBF_CLEAN)
                self.assertEqual(b[88:136], bytes(48))
                self.assertEqual(b[:12] + b[16:76], sb[:12] + sb[16:76])  # csum aside
                self.assertEqual(b[136:], sb[136:])
                self.assertEqual(after[bm:bm + fz.BITMAP_BYTES], bytes(fz.BITMAP_BYTES))
                self.assertEqual(after[:o], img[:o])
                self.assertEqual(after[bm + fz.BITMAP_BYTES:], img[bm + fz.BITMAP_BYTES:])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.img")
            img = bytearray(16 * MiB)
            sb = good_sb()
            struct.pack_into("<I", sb, 8, fz.SB_VERSION_TIER)
            fz.sb_fix_csum(sb)
            img[fz.SB_SECTOR * 512:fz.SB_SECTOR * 512 + fz.SB_SIZE] = sb
            with open(path, "wb") as f:
                f.write(img)
            r = run("legacy", "--dev", path)
            self.assertEqual(r.returncode, 1)
            self.assertIn(b"tier", r.stderr)


# ---- the RAID1 tier ----

def opt_pairs(line):
    """(key, value) of every known option word of a table line and the word after it."""
    w = line.split(" ")
    return [(w[i], w[i + 1] if i + 1 < len(w) else None) for i in range(len(w))
            if w[i] in fz.NUM_OPTS or w[i] == "tier_size"]


class TierTables(unittest.TestCase):
    def test_valid_line_parses(self):
        """The valid line, read as the target's constructor reads it."""
        for nosync in (False, True):
            w = fz.valid_words(258048, 128, DEVS, nosync, 8192)
            self.assertEqual(w[:5], ["0", "258048", "rainssd", "128", "4"])
            n = int(w[4])
            self.assertEqual(w[5:5 + n], DEVS)
            count = int(w[5 + n])
            opts = w[6 + n:]
            self.assertEqual(len(opts), count)
            self.assertEqual(opts[-2:], ["tier_size", "8192"])
            self.assertEqual("nosync" in opts, nosync)
        self.assertEqual(fz.valid_words(8, 8, DEVS[:3], False), ["0", "8", "rainssd", "8", "3"] +
                         DEVS[:3])

    def test_determinism(self):
        args = ["tables", "--len", 258048, "--chunk", 128, "--nosync", "--tier", 8192] + DEVS
        a = run(*(args[:1] + ["--seed", 5, "--count", 150] + args[1:]))
        b = run(*(args[:1] + ["--seed", 5, "--count", 150] + args[1:]))
        c = run(*(args[:1] + ["--seed", 6, "--count", 150] + args[1:]))
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)
        lines = a.stdout.decode("utf-8").split("\n")[:-1]
        self.assertEqual(len(lines), 150)
        self.assertGreater(sum("rainssd" in l for l in lines), 110)
        # The valid line with the tier, not the one without.
        self.assertGreater(sum("tier_size 8192" in l for l in lines), 50)

    def test_target_type_fits_dmsetup(self):
        """No line's third word overflows dmsetup's target type buffer: seed
        41519505 made a 16,384-character one (24 KiB of "xé") and dmsetup
        crashed (SIGSEGV) in case 25 before the kernel saw the line."""
        lines = fz.gen_tables("41519505", 10, 196608, 128, DEVS, True)
        self.assertTrue(lines[5].startswith("0 196608 x\u00e9x\u00e9"), lines[5][:40])
        lines += fz.gen_tables("type", 3000, 258048, 128, DEVS, True, 8192)
        longest = max(len(l.split(" ")[2].encode("utf-8")) for l in lines if l.count(" ") >= 2)
        self.assertLess(longest, fz.DMSETUP_TYPE_MAX)
        self.assertGreaterEqual(longest, 255)    # long target types still come

    def test_tier_mutations(self):
        lines = fz.gen_tables("tier", 1500, 258048, 128, DEVS, True, 8192)
        sizes, tunables, lowhigh = [], [], 0
        for l in lines:
            pairs = opt_pairs(l)
            sizes += [v for k, v in pairs if k == "tier_size" and v is not None]
            tunables += [(k, v) for k, v in pairs if k in fz.TIER_OPTS and v is not None]
            d = dict(pairs)
            try:
                if int(d.get("tier_low_pct", 70)) > int(d.get("tier_high_pct", 90)):
                    lowhigh += 1
            except (TypeError, ValueError):
                pass
        nums = [int(v) for v in sizes if re.fullmatch(r"[0-9]{1,20}", v)]
        self.assertIn(0, nums)
        self.assertTrue(any(0 < v < 2 * 128 for v in nums), "no tiny tier_size")
        self.assertTrue(any(v >= 4294967295 for v in nums), "no huge tier_size")
        self.assertTrue(any(v % 128 for v in nums), "no tier_size off the chunk")
        self.assertTrue(any(v % 128 == 0 and v not in (0, 8192) and v >= 1024 for v in nums),
                        "no other valid tier_size")
        self.assertTrue(any(not re.fullmatch(r"[0-9]+", v) for v in sizes), "no junk tier_size")
        self.assertGreater(lowhigh, 10)
        for key, (lo, hi) in fz.TIER_OPTS.items():
            vals = [v for k, v in tunables if k == key]
            good = [v for v in vals if re.fullmatch(r"[0-9]{1,20}", v) and lo <= int(v) <= hi]
            self.assertTrue(good, "no good %s" % key)
            self.assertTrue(len(good) < len(vals), "no bad %s" % key)
        # Without --tier the line names no tier, and its mutations add one now and then.
        plain = fz.gen_tables("tier", 1500, 258048, 128, DEVS, True)
        self.assertIn("0 258048 rainssd 128 4 %s 1 nosync" % " ".join(DEVS), plain)
        self.assertTrue(any("tier_size" in l for l in plain))
        self.assertLess(sum("tier_size" in l for l in plain), 300)


class TierMessages(unittest.TestCase):
    def test_determinism(self):
        a = run("messages", "--seed", "t", "--count", 200, "--members", 4, "--tier")
        b = run("messages", "--seed", "t", "--count", 200, "--members", 4, "--tier")
        c = run("messages", "--seed", "t", "--count", 200, "--members", 4)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, b.stdout)
        self.assertNotEqual(a.stdout, c.stdout)

    def test_vocabulary(self):
        msgs = fz.gen_messages("voc", 3000, 4, True)
        flush = [m.split(" ") for m in msgs if m.split(" ")[0].lower() == "flush_tier"]
        self.assertIn(["flush_tier"], flush)
        self.assertIn(["flush_tier", "idle"], flush)
        self.assertTrue(any(len(w) == 2 and w[1].lower() != "idle" for w in flush), "no junk")
        self.assertTrue(any(len(w) > 2 for w in flush), "no extra words")
        self.assertTrue(any(m.startswith("tier_size ") for m in msgs))
        for key, (lo, hi) in fz.TIER_OPTS.items():
            vals = [m.split(" ")[1:] for m in msgs if m.split(" ")[0] == key]
            # (an overlong number is bad without converting it: Python
            # refuses int() of more than 4300 digits)
            bad = [v for v in vals if len(v) != 1 or not re.fullmatch(r"[0-9]{1,20}", v[0]) or
                   not lo <= int(v[0]) <= hi]
            self.assertGreater(len(bad), 5, key)
        # Without --tier, fewer of them, but some.
        plain = fz.gen_messages("voc", 3000, 4)
        nt = sum(m.split(" ")[0].lower() in ("flush_tier", "tier_size") or
                 m.split(" ")[0] in fz.TIER_OPTS for m in plain)
        self.assertGreater(nt, 100)
        self.assertLess(nt, sum(m.split(" ")[0].lower() in ("flush_tier", "tier_size") or
                                m.split(" ")[0] in fz.TIER_OPTS for m in msgs))

    def test_no_valid_fail(self):
        for seed in range(10):
            for m in fz.gen_messages(seed, 1000, 4, True):
                self.assertFalse(fz.is_valid_fail(m.split(" "), 4), m)


# A volume with a tier, written here independently of the tool.

def crc32c_bitwise(data):
    """CRC-32C bit by bit (not the tool's table): the kernel's ~crc32c(~0, data)."""
    c = 0xFFFFFFFF
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def up(a, b):
    return -(-a // b)


def layout(n, chunk, stripes, start, sectors):
    """rs_tier_layout() (dm-rainssd/rainssd-tier.c) for the geometries here."""
    k = n - 1
    rows = max(1, chunk // 8)
    pbytes = up(up(rows, 8), 4) * 4
    ksize = 12 + pbytes
    rec_size = up(16 + k * ksize, 8) * 8
    rpb = 4032 // rec_size
    wb = up(stripes, 4032 * 8)
    rec_blocks = up((sectors // chunk) * n // (2 * k), rpb)
    blocks = 1 + wb + rec_blocks
    vec_blocks = up(blocks, 504)                 # the commit record: 504 generations a block
    table = up(2 * (blocks + vec_blocks) * 8, chunk) * chunk
    slots = (sectors - table) // chunk
    return dict(start=start, sectors=sectors, rows=rows, pbytes=pbytes, ksize=ksize,
                rec_size=rec_size, rpb=rpb, wb=wb, rec_blocks=rec_blocks, blocks=blocks,
                vec_blocks=vec_blocks, slots_start=start + table, slots=slots,
                records=min(slots * n // (2 * k), rec_blocks * rpb))


UUID = bytes(range(0x40, 0x50))
TIER_MAGIC = 0x3152544453534E52


def block_gen(blk, num):
    """The generation of @blk if it is a valid table block @num of UUID, else None."""
    if struct.unpack_from("<Q", blk, 0)[0] != TIER_MAGIC:
        return None
    z = bytearray(blk)
    z[12:16] = b"\0\0\0\0"
    _, fmt, crc, uuid, b, zero, gen = struct.unpack_from("<QII16sIIQ", blk, 0)
    if crc != crc32c_bitwise(bytes(z)) or fmt != 1 or uuid != UUID or b != num or zero or \
            any(blk[48:64]):
        return None
    return gen


def seal(blk, num, gen):
    struct.pack_into("<QII16sIIQ", blk, 0, TIER_MAGIC, 1, 0, UUID, num, 0, gen)
    struct.pack_into("<I", blk, 12, crc32c_bitwise(bytes(blk)))
    return blk


class TierVolume:
    """Member images (sparse files) of a volume with a tier: format 2
    superblocks, zero homes (their parity is right), the table in both copies
    on every member (block 0 only in copy 1, as a new volume leaves it; the
    other blocks in both, copy 0 the newer, copy 1 an older payload), the
    commit records (slot 1: commit 5, the newer generations; slot 0: commit
    4, the older ones), @held stripes in the tier (records 0.., some rows,
    zero slots: the copies equal)."""

    def __init__(self, d, n=4, chunk=16, stripes=40, tier=2048, held=5, off=4096):
        self.n, self.chunk, self.stripes, self.tier, self.off = n, chunk, stripes, tier, off
        self.start = off + stripes * chunk
        self.L = L = layout(n, chunk, stripes, self.start, tier)
        self.size = (self.start + tier) * 512
        self.paths = [os.path.join(d, "m%d" % m) for m in range(n)]
        recs, nxt = [], [0] * n
        for i in range(held):
            ch = []
            for k in range(n - 1):
                m0 = (i + k) % n
                m1 = (m0 + 1 + (i % (n - 1))) % n
                ch.append((m0, nxt[m0], m1, nxt[m1]))
                nxt[m0] += 1
                nxt[m1] += 1
            recs.append(((i * 7 + 3) % stripes, 10 + i, ch))
        self.recs = recs
        hdr = bytearray(4032)
        struct.pack_into("<QQIIIIIIIII", hdr, 0, L["start"], L["sectors"], chunk, n, L["rows"],
                         L["rec_size"], L["wb"], L["rec_blocks"], L["slots"], L["records"],
                         L["vec_blocks"])
        payload = {0: (None, hdr)}
        wb_new = bytearray(4032)
        for st, _, _ in recs:
            wb_new[st // 8] |= 1 << (st % 8)
        payload[1] = (bytearray(4032), wb_new)
        for rb in range(L["rec_blocks"]):
            new, old = bytearray(4032), bytearray(4032)
            for i, (st, seq, ch) in enumerate(recs):
                if i // L["rpb"] != rb:
                    continue
                o = (i % L["rpb"]) * L["rec_size"]
                struct.pack_into("<QQ", new, o, st + 1, seq)
                for k, (m0, s0, m1, s1) in enumerate(ch):
                    e = o + 16 + k * L["ksize"]
                    struct.pack_into("<BBxxII", new, e, m0, m1, s0, s1)
                    new[e + 12] = (1 << min(L["rows"], 8)) - 1 if (i + k) % 2 else 1
                if i < held - 1:                  # the older copy: all but the last record
                    old[o:o + L["rec_size"]] = new[o:o + L["rec_size"]]
            payload[1 + L["wb"] + rb] = (old, new)
        self.gens = [4 if b else 1 for b in range(L["blocks"])]     # what commit 5 names
        older = [3 if b else 1 for b in range(L["blocks"])]         # commit 4
        blocks = {}
        for b in range(L["blocks"]):
            old, new = payload[b]
            for c, (g, p) in enumerate([(4, new), (3, old)] if b else [(0, None), (1, new)]):
                if p is not None:
                    blk = bytearray(4096)
                    blk[64:] = p
                    blocks[self.block_byte(c, b)] = seal(blk, b, g)
        for slot, cseq, gens in ((0, 4, older), (1, 5, self.gens)):
            for j in range(L["vec_blocks"]):
                blk = bytearray(4096)
                for i, g in enumerate(gens[j * 504:(j + 1) * 504]):
                    struct.pack_into("<Q", blk, 64 + 8 * i, g)
                blocks[self.vec_byte(slot, j)] = seal(blk, L["blocks"] + slot * L["vec_blocks"] + j,
                                                      cseq)
        for m in range(n):
            with open(self.paths[m], "wb") as f:
                f.truncate(self.size)
                for c in range(2):
                    f.seek((2048 + 8 * c) * 512)
                    f.write(self.sb(m, 8 - c))
                for at, blk in blocks.items():
                    f.seek(at)
                    f.write(blk)
        self.pristine = [self.read(m) for m in range(n)]
        self.base = list(self.pristine)

    def sb(self, role, events):
        b = bytearray(4096)
        struct.pack_into("<QII16sQIIQQQIIQII", b, 0, fz.SB_MAGIC, 2, 0, UUID, events,
                         self.chunk, self.n, self.off, self.stripes, self.stripes, role, 1,
                         1700000000, 0, 0)
        struct.pack_into("<QQQ", b, 96, 0x1234, self.start, self.tier)
        for i in range(self.n):
            b[136 + 16 * i] = 1
        struct.pack_into("<I", b, 12, crc32c_bitwise(bytes(b)))
        return b

    def block_byte(self, c, b):
        return (self.start + (c * self.L["blocks"] + b) * 8) * 512

    def vec_byte(self, slot, j):
        return (self.start + (2 * self.L["blocks"] + slot * self.L["vec_blocks"] + j) * 8) * 512

    def where(self, byte):
        """(copy, block) of the table block copy at member byte @byte,
        (slot, "commit", j) of a commit record block, or None."""
        i = byte // 4096 - self.start // 8
        B, V = self.L["blocks"], self.L["vec_blocks"]
        if 0 <= i < 2 * B:
            return divmod(i, B)
        if 2 * B <= i < 2 * B + 2 * V:
            s, j = divmod(i - 2 * B, V)
            return s, ("commit", j)
        return None

    def block_at(self, mem, where):
        """The 4 KiB at @where in @mem, and the block number its header should have."""
        c, b = where
        if isinstance(b, tuple):
            return mem[self.vec_byte(c, b[1]):][:4096], self.L["blocks"] + c * \
                self.L["vec_blocks"] + b[1]
        return mem[self.block_byte(c, b):][:4096], b

    def read(self, m):
        with open(self.paths[m], "rb") as f:
            return f.read()

    def restore(self):
        """The tier's table area (all a corrupt writes) as it was written."""
        lo = self.start * 512
        hi = self.vec_byte(2, 0)
        for m in range(self.n):
            with open(self.paths[m], "r+b") as f:
                f.seek(lo)
                f.write(self.pristine[m][lo:hi])
        self.base = list(self.pristine)

    def changed(self, m):
        """The 4 KiB blocks of member @m that differ from what it held before."""
        a, b = self.base[m], self.read(m)
        assert len(a) == len(b)
        return [i for i in range(0, len(a), 4096) if a[i:i + 4096] != b[i:i + 4096]]

    def check(self):
        """rainssd-check --dump-tier over the members: (exit status, output)."""
        r = subprocess.run([CHECK, "--dump-tier"] + self.paths, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return r.returncode, r.stdout.decode("utf-8", "replace")


# n, chunk, stripes, tier, stripes in the tier: two record blocks; the VM case's
# geometry (chunk 128, 4 MiB of tier); 64 rows a chunk and records with tail
# padding; five members and an empty tier.
GEOMETRIES = [dict(), dict(chunk=128, stripes=64, tier=8192),
              dict(chunk=512, stripes=16, tier=16384), dict(n=5, chunk=64, stripes=30, tier=4096,
                                                            held=0)]


def expect_of(lines):
    last = lines[-1].split(": ", 1)[1]
    m = re.match(r"expect: (refused|activates) ", last)
    assert m, last
    return m.group(1)


def forge_kind(lines):
    for l in lines:
        m = re.search(r": forge tier (?:block \d+ copy \d|commit record) "
                      r"\(byte \d+(?:, slot \d)?\): ([a-z-]+): ", l)
        if m:
            return m.group(1)
    return None


class TierLayoutTests(unittest.TestCase):
    def test_known_layouts(self):
        # The VM case's: 4 members, 64 KiB chunks, 4 MiB of tier.
        t = fz.TierLayout(4, 128, 448, 90112, 8192)
        self.assertEqual((t.rows, t.rec_size, t.recs_per_block, t.wb_blocks, t.rec_blocks,
                          t.blocks, t.vec_blocks, t.slots_start, t.slots, t.records),
                         (16, 64, 63, 1, 1, 3, 1, 90112 + 128, 63, 42))
        self.assertEqual(t.vec_byte(1), (90112 + (2 * 3 + 1) * 8) * 512)
        # KUnit rs_tier_layout_sizes: 46 blocks, one commit record block, slots 768 sectors on.
        t = fz.TierLayout(4, 128, 10000, 1 << 20, 4096 * 128)
        self.assertEqual((t.rec_blocks, t.blocks, t.vec_blocks, t.slots_start - (1 << 20),
                          t.slots, t.records), (44, 46, 1, 768, 4090, 4090 * 4 // 6))
        for g in GEOMETRIES + [dict(n=8, chunk=8, stripes=300000, tier=1 << 20),
                               dict(n=3, chunk=1024, stripes=5, tier=1 << 16),
                               dict(n=4, chunk=8, stripes=1000, tier=1 << 22)]:
            g = dict(dict(n=4, chunk=16, stripes=40, tier=2048), **g)
            t = fz.TierLayout(g["n"], g["chunk"], g["stripes"], 5000, g["tier"])
            L = layout(g["n"], g["chunk"], g["stripes"], 5000, g["tier"])
            for k in ("rows", "pbytes", "ksize", "rec_size", "blocks", "vec_blocks",
                      "slots_start", "slots", "records"):
                self.assertEqual(getattr(t, k), L[k], (g, k))
            self.assertEqual((t.wb_blocks, t.rec_blocks, t.recs_per_block),
                             (L["wb"], L["rec_blocks"], L["rpb"]))
        self.assertGreater(fz.TierLayout(4, 8, 1000, 0, 1 << 22).vec_blocks, 1)

    def test_impossible(self):
        with self.assertRaises(fz.FuzzError):
            fz.TierLayout(4, 128, 448, 90112, 128)            # no room for the table
        with self.assertRaises(fz.FuzzError):
            fz.TierLayout(4, 128, 448, 90112, 0)
        with self.assertRaises(fz.FuzzError):
            fz.TierLayout(4, 8, 448, 90112, 1 << 28)          # more than 2^24 records

    def test_model_loads(self):
        """The tool reads the model's table as the loader would: commit 5, the
        generations it names, the records."""
        with tempfile.TemporaryDirectory() as d:
            v = TierVolume(d)
            dev = fz.Dev(v.paths[3])
            try:
                uuid, stripes, t = fz.tier_of(dev)
                cseq, gens, table = fz.tier_member_view(t, uuid, *fz.read_tier_area(dev, t))
            finally:
                dev.close()
            self.assertEqual((cseq, gens), (5, v.gens))
            why, held, claimed = fz.tier_index(t, table, stripes)
            self.assertIsNone(why)
            self.assertEqual(sorted(held), sorted(st for st, _, _ in v.recs))
            self.assertEqual(len(claimed), 2 * (v.n - 1) * len(v.recs))
            self.assertIsNone(fz.tier_verdict(t, table, stripes))

    @unittest.skipUnless(HAVE_CHECK, NO_CHECK)
    def test_as_rainssd_check(self):
        for g in GEOMETRIES:
            with tempfile.TemporaryDirectory() as d:
                v = TierVolume(d, **g)
                r = subprocess.run([CHECK, "--dump-tier", "--json"] + v.paths,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                self.assertEqual(r.returncode, 0, r.stderr)
                j = json.loads(r.stdout)["tier"]
                dev = fz.Dev(v.paths[2])
                try:
                    uuid, stripes, t = fz.tier_of(dev)
                finally:
                    dev.close()
                self.assertEqual((uuid, stripes), (UUID, v.stripes))
                self.assertEqual((t.start, t.sectors, t.blocks, t.slots_start, t.slots,
                                  t.records, t.rows),
                                 (j["start"], j["sectors"], j["blocks"], j["slots_start"],
                                  j["slots"], j["capacity"], j["rows"]), g)
                if "vec_blocks" in j:
                    self.assertEqual((t.vec_blocks, 5), (j["vec_blocks"], j["commit"]))


class TierCorrupt(unittest.TestCase):
    def damaged(self, v, m, count=None):
        """Where member @m changed (see TierVolume.where): only in its table area,
        and nothing on the other members."""
        for o in range(v.n):
            if o != m:
                self.assertEqual(v.changed(o), [], "member %d touched" % o)
        where = [v.where(i) for i in v.changed(m)]
        self.assertNotIn(None, where, "changed outside the tier's table and commit records")
        if count is not None:
            self.assertEqual(len(where), count, where)
        return where

    def test_one_copy(self):
        units = set()
        for g in GEOMETRIES[:2]:
            with tempfile.TemporaryDirectory() as d:
                v = TierVolume(d, **g)
                for mode in ("flip", "overwrite"):
                    for seed in range(16):
                        v.restore()
                        m = seed % v.n
                        lines = fz.corrupt(seed, v.paths[m], "tier", mode)
                        where = self.damaged(v, m, 1)
                        units.add(isinstance(where[0][1], tuple))
                        blk, num = v.block_at(v.read(m), where[0])
                        self.assertIsNone(block_gen(blk, num), lines)
                        self.assertEqual(expect_of(lines), "activates", lines)
                        if HAVE_CHECK:
                            # The other copy of the block and the other members whole.
                            rc, out = v.check()
                            self.assertEqual(rc, 0, out + "\n".join(lines))
        self.assertEqual(units, {False, True}, "table blocks and commit record blocks")

    def test_both_copies_every_member(self):
        units = set()
        for g in GEOMETRIES[:3]:
            with tempfile.TemporaryDirectory() as d:
                v = TierVolume(d, **g)
                for seed in range(6):
                    for mode in (("flip", "overwrite", "mixed")[seed % 3],):
                        v.restore()
                        blocks = set()
                        for m in range(v.n):
                            lines = fz.corrupt(seed, v.paths[m], "tier-both", mode)
                            self.assertIsNone(forge_kind(lines), "mixed forged for tier-both")
                            self.assertTrue(lines[-1].split(": ", 1)[1].startswith(
                                "expect: refused once"), lines)
                            where = self.damaged(v, m, 2)
                            self.assertEqual({c for c, _ in where}, {0, 1})
                            blocks |= {b for _, b in where}
                            mem = v.read(m)
                            for w in where:
                                self.assertIsNone(block_gen(*v.block_at(mem, w)))
                            v.base[m] = mem           # what the next member is compared to
                        self.assertEqual(len(blocks), 1, "not the same block everywhere")
                        b = blocks.pop()
                        units.add(isinstance(b, tuple))
                        if HAVE_CHECK:
                            rc, out = v.check()
                            self.assertEqual(rc, 2, out)
                            self.assertIn("no commit record any member holds whole"
                                          if isinstance(b, tuple) else
                                          "no member holds block %d whole" % b, out)
        self.assertEqual(units, {False, True}, "table blocks and commit record blocks")

    def test_deterministic(self):
        with tempfile.TemporaryDirectory() as d:
            v = TierVolume(d)
            outs = []
            for _ in range(2):
                v.restore()
                r = run("corrupt", "--seed", "s", "--dev", v.paths[1], "--area", "tier",
                        "--mode", "forge")
                self.assertEqual(r.returncode, 0, r.stderr)
                outs.append((r.stdout, v.read(1)))
            self.assertEqual(outs[0], outs[1])

    def forged(self, v, m, area, lines, kind):
        """Check what a forge wrote on member @m: the table block in one copy
        (tier) or both, and/or a whole commit record, each with a right crc32c."""
        mem = v.read(m)
        where = self.damaged(v, m)
        tab = [w for w in where if not isinstance(w[1], tuple)]
        rec = [w for w in where if isinstance(w[1], tuple)]
        for w in where:
            self.assertIsNotNone(block_gen(*v.block_at(mem, w)),
                                 "%s: a bad crc32c or header at %s" % (kind, w))
        blocks = {b for _, b in tab}
        self.assertLessEqual(len(blocks), 1)
        if tab:
            self.assertEqual(len(tab), 1 if area == "tier" else 2)
            b = blocks.pop()
            gen = {block_gen(*v.block_at(mem, w)) for w in tab}
            self.assertEqual(gen, {v.gens[b] + 1})
        if kind == "torn":
            self.assertEqual(rec, [], "a cut commit has no record")
            self.assertTrue(tab)
        elif kind not in ("missing-generation", "commit-record", "wrong-slot", "seq-limit"):
            self.assertTrue(tab, kind)
        if kind == "seq-limit" and not tab:
            # one record past the limit, in the slot of its parity
            self.assertEqual(len(rec), v.L["vec_blocks"], kind)
            blk, _ = v.block_at(mem, rec[0])
            num = struct.unpack_from("<Q", blk, 40)[0]
            self.assertGreater(num, fz.TIER_SEQ_LIMIT)
            self.assertEqual({s for s, _ in rec}, {num % 2})
        elif kind != "torn":
            self.assertEqual(len(rec), v.L["vec_blocks"], kind)
            self.assertEqual(len({s for s, _ in rec}), 1)
            slot = rec[0][0]
            self.assertEqual(slot, 1 if kind == "wrong-slot" else 0)   # commit 6 goes in slot 0
            blk, _ = v.block_at(mem, rec[0])
            self.assertEqual(struct.unpack_from("<Q", blk, 40)[0], 6)
            if tab:
                self.assertEqual(struct.unpack_from("<Q", blk, 64 + 8 * b)[0], v.gens[b] + 1)

    def test_forge_kinds(self):
        """Each kind: what it writes carries a right crc32c (a table block at a
        higher generation, a newer commit record), and it is refused or taken
        as its kind says -- by the tool's model of the loader and, when it is
        built, by rainssd-check's."""
        seen = set()
        for gi, g in enumerate(GEOMETRIES):
            with tempfile.TemporaryDirectory() as d:
                v = TierVolume(d, **g)
                for ki, kind in enumerate(fz.TIER_FORGE_REFUSED + fz.TIER_FORGE_VALID):
                    # one copy or both, by turns
                    for area, seed in ((("tier", 1), ("tier-both", 2))[(gi + ki) % 2],):
                        v.restore()
                        m = (seed + len(kind)) % v.n
                        try:
                            lines = fz.corrupt(seed, v.paths[m], area, "forge", kind)
                        except fz.FuzzError:
                            # Not here: rows-beyond with 64 rows a chunk (no spare bits),
                            # seq and superseded with no record in the tier.
                            self.assertTrue(kind == "rows-beyond" and g.get("chunk") == 512 or
                                            kind in ("seq", "superseded") and
                                            g.get("held") == 0, (kind, g))
                            continue
                        seen.add(kind)
                        self.assertEqual(forge_kind(lines), kind, lines)
                        self.forged(v, m, area, lines, kind)
                        want = "refused" if kind in fz.TIER_FORGE_REFUSED else "activates"
                        self.assertEqual(expect_of(lines), want, lines)
                        if HAVE_CHECK:
                            rc, out = v.check()
                            if want == "refused":
                                self.assertIn(rc, (1, 2), out)
                                self.assertRegex(out, "bad: |another layout|"
                                                 "no member holds block|near its limit", out)
                            else:
                                self.assertEqual(rc, 0, out + "\n".join(lines))
        self.assertEqual(seen, set(fz.TIER_FORGE_REFUSED + fz.TIER_FORGE_VALID))

    def test_forge_refusal_reasons(self):
        """The record faults the loader must refuse, each for its reason (the
        model of rs_tier_index over the table the new commit record names)."""
        reasons = {"member-range": "member or slot out of range",
                   "slot-range": "member or slot out of range",
                   "same-member": "both copies on one member",
                   "stripe-beyond": "stripe beyond the volume",
                   "slot-clash": "two records claim one chunk slot",
                   "padding": "non-zero padding", "rows-beyond": "rows beyond the chunk",
                   "empty-not-zero": "empty record that is not zero",
                   "same-seq": "one stripe with one sequence number",
                   "layout": "another layout", "missing-generation": "no member holds",
                   "seq-limit": "near its limit"}
        with tempfile.TemporaryDirectory() as d:
            for g in (dict(chunk=128, stripes=64, tier=8192), GEOMETRIES[3]):
                v = TierVolume(d, **g)
                for kind, why in reasons.items():
                    for seed in range(3):
                        v.restore()
                        lines = fz.corrupt(seed, v.paths[seed], "tier", "forge", kind)
                        self.assertIn(why, lines[-1], lines)

    def test_forge_seeds(self):
        """Seeded forges: the five record faults of the module's loader come up,
        refused, and every expectation is what rainssd-check says."""
        kinds = {}
        with tempfile.TemporaryDirectory() as d:
            v = TierVolume(d, chunk=128, stripes=64, tier=8192)
            for seed in range(60):
                v.restore()
                lines = fz.corrupt(seed, v.paths[seed % v.n], "tier", "forge")
                kinds[forge_kind(lines)] = expect_of(lines)
                if HAVE_CHECK:
                    rc, out = v.check()
                    self.assertEqual(rc != 0, expect_of(lines) == "refused", out + str(lines))
        for k in ("member-range", "slot-range", "same-member", "stripe-beyond", "slot-clash"):
            self.assertEqual(kinds.get(k), "refused", (k, kinds))
        self.assertIn("activates", kinds.values())

    def test_record_check(self):
        """tier_rec_check() refuses each field the module's does."""
        t = fz.TierLayout(4, 128, 100, 50000, 8192)
        r = bytearray(t.rec_size)
        struct.pack_into("<QQ", r, 0, 8, 3)
        for k in range(3):
            struct.pack_into("<BBxxII", r, 16 + k * t.ksize, k, k + 1, k, k)
        self.assertIsNone(fz.tier_rec_check(t, r, 100))
        for what, off, val, why in [
                ("stripe", 0, struct.pack("<Q", 101), "beyond the volume"),
                ("seq", 8, struct.pack("<Q", fz.TIER_SEQ_LIMIT + 1), "near its limit"),
                ("member", 16, bytes([4]), "out of range"),
                ("slot", 16 + 8, struct.pack("<I", t.slots), "out of range"),
                ("same member", 17, bytes([0]), "one member"),
                ("padding", 18, bytes([1]), "padding"),
                ("rows", 16 + 12 + 2, bytes([1]), "rows beyond")]:
            x = bytearray(r)
            x[off:off + len(val)] = val
            self.assertIn(why, fz.tier_rec_check(t, x, 100) or "", what)

    def test_no_tier(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.img")
            img = bytearray(16 * MiB)
            img[fz.SB_SECTOR * 512:fz.SB_SECTOR * 512 + fz.SB_SIZE] = good_sb()
            with open(path, "wb") as f:
                f.write(img)
            for area in ("tier", "tier-both"):
                r = run("corrupt", "--seed", 1, "--dev", path, "--area", area)
                self.assertEqual(r.returncode, 1)
                self.assertIn(b"no RAID1 tier", r.stderr)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), img)
            r = run("corrupt", "--seed", 1, "--dev", path, "--area", "sb", "--kind", "padding")
            self.assertEqual(r.returncode, 1)


class Usage(unittest.TestCase):
    def test_exit_codes(self):
        self.assertEqual(run("--help").returncode, 0)
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("tables", "--seed", 1).returncode, 2)
        self.assertEqual(run("corrupt", "--seed", 1, "--dev", "/x", "--area", "nope").returncode, 2)
        r = run("corrupt", "--seed", 1, "--dev", "/nonexistent/x", "--area", "sb")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"fail <member index>", run("--help").stdout + run("messages", "--help").stdout)


if __name__ == "__main__":
    unittest.main()
