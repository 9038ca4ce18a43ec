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

/// One finished (or checkpointed) session, for the chart of recent sessions.
public struct SessionRecord: Equatable, Sendable {
    public var started: WallTime
    public var seconds: Int64
    public init(started: WallTime, seconds: Int64) {
        self.started = started
        self.seconds = seconds
    }
}

/// `sessionHistory.txt`, kept beside the spec's files: one session per line, oldest first,
/// `<start, Unix seconds> <duration, seconds>`, at most `capacity` lines (the oldest drop off).
public enum SessionHistoryFile {
    public static let name = "sessionHistory.txt"
    public static let capacity = 100
    public static let maximumSize = capacity * 40

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(SessionHistoryFile.name) is \(n) bytes; at most \(SessionHistoryFile.maximumSize) expected"
            case .malformed(let l): "\(SessionHistoryFile.name) line \(l) is not '<start> <seconds>'"
            }
        }
    }

    public static func format(_ records: [SessionRecord]) -> String {
        var s = ""
        for r in records.suffix(capacity) { s += "\(r.started.secondsSinceEpoch) \(r.seconds)\n" }
        return s
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [SessionRecord] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var out = [SessionRecord]()
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        for (i, line) in lines.enumerated() {
            let f = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard f.count == 2, let a = number(f[0]), let b = number(f[1]) else { throw .malformed(line: i + 1) }
            out.append(SessionRecord(started: WallTime(secondsSinceEpoch: a), seconds: b))
        }
        return Array(out.suffix(capacity))
    }

    private static func number(_ s: ArraySlice<UInt8>) -> Int64? {
        guard !s.isEmpty, s.count <= 12, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return s.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }
}
