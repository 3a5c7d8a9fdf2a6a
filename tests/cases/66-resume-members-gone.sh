#!/bin/bash
# A suspended volume (its superblocks say clean) whose members all fail
# every write by the time it is resumed: the resume's commit (the volume in
# use again) reaches no member, so the volume is failed. It must resume
# anyway and fail its I/O, as a volume already failed does (1.11.19): up to
# 1.11.22 that first resume returned EIO and left the device suspended,
# holding its I/O, and only a second resume went through (found by a
# review of 1.11.22).
. "$REPO/tests/lib.sh"
CHUNK=16
VOL=rsmg
t_linear_members rsmgm 4
t_create $VOL $CHUNK
v=/dev/mapper/$VOL
dd if=/dev/urandom of=$v bs=64k count=16 oflag=direct status=none || fail "write"
dmsetup suspend $VOL || fail "suspend"
for i in 0 1 2 3; do
	dmsetup suspend rsmgm$i && dmsetup load rsmgm$i --table "0 $SZ error" &&
		dmsetup --noudevsync resume rsmgm$i || fail "error table on member $i"
done
mark=$(dmesg | wc -l)
rc=0
dmsetup resume $VOL 2>/tmp/mg.err || rc=$?
note "resume with every member failing: exit $rc; $(dmesg | tail -n +$((mark + 1)) | grep -i rainssd | tail -2 | tr '\n' ' ')"
if [ "$rc" != 0 ]; then
	dmsetup resume $VOL 2>/dev/null	# so that the device is not left holding I/O
	fail "the resume failed (exit $rc): $(tail -1 /tmp/mg.err)"
fi
[ "$(dmsetup info -c --noheadings -o attr $VOL | cut -c3)" != s ] || fail "the volume is still suspended"
[ "$(t_status_field $VOL 2)" = DDDD ] || note "health $(t_status_field $VOL 2)"
# Its I/O fails, and does not hang.
rc=0
timeout 60 dd if=$v of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null || rc=$?
[ "$rc" != 124 ] || fail "a read of the failed volume hung"
[ "$rc" != 0 ] || fail "a read of the failed volume succeeded"
rc=0
timeout 60 dd if=/dev/zero of=$v bs=4k count=1 oflag=direct status=none 2>/dev/null || rc=$?
[ "$rc" != 124 ] || fail "a write to the failed volume hung"
[ "$rc" != 0 ] || fail "a write to the failed volume succeeded"
note "the failed volume resumed; its reads and writes fail"
dmsetup remove --retry $VOL || fail "remove"
