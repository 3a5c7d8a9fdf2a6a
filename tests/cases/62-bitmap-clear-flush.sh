#!/bin/bash
# A member's cache flush before a bitmap clear fails. Since 1.11.21 every
# member in service flushes its cache before a write-intent bitmap block
# that clears bits is written (case 33 part 3 shows why). A member whose
# flush fails there is failed. The superblocks must say so before any
# member's copy of that block is written: otherwise a power cut in between
# would bring the member back in sync, with a region the others call clean
# whose writes its cache lost.
#
# 4 members behind dm-linear. The superblock commits are held
# (hold_meta_commits) and member 2's flush before a clear is made to fail
# (fail_bitmap_flush); then stripe 0 is written whole and synced (24 KiB,
# one chunk on each of members 0-2), so region 0's bit is on disk. After
# 6 s (the daemon's time to clear the region):
#  - member 2 must be failed in memory (health AADA);
#  - member 0's superblock must still say member 2 is in sync;
#  - member 0's bitmap copy must still hold region 0's bit.
# Then the commits are let go:
#  - member 0's superblock must say member 2 failed;
#  - its bitmap bit must be clear;
#  - the volume must read back as written (member 2's chunk rebuilt).
. "$REPO/tests/lib.sh"
CH=16
V=rsbf
t_knobs hold_meta_commits fail_bitmap_flush

bit0() {	# region 0's bit in member <i>'s bitmap copy
	dd if="${T_DEVS[$1]}" bs=4096 skip=$((4096 / 8)) count=1 iflag=direct status=none |
		od -An -t u1 -N 1 | awk '{print $1 % 2}'
}

t_linear_members rsbf 4
t_table $CH $((CH * 3 * 64)) nosync | dmsetup create $V || fail "create"
echo 1 >"$T_DBG/hold_meta_commits"
echo 4 >"$T_DBG/fail_bitmap_flush"
head -c 24576 /dev/urandom >/tmp/bf.pat
dd if=/tmp/bf.pat of=/dev/mapper/$V bs=24576 oflag=direct conv=fsync status=none || fail "write"
[ "$(bit0 0)" = 1 ] || fail "region 0's bit not on member 0 after the write"
sleep 6
h=$(t_status_field $V 2)
s=$(t_sb_state "${T_DEVS[0]}" 2)
b=$(bit0 0)
note "commits held: health $h, member 0's superblock says member 2 $s, its region 0 bit $b"
[ "$h" = AADA ] || fail "the flush before the clear failed on member 2, but health is $h"
[ "$s" = in_sync ] || fail "member 0's superblock says member 2 $s while the commits are held"
[ "$b" = 1 ] || fail "region 0's clear written to member 0 before the superblocks said member 2 failed"
dmesg | grep -q "member 2 .*failed: flush error before a bitmap clear" ||
	fail "no 'flush error before a bitmap clear' in the kernel log"
echo 0 >"$T_DBG/hold_meta_commits"
echo 0 >"$T_DBG/fail_bitmap_flush"
for t in $(seq 50); do
	[ "$(t_sb_state "${T_DEVS[0]}" 2)" = failed ] && [ "$(bit0 0)" = 0 ] && break
	sleep 0.2
done
s=$(t_sb_state "${T_DEVS[0]}" 2)
b=$(bit0 0)
note "commits let go: member 0's superblock says member 2 $s, its region 0 bit $b"
[ "$s" = failed ] || fail "member 0's superblock says member 2 $s after the commits went on"
[ "$b" = 0 ] || fail "region 0's bit still on member 0 after the commits went on"
cmp -s /tmp/bf.pat <(dd if=/dev/mapper/$V bs=24576 count=1 iflag=direct status=none) ||
	fail "the volume does not read back as written with member 2 failed"
dmsetup remove --retry $V || fail "remove"
exit 0
