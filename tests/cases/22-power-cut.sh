#!/bin/bash
# A power cut in the middle of stripe updates (the RAID-5 write hole). Four
# null_blk channels, each behind a dm-linear member; 8 writers rewrite
# random 4 KiB blocks of the volume with fdatasync after each
# (rainssd-crashwriter, which logs every write issued and every write
# acknowledged). After a random 1-5 s the members are suspended one after
# another (--noflush, in a random order, a few ms apart, so writes in flight
# on the later ones still land), then each is loaded with an `error` table
# and resumed: the I/O held in them fails everywhere and the writers stop.
# The volume is removed, the members get their linear tables back, and the
# volume is created again from the same table line, as a reboot would. Once
# any resync is over, every block is checked: each must hold its newest
# acknowledged write or a later issued one, or zeros if none was
# acknowledged; healthy runs check first with read_policy reconstruct
# (every read rebuilt from the parity and the other members), then fail one
# member (a data member of a stripe whose parity was torn by the cut, when
# the parity checker found one before the volume came back; else a random
# one) and check again; degraded runs (member 3 failed before the writers
# started) check once. Any TORN, MADE-UP or LOST block fails the case.
# Healthy cut points 1, 5, 9, ... write with policy rcw, the others with
# count. At cut points 2, 3, 6, 7, ... each writer walks its blocks in order
# (--sequential), so that neighbouring writes can join (1.11.0); with two
# or more of them they must have joined some writes before the cut (without
# the tier). (Measured: 8 joins per cut point, most when the jobs start
# together; each write's fdatasync keeps the jobs apart afterwards, so
# joined operations are seldom the ones cut; 0 and 2 in two runs of 1.11.12.)
#
# The same procedure with the crash protection switched off
# (skip_unclean_resync) must find damage in at least one of its healthy cut
# points (the bitmap's resync needed) and in at least one of its degraded
# ones (the degraded-write log's replay needed): otherwise the procedure
# could not tell a protected volume from an unprotected one, and the case
# fails too. A cut point before which no write was acknowledged checks
# nothing and is an error; so is a healthy protected one whose parity is
# still bad after the resync (without the tier), or whose reads under
# read_policy reconstruct were not rebuilt.
#
# rainssd-check over the raw members (healthy runs) is informative: parity
# mismatches are expected after the cut, before the volume is created again;
# after the resync there should be none.
#
# With TIER (sectors per member) the volume has a RAID1 tier, small enough
# to fill under the writers (migration_threshold 2, watermarks 50/30: stripes
# enter it and the offline migration moves them home while they write), and
# with TIER_FLUSH=1 every other healthy cut point sends flush_tier shortly
# before the cut (case 28 runs it so).
#
# Environment: CUTS (protected cut points, default 2), NOPROTECT_CUTS
# (at most, default 12, healthy and degraded in turn; 0 skips that pass),
# NOPROTECT_MIN (damaged protection-off cut points needed of each kind,
# default 1), NOPROTECT_STOP (default 1: the pass runs no more cut points of
# a kind that has them; 0 runs all), SEED (for $RANDOM), CRASH_LOG (a file
# to append one line per cut to). scripts/test-crash.sh runs many more.
. "$REPO/tests/lib.sh"
set +e	# every step's failure is handled below: a cut point that cannot be run is an outcome
CW=$REPO/userspace-tools/crash/rainssd-crashwriter
[ -x "$CW" ] || fail "$CW not built (make -C userspace-tools)"

CUTS=${CUTS:-2}
TIER=${TIER:-0}
TIER_FLUSH=${TIER_FLUSH:-0}
TIER_OPTS=()
[ "$TIER" = 0 ] ||
	TIER_OPTS=(tier_size "$TIER" migration_threshold 2 tier_high_pct 50 tier_low_pct 30)
NOPROTECT_CUTS=${NOPROTECT_CUTS:-12}
NOPROTECT_STOP=${NOPROTECT_STOP:-1}	# 1: a kind's cut points end once NOPROTECT_MIN of them found damage
NOPROTECT_MIN=${NOPROTECT_MIN:-1}	# 0: only count (scripts/test-crash.sh checks the sums)
SEED=${SEED:-$(( $(date +%s) % 32768 ))}
RANDOM=$SEED
BLOCKS=8192		# the first 32 MiB of the volume
JOBS=24		# writers: enough that the cut tears a stripe's update nearly every time
CHUNK=16
N=4
VOL=rspcv
STRIPES=$(( (BLOCKS * 8 + CHUNK * (N - 1) - 1) / (CHUNK * (N - 1)) ))

