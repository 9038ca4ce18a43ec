/// The panic page's alerts (spec 5.2, design document "Panic Alert" data table): five slots
/// `alert01.txt` … `alert05.txt`, three lines each — contact name, contact number, message.
///
/// Validation lives here so the device, the maintainer's commands and the modem agree on it:
/// a number is never "corrected", a message never altered. What fails is named — the field and
/// the rule — so a person can fix it.

// MARK: - Field errors

/// Which line of an alert.
public enum AlertField: String, Sendable, CaseIterable {
    case name
    case number
    case message

    /// The line of the slot file that holds the field.
    public var line: Int {
        switch self {
        case .name: 1
        case .number: 2
        case .message: 3
        }
    }
}

/// A field that breaks a rule: which field, which rule, where.
public struct AlertFieldError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Rule: Equatable, Sendable {
        /// Nothing there.
        case empty
        /// Only spaces.
        case blank
        /// More characters than allowed.
        case tooLong(count: Int, limit: Int)
        /// A control character (CR, LF, ESC, Ctrl-Z, tab …), a line or paragraph separator or a
        /// byte-order mark, at a 1-based character position.
        case controlCharacter(position: Int, scalar: UInt32)
        /// A number character that is neither a digit nor the one leading "+".
        case notADigit(position: Int, scalar: UInt32)
        /// A number with fewer than 3 or more than 20 digits.
        case digitCount(Int)
        /// A message that would take more text messages than one alert may.
        case tooManyParts(parts: Int, limit: Int)
        /// A `"` or `;` in a message: the AT command language's quote and separator. Messages
        /// only ever travel as PDU hex, but a saved alert is refused anything that could be read
        /// as part of a command, so no tool or future text-mode path can be tricked by one.
        case commandCharacter(position: Int, scalar: UInt32)
        /// A bidirectional control (right-to-left override, isolate, mark …): it can make the
        /// text show differently from what is stored and sent.
        case directionControl(position: Int, scalar: UInt32)
        /// U+FFFD: what bytes that were not UTF-8 became on the way in; the words meant are lost.
        case replacementCharacter(position: Int)
    }

    public var field: AlertField
    public var rule: Rule

    public init(_ field: AlertField, _ rule: Rule) {
        self.field = field
        self.rule = rule
    }

    public var description: String {
        let f = field.rawValue
        switch rule {
        case .empty:
            return "\(f): empty; the \(f) needs at least one character"
        case .blank:
            return "\(f): only spaces; the \(f) needs at least one visible character"
        case .tooLong(let count, let limit):
            return "\(f): \(count) characters; at most \(limit) allowed"
        case .controlCharacter(let position, let scalar):
            var s = "\(f): character \(position) is \(Self.describe(scalar)), a control character that is not allowed"
            if scalar == 0x0D { s += " (was the file saved with Windows line endings?)" }
            return s
        case .notADigit(let position, let scalar):
            let plusHint = scalar == 0x2B ? "; a \"+\" is allowed only as the first character" : ""
            return "\(f): character \(position) is \(Self.describe(scalar)); only digits and one leading \"+\" are allowed"
                + plusHint + " (write +17787824615 or 7787824615, no spaces, dashes or brackets)"
        case .digitCount(let n):
            return "\(f): \(n) digits; a number has 3 to 20 digits"
        case .tooManyParts(let parts, let limit):
            return "\(f): would take \(parts) text messages; at most \(limit) allowed — shorten it"
        case .commandCharacter(let position, let scalar):
            return "\(f): character \(position) is \(Self.describe(scalar)); quotes (\") and semicolons (;) are not allowed in an alert — use ' or , instead"
        case .directionControl(let position, let scalar):
            return "\(f): character \(position) is \(Self.describe(scalar)), which changes the direction text is shown in; not allowed, so the \(f) reads as it is sent"
        case .replacementCharacter(let position):
            return "\(f): character \(position) is the replacement character (U+FFFD), left where the text was not valid UTF-8; type the \(f) again"
        }
    }

    /// "\"-\" (U+002D)", "carriage return (U+000D)" …
    static func describe(_ v: UInt32) -> String {
        var hex = String(v, radix: 16, uppercase: true)
        while hex.count < 4 { hex = "0" + hex }
        let code = "U+" + hex
        let names: [UInt32: String] = [
            0x00: "NUL", 0x09: "a tab", 0x0A: "a line feed", 0x0D: "a carriage return",
            0x1A: "Ctrl-Z", 0x1B: "ESC", 0x7F: "DEL", 0x2028: "a line separator",
            0x2029: "a paragraph separator", 0xFEFF: "a byte-order mark", 0x20: "a space",
            0x202E: "a right-to-left override", 0x202D: "a left-to-right override",
            0x202B: "a right-to-left embedding", 0x202A: "a left-to-right embedding",
            0x202C: "a pop directional formatting", 0x2067: "a right-to-left isolate",
            0x2066: "a left-to-right isolate", 0x2068: "a first-strong isolate", 0x2069: "a pop directional isolate",
            0x200F: "a right-to-left mark", 0x200E: "a left-to-right mark", 0x061C: "an Arabic letter mark",
        ]
        if let n = names[v] { return "\(n) (\(code))" }
        if v < 0x20 || (0x80..<0xA0).contains(v) { return "a control character (\(code))" }
        // Anything a terminal would act on is named by its code only, never shown.
        if let s = Unicode.Scalar(v), !TextSafety.isTerminalControl(s) { return "\"\(Character(s))\" (\(code))" }
        return code
    }
}

