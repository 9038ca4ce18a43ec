#!/usr/bin/env bash
# build-bundle.sh -- a signed RAUC bundle holding a whole system slot, for an imaged card's
# update (rauc install on the device):
#
#   deploy/image/build-bundle.sh --rootfs FILE --version V --cert FILE --key FILE --out FILE
#                                [--compatible TEXT] [--uncompressed]
#
# --rootfs is the slot's ext4 file system as build-image.sh makes it (build-image.sh --bundle
# calls this script with it): the kernel and its initramfs in /boot, the device trees, the unwind
# package and the image's units. The bundle is RAUC's verity format: a squashfs with a dm-verity
# hash tree, signed with --cert and --key (deploy/image/signing-key.sh's signer), so a device
# checks every block it reads and refuses a bundle signed under another authority, built for
# another board (--compatible, default the image's own from root/etc/rauc/system.conf) or cut
# short. The image carries a hash of each 4 KiB block (RAUC's adaptive "block-hash-index"): a
# device that streams the bundle from a URL (rauc install https://...) fetches only the blocks
# that neither of its slots holds already. --uncompressed leaves the squashfs uncompressed
# (mksquashfs -noI -noD -noF -noX): quicker to make and read without decompressing, but about
# twice the size, too big to ship; for test systems only. Needs rauc and squashfs-tools
# (installed from Debian when missing).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# log, die
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$here/../lib/toolkit.sh"
rootfs=
version=
cert=
key=
out=
compatible=$(sed -n 's/^compatible=//p' "$here/root/etc/rauc/system.conf")
squashfs_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rootfs) rootfs=${2:?--rootfs needs a file}; shift 2 ;;
        --version) version=${2:?--version needs a version}; shift 2 ;;
        --cert) cert=${2:?--cert needs a file}; shift 2 ;;
        --key) key=${2:?--key needs a file}; shift 2 ;;
        --out) out=${2:?--out needs a file}; shift 2 ;;
        --compatible) compatible=${2:?--compatible needs a name}; shift 2 ;;
        --uncompressed) squashfs_args=(--mksquashfs-args="-noI -noD -noF -noX"); shift ;;
        -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die --status 2 "unknown option $1 (see --help)" ;;
    esac
done
for v in "$rootfs" "$version" "$cert" "$key" "$out"; do
    [ -n "$v" ] || die --status 2 "--rootfs, --version, --cert, --key and --out are needed (see --help)"
done
[ -f "$rootfs" ] || die "no file system $rootfs"
[ -f "$cert" ] || die "no signer certificate $cert (deploy/image/signing-key.sh makes it)"
[ -f "$key" ] || die "no signer key $key (deploy/image/signing-key.sh makes it)"
# The manifest is an INI file: a version or a name with a line break or a bracket would be
# another key.
for v in "$version" "$compatible"; do
    case $v in '' | *[![:alnum:]._+~:-]*) die --status 2 "\"$v\": letters, digits and . _ + ~ : - only" ;; esac
done
# shellcheck source-path=SCRIPTDIR source=../lib/apt.sh
. "$here/../lib/apt.sh"
install_missing rauc squashfs-tools || die "could not install rauc and squashfs-tools"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/unwind-bundle.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir "$work/content"
cp --sparse=always "$rootfs" "$work/content/rootfs.ext4"
cat >"$work/content/manifest.raucm" <<MANIFEST
[update]
compatible=$compatible
version=$version
description=Unwind $version: the whole system slot

[bundle]
format=verity

[image.rootfs]
filename=rootfs.ext4
adaptive=block-hash-index
MANIFEST
rm -f "$out"
rauc bundle --cert="$cert" --key="$key" "${squashfs_args[@]}" "$work/content" "$out" >"$work/rauc.log" 2>&1 ||
    { cat "$work/rauc.log" >&2; die "rauc could not make the bundle"; }
log "$out: $version for $compatible, $(du -h "$out" | cut -f1)"
