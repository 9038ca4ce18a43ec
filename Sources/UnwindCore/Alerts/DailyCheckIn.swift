
/// The daily check-in ("send help if I don't check in"): each day the person confirms with one
/// press that they are fine. The prompt appears an hour before the deadline (quietly: a press
/// then counts); from the deadline it reminds with its own motor pattern every ten minutes; when
/// the grace period ends without a press, `checkin.message` goes to every contact and is treated
/// like a PANIC. It never fires from an untrusted wall clock, and waits for a breathing session's end.

public struct CheckInSettings: Equatable, Sendable {
    /// The deadline, minutes after local midnight; nil: check-in is off (the default).
    public var deadline: Int?
    /// From the first reminder to sending help.
    public var grace: Duration
    /// What the contacts get when the person did not check in (validated like an alert message).
    public var message: String
    public var remindEvery: Duration
    /// The prompt is shown (without the motor) this long before the deadline.
    public var early: Duration

    public static let defaultMessage = "I did not check in today on my Unwind device. Please check on me."

    public init(deadline: Int? = nil, grace: Duration = .seconds(30 * 60), message: String = CheckInSettings.defaultMessage,
                remindEvery: Duration = .seconds(10 * 60), early: Duration = .seconds(60 * 60)) {
        self.deadline = deadline
        self.grace = grace
        self.message = message
        self.remindEvery = remindEvery
        self.early = early
    }
}

public enum CheckInOutcome: String, Equatable, Sendable {
    case confirmed, missed
    /// The person pressed PANIC that day while the check-in was asked: help was already sent.
    case alerted
}

/// The last day settled, as `checkIn.txt` keeps it.
public struct CheckInRecord: Equatable, Sendable {
    /// Local days since 1970-01-01.
    public var day: Int64
    public var outcome: CheckInOutcome
    public init(day: Int64, outcome: CheckInOutcome) {
        self.day = day
        self.outcome = outcome
    }
}

public struct CheckInState: Equatable, Sendable {
    public internal(set) var last: CheckInRecord?
    /// The prompt is on screen.
    public internal(set) var showing = false
    /// The day being asked about, once the prompt has appeared.
    public internal(set) var pendingDay: Int64?
    /// Help goes out at this wall-clock second unless the person presses (set at the first
    /// reminder: the grace period is counted from what the person could have felt).
    public internal(set) var sendsAt: WallTime?
    /// `sendsAt` as the person's local "HH:MM", for the prompt.
    public internal(set) var sendsAtClock: String?
    /// nil while a grace period runs: remind at the next tick (a restart reminds at once).
    var nextReminder: Instant?
    /// The grace period came from `checkIn.txt` at start and has not been taken up yet: kept
    /// while the clock is not yet trusted (every start begins untrusted).
    var resumed = false

    /// The grace period under way, as `checkIn.txt` keeps it.
    public var grace: CheckInGrace? {
        guard let day = pendingDay, let at = sendsAt else { return nil }
        return CheckInGrace(day: day, sendsAt: at)
    }

    public init() {}
}

/// A grace period under way, as `checkIn.txt` keeps it: a restart goes on counting it down
/// instead of starting it afresh (or forgetting a day that ended during it).
public struct CheckInGrace: Equatable, Sendable {
    /// The local day being asked about (days since 1970-01-01).
    public var day: Int64
    /// Help goes out at this wall-clock second unless the person presses.
    public var sendsAt: WallTime
    public init(day: Int64, sendsAt: WallTime) {
        self.day = day
        self.sendsAt = sendsAt
    }
}

