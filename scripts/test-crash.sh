#!/bin/bash
# make test-crash: the power-cut cases (tests/cases/22-power-cut.sh,
# 28-tier-power-cut.sh and 23-log-writes.sh) at many cut points, in the
# 6.12 test VM. Sets up and builds what it needs as make test does, runs the
# crash tools' host tests, then in the VM runs case 22 over CUTS protected
# cut points (and NOPROTECT_CUTS with the protection switched off), case 28
# over TIER_CUTS cut points with the tier on and case 23 over MARKS replayed
# marks, in batches (runs of the runner, each given 30 minutes; 16 cut
# points take 6-14 under TCG). Prints the outcomes per kind and ends with
# `N passed, N failed`. A batch that runs out of time fails, and the cut
# points it did not reach are missing from the outcomes: the summary says
# how many batches that was.
#
# A soak of the defaults takes longer than a working session (about 20 s
# per cut point under TCG), so it can be run in parts: every batch's result
# is kept in $SOAK_DIR/current as it ends, and `make test-crash` run again
# with the same sizes on the same sources (the module, the three cases and
# what they use, the tools and this script, committed and unchanged) goes
# on from the first batch not yet done, with the same seed, on this machine
# or on another that has the same SOAK_DIR (the sources are named by their
# git hashes; the logs kept there name the cache and the checkout as
# <cache> and <repo>). A batch cut short is run again from its start.
# SOAK_MINUTES bounds one part: no batch starts after that. The summary
# counts every part. When the last batch is done the soak is complete; the
# next run starts a new one (the finished one is kept in
# $SOAK_DIR/<date>-<sources>).
#
# The defaults are 1,000 protected cut points: 700 of case 22 (healthy and
# degraded), 150 of case 28 (the tier on) and 150 replayed marks of case 23;
# and 70 of case 22 with the protection off, which must find damage at
# healthy cut points and at degraded ones.
#
# Environment: CUTS (default 700), NOPROTECT_CUTS (default CUTS/10), MARKS
# (default 150), TIER_CUTS (default 150), CUTS_PER_RUN (default 16),
# MARKS_PER_RUN (default 30), SEED (a new soak's seed; default from the
# clock), SOAK_MINUTES (this part's budget; default none), FRESH=1 (start a
# new soak even if one can go on), SOAK_DIR (where the soaks are kept;
# default $RAINSSD_CACHE/soak; this project keeps its own in docs/soak, so
# that parts run on different machines add up).
#
# Exit status: 0 complete and every test passed, 1 a test failed, 3 no test
# failed but the soak is not complete yet (run it again).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"

CUTS=${CUTS:-700}
NOPROTECT_CUTS=${NOPROTECT_CUTS:-$((CUTS / 10))}
MARKS=${MARKS:-150}
TIER_CUTS=${TIER_CUTS:-150}
CUTS_PER_RUN=${CUTS_PER_RUN:-16}
MARKS_PER_RUN=${MARKS_PER_RUN:-30}

