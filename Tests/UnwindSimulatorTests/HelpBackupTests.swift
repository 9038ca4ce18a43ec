import Foundation
import Testing
@testable import UnwindCore
import UnwindRuntime

/// Backups carry the help state too: the last check-in, the last monthly test and
/// what followed the last alerts, restored through the core so a running device takes them up —
/// never as something to do again (no grace period resumed, no call rung, no alert resent).
@Suite("Backups of the help state", .serialized)
struct HelpBackupTests {
    static let escalation = """
        unwind-escalation 1
        purpose check-in
        started 1767000000
        phase waiting 1767000180
        round 0
        to-ring -
        all-clear no
        contact 1 +15550000001 sent replied Mum
        contact 2 +15550000002 sending - Dad
        end

        """

    static func stateWithHelp(_ dir: String) throws -> String {
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let files = [
            CheckInFile.name: "2026-11-20 missed\nreminding 2026-11-21 1795300000\n",
            AlertTestFile.name: "1795000000 delivered\n",
            EscalationFile.name: escalation,
        ]
        for (n, t) in files { try Data(t.utf8).write(to: URL(fileURLWithPath: state + "/" + n)) }
        return state
    }

    @Test func aBackupRoundTripsTheHelpStateIntoARunningDevice() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = try Self.stateWithHelp(dir)
        let backup = UnwindRun.run(["backup", dir + "/b.tar", "--state", state])
        #expect(backup.status == 0 && backup.stdout.contains("12 state files"), "\(backup)")
        let opened = try StateArchive.open([UInt8](FileManager.default.contents(atPath: dir + "/b.tar") ?? Data()))
        #expect(opened.files[EscalationFile.name] == Array(Self.escalation.utf8))
        #expect(opened.files[CheckInFile.name] != nil && opened.files[AlertTestFile.name] != nil)

        let rig = try MaintenanceRig()
        let restore = rig.unwind(["restore", dir + "/b.tar", "--yes"])
        #expect(restore.status == 0, "\(restore)")
        let core = rig.loop.core.state
        #expect(core.checkIn.last == CheckInRecord(day: CivilDate.day(year: 2026, month: 11, day: 20), outcome: .missed))
        #expect(core.checkIn.sendsAt == nil, "a backup's grace period is never resumed")
        #expect(core.panic.readiness.lastTest == AlertTestRecord(at: WallTime(secondsSinceEpoch: 1_795_000_000), outcome: .delivered))
        #expect(core.panic.aftercare.purpose == .checkIn)
        #expect(core.panic.aftercare.escalation == .ended(.restored), "a restore never rings anyone")
        #expect(core.panic.progress.map(\.acknowledged) == [true, false])
        #expect(core.panic.progress.map(\.delivery.isFinished) == [true, true], "nothing of it is still on its way")
        #expect(rig.file(CheckInFile.name) == "2026-11-20 missed\n")
        #expect(rig.file(EscalationFile.name)?.contains("phase ended restored") == true)
        #expect(rig.file(AlertTestFile.name) == "1795000000 delivered\n")
        #expect(!rig.loop.core.state.panic.aftercare.escalation.isActive)

        // An archive from before the help state leaves the device's own as it is.
        var old = opened.files
        for n in [CheckInFile.name, AlertTestFile.name, EscalationFile.name] { old[n] = nil }
        try Data(StateArchive.make(old, created: WallTime(secondsSinceEpoch: 1))).write(to: URL(fileURLWithPath: dir + "/old.tar"))
        #expect(rig.unwind(["restore", dir + "/old.tar", "--yes"]).status == 0)
        #expect(rig.file(CheckInFile.name) == "2026-11-20 missed\n")
        #expect(rig.loop.core.state.panic.aftercare.purpose == .checkIn)
        rig.shutdown()
    }

    /// With the device stopped the restore writes the files itself: the same rules.
    @Test func aRestoreWithTheDeviceStopped() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = try Self.stateWithHelp(dir)
        #expect(UnwindRun.run(["backup", dir + "/b.tar", "--state", state]).status == 0)
        let target = dir + "/target"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // The target device is in a grace period of its own: it stays.
        try Data("reminding 2026-11-22 1795400000\n".utf8).write(to: URL(fileURLWithPath: target + "/" + CheckInFile.name))
        let r = UnwindRun.run(["restore", dir + "/b.tar", "--yes", "--state", target])
        #expect(r.status == 0, "\(r)")
        func read(_ n: String) -> String? { FileManager.default.contents(atPath: target + "/" + n).map { String(decoding: $0, as: UTF8.self) } }
        #expect(read(CheckInFile.name) == "2026-11-20 missed\nreminding 2026-11-22 1795400000\n")
        #expect(read(EscalationFile.name)?.contains("phase ended restored") == true)
        #expect(read(AlertTestFile.name) == "1795000000 delivered\n")
    }

    /// A damaged help file in an archive is refused with its name, and nothing changes.
    @Test(arguments: [(EscalationFile.name, "unwind-escalation 1\npurpose panic\n"), (EscalationFile.name, "garbage\n"),
                      (CheckInFile.name, "2026-13-40 confirmed\n"), (AlertTestFile.name, "soon sent\n"),
                      (EscalationFile.name, String(repeating: "x", count: 20_000))])
    func aDamagedHelpFileIsRefused(_ name: String, _ text: String) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = try Self.stateWithHelp(dir)
        #expect(UnwindRun.run(["backup", dir + "/b.tar", "--state", state]).status == 0)
        var files = try StateArchive.open([UInt8](FileManager.default.contents(atPath: dir + "/b.tar") ?? Data())).files
        files[name] = Array(text.utf8)
        try Data(StateArchive.make(files, created: WallTime(secondsSinceEpoch: 1))).write(to: URL(fileURLWithPath: dir + "/bad.tar"))
        let target = dir + "/target"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let r = UnwindRun.run(["restore", dir + "/bad.tar", "--yes", "--state", target])
        #expect(r.status == 2 && r.stderr.contains(name) && r.stderr.contains("nothing changed"), "\(r)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: target)) ?? ["?"]).filter { !$0.hasPrefix(".") }.isEmpty)
    }
}
