# shellcheck shell=bash
# shellcheck disable=SC2154,SC2016,SC2015,SC2034 # work, here, root_ok, ansible_s: shared with deploy/test.sh (pass, fail, skip: deploy/lib/toolkit.sh)
# deploy/tests/ansible.sh -- sourced by deploy/test.sh: the fleet playbook.
#
# Two "devices", each a bookworm chroot reached through a test-only connection plugin
# (tests/ansible/connection_plugins/unwind_chroot.py), get packages built by build-deb.sh
# from a stand-in executable (tests/ansible/fake-unwind: `unwind status --json` as a running
# device answers it, or, built unhealthy, as a device whose daemon is down) and a stand-in
# systemctl (no systemd runs in a chroot; tests/ansible/fake-systemctl), which the package's
# postinst calls as on a device (the chroots have /run/systemd/system) and which (re)starts the
# stand-in daemon: a pid, a start time, the version and health of the executable installed then.
# Then:
#   check mode on fresh devices; a run (both installed, contacts and configuration written,
#   no contact in the output); a second run and check mode with changed=0; an unhealthy
#   release: the first device (serial's first batch of one) installs it, fails the health
#   check, gets the previous version back and is reported, the second is never touched; a
#   device in a breathing session is waited for; one with calls to contacts due (only
#   "alertsPending" says so) or, from a daemon older than 1.1.0, an alert in the outbox (only
#   the prose says so) is not updated; a release whose daemon reports another version fails the
#   health check and is rolled back; a rebuild (2.0.2+rebuild1, its daemon says 2.0.2 as the old
#   one does) whose restart did not take (the same pid and start time still answer) fails it at
#   the restart rule and is rolled back, and one whose restart did take passes; a bad contact is
#   refused without being shown. Then the apt repository path: a flat repository in the device,
#   check mode (nothing added), "latest" installed and kept in good/ (apt-get download), a
#   second run with changed=0, an unhealthy release published there rolled back.

# fake_package VERSION HEALTHY [DAEMON_VERSION]: prints the path of unwind_VERSION_ARCH.deb,
# whose "daemon" reports DAEMON_VERSION (default VERSION).
fake_package() {
    local v=$1 healthy=$2 dv=${3:-$1} rel=$work/fake-release-$1
    mkdir -p "$rel"
    sed -e "s/@VERSION@/$v/g" -e "s/@DAEMON_VERSION@/$dv/g" -e "s/@HEALTHY@/$healthy/g" "$here/tests/ansible/fake-unwind" >"$rel/unwind"
    chmod 0755 "$rel/unwind"
    "$here/build-deb.sh" --from "$rel" --out "$work/fake-debs" --version "$v" --compress gzip 2>>"$work/fake-debs.out"
}

# recap OUT HOST: the PLAY RECAP line of HOST.
recap() { grep -E "^$2 +: " "$1" | tail -n 1; }
changed0() { recap "$1" "$2" | grep -Eq 'changed=0 .*failed=0'; }
installed() { chroot "$1" dpkg-query -W -f='${Version}' unwind 2>/dev/null; }

