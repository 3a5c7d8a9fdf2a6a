"""PNG plots from a directory of scripts/bench run files (matplotlib, Agg).

  cdf-<scenario>.png   latency CDF per job, one line per contender (reads
                       solid, writes dashed), repeats pooled
  iops-<scenario>.png  median IOPS per job and contender (whiskers: min-max
                       over repeats), with the device bound of each scheme
  load-<scenario>.png  average in-flight I/Os per member (array region),
                       per job and contender: the balance the CV summarises
  across-iops.png, across-lat.png, across-cv.png
                       when several scenarios run the same jobs (the
                       adaptive set): IOPS, latency (mean, p99, p99.9 of
                       the job's main direction) and member-load CV per
                       scenario, one panel per job (and metric)
"""
import math
import os

from . import report


def _mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def matplotlib_null():
    from matplotlib.ticker import NullFormatter
    return NullFormatter()


def _colors(labels):
    plt = _mpl()
    cmap = plt.get_cmap("tab10")
    return {c: cmap(i % 10) for i, c in enumerate(labels)}


def _cdf(runs, d):
    """Pooled latency histogram of direction d -> (ms values, cumulative)."""
    h = {}
    for r in runs:
        if r.get("status") != "ok":
            continue
        for ns, cnt in r["fio"][d]["lat_hist_ns"]:
            h[ns] = h.get(ns, 0) + cnt
    if not h:
        return None
    tot = float(sum(h.values()))
    xs, ys, acc = [], [], 0
    for ns in sorted(h):
        acc += h[ns]
        xs.append(ns / 1e6)
        ys.append(acc / tot)
    return xs, ys, int(tot)


def _panels(groups):
    """Split the scenario's jobs into panels by their vary variables: the
    first variable on the x axis, one panel per combination of the others."""
    r0 = groups[0][2][next(iter(groups[0][2]))][0]
    keys = r0.get("job_var_order") or list(r0.get("job_vars") or {})
    if len(keys) < 2:
        return [("", [(g[1], g) for g in groups])]
    panels = {}
    order = []
    for g in groups:
        v = next(iter(g[2].values()))[0].get("job_vars") or {}
        pk = " ".join("%s=%s" % (k, v.get(k)) for k in keys[1:])
        if pk not in panels:
            panels[pk] = []
            order.append(pk)
        panels[pk].append((v.get(keys[0], g[1]), g))
    return [(k, panels[k]) for k in order]


def plot_dir(d, png_dir, prefix="", pooled=False):
    plt = _mpl()
    runs = report.load_runs(d)
    if not runs:
        raise SystemExit("no run files in %s" % d)
    os.makedirs(png_dir, exist_ok=True)
    groups = report.group(runs)
    labels = []
    for _, _, _, cons in groups:
        for c in cons:
            if c not in labels:
                labels.append(c)
    col = _colors(labels)
    made = []
    scenarios = []
    for g in groups:
        if g[0] not in scenarios:
            scenarios.append(g[0])
    for scen in scenarios:
        sg = [g for g in groups if g[0] == scen]
        made.append(_plot_cdf(plt, scen, sg, col, png_dir, prefix))
        made.append(_plot_iops(plt, scen, sg, col, png_dir, prefix))
        made.append(_plot_load(plt, scen, sg, col, png_dir, prefix))
    jobs = {}
    for scen, job, _, _ in groups:
        jobs.setdefault(job, []).append(scen)
    shared = [j for j, sc in jobs.items() if len(sc) > 1]
    if shared:
        made += _plot_across(plt, groups, shared, labels, col, png_dir, prefix, pooled)
    return made


def _main_dir(runs):
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return None
    rd = sum(r["fio"]["read"]["ios"] for r in ok)
    wr = sum(r["fio"]["write"]["ios"] for r in ok)
    return "read" if rd >= wr else "write"


