/// After the alerts went out: who got them, who answered, ringing the contacts nobody heard
/// from, and "I'm OK now". A person in a panic needs to know that someone got the message and
/// is coming; everything here is about telling them exactly that, and nothing more than is known.

/// A reply from one of the person's alert contacts, shown until the person dismisses it.
public struct ContactReply: Equatable, Sendable {
    public var id: String
    /// 0-based slot of the contact whose number it came from.
    public var slot: Int
    public var name: String
    public var number: PhoneNumber
    public var text: String
    /// The first words of `text`, wrapped for the status screen (at most `shownLines`, the last
    /// ending in "..." when there is more): wrapped once here, so drawing a frame allocates nothing.
    public var lines: [String]

    public static let shownLines = 4
    public static let columns = 31

    init(id: String, slot: Int, name: String, number: PhoneNumber, text: String) {
        self.id = id
        self.slot = slot
        self.name = name
        self.number = number
        self.text = text
        var lines = HelpLibrary.wrap(TextSafety.oneLine(text, limit: 400), columns: Self.columns)
        if lines.isEmpty { lines = ["(an empty message)"] }
        if lines.count > Self.shownLines {
            lines = Array(lines.prefix(Self.shownLines))
            let last = lines[Self.shownLines - 1]
            lines[Self.shownLines - 1] = String(last.prefix(Self.columns - 3)) + "..."
        }
        self.lines = lines
    }
}

/// A contact's reply to these alerts as `unwind status` tells it: who, what (on one line, no
/// terminal controls, at most `textLimit` characters) and when. Kept after the person dismissed it.
public struct ContactAnswer: Equatable, Sendable {
    public var slot: Int
    public var name: String
    public var text: String
    public var at: WallTime
    public var instant: Instant
    public static let textLimit = 320
    /// The most kept (the newest).
    public static let kept = 20
}

/// One call of the escalation ladder (for the screen and `unwind status`).
public struct EscalationCall: Equatable, Sendable {
    public var slot: Int
    public var name: String
    public var round: Int
    public var at: Instant
    /// How the call ended (`.ringing` while it is on).
    public var outcome: CallOutcome = .ringing
}

public enum EscalationPhase: Equatable, Sendable {
    /// No alerts out, or no calls configured.
    case idle
    /// The first call goes out at this instant, unless a contact answers first.
    case waiting(until: Instant)
    /// `slot`'s phone has been ringing since `since`.
    case ringing(slot: Int, since: Instant)
    /// Between two calls: the next one at this instant.
    case between(next: Instant)
    case ended(EscalationEnd)

    public var isActive: Bool {
        switch self {
        case .waiting, .ringing, .between: true
        case .idle, .ended: false
        }
    }
}

public enum EscalationEnd: Equatable, Sendable {
    /// A contact answered by SMS.
    case replied
    /// A contact picked up one of the ladder's calls: they know, and they can tell the others.
    case answered
    /// Every round rang every contact.
    case roundsDone
    /// The person stopped the calls.
    case stopped
    /// The person sent "I'm OK now".
    case allClear
    /// Taken from a backup: a restore never rings anyone.
    case restored
}

/// What came of the last alerts.
public struct Aftercare: Equatable, Sendable {
    /// Why the last alerts went (nil: none since the device started).
    public internal(set) var purpose: AlertPurpose?
    public internal(set) var startedAt: Instant?
    /// `startedAt` on the wall clock: what `escalation.txt` keeps across a restart.
    public internal(set) var startedWall: WallTime?
    /// Replies from contacts not yet dismissed, oldest first. The first one is on screen.
    public internal(set) var replies: [ContactReply] = []
    /// Since when the first of `replies` is on screen: where a long one's scrolling starts.
    public internal(set) var replyShownSince = Instant.zero
    /// Every reply from a contact since these alerts (or since start, with none), oldest first,
    /// also those dismissed: for `unwind status`.
    public internal(set) var answers: [ContactAnswer] = []
    public internal(set) var escalation: EscalationPhase = .idle
    /// 1-based round of the ladder (0 before the first call).
    public internal(set) var round = 0
    /// Slots still to ring in this round, in slot order.
    var toRing: [Int] = []
    public internal(set) var calls: [EscalationCall] = []
    /// "I'm OK now": where each follow-up stands (empty: not sent).
    public internal(set) var allClear: [AlertProgress] = []
    /// The confirmation step of "I'm OK now" is on screen.
    public internal(set) var confirmingAllClear = false
    /// "I'm OK now" was confirmed: every alert that still turns out to have gone gets it too.
    public internal(set) var allClearSent = false
    /// Slots whose "delivered" the motor already told.
    var deliveredTold: UInt8 = 0
    /// A contact picked up the ladder's call and it is still up: its end is theirs, not the
    /// person's counselling call.
    var ladderCallUp = false

