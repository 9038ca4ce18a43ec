#!/usr/bin/env python3
"""The card's own U-Boot for the Pi (u-boot-rpi) in qemu's Raspberry Pi 3 machine, with a modem
on the header UART that talks from power-on. U-Boot's console is that UART: a byte during its
countdown would leave it at its prompt, and a Ctrl-C (0x03) while boot.scr runs can stop a
command or a loop of it. What the modem sends (--noise):
  echo     "RDY" again and again, and every byte back, as a GSM modem in command mode does;
  random   random bytes and a 0x03 after each 16 of them, again and again;
  ctrl-c   nothing but 0x03, 64 of them every 0.1 s: every time U-Boot looks for a Ctrl-C, it
           finds one.
Passes when the card's boot.scr runs (it prints "unwind: slots"), with --until kernel when it
goes on to start the slot's kernel (U-Boot's "Starting kernel"), or with --until root when that
kernel, through the slot's initramfs, mounts the slot from the SD card (the kernel's console on
the mini UART: the card's unwind-boot.txt says console=ttyS1,115200).

usage: pi-uboot.py --card IMG --u-boot BIN --dtb DTB [--noise echo|random|ctrl-c]
                   [--until scr|kernel|root] [--timeout S]
  IMG: a copy of the card whose size is a power of two (qemu's SD card needs it); its slots'
  state is counted down by boot.scr. Prints one line, "boot.scr ran after N s", "the kernel
  started after N s", "the slot's root was mounted after N s" or "stopped (...)", and exits 0
  or 1.

qemu's raspi3b has the BCM2837 of the Pi 3 and the Zero 2 W. Its second serial port is the mini
UART, the header's pins 8 and 10 in the Pi 3 and Zero 2 W device trees: the modem's.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--card", required=True)
parser.add_argument("--u-boot", required=True)
parser.add_argument("--dtb", required=True)
parser.add_argument("--noise", choices=["echo", "random", "ctrl-c"], default="echo")
parser.add_argument("--until", choices=["scr", "kernel", "root"], default="scr")
parser.add_argument("--timeout", type=float, default=60)
args = parser.parse_args()
goal = {"scr": b"unwind: slots", "kernel": b"Starting kernel", "root": b"EXT4-fs (mmcblk0p2): mounted"}[args.until]
said = {"scr": "boot.scr ran", "kernel": "the kernel started", "root": "the slot's root was mounted"}[args.until]

# One host thread for the four cores: U-Boot runs on the first, and the other three wait in the
# boot stub's WFE loop, which TCG runs as a busy loop. With a thread each they took two host cores
# for the whole run (88 s of CPU in a 45 s run to the kernel); with one, 33 s of CPU in 35 s.
qemu = subprocess.Popen(
    ["qemu-system-aarch64", "-M", "raspi3b", "-accel", "tcg,thread=single", "-kernel", args.u_boot, "-dtb", args.dtb,
     "-drive", f"if=sd,format=raw,file={args.card}", "-serial", "null", "-serial", "stdio",
     "-display", "none", "-monitor", "none"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
started = time.monotonic()
seen = bytearray()
lock = threading.Lock()
done = threading.Event()


def send(data):
    try:
        qemu.stdin.write(data)
    except OSError:
        done.set()


def console():
    while not done.is_set():
        data = os.read(qemu.stdout.fileno(), 4096)
        if not data:
            done.set()
            return
        with lock:
            seen.extend(data)
            # The goal, U-Boot at its prompt (it stays there), boot.scr giving up, or a kernel
            # that panicked. U-Boot's words are looked for in what came before the kernel.
            u_boot = seen.split(b"Starting kernel")[0]
            if goal in seen or b"U-Boot>" in u_boot or b"did not start" in u_boot or b"resetting" in u_boot \
                    or b"Kernel panic" in seen:
                done.set()
        if args.noise == "echo":
            send(data)  # the modem's echo


def modem():
    # What the modem says, again and again from the first moment.
    while not done.is_set():
        if args.noise == "echo":
            send(b"\r\nRDY\r\n")
        elif args.noise == "random":
            send(os.urandom(16) + b"\x03")
        else:
            send(b"\x03" * 64)
        time.sleep(0.1)


try:
    threading.Thread(target=console, daemon=True).start()
    threading.Thread(target=modem, daemon=True).start()
    done.wait(args.timeout)
    elapsed = time.monotonic() - started
finally:
    # Never a machine left running, whatever stops this script.
    qemu.kill()
    qemu.wait()
with lock:
    text = bytes(seen)
if goal in text:
    print(f"{said} after {elapsed:.1f} s")
    sys.exit(0)
u_boot_text = text.split(b"Starting kernel")[0]
if b"U-Boot>" in u_boot_text:
    why = "at U-Boot's prompt"
elif b"did not start" in u_boot_text or b"resetting" in u_boot_text:
    why = "boot.scr gave up"
elif b"Kernel panic" in text:
    why = "the kernel panicked"
elif b"Starting kernel" in text:
    why = "the kernel started, the slot's root not mounted"
else:
    why = "no boot.scr" if b"unwind: slots" not in text else "no kernel started"
print(f"stopped ({why}) after {elapsed:.1f} s; the console's end: {text[-120:]!r}")
sys.exit(1)
