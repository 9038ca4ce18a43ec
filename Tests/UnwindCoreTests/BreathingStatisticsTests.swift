import Testing
import UnwindCore

@Suite("Breathing statistics: arithmetic on any values")
struct BreathingStatisticsTests {
    /// The totals can come from a device's answer on the socket: no value may trap.
    @Test func averageNeverOverflows() {
        #expect(BreathingTotals(totalSeconds: .min, count: -1).averageSeconds == 0)
        #expect(BreathingTotals(totalSeconds: .max, count: 1).averageSeconds == .max)
        #expect(BreathingTotals(totalSeconds: .max, count: 2).averageSeconds == .max / 2 + 1)
        #expect(BreathingTotals(totalSeconds: 10, count: 0).averageSeconds == 0)
        // Rounded to the nearest: 7/2 → 4, 10/3 → 3, 11/3 → 4.
        #expect(BreathingTotals(totalSeconds: 7, count: 2).averageSeconds == 4)
        #expect(BreathingTotals(totalSeconds: 10, count: 3).averageSeconds == 3)
        #expect(BreathingTotals(totalSeconds: 11, count: 3).averageSeconds == 4)
    }
}
