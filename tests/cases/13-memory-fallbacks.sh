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

# fail_op with no other operation in flight: every write is alone (dd, one
# block at a time). 1.11.4 deferred it and, with no operation to end,
# nothing fed it again: it waited until another write came. (Past the
# fio jobs' 56 MiB, which are read back below.)
dmsetup message rsf 0 stats_reset
inject fail_op 100 -1
dd if=/dev/urandom of=/tmp/one bs=4k count=4 status=none
dd if=/tmp/one of=$v bs=4k count=4 seek=15500 oflag=direct status=none &
pid=$!
for t in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
alive=0; kill -0 $pid 2>/dev/null && alive=1
stop fail_op
# Another write kicks the deferred queue: a stranded one ends with it.
dd if=/tmp/one of=$v bs=4k count=1 seek=15600 oflag=direct status=none
wait $pid || fail "dd with fail_op"
[ $alive = 0 ] || fail "a lone write was still waiting after 30 s of fail_op (nothing fed it)"
cmp <(dd if=$v bs=4k skip=15500 count=4 iflag=direct status=none) /tmp/one || fail "the lone writes read back wrong"
note "fail_op with nothing else in flight: 4 lone writes went through"

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

# The reserve holds the largest operation there is: with a tier, a
# migration (every member's chunk and scratch for the n - 1 copies: 448
# pages with 256 KiB chunks on 4 members, where a stripe is 256). 1.11.4
# sized the reserve and the smallest stripe_cache for a stripe: a migration
# on the reserve used page pointers past its end. flush_tier with every
# operation on the reserve moves the stripes home byte for byte.
dmsetup remove --retry rsf
"$CHANNELS" destroy >/dev/null 2>&1
CHUNK=512 N=4 TIER=$((16 * 2048))
t_channels $N --size-mb 96 --lat-us 100
sz=$(blockdev --getsz "${T_DEVS[0]}")
T_CHUNK=$CHUNK
T_LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
# 112 entries (448 pages on 4 members) is the least; 64 fitted a stripe.
t_table $CHUNK "$T_LEN" nosync tier_size $TIER stripe_cache 64 | dmsetup create rsm 2>/dev/null &&
	fail "a table with stripe_cache 64 and a tier of 256 KiB chunks was taken"
t_table $CHUNK "$T_LEN" nosync tier_size $TIER | dmsetup create rsm || fail "create with a tier"
v=/dev/mapper/rsm
dmsetup message rsm 0 stripe_cache 64 2>/dev/null &&
	fail "stripe_cache 64 was taken on a volume whose migrations need 112 entries"
dmsetup message rsm 0 stripe_cache 112 || fail "stripe_cache 112"
t_fio tierfill $v --rw=randwrite --bs=4k --size=24m --number_ios=48 --iodepth=4 \
	--verify=crc32c --do_verify=0
used=$(t_opstat rsm tier_stripes | cut -d/ -f1)
[ "$used" -gt 0 ] || fail "no stripe entered the tier"
sum1=$(dd if=$v bs=1M count=24 iflag=direct status=none | md5sum)
dmsetup message rsm 0 stats_reset
inject fail_buffers 100 -1
dmsetup message rsm 0 flush_tier || fail "flush_tier"
for t in $(seq 120); do
	[ "$(t_opstat rsm tier_stripes | cut -d/ -f1)" = 0 ] &&
		[ "$(t_opstat rsm migration_action)" = idle ] && break
	sleep 1
done
stop fail_buffers
[ "$(t_opstat rsm tier_stripes | cut -d/ -f1)" = 0 ] || fail "flush_tier left $(t_opstat rsm tier_stripes)"
re=$(t_opstat rsm reserve)
[ "$re" -ge "$used" ] || fail "$re operations on the reserve for $used migrations"
sum2=$(dd if=$v bs=1M count=24 iflag=direct status=none | md5sum)
[ "$sum1" = "$sum2" ] || fail "the tier's stripes changed on their way home on the reserve"
t_fio tierfill $v --rw=randwrite --bs=4k --size=24m --number_ios=48 --iodepth=4 \
	--verify=crc32c --verify_only=1 --verify_fatal=1
note "tier, 256 KiB chunks: stripe_cache 64 refused; $used stripes moved home on the reserve ($re operations on it), the same md5, fio verified"
dmsetup remove --retry rsm
t_parity
