import UnwindCore

/// The configuration's `breathing:` and `haptics:` sections (and `--pattern`), read in one
/// place: every key checked, each wrong one named with what is allowed.
///
///     breathing:
///       pattern: calm          # a preset (box, calm, 478, sigh, resonance) or lengths: 4,7,8,0
///                              # 2+1,0,6,0 (a top-up sip), 4,0,6,0 from 11 over 180 (slowing)
///       inhale: 4              # … or the lengths one by one (seconds, tenths allowed;
///       hold_after_inhale: 4   #     a hold may be 0)
///       exhale: 4
///       hold_after_exhale: 4
///       top_up: 0              # a second, short inhale: 0 or 0.5 to 5 s
///       session_minutes: open  # open, 2, 5, 10 or 20
///       check_in: false        # ask how anxious (0-10) before and after a session
///     haptics:
///       inhale: 120            # each phase's pulses: their lengths in ms, comma-separated,
///       exhale: 400            #   up to 4, 20 to 1000 ms each; "none" for no pulse
///       hold: 120, 120
///       top_up: 60, 60, 60
///       gap_ms: 100
///       pulse_ms / breath_pulses / hold_pulses   the older keys, still read: the length of the
///                              short pulses (in, hold) and how many a breath and a hold get
public enum BreathingConfiguration {
    static let lengthKeys = ["breathing.inhale", "breathing.hold_after_inhale", "breathing.exhale",
                             "breathing.hold_after_exhale", "breathing.top_up"]

    /// A preset's name or a pattern's lengths, as `breathing.pattern` and `--pattern` take them.
    public static func pattern(_ text: String) throws(BreathingPattern.ParseProblem) -> (pattern: BreathingPattern, name: String?) {
        let t = text.trimmingBlanks
        if let p = BreathingPreset.builtIn.first(where: { $0.name == t.lowercased() }) { return (p.pattern, p.name) }
        guard t.first?.isNumber == true else {
            throw .malformed("\(ConfigReader.quoted(text)) is neither a preset (\(BreathingPreset.builtIn.map(\.name).joined(separator: ", "))) nor lengths like 4,7,8,0")
        }
        return (try BreathingPattern.parse(t), nil)
    }

    static func read(_ r: ConfigReader, into settings: inout DeviceSettings) {
        for (section, example) in [("breathing", "pattern: calm"), ("haptics", "inhale: 120")] {
            if let given = r.valueInsteadOfSection(section) {
                r.problem(section, "expected keys under it (\(example) …), not \(ConfigReader.quoted(given))")
            }
        }
        readPattern(r, into: &settings)
        if let text = r.optionalString("breathing.session_minutes") {
            if let m = SessionLength.minutes(text) { settings.breathing.sessionMinutes = m } else {
                r.problem("breathing.session_minutes", "expected open, 2, 5, 10 or 20, got \(ConfigReader.quoted(text))")
            }
        }
        settings.breathing.checkIn = r.bool("breathing.check_in", default: false)
        readHaptics(r, into: &settings)
    }

    static func readPattern(_ r: ConfigReader, into settings: inout DeviceSettings) {
        let named = r.optionalString("breathing.pattern")
        let given = lengthKeys.filter { r.optionalString($0) != nil }
        if named != nil && !given.isEmpty {
            r.problem("breathing.pattern", "give either breathing.pattern or the lengths (\(given.joined(separator: ", "))), not both")
        }
        // The lengths are checked even beside a pattern, so each wrong one is named.
        let lengths = given.isEmpty ? nil : lengthsPattern(r, settings.pattern)
        if let named {
            do {
                let p = try pattern(named)
                settings.pattern = p.pattern
                settings.breathing.patternName = p.name
            } catch {
                r.problem("breathing.pattern", error.description)
            }
        } else if let lengths {
            settings.pattern = lengths
        }
    }

