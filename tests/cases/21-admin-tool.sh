#!/bin/bash
# userspace-tools/rainssd-admin against the real target: create a volume,
# examine its members' superblocks, fail a member and `replace` it with a
# spare (rebuilt), stop the volume and `assemble` it again from the members
# given in another order; the data verifies throughout and `detail` labels
# the state.
. "$REPO/tests/lib.sh"
ADMIN=$REPO/userspace-tools/rainssd-admin
t_channels 5 --size-mb 40 --lat-us 50
spare=${T_DEVS[4]}
devs=("${T_DEVS[@]:0:4}")
"$ADMIN" create rsad --chunk 16K --nosync "${devs[@]}" >/tmp/admin.out 2>&1 ||
	{ cat /tmp/admin.out; fail "rainssd-admin create"; }
note "create: $(tail -1 /tmp/admin.out)"
v=/dev/mapper/rsad
t_fio adm $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=8m \
	--verify=crc32c --do_verify=0
for i in 0 1 2 3; do
	"$ADMIN" examine --json "${devs[$i]}" >/tmp/ex.json || fail "examine ${devs[$i]}"
	python3 -c "import json,sys; d=json.load(open('/tmp/ex.json')); sys.exit(0 if d['superblock']['role'] == $i else 1)" ||
		fail "examine ${devs[$i]}: role is not $i: $(cat /tmp/ex.json)"
done
note "examine: every member's superblock gives its role"
dmsetup message rsad 0 fail 2
"$ADMIN" replace rsad 2 "$spare" >/tmp/admin.out 2>&1 || { cat /tmp/admin.out; fail "replace"; }
for t in $(seq 300); do
	[ "$(t_opstat rsad sync_action)" = idle ] && [ "$(t_status_field rsad 2)" = AAAA ] && break
	sleep 1
done
[ "$(t_status_field rsad 2)" = AAAA ] || fail "not rebuilt: $(dmsetup status rsad)"
"$ADMIN" detail rsad >/tmp/detail.out || fail "detail"
grep -q "idle" /tmp/detail.out || { cat /tmp/detail.out; fail "detail does not say idle"; }
t_fio adm $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=8m \
	--verify=crc32c --verify_only=1 --verify_fatal=1
dmsetup remove --retry rsad
devs[2]=$spare
"$ADMIN" assemble rsad "${devs[3]}" "${devs[1]}" "${devs[0]}" "${devs[2]}" >/tmp/admin.out 2>&1 ||
	{ cat /tmp/admin.out; fail "assemble"; }
[ "$(t_status_field rsad 2)" = AAAA ] || fail "assembled: $(t_status_field rsad 2)"
t_fio adm $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=8m \
	--verify=crc32c --verify_only=1 --verify_fatal=1
note "replaced, rebuilt, assembled from shuffled members: verified"

# A volume with a RAID1 tier (superblock format 2): made with dmsetup, 4 KiB
# writes in the tier, then examined and assembled by the tool from shuffled
# members with one missing. Up to 1.11.9's tools such a member showed as
# corrupt and assemble refused it.
dmsetup remove --retry rsad
t_wipe_sb "${devs[@]}"
sz=$(blockdev --getsz "${devs[0]}")
TIER=4096
len=$(( (sz - 32768 - TIER) / 32 * 32 * 3 ))
echo "0 $len rainssd 32 4 ${devs[*]} 3 nosync tier_size $TIER" | dmsetup create rsad ||
	fail "create the tier volume"
t_fio admt $v --rw=randwrite --bs=4k --iodepth=8 --size=4m --verify=crc32c --do_verify=0
[ "$(t_opstat rsad tier_stripes | cut -d/ -f1)" -gt 0 ] || fail "no stripe in the tier"
dmsetup remove --retry rsad
"$ADMIN" examine "${devs[1]}" >/tmp/ex.out || { cat /tmp/ex.out; fail "examine a tier member"; }
grep -qE "^  tier +RAID1 tier: $TIER sectors per member" /tmp/ex.out ||
	{ cat /tmp/ex.out; fail "examine: no tier line"; }
"$ADMIN" assemble rsad "${devs[3]}" "${devs[0]}" "${devs[1]}" >/tmp/admin.out 2>&1 ||
	{ cat /tmp/admin.out; fail "assemble the tier volume"; }
grep -q "tier_size $TIER" /tmp/admin.out || { cat /tmp/admin.out; fail "assemble: no tier_size in the table"; }
[ "$(t_status_field rsad 2)" = AADA ] || fail "assembled tier volume: $(t_status_field rsad 2)"
t_fio admt $v --rw=randwrite --bs=4k --iodepth=8 --size=4m --verify=crc32c --verify_only=1 \
	--verify_fatal=1
note "tier volume (format 2): examined, assembled degraded from shuffled members: verified"
