#!/bin/bash
# Two power cuts, the second inside an activation that found a member
# missing, on a volume with a RAID1 tier. Member 1 of a 9.4 MiB volume is
# zeroed and rebuilt at RATE. Before the rebuild reaches stripe S, 4 KiB to
# member 0's chunk of it: the degraded-write log records the update (member
# 1 holds nothing there yet). Once the rebuild has passed S, 4 KiB to member
# 2's chunk: member 1 holds data now, and the update is not logged. Once
# S's bitmap region is clean again, the first cut (the rebuild still
# running). The volume is created again with "-" for member 1: the tier's
# table load commits the member states (member 1 failed) before the
# activation's own commit, which the debugfs switch hold_meta_commits
# holds; the second cut lands there. Then created with "-" once more:
# stripe S must read back as written, member 1's chunk rebuilt from the
# parity.
# Up to 1.11.15 that early commit kept the log nonce of the first cut's
# records, and a failed member makes an activation replay the log from
# stripe 0: the record of the first update, below the checkpoint the
# first activation replayed from, was replayed over the second update, and
# member 1's chunk of S read back as bytes never written (found by a
# helper's review). Now the activation draws the new nonce before any
# commit.
#
# Environment: S (default 120, a multiple of 4), RATE (KiB/s, default 80).
. "$REPO/tests/lib.sh"
t_knobs hold_meta_commits
N=4
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB, 6 blocks of 4 KiB
TIER=4096		# sectors of each member in the tier
RS=8			# stripes per bitmap region
VOL=rsan
STRIPES=400
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=${S:-120}
RATE=${RATE:-80}
[ $((S % N)) = 0 ] || fail "S must be a multiple of $N (parity on member 3, data on 0, 1, 2)"
OPTS="tier_size $TIER region_size $((RS * CHUNK * (N - 1)))"

# table <word count> <words>: the line over T_DEVS ($MISS given as -)
table() {
	local devs=("${T_DEVS[@]}")
	[ -n "${MISS:-}" ] && devs[$MISS]=-
	echo "0 $LEN rainssd $CHUNK $N ${devs[*]} $*"
}
cp_now() { t_sync_stripe $VOL $CHUNK; }
# region_dirty: whether stripe S's bit is set in the bitmap (sector 4096)
# of member 0, 2 or 3 (member 1's is not read while it is rebuilt)
region_dirty() {
	local r=$((S / RS)) b i
	for i in 0 2 3; do
		b=$(dd if="${T_DEVS[$i]}" bs=4096 skip=512 count=1 iflag=direct status=none |
			od -An -t u1 -j $((r / 8)) -N 1 | tr -d ' ')
		[ $(((b >> (r % 8)) & 1)) = 1 ] && return 0
	done
	return 1
}
# power_cut: the members frozen and given the error table, the hold let go,
# the volume removed, the members back
power_cut() {
	t_cut_members rsan $N
	echo 0 >$T_DBG/hold_meta_commits
	[ -z "${1:-}" ] || wait "$1" 2>/dev/null || true
	dmsetup remove --retry $VOL >/dev/null 2>&1 || true
	dmsetup info $VOL >/dev/null 2>&1 && fail "the volume cannot be removed after the cut"
	t_uncut_members rsan $N
}

t_linear_members rsan $N
SZ=$((32768 + TIER + STRIPES * CHUNK))
for i in $(seq 0 $((N - 1))); do
	dmsetup suspend rsan$i && dmsetup load rsan$i --table "0 $SZ linear /dev/rsch$i 0" &&
		dmsetup --noudevsync resume rsan$i || fail "member $i cut to $SZ sectors"
done
head -c $BYTES /dev/urandom >/tmp/an.pat
table 5 nosync $OPTS | dmsetup create $VOL || fail "create: $(table 5 nosync $OPTS)"
# 40 stripes a write: aligned full stripes, RAID-5 (not the tier)
dd if=/tmp/an.pat of=/dev/mapper/$VOL bs=960k oflag=direct conv=fsync status=none || fail "write"
ts=$(t_opstat $VOL tier_stripes)
[ "${ts%%/*}" = 0 ] || fail "full stripes went to the tier ($ts)"
dmsetup remove --retry $VOL || fail "remove"
dd if=/dev/zero of=/dev/mapper/rsan1 bs=1M count=$((SZ * 512)) iflag=count_bytes oflag=direct \
	status=none || fail "zero member 1"
table 11 nosync $OPTS rebuild 1 min_recovery_rate $RATE max_recovery_rate $RATE |
	dmsetup create $VOL || fail "create with rebuild 1"

cp /tmp/an.pat /tmp/an.new
t_new_block /tmp/an.new $S 0
t_new_block /tmp/an.new $S 2
c=$(cp_now)
[ "$c" -lt "$S" ] || fail "the rebuild passed stripe $S before the first write ($c): lower RATE"
t_put_block /tmp/an.new $S 0 /dev/mapper/$VOL || fail "write 1 (logged)"
t_wait_sync_past $VOL $CHUNK $((S + RS))
t_put_block /tmp/an.new $S 2 /dev/mapper/$VOL || fail "write 2 (not logged)"
for t in $(seq 75); do region_dirty || break; sleep 0.2; done
region_dirty && fail "stripe $S's bitmap region still dirty 15 s after its last write"
c=$(cp_now)
[ "$c" -lt $STRIPES ] || fail "the rebuild ended before the first cut: lower RATE"
power_cut
st=$(t_sb_state "${T_DEVS[0]}" 1)
[ "$st" = rebuilding ] || fail "after the first cut member 0's superblock says member 1 is $st"
note "first cut with the rebuild at stripe $c in memory; stripe $S's region clean"

# The first activation after it, member 1 missing, cut between the tier's
# commit of the member states and the activation's commit.
MISS=1
g=$(t_sb_events "${T_DEVS[0]}")
echo 1 >$T_DBG/hold_meta_commits
mark=$(dmesg | wc -l)
table 4 $OPTS | dmsetup create $VOL 2>/dev/null &
cr=$!
for t in $(seq 150); do
	[ "$(t_sb_events "${T_DEVS[0]}")" -gt "$g" ] && break
	sleep 0.2
done
[ "$(t_sb_events "${T_DEVS[0]}")" -gt "$g" ] ||
	{ power_cut $cr; fail "no commit before the held activation commit (the tier's load): $(dmesg | tail -n +$((mark + 1)) | tail -3)"; }
sleep 2		# the tier's table blocks after that commit (the activation's is held)
power_cut $cr
note "second cut after the tier's commit (generation $g -> $(t_sb_events "${T_DEVS[0]}")), before the activation's"

mark=$(dmesg | wc -l)
table 4 $OPTS | dmsetup create $VOL || fail "created again: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | grep -E 'replayed|resync' | sed 's/^/    # /'
[ "$(t_status_field $VOL 2)" = ADAA ] || fail "health $(t_status_field $VOL 2), want ADAA"
for d in 0 1 2; do
	o=$(((S * 6 + d * 2) * 4096))
	if ! got=$(dd if=/dev/mapper/$VOL bs=8k skip=$((o / 8192)) count=1 iflag=direct status=none |
		cmp - <(dd if=/tmp/an.new bs=8k skip=$((o / 8192)) count=1 status=none) 2>&1); then
		fail "stripe $S, member $d's chunk (member 1 rebuilt from the parity): $got"
	fi
done
note "stripe $S reads back as written, member 1's chunk rebuilt from the parity"
dmsetup remove --retry $VOL