def _bars(ax, xlabels, series, col, log=False, bound=None):
    """series: [(label, [value or None per x])]; bound: [value per x].
    A contender without a value gets an 'x' at the bottom (an error run);
    log: a log axis when the values span more than 20x."""
    from matplotlib.ticker import ScalarFormatter
    nb = max(len(series), 1)
    w = 0.8 / nb
    allv = [v for _, vals in series for v in vals if v]
    for ci, (lab, vals) in enumerate(series):
        xs = [i - 0.4 + w * (ci + 0.5) for i in range(len(xlabels))]
        for x, v in zip(xs, vals):
            if v is None:
                ax.text(x, 0.01, "x", ha="center", va="bottom", color=col[lab], fontsize=8,
                        transform=ax.get_xaxis_transform())
        if any(v is not None for v in vals):
            ax.bar([x for x, v in zip(xs, vals) if v is not None], [v for v in vals if v is not None], w,
                   color=col[lab], label=lab)
    if bound:
        for i, b in enumerate(bound):
            if b:
                ax.plot([i - 0.4, i + 0.4], [b, b], color="black", ls=":", lw=1.2)
    ax.set_xticks(range(len(xlabels)))
    ax.set_xticklabels(xlabels, fontsize=7)
    if log and allv and max(allv) / min(allv) > 20:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib_null())
    ax.tick_params(labelsize=7)
    ax.grid(True, axis="y", alpha=0.3)


def _legend(fig, axes, ncol=5):
    h, lab = [], []
    for ax in axes:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    fig.legend(h, lab, loc="lower center", ncol=min(ncol, len(lab)), fontsize=8, frameon=False)


def _save(plt, fig, png_dir, name, made):
    p = os.path.join(png_dir, name)
    fig.savefig(p, dpi=90)
    plt.close(fig)
    made.append(p)


