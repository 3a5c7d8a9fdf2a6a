#!/bin/bash
# make test-crash: the power-cut cases (tests/cases/22-power-cut.sh and
# 23-log-writes.sh) with many cut points, in one test-kernel VM. Sets up
# and builds what it needs as make test does, runs the crash tools' host
# tests, then in the VM runs case 22 over CUTS protected cut points (and
# NOPROTECT_CUTS with the protection switched off) and case 23 over MARKS
# replayed marks, in runs of the runner small enough for its 15-minute limit
# per case. Prints the outcomes per kind and ends with `N passed, N failed`;
# exits non-zero on failure.
#
# Environment: CUTS (default 1000), NOPROTECT_CUTS (default CUTS/10), MARKS
# (default 200), TIER_CUTS (case 28: the tier on, default 200), CUTS_PER_RUN
# (default 16), MARKS_PER_RUN (default 30), SEED.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"

CUTS=${CUTS:-1000}
NOPROTECT_CUTS=${NOPROTECT_CUTS:-$((CUTS / 10))}
MARKS=${MARKS:-200}
TIER_CUTS=${TIER_CUTS:-200}
CUTS_PER_RUN=${CUTS_PER_RUN:-16}
MARKS_PER_RUN=${MARKS_PER_RUN:-30}
SEED=${SEED:-$(( $(date +%s) % 32768 ))}

# Inside the VM: the runner once per batch, then every cut's line.
if [ "${1:-}" = --in-vm ]; then
	mod=$2
	crashlog=/tmp/crash.log
	: >"$crashlog"
	b=0
	left=$CUTS nleft=$NOPROTECT_CUTS
	while [ $((left + nleft)) -gt 0 ]; do
		b=$((b + 1))
		c=$((left < CUTS_PER_RUN ? left : CUTS_PER_RUN))
		# protection-off cut points in the same proportion, the rest at the end
		nc=$(( CUTS > 0 ? (NOPROTECT_CUTS * c + CUTS - 1) / CUTS : nleft ))
		[ "$nc" -le "$nleft" ] || nc=$nleft
		[ "$c" -gt 0 ] || nc=$((nleft < CUTS_PER_RUN ? nleft : CUTS_PER_RUN))
		echo "# case 22, run $b: $c protected cut points, $nc with the protection off"
		env CUTS=$c NOPROTECT_CUTS=$nc NOPROTECT_MIN=0 NOPROTECT_STOP=0 SEED=$(((SEED + b) % 32768)) \
			CRASH_LOG=$crashlog KUNIT=0 bash tests/run-in-vm.sh "$mod" '22-*' |
			sed -E "s/^(ok|not ok) - (22-[a-z-]+)/\1 - \2[run $b]/" | grep -v '^ok - module-load$'
		left=$((left - c)) nleft=$((nleft - nc))
	done
	b=0 left=$TIER_CUTS
	while [ "$left" -gt 0 ]; do
		b=$((b + 1))
		c=$((left < CUTS_PER_RUN ? left : CUTS_PER_RUN))
		echo "# case 28, run $b: $c cut points with the tier on"
		env CUTS=$c SEED=$(((SEED + 2000 + b) % 32768)) CRASH_LOG=$crashlog KUNIT=0 \
			bash tests/run-in-vm.sh "$mod" '28-*' |
			sed -E "s/^(ok|not ok) - (28-[a-z-]+)/\1 - \2[run $b]/" | grep -v '^ok - module-load$'
		left=$((left - c))
	done
	b=0 left=$MARKS
	while [ "$left" -gt 0 ]; do
		b=$((b + 1))
		m=$((left < MARKS_PER_RUN ? left : MARKS_PER_RUN))
		echo "# case 23, run $b: $m marks"
		env MARKS=$m SEED=$(((SEED + 1000 + b) % 32768)) CRASH_LOG=$crashlog KUNIT=0 \
			bash tests/run-in-vm.sh "$mod" '23-*' |
			sed -E "s/^(ok|not ok) - (23-[a-z-]+)/\1 - \2[run $b]/" | grep -v '^ok - module-load$'
		left=$((left - m))
	done
	sed 's/^/CRASH-LOG /' "$crashlog"
	echo CRASH-DONE
	exit 0
