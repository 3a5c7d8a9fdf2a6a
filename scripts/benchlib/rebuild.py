"""The rebuild scenarios of scripts/bench (`kind = rebuild`): a member
fails and is rebuilt onto a spare channel, once with nothing else running
and once under a fio load that runs for the whole rebuild, at each of the
scenario's rate settings, on rainssd and on md RAID-5 over the same
channels. Runs in the VM, called by invm.Runner.

For each contender (in the order of the scenario and repeat):

  1. create the volume on members 0..N-1 (rainssd: nosync; md:
     --assume-clean --bitmap=none, the layout and data offset of md-raid5);
  2. fill the whole data area with sequential writes (fill_bs, 1 MiB),
     the part beyond the load job's region with fio verify headers;
  3. baseline: the load job on the healthy volume for baseline_s;
  4. for every rate setting, twice (idle, then loaded): fail member `fail`
     (rainssd `dmsetup message NAME 0 fail I`; md --fail and --remove),
     zero the replacement (the spare channel, or the member taken out the
     time before) so nothing of the old data survives, then put it in:
     rainssd reloads the table it prints with the replacement at slot I,
     `rebuild I` and min_recovery_rate/max_recovery_rate; md sets
     sync_speed_min/sync_speed_max and --add's it. The rebuild time runs
     from that command to the first poll (every 0.1 s) that shows the
     volume whole: rainssd health all A and sync_action idle, md
     sync_action idle and degraded 0. Loaded: the load job starts after the
     fail, runs settle_s, then the replacement goes in; fio's per-request
     latency log gives the latencies and IOPS of the requests that
     completed between the command and the end of the rebuild;
  5. after every rebuild (verify = parity): rainssd-check on the members of
     the suspended rainssd volume, md's `check` (mismatch_cnt 0); at the
     end (verify = data): fio verify of the filled region the load never
     wrote, read through the rebuilt volume.

One JSON record per (scenario, rate setting, contender, repeat), written
when the contender is done: "record": "rebuild" (report.py and plot.py keep
them apart from the jobs' records).
"""
import datetime
import glob
import json
import os
import signal
import subprocess
import time
import traceback

from . import config
from .invm import MD_DEV, RS_NAME, SCHEMA, dm_status_line, now, rainssd_tail, read_stat, settle, sh, sysname

POLL_S = 0.1
MIB = 1 << 20


# --- latency logs --------------------------------------------------------------

def bucket(ns):
    """Three significant digits: a compact histogram key (0.5% at most off)."""
    if ns < 1000:
        return int(ns)
    e = len(str(int(ns))) - 3
    return int(round(ns / 10 ** e)) * 10 ** e


def hist_pcts(hist, pcts=(50.0, 99.0, 99.9)):
    """Percentiles (ms) of a [[value_ns, count], ...] histogram, read as fio
    does: the smallest value with at least p% of the requests at or below."""
    total = sum(c for _, c in hist)
    out = {}
    if not total:
        return {"p%g" % p: None for p in pcts}
    acc, i, want = 0, 0, sorted(pcts)
    for v, c in sorted(hist):
        acc += c
        while i < len(want) and acc >= want[i] / 100.0 * total:
            out["p%g" % want[i]] = round(v / 1e6, 3)
            i += 1
    return out


