#!/usr/bin/env bash
# install.sh -- turns a fresh Raspberry Pi OS (bookworm, arm64) or Debian system into an
# Unwind bedside device. Idempotent: every step compares what is there with what should be
# there and changes only the difference; a second run prints "nothing to change".
#
#   sudo deploy/install.sh --from DIR [--modem-on-uart [--disable-bt]]   # a prebuilt release
#   sudo deploy/install.sh --build [--modem-on-uart]                       # build here first
#   deploy/install.sh --dry-run ...                                        # show, change nothing
#   deploy/install.sh --root /mnt/image ...                                # into a mounted image
#
# What it does (deploy/README.md explains each step):
#   packages   libgpiod2, libi2c0 (what the binary links), gpiod and i2c-tools (bring-up
#              and the motor-off helper), through apt-get, when missing
#   user       the system user "unwind" in the groups gpio, i2c and dialout
#   boot       config.txt: I2C on at 400 kHz, the core clock pinned where the I2C clock
#              derives from it, the UART with --modem-on-uart; cmdline.txt: no serial
#              console with --modem-on-uart; i2c-dev loaded at boot
#   binary     /usr/local/lib/unwind/unwind and unwind_UnwindDevice.resources/ side by side
#              (SwiftPM's Bundle.module looks next to the executable), the motor-off
#              helper, and the link /usr/local/bin/unwind for the maintainer's commands
#   service    /usr/local/lib/systemd/system/unwind.service, enabled
#   udev       /etc/udev/rules.d/99-unwind.rules (+ 99-unwind-modem-uart.rules)
#   config     /etc/unwind/unwind.conf when there is none (never overwritten), and the
#              documented example in /usr/local/share/doc/unwind/
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

usage() {
    cat <<'EOF'
Usage: install.sh [options]

  --from DIR          install the release in DIR: the executable "unwind" and the directory
                      "unwind_UnwindDevice.resources" (deploy/build-release.sh makes one)
  --build             build the release from this checkout first (swift build -c release
                      --static-swift-stdlib; needs Swift and deploy/dev-deps.sh), then install it
  --modem-on-uart     the modem is wired to the header UART (GPIO 14/15): enable the UART,
                      remove the serial console from cmdline.txt, name the tty /dev/unwind-modem
  --disable-bt        with --modem-on-uart on a Pi 3, 4 or Zero 2 W: give the PL011 UART to the
                      header pins (dtoverlay=disable-bt) and disable hciuart; Bluetooth is off
  --shutdown-button N optional gpio-shutdown overlay on BCM N (active low, pull-up); BCM 3,
                      the overlay's default, is taken by I2C
  --device SPEC       also allow SPEC in the unit (DeviceAllow=SPEC rw, a drop-in), e.g.
                      /dev/gpiochip4 or char-gpiochip; repeatable
  --maintainer USER   add USER to group unwind: the maintainer's commands (unwind status,
                      unwind alerts ...) may then read the state and use the control socket;
                      repeatable
  --config FILE       the configuration to install when /etc/unwind/unwind.conf is missing
                      (default: deploy/unwind.conf, every key at its default)
  --root DIR          install into DIR instead of / (an image, a chroot, a test prefix):
                      packages are not installed and no service is started
  --no-packages       do not install packages (they must be there already)
  --no-start          enable the service but do not start or restart it
  --dry-run           print what would change and change nothing
  -h, --help          this text

Prints one line per change, and "nothing to change" when there was none. Exit status 0 on
success, 1 on an error, 2 on a usage error. Run it again after any change of options.
EOF
}

# ---------------------------------------------------------------------------- options

root=/
from=
build=0
modem_uart=0
disable_bt=0
shutdown_pin=
config_src=$here/unwind.conf
dry=0
packages=1
start=1
devices=()
maintainers=()

