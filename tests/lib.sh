#!/bin/bash
# Helpers for the integration cases; they run inside the test VM as root.
# A case is a bash script that sources this file, sets up what it needs with
# these helpers and exits non-zero on failure; the runner tears down after it.
set -euo pipefail

REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CHECK=${RAINSSD_CHECK:-$REPO/userspace-tools/rainssd-check}
CHANNELS=$REPO/scripts/channels.sh
T_DEVS=()
T_CHUNK=0
T_LEN=0

# make test runs the cases at their quick sizes; make test-full (TEST_FULL=1)
# at their full ones, and the cases marked `# make test-full only` too.
T_FULL=${TEST_FULL:-0}
# t_size <quick> <full>: the value for this run.
t_size() { if [ "$T_FULL" = 1 ]; then echo "$2"; else echo "$1"; fi; }

note() { echo "    # $*"; }
fail() { echo "    # FAIL: $*"; exit 1; }

# t_channels <N> [channels.sh options]: make N channels, fill T_DEVS.
t_channels() {
	mapfile -t T_DEVS < <("$CHANNELS" create "$@")
	[ ${#T_DEVS[@]} -gt 0 ] || fail "no channels created"
}

# t_linear_members <prefix> <N>: N zeroed channels (64 MiB, 300 us, QD 8),
# each behind a dm-linear member /dev/mapper/<prefix><i> (any old ones of
# that name removed first), in T_DEVS; SZ their size in sectors. The power
# cut cases freeze and reload these.
t_linear_members() {
	local p=$1 n=$2 i
	for i in $(seq 0 $((n - 1))); do dmsetup remove --retry "$p$i" >/dev/null 2>&1 || true; done
	"$CHANNELS" destroy >/dev/null 2>&1 || true
	t_channels "$n" --size-mb 64 --lat-us 300 --qd 8
	SZ=$(blockdev --getsz /dev/rsch0)
	T_DEVS=()
	for i in $(seq 0 $((n - 1))); do
		echo "0 $SZ linear /dev/rsch$i 0" | dmsetup create "$p$i" || fail "dm-linear member $i"
		T_DEVS+=("/dev/mapper/$p$i")
	done
}

# t_delay_writes <prefix> <i> <ms>: member <i> of t_linear_members <prefix>
# gets its data area (from RS_DATA_OFFSET, past its superblocks, bitmap and
# log) behind dm-delay: writes held <ms>, reads and flushes passed at once.
t_delay_writes() {
	local p=$1 i=$2 ms=$3
	dmsetup suspend "$p$i" &&
		printf '0 32768 linear /dev/rsch%d 0\n32768 %d delay /dev/rsch%d 32768 0 /dev/rsch%d 32768 %d /dev/rsch%d 32768 0\n' \
			"$i" $((SZ - 32768)) "$i" "$i" "$ms" "$i" | dmsetup load "$p$i" &&
		dmsetup --noudevsync resume "$p$i" || fail "member $i's data area behind dm-delay"
}
# t_cut_members <prefix> <n>: a power cut of the members t_linear_members
# made: every one frozen with what it holds queued, then given the error
# table (the queued writes fail and are lost, as on a cut).
t_cut_members() {
	local p=$1 n=$2 i
	for i in $(seq 0 $((n - 1))); do dmsetup suspend --noflush "$p$i" || fail "suspend $p$i"; done
	for i in $(seq 0 $((n - 1))); do
		dmsetup load "$p$i" --table "0 $SZ error" && dmsetup --noudevsync resume "$p$i" ||
			fail "error table on $p$i"
	done
}
# t_uncut_members <prefix> <n>: after a cut (the volume removed), the
# members' linear tables back: the power is back.
t_uncut_members() {
	local p=$1 n=$2 i
	for i in $(seq 0 $((n - 1))); do
		dmsetup load "$p$i" --table "0 $SZ linear /dev/rsch$i 0" &&
			dmsetup --noudevsync resume "$p$i" || fail "linear table back on $p$i"
	done
}

# The largest volume length for chunk $1 over T_DEVS.
t_usable() {
	local chunk=$1 n=${#T_DEVS[@]} sz
	sz=$(blockdev --getsz "${T_DEVS[0]}")
	echo $(( (sz - 32768) / chunk * chunk * (n - 1) ))
}

# t_table <chunk> [len] [opt args...]: the table line for T_DEVS.
t_table() {
	local chunk=$1 len=${2:-}
	shift; [ $# -gt 0 ] && shift
	[ -n "$len" ] || len=$(t_usable "$chunk")
	local opt=""
	[ $# -gt 0 ] && opt=" $# $*"
	echo "0 $len rainssd $chunk ${#T_DEVS[@]} ${T_DEVS[*]}$opt"
}

# t_create <name> <chunk> [opt args...]: a new volume over all of T_DEVS.
# The channels are zeroed, so their parity is already right: nosync (as
# dm-raid users do), unless T_SYNC=1 asks for the initial resync.
t_create() {
	local name=$1 chunk=$2
	shift 2
	T_CHUNK=$chunk
	T_LEN=$(t_usable "$chunk")
	[ "${T_SYNC:-0}" = 1 ] || set -- "$@" nosync
	t_table "$chunk" "$T_LEN" "$@" | dmsetup create "$name" || fail "dmsetup create $name"
	udevadm settle 2>/dev/null || true
}

# t_wipe_sb <dev...>: clear rainssd superblocks (a fresh member again).
t_wipe_sb() {
	local d
	for d in "$@"; do
		dd if=/dev/zero of="$d" bs=4k seek=256 count=2 oflag=direct status=none ||
			fail "wipe the superblocks of $d"
	done
}

# t_poke <dev> <byte offset> <printf format>: overwrite bytes on a raw
# member, read-modify-write of the 4 KiB blocks that hold them, all with
# O_DIRECT. A buffered dd of a few bytes leaves the page cache dirty (the
# kernel then reads the old bytes until writeback: case 19 saw a "corrupt"
# superblock accepted) and writes back a whole cached page that may be
# older than what the target wrote since.
t_poke() {
	local dev=$1 off=$2 fmt=$3 n first cnt
	n=$(printf "$fmt" | wc -c)
	first=$((off / 4096))
	cnt=$(((off + n + 4095) / 4096 - first))
	dd if="$dev" of=/tmp/poke.blk bs=4096 skip=$first count=$cnt iflag=direct status=none &&
		printf "$fmt" | dd of=/tmp/poke.blk bs=1 seek=$((off - first * 4096)) conv=notrunc \
			status=none &&
		dd if=/tmp/poke.blk of="$dev" bs=4096 seek=$first count=$cnt oflag=direct conv=notrunc \
			status=none || fail "poke $n bytes at $off of $dev"
}

# t_status_field <name> <index>: one field of the status line after the
# target name ("0 <len> rainssd <fields...>": index 0 is the version).
t_status_field() {
	dmsetup status "$1" | awk -v i="$2" '{print $(4 + i)}'
}

# The status fields after the member words, in order (docs/rainssd.rst):
# 1.3.0's stripe cache and operation counters, 1.4.0's sync fields, 1.5.0's
# mismatch_cnt, 1.7.0's 9 tier fields and 1.11.0's joined_writes.
T_TAIL_FIELDS=(stripe_cache_used stripe_cache stripe_cache_peak ops replans deferred reserve
	emergency sync_ratio sync_action read_errors repaired mismatch_cnt tier_stripes tier_to_r1
	tier_to_r5 tier_offline tier_writes tier_reads migration_action metadata_mode needs_check
	joined_writes)

# t_tail_field <field>: that field of the status line on stdin (counted from its end).
t_tail_field() {
	local i=0 f
	for f in "${T_TAIL_FIELDS[@]}"; do
		[ "$f" = "$1" ] && break
		i=$((i + 1))
	done
	[ $i -lt ${#T_TAIL_FIELDS[@]} ] || fail "t_tail_field: no field $1"
	awk -v k=$((${#T_TAIL_FIELDS[@]} - 1 - i)) '{print $(NF - k)}'
}

# t_opstat <name> <field>: one of the fields after the member words of
# volume <name>'s status (T_TAIL_FIELDS).
t_opstat() {
	dmsetup status "$1" | t_tail_field "$2"
}

# t_idle <name> <seconds>: wait until no resync, rebuild or scrub runs
# (sync_action idle), polled every 0.2 s; false if one still does after
# (at least) that long.
t_idle() {
	local t
	for t in $(seq $(($2 * 5))); do
		[ "$(t_opstat "$1" sync_action)" = idle ] && return 0
		sleep 0.2
	done
	return 1
}

# The target's debugfs knobs (rainssd-fault.h; a test kernel).
T_DBG=/sys/kernel/debug/rainssd
# t_knobs <knob...>: the case needs these knobs; each is set to 0 now and
# again when the case exits (t_knobs_off does it at any point).
t_knobs() {
	local k
	T_KNOBS=("$@")
	for k in "$@"; do
		[ -w "$T_DBG/$k" ] || fail "no $T_DBG/$k (a test kernel with debugfs)"
	done
	t_knobs_off
	trap 't_knobs_off 2>/dev/null' EXIT
}
t_knobs_off() {
	local k
	for k in "${T_KNOBS[@]}"; do echo 0 >"$T_DBG/$k"; done
}

# t_sync_stripe <name> <chunk>: the stripe volume <name>'s rebuild or resync
# is at in memory (sync_ratio over the chunk size).
t_sync_stripe() {
	echo $(( $(t_opstat "$1" sync_ratio | cut -d/ -f1) / $2 ))
}

# t_wait_sync_past <name> <chunk> <stripe>: until that is past <stripe>
# (polled every 0.2 s; the case fails after 120 s).
t_wait_sync_past() {
	local t c
	for t in $(seq 600); do
		c=$(t_sync_stripe "$1" "$2")
		[ "$c" -gt "$3" ] && return 0
		sleep 0.2
	done
	fail "the rebuild did not pass stripe $3 ($c)"
}

# t_member_reads <name> <i>: reads in flight on member i of volume <name>
# (the first field of its member word in the status)
t_member_reads() {
	dmsetup status "$1" | tr ' ' '\n' | awk -F: 'NF == 12' | sed -n "$(($2 + 1))p" | cut -d: -f1
}
# t_hold_reads <name> <dev> <i> <what>: the dm device <dev> under member i
# of volume <name> suspended, until the volume has a read of it held
# (polled every 0.1 s; <what> fails after 30 s)
t_hold_reads() {
	local t
	dmsetup suspend "$2" || fail "$4: suspend member $3"
	for t in $(seq 300); do
		[ "$(t_member_reads "$1" "$3")" -gt 0 ] && return 0
		sleep 0.1
	done
	fail "$4: no read of member $3 held within 30 s"
}

# Single 4 KiB blocks of stripes of 3 data chunks of 8 KiB (6 blocks a
# stripe; cases 34 and 53): the block at the start of data chunk <k> of
# stripe <s>.
# t_new_block <file> <s> <k>: new random bytes there in a pattern file
t_new_block() {
	head -c 4096 /dev/urandom |
		dd of="$1" bs=4096 seek=$(($2 * 6 + $3 * 2)) conv=notrunc status=none
}
# t_put_block <file> <s> <k> <dev>: that block of the file to <dev> (O_DIRECT)
t_put_block() {
	dd if="$1" of="$4" bs=4096 skip=$(($2 * 6 + $3 * 2)) seek=$(($2 * 6 + $3 * 2)) \
		count=1 oflag=direct status=none
}

# The superblock's two copies on a member (rainssd-sb.h): 4 KiB each from
# sector 2048; the generation (events) at byte 32 of each, the member
# table at byte 136, 16 bytes a member, its state first.
# t_sb_save <dev> <file> / t_sb_put <dev> <file>: both copies.
t_sb_save() {
	dd if="$1" of="$2" bs=4096 skip=256 count=2 iflag=direct status=none ||
		fail "the superblocks of $1 cannot be read"
}
t_sb_put() {
	dd if="$2" of="$1" bs=4096 seek=256 count=2 oflag=direct conv=notrunc status=none ||
		fail "the superblocks of $1 cannot be written"
}
# t_counter_writes <dev> <offset> <size> <count>: <count> O_DIRECT writes
# of <size> bytes at <offset>, one after another, the i-th starting with
# (offset + i, size) as two le64 (the rest zeros).
t_counter_writes() {
	python3 - "$@" <<'PY'
import mmap, os, sys
dev, off, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, size)
for i in range(count):
    buf[0:16] = (off + i).to_bytes(8, "little") + size.to_bytes(8, "little")
    if os.pwrite(fd, buf, off) != size:
        sys.exit("short write")
os.close(fd)
PY
}

# t_log_hdr <dev> <b>: the first 40 bytes of block <b> of the member's
# degraded-write log ring (at 4 MiB), in hex; t_le <hex> <offset> <n>: the
# little-endian number of <n> bytes at byte <offset> of such a string.
t_log_hdr() {
	dd if="$1" bs=4096 skip=$((1024 + $2)) count=1 iflag=direct status=none |
		od -An -tx1 -N40 | tr -d ' \n'
}
t_le() {
	local h=$1 o=$2 n=$3 r="" i
	for ((i = n - 1; i >= 0; i--)); do r+=${h:$(((o + i) * 2)):2}; done
	echo $((16#$r))
}
T_LOG_MAGIC=525353444c4f4752

# t_sb_newest <dev>: saves its two superblock copies in /tmp/lib.sb and
# prints the byte offset there of the newer one (0 or 4096).
t_sb_newest() {
	local a b
	t_sb_save "$1" /tmp/lib.sb
	a=$(od -An -t u8 -j 32 -N 8 /tmp/lib.sb | tr -d ' ')
	b=$(od -An -t u8 -j 4128 -N 8 /tmp/lib.sb | tr -d ' ')
	[ "$a" -ge "$b" ] && echo 0 || echo 4096
}
# t_sb_events <dev>: the generation of its newest copy.
t_sb_events() {
	local o
	o=$(t_sb_newest "$1")
	od -An -t u8 -j $((o + 32)) -N 8 /tmp/lib.sb | tr -d ' '
}
# t_sb_state <dev> <of>: what its newest copy says of member <of>.
t_sb_state() {
	local o st
	o=$(t_sb_newest "$1")
	st=$(od -An -t u1 -j $((o + 136 + 16 * $2)) -N 1 /tmp/lib.sb | tr -d ' ')
	case $st in 1) echo in_sync ;; 2) echo failed ;; 3) echo rebuilding ;; *) echo "state $st" ;; esac
}
# t_sb_cp <dev> <of>: the rebuild checkpoint (stripes) its newest copy gives
# member <of>.
t_sb_cp() {
	local o
	o=$(t_sb_newest "$1")
	od -An -t u8 -j $((o + 136 + 16 * $2 + 8)) -N 8 /tmp/lib.sb | tr -d ' '
}

# t_parity: run the parity checker over T_DEVS; fails the case on bad
# stripes, and unless it checked every stripe of the volume (T_LEN sectors).
t_parity() {
	local out want
	want="checked $((T_LEN / (T_CHUNK * (${#T_DEVS[@]} - 1)))) stripes, 0 bad"
	out=$("$CHECK" --length "$T_LEN" "$T_CHUNK" "${T_DEVS[@]}" | tail -1) || fail "parity check failed: $out"
	[ "$out" = "$want" ] || fail "parity check: '$out', want '$want'"
	echo "$out"
}

# Every fio job of the cases: a write that overlaps one still in flight waits
# for it. Two overlapping writes in flight together may complete in either
# order on any block device (rainssd's joining reorders them: case 27's
# 12 KiB job failed its verify in 1 run of 25 without this); fio's verify
# expects the one it issued last, and its random map, which would keep them
# apart, is off whenever blockalign or bsrange is given.
T_FIO_ORDER=(--serialize_overlap=1)

# t_fio <name> <dev> [fio args...]: run fio, fail the case if it fails.
t_fio() {
	local name=$1 dev=$2
	shift 2
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" \
		--output-format=terse --terse-version=3 "$@" >/tmp/fio-$name.out 2>&1 ||
		{ tail -20 /tmp/fio-$name.out; fail "fio $name"; }
}

# t_fio_verify <name> <dev> [fio args...]: write then verify with crc32c.
t_fio_verify() {
	local name=$1 dev=$2
	shift 2
	t_fio "$name" "$dev" --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--verify_dump=0 "$@"
	note "fio $name verified"
}

# Remove what a case left behind: dm devices, md arrays, channels.
t_teardown() {
	local d pass
	# Stacked devices go in several passes: the top ones first free the others.
	for pass in 1 2 3; do
		for d in $(dmsetup ls 2>/dev/null | awk '$1 != "No" {print $1}'); do
			dmsetup remove --retry "$d" >/dev/null 2>&1 ||
				{ [ $pass = 3 ] && dmsetup remove -f "$d" >/dev/null 2>&1; } || true
		done
	done
	for d in /dev/md[0-9]*; do
		[ -b "$d" ] && mdadm --stop "$d" >/dev/null 2>&1 || true
	done
	"$CHANNELS" destroy >/dev/null 2>&1 || true
	"$CHANNELS" destroy --prefix rsx >/dev/null 2>&1 || true
}
