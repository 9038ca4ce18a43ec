# shellcheck shell=bash
# shellcheck disable=SC2154,SC2016,SC2034,SC2317,SC2054 # work, here, binary ...: set by deploy/test.sh; the checks are eval'd
# deploy/tests/package.sh -- sourced by deploy/test.sh: the Debian package.
#
#   package_build    build-deb.sh from the binary under test (a release build; or a debug
#                    build, packaged with --swift-runtime and its Swift runtime bound into the
#                    chroot) as version V, and from a copy of deploy/ with a changed unwind.conf
#                    as V+test2; the Depends name the bookworm packages of the libraries; the
#                    Architecture is the packaged executable's ELF machine (readelf), and an
#                    --arch that contradicts it is refused
#   package_lintian  lintian --pedantic -I -E: no tag left that is not overridden
#   package_chroot   in a bookworm chroot: apt-get install ./unwind_V.deb, then files, owners,
#                    modes, user, groups, conffile, statoverrides, enabled unit; the binary runs;
#                    systemd-analyze verify and security; unwind-setup; an edited configuration
#                    through an upgrade (kept, the new one beside it as .dpkg-dist), a
#                    downgrade, remove (configuration and state kept) and purge (all gone)

pkg_v1=
pkg_v2=
pkg_version=
pkg_swift_runtime=

package_build() {
    local rel=$work/pkg-release opts t0 out=$work/build-deb-1.out deps
    make_release "$binary" "$rel"
    # Read whole, then grep: under pipefail, `objdump | grep -q` fails when grep's early exit
    # kills objdump with SIGPIPE.
    local needed linked
    needed=$(objdump -p "$binary")
    linked=$(ldd "$binary" || true)
    if grep -Eq 'NEEDED +libswiftCore' <<<"$needed"; then
        pkg_swift_runtime=$(dirname "$(awk '$1 == "libswiftCore.so" { print $3 }' <<<"$linked")")
    fi
    opts=(--from "$rel" --out "$work/debs" --compress gzip)
    [ -n "$pkg_swift_runtime" ] && opts+=(--swift-runtime "$pkg_swift_runtime")
    t0=$(date +%s)
    pkg_v1=$("$here/build-deb.sh" "${opts[@]}" 2>"$out") || { fail "build-deb.sh" "$out"; return 1; }
    pkg_version=$(dpkg-deb -f "$pkg_v1" Version)
    deps=$(dpkg-deb -f "$pkg_v1" Depends)
    pass "build-deb.sh: $(basename "$pkg_v1") in $(($(date +%s) - t0)) s$([ -n "$pkg_swift_runtime" ] && echo ' (a debug build: its Swift runtime from the toolchain)')"
    local p missing=
    local names
    names=" $(echo "$deps" | sed 's/ ([^)]*)//g; s/,//g') "
    # libstdc++6: what the static Swift runtime links (a debug build's runtime brings its own need).
    for p in adduser gpiod libgpiod2 libi2c0 libqrencode4 libc6 $([ -n "$pkg_swift_runtime" ] || echo libstdc++6); do
        case "$names" in *" $p "*) ;; *) missing="$missing $p" ;; esac
    done
    # postinst's `adduser --comment`: adduser 3.130 added it (3.118, bullseye's, refuses it).
    case ", $deps," in *", adduser (>= 3.130),"*) ;; *) missing="$missing adduser(>=3.130)" ;; esac
    if [ -z "$missing" ] && ! grep -qi swift <<<"$deps"; then
        pass "Depends: $deps"
    else
        echo "Depends: $deps; missing:$missing" >"$out.deps"
        fail "Depends names adduser (>= 3.130) and the runtime libraries' bookworm packages (libgpiod2, libi2c0, libqrencode4)" "$out.deps"
    fi
    # A static release build needs no Swift runtime at all.
    if [ -z "$pkg_swift_runtime" ]; then
        if grep -Eq 'libswift|libFoundation|libdispatch' <<<"$linked"; then
            echo "$linked" >"$out.ldd"; fail "the release binary links no Swift runtime (ldd)" "$out.ldd"
        else
            pass "the release binary links no Swift runtime (ldd: $(ldd "$binary" | awk '$1 ~ /^lib/ { sub(/\.so.*/, "", $1); printf "%s ", $1 }'))"
        fi
    fi

    package_arch_test "${opts[@]}"

    # Version 2: a copy of deploy/ whose shipped configuration changed.
    local v2=$work/v2
    mkdir -p "$v2/hardware"
    cp -a "$here" "$v2/deploy"
    rm -rf "$v2/deploy/dist"
    cp "$repo/hardware/README.md" "$v2/hardware/" 2>/dev/null || true
    echo '# version 2 of the shipped file' >>"$v2/deploy/unwind.conf"
    pkg_v2=$("$v2/deploy/build-deb.sh" "${opts[@]}" --version "$pkg_version+test2" 2>"$work/build-deb-2.out") ||
        { fail "build-deb.sh --version $pkg_version+test2" "$work/build-deb-2.out"; return 1; }
}

