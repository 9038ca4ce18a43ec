#!/usr/bin/env bash
# build-deb.sh (arm64) -- unwind_<version>_arm64.deb for a Raspberry Pi, made on any amd64 Debian
# machine: the release build cross-compiled with Debian's Swift (Swift runtime and Foundation
# linked in statically) against a Debian 13 "trixie" arm64 sysroot, then packaged by
# deploy/build-deb.sh inside the toolchain (its arm64 binutils strip the executable, and
# dpkg-shlibdeps reads the arm64 libraries' symbols for the Depends).
#
#   deploy/arm64/build-deb.sh                     # -> deploy/dist/unwind_<version>_arm64.deb
#   deploy/arm64/build-deb.sh --out DIR [build-deb.sh options: --version, --maintainer, --compress]
#
# The package installs on Debian 13 (trixie) and later, and Raspberry Pi OS based on them: the
# executable needs glibc 2.38 (the Swift runtime's newest symbol) and libgpiod 2 (libgpiod3).
# Cold: the toolchain (deploy/arm64/toolchain.sh, about 4 minutes) and a release build (6-8
# minutes on two cores); warm: seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$repo/deploy/dist
pass=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) pass+=("$1"); shift ;;
    esac
done

"$here/toolchain.sh" prepare
root=$("$here/toolchain.sh" path)
describe=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
start=$SECONDS
rm -rf "$root/build/deb-out"
# A release from an empty scratch directory but for the fetched dependencies: an incremental
# build after a change of a type's layout can link stale objects. UNWIND_ARM64_INCREMENTAL=1
# keeps them (quick local runs).
if [ "${UNWIND_ARM64_INCREMENTAL:-0}" != 1 ] && [ -d "$root/build/arm64-release" ]; then
    find "$root/build/arm64-release" -mindepth 1 -maxdepth 1 ! -name checkouts ! -name repositories -exec rm -rf {} +
fi
# shellcheck disable=SC2016 # the script runs in the chroot's bash, its expansions are its own
"$here/toolchain.sh" run "$repo" -- env DESCRIBE="$describe" PKG_CONFIG_SYSROOT_DIR=/opt/arm64/trixie-sysroot bash -ec '
    # -z now: full RELRO, as build-release.sh (lintian: hardening-no-bindnow).
    args=(-c release --static-swift-stdlib --product unwind --scratch-path /build/arm64-release
          --swift-sdk debian-aarch64 --pkg-config-path /opt/arm64/trixie-sysroot/usr/lib/aarch64-linux-gnu/pkgconfig
          -Xlinker -z -Xlinker now
          # The toolset names the shared runtime'\''s resource directory; a static build needs the
          # static one (its static-stdlib-args.lnk), and the last -resource-dir wins.
          -Xswiftc -resource-dir -Xswiftc /opt/arm64/root/usr/libexec/swift/lib/swift_static)
    t0=$SECONDS
    swift build "${args[@]}" 2>&1 | grep -v "^\[[0-9]*/[0-9]*\]" || true
    bin=$(swift build "${args[@]}" --show-bin-path)
    [ -x "$bin/unwind" ] || { echo "build-deb (arm64): the release build failed"; exit 1; }
    rel=/build/deb-out/unwind-$DESCRIBE-aarch64
    mkdir -p "$rel"
    cp "$bin/unwind" "$rel/unwind"
    {
        echo "version=$DESCRIBE"
        echo "arch=aarch64"
        echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "swift=$(swift --version 2>/dev/null | head -n 1) (Debian swiftlang $(dpkg-query -W -f="\${Version}" swiftlang)), cross-compiled"
        echo "sysroot=Debian 13 trixie arm64"
        echo "build_seconds=$((SECONDS - t0))"
        echo "needs=libc6 (>= 2.38) libgpiod3 libi2c0 libqrencode4 libstdc++6 tzdata unifont (Debian trixie packages; no Swift runtime)"
    } >"$rel/BUILD-INFO"
    deploy/build-deb.sh --from "$rel" --out /build/deb-out "$@"
' _ "${pass[@]}"
mkdir -p "$out"
for f in "$root"/build/deb-out/*.deb; do
    cp "$f" "$out/"
    echo "build-deb (arm64): $out/$(basename "$f") ($(du -h "$f" | cut -f1), $((SECONDS - start)) s)"
done
