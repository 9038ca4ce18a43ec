# shellcheck shell=bash
# shellcheck disable=SC2154 # work, here, repo ...: deploy/test.sh sets them (log: deploy/lib/toolkit.sh)
# deploy/tests/chroot.sh -- sourced by deploy/test.sh: throwaway Debian bookworm roots.
#
# A minimal bookworm (debootstrap --variant=minbase, with python3 and python3-apt for the
# Ansible tests) is made once from Debian's mirror and cached as a tarball in
# ~/.cache/unwind-deploy-test (about 45 s the first time); each test unpacks a fresh copy
# (about 2 s). Inside, apt-get and dpkg run the package's maintainer scripts as on a device:
# a real adduser, dpkg-statoverride and deb-systemd-helper. Only systemd itself is not
# running there, which is what the scripts expect of a chroot.

chroot_cache=${XDG_CACHE_HOME:-$HOME/.cache}/unwind-deploy-test
chroot_tar=$chroot_cache/bookworm-minbase-python3.tar
debian_mirror=${UNWIND_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# Every mount a test makes, unmounted (in reverse) by unmount_all from test.sh's trap.
track_mount() { echo "$1" >>"$work/mounts"; }
unmount_all() {
    [ -f "$work/mounts" ] || return 0
    tac "$work/mounts" | while IFS= read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -f "$work/mounts"
}

chroot_tarball() {
    [ -f "$chroot_tar" ] && return 0
    command -v debootstrap >/dev/null || return 1
    local d=$work/debootstrap
    log "making the bookworm chroot tarball (debootstrap, once)"
    debootstrap --variant=minbase --include=python3,python3-apt bookworm "$d" "$debian_mirror" \
        >"$work/debootstrap.out" 2>&1 || { tail -n 20 "$work/debootstrap.out"; return 1; }
    mkdir -p "$chroot_cache"
    tar -C "$d" -cf "$chroot_tar.tmp" . && mv "$chroot_tar.tmp" "$chroot_tar"
    rm -rf --one-file-system "$d"
}

# make_chroot DIR: a fresh bookworm in DIR, /proc mounted, name resolution for apt.
make_chroot() {
    local c=$1
    chroot_tarball || return 1
    mkdir -p "$c"
    tar -C "$c" -xf "$chroot_tar"
    cp /etc/resolv.conf "$c/etc/resolv.conf"
    mount -t proc proc "$c/proc" && track_mount "$c/proc"
}

# bind_ro DIR CHROOT: DIR visible read-only at the same path inside CHROOT.
bind_ro() {
    mkdir -p "$2$1"
    mount --bind "$1" "$2$1" && track_mount "$2$1" && mount -o remount,bind,ro "$2$1"
}

# apt_in CHROOT ARGS...: apt-get inside, non-interactive, keeping an edited conffile (as the
# Ansible role's apt module does). The cached package lists may be older than the mirror:
# on a failure, update them and try once more.
apt_in() {
    local c=$1
    shift
    local a=(env DEBIAN_FRONTEND=noninteractive chroot "$c" apt-get -y -q --no-install-recommends
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    "${a[@]}" "$@" </dev/null && return 0
    chroot "$c" apt-get -q update </dev/null >/dev/null 2>&1 || true
    "${a[@]}" "$@" </dev/null
}

# A release directory as build-release.sh makes it, from an executable (its texts compiled in).
make_release() {
    local bin=$1 d=$2
    mkdir -p "$d"
    cp "$bin" "$d/unwind"
}
