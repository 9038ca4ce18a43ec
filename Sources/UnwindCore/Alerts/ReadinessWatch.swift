/// Can alerts go out right now? The modem's answer is drawn in the menu bar at all times; when it
/// turns to "no" and stays so, the person is told once (never at night, never mid-session). A
/// daily self-test asks the modem again; an optional monthly test sends a real SMS to slot 1.

/// Where the readiness watch stands.
public struct ReadinessWatch: Equatable, Sendable {
    /// What the modem last said (nil: nothing heard yet, e.g. still starting).
    public internal(set) var current: AlertReadiness?
    /// Not ready since this instant (nil: ready, or not known).
    public internal(set) var notReadySince: Instant?
    /// The same on the wall clock, for STATUS answers ("no mobile network since 14:05") and `unwind status`.
    public internal(set) var notReadySinceWall: WallTime?
    /// The person was told about this "not ready" (told once until it is ready again).
    public internal(set) var told = false
    /// The "alerts can't go out" (or "the test failed") notice is on screen until then.
    public internal(set) var noticeUntil: Instant?
    public internal(set) var notice: ReadinessNotice?
    public internal(set) var nextSelfTest: Instant?
    /// The last monthly test (from `alertTest.txt`).
    public internal(set) var lastTest: AlertTestRecord?
    var lastWallSecond: Int64 = .min

    public init() {}

    public func showsNotice(at now: Instant) -> Bool { noticeUntil.map { now < $0 } ?? false }
}

public enum ReadinessNotice: Equatable, Sendable {
    case cannotSend(AlertReadiness.Problem)
    case testFailed(String)
}

/// The monthly test's last run, as `alertTest.txt` keeps it.
public struct AlertTestRecord: Equatable, Sendable {
    public var at: WallTime
    public var outcome: AlertTestOutcome
    public init(at: WallTime, outcome: AlertTestOutcome) {
        self.at = at
        self.outcome = outcome
    }
}

public enum AlertTestOutcome: Equatable, Sendable {
    case sending, sent, delivered
    case failed(String)

    public var word: String {
        switch self {
        case .sending: "sending"
        case .sent: "sent"
        case .delivered: "delivered"
        case .failed: "failed"
        }
    }
}

