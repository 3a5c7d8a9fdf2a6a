#!/bin/bash
# Power cuts replayed from dm-log-writes logs. Every member is a log-writes
# device over its null_blk channel, logging to a second channel: a write is
# logged only once a flush after it completed (FUA at once), so replaying a
# member's log up to a point gives the member as a power cut there could
# have left it, with its volatile cache lost. While 8 writers rewrite 4 KiB
# blocks with fdatasync (rainssd-crashwriter), a mark goes into every
# member's log every ~0.5 s, one member after another; before the marks the
# case notes how many writes were acknowledged, after them how many were
# issued. Then, for a sample of the marks, every member's log is replayed to
# that mark onto a fresh zeroed channel (rainssd-logreplay), the volume is
# created on the copies from the same table line, any resync runs, one
# member is failed and every block is checked against the writes acked
# before the mark (and those issued up to it): a TORN, MADE-UP or LOST block
# fails the case. rainssd-check after the resync is informative.
#
# The control: marks of the last round replayed again with the crash
# protection switched off (skip_unclean_resync: no resync, no log replay),
# failing a data member of a stripe the replayed copies hold torn (by the
# parity checker), must find damage at one of up to CONTROL_MARKS marks;
# otherwise the procedure could not tell a protected volume from an
# unprotected one, and the case fails.
#
# Environment: MARKS (marks checked, default 1 in make test, 3 in make
# test-full; 5 or 10 marks are placed per round of writing, a random sample
# of them checked), CONTROL_MARKS (default 4; 0 skips the control), SEED,
# CRASH_LOG (a file to append one line per mark to). scripts/test-crash.sh
# runs many more.
. "$REPO/tests/lib.sh"
set +e	# every step's failure is handled below
CW=$REPO/userspace-tools/crash/rainssd-crashwriter
LR=$REPO/userspace-tools/crash/rainssd-logreplay
[ -x "$CW" ] && [ -x "$LR" ] || fail "crash tools not built (make -C userspace-tools)"

MARKS=${MARKS:-$(t_size 1 3)}
CONTROL_MARKS=${CONTROL_MARKS:-4}
SEED=${SEED:-$(( $(date +%s) % 32768 ))}
RANDOM=$SEED
PER_ROUND=$(t_size 5 10)	# marks placed per round of writing (the log grows with them)
BLOCKS=8192
JOBS=8
CHUNK=16
N=4
VOL=rslwv
SIZE_MB=64
LOG_MB=${LOG_MB:-512}	# per member; memory-backed, only what is logged uses memory
STRIPES=$(( (BLOCKS * 8 + CHUNK * (N - 1) - 1) / (CHUNK * (N - 1)) ))

log_line() { [ -z "${CRASH_LOG:-}" ] || echo "$*" >>"$CRASH_LOG"; }

# The protection off, for the control.
SKIP=/sys/kernel/debug/rainssd/skip_unclean_resync
[ -w $SKIP ] || fail "no $SKIP (dm-rainssd with debugfs)"
trap 'echo 0 >$SKIP 2>/dev/null' EXIT

# members <dev...>: T_DEVS and the volume geometry for these members.
members() { T_DEVS=("$@"); T_CHUNK=$CHUNK; T_LEN=$(t_usable $CHUNK); }

