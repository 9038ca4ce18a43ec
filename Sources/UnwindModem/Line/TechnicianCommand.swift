import UnwindCore

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
