import Testing
@testable import UnwindCore

/// The patterns as phase lists, the presets, their words (`--pattern`, `breathing.pattern`,
/// `patterns.txt`) and every hostile form of those words.
@Suite struct BreathingPatternTests {
    @Test func everyPresetIsValidAndNamedInTheDevicesWords() {
        #expect(BreathingPreset.builtIn.map(\.name) == ["box", "calm", "478", "sigh", "resonance"])
        for p in BreathingPreset.builtIn {
            #expect(p.pattern.problem == nil, "\(p.name): \(p.pattern.problem ?? "")")
            #expect(BreathingPreset.problem(withName: p.name) == nil)
            #expect(!p.isCustom)
        }
        #expect(BreathingPreset.box.pattern == .box)
        // The exhale is longer than the inhale in every preset but the square.
        for p in BreathingPreset.builtIn where p.name != "box" { #expect(p.pattern.exhale > p.pattern.inhale + p.pattern.topUp) }
        #expect(BreathingPreset.resonance.pattern.tenthsPerMinute == 55)   // 5.5 breaths a minute
        #expect(BreathingPreset.calm.pattern.tenthsPerMinute == 60)
        #expect(BreathingPreset.calm.pattern.ramp == PaceRamp(fromTenths: 110, over: .seconds(180)))
    }

    @Test func phasesAreTheNonzeroOnesInBreathingOrder() {
        func phases(_ p: BreathingPattern) -> [BreathingPhase] { (0..<p.phaseCount).map { p.phase($0) } }
        #expect(phases(.box) == [.inhale, .holdAfterInhale, .exhale, .holdAfterExhale])
        #expect(phases(BreathingPreset.calm.pattern) == [.inhale, .exhale])
        #expect(phases(BreathingPreset.fourSevenEight.pattern) == [.inhale, .holdAfterInhale, .exhale])
        #expect(phases(BreathingPreset.sigh.pattern) == [.inhale, .topUp, .exhale])
        #expect(phases(BreathingPreset.resonance.pattern) == [.inhale, .exhale])
        #expect(BreathingPattern.box.isSquare)
        #expect(BreathingPreset.builtIn.filter(\.pattern.isSquare).map(\.name) == ["box"])
        #expect(BreathingPattern(holdAfterExhale: .zero).isSquare == false)
    }

    @Test(arguments: [
        ("4,4,4,4", BreathingPattern.box),
        ("4,7,8,0", BreathingPreset.fourSevenEight.pattern),
        ("2+1,0,6,0", BreathingPreset.sigh.pattern),
        ("4.4,0,6.5,0", BreathingPreset.resonance.pattern),
        ("4,0,6,0 from 11 over 180", BreathingPreset.calm.pattern),
        ("  4,0,6,0   from 11   over 180 ", BreathingPreset.calm.pattern),
        ("3,1,5,2", BreathingPattern(inhale: .seconds(3), holdAfterInhale: .seconds(1), exhale: .seconds(5), holdAfterExhale: .seconds(2))),
        ("20,20,20,20", BreathingPattern(inhale: .seconds(20), holdAfterInhale: .seconds(20), exhale: .seconds(20), holdAfterExhale: .seconds(20))),
        ("1,0,2,0 from 30 over 10", BreathingPattern(inhale: .seconds(1), holdAfterInhale: .zero, exhale: .seconds(2), holdAfterExhale: .zero,
                                                     ramp: PaceRamp(fromTenths: 300, over: .seconds(10)))),
    ])
    func validPatternsParse(_ text: String, _ expected: BreathingPattern) throws {
        let p = try BreathingPattern.parse(text)
        #expect(p == expected)
        #expect(try BreathingPattern.parse(p.text) == p)     // the words round-trip
    }

    /// `--pattern`, `breathing.pattern` and each line of `patterns.txt` are typed by people:
    /// every one of these is refused with a reason, never a crash or a silent fix.
    @Test(arguments: [
        "", " ", "4", "4,4,4", "4,4,4,4,4", "4,,4,4", ",4,4,4", "4,4,4,", "-4,4,4,4", "+4,4,4,4",
        "4.45,4,4,4", "4.,4,4,4", ".5,4,4,4", "4e0,4,4,4", "0x4,4,4,4", "inf,4,4,4", "nan,4,4,4",
        "0,4,4,4", "4,4,0,4", "21,4,4,4", "4,4,4,20.1", "0.9,0,6,0", "4,0.5,4,4", "4,4,4,0.9",
        "4+0.4,0,6,0", "4+5.1,0,6,0", "4+,0,6,0", "+1,0,6,0", "4+1+1,0,6,0", "4,4+1,4,4",
        "٤,4,4,4", "４,4,4,4", "4;4;4;4", "4 4 4 4", "4,4,4,4 ", "99999999999,4,4,4", "4,4,4,4\n",
        "4,0,6,0 from", "4,0,6,0 from 11", "4,0,6,0 from 11 over", "4,0,6,0 to 11 over 180",
        "4,0,6,0 from 11 over 180 extra", "4,0,6,0 from 6 over 180", "4,0,6,0 from 5 over 180",
        "4,0,6,0 from 31 over 180", "4,0,6,0 from 11 over 5", "4,0,6,0 from 11 over 1201",
        "4,0,6,0 from 11 over 99999999999999999999", "4,0,6,0 from 11 over -180", "4,0,6,0 from 11.55 over 180",
        "4,0,6,0 from x over 180", "1,0,1,0 from 30 over 10", "box", "4,4,4,4\u{0}",
    ])
    func hostilePatternsAreRefused(_ text: String) {
        // "4,4,4,4 " trims to a valid pattern: words are split on spaces, the tail is empty.
        if text == "4,4,4,4 " { #expect(throws: Never.self) { try BreathingPattern.parse(text) }; return }
        #expect(throws: BreathingPattern.ParseProblem.self) { try BreathingPattern.parse(text) }
    }

    @Test func problemsSayWhatIsAllowed() {
        #expect(throws: BreathingPattern.ParseProblem.invalid("a breath in lasts 1 to 20 seconds")) { try BreathingPattern.parse("0,4,4,4") }
        #expect(throws: BreathingPattern.ParseProblem.invalid("a hold lasts 0 (none) or 1 to 20 seconds")) { try BreathingPattern.parse("4,0.5,4,4") }
        #expect(BreathingPattern(inhale: .milliseconds(4050)).problem?.contains("tenths") == true)
        #expect(BreathingPattern(inhale: .milliseconds(500)).problem != nil)
        #expect(BreathingPattern(exhale: .seconds(21)).problem != nil)
        #expect(BreathingPattern(holdAfterInhale: .zero, holdAfterExhale: .zero).problem == nil)   // 4-0-4-0 is fine now
    }

    @Test func namesAreWhatThePageCanShow() {
        for good in ["evening", "a", "4-2-8", "night.2", "abcdefghij"] { #expect(BreathingPreset.problem(withName: good) == nil, "\(good)") }
        for bad in ["", "Evening", "abcdefghijk", "-x", ".x", "a b", "é", "a/b", "a\n", "ünf", "x_y", "🙂"] {
            #expect(BreathingPreset.problem(withName: bad) != nil, "\(bad)")
        }
        #expect(BreathingPattern(inhale: .milliseconds(4400), holdAfterInhale: .zero, exhale: .milliseconds(6500),
                                 holdAfterExhale: .zero).numbersName == "4.4-6.5")
        #expect(BreathingPreset.sigh.pattern.numbersName == "2-1-6")
    }
}

@Suite struct HapticStyleTests {
    @Test func defaultsTellThePhasesApartByCountAndLength() {
        let h = HapticStyle()
        #expect(h.problem == nil)
        let kinds: [BreathingPhase] = [.inhale, .exhale, .holdAfterInhale, .topUp]
        for (i, a) in kinds.enumerated() {
            for b in kinds[(i + 1)...] {
                let pa = h.pulses(for: a), pb = h.pulses(for: b)
                #expect(pa.count != pb.count || pa[0] != pb[0], "\(a) and \(b) feel the same")
            }
        }
        #expect(h.pulses(for: .inhale).count == 1 && h.pulses(for: .exhale).count == 1)
        #expect(h.pulses(for: .exhale)[0] > h.pulses(for: .inhale)[0] * 3)
        #expect(h.pulses(for: .holdAfterInhale) == h.pulses(for: .holdAfterExhale))
    }

