#!/bin/bash
# build-module.sh <kdir> <outdir>: build dm-rainssd (and the KUnit module when
# the kernel has CONFIG_KUNIT) against <kdir> in a copy of the sources under
# <outdir>, so builds for different kernels never share object files.
# W=1 warnings fail the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kdir=$1 out=$2
mkdir -p "$out"
rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	"$REPO/Kbuild" "$REPO/dm-rainssd" "$REPO/kunit" "$out/"
cp "$REPO/Kbuild" "$out/Kbuild"
log "building dm-rainssd against $kdir"
make -C "$kdir" M="$out" W=1 modules >"$out/build.log" 2>&1 || { cat "$out/build.log"; die "module build failed"; }
if grep -E 'warning:|error:' "$out/build.log" | grep -v 'Skipping BTF'; then
	die "module build has warnings against $kdir"
fi
ls "$out"/*.ko
