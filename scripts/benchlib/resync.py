"""The resync scenarios of scripts/bench (`kind = resync`): the power is
cut while a write load runs, the volume is brought back as a reboot would
bring it back, and the resync after the unclean shutdown is timed, on
rainssd (its write-intent bitmap) and on md RAID-5 (without a bitmap, with
its internal bitmap, with PPL) over the same channels. Runs in the VM,
called by invm.Runner.

For each contender (in the order of the scenario and repeat):

  1. create the volume on members 0..N-1 (rainssd: nosync; md:
     --assume-clean, the layout and data offset of md-raid5, the
     contender's own --bitmap or --consistency-policy);
  2. run the load job (random writes over its OFFSET/SIZE, which choose
     how much of the volume gets dirty) for write_s seconds from its first
     I/O;
  3. cut the power while fio still writes: every member's table (dm-linear
     or dm-delay) is saved, every member suspended with --noflush one after
     the other (nothing more reaches the channels), then each is loaded
     with a `0 <sectors> error` table and resumed: what was held and
     everything after fails. fio ends on the errors (killed after stop_s);
  4. power off: the volume is removed (rainssd `dmsetup remove`; md
     `mdadm --stop`), bounded by stop_s; a hang is an error;
  5. power back: every member's saved table is loaded again (suspend, load,
     resume); the superblocks and bitmaps are read from the members
     (rainssd-admin examine and the bitmap's bits; mdadm --examine and
     --examine-bitmap); with verify = cut, rainssd-check counts the
     inconsistent stripes of the load's region (the write hole the resync
     must close; md has rainssd's layout and data offset);
  6. bring the volume back: rainssd `dmsetup create` with the table it
     printed before the cut (its `nosync` is ignored for an existing
     volume); md `mdadm --assemble --run` and `mdadm --readwrite` (md may
     start auto-read-only, and resync only at the first write). The resync
     time runs from that command to the first poll (every 0.1 s) that shows
     it over: rainssd health all A and sync_action idle; md sync_action
     idle, resync_start none, degraded 0 and the array writable. The
     members' I/O over that time and the span the status announces
     (rainssd's sync_ratio total; md's sync_completed denominator, which
     is the whole member even when the bitmap lets it skip) are recorded;
  7. verify = parity: rainssd-check over the members of the suspended
     rainssd volume; md's `check` (mismatch_cnt 0).

One JSON record per (scenario, contender, repeat), "record": "resync"
(report.py keeps them apart from the jobs' records).
"""
import datetime
import json
import mmap
import os
import re
import subprocess
import time
import traceback

from . import config
from .invm import (MD_DEV, RS_NAME, SCHEMA, dm_resume, dm_status_line, dm_suspend, now, rainssd_tail,
                   read_stat, sh, sysname, wait_block)
from .rebuild import POLL_S, Rebuilds, lat_window

BITMAP_SECTOR = 4096     # rainssd's write-intent bitmap on every member (docs/rainssd.rst)


def bounded(cmd, secs):
    """Run cmd for at most secs: (exit status or None when it did not end,
    its output). A process stuck in the kernel may not die: it is left."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=secs)
        return p.returncode, (out or "").strip()
    except subprocess.TimeoutExpired:
        p.kill()
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = ""
        return None, "did not end in %d s %s" % (secs, (out or "").strip()[-200:])


def read_direct(path, offset, length):
    """length bytes at offset of a block device, with O_DIRECT (what the
    kernel wrote with bios, not an old page-cache copy)."""
    size = -(-length // 4096) * 4096
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, size)
        got = os.preadv(fd, [buf], offset)
        return bytes(buf[:min(got, length)])
    finally:
        os.close(fd)


def count_bits(data, nbits):
    """Bits set among the first nbits of data (little-endian bit order, byte
    r/8 bit r%8, as rainssd's bitmap)."""
    n = 0
    for r in range(min(nbits, len(data) * 8)):
        if data[r // 8] >> (r % 8) & 1:
            n += 1
    return n


def md_examine_fields(text):
    """The fields of `mdadm --examine` (Events, State, ...) and of
    `mdadm --examine-bitmap` (Bitmap, Chunksize, ...) as a dict."""
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition(" : ")
        if sep:
            out[k.strip()] = v.strip()
    return out


def md_bitmap_counts(fields):
    """(bits, dirty) of `mdadm --examine-bitmap`'s 'Bitmap : 8 bits
    (chunks), 2 dirty (25.0%)', or (None, None)."""
    m = re.match(r"(\d+) bits \(chunks\), (\d+) dirty", fields.get("Bitmap", ""))
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def md_chunk_sectors(text):
    """mdadm's bitmap 'Chunksize : 64 MB' -> sectors (or None)."""
    m = re.match(r"(\d+)\s*([KMG]?)B", text or "")
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)] // 512


