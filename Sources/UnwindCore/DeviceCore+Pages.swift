import Foundation

/// The grounding and affirmations pages, the reminder, and screen care.
extension DeviceCore {
    // MARK: Grounding (spec 3.x)

    /// SELECT captures (on the press: the page gives it no long meaning), LEFT undoes the last
    /// capture of the row; on the finishing grid SELECT retries.
    mutating func handleGrounding(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.select):
            if state.grounding.isComplete {
                state.grounding.retry()
                effects.append(.deleteCaptures)
            } else if let i = state.grounding.capture() {
                effects.append(.captureImage(i))
                if state.grounding.isComplete {
                    // Spec: photos are kept only until the exercise is completed.
                    effects.append(.deleteCaptures)
                    pulses(at: now.instant, count: 3, on: .milliseconds(120), off: .milliseconds(120), effects: &effects)
                } else {
                    pulses(at: now.instant, count: 1, on: settings.captureTick, off: .zero, effects: &effects)
                }
            }
        case .down(.left):
            if let i = state.grounding.undo() { effects.append(.discardCapture(i)) }
        default: break
        }
    }

    // MARK: Positive affirmations (spec 4.x)

    /// LEFT/RIGHT browse (on the press), SELECT opens the reminder settings (on release: holding
    /// it means delete), SELECT held asks to delete the mantra shown.
    mutating func handleAffirmations(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.left):
            state.mantras.previous()
            state.mantraShownAt = now.instant
        case .down(.right):
            state.mantras.next()
            state.mantraShownAt = now.instant
        case .short(.select):
            state.overlay = .reminderSettings(ReminderEditor(state.reminders.schedule))
        case .long(.select):
            if !state.mantras.isEmpty { state.overlay = .confirmDelete }
        default: break
        }
    }

    /// A second SELECT deletes; any other button keeps the mantra. The press that decides is used
    /// up, so its release does nothing more.
    mutating func handleConfirmDelete(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        guard case .down(let b) = gesture, b != .panic else { return }
        state.overlay = .none
        swallowPress(b)
        guard b == .select else { return }
        state.mantras.deleteCurrent()
        state.mantraShownAt = now.instant
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// LEFT/RIGHT change the focused value, SELECT goes to the next field and saves after the
    /// last, PAGE leaves without saving.
    mutating func handleReminderEditor(_ gesture: ButtonGesture, _ editor: ReminderEditor, at now: Moment,
                                       effects: inout [Effect]) {
        var e = editor
        switch gesture {
        case .down(.left): e.change(by: -1)
        case .down(.right): e.change(by: 1)
        case .down(.select):
            swallowPress(.select)
            if !e.advance() {
                state.overlay = .none
                setReminder(e.schedule, at: now, effects: &effects)
                return
            }
        case .down(.page):
            swallowPress(.page)
            state.overlay = .none
            return
        default: return
        }
        state.overlay = .reminderSettings(e)
    }

    // MARK: Reminders (spec 4.6, 4.6.1)

    /// Sets the schedule (the settings screen or the maintainer's command), saves
    /// `reminders.txt` and computes the next due time.
    public mutating func setReminder(_ schedule: ReminderSchedule, at now: Moment, effects: inout [Effect]) {
        state.reminders.schedule = schedule
        effects.append(.save(.reminders, RemindersFile.format(schedule)))
        reschedule(at: now.wall, stepped: false)
    }

    /// The loop's alarm went off for `due`. Ignored unless it is the due time the core asked
    /// for and the clock is trusted. A breathing session is never interrupted: the reminder
    /// waits for its end. With no mantras there is nothing to remind of, and nothing is shown.
    public mutating func reminderDue(_ due: WallTime, at now: Moment, effects: inout [Effect]) {
        guard state.reminders.clockTrusted, state.reminders.nextDue == due else { return }
        state.reminders.lastFired = due
        state.reminders.nextDue = state.reminders.schedule.nextDue(after: max(due, now.wall), in: settings.timeZone)
        guard !state.mantras.isEmpty else { return }
        if state.breathing.isRunning {
            state.reminders.waiting = true
        } else {
            showReminder(at: now, effects: &effects)
        }
    }

    /// The wall clock's synchronisation state, as the edge last saw it. The first call (and
    /// each change) recomputes the next due time; an untrusted clock has none.
    public mutating func wallClock(synchronised: Bool, at now: Moment) {
        let trusted = synchronised || settings.trustUnsynchronisedClock
        guard trusted != state.reminders.clockTrusted else { return }
        state.reminders.clockTrusted = trusted
        reschedule(at: now.wall, stepped: false)
        state.display.lastContrastCheck = .min
    }

    /// The wall clock was set (a step, not its steady running): the next due time is computed
    /// again from the new time.
    public mutating func wallClockChanged(at now: Moment) {
        reschedule(at: now.wall, stepped: true)
        state.display.lastContrastCheck = .min
    }

    mutating func reschedule(at wall: WallTime, stepped: Bool) {
        guard state.reminders.clockTrusted else {
            state.reminders.nextDue = nil
            return
        }
        var after = wall
        // A small step back (an NTP correction) must not repeat the reminder just given; a big
        // one means the clock was wrong, and the schedule starts again from the right time.
        if stepped, let last = state.reminders.lastFired, last >= wall,
           last.secondsSinceEpoch - wall.secondsSinceEpoch <= 3600 {
            after = last
        }
        state.reminders.nextDue = state.reminders.schedule.nextDue(after: after, in: settings.timeZone)
    }

    mutating func showReminder(at now: Moment, effects: inout [Effect]) {
        state.reminders.waiting = false
        state.reminders.shownSince = now.instant
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        var t = now.instant
        var on = true
        for d in settings.reminderPattern {
            effects.append(.motor(MotorEdge(at: t, on: on)))
            t = t + d
            on.toggle()
        }
        if !on { effects.append(.motor(MotorEdge(at: t, on: false))) }
    }

    // MARK: Mantras from the maintainer

    /// Adds a mantra (the maintainer's command); it becomes the current one and the list is saved.
    public mutating func addMantra(_ text: String, at now: Moment, effects: inout [Effect]) throws(MantrasFile.Problem) {
        try state.mantras.add(text)
        state.mantraShownAt = now.instant
        effects.append(.save(.mantras, MantrasFile.format(state.mantras.items)))
    }

    /// The list was replaced on the card (the maintainer's edit): `current` (say, a new
    /// mantra's line) becomes the one shown. Nothing is saved: the file is already the truth.
    public mutating func replaceMantras(_ items: [String], current: Int? = nil, at now: Moment) {
        state.mantras.replace(with: items, current: current)
        state.mantraShownAt = now.instant
        if state.mantras.isEmpty, state.overlay == .confirmDelete { state.overlay = .none }
    }

    // MARK: Screen care

    mutating func wake(effects: inout [Effect]) {
        state.display.asleep = false
        effects.append(.displayPower(true))
    }

    /// The rest of this press (short, long, up) will mean nothing: it was used up on its way down.
    mutating func swallowPress(_ b: Button) { state.swallowed |= bit(b) }

    /// Every frame: sleep when idle, night contrast. Allocation-free: the time zone is
    /// consulted only when the cached offset runs out (at most daily, and at DST changes).
    mutating func careForScreen(at now: Moment, effects: inout [Effect]) {
        let last = state.display.lastActivity ?? now.instant
        if state.display.lastActivity == nil { state.display.lastActivity = now.instant }
        if !state.display.asleep, let after = settings.screen.sleepAfter,
           !state.keepsDisplayAwake, now.instant - last >= after {
            state.display.asleep = true
            effects.append(.displayPower(false))
        }
        let w = now.wall.secondsSinceEpoch
        if w != state.display.lastContrastCheck {
            state.display.lastContrastCheck = w
            var level = settings.screen.dayContrast
            if state.reminders.clockTrusted, settings.screen.nightStart != nil {
                let minute = state.display.localClock.secondOfDay(now.wall, in: settings.timeZone) / 60
                if settings.screen.isNight(minute: minute) { level = settings.screen.nightContrast }
            }
            if state.display.contrast != level {
                state.display.contrast = level
                effects.append(.displayContrast(level))
            }
        }
    }

    /// `count` pulses from `t`: a capture's tick, the exercise's finish.
    func pulses(at t: Instant, count: Int, on: Duration, off: Duration, effects: inout [Effect]) {
        var at = t
        for _ in 0..<count {
            effects.append(.motor(MotorEdge(at: at, on: true)))
            effects.append(.motor(MotorEdge(at: at + on, on: false)))
            at = at + on + off
        }
    }
}
