#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # the tests' helpers run through check
# test.sh -- checks everything under deploy/ and hardware/, and every shell script of the
# repository (shellcheck), without touching this machine's system: every test writes below a
# throwaway directory or inside throwaway chroots.
#
#   deploy/test.sh            # installs what it needs (shellcheck, systemd, udev, lintian,
#                             # debootstrap, dpkg-dev, ansible-core, ansible-lint, xmllint,
#                             # strace) through apt-get when missing
#   UNWIND_BINARY=path/to/unwind deploy/test.sh   # the executable to package and test (default:
#                             # the first of the .build-deploy, .build-release and .build release
#                             # builds); a debug build is packaged with its Swift runtime
#   UNWIND_TEST_RIG=1 deploy/test.sh   # also run unwind-motor-off on a real kernel's gpio-sim
#                             # chip in the qemu kernel rig (Tests/KernelRig/prepare.sh first)
#
# The package, Ansible and chroot tests need root and Debian's mirror (debootstrap once, then
# a cached tarball; apt-get for the package's dependencies). deploy/tests/ holds their parts:
# chroot.sh (throwaway bookworm roots), package.sh (build, lintian, install / upgrade /
# remove / purge), ansible.sh (the fleet playbook against two chroot "devices").
#
# Ends with "N passed, N failed, N skipped"; exits 1 when anything failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
started=$(date +%s)
# pass, fail, skip, check, finish, log
# shellcheck source=lib/toolkit.sh
. "$here/lib/toolkit.sh"

