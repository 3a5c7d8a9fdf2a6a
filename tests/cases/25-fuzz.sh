#!/bin/bash
# Hostile input: fuzzed table lines, messages and metadata bytes
# (userspace-tools/rainssd-fuzz) against a volume holding a known pattern.
# Always a clear error, never a changed volume: a refused table leaves no
# device and a device-mapper line in the kernel log, a refused message
# leaves the table as it was, a corrupted superblock, bitmap or log is
# refused or distrusted (the volume reads back the same bytes); the runner
# fails the case on any kernel splat. Bounded by FUZZ_TABLES, FUZZ_MESSAGES
# and FUZZ_META; FUZZ_SEED (printed) replays a run.
. "$REPO/tests/lib.sh"
FUZZ=$REPO/userspace-tools/rainssd-fuzz
NT=${FUZZ_TABLES:-40} NM=${FUZZ_MESSAGES:-60} NMETA=${FUZZ_META:-6}
SEED=${FUZZ_SEED:-$RANDOM$RANDOM}
note "FUZZ_SEED=$SEED FUZZ_TABLES=$NT FUZZ_MESSAGES=$NM FUZZ_META=$NMETA"
t_channels 4 --size-mb 48
t_create rsf 128
canon=$(t_table 128 "$T_LEN" nosync)
TMO="timeout -k 10 120"

