#!/bin/bash
# A power cut of a healthy volume, and a member out when it comes back: the
# write hole that md answers by refusing to start a dirty degraded array.
# Case 22's cut (24 fdatasync writers with policy rcw, which tears stripes
# at the cut; four null_blk channels behind dm-linear members frozen one
# after another and given the `error` table), then the parity checker over
# the raw members names the stripes the cut tore, and a data member of one
# of them is the victim. No degraded-log record covers a healthy volume's
# writes, so the victim's chunks in the regions the bitmap holds dirty
# cannot be rebuilt from their parity: they must read as I/O errors, never
# as bytes nobody wrote.
#  - absent: the volume created again with the victim given as `-`: the
#    kernel log says how many dirty regions are left, sync_action is
#    `frozen`, and every block is its newest acknowledged write, a later
#    issued one, or unreadable (none TORN, MADE-UP or LOST).
#  - replaced: the victim zeroed and given with `rebuild`: the rebuild
#    cannot start (the dirty regions come first and need the victim's
#    data), sync_action is `frozen`, the kernel log says why, and the same
#    check holds.
# Up to 1.11.3 the bitmap was dropped when a member was out at activation,
# and a rebuild's checkpoint of 0 let the resync pass every dirty region:
# the victim's chunks of torn stripes were rebuilt from torn parity and read
# back as made-up bytes (helper review, 2026-11-27).
#
# Environment: CUTS (cut points per mode, default 1; 3 in make test-full),
# SEED.
. "$REPO/tests/lib.sh"
set +e
CW=$REPO/userspace-tools/crash/rainssd-crashwriter
[ -x "$CW" ] || fail "$CW not built (make -C userspace-tools)"

CUTS=${CUTS:-$(t_size 1 3)}
SEED=${SEED:-$(( $(date +%s) % 32768 ))}
RANDOM=$SEED
BLOCKS=8192
JOBS=24
CHUNK=16
N=4
VOL=rsdd
STRIPES=$(( (BLOCKS * 8 + CHUNK * (N - 1) - 1) / (CHUNK * (N - 1)) ))
note "seed $SEED; $CUTS cut points per mode"

members() {	# four zeroed channels behind dm-linear members rsdd0-3
	dmsetup remove --retry $VOL >/dev/null 2>&1
	t_linear_members rsdd $N
	LEN=$(( (SZ - 32768) / CHUNK * CHUNK * (N - 1) ))
}

# table <slot> <word>: the table line with slot's device replaced by <word>
# ("-", or the device with "rebuild <slot>" added).
table() {
	local devs=("${T_DEVS[@]}") opts="1 nosync"
	[ "$2" = "-" ] && devs[$1]=-
	[ "$2" = rebuild ] && opts="3 nosync rebuild $1"
	echo "0 $LEN rainssd $CHUNK $N ${devs[*]} $opts"
}

