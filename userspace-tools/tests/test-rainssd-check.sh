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

# ---- volumes with superblocks and the RAID1 tier (1.7.0) ----
#
# mkvol <variant>: files v0..v3 in $TMP by a reference model of the module's
# formats: superblocks (format 2, or 1 for "v1", none for "nosb"), homes with
# their parity (left-symmetric), and the tier: its layout, both table copies
# on every member (each block's two copies with different generations; the
# older copy of the record block claims a row whose copies differ), the two
# commit records (slot 1: commit 9, every block's newer generation; slot 0:
# commit 8, the one before, when the record block had the older), the
# written-stripe bitmap, two stripes in the tier with some rows present
# (identical in both copies; every other row of a slot differs), and a
# superseded older record of one of them (its rows differ). A variant with
# a bad record or header damages it; "torn" leaves a commit cut short (copy 0
# of the record block at generation 8, the older payload, with no record of
# it); "vec-even" gives slot 1's record an even sequence number; "big" is a
# tier of 8192 sectors (4 table blocks: the commit records move the chunk
# slots a chunk on). $TMP/model.json says where things are.
cat >"$TMP/model.py" <<'PY'
import json, os, random, struct, sys

d, variant = sys.argv[1], set(sys.argv[2].split(","))
N, CHUNK, STRIPES, OFF = 4, 64, 20, 4096
TIER = 8192 if "big" in variant else 2048
K = N - 1
CB = CHUNK * 512
UUID = bytes(range(0x10, 0x20))
rnd = random.Random(77)

