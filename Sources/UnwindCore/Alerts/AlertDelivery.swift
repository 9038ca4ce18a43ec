/// One alert the core asks the edge to send.
public struct AlertRequest: Equatable, Sendable {
    /// 0-based slot: `alert01.txt` is slot 0.
    public var slot: Int
    /// The contact and the text to send (for a follow-up, the slot's contact with its text).
    public var alert: AlertSlot
    /// `.panic` and `.checkIn` are alerts (their news comes as `alertDelivery`); the others are
    /// follow-ups (`followUpDelivery`).
    public var purpose: AlertPurpose
    public init(slot: Int, alert: AlertSlot, purpose: AlertPurpose = .panic) {
        self.slot = slot
        self.alert = alert
        self.purpose = purpose
    }
}

/// Where one alert stands, as the person is shown it (the modem's view, translated by the loop).
public enum AlertDelivery: Equatable, Sendable {
    case queued
    case sending
    /// The network accepted it (`+CMGS`). Without a status report this is as far as anyone
    /// can know: the screen says "SENT", never "delivered".
    case sent
    /// A status report said the recipient's phone has it (every part of a long message).
    case delivered
    /// An attempt failed; retries go on by themselves.
    case retrying(String)
    /// Will not be retried (an unassigned number): the person must know.
    case failed(String)
    /// Cannot go out until someone fixes the device (no service centre on the SIM and none
    /// configured); still retried, but the person is told to call instead of waiting.
    case blocked(String)
    case cancelled

    /// The word on screen.
    public var word: String {
        switch self {
        case .queued: "queued"
        case .sending: "sending"
        case .sent: "SENT"
        case .delivered: "DELIVERED"
        case .retrying: "retrying"
        case .failed: "FAILED"
        case .blocked: "CANNOT"
        case .cancelled: "cancelled"
        }
    }

    /// Nothing more will be sent for it (a status report may still turn `.sent` into
    /// `.delivered` or `.failed`).
    public var isFinished: Bool {
        switch self {
        case .sent, .delivered, .failed, .cancelled: true
        default: false
        }
    }
}

/// One line of the alert status screen.
public struct AlertProgress: Equatable, Sendable {
    public var slot: Int
    public var name: String
    /// Where the alert goes: a name the screen cannot draw is shown by the number's last digits.
    public var number: PhoneNumber
    public var delivery: AlertDelivery
    /// The contact answered (an SMS from their number): they know, and are not rung.
    public var acknowledged: Bool
    /// Some part of the alert may be on their phone although it is not (yet) SENT: a part the
    /// network accepted of a longer message, or a submit whose answer never came (in doubt).
    /// Such a contact may be worried, so "I'm OK now" goes to them too.
    public var mayHaveReached: Bool
    /// The contact picked up one of the ladder's calls (then `acknowledged` too).
    public var answeredCall = false

    public init(slot: Int, name: String, number: PhoneNumber, delivery: AlertDelivery, acknowledged: Bool = false,
                mayHaveReached: Bool = false) {
        self.slot = slot
        self.name = name
        self.number = number
        self.delivery = delivery
        self.acknowledged = acknowledged
        self.mayHaveReached = mayHaveReached
    }

    /// Anything of the alert can be on this contact's phone: it was sent (delivered), or some of
    /// it may have gone. "I'm OK now" goes to exactly these.
    public var canHaveIt: Bool { delivery == .sent || delivery == .delivered || mayHaveReached }
}
