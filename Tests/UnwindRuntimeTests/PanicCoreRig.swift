import Foundation
import Testing
import UnwindTestSupport
@testable import UnwindCore
import UnwindRuntime
import UnwindLinuxHardware
import UnwindModem
import UnwindSimulatedHardware

/// The core, the real panic link (`ModemAlertLink` → `GSMModem` → outbox) and the scripted modem
/// on a line in memory, all on simulated time: what the person does, what the device believes
/// and what the network saw, in one scenario that runs in milliseconds. The core is ticked every
/// `tick` of simulated time; the modem and the line are stepped at their own deadlines too.
final class PanicCoreRig {
    let time: SimulatedTime
    let line: SimulatedModemLine
    let directory: ScratchDirectory
    let repliesDirectory: ScratchDirectory?
    let outbox: Outbox
    let link: ModemAlertLink
    var core: DeviceCore
    var effects: [Effect] = []
    /// Every `.sendAlerts` the core asked for, in order.
    private(set) var requested: [AlertRequest] = []
    /// Every `.sendText` (STATUS answers, the maintainer's texts), in order.
    private(set) var texts: [DeviceText] = []
    private var updates: [AlertLinkUpdate] = []
    /// The state files the core asked to save, newest text of each (what a restart loads).
    private(set) var saved: [StateFile: String] = [:]
    let tick: Duration = .milliseconds(50)

    /// `inbox`: received messages go to a `replies/` of their own (and leave the SIM).
    init(script: ModemScript, contacts: [AlertSlot], settings: DeviceSettings = DeviceSettings(),
         configure: (inout ModemConfiguration) -> Void = { _ in }, inbox: Bool = false, name: String = #function) throws {
        time = SimulatedTime(start: Instant(nanoseconds: 1_000_000_000_000))
        line = SimulatedModemLine(script: script, clock: time)
        directory = ScratchDirectory(name)
        outbox = Outbox(storage: try DirectoryStore.outbox(at: directory.path))
        var c = ModemConfiguration()
        configure(&c)
        repliesDirectory = inbox ? ScratchDirectory(name + "-replies") : nil
        let replies = try repliesDirectory.map { Inbox(storage: try DirectoryStore(directory: $0.path)) }
        link = ModemAlertLink(modem: GSMModem(port: line, outbox: outbox, inbox: replies, configuration: c, random: SeededRandom(seed: 42),
                                              logger: quietLogger()))
        core = DeviceCore(settings: settings)
        core.alertSlotsChanged(contacts.map { .ready($0) })
    }

    /// The device killed and started again on the same outbox and the same network: a new core,
    /// modem and link; the network (the line, with whatever it was doing) and the time go on.
    /// The old rig must not be run again.
    init(restarting old: PanicCoreRig, contacts: [AlertSlot], settings: DeviceSettings = DeviceSettings(),
         configure: (inout ModemConfiguration) -> Void = { _ in }) throws {
        time = old.time
        line = old.line
        directory = old.directory
        repliesDirectory = old.repliesDirectory
        outbox = Outbox(storage: try DirectoryStore.outbox(at: directory.path), now: old.time.now().wall)
        var c = ModemConfiguration()
        configure(&c)
        let replies = try repliesDirectory.map { Inbox(storage: try DirectoryStore(directory: $0.path)) }
        link = ModemAlertLink(modem: GSMModem(port: line, outbox: outbox, inbox: replies, configuration: c, random: SeededRandom(seed: 43),
                                              logger: quietLogger()))
        // What followed the alerts, as the device loads `escalation.txt` at start.
        saved = old.saved
        core = DeviceCore(settings: settings, escalation: try EscalationFile.parse(Array((old.saved[.escalation] ?? "").utf8)))
        core.alertSlotsChanged(contacts.map { .ready($0) })
        apply(.wallClockSynchronised(true))
    }

    var now: Moment { time.now() }
    var modem: GSMModem { link.modem }

