#!/bin/bash
# Hostile tier and option input (a review of 1.11.22): each refused with its
# own clear error, never taken silently, never a splat.
#  a. A tier on a volume of 2^29 stripes or more (three dm-zero members of
#     2 TiB, 4 KiB chunks): refused as too many stripes for a tier. Up to
#     1.11.22 the tier's stripe map went to kvcalloc() past INT_MAX bytes:
#     a WARNING, then "Cannot allocate the tier's state".
#  b. tier_size below one chunk for a new volume: refused. Up to 1.11.22
#     rounded down to no tier, while the status printed the tier_size
#     given; so an existing volume without a tier still takes it (the table
#     line 1.11.22 printed reloads).
#  c. region_size 131072 (the default) given on a volume made with other
#     regions: refused as any other mismatch. Up to 1.11.22 taken.
#  d. A checksummed superblock whose tier has 2^32 sectors or more, which
#     no tier_size can give: the copy is corrupt. Up to 1.11.22 it was
#     taken, and the status printed tier_size cut to 32 bits; here, with
#     members too small for such a tier, it was refused as "Member devices
#     are smaller than the volume".
#  e. The tier's options by message on a volume with no tier: refused, as
#     flush_tier is (the table line still takes them: the status prints
#     them back). Up to 1.11.22 taken. On a volume with a tier, a message
#     that would put tier_low_pct above tier_high_pct is refused.
#  f. flush_tier with the tier's table in metadata_mode fail (case 61's
#     way there): refused, saying so.
. "$REPO/tests/lib.sh"
t_knobs hold_tier_commits

# klog_mark / klog_since_mark: the kernel log since the mark (a marker
# line: with the ring full, line counts do not move).
KN=0
klog_mark() {
	KN=$((KN + 1))
	KMARK="rainssd-case64 mark $KN"
	echo "$KMARK" >/dev/kmsg
}
klog_since_mark() { dmesg | awk -v m="$KMARK" 'f; index($0, m) { f = 1 }'; }
# refused <what> <message> <table>: the table is refused, and the kernel
# log says <message> (and no splat) since it was given.
refused() {
	local what=$1 want=$2 table=$3 log
	klog_mark
	if echo "$table" | dmsetup create rs_bad 2>/dev/null; then
		dmsetup table rs_bad | sed 's/^/    # /'
		dmsetup remove --retry rs_bad
		fail "$what: accepted"
	fi
	log=$(klog_since_mark)
	if grep -qE 'WARNING:|BUG:|Call Trace' <<<"$log"; then
		grep -E 'WARNING:|rainssd|device-mapper' <<<"$log" | head -5 | sed 's/^/    # /'
		fail "$what: a splat in the kernel log"
	fi
	if ! grep -qF "$want" <<<"$log"; then
		grep -E 'rainssd|device-mapper' <<<"$log" | tail -3 | sed 's/^/    # /'
		fail "$what: refused, but not with '$want'"
	fi
	note "$what: refused: $want"
}

# a. 2^32 + 2^21 sectors a member, 4 KiB chunks, a tier of 512 MiB (large
# enough to hold its table): (2^32 + 2^21 - 32768 - 2^20) / 8 stripes,
# 2^29 + 126976. The members read as zeros: a new volume, and the
# constructor writes nothing.
Z=$(((1 << 32) + (1 << 21))) TZ=$((1 << 20))
for i in 0 1 2; do
	dmsetup create rsz$i --table "0 $Z zero" || fail "dm-zero member $i"
done
stripes=$(((Z - 32768 - TZ) / 8))
[ $stripes -ge $((1 << 29)) ] || fail "the members give $stripes stripes, not 2^29 or more"
refused "a tier on $stripes stripes" "Too many stripes for a tier" \
	"0 $((stripes * 16)) rainssd 8 3 /dev/mapper/rsz0 /dev/mapper/rsz1 /dev/mapper/rsz2 2 tier_size $TZ"
for i in 0 1 2; do dmsetup remove --retry rsz$i; done

t_channels 4 --size-mb 64
d=("${T_DEVS[@]}")
sz=$(blockdev --getsz "${d[0]}")

# b. Less than one chunk of 64 KiB.
len=$(t_usable 128)
refused "tier_size 64, chunk 128" "tier_size too small to hold its table" \
	"0 $len rainssd 128 4 ${d[*]} 2 tier_size 64"
refused "tier_size 127, chunk 128" "tier_size too small to hold its table" \
	"0 $len rainssd 128 4 ${d[*]} 3 nosync tier_size 127"
t_table 128 "$len" nosync | dmsetup create rsb || fail "create rsb"
dmsetup remove --retry rsb || fail "remove rsb"
t_table 128 "$len" nosync tier_size 64 | dmsetup create rsb ||
	fail "tier_size 64 on an existing volume without a tier (a table 1.11.22 printed) refused"
dmsetup remove --retry rsb || fail "remove rsb"
t_wipe_sb "${d[@]}"
note "tier_size 64 taken on an existing volume without a tier"

# c. A volume of 32 MiB regions; then the default, given.
t_wipe_sb "${d[@]}"
t_create rsr 128 region_size 65536
dmsetup remove --retry rsr || fail "remove rsr"
refused "region_size 131072 on a volume of region_size 65536" \
	"bitmap region differs from the table's region_size" \
	"0 $len rainssd 128 4 ${d[*]} 2 region_size 131072"
t_table 128 "$len" region_size 65536 | dmsetup create rsr || fail "its own region_size is refused"
dmsetup remove --retry rsr || fail "remove rsr"
t_wipe_sb "${d[@]}"

