#!/bin/bash
# Reads of several chunks are served whole (1.8.0, rainssd-read.c): one
# member bio per member range, built from the reader's own pages, instead of
# one remapped bio per chunk. Checked here:
#  - the data: fio verify with reads of 64 KiB and 1 MiB over 8 KiB chunks,
#    and of 44 KiB starting 4 KiB into a chunk (ragged ends, parity gaps);
#  - that they are wide: the members (dm-linear, counting every bio they
#    get) see fewer bios than the chunks read, where 1.7.0 sent one per
#    chunk (status `reads` still counts chunks);
#  - a member bio that fails: two members with an unreadable block each
#    under one read; the read returns the right data, both errors are
#    counted as corrected, both chunks (and only they) rebuilt and written
#    back, no member failed.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
raw=("${T_DEVS[@]}")
T_DEVS=()
# dm-dust for the bad blocks, dm-linear over it to count the bios a member
# gets (dm-dust cuts bios into its 4 KiB blocks and counts the pieces).
for i in 0 1 2 3; do
	sz=$(blockdev --getsz "${raw[$i]}")
	echo "0 $sz dust ${raw[$i]} 0 4096" | dmsetup create rsd$i || fail "dm-dust member $i"
	echo "0 $sz linear /dev/mapper/rsd$i 0" | dmsetup create rsw$i || fail "dm-linear member $i"
	T_DEVS+=(/dev/mapper/rsw$i)
done
t_create rsw 16
v=/dev/mapper/rsw

# Bios the members got: the reads field of each one's stat.
member_bios() {
	local d s=0 n
	for d in "${T_DEVS[@]}"; do
		n=$(awk '{print $1}' "/sys/block/$(basename "$(readlink -f "$d")")/stat")
		s=$((s + n))
	done
	echo $s
}

t_fio fill $v --rw=write --bs=64k --iodepth=8 --size=8m --verify=crc32c --do_verify=0
t_fio fill2 $v --rw=write --bs=44k --offset=8196k --iodepth=4 --size=4400k --verify=crc32c \
	--do_verify=0
b0=$(member_bios)
r0=$(t_status_field rsw 3)
t_fio fill $v --rw=read --bs=64k --iodepth=8 --size=8m --verify=crc32c --verify_only=1 \
	--verify_fatal=1
t_fio fill $v --rw=read --bs=1m --iodepth=2 --size=8m --verify=crc32c --verify_only=1 \
	--verify_fatal=1 --verify_interval=64k
t_fio fill2 $v --rw=read --bs=44k --offset=8196k --iodepth=4 --size=4400k --verify=crc32c \
	--verify_only=1 --verify_fatal=1
note "fio verified: 64 KiB, 1 MiB and 44 KiB reads"
bios=$(($(member_bios) - b0))
chunks=$(($(t_status_field rsw 3) - r0))
note "reads of $chunks chunks took $bios member bios"
[ "$chunks" -gt 2000 ] || fail "only $chunks chunks read: the status reads counter is off"
# 64 KiB reads over 3 x 8 KiB of data per stripe: about 5 member bios for 8
# chunks; a member's range breaks where it holds the parity.
[ $((bios * 4)) -lt $((chunks * 3)) ] ||
	fail "$bios member bios for $chunks chunks: the reads were not served wide"

# Member 0's block in stripe 1 and member 2's in stripe 2 (4 KiB blocks:
# data from block 4096, a stripe is 2 blocks per member), both inside the
# first 64 KiB read (stripes 0-3).
dmsetup message rsd0 0 addbadblock $((4096 + 1 * 2)) || fail addbadblock
dmsetup message rsd2 0 addbadblock $((4096 + 2 * 2 + 1)) || fail addbadblock
dmsetup message rsd0 0 enable
dmsetup message rsd2 0 enable
t_fio fill $v --rw=read --bs=64k --iodepth=1 --size=64k --verify=crc32c --verify_only=1 \
	--verify_fatal=1
health=$(t_status_field rsw 2)
errors=$(t_opstat rsw read_errors)
repaired=$(t_opstat rsw repaired)
note "after the bad blocks: health $health, read_errors $errors, repaired $repaired"
[ "$health" = AAAA ] || fail "health $health: a member was failed for a read error"
[ "$errors" = 1:0:1:0 ] || fail "read_errors $errors, expected 1:0:1:0"
# Only the chunks that hold a bad block: the others read fine on their own.
[ "$repaired" = 1:0:1:0 ] || fail "repaired $repaired, expected 1:0:1:0"
for i in 0 2; do
	left=$(dmsetup message rsd$i 0 countbadblocks)
	[[ $left == *"0 badblock"* ]] || fail "member $i: bad block not rewritten ($left)"
done
t_fio fill $v --rw=read --bs=1m --iodepth=2 --size=8m --verify=crc32c --verify_only=1 \
	--verify_fatal=1 --verify_interval=64k
t_parity

# A failed member is never read wide. Member 1 is failed by message (its
# device stays readable, holding what it held), the first 8 MiB written
# again with other bytes, degraded; 1 MiB reads must return the new bytes
# (member 1's chunks rebuilt from the others), not member 1's stale ones.
head -c 8M /dev/urandom >/tmp/wide-a
head -c 8M /dev/urandom >/tmp/wide-b
dd if=/tmp/wide-a of=$v bs=1M oflag=direct status=none || fail "write a"
dmsetup message rsw 0 fail 1 || fail "fail 1"
[ "$(t_status_field rsw 2)" = ADAA ] || fail "member 1 not failed: $(t_status_field rsw 2)"
dd if=/tmp/wide-b of=$v bs=1M oflag=direct status=none || fail "write b"
got=$(dd if=$v bs=1M count=8 iflag=direct status=none | md5sum | cut -d' ' -f1)
want=$(md5sum </tmp/wide-b | cut -d' ' -f1)
stale=$(md5sum </tmp/wide-a | cut -d' ' -f1)
note "degraded 1 MiB reads: $got (written $want, before $stale)"
[ "$got" = "$want" ] || fail "degraded reads returned other bytes than the last written"