die() { printf 'install: %s\n' "$*" >&2; exit 1; }
usage_error() { printf 'install: %s (see --help)\n' "$*" >&2; exit 2; }
need_arg() { if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs a value"; fi; }

while [ $# -gt 0 ]; do
    case "$1" in
        --from) need_arg "$@"; from=$2; shift 2 ;;
        --build) build=1; shift ;;
        --modem-on-uart) modem_uart=1; shift ;;
        --disable-bt) disable_bt=1; shift ;;
        --shutdown-button) need_arg "$@"; shutdown_pin=$2; shift 2 ;;
        --device) need_arg "$@"; devices+=("$2"); shift 2 ;;
        --maintainer) need_arg "$@"; maintainers+=("$2"); shift 2 ;;
        --config) need_arg "$@"; config_src=$2; shift 2 ;;
        --root) need_arg "$@"; root=$2; shift 2 ;;
        --no-packages) packages=0; shift ;;
        --no-start) start=0; shift ;;
        --dry-run) dry=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage_error "unknown option $1" ;;
    esac
done

[ -n "$from" ] && [ "$build" = 1 ] && usage_error "--from and --build exclude each other"
[ "$disable_bt" = 1 ] && [ "$modem_uart" = 0 ] && usage_error "--disable-bt only makes sense with --modem-on-uart"
if [ -n "$shutdown_pin" ]; then
    case "$shutdown_pin" in '' | *[!0-9]*) usage_error "--shutdown-button takes a BCM number" ;; esac
    case "$shutdown_pin" in
        2 | 3) usage_error "--shutdown-button $shutdown_pin: BCM 2 and 3 are the display's I2C bus" ;;
        14 | 15) usage_error "--shutdown-button $shutdown_pin: BCM 14 and 15 are the modem UART" ;;
        5 | 6 | 13 | 18 | 19 | 26) usage_error "--shutdown-button $shutdown_pin: used by the motor or a button" ;;
    esac
    [ "$shutdown_pin" -le 27 ] || usage_error "--shutdown-button: the header has BCM 0 to 27"
