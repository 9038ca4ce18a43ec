import Foundation
import Testing
import UnwindAssembly
import UnwindCore

/// The configuration's `breathing:` and `haptics:` keys: what they set, and every wrong form
/// named by its key with what is allowed (never a crash, never a silent default).
@Suite struct BreathingConfigurationTests {
    func parse(_ yaml: String) throws -> DeviceConfiguration { try DeviceConfiguration.parse(yaml, path: "unwind.conf") }

    func problems(_ yaml: String) -> [String] {
        do {
            _ = try DeviceConfiguration.parse(yaml, path: "unwind.conf")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func aPresetByName() throws {
        let c = try parse("breathing:\n  pattern: calm\n  session_minutes: 10\n  check_in: true\n")
        #expect(c.settings.pattern == BreathingPreset.calm.pattern)
        #expect(c.settings.breathing.patternName == "calm")
        #expect(c.settings.breathing.sessionMinutes == 10)
        #expect(c.settings.breathing.checkIn)
        #expect(try parse("breathing:\n  pattern: Sigh\n").settings.breathing.patternName == "sigh")
        #expect(try parse("breathing:\n  session_minutes: open\n").settings.breathing.sessionMinutes == 0)
    }

    @Test func aPatternByItsLengths() throws {
        #expect(try parse("breathing:\n  pattern: 4,7,8,0\n").settings.pattern == BreathingPreset.fourSevenEight.pattern)
        #expect(try parse("breathing:\n  pattern: 2+1,0,6,0\n").settings.pattern == BreathingPreset.sigh.pattern)
        #expect(try parse("breathing:\n  pattern: 4,0,6,0 from 11 over 180\n").settings.pattern == BreathingPreset.calm.pattern)
        // The older keys, a hold of 0 now allowed (4-7-8 can be set), a top-up.
        let c = try parse("breathing:\n  inhale: 4\n  hold_after_inhale: 7\n  exhale: 8\n  hold_after_exhale: 0\n")
        #expect(c.settings.pattern == BreathingPreset.fourSevenEight.pattern)
        #expect(c.settings.breathing.patternName == nil)
        let s = try parse("breathing:\n  inhale: 2\n  top_up: 1\n  hold_after_inhale: 0\n  exhale: 6\n  hold_after_exhale: 0\n")
        #expect(s.settings.pattern == BreathingPreset.sigh.pattern)
        // Only some lengths: the others keep the square's 4 s.
        #expect(try parse("breathing:\n  exhale: 6.5\n").settings.pattern == BreathingPattern(exhale: .milliseconds(6500)))
    }

    @Test func pulsesForEachPhase() throws {
        let c = try parse("haptics:\n  inhale: 150\n  exhale: 500, 200\n  hold: none\n  top_up: 40,40\n  gap_ms: 80\n")
        let h = c.settings.haptics
        #expect(h.inhale == [.milliseconds(150)] && h.exhale == [.milliseconds(500), .milliseconds(200)])
        #expect(h.hold.isEmpty && h.topUp == [.milliseconds(40), .milliseconds(40)] && h.gap == .milliseconds(80))
        // The older keys still mean what they meant: the short pulses' length and their counts.
        let old = try parse("haptics:\n  pulse_ms: 200\n  breath_pulses: 2\n  hold_pulses: 3\n").settings.haptics
        #expect(old.inhale == [.milliseconds(200), .milliseconds(200)])
        #expect(old.exhale == [.milliseconds(400), .milliseconds(400)])
        #expect(old.hold == Array(repeating: .milliseconds(200), count: 3))
        #expect(old.topUp == HapticStyle.defaultTopUp)
        #expect(try parse("").settings.haptics == HapticStyle())
    }

    /// Each wrong form of each key, and the words that must name it.
    @Test(arguments: [
        ("breathing:\n  pattern: boxx\n", "breathing.pattern: \"boxx\" is neither a preset (box, calm, 478, sigh, resonance) nor lengths like 4,7,8,0"),
        ("breathing:\n  pattern: 4,7,8\n", "breathing.pattern: expected four lengths"),
        ("breathing:\n  pattern: 0,4,4,4\n", "breathing.pattern: a breath in lasts 1 to 20 seconds"),
        ("breathing:\n  pattern: 4,0,6,0 from 5 over 180\n", "breathing.pattern: a slowing pace starts faster"),
        ("breathing:\n  pattern: [4, 4, 4, 4]\n", "breathing.pattern: expected a single value"),
        ("breathing:\n  pattern: box\n  inhale: 5\n", "breathing.pattern: give either breathing.pattern or the lengths (breathing.inhale), not both"),
        ("breathing:\n  inhale: 0\n", "breathing.inhale: 0 s is out of range; allowed 1.0…20.0 s"),
        ("breathing:\n  hold_after_inhale: 21\n", "breathing.hold_after_inhale: 21 s is out of range; allowed 0 or 1.0…20.0 s"),
        ("breathing:\n  hold_after_exhale: 0.5\n", "breathing.hold_after_exhale: 0.5 s is out of range"),
        ("breathing:\n  exhale: four\n", "breathing.exhale: expected seconds with at most one decimal (4, 4.4), got \"four\""),
        ("breathing:\n  exhale: 4.25\n", "breathing.exhale: expected seconds with at most one decimal"),
        ("breathing:\n  exhale: -1\n", "breathing.exhale: expected seconds"),
        ("breathing:\n  exhale: .nan\n", "breathing.exhale: expected seconds"),
        ("breathing:\n  exhale: 1e1\n", "breathing.exhale: expected seconds"),
        ("breathing:\n  top_up: 6\n", "breathing.top_up: 6 s is out of range; allowed 0 or 0.5…5.0 s"),
        ("breathing:\n  session_minutes: 7\n", "breathing.session_minutes: expected open, 2, 5, 10 or 20, got \"7\""),
        ("breathing:\n  session_minutes: -5\n", "breathing.session_minutes: expected open, 2, 5, 10 or 20"),
        ("breathing:\n  session_minutes: 05\n", "breathing.session_minutes: expected open, 2, 5, 10 or 20"),
        ("breathing:\n  check_in: maybe\n", "breathing.check_in: expected true or false, got \"maybe\""),
        ("breathing:\n  chek_in: true\n", "breathing.chek_in: unknown key; did you mean breathing.check_in?"),
        ("breathing: calm\n", "breathing: expected keys under it (pattern: calm …), not \"calm\""),
        ("haptics: [1, 2]\n", "haptics: expected keys under it"),
        ("haptics:\n  inhale: 10\n", "haptics.inhale: expected pulse lengths in ms (20 to 1000)"),
        ("haptics:\n  exhale: 400,,400\n", "haptics.exhale: expected pulse lengths in ms"),
        ("haptics:\n  hold: 100,100,100,100,100\n", "haptics.hold: at most 4 pulses; got 5"),
        ("haptics:\n  top_up: fast\n", "haptics.top_up: expected pulse lengths in ms"),
        ("haptics:\n  inhale: 120\n  pulse_ms: 100\n", "haptics.inhale: haptics.pulse_ms also sets these pulses; give one of them"),
        ("haptics:\n  exhale: 400\n  breath_pulses: 2\n", "haptics.exhale: haptics.breath_pulses also sets these pulses"),
        ("haptics:\n  pulse_ms: 5\n", "haptics.pulse_ms: 5 is out of range; allowed 20…1000"),
        ("haptics:\n  gap_ms: 2000\n", "haptics.gap_ms: 2000 is out of range"),
        ("haptics:\n  hold_pulses: two\n", "haptics.hold_pulses: expected a whole number, got \"two\""),
    ])
    func wrongBreathingKeysAreNamed(_ yaml: String, _ expected: String) {
        let found = problems(yaml)
        #expect(found.contains { $0.hasPrefix(expected) || $0.contains(expected) }, "\(yaml) gave \(found)")
        #expect(found.count == 1, "\(yaml) gave \(found)")
    }
}