# The kernel log, followed by a reader in the background (the ring may be
# full, so line counts do not move; and a process per input is slow under
# TCG). klog_sync writes a marker and reads up to it: $KLOG holds what the
# kernel logged since the last klog_sync.
: >/tmp/fz-kmsg
cat /dev/kmsg >>/tmp/fz-kmsg 2>/dev/null &
KPID=$!
trap 'kill $KPID 2>/dev/null; rm -f /tmp/fz-kmsg' EXIT
exec 4</tmp/fz-kmsg
kmark=0 KLOG=""
klog_sync() {
	local l part="" i=0
	kmark=$((kmark + 1))
	echo "rainssd-fuzz mark $kmark" >/dev/kmsg
	KLOG=""
	while [ $i -lt 600 ]; do
		if IFS= read -r -u 4 l; then
			l=$part$l part=""
			[[ $l == *";rainssd-fuzz mark $kmark" ]] && return 0
			KLOG+=$l$'\n'
		else
			part+=$l
			i=$((i + 1))
			sleep 0.05
		fi
	done
	fail "the kernel log reader does not reach mark $kmark"
}
# Whether a dm device exists (none should, between the inputs of phase a).
dm_left() {
	local f
	for f in /sys/block/dm-*/dm/name; do [ -e "$f" ] && return 0; done
	return 1
}
vol_md5() { dd if=/dev/mapper/rsf bs=1M count=4 iflag=direct status=none | md5sum | cut -c1-32; }
# save_meta / load_meta: the reserved first 16 MiB of every member.
save_meta() {
	local i
	for i in 0 1 2 3; do
		dd if="${T_DEVS[i]}" of=/tmp/fz-meta$i bs=1M count=16 iflag=direct status=none ||
			fail "save the metadata of ${T_DEVS[i]}"
	done
}
# load_meta [member]: the metadata the target writes (superblocks at 1 MiB,
# bitmap at 2 MiB) on every member, and all of it (the log up to 12 MiB
# too) on every member or on the one given.
load_meta() {
	local i n
	for i in 0 1 2 3; do
		n=11
		[ $# -gt 0 ] && [ "$1" != $i ] && n=3
		dd if=/tmp/fz-meta$i of="${T_DEVS[i]}" bs=1M skip=1 seek=1 count=$n oflag=direct \
			status=none || fail "restore the metadata of ${T_DEVS[i]}"
	done
}
# canon_check <what>: the canonical table activates healthy with the pattern.
canon_check() {
	echo "$canon" | $TMO dmsetup create rsf || fail "$1: the canonical table is refused"
	local h m
	h=$(t_status_field rsf 2)
	m=$(vol_md5)
	$TMO dmsetup remove --retry rsf || fail "$1: remove rsf"
	[ "$h" = AAAA ] || fail "$1: the canonical table activates with health $h"
	[ "$m" = "$MD5" ] || fail "$1: the volume reads back md5 $m, not $MD5"
}
# refused_clearly <table> <dmsetup output>: no device left, and a
# device-mapper error line in the kernel log (or dmsetup's own parse error).
# Sets REFUSED_BY to kernel or dmsetup.
refused_clearly() {
	klog_sync
	if dm_left; then
		dmsetup ls
		fail "refused but left a device behind: $1"
	fi
	if [[ $KLOG == *"device-mapper: "* ]]; then
		REFUSED_BY=kernel
	elif [[ ${2,,} =~ invalid|error|fail|unknown ]]; then
		REFUSED_BY=dmsetup
	else
		fail "refused with no clear error ($2): $1"
	fi
}

# The pattern: 4 MiB over every member, data and parity.
head -c 4M /dev/urandom >/tmp/fz-pat
dd if=/tmp/fz-pat of=/dev/mapper/rsf bs=1M oflag=direct conv=fsync status=none || fail "write the pattern"
MD5=$(md5sum </tmp/fz-pat | cut -c1-32)
[ "$(vol_md5)" = "$MD5" ] || fail "the pattern does not read back"
dmsetup remove rsf
save_meta

# a) Tables, on the stopped volume. An accepted line that legitimately
# changes the volume's state ("-" fails a member, rebuild starts a rebuild)
# is followed by the saved metadata put back; every other accepted line must
# leave the volume as it was, which the canonical table checks every 50
# lines and at the end.
"$FUZZ" tables --seed "$SEED" --count "$NT" --len "$T_LEN" --chunk 128 --nosync "${T_DEVS[@]}" \
	>/tmp/fz-tables || fail "rainssd-fuzz tables"
ta_k=0 ta_u=0 ta_acc=0 ta_back=0 n=0 t0=$SECONDS
while IFS= read -r line; do
	n=$((n + 1))
	klog_sync
	if out=$(printf '%s\n' "$line" | dmsetup create rsf_fz 2>&1); then
		ta_acc=$((ta_acc + 1))
		dmsetup remove --retry rsf_fz || fail "remove the accepted table: $line"
		if tr -d '\\' <<<"$line" | grep -qiE '(^| )(-|rebuild)( |$)'; then
			load_meta
			ta_back=$((ta_back + 1))
		fi
	else
		refused_clearly "$line" "$out"
		if [ $REFUSED_BY = kernel ]; then ta_k=$((ta_k + 1)); else ta_u=$((ta_u + 1)); fi
	fi
	if [ $((n % 50)) -eq 0 ]; then canon_check "after table line $n ($line)"; fi
done </tmp/fz-tables
[ "$n" -eq "$NT" ] || fail "read $n of $NT table lines"
canon_check "after the table lines"
note "tables: $NT in $((SECONDS - t0))s, refused $ta_k by the kernel and $ta_u by dmsetup, accepted $ta_acc ($ta_back changed the state legitimately: metadata put back)"

# b) Messages, on the active volume.
"$FUZZ" messages --seed "$SEED" --count "$NM" --members 4 >/tmp/fz-messages ||
	fail "rainssd-fuzz messages"
echo "$canon" | dmsetup create rsf || fail "the canonical table for the messages"
mb_ref=0 mb_acc=0 n=0 t0=$SECONDS
before=$(dmsetup table rsf)
while IFS= read -r line; do
	n=$((n + 1))
	read -ra words <<<"$line"
	# "--": a word such as -1 is the message's, not an option of dmsetup.
	if dmsetup message -- rsf 0 "${words[@]}" >/dev/null 2>&1; then
		mb_acc=$((mb_acc + 1))
		before=$(dmsetup table rsf)
	else
		mb_ref=$((mb_ref + 1))
		after=$(dmsetup table rsf)
		[ "$after" = "$before" ] || fail "refused message changed the table to '$after': $line"
	fi
done </tmp/fz-messages
[ "$n" -eq "$NM" ] || fail "read $n of $NM messages"
$TMO dmsetup message rsf 0 idle || fail "idle after the messages"
h=$(t_status_field rsf 2)
[ "$h" = AAAA ] || fail "health $h after the messages"
[ "$(vol_md5)" = "$MD5" ] || fail "the volume changed under the messages"
tbl=$(dmsetup table rsf)
{ $TMO dmsetup suspend rsf && $TMO dmsetup reload rsf --table "$tbl" && $TMO dmsetup resume rsf; } ||
	fail "the table after the messages does not reload: $tbl"
[ "$(vol_md5)" = "$MD5" ] || fail "the volume changed across the reload"
$TMO dmsetup remove --retry rsf || fail "remove rsf after the messages"
note "messages: $NM in $((SECONDS - t0))s, refused $mb_ref, accepted $mb_acc; the table's options after them: $(cut -d' ' -f10- <<<"$tbl")"

# c) Metadata: every iteration from the saved state, one member's area
# corrupted. The bitmap is read, and the log replayed, only after an unclean
# shutdown, the log only degraded: those iterations mark every superblock
# unclean first, and the log's run with "-" for another member.
areas=(sb sb-both bitmap log)
mc_ref=0 mc_acc=0 healths="" t0=$SECONDS
lastj=0
for i in $(seq 1 "$NMETA"); do
	load_meta $lastj
	h32=$(printf '%s' "$SEED:$i" | cksum | cut -d' ' -f1)
	area=${areas[$(((i - 1) % 4))]} j=$((h32 % 4))
	tab=$canon
	if [ "$area" = bitmap ] || [ "$area" = log ]; then
		"$FUZZ" unclean "${T_DEVS[@]/#/--dev=}" >/dev/null || fail "rainssd-fuzz unclean"

	fi
	if [ "$area" = log ]; then
		k=$(((j + 1 + (h32 / 4) % 3) % 4))
		devs=("${T_DEVS[@]}")
		devs[k]=-
		tab="0 $T_LEN rainssd 128 4 ${devs[*]} 1 nosync"
	fi
	lastj=$j
	"$FUZZ" corrupt --seed "$SEED:$i" --dev "${T_DEVS[j]}" --area "$area" >/tmp/fz-corrupt ||
		fail "rainssd-fuzz corrupt ${T_DEVS[j]} $area"
	what="iteration $i: $area of member $j ($(wc -l </tmp/fz-corrupt) change(s): $(head -c 300 /tmp/fz-corrupt | tr '\n' ';'))"
	klog_sync
	if out=$(echo "$tab" | dmsetup create rsf 2>&1); then
		mc_acc=$((mc_acc + 1))
		h=$(t_status_field rsf 2)
		m=$(vol_md5)
		dmsetup remove --retry rsf || fail "remove rsf, $what"
		healths="$healths $h"
		[ "$m" = "$MD5" ] || { cat /tmp/fz-corrupt; fail "the volume reads back md5 $m (health $h), $what"; }
	else
		mc_ref=$((mc_ref + 1))
		refused_clearly "$tab ($what)" "$out"
	fi
done
load_meta
canon_check "after the metadata"
note "metadata: $NMETA in $((SECONDS - t0))s, refused $mc_ref, accepted $mc_acc (health:${healths:- none})"
note "fuzz summary seed $SEED: tables $NT (refused $((ta_k + ta_u)), accepted $ta_acc)," \
	"messages $NM (refused $mb_ref, accepted $mb_acc), metadata $NMETA (refused $mc_ref, accepted $mc_acc)"
rm -f /tmp/fz-meta[0-3] /tmp/fz-pat /tmp/fz-tables /tmp/fz-messages /tmp/fz-corrupt
