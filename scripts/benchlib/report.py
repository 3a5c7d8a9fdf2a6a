"""Tables from a directory of scripts/bench run JSON files, and the checker
that every run file has every field."""
import glob
import json
import os
import statistics

from . import model

BASELINE = "md-raid5"


# The files of a run directory that are not run records: the VM's manifest
# and what the host writes beside it (scripts/bench run).
NOT_RUNS = ("manifest.json", "host-contention.json", "host-modules.json")


def run_files(d):
    return [p for p in sorted(glob.glob(os.path.join(d, "*.json")))
            if os.path.basename(p) not in NOT_RUNS]


def load_runs(d, record="jobs"):
    """The run records of a directory: those of fio jobs (record "jobs", the
    default), of rebuild scenarios ("rebuild"), or all (None)."""
    runs = []
    for p in run_files(d):
        with open(p) as f:
            r = json.load(f)
        if record is not None and r.get("record", "jobs") != record:
            continue
        r["_file"] = os.path.basename(p)
        runs.append(r)
    runs.sort(key=lambda r: r.get("run_index", 0))
    return runs


def load_manifest(d):
    p = os.path.join(d, "manifest.json")
    if os.path.isfile(p):
        with open(p) as f:
            return json.load(f)
    return None


def group(runs):
    """[(scenario, job, {contender: [runs]}, contender order)] in run order."""
    order, groups = [], {}
    cons = {}
    for r in runs:
        key = (r["scenario"], r["job"])
        if key not in groups:
            groups[key] = {}
            cons[key] = []
            order.append(key)
        if r["contender"] not in groups[key]:
            groups[key][r["contender"]] = []
            cons[key].append(r["contender"])
    for r in runs:
        groups[(r["scenario"], r["job"])][r["contender"]].append(r)
    out = []
    for key in order:
        # Contenders in the scenario's configured order: the first repeat's
        # order (the order of forward repeats).
        first = sorted(groups[key].items(), key=lambda kv: min(
            (x["order_index"] if x["repeat"] % 2 == 1 else 10**6 - x["order_index"]) for x in kv[1]))
        out.append((key[0], key[1], dict(first), [k for k, _ in first]))
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pooled_pcts(runs, d, pcts=(99.0, 99.9, 99.99)):
    """Percentiles (us) of direction d over every request of every run
    together: fio's latency histograms (json+ bins) merged, then read the
    way fio reads its own (the smallest bin with at least p% of the requests
    at or below it). None when a run has no histogram."""
    merged = {}
    for r in runs:
        h = r["fio"][d].get("lat_hist_ns")
        if r["fio"][d]["ios"] and not h:
            return None
        for v, c in h or []:
            merged[v] = merged.get(v, 0) + c
    total = sum(merged.values())
    if not total:
        return None
    out, acc, vals = {}, 0, sorted(merged.items())
    want = sorted(pcts)
    i = 0
    for v, c in vals:
        acc += c
        while i < len(want) and acc >= want[i] / 100.0 * total:
            out["p%g" % want[i]] = v / 1000.0
            i += 1
    return out


def summarize(runs, pooled=False):
    """Medians over the ok repeats of one contender in one scenario/job;
    with pooled, the percentiles are those of every repeat's requests
    together (pooled_pcts) instead of the median of each repeat's."""
    ok = [r for r in runs if r.get("status") == "ok"]
    s = {"n": len(ok), "n_err": len(runs) - len(ok),
         "error": next((r["error"] for r in runs if r.get("status") != "ok"), None)}
    if not ok:
        return s
    iops = [r["fio"]["iops"] for r in ok]
    s["iops"] = med(iops)
    s["spread"] = (max(iops) - min(iops)) / s["iops"] if s["iops"] else 0.0
    s["mib_s"] = med(r["fio"]["mib_s"] for r in ok)
    for d in ("read", "write"):
        s[d] = None
        if any(r["fio"][d]["ios"] for r in ok):
            s[d] = {k: med(r["fio"][d]["lat_us"][k] for r in ok if r["fio"][d]["ios"])
                    for k in ("mean", "p99", "p99.9", "p99.99")}
            pp = pooled_pcts(ok, d) if pooled else None
            if pp:
                s[d].update(pp)
            s[d]["iops"] = med(r["fio"][d]["iops"] for r in ok)
            s[d]["ios"] = sum(r["fio"][d]["ios"] for r in ok)
    s["mio"] = med(r["member_ios_per_user_io"] for r in ok)
    s["cv"] = med(r["member_load_cv"] for r in ok)
    s["cv_samples"] = med(r["inflight_samples"]["member_cv_mean"] for r in ok)
    # The guest's busy CPU share over the window (run files from 1.8.1's
    # bench on; older ones lack it).
    cpu = [r["guest_cpu_busy"] for r in ok if r.get("guest_cpu_busy") is not None]
    s["cpu"] = med(cpu) if cpu else None
    s["bound"] = ok[0]["device_bound"]["iops"]
    s["bound_limit"] = ok[0]["device_bound"]["limit"]
    s["frac"] = s["iops"] / s["bound"] if s["bound"] else None
    # Against the bound recomputed with the disturbances as they happened
    # (older run files lack it: compute it here).
    fr = []
    for r in ok:
        mb = r.get("device_bound_measured") if "device_bound_measured" in r else model.measured_bound(r)
        if mb and mb.get("iops"):
            fr.append(r["fio"]["iops"] / mb["iops"])
    s["mfrac"] = med(fr)
    return s


def f_ms(us, w=6):
    if us is None:
        return "-".rjust(w)
    v = us / 1000.0
    return ("%.*f" % (1 if v < 100 else 0, v)).rjust(w)