# The protection off: the debugfs switch skip_unclean_resync makes the
# activation after the cut ignore the dirty flag, so that neither the
# bitmap's regions are resynced nor the degraded-write log is replayed.
SKIP=/sys/kernel/debug/rainssd/skip_unclean_resync
[ -w $SKIP ] || fail "no $SKIP (dm-rainssd 1.5.0 with debugfs)"
skip() { echo "$1" >$SKIP; }
trap 'skip 0 2>/dev/null' EXIT

log_line() { [ -z "${CRASH_LOG:-}" ] || echo "$*" >>"$CRASH_LOG"; }
rnd_ms() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }	# ms -> seconds

# dump_state: what is where, when something hangs or is refused.
dump_state() {
	dmsetup info -c 2>/dev/null | sed 's/^/    #   /'
	dmsetup status 2>/dev/null | sed 's/^/    #   /'
	local p
	for p in $(pgrep -f rainssd-crashwriter); do
		echo "    #   crashwriter $p: $(cat /proc/$p/status 2>/dev/null | grep State)"
		for t in /proc/$p/task/*; do head -8 "$t/stack" 2>/dev/null | sed 's/^/    #     /'; done
	done
	dmesg | tail -25 | sed 's/^/    #   klog: /'
}

# fresh_members: four zeroed channels, each behind a dm-linear member. The
# channels and members of the cut point before are kept and zeroed when all
# four are back on their linear tables and active; else they are made anew.
fresh_members() {
	local i reuse=${SZ:+1}
	dmsetup remove --retry $VOL >/dev/null 2>&1 || true
	if [ -n "$reuse" ]; then
		dmsetup table >/tmp/pc.tables 2>/dev/null
		dmsetup info -c --noheadings -o name,attr >/tmp/pc.attrs 2>/dev/null
		for i in $(seq 0 $((N - 1))); do
			grep -q "^rspc$i: 0 $SZ linear " /tmp/pc.tables &&
				grep -qE "^rspc$i:L--w" /tmp/pc.attrs || reuse=""
		done
	fi
	if [ -n "$reuse" ] && [ $((SZ % 2048)) = 0 ]; then
		for i in $(seq 0 $((N - 1))); do
			dd if=/dev/zero of=/dev/mapper/rspc$i bs=1M count=$((SZ / 2048)) oflag=direct \
				status=none || reuse=""
		done
		[ -z "$reuse" ] || return 0
	fi
	t_linear_members rspc $N
	T_CHUNK=$CHUNK
	T_LEN=$(( (SZ - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
}

# parity: "<bad> of <stripes>" over the written stripes of the raw members;
# the bad stripes' numbers go to /tmp/pc.bad.
parity() {
	"$CHECK" --stripes $STRIPES $CHUNK "${T_DEVS[@]}" >/tmp/pc.check 2>&1
	sed -nE 's/^bad stripe ([0-9]+):.*/\1/p' /tmp/pc.check >/tmp/pc.bad
	sed -nE 's/^checked ([0-9]+) stripes, ([0-9]+) bad.*/\2 of \1/p' /tmp/pc.check
	return 0
}

# victim: the member to fail in a healthy run. A data member (md's
# left-symmetric layout: stripe s has its parity on member N-1-s%N) of a
# stripe the cut left torn, so that its chunk is rebuilt from that parity
# if the resync did not mend it; a random member when none was torn.
victim() {
	local s p m
	s=$(shuf -n1 /tmp/pc.bad 2>/dev/null)
	if [ -z "$s" ]; then echo $((RANDOM % N)); return; fi
	p=$((N - 1 - s % N))
	m=$(( (p + 1 + RANDOM % (N - 1)) % N ))
	echo "$m"
}

