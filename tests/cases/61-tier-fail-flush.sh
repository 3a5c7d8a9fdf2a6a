#!/bin/bash
# A flush that waited for a commit of the tier's table which cannot be made
# fails, and fails no member (a review of 1.11.19). A 4 KiB write takes a
# stripe into the tier with the table's commits held (debugfs
# hold_tier_commits); members 0 and 1 fail (the volume is failed: two
# members out); a flush waits for the table's commit; the commits let go:
# no member can take the table (metadata_mode fail), the flush ends with
# an I/O error, and members 2 and 3, which did nothing wrong, must stay in
# service (health DDAA). Up to 1.11.19 the flush's shares ended as the
# members' own flush errors: both were failed too ("flush failed").
. "$REPO/tests/lib.sh"
t_knobs hold_tier_commits
CHUNK=16
N=4
TIER=$((8 * 2048))
V=rstf
t_channels $N --size-mb 64 --lat-us 100
sz=$(blockdev --getsz "${T_DEVS[0]}")
LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
t_table $CHUNK "$LEN" nosync tier_size $TIER | dmsetup create $V || fail "create"
echo 1 >$T_DBG/hold_tier_commits
t0=$(t_opstat $V tier_stripes)
head -c 4096 /dev/urandom | dd of=/dev/mapper/$V bs=4k seek=600 oflag=direct status=none ||
	fail "the 4 KiB write"
t1=$(t_opstat $V tier_stripes)
[ "${t1%/*}" = $((${t0%/*} + 1)) ] || fail "the write took the tier from $t0 to $t1 stripes, not one more"
dmsetup message $V 0 fail 0 || fail "fail 0"
dmsetup message $V 0 fail 1 || fail "fail 1"
mark=$(dmesg | wc -l)
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' /dev/mapper/$V \
	>/tmp/tf.err 2>&1 &
f=$!
sleep 1
kill -0 $f 2>/dev/null || fail "the flush did not wait for the table's commit: $(cat /tmp/tf.err)"
echo 0 >$T_DBG/hold_tier_commits
if wait $f; then
	fail "the flush succeeded with the tier's table not committed ($(t_opstat $V metadata_mode))"
fi
h=$(t_status_field $V 2)
dmesg | tail -n +$((mark + 1)) | grep -E 'flush|tier' | sed 's/^.*\] */    # /' | head -4
[ "$h" = DDAA ] || fail "health $h after the flush failed for the table, want DDAA (members 2 and 3 in service)"
note "the flush failed ($(tail -1 /tmp/tf.err | cut -c1-60)); metadata_mode $(t_opstat $V metadata_mode), health $h"
dmsetup remove --retry $V || fail "remove"
exit 0
