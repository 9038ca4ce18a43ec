/// What the panic path hears back after the network took the alerts: replies, whether alerts
/// could go out now, and the outcome of the follow-up messages. The modem's side (UnwindModem)
/// produces these; the core decides what the person sees and feels.

/// Why a message goes out: the person's PANIC, a missed check-in, "I'm OK now", the monthly test.
public enum AlertPurpose: String, Equatable, Hashable, Sendable, CaseIterable {
    case panic
    case checkIn = "check-in"
    case allClear = "all-clear"
    case test
}

/// An SMS received by the device, already on the SD card (the modem deletes it from the SIM only
/// after that). `id` is stable across restarts: the person's "dismiss" is remembered by it.
public struct IncomingReply: Equatable, Hashable, Sendable {
    public var id: String
    /// The sender as the network gave it: digits with or without a leading "+", or the name of
    /// an alphanumeric sender (`fromName`).
    public var from: String
    public var text: String
    /// The service centre's time stamp, when it could be read.
    public var sent: WallTime?
    /// The sender is a name (type of address alphanumeric, 0xD0), not a number: whatever it
    /// spells — a contact's number too, which anyone can set at a bulk-SMS gateway — it never
    /// matches a contact.
    public var fromName: Bool

    public init(id: String, from: String, text: String, sent: WallTime? = nil, fromName: Bool = false) {
        self.id = id
        self.from = from
        self.text = text
        self.sent = sent
        self.fromName = fromName
    }
}

/// Could a PANIC go out right now? Each problem is one the person or the maintainer can act on.
public struct AlertReadiness: Equatable, Sendable {
    public enum Problem: Equatable, Sendable, CustomStringConvertible {
        /// No modem configured (a simulation without one, or `modem.serial` unset).
        case noModem
        /// The modem does not answer `AT` (unplugged, powered off, a wrong port).
        case modemSilent
        /// The SIM is missing, locked or failing (the modem's words).
        case sim(String)
        /// Not registered on a network (searching, denied, unknown).
        case notRegistered
        /// Registered, but the signal is below the floor (`+CSQ` rssi 0…31, 99 unknown).
        case weakSignal(Int)
        /// No service centre number on the SIM and none configured.
        case noServiceCentre
        /// The SIM (or the configuration) has a service centre number, and the network refuses
        /// it (`+CMS ERROR: 330` on every submit): a wrong number, not a missing one.
        case serviceCentreRefused

        public var description: String {
            switch self {
            case .noModem: "no modem configured"
            case .modemSilent: "the modem does not answer"
            case .sim(let why): "SIM: \(why)"
            case .notRegistered: "not registered on a network"
            case .weakSignal(let rssi): "signal too weak (\(rssi == 99 ? "unknown" : "rssi \(rssi)"))"
            case .noServiceCentre: "no message centre number"
            case .serviceCentreRefused: "the network refuses the message centre number"
            }
        }
    }

    public var problems: [Problem]
    public var isReady: Bool { problems.isEmpty }

    public init(problems: [Problem] = []) { self.problems = problems }
    public static let ready = AlertReadiness()
}
