#!/bin/sh
# The pictures of the breathing page in Sources/UnwindCore/README.md ("Breathing beyond the
# box"), made the way the README's square-page picture is: a headless run of the device ends at
# the moment shown, and its screen.txt (what the simulated SSD1306 decoded from the driver's
# bytes) is the picture. Prints each, titled; run from the
# repository after `swift build`:  Tests/readme-pictures.sh [path/to/unwind]
set -eu
unwind=${1:-.build/debug/unwind}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | --pattern | script (seconds, button) | config lines
picture() {
    name=$1; pattern=$2; script=$3; config=$4
    printf '%b' "$script" >"$work/$name.script"
    printf '%b' "$config" >"$work/$name.conf"
    "$unwind" sim --headless "$work/$name.script" --config "$work/$name.conf" ${pattern:+--pattern "$pattern"} \
        --state "$work/$name-state" --out "$work/$name-out" --no-frames >/dev/null 2>&1
    echo "== $name"
    sed '$d' "$work/$name-out/screen.txt"    # without the bottom border, like the READMEs' others
}

still='screen:\n  pixel_shift_s: 0\n  sleep_after_s: 0\n'
picture chooser "" '1 RIGHT\n2 RIGHT\n3 RIGHT\n4 RIGHT long\n5.2 end\n' "$still"
picture sigh sigh '0 SELECT\n2.5 end\n' "$still"
picture 478 478 '0 SELECT\n7.5 end\n' "$still"
picture calm calm '0 SELECT\n3.6 end\n' "$still"
picture check-in "" '1 RIGHT\n1.5 RIGHT\n2 RIGHT\n3 end\n' "${still}breathing:\n  check_in: true\n"
picture statistics "" '1 RIGHT\n1.5 RIGHT\n2 RIGHT\n3 SELECT\n63 SELECT\n64 LEFT\n64.5 LEFT\n65 LEFT\n65.5 LEFT\n66 LEFT\n67 SELECT\n68 LEFT long\n70 RIGHT\n71 end\n' "${still}breathing:\n  check_in: true\n"
