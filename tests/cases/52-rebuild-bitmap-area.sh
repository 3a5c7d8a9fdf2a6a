#!/bin/bash
# The bitmap is read from the members in sync, never from the member being
# rebuilt: a new device's bitmap area holds its old bytes. Up to 1.11.14
# every member in service was read and ORed, so after an unclean shutdown
# a replacement whose bitmap area was not zero made dirty regions that only
# the rebuilding member could resync: the rebuild was held for good
# ("the rebuild is held") and its chunks there read as I/O errors (a review
# of 1.11.14 found it).
#
# 4 members behind dm-linear, an idle volume (its bitmap clear) cut as by a
# power cut; member 3 is then a used device: no superblock, its bitmap
# area (1 MiB from sector 4096) all ones. Activated with `rebuild 3`: the
# rebuild must run to its end, and the data written before the cut must
# verify.
. "$REPO/tests/lib.sh"
t_linear_members rsbm 4
t_create rsb 128
v=/dev/mapper/rsb
t_fio_verify pre $v --rw=write --bs=64k --size=8m
# The bits of the write's regions are cleared 2-4 s after it: an idle volume
# (the situation this case is about; with bits still set the cut would
# leave dirty regions and test another one).
clear=0
for t in $(seq 150); do
	[ "$(dd if="${T_DEVS[0]}" bs=512 skip=4096 count=8 iflag=direct status=none | tr -d '\0' | wc -c)" = 0 ] &&
		{ clear=1; break; }
	sleep 0.2
done
[ $clear = 1 ] || fail "member 0's bitmap still has bits set 30 s after the write"
t_cut_members rsbm 4
dmsetup remove --retry rsb || fail "remove after the cut"
t_uncut_members rsbm 4
t_wipe_sb "${T_DEVS[3]}"
head -c 1048576 /dev/zero | tr '\0' '\377' |
	dd of="${T_DEVS[3]}" bs=1M seek=2 count=1 oflag=direct conv=notrunc iflag=fullblock status=none ||
	fail "fill member 3's bitmap area"
t_table 128 "$T_LEN" rebuild 3 | dmsetup create rsb || fail "create with rebuild 3"
note "activated with rebuild 3: health $(t_status_field rsb 2), $(t_opstat rsb sync_action)"
for t in $(seq 600); do
	[ "$(t_status_field rsb 2)" = AAAA ] && break
	sleep 0.2
done
h=$(t_status_field rsb 2)
note "after the rebuild: health $h, $(t_opstat rsb sync_ratio) $(t_opstat rsb sync_action)"
[ "$h" = AAAA ] || fail "health $h after 120 s, $(t_opstat rsb sync_action) ($(dmesg | grep -c 'the rebuild is held') 'held' lines in the kernel log)"
t_fio pre $v --rw=read --bs=64k --size=8m --verify=crc32c --verify_only=1 --verify_fatal=1
note "the data written before the cut verifies"
dmsetup remove --retry rsb
t_parity
