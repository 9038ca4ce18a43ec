/// How a text message travels: the GSM 7-bit default alphabet (3GPP TS 23.038 §6.2.1) when
/// every character is in it or in its extension table, otherwise UCS-2 (UTF-16 code units).
/// The tables live in the core so the saver can report the encoding; the modem packs the bits.

public enum SMSAlphabet: String, Sendable, Equatable {
    case gsm7 = "GSM-7"
    case ucs2 = "UCS-2"
}

/// The GSM 7-bit default alphabet and its extension table (3GPP TS 23.038 §6.2.1, §6.2.1.1).
public enum GSM7 {
    /// The escape to the extension table. An extension character takes two septets.
    public static let escape: UInt8 = 0x1B

    /// Septet value → Unicode scalar; 0x1B (escape) maps to nothing.
    public static let defaultAlphabet: [UInt32] = [
        0x40, 0xA3, 0x24, 0xA5, 0xE8, 0xE9, 0xF9, 0xEC, 0xF2, 0xC7, 0x0A, 0xD8, 0xF8, 0x0D, 0xC5, 0xE5,  // @£$¥èéùìòÇ LF Øø CR Åå
        0x394, 0x5F, 0x3A6, 0x393, 0x39B, 0x3A9, 0x3A0, 0x3A8, 0x3A3, 0x398, 0x39E, 0xFFFF, 0xC6, 0xE6, 0xDF, 0xC9,  // Δ_ΦΓΛΩΠΨΣΘΞ ESC ÆæßÉ
        0x20, 0x21, 0x22, 0x23, 0xA4, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F,  //  !"#¤%&'()*+,-./
        0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3B, 0x3C, 0x3D, 0x3E, 0x3F,  // 0-9:;<=>?
        0xA1, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F,  // ¡A-O
        0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0xC4, 0xD6, 0xD1, 0xDC, 0xA7,  // P-ZÄÖÑÜ§
        0xBF, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F,  // ¿a-o
        0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0xE4, 0xF6, 0xF1, 0xFC, 0xE0,  // p-zäöñüà
    ]

    /// Septet after the escape → Unicode scalar: form feed ^ { } \ [ ~ ] | €.
    public static let extensionTable: [(septet: UInt8, scalar: UInt32)] = [
        (0x0A, 0x0C), (0x14, 0x5E), (0x28, 0x7B), (0x29, 0x7D), (0x2F, 0x5C),
        (0x3C, 0x5B), (0x3D, 0x7E), (0x3E, 0x5D), (0x40, 0x7C), (0x65, 0x20AC),
    ]

    /// Scalar → septet (0x00–0x7F) or 0x1B00 | extension septet.
    static let lookup: [UInt32: UInt16] = {
        var d: [UInt32: UInt16] = [:]
        for (septet, scalar) in defaultAlphabet.enumerated() where scalar != 0xFFFF { d[scalar] = UInt16(septet) }
        for e in extensionTable { d[e.scalar] = 0x1B00 | UInt16(e.septet) }
        return d
    }()

    /// The septets (an extension character as escape + septet) for `scalar`, or nil when it
    /// is in neither table.
    public static func septets(for scalar: Unicode.Scalar) -> (UInt8, UInt8?)? {
        guard let v = lookup[scalar.value] else { return nil }
        return v > 0xFF ? (escape, UInt8(v & 0x7F)) : (UInt8(v), nil)
    }

    /// Every septet of `text`, unpacked (one per byte), or nil if a character is in neither table.
    public static func septets(of text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.unicodeScalars.count)
        for s in text.unicodeScalars {
            guard let (a, b) = septets(for: s) else { return nil }
            out.append(a)
            if let b { out.append(b) }
        }
        return out
    }

    /// The text of unpacked septets. An escape followed by a septet not in the extension table
    /// reads as the default-alphabet character (TS 23.038); a double or trailing escape reads as
    /// a space.
    public static func decode(_ septets: some Sequence<UInt8>) -> String {
        var out = String.UnicodeScalarView()
        var escaped = false
        for raw in septets {
            let s = raw & 0x7F
            if escaped {
                escaped = false
                if s == escape {  // reserved for another extension table: shown as a space
                    out.append(" ")
                    continue
                }
                if let e = extensionTable.first(where: { $0.septet == s }), let u = Unicode.Scalar(e.scalar) {
                    out.append(u)
                    continue
                }
            } else if s == escape {
                escaped = true
                continue
            }
            if let u = Unicode.Scalar(defaultAlphabet[Int(s)]) { out.append(u) }
        }
        if escaped { out.append(" ") }
        return String(out)
    }
}

