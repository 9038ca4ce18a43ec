/// The device's time zone: a name and the offsets from UTC it gives over time, read from the
/// system's tz database (a TZif file, RFC 8536: /usr/share/zoneinfo/NAME, /etc/localtime) by
/// the edge. Not Foundation's TimeZone: outside Apple's systems a named TimeZone needs ICU
/// (FoundationInternationalization), whose data alone is 32 MB of the executable.
public struct LocalTimeZone: Sendable, Equatable, CustomStringConvertible {
    /// As the configuration names it (`America/Vancouver`), or `UTC`, or `localtime`.
    public let name: String
    /// Instants (seconds since the epoch) at which the offset may change, ascending, and the
    /// offset (seconds east of UTC) from each on.
    let transitions: [Int64]
    let offsetsFrom: [Int32]
    /// Before the first transition (and always, for a zone without any).
    let initialOffset: Int32
    /// After the last transition: the footer's rule, when the file has one.
    let rule: ZoneRule?

    public static let utc = LocalTimeZone(name: "UTC", transitions: [], offsetsFrom: [], initialOffset: 0, rule: nil)

    /// A zone that is always `offset` seconds east of UTC.
    public static func fixed(name: String, offset: Int32) -> LocalTimeZone {
        LocalTimeZone(name: name, transitions: [], offsetsFrom: [], initialOffset: offset, rule: nil)
    }

    init(name: String, transitions: [Int64], offsetsFrom: [Int32], initialOffset: Int32, rule: ZoneRule?) {
        self.name = name
        self.transitions = transitions
        self.offsetsFrom = offsetsFrom
        self.initialOffset = initialOffset
        self.rule = rule
    }

    public var description: String { name }

    /// Seconds east of UTC at `t` (seconds since the epoch; beyond `WallTime.calendarRange`, at
    /// its edge).
    public func offset(at t: Int64) -> Int64 {
        let t = WallTime.calendarClamped(t)
        guard let last = transitions.last else { return Int64(rule?.offset(at: t) ?? initialOffset) }
        if t >= last, let rule { return Int64(rule.offset(at: t)) }
        guard t >= transitions[0] else { return Int64(initialOffset) }
        return Int64(offsetsFrom[lastIndex(atOrBefore: t)])
    }

    /// The first instant after `t` at which the offset may change; nil when it never does.
    public func nextChange(after t: Int64) -> Int64? {
        guard t < WallTime.calendarRange.upperBound else { return nil }
        let t = WallTime.calendarClamped(t)
        if let last = transitions.last, t < last {
            if t < transitions[0] { return transitions[0] }
            return transitions[lastIndex(atOrBefore: t) + 1]
        }
        return rule?.nextChange(after: t)
    }

    /// The index of the last transition at or before `t`, given transitions[0] <= t.
    private func lastIndex(atOrBefore t: Int64) -> Int {
        var lo = 0, hi = transitions.count
        while lo + 1 < hi {
            let mid = (lo + hi) / 2
            if transitions[mid] <= t { lo = mid } else { hi = mid }
        }
        return lo
    }
}

/// Why bytes are not a time zone file.
public struct ZoneInfoProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
}

extension LocalTimeZone {
    /// A TZif file (versions 1 to 4): the 64-bit data when there is some, and the footer's
    /// POSIX TZ rule for the instants after the last transition.
    public init(name: String, tzif bytes: [UInt8]) throws(ZoneInfoProblem) {
        var r = ZoneInfoReader(bytes: bytes)
        let v1 = try r.header()
        guard v1.version >= 2 else {
            let d = try r.data(v1, timeSize: 4)
            self.init(name: name, transitions: d.times, offsetsFrom: d.offsets, initialOffset: d.initial, rule: nil)
            return
        }
        r.skip(v1, timeSize: 4)
        let v2 = try r.header()
        let d = try r.data(v2, timeSize: 8)
        // Version 2 and later end with the rule between two newlines (empty for none).
        guard let footer = r.footer() else { throw ZoneInfoReader.bad }
        let rule = ZoneRule(posix: footer)
        if !footer.isEmpty, rule == nil {
            throw ZoneInfoProblem(description: "its rule \(String(reflecting: footer)) is not one this device reads")
        }
        self.init(name: name, transitions: d.times, offsetsFrom: d.offsets, initialOffset: d.initial, rule: rule)
    }
}

private struct ZoneInfoReader {
    let bytes: [UInt8]
    var at = 0

    struct Header {
        var version: Int
        var isut, isstd, leap, time, type, chars: Int
    }

    static let bad = ZoneInfoProblem(description: "not a time zone file (TZif)")

