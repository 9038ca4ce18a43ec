/// PANIC from any page and the panic page (spec 5.x): arming, sending, the status screen, and the
/// edge's news about each alert. The page's state is `PanicState`; each alert's is `AlertProgress`.
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
