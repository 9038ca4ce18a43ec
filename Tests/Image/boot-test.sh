#!/usr/bin/env bash
# boot-test.sh -- the SD-card image booted in an emulated arm64 machine, from power-on to a
# PANIC that reaches the network, then power cuts.
#
#   Tests/Image/boot-test.sh [--deb FILE] [--image FILE] [--cuts N]
#
# The image is deploy/image/build-image.sh's, with the rig of Tests/Image/rig-root laid over it
# (a gpio-sim chip for the buttons and motor, an i2c-stub chip for the OLED, the probe that
# presses PANIC), this folder's unwind-test.conf as the card's unwind.conf and
# unwind-setup-test.txt as its setup file (CRLF, three contacts, the third's number mistyped).
# The machine is qemu-system-aarch64 -M virt (TCG) started with Debian's U-Boot for it
# (u-boot-qemu, beside the image), which runs the card's boot.scr as a Pi's U-Boot does: the card
# is a virtio disk, the modem a virtio console (hvc0) answered by modem.py on the host, the
# console the PL011 (ttyAMA0).
# What cannot be emulated: the VideoCore firmware that boots a real Pi (start4.elf reads
# config.txt and starts U-Boot's Pi build), the Pi's own GPIO and I2C controllers, its SD card
# controller.
#
# The card as built, checked: four partitions (boot, slots A and B, data) and the slots' state (A
# first, three tries each). First boot (the card 256 MiB bigger than the image), checked: slot A
# started by boot.scr and kept (its tries given back), the data partition grown to the card's
# end; the unit active and the device PANIC-ready; the setup file imported
# (contacts 1 and 2; line 10 named on the screen's result; the numbers taken off the card); the
# first frame counted; a PANIC held on gpio-sim as soon as the daemon runs, while the modem still
# registers (its first 20 s), is journaled at once and sends exactly one AT+CMGS to each of the
# two contacts, after the registration, and none to the third. Then --cuts N power cuts
# (default 5; Tests/Image/power-cuts.sh runs 50): the machine is killed at a random moment
# while the device writes (a session, a maintainer's change, an alert journaled and held
# unanswered by the modem) and an update installs into slot B (the cut early in the install;
# every second one while RAUC copies the system), booted again; each time the old slot
# starts, the file systems check clean, every state file parses (nothing set aside) and every
# alert the network had not taken goes out after the restart. Then the A/B updates
# (update-checks.sh).
#
# Beside the update checks' boots after the trial (alone at the end without them), two bad cards,
# each a copy of the card after its first boot (UNWIND_IMAGE_BADCARDS=0 leaves them out): one
# whose data partition was never made, with no setup file and no modem attached (the screen says
# there is no setup file and that nothing is kept; status says the state is in memory and the
# modem is not there); one whose data partition is full, with no display bus (status says the
# card is full and the display is lost; a maintainer's change fails with the card's own error;
# PANIC still reaches both contacts).
#
# Beside them too, on a copy of the card as built, its own Pi U-Boot in qemu's raspi3b
# (pi-uboot.py): with a modem talking and echoing on its UART it still runs boot.scr; with one
# sending random bytes and Ctrl-C, or nothing but Ctrl-C, the slot's kernel still starts.
#
# Prints "ok - ..." / "FAIL - ..." per check, "N passed, N failed, N skipped" last; exits 1 on a failure.
# The last boot rates the emulated CPU with 7-Zip, and the boots after a cut are scaled to a Pi
# Zero 2 W's (an estimate that errs high). Prints systemd-analyze's view of the first boot and of
# the last (time, critical-chain unwind.service, blame), from inside the guest.
# UNWIND_IMAGE_KEEP=1 keeps the work directory (the image, the consoles, the modem's log).
# shellcheck disable=SC2317,SC2016 # helpers run through traps and check; bash -c scripts expand their own arguments
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# log, die, pass, fail, check, finish
# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/toolkit.sh
. "$repo/deploy/lib/toolkit.sh"
deb=
image=
cuts=${UNWIND_IMAGE_CUTS:-5}
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) deb=$2; shift 2 ;;
        --image) image=$2; shift 2 ;;
        --cuts) cuts=$2; shift 2 ;;
        -h | --help) sed -n '2,51p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die --status 2 "unknown option $1" ;;
    esac
done

