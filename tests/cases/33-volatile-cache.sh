#!/bin/bash
# Members with a volatile write cache, lost at a power cut: each member is
# a dm-log-writes device over its null_blk channel, logging to a second
# channel, which logs a write only once a flush after it completed (FUA at
# once); replaying every member's log to a mark gives the members as a
# power cut there would have left them. Two orderings the superblock and
# the degraded-write log rely on (both found by a helper's review of
# 1.11.3, neither seen by the power cuts of case 22, whose members have no
# cache):
#  1. rebuild: member 1 zeroed (its superblock with it) and rebuilt onto
#     with `rebuild 1`; once the rebuild is done (member 1 in sync in the
#     superblock) a mark. Replayed to it: every byte reads back as written,
#     with every read direct and then with member 0 failed. Up to 1.11.3
#     the superblock saying so was written with FUA alone, and the rebuilt
#     chunks, never flushed, were not on member 1: the volume did not read
#     back as written.
#  2. degraded writes: member 2 failed; 4 KiB written to member 0's chunk of
#     stripe 0 and then 4 KiB to member 1's (O_DIRECT, no fsync), each a
#     logged update; a mark at once. Replayed to it, the log replay remakes
#     the stripe's parity from the second record, whose partial parity holds
#     the first write's bytes: member 2's chunk, rebuilt from it, must read
#     as written before. Up to 1.11.3 the first write's data was not flushed
#     before the second record was on disk: member 2's chunk read back as
#     the XOR of the first write's old and new bytes with its own.
#  3. a bitmap clear while a member is rebuilt (found by a review of
#     1.11.20): member 1 zeroed and rebuilt onto, the rebuild held
#     (`frozen`) once the superblocks put its checkpoint past stripe 2;
#     4 KiB written to member 0's chunk of stripe 2 (its parity on member
#     1, below the checkpoint: no log record), member 1's I/O held (its
#     device suspended) before the bitmap's daemon clears the region, a
#     mark once the daemon has had its time. Replayed to it, stripe 2 must
#     be torn (the new data on member 0, the old parity on member 1: else
#     the part tests nothing), and once the volume is back (member 1 still
#     rebuilding) and member 2 failed, member 2's chunk must read as
#     written before. Up to 1.11.20 the clear was written to members 0, 2
#     and 3 with only their own flush before it: the activation, which
#     reads no copy of the rebuilding member's, found the region clean, did
#     not resync it, and member 2's chunk read back made up.
#  4. the same with member 1 failed by message (the superblock commits
#     held: the superblocks still say it is rebuilt) instead of its device
#     suspended, and the mark taken while the commits are held. The first
#     form of 1.11.21 flushed every member in service before the clear,
#     but a member failed only in memory was neither flushed nor waited
#     for: after the replay the superblocks say member 1 is rebuilt, its
#     copy is not read, the region is clean and member 2's chunk read back
#     made up (found by the review of that form).
#
# Environment: PARTS (1234: all, default; any of the digits: those).
. "$REPO/tests/lib.sh"
LR=$REPO/userspace-tools/crash/rainssd-logreplay
[ -x "$LR" ] || fail "$LR not built (make -C userspace-tools)"
CHUNK=16
N=4
VOL=rsvc
LEN=$((341 * CHUNK * (N - 1)))		# 8 MiB less a stripe: 341 stripes
BYTES=$((LEN * 512))

# logged: channels, log channels, log-writes members rsvc0-3; T_DEVS and LINE.
logged() {
	local i
	t_teardown >/dev/null 2>&1
	t_channels $N --size-mb 64 --lat-us 300 --qd 8
	"$CHANNELS" create $N --prefix rsx --size-mb 256 >/dev/null || fail "log channels"
	SZ=$(blockdev --getsz /dev/rsch0)
	for i in $(seq 0 $((N - 1))); do
		echo "0 $SZ log-writes /dev/rsch$i /dev/rsx$i" | dmsetup create rsvc$i ||
			fail "log-writes member $i"
	done
	T_DEVS=(/dev/mapper/rsvc{0..3})
}

# replayed <mark>: every member's log replayed to <mark> onto fresh channels.
replayed() {
	local i
	dmsetup remove --retry $VOL >/dev/null 2>&1
	for i in $(seq 0 $((N - 1))); do dmsetup remove --retry rsvc$i || fail "remove rsvc$i"; done
	"$CHANNELS" destroy >/dev/null 2>&1
	t_channels $N --size-mb 64 --lat-us 300 --qd 8
	for i in $(seq 0 $((N - 1))); do
		"$LR" replay /dev/rsx$i /dev/rsch$i --to-mark "$1" >/tmp/vc.replay 2>&1 ||
			fail "replay of member $i to $1: $(tail -1 /tmp/vc.replay)"
	done
	T_DEVS=(/dev/rsch{0..3})
}

