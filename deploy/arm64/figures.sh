#!/usr/bin/env bash
# figures.sh -- the daemon's weight on its board's architecture, beside x86_64: start-up in
# instructions and memory, measured the same way for both (deploy/README.md has the results).
#
#   deploy/arm64/figures.sh [--arm64 BIN] [--sysroot DIR] [--x86-64 BIN] [--only instructions|memory|panic]
#
#   --arm64 BIN     the aarch64 release `unwind` (default: deploy/arm64/build-deb.sh's, in the
#                   toolchain cache)
#   --sysroot DIR   the aarch64 C libraries it runs on (default: the toolchain's trixie sysroot)
#   --x86-64 BIN    the x86_64 release `unwind` (default: .build/release/unwind; build it with
#                   `swift build -c release --static-swift-stdlib --product unwind`)
#
# Why instructions: time under an emulator is not a board's. qemu-user runs the program with
# `-d in_asm,exec,nochain`: every translation block is logged once with its instructions and
# every execution of one as a line; the sum over executions is the number of guest instructions
# the program ran (user space only: the kernel's work in system calls is not counted). A Pi Zero
# 2 W (Cortex-A53, 1 GHz, in order, dual issue) retires 0.5-1 instruction a cycle on code like
# this, so N instructions take between N/1e9 and 2N/1e9 seconds there.
#
# Start-up is measured on the headless simulator (`unwind sim --headless`), which assembles the
# device exactly as `unwind run` does (DeviceAssembly: state files, content, the loop, the panic
# link, the control socket) on simulated hardware: exec, 0.05 simulated seconds (the first two
# frames through the SSD1306 driver), the session saved, exit. The panic link is the scripted
# one, ready at once: on a board PANIC-ready also waits for the modem's answers over the serial
# line, which is the modem's time, not the CPU's.
#
# PANIC-ready (`--only panic`, also part of a full run): the device with the real modem stack,
# `unwind sim --modem PTY` in a pseudo-terminal made by script(1) (it needs a terminal), talking
# through the real GSMModem and AT engine to a fake modem in another process (python, below: a
# registered SIM with a signal, answering at once); counted from exec to the first execution of
# the readiness policy's report (`Readiness.report`, found by its symbol in the trace), which
# logs "readiness: a PANIC can go out now". An upper bound of the daemon's: the terminal
# simulator also draws every frame into the terminal, and the loop runs on real time, so the
# frames drawn while the modem answers depend on how fast the emulator runs.
#
# Memory: ten simulated minutes (a breathing session, PANIC held at 30 s, the alerts sent), its
# resident pages read from /proc/PID/smaps every 50 ms: the peak, and at the peak how much is
# private dirty (the process's own: heap, stacks, written data) and how much is clean (code and
# read-only data, shared with the page cache). qemu-user maps the guest at guest_base 0 and logs
# the guest's own mappings (`-d page`): only the pages in those count, not the emulator's.
set -euo pipefail
# log, die
# shellcheck source-path=SCRIPTDIR source=../lib/toolkit.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/toolkit.sh"
cd "$(dirname "$0")/../.."

toolchain=deploy/arm64/toolchain.sh
root=$("$toolchain" path)
arm64_bin=$root/build/arm64-release/aarch64-unknown-linux-gnu/release/unwind
sysroot=$root/opt/arm64/trixie-sysroot
x86_bin=.build/release/unwind
only=
while [ $# -gt 0 ]; do
    case $1 in
    --arm64) arm64_bin=$2; shift ;;
    --sysroot) sysroot=$2; shift ;;
    --x86-64) x86_bin=$2; shift ;;
    --only) only=$2; shift ;;
    -h | --help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die --status 2 "unknown argument $1" ;;
    esac
    shift
done
for f in "$arm64_bin" "$x86_bin"; do
    [ -x "$f" ] || die --status 2 "no executable $f (see --help)"
done
for t in qemu-aarch64-static qemu-x86_64-static mawk python3 script; do
    command -v "$t" >/dev/null || die --status 2 "needs $t (apt-get install qemu-user-static mawk python3 util-linux)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/unwind-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '0.05 end\n' >"$work/first-frame.script"
cat >"$work/ten-minutes.script" <<'EOF'
1    SELECT
30   PANIC hold 1.6
40   reply 1 On my way
600  end
EOF

