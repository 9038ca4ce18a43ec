import UnwindCore

/// How late the motor's edges came, counted in fixed steps so that a device running for months
/// keeps a few dozen numbers, not every edge: 0.1 ms steps below 1 ms, 1 ms steps below 10 ms,
/// 10 ms steps below 100 ms, and one count for anything later. A percentile is the upper end of
/// its step (an edge 0.23 ms late counts as "at most 0.3 ms").
public struct LatenessCounts: Sendable, Equatable {
    /// The upper ends of the steps, in microseconds; the last count is everything beyond.
    public static let bounds: [Int64] = [
        100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000,
        2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000,
        20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000,
    ]

    public private(set) var counts = [Int](repeating: 0, count: bounds.count + 1)
    public private(set) var total = 0

    public init() {}

    public mutating func record(_ lateness: Duration) {
        let us = max(0, lateness.nanoseconds / 1_000)
        var i = 0
        while i < Self.bounds.count && us > Self.bounds[i] { i += 1 }
        counts[i] += 1
        total += 1
    }

    /// The lateness `fraction` (0.5: the median, 0.99) of the edges were at most: the upper end
    /// of that step, nil beyond the last step (or with no edge).
    public func atMost(_ fraction: Double) -> Duration? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for (i, n) in counts.enumerated() {
            seen += n
            if seen >= rank { return i < Self.bounds.count ? .microseconds(Self.bounds[i]) : nil }
        }
        return nil
    }

    /// Edges later than `limit` (counted from the step that holds it: exact when `limit` is a
    /// step's end).
    public func later(than limit: Duration) -> Int {
        let us = limit.nanoseconds / 1_000
        var n = 0
        for (i, c) in counts.enumerated() where i == Self.bounds.count || Self.bounds[i] > us { n += c }
        return n
    }
}
