import Foundation
import Logging
import Testing
import UnwindTestSupport
import UnwindMaintenance
import UnwindSimulatedHardware
import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindSeams

/// What the loop hears from the modem link after the alerts went out: "delivered"
/// after "sent", follow-ups as follow-ups, replies (the unseen ones again at start), readiness,
/// and a call that ended by itself — on a modem line in memory, on simulated time.
@Suite struct HelpNewsLinkTests {
    final class Rig {
        let time = SimulatedTime(start: Instant(nanoseconds: 1_000_000_000_000))
        let line: SimulatedModemLine
        let outboxDirectory = ScratchDirectory("help-news-outbox")
        let inboxDirectory = ScratchDirectory("help-news-inbox")
        var link: ModemAlertLink
        var updates: [AlertLinkUpdate] = []

        init(script: ModemScript = ModemScript()) throws {
            line = SimulatedModemLine(script: script, clock: time)
            link = try Self.link(line, outboxDirectory, inboxDirectory)
        }

        static func link(_ line: SimulatedModemLine, _ out: ScratchDirectory, _ inbox: ScratchDirectory) throws -> ModemAlertLink {
            var c = ModemConfiguration()
            c.timeouts.command = .milliseconds(300)
            c.timeouts.drain = .milliseconds(50)
            return ModemAlertLink(modem: GSMModem(port: line, outbox: Outbox(storage: try DirectoryStore.outbox(at: out.path)),
                                                  inbox: Inbox(storage: try DirectoryStore(directory: inbox.path)), configuration: c,
                                                  random: SeededRandom(seed: 3), logger: quietLogger()))
        }

        /// A restarted daemon on the same files and the same modem.
        func restart() throws {
            link.close()
            link = try Self.link(line, outboxDirectory, inboxDirectory)
            updates.removeAll()
        }

        @discardableResult
        func run(until done: ([AlertLinkUpdate]) -> Bool, within limit: Duration = .seconds(10)) -> Bool {
            let end = time.instant + limit
            while time.instant <= end {
                line.step()
                link.step(at: time.now(), into: &updates)
                line.step()
                if done(updates) { return true }
                var next = time.instant + .milliseconds(5)
                for d in [link.nextDeadline, line.nextDeadline] { if let d, d < next { next = d } }
                time.advance(by: max(.nanoseconds(1), next - time.instant))
            }
            return false
        }
    }

    static let mum = try! AlertSlot(name: "Mum", number: "+15550100001", message: "Please call me.")

    @Test func anAlertIsSentThenDelivered() throws {
        let rig = try Rig()
        rig.link.send([AlertRequest(slot: 0, alert: Self.mum)], at: rig.time.now())
        #expect(rig.run(until: { $0.contains(.delivery(slot: 0, .delivered)) }))
        let news = rig.updates.compactMap { if case .delivery(0, let d) = $0 { d } else { nil } }
        #expect(news == [.queued, .sending, .sent, .delivered])
        #expect(rig.updates.contains(.readiness(.ready)))
    }

