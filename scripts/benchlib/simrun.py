"""scripts/bench model: run benchmark scenarios through rainssd-sim, the
discrete-event simulator that drives the module's own policy and
load-signal code (userspace-tools/sim/rainssd-sim.c), instead of a VM.

The scenario files are the VM benchmark's: the same members, chunk,
per-member latencies, queue depth, write delay, background load and stalls,
and the same jobs and rainssd contenders (a contender's `tier_size`, the
RAID1 tier, becomes the simulator's --tier-mb). What the model leaves out:
the CPU cost of every I/O (large under QEMU/TCG), request merging, md and
dm-raid (their contenders are skipped), and the difference between a
host-side queue and submitters sleeping for a tag (queue = 0). Sequential
and trace-replay jobs are not modelled.
"""
import json
import os
import subprocess

from . import config

SIM = os.path.join(config.REPO, "userspace-tools", "rainssd-sim")
TUNABLES = ("ewma_weight", "freq_window", "stall_factor", "xor_ns", "probe_ms", "recon_load_pct")
# The tier's table options and the simulator's options for them.
TIER_OPTIONS = {"migration_threshold": "--migration-threshold", "home_threshold": "--home-threshold",
                "tier_high_pct": "--tier-high-pct", "tier_low_pct": "--tier-low-pct",
                "migration_rate": "--migration-rate"}
# The module's offline migration rate when the table gives none (rainssd-tier.h,
# RS_DEF_MIGRATION_RATE; the simulator's own default is unlimited).
MODULE_MIGRATION_RATE = 20000
JOB_FILES = ("openloop.fio", "randwrite.fio", "randread.fio", "randrw.fio")


class Unsupported(Exception):
    pass


