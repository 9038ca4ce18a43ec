import UnwindCore

/// An address as the network gave it (TP-OA, TP-RA): digits with a leading "+" for an
/// international number, the digits alone otherwise, or the text of an alphanumeric sender.
public struct SMSAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Hashable, Sendable { case international, national, unknown, alphanumeric, other }
    public var kind: Kind
    /// "+15550100001", "7787824615", "Operator" — never a control character.
    public var text: String

    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }

    public var description: String { text }

    /// The digits alone ("" for an alphanumeric sender).
    public var digits: String { kind == .alphanumeric ? "" : String(text.unicodeScalars.filter { ("0"..."9").contains($0) }) }

    /// Whether this is the same subscriber as `number`, in any form the network gives it — the
    /// core's one rule (`PhoneNumber.isSameNumber(asSender:)`). A status report is matched on this
    /// *and* the message reference.
    public func sameSubscriber(as number: PhoneNumber) -> Bool {
        kind != .alphanumeric && number.isSameNumber(asSender: text)
    }
}

/// The concatenation element of a user data header (IE 0x00 or 0x08).
public struct SMSConcatenation: Equatable, Hashable, Sendable {
    public var reference: Int
    public var parts: Int
    public var part: Int
    public var wide: Bool
}

/// How the text of a message was coded (TS 23.038 §4).
public enum ReceivedAlphabet: String, Equatable, Sendable {
    case gsm7
    case ucs2
    /// 8-bit data (or compressed, or an unknown alphabet): never guessed at as text.
    case data
}

/// An SMS-DELIVER (TS 23.040 §9.2.2.1): a message someone sent to the device.
public struct SMSDeliver: Equatable, Sendable {
    public var sender: SMSAddress
    /// TP-SCTS, when it is a real time.
    public var serviceCentreTime: WallTime?
    public var alphabet: ReceivedAlphabet
    public var concatenation: SMSConcatenation?
    /// The user data after the header: septets one a byte (GSM-7) or octets (UCS-2, data), so
    /// the parts of a long message are joined before they are read (a character may straddle them).
    public var payload: [UInt8]

    /// FNV-1a of the whole TPDU: the same message read twice has the same one.
    public var fingerprint: UInt64 = 0

    /// The text of this message on its own.
    public var text: String { SMSText.decode(payload, alphabet) }
}

/// An SMS-STATUS-REPORT (TS 23.040 §9.2.2.3): what became of a message the device sent.
public struct SMSStatusReport: Equatable, Sendable {
    /// TP-MR of the SMS-SUBMIT it reports on (the `+CMGS: <mr>`).
    public var messageReference: Int
    /// TP-RA: the recipient of that message.
    public var recipient: SMSAddress
    /// TP-ST.
    public var status: UInt8

    public init(messageReference: Int, recipient: SMSAddress, status: UInt8) {
        self.messageReference = messageReference
        self.recipient = recipient
        self.status = status
    }
}

/// A TPDU read from the modem (+CMGR, +CMGL, +CMT, +CDS).
public enum IncomingTPDU: Equatable, Sendable {
    case deliver(SMSDeliver)
    case statusReport(SMSStatusReport)
}

/// Why a PDU from the modem could not be read. It is outside input: every one of these is an
/// answer, never a trap.
public enum IncomingPDUProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case notHex
    case truncated(String)
    case lengthMismatch(announced: Int, actual: Int)
    /// SMS-SUBMIT (a stored outgoing message) or a reserved type: not for the device to read.
    case notForUs(UInt8)
    case malformed(String)

    public var description: String {
        switch self {
        case .notHex: "not an even number of hex digits"
        case .truncated(let what): "ends inside \(what)"
        case .lengthMismatch(let a, let b): "the modem announced \(a) octets, the PDU has \(b)"
        case .notForUs(let fo): "message type \(fo & 0x03) is neither a received message nor a status report"
        case .malformed(let why): why
        }
    }
}

/// Decoding what the modem read from the network or its store. Bounds are checked on every
/// octet; the text is never trusted to be well formed.
public enum IncomingPDU {
    /// The longest PDU a modem gives: SMSC (12) + the largest TPDU (176), with room to spare.
    static let maximumOctets = 200

