#!/bin/bash
# make check-style: checkpatch --strict and sparse (C=1) over the module and
# the KUnit suites, against the test kernel and the stock Debian headers when
# installed. Fails on any report.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"
files=(dm-rainssd/*.[ch] kunit/*.[ch])
[ -f "$KSRC/scripts/checkpatch.pl" ] || bash scripts/build-kernel.sh
cp=(perl "$KSRC/scripts/checkpatch.pl" --no-tree --strict --terse --show-types)
# The compat header is the one place where kernel versions are compared.
out=$("${cp[@]}" -f "${files[@]}" 2>&1 | grep -v '^dm-rainssd/rainssd-compat.h' || true)
out+=$("${cp[@]}" --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f dm-rainssd/rainssd-compat.h 2>&1 || true)
bad=$(echo "$out" | grep -E 'ERROR|WARNING|CHECK' || true)
if [ -n "$bad" ]; then echo "$bad"; die "checkpatch --strict reports"; fi
echo "checkpatch --strict: clean (${#files[@]} files)"
# sparse_build <kernel build or headers dir> <scratch dir> <label>
sparse_build() {
	local kdir=$1 tmp=$2 sp
	mkdir -p "$tmp"
	rsync -a --delete "$REPO/Kbuild" "$REPO/dm-rainssd" "$REPO/kunit" "$tmp/"
	make -C "$kdir" M="$tmp" clean >/dev/null
	make -C "$kdir" M="$tmp" C=1 W=1 modules >"$tmp/sparse.log" 2>&1 ||
		{ cat "$tmp/sparse.log"; die "sparse build against $3 failed"; }
	sp=$(grep -iE 'warning:|error:' "$tmp/sparse.log" || true)
	if [ -n "$sp" ]; then echo "$sp"; die "sparse/W=1 reports against $3"; fi
	echo "sparse C=1 W=1 against $3: clean"
}
sparse_build "$KBUILD" "$RAINSSD_CACHE/mod-sparse" "the 6.12 test kernel"
# The stock headers too, when installed (make test installs them).
hdr=$(stock_headers || true)
if [ -n "$hdr" ] && [ -d "$hdr" ]; then
	sparse_build "$hdr" "$RAINSSD_CACHE/mod-sparse-stock" "$(basename "$hdr")"
else
	echo "sparse against the stock headers: skipped (not installed)"
fi
