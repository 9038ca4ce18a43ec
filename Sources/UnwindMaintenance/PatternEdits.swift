import UnwindCore

/// The maintainer's own breathing patterns (`unwind patterns add|remove`): the same rules and
/// words whether the running device makes the change or the command edits `patterns.txt`.
extension MaintenanceEdits {
    /// `existing`: every pattern offered now (the shipped ones too: their names are taken).
    public static func newPattern(name: String, words: String, existing: [BreathingPreset]) throws(ControlFailure) -> BreathingPreset {
        if let why = PatternsFile.problem(withName: name, existing: existing) { throw .input("pattern \(String(reflecting: name)): \(why)") }
        let custom = existing.filter(\.isCustom)
        if custom.count >= PatternsFile.maximumCount {
            throw .input("there are already \(custom.count) patterns of your own; at most \(PatternsFile.maximumCount) (remove one first)")
        }
        do {
            return BreathingPreset(name: name, pattern: try BreathingPattern.parse(words), isCustom: true)
        } catch {
            throw .input("pattern \(name): \(error)")
        }
    }

    /// The maintainer's patterns without `name`.
    public static func removingPattern(_ name: String, from existing: [BreathingPreset]) throws(ControlFailure) -> [BreathingPreset] {
        if BreathingPreset.builtIn.contains(where: { $0.name == name }) {
            throw .input("\(name) is shipped with the device and cannot be removed")
        }
        let custom = existing.filter(\.isCustom)
        guard custom.contains(where: { $0.name == name }) else {
            let names = custom.map(\.name)
            throw .input("there is no pattern of your own called \(String(reflecting: name))"
                         + (names.isEmpty ? " (there are none)" : "; yours: \(names.joined(separator: ", "))"))
        }
        return custom.filter { $0.name != name }
    }

    /// What a change says: the pattern's words and its breaths a minute.
    public static func describe(_ p: BreathingPreset) -> String {
        let t = p.pattern.tenthsPerMinute
        return "\(p.name): \(p.pattern.text) (\(t / 10).\(t % 10) breaths a minute\(p.pattern.ramp != nil ? " at the end of the slowing" : ""))"
    }
}
