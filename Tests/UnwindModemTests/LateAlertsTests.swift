import Testing
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulatedHardware

/// An alert that could not go out for a long time is never sent as if it were new: later than
/// 10 minutes it says when PANIC was pressed, later than a day it is not sent; a new PANIC goes
/// before alerts left from long ago. Across a restart, as after a night with the power off.
@Suite("Late alerts say so")
struct LateAlertsTests {
    /// The wall-clock time `seconds` before the rig's now.
    static func before(_ rig: ModemRig, _ seconds: Int64) -> Moment {
        Moment(rig.now.instant, wall: WallTime(secondsSinceEpoch: rig.now.wall.secondsSinceEpoch - seconds))
    }

    @Test(arguments: [
        (Int64(0), LateAlerts.Verdict.asWritten), (600, .asWritten),
        (601, .late(note: "Sent late: PANIC was pressed 10 min before this text went out.")),
        (7_500, .late(note: "Sent late: PANIC was pressed 2 h 5 min before this text went out.")),
        (86_400, .late(note: "Sent late: PANIC was pressed 1 day before this text went out.")),
        (86_401, .tooOld(age: 86_401)), (-5_000, .asWritten),
    ])
    func theRule(age: Int64, verdict: LateAlerts.Verdict) {
        let now = WallTime(secondsSinceEpoch: 1_800_000_000)
        #expect(LateAlerts.verdict(created: WallTime(secondsSinceEpoch: now.secondsSinceEpoch - age), now: now, purpose: .panic) == verdict)
    }

    /// Times at Int64's ends never trap and never make an alert late.
    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max])
    func timesAtTheEnds(created: Int64) {
        for now in [Int64.min, 0, Int64.max] {
            _ = LateAlerts.verdict(created: WallTime(secondsSinceEpoch: created), now: WallTime(secondsSinceEpoch: now), purpose: .checkIn)
        }
        #expect(LateAlerts.verdict(created: WallTime(secondsSinceEpoch: Int64.max), now: WallTime(secondsSinceEpoch: Int64.min),
                                   purpose: .panic) == .asWritten)
    }

    /// PANIC pressed, the device off for two hours before anything went out: the alert goes
    /// with a first line saying when PANIC was pressed.
    @Test func anAlertTwoHoursLateSaysWhenPanicWasPressed() throws {
        let rig = try ModemRig()
        let a = alert()
        rig.modem.send(a, slot: 1, at: Self.before(rig, 7_500))
        try rig.restartDaemon()
        #expect(rig.settle())
        let note = "Sent late: PANIC was pressed 2 h 5 min before this text went out."
        #expect(rig.sim.delivered.map(\.text) == [note + "\n" + a.message])
    }

    /// Refused once, tried again two minutes later: the note is made for the attempt that goes,
    /// not the first one.
    @Test func theNoteSaysHowLateTheAttemptThatWentIs() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .cmsError(38))
        let rig = try ModemRig(script: script) { c in
            c.backoff.first = .seconds(120)
            c.backoff.maximum = .seconds(120)
            c.backoff.jitter = 0
        }
        let a = alert()
        rig.modem.send(a, slot: 1, at: Self.before(rig, 7_170))
        try rig.restartDaemon()
        #expect(rig.settle(within: .seconds(300)))
        #expect(rig.sim.delivered.map(\.text) == ["Sent late: PANIC was pressed 2 h 1 min before this text went out.\n" + a.message])
    }

    /// Two days old: not sent, failed with the reason, and still not sent after another restart.
    @Test func anAlertOlderThanADayIsNotSent() throws {
        let rig = try ModemRig()
        let id = rig.modem.send(alert(), slot: 1, at: Self.before(rig, 2 * 86_400))
        try rig.restartDaemon()
        #expect(rig.ready())
        rig.run(for: .seconds(2))
        #expect(rig.sim.submitCount == 0)
        let m = try #require(rig.modem.message(id))
        #expect(m.lastProblem == .tooOld(age: 2 * 86_400) || m.lastProblem.map { if case .tooOld = $0 { true } else { false } } == true, "\(m)")
        if case .failed = m.state {} else { Issue.record("\(m.state)") }
        #expect(rig.outbox.entry(id)?.failure?.hasPrefix("not sent: asked for 2 days ago") == true)
        try rig.restartDaemon()
        #expect(rig.ready())
        rig.run(for: .seconds(2))
        #expect(rig.sim.submitCount == 0)
        #expect(rig.outbox.entry(id)?.history.count == 1, "one line for the reason, not one per restart")
    }

    /// Ten alerts left from an hour ago to one contact, then a new PANIC to them: the new alert
    /// is the first on the wire, the old ones follow with their note.
    @Test func aNewPanicGoesBeforeAlertsLeftFromLongAgo() throws {
        let rig = try ModemRig()
        for k in 1...10 { rig.modem.send(alert("Mum", "+15550100001", "Old alert \(k)."), slot: 1, at: Self.before(rig, 3_600)) }
        try rig.restartDaemon()
        let new = alert("Mum", "+15550100001", "New alert.")
        rig.modem.send(new, slot: 1, at: rig.now)
        #expect(rig.settle(within: .seconds(30)))
        #expect(rig.sim.delivered.first?.text == new.message, "\(rig.sim.delivered.map(\.text))")
        #expect(rig.sim.delivered.dropFirst().allSatisfy { $0.text.hasPrefix("Sent late: PANIC was pressed 1 h before") })
        #expect(rig.sim.delivered.count == 11)
    }
}