/// `alertTest.txt`: one line, `<seconds since 1970> <sending|sent|delivered|failed>[ <reason>]`,
/// e.g. `1795000000 delivered`. Written when a monthly test starts (so a restart never sends
/// a second one) and again when its outcome is known.
public enum AlertTestFile {
    public static let name = "alertTest.txt"
    static let maximumBytes = 512

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), notText, malformed(String)
        public var description: String {
            switch self {
            case .tooLong(let n): "\(n) bytes, more than a test record's \(maximumBytes)"
            case .notText: "not UTF-8 text"
            case .malformed(let why): why
            }
        }
    }

    public static func format(_ r: AlertTestRecord?) -> String {
        guard let r else { return "" }
        if case .failed(let why) = r.outcome {
            return "\(r.at.secondsSinceEpoch) failed \(TextSafety.oneLine(why, limit: 200))\n"
        }
        return "\(r.at.secondsSinceEpoch) \(r.outcome.word)\n"
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> AlertTestRecord? {
        if bytes.count > maximumBytes { throw .tooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard let line = lines.first else { return nil }
        if lines.count > 1 { throw .malformed("more than one line") }
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, let seconds = Int64(fields[0]), seconds >= 0, seconds < 1 << 40 else {
            throw .malformed("expected '<seconds since 1970> <outcome>'")
        }
        let outcome: AlertTestOutcome
        switch fields[1] {
        case "sending": outcome = .sending
        case "sent": outcome = .sent
        case "delivered": outcome = .delivered
        case "failed": outcome = .failed(fields.count > 2 ? String(fields[2]) : "")
        default: throw .malformed("unknown outcome \(String(reflecting: String(fields[1])))")
        }
        if fields.count > 2, fields[1] != "failed" { throw .malformed("a reason after \(fields[1])") }
        return AlertTestRecord(at: WallTime(secondsSinceEpoch: seconds), outcome: outcome)
    }
}

extension DeviceCore {
    /// "Not ready" must last this long before the person is told: a modem starting up or a
    /// moment without signal is not news.
    static let readinessPatience: Duration = .seconds(120)
    static let readinessNoticeLength: Duration = .seconds(8)
    static let monthlyTestInterval: Int64 = 30 * 86_400

    mutating func readinessChanged(_ r: AlertReadiness, at now: Moment, effects: inout [Effect]) {
        let was = state.panic.readiness.current
        state.panic.readiness.current = r
        if r.isReady {
            state.panic.readiness.notReadySince = nil
            state.panic.readiness.notReadySinceWall = nil
            state.panic.readiness.told = false
            if was != nil && was?.isReady == false { effects.append(.log("alerts can go out again")) }
        } else {
            if state.panic.readiness.notReadySince == nil {
                state.panic.readiness.notReadySince = now.instant
                state.panic.readiness.notReadySinceWall = now.wall
            }
            if was != r { effects.append(.log("alerts cannot go out now: " + r.problems.map(\.description).joined(separator: "; "))) }
        }
    }

    /// Every frame: telling the person, the self-test's turn; once a wall-clock second, the
    /// monthly test and the check-in. Allocation-free when nothing is due.
    mutating func tickAlertHealth(at now: Moment, effects: inout [Effect]) {
        let w = state.panic.readiness
        if let since = w.notReadySince, !w.told, now.instant - since >= Self.readinessPatience,
           !state.breathing.isRunning, !isNight(now), let problem = w.current?.problems.first {
            state.panic.readiness.told = true
            tellHealth(.cannotSend(problem), at: now, effects: &effects)
        }
        if let next = w.nextSelfTest {
            if now.instant >= next {
                state.panic.readiness.nextSelfTest = now.instant + settings.panic.selfTestEvery
                effects.append(.runSelfTest)
            }
        } else {
            state.panic.readiness.nextSelfTest = now.instant + settings.panic.selfTestEvery
        }
        if now.wall.secondsSinceEpoch != w.lastWallSecond {
            state.panic.readiness.lastWallSecond = now.wall.secondsSinceEpoch
            considerMonthlyTest(at: now, effects: &effects)
            tickCheckIn(at: now, effects: &effects)
            tickMaintainer(at: now, effects: &effects)
        }
    }

    /// On screen over any page for a few seconds, with a soft double pulse.
    private mutating func tellHealth(_ n: ReadinessNotice, at now: Moment, effects: inout [Effect]) {
        state.panic.readiness.notice = n
        state.panic.readiness.noticeUntil = now.instant + Self.readinessNoticeLength
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        pulses(at: now.instant, count: 2, on: .milliseconds(200), off: .milliseconds(600), effects: &effects)
    }

    /// Once a month, by day in the trusted wall clock's afternoon hours, with nothing else going on.
    private mutating func considerMonthlyTest(at now: Moment, effects: inout [Effect]) {
        guard settings.panic.monthlyTest, state.reminders.clockTrusted, !state.breathing.isRunning,
              state.panic.armingSince == nil, state.panic.sendingAt == nil else { return }
        // A record from the future (a clock that was wrong when it was written) does not count.
        if let last = state.panic.readiness.lastTest {
            let elapsed = now.wall.secondsSinceEpoch - last.at.secondsSinceEpoch
            if elapsed >= 0 && elapsed < Self.monthlyTestInterval { return }
        }
        var cache = state.display.localClock
        let hour = cache.secondOfDay(now.wall, in: settings.timeZone) / 3600
        guard (10..<18).contains(hour), !state.panic.progress.contains(where: { !$0.delivery.isFinished }),
              !state.panic.aftercare.escalation.isActive,
              case .ready(let contact) = state.panic.slots[0],
              let test = try? AlertSlot(name: contact.name, number: contact.number, message: PanicSettings.testMessage) else { return }
        let record = AlertTestRecord(at: now.wall, outcome: .sending)
        state.panic.readiness.lastTest = record
        effects.append(.save(.alertTest, AlertTestFile.format(record)))
        effects.append(.sendAlerts([AlertRequest(slot: 0, alert: test, purpose: .test)]))
        effects.append(.log("monthly alert test: a [TEST] SMS to slot 1 (\(contact.name))"))
    }

    mutating func monthlyTestUpdate(_ d: AlertDelivery, at now: Moment, effects: inout [Effect]) {
        guard var record = state.panic.readiness.lastTest else { return }
        let outcome: AlertTestOutcome
        switch d {
        case .sent: outcome = .sent
        case .delivered: outcome = .delivered
        case .failed(let why): outcome = .failed(why)
        case .cancelled: outcome = .failed("cancelled")
        case .queued, .sending, .retrying, .blocked: return
        }
        guard outcome != record.outcome else { return }
        record.outcome = outcome
        state.panic.readiness.lastTest = record
        effects.append(.save(.alertTest, AlertTestFile.format(record)))
        effects.append(.log("monthly alert test: \(outcome.word)\({ if case .failed(let w) = outcome { ": " + w } else { "" } }())"))
        if case .failed(let why) = outcome, !isNight(now) { tellHealth(.testFailed(why), at: now, effects: &effects) }
    }
}
