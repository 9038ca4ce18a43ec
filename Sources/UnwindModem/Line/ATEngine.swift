import UnwindCore

/// A command to run, with how long to wait for it.
public struct ATRequest: Equatable, Sendable {
    public var command: ATCommand
    /// For the final result; for a submit, counted from the moment the PDU is written.
    public var timeout: Duration
    /// For a submit: how long to wait for the `> ` prompt.
    public var promptTimeout: Duration
    /// For a submit: the message reference the modem gave the previous submit. A `+CMGS` with
    /// it (and the OK after it) is that submit's answer repeated, not this one's: the modem
    /// numbers every submit anew (3GPP TS 23.040 9.2.3.6, TP-MR), so crediting it would count a
    /// part as sent that may have been refused.
    public var staleReference: Int?

    public init(_ command: ATCommand, timeout: Duration, promptTimeout: Duration = .seconds(5), staleReference: Int? = nil) {
        self.command = command
        self.timeout = timeout
        self.promptTimeout = promptTimeout
        self.staleReference = staleReference
    }
}

/// What the engine tells its driver.
public enum ATEvent: Equatable, Sendable {
    /// A command ended (by a final result, a timeout, or being abandoned).
    case completed(ATCommand, ATResponse)
    /// A line the modem sent on its own.
    case unsolicited(UnsolicitedCode)
    /// The `> ` prompt of the submit in flight arrived and its PDU and Ctrl-Z were written.
    case promptAnswered(ATCommand)
    /// A `> ` prompt nobody was waiting for (late, or opened by a command typed into an old
    /// prompt): ESC was written to close it, nothing else.
    case strayPrompt
    /// The quiet period after an ESC is over; commands may be started again.
    case drained
    /// A line that is neither an answer, an echo nor a known unsolicited code (logged).
    case unrecognized(String)
    /// `+CMGS: <mr>` that answers no submit waiting for one: an earlier submit's late answer
    /// (the modem was slow, or answered after the device gave up waiting). Not a repeat of the
    /// last one's reference.
    case lateConfirmation(Int)
}

/// The AT protocol as a state machine over bytes and time, with no I/O of its own: fed the
/// bytes that arrived and the current instant, it says what to write and what happened. The
/// same engine runs under the device loop (through `GSMModem`) and in tests without a tty.
///
/// Rules:
/// - One command in flight. Final results: OK, ERROR, +CME ERROR, +CMS ERROR (and NO CARRIER,
///   BUSY, NO ANSWER, NO DIALTONE for a dial).
/// - Lines end at CR or LF; empty lines are skipped. The echo of the command line (and of the
///   PDU) is recognised and dropped, so echo on and echo off both work.
/// - Unsolicited codes are recognised at any moment, also between `> ` and `+CMGS`.
/// - A submit writes `AT+CMGS=<n>` and nothing more until `> ` is seen. Only then are the PDU's
///   hex digits and Ctrl-Z written — exactly once. If no prompt comes in time, ESC is written
///   (closing a prompt that may arrive late) and the line is drained; nothing else is written.
/// - A prompt seen at any other time is closed with ESC, never typed into.
/// - `+CMGS: <mr>` is the only thing that makes a submit `.submitted`, and only after its PDU
///   was written: a `+CMGS` or an OK before the prompt, or a `+CMGS` repeating the previous
///   submit's reference (and its OK), answers some other PDU and is dropped. A submit whose PDU
///   was written and that got no `+CMGS` of its own in time ends `.timedOut(afterPrompt: true)`
///   (or `.ok` when a bare OK ended it): in doubt, never sent.
public struct ATEngine: Sendable {
    public struct Settings: Equatable, Sendable {
        /// How long after an ESC everything but unsolicited codes is discarded.
        public var drain: Duration
        /// After `+CMGS: <mr>`, how long to wait for the OK that ends the command.
        public var resultGrace: Duration
        /// Longer lines are dropped (noise, a wrong baud rate).
        public var maximumLine: Int

        public init(drain: Duration = .milliseconds(300), resultGrace: Duration = .seconds(1), maximumLine: Int = 1024) {
            self.drain = drain
            self.resultGrace = resultGrace
            self.maximumLine = maximumLine
        }
    }

    enum Phase: Equatable, Sendable {
        case idle
        case command(ATRequest, deadline: Instant)
        /// `AT+CMGS=<n>` written; waiting for `> `.
        case prompt(ATRequest, deadline: Instant)
        /// The PDU written; waiting for `+CMGS` and the final result.
        case result(ATRequest, deadline: Instant, reference: Int?)
    }

