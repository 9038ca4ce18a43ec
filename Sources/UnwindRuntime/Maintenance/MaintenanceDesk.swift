#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UnwindMaintenance
import UnwindCore
import Logging
import UnwindModem
import UnwindRender

/// What the maintainer's desk may see and do on the running device, and nothing more: read the
/// core's state and the frame on the panel, ask the core for a change as a button would, wait
/// for the card, and talk to the modem. The device loop is the one conformer; a desk is not
/// part of the real-time loop, only served from its poll.
protocol MaintenanceDevice: AnyObject {
    var core: DeviceCore { get }
    var framebuffer: Framebuffer { get }
    var statistics: LoopStatistics { get }
    var persistence: StatePersistence { get }
    /// Nil: a simulation with scripted alerts, no modem to ask.
    var modem: GSMModem? { get }
    /// Applies the change between passes, as a button's is, and performs its effects.
    @discardableResult func maintain(_ change: MaintenanceChange) -> EventRefusal?
}

/// The running device's answers to the maintainer's requests. Every change is made to the
/// core, as a button's would be, and saved by the device itself (one writer, so the person's
/// edits on the device and the maintainer's never overwrite each other); the answer waits for
/// the write to reach the card. Nothing here blocks: slow things (the card, the modem) answer
/// through `ControlReply.later`.
final class MaintenanceDesk: ControlHandling {
    /// The device owns its desk (through the control socket's participant).
    unowned let device: MaintenanceDevice
    let server: ControlServer
    let logger: Logger
    /// When the last test message was queued (`unwind alerts test`): the next waits
    /// `ControlLimits.testMessageInterval`, whoever asks and on whichever connection.
    var lastTestMessage: Instant?

    init(device: MaintenanceDevice, server: ControlServer, logger: Logger) {
        self.device = device
        self.server = server
        self.logger = logger
    }

    var core: DeviceCore { device.core }
    var persistence: StatePersistence { device.persistence }

    /// How long a change may wait for the card before the command is told it failed.
    static let writeTimeout: Duration = .seconds(30)

    func handleControl(_ request: ControlRequest, restorable: Result<MaintenanceEdits.RestorableState, ControlFailure>?,
                       from peer: ControlServer.Peer, at now: Moment) -> ControlReply {
        if request != .status && request != .screen {
            logger.notice("control: \(peer) asks: \(Self.summary(request))")
        }
        do {
            return try answer(request, restorable: restorable, at: now)
        } catch {
            return .now(ControlResponse(error))
        }
    }

    static func summary(_ r: ControlRequest) -> String {
        switch r {
        case .restore(let files): "restore (\(files.count) files)"
        case .importSetup(let alerts, _): "setup import (slots \(alerts.map { "\($0.slot)" }.joined(separator: ", ")))"
        // A card is the person's own words: the journal says what was done, not what it says.
        case .addCard: "addCard"
        case .deleteCard(let number, _, _): "deleteCard \(number)"
        default: "\(r)"
        }
    }

