#!/usr/bin/env bash
# Prepares the kernel rig (see README.md beside this file): a Debian bookworm kernel, the modules
# the guest needs, an out-of-tree gpio-sim.ko and a busybox initramfs, in a cache directory outside
# the repository, keyed by kernel version. Installs the host packages it needs if they are missing.
#
# Idempotent: with a complete cache it only verifies it (checksums, host tools) and touches neither
# apt nor the network.
#
# Environment:
#   UNWIND_RIG_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/unwind-kernel-rig);
#                      the kernel's files go to $UNWIND_RIG_CACHE/$KVER
#   UNWIND_RIG_KVER    kernel ABI to use, e.g. 6.1.0-56-amd64 (default: the one bookworm's
#                      linux-image-amd64 depends on, i.e. the newest 6.1 kernel in the archive)
#   UNWIND_RIG_KEEP_DEBS=1  keep the downloaded .debs in the cache (about 210 MB)
set -euo pipefail
# log, die
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/toolkit.sh"

base=${UNWIND_RIG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-kernel-rig}

# Needed to run the rig (run.sh builds a small cpio per run; selftest.sh uses gpiod and i2c-tools).
run_packages=(qemu-system-x86 cpio gzip gpiod i2c-tools)
# Needed only to build the cache.
build_packages=(busybox-static kmod xz-utils build-essential)

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
fi

# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/apt.sh"

apt_updated=0
apt_update_once() {
    if [ "$apt_updated" -eq 0 ]; then
        log "apt-get update"
        "${as_root[@]}" flock /run/lock/unwind-apt.lock apt-get update -qq
        apt_updated=1
    fi
}

install_packages() {
    install_missing "$@" || die "could not install the packages the rig needs"
}

# The kernel ABI that bookworm's linux-image-amd64 meta package currently points at.
archive_kver() {
    apt-cache depends --important linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | sort -V | tail -n 1
}

candidate_version() { # package -> candidate version, empty if unknown
    apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '^(none)$' || true
}

# The cache's key: the kernel (its directory) and this script's own text without its comments, so a
# cache made by another recipe is made again.
recipe=$(grep -v '^[[:space:]]*#' "${BASH_SOURCE[0]}" | sha256sum | cut -c1-12)

cache_ready() { # dir -> 0 if complete, intact and made by this recipe
    [ -f "$1/READY" ] && (cd "$1" && sha256sum --quiet --strict -c SHA256SUMS >/dev/null 2>&1) &&
        grep -qx "recipe=$recipe" "$1/info"
}

# --- which kernel -------------------------------------------------------------------------------
kver=${UNWIND_RIG_KVER:-}
if [ -z "$kver" ]; then
    kver=$(archive_kver)
    if [ -z "$kver" ]; then
        apt_update_once
        kver=$(archive_kver)
    fi
    [ -n "$kver" ] || die "cannot tell the kernel version: apt knows no linux-image-amd64 (is this Debian bookworm?)"
fi
dir=$base/$kver

mkdir -p "$base"
exec 9>"$base/.lock"
flock 9 # one prepare at a time per cache

if cache_ready "$dir"; then
    install_packages "${run_packages[@]}"
    printf '%s\n' "$kver" >"$base/current"
    log "cache: hit, $dir ($(sed -n 's/^image=//p' "$dir/info"))"
    exit 0
fi

# --- build the cache ----------------------------------------------------------------------------
started=$(date +%s)
if [ -z "${UNWIND_RIG_KVER:-}" ]; then
    # About to download: look at a fresh package list, which may name a newer kernel.
    apt_update_once
    kver=$(archive_kver)
    [ -n "$kver" ] || die "apt knows no linux-image-amd64"
    dir=$base/$kver
    if cache_ready "$dir"; then
        install_packages "${run_packages[@]}"
        printf '%s\n' "$kver" >"$base/current"
        log "cache: hit, $dir"
        exit 0
    fi
fi
log "building the rig for kernel $kver in $dir"

install_packages "${run_packages[@]}" "${build_packages[@]}"

image_pkg=linux-image-$kver
image_ver=$(candidate_version "$image_pkg")
[ -n "$image_ver" ] || die "apt has no $image_pkg"

