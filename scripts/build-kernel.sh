#!/bin/bash
# Build the 6.12 test kernel from Debian's linux-source package, configured
# from x86_64 defconfig + virtme-ng's fragment + kernel/rainssd-test.config.
# The source and the build tree live in the cache; ccache makes rebuilds cheap
# and make only rebuilds what changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ ! -f "$KSRC/Makefile" ]; then
	tarball=$(ls /usr/src/linux-source-$KVER_TEST.tar.* | head -1)
	log "unpacking $tarball"
	mkdir -p "$RAINSSD_CACHE"
	rm -rf "$KSRC.tmp" && mkdir -p "$KSRC.tmp"
	tar -C "$KSRC.tmp" --strip-components=1 -xf "$tarball"
	mv "$KSRC.tmp" "$KSRC"
fi

frags=("$REPO/kernel/rainssd-test.config")
[ -z "$KVARIANT" ] || frags+=("$REPO/kernel/rainssd-$KVARIANT.config")
stamp=$KBUILD/.rainssd-config.sha
want=$(cat "${frags[@]}" | sha256sum | cut -d' ' -f1)
mkdir -p "$KBUILD"
if [ ! -f "$KBUILD/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	log "configuring the test kernel"
	make -s -C "$KSRC" O="$KBUILD" x86_64_defconfig >/dev/null
	(cd "$KBUILD" && virtme-configkernel --update --arch x86_64 >/dev/null 2>&1) ||
		log "virtme-configkernel failed; continuing with defconfig"
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KBUILD" "$KBUILD/.config" "${frags[@]}" >/dev/null
	make -s -C "$KSRC" O="$KBUILD" olddefconfig >/dev/null
	# Every option of the fragment must have survived olddefconfig.
	bad=0
	while read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qx "$line" "$KBUILD/.config" || { log "not applied: $line"; bad=1; } ;;
		esac
	done < <(cat "${frags[@]}")
	[ $bad = 0 ] || die "kernel config fragment not fully applied"
	echo "$want" >"$stamp"
fi

log "building the test kernel${KVARIANT:+ ($KVARIANT)} (ccache in $CCACHE_DIR)"
make -C "$KSRC" O="$KBUILD" CC="ccache gcc" -j"$(nproc)" bzImage modules >"$KBUILD/build.log" 2>&1 ||
	{ tail -40 "$KBUILD/build.log"; die "kernel build failed"; }
log "test kernel ready: $KBUILD/arch/x86/boot/bzImage"
