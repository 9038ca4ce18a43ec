#!/usr/bin/env bash
# test.sh -- checks everything under deploy/ and hardware/ without touching this machine's
# system: every test writes below a throwaway directory.
#
#   deploy/test.sh            # installs what it needs (shellcheck, systemd, udev, ansible,
#                             # ansible-lint, xmllint, strace) through apt-get when missing
#   UNWIND_BINARY=path/to/unwind deploy/test.sh   # also test the configuration parser, W^X
#                             # and the system-call filter against this binary (default: the
#                             # first of .build-deploy, .build-release and .build release builds)
#   UNWIND_TEST_RIG=1 deploy/test.sh   # also run unwind-motor-off on a real kernel's gpio-sim
#                             # chip in the qemu kernel rig (Tests/KernelRig/prepare.sh first)
#   UNWIND_TEST_CHROOT=1 deploy/test.sh   # also run install.sh inside a debootstrap bookworm
#                             # chroot, as on a device (network to Debian; cached after once)
#
# Ends with "N passed, N failed, N skipped"; exits 1 when anything failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
started=$(date +%s)

passed=0
failed=0
skipped=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
bad() {
    failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then sed 's/^/      | /' "$2" | tail -n 40; fi
}
skip() { skipped=$((skipped + 1)); printf 'skip  %s (%s)\n' "$1" "$2"; }
# check NAME COMMAND...: runs COMMAND with its output in a log shown on failure.
check() {
    local name=$1 log
    shift
    log=$(mktemp "$work/log.XXXXXX")
    if "$@" >"$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-deploy-test.XXXXXX")
trap 'umount "$work/chroot/proc" 2>/dev/null || true; rm -rf --one-file-system "$work"' EXIT

# ---------------------------------------------------------------------------- tools

need=()
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v udevadm >/dev/null || need+=(udev)
command -v ansible-playbook >/dev/null || need+=(ansible-core)
command -v ansible-lint >/dev/null || need+=(ansible-lint)
command -v xmllint >/dev/null || need+=(libxml2-utils)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
    echo "test: installing ${need[*]}"
    t0=$(date +%s)
    if command -v apt-get >/dev/null; then
        "${sudo[@]}" apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
            echo "test: some tools could not be installed; their tests are skipped"
    fi
    echo "test: tools installed in $(($(date +%s) - t0)) s"
fi

# ---------------------------------------------------------------------------- shellcheck

scripts=()
while IFS= read -r -d '' f; do
    if head -n 1 "$f" | grep -Eq '^#!.*\b(ba)?sh\b'; then scripts+=("$f"); fi
done < <(find "$here" "$repo/hardware" -type f ! -path '*/dist/*' -print0 2>/dev/null | sort -z)
if command -v shellcheck >/dev/null; then
    for f in "${scripts[@]}"; do check "shellcheck ${f#"$repo"/}" shellcheck -x "$f"; done
else
    skip "shellcheck" "shellcheck not installed"
fi

# ---------------------------------------------------------------------------- ASCII, SVG

ascii_clean() {
    local bad_files
    bad_files=$(find "$here" "$repo/hardware" -type f ! -path '*/dist/*' ! -name '*.png' \
        -exec grep -lP '[^\x00-\x7F]' {} + 2>/dev/null || true)
    [ -z "$bad_files" ] || { echo "non-ASCII characters in:"; echo "$bad_files"; return 1; }
}
check "deploy/ and hardware/ are ASCII" ascii_clean

