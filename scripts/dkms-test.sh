#!/bin/bash
# dkms-test.sh: the module builds through DKMS as users install it
# (dkms.conf, docs/tools.md "DKMS install"). As root: installs dkms when it
# is missing, puts the sources in /usr/src/dm-rainssd-<version>, runs
# `dkms add` and `dkms build -k <stock kernel>` against the stock Debian
# kernel's headers, checks the built dm-rainssd.ko with modinfo (description,
# vermagic, version when the module declares one), then `dkms remove --all`
# and removes the source tree. Nothing is installed into /lib/modules and no
# module is loaded. Exits non-zero on any failure; safe to run again after an
# interrupted run (it clears its own leftovers, and refuses to touch a
# dm-rainssd of that version that it did not put there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"

[ "$(id -u)" = 0 ] || die "run as root: dkms writes /usr/src and /var/lib/dkms"

name=dm-rainssd
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
[ -n "$ver" ] || die "dkms.conf has no PACKAGE_VERSION"
src_ver=$(sed -n 's/^#define RS_VERSION_STR "\(.*\)"$/\1/p' dm-rainssd/rainssd.h)
[ "$ver" = "$src_ver" ] ||
	die "dkms.conf says version $ver, dm-rainssd/rainssd.h (RS_VERSION_STR) $src_ver"

if ! command -v dkms >/dev/null; then
	log "installing dkms"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends dkms >/dev/null ||
		{ apt-get update >/dev/null && apt-get install -y --no-install-recommends dkms >/dev/null; } ||
		die "cannot install dkms"
fi

kimg=$(stock_kernel)
[ -n "$kimg" ] || die "no stock kernel (/boot/vmlinuz-*-amd64)"
kver=${kimg#/boot/vmlinuz-}
kdir=$(stock_headers)
[ -f "$kdir/Makefile" ] || die "no headers for $kver in $kdir (apt-get install linux-headers-$kver)"

srcdir=/usr/src/$name-$ver
stamp=.rainssd-dkms-test	# marks a source tree this script made

ours() { [ -f "$srcdir/$stamp" ]; }
known() { [ -n "$(dkms status -m "$name" -v "$ver" 2>/dev/null)" ]; }
cleanup() {
	if ours; then
		dkms remove -m "$name" -v "$ver" --all >/dev/null 2>&1 || true
		rm -rf "$srcdir"
	fi
}

# Leftovers of an interrupted run are ours to clear; anything else is not.
if [ -e "$srcdir" ] && ! ours; then
	die "$srcdir exists and was not made by this test: remove it (dkms remove $name/$ver --all) first"
fi
if ! [ -e "$srcdir" ] && known; then
	die "dkms already has $name/$ver ($(dkms status -m "$name" -v "$ver" | head -1)); not touching it"
fi
cleanup
trap cleanup EXIT

log "DKMS source tree $srcdir"
mkdir -p "$srcdir/dm-rainssd"
cp Kbuild dkms.conf "$srcdir/"
cp dm-rainssd/*.[ch] "$srcdir/dm-rainssd/"
touch "$srcdir/$stamp"

dkms add -m "$name" -v "$ver"
log "dkms build -k $kver against $kdir"
if ! dkms build -m "$name" -v "$ver" -k "$kver" --kernelsourcedir "$kdir"; then
	tail -40 "/var/lib/dkms/$name/$ver/build/make.log" >&2 2>/dev/null || true
	die "dkms build failed"
fi
st=$(dkms status -m "$name" -v "$ver" -k "$kver")
echo "dkms status: $st"
case "$st" in *": built"*) ;; *) die "dkms status does not say built" ;; esac

ko=$(find "/var/lib/dkms/$name/$ver/$kver" -name "$name.ko*" -path '*/module/*' | head -1)
[ -n "$ko" ] && [ -s "$ko" ] || die "no $name.ko under /var/lib/dkms/$name/$ver/$kver"
log "built $ko"
desc=$(modinfo -F description "$ko")
vermagic=$(modinfo -F vermagic "$ko")
modver=$(modinfo -F version "$ko")
echo "modinfo: description: $desc"
echo "modinfo: vermagic: $vermagic"
echo "modinfo: version: ${modver:-(none: the module has no MODULE_VERSION)}"
echo "modinfo: signer: $(modinfo -F signer "$ko")"
case "$desc" in *RAID-5*) ;; *) die "unexpected module description: '$desc'" ;; esac
[ "${vermagic%% *}" = "$kver" ] || die "vermagic '$vermagic' is not for $kver"
[ "$(modinfo -F license "$ko")" = GPL ] || die "module license is not GPL"
if [ -n "$modver" ] && [ "$modver" != "$ver" ]; then
	die "module version $modver differs from the DKMS package version $ver"
fi
# Only dm-rainssd.ko is built (no KUnit module, whatever the kernel's CONFIG_KUNIT).
mlog=$(find "/var/lib/dkms/$name/$ver/$kver" -name make.log | head -1)
[ -n "$mlog" ] || die "no make.log of the DKMS build"
if grep -E '\.ko\b' "$mlog" | grep -v "$name\.ko" >&2; then
	die "the DKMS build made other modules (above, from $mlog)"
fi

dkms remove -m "$name" -v "$ver" --all
known && die "dkms still lists $name/$ver after remove --all"
rm -rf "$srcdir"
trap - EXIT
echo "ok: dkms add/build/remove of $name $ver for $kver"
