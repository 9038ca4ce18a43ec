import Foundation
import Testing
import UnwindMaintenance
import UnwindSimulatedHardware
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
@testable import UnwindSimulator

/// Reminders on a simulated wall clock, through the whole device: loop, alarm, core, motor.
@Suite struct ReminderHeadlessTests {
    /// 2026-05-05 21:20:00 UTC.
    static let evening = WallTime(secondsSinceEpoch: 1_778_016_000)

    func run(_ script: String, reminder: String, wall: WallTime = evening, zone: LocalTimeZone = .utc,
             steps: [(Double, Double)] = [], synchronised: Bool = true, syncAt: Double? = nil,
             dir: String) throws -> HeadlessSimulation.Report {
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        try reminder.write(toFile: dir + "/state/reminders.txt", atomically: false, encoding: .utf8)
        var settings = DeviceSettings()
        settings.timeZone = zone
        var sim = HeadlessSimulation(script: try ButtonScript.parse(script), stateDirectory: dir + "/state",
                                     outputDirectory: dir + "/out", settings: settings, recordFrames: false)
        sim.wallClockStart = wall
        sim.clockSteps = steps.map { (at: Duration.nanoseconds(Int64($0.0 * 1e9)), by: Duration.nanoseconds(Int64($0.1 * 1e9))) }
        sim.clockSynchronised = synchronised
        if let syncAt { sim.clockSyncChanges = [(at: .nanoseconds(Int64(syncAt * 1e9)), synchronised: true)] }
        return try sim.run()
    }

    func onsets(_ r: HeadlessSimulation.Report) -> [Double] {
        r.motor.filter(\.on).map { Double((($0.at - r.start).nanoseconds)) / 1e9 }
    }

    /// Within ±0.5 s of `expected` seconds into the run (in fact to the nanosecond).
    func expectFired(_ r: HeadlessSimulation.Report, at expected: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        let first = onsets(r).first
        #expect(first != nil, "no reminder fired", sourceLocation: sourceLocation)
        if let first {
            #expect(abs(first - expected) <= 0.5, "fired at \(first) s, due at \(expected) s", sourceLocation: sourceLocation)
            #expect(abs(first - expected) < 0.001, sourceLocation: sourceLocation)
        }
        // The gentle pattern: four swells.
        #expect(onsets(r).count == 4, sourceLocation: sourceLocation)
    }

