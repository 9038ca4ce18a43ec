#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run) and as a newcomer runs it from the README:
#   1. deploy/dev-deps.sh: what building and testing needs (apt-get, only when missing);
#   1b. Tests/module-graph.sh: the README's module graph is Package.swift's;
#   2. swift build --build-tests (warnings in the project's own code are errors), then
#      swift test: every Swift Testing suite (core, render, simulated devices, the modem over a
#      pseudo-terminal, the file store killed mid-write, the maintainer's commands end to end);
#   3. Tests/KernelRig/hardware-tests.sh: the GPIO and I²C code and the daemon against a real
#      Linux kernel (gpio-sim, i2c-stub) in a qemu guest;
#   4. Tests/Arm64/arm64-tests.sh: the board's architecture: cross-compiled with Debian's Swift
#      for aarch64, every Swift suite run under qemu-user, a native build on Debian sid (newest
#      glibc and libgpiod), and the arm64 package built, lintian-clean and installed in an
#      arm64 chroot;
#   5. Tests/Image/boot-test.sh: the SD-card image (deploy/image/build-image.sh) booted in an
#      emulated arm64 machine: first boot from the card's setup file, PANIC through gpio-sim to
#      the modem's AT+CMGS, then power cuts (Tests/Image/power-cuts.sh runs 50);
#   6. deploy/test.sh: shellcheck, the Debian package (build, lintian, install / upgrade / remove /
#      purge in a bookworm chroot), the systemd unit, the udev rules, the Ansible playbook (update,
#      health check, rollback), the configuration file against the binary.
# Every stage runs; the script fails when any stage failed. It ends with a table: each stage's
# seconds, CPU seconds (what it cost the machine: stages share its cores) and result, whether
# each preparation was made or came from its cache, and what the run received from the network.
# A preparation that failed is named, with why in one line, in the stage that needed it. The
# stages are numbered by what they test; the order they run in, and which run side by side, is
# below ("stages").
#   UNWIND_SKIP_RIG=1 / UNWIND_SKIP_ARM64=1 / UNWIND_SKIP_IMAGE=1 / UNWIND_SKIP_DEPLOY=1 leave out
#   stage 3 / 4 / 5 / 6 (quicker local runs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# die, cpu_seconds
# shellcheck source-path=SCRIPTDIR source=../deploy/lib/toolkit.sh
. deploy/lib/toolkit.sh
started=$SECONDS
rx_bytes() { sed 's/:/ /' /proc/net/dev | awk 'NR > 2 && $1 != "lo" { s += $2 } END { printf "%.0f\n", s }'; }
rx_started=$(rx_bytes)

