#!/bin/bash
# A new volume without nosync: its members hold random bytes, so the parity
# is made by a background resync (sync_action resync, sync_ratio moving)
# while user I/O goes on, and afterwards the parity checker finds every
# stripe right. Until a stripe is resynced its parity is never used: with a
# member failed mid-resync, reads of that member's data in stripes not yet
# resynced fail with an I/O error instead of returning bytes rebuilt from
# garbage parity.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 48 --lat-us 50
for d in "${T_DEVS[@]}"; do
	dd if=/dev/urandom of="$d" bs=1M count=48 oflag=direct status=none || fail "random fill $d"
done
T_SYNC=1 t_create rsy 16 max_recovery_rate 4096
v=/dev/mapper/rsy
[ "$(t_opstat rsy sync_action)" = resync ] || fail "sync_action $(t_opstat rsy sync_action)"
t_fio_verify during $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=24m
note "resync at $(t_opstat rsy sync_ratio) while fio verified"
dmsetup message rsy 0 max_recovery_rate 200000
for t in $(seq 300); do
	[ "$(t_opstat rsy sync_action)" = idle ] && break
	sleep 1
done
[ "$(t_opstat rsy sync_action)" = idle ] || fail "resync not done: $(t_opstat rsy sync_ratio)"
t_fio during $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=24m \
	--verify=crc32c --verify_only=1 --verify_fatal=1
dmsetup suspend rsy
t_parity
dmsetup resume rsy
dmsetup remove --retry rsy

# Again, slow, and member 1 fails early in the resync.
for d in "${T_DEVS[@]}"; do t_wipe_sb "$d"; done
T_SYNC=1 t_create rsy 16 max_recovery_rate 1000 min_recovery_rate 500
sleep 2
dmsetup message rsy 0 fail 1
cp=$(t_opstat rsy sync_ratio)
note "member 1 failed with the resync at $cp"
# The last 4 MiB of the volume: far beyond the checkpoint.
off=$(( (T_LEN - 8192) * 512 ))
if dd if=$v of=/dev/null bs=64k skip=$((off / 65536)) count=64 iflag=direct 2>/tmp/dd.err; then
	fail "reads of a failed member's data in stripes never resynced succeeded"
fi
grep -q "Input/output error" /tmp/dd.err || fail "not an I/O error: $(cat /tmp/dd.err)"
note "unsynced stripes of the failed member: I/O error, not made-up data"
