#!/bin/bash
# Hostile input: fuzzed table lines, messages and metadata bytes
# (userspace-tools/rainssd-fuzz) against a volume holding a known pattern.
# Always a clear error, never a changed volume: a refused table leaves no
# device and a device-mapper line in the kernel log, a refused message
# leaves the table as it was, a corrupted superblock, bitmap or log is
# refused or distrusted (the volume reads back the same bytes); the runner
# fails the case on any kernel splat. Then the same on a second volume with
# a RAID1 tier (tier_size), part of the pattern in the tier: table lines
# with tier_size and the tier's options, the tier's messages, and its
# mapping table corrupted (one copy of a block on one member: activates;
# both copies of a block on every member: refused) or forged with right
# checksums (refused, or taken with the data unchanged, as the fuzzer's
# model of the loader says); a refusal there also leaves the members' bytes
# (the first MiBs of each and its tier area, hashed) as they were. Bounded
# by FUZZ_TABLES, FUZZ_MESSAGES and FUZZ_META (the tier volume gets half as
# many table lines and messages, and FUZZ_TIER table corruptions); FUZZ_SEED
# (printed) replays a run.
. "$REPO/tests/lib.sh"
FUZZ=$REPO/userspace-tools/rainssd-fuzz
NT=${FUZZ_TABLES:-$(t_size 6 40)} NM=${FUZZ_MESSAGES:-$(t_size 16 60)}
NMETA=${FUZZ_META:-$(t_size 2 6)} NTIER=${FUZZ_TIER:-$(t_size 1 6)}
NTT=$(((NT + 1) / 2)) NTM=$(((NM + 1) / 2))
SEED=${FUZZ_SEED:-$RANDOM$RANDOM}
note "FUZZ_SEED=$SEED FUZZ_TABLES=$NT FUZZ_MESSAGES=$NM FUZZ_META=$NMETA FUZZ_TIER=$NTIER"
t_channels 4 --size-mb 48
t_create rsf 128
canon=$(t_table 128 "$T_LEN" nosync)
TMO="timeout -k 10 120"
# The tier area of the members (member sectors), once the tier volume has one.
TSTART=0 TSECT=0

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
# tier_area <dev>: the member's tier area (nothing without a tier).
tier_area() {
	if [ "$TSECT" -gt 0 ]; then
		dd if="$1" bs=1M iflag=direct,skip_bytes,count_bytes skip=$((TSTART * 512)) \
			count=$((TSECT * 512)) status=none
	fi
}
# save_meta / load_meta: the reserved first 16 MiB of every member, and its
# tier area.
save_meta() {
	local i
	for i in 0 1 2 3; do
		dd if="${T_DEVS[i]}" of=/tmp/fz-meta$i bs=1M count=16 iflag=direct status=none ||
			fail "save the metadata of ${T_DEVS[i]}"
		tier_area "${T_DEVS[i]}" >/tmp/fz-tier$i || fail "save the tier area of ${T_DEVS[i]}"
	done
}
# load_meta [member]: the metadata the target writes (superblocks at 1 MiB,
# bitmap at 2 MiB, the tier area) on every member, and all of it (the log
# up to 12 MiB too) on every member or on the one given.
load_meta() {
	local i n
	for i in 0 1 2 3; do
		n=11
		[ $# -gt 0 ] && [ "$1" != $i ] && n=3
		dd if=/tmp/fz-meta$i of="${T_DEVS[i]}" bs=1M skip=1 seek=1 count=$n oflag=direct \
			status=none || fail "restore the metadata of ${T_DEVS[i]}"
		if [ "$TSECT" -gt 0 ]; then
			dd if=/tmp/fz-tier$i of="${T_DEVS[i]}" bs=1M seek=$((TSTART * 512)) \
				oflag=direct,seek_bytes status=none || fail "restore the tier area of ${T_DEVS[i]}"
		fi
	done
}
# mhash <MiB>: a hash per member of its first MiB and its tier area.
mhash() {
	local i
	for i in 0 1 2 3; do
		{ dd if="${T_DEVS[i]}" bs=1M count="$1" iflag=direct status=none; tier_area "${T_DEVS[i]}"; } |
			md5sum | cut -c1-8
	done | tr '\n' ' '
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

# run_tables <file> <count> <MiB>: the table lines of <file>, on the stopped
# volume. An accepted line that legitimately changes the volume's state ("-"
# fails a member, rebuild starts a rebuild) is followed by the saved metadata
# put back; every other accepted line must leave the volume as it was, which
# the canonical table checks every 50 lines and at the end. With <MiB> > 0 a
# refused line must also leave the members' bytes (mhash <MiB>) as they were.
# Counts in ta_k (refused by the kernel), ta_u (by dmsetup), ta_acc, ta_back.
run_tables() {
	local line out rc n=0 hb="" changed=1
	ta_k=0 ta_u=0 ta_acc=0 ta_back=0
	while IFS= read -r line; do
		n=$((n + 1))
		if [ "$3" -gt 0 ] && [ $changed = 1 ]; then
			hb=$(mhash "$3")
			changed=0
		fi
		klog_sync
		if out=$(printf '%s\n' "$line" | dmsetup create rsf_fz 2>&1); then
			ta_acc=$((ta_acc + 1))
			changed=1
			dmsetup remove --retry rsf_fz || fail "remove the accepted table: $line"
			if tr -d '\\' <<<"$line" | grep -qiE '(^| )(-|rebuild)( |$)'; then
				load_meta
				ta_back=$((ta_back + 1))
			fi
		else
			# 128 + a signal: dmsetup itself crashed (the generator keeps
			# within what its table parser takes; see rainssd-fuzz)
			rc=$?
			[ $rc -lt 128 ] || fail "dmsetup died with exit $rc on: ${line:0:200}"
			refused_clearly "$line" "$out"
			if [ $REFUSED_BY = kernel ]; then ta_k=$((ta_k + 1)); else ta_u=$((ta_u + 1)); fi
			if [ "$3" -gt 0 ] && [ "$(mhash "$3")" != "$hb" ]; then
				fail "a refused table line changed the members' bytes: $line"
			fi
		fi
		if [ $((n % 50)) -eq 0 ]; then
			canon_check "after table line $n ($line)"
			changed=1
		fi
	done <"$1"
	[ "$n" -eq "$2" ] || fail "read $n of $2 table lines"
	canon_check "after the table lines"
}

# run_messages <file> <count>: the messages of <file> on the active volume
# (canonical table): a refused one leaves the table as it was; then idle,
# healthy, the same md5, and the table reloads. Counts in mb_ref, mb_acc.
run_messages() {
	local line n=0 before after h words tbl
	echo "$canon" | dmsetup create rsf || fail "the canonical table for the messages"
	mb_ref=0 mb_acc=0
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
	done <"$1"
	[ "$n" -eq "$2" ] || fail "read $n of $2 messages"
	$TMO dmsetup message rsf 0 idle || fail "idle after the messages"
	h=$(t_status_field rsf 2)
	[ "$h" = AAAA ] || fail "health $h after the messages"
	[ "$(vol_md5)" = "$MD5" ] || fail "the volume changed under the messages"
	tbl=$(dmsetup table rsf)
	{ $TMO dmsetup suspend rsf && $TMO dmsetup reload rsf --table "$tbl" && $TMO dmsetup resume rsf; } ||
		fail "the table after the messages does not reload: $tbl"
	[ "$(vol_md5)" = "$MD5" ] || fail "the volume changed across the reload"
	MSG_STATUS=$(dmsetup status rsf)
	$TMO dmsetup remove --retry rsf || fail "remove rsf after the messages"
	MSG_TABLE=$tbl
}

# The pattern: 4 MiB over every member, data and parity.
head -c 4M /dev/urandom >/tmp/fz-pat
dd if=/tmp/fz-pat of=/dev/mapper/rsf bs=1M oflag=direct conv=fsync status=none || fail "write the pattern"
MD5=$(md5sum </tmp/fz-pat | cut -c1-32)
[ "$(vol_md5)" = "$MD5" ] || fail "the pattern does not read back"
dmsetup remove --retry rsf
save_meta

# a) Tables, on the stopped volume.
"$FUZZ" tables --seed "$SEED" --count "$NT" --len "$T_LEN" --chunk 128 --nosync "${T_DEVS[@]}" \
	>/tmp/fz-tables || fail "rainssd-fuzz tables"
t0=$SECONDS
run_tables /tmp/fz-tables "$NT" 0
note "tables: $NT in $((SECONDS - t0))s, refused $ta_k by the kernel and $ta_u by dmsetup, accepted $ta_acc ($ta_back changed the state legitimately: metadata put back)"
pa_ref=$((ta_k + ta_u)) pa_acc=$ta_acc

# b) Messages, on the active volume.
"$FUZZ" messages --seed "$SEED" --count "$NM" --members 4 >/tmp/fz-messages ||
	fail "rainssd-fuzz messages"
t0=$SECONDS
run_messages /tmp/fz-messages "$NM"
note "messages: $NM in $((SECONDS - t0))s, refused $mb_ref, accepted $mb_acc; the table's options after them: $(cut -d' ' -f10- <<<"$MSG_TABLE")"
pb_ref=$mb_ref pb_acc=$mb_acc

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

# d) The RAID1 tier: a second volume on fresh channels of the same kind, with
# 4 MiB of tier on every member (42 stripes of 192 KiB). The pattern again:
# its first 2 MiB by 4 KiB writes in a random order (the first write to a
# stripe that is not a whole stripe puts it in the tier; the others of the
# stripe follow it there), the rest by 1 MiB writes (whole stripes go home,
# the ends of each write to the tier).
if dm_left; then
	dmsetup ls
	fail "a device is left before the tier volume"
fi
"$CHANNELS" destroy >/dev/null 2>&1 || true
t_channels 4 --size-mb 48
TIER=$((4 * 2048))
sz=$(blockdev --getsz "${T_DEVS[0]}")
T_LEN=$(((sz - 32768 - TIER) / 128 * 128 * 3))
canon=$(t_table 128 "$T_LEN" nosync tier_size $TIER)
echo "$canon" | dmsetup create rsf || fail "create the tier volume: $canon"
python3 - /dev/mapper/rsf /tmp/fz-pat "$SEED" <<'PY' || fail "the 4 KiB writes in a random order"
import mmap, os, random, sys
dev, pat, seed = sys.argv[1:4]
data = open(pat, "rb").read()
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
blocks = list(range(512))
random.Random(seed).shuffle(blocks)
for b in blocks:
    buf[:] = data[b * 4096:(b + 1) * 4096]
    if os.pwrite(fd, buf, b * 4096) != 4096:
        sys.exit("short write")
os.fsync(fd)
os.close(fd)
PY
dd if=/tmp/fz-pat of=/dev/mapper/rsf bs=1M skip=2 seek=2 count=2 oflag=direct conv=fsync status=none ||
	fail "write the rest of the pattern"
[ "$(vol_md5)" = "$MD5" ] || fail "the pattern does not read back from the tier volume"
tstripes=$(dmsetup status rsf | t_tail_field tier_stripes)
[ "${tstripes%/*}" -gt 0 ] || fail "no stripe of the pattern is in the tier ($tstripes)"
$TMO dmsetup remove --retry rsf || fail "remove the tier volume"
# The tier area: after the data area, as the superblocks have it (and
# rainssd-check, when it reads it; the fuzzer's own layout is compared with
# both at every corruption).
TSTART=$((32768 + (sz - 32768 - TIER) / 128 * 128)) TSECT=$TIER
tblocks="" tvec=""
if [ -x "$CHECK" ] && "$CHECK" --dump-tier --json "${T_DEVS[@]}" >/tmp/fz-dump 2>/tmp/fz-dump.err; then
	read -r cs cn tblocks tvec < <(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["tier"]
print(t["start"], t["sectors"], t["blocks"], t.get("vec_blocks", ""))' /tmp/fz-dump) ||
		fail "rainssd-check --dump-tier --json: $(head -c 300 /tmp/fz-dump)"
	[ "$cs $cn" = "$TSTART $TSECT" ] || fail "rainssd-check has the tier at $cs ($cn sectors), not $TSTART ($TSECT)"
else
	note "no layout from rainssd-check ($CHECK: $(head -c 200 /tmp/fz-dump.err 2>/dev/null))"
fi
note "tier volume: $T_LEN sectors, tier $tstripes stripes after the pattern, at member sector $TSTART ($TSECT sectors, ${tblocks:-?} table blocks a copy)"
save_meta
pt_seed=$SEED:tier

# d1) Table lines with tier_size and the tier's options: a refusal leaves the
# members' first 4 MiB (superblocks, bitmap) and their tier areas as they were.
"$FUZZ" tables --seed "$pt_seed" --count "$NTT" --len "$T_LEN" --chunk 128 --nosync --tier "$TIER" \
	"${T_DEVS[@]}" >/tmp/fz-tables || fail "rainssd-fuzz tables --tier"
t0=$SECONDS
run_tables /tmp/fz-tables "$NTT" 4
note "tier tables: $NTT in $((SECONDS - t0))s, refused $ta_k by the kernel and $ta_u by dmsetup, accepted $ta_acc ($ta_back put back)"
pt_ref=$((ta_k + ta_u)) pt_acc=$ta_acc

# d2) The tier's messages: flush_tier (a valid one too: it moves stripes
# home, the data stays), its tunables, tier_size.
"$FUZZ" messages --seed "$pt_seed" --count "$NTM" --members 4 --tier >/tmp/fz-messages ||
	fail "rainssd-fuzz messages --tier"
t0=$SECONDS
run_messages /tmp/fz-messages "$NTM"
note "tier messages: $NTM in $((SECONDS - t0))s, refused $mb_ref, accepted $mb_acc; options after them: $(cut -d' ' -f10- <<<"$MSG_TABLE"); tier after them: $(t_tail_field tier_stripes <<<"$MSG_STATUS") $(t_tail_field migration_action <<<"$MSG_STATUS")"
pm_ref=$mb_ref pm_acc=$mb_acc

# d3) The tier's mapping table, every iteration from the saved state: one
# copy of a block (or of a commit record block) flipped or overwritten on
# one member: activates, the same md5; that block in both copies on every
# member: refused; a forge (one member, one copy or both, checksums right):
# what the fuzzer's model of the loader expects. A refusal names the tier's
# table (ti->error "Tier mapping table is corrupt or unreadable") and leaves
# the members' first 16 MiB and tier areas as they were.
kinds=(tier tier-both forge)
td_ref=0 td_acc=0 theal="" t0=$SECONDS
for i in $(seq 1 "$NTIER"); do
	load_meta
	h32=$(printf '%s' "$SEED:t$i" | cksum | cut -d' ' -f1)
	kind=${kinds[$(((i - 1) % 3))]} j=$((h32 % 4))
	modes=(flip overwrite)
	mode=${modes[$(((h32 / 4) % 2))]}
	: >/tmp/fz-corrupt
	case $kind in
	tier)
		"$FUZZ" corrupt --seed "$SEED:t$i" --dev "${T_DEVS[j]}" --area tier --mode "$mode" \
			>/tmp/fz-corrupt || fail "rainssd-fuzz corrupt --area tier ${T_DEVS[j]}"
		expect=activates what="iteration $i: tier $mode, member $j" ;;
	tier-both)
		for d in "${T_DEVS[@]}"; do
			"$FUZZ" corrupt --seed "$SEED:t$i" --dev "$d" --area tier-both --mode "$mode" \
				>>/tmp/fz-corrupt || fail "rainssd-fuzz corrupt --area tier-both $d"
		done
		expect=refused what="iteration $i: tier-both $mode, every member" ;;
	forge)
		area=tier
		if [ $(((h32 / 4) % 3)) = 0 ]; then area=tier-both; fi
		"$FUZZ" corrupt --seed "$SEED:t$i" --dev "${T_DEVS[j]}" --area $area --mode forge \
			>/tmp/fz-corrupt || fail "rainssd-fuzz corrupt --area $area --mode forge ${T_DEVS[j]}"
		expect=$(tail -1 /tmp/fz-corrupt | sed -nE 's/.*: expect: (refused|activates) .*/\1/p')
		[ -n "$expect" ] || { cat /tmp/fz-corrupt; fail "no expectation from the forge"; }
		what="iteration $i: $area forge, member $j" ;;
	esac
	# The fuzzer's layout is the superblocks' and rainssd-check's.
	lay=$(grep -m1 -oE 'tier at sector [0-9]+, [0-9]+ sectors: [0-9]+ table blocks a copy, [0-9]+ commit' /tmp/fz-corrupt) ||
		{ cat /tmp/fz-corrupt; fail "$what: no layout line from the fuzzer"; }
	read -r _ _ _ ls lsec _ lb _ _ _ _ lv _ <<<"${lay//,/}"
	[ "$ls $lsec" = "$TSTART $TSECT" ] || fail "$what: the fuzzer has the tier at $ls ($lsec sectors), not $TSTART ($TSECT)"
	[ -z "$tblocks" ] || [ "$lb" = "$tblocks" ] || fail "$what: the fuzzer has $lb table blocks, rainssd-check $tblocks"
	[ -z "$tvec" ] || [ "$lv" = "$tvec" ] || fail "$what: the fuzzer has $lv commit record blocks, rainssd-check $tvec"
	chg=$(grep -v ': tier at sector\|: expect: ' /tmp/fz-corrupt | sed 's/^[^ ]* //' || true)
	chg=${chg//$'\n'/;}
	what="$what ($(grep -c ' tier\(-both\)\?: \(flip\|overwrite\|forge\) ' /tmp/fz-corrupt || true) change(s): ${chg:0:400}; $(tail -1 /tmp/fz-corrupt | sed 's/^[^ ]* //'))"
	# the members' bytes before: compared only after a refusal that was
	# expected (any other refusal fails first); 80 MiB read and hashed
	hb=""
	if [ "$expect" = refused ]; then hb=$(mhash 16); fi
	klog_sync
	if out=$(echo "$canon" | dmsetup create rsf 2>&1); then
		td_acc=$((td_acc + 1))
		h=$(t_status_field rsf 2)
		m=$(vol_md5)
		ts=$(dmsetup status rsf | t_tail_field tier_stripes)
		dmsetup remove --retry rsf || fail "remove rsf, $what"
		theal="$theal $h"
		[ "$m" = "$MD5" ] || { cat /tmp/fz-corrupt; fail "the volume reads back md5 $m (health $h, tier $ts), $what"; }
		[ "$expect" = activates ] || { cat /tmp/fz-corrupt; fail "a table the loader must refuse was taken (health $h, tier $ts), $what"; }
	else
		td_ref=$((td_ref + 1))
		refused_clearly "$canon ($what)" "$out"
		if [ "$expect" != refused ]; then
			cat /tmp/fz-corrupt
			echo "$KLOG" | grep -i 'rainssd\|device-mapper' | tail -5
			fail "refused a table the loader must take: $what"
		fi
		[[ $KLOG == *"Tier mapping table"* || $out == *"Tier mapping table"* ]] || {
			echo "$KLOG" | tail -5
			fail "refused without the tier table's error, $what"
		}
		[ "$(mhash 16)" = "$hb" ] || fail "a refused activation changed the members' bytes, $what"
	fi
done
load_meta
canon_check "after the tier's table corruptions"
note "tier table: $NTIER in $((SECONDS - t0))s, refused $td_ref, accepted $td_acc (health:${theal:- none})"
note "fuzz summary seed $SEED: tables $NT (refused $pa_ref, accepted $pa_acc)," \
	"messages $NM (refused $pb_ref, accepted $pb_acc), metadata $NMETA (refused $mc_ref, accepted $mc_acc);" \
	"tier: tables $NTT (refused $pt_ref, accepted $pt_acc), messages $NTM (refused $pm_ref, accepted $pm_acc)," \
	"table corruptions $NTIER (refused $td_ref, accepted $td_acc)"
rm -f /tmp/fz-meta[0-3] /tmp/fz-tier[0-3] /tmp/fz-pat /tmp/fz-tables /tmp/fz-messages /tmp/fz-corrupt \
	/tmp/fz-dump /tmp/fz-dump.err
