#!/bin/bash
# A volume made by 1.4.0, before the write-intent bitmap and the
# degraded-write log, activated by this module. Its superblocks are made
# what 1.4.0 wrote (rainssd-fuzz legacy: no bitmap region, no log nonce, no
# flag but clean) and its bitmap area zeroed, as on a device 1.4.0 never
# wrote there. In every part the parity of stripe S (member 3; data on
# members 0, 1, 2) is overwritten with random bytes: the torn update a cut
# can leave. Member 1's chunk of S must then never be rebuilt from it.
#
# Part 1: after an unclean shutdown of 1.4.0, every region is resynced (there
# is no bitmap to say which were written); then, member 1 failed, the volume
# reads back as written, and the parity checker finds every stripe right.
# Part 2: the first activation of a clean 1.4.0 volume keeps a bitmap from
# its first write on: 4 KiB written (and fsynced) to member 0's chunk of S,
# the cut, S's parity overwritten; the next activation resyncs its region.
# Part 3: an unclean 1.4.0 volume activated with member 1 given as "-":
# member 1's chunks read as I/O errors (nothing can resync them), never made
# up from that parity.
# Up to 1.11.6 the first activation of a 1.4.0 volume ran without a bitmap,
# and after an unclean 1.4.0 shutdown nothing was resynced: member 1's chunk
# of S read back made up (parts 1 and 3), and in part 2 too.
#
# Environment: S (default 40, a multiple of 4), PARTS (default 123).
. "$REPO/tests/lib.sh"
FUZZ=$REPO/userspace-tools/rainssd-fuzz
CHUNK=16
N=4
VOL=rslg
STRIPES=256
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
S=${S:-40}
PARTS=${PARTS:-123}
[ $((S % N)) = 0 ] && [ "$S" -lt "$STRIPES" ] || fail "S must be a multiple of $N below $STRIPES"

t_linear_members rslg $N
T_LEN=$LEN
T_CHUNK=$CHUNK
table() { echo "0 $LEN rainssd $CHUNK $N $*"; }
same() {
	cmp -s <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) "$2" ||
		fail "$1: the volume does not read back as written ($(cmp <(dd if=/dev/mapper/$VOL \
			bs=1M iflag=direct status=none) "$2" 2>&1 | head -1))"
}
# chunk_off <stripe> <data member 0-2>: byte offset of that chunk in the volume
chunk_off() { echo $(( ($1 * (N - 1) + $2) * CHUNK * 512 )); }
# read_chunk <stripe> <data member>: that chunk of the volume to stdout
read_chunk() {
	dd if=/dev/mapper/$VOL bs=$((CHUNK * 512)) skip=$(($1 * (N - 1) + $2)) count=1 \
		iflag=direct status=none
}
# legacy_volume [--unclean]: the members hold a new pattern (/tmp/lg.pat),
# shut down cleanly, then made a 1.4.0 volume; S's parity torn
legacy_volume() {
	local d
	t_wipe_sb "${T_DEVS[@]}"
	head -c $BYTES /dev/urandom >/tmp/lg.pat
	table "${T_DEVS[*]} 1 nosync" | dmsetup create $VOL || fail "create"
	dd if=/tmp/lg.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none ||
		fail "write the pattern"
	dmsetup remove --retry $VOL || fail "remove"
	for d in "${T_DEVS[@]}"; do
		"$FUZZ" legacy --dev "$d" "$@" >/dev/null || fail "rainssd-fuzz legacy $* $d"
	done
}
tear_parity() {
	head -c $((CHUNK * 512)) /dev/urandom | dd of="${T_DEVS[3]}" bs=512 \
		seek=$((32768 + $1 * CHUNK)) oflag=direct status=none || fail "overwrite the parity of $1"
}
# failed_reads_back <what> <file>: resynced, the parity checker finds every
# stripe right, member 1 failed, the volume reads as the file
failed_reads_back() {
	t_idle $VOL 300 || fail "$1: the resync did not end ($(t_opstat $VOL sync_ratio))"
	dmsetup suspend $VOL || fail "$1: suspend"
	t_parity
	dmsetup resume $VOL || fail "$1: resume"
	dmsetup message $VOL 0 fail 1 || fail "$1: fail 1"
	same "$1, member 1 failed" "$2"
	cmp -s <(read_chunk $S 1) <(dd if="$2" bs=$((CHUNK * 512)) skip=$((S * (N - 1) + 1)) count=1 \
		status=none) || fail "$1: member 1's chunk of stripe $S made up"
	dmsetup remove --retry $VOL || fail "$1: remove"
}

