#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindCore

/// The simulated modem itself: what a healthy SIM800/SIM7600 (or the script's broken one) says
/// to the bytes it hears, and when. No descriptor, no thread, no clock of its own — every byte
/// in and every timer comes with the instant it happens at — so the same modem answers on the
/// far end of a pseudo-terminal (`ModemSimulator`) and on a line that exists only in memory
/// (`SimulatedModemLine`).
///
/// It records every byte it received, every command line, everything typed into every prompt,
/// and each rule the device broke (`violations`): a Ctrl-Z outside a prompt, a prompt that held
/// anything but a valid PDU, a command line it does not know.
public struct ScriptedModem: Sendable {
    enum Mode: Equatable, Sendable {
        case command
        /// AT+CMGS read; the prompt is due at `promptAt` (nil: never).
        case awaitingPrompt(length: Int, occurrence: Int, promptAt: Instant?)
        case prompt(length: Int, occurrence: Int)
        case booting(until: Instant)
    }

    public var script: ModemScript
    var mode: Mode = .command
    var echo: Bool
    var pduMode = true
    var simUnlocked = false
    var wrongPINs = 0
    var line: [UInt8] = []
    var lineStart: Instant?
    var promptText: [UInt8] = []
    /// What the modem has said, each byte with the instant it reaches the line.
    var output: [(byte: UInt8, at: Instant)] = []
    var lastByteAt = Instant.zero
    var replyCursor: [String: Int] = [:]
    var messageReference = 0

    /// Every byte the device wrote, in order, across replugs.
    public internal(set) var received: [UInt8] = []
    /// Every command line (without CR), in order.
    public internal(set) var commands: [String] = []
    /// Everything typed into each prompt, and whether it ended in Ctrl-Z (sent) or ESC.
    public internal(set) var prompts: [(text: [UInt8], sent: Bool)] = []
    /// Parts accepted (`+CMGS` answered) or swallowed (`silence`).
    public internal(set) var parts: [SimulatedPart] = []
    /// Rules the device broke. A correct device leaves this empty.
    public internal(set) var violations: [String] = []
    public internal(set) var calls: [String] = []
    public internal(set) var serviceCentre: String?
    public internal(set) var submitCount = 0
    /// When the first byte of the first `AT+CMGS` arrived.
    public internal(set) var firstSubmitAt: Instant?

    // Receiving (see ScriptedModemMessages.swift).
    /// AT+CNMI's <mt> and <ds> as the device set them (0 after a restart).
    public internal(set) var indications = (mt: 0, ds: 0)
    /// The SIM's store: index → message.
    public internal(set) var store: [Int: StoredSMS] = [:]
    /// Status reports the modem keeps in its own "SR" memory (`ModemScript.reportMemory`), and
    /// which memory AT+CMGR, AT+CMGD and AT+CMGL reach (AT+CPMS's first).
    public internal(set) var reportStore: [Int: StoredSMS] = [:]
    public internal(set) var readMemory = "SM"
    /// Messages the network holds because the store was full; delivered when there is room.
    public internal(set) var heldByNetwork: [[UInt8]] = []
    var scheduledReports: [ScheduledReport] = []
    /// Every status report the network sent, and how it reached the device.
    public internal(set) var reportsSent: [SentReport] = []
    /// +CDS sent and not yet acknowledged with AT+CNMA (phase 2+ only).
    public internal(set) var acknowledgementsDue = 0
    /// Indexes deleted with AT+CMGD, in order.
    public internal(set) var deletions: [Int] = []
    var incomingReference = 0
    /// The call in progress: its number and when (if ever) it ends on its own.
    public internal(set) var callNumber: String?
    var callEnds: (at: Instant, line: String)?
    /// When the contact picks up the call in progress (nil: never).
    var callAnswers: Instant?
    var callPickedUp = false
    /// Every number that picked up, in order: the calls as the network saw them answered.
    public internal(set) var answeredCalls: [String] = []

    public init(script: ModemScript) {
        self.script = script
        self.echo = script.echo
    }

    /// When the modem has something to say next, or a timer to run (a prompt, the end of a boot).
    public var nextDeadline: Instant? {
        var d = output.first?.at
        switch mode {
        case .booting(let until): d = min(d ?? until, until)
        case .awaitingPrompt(_, _, let at?): d = min(d ?? at, at)
        default: break
        }
        for t in [scheduledReports.map(\.at).min(), callEnds?.at, callAnswers] { if let t { d = min(d ?? t, t) } }
        return d
    }

    // MARK: Time and the line

