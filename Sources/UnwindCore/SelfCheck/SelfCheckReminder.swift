/// The weekly self-check reminder: set like the mantra reminder (never, or weekly DAY HH:MM, on
/// the page or with `unwind progress reminder set`), kept in `selfCheckReminder.txt`, fired by
/// the same wall-clock alarm (armed for whichever reminder comes first) and trusted only from a
/// trusted clock. When it comes, the screen wakes with "Your weekly self-check" and the motor
/// gives the reminders' gentle pattern; SELECT starts the quick check, any other button closes
/// it. Never during a breathing session or an alert: it waits for their end, then comes.
extension DeviceState {
    /// The wall-clock second the reminder alarm is armed for: the earlier reminder's.
    public var nextReminderDue: WallTime? {
        switch (reminders.nextDue, selfCheck.reminder.nextDue) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b): b
        }
    }

    /// Alerts are being armed, sent or followed (their status on screen, a contact being rung,
    /// one still on its way).
    public var alertUnderWay: Bool {
        panic.armingSince != nil || panic.sendingAt != nil || overlay == .alertStatus
            || panic.aftercare.escalation.isActive || panic.progress.contains { !$0.delivery.isFinished }
    }
}

extension ReminderState {
    /// The next due time from `wall` on. After a step of the clock (`stepped`) a small step back
    /// (an NTP correction) must not repeat the reminder just given; a big one means the clock
    /// was wrong, and the schedule starts again from the right time.
    mutating func reschedule(at wall: WallTime, stepped: Bool, in zone: LocalTimeZone) {
        guard clockTrusted else {
            nextDue = nil
            return
        }
        var after = wall
        if stepped, let last = lastFired, last >= wall, last.secondsSinceEpoch - wall.secondsSinceEpoch <= 3600 {
            after = last
        }
        nextDue = schedule.nextDue(after: after, in: zone)
    }

    /// The alarm went off for `due`: true when it is this reminder's (it then moves on to the next).
    mutating func fire(_ due: WallTime, at now: Moment, in zone: LocalTimeZone) -> Bool {
        guard clockTrusted, nextDue == due else { return false }
        lastFired = due
        nextDue = schedule.nextDue(after: max(due, now.wall), in: zone)
        return true
    }
}

extension DeviceCore {
    /// Sets the schedule (the page's editor or the maintainer's command), saves it and computes
    /// the next due time.
    mutating func setSelfCheckReminder(_ schedule: ReminderSchedule, at now: Moment, effects: inout [Effect]) {
        state.selfCheck.reminder.schedule = schedule
        effects.append(.save(.selfCheckReminder, SelfCheckReminderFile.format(schedule)))
        state.selfCheck.reminder.reschedule(at: now.wall, stepped: false, in: settings.timeZone)
    }

    /// The alarm went off: the self-check reminder's, if `due` is its time. A person in the middle
    /// of a self-check needs no reminder of one.
    mutating func selfCheckReminderDue(_ due: WallTime, at now: Moment, effects: inout [Effect]) {
        guard state.selfCheck.reminder.fire(due, at: now, in: settings.timeZone) else { return }
        if case .selfCheck(let v) = state.overlay, v.isQuestionnaire { return }
        if case .selfCheck(.safety) = state.overlay { return }
        if selfCheckReminderMustWait {
            state.selfCheck.reminder.waiting = true
        } else {
            showSelfCheckReminder(at: now, effects: &effects)
        }
    }

    /// A breathing session, an alert, the check-in's prompt, the mantra reminder or the setup
    /// result is on: the self-check reminder waits for its end.
    var selfCheckReminderMustWait: Bool {
        if state.breathing.isRunning || state.alertUnderWay || state.checkIn.showing || state.reminders.isShowing
            || state.setupNotice != nil { return true }
        if case .selfCheck(let v) = state.overlay, v.isQuestionnaire { return true }
        if case .selfCheck(.safety) = state.overlay { return true }
        return false
    }

    mutating func showSelfCheckReminder(at now: Moment, effects: inout [Effect]) {
        state.selfCheck.reminder.waiting = false
        state.selfCheck.reminder.shownSince = now.instant
        state.display.lastActivity = now.instant
        if state.display.asleep { wake(effects: &effects) }
        playGentlePattern(at: now.instant, effects: &effects)
    }

    /// A press on the reminder: SELECT starts the quick check, any other button closes it (and
    /// does nothing else).
    mutating func answerSelfCheckReminder(_ b: Button, at now: Moment, effects: inout [Effect]) {
        state.selfCheck.reminder.shownSince = nil
        swallowPress(b)
        if b == .select { startSelfCheck(.quick, at: now, effects: &effects) }
    }
}
