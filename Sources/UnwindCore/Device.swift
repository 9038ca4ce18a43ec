import Foundation

/// The files the core asks the edge to write, each replaced atomically.
public enum StateFile: String, Sendable, CaseIterable {
    case totalTime = "totalTime.txt"
    case sessionHistory = "sessionHistory.txt"
    case mantras = "mantras.txt"
    case reminders = "reminders.txt"
}

/// What the core asks the edge to do. Nothing here has happened yet.
public enum Effect: Equatable, Sendable {
    /// Change the motor line at an exact instant.
    case motor(MotorEdge)
    /// Drop every scheduled motor edge and drive the line low now.
    case cancelMotor
    /// Replace a state file with these contents.
    case save(StateFile, String)
    /// Switch the panel on (wake) or off (sleep). The loop keeps drawing; frames are blank while asleep.
    case displayPower(Bool)
    /// Set the panel's contrast (SSD1306 command 0x81): night dimming.
    case displayContrast(UInt8)
    /// Grounding: run the capture command, if one is configured, to write capture `index`
    /// (`NN.JPG`, 00…44) into the private temporary directory. Without a camera, nothing.
    case captureImage(Int)
    /// Grounding: capture `index` was undone; its photo, if any, is deleted.
    case discardCapture(Int)
    /// Grounding: the exercise was completed or retried; every photo is deleted.
    case deleteCaptures
    /// Panic: queue these alerts in the outbox and send them.
    case sendAlerts([AlertRequest])
    /// Panic: call the counselling line (ATD…;).
    case dial(PhoneNumber)
    /// Panic: end the call (ATH).
    case hangUp
}

/// Everything about the device's behaviour that configuration may change.
public struct DeviceSettings: Equatable, Sendable {
    public var pattern: BreathingPattern
    public var haptics: HapticStyle
    /// A running session is written out this often, so a power cut loses at most this much.
    public var checkpointInterval: Duration
    /// How long "stop first" stays on screen after a locked PAGE press.
    public var lockNotice: Duration
    /// Motor edges are handed to the loop this far ahead of their corner.
    public var hapticLookahead: Duration

    /// The zone reminders and night dimming read local time in (`/etc/localtime` on the device).
    public var timeZone: TimeZone
    /// Treat the wall clock as right even when nothing synchronised it: only for a board with a
    /// battery-backed real-time clock and no network. Otherwise reminders wait for NTP.
    public var trustUnsynchronisedClock: Bool
    public var screen: ScreenCareSettings
    /// The gentle pattern a reminder plays: on, off, on, off, … durations from its start.
    public var reminderPattern: [Duration]
    /// The tick that confirms a grounding capture.
    public var captureTick: Duration
    public var panic: PanicSettings

    public init(pattern: BreathingPattern = .box, haptics: HapticStyle = HapticStyle(),
                checkpointInterval: Duration = .seconds(60), lockNotice: Duration = .milliseconds(2500),
                hapticLookahead: Duration = .milliseconds(250),
                timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!, trustUnsynchronisedClock: Bool = false,
                screen: ScreenCareSettings = ScreenCareSettings(),
                reminderPattern: [Duration] = DeviceSettings.gentlePattern,
                captureTick: Duration = .milliseconds(40), panic: PanicSettings = PanicSettings()) {
        self.pattern = pattern
        self.haptics = haptics
        self.checkpointInterval = checkpointInterval
        self.lockNotice = lockNotice
        self.hapticLookahead = hapticLookahead
        self.timeZone = timeZone
        self.trustUnsynchronisedClock = trustUnsynchronisedClock
        self.screen = screen
        self.reminderPattern = reminderPattern
        self.captureTick = captureTick
        self.panic = panic
    }

    /// Two slow swells, a pause, two more: 300 ms on, 500 ms off, 300 on, 1500 off, 300 on,
    /// 500 off, 300 on — 3.7 s, nothing like the corners' crisp pulses.
    public static let gentlePattern: [Duration] = [
        .milliseconds(300), .milliseconds(500), .milliseconds(300), .milliseconds(1500),
        .milliseconds(300), .milliseconds(500), .milliseconds(300),
    ]
}

