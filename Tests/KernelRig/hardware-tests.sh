#!/usr/bin/env bash
# The hardware edge against a real Linux kernel: the one entry point CI calls (see README.md here).
#
#   Tests/KernelRig/hardware-tests.sh [--build] [--scratch-path DIR] [--tests FILE] [--unwind FILE]
#                                     [--selftest] [--chroot ROOT]
#
# 1. prepare.sh (about 1 s with a warm cache; 30-45 s and a download when cold);
# 2. with --build: `swift build --scratch-path DIR --build-tests` (the test bundle and `unwind`);
# 3. the Swift tests of the kernel rig (UnwindLinuxHardwareTests' RigTests: libgpiod on gpio-sim,
#    libi2c and the SSD1306 driver on i2c-stub), run from the test bundle inside the guest;
# 4. daemon-test.sh: `unwind run` on the simulated lines and display, a press, the motor's pulses,
#    SIGTERM, the saved state; inside a second guest.
# With --selftest, the rig's own selftest.sh runs first.
#
# Options:
#   --build              build first (otherwise the binaries must already exist)
#   --scratch-path DIR   SwiftPM's scratch path (default $UNWIND_RIG_SCRATCH or .build);
#                        the binaries are DIR/debug/unwindPackageTests.xctest and DIR/debug/unwind
#   --tests FILE         the test bundle to run instead
#   --unwind FILE        the unwind binary to run instead
#   --selftest           run Tests/KernelRig/selftest.sh first
#   --chroot ROOT        run the test bundle (--tests, a path inside ROOT) in the system at ROOT,
#                        inside the guest (in-chroot.sh): another Debian's C libraries, e.g. the
#                        arm64 stage's sid chroot, where the GPIO code is the libgpiod v2 shim. The
#                        daemon stage is left out (it needs the host's tools).
# Environment: what run.sh and prepare.sh take (UNWIND_RIG_CACHE, UNWIND_RIG_KVER, ...);
# UNWIND_RIG_TIMEOUT defaults to 300 s per guest here.
#
# Binaries under /tmp (which the guest replaces with its own tmpfs) and outside the checkout are
# copied, with the resource bundles beside them, into a .build-kernel-rig.* directory of the
# checkout for the run; run.sh shares a checkout that is itself under /tmp with the guest.
#
# Exits 0 when every stage passed, 1 when a test failed, 2 on a usage error; prints one summary
# line per stage with its time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# log, die
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$here/../../deploy/lib/toolkit.sh"

usage() {
    sed -n '3,5p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

scratch=${UNWIND_RIG_SCRATCH:-.build}
build=0
selftest=0
tests=
unwind=
chroot_root=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=1 ;;
    --selftest) selftest=1 ;;
    --scratch-path)
        [ $# -ge 2 ] || usage
        scratch=$2
        shift
        ;;
    --scratch-path=*) scratch=${1#*=} ;;
    --tests)
        [ $# -ge 2 ] || usage
        tests=$2
        shift
        ;;
    --tests=*) tests=${1#*=} ;;
    --unwind)
        [ $# -ge 2 ] || usage
        unwind=$2
        shift
        ;;
    --unwind=*) unwind=${1#*=} ;;
    --chroot)
        [ $# -ge 2 ] || usage
        chroot_root=$2
        shift
        ;;
    --chroot=*) chroot_root=${1#*=} ;;
    -h | --help) usage ;;
    *)
        log "unknown argument $1"
        usage
        ;;
    esac
    shift
done

cd "$root" # run.sh starts the guest's command in the caller's directory
export UNWIND_RIG_TIMEOUT=${UNWIND_RIG_TIMEOUT:-300}
tests=${tests:-$scratch/debug/unwindPackageTests.xctest}
unwind=${unwind:-$scratch/debug/unwind}

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-hardware-tests.XXXXXX")
staging=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    rm -rf "$work"
    if [ -n "$staging" ]; then
        rm -rf "$staging"
    fi
}
trap cleanup EXIT

results=()
failures=0
started_all=$SECONDS
record() { # stage outcome seconds
    results+=("$(printf '%-9s %-4s %4d s' "$1" "$2" "$3")")
    if [ "$2" != pass ]; then
        failures=$((failures + 1))
    fi
}
summary() {
    printf '\n== kernel rig hardware tests ==\n'
    printf '%s\n' "${results[@]}"
    printf 'total %d s: %s\n' $((SECONDS - started_all)) "$([ "$failures" -eq 0 ] && echo passed || echo "$failures stage(s) failed")"
}

# --- 1. the rig ----------------------------------------------------------------------------------
t=$SECONDS
if ! "$here/prepare.sh"; then
    record prepare FAIL $((SECONDS - t))
    summary
    exit 1
