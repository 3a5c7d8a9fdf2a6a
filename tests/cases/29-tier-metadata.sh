#!/bin/bash
# The RAID1 tier's upkeep and its table's defences:
#  - rainssd-check over the raw members of the stopped volume finds the
#    table, every copy equal and every home's parity right;
#  - scrub: a byte changed in copy 1 of a row in the tier (written on the
#    raw member, where rainssd-check --dump-tier says the copy is) is found
#    by `check` (mismatch_cnt) and by rainssd-check, `repair` writes copy 0
#    over it (md's RAID1 repair: the first copy wins), and then both find
#    nothing and the volume reads as written;
#  - rebuild: member 1 failed and replaced by a blank device (rebuild 1):
#    its copies are written from the other copies, and with another member
#    failed afterwards every byte still reads back;
#  - corrupt table: both copies of a table block flipped on one member: the
#    others hold it, activates and reads back the same; one copy flipped on
#    every member: activates with the same bytes if that was the older copy,
#    else refused; the committed generation's copy flipped on every member:
#    refused with the tier's error and nothing written (the members' bytes
#    unchanged), never the older generation in its place; another tier_size:
#    refused.
. "$REPO/tests/lib.sh"

CHUNK=16
N=4
TIER=$((8 * 2048))
t_channels $((N + 1)) --size-mb 64 --lat-us 100
spare=${T_DEVS[$N]}
T_DEVS=("${T_DEVS[@]:0:$N}")
sz=$(blockdev --getsz "${T_DEVS[0]}")
T_CHUNK=$CHUNK
T_LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
v=/dev/mapper/rsm
line=$(t_table $CHUNK "$T_LEN" nosync tier_size $TIER)
echo "$line" | dmsetup create rsm || fail "create"
t_fio_verify fill $v --rw=randwrite --bs=4k --size=16m --iodepth=16 --number_ios=2500
sum=$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)
used=$(dmsetup status rsm | t_tail_field tier_stripes)
note "tier after the writes: $used"
dmsetup remove --retry rsm

# The checker: table found, copies equal, homes' parity right.
out=$("$CHECK" --tier "${T_DEVS[@]}" 2>&1) || { echo "$out" | tail -5; fail "rainssd-check after the writes"; }
note "rainssd-check: $(echo "$out" | grep -i tier | head -1)"

# Scrub: one copy of one row in the tier damaged on its raw member.
dump=$("$CHECK" --dump-tier "${T_DEVS[@]}") || fail "--dump-tier"
# The first chunk with rows in the tier: copy 1's member and sector, and its
# first row (repair writes copy 0 over copy 1, as md's RAID1 repair writes
# the first copy over the others: the damaged copy must be copy 1 for the
# repair to bring the data back).
read -r cm csec row < <(echo "$dump" | awk '
	/^  chunk [0-9]+:/ && $NF != "none" {
		n = 0
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9]+$/ && ++n == 2) { split($i, a, ":"); break }
		r = $NF; sub(/[-,].*/, "", r); print a[1], a[2], r; exit }')
[ -n "$cm" ] || { echo "$dump" | head -20; fail "no chunk with rows in the tier in the dump"; }
note "damaging copy at member $cm sector $csec, row $row"
t_poke "${T_DEVS[$cm]}" $(( (csec + row * 8) * 512 + 100 )) XXXXXXXX
"$CHECK" --tier "${T_DEVS[@]}" >/tmp/chk.out 2>&1 && fail "rainssd-check missed the damaged copy"
note "rainssd-check: $(grep -i 'differ\|mismatch' /tmp/chk.out | head -1)"
echo "$line" | dmsetup create rsm || fail "create again"
dmsetup message rsm 0 check || fail "check"
t_idle rsm 300 || fail "check not done"
mm=$(t_opstat rsm mismatch_cnt)
[ "$mm" -gt 0 ] || fail "check found no mismatch in the damaged copy"
dmsetup message rsm 0 repair || fail "repair"
t_idle rsm 300 || fail "repair not done"
dmsetup message rsm 0 check || fail "check again"
t_idle rsm 300 || fail "check again not done"
[ "$(t_opstat rsm mismatch_cnt)" = 0 ] || fail "check after repair: $(t_opstat rsm mismatch_cnt)"
[ "$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)" = "$sum" ] ||
	fail "after the repair the volume does not read as it was written"
note "scrub: check found $mm sectors, repair mended them from copy 0, check then 0, same md5"
dmsetup remove --retry rsm
"$CHECK" --tier "${T_DEVS[@]}" >/tmp/chk.out 2>&1 || { tail -5 /tmp/chk.out; fail "rainssd-check after repair"; }

# Rebuild: member 1 fails while flush_tier moves stripes home (slowly:
# 200 KiB/s per member, 25 of these stripes a second; at 2000 the ~470
# stripes were all home within the second before the failure, once in
# three runs), is replaced and rebuilt (the migration holds meanwhile and
# goes on after); then member 2 fails: everything reads back.
echo "$line migration_rate 200" | sed 's/ 3 nosync tier_size/ 5 nosync tier_size/' |
	dmsetup create rsm || fail "create for the rebuild"
