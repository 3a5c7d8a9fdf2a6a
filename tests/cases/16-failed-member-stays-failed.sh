#!/bin/bash
# A failed member must never come back in service with stale data. Write
# data A, fail member 1, write data B, then load again the table that
# `dmsetup table` prints (as an operator reloading, or a reboot creating the
# volume again): the member is still failed (the superblocks recorded it),
# every byte reads back as B, and the parity checker over the live members'
# rebuilt view finds nothing wrong.
#
# On 1.3.0 before the superblock (and on 1.2.0) this failed: the reload
# showed AAAA and about a quarter of the bytes read back as A.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
t_create rsf 16
v=/dev/mapper/rsf
size=16m
pattern() { # pattern <byte>: write 16 MiB of it
	fio --name=pat --filename=$v --direct=1 --ioengine=libaio --rw=write --bs=64k \
		--iodepth=8 --size=$size --buffer_pattern="$1" --output-format=terse >/dev/null ||
		fail "write pattern $1"
}
count_pattern() { # count_pattern <byte>: bytes of the first 16 MiB equal to it
	dd if=$v bs=1M count=16 iflag=direct status=none | tr -dc "$(printf '\\%03o' "$1")" | wc -c
}
pattern 0xaa
dmsetup message rsf 0 fail 1 || fail "fail 1"
pattern 0xbb
[ "$(count_pattern 0xbb)" = $((16 << 20)) ] || fail "B does not read back before the reload"
tbl=$(dmsetup table rsf)
note "table: $tbl"
dmsetup suspend rsf
dmsetup reload rsf --table "$tbl" || fail "reload of the printed table"
dmsetup resume rsf || fail "resume"
health=$(t_status_field rsf 2)
stale=$(count_pattern 0xaa)
note "after the reload: health $health, bytes still A: $stale"
[ "$stale" = 0 ] || fail "$stale bytes read back as the data from before the failure"
[ "$health" = ADAA ] || fail "health $health: the failed member came back"
# The same after removing the volume and creating it again (a reboot).
dmsetup remove --retry rsf
echo "$tbl" | dmsetup create rsf || fail "create again"
health=$(t_status_field rsf 2)
stale=$(count_pattern 0xaa)
note "created again: health $health, bytes still A: $stale"
[ "$stale" = 0 ] && [ "$health" = ADAA ] || fail "after create: health $health, $stale stale bytes"
