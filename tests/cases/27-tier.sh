#!/bin/bash
# The RAID1 tier (tier_size): small and partial-stripe writes land in mirror
# copies, aligned full stripes in the RAID-5 homes, and every byte reads
# back: fio verify with mixed sizes, aligned and not, on a volume whose tier
# is small enough to fill (the offline migration moves stripes back under
# load); the volume removed and created again (the mapping table read from
# the members) and everything read back; the parity of the homes right
# (a stripe in the tier leaves its home as it was, so rainssd-check agrees
# over the raw members); a member failed: everything still reads back; then
# flush_tier empties the tier, and md RAID-5 assembled on the same members
# reads what rainssd holds, byte for byte.
. "$REPO/tests/lib.sh"

CHUNK=16
N=4
t_channels $N --size-mb 96 --lat-us 100
TIER=$((16 * 2048))	# 16 MiB of every member
sz=$(blockdev --getsz "${T_DEVS[0]}")
T_CHUNK=$CHUNK
T_LEN=$(( (sz - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
v=/dev/mapper/rst
line=$(t_table $CHUNK "$T_LEN" nosync tier_size $TIER migration_threshold 2)
note "table: $line"
echo "$line" | dmsetup create rst || fail "create with a tier"

# tier field <name>: one of the tier fields of the status line.
tier() {
	case $1 in
	action) t_opstat rst migration_action ;;
	mode) t_opstat rst metadata_mode ;;
	check) t_opstat rst needs_check ;;
	*) t_opstat rst "tier_$1" ;;
	esac
}

[ "$(tier stripes)" = "0/$(tier stripes | cut -d/ -f2)" ] || fail "a new tier is not empty: $(tier stripes)"
[ "$(tier mode)" = rw ] || fail "metadata_mode $(tier mode)"

# Mixed writes: 4 KiB random, 12 KiB unaligned, aligned full stripes
# (48 KiB), and 512-byte ones (partial 4 KiB rows), each verified. make
# test writes half of make test-full's bytes.
MB=$(t_size 12 24) IOS=$(t_size 1500 3000)
t_fio_verify small $v --rw=randwrite --bs=4k --size=${MB}m --iodepth=16
t_fio_verify unal $v --rw=randwrite --bs=12k --blockalign=4k --offset=${MB}m --size=${MB}m --iodepth=8
t_fio_verify full $v --rw=randwrite --bs=48k --blockalign=48k --offset=$((2 * MB))m --size=${MB}m --iodepth=4
t_fio_verify tiny $v --rw=randwrite --bs=512 --offset=72m --size=2m --iodepth=8 --number_ios=2000
# Rewrites of the first region: full stripes over stripes in the tier
# (they go home once their history reaches the threshold), and small ones.
t_fio_verify mixed $v --rw=randwrite --bsrange=4k-96k --blockalign=4k --size=${MB}m \
	--iodepth=8 --number_ios=$IOS
st=$(dmsetup status rst)
note "status: ${st##*rainssd }"
[ "$(tier to_r1)" -gt 0 ] || fail "no stripe entered the tier"
[ "$(tier writes)" -gt 0 ] || fail "no write landed in the tier"
[ "$(tier reads)" -gt 0 ] || fail "no read was served from the tier"
note "tier: $(tier stripes) stripes, $(tier to_r1) in, $(tier to_r5) out, $(tier offline) offline"

# Everything again after the volume is removed and created again.
sum1=$(dd if=$v bs=1M count=80 iflag=direct status=none | md5sum)
dmsetup remove --retry rst || fail "remove"
t_parity
echo "$line" | dmsetup create rst || fail "create again"
sum2=$(dd if=$v bs=1M count=80 iflag=direct status=none | md5sum)
[ "$sum1" = "$sum2" ] || fail "the volume reads differently after it was created again"
[ "$(tier stripes | cut -d/ -f1)" -gt 0 ] || fail "the tier came back empty: $(tier stripes)"
t_fio_verify mixed $v --rw=randwrite --bsrange=4k-96k --blockalign=4k --size=${MB}m \
	--iodepth=8 --number_ios=$IOS --verify_only
note "created again: same md5, the last writer's blocks verify"

# A member fails: the copies on the others and the homes' parity serve it all.
dmsetup message rst 0 fail 2 || fail "fail 2"
sum3=$(dd if=$v bs=1M count=80 iflag=direct status=none | md5sum)
[ "$sum1" = "$sum3" ] || fail "the volume reads differently with member 2 failed"
note "member 2 failed: same md5"
dmsetup remove --retry rst