# The sum of guest instructions over executed translation blocks (see the header).
cat >"$work/count.awk" <<'EOF'
/^IN:/ { inblock = 1; first = ""; n = 0; name = substr($0, 5); next }
inblock && /^0x[0-9a-f]+:/ { if (first == "") first = substr($1, 3, length($1) - 3); n++; next }
inblock { if (first != "") { size[first] = n; if (mark != "" && index(name, mark)) marked[first] = 1 }; inblock = 0 }
/^Trace / { i = index($0, "["); split(substr($0, i + 1), f, "/"); pc = f[2]; sub(/^0+/, "", pc)
            if (pc in size) insns += size[pc]; else unmatched++
            # The instructions before the first run of the marked function (-v mark=SYMBOL).
            if ((pc in marked) && !seen) { seen = 1; before = insns - size[pc] } }
END { printf "%d %d %s\n", insns, unmatched, seen ? before : "-" }
EOF

# trace ARCH BIN ARGS...: runs BIN under qemu-user, its trace going to the counter through a FIFO
# (the log is gigabytes); with SETUP set, in a terminal script(1) makes, after that shell text
# (the counter then also notes the first run of the function whose symbol contains MARK). The
# counter's answer: $work/count.out.
trace() {
    local arch=$1 bin=$2
    shift 2
    local fifo=$work/log.fifo
    rm -f "$fifo"
    mkfifo -m 600 "$fifo"
    mawk -v mark="${MARK:-}" -f "$work/count.awk" "$fifo" >"$work/count.out" &
    local reader=$!
    local guest=("qemu-$arch-static")
    [ "$arch" = aarch64 ] && guest+=(-L "$sysroot")
    guest+=(-d "in_asm,exec,nochain" -D "$fifo" "$bin" "$@")
    if [ -n "${SETUP:-}" ]; then
        script -qfec "$SETUP $(printf '%q ' "${guest[@]}")" /dev/null >/dev/null 2>&1 || true
    else
        "${guest[@]}" >/dev/null 2>&1 || true
    fi
    wait "$reader"
}

# count ARCH BIN ARGS...: guest instructions of one run.
count() {
    trace "$@"
    local insns unmatched marked
    read -r insns unmatched marked <"$work/count.out"
    [ "${unmatched:-1}" = 0 ] || log "$unmatched blocks without a translation"
    printf '%s' "$insns"
}

# A modem in another process on a pseudo-terminal: a registered SIM with a good signal, every
# answer at once, every other command OK (no SMS is sent here).
cat >"$work/modem.py" <<'EOF'
import os, sys, tty
link = sys.argv[1]
master, slave = os.openpty()
tty.setraw(slave)
os.symlink(os.ttyname(slave), link)
answers = {
    "AT+CPIN?": ["+CPIN: READY"], "AT+CREG?": ["+CREG: 0,1"], "AT+CGREG?": ["+CGREG: 0,1"],
    "AT+CEREG?": ["+CEREG: 0,1"], "AT+CSQ": ["+CSQ: 21,99"], "AT+COPS?": ['+COPS: 0,0,"Unwind Mobile",7'],
    "AT+CSCA?": ['+CSCA: "+15550009999",145'], "AT+CSMS?": ["+CSMS: 0,1,1,1"],
    'AT+CPMS="SM","SM","SM"': ["+CPMS: 0,30,0,30,0,30"],
}
buffer = b""
while True:
    try:
        data = os.read(master, 4096)
    except OSError:
        break
    buffer += data
    while b"\r" in buffer:
        line, buffer = buffer.split(b"\r", 1)
        command = line.strip().decode("ascii", "replace").upper()
        if command:
            reply = answers.get(command, []) + ["OK"]
            os.write(master, b"".join(b"\r\n" + r.encode() + b"\r\n" for r in reply))
EOF

# panic_ready ARCH BIN: instructions from exec to the readiness policy's first report (see the
# header), against the fake modem; "-" when the report never ran.
panic_ready() {
    local arch=$1 bin=$2 state=$work/panic-state-$1 link=$work/modem-$1
    rm -rf "$state" "$link"
    python3 "$work/modem.py" "$link" &
    local modem=$!
    until [ -L "$link" ]; do sleep 0.05; done
    # q is typed once the log says a PANIC can go out (or the guest ended, or five minutes passed).
    rm -f "$work/guest-done"
    {
        local waited=0
        until grep -qs 'a PANIC can go out now' "$state/sim.log" || [ -e "$work/guest-done" ] || [ $waited -gt 6000 ]; do
            sleep 0.05
            waited=$((waited + 1))
        done
        printf q
        until [ -e "$work/guest-done" ] || [ $waited -gt 6200 ]; do
            sleep 0.05
            waited=$((waited + 1))
        done
    } | {
        SETUP="stty cols 160 rows 60;" MARK=9ReadinessV6report trace "$arch" "$bin" sim --modem "$link" --state "$state"
        touch "$work/guest-done"
    }
    kill "$modem" 2>/dev/null || true
    wait "$modem" 2>/dev/null || true
    local insns unmatched marked
    read -r insns unmatched marked <"$work/count.out"
    # Only when the first verdict reported was "ready" is the first report the one counted to.
    if grep -m1 'readiness: ' "$state/sim.log" | grep -q 'a PANIC can go out now'; then
        printf '%s' "$marked"
    else
        log "$arch: no PANIC-ready first (see $state/sim.log):"
        grep -i 'modem\|readiness' "$state/sim.log" | head -n 5 >&2
        printf -- -
    fi
}

