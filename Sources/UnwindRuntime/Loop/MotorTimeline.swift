import UnwindMaintenance
import UnwindCore

/// Motor edges waiting for their instant, earliest first. The loop wakes exactly at the first
/// one, so a pulse starts on its corner whatever the frames are doing.
struct MotorTimeline {
    private(set) var pending: [MotorEdge] = []

    init() { pending.reserveCapacity(64) }

    var next: Instant? { pending.first?.at }

    mutating func insert(_ edge: MotorEdge) {
        // Edges arrive almost always in order: search from the end.
        var i = pending.count
        while i > 0 && pending[i - 1].at > edge.at { i -= 1 }
        pending.insert(edge, at: i)
    }

    mutating func removeAll() { pending.removeAll(keepingCapacity: true) }

    /// Removes and returns the edges due at `now` (the last one decides the line's level).
    mutating func takeDue(_ now: Instant, _ body: (MotorEdge) -> Void) {
        var n = 0
        while n < pending.count && pending[n].at <= now { body(pending[n]); n += 1 }
        if n > 0 { pending.removeFirst(n) }
    }
}
