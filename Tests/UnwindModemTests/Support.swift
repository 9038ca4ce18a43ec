import Foundation
import Glibc
import Logging
import Testing
@_exported import UnwindTestSupport
@testable import UnwindCore
import UnwindSimulatedHardware
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

/// The fast configuration with the device's cadences short too (registration, dialling, SIM
/// retries, a restart's settling), so a scenario runs in tens of milliseconds.
func testConfiguration(_ change: (inout ModemConfiguration) -> Void = { _ in }) -> ModemConfiguration {
    fastModemConfiguration { c in
        c.timeouts.dial = .milliseconds(300)
        c.timeouts.dialPatience = .seconds(2)
        c.timeouts.simBusyRetry = .milliseconds(40)
        c.timeouts.simProblemRetry = .milliseconds(100)
        c.timeouts.registrationPoll = .milliseconds(100)
        c.timeouts.registrationPatience = .milliseconds(300)
        c.timeouts.statusRefresh = .seconds(60)
        c.timeouts.reset = .milliseconds(400)
        c.timeouts.bootSettle = .milliseconds(200)
        change(&c)
    }
}

/// Where a scenario's simulated modem is plugged in.
enum Wire: String, CustomStringConvertible {
    /// A line in memory (`SimulatedModemLine`) on simulated time: the clock moves only when the
    /// rig moves it, straight to the next deadline — deterministic, and a scenario that waits
    /// seconds of device time runs in milliseconds.
    case memory
    /// A real pseudo-terminal, the real `SerialPort` and the monotonic clock: termios, the
    /// kernel's buffers and a vanishing tty, end to end, in real time.
    case pty

    var description: String { rawValue }
}

/// The device side (Outbox, GSMModem on a serial line) and a simulated modem, stepped together
/// on this thread: in memory on simulated time (the default), or over a pseudo-terminal with
/// the real `SerialPort` on the real clock.
final class ModemRig {
    let wire: Wire
    let sim: any SimulatedModem
    let directory: ScratchDirectory
    let clock: any DeviceClock
    let configuration: ModemConfiguration
    var port: SerialTransport
    var outbox: Outbox
    var inbox: Inbox
    /// Where received messages go (the inbox's directory).
    let repliesDirectory: ScratchDirectory
    var modem: GSMModem
    private let time: SimulatedTime?
    private let line: SimulatedModemLine?
    private let pty: ModemSimulator?
    private let baud: Int

    /// How long the device may go without being stepped, on either wire: the pty rig's poll
    /// timeout, the in-memory rig's longest jump.
    static let longestWait: Duration = .milliseconds(5)

    init(script: ModemScript = ModemScript(), baud: Int = 115_200, over wire: Wire = .memory,
         configure: (inout ModemConfiguration) -> Void = { _ in }, name: String = #function) throws {
        self.wire = wire
        self.baud = baud
        directory = ScratchDirectory(name)
        configuration = testConfiguration(configure)
        switch wire {
        case .memory:
            // A monotonic clock that has been running a while, as a booted board's has.
            let time = SimulatedTime(start: Instant(nanoseconds: 1_000_000_000_000))
            let line = SimulatedModemLine(script: script, clock: time)
            (self.time, self.line, pty, clock, sim, port) = (time, line, nil, time, line, line)
        case .pty:
            let pty = try ModemSimulator(script: script)
            (time, line, self.pty, clock, sim) = (nil, nil, pty, LinuxClock(), pty)
            port = try SerialPort(SerialConfiguration(path: pty.path, baud: baud))
        }
        outbox = Outbox(storage: try DirectoryStore.outbox(at: directory.path))
        repliesDirectory = ScratchDirectory(name + "-replies")
        inbox = Inbox(storage: try DirectoryStore(directory: repliesDirectory.path))
        modem = GSMModem(port: port, outbox: outbox, inbox: inbox, configuration: configuration, random: SeededRandom(seed: 42),
                         logger: quietLogger())
    }

    var now: Moment { clock.now() }

