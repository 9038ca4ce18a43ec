/// Everything that can happen to the device from outside the core, in one type: the loop, the
/// simulators and the tests hand each one to `DeviceCore.apply(_:at:effects:)` and perform the
/// effects that come out. One door in means one place to read what the device reacts to.
public enum DeviceEvent: Equatable, Sendable {
    /// The person: a button's press, release, short or long press.
    case button(ButtonGesture)
    /// A frame (and every wake of the loop): corner pulses, checkpoints, screen care, PANIC's hold.
    case tick
    /// SIGTERM, SIGINT or a maintainer's stop: a running session counts up to now.
    case shutdown

    /// The wall clock's synchronisation state, as the edge last saw it (reminders and night
    /// dimming trust only a synchronised clock).
    case wallClockSynchronised(Bool)
    /// The wall clock was set (a step, not its steady running).
    case wallClockChanged
    /// The wall-clock alarm armed for `nextDue` went off.
    case reminderDue(WallTime)

    /// The modem: alerts from before a restart that the outbox is sending again.
    /// `purpose`: why they went (a missed check-in's come back as such, not as a PANIC).
    /// `queuedAt`: when the newest of them was queued (nil: not known).
    case alertsResumed([AlertProgress], purpose: AlertPurpose = .panic, queuedAt: WallTime? = nil)
    /// The modem: news about one alert.
    case alertDelivery(slot: Int, AlertDelivery)
    /// The modem: some part of this slot's alert may be on the contact's phone although it is
    /// not SENT (a part of a long one accepted, or a submit in doubt).
    case alertMayHaveReached(slot: Int)
    /// The modem: the counselling call started, ended or failed.
    case callChanged(active: Bool)
    /// The modem: the call that is up was picked up (`AT+CLCC` says it is active).
    case callAnswered
    /// The modem: news about a message that is not an alert (an "I'm OK now", the monthly test).
    case followUpDelivery(slot: Int, purpose: AlertPurpose, AlertDelivery)
    /// The modem: an SMS arrived (or one not yet dismissed was found again at start).
    case replyReceived(IncomingReply)
    /// The modem: whether a PANIC could go out now, after each change and each self-test.
    case alertReadiness(AlertReadiness)
    /// The modem: its signal changed (`+CSQ` rssi 0–31, 99 unknown; nil: not known), for STATUS answers.
    case modemSignal(Int?)
    /// The modem: what became of a text the device sent on its own (`DeviceText.token`).
    case deviceTextOutcome(token: Int, DeviceTextOutcome)
    /// The edge: the display, the motor or the SD card started failing (or works again).
    case deviceProblem(DeviceProblem, failing: Bool)

    /// The maintainer, through the control socket: the same state the buttons change, so the
    /// person's edits and the maintainer's never overwrite each other.
    case maintainer(MaintenanceChange)
}

/// What the maintainer's commands change in a running device. Each is saved by the core's own
/// `.save` effects, like a button's change.
public enum MaintenanceChange: Equatable, Sendable {
    case setReminder(ReminderSchedule)
    /// `unwind mantras add`: at the end of the list, shown at once (unless the person is being
    /// asked "Delete this mantra?").
    case addMantra(String)
    /// Delete mantra `index` (0-based) if it still reads `expected`.
    case deleteMantra(index: Int, expected: String?)
    /// Replace the whole list; `current` is the one shown (kept where it can be when nil).
    case setMantras([String], current: Int?)
    case replaceStatistics(totals: BreathingTotals, history: [SessionRecord])
    /// Slot 1…5: a validated alert, or nil to empty it. Saved as `alert0N.txt`.
    case setAlertSlot(Int, AlertSlot?)
    /// A restore: every state file at once (the edge has already written them as one change;
    /// the core's saves write the same state again).
    case restore(totals: BreathingTotals, history: [SessionRecord], mantras: [String],
                 reminder: ReminderSchedule, alertSlots: [AlertSlotState])
    /// `unwind hardware motor`: three firm pulses, unlike any pattern the device gives by itself.
    case motorTest

