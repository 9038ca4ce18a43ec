import Foundation
import Glibc
import Logging
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindAssembly
import UnwindSeams

/// The loop's panic link: the core's 0-based slots become the outbox's 1-based ones and back,
/// so an alert journaled by the device survives a restart and is shown on the right row.
@Suite struct AlertLinkTests {
    @Test func slotsSurviveTheOutboxAndARestart() throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(result: .silence)   // nothing confirmed: still in the outbox
        let sim = try ModemSimulator(script: script)
        sim.start()
        defer { sim.stop() }
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = LinuxClock()
        let alert = try AlertSlot(name: "Mum", number: "+15550100001", message: "Please call me.")
        do {
            let link = ModemAlertLink(modem: GSMModem(port: try SerialPort(SerialConfiguration(path: sim.path)),
                                                      outbox: Outbox(storage: try DirectoryStore.outbox(at: dir)), logger: Logger(label: "t")))
            link.send([AlertRequest(slot: 0, alert: alert), AlertRequest(slot: 4, alert: alert)], at: clock.now())
            var updates: [AlertLinkUpdate] = []
            link.step(at: clock.now(), into: &updates)
            #expect(updates.contains(.delivery(slot: 0, .queued)) && updates.contains(.delivery(slot: 4, .queued)))
            link.close()
        }
        // A new daemon on the same outbox: both alerts are back, on the same rows.
        let reloaded = Outbox(storage: try DirectoryStore.outbox(at: dir))
        #expect(reloaded.problems.isEmpty)
        #expect(reloaded.entries.map(\.slot) == [1, 5])
        let link = ModemAlertLink(modem: GSMModem(port: try SerialPort(SerialConfiguration(path: sim.path)),
                                                  outbox: reloaded, logger: Logger(label: "t")))
        var updates: [AlertLinkUpdate] = []
        link.step(at: clock.now(), into: &updates)
        #expect(Set(updates.compactMap { if case .delivery(let s, _) = $0 { s } else { nil } }) == [0, 4])
        // The person sees them again, first thing: the status screen as before the restart.
        guard case .resumed(let progress, let purpose, _)? = updates.first else { Issue.record("no resumed alerts: \(updates)"); return }
        #expect(purpose == .panic)
        #expect(progress.map(\.slot) == [0, 4] && progress.allSatisfy { $0.name == "Mum" })
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.alertsResumed(progress), at: clock.now(), effects: &effects)
        #expect(core.state.overlay == .alertStatus)
        #expect(core.state.panic.progress.map(\.slot) == [0, 4])
        #expect(effects.contains { if case .motor = $0 { true } else { false } }, "felt, not only seen")
        link.close()
    }

    /// The daemon's own opening of its modem link (`unwind run`), reached without the assembly's
    /// preparation: whatever is under `outbox` or `replies` is set aside and the link opens.
    @Test(arguments: ["file", "link to a directory outside", "dangling link", "FIFO"])
    func theModemLinkOpensWhateverIsUnderItsDirectories(_ form: String) throws {
        let sim = try ModemSimulator()
        sim.start()
        defer { sim.stop() }
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = root + "/state", outside = root + "/outside"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for name in [Outbox.directoryName, Inbox.directoryName] {
            let path = state + "/" + name
            switch form {
            case "file": #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
            case "link to a directory outside": #expect(symlink(outside, path) == 0)
            case "dangling link": #expect(symlink(root + "/nowhere", path) == 0)
            default: #expect(mkfifo(path, 0o600) == 0)
            }
        }
        let link = try ModemAlertLink.open(stateDirectory: state, serial: SerialConfiguration(path: sim.path),
                                           modem: ModemConfiguration(), logger: Logger(label: "t"),
                                           now: LinuxClock().now())
        link.close()
        let entries = try FileManager.default.contentsOfDirectory(atPath: state)
        for name in [Outbox.directoryName, Inbox.directoryName] {
            #expect(fileType(state + "/" + name) == S_IFDIR, "\(entries)")
            #expect(entries.contains { $0.hasPrefix(name + ".corrupt-") }, "\(entries)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "written through the link")
    }

    /// No outbox can be had at all (here: the state directory is gone): the link still opens,
    /// journals in memory and sends — a device that exits has no panic path.
    @Test func withNoOutboxAtAllAlertsStillGoOut() throws {
        let sim = try ModemSimulator(script: ModemScript())
        sim.start()
        defer { sim.stop() }
        let clock = LinuxClock()
        let link = try ModemAlertLink.open(stateDirectory: "/nonexistent-\(getpid())/state", serial: SerialConfiguration(path: sim.path),
                                           modem: patientModemConfiguration, logger: Logger(label: "t"), now: clock.now())
        defer { link.close() }
        let alert = try AlertSlot(name: "Mum", number: "+15550100001", message: "Please call me.")
        link.send([AlertRequest(slot: 0, alert: alert)], at: clock.now())
        let end = clock.now().instant + .seconds(15)
        var updates: [AlertLinkUpdate] = []
        while sim.submitCount == 0 && clock.now().instant < end {
            link.step(at: clock.now(), into: &updates)
            usleep(10_000)
        }
        #expect(sim.submitCount == 1, "\(updates)")
    }
}