fi

results=$REPO/results
mkdir -p "$results"
log_all=$results/test-crash.log
: >"$log_all"
t0=$(date +%s)
mod612=$RAINSSD_CACHE/mod-6.12

step() { # step <name> <cmd...>: a host-side test step
	local name=$1; shift
	if "$@" >>"$log_all" 2>&1; then echo "ok - $name"; else echo "not ok - $name"; tail -30 "$log_all"; fi
}

main() {
bash scripts/setup-host.sh || die "setup failed"
bash scripts/build-kernel.sh || die "test kernel build failed"
bash scripts/build-module.sh "$KBUILD" "$mod612" >/dev/null || die "module build (6.12) failed"
make -s -C userspace-tools >/dev/null || die "tools build failed"
step "tools:rainssd-crashwriter" bash userspace-tools/tests/test-crashwriter.sh
step "tools:rainssd-logreplay" bash userspace-tools/tests/test-logreplay.sh

log "power cuts in the 6.12 test VM: $CUTS protected cut points, $NOPROTECT_CUTS with the protection off, $TIER_CUTS with the tier on, $MARKS replayed marks (seed $SEED)"
bash scripts/vm-run.sh --kernel test -- env KSRC="$KSRC" TEST_FULL=1 CUTS="$CUTS" NOPROTECT_CUTS="$NOPROTECT_CUTS" \
	MARKS="$MARKS" CUTS_PER_RUN="$CUTS_PER_RUN" MARKS_PER_RUN="$MARKS_PER_RUN" SEED="$SEED" \
	TIER_CUTS="$TIER_CUTS" bash scripts/test-crash.sh --in-vm "$mod612" 2>&1 |
	tr -d '\r' | tee "$results/vm-crash.log" | grep -E '^(ok|not ok) |^    |^# case'
grep -q CRASH-DONE "$results/vm-crash.log" || echo "not ok - vm-crash:runner-completed"

# The outcomes, summed over the runs.
sed -n 's/^CRASH-LOG //p' "$results/vm-crash.log" >"$results/crash-cuts.log"
sum() { grep -E "$1" "$results/crash-cuts.log" | grep -c ": $2: " || true; }
pc=$(sum '^protect cut' clean) pd=$(sum '^protect cut' damaged) pe=$(sum '^protect cut' error)
# (case 28's cut points are "protect cut" lines too, with ", tier" in their detail)
tc=$(grep -E '^protect cut' "$results/crash-cuts.log" | grep ', tier ' | grep -c ': clean: ' || true)
nd=$(sum '^noprotect cut' damaged) nc=$(sum '^noprotect cut' clean) ne=$(sum '^noprotect cut' error)
mc=$(sum '^round' clean) md=$(sum '^round' damaged) me=$(sum '^round' error)
log "outcomes: power cut, protected: $pc clean ($tc of them with the tier), $pd damaged, $pe error; protection off: $nd damaged, $nc clean, $ne error; log-writes marks: $mc clean, $md damaged, $me error (every cut point: $results/crash-cuts.log)"
if [ "$NOPROTECT_CUTS" -gt 0 ]; then
	if [ "$nd" -gt 0 ]; then
		echo "ok - 22-power-cut:protection-off-finds-damage ($nd of $((nd + nc + ne)))"
	else
		echo "not ok - 22-power-cut:protection-off-finds-damage (0 of $((nd + nc + ne)): the procedure cannot tell)"
	fi
fi
}

main 2>&1 | tee "$results/crash-summary.out"
passed=$(grep -c '^ok - ' "$results/crash-summary.out")
failed=$(grep -c '^not ok - ' "$results/crash-summary.out")
log "make test-crash took $(( $(date +%s) - t0 )) s; logs in $results"
grep '^not ok - ' "$results/crash-summary.out" | sed 's/^/failed: /'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
