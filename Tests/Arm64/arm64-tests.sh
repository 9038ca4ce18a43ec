#!/usr/bin/env bash
# arm64-tests.sh -- Unwind on its board's architecture, and on the newest Debian, as a test stage.
#
#   1. deploy/arm64/toolchain.sh prepare: Debian sid's Swift (amd64), the arm64 Swift from the same
#      source, a trixie arm64 sysroot, qemu-user (cached; cold about 4 minutes and 1.1 GB).
#   2. Cross-compiles the package and its tests for aarch64 at native speed with Debian's Swift,
#      the code under test optimised as the board's release is (-c release; -enable-testing for
#      the tests' @testable imports): qemu-user runs optimised code about twelve times as cheaply
#      as -Onone code. The suites' own code is compiled -Onone (Package.swift): it costs the
#      emulated run little and the build about a fifth less.
#   3. Runs the Swift suites on aarch64 under qemu-user (binfmt_misc): the test binary and every
#      process it starts (unwind, alert-sender, store-writer) are aarch64 code. By default the
#      suites where the architecture can matter: rendering, the hardware edge (GPIO, I²C and the
#      SSD1306 byte stream, the serial port, the file store killed mid-write), the modem over a
#      pseudo-terminal, and the device end to end (PANIC through a pty modem, the maintainer's
#      commands over the control socket). The pure core's suites (thousands of restarts on
#      simulated time) and the hostile-input tables that start the headless device hundreds of
#      times test logic that is the same on every architecture; they run on the host and on sid
#      (step 4), and here with UNWIND_ARM64_TESTS=all (from a -Onone build the whole suite
#      emulated cost 30-40 minutes of CPU; from the release build, not measured yet).
#   4. Builds natively on amd64 against sid's newest glibc and libgpiod 2 with Debian's Swift, so
#      a C library change (glibc 2.42's unsigned termios speeds) or a construct that Debian's
#      compiler cannot lower is caught the day it lands; runs the whole suite there, and the
#      kernel rig's GPIO and I²C tests with that build (libgpiod 2: the v2 shim on gpio-sim).
#   5. deploy/arm64/build-deb.sh: the arm64 release (static Swift runtime) and its package,
#      lintian, then install / upgrade / remove / purge in an arm64 trixie chroot (emulated),
#      and the package's figures (sizes, start-up instructions, memory).
# They run in the order 1, 5, 4 (the build and the suite), 2, 3, then 4's kernel rig: the package
# first, because the SD-card image's stage waits for it and runs beside the rest (run-all.sh).
# Why cross-compile and emulate only the tests: an emulated Swift build of Unwind on two cores
# takes the better part of an hour; cross-compiling the package and its tests takes minutes, and
# step 3's default run about one (Tests/measurements.md has the figures).
#
#   UNWIND_ARM64_SKIP_AMD64=1    leave out step 4
#   UNWIND_ARM64_SKIP_AMD64_RIG=1  leave out step 4's kernel rig run
#   UNWIND_ARM64_SKIP_PACKAGE=1  leave out step 5
#   UNWIND_ARM64_TESTS=all       step 3 runs every suite; =0 leaves step 3 out
#   UNWIND_ARM64_FILTER=REGEX    step 3 runs the suites / tests matching REGEX instead
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD
# cpu_seconds, wait_for_lock, arm64_cpu
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. deploy/lib/toolkit.sh
toolchain=$repo/deploy/arm64/toolchain.sh

# The toolchain's work space (its /src and /build) is this stage's until it ends: a second run at
# the same time waits here instead of cleaning the scratch directories under this one.
lock=$("$toolchain" lock-file) || exit 1
exec 8>"$lock"
wait_for_lock 8 "$lock" "the arm64 toolchain's work space"
UNWIND_ARM64_IN_USE=$(dirname "$lock")
export UNWIND_ARM64_IN_USE

