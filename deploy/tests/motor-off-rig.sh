#!/usr/bin/env bash
# shellcheck disable=SC2317 # the conditions run through check and eventually
# Runs inside the kernel rig (Tests/KernelRig/run.sh): deploy/unwind-motor-off against a real
# gpio-sim chip. The motor line is held high by a process that is then SIGKILLed, as the daemon
# might be mid-pulse; the helper must leave the line low (input, pull-down), by offset and by name.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# pass, fail, check, eventually, finish (the guest sees the checkout: Tests/KernelRig/run.sh)
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$here/../lib/toolkit.sh"
chip=${UNWIND_RIG_GPIOCHIP_NAME:?run me through Tests/KernelRig/run.sh}
sysfs=${UNWIND_RIG_SIM_SYSFS:?}

value() { cat "$sysfs/sim_gpio$1/value"; }
is_high() { [ "$(value "$1")" = 1 ]; }
is_low() {
    local v
    v=$(value "$1")
    [ "$v" = 0 ] || { echo "still $v"; return 1; }
}

stuck_high() {      # line $1 driven high by a process that dies by SIGKILL
    gpioset --mode=signal "$chip" "$1=1" &
    local pid=$!
    # Until gpioset drives it (30 s: emulation is slow), not a fixed wait.
    eventually 30 is_high "$1" || fail "setup: line $1 did not go high"
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
    echo pull-up >"$sysfs/sim_gpio$1/pull"   # released, something keeps pulling it up
}

stuck_high 3
UNWIND_MOTOR_LINE="$chip:3" "$here/../unwind-motor-off" /nonexistent
check "$chip:3 low after unwind-motor-off" is_low 3

stuck_high 5
printf 'gpio:\n  motor: sim5   # by name\n' >/tmp/motor.conf
"$here/../unwind-motor-off" /tmp/motor.conf
check "line sim5 low after unwind-motor-off" is_low 5
finish