/// Looking after a bedside OLED: sleep when idle, dim at night, move static content now and then.
public struct ScreenCareSettings: Equatable, Sendable {
    /// The display sleeps after this long without a button (never during a breathing session,
    /// a reminder or an alert); nil: never sleeps.
    public var sleepAfter: Duration?
    /// SSD1306 contrast by day and by night (0…255; the panel's reset value is 0x7F).
    public var dayContrast: UInt8
    public var nightContrast: UInt8
    /// Night runs from `nightStart` to `nightEnd`, local minutes after midnight (it may cross
    /// midnight: 22:00–07:00 is 1320…420); nil: never dims. Dimming follows the wall clock only
    /// once it is synchronised (or trusted): an unset clock keeps the day contrast.
    public var nightStart: Int?
    public var nightEnd: Int?
    /// The whole picture moves by one pixel this often, through four positions; nil: never.
    public var pixelShiftPeriod: Duration?

    public init(sleepAfter: Duration? = .seconds(120), dayContrast: UInt8 = 0xCF, nightContrast: UInt8 = 0x01,
                nightStart: Int? = 22 * 60, nightEnd: Int? = 7 * 60, pixelShiftPeriod: Duration? = .seconds(180)) {
        self.sleepAfter = sleepAfter
        self.dayContrast = dayContrast
        self.nightContrast = nightContrast
        self.nightStart = nightStart
        self.nightEnd = nightEnd
        self.pixelShiftPeriod = pixelShiftPeriod
    }

    public var problem: String? {
        if let s = sleepAfter, s < .seconds(5) { return "the display sleeps after at least 5 seconds" }
        if (nightStart == nil) != (nightEnd == nil) { return "night dimming needs both a start and an end" }
        if let a = nightStart, !(0..<1440).contains(a) { return "night starts at 00:00 to 23:59" }
        if let b = nightEnd, !(0..<1440).contains(b) { return "night ends at 00:00 to 23:59" }
        if let p = pixelShiftPeriod, p < .seconds(1) { return "the pixel shift period is at least 1 second" }
        return nil
    }

    /// Whether `minute` (after local midnight) is night.
    public func isNight(minute: Int) -> Bool {
        guard let a = nightStart, let b = nightEnd, a != b else { return false }
        return a < b ? (minute >= a && minute < b) : (minute >= a || minute < b)
    }
}

/// What is drawn over the page.
public enum Overlay: Equatable, Sendable {
    case none
    /// The page's help, scrolled down by `scroll` lines.
    case help(scroll: Int)
    /// The breathing statistics screen.
    case stats
    /// Affirmations: the reminder settings screen (spec 4.6, 4.6.1).
    case reminderSettings(ReminderEditor)
    /// Affirmations: "Delete this mantra?" after a long SELECT (spec 4.3).
    case confirmDelete
    /// Panic: where each alert stands, until acknowledged.
    case alertStatus
    /// Panic: the counselling service's website as a QR code (spec 5.3).
    case counsellingCode
}

/// The breathing page: spec 2.1–2.6.
public struct BreathingState: Equatable, Sendable {
    public enum Session: Equatable, Sendable {
        /// Nothing has run since the page was opened: the timer shows 00:00, SELECT says Start.
        case ready
        /// A session is running; the square animates from `clock.start`.
        case running(BreathingClock)
        /// A session ended; its time stays on screen and SELECT says Restart.
        case finished(seconds: Int64)
    }

    public var session: Session = .ready
    /// Lifetime totals, not counting a running session.
    public var totals: BreathingTotals
    /// Recent sessions, not counting a running session.
    public var history: [SessionRecord]
    var nextCorner = 0
    var lastCheckpoint = Instant.zero
    var startedWall = WallTime(secondsSinceEpoch: 0)

    public var isRunning: Bool {
        if case .running = session { return true }
        return false
    }

    /// The session timer's value.
    public func sessionSeconds(at now: Instant) -> Int64 {
        switch session {
        case .ready: 0
        case .running(let c): (now - c.start).wholeSeconds
        case .finished(let s): s
        }
    }

    /// The totals as they would stand if the running session ended at `now`.
    public func totals(at now: Instant) -> BreathingTotals {
        if case .running(let c) = session { return totals.adding(session: (now - c.start).wholeSeconds) }
        return totals
    }

    /// What SELECT will do, for its label.
    public var selectLabel: String {
        switch session {
        case .ready: "Start"
        case .running: "Stop"
        case .finished: "Restart"
        }
    }
}

