
/// Days of the week, Monday first (ISO 8601 numbering, 1…7).
public enum Weekday: Int, CaseIterable, Sendable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    /// The word `reminders.txt` uses: mon, tue, wed, thu, fri, sat, sun.
    public var abbreviation: String {
        switch self {
        case .monday: "mon"
        case .tuesday: "tue"
        case .wednesday: "wed"
        case .thursday: "thu"
        case .friday: "fri"
        case .saturday: "sat"
        case .sunday: "sun"
        }
    }

    public var name: String {
        switch self {
        case .monday: "Monday"
        case .tuesday: "Tuesday"
        case .wednesday: "Wednesday"
        case .thursday: "Thursday"
        case .friday: "Friday"
        case .saturday: "Saturday"
        case .sunday: "Sunday"
        }
    }

    /// The weekday of a local day number (days since 1970-01-01, a Thursday).
    public static func of(localDay d: Int64) -> Weekday {
        Weekday(rawValue: Int(floorMod(d + 3, 7)) + 1)!
    }

    public var next: Weekday { Weekday(rawValue: rawValue % 7 + 1)! }
    public var previous: Weekday { Weekday(rawValue: (rawValue + 5) % 7 + 1)! }
}

/// How often the mantra reminder comes (spec 4.6), in the spec's order.
public enum ReminderFrequency: Int, CaseIterable, Sendable {
    case never, weekly, daily, hourly

    public var label: String {
        switch self {
        case .never: "Never"
        case .weekly: "Weekly"
        case .daily: "Daily"
        case .hourly: "Hourly"
        }
    }
}

/// When the mantra reminder comes (spec 4.6, 4.6.1): never, or weekly on a day at hour:minute,
/// daily at hour:minute, hourly at a minute past the hour — all in local time.
///
/// The due instants, in the configured time zone:
/// - A reminder is due at the first instant at which the local clock shows its time.
/// - **Spring forward** (a local time that does not exist that day, e.g. daily 02:30 when the
///   clocks jump from 02:00 to 03:00): it is due the moment the gap ends, 03:00 — the first
///   instant the local clock has passed 02:30. It is not skipped: a person who asked for a
///   daily reminder gets one every day.
/// - **Fall back** (a local time that happens twice, e.g. 01:30 when the clocks go from 02:00
///   back to 01:00): daily and weekly reminders are due once, at the first 01:30.
/// - **Hourly** reminders are due every real hour, at the minute in local time: across a
///   spring-forward gap the skipped hour has none (01:30, 03:30 — one hour apart); across a
///   fall-back both 01:30s get one (they are an hour apart).
public enum ReminderSchedule: Equatable, Sendable {
    case never
    case weekly(Weekday, hour: Int, minute: Int)
    case daily(hour: Int, minute: Int)
    case hourly(minute: Int)

    public var frequency: ReminderFrequency {
        switch self {
        case .never: .never
        case .weekly: .weekly
        case .daily: .daily
        case .hourly: .hourly
        }
    }

    public var hour: Int? {
        switch self {
        case .weekly(_, let h, _), .daily(let h, _): h
        case .never, .hourly: nil
        }
    }

    public var minute: Int? {
        switch self {
        case .weekly(_, _, let m), .daily(_, let m), .hourly(let m): m
        case .never: nil
        }
    }

    public var day: Weekday? {
        if case .weekly(let d, _, _) = self { return d }
        return nil
    }

    /// Why the schedule cannot be used, or nil.
    public var problem: String? {
        if let h = hour, !(0...23).contains(h) { return "the hour must be 0 to 23" }
        if let m = minute, !(0...59).contains(m) { return "the minute must be 0 to 59" }
        return nil
    }

