# boot.cmd -- which system slot boots: the same script on a Raspberry Pi (U-Boot from Debian's
# u-boot-rpi, the card on mmc) and in the emulated machine (u-boot-qemu, the card on virtio);
# U-Boot's bootstd finds it as boot.scr on the boot partition and sets devtype and devnum. Its
# strings have no apostrophe: U-Boot's old hush stops the script on one inside double quotes
# ("syntax error").
#
# The slots' state is RAUC's (its U-Boot backend): BOOT_ORDER, BOOT_A_LEFT, BOOT_B_LEFT, kept
# in two copies of 16 KiB at 1 MiB on the card, before the boot partition, so that the same
# blocks serve both machines (the Pi keeps U-Boot's own environment in a FAT file, the emulated
# machine in flash) and Linux writes them without the boot partition read-write
# (/etc/fw_env.config, two lines). A slot is tried while it has tries left; each try is counted
# here, before its kernel runs, and only a device that comes up PANIC-ready makes RAUC give the
# tries back (mark-good): a slot that does not come up falls back to the other by itself.
#
# The two copies are U-Boot's redundant environment format, as libubootenv's fw_setenv writes it
# with two devices configured: a CRC-32 of the variables, a flag byte counting the writes, the
# variables. The copy read is the one with a good CRC and the later count (0 follows 255); the
# other is written, with the next count. A write cut short by a power cut spoils only the copy
# that was not being read, so the next boot reads the state from before it: the try that write
# counted is counted again, and an update's slot order is kept unless both copies are spoilt.
setexpr unwind_mem ${kernel_addr_r} + 0x3000000
setexpr unwind_copy1 ${unwind_mem} + 0x4000
setexpr unwind_plain ${unwind_mem} + 0x8000
setexpr ramdisk_addr_r ${kernel_addr_r} + 0x4000000
${devtype} dev ${devnum}
# unwind_read: the copy at ${at} imported; ok 1 when its CRC is good, its count in flag. env
# import -c reads the plain format (the CRC, then the variables), so the copy is rebuilt in it
# at unwind_plain, an aligned buffer, without the flag byte. Each value is then cut down to the
# characters RAUC writes in it (setexpr gsub edits the variable without the shell expanding it;
# its regular expressions have no ranges, hence the digits spelt out). The shell parses a command
# again after expanding ${...} in it, so a quote, a semicolon or a $ in a value would give syntax
# errors and garble the commands after it (an order of A'B tries the wrong slot first), and the
# garbled value would be written back, on every boot.
setenv unwind_read 'setexpr at4 ${at} + 4; setexpr at5 ${at} + 5; setexpr plain4 ${unwind_plain} + 4; setexpr.b flag *${at4}; cp.b ${at} ${unwind_plain} 4; cp.b ${at5} ${plain4} 0x3ffb; setenv BOOT_ORDER; setenv BOOT_A_LEFT; setenv BOOT_B_LEFT; setenv ok 0; if env import -c ${unwind_plain} 0x3fff BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT; then setenv ok 1; fi; if env exists BOOT_ORDER; then setexpr BOOT_ORDER gsub "[^AB ]" ""; fi; if env exists BOOT_A_LEFT; then setexpr BOOT_A_LEFT gsub "[^0123456789]" ""; fi; if env exists BOOT_B_LEFT; then setexpr BOOT_B_LEFT gsub "[^0123456789]" ""; fi'
# A card that cannot be read gives the defaults below (not what U-Boot's own environment may
# hold) and is not written: without knowing which copy was read, a write could spoil the good one.
setenv BOOT_ORDER
setenv BOOT_A_LEFT
setenv BOOT_B_LEFT
setenv unwind_state_read 0
setenv ok0 0
setenv ok1 0
setenv flag0 0
setenv flag1 0
if ${devtype} read ${unwind_mem} 0x800 0x40; then
  setenv unwind_state_read 1
  setenv at ${unwind_copy1}
  run unwind_read
  setenv ok1 ${ok}
  setenv flag1 ${flag}
  setenv order1 "${BOOT_ORDER}"
  setenv a1 "${BOOT_A_LEFT}"
  setenv b1 "${BOOT_B_LEFT}"
  setenv at ${unwind_mem}
  run unwind_read
  setenv ok0 ${ok}
  setenv flag0 ${flag}
fi
# The copy read, by libubootenv's rule so that both sides agree: the only good one, else the one
# with the later count.
setenv current 0
if test ${ok1} = 1; then
  if test ${ok0} = 0; then
    setenv current 1
  elif itest ${flag0} == 0xff && itest ${flag1} == 0; then
    setenv current 1
  elif itest ${flag1} == 0xff && itest ${flag0} == 0; then
    setenv current 0
  elif itest ${flag1} -gt ${flag0}; then
    setenv current 1
  fi
fi
if test ${current} = 1; then
  setenv BOOT_ORDER "${order1}"
  setenv BOOT_A_LEFT "${a1}"
  setenv BOOT_B_LEFT "${b1}"
  setenv unwind_write ${unwind_mem}
  setenv unwind_block 0x800
  setexpr unwind_flag ${flag1} + 1
else
  setenv unwind_write ${unwind_copy1}
  setenv unwind_block 0x820
  setexpr unwind_flag ${flag0} + 1
