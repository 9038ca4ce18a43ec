import Foundation
import Testing
@testable import UnwindCore

/// A time read from a file, an archive or the socket may be anything an Int64 holds. Every
/// reader and every piece of calendar arithmetic takes Int64's ends and their neighbours: a
/// refusal in one line, or a clear value at the edge of the calendar's range, never a trap (a
/// trap here would end the test process).
@Suite struct TimesAtInt64EndsTests {
    static let edge = WallTime.calendarRange.upperBound
    static let ends: [Int64] = [.min, .min + 1, -edge - 1, -edge, -1, 0, 1, edge, edge + 1, .max - 1, .max]
    static let zones = [LocalTimeZone.utc, .fixed(name: "UTC+14", offset: 50_400), .fixed(name: "UTC-12", offset: -43_200),
                        vancouver, berlin, systemZone("America/New_York"), systemZone("Australia/Lord_Howe")]

    @Test(arguments: ends)
    func localTimeIsAClearValue(_ t: Int64) {
        let clamped = WallTime.calendarClamped(t)
        #expect(WallTime.calendarRange.contains(clamped))
        if WallTime.calendarRange.contains(t) { #expect(clamped == t) }
        for zone in Self.zones {
            let offset = zone.offset(at: t)
            #expect(abs(offset) <= 86_400, "\(zone) at \(t)")
            let (day, second) = CivilDate.local(t, in: zone)
            #expect((0..<86_400).contains(second), "\(zone) at \(t)")
            // The day is the clamped instant's local day, and it has a date.
            #expect(day * 86_400 + second == clamped + zone.offset(at: clamped), "\(zone) at \(t)")
            let date = CivilDate.civil(ofDay: day)
            #expect((1...12).contains(date.month) && (1...31).contains(date.day))
            if let next = zone.nextChange(after: t) { #expect(next > t, "\(zone) after \(t)") }
            _ = StatusAnswer.dateText(WallTime(secondsSinceEpoch: t), zone: zone)
            _ = StatusAnswer.clockText(WallTime(secondsSinceEpoch: t), now: WallTime(secondsSinceEpoch: 0), zone: zone)
        }
    }

    /// A backup's manifest: the device writes its clock there, so a time before 1970 or beyond the
    /// calendar's range is refused in one line; every other is read as written.
    @Test(arguments: ends)
    func anArchiveTimeIsReadOrRefused(_ t: Int64) throws {
        let manifest = Array("unwind-state-archive 1\ncreated \(t)\n".utf8)
        if (0...Self.edge).contains(t) {
            let (created, listed) = try StateArchive.parseManifest(manifest)
            #expect(created.secondsSinceEpoch == t && listed.isEmpty)
        } else {
            #expect {
                _ = try StateArchive.parseManifest(manifest)
            } throws: { error in
                "\(error)".contains("line 2: created \(t) is not a time a device could have written")
            }
        }
    }

    /// An archive made at any clock reading keeps a tar header that tar itself reads.
    @Test(arguments: ends)
    func anArchiveMadeAtAnyClockReadsBack(_ t: Int64) throws {
        let archive = StateArchive.make(["mantras.txt": Array("A mantra.\n".utf8)], created: WallTime(secondsSinceEpoch: t))
        let members = try Tar.read(archive)
        #expect(members.map(\.name) == ["manifest.txt", "mantras.txt"])
    }

    /// The day's check-in and the last alert test: their times are bounded where they are read.
    @Test(arguments: ends)
    func stateFileTimesAreReadOrRefused(_ t: Int64) {
        let grace = try? CheckInFile.parseWithGrace(Array("reminding 2026-01-01 \(t)\n".utf8))
        if let g = grace?.grace { #expect(g.sendsAt.secondsSinceEpoch == t && t >= 0) }
        if let r = try? AlertTestFile.parse(Array("\(t) sent\n".utf8)) { #expect(r.at.secondsSinceEpoch == t && t >= 0) }
    }
}
