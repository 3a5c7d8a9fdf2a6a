#!/bin/bash
# Power cuts while member 2 of a 9.4 MiB volume is rebuilt at RATE (the
# default 64 MiB bitmap region: one region for the whole volume). A 4 KiB
# write to stripe S, below the rebuild's checkpoint, keeps the region dirty
# at each cut. After each, the volume is created again and must read back
# as written at once, and the rebuild go on.
#
#  1. A cut, nothing else: member 2 rebuilding from the checkpoint on disk.
#     Up to 1.11.16 its chunks above the checkpoint read as I/O errors
#     until the resync of the region below the checkpoint had ended (the
#     whole region counted as unresynced, though the degraded-write log
#     covers the updates above the checkpoint; found writing part 2).
#  2. A cut inside the commit of a rebuild checkpoint (every 2 s) that
#     reached every member but member 2: the commits are held (debugfs
#     hold_meta_commits) and let through one at a time (pass_meta_commits);
#     member 2's superblocks, saved before the commit, are put back after
#     the cut. Member 2 must be taken in at the newest checkpoint.
#  Then the rebuild ends: every byte as written, the parity right.
#
# That commit flushed member 2 before it wrote any superblock, or else it
# would say member 2 failed: member 2 holds what it says. Up to 1.11.16 it
# was stale in part 2: failed, the dirty region below the
# checkpoint had nobody to resync it (member 2's data were needed), its
# chunks there read as I/O errors, and a rebuild stopped at them for good
# (found by a helper's review). The same rule for the commit that ends a
# rebuild (taken in sync) is KUnit's (rs_sb_test_one_behind).
#
# Environment: S (default 120), RATE (KiB/s, default 100), PARTS (default
# "1 2"; part 2 alone runs on the first rebuild).
. "$REPO/tests/lib.sh"
t_knobs hold_meta_commits pass_meta_commits
N=4
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB, 6 blocks of 4 KiB
VOL=rsrc
STRIPES=400
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=${S:-120}
RATE=${RATE:-100}
PARTS=${PARTS:-1 2}
T_LEN=$LEN
T_CHUNK=$CHUNK
RATES="min_recovery_rate $RATE max_recovery_rate $RATE"

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
sb_cp() { t_sb_cp "${T_DEVS[$1]}" "$2"; }
events() { t_sb_events "${T_DEVS[$1]}"; }
# pass_one: one held commit let through; until member 0 has it (20 s)
pass_one() {
	local e t
	e=$(events 0)
	echo 1 >$T_DBG/pass_meta_commits
	for t in $(seq 100); do
		[ "$(events 0)" -gt "$e" ] && return 0
		# taken by a call with nothing to commit: another
		[ "$(cat $T_DBG/pass_meta_commits)" = 0 ] && echo 1 >$T_DBG/pass_meta_commits
		sleep 0.2
	done
	fail "no commit let through in 20 s (generation $e; health $(t_status_field $VOL 2), $(t_opstat $VOL sync_action) $(t_opstat $VOL sync_ratio); member 0 says member 2 is $(t_sb_state "${T_DEVS[0]}" 2) at $(sb_cp 0 2))"
}
# torn <what>: the cut, member 2's superblocks as they were before the
# commit, the volume created again; it must read back as written.
torn() {
	t_put_block /tmp/rc.new $S 0 /dev/mapper/$VOL || fail "$1: the write before the cut"
	t_cut_members rsrc $N
	t_knobs_off
	dmsetup remove --retry $VOL >/dev/null 2>&1 || true
	dmsetup info $VOL >/dev/null 2>&1 && fail "$1: the volume cannot be removed after the cut"
	t_uncut_members rsrc $N
	[ -z "${2:-}" ] || t_sb_put "${T_DEVS[2]}" "$2"
	note "$1: cut with member 0 at generation $(events 0), member 2 put back at $(events 2)"
	mark=$(dmesg | wc -l)
	table 4 $RATES | dmsetup create $VOL || fail "$1: created again: $(dmesg | tail -2)"
	dmesg | tail -n +$((mark + 1)) | grep -E 'missed the last|stale|not resynced|uncovered' |
		sed 's/^.*\] */    # /' || true
}
check_all() {
	local got
	got=$(cmp <(dd if=/dev/mapper/$VOL bs=24k iflag=direct status=none) /tmp/rc.new 2>&1) ||
		fail "$1: the volume does not read back as written (health $(t_status_field $VOL 2)): $got"
}

