#!/usr/bin/env bash
# Runs inside the kernel rig (Tests/KernelRig/run.sh): deploy/unwind-motor-off against a real
# gpio-sim chip. The motor line is held high by a process that is then SIGKILLed, as the daemon
# might be mid-pulse; the helper must leave the line low (input, pull-down), by offset and by name.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
chip=${UNWIND_RIG_GPIOCHIP_NAME:?run me through Tests/KernelRig/run.sh}
sysfs=${UNWIND_RIG_SIM_SYSFS:?}
fail=0

value() { cat "$sysfs/sim_gpio$1/value"; }

stuck_high() {      # line $1 driven high by a process that dies by SIGKILL
    gpioset --mode=signal "$chip" "$1=1" &
    local pid=$!
    local n=0   # until gpioset drives it (30 s: emulation is slow), not a fixed wait
    until [ "$(value "$1")" = 1 ] || [ "$n" -ge 300 ]; do
        n=$((n + 1))
        sleep 0.1
    done
    [ "$(value "$1")" = 1 ] || { echo "setup: line $1 did not go high"; fail=1; }
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
    echo pull-up >"$sysfs/sim_gpio$1/pull"   # released, something keeps pulling it up
}

stuck_high 3
UNWIND_MOTOR_LINE="$chip:3" "$here/../unwind-motor-off" /nonexistent
if [ "$(value 3)" = 0 ]; then echo "ok: $chip:3 low after unwind-motor-off"; else echo "FAIL: $chip:3 still $(value 3)"; fail=1; fi

stuck_high 5
printf 'gpio:\n  motor: sim5   # by name\n' >/tmp/motor.conf
"$here/../unwind-motor-off" /tmp/motor.conf
if [ "$(value 5)" = 0 ]; then echo "ok: line sim5 low after unwind-motor-off"; else echo "FAIL: sim5 still $(value 5)"; fail=1; fi
exit "$fail"
