/// One thing wrong in the configuration file, named by its key.
public struct ConfigProblem: Error, Equatable, CustomStringConvertible, Sendable {
    public var key: String
    public var message: String
    public init(key: String, message: String) {
        self.key = key
        self.message = message
    }
    public var description: String { key.isEmpty ? message : "\(key): \(message)" }
}

/// All that is wrong with a configuration file, one line per key.
public struct ConfigErrors: Error, Equatable, CustomStringConvertible, Sendable {
    public var path: String
    public var problems: [ConfigProblem]
    public var description: String {
        problems.map { "\(path): \($0)" }.joined(separator: "\n")
    }
}

/// Reads typed values out of a parsed YAML document (YAMLDocument) by dotted key, collecting a clear problem
/// for every wrong key instead of stopping at the first, and noticing keys nobody asked for
/// (most often a typo).
public final class ConfigReader {
    let root: YAMLNode?
    public private(set) var problems: [ConfigProblem] = []
    private var known: Set<String> = []

    /// Parses YAML text with libyaml; a syntax error becomes a problem with its line.
    public init(yaml: String) {
        do {
            root = try YAMLDocument.compose(yaml)
        } catch {
            root = nil
            problems.append(ConfigProblem(key: "", message: Self.syntaxProblem(error)))
        }
        if let root, root.mapping == nil, !(root.string?.isEmpty ?? false) {
            problems.append(ConfigProblem(key: "", message: "expected sections of `key: value` lines"))
        }
    }

    /// Each section's keys by name, built the first time the section is read: walking the
    /// section's pairs for each of some sixty lookups into a section of 60,000 keys took seconds.
    private var sections: [String: [String: YAMLNode]] = [:]

    private func node(_ key: String) -> YAMLNode? {
        let parts = key.split(separator: ".")
        // The key and every section on the way to it are known keys.
        for i in 1...parts.count { known.insert(parts.prefix(i).joined(separator: ".")) }
        var n = root
        var path = ""
        for p in parts {
            guard let m = n?.mapping else { return nil }
            n = keys(of: m, at: path)[String(p)]
            path += p + "."
        }
        return n
    }

    private func keys(of m: [(key: YAMLNode, value: YAMLNode)], at path: String) -> [String: YAMLNode] {
        if let keys = sections[path] { return keys }
        var keys: [String: YAMLNode] = [:]
        // A key given twice is refused (YAMLDocument); should two keys still read alike, the
        // last wins.
        for (k, v) in m { if let name = k.string { keys[name] = v } }
        sections[path] = keys
        return keys
    }

    private func scalar(_ key: String) -> String? {
        guard let n = node(key) else { return nil }
        guard case .scalar(let s, let isNull) = n.content else {
            problems.append(ConfigProblem(key: key, message: "expected a single value, not a list or section"))
            return nil
        }
        if isNull || s == "~" || s == "null" || s.isEmpty { return nil }
        return s
    }

    public func string(_ key: String, default d: String) -> String { scalar(key) ?? d }

    public func optionalString(_ key: String) -> String? { scalar(key) }

    public func int(_ key: String, default d: Int, in range: ClosedRange<Int>, hex: Bool = false) -> Int {
        guard let s = scalar(key) else { return d }
        let v: Int?
        if s.hasPrefix("0x") || s.hasPrefix("0X") { v = Int(s.dropFirst(2), radix: 16) } else { v = Int(s) }
        guard let v else {
            problems.append(ConfigProblem(key: key, message: "expected a whole number, got \(ConfigReader.quoted(s))"))
            return d
        }
        guard range.contains(v) else {
            func show(_ n: Int) -> String { hex ? "0x" + String(n, radix: 16, uppercase: true) : String(n) }
            problems.append(ConfigProblem(key: key, message: "\(show(v)) is out of range; allowed \(show(range.lowerBound))…\(show(range.upperBound))"))
            return d
        }
        return v
    }

    public func seconds(_ key: String, default d: Double, in range: ClosedRange<Double>) -> Duration {
        guard let s = scalar(key) else { return .nanoseconds(Int64((d * 1e9).rounded())) }
        guard let v = Double(s), v.isFinite else {
            problems.append(ConfigProblem(key: key, message: "expected a number of seconds, got \(ConfigReader.quoted(s))"))
            return .nanoseconds(Int64((d * 1e9).rounded()))
        }
        guard range.contains(v) else {
            problems.append(ConfigProblem(key: key, message: "\(s) s is out of range; allowed \(range.lowerBound)…\(range.upperBound) s"))
            return .nanoseconds(Int64((d * 1e9).rounded()))
        }
        return .nanoseconds(Int64((v * 1e9).rounded()))
    }

