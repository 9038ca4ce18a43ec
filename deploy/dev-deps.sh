#!/usr/bin/env bash
# Installs what building and testing Unwind needs on Debian / Raspberry Pi OS, if missing.
# Idempotent: a second run installs nothing. Swift itself must already be installed.
set -euo pipefail

# strace: a test stalls `unwind backup` in its fsync and interrupts it there. tzdata: the device
# reads its time zones from /usr/share/zoneinfo, and the time zone tests compare them.
packages=(pkg-config libgpiod-dev libi2c-dev libqrencode-dev zbar-tools strace tzdata)

if ! command -v swift >/dev/null 2>&1; then
    echo "dev-deps: 'swift' is not on PATH; install Swift 6 first (https://www.swift.org/install/linux/)." >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "dev-deps: missing ${missing[*]}, and this is not a Debian system: install them by hand." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "dev-deps: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "dev-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