    mutating func integer(_ size: Int) throws(ZoneInfoProblem) -> Int64 {
        guard at + size <= bytes.count else { throw Self.bad }
        var v: UInt64 = 0
        for b in bytes[at..<(at + size)] { v = v << 8 | UInt64(b) }
        at += size
        // Sign-extend the big-endian two's complement value.
        let shift = UInt64(64 - size * 8)
        return Int64(bitPattern: v << shift) >> Int64(shift)
    }

    mutating func header() throws(ZoneInfoProblem) -> Header {
        guard at + 44 <= bytes.count, Array(bytes[at..<(at + 4)]) == Array("TZif".utf8) else { throw Self.bad }
        let v = bytes[at + 4]
        let version = v == 0 ? 1 : Int(v) - 0x30
        guard (1...9).contains(version) else { throw Self.bad }
        at += 20
        var counts: [Int] = []
        for _ in 0..<6 {
            let c = try integer(4)
            guard c >= 0, c < 1 << 20 else { throw Self.bad }
            counts.append(Int(c))
        }
        let h = Header(version: version, isut: counts[0], isstd: counts[1], leap: counts[2], time: counts[3], type: counts[4], chars: counts[5])
        guard h.type >= 1 else { throw Self.bad }
        return h
    }

    func length(_ h: Header, timeSize: Int) -> Int {
        h.time * (timeSize + 1) + h.type * 6 + h.chars + h.leap * (timeSize + 4) + h.isstd + h.isut
    }

    mutating func skip(_ h: Header, timeSize: Int) { at += length(h, timeSize: timeSize) }

    mutating func data(_ h: Header, timeSize: Int) throws(ZoneInfoProblem) -> (times: [Int64], offsets: [Int32], initial: Int32) {
        guard at + length(h, timeSize: timeSize) <= bytes.count else { throw Self.bad }
        var times: [Int64] = []
        for _ in 0..<h.time {
            let t = try integer(timeSize)
            guard times.last.map({ $0 < t }) ?? true else { throw ZoneInfoProblem(description: "its transitions are not in order") }
            times.append(t)
        }
        var indices: [Int] = []
        for _ in 0..<h.time {
            let i = Int(bytes[at])
            at += 1
            guard i < h.type else { throw Self.bad }
            indices.append(i)
        }
        var types: [Int32] = []
        for _ in 0..<h.type {
            let offset = try integer(4)
            at += 2  // isdst, the abbreviation's index: the offset is all the device needs
            guard abs(offset) < 26 * 3600 else { throw ZoneInfoProblem(description: "an offset of \(offset) s is not a time zone's") }
            types.append(Int32(offset))
        }
        at += h.chars + h.leap * (timeSize + 4) + h.isstd + h.isut
        return (times, indices.map { types[$0] }, types[0])
    }

    /// The text between the newlines after the 64-bit data, or nil.
    func footer() -> String? {
        guard at < bytes.count, bytes[at] == 0x0A, let end = bytes[(at + 1)...].firstIndex(of: 0x0A) else { return nil }
        return String(validating: bytes[(at + 1)..<end], as: UTF8.self)
    }
}

/// A POSIX TZ rule, as in a TZif footer: `PST8PDT,M3.2.0,M11.1.0`, `<+0530>-5:30`,
/// `CET-1CEST,M3.5.0,M10.5.0/3`. Offsets here are east of UTC (POSIX writes them west).
struct ZoneRule: Sendable, Equatable {
    var standard: Int32
    var daylight: Daylight?

    struct Daylight: Sendable, Equatable {
        var offset: Int32
        var start: Day, startTime: Int32
        var end: Day, endTime: Int32
    }

    /// A day of the year as a rule gives it.
    enum Day: Sendable, Equatable {
        /// Mm.w.d: weekday d (0 Sunday) of week w (5: the last) of month m.
        case weekday(month: Int, week: Int, weekday: Int)
        /// Jn: day n of 1…365, February 29 never counted.
        case julian(Int)
        /// n: day n of 0…365, February 29 counted.
        case zeroBased(Int)

        /// Days since 1970-01-01 of this day in `year`.
        func day(in year: Int64) -> Int64 {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            switch self {
            case .weekday(let m, let w, let d):
                let first = CivilDate.day(year: year, month: Int64(m), day: 1)
                let firstWeekday = Int(floorMod(first + 4, 7))  // 1970-01-01 was a Thursday
                var day = first + Int64((d - firstWeekday + 7) % 7 + 7 * (w - 1))
                let next = m == 12 ? CivilDate.day(year: year + 1, month: 1, day: 1) : CivilDate.day(year: year, month: Int64(m + 1), day: 1)
                while day >= next { day -= 7 }
                return day
            case .julian(let n):
                return CivilDate.day(year: year, month: 1, day: 1) + Int64(n - 1) + (leap && n >= 60 ? 1 : 0)
            case .zeroBased(let n):
                return CivilDate.day(year: year, month: 1, day: 1) + Int64(n)
            }
        }
    }

