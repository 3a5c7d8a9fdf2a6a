#!/bin/bash
# A `dmsetup reload` while the live table commits its superblocks (a
# rebuild's checkpoint, every 2 s of its progress). The new table's
# constructor reads the members one after another; with member 1's
# superblock reads held DELAY_MS (dm-delay), member 0 is read generations
# before the others. Who is stale is decided at the table's first resume,
# on the superblocks the old table left, as the rebuild refusal already is:
# the reload must be accepted, and its resume go on with the rebuild. Up to
# 1.11.22 the constructor took member 0 for stale and, with member 3
# rebuilding, refused the reload ("Two or more members failed, missing,
# stale or rebuilding"), the table the volume prints refused while the
# rebuild ran (found by a review of 1.11.22).
. "$REPO/tests/lib.sh"
CHUNK=64
VOL=rsrl
DELAY_MS=${DELAY_MS:-8000}
t_linear_members rsrlm 4
t_create $VOL $CHUNK
v=/dev/mapper/$VOL
t_fio data $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=16m \
	--verify=crc32c --do_verify=0

# Member 3 out, then rebuilt slowly from stripe 0.
dmsetup message $VOL 0 fail 3 || fail "fail 3"
dmsetup suspend $VOL
dmsetup reload $VOL --table "$(t_table $CHUNK "$T_LEN" rebuild 3 nosync max_recovery_rate 1024)" ||
	fail "reload with rebuild 3"
dmsetup resume $VOL || fail "resume with rebuild 3"
[ "$(t_opstat $VOL sync_action)" = recover ] || fail "no rebuild: $(t_opstat $VOL sync_action)"
ev0=$(t_sb_events "${T_DEVS[0]}")
sleep 5
ev1=$(t_sb_events "${T_DEVS[0]}")
note "the rebuild commits: generation $ev0, then $ev1 5 s later"
[ $((ev1 - ev0)) -ge 2 ] || fail "the rebuild committed $((ev1 - ev0)) generations in 5 s, want 2 or more"

# Member 1's superblock area (its first 4096 sectors) behind dm-delay:
# reads held DELAY_MS, writes and flushes at once.
dmsetup suspend rsrlm1 &&
	printf '0 4096 delay /dev/rsch1 0 %d /dev/rsch1 0 0 /dev/rsch1 0 0\n4096 %d linear /dev/rsch1 4096\n' \
		"$DELAY_MS" $((SZ - 4096)) | dmsetup load rsrlm1 &&
	dmsetup --noudevsync resume rsrlm1 || fail "member 1's superblock reads behind dm-delay"

tbl=$(dmsetup table $VOL)
ev0=$(t_sb_events "${T_DEVS[0]}")
mark=$(dmesg | wc -l)
rc=0
dmsetup reload $VOL --table "$tbl" 2>/tmp/rl.err || rc=$?
ev1=$(t_sb_events "${T_DEVS[0]}")
note "reload of the printed table while the rebuild committed generations $ev0 to $ev1: exit $rc"
[ "$rc" = 0 ] || fail "the reload was refused: $(dmesg | tail -n +$((mark + 1)) | grep -i rainssd | tail -2 | tr '\n' ' ')"
[ $((ev1 - ev0)) -ge 2 ] ||
	fail "only $((ev1 - ev0)) commits during the reload: the case did not test a constructor beside commits"
dmsetup resume $VOL || fail "resume of the reloaded table"
health=$(t_status_field $VOL 2)
note "after the reload: health $health, $(t_opstat $VOL sync_action) at $(t_opstat $VOL sync_ratio)"
[ "$health" = AAAa ] || fail "health $health after the reload, want AAAa (member 3 rebuilding)"
[ "$(t_opstat $VOL sync_action)" = recover ] || fail "the rebuild did not go on: $(t_opstat $VOL sync_action)"

# Member 1 back as it was; the rebuild finished; everything verifies, with
# a member other than the rebuilt one failed.
dmsetup suspend rsrlm1 && dmsetup load rsrlm1 --table "0 $SZ linear /dev/rsch1 0" &&
	dmsetup --noudevsync resume rsrlm1 || fail "member 1's linear table back"
dmsetup message $VOL 0 max_recovery_rate 200000
t_idle $VOL 300 || fail "rebuild not done: $(t_opstat $VOL sync_ratio)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "health $(t_status_field $VOL 2) after the rebuild"
dmsetup suspend $VOL
t_parity
dmsetup resume $VOL
dmsetup message $VOL 0 fail 0 || fail "fail 0"
t_fio data $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=16m \
	--verify=crc32c --verify_only=1 --verify_fatal=1
note "rebuilt member 3 verifies with member 0 failed"