    /// The daemon is killed: everything dropped without a goodbye. A new one starts on the same
    /// outbox directory and the same modem path.
    func restartDaemon(inboxStorage: ListableStore? = nil) throws {
        port.close()
        if let pty { port = try SerialPort(SerialConfiguration(path: pty.path, baud: baud)) }
        outbox = Outbox(storage: try DirectoryStore.outbox(at: directory.path))
        inbox = Inbox(storage: try inboxStorage ?? DirectoryStore(directory: repliesDirectory.path))
        modem = GSMModem(port: port, outbox: outbox, inbox: inbox, configuration: configuration, random: SeededRandom(seed: 7),
                         logger: quietLogger())
    }


    /// Steps both ends until `done` or `limit` (of the rig's time); returns whether `done`
    /// became true.
    @discardableResult
    func run(until done: () -> Bool, within limit: Duration = .seconds(5)) -> Bool {
        if let time, let line { return runInMemory(until: done, within: limit, time, line) }
        return runOverThePTY(until: done, within: limit, pty!)
    }

    /// Simulated time stands still while the device works and jumps to the next thing due: a
    /// deadline of the modem session, something the simulated modem says, or the longest wait.
    private func runInMemory(until done: () -> Bool, within limit: Duration, _ time: SimulatedTime,
                             _ line: SimulatedModemLine) -> Bool {
        let end = time.instant + limit
        var stepsWithoutTime = 0
        while true {
            if done() { return true }
            if time.instant > end { return false }
            line.step()
            modem.step(at: time.now())
            line.step()
            if done() { return true }
            var next = time.instant + Self.longestWait
            for d in [modem.nextDeadline, line.nextDeadline] { if let d, d < next { next = d } }
            if next > time.instant {
                stepsWithoutTime = 0
                time.advance(by: next - time.instant)
            } else {
                // Something due now (an answer the modem gave at once): step again. A session
                // that asks for that without end is a bug, not a reason to hang the suite.
                stepsWithoutTime += 1
                if stepsWithoutTime > 10_000 {
                    Issue.record("the modem asks to be stepped again at once, forever (at \(time.instant))")
                    return false
                }
            }
        }
    }

