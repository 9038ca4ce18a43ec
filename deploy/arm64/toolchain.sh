#!/usr/bin/env bash
# toolchain.sh -- the arm64 (aarch64) cross toolchain, from Debian's archive alone, cached.
#
# A Raspberry Pi Zero 2 W (512 MB) cannot build Swift, and an emulated build takes the better
# part of an hour on two cores; so Unwind is cross-compiled at native speed and only its tests
# run under emulation. The pieces, in one amd64 Debian sid chroot:
#   - the compiler: sid's swiftlang for amd64 (the Swift that Debian ships; an assertions build,
#     so it also catches code that only newer Swift compilers accept);
#   - the target's Swift: sid's swiftlang for arm64, unpacked (dpkg -x) under /opt/arm64/root:
#     its lib/swift (arm64 modules, made by the same compiler version) and lib/swift_static;
#   - the target's C library and headers: a Debian 13 "trixie" arm64 sysroot, unpacked with
#     mmdebstrap --variant=extract (no emulation), so the binary needs no newer glibc than
#     trixie's 2.41 (sid's 2.42 headers would bind cfsetispeed@GLIBC_2.42) and links the
#     libgpiod 2 that trixie, Raspberry Pi OS trixie and later ship;
#   - arm64 runtime libraries (multiarch) and qemu-user through binfmt_misc, to run the tests.
# A Swift SDK bundle (swift-sdk.json + toolset.json) ties them together for `swift build
# --swift-sdk debian-aarch64`.
#
#   deploy/arm64/toolchain.sh prepare         # build or check the cache (idempotent, flock'ed)
#   deploy/arm64/toolchain.sh run SRC -- CMD  # run CMD in the chroot, SRC's files under /src
#   deploy/arm64/toolchain.sh path            # print the chroot's path
#   deploy/arm64/toolchain.sh lock-file       # print the lock a caller holds across several runs
#                                             # (then with UNWIND_ARM64_IN_USE set to the cache root)
#
#   UNWIND_ARM64_CACHE    cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/unwind-arm64)
#   UNWIND_DEBIAN_MIRROR  Debian mirror (default http://deb.debian.org/debian)
#
# Cold: about 2.5 GB in the cache, 1.1 GB downloaded (the two swiftlang packages), 2-3 minutes
# on a fast mirror. Warm: a check of the stamp. Needs root (chroot, mounts) and binfmt_misc.
# shellcheck disable=SC2016,SC2015 # the quoted scripts run in the chroot (or a new namespace), their expansions are theirs; A && B || die
set -euo pipefail

base=${UNWIND_ARM64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-arm64}
mirror=${UNWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$base/toolchain

# log, die
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolkit.sh"
me=arm64-toolchain

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts)"

host_packages=(debootstrap qemu-user-static binfmt-support)
# shellcheck source-path=SCRIPTDIR source=../lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"

# aarch64 executables run through qemu-user; with the F flag the interpreter is opened when it is
# registered, so it works inside the chroot too.
enable_binfmt() {
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
        die "cannot mount binfmt_misc (needed to run aarch64 programs)"
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || die "qemu-aarch64 is not registered with binfmt_misc"
    grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
        die "qemu-aarch64 is registered without the F flag: aarch64 programs will not run in a chroot"
}

# The chroot's apt: the archive is a snapshot whose Release may be past its Valid-Until.
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