# Inside the VM: the runner once per batch not yet done (START22, START28,
# START23: the first batch of each case to run), each batch's cut lines as
# soon as it ends; CRASH-DONE after the last batch, CRASH-STOPPED when the
# budget (BUDGET seconds) ran out first.
if [ "${1:-}" = --in-vm ]; then
	mod=$2
	crashlog=/tmp/crash.log
	t0=$(date +%s)
	run_batch() { # run_batch <case> <batch> <first batch to run> <what> <env...>
		local k=$1 b=$2 start=$3 what=$4
		shift 4
		[ "$b" -ge "$start" ] || return 0
		if [ "${BUDGET:-0}" -gt 0 ] && [ $(($(date +%s) - t0)) -ge "$BUDGET" ]; then
			echo "CRASH-STOPPED after $(($(date +%s) - t0)) s: the budget of $BUDGET s is spent"
			exit 0
		fi
		echo "# case $k, run $b: $what"
		: >"$crashlog"
		env "$@" CRASH_LOG=$crashlog KUNIT=0 CASE_TIMEOUT=1800 bash tests/run-in-vm.sh "$mod" "$k-*" |
			sed -E "s/^(ok|not ok) - ($k-[a-z-]+)/\1 - \2[run $b]/" | grep -v '^ok - module-load$'
		sed 's/^/CRASH-LOG /' "$crashlog"
	}
	b=0
	left=$CUTS nleft=$NOPROTECT_CUTS
	while [ $((left + nleft)) -gt 0 ]; do
		b=$((b + 1))
		c=$((left < CUTS_PER_RUN ? left : CUTS_PER_RUN))
		# protection-off cut points in the same proportion, the rest at the end
		nc=$(( CUTS > 0 ? (NOPROTECT_CUTS * c + CUTS - 1) / CUTS : nleft ))
		[ "$nc" -le "$nleft" ] || nc=$nleft
		[ "$c" -gt 0 ] || nc=$((nleft < CUTS_PER_RUN ? nleft : CUTS_PER_RUN))
		run_batch 22 $b "${START22:-1}" "$c protected cut points, $nc with the protection off" \
			CUTS=$c NOPROTECT_CUTS=$nc NOPROTECT_MIN=0 NOPROTECT_STOP=0 SEED=$(((SEED + b) % 32768))
		left=$((left - c)) nleft=$((nleft - nc))
	done
	b=0 left=$TIER_CUTS
	while [ "$left" -gt 0 ]; do
		b=$((b + 1))
		c=$((left < CUTS_PER_RUN ? left : CUTS_PER_RUN))
		run_batch 28 $b "${START28:-1}" "$c cut points with the tier on" \
			CUTS=$c SEED=$(((SEED + 2000 + b) % 32768))
		left=$((left - c))
	done
	b=0 left=$MARKS
	while [ "$left" -gt 0 ]; do
		b=$((b + 1))
		m=$((left < MARKS_PER_RUN ? left : MARKS_PER_RUN))
		run_batch 23 $b "${START23:-1}" "$m marks" MARKS=$m SEED=$(((SEED + 1000 + b) % 32768))
		left=$((left - m))
	done
	echo CRASH-DONE
	exit 0
fi

results=$REPO/results
mkdir -p "$results"
log_all=$results/test-crash.log
: >"$log_all"
t0=$(date +%s)
mod612=$RAINSSD_CACHE/mod-6.12
soak=${SOAK_DIR:-$RAINSSD_CACHE/soak}
mkdir -p "$soak" && soak=$(cd "$soak" && pwd)
st=$soak/current

step() { # step <name> <cmd...>: a host-side test step
	local name=$1; shift
	if "$@" >>"$log_all" 2>&1; then echo "ok - $name"; else echo "not ok - $name"; tail -30 "$log_all"; fi
}

# The sources a soak's parts must share: what runs in it (the module, the
# three cases and what they use, the tools, this script) as committed at
# HEAD, and nothing changed in them since.
sources() {
	local paths=(dm-rainssd tests/lib.sh tests/run-in-vm.sh tests/cases/22-power-cut.sh
		tests/cases/23-log-writes.sh tests/cases/28-tier-power-cut.sh userspace-tools
		scripts/channels.sh scripts/test-crash.sh)
	if [ -n "$(git status --porcelain -- "${paths[@]}" 2>/dev/null)" ] ||
		! git rev-parse "${paths[@]/#/HEAD:}" >/dev/null 2>&1; then
		echo "uncommitted-$(date +%s)"	# never goes on
		return
	fi
	git rev-parse "${paths[@]/#/HEAD:}" | sha1sum | cut -c1-12
}

# done_batches <case>: the last batch of that case whose result line is in a part's log
done_batches() {
	cat "$st"/part-*.log 2>/dev/null |
		sed -nE "s/^(ok|not ok) - $1-[a-z-]+\[run ([0-9]+)\].*/\2/p" | sort -n | tail -1
}

