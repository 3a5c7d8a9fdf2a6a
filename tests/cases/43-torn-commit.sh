#!/bin/bash
# A power cut inside a superblock commit leaves the members it had not
# reached one generation behind, with the state the others held just
# before it. Their data are current: the activation must take them in,
# as md takes a member one event behind (1.11.12). Up to 1.11.11 they were
# stale: with two of them, or one and a failed member, the volume was
# refused; with one, it ran degraded without it (found by review of
# 1.11.10). The members are dm-linear; a commit is torn by putting back,
# after a power cut, the superblock copies (sectors 2048-2063,
# rainssd-sb.h) a member held before it.
#
#  1. A member fails (its dm-linear given the error target), the writes
#     that skip it are acknowledged once that is committed (generation
#     E + 1); a power cut, and member 2's superblocks put back as they were
#     at E: the volume must activate with member 3 failed and member 2 in,
#     and read back every byte as written.
#  2. A clean shutdown's commit torn: members 2 and 3 put back at the
#     generation before it. The volume must activate with all four in sync
#     and read back as written.
#  3. The rule stays narrow: a member two generations behind (a suspend
#     and resume and a shutdown since its copy) is stale, and the volume
#     runs without it.
#  4. A member whose cache flush fails inside a commit is failed in the
#     generation that commit writes (found by review of 1.11.12's first
#     form): member 3 failed by the `fail` message, with the commits held
#     (debugfs hold_meta_commits) and member 1's superblock flush made to
#     fail (fail_meta_flush); one commit let through (pass_meta_commits),
#     the next held: member 0's newest superblock must already say member 1
#     failed. Up to 1.11.11 it said in sync (the next commit would have
#     said failed), so a cut between the two left member 1 one generation
#     behind with the others vouching for what its cache had lost, which
#     the one-behind rule would have taken in. After a cut there, the
#     volume (members 1 and 3 failed) is refused.
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rsto
STRIPES=96
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
DBG=/sys/kernel/debug/rainssd
[ -w $DBG/pass_meta_commits ] && [ -w $DBG/fail_meta_flush ] ||
	fail "no $DBG/pass_meta_commits or fail_meta_flush (a test kernel with debugfs)"
knobs_off() { echo 0 >$DBG/hold_meta_commits; echo 0 >$DBG/pass_meta_commits; echo 0 >$DBG/fail_meta_flush; }
trap 'knobs_off 2>/dev/null' EXIT
# By member index: state_of <member> <of>, sb_save/sb_put <member> <file>,
# events <member> (tests/lib.sh's t_sb_*).
state_of() { t_sb_state /dev/mapper/rsto$1 "$2"; }
sb_save() { t_sb_save /dev/mapper/rsto$1 "$2"; }
sb_put() { t_sb_put /dev/mapper/rsto$1 "$2"; }
events() { t_sb_events /dev/mapper/rsto$1; }
check_all() {
	cmp <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$1" ||
		fail "$2: the volume does not read back as written"
}
create_again() {
	mark=$(dmesg | wc -l)
	table "$@" | dmsetup create $VOL ||
		fail "not activated: $(dmesg | tail -n +$((mark + 1)) | grep -E 'rainssd' | tail -2)"
	dmesg | tail -n +$((mark + 1)) | grep -E 'missed the last|stale|replayed' |
		sed 's/^.*\] */    # /' || true
}

# 1. A member failure's commit torn.
t_linear_members rsto $N
head -c $BYTES /dev/urandom >/tmp/to.pat
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/to.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
e=$(events 0)
sb_save 2 /tmp/to.sb2
dmsetup suspend rsto3 && dmsetup load rsto3 --table "0 $SZ error" && dmsetup resume rsto3 ||
	fail "member 3 as the error target"
# 4 KiB at the start of every stripe's first 8 chunks: some on member 3
cp /tmp/to.pat /tmp/to.new
for s in 0 1 2 3 4 5 6 7; do
	head -c 4096 /dev/urandom | dd of=/tmp/to.new bs=4096 seek=$((s * 6)) conv=notrunc status=none
	dd if=/tmp/to.new of=/dev/mapper/$VOL bs=4096 skip=$((s * 6)) seek=$((s * 6)) count=1 \
		oflag=direct,dsync status=none || fail "write to stripe $s with member 3 failing"