# d. A volume with a tier of 4 MiB; then its tier_sectors 2^32 more in both
# copies of every member's superblock, checksums made right.
TIER=8192
TLEN=$(((sz - 32768 - TIER) / 128 * 128 * 3))
t_table 128 "$TLEN" nosync tier_size $TIER | dmsetup create rst || fail "create rst"
dmsetup remove --retry rst || fail "remove rst"
for i in 0 1 2 3; do
	t_sb_save "${d[i]}" /tmp/c64.sb
	python3 - /tmp/c64.sb "$REPO/userspace-tools/rainssd-admin" <<'PY' || fail "forge the superblocks of ${d[i]}"
import importlib.machinery, importlib.util, struct, sys
# rainssd-admin's superblock checksum
loader = importlib.machinery.SourceFileLoader("rainssd_admin", sys.argv[2])
admin = importlib.util.module_from_spec(importlib.util.spec_from_loader("rainssd_admin", loader))
loader.exec_module(admin)
buf = bytearray(open(sys.argv[1], "rb").read())
n = 0
for o in (0, 4096):
    blk = buf[o:o + 4096]
    if struct.unpack_from("<Q", blk, 0)[0] != 0x3142535344534e52:
        continue
    ts = struct.unpack_from("<Q", blk, 112)[0]
    if not ts:
        sys.exit("copy at %d has no tier" % o)
    struct.pack_into("<Q", blk, 112, ts + (1 << 32))
    struct.pack_into("<I", blk, 12, admin.sb_checksum(bytes(blk)))
    buf[o:o + 4096] = blk
    n += 1
if not n:
    sys.exit("no superblock copy")
open(sys.argv[1], "wb").write(buf)
PY
	t_sb_put "${d[i]}" /tmp/c64.sb
done
refused "a superblock tier of 2^32 + $TIER sectors" "Member superblock is corrupt (both copies)" \
	"0 $TLEN rainssd 128 4 ${d[*]}"
grep -qF "impossible tier fields" <<<"$(klog_since_mark)" ||
	fail "the log does not say the tier fields are impossible"
t_wipe_sb "${d[@]}"

# e. The tier's options by message on a volume with none.
t_create rsn 128
before=$(dmsetup table rsn)
for m in "migration_threshold 5" "home_threshold 2" "tier_high_pct 80" "tier_low_pct 10" \
	"migration_rate 1000"; do
	# shellcheck disable=SC2086
	if dmsetup message rsn 0 $m 2>/dev/null; then
		fail "message '$m' taken on a volume with no tier"
	fi
done
[ "$(dmsetup table rsn)" = "$before" ] || fail "the table changed: $(dmsetup table rsn)"
note "the tier's options by message refused on a volume with no tier"
dmsetup remove --retry rsn || fail "remove rsn"
# ... and taken by the table line, which the status prints back and reloads.
t_table 128 "$len" nosync migration_threshold 5 tier_low_pct 10 | dmsetup create rsn ||
	fail "the tier's options in the table of a volume with no tier are refused"
tab=$(dmsetup table rsn)
[[ $tab == *"migration_threshold 5"* && $tab == *"tier_low_pct 10"* ]] ||
	fail "the status does not print the table's tier options: $tab"
dmsetup remove --retry rsn || fail "remove rsn"
echo "$tab" | dmsetup create rsn || fail "the printed table does not reload: $tab"
dmsetup remove --retry rsn || fail "remove rsn"
t_wipe_sb "${d[@]}"

# ... and on a volume with a tier: the pair's order kept by message.
CHUNK=16
TIER=$((8 * 2048))
V=rstf
LEN=$(((sz - 32768 - TIER) / CHUNK * CHUNK * 3))
t_table $CHUNK "$LEN" nosync tier_size $TIER | dmsetup create $V || fail "create $V"
dmsetup message $V 0 tier_low_pct 95 2>/dev/null && fail "tier_low_pct 95 above tier_high_pct 90 taken"
dmsetup message $V 0 tier_high_pct 50 2>/dev/null && fail "tier_high_pct 50 below tier_low_pct 70 taken"
dmsetup message $V 0 tier_high_pct 80 || fail "tier_high_pct 80 refused"
dmsetup message $V 0 tier_low_pct 80 || fail "tier_low_pct 80 refused"
[[ $(dmsetup table $V) == *"tier_high_pct 80 tier_low_pct 80"* ]] ||
	fail "the watermarks are not 80 and 80: $(dmsetup table $V)"

# f. metadata_mode fail as case 61 makes it: a write held in the tier's
# uncommitted table, members 0 and 1 failed, a flush waiting; the commit
# then reaches no member.
echo 1 >$T_DBG/hold_tier_commits
head -c 4096 /dev/urandom | dd of=/dev/mapper/$V bs=4k seek=600 oflag=direct status=none ||
	fail "the 4 KiB write"
dmsetup message $V 0 fail 0 || fail "fail 0"
dmsetup message $V 0 fail 1 || fail "fail 1"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' /dev/mapper/$V \
	>/dev/null 2>&1 &
f=$!
sleep 1
echo 0 >$T_DBG/hold_tier_commits
wait $f && fail "the flush succeeded with the tier's table not committed"
[ "$(t_opstat $V metadata_mode)" = fail ] || fail "metadata_mode $(t_opstat $V metadata_mode), not fail"
klog_mark
dmsetup message $V 0 flush_tier 2>/dev/null && fail "flush_tier taken in metadata_mode fail"
log=$(klog_since_mark)
grep -qF "flush_tier: the tier's table cannot be committed (metadata_mode fail)" <<<"$log" || {
	grep -F flush_tier <<<"$log" | sed 's/^/    # /'
	fail "flush_tier refused without saying metadata_mode fail"
}
note "flush_tier refused in metadata_mode fail"
dmsetup message $V 0 flush_tier idle || fail "flush_tier idle refused"
dmsetup remove --retry $V || fail "remove $V"
exit 0
