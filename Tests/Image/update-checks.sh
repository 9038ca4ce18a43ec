# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2016 # boot-test.sh's variables, read and set; bash -c scripts expand their own arguments
# update-checks.sh -- the A/B update checks of the boot test (sourced by Tests/Image/boot-test.sh,
# whose card, boot and checks they use).
#
# Bundles, made beside the card's build (deploy/image/build-bundle.sh), on a second disk of the
# emulated machine: "update", the card's own system under a new version (build-image.sh
# --bundle); "broken", the same system with a daemon that never starts; "stuck", one whose boot
# never reaches the slot keeper (its data partition's unit never ends, and a file system in
# /etc/fstab whose device never comes puts it in emergency mode); "other-key", signed
# under another authority; "other-board", built for another board; "cut-short", a bundle missing
# its end. The boot test then: installs "update" during each power cut (the next boot must be
# the old slot, PANIC working); on its last boot, offers the three bad bundles (refused, the
# slots as they were), then the maintainer installs "update" over SSH (the setup file's key,
# sudo), streamed from an update server on the host (bundle-server.py: what it downloaded; the
# state's hashes unchanged); boots the new slot on
# trial (kept once PANIC-ready, the state as it was, PANIC reaching the modem, the maintainer
# told in `unwind status`) and installs "broken" from it; boots "broken" on trial (never
# PANIC-ready: the slot keeper restarts the machine) and comes back on the slot before it, which
# says why, the state still as it was, PANIC still reaching the modem; that slot installs "stuck",
# whose boot the boot's deadline restarts, and the slot before it says so. Last, that slot once
# more on a machine with a watchdog device: systemd arms it, and a kernel crash that never
# restarts the machine itself is restarted by it.

