#!/bin/bash
# A suspended table writes no superblock: a new table of the device may
# have read them and committed since. Up to 1.11.14 a `fail` message sent
# to the old table after its suspend was taken, and its commit (the old
# state: clean, with the old table's nonce) could land over the new
# table's first commit while the new table ran: the volume in use, its
# members saying "clean", so that a power cut then would be neither
# resynced nor replayed (a review of 1.11.14 found it).
#
# The volume is suspended and reloaded with member 1 given as -; with the
# superblock commits of resumed volumes held (debugfs hold_meta_commits:
# the old table's, not the new table's first), `fail 1` goes to the old
# table, then the resume runs: the new table takes the device and commits
# (in use; the hold keeps the resume waiting after that) and the old
# table's destructor would wait for its held commit. Once the new table's
# commit is on the members the hold is released. Then member 0's newest
# superblock must not say clean. Now the message is refused (EBUSY).
. "$REPO/tests/lib.sh"
t_knobs hold_meta_commits
t_channels 4 --size-mb 64 --lat-us 100
t_create rssf 16
v=/dev/mapper/rssf
t_fio_verify pre $v --rw=write --bs=64k --size=4m
# sb_word <dev> <byte> <bytes>: that field of the newest superblock copy
sb_word() {
	local o=0
	t_sb_save "$1" /tmp/sf.sb
	[ "$(od -An -t u8 -j 32 -N 8 /tmp/sf.sb)" -ge "$(od -An -t u8 -j 4128 -N 8 /tmp/sf.sb)" ] ||
		o=4096
	od -An -t u"$3" -j $((o + $2)) -N "$3" /tmp/sf.sb | tr -d ' '
}
dmsetup suspend rssf || fail "suspend"
[ $(($(sb_word "${T_DEVS[0]}" 76 4) & 1)) = 1 ] || fail "the suspend did not mark the volume clean"
t_table 16 "$T_LEN" | sed "s| ${T_DEVS[1]} | - |" | dmsetup reload rssf || fail "reload with member 1 as -"
echo 1 >$T_DBG/hold_meta_commits
if dmsetup message rssf 0 fail 1 2>/tmp/sf.err; then
	note "fail 1 to the suspended table: taken"
else
	note "fail 1 to the suspended table: refused ($(tr '\n' ' ' </tmp/sf.err))"
fi
dmsetup resume rssf &
res=$!
# Until the new table's first commit (in use, not clean) is on member 0;
# the hold keeps the resume waiting after it.
for t in $(seq 100); do
	[ $(($(sb_word "${T_DEVS[0]}" 76 4) & 1)) = 0 ] && break
	sleep 0.2
done
[ $(($(sb_word "${T_DEVS[0]}" 76 4) & 1)) = 0 ] ||
	{ echo 0 >$T_DBG/hold_meta_commits; fail "the new table's first commit did not reach member 0"; }
echo 0 >$T_DBG/hold_meta_commits
wait $res || fail "resume with the new table"
dmsetup info rssf | grep -q '^State: *ACTIVE' || fail "the new table is not live"
h=$(dmsetup status rssf | awk '{print $6}')
flags=$(sb_word "${T_DEVS[0]}" 76 4) gen=$(t_sb_events "${T_DEVS[0]}")
note "new table live, health $h; member 0's newest superblock: generation $gen, flags $flags"
[ "$h" = ADAA ] || fail "health $h, want ADAA"
[ $((flags & 1)) = 0 ] ||
	fail "the volume runs but its superblocks say clean (generation $gen): the old table's commit landed after the new table's"
t_fio pre $v --rw=read --bs=64k --size=4m --verify=crc32c --verify_only=1 --verify_fatal=1
note "the data written before verifies through the new table"

# A fail to a suspended table is refused and changes nothing.
dmsetup suspend rssf || fail "suspend"
dmsetup message rssf 0 fail 0 2>/dev/null && fail "fail 0 taken by a suspended table"
dmsetup resume rssf || fail "resume"
[ "$(dmsetup status rssf | awk '{print $6}')" = ADAA ] || fail "the refused fail changed the volume"
note "fail refused while suspended"
dmsetup remove --retry rssf
