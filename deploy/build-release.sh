#!/usr/bin/env bash
# build-release.sh -- builds the release that deploy/build-deb.sh packages: a directory
# with the executable "unwind" (Swift standard library and FoundationEssentials linked in
# statically, so the board needs no Swift runtime; the help texts and shipped mantras are
# compiled in), plus BUILD-INFO. Run it on the board itself (or on any machine of the board's
# architecture with Swift 6 installed); deploy/README.md has times and sizes.
#
#   deploy/build-release.sh                      # -> deploy/dist/unwind-<version>-<arch>/
#   deploy/build-release.sh --out DIR --tar      # and DIR.tar.gz, to copy to other devices
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# log, die
# shellcheck source-path=SCRIPTDIR source=lib/toolkit.sh
. "$here/lib/toolkit.sh"

out=
scratch=$repo/.build-release
jobs=
tar=0
strip_binary=1

usage() {
    cat <<'EOF'
Usage: build-release.sh [--out DIR] [--scratch-path DIR] [--jobs N] [--tar] [--no-strip]

  --out DIR           where the release goes (default deploy/dist/unwind-<version>-<arch>);
                      replaced if it exists
  --scratch-path DIR  SwiftPM's build directory (default .build-release in the checkout)
  --jobs N            parallel compile jobs (default: one per core; use 1 or 2 on a board
                      with 1 GB of memory or less)
  --tar               also write DIR.tar.gz
  --no-strip          keep the debug symbols (about 20 MB more)
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --scratch-path) scratch=${2:?--scratch-path needs a directory}; shift 2 ;;
        --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
        --tar) tar=1; shift ;;
        --no-strip) strip_binary=0; shift ;;
        -h | --help) usage; exit 0 ;;
        *) die --status 2 "unknown option $1 (see --help)" ;;
    esac
done

command -v swift >/dev/null || die "'swift' is not on PATH; install Swift 6 for $(uname -m) first (deploy/README.md)"
"$repo/deploy/dev-deps.sh"

arch=$(uname -m)
version=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
out=${out:-$here/dist/unwind-$version-$arch}

# -z now: every symbol bound at start, so the GOT can be read-only (full RELRO; lintian's
# hardening-no-bindnow).
args=(-c release --static-swift-stdlib --product unwind --scratch-path "$scratch" -Xlinker -z -Xlinker now)
[ -n "$jobs" ] && args+=(--jobs "$jobs")

log "swift build ${args[*]}"
start=$(date +%s)
(cd "$repo" && swift build "${args[@]}")
seconds=$(($(date +%s) - start))
bin=$(cd "$repo" && swift build "${args[@]}" --show-bin-path)

rm -rf "$out"
mkdir -p "$out"
cp "$bin/unwind" "$out/unwind"
if [ "$strip_binary" = 1 ] && command -v strip >/dev/null; then strip "$out/unwind"; fi
chmod 0755 "$out/unwind"

size=$(du -sh "$out" | cut -f1)
{
    echo "version=$version"
    echo "arch=$arch"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "swift=$(swift --version 2>/dev/null | head -n 1)"
    echo "build_seconds=$seconds"
    echo "size=$size"
    echo "needs=libgpiod2 libi2c0 libqrencode4 libstdc++6 tzdata unifont (Debian bookworm packages; no Swift runtime)"
} >"$out/BUILD-INFO"

# A quick check that the executable runs: two simulated seconds, help page open.
check=$(mktemp -d)
printf '0 PAGE long\n2 end\n' >"$check/script"
"$out/unwind" sim --headless "$check/script" --out "$check/out" --no-frames >/dev/null 2>&1 || {
    rm -rf "$check"
    die "$out/unwind does not run (unwind sim --headless failed)"
}
rm -rf "$check"

if [ "$tar" = 1 ]; then
    tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
    log "$out.tar.gz"
fi
log "$out ($size, built in ${seconds}s)"
