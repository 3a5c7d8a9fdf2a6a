#!/bin/bash
# Tests of rainssd-crashwriter on a plain file as the device: a write run
# verifies clean, and each kind of damage a power cut can leave (a byte
# flipped, a block zeroed, an older generation, a generation never issued,
# another block's contents, random bytes, a read error) is named for what it
# is. Run from anywhere: make -C userspace-tools test.
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
CW=$HERE/crash/rainssd-crashwriter
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
failn=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
nok() { echo "not ok - $1"; failn=$((failn + 1)); }
[ -x "$CW" ] || { echo "not ok - build: $CW missing (make -C userspace-tools)"; exit 1; }

expect() { # expect <name> <want rc> <cmd...>: stdout in $TMP/out, stderr in $TMP/err
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$name"; else
		nok "$name (exit $rc, want $want)"; head -20 "$TMP/out" "$TMP/err"; fi
}
has() { # has <name> <regex>: the last command's stdout matches
	if grep -Eq -- "$2" "$TMP/out"; then ok "$1"; else nok "$1: $(head -5 "$TMP/out")"; fi
}
# jfield <expr on d>: a value of the JSON in $TMP/out
jfield() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$TMP/out"; }
# put <file> <block> <src file>: write 4 KiB of src at block of file
put() { dd if="$3" of="$1" bs=4096 seek="$2" count=1 conv=notrunc status=none; }

N=1024
D=$TMP/dev
truncate -s $((N * 4096)) "$D"
verify() { "$CW" verify --dev "${DEV:-$D}" --blocks $N --issued "$TMP/issued" --acked "$TMP/acked" "$@"; }

# ---- usage ----
expect "--help" 0 "$CW" --help
expect "write --help" 0 "$CW" write --help
expect "verify --help" 0 "$CW" verify --help
expect "no command" 2 "$CW"
expect "unknown command" 2 "$CW" frobnicate
expect "write without --dev" 2 "$CW" write --blocks 10 --issued "$TMP/i" --acked "$TMP/a"
expect "verify without --acked" 2 "$CW" verify --dev "$D" --blocks 10 --issued "$TMP/i"
expect "bad number" 2 "$CW" write --dev "$D" --blocks 1x --issued "$TMP/i" --acked "$TMP/a"
expect "more jobs than blocks" 2 "$CW" write --dev "$D" --blocks 4 --jobs 8 --issued "$TMP/i" --acked "$TMP/a"
expect "bs not a multiple of 512" 2 "$CW" write --dev "$D" --blocks 4 --bs 1000 --issued "$TMP/i" --acked "$TMP/a"
expect "device too small" 2 "$CW" write --dev "$D" --blocks $((N + 1)) --issued "$TMP/i" --acked "$TMP/a"
expect "missing device" 2 "$CW" write --dev "$TMP/nope" --blocks 4 --issued "$TMP/i" --acked "$TMP/a"

# ---- a clean run ----
expect "write: 4 jobs x 300 writes" 0 "$CW" write --dev "$D" --blocks $N --jobs 4 --count 300 \
	--seed 7 --issued "$TMP/issued" --acked "$TMP/acked"
[ "$(wc -l <"$TMP/issued")" = 1200 ] && [ "$(wc -l <"$TMP/acked")" = 1200 ] &&
	ok "1200 writes issued and acked" || nok "1200 writes issued and acked: $(wc -l "$TMP"/issued "$TMP"/acked)"
awk '{ if ($1 % 4 != int($2 / 2^48)) bad++ } END { exit bad > 0 }' "$TMP/acked" &&
	ok "job j writes only lba = j mod 4, its number in the generation's high bits" ||
	nok "job j writes only lba = j mod 4"
[ "$(sort -u "$TMP/acked" | awk '{print $2}' | sort -u | wc -l)" = 1200 ] &&
	ok "every generation is unique" || nok "every generation is unique"
expect "verify a clean run" 0 verify
has "summary: nothing bad" ' 0 torn, 0 made-up, 0 lost, 0 unreadable$'
expect "verify --json" 0 verify --json
[ "$(jfield 'd["ok"] + d["zero"]')" = $N ] && [ "$(jfield 'd["bad"]')" = 0 ] &&
	[ "$(jfield 'd["acked"]')" = 1200 ] && ok "--json counts every block" ||
	nok "--json counts every block: $(cat "$TMP/out")"
zeros=$(jfield 'd["zero"]')
[ "$zeros" -gt 0 ] && ok "some blocks never written ($zeros), all zero and fine" ||
	nok "some blocks never written"
