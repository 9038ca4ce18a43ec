import Testing
@testable import UnwindCore

/// The breathing page beyond the box: choosing a pattern and a length before the first breath,
/// a session that ends by itself, the before/after check-in.
@Suite struct BreathingSessionTests {
    var core = DeviceCore()
    var effects: [Effect] = []

    mutating func press(_ g: ButtonGesture, at s: Double) {
        core.apply(.button(g), at: Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_000_000 + Int64(s))), effects: &effects)
    }

    /// A short press: down, then its release.
    mutating func tap(_ b: Button, at s: Double) {
        press(.down(b), at: s)
        press(.short(b), at: s + 0.08)
        press(.up(b, heldFor: .milliseconds(80)), at: s + 0.08)
    }

    mutating func hold(_ b: Button, at s: Double) {
        press(.down(b), at: s)
        press(.long(b), at: s + 0.8)
        press(.up(b, heldFor: .seconds(1)), at: s + 1)
    }

    mutating func tick(_ s: Double) {
        core.apply(.tick, at: Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_000_000 + Int64(s))), effects: &effects)
    }

    /// Ticks at 30 fps from `from` to `to`.
    mutating func run(from: Double, to: Double) {
        var k = 0
        while from + Double(k) / 30 <= to {
            tick(from + Double(k) / 30)
            k += 1
        }
    }

    var saves: [StateFile: String] {
        var d: [StateFile: String] = [:]
        for case .save(let f, let t) in effects { d[f] = t }
        return d
    }

    var motorEdges: [MotorEdge] { effects.compactMap { if case .motor(let e) = $0 { e } else { nil } } }
    var onsets: [Instant] { motorEdges.filter(\.on).map(\.at) }

    @Test mutating func leftAndRightChooseThePatternOnReleaseAndTheArrowShowsThePress() {
        #expect(core.state.breathing.preset.name == "box")
        press(.down(.right), at: 1)
        #expect(core.state.breathing.arrowPressed == .right)       // the press answers at once
        #expect(core.state.breathing.preset.name == "box")         // the release acts
        press(.short(.right), at: 1.08)
        #expect(core.state.breathing.arrowPressed == nil)
        #expect(core.state.breathing.preset.name == "calm")
        #expect(saves[.breathingChoice] == "pattern calm\nlength open\n")
        tap(.right, at: 2); tap(.right, at: 3); tap(.right, at: 4)
        #expect(core.state.breathing.preset.name == "resonance")
        tap(.right, at: 5)
        #expect(core.state.breathing.preset.name == "box")        // wraps round
        tap(.left, at: 6)
        #expect(core.state.breathing.preset.name == "resonance")
        #expect(core.state.overlay == .none)                       // LEFT no longer opens the statistics
    }

    @Test mutating func theFirstBreathIsStillOnePressAway() {
        tap(.right, at: 1)     // calm
        effects = []
        press(.down(.select), at: 2)
        guard case .running(let clock) = core.state.breathing.session else { Issue.record("not running"); return }
        #expect(clock.pattern == BreathingPreset.calm.pattern)
        #expect(clock.start == .seconds(2))
        // The breath in's tap, on the press itself.
        #expect(motorEdges.first == MotorEdge(at: .seconds(2), on: true))
        // During the session LEFT and RIGHT change nothing.
        tap(.left, at: 3)
        hold(.right, at: 4)
        #expect(core.state.breathing.preset.name == "calm" && core.state.breathing.minutes == 0)
    }

    @Test mutating func holdingRightStepsTheSessionLength() {
        var seen: [Int] = []
        for i in 0..<5 {
            hold(.right, at: Double(i * 2 + 1))
            seen.append(core.state.breathing.minutes)
        }
        #expect(seen == [2, 5, 10, 20, 0])
        #expect(core.state.breathing.preset.name == "box")     // holding did not also step the pattern
        #expect(saves[.breathingChoice] == "pattern box\nlength open\n")
    }

    @Test mutating func aTimedSessionEndsByItselfAtABreathsStartWithAGentleCue() {
        let settings = DeviceSettings(pattern: BreathingPreset.sigh.pattern)
        core = DeviceCore(settings: settings, breathingChoice: BreathingChoice(pattern: "sigh", minutes: 2))
        #expect(core.state.breathing.preset.name == "sigh" && core.state.breathing.minutes == 2)
        press(.down(.select), at: 10)
        // Sigh: 9 s a breath; 2 minutes end at the first breath start at or after 130 s: 10 + 14 × 9 = 136 s.
        #expect(core.state.breathing.endsAt == .seconds(136))
        effects = []
        run(from: 10, to: 136.1)
        #expect(!core.state.breathing.isRunning)
        #expect(core.state.breathing.session == .finished(seconds: 126))
        #expect(saves[.totalTime] == "6\n2\n0\n126\n126\n1\n")
        #expect(saves[.sessionHistory] == "1000010 126 sigh\n")
        #expect(!effects.contains(.cancelMotor))          // the end cue is not cut off
        // The cue: five edges of on/off from the end instant, the gentle end's durations.
        let cue = motorEdges.filter { $0.at >= .seconds(136) }
        var t = Instant.seconds(136)
        var expected: [MotorEdge] = []
        for (i, d) in BreathingSettings.gentleEnd.enumerated() {
            expected.append(MotorEdge(at: t, on: i % 2 == 0))
            t = t + d
        }
        expected.append(MotorEdge(at: t, on: false))
        #expect(cue == expected)
        // Nothing scheduled after the end but the cue; the last minute's pulses were softer.
        let before = motorEdges.filter { $0.at < .seconds(136) }
        let early = pulses(in: before, from: 19, to: 28)          // one breath, well before the last minute
        let late = pulses(in: before, from: 127, to: 136)         // the last breath
        #expect(early.count == 1 + 3 + 1 && late.count == 1 + 3 + 1)
        #expect(late.map(\.length) == [.milliseconds(72), .milliseconds(36), .milliseconds(36), .milliseconds(36), .milliseconds(240)])
        // The display may sleep 30 s after the end (the idle time since the press is long past).
        effects = []
        run(from: 136.2, to: 165.9)
        #expect(!core.state.display.asleep)
        run(from: 166, to: 166.1)
        #expect(core.state.display.asleep)
    }

    struct Pulse: Equatable { var at: Instant; var length: Duration }
    func pulses(in edges: [MotorEdge], from: Double, to: Double) -> [Pulse] {
        var out: [Pulse] = []
        var on: Instant?
        for e in edges.sorted(by: { $0.at < $1.at }) where e.at >= .seconds(from) && e.at < .seconds(to) {
            if e.on { on = e.at } else if let o = on { out.append(Pulse(at: o, length: e.at - o)); on = nil }
        }
        return out
    }

    @Test mutating func everyPhasesFirstPulseIsOnItsStart() throws {
        for preset in BreathingPreset.builtIn {
            core = DeviceCore(settings: DeviceSettings(pattern: preset.pattern))
            effects = []
            press(.down(.select), at: 1)
            run(from: 1, to: 301)
            guard case .running(let clock) = core.state.breathing.session else { Issue.record("\(preset.name) not running"); continue }
            let k = clock.firstCorner(atOrAfter: .seconds(301 - 0.5))
            let expected = (0..<k).map { clock.corner($0) }
            // The first onset of each phase is its corner, exactly; the others follow inside the phase.
            let firsts = expected.map { c in onsets.first { $0 >= c } }
            #expect(firsts == expected.map { Optional($0) }, "\(preset.name)")
            for i in 0..<(k - 1) {
                let inside = onsets.filter { $0 >= expected[i] && $0 < expected[i + 1] }
                #expect(inside.count == settings(core).haptics.pulses(for: clock.phase(ofCorner: i)).count, "\(preset.name) corner \(i)")
            }
        }
    }

    func settings(_ c: DeviceCore) -> DeviceSettings { c.settings }

    @Test mutating func stoppingByHandStillDropsThePendingPulses() {
        core = DeviceCore(breathingChoice: BreathingChoice(pattern: "box", minutes: 5))
        press(.down(.select), at: 0)
        run(from: 0, to: 30)
        effects = []
        press(.down(.select), at: 30.5)
        #expect(effects.contains(.cancelMotor))
        #expect(core.state.breathing.session == .finished(seconds: 30))
        #expect(core.state.breathing.endCorner == nil)
    }

    @Test mutating func theChoiceIsRememberedAndAConfiguredOrCommandLinePatternIsOffered() {
        // Remembered: chosen at start.
        core = DeviceCore(breathingChoice: BreathingChoice(pattern: "478", minutes: 10))
        #expect(core.state.breathing.preset.name == "478" && core.state.breathing.minutes == 10)
        // A pattern given by its lengths is offered first, named by them.
        var s = DeviceSettings(pattern: BreathingPattern(inhale: .seconds(3), holdAfterInhale: .seconds(1), exhale: .seconds(5), holdAfterExhale: .zero))
        core = DeviceCore(settings: s)
        #expect(core.state.breathing.presets.map(\.name) == ["3-1-5", "box", "calm", "478", "sigh", "resonance"])
        #expect(core.state.breathing.chosen == 0)
        // The person's choice wins over the configuration, not over --pattern.
        core = DeviceCore(settings: s, breathingChoice: BreathingChoice(pattern: "sigh", minutes: 0))
        #expect(core.state.breathing.preset.name == "sigh")
        s.breathing.patternOverridesRemembered = true
        core = DeviceCore(settings: s, breathingChoice: BreathingChoice(pattern: "sigh", minutes: 5))
        #expect(core.state.breathing.preset.name == "3-1-5" && core.state.breathing.minutes == 5)
        // A remembered name no longer offered (a removed custom pattern): the default, quietly.
        core = DeviceCore(breathingChoice: BreathingChoice(pattern: "gone", minutes: 20))
        #expect(core.state.breathing.preset.name == "box" && core.state.breathing.minutes == 20)
        // The maintainer's patterns come after the shipped ones.
        let evening = BreathingPreset(name: "evening", pattern: BreathingPattern(holdAfterExhale: .zero), isCustom: true)
        core = DeviceCore(customPatterns: [evening], breathingChoice: BreathingChoice(pattern: "evening", minutes: 0))
        #expect(core.state.breathing.presets.last == evening && core.state.breathing.preset == evening)
    }

    @Test mutating func theMaintainersPatternsChangeTheListAndKeepTheChoice() {
        let a = BreathingPreset(name: "a", pattern: BreathingPattern(inhale: .seconds(5)), isCustom: true)
        let b = BreathingPreset(name: "b", pattern: BreathingPattern(exhale: .seconds(7)), isCustom: true)
        core = DeviceCore(customPatterns: [a, b], breathingChoice: BreathingChoice(pattern: "b", minutes: 0))
        core.apply(.maintainer(.setCustomPatterns([b])), at: Moment(.seconds(1)), effects: &effects)
        #expect(core.state.breathing.presets.map(\.name) == ["box", "calm", "478", "sigh", "resonance", "b"])
        #expect(core.state.breathing.preset.name == "b")
        #expect(saves[.patterns] == "b 4,4,7,4\n")
        #expect(saves[.breathingChoice] == nil)
        effects = []
        core.apply(.maintainer(.setCustomPatterns([])), at: Moment(.seconds(2)), effects: &effects)
        #expect(core.state.breathing.preset.name == "box")
        #expect(saves[.breathingChoice] == "pattern box\nlength open\n")
    }

    // MARK: Check-in

    var withCheckIn: DeviceSettings {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        return s
    }

    @Test mutating func aFirstSelectStartsAtOnceUnrated() {
        core = DeviceCore(settings: withCheckIn)
        guard case .rating(let q) = core.state.overlay else { Issue.record("no question at start"); return }
        #expect(q.isBefore && q.rating == nil)
        press(.down(.select), at: 1)
        #expect(core.state.breathing.isRunning && core.state.overlay == .none)
        press(.down(.select), at: 61)
        // After: asked; an untouched SELECT closes without a rating.
        guard case .rating(let after) = core.state.overlay else { Issue.record("no question after"); return }
        #expect(!after.isBefore)
        effects = []
        press(.down(.select), at: 62)
        #expect(core.state.overlay == .none && !core.state.breathing.isRunning)
        #expect(saves[.sessionHistory] == nil)
        #expect(core.state.breathing.history.last == SessionRecord(started: WallTime(secondsSinceEpoch: 1_000_001), seconds: 60, pattern: "box"))
    }

    @Test mutating func ratingsBeforeAndAfterGoBesideTheSession() {
        core = DeviceCore(settings: withCheckIn)
        press(.down(.right), at: 1)      // the first press gives the middle, 5
        press(.down(.right), at: 2)      // 6
        press(.down(.right), at: 3)      // 7
        guard case .rating(let q) = core.state.overlay else { Issue.record("no question"); return }
        #expect(q.rating == 7)
        press(.down(.select), at: 4)
        #expect(core.state.breathing.isRunning)
        press(.down(.select), at: 124)
        press(.down(.left), at: 125)     // the first press starts from the rating before: 7
        for i in 0..<4 { press(.down(.left), at: 126 + Double(i)) }
        effects = []
        press(.down(.select), at: 131)
        #expect(saves[.sessionHistory] == "1000004 120 box 7 3\n")
        #expect(core.state.breathing.history.last?.change == -4)
        #expect(core.state.breathing.hasRatings)
        // The rest of that SELECT press does nothing; the next one restarts, unrated.
        press(.short(.select), at: 131.1)
        #expect(!core.state.breathing.isRunning)
        // The statistics turn to the ratings with LEFT/RIGHT, and close on another button.
        hold(.left, at: 140)
        #expect(core.state.overlay == .stats && !core.state.breathing.statsShowRatings)
        press(.down(.right), at: 142)
        #expect(core.state.overlay == .stats && core.state.breathing.statsShowRatings)
        press(.down(.page), at: 143)
        #expect(core.state.overlay == .none)
    }

    @Test mutating func pageSkipsTheQuestionAndTheScaleStopsAtItsEnds() {
        core = DeviceCore(settings: withCheckIn)
        for i in 0..<8 { press(.down(.right), at: Double(i)) }
        guard case .rating(let q) = core.state.overlay else { Issue.record("no question"); return }
        #expect(q.rating == 10)
        press(.down(.page), at: 9)
        #expect(core.state.overlay == .rating(q))        // PAGE acts on its release, as everywhere
        press(.short(.page), at: 9.1)
        #expect(core.state.overlay == .none && core.state.page == .breathing)
        // Now LEFT/RIGHT choose the pattern, PAGE goes on; back on the page, asked again.
        tap(.right, at: 10)
        #expect(core.state.breathing.preset.name == "calm")
        for i in Page.allCases.indices { press(.short(.page), at: 11 + Double(i)) }
        #expect(core.state.page == .breathing)
        guard case .rating = core.state.overlay else { Issue.record("not asked again"); return }
    }

    @Test mutating func aSessionEndingByItselfAsksAfterwards() {
        var s = withCheckIn
        s.breathing.sessionMinutes = 2
        core = DeviceCore(settings: s)
        press(.down(.select), at: 0)
        run(from: 0, to: 129)
        #expect(!core.state.breathing.isRunning)
        guard case .rating(let q) = core.state.overlay else { Issue.record("not asked"); return }
        #expect(!q.isBefore)
    }
}