mark() {	# every member's log, at once
	local i pids=()
	for i in $(seq 0 $((N - 1))); do
		dmsetup message rsvc$i 0 mark "$1" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || fail "mark $1"; done
}

want() { case ${PARTS:-1234} in *"$1"*) return 0 ;; esac; return 1; }

# same <what> <file> <offset> <bytes>: the volume's bytes there are the file's.
same() {
	cmp -s <(dd if=/dev/mapper/$VOL bs=4096 iflag=direct skip=$(($3 / 4096)) count=$(($4 / 4096)) \
		status=none) <(dd if="$2" bs=4096 skip=$(($3 / 4096)) count=$(($4 / 4096)) status=none) ||
		fail "$1: the volume's bytes at $3 (+$4) are not what was written"
}

# blank_member1: logged members, a volume on them holding /tmp/vc.pat,
# removed; then member 1 replaced by a blank device (zeros written and
# flushed).
blank_member1() {
	logged
	echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
	dd if=/tmp/vc.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none ||
		fail "write"
	dmsetup remove --retry $VOL || fail "remove"
	dd if=/dev/zero of=/dev/mapper/rsvc1 bs=1M count=$((SZ / 2048)) oflag=direct conv=fsync \
		status=none || fail "zero member 1"
}

# ---- 1. the rebuild's chunks on stable media before its superblock ----
head -c $BYTES /dev/urandom >/tmp/vc.pat
if want 1; then
blank_member1
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync rebuild 1" | dmsetup create $VOL ||
	fail "create with rebuild 1"
t_idle $VOL 600 || fail "rebuild not over after 600 s"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "after the rebuild: health $(t_status_field $VOL 2)"
sleep 1		# the superblock saying member 1 is in sync
mark rebuilt
replayed rebuilt
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL ||
	fail "created on the members replayed to the end of the rebuild: $(dmesg | tail -2)"
t_idle $VOL 600 || fail "resync after the replay not over"
note "replayed to the end of the rebuild: health $(t_status_field $VOL 2)"
same "rebuild, direct reads" /tmp/vc.pat 0 $BYTES
dmsetup message $VOL 0 fail 0 || fail "fail 0"
same "rebuild, member 0 failed" /tmp/vc.pat 0 $BYTES
dmsetup remove --retry $VOL
fi

# ---- 2. a logged update's data on stable media before the next record ----
if want 2; then
logged
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
dd if=/tmp/vc.pat of=/dev/mapper/$VOL bs=1M count=1 oflag=direct conv=fsync status=none ||
	fail "write"
dmsetup message $VOL 0 fail 2 || fail "fail 2"
t_idle $VOL 60
# stripe 0: member 0 holds volume bytes [0, 8K), member 1 [8K, 16K),
# member 2 [16K, 24K), member 3 its parity
cp /tmp/vc.pat /tmp/vc.new
head -c 4096 /dev/urandom | dd of=/tmp/vc.new bs=4096 seek=0 conv=notrunc status=none
head -c 4096 /dev/urandom | dd of=/tmp/vc.new bs=4096 seek=2 conv=notrunc status=none
dd if=/tmp/vc.new of=/dev/mapper/$VOL bs=4096 count=1 oflag=direct status=none || fail "write 1"
dd if=/tmp/vc.new of=/dev/mapper/$VOL bs=4096 skip=2 seek=2 count=1 oflag=direct status=none ||
	fail "write 2"
mark written
replayed written
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL ||
	fail "created on the members replayed after the writes: $(dmesg | tail -2)"
dmesg | grep -E 'logged stripe update\(s\) replayed' | tail -1 | sed 's/^/    # /'
note "replayed after the two writes: health $(t_status_field $VOL 2)"
# member 2's chunk, rebuilt from the replayed parity: as written before
same "degraded log, member 2's chunk" /tmp/vc.pat 16384 8192
# the two writes: each its old or its new bytes
for off in 0 8192; do
	dd if=/dev/mapper/$VOL bs=4096 iflag=direct skip=$((off / 4096)) count=1 status=none \
		>/tmp/vc.got
	cmp -s /tmp/vc.got <(dd if=/tmp/vc.pat bs=4096 skip=$((off / 4096)) count=1 status=none) ||
		cmp -s /tmp/vc.got <(dd if=/tmp/vc.new bs=4096 skip=$((off / 4096)) count=1 status=none) ||
		fail "degraded log: the write at $off reads back as neither its old nor its new bytes"
