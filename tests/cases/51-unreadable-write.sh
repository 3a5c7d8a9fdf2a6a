#!/bin/bash
# A write is acknowledged only if what it wrote can be read back. Up to
# 1.11.14 a write whose member write failed counted only the failed members
# of the whole volume: in a stripe above a rebuild's checkpoint (the member
# being rebuilt holds nothing there yet) or in one whose parity was not yet
# resynced, its data then had no copy left, yet the write returned success
# and its bytes read back as EIO (a review of 1.11.14 found it; md fails
# such a write).
#
# 4 members behind dm-linear, 8 KiB chunks. Part 1: member 3 rebuilt at 1
# KiB/s and held (frozen), so that the last stripe is far above its
# checkpoint; part 2: a new volume whose initial resync runs at 1 KiB/s.
# In each, member 1's writes to its data area fail (dm-flakey error_writes;
# its metadata area works, else the region's bitmap write would fail it
# before the write is planned, which is then refused) and 4 KiB of
# member 1's chunk of the last stripe are written with O_DIRECT (the data
# and the parity, read-modify-write): the write must fail, or its bytes
# must read back (up to 1.11.14 it returned and the read failed). Then a
# write to member 2's chunk of that stripe (part 2) must be taken and read
# back: only what has no copy left fails.
. "$REPO/tests/lib.sh"
t_linear_members rsue 4
CH=16
# flakey <i> / linear <i>: member i's writes to its data area (past the
# 16 MiB of metadata: superblocks, bitmap, log) fail / work again
flakey() {
	printf '0 32768 linear /dev/rsch%s 0\n32768 %s flakey /dev/rsch%s 32768 0 3600 1 error_writes\n' \
		"$1" $((SZ - 32768)) "$1" >/tmp/ue.table
	dmsetup suspend "rsue$1" && dmsetup load "rsue$1" /tmp/ue.table &&
		dmsetup resume "rsue$1" || fail "flakey member $1"
}
linear() {
	dmsetup suspend "rsue$1" && dmsetup load "rsue$1" --table "0 $SZ linear /dev/rsch$1 0" &&
		dmsetup resume "rsue$1" || fail "linear member $1"
}
# write_last <part>: 4 KiB of random bytes at the start of the last
# stripe, whose chunk 0 is on member 1 (parity on member 3 - s % 4, data
# chunk k on the member after it + k): the write must fail, or read back.
write_last() {
	local s=$((T_LEN / (3 * CH) - 1)) st
	[ $(((3 - s % 4 + 1) % 4)) = 1 ] || fail "chunk 0 of stripe $s is not on member 1: the case needs a rework"
	flakey 1
	head -c 4096 /dev/urandom >/tmp/ue.in
	if dd if=/tmp/ue.in of=$v bs=4096 seek=$((s * 6)) count=1 oflag=direct conv=notrunc \
		status=none 2>/tmp/ue.err; then
		st=acknowledged
		dd if=$v of=/tmp/ue.out bs=4096 skip=$((s * 6)) count=1 iflag=direct status=none 2>/tmp/ue.err ||
			fail "$1: the write to stripe $s was acknowledged, and its bytes read back as: $(tail -1 /tmp/ue.err)"
		cmp -s /tmp/ue.in /tmp/ue.out || fail "$1: the write to stripe $s was acknowledged, and other bytes read back"
	else
		st="failed ($(tail -1 /tmp/ue.err))"
	fi
	note "$1: the write to member 1's chunk of stripe $s, its write failing: $st; health" \
		"$(t_status_field rsu 2), sync $(t_opstat rsu sync_ratio) $(t_opstat rsu sync_action)"
}

# ---- 1. above a rebuild's checkpoint ----
t_create rsu $CH
v=/dev/mapper/rsu
dmsetup message rsu 0 fail 3 || fail "fail 3"
dmsetup suspend rsu
t_table $CH "$T_LEN" rebuild 3 min_recovery_rate 1 max_recovery_rate 1 | dmsetup reload rsu ||
	fail "reload with rebuild 3"
dmsetup resume rsu || fail "resume with rebuild 3"
dmsetup message rsu 0 frozen || fail "frozen"
[ "$(t_status_field rsu 2)" = AAAa ] || fail "health $(t_status_field rsu 2): member 3 not rebuilding"
flakey 1
write_last "rebuilding"
dmsetup remove --retry rsu
linear 1

# ---- 2. above the initial resync's checkpoint ----
t_wipe_sb "${T_DEVS[@]}"
T_SYNC=1 t_create rsu $CH min_recovery_rate 1 max_recovery_rate 1
[ "$(t_opstat rsu sync_action)" = resync ] || fail "sync_action $(t_opstat rsu sync_action), want resync"
write_last "resyncing"
# A write the failed member does not hold must still be taken: member 2's
# chunk (chunk 1) of the same stripe, read back through the volume.
s=$((T_LEN / (3 * CH) - 1))
head -c 4096 /dev/urandom >/tmp/ue.in
dd if=/tmp/ue.in of=$v bs=4096 seek=$((s * 6 + 2)) count=1 oflag=direct conv=notrunc status=none ||
	fail "resyncing: a write to member 2's chunk of stripe $s failed with member 1 out"
dd if=$v of=/tmp/ue.out bs=4096 skip=$((s * 6 + 2)) count=1 iflag=direct status=none &&
	cmp -s /tmp/ue.in /tmp/ue.out || fail "resyncing: member 2's chunk of stripe $s does not read back"
note "resyncing: a write to member 2's chunk of the same stripe taken and read back"
dmsetup remove --retry rsu