# prepare_bundles: the five bad or other bundles and the disk that carries them. The broken and the
# stuck systems are stored uncompressed (build-bundle.sh --uncompressed): their checks are about
# what a system does once installed; the update's own bundle, built as a release is, is the one
# whose decompression the installs exercise. Once on the disk, the two leave the host's $work.
prepare_bundles() {
    local t=$SECONDS small=$work/small.ext4 key=$work/keys/signer.key.pem cert=$work/keys/signer.cert.pem
    # "broken": slot A's file system as built, with a daemon that exits at once (systemd restarts
    # it, and it exits again: never PANIC-ready).
    dd if="$image" of="$work/broken.ext4" bs=512 skip="$root_start" count="$root_size" conv=sparse status=none
    printf '[Service]\nExecStart=\nExecStart=/bin/sh -c "echo unwind: this system is broken on purpose (the boot test); exit 1"\n' >"$work/never-ready.conf"
    debugfs -w -R "write $work/never-ready.conf /etc/systemd/system/unwind.service.d/zz-never-ready.conf" "$work/broken.ext4" >/dev/null 2>&1
    "$repo/deploy/image/build-bundle.sh" --uncompressed --rootfs "$work/broken.ext4" --version "$broken_version" --cert "$cert" --key "$key" \
        --out "$work/bundles/broken.raucb" 2>"$work/bundles.log" || { cat "$work/bundles.log"; return 1; }
    rm -f "$work/broken.ext4"
    # "stuck": slot A's file system as built, whose boot hangs before the device starts and then
    # falls into emergency mode: only unwind-boot-deadline.timer can end it.
    dd if="$image" of="$work/stuck.ext4" bs=512 skip="$root_start" count="$root_size" conv=sparse status=none
    { debugfs -R "cat /etc/fstab" "$work/stuck.ext4" 2>/dev/null
        echo "LABEL=unwind-never-there /mnt ext4 ro,x-systemd.device-timeout=10s 0 0"; } >"$work/stuck-fstab"
    printf '[Service]\nExecStartPre=/bin/sleep infinity\n' >"$work/stuck-data.conf"
    # Its boot's deadline 120 s after the kernel's start, not the card's 600: the test's other
    # boots keep the card's, which no loaded machine comes near.
    printf '[Timer]\nOnBootSec=\nOnBootSec=120\n' >"$work/stuck-deadline.conf"
    printf '%s\n' "rm /etc/fstab" "write $work/stuck-fstab /etc/fstab" "mkdir /etc/systemd/system/unwind-data.service.d" \
        "write $work/stuck-data.conf /etc/systemd/system/unwind-data.service.d/zz-stuck.conf" \
        "mkdir /etc/systemd/system/unwind-boot-deadline.timer.d" \
        "write $work/stuck-deadline.conf /etc/systemd/system/unwind-boot-deadline.timer.d/zz-stuck.conf" |
        debugfs -w -f - "$work/stuck.ext4" >/dev/null 2>&1
    if ! debugfs -R "cat /etc/systemd/system/unwind-data.service.d/zz-stuck.conf" "$work/stuck.ext4" 2>/dev/null | grep -q "sleep infinity" ||
        ! debugfs -R "cat /etc/systemd/system/unwind-boot-deadline.timer.d/zz-stuck.conf" "$work/stuck.ext4" 2>/dev/null | grep -q "=120" ||
        ! debugfs -R "cat /etc/fstab" "$work/stuck.ext4" 2>/dev/null | grep -q "unwind-never-there"; then
        echo "the stuck bundle's file system was not changed"
        return 1
    fi
    "$repo/deploy/image/build-bundle.sh" --uncompressed --rootfs "$work/stuck.ext4" --version "$stuck_version" --cert "$cert" --key "$key" \
        --out "$work/bundles/stuck.raucb" 2>>"$work/bundles.log" || { cat "$work/bundles.log"; return 1; }
    rm -f "$work/stuck.ext4" "$work/stuck-fstab" "$work/stuck-data.conf" "$work/stuck-deadline.conf"
    # The refused ones need no whole system: a small file system is refused the same way, before
    # any of it is written.
    mkdir -p "$work/small"
    head -c 1M /dev/urandom >"$work/small/filler"
    mkfs.ext4 -q -d "$work/small" "$small" 16M
    if ! "$repo/deploy/image/build-bundle.sh" --rootfs "$small" --version 9.0-other-key --cert "$work/other-keys/signer.cert.pem" \
        --key "$work/other-keys/signer.key.pem" --out "$work/bundles/other-key.raucb" 2>>"$work/bundles.log" ||
        ! "$repo/deploy/image/build-bundle.sh" --rootfs "$small" --version 9.0-other-board --compatible unwind-other-board-arm64 \
            --cert "$cert" --key "$key" --out "$work/bundles/other-board.raucb" 2>>"$work/bundles.log" ||
        ! "$repo/deploy/image/build-bundle.sh" --rootfs "$small" --version 9.0-cut-short --cert "$cert" --key "$key" \
            --out "$work/whole.raucb" 2>>"$work/bundles.log"; then
        cat "$work/bundles.log"
        return 1
    fi
    head -c $(($(stat -c %s "$work/whole.raucb") * 2 / 3)) "$work/whole.raucb" >"$work/bundles/cut-short.raucb"
    rm -rf "$work/whole.raucb" "$small" "$work/small"
    mkfs.ext4 -q -L unwind-bundles -d "$work/bundles" "$work/bundles.img" \
        "$(($(du -s -B1M "$work/bundles" | cut -f1) * 11 / 10 + 32))M" || return 1
    update_bytes=$(stat -c %s "$work/bundles/update.raucb")
    echo "bundles: update $((update_bytes / 1048576)) MiB, broken $(($(stat -c %s "$work/bundles/broken.raucb") / 1048576)) MiB; made in $((SECONDS - t)) s"
    rm -f "$work/bundles/broken.raucb" "$work/bundles/stuck.raucb"
}

