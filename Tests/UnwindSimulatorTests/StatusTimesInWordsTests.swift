import Foundation
import Testing
import UnwindMaintenance

/// `unwind status` gives its times as a person reads them: the board's local time and how long
/// ago, never seconds since 1970 (those stay in `--json`), never a negative uptime after the
/// clock was set back; and whatever times the socket sends, Int64's ends included, it prints.
@Suite struct StatusTimesInWordsTests {
    static func status(startedAt: Int64, now: Int64, since: Int64, nextReminder: Int64) throws -> StatusReport {
        let text = """
            {"pid":1,"startedAt":\(startedAt),"now":\(now),"stateDirectory":"/var/lib/unwind","page":"breathing","overlay":"none",
             "session":"idle","display":"on","totalSeconds":0,"sessions":0,"shortestSeconds":0,"longestSeconds":0,
             "mantraCount":1,"currentMantra":0,"reminder":"daily 21:30","nextReminder":\(nextReminder),"alertSlots":["1 Mum"],
             "outboxPending":0,"outboxFailed":0,"messages":[],"framesRendered":1,"framesMissed":0,"loopErrors":0,"recentErrors":[],
             "help":{"readiness":"not ready","readinessProblems":["not registered on a network"],"contacts":[],"repliesShown":0,
                     "escalation":"idle","calls":[],"allClear":[],"checkIn":"off","monthlyTest":"off","readinessSince":\(since),
                     "problems":[{"name":"display","words":"the display is not working","since":\(since)}]}}
            """
        return try JSONDecoder().decode(StatusReport.self, from: Data(text.utf8))
    }

    static func run(_ report: StatusReport) throws -> UnwindRun.Result {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var answer = ControlResponse.done("status")
        answer.status = report
        let server = try FakeDevice(path: dir + "/device.sock", answer: answer)
        defer { server.stop() }
        return UnwindRun.run(["status", "--state", dir, "--socket", server.path])
    }

    @Test func timesAreLocalAndHowLongAgo() throws {
        let now: Int64 = 1_795_848_602
        let r = try Self.run(Self.status(startedAt: now - 3_725, now: now, since: now - 11_520, nextReminder: now + 600))
        #expect(r.status == 0, "\(r)")
        #expect(!r.stdout.contains("seconds since 1970"), "\(r.stdout)")
        #expect(r.stdout.contains("up 1 h 2 min"), "\(r.stdout)")
        let readiness = try Regex(#"Readiness: not ready: not registered on a network \(since [A-Z][a-z]{2} \d+ [A-Z][a-z]{2} 2026 \d\d:\d\d, 3 h 12 min ago\)"#)
        let problem = try Regex(#"Problem:   the display is not working \(display, since [A-Z][a-z]{2} \d+ [A-Z][a-z]{2} 2026 \d\d:\d\d, 3 h 12 min ago\)"#)
        #expect(r.stdout.contains(readiness), "\(r.stdout)")
        #expect(r.stdout.contains(problem), "\(r.stdout)")
    }

    /// The clock set back a year since the device started: no "up -525599 min".
    @Test func aClockSetBackIsSaidSo() throws {
        let now: Int64 = 1_795_848_602
        let r = try Self.run(Self.status(startedAt: now + 31_536_000, now: now, since: now + 60, nextReminder: now + 600))
        #expect(r.status == 0, "\(r)")
        #expect(!r.stdout.contains("up -"), "\(r.stdout)")
        #expect(r.stdout.contains("by a clock since set back"), "\(r.stdout)")
        #expect(r.stdout.contains("the clock was set back since"), "\(r.stdout)")
    }

    static let ends: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]

    /// Times at Int64's ends from the socket: printed, never a trap (exit 0, a line each).
    @Test(arguments: ends)
    func timesAtInt64sEndsArePrinted(_ t: Int64) throws {
        for report in [try Self.status(startedAt: t, now: 1_795_848_602, since: t, nextReminder: t),
                       try Self.status(startedAt: 0, now: t, since: 1_795_848_602, nextReminder: 1_795_848_602)] {
            let r = try Self.run(report)
            #expect(r.status == 0, "\(t): \(r)")
            #expect(r.stdout.contains("Readiness: not ready"), "\(t): \(r.stdout)")
        }
    }
}
