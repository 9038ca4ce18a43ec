/// The panic alert page (spec 5.x): five slots, the counselling line, PANIC's hold-to-arm and
/// the status of what was sent.
public struct PanicState: Equatable, Sendable {
    public static let slotCount = 5
    public internal(set) var slots: [AlertSlotState]
    /// 0…4 a slot, 5 the counselling line.
    public internal(set) var selection = 0
    public internal(set) var counselling: CounsellingLine
    /// The counselling service's website and its QR code (spec 5.3); nil when none fits.
    public internal(set) var website: String?
    public internal(set) var websiteCode: QRCodeImage?
    /// A call to the counselling line is up (or being dialled).
    public internal(set) var callActive = false
    /// PANIC went down at this instant and is still held.
    public internal(set) var armingSince: Instant?
    /// How long PANIC must be held (from the settings; the arming screen draws it).
    public internal(set) var holdNanoseconds: Int64 = 1_500_000_000
    /// Armed with a cancel window: the alerts go out at this instant unless a button cancels.
    public internal(set) var sendingAt: Instant?
    /// The alerts of the last send, in slot order, until acknowledged.
    public internal(set) var progress: [AlertProgress] = []
    /// When the alerts in `progress` were asked for (the newest of them, after a restart).
    var askedAt: WallTime?
    /// A short explanation on the page ("This slot is empty", "Released: nothing sent").
    public internal(set) var notice: PanicNotice?
    public internal(set) var noticeUntil: Instant?
    var allSentSignalled = false

    /// What came after the alerts (HelpIsComing.swift): why they went, when, the replies not yet
    /// dismissed, the calls to contacts nobody heard from, "I'm OK now".
    public internal(set) var aftercare = Aftercare()
    /// Whether a PANIC could go out now (nil: not heard yet), and how the person was told.
    public internal(set) var readiness = ReadinessWatch()

    public init(slots: [AlertSlotState] = Array(repeating: .empty, count: PanicState.slotCount),
                counselling: CounsellingLine = .sfuCounselling) {
        self.slots = slots
        self.counselling = counselling
    }

    public var isCounsellingSelected: Bool { selection == Self.slotCount }

    /// Whether a PANIC would reach anyone: a slot is ready.
    public var hasAContact: Bool { slots.contains { if case .ready = $0 { true } else { false } } }

    /// The slots PANIC sends: every ready one.
    public var readyRequests: [AlertRequest] {
        slots.enumerated().compactMap { i, s in
            if case .ready(let a) = s { AlertRequest(slot: i, alert: a) } else { nil }
        }
    }

    public func showsNotice(at now: Instant) -> Bool { noticeUntil.map { now < $0 } ?? false }

    public func progress(ofSlot slot: Int) -> AlertDelivery? { progress.first { $0.slot == slot }?.delivery }

    /// The contacts "I'm OK now" goes to: every one who may have any part of the alert.
    public var allClearRecipients: [AlertProgress] { progress.filter(\.canHaveIt) }
}

public enum PanicNotice: Equatable, Sendable {
    case emptySlot, needsAttention, releasedEarly, noContacts, cancelled
    /// PANIC again while alerts are still on their way: nothing is sent twice.
    case alreadySending
    /// PANIC again while alerts are on their way, some of which had failed: those are sent again.
    case resendingFailed
    /// "I'm OK now" is going to everyone the alert reached.
    case allClearSending
    /// "I'm OK now", but no part of any alert can have reached anyone: the unsent ones were cancelled.
    case allClearNobody
    /// RIGHT on the status screen: the calls to contacts stopped.
    case callsStopped
    public var lines: (String, String) {
        switch self {
        case .alreadySending: ("Alerts are already", "on their way.")
        case .resendingFailed: ("Sending again the", "ones that failed.")
        case .emptySlot: ("This slot is empty.", "Set it up with unwind.")
        case .needsAttention: ("This slot needs", "attention: see unwind.")
        case .releasedEarly: ("Released early:", "nothing was sent.")
        case .noContacts: ("No alert contacts", "are set up yet.")
        case .cancelled: ("Cancelled:", "nothing was sent.")
        case .allClearSending: ("Sending \"I'm OK now\"", "to your contacts.")
        case .allClearNobody: ("Nobody had the alert:", "nothing more is sent.")
        case .callsStopped: ("Calls to your", "contacts stopped.")
        }
    }
}

/// Panic settings: how long PANIC is held to arm, and an optional window to cancel.
public struct PanicSettings: Equatable, Sendable {
    public var hold: Duration
    public var cancelWindow: Duration
    /// Nobody answered this long after the alerts went: ring the contacts (zero: never).
    public var escalateAfter: Duration
    /// How long each contact's phone rings before the device hangs up and rings the next.
    public var ringFor: Duration
    /// How many times the ladder goes through the contacts (0: no calls).
    public var callRounds: Int
    /// "I'm OK now": the follow-up sent to every contact an alert reached (a validated message).
    public var okMessage: String
    /// Send a `[TEST]` SMS to slot 1 once a month and report the outcome.
    public var monthlyTest: Bool
    /// How often the modem's start-up checks run again (no SMS is sent).
    public var selfTestEvery: Duration

    public static let defaultOKMessage = "I'm OK now. Thank you."
    public static let testMessage = "[TEST] This is a monthly test of Unwind's alerts. No action is needed."

    public init(hold: Duration = .milliseconds(1500), cancelWindow: Duration = .zero,
                escalateAfter: Duration = .seconds(180), ringFor: Duration = .seconds(25), callRounds: Int = 1,
                okMessage: String = PanicSettings.defaultOKMessage, monthlyTest: Bool = false,
                selfTestEvery: Duration = .seconds(86_400)) {
        self.hold = hold
        self.cancelWindow = cancelWindow
        self.escalateAfter = escalateAfter
        self.ringFor = ringFor
        self.callRounds = callRounds
        self.okMessage = okMessage
        self.monthlyTest = monthlyTest
        self.selfTestEvery = selfTestEvery
    }
}