def lat_window(prefix, t0_ms=None, t1_ms=None, issued=False):
    """The requests of fio's latency log(s) PREFIX_lat.*.log (written with
    --log_avg_msec=0 --log_unix_epoch=1: one line per request, 'epoch ms
    of its completion, latency ns, direction, size, ...') that completed in
    [t0_ms, t1_ms] (issued: and were issued at t0_ms or later): per
    direction and together, count, IOPS over the window, mean and
    percentiles in ms, the largest latency, and the histogram (for pooling
    repeats)."""
    hists = {"read": {}, "write": {}}
    first = last = None
    for path in sorted(glob.glob(prefix + "_lat.*.log")):
        with open(path) as f:
            for line in f:
                w = line.split(",")
                if len(w) < 3:
                    continue
                try:
                    t, v, d = int(w[0]), int(w[1]), int(w[2])
                except ValueError:
                    continue
                if (t0_ms is not None and t < t0_ms) or (t1_ms is not None and t > t1_ms):
                    continue
                if issued and t0_ms is not None and t - v / 1e6 < t0_ms - 0.5:
                    continue
                if d not in (0, 1):
                    continue
                first = t if first is None else min(first, t)
                last = t if last is None else max(last, t)
                h = hists["read" if d == 0 else "write"]
                b = bucket(v)
                h[b] = h.get(b, 0) + 1
    lo = t0_ms if t0_ms is not None else first
    hi = t1_ms if t1_ms is not None else last
    span = (hi - lo) / 1000.0 if lo is not None and hi is not None and hi > lo else None
    out = {"window_s": round(span, 3) if span else None}
    both = {}
    for d in ("read", "write"):
        for v, c in hists[d].items():
            both[v] = both.get(v, 0) + c
    for d, h in (("read", hists["read"]), ("write", hists["write"]), ("all", both)):
        hist = sorted([v, c] for v, c in h.items())
        n = sum(c for _, c in hist)
        s = {"ios": n, "iops": round(n / span, 2) if span else None,
             "mean_ms": round(sum(v * c for v, c in hist) / n / 1e6, 3) if n else None,
             "max_ms": round(hist[-1][0] / 1e6, 3) if n else None}
        s.update(hist_pcts(hist))
        s["hist_ns"] = hist
        out[d] = s
    return out


# --- the runner ----------------------------------------------------------------

