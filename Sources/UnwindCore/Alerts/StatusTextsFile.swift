/// One text the device sent on its own, as `statusTexts.txt` keeps it.
public struct StatusTextRecord: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A STATUS answer to slot `slot` (0-based).
        case answer(slot: Int)
        /// The maintainer was told of a problem.
        case problem(DeviceProblem)
        /// The maintainer was told it is over.
        case recovered(DeviceProblem)
    }
    public var at: WallTime
    public var kind: Kind
    public init(at: WallTime, kind: Kind) {
        self.at = at
        self.kind = kind
    }
}

/// `statusTexts.txt`: the texts the device sent on its own, newest last, one a line —
/// `<seconds since 1970> answer <slot 1-5>`, `<seconds> problem <name>` or
/// `<seconds> recovered <name>` (names as `DeviceProblem`). Kept so the limits hold across a
/// restart: one answer per contact per 10 minutes, 10 a day, one maintainer text a day per
/// problem.
public enum StatusTextsFile {
    public static let name = "statusTexts.txt"
    static let maximumBytes = 4096
    /// Lines kept: more than a day's worth at the limits (10 answers, 6 problems and their ends).
    static let kept = 40

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLong(Int), notText, malformed(line: Int, String)
        public var description: String {
            switch self {
            case .tooLong(let n): "\(n) bytes, more than \(maximumBytes)"
            case .notText: "not UTF-8 text"
            case .malformed(let line, let why): "line \(line): \(why)"
            }
        }
    }

    public static func format(_ records: [StatusTextRecord]) -> String {
        var s = ""
        for r in records.suffix(kept) {
            s += "\(r.at.secondsSinceEpoch) "
            switch r.kind {
            case .answer(let slot): s += "answer \(slot + 1)\n"
            case .problem(let p): s += "problem \(p.rawValue)\n"
            case .recovered(let p): s += "recovered \(p.rawValue)\n"
            }
        }
        return s
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [StatusTextRecord] {
        if bytes.count > maximumBytes { throw .tooLong(bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        var out: [StatusTextRecord] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 3, let seconds = Int64(f[0]), seconds >= 0, seconds < 1 << 40 else {
                throw .malformed(line: n + 1, "expected '<seconds since 1970> <answer|problem|recovered> <slot or problem>'")
            }
            let kind: StatusTextRecord.Kind
            switch f[1] {
            case "answer":
                guard let slot = Int(f[2]), (1...PanicState.slotCount).contains(slot) else {
                    throw .malformed(line: n + 1, "a slot is 1 to \(PanicState.slotCount)")
                }
                kind = .answer(slot: slot - 1)
            case "problem", "recovered":
                guard let p = DeviceProblem(rawValue: String(f[2])) else {
                    throw .malformed(line: n + 1, "unknown problem \(String(reflecting: String(f[2])))")
                }
                kind = f[1] == "problem" ? .problem(p) : .recovered(p)
            default:
                throw .malformed(line: n + 1, "unknown kind \(String(reflecting: String(f[1])))")
            }
            out.append(StatusTextRecord(at: WallTime(secondsSinceEpoch: seconds), kind: kind))
        }
        return Array(out.suffix(kept))
    }
}
