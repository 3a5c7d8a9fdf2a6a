#!/bin/bash
# A rebuild copies the rows a stripe has in the RAID1 tier from their other
# copy: only those rows (1.11.13). Up to 1.11.12 it read the whole chunk
# slot, so a read error in a part of the slot that holds nothing stopped
# the rebuild of that member for good, its rows never copied, the volume
# left one failure from losing them (found by review of 1.11.10).
#
# Four members behind dm-dust (512-byte blocks), a RAID1 tier, 8 KiB
# chunks (two 4 KiB rows). 4 KiB written at the start of 8 stripes never
# written: each stripe enters the tier with row 0 of chunk 0 only. The
# volume stopped, rainssd-check --dump-tier gives stripe 0's two copies of
# chunk 0; the sector just after row 0 (row 1, nothing in it) made
# unreadable in copy A's slot. The volume again, copy B's member failed and
# replaced by a blank device (rebuild): the rebuild must end, with every
# member in sync; the bad sector, never read, is still there; then copy
# A's member failed: the volume reads back as written from the rebuilt
# copies.
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
TIER=16384
VOL=rstd
t_channels $((N + 1)) --size-mb 64 --lat-us 100
raw=("${T_DEVS[@]}")
spare=${raw[$N]}
T_DEVS=()
for i in $(seq 0 $((N - 1))); do
	echo "0 $(blockdev --getsz "${raw[$i]}") dust ${raw[$i]} 0 512" | dmsetup create rstd$i ||
		fail "dm-dust member $i"
	T_DEVS+=(/dev/mapper/rstd$i)
done
sz=$(blockdev --getsz "${T_DEVS[0]}")
LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
v=/dev/mapper/$VOL
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync tier_size $TIER" | dmsetup create $VOL ||
	fail "create with a tier"
head -c $((1 << 20)) /dev/zero >/tmp/ts.pat
for s in 0 1 2 3 4 5 6 7; do
	head -c 4096 /dev/urandom | dd of=/tmp/ts.pat bs=4096 seek=$((s * 6)) conv=notrunc status=none
	dd if=/tmp/ts.pat of=$v bs=4096 skip=$((s * 6)) seek=$((s * 6)) count=1 oflag=direct \
		status=none || fail "write to stripe $s"
done
[ "$(dmsetup status $VOL | t_tail_field tier_stripes | cut -d/ -f1)" -ge 8 ] ||
	fail "the writes did not enter the tier: $(dmsetup status $VOL | t_tail_field tier_stripes)"
dmsetup remove --retry $VOL || fail "remove"

read -r a sa b sb rows < <("$CHECK" --dump-tier --json "${T_DEVS[@]}" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["records"]:
    if r["stripe"] == 0 and r["state"] == "in_tier":
        c = r["chunks"][0]
        print(c["copies"][0]["member"], c["copies"][0]["sector"],
              c["copies"][1]["member"], c["copies"][1]["sector"], c["rows"])')
[ -n "${rows:-}" ] || fail "no record of stripe 0 in rainssd-check --dump-tier"
[ "$rows" = 0 ] || fail "stripe 0's chunk 0 has rows $rows in the tier, not just row 0"
note "stripe 0, chunk 0: copy A on member $a at sector $sa, copy B on member $b at $sb, row 0"
# Row 1 of copy A's slot (sectors 8-15 of it): nothing of stripe 0's there.
dmsetup message rstd$a 0 addbadblock $((sa + 8)) || fail "addbadblock"
dmsetup message rstd$a 0 enable || fail "dm-dust enable"

echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync tier_size $TIER" | dmsetup create $VOL ||
	fail "create again"
cmp <(dd if=$v bs=1M count=1 iflag=direct status=none) /tmp/ts.pat || fail "not as written"
dmsetup message $VOL 0 fail "$b" || fail "fail $b"
new=$(dmsetup table $VOL | awk -v s="$spare" -v m="$b" '{ $(6 + m) = s; NF = 5 + '"$N"'; print }')
new+=" 5 rebuild $b nosync tier_size $TIER"
dmsetup suspend $VOL || fail "suspend"
dmsetup reload $VOL --table "$new" || fail "reload with rebuild $b: $new"
dmsetup resume $VOL || fail "resume with rebuild $b"
t_idle $VOL 120 ||
	fail "the rebuild of member $b did not end in 120 s: $(dmsetup status $VOL | t_tail_field sync_ratio), $(dmesg | grep rainssd | tail -1)"
health=$(t_status_field $VOL 2)
[ "$health" = AAAA ] ||
	fail "health $health after the rebuild of member $b: $(dmesg | grep rainssd | tail -2)"
left=$(dmsetup message rstd$a 0 countbadblocks)
[[ $left == *"1 badblock"* ]] || fail "member $a: the bad sector was not left alone ($left)"
note "member $b rebuilt (AAAA), the bad sector in copy A's unused row never read ($left)"
dmsetup message $VOL 0 fail "$a" || fail "fail $a"
cmp <(dd if=$v bs=1M count=1 iflag=direct status=none) /tmp/ts.pat ||
	fail "with member $a failed the volume does not read back as written"
note "member $a failed: the rebuilt copies read back as written"
exit 0
