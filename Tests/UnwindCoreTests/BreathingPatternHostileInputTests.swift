import Testing
@testable import UnwindCore

/// Hostile input to breathing patterns, timed sessions and the before/after rating: the core
/// keeps every phase felt apart, every file bounded and every value in range. A `// Regression:`
/// line names the defect its test keeps out.
@Suite struct BreathingPatternHostileInputTests {
    var core = DeviceCore()
    var effects: [Effect] = []

    func at(_ s: Double) -> Moment { Moment(.seconds(s), wall: WallTime(secondsSinceEpoch: 1_000_000 + Int64(s))) }
    mutating func press(_ g: ButtonGesture, _ s: Double) { core.apply(.button(g), at: at(s), effects: &effects) }
    mutating func tap(_ b: Button, _ s: Double) {
        press(.down(b), s); press(.short(b), s + 0.08); press(.up(b, heldFor: .milliseconds(80)), s + 0.08)
    }
    mutating func hold(_ b: Button, _ s: Double) {
        press(.down(b), s); press(.long(b), s + 0.8); press(.up(b, heldFor: .seconds(1)), s + 1)
    }
    mutating func tick(_ s: Double) { core.apply(.tick, at: at(s), effects: &effects) }
    mutating func run(_ a: Double, _ b: Double, fps: Double = 30) {
        var k = 0
        while a + Double(k) / fps <= b { tick(a + Double(k) / fps); k += 1 }
    }
    var motorEdges: [MotorEdge] { effects.compactMap { if case .motor(let e) = $0 { e } else { nil } } }

    struct Pulse: Equatable { var at: Instant; var length: Duration }
    static func pulses(_ edges: [MotorEdge]) -> [Pulse] {
        var out: [Pulse] = []
        var on: Instant?
        for e in edges {
            if e.on { on = e.at } else if let o = on { out.append(Pulse(at: o, length: e.at - o)); on = nil }
        }
        return out
    }

    // MARK: Haptics

    /// The issue: inhale, exhale, hold and top-up each feel different with eyes closed. In a timed
    /// session's last minute the pulses are "softened" (half the count, 60 % length).
    @Test func softenedPulsesStillTellEveryPhaseApart() {
        let h = HapticStyle()
        var felt: [BreathingPhase: [Duration]] = [:]
        for phase in [BreathingPhase.inhale, .exhale, .holdAfterInhale, .topUp] {
            var edges: [MotorEdge] = []
            h.edges(phase: phase, at: .seconds(10), until: .seconds(14), softened: true, into: &edges)
            felt[phase] = Self.pulses(edges).map(\.length)
        }
        // Regression: softened "breathe in" (1 × 120 ms → 72 ms) and "hold" (2 × 120 ms → 1 × 72 ms) as the same single 72 ms tap, a hold not told from a breath in in the last minute of a timed box session.
        #expect(felt[.inhale] != felt[.holdAfterInhale])
        #expect(felt[.inhale] != felt[.exhale] && felt[.exhale] != felt[.holdAfterInhale] && felt[.topUp] != felt[.inhale])
    }

    @Test func theDefaultsAreDistinctAtFullStrength() {
        let h = HapticStyle()
        let lists = [h.inhale, h.exhale, h.hold, h.topUp]
        #expect(Set(lists.map { $0.map(\.nanoseconds) }).count == 4)
    }

    // MARK: Patterns that pass validation

    /// A custom pattern the parser accepts, whose slowing pace starts at 30 breaths a minute: the
    /// first breaths squeeze every phase into a fraction of the 1 s (0.5 s top-up) the validation
    /// promises.
    @Test func aRampNeverSqueezesAPhaseBelowWhatAPersonCanFollow() throws {
        // Regression: a slowing pace whose first breaths squeeze a phase below 0.5 s accepted.
        #expect(throws: (any Error).self) { try BreathingPattern.parse("20+0.5,20,20,20 from 30 over 1200") }
        // The fastest start allowed for it: the top-up's 5 s at 7/70 of its length is 0.5 s.
        let p = try BreathingPattern.parse("20+5,20,20,20 from 7 over 1200")
        let clock = BreathingClock(pattern: p, start: .zero)
        var shortest = Duration.seconds(1000)
        for k in 0..<clock.phasesPerBreath * 3 {
            shortest = min(shortest, clock.corner(k + 1) - clock.corner(k))
        }
        #expect(shortest >= .milliseconds(490))
    }

