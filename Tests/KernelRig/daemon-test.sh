#!/usr/bin/env bash
# shellcheck disable=SC2317 # between and the waits' conditions run through check and eventually
# `unwind run` end to end inside the kernel rig's guest: the daemon on gpio-sim lines and the
# i2c-stub display, a SELECT press driven through the simulator's pull, the motor's pulses seen in
# the simulator's value, then SIGTERM.
#
#   Tests/KernelRig/run.sh Tests/KernelRig/daemon-test.sh .build/debug/unwind
#
# Lines: motor gpiochip0:0, PAGE 1, LEFT 2, RIGHT 3, SELECT 4, PANIC 5; display on the stub's bus.
# The motor line is pulled UP in the simulator for the whole run, so every low level seen while
# the daemon holds the line is the daemon driving it low (once the line is let go it reads 1).
#
# The configuration makes each motor pulse last 1 s (haptics.pulse_ms: 1000; 4-4-4-4 breathing,
# one pulse at a breath, two 100 ms apart at a hold). Expected after the press, t = the press:
#   t+0 s  rise ... t+1 s fall                       (corner 1: breathe in, one pulse)
#   t+4 s  rise ... t+5 s fall, t+5.1 s rise ...     (corner 2: hold, two pulses)
# SIGTERM goes out as soon as the hold's second pulse is seen rising, so a motor that goes low
# well before that pulse's own end (1 s) went low because the daemon stopped.
#
# Timing is measured with bash's $EPOCHREALTIME (date +%s%N precision, no fork per sample) and
# asserted with wide margins: everything runs emulated (TCG) in a debug build.
#
# Prints "ok - ..." / "FAIL - ..." per check, then "N passed, N failed, N skipped"
# (deploy/lib/toolkit.sh's format); exits 1 on any failure.
set -euo pipefail
# pass, fail, check, eventually, line_used_by, finish (the guest sees the checkout: run.sh)
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/toolkit.sh"