def _plot_across(plt, groups, shared, labels, col, png_dir, prefix, pooled=False):
    made = []
    scen_order = []
    for g in groups:
        if g[0] not in scen_order:
            scen_order.append(g[0])
    by = {(g[0], g[1]): g for g in groups}

    def short(s):
        return s.split("-", 1)[1] if s.count("-") >= 1 and s.startswith(s.split("-")[0] + "-") and \
            len(set(x.split("-")[0] for x in scen_order)) == 1 else s

    def summ(scen, job, c):
        g = by.get((scen, job))
        if not g or c not in g[2]:
            return None
        s = report.summarize(g[2][c], pooled)
        return s if s["n"] else None
    # IOPS
    fig, axes = plt.subplots(1, len(shared), figsize=(max(6.5, 4.2 * len(shared)), 3.8), squeeze=False)
    for ax, job in zip(axes.flat, shared):
        scs = [s for s in scen_order if (s, job) in by]
        series = [(c, [(summ(s, job, c) or {}).get("iops") for s in scs]) for c in labels]
        bound = []
        for s in scs:
            b = [r["device_bound"]["iops"] for rs in by[(s, job)][2].values() for r in rs
                 if r.get("scheme") == "raid5" and r.get("device_bound")]
            bound.append(b[0] if b else None)
        _bars(ax, [short(s) for s in scs], series, col, bound=bound)
        ax.set_title("%s: IOPS (dotted: RAID-5 device bound)" % job, fontsize=9)
        ax.set_ylabel("IOPS", fontsize=8)
    _legend(fig, axes.flat)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    _save(plt, fig, png_dir, "%sacross-iops.png" % prefix, made)
    # Latency: mean, p99, p99.9, p99.99 of the job's main direction
    mets = ["mean", "p99", "p99.9", "p99.99"]
    fig, axes = plt.subplots(len(shared), len(mets), figsize=(15, 3.2 * len(shared) + 0.9), squeeze=False)
    for row, job in enumerate(shared):
        scs = [s for s in scen_order if (s, job) in by]
        d = _main_dir([r for s in scs for rs in by[(s, job)][2].values() for r in rs]) or "write"
        for colm, m in enumerate(mets):
            ax = axes[row][colm]
            series = []
            for c in labels:
                vals = []
                for s in scs:
                    sm = summ(s, job, c)
                    v = sm.get(d) if sm else None
                    vals.append(v[m] / 1000.0 if v and v.get(m) is not None else None)
                series.append((c, vals))
            _bars(ax, [short(s) for s in scs], series, col, log=True)
            ax.set_title("%s: %s latency, %s (ms)" % (job, d, m), fontsize=9)
    _legend(fig, axes.flat)
    fig.suptitle("latency per scenario, %s (x: no data, the contender failed)" % (
        "repeats pooled" if pooled else "median of repeats"), fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    _save(plt, fig, png_dir, "%sacross-lat.png" % prefix, made)
    # CV of the member load
    fig, axes = plt.subplots(1, len(shared), figsize=(max(6.5, 4.2 * len(shared)), 3.6), squeeze=False)
    for ax, job in zip(axes.flat, shared):
        scs = [s for s in scen_order if (s, job) in by]
        series = [(c, [(summ(s, job, c) or {}).get("cv") for s in scs]) for c in labels]
        _bars(ax, [short(s) for s in scs], series, col)
        ax.set_title("%s: CV of avg in-flight across members" % job, fontsize=9)
    _legend(fig, axes.flat)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    _save(plt, fig, png_dir, "%sacross-cv.png" % prefix, made)
    return made


def _grid(n, w=4.2, h=3.2, maxcol=4):
    ncol = min(n, maxcol)
    nrow = int(math.ceil(n / float(ncol)))
    # At least 8 in wide: a one-panel figure still has room for its title and legend.
    return nrow, ncol, (max(w * ncol, 8.0), h * nrow + 0.6)


def _plot_cdf(plt, scen, sg, col, png_dir, prefix):
    nrow, ncol, size = _grid(len(sg))
    fig, axes = plt.subplots(nrow, ncol, figsize=size, squeeze=False)
    for ax in axes.flat[len(sg):]:
        ax.axis("off")
    for ax, (_, job, by_con, cons) in zip(axes.flat, sg):
        ymax = 0.5
        for c in cons:
            for d, ls in (("read", "-"), ("write", "--")):
                cd = _cdf(by_con[c], d)
                if not cd:
                    continue
                xs, ys, n = cd
                ax.step(xs, ys, where="post", ls=ls, color=col[c], lw=1.3,
                        label="%s %s" % (c, d))
                ymax = max(ymax, min(0.9999, 1 - 1.0 / max(n, 2)))
        ax.set_xscale("log")
        ax.set_yscale("logit")
        ax.set_ylim(0.01, ymax)
        ticks = [t for t in (0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999) if t <= ymax + 1e-12]
        ax.set_yticks(ticks)
        ax.set_yticklabels(["%g%%" % (100 * t) for t in ticks])
        ax.yaxis.set_minor_formatter(matplotlib_null())
        ax.set_title(job, fontsize=9)
        ax.set_xlabel("latency (ms)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
    h, lab = [], []
    for ax in axes.flat:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    fig.legend(h, lab, loc="lower center", ncol=min(4, len(lab)), fontsize=8, frameon=False)
    fig.suptitle("%s: latency CDF (solid: reads, dashed: writes; repeats pooled)" % scen, fontsize=10)
    fig.tight_layout(rect=(0, 0.04 + 0.025 * math.ceil(len(lab) / 4.0), 1, 0.96))
    p = os.path.join(png_dir, "%scdf-%s.png" % (prefix, scen))
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def _plot_iops(plt, scen, sg, col, png_dir, prefix):
    panels = _panels(sg)
    nrow, ncol, size = _grid(len(panels), w=max(6.5 if len(panels) == 1 else 4.5,
                                                 0.9 * max(len(p[1]) for p in panels) + 2), maxcol=2)
    fig, axes = plt.subplots(nrow, ncol, figsize=size, squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    all_cons = []
    for _, _, _, cons in sg:
        for c in cons:
            if c not in all_cons:
                all_cons.append(c)
    for ax, (pname, items) in zip(axes.flat, panels):
        nb = len(all_cons)
        w = 0.8 / max(nb, 1)
        for xi, (xlab, (_, job, by_con, cons)) in enumerate(items):
            for ci, c in enumerate(all_cons):
                if c not in by_con:
                    continue
                s = report.summarize(by_con[c])
                x = xi - 0.4 + w * (ci + 0.5)
                if not s["n"]:
                    ax.text(x, 0, "x", ha="center", va="bottom", color=col[c], fontsize=8)
                    continue
                vals = [r["fio"]["iops"] for r in by_con[c] if r.get("status") == "ok"]
                ax.bar(x, s["iops"], w, color=col[c], label=c if xi == 0 else None)
                if len(vals) > 1:
                    ax.vlines(x, min(vals), max(vals), color="black", lw=0.8)
                ax.plot([x - w / 2, x + w / 2], [s["bound"]] * 2, color="black", lw=1.2, ls=":")
        ax.set_xticks(range(len(items)))
        ax.set_xticklabels([str(x) for x, _ in items], fontsize=8, rotation=0 if len(items) < 8 else 45)
        ax.set_ylabel("IOPS", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_title(pname or scen, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    h, lab = [], []
    for ax in axes.flat:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    fig.legend(h, lab, loc="lower center", ncol=min(5, len(lab)), fontsize=8, frameon=False)
    fig.suptitle("%s: IOPS, median of repeats (whisker: min-max; dotted: device bound; x: error)" % scen,
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    p = os.path.join(png_dir, "%siops-%s.png" % (prefix, scen))
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def _plot_load(plt, scen, sg, col, png_dir, prefix):
    nrow, ncol, size = _grid(len(sg), w=3.8, h=2.8)
    fig, axes = plt.subplots(nrow, ncol, figsize=size, squeeze=False)
    for ax in axes.flat[len(sg):]:
        ax.axis("off")
    for ax, (_, job, by_con, cons) in zip(axes.flat, sg):
        okc = [c for c in cons if any(r.get("status") == "ok" for r in by_con[c])]
        if not okc:
            ax.set_title(job + " (no data)", fontsize=9)
            continue
        n = next(r for r in by_con[okc[0]] if r.get("status") == "ok")["members"]
        w = 0.8 / len(okc)
        top = 0.0
        for ci, c in enumerate(okc):
            ok = [r for r in by_con[c] if r.get("status") == "ok"]
            vals = [report.med(r["member_stats"][m]["avg_inflight"] for r in ok) for m in range(n)]
            cvv = report.med(r["member_load_cv"] for r in ok)
            ax.bar([m - 0.4 + w * (ci + 0.5) for m in range(n)], vals, w, color=col[c],
                   label="%s" % c)
            top = max([top] + vals)
            ax.text(0.99, 0.97 - 0.07 * ci, "CV %.2f" % cvv, transform=ax.transAxes, ha="right",
                    va="top", fontsize=7, color=col[c])
        # Room above the bars for the CV labels.
        ax.set_ylim(0, (top or 1) * (1.15 + 0.1 * len(okc)))
        ax.set_xticks(range(n))
        ax.set_xlabel("member", fontsize=8)
        ax.set_ylabel("avg in-flight", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_title(job, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    h, lab = [], []
    for ax in axes.flat:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    fig.legend(h, lab, loc="lower center", ncol=min(5, len(lab)), fontsize=8, frameon=False)
    fig.suptitle("%s: average in-flight I/Os per member (median of repeats)" % scen, fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    p = os.path.join(png_dir, "%sload-%s.png" % (prefix, scen))
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p