truncate -s $((64 * 4096)) "$TMP/dev2"
expect "--seconds 1 ends by itself" 0 timeout 20 "$CW" write --dev "$TMP/dev2" --blocks 64 \
	--issued "$TMP/i2" --acked "$TMP/a2" --seconds 1 --jobs 2
expect "...and verifies" 0 "$CW" verify --dev "$TMP/dev2" --blocks 64 --issued "$TMP/i2" --acked "$TMP/a2"
truncate -s $((64 * 4096)) "$TMP/devseq"
expect "--sequential: 4 jobs x 20 writes over 64 blocks" 0 "$CW" write --dev "$TMP/devseq" \
	--blocks 64 --jobs 4 --count 20 --sequential --issued "$TMP/iseq" --acked "$TMP/aseq"
# Each job walks its blocks in order: job 0 writes 0, 4, 8, ..., 60, then 0 again.
[ "$(awk '$1 % 4 == 0 {print $1}' "$TMP/iseq" | tr '\n' ' ')" = \
	"0 4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 0 4 8 12 " ] &&
	ok "...each job's blocks in order, wrapping" || nok "...in order: $(head -8 "$TMP/iseq")"
expect "...and verifies" 0 "$CW" verify --dev "$TMP/devseq" --blocks 64 --issued "$TMP/iseq" --acked "$TMP/aseq"

# Blocks to damage: acked twice or more (for an older generation), acked
# once, never acked.
multi=$(awk '{ n[$1]++; if (n[$1] == 2) { print $1; exit } }' "$TMP/acked")
old=$(awk -v l="$multi" '$1 == l { print $2; exit }' "$TMP/acked")
newest=$(awk -v l="$multi" '$1 == l { g = $2 } END { print g }' "$TMP/acked")
once=$(awk '{ n[$1]++ } END { for (l in n) if (n[l] == 1) { print l; exit } }' "$TMP/acked")
other=$(awk -v m="$multi" -v o="$once" '$1 != m && $1 != o { print $1; exit }' "$TMP/acked")
never=$(awk '{ w[$1] = 1 } END { for (l = 0; l < '$N'; l++) if (!(l in w)) { print l; exit } }' "$TMP/acked")
cp "$D" "$TMP/orig"
restore() { cp "$TMP/orig" "$D"; }

# ---- each kind of damage ----
dd if="$D" of="$TMP/blk" bs=4096 skip="$once" count=1 status=none
printf '\x5a' | dd of="$TMP/blk" bs=1 seek=2000 conv=notrunc status=none
put "$D" "$once" "$TMP/blk"
expect "a flipped byte fails verify" 1 verify
has "...as TORN at its lba" "^bad lba $once: TORN: gen [0-9]+ header, 1 of 8 sectors differ"
has "...and counted" ' 1 torn, 0 made-up, 0 lost,'
restore

head -c 4096 /dev/zero >"$TMP/zero"
put "$D" "$once" "$TMP/zero"
expect "an acked block zeroed fails verify" 1 verify
has "...as LOST" "^bad lba $once: LOST: all zero, but gen [0-9]+ was acked"
restore

"$CW" block --lba "$multi" --gen "$old" >"$TMP/blk"
put "$D" "$multi" "$TMP/blk"
expect "an older acked generation fails verify" 1 verify
has "...as LOST, naming both generations" "^bad lba $multi: LOST: gen $old, older than acked gen $newest"
restore

"$CW" block --lba "$once" --gen 123456789 >"$TMP/blk"
put "$D" "$once" "$TMP/blk"
expect "a generation never issued fails verify" 1 verify
has "...as MADE-UP" "^bad lba $once: MADE-UP: gen 123456789 .* was never issued"
restore

dd if="$D" of="$TMP/blk" bs=4096 skip="$other" count=1 status=none
put "$D" "$once" "$TMP/blk"
expect "another block's contents fail verify" 1 verify
has "...as MADE-UP, naming the other lba" "^bad lba $once: MADE-UP: the block of lba $other "
restore

head -c 4096 /dev/urandom >"$TMP/rnd"
put "$D" "$never" "$TMP/rnd"
expect "random bytes in a never-written block fail verify" 1 verify
has "...as MADE-UP (no header)" "^bad lba $never: MADE-UP: no header"
restore