./deploy/dev-deps.sh || die "installing the dependencies failed"
# The machine's pace, before anything else runs: one core's seconds for a fixed loop. Machines of
# one kind differ (the same commit's build has taken 224 and 427 CPU seconds on two of them,
# Tests/measurements.md), so a run's times are read beside it.
pace_started=$(date +%s%N)
awk 'BEGIN { for (i = 0; i < 3e7; i++) s += i % 7; exit s < 0 }'
pace=$(awk -v a="$pace_started" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')

# --- preparations, beside the build ---------------------------------------------------------------
# The slowest preparations wait on the network, the disk and qemu-user (the arm64 toolchain: 1.1 GB
# of Swift packages and two Debian roots; the kernel rig's kernel; the image's trixie arm64 root,
# which the arm64 package's install test shares; the image rig's modules), so they run beside the
# build, in two lines: the toolchain, which mostly waits on the network, beside the rest, which
# mostly computes (host packages are installed one apt-get at a time, deploy/lib/apt.sh). Each
# takes its cache's lock and keys its cache by what it holds, and its stage prepares again
# (idempotent, with its messages), so a failure here is said there. Each stage waits for the
# preparations it needs (needs, below), and for no other.
mkdir -p .build
preps=.build/preparations.tsv
: >"$preps"
# prep NAME LOG CMD...: one preparation; a row of $preps: name, seconds, CPU seconds, ok or failed,
# how (made, from the cache), and on a failure why, in one line.
prep() {
    local name=$1 log=$2
    shift 2
    local t=$SECONDS cpu cpu_after result=ok how why=
    cpu_seconds cpu
    "$@" >"$log" 2>&1 || result=failed
    cpu_seconds cpu_after
    how=$(grep -Eo 'cache: (hit|made)' "$log" | tail -n 1 | sed 's/cache: hit/from the cache/; s/cache: made/made/')
    [ "$result" = failed ] && why=$(why_failed "$log")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$((SECONDS - t))" "$((cpu_after - cpu))" "$result" "${how:--}" "$why" >>"$preps"
}
# why_failed LOG: the reason a preparation failed, in one line.
why_failed() {
    local line
    if line=$(grep -m1 -i 'no space left on device' "$1"); then
        echo "the disk is full ($line)"
    elif line=$(grep -m1 -Ei 'temporary failure resolving|could not resolve|failed to fetch|unable to connect|connection (timed out|refused)|network is unreachable|hash sum mismatch' "$1"); then
        echo "the mirror did not answer as it should: $line"
    elif line=$(grep -m1 -Ei 'unable to locate package|has no installation candidate|is not available|no packages found|version .* was not found|apt has no' "$1"); then
        echo "a package is missing from the archive: $line"
    else
        line=$(grep -Ei 'error|failed|cannot' "$1" | tail -n 1)
        echo "${line:-$(tail -n 1 "$1")} (.build/$(basename "$1"))"
    fi
}
preparations=()
if [ "${UNWIND_SKIP_ARM64:-0}" != 1 ]; then
    prep "arm64 toolchain (Debian sid's Swift, trixie sysroot)" .build/prep-toolchain.log deploy/arm64/toolchain.sh prepare &
    preparations+=($!)
fi
(
    if [ "${UNWIND_SKIP_RIG:-0}" != 1 ]; then
        prep "kernel rig (Debian's kernel, gpio-sim)" .build/prep-kernel-rig.log Tests/KernelRig/prepare.sh
    fi
    if [ "${UNWIND_SKIP_IMAGE:-0}" != 1 ] || [ "${UNWIND_SKIP_ARM64:-0}" != 1 ]; then
        prep "trixie arm64 root (the image's base, the package's install test)" .build/prep-arm64-root.log deploy/image/build-image.sh --base-only
    fi
    if [ "${UNWIND_SKIP_IMAGE:-0}" != 1 ]; then
        base=$(deploy/image/build-image.sh --base-only 2>/dev/null)
        prep "the image rig's modules (gpio-sim, i2c-stub for arm64; 7zr)" .build/prep-rig-modules.log \
            Tests/Image/rig-modules.sh "$base" "${UNWIND_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-image}/rig-modules"
    fi
) &
preparations+=($!)

# --- stages ---------------------------------------------------------------------------------------
failed=()
stages=()
# A stage's CPU seconds are counted in a subshell of its own: this shell's count of its ended
# children would also take in a stage beside it that ends meanwhile (the arm64 stage's hour in
# the image stage's figure).
# Each stage's output is also kept in its own log, for the failures' summary at the end (none
# left from a run before: a stage that never started must not show an old failure).
rm -f .build/stage-output-*.log
stage_log() { printf '.build/stage-output-%s.log\n' "$(printf '%s' "${1%% (*}" | tr -c 'a-zA-Z0-9' '-')"; }
stage() {
    local name=$1
    shift
    local start=$SECONDS cpu result=passed counted
    counted=$(mktemp)
    echo "=== $name"
    ( "$@"; rc=$?; cpu_seconds cpu; echo "$cpu" >"$counted"; exit $rc ) 2>&1 | tee "$(stage_log "$name")"
    if [ "${PIPESTATUS[0]}" != 0 ]; then
        result=FAILED
        failed+=("$name")
    fi
    cpu=$(cat "$counted")
    rm -f "$counted"
    echo "=== $name: $result ($((SECONDS - start)) s, $cpu s of CPU)"
    stages+=("$name"$'\t'"$((SECONDS - start))"$'\t'"$cpu"$'\t'"$result")
}
# running PID...: whether any of them still runs (one that ended and was not waited for is a
# zombie, which kill -0 still finds).
running() {
    local pid
    for pid in "$@"; do
        [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$pid/stat" && return 0
    done
    return 1
}
# needs PREPARATION...: waits until each preparation a stage needs has ended (as long as any
# runs), and says in one line each one that failed, before the stage tries it again itself.
needs() {
    local p name result why start=$SECONDS
    for p in "$@"; do
        until cut -f1 "$preps" | grep -qF "$p" || ! running "${preparations[@]}"; do sleep 1; done
        while IFS=$'\t' read -r name _ _ result _ why; do
            [[ $name == "$p"* && $result == failed ]] && echo "=== the preparation '$name' failed: $why"
        done <"$preps"
    done
    [ $((SECONDS - start)) -gt 0 ] && echo "=== waited $((SECONDS - start)) s for: $*"
    return 0
}

# Warnings in the project's own code (Sources/, Tests/) fail the build. SwiftPM compiles the
# dependencies with -suppress-warnings and without this flag (it only reaches their link lines,
# where it does nothing), so a dependency's warning never fails it. The flag is part of the build
# description: a plain `swift build` after this one rebuilds the project's own modules once.
# `swift test --skip-build` below runs what this stage built.
stage "build" swift build --build-tests -Xswiftc -warnings-as-errors
stage "module graph (README = Package.swift)" Tests/module-graph.sh
# The deployment checks need only the build (and the network, for their Debian roots): they run
# beside the stages below, their output kept and printed when they end.
if [ "${UNWIND_SKIP_DEPLOY:-0}" != 1 ]; then
    stage "deployment" env UNWIND_BINARY="$PWD/.build/debug/unwind" deploy/test.sh >.build/stage-deployment.log 2>&1 &
    deployment=$!
fi
# The arm64 stage starts once the preparations it needs are done, beside the Swift suites, which
# hold on a loaded machine (Tests/README.md, "The suite under load") and leave most of a core
# free: it builds its package first, and the SD-card image's stage, which boots that package,
# starts once the suites have ended and the package is there, beside the rest of the arm64
# stage: the two then share both cores (Tests/measurements.md). Starting the arm64 stage beside
# the build and the image stage beside the suites, with the arm64 stage's compiles niced, makes
# the run longer: with three or four stages on the two cores each costs more CPU
# (measurements.md, "The image stage started early, beside niced compiles"). The kernel rig
# comes last, its guest's timing checks on a machine the others have left.
rm -rf .build/arm64-package
if [ "${UNWIND_SKIP_ARM64:-0}" != 1 ]; then
    {
        needs "arm64 toolchain" "trixie arm64 root"
        stage "arm64 (cross-compiled, tests under qemu-user, package)" Tests/Arm64/arm64-tests.sh
    } >.build/stage-arm64.log 2>&1 &
    arm64=$!
    echo "=== the arm64 stage runs beside the next ones; its output follows when it ends (.build/stage-arm64.log)"
fi
stage "swift test" swift test --skip-build
if [ "${UNWIND_SKIP_IMAGE:-0}" != 1 ]; then
    needs "trixie arm64 root" "the image rig's modules"
    # The package the arm64 stage builds first; without it, the image stage builds one.
    start=$SECONDS
    until compgen -G ".build/arm64-package/unwind_*_arm64.deb" >/dev/null || ! running "${arm64:-}"; do sleep 2; done
    [ -n "${arm64:-}" ] && echo "=== waited $((SECONDS - start)) s for the arm64 package"
    image_deb=()
    for d in .build/arm64-package/unwind_*_arm64.deb; do [ -f "$d" ] && image_deb=(--deb "$d"); done
    stage "SD-card image (booted in qemu-system-aarch64, power cuts)" Tests/Image/boot-test.sh "${image_deb[@]}"
fi
# join_stage NAME PID LOG: a stage that ran beside the others: its output, its verdict in the table.
join_stage() {
    local name=$1 pid=$2 log=$3 result secs cpu
    wait "$pid"
    cat "$log"
    result=$(sed -n "s/^=== $name: \([A-Za-z]*\) .*/\1/p" "$log" | tail -n 1)
    secs=$(sed -n "s/^=== $name: [A-Za-z]* (\([0-9]*\) s, .*/\1/p" "$log" | tail -n 1)
    cpu=$(sed -n "s/^=== $name: [A-Za-z]* ([0-9]* s, \([0-9]*\) s of CPU)/\1/p" "$log" | tail -n 1)
    stages+=("$name (beside the others)"$'\t'"${secs:-?}"$'\t'"${cpu:-?}"$'\t'"${result:-FAILED}")
    [ "${result:-}" = passed ] || failed+=("$name")
}
if [ -n "${arm64:-}" ]; then
    join_stage "arm64 (cross-compiled, tests under qemu-user, package)" "$arm64" .build/stage-arm64.log
fi
if [ "${UNWIND_SKIP_RIG:-0}" != 1 ]; then
    needs "kernel rig" "the image rig's modules"
    stage "kernel rig" Tests/KernelRig/hardware-tests.sh --scratch-path .build
fi
wait "${preparations[@]}"
if [ -n "${deployment:-}" ]; then
    join_stage deployment "$deployment" .build/stage-deployment.log
fi

# --- the table ------------------------------------------------------------------------------------
echo
wall=$((SECONDS - started))
cpu_seconds cpu
echo "run-all: $wall s in all; $cpu s of CPU of the $((wall * $(nproc))) its $(nproc) cores had;" \
    "$((($(rx_bytes) - rx_started) / 1048576)) MB received from the network;" \
    "the machine's pace: a fixed loop in $pace s on one core at the start"
printf '%-58s %8s %8s  %s\n' "stage" "seconds" "CPU s" "result"
for row in "${stages[@]}"; do
    IFS=$'\t' read -r name secs cpu result <<<"$row"
    printf '%-58s %8s %8s  %s\n' "$name" "$secs" "$cpu" "$result"
done
printf '%-58s %8s %8s  %-7s %s\n' "preparation (beside the build)" "seconds" "CPU s" "result" "how"
while IFS=$'\t' read -r name secs cpu result how _; do
    printf '%-58s %8s %8s  %-7s %s\n' "$name" "$secs" "$cpu" "$result" "$how"
done <"$preps"

if [ ${#failed[@]} -gt 0 ]; then
    # The failed checks again, with what they printed, where the end of a long output is read.
    for name in "${failed[@]}"; do
        log=$(stage_log "$name")
        echo
        echo "run-all: what failed in '$name' ($log):"
        # A check's FAIL with what it printed, a Swift test's, a compiler's or a script's error, a
        # stage's own verdict; not the device's status lines that the bad-card boots expect to say
        # "error:". Where none of these is found, the log's end.
        grep -E '^FAIL - |^not ok|^    \| |✘|error:|: FAILED \(|: failed: ' "$log" 2>/dev/null |
            grep -Ev '^  [a-z0-9-]+: UNWIND-' | head -n 80 | grep . || tail -n 30 "$log" 2>/dev/null
    done
    echo "run-all: failed: ${failed[*]}"
    exit 1
fi
echo "run-all: every stage passed"
