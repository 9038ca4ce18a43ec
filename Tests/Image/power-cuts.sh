#!/usr/bin/env bash
# power-cuts.sh [N] -- the image's power-cut run: N (default 50) random cuts while the device
# writes, each booted again and checked (Tests/Image/boot-test.sh --cuts N). Its own command,
# not a stage of Tests/run-all.sh (each cut is a boot of an emulated machine: about a minute or
# two on two cores); a run's figures are in Tests/measurements.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The bad-card boots are boot-test.sh's (a stage of run-all.sh), not repeated here.
UNWIND_IMAGE_BADCARDS=${UNWIND_IMAGE_BADCARDS:-0} exec "$here/boot-test.sh" --cuts "${1:-50}" "${@:2}"
