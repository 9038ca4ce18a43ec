@_spi(_Unicode) import Swift

/// Text that came from outside — the modem, a file, the control socket, a command line — on
/// its way to a person: what a terminal must never receive raw, what a name or a message may
/// not hold, and the one form (NFC) stored and sent.
public enum TextSafety {
    /// Characters that reorder how the text around them is shown (Unicode's explicit
    /// directional formatting characters): in a name or a message they can make "Mum" read as
    /// something else on a phone or in a terminal than what is stored and sent.
    public static func isBidiControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// What a terminal may act on instead of showing: C0 (ESC starts every escape sequence),
    /// DEL, C1 (some terminals take U+009B as CSI), the line and paragraph separators, and the
    /// bidi controls.
    public static func isTerminalControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: isBidiControl(s)
        }
    }

    /// `text` with every terminal control written as `\u001B` (four hex digits). The one way
    /// outside text is made safe to print: the same escape is valid inside a JSON string, so
    /// it serves `--json` output too (which then still decodes to the original text). A
    /// backslash is left as it is, so text without controls prints unchanged.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isTerminalControl) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if isTerminalControl(s) {
                out.append(contentsOf: "\\u\(hex4(s.value))".unicodeScalars)
            } else {
                out.append(s)
            }
        }
        return String(out)
    }

    /// `text` on one line for a flat file or a screen: every terminal control (line breaks among
    /// them) becomes a space, and at most `limit` characters are kept.
    public static func oneLine(_ text: String, limit: Int) -> String {
        var out = String.UnicodeScalarView()
        var count = 0
        for c in text {
            guard count < limit else { break }
            count += 1
            for s in c.unicodeScalars { out.append(isTerminalControl(s) ? " " : s) }
        }
        return String(out)
    }

    /// Unicode's composed form (NFC): "é" as one character, not "e" and a combining accent. A
    /// name or a message is stored and sent in this form, so the same words always make the
    /// same bytes (and an accent GSM-7 has does not push a text message into UCS-2).
    public static func nfc(_ text: String) -> String {
        // Pure ASCII is already NFC: the common case costs no normalisation.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        // The standard library's own normaliser (what Foundation's
        // precomposedStringWithCanonicalMapping needs ICU for on Linux).
        return String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    /// The offset of the first byte of `bytes` that does not belong to valid UTF-8; nil when
    /// all of it is valid.
    public static func firstInvalidUTF8(_ bytes: some Collection<UInt8>) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// "U+001B": how messages name a character without showing it.
    public static func code(_ v: UInt32) -> String { "U+" + hex4(v) }

    /// True when `text`'s scalars are exactly its NFC form's (Swift's `==` compares canonical
    /// equivalence, so it cannot tell the two forms apart).
    public static func isNFC(_ text: String) -> Bool {
        text.unicodeScalars.elementsEqual(nfc(text).unicodeScalars)
    }
}

extension StringProtocol {
    /// Without the characters at either end that `edge` says go.
    public func trimming(_ edge: (Character) -> Bool) -> String {
        var s = Substring(self)
        while let f = s.first, edge(f) { s.removeFirst() }
        while let l = s.last, edge(l) { s.removeLast() }
        return String(s)
    }

    /// Without the white space (spaces, tabs, line breaks) at either end.
    public var trimmingSpaces: String { trimming { $0.isWhitespace } }

    /// Without the spaces and tabs at either end; line breaks stay (Foundation's `.whitespaces`).
    public var trimmingBlanks: String {
        trimming { $0 == "\t" || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .spaceSeparator } }
    }
}