failed=()
step() {
    local name=$1
    shift
    local start=$SECONDS cpu cpu_after result=passed
    cpu_seconds cpu
    echo "--- arm64: $name"
    "$@" || result=FAILED
    cpu_seconds cpu_after
    echo "--- arm64: $name: $result ($((SECONDS - start)) s, $((cpu_after - cpu)) s of CPU)"
    [ "$result" = passed ] || failed+=("$name")
}

sdk_env=(env PKG_CONFIG_SYSROOT_DIR=/opt/arm64/trixie-sysroot)
sdk_args=(--swift-sdk debian-aarch64 --pkg-config-path /opt/arm64/trixie-sysroot/usr/lib/aarch64-linux-gnu/pkgconfig)

# Every build starts from an empty scratch directory but for the fetched dependencies (SwiftPM's
# checkouts and repositories): an incremental debug build after a change of a type's layout has
# linked against stale objects ("undefined symbol ... AlertProgress" here), and the host's
# build is a fresh clone's in CI too. UNWIND_ARM64_INCREMENTAL=1 keeps them, for quick local runs.
clean_scratch() {
    [ "${UNWIND_ARM64_INCREMENTAL:-0}" = 1 ] && return 0
    local dir
    dir="$("$toolchain" path)$1"
    [ -d "$dir" ] || return 0
    find "$dir" -mindepth 1 -maxdepth 1 ! -name checkouts ! -name repositories -exec rm -rf {} +
}

# The package's own release (deploy/arm64/build-deb.sh) is built apart, without -enable-testing:
# the board runs what the device ships, and the suites run against the same optimisation.
cross_build() {
    clean_scratch /build/arm64
    "$toolchain" run "$repo" -- "${sdk_env[@]}" swift build "${sdk_args[@]}" --scratch-path /build/arm64 \
        -c release --build-tests -Xswiftc -enable-testing
}

# Step 3's default (see the header): whole test targets, and single suites of others, each
# named by its target and the beginning of its name (UnwindSimulatorTests.Version: VersionTests).
# Swift Testing matches the regex made of them against each test's id.
board_targets=(UnwindRenderTests UnwindSeamsTests UnwindSimulatedHardwareTests UnwindLinuxHardwareTests UnwindModemTests)
board_suites=(UnwindCoreTests.AlertSlot UnwindAssemblyTests.AlertLink UnwindSimulatorTests.SimRealModem
              UnwindSimulatorTests.MaintenanceEndToEnd UnwindSimulatorTests.FileMode UnwindSimulatorTests.Version)
