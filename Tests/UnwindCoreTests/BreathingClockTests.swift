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
        style.edges(phase: .inhale, at: .seconds(4), until: .seconds(8), into: &edges)
        #expect(edges == [MotorEdge(at: .seconds(4), on: true), MotorEdge(at: .seconds(4.12), on: false)])
        edges = []
        style.edges(phase: .holdAfterInhale, at: .seconds(8), until: .seconds(12), into: &edges)
        #expect(edges.map(\.at) == [.seconds(8), .seconds(8.12), .seconds(8.22), .seconds(8.34)])
        #expect(edges.map(\.on) == [true, false, true, false])
    }
}

/// The clock for every preset and for a slowing pace: phase boundaries exact to the
/// nanosecond, the picture's position and the motor's corners in agreement, no drift in an hour.
@Suite struct BreathingClockPresetTests {
    let start = Instant.seconds(3.25)

    /// Corner instants for a pattern without a ramp: the lengths added up, nothing rounded.
    func expectedCorners(_ p: BreathingPattern, count: Int) -> [Int64] {
        var out: [Int64] = []
        var t = start.nanoseconds
        var k = 0
        while out.count < count {
            out.append(t)
            t += p.length(of: p.phase(k % p.phaseCount)).nanoseconds
            k += 1
        }
        return out
    }

    @Test(arguments: BreathingPreset.builtIn.filter { $0.pattern.ramp == nil }.map(\.name))
    func cornersAreTheLengthsAddedUpForAnHour(_ name: String) throws {
        let p = try #require(BreathingPreset.builtIn.first { $0.name == name }).pattern
        let c = BreathingClock(pattern: p, start: start)
        let n = p.phaseCount
        let breaths = Int(3600 * 1_000_000_000 / p.cycle.nanoseconds) + 1
        let expected = expectedCorners(p, count: breaths * n)
        for k in 0..<expected.count {
            #expect(c.corner(k).nanoseconds == expected[k])
            if c.corner(k).nanoseconds != expected[k] { return }
        }
        // An hour in, breath for breath still on the pattern's own lengths: no drift.
        let last = expected.count - n
        #expect(c.corner(last).nanoseconds - start.nanoseconds == Int64(breaths - 1) * p.cycle.nanoseconds)
        try positionsAgreeWithCorners(c, corners: 0..<(6 * n))
        try positionsAgreeWithCorners(c, corners: (last - 2 * n)..<last)
    }

    /// At each corner the position is that corner's phase at progress 0; a nanosecond before it,
    /// the previous phase with 1 ns left; `firstCorner` finds it again.
    func positionsAgreeWithCorners(_ c: BreathingClock, corners: Range<Int>) throws {
        for k in corners {
            let t = c.corner(k)
            let at = c.position(at: t)
            #expect(at.corner == k && at.progress == 0 && at.phase == c.phase(ofCorner: k), "corner \(k)")
            #expect(at.remaining == c.corner(k + 1) - t)
            #expect(c.firstCorner(atOrAfter: t) == k)
            #expect(c.firstCorner(atOrAfter: t + .nanoseconds(1)) == k + 1)
            if k > 0 {
                let before = c.position(at: t - .nanoseconds(1))
                #expect(before.corner == k - 1 && before.remaining == .nanoseconds(1), "just before corner \(k)")
            }
        }
    }

    @Test func calmSlowsFromElevenToSixBreathsAMinuteOverThreeMinutes() throws {
        let p = BreathingPreset.calm.pattern
        let c = BreathingClock(pattern: p, start: start)
        #expect(c.phasesPerBreath == 2)
        var previous: Int64 = 0
        var b = 0
        while true {
            let (s, l) = c.breath(b)
            let inhale = c.offset(ofPhase: 1, inBreathOf: l)
            // Each breath keeps the 4:6 shape: the exhale is always the longer.
            #expect(l - inhale > inhale)
            #expect(abs(Double(inhale) / Double(l) - 0.4) < 1e-9)
            if s >= 180_000_000_000 {
                #expect(l == 10_000_000_000)
                break
            }
            // The rate at the breath's start: 11 falling evenly to 6 over 180 s.
            let rate = 11 - 5 * Double(s) / 180e9
            #expect(abs(Double(l) - 60e9 / rate) <= 0.5)
            #expect(l > previous)   // every breath slower than the one before
            previous = l
            b += 1
        }
        #expect(c.breath(0).length == 5_454_545_455)     // 60 / 11 s
        #expect(b == c.rampBreaths && b > 20 && b < 30)
        // After the ramp, breath after breath of exactly 10 s, an hour in too.
        let k0 = c.rampBreaths * 2
        for k in stride(from: k0, to: k0 + 2 * 400, by: 2) {
            #expect(c.corner(k + 2) - c.corner(k) == .seconds(10))
            #expect(c.corner(k + 1) - c.corner(k) == .seconds(4))
        }
        try positionsAgreeWithCorners(c, corners: 0..<(2 * c.rampBreaths + 10))
        // The breath under way at any instant is the one whose corners surround it.
        for ms in stride(from: Int64(0), to: 200_000, by: 777) {
            let t = start + .milliseconds(ms)
            let pos = c.position(at: t)
            #expect(c.corner(pos.corner) <= t && t < c.corner(pos.corner + 1))
        }
    }

    @Test func aTimedSessionEndsAtTheStartOfABreath() {
        let c = BreathingClock(pattern: BreathingPreset.fourSevenEight.pattern, start: .zero)
        // 478: 19 s a breath, 3 phases. Five minutes end at the first breath start at or after 300 s: 304 s.
        let k = c.firstBreathStart(atOrAfter: .seconds(300))
        #expect(k % 3 == 0 && c.corner(k) == .seconds(304))
        #expect(c.firstBreathStart(atOrAfter: .seconds(304)) == k)
        #expect(c.firstBreathStart(atOrAfter: .zero) == 0)
    }

    @Test func aPatternWithNothingToBreatheFallsBackToTheSquare() {
        let c = BreathingClock(pattern: BreathingPattern(inhale: .zero, holdAfterInhale: .zero, exhale: .zero, holdAfterExhale: .zero), start: .zero)
        #expect(c.pattern == .box)
        #expect(c.corner(5) == .seconds(20))
    }
}
