import UnwindCore

/// The registration domains a modem reports: circuit-switched (+CREG), packet (+CGREG) and
/// LTE/EPS (+CEREG).
public enum RegistrationDomain: String, Sendable, CaseIterable {
    case cs = "CREG"
    case ps = "CGREG"
    case eps = "CEREG"
}

/// Every command the device sends. There is no case carrying free text: the only parameters are
/// numbers and validated `PhoneNumber`s, so no user text can reach an AT command line.
public enum ATCommand: Equatable, Sendable {
    /// `AT`: is anyone there (and, on an autobauding modem, learn the rate).
    case attention
    /// `ATE0`: no echo.
    case echoOff
    /// `AT+CMEE=1`: numeric +CME ERROR codes.
    case numericErrors
    /// `AT+CPIN?`
    case pinStatus
    /// `AT+CREG?`, `AT+CGREG?`, `AT+CEREG?`
    case registration(RegistrationDomain)
    /// `AT+CSQ`
    case signalQuality
    /// `AT+COPS?`
    case operatorName
    /// `AT+CMGF=0`: PDU mode (the only mode the device uses).
    case pduMode
    /// `AT+COPS=0`: automatic operator selection (after someone deregistered the modem or
    /// pinned an operator by hand).
    case automaticOperator
    /// `AT+CSCA?`: the SMS service centre the SIM holds.
    case serviceCentreQuery
    /// `AT+CSCA="<number>",<145|129>`: the SMS service centre.
    case setServiceCentre(PhoneNumber)
    /// `AT+CMGS=<length>`, then after the `> ` prompt the PDU in hex and Ctrl-Z.
    case submit(SMSSubmitPDU)
    /// `ATD<number>;`: a voice call.
    case dial(PhoneNumber)
    /// `ATH`: hang up.
    case hangUp
    /// `AT+CLCC`: the calls and their states (27.007 §7.18), asked while a call is up so that a
    /// contact picking up is told apart from a phone still ringing.
    case listCalls
    /// `AT+CFUN=1,1`: restart the modem.
    case reset
    /// A technician's command (`unwind modem at`): validated text that can neither send, store
    /// nor dial anything, and holds no control character or quote (see `TechnicianCommand`).
    case technician(TechnicianCommand)
    /// `AT+CPIN="<pin>"`: unlock the SIM (digits only, validated by `SIMPin`).
    case enterPIN(SIMPin)
    /// `AT+CSMS?`: the message service; with service 1 (phase 2+) every +CDS and +CMT must be
    /// acknowledged with AT+CNMA.
    case messageService
    /// `AT+CPMS="SM","SM","SM"`: read, delete and receive in the SIM's store, so every index a
    /// +CMTI or +CDSI names is one AT+CMGR and AT+CMGD reach.
    case messageStorage
    /// `AT+CPMS="SR"` or `AT+CPMS="SM"`: which memory AT+CMGR and AT+CMGD reach — the modem's
    /// own status-report memory, or back to the SIM's store.
    case readFrom(ReadMemory)
    /// `AT+CNMI=…`: how new messages and status reports are announced.
    case messageIndications(MessageIndications)
    /// `AT+CMGL=4`: every stored message (PDU mode).
    case listMessages
    /// `AT+CMGR=<index>`
    case readMessage(StoreIndex)
    /// `AT+CMGD=<index>`
    case deleteMessage(StoreIndex)
    /// `AT+CNMA`: a +CDS or +CMT taken (phase 2+ only).
    case acknowledgeMessage

    /// The command line, without the final CR.
    public var line: String {
        switch self {
        case .attention: "AT"
        case .echoOff: "ATE0"
        case .numericErrors: "AT+CMEE=1"
        case .pinStatus: "AT+CPIN?"
        case .registration(let d): "AT+\(d.rawValue)?"
        case .signalQuality: "AT+CSQ"
        case .operatorName: "AT+COPS?"
        case .pduMode: "AT+CMGF=0"
        case .automaticOperator: "AT+COPS=0"
        case .serviceCentreQuery: "AT+CSCA?"
        case .setServiceCentre(let n): "AT+CSCA=\"\(n.text)\",\(n.isInternational ? 145 : 129)"
        case .submit(let pdu): "AT+CMGS=\(pdu.tpduLength)"
        case .dial(let n): "ATD\(n.text);"
        case .hangUp: "ATH"
        case .listCalls: "AT+CLCC"
        case .reset: "AT+CFUN=1,1"
        case .technician(let c): c.text
        case .enterPIN(let pin): "AT+CPIN=\"\(pin.digits)\""
        case .messageService: "AT+CSMS?"
        case .messageStorage: "AT+CPMS=\"SM\",\"SM\",\"SM\""
        case .readFrom(let m): "AT+CPMS=\"\(m.rawValue)\""
        case .messageIndications(let m): "AT+CNMI=\(m.parameters)"
        case .listMessages: "AT+CMGL=4"
        case .readMessage(let i): "AT+CMGR=\(i.value)"
        case .deleteMessage(let i): "AT+CMGD=\(i.value)"
        case .acknowledgeMessage: "AT+CNMA"
        }
    }

