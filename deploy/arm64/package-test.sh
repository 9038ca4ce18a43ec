#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2012,SC2015,SC2317 # checks are eval'd later (meta among them); ls of one known file; pass || fail
# package-test.sh (arm64) -- the arm64 package as a device gets it:
#   1. deploy/arm64/build-deb.sh: unwind_<V>_arm64.deb, and the same release as V+test2;
#   2. lintian --pedantic on it (the overrides are deploy/debian/lintian-overrides, as on amd64);
#   3. in an arm64 Debian 13 (trixie) chroot, every program in it aarch64 under qemu-user:
#      apt-get install ./unwind_<V>_arm64.deb (its Depends resolved from the mirror, the
#      postinst's adduser and statoverrides run), the installed unwind runs (sim --headless,
#      config check as the service user), upgrade to V+test2, remove, purge;
#   4. the figures: package and executable size, start-up instructions (exec to first frame and
#      to PANIC-ready, counted by qemu's instruction plugin where present), memory.
# The chroot is a fresh copy of the SD-card image's base root (deploy/image/build-image.sh
# --base-only: one trixie arm64 root, made once and cached, for both), with the libraries the
# package depends on removed first, so that apt-get must resolve them from the mirror.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
toolchain=$here/toolchain.sh
work=$(mktemp -d)
trap 'umount -R "$work/c/proc" 2>/dev/null; umount -R "$work/c/dev" 2>/dev/null; rm -rf --one-file-system "$work"' EXIT

# pass, fail, check_all, finish, arm64_cpu
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$here/../lib/toolkit.sh"
# The chroot's programs run as the board's CPU (also those started without in_c).
export QEMU_CPU=$arm64_cpu

"$toolchain" prepare || exit 1
root=$("$toolchain" path)

# 1. The package, twice.
t0=$SECONDS
if "$here/build-deb.sh" --out "$work/debs" >"$work/build1.out" 2>&1; then
    v1=$(ls "$work"/debs/unwind_*_arm64.deb)
    version=$(dpkg-deb -f "$v1" Version)
    # Kept for the image's boot test (Tests/Image, the next stage), so it is built once a run.
    # Whole or not at all: the image's stage starts as soon as it is there (Tests/run-all.sh).
    mkdir -p "$repo/.build/arm64-package"
    rm -f "$repo"/.build/arm64-package/unwind_*_arm64.deb
    cp "$v1" "$repo/.build/arm64-package/copying.tmp"
    mv "$repo/.build/arm64-package/copying.tmp" "$repo/.build/arm64-package/$(basename "$v1")"
    pass "deploy/arm64/build-deb.sh: $(basename "$v1") ($(du -h "$v1" | cut -f1), $((SECONDS - t0)) s)"
else
    fail "deploy/arm64/build-deb.sh" "$work/build1.out"
    finish
fi
mkdir -p "$work/debs2"
# The same sources a second time: the release just built is packaged again, not rebuilt.
UNWIND_ARM64_INCREMENTAL=1 "$here/build-deb.sh" --out "$work/debs2" --version "$version+test2" --compress gzip >"$work/build2.out" 2>&1 ||
    fail "build-deb.sh --version $version+test2" "$work/build2.out"
v2=$(ls "$work"/debs2/unwind_*_arm64.deb 2>/dev/null | head -n 1)

arch=$(dpkg-deb -f "$v1" Architecture)
deps=$(dpkg-deb -f "$v1" Depends)
mkdir -p "$work/x"
dpkg-deb -x "$v1" "$work/x"
machine=$(readelf -h "$work/x/usr/lib/unwind/unwind" 2>/dev/null | sed -n 's/^ *Machine: *//p')
if [ "$arch" = arm64 ] && [ "$machine" = AArch64 ]; then
    pass "Architecture: arm64, and the executable is AArch64 (readelf)"
else
    echo "Architecture: $arch, machine: $machine" >"$work/arch.out"
    fail "Architecture arm64 and an AArch64 executable" "$work/arch.out"
