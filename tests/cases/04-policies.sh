#!/bin/bash
# Each parity-update policy gives the same verified data and correct parity,
# and the counters show that the policy was followed.
. "$REPO/tests/lib.sh"
t_channels 5 --size-mb 64
t_create rsp 32
v=/dev/mapper/rsp
for p in count rmw rcw; do
	dmsetup message rsp 0 policy "$p"
	before_rmw=$(t_status_field rsp 6) before_rcw=$(t_status_field rsp 7)
	t_fio_verify "pol-$p" $v --rw=randwrite --bsrange=512-48k --blockalign=512 \
		--iodepth=8 --size=12m --offset=4m
	rmw=$(( $(t_status_field rsp 6) - before_rmw ))
	rcw=$(( $(t_status_field rsp 7) - before_rcw ))
	note "policy $p: rmw $rmw rcw $rcw"
	case $p in
	rmw) [ "$rcw" -eq 0 ] && [ "$rmw" -gt 0 ] || fail "rmw policy did rcw" ;;
	rcw) [ "$rmw" -eq 0 ] && [ "$rcw" -gt 0 ] || fail "rcw policy did rmw" ;;
	count) [ "$rmw" -gt 0 ] && [ "$rcw" -gt 0 ] || fail "count policy should use both" ;;
	esac
	t_parity
done
# Aligned full-stripe writes issue no pre-reads.
pre=$(t_status_field rsp 9) full=$(t_status_field rsp 5)
t_fio "full" $v --rw=write --bs=128k --iodepth=4 --size=8m --offset=0
[ "$(t_status_field rsp 9)" -eq "$pre" ] || fail "full-stripe writes did pre-reads"
[ $(( $(t_status_field rsp 5) - full )) -eq 128 ] || fail "expected 128 full-stripe writes"
t_parity
