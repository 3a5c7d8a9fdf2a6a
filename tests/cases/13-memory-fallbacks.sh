#!/bin/bash
# The operation layer's answers to memory it cannot get without waiting,
# forced by its fault-injection attributes (debugfs rainssd/,
# CONFIG_FAULT_INJECTION_DEBUG_FS): fail_nowait_bio makes a step give its
# member bios back and wait for the emergency bioset (one step at a time);
# fail_buffers makes operations run on the buffer reserve (one at a time);
# fail_op makes bios wait in the deferred queue for an operation. Many
# writers at once with every parity method, then rebuilt reads: the data
# verifies, the parity is right, and the status counters show that each
# path was taken.
. "$REPO/tests/lib.sh"
dbg=/sys/kernel/debug
mountpoint -q $dbg || mount -t debugfs none $dbg
fi=$dbg/rainssd
for f in fail_nowait_bio fail_buffers fail_op; do
	[ -d $fi/$f ] || fail "no $fi/$f: the test kernel needs CONFIG_FAULT_INJECTION_DEBUG_FS"
done

# inject <fault> <percent> <times>: fail that often, at most <times> times
inject() {
	echo 0 >$fi/$1/verbose
	echo 1 >$fi/$1/interval
	echo "$3" >$fi/$1/times
	echo "$2" >$fi/$1/probability
}
stop() { echo 0 >$fi/$1/probability; }
trap 'stop fail_nowait_bio; stop fail_buffers; stop fail_op' EXIT

t_channels 5 --size-mb 96 --lat-us 300 --qd 4
t_create rsf 16
v=/dev/mapper/rsf
for policy in count rmw rcw; do
	dmsetup message rsf 0 policy $policy
	dmsetup message rsf 0 stats_reset
	inject fail_nowait_bio 40 300
	inject fail_buffers 30 300
	inject fail_op 30 300
	t_fio_verify "fallback-$policy" $v --rw=randwrite --bsrange=512-80k --iodepth=16 \
		--numjobs=3 --size=16m --offset_increment=20m --group_reporting
	stop fail_nowait_bio
	stop fail_buffers
	stop fail_op
	em=$(t_opstat rsf emergency) re=$(t_opstat rsf reserve) de=$(t_opstat rsf deferred)
	note "policy $policy: $em steps on the emergency bioset, $re operations on the reserve," \
		"$de bios deferred"
	[ "$em" -gt 0 ] || fail "no step used the emergency bioset"
	[ "$re" -gt 0 ] || fail "no operation ran on the reserve"
	[ "$de" -gt 0 ] || fail "no bio was deferred"
done
t_parity

# Rebuilt reads on the reserve: every read is rebuilt from the other members.
dmsetup message rsf 0 read_policy reconstruct
dmsetup message rsf 0 stats_reset
inject fail_buffers 50 500
inject fail_nowait_bio 50 500
inject fail_op 30 500
# verify_only replays the last writer's job (same name, offsets and sizes) and reads it back
t_fio "fallback-rcw" $v --rw=randwrite --bsrange=512-80k --iodepth=16 --numjobs=3 --size=16m \
	--offset_increment=20m --group_reporting --verify=crc32c --verify_only=1 --verify_fatal=1
stop fail_buffers
stop fail_nowait_bio
stop fail_op
re=$(t_opstat rsf reserve) em=$(t_opstat rsf emergency)
note "rebuilt reads verified: $re on the reserve, $em steps on the emergency bioset"
[ "$re" -gt 0 ] || fail "no rebuilt read ran on the reserve"
[ "$em" -gt 0 ] || fail "no rebuilt read used the emergency bioset"
t_parity