    public func bool(_ key: String, default d: Bool) -> Bool {
        guard let s = scalar(key) else { return d }
        switch s.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            problems.append(ConfigProblem(key: key, message: "expected true or false, got \(ConfigReader.quoted(s))"))
            return d
        }
    }

    /// Records a problem found by a caller's own check of a value it read.
    public func problem(_ key: String, _ message: String) {
        problems.append(ConfigProblem(key: key, message: message))
    }

    /// Up to this many unknown keys are reported one per line, each with the nearest known key;
    /// more than that is not a typo but the wrong file, and is said in one line. The limit
    /// also bounds the edit-distance work, which made a file of 60,000 keys take a minute.
    public static let unknownKeysListed = 10

    /// Keys present in the file that no reader asked for, each reported with the nearest known key.
    public func reportUnknownKeys() {
        guard let m = root?.mapping else { return }
        var unknown: [String] = []
        var count = 0
        walk(m, prefix: "") { name in
            count += 1
            if unknown.count <= Self.unknownKeysListed { unknown.append(name) }
        }
        // Not one setting at the top: another file (a link to /etc/shadow, say), whose lines are
        // not ours to print. Only a key that is a typo of a setting is named.
        let ours = m.contains { known.contains($0.key.string ?? "") }
        let wrongFile = "is this an unwind configuration file? (deploy/unwind.conf in the source lists every key)"
        if count <= Self.unknownKeysListed {
            var unnamed = 0
            for name in unknown {
                let near = nearest(name)
                if !ours && near == nil {
                    unnamed += 1
                    continue
                }
                var msg = "unknown key"
                if let near { msg += "; did you mean \(near)?" }
                problems.append(ConfigProblem(key: Self.shown(name), message: msg))
            }
            if unnamed > 0 {
                problems.append(ConfigProblem(key: "", message: "\(unnamed) \(unnamed == 1 ? "key" : "keys") no setting has; \(wrongFile)"))
            }
        } else {
            let first = ours ? " (" + unknown.prefix(3).map(Self.shown).joined(separator: ", ") + " …)" : ""
            problems.append(ConfigProblem(key: "", message: "\(count) keys no setting has\(first); \(wrongFile)"))
        }
    }

    private func walk(_ m: [(key: YAMLNode, value: YAMLNode)], prefix: String, unknown: (String) -> Void) {
        for (k, v) in m {
            let name = prefix + (k.string ?? "?")
            if !known.contains(name) {
                unknown(name)
            } else if let sub = v.mapping {
                walk(sub, prefix: name + ".", unknown: unknown)
            }
        }
    }

    /// A value as a message quotes it: a short fragment, in quotes, its control characters
    /// escaped — enough to find it in the file, never a whole line of something else.
    public static func quoted(_ value: String) -> String {
        String(reflecting: value.count <= 40 ? value : String(value.prefix(40)) + "…")
    }

    /// A key as a message shows it: a key is short, a long one is cut.
    static func shown(_ key: String) -> String {
        key.count <= 60 ? key : String(key.prefix(60)) + "…"
    }

    private func nearest(_ key: String) -> String? {
        // No known key is longer than 40 characters: a longer one is no typo of one.
        guard key.count <= 64 else { return nil }
        let best = known.map { ($0, editDistance($0, key)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, key.count / 4) else { return nil }
        return best.0
    }

    /// One line for a YAML syntax error: where, and what (libyaml's words); never the file's text.
    static func syntaxProblem(_ error: YAMLProblem) -> String {
        switch error {
        case .syntax(let problem, let line, let column):
            let what = problem.contains("Maximum nesting level") ? "nested more than 1000 levels deep" : problem
            return "line \(line), column \(column): not valid YAML: \(what)"
        case .reader(let problem, let offset):
            return "not valid YAML: \(problem)" + (offset.map { " (at byte \($0))" } ?? "")
        case .duplicateKeys(let duplicates, let line, let column):
            let keys = duplicates.prefix(5).map(shown).joined(separator: ", ")
            return "line \(line), column \(column): the section starting here has "
                + "\(keys) more than once; give each key once"
        case .memory:
            return "not valid YAML: out of memory"
        }
    }
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var prev = Array(0...b.count)
    for i in 1...max(1, a.count) where !a.isEmpty {
        var cur = [i] + Array(repeating: 0, count: b.count)
        for j in 1...max(1, b.count) where !b.isEmpty {
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        prev = cur
    }
    return a.isEmpty ? b.count : prev[b.count]
}

extension ConfigReader {
    /// The text given where a section of keys belongs (`breathing: calm` for `breathing:` with
    /// `pattern: calm` under it), or nil: without this check such a line would be quietly ignored.
    public func valueInsteadOfSection(_ section: String) -> String? {
        guard let n = root?.mapping?.last(where: { $0.key.string == section })?.value, n.mapping == nil else { return nil }
        return n.string ?? "a list"
    }
}
