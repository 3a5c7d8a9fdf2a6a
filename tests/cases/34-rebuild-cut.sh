#!/bin/bash
# A power cut during a rebuild, with the rebuild's checkpoint in memory
# ahead of the one in the superblocks (1.11.4). Member 1 of an 8 MiB volume
# is zeroed and rebuilt (min and max_recovery_rate 160 KiB/s, the checkpoint's
# periodic commits held by the debugfs switch hold_sync_commits). Before
# the rebuild reaches stripe S, 4 KiB are written to member 0's chunk of it:
# an update the degraded-write log records (member 1 holds no data there
# yet). Once the rebuild has passed S, 4 KiB to member 2's chunk: member 1
# is written now, and the update is not logged. Then the cut (the members
# frozen and given the `error` table), the volume created again with
# `rebuild 1`, the rebuild run to its end: every byte of the volume must be
# what was written, read directly and with member 0 failed. A 1 MiB write
# across the rebuild's front before the cut must not hang (its operations
# hold stripes on both sides of the checkpoint).
# Up to 1.11.3 the second update went on at once, the rebuild resumed from
# the checkpoint on disk (below S), and the replay of the first record made
# S's parity from member 0's new bytes and member 2's old ones: member 1's
# chunk of S was rebuilt from it, wrong (found by a helper's review). Now an
# update of a stripe the rebuild passed after its last commit waits for a
# commit, and no record below the checkpoint on disk is replayed.
#
# Part 2, the end of the rebuild (1.11.6): the same volume, the first
# write to stripe S2 near the end before the rebuild gets there; then every
# commit of the superblocks held (debugfs hold_meta_commits) while the
# rebuild passes the last stripe, a write to member 2's chunk of S2, and the
# cut. Up to 1.11.5 member 1 went into service as the rebuild reached the
# end, before a commit said so: the second write went on unlogged, the
# rebuild resumed after the cut from the checkpoint on disk (below S2), and
# the replay of the first record rebuilt member 1's chunk of S2 wrong. Now
# the member goes into service once the end is committed, and until then
# the write waits (it fails at the cut).
#
# Part 3, dirty regions below the rebuild's checkpoint (1.11.6): 8-stripe
# bitmap regions; once the rebuild has passed stripe S3, a write to it
# (not logged: member 1 holds data there; it waits for a commit of the
# checkpoint) rewritten until the cut; the parity of S3 then overwritten
# on member 3 (the torn update a cut can leave). Created twice with "-"
# for member 1: both times member 1's chunk of S3 must read as an I/O
# error (its region could not be resynced), never be rebuilt from that
# parity. Up to 1.11.5 the second activation took the region as covered by
# the log (the superblocks said member 1 failed by then) and served
# made-up bytes.
#
# Environment: S (default 120), S2 (default 320), S3 (default 40), RATE
# (KiB/s, default 160), END_RATE (KiB/s: part 2's rebuild from write 1 to
# the end; make test 200000, make test-full RATE), PARTS (default 123).
. "$REPO/tests/lib.sh"
HOLD=/sys/kernel/debug/rainssd/hold_sync_commits
HOLD_META=/sys/kernel/debug/rainssd/hold_meta_commits
[ -w $HOLD ] && [ -w $HOLD_META ] || fail "no $HOLD or $HOLD_META (dm-rainssd 1.11.4 with debugfs)"
trap 'echo 0 >$HOLD 2>/dev/null; echo 0 >$HOLD_META 2>/dev/null' EXIT
CHUNK=16
N=4
VOL=rsrc
STRIPES=344		# the members cut to that (the rebuild's end is the volume's)
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=${S:-120}
S2=${S2:-320}
S3=${S3:-40}
RATE=${RATE:-160}
END_RATE=${END_RATE:-$(t_size 200000 "$RATE")}
for s in $S $S2 $S3; do
	[ $((s % N)) = 0 ] || fail "S, S2 and S3 must be multiples of $N (parity on member 3, data on 0, 1, 2)"
done

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
cp_now() { t_sync_stripe $VOL $CHUNK; }
vol_is() { cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$1"; }
# same <what> <file>: the whole volume reads back as the file
same() {
	vol_is "$2" ||
		fail "$1: the volume does not read back as written ($(cmp <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$2" 2>&1 | head -1))"
}
# wait_cp <stripe>: until the rebuild in memory is past it
wait_cp() { t_wait_sync_past $VOL $CHUNK "$1"; }