// MARK: - Phone numbers

/// A validated phone number: an optional leading "+", then 3 to 20 ASCII digits, nothing else.
///
/// The only way an AT dial string or a PDU destination address is ever built is from this type,
/// so no quote, semicolon, CR, LF, Ctrl-Z or ESC can reach the modem through a number.
public struct PhoneNumber: Hashable, Sendable, CustomStringConvertible {
    /// True for a number written with a leading "+" (international, type of number 145).
    public let isInternational: Bool
    /// The digits, ASCII "0"…"9" only, 3 to 20 of them.
    public let digits: String

    public static let digitRange = 3...20

    /// Validates `text` exactly as written: no trimming, no removal of spaces or dashes.
    public init(_ text: String) throws(AlertFieldError) {
        let scalars = Array(text.unicodeScalars)
        if scalars.isEmpty { throw AlertFieldError(.number, .empty) }
        var international = false
        var digits = ""
        for (i, s) in scalars.enumerated() {
            if i == 0 && s == "+" {
                international = true
            } else if ("0"..."9").contains(s) {
                digits.unicodeScalars.append(s)
            } else if Self.isControl(s) {
                throw AlertFieldError(.number, .controlCharacter(position: i + 1, scalar: s.value))
            } else {
                throw AlertFieldError(.number, .notADigit(position: i + 1, scalar: s.value))
            }
        }
        if !Self.digitRange.contains(digits.utf8.count) {
            throw AlertFieldError(.number, .digitCount(digits.utf8.count))
        }
        self.isInternational = international
        self.digits = digits
    }

    /// The number as written: "+17787824615" or "7787824615".
    public var text: String { (isInternational ? "+" : "") + digits }

    public var description: String { text }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return s.value == 0xFEFF
        }
    }
}

// MARK: - Alerts

/// One saved alert: whom to text, at which number, with which words. Always valid: the only
/// way to make one is through validation.
public struct AlertSlot: Equatable, Sendable {
    public let name: String
    public let number: PhoneNumber
    public let message: String
    /// How the message will travel (GSM-7 or UCS-2, how many parts), for the saver to report.
    public let encoding: SMSEncoding

    public static let nameLimit = 40
    public static let messageLimit = 160
    /// A message of at most 160 characters never needs more; the limit only stops a hand-made
    /// file of combining marks from turning one alert into dozens of texts.
    public static let partLimit = 8