    /// The pattern `breathing.inhale` … `breathing.top_up` give (the others as in `d`), or nil
    /// when one is wrong (each wrong key reported).
    static func lengthsPattern(_ r: ConfigReader, _ d: BreathingPattern) -> BreathingPattern? {
        var wrong = false
        func length(_ key: String, _ current: Duration, _ range: ClosedRange<Double>, zero: Bool) -> Duration {
            guard let text = r.optionalString(key) else { return current }
            guard let tenths = BreathingPattern.parseTenths(Substring(text)) else {
                r.problem(key, "expected seconds with at most one decimal (4, 4.4), got \(ConfigReader.quoted(text))")
                wrong = true
                return current
            }
            let s = Double(tenths) / 10
            guard range.contains(s) || (zero && tenths == 0) else {
                r.problem(key, "\(text) s is out of range; allowed \(zero ? "0 or " : "")\(range.lowerBound)…\(range.upperBound) s")
                wrong = true
                return current
            }
            return .milliseconds(Int64(tenths) * 100)
        }
        var p = BreathingPattern(
            inhale: length("breathing.inhale", d.inhale, 1...20, zero: false),
            holdAfterInhale: length("breathing.hold_after_inhale", d.holdAfterInhale, 1...20, zero: true),
            exhale: length("breathing.exhale", d.exhale, 1...20, zero: false),
            holdAfterExhale: length("breathing.hold_after_exhale", d.holdAfterExhale, 1...20, zero: true),
            topUp: length("breathing.top_up", d.topUp, 0.5...5, zero: true))
        p.ramp = nil
        if wrong { return nil }
        if let why = p.problem {
            r.problem("breathing", why)
            return nil
        }
        return p
    }

    static func readHaptics(_ r: ConfigReader, into settings: inout DeviceSettings) {
        var h = settings.haptics
        h.gap = .milliseconds(r.int("haptics.gap_ms", default: Int(h.gap.nanoseconds / 1_000_000), in: 20...1000))
        // The older keys: -1 when absent (or wrong, already reported).
        let pulse = r.int("haptics.pulse_ms", default: -1, in: 20...1000)
        let breaths = r.int("haptics.breath_pulses", default: -1, in: 0...4)
        let holds = r.int("haptics.hold_pulses", default: -1, in: 0...4)
        let short = Duration.milliseconds(pulse > 0 ? pulse : 120)
        if pulse > 0 || breaths >= 0 {
            let n = breaths >= 0 ? breaths : 1
            h.inhale = Array(repeating: short, count: n)
            h.exhale = Array(repeating: HapticStyle.defaultExhale[0], count: n)
        }
        if pulse > 0 || holds >= 0 { h.hold = Array(repeating: short, count: holds >= 0 ? holds : 2) }

        func pulses(_ key: String, _ current: [Duration], _ older: String?) -> [Duration] {
            guard let text = r.optionalString(key) else { return current }
            if let older { r.problem(key, "\(older) also sets these pulses; give one of them") }
            if text.lowercased() == "none" || text == "0" { return [] }
            var out: [Duration] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let t = part.trimmingBlanks
                guard let ms = Int(t), (20...1000).contains(ms) else {
                    r.problem(key, "expected pulse lengths in ms (20 to 1000) separated by commas, like 120, 120, or none; got \(ConfigReader.quoted(text))")
                    return current
                }
                out.append(.milliseconds(ms))
            }
            if out.count > HapticStyle.maximumPulses {
                r.problem(key, "at most \(HapticStyle.maximumPulses) pulses; got \(out.count)")
                return current
            }
            return out
        }
        let breathKeys = [pulse > 0 ? "haptics.pulse_ms" : nil, breaths >= 0 ? "haptics.breath_pulses" : nil].compactMap { $0 }
        let holdKeys = [pulse > 0 ? "haptics.pulse_ms" : nil, holds >= 0 ? "haptics.hold_pulses" : nil].compactMap { $0 }
        h.inhale = pulses("haptics.inhale", h.inhale, breathKeys.first)
        h.exhale = pulses("haptics.exhale", h.exhale, breaths >= 0 ? "haptics.breath_pulses" : nil)
        h.hold = pulses("haptics.hold", h.hold, holdKeys.first)
        h.topUp = pulses("haptics.top_up", h.topUp, nil)
        if let why = h.problem { r.problem("haptics", why) } else { settings.haptics = h }
        // Set one by one, two phases must not feel the same: telling them apart with eyes closed
        // is what the pulses are for. (The older keys keep their old meaning, where a breath and
        // a hold could be given the same pulses on purpose.)
        let given: [(String, [Duration])] = [("inhale", h.inhale), ("exhale", h.exhale), ("hold", h.hold), ("top_up", h.topUp)]
            .filter { r.optionalString("haptics." + $0.0) != nil }
        let all: [(String, [Duration])] = [("inhale", h.inhale), ("exhale", h.exhale), ("hold", h.hold), ("top_up", h.topUp)]
        for (name, list) in given {
            if let twin = all.first(where: { $0.0 != name && $0.1 == list && !list.isEmpty }) {
                r.problem("haptics." + name, "the same pulses as \(twin.0): with eyes closed the two phases could not be told apart")
                break
            }
        }
    }
}
