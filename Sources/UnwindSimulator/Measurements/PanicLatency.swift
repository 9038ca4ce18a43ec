#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

/// The benchmark's panic path: a ready simulated modem at `baud` on a real pty, its own thread
/// answering; the device side is the real `SerialPort`, `Outbox` (on `directory`, fsynced) and
/// `GSMModem`, driven like the loop drives it. Measured: from "PANIC armed" — the alerts handed to
/// `sendAll`, which writes each to the outbox — to the first byte of `AT+CMGS` read by the modem.
/// The run then continues until every alert is confirmed, so a fast wrong answer cannot pass.
public func measurePanicLatency(alerts count: Int = 5, baud: Int = 115_200, directory: String? = nil) throws -> Duration {
    precondition((1...AlertSlotFile.slotCount).contains(count), "1 to 5 alerts")
    let clock = LinuxClock()
    var script = ModemScript()
    script.outputBaud = baud
    let sim = try ModemSimulator(script: script)
    sim.start()
    defer { sim.stop() }

    let dir = directory ?? FileManager.default.temporaryDirectory.path + "/unwind-panic-latency-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { if directory == nil { try? FileManager.default.removeItem(atPath: dir) } }
    var logger = Logger(label: "unwind.bench.modem")
    logger.logLevel = .warning
    let port = try SerialPort(SerialConfiguration(path: sim.path, baud: baud))
    let modem = GSMModem(port: port, outbox: Outbox(storage: try DirectoryStore.outbox(at: dir)), random: SeededRandom(seed: 1), logger: logger)
    defer { modem.close() }

    func drive(until done: () -> Bool, within limit: Duration) throws {
        let end = clock.now().instant + limit
        while !done() {
            let now = clock.now()
            if now.instant > end { throw DeviceError(device: "panic latency", operation: "wait for the modem", errno: ETIMEDOUT) }
            modem.step(at: now)
            if done() { return }
            var wait = Int32(5)
            if let d = modem.nextDeadline {
                wait = Int32(max(0, min(5, (d - clock.now().instant).nanoseconds / 1_000_000)))
            }
            var fds = modem.pollDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), wait)
        }
    }

    // Ready and quiet: set up, status read, nothing in flight.
    try drive(until: { modem.status.link == .ready && modem.status.operatorName != nil }, within: .seconds(10))

    let alerts = try (1...count).map { k in
        (slot: k, alert: try AlertSlot(name: "Contact \(k)", number: "+1555010000\(k)",
                                       message: "Panic alert \(k): please call me now. I am at home."))
    }
    let armed = clock.now()
    modem.sendAll(alerts, at: armed)
    try drive(until: { sim.firstSubmitAt != nil }, within: .seconds(10))
    let latency = sim.firstSubmitAt! - armed.instant
    try drive(until: { modem.isIdle }, within: .seconds(20))
    guard sim.delivered.count == count, sim.violations.isEmpty else {
        throw DeviceError(device: "panic latency", operation: "check the delivered alerts", errno: EPROTO,
                          hint: "\(sim.delivered.count) of \(count) delivered; violations: \(sim.violations)")
    }
    return latency
}
