# shellcheck shell=bash
# deploy/lib/toolkit.sh -- sourced by the test and build scripts (bash): their messages, their
# checks' verdicts in one format, and their waits. deploy/tests/toolkit-test.sh tests it.
#
# Messages, on stderr, named by $me: the script's file name without .sh, or what the script sets
# after sourcing this file.
#   log MESSAGE...               "me: MESSAGE"
#   die [--status N] MESSAGE...  "me: error: MESSAGE", then exit N (default 1)
#
# Checks, on stdout, one line each, counted in checks_passed, checks_failed, checks_skipped:
#   pass WHAT                    "ok - WHAT"
#   fail WHAT [LOG]              "FAIL - WHAT", then LOG's last 40 lines, each as "    | LINE"
#   skip WHAT WHY                "skip - WHAT (WHY)"
#   check WHAT COMMAND...        runs COMMAND in this shell (what it sets stays set), its output
#                                kept aside: pass WHAT, or fail WHAT with that output
#   check_all WHAT <<'EOF'       each line of standard input a shell test, run in a subshell:
#                                pass WHAT when every one succeeds, else fail WHAT naming them
#   finish                       "N passed, N failed, N skipped", then exit 0 when nothing
#                                failed, else 1. Tests/KernelRig/hardware-tests.sh reads this
#                                line ("^N passed, 0 failed").
#
# Waits (a condition, never a fixed time):
#   eventually [--while COND] SECONDS COMMAND...
#                                COMMAND again every 0.1 s until it succeeds; fails once SECONDS
#                                have passed, or as soon as the command COND fails
#
# Locks:
#   wait_for_lock FD FILE WHAT   flock FD (open on FILE); when another process holds it, says
#                                once who has FILE open (PID and command line) before
#                                waiting: a run held by a leftover of a stopped one is named
#
# Emulated arm64 (qemu-user through binfmt_misc):
#   arm64_cpu                    the CPU the board's programs are emulated as: QEMU_CPU=$arm64_cpu
#                                in the environment of every emulated run and chroot
#
# Costs:
#   cpu_seconds VAR              VAR: the CPU time (user + system) of this shell's children
#                                that have ended, in whole seconds: a stage's cost in the
#                                machine's time, which its wall-clock seconds hide when stages
#                                share cores (set, not printed: `$(...)` is another shell)
#
# The kernel rig (Tests/KernelRig, deploy/tests/motor-off-rig.sh):
#   line_used_by CHIP OFFSET CONSUMER
#                                gpioinfo shows the line requested by CONSUMER ("[used" starts
#                                the flags, with the bias after it when one was asked for)

me=$(basename "$0" .sh)
checks_passed=0
checks_failed=0
checks_skipped=0

log() { printf '%s: %s\n' "$me" "$*" >&2; }

die() {
    local status=1
    if [ "${1:-}" = --status ]; then
        status=$2
        shift 2
    fi
    log "error: $*"
    exit "$status"
}

pass() {
    checks_passed=$((checks_passed + 1))
    printf 'ok - %s\n' "$1"
}

fail() {
    checks_failed=$((checks_failed + 1))
    printf 'FAIL - %s\n' "$1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 40 "$2" | sed 's/^/    | /'; fi
    return 0
}

skip() {
    checks_skipped=$((checks_skipped + 1))
    printf 'skip - %s (%s)\n' "$1" "$2"
}

# The locals are prefixed: COMMAND may be a function of the caller that sets its own globals.
check() {
    local _check_what=$1 _check_out
    shift
    _check_out=$(mktemp "${TMPDIR:-/tmp}/unwind-check.XXXXXX")
    if "$@" >"$_check_out" 2>&1; then pass "$_check_what"; else fail "$_check_what" "$_check_out"; fi
    rm -f "$_check_out"
}

check_all() {
    local _check_what=$1 _check_out _check_line
    _check_out=$(mktemp "${TMPDIR:-/tmp}/unwind-check.XXXXXX")
    while IFS= read -r _check_line; do
        [ -n "$_check_line" ] || continue
        (eval "$_check_line") </dev/null >/dev/null 2>&1 || echo "failed: $_check_line" >>"$_check_out"
    done
    if [ -s "$_check_out" ]; then fail "$_check_what" "$_check_out"; else pass "$_check_what"; fi
    rm -f "$_check_out"
}

finish() {
    printf '%d passed, %d failed, %d skipped\n' "$checks_passed" "$checks_failed" "$checks_skipped"
    [ "$checks_failed" -eq 0 ] && exit 0
    exit 1
}

eventually() {
    local _while=
    if [ "${1:-}" = --while ]; then
        _while=$2
        shift 2
    fi
    local _deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$_deadline" ] || return 1
        if [ -n "$_while" ] && ! "$_while"; then return 1; fi
        sleep 0.1
    done
}

# Read whole, then matched: under pipefail, `gpioinfo | grep -q` fails when grep's early exit
# kills gpioinfo with SIGPIPE.
# The boards' CPUs are the Cortex-A53 (Pi 3, Zero 2 W) and the Cortex-A72 (Pi 4), both ARMv8.0.
# qemu-user's default CPU ("max") has features none of them has, pointer authentication among
# them: Debian's arm64 libraries are built with branch protection, and qemu computes each of their
# PAC instructions in software (the QARMA cipher), where the boards' CPUs take them as no-ops. As a
# Cortex-A53 an emulated suite runs what a board runs, for about a quarter less CPU.
# shellcheck disable=SC2034 # used by the scripts that source this file
arm64_cpu=cortex-a53

wait_for_lock() {
    local fd=$1 file=$2 what=$3 path holders="" pid
    flock -n "$fd" && return 0
    # Whoever has the file open may hold it: the process that took the lock may be gone while a
    # child it started keeps the descriptor (a compiler left by a stopped run).
    path=$(readlink -f "$file")
    for pid in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$path" 2>/dev/null | cut -d/ -f3 | sort -un); do
        [ "$pid" = "$BASHPID" ] && continue
        holders+=" $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-80))" || true
    done
    log "waiting for $what ($file), held by${holders:- another process}"
    flock "$fd"
}

cpu_seconds() {
    local file line
    file=$(mktemp) || return 1
    # `times` in this shell: a command substitution would run it in a subshell, which has no
    # children. Its second line is the ended children's user and system time ("1m2.345s 0m0.678s").
    times >"$file"
    line=$(tail -n 1 "$file")
    rm -f "$file"
    printf -v "$1" '%s' "$(awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } printf "%d", s }' <<<"$line")"
}

line_used_by() {
    local info
    info=$(gpioinfo "$1") || return 1
    grep -q "line *$2:.*\"$3\".*\[used" <<<"$info"
}