/// The whole device as the person sees it.
public struct DeviceState: Equatable, Sendable {
    public var page: Page = .breathing
    public var overlay: Overlay = .none
    public var breathing: BreathingState
    /// "Stop first" is shown until this instant after PAGE was pressed during a session.
    public var lockNoticeUntil: Instant?
    /// PAGE is down on a page (no overlay): the menu bar marks the page its release opens. PAGE
    /// acts on release so that holding it can open help instead; this is the press's answer
    /// within a frame.
    public var pagePressed = false
    /// SELECT is down on the mantra or alert page, where it acts on release (holding it means
    /// something else there): the page shows the press at once.
    public var selectPressed = false
    public var help: HelpLibrary
    public var grounding = GroundingState()
    public var mantras: MantraList
    /// When the current mantra appeared: a long one scrolls from here.
    public var mantraShownAt = Instant.zero
    public var reminders: ReminderState
    public var display = DisplayState()
    public var panic = PanicState()
    /// Buttons whose current press was used up (waking the display, closing a reminder or an
    /// overlay on the press): the rest of that press (short, long, up) means nothing.
    var swallowed: UInt8 = 0

    public func showsLockNotice(at now: Instant) -> Bool {
        guard let until = lockNoticeUntil else { return false }
        return now < until
    }

    /// Whether something on screen must not be put to sleep.
    public var keepsDisplayAwake: Bool {
        breathing.isRunning || reminders.isShowing || panic.armingSince != nil || panic.sendingAt != nil
            || overlay == .alertStatus
    }
}

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

/// The panel as the core manages it: awake or asleep, its contrast, its pixel shift.
public struct DisplayState: Equatable, Sendable {
    /// Asleep: the panel is off and frames are blank; the first press only wakes it.
    public internal(set) var asleep = false
    /// The contrast last asked for (nil before the first tick).
    public internal(set) var contrast: UInt8?
    /// The pixel shift period, from the settings (the renderer needs it).
    public internal(set) var pixelShiftPeriod: Duration?
    var lastActivity: Instant?
    var lastContrastCheck: Int64 = .min
    var localClock = LocalClockCache()

    /// How far the picture is moved at `now`: it steps through (0,0), (1,0), (1,1), (0,1), one
    /// step per period, so no pixel is lit in the same place for long.
    public func pixelShift(at now: Instant) -> (dx: Int, dy: Int) {
        guard let p = pixelShiftPeriod, p.nanoseconds > 0 else { return (0, 0) }
        var k = now.nanoseconds / p.nanoseconds % 4
        if k < 0 { k += 4 }
        switch k {
        case 1: return (1, 0)
        case 2: return (1, 1)
        case 3: return (0, 1)
        default: return (0, 0)
        }
    }
}

/// The device's behaviour: state + event + time → new state + effects. No I/O, no clock.
public struct DeviceCore: Sendable {
    public internal(set) var state: DeviceState
    public let settings: DeviceSettings

    public init(settings: DeviceSettings = DeviceSettings(), totals: BreathingTotals = .zero,
                history: [SessionRecord] = [], help: HelpLibrary = HelpLibrary(),
                mantras: [String] = [], reminder: ReminderSchedule = .never) {
        self.settings = settings
        self.state = DeviceState(breathing: BreathingState(totals: totals, history: history), help: help,
                                 mantras: MantraList(mantras), reminders: ReminderState(schedule: reminder))
        state.display.pixelShiftPeriod = settings.screen.pixelShiftPeriod
        state.panic.holdNanoseconds = settings.panic.hold.nanoseconds
    }

    // MARK: Buttons