    /// The prefix of the information lines that answer this command (they are never taken for
    /// unsolicited codes while it is in flight).
    var responsePrefix: String? {
        switch self {
        case .pinStatus: "+CPIN:"
        case .registration(let d): "+\(d.rawValue):"
        case .signalQuality: "+CSQ:"
        case .operatorName: "+COPS:"
        case .submit: "+CMGS:"
        case .setServiceCentre, .serviceCentreQuery: "+CSCA:"
        case .messageService: "+CSMS:"
        case .messageStorage, .readFrom: "+CPMS:"
        case .listMessages: "+CMGL:"
        case .readMessage: "+CMGR:"
        case .listCalls: "+CLCC:"
        case .technician(let c): c.responsePrefix
        default: nil
        }
    }

    /// The line as logs may show it: a PIN never reaches the journal.
    public var logged: String {
        if case .enterPIN = self { return "AT+CPIN=\"****\"" }
        return line
    }

    public var isSubmit: Bool {
        if case .submit = self { return true }
        return false
    }
}

/// A +CME ERROR / +CMS ERROR code: numeric with AT+CMEE=1, text otherwise.
public struct ATErrorCode: Equatable, Sendable, CustomStringConvertible {
    public var number: Int?
    public var text: String

    public init(_ field: String) {
        let t = field.trimmingSpaces
        self.text = t
        self.number = Int(t)
    }

    public var description: String { text }
}

/// How a command ended.
public enum ATOutcome: Equatable, Sendable {
    case ok
    /// A plain `ERROR`.
    case error
    case cmeError(ATErrorCode)
    case cmsError(ATErrorCode)
    /// `+CMGS: <mr>` arrived: the message is with the network. Nothing else means sent.
    case submitted(messageReference: Int)
    /// A dial ended: NO CARRIER, BUSY, NO ANSWER, NO DIALTONE.
    case callEnded(String)
    /// No `> ` prompt in time. ESC was written and the engine drained the line; nothing of the
    /// PDU was written.
    case promptTimedOut
    /// No final result in time. For a submit whose PDU was written (`afterPrompt`), the message
    /// may or may not have gone: in doubt.
    case timedOut(afterPrompt: Bool)
    /// Given up on by the caller (modem restarted, line lost).
    case abandoned

    public var isOK: Bool { self == .ok }
}

/// A finished command: its outcome and the information lines that came with it.
public struct ATResponse: Equatable, Sendable {
    public var outcome: ATOutcome
    public var lines: [String]

    public init(_ outcome: ATOutcome, lines: [String] = []) {
        self.outcome = outcome
        self.lines = lines
    }

    /// The first information line starting with `prefix`, with the prefix and spaces removed.
    public func value(_ prefix: String) -> String? {
        for l in lines where l.hasPrefix(prefix) { return String(l.dropFirst(prefix.count)).trimmingSpaces }
        return nil
    }
}

/// A line the modem sends on its own, recognised at any moment — also between the `> ` prompt
/// and `+CMGS`.
/// A message memory AT+CPMS can name for reading: the SIM's store, or the status-report memory
/// some modems keep stored reports in (`+CDSI: "SR",<n>`).
public enum ReadMemory: String, Equatable, Sendable {
    case sim = "SM"
    case reports = "SR"
}