# board_filter: the regex, once every name in it is found in Tests/: a renamed target or suite
# stops the step instead of quietly leaving its tests out of the emulated run.
board_filter() {
    local name target suite missing=()
    for name in "${board_targets[@]}"; do [ -d "$repo/Tests/$name" ] || missing+=("test target $name"); done
    for name in "${board_suites[@]}"; do
        target=${name%%.*} suite=${name#*.}
        grep -rqE "^ *(@Suite.* )?(struct|final class|class|enum) ${suite}[A-Za-z]*" "$repo/Tests/$target" 2>/dev/null ||
            missing+=("suite $suite* in $target")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "the emulated run's selection names what Tests/ no longer has: ${missing[*]} (Tests/Arm64/arm64-tests.sh)" >&2
        return 1
    fi
    local IFS='|'
    echo "^(${board_targets[*]})\\.|^(${board_suites[*]//./\\.})"
}
emulated_tests() {
    local regex
    regex=$(board_filter) || return 1
    local filter=(--filter "$regex")
    [ "${UNWIND_ARM64_TESTS:-board}" = all ] && filter=()
    [ -n "${UNWIND_ARM64_FILTER:-}" ] && filter=(--filter "$UNWIND_ARM64_FILTER")
    # The test binary is aarch64: the kernel hands it (and every aarch64 program it starts) to
    # qemu-aarch64 through binfmt_misc. QEMU_LD_PREFIX: its C library is the trixie sysroot's
    # (glibc 2.41, the package's target); sid's glibc 2.42 asks for termios2 (TCGETS2), which
    # the host's qemu-user 7.2 does not emulate (tcgetattr and ttyname_r fail with ENOSYS).
    # QEMU_CPU: the board's CPU (arm64_cpu, deploy/lib/toolkit.sh).
    # shellcheck disable=SC2016 # the script is the chroot's, expanded there
    "$toolchain" run "$repo" -- env QEMU_LD_PREFIX=/opt/arm64/trixie-sysroot QEMU_CPU="$arm64_cpu" UNWIND_TEST_EMULATED=1 bash -c '
        bin=/build/arm64/aarch64-unknown-linux-gnu/release
        file -b "$bin/unwindPackageTests.xctest" | grep -q "ARM aarch64" || { echo "not an aarch64 test binary"; exit 1; }
        file -b "$bin/unwind" | grep -q "ARM aarch64" || { echo "not an aarch64 unwind"; exit 1; }
        echo "the test binary: $(file -b "$bin/unwindPackageTests.xctest" | cut -d, -f1-2)"
        "$bin/unwindPackageTests.xctest" --testing-library swift-testing "$@"
    ' _ "${filter[@]}"
}

# Debian's swiftlang ships the _Testing_Foundation cross-import overlay's module but not its
# library, so a test bundle that imports both Testing and Foundation does not link unless the
# overlay is left out (as the aarch64 SDK's toolset does); the tests do not use it.
amd64_flags=(-Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays)
amd64_build() {
    clean_scratch /build/amd64
    "$toolchain" run "$repo" -- swift build --scratch-path /build/amd64 --build-tests "${amd64_flags[@]}"
}

# What a new C library changes at run time (termios, ioctl, file and socket calls) shows here.
amd64_suite() {
    "$toolchain" run "$repo" -- swift test --skip-build --scratch-path /build/amd64 "${amd64_flags[@]}"
}

# The host's libgpiod is 1.6 (the v1 shim); this build's is sid's 2.x. The rig's guest runs the
# test bundle inside the toolchain's sid system (Tests/KernelRig/in-chroot.sh).
amd64_rig() {
    "$repo/Tests/KernelRig/hardware-tests.sh" --chroot "$("$toolchain" path)" \
        --tests /build/amd64/debug/unwindPackageTests.xctest
}

step "toolchain (Debian sid Swift, arm64 sysroot, qemu-user)" "$toolchain" prepare
if [ ${#failed[@]} -eq 0 ]; then
    # The package first: the SD-card image's stage waits for it (Tests/run-all.sh), and runs
    # beside the steps after it.
    if [ "${UNWIND_ARM64_SKIP_PACKAGE:-0}" != 1 ]; then
        step "the arm64 package: build, lintian, install in an arm64 chroot" "$repo/deploy/arm64/package-test.sh"
    fi
    if [ "${UNWIND_ARM64_SKIP_AMD64:-0}" != 1 ]; then
        step "native amd64 build on sid (glibc 2.42+, libgpiod 2, Debian's Swift)" amd64_build
        if [[ " ${failed[*]} " != *" native amd64 build"* ]]; then
            step "every Swift suite on amd64 sid" amd64_suite
        fi
    fi
    step "cross-compile for aarch64 (Debian's Swift 6.2, trixie sysroot)" cross_build
    if [[ " ${failed[*]} " != *" cross-compile"* ]] && [ "${UNWIND_ARM64_TESTS:-board}" != 0 ]; then
        step "the Swift suites on aarch64 (qemu-user; ${UNWIND_ARM64_TESTS:-board})" emulated_tests
    fi
    # Last: the other steps are done, so the rig's guest shares the machine with no more than
    # the SD-card image's last boots (run-all.sh runs the two stages side by side).
    if [ "${UNWIND_ARM64_SKIP_AMD64:-0}" != 1 ] && [ "${UNWIND_ARM64_SKIP_AMD64_RIG:-0}" != 1 ] &&
        [[ " ${failed[*]} " != *" native amd64 build"* ]]; then
        step "kernel rig with sid's libgpiod 2 (the v2 shim on gpio-sim)" amd64_rig
    fi
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "arm64: failed: ${failed[*]}"
    exit 1
fi
echo "arm64: every step passed"