# Go on with the current soak, or start a new one.
plan="sources=$(sources) cuts=$CUTS noprotect=$NOPROTECT_CUTS tier=$TIER_CUTS marks=$MARKS per_run=$CUTS_PER_RUN marks_per_run=$MARKS_PER_RUN"
if [ -d "$st" ] && { [ "${FRESH:-0}" = 1 ] || [ -e "$st/complete" ] ||
	[ "$(cat "$st/plan" 2>/dev/null)" != "$plan" ] ||
	{ [ -n "${SEED:-}" ] && [ "$SEED" != "$(cat "$st/seed")" ]; }; }; then
	old=$soak/$(date -r "$st/plan" +%Y%m%d-%H%M%S 2>/dev/null || date +%Y%m%d-%H%M%S)-$(sed -nE 's/^sources=([^ ]+).*/\1/p' "$st/plan" 2>/dev/null)
	mv "$st" "$old"
	log "the soak in $st cannot go on (complete, other sizes or sources, FRESH or SEED): kept in $old"
fi
if [ ! -d "$st" ]; then
	mkdir -p "$st"
	echo "$plan" >"$st/plan"
	echo "${SEED:-$(( $(date +%s) % 32768 ))}" >"$st/seed"
	git log -1 --format='%h %s' >"$st/commit"
fi
SEED=$(cat "$st/seed")
nparts=$(ls "$st"/part-*.log 2>/dev/null | wc -l)
part=$((nparts + 1))
s22=$(( $(done_batches 22) + 1 )) s28=$(( $(done_batches 28) + 1 )) s23=$(( $(done_batches 23) + 1 ))
budget=$(( ${SOAK_MINUTES:-0} * 60 ))

