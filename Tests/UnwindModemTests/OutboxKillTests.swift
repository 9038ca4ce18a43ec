import Foundation
import Glibc
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

/// The outbox across a restart, with a real process and a real SIGKILL: the panic path is killed
/// between the outbox write and `+CMGS` (before any AT traffic, or with the PDU on the wire and
/// no confirmation), and the next start sends the alert — once or twice, never not at all.
@Suite("Outbox: killed mid-send", .serialized)
struct OutboxKillTests {
    enum KillPoint: String, CaseIterable { case afterJournal, afterPDU }

    static func senderPath() throws -> String {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let path = exe.appendingPathComponent("alert-sender").path
        try #require(FileManager.default.isExecutableFile(atPath: path), "alert-sender not built beside the tests at \(path)")
        return path
    }

    func spawn(_ args: [String]) throws -> (Process, FileHandle) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Self.senderPath())
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        return (p, out.fileHandleForReading)
    }

    func waitFor(_ line: String, in h: FileHandle, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var text = ""
        while Date() < deadline {
            var p = pollfd(fd: h.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) >= 0 else { return false }
            if p.revents & Int16(POLLIN) != 0 {
                let d = h.availableData
                if d.isEmpty { return false }
                text += String(decoding: d, as: UTF8.self)
                if text.split(separator: "\n").contains(Substring(line)) { return true }
            }
        }
        return false
    }

    func until(_ seconds: Double, _ done: () -> Bool) -> Bool {
        waitUntil(.milliseconds(Int64(seconds * 1000)), every: .milliseconds(2), done)
    }

    @Test(arguments: KillPoint.allCases)
    func theAlertGoesOutAfterARestart(_ point: KillPoint) throws {
        var script = ModemScript()
        // The first daemon never gets its confirmation: the network swallows the part.
        script.defaultSubmit = SubmitPlan(result: .silence)
        if point == .afterJournal { script.silent = true }   // not even AT is answered
        let sim = try ModemSimulator(script: script)
        sim.start()
        defer { sim.stop() }
        let dir = scratchRoot + "outbox-kill-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let message = "I'm having a panic attack. Please call me."

        let (first, out) = try spawn([sim.path, dir, "Mum", "+15550100001", message])
        #expect(waitFor("journaled", in: out))
        if point == .afterPDU { #expect(until(10) { !sim.parts.isEmpty }) }   // in doubt: on the wire, unconfirmed
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        #expect(sim.delivered.isEmpty)
        let journaled = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".msg") }
        #expect(journaled.count == 1)

        // The next start, on a healthy network: a new modem session on the same outbox.
        sim.setScript { $0 = ModemScript() }
        let clock = LinuxClock()
        let reloaded = Outbox(storage: try DirectoryStore.outbox(at: dir), now: LinuxClock().now().wall)
        #expect(reloaded.entries.count == 1, "outbox problems: \(reloaded.problems), files: \((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])")
        let modem = GSMModem(port: try SerialPort(SerialConfiguration(path: sim.path)),
                             outbox: Outbox(storage: try DirectoryStore.outbox(at: dir), now: clock.now().wall), logger: quietLogger())
        defer { modem.close() }
        let sent = until(20) {
            modem.step(at: clock.now())
            var fds = modem.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 10)
            return modem.isIdle && !sim.delivered.isEmpty && !modem.messages.contains(where: \.awaitingReports)
        }
        let delivered = sim.delivered.map(\.text)
        #expect(sent, "link \(modem.status.link), messages \(modem.messages.map { "\($0.state) attempts \($0.attempts)" }), commands \(sim.commands.suffix(12))")
        #expect(!delivered.isEmpty && delivered.allSatisfy { $0 == message }, "delivered: \(delivered)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".msg") }.isEmpty)
        #expect(sim.violations.isEmpty)
    }
}
