#!/bin/bash
# Rebuild onto a new member while user I/O goes on, on 3, 4 and 8 members:
# write data, fail member 1, load the table again with a blank device at
# its place and `rebuild 1` (what rainssd-admin replace does), and while the
# rebuild runs (slowed by max_recovery_rate) read the old data back and
# write new data on both sides of the checkpoint, both verified. On 4
# members the rebuild is also held (frozen) once under way, suspended and
# resumed, and the volume loaded again from the table it prints (which names
# the rebuild), mid-way: it goes on from its checkpoint. When it is done the health is all A, the parity
# is right, and with a *different* member failed every byte still verifies,
# so the rebuilt member provably holds the right data.
. "$REPO/tests/lib.sh"

# wait_idle <name> <seconds>: until the rebuild is over.
wait_idle() {
	t_idle "$1" "$2" ||
		fail "rebuild not done after $2 s: $(t_opstat "$1" sync_ratio) $(t_opstat "$1" sync_action)"
}

# done_sectors <name>: how far the rebuild is.
done_sectors() { t_opstat "$1" sync_ratio | cut -d/ -f1; }

run() { # run <members> <chunk sectors> <churn: 0|1>
	local n=$1 chunk=$2 churn=$3 spare tbl new before after
	t_teardown >/dev/null 2>&1 || true
	t_channels $((n + 1)) --size-mb 48 --lat-us 100
	spare=${T_DEVS[$n]}
	T_DEVS=("${T_DEVS[@]:0:$n}")
	t_create rsr "$chunk"
	v=/dev/mapper/rsr
	t_fio old $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=12m \
		--verify=crc32c --do_verify=0
	dmsetup message rsr 0 fail 1 || fail "fail 1"
	# The replacement: slot 1 gets the spare, rebuilt at 2 MiB/s per member.
	tbl=$(dmsetup table rsr)
	new=$(echo "$tbl" | awk -v s="$spare" '{ $7 = s; NF = 5 + '"$n"'; print }')
	new+=" 5 rebuild 1 nosync max_recovery_rate 2048"
	dmsetup suspend rsr
	dmsetup reload rsr --table "$new" || fail "reload with rebuild 1: $new"
	dmsetup resume rsr || fail "resume with rebuild 1"
	[ "$(t_status_field rsr 2 | cut -c2)" = a ] || fail "health $(t_status_field rsr 2): member 1 not rebuilding"
	[ "$(t_opstat rsr sync_action)" = recover ] || fail "sync_action $(t_opstat rsr sync_action)"
	if [ "$churn" = 1 ]; then
		# Held once under way, so that it is still mid-way at the suspend,
		# however slow the host runs fio (a reload thaws it).
		for _ in $(seq 60); do [ "$(done_sectors rsr)" -gt 0 ] && break; sleep 1; done
		dmsetup message rsr 0 frozen || fail "frozen"
		[ "$(t_status_field rsr 2 | cut -c2)" = a ] || fail "the rebuild ended before it was held"
	fi
	# While it rebuilds: the old data reads back, new data lands everywhere.
	t_fio old $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=12m \
		--verify=crc32c --verify_only=1 --verify_fatal=1
	t_fio_verify new $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 \
		--offset=16m --size=8m
	if [ "$churn" = 1 ]; then
		before=$(done_sectors rsr)
		dmsetup suspend rsr && dmsetup resume rsr || fail "suspend/resume mid-rebuild"
		tbl=$(dmsetup table rsr)
		[[ $tbl == *"rebuild 1"* ]] || fail "the table does not name the rebuild: $tbl"
		sleep 2
		dmsetup suspend rsr
		dmsetup reload rsr --table "$tbl" || fail "reload mid-rebuild"
		dmsetup resume rsr || fail "resume after reload mid-rebuild"
		after=$(done_sectors rsr)
		note "rebuild at $before sectors, after suspend/resume and a reload at $after"
		[ "$after" -gt 0 ] || fail "the reload started the rebuild again from 0"
		[ "$(t_status_field rsr 2 | cut -c2)" = a ] || fail "member 1 not rebuilding after the reload"
	fi
	wait_idle rsr 600
	[ "$(t_status_field rsr 2)" = "$(printf 'A%.0s' $(seq "$n"))" ] ||
		fail "health after the rebuild: $(t_status_field rsr 2)"
	[[ $(dmsetup table rsr) != *rebuild* ]] || fail "the table still names a rebuild"
	dmsetup suspend rsr
	T_DEVS[1]=$spare
	t_parity
	dmsetup resume rsr
	# Now lose a different member: member 1's rebuilt chunks rebuild it.
	dmsetup message rsr 0 fail 2
	t_fio old $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --size=12m \
		--verify=crc32c --verify_only=1 --verify_fatal=1
	t_fio new $v --rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8 --offset=16m \
		--size=8m --verify=crc32c --verify_only=1 --verify_fatal=1
	note "$n members: rebuilt, parity clean, verified with member 2 failed"
}
# make test: 4 members (with the hold, suspend and reload); make test-full:
# 3 and 8 as well (03-fio-verify runs 8 members in make test).
[ "$T_FULL" != 1 ] || run 3 16 0
run 4 32 1
[ "$T_FULL" != 1 ] || run 8 16 0
