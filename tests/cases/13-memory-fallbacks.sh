#!/bin/bash
# The stripe engine's memory fallbacks, forced by its fault-injection
# attributes (debugfs rainssd/, CONFIG_FAULT_INJECTION_DEBUG_FS):
# fail_nowait_bio makes a step give back its member bios and build them
# again under alloc_lock (the path that keeps two steps from deadlocking on
# the bioset's reserve); fail_buffers makes operations run on the one-stripe
# reserve. Many writers at once with every parity method, then rebuilt reads:
# the data verifies, the parity is right, and the attributes' `times`
# counters show that the faults were injected.
. "$REPO/tests/lib.sh"
dbg=/sys/kernel/debug
mountpoint -q $dbg || mount -t debugfs none $dbg
fi=$dbg/rainssd
[ -d $fi/fail_nowait_bio ] && [ -d $fi/fail_buffers ] ||
	fail "no $fi/fail_*: the test kernel needs CONFIG_FAULT_INJECTION_DEBUG_FS"

# inject <fault> <percent> <times>: fail that often, at most <times> times
inject() {
	echo 0 >$fi/$1/verbose
	echo 1 >$fi/$1/interval
	echo "$3" >$fi/$1/times
	echo "$2" >$fi/$1/probability
}
stop() { echo 0 >$fi/$1/probability; }
trap 'stop fail_nowait_bio; stop fail_buffers' EXIT

t_channels 5 --size-mb 96 --lat-us 300 --qd 4
t_create rsf 16
v=/dev/mapper/rsf
for policy in count rmw rcw; do
	dmsetup message rsf 0 policy $policy
	inject fail_nowait_bio 40 300
	inject fail_buffers 30 300
	t_fio_verify "fallback-$policy" $v --rw=randwrite --bsrange=512-80k --iodepth=16 \
		--numjobs=3 --size=16m --offset_increment=20m --group_reporting
	nb=$((300 - $(cat $fi/fail_nowait_bio/times))) nf=$((300 - $(cat $fi/fail_buffers/times)))
	stop fail_nowait_bio
	stop fail_buffers
	note "policy $policy: $nb bio allocations failed and were redone under alloc_lock," \
		"$nf operations ran on the reserve"
	[ "$nb" -gt 0 ] || fail "fail_nowait_bio never fired"
	[ "$nf" -gt 0 ] || fail "fail_buffers never fired"
done
t_parity

# Rebuilt reads on the reserve: every read is rebuilt from the other members.
dmsetup message rsf 0 read_policy reconstruct
inject fail_buffers 50 500
inject fail_nowait_bio 50 500
# verify_only replays the last writer's job (same name, offsets and sizes) and reads it back
t_fio "fallback-rcw" $v --rw=randwrite --bsrange=512-80k --iodepth=16 --numjobs=3 --size=16m \
	--offset_increment=20m --group_reporting --verify=crc32c --verify_only=1 --verify_fatal=1
nf=$((500 - $(cat $fi/fail_buffers/times)))
stop fail_buffers
stop fail_nowait_bio
note "rebuilt reads verified with $nf of them on the reserve"
[ "$nf" -gt 0 ] || fail "no rebuilt read ran on the reserve"
t_parity
