#!/bin/bash
# demo-in-vm.sh <moddir>: inside the VM (Debian's stock kernel), the demo
# proper. Makes 8 null_blk channels and a rainssd volume over them, runs
# fio-jobs/demo.fio on it, prints the volume's status labelled by
# rainssd-status; then md RAID-5 (same layout and chunk) over 8 fresh channels
# of the same kind, the same fio job, and one line comparing the two.
# Stops at the first failure and prints the kernel log's tail: an I/O error,
# a fio run that does not end (a hang: the blocked tasks are dumped) or a
# kernel warning or oops is reported, not retried.
#
# Environment: RUNTIME (seconds measured per volume, default 8), RAMP
# (seconds before measuring, 2), SIZE (the region fio uses, 64m).
set -uo pipefail
moddir=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
export SIZE=${SIZE:-64m} RAMP=${RAMP:-2} RUNTIME=${RUNTIME:-8}
# The channels: 256 MiB, 1 ms per I/O, 8 requests in flight each.
N=8 CHUNK_KB=64 SIZE_MB=256 LAT_US=1000 QD=8
RS=rainssd-demo MD=/dev/md100
BAD_KLOG='BUG:|WARNING:|Oops|general protection|possible circular locking|possible recursive locking|inconsistent lock state|blocked for more than|Call Trace|I/O error|rainssd: member .* failed'

# fio's JSON: lpad(n), ms (ns to ms, one decimal), iops (reads + writes of a
# job), side("read"|"write"), ratio($a; $b) (two decimals).
JQ_DEFS='
def lpad($n): tostring | (" " * $n) + . | .[-$n:];
def ms: . / 1e5 | round / 10;
def iops: .read.iops + .write.iops;
def side($n): .[$n] | "\($n) \(.iops | round | lpad(5)) (avg \(.lat_ns.mean | ms) ms, p99 \(.clat_ns.percentile["99.000000"] // 0 | ms) ms)";
def ratio($a; $b): if $b > 0 then ($a / $b * 100 | round) | "\(. / 100 | floor).\(. % 100 | tostring | if length < 2 then "0" + . else . end)" else "-" end;
'

# Only what the kernel logs from here on is checked, not the boot.
mark=$(dmesg | wc -l)
klog_new() { dmesg | tail -n +$((mark + 1)); }
fail() {
	echo "# demo FAILED: $*"
	echo "# kernel log (tail):"
	dmesg | tail -60 | sed 's/^/#   /'
	exit 1
}
# check_klog <stage>: fail on a kernel warning, oops, lockdep report or I/O
# error logged since the last check.
check_klog() {
	if klog_new | grep -qE "$BAD_KLOG"; then
		echo "# the kernel's report during $1:"
		klog_new | grep -E "$BAD_KLOG" | head -5 | sed 's/^/#   /'
		echo "# kernel log during $1 (tail):"
		klog_new | tail -60 | sed 's/^/#   /'
		echo "# demo FAILED: the kernel reported a problem during $1"
		exit 1
	fi
	mark=$(dmesg | wc -l)
}

# run_fio <label> <dev> <json>: the demo job on <dev>, its JSON in <json>;
# one summary line. A run still going 90 s after its time is a hang.
run_fio() {
	local label=$1 dev=$2 json=$3 pid rc limit=$((RAMP + RUNTIME + 90)) t0
	t0=$(date +%s)
	DEV=$dev fio --output-format=json --output="$json" "$repo/fio-jobs/demo.fio" 2>/tmp/fio.err &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
			echo "# $label: fio on $dev has not finished after $limit s (it should take $((RAMP + RUNTIME)) s)"
			echo w >/proc/sysrq-trigger 2>/dev/null # blocked tasks to the kernel log
			sleep 2
			fail "fio hung on $dev"
		fi
		sleep 1
	done
	wait "$pid"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		sed 's/^/#   fio: /' /tmp/fio.err
		fail "fio on $dev exited $rc"
	fi
	# jq, not python3: an interpreter's start costs seconds under TCG.
	jq -r --arg l "$label:" "$JQ_DEFS"'
		.jobs[0] | if .error != 0 then error("fio reported error \(.error)") else
		"\(($l + " " * 10)[:10]) \(iops | round | lpad(6)) IOPS = \(side("read")) + \(side("write"))" end' \
		"$json" || fail "fio on $dev: no result in its output"
}

