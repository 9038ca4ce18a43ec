/// Floor division: the quotient rounded towards minus infinity, so an instant before 1970 falls
/// on the day it is in, not the one after. `b` > 0; never traps for any `a`.
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return a % b < 0 ? q - 1 : q
}

/// The remainder of `floorDiv`: 0 ..< `b` for every `a` (`b` > 0).
func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
    let r = a % b
    return r < 0 ? r + b : r
}

/// Dates as days since 1970-01-01 (proleptic Gregorian), without Foundation's calendars: the
/// core must give the same answer everywhere.
public enum CivilDate {
    public static let monthAbbreviations = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The local day (days since 1970-01-01) and second of that day at `t` in `zone` (beyond
    /// `WallTime.calendarRange`, at its edge).
    public static func local(_ t: Int64, in zone: LocalTimeZone) -> (day: Int64, second: Int64) {
        let t = WallTime.calendarClamped(t)
        let local = t + zone.offset(at: t)
        let day = floorDiv(local, 86_400)
        return (day, local - day * 86_400)
    }

    /// Howard Hinnant's days_from_civil.
    public static func day(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Days since 1970-01-01 → (year, month 1–12, day 1–31): Howard Hinnant's civil_from_days.
    public static func civil(ofDay z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    public static func text(ofDay day: Int64) -> String {
        let c = civil(ofDay: day)
        func pad(_ v: Int64, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))"
    }

    /// `YYYY-MM-DD` (years 1970…9999), a real date; nil otherwise.
    public static func day(ofText s: Substring) -> Int64? {
        let f = s.split(separator: "-", omittingEmptySubsequences: false)
        guard f.count == 3, f[0].count == 4, f[1].count == 2, f[2].count == 2,
              f.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              let y = Int64(f[0]), let m = Int64(f[1]), let d = Int64(f[2]),
              y >= 1970, (1...12).contains(m), (1...31).contains(d) else { return nil }
        let day = Self.day(year: y, month: m, day: d)
        // 2025-02-30 is not a date: it must come back as itself.
        guard civil(ofDay: day) == (y, m, d) else { return nil }
        return day
    }
}
