"""Unit tests of userspace-tools/rainssd-fuzz: the same seed gives the same
table lines and messages, the messages never hold a valid `fail <member>`
(as the kernel splits and parses it), and `corrupt` changes bytes only
inside the area it names (an image file stands for the member)."""
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest
import importlib.util
from importlib.machinery import SourceFileLoader

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "rainssd-fuzz")


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
