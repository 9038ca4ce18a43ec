import UnwindCore
import UnwindSeams

/// Simulated time: both clocks stand still until the loop waits, then jump straight to the
/// deadline (or to the next scripted event, whichever is first). A ten-minute session runs in
/// as long as its frames take to draw.
///
/// The wall clock runs with the monotonic one from `wall` at the start, with nanosecond
/// precision, and can be stepped (an NTP step, a manual change) and marked synchronised or not
/// at scripted instants. It is also the reminder's alarm: the wait stops on the instant the wall
/// clock reaches the armed second, and a step is reported as a clock change, like the board's
/// timerfd with TFD_TIMER_CANCEL_ON_SET.
public final class SimulatedTime: DeviceClock, LoopWaiter, WallClockAlarm {
    public private(set) var instant: Instant
    public let start: Instant
    public let wallAtStart: WallTime
    /// Something that will happen before the deadline (a scripted press): the wait stops there.
    public var nextEvent: () -> Instant? = { nil }
    /// Whether the wall clock counts as synchronised now.
    public private(set) var synchronised: Bool
    /// The sum of the steps applied so far.
    public private(set) var wallOffset: Duration = .zero

    private var steps: [(at: Instant, by: Duration)] = []
    private var syncChanges: [(at: Instant, synchronised: Bool)] = []
    private var armed: WallTime?
    private var clockWasSet = false

    public init(start: Instant = .zero, wall: WallTime = WallTime(secondsSinceEpoch: 1_767_225_600),
                synchronised: Bool = true) {
        self.instant = start
        self.start = start
        self.wallAtStart = wall
        self.synchronised = synchronised
    }

    public func now() -> Moment {
        Moment(instant, wall: WallTime(secondsSinceEpoch: floorSeconds(wallNanoseconds(at: instant))))
    }

    /// The wall clock at `t`, in nanoseconds since the epoch, with the steps applied so far.
    public func wallNanoseconds(at t: Instant) -> Int64 {
        wallAtStart.secondsSinceEpoch * 1_000_000_000 + (t - start).nanoseconds + wallOffset.nanoseconds
    }

    public func wait(until deadline: Instant, watching descriptors: [Int32]) throws(DeviceError) {
        var t = deadline
        if let e = nextEvent(), e < t { t = e }
        if let a = alarmInstant, a < t { t = a }
        if let s = steps.first?.at, s < t { t = s }
        if let s = syncChanges.first?.at, s < t { t = s }
        if t > instant { instant = t }
        applyScripted()
    }

    /// Moves time on by hand (a test's "meanwhile").
    public func advance(by d: Duration) {
        instant = instant + d
        applyScripted()
    }

    // MARK: Scripted clock changes

    /// Steps the wall clock by `by` (negative: back) when simulated time reaches `at`.
    public func stepWall(by: Duration, at: Instant) {
        steps.append((at, by))
        steps.sort { $0.at < $1.at }
        applyScripted()
    }

    /// Marks the wall clock synchronised (or not) from `at` on.
    public func setSynchronised(_ s: Bool, at: Instant) {
        syncChanges.append((at, s))
        syncChanges.sort { $0.at < $1.at }
        applyScripted()
    }

    private func applyScripted() {
        while let s = steps.first, s.at <= instant {
            steps.removeFirst()
            wallOffset += s.by
            clockWasSet = true
        }
        while let c = syncChanges.first, c.at <= instant {
            syncChanges.removeFirst()
            synchronised = c.synchronised
        }
    }

    // MARK: WallClockAlarm

    public var pollDescriptor: Int32? { nil }

    public func arm(_ due: WallTime?) throws(DeviceError) {
        armed = due
        clockWasSet = false
    }

    public func poll() -> AlarmEvent {
        if clockWasSet {
            clockWasSet = false
            if armed != nil { return .clockChanged }
        }
        if let due = armed, wallNanoseconds(at: instant) >= due.secondsSinceEpoch * 1_000_000_000 {
            armed = nil
            return .fired(due)
        }
        return .none
    }

    public func clockIsSynchronised() -> Bool { synchronised }

    /// The monotonic instant at which the wall clock (as it stands) reaches the armed second.
    public var alarmInstant: Instant? {
        guard let due = armed else { return nil }
        return instant + .nanoseconds(due.secondsSinceEpoch * 1_000_000_000 - wallNanoseconds(at: instant))
    }

    private func floorSeconds(_ ns: Int64) -> Int64 {
        ns >= 0 ? ns / 1_000_000_000 : -((-ns + 999_999_999) / 1_000_000_000)
    }
}
