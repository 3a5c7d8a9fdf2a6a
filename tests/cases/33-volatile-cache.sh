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
#
# Environment: PARTS (12: both, default; 1 or 2: that one).
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

# same <what> <file> <offset> <bytes>: the volume's bytes there are the file's.
same() {
	cmp -s <(dd if=/dev/mapper/$VOL bs=4096 iflag=direct skip=$(($3 / 4096)) count=$(($4 / 4096)) \
		status=none) <(dd if="$2" bs=4096 skip=$(($3 / 4096)) count=$(($4 / 4096)) status=none) ||
		fail "$1: the volume's bytes at $3 (+$4) are not what was written"
}

# ---- 1. the rebuild's chunks on stable media before its superblock ----
head -c $BYTES /dev/urandom >/tmp/vc.pat
if [ "${PARTS:-12}" != 2 ]; then
logged
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
dd if=/tmp/vc.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
dmsetup remove --retry $VOL || fail "remove"
# member 1 replaced by a blank device (zeros written and flushed)
dd if=/dev/zero of=/dev/mapper/rsvc1 bs=1M count=$((SZ / 2048)) oflag=direct conv=fsync \
	status=none || fail "zero member 1"
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
[ "${PARTS:-12}" != 1 ] || exit 0
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
exit 0
