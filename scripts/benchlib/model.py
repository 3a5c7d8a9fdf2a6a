"""The device bound: the best IOPS the emulated channels allow for one I/O
pattern under one redundancy scheme.

Everything is in 512-byte sectors and milliseconds. The formulas are
documented in docs/benchmarks.md ("Device bound"):

  member i serves cap_i = qd_i / t_i I/Os per second (null_blk completes each
  request t_i after submission and runs up to qd_i at once), less the share a
  stall takes (S/P of the time) and less the configured background rate;
  a user I/O puts load_i member I/Os on member i on average (enumerated
  exactly over every start offset the pattern can produce, one layout period
  long);
  X_channels = min_i cap_i / load_i
  X_qd       = QD / E[path], path = the service time of the I/O's critical
               path: pre-reads, then writes; each step lasts as long as its
               slowest member, ceil(I/Os on it / qd_i) x t_i
  bound      = min(X_channels, X_qd)
"""
import math


def raid5_write_stripes(start, length, n, chunk):
    """Split a write into stripes and pick, per stripe, the parity update a
    RAID-5 implementation would need the fewest member I/Os for (ties: fewer
    pre-read sectors, then RMW). Returns a list of (read_members,
    write_members) per stripe (md left-symmetric layout, as rainssd)."""
    dw = n - 1
    out = []
    pos, end = start, start + length
    while pos < end:
        s = pos // (chunk * dw)
        s_end = min(end, (s + 1) * chunk * dw)
        written = {}
        p = pos
        while p < s_end:
            k = (p // chunk) % dw
            a = p % chunk
            b = min(chunk, a + (s_end - p))
            written[k] = (a, b)
            p += b - a
        parity = (n - 1) - (s % n)

        def member(k, parity=parity):
            return (parity + 1 + k) % n

        writes = [member(k) for k in sorted(written)] + [parity]
        if len(written) == dw and all(a == 0 and b == chunk for a, b in written.values()):
            out.append(([], writes))
        else:
            r0 = min(a for a, _ in written.values())
            r1 = max(b for _, b in written.values())
            rows = r1 - r0
            rmw_reads = [member(k) for k in sorted(written)] + [parity]
            rmw_sec = sum(b - a for a, b in written.values()) + rows
            rcw_reads, rcw_sec = [], 0
            for k in range(dw):
                a, b = written.get(k, (0, 0))
                miss = rows - max(0, min(b, r1) - max(a, r0))
                if miss:
                    rcw_reads.append(member(k))
                    rcw_sec += miss
            if (len(rcw_reads), rcw_sec) < (len(rmw_reads), rmw_sec):
                out.append((rcw_reads, writes))
            else:
                out.append((rmw_reads, writes))
        pos = s_end
    return out


def raid5_read_members(start, length, n, chunk):
    """Members a RAID-5 read touches (one I/O per chunk touched)."""
    dw = n - 1
    out = []
    pos, end = start, start + length
    while pos < end:
        s = pos // (chunk * dw)
        k = (pos // chunk) % dw
        parity = (n - 1) - (s % n)
        out.append((parity + 1 + k) % n)
        pos = (pos // chunk + 1) * chunk
    return out


def raid10_chunks(start, length, n, chunk):
    """For md RAID-10 near, 2 copies: the two members of every chunk touched."""
    out = []
    pos, end = start, start + length
    while pos < end:
        j = pos // chunk
        out.append(((2 * j) % n, (2 * j + 1) % n))
        pos = (j + 1) * chunk
    return out


def raid0_chunks(start, length, n, chunk):
    """Members a RAID-0 (dm-stripe) I/O touches, one I/O per chunk touched."""
    out = []
    pos, end = start, start + length
    while pos < end:
        j = pos // chunk
        out.append(j % n)
        pos = (j + 1) * chunk
    return out


def _step_time(counts, svc, qd, extra):
    """Time of one step in which member m serves counts[m] I/Os at once:
    ceil(count / qd) rounds of its service time, the slowest member."""
    t = 0.0
    for m, c in counts.items():
        if c > 0:
            t = max(t, math.ceil(c / float(qd[m]) - 1e-9) * svc[m] + extra[m])
    return t


def _op_cost(scheme, is_write, start, length, n, chunk, svc_r, svc_w, qd, extra):
    """(load vector, critical path in ms) of one user I/O."""
    load = [0.0] * n
    reads, writes = {}, {}
    if scheme == "raid5":
        if is_write:
            # Stripes of one request proceed in parallel: all pre-reads, then
            # all writes.
            for rd, wr in raid5_write_stripes(start, length, n, chunk):
                for m in rd:
                    reads[m] = reads.get(m, 0) + 1
                for m in wr:
                    writes[m] = writes.get(m, 0) + 1
        else:
            for m in raid5_read_members(start, length, n, chunk):
                reads[m] = reads.get(m, 0) + 1
        for d in (reads, writes):
            for m, c in d.items():
                load[m] += c
    elif scheme == "raid10":
        for a, b in raid10_chunks(start, length, n, chunk):
            if is_write:
                writes[a] = writes.get(a, 0) + 1
                writes[b] = writes.get(b, 0) + 1
                load[a] += 1
                load[b] += 1
            else:
                # Reads: the load splits evenly over the two copies; the path
                # takes the faster copy (an optimistic bound).
                load[a] += 0.5
                load[b] += 0.5
                m = a if svc_r[a] + extra[a] <= svc_r[b] + extra[b] else b
                reads[m] = reads.get(m, 0) + 1
    elif scheme == "raid0":
        for m in raid0_chunks(start, length, n, chunk):
            d = writes if is_write else reads
            d[m] = d.get(m, 0) + 1
            load[m] += 1
    else:
        raise ValueError("unknown scheme %r" % scheme)
    path = _step_time(reads, svc_r, qd, extra) + _step_time(writes, svc_w, qd, extra)
    return load, path


def device_bound(scheme, n, chunk, pattern, channel):
    """The bound for one scheme, pattern and channel model.

    pattern: dict with read_frac (0..1), bs (sectors), align (sectors),
        offset (sectors), qd (outstanding user I/Os).
    channel: dict with lat_ms (list, per member service time), qd (list),
        write_extra_ms (float, added to writes without occupying the
        channel), cap_factor (list, share of time the member can serve),
        bg_iops (list, background I/Os per second taken from the member),
        stall_wait_ms (list, expected extra wait of a member I/O from stalls).
    """
    bs, align, off = pattern["bs"], pattern["align"], pattern.get("offset", 0)
    lat = channel["lat_ms"]
    svc_r = list(lat)
    svc_w = [t + channel.get("write_extra_ms", 0.0) for t in lat]
    extra = channel.get("stall_wait_ms", [0.0] * n)
    period = n * (n - 1) * chunk * 2
    period = period * align // math.gcd(period, align)
    count = period // align
    mixes = []
    rf = pattern["read_frac"]
    if rf > 0:
        mixes.append((False, rf))
    if rf < 1:
        mixes.append((True, 1 - rf))
    load = [0.0] * n
    path = 0.0
    for is_write, w in mixes:
        for i in range(count):
            lo, p = _op_cost(scheme, is_write, off + i * align, bs, n, chunk, svc_r, svc_w,
                             channel["qd"], extra)
            for m in range(n):
                load[m] += w * lo[m] / count
            path += w * p / count
    caps = []
    for i in range(n):
        c = channel["qd"][i] / (lat[i] / 1000.0) * channel.get("cap_factor", [1.0] * n)[i]
        c -= channel.get("bg_iops", [0.0] * n)[i]
        caps.append(max(c, 1e-9))
    x_chan = min(caps[i] / load[i] for i in range(n) if load[i] > 0)
    x_qd = pattern["qd"] / (path / 1000.0)
    return {
        "scheme": scheme,
        "iops": min(x_chan, x_qd),
        "limit": "channels" if x_chan <= x_qd else "queue-depth",
        "iops_channels": x_chan,
        "iops_qd": x_qd,
        "member_ios_per_io": sum(load),
        "member_load": load,
        "path_ms": path,
        "member_capacity_iops": caps,
    }


def selftest():
    """Hand-checked cases; raises AssertionError on a mismatch."""
    # 4 members, 4 KiB chunks: a 4 KiB write is RMW (2 reads + 2 writes).
    st = raid5_write_stripes(0, 8, 4, 8)
    assert len(st) == 1 and len(st[0][0]) == 2 and len(st[0][1]) == 2, st
    # A 12 KiB stripe-aligned write is a full stripe: 4 writes, no reads.
    st = raid5_write_stripes(24, 24, 4, 8)
    assert st == [([], [0, 1, 3, 2])] or (not st[0][0] and len(st[0][1]) == 4), st
    # 8 KiB aligned to the stripe on 3+1: RMW 3 reads vs RCW 1 read -> RCW.
    st = raid5_write_stripes(0, 16, 4, 8)
    assert len(st[0][0]) == 1 and len(st[0][1]) == 3, st
    # Layout: stripe 0 parity on member 3, stripe 1 on member 2.
    assert raid5_read_members(0, 8, 4, 8) == [0]
    assert raid5_read_members(24, 8, 4, 8) == [3]
    # RAID-10 near on 4: chunk 0 on 0/1, chunk 1 on 2/3, chunk 2 on 0/1.
    assert raid10_chunks(0, 24, 4, 8) == [(0, 1), (2, 3), (0, 1)]
    ch = {"lat_ms": [5.0] * 4, "qd": [1] * 4}
    # RAID-5 4 KiB random writes: 4 member I/Os, 200/s per member.
    b = device_bound("raid5", 4, 8, {"read_frac": 0, "bs": 8, "align": 8, "qd": 16}, ch)
    assert abs(b["member_ios_per_io"] - 4) < 1e-9 and abs(b["iops"] - 200) < 1e-6, b
    # QD1: path = read + write = 10 ms -> 100 IOPS.
    b = device_bound("raid5", 4, 8, {"read_frac": 0, "bs": 8, "align": 8, "qd": 1}, ch)
    assert abs(b["iops"] - 100) < 1e-6 and b["limit"] == "queue-depth", b
    # Reads: 1 member I/O, 800/s over 4 members.
    b = device_bound("raid5", 4, 8, {"read_frac": 1, "bs": 8, "align": 8, "qd": 16}, ch)
    assert abs(b["iops"] - 800) < 1e-6, b
    # RAID-10 writes: 2 member I/Os -> 400/s.
    b = device_bound("raid10", 4, 8, {"read_frac": 0, "bs": 8, "align": 8, "qd": 16}, ch)
    assert abs(b["iops"] - 400) < 1e-6, b
    # Full-stripe aligned writes: 4 I/Os per 12 KiB write -> 200/s.
    b = device_bound("raid5", 4, 8, {"read_frac": 0, "bs": 24, "align": 24, "qd": 16}, ch)
    assert abs(b["member_ios_per_io"] - 4) < 1e-9, b
    # A member at half capacity halves the channel bound of a balanced load.
    # RAID-0 over 4: chunk j on member j % 4; 4 KiB reads or writes, 800/s;
    # a 16 KiB aligned I/O is one chunk on each member -> 200/s.
    assert raid0_chunks(0, 40, 4, 8) == [0, 1, 2, 3, 0]
    b = device_bound("raid0", 4, 8, {"read_frac": 0, "bs": 8, "align": 8, "qd": 16}, ch)
    assert abs(b["iops"] - 800) < 1e-6 and abs(b["member_ios_per_io"] - 1) < 1e-9, b
    b = device_bound("raid0", 4, 8, {"read_frac": 1, "bs": 32, "align": 32, "qd": 16}, ch)
    assert abs(b["iops"] - 200) < 1e-6, b
    ch2 = dict(ch, cap_factor=[0.5, 1, 1, 1])
    b = device_bound("raid5", 4, 8, {"read_frac": 1, "bs": 8, "align": 8, "qd": 16}, ch2)
    assert abs(b["iops"] - 400) < 1e-6, b
    return True


def measured_bound(rec):
    """The bound of one run record (scripts/bench JSON) recomputed with the
    disturbances as they happened: the background rate each loaded member
    reached, and the stall time each stalled member really had (count and
    mean length over the fio run), instead of the configured ones. A
    contender that queues deeply can starve the background load, and a
    suspend waits for in-flight I/O, so both can differ from the scenario."""
    b = rec.get("device_bound") or {}
    pat = b.get("pattern")
    if not pat or b.get("iops") is None:
        return None
    n = rec["members"]
    ch = rec["channel"]
    cap, wait, bg = [1.0] * n, [0.0] * n, [0.0] * n
    span_ms = max(rec.get("fio_wall_s") or rec.get("wall_s") or 0, 1e-3) * 1000.0
    for s in rec.get("stalls") or []:
        m = int(s["member"])
        frac = min(0.99, s["total_ms"] / span_ms)
        cap[m] = 1 - frac
        if s["count"]:
            period = span_ms / s["count"]
            wait[m] = s["mean_ms"] ** 2 / (2.0 * period)
    for x in rec.get("background") or []:
        if x.get("kind") == "foreign":
            continue
        bg[int(x["member"])] = x["achieved_iops"] if x["achieved_iops"] is not None else x["rate_iops"]
    channel = {"lat_ms": [x / 1000.0 for x in ch["lat_us"]], "qd": [ch["qd"]] * n,
               "write_extra_ms": float(ch.get("write_extra_ms", 0)), "cap_factor": cap,
               "stall_wait_ms": wait, "bg_iops": bg}
    out = device_bound(rec["scheme"], n, rec["chunk_kb"] * 2, pat, channel)
    out["pattern"] = pat
    return out
