/// The lifetime numbers of the breathing page, as `totalTime.txt` keeps them.
/// Durations are whole seconds; sessions shorter than `BreathingTotals.minimumSession` are
/// not counted (a press and an immediate stop is not a session).
public struct BreathingTotals: Equatable, Sendable {
    public var totalSeconds: Int64
    public var shortestSeconds: Int64
    public var longestSeconds: Int64
    public var count: Int64

    public init(totalSeconds: Int64 = 0, shortestSeconds: Int64 = 0, longestSeconds: Int64 = 0, count: Int64 = 0) {
        self.totalSeconds = totalSeconds
        self.shortestSeconds = shortestSeconds
        self.longestSeconds = longestSeconds
        self.count = count
    }

    public static let zero = BreathingTotals()
    public static let minimumSession: Int64 = 1

    /// Whole seconds, rounded to the nearest.
    /// Without overflow for any values (they can come from a device's answer on the socket).
    public var averageSeconds: Int64 {
        guard count > 0, totalSeconds >= 0 else { return 0 }
        let (q, r) = totalSeconds.quotientAndRemainder(dividingBy: count)
        return r >= count - r ? q + 1 : q
    }

    /// These totals with one more session of `seconds`.
    public func adding(session seconds: Int64) -> BreathingTotals {
        guard seconds >= Self.minimumSession else { return self }
        return BreathingTotals(
            totalSeconds: totalSeconds + seconds,
            shortestSeconds: count == 0 ? seconds : min(shortestSeconds, seconds),
            longestSeconds: max(longestSeconds, seconds),
            count: count + 1)
    }
}

/// `totalTime.txt` (spec, section 3): six lines, one number each, no spaces, no blank lines:
///
///     ss        seconds part of the total time (0–59)
///     mm        minutes part of the total time (0–59)
///     hh        hours of the total time (0 or more)
///     shortest  shortest session, in seconds
///     longest   longest session, in seconds
///     count     number of sessions
public enum TotalTimeFile {
    public static let name = "totalTime.txt"
    /// Far more than any real file; anything bigger is not ours.
    public static let maximumSize = 256

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case empty
        case lineCount(Int)
        case notANumber(line: Int)
        case outOfRange(line: Int)
        case inconsistent(String)

        public var description: String {
            switch self {
            case .tooLarge(let n): "\(TotalTimeFile.name) is \(n) bytes; at most \(TotalTimeFile.maximumSize) expected"
            case .empty: "\(TotalTimeFile.name) is empty"
            case .lineCount(let n): "\(TotalTimeFile.name) has \(n) lines; 6 expected"
            case .notANumber(let l): "\(TotalTimeFile.name) line \(l) is not a whole number"
            case .outOfRange(let l): "\(TotalTimeFile.name) line \(l) is out of range"
            case .inconsistent(let why): "\(TotalTimeFile.name) is inconsistent: \(why)"
            }
        }
    }

    public static func format(_ t: BreathingTotals) -> String {
        let s = t.totalSeconds
        return "\(s % 60)\n\(s / 60 % 60)\n\(s / 3600)\n\(t.shortestSeconds)\n\(t.longestSeconds)\n\(t.count)\n"
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> BreathingTotals {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        if bytes.isEmpty { throw .empty }
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // One final newline ends the last line; it does not start an empty one.
        if lines.last?.isEmpty == true && bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
        if lines.count != 6 { throw .lineCount(lines.count) }
        var v = [Int64]()
        for (i, line) in lines.enumerated() {
            guard !line.isEmpty, line.count <= 12, line.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw .notANumber(line: i + 1)
            }
            v.append(line.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) })
        }
        if v[0] > 59 { throw .outOfRange(line: 1) }
        if v[1] > 59 { throw .outOfRange(line: 2) }
        let total = v[2] * 3600 + v[1] * 60 + v[0]
        let t = BreathingTotals(totalSeconds: total, shortestSeconds: v[3], longestSeconds: v[4], count: v[5])
        if t.count == 0 && (t.totalSeconds != 0 || t.shortestSeconds != 0 || t.longestSeconds != 0) {
            throw .inconsistent("times recorded but no sessions")
        }
        if t.shortestSeconds > t.longestSeconds { throw .inconsistent("shortest session is longer than the longest") }
        if t.longestSeconds > t.totalSeconds { throw .inconsistent("longest session is longer than the total") }
        return t
    }
}

/// One finished (or checkpointed) session, for the chart of recent sessions and the
/// clinician's export: how long, which pattern, and how anxious the person said they were
/// before and after (0–10), when they said.
public struct SessionRecord: Equatable, Sendable {
    public var started: WallTime
    public var seconds: Int64
    /// The preset's name; nil in lines written before patterns had names.
    public var pattern: String?
    public var before: Int?
    public var after: Int?

    public init(started: WallTime, seconds: Int64, pattern: String? = nil, before: Int? = nil, after: Int? = nil) {
        self.started = started
        self.seconds = seconds
        self.pattern = pattern
        self.before = before
        self.after = after
    }

    /// After minus before, when both were given (negative: calmer).
    public var change: Int? {
        guard let before, let after else { return nil }
        return after - before
    }
}