# fresh: members of $STRIPES stripes, the pattern written, member 1
# zeroed, the volume created again to rebuild it (the checkpoint's
# periodic commits held)
fresh() {
	local i
	t_linear_members rsrc $N
	SZ=$((32768 + STRIPES * CHUNK))
	for i in $(seq 0 $((N - 1))); do
		# no wait for udev (the node exists): 0.14 s a resume under TCG, not 0.4-0.5
		dmsetup suspend rsrc$i && dmsetup load rsrc$i --table "0 $SZ linear /dev/rsch$i 0" &&
			dmsetup --noudevsync resume rsrc$i || fail "member $i cut to $SZ sectors"
	done
	head -c $BYTES /dev/urandom >/tmp/rc.pat
	table ${FRESH_ARGS:-1 nosync} | dmsetup create $VOL || fail "create"
	dd if=/tmp/rc.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none ||
		fail "write"
	dmsetup remove --retry $VOL || fail "remove"
	dd if=/dev/zero of=/dev/mapper/rsrc1 bs=1M count=$((SZ * 512)) iflag=count_bytes oflag=direct status=none ||
		fail "zero member 1"
	echo 1 >$HOLD
	table 7 nosync rebuild 1 min_recovery_rate $RATE max_recovery_rate $RATE |
		dmsetup create $VOL || fail "create with rebuild 1"
}

# power_cut: the members frozen one after another and given the error table, the
# holds let go (a commit that was held fails on every member), the volume
# removed, the members back
power_cut() {
	t_cut_members rsrc $N
	echo 0 >$HOLD_META
	echo 0 >$HOLD
	dmsetup remove --retry $VOL || fail "remove after the cut"
	t_uncut_members rsrc $N
}

# rebuilt <file> [<file>]: created again with `rebuild 1` and rebuilt, the
# volume reads back as one of the files (which: $got), directly and with
# member 0 failed
rebuilt() {
	local mark f
	mark=$(dmesg | wc -l)
	table 3 nosync rebuild 1 | dmsetup create $VOL || fail "created again: $(dmesg | tail -2)"
	dmesg | tail -n +$((mark + 1)) | grep -E 'replayed|resync|rainssd: member' | sed 's/^/    # /'
	t_idle $VOL 600 ||
		fail "rebuild after the cut not over: $(t_opstat $VOL sync_ratio) $(t_opstat $VOL sync_action)"
	[ "$(t_status_field $VOL 2)" = AAAA ] || fail "after the rebuild: health $(t_status_field $VOL 2)"
	f=$1
	[ $# -gt 1 ] && ! vol_is "$1" && f=$2
	same "direct reads" "$f"
	dmsetup message $VOL 0 fail 0 || fail "fail 0"
	same "member 0 failed" "$f"
	dmsetup remove --retry $VOL
	got=$f
}

want() { case "${PARTS:-123}" in *$1*) return 0 ;; esac; return 1; }

# ---- 1. updates on both sides of the rebuild's front ----
if want 1; then
fresh
cp /tmp/rc.pat /tmp/rc.new
t_new_block /tmp/rc.new $S 0
t_new_block /tmp/rc.new $S 2
c=$(cp_now)
[ "$c" -lt "$S" ] || fail "the rebuild passed stripe $S before the first write ($c): lower RATE"
t_put_block /tmp/rc.new $S 0 /dev/mapper/$VOL || fail "write 1"
wait_cp $((S + 1))
t_put_block /tmp/rc.new $S 2 /dev/mapper/$VOL || fail "write 2"
# 1 MiB (43 stripes) from 4 stripes behind the rebuild: operations of
# several stripes across its checkpoint, which must not wait for ever
c3=$(cp_now)
b3=$(( (c3 > 4 ? c3 - 4 : 0) * 6 ))
[ $((b3 + 256)) -le $((STRIPES * 6)) ] || fail "the rebuild is too near the end for the 1 MiB write"
head -c 1048576 /dev/urandom | dd of=/tmp/rc.new bs=4096 seek=$b3 conv=notrunc status=none
dd if=/tmp/rc.new of=/dev/mapper/$VOL bs=4096 skip=$b3 seek=$b3 count=256 oflag=direct \
	status=none || fail "write 3"
