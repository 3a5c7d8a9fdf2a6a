#!/bin/bash
# Two ways the tier's mapping table got out of step with the superblocks
# (found by a helper's review of 1.11.8).
#
# Part 1, the first resume of a tier volume with a member out: the tier's
# table load commits the superblocks first when a member is failed. Up to
# 1.11.8 that commit counted as the activation's own, which then did not
# run: the superblocks stayed marked clean, with the old log nonce, while
# the volume was in use, so that the next power cut was taken for a clean
# shutdown (no log replay, no resync). A tier volume with member 3 failed,
# removed (clean) and created again: the newest superblock on member 0 must
# say "in use", with a new nonce; the same on a volume without the tier.
#
# Part 2, a rebuild's checkpoint ahead of the tier's table: member 1 zeroed
# and rebuilt (64 KiB/s) under a volume whose stripes T0..T0+31 are in the
# tier (three 4 KiB writes each), so that their copies on member 1 are
# blank until the rebuild passes them. The tier's background commits held
# (debugfs hold_tier_commits); before the rebuild gets there, aligned
# full-stripe writes take every one of those stripes home (their records
# gone in memory, not yet on disk); the rebuild's front let pass them (or
# stop) and its checkpoint committed; the cut. Created again and rebuilt:
# every 4 KiB block must read back as written before those writes or by
# them, directly and with member 0 failed. Up to 1.11.8 the rebuild passed
# the stripes without their copies (no record in memory) and committed its
# checkpoint past them: after the cut the table on disk still had the
# records, and their copies on member 1 (zeros; the copies of a chunk go to
# members 0 and 1 or 2 and 3) were taken as good: read where member 1 was
# the less busy copy, and the only one once member 0 failed. Now the
# rebuild's stretch waits for the tier's commit of the stripes that left.
#
# Part 3, the same without the cut: the tier's commits let go, the rebuild
# must go on past the stripes and end, and the volume read back as written,
# also with member 0 failed (the stretch that waits for the tier is woken).
#
# Environment: PARTS (default 123), T0 (default 96, make test-full 256),
# RATE (KiB/s, default 64), END_RATE (KiB/s: part 3's rebuild once past the
# stripes; make test 200000, make test-full RATE).
. "$REPO/tests/lib.sh"
HOLD_TIER=/sys/kernel/debug/rainssd/hold_tier_commits
[ -w $HOLD_TIER ] || fail "no $HOLD_TIER (dm-rainssd 1.11.9 with debugfs)"
trap 'echo 0 >$HOLD_TIER 2>/dev/null' EXIT
want() { case "${PARTS:-123}" in *$1*) return 0 ;; esac; return 1; }
CHUNK=16
N=4
TIER=4096
VOL=rsta

# sb_field <dev> <clean|nonce|cp1>...: those fields of the newest superblock
# copy on the device, read once now with O_DIRECT, on one line (dm-rainssd/
# rainssd-sb.h: events at 32, flags at 76, log_nonce at 96, the member table
# at 136, 16 bytes a member; rainssd-admin examine reads format 1 only, a
# volume without the tier). One python per read: it takes seconds to start
# under TCG.
sb_field() {
	python3 - "$@" <<'PY'
import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 8192)
os.preadv(fd, [buf], 2048 * 512)
copies = [bytes(buf[o:o + 4096]) for o in (0, 4096)]
sb = max((c for c in copies if c[:8] == b"RNSDSSB1"), key=lambda c: struct.unpack_from("<Q", c, 32)[0])
f = {"clean": bool(struct.unpack_from("<I", sb, 76)[0] & 1),
     "nonce": struct.unpack_from("<Q", sb, 96)[0],
     "cp1": struct.unpack_from("<Q", sb, 136 + 16 + 8)[0]}
print(" ".join(str(f[k]) for k in sys.argv[2:]))
PY
}

