import UnwindCore

/// The registration domains a modem reports: circuit-switched (+CREG), packet (+CGREG) and
/// LTE/EPS (+CEREG).
public enum RegistrationDomain: String, Sendable, CaseIterable {
    case cs = "CREG"
    case ps = "CGREG"
    case eps = "CEREG"
}

/// `<stat>` of +CREG / +CGREG / +CEREG (3GPP TS 27.007 §7.2, §10.1.19, §10.1.22).
public enum RegistrationState: Equatable, Sendable, CustomStringConvertible {
    case notRegistered
    case home
    case searching
    case denied
    case unknown
    case roaming
    /// LTE "SMS only" registration (6 home, 7 roaming): text messages work.
    case smsOnly(roaming: Bool)
    case emergencyOnly
    /// Registered for "CSFB not preferred" (9 home, 10 roaming).
    case csfbNotPreferred(roaming: Bool)
    case other(Int)

    public init(stat: Int) {
        switch stat {
        case 0: self = .notRegistered
        case 1: self = .home
        case 2: self = .searching
        case 3: self = .denied
        case 4: self = .unknown
        case 5: self = .roaming
        case 6: self = .smsOnly(roaming: false)
        case 7: self = .smsOnly(roaming: true)
        case 8: self = .emergencyOnly
        case 9: self = .csfbNotPreferred(roaming: false)
        case 10: self = .csfbNotPreferred(roaming: true)
        default: self = .other(stat)
        }
    }

    /// Whether a text message can go out.
    public var isRegistered: Bool {
        switch self {
        case .home, .roaming, .smsOnly, .csfbNotPreferred: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .notRegistered: "not registered"
        case .home: "registered (home)"
        case .searching: "searching"
        case .denied: "registration denied"
        case .unknown: "unknown"
        case .roaming: "registered (roaming)"
        case .smsOnly(let r): "registered for SMS only" + (r ? " (roaming)" : " (home)")
        case .emergencyOnly: "emergency calls only"
        case .csfbNotPreferred(let r): "registered" + (r ? " (roaming)" : " (home)")
        case .other(let n): "state \(n)"
        }
    }

    /// The answer to AT+CxREG?: `<n>,<stat>[,<lac>,<ci>[,<AcT>…]]`. Real modems also give a bare
    /// `<stat>`, unquoted or extra fields; nil when no state can be read.
    public static func parseQuery(_ fields: String) -> RegistrationState? {
        let f = splitFields(fields)
        guard let first = f.first, let a = Int(first) else { return nil }
        if f.count == 1 { return RegistrationState(stat: a) }
        // <n>,<stat>,…: the second field is the state. A second field that is a quoted or
        // 4-hex-digit area code means the modem gave the unsolicited form instead.
        if let b = Int(f[1]), f[1].count <= 2, !f[1].hasPrefix("\"") { return RegistrationState(stat: b) }
        return RegistrationState(stat: a)
    }

    /// The unsolicited form: `<stat>[,<lac>,<ci>[,<AcT>]]`. nil when the fields look like the
    /// query's `<n>,<stat>` (ambiguous: not used).
    static func parseUnsolicited(_ fields: String) -> RegistrationState? {
        let f = splitFields(fields)
        guard let first = f.first, let a = Int(first) else { return nil }
        if f.count == 1 { return RegistrationState(stat: a) }
        if f[1].hasPrefix("\"") || f[1].count >= 4 { return RegistrationState(stat: a) }
        return nil
    }
}