    /// A PDU as the modem writes it after +CMGR / +CMGL / +CMT / +CDS: the SMSC field first
    /// (unless `withSMSC` is false), then the TPDU of `announced` octets when the modem said.
    public static func decode(hex text: String, announced: Int?, withSMSC: Bool = true) throws(IncomingPDUProblem) -> IncomingTPDU {
        let bytes = try octets(hex: text)
        var i = 0
        if withSMSC {
            guard let n = bytes.first else { throw .truncated("the service centre address") }
            i = 1 + Int(n)
            guard n <= 11, i <= bytes.count else { throw .truncated("the service centre address") }
        }
        let tpdu = Array(bytes[i...])
        if let announced, announced != tpdu.count {
            // Some modems count the SMSC too; a count that fits neither reading is refused.
            if !(withSMSC && announced == bytes.count) { throw .lengthMismatch(announced: announced, actual: tpdu.count) }
        }
        return try decode(tpdu: tpdu)
    }

    static func octets(hex text: String) throws(IncomingPDUProblem) -> [UInt8] {
        let h = Array(text.utf8)
        guard h.count % 2 == 0, h.count <= 2 * maximumOctets else {
            throw h.count % 2 == 0 ? .malformed("longer than any SMS (\(h.count / 2) octets)") : .notHex
        }
        var out: [UInt8] = []
        out.reserveCapacity(h.count / 2)
        var k = 0
        while k + 1 < h.count {
            guard let a = nibble(h[k]), let b = nibble(h[k + 1]) else { throw .notHex }
            out.append(a << 4 | b)
            k += 2
        }
        return out
    }

    public static func decode(tpdu b: [UInt8]) throws(IncomingPDUProblem) -> IncomingTPDU {
        var r = Reader(bytes: b)
        let fo = try r.octet("the first octet")
        switch fo & 0x03 {
        case 0x00:
            var d = try deliver(fo, &r)
            d.fingerprint = Inbox.fnv(b)
            return .deliver(d)
        case 0x02: return .statusReport(try statusReport(&r))
        default: throw .notForUs(fo)
        }
    }

    private static func deliver(_ fo: UInt8, _ r: inout Reader) throws(IncomingPDUProblem) -> SMSDeliver {
        let sender = try address(&r, "the sender's address")
        _ = try r.octet("the protocol identifier")
        let dcs = try r.octet("the data coding scheme")
        let scts = try r.take(7, "the service centre time stamp")
        let udl = Int(try r.octet("the user data length"))
        let alphabet = Self.alphabet(dcs)
        let ud = r.rest
        let hasHeader = fo & 0x40 != 0
        var headerOctets = 0
        var concatenation: SMSConcatenation?
        if hasHeader {
            guard let udhl = ud.first else { throw .truncated("the user data header") }
            headerOctets = Int(udhl) + 1
            guard headerOctets <= ud.count else { throw .truncated("the user data header") }
            concatenation = try Self.concatenation(Array(ud[1..<headerOctets]))
        }
        var payload: [UInt8]
        switch alphabet {
        case .gsm7:
            guard udl <= 160 else { throw .malformed("\(udl) septets; a message holds at most 160") }
            let needed = (udl * 7 + 7) / 8
            guard ud.count >= needed else { throw .truncated("the user data (\(udl) septets need \(needed) octets, \(ud.count) came)") }
            let skip = (headerOctets * 8 + 6) / 7
            guard skip <= udl else { throw .malformed("the header is longer than the user data") }
            payload = []
            payload.reserveCapacity(udl - skip)
            for s in skip..<udl {
                let bit = s * 7, byte = bit / 8, shift = bit % 8
                var v = Int(ud[byte]) >> shift
                if shift > 1, byte + 1 < ud.count { v |= Int(ud[byte + 1]) << (8 - shift) }
                payload.append(UInt8(v & 0x7F))
            }
        case .ucs2, .data:
            guard udl <= 140 else { throw .malformed("\(udl) octets; a message holds at most 140") }
            guard ud.count >= udl else { throw .truncated("the user data (\(udl) octets announced, \(ud.count) came)") }
            guard headerOctets <= udl else { throw .malformed("the header is longer than the user data") }
            payload = Array(ud[headerOctets..<udl])
        }
        return SMSDeliver(sender: sender, serviceCentreTime: timestamp(Array(scts)), alphabet: alphabet,
                          concatenation: concatenation, payload: payload)
    }

