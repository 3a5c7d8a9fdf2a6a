#!/bin/bash
# The end of a rebuild while another member fails (a review of 1.11.19).
#
# Part 1, a power cut as the rebuild ends with a member failing: the
# rebuild of member 3 reaches the last stripe with the superblock commits
# held (debugfs hold_meta_commits), so that its end waits for a commit;
# member 1 fails then, and a 4 KiB write W to member 0's chunk of stripe 1
# (parity on member 2, member 1 holds its third chunk) waits for the
# commit that says so. One commit is let through (pass_meta_commits): W
# writes its degraded-write log record, then its parity on member 2, and
# its data write on member 0 is held (dm-delay on member 0's data area,
# 30 s). Then every commit goes on: the rebuild's end is written. With
# W's data still held, the raw devices of members 0, 2 and 3 are copied
# (the power cut) and a volume is made of the copies with member 1
# missing: member 1's chunk of stripe 1 must read back as written, and the
# whole volume too (W's block either way). Up to 1.11.19 the rebuild's end
# drew a new log nonce, and the commit does not wait for updates planned
# with a member failed: the replay ignored W's record, and member 1's
# chunk was rebuilt from W's parity and member 0's old data.
#
# Part 2, the rebuild's last stretch ends with the engine frozen, then a
# member fails: the rebuild must end (health ADAA after `idle`), and the
# volume must be created again and read back as written. Up to 1.11.19 it
# stayed rebuilding for good, and the next activation refused the volume
# as two members out.
#
# Part 3, a scrub when a member fails: sync_action must say frozen (the
# scrub is held), as for a rebuild. Up to 1.11.19 it said check for good.
#
# Environment: PARTS (default 123).
. "$REPO/tests/lib.sh"
t_knobs hold_meta_commits pass_meta_commits
CHUNK=16
N=4
V=rsre

# members <stripes> <name>: new members of that many stripes behind
# dm-linear (SZ their size), a pattern written to a new volume, which is
# then removed; /tmp/re.pat the pattern
members() {
	local i
	t_linear_members rsre $N
	SZ=$((32768 + $1 * CHUNK))
	LEN=$(($1 * CHUNK * (N - 1)))
	for i in $(seq 0 $((N - 1))); do
		dmsetup suspend rsre$i && dmsetup load rsre$i --table "0 $SZ linear /dev/rsch$i 0" &&
			dmsetup --noudevsync resume rsre$i || fail "$2: member $i cut to $SZ sectors"
	done
	head -c $((LEN * 512)) /dev/urandom >/tmp/re.pat
	t_table $CHUNK $LEN nosync | dmsetup create $V || fail "$2: create"
	dd if=/tmp/re.pat of=/dev/mapper/$V bs=64k oflag=direct conv=fsync status=none ||
		fail "$2: write the pattern"
	dmsetup remove --retry $V || fail "$2: remove"
}

# rebuild_3 <name> [opt args]: member 3 zeroed and rebuilt (the volume created with rebuild 3)
rebuild_3() {
	local what=$1
	shift
	dd if=/dev/zero of=/dev/mapper/rsre3 bs=1M count=$((SZ * 512)) iflag=count_bytes \
		oflag=direct status=none || fail "$what: zero member 3"
	t_table $CHUNK $LEN rebuild 3 "$@" | dmsetup create $V || fail "$what: create with rebuild 3"
}

# reads_as <file> <what>: the whole volume reads back as the file
reads_as() {
	cmp -s <(dd if=/dev/mapper/$V bs=64k iflag=direct status=none) "$1" ||
		fail "$2: the volume does not read back as written"
}

member_reads() { t_member_reads $V "$1"; }

want() { case "${PARTS:-123}" in *$1*) return 0 ;; esac; return 1; }