    /// The slot being rung now, if any.
    public var ringing: Int? { if case .ringing(let s, _) = escalation { s } else { nil } }
}

extension DeviceCore {
    /// Pause between two calls of the ladder: the modem hangs up, the next dial is clean.
    static let callGap: Duration = .seconds(3)

    // MARK: Motor patterns (each unlike the others, felt with eyes closed)

    /// A contact's phone has the alert: two slow, even pulses ("sent" is three quick taps).
    func signalDelivered(at t: Instant, effects: inout [Effect]) {
        pulses(at: t, count: 2, on: .milliseconds(250), off: .milliseconds(250), effects: &effects)
    }

    /// Someone answered: three slow swells, the gentlest thing the motor does.
    func signalReply(at t: Instant, effects: inout [Effect]) {
        pulses(at: t, count: 3, on: .milliseconds(500), off: .milliseconds(400), effects: &effects)
    }

    /// "I'm OK now" is on its way: pulses that wind down, long to short.
    func signalAllClear(at t: Instant, effects: inout [Effect]) {
        var at = t
        for ms in [400, 200, 100] as [Int64] {
            effects.append(.motor(MotorEdge(at: at, on: true)))
            effects.append(.motor(MotorEdge(at: at + .milliseconds(ms), on: false)))
            at = at + .milliseconds(ms + 200)
        }
    }

    // MARK: An episode

    /// Alerts just went (PANIC, or a missed check-in): what follows them starts now.
    mutating func beginAftercare(_ purpose: AlertPurpose, at now: Moment, effects: inout [Effect]) {
        if case .ringing = state.panic.aftercare.escalation { effects.append(.hangUp) }
        var a = Aftercare()
        a.purpose = purpose
        a.startedAt = now.instant
        a.startedWall = now.wall
        a.replies = state.panic.aftercare.replies
        let p = settings.panic
        if p.escalateAfter > .zero && p.callRounds > 0 {
            a.escalation = .waiting(until: now.instant + p.escalateAfter)
        }
        // A reply still on screen from before these alerts stays there, but does not count as
        // an answer to them: only a reply after the alerts says that someone heard.
        state.panic.aftercare = a
    }

    private mutating func markAcknowledged(slot: Int) {
        for k in state.panic.progress.indices where state.panic.progress[k].slot == slot {
            state.panic.progress[k].acknowledged = true
        }
    }

    // MARK: Replies