# imaged_card_tests DEV1 DEV2 PACKAGE: dev1 made an imaged card (RAUC's system.conf, a stand-in
# unwind-install-bundle and restart: fake-install-bundle, fake-systemd-run), updated with
# bundles; then a plain device again.
imaged_card_tests() {
    local d1=$1 d2=$2 pkg=$3 out why url=http://updates.example/unwind
    mkdir -p "$d1/etc/rauc" "$d1/data/system"
    echo "[system]" >"$d1/etc/rauc/system.conf"
    install -m 0755 "$here/tests/ansible/fake-install-bundle" "$d1/usr/sbin/unwind-install-bundle"
    install -m 0755 "$here/tests/ansible/fake-systemd-run" "$d1/usr/bin/systemd-run"

    out=$work/ansible-imaged.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$pkg" --limit dev1) >"$out" 2>&1; then why="the play passed"
    elif ! grep -q 'dev1 runs the SD-card image: set unwind_bundle_url' "$out"; then why="no reason given"
    elif [ "$(installed "$d1")" != 2.0.0 ] || [ -e "$d1/var/cache/unwind-deploy/$(basename "$pkg")" ]; then why="dev1 was changed"
    fi
    verdict "$why" "an imaged card without a bundle's address: refused, saying what to set; no package staged or installed" "an imaged card without a bundle refused" "$out"

    out=$work/ansible-bundle.out
    why=
    if ! (cd "$dir" && "${play[@]}" -e "unwind_bundle_url=$url/unwind-2.1.0.raucb unwind_bundle_version=2.1.0" --limit dev1) >"$out" 2>&1; then why="the play failed"
    elif ! grep -q '^updated to 2.1.0 (slot B)' "$d1/data/system/update.txt"; then why="no restart into the new slot: $(cat "$d1/data/system/update.txt")"
    elif ! grep -q 'dev1: updated to 2.1.0 (slot B)' "$out"; then why="the keeper's verdict not reported"
    elif [ "$(installed "$d1")" != 2.0.0 ] || [ -e "$d1/var/cache/unwind-deploy/$(basename "$pkg")" ]; then why="a package was installed or staged"
    elif recap "$out" dev1 | grep -q 'changed=0 '; then why="no change reported"
    fi
    verdict "$why" "an imaged card: the device downloads the bundle (unwind-install-bundle URL), restarts on trial, the role reports the slot keeper's verdict; no package" "an imaged card updated with a bundle" "$out"

    out=$work/ansible-bundle2.out
    if (cd "$dir" && "${play[@]}" -e "unwind_bundle_url=$url/unwind-2.1.0.raucb unwind_bundle_version=2.1.0" --limit dev1) >"$out" 2>&1 &&
        changed0 "$out" dev1 && [ ! -e "$d1/var/lib/unwind-test/rauc-installed" ]; then
        pass "an imaged card running the bundle's version: nothing installed, changed=0"
    else
        fail "an imaged card running the bundle's version: changed=0" "$out"
    fi

    out=$work/ansible-bundle-refused.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_bundle_url=$url/other-key/unwind-2.2.0.raucb unwind_bundle_version=2.2.0" --limit dev1) >"$out" 2>&1; then why="the play passed"
    elif ! grep -q 'dev1: unwind-install-bundle .* failed (exit 1): .*signature verification failed.* Nothing else was changed' "$out"; then why="no reason given"
    elif ! grep -q '^updated to 2.1.0 (slot B)' "$d1/data/system/update.txt"; then why="the device restarted"
    fi
    verdict "$why" "an imaged card offered a bundle RAUC refuses: the device is reported with RAUC's reason and not restarted" "a refused bundle stops at the device" "$out"

    # A bundle whose system never came up: dev1 (the first batch) falls back and is reported;
    # the rollout stops before dev2.
    out=$work/ansible-bundle-broken.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_bundle_url=$url/broken/unwind-2.2.0.raucb unwind_bundle_version=2.2.0 unwind_package_file=$pkg") >"$out" 2>&1; then why="the play passed"
    elif ! grep -q 'dev1: the update to 2.2.0 did not come up; back on 2.1.0 (slot B).*The device went back to the system it had' "$out"; then why="no report of dev1"
    elif [ "$(installed "$d2")" != 2.0.0 ] || grep -q 'dev2' <(sed -n '/^PLAY RECAP/q;p' "$out"); then why="dev2 was touched"
    fi
    verdict "$why" "an imaged card whose new system never came up: reported with the keeper's reason; dev2 (next batch) untouched" "a bundle that fell back stops the rollout" "$out"

    # The same bundle again: until the device has restarted, its record is still the verdict on
    # the try before, which must not be reported as this try's (the stand-in writes the new one
    # 8 s after the restart is asked for: the role has read the record once by then, and reads
    # it again 10 s after).
    out=$work/ansible-bundle-broken-again.out
    why=
    before=$(cat "$d1/data/system/update.txt")
    if (cd "$dir" && "${play[@]}" -e "unwind_bundle_url=$url/broken/unwind-2.2.0.raucb unwind_bundle_version=2.2.0" --limit dev1) >"$out" 2>&1; then why="the play passed"
    elif [ "$(cat "$d1/data/system/update.txt")" = "$before" ]; then why="no new verdict on the device"
    elif ! grep -qF "dev1: $(cat "$d1/data/system/update.txt")" "$out"; then why="the verdict reported is not the new one (the device's: $(cat "$d1/data/system/update.txt"))"
    fi
    verdict "$why" "the same broken bundle again: the role reports this try's verdict, not the record of the try before" "a stale verdict is not taken for a new one" "$out"

    rm -rf "$d1/etc/rauc" "$d1/data" "$d1/usr/sbin/unwind-install-bundle" "$d1/usr/bin/systemd-run"
}

