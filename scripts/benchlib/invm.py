"""The in-VM part of scripts/bench: builds the channel model, creates each
contender on the same members, runs fio with the disturbances, and writes one
JSON file per run. Runs as root inside the test VM (scripts/vm-run.sh) or
inside an already running test VM (tests/cases/12-bench-smoke.sh).
"""
import base64
import datetime
import fcntl
import hashlib
import json
import os
import re
import select
import shlex
import signal
import statistics
import struct
import subprocess
import sys
import threading
import time
import traceback
import zlib

from . import config, model

PREFIX = "bch"          # null_blk channels /dev/bch0.. and dm regions bch0a, bch0b
RS_NAME = "bench-rs"
DMRAID_NAME = "bench-dmraid"
STRIPE_NAME = "bench-stripe"
MD_DEV = "/dev/md100"
SCHEMA = 1
RESERVED = 32768        # sectors rainssd and md (--data-offset=16M) keep at the start


def now():
    return time.monotonic()


def sh(cmd, check=True, timeout=600, env=None, quiet=False):
    """Run a command; return CompletedProcess (text). Raises on failure if check."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    if check and r.returncode != 0:
        # libdevmapper's note that it bypasses udev (--stop-udev) is noise.
        msg = "\n".join(l for l in (r.stderr or r.stdout).strip().splitlines()
                        if not l.startswith("Udev is running and DM_DISABLE_UDEV"))
        raise RuntimeError("%s: exit %d: %s" % (" ".join(map(shlex.quote, cmd)), r.returncode,
                                                msg.replace("\n", " / ")[-400:]))
    return r


def settle():
    if os.environ.get("DM_DISABLE_UDEV"):
        return
    subprocess.run(["udevadm", "settle", "--timeout=10"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def wait_block(path, secs=10):
    t = now()
    while now() - t < secs:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def sysname(dev):
    """/dev/mapper/x or /dev/md100 -> 'dm-3' / 'md100' (by device number:
    /dev/mapper/x is a node, not a link, when udev does not run)."""
    rdev = os.stat(dev).st_rdev
    return os.path.basename(os.path.realpath("/sys/dev/block/%d:%d" % (os.major(rdev), os.minor(rdev))))


def read_stat(name):
    with open("/sys/block/%s/stat" % name) as f:
        v = [int(x) for x in f.read().split()]
    # read_ticks_ms / reads: the mean time a read spent from its allocation to
    # its end, queue included (the same for writes).
    return {"reads": v[0], "read_sectors": v[2], "read_ticks_ms": v[3], "writes": v[4],
            "write_sectors": v[6], "write_ticks_ms": v[7], "io_ticks_ms": v[9],
            "time_in_queue_ms": v[10]}


MEMINFO_KEYS = ("MemFree", "MemAvailable", "Slab", "SUnreclaim")


def read_meminfo():
    """The MEMINFO_KEYS of /proc/meminfo, KiB."""
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in MEMINFO_KEYS:
                    out[k] = int(v.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def read_cpu():
    """The guest's CPU time from /proc/stat's first line: (busy, total)
    jiffies summed over every CPU; busy is all but idle and iowait (an
    emulated CPU that waits for nothing is busy)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return (0, 0)
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    total = sum(v[:8])
    return (total - idle, total)


def cpu_busy(a, b):
    """Share of the guest's CPU time that was busy between two read_cpu()
    samples, or None."""
    dt = b[1] - a[1]
    return round((b[0] - a[0]) / dt, 4) if dt > 0 else None


def read_inflight(name):
    with open("/sys/block/%s/inflight" % name) as f:
        r, w = f.read().split()
    return int(r) + int(w)


def cv(values):
    values = list(values)
    if len(values) < 2:
        return 0.0
    m = statistics.fmean(values)
    return statistics.pstdev(values) / m if m > 0 else 0.0


# --- dm suspend/resume through the ioctl (no fork+exec per stall) -----------

_DM_SIZE = 312
_DM_SUSPEND = (3 << 30) | (_DM_SIZE << 16) | (0xFD << 8) | 6
_DM_SUSPEND_FLAG, _DM_SKIP_LOCKFS, _DM_NOFLUSH = 1 << 1, 1 << 10, 1 << 11
# udev flags in the cookie: keep udev rules (blkid probes) off our resumes.
_UDEV_QUIET = (0x0002 | 0x0004 | 0x0008 | 0x0020) << 16


def _dm_ioctl(name, flags, event_nr=0):
    buf = bytearray(_DM_SIZE)
    struct.pack_into("=3IIIIiIII", buf, 0, 4, 0, 0, _DM_SIZE, _DM_SIZE, 0, 0, flags, event_nr, 0)
    nb = name.encode()[:127]
    buf[48:48 + len(nb)] = nb
    fd = os.open("/dev/mapper/control", os.O_RDWR)
    try:
        fcntl.ioctl(fd, _DM_SUSPEND, buf)
    finally:
        os.close(fd)


_DM_TABLE_STATUS = (3 << 30) | (_DM_SIZE << 16) | (0xFD << 8) | 12
_DM_BUFFER_FULL = 1 << 8


def dm_status_line(name, bufsize=16384):
    """`dmsetup status NAME` of a one-target device through DM_TABLE_STATUS,
    without a fork: '<start> <length> <target> <status...>'. Raises OSError
    when the ioctl fails (callers fall back to dmsetup)."""
    while True:
        buf = bytearray(bufsize)
        struct.pack_into("=3IIIIiIII", buf, 0, 4, 0, 0, bufsize, _DM_SIZE, 0, 0, 0, 0, 0)
        nb = name.encode()[:127]
        buf[48:48 + len(nb)] = nb
        fd = os.open("/dev/mapper/control", os.O_RDWR)
        try:
            fcntl.ioctl(fd, _DM_TABLE_STATUS, buf)
        finally:
            os.close(fd)
        (_, _, _, _data_size, data_start, count, _open, flags,
         _event, _pad) = struct.unpack_from("=3IIIIiIII", buf, 0)
        if flags & _DM_BUFFER_FULL and bufsize < 1 << 22:
            bufsize *= 4
            continue
        break
    if count < 1:
        return ""
    o = data_start
    start, length, _st, _next = struct.unpack_from("=QQiI", buf, o)
    ttype = bytes(buf[o + 24:o + 40]).split(b"\0")[0].decode()
    txt = bytes(buf[o + 40:]).split(b"\0")[0].decode()
    return ("%d %d %s %s" % (start, length, ttype, txt)).strip()


def dm_suspend(name):
    try:
        _dm_ioctl(name, _DM_SUSPEND_FLAG | _DM_SKIP_LOCKFS | _DM_NOFLUSH)
    except OSError:
        sh(["dmsetup", "suspend", "--nolockfs", "--noflush", name])


def dm_resume(name):
    try:
        _dm_ioctl(name, 0, _UDEV_QUIET)
    except OSError:
        sh(["dmsetup", "resume", "--noudevrules", "--noudevsync", name])


# --- disturbances -------------------------------------------------------------

class Staller(threading.Thread):
    """Suspends a member's array region for stall_ms every period_ms: new I/O
    to the member waits (in-flight I/O completes first), like a GC pause."""

    def __init__(self, dmname, stall_ms, period_ms):
        super().__init__(daemon=True)
        self.dmname, self.stall, self.period = dmname, stall_ms / 1000.0, period_ms / 1000.0
        self.stop_ev = threading.Event()
        self.stalls = []
        self.error = None

    def run(self):
        nxt = now() + self.period - self.stall
        try:
            while not self.stop_ev.wait(max(0.0, nxt - now())):
                t0 = now()
                dm_suspend(self.dmname)
                t1 = now()
                self.stop_ev.wait(self.stall)
                dm_resume(self.dmname)
                t2 = now()
                self.stalls.append((t1 - t0, t2 - t0))
                nxt += self.period
                if nxt < now():
                    nxt = now() + self.period - self.stall
        except Exception as e:  # keep the run alive, report it
            self.error = str(e)
            try:
                dm_resume(self.dmname)
            except Exception:
                pass

    def stop(self):
        self.stop_ev.set()
        if self.ident is not None:
            self.join(timeout=30)

    def summary(self):
        d = [s[1] * 1000 for s in self.stalls]
        return {"count": len(d), "total_ms": round(sum(d), 1),
                "mean_ms": round(statistics.fmean(d), 1) if d else 0.0,
                "max_ms": round(max(d), 1) if d else 0.0,
                "error": self.error}


