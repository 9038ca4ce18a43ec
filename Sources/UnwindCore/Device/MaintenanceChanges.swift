/// What the maintainer's commands change in a running device (through the daemon's control
/// socket): the same state the buttons change, so the person and the maintainer never write
/// over each other — the daemon is the one writer, and each change is saved from its result.
extension DeviceCore {
    mutating func apply(_ change: MaintenanceChange, at now: Moment, effects: inout [Effect]) -> EventRefusal? {
        switch change {
        case .setReminder(let schedule):
            setReminder(schedule, at: now, effects: &effects)
        case .addMantra(let text):
            do throws(MantrasFile.Problem) { try addMantraFromMaintainer(text, at: now, effects: &effects) } catch {
                return .mantra(error)
            }
        case .deleteMantra(let index, let expected):
            if !deleteMantra(at: index, expected: expected, at: now, effects: &effects) { return .listChanged }
        case .setMantras(let items, let current):
            setMantras(items, current: current, at: now, effects: &effects)
        case .replaceStatistics(let totals, let history):
            replaceStatistics(totals: totals, history: history, at: now, effects: &effects)
        case .setAlertSlot(let slot, let alert):
            guard (1...PanicState.slotCount).contains(slot) else { return .noSuchSlot(slot) }
            setAlertSlot(slot, alert, effects: &effects)
        case .restore(let totals, let history, let mantras, let reminder, let slots):
            replaceStatistics(totals: totals, history: history, at: now, effects: &effects)
            setMantras(mantras, current: 0, at: now, effects: &effects)
            setReminder(reminder, at: now, effects: &effects)
            // The slot files are already on the card as the archive had them (byte for byte,
            // written with the rest as one change): only the state follows.
            alertSlotsChanged(slots)
        case .motorTest:
            var t = now.instant + .milliseconds(20)
            for _ in 0..<3 {
                effects.append(.motor(MotorEdge(at: t, on: true)))
                effects.append(.motor(MotorEdge(at: t + .milliseconds(300), on: false)))
                t = t + .milliseconds(600)
            }
        case .setCustomPatterns(let presets):
            setCustomPatterns(presets, effects: &effects)
        case .setBreathingChoice(let choice):
            setBreathingChoice(choice, effects: &effects)
        case .restoreCheckIn(let record):
            state.checkIn.last = record
            effects.append(.save(.checkIn, CheckInFile.format(record, grace: state.checkIn.grace)))
        case .restoreAlertTest(let record):
            state.panic.readiness.lastTest = record
            effects.append(.save(.alertTest, AlertTestFile.format(record)))
        case .restoreEscalation(let record):
            restoreEscalation(record, at: now, effects: &effects)
        case .addCopingCard(let card):
            if let why = addCopingCard(card, effects: &effects) { return .copingCard(why) }
        case .deleteCopingCard(let index, let expected):
            if !deleteCopingCard(at: index, expected: expected, effects: &effects) { return .cardsChanged }
        case .setSelfCheckReminder(let schedule):
            setSelfCheckReminder(schedule, at: now, effects: &effects)
        case .restoreSelfCheck(let r):
            restoreSelfCheck(r, at: now, effects: &effects)
        }
        return nil
    }

    /// One alert slot set or emptied, and its file saved (an empty file is an empty slot).
    mutating func setAlertSlot(_ slot: Int, _ alert: AlertSlot?, effects: inout [Effect]) {
        if let alert {
            state.panic.slots[slot - 1] = .ready(alert)
            effects.append(.save(.alertSlot(slot), AlertSlotFile.format(alert)))
        } else {
            state.panic.slots[slot - 1] = .empty
            effects.append(.save(.alertSlot(slot), ""))
        }
    }

    /// Replaces the whole mantra list and saves it. `current` is the mantra to show (kept where
    /// it can be when nil).
    mutating func setMantras(_ items: [String], current: Int? = nil, at now: Moment, effects: inout [Effect]) {
        replaceMantras(items, current: current, at: now)
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// Adds a mantra at the end (the maintainer's `unwind mantras add`) and saves the list. It
    /// becomes the one shown (spec 4.2), except while the person is being asked "Delete this
    /// mantra?": then the one they are deciding about stays current, so their answer deletes
    /// what they saw, not the new mantra.
    mutating func addMantraFromMaintainer(_ text: String, at now: Moment, effects: inout [Effect]) throws(MantrasFile.Problem) {
        guard state.overlay == .confirmDelete else { return try addMantra(text, at: now, effects: &effects) }
        if let p = MantrasFile.problem(with: text) { throw .invalid(line: state.mantras.count + 1, p) }
        if state.mantras.count >= MantrasFile.maximumCount { throw .tooMany(state.mantras.count + 1) }
        let current = state.mantras.current
        state.mantras.replace(with: state.mantras.items + [text], current: current)
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// Deletes mantra `index` (0-based) if it still reads `expected` (the text the maintainer
    /// saw: a person may have deleted one on the device meanwhile, moving the numbers). The one
    /// shown stays shown; when it is the one deleted, the next takes its place, as on the device.
    /// Returns false, changing nothing, when the list no longer has `expected` at `index`.
    mutating func deleteMantra(at index: Int, expected: String?, at now: Moment, effects: inout [Effect]) -> Bool {
        let items = state.mantras.items
        guard items.indices.contains(index), expected == nil || items[index] == expected else { return false }
        var next = items
        next.remove(at: index)
        var current = state.mantras.current
        // The person was asked about the very mantra deleted here: nothing is left to confirm.
        if index == current, state.overlay == .confirmDelete { state.overlay = .none }
        if index < current { current -= 1 }
        if !next.isEmpty { current %= next.count }
        setMantras(next, current: current, at: now, effects: &effects)
        return true
    }

    /// Replaces the breathing totals and the session history (`unwind stats --reset`, a restore)
    /// and saves both. A session running now goes on and is counted, from its start, when it
    /// ends.
    mutating func replaceStatistics(totals: BreathingTotals, history: [SessionRecord], at now: Moment,
                                           effects: inout [Effect]) {
        state.breathing.totals = totals
        state.breathing.history = Array(history.suffix(SessionHistoryFile.capacity))
        let b = state.breathing
        var saved = b.history
        if case .running(let c) = b.session, (now.instant - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            saved.append(runningRecord(seconds: (now.instant - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now.instant))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(saved)))
    }

    // MARK: Mantras from the maintainer

    /// Adds a mantra (the maintainer's command); it becomes the current one and the list is saved.
    mutating func addMantra(_ text: String, at now: Moment, effects: inout [Effect]) throws(MantrasFile.Problem) {
        try state.mantras.add(text)
        state.mantraShownAt = now.instant
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// The list was replaced on the card (the maintainer's edit): `current` (say, a new
    /// mantra's line) becomes the one shown. Nothing is saved: the file is already the truth.
    mutating func replaceMantras(_ items: [String], current: Int? = nil, at now: Moment) {
        state.mantras.replace(with: items, current: current)
        state.mantraShownAt = now.instant
        if state.mantras.isEmpty, state.overlay == .confirmDelete { state.overlay = .none }
    }
}
