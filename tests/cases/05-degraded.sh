#!/bin/bash
# A member failed by message in the middle of a fio verify run: the run still
# verifies, status shows D and reconstruct reads; a second failure gives I/O
# errors, never wrong data. Then 1 MiB chunks, degraded: whole-chunk log
# records (more pages than one bio holds).
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 200
t_create rsd 16
v=/dev/mapper/rsd
# Its writes held to 2 MiB/s: 10 s of them at least, the failure comes
# in their middle (the verify's reads after them are not held).
fio --name=deg --filename=$v --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" --rw=randwrite --bsrange=512-40k \
	--blockalign=512 --iodepth=16 --size=20m --rate=,2m --verify=crc32c --verify_fatal=1 \
	--output-format=terse --terse-version=3 >/tmp/fio-deg.out 2>&1 &
pid=$!
sleep 3
kill -0 $pid 2>/dev/null || { tail /tmp/fio-deg.out; fail "the fio run ended before the failure"; }
dmsetup message rsd 0 fail 1 || fail "fail message"
rc=0
wait $pid || rc=$?
[ $rc = 0 ] || { tail /tmp/fio-deg.out; fail "fio verify across the failure (exit $rc)"; }
rkb=$(awk -F';' '$1 == 3 {print $6}' /tmp/fio-deg.out)
[ "${rkb:-0}" -gt 0 ] || { tail /tmp/fio-deg.out; fail "the fio run read nothing back to verify"; }
note "fio verified ${rkb} KiB across the failure"
[ "$(t_status_field rsd 2)" = ADAA ] || fail "health $(t_status_field rsd 2)"
# Verify again, now wholly degraded: writes of every kind and reads rebuilt.
t_fio_verify deg2 $v --rw=randwrite --bsrange=512-64k --blockalign=512 --iodepth=8 --size=16m --offset=24m
recon=$(t_status_field rsd 10)
[ "$recon" -gt 0 ] || fail "no reconstruct reads counted"
note "reconstruct reads: $recon, degraded writes: $(t_status_field rsd 8)"
# Data written before the failure is still there (rebuilt where needed).
t_fio deg $v --rw=randwrite --bsrange=512-40k --blockalign=512 --iodepth=16 --size=20m \
	--verify=crc32c --verify_only=1 --verify_fatal=1
note "data written before the failure verifies"
# A second failure: every I/O errors.
dmsetup message rsd 0 fail 3
if dd if=$v of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null; then fail "read after 2 failures succeeded"; fi
if dd if=/dev/zero of=$v bs=4k count=1 oflag=direct 2>/dev/null; then fail "write after 2 failures succeeded"; fi
note "two dead members: I/O errors as expected"
dmsetup remove --retry rsd
"$CHANNELS" destroy
# 1 MiB chunks, degraded: an update of a whole chunk logs 1 MiB of partial
# parity and its header, 257 pages, more than one bio holds (1.11.0 and
# before asked the bio set for them in one bio: a BUG in bvec_alloc). Whole
# stripes, single chunks and parts of chunks, verified.
t_channels 4 --size-mb 96
t_create rsd 2048
dmsetup message rsd 0 fail 1 || fail "fail message"
t_fio_verify deg-3m $v --rw=write --bs=3m --iodepth=2 --size=24m
t_fio_verify deg-1m $v --rw=randwrite --bs=1m --blockalign=1m --iodepth=4 --size=24m --offset=30m
t_fio_verify deg-mixed $v --rw=randwrite --bsrange=4k-2m --blockalign=4k --iodepth=8 --size=24m \
	--offset=60m
note "1 MiB chunks, degraded: $(t_status_field rsd 8) degraded writes verified"
