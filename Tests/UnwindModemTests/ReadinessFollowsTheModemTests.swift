import Testing
import UnwindCore
import UnwindModem
import UnwindSimulatedHardware

/// Readiness follows what the modem says: at once when it says so unasked or in an answer,
/// within the registration poll (5 s) otherwise — never a "ready" the modem has contradicted.
@Suite("Readiness follows the modem")
struct ReadinessFollowsTheModemTests {
    static let notRegistered = AlertReadiness(problems: [.notRegistered])

    static func unregistered(_ s: inout ModemScript) {
        (s.creg, s.cgreg, s.cereg) = ("+CREG: 0,0", "+CGREG: 0,0", "+CEREG: 0,0")
    }

    static func registered(_ s: inout ModemScript) {
        (s.creg, s.cgreg, s.cereg) = ("+CREG: 0,1", "+CGREG: 0,1", "+CEREG: 0,1")
    }

    /// The SIM pulled out while idle: `+CPIN: NOT INSERTED` is "no SIM card" at once, even
    /// while the modem then answers AT+CPIN? only "SIM busy".
    @Test func aSIMPulledOutIsSaidAtOnce() throws {
        let rig = try ModemRig(configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        rig.run(for: .seconds(1))
        #expect(rig.modem.currentReadiness == .ready)
        rig.sim.setScript { $0.replies["AT+CPIN?"] = Array(repeating: ["+CME ERROR: 14"], count: 50) }
        rig.sim.inject(["+CPIN: NOT INSERTED"])
        let start = rig.now.instant
        #expect(rig.run(until: { rig.modem.currentReadiness?.problems == [.sim("no SIM card")] }, within: .seconds(10)))
        #expect(rig.now.instant - start < .milliseconds(100), "said after \(rig.now.instant - start)")
    }

    /// A `+CME ERROR: 10` to any command says the same, before the SIM is asked again.
    @Test func aSIMErrorInAnAnswerIsSaidAtOnce() throws {
        let rig = try ModemRig(configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        rig.run(for: .seconds(1))
        rig.sim.setScript {
            $0.replies["AT+CPIN?"] = Array(repeating: ["+CME ERROR: 10"], count: 50)
            $0.resultsByText = ["Please call me.": .cmeError(10)]
        }
        let start = rig.now.instant
        _ = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.currentReadiness?.problems == [.sim("no SIM card")] }, within: .seconds(10)))
        #expect(rig.now.instant - start < .seconds(1), "said after \(rig.now.instant - start)")
    }

    /// The network lost and found while nothing is sent, on a modem that announces neither:
    /// each is said within the registration poll, and the modem is asked every 5 s meanwhile.
    @Test func aNetworkLostAndFoundWhileIdleIsSaidWithinThePoll() throws {
        let rig = try ModemRig(configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        rig.run(for: .seconds(7))
        #expect(rig.modem.currentReadiness == .ready)
        rig.sim.setScript(Self.unregistered)
        var start = rig.now.instant
        #expect(rig.run(until: { rig.modem.currentReadiness == Self.notRegistered }, within: .seconds(60)))
        #expect(rig.now.instant - start <= .milliseconds(5500), "the loss was said after \(rig.now.instant - start)")
        let asked = rig.sim.commands.filter { $0 == "AT+CREG?" }.count
        rig.run(for: .seconds(30))
        let askedWhileLost = rig.sim.commands.filter { $0 == "AT+CREG?" }.count - asked
        #expect(askedWhileLost >= 5, "asked \(askedWhileLost) times in 30 s while unregistered")
        rig.sim.setScript(Self.registered)
        start = rig.now.instant
        #expect(rig.run(until: { rig.modem.currentReadiness == .ready }, within: .seconds(60)))
        #expect(rig.now.instant - start <= .milliseconds(5500), "the recovery was said after \(rig.now.instant - start)")
    }

    /// A submit answered `+CMS ERROR: 331` (no network service): "not registered" at once, not
    /// at the next poll; the alert goes once the network is back.
    @Test func noNetworkServiceInAnAnswerIsSaidAtOnce() throws {
        let rig = try ModemRig(configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        rig.run(for: .seconds(1))
        rig.sim.setScript {
            Self.unregistered(&$0)
            $0.resultsByText = ["Please call me.": .cmsError(331)]
        }
        let start = rig.now.instant
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.currentReadiness == Self.notRegistered }, within: .seconds(10)))
        #expect(rig.now.instant - start < .seconds(1), "said after \(rig.now.instant - start)")
        rig.sim.setScript {
            Self.registered(&$0)
            $0.resultsByText = [:]
        }
        #expect(rig.run(until: { PanicCopiesTests.wentOut(rig.modem.message(id)?.state) }, within: .seconds(120)))
        #expect(rig.modem.currentReadiness == .ready)
    }
}
