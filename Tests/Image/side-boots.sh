# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2016 # boot-test.sh's variables, read and set; bash -c scripts expand their own arguments
# side-boots.sh -- the boots of the boot test (sourced by Tests/Image/boot-test.sh, whose card,
# boot and checks they use) that need nothing from the boots after the first: the card's own Pi
# U-Boot in qemu's raspi3b on a copy of the card as built (pi_card, pi_uboot), the emulated
# machine's U-Boot on that copy with its slots' state unreadable (unreadable_state), with
# unwind-boot.txt edited by hand (edited_boot_txt) and at the longest boot.scr takes and past it
# (long_boot_txt); two bad cards, copies of the card after its first boot (bad_cards,
# bad_card_boots). side_start runs them in a subshell beside the update checks' boots, side_join
# adds what they found.

# pi_card: the card as built, for pi_uboot (a side boot: the first boot changes the card), with
# its slots' state apart (each of pi_uboot's runs starts from it).
pi_card() {
    local pi=$work/pi-card.img size=1
    mcopy -o -i "$image@@$((boot_start * 512))" ::u-boot.bin "$work/u-boot-rpi.bin" 2>/dev/null
    mcopy -o -i "$image@@$((boot_start * 512))" ::bcm2837-rpi-zero-2-w.dtb "$work/pi-zero-2-w.dtb" 2>/dev/null
    cp --sparse=always "$image" "$pi"
    while [ "$size" -lt "$(stat -c %s "$pi")" ]; do size=$((size * 2)); done
    truncate -s "$size" "$pi" # qemu's SD card: a power of two
    dd if="$image" of="$work/pi-slot-state.bin" bs=1024 skip=1024 count=32 status=none
}
# The card's own U-Boot for the Pi and its Zero 2 W device tree in qemu's Raspberry Pi 3 machine,
# a modem talking on the header UART from power-on and echoing U-Boot's words (pi-uboot.py): the
# card's boot.scr must run. Then the same with the tree's /config/bootdelay taken out, which must
# stop at U-Boot's prompt: the check sees the danger it guards against.
pi_uboot() {
    local pi=$work/pi-card.img out dtb=$work/pi-zero-2-w.dtb
    out=$(python3 "$here/pi-uboot.py" --card "$pi" --u-boot "$work/u-boot-rpi.bin" --dtb "$dtb" --timeout 120)
    check "the Pi's U-Boot (qemu raspi3b), a modem talking and echoing on its UART from power-on: $out" grep -q "^boot.scr ran" <<<"$out"
    cp "$dtb" "$work/no-bootdelay.dtb"
    fdtput -d "$work/no-bootdelay.dtb" /config bootdelay
    out=$(python3 "$here/pi-uboot.py" --card "$pi" --u-boot "$work/u-boot-rpi.bin" --dtb "$work/no-bootdelay.dtb" --timeout 30)
    check "... and without the device tree's bootdelay, the same modem stops it: $out" grep -q "^stopped (at U-Boot's prompt)" <<<"$out"
    # A modem sending random bytes and Ctrl-C (0x03) through the whole of boot.scr, then one sending
    # nothing but Ctrl-C, so that every look for one finds it (a loop in boot.scr would be left at
    # its first turn, with no slot chosen): slot A's kernel still starts, its try counted once.
    # Each starts from a slots' state a boot must read right (boot.cmd): a write cut short in the
    # copy with the later count, so the other is read (had the cut write been read, slot B would
    # be tried first); then the count past 255, where copy 1's 0 is later than copy 0's 255 (had
    # copy 0 been read, B again). The copy not read is the one written, with the next count.
    local noise said state expected
    for noise in random ctrl-c; do
        dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
        if [ "$noise" = random ]; then
            said="random bytes and Ctrl-C, the later copy of the slots' state cut short"
            python3 "$here/slot-state.py" write "$pi" 0 7 "A B" 2 3
            python3 "$here/slot-state.py" write "$pi" 1 8 "B A" 3 3 --torn
            expected="copy 0: flag 7, AB 2 3|copy 1: flag 8, AB 1 3"
        else
            said="nothing but Ctrl-C, the slots' state counted past 255"
            python3 "$here/slot-state.py" write "$pi" 0 255 "B A" 3 3
            python3 "$here/slot-state.py" write "$pi" 1 0 "A B" 2 3
            expected="copy 0: flag 1, AB 1 3|copy 1: flag 0, AB 2 3"
        fi
        out=$(python3 "$here/pi-uboot.py" --card "$pi" --u-boot "$work/u-boot-rpi.bin" --dtb "$dtb" --noise "$noise" --until kernel --timeout 300)
        state=$(python3 "$here/slot-state.py" copies "$pi" | paste -sd '|')
        check "the Pi's U-Boot, a modem sending $said: $out; the slots then $state" \
            bash -c 'grep -q "^the kernel started" <<<"$1" && [ "$2" = "$3" ]' _ "$out" "$state" "$expected"
    done
    # A slots' state whose values hold what U-Boot's shell would parse (a quote, a semicolon, a $):
    # boot.scr reads them cut down to the characters RAUC writes, so slot B is tried first as the
    # order says (this card has no kernel in it), then A, each try counted from the values read.
    dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
    python3 "$here/slot-state.py" write "$pi" 0 7 "B' A" '3;' '2$x"'
    python3 "$here/slot-state.py" write "$pi" 1 6 "A B" 3 3
    out=$(python3 "$here/pi-uboot.py" --card "$pi" --u-boot "$work/u-boot-rpi.bin" --dtb "$dtb" --until kernel --timeout 300)
    state=$(python3 "$here/slot-state.py" copies "$pi" | sed -n 2p)
    check "the Pi's U-Boot, the slots' state with a quote, a semicolon and a \$ in its values: $out; then $state" \
        bash -c 'grep -q "^the kernel started" <<<"$1" && [ "$2" = "copy 1: flag 8, BA 2 1" ]' _ "$out" "$state"
    # Further, to the slot's root: the card's kernel and initramfs with the Zero 2 W tree find the
    # SD card on the BCM2837's SD host (the bcm2835 mmc module, from the initramfs) and mount the
    # slot. The kernel's console goes to the mini UART for it; one CPU, as qemu runs the four in
    # one host thread. Not further: qemu's model of the SoC's watchdog restarts the machine as soon
    # as systemd arms it.
    dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
    printf 'bootargs_card=console=ttyS1,115200 rootfstype=ext4 maxcpus=1\n' >"$work/pi-boot.txt"
    mcopy -o -i "$pi@@$((boot_start * 512))" "$work/pi-boot.txt" ::unwind-boot.txt
    out=$(python3 "$here/pi-uboot.py" --card "$pi" --u-boot "$work/u-boot-rpi.bin" --dtb "$dtb" --until root --timeout 300)
    check "the Pi's kernel (qemu raspi3b, the Zero 2 W tree) mounts slot A from the SD card through its initramfs: $out" \
        grep -q "^the slot's root was mounted" <<<"$out"
}
# The emulated machine's U-Boot on the Pi's card, to the line that boots a slot (u_boot_boot NAME
# PATTERN); card=, modem= and extra= as the test's other boots leave them.
u_boot_boot() {
    modem=0
    extra=
    boot "$1"
    wait_console "$1" "$2" 120 || { fail "$1: U-Boot never got to /$2/ ($((SECONDS - boot_started)) s); the console's end:"; tail -n 20 "$work/$1.console"; }
    power_off
    card=
    modem=1
}
# A card whose slots' state cannot be read: qemu's blkdebug fails every read of its first block.
# The emulated machine's U-Boot sees the error (its virtio disk reports it; qemu's model of the
# Pi's SD host returns the data regardless), so its boot.scr takes the defaults: slot A with 3
# tries, says this try is not counted, and writes nothing. Read, the state written here would
# start no slot: B alone, which has no kernel on this card.
unreadable_state() {
    local pi=$work/pi-card.img conf=$work/unreadable-state.conf before after
    printf '[inject-error]\nevent = "read_aio"\nerrno = "5"\nsector = "2048"\nonce = "off"\n' >"$conf"
    dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
    python3 "$here/slot-state.py" write "$pi" 0 7 "B" 0 3
    before=$(dd if="$pi" bs=1024 skip=1024 count=32 status=none | sha256sum)
    card="blkdebug:$conf:$pi"
    u_boot_boot unreadable "unwind: slot [AB], tries left after|did not start"
    after=$(dd if="$pi" bs=1024 skip=1024 count=32 status=none | sha256sum)
    check "the slots' state unreadable (every read of it an I/O error): boot.scr says this try is not counted" \
        grep -aq "unwind: the slot state could not be read; this try is not counted" "$work/unreadable.console"
    check "... starts slot A with the default tries (the state read would start no slot)" \
        grep -aq "unwind: slot A, tries left after this boot: 2" "$work/unreadable.console"
    check "... and writes nothing: the state's 32 KiB the same after the boot" [ "$before" = "$after" ]
}
# unwind-boot.txt edited by hand on the FAT partition, in a Windows editor (a tab, CRLF), with a
# quote, an apostrophe, a $, a semicolon and a commented-out init= in it: the kernel still gets
# its root, and the card's words without those that hold such characters (init= among them).
edited_boot_txt() {
    local pi=$work/pi-card.img line
    dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
    printf 'bootargs_card=console=ttyAMA0\tx="a b" y%sz $foo; #init=/bin/sh loglevel=7\r\n' "'" >"$work/edited-boot.txt"
    mcopy -o -i "$pi@@$((boot_start * 512))" "$work/edited-boot.txt" ::unwind-boot.txt
    card=$pi
    u_boot_boot edited "Kernel command line:"
    line=$(grep -a -m1 "Kernel command line:" "$work/edited.console" | tr -d '\r' | sed 's/^.*Kernel command line: //')
    check "unwind-boot.txt edited by hand with quotes, a \$, a ; and #init=: the kernel's command line is \"$line\"" \
        grep -qE "^console=ttyAMA0 +loglevel=7 +root=PARTUUID=[0-9a-f-]+ ro rootwait rauc.slot=A " <<<"$line"
}
# unwind-boot.txt at the longest boot.scr takes (1920 bytes; its words module parameters, which
# the kernel keeps to itself: more than 32 unknown ones would stop it), then one byte longer,
# and at 2100 bytes, which would leave the kernel without root= (it keeps 2047 characters): the
# first imported and its slot's root mounted (the kernel prints no more than about 1000
# characters of its command line, so the mount shows that root= arrived; the slot's words after
# it end within 2047 characters by boot.cmd's arithmetic), the others left out, saying so, the
# kernel still with its root and slot. The Pi's card's last user.
long_boot_txt() {
    local pi=$work/pi-card.img size line words until
    for size in 1920 1921 2100; do
        dd if="$work/pi-slot-state.bin" of="$pi" bs=1024 seek=1024 conv=notrunc status=none
        words=$(seq -f 'm%04g.p=1' 0 300 | paste -sd ' ' | head -c $((size - 26)))
        printf 'bootargs_card=%s loglevel=7\n' "$words" >"$work/long-boot.txt"
        mcopy -o -i "$pi@@$((boot_start * 512))" "$work/long-boot.txt" ::unwind-boot.txt
        card=$pi
        # The file boot.scr takes is followed to its root's mount; the others to the kernel's line.
        until="Kernel command line:"
        [ "$size" = 1920 ] && until="EXT4-fs \(vda2\): mounted|No root device"
        u_boot_boot "long$size" "$until"
        line=$(grep -a -m1 "Kernel command line:" "$work/long$size.console" | tr -d '\r' | sed 's/^.*Kernel command line: *//')
        if [ "$size" = 1920 ]; then
            check "unwind-boot.txt of 1920 bytes ($(stat -c %s "$work/long-boot.txt")): imported (the kernel's line begins with its words), and slot A's root mounted" \
                bash -c '[ "$4" = "$5" ] && [ ${#1} -gt 900 ] && [[ ${2#bootargs_card=} == "${1:0:900}"* ]] && ! grep -aq "left out" "$3" && grep -aqE "EXT4-fs \(vda2\): mounted filesystem .* ro " "$3"' \
                _ "$line" "$(tr -d '\n' <"$work/long-boot.txt")" "$work/long$size.console" "$(stat -c %s "$work/long-boot.txt")" "$size"
        else
            check "unwind-boot.txt of $size bytes ($(stat -c %s "$work/long-boot.txt")): left out, and said; the kernel gets its root: \"$line\"" \
                bash -c '[ "$3" = "$4" ] && grep -aq "unwind: unwind-boot.txt is longer than 0x780 bytes, so it is left out" "$2" && grep -qE "^root=PARTUUID=[0-9a-f-]+ ro rootwait rauc.slot=A unwind.tries_left=2$" <<<"$1"' \
                _ "$line" "$work/long$size.console" "$(stat -c %s "$work/long-boot.txt")" "$size"
        fi
    done
    rm -f "$pi"
}

