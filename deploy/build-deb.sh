#!/usr/bin/env bash
# build-deb.sh -- builds the Debian package unwind_<version>_<arch>.deb from a release (the
# executable "unwind", Swift standard library linked in statically and the shipped texts
# compiled in, as build-release.sh makes it) and the files in deploy/. Run it on a machine of
# the devices' architecture (a Raspberry Pi 4 or 5 for arm64); deploy/README.md has the steps.
# The package's architecture is the executable's (its ELF header), never assumed.
#
#   deploy/build-deb.sh                          # build-release.sh first, then the package
#   deploy/build-deb.sh --from deploy/dist/unwind-<version>-aarch64    # package that release
#
# The version is the first entry of deploy/debian/changelog (add one for every release);
# the dependencies on the runtime libraries are computed by dpkg-shlibdeps from the executable.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
deb=$here/debian
# log, die
# shellcheck source-path=SCRIPTDIR source=lib/toolkit.sh
. "$here/lib/toolkit.sh"

usage() {
    cat <<'USAGE'
Usage: build-deb.sh [--from DIR] [--out DIR] [--version V] [--arch ARCH] [--compress xz|gzip]
                    [--maintainer "Name <address>"] [--swift-runtime DIR]

  --from DIR           the release to package: DIR/unwind
                       (default: build one with build-release.sh first)
  --out DIR            where the .deb goes (default deploy/dist); prints its path at the end
  --version V          the package version (default: the first entry of deploy/debian/changelog;
                       another version gets a changelog entry of its own)
  --arch ARCH          the Debian architecture (default: the executable's ELF machine, arm64 for
                       aarch64; a contradicting value is refused; a stand-in that is not ELF
                       gets the build machine's, dpkg --print-architecture)
  --compress xz|gzip   the archive's compression (default xz: smallest to copy to a fleet)
  --maintainer M       the Maintainer field (default: the changelog's)
  --swift-runtime DIR  tests only: accept an executable that links the Swift runtime from DIR
                       dynamically (a debug build); such a package is not for devices
USAGE
}

from=
out=$here/dist
version=
arch=
compress=xz
maintainer=
swift_runtime=

while [ $# -gt 0 ]; do
    case "$1" in
        --from) from=${2:?--from needs a directory}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --version) version=${2:?--version needs a version}; shift 2 ;;
        --arch) arch=${2:?--arch needs an architecture}; shift 2 ;;
        --compress) compress=${2:?--compress needs xz or gzip}; shift 2 ;;
        --maintainer) maintainer=${2:?--maintainer needs a value}; shift 2 ;;
        --swift-runtime) swift_runtime=${2:?--swift-runtime needs a directory}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) die --status 2 "unknown option $1 (see --help)" ;;
    esac
done
case "$compress" in xz | gzip) ;; *) die "--compress takes xz or gzip" ;; esac
for t in dpkg-deb gzip objdump; do command -v "$t" >/dev/null || die "$t is missing (apt-get install dpkg-dev binutils)"; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "$from" ]; then
    "$here/build-release.sh" --out "$work/release"
    from=$work/release
fi
if [ ! -f "$from/unwind" ] || [ ! -x "$from/unwind" ]; then die "--from $from: no executable $from/unwind"; fi

# ---------------------------------------------------------------------------- version, arch

changelog_version=$(sed -n '1s/^unwind (\([^)]*\)).*/\1/p' "$deb/changelog")
[ -n "$changelog_version" ] || die "deploy/debian/changelog: no version in its first line"
version=${version:-$changelog_version}
case "$version" in [0-9]*) ;; *) die "version $version: a Debian version starts with a digit" ;; esac
case "$version" in *[!0-9A-Za-z.+~]*) die "version $version: only digits, letters, . + ~ (a native package)" ;; esac
# The daemon reports the changelog's version (UnwindVersion.current); the fleet's health check
# accepts a package version that is it, or starts with it and + or ~.
case "$version" in
    "$changelog_version" | "$changelog_version"[+~]*) ;;
    *) log "note: version $version does not start with the changelog's $changelog_version, which the daemon reports; the fleet's health check will fail it (deploy/README.md)" ;;