    private func runOverThePTY(until done: () -> Bool, within limit: Duration, _ sim: ModemSimulator) -> Bool {
        let end = clock.now().instant + limit
        while true {
            if done() { return true }
            let now = clock.now()
            if now.instant > end { return false }
            sim.step(now: now.instant)
            modem.step(at: now)
            sim.step(now: clock.now().instant)
            if done() { return true }
            var wait = Self.longestWait.nanoseconds / 1_000_000
            let t = clock.now().instant
            for d in [modem.nextDeadline, sim.nextDeadline] {
                if let d { wait = min(wait, max(0, (d - t).nanoseconds / 1_000_000)) }
            }
            var fds = modem.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if sim.descriptor >= 0 { fds.append(pollfd(fd: sim.descriptor, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&fds, nfds_t(fds.count), Int32(wait))
        }
    }

    /// Runs for a while whatever happens.
    func run(for d: Duration) { run(until: { false }, within: d) }

    func ready(within limit: Duration = .seconds(5)) -> Bool {
        run(until: { self.modem.status.link == .ready }, within: limit)
    }

    func settle(within limit: Duration = .seconds(5)) -> Bool { run(until: { self.modem.isIdle }, within: limit) }

    /// Nothing left to send, and no status report waited for (the outbox is then empty).
    func settleReports(within limit: Duration = .seconds(5)) -> Bool {
        run(until: { self.modem.isIdle && !self.modem.messages.contains(where: \.awaitingReports) }, within: limit)
    }

    /// The bytes the modem received, readable: CR as \r, ESC as <ESC>, Ctrl-Z as <^Z>.
    var transcript: String { render(sim.received) }
}

func render(_ bytes: [UInt8]) -> String {
    var s = ""
    for b in bytes {
        switch b {
        case 0x0D: s += "\\r"
        case 0x0A: s += "\\n"
        case 0x1B: s += "<ESC>"
        case 0x1A: s += "<^Z>"
        case 0x20...0x7E: s.unicodeScalars.append(Unicode.Scalar(b))
        default: s += String(format: "<%02X>", b)
        }
    }
    return s
}

/// What a healthy start-up writes, in the transcript's notation.
let startupTranscript = "<ESC>\\rAT\\rATE0\\rAT+CMEE=1\\rAT+CPIN?\\rAT+CMGF=0\\rAT+CREG?\\rAT+CGREG?\\rAT+CEREG?\\rAT+CSQ\\rAT+COPS?\\r"
    + receivingSetUp

/// Start-up while an alert waits: the store is listed once the alert is out.
let startupBeforeListing = String(startupTranscript.dropLast("AT+CMGL=4\\r".count))

func startupAndSend(_ send: String) -> String { startupBeforeListing + send + "AT+CMGL=4\\r" }

/// What start-up writes after the status queries: the service centre, then what receiving needs,
/// then the listing of the SIM's store.
let receivingSetUp = "AT+CSCA?\\rAT+CSMS?\\rAT+CPMS=\"SM\",\"SM\",\"SM\"\\rAT+CNMI=2,1,0,1,0\\rAT+CMGL=4\\r"

/// The bytes of one attempt at a message: PDU mode, then each part after its prompt.
func sendTranscript(_ pdus: [SMSSubmitPDU], pduMode: Bool = true) -> String {
    var s = pduMode ? "AT+CMGF=0\\r" : ""
    for p in pdus { s += "AT+CMGS=\(p.tpduLength)\\r" + p.hexString + "<^Z>" }
    return s
}

func pdus(_ alert: AlertSlot, reference: UInt16) -> [SMSSubmitPDU] {
    try! SMSPDU.encode(alert.message, to: alert.number, reference: reference, options: SMSSubmitOptions(statusReport: true))
}

/// The checks every scenario ends with: the simulated modem saw nothing wrong, every prompt
/// that was sent held exactly a valid PDU, no user text left a PDU, and no Ctrl-Z or ESC byte
/// appears anywhere but where the protocol puts it.
func expectClean(_ sim: any SimulatedModem, texts: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(sim.violations.isEmpty, "violations: \(sim.violations)", sourceLocation: sourceLocation)
    for p in sim.prompts where p.sent {
        #expect(p.text.allSatisfy { DecodedSubmitHex.isHex($0) }, "a sent prompt held \(render(p.text))",
                sourceLocation: sourceLocation)
    }
    // Outside prompts, the device writes only command lines: printable ASCII, CR, ESC, and the
    // Ctrl-Z that ends a PDU.
    let bytes = sim.received
    for (i, b) in bytes.enumerated() {
        if b == 0x1A {
            let before = bytes[..<i].reversed().prefix { DecodedSubmitHex.isHex($0) }
            #expect(before.count >= 20, "Ctrl-Z not after a PDU at byte \(i)", sourceLocation: sourceLocation)
        } else {
            #expect(b == 0x0D || b == 0x1B || (0x20...0x7E).contains(b), "byte \(b) at \(i)", sourceLocation: sourceLocation)
        }
    }
    for command in sim.commands {
        for t in texts where t.count >= 4 {
            #expect(!command.contains(t), "user text on a command line: \(command)", sourceLocation: sourceLocation)
        }
    }
}

enum DecodedSubmitHex {
    static func isHex(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) || (0x41...0x46).contains(b) }
}

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.filter { !$0.isWhitespace }.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
    return out
}

extension Array where Element == UInt8 {
    var hexString: String { map { String(format: "%02X", $0) }.joined() }
}

func alert(_ name: String = "Mum", _ number: String = "+15550100001",
           _ message: String = "I'm having a panic attack. Please call me.") -> AlertSlot {
    try! AlertSlot(name: name, number: number, message: message)
}

/// An alert whose message has quotes or semicolons, which saving refuses: for proving that the
/// encoder and the modem keep even such text inside the PDU.
func unsavableAlert(_ name: String, _ number: String, _ message: String) -> AlertSlot {
    try! AlertSlot(testingName: name, number: PhoneNumber(number), message: message)
}
