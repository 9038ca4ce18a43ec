import UnwindCore

/// A line the modem sends on its own, recognised at any moment — also between the `> ` prompt
/// and `+CMGS`.
public enum UnsolicitedCode: Equatable, Sendable {
    case ring
    /// +CMTI: a message arrived.
    case newMessage(String)
    /// +CREG / +CGREG / +CEREG in their unsolicited form.
    case registration(RegistrationDomain, RegistrationState)
    /// +CDSI: a status report stored at an index.
    case statusReport(String)
    /// +CDS: <length> and the report's PDU on the next line.
    case statusReportPDU(header: String, pdu: String)
    /// +CMT: [<alpha>],<length> and the message's PDU on the next line (a modem routing
    /// messages directly despite AT+CNMI).
    case messagePDU(header: String, pdu: String)
    /// The modem's message store is full (+QIND: "smsfull", ^SMMEMFULL, +CIEV with SMSFULL).
    case storeFull(String)
    /// ^RSSI and friends.
    case signal(String)
    /// The modem (re)started: RDY, Call Ready, SMS Ready, SMS DONE, PB DONE, START, +QIND: … DONE.
    case boot(String)
    /// UNDER-VOLTAGE …, OVER-VOLTAGE …, … POWER DOWN.
    case power(String)
    /// NO CARRIER / BUSY / NO ANSWER outside a dial: a call ended.
    case callEnded(String)
    /// +CPIN: … outside AT+CPIN? (SIM800 announces READY at boot).
    case simStatus(String)
    /// Anything else a modem announces (+CUSD, +CLIP, ^BOOT, +QIND …): logged only.
    case other(String)

    /// The code `line` is, if it is one.
    public static func classify(_ line: String) -> UnsolicitedCode? {
        switch line {
        case "RING": return .ring
        case "RDY", "Call Ready", "SMS Ready", "SMS DONE", "PB DONE", "START", "+QIND: SMS DONE", "+QIND: PB DONE",
             "+QIND: \"SMS DONE\"", "+QIND: \"PB DONE\"":
            return .boot(line)
        case "NO CARRIER", "BUSY", "NO ANSWER", "NO DIALTONE": return .callEnded(line)
        default: break
        }
        if line.contains("POWER DOWN") || line.hasPrefix("UNDER-VOLTAGE") || line.hasPrefix("OVER-VOLTAGE") {
            return .power(line)
        }
        if line.hasPrefix("+CMTI:") { return .newMessage(line) }
        if line.hasPrefix("+CMT:") { return .other(line) }  // its PDU follows: see ATEngine
        if line.hasPrefix("+CDSI:") || line.hasPrefix("+CDS:") { return .statusReport(line) }
        let upper = line.uppercased()
        if upper.hasPrefix("^SMMEMFULL") || (upper.hasPrefix("+QIND:") && upper.contains("SMSFULL"))
            || (upper.hasPrefix("+CIEV:") && upper.contains("SMSFULL")) {
            return .storeFull(line)
        }
        if line.hasPrefix("^RSSI:") || line.hasPrefix("^HCSQ:") || line.hasPrefix("+CIEV:") { return .signal(line) }
        if line.hasPrefix("+CPIN:") { return .simStatus(line) }
        for d in RegistrationDomain.allCases where line.hasPrefix("+\(d.rawValue):") {
            if let s = RegistrationState.parseUnsolicited(String(line.dropFirst(d.rawValue.count + 2))) {
                return .registration(d, s)
            }
            return .other(line)
        }
        if line.hasPrefix("^") || line.hasPrefix("+CUSD:") || line.hasPrefix("+CLIP:") || line.hasPrefix("+CRING:")
            || line.hasPrefix("+QIND:") || line.hasPrefix("+CFUN:") || line.hasPrefix("+CGEV:") || line.hasPrefix("+CTZV:")
            || line.hasPrefix("*PSUTTZ") || line.hasPrefix("DST:") || line.hasPrefix("+CBM:") {
            return .other(line)
        }
        return nil
    }
}