esac
maintainer=${maintainer:-$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$deb/changelog" | head -n 1)}
# Every file's time: the changelog's date, so that the same inputs give the same package.
epoch=$(date -d "$(sed -n 's/^ -- .*>  //p' "$deb/changelog" | head -n 1)" +%s)

# The architecture is the executable's: its ELF header's class (byte 4: 1 is 32-bit, 2 is 64-bit)
# and machine (e_machine at byte 18, little-endian as every target here). Built on a Raspberry
# Pi OS arm64 board, or with an aarch64 Swift SDK anywhere, that is arm64; on this x86_64
# development machine amd64 (a package for tests). A package whose Architecture is not its
# executable's would install on boards that cannot run it, so a contradicting --arch is refused.
# Only a stand-in that is not ELF (the fleet tests' shell script) takes the build machine's
# (dpkg --print-architecture).
is_elf=0
if [ "$(head -c 4 "$from/unwind" | od -An -c | tr -d ' ')" = "177ELF" ]; then is_elf=1; fi
if [ "$is_elf" = 1 ]; then
    elf_class=$(od -An -tu1 -j4 -N1 "$from/unwind" | tr -d ' ')
    elf_data=$(od -An -tu1 -j5 -N1 "$from/unwind" | tr -d ' ')
    [ "$elf_data" = 1 ] || die "$from/unwind: a big-endian executable; no Debian architecture of the devices is"
    elf_machine=$(od -An -tu1 -j18 -N2 "$from/unwind" | awk '{ print $1 + 256 * $2 }')
    case "$elf_class/$elf_machine" in
        2/183) elf_arch=arm64 ;;
        1/40) elf_arch=armhf ;;
        2/62) elf_arch=amd64 ;;
        1/3) elf_arch=i386 ;;
        2/243) elf_arch=riscv64 ;;
        *) die "$from/unwind: ELF class $elf_class, machine $elf_machine: no Debian architecture known to this script" ;;
    esac
    if [ -n "$arch" ] && [ "$arch" != "$elf_arch" ]; then
        die "--arch $arch, but $from/unwind is an $elf_arch executable (ELF machine $elf_machine): build it for $arch (deploy/README.md, \"Building the package\")"
    fi
    arch=$elf_arch
elif [ -z "$arch" ]; then
    arch=$(dpkg --print-architecture)
fi

# A foreign executable (cross-compiled) is stripped and read by its own architecture's binutils
# (binutils-aarch64-linux-gnu for arm64): the build machine's strip does not know its format.
strip_tool='strip'
objdump_tool='objdump'
if [ "$is_elf" = 1 ] && [ "$arch" != "$(dpkg --print-architecture)" ]; then
    case "$arch" in
        arm64) prefix=aarch64-linux-gnu- ;;
        armhf) prefix=arm-linux-gnueabihf- ;;
        amd64) prefix=x86_64-linux-gnu- ;;
        i386) prefix=i686-linux-gnu- ;;
        riscv64) prefix=riscv64-linux-gnu- ;;
    esac
    command -v "${prefix}strip" >/dev/null ||
        die "$from/unwind is an $arch executable: ${prefix}strip is missing (apt-get install binutils-${prefix%-})"
    strip_tool=${prefix}strip
    objdump_tool=${prefix}objdump
fi

if [ "$is_elf" = 1 ]; then
    needed=$("$objdump_tool" -p "$from/unwind" | awk '$1 == "NEEDED" { print $2 }')
    swift_libs=$(echo "$needed" | grep -E '^lib(swift|Foundation|dispatch|BlocksRuntime|_FoundationICU)' || true)
    if [ -n "$swift_libs" ] && [ -z "$swift_runtime" ]; then
        die "$from/unwind links the Swift runtime dynamically ($(echo "$swift_libs" | head -n 1) ...): build it with --static-swift-stdlib (build-release.sh does)"
    fi
fi

# ---------------------------------------------------------------------------- the tree

pkg=$work/debian/unwind
install -d -m 0755 "$pkg/DEBIAN" "$pkg/usr/lib/unwind" "$pkg/usr/bin" "$pkg/usr/sbin" \
    "$pkg/usr/lib/systemd/system" "$pkg/usr/lib/udev/rules.d" "$pkg/usr/lib/modules-load.d" \
    "$pkg/usr/share/unwind/udev" "$pkg/etc/unwind" "$pkg/usr/share/doc/unwind/examples" \
    "$pkg/usr/share/man/man1" "$pkg/usr/share/man/man8" "$pkg/usr/share/lintian/overrides"

install -m 0755 "$from/unwind" "$pkg/usr/lib/unwind/unwind"
if [ "$is_elf" = 1 ] && command -v "$strip_tool" >/dev/null; then
    # As dh_strip does: no symbols beyond what linking needs, no .comment and .note sections.
    "$strip_tool" --remove-section=.comment --remove-section=.note --strip-unneeded "$pkg/usr/lib/unwind/unwind"
fi
install -m 0755 "$here/unwind-motor-off" "$pkg/usr/lib/unwind/unwind-motor-off"
# The maintainer's commands on PATH.
ln -s ../lib/unwind/unwind "$pkg/usr/bin/unwind"
install -m 0755 "$here/unwind-setup" "$pkg/usr/sbin/unwind-setup"
install -m 0644 "$here/unwind.service" "$pkg/usr/lib/systemd/system/unwind.service"
install -m 0644 "$here/udev/99-unwind.rules" "$pkg/usr/lib/udev/rules.d/99-unwind.rules"
install -m 0644 "$here/udev/99-unwind-modem-uart.rules" "$pkg/usr/share/unwind/udev/99-unwind-modem-uart.rules"
install -m 0644 "$deb/modules-load.conf" "$pkg/usr/lib/modules-load.d/unwind.conf"
# A conffile (DEBIAN/conffiles); owner root:unwind and mode 0640 come from the postinst's
# dpkg-statoverride, since the group does not exist before.
install -m 0644 "$here/unwind.conf" "$pkg/etc/unwind/unwind.conf"

