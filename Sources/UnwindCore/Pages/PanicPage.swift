/// One alert the core asks the edge to send.
public struct AlertRequest: Equatable, Sendable {
    /// 0-based slot: `alert01.txt` is slot 0.
    public var slot: Int
    /// The contact and the text to send (for a follow-up, the slot's contact with its text).
    public var alert: AlertSlot
    /// `.panic` and `.checkIn` are alerts (their news comes as `alertDelivery`); the others are
    /// follow-ups (`followUpDelivery`).
    public var purpose: AlertPurpose
    public init(slot: Int, alert: AlertSlot, purpose: AlertPurpose = .panic) {
        self.slot = slot
        self.alert = alert
        self.purpose = purpose
    }
}

/// Where one alert stands, as the person is shown it (the modem's view, translated by the loop).
public enum AlertDelivery: Equatable, Sendable {
    case queued
    case sending
    /// The network accepted it (`+CMGS`). Without a status report this is as far as anyone
    /// can know: the screen says "SENT", never "delivered".
    case sent
    /// A status report said the recipient's phone has it (every part of a long message).
    case delivered
    /// An attempt failed; retries go on by themselves.
    case retrying(String)
    /// Will not be retried (an unassigned number): the person must know.
    case failed(String)
    /// Cannot go out until someone fixes the device (no service centre on the SIM and none
    /// configured); still retried, but the person is told to call instead of waiting.
    case blocked(String)
    case cancelled

    /// The word on screen.
    public var word: String {
        switch self {
        case .queued: "queued"
        case .sending: "sending"
        case .sent: "SENT"
        case .delivered: "DELIVERED"
        case .retrying: "retrying"
        case .failed: "FAILED"
        case .blocked: "CANNOT"
        case .cancelled: "cancelled"
        }
    }

    /// Nothing more will be sent for it (a status report may still turn `.sent` into
    /// `.delivered` or `.failed`).
    public var isFinished: Bool {
        switch self {
        case .sent, .delivered, .failed, .cancelled: true
        default: false
        }
    }
}

/// One line of the alert status screen.
public struct AlertProgress: Equatable, Sendable {
    public var slot: Int
    public var name: String
    /// Where the alert goes: a name the screen cannot draw is shown by the number's last digits.
    public var number: PhoneNumber
    public var delivery: AlertDelivery
    /// The contact answered (an SMS from their number): they know, and are not rung.
    public var acknowledged: Bool
    /// Some part of the alert may be on their phone although it is not (yet) SENT: a part the
    /// network accepted of a longer message, or a submit whose answer never came (in doubt).
    /// Such a contact may be worried, so "I'm OK now" goes to them too.
    public var mayHaveReached: Bool
    /// The contact picked up one of the ladder's calls (then `acknowledged` too).
    public var answeredCall = false

    public init(slot: Int, name: String, number: PhoneNumber, delivery: AlertDelivery, acknowledged: Bool = false,
                mayHaveReached: Bool = false) {
        self.slot = slot
        self.name = name
        self.number = number
        self.delivery = delivery
        self.acknowledged = acknowledged
        self.mayHaveReached = mayHaveReached
    }

    /// Anything of the alert can be on this contact's phone: it was sent (delivered), or some of
    /// it may have gone. "I'm OK now" goes to exactly these.
    public var canHaveIt: Bool { delivery == .sent || delivery == .delivered || mayHaveReached }
}

/// The panic alert page (spec 5.x): five slots, the counselling line, PANIC's hold-to-arm and
/// the status of what was sent.
public struct PanicState: Equatable, Sendable {
    public static let slotCount = 5
    public internal(set) var slots: [AlertSlotState]
    /// 0…4 a slot, 5 the counselling line.
    public internal(set) var selection = 0
    public internal(set) var counselling: CounsellingLine
    /// The counselling service's website and its QR code (spec 5.3); nil when none fits.
    public internal(set) var website: String?
    public internal(set) var websiteCode: QRCodeImage?
    /// A call to the counselling line is up (or being dialled).
    public internal(set) var callActive = false
    /// PANIC went down at this instant and is still held.
    public internal(set) var armingSince: Instant?
    /// How long PANIC must be held (from the settings; the arming screen draws it).
    public internal(set) var holdNanoseconds: Int64 = 1_500_000_000
    /// Armed with a cancel window: the alerts go out at this instant unless a button cancels.
    public internal(set) var sendingAt: Instant?
    /// The alerts of the last send, in slot order, until acknowledged.
    public internal(set) var progress: [AlertProgress] = []
    /// When the alerts in `progress` were asked for (the newest of them, after a restart).
    var askedAt: WallTime?
    /// A short explanation on the page ("This slot is empty", "Released: nothing sent").
    public internal(set) var notice: PanicNotice?
    public internal(set) var noticeUntil: Instant?
    var allSentSignalled = false

