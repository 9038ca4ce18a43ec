#!/usr/bin/env python3
"""The system slots' state on a card: two copies of 16 KiB at 1 MiB in U-Boot's redundant
environment format (a CRC-32 of the variables, a flag byte counting the writes, the variables
as name=value, each ended by a NUL), read and written by the card's boot.scr and by RAUC's
fw_setenv (deploy/image/boot/boot.cmd, /etc/fw_env.config).

usage: slot-state.py read CARD
         the copy a boot reads (the only one with a good CRC, else the later count, 0 after
         255), as "ORDER A_LEFT B_LEFT" with the order's spaces taken out ("AB 3 3"), or
         "bad-crc" when neither copy is good
       slot-state.py copies CARD
         both copies, one line each: "copy N: flag F, ORDER A_LEFT B_LEFT" or "copy N: bad-crc"
       slot-state.py write CARD COPY FLAG ORDER A_LEFT B_LEFT [--torn]
         writes copy COPY (0 or 1) with that count and state; --torn spoils its CRC, as a
         write cut short does
"""
import struct
import sys
import zlib

SIZE = 0x4000
AT = 1 << 20


def parse(block):
    crc, flag = struct.unpack("<IB", block[:5])
    data = block[5:]
    if zlib.crc32(data) != crc:
        return None
    pairs = (e.split("=", 1) for e in data.split(b"\0\0")[0].decode(errors="replace").split("\0") if "=" in e)
    return flag, dict(pairs)


def copies(card):
    with open(card, "rb") as f:
        f.seek(AT)
        blob = f.read(2 * SIZE)
    if len(blob) < 2 * SIZE:
        sys.exit(f"{card}: ends before the slots' state (two copies of {SIZE} bytes at {AT})")
    return [parse(blob[:SIZE]), parse(blob[SIZE:])]


def current(found):
    first, second = found
    if first is None or second is None:
        return first or second
    f0, f1 = first[0], second[0]
    if f0 == 0xFF and f1 == 0:
        return second
    if f1 == 0xFF and f0 == 0:
        return first
    return second if f1 > f0 else first


def said(state):
    v = state[1]
    return f'{v.get("BOOT_ORDER", "-").replace(" ", "")} {v.get("BOOT_A_LEFT", "-")} {v.get("BOOT_B_LEFT", "-")}'


def main(argv):
    if len(argv) == 3 and argv[1] == "read":
        state = current(copies(argv[2]))
        print(said(state) if state else "bad-crc")
    elif len(argv) == 3 and argv[1] == "copies":
        for n, state in enumerate(copies(argv[2])):
            print(f"copy {n}: " + (f"flag {state[0]}, {said(state)}" if state else "bad-crc"))
    elif len(argv) in (8, 9) and argv[1] == "write" and argv[3] in ("0", "1") and argv[8:] in ([], ["--torn"]):
        text = f"BOOT_ORDER={argv[5]}\0BOOT_A_LEFT={argv[6]}\0BOOT_B_LEFT={argv[7]}\0".encode()
        data = text + b"\0" * (SIZE - 5 - len(text))
        crc = zlib.crc32(data) ^ (0xFFFFFFFF if argv[8:] else 0)
        with open(argv[2], "r+b") as f:
            f.seek(AT + int(argv[3]) * SIZE)
            f.write(struct.pack("<IB", crc, int(argv[4]) & 0xFF) + data)
    else:
        sys.exit(__doc__)


main(sys.argv)