# The XOR of two blocks: what a stale parity rebuilds.
python3 - "$D" "$once" "$other" "$TMP/blk" <<'PY'
import sys
f = open(sys.argv[1], "rb")
f.seek(int(sys.argv[2]) * 4096); a = f.read(4096)
f.seek(int(sys.argv[3]) * 4096); b = f.read(4096)
open(sys.argv[4], "wb").write(bytes(x ^ y for x, y in zip(a, b)))
PY
put "$D" "$once" "$TMP/blk"
expect "the XOR of two blocks fails verify" 1 verify
has "...as MADE-UP" "^bad lba $once: MADE-UP: no header"
restore

put "$D" "$once" "$TMP/zero"
put "$D" "$multi" "$TMP/rnd"
dd if="$D" of="$TMP/blk" bs=4096 skip="$other" count=1 status=none
printf '\x01' | dd of="$TMP/blk" bs=1 seek=100 conv=notrunc status=none
put "$D" "$other" "$TMP/blk"
expect "three bad blocks at once" 1 verify --json
[ "$(jfield 'd["lost"], d["made_up"], d["torn"], d["bad"]')" = "1 1 1 3" ] &&
	[ "$(jfield 'sorted(b["lba"] for b in d["bad_list"])')" = "$(python3 -c "print(sorted([$once, $multi, $other]))")" ] &&
	ok "--json lists each with its kind" || nok "--json lists each with its kind: $(cat "$TMP/out")"
expect "--list 1 names one" 1 verify --list 1
[ "$(grep -c '^bad lba' "$TMP/out")" = 1 ] && has "...and says how many more" '^\.\.\. 2 more bad blocks' ||
	nok "--list 1 names one"
restore

# ---- what is not damage ----
put "$D" "$never" "$TMP/zero"
expect "a never-written block still zero" 0 verify
# A write issued but not acked that landed: fine, and counted.
gen=$(( (1 << 48) * (never % 4) + 999999 ))
"$CW" block --lba "$never" --gen "$gen" >"$TMP/blk"
put "$D" "$never" "$TMP/blk"
cp "$TMP/issued" "$TMP/issued.orig"
echo "$never $gen" >>"$TMP/issued"
expect "an issued write that landed without its ack" 0 verify --json
[ "$(jfield 'd["unacked_landed"]')" = 1 ] && ok "...is counted as landed, not acked" ||
	nok "...is counted as landed: $(cat "$TMP/out")"
# Its older acked generation would be fine too; a zero block with only an
# unacked write as well.
put "$D" "$never" "$TMP/zero"
expect "an issued write that did not land" 0 verify
cp "$TMP/issued.orig" "$TMP/issued"
restore
# Cut logs (what the log-writes case passes): a prefix of the acked log.
head -n 600 "$TMP/acked" >"$TMP/acked.600"
expect "a prefix of the acked log" 0 "$CW" verify --dev "$D" --blocks $N --issued "$TMP/issued" --acked "$TMP/acked.600"
head -c -3 "$TMP/acked" >"$TMP/acked.cut"
expect "a torn last line is left out" 0 "$CW" verify --dev "$D" --blocks $N --issued "$TMP/issued" --acked "$TMP/acked.cut"
head -n 600 "$TMP/issued" >"$TMP/issued.600"
expect "an acked write missing from the issued log: logs that do not belong together" 2 \
	"$CW" verify --dev "$D" --blocks $N --issued "$TMP/issued.600" --acked "$TMP/acked"
expect "an lba beyond --blocks in a log" 2 "$CW" verify --dev "$D" --blocks 10 --issued "$TMP/issued" --acked "$TMP/acked"
echo "garbage" >"$TMP/bad.log"
expect "a malformed log line" 2 "$CW" verify --dev "$D" --blocks $N --issued "$TMP/bad.log" --acked "$TMP/acked"

# ---- --offset-blocks ----
truncate -s $(((N + 16) * 4096)) "$TMP/dev3"
expect "write at --offset-blocks 16" 0 "$CW" write --dev "$TMP/dev3" --blocks $N --jobs 3 --count 50 \
	--offset-blocks 16 --issued "$TMP/i3" --acked "$TMP/a3"
expect "verify at the same offset" 0 "$CW" verify --dev "$TMP/dev3" --blocks $N --offset-blocks 16 \
	--issued "$TMP/i3" --acked "$TMP/a3"
expect "verify at offset 0 finds every block misplaced" 1 "$CW" verify --dev "$TMP/dev3" --blocks $N \
	--issued "$TMP/i3" --acked "$TMP/a3"

# ---- a read error: a device shorter than --blocks is refused ----
truncate -s $((N * 4096 - 4096)) "$TMP/short"
expect "a device smaller than --blocks" 2 "$CW" verify --dev "$TMP/short" --blocks $N --issued "$TMP/issued" --acked "$TMP/acked"

echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