# --- bad cards ---------------------------------------------------------------------------------
# Copies of the card as the first boot left it, each booted once with the rig's probe in its
# "badcard" mode: what the device says on the screen (setupResult.txt) and in its status, and
# whether a PANIC still goes out.
in_console() { grep -aqE "$2" <(grep -a "^$3" "$work/$1.console"); } # console pattern prefix
badcard_boot() { # name
    boot "$1"
    if ! wait_console "$1" "UNWIND-PROBE done" 900; then
        fail "$1: the probe never finished ($((SECONDS - boot_started)) s); the console's end:"
        tail -n 40 "$work/$1.console"
        power_off
        return 1
    fi
    power_off
    grep -aE "^UNWIND-(SETUP|STATUS|AFTER|MANTRAS|PROBE|START) " "$work/$1.console" | grep -avE "UNWIND-(STATUS|AFTER) +(Alerts|Breathing|Mantras|Reminder|Pattern|Check-in|Monthly)" | sed "s/^/  $1: /"
}
# bad_cards: the two cards, made as soon as the first boot has ended; bad_card_boots boots them
# (side boots).
bad_cards() {
    # A card whose data partition was never made (blkid finds nothing: its first 4 MiB zeroed),
    # with no setup file, and no modem attached.
    cp --sparse=always "$image" "$work/blank.img"
    dd if=/dev/zero of="$work/blank.img" bs=512 seek="$data_start" count=8192 conv=notrunc status=none
    mdel -i "$work/blank.img@@$((boot_start * 512))" ::unwind-setup.txt
    # A card whose data partition is full before the device starts (the probe fills it).
    cp --sparse=always "$image" "$work/full.img"
}
# shellcheck disable=SC2031 # modem_log is the side boots' own (side_start)
bad_card_boots() {
    card=$work/blank.img
    modem=0
    extra="unwind_test.probe=badcard"
    t=$SECONDS
    if badcard_boot blank; then
        pass "a card with no data partition, no setup file, no modem: the probe finished ($((SECONDS - t)) s here)"
        check "blank: /data is in memory" in_console blank "data-fs tmpfs" "UNWIND-PROBE"
        check "blank: the unit is active" in_console blank "unit active" "UNWIND-PROBE"
        check "blank: the screen says there is no setup file" in_console blank "no unwind-setup.txt on the card" "UNWIND-SETUP"
        check "blank: the screen says nothing is kept after a restart" in_console blank "data partition is missing or did not mount: nothing is kept" "UNWIND-SETUP"
        check "blank: status says the state is in memory" in_console blank "the state is in memory \(tmpfs\)" "UNWIND-STATUS"
        check "blank: status says a PANIC could not go out: the modem does not answer" in_console blank "^UNWIND-AFTER Readiness: not ready: .*the modem does not answer" "UNWIND-AFTER"
        r=$(probe_field blank restarts)
        check "blank: the device was restarted at most once ($r)" [ "${r:-9}" -le 1 ]
        ms=$(probe_field blank data-partition-ms)
        check "blank: the data partition's absence known in ${ms:-?} ms (udev settled; not a 90 s device timeout)" [ "${ms:-999999}" -lt 60000 ]
        check "blank: frames were drawn" in_console blank "Loop: +[1-9][0-9]* frames" "UNWIND-STATUS"
    fi
    rm -f "$card"

    # A card whose data partition is full before the device starts (root's reserved blocks too),
    # with no display bus: a session's end and a maintainer's change cannot be saved, and
    # say so; a PANIC still goes out to both contacts (the outbox's write fails, the alert is sent).
    card=$work/full.img
    modem=1
    extra="unwind_test.probe=badcard unwind_test.data=full unwind_test.display=none"
    from=$(wc -l <"$modem_log")
    t=$SECONDS
    if badcard_boot full; then
        pass "a full data partition and no display: the probe finished ($((SECONDS - t)) s here)"
        check "full: /data is the card's (ext4)" in_console full "data-fs ext4" "UNWIND-PROBE"
        check "full: the unit is active" in_console full "unit active" "UNWIND-PROBE"
        # At most one restart: systemd's recovery from a start-up race of the rig's own devices
        # (RestartSec=3s); a daemon that exits on this card is restarted every 3 s and never runs.
        r=$(probe_field full restarts)
        check "full: the device was restarted at most once ($r)" [ "${r:-9}" -le 1 ]
        check "full: the journal says it runs without the display" in_console full "critical: display: .*running without the display" "UNWIND-STATUS"
        check "full: status says the card is full" in_console full "the SD card is full or read-only" "UNWIND-AFTER"
        check "full: status says the display is lost, with no bus to reach it on" in_console full "^UNWIND-AFTER Screen: .*panel lost \(no /dev/i2c-0" "UNWIND-AFTER"
        check "full: the maintainer's change fails (exit 1) with the card's own error" \
            bash -c '[ "$1" = 1 ] && grep -aq "not on the card: .*No space left on device" "$2"' _ "$(probe_field full mantras-add-exit)" "$work/full.console"
        check "full: the outbox's write failed and the alert was sent anyway" in_console full "outbox: could not save .*sending anyway" "UNWIND-AFTER"
        m1=$(tail -n +"$((from + 1))" "$modem_log" | grep -c '^CMGS +447700900123 ')
        m2=$(tail -n +"$((from + 1))" "$modem_log" | grep -c '^CMGS 6045550100 ')
        check "full: PANIC still sends one AT+CMGS to each contact ($m1, $m2)" [ "$m1:$m2" = 1:1 ]
    fi
    rm -f "$card"
    card=
    extra=
}

