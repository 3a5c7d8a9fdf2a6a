#!/bin/bash
# null_blk badblocks on one member: the first error marks it dead and the
# verify run still passes.
. "$REPO/tests/lib.sh"
t_channels 3 --size-mb 64
t_create rsb 64
echo "+32768-131071" >/sys/kernel/config/nullb/rsch0/badblocks || fail "badblocks"
t_fio_verify bb /dev/mapper/rsb --rw=randwrite --bsrange=512-32k --blockalign=512 \
	--iodepth=8 --size=16m
[ "$(t_status_field rsb 2)" = DAA ] || fail "member 0 not dead: $(t_status_field rsb 2)"