done
[ "$(t_status_field $VOL 2)" = AAAD ] || fail "member 3 not failed: $(t_status_field $VOL 2)"
[ "$(events 0)" = $((e + 1)) ] ||
	fail "member 0 at generation $(events 0), not one commit past member 2's copy ($e)"
t_cut_members rsto $N
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rsto $N
sb_put 2 /tmp/to.sb2
note "member 3 failed (generation $((e + 1)) on members 0 and 1), member 2 left at $(events 2)"
create_again 0
[ "$(t_status_field $VOL 2)" = AAAD ] ||
	fail "health $(t_status_field $VOL 2), not AAAD (member 2 in, member 3 failed)"
check_all /tmp/to.new "member 2 one generation behind"
note "activated as AAAD, every byte as written"
dmsetup remove --retry $VOL || fail "remove"

# 2. A clean shutdown's commit torn on members 2 and 3.
t_linear_members rsto $N
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/to.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
e=$(events 0)
sb_save 2 /tmp/to.sb2
sb_save 3 /tmp/to.sb3
dmsetup remove --retry $VOL || fail "remove"
[ "$(events 0)" = $((e + 1)) ] || fail "the shutdown took $(($(events 0) - e)) commits, not 1"
sb_put 2 /tmp/to.sb2
sb_put 3 /tmp/to.sb3
note "the shutdown's commit (generation $((e + 1))) on members 0 and 1 only"
create_again 0
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "health $(t_status_field $VOL 2), not AAAA"
[ "$(t_opstat $VOL sync_action)" = idle ] ||
	fail "sync_action $(t_opstat $VOL sync_action) after a clean shutdown"
check_all /tmp/to.pat "members 2 and 3 one generation behind"
note "activated as AAAA, idle, every byte as written"

# 3. Two generations behind: stale.
e=$(events 1)
sb_save 1 /tmp/to.sb1
dmsetup suspend $VOL && dmsetup resume $VOL || fail "suspend and resume"
dmsetup remove --retry $VOL || fail "remove"
[ "$(events 0)" -ge $((e + 2)) ] || fail "member 0 at $(events 0), not two past $e"
sb_put 1 /tmp/to.sb1
create_again 0
[ "$(t_status_field $VOL 2)" = ADAA ] ||
	fail "health $(t_status_field $VOL 2): member 1, $(($(events 0) - e)) generations behind, not stale"
check_all /tmp/to.pat "member 1 stale"
note "member 1 $(($(events 0) - $(events 1))) generations behind: stale (ADAA), every byte as written"
dmsetup remove --retry $VOL || fail "remove"

# 4. A member's flush fails inside the commit of another member's failure.
t_linear_members rsto $N
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/to.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
e=$(events 0)
echo 1 >$DBG/hold_meta_commits
dmsetup message $VOL 0 fail 3 || fail "fail 3"
echo 2 >$DBG/fail_meta_flush
echo 1 >$DBG/pass_meta_commits
for t in $(seq 100); do
	[ "$(events 0)" = $((e + 1)) ] && [ "$(cat $DBG/pass_meta_commits)" = 0 ] && break
	sleep 0.2
done
[ "$(events 0)" = $((e + 1)) ] || fail "the commit of member 3's failure did not run ($(events 0), $e)"
sleep 1	# the next commit, held: nothing more may land
[ "$(events 0)" = $((e + 1)) ] || fail "a second commit ran while held"
s1=$(state_of 0 1)
s3=$(state_of 0 3)
note "generation $((e + 1)) on member 0: member 1 $s1, member 3 $s3; member 1 at $(events 1)"
[ "$s3" = failed ] || fail "member 0's superblock says member 3 is $s3"
[ "$s1" = failed ] ||
	fail "the commit whose flush failed on member 1 says it is $s1, not failed (a cut now leaves it one generation behind and trusted)"
t_cut_members rsto $N
knobs_off
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rsto $N
mark=$(dmesg | wc -l)
table 0 | dmsetup create $VOL 2>/dev/null &&
	fail "activated with members 1 and 3 failed: $(dmsetup status $VOL)"
dmesg | tail -n +$((mark + 1)) | grep -q "Two or more members" ||
	fail "not refused as two members out: $(dmesg | tail -n +$((mark + 1)) | grep rainssd | tail -1)"
dmsetup remove $VOL >/dev/null 2>&1 || true
note "after a cut there: refused, members 1 and 3 failed"
exit 0
