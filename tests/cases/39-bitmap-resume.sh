#!/bin/bash
# The write-intent bitmap's bits are cleared again after a suspend and
# resume of the same table. A written region's bit is set on every member
# before the write, and cleared once the region has been idle for 2-4 s;
# the suspend clears every bit and stops that clearing. Up to 1.11.10 a
# later resume (dmsetup suspend + resume, an LVM operation, a reload that
# failed and resumed the old table) never restarted it: from then on every
# region written stayed dirty on disk until the next suspend, so a power
# cut resynced all of them, and with a member out at the next activation
# their chunks on that member read as errors (a review of 1.11.10 found
# it). The case reads the bitmap on the raw members (sector 4096, one bit
# per region): set right after a write, clear after 8 s idle, before and
# after a suspend and resume.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
t_create rsbr 16
v=/dev/mapper/rsbr

# dirty_members: how many members' bitmaps hold a set bit
dirty_members() {
	local d n=0
	for d in "${T_DEVS[@]}"; do
		dd if="$d" bs=4096 skip=512 count=1 iflag=direct status=none | tr -d '\0' |
			grep -q . && n=$((n + 1))
	done
	echo $n
}
# written_dirty <MiB offset> <what>: while a writer keeps rewriting 256 KiB
# there (the region never idle), every member's bitmap holds its bit
written_dirty() {
	local w n
	(while :; do
		dd if=/dev/urandom of=$v bs=64k count=4 seek=$(($1 * 16)) oflag=direct status=none || exit 1
	done) &
	w=$!
	sleep 1
	n=$(dirty_members)
	kill $w; wait $w 2>/dev/null || true
	[ "$n" = 4 ] || fail "$2: a region being written has its bit on $n of 4 members"
}
# bits_clear <what>: within 12 s of idle, no member's bitmap holds a bit
bits_clear() {
	local t
	for t in $(seq 12); do
		sleep 1
		[ "$(dirty_members)" = 0 ] && { note "$1: the bits cleared after ${t} s idle"; return; }
	done
	fail "$1: $(dirty_members) members' bitmaps still hold a dirty bit after 12 s idle"
}

written_dirty 0 "first resume"
bits_clear "first resume"
dmsetup suspend rsbr || fail suspend
dmsetup resume rsbr || fail resume
written_dirty 8 "after a suspend and resume"
bits_clear "after a suspend and resume"