    public var settings: Settings
    private(set) var phase: Phase = .idle
    /// While set, nothing may be started and answers are discarded.
    public private(set) var drainingUntil: Instant?
    private var line: [UInt8] = []
    private var overlong = false
    private var info: [String] = []
    private var output: [UInt8] = []
    private var echo: String = ""
    private var pduEcho: String = ""
    /// A repeated `+CMGS` was dropped: the OK that follows it belongs to it too.
    private var droppingStaleResult = false
    /// The submit waiting for its prompt is no longer wanted: the prompt is closed with ESC.
    private var withdrawn = false
    /// `+CDS: <length>` or `+CMT: …` seen: the next line is its PDU, whatever is in flight.
    private var unsolicitedPDUHeader: String?
    /// The lines kept for the command in flight: a modem that floods the line must not grow
    /// memory without end (no real answer has more than a few dozen lines).
    public static let maximumLinesKept = 64

    public init(settings: Settings = Settings()) {
        self.settings = settings
        line.reserveCapacity(256)
    }

    /// Nothing in flight and not draining: a command may be started.
    public var isIdle: Bool { phase == .idle && drainingUntil == nil }

    /// The command in flight.
    public var inFlight: ATCommand? {
        switch phase {
        case .idle: nil
        case .command(let r, _), .prompt(let r, _), .result(let r, _, _): r.command
        }
    }

    /// Whether the PDU of the submit in flight has been written.
    public var isAfterPrompt: Bool {
        if case .result = phase { return true }
        return false
    }

    /// The next instant at which `advance` has something to do.
    public var nextDeadline: Instant? {
        var d: Instant?
        switch phase {
        case .idle: break
        case .command(_, let t), .prompt(_, let t), .result(_, let t, _): d = t
        }
        if let u = drainingUntil, d == nil || u < d! { d = u }
        return d
    }

    /// Starts a command. Precondition: `isIdle`.
    public mutating func start(_ request: ATRequest, at now: Instant) {
        precondition(isIdle, "one AT command at a time")
        info.removeAll()
        echo = request.command.line
        output.append(contentsOf: echo.utf8)
        output.append(0x0D)
        if case .submit(let pdu) = request.command {
            pduEcho = pdu.hexString
            phase = .prompt(request, deadline: now + request.promptTimeout)
        } else {
            pduEcho = ""
            phase = .command(request, deadline: now + request.timeout)
        }
    }

    /// Writes ESC (and CR when asked: the start-up's "clear a stuck prompt"), ends any command in
    /// flight as `.abandoned`, and drains the line for `settings.drain`.
    public mutating func escape(at now: Instant, carriageReturn: Bool = false, into events: inout [ATEvent]) {
        output.append(0x1B)
        if carriageReturn { output.append(0x0D) }
        abandon(into: &events)
        drain(from: now)
    }

    /// The submit in flight is no longer wanted (an alert needs the line). Waiting for its
    /// prompt: nothing of it has been written, and nothing will be — the prompt, when it comes,
    /// is closed with ESC (a modem that queues what it is sent until its prompt would take
    /// anything else as the message), and the command ends `.abandoned`; so does a prompt that
    /// never comes. Its PDU written: it ends `.abandoned` now, its `+CMGS` (if any) comes as a
    /// late confirmation. Returns whether the PDU had been written.
    @discardableResult
    public mutating func withdraw(into events: inout [ATEvent]) -> Bool {
        switch phase {
        case .prompt:
            withdrawn = true
            return false
        case .result(let r, _, _):
            finish(r.command, .abandoned, into: &events)
            return true
        default:
            return false
        }
    }

    /// Ends any command in flight as `.abandoned` without writing anything (the modem restarted).
    public mutating func abandon(into events: inout [ATEvent]) {
        if let c = inFlight { finish(c, .abandoned, into: &events) }
    }

    /// Forgets everything: the line was closed and will be reopened.
    public mutating func reset(into events: inout [ATEvent]) {
        abandon(into: &events)
        drainingUntil = nil
        line.removeAll(keepingCapacity: true)
        overlong = false
        unsolicitedPDUHeader = nil
        output.removeAll()
    }

    /// Moves the bytes to write into `buffer`.
    public mutating func takeOutput(into buffer: inout [UInt8]) {
        if output.isEmpty { return }
        buffer.append(contentsOf: output)
        output.removeAll(keepingCapacity: true)
    }