    /// An SMS arrived. From one of the person's contacts it is shown (and marks the contact as
    /// having heard); from anyone else it is kept for the maintainer and never shown.
    /// A STATUS request goes its own way (StatusBySMS.swift): the person never sees it.
    mutating func replyReceived(_ reply: IncomingReply, at now: Moment, effects: inout [Effect]) {
        if settings.statusTexts.isStatusRequest(reply.text) { return statusRequested(reply, at: now, effects: &effects) }
        guard let slot = contactSlot(of: reply), case .ready(let contact) = state.panic.slots[slot] else { return }
        guard !state.panic.aftercare.replies.contains(where: { $0.id == reply.id }) else { return }
        if state.panic.aftercare.replies.isEmpty { state.panic.aftercare.replyShownSince = now.instant }
        state.panic.aftercare.replies.append(ContactReply(id: reply.id, slot: slot, name: contact.name,
                                                          number: contact.number, text: reply.text))
        state.panic.aftercare.answers.append(ContactAnswer(slot: slot, name: contact.name,
                                                           text: TextSafety.oneLine(reply.text, limit: ContactAnswer.textLimit),
                                                           at: now.wall, instant: now.instant))
        if state.panic.aftercare.answers.count > ContactAnswer.kept { state.panic.aftercare.answers.removeFirst() }
        markAcknowledged(slot: slot)
        if state.panic.aftercare.escalation.isActive {
            endEscalation(.replied, at: now, effects: &effects)
        }
        state.overlay = .alertStatus
        state.panic.aftercare.confirmingAllClear = false
        // With no alert going on, a contact's SMS in the screen care's quiet hours does not light
        // a sleeping screen: it waits on the status screen for the person's next wake.
        if state.panic.aftercare.purpose == nil && isNight(now) && state.display.asleep {
            effects.append(.log("reply from alert slot \(slot + 1) (\(contact.name)) kept for the next wake (night, no alert going on)"))
            return
        }
        effects.append(.log("reply from alert slot \(slot + 1) (\(contact.name)) shown to the person"))
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        // At night a reply wakes the person only when they asked for help.
        if state.panic.aftercare.purpose != nil || !isNight(now) {
            signalReply(at: now.instant, effects: &effects)
        }
    }

    /// The slot whose contact sent `reply`, in any of the forms a network gives a number (a
    /// sender that is a name is nobody's).
    func contactSlot(of reply: IncomingReply) -> Int? {
        AlertSlotState.slot(of: reply, in: state.panic.slots, counselling: state.panic.counselling.dialNumber)
    }

    /// The person saw the first reply on screen.
    mutating func dismissReply(at now: Instant, effects: inout [Effect]) {
        guard !state.panic.aftercare.replies.isEmpty else { return }
        let r = state.panic.aftercare.replies.removeFirst()
        state.panic.aftercare.replyShownSince = now
        effects.append(.markRepliesSeen([r.id]))
    }

    // MARK: Escalation

    /// Every frame while the ladder runs: allocation-free unless a call starts.
    mutating func tickEscalation(at now: Moment, effects: inout [Effect]) {
        switch state.panic.aftercare.escalation {
        case .waiting(let until):
            guard now.instant >= until else { return }
            if state.panic.progress.contains(where: \.acknowledged) {
                state.panic.aftercare.escalation = .ended(.replied)
                return
            }
            startRound(1, at: now, effects: &effects)
        case .ringing(_, let since):
            guard now.instant - since >= settings.panic.ringFor else { return }
            setCallOutcome(.unanswered)
            effects.append(.hangUp)
            state.panic.aftercare.escalation = .between(next: now.instant + Self.callGap)
        case .between(let next):
            guard now.instant >= next else { return }
            ringNext(at: now, effects: &effects)
        case .idle, .ended: return
        }
    }

    private mutating func startRound(_ round: Int, at now: Moment, effects: inout [Effect]) {
        state.panic.aftercare.round = round
        state.panic.aftercare.toRing = state.panic.progress.filter { !$0.acknowledged }.map(\.slot)
        ringNext(at: now, effects: &effects)
    }

    private mutating func ringNext(at now: Moment, effects: inout [Effect]) {
        // The person is on the phone to the counselling line: the ladder waits for them.
        if state.panic.callActive {
            state.panic.aftercare.escalation = .between(next: now.instant + Self.callGap)
            return
        }
        while let slot = state.panic.aftercare.toRing.first {
            state.panic.aftercare.toRing.removeFirst()
            guard let p = state.panic.progress.first(where: { $0.slot == slot }), !p.acknowledged else { continue }
            let round = state.panic.aftercare.round
            state.panic.aftercare.escalation = .ringing(slot: slot, since: now.instant)
            state.panic.aftercare.calls.append(EscalationCall(slot: slot, name: p.name, round: round, at: now.instant))
            effects.append(.log("nobody has answered the alerts: ringing alert slot \(slot + 1) (\(p.name)), round \(round) of \(settings.panic.callRounds)"))
            effects.append(.dial(p.number))
            return
        }
        if state.panic.aftercare.round < settings.panic.callRounds,
           state.panic.progress.contains(where: { !$0.acknowledged }) {
            startRound(state.panic.aftercare.round + 1, at: now, effects: &effects)
        } else {
            endEscalation(.roundsDone, at: now, effects: &effects)
        }
    }

