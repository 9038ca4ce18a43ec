import Glibc
import UnwindCore

/// What the simulated network sends the device: SMS-DELIVER and SMS-STATUS-REPORT PDUs, built
/// here on their own terms (TS 23.040) and not by the device's code, so a test compares two
/// independent readings of the same bytes. Every PDU starts with the SMSC field, as AT+CMGR,
/// AT+CMGL and +CDS give them.
public enum DeliverEncoder {
    /// The network's service centre.
    static let smsc: [UInt8] = [0x07, 0x91, 0x51, 0x55, 0x00, 0x90, 0x99, 0xF9]  // +15550009999

    /// The PDUs of `text` from `from` ("+digits" international, digits national/unknown, anything
    /// else an alphanumeric sender): GSM-7 when every character has a septet, UCS-2 otherwise;
    /// a text that does not fit one message goes in parts with an 8-bit (or `wide`: 16-bit)
    /// reference. UCS-2 is cut by code units: a surrogate pair may straddle two parts, as some
    /// phones send it.
    public static func encode(from: String, text: String, reference: Int, wide: Bool = false, time: Int64) -> [[UInt8]] {
        let header = wide ? 7 : 6
        let oa = address(from)
        let stamp = timestamp(time)
        if let septets = GSM7.septets(of: text) {
            if septets.count <= 160 {
                return [pdu(oa, dcs: 0x00, stamp: stamp, udh: nil, septets: septets)]
            }
            let per = (140 - header) * 8 / 7
            var chunks: [[UInt8]] = []
            var i = 0
            while i < septets.count {
                var end = min(i + per, septets.count)
                if end < septets.count, septets[end - 1] == GSM7.escape { end -= 1 }  // never cut an escape from its character
                chunks.append(Array(septets[i..<end]))
                i = end
            }
            return chunks.enumerated().map { k, c in
                pdu(oa, dcs: 0x00, stamp: stamp, udh: concatenation(reference, k + 1, chunks.count, wide), septets: c)
            }
        }
        let units = Array(text.utf16)
        if units.count <= 70 { return [pdu(oa, dcs: 0x08, stamp: stamp, udh: nil, ucs2: units)] }
        let per = (140 - header) / 2
        let chunks = stride(from: 0, to: units.count, by: per).map { Array(units[$0..<min($0 + per, units.count)]) }
        return chunks.enumerated().map { k, c in
            pdu(oa, dcs: 0x08, stamp: stamp, udh: concatenation(reference, k + 1, chunks.count, wide), ucs2: c)
        }
    }

    static func concatenation(_ reference: Int, _ part: Int, _ parts: Int, _ wide: Bool) -> [UInt8] {
        wide ? [0x06, 0x08, 0x04, UInt8(reference >> 8 & 0xFF), UInt8(reference & 0xFF), UInt8(parts), UInt8(part)]
            : [0x05, 0x00, 0x03, UInt8(reference & 0xFF), UInt8(parts), UInt8(part)]
    }

    static func pdu(_ oa: [UInt8], dcs: UInt8, stamp: [UInt8], udh: [UInt8]?, septets: [UInt8]) -> [UInt8] {
        let h = udh ?? []
        let fill = h.isEmpty ? 0 : (7 - (h.count * 8) % 7) % 7
        let headerSeptets = (h.count * 8 + fill) / 7
        var ud = h
        var bits = 0, acc = 0
        if fill > 0 { bits = fill }  // the fill bits are zeros, low first
        for s in septets {
            acc |= Int(s & 0x7F) << bits
            bits += 7
            while bits >= 8 {
                ud.append(UInt8(acc & 0xFF))
                acc >>= 8
                bits -= 8
            }
        }
        if bits > 0 { ud.append(UInt8(acc & 0xFF)) }
        let fo: UInt8 = 0x04 | (h.isEmpty ? 0 : 0x40)
        return deliver(fo: fo, oa: oa, dcs: dcs, stamp: stamp, udl: UInt8(headerSeptets + septets.count), ud: ud)
    }