    /// What came after the alerts (HelpIsComing.swift): why they went, when, the replies not yet
    /// dismissed, the calls to contacts nobody heard from, "I'm OK now".
    public internal(set) var aftercare = Aftercare()
    /// Whether a PANIC could go out now (nil: not heard yet), and how the person was told.
    public internal(set) var readiness = ReadinessWatch()

    public init(slots: [AlertSlotState] = Array(repeating: .empty, count: PanicState.slotCount),
                counselling: CounsellingLine = .sfuCounselling) {
        self.slots = slots
        self.counselling = counselling
    }

    public var isCounsellingSelected: Bool { selection == Self.slotCount }

    /// Whether a PANIC would reach anyone: a slot is ready.
    public var hasAContact: Bool { slots.contains { if case .ready = $0 { true } else { false } } }

    /// The slots PANIC sends: every ready one.
    public var readyRequests: [AlertRequest] {
        slots.enumerated().compactMap { i, s in
            if case .ready(let a) = s { AlertRequest(slot: i, alert: a) } else { nil }
        }
    }

    public func showsNotice(at now: Instant) -> Bool { noticeUntil.map { now < $0 } ?? false }

    public func progress(ofSlot slot: Int) -> AlertDelivery? { progress.first { $0.slot == slot }?.delivery }

    /// The contacts "I'm OK now" goes to: every one who may have any part of the alert.
    public var allClearRecipients: [AlertProgress] { progress.filter(\.canHaveIt) }
}

public enum PanicNotice: Equatable, Sendable {
    case emptySlot, needsAttention, releasedEarly, noContacts, cancelled
    /// PANIC again while alerts are still on their way: nothing is sent twice.
    case alreadySending
    /// PANIC again while alerts are on their way, some of which had failed: those are sent again.
    case resendingFailed
    /// "I'm OK now" is going to everyone the alert reached.
    case allClearSending
    /// "I'm OK now", but no part of any alert can have reached anyone: the unsent ones were cancelled.
    case allClearNobody
    /// RIGHT on the status screen: the calls to contacts stopped.
    case callsStopped
    public var lines: (String, String) {
        switch self {
        case .alreadySending: ("Alerts are already", "on their way.")
        case .resendingFailed: ("Sending again the", "ones that failed.")
        case .emptySlot: ("This slot is empty.", "Set it up with unwind.")
        case .needsAttention: ("This slot needs", "attention: see unwind.")
        case .releasedEarly: ("Released early:", "nothing was sent.")
        case .noContacts: ("No alert contacts", "are set up yet.")
        case .cancelled: ("Cancelled:", "nothing was sent.")
        case .allClearSending: ("Sending \"I'm OK now\"", "to your contacts.")
        case .allClearNobody: ("Nobody had the alert:", "nothing more is sent.")
        case .callsStopped: ("Calls to your", "contacts stopped.")
        }
    }
}

/// Panic settings: how long PANIC is held to arm, and an optional window to cancel.
public struct PanicSettings: Equatable, Sendable {
    public var hold: Duration
    public var cancelWindow: Duration
    /// Nobody answered this long after the alerts went: ring the contacts (zero: never).
    public var escalateAfter: Duration
    /// How long each contact's phone rings before the device hangs up and rings the next.
    public var ringFor: Duration
    /// How many times the ladder goes through the contacts (0: no calls).
    public var callRounds: Int
    /// "I'm OK now": the follow-up sent to every contact an alert reached (a validated message).
    public var okMessage: String
    /// Send a `[TEST]` SMS to slot 1 once a month and report the outcome.
    public var monthlyTest: Bool
    /// How often the modem's start-up checks run again (no SMS is sent).
    public var selfTestEvery: Duration

    public static let defaultOKMessage = "I'm OK now. Thank you."
    public static let testMessage = "[TEST] This is a monthly test of Unwind's alerts. No action is needed."