echo "# kernel $(uname -r), 2 vCPUs under QEMU/TCG (emulated: compare the two volumes, not with hardware)"
modprobe -q dm-mod
modprobe -q raid456
# xor_blocks(): a module on the stock kernel, which insmod does not load.
modprobe -q xor
insmod "$moddir/dm-rainssd.ko" || fail "insmod $moddir/dm-rainssd.ko"
ver=$(dmsetup targets | awk '$1 == "rainssd" { print $2 }')
[ -n "$ver" ] || fail "the rainssd target is not registered after insmod"
echo "# dm-rainssd $ver loaded; $N null_blk channels of $SIZE_MB MiB, $((LAT_US / 1000)) ms per I/O, queue depth $QD"
check_klog "module load"

mapfile -t devs < <("$here/channels.sh" create $N --prefix rsch --size-mb $SIZE_MB --lat-us $LAT_US --qd $QD)
[ ${#devs[@]} -eq $N ] || fail "channels.sh made ${#devs[@]} channels, not $N"
chunk=$((CHUNK_KB * 2))
sz=$(blockdev --getsz "${devs[0]}")
# rainssd keeps the first 16 MiB of each member (md would put its superblock
# there: --data-offset=16M below); the length is whole stripes of the rest.
len=$(((sz - 32768) / chunk * chunk * (N - 1)))
# nosync: the channels are zeroed, so the parity is already right.
table="0 $len rainssd $chunk $N ${devs[*]} 1 nosync"
echo "# dmsetup create $RS --table '$table'"
dmsetup create "$RS" --table "$table" || fail "dmsetup create $RS"
check_klog "dmsetup create"

echo "# fio fio-jobs/demo.fio: 4 KiB random I/O, 50% reads, iodepth 16, ${RAMP} s + ${RUNTIME} s on the first $SIZE"
run_fio rainssd "/dev/mapper/$RS" /tmp/fio-rainssd.json
check_klog "fio on rainssd"

echo "# rainssd-status $RS"
status_ok=1
if ! python3 "$repo/userspace-tools/rainssd-status" "$RS"; then
	status_ok=0
	echo "# rainssd-status could not label the status line; as dmsetup status prints it:"
	dmsetup status "$RS"
fi
dmsetup remove "$RS" || fail "dmsetup remove $RS"
"$here/channels.sh" destroy --prefix rsch || fail "channels.sh destroy"
check_klog "removing the rainssd volume"

mapfile -t mdevs < <("$here/channels.sh" create $N --prefix mdch --size-mb $SIZE_MB --lat-us $LAT_US --qd $QD)
[ ${#mdevs[@]} -eq $N ] || fail "channels.sh made ${#mdevs[@]} channels, not $N"
mdcmd=(mdadm --create "$MD" --run --assume-clean --metadata=1.2 --level=5 --layout=left-symmetric
	--chunk="${CHUNK_KB}K" --raid-devices=$N --data-offset=16M --bitmap=none "${mdevs[@]}")
echo "# ${mdcmd[*]}   (8 fresh channels of the same kind)"
"${mdcmd[@]}" >/tmp/mdadm.out 2>&1 || { sed 's/^/#   /' /tmp/mdadm.out; fail "mdadm --create"; }
for _ in $(seq 50); do [ -b "$MD" ] && break; sleep 0.2; done
[ -b "$MD" ] || fail "$MD did not appear"
run_fio "md RAID-5" "$MD" /tmp/fio-md.json
mdadm --stop "$MD" >/dev/null 2>&1
"$here/channels.sh" destroy --prefix mdch

echo "# the same fio job on both:"
jq -r -n --slurpfile rs /tmp/fio-rainssd.json --slurpfile md /tmp/fio-md.json "$JQ_DEFS"'
	($rs[0].jobs[0] | iops) as $r | ($md[0].jobs[0] | iops) as $m |
	"rainssd: \($r | round) IOPS  md RAID-5: \($m | round) IOPS  (rainssd/md \(ratio($r; $m))x)"'
if [ "$status_ok" -ne 1 ]; then
	echo "# demo done, but rainssd-status could not read rainssd $ver's status line (see above)"
	exit 3
fi
echo "# demo done"