    /// Checks the fields in file order (name, number, message) and reports the first problem.
    /// The name and the message are kept in NFC (see `TextSafety.nfc`), whichever form they
    /// came in: the command line, the control socket and a slot file all end up the same.
    public init(name: String, number: String, message: String) throws(AlertFieldError) {
        try Self.validateName(TextSafety.nfc(name))
        try self.init(name: name, number: PhoneNumber(number), message: message)
    }

    public init(name: String, number: PhoneNumber, message: String) throws(AlertFieldError) {
        let name = TextSafety.nfc(name), message = TextSafety.nfc(message)
        try Self.validateName(name)
        self.encoding = try Self.validateMessage(message)
        self.name = name
        self.number = number
        self.message = message
    }

    /// For tests of the layers below validation only (the PDU encoder and the modem must stay
    /// safe even if something unvalidated ever reached them): skips the message's `"`/`;` rule,
    /// still refuses control characters.
    init(testingName name: String, number: PhoneNumber, message: String) throws(AlertFieldError) {
        try Self.validateName(name)
        try Self.validateText(message, field: .message, limit: Self.messageLimit)
        self.encoding = SMSEncoding(message)
        self.name = name
        self.number = number
        self.message = message
    }

    /// 1–40 printable characters, not only spaces, no bidi controls; `name` in NFC.
    public static func validateName(_ name: String) throws(AlertFieldError) {
        try validateText(name, field: .name, limit: nameLimit)
    }

    /// 1–160 characters, no control characters, not only spaces, no bidi controls; `message` in
    /// NFC. Returns how it will be encoded.
    @discardableResult
    public static func validateMessage(_ message: String) throws(AlertFieldError) -> SMSEncoding {
        try validateText(message, field: .message, limit: messageLimit)
        var position = 0
        for c in message {
            position += 1
            if c == "\"" || c == ";" {
                throw AlertFieldError(.message, .commandCharacter(position: position, scalar: c == ";" ? 0x3B : 0x22))
            }
        }
        let encoding = SMSEncoding(message)
        if encoding.parts > partLimit {
            throw AlertFieldError(.message, .tooManyParts(parts: encoding.parts, limit: partLimit))
        }
        return encoding
    }

    /// The rules every name and message share, on the device and in the commands alike. The
    /// text is checked as given: callers pass it in NFC (`TextSafety.nfc`), as `init` does.
    static func validateText(_ text: String, field: AlertField, limit: Int) throws(AlertFieldError) {
        if text.isEmpty { throw AlertFieldError(field, .empty) }
        var position = 0
        var visible = false
        for c in text {
            position += 1
            for s in c.unicodeScalars {
                if PhoneNumber.isControl(s) {
                    throw AlertFieldError(field, .controlCharacter(position: position, scalar: s.value))
                }
                if TextSafety.isBidiControl(s) {
                    throw AlertFieldError(field, .directionControl(position: position, scalar: s.value))
                }
                if s == "\u{FFFD}" { throw AlertFieldError(field, .replacementCharacter(position: position)) }
            }
            if !c.isWhitespace { visible = true }
        }
        if position > limit { throw AlertFieldError(field, .tooLong(count: position, limit: limit)) }
        if !visible { throw AlertFieldError(field, .blank) }
    }
}

/// A slot file, `alert01.txt` … `alert05.txt`: exactly three lines — name, number, message —
/// each ended by a line feed (the last one may be missing). A missing file, or an empty one, is
/// an empty slot. Nothing is guessed: a byte-order mark or a CRLF line end makes the slot "needs
/// attention" with the character named, so what goes out is exactly what the file says.
public enum AlertSlotFile {
    public static let slotCount = 5
    /// Far more than three valid lines can take; anything bigger is not an alert.
    public static let maximumSize = 2048