[ "${UNWIND_RIG:-}" = 1 ] || die --status 2 "runs inside the kernel rig: Tests/KernelRig/run.sh $0 PATH-TO-UNWIND"
[ $# -eq 1 ] || die --status 2 "usage: $0 PATH-TO-UNWIND (e.g. .build/debug/unwind)"
unwind=$1
[ -x "$unwind" ] || die --status 2 "$unwind is not an executable"

chip=$UNWIND_RIG_GPIOCHIP
chip_name=$UNWIND_RIG_GPIOCHIP_NAME
sim=$UNWIND_RIG_SIM_SYSFS
bus=$UNWIND_RIG_I2C_BUS
addr=${UNWIND_RIG_I2C_ADDRS%%,*}
motor=0 select=4
motor_value=$sim/sim_gpio$motor/value

between() { # low value high : low <= value <= high (integers)
    [ "$1" -le "$2" ] && [ "$2" -le "$3" ]
}

# Microseconds of wall-clock time into $now, without a fork.
if [ -n "${EPOCHREALTIME:-}" ]; then
    stamp() {
        local t=$EPOCHREALTIME
        now=$((${t%[.,]*} * 1000000 + 10#${t#*[.,]}))
    }
else
    stamp() {
        local t
        t=$(date +%s%N)
        now=$((t / 1000))
    }
fi
ms() { # microseconds -> milliseconds, for messages
    printf '%d ms' $(($1 / 1000))
}

work=$(mktemp -d /tmp/unwind-daemon-test.XXXXXX)
state=$work/state
log=$work/unwind.log
config=$work/unwind.conf
pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$config" <<EOF
state_directory: $state
gpio:
  motor: $chip_name:0
  page: $chip_name:1
  left: $chip_name:2
  right: $chip_name:3
  select: $chip_name:4
  panic: $chip_name:5
display:
  bus: $bus
  address: $addr
breathing:
  inhale: 4
  hold_after_inhale: 4
  exhale: 4
  hold_after_exhale: 4
haptics:
  pulse_ms: 1000
  gap_ms: 100
  breath_pulses: 1
  hold_pulses: 2
EOF

all_lines_used_by_unwind() {
    local i
    for i in 0 1 2 3 4 5; do
        line_used_by "$chip" "$i" unwind || return 1
    done
}
alive() { # the daemon has not exited (a zombie has: its lines are released)
    local s
    read -r _ _ s _ <"/proc/$pid/stat" 2>/dev/null || return 1
    [ "$s" != Z ]
}
show_log() {
    echo "--- unwind's log ---"
    cat "$log" || true
    echo "---"
}

# --- start ---------------------------------------------------------------------------------------
echo pull-up >"$sim/sim_gpio$motor/pull"
check "the free motor line follows the simulated pull-up" [ "$(cat "$motor_value")" = 1 ]

# The runtime directory systemd would make (RuntimeDirectory=unwind): the control socket's home.
mkdir -p "$work/run"
RUNTIME_DIRECTORY=$work/run "$unwind" run --config "$config" 2>"$log" &
pid=$!
started=$SECONDS
if ! eventually --while alive 60 all_lines_used_by_unwind; then
    fail "unwind requested lines 0-5 within 60 s"
    gpioinfo "$chip" || true
    show_log
    finish
fi
pass "unwind requested lines 0-5 (consumer \"unwind\") after $((SECONDS - started)) s"
check "unwind says it is running" eventually --while alive 30 grep -q "unwind running" "$log"
check "the display is driven over SMBus I²C-block writes" grep -q "display on /dev/i2c-$bus at $addr (SMBus I²C-block write)" "$log"
check "the motor line is driven low against the pull-up" [ "$(cat "$motor_value")" = 0 ]
check "the SELECT line idles high on unwind's pull-up bias" [ "$(cat "$sim/sim_gpio$select/value")" = 1 ]

# --- the press and the pulses --------------------------------------------------------------------
# Samples the motor's level into the transition lists (value, time in microseconds).
t_val=()
t_at=()
last=
sample() {
    local v
    read -r v <"$motor_value"
    stamp
    if [ "$v" != "$last" ]; then
        t_val+=("$v")
        t_at+=("$now")
        last=$v
    fi
}
sample # the level before the press: 0

stamp
press=$now
echo pull-down >"$sim/sim_gpio$select/pull"
until sample && [ $((now - press)) -ge 100000 ]; do :; done
echo pull-up >"$sim/sim_gpio$select/pull"
stamp
release=$now

# Until the hold's second pulse rises (five changes after the first sample), or 30 s.
until sample && [ ${#t_val[@]} -ge 6 ]; do
    if [ $((now - press)) -gt 30000000 ] || ! alive; then
        break
    fi
done
stamp
kill_at=$now
kill -TERM "$pid"

# Until the daemon has exited (a zombie, its lines released), then 300 ms more.
exited=
n=0
while :; do
    sample
    n=$((n + 1))
    if [ -z "$exited" ] && [ $((n % 20)) -eq 0 ]; then
        alive || exited=$now
    fi
    if [ -n "$exited" ] && [ $((now - exited)) -ge 300000 ]; then
        break
    fi
    if [ $((now - kill_at)) -gt 60000000 ]; then
        break
    fi
done
status=0
if [ -n "$exited" ]; then
    wait "$pid" || status=$?
else
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    status=timeout
fi
pid=

echo "press at 0 ms, released at $(ms $((release - press))), SIGTERM at $(ms $((kill_at - press)))${exited:+, exited by $(ms $((exited - press)))}"
echo "motor changes (value at ms after the press):"
for i in "${!t_val[@]}"; do
    echo "  ${t_val[$i]} at $(ms $((t_at[i] - press)))"
done

# Expected: 0 (before), 1 0 (corner 1), 1 0 1 (corner 2), 0 (SIGTERM), 1 (released to the pull-up).
check "the motor changed 0 1 0 1 0 1 0 1: two corners, then low at SIGTERM, then released" \
    [ "${t_val[*]}" = "0 1 0 1 0 1 0 1" ]
if [ ${#t_val[@]} -ge 8 ]; then
    rise1=$((t_at[1] - press)) fall1=$((t_at[2] - press))
    rise2=$((t_at[3] - press)) fall2=$((t_at[4] - press)) rise3=$((t_at[5] - press))
    stop_low=$((t_at[6] - press)) let_go=$((t_at[7] - press))
    check "corner 1 pulses right after the press: rise at $(ms "$rise1") (0-1500 ms)" \
        between 0 "$rise1" 1500000
    check "corner 1's pulse lasts $(ms $((fall1 - rise1))) (1 s configured; 800-2000 ms)" \
        between 800000 $((fall1 - rise1)) 2000000
    check "corner 2 begins $(ms $((rise2 - rise1))) after corner 1 (4 s; 3500-5000 ms)" \
        between 3500000 $((rise2 - rise1)) 5000000
    check "corner 2's first pulse lasts $(ms $((fall2 - rise2))) (1 s; 800-2000 ms)" \
        between 800000 $((fall2 - rise2)) 2000000
    check "corner 2's second pulse follows $(ms $((rise3 - fall2))) later (100 ms; 20-1000 ms)" \
        between 20000 $((rise3 - fall2)) 1000000
    check "after SIGTERM the motor went low $(ms $((stop_low - rise3))) into a 1 s pulse (< 900 ms: the stop, not the pulse's end)" \
        between $((kill_at - press)) "$stop_low" $((rise3 + 900000))
    if [ -n "$exited" ]; then
        check "... while unwind was still running; it then let go of the line (back to the pull-up)" \
            between "$stop_low" "$let_go" "$((exited - press))"
    fi
fi

check "unwind exited with status 0 after SIGTERM (got $status)" [ "$status" = 0 ]
check "the motor line is free again" eval "! line_used_by $chip $motor unwind"
check "with the line free, the motor reads the pull" [ "$(cat "$motor_value")" = 1 ]
check "unwind logged its clean stop" grep -q "unwind stopped; state saved" "$log"
check "the display never failed on i2c-stub" eval "! grep -q 'display lost' '$log'"

# --- the saved state -----------------------------------------------------------------------------
total=$state/totalTime.txt
check "totalTime.txt was written in the state directory" test -f "$total"
if [ -f "$total" ]; then
    mapfile -t lines <"$total"
    echo "totalTime.txt: ${lines[*]}"
    format_ok() {
        local l
        [ ${#lines[@]} -eq 6 ] || return 1
        for l in "${lines[@]}"; do [[ $l =~ ^[0-9]+$ ]] || return 1; done
        [ "$(tail -c 1 "$total" | od -An -c | tr -d ' ')" = '\n' ]
    }
    check "totalTime.txt has six whole numbers, newline-terminated" format_ok
    if format_ok; then
        seconds=$((10#${lines[0]} + 60 * 10#${lines[1]} + 3600 * 10#${lines[2]}))
        check "one session was counted" [ "${lines[5]}" = 1 ]
        check "its time, ${seconds} s, is the run from the press to SIGTERM ($(ms $((kill_at - press))))" \
            between $(((kill_at - press) / 1000000 - 2)) "$seconds" $(((kill_at - press) / 1000000 + 3))
    fi
fi

if [ "$checks_failed" -ne 0 ]; then
    show_log
fi
finish