# One cut point. cut <n> <healthy|degraded> <protect|noprotect>: sets OUTCOME
# (clean, damaged or error) and DETAIL.
cut() {
	local n=$1 mode=$2 prot=$3 line i order=() delay gap t rc acked issued
	local before="-" after="-" failed="-" health rc0=0
	OUTCOME=error DETAIL="" AFTER_BAD=0
	fresh_members
	# Every other healthy cut point (1, 5, 9, ...) writes with policy rcw: a
	# 4 KiB write then pre-reads the other data chunks, not the member it
	# writes, so a write issued after that member froze still lands its
	# parity: the cut tears stripes far more often than under count's RMW,
	# whose pre-read of the frozen member holds the whole update.
	local pol=()
	[ "$mode" = healthy ] && [ $((n % 4)) = 1 ] && pol=(policy rcw)
	line=$(t_table $CHUNK "$T_LEN" nosync "${TIER_OPTS[@]}" "${pol[@]}")
	echo "$line" | dmsetup create $VOL || { DETAIL="create: $line"; return; }
	if [ "$mode" = degraded ]; then
		dmsetup message $VOL 0 fail 3 || { DETAIL="fail 3 refused"; return; }
	fi
	rm -f /tmp/pc.issued /tmp/pc.acked
	# Cut points 2, 3, 6, 7, ...: the writers walk their blocks in order, so
	# that neighbouring writes meet and join (1.11.0) at the cut.
	local seq=() joined="-"
	[ $((n % 4)) -ge 2 ] && seq=(--sequential)
	"$CW" write --dev /dev/mapper/$VOL --blocks $BLOCKS --jobs $JOBS --seed $RANDOM \
		"${seq[@]}" --issued /tmp/pc.issued --acked /tmp/pc.acked >/tmp/pc.writer 2>&1 &
	local writer=$!
	delay=$((1000 + RANDOM % 4001))
	if [ "$TIER_FLUSH" = 1 ] && [ $((n % 4)) = 1 ]; then
		# flush_tier under way at the cut (healthy cut points only: it needs every member)
		sleep "$(rnd_ms $((delay - 400)))"
		dmsetup message $VOL 0 flush_tier || { DETAIL="flush_tier refused"; return; }
		sleep 0.4
	else
		sleep "$(rnd_ms $delay)"
	fi
	kill -0 $writer 2>/dev/null || { DETAIL="the writer ended before the cut: $(tail -3 /tmp/pc.writer)"; return; }
	if [ ${#seq[@]} -gt 0 ]; then
		joined=$(t_opstat $VOL joined_writes)
		SEQ_JOINED=$((SEQ_JOINED + joined))
		SEQ_CUTS=$((SEQ_CUTS + 1))
	fi
	# The cut: members frozen one after another, then their held I/O failed.
	mapfile -t order < <(shuf -i 0-$((N - 1)))
	for i in "${order[@]}"; do
		dmsetup suspend --noflush rspc$i || { DETAIL="suspend rspc$i"; return; }
		gap=$((RANDOM % 60))
		sleep "$(rnd_ms $gap)"
	done
	for i in "${order[@]}"; do
		dmsetup load rspc$i --table "0 $SZ error" && dmsetup --noudevsync resume rspc$i ||
			{ DETAIL="error table on rspc$i"; return; }
	done
	for t in $(seq 120); do kill -0 $writer 2>/dev/null || break; sleep 1; done
	if kill -0 $writer 2>/dev/null; then
		dump_state
		fail "cut $n: the writers did not stop within 120 s of the cut"
	fi
	wait $writer	# 1: its jobs stopped on I/O errors, as they should
	acked=$(wc -l </tmp/pc.acked)
	issued=$(wc -l </tmp/pc.issued)
	# A cut point before which nothing was acknowledged checks nothing.
	[ "$acked" -gt 0 ] || { DETAIL="no write acknowledged before the cut ($issued issued)"; return; }
	dmsetup remove --retry $VOL >/tmp/pc.remove 2>&1 ||
		{ dump_state; fail "cut $n: the volume cannot be removed after the cut: $(cat /tmp/pc.remove)"; }
	# Power back: the members as they were.
	for i in "${order[@]}"; do
		dmsetup load rspc$i --table "0 $SZ linear /dev/rsch$i 0" && dmsetup --noudevsync resume rspc$i ||
			{ DETAIL="linear table back on rspc$i"; return; }
	done
	: >/tmp/pc.bad
	[ "$mode" = healthy ] && before=$(parity) && cp /tmp/pc.bad /tmp/pc.torn
	skip $([ "$prot" = noprotect ] && echo 1 || echo 0)
	echo "$line" | dmsetup create $VOL 2>/tmp/pc.create || {
		DETAIL="created again: refused: $(tail -1 /tmp/pc.create); $(dmesg | grep -i rainssd | tail -2 | tr '\n' ' ')"
		return
	}
	skip 0
	t_idle $VOL 600 || { DETAIL="resync not over after 600 s: $(t_opstat $VOL sync_ratio)"; return; }
	if [ "$mode" = healthy ]; then
		dmsetup suspend $VOL
		after=$(parity)
		dmsetup resume $VOL || { DETAIL="resume after the parity check"; return; }
		AFTER_BAD=${after%% *}
		# Every read rebuilt from parity: what read_policy adaptive may do at any time.
		local recon
		recon=$(t_status_field $VOL 10)
		dmsetup message $VOL 0 read_policy reconstruct || { DETAIL="read_policy refused"; return; }
		"$CW" verify --dev /dev/mapper/$VOL --blocks $BLOCKS --issued /tmp/pc.issued \
			--acked /tmp/pc.acked >/tmp/pc.verify0 2>&1
		rc0=$?
		recon=$(( $(t_status_field $VOL 10) - recon ))
		dmsetup message $VOL 0 read_policy direct || { DETAIL="read_policy refused"; return; }
		# (a healthy volume rebuilds no read but by the policy)
		[ "$recon" -gt 0 ] || { DETAIL="read_policy reconstruct rebuilt no read ($recon)"; return; }
		cp /tmp/pc.torn /tmp/pc.bad
		failed=$(victim)
		dmsetup message $VOL 0 fail $failed || { DETAIL="fail $failed refused"; return; }
	fi
	health=$(t_status_field $VOL 2)
	[ "$TIER" = 0 ] || health+=", tier $(dmsetup status $VOL | t_tail_field tier_stripes)"
	"$CW" verify --dev /dev/mapper/$VOL --blocks $BLOCKS --issued /tmp/pc.issued \
		--acked /tmp/pc.acked >/tmp/pc.verify 2>&1
	rc=$?
	local rebuilt=""
	if [ "$mode" = healthy ]; then
		rebuilt="all reads rebuilt: $(tail -1 /tmp/pc.verify0 | sed -E 's/.* ([0-9]+ torn)/\1/'); "
		# the worse of the two checks (damage before an error), its report shown
		if [ "$rc0" = 1 ] || { [ "$rc" = 0 ] && [ "$rc0" != 0 ]; }; then
			rc=$rc0
			cp /tmp/pc.verify0 /tmp/pc.verify
		fi
	fi
	DETAIL="${pol[*]:+policy rcw, }${seq[*]:+sequential, $joined joined, }after $(rnd_ms $delay) s, order ${order[*]}, $acked acked/$issued issued; parity bad before/after resync: $before/$after; ${rebuilt}failed $failed, health $health; $(tail -1 /tmp/pc.verify | sed 's/^verified //')"
	case $rc in
	0) OUTCOME=clean ;;
	1) OUTCOME=damaged ;;
	*) OUTCOME=error DETAIL="verify: $(tail -2 /tmp/pc.verify | tr '\n' ' ')" ;;
	esac
	dmsetup remove --retry $VOL >/dev/null 2>&1 || true
}

