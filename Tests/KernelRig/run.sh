#!/usr/bin/env bash
# Runs COMMAND inside a qemu guest (TCG) on a real Debian kernel with a gpio-sim chip and an i2c-stub
# chip, with the host's root mounted read-only as the guest's root and the current directory the same
# as here (see README.md beside this file). Run prepare.sh once first. The guest has its own /tmp
# and /run: a checkout there (a newcomer's first clone often is) is shared with the guest as well,
# read-only at the same path.
#
#   Tests/KernelRig/run.sh COMMAND [ARG...]
#
# The command's stdout and stderr (merged) appear on this script's stdout, followed by a line
# UNWIND-RIG-EXIT=<code>; the script exits with that code. If the guest never reports one (boot
# failure, crash, timeout) it prints why and the tail of the guest's console, and exits 125.
#
# Environment:
#   UNWIND_RIG_CACHE     cache root, as for prepare.sh
#   UNWIND_RIG_KVER      kernel to boot (default: the one prepare.sh prepared last)
#   UNWIND_RIG_TIMEOUT   seconds before the guest is killed (default 120)
#   UNWIND_RIG_MEM       guest memory (default 512M)
#   UNWIND_RIG_SMP       guest CPUs (default 2)
#   UNWIND_RIG_GPIO_LINES  lines of the gpio-sim bank (default 8)
#   UNWIND_RIG_GPIO_NAMES  space-separated line names, from line 0 (default sim0 .. sim7)
#   UNWIND_RIG_I2C_ADDRS   i2c-stub chip addresses, comma-separated (default 0x3c)
#   UNWIND_RIG_PASSENV   space-separated names of variables to pass into the guest
#                        (PATH, LANG and LC_ALL always are)
#   UNWIND_RIG_CONSOLE   also copy the guest's console (kernel and init messages) to this file
#   UNWIND_RIG_VERBOSE=1 print the guest's console on stderr after the run
#   UNWIND_RIG_KERNEL_ARGS  more kernel command-line arguments (e.g. loglevel=7 printk.time=1)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# log, die
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$here/../../deploy/lib/toolkit.sh"
me=kernel-rig