t_linear_members rsrc $N
head -c $BYTES /dev/urandom >/tmp/rc.pat
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/rc.pat of=/dev/mapper/$VOL bs=960k oflag=direct conv=fsync status=none || fail "write"
dmsetup remove --retry $VOL || fail "remove"
dd if=/dev/zero of="${T_DEVS[2]}" bs=1M count=$((SZ * 512)) iflag=count_bytes oflag=direct \
	status=none || fail "zero member 2"
table 6 rebuild 2 $RATES | dmsetup create $VOL || fail "create with rebuild 2"
cp /tmp/rc.pat /tmp/rc.new
t_new_block /tmp/rc.new $S 0

# wait_cp_past <stripe>: until the checkpoint on disk has passed it (a
# write between that and the rebuild in memory waits for a commit; after
# a cut the rebuild goes on once the region below it is resynced)
wait_cp_past() {
	local t
	for t in $(seq 450); do
		[ "$(sb_cp 0 2)" -gt "$1" ] && return 0
		sleep 0.2
	done
	fail "no checkpoint past stripe $1 committed in 90 s ($(sb_cp 0 2))"
}

# 1. A cut.
if [[ " $PARTS " = *" 1 "* ]]; then
t_wait_sync_past $VOL $CHUNK $((S + 8))
wait_cp_past $S
cp0=$(sb_cp 0 2)
torn "a cut during the rebuild (checkpoint $cp0 on disk)"
h=$(t_status_field $VOL 2)
[ "$h" = AAaA ] || fail "health $h, not AAaA (member 2 rebuilding)"
check_all "member 2 rebuilding"
note "AAaA, every byte as written"
fi

# 2. A checkpoint's commit.
if [[ " $PARTS " = *" 2 "* ]]; then
wait_cp_past $((${cp0:-$S} + 8))
echo 1 >$T_DBG/hold_meta_commits
sleep 1		# a commit already past the hold ends
t_put_block /tmp/rc.new $S 0 /dev/mapper/$VOL || fail "the write below the checkpoint"
# until a commit moves the checkpoint (another change may come first)
for t in $(seq 10); do
	sb_save_cp=$(sb_cp 0 2)
	t_sb_save "${T_DEVS[2]}" /tmp/rc.sb2
	pass_one
	cp1=$(sb_cp 0 2)
	[ "$cp1" -gt "$sb_save_cp" ] && break
done
[ "$(t_sb_state "${T_DEVS[0]}" 2)" = rebuilding ] && [ "$cp1" -gt "$sb_save_cp" ] ||
	fail "the commit let through says member 2 is $(t_sb_state "${T_DEVS[0]}" 2) at $cp1 (was $sb_save_cp)"
[ "$cp1" -lt $STRIPES ] || fail "the rebuild ended before the cut: lower RATE"
torn "a checkpoint's commit (checkpoint $sb_save_cp -> $cp1)" /tmp/rc.sb2
h=$(t_status_field $VOL 2)
[ "$h" = AAaA ] || fail "health $h, not AAaA (member 2 rebuilding from $cp1)"
check_all "member 2 rebuilding"
note "AAaA, every byte as written"
fi

# The rebuild to its end, the resync of the region, the parity.
dmsetup message $VOL 0 max_recovery_rate 100000 && dmsetup message $VOL 0 min_recovery_rate 100000 ||
	fail "rate"
t_idle $VOL 120 || fail "the rebuild did not end: $(t_opstat $VOL sync_action)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "health $(t_status_field $VOL 2) after the rebuild"
check_all "member 2 rebuilt"
dmsetup remove --retry $VOL || fail "remove"
t_parity
note "AAAA after the rebuild, every byte as written, the parity right"