CT = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CT.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = CT[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def seal(blk, field=12):
    """crc32c of the block with the le32 at @field zero, stored there."""
    blk[field:field + 4] = b"\0\0\0\0"
    blk[field:field + 4] = struct.pack("<I", crc32c(bytes(blk)))
    return blk


def up(a, b):
    return -(-a // b)


# rs_tier_layout()
tier = 0 if variant & {"v1", "nosb"} else TIER
tier_start = OFF + STRIPES * CHUNK
L = {}
if tier:
    rows = max(1, CHUNK // 8)
    pbytes = up(up(rows, 8), 4) * 4
    ksize = 12 + pbytes
    rec_size = up(16 + K * ksize, 8) * 8
    rpb = (4096 - 64) // rec_size
    wb = up(STRIPES, 4032 * 8)
    recs = (tier // CHUNK) * N // (2 * K)
    rec_blocks = up(recs, rpb)
    blocks = 1 + wb + rec_blocks
    vec_blocks = up(blocks, 504)
    table = up(2 * (blocks + vec_blocks) * 8, CHUNK) * CHUNK
    slots = (tier - table) // CHUNK
    records = min(slots * N // (2 * K), rec_blocks * rpb)
    L = dict(start=tier_start, sectors=tier, rows=rows, pbytes=pbytes, ksize=ksize,
             rec_size=rec_size, rpb=rpb, wb=wb, rec_blocks=rec_blocks, blocks=blocks,
             vec_blocks=vec_blocks, slots_start=tier_start + table, slots=slots,
             records=records)
size = (tier_start + tier) * 512
mem = [bytearray(size) for _ in range(N)]


def put(m, sector, data):
    mem[m][sector * 512:sector * 512 + len(data)] = data


# The homes.
for s in range(STRIPES):
    pd = N - 1 - (s % N)
    par = bytearray(CB)
    for k in range(K):
        data = rnd.randbytes(CB)
        put((pd + 1 + k) % N, OFF + s * CHUNK, data)
        par = bytearray(a ^ b for a, b in zip(par, data))
    put(pd, OFF + s * CHUNK, par)


# Superblocks: events 8 in copy 0, 7 in copy 1.
def sb(role, events, nonce=0x1234):
    b = bytearray(4096)
    struct.pack_into("<QII16sQIIQQQIIQII", b, 0, 0x3142535344534E52, 2 if tier else 1, 0,
                     UUID, events, CHUNK, N, OFF, STRIPES, STRIPES, role, 0, 1700000000,
                     0, 0)
    struct.pack_into("<QQQ", b, 96, nonce, tier_start if tier else 0, tier)
    for i in range(N):
        b[136 + 16 * i] = 1
    return seal(b)


if "nosb" not in variant:
    for m in range(N):
        # split: member 1 from a copy of the volume used apart
        put(m, 2048, sb(m, 8, 0x5678 if "split" in variant and m == 1 else 0x1234))
        put(m, 2056, sb(m, 7))

out = {"layout": L}
if tier:
    nxt = [0] * N

    def slot(m):
        nxt[m] += 1
        return nxt[m] - 1

    # (stripe, seq, [(member 0, member 1, rows)] per chunk); the third is superseded.
    spec = [(3, 5, [(0, 1, {0, 1, 2, 3, 7}), (2, 3, set()), (1, 2, {5})]),
            (11, 6, [(3, 0, {1}), (1, 2, {0, 6, 7}), (2, 3, set(range(8)))]),
            (11, 2, [(0, 2, {4}), (1, 3, {4}), (3, 1, {4})])]
    recs = [(st, sq, [(a, slot(a), b, slot(b), rows) for a, b, rows in ch])
            for st, sq, ch in spec]
    # Every slot garbage, then the rows present made equal in both copies.
    for m in range(N):
        for sl in range(L["slots"]):
            put(m, L["slots_start"] + sl * CHUNK, rnd.randbytes(CB))
    for st, sq, ch in recs[:2]:
        for m0, s0, m1, s1, rows in ch:
            for r in rows:
                data = rnd.randbytes(4096)
                put(m0, L["slots_start"] + s0 * CHUNK + r * 8, data)
                put(m1, L["slots_start"] + s1 * CHUNK + r * 8, data)
    # Bad records (the second one's).
    ch = recs[1][2]
    if "same-member" in variant:
        ch[0] = (ch[0][0], ch[0][1], ch[0][0], ch[0][3], ch[0][4])
    if "member-range" in variant:
        ch[1] = (N,) + ch[1][1:]
    if "slot-range" in variant:
        ch[1] = (ch[1][0], L["slots"]) + ch[1][2:]
    if "rows-beyond" in variant:
        ch[2] = ch[2][:4] + (ch[2][4] | {L["rows"]},)
    if "slot-clash" in variant:
        ch[2] = recs[0][2][0][:2] + ch[2][2:]
    if "same-seq" in variant:
        recs[2] = (recs[2][0], recs[1][1], recs[2][2])

    def rec_bytes(i, old):
        st, sq, chunks = recs[i]
        r = bytearray(L["rec_size"])
        struct.pack_into("<QQ", r, 0, st + 1, sq)
        for k, (m0, s0, m1, s1, rows) in enumerate(chunks):
            e = 16 + k * L["ksize"]
            struct.pack_into("<BBxxII", r, e, m0, m1, s0, s1)
            # The older table copy: the first record also claims row 6 of chunk 1.
            for row in rows | ({6} if old and i == 0 and k == 1 else set()):
                r[e + 12 + row // 8] |= 1 << (row % 8)
        if "padding" in variant and i == 1:
            r[16 + 2] = 1
        return r

    def block(b, gen, payload):
        blk = bytearray(4096)
        blk[64:64 + len(payload)] = payload
        struct.pack_into("<QII16sIIQ", blk, 0, 0x3152544453534E52, 1, 0, UUID, b, 0, gen)
        return seal(blk)

    hdr = struct.pack("<QQIIIIIIIII", L["start"], L["sectors"], CHUNK, N, L["rows"],
                      L["rec_size"], L["wb"], L["rec_blocks"], L["slots"],
                      L["records"] + ("hdr" in variant), L["vec_blocks"])
    wbits = bytearray(4032)
    for s in (3, 5, 7, 11):
        wbits[s // 8] |= 1 << (s % 8)

    def recblock(old):
        p = bytearray(4032)
        for i in range(len(recs)):
            p[i * L["rec_size"]:(i + 1) * L["rec_size"]] = rec_bytes(i, old)
        return p

    assert L["blocks"] == (4 if "big" in variant else 3) and L["wb"] == 1
    # Block: generations of copy 0 and copy 1, the payload of the generation
    # commit 9 has (the newer), the other's.
    tab = {0: (2, 1, hdr, hdr), 1: (1, 2, wbits, wbits),
           2: (6, 7, recblock(False), recblock(True))}
    for b in range(3, L["blocks"]):
        tab[b] = (1, 2, bytes(4032), bytes(4032))
    newest = [max(v[:2]) for v in tab.values()]
    if "torn" in variant:
        # Commit 10 wrote copy 0 of block 2 (generation 8), then was cut.
        tab[2] = (8, 7, recblock(False), recblock(True))
    for m in range(N):
        for b, (g0, g1, new, other) in tab.items():
            for c, g in ((0, g0), (1, g1)):
                put(m, L["start"] + (c * L["blocks"] + b) * 8,
                    block(b, g, new if g == newest[b] else other))

    # Member @m's commit record @cseq (every block's generation after it), in
    # slot cseq % 2 unless @slot says.
    def vec(m, cseq, gens, slot=None):
        slot = cseq % 2 if slot is None else slot
        p = bytearray(L["vec_blocks"] * 4032)
        for b, g in enumerate(gens):
            struct.pack_into("<Q", p, 8 * b, g)
        for j in range(L["vec_blocks"]):
            put(m, L["start"] + (2 * L["blocks"] + slot * L["vec_blocks"] + j) * 8,
                block(L["blocks"] + slot * L["vec_blocks"] + j, cseq,
                      p[j * 4032:(j + 1) * 4032]))
    for m in range(N):
        vec(m, 8, newest[:2] + [6] + newest[3:])
        vec(m, 10 if "vec-even" in variant else 9, newest, 1)
    out["cseq"] = 9
    out["vec_sector"] = [L["start"] + (2 * L["blocks"] + s * L["vec_blocks"]) * 8
                         for s in range(2)]
    out["records"] = [{"stripe": st, "seq": sq,
                       "chunks": [{"copies": ["%d:%d" % (m0, L["slots_start"] + s0 * CHUNK),
                                              "%d:%d" % (m1, L["slots_start"] + s1 * CHUNK)],
                                   "rows": sorted(rows)} for m0, s0, m1, s1, rows in ch]}
                      for st, sq, ch in recs]
    out["block_sector"] = {"%d.%d" % (c, b): L["start"] + (c * L["blocks"] + b) * 8
                           for c in range(2) for b in range(L["blocks"])}
for m in range(N):
    with open(os.path.join(d, "v%d" % m), "wb") as f:
        f.write(mem[m])
with open(os.path.join(d, "model.json"), "w") as f:
    json.dump(out, f)
PY
mkvol() { rm -f "$TMP"/v? && python3 "$TMP/model.py" "$TMP" "${1:-clean}"; }
V=("$TMP"/v0 "$TMP"/v1 "$TMP"/v2 "$TMP"/v3)
# model <python expression over j, the model's json>
model() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/model.json" "$1"; }
has() { # has <name> <file> <fixed string>
	if grep -qF -- "$3" "$2"; then ok "$1"; else nok "$1: no '$3' in"; cat "$2"; fi
}
hasnt() { # hasnt <name> <file> <fixed string>
	if grep -qF -- "$3" "$2"; then nok "$1: '$3' in"; cat "$2"; else ok "$1"; fi
}
jcheck() { # jcheck <name> <python assertion over t, the JSON output>
	if python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert eval(sys.argv[2]), t' \
		"$TMP/out" "$2"; then ok "$1"; else nok "$1"; fi
}

mkvol clean
CAP=$(model 'j["layout"]["records"]')
expect "tier volume passes (chunk from the superblocks)" 0 "$CHECK" "${V[@]}"
has "the tier is detected" "$TMP/out" "(superblock format 2): checking its mirror copies too"
has "tier summary" "$TMP/out" "checked the tier: 2 stripes (capacity $CAP), 0 mismatched sectors, 0 bad records (table at commit 9)"
has "the homes end where the tier starts" "$TMP/out" "checked 20 stripes, 0 bad"
expect "tier volume passes with its chunk given" 0 "$CHECK" 64 "${V[@]}"
expect "--tier on a tier volume" 0 "$CHECK" --tier --quiet "${V[@]}"
expect "--json with the tier" 0 "$CHECK" --json "${V[@]}"
jcheck "--json tier fields" '(t["tier"]["stripes"], t["tier"]["capacity"], t["tier"]["mismatched_sectors"], t["tier"]["bad_records"], t["tier"]["written_stripes"], t["stripes_checked"], t["tier"]["commit"]) == (2, '"$CAP"', 0, 0, 4, 20, 9)'
expect "--no-tier checks the homes only" 0 "$CHECK" --no-tier "${V[@]}"
hasnt "--no-tier prints no tier line" "$TMP/out" "tier"
expect "--length below the volume" 0 "$CHECK" --length $((10 * 64 * 3)) "${V[@]}"
has "--length leaves stripe 11 out of the tier check" "$TMP/out" "checked the tier: 1 stripes"
expect "wrong chunk given" 2 "$CHECK" 32 "${V[@]}"
expect "wrong data offset given" 2 "$CHECK" --data-offset 32768 "${V[@]}"
expect "members out of order" 2 "$CHECK" "${V[1]}" "${V[0]}" "${V[2]}" "${V[3]}"
expect "a member left out" 2 "$CHECK" "${V[@]:0:3}"
expect "more stripes than the volume has" 2 "$CHECK" --stripes 21 "${V[@]}"

# --dump-tier: member:sector of every copy, the rows, the superseded record.
expect "--dump-tier" 0 "$CHECK" --dump-tier "${V[@]}"
cp "$TMP/out" "$TMP/dump"
c0=$(model '" ".join(j["records"][0]["chunks"][0]["copies"])')
has "--dump-tier prints the copies' member sectors" "$TMP/dump" "  chunk 0: $c0 rows 0-3,7"
has "--dump-tier: a chunk with no rows" "$TMP/dump" "  chunk 1: $(model '" ".join(j["records"][0]["chunks"][1]["copies"])') rows none"
has "--dump-tier: the record" "$TMP/dump" "record 0 (block 2): stripe 3 seq 5"
has "--dump-tier: the commit" "$TMP/dump" "tier: commit 9: 2 of $CAP stripes in it, 4 stripes written, 0 bad records"
has "--dump-tier: the older record is superseded" "$TMP/dump" "record 2 (block 2): stripe 11 seq 2, superseded by record 1"
expect "--dump-tier --json" 0 "$CHECK" --dump-tier --json "${V[@]}"
jcheck "--dump-tier --json records" '[x["state"] for x in t["records"]] == ["in_tier", "in_tier", "superseded"] and t["records"][1]["chunks"][2]["rows"] == "0-7" and t["tier"]["capacity"] == '"$CAP"' and (t["tier"]["commit"], t["tier"]["vec_blocks"]) == (9, 1)'
jcheck "--dump-tier --json copies" '"%(member)d:%(sector)d" % t["records"][0]["chunks"][0]["copies"][1] == "'"${c0#* }"'"'

# A row not in the tier may differ between the copies; one in it may not.
# The copy's place comes from --dump-tier (row r is 8 * r sectors into it).
cp1=$(sed -n 's/^  chunk 0: [0-9]*:[0-9]* \([0-9]*:[0-9]*\) rows 0-3,7$/\1/p' "$TMP/dump")
flip "$TMP/v${cp1%%:*}" $(( (${cp1#*:} + 4 * 8) * 512 + 9 ))
expect "a byte of a row not in the tier differs: clean" 0 "$CHECK" "${V[@]}"
dd if=/dev/zero of="$TMP/v${cp1%%:*}" bs=512 seek=$(( ${cp1#*:} + 7 * 8 + 3 )) count=1 \
	conv=notrunc status=none
expect "a sector of a row in the tier differs" 1 "$CHECK" "${V[@]}"
has "the differing copies are named" "$TMP/out" "tier stripe 3 chunk 0: copies $(model '" and ".join(j["records"][0]["chunks"][0]["copies"])') differ in 1 sectors, rows 7"
has "the summary counts 1 sector" "$TMP/out" "checked the tier: 2 stripes (capacity $CAP), 1 mismatched sectors, 0 bad records"
has "the homes are still right" "$TMP/out" "checked 20 stripes, 0 bad"
expect "--json lists the differing chunk" 1 "$CHECK" --json "${V[@]}"
jcheck "--json mismatch_list" 't["tier"]["mismatched_sectors"] == 1 and [(x["stripe"], x["chunk"], x["rows"]) for x in t["tier"]["mismatch_list"]] == [(3, 0, "7")]'
expect "--stripes 3 leaves stripe 3 out" 0 "$CHECK" --stripes 3 "${V[@]}"

# A damaged home is still found on a tier volume.
mkvol clean
flip "$TMP/v2" $(( (4096 + 7 * 64) * 512 + 5 ))
expect "a home's parity on a tier volume" 1 "$CHECK" --quiet "${V[@]}"
has "one bad home stripe" "$TMP/out" "checked 20 stripes, 1 bad"

# The table: the newest commit record any member holds whole (commit 9, in
# slot 1) gives every block's generation; a block is taken from a valid copy
# of it on any member, a corrupt copy with a whole one beside it is passed
# over, and so is a copy of another generation (older: stale; newer: a
# commit cut short).
mkvol clean
new=$(model 'j["block_sector"]["1.2"]')
old=$(model 'j["block_sector"]["0.2"]')
vec0=$(model 'j["vec_sector"][0]')
vec1=$(model 'j["vec_sector"][1]')
flip "$TMP/v1" $(( new * 512 + 700 ))
expect "the record block of commit 9 corrupt on one member" 0 "$CHECK" "${V[@]}"
has "the corrupt copy is noted" "$TMP/err" "corrupt block copies passed over"
for f in "${V[@]}"; do flip "$f" $(( old * 512 + 700 )); done
expect "the older copies corrupt everywhere, commit 9's whole on three" 0 "$CHECK" "${V[@]}"
mkvol clean
for f in "${V[@]}"; do flip "$f" $(( new * 512 + 700 )); done
expect "commit 9's generation of a block corrupt everywhere, an older whole: refused" 2 \
	"$CHECK" "${V[@]}"
has "the block and generation are named" "$TMP/err" \
	"tier table: no member holds block 2 whole at generation 7 (commit 9): corrupt; the newest older copy has generation 6"
for f in "${V[@]}"; do flip "$f" $(( old * 512 + 700 )); done
expect "a table block no member holds whole" 2 "$CHECK" "${V[@]}"
has "unreadable table message" "$TMP/err" "tier table: no member holds block 2 whole at generation 7 (commit 9)"
mkvol clean
for f in "${V[@]}"; do flip "$f" $(( $(model 'j["block_sector"]["1.0"]') * 512 + 77 )); done
expect "block 0's older copy corrupt everywhere" 0 "$CHECK" --quiet "${V[@]}"
mkvol clean
for f in "${V[@]}"; do flip "$f" $(( $(model 'j["block_sector"]["0.0"]') * 512 + 77 )); done
expect "block 0's copy of commit 9 corrupt everywhere" 2 "$CHECK" --quiet "${V[@]}"
has "block 0 named" "$TMP/err" "no member holds block 0 whole at generation 2 (commit 9)"

# A commit cut short: copy 0 of the record block at generation 8 (its
# payload claims row 6 of stripe 3's chunk 1, whose copies differ) on every
# member, commit 10's record never written: commit 9's generation 7 serves.
mkvol torn
expect "a copy newer than the commit record (a torn commit) is passed over" 0 "$CHECK" "${V[@]}"
has "the torn copies are noted" "$TMP/err" "tier table: 4 block copies newer than commit 9 passed over (a commit cut short)"
has "torn: commit 9" "$TMP/out" "(table at commit 9)"
expect "torn: --dump-tier" 0 "$CHECK" --dump-tier "${V[@]}"
has "torn: the record's generation is dumped" "$TMP/out" "  chunk 1: $(model '" ".join(j["records"][0]["chunks"][1]["copies"])') rows none"
for f in "${V[@]}"; do flip "$f" $(( new * 512 + 700 )); done
expect "torn, and commit 9's copy corrupt everywhere: the newer one is not taken" 2 "$CHECK" "${V[@]}"
has "torn: the newer copy is named" "$TMP/err" "at generation 7 (commit 9): corrupt; a copy of generation 8 is of a commit cut short"

# The newest commit record damaged on every member: the older one (commit 8,
# in slot 0: the record block at generation 6, which claims row 6 of stripe
# 3's chunk 1) is the table's, and the blocks must match it.
mkvol clean
for f in "${V[@]}"; do flip "$f" $(( vec1 * 512 + 1000 )); done
expect "commit 9's record damaged everywhere: commit 8's serves" 1 "$CHECK" "${V[@]}"
has "commit 8's generation of the record block is used" "$TMP/out" "tier stripe 3 chunk 1:"
has "commit 8 in the summary" "$TMP/out" "(table at commit 8)"
has "the damaged records are noted" "$TMP/err" "tier table: 4 commit record copies neither whole nor blank passed over"
expect "commit 8: --json" 1 "$CHECK" --json "${V[@]}"
jcheck "commit 8: --json commit" 't["tier"]["commit"] == 8'
for f in "${V[@]}"; do flip "$f" $(( old * 512 + 700 )); done
expect "commit 8's generation corrupt everywhere, commit 9's whole: refused" 2 "$CHECK" "${V[@]}"
has "commit 8's block named" "$TMP/err" "no member holds block 2 whole at generation 6 (commit 8)"
mkvol clean
flip "$TMP/v0" $(( vec1 * 512 + 1000 ))
flip "$TMP/v3" $(( vec1 * 512 + 1000 ))
expect "commit 9's record damaged on two members, whole on two" 0 "$CHECK" "${V[@]}"
has "commit 9 from the others" "$TMP/out" "(table at commit 9)"
mkvol vec-even
expect "a record whose sequence number is not its slot's is passed over" 1 "$CHECK" "${V[@]}"
has "vec-even: commit 8" "$TMP/out" "(table at commit 8)"

# No commit record: corrupt; nothing at all: missing.
mkvol clean
for f in "${V[@]}"; do
	dd if=/dev/zero of="$f" bs=512 seek="$vec0" count=16 conv=notrunc status=none
done
expect "no commit record on any member" 2 "$CHECK" "${V[@]}"
has "no commit record message" "$TMP/err" "tier table: no commit record any member holds whole (corrupt)"
for f in "${V[@]}"; do
	dd if=/dev/zero of="$f" bs=512 seek="$(model 'j["layout"]["start"]')" \
		count="$(model 'j["layout"]["slots_start"] - j["layout"]["start"]')" conv=notrunc status=none
done
expect "no table at all" 2 "$CHECK" "${V[@]}"
has "missing table message" "$TMP/err" "tier table missing (the superblocks say the volume has one)"

# The layout: a tier whose commit records take the table area past a chunk
# (4 blocks: 2 * (4 + 1) * 8 sectors, two chunks; without them, one).
mkvol big
expect "a tier of 8192 sectors" 0 "$CHECK" "${V[@]}"
has "big: both stripes compared" "$TMP/out" "checked the tier: 2 stripes"
expect "big: --dump-tier --json" 0 "$CHECK" --dump-tier --json "${V[@]}"
jcheck "big: the chunk slots start two chunks in" '(t["tier"]["blocks"], t["tier"]["vec_blocks"], t["tier"]["slots_start"] - t["tier"]["start"], t["tier"]["commit"]) == (4, 1, 128, 9)'
mkvol hdr
expect "a table header for another layout" 2 "$CHECK" "${V[@]}"
has "header message" "$TMP/err" "tier table made for another layout"

# Superblocks: each member's newest valid copy.
mkvol clean
flip "$TMP/v0" $(( 2048 * 512 + 300 ))
expect "the newest superblock copy corrupt on one member" 0 "$CHECK" "${V[@]}"
has "the older copy is noted" "$TMP/err" "superblock older than the newest"
flip "$TMP/v0" $(( 2056 * 512 + 300 ))
expect "both superblock copies corrupt on one member" 0 "$CHECK" "${V[@]}"
has "the corrupt superblock is noted" "$TMP/err" "superblock corrupt (bad checksum), passed over"
mkvol split
expect "a member at the newest generation with another log nonce" 2 "$CHECK" "${V[@]}"
has "split: named" "$TMP/err" "another history than"

# Impossible records: exit 1, each named.
badrec() { # badrec <variant> <message>
	mkvol "$1"
	expect "bad record: $1" 1 "$CHECK" "${V[@]}"
	has "bad record: $1 is named" "$TMP/out" "$2"
	# Stripe 11's older record (rows that differ) stays superseded.
	has "bad record: $1, nothing else compared wrong" "$TMP/out" "0 mismatched sectors, 1 bad records"
}
badrec same-member "bad tier record 1 (table block 2, stripe 11): record with both copies on one member"
badrec member-range "record with a member or slot out of range"
badrec slot-range "record with a member or slot out of range"
badrec rows-beyond "record with rows beyond the chunk"
badrec padding "record with non-zero padding"
badrec slot-clash "bad tier record 1 (table block 2, stripe 11): two records claim one chunk slot (record 0)"
badrec same-seq "two records of one stripe with one sequence number (record 1)"
mkvol same-member
expect "--dump-tier marks the bad record" 1 "$CHECK" --dump-tier "${V[@]}"
has "--dump-tier bad record" "$TMP/out" "record 1 (block 2): stripe 11 seq 6, bad: record with both copies on one member"
expect "--json counts the bad record" 1 "$CHECK" --json "${V[@]}"
jcheck "--json bad_record_list" 't["tier"]["bad_records"] == 1 and t["tier"]["bad_record_list"][0]["record"] == 1'

# Without a tier.
mkvol v1
expect "format 1 volume" 0 "$CHECK" "${V[@]}"
hasnt "format 1: no tier line" "$TMP/out" "tier"
expect "--json of a format 1 volume" 0 "$CHECK" --json "${V[@]}"
jcheck "format 1: tier null" 't["tier"] is None and t["stripes_checked"] == 20'
expect "--tier on a format 1 volume" 2 "$CHECK" --tier "${V[@]}"
expect "--dump-tier on a format 1 volume" 2 "$CHECK" --dump-tier "${V[@]}"
mkvol nosb
expect "no superblocks, chunk given" 0 "$CHECK" --data-offset 4096 --stripes 20 64 "${V[@]}"
expect "no superblocks, no chunk" 2 "$CHECK" --data-offset 4096 "${V[@]}"
expect "--tier without superblocks" 2 "$CHECK" --tier --data-offset 4096 64 "${V[@]}"
expect "--tier with --no-tier" 2 "$CHECK" --tier --no-tier 64 "${V[@]}"

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
