#!/bin/bash
# A member that fails in the middle of a flush, or of the tier's mapping
# commit, must be failed in the superblocks before that flush completes:
# otherwise a power cut right after would bring it back in sync with the
# writes its cache lost, though the user's fsync had returned (1.11.4).
# Four null_blk channels with a volatile cache (cache_size), each behind a
# member that is dm-linear and, to fail it, becomes dm-flakey with
# error_writes (which fails flushes too). The superblock commits are held
# (debugfs hold_meta_commits) while member 2 fails:
#  1. an fsync of the volume: its flush to member 2 fails; when the fsync
#     returns, the superblocks on disk must say member 2 failed (the commits
#     are let go 3 s after it failed in memory).
#  2. with a RAID1 tier: 4 KiB O_DIRECT writes until one's copy on member
#     2 fails it (that write then waits for the commit, as every write that
#     leaves a failed member out does); then an fsync: its flush waits for
#     the tier's mapping commit, which must wait for the superblocks.
#  3. member 2 failed by message (its device still fine): an fsync's flush
#     to it must wait for the superblocks too. Up to 1.11.4 the flush's
#     clone for a member already failed in memory ended at once.
#  4. as 3, then every member's writes fail before the commits are let go:
#     no member takes the superblock (the volume is failed), and the fsync
#     waiting for it must fail. Up to 1.11.5 it returned success.
#  5. member 2 given as "-", the others' writes failing: a write fails the
#     volume, then an fsync must fail with EIO. Its share for member 2 (no
#     device) ends with the error once the volume is failed; the first
#     1.11.6 commits dereferenced that missing device there (found by review).
#     Then the failed volume suspended and resumed: the resume must succeed
#     and a read fail at once (up to 1.11.18 the resume failed and the
#     device, left suspended, held its I/O; found by review of 1.11.18).
# Up to 1.11.3 the first two fsyncs returned at once (a helper's review
# found the ordering missing), up to 1.11.4 the third.
#
# Environment: PARTS (12345: all, default; any of the digits: those).
. "$REPO/tests/lib.sh"
HOLD=/sys/kernel/debug/rainssd/hold_meta_commits
[ -w $HOLD ] || fail "no $HOLD (dm-rainssd 1.11.4 with debugfs)"
trap 'echo 0 >$HOLD 2>/dev/null' EXIT
CHUNK=16
N=4
VOL=rsco

cached_members() {
	local i
	t_teardown >/dev/null 2>&1
	"$CHANNELS" create $N --size-mb 64 --cache-mb 16 >/dev/null || fail "channels with a cache"
	SZ=$(blockdev --getsz /dev/rsch0)
	T_DEVS=()
	for i in $(seq 0 $((N - 1))); do
		echo "0 $SZ linear /dev/rsch$i 0" | dmsetup create rsco$i || fail "member $i"
		T_DEVS+=(/dev/mapper/rsco$i)
	done
	[ "$(cat /sys/block/"$(basename "$(readlink -f /dev/mapper/rsco0)")"/queue/write_cache)" = \
		"write back" ] || fail "the members have no volatile cache: the case tests nothing"
}

# break_member <i>: every write to it, flushes included, fails from now on
break_member() {
	dmsetup suspend --noflush rsco$1 &&
		dmsetup load rsco$1 --table "0 $SZ flakey /dev/rsch$1 0 0 3600 1 error_writes" &&
		dmsetup resume rsco$1 || fail "member $1 as dm-flakey error_writes"
}

# wait_go <what>: until the python the caller started is at its fsync
wait_go() {
	local t
	for t in $(seq 300); do
		[ -e /tmp/co.go ] && return 0
		sleep 0.2
	done
	echo 0 >$HOLD
	fail "$1: the fsync did not start: $(cat /tmp/co.err)"
}