def table(d, markdown=False, pooled=False):
    runs = load_runs(d)
    rebuilds = load_runs(d, "rebuild")
    resyncs = load_runs(d, "resync")
    if not runs and not rebuilds and not resyncs:
        return "no run files in %s\n" % d
    lines = []
    man = load_manifest(d)
    if man:
        lines.append("kernel %s%s, rainssd %s, %s repeat(s), started %s, %s s" % (
            man.get("kernel"), ", clocksource %s" % man["clocksource"] if man.get("clocksource") else "",
            man.get("rainssd_version"), man.get("repeat"), man.get("started"),
            man.get("elapsed_s", "?")))
        if man.get("modules"):
            lines.append("other module builds: %s" % ", ".join(
                "%s (%s)" % (k, v) for k, v in sorted(man["modules"].items())))
    if rebuilds:
        lines.append(rebuild_table(rebuilds, markdown=markdown, pooled=pooled).rstrip("\n"))
    if resyncs:
        lines.append(resync_table(resyncs, markdown=markdown).rstrip("\n"))
    for scen, job, by_con, cons in group(runs):
        any_run = next(iter(by_con.values()))[0]
        b = {r["scheme"]: r["device_bound"] for rs in by_con.values() for r in rs if r.get("device_bound")}
        env = any_run.get("fio_env", {})
        pat = next((v["pattern"] for v in b.values() if v.get("pattern")), {})
        qd = int(env.get("IODEPTH", 1)) * int(env.get("NUMJOBS", 1))
        t = any_run.get("trace")
        if t:
            what = "replay of %s (%s, %d reads, %d writes, x%g speed) qd<=%d" % (
                t["trace"], t["format"], t["reads"], t["writes"], t["speed"], qd)
        else:
            what = "%s bs=%s ba=%s qd=%s" % (pat.get("rw", "?"), env.get("BS"), env.get("BA"), qd)
        head = "%s / %s: %s %s; %d members, chunk %d KiB" % (
            scen, job, any_run.get("fio_job"), what, any_run["members"], any_run["chunk_kb"])
        bl = "; ".join("bound %s %.0f IOPS (%s, %.2f member I/Os per I/O)" % (
            k, v["iops"], v["limit"], v["member_ios_per_io"]) if v.get("iops") else "no bound for %s" % k
            for k, v in sorted(b.items()))
        sums = {c: summarize(by_con[c], pooled) for c in cons}
        base = sums.get(BASELINE, {}).get("iops")
        # Markdown shows only the directions the job has.
        dirs = [d for d in ("read", "write") if any(sums[c].get(d) for c in cons)] or ["read", "write"]
        if markdown:
            lines.append("")
            lines.append("**%s** — %s" % (head, bl))
            lines.append("")
            lat_h = "".join("| %s mean (ms) | p99 | p99.9 | p99.99 " % d for d in dirs)
            lines.append("| contender | n | IOPS | ± | MiB/s | of bound | of meas. bound | vs md-raid5 " + lat_h
                         + "| member I/Os per I/O | load CV | guest CPU |")
            lines.append("|---|" + "--:|" * (10 + 4 * len(dirs)))
        else:
            lines.append("")
            lines.append("== " + head)
            lines.append("   " + bl)
            lines.append("   %-20s %2s %7s %5s %7s %6s %6s %6s | %s | %s | %6s %5s %4s" % (
                "contender", "n", "IOPS", "+-", "MiB/s", "bound", "m.bnd", "x md5",
                "read ms: mean    p99  p99.9 p99.99", "write ms: mean    p99  p99.9 p99.99", "mIO/IO", "CV", "cpu"))
        for c in cons:
            s = sums[c]
            if not s["n"]:
                err = s["error"] or ""
                k = err.find("[kernel:")
                if k >= 0:  # the kernel's reason is the useful part
                    err = err[k:err.find("]", k) + 1]
                err = err[:110]
                if markdown:
                    lines.append("| %s | 0 | error: %s |" % (c, err.replace("|", "/")))
                else:
                    lines.append("   %-20s  0 ERROR %s" % (c, err))
                continue
            ratio = s["iops"] / base if base else None

            def lat(d):
                x = s[d]
                if not x:
                    return ["-"] * 4
                return [f_ms(x[k]).strip() for k in ("mean", "p99", "p99.9", "p99.99")]
            r_, w_ = lat("read"), lat("write")
            cpu = "%.0f%%" % (100 * s["cpu"]) if s.get("cpu") is not None else "-"
            if markdown:
                lats = " | ".join(" | ".join(r_ if d == "read" else w_) for d in dirs)
                lines.append("| %s | %d | %.0f | %.0f%% | %.2f | %s | %s | %s | %s | %.2f | %.2f | %s |" % (
                    c, s["n"], s["iops"], 100 * s["spread"], s["mib_s"],
                    "%.0f%%" % (100 * s["frac"]) if s["frac"] is not None else "-",
                    "%.0f%%" % (100 * s["mfrac"]) if s["mfrac"] is not None else "-",
                    "%.2f" % ratio if ratio else "-", lats, s["mio"] or 0, s["cv"], cpu))
            else:
                lines.append("   %-20s %2d %7.0f %4.0f%% %7.2f %6s %6s %6s | %s | %s | %6.2f %5.2f %4s%s" % (
                    c, s["n"], s["iops"], 100 * s["spread"], s["mib_s"],
                    "%.0f%%" % (100 * s["frac"]) if s["frac"] is not None else "-",
                    "%.0f%%" % (100 * s["mfrac"]) if s["mfrac"] is not None else "-",
                    "%.2f" % ratio if ratio else "-",
                    "%14s %6s %6s %6s" % tuple(r_), "%15s %6s %6s %6s" % tuple(w_),
                    s["mio"] or 0, s["cv"], cpu, "  (%d failed)" % s["n_err"] if s["n_err"] else ""))
    return "\n".join(lines) + "\n"


def pivot(d, markdown=False, metric="iops"):
    """One row per scenario/job, one column per contender: median IOPS and
    the ratio to md-raid5, then the device bounds (compact, like Fig. 2)."""
    runs = load_runs(d)
    if not runs:
        return "no run files in %s\n" % d
    groups = group(runs)
    cons = []
    for _, _, _, cc in groups:
        for c in cc:
            if c not in cons:
                cons.append(c)
    lines = []
    if markdown:
        lines.append("| scenario / job | " + " | ".join(cons) + " | bound RAID-5 | bound RAID-10 |")
        lines.append("|---|" + "--:|" * (len(cons) + 2))
    else:
        lines.append("%-34s" % "scenario / job" + "".join("%18s" % c[:17] for c in cons)
                     + "%10s%10s" % ("bnd R5", "bnd R10"))
    for scen, job, by_con, _ in groups:
        base = summarize(by_con[BASELINE]).get("iops") if BASELINE in by_con else None
        cells = []
        for c in cons:
            if c not in by_con:
                cells.append("")
                continue
            sm = summarize(by_con[c])
            if not sm["n"]:
                cells.append("error")
            elif base and c != BASELINE:
                cells.append("%.0f (x%.2f)" % (sm["iops"], sm["iops"] / base))
            else:
                cells.append("%.0f" % sm["iops"])
        bnd = {}
        for rs in by_con.values():
            for r in rs:
                b = r.get("device_bound") or {}
                if b.get("iops"):
                    bnd[r["scheme"]] = "%.0f" % b["iops"]
        name = "%s / %s" % (scen, job)
        if markdown:
            lines.append("| %s | %s | %s | %s |" % (name, " | ".join(cells), bnd.get("raid5", "-"),
                                                    bnd.get("raid10", "-")))
        else:
            lines.append("%-34s" % name[:34] + "".join("%18s" % x for x in cells)
                         + "%10s%10s" % (bnd.get("raid5", "-"), bnd.get("raid10", "-")))
    return "\n".join(lines) + "\n"


