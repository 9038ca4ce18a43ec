import Foundation
import Testing
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulatedHardware

/// The device killed around PANIC and started again on the same card: every alert asked for
/// goes once, nothing goes after "I'm OK now", and a call the ladder left up is followed. On the
/// core, the real panic link and outbox, and the scripted network on simulated time
/// (`PanicCoreRig`).
@Suite("Panic path across a kill: the alerts asked for go, a call left up is followed")
struct PanicAcrossAKillTests {
    /// On the device the outbox is written on a queue of its own and `escalation.txt` on the
    /// state writer's: killed 150 ms after PANIC armed, `escalation.txt` can be on the card (every
    /// contact "queued") and the outbox not. Every contact showing FAILED ("not in the outbox
    /// after a restart") and nobody ever texted, after the person felt the "sending" buzz, is what
    /// must not happen: an alert asked for and not in the outbox after a restart is asked for
    /// again (the price: one more copy of one whose outbox entry was removed, sent, before the
    /// file said so).
    @Test func alertsAskedForButNotYetJournaledGoAfterARestart() throws {
        let contacts = try PanicTruth.contacts([PanicTruth.twoParts, "Please call me (B).", "Please call me (C)."])
        let rig = try PanicCoreRig(script: ModemScript(), contacts: contacts, configure: PanicTruth.real)
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
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, configure: PanicTruth.real)
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
        let contacts = try PanicTruth.contacts()
        let rig = try PanicCoreRig(script: ModemScript(), contacts: contacts, configure: PanicTruth.real)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(30))
        rig.panic()
        rig.run(for: .seconds(10))
        rig.imOK()
        rig.run(for: .seconds(10))
        let before = rig.line.parts.count
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, configure: PanicTruth.real)
        again.run(for: .seconds(30))
        #expect(again.line.parts.count == before, "sent after the restart: \(again.line.parts.dropFirst(before).map(\.submit.number))")
    }

    /// Killed while the ladder rings Dad, who picks up 4 s after the dial while the device starts
    /// again. Unless the restarted device asks the modem about the call it left up, Dad's pick-up
    /// is not seen, Sam is rung anyway, and no ATH ever goes to Dad's call (the next ATD goes
    /// over it). The call left up is found (`AT+CLCC` once at start) and followed as the
    /// device's own.
    @Test func aCallLeftUpByAKilledDeviceIsFollowedAfterTheRestart() throws {
        var script = ModemScript()
        script.dials["+15550100001"] = .endsAfter(.seconds(40), "NO ANSWER")
        script.dials["+15550100002"] = .answers(after: .seconds(4), hangsUpAfter: .seconds(60))
        let contacts = try PanicLadderAnswerTests.contacts()
        let settings = PanicLadderAnswerTests.settings()
        let rig = try PanicCoreRig(script: script, contacts: contacts, settings: settings)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(10))
        rig.panic()
        #expect(rig.run(until: { rig.line.calls.contains("ATD+15550100002;") }, for: .seconds(120)))
        rig.run(for: .seconds(1))
        // Killed 1 s into Dad's ringing; he picks up while the device starts again.
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, settings: settings)
        #expect(again.run(until: { again.core.state.panic.aftercare.escalation == .ended(.answered) }, for: .seconds(60)),
                "\(again.core.state.panic.aftercare.escalation)")
        again.run(for: .seconds(120))
        #expect(again.line.calls == ["ATD+15550100001;", "ATH", "ATD+15550100002;"], "\(again.line.calls)")
        #expect(again.core.state.panic.progress.map(\.answeredCall) == [false, true, false])
    }

    /// The same kill while Mum's phone rings and nobody picks up: the call left up is hung up at
    /// its ring time before Dad is dialled, and the ladder goes on.
    @Test func aCallLeftUpUnansweredIsHungUpBeforeTheNextDial() throws {
        var script = ModemScript()
        script.defaultDial = .rings
        let contacts = try PanicLadderAnswerTests.contacts()
        let settings = PanicLadderAnswerTests.settings()
        let rig = try PanicCoreRig(script: script, contacts: contacts, settings: settings)
        rig.run(until: { rig.modem.status.link == .ready }, for: .seconds(10))
        rig.panic()
        #expect(rig.run(until: { rig.line.calls.contains("ATD+15550100001;") }, for: .seconds(120)))
        rig.run(for: .seconds(2))
        let again = try PanicCoreRig(restarting: rig, contacts: contacts, settings: settings)
        again.run(for: .seconds(200))
        #expect(again.line.calls == ["ATD+15550100001;", "ATH", "ATD+15550100002;", "ATH", "ATD+15550100003;", "ATH"], "\(again.line.calls)")
    }
}
