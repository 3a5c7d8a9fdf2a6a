#!/bin/bash
# A member that fails in a superblock commit (its superblock write fails)
# must supersede the degraded-write log's records as any other member
# failure does: a new log nonce, so that no record of the earlier state is
# replayed over updates that were not logged since. Four dm-linear members,
# a volume of 240 stripes; member 1 is rebuilt (min and max_recovery_rate
# 80 KiB/s). With the rebuild held (the frozen message), 4 KiB are written
# to member 0's chunk of a stripe S ahead of it: the degraded-write log
# records the update (member 1 holds no data there yet). Once the rebuild
# has passed S, 4 KiB to member 2's chunk (member 1 is written too, and the
# update is not logged). Then, the rebuild held again, member 1's dm-linear
# is reloaded with the `error` target over its superblock copies (sectors
# 2048-2063, rainssd-sb.h) and nothing else, so that the rebuild's next
# periodic checkpoint commit fails it; once member 0's superblock says
# member 1 failed, a power cut (case 34's), and the volume created again
# with "-" for member 1: every byte of it, member 1's chunk of S (rebuilt
# from the parity) above all, must be what was written, and the log nonce
# in member 0's superblock must have changed.
# Up to 1.11.10 a member failed in a commit kept the log nonce (and raised
# no dm event, nor kicked the sync): the superblocks said member 1 failed,
# so the activation replayed the log from stripe 0, the first record among
# it, and made S's parity from member 0's new bytes and member 2's old ones:
# member 1's chunk of S read back as bytes nobody wrote, and `rebuild 1`
# would have written them onto member 1 (found by a helper's review).
#
# Environment: S (a multiple of 4: parity on member 3, data on 0, 1, 2;
# default the first at least 8 stripes ahead of the rebuild), RATE (KiB/s,
# default 80).
. "$REPO/tests/lib.sh"
CHUNK=16
N=4
VOL=rscn
STRIPES=240
LEN=$((STRIPES * CHUNK * (N - 1)))
BYTES=$((LEN * 512))
RATE=${RATE:-80}

table() { echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[*]} $*"; }
cp_now() { t_sync_stripe $VOL $CHUNK; }
# wait_cp <stripe>: until the rebuild in memory is past it
wait_cp() { t_wait_sync_past $VOL $CHUNK "$1"; }
# blk <stripe> <data member 0-2>: the 4 KiB block at the start of that
# member's chunk of that stripe (8 KiB chunks, 3 per stripe)
blk() { echo $(($1 * 6 + $2 * 2)); }
new_block() {
	head -c 4096 /dev/urandom | dd of="$1" bs=4096 seek=$(blk "$2" "$3") conv=notrunc status=none
}
put() {
	dd if="$1" of=/dev/mapper/$VOL bs=4096 skip=$(blk "$2" "$3") seek=$(blk "$2" "$3") \
		count=1 oflag=direct status=none
}
# sb_m0: member 1's state and the log nonce in the newest superblock copy
# on member 0, read directly (rainssd-sb.h: events at 32, log_nonce at 96,
# the member table at 136, 16 bytes each)
sb_m0() {
	local o=0 st
	dd if=/dev/mapper/rscn0 of=/tmp/cn.sb bs=4096 skip=256 count=2 iflag=direct \
		status=none || return 1
	[ "$(od -An -t u8 -j 32 -N 8 /tmp/cn.sb)" -ge "$(od -An -t u8 -j 4128 -N 8 /tmp/cn.sb)" ] ||
		o=4096
	st=$(od -An -t u1 -j $((o + 152)) -N 1 /tmp/cn.sb)
	case $st in *1) st=in_sync ;; *2) st=failed ;; *3) st=rebuilding ;; esac
	echo "$st $(od -An -t x8 -j $((o + 96)) -N 8 /tmp/cn.sb | tr -d ' ')"
}

# The pattern written over $STRIPES stripes, the volume created again to
# rebuild member 1.
t_linear_members rscn $N
head -c $BYTES /dev/urandom >/tmp/cn.pat
table 1 nosync | dmsetup create $VOL || fail "create"
dd if=/tmp/cn.pat of=/dev/mapper/$VOL bs=1M oflag=direct conv=fsync status=none || fail "write"
dmsetup remove --retry $VOL || fail "remove"
table 7 nosync rebuild 1 min_recovery_rate $RATE max_recovery_rate $RATE |
	dmsetup create $VOL || fail "create with rebuild 1"

