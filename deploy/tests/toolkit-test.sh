#!/usr/bin/env bash
# toolkit-test.sh -- deploy/lib/toolkit.sh, function by function, in child shells whose output
# and exit status are compared with what the library's header promises. Run by deploy/test.sh;
# takes about a second.
# shellcheck disable=SC2016,SC2317 # the children's scripts expand in their own shells; helpers run through check
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=$here/../lib/toolkit.sh
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$lib"

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-toolkit-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A child script, named NAME.sh, that sources the library and runs BODY under set -euo pipefail.
child() {
    printf '#!/usr/bin/env bash\nset -euo pipefail\n. %q\n%s\n' "$lib" "$2" >"$work/$1.sh"
    chmod +x "$work/$1.sh"
}
# run NAME: runs the child (60 s at most); its stdout, stderr and exit status in $work/NAME.{out,err,rc}.
run() {
    local rc=0
    TMPDIR=$work timeout 60 "$work/$1.sh" >"$work/$1.out" 2>"$work/$1.err" </dev/null || rc=$?
    echo "$rc" >"$work/$1.rc"
}
# same FILE EXPECTED: FILE holds exactly EXPECTED (a trailing newline added), else the diff.
same() { diff <(printf '%s\n' "$2") "$1"; }
status() { [ "$(cat "$work/$1.rc")" = "$2" ] || { echo "exit status $(cat "$work/$1.rc"), not $2"; return 1; }; }

# --- the verdicts and the summary -------------------------------------------------------------
child verdicts '
pass "a thing that holds"
printf "line %s\n" $(seq 1 45) >"$TMPDIR/long.log"
fail "a thing that does not" "$TMPDIR/long.log"
fail "no log to show" "$TMPDIR/no-such.log"
skip "a thing not tried" "no tool"
finish'
run verdicts
check "pass, fail (with the last 40 lines of its log), skip: one line format" same "$work/verdicts.out" "ok - a thing that holds
FAIL - a thing that does not
$(seq 6 45 | sed 's/^/    | line /')
FAIL - no log to show
skip - a thing not tried (no tool)
1 passed, 2 failed, 1 skipped"
check "finish exits 1 when a check failed" status verdicts 1

child all-pass 'pass one; pass two; finish'
run all-pass
check "finish, nothing failed: the counts" same "$work/all-pass.out" "ok - one
ok - two
2 passed, 0 failed, 0 skipped"
check "finish exits 0 when nothing failed" status all-pass 0
check "the summary is what hardware-tests.sh reads" grep -Eq '^[0-9]+ passed, 0 failed' "$work/all-pass.out"

# --- check and check_all ------------------------------------------------------------------------
child checks '
set_it() { result=set; echo "noise on success"; }
check "a command that succeeds" set_it
echo "result: $result"
check "a command that fails" sh -c "echo why it failed; exit 3"
set_names() { out=changed; what=changed; }
check "a function setting globals named as the locals are" set_names
echo "out: $out, what: $what"
check_all "every line holds" <<'\''EOF'\''
[ 1 = 1 ]

true
EOF
check_all "two lines fail, the reader of stdin takes none" <<'\''EOF'\''
[ 1 = 2 ]
cat >/dev/null
false; exit 0
exit 1
EOF
finish'
run checks
check "check: output hidden on success, shown under a failure; it runs in the caller's shell" same "$work/checks.out" "ok - a command that succeeds
result: set
FAIL - a command that fails
    | why it failed
ok - a function setting globals named as the locals are
out: changed, what: changed
ok - every line holds
FAIL - two lines fail, the reader of stdin takes none
    | failed: [ 1 = 2 ]
    | failed: exit 1
3 passed, 2 failed, 0 skipped"
check "check leaves no file behind" bash -c '! ls "$1"/unwind-check.* 2>/dev/null' _ "$work"

# --- log and die ------------------------------------------------------------------------------------
child stage-name 'log "a message"; die "a reason"'
run stage-name
check "log and die: on stderr, named by the script's file name without .sh" same "$work/stage-name.err" "stage-name: a message
stage-name: error: a reason"
check "die exits 1" status stage-name 1
check "log and die write nothing on stdout" test ! -s "$work/stage-name.out"

