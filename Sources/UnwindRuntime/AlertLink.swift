import Logging
import UnwindMaintenance
import UnwindCore

import UnwindModem

/// What the loop needs of the panic path: alerts out, news back, inside the loop's poll.
public protocol AlertLink: AnyObject {
    var pollDescriptors: [Int32] { get }
    var nextDeadline: Instant? { get }
    func send(_ requests: [AlertRequest], at now: Moment)
    /// A text that is not an alert (a STATUS answer, the maintainer's): after every alert.
    func sendText(_ text: DeviceText, at now: Moment)
    func dial(_ number: PhoneNumber, at now: Moment)
    func hangUp()
    /// Started again while the ladder rang a contact: the call an earlier run left up is looked
    /// for and followed (a pick-up seen, the ladder's hang-up reaching it).
    func followCallLeftUp()
    /// Cancel these slots' alerts that have not gone yet (an alert already on the wire may still
    /// be reported sent).
    func cancelAlerts(_ slots: [Int])
    /// The person dismissed these replies (ids from `.reply`): they are not reported again.
    func markRepliesSeen(_ ids: [String])
    /// Run the modem's start-up checks now, sending nothing; the outcome comes as `.readiness`.
    func runSelfTest(at now: Moment)
    /// Does what is due and appends what changed since the last call.
    func step(at now: Moment, into updates: inout [AlertLinkUpdate])
    func close()
    /// The modem behind the link, for the maintainer's modem commands and `status` (nil: a
    /// simulation with scripted alerts has none to ask).
    var attachedModem: GSMModem? { get }
}

public enum AlertLinkUpdate: Equatable, Sendable {
    /// Alerts an earlier run asked for and the outbox is sending again after a restart: the
    /// person sees (and feels) them exactly as before the restart.
    /// `purpose`: why they went (`.checkIn` when any of them is a missed check-in's).
    /// `queuedAt`: when the newest of them was queued (nil: not known).
    case resumed([AlertProgress], purpose: AlertPurpose = .panic, queuedAt: WallTime? = nil)
    /// News about an alert (`.panic` or `.checkIn`): queued … sent … delivered / failed.
    case delivery(slot: Int, AlertDelivery)
    /// Some part of this slot's alert may be on the contact's phone although it is not SENT (a
    /// part of a long one accepted, a submit in doubt): "I'm OK now" goes to them too. Said once,
    /// before the `.delivery` of the same step.
    case mayHaveReached(slot: Int)
    /// News about a follow-up (`.allClear`, `.test`).
    case followUp(slot: Int, purpose: AlertPurpose, AlertDelivery)
    case call(active: Bool)
    /// The call that is up was picked up (the modem's `AT+CLCC` said so).
    case callAnswered
    /// An SMS received and on the SD card; also, at the first step, each one not yet dismissed.
    case reply(IncomingReply)
    /// Whether a PANIC could go out now: at the first step, after each change, after a self-test.
    case readiness(AlertReadiness)
    /// The modem's signal changed (`+CSQ` rssi; nil: not known): a STATUS answer says it.
    case signal(Int?)
    /// What became of a text that is not an alert (`DeviceText.token`): sent, unconfirmed, dropped.
    case textOutcome(token: Int, DeviceTextOutcome)
}

/// The panic path through the GSM modem: every request goes to the journaled outbox first
/// (inside `GSMModem.send`), then over AT commands; what the modem reports is translated to
/// what the person is shown. The core numbers slots from 0; the modem and its outbox files
/// from 1, as the slot files are named (`alert01.txt`): the translation is here, both ways.
///
/// A message is followed until nothing more can be learnt about it: past "sent" while status
/// reports may still say "delivered" or "failed", and no further — a "sent" that no report
/// settles stays "sent".
public final class ModemAlertLink: AlertLink {
    public let modem: GSMModem
    public var attachedModem: GSMModem? { modem }
    private struct Followed {
        var id: MessageID
        var slot: Int
        var purpose: AlertPurpose
        var reported: AlertDelivery?
        var toldReached = false
    }
    private var tracked: [Followed] = []
    /// Texts that are not alerts, until the modem says what became of them.
    private var texts: [(id: MessageID, token: Int)] = []
    /// Reported at the first step, then empty.
    private var resumed: [AlertProgress] = []
    private var resumedPurpose: AlertPurpose = .panic
    private var resumedQueuedAt: WallTime?
    private var firstStep = true
    private var callActive = false
    private var signal: Int??
    /// When the messages were last looked at, and whether something asked since (a send).
    private var lastLook: Instant?
    private var lookAgain = true

    public init(modem: GSMModem) {
        self.modem = modem
        // Alerts left in the outbox by an earlier run are being resent (or wait for their status
        // reports): the screen shows them too. Follow-ups are followed, not shown again.
        for m in modem.messages where !m.state.isFinished || m.awaitingReports {
            guard let slot = m.slot else { continue }
            let delivery = Self.delivery(m.state)
            tracked.append(Followed(id: m.id, slot: slot - 1, purpose: m.purpose, reported: nil, toldReached: m.mayHaveReached))
            if m.purpose.isAlert {
                if m.purpose == .checkIn { resumedPurpose = .checkIn }
                if let created = modem.outbox.entries.first(where: { $0.id == m.id })?.created,
                   resumedQueuedAt.map({ created > $0 }) ?? true {
                    resumedQueuedAt = created
                }
                resumed.append(AlertProgress(slot: slot - 1, name: m.contactName, number: m.number, delivery: delivery,
                                             mayHaveReached: m.mayHaveReached))
            }
        }
    }