build_cache() {
    local t0=$SECONDS
    rm -rf "$root.new"
    log "debootstrap sid (amd64) from $mirror"
    debootstrap --variant=minbase sid "$root.new" "$mirror" >"$base/debootstrap.log" 2>&1 ||
        { tail -n 20 "$base/debootstrap.log" >&2; die "debootstrap failed"; }
    local r=$root.new
    echo 'Acquire::Check-Valid-Until "false";' >"$r/etc/apt/apt.conf.d/99unwind-snapshot"
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    with_mounts "$r" bash -ec '
        export DEBIAN_FRONTEND=noninteractive
        dpkg --add-architecture arm64
        apt-get update -qq
        # The compiler (amd64), what SwiftPM and the tests call (Unifont: the fallback font for
        # replies, which the render and device suites read), the arm64 linker tools, and the
        # arm64 runtime libraries the tests load (multiarch).
        apt-get install -y -qq --no-install-recommends \
            swiftlang libc6-dev libstdc++-15-dev pkg-config git ca-certificates \
            libgpiod-dev gpiod libi2c-dev libqrencode-dev unifont zbar-tools strace procps file \
            binutils-aarch64-linux-gnu mmdebstrap arch-test dpkg-dev lintian fakeroot xz-utils \
            libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64 libgpiod3:arm64 libi2c0:arm64 \
            libqrencode4:arm64 >/dev/null
        mkdir -p /opt/arm64/debs && cd /opt/arm64/debs
        apt-get download swiftlang:arm64 libswiftlang:arm64 >/dev/null
        for d in *.deb; do dpkg -x "$d" /opt/arm64/root; done
        rm -f *.deb
        mmdebstrap --quiet --variant=extract --architectures=arm64 \
            --aptopt="Acquire::Check-Valid-Until \"false\"" \
            --include=libc6-dev,libgcc-14-dev,libstdc++-14-dev,libgpiod-dev,libi2c-dev,libqrencode-dev,linux-libc-dev \
            trixie /opt/arm64/trixie-sysroot "$1"
        apt-get clean
    ' _ "$mirror" 2>&1 | grep -v "unsandboxed as root\|ssdloc\|not mount point or bad option\|dmesg(1) may have" >&2 ||
        true
    [ -x "$r/usr/libexec/swift/bin/swift" ] && [ -d "$r/opt/arm64/trixie-sysroot/usr/include" ] || die "installing the toolchain failed"
    local s=$r/opt/arm64/trixie-sysroot
    # The driver looks for the Swift runtime under <sysroot>/usr/lib/swift, libc.so names
    # /lib/ld-linux-aarch64.so.1 inside the sysroot.
    ln -sfn usr/lib "$s/lib"
    ln -sfn /opt/arm64/root/usr/libexec/swift/lib/swift "$s/usr/lib/swift"
    ln -sfn /opt/arm64/root/usr/libexec/swift/lib/swift_static "$s/usr/lib/swift_static"
    [ -e "$s/usr/lib/ld-linux-aarch64.so.1" ] || ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$s/usr/lib/ld-linux-aarch64.so.1"
    # The tests run with QEMU_LD_PREFIX at this sysroot (Tests/Arm64): qemu-user looks up every
    # absolute path there first, so nothing a test touches (/tmp, /dev) may exist in it.
    rm -rf "${s:?}/tmp" "${s:?}/dev"
    install_sdk "$r"
    # Through the mounts: the swift driver finds its libraries from /proc/self/exe.
    with_mounts "$r" swift sdk install /opt/arm64/debian-aarch64.artifactbundle >/dev/null
    {
        echo "recipe=$recipe"
        echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "mirror=$mirror"
        echo "swift=$(with_mounts "$r" swift --version 2>/dev/null | head -n 1)"
        echo "swiftlang=$(in_root_at "$r" dpkg-query -W -f='${Version}' swiftlang)"
        echo "sysroot=trixie arm64 (mmdebstrap --variant=extract)"
    } >"$r/opt/arm64/READY"
    rm -rf "$root"
    mv "$r" "$root"
    log "cache: made in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
}

