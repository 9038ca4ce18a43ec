import UnwindCore

/// What a simulated modem does with one AT+CMGS.
public struct SubmitPlan: Equatable, Sendable {
    public enum Prompt: Equatable, Sendable {
        case immediate
        /// The `> ` comes this late. Bytes arriving meanwhile go into the prompt, as a real
        /// modem reads them once it is ready; an ESC meanwhile is lost unless
        /// `ModemScript.escapeCancelsPendingPrompt`.
        case after(Duration)
        /// No prompt at all; an ESC ends the wait.
        case never
    }

    public enum Result: Equatable, Sendable {
        /// `+CMGS: <mr>` and OK.
        case accepted
        /// `+CMGS: <mr>` and no OK.
        case acceptedWithoutOK
        case cmsError(Int)
        /// Nothing at all (the message may or may not have gone: in doubt).
        case silence
        /// The modem restarts (boot messages) instead of answering.
        case restart
    }

    public var prompt: Prompt
    public var result: Result
    /// Between the PDU's Ctrl-Z and the result.
    public var resultDelay: Duration
    /// Lines sent right after `> `, before the PDU can arrive (URCs between the prompt and +CMGS).
    public var afterPrompt: [String]
    /// Lines sent after the PDU, before the result.
    public var beforeResult: [String]
    /// The result lines sent again this long after the result: a modem that repeats its result
    /// code, so the repeat reaches the device while its next command is in flight.
    public var repeatResultAfter: Duration?
    /// The result as it goes over the line, when noise corrupts it (e.g. "+CMG$: 7"); the
    /// network's acceptance is unchanged.
    public var corruptedResult: [String]?

    public init(prompt: Prompt = .immediate, result: Result = .accepted, resultDelay: Duration = .zero,
                afterPrompt: [String] = [], beforeResult: [String] = [], repeatResultAfter: Duration? = nil,
                corruptedResult: [String]? = nil) {
        self.prompt = prompt
        self.result = result
        self.resultDelay = resultDelay
        self.afterPrompt = afterPrompt
        self.beforeResult = beforeResult
        self.repeatResultAfter = repeatResultAfter
        self.corruptedResult = corruptedResult
    }
}

/// How a simulated modem behaves. Everything not scripted answers like a healthy SIM800/SIM7600.
public struct ModemScript: Equatable, Sendable {
    /// Echo at power-on (ATE0 turns it off until the next restart).
    public var echo: Bool = true
    /// Paces the modem's output as a line at this rate would (10 bits a byte); nil: as fast as the pty.
    public var outputBaud: Int?
    /// Replies by exact command line, used in order, one per occurrence; an empty reply is
    /// silence. When a command's list runs out it answers normally.
    public var replies: [String: [[String]]] = [:]
    /// AT+CMGS plans by occurrence (1-based); others use `defaultSubmit`.
    public var submits: [Int: SubmitPlan] = [:]
    public var defaultSubmit = SubmitPlan()
    public var escapeCancelsPendingPrompt = false
    /// Answers to the registration queries; nil answers ERROR (not supported).
    public var creg: String? = "+CREG: 0,1"
    public var cgreg: String? = "+CGREG: 0,1"
    public var cereg: String? = "+CEREG: 0,1"
    public var csq = "+CSQ: 21,99"
    public var cops = "+COPS: 0,0,\"Unwind Mobile\",7"
    /// The SIM's service centre as `AT+CSCA?` reports it (until `AT+CSCA=` sets another).
    public var csca = "+CSCA: \"+15550009999\",145"
    /// What a restart prints, after `bootTime`.
    public var bootMessages = ["RDY", "+CFUN: 1", "+CPIN: READY", "Call Ready", "SMS Ready"]
    public var bootTime: Duration = .milliseconds(30)
    /// Answers nothing at all.
    public var silent = false
    /// A SIM that asks for this PIN: AT+CPIN? answers `SIM PIN` until AT+CPIN="<pin>" unlocks it;
    /// a wrong PIN answers +CME ERROR: 16 (and three of them lock the SIM behind its PUK).
    public var simPIN: String?

    public init() {}
}

/// One part the simulated network accepted (or, for `silence`, may have).
public struct SimulatedPart: Equatable, Sendable {
    public var submit: DecodedSubmit
    /// 1-based occurrence of AT+CMGS.
    public var occurrence: Int
    public var answered: Bool
}

/// A complete message (all parts) to one number.
public struct SimulatedSMS: Equatable, Sendable {
    public var number: String
    public var text: String
    public var parts: Int

    public init(number: String, text: String, parts: Int) {
        self.number = number
        self.text = text
        self.parts = parts
    }
}
