#!/usr/bin/env bash
# rig-modules.sh ROOT-TARBALL OUT-DIR -- gpio-sim.ko and i2c-stub.ko for the image's own kernel,
# and 7-Zip's 7zr (trixie's arm64 build) for the boot test's CPU benchmark.
#
# Debian's arm64 kernel builds neither (CONFIG_GPIO_SIM and CONFIG_I2C_STUB are not set), so the
# boot test builds them out of tree from Debian's own source of the same kernel, as the x86
# kernel rig does for gpio-sim (Tests/KernelRig/prepare.sh): in a copy of the image's root
# (arm64, its programs under qemu-user), with the kernel's own compiler and headers. Cached:
# OUT-DIR holds gpio-sim.ko, i2c-stub.ko, 7zr and a stamp naming the kernel they were built for
# and this recipe's hash; a second call with the same stamp does nothing (under OUT-DIR's lock, so
# two runs at once build them once). They go into the test's rig only, never on a card. 7zr: the
# benchmark a published Raspberry Pi Zero 2 W figure exists for (deploy/README.md, the boot's
# estimate for a Pi); Debian's package, fetched by the root's own apt (its signatures checked).
# shellcheck disable=SC2016 # the scripts in single quotes run in the root, where they expand
set -euo pipefail
# log, die
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/toolkit.sh"
# install_missing
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/apt.sh"
tarball=$1
out=$2

kver=$(tar -tf "$tarball" | sed -n 's|^\./usr/lib/modules/\([^/]*\)/$|\1|p' | head -n 1)
[ -n "$kver" ] || die "no kernel in $tarball"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
work=$(mktemp -d "${TMPDIR:-/var/tmp}/unwind-rig-modules.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT
root=$work/root
series=${kver%%-*}
series=${series%.*}
# in_root SCRIPT: SCRIPT (bash -ec, with KVER and SERIES) in the root, its programs under qemu-user.
in_root() {
    unshare --mount --propagation private bash -ec '
        r=$1
        mount -t proc proc "$r/proc"
        mount --rbind /dev "$r/dev"
        mount -t tmpfs tmpfs "$r/tmp"
        chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
            KVER="$2" SERIES="$3" bash -ec "$4"
    ' _ "$root" "$kver" "$series" "$1"
}
# The recipe: its text (declare -f) is part of the cache's stamp. What needs no arm64 program is
# done on the host at its own speed: the kernel's source (a 150 MB .tar.xz in its package, four
# files of it needed) and 7-Zip are only downloaded by the root's apt (its signatures checked)
# and unpacked here; the root's own compiler and headers build the modules.
build_modules() {
    mkdir -p "$root"
    tar -C "$root" -xf "$tarball"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    mkdir -p "$root/var/tmp/m" "$root/out"
    in_root '
        apt-get -o Acquire::Check-Valid-Until=false update -qq
        apt-get install -y -qq --no-install-recommends linux-headers-$KVER make gcc >/dev/null
        cd /var/tmp/m
        apt-get download -qq linux-source-$SERIES 7zip'
    local m=$root/var/tmp/m
    dpkg-deb --fsys-tarfile "$m"/linux-source-"$series"_*.deb | tar -xO "./usr/src/linux-source-$series.tar.xz" |
        xz -dc | tar -C "$m" -x --strip-components=1 --wildcards \
            "*/drivers/gpio/gpio-sim.c" "*/drivers/gpio/gpiolib.h" "*/kernel/irq/irq_sim.c" "*/drivers/i2c/i2c-stub.c"
    dpkg-deb -x "$m"/7zip_*.deb "$m/7zip"
    cp "$m/7zip/usr/lib/7zip/7zr" "$root/out/"
    in_root '
        cd /var/tmp/m
        cp drivers/gpio/gpio-sim.c gpio-sim-main.c
        cp drivers/gpio/gpiolib.h .
        cp drivers/i2c/i2c-stub.c .
        objs=gpio-sim-main.o
        if ! grep -q "^CONFIG_IRQ_SIM=y" /boot/config-$KVER; then
            # irq_to_desc() is not exported to modules; generic_handle_irq() does the same here.
            sed "s/handle_simple_irq(irq_to_desc(\([a-z_]*\)))/generic_handle_irq(\1)/" kernel/irq/irq_sim.c >irq_sim.c
            objs="$objs irq_sim.o"
        fi
        printf "obj-m += gpio-sim.o i2c-stub.o\ngpio-sim-y := %s\n" "$objs" >Makefile
        make -s -C /usr/src/linux-headers-$KVER M=/var/tmp/m modules
        cp gpio-sim.ko i2c-stub.ko /out/'
}
stamp="kver=$kver recipe=$(declare -f in_root build_modules | sha256sum | cut -c1-12)"
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] && [ -s "$out/gpio-sim.ko" ] && [ -s "$out/i2c-stub.ko" ] && [ -x "$out/7zr" ]; then
    log "cache: hit, gpio-sim.ko, i2c-stub.ko and 7zr for $kver in $out"
    exit 0
fi
t0=$SECONDS
# The kernel's source is unpacked on the host (build_modules): its xz.
install_missing xz-utils || die "could not install xz-utils"
rm -f "$out/stamp" "$out/kver"
build_modules
grep -aq "vermagic=$kver " "$root/out/gpio-sim.ko" || die "gpio-sim.ko is not for $kver"
cp "$root/out/gpio-sim.ko" "$root/out/i2c-stub.ko" "$root/out/7zr" "$out/"
echo "$stamp" >"$out/stamp"
log "cache: made, gpio-sim.ko, i2c-stub.ko and 7zr for $kver in $out ($((SECONDS - t0)) s)"
