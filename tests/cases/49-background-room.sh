#!/bin/bash
# A background operation (resync, rebuild, scrub, migration) starts while
# user writes keep the stripe cache full. Up to 1.11.14 it needed room in
# the cache like a user's operation, and the deferred bios took every entry
# an ending operation gave back, so under a saturating load the background
# work made little or no progress (a review of 1.11.13 found it); now it
# takes its entries beyond the cap, and user operations keep all of it
# (KUnit rs_op_cache_background).
#
# 4 members behind dm-linear, 64 KiB chunks, the least stripe_cache (64:
# one scrub operation of 4 stripes takes all of it). Sequential 1 MiB
# writes at queue depth 32 in the volume's second half; member 3 is then
# suspended, so the writes in flight hold their entries and the others
# wait in the deferred queue, and nothing moves. Then `check`: its first
# operation (stripes 0-3, far from the writes) must read its chunks from
# members 0-2 while member 3 is still held. Up to 1.11.14 it never started:
# no member read a sector. Then member 3 is resumed: the writes end, the
# check runs to its end and finds no mismatch.
. "$REPO/tests/lib.sh"
t_linear_members rsbg 4
t_create rsbr 128 stripe_cache 64
v=/dev/mapper/rsbr
[ "$(t_opstat rsbr stripe_cache)" = 64 ] || fail "stripe_cache $(t_opstat rsbr stripe_cache), want 64"
# rd_sectors <member>: sectors read from that member's dm-linear device
rd_sectors() { awk '{print $3}' "/sys/block/$(basename "$(readlink -f "${T_DEVS[$1]}")")/stat"; }
io_sectors() { awk '{print $3 + $7}' "/sys/block/$(basename "$(readlink -f "${T_DEVS[$1]}")")/stat"; }

fio --name=load --filename=$v --direct=1 --ioengine=libaio --rw=write --bs=1m --iodepth=32 \
	--offset=$((T_LEN / 2 / 2048))m --time_based --runtime=30 >/tmp/fio-load.out 2>&1 &
load=$!
# Until the load has written 16 MiB (its first write waits for the bitmap,
# which a member held before would hold too: no operation would start).
vwr() { awk '{print $7}' "/sys/block/$(basename "$(readlink -f $v)")/stat"; }
for t in $(seq 300); do
	[ "$(vwr)" -ge 32768 ] && break
	kill -0 $load 2>/dev/null || { tail -5 /tmp/fio-load.out; fail "the load ended"; }
	sleep 0.2
done
[ "$(vwr)" -ge 32768 ] || fail "the load wrote $(vwr) sectors in 60 s"
d0=$(t_opstat rsbr deferred)
dmsetup suspend --noflush rsbg3 || fail "suspend member 3"
# Until nothing moves on member 0 for 1 s (every write in flight waits for
# member 3).
prev=-1
for t in $(seq 60); do
	cur=$(io_sectors 0)
	[ "$cur" = "$prev" ] && break
	prev=$cur
	sleep 1
done
[ "$cur" = "$prev" ] || { dmsetup resume rsbg3; fail "member 0 still busy after 60 s"; }
used=$(t_opstat rsbr stripe_cache_used) d1=$(t_opstat rsbr deferred)
note "member 3 held: stripe cache $used of 64 used, $((d1 - d0)) bios deferred since the load began"
[ "$used" -gt 0 ] && [ "$d1" -gt "$d0" ] ||
	{ dmsetup resume rsbg3; fail "the load does not fill the stripe cache: the case needs a rework"; }

for i in 0 1 2; do r0[i]=$(rd_sectors $i); done
dmsetup message rsbr 0 check || { dmsetup resume rsbg3; fail "check"; }
sleep 3
for i in 0 1 2; do got[i]=$(($(rd_sectors $i) - r0[i])); done
note "sectors the check read in 3 s with member 3 held: ${got[*]} (members 0-2)"
dmsetup resume rsbg3 || fail "resume member 3"
wait $load || { tail -5 /tmp/fio-load.out; fail "the load failed"; }
for i in 0 1 2; do
	# The first operation's 4 chunks of 64 KiB on each member: 512 sectors.
	[ "${got[i]}" -ge 512 ] ||
		fail "the check did not start while user writes filled the stripe cache (member $i read ${got[i]} sectors)"
done
t_idle rsbr 120 || fail "the check did not end after member 3 came back"
mm=$(t_opstat rsbr mismatch_cnt)
note "check ended after the load: mismatch_cnt $mm"
[ "$mm" = 0 ] || fail "check found $mm mismatched sectors"
dmsetup remove --retry rsbr
t_parity