child named 'me=the-rig; die --status 125 "the guest never answered"; echo unreachable'
run named
check "die --status N: the name the script set, exit N" same "$work/named.err" "the-rig: error: the guest never answered"
check "die --status 125 exits 125" status named 125

# --- eventually ------------------------------------------------------------------------------------
child waits '
tries=0
third() { tries=$((tries + 1)); [ "$tries" -ge 3 ]; }
eventually 30 third && echo "met at try $tries"
if ! eventually 0 false; then echo "deadline"; fi
stopped() { return 1; }
if ! eventually --while stopped 600 false; then echo "gave up"; fi'
run waits
check "eventually: tries until the condition holds, fails at the deadline, stops when --while fails" \
    same "$work/waits.out" "met at try 3
deadline
gave up"

# --- line_used_by, against libgpiod 1.6's gpioinfo ---------------------------------------------------
mkdir -p "$work/bin"
cat >"$work/bin/gpioinfo" <<'EOF'
#!/bin/sh
[ "$1" = /dev/gpiochip1 ] || { echo "gpioinfo: no chip $1" >&2; exit 1; }
cat <<'INFO'
gpiochip1 - 8 lines:
	line   0:       "sim0"     "unwind"  output  active-high [used]
	line   1:       "sim1"     "unwind"   input  active-high [used pull-up]
	line   2:       "sim2"       unused   input  active-high 
	line   5:       "sim5"    "gpioset"  output  active-high [used]
	line  12:      unnamed     "unwind"   input  active-high [used]
INFO
EOF
chmod +x "$work/bin/gpioinfo"
child lines '
for q in "0 unwind" "1 unwind" "2 unwind" "5 gpioset" "5 unwind" "2 unused" "1 gpiomon" "12 unwind"; do
    set -- $q
    if line_used_by /dev/gpiochip1 "$1" "$2"; then echo "$q: used"; else echo "$q: not"; fi
done
if line_used_by /dev/gpiochip9 0 unwind; then echo "no chip: used"; else echo "no chip: not"; fi'
rc=0
PATH=$work/bin:$PATH "$work/lines.sh" >"$work/lines.out" 2>/dev/null || rc=$?
check "line_used_by: the consumer's line, with or without a bias flag; not a free line, another consumer, another chip" \
    same "$work/lines.out" "0 unwind: used
1 unwind: used
2 unwind: not
5 gpioset: used
5 unwind: not
2 unused: not
1 gpiomon: not
12 unwind: used
no chip: not"

# --- cpu_seconds: what ended children cost -------------------------------------------------------
# A child that spins until it has used 1.5 s of CPU by its own clock ticks (read without a fork,
# so the ticks are its own; a loaded machine only makes it take longer), then a sleep.
child cost '
cpu_seconds before
bash -c "while read -r -a f </proc/\$\$/stat; [ \${f[13]} -lt $(($(getconf CLK_TCK) * 3 / 2)) ]; do for ((i = 0; i < 10000; i++)); do :; done; done"
cpu_seconds spun
sleep 0.2
cpu_seconds after
echo "$((spun - before)) $((after - spun))"'
run cost
check "cpu_seconds: a child that used 1.5 s of CPU counts 1 or 2 s; a sleep counts nothing" \
    grep -qxE "[12] 0" "$work/cost.out"

# --- wait_for_lock: a held lock names its holder, then is waited for --------------------------------
child locks '
touch "$TMPDIR/lock"
( exec 7>"$TMPDIR/lock"; flock 7; echo held >"$TMPDIR/holding"; while [ ! -e "$TMPDIR/release" ]; do sleep 0.05; done ) &
holder=$!
eventually 10 test -e "$TMPDIR/holding"
( sleep 0.3; touch "$TMPDIR/release" ) &
exec 8>"$TMPDIR/lock"
wait_for_lock 8 "$TMPDIR/lock" "the test lock"
echo "got it; the holder was $holder"'
run locks
check "wait_for_lock: names the process that holds the lock, then waits for it" \
    bash -c 'grep -q "^got it; the holder was " "$1.out" && grep -q "waiting for the test lock (.*), held by .*$(sed -n "s/^got it; the holder was //p" "$1.out") (" "$1.err"' _ "$work/locks"

finish