/// `checkIn.txt`: `<YYYY-MM-DD> <confirmed|missed|alerted>` — the last local day the person
/// confirmed, the last one help was sent for, or one the person's own PANIC answered — and, while
/// a grace period runs, `reminding <YYYY-MM-DD> <unix seconds>`: the day asked about and when help
/// goes. Either line may be absent; an empty file is a check-in never settled.
public enum CheckInFile {
    public static let name = "checkIn.txt"
    static let maximumBytes = 256

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), notText, malformed(String)
        public var description: String {
            switch self {
            case .tooLong(let n): "\(n) bytes, more than a check-in record's \(maximumBytes)"
            case .notText: "not UTF-8 text"
            case .malformed(let why): why
            }
        }
    }

    public static func format(_ r: CheckInRecord?, grace: CheckInGrace? = nil) -> String {
        var s = r.map { "\(CivilDate.text(ofDay: $0.day)) \($0.outcome.rawValue)\n" } ?? ""
        if let g = grace { s += "reminding \(CivilDate.text(ofDay: g.day)) \(g.sendsAt.secondsSinceEpoch)\n" }
        return s
    }

    /// The settled day alone (what a backup restores: a grace period belongs to its moment).
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> CheckInRecord? {
        try parseWithGrace(bytes).record
    }

    public static func parseWithGrace(_ bytes: [UInt8]) throws(Problem) -> (record: CheckInRecord?, grace: CheckInGrace?) {
        if bytes.count > maximumBytes { throw .tooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        var record: CheckInRecord?, grace: CheckInGrace?
        for line in lines {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            if f.first == "reminding" {
                guard grace == nil, f.count == 3, let day = CivilDate.day(ofText: f[1]),
                      f[2].utf8.count <= 12, f[2].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let t = Int64(f[2]) else {
                    throw .malformed("expected 'reminding <YYYY-MM-DD> <unix seconds>' once")
                }
                grace = CheckInGrace(day: day, sendsAt: WallTime(secondsSinceEpoch: t))
                continue
            }
            if record != nil || grace != nil { throw .malformed("more than one line") }
            guard f.count == 2, let day = CivilDate.day(ofText: f[0]) else {
                throw .malformed("expected '<YYYY-MM-DD> <confirmed|missed|alerted>'")
            }
            guard let outcome = CheckInOutcome(rawValue: String(f[1])) else {
                throw .malformed("unknown outcome \(String(reflecting: String(f[1])))")
            }
            record = CheckInRecord(day: day, outcome: outcome)
        }
        return (record, grace)
    }
}

extension LocalClockCache {
    /// Local days since 1970-01-01 at `wall`.
    public mutating func localDay(_ wall: WallTime, in zone: LocalTimeZone) -> Int64 {
        let second = Int64(secondOfDay(wall, in: zone))
        let local = wall.secondsSinceEpoch + offset
        return (local - second) / 86_400
    }
}

extension DeviceCore {
    /// Once a wall-clock second (from `tickAlertHealth`).
    mutating func tickCheckIn(at now: Moment, effects: inout [Effect]) {
        let c = settings.checkIn
        guard let deadline = c.deadline, state.reminders.clockTrusted else {
            // Without a clock to trust nothing is asked, and nothing half-asked is kept: when the
            // clock is trusted again the prompt and its grace period start afresh.
            if !state.checkIn.resumed, state.checkIn.showing || state.checkIn.pendingDay != nil {
                let last = state.checkIn.last
                let hadGrace = state.checkIn.sendsAt != nil
                state.checkIn = CheckInState()
                state.checkIn.last = last
                if hadGrace { effects.append(.save(.checkIn, CheckInFile.format(last))) }
            }
            return
        }
        if state.checkIn.resumed {
            state.checkIn.resumed = false
            if let at = state.checkIn.sendsAt, now.wall.secondsSinceEpoch - at.secondsSinceEpoch > Self.staleGrace {
                // The device was off (or the record restored) long after help was due: that day is
                // past helping; today is asked afresh.
                effects.append(.log("check-in: the grace period kept in \(CheckInFile.name) ended more than a day ago; not sending help for it now"))
                let last = state.checkIn.last
                state.checkIn = CheckInState()
                state.checkIn.last = last
                effects.append(.save(.checkIn, CheckInFile.format(last)))
            } else if let at = state.checkIn.sendsAt {
                var cache = state.display.localClock
                state.checkIn.sendsAtClock = Self.clock(cache.secondOfDay(at, in: settings.timeZone) / 60 % 1440)
                effects.append(.log("check-in: the grace period goes on after a restart; help is sent at \(state.checkIn.sendsAtClock ?? "?") without a press"))
            }
        }
        // Reminding already: the grace period runs out whatever the day is now (a deadline of
        // 23:50 with 30 minutes' grace sends at 00:20).
        if let sendsAt = state.checkIn.sendsAt {
            if now.wall >= sendsAt { return missedCheckIn(at: now, effects: &effects) }
            if state.checkIn.nextReminder.map({ now.instant >= $0 }) ?? true, !state.breathing.isRunning {
                remindCheckIn(at: now, effects: &effects)
            }
            return
        }
        var cache = state.display.localClock
        let second = Int64(cache.secondOfDay(now.wall, in: settings.timeZone))
        let today = cache.localDay(now.wall, in: settings.timeZone)
        // Only today's record settles today: one from the future (a clock that was wrong, a
        // restored backup) must not switch the check-in off for good.
        if let last = state.checkIn.last, last.day == today { return }
        let due = now.wall.secondsSinceEpoch - second + Int64(deadline) * 60
        let early = due - c.early.nanoseconds / 1_000_000_000
        guard now.wall.secondsSinceEpoch >= early, !state.breathing.isRunning else { return }
        if state.checkIn.pendingDay != today {
            state.checkIn.pendingDay = today
            state.checkIn.showing = true
            state.display.lastActivity = now.instant
            if state.display.asleep { wake(effects: &effects) }
        }
        if now.wall.secondsSinceEpoch >= due {
            let graceSeconds = c.grace.nanoseconds / 1_000_000_000
            state.checkIn.sendsAt = WallTime(secondsSinceEpoch: now.wall.secondsSinceEpoch + graceSeconds)
            state.checkIn.sendsAtClock = Self.clock(Int((second + graceSeconds) / 60 % 1440))
            effects.append(.log("check-in not confirmed by \(Self.clock(deadline)): reminding; help is sent in \(c.grace.nanoseconds / 60_000_000_000) min without a press"))
            // Kept on the card: a restart counts down the same grace period, not a new one.
            effects.append(.save(.checkIn, CheckInFile.format(state.checkIn.last, grace: state.checkIn.grace)))
            remindCheckIn(at: now, effects: &effects)
        }
    }

