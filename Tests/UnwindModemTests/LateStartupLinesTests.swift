import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem

/// A modem powered on with the board says RDY (or START) first, then finishes its own start-up
/// seconds to a minute later: SIM800's Call Ready and SMS Ready, EC25's +QIND: SMS DONE,
/// SIM7600's SMS DONE and PB DONE, often after the device has set it up. Those are not a
/// restart: no "restarted on its own" for the maintainer, no second set-up. A restart is still
/// one: RDY at any time, and the same lines long after the modem's start (a SIM800 at autobaud
/// restarts without RDY).
@Suite struct LateStartupLinesTests {
    static func rig() throws -> ModemRig {
        try ModemRig(configure: { $0.timeouts.lateStartup = .seconds(3) })
    }

    @Test(arguments: [["+QIND: SMS DONE"], ["SMS DONE", "PB DONE"], ["Call Ready", "SMS Ready"], ["+QIND: \"PB DONE\""]])
    func theModemsOwnStartUpFinishingIsNotARestart(_ lines: [String]) throws {
        let rig = try Self.rig()
        #expect(rig.ready())
        let setUp = rig.transcript
        rig.run(for: .seconds(1))
        rig.sim.inject(lines)
        rig.run(for: .milliseconds(500))
        #expect(rig.settle())
        #expect(rig.modem.status.restarts == 0)
        // Nothing but the registration poll went to the modem since its set-up.
        #expect(rig.transcript.hasPrefix(setUp))
        let later = String(rig.transcript.dropFirst(setUp.count)).replacingOccurrences(of: "AT+CREG?\\rAT+CGREG?\\rAT+CEREG?\\r", with: "")
        #expect(later.isEmpty, "set up again after \(lines): \(later)")
        #expect(rig.modem.status.link == .ready)
    }

    /// (what the modem says, how long after it was set up): each a restart, set up again.
    @Test(arguments: [(["SMS Ready"], Duration.seconds(4)), (["RDY"], Duration.seconds(1))])
    func aRestartIsStillOne(_ lines: [String], after: Duration) throws {
        let rig = try Self.rig()
        #expect(rig.ready())
        rig.run(for: after)
        rig.sim.inject(lines)
        #expect(rig.run(until: { rig.modem.status.restarts == 1 }), "\(lines) after \(after)")
        #expect(rig.ready())
    }
}