# shellcheck source-path=SCRIPTDIR source=../../deploy/lib/apt.sh
. "$repo/deploy/lib/apt.sh"
install_missing qemu-system-arm python3 mtools e2fsprogs dosfstools device-tree-compiler openssh-client ||
    die "could not install the emulator and the card's tools"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/unwind-boot-test.XXXXXX")
qemu_pid=
modem_pid=
side_pid=
# kill_tree PID: a process and everything it started (the side boots' shell, its qemu,
# pi-uboot.py's), each stopped before its children are listed, so that it starts no more.
kill_tree() {
    local child
    kill -STOP "$1" 2>/dev/null
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill -KILL "$1" 2>/dev/null
}
cleanup() {
    [ -n "$side_pid" ] && kill_tree "$side_pid"
    [ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null
    [ -n "$modem_pid" ] && kill "$modem_pid" 2>/dev/null
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null
    if [ "${UNWIND_IMAGE_KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

t0=$SECONDS
# The systems the update checks install: the card's own system under a new version, one whose
# daemon never starts, and one whose boot never reaches the device.
update_version=2.0-test
broken_version=3.0-broken-test
stuck_version=4.0-stuck-test
if [ -z "$image" ]; then
    # The rig's kernel modules, built once for the base's kernel (rig-modules.sh).
    cache=${UNWIND_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/unwind-image}
    base=$("$repo/deploy/image/build-image.sh" --base-only 2>"$work/base.log") || { cat "$work/base.log"; fail "the base root"; finish; }
    "$here/rig-modules.sh" "$base" "$cache/rig-modules" >"$work/modules.log" 2>&1 || { tail -n 30 "$work/modules.log"; fail "the rig's modules"; finish; }
    mkdir -p "$work/modules/usr/lib/unwind-test"
    cp "$cache/rig-modules/gpio-sim.ko" "$cache/rig-modules/i2c-stub.ko" "$cache/rig-modules/7zr" "$work/modules/usr/lib/unwind-test/"
    image=$work/unwind-test.img
    # The test's own signing keys: the image trusts "Unwind test"; "Not Unwind" signs a bundle
    # that must be refused.
    if ! "$repo/deploy/image/signing-key.sh" "$work/keys" "Unwind test" 2>/dev/null ||
        ! "$repo/deploy/image/signing-key.sh" "$work/other-keys" "Not Unwind" 2>/dev/null; then
        fail "the test's signing keys"
        finish
    fi
    mkdir -p "$work/bundles"
    # The maintainer's SSH key, in the setup file as a clinic gives it (the update checks log in
    # with it).
    ssh-keygen -q -t ed25519 -N "" -C "unwind boot test" -f "$work/maintainer-key" </dev/null || { fail "the maintainer's SSH key"; finish; }
    { cat "$here/unwind-setup-test.txt"; printf 'ssh key: %s\r\n' "$(cat "$work/maintainer-key.pub")"; } >"$work/unwind-setup.txt"
    args=(--out "$image" --overlay "$here/rig-root" --overlay "$work/modules" --config "$here/unwind-test.conf" --setup "$work/unwind-setup.txt"
        --kernel-args "console=ttyAMA0 panic=-1 systemd.show_status=0 quiet"
        --keyring "$work/keys/ca.cert.pem" --bundle "$work/bundles/update.raucb" --bundle-version "$update_version"
        --signing-cert "$work/keys/signer.cert.pem" --signing-key "$work/keys/signer.key.pem")
    [ -n "$deb" ] && args+=(--deb "$deb")
    # A kernel command line U-Boot's shell would parse (boot.scr expands it into bootargs) is
    # refused before anything is made.
    out=$("$repo/deploy/image/build-image.sh" "${args[@]}" --kernel-args "console=ttyAMA0 dyndbg=\"file x.c +p\"" 2>&1)
    rc=$?
    check "build-image.sh refuses a kernel command line with quotes in it (exit $rc): $(tail -n 1 <<<"$out")" \
        bash -c '[ "$1" != 0 ] && grep -q "^build-image: error: --kernel-args: only letters" <<<"$2" && [ ! -e "$3" ]' _ "$rc" "$out" "$image"
    # So is one that would make unwind-boot.txt longer than boot.scr takes (it would leave it out).
    out=$("$repo/deploy/image/build-image.sh" "${args[@]}" --kernel-args "console=ttyAMA0 $(seq -f 'm%04g.p=1' 0 200 | paste -sd ' ' | head -c 1890)" 2>&1)
    rc=$?
    check "build-image.sh refuses a kernel command line one character longer than boot.scr takes (exit $rc): $(tail -n 1 <<<"$out")" \
        bash -c '[ "$1" != 0 ] && grep -q "^build-image: error: --kernel-args: 1906 characters; at most 1905 " <<<"$2" && [ ! -e "$3" ]' _ "$rc" "$out" "$image"
    if "$repo/deploy/image/build-image.sh" "${args[@]}" >"$work/build.log" 2>&1; then
        pass "build-image.sh with the rig's overlay ($((SECONDS - t0)) s; $(tail -n 2 "$work/build.log" | head -n 1 | sed 's/^build-image: //'))"
    else
        tail -n 30 "$work/build.log"
        fail "build-image.sh"
        finish
    fi
fi
u_boot=${image%.img}.qemu-u-boot.bin
[ -f "$work/bundles/update.raucb" ] || { skip "the A/B update checks" "an --image was given: they need the bundle built with it"; updates=0; }

# The partitions' offsets, for the checks from the host (mtools, e2fsck on a copy).
part_start() { sfdisk -J "$image" | python3 -c "import json,sys; p=json.load(sys.stdin)['partitiontable']['partitions'][$1]; print(p['start'], p['size'])"; }
read -r boot_start _ < <(part_start 0)
read -r root_start root_size < <(part_start 1)
read -r data_start data_size < <(part_start 3)

# One boot: qemu in the background, the modem on its virtio console, the console in a file.
# boot NAME [modem.py options...]; card= another image, extra= the rig's unwind_test.* switches
# (through the machine's firmware configuration: the kernel's command line is the card's own),
# modem=0 no modem attached. The machine starts Debian's U-Boot for it (u-boot-qemu, beside the
# image), which runs the card's boot.scr: the same slot choice as on a Pi.
# The emulated CPU: qemu's "max" without pointer authentication (computed in software by TCG) and
# without SVE, which no board has. It runs the same boot test in two thirds of a Cortex-A72's
# time while 7-Zip's loops gain only 9 % (Tests/measurements.md): the kernel and the libraries
# pick later features when a CPU has them, and which of them saves the time is not established.
# That the board's programs use no instruction its Cortex-A53 lacks is the arm64 stage's check
# (qemu-user as a Cortex-A53, arm64_cpu in deploy/lib/toolkit.sh).
guest_cpu=max,pauth=off,sve=off
card=
extra=
modem=1
# The modem's socket and what it logs: the side boots (side_start, below) have their own.
modem_sock=$work/modem.sock
modem_log=$work/modem.log
bundles=0
network=0
updates=${updates:-1}
boot() {
    local name=$1
    shift
    rm -f "$modem_sock"
    : >"$work/$name.console"
    local serial=() disks=() nic=(-nic none)
    # shellcheck disable=SC2054 # qemu's own option syntax
    [ "$bundles" = 1 ] && [ "$updates" = 1 ] && disks=(-drive "file=$work/bundles.img,format=raw,if=none,id=bundles,readonly=on" -device virtio-blk-pci,drive=bundles)
    [ "$modem" = 1 ] && serial=(-device virtio-serial-pci -chardev "socket,id=modem,path=$modem_sock,server=on,wait=off"
        -device "virtconsole,chardev=modem")
    # The host's update server (bundle-server.py on 127.0.0.1) is 10.0.2.2 to the machine.
    # The maintainer's SSH reaches the machine's port 22 through $ssh_port on the host's loopback.
    # shellcheck disable=SC2054 # qemu's own option syntax
    [ "$network" = 1 ] && nic=(-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$ssh_port-:22")
    # A watchdog device (qemu's i6300esb, which resets the machine) only where a boot asks for it:
    # the card's systemd feeds any watchdog it finds at least every 7.5 s, and a host too busy to
    # run the machine for 15 s would restart a boot that is only slow.
    local devices=()
    [ "${watchdog:-0}" = 1 ] && devices=(-device i6300esb)
    qemu-system-aarch64 -M virt -cpu "$guest_cpu" -smp 2 -m 1024 -display none -no-reboot \
        -bios "$u_boot" -fw_cfg "name=opt/unwind-test,string=${extra:-none}" \
        -drive "file=${card:-$image},format=raw,if=none,id=card" -device virtio-blk-pci,drive=card \
        "${disks[@]}" "${serial[@]}" "${devices[@]}" \
        -serial "file:$work/$name.console" "${nic[@]}" -monitor none >"$work/$name.qemu" 2>&1 &
    qemu_pid=$!
    if [ "$modem" = 1 ]; then
        python3 "$here/modem.py" --socket "$modem_sock" --log "$modem_log" "$@" &
        modem_pid=$!
    fi
    boot_started=$SECONDS
    boot_name=$name
}
# Waits until the console shows PATTERN (grep -E) or the deadline (seconds) passes.
wait_console() {
    local name=$1 pattern=$2 deadline=$3
    while [ $((SECONDS - boot_started)) -lt "$deadline" ]; do
        grep -qaE "$pattern" "$work/$name.console" && return 0
        kill -0 "$qemu_pid" 2>/dev/null || return 1
        sleep 1
    done
    return 1
}
# What each boot cost, said when it ends and listed at the end ("where the time went"): the
# seconds here and the host CPU seconds of its qemu (utime and stime, /proc/PID/stat's fields 14
# and 15); "?" for a machine that stopped by itself, which this shell has reaped by then.
boot_costs=()
power_off() {
    local cpu
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f", ($12 + $13) / hz }' "/proc/$qemu_pid/stat" 2>/dev/null)
    echo "boot $boot_name: $((SECONDS - boot_started)) s here, ${cpu:-?} s of the host's CPU"
    boot_costs+=("$boot_name $((SECONDS - boot_started)) ${cpu:-?}")
    kill -KILL "$qemu_pid" 2>/dev/null
    wait "$qemu_pid" 2>/dev/null
    if [ -n "$modem_pid" ]; then
        kill "$modem_pid" 2>/dev/null
        wait "$modem_pid" 2>/dev/null
    fi
    qemu_pid=
    modem_pid=
}
# console NAME: the boot's console without CRs, each rig line from its marker on: what else was
# written to the console before it on the same line (systemd's terminal reset, a kernel message)
# left out.
console() { tr -d '\r' <"$work/$1.console" | sed 's/^.*\(UNWIND-[A-Z]\{1,\} \)/\1/'; }
probe() { console "$1" | grep -a "^UNWIND-PROBE $2 " | tail -n 1 | awk '{print $NF}'; }
probe_field() { console "$1" | grep -a "^UNWIND-PROBE $2 " | tail -n 1 | awk '{print $3}'; }
checks_of() { # console -> pass/fail per UNWIND-CHECK line
    while read -r _ verdict what; do
        if [ "$verdict" = ok ]; then pass "$1: $what"; else fail "$1: $what"; fi
    done < <(console "$1" | grep -a '^UNWIND-CHECK ')
}

# A partition out of the image, checked on a copy (a journal replay writes).
fs_clean() { # start size
    dd if="$image" of="$work/fs.img" bs=512 skip="$1" count="$2" status=none
    e2fsck -fy "$work/fs.img" >"$work/fsck.out" 2>&1
    fs_first=$? # 0: clean as left; 1: corrected (the journal replayed), for the figures
    e2fsck -fn "$work/fs.img" >>"$work/fsck.out" 2>&1 || return 1
    [ "$fs_first" -le 1 ]
}

# --- the card as built ------------------------------------------------------------------------
# pi_device_trees WHEN: the Pi 3, 4 and Zero 2 W device trees on the card's boot partition (the
# firmware hands them to U-Boot and the kernel) have I2C1 at 400 kHz, and every Pi tree there
# has U-Boot's bootdelay -2.
pi_device_trees() {
    local dtb hz delay trees unset=
    for dtb in bcm2711-rpi-4-b.dtb bcm2837-rpi-3-b.dtb bcm2837-rpi-zero-2-w.dtb; do
        mcopy -o -i "$image@@$((boot_start * 512))" "::$dtb" "$work/$dtb" 2>/dev/null
        hz=$(fdtget "$work/$dtb" /soc/i2c@7e804000 clock-frequency 2>/dev/null)
        check "$1, $dtb: I2C1 at 400 kHz on the card ($hz)" [ "$hz" = 400000 ]
    done
    trees=$(mdir -b -i "$image@@$((boot_start * 512))" :: 2>/dev/null | sed -n 's|^::/\(bcm2[^/]*\.dtb\)$|\1|p')
    for dtb in $trees; do
        mcopy -o -i "$image@@$((boot_start * 512))" "::$dtb" "$work/$dtb" 2>/dev/null
        delay=$(fdtget -t i "$work/$dtb" /config bootdelay 2>/dev/null)
        [ "$delay" = -2 ] || unset="$unset $dtb"
    done
    check "$1: U-Boot boots without reading the UART in all $(wc -w <<<"$trees") Pi trees (bootdelay -2; not in:${unset:- none})" \
        bash -c '[ -n "$1" ] && [ -z "$2" ]' _ "$trees" "$unset"
}
pi_device_trees "as built"
# The Pi's U-Boot checks, the bad cards and the side boots that run them (side-boots.sh).
# shellcheck source-path=SCRIPTDIR source=side-boots.sh
. "$here/side-boots.sh"
# The slots' state as a boot reads it ("AB 3 3"; Tests/Image/slot-state.py).
slots() { python3 "$here/slot-state.py" read "$image"; }
pi_card
check "the card: boot, slots A and B, data; the slots' state: A first, 3 tries each ($(slots))" \
    bash -c '[ "$(sfdisk -J "$1" | python3 -c "import json,sys; print(len(json.load(sys.stdin)[\"partitiontable\"][\"partitions\"]))")" = 4 ] && [ "$2" = "AB 3 3" ]' _ "$image" "$(slots)"
# shellcheck source-path=SCRIPTDIR source=update-checks.sh
. "$here/update-checks.sh"
cuts_in_install=0
cuts_copying=0
if [ "$updates" = 1 ]; then
    prepare_bundles || { fail "the update bundles"; updates=0; }
fi
boot_sum() { dd if="$image" bs=512 skip="$boot_start" count=$((root_start - boot_start)) status=none | sha256sum; }

# --- the first boot --------------------------------------------------------------------------
# Its modem registers only 20 s after its bring-up began, as after a power cut; the probe presses
# PANIC as soon as the daemon runs.
register_after=20
# A card bigger than the image, as every real one is: the data partition grows into the rest.
truncate -s +256M "$image"
: >"$work/modem.log"
# However slow the machine, the modem registers only once the probe has read the device's
# status after its press (UNWIND-EARLY; 300 s at most), so the press is always before it.
rm -f "$work/may-register"
boot first --register-after "$register_after" --register-when "$work/may-register"
(
    for _ in $(seq 1 600); do
        grep -aq '^UNWIND-EARLY Readiness' "$work/first.console" && break
        sleep 0.5
    done
    touch "$work/may-register"
) &
if wait_console first "UNWIND-PROBE (done|not-ready)" 900; then
    pass "first boot: the probe ran (power-on to PANIC-ready $(probe first panic-ready) s of emulated uptime, the modem registering for its first $register_after s; $((SECONDS - boot_started)) s here)"
else
    fail "first boot: the probe never finished ($((SECONDS - boot_started)) s); the console's end:"
    tail -n 40 "$work/first.console"
    end_early
fi
status=$(grep -a '^UNWIND-STATUS ' "$work/first.console" | sed 's/^UNWIND-STATUS //')
check "the device was PANIC-ready (Readiness: ready)" grep -q "^UNWIND-PROBE panic-ready" <(grep -a "^UNWIND-PROBE" "$work/first.console")
start_us=$(probe first unit-started-us)
ready_s=$(probe first panic-ready)
grep -a "UNWIND-PROBE unit-started-us" "$work/first.console" | head -n 1
if [ -n "$start_us" ] && [ -n "$ready_s" ]; then
    pass "the daemon's own share: unit start at $(awk "BEGIN{printf \"%.1f\", $(grep -a 'UNWIND-PROBE unit-started-us' "$work/first.console" | awk '{print $3}')/1e6}") s, PANIC-ready at $ready_s s (emulated)"
fi
# journaled_ready BOOT: the daemon journaled PANIC-ready, and no later than the probe saw it.
journaled_ready() {
    local d p
    d=$(probe_field "$1" daemon-ready)
    p=$(probe "$1" panic-ready)
    check "$1: the daemon journaled PANIC-ready at ${d:-?} s of uptime, the probe saw it at ${p:-?} s" \
        awk -v d="$d" -v p="$p" 'BEGIN { exit !(d ~ /^[0-9]+([.][0-9]+)?$/ && p ~ /^[0-9]+([.][0-9]+)?$/ && d + 0 <= p + 0) }'
}
journaled_ready first
checks_of first
check "frames were drawn on the bus" grep -qE "^Loop: +[1-9][0-9]* frames" <<<"$status"
check "the setup file's result names line 10 (contact 3's number)" grep -aq "UNWIND-SETUP .*line 10" "$work/first.console"

wait_console first "UNWIND-PROBE done" 300 >/dev/null
n1=$(grep -c '^CMGS +447700900123 ' "$work/modem.log")
n2=$(grep -c '^CMGS 6045550100 ' "$work/modem.log")
n3=$(grep -c '^CMGS .*900456' "$work/modem.log")
check "PANIC: one AT+CMGS to contact 1 (+447700900123): $n1" [ "$n1" = 1 ]
check "PANIC: one AT+CMGS to contact 2 (6045550100): $n2" [ "$n2" = 1 ]
check "nothing to contact 3, whose number was wrong: $n3" [ "$n3" = 0 ]
# The PANIC pressed while the modem still registered: journaled at once, taken by the network
# only after it registered (what it refused before is in the log as REFUSED).
early=$(probe_field first early-outbox)
check "a PANIC held as soon as the daemon ran was journaled at once (outbox: ${early:-nothing read})" \
    bash -c '[ -n "$1" ] && [ "$1" != - ]' _ "$early"
check "it was held while the modem still registered ($(grep -a '^UNWIND-EARLY Readiness' "$work/first.console" | tr -d '\r' | cut -c14-110))" \
    grep -aqE '^UNWIND-EARLY Readiness: +not ready' "$work/first.console"
registered_at=$(grep -n -m1 '^REGISTERED' "$work/modem.log" | cut -d: -f1)
first_cmgs=$(grep -n -m1 '^CMGS ' "$work/modem.log" | cut -d: -f1)
check "the network took its alerts only once the modem registered (refused before: $(grep -c '^REFUSED ' "$work/modem.log"))" \
    bash -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" -lt "$2" ]' _ "$registered_at" "$first_cmgs"
power_off
setup_on_card=$(mtype -i "$image@@$((boot_start * 512))" ::unwind-setup.txt 2>/dev/null)
check "the contacts' numbers are off the card" bash -c '! grep -qE "7700 900123|555-0100" <<<"$1"' _ "$setup_on_card"
check "the card holds the result beside the setup file" mtype -i "$image@@$((boot_start * 512))" ::unwind-setup-result.txt
data_before=$data_size
read -r data_start data_size < <(part_start 3)
check "the data partition grew to the card's end ($((data_before / 2048)) -> $((data_size / 2048)) MiB)" \
    bash -c '[ "$1" -gt "$2" ] && [ $(( $(stat -c %s "$3") / 512 - $4 - $1 )) -lt 2048 ]' _ "$data_size" "$data_before" "$image" "$data_start"
check "U-Boot's boot.scr started slot A ($(probe_field first slot)), the device kept it (slots: $(slots))" \
    bash -c '[ "$1" = A ] && [ "$2" = "AB 3 3" ] && grep -aq "^unwind: slot A" "$3"' _ "$(probe_field first slot)" "$(slots)" "$work/first.console"
check "the root file system checks clean after the power cut" fs_clean "$root_start" "$root_size"
check "the data file system checks clean after the power cut (journal replayed)" fs_clean "$data_start" "$data_size"
echo "first boot: $((SECONDS - t0)) s in all"
analysis() { grep -a '^UNWIND-ANALYZE ' "$work/$1.console" | tr -d '\r' | sed "s/^UNWIND-ANALYZE /  $1: /"; }
echo "the first boot, as systemd saw it (systemd-analyze time, critical-chain unwind.service, blame):"
analysis first

# --- bad cards ---------------------------------------------------------------------------------
# Their cards, copies of the card as the first boot left it, for the side boots (side-boots.sh).
[ "${UNWIND_IMAGE_BADCARDS:-1}" = 1 ] && bad_cards

# pi_estimate FASTEST SLOWEST: the boots after a cut (their modem registers at once), kernel start
# to PANIC-ready on a Raspberry Pi Zero 2 W, estimated from the emulated ones. Here the boot is CPU
# work (the card is a file in the host's memory), so its seconds are scaled by 7-Zip's
# single-thread rating in the last boot (the probe's cpu-mips) against the Pi's published one:
# 835 MIPS at 1 GHz (Thomas Kaiser's article on the Zero 2 W). deploy/README.md says why this
# errs high, gives a second estimate that errs low, and what both leave out.
pi_mips=835
pi_estimate() {
    local mips
    mips=$(probe_field final cpu-mips)
    check "the last boot measured its CPU (7-Zip, one thread: ${mips:-no rating} MIPS)" grep -qE '^[1-9][0-9]*$' <<<"$mips"
    grep -qE '^[1-9][0-9]*$' <<<"$mips" || return 0
    pi() { awk -v s="$1" -v m="$mips" -v p="$pi_mips" 'BEGIN { printf "%.1f", s * m / p }'; }
    [ -n "$1" ] && [ -n "$2" ] || return 0
    echo "a Pi Zero 2 W, scaled by the CPU alone (it errs high: TCG runs the kernel's work far more slowly" \
        "than 7-Zip's loops): the emulated CPU at $mips MIPS (7-Zip, one thread), the Pi's at $pi_mips;" \
        "kernel start to PANIC-ready after a cut $1-$2 s emulated -> $(pi "$1")-$(pi "$2") s," \
        "then the firmware's 1.5-2 s and U-Boot's before the kernel"
}

# --- power cuts --------------------------------------------------------------------------------
# Each boot checks what the last cut left (the probe's UNWIND-CHECK lines), then writes until the
# machine is killed at a random moment; the modem holds every submit, so a PANIC's alerts are
# journaled and unconfirmed when the power goes.
held_before=$(grep -c '^HELD ' "$work/modem.log")
boot_after_setup=$(boot_sum)
# The alerts in the outbox that the network had not taken, at the probe's last look before a cut,
# must all be in the outbox at the next boot (it resumes them; nothing settles them meanwhile:
# the modem holds every submit and sends no delivery reports).
journaled=-
with_alerts=0
alerts_across=0
alerts_found=0
replayed=0
readies=()
daemon_readies=()
failed_before_cuts=$checks_failed
subset() { # a,b,c  x,y -> every id of $1 in $2
    local id
    [ "$1" = - ] && return 0
    for id in ${1//,/ }; do [[ ",$2," == *",$id,"* ]] || return 1; done
}
found_again() { # cut, the ids on their way before it, the outbox at the next boot
    local what="cut $1: every alert on its way before it is in the outbox after it (${2//,/ })"
    if subset "$2" "$3"; then
        pass "$what"
        [ "$2" = - ] || alerts_found=$((alerts_found + $(tr ',' '\n' <<<"$2" | wc -l)))
    else
        fail "$what; the outbox at the next boot: ${3:-nothing read}"
    fi
}
for ((i = 1; i <= cuts; i++)); do
    # Each cut also comes while an update is being installed into slot B.
    extra="unwind_test.install-during-cut=1"
    bundles=1
    boot "cut$i" --hold-submits 1000000
    extra=
    bundles=0
    if ! wait_console "cut$i" "UNWIND-PROBE (workload|not-ready)" 900; then
        fail "boot after power cut $((i - 1)): the probe never reached its workload ($((SECONDS - boot_started)) s)"
        tail -n 40 "$work/cut$i.console"
        end_early
    fi
    # The install starts beside the workload, once the bundles' disk is mounted: on a busy host
    # that can come seconds after the workload, and the cut must come during the install.
    [ "$updates" = 1 ] && wait_console "cut$i" "UNWIND-PROBE install-(started|ended)" $((SECONDS - boot_started + 120))
    checks_of "cut$i"
    [ "$updates" = 1 ] && [ "$i" -gt 1 ] &&
        check "after a cut during an install, the old slot booted ($(probe_field "cut$i" slot))" [ "$(probe_field "cut$i" slot)" = "$slot_after_cut" ]
    ready=$(probe "cut$i" panic-ready)
    [ -n "$ready" ] && readies+=("$ready")
    journaled_ready "cut$i"
    daemon_ready=$(probe_field "cut$i" daemon-ready)
    [[ $daemon_ready =~ ^[0-9]+([.][0-9]+)?$ ]] && daemon_readies+=("$daemon_ready")
    at_boot=$(probe_field "cut$i" outbox-at-boot)
    if [ "$i" -gt 1 ]; then
        found_again $((i - 1)) "$journaled" "$at_boot"
    fi
    cut_point "$i"
    power_off
    # The last whole line the probe wrote before the power went.
    journaled=$(tr -d '\r' <"$work/cut$i.console" | grep -a "^UNWIND-PROBE outbox [^ ]* [0-9.]*$" | tail -n 1 | awk '{print $3}')
    journaled=${journaled:--}
    [ "$updates" = 1 ] && install_during_cut "$i"
    if [ "$journaled" != - ]; then
        with_alerts=$((with_alerts + 1))
        alerts_across=$((alerts_across + $(tr ',' '\n' <<<"$journaled" | wc -l)))
    fi
    echo "power cut $i: booted to PANIC-ready at ${daemon_ready:-?} s (emulated uptime; the probe saw it at $ready s), cut $cut_when; outbox at the cut: $journaled"
    check "cut $i: the root file system checks clean" fs_clean "$root_start" "$root_size"
    check "cut $i: the data file system checks clean (journal replayed)" fs_clean "$data_start" "$data_size"
    [ "${fs_first:-0}" = 1 ] && replayed=$((replayed + 1))
done
if [ "$cuts" -gt 0 ]; then
    # The last boot, with a modem that answers: what the cuts left journaled goes out.
    from=$(wc -l <"$work/modem.log")
    extra="unwind_test.final=1"
    # The update itself: the maintainer installs it over SSH, streamed from the update server
    # (the refused ones come on the disk).
    [ "$updates" = 1 ] && start_bundle_server && bundles=1 && network=1 &&
        extra="$extra unwind_test.install=other-key+other-board+cut-short+ssh:update"
    boot final
    extra=
    bundles=0
    network=0
    if wait_console final "UNWIND-PROBE (outbox-unsent-final|not-ready)" 1200; then
        checks_of final
        echo "a later boot (nothing new to import), as systemd saw it:"
        analysis final
        left=$(probe_field final outbox-unsent-final)
        check "the last boot: every alert on its way at a cut was taken by the network (left: ${left:-nothing read})" [ "$left" = - ]
        found_again "$cuts" "$journaled" "$(probe_field final outbox-at-boot)"
        held=$(tail -n +"$((held_before + 1))" "$work/modem.log" | sed -n 's/^HELD //p' | sort -u)
        # No PANIC on this boot: a submit to a held number is one the cuts left.
        for number in $held; do
            check "an alert to $number held when the power went was sent after the restart" \
                bash -c 'tail -n +"$2" "$1" | grep -q "^CMGS $3 "' _ "$work/modem.log" "$((from + 1))" "$number"
        done
        [ -n "$held" ] || echo "(no alert was on its way at the last cut)"
        [ "$updates" = 1 ] &&
            check "the last boot, after a cut during an install: the old slot ($(probe_field final slot))" [ "$(probe_field final slot)" = "$slot_after_cut" ]
        [ "$updates" = 1 ] && [ -n "$server_pid" ] && maintainer_update final update
        [ "$updates" = 1 ] && { wait_console final "UNWIND-PROBE done" 1800 || fail "the last boot: the probe never finished its installs"; }
    else
        fail "the last boot: the probe never reached its checks"
        tail -n 40 "$work/final.console"
    fi
    stop_bundle_server
    power_off
    check "the boot partition was not written after the setup (nothing new to import)" [ "$(boot_sum)" = "$boot_after_setup" ]
    sorted=$(printf '%s\n' "${readies[@]}" | sort -n)
    echo "figures: $cuts cuts, $((checks_failed - failed_before_cuts)) failed checks after them; ${#readies[@]} of $cuts boots PANIC-ready," \
        "at $(head -n 1 <<<"$sorted")-$(tail -n 1 <<<"$sorted") s emulated (median $(sed -n "$(((${#readies[@]} + 1) / 2))p" <<<"$sorted"));" \
        "the data partition's journal replayed after $replayed cuts; alerts on their way at $with_alerts cuts ($alerts_across in all)," \
        "$alerts_found of them found in the outbox at the next boot"
    # The daemon's own journaled moments, when every boot has one: the probe's look follows them.
    if [ "${#daemon_readies[@]}" -gt 0 ] && [ "${#daemon_readies[@]}" = "${#readies[@]}" ]; then
        sorted=$(printf '%s\n' "${daemon_readies[@]}" | sort -n)
        echo "figures: the daemon journaled PANIC-ready at $(head -n 1 <<<"$sorted")-$(tail -n 1 <<<"$sorted") s of emulated uptime" \
            "(median $(sed -n "$(((${#daemon_readies[@]} + 1) / 2))p" <<<"$sorted"))"
    fi
    pi_estimate "$(head -n 1 <<<"$sorted")" "$(tail -n 1 <<<"$sorted")"
fi
if [ "$updates" = 1 ] && [ "$cuts" -gt 0 ]; then
    update_boots
fi
side_start
side_join
echo "boot test: $((SECONDS - t0)) s in all; the boots (seconds here / of the host's CPU): $(printf '%s, ' "${boot_costs[@]}" | sed 's/ \([0-9?]*\) \([0-9?]*\), /: \1 \/ \2; /g; s/; $//')"
finish
