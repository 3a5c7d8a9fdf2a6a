#!/bin/bash
# Memory pressure: the volume is the swap device and takes writeback while a
# memory hog pushes the VM into swap. Runs in a small VM of its own (make test
# boots one with --memory 512M and four virtio-blk disks as members, so the
# members' data does not live in the VM's memory as null_blk's would), not in
# the main run. The hog (stress-ng --vm --verify) checks every page it gets
# back from swap; fio verifies O_DIRECT and buffered writes; nothing may hang
# (the runner fails the case on a hung-task report) and the parity must be
# right afterwards. The status counters say how often the operation layer
# ran out of memory and took its reserves.
. "$REPO/tests/lib.sh"
command -v stress-ng >/dev/null || fail "stress-ng is not installed (scripts/setup-host.sh)"
mapfile -t T_DEVS < <(ls /dev/vd[a-z] 2>/dev/null)
[ ${#T_DEVS[@]} = 4 ] || fail "want 4 virtio-blk disks, found: ${T_DEVS[*]:-none}"
mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
note "VM memory $((mem_kb / 1024)) MiB, members ${T_DEVS[*]}"
[ "$mem_kb" -lt $((1024 * 1024)) ] || fail "this case wants a small VM (it has $((mem_kb / 1024)) MiB)"

# The smallest stripe cache this geometry takes (64 entries: one 1 MiB
# operation), so that bios also wait for operations.
t_create rsp 128 stripe_cache 64
v=/dev/mapper/rsp
swap_mb=384
echo "0 $((swap_mb * 2048)) linear $v 0" | dmsetup create rsp-swap || fail "swap device"
swapoff -a 2>/dev/null || true
mkswap /dev/mapper/rsp-swap >/dev/null || fail mkswap
swapon -p 10 /dev/mapper/rsp-swap || fail swapon

hog_kb=$((mem_kb * 9 / 10))
stress-ng --temp-path /tmp --vm 2 --vm-bytes ${hog_kb}k --vm-keep --verify --timeout 75s \
	--metrics-brief >/tmp/stress.out 2>&1 &
hog=$!
sleep 5
t_fio_verify direct $v --rw=randwrite --bsrange=4k-256k --blockalign=4k --iodepth=32 \
	--offset=400m --size=96m
t_fio_verify buffered $v --direct=0 --ioengine=psync --rw=randwrite --bsrange=4k-64k \
	--blockalign=4k --offset=520m --size=64m --fsync=64
rc=0
wait $hog || rc=$?
tail -6 /tmp/stress.out | sed 's/^/    # /'
[ $rc = 0 ] || fail "stress-ng exited $rc (a page it got back from swap differed, or it failed)"
used=$(awk '/SwapTotal/ {t=$2} /SwapFree/ {f=$2} END {print t - f}' /proc/meminfo)
note "swap in use at the end: $((used / 1024)) MiB"
swapoff /dev/mapper/rsp-swap || fail "swapoff (every swapped page read back)"
note "status: deferred bios, reserve ops, emergency steps: $(t_opstat rsp deferred) $(t_opstat rsp reserve) $(t_opstat rsp emergency)"
dmsetup remove --retry rsp-swap
t_fio direct $v --rw=randwrite --bsrange=4k-256k --blockalign=4k --iodepth=32 --offset=400m \
	--size=96m --verify=crc32c --verify_only=1 --verify_fatal=1
dmsetup suspend rsp
t_parity
dmsetup resume rsp