c2=$(cp_now)
[ "$c2" -lt $STRIPES ] || fail "the rebuild ended before the cut: raise S or lower RATE"
power_cut
note "part 1: cut with the rebuild at stripe $c2 in memory (the first write before $S, the second after)"
rebuilt /tmp/rc.new
fi

# ---- 2. the end of the rebuild ----
if want 2; then
fresh
cp /tmp/rc.pat /tmp/rc.one
t_new_block /tmp/rc.one $S2 0
cp /tmp/rc.one /tmp/rc.two
t_new_block /tmp/rc.two $S2 2
c=$(cp_now)
[ "$c" -lt "$S2" ] || fail "the rebuild passed stripe $S2 before the first write ($c): lower RATE"
t_put_block /tmp/rc.one $S2 0 /dev/mapper/$VOL || fail "write 1"
echo 1 >$HOLD_META
# From here to the end the rebuild's speed is only waiting (up to 17 s at
# RATE): make test lets it run unthrottled (max_recovery_rate END_RATE)
dmsetup message $VOL 0 max_recovery_rate "$END_RATE" || fail "max_recovery_rate $END_RATE"
wait_cp $((STRIPES - 1))
# past the end in memory (1.11.4: in service; now: waiting for a commit)
t_put_block /tmp/rc.two $S2 2 /dev/mapper/$VOL >/tmp/rc.w2 2>&1 &
w2=$!
sleep 3
kill -0 $w2 2>/dev/null && w2_state=waiting || w2_state=done
power_cut
[ "$w2_state" = waiting ] ||
	fail "part 2: write 2 was acked before the end of the rebuild was committed"
wait $w2 && w2_state="$w2_state, then acked" || w2_state="$w2_state, then failed"
note "part 2: write 2 after the rebuild's end in memory: $w2_state"
rebuilt /tmp/rc.one /tmp/rc.two
note "part 2: the volume reads back with write 1$([ "$got" = /tmp/rc.two ] && echo " and write 2")"
fi

# ---- 3. dirty regions below the rebuild's checkpoint, member 1 out ----
if want 3; then
FRESH_ARGS="3 nosync region_size $((8 * CHUNK * (N - 1)))" fresh
cp /tmp/rc.pat /tmp/rc.new
t_new_block /tmp/rc.new $S3 0
wait_cp $((S3 + 40))
t_put_block /tmp/rc.new $S3 0 /dev/mapper/$VOL || fail "write to stripe $S3"
(while t_put_block /tmp/rc.new $S3 0 /dev/mapper/$VOL 2>/dev/null; do :; done) &
w3=$!
sleep 1
c3=$(cp_now)
power_cut
wait $w3
# the torn update: stripe S3's parity (member 3) not what its data make
head -c $((CHUNK * 512)) /dev/urandom |
	dd of=/dev/rsch3 bs=512 seek=$((32768 + S3 * CHUNK)) oflag=direct conv=notrunc status=none ||
	fail "parity of stripe $S3 overwritten"
note "part 3: cut with the rebuild at stripe $c3 in memory, stripe $S3 rewritten until then"
# out_table: member 1 given as "-"
out_table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[0]} - ${T_DEVS[2]} ${T_DEVS[3]} 1 nosync"; }
for act in 1 2; do
	mark=$(dmesg | wc -l)
	out_table | dmsetup create $VOL || fail "activation $act with member 1 out: $(dmesg | tail -2)"
	dmesg | tail -n +$((mark + 1)) | grep -E 'dirty|replayed|resync' | sed 's/^/    # /'
	if dd if=/dev/mapper/$VOL of=/tmp/rc.rd bs=4096 skip=$((S3 * 6 + 2)) count=1 \
		iflag=direct status=none 2>/dev/null; then
		cmp -s /tmp/rc.rd <(dd if=/tmp/rc.pat bs=4096 skip=$((S3 * 6 + 2)) count=1 status=none) ||
			fail "activation $act: member 1's chunk of stripe $S3 read back made-up bytes (rebuilt from the torn parity)"
		note "part 3: activation $act: member 1's chunk of stripe $S3 read back right"
	else
		note "part 3: activation $act: member 1's chunk of stripe $S3 reads as an I/O error"
	fi
	dmsetup remove --retry $VOL || fail "remove after activation $act"
done
fi
exit 0