# ---- 1. a power cut as the rebuild ends with member 1 failing ----
if want 1; then
members 64 "cut"
# the commits held once the volume is resumed (the resume commits), the
# rebuild throttled until then
rebuild_3 "cut" min_recovery_rate 64 max_recovery_rate 64
echo 1 >$T_DBG/hold_meta_commits
[ "$(t_sync_stripe $V $CHUNK)" -lt 64 ] || fail "cut: the rebuild ended before the commits were held"
dmsetup message $V 0 max_recovery_rate 200000 || fail "cut: max_recovery_rate"
t_wait_sync_past $V $CHUNK 63
[ "$(t_opstat $V sync_action)" = recover ] ||
	fail "cut: sync_action $(t_opstat $V sync_action) at the end with the commits held, want recover"
# member 0's data area behind dm-delay: reads and flushes at once, writes 30 s
t_delay_writes rsre 0 30000
dmsetup message $V 0 fail 1 || fail "cut: fail 1"
cp /tmp/re.pat /tmp/re.new
t_new_block /tmp/re.new 1 1
# stripe 1's parity of W's rows (member 2's chunk, its first 4 KiB) before W
P=$((32768 + CHUNK))
dd if=/dev/rsch2 of=/tmp/re.p0 bs=512 skip=$P count=8 iflag=direct status=none ||
	fail "cut: read stripe 1's parity"
t_put_block /tmp/re.new 1 1 /dev/mapper/$V 2>/dev/null &
w=$!
sleep 1
kill -0 $w 2>/dev/null || fail "cut: W did not wait for the commit of member 1's failure"
echo 1 >$T_DBG/pass_meta_commits
# W's record: the first of member 2's ring (stripe 1)
for t in $(seq 100); do
	h=$(t_log_hdr /dev/mapper/rsre2 0)
	[ "${h:0:16}" = $T_LOG_MAGIC ] && break
	sleep 0.1
done
[ "${h:0:16}" = $T_LOG_MAGIC ] && [ "$(t_le "$h" 24 8)" = 1 ] ||
	fail "cut: no log record of stripe 1 on member 2 after the commit ($h)"
sleep 1	# W's parity write on member 2
echo 0 >$T_DBG/hold_meta_commits
for t in $(seq 100); do
	[ "$(t_sb_state /dev/rsch2 3)" = in_sync ] && break
	sleep 0.1
done
[ "$(t_sb_state /dev/rsch2 3)" = in_sync ] || fail "cut: the rebuild's end not on member 2 after 10 s"
kill -0 $w 2>/dev/null || fail "cut: W ended before the cut (its data write was not held)"
for i in 0 2 3; do
	dd if=/dev/rsch$i of=/tmp/re.m$i bs=1M count=$((SZ * 512)) iflag=count_bytes,direct \
		status=none || fail "cut: copy member $i"
done
kill -0 $w 2>/dev/null || fail "cut: W ended before the copies were made"
cmp -s /tmp/re.p0 <(dd if=/tmp/re.m2 bs=512 skip=$P count=8 status=none) &&
	fail "cut: W's parity was not on member 2 when it was copied (the case needs a rework)"
note "cut: members 0, 2 and 3 copied with the rebuild's end on disk, W's data write held"
dmsetup suspend rsre0 && dmsetup --noudevsync resume rsre0 || fail "cut: let W's data go"
wait $w || true
dmsetup remove --retry $V || fail "cut: remove"
L=()
for i in 0 2 3; do
	L[$i]=$(losetup -f --show /tmp/re.m$i) || fail "cut: loop device for member $i"
done
trap 't_knobs_off 2>/dev/null; dmsetup remove $V 2>/dev/null; losetup -d ${L[*]} 2>/dev/null' EXIT
mark=$(dmesg | wc -l)
echo "0 $LEN rainssd $CHUNK $N ${L[0]} - ${L[2]} ${L[3]} 1 nosync" | dmsetup create $V ||
	fail "cut: the copies with member 1 missing: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | grep -E 'replayed|resync|dirty' | sed 's/^/    # /'
dd if=/dev/mapper/$V of=/tmp/re.rd bs=4096 skip=10 count=1 iflag=direct status=none ||
	fail "cut: member 1's chunk of stripe 1 does not read"