class Sampler(threading.Thread):
    """Every interval seconds: reads /sys/block/*/stat and */inflight of the
    array members and of the channels. It finds the measured window (from
    the last sample before the members' I/O counters first move to the first
    sample after they stop moving), so fio's start-up and exit, which take
    seconds under TCG, are not in the averages; and it keeps, over that
    window, the per-device mean in-flight count and the per-sample
    coefficient of variation of in-flight I/O across the members and across
    the channels (samples with nothing in flight are skipped)."""

    def __init__(self, members, channels, volume, interval=0.1, md_cache=None):
        super().__init__(daemon=True)
        self.names = list(members) + list(channels) + [volume]
        self.nm = len(members)
        self.interval = interval
        self.stop_ev = threading.Event()
        self.sums = [0] * len(self.names)
        self.member_cvs, self.channel_cvs = [], []
        self.n = 0
        # Memory over the window: /proc/meminfo's lowest MemFree and
        # MemAvailable and highest Slab and SUnreclaim; md's stripe cache
        # entries in use (md_cache: its stripe_cache_active file).
        self.md_cache = md_cache
        self.mem_low, self.mem_high, self.md_active_max = {}, {}, None
        self.first = self.snap()
        self.w_start = None      # (time, stats, meminfo, cpu) just before member I/O started
        self.w_last = None       # (time, stats, meminfo, cpu) of the last sample that saw member I/O move
        self.cpu = None          # the guest's busy CPU share over the window (window() sets it)

    def snap(self):
        return now(), [read_stat(x) for x in self.names], read_meminfo(), read_cpu()

    def _mem(self, snap):
        mi = snap[2]
        for k in ("MemFree", "MemAvailable"):
            if k in mi:
                self.mem_low[k] = min(self.mem_low.get(k, mi[k]), mi[k])
        for k in ("Slab", "SUnreclaim"):
            if k in mi:
                self.mem_high[k] = max(self.mem_high.get(k, mi[k]), mi[k])
        if self.md_cache:
            try:
                with open(self.md_cache) as f:
                    a = int(f.read().split()[0])
                self.md_active_max = max(self.md_active_max or 0, a)
            except (OSError, ValueError, IndexError):
                pass

    @staticmethod
    def _ios(st, nm):
        """I/Os completed on the volume (the last device)."""
        return st[-1]["reads"] + st[-1]["writes"]

    def run(self):
        prev = self.first
        while not self.stop_ev.wait(self.interval):
            try:
                cur = self.snap()
                v = [read_inflight(x) for x in self.names[:-1]]
            except OSError:
                continue
            moved = self._ios(cur[1], self.nm) != self._ios(prev[1], self.nm)
            if moved:
                if self.w_start is None:
                    self.w_start = prev
                    self._mem(prev)
                self.w_last = cur
            prev = cur
            if self.w_start is None:
                continue
            self._mem(cur)
            self.n += 1
            for i, x in enumerate(v):
                self.sums[i] += x
            m, c = v[:self.nm], v[self.nm:]
            if sum(m) > 0:
                self.member_cvs.append(cv(m))
            if sum(c) > 0:
                self.channel_cvs.append(cv(c))

    def stop(self):
        self.stop_ev.set()
        if self.ident is not None:
            self.join(timeout=10)

    def window(self, final):
        """(seconds, start stats, end stats) of the measured window; final is
        a snapshot taken after fio exited."""
        if self.w_start is None:  # too short for two samples: whole fio run
            self.cpu = cpu_busy(self.first[3], final[3])
            return final[0] - self.first[0], self.first[1], final[1]
        end = final if self._ios(final[1], self.nm) != self._ios(self.w_last[1], self.nm) else self.w_last
        self.cpu = cpu_busy(self.w_start[3], end[3])
        return end[0] - self.w_start[0], self.w_start[1], end[1]

    def memory(self):
        """The kernel's memory over the window against the sample just
        before it (KiB; fio's own buffers are allocated before then):
        MemFree and MemAvailable drops, Slab and SUnreclaim rises. The
        channels are memory-backed null_blk devices, which allocate a page
        on the first write of a sector: measure on a prefilled region."""
        base = self.w_start[2] if self.w_start else {}
        out = {"before_kb": {k: base.get(k) for k in MEMINFO_KEYS},
               "drop_kb": {k: base[k] - v for k, v in self.mem_low.items() if k in base},
               "rise_kb": {k: v - base[k] for k, v in self.mem_high.items() if k in base}}
        if self.md_cache:
            out["md_stripe_cache_active_max"] = self.md_active_max
        return out

    def summary(self):
        mean = [round(s / self.n, 3) if self.n else 0.0 for s in self.sums[:-1]]
        return {"interval_s": self.interval, "samples": self.n,
                "memory": self.memory(),
                "member_mean": mean[:self.nm], "channel_mean": mean[self.nm:],
                "member_cv_mean": round(statistics.fmean(self.member_cvs), 4) if self.member_cvs else None,
                "channel_cv_mean": round(statistics.fmean(self.channel_cvs), 4) if self.channel_cvs else None}


# --- fio ------------------------------------------------------------------------

def fio_pattern(jobfile, env):
    """rw, rwmixread of a job file after ${VAR} substitution."""
    rw, mix = None, None
    with open(jobfile) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"(rw|readwrite|rwmixread)\s*=\s*(\S+)", line)
            if not m:
                continue
            val = re.sub(r"\$\{(\w+)\}", lambda x: env.get(x.group(1), ""), m.group(2))
            if m.group(1) == "rwmixread":
                mix = int(val)
            else:
                rw = val
    if rw in ("randread", "read"):
        rf = 1.0
    elif rw in ("randwrite", "write"):
        rf = 0.0
    elif rw in ("randrw", "rw", "readwrite"):
        rf = (mix if mix is not None else 50) / 100.0
    else:
        raise ValueError("%s: unsupported rw=%s" % (jobfile, rw))
    return rw, rf


def lat_summary(d):
    """Essentials of one direction of fio's JSON (+ the latency histogram)."""
    lat = d.get("lat_ns") or {}
    pct = lat.get("percentile") or (d.get("clat_ns") or {}).get("percentile") or {}

    def p(key):
        for k, v in pct.items():
            if abs(float(k) - key) < 1e-6:
                return round(v / 1000.0, 1)
        return None
    bins = lat.get("bins") or (d.get("clat_ns") or {}).get("bins") or {}
    return {
        "ios": d.get("total_ios", 0),
        "iops": round(d.get("iops", 0.0), 2),
        "mib_s": round(d.get("bw_bytes", 0) / 1048576.0, 3),
        "lat_us": {"mean": round(lat.get("mean", 0.0) / 1000.0, 1),
                   "min": round(lat.get("min", 0) / 1000.0, 1),
                   "max": round(lat.get("max", 0) / 1000.0, 1),
                   "p50": p(50), "p99": p(99), "p99.9": p(99.9), "p99.99": p(99.99)},
        "lat_hist_ns": sorted([int(k), v] for k, v in bins.items()),
    }


def perf_top(text, top):
    """perf report -t '|' --sort dso,sym lines -> [[share %, dso, symbol]]."""
    out = []
    for line in text.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) != 3 or not f[0].endswith("%"):
            continue
        try:
            pct = float(f[0][:-1])
        except ValueError:
            continue
        out.append([pct, f[1], re.sub(r"^\[.\]\s*", "", f[2])])
        if len(out) >= top:
            break
    return out