    /// The person dials the counselling line: a ladder's call in progress is hung up, and the
    /// ladder goes on after their call (`ringNext` waits while it is up).
    mutating func pauseEscalationForCall(at now: Moment, effects: inout [Effect]) {
        guard case .ringing(let slot, _) = state.panic.aftercare.escalation else { return }
        setCallOutcome(.cut)
        effects.append(.hangUp)
        // That contact was not really rung: they are rung again after the person's call.
        state.panic.aftercare.toRing.insert(slot, at: 0)
        state.panic.aftercare.escalation = .between(next: now.instant + Self.callGap)
    }

    mutating func endEscalation(_ why: EscalationEnd, at now: Moment, effects: inout [Effect]) {
        guard state.panic.aftercare.escalation.isActive else { return }
        if case .ringing = state.panic.aftercare.escalation {
            setCallOutcome(.cut)
            effects.append(.hangUp)
        }
        state.panic.aftercare.escalation = .ended(why)
        state.panic.aftercare.toRing = []
        let words = switch why {
        case .replied: "a contact answered"
        case .answered: "a contact picked up the call"
        case .roundsDone: "every round rang every contact"
        case .stopped: "the person stopped the calls"
        case .allClear: "the person sent \"I'm OK now\""
        case .restored: "restored from a backup"
        }
        effects.append(.log("escalation calls ended: \(words)"))
    }

    /// The modem's call state. A call of the ladder that ends by itself (no answer, busy) moves
    /// the ladder on; any other is the counselling line's.
    mutating func callChanged(active: Bool, at now: Moment) {
        if case .ringing = state.panic.aftercare.escalation {
            if !active {
                setCallOutcome(.unanswered)
                state.panic.aftercare.escalation = .between(next: now.instant + Self.callGap)
            }
            return
        }
        // A contact who picked up the ladder's call hangs up: that call is over, and it was
        // never the person's own.
        if !active, state.panic.aftercare.ladderCallUp {
            state.panic.aftercare.ladderCallUp = false
            return
        }
        state.panic.callActive = active
    }

    /// The modem says the call that is up was picked up. A contact of the ladder who answers
    /// knows the person needs them: nobody else is rung (they all had the SMS; the one who
    /// answered can call the others), the call stays up for as long as they talk, and the screen
    /// says who it was (ANSWERED on their line). The person's own call answered changes nothing.
    mutating func callAnswered(at now: Moment, effects: inout [Effect]) {
        guard case .ringing(let slot, _) = state.panic.aftercare.escalation else { return }
        setCallOutcome(.answered)
        for k in state.panic.progress.indices where state.panic.progress[k].slot == slot {
            state.panic.progress[k].acknowledged = true
            state.panic.progress[k].answeredCall = true
        }
        state.panic.aftercare.ladderCallUp = true
        state.panic.aftercare.escalation = .ended(.answered)
        state.panic.aftercare.toRing = []
        let name = state.panic.progress.first { $0.slot == slot }?.name ?? "?"
        effects.append(.log("alert slot \(slot + 1) (\(name)) picked up the call; escalation calls ended: a contact picked up the call"))
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        signalReply(at: now.instant, effects: &effects)
    }

    /// The call of the ladder now on the line ended so (once: the first word stands).
    private mutating func setCallOutcome(_ o: CallOutcome) {
        guard let last = state.panic.aftercare.calls.indices.last,
              state.panic.aftercare.calls[last].outcome == .ringing else { return }
        state.panic.aftercare.calls[last].outcome = o
    }

    // MARK: "I'm OK now"