if [[ $PARTS == *1* ]]; then
	legacy_volume --unclean
	tear_parity $S
	dmesg -C
	table "${T_DEVS[*]}" | dmsetup create $VOL || fail "part 1: create the 1.4.0 volume"
	failed_reads_back "part 1" /tmp/lg.pat
	dmesg | grep -q "unclean shutdown, no bitmap or log (made by 1.4.0): every region is dirty" ||
		fail "part 1: no word of it in the kernel log"
	note "part 1: an unclean 1.4.0 volume resynced whole, member 1 read back through the parity"
fi

if [[ $PARTS == *2* ]]; then
	legacy_volume
	table "${T_DEVS[*]}" | dmsetup create $VOL || fail "part 2: create the 1.4.0 volume"
	[ "$(t_opstat $VOL sync_action)" = idle ] || fail "part 2: a clean volume resyncs"
	cp /tmp/lg.pat /tmp/lg.new
	head -c 4096 /dev/urandom | dd of=/tmp/lg.new bs=1 seek="$(chunk_off $S 0)" conv=notrunc \
		status=none
	put() {
		dd if=/tmp/lg.new of=/dev/mapper/$VOL bs=4096 skip=$(($(chunk_off $S 0) / 4096)) \
			seek=$(($(chunk_off $S 0) / 4096)) count=1 oflag=direct conv=fsync status=none
	}
	put || fail "part 2: the write to stripe $S"
	# The same bytes again until the cut, so that S's region is dirty then
	# (an idle region's bit is cleared after a few seconds).
	(while put 2>/dev/null; do :; done) &
	w=$!
	sleep 1
	# The cut: every member frozen and given the error table, the volume
	# removed, the members back.
	t_cut_members rslg $N
	wait $w
	dmsetup remove --retry $VOL || fail "part 2: remove after the cut"
	t_uncut_members rslg $N
	# The region was dirty on the members at the cut (member 0's copy).
	cmp -s <(dd if="${T_DEVS[0]}" bs=512 skip=4096 count=8 iflag=direct status=none) \
		<(head -c 4096 /dev/zero) && fail "part 2: the bitmap on member 0 was clear at the cut"
	tear_parity $S
	table "${T_DEVS[*]}" | dmsetup create $VOL || fail "part 2: create after the cut"
	failed_reads_back "part 2" /tmp/lg.new
	note "part 2: a write in the first activation of a 1.4.0 volume resynced after a cut"
fi

if [[ $PARTS == *3* ]]; then
	legacy_volume --unclean
	tear_parity $S
	m=("${T_DEVS[@]}")
	m[1]=-
	table "${m[*]}" | dmsetup create $VOL || fail "part 3: create with member 1 given as -"
	for s in $S 0 $((STRIPES - 4)); do
		if read_chunk $s 1 >/tmp/lg.chunk 2>/tmp/lg.err; then
			cmp -s /tmp/lg.chunk <(dd if=/tmp/lg.pat bs=$((CHUNK * 512)) \
				skip=$((s * (N - 1) + 1)) count=1 status=none) ||
				fail "part 3: member 1's chunk of stripe $s made up"
			fail "part 3: member 1's chunk of stripe $s read, as if resynced"
		fi
		grep -q "Input/output error" /tmp/lg.err ||
			fail "part 3: stripe $s: not an I/O error: $(cat /tmp/lg.err)"
		cmp -s <(read_chunk $s 0) <(dd if=/tmp/lg.pat bs=$((CHUNK * 512)) \
			skip=$((s * (N - 1))) count=1 status=none) ||
			fail "part 3: member 0's chunk of stripe $s"
	done
	dmsetup remove --retry $VOL || fail "part 3: remove"
	note "part 3: a degraded unclean 1.4.0 volume: member 1's chunks I/O errors"
fi
