#!/bin/bash
# A member that starts returning errors (dm-flakey under it) is marked dead
# by the target on its own, raises an event, and the fio verify run passes.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
sz=$(blockdev --getsz "${T_DEVS[2]}")
# Up for good while the volume is created and probed by udev, so that the
# event counter is read before the member can fail; then down for good.
ch2=${T_DEVS[2]}
echo "0 $sz flakey $ch2 0 600 0" | dmsetup create flaky2 || fail "flakey"
T_DEVS[2]=/dev/mapper/flaky2
t_create rsf 32
udevadm settle 2>/dev/null || true
[ "$(t_status_field rsf 2)" = AAAA ] || fail "member failed before the test: $(t_status_field rsf 2)"
ev=$(dmsetup info -c --noheadings -o events rsf)
dmsetup reload flaky2 --table "0 $sz flakey $ch2 0 0 600" || fail "reload flakey down"
dmsetup resume flaky2 || fail "resume flakey"
t_fio_verify flakey /dev/mapper/rsf --rw=randrw --rwmixread=50 --bsrange=4k-64k \
	--iodepth=8 --size=16m --time_based=0 --rate_iops=400
t_fio_verify flakey2 /dev/mapper/rsf --rw=randwrite --bs=4k --iodepth=8 --size=8m --offset=20m
[ "$(t_status_field rsf 2)" = AADA ] || fail "member 2 not marked dead: $(t_status_field rsf 2)"
ev2=$(dmsetup info -c --noheadings -o events rsf)
[ "$ev2" -gt "$ev" ] || fail "no dm event raised ($ev -> $ev2)"
note "event counter $ev -> $ev2"