in_root_at() { local r=$1; shift; chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

install_sdk() {
    local b=$1/opt/arm64/debian-aarch64.artifactbundle
    mkdir -p "$b/sdk"
    cat >"$b/info.json" <<'EOF'
{
  "schemaVersion": "1.0",
  "artifacts": {
    "debian-aarch64": {
      "type": "swiftSDK",
      "version": "1",
      "variants": [{ "path": "sdk", "supportedTriples": ["x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu"] }]
    }
  }
}
EOF
    cat >"$b/sdk/swift-sdk.json" <<'EOF'
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "/opt/arm64/trixie-sysroot",
      "swiftResourcesPath": "/opt/arm64/root/usr/libexec/swift/lib/swift",
      "swiftStaticResourcesPath": "/opt/arm64/root/usr/libexec/swift/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
EOF
    # -resource-dir: the arm64 modules, not the compiler's own amd64 ones. lld: links any target.
    # -fPIC: SwiftPM does not pass it to C targets when cross-compiling (malloc-interposer's
    # shared library needs it). -disable-cross-import-overlays: Debian ships the
    # _Testing_Foundation module but not its library, so a test importing Testing and
    # Foundation would not link.
    cat >"$b/sdk/toolset.json" <<'EOF'
{
  "schemaVersion": "1.0",
  "swiftCompiler": {
    "extraCLIOptions": ["-use-ld=lld", "-resource-dir", "/opt/arm64/root/usr/libexec/swift/lib/swift",
                        "-Xfrontend", "-disable-cross-import-overlays"]
  },
  "cCompiler": { "extraCLIOptions": ["-fPIC"] }
}
EOF
}

# Runs "$@" in chroot $1 in a mount namespace of its own: the mounts vanish with the command,
# whatever way it ends.
with_mounts() {
    local r=$1
    shift
    unshare --mount --propagation private bash -ec '
        r=$1; shift
        mount -t proc proc "$r/proc"
        mount --rbind /dev "$r/dev"
        mount --rbind /sys "$r/sys"
        mount -t tmpfs tmpfs "$r/tmp"
        exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
    ' _ "$r" "$@"
}

# The cache's key: the recipe's own text (build_cache and install_sdk, as bash prints them, without
# comments). A cache made by another recipe is made again.
recipe=$(declare -f build_cache install_sdk | sha256sum | cut -c1-12)

ready() {
    [ -f "$root/opt/arm64/READY" ] && grep -qx "recipe=$recipe" "$root/opt/arm64/READY" &&
        [ -x "$root/usr/libexec/swift/bin/swift" ] && [ -d "$root/opt/arm64/trixie-sysroot/usr/include" ] &&
        [ -f "$root/opt/arm64/root/usr/libexec/swift/lib/swift/linux/aarch64/swiftrt.o" ]
}

prepare() {
    mkdir -p "$base"
    install_missing "${host_packages[@]}" || die "could not install ${host_packages[*]}"
    enable_binfmt
    exec 9>"$base/.lock"
    flock 9
    if ready; then
        log "cache: hit, $root ($(sed -n 's/^swift=//p' "$root/opt/arm64/READY"))"
        return 0
    fi
    build_cache
}

# run SRC -- CMD...: CMD in the chroot with SRC's tracked and new files copied to /src (a copy,
# so nothing the chroot writes lands in the work tree), the build directory /build kept in the
# cache, and the host's local git mirrors (url.<dir>.insteadOf) mounted read-only where they are.
run_in() {
    local src=$1
    shift
    [ "${1:-}" = "--" ] && shift
    ready || die "no toolchain: run '$0 prepare' first"
    # /src and /build are the chroot's work space: one command at a time uses them. A caller that
    # runs several in a row (Tests/Arm64/arm64-tests.sh) holds this lock for all of them.
    if [ "${UNWIND_ARM64_IN_USE:-}" != "$base" ]; then
        exec 8>"$base/.in-use"
        flock 8
    fi
    rm -rf "$root/src"
    mkdir -p "$root/src" "$root/build"
    (cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r tar -cf - --no-recursion 2>/dev/null) |
        tar -C "$root/src" -xf -
    local mirrors=() dir
    while read -r key _; do
        dir=${key#url.}
        dir=${dir%.insteadof}
        case "$dir" in /*) [ -d "$dir" ] && mirrors+=("$dir") ;; esac
    done < <(git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null || true)
    rm -f "$root/etc/gitconfig"
    in_root git config --system --add safe.directory '*'
    for dir in "${mirrors[@]}"; do
        in_root git config --system "url.$dir.insteadOf" https://github.com/
    done
    unshare --mount --propagation private bash -ec '
        r=$1; shift
        n=$1; shift
        for ((i = 0; i < n; i++)); do
            mkdir -p "$r$1"
            mount --bind "$1" "$r$1"
            mount -o remount,ro,bind "$r$1"
            shift
        done
        mount -t proc proc "$r/proc"
        mount --rbind /dev "$r/dev"
        mount --rbind /sys "$r/sys"
        mount -t tmpfs tmpfs "$r/tmp"
        exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
            bash -c "cd /src && \"\$@\"" _ "$@"
    ' _ "$root" "${#mirrors[@]}" "${mirrors[@]}" "$@"
}

case "${1:-}" in
    prepare) prepare ;;
    run) shift; [ $# -ge 2 ] || die "usage: $0 run SRC -- CMD..."; enable_binfmt; run_in "$@" ;;
    path) echo "$root" ;;
    lock-file) mkdir -p "$base" && echo "$base/.in-use" ;;
    *) die --status 2 "usage: $0 prepare | run SRC -- CMD... | path | lock-file" ;;
esac
