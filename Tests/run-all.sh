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
# Every stage runs; the script fails when any stage failed.
#   UNWIND_SKIP_RIG=1 / UNWIND_SKIP_ARM64=1 / UNWIND_SKIP_IMAGE=1 / UNWIND_SKIP_DEPLOY=1 leave out
#   stage 3 / 4 / 5 / 6 (quicker local runs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

./deploy/dev-deps.sh || { echo "run-all: installing the dependencies failed" >&2; exit 1; }

# The slowest preparations wait mostly on the network and the disk (the arm64 toolchain: 1.1 GB
# of Swift packages and two Debian roots, about 4 minutes cold; then the kernel rig's kernel), so
# they run beside the build, one after the other (both may install host packages with apt).
# Each takes its cache's lock, and its stage prepares again (idempotent, with its messages), so a
# failure here shows there. The tests start only once they are done: the tests' timing checks
# want the machine to themselves.
mkdir -p .build
(
    if [ "${UNWIND_SKIP_ARM64:-0}" != 1 ]; then
        deploy/arm64/toolchain.sh prepare
    fi
    if [ "${UNWIND_SKIP_RIG:-0}" != 1 ]; then
        Tests/KernelRig/prepare.sh
    fi
    # The image's base root (mmdebstrap under qemu-user, 6-20 minutes cold) and the rig's modules.
    if [ "${UNWIND_SKIP_IMAGE:-0}" != 1 ]; then
        base=$(deploy/image/build-image.sh --base-only) &&
            Tests/Image/rig-modules.sh "$base" "${UNWIND_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-image}/rig-modules"
    fi
) >.build/preparations.log 2>&1 &
preparations=$!

failed=()
stage() {
    local name=$1
    shift
    local start=$SECONDS
    echo "=== $name"
    if "$@"; then
        echo "=== $name: passed ($((SECONDS - start)) s)"
    else
        echo "=== $name: FAILED ($((SECONDS - start)) s)"
        failed+=("$name")
    fi
}

# Warnings in the project's own code (Sources/, Tests/) fail the build. SwiftPM compiles the
# dependencies with -suppress-warnings and without this flag (it only reaches their link lines,
# where it does nothing), so a dependency's warning never fails it. The flag is part of the build
# description: a plain `swift build` after this one rebuilds the project's own modules once.
# `swift test --skip-build` below runs what this stage built.
stage "build" swift build --build-tests -Xswiftc -warnings-as-errors
stage "module graph (README = Package.swift)" Tests/module-graph.sh
start=$SECONDS
wait "$preparations" || echo "run-all: a preparation failed (.build/preparations.log); its stage says why"
echo "=== waited $((SECONDS - start)) s for the toolchain and the kernel rig to be prepared"
stage "swift test" swift test --skip-build
if [ "${UNWIND_SKIP_RIG:-0}" != 1 ]; then
    stage "kernel rig" Tests/KernelRig/hardware-tests.sh --scratch-path .build
fi
if [ "${UNWIND_SKIP_ARM64:-0}" != 1 ]; then
    stage "arm64 (cross-compiled, tests under qemu-user, package)" Tests/Arm64/arm64-tests.sh
fi
if [ "${UNWIND_SKIP_IMAGE:-0}" != 1 ]; then
    # The package the arm64 stage built; without that stage, the image stage builds one.
    image_deb=()
    for d in .build/arm64-package/unwind_*_arm64.deb; do [ -f "$d" ] && image_deb=(--deb "$d"); done
    stage "SD-card image (booted in qemu-system-aarch64, power cuts)" Tests/Image/boot-test.sh "${image_deb[@]}"
fi
if [ "${UNWIND_SKIP_DEPLOY:-0}" != 1 ]; then
    stage "deployment" env UNWIND_BINARY="$PWD/.build/debug/unwind" deploy/test.sh
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "run-all: failed: ${failed[*]}"
    exit 1
fi
echo "run-all: every stage passed"
