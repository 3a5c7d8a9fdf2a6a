"""Scenario, set and contender configuration (INI files under bench/).

bench/contenders.conf   one section per contender label
bench/scenarios/X.conf  one scenario: channel model, disturbances, chunk,
                        contenders, jobs (see bench/scenarios/README)
bench/sets/X.set        scenario names, one per line
"""
import configparser
import itertools
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
BENCH_DIR = os.path.join(REPO, "bench")
FIO_DIR = os.path.join(REPO, "fio-jobs")

KINDS = ("rainssd", "md-raid5", "md-raid10", "dm-raid5", "dm-stripe")
# jobs: fio jobs on a healthy volume (the default); rebuild: a member fails
# and is rebuilt onto a spare channel, idle and under a load job; resync: the
# power is cut under a write load and the volume, brought back, resyncs.
SCENARIO_KINDS = ("jobs", "rebuild", "resync")
SCHEME = {"rainssd": "raid5", "md-raid5": "raid5", "dm-raid5": "raid5", "md-raid10": "raid10",
          "dm-stripe": "raid0"}
# The schemes a device bound is computed for.
SCHEMES = ("raid5", "raid10", "raid0")


class ConfigError(Exception):
    pass


def _parser():
    p = configparser.ConfigParser(inline_comment_prefixes=("#", ";"),
                                  interpolation=None, strict=False)
    p.optionxform = str  # keep the case: upper-case job keys are fio env vars
    return p


def size_bytes(text):
    """'4k', '16m', '512', '1g' -> bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[iI]?[bB]?\s*", str(text))
    if not m:
        raise ConfigError("bad size %r" % text)
    mult = {"": 1, "k": 1024, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    return int(m.group(1)) * mult


def _words(s):
    return s.split() if s else []


def load_contenders(path=None, extra=None):
    """label -> dict(label, kind, scheme, options[list])."""
    p = _parser()
    p.read(path or os.path.join(BENCH_DIR, "contenders.conf"))
    out = {}
    sections = [(s, p[s]) for s in p.sections()]
    if extra is not None:
        sections += [(s.split(None, 1)[1], extra[s]) for s in extra.sections()
                     if s.startswith("contender ")]
    for label, sec in sections:
        kind = sec.get("kind", "").strip()
        if kind not in KINDS:
            raise ConfigError("contender %s: kind must be one of %s" % (label, ", ".join(KINDS)))
        module = sec.get("module", "").strip() or None
        if module is not None:
            if kind != "rainssd":
                raise ConfigError("contender %s: module is for rainssd contenders" % label)
            parse_module(module, "contender %s" % label)
        out[label] = {"label": label, "kind": kind, "scheme": SCHEME[kind],
                      "options": _words(sec.get("options", "")), "module": module}
    return out


def parse_module(text, what="module"):
    """A contender's `module`: 'git:REV' (dm-rainssd built from that commit of
    this repository) or 'dir:PATH' (a directory holding dm-rainssd.ko) ->
    (kind, value)."""
    kind, sep, val = str(text).partition(":")
    kind, val = kind.strip().lower(), val.strip()
    if not sep or kind not in ("git", "dir") or not val or any(c.isspace() for c in val):
        raise ConfigError("%s: module wants git:REV or dir:PATH, got %r" % (what, text))
    return kind, val


def _member_list(text, n, what):
    """'2:0.6 3:0.5' -> {2: '0.6', 3: '0.5'}; members must exist."""
    out = {}
    for w in _words(text):
        m, _, v = w.partition(":")
        try:
            i = int(m)
        except ValueError:
            raise ConfigError("%s: bad member %r" % (what, w))
        if not 0 <= i < n:
            raise ConfigError("%s: member %d out of range" % (what, i))
        out[i] = v
    return out


def _expand_job(name, sec):
    """A [job NAME] section. 'vary.VAR = w1 w2 ...' makes one job per
    combination (cartesian product, in key order); a word is 'value' or
    'label=value': VAR=value goes to the fio environment and {VAR} in the
    job name becomes the label (or the value)."""
    vary = []
    for k, v in sec.items():
        if k.startswith("vary."):
            words = [w.partition("=") for w in _words(v)]
            vary.append((k[5:], [(a, c) if b else (a, a) for a, b, c in words]))
    base = {k: v for k, v in sec.items() if not k.startswith("vary.")}
    if not vary:
        return [(name, base, {})]
    jobs = []
    for combo in itertools.product(*[vals for _, vals in vary]):
        d = dict(base)
        full = name
        labels = {}
        for (var, _), (label, value) in zip(vary, combo):
            d[var] = value
            labels[var] = label
            full = full.replace("{%s}" % var, label)
        jobs.append((full, d, labels))
    return jobs


TRACE_FORMATS = ("msr", "systor", "tencent", "disksim", "blktrace")


def parse_trace(text, what="--trace"):
    """'FORMAT:PATH' -> (format, path); FORMAT is a rainssd-trace input format."""
    fmt, sep, path = str(text).partition(":")
    fmt = fmt.strip().lower()
    if not sep or fmt not in TRACE_FORMATS or not path.strip():
        raise ConfigError("%s: want FORMAT:PATH with FORMAT one of %s, got %r"
                          % (what, ", ".join(TRACE_FORMATS), text))
    return fmt, path.strip()


def _job_trace(full, d):
    """A trace-replay job: `trace = FORMAT:PATH` (PATH relative to the
    repository; the --trace option of scripts/bench replaces it) or
    `trace = required` (--trace must be given), `trace_records = N` (replay
    the first N records; 0 = all), `trace_speed = X` (X times the trace's
    own speed; 0 = as fast as IODEPTH allows). The trace is converted with
    userspace-tools/rainssd-trace and folded into the job's SIZE."""
    t = d.get("trace", "").strip()
    if not t:
        for k in ("trace_records", "trace_speed"):
            if k in d:
                raise ConfigError("job %s: %s without trace" % (full, k))
        return None
    fmt, path = (None, None) if t == "required" else parse_trace(t, "job %s: trace" % full)
    try:
        records = int(d.get("trace_records", "0"))
        speed = float(d.get("trace_speed", "1"))
    except ValueError as e:
        raise ConfigError("job %s: %s" % (full, e))
    if records < 0 or speed < 0:
        raise ConfigError("job %s: trace_records and trace_speed must be >= 0" % full)
    return {"format": fmt, "path": path, "records": records, "speed": speed}