    public mutating func handle(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        // Whatever else the rest of a PAGE press does (or is swallowed), the mark goes with it.
        if gesture.button == .page, gesture != .down(.page) { state.pagePressed = false }
        if gesture.button == .select, gesture != .down(.select) { state.selectPressed = false }
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
        // Any press closes a reminder; PANIC also goes on to do what it does.
        if state.reminders.isShowing {
            guard case .down(let b) = gesture else { return }
            state.reminders.shownSince = nil
            if b != .panic { return swallowPress(b) }
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
            // Any press closes the statistics; acting on the press that closes them would surprise.
            if case .down(let b) = gesture, b != .panic {
                state.overlay = .none
                swallowPress(b)
            }
            return
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
            }
        case .long(.page):
            state.overlay = .help(scroll: 0)
        default:
            switch state.page {
            case .breathing: handleBreathing(gesture, at: now, effects: &effects)
            case .grounding: handleGrounding(gesture, at: now, effects: &effects)
            case .affirmations: handleAffirmations(gesture, at: now, effects: &effects)
            case .panic: handlePanicPage(gesture, at: now, effects: &effects)
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

    /// SELECT and RIGHT answer on the press itself: the breathing page gives them no long meaning,
    /// so there is no reason to wait for the release.
    private mutating func handleBreathing(_ gesture: ButtonGesture, at now: Moment, effects: inout [Effect]) {
        switch gesture {
        case .down(.select):
            if state.breathing.isRunning {
                stopSession(at: now, effects: &effects)
                // A reminder never interrupts a session: one that came due waits for its end.
                if state.reminders.waiting { showReminder(at: now, effects: &effects) }
            } else {
                startSession(at: now, effects: &effects)
            }
        case .down(.right), .down(.left):
            if !state.breathing.isRunning { state.overlay = .stats }
        default: break
        }
    }

    // MARK: Time

    /// Called every frame (and whenever the loop wakes): schedules upcoming corner pulses and
    /// checkpoints a long session.
    public mutating func tick(at now: Moment, effects: inout [Effect]) {
        careForScreen(at: now, effects: &effects)
        if state.panic.armingSince != nil || state.panic.sendingAt != nil { tickPanic(at: now, effects: &effects) }
        guard case .running(let clock) = state.breathing.session else { return }
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
        if now.instant - state.breathing.lastCheckpoint >= settings.checkpointInterval {
            state.breathing.lastCheckpoint = now.instant
            saveBreathing(at: now.instant, effects: &effects)
        }
    }

    /// SIGTERM, SIGINT or a maintainer's stop: a running session counts up to now.
    public mutating func shutdown(at now: Moment, effects: inout [Effect]) {
        if state.breathing.isRunning { stopSession(at: now, effects: &effects) }
        effects.append(.cancelMotor)
        saveBreathing(at: now.instant, effects: &effects)
    }

    // MARK: Breathing sessions

    mutating func startSession(at now: Moment, effects: inout [Effect]) {
        let clock = BreathingClock(pattern: settings.pattern, start: now.instant)
        state.breathing.session = .running(clock)
        state.breathing.nextCorner = 0
        state.breathing.lastCheckpoint = now.instant
        state.breathing.startedWall = now.wall
        scheduleCorners(clock, until: now.instant + settings.hapticLookahead, effects: &effects)
    }

    private mutating func stopSession(at now: Moment, effects: inout [Effect]) {
        guard case .running(let clock) = state.breathing.session else { return }
        let seconds = (now.instant - clock.start).wholeSeconds
        effects.append(.cancelMotor)
        state.breathing.totals = state.breathing.totals.adding(session: seconds)
        if seconds >= BreathingTotals.minimumSession {
            state.breathing.history.append(SessionRecord(started: state.breathing.startedWall, seconds: seconds))
            if state.breathing.history.count > SessionHistoryFile.capacity {
                state.breathing.history.removeFirst(state.breathing.history.count - SessionHistoryFile.capacity)
            }
        }
        state.breathing.session = .finished(seconds: seconds)
        saveBreathing(at: now.instant, effects: &effects)
    }

    private mutating func scheduleCorners(_ clock: BreathingClock, until horizon: Instant, effects: inout [Effect]) {
        while clock.corner(state.breathing.nextCorner) < horizon {
            let k = state.breathing.nextCorner
            settings.haptics.forEachEdge(cornerAt: clock.corner(k), hold: clock.phase(ofCorner: k).isHold) {
                effects.append(.motor($0))
            }
            state.breathing.nextCorner += 1
        }
    }

    /// Writes totals and history as they stand at `now`, a running session included, so the
    /// files on the card are never more than one checkpoint behind.
    private func saveBreathing(at now: Instant, effects: inout [Effect]) {
        let b = state.breathing
        var history = b.history
        if case .running(let c) = b.session, (now - c.start).wholeSeconds >= BreathingTotals.minimumSession {
            history.append(SessionRecord(started: b.startedWall, seconds: (now - c.start).wholeSeconds))
        }
        effects.append(.save(.totalTime, TotalTimeFile.format(b.totals(at: now))))
        effects.append(.save(.sessionHistory, SessionHistoryFile.format(history)))
    }

    mutating func leave(_ page: Page, at now: Moment, effects: inout [Effect]) {
        guard page == .breathing else { return }
        // Spec 2.4.1: switching away resets the session timer; the data table: saved on leaving.
        state.breathing.session = .ready
        saveBreathing(at: now.instant, effects: &effects)
    }
}