    @Test func aPhasesPulsesStartOnItsStartAndNeverReachTheNext() {
        let h = HapticStyle()
        var edges: [MotorEdge] = []
        h.edges(phase: .holdAfterInhale, at: .seconds(8), until: .seconds(12), into: &edges)
        #expect(edges.map(\.at) == [.seconds(8), .seconds(8.12), .seconds(8.22), .seconds(8.34)])
        #expect(edges.map(\.on) == [true, false, true, false])
        // A phase of 0.3 s (a fast pace): the three top-up flicks are cut to what fits before
        // the next phase, less the separation; the first always starts on the phase's start.
        edges = []
        h.edges(phase: .topUp, at: .seconds(1), until: .seconds(1.3), into: &edges)
        #expect(edges.first == MotorEdge(at: .seconds(1), on: true))
        #expect(edges.last!.at <= .seconds(1.3) - HapticStyle.separation)
        #expect(edges.count == 4)
        // Softened: as many pulses, 60 % as long; the holds silent.
        edges = []
        h.edges(phase: .topUp, at: .zero, until: .seconds(5), softened: true, into: &edges)
        #expect(edges.map(\.at) == [Instant.zero, .seconds(0.036), .seconds(0.136), .seconds(0.172), .seconds(0.272), .seconds(0.308)])
        edges = []
        h.edges(phase: .holdAfterInhale, at: .zero, until: .seconds(5), softened: true, into: &edges)
        #expect(edges.isEmpty)
        edges = []
        h.edges(phase: .exhale, at: .zero, until: .seconds(5), softened: true, into: &edges)
        #expect(edges.map(\.at) == [Instant.zero, .seconds(0.24)])
    }

    @Test func limits() {
        #expect(HapticStyle(inhale: []).problem == nil)       // no pulse for a phase is allowed
        #expect(HapticStyle(inhale: Array(repeating: .milliseconds(50), count: 5)).problem != nil)
        #expect(HapticStyle(exhale: [.milliseconds(10)]).problem != nil)
        #expect(HapticStyle(hold: [.milliseconds(1001)]).problem != nil)
        #expect(HapticStyle(gap: .milliseconds(5)).problem != nil)
    }
}
