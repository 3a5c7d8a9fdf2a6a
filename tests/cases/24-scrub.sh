#!/bin/bash
# Online scrub with dm-raid's sync_action words: `check` counts the sectors
# whose parity disagrees with the data (mismatch_cnt) without changing any;
# `repair` rewrites that parity, never the data; a second `check` finds
# nothing. Mismatches are planted by writing members directly, at the start,
# the middle of the written data and the volume's last stripe (a scrub that
# stops early misses some). `frozen` holds a scrub and a later `repair`
# goes on from where it was; `idle` stops one. check is refused while a
# member is failed. A scrub commits no superblock.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 50
t_create rsc 32 max_recovery_rate 8192
v=/dev/mapper/rsc
N=4
# The write's job, and its verify-only pass (the same job read back).
fio_job=(--rw=write --bs=1m --iodepth=4 --size=48m --verify=crc32c)
t_fio data $v "${fio_job[@]}" --do_verify=0
fio_check() { # fio_check <what>
	t_fio data $v "${fio_job[@]}" --verify_only=1 --verify_fatal=1 --verify_dump=0
	note "$1: the data fio wrote verifies"
}

# wait_idle <seconds>
wait_idle() {
	t_idle rsc "$1" || fail "still $(t_opstat rsc sync_action) at $(t_opstat rsc sync_ratio) after $1 s"
}
# md's left-symmetric layout: stripe s's parity member, and the member
# sector of row r of its chunk on a member (the data area from 32768).
parity_of() { echo $((N - 1 - $1 % N)); }
msector() { echo $((32768 + $1 * T_CHUNK + $2)); }
# plant <file> <member> <member sector> <sectors>: that much garbage saved
# in <file>, then written there.
plant() {
	head -c $(($4 * 512)) /dev/urandom >"$1"
	dd if="$1" of="${T_DEVS[$2]}" bs=512 seek="$3" count="$4" oflag=direct conv=notrunc \
		status=none || fail "plant $4 sectors on member $2"
}
# vread <file> <volume sector> <sectors>: those sectors of the volume (O_DIRECT)
vread() {
	dd if=$v of="$1" bs=512 skip="$2" count="$3" iflag=direct status=none ||
		fail "read $3 sectors at $2 of the volume"
}

dmsetup message rsc 0 check || fail "check"
[ "$(t_opstat rsc sync_action)" = check ] || fail "sync_action $(t_opstat rsc sync_action)"
wait_idle 300
[ "$(t_opstat rsc mismatch_cnt)" = 0 ] || fail "mismatches on a clean volume"
note "check on a clean volume: 0 mismatches"

# Plant garbage in three stripes: the first near the start, one in the
# middle of what fio wrote, the volume's last; in data and in parity.
stripes=$((T_LEN / ((N - 1) * T_CHUNK)))
mid=$((48 * 2048 / ((N - 1) * T_CHUNK) / 2))
last=$((stripes - 1))
# Stripe 5: rows 2-4 of member 1's chunk, data chunk k of the stripe.
[ "$(parity_of 5)" != 1 ] || fail "member 1 holds stripe 5's parity"
k=$(((1 - $(parity_of 5) - 1 + N) % N))
dvs=$(((5 * (N - 1) + k) * T_CHUNK + 2))
# The last stripe's data (never written: zeros), read before the planting.
lvs=$((last * (N - 1) * T_CHUNK))
[ $((lvs + (N - 1) * T_CHUNK)) = "$T_LEN" ] || fail "the last stripe does not end the volume"
vread /tmp/scrub-d.orig "$dvs" 3
vread /tmp/scrub-last.orig "$lvs" $(((N - 1) * T_CHUNK))
plant /tmp/scrub-d.bad 1 "$(msector 5 2)" 3
plant /tmp/scrub-p1.bad "$(parity_of $mid)" "$(msector $mid 9)" 4
plant /tmp/scrub-p2.bad "$(parity_of $last)" "$(msector $last $((T_CHUNK - 5)))" 5
planted=12
note "planted: 3 sectors of data in stripe 5 (member 1, volume sector $dvs), 4 of parity in stripe $mid (member $(parity_of $mid)), 5 of parity ending stripe $last, the last (member $(parity_of $last))"
dmsetup message rsc 0 check
wait_idle 300
mm=$(t_opstat rsc mismatch_cnt)
note "check after planting $planted bad sectors: mismatch_cnt $mm"
[ "$mm" = $planted ] || fail "check found $mm mismatched sectors, want $planted"
# check changed no parity: rainssd-check (exit 1: bad stripes) finds all three.
dmsetup suspend rsc
rc=0
"$CHECK" --length "$T_LEN" "$T_CHUNK" "${T_DEVS[@]}" >/tmp/scrub-check.out 2>&1 || rc=$?
dmsetup resume rsc
[ $rc = 1 ] || { tail -5 /tmp/scrub-check.out; fail "rainssd-check exited $rc after the check, want 1 (bad stripes)"; }
bad=$(sed -n 's/^bad stripe \([0-9]*\):.*/\1/p' /tmp/scrub-check.out | xargs)
[ "$bad" = "5 $mid $last" ] || fail "rainssd-check after the check: bad stripes '$bad', want '5 $mid $last'"