fi
for d in "${devices[@]}"; do
    case "$d" in
        /dev/* | char-* | block-*) ;;
        *) usage_error "--device $d: give a /dev path or a class such as char-gpiochip" ;;
    esac
done
[ -f "$config_src" ] || die "no configuration file $config_src"
[ -d "$root" ] || die "--root $root: no such directory"
root=$(cd "$root" && pwd)
R=${root%/}                 # prefix for paths: "" for the real system

if [ "$dry" = 0 ] && [ "$(id -u)" -ne 0 ]; then
    die "run as root (sudo), or with --dry-run to see what would change"
fi

# ---------------------------------------------------------------------------- reporting

changes=0
reboot=0
restart=0
change() {
    changes=$((changes + 1))
    if [ "$dry" = 1 ]; then printf '  would %s\n' "$*"; else printf '  %s\n' "$*"; fi
}
note() { printf '  note: %s\n' "$*"; }
section() { printf '%s\n' "$*"; }

tmpdir=$(mktemp -d)
trap 'rm -rf "$tmpdir"' EXIT

# ---------------------------------------------------------------------------- file helpers

# The numeric id of a group or user in the target's own databases (works for --root).
gid_of() { awk -F: -v n="$1" '$1 == n { print $3; found = 1 } END { exit !found }' "$R/etc/group" 2>/dev/null; }
uid_of() { awk -F: -v n="$1" '$1 == n { print $3; found = 1 } END { exit !found }' "$R/etc/passwd" 2>/dev/null; }

# make_dir PATH: a system directory, created (0755 root) when missing, otherwise left alone.
make_dir() {
    [ -d "$R$1" ] && return
    change "create $1/"
    [ "$dry" = 1 ] || install -d -m 0755 "$R$1"
}

# ensure_dir PATH MODE [OWNER_IDS]: a directory of ours, with this mode and owner ("" for
# the owner: leave it).
ensure_dir() {
    local path=$R$1 mode=$2 owner=${3-0:0}
    if [ ! -d "$path" ]; then
        change "create $1/ ($mode)"
        [ "$dry" = 1 ] && return
        mkdir -p "$path"
        chmod "$mode" "$path"
        [ -n "$owner" ] && chown "$owner" "$path"
        return
    fi
    fix_meta "$1" "$mode" "$owner"
}

# fix_meta PATH MODE OWNER_IDS: mode and owner of an existing file or directory.
fix_meta() {
    local path=$R$1 mode=$2 owner=$3 have
    have=$(stat -c '%a' "$path")
    if [ "$have" != "${mode#0}" ]; then
        change "chmod $mode $1 (was $have)"
        [ "$dry" = 1 ] || chmod "$mode" "$path"
    fi
    if [ -n "$owner" ]; then
        have=$(stat -c '%u:%g' "$path")
        if [ "$have" != "$owner" ]; then
            change "chown $owner $1 (was $have)"
            [ "$dry" = 1 ] || chown "$owner" "$path"
        fi
    fi
}

# put_file SRC DEST MODE [OWNER_IDS]: DEST (a path on the target) gets SRC's content,
# replaced atomically (a temporary file in the same directory, then rename). MODE "keep"
# keeps the mode and owner of the file there (the FAT boot partition has neither).
# Returns 0 when DEST changed (or would), 1 when it already had that content.
put_file() {
    local src=$1 dest=$R$2 mode=$3 owner=${4-0:0}
    if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
        [ "$mode" = keep ] || fix_meta "$2" "$mode" "$owner"
        return 1
    fi
    if [ -e "$dest" ]; then change "update $2"; else change "install $2"; fi
    [ "$dry" = 1 ] && return 0
    mkdir -p "$(dirname "$dest")"
    if [ "$mode" = keep ] && [ -f "$dest" ]; then
        cat "$src" >"$dest.unwind-new"
        sync "$dest.unwind-new" 2>/dev/null || true
        mv -f "$dest.unwind-new" "$dest"
        return 0
    fi
    local tmp
    tmp=$(mktemp "$dest.unwind-new.XXXXXX")
    cat "$src" >"$tmp"
    chmod "${mode/keep/0644}" "$tmp"
    if [ -n "$owner" ]; then chown "$owner" "$tmp"; fi
    mv -f "$tmp" "$dest"
    return 0
}

# put_text DEST MODE [OWNER_IDS] < text
put_text() {
    local t
    t=$(mktemp "$tmpdir/text.XXXXXX")
    cat >"$t"
    put_file "$t" "$@"
}

# remove_file PATH
remove_file() {
    if [ -e "$R$1" ] || [ -L "$R$1" ]; then
        change "remove $1"
        [ "$dry" = 1 ] || rm -f "$R$1"
        return 0
    fi
    return 1
}

# ---------------------------------------------------------------------------- packages

runtime_packages=(libgpiod2 libi2c0 gpiod i2c-tools)

step_packages() {
    section "packages"
    if [ "$R" != "" ]; then
        note "not installed with --root; the image needs: ${runtime_packages[*]}"
        return
    fi
    if [ "$packages" = 0 ]; then
        note "--no-packages: expecting ${runtime_packages[*]}"
        return
    fi
    local missing=() p
    for p in "${runtime_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    change "apt-get install ${missing[*]}"
    [ "$dry" = 1 ] && return
    command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ---------------------------------------------------------------------------- user

rootopt=()
step_user() {
    section "user"
    [ "$R" != "" ] && rootopt=(--root "$root")
    if [ ! -f "$R/etc/group" ] || [ ! -f "$R/etc/passwd" ]; then
        die "$root has no etc/passwd or etc/group: is it a system's root?"
    fi
    local g
    for g in gpio i2c dialout; do
        if ! gid_of "$g" >/dev/null; then
            change "create system group $g"
            [ "$dry" = 1 ] || groupadd "${rootopt[@]}" --system "$g"
        fi
    done
    if ! uid_of unwind >/dev/null; then
        change "create system user unwind (groups gpio, i2c, dialout)"
        if [ "$dry" = 0 ]; then
            useradd "${rootopt[@]}" --system --user-group --no-create-home \
                --home-dir /var/lib/unwind --shell /usr/sbin/nologin \
                --comment "Unwind bedside device" --groups gpio,i2c,dialout unwind
        fi
        add_maintainers
        return
    fi
    for g in gpio i2c dialout; do
        if ! awk -F: -v g="$g" '$1 == g { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == "unwind") ok = 1 } END { exit !ok }' "$R/etc/group"; then
            change "add user unwind to group $g"
            [ "$dry" = 1 ] || usermod "${rootopt[@]}" --append --groups "$g" unwind
        fi
    done
    add_maintainers
}

# The maintainers (the family member, the technician) join group unwind: it may read the state
# and the configuration and connect to the control socket (/run/unwind/control.sock, 0660).
add_maintainers() {
    local who
    for who in "${maintainers[@]}"; do
        if ! uid_of "$who" >/dev/null; then
            note "maintainer $who has no account here; create it, then run install.sh again"
            continue
        fi
        if ! awk -F: -v u="$who" '$1 == "unwind" { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) ok = 1 } END { exit !ok }' "$R/etc/group"; then
            change "add maintainer $who to group unwind"
            [ "$dry" = 1 ] || usermod "${rootopt[@]}" --append --groups unwind "$who"
        fi
    done
}

# ---------------------------------------------------------------------------- boot

begin_marker='# unwind: begin -- written by deploy/install.sh; changes between these markers are replaced'
end_marker='# unwind: end'

boot_block() {
    cat <<'EOF'
[all]
# I2C1 on GPIO 2/3 (header pins 3 and 5) for the OLED, in fast mode (400 kHz).
dtparam=i2c_arm=on
dtparam=i2c_arm_baudrate=400000
# The Pi 3, Zero 2 W and 4 divide the I2C clock from the VPU core clock, which otherwise
# moves with load (250/400 MHz on a Pi 3; 200/500 MHz on a Pi 4) and takes the I2C clock
# with it: pin it so the bus runs at the 400 kHz asked for. The Pi 5's I2C (on the RP1)
# has its own fixed clock and needs nothing.
[pi3]
core_freq=250
core_freq_min=250
[pi02]
core_freq=250
core_freq_min=250
[pi4]
core_freq=500
core_freq_min=500
[all]
EOF
    if [ "$modem_uart" = 1 ]; then
        cat <<'EOF'
# The modem on the header UART (GPIO 14/15, pins 8 and 10); the serial console is off
# (cmdline.txt) so that only unwind talks to it.
enable_uart=1
[pi5]
dtparam=uart0=on
[all]
EOF
        if [ "$disable_bt" = 1 ]; then
            cat <<'EOF'
# The PL011 UART (ttyAMA0) goes to the header instead of Bluetooth: a baud rate that does
# not depend on the core clock. Bluetooth is off.
dtoverlay=disable-bt
EOF
        fi
    fi
    if [ -n "$shutdown_pin" ]; then
        cat <<EOF
# A button from BCM $shutdown_pin to ground halts the system cleanly (wake-up needs GPIO 3,
# which the display's I2C uses, so power-cycle to start again).
dtoverlay=gpio-shutdown,gpio_pin=$shutdown_pin,active_low=1,gpio_pull=up
EOF
    fi
}

# The boot partition: /boot/firmware on bookworm, /boot before (bookworm's /boot/config.txt
# is a stub that points at the other one).
boot_dir() {
    if [ -f "$R/boot/firmware/config.txt" ]; then echo /boot/firmware
    elif [ -f "$R/boot/config.txt" ] && ! grep -q 'DO NOT EDIT THIS FILE' "$R/boot/config.txt"; then echo /boot
    fi
}

step_boot() {
    section "boot configuration"
    put_text /etc/modules-load.d/unwind.conf 0644 <<'EOF' || true
# Written by deploy/install.sh: the I2C character devices (/dev/i2c-N) for the OLED.
i2c-dev
EOF
    local dir
    dir=$(boot_dir)
    if [ -z "$dir" ]; then
        note "no config.txt in /boot/firmware or /boot: not a Raspberry Pi image;"
        note "enable I2C at 400 kHz (and the UART for a modem on it) with this board's own means"
        return
    fi
    local cfg=$dir/config.txt new
    new=$tmpdir/config.txt
    {
        printf '%s\n' "$begin_marker"
        boot_block
        printf '%s\n' "$end_marker"
    } >"$tmpdir/block"
    # Replace the block in place if it is there, else append it.
    awk -v begin="# unwind: begin" -v end="$end_marker" -v blockfile="$tmpdir/block" '
        function emit(   l) { while ((getline l < blockfile) > 0) print l; close(blockfile); done = 1 }
        index($0, begin) == 1 { skipping = 1; emit(); next }
        skipping && $0 == end { skipping = 0; next }
        skipping { next }
        { print }
        END {
            if (!done) { if (NR > 0) print ""; emit() }
        }
    ' "$R$cfg" >"$new"
    if put_file "$new" "$cfg" keep; then
        reboot=1
        backup_once "$cfg"
    fi

    if [ "$modem_uart" = 1 ]; then
        local cmdline=$dir/cmdline.txt
        if [ -f "$R$cmdline" ]; then
            # One line: drop the serial console, keep everything else (console=tty1 too).
            awk '{
                out = ""
                for (i = 1; i <= NF; i++) if ($i !~ /^console=(serial[0-9]|ttyAMA[0-9]+|ttyS[0-9]+)(,|$)/) out = out (out == "" ? "" : " ") $i
                print out
            }' "$R$cmdline" >"$tmpdir/cmdline.txt"
            if put_file "$tmpdir/cmdline.txt" "$cmdline" keep; then
                reboot=1
                backup_once "$cmdline"
            fi
        else
            note "no $cmdline: make sure no serial console runs on the modem's UART"
        fi
        if [ "$disable_bt" = 1 ]; then disable_unit hciuart.service; fi
    fi
}

# The first edit of a boot file keeps the file as it was before (NAME.unwind-orig), once.
backup_once() {
    local saved
    saved=$tmpdir/orig$(echo "$1" | tr / _)
    [ "$dry" = 1 ] && return
    [ -e "$R$1.unwind-orig" ] && return
    [ -f "$saved" ] || return 0
    change "keep the original as $1.unwind-orig"
    cp "$saved" "$R$1.unwind-orig"
}

# Saves the boot files before any edit, for backup_once.
snapshot_boot_files() {
    local dir f
    dir=$(boot_dir)
    [ -n "$dir" ] || return 0
    for f in "$dir/config.txt" "$dir/cmdline.txt"; do
        [ -f "$R$f" ] && cp -p "$R$f" "$tmpdir/orig$(echo "$f" | tr / _)"
    done
    return 0
}

# ---------------------------------------------------------------------------- binary

step_build() {
    [ "$build" = 1 ] || return 0
    section "build"
    if [ "$dry" = 1 ]; then
        change "build the release from $repo (deploy/build-release.sh)"
        return
    fi
    "$here/build-release.sh" --out "$tmpdir/release" >&2
    from=$tmpdir/release
}

elf_machine() {
    # e_machine, two bytes at offset 18 of an ELF file (little endian): 183 aarch64, 62 x86_64.
    [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "177ELF" ] || { echo none; return; }
    od -An -tu2 -j18 -N2 "$1" | tr -d ' '
}

step_binary() {
    section "binary"
    if [ -z "$from" ]; then
        if [ "$build" = 1 ] && [ "$dry" = 1 ]; then
            change "install the built release into /usr/local/lib/unwind/"
        elif [ -x "$R/usr/local/lib/unwind/unwind" ]; then
            note "no --from or --build: keeping the installed binary"
        else
            note "no --from or --build and no binary installed yet: the service cannot start until one is"
        fi
    else
        if [ ! -f "$from/unwind" ] || [ ! -x "$from/unwind" ]; then die "--from $from: no executable $from/unwind"; fi
        [ -d "$from/unwind_UnwindDevice.resources" ] || die "--from $from: no unwind_UnwindDevice.resources/ beside the executable"
        local want have
        want=$(elf_machine "$from/unwind")
        if [ "$R" = "" ] && [ "$want" != none ]; then
            case "$(uname -m)" in aarch64) have=183 ;; x86_64) have=62 ;; *) have=unknown ;; esac
            [ "$want" = "$have" ] || die "--from $from: the executable is for another architecture than $(uname -m)"
        fi
        local lib=/usr/local/lib/unwind bundle=unwind_UnwindDevice.resources
        make_dir /usr/local/lib
        ensure_dir $lib 0755
        if put_file "$from/unwind" $lib/unwind 0755; then restart=1; fi
        # The resource bundle: same files, same content, nothing else.
        local f rel
        while IFS= read -r -d '' f; do
            rel=${f#"$from/"}
            if [ -d "$f" ]; then ensure_dir "$lib/$rel" 0755
            elif put_file "$f" "$lib/$rel" 0644; then restart=1
            fi
        done < <(find "$from/$bundle" -print0 | sort -z)
        if [ -d "$R$lib/$bundle" ]; then
            while IFS= read -r -d '' f; do
                rel=${f#"$R$lib/"}
                if [ ! -e "$from/$rel" ]; then
                    change "remove $lib/$rel (not in the release)"
                    [ "$dry" = 1 ] || rm -rf "$f"
                fi
            done < <(find "$R$lib/$bundle" -mindepth 1 -depth -print0)
        fi
    fi
    if put_file "$here/unwind-motor-off" /usr/local/lib/unwind/unwind-motor-off 0755; then restart=1; fi
    make_dir /usr/local/bin
    local link=$R/usr/local/bin/unwind
    if [ "$(readlink "$link" 2>/dev/null)" != /usr/local/lib/unwind/unwind ]; then
        change "link /usr/local/bin/unwind -> /usr/local/lib/unwind/unwind"
        [ "$dry" = 1 ] || ln -sfn /usr/local/lib/unwind/unwind "$link"
    fi
    make_dir /usr/local/share
    make_dir /usr/local/share/doc
    ensure_dir /usr/local/share/doc/unwind 0755
    put_file "$here/README.md" /usr/local/share/doc/unwind/README.md 0644 || true
    put_file "$here/unwind.conf" /usr/local/share/doc/unwind/unwind.conf.example 0644 || true
    if [ -f "$repo/hardware/README.md" ]; then
        put_file "$repo/hardware/README.md" /usr/local/share/doc/unwind/hardware.md 0644 || true
    fi
}

# ---------------------------------------------------------------------------- config

step_config() {
    section "configuration"
    # root:unwind, readable by the service (it may hold the SIM PIN); "" in a dry run
    # before the group exists.
    local owner=
    if gid_of unwind >/dev/null; then owner=0:$(gid_of unwind); fi
    ensure_dir /etc/unwind 0750 "$owner"
    if [ -e "$R/etc/unwind/unwind.conf" ]; then
        fix_meta /etc/unwind/unwind.conf 0640 "$owner"
    else
        put_file "$config_src" /etc/unwind/unwind.conf 0640 "$owner" || true
        restart=1
    fi
}

# ---------------------------------------------------------------------------- udev, unit

step_udev() {
    section "udev"
    if put_file "$here/udev/99-unwind.rules" /etc/udev/rules.d/99-unwind.rules 0644; then udev_changed=1; fi
    if [ "$modem_uart" = 1 ]; then
        if put_file "$here/udev/99-unwind-modem-uart.rules" /etc/udev/rules.d/99-unwind-modem-uart.rules 0644; then udev_changed=1; fi
    else
        if remove_file /etc/udev/rules.d/99-unwind-modem-uart.rules; then udev_changed=1; fi
    fi
}
udev_changed=0

unit_changed=0
step_unit() {
    section "service"
    make_dir /usr/local/lib
    make_dir /usr/local/lib/systemd
    make_dir /usr/local/lib/systemd/system
    if put_file "$here/unwind.service" /usr/local/lib/systemd/system/unwind.service 0644; then unit_changed=1; restart=1; fi
    local dropin=/etc/systemd/system/unwind.service.d/50-devices.conf
    if [ ${#devices[@]} -gt 0 ]; then
        {
            echo "# Written by deploy/install.sh --device: devices beyond the unit's own."
            echo "[Service]"
            local d
            for d in "${devices[@]}"; do echo "DeviceAllow=$d rw"; done
        } >"$tmpdir/devices.conf"
        if put_file "$tmpdir/devices.conf" $dropin 0644; then unit_changed=1; restart=1; fi
    elif remove_file $dropin; then
        unit_changed=1; restart=1
    fi
    if [ "$unit_changed" = 1 ] && [ "$R" = "" ] && [ "$dry" = 0 ] && systemd_running; then
        systemctl daemon-reload
    fi
    if ! is_enabled unwind.service; then
        change "enable unwind.service"
        if [ "$dry" = 0 ]; then
            if ! command -v systemctl >/dev/null; then
                # No systemd here (a minimal chroot): what `systemctl enable` would create.
                note "systemctl not found: linking the unit into multi-user.target.wants by hand"
                mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
                ln -sfn /usr/local/lib/systemd/system/unwind.service \
                    "$R/etc/systemd/system/multi-user.target.wants/unwind.service"
            elif [ "$R" = "" ]; then systemctl enable --quiet unwind.service
            else systemctl --root="$root" enable --quiet unwind.service
            fi
        fi
    fi
}

systemd_running() { [ -d /run/systemd/system ]; }

is_enabled() {
    # Offline and online alike: the WantedBy= link.
    [ -L "$R/etc/systemd/system/multi-user.target.wants/$1" ]
}

disable_unit() {
    local unit=$1 f
    for f in "$R/etc/systemd/system/"*.wants/"$unit"; do
        [ -L "$f" ] || continue
        change "disable $unit"
        if [ "$dry" = 0 ]; then
            if ! command -v systemctl >/dev/null; then rm -f "$f"
            elif [ "$R" = "" ]; then systemctl disable --quiet "$unit"
            else systemctl --root="$root" disable --quiet "$unit"
            fi
        fi
        return
    done
}

# ---------------------------------------------------------------------------- run

[ "$dry" = 1 ] && echo "install: dry run into $root -- nothing is written"
snapshot_boot_files
step_build
step_packages
step_user
step_boot
step_binary
step_config
step_udev
step_unit

if [ "$R" = "" ] && [ "$dry" = 0 ] && systemd_running; then
    if [ "$udev_changed" = 1 ]; then
        udevadm control --reload
        udevadm trigger --action=change --subsystem-match=tty --subsystem-match=gpio --subsystem-match=i2c-dev
    fi
    if [ "$reboot" = 1 ]; then
        echo "service: not started -- reboot first (boot configuration changed)"
    elif [ "$start" = 1 ]; then
        if ! systemctl is-active --quiet unwind.service; then
            echo "service: starting unwind.service"
            systemctl start unwind.service || echo "service: did not start: journalctl -u unwind -b" >&2
        elif [ "$restart" = 1 ]; then
            echo "service: restarting unwind.service"
            systemctl restart unwind.service
        fi
    fi
fi

if [ "$changes" = 0 ]; then
    echo "install: nothing to change"
elif [ "$dry" = 1 ]; then
    echo "install: $changes change(s) would be made"
else
    echo "install: $changes change(s) made"
fi
if [ "$reboot" = 1 ]; then
    if [ "$dry" = 1 ]; then echo "install: the boot configuration would change: a reboot would be needed"
    else echo "install: the boot configuration changed: reboot (sudo reboot) to apply it"
    fi
fi