    func apply(_ e: DeviceEvent) {
        var new: [Effect] = []
        core.apply(e, at: now, effects: &new)
        carryOut(new)
    }

    private func carryOut(_ new: [Effect]) {
        effects += new
        for e in new {
            switch e {
            case .sendAlerts(let r):
                requested += r
                link.send(r, at: now)
            case .cancelAlerts(let slots): link.cancelAlerts(slots)
            case .dial(let n): link.dial(n, at: now)
            case .hangUp: link.hangUp()
            case .followCallLeftUp: link.followCallLeftUp()
            case .markRepliesSeen(let ids): link.markRepliesSeen(ids)
            case .save(let file, let text): saved[file] = text
            case .sendText(let t):
                texts.append(t)
                link.sendText(t, at: now)
            default: break
            }
        }
    }

    /// One pass of the loop: the line, the link (its news to the core), a tick of the core.
    private func pass() {
        line.step()
        updates.removeAll()
        link.step(at: now, into: &updates)
        line.step()
        for u in updates {
            switch u {
            case .resumed(let p, let purpose, let queuedAt): apply(.alertsResumed(p, purpose: purpose, queuedAt: queuedAt))
            case .delivery(let slot, let d): apply(.alertDelivery(slot: slot, d))
            case .mayHaveReached(let slot): apply(.alertMayHaveReached(slot: slot))
            case .followUp(let slot, let purpose, let d): apply(.followUpDelivery(slot: slot, purpose: purpose, d))
            case .call(let active): apply(.callChanged(active: active))
            case .callAnswered: apply(.callAnswered)
            case .reply(let r): apply(.replyReceived(r))
            case .readiness(let r): apply(.alertReadiness(r))
            case .signal(let rssi): apply(.modemSignal(rssi))
            case .textOutcome(let token, let outcome): apply(.deviceTextOutcome(token: token, outcome))
            }
        }
        apply(.tick)
    }

    /// Runs until `done` or `limit` of simulated time has passed.
    @discardableResult
    func run(until done: () -> Bool = { false }, for limit: Duration) -> Bool {
        let end = time.instant + limit
        var idle = 0
        while time.instant < end {
            pass()
            if done() { return true }
            var next = min(end, time.instant + tick)
            for d in [link.nextDeadline, line.nextDeadline] { if let d, d < next { next = d } }
            if next > time.instant {
                idle = 0
                time.advance(by: next - time.instant)
            } else {
                idle += 1
                if idle > 10_000 { Issue.record("stepped at once forever at \(time.instant)"); return false }
            }
        }
        pass()
        return done()
    }

    func press(_ g: ButtonGesture) { apply(.button(g)) }

    /// PANIC held 1.5 s.
    func panic() {
        press(.down(.panic))
        run(for: .milliseconds(1600))
    }

    /// Hold SELECT on the status screen, then SELECT again: "I'm OK now".
    func imOK() {
        press(.down(.select))
        run(for: .milliseconds(800))
        press(.long(.select))
        press(.up(.select, heldFor: .milliseconds(900)))
        run(for: .milliseconds(300))
        #expect(core.state.panic.aftercare.confirmingAllClear, "the confirmation is not on screen")
        press(.down(.select))
    }

    // MARK: What the network saw

    /// Copies of each part the network took (accepted, or swallowed in doubt) to `number`
    /// whose text contains `text`: the most copies of any one part.
    func copies(to number: String, containing text: String) -> Int {
        var byPart: [Int: Int] = [:]
        for p in line.parts where p.submit.number == number && p.submit.text.contains(text) {
            byPart[p.submit.concatenation?.part ?? 1, default: 0] += 1
        }
        return byPart.values.max() ?? 0
    }

    /// Whether any part of anything containing `text` reached `number` (or may have).
    func anyPart(to number: String, containing text: String) -> Bool {
        line.parts.contains { $0.submit.number == number && $0.submit.text.contains(text) }
    }
}
