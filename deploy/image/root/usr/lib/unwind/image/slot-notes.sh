# shellcheck shell=sh disable=SC2034 # the paths are the scripts' that source this
# What the system slots' scripts (slot-good, boot-deadline) keep on the data partition and how they
# write it; sourced by them.
#
# /data/system/update.txt        what the maintainer reads in `unwind status` (Update:)
# /data/system/update-trial.txt  why a slot on trial was given up ("slot=X", "why=..."): read
#                                by the slot booted after it, which says it
# /data/system/slots-kept.txt    the installs kept ("SLOT RAUC's install timestamp")
record=/data/system/update.txt
trial_note=/data/system/update-trial.txt
kept=/data/system/slots-kept.txt

# The slot boot.scr started (rauc.slot= on the kernel's command line); empty when not started by it.
booted_slot() { tr ' ' '\n' </proc/cmdline | sed -n 's/^rauc\.slot=//p'; }

# Whole seconds since the kernel started.
uptime_s() { cut -d. -f1 /proc/uptime; }

# Writes a file whole or not at all (a power cut leaves the old one).
write_whole() { # file text
    mkdir -p "${1%/*}"
    printf '%s\n' "$2" >"$1.new" && sync "$1.new" && mv "$1.new" "$1" && sync "${1%/*}"
}

# The note of a trial given up (FILE, slot, why): one line of why, bounded.
write_trial_note() { # file slot why
    write_whole "$1" "$(printf 'slot=%s\nwhy=%s' "$2" "$(printf '%s' "$3" | tr -d '\n' | cut -c1-300)")"
}
