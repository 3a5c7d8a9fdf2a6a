#!/bin/bash
# The layout is md's: data written through rainssd reads back the same through
# an md RAID-5 assembled on the same members (mdadm --assume-clean
# --data-offset=16M), and md's own parity check finds no mismatch.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 48
t_create rsm 128
head -c $((T_LEN * 512)) /dev/urandom >/tmp/md-data
dd if=/tmp/md-data of=/dev/mapper/rsm bs=1M oflag=direct status=none || fail "write"
dd if=/tmp/md-data of=/dev/mapper/rsm bs=4k skip=5 seek=5 count=7 conv=notrunc oflag=direct status=none
udevadm settle 2>/dev/null || true
dmsetup remove --retry rsm || fail "remove rsm"
mdadm --create /dev/md0 --run --assume-clean --metadata=1.2 --level=5 --layout=left-symmetric \
	--chunk=$((T_CHUNK / 2)) --raid-devices=4 --data-offset=16M --bitmap=none \
	"${T_DEVS[@]}" >/dev/null 2>&1 || fail "mdadm --create"
cmp -n $((T_LEN * 512)) /tmp/md-data /dev/md0 || fail "md reads other data"
note "md RAID-5 reads back the rainssd data ($((T_LEN / 2048)) MiB)"
echo check >/sys/block/md0/md/sync_action
for _ in $(seq 600); do
	[ "$(cat /sys/block/md0/md/sync_action)" = idle ] && break
	sleep 1
done
# Still running, its mismatch_cnt would count only the part it checked.
[ "$(cat /sys/block/md0/md/sync_action)" = idle ] ||
	fail "md check still $(cat /sys/block/md0/md/sync_action) after 600 s (sync_completed $(cat /sys/block/md0/md/sync_completed))"
mm=$(cat /sys/block/md0/md/mismatch_cnt)
[ "$mm" -eq 0 ] || fail "md check: mismatch_cnt $mm"
note "md check: mismatch_cnt 0"
mdadm --stop /dev/md0 >/dev/null
