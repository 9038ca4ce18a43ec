import UnwindCore

/// TP-Validity-Period, relative format (3GPP TS 23.040 §9.2.3.12.1): one octet.
public struct SMSValidityPeriod: Equatable, Sendable {
    public let octet: UInt8

    public init(octet: UInt8) { self.octet = octet }

    /// The shortest period the octet can say that is at least `duration` (5 minutes to 63 weeks).
    public init(atLeast duration: Duration) {
        let minutes = max(0, (duration.nanoseconds + 59_999_999_999) / 60_000_000_000)
        for v in 0...255 where Self.minutes(UInt8(v)) >= minutes {
            octet = UInt8(v)
            return
        }
        octet = 255
    }

    /// The period the octet stands for.
    public var duration: Duration { .seconds(Self.minutes(octet) * 60) }

    static func minutes(_ v: UInt8) -> Int64 {
        let v = Int64(v)
        switch v {
        case 0...143: return (v + 1) * 5
        case 144...167: return 12 * 60 + (v - 143) * 30
        case 168...196: return (v - 166) * 24 * 60
        default: return (v - 192) * 7 * 24 * 60
        }
    }
}

/// How an SMS-SUBMIT is built beyond its text and destination.
public struct SMSSubmitOptions: Equatable, Sendable {
    public enum Concatenation: Equatable, Sendable {
        /// Information element 0x08: a 16-bit reference (7-octet header; 152 septets or 66
        /// UCS-2 units per part). What the device sends.
        case reference16
        /// Information element 0x00: an 8-bit reference (6-octet header; 153 / 67 per part).
        case reference8
    }

    public var validity: SMSValidityPeriod?
    /// TP-RD: ask the service centre to reject a duplicate of a message it already holds.
    public var rejectDuplicates: Bool
    /// TP-SRR: ask for a status report.
    public var statusReport: Bool
    public var concatenation: Concatenation

    public init(validity: SMSValidityPeriod? = nil, rejectDuplicates: Bool = false, statusReport: Bool = false,
                concatenation: Concatenation = .reference16) {
        self.validity = validity
        self.rejectDuplicates = rejectDuplicates
        self.statusReport = statusReport
        self.concatenation = concatenation
    }
}

/// One SMS-SUBMIT as written after the modem's `> ` prompt.
public struct SMSSubmitPDU: Equatable, Sendable {
    /// The SMSC field (one octet 00: the service centre stored on the SIM) then the TPDU.
    public let bytes: [UInt8]
    /// The `<length>` of AT+CMGS: the TPDU's octets, without the SMSC field.
    public let tpduLength: Int
    /// 1-based part number and the number of parts.
    public let part: Int
    public let parts: Int

    /// The PDU as the modem takes it: two uppercase hex digits per octet, nothing else.
    public var hex: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(SMSPDU.hexDigits[Int(b >> 4)])
            out.append(SMSPDU.hexDigits[Int(b & 0x0F)])
        }
        return out
    }

    public var hexString: String { String(decoding: hex, as: UTF8.self) }
}

/// SMS-SUBMIT encoding (3GPP TS 23.040 §9.2.2.2): GSM-7 packed septets or UCS-2, concatenated
/// parts with a user data header when the text does not fit in one.
public enum SMSPDU {
    static let hexDigits = Array("0123456789ABCDEF".utf8)

    public enum EncodingError: Error, Equatable, CustomStringConvertible {
        case tooManyParts(Int)
        public var description: String {
            switch self {
            case .tooManyParts(let n): "the message needs \(n) parts; a concatenated message has at most 255"
            }
        }
    }