# package_arch_test BUILD-OPTIONS...: the control file's Architecture (and the file
# name's) is the packaged executable's ELF machine as readelf names it, and an --arch that
# contradicts the executable is refused.
package_arch_test() {
    local x=$work/pkg-x out=$work/arch.out header machine elf_arch control_arch other rc=0
    rm -rf "$x"
    dpkg-deb -x "$pkg_v1" "$x"
    header=$(readelf -h "$x/usr/lib/unwind/unwind" 2>&1) || true
    machine=$(sed -n 's/^ *Machine: *//p' <<<"$header")
    case "$machine" in
        AArch64) elf_arch=arm64 ;;
        "Advanced Micro Devices X86-64") elf_arch=amd64 ;;
        ARM) elf_arch=armhf ;;
        *) elf_arch="unknown ($machine)" ;;
    esac
    control_arch=$(dpkg-deb -f "$pkg_v1" Architecture)
    if [ "$control_arch" = "$elf_arch" ] && [ "$(basename "$pkg_v1")" = "unwind_${pkg_version}_$control_arch.deb" ]; then
        pass "Architecture: $control_arch, the packaged executable's (readelf: $machine), as the file name says"
    else
        printf 'Architecture %s, file %s, readelf:\n%s\n' "$control_arch" "$(basename "$pkg_v1")" "$header" >"$out"
        fail "the control file's Architecture is the packaged executable's ELF machine" "$out"
    fi
    other=arm64
    [ "$control_arch" = arm64 ] && other=amd64
    "$here/build-deb.sh" "$@" --out "$work/debs-wrong-arch" --arch "$other" >"$out" 2>&1 || rc=$?
    if [ "$rc" != 0 ] && grep -q "is an $control_arch executable" "$out" && [ ! -e "$work/debs-wrong-arch" ]; then
        pass "build-deb.sh --arch $other refuses an $control_arch executable"
    else
        echo "status $rc" >>"$out"
        fail "build-deb.sh --arch $other refuses an $control_arch executable" "$out"
    fi
}

package_lintian() {
    local out=$work/lintian.out suppress=()
    # What only a debug build has: its RUNPATH into the toolchain, and no full RELRO.
    if [ -n "$pkg_swift_runtime" ]; then
        suppress=(--suppress-tags custom-library-search-path,hardening-no-bindnow)
    fi
    lintian --pedantic -I -E "${suppress[@]}" "$pkg_v1" >"$out" 2>&1 || true
    if grep -Eq '^[EWIPX]: ' "$out"; then
        fail "lintian --pedantic -I -E: tags left without an override" "$out"
    elif grep -q 'lintian: ' "$out"; then
        fail "lintian ran" "$out"
    else
        local n
        n=$(grep -c '^unwind: ' "$here/debian/lintian-overrides")
        pass "lintian --pedantic -I -E $(basename "$pkg_v1"): clean ($n override(s), each with its reason$([ ${#suppress[@]} -gt 0 ] && echo "; debug build: ${suppress[1]} not counted"))"
    fi
}

