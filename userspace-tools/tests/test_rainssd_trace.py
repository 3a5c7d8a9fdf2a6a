#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests for userspace-tools/rainssd-trace (stdlib unittest only).

Run from the repository root:
    python3 -m unittest discover -s userspace-tools/tests -p 'test_*.py'

The fixtures under fixtures/ are hand-made; every expected value below (and
the *.iolog files) was worked out by hand from the fixture lines, not by
running the tool. Tests that replay with fio or parse with blkparse are
skipped when those programs are missing; tests on the real trace samples run
only when ../shared/traces (next to the repository) exists.
"""

import bz2
import contextlib
import gzip
import importlib.machinery
import importlib.util
import io
import json
import lzma
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "rainssd-trace")
FIX = os.path.join(HERE, "fixtures")
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SHARED = os.path.join(REPO, "..", "shared", "traces")

REC = struct.Struct("<IIQQIIIIIHH")
MAGIC = 0x65617407
# __BLK_TA_QUEUE | (BLK_TC_QUEUE | BLK_TC_READ/WRITE) << 16
ACT_READ = 0x00110001
ACT_WRITE = 0x00120001


def fixture(name):
    return os.path.join(FIX, name)


def run(*args, stdin=None):
    return subprocess.run([sys.executable, TOOL] + [str(a) for a in args], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


def read_text(path):
    with open(path) as f:
        return f.read()


def blk_records(data):
    assert len(data) % REC.size == 0, len(data)
    return [REC.unpack_from(data, i) for i in range(0, len(data), REC.size)]


def load_module():
    loader = importlib.machinery.SourceFileLoader("rainssd_trace", TOOL)
    spec = importlib.util.spec_from_loader("rainssd_trace", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def iolog_body(text):
    """The I/O lines of an iolog v3 text, as (usec, action, offset, length)."""
    out = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) == 5:
            out.append((int(f[0]), f[2], int(f[3]), int(f[4])))
    return out


class Tmp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rainssd-trace-test.")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def convert(self, fmt, src, *opts, to="iolog", device="vol"):
        out = self.path("out." + to)
        r = run("convert", "--from", fmt, "--to", to, "--device", device, *opts, src, out)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        if to == "iolog":
            return read_text(out)
        with open(out, "rb") as f:
            return f.read()


# ------------------------------------------------------------ iolog output

class TestIologPerFormat(Tmp):
    def check(self, fmt, src, expected, *opts):
        self.assertEqual(self.convert(fmt, fixture(src), *opts), read_text(fixture(expected)))

    def test_msr(self):
        self.check("msr", "msr-valid.csv", "msr-valid.iolog")

    def test_systor(self):
        self.check("systor", "systor-valid.csv", "systor-valid.iolog")

    def test_tencent(self):
        self.check("tencent", "tencent-valid.csv", "tencent-valid.iolog")

    def test_disksim(self):
        self.check("disksim", "disksim-valid.trace", "disksim-valid.iolog")

    def test_stdout_and_summary(self):
        r = run("convert", "--from", "msr", "--to", "iolog", "--device", "vol",
                fixture("msr-valid.csv"), "-")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.decode(), read_text(fixture("msr-valid.iolog")))
        self.assertIn("12 records read, 11 written (5 reads, 6 writes); skipped 1 zero length",
                      r.stderr.decode())
        r = run("convert", "-q", "--from", "msr", "--to", "iolog", fixture("msr-valid.csv"), "-")
        self.assertEqual(r.stderr, b"")
        # The default file name.
        self.assertEqual(r.stdout.decode().splitlines()[1], "0 trace-target add")

    def test_header_lines(self):
        text = self.convert("msr", fixture("msr-valid.csv"))
        lines = text.splitlines()
        self.assertEqual(lines[:3], ["fio version 3 iolog", "0 vol add", "0 vol open"])
        self.assertEqual(lines[-1], "20001 vol close")


# ------------------------------------------------------------ options

class TestOptions(Tmp):
    def body(self, fmt, src, *opts):
        return iolog_body(self.convert(fmt, fixture(src), *opts))

    def test_disk_filter_msr(self):
        self.assertEqual(self.body("msr", "msr-valid.csv", "--disk", "1"),
                         [(1, "write", 4096, 4096), (4001, "read", 1024, 1024),
                          (19001, "write", 5242880, 4096)])

    def test_lun_filter_systor(self):
        self.assertEqual(self.body("systor", "systor-valid.csv", "--disk", "1"),
                         [(1, "write", 512, 1024)])

    def test_device_filter_disksim(self):
        self.assertEqual(self.body("disksim", "disksim-valid.trace", "--disk", "1"),
                         [(1, "read", 524288, 8192), (23751, "write", 0, 1048576)])

    def test_volume_id_tencent(self):
        self.assertEqual(self.body("tencent", "tencent-valid.csv", "--volume-id", "1058"),
                         [(1, "write", 1048576, 65536), (1000001, "write", 2174566400, 65536),
                          (2000001, "read", 12288, 4096)])

    def test_rw_read(self):
        self.assertEqual(self.body("msr", "msr-valid.csv", "--rw", "read"),
                         [(1, "read", 0, 512), (998, "read", 1048576, 65536),
                          (3498, "read", 12288, 16384), (4998, "read", 1024, 1024),
                          (9998, "read", 2097152, 4096)])

    def test_rw_write(self):
        b = self.body("msr", "msr-valid.csv", "--rw", "write")
        self.assertEqual([x[0] for x in b], [1, 1001, 2001, 5002, 15001, 20001])
        self.assertEqual({x[1] for x in b}, {"write"})

    def test_speed_up(self):
        b = self.body("msr", "msr-valid.csv", "--speed", "2")
        self.assertEqual([x[0] for x in b], [1, 2, 501, 501, 1001, 1751, 2501, 2501, 5001, 7501, 10001])

    def test_slow_down(self):
        b = self.body("msr", "msr-valid.csv", "--speed", "0.5")
        self.assertEqual([x[0] for x in b], [1, 6, 2001, 2001, 4001, 7001, 10001, 10003, 20001, 30001, 40001])

    def test_asap(self):
        text = self.convert("msr", fixture("msr-valid.csv"), "--asap")
        b = iolog_body(text)
        self.assertEqual(len(b), 11)
        self.assertEqual({x[0] for x in b}, {0})
        self.assertEqual(text.splitlines()[-1], "0 vol close")

    def test_fold_and_clamp(self):
        # Volume 1056 KiB = 1081344 bytes: offsets modulo it, the 64 KiB read at
        # 1 MiB clamped to the 32 KiB left before the end.
        self.assertEqual(self.body("msr", "msr-valid.csv", "--volume-size", "1056K", "--fold"),
                         [(1, "write", 8192, 4096), (3, "read", 0, 512),
                          (1001, "read", 1048576, 32768), (1001, "write", 4096, 4096),
                          (2001, "write", 983040, 8192), (3501, "read", 12288, 16384),
                          (5001, "read", 1024, 1024), (5002, "write", 851968, 131072),
                          (10001, "read", 1015808, 4096), (15001, "write", 786432, 2048),
                          (20001, "write", 917504, 4096)])

    def test_fold_summary_counts(self):
        r = run("convert", "--from", "msr", "--to", "iolog", "--volume-size", "1081344", "--fold",
                fixture("msr-valid.csv"), self.path("o"))
        self.assertEqual(r.returncode, 0)
        self.assertIn("5 folded, 1 clamped", r.stderr.decode())

    def test_volume_size_without_fold_drops(self):
        b = self.body("msr", "msr-valid.csv", "--volume-size", "1056K")
        self.assertEqual(b, [(1, "write", 8192, 4096), (3, "read", 0, 512), (1001, "write", 4096, 4096),
                             (3501, "read", 12288, 16384), (5001, "read", 1024, 1024)])

    def test_volume_size_auto(self):
        dev = self.path("target.img")
        with open(dev, "wb") as f:
            f.truncate(1081344)
        text = self.convert("msr", fixture("msr-valid.csv"), "--volume-size", "auto", "--fold", device=dev)
        b = iolog_body(text)
        self.assertEqual(b[2], (1001, "read", 1048576, 32768))
        self.assertEqual(b[4], (2001, "write", 983040, 8192))
        self.assertEqual(text.splitlines()[1], "0 %s add" % dev)

    def test_align(self):
        b = self.body("msr", "msr-valid.csv", "--align", "4096")
        self.assertEqual(b[1], (3, "read", 0, 4096))
        self.assertEqual(b[6], (5001, "read", 0, 4096))
        self.assertEqual(b[9], (15001, "write", 9437184, 4096))
        self.assertEqual(b[2], (1001, "read", 1048576, 65536))

    def test_default_align_512(self):
        # systor line 6: offset 1000, size 100 -> 512 .. 1536.
        self.assertIn((100001, "write", 512, 1024), self.body("systor", "systor-valid.csv"))

    def test_max_records(self):
        self.assertEqual(self.body("tencent", "tencent-valid.csv", "--max-records", "3"),
                         [(1, "read", 4096, 4096), (1, "write", 8192, 8192), (1, "write", 1048576, 65536)])

    def test_max_records_stops_reading(self):
        # The malformed line 4 is never reached.
        r = run("convert", "--from", "msr", "--to", "iolog", "--max-records", "3",
                fixture("msr-bad-fields.csv"), self.path("o"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_time_unit_us(self):
        b = self.body("disksim", "disksim-valid.trace", "--time-unit", "us")
        self.assertEqual([x[0] for x in b], [1, 1, 2, 2, 3, 11, 11, 26, 26, 101, 101, 151])

    def test_sort(self):
        b = self.body("systor", "systor-valid.csv", "--sort")
        self.assertEqual(b[0], (1, "read", 4096, 8192))
        self.assertEqual([x[0] for x in b], [1, 6792, 6816, 106792, 1006792, 1373716, 2006792,
                                             2006792, 2873716])

    def test_out_of_order_made_monotonic(self):
        b = self.body("disksim", "disksim-valid.trace")
        self.assertEqual(b[10], (100751, "read", 4096, 4096))
        r = run("convert", "--from", "disksim", "--to", "iolog", fixture("disksim-valid.trace"), "-")
        self.assertIn("1 out of time order", r.stderr.decode())

    def test_filters_leave_nothing(self):
        out = self.path("o")
        r = run("convert", "--from", "msr", "--to", "iolog", "--disk", "7", fixture("msr-valid.csv"), out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no I/O records left", r.stderr.decode())
        self.assertFalse(os.path.exists(out))


# ------------------------------------------------------------ compressed input

class TestCompressed(Tmp):
    def setUp(self):
        super().setUp()
        with open(fixture("msr-valid.csv"), "rb") as f:
            self.raw = f.read()
        self.expected = read_text(fixture("msr-valid.iolog"))

    def test_gzip(self):
        p = self.path("t.csv.gz")
        with gzip.open(p, "wb") as f:
            f.write(self.raw)
        self.assertEqual(self.convert("msr", p), self.expected)

    def test_bzip2(self):
        p = self.path("t.csv.bz2")
        with bz2.open(p, "wb") as f:
            f.write(self.raw)
        self.assertEqual(self.convert("msr", p), self.expected)

    def test_xz(self):
        p = self.path("t.xz")
        with lzma.open(p, "wb") as f:
            f.write(self.raw)
        self.assertEqual(self.convert("msr", p), self.expected)

    def test_stdin_gzip(self):
        r = run("convert", "--from", "msr", "--to", "iolog", "--device", "vol", "-", "-",
                stdin=gzip.compress(self.raw))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), self.expected)

    def test_corrupt_gzip(self):
        p = self.path("t.gz")
        with open(p, "wb") as f:
            f.write(gzip.compress(self.raw * 50)[:200])
        out = self.path("o")
        r = run("convert", "--from", "msr", "--to", "iolog", p, out)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr.decode(), r"^rainssd-trace: .*t\.gz:[0-9]+: cannot read gzip input")
        self.assertFalse(os.path.exists(out))

    def test_damaged_gzip(self):
        data = bytearray(gzip.compress(self.raw * 200))
        for i in range(100, 140):
            data[i] ^= 0xff
        p = self.path("bad.gz")
        with open(p, "wb") as f:
            f.write(data)
        r = run("info", "--from", "msr", p)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr.decode(), r"^rainssd-trace: .*bad\.gz: cannot read gzip input: .*decompress")


# ------------------------------------------------------------ malformed input

class TestMalformed(Tmp):
    CASES = [
        ("msr", "msr-bad-fields.csv", 4, "expected 7 comma-separated fields", "found 6"),
        ("msr", "msr-bad-offset.csv", 2, "expected a non-negative integer Offset", "found '12x4'"),
        ("msr", "msr-bad-op.csv", 4, "expected Type Read or Write", "found 'Flush'"),
        ("msr", "msr-neg-size.csv", 2, "expected a non-negative Size", "found -4096 (negative)"),
        ("systor", "systor-bad-header.csv", 1, "expected the SYSTOR'17 header", "found '1456095145."),
        ("systor", "systor-bad-type.csv", 3, "expected IOType R, W or empty", "found 'X'"),
        ("systor", "systor-bad-time.csv", 3, "expected a non-negative decimal Timestamp",
         "found '1456095145.2e3'"),
        ("systor", "systor-bad-fields.csv", 2, "expected 6 comma-separated fields", "found 5"),
        ("tencent", "tencent-bad-fields.csv", 2, "expected 5 comma-separated fields", "found 4"),
        ("tencent", "tencent-bad-type.csv", 3, "expected IOType 0 (read) or 1 (write)", "found '2'"),
        ("tencent", "tencent-neg-offset.csv", 1, "expected a non-negative Offset", "found -8 (negative)"),
        ("disksim", "disksim-bad-fields.trace", 5, "expected 5 whitespace-separated fields", "found 4"),
        ("disksim", "disksim-bad-type.trace", 2, "expected type 0 (write) or 1 (read)", "found '3'"),
        ("disksim", "disksim-bad-time.trace", 3, "expected a non-negative decimal arrival time",
         "found 'abc'"),
    ]

    def test_cases(self):
        for fmt, name, line, expected, found in self.CASES:
            for to in ("iolog", "blktrace"):
                with self.subTest(fixture=name, to=to):
                    src = fixture(name)
                    out = self.path("out")
                    r = run("convert", "--from", fmt, "--to", to, src, out)
                    err = r.stderr.decode()
                    self.assertEqual(r.returncode, 1, err)
                    self.assertTrue(err.startswith("rainssd-trace: %s:%d: %s" % (src, line, expected)), err)
                    self.assertIn(found, err)
                    self.assertEqual(err.count("\n"), 1, err)
                    self.assertFalse(os.path.exists(out))
                    self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(".rainssd")], [])

    def test_info_reports_the_same(self):
        r = run("info", "--from", "msr", fixture("msr-bad-op.csv"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("msr-bad-op.csv:4: expected Type Read or Write", r.stderr.decode())

    def test_systor_empty(self):
        p = self.path("empty.csv")
        open(p, "w").close()
        r = run("info", "--from", "systor", p)
        self.assertEqual(r.returncode, 1)
        self.assertIn("empty.csv:1: expected the SYSTOR'17 header", r.stderr.decode())

    def test_missing_input(self):
        r = run("info", "--from", "msr", self.path("nope.csv"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope.csv: cannot open", r.stderr.decode())

    def test_blktrace_truncated(self):
        data = self.convert("msr", fixture("msr-valid.csv"), to="blktrace")
        p = self.path("t.bin")
        with open(p, "wb") as f:
            f.write(data[:48 * 3 + 20])
        r = run("info", "--from", "blktrace", p)
        self.assertEqual(r.returncode, 1)
        self.assertIn("record 4 (byte 144): expected a 48-byte struct blk_io_trace, found 20 bytes",
                      r.stderr.decode())

    def test_blktrace_bad_magic(self):
        data = bytearray(self.convert("msr", fixture("msr-valid.csv"), to="blktrace"))
        data[48 * 2:48 * 2 + 4] = b"ABCD"
        p = self.path("t.bin")
        with open(p, "wb") as f:
            f.write(data)
        r = run("info", "--from", "blktrace", p)
        self.assertEqual(r.returncode, 1)
        self.assertIn("record 3 (byte 96): expected blktrace magic", r.stderr.decode())


class TestUsage(Tmp):
    def usage(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 2, (args, r.stderr))
        return r.stderr.decode()

    def test_errors(self):
        src = fixture("msr-valid.csv")
        o = self.path("o")
        self.usage()
        self.usage("convert", "--from", "nosuch", "--to", "iolog", src, o)
        self.usage("convert", "--from", "msr", src, o)
        self.assertIn("--fold needs --volume-size",
                      self.usage("convert", "--from", "msr", "--to", "iolog", "--fold", src, o))
        self.assertIn("multiple of 512",
                      self.usage("convert", "--from", "msr", "--to", "iolog", "--align", "1000", src, o))
        self.assertIn("--volume-id applies to --from tencent only",
                      self.usage("convert", "--from", "msr", "--to", "iolog", "--volume-id", "3", src, o))
        self.assertIn("--time-unit applies to --from disksim only",
                      self.usage("convert", "--from", "msr", "--to", "iolog", "--time-unit", "ns", src, o))
        self.usage("convert", "--from", "msr", "--to", "iolog", "--speed", "0", src, o)
        self.usage("convert", "--from", "msr", "--to", "iolog", "--speed", "2", "--asap", src, o)
        self.usage("convert", "--from", "msr", "--to", "iolog", "--volume-size", "12Q", src, o)
        self.usage("convert", "--from", "msr", "--to", "blktrace", "--devno", "8", src, o)
        self.assertIn("cannot open --device",
                      self.usage("convert", "--from", "msr", "--to", "iolog", "--volume-size", "auto",
                                 "--device", self.path("nodev"), "--fold", src, o))
        self.assertFalse(os.path.exists(o))

    def test_help_everywhere(self):
        for args in (["--help"], ["convert", "--help"], ["info", "--help"]):
            r = run(*args)
            self.assertEqual(r.returncode, 0)
            self.assertIn(b"exit status: 0 success, 1 bad input data", r.stdout)


# ------------------------------------------------------------ blktrace output

class TestBlktraceOutput(Tmp):
    def test_msr_fields(self):
        data = self.convert("msr", fixture("msr-valid.csv"), "--devno", "8:16", to="blktrace")
        self.assertEqual(len(data), 11 * 48)
        recs = blk_records(data)
        times = [1000, 3500, 1001000, 1001000, 2001000, 3501000, 5001000, 5002000, 10001000, 15001000, 20001000]
        sectors = [16, 0, 2048, 8, 6144, 24, 2, 14336, 4096, 18432, 10240]
        sizes = [4096, 512, 65536, 4096, 8192, 16384, 1024, 131072, 4096, 2048, 4096]
        ops = "WRRWWRRWRWW"
        for i, r in enumerate(recs):
            magic, seq, t, sector, nbytes, action, pid, dev, cpu, err, pdu = r
            self.assertEqual(magic, MAGIC)
            self.assertEqual(seq, i + 1)
            self.assertEqual(t, times[i])
            self.assertEqual(sector, sectors[i])
            self.assertEqual(nbytes, sizes[i])
            self.assertEqual(action, ACT_WRITE if ops[i] == "W" else ACT_READ)
            self.assertEqual((pid, cpu, err, pdu), (0, 0, 0, 0))
            self.assertEqual(dev, (8 << 20) | 16)

    def test_tencent_sectors_and_default_devno(self):
        recs = blk_records(self.convert("tencent", fixture("tencent-valid.csv"), to="blktrace"))
        self.assertEqual([r[3] for r in recs], [8, 16, 2048, 0, 4247200, 24, 1024, 4096, 8192, 40, 33554432])
        self.assertEqual([r[2] for r in recs][:5], [1000, 1000, 1000, 10 ** 9 + 1000, 10 ** 9 + 1000])
        self.assertEqual(recs[-1][2], 6 * 10 ** 9 + 1000)
        self.assertEqual({r[7] for r in recs}, {253 << 20})

    def test_speed_and_asap(self):
        recs = blk_records(self.convert("disksim", fixture("disksim-valid.trace"), "--speed", "4",
                                        to="blktrace"))
        self.assertEqual([r[2] for r in recs][:4], [1000, 126000, 313500, 313625])
        recs = blk_records(self.convert("disksim", fixture("disksim-valid.trace"), "--asap", to="blktrace"))
        self.assertEqual({r[2] for r in recs}, {0})

    def test_roundtrip_to_iolog(self):
        p = self.path("msr.bin")
        with open(p, "wb") as f:
            f.write(self.convert("msr", fixture("msr-valid.csv"), to="blktrace"))
        self.assertEqual(self.convert("blktrace", p), read_text(fixture("msr-valid.iolog")))

    @unittest.skipUnless(shutil.which("blkparse"), "blkparse not installed")
    def test_blkparse_reads_it(self):
        with open(self.path("vol.blktrace.0"), "wb") as f:
            f.write(self.convert("msr", fixture("msr-valid.csv"), "--devno", "8:16", to="blktrace"))
        r = subprocess.run(["blkparse", "-i", "vol", "-D", self.tmp, "-f", "%M,%m %a %d %S %n %T.%t\n"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [ln for ln in r.stdout.decode().splitlines() if ln.startswith("8,16 ")]
        self.assertEqual(lines[0], "8,16 Q W 16 8 0.000000000")
        self.assertEqual(lines[1], "8,16 Q R 0 1 0.000002500")
        self.assertEqual(lines[7], "8,16 Q W 14336 256 0.005001000")
        self.assertEqual(len(lines), 11)


# ------------------------------------------------------------ info

class TestInfo(Tmp):
    def info(self, fmt, src, *opts):
        r = run("info", "--from", fmt, "--json", *opts, src)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_msr(self):
        j = self.info("msr", fixture("msr-valid.csv"))
        self.assertEqual((j["lines"], j["records"], j["reads"], j["writes"]), (12, 11, 5, 6))
        self.assertEqual((j["read_bytes"], j["write_bytes"]), (87552, 153600))
        self.assertEqual(j["skipped"]["zero_length"], 1)
        sz = j["size"]
        self.assertEqual((sz["min"], sz["p50"], sz["p90"], sz["max"]), (512, 4096, 65536, 131072))
        self.assertEqual(sz["histogram"], {"<=512B": 1, "<=1KiB": 1, "<=2KiB": 1, "<=4KiB": 4,
                                           "<=8KiB": 1, "<=16KiB": 1, "<=64KiB": 1, "<=128KiB": 1})
        self.assertAlmostEqual(j["time"]["span_s"], 0.02)
        self.assertEqual((j["max_offset"], j["max_end"]), (9437184, 9439232))
        self.assertEqual(j["devices"], {"0": 8, "1": 3})

    def test_systor(self):
        j = self.info("systor", fixture("systor-valid.csv"))
        self.assertEqual((j["records"], j["reads"], j["writes"]), (9, 5, 4))
        self.assertEqual((j["skipped"]["header"], j["skipped"]["no_iotype"]), (1, 1))
        self.assertEqual(j["time"]["out_of_order"], 1)
        self.assertEqual(j["devices"], {"0": 7, "1": 1, "2": 1})
        self.assertAlmostEqual(j["time"]["span_s"], 1456095148 - 1456095145.126285, places=6)

    def test_tencent_volume(self):
        j = self.info("tencent", fixture("tencent-valid.csv"), "--volume-id", "1063")
        self.assertEqual((j["records"], j["reads"], j["writes"]), (7, 3, 4))
        self.assertEqual(j["skipped"]["device_filter"], 4)
        self.assertEqual(j["max_end"], 17179869184 + 4096)

    def test_disksim_rw(self):
        j = self.info("disksim", fixture("disksim-valid.trace"), "--rw", "write")
        self.assertEqual((j["records"], j["writes"], j["write_bytes"]), (5, 5, 4096 + 512 + 4096 + 1048576 + 4096))

    def test_text(self):
        r = run("info", "--from", "msr", fixture("msr-valid.csv"))
        out = r.stdout.decode()
        self.assertIn("records:     11 (5 reads, 6 writes) from 12 lines", out)
        self.assertIn("size:        min 512, p50 4096, p90 65536, p99 131072, max 131072", out)


# ------------------------------------------------------------ progress

class TestProgress(unittest.TestCase):
    def test_progress_lines(self):
        mod = load_module()
        clock = [1000.0]

        def fake_monotonic():
            clock[0] += 0.4
            return clock[0]

        err = io.StringIO()
        out = io.StringIO()
        old = mod.time.monotonic
        mod.time.monotonic = fake_monotonic
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                rc = mod.main(["info", "--from", "msr", "--progress", fixture("msr-valid.csv")])
        finally:
            mod.time.monotonic = old
        self.assertEqual(rc, 0)
        lines = [ln for ln in err.getvalue().splitlines() if "lines," in ln]
        self.assertGreaterEqual(len(lines), 3, err.getvalue())
        self.assertRegex(lines[0], r"^rainssd-trace: .*msr-valid.csv: [0-9]+ lines, [0-9]+ records")

    def test_no_progress_when_not_asked(self):
        r = run("info", "--from", "msr", fixture("msr-valid.csv"))
        self.assertEqual(r.stderr, b"")


class TestParsers(unittest.TestCase):
    def setUp(self):
        self.mod = load_module()

    def test_decimal_ns(self):
        f = self.mod.parse_decimal_ns
        self.assertEqual(f("1456095145.133076000", 10 ** 9, "t", "x:1"), 1456095145133076000)
        self.assertEqual(f("1.2505", 10 ** 6, "t", "x:1"), 1250500)
        self.assertEqual(f(".5", 1000, "t", "x:1"), 500)
        self.assertEqual(f("7.", 1, "t", "x:1"), 7)
        self.assertEqual(f("0.0000000019", 10 ** 9, "t", "x:1"), 1)
        with self.assertRaises(self.mod.DataError):
            f("1e5", 1, "t", "x:1")
        with self.assertRaises(self.mod.DataError):
            f("-1.5", 1, "t", "x:1")

    def test_sizes(self):
        p = self.mod.parse_size
        self.assertEqual(p("4096"), 4096)
        self.assertEqual(p("1056K"), 1081344)
        self.assertEqual(p("64M"), 64 << 20)
        self.assertEqual(p("2GiB"), 2 << 30)
        self.assertEqual(p("auto", allow_auto=True), "auto")


# ------------------------------------------------------------ replay with fio

def odirect_dir(candidates):
    """A directory where O_DIRECT opens work (tmpfs before 6.6 refuses them)."""
    for d in candidates:
        p = os.path.join(d, ".odirect-probe")
        try:
            fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
            os.close(fd)
            os.unlink(p)
            return d
        except (OSError, AttributeError):
            try:
                os.unlink(p)
            except OSError:
                pass
    return None


def dev_has_block_device():
    # fio's blktrace loader walks /dev for a block device even with
    # replay_redirect; it uses the redirect once it has found any.
    try:
        return any(stat.S_ISBLK(os.lstat(os.path.join("/dev", n)).st_mode) for n in os.listdir("/dev"))
    except OSError:
        return False


@unittest.skipUnless(shutil.which("fio"), "fio not installed")
class TestFioReplay(Tmp):
    # msr-valid.csv with --align 4096, worked out by hand.
    EXPECTED = sorted([
        ("write", 8192, 4096), ("read", 0, 4096), ("read", 1048576, 65536), ("write", 4096, 4096),
        ("write", 3145728, 8192), ("read", 12288, 16384), ("read", 0, 4096), ("write", 7340032, 131072),
        ("read", 2097152, 4096), ("write", 9437184, 4096), ("write", 5242880, 4096)])

    def setUp(self):
        super().setUp()
        d = odirect_dir([self.tmp, HERE])
        if d is None:
            self.skipTest("no directory here supports O_DIRECT")
        self.work = tempfile.mkdtemp(prefix=".fio-replay.", dir=d)
        self.addCleanup(shutil.rmtree, self.work, True)
        self.target = os.path.join(self.work, "target.img")
        with open(self.target, "wb") as f:
            f.truncate(16 << 20)

    def fio(self, log, *extra):
        """Replay `log`; the job's JSON, the I/Os fio issued (from its
        completion-latency log with offsets) and the wall time."""
        prefix = os.path.join(self.work, "lat")
        for n in os.listdir(self.work):
            if n.startswith("lat_"):
                os.unlink(os.path.join(self.work, n))
        cmd = ["fio", "--name=replay", "--read_iolog=" + log, "--replay_redirect=" + self.target,
               "--direct=1", "--write_lat_log=" + prefix, "--log_offset=1",
               "--output-format=json"] + list(extra)
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        elapsed = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr.decode() + r.stdout.decode())
        out = r.stdout.decode()
        job = json.loads(out[out.index("{"):])["jobs"][0]
        self.assertEqual(job["error"], 0)
        issued = []
        # time, clat, ddir (0 read, 1 write), bs, offset, prio
        for line in read_text(prefix + "_clat.1.log").splitlines():
            f = [x.strip() for x in line.split(",")]
            issued.append(({"0": "read", "1": "write"}[f[2]], int(f[4]), int(f[3])))
        return job, issued, elapsed

    def check(self, job, issued):
        self.assertEqual(job["read"]["total_ios"], 5)
        self.assertEqual(job["write"]["total_ios"], 6)
        self.assertEqual(job["read"]["io_bytes"], 94208)
        self.assertEqual(job["write"]["io_bytes"], 155648)
        self.assertEqual(sorted(issued), self.EXPECTED)

    def test_iolog(self):
        log = os.path.join(self.work, "t.iolog")
        r = run("convert", "--from", "msr", "--to", "iolog", "--align", "4096", fixture("msr-valid.csv"), log)
        self.assertEqual(r.returncode, 0, r.stderr)
        job, issued, _ = self.fio(log)
        self.check(job, issued)

    @unittest.skipUnless(dev_has_block_device(), "no block device in /dev for fio's blktrace loader")
    def test_blktrace(self):
        log = os.path.join(self.work, "t.bin")
        r = run("convert", "--from", "msr", "--to", "blktrace", "--align", "4096", fixture("msr-valid.csv"), log)
        self.assertEqual(r.returncode, 0, r.stderr)
        job, issued, _ = self.fio(log)
        self.check(job, issued)

    def test_timestamps_are_honoured(self):
        # Two reads 1.5 s apart in the trace: about 1.5 s at speed 1, 0.5 s at
        # speed 3, no wait with --asap.
        src = os.path.join(self.work, "two.csv")
        with open(src, "w") as f:
            f.write("100000000,h,0,Read,0,4096,1\n100000000,h,0,Read,4096,4096,1\n"
                    "115000000,h,0,Read,8192,4096,1\n")
        times = {}
        for name, opt in (("slow", []), ("fast", ["--speed", "3"]), ("asap", ["--asap"])):
            log = os.path.join(self.work, name + ".iolog")
            r = run("convert", "--from", "msr", "--to", "iolog", *opt, src, log)
            self.assertEqual(r.returncode, 0, r.stderr)
            job, _, elapsed = self.fio(log)
            self.assertEqual(job["read"]["total_ios"], 3)
            times[name] = elapsed
        self.assertGreater(times["slow"], 1.4, times)
        self.assertGreater(times["fast"], 0.45, times)
        self.assertLess(times["fast"], times["slow"] - 0.5, times)
        self.assertLess(times["asap"], times["fast"], times)


# ------------------------------------------------------------ rainssd-blktrace

BLKTOOL = os.path.join(HERE, "..", "rainssd-blktrace")


def run_blk(*args):
    return subprocess.run([sys.executable, BLKTOOL] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)


@unittest.skipUnless(shutil.which("blkparse") and shutil.which("btt"), "blkparse/btt not installed")
class TestBlktraceSummary(Tmp):
    """summary and replay on a capture directory made by hand: per-device
    blktrace files written by rainssd-trace (QUEUE events only) and the
    capture.json that 'capture' would write."""

    # (device, devno, disksim lines: time_ms dev sector nsect type(1 read))
    DEVS = [
        ("vol", "253:0", ["0 0 0 8 0", "1 0 8 8 0", "2 0 64 8 0", "3 0 128 8 0", "4 0 0 8 1"]),
        ("m0", "43:0", ["0 0 0 8 1", "0.1 0 8 8 1", "0.2 0 0 8 0", "0.3 0 8 8 0"]),
        ("m1", "43:1", ["0 0 0 8 1", "0.1 0 8 8 1", "0.15 0 16 8 1", "0.2 0 0 8 0", "0.3 0 8 8 0",
                        "0.4 0 16 8 0"]),
        ("m2", "43:2", ["0 0 0 8 1", "0.1 0 8 8 1", "0.2 0 0 8 0", "0.3 0 8 8 0"]),
        ("m3", "43:3", ["0 0 0 8 1", "0.1 0 8 8 1", "0.2 0 0 8 0", "0.3 0 8 8 0", "0.5 0 24 16 0"]),
    ]

    def setUp(self):
        super().setUp()
        self.cap = self.path("cap")
        os.mkdir(self.cap)
        devices = []
        for name, devno, lines in self.DEVS:
            src = self.path(name + ".ds")
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            r = run("convert", "-q", "--from", "disksim", "--to", "blktrace", "--devno", devno, src,
                    os.path.join(self.cap, name + ".blktrace.0"))
            self.assertEqual(r.returncode, 0, r.stderr)
            devices.append({"path": "/dev/" + name, "name": name, "devno": devno,
                            "role": "volume" if name == "vol" else "member"})
        with open(os.path.join(self.cap, "capture.json"), "w") as f:
            json.dump({"devices": devices, "pid": 0, "started": 0, "stopped": 1,
                       "dropped": {"vol": 0, "m1": 0}}, f)

    def test_summary_json(self):
        r = run_blk("summary", self.cap, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        q = {d["name"]: d["queued"] for d in j["devices"]}
        self.assertEqual(q["vol"], {"reads": 1, "writes": 4, "read_bytes": 4096, "write_bytes": 16384,
                                    "flushes": 0, "discards": 0})
        self.assertEqual((q["m3"]["reads"], q["m3"]["writes"], q["m3"]["write_bytes"]), (2, 3, 16384))
        self.assertEqual([d["role"] for d in j["devices"]], ["volume"] + ["member"] * 4)
        v = j["volume"]
        self.assertEqual((v["member_reads"], v["member_writes"]), (9, 10))
        self.assertEqual(v["member_reads_per_volume_write"], 2.25)
        self.assertEqual(v["member_writes_per_volume_write"], 2.5)
        self.assertEqual(v["member_ios_per_volume_io"], 3.8)
        self.assertEqual(v["member_write_bytes_per_volume_write_byte"], 2.75)
        # I/Os per member 4, 6, 4, 5: mean 4.75, population sd 0.8292.
        self.assertEqual(v["member_queued_ios_cv"], 0.1746)
        self.assertEqual(v["member_queued_bytes_cv"], 0.2)
        self.assertEqual(v["member_share"]["m1"], 0.3158)
        # btt saw 100 us between the QUEUE events of m0.
        m0 = j["devices"][1]
        self.assertEqual(m0["btt"]["Q2Q"], {"min_us": 100.0, "avg_us": 100.0, "max_us": 100.0, "n": 3})
        self.assertIsNone(m0["q2c_avg_us"])
        self.assertEqual(m0["dropped"], None)
        self.assertEqual(j["devices"][2]["dropped"], 0)

    def test_summary_text(self):
        jf = self.path("s.json")
        r = run_blk("summary", self.cap, "--json-file", jf)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(jf) as f:
            self.assertEqual(json.load(f)["volume"]["member_writes"], 10)
        out = r.stdout.decode()
        self.assertRegex(out, r"\nm1 +member +3 +3 ")
        self.assertIn("member reads per volume write:  2.250", out)
        self.assertIn("member queued I/Os, CV:         0.175", out)

    def test_missing_capture(self):
        r = run_blk("summary", self.path("nothing"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("capture.json", r.stderr.decode())
        os.unlink(os.path.join(self.cap, "m2.blktrace.0"))
        r = run_blk("summary", self.cap)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no trace files for /dev/m2", r.stderr.decode())

    @unittest.skipUnless(shutil.which("fio") and dev_has_block_device(), "fio or a /dev block device missing")
    def test_replay_on_a_file(self):
        d = odirect_dir([self.tmp, HERE])
        if d is None:
            self.skipTest("no directory here supports O_DIRECT")
        work = tempfile.mkdtemp(prefix=".replay.", dir=d)
        self.addCleanup(shutil.rmtree, work, True)
        target = os.path.join(work, "t.img")
        with open(target, "wb") as f:
            f.truncate(1 << 20)
        r = run_blk("replay", self.cap, "--dev", "m1", "--target", target, "--asap")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        job = json.loads(out)["jobs"][0]
        self.assertEqual((job["read"]["total_ios"], job["write"]["total_ios"]), (3, 3))
        self.assertEqual((job["read"]["io_bytes"], job["write"]["io_bytes"]), (12288, 12288))
        self.assertTrue(os.path.exists(os.path.join(self.cap, "replay", "m1-on-t.img.json")))
        r = run_blk("replay", self.cap, "--dev", "nosuch", "--target", target)
        self.assertEqual(r.returncode, 2)
        self.assertIn("nosuch was not captured here", r.stderr.decode())

    def test_usage(self):
        r = run_blk()
        self.assertEqual(r.returncode, 2)
        r = run_blk("summary", self.cap, "--", "x")
        self.assertEqual(r.returncode, 2)
        r = run_blk("run", "--out", self.cap, "--devs", "/dev/null")
        self.assertEqual(r.returncode, 2)
        for sub in ("capture", "stop", "run", "summary", "replay"):
            r = run_blk(sub, "--help")
            self.assertEqual(r.returncode, 0)
            self.assertIn(b"exit status", r.stdout)


# ------------------------------------------------------------ real samples

@unittest.skipUnless(os.path.isdir(SHARED), "no ../shared/traces next to the repository")
class TestRealSamples(unittest.TestCase):
    # Counts documented in ../shared/traces/SOURCES.md.
    CASES = [
        ("msr", "hm_0.csv", [], 5820, 1196),
        ("msr", "msr-cambridge1-sample.csv", [], 508, 492),
        ("msr", "wdev_3.csv", [], 11, 671),
        ("systor", "systor17-traces-sample.csv.gz", [], 826, 173),
        ("systor", "systor17-additional-sample.csv.gz", [], 700, 299),
        ("tencent", "cloud_storage-sample.bz2", [], 24521, 25479),
        ("disksim", "tpcc-small.trace", ["--time-unit", "ns"], 4381, 2618),
        ("blktrace", "sdb.blktrace.0", [], 1311, 0),
    ]

    def test_counts(self):
        for fmt, name, opts, reads, writes in self.CASES:
            p = os.path.join(SHARED, name)
            if not os.path.exists(p):
                continue
            with self.subTest(sample=name):
                r = run("info", "--from", fmt, "--json", *opts, p)
                self.assertEqual(r.returncode, 0, r.stderr)
                j = json.loads(r.stdout)
                self.assertEqual((j["reads"], j["writes"]), (reads, writes))


if __name__ == "__main__":
    unittest.main()