dmsetup message rsm 0 flush_tier || fail "flush_tier"
sleep 1
dmsetup message rsm 0 fail 1 || fail "fail 1"
st=$(dmsetup status rsm)
act=$(echo "$st" | t_tail_field migration_action)
[ "$act" = frozen ] || fail "migration_action $act with a member out (want frozen); status: ${st##*rainssd }"
tbl=$(dmsetup table rsm)
new=$(echo "$tbl" | awk -v s="$spare" '{ $7 = s; NF = 5 + '"$N"'; print }')
new+=" 5 rebuild 1 nosync tier_size $TIER"
dmsetup suspend rsm
dmsetup reload rsm --table "$new" || fail "reload with rebuild 1: $new"
dmsetup resume rsm || fail "resume with rebuild 1"
t_idle rsm 600 || fail "rebuild not done"
[ "$(t_status_field rsm 2)" = AAAA ] || fail "health after the rebuild: $(t_status_field rsm 2)"
# The reload dropped flush_tier (a message, not a table argument): again, to the end.
dmsetup message rsm 0 flush_tier || fail "flush_tier after the rebuild"
dmsetup message rsm 0 migration_rate 0 || fail "migration_rate 0"
for _ in $(seq 300); do
	[ "$(dmsetup status rsm | t_tail_field tier_stripes | cut -d/ -f1)" = 0 ] && break
	sleep 1
done
[ "$(dmsetup status rsm | t_tail_field tier_stripes | cut -d/ -f1)" = 0 ] ||
	fail "flush_tier after the rebuild left $(dmsetup status rsm | t_tail_field tier_stripes)"
dmsetup message rsm 0 fail 2 || fail "fail 2"
[ "$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)" = "$sum" ] ||
	fail "after the rebuild and member 2 failed the volume reads differently"
note "member 1 failed during flush_tier (frozen), rebuilt, the tier flushed, then member 2 failed: same md5"
dmsetup remove --retry rsm

# The table corrupt: fresh channels, a volume with rows in the tier.
"$CHANNELS" destroy >/dev/null 2>&1
t_channels $N --size-mb 64 --lat-us 100
echo "$(t_table $CHUNK "$T_LEN" nosync tier_size $TIER)" | dmsetup create rsm || fail "create (3)"
t_fio fill3 $v --rw=randwrite --bs=4k --size=16m --iodepth=16 --number_ios=1500
sum=$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)
line=$(dmsetup table rsm)
dmsetup remove --retry rsm
tstart=$(( 32768 + (sz - 32768 - TIER) / CHUNK * CHUNK ))
blocks=$("$CHECK" --dump-tier --json "${T_DEVS[@]}" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["tier"]["blocks"])' 2>/dev/null) ||
	blocks=""
[ -n "$blocks" ] || fail "no table layout from rainssd-check --dump-tier --json"
# flip_block <copy> <member...>: a byte of block 2 (the first block of records).
flip_block() {
	local c=$1 d
	shift
	for d in "$@"; do
		t_poke "$d" $(( (tstart + (c * blocks + 2) * 8) * 512 + 300 )) '\xff'
	done
}
members_sum() { for d in "${T_DEVS[@]}"; do dd if="$d" bs=1M iflag=direct status=none | md5sum; done; }
# Both copies of the block on one member: the others hold it; activates.
flip_block 0 "${T_DEVS[1]}"
flip_block 1 "${T_DEVS[1]}"
echo "$line" | dmsetup create rsm || fail "a block corrupt on one member: refused"
[ "$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)" = "$sum" ] ||
	fail "a block corrupt on one member: reads differently"
dmsetup remove --retry rsm
note "both copies of a table block corrupt on one member: activated from the others, same md5"
# Copy 0 of the block on every member: if it held the committed generation the
# table is refused (never an older generation in its place), else it activates.
flip_block 0 "${T_DEVS[@]}"
before=$(members_sum)
if echo "$line" | dmsetup create rsm 2>/tmp/create.err; then
	[ "$(dd if=$v bs=1M count=16 iflag=direct status=none | md5sum)" = "$sum" ] ||
		fail "copy 0 corrupt everywhere, activated: reads differently"
	dmsetup remove --retry rsm
	note "copy 0 of a table block corrupt on every member: it was the older copy; activated, same md5"
	# That activation wrote the table again (copy 0 whole once more): both now.
	flip_block 0 "${T_DEVS[@]}"
	flip_block 1 "${T_DEVS[@]}"
	before=$(members_sum)
	echo "$line" | dmsetup create rsm 2>/tmp/create.err && fail "both copies corrupt: the table was trusted"
else
	note "copy 0 of a table block corrupt on every member: it held the committed generation; refused"
fi
# dmsetup reports EINVAL; the reason (ti->error) is in the kernel log.
klog=$(dmesg | tail -20)
grep -q 'Tier mapping table' <<<"$klog" || fail "refusal without the tier's error: $(tail -3 <<<"$klog")"
dmsetup remove --retry rsm >/dev/null 2>&1 || true
[ "$before" = "$(members_sum)" ] || fail "a refused activation wrote to the members"
note "the committed generation of a block corrupt everywhere: refused ($(grep -o 'tier table: [^;]*' <<<"$klog" | tail -1)), members unchanged"
# Another tier size than the superblocks': refused.
bad=$(echo "$line" | sed "s/tier_size $TIER/tier_size $((TIER * 2))/")
echo "$bad" | dmsetup create rsm 2>/tmp/create.err && fail "another tier_size accepted"
dmesg | tail -5 | grep -qi "tier differs from the table's tier_size" ||
	fail "tier_size refusal: $(dmesg | tail -3)"
note "another tier_size: refused"
