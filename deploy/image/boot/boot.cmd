# boot.cmd -- which system slot boots: the same script on a Raspberry Pi (U-Boot from Debian's
# u-boot-rpi, the card on mmc) and in the emulated machine (u-boot-qemu, the card on virtio);
# U-Boot's bootstd finds it as boot.scr on the boot partition and sets devtype and devnum.
#
# The slots' state is RAUC's (its U-Boot backend): BOOT_ORDER, BOOT_A_LEFT, BOOT_B_LEFT, kept
# in 16 KiB in U-Boot's environment format at 1 MiB on the card, before the boot partition, so
# that the same block serves both machines (the Pi keeps U-Boot's own environment in a FAT file,
# the emulated machine in flash) and Linux writes it without the boot partition read-write
# (/etc/fw_env.config). A slot is tried while it has tries left; each try is counted here,
# before its kernel runs, and only a device that comes up PANIC-ready makes RAUC give the tries
# back (mark-good): a slot that does not come up falls back to the other by itself.
setexpr unwind_mem ${kernel_addr_r} + 0x3000000
setexpr ramdisk_addr_r ${kernel_addr_r} + 0x4000000
${devtype} dev ${devnum}
setenv BOOT_ORDER
setenv BOOT_A_LEFT
setenv BOOT_B_LEFT
if ${devtype} read ${unwind_mem} 0x800 0x20; then
  env import -c ${unwind_mem} 0x4000 BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT
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
env export -c -s 0x4000 ${unwind_mem} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT
${devtype} write ${unwind_mem} 0x800 0x20
if test "x${slot}" = "x"; then
  reset
fi
# The kernel's command line: the card's own (unwind-boot.txt on the boot partition), then the
# slot's root and its tries left after this one (for the maintainer: a boot that never reaches
# the slot keeper is restarted, unwind-boot-deadline.timer, and with none left the other slot
# starts).
setenv bootargs_card
if load ${devtype} ${devnum}:1 ${unwind_mem} unwind-boot.txt; then
  env import -t ${unwind_mem} ${filesize} bootargs_card
fi
part uuid ${devtype} ${devnum}:${rootpart} rootuuid
setenv bootargs "${bootargs_card} root=PARTUUID=${rootuuid} ro rootwait rauc.slot=${slot} unwind.tries_left=${slot_left}"
echo "unwind: slot ${slot}, tries left after this boot: ${slot_left}"
if load ${devtype} ${devnum}:${rootpart} ${ramdisk_addr_r} /boot/initrd.img; then
  booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdt_addr}
fi
echo "unwind: slot ${slot} did not start"
reset
