/// Asking the device by SMS: a contact in one of the alert slots texts STATUS and is
/// told whether a PANIC would go out now; the maintainer, when one is configured, is texted when
/// the device has been unable to do its job for a while, and again when it recovers.
///
/// Everything here is rules on state: a request answered within the limits, the maintainer
/// texted when a problem lasts and when it ends, the modem's word on each text. Beside it:
/// recognising a request (`StatusTextSettings`), who sent it (SenderMatching.swift), the limits
/// (`StatusTexts`), the words of each text (`StatusAnswer`) and the file that keeps what went
/// (`StatusTextsFile`). The modem sends what is decided here, below every alert (`Delivery`).
/// A STATUS request is never shown to the person: it is not a reply to them.

extension DeviceCore {
    /// A STATUS request (the text is one: `StatusTextSettings.isStatusRequest`). It is marked
    /// seen at once — never on the screen, never shown again after a restart — and answered
    /// within the limits, to the number the slot stores.
    mutating func statusRequested(_ reply: IncomingReply, at now: Moment, effects: inout [Effect]) {
        effects.append(.markRepliesSeen([reply.id]))
        // A sender that is a name is nobody's number, whatever it spells.
        let slots = reply.fromName ? []
            : AlertSlotState.slots(sending: reply.from, in: state.panic.slots, counselling: state.panic.counselling.dialNumber)
        var numbers: [PhoneNumber] = []
        for s in slots { if case .ready(let a) = state.panic.slots[s], !numbers.contains(a.number) { numbers.append(a.number) } }
        func refuse(_ outcome: StatusRequestNote.Outcome, slot: Int?) {
            state.statusTexts.note(StatusRequestNote(at: now.wall, slot: slot, outcome: outcome))
            let who = slot.map { "alert slot \($0 + 1)" } ?? "a number in no alert slot"
            effects.append(.log("STATUS by SMS from \(who): \(outcome.words)"))
        }
        guard let first = slots.first, case .ready(let contact) = state.panic.slots[first] else {
            return refuse(.notAContact, slot: nil)
        }
        // One person in two slots — in any two forms of one number — gets one answer; a number two
        // different contacts could have sent from is nobody's to answer.
        guard numbers.allSatisfy({ $0.isSameNumber(asSender: numbers[0].text) }) else { return refuse(.ambiguous(slots), slot: nil) }
        state.statusTexts.settleClock(at: now.wall)
        if let why = state.statusTexts.refusal(slot: first, at: now.wall) { return refuse(why, slot: first) }
        // One SMS, always: signed with `device.name` when the answer then fits one (160 GSM-7
        // characters, or 70 when the name needs UCS-2 — what else is wrong left out first), else
        // with "Unwind".
        func answer(_ name: String, limit: Int, cut: Bool) throws(AlertFieldError) -> AlertSlot? {
            let words = StatusAnswer.text(name: name, readiness: state.panic.readiness.current,
                                          notReadySince: state.panic.readiness.notReadySinceWall, signal: state.statusTexts.signal,
                                          lastTest: state.panic.readiness.lastTest, problems: currentProblems,
                                          now: now.wall, zone: settings.timeZone, limit: limit, cut: cut)
            guard words.count <= AlertSlot.messageLimit else { return nil }
            let m = try AlertSlot(name: contact.name, number: contact.number, message: words)
            return m.encoding.isSinglePart ? m : nil
        }
        let name = settings.statusTexts.deviceName
        let message: AlertSlot
        do {
            guard let m = try answer(name, limit: AlertSlot.messageLimit, cut: false)
                    ?? answer(name, limit: SMSEncoding.singlePartUnits, cut: false)
                    ?? answer(StatusTextSettings.defaultName, limit: AlertSlot.messageLimit, cut: true) else {
                return refuse(.unsendable("no answer fits one SMS"), slot: first)
            }
            message = m
        } catch {
            return refuse(.unsendable(String(describing: error)), slot: first)
        }
        let token = state.statusTexts.ask(StatusTextRecord(at: now.wall, kind: .answer(slot: first)))
        state.statusTexts.note(StatusRequestNote(at: now.wall, slot: first, outcome: .sending, token: token))
        effects.append(.sendText(DeviceText(kind: .statusAnswer(slot: first), message: message, token: token)))
        effects.append(.log("STATUS by SMS from alert slot \(first + 1) (\(contact.name)): answering"))
    }

    /// The problems there now, in `DeviceProblem`'s order.
    var currentProblems: [DeviceProblem] {
        DeviceProblem.allCases.enumerated().compactMap { i, p in state.statusTexts.since[i] == nil ? nil : p }
    }

    /// The edge's news: the display, the motor or the SD card failing, or working again.
    mutating func deviceProblem(_ p: DeviceProblem, failing: Bool) {
        if failing { state.statusTexts.reported |= p.bit } else { state.statusTexts.reported &= ~p.bit }
    }

    /// Which problems are there now: the edge's, and those the core sees itself.
    private func presentProblems() -> UInt8 {
        var bits = state.statusTexts.reported
        if !state.panic.hasAContact { bits |= DeviceProblem.noContacts.bit }
        if !state.reminders.clockTrusted { bits |= DeviceProblem.clock.bit }
        if case .failed? = state.panic.readiness.lastTest?.outcome { bits |= DeviceProblem.monthlyTest.bit }
        return bits
    }