declare -A count
for k in protect:clean protect:damaged protect:error noprotect:clean noprotect:damaged noprotect:error \
	noprotect:damaged:healthy noprotect:damaged:degraded; do
	count[$k]=0
done
parity_left=0
note "seed $SEED; $CUTS protected cut points, $NOPROTECT_CUTS with the protection off (skip_unclean_resync)"
run_pass() { # run_pass <protect|noprotect> <cuts>
	local prot=$1 cuts=$2 n mode
	for n in $(seq 1 "$cuts"); do
		mode=$([ $((n % 2)) = 1 ] && echo healthy || echo degraded)
		if [ "$prot" = noprotect ] && [ "$NOPROTECT_STOP" = 1 ] && [ "$NOPROTECT_MIN" -gt 0 ] &&
			[ "${count[noprotect:damaged:$mode]}" -ge "$NOPROTECT_MIN" ]; then
			continue
		fi
		cut "$n" $mode "$prot"
		count[$prot:$OUTCOME]=$((count[$prot:$OUTCOME] + 1))
		[ "$prot:$OUTCOME" != noprotect:damaged ] ||
			count[noprotect:damaged:$mode]=$((count[noprotect:damaged:$mode] + 1))
		note "$prot cut $n ($mode): $OUTCOME: $DETAIL"
		log_line "$prot cut $n ($mode) seed $SEED: $OUTCOME: $DETAIL"
		if [ "$OUTCOME" = damaged ]; then
			sed 's/^/    #     /' /tmp/pc.verify | head -$([ "$prot" = protect ] && echo 12 || echo 4)
		fi
		if [ "$prot" = protect ] && [ "$OUTCOME" = clean ] && [ "${AFTER_BAD:-0}" != 0 ]; then
			parity_left=$((parity_left + 1))
		fi
	done
}
SEQ_JOINED=0
SEQ_CUTS=0
run_pass protect "$CUTS"
prot_joined=$SEQ_JOINED
prot_seq=$SEQ_CUTS
run_pass noprotect "$NOPROTECT_CUTS"