    private static func statusReport(_ r: inout Reader) throws(IncomingPDUProblem) -> SMSStatusReport {
        let mr = try r.octet("the message reference")
        let recipient = try address(&r, "the recipient's address")
        _ = try r.take(7, "the service centre time stamp")
        _ = try r.take(7, "the discharge time")
        let st = try r.octet("the status")
        return SMSStatusReport(messageReference: Int(mr), recipient: recipient, status: st)
    }

    /// TS 23.040 §9.1.2.5: the length in semi-octets, the type of address, the digits swapped
    /// (or, for type 101, GSM-7 septets packed into the semi-octets).
    private static func address(_ r: inout Reader, _ what: String) throws(IncomingPDUProblem) -> SMSAddress {
        let length = Int(try r.octet(what))
        guard length <= 20 else { throw .malformed("\(what) claims \(length) digits; an address has at most 20") }
        let toa = try r.octet(what)
        let value = Array(try r.take((length + 1) / 2, what))
        switch (toa >> 4) & 0x07 {
        case 0x05:
            let septets = unpack(value, count: length * 4 / 7)
            let text = String(String.UnicodeScalarView(GSM7.decode(septets).unicodeScalars.filter { !isControl($0) }))
            return SMSAddress(kind: .alphanumeric, text: text)
        case let type:
            var digits = ""
            for (k, octet) in value.enumerated() {
                for (j, nib) in [octet & 0x0F, octet >> 4].enumerated() where 2 * k + j < length && nib != 0x0F {
                    digits += nib <= 9 ? String(nib) : ["*", "#", "a", "b", "c"][Int(nib) - 10]
                }
            }
            switch type {
            case 0x01: return SMSAddress(kind: .international, text: "+" + digits)
            case 0x02: return SMSAddress(kind: .national, text: digits)
            case 0x00: return SMSAddress(kind: .unknown, text: digits)
            default: return SMSAddress(kind: .other, text: digits)
            }
        }
    }

    /// TS 23.038 §4: the alphabet from the data coding scheme.
    static func alphabet(_ dcs: UInt8) -> ReceivedAlphabet {
        switch dcs >> 4 {
        case 0x0...0x7:
            if dcs & 0x20 != 0 { return .data }  // compressed
            switch (dcs >> 2) & 0x03 {
            case 0x00, 0x03: return .gsm7  // 11 is reserved: read as the default alphabet
            case 0x01: return .data
            default: return .ucs2
            }
        case 0xE: return .ucs2
        case 0xF: return dcs & 0x04 == 0 ? .gsm7 : .data
        default: return .gsm7  // message waiting groups (C, D) and the reserved ones
        }
    }

    /// The concatenation element, if the header holds a valid one. A header that is not a
    /// chain of complete elements is refused; an element with impossible values is ignored
    /// (TS 23.040 §9.2.3.24.1: the parts are then shown on their own).
    static func concatenation(_ h: [UInt8]) throws(IncomingPDUProblem) -> SMSConcatenation? {
        var j = 0
        var found: SMSConcatenation?
        while j < h.count {
            guard j + 1 < h.count else { throw .malformed("the user data header ends inside an element") }
            let iei = h[j], len = Int(h[j + 1])
            guard j + 2 + len <= h.count else { throw .malformed("an element of the user data header overruns it") }
            let d = h[(j + 2)..<(j + 2 + len)].map { Int($0) }
            if iei == 0x00, len == 3, d[1] >= 1, (1...d[1]).contains(d[2]) {
                found = SMSConcatenation(reference: d[0], parts: d[1], part: d[2], wide: false)
            } else if iei == 0x08, len == 4, d[2] >= 1, (1...d[2]).contains(d[3]) {
                found = SMSConcatenation(reference: d[0] << 8 | d[1], parts: d[2], part: d[3], wide: true)
            }
            j += 2 + len
        }
        return found.flatMap { $0.parts > 1 ? $0 : nil }
    }