ansible_tests() {
    local dir=$here/ansible out
    out=$work/ansible-syntax.out
    if (cd "$dir" && ansible-playbook --syntax-check -i localhost, site.yml) >"$out" 2>&1; then pass "ansible-playbook --syntax-check site.yml"
    else fail "ansible-playbook --syntax-check site.yml" "$out"; fi
    if command -v ansible-lint >/dev/null; then
        out=$work/ansible-lint.out
        if (cd "$dir" && ansible-lint --offline -q site.yml) >"$out" 2>&1; then pass "ansible-lint site.yml"
        else fail "ansible-lint site.yml" "$out"; fi
    else
        skip "ansible-lint" "not installed"
    fi
    [ "$root_ok" = 1 ] || { skip "ansible-playbook against chroot devices" "needs root"; return; }

    local t0 good bad3 good4 d1=$work/dev1 d2=$work/dev2 inv=$work/ansible-inventory.yml vars=$work/ansible-vars.yml
    t0=$(date +%s)
    good=$(fake_package 2.0.0 yes) && bad3=$(fake_package 2.0.1 no) && good4=$(fake_package 2.0.2 yes) ||
        { fail "stand-in packages for the playbook" "$work/fake-debs.out"; return; }
    local d
    for d in "$d1" "$d2"; do
        make_chroot "$d" || { fail "a bookworm chroot for the playbook" "$work/debootstrap.out"; return; }
        # Where systemd's own is (no systemd package in the chroot): apt-get runs dpkg with
        # PATH=/usr/sbin:/usr/bin:/sbin:/bin (DPkg::Path), which has no /usr/local. As on a
        # device, the postinst (re)starts the service through deb-systemd-invoke.
        install -m 0755 "$here/tests/ansible/fake-systemctl" "$d/usr/bin/systemctl"
        mkdir -p "$d/var/lib/unwind-test" "$d/run/systemd/system"
    done
    printf 'all:\n  hosts:\n    dev1:\n      ansible_host: %s\n    dev2:\n      ansible_host: %s\n  vars:\n    ansible_connection: unwind_chroot\n    ansible_python_interpreter: /usr/bin/python3\n' \
        "$d1" "$d2" >"$inv"
    cat >"$vars" <<'VARS'
unwind_idle_retries: 30
unwind_idle_delay: 1
unwind_health_retries: 3
unwind_health_delay: 1
unwind_modem_on_uart: true
unwind_alerts:
  - name: Test Contact
    number: "+16045550100"
    message: This is a test alert.
unwind_config:
  display:
    rotate_180: true
VARS
    export ANSIBLE_NOCOLOR=1 ANSIBLE_CONNECTION_PLUGINS=$here/tests/ansible/connection_plugins ANSIBLE_PIPELINING=1
    local play=(ansible-playbook -i "$inv" -e unwind_hosts=all -e ansible_become=false -e "@$vars" site.yml)

    out=$work/ansible-check1.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good" --check) >"$out" 2>&1 &&
        [ -z "$(installed "$d1")" ]; then
        pass "ansible-playbook --check on two fresh devices: reports, installs nothing"
    else
        fail "ansible-playbook --check on two fresh devices" "$out"
    fi

    out=$work/ansible-run1.out
    local why=
    if ! (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good") >"$out" 2>&1; then why="the play failed"
    elif [ "$(installed "$d1")/$(installed "$d2")" != 2.0.0/2.0.0 ]; then why="installed: $(installed "$d1")/$(installed "$d2")"
    elif [ "$(cat "$d1/var/lib/unwind/alert01.txt")" != "$(printf 'Test Contact\n+16045550100\nThis is a test alert.')" ]; then why="alert01.txt: $(cat -A "$d1/var/lib/unwind/alert01.txt")"
    elif [ -s "$d1/var/lib/unwind/alert02.txt" ] || [ ! -f "$d1/var/lib/unwind/alert05.txt" ]; then why="alert02.txt not empty or alert05.txt missing"
    elif ! grep -qx '  rotate_180: true' "$d2/etc/unwind/unwind.conf"; then why="unwind.conf: $(cat "$d2/etc/unwind/unwind.conf")"
    elif [ "$(chroot "$d2" stat -c '%a %U:%G' /etc/unwind/unwind.conf)" != "640 root:unwind" ]; then why="unwind.conf's owner or mode"
    elif [ ! -f "$d1/var/cache/unwind-deploy/good/$(basename "$good")" ]; then why="no good/$(basename "$good")"
    elif [ "$(readlink "$d1/etc/udev/rules.d/99-unwind-modem-uart.rules")" != /usr/share/unwind/udev/99-unwind-modem-uart.rules ]; then why="unwind-setup --modem-on-uart did not run"
    elif grep -q '16045550100' "$out"; then why="the output shows a contact's number"
    fi
    verdict "$why" "ansible-playbook: both devices installed and healthy, alerts and configuration written, unwind-setup run, no contact in the output" "ansible-playbook installs two devices" "$out"

    out=$work/ansible-run2.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good") >"$out" 2>&1 && changed0 "$out" dev1 && changed0 "$out" dev2; then
        pass "second ansible-playbook run: changed=0 (the health check runs, read-only)"
    else
        fail "second ansible-playbook run: changed=0" "$out"
    fi
    out=$work/ansible-check2.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good" --check) >"$out" 2>&1 && changed0 "$out" dev1 && changed0 "$out" dev2; then
        pass "ansible-playbook --check after the run: changed=0"
    else
        fail "ansible-playbook --check after the run: changed=0" "$out"
    fi

    # Check mode with a new release pending: reported, nothing installed or staged.
    out=$work/ansible-check3.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$bad3" --check) >"$out" 2>&1 &&
        [ "$(installed "$d1")/$(installed "$d2")" = 2.0.0/2.0.0 ] && ! recap "$out" dev1 | grep -q 'changed=0 ' &&
        [ ! -e "$d1/var/cache/unwind-deploy/$(basename "$bad3")" ]; then
        pass "ansible-playbook --check with a new release: reports the update, installs nothing"
    else
        fail "ansible-playbook --check with a new release" "$out"
    fi

    imaged_card_tests "$d1" "$d2" "$good4"

    # A release whose daemon does not come up: dev1, alone in the first batch, gets it, fails
    # the health check and gets 2.0.0 back; the play stops before dev2.
    out=$work/ansible-bad.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$bad3") >"$out" 2>&1; then why="the play passed"
    elif [ "$(installed "$d1")" != 2.0.0 ]; then why="dev1 runs $(installed "$d1"), not 2.0.0 again"
    elif ! grep -q 'dev1: unwind 2.0.1 failed its health check at .*Health - the device answers unwind status --json.*Reinstalled 2.0.0, which passes the health check' "$out"; then why="no report of dev1"
    elif [ "$(installed "$d2")" != 2.0.0 ] || [ -e "$d2/var/cache/unwind-deploy/$(basename "$bad3")" ]; then why="dev2 was touched"
    elif ! recap "$out" dev1 | grep -q 'failed=1'; then why="dev1 not failed in the recap"
    elif grep -q '16045550100' "$out"; then why="the output shows a contact's number"
    fi
    verdict "$why" "an unhealthy release: dev1 fails the health check, gets 2.0.0 back and is reported; dev2 (next batch) untouched" "an unhealthy release is rolled back and stops the rollout" "$out"

    # A breathing session on dev1 for the next three answers: the update waits for its end.
    echo 3 >"$d1/var/lib/unwind-test/session"
    out=$work/ansible-busy.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good4" --limit dev1) >"$out" 2>&1 &&
        [ "$(grep -c 'RETRYING: \[dev1\]: Ask the device what it is doing' "$out")" = 3 ] && [ "$(installed "$d1")" = 2.0.2 ]; then
        pass "dev1 in a breathing session: the update waits for its end, then installs 2.0.2"
    else
        fail "the update waits for a breathing session to end" "$out"
    fi

    # Calls to contacts due on dev2, which only "alertsPending" says (the outbox is empty):
    # not updated, reported busy.
    echo calls >"$d2/var/lib/unwind-test/pending"
    out=$work/ansible-pending.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good4" -e unwind_idle_retries=2 --limit dev2) >"$out" 2>&1; then
        fail "a device with alerts pending is not updated (the play passed)" "$out"
    elif grep -q 'dev2 stayed busy' "$out" && [ "$(installed "$d2")" = 2.0.0 ]; then
        pass "dev2 with calls to contacts due (alertsPending, outbox empty): not updated, reported busy"
    else
        fail "a device with alerts pending is not updated" "$out"
    fi

    # A daemon older than 1.1.0 (no booleans) with an alert in its outbox: read from the prose.
    echo outbox >"$d2/var/lib/unwind-test/pending"
    touch "$d2/var/lib/unwind-test/prose-only"
    out=$work/ansible-pending-old.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good4" -e unwind_idle_retries=2 --limit dev2) >"$out" 2>&1; then
        fail "an older daemon's pending alert (prose only) stops the update (the play passed)" "$out"
    elif grep -q 'dev2 stayed busy' "$out" && [ "$(installed "$d2")" = 2.0.0 ]; then
        pass "dev2 as a daemon older than 1.1.0 (no sessionRunning/alertsPending) with an alert in the outbox: read from the prose, not updated"
    else
        fail "an older daemon's pending alert (prose only) stops the update" "$out"
    fi
    rm -f "$d2/var/lib/unwind-test/pending" "$d2/var/lib/unwind-test/prose-only"

    # A release whose daemon, restarted, reports another version (2.0.2 under package 2.0.3: a
    # --version that does not start with the daemon's): not healthy; dev1 gets 2.0.2 back.
    local stale
    stale=$(fake_package 2.0.3 yes 2.0.2) || { fail "stand-in package 2.0.3" "$work/fake-debs.out"; return; }
    out=$work/ansible-stale.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$stale" --limit dev1) >"$out" 2>&1; then why="the play passed"
    elif [ "$(installed "$d1")" != 2.0.2 ]; then why="dev1 runs $(installed "$d1"), not 2.0.2 again"
    elif ! grep -q 'dev1: unwind 2.0.3 failed its health check at .*Health - the daemon runs the installed version.*The running daemon reports version 2.0.2, the installed package is 2.0.3: NOT the installed version\. It runs as pid [0-9]*, .*: restarted since\..*Reinstalled 2.0.2, which passes the health check' "$out"; then why="no report of dev1's daemon version"
    fi
    verdict "$why" "a release whose daemon reports another version: dev1 fails the health check (version 2.0.2 under package 2.0.3), gets 2.0.2 back" "a release whose daemon reports another version is rolled back" "$out"

    no_restart_tests "$d1"

    apt_repo_tests "$d2" "$good" "$good4"
    ansible_s=$(($(date +%s) - t0))

    # A contact that breaks the rules stops the play before anything is written, and the
    # message does not show the contact.
    printf 'unwind_alerts:\n  - name: X\n    number: 16045550199\n    message: hi\n' >"$work/bad-alerts.yml"
    out=$work/ansible-bad-contact.out
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$good" -e "@$work/bad-alerts.yml" --check --limit dev1) >"$out" 2>&1; then
        fail "ansible refuses an unquoted number" "$out"
    elif grep -q 'alert 1: needs' "$out" && ! grep -q '16045550199' "$out"; then
        pass "ansible refuses an unquoted number, without showing it"
    else
        fail "ansible refuses an unquoted number, without showing it" "$out"
    fi
}

# no_restart_tests DEVICE: on dev1 (DEVICE), which runs 2.0.2, rebuilds whose daemon says 2.0.2
# as the running one does, so that only the restart rule can tell the old daemon from the new.
no_restart_tests() {
    local d=$1 r1 r2 out why before after
    r1=$(fake_package 2.0.2+rebuild1 yes 2.0.2) && r2=$(fake_package 2.0.2+rebuild2 yes 2.0.2) ||
        { fail "stand-in packages 2.0.2+rebuild1/2" "$work/fake-debs.out"; return; }

    # The postinst's restart does not take (once): the same daemon, pid and start time, answers
    # after the upgrade; the version rule passes, the restart rule does not. The rollback's
    # reinstall of 2.0.2 restarts it.
    before=$(cat "$d/var/lib/unwind-test/daemon")
    echo 1 >"$d/var/lib/unwind-test/no-restart"
    out=$work/ansible-no-restart.out
    why=
    if (cd "$dir" && "${play[@]}" -e "unwind_package_file=$r1" --limit dev1) >"$out" 2>&1; then why="the play passed"
    elif [ "$(installed "$d")" != 2.0.2 ]; then why="dev1 runs $(installed "$d"), not 2.0.2 again"
    elif ! grep -q 'dev1: unwind 2.0.2+rebuild1 failed its health check at .*Health - the daemon runs the installed version.*The running daemon reports version 2.0.2, the installed package is 2.0.2+rebuild1: the version matches\. It runs as pid [0-9]*, started [0-9]* s [a-z]* the installation began (pid [0-9]*, started at [0-9]*, answered then; now: started at [0-9]*): NOT restarted since: the old daemon still runs\..*Reinstalled 2.0.2, which passes the health check' "$out"; then why="no report of dev1's old daemon"
    elif [ "$(cat "$d/var/lib/unwind-test/no-restart" 2>/dev/null || echo 0)" != 0 ]; then why="the restart that does not take was not tried"
    elif [ "$(cat "$d/var/lib/unwind-test/daemon")" = "$before" ]; then why="the rollback did not restart the daemon"
    fi
    [ -z "$why" ] || why="$why; daemon before: $before, now: $(cat "$d/var/lib/unwind-test/daemon")"
    verdict "$why" "a rebuild 2.0.2+rebuild1 whose daemon was not restarted (same pid and start time, same version 2.0.2): fails the restart rule, gets 2.0.2 back" "a rebuild whose daemon was not restarted is rolled back" "$out"

    # The same with the restart taking: healthy, kept in good/.
    before=$(cat "$d/var/lib/unwind-test/daemon")
    out=$work/ansible-rebuild.out
    why=
    if ! (cd "$dir" && "${play[@]}" -e "unwind_package_file=$r2" --limit dev1) >"$out" 2>&1; then why="the play failed"
    elif [ "$(installed "$d")" != 2.0.2+rebuild2 ]; then why="dev1 runs $(installed "$d"), not 2.0.2+rebuild2"
    elif after=$(cat "$d/var/lib/unwind-test/daemon") && [ "${after%% *}" = "${before%% *}" ]; then why="the daemon's pid did not change"
    elif [ ! -f "$d/var/cache/unwind-deploy/good/$(basename "$r2")" ]; then why="no good/$(basename "$r2")"
    fi
    verdict "$why" "a rebuild 2.0.2+rebuild2 whose daemon restarted (another pid, same version 2.0.2): healthy, kept in good/" "a rebuild whose daemon restarted passes the health check" "$out"
}

# apt_repo_tests DEVICE DEB-2.0.0 DEB-2.0.2: the role with unwind_apt_version (the other way to
# say what to install) against a flat repository inside the device (file:, trusted: the
# signing key is the clinic's business), on DEVICE, which runs 2.0.0.
apt_repo_tests() {
    local d=$1 repo=$1/srv/unwind-repo out why bad4 dir=$here/ansible
    mkdir -p "$repo"
    cp "$2" "$3" "$repo/"
    publish() { (cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null); }
    publish
    local apt_play=("${play[@]}" -e unwind_apt_version=latest
        -e '{"unwind_apt_repository": "deb [trusted=yes] file:/srv/unwind-repo ./"}' --limit dev2)

    out=$work/ansible-apt-check.out
    if (cd "$dir" && "${apt_play[@]}" --check) >"$out" 2>&1 && [ "$(installed "$d")" = 2.0.0 ] &&
        ! recap "$out" dev2 | grep -q 'changed=0 ' && [ ! -e "$d/etc/apt/sources.list.d/unwind.list" ]; then
        pass "apt repository, --check: reports adding the repository, adds and installs nothing"
    else
        fail "apt repository, --check" "$out"
    fi

    out=$work/ansible-apt1.out
    why=
    if ! (cd "$dir" && "${apt_play[@]}") >"$out" 2>&1; then why="the play failed"
    elif [ "$(installed "$d")" != 2.0.2 ]; then why="dev2 runs $(installed "$d"), not 2.0.2"
    elif ! grep -q 'file:/srv/unwind-repo' "$d/etc/apt/sources.list.d/unwind.list"; then why="no unwind.list"
    elif ! ls "$d/var/cache/unwind-deploy/good/unwind_2.0.2_"*.deb >/dev/null 2>&1; then why="good/ has no unwind_2.0.2_*.deb"
    elif ls "$d/var/cache/unwind-deploy/good/unwind_2.0.0_"*.deb >/dev/null 2>&1; then why="good/ still has 2.0.0"
    fi
    verdict "$why" "apt repository, unwind_apt_version=latest: the repository added, 2.0.2 installed, healthy, its package kept in good/ (apt-get download)" "apt repository: latest installed" "$out"

    out=$work/ansible-apt2.out
    if (cd "$dir" && "${apt_play[@]}") >"$out" 2>&1 && changed0 "$out" dev2; then
        pass "apt repository, second run: changed=0"
    else
        fail "apt repository, second run: changed=0" "$out"
    fi

    # An unhealthy 2.0.4 published: installed from the repository, rolled back from good/.
    bad4=$(fake_package 2.0.4 no) || { fail "stand-in package 2.0.4" "$work/fake-debs.out"; return; }
    cp "$bad4" "$repo/"
    publish
    out=$work/ansible-apt-bad.out
    why=
    if (cd "$dir" && "${apt_play[@]}") >"$out" 2>&1; then why="the play passed"
    elif [ "$(installed "$d")" != 2.0.2 ]; then why="dev2 runs $(installed "$d"), not 2.0.2 again"
    elif ! grep -q 'dev2: unwind 2.0.4 failed its health check at .*Reinstalled 2.0.2, which passes the health check' "$out"; then why="no report of dev2"
    fi
    verdict "$why" "apt repository, an unhealthy 2.0.4 published: installed, fails the health check, 2.0.2 reinstalled from good/ and reported" "apt repository: an unhealthy release is rolled back" "$out"
}