# The rebuild held while stripe S is chosen ahead of it and written.
dmsetup message $VOL 0 frozen || fail "frozen"
c=$(cp_now)
S=${S:-$(( (c + 8 + N - 1) / N * N ))}
[ $((S % N)) = 0 ] || fail "S must be a multiple of $N (parity on member 3, data on 0, 1, 2)"
[ "$c" -lt "$S" ] && [ $((S + 100)) -lt $STRIPES ] ||
	fail "the rebuild is at stripe $c: no room for S $S"
cp /tmp/cn.pat /tmp/cn.new
new_block /tmp/cn.new $S 0
new_block /tmp/cn.new $S 2
put /tmp/cn.new $S 0 || fail "write 1 (member 0's chunk of stripe $S)"
dmsetup message $VOL 0 idle || fail "idle"
wait_cp $((S + 1))
put /tmp/cn.new $S 2 || fail "write 2 (member 2's chunk of stripe $S)"
dmsetup message $VOL 0 frozen || fail "frozen"
c=$(cp_now)
sb=$(sb_m0) || fail "member 0's superblock cannot be read"
nonce0=${sb#* }

# Member 1's superblock copies fail from now on; nothing else of it does.
# The rebuild goes on: its next checkpoint commit fails member 1.
dmsetup suspend rscn1 &&
	printf '0 2048 linear /dev/rsch1 0\n2048 16 error\n2064 %d linear /dev/rsch1 2064\n' \
		$((SZ - 2064)) | dmsetup load rscn1 &&
	dmsetup resume rscn1 || fail "member 1's superblock area as the error target"
dmsetup message $VOL 0 idle || fail "idle"
for t in $(seq 300); do
	[ "$(t_status_field $VOL 2)" = ADAA ] && break
	sleep 0.2
done
[ "$(t_status_field $VOL 2)" = ADAA ] ||
	fail "member 1 not failed by a commit (health $(t_status_field $VOL 2), rebuild at $(cp_now))"
for t in $(seq 100); do
	sb=$(sb_m0) || sb="unreadable -"
	[ "${sb% *}" = failed ] && break
	sleep 0.2
done
[ "${sb% *}" = failed ] || fail "member 0's superblock says member 1 is ${sb% *}, not failed"
nonce1=${sb#* }
note "member 1 failed in a commit with the rebuild past stripe $c (S $S); log nonce on member 0 $nonce0, then $nonce1"
dmesg | grep -E 'superblock (write|flush) failed|member 1 .*failed' | tail -2 | sed 's/^/    # /' || true

# The power cut, and the volume again with member 1 out.
t_cut_members rscn $N
dmsetup remove --retry $VOL || fail "remove after the cut"
t_uncut_members rscn $N
mark=$(dmesg | wc -l)
echo "0 $LEN rainssd $CHUNK $N ${T_DEVS[0]} - ${T_DEVS[2]} ${T_DEVS[3]} 1 nosync" |
	dmsetup create $VOL || fail "created again with member 1 out: $(dmesg | tail -2)"
dmesg | tail -n +$((mark + 1)) | grep -E 'replayed|dirty' | sed 's/^/    # /' || true
dd if=/dev/mapper/$VOL of=/tmp/cn.rd bs=4096 skip=$(blk $S 1) count=1 iflag=direct status=none ||
	fail "member 1's chunk of stripe $S cannot be read"
cmp -s /tmp/cn.rd <(dd if=/tmp/cn.pat bs=4096 skip=$(blk $S 1) count=1 status=none) ||
	fail "member 1's chunk of stripe $S read back made-up bytes (rebuilt from a parity the replay of a superseded log record made)"
cmp <(dd if=/dev/mapper/$VOL bs=1M iflag=direct status=none) /tmp/cn.new ||
	fail "the volume does not read back as written"
note "the volume reads back as written, member 1's chunk of stripe $S rebuilt right"
[ "$nonce0" != "$nonce1" ] || fail "the log nonce did not change when member 1 failed in the commit"
dmsetup remove --retry $VOL || fail "remove"
exit 0