rm -f "$dir/READY"
mkdir -p "$dir/debs"
work=$dir/.work
rm -rf "$work" "$dir/modules"
mkdir -p "$work" "$dir/modules"
trap 'rm -rf "$work"' EXIT

# --- download -----------------------------------------------------------------------------------
download() { # package version -> path of the .deb in $dir/debs
    local pkg=$1 ver=$2 deb
    deb=$(find "$dir/debs" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
    if [ -n "$deb" ] && [[ $deb == *"_${ver//:/%3a}_"* ]] && dpkg-deb --info "$deb" >/dev/null 2>&1; then
        printf '%s\n' "$deb"
        return
    fi
    rm -f "$dir/debs/${pkg}"_*.deb
    local sandbox=()
    [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
    log "downloading $pkg $ver"
    (cd "$dir/debs" && apt-get download -qq "${sandbox[@]}" "$pkg=$ver" >&2)
    deb=$(find "$dir/debs" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
    [ -n "$deb" ] || die "apt-get download $pkg=$ver produced no .deb"
    printf '%s\n' "$deb"
}
image_deb=$(download "$image_pkg" "$image_ver")

# --- kernel and modules -------------------------------------------------------------------------
log "extracting $(basename "$image_deb")"
dpkg-deb -x "$image_deb" "$work/image"
cp "$work/image/boot/vmlinuz-$kver" "$dir/vmlinuz"
config=$work/image/boot/config-$kver
moddir=$work/image/lib/modules/$kver
if [ ! -f "$config" ] || [ ! -d "$moddir" ]; then
    die "$image_deb holds no config or modules for $kver"
fi

declare -A modpath=() builtin=() seen=()
while IFS= read -r -d '' f; do
    n=$(basename "$f"); n=${n%%.ko*}; n=${n//-/_}
    modpath[$n]=$f
done < <(find "$moddir" -name '*.ko' -print0 -o -name '*.ko.xz' -print0 -o -name '*.ko.zst' -print0 -o -name '*.ko.gz' -print0)
while IFS= read -r f; do
    n=$(basename "$f"); n=${n%%.ko*}; n=${n//-/_}
    builtin[$n]=1
done <"$moddir/modules.builtin"

order=()
resolve() { # module name -> appends it and its dependencies, dependencies first, to order
    local m=${1//-/_} deps d
    [ -n "${seen[$m]:-}" ] && return 0
    seen[$m]=1
    [ -n "${builtin[$m]:-}" ] && return 0
    [ -n "${modpath[$m]:-}" ] || die "module $m is neither built into $kver nor shipped with it"
    deps=$(modinfo -F depends "${modpath[$m]}")
    local -a list=()
    IFS=, read -ra list <<<"$deps"
    for d in "${list[@]}"; do
        [ -n "$d" ] && resolve "$d"
    done
    order+=("$m")
}

# virtio transport and the 9p root; configfs for gpio-sim; i2c-dev and the SMBus stub;
# virtio-rng so getrandom() does not wait for entropy.
for m in virtio_pci virtio_ring 9pnet 9pnet_virtio 9p configfs i2c_dev i2c_smbus i2c_stub virtio_rng; do
    resolve "$m"
done

# --- gpio-sim -----------------------------------------------------------------------------------
if [ -n "${modpath[gpio_sim]:-}" ]; then
    log "gpio-sim ships with $kver"
    gpio_sim_origin="shipped with $image_pkg"
    resolve gpio_sim
else
    # Debian's 6.1 does not build gpio-sim: build it from Debian's own source of the same kernel.
    install_packages "linux-headers-$kver"
    series=$(printf '%s\n' "$kver" | grep -Eo '^[0-9]+\.[0-9]+')
    source_pkg=linux-source-$series
    source_ver=$image_ver
    if ! apt-cache show "$source_pkg=$source_ver" >/dev/null 2>&1; then
        source_ver=$(candidate_version "$source_pkg")
        [ -n "$source_ver" ] || die "apt has no $source_pkg"
        log "warning: no $source_pkg $image_ver; using $source_ver for gpio-sim's source"
    fi
    source_deb=$(download "$source_pkg" "$source_ver")
    log "building gpio-sim out of tree from $(basename "$source_deb")"
    src=$work/gpio-sim
    mkdir -p "$src"
    dpkg-deb --fsys-tarfile "$source_deb" |
        tar -xOf - --wildcards "./usr/src/linux-source-$series.tar.*" |
        xz -dc |
        tar -xf - -C "$src" --strip-components=3 \
            "linux-source-$series/drivers/gpio/gpio-sim.c" \
            "linux-source-$series/drivers/gpio/gpiolib.h" \
            "linux-source-$series/kernel/irq/irq_sim.c"
    for f in gpio-sim.c gpiolib.h irq_sim.c; do
        [ -f "$src/$f" ] || die "$(basename "$source_deb") has no $f"
    done
    mv "$src/gpio-sim.c" "$src/gpio-sim-main.c"
    objs=gpio-sim-main.o
    if grep -q '^CONFIG_IRQ_SIM=y' "$config"; then
        rm "$src/irq_sim.c"
    else
        # irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
        sed -i 's/handle_simple_irq(irq_to_desc(\([a-z_]*\)))/generic_handle_irq(\1)/' "$src/irq_sim.c"
        ! grep -q 'irq_to_desc' "$src/irq_sim.c" || die "irq_sim.c: could not replace irq_to_desc()"
        objs="$objs irq_sim.o"
    fi
    printf 'obj-m += gpio-sim.o\ngpio-sim-y := %s\n' "$objs" >"$src/Makefile"
    make -s -C "/usr/src/linux-headers-$kver" M="$src" modules >"$work/gpio-sim-build.log" 2>&1 || {
        cat "$work/gpio-sim-build.log" >&2
        die "building gpio-sim failed"
    }
    vermagic=$(modinfo -F vermagic "$src/gpio-sim.ko")
    [[ $vermagic == "$kver "* ]] || die "gpio-sim.ko has vermagic '$vermagic', not $kver"
    strip --strip-debug "$src/gpio-sim.ko"
    modpath[gpio_sim]=$src/gpio-sim.ko
    gpio_sim_origin="built from $source_pkg $source_ver"
    resolve gpio_sim
fi

for m in "${order[@]}"; do
    f=${modpath[$m]}
    case $f in
    *.ko.xz) xz -dc "$f" >"$dir/modules/$m.ko" ;;
    *.ko.zst) zstd -qdc "$f" >"$dir/modules/$m.ko" ;;
    *.ko.gz) gzip -dc "$f" >"$dir/modules/$m.ko" ;;
    *) cp "$f" "$dir/modules/$m.ko" ;;
    esac
done
printf '%s\n' "${order[@]}" >"$dir/modules/load-order"
log "modules, in load order: ${order[*]}"

# --- initramfs ----------------------------------------------------------------------------------
# busybox and the modules. run.sh appends /init and the run's command to it on every run.
busybox=$(command -v busybox) || die "busybox not found"
if ldd "$busybox" >/dev/null 2>&1; then
    die "$busybox is dynamically linked: install busybox-static"
fi
stage=$work/initramfs
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp" "$stage/newroot" \
    "$stage/rig" "$stage/lib/modules"
cp "$busybox" "$stage/bin/busybox"
cp "$dir/modules/"* "$stage/lib/modules/"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null --quiet -o -H newc -R 0:0) |
    gzip -9n >"$dir/initramfs.cpio.gz"

# --- seal ---------------------------------------------------------------------------------------
{
    printf 'kver=%s\n' "$kver"
    printf 'image=%s %s\n' "$image_pkg" "$image_ver"
    printf 'gpio_sim=%s\n' "$gpio_sim_origin"
    printf 'busybox=%s\n' "$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)"
    printf 'modules=%s\n' "${order[*]}"
    printf 'prepared=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf 'recipe=%s\n' "$recipe"
} >"$dir/info"
(cd "$dir" && sha256sum vmlinuz initramfs.cpio.gz info modules/*) >"$dir/SHA256SUMS"
touch "$dir/READY"
if [ "${UNWIND_RIG_KEEP_DEBS:-0}" != 1 ]; then
    rm -rf "$dir/debs"
fi
printf '%s\n' "$kver" >"$base/current"
log "cache: made, $dir (built in $(($(date +%s) - started)) s)"