    /// Runs the timers due by `now`: the end of a boot, a late prompt.
    public mutating func advance(to now: Instant) {
        networkTimers(now)
        switch mode {
        case .booting(let until) where now >= until:
            mode = .command
            send(script.bootMessages, at: now)
        case .awaitingPrompt(let length, let k, let at?) where now >= at:
            showPrompt(length: length, occurrence: k, at: now)
        default:
            break
        }
    }

    /// The bytes the device wrote, arriving at `now`.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Instant) {
        for b in bytes { byte(b, at: now) }
    }

    /// What the modem has said by `now`, taken off its queue.
    public mutating func takeOutput(dueBy now: Instant) -> [UInt8] {
        let n = output.prefix { $0.at <= now }.count
        let due = output.prefix(n).map(\.byte)
        output.removeFirst(n)
        return due
    }

    /// Bytes the line could not take yet (a full pty buffer): first in the queue again.
    mutating func putBack(_ bytes: ArraySlice<UInt8>, at now: Instant) {
        output.insert(contentsOf: bytes.map { (byte: $0, at: now) }, at: 0)
    }

    /// Plugged in (again): a fresh line, nothing said on it yet.
    mutating func plugged() {
        mode = .command
        output.removeAll()
    }

    /// Unplugged: whatever was queued for the line is gone with it.
    mutating func unplugged() {
        output.removeAll()
        line.removeAll()
        mode = .command
    }

    // MARK: Output

    mutating func emit(_ bytes: some Sequence<UInt8>, at now: Instant) {
        guard !script.silent else { return }
        if script.answersWhileSubmitPending, output.contains(where: { $0.at > now }) {
            // Answers now go before a result that is still to come.
            let i = output.firstIndex { $0.at > now } ?? output.count
            output.insert(contentsOf: bytes.map { (byte: $0, at: now) }, at: i)
            return
        }
        let byteTime: Duration = script.outputBaud.map { .nanoseconds(10_000_000_000 / Int64($0)) } ?? .zero
        var t = max(now, lastByteAt)
        for b in bytes {
            t = t + byteTime
            output.append((b, byteTime == .zero ? now : t))
        }
        if byteTime != .zero { lastByteAt = t }
    }

    /// Sends lines at `now` (framed CR LF … CR LF), e.g. an unsolicited code at a chosen moment.
    public mutating func send(_ lines: [String], at now: Instant) {
        for l in lines { emit(Array("\r\n\(l)\r\n".utf8), at: now) }
    }

    /// Boots from `now`: forgets ATE0 and everything in flight, prints the boot messages after
    /// `bootTime`. What was already said before the restart (the OK of AT+CFUN=1,1) still goes
    /// out when `keepingOutput`.
    public mutating func restart(at now: Instant, keepingOutput: Bool = false) {
        mode = .booting(until: now + script.bootTime)
        if !keepingOutput { output.removeAll() }
        line.removeAll()
        promptText.removeAll()
        echo = script.echo
        pduMode = true
        indications = (0, 0)
        acknowledgementsDue = 0
        callNumber = nil
        callEnds = nil
        callAnswers = nil
        callPickedUp = false
    }

    // MARK: Input

    mutating func byte(_ b: UInt8, at now: Instant) {
        received.append(b)
        switch mode {
        case .booting:
            return
        case .prompt(let length, let k):
            if echo { emit([b], at: now) }
            switch b {
            case 0x1A: submit(length: length, occurrence: k, at: now)
            case 0x1B:
                prompts.append((promptText, false))
                promptText.removeAll()
                mode = .command
            default: promptText.append(b)
            }
        case .awaitingPrompt(_, let k, let at):
            if b == 0x1B && (at == nil || script.escapeCancelsPendingPrompt) {
                prompts.append((promptText, false))
                promptText.removeAll()
                mode = .command
                return
            }
            if b == 0x1A {
                violations.append("Ctrl-Z before the prompt of AT+CMGS #\(k) was shown")
                mode = .command
                return
            }
            if b != 0x1B { promptText.append(b) }
        case .command:
            if echo { emit([b], at: now) }
            switch b {
            case 0x0D:
                let text = line
                line.removeAll()
                let started = lineStart ?? now
                lineStart = nil
                command(text, startedAt: started, at: now)
            case 0x0A:
                break
            case 0x1A:
                violations.append("Ctrl-Z outside a prompt")
                line.removeAll()
            case 0x1B:
                line.removeAll()  // ESC at the command level clears the line
                lineStart = nil
            default:
                if line.isEmpty { lineStart = now }
                line.append(b)
            }
        }
    }

    mutating func ok(_ now: Instant) { send(["OK"], at: now) }

    mutating func cmgs(length: Int, startedAt: Instant, at now: Instant) {
        submitCount += 1
        if firstSubmitAt == nil { firstSubmitAt = startedAt }
        if !pduMode { violations.append("AT+CMGS #\(submitCount) in text mode") }
        let plan = script.submits[submitCount] ?? script.defaultSubmit
        promptText.removeAll()
        switch plan.prompt {
        case .immediate: showPrompt(length: length, occurrence: submitCount, at: now)
        case .after(let d): mode = .awaitingPrompt(length: length, occurrence: submitCount, promptAt: now + d)
        case .never: mode = .awaitingPrompt(length: length, occurrence: submitCount, promptAt: nil)
        }
    }

    private mutating func showPrompt(length: Int, occurrence k: Int, at now: Instant) {
        mode = .prompt(length: length, occurrence: k)
        let plan = script.submits[k] ?? script.defaultSubmit
        emit(plan.noise.isEmpty ? Array("\r\n> ".utf8) : plan.noise + Array("> ".utf8), at: now)
        send(plan.afterPrompt, at: now)
    }

    private mutating func submit(length: Int, occurrence k: Int, at now: Instant) {
        let text = promptText
        promptText.removeAll()
        prompts.append((text, true))
        mode = .command
        let plan = script.submits[k] ?? script.defaultSubmit
        let decoded: DecodedSubmit
        do {
            decoded = try DecodedSubmit.decode(hex: text, announced: length)
        } catch {
            violations.append("prompt of AT+CMGS #\(k) sent with \(String(decoding: text, as: UTF8.self).debugDescription): \(error)")
            send(["+CMS ERROR: 304"], at: now)
            return
        }
        let at = now + plan.resultDelay
        send(plan.beforeResult, at: now)
        let result = script.resultsByText.keys.sorted().first { decoded.text.contains($0) }
            .flatMap { script.resultsByText[$0] } ?? plan.result
        switch result {
        case .accepted, .acceptedWithoutOK:
            parts.append(SimulatedPart(submit: decoded, occurrence: k, answered: true))
            messageReference = (messageReference + 1) % 256
            scheduleReports(for: decoded, reference: messageReference, occurrence: k, at: at)
            let lines = ["+CMGS: \(messageReference)"] + (result == .accepted ? ["OK"] : [])
            if script.answersWhileSubmitPending && at > now {
                // Out of the queue's order: what the modem says meanwhile is not held behind it.
                var bytes: [UInt8] = []
                for l in plan.corruptedResult ?? lines { bytes += Array("\r\n\(l)\r\n".utf8) }
                let i = output.firstIndex { $0.at > at } ?? output.count
                output.insert(contentsOf: bytes.map { (byte: $0, at: at) }, at: i)
            } else if !plan.noise.isEmpty {
                for l in plan.corruptedResult ?? lines { emit(Array("\r\n".utf8) + plan.noise + Array("\(l)\r\n".utf8), at: at) }
            } else {
                send(plan.corruptedResult ?? lines, at: at)
            }
            if let again = plan.repeatResultAfter { send(lines, at: at + again) }
        case .cmsError(let n):
            send(["+CMS ERROR: \(n)"], at: at)
            if let again = plan.repeatResultAfter { send(["+CMS ERROR: \(n)"], at: at + again) }
        case .cmeError(let n):
            send(["+CME ERROR: \(n)"], at: at)
        case .silence:
            parts.append(SimulatedPart(submit: decoded, occurrence: k, answered: false))
        case .restart:
            restart(at: at)
        }
    }

    // MARK: What the network got

    /// Complete messages accepted with `+CMGS`, parts joined by their concatenation reference.
    public var delivered: [SimulatedSMS] { delivered(includeSilent: false) }
    /// Also counting parts that got no answer (in doubt: a real network may have sent them).
    public var possiblyDelivered: [SimulatedSMS] { delivered(includeSilent: true) }

    func delivered(includeSilent: Bool) -> [SimulatedSMS] {
        var out: [SimulatedSMS] = []
        var pending: [String: [Int: String]] = [:]
        var done: Set<String> = []
        for p in parts where p.answered || includeSilent {
            let s = p.submit
            guard let c = s.concatenation else {
                out.append(SimulatedSMS(number: s.number, text: s.text, parts: 1))
                continue
            }
            let key = "\(s.number)#\(c.reference)#\(c.parts)"
            var got = pending[key, default: [:]]
            got[c.part] = s.text
            pending[key] = got
            // The header is what the device under test sent: a count of 0 is its bug to report,
            // never a trap in the simulator.
            if c.parts >= 1, got.count == c.parts, !done.contains(key) {
                done.insert(key)
                let text = (1...c.parts).map { got[$0] ?? "" }.joined()
                out.append(SimulatedSMS(number: s.number, text: text, parts: c.parts))
            }
        }
        return out
    }
}
