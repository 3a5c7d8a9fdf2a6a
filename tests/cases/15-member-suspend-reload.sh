#!/bin/bash
# Members are often dm devices themselves (LVM, multipath) whose owners
# suspend, reload and resume them at any time. Here every member is a
# dm-linear device; while O_DIRECT writers with fdatasync (and a reader with
# read_policy adaptive) run, each member in turn is suspended, reloaded with
# its table and resumed, and now and then the volume itself is suspended
# (with and without --noflush) and resumed. No operation may be left waiting:
# the writers finish within a deadline, the data verifies, the parity is
# right.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 300 --qd 8
raw=("${T_DEVS[@]}")
T_DEVS=()
for i in "${!raw[@]}"; do
	echo "0 $(blockdev --getsz "${raw[$i]}") linear ${raw[$i]} 0" | dmsetup create rsm$i ||
		fail "dm-linear member $i"
	T_DEVS+=(/dev/mapper/rsm$i)
done
t_create rss 16 policy adaptive read_policy adaptive
v=/dev/mapper/rss

# A region the reader reads back, written first.
t_fio pre $v --rw=write --bs=64k --offset=40m --size=8m --verify=crc32c --do_verify=0
rm -f /tmp/churn.stop /tmp/wr.fail /tmp/rd.fail
# Two writers with fdatasync after every write, each on its own 8 MiB, in
# passes that write and verify, until the churn ends (make test: 4 MiB passes).
WMB=$(t_size 4 8) CYCLES=$(t_size 6 12)
(
	while [ ! -e /tmp/churn.stop ]; do
		fio --name=sync --filename=$v --direct=1 --ioengine=psync --rw=randwrite \
			--bsrange=4k-64k --blockalign=4k --numjobs=2 --size=${WMB}m --offset_increment=16m \
			--fdatasync=1 --verify=crc32c --verify_fatal=1 --verify_dump=0 \
			--output-format=terse >/tmp/fio-sync.out 2>&1 || { echo fail >/tmp/wr.fail; break; }
	done
) &
writers=$!
# A reader at queue depth, rebuilt around busy members at will: passes that
# read the region back and verify.
(
	while [ ! -e /tmp/churn.stop ]; do
		fio --name=pre --filename=$v --direct=1 --ioengine=libaio --rw=write --bs=64k \
			--offset=40m --size=8m --iodepth=16 --verify=crc32c --verify_only=1 \
			--verify_fatal=1 --verify_dump=0 --output-format=terse >/tmp/fio-rd.out 2>&1 ||
			{ echo fail >/tmp/rd.fail; break; }
	done
) &
readers=$!

# A fixed number of cycles (make test 6, make test-full 12; both reload every
# member and suspend the volume with --noflush, at cycle 2, and without, at
# cycle 5), not a time: every dmsetup call must come back
# within 120 s (a call that does not is an operation waiting for ever).
dm() {
	timeout 120 dmsetup "$@"
	local rc=$?
	[ $rc -ne 124 ] || fail "dmsetup $* did not return within 120 s"
	return $rc
}
cycles=0
while [ $cycles -lt "$CYCLES" ] && [ ! -e /tmp/wr.fail ] && [ ! -e /tmp/rd.fail ]; do
	m=$((cycles % 4))
	tbl=$(dmsetup table rsm$m)
	dm suspend rsm$m || fail "suspend member $m"
	sleep 0.$((RANDOM % 5 + 1))
	dm reload rsm$m --table "$tbl" || fail "reload member $m"
	dm resume rsm$m || fail "resume member $m"
	if [ $((cycles % 3)) = 2 ]; then
		nf=$([ $((cycles % 2)) = 0 ] && echo --noflush || true)
		dm suspend $nf rss || fail "suspend $nf the volume"
		sleep 0.2
		dm resume rss || fail "resume the volume"
	fi
	cycles=$((cycles + 1))
	sleep 0.$((RANDOM % 3))
done
touch /tmp/churn.stop
note "$cycles member suspend/reload/resume cycles"

# Every pass in flight must finish: a deadline instead of waiting forever.
for _ in $(seq 240); do
	kill -0 $writers 2>/dev/null || kill -0 $readers 2>/dev/null || break
	sleep 1
done
if kill -0 $writers 2>/dev/null || kill -0 $readers 2>/dev/null; then
	dmsetup status rss
	dmsetup info -c
	for p in $(pgrep -x fio); do echo "fio $p:"; head -12 /proc/$p/stack 2>/dev/null; done
	fail "fio did not finish within 240 s after the churn"
fi
wait $writers
wait $readers
[ ! -e /tmp/wr.fail ] || { grep -m1 verify: /tmp/fio-sync.out; fail "fdatasync writers: verify failed"; }
[ ! -e /tmp/rd.fail ] || { grep -m1 verify: /tmp/fio-rd.out; fail "reader: verify failed"; }
[ "$cycles" -ge "$CYCLES" ] || fail "only $cycles cycles: the writers or the reader failed first"
[ "$(t_status_field rss 2)" = AAAA ] || fail "health $(t_status_field rss 2): a member was failed"
note "writers verified; status: $(dmsetup status rss | cut -d' ' -f4-8)"
dmsetup suspend rss
t_parity
dmsetup resume rss