# ---- 1. the activation's commit with a member failed ----
if want 1; then
t_channels $N --size-mb 64 --lat-us 100
for tier in "" "tier_size $TIER"; do
	what=${tier:+"with the tier"}
	what=${what:-"without the tier"}
	t_wipe_sb "${T_DEVS[@]}"
	len=$(( (64 * 2048 - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
	tbl="0 $len rainssd $CHUNK $N ${T_DEVS[*]} $([ -n "$tier" ] && echo 3 || echo 1) nosync $tier"
	echo "$tbl" | dmsetup create $VOL || fail "create $what"
	dd if=/dev/urandom of=/dev/mapper/$VOL bs=4k count=64 oflag=direct status=none ||
		fail "write $what"
	dmsetup message $VOL 0 fail 3 || fail "fail 3"
	[ "$(t_status_field $VOL 2)" = AAAD ] || fail "health $(t_status_field $VOL 2) after fail 3"
	dmsetup remove --retry $VOL || fail "remove"
	sb=$(sb_field "${T_DEVS[0]}" clean nonce) || fail "$what: member 0's superblock after the remove"
	read -r clean nonce <<<"$sb"
	[ "$clean" = True ] || fail "$what: not clean after the remove"
	echo "$tbl" | dmsetup create $VOL || fail "create again $what"
	sb=$(sb_field "${T_DEVS[0]}" clean nonce) || fail "$what: member 0's superblock created again"
	read -r clean nonce2 <<<"$sb"
	note "part 1, $what, member 3 failed, created again: clean $clean, nonce $nonce -> $nonce2"
	[ "$clean" = False ] ||
		fail "$what: the superblocks say clean while the volume is in use (a cut would be taken for a clean shutdown)"
	[ "$nonce2" != "$nonce" ] || fail "$what: the log nonce was not renewed by the activation"
	[ "$(t_status_field $VOL 2)" = AAAD ] || fail "health $(t_status_field $VOL 2) created again"
	dmsetup remove --retry $VOL || fail "remove $what"
done
"$CHANNELS" destroy >/dev/null 2>&1 || true
fi

# ---- parts 2 and 3: a rebuild's checkpoint and the tier's table ----
if want 2 || want 3; then
T0=${T0:-$(t_size 96 256)}
STRIPES=$((T0 + 128))
NT=32
RATE=${RATE:-64}
END_RATE=${END_RATE:-$(t_size 200000 "$RATE")}
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
SPB=$((CHUNK * (N - 1) / 8))	# 4 KiB blocks per stripe
[ $((T0 + NT)) -lt "$STRIPES" ] || fail "T0 too large"
table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
cp_now() { echo $(( $(t_opstat $VOL sync_ratio | cut -d/ -f1) / CHUNK )); }

# stall <part>: members of $STRIPES stripes behind dm-linear, stripes T0..
# in the tier, member 1 zeroed and rebuilding, the tier's commits held,
# those stripes taken home by full-stripe writes ahead of the rebuild, and
# the rebuild's front let pass them (up to 1.11.8) or stop before them (no
# progress for 6 s): c is where it is in memory
stall() {
	t_linear_members rsta $N
	SZ=$((32768 + STRIPES * CHUNK + TIER))
	for i in $(seq 0 $((N - 1))); do
		# no wait for udev (the node exists): 0.14 s a resume under TCG, not 0.4-0.5
		dmsetup suspend rsta$i && dmsetup load rsta$i --table "0 $SZ linear /dev/rsch$i 0" &&
			dmsetup --noudevsync resume rsta$i || fail "member $i cut to $SZ sectors"
	done
	# the volume as written before (old: the first 4 KiB of every chunk of
	# stripes T0.., the rest zeros) and with the full-stripe writes (new)
	head -c $BYTES /dev/zero >/tmp/ta.old
	for s in $(seq $T0 $((T0 + NT - 1))); do
		for k in 0 1 2; do echo $((s * SPB + k * CHUNK / 8)); done
	done >/tmp/ta.blocks
	python3 - <<'PY' || fail "the old image"
import os
with open("/tmp/ta.old", "r+b") as f:
    for b in open("/tmp/ta.blocks").read().split():
        f.seek(int(b) * 4096)
        f.write(os.urandom(4096))
PY
	cp /tmp/ta.old /tmp/ta.new
	head -c $((NT * SPB * 4096)) /dev/urandom |
		dd of=/tmp/ta.new bs=4096 seek=$((T0 * SPB)) conv=notrunc status=none

	table 3 nosync tier_size $TIER | dmsetup create $VOL || fail "create"
	# those blocks, one 4 KiB O_DIRECT write each: three per stripe
	python3 - /dev/mapper/$VOL <<'PY' || fail "the 4 KiB writes to stripes $T0.."
import mmap, os, sys
old = open("/tmp/ta.old", "rb").read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for b in open("/tmp/ta.blocks").read().split():
    b = int(b)
    buf[:] = old[b * 4096:(b + 1) * 4096]
    if os.pwritev(fd, [buf], b * 4096) != 4096:
        sys.exit("short write at block %d" % b)
os.close(fd)
PY
	in_tier=$(t_opstat $VOL tier_stripes | cut -d/ -f1)
	[ "$in_tier" = $NT ] || fail "$in_tier stripes in the tier, not $NT"
	dmsetup remove --retry $VOL || fail "remove"
	dd if=/dev/zero of=/dev/mapper/rsta1 bs=1M count=$((SZ * 512)) iflag=count_bytes oflag=direct \
		status=none || fail "zero member 1"
	table 9 nosync tier_size $TIER rebuild 1 min_recovery_rate $RATE max_recovery_rate $RATE |
		dmsetup create $VOL || fail "create with rebuild 1"
	echo 1 >$HOLD_TIER
	c=$(cp_now)
	[ "$c" -lt $((T0 - 40)) ] || fail "the rebuild is at stripe $c already: lower RATE"
	# every stripe of the tier home, ahead of the rebuild's front
	dd if=/tmp/ta.new of=/dev/mapper/$VOL bs=$((SPB * 4096)) skip=$T0 seek=$T0 count=$NT \
		oflag=direct status=none || fail "the full-stripe writes"
	left=$(t_opstat $VOL tier_stripes | cut -d/ -f1)
	c=$(cp_now)
	note "part $1: $NT stripes written home with the rebuild at stripe $c, $left left in the tier"
	[ "$left" = 0 ] || fail "$left stripes still in the tier after the full-stripe writes"
	[ "$c" -lt "$T0" ] || fail "the rebuild reached stripe $T0 before the writes: lower RATE"
	# the front past the stripes (up to 1.11.8) or stopped before them (the
	# tier's commits are held): no progress for 6 s. At RATE KiB/s the rebuild
	# does RATE / 8 stripes a second; twice the time it needs, and 30 s more.
	limit=$(( 2 * (T0 + NT + 16) * 8 / RATE + 30 ))
	last=-1 since=$SECONDS start=$SECONDS
	while [ $((SECONDS - start)) -lt $limit ]; do
		c=$(cp_now)
		[ "$c" -gt $((T0 + NT + 16)) ] && break
		[ "$c" != "$last" ] && { last=$c; since=$SECONDS; }
		[ $((SECONDS - since)) -ge 6 ] && break
		sleep 0.5
	done
}
# blocks <what>: every 4 KiB block of the volume is the old or the new one
blocks() {
	dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none >/tmp/ta.got ||
		fail "$1: the volume cannot be read"
	python3 - "$1" <<'PY' || fail "$1: blocks read back that were never written there"
import sys
got, old, new = (open("/tmp/ta." + n, "rb").read() for n in ("got", "old", "new"))
bad = [i for i in range(len(old) // 4096)
       if got[i * 4096:(i + 1) * 4096] not in (old[i * 4096:(i + 1) * 4096], new[i * 4096:(i + 1) * 4096])]
zero = sum(1 for i in bad if got[i * 4096:(i + 1) * 4096] == bytes(4096))
print("    # %s: %d of %d blocks neither old nor new (%d of them zeros)%s"
      % (sys.argv[1], len(bad), len(old) // 4096, zero, ", first %s" % bad[:8] if bad else ""))
sys.exit(1 if bad else 0)
PY
}
fi

# ---- 2. the cut ----
if want 2; then
stall 2
# then its checkpoint on disk (committed every 2 s), if it went on
disk_cp() { sb_field "${T_DEVS[0]}" cp1; }
if [ "$c" -gt $((T0 + NT + 16)) ]; then
	for t in $(seq 20); do
		[ "$(disk_cp)" -gt $((T0 + NT)) ] && break
		sleep 0.5
	done
fi
note "part 2: the cut with the rebuild at stripe $c in memory, $(disk_cp) on disk"
t_cut_members rsta $N
echo 0 >$HOLD_TIER
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rsta $N
mark=$(dmesg | wc -l)
table 5 nosync tier_size $TIER rebuild 1 | dmsetup create $VOL || fail "created again: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | { grep -E 'replayed|resync|rainssd: member' || true; } | sed 's/^/    # /'
blocks "created again"
t_idle $VOL 600 || fail "rebuild after the cut not over: $(t_opstat $VOL sync_ratio) $(t_opstat $VOL sync_action)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "after the rebuild: health $(t_status_field $VOL 2)"
blocks "rebuilt"
dmsetup message $VOL 0 fail 0 || fail "fail 0"
blocks "rebuilt, member 0 failed"
dmsetup remove --retry $VOL || fail "remove"
fi

# ---- 3. no cut: the rebuild goes on once the tier commits ----
if want 3; then
stall 3
echo 0 >$HOLD_TIER
start=$SECONDS
until [ "$(cp_now)" -gt $((T0 + NT)) ]; do
	[ $((SECONDS - start)) -lt $limit ] ||
		fail "part 3: the rebuild did not pass stripe $((T0 + NT)) once the tier's commits were let go ($(cp_now))"
	sleep 0.5
done
# the rest of the rebuild (96 stripes, 12 s at RATE) is only waiting: make
# test lets it run unthrottled
dmsetup message $VOL 0 max_recovery_rate "$END_RATE" || fail "max_recovery_rate $END_RATE"
t_idle $VOL 600 || fail "part 3: the rebuild did not end: $(t_opstat $VOL sync_ratio) $(t_opstat $VOL sync_action)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "part 3: after the rebuild: health $(t_status_field $VOL 2)"
cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) /tmp/ta.new ||
	fail "part 3: the volume does not read back as written"
dmsetup message $VOL 0 fail 0 || fail "fail 0"
cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) /tmp/ta.new ||
	fail "part 3: with member 0 failed the volume does not read back as written"
note "part 3: the rebuild went on past the stripes once the tier committed; the volume reads back as written, also with member 0 failed"
dmsetup remove --retry $VOL || fail "remove"
fi
