import Testing
import UnwindCore
@testable import UnwindRuntime

/// The motor edges' lateness kept in a few dozen counts: medians and 99th percentiles read as the
/// upper end of their step, and "later than 5 ms" counted exactly.
@Suite struct MotorLatenessCountsTests {
    @Test func percentilesAreTheirStepsUpperEnds() {
        var counts = LatenessCounts()
        #expect(counts.atMost(0.5) == nil)
        for _ in 0..<98 { counts.record(.microseconds(230)) }   // step (0.2, 0.3] ms
        counts.record(.microseconds(4_500))                    // step (4, 5] ms
        counts.record(.milliseconds(7))                        // step (6, 7] ms
        #expect(counts.total == 100)
        #expect(counts.atMost(0.5) == .microseconds(300))
        #expect(counts.atMost(0.99) == .milliseconds(5))
        #expect(counts.atMost(1) == .milliseconds(7))
        #expect(counts.later(than: .milliseconds(5)) == 1)
        #expect(counts.later(than: .milliseconds(4)) == 2)
    }

    @Test func theEndsOfTheRange() {
        var counts = LatenessCounts()
        counts.record(.zero)
        counts.record(.nanoseconds(-5))                        // a clock read before the edge's instant
        counts.record(.seconds(3))                             // beyond the last step
        counts.record(.nanoseconds(Int64.max))
        #expect(counts.total == 4)
        #expect(counts.atMost(0.5) == .microseconds(100))
        #expect(counts.atMost(0.99) == nil)
        #expect(counts.later(than: .milliseconds(100)) == 2)
    }
}
