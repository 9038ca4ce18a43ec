import UnwindCore

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
