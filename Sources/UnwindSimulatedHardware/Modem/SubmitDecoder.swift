import UnwindCore

/// An SMS-SUBMIT as the simulated network reads it: decoded from the PDU bytes on its own
/// terms (TS 23.040), not by calling the device's encoder, so a test compares two independent
/// readings of the same bytes.
public struct DecodedSubmit: Equatable, Sendable {
    /// "+digits" for type of address 0x91, the digits alone otherwise.
    public var number: String
    public var typeOfAddress: UInt8
    public var firstOctet: UInt8
    public var dataCoding: UInt8
    public var validity: UInt8?
    /// Concatenation: reference, number of parts, this part (1-based), and whether the reference is 16-bit.
    public var concatenation: (reference: Int, parts: Int, part: Int, wide: Bool)?
    public var text: String
    /// TP-UDL as sent.
    public var userDataLength: Int

    public static func == (a: DecodedSubmit, b: DecodedSubmit) -> Bool {
        a.number == b.number && a.typeOfAddress == b.typeOfAddress && a.firstOctet == b.firstOctet
            && a.dataCoding == b.dataCoding && a.validity == b.validity && a.text == b.text
            && a.userDataLength == b.userDataLength
            && a.concatenation?.reference == b.concatenation?.reference && a.concatenation?.parts == b.concatenation?.parts
            && a.concatenation?.part == b.concatenation?.part && a.concatenation?.wide == b.concatenation?.wide
    }

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notHex
        case truncated(String)
        case lengthMismatch(announced: Int, actual: Int)
        case notSubmit(UInt8)
        case unsupportedCoding(UInt8)
        case userDataLength(String)

        public var description: String {
            switch self {
            case .notHex: "not an even number of hex digits"
            case .truncated(let what): "ends inside \(what)"
            case .lengthMismatch(let a, let b): "AT+CMGS said \(a) octets but the TPDU has \(b)"
            case .notSubmit(let fo): "first octet \(fo) is not an SMS-SUBMIT"
            case .unsupportedCoding(let d): "data coding scheme \(d) is neither GSM-7 nor UCS-2"
            case .userDataLength(let why): "user data length: \(why)"
            }
        }
    }

    /// Reads hex digits typed into the prompt; `announced` is the length given to AT+CMGS.
    public static func decode(hex: [UInt8], announced: Int?) throws(Problem) -> DecodedSubmit {
        guard hex.count % 2 == 0 else { throw .notHex }
        var bytes: [UInt8] = []
        var i = 0
        while i < hex.count {
            guard let h = nibble(hex[i]), let l = nibble(hex[i + 1]) else { throw .notHex }
            bytes.append(h << 4 | l)
            i += 2
        }
        return try decode(bytes, announced: announced)
    }

    public static func decode(_ b: [UInt8], announced: Int?) throws(Problem) -> DecodedSubmit {
        var i = 0
        func take(_ n: Int, _ what: String) throws(Problem) -> ArraySlice<UInt8> {
            guard n >= 0, i + n <= b.count else { throw .truncated(what) }
            defer { i += n }
            return b[i..<i + n]
        }
        let smscLength = Int(try take(1, "SMSC length").first!)
        _ = try take(smscLength, "SMSC")
        if let announced, announced != b.count - i { throw .lengthMismatch(announced: announced, actual: b.count - i) }
        let fo = try take(1, "first octet").first!
        guard fo & 0x03 == 0x01 else { throw .notSubmit(fo) }
        _ = try take(1, "message reference")
        let digits = Int(try take(1, "address length").first!)
        let toa = try take(1, "type of address").first!
        var number = toa == 0x91 ? "+" : ""
        for (k, octet) in try take((digits + 1) / 2, "address").enumerated() {
            number += String(octet & 0x0F)
            if 2 * k + 1 < digits { number += String(octet >> 4) }
        }
        _ = try take(1, "protocol identifier")
        let dcs = try take(1, "data coding").first!
        var validity: UInt8?
        switch (fo >> 3) & 0x03 {
        case 0x02: validity = try take(1, "validity").first!
        case 0x01, 0x03: _ = try take(7, "validity")
        default: break
        }
        let udl = Int(try take(1, "user data length").first!)
        let ud = Array(b[i...])
        let hasHeader = fo & 0x40 != 0
        var concat: (Int, Int, Int, Bool)?
        var headerOctets = 0
        if hasHeader {
            guard let udhl = ud.first, Int(udhl) + 1 <= ud.count else { throw .truncated("user data header") }
            headerOctets = Int(udhl) + 1
            var j = 1
            while j + 1 < headerOctets {
                let iei = ud[j], len = Int(ud[j + 1])
                guard j + 2 + len <= headerOctets else { throw .truncated("information element") }
                let data = Array(ud[(j + 2)..<(j + 2 + len)])
                if iei == 0x00, len == 3 { concat = (Int(data[0]), Int(data[1]), Int(data[2]), false) }
                if iei == 0x08, len == 4 { concat = (Int(data[0]) << 8 | Int(data[1]), Int(data[2]), Int(data[3]), true) }
                j += 2 + len
            }
        }
        let text: String
        switch dcs & 0x0C {
        case 0x00:
            guard ud.count == (udl * 7 + 7) / 8 else {
                throw .userDataLength("\(udl) septets need \((udl * 7 + 7) / 8) octets, got \(ud.count)")
            }
            let skip = (headerOctets * 8 + 6) / 7
            var septets: [UInt8] = []
            for s in skip..<max(skip, udl) {
                let bit = s * 7
                var v = Int(ud[bit / 8]) >> (bit % 8)
                if bit % 8 > 1 { v |= Int(ud[bit / 8 + 1]) << (8 - bit % 8) }
                septets.append(UInt8(v & 0x7F))
            }
            text = GSM7.decode(septets)
        case 0x08:
            guard ud.count == udl, (udl - headerOctets) % 2 == 0 else {
                throw .userDataLength("\(udl) octets of UCS-2, got \(ud.count)")
            }
            var units: [UInt16] = []
            var j = headerOctets
            while j + 1 < ud.count {
                units.append(UInt16(ud[j]) << 8 | UInt16(ud[j + 1]))
                j += 2
            }
            text = String(decoding: units, as: UTF16.self)
        default:
            throw .unsupportedCoding(dcs)
        }
        return DecodedSubmit(number: number, typeOfAddress: toa, firstOctet: fo, dataCoding: dcs, validity: validity,
                             concatenation: concat.map { (reference: $0.0, parts: $0.1, part: $0.2, wide: $0.3) },
                             text: text, userDataLength: udl)
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