svgs=()
while IFS= read -r -d '' f; do svgs+=("$f"); done < <(find "$repo/hardware" -name '*.svg' -print0 2>/dev/null | sort -z)
if [ ${#svgs[@]} -eq 0 ]; then
    skip "SVG well-formed" "no SVG files"
elif command -v xmllint >/dev/null; then
    for f in "${svgs[@]}"; do check "well-formed ${f#"$repo"/}" xmllint --noout "$f"; done
else
    skip "SVG well-formed" "xmllint not installed"
fi

# ---------------------------------------------------------------------------- a throwaway root

# A Raspberry Pi OS-like root: the files install.sh reads and edits, nothing else.
make_root() {
    local r=$1
    mkdir -p "$r/etc" "$r/boot/firmware" "$r/usr/lib/systemd" "$r/var/lib"
    printf 'root:x:0:0:root:/root:/bin/bash\npi:x:1000:1000:,,,:/home/pi:/bin/bash\n' >"$r/etc/passwd"
    printf 'root:x:0:\ndialout:x:20:pi\npi:x:1000:\n' >"$r/etc/group"
    printf 'root:*:19000:0:99999:7:::\npi:*:19000:0:99999:7:::\n' >"$r/etc/shadow"
    printf 'root:*::\ndialout:*::pi\npi:!::\n' >"$r/etc/gshadow"
    chmod 0640 "$r/etc/shadow" "$r/etc/gshadow"
    cp /etc/login.defs "$r/etc/login.defs" 2>/dev/null || true
    cat >"$r/boot/firmware/config.txt" <<'EOF'
# For more options and information see
# http://rptl.io/configtxt
#dtparam=i2c_arm=on
#dtparam=spi=on
dtparam=audio=on
camera_auto_detect=1
display_auto_detect=1
auto_initramfs=1
dtoverlay=vc4-kms-v3d
max_framebuffers=2
disable_fw_kms_setup=1
arm_64bit=1
disable_overscan=1
arm_boost=1

[cm4]
otg_mode=1

[all]
EOF
    printf 'console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait quiet splash plymouth.ignore-serial-consoles\n' \
        >"$r/boot/firmware/cmdline.txt"
    # The stock units, so that systemctl --root and systemd-analyze --root find the targets.
    cp -a /usr/lib/systemd/system "$r/usr/lib/systemd/"
}

# A release directory as build-release.sh makes it, with a stand-in executable.
make_fake_release() {
    local d=$1
    mkdir -p "$d/unwind_UnwindDevice.resources/Content/helpFiles"
    printf '#!/bin/sh\necho "unwind (stand-in)"\n' >"$d/unwind"
    chmod 0755 "$d/unwind"
    printf 'Breathe in.\n' >"$d/unwind_UnwindDevice.resources/Content/helpFiles/squareBreathing.txt"
}

# A fingerprint of a tree: every path, type, mode, owner, size, link target and content.
tree_sum() {
    (cd "$1" && find . -printf '%p %y %m %u:%g %s %l\n' | LC_ALL=C sort &&
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------------------- installer

root_ok=1
if [ "$(id -u)" -ne 0 ]; then root_ok=0; fi

installer_tests() {
    local r=$work/root rel=$work/release out sum1 sum2
    make_root "$r"
    make_fake_release "$rel"
    local args=(--root "$r" --from "$rel" --modem-on-uart --disable-bt --shutdown-button 21)

    sum1=$(tree_sum "$r")
    out=$work/install-dry.out
    local t0 t1
    t0=$(date +%s%N)
    "$here/install.sh" "${args[@]}" --dry-run >"$out" 2>&1 || { bad "install --dry-run runs" "$out"; return; }
    t1=$(date +%s%N)
    dry_ms=$(((t1 - t0) / 1000000))
    sum2=$(tree_sum "$r")
    if [ "$sum1" = "$sum2" ] && grep -q 'would be made' "$out"; then ok "install --dry-run reports and writes nothing (${dry_ms} ms)"
    else bad "install --dry-run reports and writes nothing" "$out"; fi

    out=$work/install-1.out
    t0=$(date +%s%N)
    "$here/install.sh" "${args[@]}" >"$out" 2>&1 || { bad "install into a throwaway root" "$out"; return; }
    t1=$(date +%s%N)
    install_ms=$(((t1 - t0) / 1000000))
    if grep -q 'change(s) made' "$out"; then ok "install into a throwaway root (${install_ms} ms)"
    else bad "install into a throwaway root" "$out"; fi

    sum1=$(tree_sum "$r")
    out=$work/install-2.out
    "$here/install.sh" "${args[@]}" >"$out" 2>&1 || true
    sum2=$(tree_sum "$r")
    if [ "$sum1" = "$sum2" ] && grep -qx 'install: nothing to change' "$out"; then ok "second install changes nothing (same tree checksum)"
    else bad "second install changes nothing (same tree checksum)" "$out"; fi

    out=$work/install-3.out
    "$here/install.sh" "${args[@]}" --dry-run >"$out" 2>&1 || true
    if grep -qx 'install: nothing to change' "$out"; then ok "dry run after install: nothing to change"
    else bad "dry run after install: nothing to change" "$out"; fi

    # What the first run must have left: each check is a line of shell, the failed ones shown.
    local cfg=$r/boot/firmware/config.txt f=$work/layout.out ugid
    # shellcheck disable=SC2034 # used by the checks below, through eval
    ugid=$(awk -F: '$1 == "unwind" { print $3 }' "$r/etc/group")
    : >"$f"
    local c
    while IFS= read -r c; do
        [ -n "$c" ] || continue
        eval "$c" >/dev/null 2>&1 || echo "failed: $c" >>"$f"
    done <<'EOF_CHECKS'
[ "$(grep -c '^# unwind: begin' "$cfg")" = 1 ] && [ "$(grep -c '^# unwind: end' "$cfg")" = 1 ]
grep -qx 'dtparam=i2c_arm=on' "$cfg" && grep -qx 'dtparam=i2c_arm_baudrate=400000' "$cfg"
grep -qx 'core_freq_min=250' "$cfg" && grep -qx 'core_freq_min=500' "$cfg"
grep -qx 'enable_uart=1' "$cfg" && grep -qx 'dtoverlay=disable-bt' "$cfg"
grep -qx 'dtoverlay=gpio-shutdown,gpio_pin=21,active_low=1,gpio_pull=up' "$cfg"
grep -qx 'otg_mode=1' "$cfg"
[ "$(tail -n 1 "$cfg")" = '# unwind: end' ]
[ -f "$cfg.unwind-orig" ] && ! grep -q unwind "$cfg.unwind-orig"
! grep -q 'console=serial0' "$r/boot/firmware/cmdline.txt"
grep -q '^console=tty1 root=PARTUUID=4e639091-02 ' "$r/boot/firmware/cmdline.txt"
[ "$(wc -l <"$r/boot/firmware/cmdline.txt")" = 1 ]
grep -q '^unwind:x:[0-9]*:[0-9]*:.*:/var/lib/unwind:/usr/sbin/nologin$' "$r/etc/passwd"
grep -Eq '^gpio:x:[0-9]+:unwind$' "$r/etc/group" && grep -Eq '^i2c:x:[0-9]+:unwind$' "$r/etc/group"
grep -q '^dialout:x:20:pi,unwind$' "$r/etc/group"
[ -x "$r/usr/local/lib/unwind/unwind" ] && [ -x "$r/usr/local/lib/unwind/unwind-motor-off" ]
[ -f "$r/usr/local/lib/unwind/unwind_UnwindDevice.resources/Content/helpFiles/squareBreathing.txt" ]
[ "$(readlink "$r/usr/local/bin/unwind")" = /usr/local/lib/unwind/unwind ]
cmp -s "$here/unwind.service" "$r/usr/local/lib/systemd/system/unwind.service"
[ -L "$r/etc/systemd/system/multi-user.target.wants/unwind.service" ]
[ -L "$r/etc/systemd/system/multi-user.target.wants/hciuart.service" ] || true
cmp -s "$here/unwind.conf" "$r/etc/unwind/unwind.conf"
[ "$(stat -c '%a %u:%g' "$r/etc/unwind/unwind.conf")" = "640 0:$ugid" ]
[ "$(stat -c '%a %u:%g' "$r/etc/unwind")" = "750 0:$ugid" ]
[ -f "$r/etc/udev/rules.d/99-unwind.rules" ] && [ -f "$r/etc/udev/rules.d/99-unwind-modem-uart.rules" ]
grep -qx 'i2c-dev' "$r/etc/modules-load.d/unwind.conf"
[ -f "$r/usr/local/share/doc/unwind/unwind.conf.example" ]
EOF_CHECKS
    if [ -s "$f" ]; then bad "install leaves the expected layout, boot files and user" "$f"
    else ok "install leaves the expected layout, boot files and user"; fi

    # A changed option converges: the block is replaced in place, the UART rules go.
    out=$work/install-4.out
    "$here/install.sh" --root "$r" --from "$rel" --device char-gpiochip >"$out" 2>&1 || true
    if [ "$(grep -c '^# unwind: begin' "$cfg")" = 1 ] && ! grep -q 'enable_uart=1' "$cfg" &&
        ! [ -e "$r/etc/udev/rules.d/99-unwind-modem-uart.rules" ] &&
        grep -qx 'DeviceAllow=char-gpiochip rw' "$r/etc/systemd/system/unwind.service.d/50-devices.conf"; then
        ok "install with other options replaces its block and removes the UART rules"
    else
        bad "install with other options replaces its block and removes the UART rules" "$out"
    fi
    out=$work/install-5.out
    "$here/install.sh" --root "$r" --from "$rel" --device char-gpiochip >"$out" 2>&1 || true
    if grep -qx 'install: nothing to change' "$out"; then ok "and is idempotent again"; else bad "and is idempotent again" "$out"; fi

    # An edited config file is the administrator's: never overwritten.
    echo "# edited" >>"$r/etc/unwind/unwind.conf"
    "$here/install.sh" --root "$r" --from "$rel" --device char-gpiochip >"$work/install-6.out" 2>&1 || true
    if tail -n 1 "$r/etc/unwind/unwind.conf" | grep -qx '# edited'; then ok "install keeps an edited /etc/unwind/unwind.conf"
    else bad "install keeps an edited /etc/unwind/unwind.conf" "$work/install-6.out"; fi

    # Bad options are refused with status 2 before anything happens.
    local rc=0
    "$here/install.sh" --root "$r" --shutdown-button 3 --dry-run >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 2 ]; then ok "install refuses --shutdown-button 3 (the I2C clock) with status 2"
    else bad "install refuses --shutdown-button 3 (the I2C clock) with status 2 (got $rc)"; fi

    installed_root=$r
}

installed_root=
dry_ms=
install_ms=
if [ "$root_ok" = 1 ]; then
    installer_tests
else
    skip "installer into a throwaway root" "needs root for useradd --root and chown"
fi

# ---------------------------------------------------------------------------- systemd unit

unit_tests() {
    local r=$1 out=$work/verify.out
    if systemd-analyze verify --man=no --root="$r" unwind.service >"$out" 2>&1 && ! [ -s "$out" ]; then
        ok "systemd-analyze verify --root=<throwaway root> unwind.service: no warnings"
    else
        bad "systemd-analyze verify unwind.service" "$out"
    fi
    out=$work/security.out
    systemd-analyze security --offline=yes --root="$r" unwind.service >"$out" 2>&1 || true
    local level
    level=$(sed -n 's/.*Overall exposure level for unwind.service: \([0-9.]*\).*/\1/p' "$out")
    if [ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
        ok "systemd-analyze security: exposure $level (at most 2.0)"
    else
        bad "systemd-analyze security: exposure ${level:-?} (at most 2.0)" "$out"
    fi
}

if command -v systemd-analyze >/dev/null && [ -n "$installed_root" ]; then
    unit_tests "$installed_root"
elif command -v systemd-analyze >/dev/null; then
    # Without the installer run: a root with just the unit and stand-in executables.
    r=$work/unit-root
    mkdir -p "$r/usr/local/lib/unwind" "$r/usr/local/lib/systemd/system" "$r/usr/lib/systemd"
    cp -a /usr/lib/systemd/system "$r/usr/lib/systemd/"
    printf '#!/bin/sh\n' >"$r/usr/local/lib/unwind/unwind"
    cp "$here/unwind-motor-off" "$r/usr/local/lib/unwind/"
    chmod 0755 "$r/usr/local/lib/unwind/"*
    cp "$here/unwind.service" "$r/usr/local/lib/systemd/system/"
    unit_tests "$r"
else
    skip "systemd-analyze verify" "systemd-analyze not installed"
fi

# ---------------------------------------------------------------------------- udev rules

udev_test() {
    # udevadm test parses every rules file; run it in a private mount namespace with our rules
    # in place of /etc/udev/rules.d and tmpfs over its databases, so nothing leaks out.
    local out=$work/udev.out dev
    dev=
    for d in /sys/class/tty/ttyS0 /sys/class/tty/tty0 /sys/class/tty/*; do
        if [ -e "$d" ]; then dev=$d; break; fi
    done
    [ -n "$dev" ] || { echo "no tty in /sys/class/tty"; return 1; }
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    unshare -m sh -c '
        mount -t tmpfs none /etc/udev/rules.d && cp "$1"/*.rules /etc/udev/rules.d/ &&
        mkdir -p /run/udev && mount -t tmpfs none /run/udev &&
        { [ ! -d /dev/char ] || mount -t tmpfs none /dev/char; } &&
        udevadm test "$2"' sh "$here/udev" "$dev" >"$out" 2>&1 || true
    grep -q 'Reading rules file: /etc/udev/rules.d/99-unwind.rules' "$out" || { cat "$out"; return 1; }
    # "Unknown group" only means this machine has no gpio group; anything else is a mistake.
    if grep -E '^/etc/udev/rules.d/99-unwind' "$out" | grep -v 'Unknown group' | grep .; then return 1; fi
    return 0
}
if [ "$root_ok" = 1 ] && command -v udevadm >/dev/null && command -v unshare >/dev/null; then
    check "udev rules parse (udevadm test in a private mount namespace)" udev_test
else
    skip "udev rules parse" "needs root, udevadm and unshare"
fi

# ---------------------------------------------------------------------------- motor-off helper

# Stand-ins for gpioget/gpioset/gpiofind that record their arguments.
motor_off_test() {
    local bin=$work/fakebin log=$work/gpio.log conf=$work/motor.conf rc
    mkdir -p "$bin"
    for t in gpioget gpioset gpiofind; do
        # shellcheck disable=SC2016 # the stand-in's own $* and $1
        printf '#!/bin/sh\necho "%s $*" >>"%s"\n[ "$1" = --version ] && printf "%s (libgpiod) v1.6.3\\nLicense: LGPLv2.1\\n"\nexit 0\n' "$t" "$log" "$t" >"$bin/$t"
        chmod 0755 "$bin/$t"
    done
    # shellcheck disable=SC2016
    printf '#!/bin/sh\necho "gpiofind $*" >>"%s"\necho "gpiochip0 23"\n' "$log" >"$bin/gpiofind"
    run() { : >"$log"; PATH="$bin:$PATH" "$here/unwind-motor-off" "$@" >/dev/null 2>&1; }
    # want CASE LINE...: the log has every LINE.
    want() {
        local case=$1 l
        shift
        for l in "$@"; do
            grep -qx -- "$l" "$log" || { echo "$case: no '$l' in:"; cat "$log"; return 1; }
        done
    }
    # The shipped configuration: gpiochip0:18.
    run "$here/unwind.conf" || return 1
    want "shipped conf" 'gpioget --bias=pull-down gpiochip0 18' || return 1
    # A line name, looked up; comments and quotes stripped; other sections ignored.
    printf 'display:\n  bus: 1\ngpio:   # lines\n  # motor: gpiochip9:9\n  page: gpiochip0:5\n  motor: "GPIO23"  # moved\nbuttons:\n  motor: x\n' >"$conf"
    run "$conf" || return 1
    want "line name" 'gpiofind GPIO23' 'gpioget --bias=pull-down gpiochip0 23' || return 1
    # No gpio.motor key: the daemon's default.
    printf 'display:\n  bus: 1\n' >"$conf"
    run "$conf" || return 1
    want "no key" 'gpioget --bias=pull-down gpiochip0 18' || return 1
    # No file: the default too.
    run "$work/no-such.conf" || return 1
    want "no file" 'gpioget --bias=pull-down gpiochip0 18' || return 1
    # The environment wins.
    UNWIND_MOTOR_LINE=/dev/gpiochip4:17 run "$here/unwind.conf" || return 1
    want "environment" 'gpioget --bias=pull-down /dev/gpiochip4 17' || return 1
    # Flow style cannot be read: nothing is touched, status 1.
    printf 'gpio: {motor: "gpiochip0:4"}\n' >"$conf"
    rc=0
    run "$conf" || rc=$?
    if [ "$rc" != 1 ] || grep -q '^gpioget\|^gpioset' "$log"; then echo "flow style: status $rc"; cat "$log"; return 1; fi
    return 0
}
check "unwind-motor-off finds the motor line (config, name, default, env; refuses flow style)" motor_off_test

# The same helper against a real kernel's gpio-sim chip, in the project's qemu kernel rig
# (Tests/KernelRig; about 15 s, so only with UNWIND_TEST_RIG=1 after Tests/KernelRig/prepare.sh).
if [ "${UNWIND_TEST_RIG:-0}" = 1 ] && [ -x "$repo/Tests/KernelRig/run.sh" ]; then
    rc=0
    (cd "$repo" && Tests/KernelRig/run.sh deploy/tests/motor-off-rig.sh) >"$work/rig.out" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then ok "unwind-motor-off on a real gpio-sim chip (kernel rig): stuck-high line left low"
    elif [ "$rc" = 125 ]; then skip "unwind-motor-off in the kernel rig" "the rig did not boot; run Tests/KernelRig/prepare.sh"
    else bad "unwind-motor-off on a real gpio-sim chip (kernel rig)" "$work/rig.out"; fi
else
    skip "unwind-motor-off in the kernel rig" "UNWIND_TEST_RIG=1 runs it"
fi

# ---------------------------------------------------------------------------- Ansible

ansible_tests() {
    local dir=$here/ansible out
    out=$work/ansible-syntax.out
    if (cd "$dir" && ansible-playbook --syntax-check -i localhost, site.yml) >"$out" 2>&1; then ok "ansible-playbook --syntax-check site.yml"
    else bad "ansible-playbook --syntax-check site.yml" "$out"; fi

    if command -v ansible-lint >/dev/null; then
        out=$work/ansible-lint.out
        if (cd "$dir" && ansible-lint --offline -q site.yml) >"$out" 2>&1; then ok "ansible-lint site.yml"
        else bad "ansible-lint site.yml" "$out"; fi
    else
        skip "ansible-lint" "not installed"
    fi

    [ "$root_ok" = 1 ] || { skip "ansible-playbook against localhost" "needs root"; return; }
    # Against localhost over the local connection, into a throwaway root, as root (no sudo):
    # check mode first (a device never staged: only the staging is reported), then a real run,
    # then the same run again, which must change nothing, then check mode again.
    local r=$work/ansible-root rel=$work/ansible-release/unwind-test-x86_64 vars=$work/ansible-vars.yml
    make_root "$r"
    make_fake_release "$rel"
    cat >"$vars" <<EOF
unwind_root: $r
unwind_release_dir: $rel
unwind_start: false
unwind_modem_on_uart: true
unwind_alerts:
  - name: Test Contact
    number: "+16045550100"
    message: This is a test alert.
unwind_config:
  display:
    rotate_180: true
EOF
    local play=(ansible-playbook -i "localhost," -c local -e unwind_hosts=localhost -e ansible_become=false -e "@$vars" site.yml)
    export ANSIBLE_NOCOLOR=1 ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3

    local t0 t1
    out=$work/ansible-check1.out
    t0=$(date +%s)
    if (cd "$dir" && "${play[@]}" --check) >"$out" 2>&1; then
        ok "ansible-playbook --check against localhost (fresh device)"
    else
        bad "ansible-playbook --check against localhost (fresh device)" "$out"
    fi
    out=$work/ansible-run1.out
    local why=
    if ! (cd "$dir" && "${play[@]}") >"$out" 2>&1; then why="the play failed"
    elif [ ! -x "$r/usr/local/lib/unwind/unwind" ]; then why="no /usr/local/lib/unwind/unwind"
    elif [ "$(cat "$r/var/lib/unwind/alert01.txt")" != "$(printf 'Test Contact\n+16045550100\nThis is a test alert.')" ]; then why="alert01.txt: $(cat -A "$r/var/lib/unwind/alert01.txt")"
    elif [ -s "$r/var/lib/unwind/alert02.txt" ] || [ ! -f "$r/var/lib/unwind/alert05.txt" ]; then why="alert02.txt not empty or alert05.txt missing"
    elif ! grep -qx '  rotate_180: true' "$r/etc/unwind/unwind.conf"; then why="unwind.conf: $(cat "$r/etc/unwind/unwind.conf")"
    elif grep -q '16045550100' "$out"; then why="the output shows a contact's number"
    fi
    if [ -z "$why" ]; then
        ok "ansible-playbook against localhost installs, writes alerts and config, logs no contact"
    else
        echo "$why" >>"$out"
        bad "ansible-playbook against localhost installs, writes alerts and config, logs no contact" "$out"
    fi
    out=$work/ansible-run2.out
    if (cd "$dir" && "${play[@]}") >"$out" 2>&1 && grep -Eq 'localhost +: ok=[0-9]+ +changed=0 ' "$out"; then
        ok "second ansible-playbook run: changed=0"
    else
        bad "second ansible-playbook run: changed=0" "$out"
    fi
    out=$work/ansible-check2.out
    if (cd "$dir" && "${play[@]}" --check) >"$out" 2>&1 && grep -Eq 'localhost +: ok=[0-9]+ +changed=0 ' "$out"; then
        ok "ansible-playbook --check after the run: changed=0 (the installer's dry run agrees)"
    else
        bad "ansible-playbook --check after the run: changed=0" "$out"
    fi
    t1=$(date +%s)
    ansible_s=$((t1 - t0))
    # A contact that breaks the rules stops the play before anything is written, and the
    # message does not show the contact.
    printf 'unwind_alerts:\n  - name: X\n    number: 16045550199\n    message: hi\n' >"$work/bad-alerts.yml"
    out=$work/ansible-bad.out
    if (cd "$dir" && "${play[@]}" -e "@$work/bad-alerts.yml" --check) >"$out" 2>&1; then
        bad "ansible refuses an unquoted number" "$out"
    elif grep -q 'alert 1: needs' "$out" && ! grep -q '16045550199' "$out"; then
        ok "ansible refuses an unquoted number, without showing it"
    else
        bad "ansible refuses an unquoted number, without showing it" "$out"
    fi
}
ansible_s=
if command -v ansible-playbook >/dev/null; then ansible_tests; else skip "Ansible" "ansible-playbook not installed"; fi

# ---------------------------------------------------------------------------- a real chroot

binary=${UNWIND_BINARY:-}
if [ -z "$binary" ]; then
    for b in "$repo/.build-deploy/release/unwind" "$repo/.build-release/release/unwind" "$repo/.build/release/unwind"; do
        if [ -x "$b" ]; then binary=$b; break; fi
    done
fi

# With UNWIND_TEST_CHROOT=1: a minimal Debian bookworm made by debootstrap (cached as a tarball
# in ~/.cache/unwind-deploy-test), install.sh run inside it as on a device (ROOT=/: apt-get
# installs the runtime packages, useradd creates the user), then again: nothing to change.
# With a built binary, it must run there, beside its resources, with only those packages.
chroot_test() {
    local cache=${XDG_CACHE_HOME:-$HOME/.cache}/unwind-deploy-test c=$work/chroot rel out
    mkdir -p "$cache" "$c"
    if [ ! -f "$cache/bookworm-minbase.tar" ]; then
        command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
        debootstrap --variant=minbase bookworm "$c" http://deb.debian.org/debian >"$work/debootstrap.out" 2>&1 ||
            { cat "$work/debootstrap.out"; return 1; }
        tar -C "$c" -cf "$cache/bookworm-minbase.tar" .
    else
        tar -C "$c" -xf "$cache/bookworm-minbase.tar"
    fi
    mkdir -p "$c/boot/firmware" "$c/opt/unwind"
    printf 'dtparam=audio=on\n[all]\n' >"$c/boot/firmware/config.txt"
    printf 'console=serial0,115200 console=tty1 root=PARTUUID=1-02 rootwait\n' >"$c/boot/firmware/cmdline.txt"
    cp -a "$here" "$c/opt/unwind/deploy"
    rel=$c/opt/release
    if [ -n "$binary" ]; then
        mkdir -p "$rel"
        cp "$binary" "$rel/unwind"
        cp -R "$(dirname "$binary")/unwind_UnwindDevice.resources" "$rel/"
    else
        make_fake_release "$rel"
    fi
    cp /etc/resolv.conf "$c/etc/resolv.conf"
    mount -t proc proc "$c/proc"
    local rc=0
    {
        chroot "$c" /opt/unwind/deploy/install.sh --from /opt/release --modem-on-uart &&
            chroot "$c" /opt/unwind/deploy/install.sh --from /opt/release --modem-on-uart | tee "$work/chroot-2.out" &&
            grep -qx 'install: nothing to change' "$work/chroot-2.out" &&
            chroot "$c" id unwind | grep -q 'gpio' &&
            if [ -n "$binary" ]; then
                printf '0 PAGE long\n2 end\n' >"$c/tmp/script" &&
                    chroot "$c" /usr/local/bin/unwind sim --headless /tmp/script --out /tmp/sim --no-frames
            fi
    } || rc=$?
    umount "$c/proc"
    return "$rc"
}

# ---------------------------------------------------------------------------- the binary


# unwind run --config FILE: exit 2 means the file was refused. A valid file goes on to open
# the hardware, which must not happen on a machine that has some: only run it where there is
# no /dev/gpiochip0 (it then stops at "cannot start", status 1).
parse_config() {
    timeout 20 "$binary" run --config "$1"
}

binary_tests() {
    local out=$work/conf-ok.out rc=0
    if [ -e /dev/gpiochip0 ]; then
        skip "the shipped unwind.conf parses" "this machine has /dev/gpiochip0; unwind run would use it"
    else
        parse_config "$here/unwind.conf" >"$out" 2>&1 || rc=$?
        if [ "$rc" != 2 ] && ! grep -q 'unwind.conf:' "$out"; then ok "the shipped unwind.conf parses (every key at its default)"
        else bad "the shipped unwind.conf parses" "$out"; fi
    fi

    out=$work/conf-bad.out
    rc=0
    parse_config "$here/tests/every-key-wrong.conf" >"$out" 2>&1 || rc=$?
    local missing=() k
    while IFS= read -r k; do
        grep -q "every-key-wrong.conf: $k: " "$out" || missing+=("$k")
    done <"$here/tests/every-key-wrong.keys"
    if [ "$rc" = 2 ] && [ ${#missing[@]} -eq 0 ]; then
        ok "every key wrong: exit status 2 and one message per key ($(wc -l <"$here/tests/every-key-wrong.keys") keys)"
    else
        echo "status $rc; keys not named: ${missing[*]}" >>"$out"
        bad "every key wrong: exit status 2 and one message per key" "$out"
    fi

    # The planned block, uncommented: informational until the parser knows its keys.
    local planned=$work/planned.conf
    awk '/^# PLANNED KEYS/ { p = 1 } p && /^# -+$/ { n++; next } p && n >= 1 { sub(/^# ?/, ""); print }' \
        "$here/unwind.conf" >"$planned"
    out=$work/conf-planned.out
    rc=0
    if [ -e /dev/gpiochip0 ]; then rc=skip; else parse_config "$planned" >"$out" 2>&1 || rc=$?; fi
    if [ "$rc" = skip ]; then
        skip "planned keys" "this machine has /dev/gpiochip0"
    elif [ "$rc" = 2 ]; then
        local unknown
        unknown=$(sed -n 's/^.*planned.conf: \([a-z_.]*\): unknown key.*/\1/p' "$out" | tr '\n' ' ')
        skip "planned keys accepted by the parser" "not yet: ${unknown:-see $out}"
    else
        ok "planned keys (modem, counselling, panic, reminders, screen) accepted by the parser"
    fi

    # MemoryDenyWriteExecute: the same W^X rule through prctl(PR_SET_MDWE) (Linux 6.3+).
    if command -v cc >/dev/null; then
        cat >"$work/mdwe.c" <<'EOF'
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (prctl(65 /* PR_SET_MDWE */, 1UL /* REFUSE_EXEC_GAIN */, 0UL, 0UL, 0UL) != 0) { perror("PR_SET_MDWE"); return 77; }
    execv(argv[1], argv + 1);
    perror("execv");
    return 127;
}
EOF
        printf '0 SELECT\n0.5 PAGE long\n12 SELECT\n13 end\n' >"$work/script"
        if cc -o "$work/mdwe" "$work/mdwe.c" 2>"$work/cc.out"; then
            out=$work/mdwe.out
            rc=0
            "$work/mdwe" "$binary" sim --headless "$work/script" --out "$work/mdwe-sim" --no-frames >"$out" 2>&1 || rc=$?
            if [ "$rc" = 77 ]; then skip "unwind under MemoryDenyWriteExecute" "kernel without PR_SET_MDWE"
            elif [ "$rc" = 0 ]; then ok "unwind runs under W^X (PR_SET_MDWE, as MemoryDenyWriteExecute=yes)"
            else bad "unwind runs under W^X (PR_SET_MDWE)" "$out"; fi
        else
            skip "unwind under MemoryDenyWriteExecute" "no C compiler"
        fi
    fi

    # SystemCallFilter: the system calls of a simulated session, all allowed by the unit.
    if command -v strace >/dev/null && command -v systemd-analyze >/dev/null; then
        printf '0 SELECT\n0.5 PAGE long\n12 SELECT\n13 end\n' >"$work/script"
        strace -f -qq -c -o "$work/strace.out" "$binary" sim --headless "$work/script" --out "$work/strace-sim" --no-frames >/dev/null 2>&1 || true
        awk 'NR > 2 && $NF ~ /^[a-z_0-9]+$/ && $NF != "total" { print $NF }' "$work/strace.out" | sort -u >"$work/used"
        expand_groups @system-service >"$work/allowed"
        expand_groups @privileged @resources >"$work/denied"
        local not_allowed
        not_allowed=$( (comm -23 "$work/used" "$work/allowed"; comm -12 "$work/used" "$work/denied") | sort -u | tr '\n' ' ')
        if [ -s "$work/used" ] && [ -z "$not_allowed" ]; then
            ok "system calls of a simulated session ($(wc -l <"$work/used")) pass the unit's SystemCallFilter"
        else
            echo "not allowed: $not_allowed" >"$work/sc.out"
            bad "system calls of a simulated session pass the unit's SystemCallFilter" "$work/sc.out"
        fi
    fi
}

# The system calls of systemd's named groups, nested groups expanded.
expand_groups() {
    local -A seen=()
    _expand() {
        local g=$1 e
        [ -n "${seen[$g]:-}" ] && return 0
        seen[$g]=1
        while read -r e; do
            case "$e" in '' | '#'*) ;; @*) _expand "$e" ;; *) echo "$e" ;; esac
        done < <(systemd-analyze syscall-filter --no-pager "$g" | tail -n +2)
    }
    local g
    for g in "$@"; do _expand "$g"; done | sort -u
}

if [ "${UNWIND_TEST_CHROOT:-0}" = 1 ] && [ "$root_ok" = 1 ]; then
    t0=$(date +%s)
    if chroot_test >"$work/chroot.out" 2>&1; then
        ok "install.sh inside a debootstrap bookworm chroot: packages, user, idempotent$([ -n "$binary" ] && echo ', the binary runs') ($(($(date +%s) - t0)) s)"
    else
        bad "install.sh inside a debootstrap bookworm chroot" "$work/chroot.out"
    fi
else
    skip "install.sh inside a debootstrap chroot" "UNWIND_TEST_CHROOT=1 runs it (root, network to Debian)"
fi

if [ -n "$binary" ]; then
    echo "test: binary $binary"
    binary_tests
else
    skip "configuration parser, W^X and system calls" "no unwind binary (UNWIND_BINARY, or build one: swift build -c release --static-swift-stdlib --scratch-path .build-deploy)"
fi

# ---------------------------------------------------------------------------- summary

echo
echo "times: install --dry-run ${dry_ms:-?} ms, install ${install_ms:-?} ms, ansible runs ${ansible_s:-?} s, total $(($(date +%s) - started)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
