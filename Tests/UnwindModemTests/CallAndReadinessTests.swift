import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// The escalation ladder's calls and the readiness indicator, in memory on simulated time.
@Suite("Calls and readiness (in memory, simulated time)")
struct CallAndReadinessTests {
    static let mum = try! PhoneNumber("+15550100001")
    static let dad = try! PhoneNumber("+15550100002")

    // MARK: Calls

    @Test(arguments: [DialPlan.endsAfter(.seconds(3), "NO ANSWER"), .endsAfter(.seconds(2), "NO CARRIER"),
                      .refused("BUSY"), .refused("NO ANSWER")])
    func aDialledCallThatEndsByItselfIsOver(_ plan: DialPlan) throws {
        var script = ModemScript()
        script.defaultDial = plan
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { if case .ended = rig.modem.call { true } else { false } }, within: .seconds(5)))
        #expect(!rig.modem.call.isInCall)
        #expect(rig.modem.takeEvents().contains { if case .callChanged(.ended) = $0 { true } else { false } })
        expectClean(rig.sim)
    }

    @Test func aRefusedDialFailsAndIsOver() throws {
        var script = ModemScript()
        script.defaultDial = .refused("+CME ERROR: 30")
        let rig = try ModemRig(script: script)
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { if case .failed = rig.modem.call { true } else { false } }))
        #expect(!rig.modem.call.isInCall)
    }

    /// The ladder: ring Mum, hang up, ring Dad — the hang-up and the next dial asked for in one
    /// breath go out in order, one command at a time.
    @Test func hangUpAndDialTheNextBackToBack() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        rig.modem.hangUp()
        rig.modem.dial(Self.dad, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.dad) }))
        #expect(rig.sim.calls == ["ATD+15550100001;", "ATH", "ATD+15550100002;"])
        rig.modem.hangUp()
        #expect(rig.run(until: { rig.modem.call == .ended("hung up") }))
        #expect(rig.sim.callNumber == nil)
        expectClean(rig.sim)
    }

    /// Ringing is not answered: AT+CLCC says stat 3 until the contact picks up (stat 0), and the
    /// answered call ends when they hang up.
    @Test func anAnsweredCallIsToldApartFromRinging() throws {
        var script = ModemScript()
        script.dials["+15550100001"] = .answers(after: .seconds(5), hangsUpAfter: .seconds(30))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        rig.run(for: .seconds(4))
        #expect(rig.modem.call == .active(Self.mum))
        #expect(rig.run(until: { rig.modem.call == .answered(Self.mum) }, within: .seconds(3)))
        #expect(rig.run(until: { if case .ended = rig.modem.call { true } else { false } }, within: .seconds(40)))
        #expect(rig.sim.answeredCalls == ["+15550100001"] && rig.sim.calls == ["ATD+15550100001;"])
        expectClean(rig.sim)
    }

    /// Whatever the modem lists — lines cut short, huge numbers, quotes, garbage — nothing is
    /// taken for an answer that is not one, and a modem without AT+CLCC is asked once per call.
    @Test(arguments: [["+CLCC: 1,0,99999999999999999999999,0,0"], ["+CLCC: 1,0"], ["+CLCC: \"1\",\"0\",\"0\",\"0\",\"0\""],
                      ["+CLCC: 1,1,0,0,0,\"+15550100009\",145"], ["\u{1B}[2J+CLCC: 1,0,0,0,0", "+CLCC: ,,,,,,,,,,"],
                      [String(repeating: "+CLCC: 1,0,", count: 500)]])
    func hostileCallListsAreNeverAnAnswer(_ lines: [String]) throws {
        var script = ModemScript()
        script.callList = lines
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        rig.run(for: .seconds(5))
        #expect(rig.modem.call == .active(Self.mum))
        #expect(rig.sim.commands.filter { $0 == "AT+CLCC" }.count >= 3)
        rig.modem.hangUp()
        #expect(rig.run(until: { rig.modem.call == .ended("hung up") }))
    }

    @Test func aModemWithoutTheCallListIsAskedOncePerCall() throws {
        var script = ModemScript()
        script.listsCalls = false
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        rig.run(for: .seconds(10))
        #expect(rig.modem.call == .active(Self.mum))
        #expect(rig.sim.commands.filter { $0 == "AT+CLCC" }.count == 1)
    }

    /// The call ends on its own while the hang-up is on its way: the next dial still goes.
    @Test func theNextDialGoesWhenTheCallEndedFirst() throws {
        var script = ModemScript()
        script.dials["+15550100001"] = .endsAfter(.milliseconds(400), "NO ANSWER")
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        rig.run(for: .milliseconds(380))
        rig.modem.hangUp()
        rig.modem.dial(Self.dad, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(Self.dad) }))
        #expect(rig.sim.calls.last == "ATD+15550100002;")
        expectClean(rig.sim)
    }

    /// A long alert on its way and a call asked for meanwhile: every part goes, the call too,
    /// never two commands at once.
    @Test func aCallDuringAnAlertDisturbsNothing() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        let a = alert("Sam", "+15550100003", String(repeating: "Come now. ", count: 13) + String(repeating: "€", count: 20))
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        rig.run(until: { rig.sim.parts.count == 1 })
        rig.modem.dial(Self.mum, at: rig.now.instant)
        #expect(rig.settle())
        #expect(rig.run(until: { rig.modem.call == .active(Self.mum) }))
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        if case .sent = rig.modem.message(id)?.state {} else { Issue.record("\(String(describing: rig.modem.message(id)))") }
        expectClean(rig.sim, texts: [a.message])
    }

    // MARK: Readiness

    static func readiness(_ events: [ModemEvent]) -> [AlertReadiness] {
        events.compactMap { if case .readiness(let r, _) = $0 { r } else { nil } }
    }

    @Test func aHealthyModemIsReadyOnceSetUp() throws {
        let rig = try ModemRig()
        var seen: [AlertReadiness] = []
        #expect(rig.run(until: { seen += Self.readiness(rig.modem.takeEvents()); return !seen.isEmpty }))
        #expect(seen == [.ready], "no 'cannot send' while it was starting")
        #expect(rig.modem.status.link == .ready)
    }

    @Test func weakSignalNotRegisteredAndNoServiceCentre() throws {
        var script = ModemScript()
        script.csq = "+CSQ: 3,99"
        script.csca = "+CSCA: \"\",129"
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.run(for: .milliseconds(10))
        #expect(rig.modem.currentReadiness?.problems == [.weakSignal(3), .noServiceCentre])
        var unregistered = ModemScript()
        (unregistered.creg, unregistered.cgreg, unregistered.cereg) = ("+CREG: 0,2", nil, nil)
        let rig2 = try ModemRig(script: unregistered)
        #expect(rig2.ready())
        rig2.run(for: .milliseconds(10))
        #expect(rig2.modem.currentReadiness?.problems == [.notRegistered])
    }

    /// It changes both ways, and each change is said once.
    @Test func readinessChangesBothWays() throws {
        var script = ModemScript()
        (script.cgreg, script.cereg) = (nil, nil)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.run(for: .milliseconds(10))
        var seen = Self.readiness(rig.modem.takeEvents())
        rig.sim.inject(["+CREG: 2"])
        rig.run(for: .milliseconds(10))
        rig.sim.inject(["+CREG: 3"])
        rig.run(for: .milliseconds(10))
        rig.sim.inject(["+CREG: 1"])
        rig.run(for: .milliseconds(10))
        seen += Self.readiness(rig.modem.takeEvents())
        #expect(seen == [.ready, AlertReadiness(problems: [.notRegistered]), .ready])
    }

    @Test func aSilentModemIsSaidAfterThePatience() throws {
        var script = ModemScript()
        script.silent = true
        let rig = try ModemRig(script: script, configure: { $0.timeouts.readiness = .seconds(2) })
        rig.run(for: .seconds(1))
        #expect(rig.modem.currentReadiness == nil, "not yet: it may be starting")
        #expect(rig.run(until: { rig.modem.currentReadiness != nil }, within: .seconds(2)))
        #expect(rig.modem.currentReadiness?.problems == [.modemSilent])
    }

    /// A modem unplugged for a moment is no news; for longer than the patience it is, and
    /// plugged back in it is ready again.
    @Test func anUnpluggedModem() throws {
        let rig = try ModemRig(configure: { $0.timeouts.readiness = .seconds(2) })
        #expect(rig.ready())
        rig.run(for: .milliseconds(10))
        #expect(rig.modem.currentReadiness == .ready)
        rig.sim.unplug()
        rig.run(for: .seconds(1))
        #expect(rig.modem.currentReadiness == .ready, "a moment's glitch is not news")
        #expect(rig.run(until: { rig.modem.currentReadiness?.problems == [.modemSilent] }, within: .seconds(3)))
        try rig.sim.replug()
        #expect(rig.run(until: { rig.modem.currentReadiness == .ready }, within: .seconds(3)))
    }

    @Test func noSIMIsSaidAtOnce() throws {
        var script = ModemScript()
        script.replies["AT+CPIN?"] = Array(repeating: ["+CME ERROR: 10"], count: 50)
        let rig = try ModemRig(script: script)
        #expect(rig.run(until: { rig.modem.currentReadiness != nil }, within: .seconds(2)))
        #expect(rig.modem.currentReadiness?.problems == [.sim("no SIM card")])
    }

    /// The self-test runs the checks again, sets nothing, sends nothing, and always answers.
    @Test func theSelfTestChecksWithoutSending() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        rig.run(for: .milliseconds(10))
        _ = rig.modem.takeEvents()
        let before = rig.sim.commands.count
        rig.modem.runSelfTest(at: rig.now)
        var outcome: [ModemEvent] = []
        #expect(rig.run(until: {
            outcome += rig.modem.takeEvents()
            return outcome.contains { if case .readiness(_, selfTest: true) = $0 { true } else { false } }
        }))
        #expect(outcome.contains(.readiness(.ready, selfTest: true)))
        let ran = Array(rig.sim.commands[before...])
        #expect(ran == ["AT", "AT+CPIN?", "AT+CREG?", "AT+CGREG?", "AT+CEREG?", "AT+CSQ", "AT+COPS?", "AT+CSCA?"])
        #expect(rig.sim.submitCount == 0)
        expectClean(rig.sim)
    }

    @Test func theSelfTestOfAModemThatIsGone() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        rig.sim.unplug()
        rig.run(for: .milliseconds(50))
        rig.modem.runSelfTest(at: rig.now)
        var outcome: [ModemEvent] = []
        #expect(rig.run(until: {
            outcome += rig.modem.takeEvents()
            return outcome.contains { if case .readiness(_, selfTest: true) = $0 { true } else { false } }
        }))
        #expect(outcome.contains(.readiness(AlertReadiness(problems: [.modemSilent]), selfTest: true)))
    }
}
