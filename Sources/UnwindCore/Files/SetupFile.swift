/// The setup file on the SD card's boot partition (`unwind-setup.txt`): what whoever sets the
/// device up types on a laptop — the alert contacts, the counselling line, the device's name,
/// Wi-Fi and an SSH key — read at boot by `unwind setup import`.
///
/// One `key: value` a line; `#` starts a note; an empty value keeps what the device has. The
/// file may come from any editor: a byte-order mark, CRLF line ends and UTF-16 (Windows
/// Notepad's "Unicode") are read; anything else that is not UTF-8 is one problem naming the
/// line. Every value is checked by the parser the maintainer's commands use (`AlertSlot`,
/// `PhoneNumber`, `CounsellingLine`, the device name's rule), and every problem names its line,
/// so the screen can say exactly which line to fix. What is right is imported even when other
/// lines are wrong: a bad line never costs the device an alert it could have had.
public struct SetupFile: Equatable, Sendable {
    /// A problem on one line (0: the file as a whole).
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { line == 0 ? message : "line \(line): \(message)" }
        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    public struct WiFi: Equatable, Sendable {
        public var name: String
        public var password: String
        /// ISO 3166 country code, for the radio's legal channels (empty: the driver's default).
        public var country: String
    }

    /// The contacts to import, by slot (1–5): complete and valid, as `unwind alerts set` takes them.
    public var contacts: [Int: AlertSlot] = [:]
    public var counselling: CounsellingLine?
    public var deviceName: String?
    public var wifi: WiFi?
    public var sshKeys: [String] = []
    public var problems: [Problem] = []
    /// The lines as read (without their line ends), for `scrubbed()`.
    public var lines: [String] = []
    /// Whether the file's lines ended in CR LF (kept when it is written back).
    public var crlf = false

    public static let maximumSize = 64 << 10
    public static let fileName = "unwind-setup.txt"
    public static let resultFileName = "unwind-setup-result.txt"

    /// The keys, as written in the file (case and spacing do not matter).
    static let contactFields = ["name", "number", "message"]
    static var knownKeys: [String] {
        var keys = ["device name", "counselling name", "counselling number", "counselling dial number",
                    "wifi name", "wifi password", "wifi country", "ssh key"]
        for n in 1...AlertSlotFile.slotCount {
            for f in contactFields { keys.append("contact \(n) \(f)") }
        }
        return keys
    }

    /// Whether the file asks for anything at all (every value empty: nothing to import).
    public var asksForAnything: Bool {
        !contacts.isEmpty || counselling != nil || deviceName != nil || wifi != nil || !sshKeys.isEmpty
    }

    // MARK: Reading