    /// `alert01.txt` for slot 1 … `alert05.txt` for slot 5. Total (a wrong number gives a name
    /// no slot has, never a crash): it is called while logging a broken slot, and a crash there
    /// once turned one bad file into a device that could never send an alert again.
    public static func name(slot: Int) -> String {
        slot >= 0 && slot < 10 ? "alert0\(slot).txt" : "alert\(slot).txt"
    }

    public static var names: [String] { (1...slotCount).map { name(slot: $0) } }

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(Int)
        case notUTF8
        case lineCount(Int)
        case invalid(AlertFieldError)
        /// The file could not be read (an I/O error, reported by the edge).
        case unreadable(String)

        public var description: String {
            switch self {
            case .unreadable(let why): "cannot be read: \(why)"
            case .tooLarge(let n): "\(n) bytes; an alert file has at most \(AlertSlotFile.maximumSize)"
            case .notUTF8: "not UTF-8 text"
            case .lineCount(let n): "\(n) lines; an alert file has exactly 3 (name, number, message)"
            case .invalid(let e): "line \(e.field.line), \(e)"
            }
        }
    }

    /// The slot in `bytes`; nil for an empty file.
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> AlertSlot? {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        if bytes.isEmpty { return nil }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
        if lines.count != 3 { throw .lineCount(lines.count) }
        var text: [String] = []
        for line in lines {
            guard let s = String(validating: line, as: UTF8.self) else { throw .notUTF8 }
            text.append(s)
        }
        do {
            return try AlertSlot(name: text[0], number: text[1], message: text[2])
        } catch {
            throw .invalid(error)
        }
    }

    public static func format(_ slot: AlertSlot) -> String {
        "\(slot.name)\n\(slot.number.text)\n\(slot.message)\n"
    }
}

/// What the panic page shows for a slot.
public enum AlertSlotState: Equatable, Sendable {
    /// No file (or an empty one): "Create".
    case empty
    /// A valid alert, ready to send.
    case ready(AlertSlot)
    /// A file that failed validation: shown as "needs attention", never sent.
    case needsAttention(AlertSlotFile.Problem)

    /// The state of a slot whose file holds `bytes` (nil: no file).
    public init(file bytes: [UInt8]?) {
        guard let bytes else { self = .empty; return }
        do {
            if let slot = try AlertSlotFile.parse(bytes) { self = .ready(slot) } else { self = .empty }
        } catch {
            self = .needsAttention(error)
        }
    }

    public var alert: AlertSlot? {
        if case .ready(let a) = self { return a }
        return nil
    }
}

// MARK: - Counselling line

/// The counselling service shown on the panic page and dialled through the modem (spec 5.4).
public struct CounsellingLine: Equatable, Sendable {
    public let name: String
    /// As a person reads it: "(778) 782-4615".
    public let displayNumber: String
    /// As the modem dials it: "+17787824615".
    public let dialNumber: PhoneNumber

    public init(name: String, displayNumber: String, dialNumber: PhoneNumber) throws(AlertFieldError) {
        let name = TextSafety.nfc(name), displayNumber = TextSafety.nfc(displayNumber)
        try AlertSlot.validateName(name)
        try AlertSlot.validateText(displayNumber, field: .number, limit: 40)
        self.name = name
        self.displayNumber = displayNumber
        self.dialNumber = dialNumber
    }

    private init(uncheckedName name: String, displayNumber: String, dialNumber: PhoneNumber) {
        self.name = name
        self.displayNumber = displayNumber
        self.dialNumber = dialNumber
    }

    /// The spec's default (requirements, "Contact SFU Health and Counselling Service").
    public static let sfuCounselling = CounsellingLine(
        uncheckedName: "SFU Counselling", displayNumber: "(778) 782-4615",
        dialNumber: try! PhoneNumber("+17787824615"))
    /// The reference build's counselling website (`counselling.website`), shown as a QR code.
    public static let sfuWebsite = "https://sfu.ca/students/health"
}
