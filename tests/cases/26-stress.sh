#!/bin/bash
# Stress for a bounded time (STRESS_SECS, default 60): three fio verify jobs
# (verify_backlog: each block checked soon after it is written, under
# everything below) while a loop suspends and resumes the volume, reloads
# its table (the printed one, and with other options), sends messages
# (policies, stripe_cache, check and idle, frozen and idle, stats_reset)
# and, half way, fails a member. Every dmsetup call must return within 120
# s (no operation waits for ever), fio must verify every block, and the
# kernel log must stay clean (the runner checks it).
. "$REPO/tests/lib.sh"
SECS=${STRESS_SECS:-$(t_size 30 60)}
t_channels 4 --size-mb 96 --lat-us 200 --qd 8
t_create rsst 16 policy adaptive read_policy adaptive
v=/dev/mapper/rsst

fio --name=stress --filename=$v --direct=1 --ioengine=libaio "${T_FIO_ORDER[@]}" --rw=randwrite \
	--bsrange=4k-64k --blockalign=4k --iodepth=8 --numjobs=3 --size=16m \
	--offset_increment=20m --verify=crc32c --verify_backlog=32 --verify_fatal=1 \
	--verify_dump=0 --loops=1000 --runtime=$((SECS + 30)) \
	--output=/tmp/stress.fio >/dev/null 2>&1 &
fpid=$!
sleep 3

# dm <args...>: a dmsetup call that must come back.
dm() {
	timeout 120 dmsetup "$@" >/dev/null 2>/tmp/stress.dm
	local rc=$?
	[ $rc -ne 124 ] || { kill $fpid 2>/dev/null; fail "dmsetup $* did not return in 120 s"; }
	return $rc
}

msgs=("policy rcw" "policy rmw" "policy count" "policy adaptive" "read_policy reconstruct"
	"read_policy direct" "read_policy adaptive" "stripe_cache 512" "stripe_cache 256"
	"stats_reset" "frozen" "idle" "check" "idle")
end=$(( $(date +%s) + SECS )) half=$(( $(date +%s) + SECS / 2 )) failed=0 rounds=0 refused=0
while [ "$(date +%s)" -lt $end ]; do
	kill -0 $fpid 2>/dev/null || break
	rounds=$((rounds + 1))
	dm suspend rsst || fail "suspend"
	dm resume rsst || fail "resume"
	tbl=$(dmsetup table rsst)
	case $((rounds % 3)) in
	0) new=$tbl ;;
	1) new=$(echo "$tbl" | sed 's/policy adaptive/policy rcw/') ;;
	2) new=$tbl ;;
	esac
	dm reload rsst --table "$new" || fail "reload: $new: $(cat /tmp/stress.dm)"
	dm suspend rsst || fail "suspend for the reload"
	dm resume rsst || fail "resume the reloaded table"
	for m in "${msgs[@]}"; do
		# check is refused once degraded; any other refusal is a failure
		if ! dm message rsst 0 $m; then
			[ $failed = 1 ] && [ "$m" = check ] || fail "message $m refused"
			refused=$((refused + 1))
		fi
	done
	if [ $failed = 0 ] && [ "$(date +%s)" -ge $half ]; then
		dm message rsst 0 fail 2 || fail "fail 2"
		failed=1
	fi
done
[ $failed = 1 ] || fail "the member failure was never reached ($rounds rounds)"
wait $fpid
rc=$?
grep -E "err=|verify" /tmp/stress.fio | head -5 | sed 's/^/    # /'
[ $rc = 0 ] || fail "fio verify failed (exit $rc) under the stress loop"
note "$rounds rounds of suspend/resume, reload and ${#msgs[@]} messages in $SECS s; member 2 failed half way; check refused $refused times while degraded; fio verified"
note "status: $(dmsetup status rsst)"
[ "$(t_status_field rsst 2)" = AADA ] || fail "health after the stress: $(t_status_field rsst 2)"