    /// Same pattern in a real session: the motor's edges of one phase never overlap the next's.
    @Test mutating func aSqueezedPhaseNeverOverlapsTheNextPhasesPulses() throws {
        let p = try BreathingPattern.parse("20+5,20,20,20 from 7 over 1200")
        core = DeviceCore(settings: DeviceSettings(pattern: p))
        press(.down(.select), 1)
        run(1, 120)
        let edges = motorEdges.sorted { $0.at < $1.at || ($0.at == $1.at && !$0.on) }
        var on = false
        var overlapped = false
        for e in edges {
            if e.on && on { overlapped = true }
            on = e.on
        }
        #expect(!overlapped)
    }

    @Test(arguments: ["4,7,8,0", "0.5+0.5,0,1,0", "1,0,1,0 from 30 over 10", "20+5,20,20,20", "20+5,20,20,20 from 7 over 1200",
                      "1,0,1,0", "4,4,4,4 from 30 over 1200", "1+0.5,0,1,0 from 30 over 1200"])
    func clocksOfExtremePatternsStayExactAndNeverTrap(_ text: String) throws {
        guard let p = try? BreathingPattern.parse(text) else { return }
        let clock = BreathingClock(pattern: p, start: .seconds(5))
        // Corners strictly increase, and position agrees with corner over an hour.
        var last = clock.corner(0)
        #expect(last == .seconds(5))
        for k in 1..<2000 {
            let c = clock.corner(k)
            #expect(c > last, "corner \(k)")
            let pos = clock.position(at: c)
            #expect(pos.corner == k && pos.progress == 0, "corner \(k)")
            #expect(clock.firstCorner(atOrAfter: c) == k)
            last = c
        }
        // Far in the future: no trap, no overflow.
        for t: Int64 in [Int64.max / 4, Int64.max / 2, Int64.max - 10_000_000_000] {
            let pos = clock.position(at: Instant(nanoseconds: t))
            #expect(pos.progress >= 0 && pos.progress < 1)
            _ = clock.firstCorner(atOrAfter: Instant(nanoseconds: t))
        }
        _ = clock.position(at: Instant(nanoseconds: Int64.min / 2))
    }

    @Test(arguments: ["", " ", ",,,", "4,4,4", "4,4,4,4,4", "-4,4,4,4", "4e1,4,4,4", "4.44,4,4,4", "9999.9,4,4,4", "99999,4,4,4",
                      "0,0,0,0", "4,0.5,4,0", "4,21,4,0", "4+0,0,4,0", "4+6,0,4,0", "4++1,0,4,0", "+1,0,4,0", "4,0,6,0 from",
                      "4,0,6,0 from 11", "4,0,6,0 from 11 over", "4,0,6,0 from 11 over -5", "4,0,6,0 from 11 over 9999999999999999999999",
                      "4,0,6,0 from 300.1 over 180", "4,0,6,0 from 0 over 180", "4,0,6,0 from 6 over 180", "4,0,6,0 from 11 over 9",
                      "4,0,6,0 from 11 over 1201", "4,0,6,0 from 11 over 180 extra", "٤,0,6,0", "4,0,6,0\u{0}", "4,0,6,0 FROM 11 OVER 180",
                      "4, 0, 6, 0", "4,0,6,0  from  11  over  180"])
    func hostilePatternTextsAreRefusedOrSane(_ text: String) {
        guard let p = try? BreathingPattern.parse(text) else { return }
        #expect(p.problem == nil, "\(text)")
        // What is accepted round-trips through the files' words.
        #expect((try? BreathingPattern.parse(p.text)) == p, "\(text)")
    }

    // MARK: The first breath, the overlays, PANIC

    /// With check-in on, the question is on screen at start: one SELECT still starts the first breath.
    @Test mutating func withCheckInTheFirstBreathIsStillOnePressAway() {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        core = DeviceCore(settings: s)
        #expect(core.state.overlay != .none)
        press(.down(.select), 1)
        #expect(core.state.breathing.isRunning)
        #expect(motorEdges.first == MotorEdge(at: .seconds(1), on: true))
    }

