/// What the maintainer's commands change in a running device (through the daemon's control
/// socket): the same state the buttons change, so the person and the maintainer never write
/// over each other — the daemon is the one writer, and each change is saved from its result.
extension DeviceCore {
    /// Replaces the whole mantra list and saves it. `current` is the mantra to show (kept where
    /// it can be when nil).
    public mutating func setMantras(_ items: [String], current: Int? = nil, at now: Moment, effects: inout [Effect]) {
        replaceMantras(items, current: current, at: now)
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// Adds a mantra at the end (the maintainer's `unwind mantras add`) and saves the list. It
    /// becomes the one shown (spec 4.2), except while the person is being asked "Delete this
    /// mantra?": then the one they are deciding about stays current, so their answer deletes
    /// what they saw, not the new mantra.
    public mutating func addMantraFromMaintainer(_ text: String, at now: Moment, effects: inout [Effect]) throws(MantrasFile.Problem) {
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
    public mutating func deleteMantra(at index: Int, expected: String?, at now: Moment, effects: inout [Effect]) -> Bool {
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
    public mutating func replaceStatistics(totals: BreathingTotals, history: [SessionRecord], at now: Moment,
                                           effects: inout [Effect]) {
        state.breathing.totals = totals
        state.breathing.history = Array(history.suffix(SessionHistoryFile.capacity))
        let b = state.breathing
        var saved = b.history
        if case .running(let c) = b.session, (now.instant - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            saved.append(SessionRecord(started: b.startedWall, seconds: (now.instant - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now.instant))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(saved)))
    }
}
