/// `selfChecks.txt` (ours): every completed self-check, oldest first, one per line:
///
///     <taken, Unix seconds> <instrument> <answers> <total>
///     1767225600 gad7 1201320 9
///
/// `instrument` is `gad7`, `phq9`, `gad2` or `phq2`; `answers` one digit 0–3 per item, in item
/// order; `total` their sum (checked: a line whose total disagrees is not a result). At most
/// `capacity` lines (the oldest drop off). A line that does not parse is dropped and the rest
/// kept (the file is moved aside first, so nothing is lost).
public enum SelfChecksFile {
    public static let name = "selfChecks.txt"
    /// Eight years of a weekly quick check and a monthly full one.
    public static let capacity = 500
    public static let maximumSize = capacity * 40

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(SelfChecksFile.name) is \(n) bytes; at most \(SelfChecksFile.maximumSize) expected"
            case .malformed(let l): "\(SelfChecksFile.name) line \(l) is not '<unix seconds> <instrument> <answers 0-3> <total>'"
            }
        }
    }

    public static func format(_ results: [SelfCheckResult]) -> String {
        var s = ""
        for r in results.suffix(capacity) { s += line(r) + "\n" }
        return s
    }

    public static func line(_ r: SelfCheckResult) -> String {
        var answers = ""
        for a in r.answers { answers += String(a) }
        return "\(r.taken.secondsSinceEpoch) \(r.instrument.rawValue) \(answers) \(r.total)"
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [SelfCheckResult] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var out: [SelfCheckResult] = []
        for (i, line) in FileLines.lines(bytes).enumerated() {
            guard let r = result(line) else { throw .malformed(line: i + 1) }
            out.append(r)
        }
        return Array(out.suffix(capacity))
    }

    /// The well-formed lines of a file that does not parse (of an oversized one, the newest).
    public static func salvage(_ bytes: [UInt8]) -> [SelfCheckResult] {
        Array(FileLines.newestLines(bytes, maximumSize: maximumSize).compactMap(result).suffix(capacity))
    }

    static func result(_ line: ArraySlice<UInt8>) -> SelfCheckResult? {
        let f = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard f.count == 4, let t = FileLines.number(f[0]), t <= WallTime.calendarRange.upperBound,
              let name = String(validating: f[1], as: UTF8.self), let instrument = Instrument(rawValue: name),
              f[2].count == instrument.itemCount, f[2].allSatisfy({ $0 >= 0x30 && $0 <= 0x33 }),
              let total = FileLines.number(f[3]) else { return nil }
        let answers = f[2].map { Int($0 - 0x30) }
        let r = SelfCheckResult(taken: WallTime(secondsSinceEpoch: t), instrument: instrument, answers: answers)
        guard Int64(r.total) == total, String(total).utf8.count == f[3].count else { return nil }
        return r
    }
}

/// One day's mood in the diary: 1 (very low) to 5 (very good).
public struct MoodEntry: Equatable, Sendable {
    /// Local days since 1970-01-01.
    public var day: Int64
    public var mood: Int

    public init(day: Int64, mood: Int) {
        self.day = day
        self.mood = mood
    }

    public static let scale = 1...5

    /// The words under each rating.
    public static func words(_ mood: Int) -> String {
        switch mood {
        case 1: "very low"
        case 2: "low"
        case 3: "okay"
        case 4: "good"
        case 5: "very good"
        default: ""
        }
    }
}

/// `moods.txt` (ours): the mood diary, one line a day at most, oldest first:
///
///     <YYYY-MM-DD> <1-5>
///     2026-03-01 4
///
/// Days are local and strictly increasing (a day given twice keeps its last rating); at most
/// `capacity` lines (the oldest drop off). A bad line is dropped and the rest kept (the file
/// moved aside first).
public enum MoodsFile {
    public static let name = "moods.txt"
    /// Two years of days.
    public static let capacity = 731
    public static let maximumSize = capacity * 14

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int)
        case outOfOrder(line: Int)
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(MoodsFile.name) is \(n) bytes; at most \(MoodsFile.maximumSize) expected"
            case .malformed(let l): "\(MoodsFile.name) line \(l) is not '<YYYY-MM-DD> <1-5>'"
            case .outOfOrder(let l): "\(MoodsFile.name) line \(l) is not after the day before it"
            }
        }
    }

    public static func format(_ entries: [MoodEntry]) -> String {
        var s = ""
        for e in entries.suffix(capacity) { s += "\(CivilDate.text(ofDay: e.day)) \(e.mood)\n" }
        return s
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [MoodEntry] {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var out: [MoodEntry] = []
        for (i, line) in FileLines.lines(bytes).enumerated() {
            guard let e = entry(line) else { throw .malformed(line: i + 1) }
            if let last = out.last, e.day <= last.day { throw .outOfOrder(line: i + 1) }
            out.append(e)
        }
        return Array(out.suffix(capacity))
    }

    /// The well-formed lines of a file that does not parse, in day order, one a day.
    public static func salvage(_ bytes: [UInt8]) -> [MoodEntry] {
        var out: [MoodEntry] = []
        for e in FileLines.newestLines(bytes, maximumSize: maximumSize).compactMap(entry) { out.recording(e) }
        return Array(out.suffix(capacity))
    }

    static func entry(_ line: ArraySlice<UInt8>) -> MoodEntry? {
        let f = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard f.count == 2, let text = String(validating: f[0], as: UTF8.self), let day = CivilDate.day(ofText: Substring(text)),
              f[1].count == 1, let digit = f[1].first, MoodEntry.scale.contains(Int(digit) - 0x30) else { return nil }
        return MoodEntry(day: day, mood: Int(digit) - 0x30)
    }
}

extension [MoodEntry] {
    /// `e` in day order: a day already there takes the new rating.
    mutating func recording(_ e: MoodEntry) {
        if let i = firstIndex(where: { $0.day >= e.day }) {
            if self[i].day == e.day { self[i] = e } else { insert(e, at: i) }
        } else {
            append(e)
        }
    }
}

/// `selfCheckReminder.txt` (ours): the weekly self-check reminder, one line in the words of
/// `reminders.txt`, only `never` or `weekly DAY HH:MM` (local time). Missing: never.
public enum SelfCheckReminderFile {
    public static let name = "selfCheckReminder.txt"

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        public var description: String {
            switch self {
            case .unreadable(let why): "\(SelfCheckReminderFile.name): \(why)"
            }
        }
    }

    public static let expected = "the self-check reminder is 'never' or 'weekly DAY HH:MM' (e.g. 'weekly sun 18:00')"

    public static func format(_ s: ReminderSchedule) -> String { RemindersFile.format(s) }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> ReminderSchedule {
        let s: ReminderSchedule
        do { s = try RemindersFile.parse(bytes) } catch {
            if case .tooLarge(let n) = error { throw .unreadable("\(n) bytes; at most \(RemindersFile.maximumSize) expected") }
            throw .unreadable(expected)
        }
        return try allowed(s)
    }

    /// One schedule in the file's words, as the maintainer's command gives it.
    public static func parse(line: String) throws(Problem) -> ReminderSchedule {
        let s: ReminderSchedule
        do { s = try RemindersFile.parse(line: line) } catch { throw .unreadable(expected) }
        return try allowed(s)
    }

    static func allowed(_ s: ReminderSchedule) throws(Problem) -> ReminderSchedule {
        switch s {
        case .never, .weekly: return s
        case .daily, .hourly: throw .unreadable(expected)
        }
    }
}
