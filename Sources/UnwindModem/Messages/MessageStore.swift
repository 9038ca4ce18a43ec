import UnwindCore

/// A message's place in the modem's store, as +CMTI, +CDSI and +CMGL name it: a number, checked,
/// so nothing the modem says reaches a command line but digits.
public struct StoreIndex: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: Int
    /// Far beyond any SIM or modem store (SIMs hold tens, modems a few hundred).
    public static let range = 0...9999

    public init?(_ value: Int) {
        guard Self.range.contains(value) else { return nil }
        self.value = value
    }

    /// A field as the modem wrote it: digits only, in range.
    public init?(field: String) {
        let t = field.trimmingSpaces
        guard !t.isEmpty, t.utf8.count <= 4, t.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let v = Int(t) else { return nil }
        self.init(v)
    }

    public var description: String { String(value) }
    public static func < (a: StoreIndex, b: StoreIndex) -> Bool { a.value < b.value }
}

/// The AT+CNMI settings tried at start-up, best first: status reports inline (+CDS), then
/// stored (+CDSI, read with AT+CMGR), then none (a sent message stays "sent"). New messages are
/// always stored and announced with +CMTI, so each is on the SIM until it is on the card.
public enum MessageIndications: Equatable, Sendable, CaseIterable {
    case inlineReports
    case storedReports
    case noReports
    /// Mode 1 for a modem without mode 2 (no buffering while the line is busy).
    case noReportsMode1

    var parameters: String {
        switch self {
        case .inlineReports: "2,1,0,1,0"
        case .storedReports: "2,1,0,2,0"
        case .noReports: "2,1,0,0,0"
        case .noReportsMode1: "1,1,0,0,0"
        }
    }

    var routing: ReportRouting {
        switch self {
        case .inlineReports: .inline
        case .storedReports: .stored
        case .noReports, .noReportsMode1: .unavailable("the modem refused to route status reports (AT+CNMI)")
        }
    }

    /// The next setting to try after this one was refused.
    var fallback: MessageIndications? {
        switch self {
        case .inlineReports: .storedReports
        case .storedReports: .noReports
        case .noReports: .noReportsMode1
        case .noReportsMode1: nil
        }
    }
}

/// How status reports reach the device.
public enum ReportRouting: Equatable, Sendable, CustomStringConvertible {
    /// Not set up yet.
    case unknown
    /// +CDS with the report's PDU.
    case inline
    /// +CDSI: stored, read with AT+CMGR.
    case stored
    /// None will come: a message the network accepted stays "sent".
    case unavailable(String)

    public var reportsArrive: Bool {
        switch self {
        case .inline, .stored: true
        case .unknown, .unavailable: false
        }
    }

    public var description: String {
        switch self {
        case .unknown: "not set up yet"
        case .inline: "on (+CDS)"
        case .stored: "on (+CDSI, read from the SIM)"
        case .unavailable(let why): "unavailable: \(why); sent messages stay \"sent\""
        }
    }
}
