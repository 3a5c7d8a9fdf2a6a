#!/bin/bash
# SSDs grow latent bad sectors: a read error is not a dead member. Two
# members sit behind dm-dust with an unreadable 4 KiB block each, in
# different stripes (member 0 in stripe 0, member 2 in stripe 10). Reading
# everything back must succeed with the right data, no member may be
# failed, the errors must be counted as corrected, and the blocks healed
# (the rebuilt data written back, which clears dm-dust's bad block).
#
# On 1.3.0 before read-error repair (and on 1.2.0) this failed: status
# DADA and every I/O failed, although every stripe was recoverable.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
raw=("${T_DEVS[@]}")
T_DEVS=()
for i in 0 1 2 3; do
	echo "0 $(blockdev --getsz "${raw[$i]}") dust ${raw[$i]} 0 4096" | dmsetup create rsdust$i ||
		fail "dm-dust member $i"
	T_DEVS+=(/dev/mapper/rsdust$i)
done
t_create rsb 16
v=/dev/mapper/rsb
t_fio fill $v --rw=write --bs=64k --iodepth=8 --size=4m --verify=crc32c --do_verify=0
# 4 KiB blocks of the members: data offset 16 MiB = block 4096; a stripe is
# 8 KiB (chunk 16 sectors) on each member, 2 blocks.
dmsetup message rsdust0 0 addbadblock $((4096 + 0 * 2)) || fail addbadblock
dmsetup message rsdust2 0 addbadblock $((4096 + 10 * 2)) || fail addbadblock
dmsetup message rsdust0 0 enable
dmsetup message rsdust2 0 enable
t_fio fill $v --rw=write --bs=64k --iodepth=8 --size=4m --verify=crc32c --verify_only=1 \
	--verify_fatal=1
health=$(t_status_field rsb 2)
note "read back: health $health"
[ "$health" = AAAA ] || fail "health $health: a member was failed for a read error"
for i in 0 2; do
	left=$(dmsetup message rsdust$i 0 countbadblocks)
	note "member $i: $left"
	[[ $left == *"0 badblock"* ]] || fail "member $i: bad block not rewritten ($left)"
done
