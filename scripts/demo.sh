#!/bin/bash
# make demo: from a fresh machine, in minutes. Installs only what the demo
# needs (setup-host.sh --demo: no 6.12 kernel source, no kernel build), builds
# the module against the stock Debian kernel's headers, boots that kernel in a
# VM (QEMU/TCG) and runs scripts/demo-in-vm.sh there: an 8-channel rainssd
# volume on null_blk, fio on it, its status labelled by rainssd-status, the
# same fio job on md RAID-5 over the same kind of channels, one comparison
# line. The 6.12 test kernel stays for `make test`.
#
# Environment: RUNTIME, RAMP, SIZE are passed to the fio job (see
# scripts/demo-in-vm.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO"
t0=$(date +%s)
bash scripts/setup-host.sh --demo
kimg=$(stock_kernel) || true
[ -n "$kimg" ] || die "no Debian kernel in /boot (apt-get install linux-image-amd64)"
kdir=$(stock_headers)
[ -d "$kdir" ] || die "no headers for $(basename "$kimg") in $kdir: apt-get install linux-image-amd64 linux-headers-amd64 brings both to the same version"
moddir=$RAINSSD_CACHE/mod-stock
bash scripts/build-module.sh "$kdir" "$moddir" >/dev/null
log "booting $(basename "$kimg") in a VM (QEMU/TCG, no KVM)"
set +e
# The demo stops itself on a hung fio; the timeout is for a VM that does not.
timeout 900 bash scripts/vm-run.sh --kernel stock -- \
	env RUNTIME="${RUNTIME:-8}" RAMP="${RAMP:-2}" SIZE="${SIZE:-64m}" \
	bash scripts/demo-in-vm.sh "$moddir" 2>&1 | tr -d '\r'
rc=${PIPESTATUS[0]}
log "make demo took $(($(date +%s) - t0)) s"
exit "$rc"