# cut <n> <absent|replaced>: one cut point; sets DETAIL, fails the case on damage.
cut() {
	local n=$1 mode=$2 i m order w delay torn victim s p line verify
	members
	echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} 3 nosync policy rcw" | dmsetup create $VOL ||
		fail "cut $n: create"
	rm -f /tmp/dd.issued /tmp/dd.acked
	"$CW" write --dev /dev/mapper/$VOL --blocks $BLOCKS --jobs $JOBS --seed $RANDOM \
		--issued /tmp/dd.issued --acked /tmp/dd.acked >/tmp/dd.writer 2>&1 &
	w=$!
	delay=$((1000 + RANDOM % 2001))
	sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
	kill -0 $w 2>/dev/null || fail "cut $n: the writers ended before the cut: $(tail -2 /tmp/dd.writer)"
	mapfile -t order < <(shuf -i 0-$((N - 1)))
	for i in "${order[@]}"; do
		dmsetup suspend --noflush rsdd$i || fail "cut $n: suspend rsdd$i"
		sleep "0.0$((RANDOM % 6))"
	done
	for i in "${order[@]}"; do
		dmsetup load rsdd$i --table "0 $SZ error" && dmsetup --noudevsync resume rsdd$i ||
			fail "cut $n: error table on rsdd$i"
	done
	for i in $(seq 120); do kill -0 $w 2>/dev/null || break; sleep 1; done
	kill -0 $w 2>/dev/null && fail "cut $n: the writers did not stop within 120 s of the cut"
	wait $w
	dmsetup remove --retry $VOL || fail "cut $n: the volume cannot be removed after the cut"
	for i in "${order[@]}"; do
		dmsetup load rsdd$i --table "0 $SZ linear /dev/rsch$i 0" &&
			dmsetup --noudevsync resume rsdd$i || fail "cut $n: linear table back on rsdd$i"
	done
	# The stripes the cut tore, and the victim: a data member of one of
	# them that no write in flight at the cut was for (left-symmetric:
	# stripe s has its parity on member N-1-s%N, data chunk d on member
	# (N-s%N+d)%N), so that its chunk rebuilt from the torn parity would
	# be the XOR of the old and new bytes of another member's write.
	"$CHECK" --stripes $STRIPES $CHUNK "${T_DEVS[@]}" >/tmp/dd.check 2>&1
	torn=$(grep -c '^bad stripe ' /tmp/dd.check)
	sed -nE 's/^bad stripe ([0-9]+):.*/\1/p' /tmp/dd.check | shuf >/tmp/dd.torn
	# the writes issued and never acknowledged: "stripe member" each
	awk -v n=$N -v c=$CHUNK 'NR == FNR { acked[$1 " " $2] = 1; next }
		!(($1 " " $2) in acked) { sec = $1 * 8; s = int(sec / (c * (n - 1)));
			d = int((sec % (c * (n - 1))) / c); print s, (n - s % n + d) % n }' \
		/tmp/dd.acked /tmp/dd.issued >/tmp/dd.inflight
	victim=""
	while read -r s; do
		p=$((N - 1 - s % N))
		for i in $(shuf -i 1-$((N - 1))); do
			m=$(( (p + i) % N ))
			grep -q "^$s $m\$" /tmp/dd.inflight && continue
			victim=$m
			break
		done
		[ -z "$victim" ] || break
	done </tmp/dd.torn
	[ -n "$victim" ] || victim=$((RANDOM % N))
	if [ "$mode" = replaced ]; then
		dd if=/dev/zero of=/dev/mapper/rsdd$victim bs=1M count=$((SZ / 2048)) oflag=direct \
			status=none || fail "cut $n: zeroing member $victim"
		line=$(table "$victim" rebuild)
	else
		line=$(table "$victim" -)
	fi
	local mark
	mark=$(dmesg | wc -l)
	echo "$line" | dmsetup create $VOL 2>/tmp/dd.create ||
		fail "cut $n: created again with member $victim $mode: refused: $(tail -1 /tmp/dd.create)"
	sleep 2		# what the sync can do, it starts at once
	local action
	action=$(t_opstat $VOL sync_action)
	"$CW" verify --dev /dev/mapper/$VOL --blocks $BLOCKS --issued /tmp/dd.issued \
		--acked /tmp/dd.acked >/tmp/dd.verify 2>&1
	verify=$(tail -1 /tmp/dd.verify)
	DETAIL="$mode, after $delay ms, $(wc -l </tmp/dd.acked) acked; $torn of $STRIPES stripes torn; victim $victim, sync_action $action; $verify"
	note "cut $n: $DETAIL"
	echo "$verify" | grep -qE ' 0 torn, 0 made-up, 0 lost, [0-9]+ unreadable$' || {
		sed 's/^/    #   /' /tmp/dd.verify | head -14
		fail "cut $n ($mode, member $victim): blocks read back torn, made up or lost"
	}
	if [ "$torn" -gt 0 ]; then
		# The victim's chunk of a torn stripe is in a dirty region: the
		# volume must say the resync cannot go on.
		[ "$action" = frozen ] ||
			fail "cut $n ($mode): $torn torn stripes, but sync_action is $action, not frozen"
		dmesg | tail -n +$((mark + 1)) | grep -qE "member $victim: its chunks (in them|there) read as I/O errors" ||
			fail "cut $n ($mode): the kernel log does not say the dirty regions cannot be resynced"
		UNREADABLE=$((UNREADABLE + $(echo "$verify" | sed -nE 's/.* ([0-9]+) unreadable$/\1/p')))
		TORN_CUTS=$((TORN_CUTS + 1))
	fi
	dmsetup remove --retry $VOL >/dev/null 2>&1
}

UNREADABLE=0 TORN_CUTS=0
for mode in absent replaced; do
	for n in $(seq 1 "$CUTS"); do
		cut "$n" $mode
	done
done
note "cut points with torn stripes: $TORN_CUTS of $((2 * CUTS)); blocks unreadable in them: $UNREADABLE"
# With policy rcw and 24 writers nearly every cut tears a stripe (case 22:
# 12 of 1366); none torn in every cut point would test nothing.
[ "$TORN_CUTS" -gt 0 ] || fail "no cut point tore a stripe: the case tested nothing"
exit 0