    /// The prompt again, with its own pattern: long, short, long, short (unlike a mantra's swells).
    private mutating func remindCheckIn(at now: Moment, effects: inout [Effect]) {
        state.checkIn.showing = true
        state.checkIn.nextReminder = now.instant + settings.checkIn.remindEvery
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        var t = now.instant
        for ms in [500, 150, 500, 150] as [Int64] {
            effects.append(.motor(MotorEdge(at: t, on: true)))
            effects.append(.motor(MotorEdge(at: t + .milliseconds(ms), on: false)))
            t = t + .milliseconds(ms + 250)
        }
    }

    /// One press on the prompt: the person is fine today.
    mutating func confirmCheckIn(at now: Moment, effects: inout [Effect]) {
        settleCheckIn(.confirmed, at: now, effects: &effects)
        effects.append(.cancelMotor)
        // One short tick: "got it".
        pulses(at: now.instant, count: 1, on: .milliseconds(60), off: .zero, effects: &effects)
    }

    /// PANIC went while the check-in was asked (or due): today is answered, and the prompt goes.
    mutating func settleCheckInByPanic(at now: Moment, effects: inout [Effect]) {
        guard settings.checkIn.deadline != nil, state.checkIn.showing || state.checkIn.sendsAt != nil else { return }
        settleCheckIn(.alerted, at: now, effects: &effects)
        effects.append(.log("check-in: the person pressed PANIC; today's check-in is answered by it"))
    }

    private mutating func missedCheckIn(at now: Moment, effects: inout [Effect]) {
        // Saved before the alerts: a restart must never send them a second time.
        settleCheckIn(.missed, at: now, effects: &effects)
        let requests: [AlertRequest] = state.panic.slots.enumerated().compactMap { i, s in
            guard case .ready(let a) = s,
                  let alert = try? AlertSlot(name: a.name, number: a.number, message: settings.checkIn.message) else { return nil }
            return AlertRequest(slot: i, alert: alert, purpose: .checkIn)
        }
        effects.append(.log("check-in missed: sending the check-in message to \(requests.count) contact(s)"))
        send(requests, purpose: .checkIn, at: now, effects: &effects)
    }

    /// The day asked about (today, if the prompt never appeared) is settled: recorded and saved,
    /// the prompt and its reminders gone.
    private mutating func settleCheckIn(_ outcome: CheckInOutcome, at now: Moment, effects: inout [Effect]) {
        var cache = state.display.localClock
        let day = state.checkIn.pendingDay ?? cache.localDay(now.wall, in: settings.timeZone)
        let record = CheckInRecord(day: day, outcome: outcome)
        state.checkIn = CheckInState()
        state.checkIn.last = record
        effects.append(.save(.checkIn, CheckInFile.format(record)))
    }

    /// A grace period that ended longer ago than this is not acted on at start.
    static let staleGrace: Int64 = 86_400

    /// `HH:MM` for minutes after midnight.
    public static func clock(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}
