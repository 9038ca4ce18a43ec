import Foundation
import Testing
import UnwindMaintenance
import UnwindSimulatedHardware
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
@testable import UnwindSimulator

/// The weekly self-check reminder through the whole device on a simulated wall clock: the one
/// alarm armed for whichever reminder comes first, the screen and the motor within ±0.5 s of
/// the due second, and the mantra reminder beside it still on its own second.
@Suite struct SelfCheckReminderHeadlessTests {
    /// Tuesday 2026-05-05 21:20:00 UTC.
    static let evening = WallTime(secondsSinceEpoch: 1_778_016_000)

    func run(_ script: String, mantraReminder: String, selfCheckReminder: String, dir: String) throws -> HeadlessSimulation.Report {
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        try mantraReminder.write(toFile: dir + "/state/" + RemindersFile.name, atomically: false, encoding: .utf8)
        try selfCheckReminder.write(toFile: dir + "/state/" + SelfCheckReminderFile.name, atomically: false, encoding: .utf8)
        var sim = HeadlessSimulation(script: try ButtonScript.parse(script), stateDirectory: dir + "/state",
                                     outputDirectory: dir + "/out", settings: DeviceSettings(), recordFrames: false)
        sim.wallClockStart = Self.evening
        return try sim.run()
    }

    /// Seconds into the run of each motor onset.
    func onsets(_ r: HeadlessSimulation.Report) -> [Double] {
        r.motor.filter(\.on).map { Double(($0.at - r.start).nanoseconds) / 1e9 }
    }

    @Test func itFiresOnItsSecondAndSelectStartsTheQuickCheck() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Due Tuesday 21:30, 600 s in; SELECT at 610 s starts the quick check.
        let r = try run("610 SELECT\n620 end\n", mantraReminder: "never\n", selfCheckReminder: "weekly tue 21:30\n", dir: dir)
        let first = try #require(onsets(r).first)
        #expect(abs(first - 600) <= 0.5, "fired at \(first) s, due at 600 s")
        #expect(abs(first - 600) < 0.001)
        #expect(onsets(r).count == 4)                   // the reminders' gentle pattern
        #expect(r.statistics.alarmsFired == 1)
        #expect(r.finalState.page == .howAmIDoing && !r.finalState.selfCheck.reminder.isShowing)
        guard case .selfCheck(.questionnaire(let q)) = r.finalState.overlay else { Issue.record("no quick check"); return }
        #expect(q.kind == .quick)
        #expect(r.finalState.selfCheck.reminder.nextDue == WallTime(secondsSinceEpoch: Self.evening.secondsSinceEpoch + 600 + 7 * 86_400))
    }

    @Test func bothRemindersComeEachOnItsOwnSecond() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The self-check at 21:25 (300 s), the mantra at 21:30 (600 s); a press closes each.
        let r = try run("400 LEFT\n700 LEFT\n710 end\n", mantraReminder: "daily 21:30\n", selfCheckReminder: "weekly tue 21:25\n", dir: dir)
        let on = onsets(r)
        #expect(on.count == 8, "\(on)")
        if on.count == 8 {
            #expect(abs(on[0] - 300) < 0.001 && abs(on[4] - 600) < 0.001, "\(on)")
        }
        #expect(r.statistics.alarmsFired == 2)
        #expect(!r.finalState.reminders.isShowing && !r.finalState.selfCheck.reminder.isShowing)
    }
}
