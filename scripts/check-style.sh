#!/bin/bash
# make check-style: checkpatch --strict and sparse (C=1) over the module and
# the KUnit suites, against the test kernel. Fails on any report.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"
files=(dm-rainssd/*.[ch] kunit/*.c)
[ -f "$KSRC/scripts/checkpatch.pl" ] || bash scripts/build-kernel.sh
cp=(perl "$KSRC/scripts/checkpatch.pl" --no-tree --strict --terse --show-types)
# The compat header is the one place where kernel versions are compared.
out=$("${cp[@]}" -f "${files[@]}" 2>&1 | grep -v '^dm-rainssd/rainssd-compat.h' || true)
out+=$("${cp[@]}" --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f dm-rainssd/rainssd-compat.h 2>&1 || true)
bad=$(echo "$out" | grep -E 'ERROR|WARNING|CHECK' || true)
if [ -n "$bad" ]; then echo "$bad"; die "checkpatch --strict reports"; fi
echo "checkpatch --strict: clean (${#files[@]} files)"
tmp=$RAINSSD_CACHE/mod-sparse
rsync -a --delete "$REPO/Kbuild" "$REPO/dm-rainssd" "$REPO/kunit" "$tmp/"
make -C "$KBUILD" M="$tmp" clean >/dev/null
make -C "$KBUILD" M="$tmp" C=1 W=1 modules >"$tmp/sparse.log" 2>&1 || { cat "$tmp/sparse.log"; die "sparse build failed"; }
sp=$(grep -iE 'warning:|error:' "$tmp/sparse.log" || true)
if [ -n "$sp" ]; then echo "$sp"; die "sparse/W=1 reports"; fi
echo "sparse C=1 W=1: clean"
