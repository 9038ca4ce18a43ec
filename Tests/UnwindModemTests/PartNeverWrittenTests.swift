import Testing
import UnwindCore
import UnwindModem
import UnwindSimulatedHardware

/// A part never written is no copy of anything: it goes at once, whatever answer another
/// contact's PDU still owes, with status reports or without them.
@Suite("A part never written goes at once")
struct PartNeverWrittenTests {
    /// Contact 1's `+CMGS` comes 70 s late and the network sends no status reports; contacts
    /// 2-4 have two-part alerts and contact 5 a three-part one. Their first parts' answers
    /// cannot be told from contact 1's, so those parts stay open — and every later part still
    /// goes at once: no contact holds a fragment while a window runs.
    @Test func withoutStatusReportsEveryContactHasTheWholeAlertAtOnce() throws {
        var script = ModemScript()
        script.answersWhileSubmitPending = true
        script.defaultReports = ReportPlan([])
        script.submits[1] = SubmitPlan(resultDelay: .seconds(70))
        let rig = try ModemRig(script: script, configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        let numbers = PanicCopiesTests.numbers
        let long = "Please call me now, I need help. I am at home and I cannot breathe well. Come if you can, please."
        var alerts = [(slot: 1, alert: alert("C1", numbers[0], "Please call me."))]
        alerts += (2...4).map { (slot: $0, alert: alert("C\($0)", numbers[$0 - 1], long + " \u{1F64F}")) }
        // 157 characters with the emoji: three UCS-2 parts, the longest an alert can be.
        let threeParts = String((long + " " + long).prefix(155)) + "\u{1F64F}"
        alerts.append((slot: 5, alert: alert("C5", numbers[4], threeParts)))
        let start = rig.now.instant
        let ids = rig.modem.sendAll(alerts, at: rig.now)
        let partsOf = [numbers[1]: 2, numbers[2]: 2, numbers[3]: 2, numbers[4]: 3]
        var whole: [String: Duration] = [:]
        _ = rig.run(until: {
            for (n, parts) in partsOf where whole[n] == nil {
                let written = Set(rig.sim.parts.filter { $0.submit.number == n }.map { $0.submit.concatenation?.part ?? 1 })
                if written.count == parts { whole[n] = rig.now.instant - start }
            }
            return whole.count == partsOf.count
        }, within: .seconds(120))
        for n in partsOf.keys.sorted() {
            #expect((whole[n] ?? .seconds(999)) <= .seconds(20), "\(n): every part on the wire after \(String(describing: whole[n]))")
        }
        #expect(rig.settle(within: .seconds(600)))
        rig.run(for: .seconds(200))
        // Uncredited parts may go twice (a duplicate beats a loss), never more, and all went.
        for n in numbers { #expect((1...2).contains(PanicCopiesTests.copies(rig.sim, to: n)), "\(n)") }
        for id in ids { #expect(PanicCopiesTests.wentOut(rig.modem.message(id)?.state), "\(id)") }
        expectClean(rig.sim)
    }

    /// Contact 1's `+CMGS` never comes while the modem goes on answering; contacts 2–5 have
    /// two-part alerts. Their first parts' answers cannot be told from contact 1's late one, so
    /// they are in doubt until their status reports name them (within a second). The second
    /// parts must not wait for contact 1's 60 s window to close: four contacts would hold half
    /// an alert — which a phone does not show — for a minute.
    @Test func aPartNeverWrittenDoesNotWaitForAnotherContactsLostAnswer() throws {
        var script = ModemScript()
        script.answersWhileSubmitPending = true
        script.submits[1] = SubmitPlan(result: .silence)
        let rig = try ModemRig(script: script, configure: PanicCopiesTests.real)
        #expect(rig.ready(within: .seconds(30)))
        let numbers = PanicCopiesTests.numbers
        let long = "Please call me now, I need help. I am at home and I cannot breathe well. Come if you can, please."
        var alerts = [(slot: 1, alert: alert("C1", numbers[0], "Please call me."))]
        alerts += (2...5).map { (slot: $0, alert: alert("C\($0)", numbers[$0 - 1], long + " \u{1F64F}")) }
        let start = rig.now.instant
        _ = rig.modem.sendAll(alerts, at: rig.now)
        var whole: [String: Duration] = [:]
        _ = rig.run(until: {
            for n in numbers.dropFirst() where whole[n] == nil && rig.sim.delivered.contains(where: { $0.number == n && $0.parts == 2 }) {
                whole[n] = rig.now.instant - start
            }
            return whole.count == 4
        }, within: .seconds(120))
        for n in numbers.dropFirst() {
            #expect((whole[n] ?? .seconds(999)) <= .seconds(15), "\(n): the whole alert after \(String(describing: whole[n]))")
        }
        #expect(rig.settle(within: .seconds(600)))
        rig.run(for: .seconds(200))
        for n in numbers { #expect((1...2).contains(PanicCopiesTests.copies(rig.sim, to: n)), "\(n)") }
        expectClean(rig.sim)
    }
}
