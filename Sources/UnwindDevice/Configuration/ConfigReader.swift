import Yams

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
public struct ConfigErrors: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var problems: [ConfigProblem]
    public var description: String {
        problems.map { "\(path): \($0)" }.joined(separator: "\n")
    }
}

/// Reads typed values out of a parsed YAML document by dotted key, collecting a clear problem
/// for every wrong key instead of stopping at the first, and noticing keys nobody asked for
/// (most often a typo).
public final class ConfigReader {
    let root: Node?
    public private(set) var problems: [ConfigProblem] = []
    private var known: Set<String> = []

    /// Parses YAML text with Yams; a syntax error becomes a problem with its line.
    public init(yaml: String) {
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            root = nil
            problems.append(ConfigProblem(key: "", message: "not valid YAML: \(error)"))
        } catch {
            root = nil
            problems.append(ConfigProblem(key: "", message: "not valid YAML: \(error)"))
        }
        if let root, root.mapping == nil, !(root.scalar?.string.isEmpty ?? false) {
            problems.append(ConfigProblem(key: "", message: "expected sections of `key: value` lines"))
        }
    }

    private func node(_ key: String) -> Node? {
        let parts = key.split(separator: ".")
        // The key and every section on the way to it are known keys.
        for i in 1...parts.count { known.insert(parts.prefix(i).joined(separator: ".")) }
        var n = root
        for p in parts {
            guard let m = n?.mapping else { return nil }
            n = m[Node(String(p))]
        }
        return n
    }

    private func scalar(_ key: String) -> String? {
        guard let n = node(key) else { return nil }
        guard let s = n.scalar?.string else {
            problems.append(ConfigProblem(key: key, message: "expected a single value, not a list or section"))
            return nil
        }
        if n.tag.rawValue == Tag.Name.null.rawValue || s == "~" || s == "null" || s.isEmpty { return nil }
        return s
    }

    public func string(_ key: String, default d: String) -> String { scalar(key) ?? d }

    public func optionalString(_ key: String) -> String? { scalar(key) }

    public func int(_ key: String, default d: Int, in range: ClosedRange<Int>, hex: Bool = false) -> Int {
        guard let s = scalar(key) else { return d }
        let v: Int?
        if s.hasPrefix("0x") || s.hasPrefix("0X") { v = Int(s.dropFirst(2), radix: 16) } else { v = Int(s) }
        guard let v else {
            problems.append(ConfigProblem(key: key, message: "expected a whole number, got \(String(reflecting: s))"))
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
            problems.append(ConfigProblem(key: key, message: "expected a number of seconds, got \(String(reflecting: s))"))
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
            problems.append(ConfigProblem(key: key, message: "expected true or false, got \(String(reflecting: s))"))
            return d
        }
    }

    /// Records a problem found by a caller's own check of a value it read.
    public func problem(_ key: String, _ message: String) {
        problems.append(ConfigProblem(key: key, message: message))
    }

    /// Keys present in the file that no reader asked for, each reported with the nearest known key.
    public func reportUnknownKeys() {
        guard let m = root?.mapping else { return }
        walk(m, prefix: "")
    }

    private func walk(_ m: Node.Mapping, prefix: String) {
        for (k, v) in m {
            let name = prefix + (k.string ?? "?")
            if !known.contains(name) {
                var msg = "unknown key"
                if let near = nearest(name) { msg += "; did you mean \(near)?" }
                problems.append(ConfigProblem(key: name, message: msg))
            } else if let sub = v.mapping {
                walk(sub, prefix: name + ".")
            }
        }
    }

    private func nearest(_ key: String) -> String? {
        let best = known.map { ($0, editDistance($0, key)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, key.count / 4) else { return nil }
        return best.0
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
