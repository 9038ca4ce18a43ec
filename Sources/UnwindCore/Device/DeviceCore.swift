
/// The device's behaviour: state + event + time → new state + effects. No I/O, no clock.
public struct DeviceCore: Sendable {
    public internal(set) var state: DeviceState
    public let settings: DeviceSettings
    /// What `escalation.txt` held at start, until the first event takes it up.
    var restoredEscalation: EscalationRecord?
    /// The episode as last written to `escalation.txt` (nil: nothing written by this run).
    var savedEscalation: EscalationMark?

    /// The device as it starts: what the state files held, the help texts, the alert slots (a
    /// slot that failed validation is `.needsAttention`) and the counselling line from
    /// configuration (`websiteCode`: its website as a QR code, made by the edge).
    public init(settings: DeviceSettings = DeviceSettings(), totals: BreathingTotals = .zero,
                history: [SessionRecord] = [], help: HelpLibrary = HelpLibrary(),
                mantras: [String] = [], reminder: ReminderSchedule = .never,
                alertSlots: [AlertSlotState] = [], counselling: CounsellingLine = .sfuCounselling,
                website: String? = nil, websiteCode: QRCodeImage? = nil,
                checkIn: CheckInRecord? = nil, alertTest: AlertTestRecord? = nil,
                customPatterns: [BreathingPreset] = [], breathingChoice: BreathingChoice? = nil,
                statusTexts: [StatusTextRecord] = [],
                checkInGrace: CheckInGrace? = nil, escalation: EscalationRecord? = nil,
                selfCheck: SelfCheckRecords = SelfCheckRecords()) {
        self.settings = settings
        let offered = BreathingState.offered(settings: settings, custom: customPatterns, remembered: breathingChoice)
        self.state = DeviceState(breathing: BreathingState(totals: totals, history: history, presets: offered.presets,
                                                           chosen: offered.chosen, minutes: offered.minutes),
                                 help: help, mantras: MantraList(mantras), reminders: ReminderState(schedule: reminder),
                                 selfCheck: SelfCheckState(selfCheck))
        state.display.pixelShiftPeriod = settings.screen.pixelShiftPeriod
        state.panic.holdNanoseconds = settings.panic.hold.nanoseconds
        alertSlotsChanged(alertSlots)
        setCounselling(counselling, website: website, code: websiteCode)
        state.checkIn.last = checkIn
        if let g = checkInGrace {
            state.checkIn.pendingDay = g.day
            state.checkIn.sendsAt = g.sendsAt
            state.checkIn.resumed = true
        }
        restoredEscalation = escalation
        state.panic.readiness.lastTest = alertTest
        restoreStatusTexts(statusTexts)
        askBeforeSession()
    }

    /// What the setup file's import found (`setupResult.txt`, wrapped to the screen): shown at
    /// start until a button is pressed.
    public mutating func showSetupResult(_ lines: [String]?) {
        state.setupNotice = lines
    }

    // MARK: Buttons