# The update server (bundle-server.py) the last boot streams the update from, serving the
# bundles' directory; what it sent is in $work/server.log. Also a free port of the host's for
# the machine's SSH (qemu's hostfwd).
server_pid=
server_port=
ssh_port=
start_bundle_server() {
    rm -f "$work/server.port" "$work/server.log"
    ssh_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    python3 "$here/bundle-server.py" --dir "$work/bundles" --port-file "$work/server.port" --log "$work/server.log" &
    server_pid=$!
    for _ in $(seq 1 100); do
        [ -s "$work/server.port" ] && { server_port=$(cat "$work/server.port"); return 0; }
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    fail "the update server (bundle-server.py) did not start"
    return 1
}
stop_bundle_server() {
    [ -n "$server_pid" ] || return 0
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=
}
# maintainer_update CONSOLE NAME: when the probe asks for it ("install-wanted NAME"), the
# maintainer's update as deploy/README.md gives it: SSH with the setup file's key as
# "maintainer", then `sudo unwind-install-bundle URL` (the bundle streamed from the update
# server). Its exit status goes back to the probe (/run/unwind-test-installed-NAME), which goes
# on.
maintainer_update() {
    local rc
    if ! wait_console "$1" "UNWIND-PROBE install-wanted $2 " 1200; then
        fail "the maintainer's update: the probe never asked for it"
        return
    fi
    timeout 1200 ssh -n -i "$work/maintainer-key" -p "$ssh_port" -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o ConnectTimeout=60 -o LogLevel=ERROR maintainer@127.0.0.1 \
        "sudo unwind-install-bundle http://10.0.2.2:$server_port/$2.raucb; echo \$? | sudo tee /run/unwind-test-installed-$2 >/dev/null" \
        >"$work/ssh-$2.log" 2>&1
    rc=$?
    check "the maintainer logged in over SSH with the setup file's key and ran sudo unwind-install-bundle (ssh exit $rc: $(grep -v '^ *[0-9]*% ' "$work/ssh-$2.log" | tail -n 2 | tr '\n' ' ' | cut -c1-200))" [ "$rc" = 0 ]
}
# streamed NAME: "<bytes sent> <requests>" of NAME.raucb, from the update server's log.
streamed() { awk -v p="/$1.raucb" '$1 == "GET" && $2 == p {s += $4; n++} END {print s + 0, n + 0}' "$work/server.log" 2>/dev/null; }

# card_state NAME: every file of the data partition's state and configuration (/data/state,
# /data/etc-unwind) with its hash, read on the host from a copy of the partition whose journal
# was replayed (the machine was killed, as by a power cut), into $work/NAME.state.
card_state() {
    dd if="$image" of="$work/data-copy.img" bs=512 skip="$data_start" count="$data_size" conv=sparse status=none
    e2fsck -fy "$work/data-copy.img" >/dev/null 2>&1
    rm -rf "$work/data-copy"
    mkdir -p "$work/data-copy"
    debugfs -R "rdump /state /etc-unwind $work/data-copy" "$work/data-copy.img" >/dev/null 2>&1
    (cd "$work/data-copy" && find . -type f ! -name '.*' -print0 | sort -z | xargs -0 -r sha256sum) >"$work/$1.state"
    rm -rf "$work/data-copy" "$work/data-copy.img"
}
same_card_state() { # what, name before, name after
    if [ -s "$work/$2.state" ] && cmp -s "$work/$2.state" "$work/$3.state"; then
        pass "$1: every state file and the configuration byte-identical on the card ($(wc -l <"$work/$2.state") files)"
    else
        fail "$1: the card's state changed; what differs: $(diff "$work/$2.state" "$work/$3.state" | grep '^[<>]' | awk '{print $1, $3}' | sort -u -k2 | tr '\n' ' ')"
    fi
}