done
dmsetup remove --retry $VOL
fi

# ---- 3, 4. every member's cache flushed before a bitmap clear ----
# clear_part <3|4>: member 1's I/O held by suspending its device (3), or
# member 1 failed by message with the superblock commits held (4).
clear_part() {
local part=$1 k t cp
blank_member1
# 64 KiB/s per member: 2.7 MiB each, the rebuild would take about 40 s
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 7 nosync rebuild 1 min_recovery_rate 32" \
	"max_recovery_rate 64" | dmsetup create $VOL || fail "create with rebuild 1"
cp=0
for t in $(seq 300); do
	cp=$(t_sb_cp "${T_DEVS[0]}" 1)
	[ "${cp:-0}" -ge 3 ] && break
	sleep 0.2
done
[ "${cp:-0}" -ge 3 ] || fail "the superblocks' rebuild checkpoint not past stripe 2 after 60 s: $cp"
dmsetup message $VOL 0 frozen || fail "frozen"
sleep 5		# the frozen rebuild settled (it sets no bitmap bits: region 0 is clean)
[ "$(t_status_field $VOL 2)" = AaAA ] || fail "frozen rebuild: health $(t_status_field $VOL 2)"
# stripe 2: member 2 holds volume bytes [48K, 56K), member 3 [56K, 64K),
# member 0 [64K, 72K), member 1 its parity
cp /tmp/vc.pat /tmp/vc.new
head -c 4096 /dev/urandom | dd of=/tmp/vc.new bs=4096 seek=16 conv=notrunc status=none
dd if=/tmp/vc.new of=/dev/mapper/$VOL bs=4096 skip=16 seek=16 count=1 oflag=direct status=none ||
	fail "write to stripe 2"
if [ "$part" = 3 ]; then
	dmsetup suspend --noflush rsvc1 || fail "suspend member 1"
else
	echo 1 >"$T_DBG/hold_meta_commits"
	dmsetup message $VOL 0 fail 1 || fail "fail 1"
fi
sleep 6		# two of the bitmap daemon's periods: the region cleared
mark cut
if [ "$part" = 3 ]; then
	dmsetup resume rsvc1 || fail "resume member 1"
else
	echo 0 >"$T_DBG/hold_meta_commits"
fi
replayed cut
"$CHECK" --stripes 3 $CHUNK "${T_DEVS[@]}" >/tmp/vc.check 2>&1 || true	# 1: bad stripes
grep -q '^bad stripe 2:' /tmp/vc.check ||
	fail "the cut did not tear stripe 2 (the part tests nothing): $(tail -1 /tmp/vc.check)"
k=$(dmesg | wc -l)
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync rebuild 1" | dmsetup create $VOL ||
	fail "created on the members replayed to the cut: $(dmesg | tail -2)"
t_idle $VOL 600 || fail "resync and rebuild after the replay not over"
note "part $part, replayed to the cut: health $(t_status_field $VOL 2);" \
	"$(dmesg | tail -n +$((k + 1)) | grep -E 'replayed| done' | sed 's/.*rainssd: //' | tr '\n' ' ')"
dmsetup message $VOL 0 fail 2 || fail "fail 2"
same "bitmap clear, member 2's chunk of stripe 2" /tmp/vc.pat 49152 8192
same "bitmap clear, the volume before the write" /tmp/vc.pat 0 65536
same "bitmap clear, the volume after the write" /tmp/vc.pat 69632 $((BYTES - 69632))
dd if=/dev/mapper/$VOL bs=4096 iflag=direct skip=16 count=1 status=none >/tmp/vc.got
cmp -s /tmp/vc.got <(dd if=/tmp/vc.pat bs=4096 skip=16 count=1 status=none) ||
	cmp -s /tmp/vc.got <(dd if=/tmp/vc.new bs=4096 skip=16 count=1 status=none) ||
	fail "bitmap clear: the write reads back as neither its old nor its new bytes"
dmsetup remove --retry $VOL
}
want 3 && clear_part 3
if want 4; then
	t_knobs hold_meta_commits
	clear_part 4
fi
exit 0