# One round: channels, log-writes members, the volume, the writers and
# PER_ROUND marks; leaves the logs on /dev/rsx*, the marks in /tmp/lw.marks
# ("name acked-lines issued-lines"), the table line in LINE.
record() {
	local i k a is writer pids
	t_teardown >/dev/null 2>&1
	t_channels $N --size-mb $SIZE_MB --lat-us 300 --qd 8
	"$CHANNELS" create $N --prefix rsx --size-mb $LOG_MB >/dev/null || fail "log channels"
	SZ=$(blockdev --getsz /dev/rsch0)
	for i in $(seq 0 $((N - 1))); do
		echo "0 $SZ log-writes /dev/rsch$i /dev/rsx$i" | dmsetup create rslw$i ||
			fail "log-writes member $i"
	done
	members /dev/mapper/rslw{0..3}
	LINE=$(t_table $CHUNK "$T_LEN" nosync)
	echo "$LINE" | dmsetup create $VOL || fail "create the volume over log-writes members"
	rm -f /tmp/lw.issued /tmp/lw.acked /tmp/lw.marks
	"$CW" write --dev /dev/mapper/$VOL --blocks $BLOCKS --jobs $JOBS --seed $RANDOM \
		--issued /tmp/lw.issued --acked /tmp/lw.acked >/tmp/lw.writer 2>&1 &
	writer=$!
	sleep 1
	for k in $(seq 1 $PER_ROUND); do
		sleep 0.$((3 + RANDOM % 5))
		kill -0 $writer 2>/dev/null || fail "the writer stopped: $(tail -3 /tmp/lw.writer)"
		a=$(wc -l </tmp/lw.acked)
		# Every member's mark at once: under the writers' load in TCG a
		# dmsetup call takes 1-4 s, and one after another the members'
		# marks drifted apart by that much (and the case by a minute).
		pids=()
		for i in $(seq 0 $((N - 1))); do
			dmsetup message rslw$i 0 mark m$k &
			pids+=($!)
		done
		for i in $(seq 0 $((N - 1))); do
			wait "${pids[$i]}" || fail "mark m$k on member $i"
		done
		is=$(wc -l </tmp/lw.issued)
		echo "m$k $a $is" >>/tmp/lw.marks
	done
	kill $writer
	wait $writer 2>/dev/null
	for i in $(seq 0 $((N - 1))); do
		[[ $(dmsetup status rslw$i) != *logging_disabled* ]] ||
			fail "member $i stopped logging (log device of $LOG_MB MiB full?): $(dmsetup status rslw$i)"
	done
	dmsetup remove --retry $VOL || fail "remove the volume"
	for i in $(seq 0 $((N - 1))); do dmsetup remove --retry rslw$i || fail "remove rslw$i"; done
	note "round: $(wc -l </tmp/lw.acked) writes acked; member 0's log: $("$LR" list /dev/rsx0 | tail -1)"
}

# check_mark <name> <acked lines> <issued lines> [noprotect]: replay,
# create, fail a member, verify. Sets OUTCOME (clean, damaged, error) and
# DETAIL. With noprotect, the volume comes back with the protection off and
# the member failed is a data member of a stripe the replay left torn (md's
# left-symmetric layout: stripe s's parity on member N-1-s%N), if any.
check_mark() {
	local m=$1 a=$2 is=$3 prot=${4:-protect} i rc failed after health s torn=-
	OUTCOME=error DETAIL=""
	dmsetup remove --retry $VOL >/dev/null 2>&1
	"$CHANNELS" destroy >/dev/null 2>&1
	t_channels $N --size-mb $SIZE_MB --lat-us 300 --qd 8
	for i in $(seq 0 $((N - 1))); do
		"$LR" replay /dev/rsx$i /dev/rsch$i --to-mark "$m" >/tmp/lw.replay 2>&1 ||
			{ DETAIL="replay of member $i to $m: $(tail -1 /tmp/lw.replay)"; return; }
	done
	members /dev/rsch{0..3}
	failed=$((RANDOM % N))
	if [ "$prot" = noprotect ]; then
		s=$("$CHECK" --stripes $STRIPES $CHUNK "${T_DEVS[@]}" 2>/dev/null |
			sed -nE 's/^bad stripe ([0-9]+):.*/\1/p' | shuf -n1 --random-source=<(yes $RANDOM))
		if [ -n "$s" ]; then
			torn=$s
			failed=$(( (N - 1 - s % N + 1 + RANDOM % (N - 1)) % N ))
		fi
		echo 1 >$SKIP
	fi
	# The same table line, on the replayed copies.
	echo "$LINE" | sed "s|/dev/mapper/rslw|/dev/rsch|g" | dmsetup create $VOL 2>/tmp/lw.create
	rc=$?
	echo 0 >$SKIP
	[ "$rc" = 0 ] ||
		{ DETAIL="created on the replayed members: refused: $(tail -1 /tmp/lw.create); $(dmesg | grep -i rainssd | tail -2 | tr '\n' ' ')"; return; }
	t_idle $VOL 600 || { DETAIL="resync not over after 600 s"; return; }
	dmsetup suspend $VOL
	after=$("$CHECK" --quiet --stripes $STRIPES $CHUNK "${T_DEVS[@]}" 2>&1 | sed -nE 's/^checked ([0-9]+) stripes, ([0-9]+) bad.*/\2 of \1/p')
	dmsetup resume $VOL || { DETAIL="resume"; return; }
	dmsetup message $VOL 0 fail $failed || { DETAIL="fail $failed refused"; return; }
	health=$(t_status_field $VOL 2)
	local extra=""
	[ "$prot" = protect ] || extra="protection off, torn stripe $torn, "
	head -n "$a" /tmp/lw.acked >/tmp/lw.acked.m
	head -n "$is" /tmp/lw.issued >/tmp/lw.issued.m
	"$CW" verify --dev /dev/mapper/$VOL --blocks $BLOCKS --issued /tmp/lw.issued.m \
		--acked /tmp/lw.acked.m >/tmp/lw.verify 2>&1
	rc=$?
	DETAIL="$a acked/$is issued before it; parity bad after resync: ${after:-?}; ${extra}failed $failed, health $health; $(tail -1 /tmp/lw.verify | sed 's/^verified //')"
	case $rc in
	0) OUTCOME=clean ;;
	1) OUTCOME=damaged ;;
	*) OUTCOME=error DETAIL="verify: $(tail -2 /tmp/lw.verify | tr '\n' ' ')" ;;
	esac
	dmsetup remove --retry $VOL >/dev/null 2>&1
}