package_chroot() {
    local c=$work/pkg-chroot d1 d2 out t0
    t0=$(date +%s)
    make_chroot "$c" || { fail "a bookworm chroot (debootstrap from $debian_mirror)" "$work/debootstrap.out"; return; }
    [ -n "$pkg_swift_runtime" ] && bind_ro "$pkg_swift_runtime" "$c"
    mkdir -p "$c/root/debs"
    cp "$pkg_v1" "$pkg_v2" "$c/root/debs/"
    d1=/root/debs/$(basename "$pkg_v1")
    d2=/root/debs/$(basename "$pkg_v2")
    in_c() { chroot "$c" "$@"; }
    meta() { chroot "$c" stat -c '%a %U:%G' "$1"; }

    # 1. Install, as `apt install ./unwind_V_ARCH.deb` on a fresh image.
    out=$work/pkg-install.out
    apt_in "$c" install "$d1" >"$out" 2>&1 || { fail "apt-get install ./$(basename "$pkg_v1") in a bookworm chroot" "$out"; return; }
    check_all "apt-get install ./$(basename "$pkg_v1") in a bookworm chroot ($(($(date +%s) - t0)) s): dependencies from the mirror; user, groups, owners, modes, conffile, statoverrides, enabled unit" <<'CHECKS'
[ "$(in_c dpkg-query -W -f='${Status} ${Version}' unwind)" = "install ok installed $pkg_version" ]
for p in libgpiod2 libi2c0 libqrencode4 gpiod tzdata unifont; do in_c dpkg-query -W -f='${Status}\n' "$p" | grep -qx 'install ok installed' || exit 1; done
[ "$(meta /usr/lib/unwind/unwind)" = "755 root:root" ] && [ "$(meta /usr/lib/unwind/unwind-motor-off)" = "755 root:root" ]
[ "$(readlink "$c/usr/bin/unwind")" = ../lib/unwind/unwind ]
[ "$(ls "$c/usr/lib/unwind" | tr '\n' ' ')" = "unwind unwind-motor-off " ]
[ "$(meta /usr/sbin/unwind-setup)" = "755 root:root" ]
[ "$(meta /etc/unwind)" = "750 root:unwind" ] && [ "$(meta /etc/unwind/unwind.conf)" = "640 root:unwind" ]
cmp -s "$here/unwind.conf" "$c/etc/unwind/unwind.conf"
in_c dpkg-query -W -f='${Conffiles}' unwind | grep -q '^ /etc/unwind/unwind.conf [0-9a-f]\{32\}$'
[ "$(in_c dpkg-statoverride --list | sort | tr '\n' ' ')" = 'root unwind 640 /etc/unwind/unwind.conf root unwind 750 /etc/unwind ' ]
[ "$(meta /var/lib/unwind)" = "750 unwind:unwind" ]
in_c getent passwd unwind | awk -F: '$3 < 1000 && $5 ~ /^Unwind bedside device(,|$)/ && $6 == "/var/lib/unwind" && $7 == "/usr/sbin/nologin" { ok = 1 } END { exit !ok }'
! grep -qi 'gecos.*deprecated' "$out"
[ "$(in_c id -nG unwind | tr ' ' '\n' | sort | tr '\n' ' ')" = "dialout gpio i2c unwind " ]
cmp -s "$here/unwind.service" "$c/usr/lib/systemd/system/unwind.service"
[ -L "$c/etc/systemd/system/multi-user.target.wants/unwind.service" ] && in_c test -f /etc/systemd/system/multi-user.target.wants/unwind.service
[ "$(meta /usr/lib/udev/rules.d/99-unwind.rules)" = "644 root:root" ] && [ -f "$c/usr/share/unwind/udev/99-unwind-modem-uart.rules" ]
[ ! -e "$c/etc/udev/rules.d/99-unwind-modem-uart.rules" ]
grep -qx i2c-dev "$c/usr/lib/modules-load.d/unwind.conf"
[ -f "$c/usr/share/man/man1/unwind.1.gz" ] && [ -f "$c/usr/share/man/man8/unwind-setup.8.gz" ]
head -n 1 "$c/usr/share/doc/unwind/copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$'
cmp -s "$here/unwind.conf" "$c/usr/share/doc/unwind/examples/unwind.conf"
CHECKS

    # 2. The installed executable, through the link on PATH, with its help texts compiled in;
    # the service user reads the configuration through its group.
    out=$work/pkg-run.out
    printf '0 PAGE long\n2 end\n' >"$c/tmp/script"
    if in_c unwind sim --headless /tmp/script --out /tmp/sim --no-frames >"$out" 2>&1 &&
        chroot --userspec=unwind:unwind "$c" unwind config check --config /etc/unwind/unwind.conf >>"$out" 2>&1; then
        pass "the installed unwind runs in the chroot (unwind sim through /usr/bin/unwind; unwind config check as the service user)"
    else
        fail "the installed unwind runs in the chroot" "$out"
    fi

    # 3. The unit as installed, against systemd's own units (copied in: systemd is not).
    cp -rn /usr/lib/systemd/system/. "$c/usr/lib/systemd/system/"
    unit_tests "$c"

    # 4. unwind-setup as on a Raspberry Pi OS image (its boot files), with a login account.
    setup_tests "$c"

    # 5. An edited configuration and some state, then the upgrade to V+test2 whose shipped
    # configuration changed too: dpkg keeps the edit and puts the new file beside it.
    echo '# edited on the device' >>"$c/etc/unwind/unwind.conf"
    printf 'Sam\n+16045550100\nPlease call me.\n' >"$c/var/lib/unwind/alert01.txt"
    in_c chown unwind:unwind /var/lib/unwind/alert01.txt
    out=$work/pkg-upgrade.out
    apt_in "$c" install "$d2" >"$out" 2>&1 || { fail "upgrade to $pkg_version+test2" "$out"; return; }
    check_all "upgrade to $pkg_version+test2: the edited unwind.conf kept (the new one as unwind.conf.dpkg-dist), owners and modes, state and enabled unit kept" <<'CHECKS'
[ "$(in_c dpkg-query -W -f='${Version}' unwind)" = "$pkg_version+test2" ]
[ "$(tail -n 1 "$c/etc/unwind/unwind.conf")" = '# edited on the device' ]
[ "$(tail -n 1 "$c/etc/unwind/unwind.conf.dpkg-dist")" = '# version 2 of the shipped file' ]
[ "$(meta /etc/unwind/unwind.conf)" = "640 root:unwind" ] && [ "$(meta /etc/unwind)" = "750 root:unwind" ]
[ "$(head -n 1 "$c/var/lib/unwind/alert01.txt")" = Sam ] && [ "$(chroot "$c" stat -c %U:%G /var/lib/unwind/alert01.txt)" = unwind:unwind ]
in_c test -f /etc/systemd/system/multi-user.target.wants/unwind.service
CHECKS

    # 6. Back to V, as the fleet role's rollback does.
    out=$work/pkg-downgrade.out
    if apt_in "$c" install --allow-downgrades "$d1" >"$out" 2>&1 &&
        [ "$(in_c dpkg-query -W -f='${Version}' unwind)" = "$pkg_version" ] &&
        [ "$(tail -n 1 "$c/etc/unwind/unwind.conf")" = '# edited on the device' ]; then
        pass "downgrade back to $pkg_version (the rollback): the edited configuration kept"
    else
        fail "downgrade back to $pkg_version" "$out"
    fi

    # 7. remove: the program goes; configuration, state, user and overrides stay.
    out=$work/pkg-remove.out
    apt_in "$c" remove unwind >"$out" 2>&1 || { fail "apt-get remove unwind" "$out"; return; }
    check_all "apt-get remove unwind: the program gone; the edited configuration, the state files and the user kept" <<'CHECKS'
[ "$(in_c dpkg-query -W -f='${Status}' unwind)" = "deinstall ok config-files" ]
[ ! -e "$c/usr/lib/unwind" ] && [ ! -L "$c/usr/bin/unwind" ] && [ ! -e "$c/usr/lib/systemd/system/unwind.service" ]
[ ! -e "$c/usr/lib/udev/rules.d/99-unwind.rules" ] && [ ! -e "$c/usr/sbin/unwind-setup" ]
[ "$(tail -n 1 "$c/etc/unwind/unwind.conf")" = '# edited on the device' ]
[ "$(head -n 1 "$c/var/lib/unwind/alert01.txt")" = Sam ]
in_c getent passwd unwind
CHECKS

    # 8. purge: nothing of the package is left but the system user (as Debian keeps them) and
    # unwind-setup's backups of the boot files.
    out=$work/pkg-purge.out
    apt_in "$c" purge unwind >"$out" 2>&1 || { fail "apt-get purge unwind" "$out"; return; }
    find "$c" -xdev \( -path "$c/proc" -o -path "$c/root/debs" -o -path "$c/boot/firmware" \) -prune -o -name '*unwind*' -print \
        | sed "s|^$c||" >"$work/pkg-left.out"
    check_all "apt-get purge unwind: configuration, state, statoverrides, enable links and the UART rule link gone; only the system user stays" <<'CHECKS'
! in_c dpkg-query -W -f='${Status}' unwind | grep -q .
[ ! -e "$c/etc/unwind" ] && [ ! -e "$c/var/lib/unwind" ]
[ -z "$(in_c dpkg-statoverride --list)" ]
[ ! -L "$c/etc/udev/rules.d/99-unwind-modem-uart.rules" ]
[ ! -s "$work/pkg-left.out" ]
in_c getent passwd unwind
CHECKS
    [ -s "$work/pkg-left.out" ] && sed 's/^/    | left: /' "$work/pkg-left.out"
    return 0
}

