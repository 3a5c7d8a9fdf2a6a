#!/bin/bash
# The degraded-write log's records reach the disk in the order they took
# ring space, the zeros over a new lap's skipped tail before any record of
# that lap. An update takes its records' space under the log's lock, then
# checksums its partial parity and queues them; up to 1.11.13 a ring wrote
# whatever was at the head of its queue, so a record of another stripe
# that took the next space but was queued first went to the disk before
# the lap's zeros and before the lap's first record (a review of 1.11.13
# found it). Torn there by a power cut, it leaves no whole record of the
# new lap while the tail still holds records two laps old, which replay
# then trusts (the damage case 42's zeros prevent).
#
# Member 2 failed; 1,023 writes of 4 KiB to stripe 0 (parity on member 3)
# fill member 3's ring to block 2046. Then, with debugfs delay_log_lap
# holding the update that takes a new lap's first record for 3 s after it
# took its space: an 8 KiB write to stripe 0 (3 blocks: lap 1 at block 0,
# zeros over blocks 2046-2047 first) and, once the kernel log says that
# update is held, a 4 KiB write to stripe 4 (also parity on member 3; lap 1
# at block 3). It needs a second CPU for that write. When the second
# write returns its record is on disk, so block 0 must hold lap 1's first
# record (whose write follows the tail's zeros: case 42). Up to 1.11.13 the
# second write returned while the first was held, its record on disk
# before the lap's first record and the zeros.
. "$REPO/tests/lib.sh"
[ "$(nproc)" -ge 2 ] || fail "one CPU: the held update would hold the second write too"
fi=$T_DBG
[ -d $fi/delay_log_lap ] && [ -f $fi/delay_preread_ms ] ||
	fail "no $fi/delay_log_lap (dm-rainssd 1.11.14 on a kernel with CONFIG_FAULT_INJECTION_DEBUG_FS)"
delay_off() { echo 0 >$fi/delay_log_lap/probability; echo 100 >$fi/delay_preread_ms; }
trap 'delay_off 2>/dev/null' EXIT
t_channels 4 --size-mb 64 --lat-us 100
t_create rslo 16
v=/dev/mapper/rslo
dmsetup message rslo 0 fail 2 || fail "fail 2"
write() { t_counter_writes "$v" "$@"; }
ring_hdr() { t_log_hdr "${T_DEVS[3]}" "$1"; }
le() { t_le "$@"; }
magic=$T_LOG_MAGIC
write 0 4096 1023 || fail "the writes that fill lap 0"
h=$(ring_hdr 2044)
[ "${h:0:16}" = $magic ] && [ "$(le "$h" 32 4)" = 0 ] ||
	fail "block 2044 of member 3's ring is not lap 0's last record ($h): the case needs a rework"

echo 3000 >$fi/delay_preread_ms
echo 1 >$fi/delay_log_lap/verbose
echo 1 >$fi/delay_log_lap/interval
echo 1 >$fi/delay_log_lap/times
echo 100 >$fi/delay_log_lap/probability
klog0=$(dmesg | wc -l)
write 0 8192 1 &
first=$!
# until the fault fired (the update is held: fault injection logs it first)
for _ in $(seq 100); do
	dmesg | tail -n +$((klog0 + 1)) | grep -q 'FAULT_INJECTION: forcing a failure' && break
	sleep 0.05
done
dmesg | tail -n +$((klog0 + 1)) | grep -q 'FAULT_INJECTION: forcing a failure' ||
	fail "delay_log_lap never fired: the case needs a rework"
write $((4 * 3 * 8192)) 4096 1 || fail "the write to stripe 4"
b3=$(ring_hdr 3) b0=$(ring_hdr 0)
wait $first || fail "the write to stripe 0"
delay_off
[ "${b3:0:16}" = $magic ] && [ "$(le "$b3" 32 4)" = 1 ] && [ "$(le "$b3" 24 8)" = 4 ] ||
	fail "block 3 holds no lap 1 record of stripe 4 once its write returned ($b3): the case needs a rework"
seq3=$(le "$b3" 16 8)
[ "${b0:0:16}" = $magic ] && [ "$(le "$b0" 32 4)" = 1 ] && [ "$(le "$b0" 16 8)" -lt "$seq3" ] ||
	fail "lap 1's record of stripe 4 (seq $seq3, block 3) was on disk before lap 1's first record (block 0: lap $(le "$b0" 32 4), seq $(le "$b0" 16 8))"
note "stripe 4's record (seq $seq3, block 3) returned after lap 1's first record (seq $(le "$b0" 16 8)) was on disk"
# Both writes read back (the counter pattern's first 16 bytes).
for w in "0 8192" "$((4 * 3 * 8192)) 4096"; do
	set -- $w
	got=$(dd if=$v bs=4096 skip=$(($1 / 4096)) count=1 iflag=direct status=none | od -An -tx1 -N16 | tr -d ' \n')
	want=$(python3 -c "import sys; o,s=$1,$2; print((o.to_bytes(8,'little')+s.to_bytes(8,'little')).hex())")
	[ "$got" = "$want" ] || fail "the write at $1 reads back $got, not $want"
done
dmsetup remove --retry rslo