fi
record prepare pass $((SECONDS - t))

# --- 2. the binaries -----------------------------------------------------------------------------
if [ "$build" = 1 ]; then
    t=$SECONDS
    log "swift build --scratch-path $scratch --build-tests"
    if ! swift build --scratch-path "$scratch" --build-tests; then
        record build FAIL $((SECONDS - t))
        summary
        exit 1
    fi
    record build pass $((SECONDS - t))
fi
binaries=("$tests" "$unwind")
if [ -n "$chroot_root" ]; then
    chroot_root=$(realpath "$chroot_root")
    binaries=("$chroot_root/$tests")
fi
for f in "${binaries[@]}"; do
    if [ ! -f "$f" ] || [ ! -x "$f" ]; then
        die --status 2 "no executable $f: build with --build (or swift build --scratch-path $scratch --build-tests), or name it"
    fi
done

# The guest has its own /tmp, /run, /proc, /sys and /dev: a binary there is copied for the run,
# into the checkout, which run.sh shares with the guest wherever it lies.
seen_path=
guest_visible() { # path -> $seen_path: the same binary at a path the guest sees (a copy if needed)
    local real dir
    real=$(realpath "$1")
    case $real in
    "$(realpath "$root")"/*) seen_path=$real ;;
    /tmp/* | /run/* | /proc/* | /sys/* | /dev/*)
        if [ -z "$staging" ]; then
            staging=$(mktemp -d "$root/.build-kernel-rig.XXXXXX")
        fi
        dir=$(mktemp -d "$staging/bin.XXXXXX")
        cp "$real" "$dir/"
        # Resource bundles (e.g. unwind_UnwindRuntime.resources) are looked up beside the binary.
        find "$(dirname "$real")" -maxdepth 1 -name '*.resources' -exec cp -R {} "$dir/" \;
        log "copied $1 to $dir (the guest does not see $(dirname "$real"))"
        seen_path=$dir/$(basename "$real")
        ;;
    *) seen_path=$real ;;
    esac
}
tests_command=("$tests")
if [ -n "$chroot_root" ]; then
    case $chroot_root in
    /tmp/* | /run/*)
        die --status 2 "--chroot $chroot_root: the guest has its own /tmp and /run, so it cannot see it"
        ;;
    esac
    tests_command=("$here/in-chroot.sh" "$chroot_root" "$tests")
else
    guest_visible "$tests"
    tests=$seen_path
    tests_command=("$tests")
    guest_visible "$unwind"
    unwind=$seen_path
fi

# --- the rig's own check (optional) ----------------------------------------------------------------
if [ "$selftest" = 1 ]; then
    t=$SECONDS
    rc=0
    "$here/run.sh" "$here/selftest.sh" | tee "$work/selftest.out" || rc=$?
    if [ "$rc" -eq 0 ] && grep -Eq '^[0-9]+ passed, 0 failed' "$work/selftest.out"; then
        record selftest pass $((SECONDS - t))
    else
        record selftest FAIL $((SECONDS - t))
    fi
fi

# --- 3. the Swift tests in the guest ---------------------------------------------------------------
t=$SECONDS
rc=0
"$here/run.sh" "${tests_command[@]}" --testing-library swift-testing --filter 'UnwindLinuxHardwareTests\.RigTests' |
    tee "$work/swift.out" || rc=$?
# Guard against a pass that tested nothing: a filter matching no test, or tests that skipped.
ran=$(sed -n 's/.*Test run with \([0-9][0-9]*\) tests\{0,1\} .*passed.*/\1/p' "$work/swift.out" | tail -n 1)
skipped=$(grep -c ' skipped' "$work/swift.out" || true)
if [ "$rc" -eq 0 ] && [ "${ran:-0}" -gt 0 ] && [ "$skipped" -eq 0 ]; then
    record swift pass $((SECONDS - t))
else
    log "Swift rig tests: exit $rc, ${ran:-no} tests reported passing, $skipped skipped"
    record swift FAIL $((SECONDS - t))
fi

# --- 4. the daemon in the guest ---------------------------------------------------------------------
if [ -n "$chroot_root" ]; then
    summary
    [ "$failures" -eq 0 ]
    exit
fi
t=$SECONDS
rc=0
"$here/run.sh" "$here/daemon-test.sh" "$unwind" | tee "$work/daemon.out" || rc=$?
if [ "$rc" -eq 0 ] && grep -Eq '^[0-9]+ passed, 0 failed' "$work/daemon.out"; then
    record daemon pass $((SECONDS - t))
else
    record daemon FAIL $((SECONDS - t))
fi

summary
[ "$failures" -eq 0 ]