    /// Feeds bytes that arrived at `now`.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Instant, into events: inout [ATEvent]) {
        for b in bytes {
            if b == 0x0D || b == 0x0A {
                endLine(at: now, into: &events)
                continue
            }
            if overlong { continue }
            if line.count >= settings.maximumLine {
                overlong = true
                line.removeAll(keepingCapacity: true)
                continue
            }
            line.append(b)
            guard b == 0x20, line.count >= 2, line[line.count - 2] == 0x3E else { continue }  // "> "
            // The prompt on a line of its own; or, while a submit waits for its prompt, at the end
            // of line noise (a modem's stray bytes, a glitch on the wire): no line a modem sends
            // ends in "> ", so what came before it is the noise, dropped.
            var awaitingPrompt = false
            if case .prompt = phase, drainingUntil == nil { awaitingPrompt = true }
            if line.count == 2 || awaitingPrompt {
                line.removeAll(keepingCapacity: true)
                prompt(at: now, into: &events)
            }
        }
    }

    /// Runs the timers: drain end, prompt and result timeouts.
    public mutating func advance(to now: Instant, into events: inout [ATEvent]) {
        if let u = drainingUntil, now >= u {
            drainingUntil = nil
            events.append(.drained)
        }
        switch phase {
        case .idle:
            break
        case .command(let r, let t) where now >= t:
            finish(r.command, .timedOut(afterPrompt: false), into: &events)
        case .prompt(let r, let t) where now >= t:
            // Close a prompt that may still come; never type into it.
            output.append(0x1B)
            finish(r.command, withdrawn ? .abandoned : .promptTimedOut, into: &events)
            drain(from: now)
        case .result(let r, let t, let reference) where now >= t:
            if let reference {
                finish(r.command, .submitted(messageReference: reference), into: &events)
            } else {
                finish(r.command, .timedOut(afterPrompt: true), into: &events)
            }
        default:
            break
        }
    }

    // MARK: - Lines

    private mutating func drain(from now: Instant) {
        let until = now + settings.drain
        if drainingUntil == nil || drainingUntil! < until { drainingUntil = until }
    }

    private mutating func prompt(at now: Instant, into events: inout [ATEvent]) {
        if case .prompt(let r, _) = phase, drainingUntil == nil, withdrawn {
            // No longer wanted: closed, nothing typed into it.
            output.append(0x1B)
            finish(r.command, .abandoned, into: &events)
            drain(from: now)
            return
        }
        if case .prompt(let r, _) = phase, drainingUntil == nil, case .submit(let pdu) = r.command {
            output.append(contentsOf: pdu.hex)
            output.append(0x1A)
            phase = .result(r, deadline: now + r.timeout, reference: nil)
            events.append(.promptAnswered(r.command))
            return
        }
        output.append(0x1B)
        abandon(into: &events)
        drain(from: now)
        events.append(.strayPrompt)
    }

    private mutating func endLine(at now: Instant, into events: inout [ATEvent]) {
        if overlong {
            overlong = false
            return
        }
        if line.isEmpty { return }
        // Control bytes inside a line are noise or echoed Ctrl-Z / ESC: dropped.
        var text = String(decoding: line.filter { $0 >= 0x20 && $0 != 0x7F }, as: UTF8.self).trimmingSpaces
        // A result code glued to line noise in front of it ("\u{FF}\u{00}OK"): the noise is
        // dropped when what follows the last byte no modem sends in an answer is a result code
        // (never for any other line: an operator's name may hold such bytes).
        if let last = line.lastIndex(where: { !(0x20...0x7E).contains($0) }) {
            let tail = String(decoding: line[(last + 1)...], as: UTF8.self).trimmingSpaces
            if Self.isResultCode(tail) { text = tail }
        }
        line.removeAll(keepingCapacity: true)
        if !text.isEmpty { handle(text, at: now, into: &events) }
    }

    private mutating func handle(_ text: String, at now: Instant, into events: inout [ATEvent]) {
        if let header = unsolicitedPDUHeader {
            // The PDU of a +CDS / +CMT comes on the next line, also in the middle of another
            // command's answer: it must not be taken for that answer. A line that is no PDU
            // leaves the header alone (logged) and is read as what it is.
            unsolicitedPDUHeader = nil
            if Self.isPDULine(text) {
                events.append(.unsolicited(header.hasPrefix("+CDS")
                    ? .statusReportPDU(header: header, pdu: text) : .messagePDU(header: header, pdu: text)))
                return
            }
            events.append(.unsolicited(.other(header)))
        }
        let current = drainingUntil == nil ? inFlight : nil
        // A confirmation nobody waits for is an earlier submit's late answer: the sender counts it.
        if let mr = Self.confirmationReference(text) {
            var waiting = false
            if let current, current.isSubmit, case .result(_, _, nil) = phase { waiting = true }
            if !waiting {
                var repeated = false
                if let current, current.isSubmit, case .result(let r, _, let reference) = phase {
                    repeated = mr == reference || mr == r.staleReference
                }
                if !repeated { events.append(.lateConfirmation(mr)) }
                if current != nil { keep("(not this command's) " + text) }
                return
            }
        }
        if let current {
            if text == echo || text.uppercased() == echo.uppercased() || (!pduEcho.isEmpty && text.uppercased() == pduEcho) {
                return
            }
            if current.isSubmit, case .prompt = phase, text == "OK" || text.hasPrefix("+CMGS:") {
                // Nothing of this submit has reached the modem yet.
                keep("(dropped, before the prompt) " + text)
                return
            }
            if let prefix = current.responsePrefix, text.hasPrefix(prefix) {
                if case .result(let r, let t, nil) = phase, current.isSubmit {
                    let mr = Int(text.dropFirst(prefix.count).split(separator: ",").first.map { String($0).trimmingSpaces } ?? "")
                    guard let mr, (0...255).contains(mr) else {
                        // Noise that starts like a confirmation is not one (TP-MR is 0–255).
                        keep("(dropped, no reference) " + text)
                        return
                    }
                    if mr == r.staleReference {
                        droppingStaleResult = true
                        keep("(dropped, the previous submit's reference) " + text)
                        return
                    }
                    phase = .result(r, deadline: min(t, now + settings.resultGrace), reference: mr)
                } else if info.count < 2 * Self.maximumLinesKept {
                    info.append(text)  // the answer itself gets room beyond the noise's share
                }
                return
            }
            if droppingStaleResult, text == "OK", case .result(_, _, nil) = phase {
                droppingStaleResult = false
                keep("(dropped, the OK of a repeated +CMGS) OK")
                return
            }
            if let outcome = finalResult(text, for: current) {
                var o = outcome
                if case .result(_, _, let reference?) = phase {
                    // A confirmation followed by an error contradicts itself: in doubt, not sent.
                    o = outcome == .ok ? .submitted(messageReference: reference) : .timedOut(afterPrompt: true)
                }
                finish(current, o, into: &events)
                return
            }
        }
        if let u = UnsolicitedCode.classify(text) {
            if text.hasPrefix("+CDS:") || text.hasPrefix("+CMT:") {
                unsolicitedPDUHeader = text
                return
            }
            events.append(.unsolicited(u))
            return
        }
        if current != nil {
            keep(text)
        } else {
            events.append(.unrecognized(text))
        }
    }

    /// A final result or a submit's confirmation, as a whole line.
    static func isResultCode(_ text: String) -> Bool {
        ["OK", "ERROR", "NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE"].contains(text)
            || text.hasPrefix("+CMS ERROR:") || text.hasPrefix("+CME ERROR:") || confirmationReference(text) != nil
    }

    /// The reference of a well-formed `+CMGS: <mr>` line (TP-MR, 0–255).
    static func confirmationReference(_ text: String) -> Int? {
        guard text.hasPrefix("+CMGS:") else { return nil }
        let mr = Int(text.dropFirst(6).split(separator: ",").first.map { String($0).trimmingSpaces } ?? "")
        guard let mr, (0...255).contains(mr) else { return nil }
        return mr
    }

    /// Hex digits only, no longer than the longest PDU.
    static func isPDULine(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 2 * IncomingPDU.maximumOctets
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    private mutating func keep(_ line: String) {
        if info.count < Self.maximumLinesKept { info.append(line) }
    }

    private func finalResult(_ text: String, for command: ATCommand) -> ATOutcome? {
        if text == "OK" { return .ok }
        if text == "ERROR" { return .error }
        if text.hasPrefix("+CME ERROR:") { return .cmeError(ATErrorCode(String(text.dropFirst(11)))) }
        if text.hasPrefix("+CMS ERROR:") { return .cmsError(ATErrorCode(String(text.dropFirst(11)))) }
        if case .dial = command, ["NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE"].contains(text) {
            return .callEnded(text)
        }
        return nil
    }

    private mutating func finish(_ command: ATCommand, _ outcome: ATOutcome, into events: inout [ATEvent]) {
        phase = .idle
        droppingStaleResult = false
        withdrawn = false
        echo = ""
        pduEcho = ""
        events.append(.completed(command, ATResponse(outcome, lines: info)))
        info.removeAll()
    }
}