    private func answer(_ request: ControlRequest, restorable: Result<MaintenanceEdits.RestorableState, ControlFailure>?,
                        at now: Moment) throws(ControlFailure) -> ControlReply {
        switch request {
        case .status:
            var r = ControlResponse.done()
            r.status = status(at: now)
            return .now(r)

        case .screen:
            var r = ControlResponse.done()
            var frame = device.framebuffer
            // The person's answers, moods and cards stay on the device.
            if core.state.showsHowAmIDoing { PrivateScreen.render(core.state, into: &frame) }
            r.screen = ScreenReport(width: frame.width, height: frame.height, bytes: Data(frame.bytes),
                                    asleep: core.state.display.asleep, page: "\(core.state.page)")
            return .now(r)

        case .addMantra(let given):
            let text = MaintenanceEdits.mantraText(given)
            try MaintenanceEdits.checkMantra(text, count: core.state.mantras.count)
            let before = persistence.writesAsked
            if case .mantra(let problem)? = device.maintain(.addMantra(text)) { throw .input("mantra: \(problem)") }
            let shown = core.state.overlay == .confirmDelete ? "the person is deciding about another one on the device" : "shown on the device now"
            return afterWrites(before, now, "added mantra \(core.state.mantras.count): \"\(text)\" (\(shown))")

        case .deleteMantra(let number, let expected):
            let items = core.state.mantras.items
            let index = try MaintenanceEdits.mantraIndex(number, count: items.count)
            let before = persistence.writesAsked
            guard device.maintain(.deleteMantra(index: index, expected: expected)) == nil else {
                throw MaintenanceEdits.listChanged(number, items)
            }
            return afterWrites(before, now, "deleted mantra \(number): \"\(items[index])\"; \(items.count - 1) left")

        case .resetMantras:
            let shipped = DeviceContent.shippedMantras(in: server.contentDirectory)
            guard !shipped.isEmpty else { throw .failed("the shipped mantras cannot be read from \(server.contentDirectory ?? "the executable")") }
            let before = persistence.writesAsked
            device.maintain(.setMantras(shipped, current: 0))
            return afterWrites(before, now, "the \(shipped.count) shipped mantras are back; the person's own were replaced")

        case .setReminder(let line):
            let schedule = try MaintenanceEdits.reminder(line)
            let before = persistence.writesAsked
            device.maintain(.setReminder(schedule))
            return afterWrites(before, now, "reminder: \(RemindersFile.line(schedule))")

        case .setAlert(let slot, let name, let number, let message):
            let index = try MaintenanceEdits.slotIndex(slot)
            let alert = try MaintenanceEdits.mergedAlert(core.state.panic.slots[index], slot: slot, name: name,
                                                         number: number, message: message)
            let before = persistence.writesAsked
            device.maintain(.setAlertSlot(slot, alert))
            var reply = ControlResponse.done("slot \(slot) saved")
            reply.alert = MaintenanceEdits.report(slot: slot, alert)
            return afterWrites(before, now, reply)

        case .clearAlert(let slot):
            let index = try MaintenanceEdits.slotIndex(slot)
            let wasEmpty = core.state.panic.slots[index] == .empty
            let before = persistence.writesAsked
            device.maintain(.setAlertSlot(slot, nil))
            return afterWrites(before, now, wasEmpty ? "slot \(slot) was already empty" : "slot \(slot) cleared")

        case .testAlert(let slot, let waitSeconds):
            return try testAlert(slot: slot, wait: .seconds(max(1, min(600, waitSeconds))), at: now)

        case .resetStatistics:
            let before = persistence.writesAsked
            device.maintain(.replaceStatistics(totals: .zero, history: []))
            return afterWrites(before, now, "breathing statistics reset to zero")

        case .restore(let files):
            let bytes = files.mapValues { [UInt8]($0) }
            // Parsed on the decoder's queue, not here on the loop's thread.
            let state = try (restorable ?? Result { () throws(ControlFailure) in try MaintenanceEdits.restorable(bytes) }).get()
            // The replies first, into the inbox the modem keeps (they are its files): a union, so
            // a failure here has lost nothing and changed none of the state files yet.
            let replies = try adoptReplies(state.replies, at: now)
            let before = persistence.writesAsked
            // All nine files as one change first: a kill mid-restore leaves the old state or the
            // new one, never a mix. The core's own saves that follow write the same state again.
            let grace = core.state.checkIn.grace
            persistence.saveAll((StateArchive.stateFiles + StateArchive.optionalFiles).compactMap { n in
                state.bytes(of: n, archive: bytes, grace: grace).map { (name: n, bytes: $0) }
            })
            device.maintain(.restore(totals: state.totals, history: state.history, mantras: state.mantras,
                              reminder: state.reminder, alertSlots: state.alertSlots))
            if let patterns = state.patterns { device.maintain(.setCustomPatterns(patterns)) }
            if let choice = state.choice, let c = choice { device.maintain(.setBreathingChoice(c)) }
            // The help state through the core, so the running device takes it up (and writes it
            // again as it then stands: its own grace period, its own alerts going on).
            if let r = state.checkIn { device.maintain(.restoreCheckIn(r)) }
            if let r = state.alertTest { device.maintain(.restoreAlertTest(r)) }
            if let r = state.escalation { device.maintain(.restoreEscalation(r)) }
            if !state.selfCheck.isEmpty { device.maintain(.restoreSelfCheck(state.selfCheck)) }
            return afterWrites(before, now, MaintenanceEdits.restoredMessage(state) + replies)

        case .importSetup(let alerts, let screen):
            let change = try MaintenanceEdits.setupImport(alerts, screen: screen)
            let before = persistence.writesAsked
            // One change on the card first, as a restore's; the core's own saves that follow
            // write the same slots again.
            persistence.saveAll(change.files)
            for (slot, alert) in change.alerts { device.maintain(.setAlertSlot(slot, alert)) }
            return afterWrites(before, now, MaintenanceEdits.importedMessage(change.alerts))

        case .modemCheck:
            let modem = try modemOrFail()
            return modemCheck(modem, at: now)

        case .modemCommand(let text):
            let command: TechnicianCommand
            do { command = try TechnicianCommand(text) } catch { throw .input(error.reason) }
            let modem = try modemOrFail()
            return technician(command, modem, at: now)

        case .motorTest:
            device.maintain(.motorTest)
            return .now(.done("the device pulses its motor 3 times (0.3 s each) now"))

        case .addPattern(let name, let words):
            let offered = core.state.breathing.presets
            let p = try MaintenanceEdits.newPattern(name: name, words: words, existing: offered)
            let before = persistence.writesAsked
            device.maintain(.setCustomPatterns(offered.filter(\.isCustom) + [p]))
            return afterWrites(before, now, "added pattern \(MaintenanceEdits.describe(p)); offered on the breathing page now")

        case .addCard(let concern, let answer):
            let card = MaintenanceEdits.card(concern: concern, answer: answer)
            try MaintenanceEdits.checkCard(card, count: core.state.selfCheck.cards.count)
            let before = persistence.writesAsked
            if case .copingCard(let why)? = device.maintain(.addCopingCard(card)) { throw .input("card: \(why)") }
            return afterWrites(before, now, "added card \(core.state.selfCheck.cards.count): \"\(card.concern)\"")

        case .deleteCard(let number, let concern, let answer):
            let cards = core.state.selfCheck.cards
            let index = try MaintenanceEdits.cardIndex(number, count: cards.count)
            let before = persistence.writesAsked
            guard device.maintain(.deleteCopingCard(index: index, expected: MaintenanceEdits.expectedCard(concern: concern, answer: answer))) == nil else {
                throw MaintenanceEdits.cardsChanged(number)
            }
            return afterWrites(before, now, "deleted card \(number): \"\(cards[index].concern)\"; \(cards.count - 1) left")

        case .setSelfCheckReminder(let line):
            let schedule = try MaintenanceEdits.selfCheckReminder(line)
            let before = persistence.writesAsked
            device.maintain(.setSelfCheckReminder(schedule))
            return afterWrites(before, now, "self-check reminder: \(RemindersFile.line(schedule))")

        case .removePattern(let name):
            let remaining = try MaintenanceEdits.removingPattern(name, from: core.state.breathing.presets)
            let wasChosen = core.state.breathing.preset.name == name
            let before = persistence.writesAsked
            device.maintain(.setCustomPatterns(remaining))
            return afterWrites(before, now, "removed pattern \(name)" + (wasChosen ? "; the page now offers \(core.state.breathing.preset.name)" : ""))
        }
    }