    @Test func aDailyReminderFiresOnTheSecondAndWakesTheScreen() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The wall clock runs 0.37 s ahead of whole seconds after a small NTP step at 1 s: the
        // due instant falls between frames and the alarm still lands on it.
        let r = try run("700 end\n", reminder: "daily 21:30\n", steps: [(1, 0.37)], dir: dir)
        expectFired(r, at: 600 - 0.37)
        #expect(r.finalState.reminders.isShowing)
        #expect(r.finalState.reminders.nextDue == WallTime(secondsSinceEpoch: Self.evening.secondsSinceEpoch + 600 + 86_400))
        // Asleep after two idle minutes, woken by the reminder.
        let commands = r.displayCommands.map { (Double(($0.0 - r.start).nanoseconds) / 1e9, $0.1) }
        #expect(commands.contains { $0.1 == "sleep" && abs($0.0 - 120) < 0.1 })
        #expect(commands.contains { $0.1 == "wake" && abs($0.0 - (600 - 0.37)) < 0.001 })
        #expect(r.finalScreen.litPixels > 0)
        #expect(r.statistics.alarmsFired == 1)
        #expect(readText(dir + "/out/summary.txt")?.contains("alarms_fired=1") == true)
    }

    @Test func anyButtonDismissesIt() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try run("610 LEFT\n620 end\n", reminder: "daily 21:30\n", dir: dir)
        expectFired(r, at: 600)
        #expect(!r.finalState.reminders.isShowing)
        #expect(r.finalState.overlay == .none)      // the LEFT closed it and did nothing else
    }

    @Test func hourlyAcrossAClockStepForward() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 21:20; at 60 s the clock jumps half an hour to 21:51; 22:00 is 540 s later.
        let r = try run("700 end\n", reminder: "hourly :00\n", steps: [(60, 1800)], dir: dir)
        expectFired(r, at: 600)
        #expect(r.statistics.clockChanges == 1)
    }

    @Test func hourlyAcrossAClockStepBack() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 21:20; at 100 s back ten minutes (21:11:40); 22:00 comes 2400 + 600 s after the start.
        let r = try run("3100 end\n", reminder: "hourly :00\n", steps: [(100, -600)], dir: dir)
        expectFired(r, at: 3000)
    }

    @Test func aStepOverTheDueTimeSkipsIt() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 21:20; at 60 s (21:21) forward 50 minutes to 22:11: 22:00 was jumped over, and is not
        // made up; the next is 23:00, 2940 s later.
        let r = try run("3100 end\n", reminder: "hourly :00\n", steps: [(60, 3000)], dir: dir)
        expectFired(r, at: 3000)
    }

    @Test func anUnsynchronisedClockWaitsForSync() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let never = try run("700 end\n", reminder: "daily 21:30\n", synchronised: false, dir: dir + "/a")
        #expect(never.motor.isEmpty)
        #expect(never.finalState.reminders.nextDue == nil)
        // Synchronised at 300 s (21:25): the 21:30 fires.
        let later = try run("700 end\n", reminder: "daily 21:30\n", synchronised: false, syncAt: 300, dir: dir + "/b")
        expectFired(later, at: 600)
    }

    @Test func aBreathingSessionIsNotInterrupted() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The display is asleep by then: the first SELECT only wakes it, the second starts a session.
        let r = try run("580 SELECT\n590 SELECT\n650 SELECT\n660 end\n", reminder: "daily 21:30\n", dir: dir)
        #expect(r.finalState.breathing.totals.count == 1)
        // Corner pulses until 650; the reminder's four swells start on the stopping press.
        let after = onsets(r).filter { $0 >= 650 }
        try #require(after.count == 4)
        #expect(abs(after[0] - 650) < 0.001)
        #expect(r.finalState.reminders.isShowing)
    }

    @Test func springForwardInVancouver() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 2026-03-08 09:55 UTC is 01:55 PST; at 10:00 UTC the clocks jump to 03:00 PDT. A daily
        // 02:30 reminder fires as the gap ends, 300 s in.
        let r = try run("400 end\n", reminder: "daily 02:30\n", wall: WallTime(secondsSinceEpoch: 1_772_963_700),
                        zone: LocalTimeZone.named("America/Vancouver")!, dir: dir)
        expectFired(r, at: 300)
    }

    @Test func aCorruptRemindersFileIsMovedAsideAndMeansNever() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try run("700 end\n", reminder: "daily at half past nine\n", dir: dir)
        #expect(r.motor.isEmpty)
        #expect(r.finalState.reminders.schedule == .never)
        #expect(readText(dir + "/state/reminders.txt") == "never\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/state")
        let aside = names.filter { $0.hasPrefix("reminders.txt.corrupt-") }
        #expect(aside.count == 1)
        #expect(readText(dir + "/state/" + aside[0]) == "daily at half past nine\n")
    }

    @Test func simulatedTimeStopsOnTheAlarm() throws {
        let time = SimulatedTime(wall: WallTime(secondsSinceEpoch: 1000))
        time.stepWall(by: .milliseconds(250), at: .seconds(2))
        try time.arm(WallTime(secondsSinceEpoch: 1010))
        try time.wait(until: .seconds(100), watching: [])
        #expect(time.instant == .seconds(2))                 // the step is an event
        #expect(time.poll() == .clockChanged)
        try time.arm(WallTime(secondsSinceEpoch: 1010))
        try time.wait(until: .seconds(100), watching: [])
        #expect(time.instant == .seconds(9.75))
        #expect(time.poll() == .fired(WallTime(secondsSinceEpoch: 1010)))
        #expect(time.poll() == .none)
        #expect(time.now().wall == WallTime(secondsSinceEpoch: 1010))
    }
}
