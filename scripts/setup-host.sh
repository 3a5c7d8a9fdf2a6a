#!/bin/bash
# Install what the build, the VM runner and the tests need, when missing.
# Safe to run again: it only installs what is not there yet.
# --demo: only what `make demo` needs (the module built against the stock
# kernel's headers, the VM runner, fio, mdadm): not the 6.12 kernel source.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(build-essential bc bison flex libelf-dev libssl-dev dwarves cpio rsync kmod
      ccache sparse linux-source-$KVER_TEST linux-image-amd64 linux-headers-amd64
      qemu-system-x86 fio mdadm blktrace xfsprogs e2fsprogs dosfstools python3-venv
      python3-matplotlib busybox-static file dmsetup jq stress-ng)
if [ "${1:-}" = --demo ]; then
	PKGS=(make gcc perl rsync kmod file dmsetup jq linux-image-amd64 linux-headers-amd64
	      qemu-system-x86 fio mdadm python3-venv busybox-static)
fi
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/vng" ]; then
	log "creating the virtme-ng venv in the cache"
	mkdir -p "$RAINSSD_CACHE"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q virtme-ng
fi