    /// The schedule with another frequency, keeping the day, hour and minute already chosen.
    public func with(frequency f: ReminderFrequency, defaults: (day: Weekday, hour: Int, minute: Int) = (.sunday, 21, 0)) -> ReminderSchedule {
        let d = day ?? defaults.day, h = hour ?? defaults.hour, m = minute ?? defaults.minute
        switch f {
        case .never: return .never
        case .weekly: return .weekly(d, hour: h, minute: m)
        case .daily: return .daily(hour: h, minute: m)
        case .hourly: return .hourly(minute: m)
        }
    }

    /// The first instant strictly after `after` at which the reminder is due, in `zone`; nil for
    /// `never`. Pure: the same inputs always give the same answer.
    public func nextDue(after: WallTime, in zone: LocalTimeZone) -> WallTime? {
        nextDue(after: after, rules: ZoneRules(zone))
    }

    func nextDue(after: WallTime, rules z: ZoneRules) -> WallTime? {
        let a = after.secondsSinceEpoch
        switch self {
        case .never:
            return nil
        case .daily(let h, let m):
            let d = floorDiv(z.local(a), 86_400)
            for day in (d - 1)...(d + 2) {
                let t = z.firstInstant(local: day * 86_400 + Int64(h * 3600 + m * 60))
                if t > a { return WallTime(secondsSinceEpoch: t) }
            }
            return nil
        case .weekly(let wd, let h, let m):
            let d = floorDiv(z.local(a), 86_400)
            for day in (d - 1)...(d + 8) where Weekday.of(localDay: day) == wd {
                let t = z.firstInstant(local: day * 86_400 + Int64(h * 3600 + m * 60))
                if t > a { return WallTime(secondsSinceEpoch: t) }
            }
            return nil
        case .hourly(let m):
            var t = a + 1
            for _ in 0..<8 {
                let o = z.offset(t)
                let l = t + o
                var lc = floorDiv(l, 3600) * 3600 + Int64(m * 60)
                if lc < l { lc += 3600 }
                let candidate = lc - o
                if z.offset(candidate) == o { return WallTime(secondsSinceEpoch: candidate) }
                // The offset changes before the candidate: start again from the change.
                t = z.firstChange(from: t, to: candidate)
            }
            return nil
        }
    }
}

/// A time zone's offsets, as a function of the instant (seconds since the epoch → seconds east
/// of UTC). Tests may give any function; the device gives its time zone.
struct ZoneRules {
    let offset: (Int64) -> Int64

    init(offset: @escaping (Int64) -> Int64) { self.offset = offset }

    init(_ zone: LocalTimeZone) {
        offset = { zone.offset(at: $0) }
    }

    func local(_ t: Int64) -> Int64 { t + offset(t) }

    /// The earliest instant whose local time is `l`; when `l` falls in a gap (spring forward),
    /// the instant the gap ends.
    func firstInstant(local l: Int64) -> Int64 {
        let offsets = [offset(l - 86_400), offset(l), offset(l + 86_400)]
        var best: Int64?
        for o in offsets where offset(l - o) == o { best = min(best ?? (l - o), l - o) }
        if let best { return best }
        // A gap: the local clock jumps over l somewhere in here.
        var lo = l - offsets.max()!, hi = l - offsets.min()!
        if local(lo) >= l { return lo }
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2
            if local(mid) >= l { hi = mid } else { lo = mid }
        }
        return hi
    }

    /// The first instant in (from, to] whose offset differs from the offset at `from`.
    func firstChange(from: Int64, to: Int64) -> Int64 {
        let o = offset(from)
        var lo = from, hi = to
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2
            if offset(mid) == o { lo = mid } else { hi = mid }
        }
        return hi
    }
}

/// `reminders.txt`, in the state directory: the reminder schedule, one line ending in a
/// newline, lower-case words separated by single spaces, hours and minutes two digits:
///
///     never
///     hourly :MM          e.g. hourly :15      every hour at a quarter past
///     daily HH:MM         e.g. daily 21:30     every day at 21:30
///     weekly DAY HH:MM    e.g. weekly sun 09:05   DAY is mon tue wed thu fri sat sun
///
/// Times are local, in the device's time zone (`/etc/localtime`). The final newline is optional
/// on reading; a missing file means `never`. The same words are what the maintainer's command
/// takes.
public enum RemindersFile {
    public static let name = "reminders.txt"
    public static let maximumSize = 64

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(String)

