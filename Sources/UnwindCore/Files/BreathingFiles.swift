/// What the person chose on the breathing page, remembered across restarts.
public struct BreathingChoice: Equatable, Sendable {
    /// The preset's name (a shipped one or one of `patterns.txt`).
    public var pattern: String
    /// The session's length in minutes; 0: open (until SELECT stops it).
    public var minutes: Int

    public init(pattern: String, minutes: Int) {
        self.pattern = pattern
        self.minutes = minutes
    }
}

/// `breathing.txt` (ours): the pattern and session length chosen last, two `key value` lines:
///
///     pattern calm
///     length 10
///
/// `length` is `open` or 2, 5, 10 or 20 (minutes). A name that is no longer offered (a custom
/// pattern the maintainer removed) falls back to the default at start.
public enum BreathingChoiceFile {
    public static let name = "breathing.txt"
    public static let maximumSize = 256

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int, String)
        case missing(String)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(BreathingChoiceFile.name) is \(n) bytes; at most \(BreathingChoiceFile.maximumSize) expected"
            case .malformed(let l, let why): "\(BreathingChoiceFile.name) line \(l): \(why)"
            case .missing(let key): "\(BreathingChoiceFile.name) has no '\(key)' line"
            }
        }
    }

    public static func format(_ c: BreathingChoice) -> String {
        "pattern \(c.pattern)\nlength \(SessionLength.word(c.minutes))\n"
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> BreathingChoice {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var pattern: String?
        var minutes: Int?
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        for (i, raw) in lines.enumerated() {
            guard let line = String(validating: raw, as: UTF8.self) else { throw .malformed(line: i + 1, "not UTF-8 text") }
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 2 else { throw .malformed(line: i + 1, "expected 'pattern NAME' or 'length MINUTES'") }
            switch f[0] {
            case "pattern" where pattern == nil:
                let name = String(f[1])
                if let why = BreathingPreset.problem(withName: name) { throw .malformed(line: i + 1, why) }
                pattern = name
            case "length" where minutes == nil:
                guard let m = SessionLength.minutes(String(f[1])) else {
                    throw .malformed(line: i + 1, "a length is open or one of \(SessionLength.choices.dropFirst().map(String.init).joined(separator: ", ")) minutes")
                }
                minutes = m
            default:
                throw .malformed(line: i + 1, "expected 'pattern NAME' or 'length MINUTES', each once")
            }
        }
        guard let pattern else { throw .missing("pattern") }
        return BreathingChoice(pattern: pattern, minutes: minutes ?? 0)
    }
}

/// The session lengths the breathing page offers.
public enum SessionLength {
    /// Minutes; 0 is open (the session runs until SELECT stops it). Five minutes is the least the
    /// studies found to work; twenty is for falling asleep.
    public static let choices = [0, 2, 5, 10, 20]

    /// `open`, `5 min`: as the page shows it.
    public static func label(_ minutes: Int) -> String {
        switch minutes {
        case 0: "open"
        case 2: "2 min"
        case 5: "5 min"
        case 10: "10 min"
        case 20: "20 min"
        default: "\(minutes) min"
        }
    }

    /// `open` or the minutes, as `breathing.txt` and the configuration write it.
    public static func word(_ minutes: Int) -> String { minutes == 0 ? "open" : String(minutes) }

    public static func minutes(_ word: String) -> Int? {
        if word == "open" { return 0 }
        guard word.count <= 2, word.first != "0", word.allSatisfy({ $0.isASCII && $0.isNumber }), let m = Int(word),
              choices.contains(m) else { return nil }
        return m
    }
}

/// `patterns.txt` (ours): the maintainer's own patterns (`unwind patterns add`), offered on the
/// breathing page after the shipped ones. One per line, `NAME PATTERN`, in the words of
/// `--pattern`:
///
///     evening 4,2,8,0
///     slowing 4,0,6,0 from 11 over 180
///     double 2+1,0,7,0
///
/// Names are 1–10 of a-z, 0-9, '-' and '.', not a shipped preset's; at most 20 patterns.
public enum PatternsFile {
    public static let name = "patterns.txt"
    public static let maximumCount = 20
    public static let maximumSize = 4096

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case invalid(line: Int, String)
        case tooMany(Int)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(PatternsFile.name) is \(n) bytes; at most \(PatternsFile.maximumSize) expected"
            case .invalid(let l, let why): "\(PatternsFile.name) line \(l): \(why)"
            case .tooMany(let n): "\(PatternsFile.name) has \(n) patterns; at most \(PatternsFile.maximumCount)"
            }
        }
    }

    public static func format(_ presets: [BreathingPreset]) -> String {
        var s = ""
        for p in presets where p.isCustom { s += "\(p.name) \(p.pattern.text)\n" }
        return s
    }

    /// Why `name` cannot be a new custom pattern beside `existing`, or nil.
    public static func problem(withName name: String, existing: [BreathingPreset]) -> String? {
        if let why = BreathingPreset.problem(withName: name) { return why }
        if BreathingPreset.builtIn.contains(where: { $0.name == name }) { return "\(name) is a shipped preset's name" }
        if existing.contains(where: { $0.name == name }) { return "there is already a pattern called \(name)" }
        return nil
    }

    /// One line: the preset it holds, or why not.
    public static func parse(line: String, existing: [BreathingPreset]) throws(Problem) -> BreathingPreset {
        guard let space = line.firstIndex(of: " ") else { throw .invalid(line: 0, "expected NAME PATTERN, like evening 4,2,8,0") }
        let name = String(line[..<space])
        if let why = problem(withName: name, existing: existing) { throw .invalid(line: 0, why) }
        do {
            return BreathingPreset(name: name, pattern: try BreathingPattern.parse(String(line[line.index(after: space)...])), isCustom: true)
        } catch {
            throw .invalid(line: 0, "\(name): \(error)")
        }
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [BreathingPreset] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var out: [BreathingPreset] = []
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        for (i, raw) in lines.enumerated() {
            guard let line = String(validating: raw, as: UTF8.self), !line.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalid(line: i + 1, "not a line of printable text")
            }
            do { out.append(try parse(line: line, existing: out)) } catch {
                if case .invalid(_, let why) = error { throw .invalid(line: i + 1, why) }
                throw error
            }
            if out.count > maximumCount { throw .tooMany(lines.count) }
        }
        return out
    }

    /// What is kept of a file that does not parse: its good lines, up to the limit.
    public static func salvage(_ bytes: [UInt8]) -> [BreathingPreset] {
        var out: [BreathingPreset] = []
        for raw in bytes.prefix(maximumSize).split(separator: UInt8(ascii: "\n")) {
            guard out.count < maximumCount, let line = String(validating: raw, as: UTF8.self),
                  !line.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { continue }
            if let p = try? parse(line: line, existing: out) { out.append(p) }
        }
        return out
    }
}
