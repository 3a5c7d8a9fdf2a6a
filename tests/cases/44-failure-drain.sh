#!/bin/bash
# The superblock commit that records a member failed must come after the
# writes of every update planned while no member had failed: such updates
# write no degraded-log record, and once the superblocks say a member
# failed, the activation after a power cut takes a stripe no record covers
# as consistent, and rebuilds the failed member's chunk of it from its
# parity. Up to 1.11.11 the commit did not wait: an update's data write
# still in flight (or in a member's cache) when the commit flushed, then a
# cut, left a torn stripe that nothing resynced, and the failed member's
# chunk of it read back as bytes nobody wrote (found by review of 1.11.11).
#
# Four dm-linear members, a volume of 64 stripes. Member 0's data area (not
# its superblocks, bitmap and log) is put behind dm-delay, which holds its
# writes DELAY_MS (default 10000) and passes reads and flushes at once. A
# 4 KiB write to member 0's chunk of stripe S (S % 4 = 2: parity on member
# 1, data on 2, 3, 0) is started; once its new parity is on member 1, and
# its data still held, member 3 is failed by message. The generation that
# says member 3 failed must not be on member 0's superblocks before member
# 0 holds the new data. Then the write completes, and the volume reads back
# as written.
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rsfd
STRIPES=64
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=10
DELAY_MS=${DELAY_MS:-10000}
B=$((S * 6 + 4))		# the volume's 4 KiB block at the start of member 0's chunk of S
MB=$(((32768 + S * CHUNK) / 8))	# that chunk's first 4 KiB block on a member (RS_DATA_OFFSET)

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
# events: the generation of member 0's newest superblock copy (events at byte 32)
events() {
	local a b
	dd if=/dev/rsch0 of=/tmp/fd.sb bs=4096 skip=256 count=2 iflag=direct status=none ||
		fail "member 0's superblocks cannot be read"
	a=$(od -An -t u8 -j 32 -N 8 /tmp/fd.sb | tr -d ' ')
	b=$(od -An -t u8 -j 4128 -N 8 /tmp/fd.sb | tr -d ' ')
	echo $((a > b ? a : b))
}
raw() { dd if=/dev/rsch$1 bs=4096 skip=$MB count=1 iflag=direct status=none | md5sum; }

t_linear_members rsfd $N
head -c $BYTES /dev/urandom >/tmp/fd.pat
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/fd.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
e=$(events)
t_delay_writes rsfd 0 "$DELAY_MS"
old0=$(raw 0)
par=$(raw 1)
cp /tmp/fd.pat /tmp/fd.new
head -c 4096 /dev/urandom | dd of=/tmp/fd.new bs=4096 seek=$B conv=notrunc status=none
dd if=/tmp/fd.new of=/dev/mapper/$VOL bs=4096 skip=$B seek=$B count=1 oflag=direct \
	status=none 2>/tmp/fd.err &
wpid=$!
for t in $(seq 100); do
	[ "$(raw 1)" != "$par" ] && break
	sleep 0.1
done
[ "$(raw 1)" != "$par" ] || fail "the update's parity did not reach member 1"
[ "$(raw 0)" = "$old0" ] ||
	fail "member 0 already holds the new data: DELAY_MS $DELAY_MS too short for this host"
dmsetup message $VOL 0 fail 3 || fail "fail 3"
for t in $(seq $((DELAY_MS / 100 + 300))); do
	[ "$(events)" -gt "$e" ] && break
	sleep 0.1
done
[ "$(events)" -gt "$e" ] || fail "member 3's failure was never committed"
held=$([ "$(raw 0)" = "$old0" ] && echo yes || echo no)
note "generation $(events) (member 3 failed) on member 0; member 0's write still held then: $held"
[ $held = no ] ||
	fail "the superblocks said member 3 failed while an update planned before was still writing member 0 (a cut now: stripe $S torn, member 3's chunk rebuilt from its parity)"
wait $wpid || fail "the write failed: $(cat /tmp/fd.err)"
[ "$(t_status_field $VOL 2)" = AAAD ] || fail "health $(t_status_field $VOL 2), not AAAD"
cmp <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) /tmp/fd.new ||
	fail "the volume does not read back as written"
note "the volume reads back as written, member 3's chunks through the parity"
dmsetup remove --retry $VOL || fail "remove"
exit 0