    /// Once a wall-clock second: when each problem began and ended; the maintainer texted when
    /// one has lasted `maintainerAfter` (at most once a day each) and when a problem they were
    /// told of has stayed away `recoveryPatience`. Allocation-free unless a text goes.
    mutating func tickMaintainer(at now: Moment, effects: inout [Effect]) {
        state.statusTexts.settleClock(at: now.wall)
        let present = presentProblems()
        for (i, p) in DeviceProblem.allCases.enumerated() {
            if present & p.bit != 0 {
                state.statusTexts.clearSince[i] = nil
                if state.statusTexts.since[i] == nil {
                    state.statusTexts.since[i] = now.wall
                    state.statusTexts.sinceInstant[i] = now.instant
                }
                guard state.statusTexts.told & p.bit == 0, let began = state.statusTexts.sinceInstant[i],
                      now.instant - began >= settings.statusTexts.maintainerAfter,
                      state.statusTexts.retryAt[i].map({ now.instant >= $0 }) ?? true,
                      !state.statusTexts.lastTold(p, at: now.wall) else { continue }
                if textMaintainer(p, recovered: false, at: now, effects: &effects) { state.statusTexts.told |= p.bit }
            } else {
                state.statusTexts.since[i] = nil
                state.statusTexts.sinceInstant[i] = nil
                guard state.statusTexts.told & p.bit != 0 else { continue }
                guard let clear = state.statusTexts.clearSince[i] else {
                    state.statusTexts.clearSince[i] = now.instant
                    continue
                }
                guard now.instant - clear >= StatusLimits.recoveryPatience else { continue }
                state.statusTexts.told &= ~p.bit
                state.statusTexts.clearSince[i] = nil
                _ = textMaintainer(p, recovered: true, at: now, effects: &effects)
            }
        }
    }

    /// Whether a text to the maintainer went (none is configured: nothing, and nothing counts).
    private mutating func textMaintainer(_ p: DeviceProblem, recovered: Bool, at now: Moment, effects: inout [Effect]) -> Bool {
        guard let number = settings.statusTexts.maintainer else { return false }
        let i = p.index
        // One SMS: signed "Unwind" when `device.name` would make it two.
        var words = ""
        var message: AlertSlot?
        for name in [settings.statusTexts.deviceName, StatusTextSettings.defaultName] where message?.encoding.isSinglePart != true {
            words = StatusAnswer.maintainerText(name: name, problem: p, since: state.statusTexts.since[i],
                                                recovered: recovered, now: now.wall, zone: settings.timeZone)
            message = try? AlertSlot(name: "Maintainer", number: number, message: words)
        }
        guard let message else {
            effects.append(.log("maintainer: could not make a text of \(String(reflecting: words))"))
            return false
        }
        let token = state.statusTexts.ask(StatusTextRecord(at: now.wall, kind: recovered ? .recovered(p) : .problem(p)))
        effects.append(.sendText(DeviceText(kind: .maintainer, message: message, token: token)))
        effects.append(.log("maintainer texted: \(words)"))
        return true
    }

    /// The modem's word on a text the device sent on its own. Only what the network took (or
    /// may have: a copy may have cost) is kept in `statusTexts.txt` and shown as sent; a text
    /// that never went is shown so, counts against no limit, and — the maintainer's — is asked
    /// for again after `StatusLimits.maintainerRetry` (its end: once the problem has stayed
    /// away `recoveryPatience` again).
    mutating func deviceTextOutcome(token: Int, _ outcome: DeviceTextOutcome, at now: Moment, effects: inout [Effect]) {
        guard let k = state.statusTexts.pending.firstIndex(where: { $0.token == token }) else { return }
        let record = state.statusTexts.pending.remove(at: k).record
        let note: StatusRequestNote.Outcome
        switch outcome {
        case .sent, .unconfirmed:
            state.statusTexts.record(record)
            effects.append(.save(.statusTexts, StatusTextsFile.format(state.statusTexts.sent)))
            note = outcome == .sent ? .answered : .unconfirmed
        case .dropped(let why):
            note = .notSent(why)
            switch record.kind {
            case .answer: break
            case .problem(let p):
                let i = p.index
                state.statusTexts.told &= ~p.bit
                state.statusTexts.retryAt[i] = now.instant + StatusLimits.maintainerRetry
            case .recovered(let p):
                let i = p.index
                state.statusTexts.told |= p.bit
                state.statusTexts.clearSince[i] = nil
            }
            effects.append(.log("a text the device sent on its own was not sent (\(why)); not counted as sent"))
        }
        if let n = state.statusTexts.requests.firstIndex(where: { $0.token == token }) {
            state.statusTexts.requests[n].outcome = note
            state.statusTexts.requests[n].token = nil
        }
    }

    /// At start: the texts `statusTexts.txt` remembers; a problem whose last text said it began
    /// is still "told" (its end is texted when it is seen to be over).
    mutating func restoreStatusTexts(_ records: [StatusTextRecord]) {
        state.statusTexts.sent = Array(records.suffix(StatusTextsFile.kept))
        for r in records {
            switch r.kind {
            case .problem(let p): state.statusTexts.told |= p.bit
            case .recovered(let p): state.statusTexts.told &= ~p.bit
            case .answer: break
            }
        }
    }
}