    mutating func handle(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        // Whatever else the rest of a PAGE press does (or is swallowed), the mark goes with it.
        if gesture.button == .page, gesture != .down(.page) { state.pagePressed = false }
        if gesture.button == .select, gesture != .down(.select) { state.selectPressed = false }
        if gesture.button == state.breathing.arrowPressed, gesture != .down(gesture.button) { state.breathing.arrowPressed = nil }
        if isSwallowed(gesture) { return }
        if gesture.button == .panic {
            state.display.lastActivity = now.instant
            if state.display.asleep { wake(effects: &effects) }
            return handlePanicButton(gesture, at: now, effects: &effects)
        }
        state.display.lastActivity = now.instant
        // The first press on a sleeping display only wakes it; PANIC always counts as well.
        if state.display.asleep {
            guard case .down(let b) = gesture else { return }
            wake(effects: &effects)
            if b != .panic { return swallowPress(b) }
        }
        // The setup file's result stays until it has been seen: any press closes it, and the
        // file is emptied so the next start does not show it again.
        if state.setupNotice != nil {
            guard case .down(let b) = gesture else { return }
            state.setupNotice = nil
            effects.append(.save(.setupResult, SetupResultFile.format(nil)))
            return swallowPress(b)
        }
        // Any press on the check-in prompt is the check-in (PANIC went its own way above).
        if state.checkIn.showing {
            guard case .down(let b) = gesture else { return }
            confirmCheckIn(at: now, effects: &effects)
            return swallowPress(b)
        }
        // Any press closes a reminder; PANIC also goes on to do what it does.
        if state.reminders.isShowing {
            guard case .down(let b) = gesture else { return }
            state.reminders.shownSince = nil
            if b != .panic { return swallowPress(b) }
        }
        if state.selfCheck.reminder.isShowing {
            guard case .down(let b) = gesture else { return }
            return answerSelfCheckReminder(b, at: now, effects: &effects)
        }
        switch state.overlay {
        case .alertStatus: return handleAlertStatus(gesture, at: now, effects: &effects)
        case .counsellingCode:
            if case .down(let b) = gesture { state.overlay = .none; swallowPress(b) }
            return
        case .reminderSettings(let editor): return handleReminderEditor(gesture, editor, at: now, effects: &effects)
        case .confirmDelete: return handleConfirmDelete(gesture, at: now, effects: &effects)
        case .help(let scroll): return handleHelp(gesture, scroll: scroll)
        case .stats:
            // Any press closes the statistics (LEFT/RIGHT may turn to the ratings); acting on the
            // press that closes them would surprise.
            return handleStats(gesture)
        case .rating(let question): return handleRating(gesture, question, at: now, effects: &effects)
        case .selfCheck(let view): return handleSelfCheckView(gesture, view, at: now, effects: &effects)
        case .none: break
        }
        switch gesture {
        case .down(.page):
            // Answered on the press: the locked notice at once, else the mark on the next page.
            if state.breathing.isRunning {
                state.lockNoticeUntil = now.instant + settings.lockNotice
            } else {
                state.pagePressed = true
            }
        case .down(.select) where state.page == .affirmations || state.page == .panic:
            state.selectPressed = true
        case .short(.page):
            if state.breathing.isRunning {
                state.lockNoticeUntil = now.instant + settings.lockNotice
            } else {
                leave(state.page, at: now, effects: &effects)
                state.page = state.page.next
                state.lockNoticeUntil = nil
                // A long mantra starts scrolling from its top when the page opens.
                if state.page == .affirmations { state.mantraShownAt = now.instant }
                if state.page == .breathing { askBeforeSession() }
            }
        case .long(.page):
            state.overlay = .help(scroll: 0)
        default:
            switch state.page {
            case .breathing: handleBreathing(gesture, at: now, effects: &effects)
            case .grounding: handleGrounding(gesture, at: now, effects: &effects)
            case .affirmations: handleAffirmations(gesture, at: now, effects: &effects)
            case .panic: handlePanicPage(gesture, at: now, effects: &effects)
            case .howAmIDoing: handleSelfCheckPage(gesture, at: now, effects: &effects)
            }
        }
    }

    func bit(_ b: Button) -> UInt8 { 1 << UInt8(ButtonClassifier.index(b)) }

    /// The rest of a press that was already used up is ignored; a new press starts afresh.
    private mutating func isSwallowed(_ g: ButtonGesture) -> Bool {
        let m = bit(g.button)
        switch g {
        case .down:
            state.swallowed &= ~m
            return false
        case .up:
            defer { state.swallowed &= ~m }
            return state.swallowed & m != 0
        case .short, .long:
            return state.swallowed & m != 0
        }
    }

    private mutating func handleHelp(_ gesture: ButtonGesture, scroll: Int) {
        let last = max(0, state.help.lines(for: state.page).count - 1)
        switch gesture {
        case .down(.left): state.overlay = .help(scroll: max(0, scroll - 1))
        case .down(.right): state.overlay = .help(scroll: min(last, scroll + 1))
        case .short(.page), .short(.select): state.overlay = .none
        default: break
        }
    }

    // MARK: Time

    /// Called every frame (and whenever the loop wakes): schedules upcoming corner pulses and
    /// checkpoints a long session.
    mutating func tick(at now: Moment, effects: inout [Effect]) {
        careForScreen(at: now, effects: &effects)
        if state.panic.armingSince != nil || state.panic.sendingAt != nil { tickPanic(at: now, effects: &effects) }
        if state.panic.aftercare.escalation.isActive { tickEscalation(at: now, effects: &effects) }
        tickAlertHealth(at: now, effects: &effects)
        tickBreathing(at: now, effects: &effects)
        expireAfterQuestion(at: now.instant)
        tickSelfCheck(at: now, effects: &effects)
    }

    /// SIGTERM, SIGINT or a maintainer's stop: a running session counts up to now.
    mutating func shutdown(at now: Moment, effects: inout [Effect]) {
        if state.breathing.isRunning { stopSession(at: now, asking: false, effects: &effects) }
        effects.append(.cancelMotor)
        saveBreathing(at: now.instant, effects: &effects)
    }
}