class Resyncs(Rebuilds):
    """The resync scenario of one Runner (R): channels already built. The
    volume helpers, the fio load and the parity check are rebuild.Rebuilds'
    (self.rb is the [resync] section: its timeout_s bounds md's check)."""

    def __init__(self, R, sc):
        self.R, self.sc, self.rb = R, sc, sc["resync"]
        self.job = [j for j in sc["jobs"] if j["name"] == self.rb["load"]][0]
        self.tmp = "/tmp/bench-resync-%d" % os.getpid()
        os.makedirs(self.tmp, exist_ok=True)
        self.check_bin = os.path.join(config.REPO, "userspace-tools", "rainssd-check")
        self.admin_bin = os.path.join(config.REPO, "userspace-tools", "rainssd-admin")
        self.saved = None     # the members' tables while they carry the error table

    def names(self):
        return [os.path.basename(m) for m in self.R.members]

    # -- the cut --
    def save_tables(self):
        tables = {}
        for n in self.names():
            t = sh(["dmsetup", "table", n]).stdout.strip()
            if not t or len(t.splitlines()) != 1:
                raise RuntimeError("member %s: table %r" % (n, t))
            tables[n] = t
        return tables

    def cut(self, tables):
        """Every member suspended (noflush) in turn, then an error table
        loaded into each and resumed."""
        t = now()
        self.saved = tables
        for n in self.names():
            dm_suspend(n)
        t1 = now()
        for n in self.names():
            sh(["dmsetup", "load", n, "--table", "0 %s error" % tables[n].split()[1]], timeout=60)
            dm_resume(n)
        return {"suspend_all_s": round(t1 - t, 4), "seconds": round(now() - t, 3),
                "order": self.names(), "tables": dict(tables)}

    def restore(self):
        """The saved tables back: suspend, load, resume each."""
        for n in self.names():
            dm_suspend(n)
            sh(["dmsetup", "load", n, "--table", self.saved[n]], timeout=60)
            dm_resume(n)
        self.saved = None

    def end_load(self, p, t_cut):
        """fio after the cut: it ends on the errors, or is killed after stop_s."""
        out = {"killed": False}
        try:
            _, err = p.communicate(timeout=self.rb["stop_s"])
        except subprocess.TimeoutExpired:
            out["killed"] = True
            p.kill()
            try:
                _, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                raise RuntimeError("fio did not end %d s after the cut, nor after SIGKILL%s" % (
                    self.rb["stop_s"], self.tail_klog()))
        out["exit"] = p.returncode
        out["end_after_cut_s"] = round(now() - t_cut, 2)
        out["stderr_tail"] = (err or "").strip()[-200:]
        return out

    def remove_volume(self, c):
        """Power off: the volume goes (its last writes fail on the error
        tables), bounded by stop_s."""
        t = now()
        if c["kind"] == "rainssd":
            cmd = ["dmsetup", "remove", "--retry", RS_NAME]
        else:
            cmd = ["mdadm", "--stop", MD_DEV]
        rc, out = bounded(cmd, self.rb["stop_s"])
        res = {"cmd": " ".join(cmd), "exit": rc, "seconds": round(now() - t, 2), "output": out[-200:]}
        if rc != 0:
            raise RuntimeError("%s after the cut: %s%s" % (
                " ".join(cmd), "exit %d: %s" % (rc, out[-200:]) if rc is not None else out, self.tail_klog()))
        return res

    # -- what the members hold after the cut --
    def examine(self, c):
        if c["kind"] == "rainssd":
            return self.examine_rainssd()
        return self.examine_md()

    def examine_rainssd(self):
        sbs, bits, geo = [], [], None
        for m in self.R.members:
            r = sh([self.admin_bin, "examine", "--json", m], check=False, timeout=120)
            try:
                sb = json.loads(r.stdout).get("superblock")
            except ValueError:
                sb = None
            if not sb:
                sbs.append({"dev": m, "superblock": None, "output": (r.stdout + r.stderr).strip()[-200:]})
                continue
            sbs.append({"dev": m, "events": sb.get("events"), "clean": sb.get("clean"),
                        "states": [x["state"] for x in sb.get("members", [])]})
            geo = geo or sb
        out = {"superblocks": sbs}
        if geo and geo.get("region_stripes"):
            rs, stripes = geo["region_stripes"], geo["stripes"]
            regions = -(-stripes // rs)
            union = None
            for m in self.R.members:
                b = read_direct(m, BITMAP_SECTOR * 512, -(-regions // 8))
                bits.append(count_bits(b, regions))
                union = b if union is None else bytes(x | y for x, y in zip(union, b))
            out["bitmap"] = {"regions": regions, "dirty": count_bits(union, regions), "per_member": bits,
                             "region_stripes": rs,
                             "region_sectors": rs * geo["chunk_sectors"] * (geo["nr_members"] - 1)}
        return out

    def examine_md(self):
        sbs = []
        for m in self.R.members:
            f = md_examine_fields(sh(["mdadm", "--examine", m], check=False, timeout=60).stdout)
            sbs.append({"dev": m, "events": f.get("Events"), "state": f.get("State"),
                        "consistency_policy": f.get("Consistency Policy")})
        out = {"superblocks": sbs}
        r = sh(["mdadm", "--examine-bitmap", self.R.members[0]], check=False, timeout=60)
        f = md_examine_fields(r.stdout)
        total, dirty = md_bitmap_counts(f)
        if r.returncode == 0 and total is not None:
            chunk = md_chunk_sectors(f.get("Chunksize"))
            out["bitmap"] = {"regions": total, "dirty": dirty, "chunk": f.get("Chunksize"),
                             "region_sectors": chunk * (self.sc["members"] - 1) if chunk else None}
        return out

    def cut_parity(self):
        """Inconsistent stripes of the load's region right after the cut
        (rainssd-check over the raw members: rainssd and md share the
        layout and the data offset)."""
        if not os.access(self.check_bin, os.X_OK):
            return {"ok": None, "why": "no userspace-tools/rainssd-check (make tools)"}
        env = self.R.job_env(self.sc, self.job)
        end = config.size_bytes(env["OFFSET"]) + config.size_bytes(env["SIZE"])
        stripe = self.sc["chunk_kb"] * 1024 * (self.sc["members"] - 1)
        stripes = -(-end // stripe)
        t = now()
        r = sh([self.check_bin, "--json", "--stripes", str(stripes), str(self.sc["chunk_kb"] * 2)]
               + self.R.members, check=False, timeout=1800)
        try:
            j = json.loads(r.stdout)
        except ValueError:
            j = {}
        return {"tool": "rainssd-check", "exit": r.returncode, "stripes_checked": j.get("stripes_checked"),
                "bad_stripes": j.get("bad_stripes"), "seconds": round(now() - t, 1),
                "error": (r.stdout + r.stderr).strip()[-200:] if r.returncode not in (0, 1) else None}

    # -- the resync --
    def synced(self, c):
        """(done, progress 0..1 or None, span in sectors per member or None,
        status text)."""
        if c["kind"] == "rainssd":
            try:
                st = dm_status_line(RS_NAME)
            except OSError:
                st = sh(["dmsetup", "status", RS_NAME], check=False).stdout.strip()
            w = st.split()
            health = w[5] if len(w) > 5 else ""
            t = rainssd_tail(st, self.sc["members"])
            frac = span = None
            d, _, tot = t.get("sync_ratio", "").partition("/")
            if d.isdigit() and tot.isdigit() and int(tot):
                frac = int(d) / int(tot)
                span = int(tot)
            act = t.get("sync_action")
            done = bool(health) and set(health) == {"A"} and act == "idle"
            return done, frac, span if act == "resync" else None, "health %s sync %s %s" % (
                health, t.get("sync_ratio"), act)
        act, deg = self.md_attr("sync_action"), self.md_attr("degraded")
        rs, state, comp = self.md_attr("resync_start"), self.md_attr("array_state"), self.md_attr("sync_completed")
        frac = span = None
        if comp and "/" in comp:
            a, _, b = comp.partition("/")
            try:
                frac = int(a) / int(b) if int(b) else None
                span = int(b)
            except ValueError:
                pass
        done = act == "idle" and deg == "0" and rs == "none" and state in ("clean", "active", "active-idle", "write-pending")
        return done, frac, span, "sync_action %s resync_start %s degraded %s array_state %s completed %s" % (
            act, rs, deg, state, comp)

    @staticmethod
    def lost_member(c, text):
        if c["kind"] == "rainssd":
            w = text.split()
            return len(w) > 1 and "D" in w[1]
        return " degraded " in text and " degraded 0 " not in text and " degraded None " not in text

    def restart(self, c, table):
        """Bring the volume back; return (device, command text, details)."""
        if c["kind"] == "rainssd":
            r = sh(["dmsetup", "create", RS_NAME, "--table", table], check=False, timeout=600)
            if r.returncode != 0:
                raise RuntimeError("created again: refused: %s%s" % (r.stderr.strip()[-300:],
                                                                     self.R.klog_since_create()))
            dev = "/dev/mapper/" + RS_NAME
            if not wait_block(dev):
                raise RuntimeError("%s did not appear" % dev)
            return dev, "dmsetup create %s --table '%s'" % (RS_NAME, table), {}
        cmd = ["mdadm", "--assemble", "--run", MD_DEV] + self.R.members
        r = sh(cmd, check=False, timeout=600)
        if r.returncode != 0:
            raise RuntimeError("%s: exit %d: %s%s" % (" ".join(cmd), r.returncode, r.stderr.strip()[-300:],
                                                      self.R.klog_since_create()))
        if not wait_block(MD_DEV):
            raise RuntimeError("%s did not appear" % MD_DEV)
        self.md_sys = sysname(MD_DEV)
        info = {"assemble_output": r.stderr.strip()[-300:], "array_state_assembled": self.md_attr("array_state")}
        r2 = sh(["mdadm", "--readwrite", MD_DEV], check=False, timeout=120)
        info["readwrite_exit"] = r2.returncode
        if r2.returncode != 0:
            info["readwrite_output"] = r2.stderr.strip()[-200:]
        return MD_DEV, "%s; mdadm --readwrite %s" % (" ".join(cmd), MD_DEV), info

    def resync(self, c, table):
        """The restart and the resync: seconds from the command to the
        first poll that shows it over."""
        mnames = [sysname(m) for m in self.R.members]
        s0 = [read_stat(x) for x in mnames]
        t0 = now()
        dev, cmd, info = self.restart(c, table)
        res = {"restart_cmd": cmd, "restart_s": round(now() - t0, 3)}
        res.update(info)
        progress, spans, first = [], [], None
        deadline = t0 + self.rb["timeout_s"]
        last = ""
        while True:
            done, frac, span, last = self.synced(c)
            t = now()
            if first is None:
                first = [round(t - t0, 3), last]
            if " frozen" in last:
                raise RuntimeError("the resync stopped (%s)%s" % (last, self.tail_klog()))
            if self.lost_member(c, last):
                # A member taken as failed or stale: a rebuild, not a resync.
                raise RuntimeError("a member is out after the restart (%s)%s" % (last, self.tail_klog()))
            if span is not None and span not in spans:
                spans.append(span)
            if frac is not None and (not progress or progress[-1][1] != round(frac, 4)):
                progress.append([round(t - t0, 2), round(frac, 4)])
            if done:
                break
            if t > deadline:
                raise RuntimeError("resync not over after %d s (%s)%s" % (
                    self.rb["timeout_s"], last, self.tail_klog()))
            time.sleep(POLL_S)
        s1 = [read_stat(x) for x in mnames]
        n = self.sc["members"]
        res["seconds"] = round(t - t0, 2)
        res["first_poll"] = first
        res["status_end"] = last
        res["progress"] = progress[::max(1, len(progress) // 300)]
        # The span the status announced: rainssd's sync_ratio total while it
        # resyncs (the dirty regions' chunks per member); md's sync_completed
        # denominator (the whole member, with or without a bitmap).
        res["span_sectors"] = spans[0] if spans else None
        res["spans_seen"] = spans[:10]
        res["member_io"] = {
            "read_sectors": sum(b["read_sectors"] - a["read_sectors"] for a, b in zip(s0, s1)),
            "write_sectors": sum(b["write_sectors"] - a["write_sectors"] for a, b in zip(s0, s1)),
            "reads": sum(b["reads"] - a["reads"] for a, b in zip(s0, s1)),
            "writes": sum(b["writes"] - a["writes"] for a, b in zip(s0, s1)),
        }
        res["member_io"]["read_sectors_per_member"] = res["member_io"]["read_sectors"] // n
        res["member_io"]["write_sectors_per_member"] = res["member_io"]["write_sectors"] // n
        return dev, res

    # -- one contender --
    def contender(self, c, r, oi, idx, manifest):
        """Everything for one contender in one repeat; returns the run index."""
        R, sc, rs = self.R, self.sc, self.rb
        t_start = now()
        idx += 1
        rec = self.record(c, r, oi, idx)
        err = None
        try:
            dev, create_cmd = R.create_contender(sc, c)
            rec["create_cmd"] = create_cmd
            rec["rainssd_version"] = R.rainssd_version if c["kind"] == "rainssd" else None
            table = None
            if c["kind"] == "rainssd":
                st = self.status()
                if "sync_ratio" not in rainssd_tail(st, sc["members"]):
                    raise RuntimeError("rainssd %s cannot resync (no sync fields in its status)"
                                       % R.rainssd_version)
                table = sh(["dmsetup", "table", RS_NAME]).stdout.strip()
                rec["table"] = table
            else:
                self.md_sys = sysname(dev)
                rec["md_consistency_policy"] = self.md_attr("consistency_policy")
            rec["member_data_sectors"] = R.usable_sectors(sc) // (sc["members"] - 1)
            tables = self.save_tables()
            self.log("    %s: writing %d s, then the cut" % (c["label"], rs["write_s"]))
            p, prefix, out, env = self.start_load(dev, rs["write_s"] + rs["stop_s"] + 600, "load")
            try:
                self.wait_io(dev, p)
                t_w, v0 = now(), read_stat(sysname(dev))
                time.sleep(rs["write_s"])
                if p.poll() is not None:
                    raise RuntimeError("fio ended before the cut (exit %s): %s" % (
                        p.returncode, (p.stderr.read() or "")[-300:]))
                v1 = read_stat(sysname(dev))
                t_cut_wall, t_cut = time.time(), now()
                rec["cut"] = self.cut(tables)
            except Exception:
                if p.poll() is None:
                    p.kill()
                    try:
                        p.communicate(timeout=30)
                    except subprocess.TimeoutExpired:
                        pass
                raise
            rec["cut"]["write_s"] = round(t_cut - t_w, 2)
            rec["cut"].update(self.end_load(p, t_cut))
            w = lat_window(prefix, None, int(t_cut_wall * 1000))
            # fio's latency log (none if fio had to be killed) and the
            # volume's own counters: the writes completed before the cut.
            vw = v1["writes"] - v0["writes"]
            rec["load"] = {"env": env, "window_s": w["window_s"],
                           "write": {k: v for k, v in w["write"].items() if k != "hist_ns"},
                           "volume": {"writes": vw, "write_sectors": v1["write_sectors"] - v0["write_sectors"],
                                      "seconds": round(t_cut - t_w, 2),
                                      "iops": round(vw / (t_cut - t_w), 1) if t_cut > t_w else None}}
            rec["remove"] = self.remove_volume(c)
            self.restore()
            rec["after_cut"] = self.examine(c)
            if "cut" in rs["verify"]:
                rec["after_cut"]["parity"] = self.cut_parity()
            b = rec["after_cut"].get("bitmap") or {}
            self.log("    cut after %.1f s of writes (%s write IOPS); fio ended %.1f s later%s; "
                     "bitmap %s of %s regions dirty; load region: %s of %s stripes inconsistent" % (
                         rec["cut"]["write_s"], rec["load"]["volume"]["iops"], rec["cut"]["end_after_cut_s"],
                         " (killed)" if rec["cut"]["killed"] else "", b.get("dirty", "-"), b.get("regions", "-"),
                         (rec["after_cut"].get("parity") or {}).get("bad_stripes", "-"),
                         (rec["after_cut"].get("parity") or {}).get("stripes_checked", "-")))
            dev, res = self.resync(c, table)
            rec["resync"] = res
            rec["restart_cmd"] = res["restart_cmd"]
            self.log("    %s: resync %.1f s (restart %.1f s), members read %.1f MiB each; %s" % (
                c["label"], res["seconds"], res["restart_s"],
                res["member_io"]["read_sectors_per_member"] / 2048.0, res["status_end"]))
            if "parity" in rs["verify"]:
                v = self.verify_parity(c, dev, list(R.members))
                rec["verify_parity"] = v
                self.log("    parity %s (%.0f s)" % ("ok" if v.get("ok") else "FAILED %s" % v, v.get("seconds", 0)))
                if v.get("ok") is False:
                    raise RuntimeError("parity check failed after the resync: %s" % v)
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)[-1]
            err = "%s (%s:%d)" % (e, os.path.basename(tb.filename), tb.lineno)
            self.log("    ERROR: %s" % err)
            R.klog()
        finally:
            if self.saved is not None:
                # Failed between the cut and the power coming back.
                try:
                    self.remove_volume(c)
                except Exception as e:
                    self.log("    after the error: %s" % e)
                try:
                    self.restore()
                except Exception as e:
                    self.log("    after the error, the members' tables: %s" % e)
            R.remove_contender(c)
        rec["duration_s"] = round(now() - t_start, 1)
        if err and "seconds" not in (rec.get("resync") or {}):
            rec["status"], rec["error"] = "error", err
        elif err:
            # the resync was measured; a later step (the parity check) failed
            rec["status"], rec["error"] = "ok", None
            rec["later_error"] = err
        else:
            rec["status"], rec["error"] = "ok", None
        R.save(manifest, rec)
        return idx

    def record(self, c, r, oi, idx):
        R, sc = self.R, self.sc
        env = R.job_env(sc, self.job)
        return {
            "schema": SCHEMA,
            "record": "resync",
            "scenario": sc["name"],
            "scenario_description": sc["description"],
            "job": "resync",
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
            "resync_config": dict(self.rb),
            "create_cmd": None,
            "restart_cmd": None,
        }


def run(R, sc, si, manifest, idx):
    """Every repeat and contender of resync scenario sc (the si-th of the
    run); returns the run index reached."""
    rs = Resyncs(R, sc)
    for r in range(R.repeat):
        for oi, c in enumerate(R.order(sc, si, r)):
            R.log("[%d/%d] scenario %s contender %s repeat %d: write, cut, resync ..." % (
                idx + 1, R.total, sc["name"], c["label"], r + 1))
            idx = rs.contender(c, r, oi, idx, manifest)
    return idx