def _rebuild_section(name, sec, n, jobs, contenders):
    """The [rebuild] section of a rebuild scenario (bench/scenarios/rebuild-base.conf
    describes the keys)."""
    what = "scenario %s: [rebuild]" % name
    try:
        fail = int(sec.get("fail", "1"))
        baseline_s = int(sec.get("baseline_s", "20"))
        timeout_s = int(sec.get("timeout_s", "900"))
        settle_s = float(sec.get("settle_s", "2"))
        fill_qd = int(sec.get("fill_qd", "4"))
    except ValueError as e:
        raise ConfigError("%s: %s" % (what, e))
    if not 0 <= fail < n:
        raise ConfigError("%s: fail must be a member index 0 to %d" % (what, n - 1))
    if baseline_s < 0 or timeout_s < 10 or settle_s < 0 or fill_qd < 1:
        raise ConfigError("%s: need baseline_s >= 0, timeout_s >= 10, settle_s >= 0, fill_qd >= 1" % what)
    rates = []
    for w in _words(sec.get("rates", "default=1000:200000")):
        label, eq, mm = w.partition("=")
        lo, colon, hi = mm.partition(":")
        try:
            if not eq or not colon or not label:
                raise ValueError
            lo, hi = int(lo), int(hi)
        except ValueError:
            raise ConfigError("%s: rates wants LABEL=MIN:MAX (KiB/s per member), got %r" % (what, w))
        if not 0 < lo <= hi:
            raise ConfigError("%s: rate %s needs 0 < min <= max" % (what, label))
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", label) or label in [r["label"] for r in rates]:
            raise ConfigError("%s: rate label %r is not a unique word" % (what, label))
        rates.append({"label": label, "min_kib_s": lo, "max_kib_s": hi})
    if not rates:
        raise ConfigError("%s: no rates" % what)
    load = sec.get("load", "").strip() or jobs[0]["name"]
    if load not in [j["name"] for j in jobs]:
        raise ConfigError("%s: load names no job (%s)" % (what, load))
    ljob = [j for j in jobs if j["name"] == load][0]
    if ljob["trace"] or ljob["prefill"]:
        raise ConfigError("%s: the load job must be a plain fio job (no trace, no prefill)" % what)
    verify = _words(sec.get("verify", "parity data"))
    for v in verify:
        if v not in ("parity", "data"):
            raise ConfigError("%s: verify words are parity and data, got %r" % (what, v))
    fill_bs = sec.get("fill_bs", "1m").strip()
    size_bytes(fill_bs)
    for c in contenders:
        if c["kind"] not in ("rainssd", "md-raid5"):
            raise ConfigError("%s: contender %s: a rebuild runs on rainssd and md-raid5 only"
                              % (what, c["label"]))
    return {"fail": fail, "rates": rates, "load": load, "baseline_s": baseline_s,
            "timeout_s": timeout_s, "settle_s": settle_s, "fill_bs": fill_bs, "fill_qd": fill_qd,
            "verify": verify}


