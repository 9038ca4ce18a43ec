import UnwindCore

/// Why a file in `replies/` could not be read.
public enum InboxFileProblem: Error, Equatable, CustomStringConvertible {
    case notUTF8
    case missing(String, line: Int)
    case malformed(String, line: Int)

    public var description: String {
        switch self {
        case .notUTF8: "not UTF-8 text"
        case .missing(let k, let l): "line \(l): \"\(k)\" expected"
        case .malformed(let k, let l): "line \(l): \"\(k)\" is malformed"
        }
    }
}

/// The reply and part files (the format is documented on `Inbox`). A file on the card is
/// outside input: every field is checked, nothing in one can reach the modem.
extension Inbox {
    /// The longest text a reply can hold: 255 parts of 160 characters, with room to spare.
    static let maximumText = 48 * 1024

    static func format(_ r: StoredReply) -> String {
        var s = "unwind-reply 1\n"
        s += "from \(escape(r.from))\n"
        if r.fromName { s += "from-name yes\n" }
        s += "received \(r.received.secondsSinceEpoch)\n"
        s += "sent \(r.sent.map { String($0.secondsSinceEpoch) } ?? "-")\n"
        s += "sequence \(r.sequence)\n"
        s += "seen \(r.seen ? "yes" : "no")\n"
        s += "parts \(r.parts)\n"
        if r.missingParts > 0 { s += "missing \(r.missingParts)\n" }
        if let g = r.group { s += "group \(g)\n" }
        s += "text \(escape(r.text))\n"
        return s
    }

    static func format(_ p: HeldPart) -> String {
        var s = "unwind-reply-part 1\n"
        s += "from \(escape(p.from))\n"
        if p.fromName { s += "from-name yes\n" }
        s += "sent \(p.sent.map { String($0.secondsSinceEpoch) } ?? "-")\n"
        s += "alphabet \(p.alphabet.rawValue)\n"
        s += "reference \(p.reference)\n"
        s += "parts \(p.parts)\n"
        s += "part \(p.part)\n"
        s += "fingerprint \(hex16(p.fingerprint))\n"
        s += "payload \(p.payload.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())\n"
        return s
    }

    /// "\" as "\\", a line break as "\n", any other control character as a space: one line.
    static func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(IncomingPDU.isControl(u) ? " " : u)
            }
        }
        return out
    }

    static func unescape(_ s: Substring) -> String {
        var out = String.UnicodeScalarView()
        var escaped = false
        for u in s.unicodeScalars {
            if escaped {
                out.append(u == "n" ? "\n" : u)
                escaped = false
            } else if u == "\\" {
                escaped = true
            } else {
                out.append(IncomingPDU.isControl(u) ? " " : u)
            }
        }
        return String(out)
    }

    /// Fields in order, each checked.
    struct Lines {
        var lines: [Substring]
        var i = 1

        init(_ bytes: [UInt8], header: String) throws(InboxFileProblem) {
            guard bytes.count <= Inbox.maximumReplyFile, let text = String(validating: bytes, as: UTF8.self) else {
                throw .notUTF8
            }
            lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.last == "" { lines.removeLast() }
            guard lines.first == Substring(header) else { throw .missing(header, line: 1) }
        }

        var next: Substring? { i < lines.count ? lines[i] : nil }

        mutating func field(_ key: String) throws(InboxFileProblem) -> Substring {
            guard i < lines.count, lines[i].hasPrefix(key + " ") else { throw .missing(key, line: i + 1) }
            defer { i += 1 }
            return lines[i].dropFirst(key.count + 1)
        }

        mutating func optional(_ key: String) throws(InboxFileProblem) -> Substring? {
            guard let n = next, n.hasPrefix(key + " ") else { return nil }
            return try field(key)
        }

        mutating func number(_ key: String, in range: ClosedRange<Int>) throws(InboxFileProblem) -> Int {
            let v = try field(key)
            guard v.count <= 16, let n = Int(v), range.contains(n) else { throw .malformed(key, line: i) }
            return n
        }

        mutating func time(_ key: String) throws(InboxFileProblem) -> WallTime? {
            let v = try field(key)
            if v == "-" { return nil }
            guard v.count <= 16, let t = Int64(v), abs(t) <= 1 << 40 else { throw .malformed(key, line: i) }
            return WallTime(secondsSinceEpoch: t)
        }

        /// `from-name yes` after `from`, or nothing (a number).
        mutating func fromName() throws(InboxFileProblem) -> Bool {
            guard let v = try optional("from-name") else { return false }
            guard v == "yes" else { throw .malformed("from-name", line: i) }
            return true
        }

        func end() throws(InboxFileProblem) {
            if i < lines.count { throw .malformed(String(lines[i].prefix(20)), line: i + 1) }
        }
    }

    static func parseReply(_ bytes: [UInt8], id: String) throws(InboxFileProblem) -> StoredReply {
        var l = try Lines(bytes, header: "unwind-reply 1")
        let from = unescape(try l.field("from"))
        let fromName = try l.fromName()
        guard let received = try l.time("received") else { throw .malformed("received", line: l.i) }
        let sent = try l.time("sent")
        let sequence = try l.number("sequence", in: 0...(1 << 40))
        let seenText = try l.field("seen")
        guard seenText == "yes" || seenText == "no" else { throw .malformed("seen", line: l.i) }
        let parts = try l.number("parts", in: 1...255)
        var missing = 0
        if l.next?.hasPrefix("missing ") ?? false { missing = try l.number("missing", in: 0...254) }
        let group = try l.optional("group").map(String.init)
        if let g = group, !isKey(g) { throw .malformed("group", line: l.i) }
        let text = unescape(try l.field("text"))
        try l.end()
        guard isKey(id) else { throw .malformed("id", line: 0) }
        return StoredReply(id: id, from: from, fromName: fromName, text: text, sent: sent, received: received, sequence: sequence,
                           seen: seenText == "yes", parts: parts, missingParts: missing, group: group)
    }

    static func parsePart(_ bytes: [UInt8]) throws(InboxFileProblem) -> HeldPart {
        var l = try Lines(bytes, header: "unwind-reply-part 1")
        let from = unescape(try l.field("from"))
        let fromName = try l.fromName()
        let sent = try l.time("sent")
        guard let alphabet = ReceivedAlphabet(rawValue: String(try l.field("alphabet"))) else { throw .malformed("alphabet", line: l.i) }
        let reference = try l.number("reference", in: 0...0xFFFF)
        let parts = try l.number("parts", in: 2...255)
        let part = try l.number("part", in: 1...parts)
        let f = try l.field("fingerprint")
        guard f.count == 16, let fingerprint = UInt64(f, radix: 16) else { throw .malformed("fingerprint", line: l.i) }
        let hex = try l.field("payload")
        guard hex.utf8.count <= 2 * 160, let payload = try? IncomingPDU.octets(hex: String(hex)) else {
            throw .malformed("payload", line: l.i)
        }
        try l.end()
        return HeldPart(group: groupKey(from: from, name: fromName, reference: reference, parts: parts), from: from, fromName: fromName,
                        sent: sent, alphabet: alphabet,
                        reference: reference, parts: parts, part: part, payload: payload, fingerprint: fingerprint)
    }

    /// "r" or "g" and 16 lowercase hex digits: what this code names files with.
    static func isKey(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return u.count == 17 && (u[0] == UInt8(ascii: "r") || u[0] == UInt8(ascii: "g"))
            && u.dropFirst().allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
