#!/bin/bash
# A power cut during a rebuild, with the rebuild's checkpoint in memory
# ahead of the one in the superblocks (1.11.4). Member 1 of an 8 MiB volume
# is zeroed and rebuilt (min and max_recovery_rate 160 KiB/s, the checkpoint's
# periodic commits held by the debugfs switch hold_sync_commits). Before
# the rebuild reaches stripe S, 4 KiB are written to member 0's chunk of it:
# an update the degraded-write log records (member 1 holds no data there
# yet). Once the rebuild has passed S, 4 KiB to member 2's chunk: member 1
# is written now, and the update is not logged. Then the cut (the members
# frozen and given the `error` table), the volume created again with
# `rebuild 1`, the rebuild run to its end: every byte of the volume must be
# what was written, read directly and with member 0 failed. A 1 MiB write
# across the rebuild's front before the cut must not hang (its operations
# hold stripes on both sides of the checkpoint).
# Up to 1.11.3 the second update went on at once, the rebuild resumed from
# the checkpoint on disk (below S), and the replay of the first record made
# S's parity from member 0's new bytes and member 2's old ones: member 1's
# chunk of S was rebuilt from it, wrong (found by a helper's review). Now an
# update of a stripe the rebuild passed after its last commit waits for a
# commit, and no record below the checkpoint on disk is replayed.
#
# Environment: S (default 120), RATE (KiB/s, default 160).
. "$REPO/tests/lib.sh"
HOLD=/sys/kernel/debug/rainssd/hold_sync_commits
[ -w $HOLD ] || fail "no $HOLD (dm-rainssd 1.11.4 with debugfs)"
trap 'echo 0 >$HOLD 2>/dev/null' EXIT
CHUNK=16
N=4
VOL=rsrc
STRIPES=341
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=${S:-120}
RATE=${RATE:-160}
[ $((S % N)) = 0 ] || fail "S must be a multiple of $N (parity on member 3, data on 0, 1, 2)"

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
cp_now() { echo $(( $(t_opstat $VOL sync_ratio | cut -d/ -f1) / CHUNK )); }
# same <what> <file>: the whole volume reads back as the file
same() {
	cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$2" ||
		fail "$1: the volume does not read back as written ($(cmp <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$2" 2>&1 | head -1))"
}

t_linear_members rsrc $N
head -c $BYTES /dev/urandom >/tmp/rc.pat
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/rc.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
dmsetup remove --retry $VOL || fail "remove"
dd if=/dev/zero of=/dev/mapper/rsrc1 bs=1M count=$((SZ / 2048)) oflag=direct status=none ||
	fail "zero member 1"

# stripe S: member 0 holds volume bytes [S*24K, +8K), member 1 the next 8K, member 2 the next
cp /tmp/rc.pat /tmp/rc.new
head -c 4096 /dev/urandom | dd of=/tmp/rc.new bs=4096 seek=$((S * 6)) conv=notrunc status=none
head -c 4096 /dev/urandom | dd of=/tmp/rc.new bs=4096 seek=$((S * 6 + 4)) conv=notrunc status=none

echo 1 >$HOLD
table 7 nosync rebuild 1 min_recovery_rate $RATE max_recovery_rate $RATE | dmsetup create $VOL || fail "create with rebuild 1"
c=$(cp_now)
[ "$c" -lt "$S" ] || fail "the rebuild passed stripe $S before the first write ($c): lower RATE"
dd if=/tmp/rc.new of=/dev/mapper/$VOL bs=4096 skip=$((S * 6)) seek=$((S * 6)) count=1 \
	oflag=direct status=none || fail "write 1"
for t in $(seq 600); do
	c=$(cp_now)
	[ "$c" -gt $((S + 1)) ] && break
	sleep 0.2
done
[ "$c" -gt $((S + 1)) ] || fail "the rebuild did not pass stripe $S ($c)"
dd if=/tmp/rc.new of=/dev/mapper/$VOL bs=4096 skip=$((S * 6 + 4)) seek=$((S * 6 + 4)) count=1 \
	oflag=direct status=none || fail "write 2"
# 1 MiB (43 stripes) from 4 stripes behind the rebuild: operations of
# several stripes across its checkpoint, which must not wait for ever
c3=$(cp_now)
b3=$(( (c3 > 4 ? c3 - 4 : 0) * 6 ))
[ $((b3 + 256)) -le $((STRIPES * 6)) ] || fail "the rebuild is too near the end for the 1 MiB write"
head -c 1048576 /dev/urandom | dd of=/tmp/rc.new bs=4096 seek=$b3 conv=notrunc status=none
dd if=/tmp/rc.new of=/dev/mapper/$VOL bs=4096 skip=$b3 seek=$b3 count=256 oflag=direct \
	status=none || fail "write 3"
c2=$(cp_now)
[ "$c2" -lt $STRIPES ] || fail "the rebuild ended before the cut: raise S or lower RATE"
# the cut
for i in $(seq 0 $((N - 1))); do dmsetup suspend --noflush rsrc$i || fail "suspend rsrc$i"; done
for i in $(seq 0 $((N - 1))); do
	dmsetup load rsrc$i --table "0 $SZ error" && dmsetup --noudevsync resume rsrc$i ||
		fail "error table on rsrc$i"
done
dmsetup remove --retry $VOL || fail "remove after the cut"
for i in $(seq 0 $((N - 1))); do
	dmsetup load rsrc$i --table "0 $SZ linear /dev/rsch$i 0" && dmsetup --noudevsync resume rsrc$i ||
		fail "linear table back on rsrc$i"
done
echo 0 >$HOLD
note "cut with the rebuild at stripe $c2 in memory (the first write before $S, the second after)"
mark=$(dmesg | wc -l)
table 3 nosync rebuild 1 | dmsetup create $VOL || fail "created again: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | grep -E 'replayed|resync|rainssd: member' | sed 's/^/    # /'
t_idle $VOL 600 || fail "rebuild after the cut not over: $(t_opstat $VOL sync_ratio) $(t_opstat $VOL sync_action)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "after the rebuild: health $(t_status_field $VOL 2)"
same "direct reads" /tmp/rc.new
dmsetup message $VOL 0 fail 0 || fail "fail 0"
same "member 0 failed" /tmp/rc.new
dmsetup remove --retry $VOL
exit 0
