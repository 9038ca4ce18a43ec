import Testing
@testable import UnwindCore

@Suite struct BreathingClockTests {
    let start = Instant.seconds(10)

    @Test func boxCornersEveryFourSeconds() {
        let c = BreathingClock(pattern: .box, start: start)
        #expect((0..<9).map { c.corner($0) } == (0..<9).map { Instant.seconds(10 + 4 * Double($0)) })
        #expect(c.phase(ofCorner: 0) == .inhale)
        #expect(c.phase(ofCorner: 1) == .holdAfterInhale)
        #expect(c.phase(ofCorner: 6) == .exhale)
        #expect(c.phase(ofCorner: 7) == .holdAfterExhale)
    }

    @Test func unevenPatternCorners() {
        let p = BreathingPattern(inhale: .seconds(3), holdAfterInhale: .seconds(1), exhale: .seconds(5), holdAfterExhale: .seconds(2))
        let c = BreathingClock(pattern: p, start: .zero)
        #expect((0..<6).map { c.corner($0).nanoseconds / 1_000_000_000 } == [0, 3, 4, 9, 11, 14])
        #expect(c.firstCorner(atOrAfter: .seconds(9)) == 3)
        #expect(c.firstCorner(atOrAfter: .seconds(9.001)) == 4)
        #expect(c.firstCorner(atOrAfter: .seconds(100)) == 4 * 9 + 1) // 99 = 9 cycles, next corner at 102
    }

    @Test func positionWithinPhases() {
        let c = BreathingClock(pattern: .box, start: start)
        let a = c.position(at: .seconds(10))
        #expect(a.phase == .inhale && a.progress == 0 && a.remaining == .seconds(4) && a.corner == 0)
        let b = c.position(at: .seconds(16))
        #expect(b.phase == .holdAfterInhale && b.progress == 0.5 && b.corner == 1)
        let d = c.position(at: .seconds(10 + 16 * 3 + 15))
        #expect(d.phase == .holdAfterExhale && d.progress == 0.75 && d.corner == 15)
        // Before the start the marker waits on the first corner.
        #expect(c.position(at: .seconds(1)).phase == .inhale)
    }

    @Test func patternLimits() {
        #expect(BreathingPattern.box.problem == nil)
        #expect(BreathingPattern(inhale: .milliseconds(500)).problem != nil)
        #expect(BreathingPattern(exhale: .seconds(21)).problem != nil)
    }

    @Test func hapticStyleEdges() {
        var edges: [MotorEdge] = []
        let style = HapticStyle()
        style.edges(forCornerAt: .seconds(4), hold: false, into: &edges)
        #expect(edges == [MotorEdge(at: .seconds(4), on: true), MotorEdge(at: .seconds(4.12), on: false)])
        edges = []
        style.edges(forCornerAt: .seconds(8), hold: true, into: &edges)
        #expect(edges.map(\.at) == [.seconds(8), .seconds(8.12), .seconds(8.22), .seconds(8.34)])
        #expect(edges.map(\.on) == [true, false, true, false])
    }
}