class Profiler:
    """perf record of the whole system (every CPU, the cpu-clock software
    event: QEMU/TCG has no hardware counters) from start to stop(); stop()
    returns the flat profile by symbol: the event, the sample count and the
    symbols with their share of the samples (at least 0.5%, at most 40),
    kernel modules named."""
    TOP = 40

    READY_S = 120

    def __init__(self, path):
        self.path = path
        d = os.path.dirname(path)
        self.ctl, self.ack = os.path.join(d, "perf.ctl"), os.path.join(d, "perf.ack")
        for f in (self.ctl, self.ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        # Started with its event off (-D -1) and enabled once it is ready:
        # under TCG perf's start (the synthesized events of every task and
        # module) took longer than a 20 s run, which then kept 10 samples.
        self.p = subprocess.Popen(["perf", "record", "-a", "-e", "cpu-clock", "-F", "997", "-q",
                                   "-D", "-1", "--control", "fifo:%s,%s" % (self.ctl, self.ack),
                                   "-o", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.ready = self.enable()

    def enable(self):
        """Send `enable` and wait for perf's ack (at most READY_S)."""
        t0 = time.monotonic()
        try:
            # O_RDWR: neither open waits for perf to open its end
            ctl = os.open(self.ctl, os.O_RDWR | os.O_NONBLOCK)
            ack = os.open(self.ack, os.O_RDWR | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            os.write(ctl, b"enable\n")
            got = b""
            while time.monotonic() - t0 < self.READY_S and self.p.poll() is None:
                r, _, _ = select.select([ack], [], [], 0.5)
                if r:
                    got += os.read(ack, 64)
                    if b"ack" in got:
                        return True
            return False
        finally:
            os.close(ctl)
            os.close(ack)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        try:
            _, err = self.p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, err = self.p.communicate()
        out = {"event": "cpu-clock", "samples": None, "top": []}
        if not self.ready:
            out["error"] = "perf did not acknowledge `enable` within %d s" % self.READY_S
        r = sh(["perf", "report", "-i", self.path, "--stdio", "--no-children", "--sort", "dso,sym",
                "--percent-limit", "0.5", "-q", "-t", "|"], check=False, timeout=600)
        if r.returncode != 0:
            out["error"] = (r.stderr or err.decode(errors="replace")).strip()[-300:]
            return out
        out["top"] = perf_top(r.stdout, self.TOP)
        n = sh(["perf", "script", "-i", self.path, "-F", "cpu"], check=False, timeout=600)
        out["samples"] = len(n.stdout.splitlines()) if n.returncode == 0 else None
        try:
            os.unlink(self.path)
        except OSError:
            pass
        return out


class Runner:
    def __init__(self, scenarios, out, repeat, runtime=None, contenders=None,
                 prefill=True, emit=False, seed=4242, stop_udev=False, trace=None, modules=None,
                 perf=False):
        self.scenarios = scenarios
        self.perf = perf    # profile every measured run with perf (cpu-clock, whole system)
        # module spec ('git:REV', 'dir:PATH') -> directory with dm-rainssd.ko
        # (built on the host by scripts/bench run)
        self.modules = dict(modules or {})
        self.loaded_module = None     # the spec of the module loaded now; None: the checkout's
        self.module_dir = None
        self.rainssd_versions = {}
        self.trace = trace  # (format, path) from --trace, or None
        self.iologs = {}
        self.out = out
        self.repeat = repeat
        self.runtime = runtime
        self.only = contenders
        self.prefill = prefill
        self.emit = emit
        self.seed = seed
        self.stop_udev = stop_udev
        self.udevd = None
        self.failed = 0
        self.errors = 0
        self.done = 0
        self.total = 0
        self.t_start = now()
        self.kernel = os.uname().release
        self.here = os.path.dirname(os.path.abspath(__file__))
        self.channels_sh = os.path.join(config.REPO, "scripts", "channels.sh")

    # -- output --
    def log(self, msg):
        el = now() - self.t_start
        print("[%3d:%02d] %s" % (el // 60, el % 60, msg), flush=True)

    def write_json(self, name, obj):
        path = os.path.join(self.out, name)
        data = json.dumps(obj, indent=1, sort_keys=True).encode()
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        if self.emit:
            # Stream the file to the host (the VM's view of the repository may
            # be read-only): zlib + base64 between markers.
            b = base64.b64encode(zlib.compress(data, 6)).decode()
            sys.stdout.write("@@BENCH-FILE-BEGIN %s\n" % name)
            for i in range(0, len(b), 120):
                sys.stdout.write(b[i:i + 120] + "\n")
            sys.stdout.write("@@BENCH-FILE-END %s %s\n" % (name, hashlib.sha256(data).hexdigest()))
            sys.stdout.flush()

    # -- kernel setup --
    def prepare_kernel(self, module_dir):
        for m in ("dm-mod", "dm-delay", "dm-raid", "raid456", "raid10", "null_blk", "configfs"):
            subprocess.run(["modprobe", "-q", m], stderr=subprocess.DEVNULL)
        self.module_dir = module_dir
        targets = sh(["dmsetup", "targets"], check=False).stdout
        if "rainssd" not in targets and module_dir:
            ko = os.path.join(module_dir, "dm-rainssd.ko")
            r = sh(["insmod", ko], check=False)
            if r.returncode != 0:
                self.log("warning: insmod %s failed: %s" % (ko, r.stderr.strip()))
        self.rainssd_version = self.target_version()
        self.loaded_module = None
        if not self.rainssd_version:
            self.log("warning: the rainssd target is not loaded; its contenders will fail")

    @staticmethod
    def target_version():
        targets = sh(["dmsetup", "targets"], check=False).stdout
        m = re.search(r"^rainssd\s+v(\S+)", targets, re.M)
        return m.group(1) if m else None

    def use_module(self, c):
        """Load the module build a rainssd contender asks for (`module =
        git:REV` or `dir:PATH`; none: the checkout's), unloading the other:
        every build registers the same target name, so one at a time. The
        contender's volume does not exist yet and the last one is removed."""
        want = c.get("module")
        if want == self.loaded_module:
            return self.rainssd_version
        if want is None:
            mdir = self.module_dir
        elif want in self.modules:
            mdir = self.modules[want]
        elif want.startswith("dir:"):
            mdir = want[4:]
        else:
            raise RuntimeError("module %s was not built (scripts/bench run builds it on the host)" % want)
        if not mdir:
            raise RuntimeError("no directory with the checkout's dm-rainssd.ko (--module DIR)")
        ko = os.path.join(mdir, "dm-rainssd.ko")
        if not os.path.isfile(ko):
            raise RuntimeError("no %s" % ko)
        if self.target_version():
            sh(["rmmod", "dm_rainssd"], timeout=120)
        self.loaded_module = None
        self.rainssd_version = None
        sh(["insmod", ko], timeout=120)
        self.loaded_module = want
        self.rainssd_version = self.target_version()
        self.log("    loaded %s: rainssd %s (%s)" % (ko, self.rainssd_version, want or "the checkout"))
        return self.rainssd_version

    def restore_module(self):
        """The checkout's module again at the end (for a caller in the same VM)."""
        if self.loaded_module is not None and self.module_dir:
            try:
                self.use_module({"module": None})
            except Exception as e:  # the run is over: report, do not fail it
                self.log("warning: could not load the checkout's module again: %s" % e)

    def udev_off(self):
        """Stop udevd for the run. Every resume of a dm device (each stall)
        sends a change uevent, and udev's dm rules run programs and probe the
        device for each one: under TCG that is about a second of CPU per
        event. Without udevd, libdevmapper and mdadm make their own device
        nodes (DM_DISABLE_UDEV, MDADM_NO_UDEV) and devtmpfs makes the rest."""
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % pid) as f:
                    comm = f.read().strip()
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv0 = f.read().split(b"\0")[0].decode()
            except OSError:
                continue
            # systemd-udevd is often a link to udevadm: match the name it runs as.
            if comm == "systemd-udevd" or os.path.basename(argv0) == "systemd-udevd":
                self.udevd = argv0 if os.path.isabs(argv0) else "/usr/lib/systemd/systemd-udevd"
                break
        if self.udevd:
            settle()
            sh(["udevadm", "control", "--exit"], check=False, timeout=120)
            for _ in range(100):
                if not os.path.exists("/run/udev/control"):
                    break
                time.sleep(0.1)
            self.log("stopped udevd for the run (restarted at the end)")
        else:
            self.log("udevd is not running")
        os.environ["DM_DISABLE_UDEV"] = "1"
        os.environ["MDADM_NO_UDEV"] = "1"

    def udev_on(self):
        os.environ.pop("DM_DISABLE_UDEV", None)
        os.environ.pop("MDADM_NO_UDEV", None)
        if self.udevd:
            sh([self.udevd, "--daemon"], check=False, timeout=120)
            self.udevd = None

    def cleanup_all(self):
        """Remove anything a previous (crashed) run of ours left behind."""
        ls = sh(["dmsetup", "ls"], check=False).stdout
        names = [l.split()[0] for l in ls.splitlines() if l.strip() and not l.startswith("No ")]
        for n in names:
            if n in (RS_NAME, DMRAID_NAME):
                sh(["dmsetup", "remove", "--retry", n], check=False)
        if os.path.exists(MD_DEV):
            sh(["mdadm", "--stop", MD_DEV], check=False)
        for n in names:
            if re.fullmatch(PREFIX + r"\d+[ab]", n):
                sh(["dmsetup", "resume", n], check=False)
                sh(["dmsetup", "remove", "--retry", n], check=False)
        sh([self.channels_sh, "destroy", "--prefix", PREFIX], check=False)
        self.destroy_brd()

    # -- channel model --
    def build_null_blk(self, count, size_mb, lats, ch):
        """@count null_blk channels of @size_mb made by channels.sh; their paths."""
        return sh([self.channels_sh, "create", str(count), "--prefix", PREFIX,
                   "--size-mb", str(size_mb),
                   "--lat-list", ",".join(str(x) for x in lats),
                   "--qd", str(ch["qd"]), "--queue", str(ch.get("queue", 0))]
                  + (["--wbt-lat-us", str(ch["wbt_lat_us"])] if ch.get("wbt_lat_us") is not None else [])
                  + ([] if ch.get("memory_backed", 1) else ["--no-memory"])
                  ).stdout.split()

    def build_brd(self, count, size_mb):
        """@count RAM disks (brd) of @size_mb; their paths. The module is
        loaded afresh, so every contender starts on empty devices."""
        self.destroy_brd()
        sh(["modprobe", "brd", "rd_nr=%d" % count, "rd_size=%d" % (size_mb * 1024), "max_part=0"])
        settle()
        out = ["/dev/ram%d" % i for i in range(count)]
        for d in out:
            with open("/sys/block/%s/size" % os.path.basename(d)) as f:
                if int(f.read()) != size_mb * 2048:
                    raise RuntimeError("%s is not %d MiB: brd built in with other sizes?" % (d, size_mb))
        return out

    def destroy_brd(self):
        """Unload brd when it is loaded (its devices go with it)."""
        if os.path.isdir("/sys/module/brd"):
            sh(["modprobe", "-r", "brd"], check=False, timeout=120)

    def build_channels(self, sc):
        """The members' channels, and for a rebuild scenario one spare
        channel more (the same kind; its array region is self.spares[0])."""
        n, ch = sc["members"], sc["channel"]
        spares = 1 if sc.get("kind") == "rebuild" else 0
        member_sec = sc["member_mb"] * 2048
        bg_sec = ch["bg_mb"] * 2048
        lats = list(ch["lat_us"]) + [ch["base_lat_us"]] * spares
        if ch.get("device") == "brd":
            out = self.build_brd(n + spares, sc["member_mb"] + ch["bg_mb"])
        else:
            out = self.build_null_blk(n + spares, sc["member_mb"] + ch["bg_mb"], lats, ch)
        if len(out) != n + spares:
            raise RuntimeError("made %d channels, wanted %d" % (len(out), n + spares))
        members, bgs, bg_offs, linear = [], [], [], []
        for i, d in enumerate(out):
            a, b = "%s%da" % (PREFIX, i), "%s%db" % (PREFIX, i)
            if ch.get("member_dev") == "channel":
                # The member is the channel device itself: what else runs on
                # the channel (a foreign tenant on its tail) is in the
                # member's own I/O statistics.
                members.append(d)
            else:
                if ch["write_extra_ms"] > 0:
                    table = "0 %d delay %s 0 0 %s 0 %d" % (member_sec, d, d, ch["write_extra_ms"])
                else:
                    table = "0 %d linear %s 0" % (member_sec, d)
                sh(["dmsetup", "create", a, "--table", table])
                members.append("/dev/mapper/" + a)
                linear.append(members[-1])
            if bg_sec and ch.get("member_dev") == "channel":
                # The tenant opens the channel itself at the tail's offset: a
                # dm-linear there would claim the channel for device-mapper,
                # and mdadm could not open the members exclusively.
                bgs.append(d)
                bg_offs.append(member_sec * 512)
            elif bg_sec:
                sh(["dmsetup", "create", b, "--table", "0 %d linear %s %d" % (bg_sec, d, member_sec)])
                bgs.append("/dev/mapper/" + b)
                bg_offs.append(0)
        settle()
        for p in members + bgs:
            if not wait_block(p):
                raise RuntimeError("%s did not appear" % p)
        self.chan_devs = out[:n]
        self.spare_chans = out[n:]
        self.members = members[:n]
        self.spares = members[n:]
        self.bgs = bgs[:n] if bgs else []
        self.bg_offs = bg_offs[:n] if bg_offs else []
        self.all_regions = linear + [p for p in bgs if p.startswith("/dev/mapper/")]
        self.member_sec = member_sec

    def destroy_channels(self):
        try:
            for p in getattr(self, "all_regions", []):
                n = os.path.basename(p)
                sh(["dmsetup", "resume", n], check=False, timeout=60)
                sh(["dmsetup", "remove", "--retry", n], check=False, timeout=60)
            sh([self.channels_sh, "destroy", "--prefix", PREFIX], check=False, timeout=120)
            self.destroy_brd()
        except subprocess.TimeoutExpired as e:
            self.log("    tearing down the channels timed out: %s" % e)
            self.klog()
        self.members, self.bgs, self.spares, self.all_regions = [], [], [], []

    def klog_since_create(self):
        """The kernel's device-mapper/md lines of the last seconds (why a
        create failed), as ' [kernel: ...]'."""
        r = subprocess.run(["dmesg"], stdout=subprocess.PIPE, text=True)
        lines = [l for l in r.stdout.splitlines()[-8:] if re.search(r"device-mapper|md/|md:|rainssd", l)]
        return "".join(" [kernel: %s]" % re.sub(r"^\[[^]]*\]\s*", "", l) for l in lines[-2:])

    def klog(self, lines=25):
        """The tail of the kernel log, into the progress output."""
        r = subprocess.run(["dmesg"], stdout=subprocess.PIPE, text=True)
        for line in r.stdout.splitlines()[-lines:]:
            self.log("    kernel: " + line)

    # -- contenders --
    def usable_sectors(self, sc, c=None):
        """The volume's length: the members' data areas, less a rainssd
        contender's tier (tier_size)."""
        chunk = sc["chunk_kb"] * 2
        tier = 0
        if c is not None and c["kind"] == "rainssd":
            opts = self.rainssd_options(sc, c)
            if "tier_size" in opts:
                tier = int(opts[opts.index("tier_size") + 1]) // chunk * chunk
        return (self.member_sec - RESERVED - tier) // chunk * chunk * (sc["members"] - 1)

    @staticmethod
    def rainssd_options(sc, c):
        """A rainssd contender's table options, {tier} becoming the scenario's
        tier_mb in sectors."""
        out = []
        for w in c["options"]:
            if "{tier}" in w:
                if not sc.get("tier_mb"):
                    raise RuntimeError("%s wants a tier, but scenario %s has no tier_mb"
                                       % (c["label"], sc["name"]))
                w = w.replace("{tier}", str(sc["tier_mb"] * 2048))
            out.append(w)
        return out

    def create_contender(self, sc, c):
        """Create the contender; return (device path, create command text)."""
        n, chunk = sc["members"], sc["chunk_kb"] * 2
        devs = self.members
        if c["kind"] == "rainssd":
            # A new volume on every run, like mdadm --assume-clean and dm-raid's
            # nosync: the members are zeroed or hold a consistent volume, and
            # an earlier contender's superblocks are cleared first.
            for d in devs:
                sh(["dd", "if=/dev/zero", "of=" + d, "bs=4k", "seek=256", "count=2",
                    "oflag=direct", "status=none"])
            ver = self.use_module(c)
            # nosync (1.4.0: no initial resync of a new volume); versions
            # before 1.4.0 have no superblock, no resync and no such word.
            opt = self.rainssd_options(sc, c) + (["nosync"] if version_at_least(ver, (1, 4, 0)) else [])
            table = "0 %d rainssd %d %d %s%s" % (self.usable_sectors(sc, c), chunk, n, " ".join(devs),
                                                  (" %d %s" % (len(opt), " ".join(opt))) if opt else "")
            cmd = ["dmsetup", "create", RS_NAME, "--table", table]
            sh(cmd)
            dev = "/dev/mapper/" + RS_NAME
        elif c["kind"] == "dm-raid5":
            dev_sec = self.usable_sectors(sc) // (n - 1)
            pairs = " ".join("- %s" % d for d in devs)
            table = "0 %d raid raid5_ls 2 %d nosync %d %s" % (dev_sec * (n - 1), chunk, n, pairs)
            cmd = ["dmsetup", "create", DMRAID_NAME, "--table", table]
            sh(cmd)
            dev = "/dev/mapper/" + DMRAID_NAME
        elif c["kind"] == "dm-stripe":
            # RAID-0 over the same members, the same chunk, from the same data
            # offset as rainssd and md: the ceiling a RAID-5 is measured against.
            dev_sec = self.usable_sectors(sc) // (n - 1)
            devs_off = " ".join("%s %d" % (d, RESERVED) for d in devs)
            table = "0 %d striped %d %d %s" % (dev_sec * n, n, chunk, devs_off)
            cmd = ["dmsetup", "create", STRIPE_NAME, "--table", table]
            sh(cmd)
            dev = "/dev/mapper/" + STRIPE_NAME
        else:
            level = {"md-raid5": ["--level=5", "--layout=left-symmetric"],
                     "md-raid10": ["--level=10", "--layout=n2"]}[c["kind"]]
            # No bitmap unless the contender asks for one or for PPL (which
            # md does not combine with a bitmap).
            own = any(o.startswith(("--bitmap", "--consistency-policy")) for o in c["options"])
            cmd = (["mdadm", "--create", MD_DEV, "--run", "--assume-clean", "--metadata=1.2"]
                   + level + ["--chunk=%dK" % sc["chunk_kb"], "--raid-devices=%d" % n,
                              "--data-offset=16M"] + ([] if own else ["--bitmap=none"])
                   + self.md_size_opt(sc) + c["options"] + devs)
            sh(cmd)
            dev = MD_DEV
        settle()
        if not wait_block(dev):
            raise RuntimeError("%s did not appear" % dev)
        return dev, " ".join(shlex.quote(x) for x in cmd)

    def md_size_opt(self, sc):
        """mdadm --size for members that are whole channels: md uses their
        array region only, as it does of a dm-linear member, and never the
        foreign tenant's tail."""
        if sc["channel"].get("member_dev") != "channel":
            return []
        return ["--size=%dK" % (self.usable_sectors(sc) // (sc["members"] - 1) // 2)]

    def fail_member(self, c, i):
        """Fail member i of the contender's volume (a degraded scenario):
        rainssd `fail I`, md --fail and --remove; wait until it is out."""
        t = now()
        if c["kind"] == "rainssd":
            sh(["dmsetup", "message", RS_NAME, "0", "fail", str(i)])
            while now() - t < 30:
                w = self.dm_status(c).split()
                if len(w) > 5 and len(w[5]) > i and w[5][i] == "D":
                    return
                time.sleep(0.1)
            raise RuntimeError("member %d not dead 30 s after fail" % i)
        if c["kind"] not in ("md-raid5", "md-raid10"):
            raise RuntimeError("%s: no degraded runs for kind %s" % (c["label"], c["kind"]))
        sh(["mdadm", MD_DEV, "--fail", self.members[i]])
        r = None
        while now() - t < 30:
            r = sh(["mdadm", MD_DEV, "--remove", self.members[i]], check=False)
            if r.returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError("mdadm --remove %s: %s" % (self.members[i], r.stderr.strip()[-200:]))

    def remove_contender(self, c):
        t = now()
        try:
            if c["kind"] == "rainssd":
                sh(["dmsetup", "remove", "--retry", RS_NAME], check=False, timeout=120)
            elif c["kind"] in ("dm-raid5", "dm-stripe"):
                name = DMRAID_NAME if c["kind"] == "dm-raid5" else STRIPE_NAME
                sh(["dmsetup", "remove", "--retry", name], check=False, timeout=120)
            else:
                if os.path.exists(MD_DEV):
                    sh(["mdadm", "--stop", MD_DEV], check=False, timeout=120)
                sh(["mdadm", "--zero-superblock"] + self.members, check=False, timeout=120)
            settle()
        except subprocess.TimeoutExpired as e:
            self.log("    removing %s timed out: %s" % (c["label"], e))
            self.klog()
        if now() - t > 10:
            self.log("    removing %s took %.0f s" % (c["label"], now() - t))

    def dm_status(self, c):
        if c["kind"] == "rainssd":
            try:
                return dm_status_line(RS_NAME)
            except OSError:
                return sh(["dmsetup", "status", RS_NAME], check=False).stdout.strip()
        if c["kind"] in ("dm-raid5", "dm-stripe"):
            name = DMRAID_NAME if c["kind"] == "dm-raid5" else STRIPE_NAME
            return sh(["dmsetup", "status", name], check=False).stdout.strip()
        try:
            with open("/sys/block/md100/md/array_state") as f:
                return "md array_state " + f.read().strip()
        except OSError:
            return ""

    # -- jobs --
    def job_env(self, sc, job):
        chunk_b = sc["chunk_kb"] * 1024
        stripe_b = chunk_b * (sc["members"] - 1)
        env = {"OFFSET": "0", "NUMJOBS": "1", "IODEPTH": "1", "SIZE": "64m", "SEED": str(self.seed),
               "RWMIX": "50", "RUNTIME": str(sc["runtime"])}
        for k, v in job["env"].items():
            env[k] = v.replace("{stripe}", str(stripe_b)).replace("{chunk}", str(chunk_b))
        if self.runtime:
            env["RUNTIME"] = str(self.runtime)
        env.setdefault("BS", "4k")
        env.setdefault("BA", env["BS"])
        return env

    def trace_iolog(self, job, env):
        """Convert a trace job's trace to a fio iolog v3 folded into the
        job's SIZE (once per trace and size); return its path and what it
        holds."""
        t = job["trace"]
        fmt, path = self.trace or (t["format"], t["path"])
        if not fmt:
            raise RuntimeError("job %s replays a trace: give --trace FORMAT:PATH" % job["name"])
        path = os.path.join(config.REPO, path)
        key = (fmt, path, env["SIZE"], t["records"], t["speed"])
        if key in self.iologs:
            return self.iologs[key]
        os.makedirs(self.out, exist_ok=True)
        out = os.path.join(self.out, "trace-%d.iolog" % len(self.iologs))
        cmd = [sys.executable, os.path.join(config.REPO, "userspace-tools", "rainssd-trace"), "convert",
               "--from", fmt, "--to", "iolog", "--fold", "--volume-size", env["SIZE"], "--align", "4096",
               "-q"]
        if t["records"]:
            cmd += ["--max-records", str(t["records"])]
        cmd += ["--asap"] if t["speed"] == 0 else ["--speed", repr(t["speed"])]
        r = subprocess.run(cmd + [path, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("rainssd-trace failed (%d): %s" % (r.returncode, r.stderr.strip()[-400:]))
        reads = writes = 0
        last_us = 0  # rainssd-trace writes iolog v3 timestamps in microseconds
        with open(out) as f:
            for line in f:
                w = line.split()
                if len(w) == 5 and w[2] in ("read", "write"):
                    reads += w[2] == "read"
                    writes += w[2] == "write"
                    last_us = int(w[0])
        info = {"iolog": out, "format": fmt, "trace": os.path.basename(path), "records": t["records"],
                "speed": t["speed"], "reads": reads, "writes": writes, "span_ms": last_us // 1000}
        self.iologs[key] = info
        return info

    def bound(self, sc, job, env, scheme):
        """The device bound of a job, or one with iops None when the job
        has no fixed pattern (a trace replay)."""
        n = sc["members"]
        pattern = None
        try:
            if job.get("trace"):
                raise ValueError("a trace replay has no fixed pattern")
            rw, rf = fio_pattern(os.path.join(config.FIO_DIR, job["fio"]), env)
            bs = config.size_bytes(env["BS"]) // 512
            align = bs if rw in ("read", "write", "rw", "readwrite") else config.size_bytes(env["BA"]) // 512
            pattern = {"read_frac": rf, "bs": bs, "align": align,
                       "offset": config.size_bytes(env["OFFSET"]) // 512,
                       "qd": int(env["IODEPTH"]) * int(env["NUMJOBS"])}
            if not all(sc["channel"]["lat_us"]):
                raise ValueError("zero-latency channels: the CPU is the limit")
            if sc["disturb"].get("foreign"):
                raise ValueError("a closed-loop foreign tenant takes a share of its member "
                                 "that depends on the queues")
        except ValueError as e:
            return {"scheme": scheme, "iops": None, "limit": "unknown: %s" % e, "iops_channels": None,
                    "iops_qd": None, "member_ios_per_io": None, "member_load": None, "path_ms": None,
                    "member_capacity_iops": None,
                    "pattern": dict(pattern, rw=rw) if pattern else None}
        chm = self.channel_model(sc)
        b = model.device_bound(scheme, n, sc["chunk_kb"] * 2, pattern, chm)
        b["pattern"] = dict(pattern, rw=rw)
        return b

    def channel_model(self, sc):
        n, ch, di = sc["members"], sc["channel"], sc["disturb"]
        cap, wait, bg = [1.0] * n, [0.0] * n, [0.0] * n
        for i, s in di["stall"].items():
            cap[i] = 1 - s["stall_ms"] / s["period_ms"]
            wait[i] = s["stall_ms"] ** 2 / (2.0 * s["period_ms"])
        for i, f in di["background"].items():
            bg[i] = self.bg_rate(sc, i)
        return {"lat_ms": [x / 1000.0 for x in ch["lat_us"]], "qd": [ch["qd"]] * n,
                "write_extra_ms": float(ch["write_extra_ms"]), "cap_factor": cap,
                "stall_wait_ms": wait, "bg_iops": bg}

    def bg_rate(self, sc, i):
        ch = sc["channel"]
        return int(sc["disturb"]["background"][i] * ch["qd"] * 1e6 / ch["lat_us"][i])

    def run_prefill(self, sc, dev, jobs):
        want = max(config.size_bytes(self.job_env(sc, j)["OFFSET"]) + config.size_bytes(self.job_env(sc, j)["SIZE"])
                   for j in jobs)
        stripe = sc["chunk_kb"] * 1024 * (sc["members"] - 1)
        bs = stripe * max(1, (512 * 1024) // stripe)
        env = dict(os.environ, DEV=dev, SIZE=str(want), OFFSET="0", BS=str(bs), IODEPTH="4")
        t = now()
        sh(["fio", "--output-format=terse", os.path.join(config.FIO_DIR, "prefill.fio")],
           env=env, timeout=3600)
        return {"bytes": want, "bs": bs, "seconds": round(now() - t, 1)}

    def run_job(self, sc, c, job, dev, env, rep, order_index, prefill_info):
        """Run one measured job; return the run record."""
        n = sc["members"]
        mnames = [sysname(m) for m in self.members]
        cnames = [os.path.basename(d) for d in self.chan_devs]
        tmp = "/tmp/bench-fio-%d" % os.getpid()
        os.makedirs(tmp, exist_ok=True)
        runtime = int(env["RUNTIME"])
        # Background load and stalls start first.
        bg_procs = []
        for i in sorted(sc["disturb"]["background"]):
            rate = self.bg_rate(sc, i)
            benv = dict(os.environ, DEV=self.bgs[i], OFFSET=str(self.bg_offs[i]),
                        SIZE="%dm" % sc["channel"]["bg_mb"],
                        RUNTIME=str(runtime + 60), READ_IOPS=str(max(1, rate // 2)),
                        WRITE_IOPS=str(max(1, rate - rate // 2)), RWMIX="50",
                        IODEPTH=str(max(4, 2 * sc["channel"]["qd"])), SEED=str(self.seed + i))
            outp = os.path.join(tmp, "bg%d.json" % i)
            p = subprocess.Popen(["fio", "--output-format=json", "--output", outp,
                                  os.path.join(config.FIO_DIR, "background.fio")],
                                 env=benv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            bg_procs.append((i, rate, p, outp))
        for i, f in sorted(sc["disturb"].get("foreign", {}).items()):
            fenv = dict(os.environ, DEV=self.bgs[i], OFFSET=str(self.bg_offs[i]),
                        SIZE="%dm" % sc["channel"]["bg_mb"],
                        RUNTIME=str(runtime + 60), RWMIX=str(f["read_pct"]), IODEPTH=str(f["qd"]),
                        SEED=str(self.seed + 100 + i))
            outp = os.path.join(tmp, "foreign%d.json" % i)
            p = subprocess.Popen(["fio", "--output-format=json", "--output", outp,
                                  os.path.join(config.FIO_DIR, "foreign.fio")],
                                 env=fenv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            bg_procs.append((i, None, p, outp))
        stallers = []
        md_cache = None
        if c["kind"] in ("md-raid5", "md-raid10"):
            md_cache = "/sys/block/%s/md/stripe_cache_active" % sysname(dev)
            if not os.path.exists(md_cache):
                md_cache = None
        sampler = Sampler(mnames, cnames, sysname(dev), md_cache=md_cache)
        try:
            return self._measure(sc, c, job, dev, env, runtime, tmp, n, mnames, cnames,
                                 bg_procs, stallers, sampler, prefill_info)
        finally:
            sampler.stop()
            for st in stallers:
                st.stop()
            for _, _, p, _ in bg_procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()

    def _measure(self, sc, c, job, dev, env, runtime, tmp, n, mnames, cnames, bg_procs,
                 stallers, sampler, prefill_info):
        if bg_procs:
            time.sleep(1.0)
        for i, s in sorted(sc["disturb"]["stall"].items()):
            st = Staller(os.path.basename(self.members[i]), s["stall_ms"], s["period_ms"])
            st.member = i
            stallers.append(st)
        if c["kind"] == "rainssd":
            # The counters and stripe_cache_peak (1.3.0) of this job alone;
            # the counters are deltas anyway.
            sh(["dmsetup", "message", RS_NAME, "0", "stats_reset"], check=False)
        status_before = self.dm_status(c)
        for st in stallers:
            st.start()
        sampler.start()
        prof = Profiler(os.path.join(tmp, "perf.data")) if self.perf else None
        t0 = now()
        fio_out = os.path.join(tmp, "main.json")
        fenv = dict(os.environ, DEV=dev, **env)
        cmd = ["fio", "--output-format=json+", "--percentile_list=50:99:99.9:99.99",
               "--lat_percentiles=1", "--output", fio_out, os.path.join(config.FIO_DIR, job["fio"])]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=fenv, timeout=runtime + 600)
        t1 = now()
        profile = prof.stop() if prof else None
        sampler.stop()
        for st in stallers:
            st.stop()
        win_s, s0, s1 = sampler.window(sampler.snap())
        m0, c0, m1, c1 = s0[:n], s0[n:2 * n], s1[:n], s1[n:2 * n]
        status_after = self.dm_status(c)
        bg_res = []
        for i, rate, p, outp in bg_procs:
            p.send_signal(signal.SIGINT)
            try:
                _, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            achieved = None
            try:
                with open(outp) as f:
                    txt = f.read()
                bj = json.loads(txt[txt.index("{"):])["jobs"][0]
                rt = (bj.get("job_runtime") or max(bj["read"]["runtime"], bj["write"]["runtime"])) / 1000.0
                achieved = round((bj["read"]["total_ios"] + bj["write"]["total_ios"]) / rt, 1) if rt else 0.0
            except (OSError, ValueError, KeyError, IndexError):
                pass
            bg_res.append({"member": i, "rate_iops": rate, "achieved_iops": achieved,
                           "kind": "background" if rate is not None else "foreign"})
        if r.returncode != 0:
            raise RuntimeError("fio exit %d: %s" % (r.returncode, (r.stderr or r.stdout).strip()[-400:]))
        with open(fio_out) as f:
            txt = f.read()
        fj = json.loads(txt[txt.index("{"):])
        job0 = fj["jobs"][0]
        rd, wr = lat_summary(job0["read"]), lat_summary(job0["write"])
        wall_ms = max(win_s, 1e-3) * 1000.0

        def delta(a, b):
            d = {k: b[k] - a[k] for k in a}
            d["ios"] = d["reads"] + d["writes"]
            d["avg_inflight"] = round(d["time_in_queue_ms"] / wall_ms, 4)
            return d
        mem = [dict(delta(a, b), dev=self.members[i], sysname=mnames[i])
               for i, (a, b) in enumerate(zip(m0, m1))]
        chan = [dict(delta(a, b), dev=self.chan_devs[i]) for i, (a, b) in enumerate(zip(c0, c1))]
        user_ios = rd["ios"] + wr["ios"]
        samp = sampler.summary()
        memory = samp.pop("memory")
        md_cache = sampler.md_cache
        if md_cache:
            try:
                with open(os.path.join(os.path.dirname(md_cache), "stripe_cache_size")) as f:
                    memory["md_stripe_cache_size"] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        rec = {
            "memory": memory,
            "member_ios_per_user_io": round(sum(m["ios"] for m in mem) / user_ios, 4) if user_ios else None,
            "member_load_cv": round(cv(m["avg_inflight"] for m in mem), 4),
            "member_io_cv": round(cv(m["ios"] for m in mem), 4),
            "channel_load_cv": round(cv(x["avg_inflight"] for x in chan), 4),
            "inflight_samples": samp,
            "guest_cpu_busy": sampler.cpu,
            "member_stats": mem,
            "channel_stats": chan,
            "fio": {"read": rd, "write": wr,
                    "iops": round(rd["iops"] + wr["iops"], 2),
                    "mib_s": round(rd["mib_s"] + wr["mib_s"], 3),
                    "version": fj.get("fio version"), "job_runtime_ms": job0.get("job_runtime")},
            "wall_s": round(wall_ms / 1000.0, 2),
            "fio_wall_s": round(t1 - t0, 2),
            "status_before": status_before,
            "status_after": status_after,
            "background": bg_res,
            "stalls": [dict(st.summary(), member=st.member, stall_ms=sc["disturb"]["stall"][st.member]["stall_ms"],
                            period_ms=sc["disturb"]["stall"][st.member]["period_ms"]) for st in stallers],
            "prefill": prefill_info,
        }
        if profile is not None:
            rec["perf"] = profile
        if c["kind"] == "rainssd":
            rec["rainssd_counters"] = rainssd_counters(status_before, status_after)
            rec["rainssd_cache"] = rainssd_cache(status_after, n)
            rec["rainssd_version"] = self.rainssd_version
            rec["module"] = c.get("module") or "checkout"
        return rec

    # -- main loop --
    def order(self, sc, si, r):
        """The contenders of scenario sc (the si-th) in repeat r: ABC, CBA,
        ... A rebuild scenario's whole sequence is long, so its order also
        alternates from one scenario to the next within a repeat."""
        cons = [c for c in sc["contenders"] if not self.only or c["label"] in self.only]
        flip = (r + si) % 2 if sc.get("kind") == "rebuild" else r % 2
        return list(reversed(cons)) if flip else cons

    def plan(self):
        runs = []
        for si, sc in enumerate(self.scenarios):
            for r in range(self.repeat):
                for oi, c in enumerate(self.order(sc, si, r)):
                    if sc.get("kind") == "rebuild":
                        load = [j for j in sc["jobs"] if j["name"] == sc["rebuild"]["load"]][0]
                        for rate in sc["rebuild"]["rates"]:
                            runs.append((sc, r, oi, c, dict(load, name="rebuild-%s" % rate["label"],
                                                            vars={}, rebuild_rate=rate)))
                        continue
                    if sc.get("kind") == "resync":
                        load = [j for j in sc["jobs"] if j["name"] == sc["resync"]["load"]][0]
                        runs.append((sc, r, oi, c, dict(load, name="resync", vars={}, resync=True)))
                        continue
                    for job in sc["jobs"]:
                        runs.append((sc, r, oi, c, job))
        return runs

    def run(self, module_dir=None):
        os.makedirs(self.out, exist_ok=True)
        self.prepare_kernel(module_dir)
        runs = self.plan()
        self.total = len(runs)
        try:
            with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
                clock = f.read().strip()
        except OSError:
            clock = None
        manifest = {"schema": SCHEMA, "kernel": self.kernel, "rainssd_version": self.rainssd_version,
                    "clocksource": clock,
                    "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "repeat": self.repeat, "runtime_override": self.runtime,
                    "scenarios": [strip_scenario(sc) for sc in self.scenarios], "runs": []}
        self.log("%d runs: %d scenario(s), %d repeat(s), kernel %s, rainssd %s, clocksource %s" % (
            self.total, len(self.scenarios), self.repeat, self.kernel, self.rainssd_version, clock))
        if self.stop_udev:
            self.udev_off()
        manifest["modules"] = dict(self.modules)
        try:
            self.run_scenarios(runs, manifest)
        finally:
            self.restore_module()
            self.udev_on()
        manifest["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        manifest["elapsed_s"] = round(now() - self.t_start, 1)
        manifest["ok"] = self.done
        manifest["errors"] = self.errors
        self.write_json("manifest.json", manifest)
        self.log("done: %d ok, %d errors, %.0f s" % (self.done, self.errors, now() - self.t_start))
        return 0 if self.errors == 0 else 3

    def run_scenarios(self, runs, manifest):
        self.cleanup_all()
        idx = 0
        for si, sc in enumerate(self.scenarios):
            try:
                self.build_channels(sc)
            except Exception as e:
                self.log("scenario %s: channel model failed: %s" % (sc["name"], e))
                self.destroy_channels()
                for (s2, r, oi, c, job) in [x for x in runs if x[0] is sc]:
                    idx += 1
                    self.record_error(manifest, sc, c, job, r, oi, idx, "channels: %s" % e, None)
                continue
            if sc.get("kind") == "rebuild":
                from . import rebuild
                idx = rebuild.run(self, sc, si, manifest, idx)
                self.log("scenario %s: tearing down the channels" % sc["name"])
                self.destroy_channels()
                continue
            if sc.get("kind") == "resync":
                from . import resync
                idx = resync.run(self, sc, si, manifest, idx)
                self.log("scenario %s: tearing down the channels" % sc["name"])
                self.destroy_channels()
                continue
            bounds = {}
            for job in sc["jobs"]:
                env = self.job_env(sc, job)
                for scheme in config.SCHEMES:
                    bounds[(job["name"], scheme)] = self.bound(sc, job, env, scheme)
            for r in range(self.repeat):
                for oi, c in enumerate(self.order(sc, si, r)):
                    try:
                        dev, create_cmd = self.create_contender(sc, c)
                    except Exception as e:
                        e = "%s%s" % (e, self.klog_since_create())
                        idx = self.error_every_job(manifest, sc, c, r, oi, idx, "create: %s" % e, bounds)
                        continue
                    prefill_info = None
                    if sc.get("degraded") is not None:
                        # Degraded runs: prefilled while whole, then the
                        # member fails before the first job.
                        try:
                            if self.prefill and any(j["prefill"] for j in sc["jobs"]):
                                prefill_info = self.run_prefill(sc, dev, [j for j in sc["jobs"] if j["prefill"]])
                            self.fail_member(c, sc["degraded"])
                        except Exception as e:
                            idx = self.error_every_job(manifest, sc, c, r, oi, idx, "degrade: %s" % e, bounds)
                            continue
                    for job in sc["jobs"]:
                        idx += 1
                        env = self.job_env(sc, job)
                        self.log("[%d/%d] scenario %s job %s contender %s repeat %d ..." % (
                            idx, self.total, sc["name"], job["name"], c["label"], r + 1))
                        t = now()
                        try:
                            trace = None
                            if job["trace"]:
                                trace = self.trace_iolog(job, env)
                                env["IOLOG"] = trace["iolog"]
                                # Disturbances and fio's timeout follow the replay's length.
                                env["RUNTIME"] = str(max(int(env["RUNTIME"]), trace["span_ms"] // 1000 + 5))
                            if job["prefill"] and self.prefill and prefill_info is None:
                                prefill_info = self.run_prefill(
                                    sc, dev, [j for j in sc["jobs"] if j["prefill"]])
                            rec = self.run_job(sc, c, job, dev, env, r, oi,
                                               prefill_info if job["prefill"] else None)
                        except Exception as e:
                            tb = traceback.extract_tb(e.__traceback__)[-1]
                            self.log("    ERROR: %s (%s:%d)" % (e, os.path.basename(tb.filename), tb.lineno))
                            self.record_error(manifest, sc, c, job, r, oi, idx, str(e),
                                              bounds[(job["name"], c["scheme"])], env=env,
                                              create_cmd=create_cmd)
                            continue
                        b = bounds[(job["name"], c["scheme"])]
                        rec.update(self.base_record(sc, c, job, r, oi, idx, env, b))
                        rec["status"] = "ok"
                        rec["error"] = None
                        if trace:
                            rec["trace"] = {k: v for k, v in trace.items() if k != "iolog"}
                        rec["create_cmd"] = create_cmd
                        rec["fraction_of_bound"] = round(rec["fio"]["iops"] / b["iops"], 4) if b["iops"] else None
                        mb = model.measured_bound(rec)
                        rec["device_bound_measured"] = mb
                        rec["fraction_of_measured_bound"] = (
                            round(rec["fio"]["iops"] / mb["iops"], 4) if mb and mb["iops"] else None)
                        rec["duration_s"] = round(now() - t, 1)
                        self.save(manifest, rec)
                        fr, fw = rec["fio"]["read"], rec["fio"]["write"]
                        self.log("    %.0f IOPS (%s)  read p99 %s ms  write p99 %s ms  "
                                 "member I/Os per I/O %.2f  load CV %.2f" % (
                                     rec["fio"]["iops"],
                                     "%.0f%% of bound %.0f" % (100 * rec["fraction_of_bound"], b["iops"])
                                     if b["iops"] else "no bound",
                                     ms(fr["lat_us"]["p99"]) if fr["ios"] else "-",
                                     ms(fw["lat_us"]["p99"]) if fw["ios"] else "-",
                                     rec["member_ios_per_user_io"] or 0, rec["member_load_cv"]))
                    self.log("    removing %s" % c["label"])
                    self.remove_contender(c)
            self.log("scenario %s: tearing down the channels" % sc["name"])
            self.destroy_channels()

    def base_record(self, sc, c, job, r, oi, idx, env, b):
        return {
            "schema": SCHEMA,
            "scenario": sc["name"],
            "scenario_description": sc["description"],
            "job": job["name"],
            "job_vars": job["vars"],
            "job_var_order": list(job["vars"]),
            "fio_job": job["fio"],
            "fio_env": env,
            "contender": c["label"],
            "kind": c["kind"],
            "scheme": c["scheme"],
            "options": c["options"],
            "repeat": r + 1,
            "order_index": oi,
            "run_index": idx,
            "kernel": self.kernel,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "members": sc["members"],
            "chunk_kb": sc["chunk_kb"],
            "channel": dict(sc["channel"], member_mb=sc["member_mb"]),
            "disturb": jsonable_disturb(sc["disturb"]),
            "degraded": sc.get("degraded"),
            "device_bound": b,
        }

    def error_every_job(self, manifest, sc, c, r, oi, idx, msg, bounds):
        """The contender's volume could not be set up: remove what there
        is, record every job of the scenario as an error; the run index
        reached."""
        self.remove_contender(c)
        for job in sc["jobs"]:
            idx += 1
            self.log("[%d/%d] %s %s %s repeat %d: ERROR %s" % (
                idx, self.total, sc["name"], job["name"], c["label"], r + 1, msg))
            self.record_error(manifest, sc, c, job, r, oi, idx, msg, bounds[(job["name"], c["scheme"])])
        return idx

    def record_error(self, manifest, sc, c, job, r, oi, idx, msg, b, env=None, create_cmd=None):
        env = env or self.job_env(sc, job)
        rec = self.base_record(sc, c, job, r, oi, idx, env, b)
        rec.update({"status": "error", "error": msg, "create_cmd": create_cmd})
        if job.get("rebuild_rate"):
            rec.update({"record": "rebuild", "rate": dict(job["rebuild_rate"])})
        if job.get("resync"):
            rec["record"] = "resync"
        self.save(manifest, rec)

    def save(self, manifest, rec):
        name = "%s__%s__%s__r%d.json" % (rec["scenario"], rec["job"], rec["contender"], rec["repeat"])
        name = re.sub(r"[^A-Za-z0-9_.+-]", "_", name)
        self.write_json(name, rec)
        manifest["runs"].append(name)
        if rec["status"] == "ok":
            self.done += 1
        else:
            self.errors += 1


def version_at_least(ver, want):
    """'1.4.0' >= (1, 4, 0); None (no target loaded) is not."""
    try:
        return tuple(int(x) for x in (ver or "").split(".")[:3]) >= tuple(want)
    except ValueError:
        return False


def ms(us):
    return "%.1f" % (us / 1000.0) if us is not None else "-"


STATUS_FIELDS = ["version", "devs", "health", "reads", "writes", "full_stripe_writes", "rmw",
                 "rcw", "degraded_writes", "prereads", "reconstruct_reads", "policy"]


def parse_rainssd_status(line):
    w = line.split()
    if len(w) < 3 or w[2] != "rainssd":
        return None
    f = w[3:]
    d = {k: f[i] for i, k in enumerate(STATUS_FIELDS) if i < len(f)}
    d["extra"] = f[len(STATUS_FIELDS):]
    return d


def rainssd_counters(before, after):
    a, b = parse_rainssd_status(before), parse_rainssd_status(after)
    if not a or not b:
        return None
    out = {}
    for k in STATUS_FIELDS[3:11]:
        try:
            out[k] = int(b[k]) - int(a[k])
        except (KeyError, ValueError):
            pass
    out["policy"] = b.get("policy")
    out["extra_after"] = b.get("extra")
    # Operations run and (1.11.0) write pieces joined to a queued write.
    try:
        n = int(b["devs"])
        ta, tb = rainssd_tail(before, n), rainssd_tail(after, n)
        for k in ("ops", "joined_writes"):
            if k in ta and k in tb:
                out[k] = int(tb[k]) - int(ta[k])
    except (KeyError, ValueError):
        pass
    return out


CACHE_FIELDS = ["stripe_cache_used", "stripe_cache", "stripe_cache_peak", "ops", "replans",
                "deferred_bios", "reserve_ops", "emergency_steps"]
SYNC_FIELDS = ["sync_ratio", "sync_action", "read_errors", "repaired"]
# 1.5.0's mismatch_cnt and 1.7.0's tier fields (docs/rainssd.rst, Status).
TIER_FIELDS = ["mismatch_cnt", "tier_stripes", "tier_to_r1", "tier_to_r5", "tier_offline",
               "tier_writes", "tier_reads", "migration_action", "metadata_mode", "needs_check",
               "joined_writes"]   # 1.11.0


def rainssd_tail(line, n):
    """The status fields after the member words, by name: 1.3.0's eight
    (CACHE_FIELDS), 1.4.0's four more (SYNC_FIELDS) and the later ones
    (TIER_FIELDS); {} for a version without them (1.2.0's line ends with the
    member words)."""
    w = line.split()
    if len(w) < 3 or w[2] != "rainssd":
        return {}
    f = w[3:]
    tail = f[19 + n:]   # 19 fields before the member words (1.2.0 and later)
    return {k: tail[i] for i, k in enumerate(CACHE_FIELDS + SYNC_FIELDS + TIER_FIELDS) if i < len(tail)}


def rainssd_cache(line, n):
    """stripe_cache_peak and the other operation-layer fields of a status
    line, with the peak's memory (peak x members x 4 KiB); None before 1.3.0."""
    t = rainssd_tail(line, n)
    if "emergency_steps" not in t:
        return None
    try:
        d = {k: int(t[k]) for k in CACHE_FIELDS}
    except ValueError:
        return None
    d["peak_bytes"] = d["stripe_cache_peak"] * n * 4096
    return d


def jsonable_disturb(d):
    return {"slow": {str(k): v for k, v in d["slow"].items()},
            "background": {str(k): v for k, v in d["background"].items()},
            "stall": {str(k): v for k, v in d["stall"].items()},
            "foreign": {str(k): v for k, v in d.get("foreign", {}).items()}}


def strip_scenario(sc):
    s = dict(sc)
    s["disturb"] = jsonable_disturb(sc["disturb"])
    return s
