/// A point on the monotonic clock (CLOCK_MONOTONIC on the device, simulated time in tests),
/// in nanoseconds. The core never reads a clock: every instant is handed to it.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = Instant(nanoseconds: 0)

    public static func seconds(_ s: Double) -> Instant { Instant(nanoseconds: Int64((s * 1e9).rounded())) }

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds + d.nanoseconds) }
    public static func - (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds - d.nanoseconds) }
    public static func - (a: Instant, b: Instant) -> Duration { .nanoseconds(a.nanoseconds - b.nanoseconds) }
    public static func += (a: inout Instant, d: Duration) { a = a + d }

    /// Seconds with nanosecond precision, the form every log file of the simulator uses.
    public var description: String { Instant.format(nanoseconds) }

    static func format(_ ns: Int64) -> String {
        let sign = ns < 0 ? "-" : ""
        let v = ns.magnitude
        let frac = String(v % 1_000_000_000)
        return sign + String(v / 1_000_000_000) + "." + String(repeating: "0", count: 9 - frac.count) + frac
    }
}

/// Wall-clock time (CLOCK_REALTIME) as seconds since the Unix epoch: only for what a person
/// reads as a date, never for timing.
public struct WallTime: Hashable, Comparable, Sendable {
    public var secondsSinceEpoch: Int64
    public init(secondsSinceEpoch: Int64) { self.secondsSinceEpoch = secondsSinceEpoch }
    public static func < (a: WallTime, b: WallTime) -> Bool { a.secondsSinceEpoch < b.secondsSinceEpoch }

    /// The instants the calendar arithmetic works on: ±2^40 s, about ±34,800 years around 1970.
    /// A time read from a file, an archive, a PDU or the socket may be anything an Int64 holds;
    /// local time, dates and zone offsets take one beyond this range at its edge, so no input
    /// can make them overflow.
    public static let calendarRange: ClosedRange<Int64> = -(1 << 40)...(1 << 40)

    /// `t` within `calendarRange`.
    public static func calendarClamped(_ t: Int64) -> Int64 {
        min(max(t, calendarRange.lowerBound), calendarRange.upperBound)
    }
}

/// What the core is told "now" is: both clocks, read once by the edge.
public struct Moment: Sendable, Equatable {
    public var instant: Instant
    public var wall: WallTime
    public init(_ instant: Instant, wall: WallTime = WallTime(secondsSinceEpoch: 0)) {
        self.instant = instant
        self.wall = wall
    }
}

extension Duration {
    /// The duration as whole nanoseconds (saturating far outside any device timescale).
    public var nanoseconds: Int64 {
        let c = components
        return c.seconds &* 1_000_000_000 &+ c.attoseconds / 1_000_000_000
    }

    /// Whole seconds, rounded down; what the statistics count.
    public var wholeSeconds: Int64 { nanoseconds / 1_000_000_000 }
}
