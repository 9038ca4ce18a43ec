#!/bin/busybox sh
# shellcheck shell=sh
# /init of the kernel rig's guest (see README.md), run by busybox as PID 1. run.sh puts it, with
# /rig/config and /rig/cmd, on top of the initramfs that prepare.sh built.
#
# Loads the modules, creates the gpio-sim chip and the i2c-stub chip, mounts the host's root read-only
# over 9p, chroots into it, runs /rig/cmd with its output on the second serial port (ttyS1), prints
# UNWIND-RIG-EXIT=<code> there, and powers off. If the rig itself fails it prints
# UNWIND-RIG-FAILED: <reason> instead. Kernel and init messages go to the console, ttyS0.

if [ "$$" != 1 ]; then
    echo "init.sh is the guest's /init (PID 1); run Tests/KernelRig/run.sh instead" >&2
    exit 2
fi

/bin/busybox mkdir -p /dev /proc /sys /newroot
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys

out=/dev/ttyS1

# Its own say and die, not deploy/lib/toolkit.sh's: busybox's sh, before the host's root is mounted.
say() { echo "unwind-rig: $*"; }

power_off() {
    sync
    poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 10
}

die() {
    say "FAILED: $*"
    echo "UNWIND-RIG-FAILED: $*" >"$out"
    power_off
}

# RIG_GPIO_LINES, RIG_GPIO_LABEL, RIG_GPIO_NAMES, RIG_I2C_ADDRS, RIG_9P_MSIZE, RIG_DEBUG, RIG_SHARE
# shellcheck source=/dev/null
. /rig/config

stty -F "$out" raw -echo || die "cannot set up $out"

# --- modules ------------------------------------------------------------------------------------
while read -r m; do
    [ -n "$m" ] || continue
    case $m in
    i2c_stub) set -- "chip_addr=$RIG_I2C_ADDRS" ;;
    *) set -- ;;
    esac
    insmod "/lib/modules/$m.ko" "$@" || die "insmod $m $* failed"
done </lib/modules/load-order

# --- gpio-sim: one chip, one bank -----------------------------------------------------------------
mount -t configfs configfs /sys/kernel/config || die "cannot mount configfs"
sim=/sys/kernel/config/gpio-sim/unwind
mkdir "$sim" "$sim/bank0" || die "gpio-sim's configfs directory is missing"
echo "$RIG_GPIO_LINES" >"$sim/bank0/num_lines" || die "gpio-sim: num_lines"
echo "$RIG_GPIO_LABEL" >"$sim/bank0/label" || die "gpio-sim: label"
i=0
for name in $RIG_GPIO_NAMES; do
    if ! { mkdir "$sim/bank0/line$i" && echo "$name" >"$sim/bank0/line$i/name"; }; then
        die "gpio-sim: cannot name line $i '$name'"
    fi
    i=$((i + 1))
done
echo 1 >"$sim/live" || die "gpio-sim: cannot make the chip live"
sim_dev=$(cat "$sim/dev_name")
sim_chip=$(cat "$sim/bank0/chip_name")
sim_sysfs=/sys/devices/platform/$sim_dev/$sim_chip
[ -e "$sim_sysfs/sim_gpio0/value" ] || die "gpio-sim: no $sim_sysfs/sim_gpio0"

# --- i2c-stub -----------------------------------------------------------------------------------
# (/sys/class/i2c-adapter is gone from newer kernels; /sys/bus/i2c/devices has the adapters too.)
i2c_bus=
for a in /sys/bus/i2c/devices/i2c-*; do
    [ "$(cat "$a/name" 2>/dev/null)" = "SMBus stub driver" ] && i2c_bus=${a##*/i2c-}
done
[ -n "$i2c_bus" ] || die "no i2c-stub adapter in /sys/bus/i2c/devices"

n=0
until [ -c "/dev/$sim_chip" ] && [ -c "/dev/i2c-$i2c_bus" ]; do
    n=$((n + 1))
    [ "$n" -le 50 ] || die "no /dev/$sim_chip or /dev/i2c-$i2c_bus"
    sleep 0.1
done

# --- the host's root ----------------------------------------------------------------------------
r=/newroot
n=0
until mount -t 9p -o "ro,trans=virtio,version=9p2000.L,msize=$RIG_9P_MSIZE,cache=loose" hostroot "$r"; do
    n=$((n + 1))
    [ "$n" -le 20 ] || die "cannot mount the host's root over 9p"
    sleep 0.1
done
if ! { mount -t proc proc "$r/proc" &&
    mount -t sysfs sysfs "$r/sys" &&
    mount -t configfs configfs "$r/sys/kernel/config" &&
    mount -t devtmpfs devtmpfs "$r/dev" &&
    mkdir -p "$r/dev/pts" "$r/dev/shm" &&
    mount -t devpts -o newinstance,ptmxmode=0666 devpts "$r/dev/pts" &&
    mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm" &&
    mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"; }; then
    die "cannot mount proc, sys, dev or tmp in the chroot"
fi
if [ -d "$r/run" ]; then
    mount -t tmpfs -o mode=755 tmpfs "$r/run" || die "cannot mount /run in the chroot"
fi
# A checkout in the host's /tmp or /run, which the guest's own hide: shared at its path.
if [ -n "$RIG_SHARE" ]; then
    if ! { mkdir -p "$r$RIG_SHARE" &&
        mount -t 9p -o "ro,trans=virtio,version=9p2000.L,msize=$RIG_9P_MSIZE,cache=loose" checkout "$r$RIG_SHARE"; }; then
        die "cannot mount the checkout $RIG_SHARE over 9p"
    fi
fi

# --- loopback -------------------------------------------------------------------------------------
# Foundation's CFSocket (behind Process and run loops) wakes itself through a UDP socket pair on
# 127.0.0.1: with lo down, Process.run() cannot create it ("Could not create wakeup socket pair")
# and hangs.
ip link set lo up || die "cannot bring up the loopback interface"

say "gpio-sim $sim_dev: /dev/$sim_chip ($RIG_GPIO_LINES lines, '$RIG_GPIO_LABEL'); i2c-stub: /dev/i2c-$i2c_bus at $RIG_I2C_ADDRS"
[ "$RIG_DEBUG" = 1 ] && cat /proc/mounts

# --- the command --------------------------------------------------------------------------------
exec 3>"$out"
env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/tmp TMPDIR=/tmp TERM=dumb LANG=C.UTF-8 \
    UNWIND_RIG=1 \
    UNWIND_RIG_KERNEL="$(uname -r)" \
    UNWIND_RIG_GPIOCHIP="/dev/$sim_chip" \
    UNWIND_RIG_GPIOCHIP_NAME="$sim_chip" \
    UNWIND_RIG_GPIOCHIP_LABEL="$RIG_GPIO_LABEL" \
    UNWIND_RIG_GPIO_LINES="$RIG_GPIO_LINES" \
    UNWIND_RIG_GPIO_NAMES="$RIG_GPIO_NAMES" \
    UNWIND_RIG_SIM_SYSFS="$sim_sysfs" \
    UNWIND_RIG_I2C_BUS="$i2c_bus" \
    UNWIND_RIG_I2C_DEV="/dev/i2c-$i2c_bus" \
    UNWIND_RIG_I2C_ADDRS="$RIG_I2C_ADDRS" \
    chroot "$r" /bin/sh -c "$(cat /rig/cmd)" </dev/null >&3 2>&3 3>&-
rc=$?
say "command exited with $rc"
echo "UNWIND-RIG-EXIT=$rc" >&3
exec 3>&- # the last close waits until the port has sent everything
power_off
