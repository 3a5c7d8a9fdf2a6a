#!/bin/bash
# A torn write of the degraded-write log that lands some of its blocks and
# not others, as a device may (a review of 1.11.17 found it). Member 2
# failed; two 4 KiB writes to member 2's chunk of stripe 0 (parity on
# member 3): v1 then v2, records x (block 0 of member 3's ring) and y
# (block 2), both done. 1,022 writes to stripe 4 (parity on member 3 too)
# fill the ring's lap 0 to block 2047. A power cut; then y's header is
# broken, as the first write of lap 1, torn over blocks 0-3, would leave it
# if it landed over y and not over x, with none of its own records whole.
#
# y's update was done: the parity on disk holds v2 for the failed member's
# chunk. The volume created again must read v2 there. Up to 1.11.17 replay
# trusted every whole record of the newest record's lap, took x for the
# newest of stripe 0 and wrote the parity of x's time: v1 read back, an
# acknowledged write lost. Since 1.11.18 replay trusts only the newest
# whole record and the records in use when it took its space, which it
# lists: stripe 4's last record alone (the kernel log says 1 replayed).
. "$REPO/tests/lib.sh"
N=4
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB
VOL=rslt
t_linear_members rslt $N
T_CHUNK=$CHUNK
line=$(t_table $CHUNK "" nosync)
echo "$line" | dmsetup create $VOL || fail "create"
v=/dev/mapper/$VOL
dmsetup message $VOL 0 fail 2 || fail "fail 2"

# Stripe 0: member 3 holds its parity, member 2 its third data chunk (md's
# left-symmetric layout), at volume byte 2 * 8 KiB.
X=$((2 * 8192))
head -c 4096 /dev/zero | tr '\0' '\021' >/tmp/lt.v1
head -c 4096 /dev/zero | tr '\0' '\042' >/tmp/lt.v2
dd if=/tmp/lt.v1 of=$v bs=4096 seek=$((X / 4096)) oflag=direct status=none || fail "v1"
dd if=/tmp/lt.v2 of=$v bs=4096 seek=$((X / 4096)) oflag=direct status=none || fail "v2"
t_counter_writes $v $((4 * 3 * 8192)) 4096 1022 || fail "the writes that fill lap 0"
# hdr_is <b> <seq> <stripe>: block b of member 3's ring holds that lap 0 record
hdr_is() {
	local h
	h=$(t_log_hdr "${T_DEVS[3]}" "$1")
	[ "${h:0:16}" = $T_LOG_MAGIC ] && [ "$(t_le "$h" 16 8)" = "$2" ] &&
		[ "$(t_le "$h" 24 8)" = "$3" ] && [ "$(t_le "$h" 32 4)" = 0 ] ||
		fail "block $1 of member 3's ring is not lap 0's record $2 of stripe $3 ($h): the case needs a rework"
}
hdr_is 0 1 0
hdr_is 2 2 0
hdr_is 2046 1024 4

t_cut_members rslt $N
dmsetup remove --retry $VOL >/dev/null 2>&1 || true
dmsetup info $VOL >/dev/null 2>&1 && fail "the volume cannot be removed after the cut"
t_uncut_members rslt $N
# y torn: its stripe field (header bytes 24-31) overwritten
printf '\377\377\377\377\377\377\377\377' |
	dd of="${T_DEVS[3]}" bs=1 seek=$((4194304 + 2 * 4096 + 24)) conv=notrunc,fsync status=none ||
	fail "tear y"
mark=$(dmesg | wc -l)
echo "$line" | dmsetup create $VOL || fail "created again: $(dmesg | tail -2)"
rep=$(dmesg | tail -n +$((mark + 1)) | grep -E 'logged stripe update\(s\) replayed' | sed 's/^.*\] *//')
note "$rep"
# stripe 4's last record alone (the newest whole one, which lists only itself)
[[ "$rep" = *": 1 logged stripe update(s) replayed" ]] || fail "replayed: '$rep', not stripe 4's record alone"
[ "$(t_status_field $VOL 2)" = AADA ] || fail "health $(t_status_field $VOL 2), not AADA"
got=$(dd if=$v bs=4096 skip=$((X / 4096)) count=1 iflag=direct status=none | od -An -tx1 -N4 | tr -d ' \n')
[ "$got" = 22222222 ] ||
	fail "member 2's chunk of stripe 0 reads $got..., not v2 (22...)$([ "$got" = 11111111 ] && echo ": v1, x replayed")"
cmp <(dd if=$v bs=4096 skip=$((X / 4096)) count=1 iflag=direct status=none) /tmp/lt.v2 ||
	fail "v2 does not read back whole"
got=$(dd if=$v bs=4096 skip=$((4 * 3 * 2)) count=1 iflag=direct status=none | od -An -tx1 -N16 | tr -d ' \n')
want=$(python3 -c "print((($((4 * 3 * 8192)) + 1021)).to_bytes(8, 'little').hex() + (4096).to_bytes(8, 'little').hex())")
[ "$got" = "$want" ] || fail "stripe 4 reads back $got, not its last write $want"
note "v2 reads back on the failed member's chunk; stripe 4's last write too"
dmsetup remove --retry $VOL
