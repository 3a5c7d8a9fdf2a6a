#!/bin/bash
# A dirty region whose resync has ended is clean, even when a member fails,
# or the volume is suspended, while its last stretch is in flight. Up to
# 1.11.18 the region's bit went only at the next look for work after that
# stretch, which a member failing (every resync stops while one is out) or
# a suspend (no more work) never made: the region stayed dirty though its
# parity was right. The failed member's chunks there then read as I/O
# errors, and a rebuild onto a new device was held for good ("dirty stripes
# ... need member 3's data"); after a suspend the volume was not marked
# clean, and a later activation with a member out read them as errors too
# (a review of 1.11.18 found it).
#
# 4 members behind dm-linear, 8 KiB chunks, one stripe a region, resync at
# 1 KiB/s: stripes 0 and 1 written, a power cut, the volume back; region
# 0 is resynced at once and region 1 about 8 s later, with member 1
# suspended so that its read is held. Then:
#  1. member 3 failed with that read held, then member 1 resumed: stripe
#     1's chunk on member 3 (its parity is on member 2) must read back as
#     written, sync_action must not be frozen, and a new device for member
#     3 given with `rebuild 3` must be rebuilt;
#  2. the volume removed with that read held, then member 1 resumed: the
#     volume created again with member 3 missing must have no dirty region
#     left and read back as written;
#  3. `frozen` sent with that read held, then member 1 resumed: no region
#     left (sync_ratio whole), and with member 3 failed, stripes 0-1 read
#     back as written.
. "$REPO/tests/lib.sh"
CH=16
V=rscr
LEN=$((CH * 3 * 64))	# 64 stripes

member_reads() { t_member_reads $V "$1"; }

# held_resync <part>: new members, stripes 0-1 written (/tmp/cr.pat), a
# power cut, the volume back (resync at 1 KiB/s), region 0 resynced, member
# 1 suspended and region 1's read of it held
held_resync() {
	local t d
	dmsetup remove --retry $V >/dev/null 2>&1 || true
	t_linear_members rscr 4
	t_table $CH $LEN region_size $((CH * 3)) nosync | dmsetup create $V || fail "$1: create"
	head -c $((2 * 3 * CH * 512)) /dev/urandom >/tmp/cr.pat
	# rewritten until the cut, so that the regions are dirty on the members
	(while dd if=/tmp/cr.pat of=/dev/mapper/$V bs=48k oflag=direct status=none 2>/dev/null; do :; done) &
	sleep 1
	t_cut_members rscr 4
	wait || true
	dmsetup remove --retry $V || fail "$1: remove after the cut"
	t_uncut_members rscr 4
	t_table $CH $LEN min_recovery_rate 1 max_recovery_rate 1 | dmsetup create $V ||
		fail "$1: create after the cut"
	for t in $(seq 100); do
		d=$(t_opstat $V sync_ratio | cut -d/ -f1)
		[ "$d" -gt 0 ] && break
		sleep 0.1
	done
	[ "$d" -gt 0 ] || fail "$1: no dirty region resynced after 10 s ($(t_opstat $V sync_ratio) $(t_opstat $V sync_action))"
	[ "$(t_opstat $V sync_action)" = resync ] ||
		fail "$1: sync_action $(t_opstat $V sync_action) with region 1 left, want resync"
	t_hold_reads $V rscr1 1 "$1 (region 1's resync)"
	note "$1: region 0 resynced, region 1's read of member 1 held"
}

# released <part>: member 1 resumed, and its held read ended
released() {
	local t
	dmsetup resume rscr1 || fail "$1: resume member 1"
	for t in $(seq 100); do
		[ "$(member_reads 1)" = 0 ] && return 0
		sleep 0.1
	done
	fail "$1: member 1's read still in flight 10 s after its resume"
}

# same <part>: stripes 0-1 read back through the volume as written
same() {
	dd if=/dev/mapper/$V of=/tmp/cr.out bs=48k count=1 iflag=direct status=none 2>/tmp/cr.err ||
		fail "$1: stripes 0-1 do not read back: $(tail -1 /tmp/cr.err)"
	cmp -s /tmp/cr.pat /tmp/cr.out || fail "$1: stripes 0-1 read back other bytes"
}