public enum UnsolicitedCode: Equatable, Sendable {
    case ring
    /// +CMTI: a message arrived.
    case newMessage(String)
    /// +CREG / +CGREG / +CEREG in their unsolicited form.
    case registration(RegistrationDomain, RegistrationState)
    /// +CDSI: a status report stored at an index.
    case statusReport(String)
    /// +CDS: <length> and the report's PDU on the next line.
    case statusReportPDU(header: String, pdu: String)
    /// +CMT: [<alpha>],<length> and the message's PDU on the next line (a modem routing
    /// messages directly despite AT+CNMI).
    case messagePDU(header: String, pdu: String)
    /// The modem's message store is full (+QIND: "smsfull", ^SMMEMFULL, +CIEV with SMSFULL).
    case storeFull(String)
    /// ^RSSI and friends.
    case signal(String)
    /// The modem (re)started: RDY, Call Ready, SMS Ready, SMS DONE, PB DONE, START, +QIND: … DONE.
    case boot(String)
    /// UNDER-VOLTAGE …, OVER-VOLTAGE …, … POWER DOWN.
    case power(String)
    /// NO CARRIER / BUSY / NO ANSWER outside a dial: a call ended.
    case callEnded(String)
    /// +CPIN: … outside AT+CPIN? (SIM800 announces READY at boot).
    case simStatus(String)
    /// Anything else a modem announces (+CUSD, +CLIP, ^BOOT, +QIND …): logged only.
    case other(String)

    /// The code `line` is, if it is one.
    public static func classify(_ line: String) -> UnsolicitedCode? {
        switch line {
        case "RING": return .ring
        case "RDY", "Call Ready", "SMS Ready", "SMS DONE", "PB DONE", "START", "+QIND: SMS DONE", "+QIND: PB DONE",
             "+QIND: \"SMS DONE\"", "+QIND: \"PB DONE\"":
            return .boot(line)
        case "NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE": return .callEnded(line)
        default: break
        }
        if line.contains("POWER DOWN") || line.hasPrefix("UNDER-VOLTAGE") || line.hasPrefix("OVER-VOLTAGE") {
            return .power(line)
        }
        if line.hasPrefix("+CMTI:") { return .newMessage(line) }
        if line.hasPrefix("+CMT:") { return .other(line) }  // its PDU follows: see ATEngine
        if line.hasPrefix("+CDSI:") || line.hasPrefix("+CDS:") { return .statusReport(line) }
        let upper = line.uppercased()
        if upper.hasPrefix("^SMMEMFULL") || (upper.hasPrefix("+QIND:") && upper.contains("SMSFULL"))
            || (upper.hasPrefix("+CIEV:") && upper.contains("SMSFULL")) {
            return .storeFull(line)
        }
        if line.hasPrefix("^RSSI:") || line.hasPrefix("^HCSQ:") || line.hasPrefix("+CIEV:") { return .signal(line) }
        if line.hasPrefix("+CPIN:") { return .simStatus(line) }
        for d in RegistrationDomain.allCases where line.hasPrefix("+\(d.rawValue):") {
            if let s = RegistrationState.parseUnsolicited(String(line.dropFirst(d.rawValue.count + 2))) {
                return .registration(d, s)
            }
            return .other(line)
        }
        if line.hasPrefix("^") || line.hasPrefix("+CUSD:") || line.hasPrefix("+CLIP:") || line.hasPrefix("+CRING:")
            || line.hasPrefix("+QIND:") || line.hasPrefix("+CFUN:") || line.hasPrefix("+CGEV:") || line.hasPrefix("+CTZV:")
            || line.hasPrefix("*PSUTTZ") || line.hasPrefix("DST:") || line.hasPrefix("+CBM:") {
            return .other(line)
        }
        return nil
    }
}

/// `<stat>` of +CREG / +CGREG / +CEREG (3GPP TS 27.007 §7.2, §10.1.19, §10.1.22).
public enum RegistrationState: Equatable, Sendable, CustomStringConvertible {
    case notRegistered
    case home
    case searching
    case denied
    case unknown
    case roaming
    /// LTE "SMS only" registration (6 home, 7 roaming): text messages work.
    case smsOnly(roaming: Bool)
    case emergencyOnly
    /// Registered for "CSFB not preferred" (9 home, 10 roaming).
    case csfbNotPreferred(roaming: Bool)
    case other(Int)

    public init(stat: Int) {
        switch stat {
        case 0: self = .notRegistered
        case 1: self = .home
        case 2: self = .searching
        case 3: self = .denied
        case 4: self = .unknown
        case 5: self = .roaming
        case 6: self = .smsOnly(roaming: false)
        case 7: self = .smsOnly(roaming: true)
        case 8: self = .emergencyOnly
        case 9: self = .csfbNotPreferred(roaming: false)
        case 10: self = .csfbNotPreferred(roaming: true)
        default: self = .other(stat)
        }
    }

