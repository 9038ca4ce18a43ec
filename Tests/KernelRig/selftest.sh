#!/usr/bin/env bash
# shellcheck disable=SC2317 # eq and sim_value_is run through check
# The rig's own test, run inside the guest: checks that the gpio-sim chip and the i2c-stub chip behave
# as the project's tests will rely on, with libgpiod's and i2c-tools' command-line tools.
#
#   Tests/KernelRig/run.sh Tests/KernelRig/selftest.sh
set -euo pipefail
# check, eventually, line_used_by, finish (the guest sees the checkout: run.sh)
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/toolkit.sh"

[ "${UNWIND_RIG:-}" = 1 ] || die --status 2 "runs inside the kernel rig: Tests/KernelRig/run.sh $0"

chip=$UNWIND_RIG_GPIOCHIP
sim=$UNWIND_RIG_SIM_SYSFS
bus=$UNWIND_RIG_I2C_BUS
addr=${UNWIND_RIG_I2C_ADDRS%%,*}
eq() { # expected actual
    [ "$1" = "$2" ] || {
        echo "  expected '$1', got '$2'"
        return 1
    }
}

sim_pull() { echo "$2" >"$sim/sim_gpio$1/pull"; }
sim_value_is() { [ "$(cat "$sim/sim_gpio$1/value")" = "$2" ]; }

# --- the chips ----------------------------------------------------------------------------------
check "$chip is a character device" test -c "$chip"
check "gpiodetect lists the chip with its label and 8 lines" \
    eq "${chip#/dev/} [unwind-sim] (8 lines)" "$(gpiodetect | grep unwind-sim)"
check "line 0 is named sim0" eq 0 "$(gpiofind sim0 | cut -d' ' -f2)"
check "the i2c-stub adapter is /dev/i2c-$bus" eq "SMBus stub driver" "$(cat "/sys/bus/i2c/devices/i2c-$bus/name")"
check "i2cdetect finds a chip at $addr" \
    eq "${addr#0x}" "$(i2cdetect -y -r "$bus" "$addr" "$addr" | awk '/^30:/ {print $NF}')"

# --- GPIO inputs: the test drives the pull, the program reads --------------------------------------
sim_pull 3 pull-up
check "input follows the simulated pull-up" eq 1 "$(gpioget "$chip" 3)"
sim_pull 3 pull-down
check "input follows the simulated pull-down" eq 0 "$(gpioget "$chip" 3)"
check "a pull-up bias request overrides the simulated pull" eq 1 "$(gpioget -B pull-up "$chip" 3)"
check "... and the simulator's pull stays as the program set it" eq pull-up "$(cat "$sim/sim_gpio3/pull")"
sim_pull 3 pull-down

# --- GPIO outputs: the program drives, the test reads the value -----------------------------------
gpioset --mode=signal "$chip" 5=1 &
holder=$!
check "an output set to 1 shows in sim_gpio5/value" eventually 20 sim_value_is 5 1
kill "$holder"
wait "$holder" || true
check "a released output falls back to the pull" eventually 20 sim_value_is 5 0
sim_pull 5 pull-up
check "a free line follows the simulated pull" sim_value_is 5 1
gpioset --mode=signal "$chip" 5=0 &
holder=$!
check "an output set to 0 shows in sim_gpio5/value, against the pull" eventually 20 sim_value_is 5 0
check "... while gpioset holds the line" line_used_by "$chip" 5 gpioset
kill "$holder"
wait "$holder" || true

# --- GPIO edge events (through irq_sim, which the rig builds into gpio-sim) ---------------------------
events=$(mktemp)
sim_pull 4 pull-down
timeout 60 gpiomon --num-events=2 "$chip" 4 >"$events" &
monitor=$!
if eventually 20 line_used_by "$chip" 4 gpiomon; then
    sim_pull 4 pull-up
    sleep 0.2
    sim_pull 4 pull-down
fi
wait "$monitor" || true
check "gpiomon sees a rising then a falling edge" eq "RISING FALLING" "$(grep -Eo 'RISING|FALLING' "$events" | xargs)"
rm -f "$events"

# --- I2C: SMBus transfers work; plain I2C transfers do not exist on the stub -----------------------
check "SMBus byte-data write" i2cset -y "$bus" "$addr" 0x40 0x12
check "... reads back" eq 0x12 "$(i2cget -y "$bus" "$addr" 0x40)"
check "SMBus I2C-block write" i2cset -y "$bus" "$addr" 0x40 0x01 0x02 0x03 i
check "... reads back byte by byte" eq "0x01 0x02 0x03" \
    "$(for r in 0x40 0x41 0x42; do i2cget -y "$bus" "$addr" "$r"; done | xargs)"
check "... and in i2cdump" eq "01 02 03 00" \
    "$(i2cdump -y -r 0x40-0x43 "$bus" "$addr" b | awk '/^40:/ {print $2, $3, $4, $5}')"
check "plain I2C transfers are refused (the stub has no I2C_FUNC_I2C)" \
    eval "! i2ctransfer -y $bus w2@$addr 0x00 0xae 2>/dev/null"

# --- the guest's filesystem -----------------------------------------------------------------------
check "the host's root is read-only" eval "! touch /.unwind-rig-write-test 2>/dev/null"
check "/tmp is writable" touch /tmp/.unwind-rig-write-test

finish