    // Breathing beyond the box
    /// `unwind patterns add|remove`: the maintainer's own patterns, offered after the shipped
    /// ones. Saved as `patterns.txt`.
    case setCustomPatterns([BreathingPreset])
    /// A restore: the pattern and session length the person chose, as the backup had them.
    case setBreathingChoice(BreathingChoice)

    // Help state in a backup
    /// A restore: the last settled check-in day (a grace period under way on the device stays).
    case restoreCheckIn(CheckInRecord?)
    /// A restore: the last monthly alert test.
    case restoreAlertTest(AlertTestRecord?)
    /// A restore: what followed the last alerts, taken as the device's last episode unless one of
    /// its own is going on (then its own stays); a ladder under way in it is ended, never rung.
    case restoreEscalation(EscalationRecord?)

    // How am I doing?
    /// `unwind cards add`: a coping card at the end of the list.
    case addCopingCard(CopingCard)
    /// Delete card `index` (0-based) if it still reads `expected`.
    case deleteCopingCard(index: Int, expected: CopingCard?)
    /// `unwind progress reminder set`: never or weekly.
    case setSelfCheckReminder(ReminderSchedule)
    /// A restore: the self-checks, moods, cards and reminder the archive had (nil: keep the device's).
    case restoreSelfCheck(SelfCheckRestore)
}

/// Why the core did not make a maintainer's change (nothing changed).
public enum EventRefusal: Error, Equatable, Sendable {
    /// The mantra cannot be stored, or the list is full.
    case mantra(MantrasFile.Problem)
    /// The mantra list no longer reads what the maintainer saw (the person changed it meanwhile).
    case listChanged
    /// There is no such alert slot.
    case noSuchSlot(Int)
    /// The coping card cannot be stored, or the list is full.
    case copingCard(String)
    /// The coping cards no longer read what the maintainer saw.
    case cardsChanged
}

extension DeviceCore {
    /// The one entry point: the event at `now`, effects appended to `effects` (nothing here has
    /// happened yet). Returns why a maintainer's change was refused, or nil. Allocation-free for
    /// buttons and ticks.
    @discardableResult
    public mutating func apply(_ event: DeviceEvent, at now: Moment, effects: inout [Effect]) -> EventRefusal? {
        // What `escalation.txt` kept is taken up at the first event: its times are the wall
        // clock's, and only an event says what the loop's clock reads then.
        if restoredEscalation != nil { adoptRestoredEscalation(at: now, effects: &effects) }
        defer { if state.panic.aftercare.purpose != nil || savedEscalation != nil { saveEscalationIfChanged(at: now, effects: &effects) } }
        switch event {
        case .button(let g): handle(g, at: now, effects: &effects)
        case .tick: tick(at: now, effects: &effects)
        case .shutdown: shutdown(at: now, effects: &effects)
        case .wallClockSynchronised(let s): wallClock(synchronised: s, at: now)
        case .wallClockChanged: wallClockChanged(at: now)
        case .reminderDue(let due): reminderDue(due, at: now, effects: &effects)
        case .alertsResumed(let p, let purpose, let queuedAt): alertsResumed(p, purpose: purpose, queuedAt: queuedAt, at: now, effects: &effects)
        case .alertDelivery(let slot, let d): alertUpdate(slot: slot, delivery: d, at: now, effects: &effects)
        case .alertMayHaveReached(let slot): alertMayHaveReached(slot: slot, at: now, effects: &effects)
        case .callChanged(let active): callChanged(active: active, at: now)
        case .callAnswered: callAnswered(at: now, effects: &effects)
        case .followUpDelivery(let slot, let purpose, let d): followUpUpdate(slot: slot, purpose: purpose, delivery: d, at: now, effects: &effects)
        case .replyReceived(let reply): replyReceived(reply, at: now, effects: &effects)
        case .alertReadiness(let r): readinessChanged(r, at: now, effects: &effects)
        case .modemSignal(let rssi): state.statusTexts.signal = rssi
        case .deviceTextOutcome(let token, let outcome): deviceTextOutcome(token: token, outcome, at: now, effects: &effects)
        case .deviceProblem(let p, let failing): deviceProblem(p, failing: failing)
        case .maintainer(let change): return apply(change, at: now, effects: &effects)
        }
        return nil
    }
}