class Rebuilds:
    """The rebuild scenario of one Runner (R): channels already built, with
    R.spares[0] the spare channel's array region."""

    def __init__(self, R, sc):
        self.R, self.sc, self.rb = R, sc, sc["rebuild"]
        self.slot = self.rb["fail"]
        self.job = [j for j in sc["jobs"] if j["name"] == self.rb["load"]][0]
        self.tmp = "/tmp/bench-rebuild-%d" % os.getpid()
        os.makedirs(self.tmp, exist_ok=True)
        self.check_bin = os.path.join(config.REPO, "userspace-tools", "rainssd-check")

    def log(self, msg):
        self.R.log(msg)

    # -- volume helpers --
    def status(self):
        try:
            return dm_status_line(RS_NAME)
        except OSError:
            return sh(["dmsetup", "status", RS_NAME], check=False).stdout.strip()

    def md_attr(self, name):
        try:
            with open("/sys/block/%s/md/%s" % (self.md_sys, name)) as f:
                return f.read().strip()
        except OSError:
            return None

    def md_set(self, name, value):
        with open("/sys/block/%s/md/%s" % (self.md_sys, name), "w") as f:
            f.write("%s\n" % value)

    def zero(self, dev):
        """Zero a whole array region: nothing of what it held (data, a
        rainssd or md superblock) survives, so a rebuild that skipped a
        stripe fails the verification."""
        sh(["dd", "if=/dev/zero", "of=" + dev, "bs=4M", "count=%d" % (self.sc["member_mb"] // 4 or 1),
            "oflag=direct", "status=none"], timeout=600)
        if self.sc["member_mb"] % 4:
            sh(["dd", "if=/dev/zero", "of=" + dev, "bs=1M", "seek=%d" % (self.sc["member_mb"] // 4 * 4),
                "count=%d" % (self.sc["member_mb"] % 4), "oflag=direct", "status=none"], timeout=600)

    def whole(self, c):
        """(done, progress 0..1 or None, status text) of the rebuild now."""
        if c["kind"] == "rainssd":
            st = self.status()
            w = st.split()
            health = w[5] if len(w) > 5 else ""
            t = rainssd_tail(st, self.sc["members"])
            frac = None
            d, _, tot = t.get("sync_ratio", "").partition("/")
            if d.isdigit() and tot.isdigit() and int(tot):
                frac = int(d) / int(tot)
            done = bool(health) and set(health) == {"A"} and t.get("sync_action") == "idle"
            return done, frac, "health %s sync %s %s" % (health, t.get("sync_ratio"), t.get("sync_action"))
        act, deg, comp = self.md_attr("sync_action"), self.md_attr("degraded"), self.md_attr("sync_completed")
        frac = None
        if comp and "/" in comp:
            a, _, b = comp.partition("/")
            try:
                frac = int(a) / int(b) if int(b) else None
            except ValueError:
                pass
        return act == "idle" and deg == "0", frac, "sync_action %s degraded %s completed %s" % (act, deg, comp)

    def fail(self, c, dev):
        t = now()
        if c["kind"] == "rainssd":
            sh(["dmsetup", "message", RS_NAME, "0", "fail", str(self.slot)])
            while now() - t < 30:
                w = self.status().split()
                if len(w) > 5 and w[5][self.slot] == "D":
                    return
                time.sleep(POLL_S)
            raise RuntimeError("member %d not dead 30 s after fail" % self.slot)
        sh(["mdadm", MD_DEV, "--fail", dev])
        for _ in range(100):
            r = sh(["mdadm", MD_DEV, "--remove", dev], check=False)
            if r.returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError("mdadm --remove %s: %s" % (dev, r.stderr.strip()[-200:]))

    def set_rates(self, c, rate):
        """md: the array's rate limits, before the replacement goes in
        (rainssd's are in the table the replacement loads)."""
        if c["kind"] == "md-raid5":
            self.md_set("sync_speed_min", rate["min_kib_s"])
            self.md_set("sync_speed_max", rate["max_kib_s"])

    def replace(self, c, new, rate, started):
        """Put `new` in at the slot with the rate limits; return the command
        text (rainssd: the reloaded table). started[0] gets the time the
        rebuild can begin: rainssd's resume, md's --add."""
        lo, hi = rate["min_kib_s"], rate["max_kib_s"]
        if c["kind"] == "rainssd":
            w = sh(["dmsetup", "table", RS_NAME]).stdout.split()
            n = int(w[4])
            head, devs, rest = w[:5], w[5:5 + n], w[5 + n:]
            opts = rest[1:1 + int(rest[0])] if rest else []
            flags, pairs, i = [], [], 0
            while i < len(opts):
                if opts[i] == "nosync":
                    flags.append(opts[i])
                    i += 1
                    continue
                if opts[i] not in ("rebuild", "min_recovery_rate", "max_recovery_rate"):
                    pairs += opts[i:i + 2]
                i += 2
            devs[self.slot] = new
            opts = pairs + flags + ["rebuild", str(self.slot), "min_recovery_rate", str(lo),
                                    "max_recovery_rate", str(hi)]
            table = " ".join(head + devs + [str(len(opts))] + opts)
            sh(["dmsetup", "suspend", RS_NAME], timeout=300)
            r = sh(["dmsetup", "reload", RS_NAME, "--table", table], check=False)
            if r.returncode != 0:
                sh(["dmsetup", "resume", RS_NAME], check=False)
                raise RuntimeError("reload with rebuild %d refused: %s%s" % (
                    self.slot, r.stderr.strip()[-300:], self.R.klog_since_create()))
            started.append((time.time(), now()))
            sh(["dmsetup", "resume", RS_NAME], timeout=300)
            return table
        started.append((time.time(), now()))
        sh(["mdadm", MD_DEV, "--add", new])
        return "echo %d > sync_speed_min; echo %d > sync_speed_max; mdadm %s --add %s" % (lo, hi, MD_DEV, new)

    def wait_whole(self, c, t0, progress):
        deadline = t0 + self.rb["timeout_s"]
        last = ""
        while now() < deadline:
            done, frac, last = self.whole(c)
            t = now()
            if " frozen" in last:
                raise RuntimeError("the rebuild stopped (%s)%s" % (last, self.tail_klog()))
            if frac is not None and (not progress or progress[-1][1] != round(frac, 4)):
                progress.append([round(t - t0, 2), round(frac, 4)])
            if done:
                return t
            time.sleep(POLL_S)
        raise RuntimeError("rebuild not done after %d s (%s)%s" % (self.rb["timeout_s"], last, self.tail_klog()))

    def tail_klog(self):
        r = subprocess.run(["dmesg"], stdout=subprocess.PIPE, text=True)
        lines = r.stdout.splitlines()[-6:]
        return "".join(" [kernel: %s]" % l for l in lines)

    # -- fio --
    def fio_env(self, runtime):
        env = self.R.job_env(self.sc, self.job)
        env["RUNTIME"] = str(runtime)
        return env

    def start_load(self, dev, runtime, name):
        prefix = os.path.join(self.tmp, name)
        for p in glob.glob(prefix + "_*.log"):
            os.unlink(p)
        out = prefix + ".json"
        env = self.fio_env(runtime)
        cmd = ["fio", "--output-format=json", "--output", out,
               "--write_lat_log=" + prefix, "--log_avg_msec=0", "--log_unix_epoch=1",
               os.path.join(config.FIO_DIR, self.job["fio"])]
        p = subprocess.Popen(cmd, env=dict(os.environ, DEV=dev, **env), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        return p, prefix, out, env

    def wait_io(self, dev, p, secs=60):
        """Until the volume's I/O counters move (fio has started its I/O)."""
        name = sysname(dev)
        s0 = read_stat(name)
        t = now()
        while now() - t < secs:
            if p.poll() is not None:
                raise RuntimeError("fio ended early: %s" % (p.stderr.read() or "")[-300:])
            s1 = read_stat(name)
            if s1["reads"] + s1["writes"] != s0["reads"] + s0["writes"]:
                return
            time.sleep(POLL_S)
        raise RuntimeError("the load did not start in %d s" % secs)

    def stop_load(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            raise RuntimeError("fio did not stop")
        # fio ends with 128 + SIGINT's number or its own codes when stopped
        # this way; its latency log is what counts (lat_window finds none if
        # it did not run).
        return p.returncode

    def fill(self, c, dev):
        """Sequential writes over the whole data area; beyond the load's
        region with fio verify headers (the data verification reads it)."""
        usable = self.R.usable_sectors(self.sc) * 512
        env = self.R.job_env(self.sc, self.job)
        load_end = config.size_bytes(env["OFFSET"]) + config.size_bytes(env["SIZE"])
        bs = config.size_bytes(self.rb["fill_bs"])
        vstart = -(-load_end // MIB) * MIB
        vend = usable // MIB * MIB
        base = ["fio", "--output-format=terse", "--filename=" + dev, "--ioengine=libaio", "--direct=1",
                "--rw=write", "--bs=%d" % bs, "--iodepth=%d" % self.rb["fill_qd"]]
        t = now()
        sh(base + ["--name=fill-load", "--offset=0", "--size=%d" % vstart], timeout=3600)
        self.verify_args = None
        if vend > vstart:
            self.verify_args = base + ["--name=fill-verify", "--offset=%d" % vstart,
                                       "--size=%d" % (vend - vstart), "--verify=crc32c",
                                       "--randrepeat=1"]
            sh(self.verify_args + ["--do_verify=0"], timeout=3600)
        if usable > vend:
            sh(base + ["--name=fill-tail", "--offset=%d" % vend, "--size=%d" % (usable - vend),
                       "--bs=4k"], timeout=600)
        el = now() - t
        return {"bytes": usable, "bs": bs, "seconds": round(el, 1),
                "mib_s": round(usable / MIB / el, 1) if el else None,
                "verify_region": [vstart, vend] if vend > vstart else None}

    # -- verification --
    def verify_parity(self, c, dev, slots):
        t = now()
        if c["kind"] == "rainssd":
            if not os.access(self.check_bin, os.X_OK):
                return {"ok": None, "why": "no userspace-tools/rainssd-check (make tools)"}
            sh(["dmsetup", "suspend", RS_NAME], timeout=300)
            try:
                r = sh([self.check_bin, "--json", "--length", str(self.R.usable_sectors(self.sc)),
                        str(self.sc["chunk_kb"] * 2)] + slots, check=False, timeout=1800)
            finally:
                sh(["dmsetup", "resume", RS_NAME], timeout=300)
            try:
                j = json.loads(r.stdout)
            except ValueError:
                j = {"output": (r.stdout + r.stderr).strip()[-300:]}
            return {"ok": r.returncode == 0, "tool": "rainssd-check", "exit": r.returncode,
                    "stripes_checked": j.get("stripes_checked"), "bad_stripes": j.get("bad_stripes"),
                    "seconds": round(now() - t, 1)}
        old = self.md_attr("sync_speed_max")
        self.md_set("sync_speed_max", 200000)
        try:
            self.md_set("sync_action", "check")
            time.sleep(0.5)
            while now() - t < self.rb["timeout_s"]:
                if self.md_attr("sync_action") == "idle":
                    break
                time.sleep(0.5)
            else:
                return {"ok": False, "tool": "md check", "why": "check not done after %d s" % self.rb["timeout_s"]}
        finally:
            self.md_set("sync_speed_max", old.split()[0] if old else "system")
        mm = int(self.md_attr("mismatch_cnt") or -1)
        return {"ok": mm == 0, "tool": "md check", "mismatch_cnt": mm, "seconds": round(now() - t, 1)}

    def verify_data(self, dev):
        if not self.verify_args:
            return {"ok": None, "why": "no region outside the load's"}
        t = now()
        args = [a.replace("--name=fill-verify", "--name=verify") for a in self.verify_args]
        r = sh(args + ["--verify_only=1", "--verify_fatal=1", "--verify_dump=0"], check=False, timeout=3600)
        return {"ok": r.returncode == 0, "tool": "fio verify_only crc32c", "exit": r.returncode,
                "bytes": self.fill_info["verify_region"][1] - self.fill_info["verify_region"][0],
                "error": (r.stderr or "").strip()[-300:] if r.returncode else None,
                "seconds": round(now() - t, 1)}

    # -- one rebuild --
    def member_stats(self, devs):
        return {d: read_stat(sysname(d)) for d in devs}

    def rebuild(self, c, dev, slots, rate, loaded):
        """Fail the slot, put the other device in, wait; returns the
        measurement and the new slot list."""
        old = slots[self.slot]
        new = self.other[old]
        self.set_rates(c, rate)
        self.fail(c, old)
        self.zero(new)
        res = {"mode": "loaded" if loaded else "idle", "failed": old, "replacement": new}
        p = None
        if loaded:
            p, prefix, out, env = self.start_load(dev, self.rb["timeout_s"] + 120, "loaded")
            try:
                self.wait_io(dev, p)
                time.sleep(self.rb["settle_s"])
            except Exception:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                raise
        survivors = [d for i, d in enumerate(slots) if i != self.slot]
        s0 = self.member_stats(survivors + [new, dev])
        progress, started = [], []
        try:
            tcw, tc = time.time(), now()
            res["replace_cmd"] = self.replace(c, new, rate, started)
            t0w, t0 = started[0]
            res["replace_s"] = round(now() - tc, 3)
            res["replace_before_start_s"] = round(t0 - tc, 3)
            t1 = self.wait_whole(c, t0, progress)
            t1w = time.time()
        finally:
            if p is not None:
                try:
                    res["fio_exit"] = self.stop_load(p)
                except Exception as e:
                    res["fio_stop_error"] = str(e)
        s1 = self.member_stats(survivors + [new, dev])
        secs = t1 - t0
        res["seconds"] = round(secs, 2)
        res["progress"] = progress[::max(1, len(progress) // 300)]
        sectors = self.member_sectors
        res["sectors_per_member"] = sectors
        res["mib_s_per_member"] = round(sectors / 2048.0 / secs, 2) if secs > 0 else None

        def d(dv, k):
            return s1[dv][k] - s0[dv][k]
        res["member_io"] = {
            "replacement_write_sectors": d(new, "write_sectors"),
            "replacement_writes": d(new, "writes"),
            "survivor_read_sectors": sum(d(x, "read_sectors") for x in survivors),
            "survivor_reads": sum(d(x, "reads") for x in survivors),
            "survivor_writes": sum(d(x, "writes") for x in survivors),
            "volume_ios": d(dev, "reads") + d(dev, "writes"),
        }
        res["status_end"] = self.status() if c["kind"] == "rainssd" else self.whole(c)[2]
        if loaded:
            # The rebuild proper: requests issued after it began (for rainssd
            # after the resume; the suspend and reload before it hold the
            # requests in flight, measured apart in fio_replace).
            res["fio"] = lat_window(prefix, int(t0w * 1000), int(t1w * 1000), issued=True)
            res["fio"]["env"] = env
            res["fio_replace"] = lat_window(prefix, int(tcw * 1000), int(t1w * 1000))
            for d in ("read", "write", "all"):
                res["fio_replace"][d].pop("hist_ns", None)
        slots = list(slots)
        slots[self.slot] = new
        return res, slots

    # -- one contender --
    def contender(self, c, r, oi, idx, manifest):
        """Everything for one contender in one repeat; returns the run index."""
        R, sc, rb = self.R, self.sc, self.rb
        t_start = now()
        base_slots = list(R.members)
        spare = R.spares[0]
        # The slot's device and the spare take turns.
        self.other = {base_slots[self.slot]: spare, spare: base_slots[self.slot]}
        recs = [self.record(c, r, oi, idx + i + 1, rate) for i, rate in enumerate(rb["rates"])]
        results = {rate["label"]: {} for rate in rb["rates"]}
        err = None
        dev = None
        slots = base_slots
        try:
            self.zero(spare)
            dev, create_cmd = R.create_contender(sc, c)
            for rec in recs:
                rec["create_cmd"] = create_cmd
                rec["rainssd_version"] = R.rainssd_version if c["kind"] == "rainssd" else None
            if c["kind"] == "rainssd":
                st = self.status()
                t = rainssd_tail(st, sc["members"])
                if "sync_ratio" not in t:
                    raise RuntimeError("rainssd %s cannot rebuild (no sync fields in its status)"
                                       % R.rainssd_version)
                self.member_sectors = int(t["sync_ratio"].partition("/")[2])
            else:
                self.md_sys = sysname(dev)
                self.member_sectors = int(self.md_attr("component_size")) * 2
            self.log("    %s: filling %d MiB" % (c["label"], R.usable_sectors(sc) // 2048))
            self.fill_info = self.fill(c, dev)
            self.log("    filled in %.0f s (%s MiB/s); baseline load %d s" % (
                self.fill_info["seconds"], self.fill_info["mib_s"], rb["baseline_s"]))
            baseline = None
            if rb["baseline_s"]:
                p, prefix, out, env = self.start_load(dev, rb["baseline_s"], "baseline")
                try:
                    _, errt = p.communicate(timeout=rb["baseline_s"] + 600)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
                    raise RuntimeError("the baseline fio did not end")
                if p.returncode != 0:
                    raise RuntimeError("baseline fio exit %d: %s" % (p.returncode, errt.strip()[-300:]))
                baseline = lat_window(prefix)
                baseline["env"] = env
                a = baseline["all"]
                self.log("    baseline: %s IOPS, p50 %s p99 %s p99.9 %s ms" % (
                    a["iops"], a["p50"], a["p99"], a["p99.9"]))
            for rec in recs:
                rec["fill"] = self.fill_info
                rec["baseline"] = baseline
                rec["member_data_sectors"] = self.member_sectors
            for rate, rec in zip(rb["rates"], recs):
                for loaded in (False, True):
                    mode = "loaded" if loaded else "idle"
                    self.log("    %s rate %s (%d-%d KiB/s): rebuild %s ..." % (
                        c["label"], rate["label"], rate["min_kib_s"], rate["max_kib_s"], mode))
                    res, slots = self.rebuild(c, dev, slots, rate, loaded)
                    if "parity" in rb["verify"]:
                        res["verify_parity"] = self.verify_parity(c, dev, slots)
                    rec[mode] = res
                    v = res.get("verify_parity") or {}
                    f = (res.get("fio") or {}).get("all") or {}
                    self.log("      %.1f s, %.1f MiB/s per member%s%s" % (
                        res["seconds"], res["mib_s_per_member"] or 0,
                        "; load %s IOPS p50 %s p99 %s p99.9 %s ms" % (
                            f.get("iops"), f.get("p50"), f.get("p99"), f.get("p99.9")) if loaded else "",
                        "; parity %s (%.0f s)" % ("ok" if v.get("ok") else "FAILED %s" % v, v.get("seconds", 0))
                        if v else ""))
                    if v and v.get("ok") is False:
                        raise RuntimeError("parity check failed after the %s rebuild at rate %s: %s" % (
                            mode, rate["label"], v))
            if "data" in rb["verify"]:
                vd = self.verify_data(dev)
                self.log("    data verify: %s" % ("ok" if vd["ok"] else vd))
                for rec in recs:
                    rec["verify_data"] = vd
                if vd["ok"] is False:
                    raise RuntimeError("fio verify of the filled data failed: %s" % vd.get("error"))
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)[-1]
            err = "%s (%s:%d)" % (e, os.path.basename(tb.filename), tb.lineno)
            self.log("    ERROR: %s" % err)
            R.klog()
        finally:
            R.remove_contender(c)
            if c["kind"] == "md-raid5":
                sh(["mdadm", "--zero-superblock"] + base_slots + [spare], check=False, timeout=120)
        el = now() - t_start
        for rec in recs:
            rec["duration_s"] = round(el, 1)
            done = "idle" in rec and "loaded" in rec
            if err and not done:
                rec["status"], rec["error"] = "error", err
            elif err:
                # this rate's rebuilds were measured; a later step failed
                rec["status"], rec["error"] = "ok", None
                rec["later_error"] = err
            else:
                rec["status"], rec["error"] = "ok", None
            R.save(manifest, rec)
        return idx + len(recs)

    def record(self, c, r, oi, idx, rate):
        R, sc = self.R, self.sc
        env = R.job_env(sc, self.job)
        return {
            "schema": SCHEMA,
            "record": "rebuild",
            "scenario": sc["name"],
            "scenario_description": sc["description"],
            "job": "rebuild-%s" % rate["label"],
            "job_vars": {},
            "job_var_order": [],
            "fio_job": self.job["fio"],
            "fio_env": env,
            "contender": c["label"],
            "kind": c["kind"],
            "scheme": c["scheme"],
            "options": c["options"],
            "module": c.get("module") or ("checkout" if c["kind"] == "rainssd" else None),
            "repeat": r + 1,
            "order_index": oi,
            "run_index": idx,
            "kernel": R.kernel,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "members": sc["members"],
            "chunk_kb": sc["chunk_kb"],
            "channel": dict(sc["channel"], member_mb=sc["member_mb"]),
            "disturb": {"slow": {}, "background": {}, "stall": {}},
            "rate": dict(rate),
            "fail_member": self.slot,
            "create_cmd": None,
        }


def run(R, sc, si, manifest, idx):
    """Every repeat and contender of rebuild scenario sc (the si-th of the
    run); returns the run index reached."""
    rb = Rebuilds(R, sc)
    for r in range(R.repeat):
        for oi, c in enumerate(R.order(sc, si, r)):
            R.log("[%d/%d] scenario %s contender %s repeat %d: %d rate setting(s) ..." % (
                idx + 1, R.total, sc["name"], c["label"], r + 1, len(sc["rebuild"]["rates"])))
            idx = rb.contender(c, r, oi, idx, manifest)
    return idx
