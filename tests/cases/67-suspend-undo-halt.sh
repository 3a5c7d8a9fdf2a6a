#!/bin/bash
# A rebuild stopped by a read error on another member stays stopped
# (`frozen`) until the next resume; a suspend that is interrupted (its
# wait for the I/O in flight cut short by a signal: dm undoes the
# presuspend) is not a resume. Up to 1.11.22 the undo started the rebuild
# again as a resume does: it read the failing stretch again, met the error
# again, and each interrupted suspend counted it once more (found by a
# review of 1.11.22).
#
# Four dm-linear members; member 3 failed and rebuilt from stripe 0; a
# null_blk bad block on member 0's chunk of stripe S stops the rebuild
# there. A write held 20 s by dm-delay (member 1's data area) keeps the
# volume's suspend waiting; SIGTERM ends that suspend. The rebuild must not
# have run again: no second "stopped at stripe" in the kernel log, and
# status still frozen. Then the bad block goes, a resume, and the rebuild
# ends.
. "$REPO/tests/lib.sh"
CHUNK=16
VOL=rssu
S=200
MS=$((32768 + S * CHUNK))	# member 0's chunk of S (RS_DATA_OFFSET 32768)
cleanup() { echo "-$MS-$((MS + CHUNK - 1))" >/sys/kernel/config/nullb/rsch0/badblocks 2>/dev/null; }
trap cleanup EXIT
t_linear_members rssum 4
t_create $VOL $CHUNK
v=/dev/mapper/$VOL
dd if=/dev/urandom of=$v bs=1M count=8 oflag=direct status=none || fail "write"
dmsetup message $VOL 0 fail 3 || fail "fail 3"
echo "+$MS-$((MS + CHUNK - 1))" >/sys/kernel/config/nullb/rsch0/badblocks || fail "badblocks"
mark=$(dmesg | wc -l)
dmsetup suspend $VOL
dmsetup reload $VOL --table "$(t_table $CHUNK "$T_LEN" rebuild 3 nosync)" || fail "reload with rebuild 3"
dmsetup resume $VOL || fail "resume with rebuild 3"
stops() { dmesg | tail -n +$((mark + 1)) | grep -c 'stopped at stripe' || true; }
for t in $(seq 300); do
	[ "$(stops)" -ge 1 ] && [ "$(t_opstat $VOL sync_action)" = frozen ] && break
	sleep 0.2
done
[ "$(stops)" = 1 ] || fail "the rebuild did not stop once at the bad block: $(stops) stops, $(t_opstat $VOL sync_action)"
re0=$(t_opstat $VOL read_errors)
note "the rebuild stopped at the bad block: $(t_opstat $VOL sync_action) at $(t_opstat $VOL sync_ratio), read errors $re0"

# A write in flight for 20 s, and a suspend interrupted while it waits.
t_delay_writes rssum 1 20000
dd if=/dev/urandom of=$v bs=24k count=1 seek=1 oflag=direct status=none &
writer=$!
sleep 2
dmsetup suspend --noudevsync $VOL &
susp=$!
sleep 3
kill -TERM $susp	# (a background job ignores SIGINT)
rc=0
wait $susp || rc=$?
note "the suspend interrupted: exit $rc, the volume $(dmsetup info -c --noheadings -o attr $VOL)"
[ "$rc" != 0 ] || fail "the suspend was not interrupted (it ended before the signal): the case tests nothing"
[ "$(dmsetup info -c --noheadings -o attr $VOL | cut -c3)" != s ] || fail "the volume stayed suspended"
sleep 5
note "5 s later: $(t_opstat $VOL sync_action) at $(t_opstat $VOL sync_ratio), read errors $(t_opstat $VOL read_errors), $(stops) stop(s) logged"
[ "$(stops)" = 1 ] || fail "the interrupted suspend started the halted rebuild again: $(stops) stops logged"
[ "$(t_opstat $VOL sync_action)" = frozen ] || fail "sync_action $(t_opstat $VOL sync_action), want frozen"
[ "$(t_opstat $VOL read_errors)" = "$re0" ] || fail "read errors $re0, then $(t_opstat $VOL read_errors)"
wait $writer || fail "the held write failed"

# The bad block gone and a resume: the rebuild goes on to its end.
cleanup
dmsetup suspend rssum1 && dmsetup load rssum1 --table "0 $SZ linear /dev/rsch1 0" &&
	dmsetup --noudevsync resume rssum1 || fail "member 1's linear table back"
dmsetup suspend $VOL && dmsetup resume $VOL || fail "suspend and resume"
t_idle $VOL 300 || fail "the rebuild did not end: $(t_opstat $VOL sync_action) at $(t_opstat $VOL sync_ratio)"
[ "$(t_status_field $VOL 2)" = AAAA ] || fail "health $(t_status_field $VOL 2) after the rebuild"
dmsetup suspend $VOL
t_parity
dmsetup resume $VOL