    /// The person fell asleep in a 20-minute session (the feature's purpose); the "How anxious now?"
    /// question is still up in the morning. Their first SELECT in the morning does not breathe,
    /// and any answer is filed as the evening session's "after".
    @Test mutating func anAfterQuestionLeftOvernightDoesNotStandBeforeTheFirstBreath() {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        core = DeviceCore(settings: s, breathingChoice: BreathingChoice(pattern: "box", minutes: 2))
        press(.down(.select), 1)       // starts unrated
        run(1, 140, fps: 10)
        #expect(!core.state.breathing.isRunning)
        // Eight hours later.
        run(140, 140 + 8 * 3600, fps: 0.01)
        tap(.select, 30_000)           // wakes the display
        tap(.select, 30_002)
        // The evening's "How anxious now?" went away unanswered after AnxietyRating.afterLimit:
        // the morning's first SELECT past the one that wakes the display breathes, and nothing
        // is filed as the evening session's "after".
        #expect(core.state.breathing.isRunning)
        #expect(core.state.breathing.history.last?.after == nil)
    }

    /// Within its limit the after-question stands and its answer is filed; past it, it is gone.
    @Test(arguments: [false, true]) mutating func theAfterQuestionStandsForItsLimit(_ late: Bool) throws {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        core = DeviceCore(settings: s, breathingChoice: BreathingChoice(pattern: "box", minutes: 2))
        press(.down(.select), 1)       // starts unrated
        run(1, 140, fps: 10)
        guard case .rating(let q) = core.state.overlay, case .after = q.stage, let asked = q.askedAt else {
            Issue.record("no after-question: \(core.state.overlay)")
            return
        }
        let askedSeconds = Double(asked.nanoseconds) / 1e9
        let limit = Double(AnxietyRating.afterLimit.components.seconds)
        let answerAt = askedSeconds + (late ? limit + 1 : limit - 1)
        run(140, answerAt, fps: 1)
        if late {
            #expect(core.state.overlay == .none, "still asking after \(limit + 1) s")
        } else {
            guard case .rating = core.state.overlay else { Issue.record("gone before its limit: \(core.state.overlay)"); return }
            tap(.left, answerAt)           // the display slept: this press may only wake it
            press(.down(.left), answerAt + 1)
            guard case .rating(let shown) = core.state.overlay, let rating = shown.rating else {
                Issue.record("no rating given: \(core.state.overlay)")
                return
            }
            press(.down(.select), answerAt + 1.1)
            #expect(core.state.breathing.history.last?.after == rating)
        }
    }

    @Test mutating func panicWorksOverTheRatingAndTheStatistics() throws {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        core = DeviceCore(settings: s)
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+17785551234", message: "Help"))])
        #expect(core.state.overlay != .none)
        press(.down(.panic), 1); tick(2.5)
        #expect(effects.contains { if case .sendAlerts = $0 { true } else { false } })
        core = DeviceCore()
        hold(.left, 1)
        #expect(core.state.overlay == .stats)
        core.alertSlotsChanged([.ready(try AlertSlot(name: "Mum", number: "+17785551234", message: "Help"))])
        effects = []
        press(.down(.panic), 3); tick(4.5)
        #expect(effects.contains { if case .sendAlerts = $0 { true } else { false } })
        #expect(core.state.overlay == .alertStatus)
    }

    @Test mutating func everyOverlayHasAWayOut() {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        core = DeviceCore(settings: s)
        tap(.page, 1)                   // skips the question
        #expect(core.state.overlay == .none)
        #expect(core.state.page == .breathing)
        hold(.left, 2)
        #expect(core.state.overlay == .stats)
        tap(.left, 4); tap(.right, 5)    // no ratings: closes
        #expect(core.state.overlay == .none)
    }

    /// An after-rating is filed against the right session, even when two sessions share a start
    /// second (an unsynchronised clock at boot reads the same second every start).
    @Test mutating func theAfterRatingGoesToTheSessionJustEnded() {
        var s = DeviceSettings()
        s.breathing.checkIn = true
        let old = SessionRecord(started: WallTime(secondsSinceEpoch: 1_000_001), seconds: 50, pattern: "box", before: 3, after: nil)
        core = DeviceCore(settings: s, history: [old])
        press(.down(.select), 1)
        run(1, 30, fps: 10)
        press(.down(.select), 30)       // stop; the after question
        press(.down(.right), 31)        // 5
        press(.down(.select), 32)
        #expect(core.state.breathing.history.count == 2)
        #expect(core.state.breathing.history[0].after == nil)
        #expect(core.state.breathing.history[1].after == 5)
    }

