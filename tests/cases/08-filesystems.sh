#!/bin/bash
# make test-full only
# ext4 and XFS on the volume: copy a tree in, unmount, fsck clean, mount
# again and compare.
. "$REPO/tests/lib.sh"
# The tree is read over 9p once, into the VM's memory, then copied from there.
src=$(mktemp -d)/linux
cp -a /usr/include/linux "$src"
t_channels 4 --size-mb 192
t_create rsfs 128
v=/dev/mapper/rsfs
mnt=$(mktemp -d)
for fs in ext4 xfs; do
	case $fs in
	ext4) mkfs.ext4 -q -F $v || fail "mkfs.ext4" ;;
	xfs) mkfs.xfs -q -f $v || fail "mkfs.xfs" ;;
	esac
	mount $v "$mnt" || fail "mount $fs"
	cp -a "$src" "$mnt/tree"
	umount "$mnt"
	case $fs in
	ext4) fsck.ext4 -fn $v >/dev/null || fail "fsck.ext4" ;;
	xfs) xfs_repair -n $v >/dev/null 2>&1 || fail "xfs_repair -n" ;;
	esac
	mount $v "$mnt"
	diff -r "$src" "$mnt/tree" >/dev/null || fail "$fs contents differ"
	umount "$mnt"
	note "$fs: fsck clean, $(find "$src" -type f | wc -l) files equal"
done
t_parity
