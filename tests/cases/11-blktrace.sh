#!/bin/bash
# make test-full only
# blktrace on a rainssd volume and every member (userspace-tools/rainssd-blktrace):
# 4 KiB random writes cost two member writes (data + parity) and two
# pre-reads each (RMW), the member reads equal the target's prereads plus
# reads counters, and the captured volume I/O replays on an md RAID-5 made on
# other channels with the same number of I/Os.
. "$REPO/tests/lib.sh"
BLK=$REPO/userspace-tools/rainssd-blktrace
for p in blktrace blkparse btt fio mdadm python3; do
	command -v "$p" >/dev/null || fail "$p is not installed"
done
cap=/tmp/bt-rsb mdcap=/tmp/bt-md
rm -rf "$cap" "$mdcap"

# jvals <file> <name>=<python expression on j>...: shell assignments, for eval.
jvals() {
	python3 - "$@" <<'EOF'
import json, shlex, sys
j = json.load(open(sys.argv[1]))
for a in sys.argv[2:]:
    name, expr = a.split("=", 1)
    print("%s=%s" % (name, shlex.quote(str(eval(expr)))))
EOF
}

t_channels 4 --size-mb 64
t_create rsb 64
v=/dev/mapper/rsb
r0=$(t_status_field rsb 3) w0=$(t_status_field rsb 4) pre0=$(t_status_field rsb 9)

SECONDS=0
"$BLK" capture --out "$cap" "$v" "${T_DEVS[@]}" || fail "capture did not start"
# A failing check must not leave blktrace holding the devices open.
trap '"$BLK" stop --out "$cap" >/dev/null 2>&1 || true' EXIT
t_fio bt-w $v --rw=randwrite --bs=4k --iodepth=4 --size=4m
# udev probes the volume when fio closes it: let those reads land in the
# capture too, so that the target's counters below cover the same I/O.
udevadm settle 2>/dev/null || true
"$BLK" stop --out "$cap" || fail "capture did not stop"
note "capture of the fio run: ${SECONDS}s"
fio_writes=$(( $(grep '^3;' /tmp/fio-bt-w.out | cut -d';' -f47) / 4 ))
reads=$(( $(t_status_field rsb 3) - r0 )) writes=$(( $(t_status_field rsb 4) - w0 ))
prereads=$(( $(t_status_field rsb 9) - pre0 ))
note "fio wrote $fio_writes x 4 KiB; target counted $writes writes, $prereads pre-reads, $reads reads"

SECONDS=0
"$BLK" summary "$cap" --json-file "$cap/summary.json" || fail "summary"
note "summary (blkparse and btt on 5 devices): ${SECONDS}s"
vals=$(jvals "$cap/summary.json" 'ndev=len(j["devices"])' 'busy=sum(d["queued_ios"] > 0 for d in j["devices"][1:])' \
	'vw=j["volume"]["writes"]' 'vr=j["volume"]["reads"]' 'mr=j["volume"]["member_reads"]' \
	'wpw=j["volume"]["member_writes_per_volume_write"]' 'cvq=j["volume"]["member_queued_ios_cv"]' \
	'q2c=j["devices"][1]["q2c_avg_us"]') || fail "reading the summary"
eval "$vals"
[ "$ndev" -eq 5 ] || fail "summary lists $ndev devices, expected the volume and 4 members"
[ "$busy" -eq 4 ] || fail "only $busy members have queued I/O"
[ "$vw" -eq "$fio_writes" ] || fail "volume queued writes $vw, fio wrote $fio_writes"
# Every member read is a pre-read or serves a (split) volume read.
[ "$mr" -eq $((prereads + reads)) ] || fail "member reads $mr, target pre-reads $prereads + reads $reads"
rpw=$(python3 -c 'import sys; print(round((int(sys.argv[1]) - int(sys.argv[2])) / int(sys.argv[3]), 4))' "$mr" "$reads" "$vw")
note "member writes per volume write $wpw, pre-reads per volume write $rpw, CV across members $cvq, member 0 Q2C $q2c us"
python3 -c 'import sys; sys.exit(not 1.95 <= float(sys.argv[1]) <= 2.05)' "$wpw" ||
	fail "member writes per 4 KiB write $wpw, expected 2 (data + parity)"
python3 -c 'import sys; sys.exit(not 1.95 <= float(sys.argv[1]) <= 2.05)' "$rpw" ||
	fail "pre-reads per 4 KiB write $rpw, expected 2 (RMW: old data + old parity)"
[ "$q2c" != None ] || fail "btt gave no Q2C for member 0"

# The same I/O on md RAID-5 over other channels, captured too.
mapfile -t MD_DEVS < <("$CHANNELS" create 4 --prefix rsx --size-mb 64)
[ ${#MD_DEVS[@]} -eq 4 ] || fail "md channels"
mdadm --create /dev/md0 --run --assume-clean --metadata=1.2 --level=5 --layout=left-symmetric \
	--chunk=$((T_CHUNK / 2)) --raid-devices=4 --data-offset=16M --bitmap=none \
	"${MD_DEVS[@]}" >/dev/null 2>&1 || fail "mdadm --create"
SECONDS=0
"$BLK" run --out "$mdcap" --devs "/dev/md0 ${MD_DEVS[*]}" -- \
	"$BLK" replay "$cap" --dev "$v" --target /dev/md0 --asap >/tmp/bt-replay.json || fail "replay on md0"
note "replay on md0 (--asap), captured: ${SECONDS}s"
vals=$(jvals /tmp/bt-replay.json 'rw=j["jobs"][0]["write"]["total_ios"]' \
	'rr=j["jobs"][0]["read"]["total_ios"]' 'rb=j["jobs"][0]["write"]["io_bytes"]') || fail "reading fio's JSON"
eval "$vals"
note "replayed on md0: $rw writes ($rb bytes), $rr reads; captured on the volume: $vw writes, $vr reads"
[ "$rw" -eq "$vw" ] && [ "$rr" -eq "$vr" ] || fail "fio replayed $rw writes/$rr reads, captured $vw/$vr"
[ "$rb" -eq $((vw * 4096)) ] || fail "fio replayed $rb bytes, expected $((vw * 4096))"
"$BLK" summary "$mdcap" --json-file "$mdcap/summary.json" >/dev/null || fail "summary of the md capture"
vals=$(jvals "$mdcap/summary.json" 'mdw=j["volume"]["writes"]' \
	'mdwpw=j["volume"]["member_writes_per_volume_write"]' \
	'mdrpw=j["volume"]["member_reads_per_volume_write"]' 'mdcv=j["volume"]["member_queued_ios_cv"]') ||
	fail "reading the md summary"
eval "$vals"
if [ "$mdw" -ne "$vw" ]; then
	# What blktrace and blkparse said, to tell lost events from lost I/O.
	sed 's/^/    #   /' "$mdcap/blktrace.log" | tail -n 20
	blkparse -i md0 -D "$mdcap" 2>&1 | grep -E 'Queued|Dispatches|Completed|Skips|dropped' | sed 's/^/    #   /' | head -n 20
	fail "md0 queued $mdw writes during the replay, expected $vw"
fi
note "md0 on the same I/O: member writes per write $mdwpw, member reads per write $mdrpw, CV $mdcv"
mdadm --stop /dev/md0 >/dev/null
