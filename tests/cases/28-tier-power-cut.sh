#!/bin/bash
# The power cuts of case 22 with the RAID1 tier on: 8 MiB of every member,
# filling under the writers, so that cuts land while stripes enter the tier
# (first writes, online migration), go home (aligned full stripes, the
# offline migration) and, at every other healthy cut point, while
# flush_tier runs. Every block must hold its newest acknowledged write or a
# later issued one, healthy and with a member failed after the cut or before
# it. The protection-off control is case 22's. Cut points: 2 in make test
# (healthy with flush_tier, degraded), 4 in make test-full (and healthy
# without flush_tier); `make test-crash` runs many more (TIER_CUTS).
[ "${TEST_FULL:-0}" = 1 ] && cuts=4 || cuts=2
export TIER=${TIER:-16384} TIER_FLUSH=${TIER_FLUSH:-1} NOPROTECT_CUTS=0 CUTS=${CUTS:-$cuts}
exec bash "$REPO/tests/cases/22-power-cut.sh"
