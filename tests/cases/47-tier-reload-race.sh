#!/bin/bash
# A `dmsetup reload` of a live volume with a RAID1 tier must not be refused
# because the live table commits its mapping table while the new one's
# constructor reads it (1.11.13). The constructor reads the commit record,
# then the table's blocks; two commits in between rewrite both copies of a
# block (each commit writes the copy that does not hold the newest
# generation), and the generation the record named is then on no member.
# Up to 1.11.12 the reload was refused as a corrupt table (found by review
# of 1.11.10). Now a read that finds the table corrupt is made again when
# the newest commit record changed meanwhile.
#
#  1. dm-linear members, a tier volume written 4 KiB at a time; reads of
#     the table that write nothing held (debugfs hold_tier_load) between
#     the commit record and the blocks; a reload started (its constructor
#     held there); two 4 KiB writes with O_DSYNC to stripes never written
#     (two commits of the table, each changing the block of their
#     records); the hold let go: the reload must be accepted (the kernel
#     log saying the table was read again), its resume must load the
#     table, and the volume reads back as written.
#  2. The retry stays narrow: after a power cut, both copies of a table
#     block made corrupt on every member: the activation must be refused
#     with the tier's error, and the members' bytes left unchanged.
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rstr
TIER=16384
t_knobs hold_tier_load hold_tier_commits
DBG=$T_DBG
knobs_off() { t_knobs_off; }

t_linear_members rstr $N
LEN=$(( (SZ - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
line="0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync tier_size $TIER"
v=/dev/mapper/$VOL
MB=4
echo "$line" | dmsetup create $VOL || fail "create with a tier"
head -c $((MB << 20)) /dev/zero >/tmp/tr.pat
head -c $((1 << 20)) /dev/urandom | dd of=/tmp/tr.pat conv=notrunc status=none
dd if=/tmp/tr.pat of=$v bs=4k count=256 oflag=direct conv=fsync status=none || fail "write"
in_tier() { dmsetup status $VOL | t_tail_field tier_stripes | cut -d/ -f1; }
t0=$(in_tier)

# 1. A reload while the live table commits.
mark=$(dmesg | wc -l)
echo 1 >$DBG/hold_tier_load
dmsetup reload $VOL --table "$line" 2>/tmp/tr.err &
r=$!
held=no
for t in $(seq 150); do
	dmesg | tail -n +$((mark + 1)) | grep -q "tier table load held" && { held=yes; break; }
	kill -0 $r 2>/dev/null || break
	sleep 0.2
done
for k in 0 1; do
	off=$((512 + k * 6))	# 4 KiB blocks: stripes from 2 MiB on, never written
	head -c 4096 /dev/urandom | dd of=/tmp/tr.pat bs=4096 seek=$off conv=notrunc status=none
	dd if=/tmp/tr.pat of=$v bs=4096 skip=$off seek=$off count=1 oflag=direct,dsync status=none ||
		{ knobs_off; fail "write $k"; }
done
[ "$(in_tier)" = $((t0 + 2)) ] || { knobs_off; fail "the two writes did not enter the tier ($t0, $(in_tier))"; }
echo 0 >$DBG/hold_tier_load
wait $r || fail "the reload was refused (its load held: $held): $(cat /tmp/tr.err); $(dmesg | tail -n +$((mark + 1)) | grep -i 'tier' | tail -2)"
[ $held = yes ] || fail "the reload's constructor never held its read of the table"
again=$(dmesg | tail -n +$((mark + 1)) | grep -o 'tier table: commit [0-9]* while it was read at commit [0-9]*' | head -1)
[ -n "$again" ] || fail "no second read of the table in the kernel log: the two commits did not land in the window"
note "reload accepted after the two commits in its read ($again: read again)"
dmsetup resume $VOL || fail "the resume of the reloaded table: $(dmesg | grep rainssd | tail -1)"
[ "$(in_tier)" = $((t0 + 2)) ] || fail "after the reload $(in_tier) stripes in the tier, not $((t0 + 2))"
cmp <(dd if=$v bs=1M count=$MB iflag=direct status=none) /tmp/tr.pat ||
	fail "after the reload the volume does not read back as written"
note "resumed: $(in_tier) stripes in the tier, every byte as written"

# 2. A corrupt table after a power cut: refused at the resume, nothing written.
t_cut_members rstr $N
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rstr $N
read -r tstart blocks < <("$CHECK" --dump-tier --json "${T_DEVS[@]}" | python3 -c '
import json, sys
t = json.load(sys.stdin)["tier"]
print(t["start"], t["blocks"])')
[ -n "${blocks:-}" ] || fail "no table layout from rainssd-check --dump-tier --json"
for d in "${T_DEVS[@]}"; do
	for c in 0 1; do
		t_poke "$d" $(( (tstart + (c * blocks + 2) * 8) * 512 + 300 )) '\xff'
	done
done
members_sum() { for d in "${T_DEVS[@]}"; do dd if="$d" bs=1M iflag=direct status=none | md5sum; done; }
before=$(members_sum)
mark=$(dmesg | wc -l)
echo "$line" | dmsetup create $VOL 2>/dev/null && fail "a table corrupt on every member was trusted"
dmsetup remove $VOL >/dev/null 2>&1 || true
klog=$(dmesg | tail -n +$((mark + 1)))
grep -qi 'tier mapping table' <<<"$klog" ||
	fail "refused without the tier's error: $(grep rainssd <<<"$klog" | tail -2)"
[ "$before" = "$(members_sum)" ] || fail "a refused activation wrote to the members"
note "after a cut, a table block corrupt on every member: refused ($(grep -io 'resume refused: tier mapping table[^;]*\|Tier mapping table is corrupt[^;]*' <<<"$klog" | tail -1)), members unchanged"
exit 0
