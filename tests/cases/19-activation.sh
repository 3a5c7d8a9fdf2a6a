#!/bin/bash
# What activation makes of members that are not what the table says:
# members in the wrong order, a member of another volume, a corrupted
# superblock, a blank device among initialized ones: refused with a clear
# message. A stale member (the device as it was before later writes, its
# superblock a generation behind): taken as failed, its old data never
# served. "-" for a member: the volume runs degraded and prints "-".
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 48 --lat-us 50
A=("${T_DEVS[@]}")
"$CHANNELS" create 4 --prefix rsx --size-mb 48 --lat-us 50 >/dev/null
B=(/dev/rsx0 /dev/rsx1 /dev/rsx2 /dev/rsx3)

# refused <expected message> <table>: the load fails with that message.
refused() {
	local mark
	mark=$(dmesg | wc -l)
	if echo "$2" | dmsetup create rsa_bad 2>/dev/null; then
		dmsetup remove --retry rsa_bad
		fail "accepted: $2"
	fi
	dmesg | tail -n +$((mark + 1)) | grep -qF "$1" || fail "no '$1' for: $2"
	note "refused: $1"
}
# The superblock area of a member: both 4 KiB copies at 1 MiB.
save_sb() { dd if="$1" of="$2" bs=4k skip=256 count=2 iflag=direct status=none; }
load_sb() { dd if="$2" of="$1" bs=4k seek=256 count=2 oflag=direct conv=notrunc status=none; }
verify() { # verify <job> <offset>: read back what that job wrote
	t_fio "$1" /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --offset="$2" --size=8m \
		--verify=crc32c --verify_only=1 --verify_fatal=1
}

# Volume A with data, volume B, each made and stopped.
T_DEVS=("${A[@]}")
t_create rsa 16
t_fio one /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --size=8m --verify=crc32c --do_verify=0
tblA=$(dmsetup table rsa)
dmsetup remove --retry rsa
T_DEVS=("${B[@]}")
t_create rsb 16
t_fio bee /dev/mapper/rsb --rw=write --bs=64k --iodepth=8 --size=8m --verify=crc32c --do_verify=0
tblB=$(dmsetup table rsb)
dmsetup remove --retry rsb
lenA=$(echo "$tblA" | awk '{print $2}')
tab() { echo "0 $lenA rainssd 16 4 $*"; }

refused "wrong place" "$(tab "${A[0]}" "${A[2]}" "${A[1]}" "${A[3]}")"
refused "another volume" "$(tab "${A[0]}" "${A[1]}" "${B[2]}" "${A[3]}")"
refused "Target length exceeds" "0 $((lenA + 48)) rainssd 16 4 ${A[*]}"
save_sb "${A[2]}" /tmp/sb2
for c in 0 1; do	# one byte in each copy, inside the checksummed block
	t_poke "${A[2]}" $(((256 + c) * 4096 + 100)) '\x5a'
done
refused "corrupt" "$(tab "${A[@]}")"
t_wipe_sb "${A[2]}"
refused "no superblock but the others do" "$(tab "${A[@]}")"
load_sb "${A[2]}" /tmp/sb2
echo "$(tab "${A[@]}")" | dmsetup create rsa || fail "A with its members as they were"
[ "$(t_status_field rsa 2)" = AAAA ] || fail "health $(t_status_field rsa 2)"
verify one 0

# A member stale when the table is loaded and current when it is first
# resumed (an older table's commit in flight at the load, or the member
# put back in between): in service, and written. Up to 1.11.5 it stayed
# out of service in memory while the superblocks said in_sync: it missed
# every write, and the next activation trusted its old data.
dmsetup remove --retry rsa
save_sb "${A[1]}" /tmp/sb1.old
echo "$(tab "${A[@]}")" | dmsetup create rsa && dmsetup remove --retry rsa || fail "A again"
save_sb "${A[1]}" /tmp/sb1.now
load_sb "${A[1]}" /tmp/sb1.old
dmsetup create rsa --notable && dmsetup load rsa --table "$(tab "${A[@]}")" ||
	fail "load of A with member 1 stale"
load_sb "${A[1]}" /tmp/sb1.now
dmsetup resume rsa || fail "resume of A with member 1 current again"
health=$(t_status_field rsa 2)
[ "$health" = AAAA ] || fail "member 1 current at the resume: health $health"
t_fio three /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --offset=8m --size=8m \
	--do_verify=0 --verify_pattern=0x3c3c3c3c --verify=pattern
dmsetup remove --retry rsa
echo "$(tab "${A[@]}")" | dmsetup create rsa || fail "A after member 1 came back"
t_fio three /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --offset=8m --size=8m \
	--verify_pattern=0x3c3c3c3c --verify=pattern --verify_only=1 --verify_fatal=1
verify one 0
note "member 1 stale at the load, current at the resume: in service, the writes since read back"
rm -f /tmp/sb1.old /tmp/sb1.now

# Stale: member 3 as it is now (volume suspended: nothing in flight), more
# writes, then member 3 put back as it was, superblock and data.
dmsetup suspend rsa
dd if="${A[3]}" of=/tmp/m3.img bs=1M status=none iflag=direct
dmsetup resume rsa
t_fio two /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --offset=0 --size=8m \
	--do_verify=0 --verify_pattern=0x5a5a5a5a --verify=pattern
dmsetup remove --retry rsa
dd if=/tmp/m3.img of="${A[3]}" bs=1M oflag=direct status=none
rm -f /tmp/m3.img
echo "$(tab "${A[@]}")" | dmsetup create rsa || fail "A with a stale member 3"
health=$(t_status_field rsa 2)
note "stale member 3: health $health"
[ "$health" = AAAD ] || fail "health $health: the stale member is in service"
t_fio two /dev/mapper/rsa --rw=write --bs=64k --iodepth=8 --offset=0 --size=8m \
	--verify_pattern=0x5a5a5a5a --verify=pattern --verify_only=1 --verify_fatal=1
note "the data written after the copy reads back, rebuilt around the stale member"
dmsetup remove --retry rsa

# Two members out (the stale one, and "-"): refused, never served.
refused "Two or more members" "$(tab "${A[0]}" - "${A[2]}" "${A[3]}")"

# "-" for member 1 of B: degraded, and the printed table keeps the "-".
echo "$tblB" | awk -v s=- '{ $7 = s; print }' | dmsetup create rsb || fail "B with - for member 1"
[ "$(t_status_field rsb 2)" = ADAA ] || fail "health $(t_status_field rsb 2) with -"
tbl=$(dmsetup table rsb)
[ "$(echo "$tbl" | awk '{print $7}')" = - ] || fail "the table does not print -: $tbl"
t_fio bee /dev/mapper/rsb --rw=write --bs=64k --iodepth=8 --size=8m --verify=crc32c \
	--verify_only=1 --verify_fatal=1
dmsetup suspend rsb
dmsetup reload rsb --table "$tbl" && dmsetup resume rsb || fail "reload of the table with -"
[ "$(t_status_field rsb 2)" = ADAA ] || fail "health $(t_status_field rsb 2) after the reload"
note "degraded with -: verified, the printed table reloads"
