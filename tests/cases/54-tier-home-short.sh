#!/bin/bash
# An aligned full-stripe write to a stripe in the tier, with a member out
# and the stripe's parity not yet resynced. A new volume with a tier
# resyncs at 1 KiB/s (stripe S is far above its checkpoint); 4 KiB to
# stripe S go to the tier; member 1 is failed (the resync stops); then one
# aligned full-stripe write to S. Its home cannot serve member 1's chunk
# (the parity of S was never resynced, and a member out keeps it so), so
# the stripe stays in the tier: the write succeeds and reads back, member
# 1's chunk from its other copy. Up to 1.11.15 placement moved the stripe
# home, the write failed (EIO, as a write whose data could not be read
# back), and the tier's copies were given up on the way: member 1's chunk
# of S read as EIO from then on (found by a helper's review). A full-stripe
# write to a stripe not in the tier goes into it now, where up to 1.11.15
# it failed at home (case 51's rule); one to a stripe whose parity is on
# member 1 stays at home, which holds it.
. "$REPO/tests/lib.sh"
N=4
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB
TIER=16384		# sectors of each member in the tier
VOL=rsth
S=400			# a multiple of 4: parity on member 3, data on 0, 1, 2
t_channels $N --size-mb 64
SZ=$(blockdev --getsz "${T_DEVS[0]}")
T_CHUNK=$CHUNK
T_LEN=$(( (SZ - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
line=$(t_table $CHUNK $T_LEN tier_size $TIER min_recovery_rate 1 max_recovery_rate 1)
echo "$line" | dmsetup create $VOL || fail "create: $line"
v=/dev/mapper/$VOL
[ "$(t_opstat $VOL sync_action)" = resync ] || fail "no initial resync: $(dmsetup status $VOL)"

head -c $((24 * 1024)) /dev/urandom >/tmp/th.full
head -c 4096 /dev/urandom >/tmp/th.small
dd if=/tmp/th.small of=$v bs=4k seek=$((S * 6)) oflag=direct status=none || fail "4 KiB to stripe $S"
ts=$(t_opstat $VOL tier_stripes)
[ "${ts%%/*}" = 1 ] || fail "the 4 KiB write did not enter the tier ($ts)"
c=$(t_sync_stripe $VOL $CHUNK)
[ "$c" -lt $S ] || fail "the resync passed stripe $S ($c)"
dmsetup message $VOL 0 fail 1 || fail "fail 1"
[ "$(t_status_field $VOL 2)" = ADAA ] || fail "health $(t_status_field $VOL 2), want ADAA"
home=$(t_opstat $VOL tier_to_r5)
if ! err=$(dd if=/tmp/th.full of=$v bs=24k seek=$S oflag=direct status=none 2>&1); then
	fail "the full-stripe write to stripe $S (in the tier, member 1 out) failed: $err; tier_to_r5 $home -> $(t_opstat $VOL tier_to_r5)"
fi
[ "$(t_opstat $VOL tier_to_r5)" = "$home" ] ||
	fail "stripe $S left the tier though its home cannot serve member 1's chunk"
cmp <(dd if=$v bs=24k skip=$S count=1 iflag=direct status=none) /tmp/th.full ||
	fail "stripe $S does not read back as written"
note "full-stripe write to stripe $S in the tier with member 1 out: kept in the tier, reads back"

# A stripe not in the tier, never written: at home member 1's chunk could
# not be read back (case 51's rule, EIO up to 1.11.15); it enters the tier.
S2=$((S + 4))
r1=$(t_opstat $VOL tier_to_r1)
if ! err=$(dd if=/tmp/th.full of=$v bs=24k seek=$S2 oflag=direct status=none 2>&1); then
	fail "the full-stripe write to stripe $S2 (not in the tier, not resynced, member 1 out) failed: $err"
fi
[ "$(t_opstat $VOL tier_to_r1)" = $((r1 + 1)) ] || fail "stripe $S2 did not enter the tier"
cmp <(dd if=$v bs=24k skip=$S2 count=1 iflag=direct status=none) /tmp/th.full ||
	fail "stripe $S2 does not read back as written"
note "full-stripe write to stripe $S2 outside the tier with member 1 out: entered the tier, reads back"

# Member 1 holds the parity of stripe S + 2: its home holds a write there.
S3=$((S + 2))
r1=$(t_opstat $VOL tier_to_r1)
dd if=/tmp/th.full of=$v bs=24k seek=$S3 oflag=direct status=none ||
	fail "the full-stripe write to stripe $S3 (member 1 its parity) failed"
[ "$(t_opstat $VOL tier_to_r1)" = "$r1" ] || fail "stripe $S3 entered the tier, though its home holds the write"
cmp <(dd if=$v bs=24k skip=$S3 count=1 iflag=direct status=none) /tmp/th.full ||
	fail "stripe $S3 does not read back as written"
note "full-stripe write to stripe $S3 (member 1 its parity): at home, reads back"
dmsetup remove --retry $VOL