/// How a message will be sent: alphabet, size, number of parts.
public struct SMSEncoding: Equatable, Sendable, CustomStringConvertible {
    /// Septets in one single-part GSM-7 message.
    public static let singlePartSeptets = 160
    /// Septets per part of a concatenated GSM-7 message: 140 octets less a 7-octet header
    /// (concatenation with a 16-bit reference) is 133 octets, 152 septets.
    public static let multipartSeptets = 152
    /// UTF-16 units in one single-part UCS-2 message.
    public static let singlePartUnits = 70
    /// UTF-16 units per part of a concatenated UCS-2 message: (140 − 7) / 2.
    public static let multipartUnits = 66

    public let alphabet: SMSAlphabet
    /// Septets for GSM-7 (an extension character counts 2), UTF-16 code units for UCS-2.
    public let units: Int
    public let parts: Int
    /// The first character that is in neither GSM-7 table (why the message is UCS-2).
    public let firstNonGSM: Unicode.Scalar?

    public init(_ text: String) {
        if let septets = GSM7.septets(of: text) {
            alphabet = .gsm7
            units = septets.count
            parts = Self.split(gsm7: septets).count
            firstNonGSM = nil
        } else {
            let utf16 = Array(text.utf16)
            alphabet = .ucs2
            units = utf16.count
            parts = Self.split(ucs2: utf16).count
            firstNonGSM = text.unicodeScalars.first { GSM7.septets(for: $0) == nil }
        }
    }

    public var isSinglePart: Bool { parts <= 1 }

    /// "GSM-7, 1 part (45 of 160 septets)", "UCS-2 (because of "😀"), 2 parts (75 units, 66 per part)".
    public var description: String {
        var s = alphabet.rawValue
        if let c = firstNonGSM { s += " (because of \"\(Character(c))\")" }
        let unit = alphabet == .gsm7 ? "septets" : "units"
        if parts <= 1 {
            let limit = alphabet == .gsm7 ? Self.singlePartSeptets : Self.singlePartUnits
            s += ", 1 part (\(units) of \(limit) \(unit))"
        } else {
            let per = alphabet == .gsm7 ? Self.multipartSeptets : Self.multipartUnits
            s += ", \(parts) parts (\(units) \(unit), \(per) per part)"
        }
        return s
    }

    /// The parts of a GSM-7 message, as ranges of its septets: one part up to `single` septets,
    /// otherwise parts of at most `perPart`, never ending between an escape and its character.
    public static func split(gsm7 septets: [UInt8], single: Int = singlePartSeptets,
                             perPart: Int = multipartSeptets) -> [Range<Int>] {
        split(count: septets.count, single: single, perPart: perPart) { i in septets[i] == GSM7.escape ? 2 : 1 }
    }

    /// The parts of a UCS-2 message, as ranges of its UTF-16 units: one part up to `single`
    /// units, otherwise parts of at most `perPart`, never between the halves of a surrogate pair.
    public static func split(ucs2 units: [UInt16], single: Int = singlePartUnits,
                             perPart: Int = multipartUnits) -> [Range<Int>] {
        split(count: units.count, single: single, perPart: perPart) { i in
            (0xD800...0xDBFF).contains(units[i]) && i + 1 < units.count
                && (0xDC00...0xDFFF).contains(units[i + 1]) ? 2 : 1
        }
    }

    private static func split(count: Int, single: Int, perPart: Int, width: (Int) -> Int) -> [Range<Int>] {
        if count == 0 { return [0..<0] }
        if count <= single { return [0..<count] }
        var parts: [Range<Int>] = []
        var start = 0
        var i = 0
        while i < count {
            let w = min(width(i), count - i)
            if i + w - start > perPart {
                parts.append(start..<i)
                start = i
            }
            i += w
        }
        parts.append(start..<count)
        return parts
    }
}
