import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// The panic path tells the exact truth: a confirmation counts only for the PDU it
/// answers, and one contact's slow or garbled confirmation never holds back the others.
@Suite("Panic path: the exact truth")
struct PanicTruthTests {
    /// A two-part message whose first `+CMGS` the modem repeats while the second part is in
    /// flight, and whose second part is refused: the repeat must not confirm part 2, the refusal
    /// belongs to this message (not the next one), and the message goes out whole in the end.
    @Test func aRepeatedConfirmationNeverCountsForTheNextPart() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(repeatResultAfter: .milliseconds(15))
        script.submits[2] = SubmitPlan(result: .cmsError(38), resultDelay: .milliseconds(60))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        // UCS-2 (the emoji): two parts of at most 67 characters.
        let long = alert("Mum", "+15550100001", "Please call me now 🙏 I need help, I am at home and I cannot breathe well. Come if you can.")
        let short = alert("Dad", "+15550100002", "Please call me.")
        let a = rig.modem.send(long, slot: 1, at: rig.now)
        let b = rig.modem.send(short, slot: 2, at: rig.now)
        // Until the refusal of part 2 is read, part 2 is never counted.
        #expect(rig.run(until: { rig.sim.submitCount >= 2 && rig.modem.message(a)?.lastProblem != nil }, within: .seconds(3)))
        let afterRefusal = try #require(rig.modem.message(a))
        #expect(afterRefusal.partsSent == 1, "part 2 was credited with part 1's repeated +CMGS: \(afterRefusal)")
        #expect(afterRefusal.lastProblem == .network(code: 38), "\(afterRefusal)")
        #expect(rig.settle(within: .seconds(10)))
        // Both went out whole; the refusal was never pinned on Dad's message.
        #expect(rig.sim.delivered.contains(SimulatedSMS(number: "+15550100001", text: long.message, parts: 2)))
        #expect(rig.sim.delivered.filter { $0.number == "+15550100002" }.count == 1)
        let dad = try #require(rig.modem.message(b))
        #expect(dad.lastProblem == nil && dad.attempts == 1, "\(dad)")
        if case .sent = dad.state {} else { Issue.record("Dad's message: \(dad.state)") }
        expectClean(rig.sim)
    }

    /// A `+CMGS` whose answer arrives late (after the device gave up waiting) is never credited
    /// to the next contact's PDU: that PDU's own refusal is what counts for it.
    @Test func aLateConfirmationIsNeverCreditedToAnotherContact() throws {
        var script = ModemScript()
        // Mum's confirmation comes after the device's wait (submit timeout 400 ms in the rig).
        script.submits[1] = SubmitPlan(resultDelay: .milliseconds(700))
        // Dad's first attempt is refused.
        script.submits[2] = SubmitPlan(result: .cmsError(38), resultDelay: .milliseconds(50))
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let a = rig.modem.send(alert("Mum", "+15550100001", "Please call me."), slot: 1, at: rig.now)
        let b = rig.modem.send(alert("Dad", "+15550100002", "Please call me too."), slot: 2, at: rig.now)
        #expect(rig.settle(within: .seconds(10)))
        let dad = try #require(rig.modem.message(b))
        // Dad's first attempt was refused, whatever late line came before it.
        #expect(dad.attempts >= 2, "Dad's refused attempt was counted as sent: \(dad)")
        let mum = try #require(rig.modem.message(a))
        #expect(mum.attempts >= 2, "Mum's message was in doubt and must have been sent again: \(mum)")
        // At least once each, never "sent" without a +CMGS of its own.
        #expect(rig.sim.delivered.filter { $0.number == "+15550100002" }.count >= 1)
        #expect(rig.sim.possiblyDelivered.filter { $0.number == "+15550100001" }.count >= 1)
        expectClean(rig.sim)
    }

    /// Five contacts; the first one's confirmation is garbled by noise and then never comes. Every
    /// other contact's first attempt goes out before the first contact's second, and none of them
    /// waits for the longer, later-attempt timeout.
    @Test func oneSlowContactNeverHoldsBackTheOthers() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(result: .silence, corruptedResult: [])
        let rig = try ModemRig(script: script) { c in
            c.timeouts.firstSubmit = .milliseconds(200)
            c.timeouts.submit = .seconds(2)
        }
        #expect(rig.ready())
        let alerts = (1...5).map { k in (slot: k, alert: alert("Contact \(k)", "+1555010000\(k)", "Please call me, \(k).")) }
        let start = rig.now.instant
        let ids = rig.modem.sendAll(alerts, at: rig.now)
        // Contacts 2-5 confirmed before contact 1 is tried a second time.
        #expect(rig.run(until: { (2...5).allSatisfy { k in rig.sim.delivered.contains { $0.number == "+1555010000\(k)" } } }, within: .seconds(5)))
        let firstFour = rig.now.instant - start
        let submitsSoFar = rig.sim.parts.map(\.submit.number)
        #expect(submitsSoFar.prefix(5).map { String($0.suffix(1)) } == ["1", "2", "3", "4", "5"], "order: \(submitsSoFar)")
        #expect(firstFour < .seconds(2), "the others waited \(firstFour) behind contact 1")
        #expect(rig.settle(within: .seconds(10)))
        #expect(rig.sim.delivered.contains { $0.number == "+15550100001" })
        // Contacts 2–5's +CMGS came while contact 1's answer could still come; their status
        // reports (naming recipient and reference) told them apart: none was sent twice.
        for k in 2...5 { #expect(rig.sim.parts.filter { $0.submit.number == "+1555010000\(k)" }.count == 1, "contact \(k)") }
        for id in ids {
            switch rig.modem.message(id)?.state {
            case .sent?, .delivered?: break
            default: Issue.record("\(id): \(String(describing: rig.modem.message(id)))")
            }
        }
        expectClean(rig.sim)
    }

    /// A modem someone changed by hand (deregistered with AT+COPS=2, another service centre on
    /// the SIM, text mode) heals at start-up: automatic operator selection, the configured
    /// centre, PDU mode — and the alert goes out.
    @Test func aModemChangedByHandHealsItself() throws {
        var script = ModemScript()
        script.cops = "+COPS: 2"
        script.creg = "+CREG: 0,0"
        script.csca = "+CSCA: \"+15550001111\",145"
        let rig = try ModemRig(script: script, configure: { $0.serviceCentre = try! PhoneNumber("+15550009999") })
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle(within: .seconds(5)))
        #expect(rig.sim.commands.contains("AT+COPS=0"), "\(rig.transcript)")
        #expect(rig.sim.serviceCentre == "AT+CSCA=\"+15550009999\",145")
        #expect(rig.sim.delivered.map(\.text) == [a.message])
        if case .sent = rig.modem.message(id)?.state {} else { Issue.record("\(String(describing: rig.modem.message(id)))") }
        // Before the alert: healed first (the order the line saw).
        let commands = rig.sim.commands
        let heal = try #require(commands.firstIndex(of: "AT+COPS=0"))
        let submit = try #require(commands.firstIndex { $0.hasPrefix("AT+CMGS=") })
        #expect(heal < submit)
        expectClean(rig.sim)
    }

    /// A maintainer's test message is never journaled: one that cannot be confirmed is never
    /// resent by a later start, and `status` with the device stopped never counts it.
    @Test func aTestMessageNeverOutlivesItsWait() throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let id = rig.modem.sendTest(alert("Mum", "+15550100001", "[TEST] Please call me."), at: rig.now)
        #expect(rig.run(until: { rig.sim.submitCount >= 1 }, within: .seconds(3)))
        #expect(try DirectoryStore.outbox(at: rig.directory.path).names().isEmpty, "a test was journaled")
        rig.modem.cancel(id)
        #expect(rig.run(until: { rig.modem.message(id)?.state.isFinished == true }, within: .seconds(3)))
        let submitsBefore = rig.sim.submitCount
        try rig.restartDaemon()
        #expect(rig.outbox.entries.isEmpty)
        #expect(rig.ready())
        #expect(rig.settle(within: .seconds(2)))
        #expect(rig.sim.submitCount == submitsBefore, "the test was sent again after the restart")
    }

    /// A modem that answers AT while an earlier submit is still pending: Mum's confirmation comes late, while Dad's PDU — which the network refuses — waits.
    /// The late `+CMGS` must not make Dad "SENT": inside the window in which Mum's answer may
    /// still come, a confirmation credits nothing, and both are sent again once it has closed.
    @Test func aLateConfirmationWhileTheNextContactWaitsCreditsNobody() throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(resultDelay: .milliseconds(700))
        script.submits[2] = SubmitPlan(result: .cmsError(38), resultDelay: .milliseconds(500))
        let rig = try ModemRig(script: script) { c in
            c.timeouts.firstSubmit = .milliseconds(300)
            c.timeouts.submit = .milliseconds(1500)
        }
        #expect(rig.ready())
        let a = rig.modem.send(alert("Mum", "+15550100001", "Please call me."), slot: 1, at: rig.now)
        let b = rig.modem.send(alert("Dad", "+15550100002", "Please call me too."), slot: 2, at: rig.now)
        // Until Dad's refusal has come, Dad is never SENT.
        #expect(rig.run(until: { rig.sim.submitCount >= 2 }, within: .seconds(3)))
        let end = rig.now.instant + .milliseconds(900)
        while rig.now.instant < end {
            _ = rig.run(until: { false }, within: .milliseconds(20))
            if case .sent = rig.modem.message(b)?.state {
                Issue.record("Dad shown SENT on Mum's late +CMGS (\(rig.sim.submitCount) submits)")
                break
            }
        }
        #expect(rig.settle(within: .seconds(10)))
        // Dad's message really went out (the simulator records only accepted parts), and Mum's.
        #expect(rig.sim.delivered.contains { $0.number == "+15550100002" }, "Dad never got it: \(rig.sim.delivered)")
        #expect(rig.sim.possiblyDelivered.contains { $0.number == "+15550100001" })
        // Mum's late answer came while only her PDU was in doubt (this modem answers in order):
        // it is hers, and she is not sent a second copy.
        #expect(rig.sim.possiblyDelivered.filter { $0.number == "+15550100001" }.count == 1)
        for id in [a, b] {
            switch rig.modem.message(id)?.state {
            case .sent?, .delivered?: break
            default: Issue.record("\(id): \(String(describing: rig.modem.message(id)))")
            }
        }
        expectClean(rig.sim)
    }

    /// Contradictory or unreadable confirmations are not confirmations (F3, F4): `+CMGS: 5`
    /// then `+CMS ERROR: 500`, and `+CMGS:` with no number, leave the message in doubt.
    @Test(arguments: [["+CMGS: 5", "+CMS ERROR: 500"], ["+CMGS: \u{FFFD}", "OK"]])
    func aConfirmationThatSaysTwoThingsIsInDoubt(_ lines: [String]) throws {
        var script = ModemScript()
        script.submits[1] = SubmitPlan(corruptedResult: lines)
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        let id = rig.modem.send(alert(), slot: 1, at: rig.now)
        #expect(rig.run(until: { rig.modem.message(id)?.lastProblem != nil }, within: .seconds(3)), "\(lines) was taken as sent")
        #expect(rig.settle(within: .seconds(5)))
        #expect(rig.sim.submitCount >= 2, "sent again: \(rig.sim.submitCount)")
        if case .sent = rig.modem.message(id)?.state {} else { Issue.record("\(String(describing: rig.modem.message(id)))") }
    }
}

