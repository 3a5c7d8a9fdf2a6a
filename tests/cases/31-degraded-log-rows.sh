#!/bin/bash
# The degraded-write log on a volume with a RAID1 tier, for a write that
# fills less than a 4 KiB row of a RAID-5 stripe: 40 full stripes written
# (RAID-5), a data member failed, 512 bytes written in the middle of a row
# of another member's chunk (its stripe is logged: the failed member's
# chunk lives only in the parity), then a power cut and the log's replay at
# the next activation. Every byte must read back as written; the failed
# member's chunk is rebuilt from the replayed parity. Up to 1.11.2 the
# record covered the whole 4 KiB row that the tier's buffers are rounded
# to, and the replay wrote whatever the buffer held around the 512 bytes
# as their parity (with poison_buffers, which tests/run-in-vm.sh turns on:
# 0x5a): 3.5 KiB of the failed member's chunk read back made up.
. "$REPO/tests/lib.sh"

N=4
CHUNK=16		# 8 KiB chunks: a data stripe is 24 KiB
TIER=16384		# sectors of each member in the tier
VOL=rsdl
for i in $(seq 0 $((N - 1))); do dmsetup remove --retry rsdlm$i >/dev/null 2>&1 || true; done
t_channels $N --size-mb 64
SZ=$(blockdev --getsz "${T_DEVS[0]}")
CH=("${T_DEVS[@]}")
T_DEVS=()
for i in $(seq 0 $((N - 1))); do
	echo "0 $SZ linear ${CH[$i]} 0" | dmsetup create rsdlm$i || fail "dm-linear member $i"
	T_DEVS+=(/dev/mapper/rsdlm$i)
done
T_CHUNK=$CHUNK
T_LEN=$(( (SZ - 32768 - TIER) / CHUNK * CHUNK * (N - 1) ))
line=$(t_table $CHUNK $T_LEN tier_size $TIER nosync)
echo "$line" | dmsetup create $VOL || fail "create: $line"

# 40 aligned full stripes: RAID-5, not the tier.
head -c $((40 * 24 * 1024)) /dev/urandom >/tmp/dl.data
dd if=/tmp/dl.data of=/dev/mapper/$VOL bs=24k oflag=direct status=none || fail "full stripes"
ts=$(t_opstat $VOL tier_stripes)	# <in the tier>/<capacity>
[ "${ts%%/*}" = 0 ] || fail "full stripes went to the tier ($ts): $(dmsetup status $VOL)"

# Stripe 0 has its parity on member 3 and data chunks 0, 1, 2 on members
# 0, 1, 2 (md's left-symmetric layout). Member 1 out; then 512 bytes at
# logical sector 2, row 2 of member 0's chunk: a degraded RMW, logged.
dmsetup message $VOL 0 fail 1 || fail "fail 1"
head -c 512 /dev/urandom >/tmp/dl.new
dd if=/tmp/dl.new of=/dev/mapper/$VOL bs=512 seek=2 oflag=direct status=none || fail "the 512-byte write"
dd if=/tmp/dl.new of=/tmp/dl.data bs=512 seek=2 conv=notrunc status=none

# The power cut: every member frozen, then failing everything held.
for i in $(seq 0 $((N - 1))); do dmsetup suspend --noflush rsdlm$i || fail "suspend member $i"; done
for i in $(seq 0 $((N - 1))); do
	dmsetup load rsdlm$i --table "0 $SZ error" && dmsetup resume rsdlm$i || fail "error table on $i"
done
dmsetup remove --retry $VOL >/dev/null 2>&1 || fail "remove after the cut"
for i in $(seq 0 $((N - 1))); do
	dmsetup load rsdlm$i --table "0 $SZ linear ${CH[$i]} 0" && dmsetup resume rsdlm$i ||
		fail "linear table back on $i"
done

mark=$(dmesg | wc -l)
echo "$line" | dmsetup create $VOL || fail "created again: refused"
t_idle $VOL 120 || fail "sync not idle after 120 s"
replayed=$(dmesg | tail -n +$((mark + 1)) | sed -nE 's/.*unclean shutdown while degraded: ([0-9]+) logged stripe update.*/\1/p')
[ -n "$replayed" ] && [ "$replayed" -ge 1 ] || fail "no logged update replayed: $(dmesg | tail -n +$((mark + 1)) | grep rainssd | tail -3)"
note "health $(t_status_field $VOL 2), $replayed logged update(s) replayed"

dd if=/dev/mapper/$VOL of=/tmp/dl.read bs=24k count=40 iflag=direct status=none || fail "read back"
if ! cmp -s /tmp/dl.data /tmp/dl.read; then
	cmp -l /tmp/dl.data /tmp/dl.read >/tmp/dl.cmp || true	# cmp exits 1: they differ
	bad=$(wc -l </tmp/dl.cmp)
	first=$(awk 'NR == 1 {print $1 - 1}' /tmp/dl.cmp)
	fail "$bad bytes read back wrong after the replay, the first at byte $first (chunk $((first / 8192)), the failed member's is chunk 1)"
fi
note "40 stripes read back as written, the failed member's chunk rebuilt from the replayed parity"