# fsync_waits <what>: with the commits held, an fsync of the volume; when it
# returns, the superblocks on member 0 must already say member 2 failed.
# The commits are let go 3 s after member 2 is failed in memory (an fsync
# that did not wait for them has returned by then, and is caught by what
# the superblocks still say).
fsync_waits() {
	local f t
	rm -f /tmp/co.state /tmp/co.go
	python3 - "$VOL" >/tmp/co.err 2>&1 <<'PY' &
import mmap, os, struct, sys
fd = os.open("/dev/mapper/" + sys.argv[1], os.O_WRONLY)
open("/tmp/co.go", "w").close()
os.fsync(fd)
# At once: member 2's state in the newest superblock copy on member 0
# (dm-rainssd/rainssd-sb.h: events at 32, the member table at 136).
m0 = os.open("/dev/mapper/rsco0", os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 8192)
os.preadv(m0, [buf], 2048 * 512)
copies = [bytes(buf[o:o + 4096]) for o in (0, 4096)]
newest = max((c for c in copies if c[:8] == b"RNSDSSB1"),
             key=lambda c: struct.unpack_from("<Q", c, 32)[0])
state = newest[136 + 16 * 2]
open("/tmp/co.state", "w").write(["none", "in_sync", "failed", "rebuilding"][state] + "\n")
PY
	f=$!
	# Python takes seconds to start under TCG: the 3 s count from its fsync.
	wait_go "$1"
	for t in $(seq 300); do
		[ "$(t_status_field $VOL 2)" = AADA ] && break
		sleep 0.2
	done
	[ "$(t_status_field $VOL 2)" = AADA ] ||
		{ echo 0 >$HOLD; fail "$1: member 2 not failed (health $(t_status_field $VOL 2))"; }
	sleep 3
	echo 0 >$HOLD
	wait $f || fail "$1: the fsync or the examine failed: $(cat /tmp/co.err)"
	[ "$(cat /tmp/co.state)" = failed ] ||
		fail "$1: the fsync returned while the superblocks said member 2 was $(cat /tmp/co.state)"
	note "$1: when the fsync returned the superblocks said member 2 failed"
}

# bits_clear: until no member's first bitmap block (sector 4096) holds a
# set bit: the bitmap's daemon has cleared the written region's bit (2-4 s
# after the write) on every member. At most 15 s.
bits_clear() {
	local t d n
	for t in $(seq 75); do
		n=0
		for d in "${T_DEVS[@]}"; do
			[ "$(dd if="$d" bs=4096 skip=512 count=1 iflag=direct status=none |
				tr -d '\0' | wc -c)" = 0 ] || n=$((n + 1))
		done
		[ $n = 0 ] && return 0
		sleep 0.2
	done
	fail "$n members' bitmaps still hold a set bit 15 s after the write"
}

# written_volume [nowait]: a volume without a tier on cached members, 1 MiB
# written and flushed, its bitmap's bits cleared (2-4 s; polled, it was a
# 6 s sleep) so that nothing but what the part does next makes a commit;
# with nowait not waited for (part 5 removes the volume at once)
written_volume() {
	cached_members
	echo "0 $(t_usable $CHUNK) rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" |
		dmsetup create $VOL || fail "create"
	dd if=/dev/urandom of=/dev/mapper/$VOL bs=64k count=16 oflag=direct conv=fsync \
		status=none || fail "write"
	[ "${1:-}" = nowait ] || bits_clear
}

# ---- 1. a member's flush fails ----
want() { case "${PARTS:-12345}" in *$1*) return 0 ;; esac; return 1; }
if want 1; then
written_volume
echo 1 >$HOLD
break_member 2
fsync_waits "a flush that failed member 2"
dmesg | grep -q "member 2 (dm-[0-9]*) failed: flush error" ||
	fail "member 2 was not failed by the flush: $(dmesg | grep 'member 2' | tail -1)"
[ "$(t_status_field $VOL 2)" = AADA ] || fail "health $(t_status_field $VOL 2), not AADA"
dmsetup remove --retry $VOL || fail "remove"
fi

# ---- 2. the tier's commit after a copy failed a member ----
if want 2; then
cached_members
echo "0 $(( (SZ - 32768 - 16384) / CHUNK * CHUNK * (N - 1) )) rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync tier_size 16384" |
	dmsetup create $VOL || fail "create with a tier"
dd if=/dev/urandom of=/dev/mapper/$VOL bs=64k count=16 oflag=direct conv=fsync status=none ||
	fail "write"
echo 1 >$HOLD
break_member 2
# 4 KiB writes to different stripes: each lands in the tier, its copies on
# two members; one that picks member 2 fails it (and then waits).
dd if=/dev/urandom of=/dev/mapper/$VOL bs=4k count=64 seek=1024 oflag=direct status=none &
w=$!
for t in $(seq 150); do
	[ "$(t_status_field $VOL 2)" = AADA ] && break
	sleep 0.2
