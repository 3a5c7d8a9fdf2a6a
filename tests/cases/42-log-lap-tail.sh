#!/bin/bash
# The degraded-write log zeroes the tail a lap skipped before the next lap
# begins. A record never wraps: one that does not fit before the ring's end
# goes to block 0 and starts a new lap, and the blocks it skipped keep
# records of earlier laps. Replay trusts the newest record's lap up to it
# and the lap before after it; if the first write of a new lap is torn, it
# can destroy that lap's first records while no record of the new lap is
# whole, and a record two laps old in the tail then counts as of the lap
# before: it may be the newest left of its stripe, and replaying it makes a
# wrong parity (a review of 1.11.10 found it). Since 1.11.11 the first
# write of a lap waits for zeros over that tail (FUA).
#
# Member 2 failed, 4 KiB writes to stripe 0 (parity on member 3) fill its
# ring's lap 0 exactly with 1,024 records of 2 blocks; 682 writes of 8 KiB
# (3 blocks each) fill lap 1 to block 2046, so blocks 2046-2047 keep lap 0's
# last record; one more 8 KiB write starts lap 2 at block 0. The case reads
# member 3's ring: block 0 must be a record of lap 2, and blocks 2046-2047
# must be zeros (up to 1.11.10 they held lap 0's record).
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 100
t_create rslt 16
dmsetup message rslt 0 fail 2 || fail "fail 2"
python3 - /dev/mapper/rslt <<'EOF' || fail "the writes"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 8192)
for size, count in ((4096, 1024), (8192, 683)):
    for i in range(count):
        buf[0:8] = i.to_bytes(8, "little")
        if os.pwrite(fd, memoryview(buf)[:size], 0) != size:
            sys.exit("short write")
os.close(fd)
EOF
# ring_block <b>: block b of member 3's log ring (4 MiB into the member)
ring_block() {
	dd if="${T_DEVS[3]}" bs=4096 skip=$((1024 + $1)) count=1 iflag=direct status=none
}
hdr=$(ring_block 0 | od -An -tx1 -N40 | tr -d ' \n')
[ "${hdr:0:16}" = 525353444c4f4752 ] ||
	fail "block 0 of member 3's ring holds no record (bytes $hdr): the case needs a rework"
lap=$((16#${hdr:70:2}${hdr:68:2}${hdr:66:2}${hdr:64:2}))
[ "$lap" = 2 ] || fail "block 0 of member 3's ring is a record of lap $lap, not 2: the case needs a rework"
for b in 2046 2047; do
	if ring_block $b | tr -d '\0' | grep -q .; then
		fail "block $b of the ring, in the tail lap 1 skipped, still holds an earlier lap's bytes" \
			"($(ring_block $b | od -An -tx1 -N8 | tr -d ' \n'))"
	fi
done
note "lap 2 began at block 0; the tail lap 1 skipped (blocks 2046-2047) is zeros"
