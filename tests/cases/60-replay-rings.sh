#!/bin/bash
# The replay of the degraded-write log after a power cut reads only the
# rings that can hold a record it needs (a review of 1.11.19).
#
# 1. Member 1 failed, writes (their records on the rings of members 0, 2
#    and 3), a power cut; then member 1 replaced by a device whose ring
#    area is a copy of member 2's ring (a device that held another member,
#    as a disk pulled from the same volume), given with `rebuild 1`. The
#    activation must replay and start the rebuild, and the volume must read
#    back as written once it is rebuilt. Up to 1.11.19 the replay read the
#    new device's ring too and refused the activation ("log replay failed
#    (-22)": records of the current spell whose parity is not there).
# 2. No member out, writes, a power cut; then the volume activated with
#    member 3 missing and member 2's ring unreadable (an error segment over
#    it). No member was out before the cut, so nothing can be replayed: the
#    activation must go on (member 3's chunks in the dirty regions read as
#    I/O errors, the rest as written). Up to 1.11.19 the ring was read and
#    the activation refused ("log replay failed (-5)").
#
# Environment: PARTS (default 12).
. "$REPO/tests/lib.sh"
N=4
CHUNK=16
V=rsrr
RING=8192		# the ring: 8 MiB from sector 8192 (rainssd-sb.h)
RING_LEN=16384

# written <part>: new members, a volume over them; its pattern in /tmp/rr.pat
written() {
	dmsetup remove --retry $V >/dev/null 2>&1 || true
	t_linear_members rsrr $N
	T_CHUNK=$CHUNK
	LEN=$(t_usable $CHUNK)
	t_table $CHUNK "$LEN" nosync | dmsetup create $V || fail "$1: create"
	head -c $((4 << 20)) /dev/urandom >/tmp/rr.pat
	dd if=/tmp/rr.pat of=/dev/mapper/$V bs=64k oflag=direct conv=fsync status=none ||
		fail "$1: write the pattern"
}

# cut <part>: 4 KiB writes over the pattern's first MiB until a power cut
cut() {
	(while dd if=/tmp/rr.pat of=/dev/mapper/$V bs=4k count=256 oflag=direct status=none \
		2>/dev/null; do :; done) &
	sleep 2
	t_cut_members rsrr $N
	wait || true
	dmsetup remove --retry $V || fail "$1: remove after the cut"
	t_uncut_members rsrr $N
}

want() { case "${PARTS:-12}" in *$1*) return 0 ;; esac; return 1; }

# ---- 1. a rebuild onto a device holding another member's ring ----
if want 1; then
written "rebuild"
dmsetup message $V 0 fail 1 || fail "rebuild: fail 1"
cut "rebuild"
h=$(t_log_hdr /dev/mapper/rsrr2 0)
[ "${h:0:16}" = $T_LOG_MAGIC ] || fail "rebuild: no log record on member 2's ring ($h)"
t_wipe_sb /dev/mapper/rsrr1
dd if=/dev/mapper/rsrr2 of=/dev/mapper/rsrr1 bs=512 skip=$RING seek=$RING count=$RING_LEN \
	iflag=direct oflag=direct status=none || fail "rebuild: member 2's ring onto member 1"
mark=$(dmesg | wc -l)
t_table $CHUNK "$LEN" rebuild 1 | dmsetup create $V ||
	fail "rebuild: create with rebuild 1 refused: $(dmesg | tail -n +$((mark + 1)) | grep -E 'replay|refused' | tail -1)"
dmesg | tail -n +$((mark + 1)) | grep -E 'replayed' | sed 's/^.*\] */    # /'
t_idle $V 300 || fail "rebuild: the rebuild did not end ($(t_opstat $V sync_ratio))"
[ "$(t_status_field $V 2)" = AAAA ] || fail "rebuild: health $(t_status_field $V 2) after the rebuild"
cmp -s <(dd if=/dev/mapper/$V bs=64k count=64 iflag=direct status=none) /tmp/rr.pat ||
	fail "rebuild: the volume does not read back as written"
T_LEN=$LEN t_parity
note "rebuild: the new device's ring held member 2's records; replayed, rebuilt, reads back"
dmsetup remove --retry $V || fail "rebuild: remove"
fi

# ---- 2. no member out before the cut, one missing and a ring unreadable after ----
if want 2; then
written "healthy"
cut "healthy"
dmsetup suspend rsrr2 &&
	printf '0 %d linear /dev/rsch2 0\n%d %d error\n%d %d linear /dev/rsch2 %d\n' \
		$RING $RING $RING_LEN $((RING + RING_LEN)) $((SZ - RING - RING_LEN)) \
		$((RING + RING_LEN)) | dmsetup load rsrr2 &&
	dmsetup --noudevsync resume rsrr2 || fail "healthy: member 2's ring made unreadable"
mark=$(dmesg | wc -l)
t_table $CHUNK "$LEN" | sed "s#${T_DEVS[3]}#-#" | dmsetup create $V ||
	fail "healthy: create with member 3 missing refused: $(dmesg | tail -n +$((mark + 1)) | grep -E 'replay|refused' | tail -1)"
dmesg | tail -n +$((mark + 1)) | grep -E 'unclean|dirty' | sed 's/^.*\] */    # /'
# stripe 0: parity on member 3, its first data chunk on member 0 (md's layout)
cmp -s <(dd if=/dev/mapper/$V bs=4k count=1 iflag=direct status=none) \
	<(head -c 4096 /tmp/rr.pat) || fail "healthy: member 0's chunk of stripe 0 does not read back"
note "healthy: activated with member 3 missing and member 2's ring unreadable; member 0's data reads back"
dmsetup remove --retry $V || fail "healthy: remove"
fi
exit 0