main() {
bash scripts/setup-host.sh || die "setup failed"
bash scripts/build-kernel.sh || die "test kernel build failed"
bash scripts/build-module.sh "$KBUILD" "$mod612" >/dev/null || die "module build (6.12) failed"
make -s -C userspace-tools >/dev/null || die "tools build failed"
step "tools:rainssd-crashwriter" bash userspace-tools/tests/test-crashwriter.sh
step "tools:rainssd-logreplay" bash userspace-tools/tests/test-logreplay.sh

if [ "$part" = 1 ]; then
	log "power cuts in the 6.12 test VM: $CUTS protected cut points, $NOPROTECT_CUTS with the protection off, $TIER_CUTS with the tier on, $MARKS replayed marks (seed $SEED; soak in $st)"
else
	log "power cuts, part $part of the soak in $st (seed $SEED): from case 22 batch $s22, case 28 batch $s28, case 23 batch $s23"
fi
[ "$budget" = 0 ] || log "this part starts no batch after $SOAK_MINUTES minutes"
echo "$part $(date +%s) $(git log -1 --format=%h)" >>"$st/parts"
bash scripts/vm-run.sh --kernel test -- env KSRC="$KSRC" TEST_FULL=1 CUTS="$CUTS" NOPROTECT_CUTS="$NOPROTECT_CUTS" \
	MARKS="$MARKS" CUTS_PER_RUN="$CUTS_PER_RUN" MARKS_PER_RUN="$MARKS_PER_RUN" SEED="$SEED" \
	TIER_CUTS="$TIER_CUTS" START22=$s22 START28=$s28 START23=$s23 BUDGET=$budget \
	bash scripts/test-crash.sh --in-vm "$mod612" 2>&1 |
	sed -u -e 's/\r//g' -e "s#$RAINSSD_CACHE#<cache>#g" -e "s#$REPO#<repo>#g" |
	tee "$st/part-$part.log" | grep -E '^(ok|not ok) |^    |^# case|^CRASH-STOPPED'
echo "$part $(date +%s)" >>"$st/ends"	# (a checkout's file times are not the runs')
grep -qE '^CRASH-(DONE|STOPPED)' "$st/part-$part.log" || echo "not ok - vm-crash:runner-completed (part $part)"
grep -q '^CRASH-DONE' "$st/part-$part.log" && touch "$st/complete"

# Every part's batch results, and the outcomes summed over every part.
if [ "$part" -gt 1 ]; then
	log "batches of the earlier parts:"
	cat $(ls "$st"/part-*.log | grep -v "/part-$part.log") | grep -E '^(ok|not ok) - (22|23|28)-'
fi
sed -n 's/^CRASH-LOG //p' "$st"/part-*.log >"$results/crash-cuts.log"
cp "$results/crash-cuts.log" "$st/crash-cuts.log"
sum() { grep -E "$1" "$results/crash-cuts.log" | grep -c ": $2: " || true; }
pc=$(sum '^protect cut' clean) pd=$(sum '^protect cut' damaged) pe=$(sum '^protect cut' error)
# (case 28's cut points are "protect cut" lines too, with ", tier" in their detail)
tc=$(grep -E '^protect cut' "$results/crash-cuts.log" | grep ', tier ' | grep -c ': clean: ' || true)
nd=$(sum '^noprotect cut' damaged) nc=$(sum '^noprotect cut' clean) ne=$(sum '^noprotect cut' error)
mc=$(sum '^round' clean) md=$(sum '^round' damaged) me=$(sum '^round' error)
timedout=$(cat "$st"/part-*.log | grep -cE '^not ok - (22|23|28)-[a-z-]+\[run [0-9]+\] \(exit 124\)' || true)
[ "$timedout" = 0 ] ||
	log "$timedout batch(es) ran out of time: the cut points they did not reach are not in the outcomes"
log "outcomes: power cut, protected: $pc clean ($tc of them with the tier), $pd damaged, $pe error; protection off: $nd damaged, $nc clean, $ne error; log-writes marks: $mc clean, $md damaged, $me error (every cut point: $results/crash-cuts.log)"
# The protection off must find damage at healthy cut points (the bitmap's
# resync needed) and at degraded ones (the degraded-write log's replay
# needed), each: damage of one kind says nothing of the other.
if [ -e "$st/complete" ] && [ "$NOPROTECT_CUTS" -gt 0 ]; then
	for kind in healthy degraded; do
		k=$(sum "^noprotect cut [0-9]+ \\($kind\\)" damaged)
		all=$(grep -cE "^noprotect cut [0-9]+ \\($kind\\)" "$results/crash-cuts.log" || true)
		if [ "$k" -gt 0 ]; then
			echo "ok - 22-power-cut:protection-off-finds-damage-$kind ($k of $all)"
		else
			echo "not ok - 22-power-cut:protection-off-finds-damage-$kind (0 of $all: the procedure cannot tell)"
		fi
	done
fi
}

main 2>&1 | tee "$results/crash-summary.out"
# this part's host steps and batches, and the batches of the parts before it
summary=$results/crash-summary.out
passed=$(cat "$summary" | grep -c '^ok - ')
failed=$(cat "$summary" | grep -c '^not ok - ')
secs=0
while read -r p start _; do
	end=$(awk -v p="$p" '$1 == p { print $2 }' "$st/ends" 2>/dev/null | tail -1)
	[ -n "$end" ] || end=$(stat -c %Y "$st/part-$p.log" 2>/dev/null) || continue
	secs=$((secs + end - start))
done <"$st/parts"
sed -e "s#$RAINSSD_CACHE#<cache>#g" -e "s#$REPO#<repo>#g" "$summary" >"$st/summary-part-$part.out"
log "this part took $(( $(date +%s) - t0 )) s; the soak's $part part(s) in the VM: $secs s; logs in $results and $st"
grep '^not ok - ' "$summary" | sed 's/^/failed: /'
if [ ! -e "$st/complete" ]; then
	log "the soak is not complete: make test-crash again (same sizes, same sources) goes on from where it stopped"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] || exit 1
[ -e "$st/complete" ] || exit 3
