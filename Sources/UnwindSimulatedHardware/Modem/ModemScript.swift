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
        /// `+CME ERROR: <n>` (some modems answer a submit with it, e.g. 10: SIM not inserted).
        case cmeError(Int)
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
    /// Line noise glued in front of the prompt (`<noise>> `, no line break) and of each result
    /// line (`\r\n<noise>+CMGS: 7\r\n`): stray bytes on the wire, the network's answer unchanged.
    public var noise: [UInt8]

    public init(prompt: Prompt = .immediate, result: Result = .accepted, resultDelay: Duration = .zero,
                afterPrompt: [String] = [], beforeResult: [String] = [], repeatResultAfter: Duration? = nil,
                corruptedResult: [String]? = nil, noise: [UInt8] = []) {
        self.prompt = prompt
        self.result = result
        self.resultDelay = resultDelay
        self.afterPrompt = afterPrompt
        self.beforeResult = beforeResult
        self.repeatResultAfter = repeatResultAfter
        self.corruptedResult = corruptedResult
        self.noise = noise
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
    /// Results by what the PDU says: a part whose text contains a key gets that result instead
    /// of its plan's (the first key in sorted order that matches). The network's answer to one
    /// contact's message, whatever the order the device sends in.
    public var resultsByText: [String: SubmitPlan.Result] = [:]
    public var escapeCancelsPendingPrompt = false
    /// A modem that goes on answering other commands while a submit waits for the network: a
    /// late result comes when it comes, after answers to commands that came later. (By default
    /// the modem answers in order: nothing it says overtakes a result still to come.)
    public var answersWhileSubmitPending = false
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

    // Receiving: the SIM's store, status reports, calls.

    /// `+CSMS` service: 1 (phase 2+) wants every +CDS acknowledged with AT+CNMA.
    public var messageService = 0
    /// AT+CNMI parameter lists the modem refuses (ERROR), e.g. "2,1,0,1,0" for a modem without +CDS.
    public var refusedIndications: Set<String> = []
    /// Where stored status reports go: "SM" with the replies, or "SR", the modem's own report
    /// memory (+CDSI: "SR",<n>; AT+CPMS="SR" to read them), as a Teltonika TRM240 does.
    public var reportMemory = "SM"
    /// Messages the SIM holds; its first index (SIM800 counts from 1, some modems from 0).
    public var storeCapacity = 30
    public var firstStoreIndex = 1
    /// What the network does with each message's status report(s), by AT+CMGS occurrence; others
    /// use `defaultReports`. Only a submit with TP-SRR gets one.
    public var reports: [Int: ReportPlan] = [:]
    public var defaultReports = ReportPlan.delivered(after: .milliseconds(500))
    /// What happens when a number is dialled, by the number as dialled; others use `defaultDial`.
    public var dials: [String: DialPlan] = [:]
    public var defaultDial = DialPlan.rings
    /// What `AT+CLCC` answers instead of the call's own line (hostile lines for the parser);
    /// nil: the call as it stands. `listsCalls` false: `AT+CLCC` is an ERROR (a modem without it).
    public var callList: [String]?
    public var listsCalls = true
    /// The network's clock for the time stamps in what it sends (seconds since 1970, UTC).
    public var networkTime: Int64 = 1_767_225_600

    public init() {}
}

/// The status reports the network sends for one message: each after its delay from the `+CMGS`.
public struct ReportPlan: Equatable, Sendable {
    public var reports: [(after: Duration, status: UInt8)]

    public init(_ reports: [(after: Duration, status: UInt8)]) { self.reports = reports }

    public static func == (a: ReportPlan, b: ReportPlan) -> Bool {
        a.reports.map(\.after) == b.reports.map(\.after) && a.reports.map(\.status) == b.reports.map(\.status)
    }

    /// TP-ST 0x00 ("received by the phone").
    public static func delivered(after d: Duration) -> ReportPlan { ReportPlan([(d, 0x00)]) }
    /// 0x21 ("the phone is busy, still trying"), then 0x00.
    public static func temporaryThenDelivered(after d: Duration, then e: Duration) -> ReportPlan {
        ReportPlan([(d, 0x21), (d + e, 0x00)])
    }
    /// A permanent error (0x41 incompatible destination by default; 0x46: expired).
    public static func permanent(after d: Duration, status: UInt8 = 0x41) -> ReportPlan { ReportPlan([(d, status)]) }
    /// No report at all.
    public static let never = ReportPlan([])
}

/// What a dialled number does.
public enum DialPlan: Equatable, Sendable {
    /// ATD answers OK; the call rings (or is answered) until ATH.
    case rings
    /// ATD answers OK; after this long the call ends with this line (NO ANSWER, NO CARRIER).
    case endsAfter(Duration, String)
    /// ATD's final result is this (BUSY, NO CARRIER, ERROR, +CME ERROR: 30 …).
    case refused(String)
    /// ATD answers OK; after `after` the contact picks up (`AT+CLCC` lists the call active),
    /// and `hangsUpAfter` later hangs up (NO CARRIER).
    case answers(after: Duration, hangsUpAfter: Duration)
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