    /// TP-SCTS (TS 23.040 §9.2.3.11): swapped decimal digits and the zone in quarter hours.
    /// Impossible values read as no time at all.
    static func timestamp(_ s: [UInt8]) -> WallTime? {
        guard s.count == 7 else { return nil }
        func field(_ o: UInt8) -> Int? {
            let tens = Int(o & 0x0F), units = Int(o >> 4)
            return tens <= 9 && units <= 9 ? tens * 10 + units : nil
        }
        guard let yy = field(s[0]), let mo = field(s[1]), let dd = field(s[2]), let hh = field(s[3]),
              let mi = field(s[4]), let ss = field(s[5]),
              (1...12).contains(mo), (1...31).contains(dd), hh < 24, mi < 60, ss < 60 else { return nil }
        let zoneTens = Int(s[6] & 0x07), zoneUnits = Int(s[6] >> 4)
        guard zoneUnits <= 9 else { return nil }
        let quarters = (zoneTens * 10 + zoneUnits) * (s[6] & 0x08 != 0 ? -1 : 1)
        let days = CivilDate.day(year: Int64(yy < 70 ? 2000 + yy : 1900 + yy), month: Int64(mo), day: Int64(dd))  // two digits: 1970–2069
        let local = days * 86400 + Int64(hh * 3600 + mi * 60 + ss)
        return WallTime(secondsSinceEpoch: local - Int64(quarters) * 900)
    }

    static func unpack(_ bytes: [UInt8], count: Int) -> [UInt8] {
        var out: [UInt8] = []
        for s in 0..<count {
            let bit = s * 7, byte = bit / 8, shift = bit % 8
            guard byte < bytes.count else { break }
            var v = Int(bytes[byte]) >> shift
            if shift > 1, byte + 1 < bytes.count { v |= Int(bytes[byte + 1]) << (8 - shift) }
            out.append(UInt8(v & 0x7F))
        }
        return out
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F..<0xA0).contains(s.value) }

    /// Reads octets with a bound check each, naming what was cut short.
    struct Reader {
        let bytes: [UInt8]
        var i = 0
        mutating func octet(_ what: String) throws(IncomingPDUProblem) -> UInt8 {
            guard i < bytes.count else { throw .truncated(what) }
            defer { i += 1 }
            return bytes[i]
        }
        mutating func take(_ n: Int, _ what: String) throws(IncomingPDUProblem) -> ArraySlice<UInt8> {
            guard n >= 0, i + n <= bytes.count else { throw .truncated(what) }
            defer { i += n }
            return bytes[i..<(i + n)]
        }
        var rest: [UInt8] { i < bytes.count ? Array(bytes[i...]) : [] }
    }
}

/// The text of a received message's payload (one part, or the parts joined).
public enum SMSText {
    public static func decode(_ payload: [UInt8], _ alphabet: ReceivedAlphabet) -> String {
        let raw: String
        switch alphabet {
        case .gsm7:
            raw = GSM7.decode(payload)
        case .ucs2:
            var units: [UInt16] = []
            units.reserveCapacity(payload.count / 2)
            var j = 0
            while j + 1 < payload.count {
                units.append(UInt16(payload[j]) << 8 | UInt16(payload[j + 1]))
                j += 2
            }
            // A lone surrogate or an odd last octet reads as U+FFFD, never as a trap.
            raw = String(decoding: units, as: UTF16.self) + (payload.count % 2 == 1 ? "\u{FFFD}" : "")
        case .data:
            let shown = payload.prefix(32).map { b in
                let d = Array("0123456789ABCDEF")
                return String([d[Int(b >> 4)], d[Int(b & 0x0F)]])
            }.joined()
            return "(data message, \(payload.count) octets: \(shown)\(payload.count > 32 ? "…" : ""))"
        }
        return clean(raw)
    }

    /// Line breaks kept as "\n" (CR LF and CR alone too); every other control character becomes a
    /// space. The text is the sender's: nothing in it may act on a screen or a terminal.
    public static func clean(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        var lastCR = false
        for u in s.unicodeScalars {
            if u == "\r" {
                out.append("\n")
                lastCR = true
                continue
            }
            if u == "\n" {
                if !lastCR { out.append("\n") }
            } else if IncomingPDU.isControl(u) {
                out.append(" ")
            } else {
                out.append(u)
            }
            lastCR = false
        }
        return String(out)
    }
}
