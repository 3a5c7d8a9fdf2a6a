#!/bin/bash
# run-in-vm.sh <moddir> [case-globs]: the test runner inside the VM.
# Loads the module, runs the KUnit module if built (unless KUNIT=0), then
# every integration case matching case-glob (default: the numbered ones); prints `ok - name` / `not ok - name` per test and `RUNNER-DONE` at the
# end. A case also fails if the kernel log shows an oops, a warning, a lockdep
# report or a hung task while it ran, or runs longer than CASE_TIMEOUT
# seconds (default 900; exit 124).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
export REPO
moddir=$1 glob=${2:-[0-9]*}
export RAINSSD_CHECK=$REPO/userspace-tools/rainssd-check
. "$REPO/tests/lib.sh"
set +e

BAD_KLOG='BUG:|WARNING:|Oops|general protection|possible circular locking|possible recursive locking|inconsistent lock state|blocked for more than|KASAN|UBSAN|kmemleak: [0-9]+ new|Call Trace'

klog_since() { dmesg | tail -n +$(($1 + 1)); }
klog_lines() { dmesg | wc -l; }

echo "# kernel $(uname -r)"
modprobe -q dm-mod 2>/dev/null
modprobe -q dm-flakey 2>/dev/null
modprobe -q raid456 2>/dev/null
modprobe -q xor 2>/dev/null	# xor_blocks(): built in on the test kernel, a module on the stock one
insmod "$moddir/dm-rainssd.ko" || { echo "not ok - module-load"; echo RUNNER-DONE; exit 1; }
echo "ok - module-load"

if [ -f "$moddir/rainssd_kunit.ko" ] && [ "${KUNIT:-1}" = 1 ]; then
	mark=$(klog_lines)
	modprobe -q kunit 2>/dev/null
	insmod "$moddir/rainssd_kunit.ko"
	klog_since "$mark" >/tmp/kunit.log
	# One line per KUnit case, from the KTAP the suites printed.
	sed -nE 's/^.*\] +(not ok|ok) [0-9]+ ([a-z_0-9]+)$/\1 - kunit:\2/p' /tmp/kunit.log |
		grep -E ' - kunit:rs_' || echo "not ok - kunit:no-cases-found"
	if python3 "${KSRC:?}/tools/testing/kunit/kunit.py" parse /tmp/kunit.log >/tmp/kunit.parsed 2>&1; then
		echo "ok - kunit:parser-summary"
	else
		cat /tmp/kunit.parsed
		echo "not ok - kunit:parser-summary"
	fi
	rmmod rainssd_kunit
fi

# From here on every buffer page an operation is handed is poisoned first
# (a debugfs switch of test kernels, rainssd-fault.h): a byte an operation
# uses without reading or copying it in reads back as made-up data in the
# cases that check data, not as a zero that happens to be right. POISON=0
# leaves it off.
[ -d /sys/kernel/debug/block ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ "${POISON:-1}" = 1 ] && [ -w /sys/kernel/debug/rainssd/poison_buffers ]; then
	echo Y >/sys/kernel/debug/rainssd/poison_buffers && echo "# buffer pages poisoned (debugfs rainssd/poison_buffers)"
fi

cases=()
for g in $glob; do	# one glob or several, separated by spaces
	cases+=("$REPO"/tests/cases/$g.sh)
done
# QUICK=1 (make test without CASES): the cases marked "# make test-full
# only" are left out here. make test passed the list of the others until
# it outgrew the kernel's command line, which carries the VM's command
# (vng then ran nothing, without a word).
if [ "${QUICK:-0}" = 1 ]; then
	keep=()
	for c in "${cases[@]}"; do
		grep -q '^# make test-full only' "$c" || keep+=("$c")
	done
	cases=("${keep[@]}")
fi
for c in "${cases[@]}"; do
	name=$(basename "$c" .sh)
	mark=$(klog_lines)
	start=$(date +%s)
	timeout "${CASE_TIMEOUT:-900}" bash "$c" >/tmp/case.out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/case.out | tail -30
	t_teardown >/dev/null 2>&1
	if klog_since "$mark" | grep -E "$BAD_KLOG" >/tmp/klog.bad; then
		echo "    # kernel log:"; klog_since "$mark" | tail -60 | sed 's/^/    #   /'
		rc=99
	fi
	if [ $rc -ne 0 ] && [ $rc -ne 99 ]; then
		echo "    # kernel log since the case started (tail):"
		klog_since "$mark" | tail -15 | sed 's/^/    #   /'
	fi
	if [ $rc -eq 0 ]; then
		echo "ok - $name ($(( $(date +%s) - start ))s)"
	else
		echo "not ok - $name (exit $rc)"
	fi
done

# On a kernel with kmemleak (make test-kasan's): with every table gone and
# the module still loaded (so its backtraces resolve), scan twice and fail
# on an unreferenced object that dm-rainssd allocated.
kml=/sys/kernel/debug/kmemleak
[ -d /sys/kernel/debug/block ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$kml" ]; then
	echo scan >"$kml"; sleep 6; echo scan >"$kml"
	awk '/^unreferenced object/ { if (rec ~ /\[dm_rainssd\]/) print rec; rec = "" }
	     { rec = rec $0 "\n" }
	     END { if (rec ~ /\[dm_rainssd\]/) print rec }' "$kml" >/tmp/kmemleak.rs
	all=$(grep -c '^unreferenced object' "$kml")
	ours=$(grep -c '^unreferenced object' /tmp/kmemleak.rs)
	if [ "$ours" -eq 0 ]; then
		echo "ok - kmemleak (no leak in dm-rainssd; $all elsewhere in the kernel)"
	else
		sed 's/^/    # /' /tmp/kmemleak.rs | head -n 60
		echo "not ok - kmemleak ($ours unreferenced objects allocated by dm-rainssd)"
	fi
fi
rmmod dm_rainssd || echo "not ok - module-unload"
echo RUNNER-DONE