# ---- 1. a member fails during the region's last stretch ----
held_resync "member failed"
dmsetup message $V 0 fail 3 || fail "fail 3"
released "member failed"
[ "$(t_status_field $V 2)" = AAAD ] || fail "member failed: health $(t_status_field $V 2), want AAAD"
same "member failed"
[ "$(t_opstat $V sync_action)" = idle ] ||
	fail "member failed: sync_action $(t_opstat $V sync_action) ($(t_opstat $V sync_ratio)) after the last region's resync, want idle"
note "member failed: member 3's chunk of stripe 1 rebuilt from the resynced parity; sync_action idle"
dmsetup remove --retry $V || fail "member failed: remove"
t_wipe_sb "${T_DEVS[3]}"
dd if=/dev/zero of="${T_DEVS[3]}" bs=1M count=1 seek=16 oflag=direct status=none
t_table $CH $LEN rebuild 3 | dmsetup create $V || fail "member failed: create with rebuild 3"
t_idle $V 60 || fail "member failed: the rebuild of member 3 did not end ($(t_opstat $V sync_action) $(t_opstat $V sync_ratio); $(dmesg | grep -E 'need member|rebuild is held' | tail -1))"
[ "$(t_status_field $V 2)" = AAAA ] || fail "member failed: health $(t_status_field $V 2) after the rebuild"
same "rebuilt"
T_LEN=$LEN T_CHUNK=$CH t_parity
note "member failed: member 3 rebuilt onto a new device, stripes 0-1 read back"
dmsetup remove --retry $V || fail "rebuilt: remove"

# ---- 2. a suspend during the region's last stretch ----
held_resync "removed"
dmsetup remove --retry $V >/tmp/cr.rm 2>&1 &
rm_pid=$!
# the remove's presuspend waits for the held resync step (rs_sync_stop)
for t in $(seq 300); do
	grep -qs 'rs_sync_stop' /proc/$rm_pid/stack /proc/$rm_pid/wchan && break
	kill -0 $rm_pid 2>/dev/null || fail "removed: dmsetup remove ended with member 1's read held: $(cat /tmp/cr.rm)"
	sleep 0.1
done
grep -qs 'rs_sync_stop' /proc/$rm_pid/stack /proc/$rm_pid/wchan ||
	fail "removed: the remove is not waiting for the resync step after 30 s: $(cat /proc/$rm_pid/wchan 2>/dev/null)"
dmsetup resume rscr1 || fail "removed: resume member 1"
wait $rm_pid || fail "removed: dmsetup remove failed: $(cat /tmp/cr.rm)"
mark=$(dmesg | wc -l)
t_table $CH $LEN | sed "s#${T_DEVS[3]}#-#" | dmsetup create $V || fail "removed: create with member 3 missing"
if dmesg | tail -n +$((mark + 1)) | grep -q 'dirty region(s) not resynced'; then
	fail "removed: $(dmesg | tail -n +$((mark + 1)) | grep 'dirty region(s) not resynced' | tail -1)"
fi
[ "$(t_opstat $V sync_action)" = idle ] ||
	fail "removed: sync_action $(t_opstat $V sync_action) with member 3 missing, want idle"
same "removed"
note "removed: the volume was shut down clean; with member 3 missing, stripes 0-1 read back"
dmsetup remove --retry $V

# ---- 3. frozen during the region's last stretch ----
held_resync "frozen"
dmsetup message $V 0 frozen || fail "frozen"
released "frozen"
r=$(t_opstat $V sync_ratio)
[ "${r%/*}" = "${r#*/}" ] || fail "frozen: sync_ratio $r: a region left after the last one's resync ended"
dmsetup message $V 0 fail 3 || fail "frozen: fail 3"
same "frozen"
note "frozen: no region left ($r, $(t_opstat $V sync_action)); with member 3 failed, stripes 0-1 read back"
dmsetup remove --retry $V