        public var description: String {
            switch self {
            case .tooLarge(let n): "\(RemindersFile.name) is \(n) bytes; at most \(RemindersFile.maximumSize) expected"
            case .malformed(let why): "\(RemindersFile.name): \(why)"
            }
        }
    }

    public static func format(_ s: ReminderSchedule) -> String { line(s) + "\n" }

    /// The schedule in the file's words, without the newline: "daily 21:30".
    public static func line(_ s: ReminderSchedule) -> String {
        switch s {
        case .never: "never"
        case .hourly(let m): "hourly :" + two(m)
        case .daily(let h, let m): "daily " + two(h) + ":" + two(m)
        case .weekly(let d, let h, let m): "weekly " + d.abbreviation + " " + two(h) + ":" + two(m)
        }
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> ReminderSchedule {
        if bytes.count > maximumSize { throw .tooLarge(bytes.count) }
        var b = bytes[...]
        if b.last == UInt8(ascii: "\n") { b = b.dropLast() }
        guard let text = String(validating: b, as: UTF8.self) else { throw .malformed("not text") }
        if text.contains("\n") { throw .malformed("one line expected") }
        return try parse(line: text)
    }

    /// One schedule in the file's words ("never", "hourly :15", "daily 21:30", "weekly sun 21:30").
    public static func parse(line: String) throws(Problem) -> ReminderSchedule {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        let expected = "expected 'never', 'hourly :MM', 'daily HH:MM' or 'weekly DAY HH:MM'"
        switch words.first {
        case "never" where words.count == 1:
            return .never
        case "hourly" where words.count == 2:
            guard words[1].count == 3, words[1].first == ":", let m = twoDigits(words[1].dropFirst()), m < 60 else {
                throw .malformed("hourly takes a minute past the hour as :MM, 00 to 59 (e.g. 'hourly :15')")
            }
            return .hourly(minute: m)
        case "daily" where words.count == 2:
            guard let (h, m) = time(words[1]) else { throw .malformed("daily takes a time as HH:MM, 00:00 to 23:59 (e.g. 'daily 21:30')") }
            return .daily(hour: h, minute: m)
        case "weekly" where words.count == 3:
            guard let d = Weekday.allCases.first(where: { $0.abbreviation == words[1] }) else {
                throw .malformed("weekly takes a day: mon, tue, wed, thu, fri, sat or sun (e.g. 'weekly sun 21:30')")
            }
            guard let (h, m) = time(words[2]) else { throw .malformed("weekly takes a time as HH:MM, 00:00 to 23:59 (e.g. 'weekly sun 21:30')") }
            return .weekly(d, hour: h, minute: m)
        default:
            throw .malformed(expected)
        }
    }

    static func two(_ v: Int) -> String { v < 10 ? "0" + String(v) : String(v) }

    static func twoDigits(_ s: Substring) -> Int? {
        let u = Array(s.utf8)
        guard u.count == 2, u.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(u[0] - 0x30) * 10 + Int(u[1] - 0x30)
    }

    static func time(_ s: Substring) -> (Int, Int)? {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let h = twoDigits(parts[0]), let m = twoDigits(parts[1]), h < 24, m < 60 else { return nil }
        return (h, m)
    }
}

/// The local time of day under a cached offset, so asking "what hour is it here" every frame
/// costs no time-zone lookup: the offset is looked up again only outside the span it is known
/// to hold for (until the zone's next transition, at most a day).
public struct LocalClockCache: Sendable, Equatable {
    var offset: Int64 = 0
    var validFrom: Int64 = .max
    var validUntil: Int64 = .min