    /// The PDUs of `text` to `number`, one per part. `reference` identifies the parts of one
    /// message (keep it when a part is sent again); with an 8-bit reference only its low octet is used.
    public static func encode(_ text: String, to number: PhoneNumber, reference: UInt16,
                              options: SMSSubmitOptions = SMSSubmitOptions()) throws(EncodingError) -> [SMSSubmitPDU] {
        let headerLength = options.concatenation == .reference16 ? 7 : 6
        if let septets = GSM7.septets(of: text) {
            let perPart = ((140 - headerLength) * 8) / 7
            let ranges = SMSEncoding.split(gsm7: septets, perPart: perPart)
            if ranges.count > 255 { throw .tooManyParts(ranges.count) }
            return ranges.enumerated().map { i, r in
                let udh = ranges.count > 1 ? header(reference: reference, part: i + 1, of: ranges.count, options.concatenation) : []
                let (ud, udl) = packGSM7(Array(septets[r]), header: udh)
                return submit(to: number, dcs: 0x00, udl: udl, ud: ud, udhi: !udh.isEmpty, options, part: i + 1, of: ranges.count)
            }
        }
        let units = Array(text.utf16)
        let perPart = (140 - headerLength) / 2
        let ranges = SMSEncoding.split(ucs2: units, perPart: perPart)
        if ranges.count > 255 { throw .tooManyParts(ranges.count) }
        return ranges.enumerated().map { i, r in
            var ud = ranges.count > 1 ? header(reference: reference, part: i + 1, of: ranges.count, options.concatenation) : []
            let udhi = !ud.isEmpty
            for u in units[r] { ud.append(UInt8(u >> 8)); ud.append(UInt8(u & 0xFF)) }
            return submit(to: number, dcs: 0x08, udl: ud.count, ud: ud, udhi: udhi, options, part: i + 1, of: ranges.count)
        }
    }

    /// TP-DA: number of digits, type of address (0x91 international with "+", 0x81 unknown
    /// otherwise, so the network applies the local dialling rules), digits as swapped semi-octets.
    public static func address(_ number: PhoneNumber) -> [UInt8] {
        let digits = Array(number.digits.utf8).map { $0 - 0x30 }
        var out: [UInt8] = [UInt8(digits.count), number.isInternational ? 0x91 : 0x81]
        var i = 0
        while i < digits.count {
            let low = digits[i]
            let high: UInt8 = i + 1 < digits.count ? digits[i + 1] : 0x0F
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// The user data header of a concatenated part: UDHL, then IE 0x08 (16-bit reference) or
    /// 0x00 (8-bit reference), then the number of parts and this part's number.
    public static func header(reference: UInt16, part: Int, of parts: Int,
                              _ concatenation: SMSSubmitOptions.Concatenation = .reference16) -> [UInt8] {
        switch concatenation {
        case .reference16:
            [0x06, 0x08, 0x04, UInt8(reference >> 8), UInt8(reference & 0xFF), UInt8(parts), UInt8(part)]
        case .reference8:
            [0x05, 0x00, 0x03, UInt8(reference & 0xFF), UInt8(parts), UInt8(part)]
        }
    }

    /// User data of GSM-7 septets after `header` (which includes its UDHL octet): the header
    /// octets, fill bits up to the next septet boundary, then the septets packed
    /// least-significant bit first (TS 23.040 §9.2.3.24). Returns the user data and TP-UDL in septets.
    public static func packGSM7(_ septets: [UInt8], header: [UInt8] = []) -> (userData: [UInt8], septets: Int) {
        let headerSeptets = (header.count * 8 + 6) / 7
        let total = headerSeptets + septets.count
        var out = [UInt8](repeating: 0, count: (total * 7 + 7) / 8)
        out.replaceSubrange(0..<header.count, with: header)
        for (i, s) in septets.enumerated() {
            let bit = (headerSeptets + i) * 7
            let byte = bit / 8, shift = bit % 8
            out[byte] |= UInt8(truncatingIfNeeded: Int(s & 0x7F) << shift)
            if shift > 1 { out[byte + 1] |= (s & 0x7F) >> (8 - shift) }
        }
        return (out, total)
    }

    private static func submit(to number: PhoneNumber, dcs: UInt8, udl: Int, ud: [UInt8], udhi: Bool,
                               _ options: SMSSubmitOptions, part: Int, of parts: Int) -> SMSSubmitPDU {
        var firstOctet: UInt8 = 0x01  // SMS-SUBMIT
        if options.rejectDuplicates { firstOctet |= 0x04 }
        if options.validity != nil { firstOctet |= 0x10 }  // relative format
        if options.statusReport { firstOctet |= 0x20 }
        if udhi { firstOctet |= 0x40 }
        var b: [UInt8] = [0x00, firstOctet, 0x00]  // SMSC from the SIM; TP-MR chosen by the modem
        b += address(number)
        b += [0x00, dcs]  // TP-PID: plain short message
        if let vp = options.validity { b.append(vp.octet) }
        b.append(UInt8(udl))
        b += ud
        return SMSSubmitPDU(bytes: b, tpduLength: b.count - 1, part: part, parts: parts)
    }
}