    /// A backup's replies into the running device's inbox (`Inbox.adopt`'s rule: nothing it
    /// holds is lost, nothing dismissed is shown again); what came of it, for the answer.
    private func adoptReplies(_ replies: [StoredReply], at now: Moment) throws(ControlFailure) -> String {
        guard !replies.isEmpty else { return "" }
        guard let inbox = device.modem?.inbox else {
            return "; the \(replies.count) replies were not restored: this device keeps no inbox (see the journal)"
        }
        do {
            let m = try inbox.adopt(replies, now: now.wall)
            logger.notice("restore: replies: \(m.description)")
            return "; replies: \(m.description)"
        } catch {
            throw .failed("cannot restore the replies (no state file changed; the replies written so far are kept, a union): \(error)")
        }
    }

    // MARK: Waiting for the card

    private func afterWrites(_ before: UInt64, _ now: Moment, _ message: String) -> ControlReply {
        afterWrites(before, now, ControlResponse.done(message))
    }

    /// Answers once the writes asked for since `before` are on the card (or failed).
    private func afterWrites(_ before: UInt64, _ now: Moment, _ response: ControlResponse) -> ControlReply {
        let barrier = persistence.barrier(after: before)
        var response = response
        if response.mantras == nil {
            response.mantras = MantrasReport(items: core.state.mantras.items,
                                              current: core.state.mantras.isEmpty ? 0 : core.state.mantras.current + 1)
        }
        let answer = response
        let check: (Moment, Bool) -> ControlResponse? = { _, expired in
            if barrier.isDone {
                // The core already acts on the change: say so, and that the card does not have it yet.
                if let f = barrier.failure { return ControlResponse(.failed("the device uses the change now, but it is not on the card: \(f)")) }
                // What the device kept aside before writing over it is said with the answer.
                let kept = barrier.keptAside
                guard !kept.isEmpty else { return answer }
                var r = answer
                r.message = ([r.message ?? "done"] + kept).joined(separator: "; ")
                return r
            }
            return expired ? ControlResponse(.failed("the change is made but not yet on the card after \(Self.writeTimeout); see the journal")) : nil
        }
        if let r = check(now, false) { return .now(r) }
        return .later(until: now.instant + Self.writeTimeout, poll: check, cancel: {})
    }


    /// The device's status as `unwind status` shows it.
    func status(at now: Moment) -> StatusReport {
        DeviceStatus.report(core.state, settings: core.settings, modem: device.modem, statistics: device.statistics,
                            server: server, at: now)
    }
}
