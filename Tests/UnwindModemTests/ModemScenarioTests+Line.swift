import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// The modem scenarios, continued: the line itself going wrong (restarts, a closed tty, a slow
/// baud rate), the network, calls, and what must never reach an AT command line.
extension ModemScenarioTests {
    /// The modem restarts between the PDU and +CMGS: set up again, and the alert sent again.
    @Test func modemRestartMidSend() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .restart)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        #expect(rig.transcript == startupTranscript + sendTranscript(p) + startupAndSend(sendTranscript(p)))
        #expect(rig.modem.message(id)?.lastProblem == .modemRestarted)
        #expect(rig.modem.status.restarts == 1)
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    /// The modem restarts while waiting for the prompt (boot messages instead of "> ").
    @Test func modemRestartBeforeThePrompt() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(prompt: .never)
        let rig = try ModemRig(script: script, configure: { $0.timeouts.prompt = .seconds(2) })
        #expect(rig.ready())
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.submitCount == 1 }))
        rig.sim.restart()
        #expect(rig.settle())
        let p = pdus(a, reference: 0)[0]
        #expect(rig.transcript == startupTranscript + "AT+CMGF=0\\rAT+CMGS=\(p.tpduLength)\\r" + startupAndSend(sendTranscript([p])))
        #expect(rig.sim.prompts.map(\.sent) == [true], "only the second prompt was shown and filled")
        expectClean(rig.sim)
    }

    /// USB unplugged mid-send: the tty vanishes; the device reopens it with backoff and resends.
    @Test func ttyClosedAndReopened() throws { try Self.ttyClosedAndReopened(over: .memory) }

    static func ttyClosedAndReopened(over wire: Wire) throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(prompt: .never)
        let rig = try ModemRig(script: script, over: wire, configure: { $0.timeouts.prompt = .seconds(2) })
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.sim.submitCount == 1 }))
        rig.sim.unplug()
        #expect(rig.run(until: { if case .closed(let why?) = rig.modem.status.link { return why.contains("ENOENT") || why.contains("No such file") }; return false },
                        within: .seconds(2)))
        #expect(rig.modem.message(id)?.lastProblem == .lineLost)
        #expect(rig.modem.pollDescriptors.isEmpty)
        rig.run(for: .milliseconds(150))
        try rig.sim.replug()
        #expect(rig.settle())
        let p = pdus(a, reference: 0)[0]
        #expect(rig.transcript == startupTranscript + "AT+CMGF=0\\rAT+CMGS=\(p.tpduLength)\\r" + startupAndSend(sendTranscript([p])))
        #expect(rig.sim.delivered.count == 1)
        #expect(rig.modem.status.link == .ready)
        expectClean(rig.sim)
    }

    /// A slow line (2400 baud, paced output): the same conversation, only slower.
    @Test func slowBaudRate() throws { try Self.slowBaudRate(over: .memory) }

    static func slowBaudRate(over wire: Wire) throws {
        var script = ModemScript()
        script.outputBaud = 2400
        let rig = try ModemRig(script: script, baud: 2400, over: wire, configure: {
            $0.timeouts.command = .seconds(1)
            $0.timeouts.syncAttempt = .milliseconds(400)
            $0.timeouts.prompt = .seconds(1)
            $0.timeouts.submit = .seconds(1)
        })
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle(within: .seconds(10)))
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        expectClean(rig.sim)
    }

    @Test func registrationVariantsAndWaitingForTheNetwork() throws {
        var script = ModemScript()
        script.creg = "+CREG: 2,2,00C3,0A1B"    // searching, unquoted fields
        script.cgreg = nil                      // not supported: ERROR
        script.replies["AT+CEREG?"] = Array(repeating: ["OK"], count: 100)  // a bare OK, every time
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        #expect(rig.modem.status.registration == [.cs: .searching])
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        rig.run(for: .milliseconds(150))
        #expect(rig.sim.submitCount == 0, "waits for the network")
        rig.sim.setScript { $0.creg = "+CREG: 2,5,\"00C3\",\"0A1B\",7" }
        #expect(rig.settle())
        #expect(rig.modem.status.registration[.cs] == .roaming)
        #expect(!rig.sim.commands.dropFirst(11).contains("AT+CGREG?"), "an unsupported query is not asked again")
        #expect(rig.modem.message(id)?.state.isFinished == true)
        expectClean(rig.sim)
    }

    @Test func notRegisteredStillTriesAfterPatience() throws {
        var script = ModemScript()
        script.creg = "+CREG: 0,3"  // denied
        script.cereg = "+CEREG: 0,0"
        let rig = try ModemRig(script: script)
        rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.settle(), "after the patience the modem decides; here it sends")
    }

    @Test func counsellingCall() throws {
        let rig = try ModemRig()
        let line = CounsellingLine.sfuCounselling
        rig.modem.toggleCall(line.dialNumber, at: rig.now.instant)
        #expect(rig.modem.call == .dialling(line.dialNumber))
        #expect(rig.run(until: { rig.modem.call == .active(line.dialNumber) }))
        rig.modem.toggleCall(line.dialNumber, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .ended("hung up") }))
        rig.modem.dial(line.dialNumber, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .active(line.dialNumber) }))
        rig.sim.inject(["NO CARRIER"])
        #expect(rig.run(until: { rig.modem.call == .ended("NO CARRIER") }))
        #expect(rig.sim.calls == ["ATD+17787824615;", "ATH", "ATD+17787824615;"])
        // The dial was asked for before the modem was ready: it goes before the store's listing.
        #expect(rig.transcript == startupTranscript.replacingOccurrences(of: "AT+CMGL=4\\r", with: "")
                + "ATD+17787824615;\\rAT+CMGL=4\\rATH\\rATD+17787824615;\\r")
        expectClean(rig.sim)
    }

    @Test func panicSendsEveryAlertInOrderIncludingMultipart() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        let alerts: [(slot: Int, alert: AlertSlot)] = [
            (1, alert("Mum", "+15550100001", "Panic attack. Please call me.")),
            (2, alert("Dad", "7787824615", "Ça va pas — appelle-moi 🙏 " + String(repeating: "vite ", count: 20))),
            (3, alert("Sam", "+15550100003", String(repeating: "Come now. ", count: 13) + String(repeating: "€", count: 20))),
        ]
        let ids = rig.modem.sendAll(alerts, at: rig.now)
        #expect(rig.settle())
        #expect(rig.sim.delivered.map(\.text) == alerts.map(\.alert.message))
        #expect(rig.sim.delivered.map(\.number) == ["+15550100001", "7787824615", "+15550100003"])
        #expect(rig.sim.delivered.map(\.parts) == [1, 2, 2])
        #expect(ids.allSatisfy { if case .sent = rig.modem.message($0)?.state { true } else { false } })
        expectClean(rig.sim, texts: alerts.map(\.alert.message))
    }

    @Test func cancelledBeforeSending() throws {
        var script = ModemScript()
        script.silent = true
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        rig.run(for: .milliseconds(100))
        rig.modem.cancel(id)
        #expect(rig.modem.message(id)?.state == .cancelled)
        #expect(rig.outbox.entries.isEmpty)
        rig.sim.setScript { $0.silent = false }
        #expect(rig.ready())
        rig.run(for: .milliseconds(100))
        #expect(rig.sim.submitCount == 0)
    }

    @Test func optionalCommandsAnsweringErrorNeverAbortTheSession() throws {
        var script = ModemScript()
        script.replies["ATE0"] = [["ERROR"]]
        script.replies["AT+CMEE=1"] = [["ERROR"]]
        script.replies["AT+CSQ"] = [["+CME ERROR: 30"]]
        script.replies["AT+COPS?"] = [["ERROR"]]
        script.cgreg = nil
        script.cereg = nil
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        #expect(rig.modem.status.signal == nil && rig.modem.status.operatorName == nil)
        #expect(rig.modem.status.registration == [.cs: .home])
        expectClean(rig.sim)
    }

    /// +CMS ERROR 314 (SIM busy): PIN and registration are checked again, then the message goes.
    @Test func simErrorChecksPINAndRegistrationAgain() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .cmsError(314))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        #expect(rig.transcript == startupTranscript + sendTranscript(p)
                + "AT+CPIN?\\rAT+CMGF=0\\rAT+CREG?\\rAT+CGREG?\\rAT+CEREG?\\rAT+CMGL=4\\r" + sendTranscript(p))
        #expect(rig.modem.message(id)?.lastProblem == .sim(code: 314))
        expectClean(rig.sim)
    }

    @Test func dialFailsVisiblyWhenTheModemIsNotReady() throws {
        var script = ModemScript()
        script.silent = true
        let rig = try ModemRig(script: script, configure: { $0.timeouts.dialPatience = .milliseconds(200) })
        rig.modem.dial(CounsellingLine.sfuCounselling.dialNumber, at: rig.now.instant)
        #expect(rig.run(until: { rig.modem.call == .failed("the modem is not ready") }, within: .seconds(1)))
        #expect(rig.modem.takeEvents().contains(.callChanged(.failed("the modem is not ready"))))
        #expect(!rig.sim.commands.contains { $0.hasPrefix("ATD") })
    }

    /// Message text full of what would end or extend a command line in text mode: it travels
    /// only as PDU hex. (Such characters in a number, and control characters anywhere, are
    /// rejected at save and at load: see AlertSlotTests and OutboxTests.)
    @Test func injectionCharactersOnlyEverTravelAsHex() throws {
        let rig = try ModemRig()
        let a = unsavableAlert("Mum", "+15550100001", "\";ATD911;\" AT+CMGF=1 > OK ERROR +CMS ERROR: 1")
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        #expect(!rig.sim.commands.contains { ($0.contains("\"") && $0 != "AT+CPMS=\"SM\",\"SM\",\"SM\"") || $0.contains(";") })
        expectClean(rig.sim, texts: [a.message, "ATD911", "AT+CMGF=1"])
    }
}
