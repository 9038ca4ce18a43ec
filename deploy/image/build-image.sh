#!/usr/bin/env bash
# build-image.sh -- the Unwind SD-card image for a Raspberry Pi 3, 4 or Zero 2 W (arm64), from
# Debian's archive alone, without a loop device or a mount:
#
#   deploy/image/build-image.sh                  # -> deploy/dist/unwind-<version>-arm64.img
#   deploy/image/build-image.sh --deb FILE       # with this arm64 package (default: built by
#                                                #   deploy/arm64/build-deb.sh)
#   deploy/image/build-image.sh --out FILE --setup FILE --config FILE --overlay DIR ...
#   deploy/image/build-image.sh --keyring CA.pem --bundle FILE --signing-cert FILE --signing-key FILE
#                                                # and the update bundle of the same system
#
# The card (MBR, disk id 0x756e7769, four partitions):
#   at 1 MiB, two copies of 16 KiB: which system slot boots and its tries left (BOOT_ORDER,
#      BOOT_A_LEFT, BOOT_B_LEFT in U-Boot's redundant environment format), read and written by
#      boot.scr and by Linux through /etc/fw_env.config.
#   1. UNWIND-BOOT, FAT32, 256 MiB: the Pi's firmware (Debian's raspi-firmware), U-Boot (Debian's
#      u-boot-rpi) and boot.scr (deploy/image/boot/boot.cmd), the device trees of the Pi 3, 4 and
#      Zero 2 W with I2C1 at 400 kHz, config.txt, unwind-boot.txt (the kernel's command line);
#      and what a person edits on a laptop: the setup file (unwind-setup.txt), the configuration
#      (unwind.conf, read at the first boot) and README.txt. Mounted read-only; written only
#      while a setup file is imported.
#   2. system A, ext4, read-only: Debian 13 (trixie) with systemd, the unwind package and its
#      units, its kernel and initramfs in /boot, RAUC with the certificate authority it trusts
#      (--keyring). Logs and the rest of what a running system writes are in memory (tmpfs).
#   3. system B, the same size, empty until the first update is installed into it (rauc install
#      of a bundle: --bundle makes one of this same system, signed with --signing-cert and
#      --signing-key, through deploy/image/build-bundle.sh).
#   4. unwind-data, ext4 with its journal: /data/state (the state directory, bound on
#      /var/lib/unwind), /data/etc-unwind (/etc/unwind), /data/system (SSH host key and
#      authorized_keys, the Wi-Fi network). Grown to the end of the card at the first boot.
#
# --keyring is needed for an image (deploy/image/signing-key.sh makes the clinic's keys once);
# --bundle-version names the bundle's system (default: the unwind package's version).
# --base-only makes (or finds) the cached base root and prints its path.
# --overlay DIR lays DIR's files over the root (the boot test's rig); --setup and --config put
# that setup file and configuration on the boot partition instead of the blank template and the
# package's default; --kernel-args TEXT is the card's kernel command line instead of the
# board's (the emulated machine's console), in letters, digits, spaces and . _ , : = / + @ -
# (U-Boot's shell would parse a quote or a $), at most 1905 of them; boot.scr adds the slot's
# root to it.
# The root file system without Unwind (mmdebstrap, every package's scripts run under qemu-user)
# is cached in ${UNWIND_IMAGE_CACHE:-~/.cache/unwind-image}; cold about
# 7-8 minutes on an idle two-core machine (the initramfs made once), warm about 2 (the unwind
# package installed, the partitions made). deploy/arm64/package-test.sh installs the package in a
# copy of the same root.
# Needs root (chroot) and binfmt_misc; installs what it needs from Debian when it is missing.
# shellcheck disable=SC2016 # the hooks' and chroots' scripts expand in their own shells
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
mirror=${UNWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${UNWIND_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-image}
suite=trixie
base_packages=systemd-sysv,udev,kmod,dbus,linux-image-arm64,raspi-firmware,e2fsprogs,dosfstools,iproute2,ifupdown,openssh-server,wpasupplicant,firmware-brcm80211,gpiod,libgpiod3,libi2c0,libqrencode4,adduser,i2c-tools,procps,libstdc++6,zstd,unifont

# log, die, arm64_cpu
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$here/../lib/toolkit.sh"
# The root's programs run as the board's CPU under qemu-user (passed on through every env -i).
export QEMU_CPU=$arm64_cpu

deb=
out=
setup=$here/boot/unwind-setup.txt
config=$repo/deploy/unwind.conf
overlays=()
base_only=0
keyring=
bundle=
bundle_version=
signing_cert=
signing_key=
# No serial console: the header UART may be the modem's (unwind-setup --modem-on-uart). Quiet:
# nobody reads the kernel's messages on a bedside device, and drawing them on the screen's
# console holds up the boot. No check of the slot at boot (its initramfs has no fsck: the
# card's fstab names no root): a slot is mounted read-only, and RAUC writes only the slot that
# is not running, marked bad until its copy is whole. panic=10: a kernel or an initramfs that
# cannot go on restarts the board, so that a system on trial that never reaches user space
# spends its one try and the slot before it starts.
kernel_args="console=tty0 rootfstype=ext4 net.ifnames=0 cma=64M panic=10 quiet"
# unwind-boot.txt holds one line: this, then the words.
boot_txt_key=bootargs_card=
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=${2:?--deb needs a file}; shift 2 ;;
        --out) out=${2:?--out needs a file}; shift 2 ;;
        --setup) setup=${2:?--setup needs a file}; shift 2 ;;
        --config) config=${2:?--config needs a file}; shift 2 ;;
        --overlay) overlays+=("${2:?--overlay needs a directory}"); shift 2 ;;
        --kernel-args) kernel_args=${2:?--kernel-args needs the text}; shift 2 ;;
        --keyring) keyring=${2:?--keyring needs a file}; shift 2 ;;
        --bundle) bundle=${2:?--bundle needs a file}; shift 2 ;;
        --bundle-version) bundle_version=${2:?--bundle-version needs a version}; shift 2 ;;
        --signing-cert) signing_cert=${2:?--signing-cert needs a file}; shift 2 ;;
        --signing-key) signing_key=${2:?--signing-key needs a file}; shift 2 ;;
        --base-only) base_only=1; shift ;;
        -h | --help) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