def _resync_section(name, sec, jobs, contenders):
    """The [resync] section of a resync scenario (bench/scenarios/resync-4.conf
    describes the keys)."""
    what = "scenario %s: [resync]" % name
    try:
        write_s = int(sec.get("write_s", "20"))
        timeout_s = int(sec.get("timeout_s", "900"))
        stop_s = int(sec.get("stop_s", "120"))
    except ValueError as e:
        raise ConfigError("%s: %s" % (what, e))
    if write_s < 1 or timeout_s < 10 or stop_s < 5:
        raise ConfigError("%s: need write_s >= 1, timeout_s >= 10, stop_s >= 5" % what)
    load = sec.get("load", "").strip() or jobs[0]["name"]
    if load not in [j["name"] for j in jobs]:
        raise ConfigError("%s: load names no job (%s)" % (what, load))
    ljob = [j for j in jobs if j["name"] == load][0]
    if ljob["trace"] or ljob["prefill"]:
        raise ConfigError("%s: the load job must be a plain fio job (no trace, no prefill)" % what)
    verify = _words(sec.get("verify", "cut parity"))
    for v in verify:
        if v not in ("cut", "parity"):
            raise ConfigError("%s: verify words are cut and parity, got %r" % (what, v))
    for c in contenders:
        if c["kind"] not in ("rainssd", "md-raid5"):
            raise ConfigError("%s: contender %s: a resync runs on rainssd and md-raid5 only"
                              % (what, c["label"]))
    return {"load": load, "write_s": write_s, "timeout_s": timeout_s, "stop_s": stop_s,
            "verify": verify}


