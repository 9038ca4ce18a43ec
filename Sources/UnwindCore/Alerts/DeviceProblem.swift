/// What keeps the device from doing its job while SMS itself still works: the maintainer is
/// texted about these. (The modem's own problems — no network, no SIM — leave no way to text
/// anyone: those are for `unwind status --json`.)
public enum DeviceProblem: String, CaseIterable, Equatable, Sendable {
    case noContacts = "no-contacts"
    case display
    case motor
    case stateDisk = "state-disk"
    case clock
    case monthlyTest = "monthly-test"

    /// In the maintainer's text.
    public var words: String {
        switch self {
        case .noContacts: "no alert contacts are set"
        case .display: "the display is not working"
        case .motor: "the motor is not working"
        case .stateDisk: "the SD card is full or read-only"
        case .clock: "the clock is not set"
        case .monthlyTest: "the monthly test SMS failed"
        }
    }

    /// In the maintainer's text when it is over.
    public var fixedWords: String {
        switch self {
        case .noContacts: "an alert contact is set"
        case .display: "the display works"
        case .motor: "the motor works"
        case .stateDisk: "the SD card can be written"
        case .clock: "the clock is set"
        case .monthlyTest: "the monthly test SMS went out"
        }
    }

    /// Its place in the per-problem arrays (`since`, `retryAt`, `clearSince`) and its `bit`.
    var index: Int { Self.allCases.firstIndex(of: self)! }
    var bit: UInt8 { UInt8(1) << UInt8(index) }
}
