#!/bin/bash
# Shared settings for the dm-rainssd scripts. Everything that is built or
# installed outside the repository lives under $RAINSSD_CACHE so that later
# runs on the same machine reuse it.
# shellcheck disable=SC2034
RAINSSD_CACHE=${RAINSSD_CACHE:-$HOME/.cache/rainssd}
KVER_TEST=6.12
KSRC=$RAINSSD_CACHE/linux-$KVER_TEST
# RAINSSD_KVARIANT=kasan: the test kernel with kernel/rainssd-kasan.config too,
# in a build directory of its own.
KVARIANT=${RAINSSD_KVARIANT:-}
case "$KVARIANT" in
"" | kasan) ;;
*) printf 'unknown RAINSSD_KVARIANT %s (use kasan or nothing)\n' "$KVARIANT" >&2; exit 2 ;;
esac
KBUILD=$RAINSSD_CACHE/build-$KVER_TEST${KVARIANT:+-$KVARIANT}
VENV=$RAINSSD_CACHE/venv
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CCACHE_DIR=${CCACHE_DIR:-$RAINSSD_CACHE/ccache}
export PATH=$VENV/bin:$PATH

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The stock Debian kernel and its headers (6.1 on Debian 12).
stock_kernel() { ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1; }
stock_headers() {
	local k
	k=$(stock_kernel) || return 1
	k=${k#/boot/vmlinuz-}
	echo "/usr/src/linux-headers-$k"
}
