#!/bin/bash
# channels.sh: emulated SSD channels on null_blk, made through configfs.
#
#   channels.sh create <N> [options]   make N devices, print their paths
#       --prefix NAME        configfs directory prefix (default rsch): devices
#                            are /dev/NAME0 .. /dev/NAME<N-1>
#       --size-mb MB         size of each device (default 256)
#       --bs BYTES           logical block size (default 512)
#       --lat-us US          completion latency per I/O in microseconds; 0
#                            completes in the submitting context (default 0)
#       --lat-list a,b,...   per-device latencies in microseconds (overrides)
#       --qd N               hardware queue depth (default 64)
#       --queue N            a host-side queue of N requests in front of the
#                            channel (mq-deadline tuned to serve in arrival
#                            order): when the channel's qd requests are busy,
#                            more requests wait in it instead of the
#                            submitter sleeping for a tag (default 0: no
#                            I/O scheduler, submitters sleep)
#       --wbt-lat-us US      writeback throttling's latency target on each
#                            device (queue/wbt_lat_usec; 0 turns it off;
#                            default: the kernel's, 2000 on these devices)
#       --no-memory          do not keep data (default: memory_backed=1)
#       --cache-mb MB        a volatile write cache of MB on each device
#                            (null_blk's cache_size: the device takes flushes
#                            and FUA; default 0, none)
#   channels.sh destroy [--prefix NAME]   remove them
#
# Runs inside the test VM (needs root, null_blk and configfs).
set -euo pipefail

cfs=/sys/kernel/config
usage() { sed -n '2,28p' "$0"; }

setup_configfs() {
	modprobe configfs 2>/dev/null || true
	mountpoint -q "$cfs" || mount -t configfs none "$cfs"
	[ -d "$cfs/nullb" ] || modprobe null_blk nr_devices=0 2>/dev/null || true
	[ -d "$cfs/nullb" ] || { echo "channels: null_blk configfs not available" >&2; exit 1; }
}

cmd=${1:-}; shift || true
prefix=rsch size=256 bs=512 lat=0 latlist="" qd=64 queue=0 mem=1 n=0 wbt="" cache=0
if [ "$cmd" = create ]; then n=${1:?channels: create needs a count}; shift; fi
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift 2 ;;
	--size-mb) size=$2; shift 2 ;;
	--bs) bs=$2; shift 2 ;;
	--lat-us) lat=$2; shift 2 ;;
	--lat-list) latlist=$2; shift 2 ;;
	--qd) qd=$2; shift 2 ;;
	--queue) queue=$2; shift 2 ;;
	--wbt-lat-us) wbt=$2; shift 2 ;;
	--no-memory) mem=0; shift ;;
	--cache-mb) cache=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "channels: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done

# set_queue <dev>: no scheduler (queue=0), or mq-deadline holding up to
# $queue requests, dispatching one at a time by arrival (every request is
# past its deadline at once, reads do not starve writes).
set_queue() {
	local q=/sys/block/$1/queue
	if [ "$queue" -eq 0 ]; then
		echo none >"$q/scheduler"
		return
	fi
	modprobe mq-deadline 2>/dev/null || true
	echo mq-deadline >"$q/scheduler"
	echo "$queue" >"$q/nr_requests"
	echo 1 >"$q/iosched/fifo_batch"
	echo 0 >"$q/iosched/read_expire"
	echo 0 >"$q/iosched/write_expire"
	echo 1 >"$q/iosched/writes_starved"
	echo 0 >"$q/iosched/front_merges"
}

case "$cmd" in
create)
	setup_configfs
	IFS=, read -r -a lats <<<"$latlist"
	for ((i = 0; i < n; i++)); do
		d=$cfs/nullb/$prefix$i
		mkdir "$d"
		echo "$size" >"$d/size"
		echo "$bs" >"$d/blocksize"
		echo "$mem" >"$d/memory_backed"
		echo "$qd" >"$d/hw_queue_depth"
		[ "$cache" = 0 ] || echo "$cache" >"$d/cache_size"
		l=${lats[$i]:-$lat}
		if [ "$l" -gt 0 ]; then
			echo 2 >"$d/irqmode"
			echo $((l * 1000)) >"$d/completion_nsec"
		else
			echo 0 >"$d/irqmode"
		fi
		echo 1 >"$d/power"
	done
	# One settle for all of them (each took 0.3-0.5 s under TCG).
	udevadm settle 2>/dev/null || true
	for ((i = 0; i < n; i++)); do
		for _ in $(seq 50); do [ -b "/dev/$prefix$i" ] && break; sleep 0.1; done
		[ -b "/dev/$prefix$i" ] || { echo "channels: /dev/$prefix$i did not appear" >&2; exit 1; }
		set_queue "$prefix$i"
		[ -z "$wbt" ] || echo "$wbt" >"/sys/block/$prefix$i/queue/wbt_lat_usec"
		echo "/dev/$prefix$i"
	done
	;;
destroy)
	[ -d "$cfs/nullb" ] || exit 0
	for d in "$cfs/nullb/$prefix"*; do
		[ -d "$d" ] || continue
		echo 0 >"$d/power" 2>/dev/null || true
		rmdir "$d"
	done
	;;
*) usage >&2; exit 2 ;;
esac