    // MARK: Custom patterns from the maintainer

    /// The maintainer removes the pattern the person is breathing right now.
    @Test mutating func removingTheRunningPatternKeepsTheSessionGoing() {
        let a = BreathingPreset(name: "evening", pattern: BreathingPattern(holdAfterExhale: .zero), isCustom: true)
        core = DeviceCore(customPatterns: [a], breathingChoice: BreathingChoice(pattern: "evening", minutes: 5))
        press(.down(.select), 1)
        run(1, 10)
        core.apply(.maintainer(.setCustomPatterns([])), at: at(10), effects: &effects)
        run(10, 400, fps: 5)
        #expect(!core.state.breathing.isRunning)
        #expect(core.state.breathing.history.last?.pattern == "evening")
        #expect(core.state.breathing.preset.name == "box")
    }

    /// A custom pattern named like the configured pattern's numbers (or "custom") is silently not offered.
    @Test func aCustomPatternIsNeverSilentlyHidden() {
        var s = DeviceSettings()
        s.pattern = BreathingPattern(inhale: .milliseconds(4400), holdAfterInhale: .milliseconds(2500), exhale: .milliseconds(6500),
                                     holdAfterExhale: .milliseconds(1500), topUp: .milliseconds(500))
        let mine = BreathingPreset(name: "custom", pattern: BreathingPattern(inhale: .seconds(5)), isCustom: true)
        // `unwind patterns add custom 5,4,4,4` is accepted offline (only shipped names are taken)...
        #expect(PatternsFile.problem(withName: "custom", existing: BreathingPreset.builtIn) == nil)
        let c = DeviceCore(settings: s, customPatterns: [mine])
        // ...and the device offers it: the configured pattern, too long to be named by its
        // numbers, takes another name instead of hiding the maintainer's.
        #expect(c.state.breathing.presets.contains(mine))
        let configured = c.state.breathing.presets.first { $0.pattern == s.pattern }
        #expect(configured?.name == "custom2", "\(String(describing: configured))")
        #expect(c.state.breathing.preset == configured, "the configured pattern is no longer the one chosen at start")
    }

    @Test mutating func twentyCustomPatternsAndEveryPresetCycleWithoutTrap() {
        let custom = (0..<PatternsFile.maximumCount).map {
            BreathingPreset(name: "p\($0)", pattern: BreathingPattern(inhale: .seconds(Int64(1 + $0 % 20))), isCustom: true)
        }
        core = DeviceCore(customPatterns: custom)
        for k in 0..<60 { tap(k % 3 == 0 ? .left : .right, Double(k)) }
        for k in 0..<12 { hold(.right, 100 + Double(k) * 2) }
        #expect(core.state.breathing.presets.count == BreathingPreset.builtIn.count + custom.count)
        #expect(SessionLength.choices.contains(core.state.breathing.minutes))
    }

    // MARK: Files

    @Test(arguments: ["", "\n", "pattern\n", "pattern \n", "pattern calm", "pattern calm\nlength 7\n", "length 5\n",
                      "pattern calm\npattern box\n", "pattern CALM\n", "pattern calm\r\nlength 5\r\n", "pattern ca lm\n",
                      "pattern \u{FEFF}calm\n", "pattern calm\nlength 05\n", "pattern calm\nlength -5\n", "pattern calm\nlength open\nx y\n",
                      "pattern " + String(repeating: "a", count: 250)])
    func hostileBreathingChoiceFilesNeverTrap(_ text: String) {
        if let c = try? BreathingChoiceFile.parse(Array(text.utf8)) {
            #expect(BreathingPreset.problem(withName: c.pattern) == nil)
            #expect(SessionLength.choices.contains(c.minutes))
        }
    }

    @Test func aBadLineInTheHistoryLosesOnlyThatLine() throws {
        var lines = (0..<99).map { "\(1_700_000_000 + $0 * 600) \(60 + $0) box \($0 % 11) \(($0 + 3) % 11)" }
        lines.insert("1700000000 60 box 11 2", at: 50)       // a rating out of range
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        #expect(throws: SessionHistoryFile.Problem.self) { try SessionHistoryFile.parse(bytes) }
        let kept = SessionHistoryFile.salvage(bytes)
        #expect(kept.count == 99)
        let last = kept.last.map { Int($0.seconds) }
        #expect(last == 60 + 98)
    }

