/// A STATUS request and what became of it, for `unwind status` (in memory: a flood must not
/// write to the card once per text).
public struct StatusRequestNote: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable {
        case answered
        /// This contact was answered less than `StatusLimits.perContact` ago.
        case tooSoon
        /// `StatusLimits.perDay` answers went in the last 24 hours.
        case dailyLimit
        /// The sender is no alert contact: kept in the replies, never answered.
        case notAContact
        /// The sender's number matches slots holding different numbers: who asked is not known.
        case ambiguous([Int])
        /// The answer could not be made a valid SMS (should not happen; logged).
        case unsendable(String)
        /// The answer is on its way: the modem has not said yet what became of it.
        case sending
        /// The answer's PDU went, and no confirmation came: it may have reached the contact.
        case unconfirmed
        /// The answer never went (refused by the network, or not sent in time).
        case notSent(String)

        public var words: String {
            switch self {
            case .answered: "answered"
            case .sending: "answering (the answer is on its way)"
            case .unconfirmed: "answered, not confirmed by the network (it may have gone)"
            case .notSent(let why): "not answered: the answer could not be sent (\(why))"
            case .tooSoon: "not answered: this contact had an answer less than 10 minutes ago"
            case .dailyLimit: "not answered: \(StatusLimits.perDay) answers in the last 24 hours"
            case .notAContact: "not answered: not an alert contact"
            case .ambiguous(let slots): "not answered: the number matches slots " + slots.map { String($0 + 1) }.joined(separator: " and ")
            case .unsendable(let why): "not answered: \(why)"
            }
        }
    }
    public var at: WallTime
    /// 0-based; nil for a stranger (or an ambiguous number).
    public var slot: Int?
    public var outcome: Outcome
    /// The answer's `DeviceText.token`, while its outcome is awaited.
    var token: Int?
}

/// A text asked of the modem whose outcome is not known yet. It counts against the limits as
/// if sent; it is written to `statusTexts.txt` only once the network has (or may have) taken it.
struct PendingText: Equatable, Sendable {
    var token: Int
    var record: StatusTextRecord
}

/// The limits on answers: what a STATUS may cost, whoever sends it and however often.
public enum StatusLimits {
    public static let perContact: Int64 = 600
    public static let perDay = 10
    static let day: Int64 = 86_400
    /// The maintainer hears of each problem at most once in this.
    static let maintainerEvery: Int64 = 86_400
    /// A problem the maintainer was told of must stay away this long to count as over.
    static let recoveryPatience: Duration = .seconds(300)
    /// A maintainer's text that could not be sent is asked for again after this.
    static let maintainerRetry: Duration = .seconds(600)
}

/// Where the STATUS answers and the maintainer's texts stand.
public struct StatusTexts: Equatable, Sendable {
    /// What `statusTexts.txt` holds: the texts sent, newest last.
    public internal(set) var sent: [StatusTextRecord] = []
    /// The latest requests (at most `StatusTexts.notesKept`), newest last.
    public internal(set) var requests: [StatusRequestNote] = []
    /// Requests since start, answered or not.
    public internal(set) var requestCount = 0
    /// Problems the edge reports (the display, the motor, the SD card), as a bit set.
    var reported: UInt8 = 0
    /// By `DeviceProblem`, in its order: since when each problem is there (nil: not there).
    public internal(set) var since: [WallTime?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    var sinceInstant: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// By `DeviceProblem`: since when a problem the maintainer was told of has been away.
    var clearSince: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// Problems the maintainer was told of (or a text about is on its way) and not yet of their
    /// end (from the file at start).
    var told: UInt8 = 0
    /// Texts asked of the modem, their outcome awaited.
    var pending: [PendingText] = []
    var nextToken = 1
    /// By `DeviceProblem`: a maintainer's text about it that could not be sent is asked for
    /// again from then.
    var retryAt: [Instant?] = Array(repeating: nil, count: DeviceProblem.allCases.count)
    /// The modem's last signal (`+CSQ` rssi, 99 unknown; nil: not heard).
    public internal(set) var signal: Int?

    static let notesKept = 20

    public init() {}

    /// Problems there now.
    public var problems: [(problem: DeviceProblem, since: WallTime)] {
        DeviceProblem.allCases.enumerated().compactMap { i, p in since[i].map { (p, $0) } }
    }

    mutating func note(_ n: StatusRequestNote) {
        requestCount += 1
        requests.append(n)
        if requests.count > Self.notesKept { requests.removeFirst(requests.count - Self.notesKept) }
    }

    /// A text asked of the modem: pending until its outcome; returns its token.
    mutating func ask(_ r: StatusTextRecord) -> Int {
        let token = nextToken
        nextToken = nextToken == Int.max ? 1 : nextToken + 1
        pending.append(PendingText(token: token, record: r))
        // The modem drops what it cannot send in 10 minutes: an outcome never told (a link
        // without a modem) must not hold the limits for ever.
        if pending.count > StatusTextsFile.kept { pending.removeFirst(pending.count - StatusTextsFile.kept) }
        return token
    }

    mutating func record(_ r: StatusTextRecord) {
        sent.append(r)
        if sent.count > StatusTextsFile.kept { sent.removeFirst(sent.count - StatusTextsFile.kept) }
    }

    /// Records from the future — the wall clock was set back since they were made (by hand, by
    /// NTP after a clock that ran ahead, a board without a real-time clock starting at an old
    /// time) — are re-dated to `now`: they count in full from now, so setting a clock back never
    /// opens a limit, and shuts one at most for the limit's own length (a day) from when the
    /// device first sees it (in memory: nothing is written for it — the file keeps what was
    /// written, and a start with a clock still wrong re-dates again). Allocation-free; returns
    /// whether a record moved.
    @discardableResult
    mutating func settleClock(at now: WallTime) -> Bool {
        var moved = false
        for k in sent.indices where sent[k].at.secondsSinceEpoch > now.secondsSinceEpoch {
            sent[k].at = now
            moved = true
        }
        for k in pending.indices where pending[k].record.at.secondsSinceEpoch > now.secondsSinceEpoch {
            pending[k].record.at = now
            moved = true
        }
        return moved
    }

    /// Whether an answer to `slot` may go at `now`, or why not. A record from the future (a
    /// clock set back) within a day still counts: the limits must not open by moving a clock.
    /// Answers on their way count as sent.
    func refusal(slot: Int, at now: WallTime) -> StatusRequestNote.Outcome? {
        let t = now.secondsSinceEpoch
        var today = 0
        for r in sent + pending.map(\.record) {
            guard case .answer(let s) = r.kind else { continue }
            let age = t - r.at.secondsSinceEpoch
            guard age > -StatusLimits.day, age < StatusLimits.day else { continue }
            if s == slot && age < StatusLimits.perContact { return .tooSoon }
            today += 1
        }
        return today >= StatusLimits.perDay ? .dailyLimit : nil
    }

    /// When the maintainer was last told of `p` (either way), within a day of `now`.
    func lastTold(_ p: DeviceProblem, at now: WallTime) -> Bool {
        sent.contains { r in
            let age = now.secondsSinceEpoch - r.at.secondsSinceEpoch
            guard age > -StatusLimits.day, age < StatusLimits.maintainerEvery else { return false }
            if case .problem(let q) = r.kind { return q == p }
            return false
        }
    }
}