declare -A count=([clean]=0 [damaged]=0 [error]=0)
note "seed $SEED; $MARKS marks checked, $PER_ROUND placed per round"
left=$MARKS round=0
while [ "$left" -gt 0 ]; do
	round=$((round + 1))
	record
	take=$((left < PER_ROUND ? left : PER_ROUND))
	mapfile -t sample < <(shuf -n "$take" /tmp/lw.marks --random-source=<(yes $RANDOM) | sort -V)
	for s in "${sample[@]}"; do
		read -r m a is <<<"$s"
		check_mark "$m" "$a" "$is"
		count[$OUTCOME]=$((count[$OUTCOME] + 1))
		note "round $round mark $m: $OUTCOME: $DETAIL"
		log_line "round $round mark $m seed $SEED: $OUTCOME: $DETAIL"
		[ "$OUTCOME" != damaged ] || sed 's/^/    #     /' /tmp/lw.verify | head -12
	done
	left=$((left - take))
done
note "outcomes: ${count[clean]} clean, ${count[damaged]} damaged, ${count[error]} error"
echo "CRASH-OUTCOMES 23 clean=${count[clean]} damaged=${count[damaged]} error=${count[error]}"
[ "${count[damaged]}" = 0 ] || fail "${count[damaged]} of $MARKS marks read back damaged blocks"
[ "${count[error]}" = 0 ] || fail "${count[error]} marks could not be checked to the end"

# The control: the last round's marks with the protection off, until one
# finds damage.
if [ "$CONTROL_MARKS" -gt 0 ]; then
	found=0 tried=0
	mapfile -t sample < <(shuf -n "$CONTROL_MARKS" /tmp/lw.marks --random-source=<(yes $RANDOM))
	for s in "${sample[@]}"; do
		read -r m a is <<<"$s"
		check_mark "$m" "$a" "$is" noprotect
		tried=$((tried + 1))
		note "protection off, round $round mark $m: $OUTCOME: $DETAIL"
		[ "$OUTCOME" != error ] || fail "protection off, mark $m could not be checked: $DETAIL"
		if [ "$OUTCOME" = damaged ]; then found=1; break; fi
	done
	[ "$found" = 1 ] ||
		fail "the protection switched off (skip_unclean_resync) found no damage at $tried marks: the procedure cannot tell"
fi