/// `sessionHistory.txt`, kept beside the spec's files: one session per line, oldest first, at
/// most `capacity` lines (the oldest drop off):
///
///     <start, Unix seconds> <duration, seconds>[ <pattern>[ <before> <after>]]
///
/// `before` and `after` are the person's anxiety ratings, 0–10, or `-` when not given; both
/// are left out when neither was. Lines of two fields (written before patterns and ratings)
/// still load. A line that does not parse is dropped and the rest kept (the file is moved aside
/// first, so nothing is lost).
public enum SessionHistoryFile {
    public static let name = "sessionHistory.txt"
    public static let capacity = 100
    public static let maximumSize = capacity * 64

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(SessionHistoryFile.name) is \(n) bytes; at most \(SessionHistoryFile.maximumSize) expected"
            case .malformed(let l): "\(SessionHistoryFile.name) line \(l) is not '<start> <seconds> [<pattern> [<before> <after>]]'"
            }
        }
    }

    public static func format(_ records: [SessionRecord]) -> String {
        var s = ""
        for r in records.suffix(capacity) { s += line(r) + "\n" }
        return s
    }

    public static func line(_ r: SessionRecord) -> String {
        var s = "\(r.started.secondsSinceEpoch) \(r.seconds)"
        guard r.pattern != nil || r.before != nil || r.after != nil else { return s }
        s += " " + (r.pattern ?? "-")
        if r.before != nil || r.after != nil { s += " " + rating(r.before) + " " + rating(r.after) }
        return s
    }

    static func rating(_ r: Int?) -> String { r.map(String.init) ?? "-" }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [SessionRecord] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var out = [SessionRecord]()
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        for (i, line) in lines.enumerated() {
            guard let r = record(line) else { throw .malformed(line: i + 1) }
            out.append(r)
        }
        return Array(out.suffix(capacity))
    }

    /// The well-formed lines of a file that does not parse.
    public static func salvage(_ bytes: [UInt8]) -> [SessionRecord] {
        // The newest sessions are at the end: an oversized file keeps its last bytes, from the
        // first whole line among them.
        Array(FileLines.newestLines(bytes, maximumSize: maximumSize).compactMap(record).suffix(capacity))
    }

    static func record(_ line: ArraySlice<UInt8>) -> SessionRecord? {
        let f = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard f.count == 2 || f.count == 3 || f.count == 5, let a = number(f[0]), let b = number(f[1]) else { return nil }
        var r = SessionRecord(started: WallTime(secondsSinceEpoch: a), seconds: b)
        if f.count >= 3 && !f[2].elementsEqual([UInt8(ascii: "-")]) {
            guard let name = String(validating: f[2], as: UTF8.self), BreathingPreset.problem(withName: name) == nil else { return nil }
            r.pattern = name
        }
        if f.count == 5 {
            guard let before = rating(f[3]), let after = rating(f[4]) else { return nil }
            r.before = before
            r.after = after
            if r.before == nil && r.after == nil { return nil }
        }
        return r
    }

    /// `-` (not given: `.some(nil)`) or 0–10; nil when it is neither.
    static func rating(_ s: ArraySlice<UInt8>) -> Int?? {
        if s.elementsEqual([UInt8(ascii: "-")]) { return .some(nil) }
        // 0–10 as written: no sign, no leading zero.
        guard s.count == 1 || s.elementsEqual([0x31, 0x30]), let n = number(s) else { return nil }
        return .some(Int(n))
    }

    private static func number(_ s: ArraySlice<UInt8>) -> Int64? { FileLines.number(s) }
}

/// What the ratings say over the recent sessions: for the statistics screen and `unwind stats`.
public struct RatingSummary: Equatable, Sendable {
    /// Sessions with both ratings.
    public var sessions: Int
    /// Mean of after − before, in tenths (−23: 2.3 calmer).
    public var averageChangeTenths: Int
    public var averageBeforeTenths: Int
    public var averageAfterTenths: Int

    public init(sessions: Int, averageChangeTenths: Int, averageBeforeTenths: Int, averageAfterTenths: Int) {
        self.sessions = sessions
        self.averageChangeTenths = averageChangeTenths
        self.averageBeforeTenths = averageBeforeTenths
        self.averageAfterTenths = averageAfterTenths
    }

    public init(_ history: [SessionRecord]) {
        var n = 0, before = 0, after = 0
        for r in history {
            guard let b = r.before, let a = r.after else { continue }
            n += 1
            before += b
            after += a
        }
        sessions = n
        func tenths(_ sum: Int) -> Int {
            guard n > 0 else { return 0 }
            let x = sum * 10
            // Rounded half away from zero, the way a person reads an average.
            return x >= 0 ? (x + n / 2) / n : -((-x + n / 2) / n)
        }
        averageBeforeTenths = tenths(before)
        averageAfterTenths = tenths(after)
        averageChangeTenths = tenths(after - before)
    }

    /// `-2.3`, `+0.5`, `0.0`.
    public static func signed(_ tenths: Int) -> String {
        let sign = tenths < 0 ? "-" : (tenths > 0 ? "+" : "")
        let m = abs(tenths)
        return sign + "\(m / 10).\(m % 10)"
    }
}
