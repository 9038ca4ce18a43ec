#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindSimulator

/// `unwind sim --modem PATH`: the whole device, the real executable in a real terminal (a pty
/// from `script`), driving a modem it did not start — here a modem simulator on another
/// pseudo-terminal, as a maintainer would try a USB dongle before deploying. PANIC is a key.
@Suite("unwind sim --modem on a pseudo-terminal", .serialized)
struct SimRealModemTests {
    @Test func panicThroughAModemTheSimulatorDidNotStart() throws {
        let modem = try ModemSimulator()
        modem.start()
        defer { modem.stop() }
        let dir = temporaryDirectory("simmodem")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let contacts = [("Mum", "+15550100001"), ("Dad", "+15550100002"), ("Sam", "+15550100003")]
        for (k, c) in contacts.enumerated() {
            try Data("\(c.0)\n\(c.1)\nPanic attack, please call me.\n".utf8)
                .write(to: URL(fileURLWithPath: dir + "/" + AlertSlotFile.name(slot: k + 1)))
        }
        // A broken slot: logged at start, and `unwind status` must show it (it said "none").
        try Data("\(String(repeating: "N", count: 41))\n+15550100004\nHelp\n".utf8)
            .write(to: URL(fileURLWithPath: dir + "/" + AlertSlotFile.name(slot: 4)))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qfec", "\(UnwindRun.executable) sim --state \(dir) --modem \(modem.path) --baud 115200", "/dev/null"]
        let keys = Pipe()
        p.standardInput = keys
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }

        func status() -> StatusReport? {
            let r = UnwindRun.run(["status", "--json", "--state", dir])
            return r.status == 0 ? try? JSONDecoder().decode(StatusReport.self, from: Data(r.stdout.utf8)) : nil
        }
        func wait(_ limit: Duration, _ done: () -> Bool) -> Bool { waitUntil(limit, every: .milliseconds(50), done) }
        #expect(wait(.seconds(20)) { status()?.modem?.link == "ready" }, "the device never saw the modem ready")

        let pressed = ContinuousClock.now
        keys.fileHandleForWriting.write(Data("!".utf8))  // PANIC, held 1.6 s
        #expect(wait(.seconds(20)) { modem.delivered.count == contacts.count }, "delivered: \(modem.delivered)")
        let lastConfirmed = ContinuousClock.now - pressed
        #expect(Set(modem.delivered.map(\.number)) == Set(contacts.map(\.1)))
        #expect(modem.violations.isEmpty, "\(modem.violations)")
        // What the person sees is what the wire says: every contact SENT, once.
        let shown = status()
        #expect(shown?.overlay == "alert status", "\(String(describing: shown?.overlay))")
        #expect(shown?.recentErrors.contains { $0.contains("alert04.txt") } == true, "\(String(describing: shown?.recentErrors))")
        #expect(modem.delivered.count == contacts.count, "a contact got it twice")
        print("sim --modem: PANIC key → last +CMGS of \(contacts.count) alerts in \(lastConfirmed) (1.5 s of it the hold to arm)")

        keys.fileHandleForWriting.write(Data("q".utf8))
        #expect(wait(.seconds(10)) { !p.isRunning }, "the simulator did not quit")
        #expect(p.terminationStatus == 0)
    }
}
