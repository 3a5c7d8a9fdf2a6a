#!/bin/bash
# A read mapped while the member being rebuilt fails (found by review of
# 1.11.7). Member 1 is replaced by a blank device and rebuilt slowly, so
# that its checkpoint stays far below stripe S. A 4 KiB read of member 1's
# chunk of S is then held 5 s in the target's map function (debugfs fault
# delay_map, for the reader's task only: it spins between reading the
# rebuild's member and the failed members) while `fail 1` ends the rebuild; the read must return the bytes
# written there (rebuilt from the other members), and so must the whole
# volume after it. Up to 1.11.7 the map function read the failed members
# first and the rebuild's member after: a failure in between showed the
# member as neither failed nor being rebuilt, and the read went to it,
# above the checkpoint, where the blank device holds zeros. With the two
# reads swapped back (the order of 1.11.7) the case reads zeros.
#
# Environment: S (default 300, a multiple of 4).
. "$REPO/tests/lib.sh"
F=/sys/kernel/debug/rainssd
[ -d $F/delay_map ] || fail "no $F/delay_map (dm-rainssd 1.11.8 on a kernel with fault injection)"
trap 'echo 0 >$F/delay_map/probability 2>/dev/null; echo N >$F/delay_map/task-filter 2>/dev/null
	echo 100 >$F/delay_preread_ms 2>/dev/null' EXIT
CHUNK=16
N=4
VOL=rsrf
STRIPES=344
LEN=$((STRIPES * CHUNK * (N - 1)))
S=${S:-300}
[ $((S % N)) = 0 ] && [ "$S" -lt "$STRIPES" ] || fail "S must be a multiple of $N below $STRIPES"

t_channels $((N + 1)) --size-mb 48 --lat-us 100
spare=${T_DEVS[$N]}
T_DEVS=("${T_DEVS[@]:0:$N}")
head -c $((LEN * 512)) /dev/urandom >/tmp/rf.pat
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
dd if=/tmp/rf.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
dmsetup message $VOL 0 fail 1 || fail "fail 1"
dmsetup remove --retry $VOL || fail "remove"
m=("${T_DEVS[@]}")
m[1]=$spare
echo "0 $LEN rainssd $CHUNK $N ${m[*]} 6 rebuild 1 min_recovery_rate 32 max_recovery_rate 32" |
	dmsetup create $VOL || fail "create with the spare rebuilt as member 1"
udevadm settle 2>/dev/null || true
cp=$(( $(t_opstat $VOL sync_ratio | cut -d/ -f1) / CHUNK ))
[ "$cp" -lt "$S" ] || fail "the rebuild is at stripe $cp already, past $S"
note "rebuild at stripe $cp; a read of member 1's chunk of stripe $S held in the map"

# member 1 is data chunk 1 of stripe S (parity on member 3)
off=$(( (S * (N - 1) + 1) * CHUNK / 8 ))
# Only for the reader's task (task-filter, make-it-fail), once.
echo 5000 >$F/delay_preread_ms
echo 0 >$F/delay_map/verbose
echo 1 >$F/delay_map/interval
echo 1 >$F/delay_map/times
echo Y >$F/delay_map/task-filter
echo 100 >$F/delay_map/probability
sh -c "echo 1 >/proc/self/make-it-fail && exec dd if=/dev/mapper/$VOL of=/tmp/rf.got bs=4096 \
	skip=$off count=1 iflag=direct status=none" 2>/tmp/rf.err &
r=$!
# The fault fires (times drops to 0) as the read enters its 5 s in the map.
for t in $(seq 200); do
	[ "$(cat $F/delay_map/times)" = 0 ] && break
	sleep 0.05
done
[ "$(cat $F/delay_map/times)" = 0 ] || fail "the read was not held in the map (delay_map did not fire)"
dmsetup message $VOL 0 fail 1 || fail "fail 1 during the read"
kill -0 $r 2>/dev/null || fail "the read ended before member 1 failed"
wait $r || fail "the read failed: $(cat /tmp/rf.err)"
echo 0 >$F/delay_map/probability
echo N >$F/delay_map/task-filter
[ "$(t_status_field $VOL 2)" = ADAA ] || fail "health $(t_status_field $VOL 2) after fail 1"
cmp -s /tmp/rf.got <(dd if=/tmp/rf.pat bs=4096 skip=$off count=1 status=none) ||
	fail "member 1's chunk of stripe $S read wrong ($(od -An -tx1 -N8 /tmp/rf.got)), not rebuilt from the others"
cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) /tmp/rf.pat ||
	fail "the volume does not read back as written with member 1 failed"
dmsetup remove --retry $VOL || fail "remove"
note "the read held while member 1 failed returned the bytes written"