done
[ "$(t_status_field $VOL 2)" = AADA ] ||
	{ echo 0 >$HOLD; fail "no tier write picked member 2 (health $(t_status_field $VOL 2))"; }
fsync_waits "the tier's commit after member 2 failed"
wait $w || fail "the tier writes failed"
dmsetup remove --retry $VOL || fail "remove"
fi

# ---- 3. a member failed by message before the fsync ----
if want 3; then
written_volume
echo 1 >$HOLD
dmsetup message $VOL 0 fail 2 || fail "message fail 2"
fsync_waits "a flush after member 2 was failed by message"
dmsetup remove --retry $VOL || fail "remove"
fi

# ---- 4. the commit an fsync waits for fails on every member ----
if want 4; then
written_volume
echo 1 >$HOLD
dmsetup message $VOL 0 fail 2 || fail "message fail 2"
rm -f /tmp/co.go /tmp/co.rc
python3 - "$VOL" >/tmp/co.err 2>&1 <<'PY' &
import os, sys
fd = os.open("/dev/mapper/" + sys.argv[1], os.O_WRONLY)
open("/tmp/co.go", "w").close()
try:
    os.fsync(fd)
    rc = "returned"
except OSError as e:
    rc = "failed: " + os.strerror(e.errno)
open("/tmp/co.rc", "w").write(rc + "\n")
PY
f=$!
wait_go "part 4"
sleep 3
[ -e /tmp/co.rc ] && { echo 0 >$HOLD; fail "the fsync $(cat /tmp/co.rc) with the commits held"; }
for i in 0 1 3; do break_member $i; done
mark=$(dmesg | wc -l)
echo 0 >$HOLD
wait $f
[ "$(cat /tmp/co.rc 2>/dev/null)" = "failed: Input/output error" ] ||
	fail "the fsync waiting for a commit no member took: $(cat /tmp/co.rc 2>/dev/null) $(cat /tmp/co.err)"
dmesg | tail -n +$((mark + 1)) | grep -q "no member took the superblock" ||
	fail "the volume was not failed"
note "the fsync waiting for a commit no member took: $(cat /tmp/co.rc)"
dmsetup remove --retry $VOL || fail "remove"
fi

# ---- 5. an fsync of a failed volume with a member given as - ----
if want 5; then
written_volume nowait
dmsetup remove --retry $VOL || fail "remove"
echo "0 $(t_usable $CHUNK) rainssd $CHUNK $N ${T_DEVS[0]} ${T_DEVS[1]} - ${T_DEVS[3]} 1 nosync" |
	dmsetup create $VOL || fail "create with - for member 2"
for i in 0 1 3; do break_member $i; done
mark=$(dmesg | wc -l)
dd if=/dev/urandom of=/dev/mapper/$VOL bs=4k count=1 oflag=direct status=none 2>/dev/null &&
	fail "a write with every member failing went through"
dmesg | tail -n +$((mark + 1)) | grep -q "no member took the superblock" ||
	fail "the volume was not failed: $(dmesg | tail -n 2)"
rc=$(python3 - "$VOL" 2>&1 <<'PY'
import os, sys
fd = os.open("/dev/mapper/" + sys.argv[1], os.O_WRONLY)
try:
    os.fsync(fd)
    print("returned")
except OSError as e:
    print("failed: " + os.strerror(e.errno))
PY
)
[ "$rc" = "failed: Input/output error" ] || fail "an fsync of the failed volume: $rc"
note "an fsync of the failed volume with member 2 given as -: $rc"
# A suspend and a resume of the failed volume (LVM and udev do that): the
# resume succeeds and a read fails at once (up to 1.11.18 the resume failed
# on its commit, and the device stayed suspended, holding its I/O).
dmsetup suspend $VOL || fail "suspend the failed volume"
dmsetup resume $VOL || fail "resume the failed volume: $(dmesg | grep rainssd | tail -2)"
rc=0
timeout 30 dd if=/dev/mapper/$VOL of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a read of the failed volume after a resume: exit $rc"
note "the failed volume suspended and resumed: a read fails at once (exit $rc)"
dmsetup remove --retry $VOL || fail "remove"
fi
exit 0
