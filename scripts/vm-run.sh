#!/bin/bash
# vm-run.sh [--kernel test|stock|<bzImage>] [--memory 4G] [--disk FILE]... [--append ARGS] -- <command...>
# Boot a kernel under QEMU/TCG with virtme-ng over the host's userspace and run
# <command> inside; exits with the command's status. The repository is seen
# at the same path inside the VM; each --disk FILE is a virtio-blk disk
# (/dev/vda, /dev/vdb, ... in order); --append adds kernel parameters.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=test mem=4G disks=() append=""
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--memory) mem=$2; shift 2 ;;
	--disk) disks+=(--disk "$2"); shift 2 ;;
	--append) append+=" $2"; shift 2 ;;
	--) shift; break ;;
	-h|--help) sed -n '2,6p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "no command given"
case "$kernel" in
test) img=$KBUILD/arch/x86/boot/bzImage ;;
stock) img=$(stock_kernel) ;;
*) img=$kernel ;;
esac
[ -f "$img" ] || die "kernel image not found: $img"
cmd=$(printf '%q ' "$@")
# null_blk's default device is not wanted: channels are made through configfs.
exec vng -r "$img" --disable-kvm --force-9p --cpus 2 --memory "$mem" "${disks[@]}" \
	--append "null_blk.nr_devices=0$append" --exec "cd $(printf %q "$PWD") && $cmd"