# memory ARCH BIN ARGS...: peak RSS, and its private dirty and clean parts (KiB).
memory() {
    local arch=$1 bin=$2
    shift 2
    local cmd=("$bin" "$@") layout=
    if [ "$arch" = aarch64 ]; then
        layout=$work/page.log
        cmd=(qemu-aarch64-static -L "$sysroot" -d page -D "$layout" "$bin" "$@")
    fi
    "${cmd[@]}" >/dev/null 2>&1 &
    local pid=$!
    python3 - "$pid" "$layout" <<'EOF'
import os, sys, time
pid, layout = int(sys.argv[1]), sys.argv[2]

def guest_ranges():
    """The guest's mappings as qemu-user logged them last (guest_base 0: host = guest addresses)."""
    if not layout:
        return None
    try:
        text = open(layout).read()
    except OSError:
        return []
    block = text.rsplit("start            end", 1)[-1].splitlines()[1:]
    ranges = []
    for line in block:
        parts = line.split()
        if len(parts) == 3 and "-" in parts[0]:
            a, b = parts[0].split("-")
            ranges.append((int(a, 16), int(b, 16)))
        elif ranges:
            break
    return ranges

def sample():
    ranges = guest_ranges()
    rss = dirty = clean = 0
    take = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                a, b = (int(x, 16) for x in head.split("-"))
                take = ranges is None or any(s <= a and b <= e for s, e in ranges)
            elif take and head in ("Rss:", "Private_Dirty:", "Shared_Clean:", "Private_Clean:"):
                kb = int(line.split()[1])
                if head == "Rss:": rss += kb
                elif head == "Private_Dirty:": dirty += kb
                else: clean += kb
    return rss, dirty, clean

peak = (0, 0, 0)
while True:
    try:
        s = sample()
    except (OSError, ValueError):
        break
    if s[0] > peak[0]:
        peak = s
    time.sleep(0.05)
print(*peak)
EOF
    wait "$pid" || true
}

echo "figures: $(date -u +%FT%TZ) on $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %12s %14s %14s %14s %16s %22s\n' arch "binary (B)" "--version" "first frame" "again" "PANIC-ready" "peak RSS / dirty / clean KiB"
for arch in aarch64 x86_64; do
    bin=$arm64_bin
    [ "$arch" = x86_64 ] && bin=$x86_bin
    state=$work/state-$arch
    rm -rf "$state" "$work/out"
    version=- first=- again=- ready=- rss=- dirty=- clean=-
    if [ "$only" = panic ]; then
        printf '%-8s %12s %14s %14s %14s %16s %22s\n' "$arch" "$(stat -c %s "$bin")" - - - "$(panic_ready "$arch" "$bin")" -
        continue
    fi
    if [ "$only" != memory ]; then
        version=$(count "$arch" "$bin" --version)
        first=$(count "$arch" "$bin" sim --headless "$work/first-frame.script" --out "$work/out" --state "$state" --no-frames)
        rm -rf "$work/out"
        again=$(count "$arch" "$bin" sim --headless "$work/first-frame.script" --out "$work/out" --state "$state" --no-frames)
        rm -rf "$work/out" "$state"
        ready=$(panic_ready "$arch" "$bin")
    fi
    if [ "$only" = instructions ]; then
        printf '%-8s %12s %14s %14s %14s %16s %22s\n' "$arch" "$(stat -c %s "$bin")" "$version" "$first" "$again" "$ready" "-"
        continue
    fi
    # Five contacts, so that PANIC journals and sends five alerts (the scripted link takes them);
    # the files are the same on both architectures, so the x86_64 binary writes them.
    mkdir -p "$state"
    for slot in 1 2 3 4 5; do
        "$x86_bin" alerts set --state "$state" "$slot" --name "Contact $slot" --number "+1555010000$slot" \
            --message "Unwind: I pressed my panic button and need help. Please call me." >/dev/null
    done
    read -r rss dirty clean < <(memory "$arch" "$bin" sim --headless "$work/ten-minutes.script" --out "$work/out" --state "$state" --no-frames)
    printf '%-8s %12s %14s %14s %14s %16s %22s\n' "$arch" "$(stat -c %s "$bin")" "$version" "$first" "$again" "$ready" "$rss / $dirty / $clean"
done
