#!/bin/bash
# make test-full only
# scripts/bench end to end in the running test VM: the `smoke` set (two tiny
# scenarios: plain channels with writes, reads and a replay of the MSR
# fixture of the trace converter's tests, and every disturbance at once; rainssd-count,
# md RAID-5 and dm-raid RAID-5; one repeat) completes, every run file has
# every field (scripts/bench check), the table prints and nothing of the
# channel model is left behind. (udevd is stopped during the run and
# restarted after: see --stop-udev in scripts/bench.)
. "$REPO/tests/lib.sh"
out=/tmp/bench-smoke
rm -rf "$out"
rc=0
python3 "$REPO/scripts/bench" run --in-vm --stop-udev --repeat 1 --out "$out" smoke >/tmp/bench-smoke.log 2>&1 || rc=$?
grep -E '^\[ *[0-9]+:[0-9]+\] (\[|    )' /tmp/bench-smoke.log | sed 's/^/    /' | tail -20
[ "$rc" -eq 0 ] || { tail -20 /tmp/bench-smoke.log; fail "scripts/bench exited $rc"; }
# smoke-a: 3 jobs x 2 contenders, smoke-b: 1 job x 3 contenders. check also
# holds each trace replay to the converted trace's read and write counts.
python3 "$REPO/scripts/bench" check "$out" --expect 9 || fail "run files incomplete"
ntrace=$(python3 -c '
import glob, json, sys
n = 0
for p in glob.glob(sys.argv[1] + "/*.json"):
    r = json.load(open(p))
    t = r.get("trace")
    if t and r["status"] == "ok" and t["reads"] + t["writes"] == r["fio"]["read"]["ios"] + r["fio"]["write"]["ios"] > 0:
        n += 1
print(n)' "$out") || fail "cannot read the run files"
[ "$ntrace" -eq 2 ] || fail "$ntrace trace replays match their trace, expected 2 (one per smoke-a contender)"
python3 "$REPO/scripts/bench" report "$out" >/tmp/bench-smoke.table || fail "report failed"
grep -q 'rainssd-count' /tmp/bench-smoke.table || fail "table has no rainssd-count row"
grep -q 'md-raid5' /tmp/bench-smoke.table || fail "table has no md-raid5 row"
if dmsetup ls | grep -Eq '^(bch[0-9]|bench-)'; then fail "bench left dm devices behind"; fi
[ ! -e /dev/md100 ] || [ "$(cat /sys/block/md100/md/array_state 2>/dev/null)" = "" ] ||
	fail "bench left /dev/md100 running"
ls /sys/kernel/config/nullb 2>/dev/null | grep -q '^bch' && fail "bench left null_blk channels"
sed 's/^/    /' /tmp/bench-smoke.table | cut -c1-150
note "smoke set: 9 runs complete, every field present, 2 trace replays issued the trace's I/Os"
exit 0