    public init(hold: Duration = .milliseconds(1500), cancelWindow: Duration = .zero,
                escalateAfter: Duration = .seconds(180), ringFor: Duration = .seconds(25), callRounds: Int = 1,
                okMessage: String = PanicSettings.defaultOKMessage, monthlyTest: Bool = false,
                selfTestEvery: Duration = .seconds(86_400)) {
        self.hold = hold
        self.cancelWindow = cancelWindow
        self.escalateAfter = escalateAfter
        self.ringFor = ringFor
        self.callRounds = callRounds
        self.okMessage = okMessage
        self.monthlyTest = monthlyTest
        self.selfTestEvery = selfTestEvery
    }
}

extension DeviceCore {
    static let noticeLength: Duration = .milliseconds(2500)

    // MARK: PANIC, from any page

    /// PANIC is handled before anything else: it works on every page, over every overlay,
    /// during a session and on a sleeping display.
    mutating func handlePanicButton(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down:
            guard state.panic.armingSince == nil, state.panic.sendingAt == nil else { return }
            state.panic.armingSince = now.instant
            rampWhileHeld(from: now.instant, effects: &effects)
        case .up(_, let heldFor):
            guard state.panic.armingSince != nil else { return }
            // Held long enough by the edges' own timestamps: a loop that ran late (a busy
            // machine) must not turn a real PANIC into "released early".
            if heldFor >= settings.panic.hold {
                completeArming(at: now, effects: &effects)
                return
            }
            // Released before the hold completed: nothing is sent, and the person is told so.
            state.panic.armingSince = nil
            effects.append(.cancelMotor)
            resumeBreathingHaptics(at: now, effects: &effects)
            showNotice(.releasedEarly, at: now.instant)
        default: break
        }
    }

    /// Called every tick: arming completes while PANIC is still held; a cancel window runs out.
    mutating func tickPanic(at now: Moment, effects: inout [Effect]) {
        if let since = state.panic.armingSince, now.instant - since >= settings.panic.hold {
            completeArming(at: now, effects: &effects)
        }
        tickCancelWindow(at: now, effects: &effects)
    }

    /// The hold is complete: every ready slot is sent (after the cancel window, if any).
    private mutating func completeArming(at now: Moment, effects: inout [Effect]) {
        state.panic.armingSince = nil
        effects.append(.cancelMotor)
        resumeBreathingHaptics(at: now, effects: &effects)
        sendEveryAlert(at: now, effects: &effects)
    }

    /// PANIC's path once the person has asked for it (the hold, or the self-check's confirmed
    /// offer): every ready slot is sent, after the cancel window if there is one; nothing twice
    /// while alerts are on their way; no contact set up, and the person is told so.
    mutating func sendEveryAlert(at now: Moment, effects: inout [Effect]) {
        let requests = state.panic.readyRequests
        guard !requests.isEmpty else {
            showNotice(.noContacts, at: now.instant)
            pulses(at: now.instant, count: 2, on: .milliseconds(400), off: .milliseconds(200), effects: &effects)
            return
        }
        // Alerts asked for long ago and not out yet (no network for hours, the device off with
        // them in its outbox) are no answer to a PANIC now: what is left of them is cancelled
        // (they would go saying they are late) and this one goes (`LateAlerts`).
        let unsent = state.panic.progress.filter { !$0.delivery.isFinished }.map(\.slot)
        if !unsent.isEmpty, let asked = state.panic.askedAt,
           LateAlerts.verdict(created: asked, now: now.wall, purpose: .panic) != .asWritten {
            effects.append(.cancelAlerts(unsent))
            effects.append(.log("PANIC while \(unsent.count) alert(s) asked for at \(asked.secondsSinceEpoch) are still not out: those are cancelled, new ones go"))
            send(requests, at: now, effects: &effects)
            return
        }
        // A second PANIC while the first batch is on its way queues nothing twice (every contact
        // got everything twice): it says so, and sends again only what has failed.
        if state.panic.progress.contains(where: { !$0.delivery.isFinished }) {
            let failed = Set(state.panic.progress.filter { if case .failed = $0.delivery { true } else { false } }.map(\.slot))
            let again = requests.filter { failed.contains($0.slot) }
            state.overlay = .alertStatus
            showNotice(again.isEmpty ? .alreadySending : .resendingFailed, at: now.instant)
            // Four short ticks: "heard you, already on it" — unlike the long "sending" buzz, the
            // two long "failed" pulses and the three taps of "all sent".
            pulses(at: now.instant, count: 4, on: .milliseconds(40), off: .milliseconds(90), effects: &effects)
            if !again.isEmpty {
                for k in state.panic.progress.indices where failed.contains(state.panic.progress[k].slot) {
                    state.panic.progress[k].delivery = .queued
                }
                state.panic.allSentSignalled = false
                effects.append(.sendAlerts(again))
            }
            return
        }
        if settings.panic.cancelWindow > .zero {
            state.panic.sendingAt = now.instant + settings.panic.cancelWindow
            state.overlay = .alertStatus
            state.panic.progress = requests.map { AlertProgress(slot: $0.slot, name: $0.alert.name, number: $0.alert.number, delivery: .queued) }
        } else {
            send(requests, at: now, effects: &effects)
        }
    }

    /// The optional cancel window ran out: the alerts go.
    private mutating func tickCancelWindow(at now: Moment, effects: inout [Effect]) {
        if let at = state.panic.sendingAt, now.instant >= at {
            state.panic.sendingAt = nil
            send(state.panic.readyRequests, at: now, effects: &effects)
        }
    }

    /// Five pulses that come faster and longer while PANIC is held: the hold is felt as it
    /// builds, and stops the moment the button is let go.
    private func rampWhileHeld(from t: Instant, effects: inout [Effect]) {
        let hold = settings.panic.hold.nanoseconds
        let starts = [0, 30, 55, 75, 90].map { Int64($0) * hold / 100 }
        for (k, s) in starts.enumerated() {
            let at = t + .nanoseconds(s)
            effects.append(.motor(MotorEdge(at: at, on: true)))
            effects.append(.motor(MotorEdge(at: at + .milliseconds(40 + 20 * Int64(k)), on: false)))
        }
    }

    /// `requests` are `.panic` ones; a missed check-in sends them as `.checkIn`.
    mutating func send(_ requests: [AlertRequest], purpose: AlertPurpose = .panic, at now: Moment, effects: inout [Effect]) {
        guard !requests.isEmpty else { return }
        var requests = requests
        for k in requests.indices { requests[k].purpose = purpose }
        state.panic.progress = requests.map { AlertProgress(slot: $0.slot, name: $0.alert.name, number: $0.alert.number, delivery: .queued) }
        state.panic.askedAt = now.wall
        state.panic.allSentSignalled = false
        state.overlay = .alertStatus
        effects.append(.sendAlerts(requests))
        beginAftercare(purpose, at: now, effects: &effects)
        // The person asked for help themselves: today's check-in is answered by that (the prompt
        // would hide whether the alerts went out, and its next press would mean the check-in).
        if purpose == .panic { settleCheckInByPanic(at: now, effects: &effects) }
        // "Sending": one long, steady buzz, unlike anything else the device does.
        pulses(at: now.instant, count: 1, on: .milliseconds(600), off: .zero, effects: &effects)
    }

    mutating func showNotice(_ n: PanicNotice, at now: Instant) {
        state.panic.notice = n
        state.panic.noticeUntil = now + Self.noticeLength
    }

    /// The ramp or a feedback pattern cancelled the motor: a running session gets its corners back.
    private mutating func resumeBreathingHaptics(at now: Moment, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        state.breathing.nextCorner = clock.firstCorner(atOrAfter: now.instant)
    }

    // MARK: The panic page

    mutating func handlePanicPage(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        let count = PanicState.slotCount + 1
        switch gesture {
        case .down(.left): state.panic.selection = (state.panic.selection + count - 1) % count
        case .down(.right): state.panic.selection = (state.panic.selection + 1) % count
        case .short(.select):
            if state.panic.isCounsellingSelected { return callOrHangUpCounselling(at: now, effects: &effects) }
            switch state.panic.slots[state.panic.selection] {
            case .ready(let a): send([AlertRequest(slot: state.panic.selection, alert: a)], at: now, effects: &effects)
            case .empty: showNotice(.emptySlot, at: now.instant)
            case .needsAttention: showNotice(.needsAttention, at: now.instant)
            }
        case .long(.select):
            if state.panic.isCounsellingSelected {
                state.overlay = .counsellingCode
            } else if !state.panic.progress.isEmpty {
                // Back to where the alerts stand (and "I'm OK now") after the screen was closed.
                swallowPress(.select)
                state.overlay = .alertStatus
            }
        default: break
        }
    }

    /// SELECT on the counselling line (the alert page's, the self-check's safety screen): call
    /// it, or hang up the call that is up.
    mutating func callOrHangUpCounselling(at now: Moment, effects: inout [Effect]) {
        if state.panic.callActive {
            state.panic.callActive = false
            effects.append(.hangUp)
        } else {
            // The person calls for help themselves: the ladder's call (if ringing) ends
            // first, and the ladder waits for the end of theirs (it may go unanswered).
            pauseEscalationForCall(at: now, effects: &effects)
            state.panic.callActive = true
            effects.append(.dial(state.panic.counselling.dialNumber))
        }
    }

    /// The status screen after a send. Inside a cancel window any button cancels. A reply on
    /// screen is dismissed by any button. Otherwise SELECT acts on release: a short press starts
    /// a breathing session (the device keeps helping while help is on its way), a long one asks
    /// "I'm OK now?"; RIGHT stops the calls to contacts; any other button closes the screen.
    mutating func handleAlertStatus(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        if gesture == .down(.select) { state.selectPressed = true }
        if state.panic.aftercare.confirmingAllClear {
            guard case .down(let b) = gesture, b != .panic else { return }
            swallowPress(b)
            if b == .select { sendAllClear(at: now, effects: &effects) } else { state.panic.aftercare.confirmingAllClear = false }
            return
        }
        if state.panic.sendingAt != nil {
            guard case .down(let b) = gesture, b != .panic else { return }
            swallowPress(b)
            // Inside the cancel window any button cancels.
            state.panic.sendingAt = nil
            state.panic.progress = []
            state.overlay = .none
            showNotice(.cancelled, at: now.instant)
            return
        }
        if !state.panic.aftercare.replies.isEmpty {
            guard case .down(let b) = gesture, b != .panic else { return }
            swallowPress(b)
            dismissReply(at: now.instant, effects: &effects)
            return
        }
        switch gesture {
        case .short(.select):
            state.overlay = .none
            if !state.breathing.isRunning {
                leave(state.page, at: now, effects: &effects)
                state.page = .breathing
                startSession(at: now, effects: &effects)
            }
        case .long(.select):
            swallowPress(.select)
            if !state.panic.aftercare.allClearSent && state.panic.aftercare.purpose != nil {
                state.panic.aftercare.confirmingAllClear = true
            }
        case .down(.right) where state.panic.aftercare.escalation.isActive:
            swallowPress(.right)
            endEscalation(.stopped, at: now, effects: &effects)
            showNotice(.callsStopped, at: now.instant)
        case .down(let b) where b != .panic && b != .select:
            swallowPress(b)
            state.overlay = .none
        default: break
        }
    }

    // MARK: What the edge reports

    /// Alerts from before a restart that the outbox is sending again: shown and felt as when
    /// PANIC sent them.
    /// `queuedAt`: when the newest of them was queued. Alerts queued after the episode that
    /// `escalation.txt` kept (the device died between the outbox's write and that file's) are a
    /// new episode: their ladder starts from its wait.
    /// Called once at start, also when the outbox holds nothing: then alerts that
    /// `escalation.txt` says were asked for and the outbox does not hold are asked for again.
    mutating func alertsResumed(_ progress: [AlertProgress], purpose: AlertPurpose = .panic, queuedAt: WallTime? = nil,
                                at now: Moment, effects: inout [Effect]) {
        defer { resendAlertsLostInRestart(at: now, effects: &effects) }
        guard !progress.isEmpty else { return }
        let a = state.panic.aftercare
        let stale = a.purpose != nil && queuedAt.map { q in a.startedWall.map { q.secondsSinceEpoch > $0.secondsSinceEpoch + 1 } ?? false } ?? false
        if stale {
            effects.append(.log("alerts from the outbox are newer than \(EscalationFile.name): what follows them starts again from its wait"))
            state.panic.progress = []
            state.panic.aftercare = Aftercare()
        }
        for p in progress {
            // The outbox knows best where a message it still holds stands; what the contact did
            // (replied, picked up) is the episode's, kept from `escalation.txt`.
            if let i = state.panic.progress.firstIndex(where: { $0.slot == p.slot }) {
                state.panic.progress[i].delivery = p.delivery
                state.panic.progress[i].mayHaveReached = state.panic.progress[i].mayHaveReached || p.mayHaveReached
            } else {
                state.panic.progress.append(p)
            }
        }
        state.panic.progress.sort { $0.slot < $1.slot }
        if let q = queuedAt, state.panic.askedAt.map({ q > $0 }) ?? true { state.panic.askedAt = q }
        state.panic.allSentSignalled = false
        state.overlay = .alertStatus
        if state.panic.aftercare.purpose == nil { beginAftercare(purpose, at: now, effects: &effects) }
        pulses(at: now.instant, count: 1, on: .milliseconds(600), off: .zero, effects: &effects)
    }

    /// Alerts `escalation.txt` says were asked for (queued, sending, retrying) that the outbox
    /// does not hold after a restart: on the device the outbox and that file are written on two
    /// queues, so a kill 150 ms after PANIC armed can leave the file on the card and the outbox
    /// not — every contact would show FAILED and nobody would be texted. They are asked for again, to the number the slot still holds (never after "I'm OK now").
    /// The price: an alert that went and left the outbox before the file said so goes once more.
    private mutating func resendAlertsLostInRestart(at now: Moment, effects: inout [Effect]) {
        let a = state.panic.aftercare
        guard let purpose = a.purpose, !a.allClearSent else { return }
        var requests: [AlertRequest] = []
        for (i, p) in state.panic.progress.enumerated() where p.delivery == .failed(EscalationFile.lostInRestart) {
            guard state.panic.slots.indices.contains(p.slot), case .ready(let slot) = state.panic.slots[p.slot],
                  slot.number == p.number else { continue }
            let alert = purpose == .checkIn ? try? AlertSlot(name: slot.name, number: slot.number, message: settings.checkIn.message) : slot
            guard let alert else { continue }
            requests.append(AlertRequest(slot: p.slot, alert: alert, purpose: purpose))
            state.panic.progress[i].delivery = .queued
        }
        guard !requests.isEmpty else { return }
        effects.append(.log("\(requests.count) alert(s) asked for before a restart were not in the outbox: sent again (slots \(requests.map { String($0.slot + 1) }.joined(separator: ", ")))"))
        effects.append(.sendAlerts(requests))
        state.panic.allSentSignalled = false
        state.overlay = .alertStatus
    }

    /// The modem's news about one alert; the motor tells the outcome to someone not looking.
    mutating func alertUpdate(slot: Int, delivery: AlertDelivery, at now: Moment, effects: inout [Effect]) {
        guard let i = state.panic.progress.firstIndex(where: { $0.slot == slot }) else { return }
        let was = state.panic.progress[i].delivery
        state.panic.progress[i].delivery = delivery
        if was != delivery, { if case .failed = delivery { true } else if case .blocked = delivery { true } else { false } }() {
            pulses(at: now.instant, count: 2, on: .milliseconds(400), off: .milliseconds(200), effects: &effects)
        }
        if delivery == .delivered, state.panic.aftercare.deliveredTold & bit(slot: slot) == 0 {
            state.panic.aftercare.deliveredTold |= bit(slot: slot)
            signalDelivered(at: now.instant, effects: &effects)
        }
        if !state.panic.allSentSignalled,
           state.panic.progress.allSatisfy({ $0.delivery == .sent || $0.delivery == .delivered }) {
            state.panic.allSentSignalled = true
            // "All sent": three quick taps (unless "delivered" is already being felt).
            if delivery != .delivered {
                pulses(at: now.instant, count: 3, on: .milliseconds(80), off: .milliseconds(100), effects: &effects)
            }
        }
        if delivery == .sent || delivery == .delivered { allClearCatchUp(slot: slot, at: now, effects: &effects) }
    }

    private func bit(slot: Int) -> UInt8 { slot >= 0 && slot < 8 ? 1 << UInt8(slot) : 0 }

    /// The slot files changed (at start, or the maintainer edited them).
    mutating func alertSlotsChanged(_ slots: [AlertSlotState]) {
        var s = slots
        while s.count < PanicState.slotCount { s.append(.empty) }
        state.panic.slots = Array(s.prefix(PanicState.slotCount))
    }

    /// The counselling service's name and number, from configuration.
    mutating func setCounselling(_ line: CounsellingLine, website: String? = nil, code: QRCodeImage? = nil) {
        state.panic.counselling = line
        state.panic.website = website
        state.panic.websiteCode = code
    }
}
