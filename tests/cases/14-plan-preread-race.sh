#!/bin/bash
# A member that dies between a stripe operation's plan and its pre-reads (a
# dying SSD fails all its in-flight I/O at once) must never make the target
# compute with buffers that were not read. The fault-injection attribute
# delay_preread (debugfs rainssd/) holds every operation for
# delay_preread_ms between planning and issuing its pre-reads; a `fail`
# message lands inside that window while fio writes with verify, under each
# parity policy, and while fio reads back with read_policy reconstruct (every
# read rebuilt from the other members). Every byte must verify, and the data
# written before the failure must read back too (rebuilt from parity where
# it lived on the failed member).
#
# On 1.2.0 this failed: the operations in the window skipped the dead
# member's pre-read and XORed a buffer that was never filled.
. "$REPO/tests/lib.sh"
dbg=/sys/kernel/debug
mountpoint -q $dbg || mount -t debugfs none $dbg
fi=$dbg/rainssd
[ -d $fi/delay_preread ] && [ -f $fi/delay_preread_ms ] ||
	fail "no $fi/delay_preread: the test kernel needs CONFIG_FAULT_INJECTION_DEBUG_FS"

delay_on() {
	echo "$1" >$fi/delay_preread_ms
	echo 0 >$fi/delay_preread/verbose
	echo 1 >$fi/delay_preread/interval
	echo 1000000 >$fi/delay_preread/times
	echo 100 >$fi/delay_preread/probability
}
delay_off() { echo 0 >$fi/delay_preread/probability; }
trap delay_off EXIT

v=/dev/mapper/rsr
# fio over the first 12 MiB, random block sizes and offsets, each block once.
job=(--bsrange=4k-40k --blockalign=4k --iodepth=16 --size=12m --randrepeat=1)

fresh() { # fresh <opt args...>: a new 4-member volume with 8 KiB chunks, data in it
	t_teardown >/dev/null 2>&1 || true
	t_channels 4 --size-mb 48 --lat-us 200
	t_create rsr 16 "$@"
	# Old data that is not zero, so that an unread (often zeroed) buffer shows.
	dd if=/dev/urandom of=$v bs=1M count=16 oflag=direct status=none || fail "prefill"
}
failed=()

# Writes: the failure lands while writes sit between plan and pre-read.
# (make test: rmw and rcw, the two plans count chooses between.)
for policy in $(t_size "rmw rcw" "count rmw rcw"); do
	fresh policy $policy
	delay_on 150
	fio --name=race-$policy --filename=$v --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" --rw=randwrite \
		"${job[@]}" --verify=crc32c --verify_fatal=1 --verify_dump=0 \
		--output-format=terse >/tmp/fio-race.out 2>&1 &
	pid=$!
	sleep 4
	dmsetup message rsr 0 fail 1 || fail "fail message"
	if ! wait $pid; then
		grep -m1 verify: /tmp/fio-race.out | sed 's/^/    # /'
		failed+=("policy $policy: fio verify after a failure inside the plan/pre-read window")
		delay_off
		continue
	fi
	delay_off
	[ "$(t_status_field rsr 2)" = ADAA ] || fail "health $(t_status_field rsr 2)"
	# Read the whole job back again, rebuilt from parity where it lived on member 1.
	if ! fio --name=race-$policy --filename=$v --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" --rw=randwrite \
		"${job[@]}" --verify=crc32c --verify_only=1 --verify_fatal=1 --verify_dump=0 \
		--output-format=terse >/tmp/fio-race.out 2>&1; then
		failed+=("policy $policy: data read back after the run")
		continue
	fi
	note "policy $policy: verified (rmw $(t_status_field rsr 6), rcw $(t_status_field rsr 7)," \
		"degraded $(t_status_field rsr 8), held in the window" \
		"$(( 1000000 - $(cat $fi/delay_preread/times) )), replans $(t_opstat rsr replans))"
done

# Rebuilt reads: the failure lands while reads sit between plan and pre-read.
fresh
t_fio fill $v --rw=randwrite "${job[@]}" --verify=crc32c --do_verify=0
dmsetup message rsr 0 read_policy reconstruct
delay_on 150
fio --name=fill --filename=$v --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" --rw=randwrite "${job[@]}" \
	--verify=crc32c --verify_only=1 --verify_fatal=1 --verify_dump=0 \
	--output-format=terse >/tmp/fio-race.out 2>&1 &
pid=$!
sleep 4
dmsetup message rsr 0 fail 2 || fail "fail message"
if wait $pid; then
	note "read_policy reconstruct: verified ($(t_status_field rsr 10) reads rebuilt," \
		"replans $(t_opstat rsr replans))"
else
	grep -m1 verify: /tmp/fio-race.out | sed 's/^/    # /'
	failed+=("read_policy reconstruct: fio verify after a failure inside the plan/pre-read window")
fi
delay_off
[ ${#failed[@]} = 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
