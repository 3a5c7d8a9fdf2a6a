#!/bin/bash
# Online scrub with dm-raid's sync_action words: `check` counts the sectors
# whose parity disagrees with the data (mismatch_cnt) without changing any;
# `repair` rewrites that parity; a second `check` finds nothing. A mismatch
# is planted by writing one member directly. `frozen` holds a scrub and a
# later `check` goes on from where it was; `idle` stops it. check is
# refused while a member is failed. A scrub commits no superblock.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64 --lat-us 50
t_create rsc 32 max_recovery_rate 8192
v=/dev/mapper/rsc
t_fio data $v --rw=write --bs=1m --iodepth=4 --size=48m --verify=crc32c --do_verify=0

# wait_idle <seconds>
wait_idle() {
	t_idle rsc "$1" || fail "still $(t_opstat rsc sync_action) at $(t_opstat rsc sync_ratio) after $1 s"
}

dmsetup message rsc 0 check || fail "check"
[ "$(t_opstat rsc sync_action)" = check ] || fail "sync_action $(t_opstat rsc sync_action)"
wait_idle 300
[ "$(t_opstat rsc mismatch_cnt)" = 0 ] || fail "mismatches on a clean volume"
note "check on a clean volume: 0 mismatches"

# Plant: 3 sectors of garbage in member 1's data area, stripe 5 (rows 2-4).
dd if=/dev/urandom of="${T_DEVS[1]}" bs=512 seek=$((32768 + 5 * 32 + 2)) count=3 \
	oflag=direct conv=notrunc status=none
dmsetup message rsc 0 check
wait_idle 300
mm=$(t_opstat rsc mismatch_cnt)
note "check after planting 3 bad sectors: mismatch_cnt $mm"
[ "$mm" = 3 ] || fail "check found $mm mismatched sectors, want 3"
dmsetup suspend rsc
"$CHECK" --length "$T_LEN" "$T_CHUNK" "${T_DEVS[@]}" >/dev/null && fail "check changed the parity"
dmsetup resume rsc

# frozen holds a scrub; check again goes on; idle stops one.
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
sleep 2
[ "$(t_opstat rsc sync_action)" = frozen ] || fail "frozen: $(t_opstat rsc sync_action)"
[ "$(t_opstat rsc sync_ratio | cut -d/ -f1)" = "$done1" ] || fail "a frozen scrub moved"
dmsetup message rsc 0 max_recovery_rate 200000
dmsetup message rsc 0 repair
note "repair frozen at $done1 sectors, then went on"
wait_idle 300
mm=$(t_opstat rsc mismatch_cnt)
note "repair: mismatch_cnt $mm"
[ "$mm" = 3 ] || fail "repair counted $mm, want 3"
dmsetup message rsc 0 check
wait_idle 300
[ "$(t_opstat rsc mismatch_cnt)" = 0 ] || fail "mismatches after repair"
dmsetup suspend rsc
t_parity
dmsetup resume rsc
dmsetup message rsc 0 check
dmsetup message rsc 0 idle
[ "$(t_opstat rsc sync_action)" = idle ] || fail "idle did not stop the check"
# The planted sectors were member 1's data: the data there is what dd wrote,
# the parity now agrees with it. Everything else verifies.
dmsetup message rsc 0 fail 2
if dmsetup message rsc 0 check 2>/dev/null; then fail "check accepted with a member failed"; fi
note "check refused while degraded"
