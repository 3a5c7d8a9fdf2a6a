#!/bin/bash
# The table round-trips (with every optional argument), status has every
# field, messages work and bad ones are refused with -EINVAL.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64
t_create rs0 64 policy rcw
majmin() { local h; h=$(stat -L -c '%t %T' "$1"); set -- $h; printf '%d:%d' "0x$1" "0x$2"; }
want="0 $T_LEN rainssd 64 4"
for d in "${T_DEVS[@]}"; do want+=" $(majmin "$d")"; done
base=$want
want+=" 3 policy rcw nosync"
got=$(dmsetup table rs0)
[ "$got" = "$want" ] || fail "table: '$got' != '$want'"
note "table round-trips: $got"
# Reload the printed table: it must be accepted as is.
dmsetup reload rs0 --table "$got" && dmsetup resume rs0 || fail "reload of the printed table"

st=$(dmsetup status rs0)
note "status: $st"
set -- $st
# 3 words of dmsetup, 12 basic, read_policy, 5 counters, rebuild_us, one
# word per member, then the operation layer's 8 (1.3.0), 4 (1.4.0),
# mismatch_cnt (1.5.0), the tier's 9 (1.7.0) and joined_writes (1.11.0)
[ $# -eq 49 ] || fail "status has $# words, want 49"
# No tier: 0/0 stripes, no migration, the table rw; no write joined yet.
[ "${40}" = 0/0 ] && [ "${46}" = idle ] && [ "${47}" = rw ] && [ "${48}" = - ] &&
	[ "${49}" = 0 ] || fail "tier and joined fields without a tier or writes: ${*:40}"
[ "$4" = 1.11.23 ] && [ "$5" = 4 ] && [ "$6" = AAAA ] && [ "${15}" = rcw ] && [ "${16}" = direct ] &&
	[ "${22}" = 0 ] || fail "status fields"
for w in "${@:23:4}"; do
	# 1.6.0: 12 numbers (the others' load on the member's device appended)
	[[ $w =~ ^([0-9]+:){11}[0-9]+$ ]] || fail "member word '$w'"
done
# No I/O yet: no stripe-cache entry in use, the default cache of 256 entries.
[ "${27}" = 0 ] && [ "${28}" = 256 ] || fail "stripe cache fields: ${27} ${28}"
# nosync: nothing to resync; no read errors, nothing repaired.
[ "${36}" = idle ] && [ "${35}" = "$(( (T_LEN / 3) ))/$(( (T_LEN / 3) ))" ] ||
	fail "sync fields: ${35} ${36}"
[ "${37}" = 0:0:0:0 ] && [ "${38}" = 0:0:0:0 ] || fail "read error fields: ${37} ${38}"
[ "${39}" = 0 ] || fail "mismatch_cnt before any check: ${39}"

dmsetup message rs0 0 policy rmw || fail "policy rmw"
[ "$(t_status_field rs0 11)" = rmw ] || fail "policy not switched"
[[ "$(dmsetup table rs0)" == *" policy rmw "* ]] || fail "table does not show the policy: $(dmsetup table rs0)"
dmsetup message rs0 0 policy count
[ "$(dmsetup table rs0 | wc -w)" -eq 11 ] || fail "default policy shown in table: $(dmsetup table rs0)"

# Every optional argument by message; the table shows the non-defaults in a
# fixed order, and a table carrying all of them loads and round-trips.
dmsetup message rs0 0 policy adaptive
dmsetup message rs0 0 read_policy adaptive
dmsetup message rs0 0 stripe_cache 512
[ "$(t_opstat rs0 stripe_cache)" = 512 ] || fail "stripe_cache not in status"
dmsetup message rs0 0 ewma_weight 32
dmsetup message rs0 0 freq_window 64
dmsetup message rs0 0 stall_factor 0
dmsetup message rs0 0 xor_ns 0
dmsetup message rs0 0 probe_ms 250
dmsetup message rs0 0 recon_load_pct 0
full="$base 19 policy adaptive read_policy adaptive stripe_cache 512 nosync ewma_weight 32 freq_window 64 stall_factor 0 xor_ns 0 probe_ms 250 recon_load_pct 0"
[ "$(dmsetup table rs0)" = "$full" ] || fail "table after messages: $(dmsetup table rs0)"
[ "$(t_status_field rs0 12)" = adaptive ] || fail "read_policy not shown in status"
dmsetup message rs0 0 freq_window 128   # the default again: not shown
[[ "$(dmsetup table rs0)" != *freq_window* ]] || fail "default freq_window shown"
dmsetup remove --retry rs0
echo "$full" | dmsetup create rs0 || fail "create with every optional argument"
[ "$(dmsetup table rs0)" = "$full" ] || fail "full table does not round-trip"
dmsetup message rs0 0 read_policy reconstruct || fail "read_policy reconstruct"
[ "$(t_status_field rs0 12)" = reconstruct ] || fail "read_policy reconstruct not shown"

for bad in "policy" "policy fastest" "read_policy count" "fail" "fail 4" "fail -1" "fail x" \
	"frobnicate" "fail 1 2" "ewma_weight 0" "ewma_weight" "probe_ms x" "stats_reset now" \
	"xor_ns 99999999" "recon_load_pct 1001" "stripe_cache 63" "stripe_cache 32769" \
	"stripe_cache x" "nosync" "nosync 1" "rebuild 1" "max_recovery_rate 10" \
	"min_recovery_rate 300000" "max_corr_read_errors x" "region_size 1024" "check now" \
	"repair 1" "frozen x" "idle 0"; do
	if dmsetup message rs0 0 $bad 2>/dev/null; then fail "message accepted: $bad"; fi
done
note "bad messages refused"
[ "$(dmsetup table rs0)" = "${full/read_policy adaptive/read_policy reconstruct}" ] ||
	fail "a refused message changed the table: $(dmsetup table rs0)"

# Counters move with I/O, stats_reset zeroes them and only them.
dd if=/dev/zero of=/dev/mapper/rs0 bs=4k count=64 oflag=direct 2>/dev/null
dd if=/dev/mapper/rs0 of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null
[ "$(t_status_field rs0 4)" -gt 0 ] && [ "$(t_status_field rs0 3)" -gt 0 ] || fail "counters did not move"
[ "$(t_status_field rs0 16)" -gt 0 ] || fail "read_policy reconstruct rebuilt nothing"
rebuild=$(t_status_field rs0 18)
[ "$rebuild" -gt 0 ] || fail "no rebuild cost measured after rebuilt reads: $rebuild"
dmsetup message rs0 0 stats_reset || fail "stats_reset"
st=$(dmsetup status rs0)
set -- $st
for i in 7 8 9 10 11 12 13 14 17 18 19 20 21; do
	[ "${!i}" = 0 ] || fail "counter $i is ${!i} after stats_reset: $st"
done
[ "${22}" -gt 0 ] || fail "stats_reset cleared the rebuild cost estimate: $st"
for w in "${@:23:4}"; do
	IFS=: read -r _ _ _ _ _ _ pre rec byp stl _ <<<"$w"
	[ "$pre$rec$byp$stl" = 0000 ] || fail "member counters after stats_reset: $w"
done
# The operation layer's: nothing in use, the peak and the counters zeroed.
for i in 27 29 30 31 32 33 34; do
	[ "${!i}" = 0 ] || fail "operation-layer field $i is ${!i} after stats_reset: $st"
done
note "stats_reset: $st"

dmsetup message rs0 0 fail 2 || fail "fail 2"
[ "$(t_status_field rs0 2)" = AADA ] || fail "health after fail 2: $(t_status_field rs0 2)"
dmsetup status rs0