fi
test -n "${BOOT_ORDER}" || setenv BOOT_ORDER "A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 3
echo "unwind: slots ${BOOT_ORDER}; tries left: A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT}"
# The slots in BOOT_ORDER's order, without a loop: U-Boot's shell looks for a Ctrl-C at each
# turn of a for or while loop and leaves the loop when it finds one, and the modem on a Pi's
# console UART may send 0x03 at any moment. RAUC writes "A B" or "B A", or one slot alone when
# the other is marked bad; anything else is read as "A B", so that a garbled order still boots.
setenv first A
setenv second B
if test "${BOOT_ORDER}" = "B A"; then
  setenv first B
  setenv second A
elif test "${BOOT_ORDER}" = "B"; then
  setenv first B
  setenv second none
elif test "${BOOT_ORDER}" = "A"; then
  setenv second none
elif test "${BOOT_ORDER}" != "A B"; then
  echo "unwind: slot order ${BOOT_ORDER} unknown; A B"
  setenv BOOT_ORDER "A B"
fi
# A slot's try: counted, then its kernel loaded; run with "run try_A" or "run try_B".
setenv try_A 'if test 0x${BOOT_A_LEFT} -gt 0; then setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1; if load ${devtype} ${devnum}:2 ${kernel_addr_r} /boot/vmlinuz; then setenv slot A; setenv rootpart 2; setenv slot_left ${BOOT_A_LEFT}; else echo "unwind: slot A: no kernel loaded"; fi; fi'
setenv try_B 'if test 0x${BOOT_B_LEFT} -gt 0; then setexpr BOOT_B_LEFT ${BOOT_B_LEFT} - 1; if load ${devtype} ${devnum}:3 ${kernel_addr_r} /boot/vmlinuz; then setenv slot B; setenv rootpart 3; setenv slot_left ${BOOT_B_LEFT}; else echo "unwind: slot B: no kernel loaded"; fi; fi'
setenv slot
run try_${first}
if test "x${slot}" = "x" && test "${second}" != none; then
  run try_${second}
fi
if test "x${slot}" = "x"; then
  echo "unwind: no slot has tries left; each gets 3 again"
  setenv BOOT_A_LEFT 3
  setenv BOOT_B_LEFT 3
fi
# The other copy written: exported in the plain format, then laid out with the flag byte (mw.b
# keeps the count's low byte, so 255 is followed by 0). env export clears U-Boot's whole
# environment size from unwind_plain on (256 KiB in the emulated machine's build), which is why
# the two copies lie before it and the initramfs far after it.
if test ${unwind_state_read} = 1; then
  env export -c -s 0x3fff ${unwind_plain} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT
  setexpr at4 ${unwind_write} + 4
  setexpr at5 ${unwind_write} + 5
  setexpr plain4 ${unwind_plain} + 4
  cp.b ${unwind_plain} ${unwind_write} 4
  mw.b ${at4} ${unwind_flag}
  cp.b ${plain4} ${at5} 0x3ffb
  ${devtype} write ${unwind_write} ${unwind_block} 0x20
else
  echo "unwind: the slot state could not be read; this try is not counted"
fi
if test "x${slot}" = "x"; then
  reset
fi
# The kernel's command line: the card's own (unwind-boot.txt on the boot partition), then the
# slot's root and its tries left after this one (for the maintainer: a boot that never reaches
# the slot keeper is restarted, unwind-boot-deadline.timer, and with none left the other slot
# starts).
setenv bootargs_card
# The file is on the FAT partition anyone can edit: a quote or a $ left in its text would garble
# bootargs below and leave the kernel without its root, boot after boot. So its tabs and line
# ends become spaces, and each word with a character outside the list below is left out whole
# (a character taken out of a word could make another parameter of it: #init=/bin/sh).
# build-image.sh reads the list from that line and refuses --kernel-args outside it.
# A file over 1920 bytes (unwind_txt_most) is left out whole, as one without the line: the kernel
# keeps the first 2047 characters of its command line, and the root and slot come after the
# card's words (up to 110 characters of them), so a longer line would lose root= on every boot.
# One byte more is read, to tell: a huge file neither overwrites what lies after the buffer nor
# overflows the word filter's 16 KiB (which would leave the words unfiltered). build-image.sh
# reads the size from the setenv line.
setenv unwind_txt_most 0x780
setexpr unwind_txt_read ${unwind_txt_most} + 1
if load ${devtype} ${devnum}:1 ${unwind_mem} unwind-boot.txt ${unwind_txt_read}; then
  if itest 0x${filesize} -gt ${unwind_txt_most}; then
    echo "unwind: unwind-boot.txt is longer than ${unwind_txt_most} bytes, so it is left out; the kernel gets only the root and slot"
  else
    env import -t ${unwind_mem} ${filesize} bootargs_card
    if env exists bootargs_card; then
      setexpr bootargs_card gsub "\s" " "
      setexpr bootargs_card gsub "\S*[^ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ._,:=/+@-]\S*" ""
    else
      echo "unwind: unwind-boot.txt has no line bootargs_card=...; the kernel gets only the root and slot"
    fi
  fi
fi
part uuid ${devtype} ${devnum}:${rootpart} rootuuid
setenv bootargs "${bootargs_card} root=PARTUUID=${rootuuid} ro rootwait rauc.slot=${slot} unwind.tries_left=${slot_left}"
echo "unwind: slot ${slot}, tries left after this boot: ${slot_left}"
if load ${devtype} ${devnum}:${rootpart} ${ramdisk_addr_r} /boot/initrd.img; then
  booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdt_addr}
fi
echo "unwind: slot ${slot} did not start"
reset
