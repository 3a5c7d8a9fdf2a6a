#!/bin/bash
# demo-in-vm.sh <moddir>: inside the VM, the demo proper.
set -euo pipefail
moddir=$1
here=$(cd "$(dirname "$0")" && pwd)
modprobe -q dm-mod 2>/dev/null || true
insmod "$moddir/dm-rainssd.ko"
# 8 channels of 256 MiB with 1 ms completion latency and queue depth 8.
mapfile -t devs < <("$here/channels.sh" create 8 --size-mb 256 --lat-us 1000 --qd 8)
chunk=128
sz=$(blockdev --getsz "${devs[0]}")
len=$(( (sz - 32768) / chunk * chunk * 7 ))
table="0 $len rainssd $chunk 8 ${devs[*]}"
echo "# dmsetup create rainssd-demo --table '$table'"
dmsetup create rainssd-demo --table "$table"
echo "# fio fio-jobs/demo.fio"
DEV=/dev/mapper/rainssd-demo SIZE=${SIZE:-64m} RUNTIME=${RUNTIME:-15} fio "$here/../fio-jobs/demo.fio"
echo "# dmsetup status rainssd-demo"
dmsetup status rainssd-demo
dmsetup remove rainssd-demo
"$here/channels.sh" destroy