    public init() {}

    /// Seconds since local midnight at `wall`.
    public mutating func secondOfDay(_ wall: WallTime, in zone: LocalTimeZone) -> Int {
        let t = wall.secondsSinceEpoch
        if t < validFrom || t >= validUntil {
            offset = zone.offset(at: t)
            validFrom = t
            var until = t + 86_400
            if let next = zone.nextChange(after: t) { until = min(until, next) }
            validUntil = max(until, t + 1)
        }
        return Int(floorMod(t + offset, 86_400))
    }
}

/// The reminder settings screen's draft (spec 4.6, 4.6.1): the frequency, then the day (weekly),
/// hour (weekly, daily) and minute (all but never), one field at a time. Values the current
/// frequency does not use are kept, so switching Daily → Hourly → Daily loses nothing.
public struct ReminderEditor: Equatable, Sendable {
    public enum Field: Int, CaseIterable, Sendable { case frequency, day, hour, minute }

    public var frequency: ReminderFrequency
    public var day: Weekday
    public var hour: Int
    public var minute: Int
    public var field: Field = .frequency
    /// The frequencies LEFT/RIGHT offer (the self-check reminder: never or weekly).
    public var offered: [ReminderFrequency]

    public init(_ s: ReminderSchedule, offering: [ReminderFrequency] = ReminderFrequency.allCases) {
        offered = offering.isEmpty ? ReminderFrequency.allCases : offering
        frequency = offered.contains(s.frequency) ? s.frequency : offered[0]
        day = s.day ?? .sunday
        hour = s.hour ?? 21
        minute = s.minute ?? 0
    }

    public var schedule: ReminderSchedule {
        switch frequency {
        case .never: .never
        case .weekly: .weekly(day, hour: hour, minute: minute)
        case .daily: .daily(hour: hour, minute: minute)
        case .hourly: .hourly(minute: minute)
        }
    }

    /// Whether `f` means something for the chosen frequency.
    public func applies(_ f: Field) -> Bool {
        switch f {
        case .frequency: true
        case .day: frequency == .weekly
        case .hour: frequency == .weekly || frequency == .daily
        case .minute: frequency != .never
        }
    }

    /// LEFT (-1) / RIGHT (+1): the focused value, wrapping round at both ends.
    public mutating func change(by d: Int) {
        switch field {
        case .frequency:
            let n = offered.count
            let i = offered.firstIndex(of: frequency) ?? 0
            frequency = offered[((i + d) % n + n) % n]
        case .day: day = Weekday(rawValue: (((day.rawValue - 1 + d) % 7) + 7) % 7 + 1)!
        case .hour: hour = ((hour + d) % 24 + 24) % 24
        case .minute: minute = ((minute + d) % 60 + 60) % 60
        }
    }

    /// SELECT: the next field that applies. False when the focused field was the last one:
    /// the edit is finished.
    public mutating func advance() -> Bool {
        var r = field.rawValue + 1
        while let f = Field(rawValue: r) {
            if applies(f) { field = f; return true }
            r += 1
        }
        return false
    }

    /// What a press did to the draft.
    public enum Step: Equatable, Sendable {
        case editing, finished, cancelled, ignored
    }

    /// LEFT/RIGHT change the focused value, SELECT goes to the next field (after the last: the
    /// edit is finished), PAGE cancels; every other gesture is ignored.
    public mutating func press(_ gesture: ButtonGesture) -> Step {
        switch gesture {
        case .down(.left): change(by: -1); return .editing
        case .down(.right): change(by: 1); return .editing
        case .down(.select): return advance() ? .editing : .finished
        case .down(.page): return .cancelled
        default: return .ignored
        }
    }

    /// Whether SELECT on the focused field finishes the edit (the label says "save").
    public var isLastField: Bool {
        var copy = self
        return !copy.advance()
    }
}
