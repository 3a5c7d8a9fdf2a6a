"""Unit tests of userspace-tools/rainssd-admin: the superblock format of
dm-rainssd/rainssd-sb.h (encoded here independently, at the offsets of the C
structure, and cross-checked against the kernel's own rs_sb_encode() and
rs_sb_decode() compiled over the simulator's kernel shim), examine on image
files, and create, assemble, replace and detail against a stub dmsetup that
records its arguments."""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import unittest
import importlib.util
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..")
TOOL = os.path.join(TOOLS, "rainssd-admin")
REPO = os.path.join(TOOLS, "..")


def load(path, name):
    loader = SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


admin = load(TOOL, "rainssd_admin")

MAGIC = 0x3142535344534e52
MIB = 1 << 20
IMG = 20 * MIB                      # 40960 sectors: 64 stripes of 64 KiB after the 16 MiB
UUID_A = bytes.fromhex("0123456789abcdef0011223344556677")
UUID_B = bytes.fromhex("fedcba98765432100011223344556677")


def ref_crc32c(data):
    """Bitwise CRC-32C, independent of the tool's table."""
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
    return c ^ 0xFFFFFFFF


def encode_sb(uuid=UUID_A, events=5, chunk=128, n=4, data_offset=32768, stripes=64,
              resync_cp=64, role=0, flags=1, ctime=1700000000, states=None, cps=None,
              magic=MAGIC, version=1, csum=None, uncovered_to=0, tier_start=0, tier_sectors=0):
    """A superblock copy at the offsets of struct rs_sb_disk (rainssd-sb.h)."""
    states = [1] * n if states is None else states
    cps = [0] * len(states) if cps is None else cps
    b = bytearray(4096)
    struct.pack_into("<Q", b, 0, magic)
    struct.pack_into("<I", b, 8, version)
    b[16:32] = uuid
    struct.pack_into("<Q", b, 32, events)
    struct.pack_into("<II", b, 40, chunk, n)
    struct.pack_into("<QQQ", b, 48, data_offset, stripes, resync_cp)
    struct.pack_into("<II", b, 72, role, flags)
    struct.pack_into("<Q", b, 80, ctime)
    # region_stripes, pad0 and log_nonce at 88, 92, 96; tier fields at 104; members at 136
    struct.pack_into("<QQQ", b, 104, tier_start, tier_sectors, uncovered_to)
    for i, (st, cp) in enumerate(zip(states, cps)):
        b[136 + 16 * i] = st
        struct.pack_into("<Q", b, 136 + 16 * i + 8, cp)
    struct.pack_into("<I", b, 12, ref_crc32c(bytes(b)) if csum is None else csum)
    return bytes(b)


def make_image(path, copies=(None, None), size=IMG):
    """A sparse image with copy 0 and copy 1 (bytes or None) at 1 MiB and 1 MiB + 4 KiB."""
    with open(path, "wb") as f:
        f.truncate(size)
        for c, block in enumerate(copies):
            if block is not None:
                f.seek(MIB + 4096 * c)
                f.write(block)
    return path


