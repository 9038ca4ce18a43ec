import Foundation
import Testing
@testable import UnwindCore

/// The device's own time zones (TZif files read by the core: no ICU in the executable) against
/// Foundation's, which reads ICU's copy of the same database: the same offset at every instant
/// tried, across every change of 1990-2036 and on the footer's rule after the last transition
/// the file lists.
@Suite struct ZoneInfoTests {
    // Not America/Vancouver: British Columbia's permanent daylight time is in newer tz releases
    // than ICU's copy, so the two sources differ from 2026 on by release, not by reading.
    static let zones = ["America/New_York", "Europe/Berlin", "Europe/London", "Europe/Dublin",
                        "Asia/Kolkata", "Asia/Tokyo", "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Auckland",
                        "Pacific/Chatham", "America/Santiago", "UTC"]

    @Test(arguments: zones)
    func offsetsAreFoundations(_ name: String) throws {
        let ours = systemZone(name)
        let theirs = try #require(TimeZone(identifier: name))
        var t: Int64 = 631_152_000  // 1990-01-01
        var compared = 0
        while t < 2_114_380_800 {  // 2037-01-01
            let expected = Int64(theirs.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t))))
            #expect(ours.offset(at: t) == expected, "\(name) at \(t)")
            // Each side of every change the device sees, too.
            if let next = ours.nextChange(after: t), next < t + 86_400 * 30 {
                for u in [next - 1, next] {
                    let e = Int64(theirs.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(u))))
                    #expect(ours.offset(at: u) == e, "\(name) at \(u), a change")
                }
            }
            t += 86_400 * 7 + 3_607
            compared += 1
        }
        #expect(compared > 2000)
    }

    /// After 2037 the files list no transitions: the footer's POSIX rule gives the offsets.
    @Test func theRuleCarriesOnAfterTheTable() {
        let newYork = systemZone("America/New_York")
        // 2040: 11 March 02:00 EST → EDT (07:00 UTC), 4 November 02:00 EDT → EST (06:00 UTC).
        let spring: Int64 = 2_215_062_000, autumn: Int64 = 2_235_621_600
        #expect(newYork.offset(at: spring - 1) == -5 * 3600)
        #expect(newYork.offset(at: spring) == -4 * 3600)
        #expect(newYork.offset(at: autumn - 1) == -4 * 3600)
        #expect(newYork.offset(at: autumn) == -5 * 3600)
        #expect(newYork.nextChange(after: spring - 100) == spring)
        #expect(newYork.nextChange(after: spring) == autumn)
    }

    @Test(arguments: [
        ("PST8PDT,M3.2.0,M11.1.0", -28_800, -25_200),
        ("CET-1CEST,M3.5.0,M10.5.0/3", 3600, 7200),
        ("<+0530>-5:30", 19_800, nil),
        ("IST-1GMT0,M10.5.0,M3.5.0/1", 3600, 0),  // Dublin: winter is the "daylight" time
        ("<+1245>+12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45", -45_900, -42_300),
        ("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", -7200, -3600),
        ("EST5EDT,J60/2,J300/2", -18_000, -14_400),
    ] as [(String, Int32, Int32?)])
    func posixRules(_ text: String, _ standard: Int32, _ daylight: Int32?) throws {
        let rule = try #require(ZoneRule(posix: text))
        #expect(rule.standard == standard)
        #expect(rule.daylight?.offset == daylight)
    }

    @Test(arguments: ["", "P", "PST", "PST8PDT,M3.2.0", "PST8PDT,M13.2.0,M11.1.0", "PST8PDT,M3.6.0,M11.1.0",
                      "PST8PDT,M3.2.7,M11.1.0", "PST99", "PST8PDT,M3.2.0,M11.1.0,", "<+05", "PST8PDT;"])
    func brokenRulesAreRefused(_ text: String) {
        #expect(ZoneRule(posix: text) == nil)
    }

    /// Bytes that are not a zone file: refused with a reason, never a crash.
    @Test func hostileFilesAreRefused() throws {
        let good = [UInt8](try #require(FileManager.default.contents(atPath: "/usr/share/zoneinfo/Europe/Berlin")))
        var cases: [[UInt8]] = [[], Array("TZif".utf8), Array("not a zone file at all, not at all, no no no no".utf8)]
        for cut in [10, 44, 60, good.count / 2, good.count - 10] { cases.append(Array(good.prefix(cut))) }
        var huge = good
        huge[20..<44] = [0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF,
                         0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF]
        cases.append(huge)
        for bytes in cases {
            #expect(throws: ZoneInfoProblem.self) { try LocalTimeZone(name: "x", tzif: bytes) }
        }
        #expect(try LocalTimeZone(name: "Europe/Berlin", tzif: good).offset(at: 0) == 3600)
    }

    @Test func aFixedZoneNeverChanges() {
        #expect(LocalTimeZone.utc.offset(at: 1_800_000_000) == 0)
        #expect(LocalTimeZone.utc.nextChange(after: 0) == nil)
        #expect(LocalTimeZone.fixed(name: "X", offset: -3600).offset(at: 5) == -3600)
    }
}
