#!/bin/bash
# fio verify over N = 3, 4 and 8 channels: random and sequential, read/write
# mixes, 512 B to 1 MiB blocks, aligned and unaligned, QD 1 to 32, several
# jobs at once, sequential small writes at queue depth (which join queued
# writes); then the parity checker reads the raw members. make test
# writes half the bytes make test-full does.
. "$REPO/tests/lib.sh"
d=$(t_size 2 1)	# divides the sizes
run() { # run <N> <chunk>
	local n=$1 chunk=$2 v=/dev/mapper/rsv
	t_channels "$n" --size-mb 96
	t_create rsv "$chunk"
	t_fio_verify "n$n-rand-mixed" $v --rw=randwrite --bsrange=512-64k --blockalign=512 \
		--iodepth=16 --size=$((24 / d))m --numjobs=2 --offset_increment=24m
	t_fio_verify "n$n-seq-1m" $v --rw=write --bs=1m --iodepth=4 --size=$((32 / d))m --offset=48m
	t_fio_verify "n$n-unaligned-qd1" $v --rw=randwrite --bs=3584 --blockalign=512 \
		--iodepth=1 --size=2m --offset=3m
	t_fio_verify "n$n-randrw-qd32" $v --rw=randrw --rwmixread=30 --bs=4k --iodepth=32 \
		--size=$((8 / d))m --offset=90m
	t_fio "n$n-read-back" $v --rw=randread --bsrange=512-256k --blockalign=512 --iodepth=8 \
		--size=64m --io_size=$((16 / d))m
	t_parity
	note "status: $(dmsetup status rsv)"
	dmsetup remove --retry rsv
	"$CHANNELS" destroy
}
# make test: 3 and 8 channels (4, the other cases' default, in make test-full)
run 3 8
[ "$T_FULL" != 1 ] || run 4 128
run 8 64
# Many writers hammering the same few stripes at once: the stripe lock must
# keep every parity update whole.
t_channels 4 --size-mb 48
t_create rsv 8
t_fio "same-stripes" /dev/mapper/rsv --rw=randwrite --bsrange=512-12k --blockalign=512 \
	--iodepth=16 --numjobs=4 --size=256k --io_size=$((4 / d))m
t_parity
# Writes queued on one stripe are served together (1.11.0): sequential small
# writes at queue depth join the write that waits before them. Verified, the
# parity checked, and the status must count joins.
j0=$(t_opstat rsv joined_writes)
t_fio_verify "seq-4k-qd32" /dev/mapper/rsv --rw=write --bs=4k --iodepth=32 --size=$((8 / d))m \
	--offset=4m
t_fio_verify "seq-3584-qd16" /dev/mapper/rsv --rw=write --bs=3584 --iodepth=16 \
	--size=$((4 / d))m --offset=16m
j1=$(t_opstat rsv joined_writes)
note "joined: $((j1 - j0)) write pieces ($(t_opstat rsv ops) operations in all)"
[ "$j1" -gt "$j0" ] || fail "no write joined one queued before it"
t_parity
