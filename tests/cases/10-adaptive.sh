#!/bin/bash
# policy adaptive and read_policy adaptive while one member carries load the
# target did not cause (a separate fio job on the same channel): the data
# verifies, the parity is right, and the counters show that the model chose
# RCW where count would have chosen RMW and rebuilt reads around the loaded
# member. Then read_policy reconstruct rebuilds every read while writers hit
# other chunks of the same stripes: the rebuilt data must still verify.
. "$REPO/tests/lib.sh"
# msz: the MiB of every channel the array uses (16 of them metadata). The
# writes stay in the volume's first 20 MiB (4 MiB of a member): msz only
# sets how long the two parity checks read (make test 32, make test-full 96).
n=6 busy=2 msz=$(t_size 32 96)
# Slow channels (4 ms, two at a time) so that the background load, not the
# emulator's noise, sets the loaded member's latency.
t_channels $n --size-mb $((msz + 32)) --lat-us 4000 --qd 2
# The array uses the first $msz MiB of every channel, the background job the
# rest of channel $busy: it shares the channel's queue, never the array's data.
arr=()
for i in $(seq 0 $((n - 1))); do
	echo "0 $((msz * 2048)) linear ${T_DEVS[$i]} 0" | dmsetup create rsa$i || fail "linear $i"
	arr+=(/dev/mapper/rsa$i)
done
loaded=${T_DEVS[$busy]}
T_DEVS=("${arr[@]}")
t_create rsv 128 policy adaptive read_policy adaptive
v=/dev/mapper/rsv
mword() { t_status_field rsv $((19 + $1)) | cut -d: -f"$2"; }	# member, field

fio --name=bg --filename="$loaded" --offset=${msz}m --size=32m --rw=randrw --bs=4k \
	--iodepth=32 --direct=1 --ioengine=libaio --time_based --runtime=900 >/dev/null 2>&1 &
bg=$!
sleep 2
job="--rw=randwrite --bs=4k --iodepth=8 --size=$(t_size 6 12)m"	# make test: 6 MiB
t_fio_verify adaptive $v $job
t_fio adaptive $v $job --verify=crc32c --verify_only=1 --verify_fatal=1
note "verified twice under background load"
note "status: $(dmsetup status rsv)"
rcw_adj=$(t_status_field rsv 14) chosen=$(t_status_field rsv 16) rebuild=$(t_status_field rsv 18)
byp_busy=$(mword $busy 9)
# The most reads rebuilt around any other member.
byp_other=0
for i in $(seq 0 $((n - 1))); do
	[ "$i" = "$busy" ] && continue
	b=$(mword "$i" 9)
	[ "$b" -gt "$byp_other" ] && byp_other=$b
done
tr_busy=$(mword $busy 3) tr_other=$(mword $(( (busy + 1) % n )) 3)
kill $bg; wait $bg 2>/dev/null || true
note "RCW over count: $rcw_adj; reads rebuilt: $chosen ($byp_busy around member $busy," \
	"at most $byp_other around another), each costing $rebuild us beyond its member reads"
note "read service time estimate: member $busy ${tr_busy} us, member $(( (busy + 1) % n )) ${tr_other} us"
[ "$rcw_adj" -gt 0 ] || fail "adaptive never chose RCW over count"
[ "$chosen" -gt 0 ] || fail "no read was rebuilt around the loaded member"
[ "$rebuild" -gt 0 ] || fail "rebuilt reads but no rebuild cost measured"
# Around the loaded member far more than around any other: twice the most
# of any other. (Half of all rebuilt reads, asked before, failed once in a
# fresh-clone make test: 66 of 139 around member 2, at most 18 around another.)
[ "$byp_busy" -gt 0 ] && [ "$byp_busy" -ge $((2 * byp_other)) ] ||
	fail "rebuilt reads were not mostly around member $busy ($byp_busy of $chosen, $byp_other around another)"
t_parity

# read_policy reconstruct with writers on the same stripes. With 4 KiB chunks
# and 5 data chunks per stripe (20 KiB), job "a" keeps rewriting chunk 0 of
# every stripe while job "b" reads back chunk 1 (written before), which is
# rebuilt from chunks 0, 2, 3, 4 and the parity each time, under the stripe
# lock. fio's strided zones: 4 KiB of I/O in every 20 KiB, sequentially;
# job b's ZMB MiB (make test 2, make test-full 4: 512 or 1,024 blocks) read
# three times while "a" writes for ZSECS s (10 or 20: the first rounds).
dmsetup remove --retry rsv
# A new volume with another chunk size: the old superblocks would refuse it.
t_wipe_sb "${T_DEVS[@]}"
t_create rsv 8 read_policy reconstruct
ZMB=$(t_size 2 4) ZSECS=$(t_size 10 20)
zone="--zonemode=strided --zonesize=4k --zonerange=20k --bs=4k --rw=write --size=${ZMB}m"
t_fio_verify b $v $zone --offset=4k
before=$(t_status_field rsv 16)
t_fio a $v $zone --offset=0 --iodepth=8 --time_based --runtime=$ZSECS &
wpid=$!
for round in 1 2 3; do
	t_fio b $v $zone --offset=4k --verify=crc32c --verify_only=1 --verify_fatal=1
done
wait $wpid || fail "writer on the same stripes failed"
rebuilt=$(( $(t_status_field rsv 16) - before ))
note "rebuilt reads verified while chunk 0 of the same stripes was rewritten: $rebuilt"
# every 4 KiB block of job b's ZMB MiB, three times
[ "$rebuilt" -ge $((3 * ZMB * 256)) ] || fail "too few rebuilt reads: $rebuilt"
t_parity
dmsetup remove --retry rsv
