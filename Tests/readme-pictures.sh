#!/bin/sh
# The READMEs' pictures of the screen: the square page (README.md), the breathing patterns and
# the alert page (Sources/UnwindCore/README.md), "How am I doing?" (its README beside its code).
# Each is a headless run of the device that ends at the moment shown; its screen.txt (what the
# simulated SSD1306 decoded from the driver's bytes) is the picture. Prints each, titled; run
# from the repository after `swift build`:  Tests/readme-pictures.sh [path/to/unwind]
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

# The square page, 5.6 s into a session (README.md).
picture box "" '0 SELECT\n5.6 end\n' "$still"

# The alert page with four contacts and an empty slot 2.
mkdir -p "$work/alert-state"
printf 'Mum\n+16045550101\nPlease call me.\n' >"$work/alert-state/alert01.txt"
printf 'Sam\n+16045550103\nPlease come over.\n' >"$work/alert-state/alert03.txt"
printf 'Jo\n+16045550104\nPlease call me.\n' >"$work/alert-state/alert04.txt"
printf 'Alex\n+16045550105\nPlease call me.\n' >"$work/alert-state/alert05.txt"
picture alert "" '1 PAGE\n2 PAGE\n3 PAGE\n4 end\n' "$still"

# "How am I doing?": eight weeks of checks and moods kept, a contact, a coping card. The
# simulated wall clock starts at 2026-01-01 00:00 UTC.
howami() {
    mkdir -p "$work/$1-state"
    printf '1763060400 gad7 3222222 15\n1763406000 phq9 222221111 14\n1763665200 gad7 2222222 14\n1764270000 gad7 2222211 12\n1764615600 phq9 221111111 11\n1764874800 gad7 2222211 12\n1765479600 gad7 2211111 9\n1765825200 phq9 111111111 9\n1766084400 gad7 2111111 8\n1766689200 gad7 1111110 6\n1767034800 phq9 111111000 6\n' >"$work/$1-state/selfChecks.txt"
    printf '2025-11-07 2\n2025-11-08 3\n2025-11-10 2\n2025-11-11 3\n2025-11-12 2\n2025-11-14 3\n2025-11-15 2\n2025-11-16 2\n2025-11-18 2\n2025-11-19 2\n2025-11-20 3\n2025-11-22 3\n2025-11-23 4\n2025-11-24 3\n2025-11-26 4\n2025-11-27 3\n2025-11-28 3\n2025-11-30 3\n2025-12-01 3\n2025-12-02 4\n2025-12-04 3\n2025-12-05 4\n2025-12-06 4\n2025-12-08 3\n2025-12-09 4\n2025-12-10 4\n2025-12-12 4\n2025-12-13 3\n2025-12-14 4\n2025-12-16 4\n2025-12-17 5\n2025-12-18 4\n2025-12-20 4\n2025-12-21 5\n2025-12-22 4\n2025-12-24 4\n2025-12-25 5\n2025-12-26 4\n2025-12-28 4\n2025-12-29 5\n2025-12-30 4\n2026-01-01 4\n' >"$work/$1-state/moods.txt"
    printf 'I will panic at the dentist tomorrow.\tI have sat through it before. I can breathe slowly and ask for a pause.\n' >"$work/$1-state/copingCards.txt"
    printf 'Mum\n+16045550101\nPlease call me.\n' >"$work/$1-state/alert01.txt"
}
to_page='1 PAGE\n1.5 PAGE\n2 PAGE\n2.5 PAGE\n'
howami page; picture page "" "${to_page}3 end\n" "$still"
howami item; picture item "" "${to_page}3 RIGHT\n3.5 RIGHT\n4 SELECT\n5 RIGHT\n5.5 RIGHT\n6 RIGHT\n7 end\n" "$still"
# The GAD-7 answered 2 1 2 1 1 2 1: 10, moderate; the card is offered.
gad7=''
t=4
for a in 2 1 2 1 1 2 1; do
    i=0; while [ $i -le $a ]; do gad7="${gad7}${t} RIGHT\n"; t=$((t + 1)); i=$((i + 1)); done
    gad7="${gad7}${t} SELECT\n"; t=$((t + 1))
done
howami result; picture result "" "${to_page}3 RIGHT\n3.5 RIGHT\n3.8 SELECT\n${gad7}${t} end\n" "$still"
# The PHQ-9, item 9 answered "Several days": the counselling line at once.
phq9=''
t=5
for a in 1 0 1 1 0 1 0 0 1; do
    i=0; while [ $i -le $a ]; do phq9="${phq9}${t} RIGHT\n"; t=$((t + 1)); i=$((i + 1)); done
    phq9="${phq9}${t} SELECT\n"; t=$((t + 1))
done
howami safety; picture safety "" "${to_page}3 RIGHT\n3.5 RIGHT\n4 RIGHT\n4.5 SELECT\n${phq9}${t} end\n" "$still"
howami chart; picture chart "" "${to_page}3 RIGHT\n3.5 RIGHT\n4 RIGHT\n4.5 RIGHT\n5 SELECT\n6 RIGHT\n7 end\n" "$still"