# The probe's lines of one boot.
probe_lines() { console "$1" | grep -a "^$2"; }
# hashes CONSOLE WHEN: the state's "sha256 path" lines the probe printed, sorted.
hashes() { probe_lines "$1" "UNWIND-HASH $2 " | awk '{print $3, $4}' | sort; }
same_state() { # what, console when, console when
    local a b
    a=$(hashes "$2" "$3")
    b=$(hashes "$4" "$5")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
        pass "$1: every state file and the configuration byte-identical ($(wc -l <<<"$a") files)"
    else
        fail "$1: the state changed ($(wc -l <<<"$a") files before); what differs: $(diff <(echo "$a") <(echo "$b") | grep '^[<>]' | awk '{print $1, $3}' | sort -u -k2 | tr '\n' ' ')"
    fi
}
install_rc() { probe_lines "$1" "UNWIND-PROBE install $2 " | tail -n 1 | awk '{print $4}'; }
install_said() { probe_lines "$1" "UNWIND-INSTALL $2 " | cut -d' ' -f3- | tr '\n' ' ' | cut -c1-200; }
slots_after() { probe_lines "$1" "UNWIND-PROBE slots-after $2 " | tail -n 1 | awk '{print $4, $5, $6}'; }
cmgs_since() { tail -n +"$(($1 + 1))" "$work/modem.log" | grep -c "^CMGS $2 "; }

# refused CONSOLE NAME WORDS: the bundle was refused, with WORDS in RAUC's reason, the slots as before.
refused() {
    local rc said
    rc=$(install_rc "$1" "$2")
    said=$(install_said "$1" "$2")
    check "a bundle $3 is refused (rauc install exit ${rc:-none}: $said)" \
        bash -c '[ -n "$1" ] && [ "$1" != 0 ] && grep -qiE "$2" <<<"$3"' _ "$rc" "$4" "$said"
    check "$2: the slots as they were ($(slots_after "$1" "$2"))" [ "$(slots_after "$1" "$2")" = "$slots_before" ]
}

# cut_point N: waits for the moment of power cut N (said in $cut_when): every second one while RAUC
# copies the system into slot B (2-8 s after the copy began: it hashes both slots and writes one,
# most of the install), the others 1-12 s into the probe's writes, early in the install (its
# checks of the bundle, the copy's start).
cut_point() {
    if [ "$updates" = 1 ] && [ $(($1 % 2)) = 0 ]; then
        wait_console "cut$1" "^UNWIND-STEP [0-9.]+ +[0-9]+% Copying image" $((SECONDS - boot_started + 300)) ||
            echo "cut $1: RAUC's copy was not seen to start"
        delay=$((RANDOM % 7 + 2))
        cut_when="$delay s after RAUC's copy began"
    else
        delay=$((RANDOM % 12 + 1))
        cut_when="$delay s into the writes"
    fi
    sleep "$delay"
}