ndh=${count[noprotect:damaged:healthy]} ndd=${count[noprotect:damaged:degraded]}
summary="protected: ${count[protect:clean]} clean, ${count[protect:damaged]} damaged, ${count[protect:error]} error; protection off: ${count[noprotect:damaged]} damaged ($ndh healthy, $ndd degraded), ${count[noprotect:clean]} clean, ${count[noprotect:error]} error"
note "outcomes: $summary"
echo "CRASH-OUTCOMES 22 pc=${count[protect:clean]} pd=${count[protect:damaged]} pe=${count[protect:error]} nd=${count[noprotect:damaged]} nc=${count[noprotect:clean]} ne=${count[noprotect:error]} ndh=$ndh ndd=$ndd"
# After the resync every stripe's parity matches its data (all 632 healthy
# protected cut points of the soaks up to 1.11.22 had none left). With the
# tier the checker's plain RAID-5 view does not hold for stripes in the
# tier, so there it stays informative.
if [ "$parity_left" != 0 ]; then
	[ "$TIER" != 0 ] || fail "$parity_left clean healthy protected cut points still had bad parity after the resync"
	note "informative (the tier on): $parity_left clean healthy cut points had bad parity after the resync"
fi
[ "${count[protect:damaged]}" = 0 ] || fail "${count[protect:damaged]} of $CUTS protected cut points read back damaged blocks"
# The sequential cut points must have cut joined writes, counted over at
# least two of them: one alone joined none in a run of 1.11.12's make test
# (most joins come as the jobs start together, and each write's fdatasync
# keeps them apart after; case 03 checks that writes join). Not with the
# tier (case 28): writes to stripes in the tier are mirrored and never
# join, and with the tier filling under the writers a sequential cut point
# of case 28 joined none (make test of 354942c).
if [ "$prot_seq" -ge 2 ] && [ "$TIER" = 0 ] && [ "$prot_joined" = 0 ]; then
	fail "the $prot_seq sequential protected cut points joined no write before the cut"
fi
note "writes joined before the $prot_seq sequential protected cuts: $prot_joined"
[ "${count[protect:error]}" = 0 ] || fail "${count[protect:error]} protected cut points could not be run to the end"
if [ "$NOPROTECT_CUTS" -gt 0 ] && [ "$ndh" -lt "$NOPROTECT_MIN" ]; then
	fail "the protection switched off (skip_unclean_resync) found no damage in the healthy ones of $NOPROTECT_CUTS cut points: the procedure cannot tell"
fi
if [ "$NOPROTECT_CUTS" -gt 1 ] && [ "$ndd" -lt "$NOPROTECT_MIN" ]; then
	fail "the protection switched off (skip_unclean_resync) found no damage in the degraded ones of $NOPROTECT_CUTS cut points: the procedure cannot tell"
fi
