#!/bin/sh
# Inside the kernel rig's guest (run by hardware-tests.sh --chroot): runs COMMAND in the Debian
# system at ROOT, with the guest's /proc, /sys and /dev (so gpio-sim and i2c-stub are there) and
# a fresh /tmp. ROOT is on the host's disk, which the guest sees read-only; nothing is written
# there. Why a second system: its C libraries are what the test is about (the arm64 stage's sid
# chroot has libgpiod 2, so the GPIO code under test is the v2 shim; the host has libgpiod 1.6).
#
#   in-chroot.sh ROOT COMMAND [ARG...]
set -eu
root=$1
shift
[ -d "$root/proc" ] || { echo "in-chroot.sh: $root is not a system root" >&2; exit 2; }
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
exec chroot "$root" "$@"