    /// The contacts "I'm OK now" would go to: every one who may have any part of the alert (sent,
    /// delivered, a part of a long one accepted, or a submit whose answer never came).
    public var allClearRecipients: [AlertProgress] { state.panic.allClearRecipients }

    /// After the confirmation: the follow-up to everyone the alert reached, the rest of the alerts
    /// cancelled (nobody worried who was not told), the calls stopped.
    mutating func sendAllClear(at now: Moment, effects: inout [Effect]) {
        state.panic.aftercare.confirmingAllClear = false
        state.panic.aftercare.allClearSent = true
        endEscalation(.allClear, at: now, effects: &effects)
        let unsent = state.panic.progress.filter { !$0.delivery.isFinished }.map(\.slot)
        if !unsent.isEmpty { effects.append(.cancelAlerts(unsent)) }
        let reached = allClearRecipients
        state.panic.aftercare.allClear = reached.map {
            AlertProgress(slot: $0.slot, name: $0.name, number: $0.number, delivery: .queued)
        }
        let requests = reached.compactMap { allClearRequest(for: $0) }
        if !requests.isEmpty { effects.append(.sendAlerts(requests)) }
        let names = reached.map { "alert slot \($0.slot + 1) (\($0.name))" }.joined(separator: ", ")
        effects.append(.log("\"I'm OK now\": sent to \(requests.count) contact(s)\(names.isEmpty ? "" : ": " + names), \(unsent.count) unsent alert(s) cancelled"))
        showNotice(requests.isEmpty ? .allClearNobody : .allClearSending, at: now.instant)
        signalAllClear(at: now.instant, effects: &effects)
    }

    private func allClearRequest(for p: AlertProgress) -> AlertRequest? {
        // Validated with the configuration; a message that still fails is not sent rather than trap.
        guard let slot = try? AlertSlot(name: p.name, number: p.number, message: settings.panic.okMessage) else { return nil }
        return AlertRequest(slot: p.slot, alert: slot, purpose: .allClear)
    }

    /// Some part of a slot's alert may have gone although the alert is not SENT: "I'm OK now" goes
    /// to that contact too (now, when it was already confirmed; otherwise when it is).
    mutating func alertMayHaveReached(slot: Int, at now: Moment, effects: inout [Effect]) {
        guard let i = state.panic.progress.firstIndex(where: { $0.slot == slot }) else { return }
        state.panic.progress[i].mayHaveReached = true
        allClearCatchUp(slot: slot, at: now, effects: &effects)
    }

    /// An alert reached a contact after "I'm OK now" went (it was already on the wire when the
    /// person cancelled): that contact gets the follow-up too.
    mutating func allClearCatchUp(slot: Int, at now: Moment, effects: inout [Effect]) {
        guard state.panic.aftercare.allClearSent,
              !state.panic.aftercare.allClear.contains(where: { $0.slot == slot }),
              let p = state.panic.progress.first(where: { $0.slot == slot }),
              let request = allClearRequest(for: p) else { return }
        state.panic.aftercare.allClear.append(AlertProgress(slot: slot, name: p.name, number: p.number, delivery: .queued))
        state.panic.aftercare.allClear.sort { $0.slot < $1.slot }
        effects.append(.sendAlerts([request]))
    }

    mutating func followUpUpdate(slot: Int, purpose: AlertPurpose, delivery: AlertDelivery, at now: Moment, effects: inout [Effect]) {
        switch purpose {
        case .allClear:
            guard let i = state.panic.aftercare.allClear.firstIndex(where: { $0.slot == slot }) else { return }
            state.panic.aftercare.allClear[i].delivery = delivery
        case .test:
            monthlyTestUpdate(delivery, at: now, effects: &effects)
        case .panic, .checkIn:
            alertUpdate(slot: slot, delivery: delivery, at: now, effects: &effects)
        }
    }

    /// Night, by the trusted wall clock and the screen's night hours.
    func isNight(_ now: Moment) -> Bool {
        guard state.reminders.clockTrusted else { return false }
        var cache = state.display.localClock
        return settings.screen.isNight(minute: cache.secondOfDay(now.wall, in: settings.timeZone) / 60)
    }
}
