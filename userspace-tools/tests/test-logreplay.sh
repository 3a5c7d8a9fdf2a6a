#!/bin/bash
# Tests of rainssd-logreplay on dm-log-writes logs built here, in the
# kernel's format (drivers/md/dm-log-writes.c): writes, a flush, FUA, a
# discard and marks, with 512-byte and 4 KiB sectors and a write larger
# than the tool's read window; the replay is compared with a model of what
# the device held at each point. Run from anywhere: make -C userspace-tools test.
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
LR=$HERE/crash/rainssd-logreplay
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
failn=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
nok() { echo "not ok - $1"; failn=$((failn + 1)); }
[ -x "$LR" ] || { echo "not ok - build: $LR missing (make -C userspace-tools)"; exit 1; }

expect() { # expect <name> <want rc> <cmd...>
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$name"; else
		nok "$name (exit $rc, want $want)"; head -20 "$TMP/out" "$TMP/err"; fi
}
has() { if grep -Eq -- "$2" "$TMP/out"; then ok "$1"; else nok "$1: $(head -5 "$TMP/out")"; fi; }

# mklog <sectorsize> <log> <model dir> <dev sectors>: write a log and, for
# every entry index k, the image the device holds after entry k (model/k).
mklog() {
	python3 - "$@" <<'PY'
import os, random, struct, sys
ss, log, model, devsec = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
FLUSH, FUA, DISCARD, MARK, META = 1, 2, 4, 8, 16
rnd = random.Random(5)
entries = []     # (sector, nr_sectors, flags, data or mark name)
def write(sec, n, flags=0):
    entries.append((sec, n, flags, rnd.randbytes(n * ss)))
write(8, 2)
entries.append((0, 0, FLUSH, b""))
entries.append((0, 0, MARK, b"one"))
write(0, 1, FUA | META)
entries.append((8, 1, DISCARD, b""))
entries.append((0, 0, MARK, b"two"))
write(16, 8)
big = (3 << 20) // ss + 3          # larger than the 1 MiB read window
write(32, big)
entries.append((0, 0, MARK, b"two"))            # a second mark of the same name
entries.append((0, 0, MARK, b"dm-log-writes-end"))
os.makedirs(model, exist_ok=True)
img = bytearray(devsec * ss)
with open(log, "wb") as f:
    f.write(struct.pack("<QQQI", 0x6a736677736872, 1, len(entries), ss).ljust(ss, b"\0"))
    for k, (sec, n, flags, data) in enumerate(entries):
        if flags & MARK:
            f.write((struct.pack("<QQQQ", 0, 0, flags, len(data)) + data).ljust(ss, b"\0"))
        else:
            f.write(struct.pack("<QQQQ", sec, n, flags, 0).ljust(ss, b"\0"))
            if flags & DISCARD:
                img[sec * ss:(sec + n) * ss] = bytes(n * ss)
            else:
                f.write(data)
                img[sec * ss:(sec + n) * ss] = data
        open(os.path.join(model, str(k)), "wb").write(img)
    f.write(os.urandom(3 * ss))   # whatever follows the log on the device
PY
}

# replay_case <name> <ss> <args...>: replay onto a fresh destination and
# compare with model/<entry>.
fresh() { rm -f "$TMP/dest"; truncate -s $((DEVSEC * SS)) "$TMP/dest"; }
same() { # same <name> <model entry>
	if cmp -s "$TMP/dest" "$TMP/model/$2"; then ok "$1"; else nok "$1: differs from the model after entry $2"; fi
}

