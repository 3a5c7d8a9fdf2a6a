#!/bin/bash
# A member whose cache flush fails inside a commit of the tier's mapping
# table may have lost the rows the new table points to on it: the
# superblocks must say it failed before any member holds that table
# (1.11.13). Up to 1.11.12 the commit wrote the table to the other members
# first, and only then failed the member and committed the superblocks: a
# power cut in between left it in sync under a table that sends reads to
# rows its cache had lost (found by review of 1.11.12).
#
# dm-linear members, a RAID1 tier. 4 KiB writes to stripes never written
# (each a new mapping record), then an fsync, whose flush waits for the
# tier's commit; the superblock commits held (debugfs hold_meta_commits)
# and that commit's flush to member 1 made to fail (fail_meta_flush).
# Once member 1 is failed in memory, and 2 s later: member 0's copy of the
# table and commit records must be as before while its superblock still
# says member 1 is in sync (on 1.11.12 it held the new table by then).
# Then the commits are let go: the fsync returns, the superblocks say
# member 1 failed, member 0 holds the new table; after a power cut the
# volume activates with member 1 failed and reads back every byte as
# written (a check of that activation: dm-linear loses nothing at a cut,
# so this last part passes on 1.11.12 too).
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rstf
TIER=16384
t_knobs hold_meta_commits pass_meta_commits fail_meta_flush hold_tier_commits
DBG=$T_DBG
knobs_off() { t_knobs_off; }

t_linear_members rstf $N
LEN=$(( (SZ - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync tier_size $TIER"; }
v=/dev/mapper/$VOL
MB=16

# 4 MiB of data in 1 MiB writes (full stripes to RAID-5, the ragged ends to
# the tier), the rest of the first 16 MiB zero (zeroed channels).
head -c $((4 << 20)) /dev/urandom >/tmp/tf.pat
head -c $(((MB - 4) << 20)) /dev/zero >>/tmp/tf.pat
table | dmsetup create $VOL || fail "create with a tier"
dd if=/tmp/tf.pat of=$v bs=1M count=4 oflag=direct conv=fsync status=none || fail "write"
dmsetup remove --retry $VOL || fail "remove"
json=$("$CHECK" --dump-tier --json "${T_DEVS[@]}") || fail "rainssd-check --dump-tier"
read -r start blocks vec < <(echo "$json" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tier"]
print(t["start"], t["blocks"], t["vec_blocks"])')
# table_sum: member 0's two table copies and two commit records
table_sum() {
	dd if=${T_DEVS[0]} bs=512 skip="$start" count=$((2 * (blocks + vec) * 8)) iflag=direct \
		status=none | md5sum
}
note "tier table at member sector $start: $blocks blocks, commit records of $vec"
table | dmsetup create $VOL || fail "create again"
before=$(table_sum)

# New stripes, 4 KiB each, from 8 MiB on: each a new record in the tier.
mark=$(dmesg | wc -l)
echo 1 >$DBG/hold_meta_commits
echo 2 >$DBG/fail_meta_flush
for k in 0 1 2 3 4 5 6 7; do
	head -c 4096 /dev/urandom |
		dd of=/tmp/tf.pat bs=4096 seek=$((2048 + k * 6)) conv=notrunc status=none
done
python3 - "$v" >/tmp/tf.err 2>&1 <<'PY' &
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
src = os.open("/tmp/tf.pat", os.O_RDONLY)
import mmap
buf = mmap.mmap(-1, 4096)
for k in range(8):
    off = (2048 + k * 6) * 4096
    buf.seek(0)
    buf.write(os.pread(src, 4096, off))
    assert os.pwritev(fd, [buf], off) == 4096
os.fsync(fd)
PY
w=$!
by_tier_flush() { dmesg | tail -n +$((mark + 1)) | grep -qE "member 1 .*failed: tier table (flush|write) error"; }
for t in $(seq 150); do
	[ "$(t_status_field $VOL 2)" = ADAA ] && by_tier_flush && break
	kill -0 $w 2>/dev/null || break
	sleep 0.2
done
[ "$(t_status_field $VOL 2)" = ADAA ] && by_tier_flush || {
	knobs_off
	wait $w
	fail "member 1 not failed by the tier's flush (health $(t_status_field $VOL 2), log: $(dmesg | tail -n +$((mark + 1)) | grep rainssd | tail -1)): $(cat /tmp/tf.err)"
}
sleep 2
during=$(table_sum)
s1=$(t_sb_state "${T_DEVS[0]}" 1)
note "member 1 failed in memory by the tier's flush; 2 s later member 0's superblock says it is $s1, its table $([ "$during" = "$before" ] && echo unchanged || echo changed)"
stop() { knobs_off; wait $w || true; fail "$*"; }
[ "$s1" = in_sync ] || stop "with the superblock commits held member 0's superblock says member 1 is $s1"
[ "$during" = "$before" ] ||
	stop "member 0 took the new table while its superblock says member 1 in sync (a cut now leaves member 1 trusted under it)"
kill -0 $w 2>/dev/null || stop "the fsync returned before the superblocks said member 1 failed: $(cat /tmp/tf.err)"
knobs_off
wait $w || fail "the writes or the fsync failed: $(cat /tmp/tf.err)"
[ "$(t_sb_state "${T_DEVS[0]}" 1)" = failed ] ||
	fail "after the fsync member 0's superblock says member 1 is $(t_sb_state "${T_DEVS[0]}" 1)"
[ "$(table_sum)" != "$before" ] || fail "the fsync returned with member 0's table unchanged"
note "the fsync returned once the superblocks said member 1 failed; member 0 then took the table"

t_cut_members rstf $N
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rstf $N
table | dmsetup create $VOL || fail "not activated after the cut: $(dmesg | grep rainssd | tail -1)"
[ "$(t_status_field $VOL 2)" = ADAA ] || fail "health $(t_status_field $VOL 2), not ADAA"
cmp <(dd if=$v bs=1M count=$MB iflag=direct status=none) /tmp/tf.pat ||
	fail "the volume does not read back as written after the cut"
note "after a cut: ADAA, the first $MB MiB as written"
exit 0