    /// The modem's descriptor, cached: the loop asks every pass, and a fresh array each time
    /// would be an allocation per frame. Rebuilt only when the tty is reopened.
    public var pollDescriptors: [Int32] {
        let fd = modem.port.descriptor
        if fd != cachedDescriptor {
            cachedDescriptor = fd
            cachedDescriptors = fd.map { [$0] } ?? []
        }
        return cachedDescriptors
    }
    private var cachedDescriptor: Int32?
    private var cachedDescriptors: [Int32] = []
    public var nextDeadline: Instant? { modem.nextDeadline }

    public func send(_ requests: [AlertRequest], at now: Moment) {
        for r in requests {
            let id = modem.send(r.alert, slot: r.slot + 1, purpose: r.purpose, at: now)
            tracked.append(Followed(id: id, slot: r.slot, purpose: r.purpose, reported: nil))
        }
        lookAgain = true
    }

    public func sendText(_ text: DeviceText, at now: Moment) {
        texts.append((modem.sendNotice(text.message, at: now), text.token))
        lookAgain = true
    }

    public func dial(_ number: PhoneNumber, at now: Moment) { modem.dial(number, at: now.instant) }
    public func hangUp() { modem.hangUp() }
    public func followCallLeftUp() { modem.followCallLeftUp() }
    public func markRepliesSeen(_ ids: [String]) { modem.markRepliesSeen(ids) }
    public func runSelfTest(at now: Moment) { modem.runSelfTest(at: now) }
    public func cancelAlerts(_ slots: [Int]) {
        // Alerts only: a follow-up or the monthly test to the same slot goes on.
        for t in tracked where slots.contains(t.slot) && (t.purpose == .panic || t.purpose == .checkIn) { modem.cancel(t.id) }
        lookAgain = true
    }

    public func step(at now: Moment, into updates: inout [AlertLinkUpdate]) {
        // At the first step even when empty: the core then knows what the outbox holds, and asks
        // again for alerts it asked for before a restart that never reached the card.
        if firstStep || !resumed.isEmpty {
            updates.append(.resumed(resumed, purpose: resumedPurpose, queuedAt: resumedQueuedAt))
            resumed = []
        }
        if firstStep {
            firstStep = false
            for r in modem.unseenReplies { updates.append(.reply(r)) }
        }
        modem.step(at: now)
        var messagesChanged = lookAgain
        for event in modem.takeEvents() {
            switch event {
            case .callChanged(let c):
                // Only the edges: dialling, ringing and hanging up are all "a call is on".
                if c.isInCall != callActive {
                    callActive = c.isInCall
                    updates.append(.call(active: callActive))
                }
                if case .answered = c { updates.append(.callAnswered) }
            case .replyReceived(let r):
                updates.append(.reply(r))
            case .readiness(let r, _):
                updates.append(.readiness(r))
            case .statusChanged, .messageSent, .messageRetrying, .messageFailed, .messageDelivered:
                messagesChanged = true
            }
        }
        let rssi = modem.status.signal?.rssi
        if signal != .some(rssi) {
            signal = .some(rssi)
            updates.append(.signal(rssi))
        }
        // The messages are looked at when the modem says one changed (and once a second all the
        // same): with hundreds in the outbox, a look on every pass would cost the loop its frames.
        if !messagesChanged, let last = lastLook, now.instant - last < .seconds(1) { return }
        lastLook = now.instant
        lookAgain = false
        var statuses: [MessageID: MessageStatus] = [:]
        for m in modem.messages where statuses[m.id] == nil { statuses[m.id] = m }
        texts.removeAll { t in
            guard let outcome = (statuses[t.id] ?? modem.message(t.id)).flatMap(Self.textOutcome) else { return false }
            updates.append(.textOutcome(token: t.token, outcome))
            return true
        }
        var i = 0
        while i < tracked.count {
            let t = tracked[i]
            // A message settled since (delivered, failed) has left the list; it is asked for.
            let status = statuses[t.id] ?? modem.message(t.id)
            let delivery = status.map { Self.delivery($0.state) } ?? .sent
            if t.purpose.isAlert, !t.toldReached, status?.mayHaveReached == true {
                tracked[i].toldReached = true
                updates.append(.mayHaveReached(slot: t.slot))
            }
            if delivery != t.reported {
                tracked[i].reported = delivery
                updates.append(t.purpose.isAlert ? .delivery(slot: t.slot, delivery)
                               : .followUp(slot: t.slot, purpose: t.purpose, delivery))
            }
            let settled = delivery == .sent ? !(status?.awaitingReports ?? false) : delivery.isFinished
            if settled { tracked.remove(at: i) } else { i += 1 }
        }
    }

    public func close() { modem.close() }

    /// What became of a text that is not an alert, once the modem is done with it (nil: not yet).
    static func textOutcome(_ m: MessageStatus) -> DeviceTextOutcome? {
        switch m.state {
        case .sent, .delivered: .sent
        case .cancelled: m.mayHaveReached ? .unconfirmed : .dropped(m.lastProblem.map { "\($0)" } ?? "not sent in time")
        case .failed(let p): .dropped(p.description)
        case .queued, .sending, .retrying: nil
        }
    }

    static func delivery(_ s: MessageState) -> AlertDelivery {
        switch s {
        case .queued: .queued
        case .sending: .sending
        case .sent: .sent
        case .delivered: .delivered
        case .retrying(.noServiceCentre(configured: false), _): .blocked(SendProblem.noServiceCentre(configured: false).description)
        case .retrying(.serviceCentreRefused(let n), _): .blocked(SendProblem.serviceCentreRefused(n).description)
        case .retrying(let p, _): .retrying(p.description)
        case .failed(let p): .failed(p.description)
        case .cancelled: .cancelled
        }
    }
}

extension AlertPurpose {
    /// PANIC and a missed check-in are alerts; the others are follow-ups.
    var isAlert: Bool { self == .panic || self == .checkIn }
}