for SS in 512 4096; do
	DEVSEC=$(( (8 << 20) / SS ))
	rm -rf "$TMP/model"
	mklog $SS "$TMP/log" "$TMP/model" $DEVSEC
	expect "[$SS] list" 0 "$LR" list "$TMP/log"
	has "[$SS] list: the entries and sector size" "^entries 10 sectorsize $SS: 4 writes \\([0-9]+ sectors\\), 1 flushes, 1 fua, 1 discards, 4 marks$"
	has "[$SS] list: mark one at entry 2" '^mark 2 one$'
	has "[$SS] list: both marks two" '^mark 5 two$'
	has "[$SS] list: ...the second" '^mark 8 two$'
	has "[$SS] list: the end mark" '^mark 9 dm-log-writes-end$'
	expect "[$SS] list --json" 0 "$LR" list --json "$TMP/log"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["entries"]==10 and [m["entry"] for m in d["marks"]]==[2,5,8,9] and d["marks"][0]["name"]=="one" and d["ok"]' "$TMP/out" &&
		ok "[$SS] list --json: marks with their entries" || nok "[$SS] list --json: $(cat "$TMP/out")"

	fresh
	expect "[$SS] replay --to-mark one" 0 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark one
	same "[$SS] ...holds the first write only" 2
	has "[$SS] ...and says what it did" "^replayed 1 writes and 0 discards onto "
	fresh
	expect "[$SS] replay --to-mark two (the first of that name)" 0 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark two
	same "[$SS] ...the FUA write and the discard's zeros, not what follows" 5
	for k in 0 3 4 6 7; do
		fresh
		expect "[$SS] replay --to-entry $k" 0 "$LR" replay "$TMP/log" "$TMP/dest" --to-entry $k
		same "[$SS] ...matches the model after entry $k" $k
	done
	fresh
	expect "[$SS] replay to the end mark" 0 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark dm-log-writes-end
	same "[$SS] ...the whole log" 9
	# Replaying onto a device that held other data: only the logged
	# ranges are written.
	head -c $((DEVSEC * SS)) /dev/urandom >"$TMP/dest"
	cp "$TMP/dest" "$TMP/dest.before"
	expect "[$SS] replay over old contents" 0 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark one
	python3 - "$TMP/dest" "$TMP/dest.before" "$TMP/model/2" $SS <<'PY' && ok "[$SS] ...writes the logged sectors, leaves the rest" || nok "[$SS] ...writes the logged sectors, leaves the rest"
import sys
d, b, m, ss = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read(), int(sys.argv[4])
lo, hi = 8 * ss, 10 * ss
sys.exit(0 if d[lo:hi] == m[lo:hi] and d[:lo] == b[:lo] and d[hi:] == b[hi:] else 1)
PY

	fresh
	expect "[$SS] a mark not in the log" 1 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark three
	grep -q 'no mark "three"' "$TMP/err" && ok "[$SS] ...is named" || nok "[$SS] ...is named: $(cat "$TMP/err")"
	expect "[$SS] an entry beyond the log" 1 "$LR" replay "$TMP/log" "$TMP/dest" --to-entry 10
	rm -f "$TMP/small"; truncate -s $((16 * SS)) "$TMP/small"
	expect "[$SS] a destination too small for a write" 2 "$LR" replay "$TMP/log" "$TMP/small" --to-entry 7
done

# A log whose super block counts more entries than it holds (cut short).
python3 - "$TMP/log" "$TMP/short" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()[:3 * 4096])
b[16:24] = struct.pack("<Q", 1000)
open(sys.argv[2], "wb").write(b)
PY
expect "a log cut short" 1 "$LR" list "$TMP/short"
printf 'not a log at all' | dd of="$TMP/notlog" bs=4096 conv=sync status=none
expect "not a log: bad magic" 1 "$LR" list "$TMP/notlog"
grep -q 'not a dm-log-writes log' "$TMP/err" && ok "...is said" || nok "...is said"
expect "--help" 0 "$LR" --help
expect "replay --help" 0 "$LR" replay --help
expect "no command" 2 "$LR"
expect "unknown command" 2 "$LR" dump "$TMP/log"
expect "replay without a stop point" 2 "$LR" replay "$TMP/log" "$TMP/dest"
expect "replay with both stop points" 2 "$LR" replay "$TMP/log" "$TMP/dest" --to-mark one --to-entry 3
expect "replay with a bad entry number" 2 "$LR" replay "$TMP/log" "$TMP/dest" --to-entry -1
expect "a missing log" 2 "$LR" list "$TMP/nope"
expect "a missing destination" 2 "$LR" replay "$TMP/log" "$TMP/nope/dest" --to-mark one

echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
