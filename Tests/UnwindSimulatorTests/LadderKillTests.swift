#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance
import UnwindCore
import UnwindSimulatedHardware

/// The escalation ladder across a real SIGKILL: the whole device — the real
/// `unwind sim --modem` executable in a terminal made by `script(1)` — on a modem simulator on
/// a pseudo-terminal (the network: it counts every `ATD` and every SMS), killed with SIGKILL
/// while it rings the second contact, then started again on the same state directory. Nobody is
/// rung twice, nobody gets the alert twice, and the ladder goes on with the third contact.
@Suite("The ladder survives SIGKILL", .serialized)
struct LadderKillTests {
    static let contacts = [("Mum", "+15550100001"), ("Dad", "+15550100002"), ("Sam", "+15550100003")]

    /// The device in its terminal; `keys` types into it.
    final class Device {
        let process = Process()
        let keys = Pipe()

        init(state: String, modem: String, config: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qfec", "\(UnwindRun.executable) sim --state \(state) --modem \(modem) --baud 115200 --config \(config)",
                                 "/dev/null"]
            process.standardInput = keys
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit { if process.isRunning { process.terminate() } }
    }

    static func status(_ state: String) -> StatusReport? {
        let r = UnwindRun.run(["status", "--json", "--state", state])
        return r.status == 0 ? try? JSONDecoder().decode(StatusReport.self, from: Data(r.stdout.utf8)) : nil
    }

    static func wait(_ limit: Duration, _ done: () -> Bool) -> Bool { waitUntil(limit, every: .milliseconds(50), done) }

    @Test func killedWhileRingingTheSecondContactItRingsOnlyTheThirdAfterTheRestart() throws {
        let modem = try ModemSimulator()
        modem.start()
        defer { modem.stop() }
        let dir = temporaryDirectory("ladderkill")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        for (k, c) in Self.contacts.enumerated() {
            try Data("\(c.0)\n\(c.1)\nPanic attack, please call me.\n".utf8)
                .write(to: URL(fileURLWithPath: state + "/" + AlertSlotFile.name(slot: k + 1)))
        }
        // The shortest ladder the configuration allows: calls 30 s after the alerts, 10 s each.
        let config = dir + "/unwind.conf"
        try Data("panic:\n  escalate_after_s: 30\n  ring_s: 10\n  call_rounds: 1\n".utf8).write(to: URL(fileURLWithPath: config))
        // The numbers the network was asked to ring (`ATD<number>;`), in order (its list also holds the `ATH`s).
        func calls() -> [String] {
            modem.withScriptedModem { $0.calls }.filter { $0.hasPrefix("ATD") }.map { String($0.dropFirst(3).dropLast()) }
        }

        var device: Device? = try Device(state: state, modem: modem.path, config: config)
        #expect(Self.wait(.seconds(30)) { Self.status(state)?.modem?.link == "ready" }, "the device never saw the modem ready")
        device?.keys.fileHandleForWriting.write(Data("!".utf8))  // PANIC, held 1.6 s
        #expect(Self.wait(.seconds(30)) { modem.delivered.count == Self.contacts.count }, "delivered: \(modem.delivered)")
        // Mid-ladder: the network rings the second contact and the device has written so.
        let ringingTwo = Self.wait(.seconds(90)) {
            calls().count == 2 && (readText(state + "/escalation.txt")?.contains("phase ringing 2 ") ?? false)
        }
        #expect(ringingTwo, "calls: \(calls()); escalation.txt: \(readText(state + "/escalation.txt") ?? "-")")
        guard ringingTwo, case .running(let pid?, _)? = try? DaemonPresence.probe(stateDirectory: state) else {
            Issue.record("the device is not running as it should: \(String(describing: try? DaemonPresence.probe(stateDirectory: state)))")
            return
        }
        #expect(kill(pid, SIGKILL) == 0)
        #expect(Self.wait(.seconds(10)) { device?.process.isRunning == false }, "the killed device's terminal did not end")
        device = nil
        let rungBefore = calls()

        // The same state directory, the same network: the ladder goes on where it was.
        device = try Device(state: state, modem: modem.path, config: config)
        let ended = Self.wait(.seconds(90)) { Self.status(state)?.help?.escalation == "ended: every round done" }
        #expect(ended, "escalation: \(Self.status(state)?.help?.escalation ?? "-"); calls: \(calls())")
        #expect(rungBefore == [Self.contacts[0].1, Self.contacts[1].1])
        #expect(calls() == Self.contacts.map(\.1), "each contact rung exactly once, in slot order: \(calls())")
        for c in Self.contacts {
            #expect(modem.delivered.filter { $0.number == c.1 }.count == 1, "\(c.0) got the alert \(modem.delivered.filter { $0.number == c.1 }.count) times")
        }
        #expect(modem.violations.isEmpty, "\(modem.violations)")
        device?.keys.fileHandleForWriting.write(Data("q".utf8))
        #expect(Self.wait(.seconds(10)) { device?.process.isRunning == false }, "the simulator did not quit")
        print("ladder kill: SIGKILL while ringing contact 2; after the restart calls \(calls()), \(modem.delivered.count) alerts on the network")
    }
}
