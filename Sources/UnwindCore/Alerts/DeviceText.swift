/// A text the device sends on its own: a STATUS answer or a message to the maintainer. Its
/// recipient and words are validated like an alert's; the number is always one the device
/// stores (the slot's, the configured maintainer's), never the sender's as the network gave it.
public struct DeviceText: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The answer to slot `slot`'s (0-based) STATUS.
        case statusAnswer(slot: Int)
        case maintainer
    }
    public var kind: Kind
    public var message: AlertSlot
    /// Names this text when the modem says what became of it (`DeviceEvent.deviceTextOutcome`).
    public var token: Int

    public init(kind: Kind, message: AlertSlot, token: Int = 0) {
        self.kind = kind
        self.message = message
        self.token = token
    }
}

/// What became of a text the device sent on its own, as the modem saw it.
public enum DeviceTextOutcome: Equatable, Sendable {
    /// The network accepted it (`+CMGS`).
    case sent
    /// Its PDU went and no confirmation came: it may have gone (it is not sent again).
    case unconfirmed
    /// It never went: refused, or not sent in time (behind alerts, with no network).
    case dropped(String)
}
