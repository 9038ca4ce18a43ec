import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// What the outside review of issues 25 and 26 found with its own modem on a pseudo-terminal
/// (a Python modem that answers 27.005 and records what the network took), each a test that
/// failed before its fix. The device's real timeouts.
@Suite("Panic path: what the outside review found")
struct PanicPathOutsideReviewTests {
    /// Contact 1's `+CMGS` never comes while the modem goes on answering; contacts 2–5 have
    /// two-part alerts. Their first parts' answers cannot be told from contact 1's late one, so
    /// they are in doubt until their status reports name them (within a second). Found: the
    /// second parts then waited for contact 1's 60 s window to close, so four contacts held half
    /// an alert — which a phone does not show — for a minute (61.6 s and 70.9 s from the PANIC
    /// key on the review's modem). A part never written is no copy: it goes at once.
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