# A new volume on fresh channels: flush_tier empties the tier.
"$CHANNELS" destroy >/dev/null 2>&1
t_channels $N --size-mb 96 --lat-us 100
line=$(t_table $CHUNK "$T_LEN" nosync tier_size $TIER)
echo "$line" | dmsetup create rst || fail "create a second volume"
# home_threshold (default 1): an aligned full-stripe write moves a stripe in
# the tier home at once; with HybRAID's rule (home_threshold 4, settable by
# message) the same writes leave it in the tier. Both stripes read back.
S=$(( (N - 1) * CHUNK * 512 ))	# bytes of a data stripe
hs=$(mktemp)
head -c $((4 * S)) /dev/urandom >"$hs"
put() {	# put <stripe> <bytes> <from stripe of $hs>
	dd if="$hs" of=$v bs=$2 count=1 skip=$(( $3 * S / $2 )) seek=$(( $1 * S / $2 )) \
		oflag=direct conv=notrunc status=none || fail "write to stripe $1"
}
put 10 4096 0
[ "$(tier stripes | cut -d/ -f1)" = 1 ] || fail "a 4 KiB write did not enter the tier: $(tier stripes)"
put 10 $S 1
[ "$(tier to_r5)" = 1 ] && [ "$(tier stripes | cut -d/ -f1)" = 0 ] ||
	fail "home_threshold 1: a full-stripe write left the stripe in the tier ($(tier stripes), $(tier to_r5) home)"
dmsetup message rst 0 home_threshold 4 || fail "message home_threshold 4"
dmsetup table rst | grep -q "home_threshold 4" || fail "the table does not print home_threshold 4"
put 20 4096 2
put 20 $S 3
[ "$(tier to_r5)" = 1 ] && [ "$(tier stripes | cut -d/ -f1)" = 1 ] ||
	fail "home_threshold 4: a second write moved the stripe home ($(tier stripes), $(tier to_r5) home)"
dmsetup message rst 0 home_threshold 1 || fail "message home_threshold 1"
dmsetup table rst | grep -q "home_threshold" && fail "the table prints the default home_threshold"
cmp <(dd if=$v bs=$S skip=10 count=1 iflag=direct status=none) <(dd if="$hs" bs=$S skip=1 count=1 status=none) ||
	fail "stripe 10 reads back wrong after it went home"
cmp <(dd if=$v bs=$S skip=20 count=1 iflag=direct status=none) <(dd if="$hs" bs=$S skip=3 count=1 status=none) ||
	fail "stripe 20 reads back wrong in the tier"
rm -f "$hs"
note "home_threshold: 1 moved a stripe home at its first full-stripe write, 4 kept one in the tier"

t_fio_verify small2 $v --rw=randwrite --bs=4k --size=$(t_size 16 32)m --iodepth=16
used=$(tier stripes | cut -d/ -f1)
[ "$used" -gt 0 ] || fail "no stripe in the tier before flush_tier"
sum1=$(dd if=$v bs=1M count=32 iflag=direct status=none | md5sum)
dmsetup message rst 0 flush_tier || fail "flush_tier"
for t in $(seq 300); do
	[ "$(tier stripes | cut -d/ -f1)" = 0 ] && [ "$(tier action)" = idle ] && break
	sleep 1
done
[ "$(tier stripes | cut -d/ -f1)" = 0 ] || fail "flush_tier left $(tier stripes) after 300 s"
note "flush_tier: $used stripes moved back ($(tier offline) offline migrations)"
sum2=$(dd if=$v bs=1M count=32 iflag=direct status=none | md5sum)
[ "$sum1" = "$sum2" ] || fail "the data changed while the tier was flushed"
dmsetup remove --retry rst
t_parity
# md RAID-5 over the same members' data areas reads the same bytes.
mdadm --create /dev/md27 --run --assume-clean --metadata=1.2 --level=5 --layout=left-symmetric \
	--chunk=$((CHUNK / 2))K --raid-devices=$N --data-offset=16M --bitmap=none \
	--size=$(( (sz - 32768 - TIER) / CHUNK * CHUNK / 2 ))K "${T_DEVS[@]}" >/dev/null 2>&1 ||
	fail "mdadm --create"
sum3=$(dd if=/dev/md27 bs=1M count=32 iflag=direct status=none | md5sum)
mdadm --stop /dev/md27 >/dev/null
[ "$sum1" = "$sum3" ] || fail "md RAID-5 reads other bytes than rainssd after flush_tier"
note "after flush_tier md RAID-5 reads the same 32 MiB"