def ensure_built():
    r = subprocess.run(["make", "-s", "-C", os.path.dirname(SIM), "rainssd-sim"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or not os.access(SIM, os.X_OK):
        raise RuntimeError("building rainssd-sim failed: %s" % r.stdout.strip()[-400:])


def contender_args(c, sc=None):
    """A rainssd contender's table options as simulator options. With the
    scenario `sc`, `{tier}` in them becomes its tier_mb in sectors, as in the
    VM (Runner.rainssd_options)."""
    from .invm import Runner
    if c["kind"] != "rainssd":
        raise Unsupported("%s is not modelled" % c["kind"])
    if c.get("module"):
        # the simulator compiles the checkout's decision code, not another build's
        raise Unsupported("another module build (%s) is not modelled" % c["module"])
    if sc is None:
        words = list(c["options"])
    else:
        try:
            words = Runner.rainssd_options(sc, c)
        except RuntimeError as e:
            raise Unsupported(str(e))
    out = []
    if len(words) % 2:
        raise Unsupported("options %r are not key/value pairs" % words)
    for k, v in zip(words[0::2], words[1::2]):
        if k == "policy":
            out += ["--policy", v]
        elif k == "read_policy":
            out += ["--read-policy", v]
        elif k in TUNABLES:
            out += ["--tun", "%s=%s" % (k, v)]
        elif k == "tier_size":
            if "{tier}" in v:
                raise Unsupported("tier_size %s: the tier's size comes from the scenario's tier_mb" % v)
            try:
                sectors = int(v)
            except ValueError:
                raise Unsupported("tier_size %r is not a number of sectors" % v)
            if sectors % 2048:
                # the simulator's tier is whole MiB of every member
                raise Unsupported("tier_size %d (not whole MiB) is not modelled" % sectors)
            out += ["--tier-mb", str(sectors // 2048)]
        elif k in TIER_OPTIONS:
            out += [TIER_OPTIONS[k], v]
        else:
            raise Unsupported("option %s has no model" % k)
    if "--tier-mb" in out and "--migration-rate" not in out:
        out += ["--migration-rate", str(MODULE_MIGRATION_RATE)]
    return out


def _kib(env, key):
    b = config.size_bytes(env[key])
    if b % 1024:
        raise Unsupported("%s=%s is not whole KiB" % (key, env[key]))
    return b // 1024


def job_args(sc, job, env):
    """A job's workload as simulator options."""
    from .invm import fio_pattern
    if job["trace"] or job["fio"] not in JOB_FILES:
        raise Unsupported("job file %s is not modelled" % job["fio"])
    rw, rf = fio_pattern(os.path.join(config.FIO_DIR, job["fio"]), env)
    if not rw.startswith("rand"):
        raise Unsupported("rw=%s is not modelled" % rw)
    out = ["--bs-kb", str(_kib(env, "BS")), "--ba-kb", str(_kib(env, "BA")),
           "--region-mb", str(max(1, config.size_bytes(env["SIZE"]) >> 20))]
    rate = env.get("RATE_IOPS")
    if rate:
        r, _, w = rate.partition(",")
        r, w = float(r), float(w or r)   # one value: fio applies it to each direction
        out += ["--read-iops", str(r if rf > 0 else 0), "--write-iops", str(w if rf < 1 else 0)]
    else:
        out += ["--iodepth", str(int(env["IODEPTH"]) * int(env["NUMJOBS"])),
                "--rwmix", str(int(round(rf * 100)))]
    return out


def scenario_args(sc):
    ch, di = sc["channel"], sc["disturb"]
    out = ["--members", str(sc["members"]), "--chunk-kb", str(sc["chunk_kb"]),
           "--lat-list", ",".join(str(x) for x in ch["lat_us"]), "--qd", str(ch["qd"])]
    if ch["write_extra_ms"]:
        out += ["--write-delay-ms", str(ch["write_extra_ms"])]
    for i, f in sorted(di["background"].items()):
        out += ["--bg", "%d:%s" % (i, f)]
    for i, s in sorted(di["stall"].items()):
        out += ["--stall", "%d:%d:%d" % (i, s["stall_ms"], s["period_ms"])]
    for i, f in sorted(di.get("foreign", {}).items()):
        out += ["--foreign", "%d:%d:%d" % (i, f["qd"], f["read_pct"])]
    if di.get("foreign") and ch.get("member_dev", "linear") != "channel":
        # the tenant reaches the channel through its own dm-linear: not in
        # the statistics of the member's device
        out += ["--foreign-hidden"]
    return out


def run(scenarios, duration=600, seed=1, only=None, jitter_us=0, extra=(), log=print):
    """Every (scenario, job, rainssd contender) through the simulator."""
    from .invm import Runner
    ensure_built()
    envr = Runner(scenarios, "/nonexistent", 1)
    recs, skipped = [], {}
    for sc in scenarios:
        if sc.get("kind", "jobs") != "jobs":
            skipped.setdefault("a %s scenario is not modelled" % sc["kind"], set()).add(sc["name"])
            continue
        for job in sc["jobs"]:
            env = envr.job_env(sc, job)
            for c in sc["contenders"]:
                if only and c["label"] not in only:
                    continue
                base = {"scenario": sc["name"], "job": job["name"], "contender": c["label"]}
                try:
                    args = scenario_args(sc) + job_args(sc, job, env) + contender_args(c, sc)
                except (Unsupported, config.ConfigError, ValueError) as e:
                    skipped.setdefault(str(e), set()).add(c["label"] if "modelled" in str(e) and
                                                          "job" not in str(e) else job["name"])
                    continue
                args += ["--duration", str(duration), "--seed", str(seed), "--json"]
                if jitter_us:
                    args += ["--jitter-us", str(jitter_us)]
                args += list(extra)
                r = subprocess.run([SIM] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if r.returncode != 0:
                    raise RuntimeError("rainssd-sim %s: %s" % (" ".join(args), r.stderr.strip()))
                recs.append(dict(base, args=args, result=json.loads(r.stdout)))
    for why, what in sorted(skipped.items()):
        log("model: skipped %s: %s" % (", ".join(sorted(what)), why))
    return recs


def _dirs(recs):
    return [d for d in ("read", "write") if any(r["result"][d]["ios"] for r in recs)]


FIGS = ("mean_ms", "p99_ms", "p99.9_ms", "p99.99_ms")


def _fmt(v):
    return "%.1f" % v if v < 100 else "%.0f" % v


def _table(head, rows, markdown):
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        w = [max(len(x) for x in col) for col in zip(head, *rows)]
        out = ["  ".join(x.ljust(w[0]) if i == 0 else x.rjust(w[i]) for i, x in enumerate(r))
               for r in [head] + rows]
    return "\n".join(out) + "\n"


def groups(recs):
    order, by = [], {}
    for r in recs:
        k = (r["scenario"], r["job"])
        if k not in by:
            by[k] = []
            order.append(k)
        by[k].append(r)
    return [(k, by[k]) for k in order]


def table(recs, markdown=False):
    """Per scenario and job: each contender's figures in the model."""
    out = []
    for (scen, job), rs in groups(recs):
        dirs = _dirs(rs)
        head = ["contender", "IOPS"]
        for d in dirs:
            head += ["%s %s" % (d, f.replace("_ms", "")) for f in FIGS]
        head += ["RCW", "rebuilt reads", "load CV"]
        tiered = any("tier" in r["result"] for r in rs)
        if tiered:
            # the tier's share of the user write stripes, and member sectors
            # written per user sector (with the offline migration's)
            head += ["tier hits", "WA"]
        rows = []
        for r in rs:
            res = r["result"]
            row = [r["contender"], "%.0f" % (res["read"]["iops"] + res["write"]["iops"])]
            for d in dirs:
                row += [_fmt(res[d][f]) for f in FIGS]
            row += [str(res["counters"]["rcw"]), str(res["counters"]["reconstruct_reads"]),
                    "%.2f" % res["member_load_cv"]]
            if tiered:
                uw = res.get("user_write_sectors", 0)
                row += ["%.0f%%" % (100 * res["tier"]["hit_ratio"]) if "tier" in res else "-",
                        "%.2f" % (res["member_write_sectors"] / uw) if uw else "-"]
            rows.append(row)
        out.append(("**%s / %s** (model, ms)\n\n" if markdown else "== %s / %s (model, ms)\n") % (scen, job))
        out.append(_table(head, rows, markdown) + "\n")
    return "".join(out)


def versus(recs, base, other, markdown=False):
    """Each figure of contender OTHER as a change from BASE, in percent."""
    head = ["scenario / job", "direction"] + [f.replace("_ms", "") for f in FIGS]
    rows = []
    for (scen, job), rs in groups(recs):
        by = {r["contender"]: r["result"] for r in rs}
        if base not in by or other not in by:
            continue
        for d in _dirs(rs):
            row = ["%s / %s" % (scen, job), d]
            for f in FIGS:
                b, o = by[base][d][f], by[other][d][f]
                row.append("%+.1f%%" % (100.0 * (o - b) / b) if b else "-")
            rows.append(row)
    if not rows:
        return "model: no scenario has both %s and %s\n" % (base, other)
    title = "%s against %s, change in the model (negative is better)\n" % (other, base)
    return ("**%s**\n" % title.strip() if markdown else title) + ("\n" if markdown else "") + \
        _table(head, rows, markdown)


def jitter_hist(runs, job, contenders):
    """The extra time of the direct QD1 reads of `job` in a bench run: each
    request's latency minus its channel's service time, as a histogram
    [(extra_us, count)] merged over the runs of `contenders`. On idle members
    at QD 1 every request sees the bare channel, so what is left is the path's
    cost, and under QEMU/TCG the emulator's (bench/scenarios/path-cost.conf)."""
    hist, used = {}, []
    for r in runs:
        if r.get("status") != "ok" or r["job"] != job or r["contender"] not in contenders:
            continue
        env = r["fio_env"]
        if int(env.get("IODEPTH", 1)) * int(env.get("NUMJOBS", 1)) != 1 or r["fio"]["write"]["ios"]:
            raise ValueError("%s: want a read-only job at QD 1" % r["_file"])
        lat = r["channel"]["lat_us"]
        if len(set(lat)) != 1 or any(r["disturb"].get(k) for k in ("slow", "background", "stall", "foreign")):
            raise ValueError("%s: want equal, undisturbed members" % r["_file"])
        for v, c in r["fio"]["read"]["lat_hist_ns"]:
            us = max(0, int(round(v / 1000.0 - lat[0])))
            hist[us] = hist.get(us, 0) + c
        used.append(r["_file"])
    if not used:
        raise ValueError("no ok runs of job %s by %s" % (job, ", ".join(contenders)))
    return sorted(hist.items()), used
