import UnwindCore
import UnwindHardware

/// Simulated time: both clocks stand still until the loop waits, then jump straight to the
/// deadline (or to the next scripted event, whichever is first). A ten-minute session runs in
/// as long as its frames take to draw.
public final class SimulatedTime: DeviceClock, LoopWaiter {
    public private(set) var instant: Instant
    public let start: Instant
    public let wallAtStart: WallTime
    /// Something that will happen before the deadline (a scripted press): the wait stops there.
    public var nextEvent: () -> Instant? = { nil }

    public init(start: Instant = .zero, wall: WallTime = WallTime(secondsSinceEpoch: 1_767_225_600)) {
        self.instant = start
        self.start = start
        self.wallAtStart = wall
    }

    public func now() -> Moment {
        return Moment(instant, wall: WallTime(secondsSinceEpoch: wallAtStart.secondsSinceEpoch + (instant - start).wholeSeconds))
    }

    public func wait(until deadline: Instant, watching descriptors: [Int32]) throws(DeviceError) {
        var t = deadline
        if let e = nextEvent(), e < t { t = e }
        if t > instant { instant = t }
    }

    /// Moves time on by hand (a test's "meanwhile").
    public func advance(by d: Duration) { instant = instant + d }
}