# frozen holds a scrub; repair again goes on; idle stops one.
dmsetup message rsc 0 max_recovery_rate 1000
events() { "$REPO/userspace-tools/rainssd-admin" examine --json "${T_DEVS[0]}" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["superblock"]["events"])'; }
ev0=$(events)
dmsetup message rsc 0 repair || fail "repair"
sleep 5
# A scrub has nothing to record in the superblocks (up to 1.11.10 it
# committed them every 2 s, and a power cut in such a commit could leave
# members a generation behind).
ev1=$(events)
[ "$ev1" = "$ev0" ] || fail "5 s of repair committed the superblocks: events $ev0, then $ev1"
[ "$(t_opstat rsc sync_action)" = repair ] || fail "the repair ended before the events were read"
dmsetup message rsc 0 frozen
done1=$(t_opstat rsc sync_ratio | cut -d/ -f1)
[ "$done1" -gt 0 ] || fail "5 s of repair did nothing"
sleep 2
[ "$(t_opstat rsc sync_action)" = frozen ] || fail "frozen: $(t_opstat rsc sync_action)"
[ "$(t_opstat rsc sync_ratio | cut -d/ -f1)" = "$done1" ] || fail "a frozen scrub moved"
# Still at 1000 KiB/s: a repair that started over would be far behind.
dmsetup message rsc 0 repair
done2=$(t_opstat rsc sync_ratio | cut -d/ -f1)
[ "$(t_opstat rsc sync_action)" = repair ] || fail "repair after frozen: $(t_opstat rsc sync_action)"
[ "$done2" -ge "$done1" ] || fail "the repair started over: at $done2 sectors, frozen at $done1"
dmsetup message rsc 0 max_recovery_rate 200000
note "repair frozen at $done1 sectors, then went on (at $done2)"
wait_idle 300
mm=$(t_opstat rsc mismatch_cnt)
note "repair: mismatch_cnt $mm"
[ "$mm" = $planted ] || fail "repair counted $mm, want $planted"
dmsetup message rsc 0 check
wait_idle 300
[ "$(t_opstat rsc mismatch_cnt)" = 0 ] || fail "mismatches after repair"
dmsetup suspend rsc
t_parity
dmsetup resume rsc
# The repair rewrote parity, never data: stripe 5's planted sectors read
# as the garbage planted, the last stripe's data as before.
vread /tmp/scrub-d.now "$dvs" 3
cmp -s /tmp/scrub-d.now /tmp/scrub-d.bad || fail "stripe 5's planted data sectors read otherwise after the repair"
vread /tmp/scrub-last.now "$lvs" $(((N - 1) * T_CHUNK))
cmp -s /tmp/scrub-last.now /tmp/scrub-last.orig || fail "the last stripe's data changed in the repair"
# Stripe 5's bytes back: then all fio wrote verifies (a repair that had made
# data from stripe $mid's bad parity would fail it) and the parity is right.
dd if=/tmp/scrub-d.orig of=$v bs=512 seek="$dvs" count=3 oflag=direct conv=notrunc status=none ||
	fail "write stripe 5's bytes back"
fio_check "after the repair"
dmsetup suspend rsc
t_parity
dmsetup resume rsc

# idle stops a check that is running (throttled, so it still is).
dmsetup message rsc 0 max_recovery_rate 1000
dmsetup message rsc 0 check
[ "$(t_opstat rsc sync_action)" = check ] || fail "the check is $(t_opstat rsc sync_action) before idle"
dmsetup message rsc 0 idle
[ "$(t_opstat rsc sync_action)" = idle ] || fail "idle did not stop the check"
dmsetup message rsc 0 max_recovery_rate 200000
# Member 2 failed: its chunks are rebuilt from the parity (stripe $mid's
# and the last stripe's among them), which must be right.
dmsetup message rsc 0 fail 2
fio_check "member 2 failed"
vread /tmp/scrub-last.now "$lvs" $(((N - 1) * T_CHUNK))
cmp -s /tmp/scrub-last.now /tmp/scrub-last.orig || fail "the last stripe reads other data with member 2 failed"
if dmsetup message rsc 0 check 2>/dev/null; then fail "check accepted with a member failed"; fi
note "check refused while degraded"
