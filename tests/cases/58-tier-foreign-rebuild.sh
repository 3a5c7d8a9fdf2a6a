#!/bin/bash
# A member rebuilt onto a device of another copy of the volume takes this
# volume's tier table in both slots of its commit record. The tier commits
# only what changed, so up to 1.11.18 the first resume wrote one slot, and
# the device kept the other copy's newer commit record in the other slot;
# once the member was in sync, the next activation took that record (the
# newest any member holds) with the other copy's block generations, and the
# volume was refused as corrupt, or mapped stripes to slots with other data
# (a review of 1.11.18 found it).
#
# 4 members with a tier, 8 KiB chunks: 8 MiB written, then every member
# copied to a second set of devices (the copy: same volume, same UUID), the
# copy activated alone and made forty commits ahead with O_DSYNC writes to
# stripes the volume never wrote, then the volume's member 2 given the
# copy's device with `rebuild 2`, rebuilt with no write, removed and
# created again: it must activate, and read back as written, with member 0
# failed too (the rebuilt member's tier copies serve).
. "$REPO/tests/lib.sh"

CHUNK=16
N=4
TIER=$((8 * 2048))
t_channels $((2 * N)) --size-mb 64 --lat-us 100
COPY=("${T_DEVS[@]:$N:$N}")
T_DEVS=("${T_DEVS[@]:0:$N}")
sz=$(blockdev --getsz "${T_DEVS[0]}")
T_CHUNK=$CHUNK
T_LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
v=/dev/mapper/rsf
t_table $CHUNK "$T_LEN" nosync tier_size $TIER | dmsetup create rsf || fail "create"
t_fio_verify fill $v --rw=randwrite --bs=4k --size=8m --iodepth=16 --number_ios=1000
sum=$(dd if=$v bs=1M count=20 iflag=direct status=none | md5sum)
note "tier after the writes: $(dmsetup status rsf | t_tail_field tier_stripes) stripes"
dmsetup remove --retry rsf || fail "remove"

# The copy: every member's bytes on a device of the second set.
for i in $(seq 0 $((N - 1))); do
	dd if="${T_DEVS[$i]}" of="${COPY[$i]}" bs=1M iflag=direct oflag=direct status=none ||
		fail "copy member $i"
done
ORIG=("${T_DEVS[@]}")
T_DEVS=("${COPY[@]}")
t_table $CHUNK "$T_LEN" tier_size $TIER | dmsetup create rsf || fail "create the copy"
T_DEVS=("${ORIG[@]}")
t0=$(dmsetup status rsf | t_tail_field tier_stripes)
for k in $(seq 0 39); do
	head -c 4096 /dev/urandom | dd of=$v bs=4k seek=$((3072 + k * 48)) oflag=direct,dsync \
		status=none || fail "the copy's write $k"
done
t1=$(dmsetup status rsf | t_tail_field tier_stripes)
# each write took a stripe into the tier, and waited for the commit that says so
[ $((${t1%/*} - ${t0%/*})) = 40 ] || fail "the copy's forty writes took $t0 -> $t1 stripes into the tier, not 40"
note "the copy: forty writes with O_DSYNC to stripes the volume never wrote; tier $t0 -> $t1 stripes"
dmsetup remove --retry rsf || fail "remove the copy"

# Member 2 of the volume rebuilt onto the copy's member 2.
T_DEVS[2]=${COPY[2]}
line2=$(t_table $CHUNK "$T_LEN" tier_size $TIER)
t_table $CHUNK "$T_LEN" tier_size $TIER rebuild 2 | dmsetup create rsf || fail "create with rebuild 2 onto the copy's device"
t_idle rsf 120 || fail "the rebuild of member 2 did not end: $(t_opstat rsf sync_action) $(t_opstat rsf sync_ratio)"
[ "$(t_status_field rsf 2)" = AAAA ] || fail "health $(t_status_field rsf 2) after the rebuild"
dmsetup remove --retry rsf || fail "remove after the rebuild"

echo "$line2" | dmsetup create rsf ||
	fail "the volume with its rebuilt member refused: $(dmesg | grep rainssd | tail -2)"
[ "$(dd if=$v bs=1M count=20 iflag=direct status=none | md5sum)" = "$sum" ] ||
	fail "the volume with its rebuilt member reads other bytes"
dmsetup message rsf 0 fail 0 || fail "fail 0"
[ "$(dd if=$v bs=1M count=20 iflag=direct status=none | md5sum)" = "$sum" ] ||
	fail "with member 0 failed, the volume reads other bytes"
note "activated again with member 2 rebuilt onto the copy's device: reads back as written, with member 0 failed too"
dmsetup remove --retry rsf

# A commit record, and a record, numbered past the loader's limit (each
# forged on member 1 with a right crc32c, member 1 restored after each):
# refused with the tier's error and the reason, no member's byte changed.
FUZZ=$REPO/userspace-tools/rainssd-fuzz
dd if="${T_DEVS[1]}" of=/tmp/tf.m1 bs=1M iflag=direct status=none || fail "save member 1"
seen=""
for seed in $(seq 1 40); do
	"$FUZZ" corrupt --seed "$seed" --dev "${T_DEVS[1]}" --area tier --mode forge --kind seq-limit \
		>/tmp/tf.forge || fail "rainssd-fuzz --kind seq-limit: $(tail -2 /tmp/tf.forge)"
	kind=record
	grep -q 'a commit record numbered' /tmp/tf.forge && kind=commit
	if [[ " $seen " != *" $kind "* ]]; then
		grep -q 'expect: refused' /tmp/tf.forge || fail "the forge expects no refusal: $(tail -1 /tmp/tf.forge)"
		before=$(for d in "${T_DEVS[@]}"; do dd if="$d" bs=1M iflag=direct status=none | md5sum; done)
		mark=$(dmesg | wc -l)
		if echo "$line2" | dmsetup create rsf 2>/tmp/tf.err; then
			dmsetup remove --retry rsf
			fail "a tier table with a $kind numbered past the limit was taken: $(grep -oE '(numbered|seq) [0-9]+' /tmp/tf.forge | head -1)"
		fi
		klog=$(dmesg | tail -n +$((mark + 1)))
		[[ $klog == *"Tier mapping table"* ]] || fail "$kind: refused without the tier's error: $(cat /tmp/tf.err)"
		[[ $klog == *"near its limit"* ]] || fail "$kind: refused, not for the limit: $(echo "$klog" | grep rainssd | tail -2)"
		[ "$(for d in "${T_DEVS[@]}"; do dd if="$d" bs=1M iflag=direct status=none | md5sum; done)" = "$before" ] ||
			fail "$kind: the refused activation changed the members' bytes"
		note "a $kind numbered past the limit (seed $seed): refused ($(echo "$klog" | grep -oE '(commit|record with a) sequence[a-z ]* near its limit' | head -1))"
		seen="$seen $kind"
	fi
	dd if=/tmp/tf.m1 of="${T_DEVS[1]}" bs=1M oflag=direct status=none || fail "restore member 1"
	[ "$(echo $seen | wc -w)" = 2 ] && break
done
[ "$(echo $seen | wc -w)" = 2 ] || fail "40 seeds forged only:$seen"
rm -f /tmp/tf.m1