doc=$pkg/usr/share/doc/unwind
install -m 0644 "$deb/copyright" "$doc/copyright"
install -m 0644 "$here/unwind.conf" "$doc/examples/unwind.conf"
install -m 0644 "$here/image/boot/unwind-setup.txt" "$doc/examples/unwind-setup.txt"
cp "$here/README.md" "$doc/README.md"
[ -f "$repo/hardware/README.md" ] && cp "$repo/hardware/README.md" "$doc/hardware.md"
[ -f "$from/BUILD-INFO" ] && cp "$from/BUILD-INFO" "$doc/BUILD-INFO"
if [ "$version" = "$changelog_version" ]; then
    cp "$deb/changelog" "$doc/changelog"
else
    {
        printf 'unwind (%s) bookworm; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n\n' \
            "$version" "$(git -C "$repo" describe --always --dirty 2>/dev/null || echo 'this checkout')" \
            "$maintainer" "$(date -u -R -d "@$epoch")"
        cat "$deb/changelog"
    } >"$doc/changelog"
fi
install -m 0644 "$deb/unwind.1" "$pkg/usr/share/man/man1/unwind.1"
install -m 0644 "$deb/unwind-setup.8" "$pkg/usr/share/man/man8/unwind-setup.8"
# gzip -n: no name or time in the header, as dh_compress.
gzip -9n "$doc/changelog" "$doc/README.md" "$pkg/usr/share/man/man1/unwind.1" "$pkg/usr/share/man/man8/unwind-setup.8"
[ -f "$doc/hardware.md" ] && gzip -9n "$doc/hardware.md"
chmod 0644 "$doc"/*.gz "$pkg"/usr/share/man/man*/*.gz
[ -f "$doc/BUILD-INFO" ] && chmod 0644 "$doc/BUILD-INFO"
install -m 0644 "$deb/lintian-overrides" "$pkg/usr/share/lintian/overrides/unwind"

install -m 0755 "$deb/postinst" "$deb/prerm" "$deb/postrm" "$pkg/DEBIAN/"
install -m 0644 "$deb/conffiles" "$pkg/DEBIAN/conffiles"

# ---------------------------------------------------------------------------- control

shlibs=
if [ "$is_elf" = 1 ]; then
    command -v dpkg-shlibdeps >/dev/null || die "dpkg-shlibdeps is missing (apt-get install dpkg-dev)"
    mkdir -p "$work/debian"
    printf 'Source: unwind\n\nPackage: unwind\nArchitecture: any\n' >"$work/debian/control"
    opts=()
    if [ -n "$swift_runtime" ]; then opts=(-l"$swift_runtime" --ignore-missing-info); fi
    # DEB_HOST_ARCH: a cross-compiled executable's libraries are the ones of its architecture
    # (multiarch, e.g. libgpiod3:arm64), found in /usr/lib/<its triplet>.
    shlibs=$(cd "$work" && DEB_HOST_ARCH=$arch dpkg-shlibdeps -O "${opts[@]}" -e"debian/unwind/usr/lib/unwind/unwind" 2>"$work/shlibdeps.err") ||
        { cat "$work/shlibdeps.err" >&2; die "dpkg-shlibdeps failed"; }
    shlibs=$(echo "$shlibs" | sed -n 's/^shlibs:Depends=//p')
    [ -n "$shlibs" ] || die "dpkg-shlibdeps found no dependencies"
else
    log "$from/unwind is not an ELF executable (a stand-in?): no library dependencies"
fi
depends_libs=${shlibs:-libc6}

installed_kb=$(du -k -s --apparent-size --exclude=DEBIAN "$pkg" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@INSTALLED_SIZE@|$installed_kb|" -e "s|@SHLIBS_DEPENDS@|$depends_libs|" \
    "$deb/control.in" >"$pkg/DEBIAN/control"
(cd "$pkg" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"
chmod 0644 "$pkg/DEBIAN/md5sums" "$pkg/DEBIAN/control"

find "$pkg" -exec touch -h -d "@$epoch" {} +
mkdir -p "$out"
file=$out/unwind_${version}_${arch}.deb
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Z"$compress" --build "$pkg" "$file" >/dev/null
log "$file ($(du -h "$file" | cut -f1); Depends: $(sed -n 's/^Depends: //p' "$pkg/DEBIAN/control"))"
echo "$file"
