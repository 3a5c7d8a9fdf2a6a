#!/bin/bash
# build-module.sh <kdir> <outdir>: build dm-rainssd (and the KUnit module when
# the kernel has CONFIG_KUNIT) against <kdir> in a copy of the sources under
# <outdir>, so builds for different kernels never share object files.
# W=1 warnings fail the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kdir=$1 out=$2
mkdir -p "$out"
# By content, not by time: a file whose bytes differ from the copy here gets
# the time of the copy (a checkout's times may be older than objects built
# here from other sources: up to 2026-12-07 the copies kept them, and a
# module built from an older tree was taken as up to date).
rsync -rlD --checksum --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$REPO/Kbuild" "$REPO/dm-rainssd" "$REPO/kunit" "$out/"
cp "$REPO/Kbuild" "$out/Kbuild"
# And from clean whenever the sources differ from those of the last build here.
src=$(cd "$REPO" && find Kbuild dm-rainssd kunit -type f \( -name Kbuild -o -name '*.[ch]' \) |
	LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)
stamp=$out/.rainssd-src.sha
if [ "$(cat "$stamp" 2>/dev/null)" != "$src" ]; then
	make -C "$kdir" M="$out" clean >/dev/null 2>&1 || true
	rm -f "$stamp"
fi
log "building dm-rainssd against $kdir"
# The log goes to stderr on failure: callers keep stdout for the module list.
make -C "$kdir" M="$out" W=1 modules >"$out/build.log" 2>&1 || { tail -40 "$out/build.log" >&2; die "module build failed"; }
if grep -E 'warning:|error:' "$out/build.log" | grep -v 'Skipping BTF' >&2; then
	die "module build has warnings against $kdir"
fi
want=$(sed -nE 's/^#define RS_VERSION_STR "([^"]+)".*/\1/p' "$REPO/dm-rainssd/rainssd.h")
got=$(tr '\0' '\n' <"$out/dm-rainssd.ko" | sed -n 's/^version=//p' | head -1)
[ "$got" = "$want" ] || die "$out/dm-rainssd.ko is version '$got', the sources $want: a stale build"
echo "$src" >"$stamp"
ls "$out"/*.ko