# boot.scr leaves out a longer unwind-boot.txt than its setenv line names: the kernel keeps 2047
# characters of its command line, and the slot's root comes after these.
most=$(sed -n 's/^setenv unwind_txt_most \(0x[0-9a-f][0-9a-f]*\)$/\1/p' "$here/boot/boot.cmd")
[ -n "$most" ] || die "boot/boot.cmd: no line that says how long unwind-boot.txt may be (setenv unwind_txt_most 0x...)"
most=$((most - ${#boot_txt_key} - 1))
[ "${#kernel_args}" -le "$most" ] || die "--kernel-args: ${#kernel_args} characters; at most $most (boot.scr leaves out a longer unwind-boot.txt: the kernel keeps 2047 characters of its command line, and the slot's root comes after these)"
# boot.scr puts the text into U-Boot's bootargs through its shell, which parses a command again
# after expanding a variable: a quote, a $, a ; or a backslash would garble the boot, on every boot.
# The characters let in are boot.scr's own, read from the line that leaves out every word with
# another (one list for the image and the boot).
kept=$(sed -n 's/^ *setexpr bootargs_card gsub "\\S\*\[^\([^]]*\)\]\\S\*" ""$/\1/p' "$here/boot/boot.cmd")
[ -n "$kept" ] || die "boot/boot.cmd: no line that leaves out the words of unwind-boot.txt (setexpr bootargs_card gsub ...)"
case "$kernel_args" in
    *[!"$kept"]*) die "--kernel-args: only letters, digits, spaces and ${kept//[A-Za-z0-9 ]/} (U-Boot's shell would parse the rest): $(printf '%q' "$kernel_args")" ;;
esac
[ "$(id -u)" -eq 0 ] || die "needs root (chroot, file ownership in the image)"
[ -f "$setup" ] || die "no setup file $setup"
[ -f "$config" ] || die "no configuration $config"
if [ "$base_only" = 0 ]; then
    [ -n "$keyring" ] || die "an image needs the certificate its updates are signed under: --keyring CA.pem (deploy/image/signing-key.sh makes one)"
    [ -f "$keyring" ] || die "no certificate $keyring"
    if [ -n "$bundle" ]; then
        if [ ! -f "$signing_cert" ] || [ ! -f "$signing_key" ]; then die "--bundle needs --signing-cert and --signing-key"; fi
    fi
fi

host_packages=(mmdebstrap arch-test qemu-user-static binfmt-support dosfstools mtools fdisk e2fsprogs device-tree-compiler xz-utils u-boot-tools openssl)
# shellcheck source-path=SCRIPTDIR source=../lib/apt.sh
. "$here/../lib/apt.sh"
install_missing "${host_packages[@]}" || die "could not install ${host_packages[*]}"
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || die "qemu-aarch64 is not registered with binfmt_misc"
if [ "$base_only" = 0 ]; then
    # The keyring goes into every slot, readable by all: a certificate, never a key.
    openssl x509 -noout -in "$keyring" 2>/dev/null || die "--keyring $keyring is not a PEM certificate"
    ! grep -q 'PRIVATE KEY' "$keyring" || die "--keyring $keyring holds a private key: give the certificate alone (ca.cert.pem)"
    if [ -n "$bundle" ]; then
        openssl verify -purpose any -CAfile "$keyring" "$signing_cert" >/dev/null 2>&1 ||
            die "--signing-cert $signing_cert is not signed by --keyring $keyring: the image would refuse its bundles"
    fi
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/unwind-image.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT
t0=$SECONDS

# --- the package ---------------------------------------------------------------------------
if [ -z "$deb" ] && [ "$base_only" = 0 ]; then
    log "building the arm64 package (deploy/arm64/build-deb.sh)"
    "$repo/deploy/arm64/build-deb.sh" --out "$work/deb" >&2
    deb=$(ls "$work"/deb/unwind_*_arm64.deb)
fi

# --- the base root, cached --------------------------------------------------------------------
# The cache is keyed by what makes it: the suite, the package list and make_base's own text. A
# change to any of them names a new file, so a root made by another recipe is never used; the
# file is trusted only when it is a regular file whose stamp (written after its contents were
# checked) gives the same key and size.
make_base() { # OUT: the root as an uncompressed tar
    # /boot/firmware exists before the kernel's install, so raspi-firmware's hooks copy the
    # kernel, its initramfs and the device trees there (they are the boot partition's). The
    # initramfs is made once, at the end (every program that makes it runs under qemu-user, about
    # two minutes a time): the kernel's own postinst and the trigger after the last hook would
    # each make it again. Which modules it holds is the image's own initramfs-tools
    # configuration (root/etc/initramfs-tools), in place before the kernel's install.
    mmdebstrap --quiet --variant=minbase --architectures=arm64 --components=main,non-free-firmware \
        --format=tar \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="$base_packages" \
        --setup-hook='mkdir -p "$1/boot/firmware" "$1/etc/initramfs-tools" && cp -R "${UNWIND_INITRAMFS_CONFIG:?}/." "$1/etc/initramfs-tools/"' \
        --essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs' \
        --essential-hook='printf "#!/bin/sh\nexit 0\n" >"$1/usr/sbin/update-initramfs" && chmod 755 "$1/usr/sbin/update-initramfs"' \
        --customize-hook='rm "$1/usr/sbin/update-initramfs" && chroot "$1" dpkg-divert --quiet --local --rename --remove /usr/sbin/update-initramfs' \
        --customize-hook='chroot "$1" update-initramfs -c -k all' \
        --customize-hook='chroot "$1" sh -ec "l=\$(lsinitramfs /boot/initrd.img-*); for m in fs/ext4/ext4 block/virtio_blk mmc/host/sdhci-iproc mmc/host/bcm2835 regulator/fixed regulator/gpio-regulator; do echo \"\$l\" | grep -q \"/\$m\.ko\" || { echo \"the initramfs has no \$m\" >&2; exit 1; }; done"' \
        "$suite" "$1" "$mirror"
}
export UNWIND_INITRAMFS_CONFIG=$here/root/etc/initramfs-tools
initramfs_config=$(cd "$UNWIND_INITRAMFS_CONFIG" && find . -type f -printf '%p %m\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
key=$(printf '%s\n' "$suite" "$base_packages" "$(declare -f make_base)" "$initramfs_config" | sha256sum | cut -c1-12)
base=$cache/base-$suite-arm64-$key.tar
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
base_ready() {
    [ -f "$base" ] && [ ! -L "$base" ] && [ -f "$base.ok" ] &&
        [ "$(cat "$base.ok")" = "key=$key size=$(stat -c %s "$base")" ]
}
if base_ready; then
    log "cache: hit, the base root $base"
else
    log "cache: making the base root ($suite arm64, mmdebstrap under qemu-user; some minutes)"
    t1=$SECONDS
    rm -rf "$base" "$base.ok" "$cache/making.tar"
    # The name ends in .tar, and the format is named as well: mmdebstrap takes the format from
    # the extension, and an unknown one makes a directory.
    make_base "$cache/making.tar" >&2 || die "mmdebstrap failed (its messages are above)"
    [ -f "$cache/making.tar" ] || die "mmdebstrap made no tar file"
    listing=$(tar -tf "$cache/making.tar") || die "the base root is not a readable tar"
    grep -q '^\./usr/lib/modules/[^/]*/$' <<<"$listing" || die "the base root has no kernel modules"
    grep -q '^\./boot/firmware/initrd\.img-' <<<"$listing" || die "the base root has no initramfs in /boot/firmware"
    grep -q '^\./etc/initramfs-tools/conf\.d/unwind-modules\.conf$' <<<"$listing" || die "the base root's initramfs was made without the image's configuration"
    mv "$cache/making.tar" "$base"
    echo "key=$key size=$(stat -c %s "$base")" >"$base.ok"
    # Roots of other recipes are never used again.
    find "$cache" -maxdepth 1 -name "base-*.tar*" ! -name "$(basename "$base")*" -exec rm -rf {} +
    log "cache: made, the base root in $((SECONDS - t1)) s ($(du -h "$base" | cut -f1))"
fi
flock -u 9
if [ "$base_only" = 1 ]; then
    echo "$base"
    exit 0
fi
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || die "$deb is not an arm64 package"
version=$(dpkg-deb -f "$deb" Version)
[ -n "$out" ] || out=$repo/deploy/dist/unwind-$version-arm64.img
mkdir -p "$(dirname "$out")"

# --- the root: base + unwind + the image's own files ----------------------------------------
root=$work/root
mkdir -p "$root"
tar -C "$root" -xf "$base"
cp "$deb" "$root/tmp/unwind.deb"
# shellcheck disable=SC2016 # the script runs in the chroot
unshare --mount --propagation private bash -ec '
    r=$1
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs tmpfs "$r/run"
    cp /etc/resolv.conf "$r/etc/resolv.conf"
    chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 QEMU_CPU="$QEMU_CPU" DEBIAN_FRONTEND=noninteractive sh -ec "
        # With its dependencies from the archive, as on a board (apt install ./unwind.deb).
        apt-get -o Acquire::Check-Valid-Until=false update -qq
        # RAUC installs updates into the other slot; it writes the slots state with fw_setenv.
        # sudo: the maintainer over SSH installs updates as root (root/etc/sudoers.d).
        apt-get install -y -qq --no-install-recommends /tmp/unwind.deb rauc rauc-service libubootenv-tool fdisk sudo >/dev/null
        rm /tmp/unwind.deb
        # U-Boot for the Pis (on the boot partition) and for the emulated machine (beside the
        # image), from the same archive; not installed in the system.
        mkdir /tmp/u-boot && cd /tmp/u-boot && apt-get download -qq u-boot-rpi u-boot-qemu
        # The maintainer who logs in over SSH (when the setup file gives a key): in group unwind,
        # so the unwind commands reach the device; no password.
        useradd --create-home --groups unwind --shell /bin/bash maintainer
        passwd --lock maintainer >/dev/null
        # Every device makes its own SSH host key, on /data (sshd_config.d/unwind-image.conf).
        rm -f /etc/ssh/ssh_host_*
        # An empty machine-id: systemd makes one in memory at each boot of a read-only root.
        : >/etc/machine-id
        rm -f /var/lib/dbus/machine-id
    "
' _ "$root"
for src in "$here/root" "${overlays[@]}"; do
    cp -a --no-preserve=ownership "$src/." "$root/"
done
chroot "$root" systemctl enable unwind-data.service unwind-firstboot.service unwind-wifi.service systemd-networkd.service >/dev/null 2>&1
chroot "$root" systemctl enable unwind.service ssh.service unwind-slot-good.service unwind-boot-deadline.timer unwind-data-grow.service >/dev/null 2>&1
install -m 0644 "$keyring" "$root/etc/rauc/keyring.pem"
chmod 0440 "$root/etc/sudoers.d/unwind-maintainer"
# Among them, ifupdown's networking.service: systemd-networkd brings up the Wi-Fi the setup file
# gives; and e2scrub, which needs LVM.
chroot "$root" systemctl mask networking.service e2scrub_reap.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1 || true
# And the early boot's units that load or mount what the device never uses (DRM, FUSE, EFI's
# pstore, huge pages, POSIX message queues, the kernel's debug and trace file systems, network
# units from the kernel's command line): on two cores they compete for the CPU with the units the
# panic path waits for. kmod-static-nodes stays: RAUC mounts a bundle through /dev/loop-control,
# one of its nodes.
chroot "$root" systemctl mask modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service \
    sys-fs-fuse-connections.mount dev-hugepages.mount dev-mqueue.mount sys-kernel-debug.mount sys-kernel-tracing.mount \
    systemd-network-generator.service systemd-pstore.service >/dev/null 2>&1 || true
# So are the generators that find nothing to do on this card (it has no GPT, TPM, hibernation,
# rc.local, SysV-only scripts or VSOCK; systemd runs each one before any unit starts): fstab's,
# the getty's and the debug shell's stay.
install -d "$root/etc/systemd/system-generators"
for g in gpt-auto hibernate-resume rc-local run ssh system-update sysv tpm2; do
    ln -sfn /dev/null "$root/etc/systemd/system-generators/systemd-$g-generator"
done
install -d -m 0755 "$root/data"
# The slot's kernel and initramfs under fixed names, for boot.scr: Debian's own links in /boot
# (link_in_boot: a kernel package's install moves them to its version).
kernel=$(find "$root/boot" -maxdepth 1 -name "vmlinuz-*" -printf "%f\n" | sort -V | tail -n 1)
kernel=${kernel#vmlinuz-}
if [ -z "$kernel" ] || [ ! -f "$root/boot/initrd.img-$kernel" ]; then die "the root has no kernel and initramfs in /boot"; fi
printf 'do_symlinks = yes\nlink_in_boot = yes\n' >"$root/etc/kernel-img.conf"
ln -sfn "vmlinuz-$kernel" "$root/boot/vmlinuz"
ln -sfn "initrd.img-$kernel" "$root/boot/initrd.img"
u_boot=$work/u-boot
for d in "$root"/tmp/u-boot/*.deb; do dpkg-deb -x "$d" "$u_boot"; done
for b in rpi_arm64 qemu_arm64; do
    [ -f "$u_boot/usr/lib/u-boot/$b/u-boot.bin" ] || die "no U-Boot $b (u-boot-rpi, u-boot-qemu)"
done
# Nothing left that only building needed.
: >"$root/etc/resolv.conf"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/* "$root"/tmp/*

# --- the boot partition's files ----------------------------------------------------------------
boot=$work/boot
mkdir -p "$boot"
cp -a "$root/boot/firmware/." "$boot/"
rm -rf "${root:?}"/boot/firmware/*
# The kernel and initramfs are each slot's own (boot.scr loads them from it); the firmware
# starts U-Boot instead of the kernel.
rm -f "$boot"/vmlinuz-* "$boot"/initrd.img-* "$boot/cmdline.txt"
grep -q '^kernel=' "$boot/config.txt" || die "raspi-firmware's config.txt names no kernel"
sed -i -e 's/^kernel=.*/kernel=u-boot.bin/' -e '/^initramfs /d' "$boot/config.txt"
cp "$u_boot/usr/lib/u-boot/rpi_arm64/u-boot.bin" "$boot/u-boot.bin"
mkimage -A arm64 -O linux -T script -C none -n "unwind slots" -d "$here/boot/boot.cmd" "$boot/boot.scr" >/dev/null
# I2C1 (header pins 3 and 5) at 400 kHz: the 30 fps square needs it (hardware/README.md). The
# upstream device trees Debian ships have no dtparam for it, so the property is set in each.
for dtb in bcm2837-rpi-3-b.dtb bcm2837-rpi-3-b-plus.dtb bcm2837-rpi-3-a-plus.dtb bcm2711-rpi-4-b.dtb bcm2837-rpi-zero-2-w.dtb; do
    [ -f "$boot/$dtb" ] || continue
    # I2C1 is the BSC1 controller at 0x7e804000 on every one of these SoCs (some trees name it
    # in /aliases, some do not).
    node=$(fdtget "$boot/$dtb" /aliases i2c1 2>/dev/null) || node=/soc/i2c@7e804000
    fdtget "$boot/$dtb" "$node" compatible >/dev/null 2>&1 || die "$dtb has no I2C1 node ($node)"
    fdtput -t i "$boot/$dtb" "$node" clock-frequency 400000
    fdtput -t s "$boot/$dtb" "$node" status okay
done
# U-Boot's console is the header UART, the modem's: a byte from the modem (its echo of U-Boot's
# banner, its "RDY") during U-Boot's 2 s countdown stops the boot at U-Boot's prompt for good,
# and the panic button with it. bootdelay -2 boots without reading the UART. In the device tree,
# not uboot.env: U-Boot reads /config after its environment, so a missing or torn uboot.env (the
# Pi's U-Boot keeps no second copy) cannot bring the countdown back. In every Pi tree on the card
# (the Pi 400 and the compute modules' too): U-Boot runs on each of them.
trees=0
for dtb in "$boot"/bcm2*.dtb; do
    [ -f "$dtb" ] || continue
    fdtput -p -t x "$dtb" /config bootdelay fffffffe
    [ "$(fdtget -t i "$dtb" /config bootdelay)" = -2 ] || die "$(basename "$dtb"): U-Boot's bootdelay is not -2"
    trees=$((trees + 1))
done
[ "$trees" -gt 0 ] || die "no Raspberry Pi device tree on the boot partition (raspi-firmware)"
echo "$boot_txt_key$kernel_args" >"$boot/unwind-boot.txt"
cp "$setup" "$boot/unwind-setup.txt"
cp "$config" "$boot/unwind.conf"
cp "$here/boot/README.txt" "$boot/README.txt"

# --- the data partition's files ---------------------------------------------------------------
data=$work/data
uid=$(chroot "$root" id -u unwind)
gid=$(chroot "$root" id -g unwind)
install -d -o 0 -g 0 -m 0755 "$data" "$data/system"
install -d -o "$uid" -g "$gid" -m 0750 "$data/state"
install -d -o 0 -g "$gid" -m 0750 "$data/etc-unwind"

# --- the partitions and the card ---------------------------------------------------------------
# Each slot has room for a system a third larger than this one: an update must fit the slot the
# card was flashed with.
boot_mib=256
slot_mib=1024
data_mib=128
root_mib=$(du -s -B1M "$root" | cut -f1)
[ $((root_mib * 4 / 3)) -le "$slot_mib" ] || die "the system (${root_mib} MiB) leaves too little room in a ${slot_mib} MiB slot"
mkfs.vfat -F 32 -n UNWIND-BOOT -C "$work/boot.vfat" $((boot_mib * 1024)) >/dev/null
mcopy -s -Q -i "$work/boot.vfat" "$boot"/* ::/
# The slot's file system is built nearly reproducibly: one UUID and directory hash seed for
# every build, the build's time and every file's modification time no later than the release's
# date (SOURCE_DATE_EPOCH, else deploy/debian/changelog's). Two builds then differ where their
# files do and in the inode tables (mkfs.ext4 -d of e2fsprogs 1.47.0 copies each file's change
# time from the build tree), and a device streaming the next bundle fetches only those blocks
# (build-bundle.sh): a new file system's own UUID would change every metadata block it checksums.
root_uuid=756e7769-6e64-2d72-6f6f-742d736c6f74
epoch=${SOURCE_DATE_EPOCH:-$(date -d "$(sed -n 's/^ -- .*>  //p' "$here/../debian/changelog" | head -n 1)" +%s)}
find "$root" -newermt "@$epoch" -exec touch -h -d "@$epoch" {} +
E2FSPROGS_FAKE_TIME=$epoch mkfs.ext4 -q -L unwind-root -U "$root_uuid" -d "$root" \
    -E "root_owner=0:0,hash_seed=$root_uuid" "$work/root.ext4" "${slot_mib}M"
# Both slots carry the label and the file system's UUID: nothing mounts the system by them
# (boot.scr names the slot's partition). An error found in it makes it read-only.
tune2fs -e remount-ro "$work/root.ext4" >/dev/null
mkfs.ext4 -q -L unwind-data -d "$data" -E root_owner=0:0 "$work/data.ext4" "${data_mib}M"
# Slot A boots first, three tries; B is empty. The first of the state's two copies (redundant
# format, boot.cmd); the second is left blank, a bad CRC, until the first boot writes it.
printf 'BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=3\n' >"$work/slots.txt"
mkenvimage -r -s 0x4000 -o "$work/slots.env" "$work/slots.txt"
start1=4
start2=$((start1 + boot_mib))
start3=$((start2 + slot_mib))
start4=$((start3 + slot_mib))
total=$((start4 + data_mib))
rm -f "$out"
truncate -s "${total}M" "$out"
sfdisk --quiet "$out" <<EOF
label: dos
label-id: 0x756e7769
start=${start1}MiB, size=${boot_mib}MiB, type=c, bootable
start=${start2}MiB, size=${slot_mib}MiB, type=83
start=${start3}MiB, size=${slot_mib}MiB, type=83
start=${start4}MiB, size=${data_mib}MiB, type=83
EOF
dd if="$work/slots.env" of="$out" bs=1M seek=1 conv=notrunc status=none
dd if="$work/boot.vfat" of="$out" bs=1M seek=$start1 conv=notrunc,sparse status=none
dd if="$work/root.ext4" of="$out" bs=1M seek=$start2 conv=notrunc,sparse status=none
dd if="$work/data.ext4" of="$out" bs=1M seek=$start4 conv=notrunc,sparse status=none
# The emulated machine's U-Boot beside the image (Tests/Image boots the card with it).
cp "$u_boot/usr/lib/u-boot/qemu_arm64/u-boot.bin" "${out%.img}.qemu-u-boot.bin"
if [ -n "$bundle" ]; then
    "$here/build-bundle.sh" --rootfs "$work/root.ext4" --version "${bundle_version:-$version}" \
        --cert "$signing_cert" --key "$signing_key" --out "$bundle" || die "the update bundle could not be made"
fi
log "$out: ${total} MiB (boot ${boot_mib}, slots A and B ${slot_mib} each, system ${root_mib}, data ${data_mib}), $(du -h "$out" | cut -f1) on disk; kernel $kernel; made in $((SECONDS - t0)) s"
echo "$out"