    static func pdu(_ oa: [UInt8], dcs: UInt8, stamp: [UInt8], udh: [UInt8]?, ucs2: [UInt16]) -> [UInt8] {
        var ud = udh ?? []
        for u in ucs2 { ud += [UInt8(u >> 8), UInt8(u & 0xFF)] }
        let fo: UInt8 = 0x04 | (udh == nil ? 0 : 0x40)
        return deliver(fo: fo, oa: oa, dcs: dcs, stamp: stamp, udl: UInt8(ud.count), ud: ud)
    }

    // Appended one field at a time: one long `+` chain of array literals takes Debian's
    // Swift 6.2.3 (an assertions build) past its type-checking time limit.
    private static func deliver(fo: UInt8, oa: [UInt8], dcs: UInt8, stamp: [UInt8], udl: UInt8, ud: [UInt8]) -> [UInt8] {
        var pdu: [UInt8] = smsc
        pdu.append(fo)
        pdu.append(contentsOf: oa)
        pdu.append(0x00)
        pdu.append(dcs)
        pdu.append(contentsOf: stamp)
        pdu.append(udl)
        pdu.append(contentsOf: ud)
        return pdu
    }

    /// TP-OA / TP-RA: "+digits" (0x91), digits (0x81), or an alphanumeric name (0xD0).
    public static func address(_ s: String) -> [UInt8] {
        let digits = s.hasPrefix("+") ? String(s.dropFirst()) : s
        if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
            let type: UInt8 = s.hasPrefix("+") ? 0x91 : 0x81
            return [UInt8(digits.count), type] + semiOctets(digits)
        }
        let septets = GSM7.septets(of: String(s.prefix(11))) ?? []
        var packed: [UInt8] = []
        var bits = 0, acc = 0
        for sp in septets {
            acc |= Int(sp) << bits
            bits += 7
            while bits >= 8 { packed.append(UInt8(acc & 0xFF)); acc >>= 8; bits -= 8 }
        }
        if bits > 0 { packed.append(UInt8(acc & 0xFF)) }
        return [UInt8((septets.count * 7 + 3) / 4), 0xD0] + packed
    }

    static func semiOctets(_ digits: String) -> [UInt8] {
        let d: [UInt8] = digits.compactMap { $0.wholeNumberValue.map(UInt8.init) }
        var octets: [UInt8] = []
        for i in stride(from: 0, to: d.count, by: 2) {
            let high: UInt8 = i + 1 < d.count ? d[i + 1] : 0x0F
            octets.append(high << 4 | d[i])
        }
        return octets
    }

    /// TP-SCTS for `time` (UTC, zone +00).
    public static func timestamp(_ time: Int64) -> [UInt8] {
        // glibc's calendar, not the core's `CivilDate`: the device's reading meets an independent one.
        var t = time_t(time)
        var c = tm()
        _ = gmtime_r(&t, &c)
        func swapped(_ v: Int32) -> UInt8 { UInt8((v % 10) << 4 | (v / 10 % 10)) }
        return [swapped((c.tm_year + 1900) % 100), swapped(c.tm_mon + 1), swapped(c.tm_mday), swapped(c.tm_hour), swapped(c.tm_min),
                swapped(c.tm_sec), 0x00]
    }

    /// An SMS-STATUS-REPORT for a message the device sent.
    static func statusReport(_ r: ScheduledReport, time: Int64) -> [UInt8] {
        let digits = r.number.hasPrefix("+") ? String(r.number.dropFirst()) : r.number
        var report: [UInt8] = smsc
        report.append(0x06)
        report.append(UInt8(r.reference & 0xFF))
        report.append(UInt8(digits.count))
        report.append(r.typeOfAddress)
        report.append(contentsOf: semiOctets(digits))
        let stamp = timestamp(time)
        report.append(contentsOf: stamp)
        report.append(contentsOf: stamp)
        report.append(r.status)
        return report
    }
}
