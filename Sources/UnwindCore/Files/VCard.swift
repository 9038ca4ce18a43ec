/// Contacts from a vCard file exported from a phone (vCard 2.1, 3.0 and 4.0; RFC 2426, RFC 6350):
/// the device's equivalent of the spec's "select a contact from the contacts list".
///
/// What is read, and how:
/// - Lines end in CRLF or LF; a line starting with a space or a tab continues the previous one
///   (folding). A byte-order mark at the start is skipped. The file must be UTF-8.
/// - Every `BEGIN:VCARD` … `END:VCARD` is one contact; a file may hold many.
/// - The name is `FN`; without one, `N` (family;given;additional;prefix;suffix) put in reading
///   order. Escapes (`\,` `\;` `\n` `\\`) are undone.
/// - `TEL` lines, with their types from `TYPE=CELL,VOICE`, `TYPE=cell`, vCard 2.1's bare
///   `;CELL;PREF` and `PREF=1`; vCard 4.0's `tel:` URIs lose the `tel:` and any `;ext=…`.
/// - vCard 2.1 `ENCODING=QUOTED-PRINTABLE` values are decoded (soft line breaks included).
///
/// The number is then taken as the vCard wrote it, with only its formatting removed — spaces,
/// dashes, dots and brackets — and must pass `PhoneNumber` validation exactly. Nothing else is
/// changed: no country code is ever added or guessed.
public struct VCardContact: Equatable, Sendable {
    public var name: String
    public var telephones: [VCardTelephone]

    public init(name: String, telephones: [VCardTelephone]) {
        self.name = name
        self.telephones = telephones
    }

    /// The number an alert should use: a mobile one first (a preferred mobile before the
    /// others), else the preferred one, else the first.
    public var bestTelephone: VCardTelephone? {
        telephones.first { $0.isMobile && $0.isPreferred } ?? telephones.first { $0.isMobile }
            ?? telephones.first { $0.isPreferred } ?? telephones.first
    }
}

public struct VCardTelephone: Equatable, Sendable {
    /// The value as written in the file (after unfolding, decoding and `tel:` removal).
    public var value: String
    /// Upper-cased types: CELL, HOME, WORK, VOICE, PREF, …
    public var types: [String]

    public init(value: String, types: [String]) {
        self.value = value
        self.types = types
    }

    public var isMobile: Bool { types.contains { ["CELL", "MOBILE", "IPHONE"].contains($0) } }
    public var isPreferred: Bool { types.contains("PREF") }
}

public enum VCard {
    /// A contacts file bigger than this is not one to pick an alert contact from.
    public static let maximumSize = 4 << 20

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case notUTF8
        case noContacts
        case unterminated(line: Int)
        case malformedLine(Int)
        case nestedCard(line: Int)
        case noName(card: Int)
        case noContactNamed(String, available: [String])
        case ambiguous(String, matches: [String])
        case chooseOne([String])
        case noTelephone(String)
        case badNumber(contact: String, written: String, cleaned: String, AlertFieldError)

