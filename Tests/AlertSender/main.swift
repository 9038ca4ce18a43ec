// The daemon's panic path in a process of its own, for the restart test to kill with SIGKILL:
//   alert-sender TTY OUTBOX_DIR [NAME NUMBER MESSAGE]
// With an alert: journals it in the outbox (GSMModem.send writes and fsyncs before any AT
// traffic), prints "journaled", then talks to the modem on TTY until killed. Without one: only
// resends what the outbox holds, and prints "idle" once the outbox is empty.
import Glibc
import Logging
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

/// One line, unbuffered: the parent waits for it.
func say(_ line: String, to fd: Int32 = STDOUT_FILENO) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count) }
}

let args = CommandLine.arguments
guard args.count == 3 || args.count == 6 else {
    say("usage: alert-sender TTY OUTBOX_DIR [NAME NUMBER MESSAGE]", to: STDERR_FILENO)
    exit(2)
}
var logger = Logger(label: "alert-sender")
logger.logLevel = .critical
let clock = LinuxClock()
let modem = GSMModem(port: try SerialPort(SerialConfiguration(path: args[1])),
                     outbox: Outbox(storage: try DirectoryStore.outbox(at: args[2]), now: clock.now().wall), logger: logger)
if args.count == 6 {
    _ = modem.send(try AlertSlot(name: args[3], number: args[4], message: args[5]), slot: 1, at: clock.now())
    say("journaled")
}
var reported = false
while true {
    let now = clock.now()
    modem.step(at: now)
    if args.count == 3 && modem.isIdle && !reported {
        reported = true
        say("idle")
    }
    var wait: Int64 = 20
    if let d = modem.nextDeadline { wait = min(wait, max(0, (d - clock.now().instant).nanoseconds / 1_000_000)) }
    var fds = modem.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    _ = poll(&fds, nfds_t(fds.count), Int32(wait))
}