# verdict WHY PASSED FAILED OUT: pass PASSED when the checks left WHY empty, else fail FAILED
# with WHY added to the command's output OUT.
verdict() {
    if [ -z "$1" ]; then pass "$2"; else echo "$1" >>"$4"; fail "$3" "$4"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-deploy-test.XXXXXX")
# The chroots below (the package's install test, the playbook's devices) run with this
# environment, and a TMPDIR of the host's is not in them: dpkg-deb and apt there could make no
# temporary file. From here on it is /tmp, which every chroot has.
export TMPDIR=/tmp
# shellcheck source=tests/chroot.sh
. "$here/tests/chroot.sh"
# shellcheck source=tests/package.sh
. "$here/tests/package.sh"
# shellcheck source=tests/ansible.sh
. "$here/tests/ansible.sh"
# Unmount first: rm --one-file-system would not descend into a mount left behind anyway.
# UNWIND_TEST_KEEP=1 keeps the directory (its logs, the chroots) for a look after a failure.
trap 'unmount_all; if [ "${UNWIND_TEST_KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf --one-file-system "$work"; fi' EXIT

root_ok=1
if [ "$(id -u)" -ne 0 ]; then root_ok=0; fi

# ---------------------------------------------------------------------------- tools

need=()
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v udevadm >/dev/null || need+=(udev)
command -v lintian >/dev/null || need+=(lintian)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v dpkg-shlibdeps >/dev/null || need+=(dpkg-dev)
command -v objdump >/dev/null && command -v readelf >/dev/null || need+=(binutils)
command -v ansible-playbook >/dev/null || need+=(ansible-core)
command -v ansible-lint >/dev/null || need+=(ansible-lint)
command -v xmllint >/dev/null || need+=(libxml2-utils)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    t0=$(date +%s)
    # shellcheck source=lib/apt.sh
    . "$here/lib/apt.sh"
    install_missing "${need[@]}" || log "some tools could not be installed; their tests are skipped"
    log "tools installed in $(($(date +%s) - t0)) s"
fi

# ---------------------------------------------------------------------------- shell scripts

# Every script of the repository: deploy/'s and hardware/'s, the test stages' (Tests/), CI's.
scripts=()
while IFS= read -r -d '' f; do
    if head -n 1 "$f" | grep -Eq '^#!.*\b(ba)?sh\b|^# shellcheck shell='; then scripts+=("$f"); fi
done < <(find "$here" "$repo/hardware" "$repo/Tests" "$repo/.ci" -type f ! -path '*/dist/*' -print0 2>/dev/null | sort -z)
if command -v shellcheck >/dev/null; then
    for f in "${scripts[@]}"; do check "shellcheck ${f#"$repo"/}" shellcheck -x "$f"; done
else
    skip "shellcheck" "shellcheck not installed"
fi
check "the scripts' toolkit (deploy/lib/toolkit.sh): messages, verdicts, summary, waits, line_used_by" \
    "$here/tests/toolkit-test.sh"

# ---------------------------------------------------------------------------- ASCII, SVG

# All of it, the copyright file too (an author's umlaut written out there), as CI checks it.
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

binary=${UNWIND_BINARY:-}
if [ -z "$binary" ]; then
    for b in "$repo/.build-deploy/release/unwind" "$repo/.build-release/release/unwind" "$repo/.build/release/unwind"; do
        if [ -x "$b" ]; then binary=$b; break; fi
    done
fi

# ---------------------------------------------------------------------------- systemd unit

# unit_tests ROOT: the unit as installed in ROOT (systemd's own units beside it).
unit_tests() {
    local r=$1 out=$work/verify.out
    if systemd-analyze verify --man=no --root="$r" unwind.service >"$out" 2>&1 && ! [ -s "$out" ]; then
        pass "systemd-analyze verify --root=<throwaway root> unwind.service: no warnings"
    else
        fail "systemd-analyze verify unwind.service" "$out"
    fi
    out=$work/security.out
    systemd-analyze security --offline=yes --root="$r" unwind.service >"$out" 2>&1 || true
    local level
    level=$(sed -n 's/.*Overall exposure level for unwind.service: \([0-9.]*\).*/\1/p' "$out")
    if [ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
        pass "systemd-analyze security: exposure $level (at most 2.0)"
    else
        fail "systemd-analyze security: exposure ${level:-?} (at most 2.0)" "$out"
    fi
}

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
    if [ "$rc" = 0 ]; then pass "unwind-motor-off on a real gpio-sim chip (kernel rig): stuck-high line left low"
    elif [ "$rc" = 125 ]; then skip "unwind-motor-off in the kernel rig" "the rig did not boot; run Tests/KernelRig/prepare.sh"
    else fail "unwind-motor-off on a real gpio-sim chip (kernel rig)" "$work/rig.out"; fi
else
    skip "unwind-motor-off in the kernel rig" "UNWIND_TEST_RIG=1 runs it"
fi

# ---------------------------------------------------------------------------- package

package_s=
if [ "$root_ok" = 1 ] && [ -n "$binary" ] && command -v lintian >/dev/null && command -v dpkg-shlibdeps >/dev/null; then
    log "binary $binary"
    t0=$(date +%s)
    if package_build; then
        package_lintian
        package_chroot
    fi
    package_s=$(($(date +%s) - t0))
else
    skip "the Debian package (build, lintian, install / upgrade / remove / purge)" \
        "needs root, lintian, dpkg-dev and an unwind binary (UNWIND_BINARY)"
    if command -v systemd-analyze >/dev/null; then
        # The unit alone: a root with systemd's units, the unit and stand-in executables.
        r=$work/unit-root
        mkdir -p "$r/usr/lib/unwind" "$r/usr/lib/systemd"
        cp -a /usr/lib/systemd/system "$r/usr/lib/systemd/"
        printf '#!/bin/sh\n' >"$r/usr/lib/unwind/unwind"
        cp "$here/unwind-motor-off" "$r/usr/lib/unwind/"
        chmod 0755 "$r/usr/lib/unwind/"*
        cp "$here/unwind.service" "$r/usr/lib/systemd/system/"
        unit_tests "$r"
    fi
fi

# ---------------------------------------------------------------------------- Ansible

ansible_s=
if command -v ansible-playbook >/dev/null; then ansible_tests; else skip "Ansible" "ansible-playbook not installed"; fi

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
        if [ "$rc" != 2 ] && ! grep -q 'unwind.conf:' "$out"; then pass "the shipped unwind.conf parses (every key at its default)"
        else fail "the shipped unwind.conf parses" "$out"; fi
    fi

    out=$work/conf-bad.out
    rc=0
    parse_config "$here/tests/every-key-wrong.conf" >"$out" 2>&1 || rc=$?
    local missing=() k
    while IFS= read -r k; do
        grep -q "every-key-wrong.conf: $k: " "$out" || missing+=("$k")
    done <"$here/tests/every-key-wrong.keys"
    if [ "$rc" = 2 ] && [ ${#missing[@]} -eq 0 ]; then
        pass "every key wrong: exit status 2 and one message per key ($(wc -l <"$here/tests/every-key-wrong.keys") keys)"
    else
        echo "status $rc; keys not named: ${missing[*]}" >>"$out"
        fail "every key wrong: exit status 2 and one message per key" "$out"
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
        pass "planned keys (modem, counselling, panic, reminders, screen) accepted by the parser"
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
            elif [ "$rc" = 0 ]; then pass "unwind runs under W^X (PR_SET_MDWE, as MemoryDenyWriteExecute=yes)"
            else fail "unwind runs under W^X (PR_SET_MDWE)" "$out"; fi
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
        # Denied by the unit's ~ line, but for the calls its later plain lines allow again.
        sed -n 's/^SystemCallFilter=\([a-z_][a-z_0-9 ]*\)$/\1/p' "$here/unwind.service" | tr ' ' '\n' >"$work/allowed-again"
        expand_groups @privileged @resources | grep -vxF -f "$work/allowed-again" >"$work/denied"
        local not_allowed
        not_allowed=$( (comm -23 "$work/used" "$work/allowed"; comm -12 "$work/used" "$work/denied") | sort -u | tr '\n' ' ')
        if [ -s "$work/used" ] && [ -z "$not_allowed" ]; then
            pass "system calls of a simulated session ($(wc -l <"$work/used")) pass the unit's SystemCallFilter"
        else
            echo "not allowed: $not_allowed" >"$work/sc.out"
            fail "system calls of a simulated session pass the unit's SystemCallFilter" "$work/sc.out"
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

if [ -n "$binary" ]; then
    binary_tests
else
    skip "configuration parser, W^X and system calls" "no unwind binary (UNWIND_BINARY, or build one: swift build -c release --static-swift-stdlib --scratch-path .build-deploy)"
fi

# ---------------------------------------------------------------------------- summary

echo
echo "times: package (build, lintian, chroot) ${package_s:-?} s, ansible runs ${ansible_s:-?} s, total $(($(date +%s) - started)) s"
finish
