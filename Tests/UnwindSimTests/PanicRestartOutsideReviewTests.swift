import Foundation
import Testing
@testable import UnwindCore
import UnwindDevice
import UnwindHardware
import UnwindModem
import UnwindSimulatedHardware

/// What the outside review of issues 25 and 26 found by killing the real `unwind sim --modem`
/// (SIGKILL) around PANIC, its own modem on a pseudo-terminal recording what the network took;
/// each a test that failed before its fix, here on the core, the real panic link and outbox, and
/// the scripted network on simulated time (`PanicCoreRig`).
@Suite("Panic path across a kill: what the outside review found")
struct PanicRestartOutsideReviewTests {
    /// On the device the outbox is written on a queue of its own and `escalation.txt` on the
    /// state writer's: killed 150 ms after PANIC armed, `escalation.txt` was on the card (every
    /// contact "queued") and the outbox was not. After the restart every contact showed FAILED
    /// ("not in the outbox after a restart") and nobody was ever texted — the person had felt
    /// the "sending" buzz. An alert asked for and not in the outbox after a restart is asked for
    /// again (the price: one more copy of one whose outbox entry was removed, sent, before the
    /// file said so).
    @Test func alertsAskedForButNotYetJournaledGoAfterARestart() throws {
        let contacts = try PanicReview.contacts([PanicReview.twoParts, "Please call me (B).", "Please call me (C)."])
        let rig = try PanicCoreRig(script: ModemScript(), contacts: contacts, configure: PanicReview.real)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(30))
        rig.press(.down(.panic))
        // Until the core asks for the alerts (armed), and not a pass more: nothing on the wire yet.
        #expect(rig.run(until: { !rig.requested.isEmpty }, for: .seconds(3)))
        #expect(rig.line.parts.isEmpty)
        #expect(rig.saved[.escalation]?.contains("queued") == true, "\(String(describing: rig.saved[.escalation]))")
        // Killed now: the state writer had landed escalation.txt, the outbox writer not yet.
        for name in try FileManager.default.contentsOfDirectory(atPath: rig.directory.path) where name.hasSuffix(".msg") {
            try FileManager.default.removeItem(atPath: rig.directory.path + "/" + name)
        }
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, configure: PanicReview.real)
        again.run(for: .seconds(30))
        for c in contacts {
            // Each part of each alert once: the network had none of it before the kill.
            var byPart: [Int: Int] = [:]
            for p in again.line.parts where p.submit.number == c.number.text { byPart[p.submit.concatenation?.part ?? 1, default: 0] += 1 }
            let parts = c.message.count > 70 ? 2 : 1
            #expect(byPart == Dictionary(uniqueKeysWithValues: (1...parts).map { ($0, 1) }), "\(c.number.text): \(byPart)")
        }
        let shown = again.core.state.panic.progress.map { "\($0.slot + 1) \($0.delivery)" }
        #expect(again.core.state.panic.progress.allSatisfy { $0.delivery == .sent || $0.delivery == .delivered }, "\(shown)")
    }

    /// The restart's resend is for alerts the outbox lost, never for what the person ended:
    /// "I'm OK now" sent before the kill, nothing goes again.
    @Test func nothingIsSentAgainAfterTheAllClear() throws {
        let contacts = try PanicReview.contacts()
        let rig = try PanicCoreRig(script: ModemScript(), contacts: contacts, configure: PanicReview.real)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(30))
        rig.panic()
        rig.run(for: .seconds(10))
        rig.imOK()
        rig.run(for: .seconds(10))
        let before = rig.line.parts.count
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, configure: PanicReview.real)
        again.run(for: .seconds(30))
        #expect(again.line.parts.count == before, "sent after the restart: \(again.line.parts.dropFirst(before).map(\.submit.number))")
    }
}