# next_slot: the slot boot.scr starts next, from the card's slots' state: the first in the order
# with a try left (with none left, each gets three again and the first starts).
next_slot() {
    local order a b slot i
    read -r order a b < <(slots)
    for ((i = 0; i < ${#order}; i++)); do
        slot=${order:i:1}
        case $slot in
            A) [ "$a" -gt 0 ] 2>/dev/null && { echo A; return; } ;;
            B) [ "$b" -gt 0 ] 2>/dev/null && { echo B; return; } ;;
        esac
    done
    echo "${order:0:1}"
}

# install_during_cut N: whether the power went while "update" was being installed at cut N
# (counted in cuts_in_install; in cuts_copying when it fell in RAUC's copy): the card's state then
# still names the slot that ran, the install under way. Otherwise the install had ended (said).
# slot_after_cut: the slot the next boot must start, as the card's state names it.
slot_after_cut=A
install_during_cut() {
    local i=$1 started ended step ran
    started=$(probe_lines "cut$i" "UNWIND-PROBE install-started" | tail -n 1 | awk '{print $3}')
    ended=$(probe_lines "cut$i" "UNWIND-PROBE install-ended" | tail -n 1 | awk '{print $3}')
    # RAUC's last step before the power went ("90% Copying image to rootfs.1").
    step=$(probe_lines "cut$i" "UNWIND-STEP " | tr -d '\r' | tail -n 1 | cut -d' ' -f3- | sed 's/^ *//')
    ran=$(probe_field "cut$i" slot)
    slot_after_cut=$(next_slot)
    if [ -z "$started" ]; then
        fail "cut $i: no install was under way (the bundles' disk was not found)"
    elif [ -n "$ended" ] || [ "$slot_after_cut" != "$ran" ]; then
        echo "cut $i: the install had ended before the power went (exit ${ended:-not said yet}; slot $slot_after_cut starts next; RAUC's last step \"$step\")"
    else
        cuts_in_install=$((cuts_in_install + 1))
        [[ $step == *"Copying image"* && $step != *done* ]] && cuts_copying=$((cuts_copying + 1))
        echo "cut $i: during the install, at RAUC's step \"${step:-none yet}\""
    fi
    # What the probe's presses were, when one was held too long (its press()).
    probe_lines "cut$i" "UNWIND-PROBE press-held-long" | tr -d '\r' | sed "s/^/cut $i: /" || true
}

# restarts_by_itself NAME: boots NAME (a bad update on trial) until the machine restarts by
# itself (qemu ends: -no-reboot), 20 minutes at most; took: its seconds here, by_itself: 1 when it
# restarted.
restarts_by_itself() {
    local t
    boot "$1"
    t=$SECONDS
    while kill -0 "$qemu_pid" 2>/dev/null && [ $((SECONDS - t)) -lt 1200 ]; do sleep 2; done
    by_itself=0
    kill -0 "$qemu_pid" 2>/dev/null || by_itself=1
    power_off
    took=$((SECONDS - t))
}
# back_on_b NAME: boots NAME, the one after a bad update's, until its probe is done: slot B again
# and PANIC-ready (ready: at which second of its uptime); said: its `unwind status` Update line.
# Fails (1) when the probe never finished.
back_on_b() {
    boot "$1"
    if ! wait_console "$1" "UNWIND-PROBE done" 1200; then
        fail "$1: the probe never finished ($((SECONDS - boot_started)) s)"
        tail -n 40 "$work/$1.console"
        power_off
        return 1
    fi
    power_off
    check "$1: the next boot is slot B again ($(probe_lines "$1" "UNWIND-PROBE slot " | head -n 1 | awk '{print $3}'))" \
        grep -aq "^UNWIND-PROBE slot B" <(probe_lines "$1" "UNWIND-PROBE slot ")
    ready=$(probe_lines "$1" "UNWIND-PROBE panic-ready" | head -n 1 | awk '{print $3}')
    check "$1: PANIC-ready on slot B again (at ${ready:-never} s of its uptime)" test -n "$ready"
    said=$(probe_lines "$1" "UNWIND-UPDATE " | cut -d' ' -f2-)
}

# update_boots: the install on the last boot checked, then the trial, the broken bundle and the
# fall-back.
update_boots() {
    local from slot keeper said t
    slots_before=$(probe_lines final "UNWIND-PROBE slots " | tail -n 1 | awk '{print $3, $4, $5}')
    check "every power cut came during an install ($cuts_in_install of $cuts), $cuts_copying of them while RAUC copied the system" \
        bash -c '[ "$1" = "$2" ] && { [ "$2" -lt 2 ] || [ "$3" -ge 1 ]; }' _ "$cuts_in_install" "$cuts" "$cuts_copying"
    check "the device was idle before the installs: no session, no alert pending ($(probe_lines final "UNWIND-PROBE before-install " | awk '{print $3, "at", $4, "s"}'))" \
        grep -aq "^UNWIND-PROBE before-install idle " <(probe_lines final "UNWIND-PROBE before-install ")
    refused final other-key "signed under another authority" "signature|verif|certificate|issuer"
    refused final other-board "built for another board" "compatible"
    refused final cut-short "cut short" "exceeds bundle size|bundle size|too small|truncated"
    check "the update installs into slot B and is tried next, once (exit $(install_rc final update); slots $(slots_after final update))" \
        bash -c '[ "$1" = 0 ] && [[ $2 == "BA "*" 1" ]]' _ "$(install_rc final update)" "$(slots_after final update)"
    t=$(probe_lines final "UNWIND-PROBE install update " | tail -n 1 | awk '{print $NF}')
    install_took=$(awk -v a="$(probe_lines final "UNWIND-PROBE slots-after cut-short " | awk '{print $NF}')" -v b="$t" 'BEGIN { if (a != "" && b != "") printf "%.0f", b - a }')
    same_state "the install" final before final installed
    # Streamed: RAUC's adaptive install fetches only the blocks neither slot holds. The update is
    # slot A's own file system under a new version, so what it downloads is the install's fixed
    # cost: the manifest and signature, the block hashes, the verity tree of what it read.
    read -r streamed_bytes streamed_requests < <(streamed update)
    check "the update streamed from the update server: $((streamed_bytes / 1048576)) MiB downloaded of the $((update_bytes / 1048576)) MiB bundle in $streamed_requests requests (the blocks slot A holds were not fetched)" \
        bash -c '[ "$1" -gt 0 ] && [ $(($1 * 4)) -lt "$2" ]' _ "$streamed_bytes" "$update_bytes"

    # --- the new slot on trial -----------------------------------------------------------------
    from=$(wc -l <"$work/modem.log")
    extra="unwind_test.probe=update unwind_test.install=broken"
    bundles=1
    boot trial
    if ! wait_console trial "UNWIND-PROBE done" 1200; then
        fail "the update's trial boot: the probe never finished ($((SECONDS - boot_started)) s)"
        tail -n 40 "$work/trial.console"
        power_off
        return
    fi
    power_off
    slot=$(probe_lines trial "UNWIND-PROBE slot " | head -n 1 | awk '{print $3}')
    check "boot.scr started the new slot B on trial ($slot)" [ "$slot" = B ]
    check "slot B came up PANIC-ready" grep -aq "^UNWIND-PROBE panic-ready" <(probe_lines trial "UNWIND-PROBE")
    same_state "the update" final before trial trial
    keeper=$(probe_lines trial "UNWIND-KEEPER " | cut -d' ' -f2- | tr '\n' ' ')
    check "the slot keeper kept slot B once PANIC-ready ($keeper)" grep -q "slot B kept (on trial, PANIC-ready after" <<<"$keeper"
    said=$(probe_lines trial "UNWIND-UPDATE " | cut -d' ' -f2-)
    check "unwind status says it: $said" grep -q "^Update: *updated to $update_version (slot B)" <<<"$said"
    check "slot B is the one that boots now, with its three tries ($(probe_lines trial "UNWIND-PROBE slots " | tail -n 1 | awk '{print $3, $4, $5}'))" \
        bash -c '[[ $1 == "BA "*" 3" ]]' _ "$(probe_lines trial "UNWIND-PROBE slots " | tail -n 1 | awk '{print $3, $4, $5}')"
    check "on slot B, PANIC sends one AT+CMGS to each contact ($(cmgs_since "$from" +447700900123), $(cmgs_since "$from" 6045550100))" \
        [ "$(cmgs_since "$from" +447700900123):$(cmgs_since "$from" 6045550100)" = 1:1 ]
    # The trial has come up within its window: the side boots (side-boots.sh) run beside the rest.
    side_start
    check "the broken bundle installs into slot A, tried next (exit $(install_rc trial broken); slots $(slots_after trial broken))" \
        bash -c '[ "$1" = 0 ] && [[ $2 == "AB 1 "* ]]' _ "$(install_rc trial broken)" "$(slots_after trial broken)"

    # --- the broken system on trial, and the fall-back ------------------------------------------
    # The state as slot B left it: the broken system's trial and the fall-back must not touch it
    # (the device's own work after the fall-back, such as the calls of the PANIC above going on,
    # is the device's).
    card_state before-broken
    extra="unwind_test.probe=update"
    restarts_by_itself broken
    broken_took=$took
    check "the broken system booted on trial from slot A ($(probe_lines broken "UNWIND-PROBE slot " | head -n 1 | awk '{print $3}'))" \
        grep -aq "^UNWIND-PROBE slot A" <(probe_lines broken "UNWIND-PROBE slot ")
    check "it was never PANIC-ready, and the machine restarted by itself ($broken_took s here)" \
        bash -c '[ "$1" = 1 ] && ! grep -aq "^UNWIND-PROBE panic-ready" "$2"' _ "$by_itself" "$work/broken.console"
    check "slot A's only try is spent ($(slots))" bash -c '[[ $1 == "AB 0 "* ]]' _ "$(slots)"
    card_state after-broken
    same_card_state "the broken update's trial" before-broken after-broken
    from=$(wc -l <"$work/modem.log")
    extra="unwind_test.probe=update unwind_test.install=stuck"
    back_on_b fallback || return
    fallback_ready=$ready
    check "unwind status says the update did not come up, and why: $said" \
        grep -q "^Update: *the update to $broken_version did not come up; back on $update_version (slot B) .*not PANIC-ready within 150 s" <<<"$said"
    check "slot A is out of the order until the next install ($(probe_lines fallback "UNWIND-PROBE slots " | tail -n 1 | awk '{print $3, $4, $5}'))" \
        bash -c '[[ $1 == "B 0 "* ]]' _ "$(probe_lines fallback "UNWIND-PROBE slots " | tail -n 1 | awk '{print $3, $4, $5}')"
    check "after the fall-back, PANIC sends one AT+CMGS to each contact ($(cmgs_since "$from" +447700900123), $(cmgs_since "$from" 6045550100))" \
        [ "$(cmgs_since "$from" +447700900123):$(cmgs_since "$from" 6045550100)" = 1:1 ]
    # The kernel came in the bundle (slot B's own /boot), and the device trees the firmware hands
    # it are the boot partition's, still with I2C1 at 400 kHz.
    local b_start b_size kernel
    read -r b_start b_size < <(part_start 2)
    dd if="$image" of="$work/slot-b.img" bs=512 skip="$b_start" count="$b_size" conv=sparse status=none
    kernel=$(debugfs -R "stat /boot/vmlinuz" "$work/slot-b.img" 2>/dev/null | sed -n 's/^Fast link dest: "\(.*\)"$/\1/p')
    rm -f "$work/slot-b.img"
    check "slot B holds its own kernel (/boot/vmlinuz -> ${kernel:-nothing})" bash -c '[[ $1 == vmlinuz-* ]]' _ "$kernel"
    pi_device_trees "after the updates"
    stuck_boot
    # The watchdog's boot alone on the host: a second machine beside it could delay its feeding.
    side_join
    hung_boot
    extra=
    bundles=0
    echo "updates: bundle $((update_bytes / 1048576)) MiB, streamed ${streamed_bytes:-?} bytes of it in ${streamed_requests:-?} requests; its install ${install_took:-?} s (emulated); a broken update to PANIC-ready on the slot before it: $broken_took s here for the broken trial, then ${fallback_ready:-?} s of uptime; a stuck one: ${stuck_took:-?} s here, then ${stuck_fallback_ready:-?} s of uptime; a hung kernel restarted by the watchdog after ${hung_took:-?} s here; cuts during an install: $cuts_in_install"
}

# hung_boot: slot B once more, on a machine with a watchdog device (qemu's i6300esb; a Pi's is
# its SoC's): once PANIC-ready, the kernel crashes and never restarts the machine itself
# (kernel.panic 0, the probe says); the watchdog systemd feeds does, 15 s after its last feed at
# most (hung_took: seconds here from the crash to the restart).
hung_boot() {
    local t ident state timeout runtime panic
    extra="unwind_test.probe=hang"
    watchdog=1
    boot hang
    watchdog=0
    extra=
    hung_took=
    by_itself=0
    if wait_console hang "UNWIND-PROBE (hanging|done)" 900 && grep -aq "^UNWIND-PROBE hanging" "$work/hang.console"; then
        t=$SECONDS
        while kill -0 "$qemu_pid" 2>/dev/null && [ $((SECONDS - t)) -lt 300 ]; do sleep 1; done
        kill -0 "$qemu_pid" 2>/dev/null || by_itself=1
        hung_took=$((SECONDS - t))
    elif ! kill -0 "$qemu_pid" 2>/dev/null && grep -aq "sysrq triggered crash" "$work/hang.console"; then
        echo "hang: the machine crashed and restarted, but the probe's line before the crash never reached the console; the console's end:"
        tail -n 20 "$work/hang.console"
    elif ! kill -0 "$qemu_pid" 2>/dev/null; then
        echo "hang: the machine restarted before the crash (the watchdog on a host too busy to run it?); the console's end:"
        tail -n 20 "$work/hang.console"
    fi
    power_off
    read -r ident state timeout runtime _ < <(probe_lines hang "UNWIND-PROBE watchdog " | tr -d '\r' | cut -d' ' -f3-)
    panic=$(probe_field hang hanging)
    check "systemd feeds the machine's watchdog (${ident:-none}, ${state:-not said}, ${timeout:-?} s; RuntimeWatchdogUSec ${runtime:-?})" \
        bash -c '[ "$1" = active ] && [ "$2" = 15 ] && [ "$3" = 15s ]' _ "$state" "$timeout" "$runtime"
    check "a kernel that hangs once PANIC-ready (kernel.panic ${panic:-?}) is restarted by the watchdog (${hung_took:-never} s after the crash)" \
        bash -c '[ "$1" = 1 ] && [ "$2" = 0 ] && [ "$3" -ge 5 ] && [ "$3" -le 40 ] && grep -aq "Kernel panic" "$4"' _ "$by_itself" "$panic" "${hung_took:-0}" "$work/hang.console"
}

# stuck_boot: the system whose boot never reaches the slot keeper (installed into slot A by the
# fall-back boot) on its one try: restarted by the boot's deadline, and the slot before it says so.
stuck_boot() {
    local said
    check "the stuck bundle installs into slot A, tried next (exit $(install_rc fallback stuck); slots $(slots_after fallback stuck))" \
        bash -c '[ "$1" = 0 ] && [[ $2 == "AB 1 "* ]]' _ "$(install_rc fallback stuck)" "$(slots_after fallback stuck)"
    card_state before-stuck
    extra=
    restarts_by_itself stuck
    stuck_took=$took
    check "boot.scr started the stuck system from slot A on its last try ($(grep -a -m1 "^unwind: slot " "$work/stuck.console" | tr -d '\r'))" \
        grep -aq "^unwind: slot A, tries left after this boot: 0" "$work/stuck.console"
    check "its boot never reached the device, and the machine restarted by itself ($stuck_took s here)" \
        bash -c '[ "$1" = 1 ] && ! grep -aq "^UNWIND-PROBE" "$2"' _ "$by_itself" "$work/stuck.console"
    check "slot A's only try is spent ($(slots))" bash -c '[[ $1 == "AB 0 "* ]]' _ "$(slots)"
    card_state after-stuck
    same_card_state "the stuck update's boot" before-stuck after-stuck
    extra="unwind_test.probe=update"
    back_on_b stuck-fallback || return
    stuck_fallback_ready=$ready
    check "unwind status says the update did not come up, and why: $said" \
        grep -Eq "^Update: *the update to $stuck_version did not come up; back on $update_version \(slot B\) .*never reached the slot keeper: [0-9]+ s after its kernel started it was (in emergency mode|still starting)" <<<"$said"
}