# --- side boots ---------------------------------------------------------------------------------
# The U-Boot checks on the card as built (pi_uboot, unreadable_state, edited_boot_txt,
# long_boot_txt) and the bad cards (bad_card_boots, once the first boot has made their cards)
# need nothing from the boots after the first, so they run beside the update checks' boots after
# the trial (update-checks.sh): the broken system's trial and the stuck boot mostly wait (150 s
# of trial, a boot's deadline), and the trial itself, which must come up within its window, has
# the cores to itself. Without update boots they run after the cuts, alone. They run in a
# subshell with a modem of their own; what they print, their checks' counts, their boots' costs
# and their own seconds are added at side_join, which comes before the watchdog's boot (a second
# machine on the host could delay the watchdog's feeding) and at the end. The subshell kills its
# own machine and modem if it ends early; the test's cleanup stops it, and then everything it
# started (kill_tree).
side_started=
# shellcheck disable=SC2030 # the subshell's own counts and costs, on purpose (side_join adds them)
side_start() {
    [ -z "$side_started" ] || return 0
    side_started=$SECONDS
    (
        modem_sock=$work/side-modem.sock
        modem_log=$work/side-modem.log
        : >"$modem_log"
        qemu_pid=
        modem_pid=
        side_pid=
        trap '[ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null; [ -n "$modem_pid" ] && kill "$modem_pid" 2>/dev/null' EXIT
        boot_costs=()
        checks_passed=0
        checks_failed=0
        checks_skipped=0
        pi_uboot
        unreadable_state
        edited_boot_txt
        long_boot_txt
        if [ "${UNWIND_IMAGE_BADCARDS:-1}" = 1 ]; then
            if [ -f "$work/full.img" ]; then
                bad_card_boots
            else
                skip "the bad cards" "the first boot did not end, so their cards were not made"
            fi
        fi
        echo "$checks_passed $checks_failed $checks_skipped $((SECONDS - side_started))" >"$work/side.counts"
        printf '%s\n' "${boot_costs[@]}" >"$work/side.costs"
    ) >"$work/side.out" 2>&1 &
    side_pid=$!
}
# shellcheck disable=SC2031 # this shell's counts and costs, the subshell's added to them
side_join() {
    local passed failed skipped took cost
    [ -n "$side_pid" ] || return 0
    wait "$side_pid"
    side_pid=
    if read -r passed failed skipped took 2>/dev/null <"$work/side.counts"; then
        echo "the side boots (U-Boot on the card as built, the bad cards): $took s; they ended $((SECONDS - side_started - took)) s before this"
        cat "$work/side.out"
        checks_passed=$((checks_passed + passed))
        checks_failed=$((checks_failed + failed))
        checks_skipped=$((checks_skipped + skipped))
    else
        cat "$work/side.out"
        fail "the side boots ended before their last check (what they printed is above)"
    fi
    [ -f "$work/side.costs" ] && while read -r cost; do [ -n "$cost" ] && boot_costs+=("$cost"); done <"$work/side.costs"
    return 0
}

# end_early: the boot that never got far enough stopped, the side boots run, and the test ends.
# shellcheck disable=SC2031 # this shell's qemu_pid
end_early() {
    [ -n "$qemu_pid" ] && power_off
    side_start
    side_join
    finish
}