def load_scenario(name, bench_dir=None):
    """Read bench/scenarios/NAME.conf (after its 'base', if any)."""
    bench_dir = bench_dir or BENCH_DIR
    sdir = os.path.join(bench_dir, "scenarios")
    path = os.path.join(sdir, name + ".conf")
    if not os.path.isfile(path):
        raise ConfigError("no scenario %s (%s)" % (name, path))
    files = [path]
    probe = _parser()
    probe.read(path)
    seen = {name}
    while probe.has_option("scenario", "base"):
        b = probe.get("scenario", "base").strip()
        if b in seen:
            raise ConfigError("scenario %s: base loop at %s" % (name, b))
        seen.add(b)
        bp = os.path.join(sdir, b + ".conf")
        if not os.path.isfile(bp):
            raise ConfigError("scenario %s: no base %s" % (name, b))
        files.insert(0, bp)
        probe = _parser()
        probe.read(bp)
    p = _parser()
    p.read(files)
    sc = p["scenario"] if p.has_section("scenario") else {}
    ch = p["channel"] if p.has_section("channel") else {}
    di = p["disturb"] if p.has_section("disturb") else {}
    try:
        n = int(sc.get("members", "4"))
        chunk_kb = int(sc.get("chunk_kb", "64"))
        member_mb = int(sc.get("member_mb", "256"))
        lat = int(ch.get("lat_us", "2000"))
        latlist = [int(x) for x in ch.get("lat_list", "").replace(",", " ").split()]
        qd = int(ch.get("qd", "2"))
        queue = int(ch.get("queue", "256"))
        wbt = ch.get("wbt_lat_us", "").strip()
        wbt = int(wbt) if wbt else None
        write_extra_ms = int(ch.get("write_extra_ms", "0"))
        bg_mb = int(ch.get("bg_mb", "64"))
        memory_backed = int(ch.get("memory_backed", "1"))
        foreign = {}
        for i, v in _member_list(di.get("foreign", ""), n, "foreign").items():
            w = [int(x) for x in (v or "16").split(":")]
            if not 1 <= len(w) <= 2 or w[0] < 1 or (len(w) == 2 and not 0 <= w[1] <= 100):
                raise ConfigError("foreign: want member:queue_depth[:read_pct], got %r" % v)
            foreign[i] = {"qd": w[0], "read_pct": w[1] if len(w) == 2 else 100}
    except ValueError as e:
        raise ConfigError("scenario %s: %s" % (name, e))
    device = ch.get("device", "null_blk").strip()
    if device not in ("null_blk", "brd"):
        raise ConfigError("scenario %s: device must be null_blk or brd" % name)
    member_dev = ch.get("member_dev", "linear").strip()
    if member_dev not in ("linear", "channel"):
        raise ConfigError("scenario %s: member_dev must be linear or channel" % name)
    kind = sc.get("kind", "jobs").strip()
    if kind not in SCENARIO_KINDS:
        raise ConfigError("scenario %s: kind must be one of %s" % (name, ", ".join(SCENARIO_KINDS)))
    if n < 3:
        raise ConfigError("scenario %s: members must be >= 3" % name)
    if bg_mb < 0:
        raise ConfigError("scenario %s: bg_mb must be >= 0" % name)
    if queue < 0 or (queue and queue < qd):
        raise ConfigError("scenario %s: queue must be 0 or at least qd" % name)
    if wbt is not None and wbt < 0:
        raise ConfigError("scenario %s: wbt_lat_us must be >= 0" % name)
    if memory_backed not in (0, 1):
        raise ConfigError("scenario %s: memory_backed must be 0 or 1" % name)
    lats = [latlist[i] if i < len(latlist) else lat for i in range(n)]
    slow = {i: float(v or 2) for i, v in _member_list(di.get("slow", ""), n, "slow").items()}
    for i, f in slow.items():
        lats[i] = int(round(lats[i] * f))
    if device == "brd" and (any(lats) or lat or queue or wbt is not None or not memory_backed):
        # brd (the RAM disk) has no latency, queue, writeback throttling or
        # dataless mode to set: a scenario that asks for them wants null_blk.
        raise ConfigError("scenario %s: device brd needs lat_us 0, queue 0, memory_backed 1 "
                          "and no wbt_lat_us" % name)
    bg = {i: float(v or 0.5) for i, v in _member_list(di.get("background", ""), n, "background").items()}
    stalls = {}
    for i, v in _member_list(di.get("stall", ""), n, "stall").items():
        try:
            s_ms, p_ms = [int(x) for x in v.split(":")]
        except ValueError:
            raise ConfigError("stall: want member:stall_ms:period_ms, got %r" % v)
        if not 0 < s_ms < p_ms:
            raise ConfigError("stall: need 0 < stall_ms < period_ms")
        stalls[i] = {"stall_ms": s_ms, "period_ms": p_ms}
    contenders_all = load_contenders(extra=p)
    labels = _words(sc.get("contenders", "rainssd-count md-raid5"))
    for c in labels:
        if c not in contenders_all:
            raise ConfigError("scenario %s: unknown contender %s" % (name, c))
    jobs = []
    wanted = _words(sc.get("jobs", ""))
    sections = {s.split(None, 1)[1]: p[s] for s in p.sections() if s.startswith("job ")}
    for jname in wanted or list(sections):
        if jname not in sections:
            raise ConfigError("scenario %s: no [job %s]" % (name, jname))
        for full, d, vars_ in _expand_job(jname, sections[jname]):
            fio = d.pop("fio", None)
            if not fio:
                raise ConfigError("job %s: no fio file" % full)
            fpath = os.path.join(FIO_DIR, fio)
            if not os.path.isfile(fpath):
                raise ConfigError("job %s: no fio-jobs/%s" % (full, fio))
            prefill = d.pop("prefill", "no").strip().lower() in ("yes", "1", "true")
            env = {k: v for k, v in d.items() if k.isupper()}
            jobs.append({"name": full, "fio": fio, "env": env, "prefill": prefill,
                         "vars": vars_, "trace": _job_trace(full, d)})
    if not jobs:
        raise ConfigError("scenario %s: no jobs" % name)
    if (bg or foreign) and not bg_mb:
        raise ConfigError("scenario %s: a background load or foreign tenant needs bg_mb > 0" % name)
    if member_dev == "channel" and (write_extra_ms or stalls or kind != "jobs"):
        raise ConfigError("scenario %s: member_dev channel has no dm-linear member to delay, stall, "
                          "fail or replace (write_extra_ms, stall, kind rebuild/resync)" % name)
    degraded = sc.get("degraded", "").strip()
    if degraded:
        try:
            degraded = int(degraded)
        except ValueError:
            raise ConfigError("scenario %s: degraded must be a member index" % name)
        if not 0 <= degraded < n:
            raise ConfigError("scenario %s: degraded must be a member index 0 to %d" % (name, n - 1))
        if kind != "jobs":
            raise ConfigError("scenario %s: degraded is for kind jobs" % name)
    else:
        degraded = None
    rebuild = None
    if kind == "rebuild":
        rebuild = _rebuild_section(name, p["rebuild"] if p.has_section("rebuild") else {}, n, jobs,
                                   [contenders_all[c] for c in labels])
    resync = None
    if kind == "resync":
        resync = _resync_section(name, p["resync"] if p.has_section("resync") else {}, jobs,
                                 [contenders_all[c] for c in labels])
    return {
        "name": name,
        "kind": kind,
        "rebuild": rebuild,
        "resync": resync,
        "description": sc.get("description", ""),
        "members": n,
        "member_mb": member_mb,
        "chunk_kb": chunk_kb,
        "contenders": [contenders_all[c] for c in labels],
        "channel": {"lat_us": lats, "base_lat_us": lat, "qd": qd, "queue": queue,
                    "write_extra_ms": write_extra_ms, "bg_mb": bg_mb, "member_dev": member_dev,
                    "wbt_lat_us": wbt, "memory_backed": memory_backed,
                    "device": device},
        "disturb": {"slow": slow, "background": bg, "stall": stalls, "foreign": foreign},
        "jobs": jobs,
        "runtime": int(sc.get("runtime", "15")),
        "tier_mb": int(sc.get("tier_mb", "0")),
        "degraded": degraded,
        "files": [os.path.relpath(f, REPO) for f in files],
    }


def load_set(name, bench_dir=None):
    """Scenario names of bench/sets/NAME.set (or NAME as a single scenario)."""
    bench_dir = bench_dir or BENCH_DIR
    path = os.path.join(bench_dir, "sets", name + ".set")
    if not os.path.isfile(path):
        if os.path.isfile(os.path.join(bench_dir, "scenarios", name + ".conf")):
            return [name]
        raise ConfigError("no set or scenario named %s" % name)
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


def list_sets(bench_dir=None):
    bench_dir = bench_dir or BENCH_DIR
    d = os.path.join(bench_dir, "sets")
    return sorted(f[:-4] for f in os.listdir(d) if f.endswith(".set"))
