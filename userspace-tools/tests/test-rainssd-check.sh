#!/bin/bash
# Tests for rainssd-check on plain files: members are built by a small
# reference model of md's left-symmetric RAID-5 (parity = XOR of the data
# chunks), then damaged on purpose.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK=$HERE/../rainssd-check
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
failn=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
nok() { echo "not ok - $1"; failn=$((failn + 1)); }

# mkmembers <n> <chunk> <stripes> <offset>: files m0..m{n-1} in $TMP.
mkmembers() {
	python3 - "$TMP" "$@" <<'PY'
import os, random, sys
d, n, chunk, stripes, off = sys.argv[1], *map(int, sys.argv[2:])
cb = chunk * 512
rnd = random.Random(1234)
files = [open(os.path.join(d, "m%d" % i), "wb") for i in range(n)]
for f in files:
    f.write(b"\xa5" * off * 512)          # metadata area: never checked
for s in range(stripes):
    pd = n - 1 - (s % n)                  # left-symmetric parity member
    par = bytearray(cb)
    chunks = {}
    for k in range(n - 1):
        member = (pd + 1 + k) % n
        data = rnd.randbytes(cb)
        chunks[member] = data
        par = bytearray(a ^ b for a, b in zip(par, data))
    chunks[pd] = bytes(par)
    for i, f in enumerate(files):
        f.write(chunks[i])
for f in files:
    f.close()
PY
}

flip() { # flip <file> <byte offset>
	python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0x40]))
PY
}

expect() { # expect <name> <want rc> <cmd...>
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$name"; else
		nok "$name (exit $rc, want $want)"; cat "$TMP/out" "$TMP/err"; fi
}

# N=4, chunk 8 sectors, 40 stripes, data offset 64 sectors.
mkmembers 4 8 40 64
M=("$TMP"/m0 "$TMP"/m1 "$TMP"/m2 "$TMP"/m3)
expect "clean N=4 array passes" 0 "$CHECK" --data-offset 64 8 "${M[@]}"
grep -qx 'checked 40 stripes, 0 bad' "$TMP/out" && ok "summary counts 40 stripes" ||
	nok "summary counts 40 stripes: $(cat "$TMP/out")"
expect "--length of 10 stripes" 0 "$CHECK" --data-offset 64 --length 240 8 "${M[@]}"
grep -qx 'checked 10 stripes, 0 bad' "$TMP/out" && ok "--length checks 10 stripes" ||
	nok "--length checks 10 stripes"

# Damage stripe 5 on m2 (a data or parity chunk: either must be caught) and
# the metadata area (must not be).
flip "$TMP/m2" $(( (64 + 5 * 8) * 512 + 100 ))
flip "$TMP/m1" 77
expect "flipped byte is found" 1 "$CHECK" --data-offset 64 8 "${M[@]}"
grep -q '^bad stripe 5: member sectors 104-111, first difference at byte 96' "$TMP/out" &&
	ok "report names stripe 5" || nok "report names stripe 5: $(cat "$TMP/out")"
grep -qx 'checked 40 stripes, 1 bad' "$TMP/out" && ok "exactly one bad stripe" ||
	nok "exactly one bad stripe"
expect "--stripes 5 stops before the damage" 0 "$CHECK" --data-offset 64 --stripes 5 8 "${M[@]}"
expect "--json reports the damage" 1 "$CHECK" --data-offset 64 --json 8 "${M[@]}"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["bad_list"]==[5] and j["stripes_checked"]==40 and j["bad_stripes"]==1' "$TMP/out" &&
	ok "--json is valid and lists stripe 5" || nok "--json is valid and lists stripe 5"
expect "metadata damage is seen with --data-offset 0" 1 "$CHECK" --data-offset 0 --quiet 8 "${M[@]}"

# A missing member makes every stripe wrong (the checker must not pass it).
expect "three of four members fail" 1 "$CHECK" --data-offset 64 --quiet 8 "${M[@]:0:3}"

# N=3 with a bigger chunk, and larger than one read batch (1 MiB).
rm -f "$TMP"/m*
mkmembers 3 2048 5 0
expect "clean N=3 chunk 1 MiB" 0 "$CHECK" --data-offset 0 --progress 2048 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2
flip "$TMP/m0" $(( 4 * 2048 * 512 + 1048575 ))
expect "last byte of the last stripe is checked" 1 "$CHECK" --data-offset 0 2048 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2

# Usage errors exit 2.
expect "no arguments" 2 "$CHECK"
expect "chunk not a power of two" 2 "$CHECK" 12 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2
expect "only two members" 2 "$CHECK" 8 "$TMP"/m0 "$TMP"/m1
expect "missing member file" 2 "$CHECK" 8 "$TMP"/m0 "$TMP"/m1 "$TMP"/nope
expect "--length not whole stripes" 2 "$CHECK" --data-offset 0 --length 100 2048 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2
expect "more stripes than the members hold" 2 "$CHECK" --data-offset 0 --stripes 6 2048 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2
expect "bad number" 2 "$CHECK" --stripes 1x 8 "$TMP"/m0 "$TMP"/m1 "$TMP"/m2
expect "--help" 0 "$CHECK" --help

echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