class Crc32c(unittest.TestCase):
    def test_known_vectors(self):
        self.assertEqual(admin.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(admin.crc32c(b""), 0)
        # RFC 3720 (iSCSI) B.4
        self.assertEqual(admin.crc32c(bytes(32)), 0x8A9136AA)
        self.assertEqual(admin.crc32c(b"\xff" * 32), 0x62A8AB43)
        self.assertEqual(admin.crc32c(bytes(range(32))), 0x46DD794E)
        self.assertEqual(admin.crc32c(bytes(range(31, -1, -1))), 0x113FDB5C)

    def test_against_bitwise_and_incremental(self):
        rnd = random.Random(7)
        for n in (1, 3, 64, 4096):
            data = bytes(rnd.randrange(256) for _ in range(n))
            self.assertEqual(admin.crc32c(data), ref_crc32c(data))
            self.assertEqual(admin.crc32c(data[n // 2:], admin.crc32c(data[:n // 2])),
                             admin.crc32c(data))

    def test_sb_checksum_ignores_the_csum_field(self):
        b = bytearray(encode_sb())
        c = admin.sb_checksum(bytes(b))
        struct.pack_into("<I", b, 12, 0xDEADBEEF)
        self.assertEqual(admin.sb_checksum(bytes(b)), c)
        struct.pack_into("<I", b, 12, 0)
        self.assertEqual(c, ref_crc32c(bytes(b)))


class Decode(unittest.TestCase):
    def test_every_field(self):
        blk = encode_sb(events=42, chunk=256, n=5, stripes=1000, resync_cp=300, role=3, flags=1,
                        ctime=1700000000, states=[1, 2, 1, 3, 1], cps=[0, 0, 0, 77, 0])
        status, sb, why = admin.decode_sb(blk)
        self.assertEqual((status, why), ("valid", None))
        self.assertEqual(sb["magic"], MAGIC)
        self.assertEqual(sb["version"], 1)
        self.assertEqual(sb["uuid"], "01234567-89ab-cdef-0011-223344556677")
        self.assertEqual((sb["events"], sb["chunk_sectors"], sb["nr_members"], sb["data_offset"],
                          sb["stripes"], sb["resync_checkpoint"], sb["role"], sb["flags"]),
                         (42, 256, 5, 32768, 1000, 300, 3, 1))
        self.assertEqual((sb["clean"], sb["flag_names"]), (True, ["clean"]))
        self.assertEqual(sb["ctime"], 1700000000)
        self.assertEqual(sb["ctime_iso"], "2023-11-14T22:13:20+00:00")
        self.assertEqual([m["state"] for m in sb["members"]],
                         ["in_sync", "failed", "in_sync", "rebuilding", "in_sync"])
        self.assertEqual([m["checkpoint"] for m in sb["members"]], [0, 0, 0, 77, 0])
        self.assertEqual(sb["volume_sectors"], 1000 * 256 * 4)
        self.assertEqual(sb["csum"], struct.unpack_from("<I", blk, 12)[0])

    def test_not_clean(self):
        status, sb, _ = admin.decode_sb(encode_sb(flags=0))
        self.assertEqual((status, sb["clean"], sb["flag_names"]), ("valid", False, []))

    def test_uncovered(self):
        # 1.11.4: dirty regions no degraded-log record covers
        status, sb, _ = admin.decode_sb(encode_sb(flags=2))
        self.assertEqual((status, sb["clean"], sb["flag_names"]), ("valid", False, ["uncovered"]))
        self.assertEqual(sb["uncovered_to"], 2 ** 64 - 1)
        # 1.11.6: below a stripe; the boundary without the flag is corrupt
        status, sb, _ = admin.decode_sb(encode_sb(flags=2, uncovered_to=300))
        self.assertEqual((status, sb["uncovered_to"]), ("valid", 300))
        status, _, why = admin.decode_sb(encode_sb(flags=0, uncovered_to=300))
        self.assertEqual((status, why), ("corrupt", "an uncovered boundary without its flag"))

    def test_blank(self):
        self.assertEqual(admin.decode_sb(bytes(4096))[:2], ("blank", None))
        self.assertEqual(admin.decode_sb(encode_sb(magic=MAGIC ^ 1))[0], "blank")
        self.assertEqual(admin.decode_sb(b"")[0], "blank")
        self.assertEqual(admin.decode_sb(encode_sb()[:4000])[0], "blank")

    def test_corrupt(self):
        good = encode_sb()
        for off in (8, 20, 33, 40, 100, 136, 4095):       # any byte, the reserved area too
            b = bytearray(good)
            b[off] ^= 0x10
            status, sb, why = admin.decode_sb(bytes(b))
            self.assertEqual((status, sb), ("corrupt", None), off)
            self.assertIn("checksum", why)
        b = bytearray(good)
        struct.pack_into("<I", b, 12, struct.unpack_from("<I", b, 12)[0] ^ 1)
        self.assertEqual(admin.decode_sb(bytes(b))[0], "corrupt")

    def test_impossible_fields(self):
        cases = {
            "version": dict(version=2),
            "n below 3": dict(n=2, states=[1, 1]),
            "n above 32": dict(n=33, states=[1] * 32),
            "role": dict(role=4),
            "chunk 0": dict(chunk=0),
            "chunk not a power of two": dict(chunk=96),
            "resync beyond the volume": dict(resync_cp=65),
            "events 0": dict(events=0),
            "unknown flag": dict(flags=4),
            "state none inside n": dict(states=[1, 0, 1, 1]),
            "last state none": dict(states=[1, 1, 1, 0]),
            "state unknown": dict(states=[1, 4, 1, 1]),
            "state beyond n": dict(states=[1, 1, 1, 1, 1]),
            "rebuild checkpoint beyond": dict(states=[1, 3, 1, 1], cps=[0, 65, 0, 0]),
            "format 1 with a tier": dict(tier_start=40960, tier_sectors=4096),
            "format 2 tier inside the data": dict(version=2, tier_start=40959, tier_sectors=4096),
            "version 3": dict(version=3, tier_start=40960, tier_sectors=4096),
            "events beyond s64": dict(events=2 ** 63),
        }
        for name, kw in cases.items():
            status, sb, why = admin.decode_sb(encode_sb(**kw))
            self.assertEqual((status, sb), ("corrupt", None), name)
            self.assertTrue(why, name)
        # the limits themselves are fine
        for kw in (dict(n=3, states=[1] * 3, role=2), dict(n=32, states=[1] * 32, role=31),
                   dict(chunk=8), dict(chunk=2048), dict(resync_cp=0),
                   dict(states=[1, 3, 1, 1], cps=[0, 64, 0, 0]),
                   dict(states=[1, 2, 1, 1], cps=[0, 999, 0, 0])):
            self.assertEqual(admin.decode_sb(encode_sb(**kw))[0], "valid", kw)

    def test_format_2(self):
        # a volume with a RAID1 tier: 64 stripes of 128 sectors end at 40960
        status, sb, why = admin.decode_sb(encode_sb(version=2, tier_start=40960,
                                                    tier_sectors=8192))
        self.assertEqual(status, "valid", why)
        self.assertEqual((sb["version"], sb["tier_start"], sb["tier_sectors"],
                          sb["volume_sectors"]), (2, 40960, 8192, 24576))
        sb1 = admin.decode_sb(encode_sb())[1]
        self.assertEqual((sb1["tier_start"], sb1["tier_sectors"]), (0, 0))

    def test_newest_copy(self):
        v = lambda e: admin.decode_sb(encode_sb(events=e))
        bad = ("corrupt", None, "x")
        blank = ("blank", None, None)
        self.assertEqual(admin.newest_copy([v(4), v(5)]), 1)
        self.assertEqual(admin.newest_copy([v(6), v(5)]), 0)
        self.assertEqual(admin.newest_copy([v(5), v(5)]), 0)
        self.assertEqual(admin.newest_copy([bad, v(3)]), 1)
        self.assertEqual(admin.newest_copy([v(3), blank]), 0)
        self.assertIsNone(admin.newest_copy([bad, blank]))
        self.assertIsNone(admin.newest_copy([blank, blank]))


class KernelCodec(unittest.TestCase):
    """The kernel's own rs_sb_encode()/rs_sb_decode() (rainssd-sb.c) against this format."""

    SHIM = {
        "linux/crc32c.h": """
            #include <linux/types.h>
            static inline u32 crc32c(u32 crc, const void *p, size_t len)
            {
                const u8 *b = p;
                while (len--) {
                    crc ^= *b++;
                    for (int k = 0; k < 8; k++)
                        crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1));
                }
                return crc;
            }
        """,
        "linux/bits.h": "#define BIT(n) (1UL << (n))\n",
        "extra.h": """
            #include <endian.h>
            #include <linux/types.h>
            typedef uint8_t __u8;
            typedef uint32_t __le32;
            typedef uint64_t __le64;
            #define __packed __attribute__((packed))
            #define cpu_to_le32(x) htole32(x)
            #define cpu_to_le64(x) htole64(x)
            #define le32_to_cpu(x) le32toh(x)
            #define le64_to_cpu(x) le64toh(x)
            #define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
            #define __set_bit(nr, addr) (*(addr) |= 1UL << (nr))
        """,
        "main.c": r"""
            #include <stdio.h>
            #include "rainssd-sb.h"
            static unsigned char blk[RS_SB_SIZE];
            int main(int argc, char **argv)
            {
                struct rs_sb sb;
                const char *why;
                unsigned int i;

                memset(&sb, 0, sizeof(sb));
                if (argc > 1 && !strcmp(argv[1], "encode")) {
                    for (i = 0; i < 16; i++)
                        sb.uuid[i] = (u8)(0x10 * i + 1);
                    sb.events = 9; sb.chunk = 64; sb.n = 5; sb.data_offset = 32768;
                    sb.stripes = 500; sb.resync_cp = 500; sb.role = 2; sb.flags = 1;
                    sb.ctime = 1234567890;
                    for (i = 0; i < 5; i++)
                        sb.state[i] = 1;
                    sb.state[4] = 3; sb.cp[4] = 123; sb.state[1] = 2;
                    rs_sb_encode(&sb, blk);
                    fwrite(blk, 1, sizeof(blk), stdout);
                    return 0;
                }
                if (fread(blk, 1, sizeof(blk), stdin) != sizeof(blk))
                    return 3;
                i = rs_sb_decode(blk, &sb, &why);
                printf("%s %llu %u %u %llu %u %u %llu", i == RS_SBR_VALID ? "valid" :
                       i == RS_SBR_BLANK ? "blank" : "corrupt", (unsigned long long)sb.events,
                       sb.chunk, sb.n, (unsigned long long)sb.stripes, sb.role, sb.flags,
                       (unsigned long long)sb.ctime);
                for (i = 0; i < sb.n; i++)
                    printf(" %u:%llu", sb.state[i], (unsigned long long)sb.cp[i]);
                printf("\n");
                return 0;
            }
        """,
    }

    @classmethod
    def setUpClass(cls):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise unittest.SkipTest("no C compiler")
        cls.tmp = tempfile.mkdtemp(prefix="rainssd-sb-")
        for name, text in cls.SHIM.items():
            p = os.path.join(cls.tmp, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(textwrap.dedent(text))
        cls.prog = os.path.join(cls.tmp, "sb")
        r = subprocess.run([cc, "-std=gnu11", "-O1", "-I" + cls.tmp,
                            "-I" + os.path.join(TOOLS, "sim", "kshim"),
                            "-I" + os.path.join(REPO, "dm-rainssd"),
                            "-include", os.path.join(cls.tmp, "extra.h"), "-o", cls.prog,
                            os.path.join(cls.tmp, "main.c"),
                            os.path.join(REPO, "dm-rainssd", "rainssd-sb.c")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise AssertionError("rainssd-sb.c does not build over the shim:\n" + r.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def kdecode(self, blk):
        r = subprocess.run([self.prog, "decode"], input=blk, stdout=subprocess.PIPE, check=True)
        return r.stdout.decode().split()

    def test_kernel_encoded_decodes_here(self):
        blk = subprocess.run([self.prog, "encode"], stdout=subprocess.PIPE, check=True).stdout
        self.assertEqual(len(blk), 4096)
        status, sb, why = admin.decode_sb(blk)
        self.assertEqual(status, "valid", why)
        self.assertEqual(sb["uuid"], "01112131-4151-6171-8191-a1b1c1d1e1f1")
        self.assertEqual((sb["events"], sb["chunk_sectors"], sb["nr_members"], sb["data_offset"],
                          sb["stripes"], sb["resync_checkpoint"], sb["role"], sb["flags"],
                          sb["ctime"]), (9, 64, 5, 32768, 500, 500, 2, 1, 1234567890))
        self.assertEqual([(m["state"], m["checkpoint"]) for m in sb["members"]],
                         [("in_sync", 0), ("failed", 0), ("in_sync", 0), ("in_sync", 0),
                          ("rebuilding", 123)])
        # and this file's encoder writes the same bytes for the same superblock
        self.assertEqual(encode_sb(uuid=bytes(0x10 * i + 1 for i in range(16)), events=9, chunk=64,
                                   n=5, stripes=500, resync_cp=500, role=2, flags=1,
                                   ctime=1234567890, states=[1, 2, 1, 1, 3],
                                   cps=[0, 0, 0, 0, 123]), blk)

    def test_encoded_here_decodes_in_the_kernel(self):
        blk = encode_sb(events=77, chunk=512, n=6, stripes=4000, resync_cp=100, role=5, flags=0,
                        ctime=42, states=[1, 1, 3, 1, 1, 1], cps=[0, 0, 1999, 0, 0, 0])
        self.assertEqual(self.kdecode(blk), ["valid", "77", "512", "6", "4000", "5", "0", "42",
                                             "1:0", "1:0", "3:1999", "1:0", "1:0", "1:0"])
        self.assertEqual(self.kdecode(bytes(4096))[0], "blank")
        b = bytearray(blk)
        b[1000] ^= 1
        self.assertEqual(self.kdecode(bytes(b))[0], "corrupt")
        self.assertEqual(admin.decode_sb(bytes(b))[0], "corrupt")
        for kw in (dict(version=2), dict(role=4), dict(chunk=96), dict(events=0), dict(flags=4),
                   dict(states=[1, 0, 1, 1]), dict(tier_start=40960, tier_sectors=4096),
                   dict(version=2, tier_start=40959, tier_sectors=4096),
                   dict(version=3, tier_start=40960, tier_sectors=4096), dict(events=2 ** 63),
                   # ends that wrap past 2^64 (valid up to 1.11.16)
                   dict(version=2, stripes=2 ** 57, tier_start=40960, tier_sectors=8),
                   dict(version=2, tier_start=2 ** 64 - 4, tier_sectors=8),
                   # more than tier_size gives (valid up to 1.11.22)
                   dict(version=2, tier_start=50000, tier_sectors=2 ** 32),
                   dict(version=2, tier_start=50000, tier_sectors=2 ** 64 - 50001)):
            self.assertEqual(self.kdecode(encode_sb(**kw))[0], "corrupt", kw)
            self.assertEqual(admin.decode_sb(encode_sb(**kw))[0], "corrupt", kw)
        # format 2, a tier after the data area: valid in both
        for kw in (dict(version=2, tier_start=40960, tier_sectors=4096),
                   dict(version=2, tier_start=50000, tier_sectors=8),
                   dict(version=2, tier_start=50000, tier_sectors=2 ** 32 - 1),
                   dict(version=2, tier_start=2 ** 64 - 2 ** 32, tier_sectors=2 ** 32 - 1)):
            self.assertEqual(self.kdecode(encode_sb(**kw))[0], "valid", kw)
            self.assertEqual(admin.decode_sb(encode_sb(**kw))[0], "valid", kw)


FAKE_DMSETUP = """#!%s
import json, os, sys
d = os.environ["FAKE_DM_DIR"]
with open(os.path.join(d, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
cmd = sys.argv[1] if len(sys.argv) > 1 else ""
def read(name):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read()
    except FileNotFoundError:
        return None
out, err, rc = read(cmd + ".out"), read(cmd + ".err"), read(cmd + ".rc")
sys.stdout.write(out or "")
sys.stderr.write(err or "")
sys.exit(int(rc) if rc else 0)
"""


class ToolCase(unittest.TestCase):
    """A temp dir with images and a stub dmsetup first in PATH."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rainssd-admin-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.dm = os.path.join(self.tmp, "dm")
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(self.dm)
        os.makedirs(bindir)
        stub = os.path.join(bindir, "dmsetup")
        with open(stub, "w") as f:
            f.write(FAKE_DMSETUP % sys.executable)
        os.chmod(stub, 0o755)
        self.env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                        FAKE_DM_DIR=self.dm)

    def img(self, name, *copies, size=IMG):
        return make_image(os.path.join(self.tmp, name), copies or (None, None), size)

    def member(self, name, role, uuid=UUID_A, events=5, **kw):
        """An image holding role @role of a 4-member volume (copy events % 2 newest)."""
        new = encode_sb(uuid=uuid, events=events, role=role, **kw)
        old = encode_sb(uuid=uuid, events=events - 1, role=role, **kw) if events > 1 else None
        copies = [None, None]
        copies[events % 2], copies[1 - events % 2] = new, old
        return self.img(name, *copies)

    def fake(self, cmd, out=None, rc=None, err=None):
        for ext, val in (("out", out), ("rc", rc), ("err", err)):
            if val is not None:
                with open(os.path.join(self.dm, "%s.%s" % (cmd, ext)), "w") as f:
                    f.write(str(val))

    def calls(self):
        try:
            with open(os.path.join(self.dm, "calls.jsonl")) as f:
                return [json.loads(l) for l in f]
        except FileNotFoundError:
            return []

    def run_tool(self, *args):
        r = subprocess.run([sys.executable, TOOL] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.tmp)
        return r.returncode, r.stdout, r.stderr


class Examine(ToolCase):
    def test_text_labels(self):
        p = self.img("m.img", encode_sb(events=6, role=2, flags=1, states=[1, 1, 3, 1],
                                        cps=[0, 0, 17, 0]), encode_sb(events=7, role=2, flags=0,
                                                                      states=[1, 1, 3, 1],
                                                                      cps=[0, 0, 18, 0]))
        rc, out, err = self.run_tool("examine", p)
        self.assertEqual(rc, 0, err)
        f = {l.split()[0]: l.split(None, 1)[1] for l in out.splitlines()[1:] if l.strip()}
        self.assertEqual(f["uuid"], "01234567-89ab-cdef-0011-223344556677")
        self.assertEqual(f["magic"].split()[0], "0x3142535344534e52")
        self.assertEqual(f["events"], "7")
        self.assertTrue(f["chunk_sectors"].startswith("128 (64 KiB)"))
        self.assertEqual(f["nr_members"], "4")
        self.assertTrue(f["data_offset"].startswith("32768 sectors"))
        self.assertEqual(f["stripes"], "64")
        self.assertTrue(f["volume_length"].startswith("24576 sectors"))
        self.assertTrue(f["resync_checkpoint"].startswith("64 of 64"))
        self.assertEqual(f["role"], "2")
        self.assertEqual(f["flags"], "0x0 (not clean)")
        self.assertTrue(f["ctime"].startswith("2023-11-14T22:13:20+00:00"), f["ctime"])
        self.assertIn("crc32c, good", f["csum"])
        copies = [l for l in out.splitlines() if l.strip().startswith("copy ")]
        self.assertEqual(len(copies), 2)
        self.assertIn("valid, events 6", copies[0])
        self.assertNotIn("newest", copies[0])
        self.assertIn("valid, events 7", copies[1])
        self.assertIn("newest", copies[1])
        rows = [l.split() for l in out.splitlines() if l.split()[:1] in (["0"], ["1"], ["2"], ["3"])]
        self.assertEqual([r[1] for r in rows], ["in_sync", "in_sync", "rebuilding", "in_sync"])
        self.assertEqual(rows[2][2], "18")                  # the newest copy's checkpoint
        self.assertIn("this device", " ".join(rows[2]))

    def test_tier(self):
        p = self.img("m.img", encode_sb(events=6, version=2, tier_start=40960, tier_sectors=8192))
        rc, out, err = self.run_tool("examine", p)
        self.assertEqual(rc, 0, err)
        f = {l.split()[0]: l.split(None, 1)[1] for l in out.splitlines()[1:] if l.strip()}
        self.assertEqual(f["version"], "2")
        self.assertEqual(f["tier"], "RAID1 tier: 8192 sectors per member (4.0 MiB) from sector 40960")
        rc, out, err = self.run_tool("examine", "--json", p)
        self.assertEqual(rc, 0, err)
        sb = json.loads(out)["superblock"]
        self.assertEqual((sb["tier_start"], sb["tier_sectors"]), (40960, 8192))
        # no tier line for format 1
        p1 = self.img("m1.img", encode_sb(events=6))
        rc, out, err = self.run_tool("examine", p1)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("tier", out)

    def test_json(self):
        p = self.img("m.img", encode_sb(events=9, flags=1), encode_sb(events=8))
        rc, out, err = self.run_tool("examine", "--json", p)
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual(j["device"], p)
        self.assertEqual(j["newest"], 0)
        self.assertEqual([(c["copy"], c["sector"], c["status"], c["events"]) for c in j["copies"]],
                         [(0, 2048, "valid", 9), (1, 2056, "valid", 8)])
        sb = j["superblock"]
        self.assertEqual((sb["uuid"], sb["events"], sb["chunk_sectors"], sb["nr_members"],
                          sb["data_offset"], sb["stripes"], sb["resync_checkpoint"], sb["role"],
                          sb["flags"], sb["clean"], sb["ctime"]),
                         ("01234567-89ab-cdef-0011-223344556677", 9, 128, 4, 32768, 64, 64, 0, 1,
                          True, 1700000000))
        self.assertEqual(sb["ctime_iso"], "2023-11-14T22:13:20+00:00")
        self.assertEqual([m["state"] for m in sb["members"]], ["in_sync"] * 4)

    def test_one_copy_corrupt(self):
        b = bytearray(encode_sb(events=12))
        b[500] ^= 0xFF
        p = self.img("m.img", encode_sb(events=11), bytes(b))
        rc, out, err = self.run_tool("examine", "--json", p)
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual([c["status"] for c in j["copies"]], ["valid", "corrupt"])
        self.assertIn("checksum", j["copies"][1]["why"])
        self.assertEqual((j["newest"], j["superblock"]["events"]), (0, 11))
        rc, out, _ = self.run_tool("examine", p)
        self.assertIn("corrupt (bad checksum", out)

    def test_one_copy_blank(self):
        p = self.img("m.img", None, encode_sb(events=3))
        rc, out, err = self.run_tool("examine", "--json", p)
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual([c["status"] for c in j["copies"]], ["blank", "valid"])
        self.assertEqual(j["newest"], 1)

    def test_no_valid_superblock(self):
        b = bytearray(encode_sb())
        b[9] ^= 1
        for copies in ((None, None), (bytes(b), None), (bytes(b), bytes(b))):
            p = self.img("m.img", *copies)
            rc, out, err = self.run_tool("examine", p)
            self.assertEqual(rc, 1, copies)
            self.assertIn("no valid rainssd superblock", err)
            rc, out, err = self.run_tool("examine", "--json", p)
            self.assertEqual(rc, 1)
            self.assertIsNone(json.loads(out)["superblock"])

    def test_small_and_missing_device(self):
        p = self.img("small.img", size=MIB + 100)
        rc, out, err = self.run_tool("examine", p)
        self.assertEqual(rc, 1)
        self.assertTrue(err.startswith("rainssd-admin: "), err)
        rc, out, err = self.run_tool("examine", os.path.join(self.tmp, "nope"))
        self.assertEqual(rc, 1)
        self.assertIn("cannot open", err)


class Create(ToolCase):
    def blanks(self, n=4, size=IMG):
        return [self.img("d%d.img" % i, size=size) for i in range(n)]

    def test_table(self):
        d = self.blanks()
        rc, out, err = self.run_tool("create", "vol", "--chunk", "64K", *d)
        self.assertEqual(rc, 0, err)
        # (4-1) * floor((40960 - 32768) / 128) * 128
        table = "0 24576 rainssd 128 4 " + " ".join(d)
        self.assertEqual(self.calls(), [["create", "vol", "--table", table]])
        self.assertIn("table: " + table, out)

    def test_options_and_json(self):
        d = self.blanks(5)
        rc, out, err = self.run_tool("create", "v2", "--chunk", "1M", "--nosync", "--policy",
                                     "adaptive", "--max-recovery-rate", "5000", "--json", *d)
        self.assertEqual(rc, 0, err)
        # 8192 sectors of data area: 4 stripes of 2048
        table = ("0 32768 rainssd 2048 5 " + " ".join(d) +
                 " 5 policy adaptive max_recovery_rate 5000 nosync")
        self.assertEqual(self.calls(), [["create", "v2", "--table", table]])
        j = json.loads(out)
        self.assertEqual((j["table"], j["length"], j["chunk_sectors"], j["nosync"]),
                         (table, 32768, 2048, True))

    def test_chunk_sizes(self):
        d = self.blanks()
        for text, sectors in (("4K", 8), ("4k", 8), ("8KiB", 16), ("512", 1024), ("1m", 2048),
                              ("65536B", 128)):
            rc, out, err = self.run_tool("create", "v", "--chunk", text, *d)
            self.assertEqual(rc, 0, (text, err))
            self.assertEqual(self.calls()[-1][3].split()[3], str(sectors), text)
        for text in ("2K", "2M", "96K", "0", "abc", "64Q", "-64K", "4097B"):
            before = len(self.calls())
            rc, out, err = self.run_tool("create", "v", "--chunk", text, *d)
            self.assertEqual(rc, 2, text)
            self.assertEqual(len(self.calls()), before, text)

    def test_refusals(self):
        d = self.blanks(3)
        odd = self.img("odd.img", size=IMG + MIB)
        rc, _, err = self.run_tool("create", "v", "--chunk", "64K", d[0], d[1], odd)
        self.assertEqual(rc, 1)
        self.assertIn("differ in size", err)
        small = [self.img("s%d.img" % i, size=16 * MIB) for i in range(3)]
        rc, _, err = self.run_tool("create", "v", "--chunk", "64K", *small)
        self.assertEqual(rc, 1)
        self.assertIn("too small", err)
        self.assertEqual(self.calls(), [])
        # usage: too few members, the same one twice, a bad option value
        self.assertEqual(self.run_tool("create", "v", "--chunk", "64K", d[0], d[1])[0], 2)
        rc, _, err = self.run_tool("create", "v", "--chunk", "64K", d[0], d[1], d[0])
        self.assertEqual(rc, 2)
        self.assertIn("same device", err)
        self.assertEqual(self.run_tool("create", "v", "--chunk", "64K", "--policy", "x", *d)[0], 2)
        self.assertEqual(self.run_tool("create", "v", "--chunk", "64K", "--min-recovery-rate",
                                       "9", "--max-recovery-rate", "8", *d)[0], 2)
        self.assertEqual(self.run_tool("create", "v", *d)[0], 2)               # no --chunk
        self.assertEqual(self.calls(), [])

    def test_existing_superblock(self):
        d = self.blanks(3)
        d.append(self.member("old.img", 1, uuid=UUID_B))
        rc, _, err = self.run_tool("create", "v", "--chunk", "64K", *d)
        self.assertEqual(rc, 1)
        self.assertIn("old.img", err)
        self.assertIn("fedcba98-7654-3210-0011-223344556677", err)
        self.assertIn("--force", err)
        self.assertEqual(self.calls(), [])
        # a corrupt one too
        b = bytearray(encode_sb())
        b[700] ^= 1
        bad = self.img("bad.img", bytes(b), None)
        rc, _, err = self.run_tool("create", "v", "--chunk", "64K", d[0], d[1], d[2], bad)
        self.assertEqual(rc, 1)
        self.assertIn("corrupt", err)
        self.assertEqual(self.calls(), [])
        rc, out, err = self.run_tool("create", "v", "--chunk", "64K", "--force", *d)
        self.assertEqual(rc, 0, err)
        self.assertIn("wiped", err)
        self.assertEqual(len(self.calls()), 1)
        self.assertEqual(self.run_tool("examine", d[3])[0], 1)          # blank now

    def test_dmsetup_fails(self):
        self.fake("create", rc=1, err="device-mapper: reload ioctl on v failed: Invalid argument")
        rc, out, err = self.run_tool("create", "v", "--chunk", "64K", *self.blanks())
        self.assertEqual(rc, 1)
        self.assertIn("Invalid argument", err)


class Assemble(ToolCase):
    def test_order_by_role(self):
        m = {r: self.member("r%d.img" % r, r, events=8 + (r == 2)) for r in range(4)}
        rc, out, err = self.run_tool("assemble", "vol", m[2], m[0], m[3], m[1])
        self.assertEqual(rc, 0, err)
        table = "0 24576 rainssd 128 4 %s %s %s %s" % (m[0], m[1], m[2], m[3])
        self.assertEqual(self.calls(), [["create", "vol", "--table", table]])
        self.assertIn("table: " + table, out)

    def test_missing_role_and_json(self):
        m = {r: self.member("r%d.img" % r, r, chunk=64, stripes=128, resync_cp=128)
             for r in (0, 1, 3)}
        rc, out, err = self.run_tool("assemble", "--json", "--policy", "rcw", "vol", m[3], m[1],
                                     m[0])
        self.assertEqual(rc, 0, err)
        table = "0 24576 rainssd 64 4 %s %s - %s 2 policy rcw" % (m[0], m[1], m[3])
        self.assertEqual(self.calls(), [["create", "vol", "--table", table]])
        j = json.loads(out)
        self.assertEqual((j["table"], j["missing"], j["uuid"]),
                         (table, [2], "01234567-89ab-cdef-0011-223344556677"))
        self.assertEqual([x["device"] for x in j["members"]], [m[0], m[1], "-", m[3]])

    def test_length(self):
        m = [self.member("r%d.img" % r, r) for r in range(4)]
        rc, out, err = self.run_tool("assemble", "--length", "1000", "vol", *m)
        self.assertEqual(rc, 0, err)
        self.assertTrue(self.calls()[0][3].startswith("0 1000 rainssd 128 4 "))
        rc, out, err = self.run_tool("assemble", "--length", "24577", "vol", *m)
        self.assertEqual(rc, 1)
        self.assertIn("exceeds", err)
        self.assertEqual(self.run_tool("assemble", "--length", "0", "vol", *m)[0], 2)
        self.assertEqual(len(self.calls()), 1)

    def test_mixed_uuids(self):
        a = [self.member("a%d.img" % r, r) for r in range(3)]
        b = self.member("b3.img", 3, uuid=UUID_B)
        rc, _, err = self.run_tool("assemble", "vol", *a, b)
        self.assertEqual(rc, 1)
        self.assertIn("different volumes", err)
        self.assertIn("fedcba98-7654-3210-0011-223344556677: " + b, err)
        self.assertIn("01234567-89ab-cdef-0011-223344556677: ", err)
        self.assertEqual(self.calls(), [])

    def test_duplicate_roles(self):
        a = [self.member("a%d.img" % r, r) for r in range(3)]
        dup = self.member("dup.img", 1)
        rc, _, err = self.run_tool("assemble", "vol", *a, dup)
        self.assertEqual(rc, 1)
        self.assertIn("role 1: %s, %s" % (a[1], dup), err)
        self.assertEqual(self.calls(), [])

    def test_unknown_devices(self):
        a = [self.member("a%d.img" % r, r) for r in range(3)]
        blank = self.img("blank.img")
        rc, _, err = self.run_tool("assemble", "vol", *a, blank)
        self.assertEqual(rc, 1)
        self.assertIn(blank + ": no rainssd superblock", err)
        rc, _, err = self.run_tool("assemble", "vol", *a, os.path.join(self.tmp, "nope"))
        self.assertEqual(rc, 1)
        self.assertEqual(self.calls(), [])

    def test_too_many_down(self):
        a = [self.member("a%d.img" % r, r) for r in (0, 1)]
        rc, _, err = self.run_tool("assemble", "vol", *a)
        self.assertEqual(rc, 1)
        self.assertIn("2 (missing), 3 (missing)", err)
        # one missing, and the newest superblock says another failed
        st = [1, 2, 1, 1]
        b = [self.member("b%d.img" % r, r, states=st) for r in (0, 1, 2)]
        rc, _, err = self.run_tool("assemble", "vol", *b)
        self.assertEqual(rc, 1)
        self.assertIn("1 (failed)", err)
        # one missing, one stale (missed a commit)
        c = [self.member("c%d.img" % r, r, events=10) for r in (0, 1)]
        c.append(self.member("c2.img", 2, events=6))
        rc, _, err = self.run_tool("assemble", "vol", *c)
        self.assertEqual(rc, 1)
        self.assertIn("stale", err)
        self.assertEqual(self.calls(), [])

    def test_tier(self):
        # 32 stripes of 128 sectors end at 36864; the tier's 4096 sectors after them
        t = dict(version=2, stripes=32, resync_cp=32, tier_start=36864, tier_sectors=4096)
        m = [self.member("t%d.img" % r, r, **t) for r in range(4)]
        rc, out, err = self.run_tool("assemble", "--policy", "rcw", "vol", *m)
        self.assertEqual(rc, 0, err)
        table = "0 12288 rainssd 128 4 %s 4 policy rcw tier_size 4096" % " ".join(m)
        self.assertEqual(self.calls(), [["create", "vol", "--table", table]])
        # a member that gives another tier, or none: refused
        for name, kw in (("other.img", dict(t, tier_sectors=2048)),
                         ("none.img", dict(stripes=32, resync_cp=32))):
            odd = self.member(name, 3, events=4, **kw)
            rc, _, err = self.run_tool("assemble", "vol", *m[:3], odd)
            self.assertEqual(rc, 1, name)
            self.assertIn("geometry", err)
            self.assertIn("tier_sectors", err)
        self.assertEqual(len(self.calls()), 1)

    def test_geometry_disagrees(self):
        a = [self.member("a%d.img" % r, r) for r in range(3)]
        a.append(self.member("a3.img", 3, chunk=256, stripes=32, resync_cp=32, events=4))
        rc, _, err = self.run_tool("assemble", "vol", *a)
        self.assertEqual(rc, 1)
        self.assertIn("geometry", err)
        self.assertIn("a3.img", err)


V14 = ("0 24576 rainssd 1.4.0 4 AAaA 10 20 1 2 3 4 5 6 count direct 0 0 0 0 0 480 "
       "0:0:300:400:50:0:13:14:0:0 0:0:0:0:0:0:0:0:0:0 0:0:0:0:0:0:0:0:0:0 "
       "3:1:30:40:5:7:17:18:0:20 12 256 40 1500 3 17 2 1 2048/8192 recover 5:0:0:7 2:0:0:3")


class Replace(ToolCase):
    def setUp(self):
        super().setUp()
        self.m = [self.member("r%d.img" % r, r) for r in range(4)]

    def volume(self, health="AADA", opts=" 3 policy rcw nosync", devs=None):
        devs = devs or [self.m[0], self.m[1], "-", self.m[3]]
        self.fake("table", out="0 24576 rainssd 128 4 %s%s\n" % (" ".join(devs), opts))
        self.fake("status", out=V14.replace("AAaA", health) + "\n")

    def test_rewrite(self):
        self.volume()
        new = self.img("new.img")
        rc, out, err = self.run_tool("replace", "vol", "2", new)
        self.assertEqual(rc, 0, err)
        table = "0 24576 rainssd 128 4 %s %s %s %s 5 policy rcw nosync rebuild 2" % (
            self.m[0], self.m[1], new, self.m[3])
        self.assertEqual(self.calls(), [["table", "vol"], ["status", "vol"], ["suspend", "vol"],
                                        ["reload", "vol", "--table", table], ["resume", "vol"]])
        self.assertIn("table: " + table, out)

    def test_no_options_and_json(self):
        self.volume(opts="", health="DAAA", devs=[self.m[1], self.m[1], self.m[2], self.m[3]])
        new = self.img("new.img")
        rc, out, err = self.run_tool("replace", "--json", "vol", "0", new)
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual(j["table"], "0 24576 rainssd 128 4 %s %s %s %s 2 rebuild 0" % (
            new, self.m[1], self.m[2], self.m[3]))
        self.assertEqual((j["index"], j["old"], j["new"]), (0, self.m[1], new))

    def test_tier_volume(self):
        # a volume with a RAID1 tier (format 2): its former member 2 put back
        # in its place is taken as this volume's (rebuilt, not wiped); a
        # member of another tier volume is refused
        t = dict(version=2, stripes=32, resync_cp=32, tier_start=36864, tier_sectors=4096)
        self.m = [self.member("t%d.img" % r, r, **t) for r in range(4)]
        self.volume(opts=" 3 nosync tier_size 4096")
        rc, out, err = self.run_tool("replace", "vol", "2", self.m[2])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("wiped", err)
        table = "0 24576 rainssd 128 4 %s %s %s %s 5 nosync tier_size 4096 rebuild 2" % tuple(
            self.m)
        self.assertEqual(self.calls()[3], ["reload", "vol", "--table", table])
        foreign = self.member("foreign.img", 2, uuid=UUID_B, **t)
        rc, _, err = self.run_tool("replace", "vol", "2", foreign)
        self.assertEqual(rc, 1)
        self.assertIn("the superblock of volume fedcba98", err)

    def test_rebuild_of_the_same_member_again(self):
        # member 2 is being rebuilt onto a device that fails: another replacement
        self.volume(health="AAaA", opts=" 4 rebuild 2 stripe_cache 512")
        new = self.img("new.img")
        rc, out, err = self.run_tool("replace", "vol", "2", new)
        self.assertEqual(rc, 0, err)
        self.assertTrue(self.calls()[3][3].endswith(" 4 stripe_cache 512 rebuild 2"),
                        self.calls()[3])

    def test_refusals(self):
        new = self.img("new.img")
        self.volume(health="AAaA", opts=" 2 rebuild 2")
        rc, _, err = self.run_tool("replace", "vol", "1", new)
        self.assertEqual(rc, 1)
        self.assertIn("2 (being rebuilt)", err)
        self.volume(health="ADDA")
        rc, _, err = self.run_tool("replace", "vol", "2", new)
        self.assertEqual(rc, 1)
        self.assertIn("1 (failed or missing)", err)
        self.volume(health="AAAA")
        rc, _, err = self.run_tool("replace", "vol", "2", new)
        self.assertEqual(rc, 1)
        self.assertIn("in sync", err)
        self.volume()
        rc, _, err = self.run_tool("replace", "vol", "2", self.m[3])
        self.assertEqual(rc, 1)
        self.assertIn("already member 3", err)
        foreign = self.member("foreign.img", 2, uuid=UUID_B)
        rc, _, err = self.run_tool("replace", "vol", "2", foreign)
        self.assertEqual(rc, 1)
        self.assertIn("fedcba98", err)
        big = self.img("big.img", size=IMG * 2)
        rc, _, err = self.run_tool("replace", "vol", "2", big)
        self.assertEqual(rc, 1)
        self.assertIn("same size", err)
        self.fake("status", out=V14.rsplit(" ", 4)[0].replace("1.4.0", "1.3.0").replace(
            "AAaA", "AADA") + "\n")
        rc, _, err = self.run_tool("replace", "vol", "2", new)
        self.assertEqual(rc, 1)
        self.assertIn("1.3.0", err)
        self.assertFalse([c for c in self.calls() if c[0] in ("suspend", "reload", "resume")])
        # usage: an index beyond the volume, not a number
        self.volume()
        self.assertEqual(self.run_tool("replace", "vol", "4", new)[0], 2)
        self.assertEqual(self.run_tool("replace", "vol", "x", new)[0], 2)
        self.assertEqual(self.run_tool("replace", "vol", "2")[0], 2)

    def test_force(self):
        self.volume(health="AAAA")
        foreign = self.member("foreign.img", 2, uuid=UUID_B)
        rc, _, err = self.run_tool("replace", "--force", "vol", "2", foreign)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.run_tool("examine", foreign)[0], 1)       # wiped
        self.assertEqual(self.calls()[-1], ["resume", "vol"])

    def test_former_member_in_its_place(self):
        self.volume()
        back = self.member("back.img", 2, events=3)           # this volume's, role 2, stale
        rc, _, err = self.run_tool("replace", "vol", "2", back)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.run_tool("examine", back)[0], 0)          # not wiped

    def test_reload_refused(self):
        self.volume()
        self.fake("reload", rc=1, err="device-mapper: reload ioctl on vol failed: Invalid argument")
        rc, out, err = self.run_tool("replace", "vol", "2", self.img("new.img"))
        self.assertEqual(rc, 1)
        self.assertIn("old table", err)
        self.assertEqual([c[0] for c in self.calls()],
                         ["table", "status", "suspend", "reload", "resume"])

    def test_not_rainssd(self):
        self.fake("table", out="0 100 linear 8:0 0\n")
        rc, _, err = self.run_tool("replace", "vol", "0", self.img("new.img"))
        self.assertEqual(rc, 1)
        self.assertIn("not a rainssd table line", err)
        self.fake("table", rc=1, err="Device vol not found")
        rc, _, err = self.run_tool("replace", "vol", "0", self.img("new.img"))
        self.assertEqual(rc, 1)
        self.assertIn("not found", err)


class Detail(ToolCase):
    TABLE = "0 24576 rainssd 128 4 7:0 7:16 7:32 7:48 4 rebuild 2 max_recovery_rate 9000\n"

    def setUp(self):
        super().setUp()
        self.fake("table", out=self.TABLE)
        self.fake("status", out=V14 + "\n")

    def test_labels(self):
        rc, out, err = self.run_tool("detail", "vol")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("vol: rainssd 1.4.0"), lines[0])
        f = {l.split()[0]: l.split(None, 1)[1] for l in lines[1:] if l.split()
             and not l.split()[0].isdigit() and l.split()[0] != "#"}
        self.assertEqual(f["state"], "active, recovering")
        self.assertEqual(f["health"], "AAaA")
        self.assertEqual(f["sync_action"], "recover")
        self.assertEqual(f["sync_progress"], "25.0% (2048/8192 sectors per member)")
        self.assertEqual(f["options"], "rebuild 2 max_recovery_rate 9000")
        self.assertEqual(f["policy"], "count")
        head = [l.split() for l in lines if l.split()[:1] == ["#"]][0]
        self.assertEqual(head, ["#", "device", "role", "state", "read_errors", "repaired"])
        rows = [l.split() for l in lines if l.split()[:1] and l.split()[0].isdigit()]
        self.assertEqual([r[0] for r in rows], ["0", "1", "2", "3"])
        self.assertEqual([r[1] for r in rows], ["7:0", "7:16", "7:32", "7:48"])
        byidx = {r[0]: r for r in rows}
        self.assertEqual(byidx["2"][-5:], ["2", "a", "rebuilding", "0", "0"])
        self.assertEqual(byidx["3"][-5:], ["3", "A", "in_sync", "7", "3"])
        self.assertEqual(byidx["0"][-3:], ["in_sync", "5", "2"])
        self.assertEqual([c[0] for c in self.calls()], ["table", "status"])

    def test_json(self):
        rc, out, err = self.run_tool("detail", "--json", "vol")
        self.assertEqual(rc, 0, err)
        s = json.loads(out)["segments"][0]
        self.assertEqual((s["sync_action"], s["sync_percent"], s["sync_done"], s["sync_total"]),
                         ("recover", 25.0, 2048, 8192))
        self.assertEqual(s["state"], ["active", "recovering"])
        self.assertEqual([(m["device"], m["role"], m["health"], m["read_errors"])
                          for m in s["member"]],
                         [("7:0", 0, "A", 5), ("7:16", 1, "A", 0), ("7:32", 2, "a", 0),
                          ("7:48", 3, "A", 7)])
        self.assertEqual([m["state"] for m in s["member"]],
                         ["in_sync", "in_sync", "rebuilding", "in_sync"])
        self.assertEqual(s["status"]["rebuild_us"], 480)        # the whole status, parsed

    def test_degraded_and_failed(self):
        self.fake("status", out=V14.replace("AAaA", "ADAA").replace("recover", "idle")
                  .replace("2048/8192", "8192/8192") + "\n")
        s = json.loads(self.run_tool("detail", "--json", "vol")[1])["segments"][0]
        self.assertEqual(s["state"], ["degraded"])
        self.assertEqual(s["member"][1]["state"], "failed")
        self.assertEqual(s["sync_percent"], 100.0)
        self.fake("table", out=self.TABLE.replace("7:16", "-").replace(" 4 rebuild 2", " 2"))
        s = json.loads(self.run_tool("detail", "--json", "vol")[1])["segments"][0]
        self.assertEqual((s["member"][1]["device"], s["member"][1]["state"]), ("-", "missing"))
        self.assertEqual(s["options"], ["max_recovery_rate", "9000"])
        self.fake("status", out=V14.replace("AAaA", "ADDA") + "\n")
        s = json.loads(self.run_tool("detail", "--json", "vol")[1])["segments"][0]
        self.assertEqual(s["state"][0], "failed")

    def test_older_status(self):
        v13 = V14.rsplit(" ", 4)[0].replace("1.4.0", "1.3.0").replace("AAaA", "AAAA")
        self.fake("status", out=v13 + "\n")
        rc, out, err = self.run_tool("detail", "vol")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("sync_progress", out)
        rows = [l.split() for l in out.splitlines() if l.split()[:1] == ["3"]]
        self.assertEqual(rows[0][-2:], ["-", "-"])

    def test_bad_status_uses_the_status_parser(self):
        self.fake("status", out=V14.replace(" recover ", " rebuilding ") + "\n")
        rc, out, err = self.run_tool("detail", "vol")
        self.assertEqual(rc, 1)
        self.assertIn("sync_action 'rebuilding' is none of", err)
        self.assertEqual(out, "")
        self.fake("status", rc=1, err="Device does not exist.")
        rc, _, err = self.run_tool("detail", "vol")
        self.assertEqual(rc, 1)
        self.assertIn("Device does not exist", err)


class Usage(ToolCase):
    def test_exit_2(self):
        for args in ([], ["frobnicate"], ["examine"], ["examine", "a", "b"], ["create", "v"],
                     ["assemble", "v"], ["replace", "v", "1"], ["detail"], ["detail", "--x", "v"],
                     ["--json"]):
            rc, out, err = self.run_tool(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("usage:", err, args)
        self.assertEqual(self.calls(), [])

    def test_help(self):
        for args in (["--help"], ["create", "--help"], ["examine", "--help"],
                     ["assemble", "--help"], ["replace", "--help"], ["detail", "--help"]):
            rc, out, err = self.run_tool(*args)
            self.assertEqual(rc, 0, args)
            self.assertIn("usage: rainssd-admin", out, args)
        out = self.run_tool("--help")[1]
        for cmd in ("create", "examine", "assemble", "replace", "detail"):
            self.assertIn(cmd, out)


if __name__ == "__main__":
    unittest.main()