    public static func parse(_ bytes: [UInt8]) -> SetupFile {
        var file = SetupFile()
        if bytes.count > maximumSize {
            file.problems.append(Problem(line: 0, message: "the file is \(bytes.count) bytes; a setup file is at most \(maximumSize) (is it the right file?)"))
            return file
        }
        let text: String
        switch decode(bytes) {
        case .success(let t): text = t
        case .failure(let p): file.problems.append(p); return file
        }
        file.crlf = text.contains("\r\n")
        file.lines = text.linesWithoutEnds
        var values: [String: (line: Int, value: String)] = [:]
        for (i, raw) in file.lines.enumerated() {
            let number = i + 1
            let line = raw.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                file.problems.append(Problem(line: number, message: "no \":\" — each line is a setting, then \":\", then its value (e.g. contact 1 name: Sam)"))
                continue
            }
            let key = normalizedKey(String(line[..<colon]))
            let value = String(line[line.index(after: colon)...]).trimmingSpaces
            guard knownKeys.contains(key) else {
                let shown = TextSafety.oneLine(String(line[..<colon]), limit: 30)
                let hint = closestKey(to: key).map { "; did you mean \"\($0)\"?" } ?? ""
                file.problems.append(Problem(line: number, message: "\"\(TextSafety.escaped(shown))\" is not a setting\(hint)"))
                continue
            }
            if let first = values[key] {
                file.problems.append(Problem(line: number, message: "\(key) is given twice (lines \(first.line) and \(number)); keep one"))
                continue
            }
            values[key] = (number, value)
        }
        file.take(values)
        file.problems.sort { $0.line < $1.line }
        return file
    }

    /// UTF-8 (a byte-order mark allowed), or UTF-16 with its byte-order mark.
    static func decode(_ bytes: [UInt8]) -> Result<String, Problem> {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let little = bytes[0] == 0xFF
            guard bytes.count % 2 == 0 else {
                return .failure(Problem(line: 0, message: "the file is UTF-16 with a byte missing at its end; save it again (as UTF-8)"))
            }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2 - 1)
            var i = 2
            while i + 1 < bytes.count {
                units.append(little ? UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 : UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]))
                i += 2
            }
            var out = String.UnicodeScalarView()
            var line = 1
            // transcode(_:from:to:stoppingOnError:into:) says whether it stopped on bad input.
            let failed = transcode(units.makeIterator(), from: UTF16.self, to: UTF32.self, stoppingOnError: true) {
                guard let s = Unicode.Scalar($0) else { return }
                if s == "\n" { line += 1 }
                out.append(s)
            }
            guard !failed else {
                return .failure(Problem(line: line, message: "not valid UTF-16 text; save the file as UTF-8"))
            }
            return .success(String(out))
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if let bad = TextSafety.firstInvalidUTF8(body) {
            let line = body.prefix(bad).reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            return .failure(Problem(line: line, message: "not UTF-8 text (byte \(bad + 1) of the file); save it as UTF-8 (\"Unicode (UTF-8)\" in the editor's Save As)"))
        }
        return .success(String(decoding: body, as: UTF8.self))
    }

    /// "Contact  1   NAME" → "contact 1 name"; "Wi-Fi" reads as "wifi".
    public static func normalizedKey(_ raw: String) -> String {
        let lowered = raw.lowercased().replacingAll("wi-fi", with: "wifi")
        return lowered.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "_" }).joined(separator: " ")
    }

    static func closestKey(to key: String) -> String? {
        let scored = knownKeys.map { ($0, editDistance(Array($0), Array(key))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, key.count / 4) else { return nil }
        return best.0
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    // MARK: Checking each value

    private mutating func take(_ values: [String: (line: Int, value: String)]) {
        func given(_ key: String) -> (line: Int, value: String)? {
            guard let v = values[key], !v.value.isEmpty else { return nil }
            return v
        }
        func problem(_ line: Int, _ message: String) { problems.append(Problem(line: line, message: message)) }

        for n in 1...AlertSlotFile.slotCount {
            let name = given("contact \(n) name"), number = given("contact \(n) number"), message = given("contact \(n) message")
            if name == nil && number == nil && message == nil { continue }
            // A number is what makes a contact: names and messages alone (numbers are removed from
            // the card once imported) change nothing.
            guard let number else {
                if name != nil || message != nil, values["contact \(n) number"] == nil {
                    problem((name ?? message)!.line, "contact \(n) has no number line (contact \(n) number: …)")
                }
                continue
            }
            guard let name, let message else {
                problem(number.line, "contact \(n) needs a name and a message as well as a number")
                continue
            }
            do {
                let cleaned = VCard.removingFormatting(TextSafety.nfc(number.value))
                let phone = try PhoneNumber(cleaned)
                contacts[n] = try AlertSlot(name: TextSafety.nfc(name.value), number: phone, message: TextSafety.nfc(message.value))
            } catch {
                let line = switch error.field {
                case .name: name.line
                case .number: number.line
                case .message: message.line
                }
                problem(line, "contact \(n) " + Self.describe(error, written: number.value))
            }
        }

        if let v = given("device name") {
            let name = TextSafety.nfc(v.value)
            if let why = StatusTextSettings.nameProblem(name) { problem(v.line, "device name: \(why)") } else { deviceName = name }
        }

        let cName = given("counselling name"), cNumber = given("counselling number"), cDial = given("counselling dial number")
        if cName != nil || cNumber != nil || cDial != nil {
            if let cName, let cNumber {
                // The number as people read it; dialled without its formatting unless given apart.
                let dialText = cDial?.value ?? VCard.removingFormatting(cNumber.value)
                do {
                    let dial = try PhoneNumber(dialText)
                    counselling = try CounsellingLine(name: cName.value, displayNumber: cNumber.value, dialNumber: dial)
                } catch {
                    let line = error.field == .name ? cName.line : (cDial ?? cNumber).line
                    problem(line, "counselling \(error.description)")
                }
            } else {
                problem((cName ?? cNumber ?? cDial)!.line, "the counselling line needs both its name and its number")
            }
        }

        let wName = given("wifi name"), wPassword = given("wifi password"), wCountry = values["wifi country"]
        if let wName {
            if let why = Self.wifiNameProblem(wName.value) {
                problem(wName.line, "wifi name: \(why)")
            } else if let wPassword, let why = Self.wifiPasswordProblem(wPassword.value) {
                problem(wPassword.line, "wifi password: \(why)")
            } else if let wCountry, !wCountry.value.isEmpty, !Self.isCountryCode(wCountry.value) {
                problem(wCountry.line, "wifi country: two letters, e.g. GB, US, DE")
            } else if let wPassword {
                wifi = WiFi(name: wName.value, password: wPassword.value, country: (wCountry?.value ?? "").uppercased())
            }
            // A name without a password keeps the network the device has: the password is taken
            // off the card once imported, the name stays.
        } else if let wPassword {
            problem(wPassword.line, "wifi password given without a wifi name")
        }

        if let v = given("ssh key") {
            if let why = Self.sshKeyProblem(v.value) { problem(v.line, "ssh key: \(why)") } else { sshKeys = [v.value] }
        }
    }

    /// A number's problem in the setup file's own terms: the file allows the spaces, dashes,
    /// dots and brackets a phone shows (they are removed), so the alert command's hint ("no
    /// spaces, dashes or brackets") and a position counted in the cleaned number would mislead.
    static func describe(_ error: AlertFieldError, written: String) -> String {
        guard error.field == .number else { return error.description }
        let shown = "\"" + TextSafety.escaped(written) + "\""
        switch error.rule {
        case .notADigit(_, let scalar):
            let plus = scalar == 0x2B ? " (a \"+\" goes only at the start)" : ""
            return "number: \(shown) has \(AlertFieldError.describe(scalar))\(plus); write its digits, with one leading \"+\" "
                + "if it is international; spaces, dashes, dots and brackets between them are fine"
        case .digitCount(let n):
            return "number: \(shown) has \(n) digit\(n == 1 ? "" : "s"); a number has 3 to 20"
        case .controlCharacter(_, let scalar):
            return "number: \(shown) has \(AlertFieldError.describe(scalar)), a control character; write its digits only"
        case .empty where !written.isEmpty:
            return "number: \(shown) has no digits"
        default:
            return error.description
        }
    }

    static func wifiNameProblem(_ s: String) -> String? {
        if s.utf8.count > 32 { return "at most 32 bytes (this one is \(s.utf8.count))" }
        return s.unicodeScalars.contains(where: { TextSafety.isTerminalControl($0) || $0 == "\"" || $0 == "\\" })
            ? "no quotes, backslashes or control characters" : nil
    }

    static func wifiPasswordProblem(_ s: String) -> String? {
        guard (8...63).contains(s.utf8.count) else { return "8 to 63 characters (this one has \(s.count))" }
        return s.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
            ? nil : "letters, digits and punctuation only (no quotes, backslashes or accented letters)"
    }

    static func isCountryCode(_ s: String) -> Bool {
        s.utf8.count == 2 && s.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// One OpenSSH public key line: a known type, its base64 body, an optional comment.
    static func sshKeyProblem(_ s: String) -> String? {
        let parts = s.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        let types = ["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                     "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"]
        guard parts.count >= 2, types.contains(String(parts[0])) else {
            return "not a public key line (it starts with ssh-ed25519, ssh-rsa or ecdsa-…; paste the .pub file's one line)"
        }
        guard parts[1].count >= 16, parts[1].utf8.allSatisfy({ isBase64($0) }) else { return "the key's body is not base64" }
        if s.unicodeScalars.contains(where: TextSafety.isTerminalControl) { return "control characters are not allowed" }
        return nil
    }

    static func isBase64(_ b: UInt8) -> Bool {
        (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) || b == 0x2B || b == 0x2F || b == 0x3D
    }

    // MARK: Writing back

    /// The file as it goes back on the card once imported: every contact's number and the Wi-Fi
    /// password taken out (the card can be read by anyone who finds it), everything else as it
    /// was, with a note on top. An empty value keeps what the device has, so reading the
    /// scrubbed file again changes nothing.
    public func scrubbed(note: String) -> String {
        let secret = Set((1...AlertSlotFile.slotCount).map { "contact \($0) number" } + ["wifi password"])
        var out = ["# " + TextSafety.oneLine(note, limit: 200)]
        for line in lines where !line.hasPrefix("# " + Self.notePrefix) {
            let t = line.trimmingSpaces
            if !t.hasPrefix("#"), let colon = t.firstIndex(of: ":"), secret.contains(Self.normalizedKey(String(t[..<colon]))) {
                out.append(String(t[...colon]))
            } else {
                out.append(line)
            }
        }
        while out.count > 1 && out.last == "" { out.removeLast() }
        return out.joined(separator: crlf ? "\r\n" : "\n") + (crlf ? "\r\n" : "\n")
    }

    /// Whether the file is exactly as `scrubbed(note:)` left it: imported, and not edited since.
    public func isAsImported(note: String) -> Bool {
        scrubbed(note: note) == lines.joined(separator: crlf ? "\r\n" : "\n")
    }

    /// How the note `scrubbed` puts on top starts, so the next import replaces it.
    public static let notePrefix = "Unwind:"
}

extension String {
    /// The lines, each without its LF or CR LF; a text that ends in a line end has an empty last
    /// line. Split by scalars: "\r\n" is one Character, which a split on "\n" would not see.
    public var linesWithoutEnds: [String] {
        unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map {
            var s = String(String.UnicodeScalarView($0))
            if s.unicodeScalars.last == "\r" { s.unicodeScalars.removeLast() }
            return s
        }
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

/// `setupResult.txt` in the state directory: what the last import of the setup file found, for
/// the screen ("Ready", or the line to fix). Written by `unwind setup import`, shown by the
/// device at its next start until a button is pressed, then emptied (an empty file: nothing to
/// show).
public enum SetupResultFile {
    public static let name = "setupResult.txt"
    public static let maximumSize = 4096
    public static let lineLimit = 200

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case notUTF8
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(n) bytes; at most \(SetupResultFile.maximumSize)"
            case .notUTF8: "not UTF-8 text"
            }
        }
    }

    /// The lines to show; nil when there is nothing to show.
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [String]? {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        if TextSafety.firstInvalidUTF8(bytes) != nil { throw .notUTF8 }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            .map { TextSafety.oneLine(String($0), limit: lineLimit).trimmingSpaces }
            .filter { !$0.isEmpty }
        return lines.isEmpty ? nil : lines
    }

    public static func format(_ lines: [String]?) -> String {
        guard let lines else { return "" }
        return lines.prefix(20).map { TextSafety.oneLine($0, limit: lineLimit) + "\n" }.joined()
    }
}