    /// A hand-edited (or appended-to) history a little over the size limit: the salvage keeps
    /// the newest sessions (the ones a clinician wants) and drops the oldest.
    @Test func anOversizedHistoryKeepsTheNewestSessions() {
        let lines = (0..<200).map { "\(1_700_000_000 + $0 * 600) \(100_000 + $0) resonance 10 0" }
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        #expect(bytes.count > SessionHistoryFile.maximumSize)
        let kept = SessionHistoryFile.salvage(bytes)
        // Regression: a salvage of `bytes.prefix(maximumSize)` only, which keeps the oldest sessions of the file.
        let last = kept.last.map { Int($0.seconds) }
        #expect(last == 100_000 + 199)
    }

    @Test(arguments: ["999999999999 999999999999 box 10 10", "0 0", "1 1 - 0 -", "1 1 - - -", "1 1 box - 10", "1 1 box 10",
                      "1 1  box", "1 1 box 01 2", "1 1 box +1 2", "1 1 BOX", "1 1 a/b", "1 1 box 10 10 10", "18446744073709551616 1"])
    func hostileHistoryLinesNeverTrap(_ line: String) {
        let records = SessionHistoryFile.salvage(Array((line + "\n").utf8))
        for r in records {
            #expect(r.seconds >= 0 && r.started.secondsSinceEpoch >= 0)
            #expect(r.before.map { (0...10).contains($0) } ?? true)
            #expect(r.after.map { (0...10).contains($0) } ?? true)
            #expect(SessionHistoryFile.salvage(Array((SessionHistoryFile.line(r) + "\n").utf8)) == [r])
        }
        // The extreme lengths in a running core's statistics and averages.
        let core = DeviceCore(totals: BreathingTotals(totalSeconds: 999_999_999_999 * 3600, shortestSeconds: 1,
                                                      longestSeconds: 999_999_999_999, count: 999_999_999_999),
                              history: records)
        _ = RatingSummary(core.state.breathing.history)
        _ = core.state.breathing.totals.averageSeconds
    }

    @Test(arguments: [String(repeating: "a 4,4,4,4\n", count: 21), "evening 4,2,8,0\nevening 4,2,8,0\n", "box 4,4,4,4\n",
                      "Evening 4,2,8,0\n", "evening  4,2,8,0\n", "evening\n", " 4,2,8,0\n", "evening 4,2,8,0\r\n",
                      "evening 4,0,6,0 from 11 over 180\nx 1+0.5,0,1,0 from 30 over 1200\n", "\u{0}vening 4,2,8,0\n"])
    func hostilePatternFilesAreRefusedOrSalvaged(_ text: String) {
        let bytes = Array(text.utf8)
        let list = (try? PatternsFile.parse(bytes)) ?? PatternsFile.salvage(bytes)
        #expect(list.count <= PatternsFile.maximumCount)
        #expect(Set(list.map(\.name)).count == list.count)
        for p in list {
            #expect(p.isCustom && p.pattern.problem == nil && BreathingPreset.problem(withName: p.name) == nil)
            #expect(!BreathingPreset.builtIn.contains { $0.name == p.name })
        }
    }

    // MARK: Long sessions

    /// A 20-minute session of a long ramped pattern, then the ramp's per-frame cost.
    @Test mutating func aLongRampedTimedSessionEndsOnABreathStart() throws {
        let p = try BreathingPattern.parse("20+5,20,20,20 from 7 over 1200")
        let mine = BreathingPreset(name: "slow", pattern: p, isCustom: true)
        core = DeviceCore(customPatterns: [mine], breathingChoice: BreathingChoice(pattern: "slow", minutes: 20))
        press(.down(.select), 0)
        guard let end = core.state.breathing.endsAt, case .running(let clock) = core.state.breathing.session else {
            Issue.record("not a timed session"); return
        }
        #expect(end >= .seconds(1200))
        #expect(clock.position(at: end).phase == .inhale && clock.position(at: end).progress == 0)
        run(0, end.asSeconds + 1, fps: 2)
        #expect(!core.state.breathing.isRunning)
        #expect(core.state.breathing.history.last?.pattern == "slow")
    }
}

extension Instant {
    var asSeconds: Double { Double(nanoseconds) / 1e9 }
}