    /// "I'm OK now" and the monthly test are follow-ups; a missed check-in is an alert.
    @Test func followUpsAreReportedAsFollowUps() throws {
        let rig = try Rig()
        rig.link.send([AlertRequest(slot: 0, alert: Self.mum, purpose: .allClear), AlertRequest(slot: 1, alert: Self.mum, purpose: .test),
                       AlertRequest(slot: 2, alert: Self.mum, purpose: .checkIn)], at: rig.time.now())
        #expect(rig.run(until: { u in
            u.contains(.followUp(slot: 0, purpose: .allClear, .delivered)) && u.contains(.followUp(slot: 1, purpose: .test, .delivered))
                && u.contains(.delivery(slot: 2, .delivered))
        }))
        #expect(!rig.updates.contains { if case .delivery(let s, _) = $0 { s != 2 } else { false } })
    }

    /// A report that comes after a restart: the alert shows "sent" again at once, then "delivered".
    @Test func aSentAlertIsResumedAndDeliveredAfterARestart() throws {
        var script = ModemScript()
        script.defaultReports = .delivered(after: .seconds(5))
        let rig = try Rig(script: script)
        rig.link.send([AlertRequest(slot: 3, alert: Self.mum)], at: rig.time.now())
        #expect(rig.run(until: { $0.contains(.delivery(slot: 3, .sent)) }))
        try rig.restart()
        #expect(rig.run(until: { $0.contains(.delivery(slot: 3, .delivered)) }))
        guard case .resumed(let p, _, _)? = rig.updates.first else { Issue.record("\(rig.updates)"); return }
        #expect(p.map(\.slot) == [3] && p.map(\.delivery) == [.sent])
    }

    /// A missed check-in's alerts still on their way at a restart come back as the check-in's,
    /// not as a PANIC: the status screen and `unwind status` say why they went.
    @Test func aMissedCheckInsAlertsComeBackAsTheCheckIns() throws {
        var script = ModemScript()
        script.defaultSubmit = SubmitPlan(result: .silence)  // never confirmed: still in the outbox
        let rig = try Rig(script: script)
        rig.link.send([AlertRequest(slot: 3, alert: Self.mum, purpose: .checkIn)], at: rig.time.now())
        #expect(rig.run(until: { $0.contains(.delivery(slot: 3, .sending)) }))
        try rig.restart()
        #expect(rig.run(until: { !$0.isEmpty }))
        guard case .resumed(let p, let purpose, _)? = rig.updates.first else { Issue.record("\(rig.updates)"); return }
        #expect(purpose == .checkIn)
        var core = DeviceCore()
        var effects: [Effect] = []
        core.apply(.alertsResumed(p, purpose: purpose), at: rig.time.now(), effects: &effects)
        #expect(core.state.panic.aftercare.purpose == .checkIn)
    }

    /// Replies: each new one at once; those not dismissed again after a restart; a dismissed one never.
    @Test func repliesAndTheirSeenMark() throws {
        let rig = try Rig()
        #expect(rig.run(until: { $0.contains(.readiness(.ready)) }))
        rig.line.receiveSMS(from: "+15550100001", text: "On my way")
        rig.line.receiveSMS(from: "+15550100002", text: "Coming too")
        #expect(rig.run(until: { $0.filter { if case .reply = $0 { true } else { false } }.count == 2 }))
        let replies = rig.updates.compactMap { if case .reply(let r) = $0 { r } else { nil } }
        #expect(replies.map(\.text) == ["On my way", "Coming too"])
        rig.link.markRepliesSeen([replies[0].id])
        try rig.restart()
        rig.run(until: { _ in false }, within: .milliseconds(20))
        #expect(rig.updates.compactMap { if case .reply(let r) = $0 { r } else { nil } } == [replies[1]])
    }

    /// A call nobody answers ends by itself: the core hears "no call" and can ring the next.
    @Test func aCallThatEndsByItselfIsOver() throws {
        var script = ModemScript()
        script.defaultDial = .endsAfter(.seconds(2), "NO ANSWER")
        let rig = try Rig(script: script)
        rig.link.dial(Self.mum.number, at: rig.time.now())
        #expect(rig.run(until: { $0.contains(.call(active: false)) }))
        #expect(rig.updates.filter { if case .call = $0 { true } else { false } } == [.call(active: true), .call(active: false)])
    }

    /// The self-test answers with readiness even when nothing changed.
    @Test func theSelfTestAnswers() throws {
        let rig = try Rig()
        #expect(rig.run(until: { $0.contains(.readiness(.ready)) }))
        rig.updates.removeAll()
        rig.link.runSelfTest(at: rig.time.now())
        #expect(rig.run(until: { $0.contains(.readiness(.ready)) }))
    }
}