# unwind-setup inside the chroot, on Raspberry Pi OS's boot files.
setup_tests() {
    local c=$1 out=$work/setup.out s1 s2 rc
    mkdir -p "$c/boot/firmware"
    printf '# http://rptl.io/configtxt\n#dtparam=i2c_arm=on\ndtparam=audio=on\narm_64bit=1\n\n[cm4]\notg_mode=1\n\n[all]\n' >"$c/boot/firmware/config.txt"
    printf 'console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait quiet\n' >"$c/boot/firmware/cmdline.txt"
    chroot "$c" useradd --create-home --shell /bin/bash pi
    s1=$(cd "$c" && find boot etc -printf '%p %m %s %T@\n' | sort | sha256sum)
    chroot "$c" unwind-setup --modem-on-uart --disable-bt --maintainer pi --dry-run >"$out" 2>&1 || true
    s2=$(cd "$c" && find boot etc -printf '%p %m %s %T@\n' | sort | sha256sum)
    chroot "$c" unwind-setup --modem-on-uart --disable-bt --maintainer pi >>"$out" 2>&1 || true
    local cfg=$c/boot/firmware/config.txt
    check_all "unwind-setup --modem-on-uart --disable-bt --maintainer pi: the dry run writes nothing; the boot block, the console off the UART, the UART rule linked, pi in group unwind" <<'CHECKS'
[ "$s1" = "$s2" ] && grep -q 'would be made' "$out"
[ "$(grep -c '^# unwind: begin' "$cfg")" = 1 ] && [ "$(tail -n 1 "$cfg")" = '# unwind: end' ]
grep -qx 'dtparam=i2c_arm_baudrate=400000' "$cfg" && grep -qx 'core_freq_min=250' "$cfg" && grep -qx 'core_freq_min=500' "$cfg"
grep -qx 'enable_uart=1' "$cfg" && grep -qx 'dtoverlay=disable-bt' "$cfg" && grep -qx 'otg_mode=1' "$cfg"
[ -f "$cfg.unwind-orig" ] && ! grep -q unwind "$cfg.unwind-orig"
! grep -q 'console=serial0' "$c/boot/firmware/cmdline.txt" && grep -q '^console=tty1 root=' "$c/boot/firmware/cmdline.txt"
[ "$(readlink "$c/etc/udev/rules.d/99-unwind-modem-uart.rules")" = /usr/share/unwind/udev/99-unwind-modem-uart.rules ]
chroot "$c" id -nG pi | grep -qw unwind
grep -q 'reboot' "$out"
CHECKS
    chroot "$c" unwind-setup --modem-on-uart --disable-bt --maintainer pi >"$out" 2>&1 || true
    if grep -qx 'unwind-setup: nothing to change' "$out"; then pass "unwind-setup again: nothing to change"
    else fail "unwind-setup again: nothing to change" "$out"; fi
    chroot "$c" unwind-setup --device char-gpiochip >"$out" 2>&1 || true
    if [ ! -e "$c/etc/udev/rules.d/99-unwind-modem-uart.rules" ] && ! grep -q 'enable_uart' "$cfg" &&
        [ "$(grep -c '^# unwind: begin' "$cfg")" = 1 ] &&
        grep -qx 'DeviceAllow=char-gpiochip rw' "$c/etc/systemd/system/unwind.service.d/50-devices.conf"; then
        pass "unwind-setup with other options: the block replaced in place, the UART rule link gone, the devices drop-in"
    else
        fail "unwind-setup with other options converges" "$out"
    fi
    rc=0
    chroot "$c" unwind-setup --shutdown-button 3 --dry-run >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 2 ]; then pass "unwind-setup refuses --shutdown-button 3 (the I2C clock) with status 2"
    else fail "unwind-setup refuses --shutdown-button 3 with status 2 (got $rc)"; fi
    # The UART link again, for purge to remove.
    chroot "$c" unwind-setup --modem-on-uart >/dev/null 2>&1 || true
}
