#!/usr/bin/env bash
# Installs what building and testing Unwind needs on Debian / Raspberry Pi OS, if missing.
# Idempotent: a second run installs nothing. Swift itself must already be installed.
set -euo pipefail
# die
# shellcheck source-path=SCRIPTDIR source=lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/toolkit.sh"

# strace: a test stalls `unwind backup` in its fsync and interrupts it there. tzdata: the device
# reads its time zones from /usr/share/zoneinfo, and the time zone tests compare them. unifont:
# the device draws what its own fonts lack (Chinese, Arabic, ...) from /usr/share/unifont/unifont.hex.
packages=(pkg-config libgpiod-dev libi2c-dev libqrencode-dev zbar-tools strace tzdata unifont)

command -v swift >/dev/null 2>&1 || die "'swift' is not on PATH; install Swift 6 first (https://www.swift.org/install/linux/)."

# shellcheck source-path=SCRIPTDIR source=lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
install_missing "${packages[@]}" || die "the build and test libraries could not be installed"