    /// Whether a text message can go out.
    public var isRegistered: Bool {
        switch self {
        case .home, .roaming, .smsOnly, .csfbNotPreferred: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .notRegistered: "not registered"
        case .home: "registered (home)"
        case .searching: "searching"
        case .denied: "registration denied"
        case .unknown: "unknown"
        case .roaming: "registered (roaming)"
        case .smsOnly(let r): "registered for SMS only" + (r ? " (roaming)" : " (home)")
        case .emergencyOnly: "emergency calls only"
        case .csfbNotPreferred(let r): "registered" + (r ? " (roaming)" : " (home)")
        case .other(let n): "state \(n)"
        }
    }

    /// The answer to AT+CxREG?: `<n>,<stat>[,<lac>,<ci>[,<AcT>…]]`. Real modems also give a bare
    /// `<stat>`, unquoted or extra fields; nil when no state can be read.
    public static func parseQuery(_ fields: String) -> RegistrationState? {
        let f = splitFields(fields)
        guard let first = f.first, let a = Int(first) else { return nil }
        if f.count == 1 { return RegistrationState(stat: a) }
        // <n>,<stat>,…: the second field is the state. A second field that is a quoted or
        // 4-hex-digit area code means the modem gave the unsolicited form instead.
        if let b = Int(f[1]), f[1].count <= 2, !f[1].hasPrefix("\"") { return RegistrationState(stat: b) }
        return RegistrationState(stat: a)
    }

    /// The unsolicited form: `<stat>[,<lac>,<ci>[,<AcT>]]`. nil when the fields look like the
    /// query's `<n>,<stat>` (ambiguous: not used).
    static func parseUnsolicited(_ fields: String) -> RegistrationState? {
        let f = splitFields(fields)
        guard let first = f.first, let a = Int(first) else { return nil }
        if f.count == 1 { return RegistrationState(stat: a) }
        if f[1].hasPrefix("\"") || f[1].count >= 4 { return RegistrationState(stat: a) }
        return nil
    }
}

/// Splits a response's comma-separated fields, keeping quoted fields whole (quotes kept).
func splitFields(_ s: String) -> [String] {
    var out: [String] = []
    var current = ""
    var quoted = false
    for c in s {
        if c == "\"" { quoted.toggle() }
        if c == "," && !quoted {
            out.append(current.trimmingSpaces)
            current = ""
        } else {
            current.append(c)
        }
    }
    out.append(current.trimmingSpaces)
    return out
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }

    var unquoted: String {
        if count >= 2, hasPrefix("\""), hasSuffix("\"") { return String(dropFirst().dropLast()) }
        return self
    }
}