def versus(d, base, other, markdown=False, pooled=False):
    """One row per scenario/job that ran both contenders: the change of
    each figure of `other` relative to `base`, in percent (negative = lower;
    for latencies lower is better, for IOPS higher). Medians over repeats;
    the per-repeat spread of IOPS is printed so a reader sees the noise."""
    runs = load_runs(d)
    if not runs:
        return "no run files in %s\n" % d
    keys = [("iops", None, "IOPS")] + [(dr, k, "%s %s" % (dr[0], k)) for dr in ("read", "write")
                                        for k in ("mean", "p99", "p99.9", "p99.99")]
    head = ["scenario / job", "%s vs %s" % (other, base)] + [k[2] for k in keys] + ["load CV", "spread"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|---|---|" + "--:|" * (len(keys) + 2))
    else:
        lines.append("%-34s" % head[0] + "".join("%9s" % h for h in head[2:-2])
                     + "%11s%9s" % tuple(head[-2:]))
    found = False
    for scen, job, by_con, _ in group(runs):
        if base not in by_con or other not in by_con:
            continue
        a, b = summarize(by_con[base], pooled), summarize(by_con[other], pooled)
        if not a["n"] or not b["n"]:
            continue
        found = True

        def pct(x, y):
            return "-" if x is None or y is None or not x else "%+.1f%%" % (100.0 * (y - x) / x)
        cells = []
        for dr, k, _ in keys:
            if k is None:
                cells.append(pct(a["iops"], b["iops"]))
            elif a[dr] and b[dr]:
                cells.append(pct(a[dr][k], b[dr][k]))
            else:
                cells.append("-")
        cells.append("%.2f/%.2f" % (a["cv"], b["cv"]))
        cells.append("%.0f%%/%.0f%%" % (100 * a["spread"], 100 * b["spread"]))
        name = "%s / %s" % (scen, job)
        if markdown:
            lines.append("| %s | n=%d/%d | %s |" % (name, a["n"], b["n"], " | ".join(cells)))
        else:
            lines.append("%-34s" % name[:34] + "".join("%9s" % x for x in cells[:-2])
                         + "%11s%9s" % tuple(cells[-2:]))
    if not found:
        return "no scenario ran both %s and %s in %s\n" % (base, other, d)
    return "\n".join(lines) + "\n"


# --- rebuild scenarios ------------------------------------------------------------

def _range(xs, fmt="%.1f"):
    """Median, and the range over repeats when there are several."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    m = fmt % statistics.median(xs)
    if len(xs) > 1 and fmt % min(xs) != fmt % max(xs):
        m += " (%s-%s)" % (fmt % min(xs), fmt % max(xs))
    return m


def _pool_hist(parts):
    merged = {}
    for h in parts:
        for v, c in h or []:
            merged[v] = merged.get(v, 0) + c
    return sorted([v, c] for v, c in merged.items())


def _hist_pct(hist, p):
    total = sum(c for _, c in hist)
    if not total:
        return None
    acc = 0
    for v, c in hist:
        acc += c
        if acc >= p / 100.0 * total:
            return v / 1e6
    return None


def rebuild_summary(runs, pooled=False):
    """Medians over the ok repeats of one contender at one rate setting
    (latencies in ms; pooled: the percentiles of every repeat's requests)."""
    ok = [r for r in runs if r.get("status") == "ok" and r.get("idle") and r.get("loaded")]
    s = {"n": len(ok), "n_err": len(runs) - len(ok),
         "error": next((r.get("error") or r.get("later_error") for r in runs
                        if r.get("status") != "ok" or r.get("later_error")), None)}
    if not ok:
        return s
    for m in ("idle", "loaded"):
        s[m + "_s"] = [r[m]["seconds"] for r in ok]
        s[m + "_mib"] = [r[m]["mib_s_per_member"] for r in ok]
    # rainssd's replacement goes in by a table reload: suspend (in-flight
    # I/O drains, new I/O waits), reload, resume; the rebuild time runs from
    # the resume. swap_s is that reload's time, idle_swap_mib the idle
    # throughput over the swap and the rebuild together, and
    # cmd_p99/cmd_max the load's latencies from the command on (the
    # requests the suspend held included). md's --add holds no I/O (0).
    s["swap_s"] = [r["loaded"].get("replace_before_start_s") or 0.0 for r in ok]
    s["idle_swap_mib"] = [
        r["idle"]["sectors_per_member"] / 2048.0 /
        (r["idle"]["seconds"] + (r["idle"].get("replace_before_start_s") or 0.0)) for r in ok]
    fr = [(r["loaded"].get("fio_replace") or {}).get("all") or {} for r in ok]
    s["cmd_p99"] = [x.get("p99") for x in fr]
    s["cmd_max"] = [x.get("max_ms") for x in fr]
    f = [r["loaded"]["fio"]["all"] for r in ok]
    s["iops"] = [x["iops"] for x in f]
    for k in ("p50", "p99", "p99.9"):
        s[k] = [x[k] for x in f]
        if pooled:
            s[k] = [_hist_pct(_pool_hist([x["hist_ns"] for x in f]), float(k[1:]))]
    b = [r["baseline"]["all"] for r in ok if r.get("baseline")]
    s["base_iops"] = [x["iops"] for x in b]
    s["base_p99"] = [x["p99"] for x in b]
    if pooled and b:
        s["base_p99"] = [_hist_pct(_pool_hist([x["hist_ns"] for x in b]), 99.0)]
    ver = []
    for r in ok:
        for m in ("idle", "loaded"):
            v = r[m].get("verify_parity")
            if v:
                ver.append(v.get("ok"))
        v = r.get("verify_data")
        if v:
            ver.append(v.get("ok"))
    s["verify"] = "-" if not ver else "ok" if all(v is True for v in ver) else \
        "FAILED" if any(v is False for v in ver) else "partly"
    s["sectors"] = ok[0].get("member_data_sectors")
    return s


def rebuild_ratios(sums, cons, kinds):
    """(rainssd contender, md contender, {figure: ratio}) for every rainssd
    contender against the md one: medians over repeats."""
    mds = [c for c in cons if kinds.get(c) == "md-raid5" and sums[c]["n"]]
    out = []
    for c in cons:
        if kinds.get(c) != "rainssd" or not sums[c]["n"] or not mds:
            continue
        a, b = sums[c], sums[mds[0]]

        def ratio(k):
            x, y = med(a[k]), med(b[k])
            return x / y if x is not None and y else None
        out.append((c, mds[0], {k: ratio(k) for k in ("idle_mib", "loaded_mib", "idle_s", "loaded_s",
                                                      "iops", "p50", "p99", "p99.9", "base_p99",
                                                      "idle_swap_mib", "cmd_p99", "cmd_max")}))
    return out


def rebuild_table(runs, markdown=False, pooled=False):
    """One table per rebuild scenario and rate setting: rebuild time and
    throughput idle and under the load, the load's IOPS and latency during
    the rebuild and on the healthy volume, the verification; then
    rainssd/md ratios."""
    lines = []
    for scen, job, by_con, cons in group(runs):
        any_run = next(iter(by_con.values()))[0]
        rate = any_run.get("rate") or {}
        env = any_run.get("fio_env", {})
        sums = {c: rebuild_summary(by_con[c], pooled) for c in cons}
        kinds = {c: by_con[c][0].get("kind") for c in cons}
        sec = next((x["sectors"] for x in sums.values() if x.get("sectors")), None)
        head = ("%s / %s: min %s, max %s KiB/s per member; %d members + 1 spare, chunk %d KiB%s; "
                "load %s %s%% reads bs=%s qd=%s over %s" % (
                    scen, job, rate.get("min_kib_s"), rate.get("max_kib_s"), any_run["members"],
                    any_run["chunk_kb"], ", %.0f MiB per member rebuilt" % (sec / 2048.0) if sec else "",
                    any_run.get("fio_job"), env.get("RWMIX", "?"), env.get("BS"), env.get("IODEPTH"),
                    env.get("SIZE")))
        cols = ["contender", "n", "idle s", "idle MiB/s per member", "loaded s", "loaded MiB/s per member",
                "load IOPS", "p50 ms", "p99 ms", "p99.9 ms", "healthy IOPS", "healthy p99 ms",
                "swap s", "from cmd p99 ms", "from cmd max ms", "verify"]
        lines.append("")
        if markdown:
            lines.append("**%s**" % head)
            lines.append("")
            lines.append("| " + " | ".join(cols) + " |")
            lines.append("|---|" + "--:|" * (len(cols) - 2) + "---|")
        else:
            lines.append("== " + head)
        for c in cons:
            x = sums[c]
            if not x["n"]:
                err = (x["error"] or "")[:150]
                lines.append("| %s | 0 | error: %s |" % (c, err.replace("|", "/")) if markdown
                             else "   %-22s  0 ERROR %s" % (c, err))
                continue
            cells = [c, str(x["n"]), _range(x["idle_s"]), _range(x["idle_mib"]), _range(x["loaded_s"]),
                     _range(x["loaded_mib"]), _range(x["iops"], "%.0f"), _range(x["p50"], "%.2f"),
                     _range(x["p99"], "%.1f"), _range(x["p99.9"], "%.1f"), _range(x["base_iops"], "%.0f"),
                     _range(x["base_p99"], "%.1f"), _range(x["swap_s"], "%.1f"), _range(x["cmd_p99"], "%.1f"),
                     _range(x["cmd_max"], "%.0f"), x["verify"]]
            if markdown:
                lines.append("| " + " | ".join(cells) + " |")
            else:
                lines.append("   " + "  ".join(cells))
            if x["error"]:
                lines.append(("| | | later error: %s |" if markdown else "     later error: %s")
                             % x["error"][:150].replace("|", "/"))
        for rc, mc, q in rebuild_ratios(sums, cons, kinds):
            def f(k, lower_better=False):
                v = q[k]
                return "-" if v is None else "%.2f" % v
            txt = ("%s/%s: rebuild throughput idle x%s, under load x%s; under load IOPS x%s, "
                   "p50 x%s, p99 x%s, p99.9 x%s (healthy p99 x%s)" % (
                       rc, mc, f("idle_mib"), f("loaded_mib"), f("iops"), f("p50"), f("p99"), f("p99.9"),
                       f("base_p99")))
            txt += ("; counting rainssd's table swap: idle throughput x%s, from the command "
                    "p99 x%s, max x%s" % (f("idle_swap_mib"), f("cmd_p99"), f("cmd_max")))
            lines.append("")
            lines.append(txt if markdown else "   " + txt)
    return "\n".join(lines) + "\n"


# --- resync scenarios ----------------------------------------------------------------

def resync_summary(runs):
    """The ok repeats of one contender in a resync scenario: lists over the
    repeats (report them with _range), sizes in MiB."""
    ok = [r for r in runs if r.get("status") == "ok" and (r.get("resync") or {}).get("seconds") is not None]
    s = {"n": len(ok), "n_err": len(runs) - len(ok),
         "error": next((r.get("error") or r.get("later_error") for r in runs
                        if r.get("status") != "ok" or r.get("later_error")), None)}
    if not ok:
        return s
    n = ok[0]["members"]
    s["seconds"] = [r["resync"]["seconds"] for r in ok]
    s["restart_s"] = [r["resync"].get("restart_s") for r in ok]
    s["read_mib"] = [r["resync"]["member_io"]["read_sectors"] / n / 2048.0 for r in ok]
    s["write_mib"] = [r["resync"]["member_io"]["write_sectors"] / n / 2048.0 for r in ok]
    s["span_mib"] = [r["resync"]["span_sectors"] / 2048.0 for r in ok
                     if r["resync"].get("span_sectors") is not None]
    bm = [(r.get("after_cut") or {}).get("bitmap") for r in ok]
    s["dirty"] = [b["dirty"] for b in bm if b]
    s["regions"] = next((b["regions"] for b in bm if b), None)
    s["region_mib"] = next((b["region_sectors"] / 2048.0 for b in bm if b and b.get("region_sectors")), None)
    # Writes completed before the cut: the volume's counters over write_s
    # (fio's own log as a fallback).
    s["iops"] = [((r.get("load") or {}).get("volume") or {}).get("iops")
                 or ((r.get("load") or {}).get("write") or {}).get("iops") for r in ok]
    s["write_s"] = [(r.get("cut") or {}).get("write_s") for r in ok]
    cp = [(r.get("after_cut") or {}).get("parity") for r in ok]
    s["cut_bad"] = [x.get("bad_stripes") for x in cp if x]
    s["cut_stripes"] = next((x.get("stripes_checked") for x in cp if x), None)
    ver = [(r.get("verify_parity") or {}).get("ok") for r in ok if r.get("verify_parity")]
    s["verify"] = "-" if not ver else "ok" if all(v is True for v in ver) else \
        "FAILED" if any(v is False for v in ver) else "partly"
    s["sectors"] = ok[0].get("member_data_sectors")
    return s


def resync_ratios(sums, cons, kinds):
    """(contender, md contender, resync time ratio, member reads ratio) for
    every rainssd contender against every md one: medians over repeats."""
    out = []
    for c in cons:
        if kinds.get(c) != "rainssd" or not sums[c]["n"]:
            continue
        for m in cons:
            if kinds.get(m) != "md-raid5" or not sums[m]["n"]:
                continue
            a, b = sums[c], sums[m]

            def ratio(k):
                x, y = med(a[k]), med(b[k])
                return x / y if x is not None and y else None
            out.append((c, m, ratio("seconds"), ratio("read_mib")))
    return out


def resync_table(runs, markdown=False):
    """One table per resync scenario: the resync's time after the power
    cut, what the status announced and what the members read and wrote
    meanwhile, the bitmap's dirty regions, the write hole the cut left, the
    parity check after; then rainssd/md ratios."""
    lines = []
    for scen, job, by_con, cons in group(runs):
        any_run = next(iter(by_con.values()))[0]
        env = any_run.get("fio_env", {})
        sums = {c: resync_summary(by_con[c]) for c in cons}
        kinds = {c: by_con[c][0].get("kind") for c in cons}
        sec = next((x["sectors"] for x in sums.values() if x.get("sectors")), None)
        wr = next((med(x["write_s"]) for x in sums.values() if x.get("write_s")), None)
        head = ("%s: resync after a power cut; %d members, chunk %d KiB%s; before the cut %s bs=%s "
                "qd=%s over %s from %s%s" % (
                    scen, any_run["members"], any_run["chunk_kb"],
                    ", %.0f MiB of data per member" % (sec / 2048.0) if sec else "",
                    any_run.get("fio_job"), env.get("BS"), env.get("IODEPTH"), env.get("SIZE"),
                    env.get("OFFSET", "0"), " for %.0f s" % wr if wr else ""))
        cols = ["contender", "n", "resync s", "restart cmd s", "dirty regions", "status span MiB per member",
                "member reads MiB per member", "member writes MiB per member", "write IOPS before the cut",
                "inconsistent stripes after the cut", "verify"]
        lines.append("")
        if markdown:
            lines.append("**%s**" % head)
            lines.append("")
            lines.append("| " + " | ".join(cols) + " |")
            lines.append("|---|" + "--:|" * (len(cols) - 2) + "---|")
        else:
            lines.append("== " + head)
        for c in cons:
            x = sums[c]
            if not x["n"]:
                err = (x["error"] or "")[:150]
                lines.append("| %s | 0 | error: %s |" % (c, err.replace("|", "/")) if markdown
                             else "   %-22s  0 ERROR %s" % (c, err))
                continue
            dirty = "-"
            if x["regions"]:
                dirty = "%s of %d" % (_range(x["dirty"], "%.0f"), x["regions"])
                if x["region_mib"]:
                    dirty += " x %.0f MiB" % x["region_mib"]
            cut = "-"
            if x["cut_bad"]:
                cut = "%s of %s" % (_range(x["cut_bad"], "%.0f"), x["cut_stripes"])
            cells = [c, str(x["n"]), _range(x["seconds"], "%.1f"), _range(x["restart_s"], "%.1f"), dirty,
                     _range(x["span_mib"], "%.0f"), _range(x["read_mib"], "%.1f"), _range(x["write_mib"], "%.1f"),
                     _range(x["iops"], "%.0f"), cut, x["verify"]]
            if markdown:
                lines.append("| " + " | ".join(cells) + " |")
            else:
                lines.append("   " + "  ".join(cells))
            if x["error"]:
                lines.append(("| | | error (a repeat, or a step after the resync): %s |" if markdown
                              else "     error (a repeat, or a step after the resync): %s")
                             % x["error"][:150].replace("|", "/"))
        rats = resync_ratios(sums, cons, kinds)
        if rats:
            txt = "; ".join("%s/%s: resync time x%s, member reads x%s" % (
                c, m, "-" if t is None else "%.2f" % t, "-" if rd is None else "%.2f" % rd)
                for c, m, t, rd in rats)
            lines.append("")
            lines.append(txt if markdown else "   " + txt)
    return "\n".join(lines) + "\n"


def perf_table(d, markdown=False, top=15):
    """The profile of each scenario/job and contender (runs made with
    `scripts/bench run --perf`): the symbols with the largest share of the
    cpu-clock samples, their share averaged over the repeats, with IOPS per
    sample-second beside the IOPS (what the whole system spent per I/O)."""
    runs = load_runs(d)
    lines = []
    for scen, job, by_con, cons in group(runs):
        for c in cons:
            ok = [r for r in by_con[c] if r.get("status") == "ok" and r.get("perf", {}).get("top")]
            if not ok:
                continue
            share, where = {}, {}
            for r in ok:
                for pct, dso, sym in r["perf"]["top"]:
                    share[sym] = share.get(sym, 0.0) + pct / len(ok)
                    where[sym] = dso
            iops = statistics.median(r["fio"]["iops"] for r in ok)
            samples = statistics.median(r["perf"]["samples"] or 0 for r in ok)
            head = "%s / %s / %s: %d run(s), %.0f IOPS, %.0f samples per run" % (
                scen, job, c, len(ok), iops, samples)
            best = sorted(share.items(), key=lambda kv: -kv[1])[:top]
            if markdown:
                lines += ["", "**%s**" % head, "", "| share | where | symbol |", "|--:|---|---|"]
                lines += ["| %.1f%% | %s | `%s` |" % (v, where[k], k) for k, v in best]
            else:
                lines += ["", "== " + head]
                lines += ["   %5.1f%%  %-16s %s" % (v, where[k][:16], k) for k, v in best]
    if not lines:
        return "no profiled runs in %s (scripts/bench run --perf)\n" % d
    return "\n".join(lines) + "\n"


def _per_contender(d, cols, markdown):
    """A table's header lines for @cols, and (scenario, job, contender, ok
    runs) for every scenario/job and contender with runs that went well."""
    if markdown:
        lines = ["| " + " | ".join(cols) + " |", "|---|---|" + "--:|" * (len(cols) - 2)]
    else:
        lines = ["  ".join(cols)]
    rows = []
    for scen, job, by_con, cons in group(load_runs(d)):
        for c in cons:
            ok = [r for r in by_con[c] if r.get("status") == "ok"]
            if ok:
                rows.append((scen, job, c, ok))
    return lines, rows


def _cells(cells, markdown):
    return ("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells)


def memory_table(d, markdown=False):
    """Memory in flight per scenario/job and contender: rainssd's
    stripe_cache_peak (entries, each a page per member: peak x members x 4
    KiB) and deferred bios, md's highest stripe_cache_active, and the
    kernel's MemFree/MemAvailable drop and Slab rise over the window
    (medians over repeats, with the range)."""
    cols = ["scenario / job", "contender", "n", "IOPS", "cache cap", "peak entries", "peak MiB",
            "deferred bios", "MemFree drop MiB", "MemAvailable drop MiB", "Slab rise MiB"]
    lines, rows = _per_contender(d, cols, markdown)
    for scen, job, c, ok in rows:
        n = ok[0]["members"]
        rc = [r.get("rainssd_cache") for r in ok]
        mem = [r.get("memory") or {} for r in ok]
        if any(rc):
            cap = _range([x["stripe_cache"] for x in rc if x], "%.0f")
            peak = _range([x["stripe_cache_peak"] for x in rc if x], "%.0f")
            peak_mib = _range([x["peak_bytes"] / 1048576.0 for x in rc if x], "%.1f")
            deferred = _range([x["deferred_bios"] for x in rc if x], "%.0f")
        elif any(m.get("md_stripe_cache_size") for m in mem):
            cap = _range([m.get("md_stripe_cache_size") for m in mem], "%.0f")
            act = [m.get("md_stripe_cache_active_max") for m in mem]
            peak = _range(act, "%.0f") + " (md active)"
            peak_mib = _range([a * n * 4096 / 1048576.0 for a in act if a is not None], "%.1f")
            deferred = "-"
        else:
            cap = peak = peak_mib = deferred = "-"

        def mb(key, sub):
            return _range([(m.get(key) or {}).get(sub, None) and m[key][sub] / 1024.0 for m in mem], "%.1f")
        cells = ["%s / %s" % (scen, job), c, str(len(ok)), _range([r["fio"]["iops"] for r in ok], "%.0f"),
                 cap, peak, peak_mib, deferred, mb("drop_kb", "MemFree"), mb("drop_kb", "MemAvailable"),
                 mb("rise_kb", "Slab")]
        lines.append(_cells(cells, markdown))
    return "\n".join(lines) + "\n"


TIER_COUNTERS = ("tier_to_r1", "tier_to_r5", "tier_offline", "tier_writes", "tier_reads")
STRIPE_WRITES = ("full_stripe_writes", "rmw", "rcw", "degraded_writes")


def tier_delta(r):
    """What one rainssd run did in the tier: the counters' change over the
    window (status before and after), the stripe writes, and the tier's use
    at the end; None for md or a volume without a tier."""
    from . import invm
    n = r.get("members")
    a, b = r.get("status_before") or "", r.get("status_after") or ""
    ta, tb = invm.rainssd_tail(a, n), invm.rainssd_tail(b, n)
    if "tier_stripes" not in tb or "tier_stripes" not in ta or tb["tier_stripes"].endswith("/0"):
        return None
    try:
        out = {k: int(tb[k]) - int(ta[k]) for k in TIER_COUNTERS}
        sa, sb = invm.parse_rainssd_status(a), invm.parse_rainssd_status(b)
        out["r5_writes"] = sum(int(sb[k]) - int(sa[k]) for k in STRIPE_WRITES)
        used, cap = (int(x) for x in tb["tier_stripes"].split("/"))
    except (KeyError, ValueError):
        return None
    out["used"], out["capacity"] = used, cap
    return out


def member_amp(r):
    """Member write I/Os and member read I/Os per user write, and member
    write bytes per user write byte (fio's MiB/s over its runtime); None
    without user writes."""
    w = r["fio"]["write"]
    if not w["ios"]:
        return None
    ms = r.get("member_stats") or []
    mw = sum(m["writes"] for m in ms)
    mr = sum(m["reads"] for m in ms)
    mws = sum(m["write_sectors"] for m in ms) * 512.0
    ub = w["mib_s"] * 1048576.0 * r["fio"]["job_runtime_ms"] / 1000.0
    return {"w_per_w": mw / w["ios"], "r_per_w": mr / w["ios"],
            "bytes": mws / ub if ub else None}


def tier_table(d, markdown=False):
    """The RAID1 tier's work per scenario/job and contender (issue 18, and
    HybRAID's Table 3 and Fig. 10 beside it): IOPS; the share of stripe
    writes the tier served (its hit ratio), stripes that entered it, went
    home by a full-stripe write, and were moved home by the offline
    migration, its use at the end; and for every contender the member writes
    and reads per user write and the member bytes written per user byte
    (write amplification). Medians over the repeats."""
    cols = ["scenario / job", "contender", "n", "IOPS", "tier hits", "entered", "went home",
            "offline", "tier used", "member writes / write", "member reads / write", "bytes written / user byte"]
    lines, rows = _per_contender(d, cols, markdown)
    for scen, job, c, ok in rows:
        td = [t for t in (tier_delta(r) for r in ok) if t]
        am = [a for a in (member_amp(r) for r in ok) if a]
        cells = ["%s / %s" % (scen, job), c, str(len(ok)), _range([r["fio"]["iops"] for r in ok], "%.0f")]
        if td:
            hits = [100.0 * t["tier_writes"] / (t["tier_writes"] + t["r5_writes"])
                    for t in td if t["tier_writes"] + t["r5_writes"]]
            cells += [_range(hits, "%.0f%%"), _range([t["tier_to_r1"] for t in td], "%.0f"),
                      _range([t["tier_to_r5"] for t in td], "%.0f"),
                      _range([t["tier_offline"] for t in td], "%.0f"),
                      _range([100.0 * t["used"] / t["capacity"] for t in td], "%.0f%%")]
        else:
            cells += ["-"] * 5
        if am:
            cells += [_range([a["w_per_w"] for a in am], "%.2f"), _range([a["r_per_w"] for a in am], "%.2f"),
                      _range([a["bytes"] for a in am if a["bytes"] is not None], "%.2f")]
        else:
            cells += ["-"] * 3
        lines.append(_cells(cells, markdown))
    return "\n".join(lines) + "\n"


def members_table(d, markdown=False):
    """Each member's work per scenario/job and contender: its reads and
    writes per second, the mean time a read and a write spent from
    allocation to end (the queue in front of the device included; run files
    from 2026-11-27 on), and the requests in flight on average. Medians over
    the repeats. A member that is its channel (member_dev = channel)
    counts a foreign tenant's I/O there too."""
    cols = ["scenario / job", "contender", "n", "member", "reads/s", "writes/s", "read ms", "write ms",
            "in flight"]
    lines, rows = _per_contender(d, cols, markdown)
    for scen, job, c, ok in rows:
        for i in range(ok[0]["members"]):
            ms = [(r["member_stats"][i], max(r.get("wall_s") or 0, 1e-3)) for r in ok
                  if len(r.get("member_stats") or []) > i]

            def per(key, num):
                return [m[key] / m[num] for m, _ in ms if key in m and m.get(num)]
            cells = ["%s / %s" % (scen, job), c, str(len(ok)), str(i),
                     _range([m["reads"] / w for m, w in ms], "%.0f"),
                     _range([m["writes"] / w for m, w in ms], "%.0f"),
                     _range(per("read_ticks_ms", "reads"), "%.1f"),
                     _range(per("write_ticks_ms", "writes"), "%.1f"),
                     _range([m.get("avg_inflight") for m, _ in ms], "%.2f")]
            lines.append(_cells(cells, markdown))
    return "\n".join(lines) + "\n"


def versus_noise(d, base, other, markdown=False, pooled=False):
    """Each scenario/job that ran both: IOPS and the main direction's p99 of
    every repeat of each, the change of the medians, the noise (the larger
    of the two contenders' repeat ranges, relative to their median) and
    whether OTHER is worse than BASE by more than that noise."""
    runs = load_runs(d)
    lines = []
    cols = ["scenario / job", "%s IOPS" % base, "%s IOPS" % other, "change", "noise", "p99 %s" % base,
            "p99 %s" % other, "change", "noise", "worse beyond noise"]
    if markdown:
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|---|" + "--:|" * (len(cols) - 2) + "---|")
    else:
        lines.append("  ".join(cols))
    worse = 0
    for scen, job, by_con, _ in group(runs):
        if base not in by_con or other not in by_con:
            continue
        a = [r for r in by_con[base] if r.get("status") == "ok"]
        b = [r for r in by_con[other] if r.get("status") == "ok"]
        if not a or not b:
            continue
        rd = sum(r["fio"]["read"]["ios"] for r in a + b)
        wr = sum(r["fio"]["write"]["ios"] for r in a + b)
        dr = "read" if rd >= wr else "write"

        def vals(rs, k):
            return [r["fio"]["iops"] for r in rs] if k == "iops" else \
                [r["fio"][dr]["lat_us"]["p99"] / 1000.0 for r in rs if r["fio"][dr]["lat_us"]["p99"] is not None]

        def noise(xs):
            return (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and statistics.median(xs) else 0.0
        cells = ["%s / %s (%s)" % (scen, job, dr)]
        bad = []
        for k, higher_better in (("iops", True), ("p99", False)):
            xa, xb = vals(a, k), vals(b, k)
            if not xa or not xb:
                cells += ["-"] * 4
                continue
            ma, mb_ = statistics.median(xa), statistics.median(xb)
            ch = (mb_ - ma) / ma if ma else 0.0
            nz = max(noise(xa), noise(xb))
            fmt = "%.0f" if k == "iops" else "%.1f"
            cells += ["/".join(fmt % x for x in xa), "/".join(fmt % x for x in xb), "%+.1f%%" % (100 * ch),
                      "%.1f%%" % (100 * nz)]
            if (ch < 0 if higher_better else ch > 0) and abs(ch) > nz:
                bad.append(k)
        if bad:
            worse += 1
        cells.append(", ".join(bad) if bad else "no")
        lines.append(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))
    lines.append("")
    lines.append("%d row(s) where %s is worse than %s by more than the repeats' range" % (worse, other, base))
    return "\n".join(lines) + "\n"


# --- the checker ------------------------------------------------------------------

NUM = (int, float)
LAT_KEYS = ("mean", "min", "max", "p50", "p99", "p99.9", "p99.99")
TOP_ALWAYS = {"schema": int, "scenario": str, "job": str, "contender": str, "kind": str,
              "scheme": str, "options": list, "repeat": int, "order_index": int, "run_index": int,
              "kernel": str, "time": str, "members": int, "chunk_kb": int, "channel": dict,
              "disturb": dict, "fio_env": dict, "fio_job": str, "status": str}
TOP_OK = {"fio": dict, "channel_stats": list, "member_ios_per_user_io": NUM,
          "member_load_cv": NUM, "member_io_cv": NUM, "channel_load_cv": NUM,
          "inflight_samples": dict, "wall_s": NUM, "fio_wall_s": NUM, "device_bound": dict, "fraction_of_bound": NUM,
          "status_before": str, "status_after": str, "background": list, "stalls": list,
          "duration_s": NUM, "create_cmd": str}
MEMBER_KEYS = ("dev", "reads", "writes", "read_sectors", "write_sectors", "io_ticks_ms",
               "time_in_queue_ms", "avg_inflight", "ios")
BOUND_KEYS = ("iops", "limit", "iops_channels", "iops_qd", "member_ios_per_io", "member_load",
              "path_ms", "member_capacity_iops", "scheme", "pattern")


def check_run(r):
    """List of problems of one run record (empty when complete)."""
    bad = []

    def need(obj, key, typ, where):
        if key not in obj:
            bad.append("%s: missing %s" % (where, key))
            return False
        v = obj[key]
        if typ is not None and (not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool)):
            bad.append("%s: %s has type %s" % (where, key, type(obj[key]).__name__))
            return False
        return True
    for k, t in TOP_ALWAYS.items():
        need(r, k, t, "run")
    if r.get("status") == "error":
        need(r, "error", str, "run")
        return bad
    if r.get("status") != "ok":
        bad.append("run: status %r" % r.get("status"))
        return bad
    if r.get("record") == "rebuild":
        return bad + check_rebuild(r, need)
    if r.get("record") == "resync":
        return bad + check_resync(r, need)
    for k, t in TOP_OK.items():
        need(r, k, t, "run")
    if need(r, "member_stats", list, "run"):
        if len(r["member_stats"]) != r.get("members"):
            bad.append("run: %d member stats for %s members" % (len(r["member_stats"]), r.get("members")))
        for i, m in enumerate(r["member_stats"]):
            for k in MEMBER_KEYS:
                need(m, k, None, "member %d" % i)
    f = r.get("fio") or {}
    for k in ("iops", "mib_s"):
        need(f, k, NUM, "fio")
    for d in ("read", "write"):
        if need(f, d, dict, "fio"):
            for k in ("ios", "iops", "mib_s", "lat_us", "lat_hist_ns"):
                need(f[d], k, None, "fio.%s" % d)
            lat = f[d].get("lat_us") or {}
            for k in LAT_KEYS:
                if k not in lat:
                    bad.append("fio.%s.lat_us: missing %s" % (d, k))
                elif f[d].get("ios") and not isinstance(lat[k], NUM):
                    bad.append("fio.%s.lat_us.%s is %r with %s I/Os" % (d, k, lat[k], f[d]["ios"]))
    if not (f.get("read", {}).get("ios") or f.get("write", {}).get("ios")):
        bad.append("fio: no I/O completed")
    t = r.get("trace")
    if t is not None:
        # A trace replay must have issued exactly the converted trace's I/Os.
        for k in ("format", "trace", "records", "speed", "reads", "writes", "span_ms"):
            need(t, k, None, "trace")
        for d, k in (("read", "reads"), ("write", "writes")):
            got = f.get(d, {}).get("ios")
            if isinstance(got, int) and isinstance(t.get(k), int) and got != t[k]:
                bad.append("trace: fio did %d %s, the trace has %d" % (got, k, t[k]))
    b = r.get("device_bound") or {}
    for k in BOUND_KEYS:
        need(b, k, None, "device_bound")
    if b.get("iops") is None and r.get("fraction_of_bound") is None:
        # No bound for this pattern (a trace replay): both are null.
        bad[:] = [x for x in bad if "fraction_of_bound" not in x]
    s = r.get("inflight_samples") or {}
    for k in ("samples", "member_mean", "member_cv_mean", "channel_mean"):
        need(s, k, None, "inflight_samples")
    if r.get("kind") == "rainssd":
        need(r, "rainssd_counters", dict, "run")
    return bad


REBUILD_KEYS = ("seconds", "mib_s_per_member", "sectors_per_member", "member_io", "progress",
                "replace_cmd", "replace_s", "status_end", "failed", "replacement")
FIO_WINDOW_KEYS = ("ios", "iops", "mean_ms", "p50", "p99", "p99.9", "hist_ns")


def check_rebuild(r, need):
    """Problems of an ok rebuild record."""
    bad = []
    for k, t in (("rate", dict), ("fill", dict), ("idle", dict), ("loaded", dict),
                 ("member_data_sectors", int), ("create_cmd", str), ("duration_s", NUM)):
        need(r, k, t, "rebuild")
    for m in ("idle", "loaded"):
        x = r.get(m) or {}
        for k in REBUILD_KEYS:
            need(x, k, None, m)
        if isinstance(x.get("seconds"), NUM) and x["seconds"] <= 0:
            bad.append("%s: rebuild took %s s" % (m, x["seconds"]))
        v = x.get("verify_parity")
        if v is not None and v.get("ok") is False:
            bad.append("%s: parity check failed: %s" % (m, v))
    lw = (r.get("loaded") or {}).get("fio")
    if need(r.get("loaded") or {}, "fio", dict, "loaded"):
        for d in ("read", "write", "all"):
            if need(lw, d, dict, "loaded.fio"):
                for k in FIO_WINDOW_KEYS:
                    need(lw[d], k, None, "loaded.fio.%s" % d)
        if not (lw.get("all") or {}).get("ios"):
            bad.append("loaded.fio: no request completed during the rebuild")
    b = r.get("baseline")
    if b is not None:
        if not (b.get("all") or {}).get("ios"):
            bad.append("baseline: no request completed")
    v = r.get("verify_data")
    if v is not None and v.get("ok") is False:
        bad.append("data verification failed: %s" % v.get("error"))
    return bad


RESYNC_KEYS = ("seconds", "restart_s", "restart_cmd", "first_poll", "status_end", "progress", "span_sectors",
               "member_io")


def check_resync(r, need):
    """Problems of an ok resync record."""
    bad = []
    for k, t in (("create_cmd", str), ("restart_cmd", str), ("load", dict), ("cut", dict), ("remove", dict),
                 ("after_cut", dict), ("resync", dict), ("member_data_sectors", int), ("duration_s", NUM)):
        need(r, k, t, "resync")
    x = r.get("resync") or {}
    for k in RESYNC_KEYS:
        need(x, k, None, "resync")
    if isinstance(x.get("seconds"), NUM) and x["seconds"] < 0:
        bad.append("resync: took %s s" % x["seconds"])
    for k in ("read_sectors", "write_sectors"):
        need(x.get("member_io") or {}, k, int, "resync.member_io")
    cut = r.get("cut") or {}
    for k in ("write_s", "seconds", "exit", "end_after_cut_s", "tables"):
        need(cut, k, None, "cut")
    ld = r.get("load") or {}
    if not ((ld.get("volume") or {}).get("writes") or (ld.get("write") or {}).get("ios")):
        bad.append("load: no write completed before the cut")
    v = r.get("verify_parity")
    if v is not None and v.get("ok") is False:
        bad.append("parity check failed after the resync: %s" % v)
    p = (r.get("after_cut") or {}).get("parity")
    if p is not None and p.get("error"):
        bad.append("after_cut.parity: %s" % p["error"])
    return bad


def check_dir(d, want_runs=None):
    """(problems, number of runs)."""
    problems = []
    files = run_files(d)
    man = load_manifest(d)
    if man is None:
        problems.append("manifest.json missing")
    elif sorted(man.get("runs", [])) != sorted(os.path.basename(p) for p in files):
        problems.append("manifest lists %d runs, directory has %d" % (len(man.get("runs", [])), len(files)))
    for p in files:
        try:
            with open(p) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            problems.append("%s: %s" % (os.path.basename(p), e))
            continue
        problems += ["%s: %s" % (os.path.basename(p), x) for x in check_run(r)]
    if want_runs is not None and len(files) != want_runs:
        problems.append("%d run files, expected %d" % (len(files), want_runs))
    return problems, len(files)
