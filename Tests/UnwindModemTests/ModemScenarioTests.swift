import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// The whole panic path: GSMModem + Outbox on one side, the simulated modem on the other, on a
/// line in memory and simulated time (a few of them also run over a real pseudo-terminal: see
/// `EndToEndTests`). Each scenario asserts the exact bytes the modem received.
@Suite("Modem scenarios (in memory, simulated time)")
struct ModemScenarioTests {
    @Test func healthyModemEchoOn() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        #expect(rig.transcript == startupTranscript)
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == startupTranscript + sendTranscript(pdus(a, reference: 0)))
        #expect(rig.sim.delivered == [SimulatedSMS(number: "+15550100001", text: a.message, parts: 1)])
        #expect(rig.modem.message(id)?.state.isFinished == true)
        if case .sent = rig.modem.message(id)?.state {} else { Issue.record("not sent: \(String(describing: rig.modem.message(id)))") }
        #expect(rig.modem.message(id)?.awaitingReports == true, "kept while its status report may come")
        #expect(rig.outbox.entries.map(\.id) == [id])
        #expect(rig.settleReports())
        if case .delivered = rig.modem.message(id)?.state {} else { Issue.record("not delivered: \(String(describing: rig.modem.message(id)))") }
        #expect(rig.outbox.entries.isEmpty)
        #expect(try DirectoryStore.outbox(at: rig.directory.path).names().isEmpty, "removed once its report came")
        #expect(rig.modem.status.sim == .ready && rig.modem.status.isRegistered)
        #expect(rig.modem.status.signal == SignalQuality(rssi: 21) && rig.modem.status.operatorName == "Unwind Mobile")
        #expect(rig.modem.takeEvents().contains(.messageSent(id)))
        expectClean(rig.sim, texts: [a.message])
    }

    @Test func healthyModemEchoOff() throws {
        var script = ModemScript()
        script.echo = false
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)  // asked for before the modem is even open
        #expect(rig.settle())
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        expectClean(rig.sim, texts: [a.message])
    }

    @Test func missingFinalOKAfterCPIN() throws {
        var script = ModemScript()
        script.replies["AT+CPIN?"] = [["+CPIN: READY"]]
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        // The answer is taken; the missing OK costs a timeout, ESC, drain and AT before going on.
        #expect(rig.transcript == "<ESC>\\rAT\\rATE0\\rAT+CMEE=1\\rAT+CPIN?\\r<ESC>AT\\rAT+CMGF=0\\rAT+CREG?\\rAT+CGREG?\\rAT+CEREG?\\rAT+CSQ\\rAT+COPS?\\r" + receivingSetUp)
        #expect(rig.modem.status.sim == .ready)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    @Test func simBusyIsWaitedThrough() throws {
        var script = ModemScript()
        script.replies["AT+CPIN?"] = [["+CME ERROR: 14"], ["+CPIN: NOT READY", "OK"], ["ERROR"], ["+CPIN: READY", "OK"]]
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.sim.commands.filter { $0 == "AT+CPIN?" }.count == 4)
        #expect(rig.transcript == startupBeforeListing.replacingOccurrences(of: "AT+CPIN?\\r", with: "AT+CPIN?\\rAT+CPIN?\\rAT+CPIN?\\rAT+CPIN?\\r")
                + sendTranscript(pdus(a, reference: 0)) + "AT+CMGL=4\\r")
        expectClean(rig.sim)
    }

    @Test func lockedSIMIsShownAndSendingWaits() throws {
        var script = ModemScript()
        script.replies["AT+CPIN?"] = [["+CPIN: SIM PIN", "OK"], ["+CPIN: SIM PIN", "OK"]]
        let rig = try ModemRig(script: script)
        rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.status.sim == .locked("SIM PIN") }, within: .seconds(2)))
        #expect(rig.sim.submitCount == 0)
        #expect(rig.settle(), "sent once the SIM answers READY")
        expectClean(rig.sim)
    }

    /// The prompt comes after the timeout: ESC is lost (the modem was not in the prompt yet), the
    /// `AT` of the check lands in the late prompt — which is then closed with ESC, so the "AT" is
    /// discarded, never sent. Then the message goes normally.
    @Test func latePrompt() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(prompt: .after(.milliseconds(300)))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)[0]
        #expect(rig.transcript == startupTranscript
                + "AT+CMGF=0\\rAT+CMGS=\(p.tpduLength)\\r<ESC>AT\\r<ESC>AT\\r" + sendTranscript([p]))
        #expect(rig.sim.prompts.map { render($0.text) } == ["AT\\r", p.hexString])
        #expect(rig.sim.prompts.map(\.sent) == [false, true])
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        #expect(rig.modem.messages.first?.attempts == 2)
        expectClean(rig.sim, texts: [a.message])
    }

    /// The prompt comes during the drain after the timeout: closed with ESC before anything else.
    @Test func latePromptDuringTheDrain() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(prompt: .after(.milliseconds(220)))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)[0]
        #expect(rig.transcript == startupTranscript
                + "AT+CMGF=0\\rAT+CMGS=\(p.tpduLength)\\r<ESC><ESC>AT\\r" + sendTranscript([p]))
        #expect(rig.sim.prompts.map { render($0.text) } == ["", p.hexString])
        expectClean(rig.sim, texts: [a.message])
    }

    @Test func noPrompt() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(prompt: .never)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem == .noPrompt }))
        #expect(rig.settle())
        let p = pdus(a, reference: 0)[0]
        #expect(rig.transcript == startupTranscript + "AT+CMGF=0\\rAT+CMGS=\(p.tpduLength)\\r<ESC>AT\\r" + sendTranscript([p]))
        #expect(rig.sim.prompts.map(\.sent) == [false, true])
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    @Test func networkErrors38And512AreRetriedWithBackoff() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .cmsError(38))
        script.submits[2] = SubmitPlan(result: .cmsError(512))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem == .network(code: 38) }))
        if case .retrying(.network(38), let next) = rig.modem.message(id)?.state {
            #expect(next > rig.now.instant, "backoff, not a hot loop")
        } else { Issue.record("\(String(describing: rig.modem.message(id)))") }
        #expect(rig.outbox.entry(id)?.history.map(\.problem) == ["network error 38 (network out of order)"])
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        #expect(rig.transcript == startupTranscript + sendTranscript(p) + sendTranscript(p) + sendTranscript(p))
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    @Test func serviceCentreUnknownIsSetFromConfiguration() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .cmsError(330))
        let rig = try ModemRig(script: script, configure: { $0.serviceCentre = try! PhoneNumber("+15550009999") })
        #expect(rig.ready())
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        // Start-up reads the SIM's centre (AT+CSCA?: the configured one here).
        #expect(rig.transcript == startupTranscript + sendTranscript(p) + "AT+CSCA=\"+15550009999\",145\\r" + sendTranscript(p))
        #expect(rig.sim.serviceCentre == "AT+CSCA=\"+15550009999\",145")
        #expect(rig.modem.status.serviceCentre?.contains("+15550009999") == true)
        expectClean(rig.sim)
    }

    @Test func serviceCentreUnknownWithoutConfigurationIsReported() throws {
        var script = ModemScript()
        script.csca = "+CSCA: \"\",145"  // the SIM has none
        script.submits[1] = SubmitPlan(result: .cmsError(330))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem == .noServiceCentre(configured: false) }))
        // The configuration key that really exists (it said "modem.smsc", which none does).
        #expect(rig.modem.status.serviceCentre == "missing: the SIM has none; set modem.service_centre in the configuration (/etc/unwind/unwind.conf) and restart unwind")
        #expect(rig.settle(), "retried (the SIM may get one); the simulated one takes the second")
        #expect(!rig.sim.commands.contains { $0.hasPrefix("AT+CSCA=") }, "only read (AT+CSCA?), never set")
    }

    /// +CMS ERROR 330 on every submit while the SIM has a centre (`AT+CSCA?` answered one) and
    /// none is configured: the diagnosis says what was seen — the network refuses
    /// that centre — and what to try; never "the SIM has no message centre number".
    @Test func serviceCentreRefusedByTheNetworkIsSaidSo() throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(result: .cmsError(330))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem != nil }))
        let problem = try #require(rig.modem.message(id)?.lastProblem)
        #expect(problem == .serviceCentreRefused("+15550009999"), "\(problem)")
        #expect(!problem.description.contains("has no"), "\(problem.description)")
        let status = try #require(rig.modem.status.serviceCentre)
        #expect(status.hasPrefix("refused") && status.contains("+15550009999") && status.contains("330")
                && status.contains("modem.service_centre"), "\(status)")
        rig.run(for: .seconds(2))
        #expect(rig.modem.currentReadiness?.problems.contains(.serviceCentreRefused) == true,
                "\(String(describing: rig.modem.currentReadiness))")
        #expect(rig.modem.currentReadiness?.problems.contains(.noServiceCentre) == false)
        #expect(!rig.sim.commands.contains { $0.hasPrefix("AT+CSCA=") }, "nothing configured to set")
        #expect(rig.sim.submitCount >= 2, "still retried")
    }

    /// +CMS ERROR 500 three times: retried, then the modem is restarted and set up again.
    @Test func unknownErrorRetriesThenResetsTheModem() throws {
        var script = ModemScript()
        for k in 1...3 { script.submits[k] = SubmitPlan(result: .cmsError(500)) }
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        #expect(rig.transcript == startupTranscript + sendTranscript(p) + sendTranscript(p) + sendTranscript(p)
                + "AT+CFUN=1,1\\r" + startupTranscript + sendTranscript(p))
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    /// +CMS ERROR 1: that contact is not retried and shows as failed; the other alert goes out.
    @Test func unassignedNumberStopsThatContactOnly() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .cmsError(1))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let bad = alert("Old number", "+15550100009", "Help")
        let good = alert("Mum", "+15550100001", "Help")
        let ids = rig.modem.sendAll([(1, bad), (2, good)], at: rig.now)
        #expect(rig.run(until: { rig.sim.delivered.count == 1 }))
        rig.run(for: .milliseconds(400))
        #expect(rig.sim.submitCount == 2, "no retry of the unassigned number")
        #expect(rig.modem.message(ids[0])?.state == .failed(.unassignedNumber(try PhoneNumber("+15550100009"))))
        #expect(rig.outbox.entry(ids[0])?.failure == "+15550100009 is not in service (unassigned number); check the number")
        #expect(rig.sim.delivered.map(\.number) == ["+15550100001"])
        // Kept visibly until someone decides: the maintainer retries (or cancels) it.
        rig.modem.retryNow(ids[0])
        #expect(rig.settle())
        #expect(rig.sim.delivered.map(\.number) == ["+15550100001", "+15550100009"])
        expectClean(rig.sim)
    }

    /// Unsolicited codes inside replies and between the prompt and +CMGS change nothing.
    @Test func unsolicitedCodesEverywhere() throws {
        var script = ModemScript()
        script.replies["AT+CREG?"] = [["+CMTI: \"SM\",3", "+CREG: 0,1", "RING", "OK"]]
        script.replies["AT+CSQ"] = [["^RSSI: 14", "+CSQ: 18,99", "+CDSI: \"SM\",1", "OK"]]
        script.submits[1] = SubmitPlan(afterPrompt: ["+CMTI: \"SM\",4", "RING", "+CREG: 1"],
                                       beforeResult: ["+CDS: 25", "^BOOT:1234,0,0,0,1"])
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        // +CMTI 3 and +CDSI 1 came during start-up, before the store's listing (which found
        // nothing there); +CMTI 4 during the send is read after it (an empty index here).
        #expect(rig.run(until: { rig.sim.commands.contains("AT+CMGR=4") }))
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))) + "AT+CMGR=4\\r")
        #expect(rig.modem.status.signal == SignalQuality(rssi: 18))
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        expectClean(rig.sim)
    }

    /// No answer after the PDU: in doubt, sent again. A duplicate is better than a lost alert.
    @Test func silenceAfterThePDUIsSentAgain() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        let p = pdus(a, reference: 0)
        #expect(rig.transcript == startupTranscript + sendTranscript(p) + "<ESC>AT\\r" + sendTranscript(p))
        #expect(rig.sim.delivered.count == 1)
        #expect(rig.sim.possiblyDelivered.count == 2)
        #expect(rig.modem.message(id)?.lastProblem == .noConfirmation)
        expectClean(rig.sim)
    }

    @Test func acceptedWithoutOKCountsAsSent() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .acceptedWithoutOK)
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        #expect(rig.sim.submitCount == 1)
    }

    /// A modem that does not answer at all: the device keeps synchronising (AT, and ESC + CR
    /// every fifth try) and writes nothing else; the alert waits, visibly queued.
    @Test func silentModem() throws {
        var script = ModemScript()
        script.silent = true
        let rig = try ModemRig(script: script)
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        rig.run(for: .milliseconds(800))
        #expect(rig.modem.status.link == .starting)
        #expect(rig.modem.message(id)?.state == .queued)
        let t = rig.transcript
        #expect(t.hasPrefix("<ESC>\\rAT\\rAT\\rAT\\rAT\\rAT\\r<ESC>\\rAT\\r"))
        #expect(t.replacingOccurrences(of: "AT\\r", with: "").replacingOccurrences(of: "<ESC>\\r", with: "").isEmpty)
        rig.sim.setScript { $0.silent = false }
        #expect(rig.settle())
        #expect(rig.sim.delivered.count == 1)
        expectClean(rig.sim)
    }

    @Test func garbageFromTheModemIsIgnored() throws { try Self.garbageFromTheModemIsIgnored(over: .memory) }

    static func garbageFromTheModemIsIgnored(over wire: Wire) throws {
        var script = ModemScript()
        script.replies["AT"] = [["\u{7F}\u{1}xx\u{FF}", "OK"]]
        script.replies["ATE0"] = [["AT+CMGS=5", "+CMGS: 12", "%%%", "OK"]]
        let rig = try ModemRig(script: script, over: wire)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == startupAndSend(sendTranscript(pdus(a, reference: 0))))
        expectClean(rig.sim)
    }

    /// A line starting with "> " looks like a prompt: the device cannot know it is not one, so it
    /// closes it with ESC, checks with AT and repeats the command. Nothing is typed into it.
    @Test func garbageThatLooksLikeAPromptIsClosed() throws {
        var script = ModemScript()
        script.replies["ATE0"] = [["> nonsense", "OK"]]
        let rig = try ModemRig(script: script)
        let a = alert()
        rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        #expect(rig.transcript == "<ESC>\\rAT\\rATE0\\r<ESC>AT\\r" + startupBeforeListing.dropFirst("<ESC>\\rAT\\r".count)
                + sendTranscript(pdus(a, reference: 0)) + "AT+CMGL=4\\r")
        expectClean(rig.sim)
    }
}
