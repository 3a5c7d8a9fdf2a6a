#!/bin/bash
# A write error during the drain of the superblock commit that records a
# member failed. That commit waits for the writes of every update planned
# while no member had failed (case 44): once a superblock says member 3
# failed, the activation after a power cut takes every stripe no degraded-
# log record covers as consistent. When one of those writes fails on
# another member instead of landing, that member must be failed in the
# same generation: up to 1.11.21 the failure was recorded only after the
# write's count had dropped, the commit then wrote the state it had copied
# before its wait (member 3 failed, member 0 in sync), and a power cut
# before the next commit left stripe S torn with member 0 trusted, so that
# member 3's chunk of it was rebuilt from the new parity and member 0's old
# data: bytes nobody wrote (found by review of 1.11.21).
#
# Four dm-linear members, a volume of 64 stripes. Member 0's data area is
# put behind dm-delay, which holds its writes DELAY_MS (default 6000). A
# 4 KiB write to member 0's chunk of stripe S (S % 4 = 2: parity on member
# 1, data on 2, 3, 0) is started; once its new parity is on member 1, with
# its data still held, a null_blk bad block is put under that data, every
# superblock commit but one is held (hold_meta_commits, pass_meta_commits
# 1), and member 3 is failed by message. The held write then fails. The
# generation the one commit writes to member 1 must say member 0 failed
# too (a cut then: two members out, the volume refused, nothing made up).
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rsde
STRIPES=64
LEN=$((STRIPES * CHUNK * (N - 1)))
S=10
DELAY_MS=${DELAY_MS:-6000}
B=$((S * 6 + 4))		# the volume's 4 KiB block at the start of member 0's chunk of S
MB=$(((32768 + S * CHUNK) / 8))	# that chunk's first 4 KiB block on a member (RS_DATA_OFFSET)
t_knobs hold_meta_commits pass_meta_commits

raw() { dd if=/dev/rsch$1 bs=4096 skip=$MB count=1 iflag=direct status=none | md5sum; }
cleanup() {
	t_knobs_off 2>/dev/null
	echo "-$((MB * 8))-$((MB * 8 + 7))" >/sys/kernel/config/nullb/rsch0/badblocks 2>/dev/null
}
trap cleanup EXIT

t_linear_members rsde $N
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
head -c $((LEN * 512)) /dev/urandom | dd of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync \
	iflag=fullblock status=none || fail "write"
t_delay_writes rsde 0 "$DELAY_MS"
par=$(raw 1)
e=$(t_sb_events "${T_DEVS[1]}")
head -c 4096 /dev/urandom | dd of=/dev/mapper/$VOL bs=4096 seek=$B count=1 oflag=direct \
	status=none 2>/tmp/de.err &
wpid=$!
for t in $(seq 100); do
	[ "$(raw 1)" != "$par" ] && break
	sleep 0.1
done
[ "$(raw 1)" != "$par" ] || fail "the update's parity did not reach member 1"
echo "+$((MB * 8))-$((MB * 8 + 7))" >/sys/kernel/config/nullb/rsch0/badblocks ||
	fail "a bad block under member 0's chunk of stripe $S"
kill -0 $wpid 2>/dev/null ||
	fail "the write is done: member 0's data was not held (DELAY_MS $DELAY_MS too short for this host)"
echo 1 >"$T_DBG/pass_meta_commits"
echo 1 >"$T_DBG/hold_meta_commits"
dmsetup message $VOL 0 fail 3 || fail "fail 3"
for t in $(seq $((DELAY_MS / 100 + 300))); do
	[ "$(t_sb_events "${T_DEVS[1]}")" -gt "$e" ] && break
	sleep 0.1
done
[ "$(t_sb_events "${T_DEVS[1]}")" -gt "$e" ] || fail "member 3's failure was never committed"
sleep 1		# the commit after it, were it let through, would land by now
s0=$(t_sb_state "${T_DEVS[1]}" 0)
s3=$(t_sb_state "${T_DEVS[1]}" 3)
note "generation $(t_sb_events "${T_DEVS[1]}") on member 1, commits held after it: member 0 $s0, member 3 $s3"
# The write waits for a commit that says member 0 failed: let the commits go.
echo 0 >"$T_DBG/hold_meta_commits"
wait $wpid && fail "the write to member 0's bad block succeeded"
[ "$s3" = failed ] || fail "member 1's superblock says member 3 $s3"
[ "$s0" = failed ] ||
	fail "the superblocks say member 3 failed and member 0 $s0, while member 0's write of stripe $S failed in the commit's drain (a cut now: member 3's chunk of stripe $S rebuilt from a torn stripe)"
[ "$(t_status_field $VOL 2)" = DAAD ] || fail "health $(t_status_field $VOL 2), not DAAD"
dmsetup remove --retry $VOL || fail "remove"
exit 0
