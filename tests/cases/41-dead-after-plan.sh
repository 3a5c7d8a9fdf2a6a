#!/bin/bash
# A member that fails between an update's plan and its writes: the update
# must write the degraded-log record that the new set of failed members
# asks for, or else leave nothing out. Four dm-linear members, a nosync
# volume; stripe S (parity on member 1, data on members 2, 3 and 0 by md's
# left-symmetric layout) written whole, then the bitmap left to clear its
# bit. Member 3's dm-linear reloaded so that only its bitmap area (sector
# 4096, 2 MiB) fails; then 4 KiB written to member 0's chunk of S: the
# update plans with every member in service and waits at the bitmap gate
# for its region's bit, whose write fails member 3. The write must succeed
# with member 3 failed. Then a power cut, and the old parity of S put back
# on member 1 by hand (the torn update a cut can leave: data landed, parity
# not); created again with "-" for member 3, its chunk of S (rebuilt from
# the parity) must read back as written: the log's replay remakes the parity.
# Up to 1.11.10 whether an update is logged was decided by the failed
# members at its plan, and a member that failed later was just left out
# of its writes: no record, and member 3's chunk of S read back as the
# XOR of what it held with member 0's old and new bytes (helper review).
# Now an update whose plan's failed members are no longer the current ones
# is planned again, at the log gate and when its writes are built.
#
# Environment: S (default 2; S % 4 must be 2).
. "$REPO/tests/lib.sh"
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB
N=4
VOL=rsdp
S=${S:-2}
[ $((S % N)) = 2 ] || fail "S must be 2 modulo $N (parity on member 1)"
CB=$((CHUNK * 512))
BMBLK=$((4096 * 512 / 4096))	# the bitmap's first 4 KiB block on a member

t_linear_members rsdp $N
LEN=$(( (SZ - 32768) / CHUNK * CHUNK * (N - 1) ))
table() { echo "0 $LEN rainssd $CHUNK $N $* 1 nosync"; }
table "${T_DEVS[*]}" | dmsetup create $VOL || fail "create"

# bitmap_clear <member>: until that member's first bitmap block is all zeros
bitmap_clear() {
	local t
	for t in $(seq 75); do
		[ "$(dd if="${T_DEVS[$1]}" bs=4096 skip=$BMBLK count=1 iflag=direct status=none |
			tr -d '\0' | wc -c)" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# Stripe S whole (its parity right), then its region's bit cleared on disk.
head -c $((3 * CB)) /dev/urandom >/tmp/dp.pat
dd if=/tmp/dp.pat of=/dev/mapper/$VOL bs=$((3 * CB)) seek=$S oflag=direct status=none ||
	fail "write stripe $S"
bitmap_clear 0 || fail "the bitmap bit of stripe $S's region did not clear within 15 s"
# member 1's chunk of S: the parity before the update
dd if=/dev/mapper/rsdp1 of=/tmp/dp.oldp bs=512 skip=$((32768 + S * CHUNK)) count=$CHUNK \
	iflag=direct status=none || fail "read member 1's chunk of stripe $S"

# Member 3: its bitmap area fails writes, everything else works.
dmsetup suspend rsdp3 &&
	dmsetup load rsdp3 --table "0 4096 linear /dev/rsch3 0
4096 4096 error
8192 $((SZ - 8192)) linear /dev/rsch3 8192" &&
	dmsetup --noudevsync resume rsdp3 || fail "member 3 with an error in its bitmap area"

# 4 KiB to the start of member 0's chunk of S (data chunk 2).
head -c 4096 /dev/urandom >/tmp/dp.new
dd if=/tmp/dp.new of=/dev/mapper/$VOL bs=4096 seek=$(((S * 3 + 2) * CB / 4096)) \
	oflag=direct status=none || fail "the 4 KiB write failed"
health=$(t_status_field $VOL 2)
[ "$health" = AAAD ] || fail "after the write: health $health, not AAAD (member 3 failed by its bitmap write)"
note "the 4 KiB write succeeded, member 3 failed: $(dmesg | grep -o 'member 3 ([^)]*) failed: [a-z ]*' | tail -1)"

# The cut, right away (before the bitmap's daemon clears the bit).
t_cut_members rsdp $N
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rsdp $N
# The torn update: member 0's data landed, member 1's parity did not.
dd if=/tmp/dp.oldp of=/dev/mapper/rsdp1 bs=512 seek=$((32768 + S * CHUNK)) \
	oflag=direct conv=notrunc status=none || fail "old parity of stripe $S back on member 1"

mark=$(dmesg | wc -l)
table "${T_DEVS[0]} ${T_DEVS[1]} ${T_DEVS[2]} -" | dmsetup create $VOL ||
	fail "created again with member 3 out: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | grep -E 'dirty|replayed|resync' | sed 's/^/    # /' || true
dd if=/dev/mapper/$VOL of=/tmp/dp.rd bs=$CB skip=$((S * 3 + 1)) count=1 iflag=direct \
	status=none || fail "member 3's chunk of stripe $S reads as an I/O error"
# how: what the chunk read back is, against its pattern and member 0's old and new bytes
how() {
	python3 - /tmp/dp.rd /tmp/dp.pat /tmp/dp.new $CB <<-'EOF'
	import sys
	rd, pat, new = (open(f, "rb").read() for f in sys.argv[1:4])
	cb = int(sys.argv[4])
	d3, d0 = pat[cb:2 * cb], pat[2 * cb:2 * cb + 4096]
	bad = sum(a != b for a, b in zip(rd, d3))
	xor = bytes(a ^ b ^ c for a, b, c in zip(d3, d0, new))
	print("%d of %d bytes wrong%s" % (bad, cb, "; its first 4 KiB is its pattern XOR member 0's"
	      " old and new bytes" if rd[:4096] == xor and rd[4096:] == d3[4096:] else ""))
	EOF
}
cmp -s /tmp/dp.rd <(dd if=/tmp/dp.pat bs=$CB skip=1 count=1 status=none) ||
	fail "member 3's chunk of stripe $S read back made-up bytes (rebuilt from the torn parity): $(how)"
note "member 3's chunk of stripe $S read back right (rebuilt from the replayed parity)"
cmp -s <(dd if=/dev/mapper/$VOL bs=4096 skip=$(((S * 3 + 2) * CB / 4096)) count=1 iflag=direct \
	status=none) /tmp/dp.new || fail "member 0's new 4 KiB of stripe $S did not read back"
dmsetup remove --retry $VOL || fail "remove"
exit 0