        public var description: String {
            switch self {
            case .tooLarge(let n): "the file is \(n) bytes; a vCard file has at most \(VCard.maximumSize)"
            case .notUTF8: "the file is not UTF-8 text; export the contacts again as vCard (UTF-8)"
            case .noContacts: "no contact in the file (no BEGIN:VCARD … END:VCARD); is it a vCard (.vcf) file?"
            case .unterminated(let l): "the contact that starts on line \(l) has no END:VCARD; the file is cut short"
            case .malformedLine(let l): "line \(l) is not a vCard property (NAME:value)"
            case .nestedCard(let l): "line \(l): BEGIN:VCARD inside another contact (a missing END:VCARD?)"
            case .noName(let c): "contact \(c) in the file has neither FN nor N: no name to use"
            case .noContactNamed(let n, let all):
                "no contact named \"\(n)\"; the file has: \(VCard.list(all))"
            case .ambiguous(let n, let matches):
                "\"\(n)\" matches \(matches.count) contacts: \(VCard.list(matches)); give the full name"
            case .chooseOne(let all):
                "the file has \(all.count) contacts (\(VCard.list(all))); choose one with --contact NAME"
            case .noTelephone(let n): "\(n) has no telephone number (TEL) in the file"
            case .badNumber(let contact, let written, let cleaned, let e):
                "the number \"\(written)\" of \(contact) cannot be used"
                    + (cleaned != written ? " (without its spaces, dashes, dots and brackets: \"\(cleaned)\")" : "")
                    + ": \(e)"
            }
        }
    }

    static func list(_ names: [String]) -> String {
        let shown = names.prefix(12).map { "\"\($0)\"" }.joined(separator: ", ")
        return names.count > 12 ? shown + " and \(names.count - 12) more" : shown
    }

    // MARK: Parsing

    /// Every contact in the file, in file order. Contacts without a telephone are kept (so a
    /// name can be reported as having none).
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [VCardContact] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var b = bytes[...]
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { b = b.dropFirst(3) }
        guard let text = String(validating: b, as: UTF8.self) else { throw .notUTF8 }
        let lines = unfold(text)
        var contacts: [VCardContact] = []
        var current: (start: Int, fn: String?, n: String?, tels: [VCardTelephone])?
        var k = 0
        while k < lines.count {
            let (number, raw) = lines[k]
            k += 1
            if raw.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            guard let p = Property(raw) else {
                if current == nil { continue }  // text between cards is ignored
                throw .malformedLine(number)
            }
            var value = p.value
            if p.isQuotedPrintable {
                // Soft line breaks: a value ending in "=" continues on the next line.
                while value.hasSuffix("="), k < lines.count {
                    value = String(value.dropLast()) + lines[k].text
                    k += 1
                }
                value = decodeQuotedPrintable(value)
            }
            switch p.name {
            case "BEGIN" where value.uppercased() == "VCARD":
                if current != nil { throw .nestedCard(line: number) }
                current = (number, nil, nil, [])
            case "END" where value.uppercased() == "VCARD":
                guard let c = current else { continue }
                let name = c.fn.flatMap(nonBlank) ?? c.n.flatMap(nameFromN)
                guard let name else { throw .noName(card: contacts.count + 1) }
                contacts.append(VCardContact(name: name, telephones: c.tels))
                current = nil
            case "FN":
                current?.fn = unescape(value)
            case "N":
                current?.n = value
            case "TEL":
                var v = unescape(value)
                if v.lowercased().hasPrefix("tel:") {
                    v = String(v.dropFirst(4))
                    if let semi = v.firstIndex(of: ";") { v = String(v[..<semi]) }
                }
                current?.tels.append(VCardTelephone(value: v, types: p.types))
            default:
                break
            }
        }
        if let c = current { throw .unterminated(line: c.start) }
        if contacts.isEmpty { throw .noContacts }
        return contacts
    }

    /// The contact to use: the only one, or the one `named` (case-insensitive; an exact name
    /// first, else the only name containing it).
    public static func choose(_ contacts: [VCardContact], named: String?) throws(Problem) -> VCardContact {
        let names = contacts.map(\.name)
        guard let named else {
            if contacts.count == 1 { return contacts[0] }
            throw .chooseOne(names)
        }
        let wanted = named.lowercased()
        let exact = contacts.filter { $0.name.lowercased() == wanted }
        if exact.count == 1 { return exact[0] }
        if exact.count > 1 { throw .ambiguous(named, matches: exact.map(\.name)) }
        let partial = contacts.filter { $0.name.lowercased().contains(wanted) }
        if partial.count == 1 { return partial[0] }
        if partial.count > 1 { throw .ambiguous(named, matches: partial.map(\.name)) }
        throw .noContactNamed(named, available: names)
    }

    /// The contact's alert number: `bestTelephone` with only its formatting removed, validated
    /// exactly as an alert's number is.
    public static func phoneNumber(of contact: VCardContact) throws(Problem) -> PhoneNumber {
        guard let tel = contact.bestTelephone else { throw .noTelephone(contact.name) }
        let cleaned = removingFormatting(tel.value)
        do {
            return try PhoneNumber(cleaned)
        } catch {
            throw .badNumber(contact: contact.name, written: tel.value, cleaned: cleaned, error)
        }
    }

    /// Removes spaces (also no-break spaces), dashes (also the non-breaking hyphen), dots and
    /// round brackets: how phones format a number, never what it is.
    public static func removingFormatting(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.filter {
            !["\u{20}", "\u{A0}", "-", "\u{2011}", ".", "(", ")"].contains($0)
        }))
    }

    // MARK: Pieces

    /// Physical lines joined into logical ones, each with the number of its first line.
    static func unfold(_ text: String) -> [(number: Int, text: String)] {
        var out: [(Int, String)] = []
        var number = 0
        // By scalars: in a String "\r\n" is one Character, which a split on "\n" would not see.
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var line = rawLine
            if line.last == "\r" { line = line.dropLast() }
            if let first = line.first, first == " " || first == "\t", !out.isEmpty {
                out[out.count - 1].1 += String(String.UnicodeScalarView(line.dropFirst()))
            } else {
                out.append((number, String(String.UnicodeScalarView(line))))
            }
        }
        return out
    }

    struct Property {
        var name: String
        var types: [String] = []
        var isQuotedPrintable = false
        var value: String

        /// `[group.]NAME[;param[=v[,v]]]*:value`; nil when there is no name or no colon.
        init?(_ line: String) {
            var quoted = false
            var colon: String.Index?
            for i in line.indices {
                if line[i] == "\"" { quoted.toggle() }
                if line[i] == ":" && !quoted { colon = i; break }
            }
            guard let colon else { return nil }
            value = String(line[line.index(after: colon)...])
            let head = line[..<colon].split(separator: ";", omittingEmptySubsequences: false)
            guard var n = head.first.map(String.init), !n.isEmpty else { return nil }
            if let dot = n.lastIndex(of: ".") { n = String(n[n.index(after: dot)...]) }
            guard !n.isEmpty, n.unicodeScalars.allSatisfy({ ($0.properties.isAlphabetic && $0.isASCII) || $0 == "-" || ("0"..."9").contains($0) }) else { return nil }
            name = n.uppercased()
            for param in head.dropFirst() {
                let kv = param.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = kv[0].uppercased()
                if kv.count == 1 {
                    // vCard 2.1: a bare type (CELL, PREF) or encoding (QUOTED-PRINTABLE).
                    if key == "QUOTED-PRINTABLE" { isQuotedPrintable = true } else { types.append(key) }
                    continue
                }
                let v = kv[1].replacingQuotes
                switch key {
                case "TYPE":
                    types += v.split(separator: ",").map { $0.uppercased() }
                case "PREF":
                    types.append("PREF")
                case "ENCODING":
                    if v.uppercased() == "QUOTED-PRINTABLE" { isQuotedPrintable = true }
                default:
                    break
                }
            }
        }
    }

    static func nonBlank(_ s: String) -> String? {
        let t = s.trimmingSpaces
        return t.isEmpty ? nil : t
    }

    /// N = family;given;additional;prefix;suffix → "prefix given additional family suffix".
    static func nameFromN(_ raw: String) -> String? {
        let parts = splitUnescaped(raw, on: ";").map { unescape($0).replacingOccurrencesOfComma }
        func part(_ i: Int) -> String { i < parts.count ? parts[i].trimmingSpaces : "" }
        let ordered = [part(3), part(1), part(2), part(0), part(4)].filter { !$0.isEmpty }
        return ordered.isEmpty ? nil : ordered.joined(separator: " ")
    }

    static func splitUnescaped(_ s: String, on separator: Character) -> [String] {
        var out: [String] = []
        var current = ""
        var escaped = false
        for c in s {
            if escaped {
                current.append("\\")
                current.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == separator {
                out.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        if escaped { current.append("\\") }
        out.append(current)
        return out
    }

    /// Undoes `\n`, `\N`, `\,`, `\;`, `\:` and `\\`.
    static func unescape(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                out.append(c == "n" || c == "N" ? "\n" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        if escaped { out.append("\\") }
        return out
    }

    /// `=XX` hex escapes to bytes, then UTF-8 (Latin-1 when the bytes are not UTF-8).
    static func decodeQuotedPrintable(_ s: String) -> String {
        var bytes: [UInt8] = []
        let u = Array(s.utf8)
        var i = 0
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: b - 0x30
            case 0x41...0x46: b - 0x41 + 10
            case 0x61...0x66: b - 0x61 + 10
            default: nil
            }
        }
        while i < u.count {
            if u[i] == UInt8(ascii: "="), i + 2 < u.count, let h = hex(u[i + 1]), let l = hex(u[i + 2]) {
                bytes.append(h << 4 | l)
                i += 3
            } else {
                bytes.append(u[i])
                i += 1
            }
        }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

private extension Substring {
    var replacingQuotes: String { String(filter { $0 != "\"" }) }
}

private extension String {
    /// N's components may hold several values separated by commas; they read as spaces.
    var replacingOccurrencesOfComma: String { String(map { $0 == "," ? " " : $0 }) }
}