cmp -s /tmp/re.rd <(dd if=/tmp/re.pat bs=4096 skip=10 count=1 status=none) ||
	fail "cut: member 1's chunk of stripe 1 reads other bytes than were written (rebuilt from a torn stripe)"
reads_as /tmp/re.pat "cut"	# W's data write was held: its block is as before
note "cut: member 1's chunk of stripe 1 reads back as written, the volume too"
dmsetup remove --retry $V || fail "cut: remove the copies' volume"
losetup -d "${L[@]}"
trap 't_knobs_off 2>/dev/null' EXIT
fi

# ---- 2. the rebuild's last stretch ends frozen, then member 1 fails ----
if want 2; then
# 24 stripes: two stretches of a rebuild (16 stripes an operation with 8
# KiB chunks of 4 members), the second 8 s after the first at 16 KiB/s
members 24 "frozen"
rebuild_3 "frozen" min_recovery_rate 16 max_recovery_rate 16
for t in $(seq 100); do
	d=$(t_sync_stripe $V $CHUNK)
	[ "$d" -gt 0 ] && break
	sleep 0.1
done
[ "$d" -ge 12 ] && [ "$d" -lt 24 ] ||
	fail "frozen: the rebuild's first stretch ended at stripe $d, want 12-23 (the case needs a rework)"
t_hold_reads $V rsre1 1 "frozen (the rebuild's last stretch)"
dmsetup message $V 0 frozen || fail "frozen: frozen"
dmsetup resume rsre1 || fail "frozen: resume member 1"
for t in $(seq 100); do
	[ "$(member_reads 1)" = 0 ] && [ "$(t_sync_stripe $V $CHUNK)" -ge 24 ] && break
	sleep 0.1
done
[ "$(t_sync_stripe $V $CHUNK)" -ge 24 ] || fail "frozen: the last stretch did not end ($(t_opstat $V sync_ratio))"
sleep 1
dmsetup message $V 0 fail 1 || fail "frozen: fail 1"
dmsetup message $V 0 idle || fail "frozen: idle"
sleep 1
h=$(t_status_field $V 2)
[ "$h" = ADAA ] ||
	fail "frozen: health $h after fail 1 and idle (sync_action $(t_opstat $V sync_action)), want ADAA: the rebuild did not end"
note "frozen: after fail 1 and idle: health $h, sync_action $(t_opstat $V sync_action)"
dmsetup remove --retry $V || fail "frozen: remove"
mark=$(dmesg | wc -l)
t_table $CHUNK $LEN | dmsetup create $V ||
	fail "frozen: created again: refused ($(dmesg | tail -n +$((mark + 1)) | grep rainssd | tail -1))"
[ "$(t_status_field $V 2)" = ADAA ] || fail "frozen: created again with health $(t_status_field $V 2), want ADAA"
reads_as /tmp/re.pat "frozen"
note "frozen: created again with member 1 failed and member 3 in sync; reads back as written"
dmsetup remove --retry $V || fail "frozen: remove again"
fi

# ---- 3. a scrub when a member fails ----
if want 3; then
members 24 "scrub"
t_table $CHUNK $LEN min_recovery_rate 16 max_recovery_rate 16 | dmsetup create $V ||
	fail "scrub: create"
dmsetup message $V 0 check || fail "scrub: check"
sleep 1
[ "$(t_opstat $V sync_action)" = check ] || fail "scrub: sync_action $(t_opstat $V sync_action) after check"
dmsetup message $V 0 fail 2 || fail "scrub: fail 2"
sleep 1
a=$(t_opstat $V sync_action)
[ "$a" = frozen ] || fail "scrub: sync_action $a with member 2 failed during the check, want frozen"
note "scrub: member 2 failed during a check: sync_action $a ($(t_opstat $V sync_ratio))"
dmsetup remove --retry $V || fail "scrub: remove"
fi
exit 0
