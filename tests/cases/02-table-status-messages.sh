#!/bin/bash
# The table round-trips, status has every field, messages work and bad ones
# are refused with -EINVAL.
. "$REPO/tests/lib.sh"
t_channels 4 --size-mb 64
t_create rs0 64 policy rcw
majmin() { local h; h=$(stat -L -c '%t %T' "$1"); set -- $h; printf '%d:%d' "0x$1" "0x$2"; }
want="0 $T_LEN rainssd 64 4"
for d in "${T_DEVS[@]}"; do want+=" $(majmin "$d")"; done
want+=" 2 policy rcw"
got=$(dmsetup table rs0)
[ "$got" = "$want" ] || fail "table: '$got' != '$want'"
note "table round-trips: $got"
# Reload the printed table: it must be accepted as is.
dmsetup reload rs0 --table "$got" && dmsetup resume rs0 || fail "reload of the printed table"

st=$(dmsetup status rs0)
note "status: $st"
set -- $st
[ $# -eq 15 ] || fail "status has $# words, want 15"
[ "$4" = 1.0.0 ] && [ "$5" = 4 ] && [ "$6" = AAAA ] && [ "${15}" = rcw ] || fail "status fields"

dmsetup message rs0 0 policy rmw || fail "policy rmw"
[ "$(t_status_field rs0 11)" = rmw ] || fail "policy not switched"
[ "$(dmsetup table rs0 | awk '{print $NF}')" = rmw ] || fail "table does not show the policy"
dmsetup message rs0 0 policy count
[ "$(dmsetup table rs0 | wc -w)" -eq 9 ] || fail "default policy shown in table"

for bad in "policy" "policy fastest" "fail" "fail 4" "fail -1" "fail x" "frobnicate" "fail 1 2"; do
	if dmsetup message rs0 0 $bad 2>/dev/null; then fail "message accepted: $bad"; fi
done
note "bad messages refused"
dmsetup message rs0 0 fail 2 || fail "fail 2"
[ "$(t_status_field rs0 2)" = AADA ] || fail "health after fail 2: $(t_status_field rs0 2)"
dmsetup status rs0