/// A command line a technician types (`unwind modem at AT+CSQ`), validated so that nothing can
/// be sent, stored for sending or dialled by mistake, and nothing can break the AT conversation
/// the daemon is having with the modem.
///
/// Rules: 2 to 64 characters, starting with `AT` (any case); printable ASCII only — no control
/// character, no space, no quote (`"` or `'`), no `;` (one command per line, so nothing can be
/// chained after a harmless one). Of the basic commands only `AT`, `ATI[n]` and `AT&V[n]` (they
/// only report): `ATD` (dial), `ATA` (answer), `ATV0`/`ATQ1` (result codes the daemon would no
/// longer recognise), `ATZ`/`AT&F` (settings reset) and the rest are refused, as is `A/` (repeat
/// the last command: it could be a send). Extended commands (`AT+…`, `AT^…`) are allowed except
/// those that send or store a message (`+CMGS`, `+CMGW`, `+CMSS`, `+CMGC`), switch the radio or
/// the modem off (`+CFUN=`, `…POWD`), or change what the daemon's conversation relies on: the
/// line's rate, framing and flow control (`+IPR=`, `+ICF=`, `+IFC=`) and the error format
/// (`+CMEE=`).
public struct TechnicianCommand: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    public static let maximumLength = 64

    /// Execution commands that only report (27.007 / 27.005 and common vendors'): identity,
    /// signal, activity, the last error.
    static let executionQueries: Set<String> = [
        "+CSQ", "+CGSN", "+GSN", "+CGMI", "+GMI", "+CGMM", "+GMM", "+CGMR", "+GMR", "+CIMI", "+CCID", "+ICCID",
        "+QCCID", "+CNUM", "+CLCC", "+CPAS", "+CEER", "+CBC", "+QNWINFO", "+QCSQ", "+CPSI", "^SYSINFO", "+CSUB",
    ]

    public init(_ text: String) throws(Refusal) {
        func refuse(_ why: String) -> Refusal { Refusal(reason: "\(String(reflecting: text)): \(why)") }
        let scalars = Array(text.unicodeScalars)
        if scalars.isEmpty { throw Refusal(reason: "the command is empty; write it as on a terminal, e.g. AT+CSQ") }
        for (i, s) in scalars.enumerated() {
            if s.value < 0x20 || s.value == 0x7F || (0x80..<0xA0).contains(s.value) {
                throw refuse("character \(i + 1) is a control character (U+\(String(s.value, radix: 16, uppercase: true))); commands are one line of plain text")
            }
            if s == "\"" || s == "'" { throw refuse("quotes are not allowed (nothing with a quoted argument is needed for a check)") }
            if s == " " { throw refuse("spaces are not allowed; write the command without them, e.g. AT+CSQ") }
            if s == ";" { throw refuse("\";\" is not allowed: one command at a time") }
            if !s.isASCII { throw refuse("character \(i + 1) is not plain ASCII") }
        }
        if scalars.count > Self.maximumLength { throw refuse("\(scalars.count) characters; at most \(Self.maximumLength)") }
        let upper = text.uppercased()
        guard upper.hasPrefix("AT") else {
            throw refuse(upper.hasPrefix("A/") ? "A/ repeats the last command, which may have been a send; refused"
                         : "a modem command starts with AT, e.g. AT+CSQ")
        }
        for c in ["CMGS", "CMGW", "CMSS", "CMGC"] where upper.contains(c) {
            throw refuse("+\(c) sends or stores a text message; refused so that nothing is sent by mistake (use 'unwind alerts test N')")
        }
        if upper.hasPrefix("ATD") { throw refuse("ATD dials a call; refused so that nobody is called by mistake") }
        if upper == "ATA" { throw refuse("ATA answers a call; refused") }
        let body = upper.dropFirst(2)
        if let first = body.first, !"+^$%".contains(first) {
            let reporting = body == "I" || body == "&V"
                || (body.count == 2 && (body.first == "I") && (body.last?.isNumber ?? false))
                || (body.count == 3 && body.hasPrefix("&V") && (body.last?.isNumber ?? false))
            if !reporting {
                throw refuse("of the basic commands only AT, ATI and AT&V are allowed (the others change how the modem answers the daemon, or place calls)")
            }
        }
        // An allowlist: what is not known to only read is refused, because a command that
        // changes the modem (AT+COPS=2 deregisters it, AT+CPIN= spends PIN attempts, AT+CSCLK
        // puts it to sleep, AT+CMGF=1 leaves PDU mode …) can stop the panic path.
        if body.first.map({ "+^$%".contains($0) }) ?? false {
            let name = String(body.prefix { $0 != "=" && $0 != "?" })
            let rest = body.dropFirst(name.count)
            if name == "+COPS" && rest == "=?" {
                throw refuse("AT+COPS=? scans for networks, which keeps the modem busy for minutes while no alert can go out; refused (AT+COPS? reads the operator)")
            }
            let readsSetting = rest == "?"           // 27.007 4.2: the read form
            let listsValues = rest == "=?"           // the test form: supported values
            let query = rest.isEmpty && Self.executionQueries.contains(name)
            if !(readsSetting || listsValues || query) {
                throw refuse("only read-only queries are allowed — AT+X? reads a setting, AT+X=? lists its values, and \(Self.executionQueries.sorted().map { "AT" + $0 }.joined(separator: ", ")); anything that changes the modem could stop alerts from going out")
            }
        }
        self.text = text
    }

    /// `+CSQ:` for `AT+CSQ`, `+CREG:` for `AT+CREG?` …: the information lines that answer it (so
    /// they are not taken for unsolicited codes); nil for basic commands (`ATI`).
    var responsePrefix: String? {
        let body = text.dropFirst(2)
        guard let first = body.first, "+^$%".contains(first) else { return nil }
        let name = body.prefix { $0 != "=" && $0 != "?" }
        return name.count > 1 ? name.uppercased() + ":" : nil
    }

    public var description: String { text }
}