    func offset(at t: Int64) -> Int32 {
        guard let d = daylight else { return standard }
        let year = CivilDate.civil(ofDay: floorDiv(t + Int64(standard), 86_400)).year
        // The year's change to daylight time and back; around New Year the neighbour's count too.
        var changes: [(Int64, Int32)] = []
        for y in (year - 1)...(year + 1) {
            let (on, off) = instants(d, in: y)
            changes.append((on, d.offset))
            changes.append((off, standard))
        }
        changes.sort { $0.0 < $1.0 }
        var current = standard
        for (at, offset) in changes where at <= t { current = offset }
        return current
    }

    func nextChange(after t: Int64) -> Int64? {
        guard let d = daylight else { return nil }
        let year = CivilDate.civil(ofDay: floorDiv(t, 86_400)).year
        var best: Int64?
        for y in (year - 1)...(year + 2) {
            let (on, off) = instants(d, in: y)
            for c in [on, off] where c > t && c < (best ?? .max) { best = c }
        }
        return best
    }

    /// When daylight time starts and ends in `year`, in UTC: the start is given in standard
    /// time, the end in daylight time.
    private func instants(_ d: Daylight, in year: Int64) -> (Int64, Int64) {
        (d.start.day(in: year) * 86_400 + Int64(d.startTime) - Int64(standard),
         d.end.day(in: year) * 86_400 + Int64(d.endTime) - Int64(d.offset))
    }

    /// Parses the whole of `text`, or gives nil.
    init?(posix text: String) {
        var s = Substring(text)
        func name() -> Bool {
            if s.first == "<" {
                guard let close = s.firstIndex(of: ">") else { return false }
                s = s[s.index(after: close)...]
                return true
            }
            let n = s.prefix { $0.isASCII && $0.isLetter }
            guard n.count >= 3 else { return false }
            s = s.dropFirst(n.count)
            return true
        }
        /// [+-]hh[:mm[:ss]], in seconds.
        func time(maxHours: Int) -> Int32? {
            var sign: Int32 = 1
            if s.first == "+" || s.first == "-" {
                if s.first == "-" { sign = -1 }
                s = s.dropFirst()
            }
            var parts: [Int32] = []
            while parts.count < 3 {
                let digits = s.prefix { $0.isASCII && $0.isNumber }
                guard !digits.isEmpty, digits.count <= 3, let v = Int32(digits) else { return nil }
                parts.append(v)
                s = s.dropFirst(digits.count)
                guard s.first == ":" else { break }
                s = s.dropFirst()
            }
            guard parts[0] <= maxHours, parts.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
            let seconds = parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0)
            return sign * seconds
        }
        func number() -> Int? {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3 else { return nil }
            s = s.dropFirst(digits.count)
            return Int(digits)
        }
        func day() -> Day? {
            if s.first == "M" {
                s = s.dropFirst()
                guard let m = number(), s.first == ".", (1...12).contains(m) else { return nil }
                s = s.dropFirst()
                guard let w = number(), s.first == ".", (1...5).contains(w) else { return nil }
                s = s.dropFirst()
                guard let d = number(), (0...6).contains(d) else { return nil }
                return .weekday(month: m, week: w, weekday: d)
            }
            if s.first == "J" {
                s = s.dropFirst()
                guard let n = number(), (1...365).contains(n) else { return nil }
                return .julian(n)
            }
            guard let n = number(), (0...365).contains(n) else { return nil }
            return .zeroBased(n)
        }
        func change() -> (Day, Int32)? {
            guard s.first == ",", !s.dropFirst().isEmpty else { return nil }
            s = s.dropFirst()
            guard let d = day() else { return nil }
            var at: Int32 = 7200
            if s.first == "/" {
                s = s.dropFirst()
                guard let t = time(maxHours: 167) else { return nil }
                at = t
            }
            return (d, at)
        }
        guard name(), let west = time(maxHours: 24) else { return nil }
        standard = -west
        guard !s.isEmpty else {
            daylight = nil
            return
        }
        guard name() else { return nil }
        var offset = standard + 3600
        if let f = s.first, f != "," {
            guard let w = time(maxHours: 24) else { return nil }
            offset = -w
        }
        // A daylight name without a rule: the US rule, as POSIX suggests; tzdata never writes one.
        var start = (Day.weekday(month: 3, week: 2, weekday: 0), Int32(7200))
        var end = (Day.weekday(month: 11, week: 1, weekday: 0), Int32(7200))
        if !s.isEmpty {
            guard let a = change(), let b = change(), s.isEmpty else { return nil }
            (start, end) = (a, b)
        }
        daylight = Daylight(offset: offset, start: start.0, startTime: start.1, end: end.0, endTime: end.1)
    }
}