[ $# -gt 0 ] || die --status 2 "usage: $0 COMMAND [ARG...]"

base=${UNWIND_RIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-kernel-rig}
kver=${UNWIND_RIG_KVER:-$(cat "$base/current" 2>/dev/null || true)}
[ -n "$kver" ] || die --status 125 "no prepared kernel in $base: run Tests/KernelRig/prepare.sh first"
dir=$base/$kver
[ -f "$dir/READY" ] || die --status 125 "the rig for $kver in $dir is incomplete: run Tests/KernelRig/prepare.sh"
command -v qemu-system-x86_64 >/dev/null || die --status 125 "no qemu-system-x86_64: run Tests/KernelRig/prepare.sh"

timeout_s=${UNWIND_RIG_TIMEOUT:-120}
gpio_lines=${UNWIND_RIG_GPIO_LINES:-8}
gpio_names=${UNWIND_RIG_GPIO_NAMES-$(seq -f 'sim%g' -s ' ' 0 $((gpio_lines - 1)))}
i2c_addrs=${UNWIND_RIG_I2C_ADDRS:-0x3c}

cwd=$(pwd -P)
checkout=$(cd "$here/../.." && pwd -P)
guest_private() { case $1 in /tmp | /tmp/* | /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /run | /run/*) return 0 ;; esac; return 1; }
share=
if guest_private "$checkout"; then
    case $checkout in /tmp/* | /run/*) share=$checkout ;; *) die --status 125 "the checkout $checkout cannot be shared with the guest" ;; esac
fi
if guest_private "$cwd" && ! { [ -n "$share" ] && [[ $cwd == "$share" || $cwd == "$share"/* ]]; }; then
    die --status 125 "the guest has its own $cwd; run from the checkout or a directory of the host's disk"
fi

quote() { # POSIX shell single-quoting
    local s=${1//\'/\'\\\'\'}
    printf "'%s'" "$s"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-rig.XXXXXX")
qemu_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$qemu_pid" ]; then
        kill "$qemu_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- this run's part of the initramfs: /init, /rig/config, /rig/cmd -------------------------------
mkdir -p "$work/overlay/rig"
install -m 0755 "$here/init.sh" "$work/overlay/init"
{
    printf 'RIG_GPIO_LINES=%s\n' "$(quote "$gpio_lines")"
    printf 'RIG_GPIO_LABEL=unwind-sim\n'
    printf 'RIG_GPIO_NAMES=%s\n' "$(quote "$gpio_names")"
    printf 'RIG_I2C_ADDRS=%s\n' "$(quote "$i2c_addrs")"
    printf 'RIG_9P_MSIZE=262144\n'
    printf 'RIG_DEBUG=%s\n' "$(quote "${UNWIND_RIG_DEBUG:-0}")"
    printf 'RIG_SHARE=%s\n' "$(quote "$share")"
} >"$work/overlay/rig/config"
{
    for v in PATH LANG LC_ALL ${UNWIND_RIG_PASSENV:-}; do
        [[ $v =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die --status 125 "UNWIND_RIG_PASSENV: '$v' is not a variable name"
        if [ -n "${!v+set}" ]; then
            printf 'export %s=%s\n' "$v" "$(quote "${!v}")"
        fi
    done
    printf 'cd %s || exit 125\n' "$(quote "$cwd")"
    printf 'exec'
    for a in "$@"; do
        printf ' %s' "$(quote "$a")"
    done
    printf '\n'
} >"$work/overlay/rig/cmd"
(cd "$work/overlay" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$work/overlay.cpio"
# The kernel takes concatenated archives, each starting on a 4-byte boundary.
base_size=$(stat -c %s "$dir/initramfs.cpio.gz")
{
    cat "$dir/initramfs.cpio.gz"
    head -c $(((4 - base_size % 4) % 4)) /dev/zero
    cat "$work/overlay.cpio"
} >"$work/initrd"

share_args=()
[ -z "$share" ] || share_args=(-virtfs "local,path=$share,mount_tag=checkout,security_model=none,readonly=on,multidevs=remap")

# --- boot -------------------------------------------------------------------------------------------
: >"$work/output"
: >"$work/console"
timeout -k 5 "$timeout_s" qemu-system-x86_64 \
    -nodefaults -no-user-config \
    -machine q35,accel=tcg -cpu max -smp "${UNWIND_RIG_SMP:-2}" -m "${UNWIND_RIG_MEM:-512M}" \
    -display none -no-reboot \
    -kernel "$dir/vmlinuz" -initrd "$work/initrd" \
    -append "console=ttyS0 panic=-1 quiet loglevel=4 random.trust_cpu=on ${UNWIND_RIG_KERNEL_ARGS:-}" \
    -chardev "file,id=console,path=$work/console" -serial chardev:console \
    -chardev "file,id=output,path=$work/output" -serial chardev:output \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    "${share_args[@]}" \
    -device virtio-rng-pci \
    </dev/null >"$work/qemu.log" 2>&1 &
qemu_pid=$!
tail -n +1 -f --pid="$qemu_pid" "$work/output" &
tail_pid=$!
qemu_rc=0
wait "$qemu_pid" || qemu_rc=$?
qemu_pid=
wait "$tail_pid" || true

if [ -n "${UNWIND_RIG_CONSOLE:-}" ]; then
    cp "$work/console" "$UNWIND_RIG_CONSOLE"
fi
if [ "${UNWIND_RIG_VERBOSE:-0}" = 1 ]; then
    printf -- '--- guest console ---\n' >&2
    cat "$work/console" >&2
fi

exit_line=$(grep -aEo 'UNWIND-RIG-EXIT=[0-9]+' "$work/output" | tail -n 1 || true)
if [ -n "$exit_line" ]; then
    exit "${exit_line#UNWIND-RIG-EXIT=}"
fi

reason=$(grep -a 'UNWIND-RIG-FAILED:' "$work/output" | tail -n 1 || true)
if [ -n "$reason" ]; then
    reason="the rig failed in the guest: ${reason#UNWIND-RIG-FAILED: }"
elif [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
    reason="the guest did not finish within ${timeout_s}s (UNWIND_RIG_TIMEOUT)"
else
    reason="the guest stopped without reporting an exit code (qemu exit status $qemu_rc)"
fi
log "$reason"
{
    if [ -s "$work/qemu.log" ]; then
        printf -- '--- qemu ---\n'
        tail -n 20 "$work/qemu.log"
    fi
    printf -- '--- last 40 lines of the guest console ---\n'
    tail -n 40 "$work/console"
} >&2
exit 125
