
/// The mantra reminder (spec 4.6, 4.6.1), as the core sees it.
///
/// The core never reads a clock. It computes `nextDue` (a wall-clock second) from the schedule
/// and the time zone; the loop arms a CLOCK_REALTIME alarm for exactly that second and calls
/// `DeviceCore.reminderDue(_:at:effects:)` when it goes off, `wallClockChanged(at:)` when the
/// clock was set (the alarm is cancelled: NTP step, DST-unaware manual change), and
/// `wallClock(synchronised:at:)` when the clock's synchronisation state changes.
///
/// A clock that is not synchronised is not trusted: `nextDue` is nil and nothing fires (a board
/// without a real-time clock boots in the past and is set by NTP later). Once the clock is
/// trusted, the next due time is computed from then on — reminders "missed" while the clock was
/// wrong are not made up. After a clock change the next due time is computed afresh from the
/// new time: reminders the clock jumped over are not made up either, and a step back of up to
/// an hour does not repeat a reminder that already fired.
public struct ReminderState: Equatable, Sendable {
    public internal(set) var schedule: ReminderSchedule
    /// The wall clock is synchronised (or trusted by configuration).
    public internal(set) var clockTrusted = false
    /// The wall-clock second the next reminder is due; nil for never or an untrusted clock.
    public internal(set) var nextDue: WallTime?
    /// A reminder came due during a breathing session: it is shown when the session ends.
    public internal(set) var waiting = false
    /// The reminder on screen, since this instant; any button closes it.
    public internal(set) var shownSince: Instant?
    /// The due time of the last reminder that fired.
    public internal(set) var lastFired: WallTime?

    public init(schedule: ReminderSchedule = .never) { self.schedule = schedule }

    public var isShowing: Bool { shownSince != nil }
}

/// When a reminder is due, and showing it.
extension DeviceCore {
    // MARK: Reminders (spec 4.6, 4.6.1)

    /// Sets the schedule (the settings screen or the maintainer's command), saves
    /// `reminders.txt` and computes the next due time.
    mutating func setReminder(_ schedule: ReminderSchedule, at now: Moment, effects: inout [Effect]) {
        state.reminders.schedule = schedule
        effects.append(.save(.reminders, RemindersFile.format(schedule)))
        reschedule(at: now.wall, stepped: false)
    }

    /// The loop's alarm went off for `due`. Ignored unless it is the due time the core asked
    /// for and the clock is trusted. A breathing session is never interrupted: the reminder
    /// waits for its end. With no mantras there is nothing to remind of, and nothing is shown.
    /// The alarm is armed for whichever reminder comes first (`DeviceState.nextReminderDue`):
    /// each takes the due time that is its own.
    mutating func reminderDue(_ due: WallTime, at now: Moment, effects: inout [Effect]) {
        defer { selfCheckReminderDue(due, at: now, effects: &effects) }
        guard state.reminders.fire(due, at: now, in: settings.timeZone) else { return }
        guard !state.mantras.isEmpty else { return }
        if state.breathing.isRunning {
            state.reminders.waiting = true
        } else {
            showReminder(at: now, effects: &effects)
        }
    }

    /// The wall clock's synchronisation state, as the edge last saw it. The first call (and
    /// each change) recomputes the next due time; an untrusted clock has none.
    mutating func wallClock(synchronised: Bool, at now: Moment) {
        let trusted = synchronised || settings.trustUnsynchronisedClock
        guard trusted != state.reminders.clockTrusted else { return }
        state.reminders.clockTrusted = trusted
        state.selfCheck.reminder.clockTrusted = trusted
        reschedule(at: now.wall, stepped: false)
        state.display.lastContrastCheck = .min
    }

    /// The wall clock was set (a step, not its steady running): the next due time is computed
    /// again from the new time.
    mutating func wallClockChanged(at now: Moment) {
        reschedule(at: now.wall, stepped: true)
        state.display.lastContrastCheck = .min
    }

    mutating func reschedule(at wall: WallTime, stepped: Bool) {
        state.reminders.reschedule(at: wall, stepped: stepped, in: settings.timeZone)
        state.selfCheck.reminder.reschedule(at: wall, stepped: stepped, in: settings.timeZone)
    }

    mutating func showReminder(at now: Moment, effects: inout [Effect]) {
        state.reminders.waiting = false
        state.reminders.shownSince = now.instant
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        playGentlePattern(at: now.instant, effects: &effects)
    }

    /// The reminders' pattern (`DeviceSettings.reminderPattern`), unlike any of the corners'.
    func playGentlePattern(at start: Instant, effects: inout [Effect]) {
        var t = start
        var on = true
        for d in settings.reminderPattern {
            effects.append(.motor(MotorEdge(at: t, on: on)))
            t = t + d
            on.toggle()
        }
        if !on { effects.append(.motor(MotorEdge(at: t, on: false))) }
    }
}