fi
names=" $(echo "$deps" | sed 's/ ([^)]*)//g; s/,//g') "
missing=
for p in adduser gpiod libgpiod3 libi2c0 libqrencode4 libc6 libstdc++6; do
    case "$names" in *" $p "*) ;; *) missing="$missing $p" ;; esac
done
if [ -z "$missing" ] && ! grep -qi swift <<<"$deps"; then
    pass "Depends: $deps"
else
    echo "Depends: $deps; missing:$missing" >"$work/deps.out"
    fail "Depends names trixie's libgpiod3, libi2c0, libqrencode4, libc6, libstdc++6 and no Swift runtime" "$work/deps.out"
fi
needed=$(readelf -d "$work/x/usr/lib/unwind/unwind" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
if grep -Eq 'libswift|libFoundation|libdispatch' <<<"$needed"; then
    echo "$needed" >"$work/needed.out"
    fail "the arm64 executable links no Swift runtime" "$work/needed.out"
else
    pass "the arm64 executable links no Swift runtime (NEEDED: $needed)"
fi

# 2. lintian, in the toolchain (sid's lintian reads any architecture's package).
cp "$v1" "$root/build/lintian-test.deb"
# alien-tag: deploy/debian/lintian-overrides holds an override that bookworm's lintian (the
# amd64 package test's) needs and sid's does not know (package-supports-alternative-init-but-
# no-init.d-script); every tag sid's lintian knows is checked.
"$toolchain" run "$repo" -- bash -c 'lintian --pedantic -I -E --suppress-tags alien-tag /build/lintian-test.deb; rm -f /build/lintian-test.deb' >"$work/lintian.out" 2>&1
if grep -Eq '^[EWIPX]: ' "$work/lintian.out" || grep -q 'lintian: ' "$work/lintian.out"; then
    fail "lintian --pedantic -I -E $(basename "$v1")" "$work/lintian.out"
else
    pass "lintian --pedantic -I -E $(basename "$v1") (sid's lintian): clean"
fi

# 3. An arm64 trixie chroot: the image's base root.
c=$work/c
if ! tarball=$("$repo/deploy/image/build-image.sh" --base-only 2>"$work/base.out"); then
    fail "the arm64 trixie root (deploy/image/build-image.sh --base-only)" "$work/base.out"
    finish
fi
mkdir -p "$c"
tar -C "$c" -xf "$tarball"
cp /etc/resolv.conf "$c/etc/resolv.conf" 2>/dev/null || true
echo 'Acquire::Check-Valid-Until "false";' >"$c/etc/apt/apt.conf.d/99unwind-snapshot"
mount -t proc proc "$c/proc"
mount --rbind /dev "$c/dev"
mkdir -p "$c/root/debs"
cp "$v1" "$c/root/debs/"
[ -n "$v2" ] && cp "$v2" "$c/root/debs/"
d1=/root/debs/$(basename "$v1")
d2=/root/debs/$(basename "${v2:-none}")
in_c() { chroot "$c" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 QEMU_CPU="$arm64_cpu" "$@"; }
apt_in() {
    in_c env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" </dev/null
}
meta() { in_c stat -c '%a %U:%G' "$1"; }
[ "$(in_c uname -m)" = aarch64 ] && [ "$(in_c dpkg --print-architecture)" = arm64 ] ||
    fail "the chroot is arm64 (uname -m under qemu-user: $(in_c uname -m))"

t0=$SECONDS
apt_in update >"$work/update.out" 2>&1 || true
# The image's root already holds the package's libraries; without them, the install shows that
# the package's Depends bring everything it needs.
apt_in purge libgpiod3 libi2c0 libqrencode4 >"$work/purge-libs.out" 2>&1 ||
    fail "removing libgpiod3, libi2c0 and libqrencode4 from the root before the install" "$work/purge-libs.out"
if apt_in install "$d1" >"$work/install.out" 2>&1 &&
    [ "$(in_c dpkg-query -W -f='${Status} ${Version}' unwind)" = "install ok installed $version" ]; then
    pass "apt-get install ./$(basename "$v1") in an arm64 trixie chroot ($((SECONDS - t0)) s, emulated): libgpiod3, libi2c0, libqrencode4 from the mirror"
else
    fail "apt-get install ./$(basename "$v1") in an arm64 trixie chroot" "$work/install.out"
fi
check_all "the installed package: user, groups, owners, modes, enabled unit, libgpiod3, libi2c0, libqrencode4, gpiod" <<'CHECKS'
[ "$(meta /usr/lib/unwind/unwind)" = "755 root:root" ]
[ "$(readlink "$c/usr/bin/unwind")" = ../lib/unwind/unwind ]
[ "$(meta /etc/unwind/unwind.conf)" = "640 root:unwind" ]
[ "$(meta /var/lib/unwind)" = "750 unwind:unwind" ]
in_c getent passwd unwind
[ "$(in_c id -nG unwind | tr " " "\n" | sort | tr "\n" " ")" = "dialout gpio i2c unwind " ]
[ -L "$c/etc/systemd/system/multi-user.target.wants/unwind.service" ]
in_c dpkg-query -W -f='${Status}' libgpiod3 | grep -q 'install ok installed'
in_c dpkg-query -W -f='${Status}' libi2c0 | grep -q 'install ok installed'
in_c dpkg-query -W -f='${Status}' libqrencode4 | grep -q 'install ok installed'
in_c dpkg-query -W -f='${Status}' gpiod | grep -q 'install ok installed'
CHECKS

printf '0 PAGE long\n1 PANIC\n3 end\n' >"$c/tmp/script"
if in_c unwind sim --headless /tmp/script --out /tmp/sim --no-frames >"$work/run.out" 2>&1 &&
    chroot --userspec=unwind:unwind "$c" /usr/bin/unwind config check --config /etc/unwind/unwind.conf >>"$work/run.out" 2>&1 &&
    in_c unwind --help >>"$work/run.out" 2>&1; then
    pass "the installed aarch64 unwind runs (sim --headless with a PANIC; config check as the service user)"
else
    fail "the installed aarch64 unwind runs" "$work/run.out"
fi

if [ -n "$v2" ]; then
    echo '# edited on the device' >>"$c/etc/unwind/unwind.conf"
    if apt_in install "$d2" >"$work/upgrade.out" 2>&1 &&
        [ "$(in_c dpkg-query -W -f='${Version}' unwind)" = "$version+test2" ] &&
        [ "$(tail -n 1 "$c/etc/unwind/unwind.conf")" = '# edited on the device' ]; then
        pass "upgrade to $version+test2: the edited configuration kept"
    else
        fail "upgrade to $version+test2" "$work/upgrade.out"
    fi
fi
if apt_in remove unwind >"$work/remove.out" 2>&1 &&
    [ "$(in_c dpkg-query -W -f='${Status}' unwind)" = "deinstall ok config-files" ] &&
    [ ! -e "$c/usr/lib/unwind" ] && [ -f "$c/etc/unwind/unwind.conf" ]; then
    pass "apt-get remove unwind: the program gone, the configuration kept"
else
    fail "apt-get remove unwind" "$work/remove.out"
fi
if apt_in purge unwind >"$work/purge.out" 2>&1 &&
    ! in_c dpkg-query -W -f='${Status}' unwind 2>/dev/null | grep -q . &&
    [ ! -e "$c/etc/unwind" ] && [ ! -e "$c/var/lib/unwind" ]; then
    pass "apt-get purge unwind: configuration and state gone"
else
    fail "apt-get purge unwind" "$work/purge.out"
fi

# 4. Figures.
bin=$work/x/usr/lib/unwind/unwind
echo "figures: package $(du -h "$v1" | cut -f1) ($(stat -c %s "$v1") bytes); executable $(du -h "$bin" | cut -f1) ($(stat -c %s "$bin") bytes, stripped); installed size $(dpkg-deb -f "$v1" Installed-Size) KiB"

finish
